"""The Anthropic Messages adapter, through the genuine anthropic SDK over loopback HTTP.

Every test drives ``anthropic.AsyncAnthropic`` against :mod:`tests.adapters._support.fake_server`,
which sends the Messages wire format (``event:`` names plus ``data:`` objects, raw UTF-8,
``ping`` events, ending with ``message_stop``) with chunked encoding, and records what it
received.
"""

from __future__ import annotations

import json
from collections.abc import AsyncGenerator, Callable, Mapping, Sequence
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from pathlib import Path
from typing import Any, ClassVar, cast

import anthropic
import anyio
import httpx2
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
from ai_chat.adapters.anthropic import DEFAULT_MAX_TOKENS, AnthropicChatAdapter
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

MODEL = "claude-test"
MESSAGE_ID = "msg_01test"
REQUEST_ID = "req_011test"
SSE_HEADERS = {"content-type": "text/event-stream; charset=utf-8", "request-id": REQUEST_ID}
START_USAGE = {
    "input_tokens": 20,
    "cache_creation_input_tokens": 4,
    "cache_read_input_tokens": 6,
    "output_tokens": 1,
}
FINAL_USAGE = {"output_tokens": 9}


# --- the wire format ----------------------------------------------------------------------


def event(kind: str, **fields: Any) -> bytes:
    """One Messages stream event, shaped as Anthropic sends it (name and typed data)."""
    return sse({"type": kind, **fields}, event=kind)


def message_start(usage: Mapping[str, Any] = START_USAGE) -> bytes:
    message: dict[str, Any] = {
        "id": MESSAGE_ID,
        "type": "message",
        "role": "assistant",
        "model": MODEL,
        "content": [],
        "stop_reason": None,
        "stop_sequence": None,
        "usage": dict(usage),
    }
    return event("message_start", message=message)


PING = event("ping")


def block_start(index: int, block: Mapping[str, Any]) -> bytes:
    return event("content_block_start", index=index, content_block=dict(block))


def delta(index: int, **fields: Any) -> bytes:
    return event("content_block_delta", index=index, delta=fields)


def block_stop(index: int) -> bytes:
    return event("content_block_stop", index=index)


def text_block(index: int, *deltas: str) -> list[bytes]:
    return [
        block_start(index, {"type": "text", "text": ""}),
        *(delta(index, type="text_delta", text=d) for d in deltas),
        block_stop(index),
    ]


def thinking_block(index: int, *deltas: str, signature: str = "sig-abc") -> list[bytes]:
    return [
        block_start(index, {"type": "thinking", "thinking": "", "signature": ""}),
        *(delta(index, type="thinking_delta", thinking=d) for d in deltas),
        delta(index, type="signature_delta", signature=signature),
        block_stop(index),
    ]


def tool_block(index: int, call_id: str, name: str, *fragments: str) -> list[bytes]:
    return [
        block_start(index, {"type": "tool_use", "id": call_id, "name": name, "input": {}}),
        delta(index, type="input_json_delta", partial_json=""),
        *(delta(index, type="input_json_delta", partial_json=f) for f in fragments),
        block_stop(index),
    ]


def ending(stop_reason: str = "end_turn", usage: Mapping[str, Any] = FINAL_USAGE) -> list[bytes]:
    return [
        event(
            "message_delta",
            delta={"stop_reason": stop_reason, "stop_sequence": None},
            usage=dict(usage),
        ),
        event("message_stop"),
    ]


def text_answer(*deltas: str) -> list[bytes]:
    return [message_start(), *text_block(0, *deltas), *ending()]


def streaming(steps: Sequence[Step]) -> Callable[[Request], Response]:
    return lambda request: Response(200, SSE_HEADERS, steps)


# --- running the adapter --------------------------------------------------------------------


def sdk_client(base_url: str) -> anthropic.AsyncAnthropic:
    """The genuine SDK client, as a test would configure it (no retries, explicit key)."""
    http_client = anthropic.DefaultAsyncHttpxClient(verify=TLS)
    return anthropic.AsyncAnthropic(
        base_url=base_url, api_key="test", max_retries=0, http_client=http_client
    )


@asynccontextmanager
async def anthropic_adapter(
    handler: Callable[[Request], Response], **options: Any
) -> AsyncGenerator[tuple[FakeServer, AnthropicChatAdapter]]:
    """A fake server and an adapter whose (caller-owned) SDK client points at it."""
    async with serve(handler) as server, sdk_client(server.url()) as client:
        yield server, AnthropicChatAdapter(client, model=MODEL, **options)


