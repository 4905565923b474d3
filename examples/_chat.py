"""What the provider examples share: the request they send and how they print the answer.

Each example (openai_chat.py, openai_responses.py, anthropic_chat.py, gemini_chat.py)
builds its adapter from its own command line, then::

    request = chat_request(arguments, parameters)
    async with SomeAdapter(...) as adapter:
        return await print_answer(adapter, request)
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from ai_chat import (
    AIChatAdapter,
    AIChatError,
    ProviderError,
    create_chat_stream,
)


def add_request_arguments(
    parser: argparse.ArgumentParser, max_tokens: str = "the most tokens to generate"
) -> None:
    """The prompt, ``--system``, ``--max-tokens`` (``max_tokens``: its help) and ``--backend``."""
    parser.add_argument("prompt", help="what to ask")
    parser.add_argument("--system", help="a system message to send first")
    parser.add_argument("--max-tokens", type=int, help=max_tokens)
    parser.add_argument("--backend", choices=["asyncio", "trio"], default="asyncio")


def chat_request(
    arguments: argparse.Namespace, parameters: dict[str, object] | None = None
) -> dict[str, Any]:
    """The request: the system message (if any), the prompt, and the parameters
    (``maxOutputTokens`` from ``--max-tokens`` added)."""
    messages: list[dict[str, object]] = []
    if arguments.system:
        messages.append(
            {
                "id": "system",
                "role": "system",
                "parts": [{"type": "text", "text": arguments.system}],
            }
        )
    messages.append(
        {"id": "user", "role": "user", "parts": [{"type": "text", "text": arguments.prompt}]}
    )
    merged: dict[str, object] = {}
    if arguments.max_tokens is not None:
        merged["maxOutputTokens"] = arguments.max_tokens
    merged.update(parameters or {})
    return {"messages": messages, "parameters": merged}


async def print_answer(adapter: AIChatAdapter, request: dict[str, Any]) -> int:
    """Stream the answer to stdout (reasoning in brackets); 1 on failure, else 0."""
    try:
        async with create_chat_stream(adapter, request) as stream:
            async for event in stream:
                match event:
                    case {"type": "reasoning-start"}:
                        print("[", end="", flush=True)
                    case {"type": "reasoning-end"}:
                        print("]\n", flush=True)
                    case {"type": "text-delta" | "reasoning-delta", "delta": str(delta)}:
                        print(delta, end="", flush=True)
                    case {"type": "tool-input-available", "toolName": name, "input": data}:
                        print(f"\n[tool call {name} {json.dumps(data)}]")
                    case {"type": "finish", "finishReason": reason}:
                        usage = event.get("usage", {})
                        print(f"\n[finish: {reason} · usage: {json.dumps(usage)}]")
                    case _:
                        pass
    except ProviderError as error:
        print(f"\nprovider error: {error}", file=sys.stderr)
        return 1
    except AIChatError as error:
        print(f"\nerror: {error}", file=sys.stderr)
        return 1
    return 0
