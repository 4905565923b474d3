"""The OpenAI Chat Completions adapter, through the genuine openai SDK over loopback HTTP.

Every test drives ``openai.AsyncOpenAI`` against :mod:`tests.adapters._support.fake_server`,
which sends the Chat Completions wire format (``chat.completion.chunk`` data lines, raw
UTF-8, ``data: [DONE]``) with chunked encoding, and records what it received.
"""

from __future__ import annotations

import email.utils
import json
import time
from collections.abc import AsyncGenerator, Callable, Mapping, Sequence
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from typing import Any, ClassVar, cast

import anyio
import httpx2
import openai
import pytest
from anyio.abc import SocketAttribute

from ai_chat import (
    AIChatAdapter,
    ConfigurationError,
    ProviderError,
    StreamFormatError,
    TruncatedStreamError,
    ValidationError,
)
from ai_chat.adapters._base.http import retry_after
from ai_chat.adapters.openai import OpenAIChatAdapter
from ai_chat.types import ChatEvent

from .._support.common import (
    HANG_GUARD,
    HELLO,
    TLS,
    CallerOwnedClient,
    SDKImports,
    ServedConformance,
    StreamChecks,
    collect,
    failure_with,
    finish_of,
    of_type,
    run_example,
    run_with,
    text_of,
    types,
    with_message,
    with_parameters,
)
from .._support.fake_server import FakeServer, Request, Response, Step, serve, sse
from .._support.release import ReleaseOnStop

MODEL = "gpt-test"
REQUEST_ID = "req_0123456789"
USAGE = {
    "prompt_tokens": 11,
    "completion_tokens": 7,
    "total_tokens": 18,
    "prompt_tokens_details": {"cached_tokens": 3, "audio_tokens": 0},
    "completion_tokens_details": {"reasoning_tokens": 2, "audio_tokens": 0},
}
DONE = sse("[DONE]")
SSE_HEADERS = {"content-type": "text/event-stream; charset=utf-8", "x-request-id": REQUEST_ID}


# --- the wire format ----------------------------------------------------------------------


def chunk(
    delta: Mapping[str, Any] | None = None,
    finish_reason: str | None = None,
    *,
    usage: Mapping[str, Any] | None = None,
    choices: bool = True,
) -> bytes:
    """One ``chat.completion.chunk`` data line, shaped as OpenAI sends it."""
    body: dict[str, Any] = {
        "id": "chatcmpl-test",
        "object": "chat.completion.chunk",
        "created": 1_760_000_000,
        "model": MODEL,
        "service_tier": "default",
        "system_fingerprint": "fp_test",
        "choices": [
            {
                "index": 0,
                "delta": dict(delta or {}),
                "logprobs": None,
                "finish_reason": finish_reason,
            }
        ]
        if choices
        else [],
        "usage": usage,
        "obfuscation": "x1",
    }
    return sse(body)


def role_chunk() -> bytes:
    return chunk({"role": "assistant", "content": "", "refusal": None})


def ending(finish_reason: str = "stop", usage: Mapping[str, Any] | None = USAGE) -> list[bytes]:
    """The finish chunk, the usage chunk (``choices: []``) and ``[DONE]``."""
    steps = [chunk({}, finish_reason)]
    if usage is not None:
        steps.append(chunk(usage=usage, choices=False))
    steps.append(DONE)
    return steps


def text_chunks(*deltas: str) -> list[bytes]:
    return [role_chunk(), *(chunk({"content": delta}) for delta in deltas)]


def tool_start(index: int, call_id: str, name: str) -> bytes:
    return chunk(
        {
            "tool_calls": [
                {
                    "index": index,
                    "id": call_id,
                    "type": "function",
                    "function": {"name": name, "arguments": ""},
                }
            ]
        }
    )


def tool_arguments(index: int, fragment: str) -> bytes:
    return chunk({"tool_calls": [{"index": index, "function": {"arguments": fragment}}]})


def streaming(steps: Sequence[Step]) -> Callable[[Request], Response]:
    return lambda request: Response(200, SSE_HEADERS, steps)


# --- running the adapter --------------------------------------------------------------------


def sdk_client(base_url: str) -> openai.AsyncOpenAI:
    """The genuine SDK client, as a test would configure it (no retries)."""
    http_client = openai.DefaultAsyncHttpxClient(verify=TLS)
    return openai.AsyncOpenAI(
        base_url=base_url, api_key="test", max_retries=0, http_client=http_client
    )


@asynccontextmanager
async def openai_adapter(
    handler: Callable[[Request], Response], **options: Any
) -> AsyncGenerator[tuple[FakeServer, OpenAIChatAdapter]]:
    """A fake server and an adapter whose (caller-owned) SDK client points at it."""
    async with (
        serve(handler) as server,
        sdk_client(server.url("/v1")) as client,
    ):
        yield server, OpenAIChatAdapter(client, model=MODEL, **options)