async def run(steps: Sequence[Step], request: Mapping[str, Any] = HELLO) -> list[ChatEvent]:
    return await run_with(anthropic_adapter, streaming(steps), request)


async def failure(
    handler: Callable[[Request], Response],
    expected: type[BaseException],
    request: Mapping[str, Any] = HELLO,
) -> tuple[Any, list[ChatEvent], FakeServer]:
    """The error the stream raised, the events delivered before it, and the server."""
    return await failure_with(anthropic_adapter, handler, expected, request)


# --- streaming ------------------------------------------------------------------------------

pytestmark = pytest.mark.anyio

TEXT = "Grüße aus Köln! 日本語のテキスト 🎉🚀 and plain ASCII, in many small deltas. "


async def test_text_in_many_deltas_with_utf8_split_across_chunks() -> None:
    deltas = [TEXT[i : i + 3] for i in range(0, len(TEXT), 3)] * 4
    body = b"".join(
        [message_start(), block_start(0, {"type": "text", "text": ""}), PING]
        + [delta(0, type="text_delta", text=d) for d in deltas]
        + [block_stop(0), *ending()]
    )
    # 7-byte HTTP chunks cut multi-byte characters and lines anywhere.
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
    assert events[0] == {"type": "start", "messageId": MESSAGE_ID}
    assert {e["id"] for e in of_type(events, "text-delta")} == {"text-0"}
    assert finish_of(events) == {
        "type": "finish",
        "finishReason": "stop",
        # input_tokens + cache reads + cache writes; the message_delta total for output.
        "usage": {"inputTokens": 30, "outputTokens": 9, "totalTokens": 39, "cachedInputTokens": 6},
    }


async def test_ten_thousand_deltas() -> None:
    lines = [delta(0, type="text_delta", text=f"w{i} ") for i in range(10_000)]
    steps: list[Step] = [message_start(), block_start(0, {"type": "text", "text": ""})]
    steps += [b"".join(lines[i : i + 250]) for i in range(0, len(lines), 250)]
    events = await run([*steps, block_stop(0), *ending()])
    assert len(of_type(events, "text-delta")) == 10_000
    assert text_of(events) == "".join(f"w{i} " for i in range(10_000))


