"""Stream an answer from OpenAI, or from any OpenAI-compatible server, to stdout.

Needs the openai extra (pip install "ai_chat[openai]"). Run:

    OPENAI_API_KEY=sk-... uv run python examples/openai_chat.py "Why is the sky blue?"

    # Ollama, vLLM, the llama.cpp server...: any OpenAI-compatible /v1 endpoint
    uv run python examples/openai_chat.py --base-url http://localhost:11434/v1 \\
        --model llama3.2 "Why is the sky blue?"

Reasoning (``reasoning_content`` / ``reasoning`` from DeepSeek, vLLM, OpenRouter...) is
printed in brackets; tool calls would be printed too (this example offers none).
Provider failures are printed with their status, request id and retry-after.
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any

import anyio
from _chat import add_request_arguments, chat_request, print_answer

from ai_chat.adapters.openai import OpenAIChatAdapter


async def main(arguments: argparse.Namespace) -> int:
    settings: dict[str, Any] = {"max_retries": 1}  # openai.AsyncOpenAI arguments
    if arguments.base_url:
        settings["base_url"] = arguments.base_url
    api_key = arguments.api_key or os.environ.get("OPENAI_API_KEY") or None
    if api_key is None and arguments.base_url:
        api_key = "unused"  # local servers usually take any key
    if api_key is not None:
        settings["api_key"] = api_key

    parameters: dict[str, object] = {}

    async with OpenAIChatAdapter(model=arguments.model, **settings) as adapter:
        return await print_answer(adapter, chat_request(arguments, parameters))


def parse(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description="Stream an answer from an OpenAI(-compatible) API."
    )
    parser.add_argument("--model", default="gpt-4.1-mini", help="the model (default gpt-4.1-mini)")
    parser.add_argument(
        "--base-url", help="an OpenAI-compatible endpoint, e.g. http://localhost:11434/v1"
    )
    parser.add_argument("--api-key", help="the API key (default: OPENAI_API_KEY)")
    add_request_arguments(parser)
    return parser.parse_args(argv)


if __name__ == "__main__":
    options = parse(sys.argv[1:])
    sys.exit(anyio.run(main, options, backend=options.backend))