async def run(steps: Sequence[Step], request: Mapping[str, Any] = HELLO) -> list[ChatEvent]:
    return await run_with(openai_adapter, streaming(steps), request)


async def failure(
    handler: Callable[[Request], Response],
    expected: type[BaseException],
    request: Mapping[str, Any] = HELLO,
) -> tuple[Any, list[ChatEvent], FakeServer]:
    """The error the stream raised, the events delivered before it, and the server."""
    return await failure_with(openai_adapter, handler, expected, request)


# --- streaming ------------------------------------------------------------------------------

pytestmark = pytest.mark.anyio

TEXT = "Grüße aus Köln! 日本語のテキスト 🎉🚀 and plain ASCII, in many small deltas. "


async def test_text_in_many_deltas_with_utf8_split_across_chunks() -> None:
    deltas = [TEXT[i : i + 3] for i in range(0, len(TEXT), 3)] * 4
    body = b"".join([*text_chunks(*deltas), *ending()])
    # 7-byte HTTP chunks cut multi-byte characters and data lines anywhere.
    steps = [body[i : i + 7] for i in range(0, len(body), 7)]
    events = await run(steps)
    assert text_of(events) == TEXT * 4
    assert types(events) == [
        "start",
        "start-step",
        "text-start",
        *["text-delta"] * len(deltas),
        "text-end",
        "finish-step",
        "finish",
    ]
    assert events[0] == {"type": "start", "messageId": "chatcmpl-test"}
    assert {e["id"] for e in of_type(events, "text-delta")} == {"text-0"}
    assert finish_of(events)["finishReason"] == "stop"


async def test_ten_thousand_deltas() -> None:
    lines = [chunk({"content": f"w{i} "}) for i in range(10_000)]
    # Sent in batches, as a busy server's writes arrive.
    steps: list[Step] = [role_chunk()]
    steps += [b"".join(lines[i : i + 250]) for i in range(0, len(lines), 250)]
    events = await run([*steps, *ending()])
    assert len(of_type(events, "text-delta")) == 10_000
    assert text_of(events) == "".join(f"w{i} " for i in range(10_000))
    assert finish_of(events)["usage"]["totalTokens"] == 18


@pytest.mark.parametrize("field", ["reasoning_content", "reasoning"])
async def test_reasoning_then_text(field: str) -> None:
    steps = [
        role_chunk(),
        chunk({field: "The user "}),
        chunk({field: "greets me."}),
        chunk({"content": "Hi"}),
        chunk({"content": "!"}),
        *ending(),
    ]
    events = await run(steps)
    assert types(events) == [
        "start",
        "start-step",
        "reasoning-start",
        "reasoning-delta",
        "reasoning-delta",
        "reasoning-end",
        "text-start",
        "text-delta",
        "text-delta",
        "text-end",
        "finish-step",
        "finish",
    ]
    assert text_of(events, "reasoning") == "The user greets me."
    assert text_of(events) == "Hi!"
    assert of_type(events, "reasoning-start")[0]["id"] == "reasoning-0"
    assert of_type(events, "text-start")[0]["id"] == "text-0"


async def test_refusal_text_is_delivered_as_text() -> None:
    events = await run([role_chunk(), chunk({"refusal": "I can't help with that."}), *ending()])
    assert text_of(events) == "I can't help with that."


async def test_a_tool_call_with_fragmented_arguments() -> None:
    steps = [
        role_chunk(),
        chunk({"content": "Let me look."}),
        tool_start(0, "call_abc", "get_weather"),
        tool_arguments(0, '{"ci'),
        tool_arguments(0, 'ty": "Pa'),
        tool_arguments(0, 'ris"}'),
        *ending("tool_calls"),
    ]
    events = await run(steps)
    assert types(events) == [
        "start",
        "start-step",
        "text-start",
        "text-delta",
        "text-end",
        "tool-input-start",
        "tool-input-delta",
        "tool-input-delta",
        "tool-input-delta",
        "tool-input-available",
        "finish-step",
        "finish",
    ]
    assert of_type(events, "tool-input-start") == [
        {"type": "tool-input-start", "toolCallId": "call_abc", "toolName": "get_weather"}
    ]
    assert [e["inputTextDelta"] for e in of_type(events, "tool-input-delta")] == [
        '{"ci',
        'ty": "Pa',
        'ris"}',
    ]
    assert of_type(events, "tool-input-available") == [
        {
            "type": "tool-input-available",
            "toolCallId": "call_abc",
            "toolName": "get_weather",
            "input": {"city": "Paris"},
        }
    ]
    assert finish_of(events)["finishReason"] == "tool-calls"