async def test_thinking_then_text_carries_the_signature() -> None:
    steps = [
        message_start(),
        *thinking_block(0, "The user ", "greets me.", signature="EqQBCkYI"),
        *text_block(1, "Hi", "!"),
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
    assert of_type(events, "reasoning-end") == [
        {
            "type": "reasoning-end",
            "id": "reasoning-0",
            "providerMetadata": {"anthropic": {"signature": "EqQBCkYI"}},
        }
    ]
    assert of_type(events, "text-start")[0]["id"] == "text-1"


async def test_redacted_thinking_is_a_reasoning_part_with_its_data() -> None:
    steps = [
        message_start(),
        block_start(0, {"type": "redacted_thinking", "data": "EmwKAhgBEgy3va"}),
        block_stop(0),
        *text_block(1, "Done."),
        *ending(),
    ]
    events = await run(steps)
    metadata = {"anthropic": {"redactedData": "EmwKAhgBEgy3va"}}
    assert of_type(events, "reasoning-start") == [
        {"type": "reasoning-start", "id": "reasoning-0", "providerMetadata": metadata}
    ]
    assert of_type(events, "reasoning-end") == [
        {"type": "reasoning-end", "id": "reasoning-0", "providerMetadata": metadata}
    ]
    assert of_type(events, "reasoning-delta") == []


async def test_parallel_tool_calls_with_fragmented_input() -> None:
    steps = [
        message_start(),
        *text_block(0, "Let me look."),
        *tool_block(1, "toolu_1", "get_weather", '{"ci', 'ty": "Pa', 'ris"}'),
        *tool_block(2, "toolu_2", "get_time"),  # no parameters: no fragment at all
        *ending("tool_use"),
    ]
    events = await run(steps)
    assert types(events)[5:] == [
        "tool-input-start",
        "tool-input-delta",
        "tool-input-delta",
        "tool-input-delta",
        "tool-input-available",
        "tool-input-start",
        "tool-input-available",
        "finish-step",
        "finish",
    ]
    assert [e["inputTextDelta"] for e in of_type(events, "tool-input-delta")] == [
        '{"ci',
        'ty": "Pa',
        'ris"}',
    ]
    assert of_type(events, "tool-input-available") == [
        {
            "type": "tool-input-available",
            "toolCallId": "toolu_1",
            "toolName": "get_weather",
            "input": {"city": "Paris"},
        },
        {
            "type": "tool-input-available",
            "toolCallId": "toolu_2",
            "toolName": "get_time",
            "input": {},
        },
    ]
    assert finish_of(events)["finishReason"] == "tool-calls"


async def test_invalid_tool_input_becomes_tool_input_error() -> None:
    steps = [message_start(), *tool_block(0, "toolu_1", "f", '{"a": '), *ending("tool_use")]
    events = await run(steps)
    [error] = of_type(events, "tool-input-error")
    assert error["toolCallId"] == "toolu_1" and error["toolName"] == "f"
    assert error["input"] == '{"a": '
    assert "not valid JSON" in error["errorText"]
    assert of_type(events, "tool-input-available") == []


@pytest.mark.parametrize(
    ("reason", "expected"),
    [
        ("end_turn", "stop"),
        ("stop_sequence", "stop"),
        ("max_tokens", "length"),
        ("model_context_window_exceeded", "length"),
        ("tool_use", "tool-calls"),
        ("refusal", "content-filter"),
        ("pause_turn", "other"),
        ("something_new", "other"),
    ],
)
async def test_stop_reasons(reason: str, expected: str) -> None:
    events = await run([message_start(), *text_block(0, "x"), *ending(reason)])
    assert finish_of(events)["finishReason"] == expected


async def test_message_delta_usage_overwrites_and_is_never_added() -> None:
    usage = {"input_tokens": 20, "output_tokens": 40, "cache_read_input_tokens": 0}
    steps = [
        message_start({"input_tokens": 20, "output_tokens": 1}),
        *text_block(0, "x"),
        event("message_delta", delta={"stop_reason": "end_turn"}, usage={"output_tokens": 5}),
        event("message_delta", delta={}, usage=usage),
        event("message_stop"),
    ]
    events = await run(steps)
    assert finish_of(events)["usage"] == {
        "inputTokens": 20,
        "outputTokens": 40,
        "totalTokens": 60,
        "cachedInputTokens": 0,
    }


async def test_events_without_names_are_dispatched_by_their_type() -> None:
    # A proxy that strips event: lines; the SDK would yield nothing at all.
    steps = [sse(json.loads(line.split(b"data: ", 1)[1])) for line in text_answer("Hi")]
    events = await run(steps)
    assert text_of(events) == "Hi" and finish_of(events)["finishReason"] == "stop"


async def test_an_unknown_content_block_is_a_provider_error() -> None:
    steps = [
        message_start(),
        block_start(0, {"type": "server_tool_use", "id": "srvtoolu_1", "name": "web_search"}),
        *ending(),
    ]
    error, _events, _server = await failure(streaming(steps), ProviderError)
    assert "server_tool_use" in error.detail


class TestStreamChecks(StreamChecks):
    headers: ClassVar[Mapping[str, str]] = SSE_HEADERS
    answer: ClassVar[Sequence[Step]] = text_answer("ok")

    def serve_adapter(
        self, handler: Callable[[Request], Response]
    ) -> AbstractAsyncContextManager[tuple[FakeServer, AIChatAdapter]]:
        return anthropic_adapter(handler)


# --- the request ----------------------------------------------------------------------------

PDF = "data:application/pdf;base64,JVBERi0xLjQK"
PNG = "data:image/png;base64,iVBORw0KGgo="

RICH_REQUEST: Mapping[str, Any] = {
    "messages": [
        {"id": "s1", "role": "system", "parts": [{"type": "text", "text": "Be brief."}]},
        {"id": "s2", "role": "system", "parts": [{"type": "text", "text": "Be kind."}]},
        {
            "id": "u1",
            "role": "user",
            "parts": [
                {"type": "text", "text": "What is in these?"},
                {"type": "file", "mediaType": "image/jpeg", "url": "https://example.com/a.jpg"},
                {"type": "file", "mediaType": "image/png", "url": PNG},
                {"type": "file", "mediaType": "application/pdf", "url": PDF, "filename": "r.pdf"},
                {"type": "file", "mediaType": "application/pdf", "url": "https://x.test/b.pdf"},
            ],
        },
        {
            "id": "a1",
            "role": "assistant",
            "parts": [
                {
                    "type": "reasoning",
                    "text": "They want weather.",
                    "providerMetadata": {"anthropic": {"signature": "sig-1"}},
                },
                {
                    "type": "reasoning",
                    "text": "",
                    "providerMetadata": {"anthropic": {"redactedData": "opaque"}},
                },
                {"type": "text", "text": "Checking the weather."},
                {
                    "type": "tool-call",
                    "toolCallId": "toolu_1",
                    "toolName": "get_weather",
                    "input": {"city": "Zürich"},
                },
                {
                    "type": "tool-call",
                    "toolCallId": "toolu_2",
                    "toolName": "get_time",
                    "input": {},
                },
            ],
        },
        {
            "id": "t1",
            "role": "tool",
            "parts": [
                {
                    "type": "tool-result",
                    "toolCallId": "toolu_1",
                    "toolName": "get_weather",
                    "output": {"temp": 21.5, "sky": "clear"},
                }
            ],
        },
        {
            "id": "t2",
            "role": "tool",
            "parts": [
                {
                    "type": "tool-result",
                    "toolCallId": "toolu_2",
                    "toolName": "get_time",
                    "output": "clock broken",
                    "isError": True,
                }
            ],
        },
        {"id": "a2", "role": "assistant", "parts": [{"type": "text", "text": "Sunny."}]},
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
        "model": "claude-other",
        "temperature": 0.2,
        "topP": 0.9,
        "topK": 40,
        "maxOutputTokens": 512,
        "stopSequences": ["\n\n", "END"],
        "toolChoice": {"type": "tool", "toolName": "get_weather"},
        "providerOptions": {
            "anthropic": {
                "thinking": {"type": "enabled", "budget_tokens": 1024},
                "metadata": {"user_id": "user-42"},
            },
            "openai": {"ignored": True},
        },
    },
}

RICH_BODY: Mapping[str, Any] = {
    "model": "claude-other",
    "max_tokens": 512,
    "system": [{"type": "text", "text": "Be brief."}, {"type": "text", "text": "Be kind."}],
    "messages": [
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "What is in these?"},
                {"type": "image", "source": {"type": "url", "url": "https://example.com/a.jpg"}},
                {
                    "type": "image",
                    "source": {"type": "base64", "media_type": "image/png", "data": "iVBORw0KGgo="},
                },
                {
                    "type": "document",
                    "source": {
                        "type": "base64",
                        "media_type": "application/pdf",
                        "data": "JVBERi0xLjQK",
                    },
                    "title": "r.pdf",
                },
                {"type": "document", "source": {"type": "url", "url": "https://x.test/b.pdf"}},
            ],
        },
        {
            "role": "assistant",
            "content": [
                {"type": "thinking", "thinking": "They want weather.", "signature": "sig-1"},
                {"type": "redacted_thinking", "data": "opaque"},
                {"type": "text", "text": "Checking the weather."},
                {
                    "type": "tool_use",
                    "id": "toolu_1",
                    "name": "get_weather",
                    "input": {"city": "Zürich"},
                },
                {"type": "tool_use", "id": "toolu_2", "name": "get_time", "input": {}},
            ],
        },
        {
            "role": "user",
            "content": [
                {
                    "type": "tool_result",
                    "tool_use_id": "toolu_1",
                    "content": '{"temp":21.5,"sky":"clear"}',
                },
                {
                    "type": "tool_result",
                    "tool_use_id": "toolu_2",
                    "content": "clock broken",
                    "is_error": True,
                },
            ],
        },
        {"role": "assistant", "content": [{"type": "text", "text": "Sunny."}]},
        {"role": "user", "content": [{"type": "text", "text": "Thanks"}]},
    ],
    "tools": [
        {
            "name": "get_weather",
            "description": "Weather for a city",
            "input_schema": {"type": "object", "properties": {"city": {"type": "string"}}},
        },
        {"name": "get_time", "input_schema": {"type": "object"}},
    ],
    "tool_choice": {"type": "tool", "name": "get_weather"},
    "temperature": 0.2,
    "top_p": 0.9,
    "top_k": 40,
    "stop_sequences": ["\n\n", "END"],
    "stream": True,
    "thinking": {"type": "enabled", "budget_tokens": 1024},
    "metadata": {"user_id": "user-42"},
}


