"""The OpenAI Responses API case of benchmarks/providers.py (to join ``CASES``).

``RESPONSES_CASE`` streams N ``response.output_text.delta`` events between the events
that open and close one message item, ending with ``response.completed`` (usage
included), exactly as the Responses API frames them (``event:`` and ``data:`` lines).
The client paths: the SDK's own iteration (``client.responses.create(stream=True)``),
plain httpx line reading, and the adapter (``api="responses"``) plus the lifecycle.

The end of ``benchmarks/_cases.py`` registers it (``_cases`` defines everything this
module takes from it first). Run it alone with
``uv run python benchmarks/providers.py --only openai-responses``.
"""

from __future__ import annotations

import importlib
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from ai_chat.adapters.openai import OpenAIChatAdapter
from benchmarks._cases import (
    Case,
    count_adapter_events,
    count_httpx_lines,
    count_items,
    optional,
    optional_litellm,
    pydantic_ai_path,
    sse,
)
from benchmarks._cases import Path as ClientPath

__all__ = ["RESPONSES_CASE"]

_INPUT = [{"role": "user", "content": "Hello"}]


def responses_body(chunks: int) -> bytes:
    """The Responses API stream of one message item with ``chunks`` text deltas."""
    sequence = 0

    def event(kind: str, **fields: Any) -> bytes:
        nonlocal sequence
        sequence += 1
        return sse({"type": kind, "sequence_number": sequence - 1, **fields}, kind)

    def response(status: str, output: list[Any], usage: Any = None) -> dict[str, Any]:
        return {
            "id": "resp_bench",
            "object": "response",
            "created_at": 0,
            "status": status,
            "model": "bench",
            "output": output,
            "usage": usage,
            "error": None,
            "incomplete_details": None,
        }

    where = {"item_id": "msg_bench", "output_index": 0, "content_index": 0}
    text = "".join(f"w{i} " for i in range(chunks))
    part: dict[str, Any] = {"type": "output_text", "annotations": [], "text": text}
    item = {"id": "msg_bench", "type": "message", "role": "assistant", "status": "completed"}
    usage = {
        "input_tokens": 5,
        "input_tokens_details": {"cached_tokens": 0},
        "output_tokens": chunks,
        "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": chunks + 5,
    }
    return b"".join(
        [
            event("response.created", response=response("in_progress", [])),
            event("response.in_progress", response=response("in_progress", [])),
            event(
                "response.output_item.added",
                output_index=0,
                item={**item, "status": "in_progress", "content": []},
            ),
            event("response.content_part.added", **where, part={**part, "text": ""}),
        ]
        + [
            event("response.output_text.delta", **where, delta=f"w{i} ", logprobs=[])
            for i in range(chunks)
        ]
        + [
            event("response.output_text.done", **where, text=text, logprobs=[]),
            event("response.content_part.done", **where, part=part),
            event("response.output_item.done", output_index=0, item={**item, "content": [part]}),
            event(
                "response.completed",
                response=response("completed", [{**item, "content": [part]}], usage),
            ),
        ]
    )


async def responses_sdk(base_url: str) -> int:
    import openai

    async with openai.AsyncOpenAI(base_url=base_url, api_key="bench", max_retries=0) as client:
        stream = await client.responses.create(
            model="bench", input=[{"role": "user", "content": "Hello"}], stream=True
        )
        async with stream:
            return await count_items(stream)


async def responses_httpx(base_url: str) -> int:
    return await count_httpx_lines(
        f"{base_url}/responses",
        {"model": "bench", "input": _INPUT, "stream": True},
        {"authorization": "Bearer bench"},
    )


async def responses_adapter(base_url: str) -> int:
    return await count_adapter_events(
        OpenAIChatAdapter(
            model="bench", api="responses", base_url=base_url, api_key="bench", max_retries=0
        )
    )


def _litellm() -> ClientPath | None:
    litellm = optional_litellm()
    if litellm is None:
        return None

    async def path(base_url: str) -> int:
        response: Any = await litellm.aresponses(
            model="openai/gpt-4.1-mini",  # a model LiteLLM knows streams natively
            input="Hello",
            stream=True,
            api_base=base_url,
            api_key="bench",
        )
        return await count_items(response)

    return path


def _pydantic_ai() -> ClientPath | None:
    pydantic_ai = optional("pydantic_ai")
    if pydantic_ai is None:
        return None
    models = importlib.import_module("pydantic_ai.models.openai")
    providers = importlib.import_module("pydantic_ai.providers.openai")

    def model(base_url: str) -> Any:
        provider = providers.OpenAIProvider(base_url=base_url, api_key="bench")
        return models.OpenAIResponsesModel("bench", provider=provider)

    return pydantic_ai_path(pydantic_ai, model)


RESPONSES_CASE = Case(
    name="OpenAI Responses API",
    body=responses_body,
    base_path="/v1",
    sdk=responses_sdk,
    httpx_lines=responses_httpx,
    adapter=responses_adapter,
    others={"LiteLLM": _litellm, "pydantic-ai": _pydantic_ai},
)

# --- running this case alone (until it joins CASES) --------------------------------------