async def test_parallel_tool_calls_are_kept_apart_by_index() -> None:
    steps = [
        role_chunk(),
        tool_start(0, "call_0", "get_weather"),
        tool_arguments(0, '{"city":'),
        tool_start(1, "call_1", "get_time"),
        tool_arguments(1, '{"zone":'),
        tool_arguments(0, ' "Paris"}'),
        tool_arguments(1, ' "CET"}'),
        *ending("tool_calls"),
    ]
    events = await run(steps)
    deltas: dict[str, str] = {}
    for event in of_type(events, "tool-input-delta"):
        deltas[event["toolCallId"]] = deltas.get(event["toolCallId"], "") + event["inputTextDelta"]
    assert deltas == {"call_0": '{"city": "Paris"}', "call_1": '{"zone": "CET"}'}
    assert [
        (e["toolCallId"], e["toolName"], e["input"])
        for e in of_type(events, "tool-input-available")
    ] == [
        ("call_0", "get_weather", {"city": "Paris"}),
        ("call_1", "get_time", {"zone": "CET"}),
    ]


async def test_whole_tool_calls_without_index_are_kept_apart() -> None:
    # Some OpenAI-compatible servers send each call whole, without an index.
    calls = [
        {"id": "a", "type": "function", "function": {"name": "f", "arguments": '{"n": 1}'}},
        {"id": "b", "type": "function", "function": {"name": "f", "arguments": '{"n": 2}'}},
    ]
    steps = [role_chunk(), chunk({"tool_calls": calls[:1]}), chunk({"tool_calls": calls[1:]})]
    events = await run([*steps, *ending("tool_calls")])
    assert [(e["toolCallId"], e["input"]) for e in of_type(events, "tool-input-available")] == [
        ("a", {"n": 1}),
        ("b", {"n": 2}),
    ]


@pytest.mark.parametrize(
    ("arguments", "reason"),
    [
        ('{"city": "Par', "Unterminated string"),
        ('{"n": NaN}', "NaN is not JSON"),
        ("[1, 2] trailing", "Extra data"),
        ('{"n": 9007199254740993}', "safe"),
    ],
)
async def test_invalid_tool_arguments_become_tool_input_error(arguments: str, reason: str) -> None:
    steps = [role_chunk(), tool_start(0, "call_x", "f"), tool_arguments(0, arguments)]
    events = await run([*steps, *ending("tool_calls")])
    [error] = of_type(events, "tool-input-error")
    assert error["toolCallId"] == "call_x" and error["toolName"] == "f"
    assert error["input"] == arguments
    assert error["errorText"].startswith("the tool arguments are not valid JSON")
    assert reason in error["errorText"]
    assert not of_type(events, "tool-input-available")
    assert finish_of(events)["finishReason"] == "tool-calls"


async def test_empty_tool_arguments_are_an_empty_object() -> None:
    events = await run([role_chunk(), tool_start(0, "call_y", "now"), *ending("tool_calls")])
    assert of_type(events, "tool-input-available")[0]["input"] == {}
    assert not of_type(events, "tool-input-delta")


@pytest.mark.parametrize(
    ("usage", "expected"),
    [
        (
            USAGE,
            {
                "inputTokens": 11,
                "outputTokens": 7,
                "totalTokens": 18,
                "cachedInputTokens": 3,
                "reasoningTokens": 2,
            },
        ),
        (
            {"prompt_tokens": 5, "completion_tokens": 2, "total_tokens": 7},
            {"inputTokens": 5, "outputTokens": 2, "totalTokens": 7},
        ),
        (
            {
                "prompt_tokens": 5,
                "completion_tokens": 2,
                "total_tokens": 7,
                "prompt_tokens_details": None,
                "completion_tokens_details": {"reasoning_tokens": None},
            },
            {"inputTokens": 5, "outputTokens": 2, "totalTokens": 7},
        ),
    ],
    ids=["with-details", "without-details", "null-details"],
)
async def test_usage_on_finish(usage: Mapping[str, Any], expected: Mapping[str, int]) -> None:
    events = await run([*text_chunks("Hi"), *ending(usage=usage)])
    assert finish_of(events)["usage"] == expected


async def test_no_usage_chunk_means_no_usage() -> None:
    events = await run([*text_chunks("Hi"), *ending(usage=None)])
    assert "usage" not in finish_of(events)


async def test_usage_on_the_finish_chunk_itself() -> None:
    # Some OpenAI-compatible servers put usage on the last choice chunk.
    steps = [*text_chunks("Hi"), chunk({}, "stop", usage={"prompt_tokens": 1}), DONE]
    assert finish_of(await run(steps))["usage"] == {"inputTokens": 1}


@pytest.mark.parametrize(
    ("reason", "expected"),
    [
        ("stop", "stop"),
        ("length", "length"),
        ("tool_calls", "tool-calls"),
        ("function_call", "tool-calls"),
        ("content_filter", "content-filter"),
        ("something_new", "other"),
    ],
)
async def test_finish_reasons(reason: str, expected: str) -> None:
    events = await run([*text_chunks("Hi"), *ending(reason)])
    assert finish_of(events)["finishReason"] == expected
    assert types(events)[-2:] == ["finish-step", "finish"]