async def test_request_mapping() -> None:
    async with anthropic_adapter(streaming(text_answer("ok"))) as (server, adapter):
        await collect(adapter, RICH_REQUEST)
    [request] = server.requests
    assert (request.method, request.path) == ("POST", "/v1/messages")
    assert request.headers["authorization"] == "Bearer test"
    assert "anthropic-version" in request.headers
    assert request.json() == RICH_BODY


async def test_minimal_request_gets_the_default_max_tokens() -> None:
    async with anthropic_adapter(streaming(text_answer("ok"))) as (server, adapter):
        await collect(adapter)
    assert DEFAULT_MAX_TOKENS == 4096
    assert server.requests[0].json() == {
        "model": MODEL,
        "max_tokens": 4096,
        "messages": [{"role": "user", "content": [{"type": "text", "text": "Hello"}]}],
        "stream": True,
    }


@pytest.mark.parametrize(
    ("choice", "expected"),
    [
        ("auto", {"type": "auto"}),
        ("none", {"type": "none"}),
        ("required", {"type": "any"}),
        ({"type": "tool", "toolName": "f"}, {"type": "tool", "name": "f"}),
    ],
)
async def test_tool_choice(choice: object, expected: object) -> None:
    request = {
        **HELLO,
        "tools": [{"name": "f", "inputSchema": {"type": "object"}}],
        "parameters": {"toolChoice": choice},
    }
    async with anthropic_adapter(streaming(text_answer("ok"))) as (server, adapter):
        await collect(adapter, request)
    assert server.requests[0].json()["tool_choice"] == expected


