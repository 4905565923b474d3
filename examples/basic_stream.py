"""Stream one answer from the offline adapter and print it as it arrives.

Run: uv run python examples/basic_stream.py [asyncio|trio]
"""

import json
import sys

import anyio

from ai_chat import create_chat_stream, normalize_messages
from ai_chat.adapters import ScriptedAdapter


async def main() -> None:
    history = normalize_messages(
        [
            {"id": "sys-1", "role": "system", "parts": [{"type": "text", "text": "Be brief."}]},
            {
                "id": "user-1",
                "role": "user",
                "parts": [{"type": "text", "text": "What is ai_chat?"}],
            },
        ]
    )
    tools = [
        {"name": "search", "description": "Search the docs", "inputSchema": {"type": "object"}}
    ]
    async with create_chat_stream(
        ScriptedAdapter(delay=0.01), {"messages": history, "tools": tools}
    ) as stream:
        async for event in stream:
            match event:
                case {"type": "text-delta", "delta": str(delta)}:
                    print(delta, end="", flush=True)
                case {"type": "tool-input-available", "toolName": name, "input": arguments}:
                    print(f"\n-> the model asks to call {name} with {json.dumps(arguments)}")
                case {"type": "finish", "finishReason": reason}:
                    print(f"finish: {reason}, usage: {json.dumps(event.get('usage'))}")
                case _:
                    pass


if __name__ == "__main__":
    anyio.run(main, backend=sys.argv[1] if len(sys.argv) > 1 else "asyncio")