async def test_stop_with_tool_calls_is_reported_as_tool_calls() -> None:
    # OpenAI says tool_calls; some compatible servers say stop.
    events = await run(
        [role_chunk(), tool_start(0, "c", "f"), tool_arguments(0, "{}"), *ending("stop")]
    )
    assert finish_of(events)["finishReason"] == "tool-calls"


async def test_a_clean_end_after_finish_reason_without_done_is_accepted() -> None:
    events = await run([*text_chunks("Hi"), chunk({}, "stop"), chunk(usage=USAGE, choices=False)])
    assert text_of(events) == "Hi"
    assert finish_of(events)["usage"]["totalTokens"] == 18


class TestStreamChecks(StreamChecks):
    headers: ClassVar[Mapping[str, str]] = SSE_HEADERS
    answer: ClassVar[Sequence[Step]] = [*text_chunks("Hi"), *ending()]
    answer_text: ClassVar[str] = "Hi"

    def serve_adapter(
        self, handler: Callable[[Request], Response]
    ) -> AbstractAsyncContextManager[tuple[FakeServer, AIChatAdapter]]:
        return openai_adapter(handler)


# --- the request ----------------------------------------------------------------------------

PDF = "data:application/pdf;base64,JVBERi0xLjQK"
PNG = "data:image/png;base64,iVBORw0KGgo="

RICH_REQUEST: Mapping[str, Any] = {
    "messages": [
        {"id": "s", "role": "system", "parts": [{"type": "text", "text": "Be brief."}]},
        {
            "id": "u1",
            "role": "user",
            "parts": [
                {"type": "text", "text": "What is in these?"},
                {"type": "file", "mediaType": "image/jpeg", "url": "https://example.com/a.jpg"},
                {"type": "file", "mediaType": "image/png", "url": PNG},
                {"type": "file", "mediaType": "application/pdf", "url": PDF, "filename": "r.pdf"},
                {"type": "file", "mediaType": "application/pdf", "url": PDF},
            ],
        },
        {
            "id": "a1",
            "role": "assistant",
            "parts": [
                {"type": "text", "text": "Checking the weather."},
                {
                    "type": "tool-call",
                    "toolCallId": "call_1",
                    "toolName": "get_weather",
                    "input": {"city": "Zürich"},
                },
                {"type": "tool-call", "toolCallId": "call_2", "toolName": "get_time", "input": {}},
            ],
        },
        {
            "id": "t1",
            "role": "tool",
            "parts": [
                {
                    "type": "tool-result",
                    "toolCallId": "call_1",
                    "toolName": "get_weather",
                    "output": {"temp": 21.5, "sky": "clear"},
                },
                {
                    "type": "tool-result",
                    "toolCallId": "call_2",
                    "toolName": "get_time",
                    "output": "12:00",
                    "isError": False,
                },
            ],
        },
        {"id": "a2", "role": "assistant", "parts": [{"type": "text", "text": "Sunny, noon."}]},
        {"id": "u2", "role": "user", "parts": [{"type": "text", "text": "Thanks"}]},
    ],
    "tools": [
        {
            "name": "get_weather",
            "description": "Weather for a city",
            "inputSchema": {"type": "object", "properties": {"city": {"type": "string"}}},
        },
        {"name": "get_time", "inputSchema": {"type": "object"}},
    ],
    "parameters": {
        "model": "gpt-other",
        "temperature": 0.2,
        "topP": 0.9,
        "maxOutputTokens": 512,
        "stopSequences": ["\n\n", "END"],
        "seed": 7,
        "presencePenalty": 0.5,
        "frequencyPenalty": -0.5,
        "toolChoice": {"type": "tool", "toolName": "get_weather"},
        "providerOptions": {
            "openai": {
                "user": "user-42",
                "reasoning_effort": "low",
                "parallel_tool_calls": False,
                "stream_options": {"include_obfuscation": False},
            },
            "anthropic": {"ignored": True},
        },
    },
}

