"""The formats through the genuine provider SDKs, against the local wire-exact servers.

Each test sends ``to_*``'s output as the SDK's own request argument, checks the body the
server received, reads the SDK's answer object back with ``from_*``, and sends the
extended history again: the provider's private data (signatures, redacted thinking,
encrypted reasoning, item ids, thought signatures) goes back byte for byte.
"""

from __future__ import annotations

import base64
import json
from collections.abc import AsyncGenerator, Callable, Mapping
from contextlib import asynccontextmanager
from typing import Any, cast

import anthropic
import anyio
import httpx2
import openai
import pytest
from adapters._support.common import HANG_GUARD, TLS
from adapters._support.fake_server import FakeServer, Request, Response, serve
from anthropic.types import MessageParam, TextBlockParam
from google import genai
from google.genai import types as genai_types
from openai.types.chat import ChatCompletionMessageParam
from openai.types.responses import ResponseInputParam

from ai_chat.formats import (
    GENERATED_ID_PREFIX,
    from_anthropic,
    from_gemini,
    from_openai_chat,
    from_openai_responses,
    to_anthropic,
    to_gemini,
    to_openai_chat,
    to_openai_responses,
)

from ._support import RICH, plain

pytestmark = pytest.mark.anyio

JSON_HEADERS = {"content-type": "application/json"}


def answering(body: Mapping[str, Any]) -> Callable[[Request], Response]:
    """A handler that answers every request with ``body`` as JSON."""
    data = json.dumps(body, ensure_ascii=False).encode()

    def handler(request: Request) -> Response:
        return Response(200, JSON_HEADERS, [data])

    return handler


def without_empty(value: Any) -> Any:
    """``value`` without null, empty and ``status`` fields (not part of what is sent back)."""
    if isinstance(value, dict):
        return {
            key: without_empty(item)
            for key, item in cast("dict[str, Any]", value).items()
            if item not in (None, [], {}) and key != "status"
        }
    if isinstance(value, list):
        return [without_empty(item) for item in cast("list[Any]", value)]
    return value


# --- OpenAI Chat Completions ---------------------------------------------------------------

CHAT_ANSWER = {
    "id": "chatcmpl-1",
    "object": "chat.completion",
    "created": 1,
    "model": "gpt-test",
    "choices": [
        {
            "index": 0,
            "finish_reason": "tool_calls",
            "logprobs": None,
            "message": {
                "role": "assistant",
                "content": "Looking it up.",
                "refusal": None,
                "annotations": [],
                "tool_calls": [
                    {
                        "id": "call_9",
                        "type": "function",
                        "function": {"name": "get_weather", "arguments": '{"city":"Bern"}'},
                    }
                ],
            },
        }
    ],
    "usage": {"prompt_tokens": 5, "completion_tokens": 3, "total_tokens": 8},
}


@asynccontextmanager
async def openai_client(handler: Any) -> AsyncGenerator[tuple[FakeServer, openai.AsyncOpenAI]]:
    async with serve(handler) as server:
        http_client = openai.DefaultAsyncHttpxClient(verify=TLS)
        async with openai.AsyncOpenAI(
            base_url=server.url("/v1"), api_key="test", max_retries=0, http_client=http_client
        ) as client:
            yield server, client


async def test_openai_chat_through_the_sdk() -> None:
    messages = to_openai_chat(RICH, reasoning_parts="omit")
    async with openai_client(answering(CHAT_ANSWER)) as (server, client):
        with anyio.fail_after(HANG_GUARD):
            completion = await client.chat.completions.create(
                model="gpt-test", messages=cast("list[ChatCompletionMessageParam]", messages)
            )
    assert server.requests[0].json()["messages"] == plain(messages)
    answer = from_openai_chat([completion.choices[0].message])
    assert plain(answer[0]["parts"]) == [
        {"type": "text", "text": "Looking it up."},
        {
            "type": "tool-call",
            "toolCallId": "call_9",
            "toolName": "get_weather",
            "input": {"city": "Bern"},
        },
    ]
    again = to_openai_chat((*RICH, *answer), reasoning_parts="omit")
    choices: Any = CHAT_ANSWER["choices"]
    sent = without_empty(choices[0]["message"])
    assert plain(again[-1]) == sent


