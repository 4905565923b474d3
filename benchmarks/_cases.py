"""The provider cases of benchmarks/providers.py: a streamed body and the ways to read it.

Each :class:`Case` names the SSE body a provider would send (built in the server
process by ``body(chunks)``) and the client paths that read it: the official SDK's own
iteration, plain httpx line reading, the ai_chat adapter plus the lifecycle, and other
libraries (LiteLLM, pydantic-ai) when the optional ``bench`` group is installed
(``uv sync --group bench``). Every path returns the number of items it read, so a path
that silently reads nothing shows up.
"""

from __future__ import annotations

import importlib
import json
import os
from collections.abc import AsyncIterable, Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import httpx

from ai_chat import create_chat_stream
from ai_chat.adapters.anthropic import AnthropicChatAdapter
from ai_chat.adapters.openai import OpenAIChatAdapter

__all__ = ["CASES", "Case", "Path", "count_adapter_events", "count_httpx_lines", "count_items"]

Path = Callable[[str], Awaitable[int]]

CHAT_REQUEST: Mapping[str, object] = {
    "messages": [{"id": "u1", "role": "user", "parts": [{"type": "text", "text": "Hello"}]}]
}
MAX_CHARS = 10_000_000


@dataclass(frozen=True)
class Case:
    """One provider's benchmark: the body, where the client points, and its paths."""

    name: str
    body: Callable[[int], bytes]
    base_path: str
    sdk: Path
    httpx_lines: Path
    adapter: Path
    others: dict[str, Callable[[], Path | None]] = field(
        default_factory=dict[str, Callable[[], Path | None]]
    )


def sse(data: object, event: str | None = None) -> bytes:
    head = f"event: {event}\n" if event else ""
    return f"{head}data: {json.dumps(data, separators=(',', ':'))}\n\n".encode()


async def count_items(items: AsyncIterable[object]) -> int:
    """How many items an async iterable yields (an SDK's stream, say)."""
    count = 0
    async for _ in items:
        count += 1
    return count


async def count_httpx_lines(
    url: str, body: Mapping[str, object], headers: Mapping[str, str] | None = None
) -> int:
    """Plain httpx: POST, read the SSE lines, parse each data line's JSON."""
    async with (
        httpx.AsyncClient() as client,
        client.stream("POST", url, json=body, headers=dict(headers or {})) as response,
    ):
        count = 0
        async for line in response.aiter_lines():
            if line.startswith("data: ") and line != "data: [DONE]":
                json.loads(line[6:])
                count += 1
        return count


async def count_adapter_events(adapter: Any) -> int:
    """The adapter through ai_chat's lifecycle (every event checked at the boundary)."""
    async with adapter:
        count = 0
        async with create_chat_stream(
            adapter, CHAT_REQUEST, max_response_chars=MAX_CHARS
        ) as stream:
            async for _ in stream:
                count += 1
        return count


# --- OpenAI Chat Completions -------------------------------------------------------------


def openai_chat_body(chunks: int) -> bytes:
    def chunk(delta: object, finish: str | None = None, usage: object = None) -> bytes:
        choices = (
            []
            if delta is None
            else [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}]
        )
        return sse(
            {
                "id": "chatcmpl-bench",
                "object": "chat.completion.chunk",
                "created": 0,
                "model": "bench",
                "choices": choices,
                "usage": usage,
            }
        )

    usage = {"prompt_tokens": 5, "completion_tokens": chunks, "total_tokens": chunks + 5}
    return b"".join(
        [chunk({"role": "assistant", "content": ""})]
        + [chunk({"content": f"w{i} "}) for i in range(chunks)]
        + [chunk({}, finish="stop"), chunk(None, usage=usage), b"data: [DONE]\n\n"]
    )


async def openai_sdk(base_url: str) -> int:
    import openai

    async with openai.AsyncOpenAI(base_url=base_url, api_key="bench", max_retries=0) as client:
        stream = await client.chat.completions.create(
            model="bench",
            messages=[{"role": "user", "content": "Hello"}],
            stream=True,
            stream_options={"include_usage": True},
        )
        async with stream:
            return await count_items(stream)


async def openai_httpx(base_url: str) -> int:
    return await count_httpx_lines(
        f"{base_url}/chat/completions",
        {
            "model": "bench",
            "messages": [{"role": "user", "content": "Hello"}],
            "stream": True,
            "stream_options": {"include_usage": True},
        },
        {"authorization": "Bearer bench"},
    )


async def openai_adapter(base_url: str) -> int:
    return await count_adapter_events(
        OpenAIChatAdapter(model="bench", base_url=base_url, api_key="bench", max_retries=0)
    )


# --- Anthropic Messages ------------------------------------------------------------------