RICH_BODY = {
    "model": "gpt-other",
    "messages": [
        {"role": "system", "content": "Be brief."},
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "What is in these?"},
                {"type": "image_url", "image_url": {"url": "https://example.com/a.jpg"}},
                {"type": "image_url", "image_url": {"url": PNG}},
                {"type": "file", "file": {"filename": "r.pdf", "file_data": PDF}},
                {"type": "file", "file": {"filename": "part-4.pdf", "file_data": PDF}},
            ],
        },
        {
            "role": "assistant",
            "content": "Checking the weather.",
            "tool_calls": [
                {
                    "id": "call_1",
                    "type": "function",
                    "function": {"name": "get_weather", "arguments": '{"city":"Zürich"}'},
                },
                {
                    "id": "call_2",
                    "type": "function",
                    "function": {"name": "get_time", "arguments": "{}"},
                },
            ],
        },
        {"role": "tool", "tool_call_id": "call_1", "content": '{"temp":21.5,"sky":"clear"}'},
        {"role": "tool", "tool_call_id": "call_2", "content": "12:00"},
        {"role": "assistant", "content": "Sunny, noon."},
        {"role": "user", "content": "Thanks"},
    ],
    "tools": [
        {
            "type": "function",
            "function": {
                "name": "get_weather",
                "description": "Weather for a city",
                "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
            },
        },
        {"type": "function", "function": {"name": "get_time", "parameters": {"type": "object"}}},
    ],
    "tool_choice": {"type": "function", "function": {"name": "get_weather"}},
    "temperature": 0.2,
    "top_p": 0.9,
    "max_completion_tokens": 512,
    "stop": ["\n\n", "END"],
    "seed": 7,
    "presence_penalty": 0.5,
    "frequency_penalty": -0.5,
    "stream": True,
    "stream_options": {"include_obfuscation": False, "include_usage": True},
    "user": "user-42",
    "reasoning_effort": "low",
    "parallel_tool_calls": False,
}


async def test_request_mapping() -> None:
    async with openai_adapter(streaming([*text_chunks("ok"), *ending()])) as (server, adapter):
        await collect(adapter, RICH_REQUEST)
    [request] = server.requests
    assert (request.method, request.path) == ("POST", "/v1/chat/completions")
    assert request.headers["authorization"] == "Bearer test"
    assert request.json() == RICH_BODY


async def test_minimal_request_and_the_adapter_model() -> None:
    async with openai_adapter(streaming([*text_chunks("ok"), *ending()])) as (server, adapter):
        await collect(adapter)
    assert server.requests[0].json() == {
        "model": MODEL,
        "messages": [{"role": "user", "content": "Hello"}],
        "stream": True,
        "stream_options": {"include_usage": True},
    }


@pytest.mark.parametrize(
    ("choice", "expected"),
    [
        ("auto", "auto"),
        ("none", "none"),
        ("required", "required"),
        ({"type": "tool", "toolName": "f"}, {"type": "function", "function": {"name": "f"}}),
    ],
)
async def test_tool_choice(choice: object, expected: object) -> None:
    request = {
        **HELLO,
        "tools": [{"name": "f", "inputSchema": {"type": "object"}}],
        "parameters": {"toolChoice": choice},
    }
    async with openai_adapter(streaming([*text_chunks("ok"), *ending()])) as (server, adapter):
        await collect(adapter, request)
    assert server.requests[0].json()["tool_choice"] == expected


@pytest.mark.parametrize("choice", ["auto", "none"])
async def test_tool_choice_without_tools_is_left_out(choice: str) -> None:
    # It means what no tool_choice means, and the API rejects tool_choice without tools.
    async with openai_adapter(streaming([*text_chunks("ok"), *ending()])) as (server, adapter):
        await collect(adapter, {**HELLO, "parameters": {"toolChoice": choice}})
    body = server.requests[0].json()
    assert "tool_choice" not in body and "tools" not in body


async def test_default_parameters_are_merged_under_the_request_ones() -> None:
    defaults = {
        "temperature": 0.1,
        "seed": 1,
        "providerOptions": {"openai": {"user": "default-user", "store": False}},
    }
    request = {
        **HELLO,
        "parameters": {"seed": 2, "providerOptions": {"openai": {"user": "request-user"}}},
    }
    steps = [*text_chunks("ok"), *ending()]
    async with openai_adapter(streaming(steps), parameters=defaults) as (server, adapter):
        await collect(adapter, request)
    body = server.requests[0].json()
    assert (body["temperature"], body["seed"]) == (0.1, 2)
    assert (body["user"], body["store"]) == ("request-user", False)


async def test_reasoning_parts_can_be_omitted_explicitly() -> None:
    request = {
        "messages": [
            *HELLO["messages"],
            {
                "id": "a",
                "role": "assistant",
                "parts": [{"type": "reasoning", "text": "hmm"}, {"type": "text", "text": "Hi"}],
            },
            {"id": "u2", "role": "user", "parts": [{"type": "text", "text": "Again"}]},
        ]
    }
    steps = [*text_chunks("ok"), *ending()]
    async with openai_adapter(streaming(steps), reasoning_parts="omit") as (server, adapter):
        await collect(adapter, request)
    assert server.requests[0].json()["messages"][1] == {"role": "assistant", "content": "Hi"}


