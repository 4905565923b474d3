"""Stream an answer from any AI SDK chat endpoint (the UI message stream protocol).

That is the endpoint a ``useChat`` front end talks to: a Next.js route using the AI SDK's
``toUIMessageStreamResponse``, an ``ai-chat serve`` server, or any backend speaking the
protocol. Needs only ai_chat itself (httpx). Run:

    uv run python examples/ui_stream_client.py http://127.0.0.1:8000/api/chat "Why is the sky blue?"

    # authentication and extra body keys the endpoint reads
    uv run python examples/ui_stream_client.py https://example.com/api/chat \\
        --header "authorization: Bearer $TOKEN" --body '{"model": "fast"}' "Hello"

Text is printed as it arrives, reasoning in brackets, tool calls and their results,
application data parts and sources on lines of their own, then the finish reason and
the message metadata. A failure is printed with its type: an HTTP error status, an
``error`` chunk from the server (RemoteStreamError), a cut-off stream
(TruncatedStreamError)...; the exit status is then 1.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

import anyio

from ai_chat import AIChatError, create_chat_stream
from ai_chat.adapters.ui_stream import DEFAULT_IDLE_TIMEOUT, UIMessageStreamAdapter


def _compact(value: object) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


async def main(arguments: argparse.Namespace) -> int:
    headers: dict[str, str] = {}
    for header in arguments.header:
        name, _, value = header.partition(":")
        headers[name.strip()] = value.strip()
    body: dict[str, Any] = json.loads(arguments.body) if arguments.body else {}
    request = {
        "messages": [
            {"id": "user-1", "role": "user", "parts": [{"type": "text", "text": arguments.text}]}
        ]
    }
    out = sys.stdout
    async with UIMessageStreamAdapter(
        arguments.url,
        headers=headers,
        body=body,
        chat_id=arguments.chat_id,
        idle_timeout=arguments.idle_timeout,
    ) as adapter:
        try:
            async with create_chat_stream(adapter, request) as stream:
                async for event in stream:
                    match event:
                        case {"type": "text-delta", "delta": str(delta)}:
                            out.write(delta)
                        case {"type": "reasoning-start"}:
                            out.write("[reasoning] ")
                        case {"type": "reasoning-delta", "delta": str(delta)}:
                            out.write(delta)
                        case {"type": "reasoning-end"} | {"type": "text-end"}:
                            out.write("\n")
                        case {"type": "tool-input-available", "toolName": name, "input": value}:
                            out.write(f"[tool call {name} {_compact(value)}]\n")
                        case {"type": "tool-output-available", "toolCallId": call, "output": value}:
                            out.write(f"[tool result {call} {_compact(value)}]\n")
                        case {"type": "source-url", "url": str(url)}:
                            out.write(f"[source {url}]\n")
                        case {"type": str(kind), "data": value} if kind.startswith("data-"):
                            out.write(f"[{kind} {_compact(value)}]\n")
                        case {"type": "finish", "finishReason": reason}:
                            metadata = event.get("messageMetadata")
                            extra = f" · metadata {_compact(metadata)}" if metadata else ""
                            out.write(f"[finish: {reason}{extra}]\n")
                        case _:
                            pass
                    out.flush()
        except AIChatError as exc:
            print(f"\n{type(exc).__name__}: {exc}", file=sys.stderr)
            return 1
    return 0


def parse(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description="Stream an answer from an AI SDK chat endpoint.")
    parser.add_argument("url", help="the chat endpoint, such as http://127.0.0.1:8000/api/chat")
    parser.add_argument("text", help="the user's message")
    parser.add_argument(
        "--header", action="append", default=[], help='a request header, "name: value"'
    )
    parser.add_argument("--body", help="extra request body keys, as a JSON object")
    parser.add_argument("--chat-id", help="the chat id (default: a random one)")
    parser.add_argument(
        "--idle-timeout",
        type=float,
        default=DEFAULT_IDLE_TIMEOUT,
        help=f"seconds to wait for each next event (default {DEFAULT_IDLE_TIMEOUT:g})",
    )
    return parser.parse_args(argv)


if __name__ == "__main__":
    sys.exit(anyio.run(main, parse()))