def anthropic_body(chunks: int) -> bytes:
    message: dict[str, object] = {
        "id": "msg_bench",
        "type": "message",
        "role": "assistant",
        "model": "bench",
        "content": [],
        "stop_reason": None,
        "stop_sequence": None,
        "usage": {"input_tokens": 5, "output_tokens": 1},
    }

    def delta(i: int) -> bytes:
        return sse(
            {
                "type": "content_block_delta",
                "index": 0,
                "delta": {"type": "text_delta", "text": f"w{i} "},
            },
            "content_block_delta",
        )

    return b"".join(
        [
            sse({"type": "message_start", "message": message}, "message_start"),
            sse(
                {
                    "type": "content_block_start",
                    "index": 0,
                    "content_block": {"type": "text", "text": ""},
                },
                "content_block_start",
            ),
        ]
        + [delta(i) for i in range(chunks)]
        + [
            sse({"type": "content_block_stop", "index": 0}, "content_block_stop"),
            sse(
                {
                    "type": "message_delta",
                    "delta": {"stop_reason": "end_turn", "stop_sequence": None},
                    "usage": {"output_tokens": chunks},
                },
                "message_delta",
            ),
            sse({"type": "message_stop"}, "message_stop"),
        ]
    )


async def anthropic_sdk(base_url: str) -> int:
    import anthropic

    async with anthropic.AsyncAnthropic(
        base_url=base_url, api_key="bench", max_retries=0
    ) as client:
        stream = await client.messages.create(
            model="bench",
            max_tokens=1024,
            messages=[{"role": "user", "content": "Hello"}],
            stream=True,
        )
        async with stream:
            return await count_items(stream)


async def anthropic_httpx(base_url: str) -> int:
    return await count_httpx_lines(
        f"{base_url}/v1/messages",
        {
            "model": "bench",
            "max_tokens": 1024,
            "messages": [{"role": "user", "content": "Hello"}],
            "stream": True,
        },
        {"x-api-key": "bench", "anthropic-version": "2023-06-01"},
    )


async def anthropic_adapter(base_url: str) -> int:
    return await count_adapter_events(
        AnthropicChatAdapter(model="bench", base_url=base_url, api_key="bench", max_retries=0)
    )


# --- Other libraries (optional: uv sync --group bench) -------------------------------------


def optional(module: str) -> Any:
    """An optional benchmark dependency, or ``None`` (imported by name: CI type-checks
    this file without the bench group installed)."""
    try:
        return importlib.import_module(module)
    except ImportError:
        return None


def _litellm(provider: str) -> Path | None:
    litellm = optional_litellm()
    if litellm is None:
        return None

    async def path(base_url: str) -> int:
        response: Any = await litellm.acompletion(
            model=f"{provider}/bench",
            api_base=base_url,
            api_key="bench",
            messages=[{"role": "user", "content": "Hello"}],
            stream=True,
            max_tokens=1024,
        )
        return await count_items(response)

    return path


def _pydantic_ai(provider: str) -> Path | None:
    pydantic_ai = optional("pydantic_ai")
    if pydantic_ai is None:
        return None

    def model(base_url: str) -> Any:
        models = importlib.import_module(f"pydantic_ai.models.{provider}")
        providers = importlib.import_module(f"pydantic_ai.providers.{provider}")
        if provider == "openai":
            provider_object = providers.OpenAIProvider(base_url=base_url, api_key="bench")
            return models.OpenAIChatModel("bench", provider=provider_object)
        provider_object = providers.AnthropicProvider(base_url=base_url, api_key="bench")
        return models.AnthropicModel("bench", provider=provider_object)

    return pydantic_ai_path(pydantic_ai, model)


def optional_litellm() -> Any:
    """LiteLLM, set up to stay off the network, or None when it is not installed."""
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")  # no network at import
    litellm = optional("litellm")
    if litellm is not None:
        litellm.telemetry = False
    return litellm


def pydantic_ai_path(pydantic_ai: Any, model: Callable[[str], Any]) -> Path:
    """A pydantic-ai agent on ``model(base_url)``, counting the streamed text deltas."""

    async def path(base_url: str) -> int:
        agent: Any = pydantic_ai.Agent(model(base_url))
        async with agent.run_stream("Hello") as result:
            return await count_items(result.stream_text(delta=True, debounce_by=None))

    return path


CASES: dict[str, Case] = {
    "openai-chat": Case(
        name="OpenAI Chat Completions",
        body=openai_chat_body,
        base_path="/v1",
        sdk=openai_sdk,
        httpx_lines=openai_httpx,
        adapter=openai_adapter,
        others={
            "LiteLLM": lambda: _litellm("openai"),
            "pydantic-ai": lambda: _pydantic_ai("openai"),
        },
    ),
    "anthropic": Case(
        name="Anthropic Messages",
        body=anthropic_body,
        base_path="",
        sdk=anthropic_sdk,
        httpx_lines=anthropic_httpx,
        adapter=anthropic_adapter,
        others={
            "LiteLLM": lambda: _litellm("anthropic"),
            "pydantic-ai": lambda: _pydantic_ai("anthropic"),
        },
    ),
}


# Registered last: these modules import Case and the helpers above.
from benchmarks._gemini_case import GEMINI_CASE  # noqa: E402
from benchmarks._responses_case import RESPONSES_CASE  # noqa: E402

CASES["openai-responses"] = RESPONSES_CASE
CASES["gemini"] = GEMINI_CASE