UNSUPPORTED = [
    pytest.param(
        with_message({"type": "data-weather", "data": {"t": 1}}),
        "$.messages[1].parts[0]",
        "data-weather",
        id="user-data-part",
    ),
    pytest.param(
        with_message(
            {"type": "text", "text": "a"}, {"type": "data-x", "data": 1}, role="assistant"
        ),
        "$.messages[1].parts[1]",
        "data-x",
        id="assistant-data-part",
    ),
    pytest.param(
        with_message({"type": "reasoning", "text": "hmm"}, role="assistant"),
        "$.messages[1].parts[0]",
        'reasoning_parts="omit"',
        id="assistant-reasoning",
    ),
    pytest.param(
        with_message({"type": "file", "mediaType": "image/png", "url": PNG}, role="assistant"),
        "$.messages[1].parts[0]",
        "file parts in assistant messages",
        id="assistant-file",
    ),
    pytest.param(
        with_message(
            {"type": "file", "mediaType": "audio/wav", "url": "data:audio/wav;base64,AA=="}
        ),
        "$.messages[1].parts[0].mediaType",
        "audio/wav",
        id="audio-file",
    ),
    pytest.param(
        with_message({"type": "file", "mediaType": "application/pdf", "url": "https://x/a.pdf"}),
        "$.messages[1].parts[0].url",
        "data: URL",
        id="pdf-by-url",
    ),
    pytest.param(with_parameters(topK=40), "$.parameters.topK", "top_k", id="topK"),
    pytest.param(with_parameters(mood="happy"), "$.parameters.mood", "unknown", id="unknown"),
    pytest.param(
        with_parameters(providerOptions={"openai": {"temperature": 1}}),
        "$.parameters.providerOptions.openai.temperature",
        "parameters.temperature",
        id="options-shadowing-a-parameter",
    ),
    pytest.param(
        with_parameters(providerOptions={"openai": {"n": 2}}),
        "$.parameters.providerOptions.openai.n",
        "one answer",
        id="options-n",
    ),
    pytest.param(
        with_parameters(providerOptions={"openai": {"stream": False}}),
        "$.parameters.providerOptions.openai.stream",
        "always streams",
        id="options-stream",
    ),
    pytest.param(
        with_parameters(providerOptions={"openai": {"stream_options": {"include_usage": False}}}),
        "$.parameters.providerOptions.openai.stream_options.include_usage",
        "include_usage",
        id="options-no-usage",
    ),
]


@pytest.mark.parametrize(("request_", "path", "words"), UNSUPPORTED)
async def test_unsupported_input_raises_before_any_request(
    request_: Mapping[str, Any], path: str, words: str
) -> None:
    error, events, server = await failure(streaming(ending()), ValidationError, request_)
    assert error.path == path
    assert words in error.reason
    assert events == []
    assert server.connections == 0 and server.requests == []


# --- truncation and broken streams ------------------------------------------------------------


@pytest.mark.parametrize(
    ("steps", "where"),
    [
        pytest.param([*text_chunks("Hel", "lo")], "the response body ended", id="body-ends"),
        pytest.param([*text_chunks("Hel", "lo"), DONE], "[DONE] came", id="done-without-finish"),
        pytest.param([], "the response body ended", id="empty-body"),
        pytest.param(
            [*text_chunks("Hi"), chunk(usage=USAGE, choices=False), DONE],
            "[DONE] came",
            id="usage-without-finish",
        ),
    ],
)
async def test_truncation_is_an_error(steps: Sequence[Step], where: str) -> None:
    error, events, _server = await failure(streaming(steps), TruncatedStreamError)
    assert isinstance(error, ProviderError)
    assert where in str(error) and "finish_reason" in str(error)
    assert error.provider == "openai" and error.status is None
    assert error.request_id == REQUEST_ID
    assert "finish" not in types(events)


@pytest.mark.parametrize(
    ("fault", "cause"),
    [("drop", httpx2.RemoteProtocolError), ("reset", httpx2.TransportError)],
)
async def test_a_broken_connection_is_a_provider_error(
    fault: Step, cause: type[BaseException]
) -> None:
    steps: list[Step] = [*text_chunks("one ", "two ", "three "), 0.01, fault]
    error, events, _server = await failure(streaming(steps), ProviderError)
    assert type(error) is ProviderError
    assert isinstance(error.__cause__, cause)
    assert "mid-answer" in error.detail
    assert error.request_id == REQUEST_ID and error.status is None
    assert text_of(events) == "one two three "


async def test_a_malformed_data_line_is_a_provider_error() -> None:
    steps = [*text_chunks("Hi"), b"data: {not json\n\n", *ending()]
    error, events, _server = await failure(streaming(steps), ProviderError)
    assert type(error) is ProviderError
    assert isinstance(error.__cause__, json.JSONDecodeError)
    assert "malformed data line" in error.detail and "{not json" in error.detail
    assert text_of(events) == "Hi"


async def test_an_error_object_in_the_stream_is_a_provider_error() -> None:
    failed = {
        "error": {
            "message": "The server had an error.",
            "type": "server_error",
            "param": None,
            "code": None,
        }
    }
    steps = [*text_chunks("Hi"), sse(failed)]
    error, _events, _server = await failure(streaming(steps), ProviderError)
    assert type(error) is ProviderError
    assert error.error_type == "server_error"
    assert error.status is None and error.request_id == REQUEST_ID
    assert "The server had an error." in str(error)


