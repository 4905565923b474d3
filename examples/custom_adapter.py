"""Plug in your own adapter: any object with stream(request, signal) works.

This one answers with the reversed user text. It shows the three duties of an adapter:
yield events that end with finish, raise on failure, and stop when cancelled or aborted.

Run: uv run python examples/custom_adapter.py
"""

from collections.abc import AsyncIterator, Mapping
from typing import cast

import anyio

from ai_chat import AbortSignal, AIChatAdapter, stream_chat
from ai_chat.types import ChatRequest, TextPart


class ReverseAdapter:
    async def stream(
        self, request: ChatRequest, signal: AbortSignal
    ) -> AsyncIterator[Mapping[str, object]]:
        last = request["messages"][-1]
        text = " ".join(
            cast(TextPart, part)["text"] for part in last["parts"] if part["type"] == "text"
        )
        yield {"type": "start"}
        yield {"type": "text-start", "id": "t1"}
        for word in reversed(text.split()):
            await anyio.sleep(0.05)  # a checkpoint: cancellation and aclose() land here
            yield {"type": "text-delta", "id": "t1", "delta": word[::-1] + " "}
        yield {"type": "text-end", "id": "t1"}
        yield {
            "type": "finish",
            "finishReason": "stop",
            "usage": {"outputTokens": len(text.split())},
        }


async def main() -> None:
    adapter = ReverseAdapter()
    assert isinstance(adapter, AIChatAdapter)  # the protocol is runtime-checkable
    request = {
        "messages": [
            {
                "id": "u1",
                "role": "user",
                "parts": [{"type": "text", "text": "stressed desserts are fun"}],
            }
        ]
    }
    async for event in stream_chat(adapter, request):
        # A mapping pattern both checks the type and captures typed fields.
        match event:
            case {"type": "text-delta", "delta": str(delta)}:
                print(delta, end="", flush=True)
            case _:
                pass
    print()


if __name__ == "__main__":
    anyio.run(main)