async def test_default_parameters_are_merged_under_the_request_ones() -> None:
    defaults = {
        "temperature": 1.0,
        "maxOutputTokens": 100,
        "providerOptions": {"anthropic": {"metadata": {"user_id": "a"}, "service_tier": "auto"}},
    }
    request = {
        **HELLO,
        "parameters": {
            "temperature": 0.1,
            "providerOptions": {"anthropic": {"metadata": {"user_id": "b"}}},
        },
    }
    steps = text_answer("ok")
    async with anthropic_adapter(streaming(steps), parameters=defaults) as (server, adapter):
        await collect(adapter, request)
    body = server.requests[0].json()
    assert body["temperature"] == 0.1 and body["max_tokens"] == 100
    assert body["metadata"] == {"user_id": "b"} and body["service_tier"] == "auto"


async def test_unsigned_reasoning_can_be_omitted_explicitly() -> None:
    request = {
        "messages": [
            *HELLO["messages"],
            {
                "id": "a1",
                "role": "assistant",
                "parts": [{"type": "reasoning", "text": "hmm"}, {"type": "text", "text": "Hi"}],
            },
        ]
    }
    steps = text_answer("ok")
    async with anthropic_adapter(streaming(steps), reasoning_parts="omit") as (server, adapter):
        await collect(adapter, request)
    assert server.requests[0].json()["messages"][1] == {
        "role": "assistant",
        "content": [{"type": "text", "text": "Hi"}],
    }


