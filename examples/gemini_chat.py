"""Stream an answer from Google's Gemini API to stdout.

Needs the gemini extra (pip install "ai_chat[gemini]"). Run:

    GEMINI_API_KEY=... uv run python examples/gemini_chat.py "Why is the sky blue?"

    # with thought summaries (and a thinking budget, in tokens)
    uv run python examples/gemini_chat.py --thoughts --thinking-budget 1024 "Why..."

    # through a proxy or gateway that speaks the Gemini API
    uv run python examples/gemini_chat.py --base-url http://localhost:8080 "Why..."

Thought summaries are printed in brackets; tool calls would be printed too (this example
offers none). Provider failures are printed with their status, error type and
retry-after.
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any

import anyio
from _chat import add_request_arguments, chat_request, print_answer

from ai_chat.adapters.gemini import GeminiChatAdapter


async def main(arguments: argparse.Namespace) -> int:
    settings: dict[str, Any] = {}  # google.genai.Client arguments
    if arguments.base_url:
        settings["http_options"] = {"base_url": arguments.base_url, "api_version": "v1beta"}
    api_key = (
        arguments.api_key
        or os.environ.get("GEMINI_API_KEY")
        or os.environ.get("GOOGLE_API_KEY")
        or None
    )
    if api_key is not None:
        settings["api_key"] = api_key

    parameters: dict[str, object] = {}
    thinking: dict[str, object] = {}
    if arguments.thoughts:
        thinking["includeThoughts"] = True
    if arguments.thinking_budget is not None:
        thinking["thinkingBudget"] = arguments.thinking_budget
    if thinking:
        parameters["providerOptions"] = {"gemini": {"thinkingConfig": thinking}}

    async with GeminiChatAdapter(model=arguments.model, **settings) as adapter:
        return await print_answer(adapter, chat_request(arguments, parameters))


def parse(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description="Stream an answer from the Gemini API.")
    parser.add_argument(
        "--model", default="gemini-2.5-flash", help="the model (default gemini-2.5-flash)"
    )
    parser.add_argument("--base-url", help="a Gemini API endpoint (the SDK adds /v1beta/...)")
    parser.add_argument(
        "--api-key", help="the API key (default: GEMINI_API_KEY, then GOOGLE_API_KEY)"
    )
    parser.add_argument("--thoughts", action="store_true", help="stream thought summaries")
    parser.add_argument("--thinking-budget", type=int, help="the thinking budget, in tokens")
    add_request_arguments(parser)
    return parser.parse_args(argv)


if __name__ == "__main__":
    options = parse(sys.argv[1:])
    sys.exit(anyio.run(main, options, backend=options.backend))