# --- OpenAI Responses ----------------------------------------------------------------------

RESPONSES_OUTPUT: list[dict[str, Any]] = [
    {
        "type": "reasoning",
        "id": "rs_9",
        "summary": [
            {"type": "summary_text", "text": "Weather first."},
            {"type": "summary_text", "text": "Then the time."},
        ],
        "encrypted_content": "gAAAAB-opaque+/=",
        "status": "completed",
    },
    {
        "type": "message",
        "id": "msg_9",
        "role": "assistant",
        "status": "completed",
        "content": [
            {
                "type": "output_text",
                "text": "Looking it up.",
                "annotations": [
                    {
                        "type": "url_citation",
                        "start_index": 0,
                        "end_index": 7,
                        "title": "Weather",
                        "url": "https://weather.test/",
                    }
                ],
                "logprobs": [],
            }
        ],
    },
    {
        "type": "function_call",
        "id": "fc_9",
        "call_id": "call_9",
        "name": "get_weather",
        "arguments": '{"city":"Bern"}',
        "status": "completed",
    },
]

RESPONSE = {
    "id": "resp_1",
    "object": "response",
    "created_at": 1,
    "model": "gpt-test",
    "status": "completed",
    "output": RESPONSES_OUTPUT,
    "parallel_tool_calls": True,
    "tool_choice": "auto",
    "tools": [],
    "usage": {
        "input_tokens": 5,
        "input_tokens_details": {"cached_tokens": 0},
        "output_tokens": 3,
        "output_tokens_details": {"reasoning_tokens": 1},
        "total_tokens": 8,
    },
}


async def test_openai_responses_through_the_sdk() -> None:
    items = to_openai_responses(RICH)
    async with openai_client(answering(RESPONSE)) as (server, client):
        with anyio.fail_after(HANG_GUARD):
            response = await client.responses.create(
                model="gpt-test", input=cast("ResponseInputParam", items)
            )
    assert server.requests[0].json()["input"] == plain(items)
    answer = from_openai_responses(response.output)
    assert len(answer) == 1 and answer[0]["role"] == "assistant"
    again = to_openai_responses((*RICH, *answer))
    assert without_empty(plain(again[-3:])) == without_empty(RESPONSES_OUTPUT)


# --- Anthropic ---------------------------------------------------------------------------

ANTHROPIC_CONTENT: list[dict[str, Any]] = [
    {"type": "thinking", "thinking": "Bern, then.", "signature": "EqQBCkgIARABGAIiQL+/sig=="},
    {"type": "redacted_thinking", "data": "EmwKAhgBEgy3va3pzix/opaque="},
    {"type": "text", "text": "Looking it up."},
    {"type": "tool_use", "id": "toolu_9", "name": "get_weather", "input": {"city": "Bern"}},
]

ANTHROPIC_MESSAGE = {
    "id": "msg_01",
    "type": "message",
    "role": "assistant",
    "model": "claude-test",
    "content": ANTHROPIC_CONTENT,
    "stop_reason": "tool_use",
    "stop_sequence": None,
    "usage": {"input_tokens": 5, "output_tokens": 3},
}