UNSUPPORTED = [
    pytest.param(with_parameters(seed=7), "$.parameters.seed", "no seed", id="seed"),
    pytest.param(
        with_parameters(presencePenalty=0.5), "$.parameters.presencePenalty", "no presence"
    ),
    pytest.param(with_parameters(mood="happy"), "$.parameters.mood", "unknown", id="unknown"),
    pytest.param(
        with_parameters(providerOptions={"anthropic": {"max_tokens": 5}}),
        "$.parameters.providerOptions.anthropic.max_tokens",
        "parameters.maxOutputTokens",
        id="options-shadowing-a-parameter",
    ),
    pytest.param(
        with_parameters(providerOptions={"anthropic": {"system": "x"}}),
        "$.parameters.providerOptions.anthropic.system",
        "system messages",
        id="options-system",
    ),
    pytest.param(
        with_message({"type": "text", "text": "late"}, role="system"),
        "$.messages[1].role",
        "start of messages",
        id="late-system-message",
    ),
    pytest.param(
        with_message({"type": "data-weather", "data": {"t": 1}}),
        "$.messages[1].parts[0]",
        "data-weather",
        id="user-data-part",
    ),
    pytest.param(
        with_message({"type": "reasoning", "text": "hmm"}, role="assistant"),
        "$.messages[1].parts[0]",
        'reasoning_parts="omit"',
        id="unsigned-reasoning",
    ),
    pytest.param(
        with_message(
            {
                "type": "reasoning",
                "text": "hmm",
                "providerMetadata": {"anthropic": {"signature": 5}},
            },
            role="assistant",
        ),
        "$.messages[1].parts[0].providerMetadata.anthropic.signature",
        "signature",
        id="bad-signature",
    ),
    pytest.param(
        with_message(
            {"type": "tool-call", "toolCallId": "t", "toolName": "f", "input": [1]},
            role="assistant",
        ),
        "$.messages[1].parts[0].input",
        "object",
        id="non-object-tool-input",
    ),
    pytest.param(
        with_message({"type": "file", "mediaType": "image/png", "url": PNG}, role="assistant"),
        "$.messages[1].parts[0]",
        "file parts in assistant messages",
        id="assistant-file",
    ),
    pytest.param(
        with_message({"type": "file", "mediaType": "audio/wav", "url": "data:audio/wav;base64,A"}),
        "$.messages[1].parts[0].mediaType",
        "audio/wav",
        id="audio-file",
    ),
    pytest.param(
        with_message({"type": "file", "mediaType": "image/png", "url": "data:image/png,raw"}),
        "$.messages[1].parts[0].url",
        "base64",
        id="data-url-not-base64",
    ),
    pytest.param(
        with_message({"type": "file", "mediaType": "image/png", "url": "ftp://x/a.png"}),
        "$.messages[1].parts[0].url",
        "http(s) URL",
        id="ftp-url",
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
    "steps",
    [
        pytest.param([message_start(), *text_block(0, "Hel", "lo")], id="body-ends"),
        pytest.param(
            [message_start(), *text_block(0, "Hi"), ending()[0]], id="message-delta-no-stop"
        ),
        pytest.param([], id="empty-body"),
    ],
)
async def test_truncation_is_an_error(steps: Sequence[Step]) -> None:
    error, events, _server = await failure(streaming(steps), TruncatedStreamError)
    assert isinstance(error, ProviderError)
    assert "message_stop" in str(error)
    assert error.provider == "anthropic" and error.status is None
    assert error.request_id == REQUEST_ID
    assert "finish" not in types(events)


@pytest.mark.parametrize(
    ("fault", "cause"),
    [("drop", httpx2.RemoteProtocolError), ("reset", httpx2.TransportError)],
)
async def test_a_broken_connection_is_a_provider_error(
    fault: Step, cause: type[BaseException]
) -> None:
    steps: list[Step] = [
        message_start(),
        block_start(0, {"type": "text", "text": ""}),
        *(delta(0, type="text_delta", text=w) for w in ("one ", "two ", "three ")),
        0.01,
        fault,
    ]
    error, events, _server = await failure(streaming(steps), ProviderError)
    assert type(error) is ProviderError
    assert isinstance(error.__cause__, cause)
    assert "mid-answer" in error.detail
    assert error.request_id == REQUEST_ID and error.status is None
    assert text_of(events) == "one two three "


async def test_a_malformed_data_line_is_a_provider_error() -> None:
    steps = [
        message_start(),
        *text_block(0, "Hi"),
        b"event: content_block_delta\ndata: {not json\n\n",
        *ending(),
    ]
    error, events, _server = await failure(streaming(steps), ProviderError)
    assert type(error) is ProviderError
    assert isinstance(error.__cause__, json.JSONDecodeError)
    assert "malformed data line" in error.detail and "{not json" in error.detail
    assert text_of(events) == "Hi"


async def test_an_error_event_in_a_200_stream_is_a_provider_error() -> None:
    failed = event(
        "error",
        error={"type": "overloaded_error", "message": "Overloaded"},
        request_id="req_in_stream",
    )
    steps = [message_start(), *text_block(0, "Hi"), failed]
    error, events, _server = await failure(streaming(steps), ProviderError)
    assert type(error) is ProviderError
    assert error.error_type == "overloaded_error"
    assert error.status is None and error.request_id == "req_in_stream"
    assert "Overloaded" in str(error) and "retry later" in str(error)
    assert text_of(events) == "Hi"


@pytest.mark.parametrize(
    ("body", "reason"),
    [
        (b"event: ping\ndata: {}\n\nevent: mess", "middle of a line"),
        (b"data: \xff\xfe\n\n", "not valid UTF-8"),
    ],
)
async def test_sse_format_errors_pass_through(body: bytes, reason: str) -> None:
    error, _events, _server = await failure(streaming([body]), StreamFormatError)
    assert reason in error.reason


def json_error(status: int, kind: str, message: str, headers: Mapping[str, str]) -> Response:
    body = {"type": "error", "error": {"type": kind, "message": message}, "request_id": REQUEST_ID}
    return Response(
        status,
        {"content-type": "application/json", "request-id": REQUEST_ID, **headers},
        [json.dumps(body).encode()],
    )


@pytest.mark.parametrize(
    ("status", "kind", "headers", "retry_after", "hint", "sdk_class"),
    [
        (400, "invalid_request_error", {}, None, "rejected", anthropic.BadRequestError),
        (401, "authentication_error", {}, None, "ANTHROPIC_API_KEY", anthropic.AuthenticationError),
        (403, "permission_error", {}, None, "may not use", anthropic.PermissionDeniedError),
        (404, "not_found_error", {}, None, "model name", anthropic.NotFoundError),
        (
            429,
            "rate_limit_error",
            {"retry-after": "7"},
            7.0,
            "rate limited",
            anthropic.RateLimitError,
        ),
        (500, "api_error", {}, None, "retry later", anthropic.InternalServerError),
        (529, "overloaded_error", {}, None, "overloaded", anthropic.OverloadedError),
    ],
)
async def test_http_errors(
    status: int,
    kind: str,
    headers: Mapping[str, str],
    retry_after: float | None,
    hint: str,
    sdk_class: type[BaseException],
) -> None:
    raised, events, server = await failure(
        lambda request: json_error(status, kind, "Something specific.", headers), ProviderError
    )
    assert type(raised) is ProviderError
    assert isinstance(raised.__cause__, sdk_class)
    assert (raised.provider, raised.status, raised.error_type) == ("anthropic", status, kind)
    assert raised.request_id == REQUEST_ID
    assert raised.retry_after == retry_after
    assert "Something specific." in str(raised) and hint in str(raised)
    assert events == []
    assert len(server.requests) == 1  # max_retries=0: no retry hides the status


async def test_a_refused_connection_is_a_provider_error() -> None:
    listener = await anyio.create_tcp_listener(local_host="127.0.0.1")
    port = listener.extra(SocketAttribute.local_port)
    await listener.aclose()
    async with sdk_client(f"http://127.0.0.1:{port}") as client:
        adapter = AnthropicChatAdapter(client, model=MODEL)
        with anyio.fail_after(HANG_GUARD), pytest.raises(ProviderError) as caught:
            await collect(adapter)
    assert isinstance(caught.value.__cause__, anthropic.APIConnectionError)
    assert "could not reach" in str(caught.value) and caught.value.status is None


# --- stopping releases the connection -------------------------------------------------------

SLOW: list[Step] = [
    message_start(),
    block_start(0, {"type": "text", "text": ""}),
    PING,
    delta(0, type="text_delta", text="one "),
    delta(0, type="text_delta", text="two "),
    "hang",
]


class TestReleaseOnStop(ReleaseOnStop):
    slow: ClassVar[Sequence[Step]] = SLOW
    headers: ClassVar[Mapping[str, str]] = SSE_HEADERS

    def serve_adapter(
        self, handler: Callable[[Request], Response]
    ) -> AbstractAsyncContextManager[tuple[FakeServer, AIChatAdapter]]:
        return anthropic_adapter(handler)


# --- construction and ownership -------------------------------------------------------------


class TestCallerOwnedClient(CallerOwnedClient):
    answer: ClassVar[Sequence[Step]] = text_answer("ok")
    headers: ClassVar[Mapping[str, str]] = SSE_HEADERS

    def owned(self, **settings: Any) -> AnthropicChatAdapter:
        return AnthropicChatAdapter(model=MODEL, **settings)

    def callers_client(self) -> anthropic.AsyncAnthropic:
        return anthropic.AsyncAnthropic(api_key="k")

    def adapter_for(self, client: anthropic.AsyncAnthropic) -> AnthropicChatAdapter:
        return AnthropicChatAdapter(client, model=MODEL)


def test_the_owned_client_reads_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-from-env")
    monkeypatch.setenv("ANTHROPIC_BASE_URL", "http://127.0.0.1:9")
    adapter = AnthropicChatAdapter(model=MODEL)
    assert adapter.client.api_key == "sk-from-env"
    assert str(adapter.client.base_url) == "http://127.0.0.1:9"


@pytest.mark.parametrize(
    ("kwargs", "parameter", "expected"),
    [
        ({"model": ""}, "model", "non-empty"),
        ({"reasoning_parts": "keep"}, "reasoning_parts", '"omit"'),
        ({"parameters": {"seed": 3}}, "parameters", "no seed"),
        ({"parameters": {"toolChoice": "auto"}}, "parameters", "toolChoice"),
        ({"parameters": {"temperature": "hot"}}, "parameters", "temperature"),
    ],
)
def test_invalid_construction(kwargs: dict[str, Any], parameter: str, expected: str) -> None:
    arguments: dict[str, Any] = {"model": MODEL, "api_key": "k", **kwargs}
    with pytest.raises(ConfigurationError) as caught:
        AnthropicChatAdapter(**arguments)
    assert caught.value.parameter == parameter
    assert expected in caught.value.expected


def test_settings_with_a_client_are_refused() -> None:
    client = anthropic.AsyncAnthropic(api_key="k")
    with pytest.raises(ConfigurationError, match="no client settings"):
        AnthropicChatAdapter(client, model=MODEL, timeout=3)
    with pytest.raises(ConfigurationError, match="AsyncAnthropic"):
        AnthropicChatAdapter(cast(Any, anthropic.Anthropic(api_key="k")), model=MODEL)


def test_missing_credentials_are_a_configuration_error(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    for name in ("API_KEY", "AUTH_TOKEN", "PROFILE", "CONFIG_DIR"):
        monkeypatch.delenv(f"ANTHROPIC_{name}", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))  # no profile files there
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path))
    with pytest.raises(ConfigurationError, match="ANTHROPIC_API_KEY") as caught:
        AnthropicChatAdapter(model=MODEL)
    assert caught.value.parameter == "api_key"
    # A profile the SDK cannot find is a credentials problem too.
    monkeypatch.setenv("ANTHROPIC_CONFIG_DIR", str(tmp_path / "missing"))
    with pytest.raises(ConfigurationError, match="ANTHROPIC_API_KEY") as caught:
        AnthropicChatAdapter(model=MODEL)
    assert caught.value.parameter == "api_key"


