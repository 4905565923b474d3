"""Stream an answer from Anthropic (Claude) to stdout.

Needs the anthropic extra (pip install "ai_chat[anthropic]"). Run:

    ANTHROPIC_API_KEY=sk-ant-... uv run python examples/anthropic_chat.py "Why is the sky blue?"

    # with extended thinking (the budget must be below --max-tokens)
    uv run python examples/anthropic_chat.py --thinking 2048 --max-tokens 4096 "Why..."

    # through a proxy or gateway that speaks the Messages API (base URL without /v1)
    uv run python examples/anthropic_chat.py --base-url http://localhost:8080 "Why..."

Thinking is printed in brackets; tool calls would be printed too (this example offers
none). Provider failures are printed with their status, request id and retry-after.
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any

import anyio
from _chat import add_request_arguments, chat_request, print_answer

from ai_chat.adapters.anthropic import AnthropicChatAdapter


async def main(arguments: argparse.Namespace) -> int:
    settings: dict[str, Any] = {"max_retries": 1}  # anthropic.AsyncAnthropic arguments
    if arguments.base_url:
        settings["base_url"] = arguments.base_url
    api_key = arguments.api_key or os.environ.get("ANTHROPIC_API_KEY") or None
    if api_key is not None:
        settings["api_key"] = api_key

    parameters: dict[str, object] = {}
    if arguments.thinking is not None:
        thinking = {"type": "enabled", "budget_tokens": arguments.thinking}
        parameters["providerOptions"] = {"anthropic": {"thinking": thinking}}

    async with AnthropicChatAdapter(model=arguments.model, **settings) as adapter:
        return await print_answer(adapter, chat_request(arguments, parameters))


def parse(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description="Stream an answer from Anthropic's Messages API.")
    parser.add_argument(
        "--model", default="claude-sonnet-4-5", help="the model (default claude-sonnet-4-5)"
    )
    parser.add_argument("--base-url", help="a Messages API endpoint, without /v1")
    parser.add_argument("--api-key", help="the API key (default: ANTHROPIC_API_KEY)")
    parser.add_argument("--thinking", type=int, help="enable extended thinking with this budget")
    add_request_arguments(parser, "the most tokens to generate (default 4096)")
    return parser.parse_args(argv)


if __name__ == "__main__":
    options = parse(sys.argv[1:])
    sys.exit(anyio.run(main, options, backend=options.backend))