@pytest.mark.parametrize(
    ("body", "reason"),
    [
        (b"data: {}\n\ndata: [DO", "middle of a line"),
        (b"data: \xff\xfe\n\n", "not valid UTF-8"),
    ],
)
async def test_sse_format_errors_pass_through(body: bytes, reason: str) -> None:
    error, _events, _server = await failure(streaming([body]), StreamFormatError)
    assert reason in error.reason


def json_error(status: int, error: Mapping[str, Any], headers: Mapping[str, str]) -> Response:
    body = json.dumps({"error": error}).encode()
    return Response(
        status, {"content-type": "application/json", "x-request-id": REQUEST_ID, **headers}, [body]
    )


@pytest.mark.parametrize(
    ("status", "error", "headers", "error_type", "retry_after", "hint"),
    [
        (
            401,
            {
                "message": "Incorrect API key provided.",
                "type": "invalid_request_error",
                "code": "invalid_api_key",
            },
            {},
            "invalid_request_error",
            None,
            "OPENAI_API_KEY",
        ),
        (
            404,
            {
                "message": "The model does not exist.",
                "type": "invalid_request_error",
                "code": "model_not_found",
            },
            {},
            "invalid_request_error",
            None,
            "model name",
        ),
        (
            429,
            {"message": "Rate limit reached.", "type": "requests", "code": "rate_limit_exceeded"},
            {"retry-after": "7"},
            "requests",
            7.0,
            "rate limited",
        ),
        (
            500,
            {"message": "Internal error.", "type": "server_error"},
            {},
            "server_error",
            None,
            "retry later",
        ),
        (
            503,
            {"message": "Overloaded.", "code": "overloaded"},
            {"retry-after-ms": "1500", "retry-after": "9"},
            "overloaded",
            1.5,
            "retry later",
        ),
    ],
)
async def test_http_errors(
    status: int,
    error: Mapping[str, Any],
    headers: Mapping[str, str],
    error_type: str,
    retry_after: float | None,
    hint: str,
) -> None:
    raised, events, server = await failure(
        lambda request: json_error(status, error, headers), ProviderError
    )
    assert type(raised) is ProviderError
    assert isinstance(raised.__cause__, openai.APIStatusError)
    assert (raised.provider, raised.status, raised.error_type) == ("openai", status, error_type)
    assert raised.request_id == REQUEST_ID
    assert raised.retry_after == retry_after
    assert error["message"] in str(raised) and hint in str(raised)
    assert REQUEST_ID in str(raised)
    assert events == []
    assert len(server.requests) == 1  # max_retries=0: no retry hides the status


@pytest.mark.parametrize(
    ("headers", "expected"),
    [
        ({"retry-after": "7"}, 7.0),
        ({"retry-after": "0.25"}, 0.25),
        ({"retry-after-ms": "250", "retry-after": "7"}, 0.25),
        ({"retry-after-ms": "soon", "retry-after": "7"}, 7.0),
        ({"retry-after": "Wed, 21 Oct 2015 07:28:00 GMT"}, 0.0),  # a date in the past
        ({"retry-after": "-3"}, None),
        ({"retry-after": "later"}, None),
        ({}, None),
    ],
)
def test_retry_after_parsing(headers: dict[str, str], expected: float | None) -> None:
    assert retry_after(httpx2.Headers(headers)) == expected


def test_retry_after_as_a_future_date() -> None:
    when = email.utils.formatdate(time.time() + 120, usegmt=True)
    seconds = retry_after(httpx2.Headers({"retry-after": when}))
    assert seconds is not None and 100 < seconds <= 120


async def test_a_refused_connection_is_a_provider_error() -> None:
    listener = await anyio.create_tcp_listener(local_host="127.0.0.1")
    port = listener.extra(SocketAttribute.local_port)
    await listener.aclose()
    base_url = f"http://127.0.0.1:{port}/v1"
    async with sdk_client(base_url) as client:
        adapter = OpenAIChatAdapter(client, model=MODEL)
        with anyio.fail_after(HANG_GUARD), pytest.raises(ProviderError) as caught:
            await collect(adapter)
    assert isinstance(caught.value.__cause__, openai.APIConnectionError)
    assert "could not reach" in str(caught.value) and caught.value.status is None


# --- stopping releases the connection -------------------------------------------------------

SLOW: list[Step] = [*text_chunks("one ", "two "), "hang"]


class TestReleaseOnStop(ReleaseOnStop):
    slow: ClassVar[Sequence[Step]] = SLOW
    headers: ClassVar[Mapping[str, str]] = SSE_HEADERS

    def serve_adapter(
        self, handler: Callable[[Request], Response]
    ) -> AbstractAsyncContextManager[tuple[FakeServer, AIChatAdapter]]:
        return openai_adapter(handler)


# --- construction and ownership -------------------------------------------------------------