class TestSDKImports(SDKImports):
    extra: ClassVar[str] = "anthropic"
    sdk: ClassVar[str] = "anthropic"
    loaded: ClassVar[str] = "m.split('.')[0] == 'anthropic'"


# --- the conformance kit --------------------------------------------------------------------


def conformance_handler(request: Request) -> Response:
    """Model "slow": a few events, then nothing until the client hangs up."""
    if request.json()["model"] == "slow":
        return Response(200, SSE_HEADERS, SLOW)
    return Response(200, SSE_HEADERS, text_answer("Hello", " there"))


class TestAnthropicConformance(ServedConformance):
    def handler(self, request: Request) -> Response:
        return conformance_handler(request)

    def client(self, server: FakeServer) -> anthropic.AsyncAnthropic:
        return sdk_client(server.url())

    def make_adapter(
        self, client: anthropic.AsyncAnthropic, server: FakeServer, *, slow: bool
    ) -> AnthropicChatAdapter:
        return AnthropicChatAdapter(client, model="slow" if slow else MODEL)


# --- the example ----------------------------------------------------------------------------


@pytest.mark.slow
def test_the_example_streams_from_a_base_url() -> None:
    # Run once rather than per backend: importing the SDK in the subprocess takes
    # seconds. The fake server runs on asyncio here, the example on trio.
    anyio.run(_run_the_example, backend="asyncio")


async def _run_the_example() -> None:
    steps = [
        message_start(),
        *thinking_block(0, "Rayleigh."),
        *text_block(1, "Blue ", "light."),
        *ending(),
    ]
    async with serve(streaming(steps)) as server:
        result = await run_example(
            "examples/anthropic_chat.py",
            *("--base-url", server.url(), "--api-key", "test", "--model", "claude-x"),
            *("--system", "Be brief.", "--backend", "trio", "Why is the sky blue?"),
            env_prefixes=("ANTHROPIC_",),
        )
    assert result.returncode == 0, result.stderr.decode()
    assert result.stdout.decode().splitlines() == [
        "[Rayleigh.]",
        "",
        "Blue light.",
        '[finish: stop · usage: {"inputTokens": 30, "outputTokens": 9, "totalTokens": 39, '
        '"cachedInputTokens": 6}]',
    ]
    body = server.requests[0].json()
    assert body["model"] == "claude-x"
    assert body["system"] == [{"type": "text", "text": "Be brief."}]
