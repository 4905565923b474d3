"""The Gemini case of benchmarks/providers.py (registered at the end of ``_cases.py``).

The SDK's own iteration is measured on both of its async transports: httpx2 (a client
handed to it, which the adapter also reads as it is; any backend) and aiohttp (its default whenever
aiohttp is importable; asyncio only, so it runs with the "other libraries")."""

from __future__ import annotations

import json
from pathlib import Path

import httpx2
from google import genai
from google.genai import types as genai_types

from ai_chat.adapters.gemini import GeminiChatAdapter
from benchmarks._cases import Case, count_adapter_events, count_httpx_lines, count_items

ROOT = Path(__file__).resolve().parent.parent

MODEL = "bench"
SDK_NAME = "google-genai SDK iteration (httpx2)"
AIOHTTP_NAME = "google-genai SDK iteration (aiohttp)"
HTTPX_NAME = "plain httpx line reading"
ADAPTER_NAME = "ai_chat adapter + lifecycle"


def _options(base_url: str, http: httpx2.AsyncClient | None = None) -> genai_types.HttpOptions:
    return genai_types.HttpOptions(base_url=base_url, api_version="v1beta", httpx_async_client=http)


async def _sdk_iteration(client: genai.Client) -> int:
    models = client.aio.models
    stream = await models.generate_content_stream(  # pyright: ignore[reportUnknownMemberType]
        model=MODEL, contents="Hello"
    )
    return await count_items(stream)


async def via_sdk(base_url: str) -> int:
    async with httpx2.AsyncClient() as http:
        client = genai.Client(api_key="bench", http_options=_options(base_url, http))
        try:
            return await _sdk_iteration(client)
        finally:
            client.close()
            await client.aio.aclose()


async def via_sdk_aiohttp(base_url: str) -> int:
    client = genai.Client(api_key="bench", http_options=_options(base_url))
    try:
        return await _sdk_iteration(client)
    finally:
        client.close()
        await client.aio.aclose()


async def via_httpx_lines(base_url: str) -> int:
    # Gemini sends no [DONE] line: every data line counts.
    return await count_httpx_lines(
        f"{base_url}/v1beta/models/{MODEL}:streamGenerateContent?alt=sse",
        {"contents": [{"role": "user", "parts": [{"text": "Hello"}]}]},
        {"x-goog-api-key": "bench"},
    )


async def via_adapter(base_url: str) -> int:
    return await count_adapter_events(
        GeminiChatAdapter(
            model=MODEL,
            api_key="bench",
            http_options={"base_url": base_url, "api_version": "v1beta"},
        )
    )


def gemini_body(chunks: int) -> bytes:
    """N whole GenerateContentResponse chunks (usage in each), then ``finishReason: STOP``,
    with Google's CRLF framing."""

    def chunk(text: str, finish: str | None = None, tokens: int = 0) -> bytes:
        candidate: dict[str, object] = {
            "content": {"parts": [{"text": text}], "role": "model"},
            "index": 0,
        }
        if finish:
            candidate["finishReason"] = finish
        usage = {
            "promptTokenCount": 5,
            "candidatesTokenCount": tokens,
            "totalTokenCount": tokens + 5,
        }
        body = {
            "candidates": [candidate],
            "usageMetadata": usage,
            "modelVersion": "bench-001",
            "responseId": "bench",
        }
        return f"data: {json.dumps(body)}\r\n\r\n".encode()

    return b"".join(
        [chunk(f"w{i} ", tokens=i + 1) for i in range(chunks)]
        + [chunk("", finish="STOP", tokens=chunks)]
    )


GEMINI_CASE = Case(
    name="Gemini streamGenerateContent (SDK on its httpx2 transport)",
    body=gemini_body,
    base_path="",
    sdk=via_sdk,
    httpx_lines=via_httpx_lines,
    adapter=via_adapter,
    others={"google-genai SDK on its aiohttp transport": lambda: via_sdk_aiohttp},
)
