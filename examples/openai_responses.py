"""Stream an answer from OpenAI's Responses API (or a compatible server) to stdout.

Needs the openai extra (pip install "ai_chat[openai]"). Run:

    OPENAI_API_KEY=sk-... uv run python examples/openai_responses.py \\
        --model gpt-5-mini --effort low "Why is the sky blue?"

    # an OpenAI-compatible server that offers /v1/responses (vLLM, Ollama...)
    uv run python examples/openai_responses.py --base-url http://localhost:8000/v1 \\
        --model openai/gpt-oss-20b "Why is the sky blue?"

With ``--effort`` the request asks for a reasoning summary, printed in brackets; the
reasoning parts' ``providerMetadata.openai`` (item id, encrypted content) is what a
follow-up request would send back. Tool calls would be printed too (this example offers
none). Provider failures are printed with their status, request id and retry-after.
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
    if arguments.effort:
        # Responses API fields go under providerOptions.openai, as the API spells them.
        parameters["providerOptions"] = {
            "openai": {"reasoning": {"effort": arguments.effort, "summary": "auto"}}
        }

    async with OpenAIChatAdapter(model=arguments.model, api="responses", **settings) as adapter:
        return await print_answer(adapter, chat_request(arguments, parameters))


def parse(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description="Stream an answer from the OpenAI Responses API.")
    parser.add_argument("--model", default="gpt-5-mini", help="the model (default gpt-5-mini)")
    parser.add_argument("--base-url", help="an OpenAI-compatible endpoint with /responses")
    parser.add_argument("--api-key", help="the API key (default: OPENAI_API_KEY)")
    parser.add_argument(
        "--effort",
        choices=["minimal", "low", "medium", "high"],
        help="reasoning effort (reasoning models); also asks for a reasoning summary",
    )
    add_request_arguments(parser)
    return parser.parse_args(argv)


if __name__ == "__main__":
    options = parse(sys.argv[1:])
    sys.exit(anyio.run(main, options, backend=options.backend))