async def test_anthropic_through_the_sdk() -> None:
    payload = to_anthropic(RICH)
    async with serve(answering(ANTHROPIC_MESSAGE)) as server:
        http_client = anthropic.DefaultAsyncHttpxClient(verify=TLS)
        async with anthropic.AsyncAnthropic(
            base_url=server.url(), api_key="test", max_retries=0, http_client=http_client
        ) as client:
            with anyio.fail_after(HANG_GUARD):
                message = await client.messages.create(
                    model="claude-test",
                    max_tokens=100,
                    system=cast("list[TextBlockParam]", payload.get("system")),
                    messages=cast("list[MessageParam]", payload["messages"]),
                )
    body = server.requests[0].json()
    assert [body["system"], body["messages"]] == plain([payload.get("system"), payload["messages"]])
    answer = from_anthropic(message)
    again = to_anthropic((*RICH, *answer))
    assert plain(again["messages"][-1]) == {"role": "assistant", "content": ANTHROPIC_CONTENT}


# --- Gemini --------------------------------------------------------------------------------

SIGNATURE = base64.b64encode(bytes(range(250, 256)) + b"sig").decode()  # has + and /
GEMINI_PARTS: list[dict[str, Any]] = [
    {"text": "Bern, then.", "thought": True, "thoughtSignature": SIGNATURE},
    {"text": "Looking it up."},
    {
        "functionCall": {"name": "get_weather", "args": {"city": "Bern"}},
        "thoughtSignature": SIGNATURE,
    },
    {"functionCall": {"name": "get_time", "args": {}, "id": "fc-issued"}},
]
GEMINI_ANSWER = {
    "candidates": [
        {"content": {"role": "model", "parts": GEMINI_PARTS}, "finishReason": "STOP", "index": 0}
    ],
    "usageMetadata": {"promptTokenCount": 5, "candidatesTokenCount": 3, "totalTokenCount": 8},
    "modelVersion": "gemini-test-001",
    "responseId": "resp-1",
}


# google-genai writes these in snake_case, which the API's JSON parser takes as well.
SNAKE = {"mime_type": "mimeType", "file_uri": "fileUri"}


def as_the_api_reads(contents: Any) -> Any:
    """The contents google-genai sent, in the API's spelling: camelCase, and bytes in
    standard base64 (the SDK writes URL-safe base64, which the API takes as well)."""
    for content in contents:
        for part in content["parts"]:
            if "thoughtSignature" in part:
                part["thoughtSignature"] = standard(part["thoughtSignature"])
            for key in ("inlineData", "fileData"):
                if key in part:
                    part[key] = {SNAKE.get(name, name): value for name, value in part[key].items()}
            if "inlineData" in part:
                part["inlineData"]["data"] = standard(part["inlineData"]["data"])
    return contents


def standard(text: str) -> str:
    return base64.b64encode(base64.urlsafe_b64decode(text)).decode()


async def test_gemini_through_the_sdk() -> None:
    payload = to_gemini(RICH)
    async with (
        serve(answering(GEMINI_ANSWER)) as server,
        httpx2.AsyncClient(verify=TLS) as http,
    ):
        options = genai_types.HttpOptions(
            base_url=server.url(), api_version="v1beta", httpx_async_client=http
        )
        client = genai.Client(api_key="test", http_options=options)
        models: Any = client.aio.models  # google-genai's signatures hold unknown types
        with anyio.fail_after(HANG_GUARD):
            response: genai_types.GenerateContentResponse = await models.generate_content(
                model="gemini-test",
                contents=payload["contents"],
                config={"system_instruction": payload.get("systemInstruction")},
            )
    request: Request = server.requests[0]
    assert request.path == "/v1beta/models/gemini-test:generateContent"
    body = request.json()
    assert as_the_api_reads(body["contents"]) == plain(payload["contents"])
    assert body["systemInstruction"] == plain(payload.get("systemInstruction"))
    assert response.candidates is not None
    answer = from_gemini(response.candidates[0])
    calls = [part for part in plain(answer[0]["parts"]) if part["type"] == "tool-call"]
    assert calls[0]["toolCallId"].startswith(GENERATED_ID_PREFIX)  # none issued: made up
    assert calls[1]["toolCallId"] == "fc-issued"
    again = to_gemini((*RICH, *answer))
    assert plain(again["contents"][-1]) == {"role": "model", "parts": GEMINI_PARTS}