class TestCallerOwnedClient(CallerOwnedClient):
    answer: ClassVar[Sequence[Step]] = [*text_chunks("ok"), *ending()]
    headers: ClassVar[Mapping[str, str]] = SSE_HEADERS

    def owned(self, **settings: Any) -> OpenAIChatAdapter:
        return OpenAIChatAdapter(model=MODEL, **settings)

    def callers_client(self) -> openai.AsyncOpenAI:
        return openai.AsyncOpenAI(api_key="k")

    def adapter_for(self, client: openai.AsyncOpenAI) -> OpenAIChatAdapter:
        return OpenAIChatAdapter(client, model=MODEL)

    def base_url(self, server: FakeServer) -> str:
        return server.url("/v1")


def test_the_owned_client_reads_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-from-env")
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")
    adapter = OpenAIChatAdapter(model=MODEL)
    assert adapter.client.api_key == "sk-from-env"
    assert str(adapter.client.base_url) == "http://127.0.0.1:9/v1/"


@pytest.mark.parametrize(
    ("kwargs", "parameter", "expected"),
    [
        ({"api": "completions"}, "api", '"chat" (Chat Completions) or "responses"'),
        ({"model": ""}, "model", "non-empty"),
        ({"reasoning_parts": "keep"}, "reasoning_parts", '"omit"'),
        ({"parameters": {"topK": 3}}, "parameters", "top_k"),
        ({"parameters": {"toolChoice": "auto"}}, "parameters", "toolChoice"),
        ({"parameters": {"temperature": "hot"}}, "parameters", "temperature"),
    ],
)
def test_invalid_construction(kwargs: dict[str, Any], parameter: str, expected: str) -> None:
    arguments: dict[str, Any] = {"model": MODEL, "api_key": "k", **kwargs}
    with pytest.raises(ConfigurationError) as caught:
        OpenAIChatAdapter(**arguments)
    assert caught.value.parameter == parameter
    assert expected in caught.value.expected


def test_settings_with_a_client_are_refused() -> None:
    client = openai.AsyncOpenAI(api_key="k")
    with pytest.raises(ConfigurationError, match="no client settings"):
        OpenAIChatAdapter(client, model=MODEL, timeout=3)
    with pytest.raises(ConfigurationError, match="AsyncOpenAI"):
        OpenAIChatAdapter(cast(Any, openai.OpenAI(api_key="k")), model=MODEL)


def test_a_missing_api_key_is_a_configuration_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_ADMIN_KEY", raising=False)
    with pytest.raises(ConfigurationError, match="OPENAI_API_KEY") as caught:
        OpenAIChatAdapter(model=MODEL)
    assert caught.value.parameter == "api_key"


class TestSDKImports(SDKImports):
    extra: ClassVar[str] = "openai"
    sdk: ClassVar[str] = "openai"
    loaded: ClassVar[str] = "m.split('.')[0] in ('openai', 'httpx2')"


# --- the conformance kit --------------------------------------------------------------------


def conformance_handler(request: Request) -> Response:
    """Model "slow": a few chunks, then nothing until the client hangs up."""
    if request.json()["model"] == "slow":
        return Response(200, SSE_HEADERS, SLOW)
    return Response(200, SSE_HEADERS, [*text_chunks("Hello", " there"), *ending()])


class TestOpenAIChatConformance(ServedConformance):
    def handler(self, request: Request) -> Response:
        return conformance_handler(request)

    def client(self, server: FakeServer) -> openai.AsyncOpenAI:
        return sdk_client(server.url("/v1"))

    def make_adapter(
        self, client: openai.AsyncOpenAI, server: FakeServer, *, slow: bool
    ) -> OpenAIChatAdapter:
        return OpenAIChatAdapter(client, model="slow" if slow else MODEL)


# --- the example ----------------------------------------------------------------------------


@pytest.mark.slow
async def test_the_example_streams_from_an_openai_compatible_server() -> None:
    steps = [
        role_chunk(),
        chunk({"reasoning_content": "Rayleigh."}),
        *text_chunks("Blue ", "light."),
        *ending(),
    ]
    async with serve(streaming(steps)) as server:
        result = await run_example(
            "examples/openai_chat.py",
            *("--base-url", server.url("/v1"), "--model", "llama3.2", "--system", "Be brief."),
            "Why is the sky blue?",
            env_prefixes=("OPENAI_",),
        )
    assert result.returncode == 0, result.stderr.decode()
    assert result.stdout.decode().splitlines() == [
        "[Rayleigh.]",
        "",
        "Blue light.",
        '[finish: stop · usage: {"inputTokens": 11, "outputTokens": 7, "totalTokens": 18, '
        '"cachedInputTokens": 3, "reasoningTokens": 2}]',
    ]
    body = server.requests[0].json()
    assert body["model"] == "llama3.2"
    assert body["messages"][0] == {"role": "system", "content": "Be brief."}
