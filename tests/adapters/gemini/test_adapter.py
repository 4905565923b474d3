"""The Gemini adapter, through the genuine google-genai SDK over loopback HTTP.

Every test drives ``google.genai.Client`` against :mod:`tests.adapters._support.fake_server`, which
sends the ``streamGenerateContent?alt=sse`` wire format as Google's frontends do (one whole
``GenerateContentResponse`` per ``data:`` event, CRLF line ends, raw UTF-8, no terminal
sentinel) with chunked encoding, and records what it received. The model is in the URL
path, so the server picks a scenario from it where a test needs one.
"""

from __future__ import annotations

import gc
import json
from collections.abc import AsyncGenerator, Callable, Mapping, Sequence
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from typing import Any, ClassVar, cast

import anyio
import httpx2
import pytest
from anyio.abc import SocketAttribute
from google import genai
from google.genai import errors as genai_errors
from google.genai import types as genai_types
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ai_chat import (
    AIChatAdapter,
    ConfigurationError,
    ProviderError,
    StreamFormatError,
    TruncatedStreamError,
    ValidationError,
    create_chat_stream,
)
from ai_chat._events import EventChecker
from ai_chat.adapters.gemini import GeminiChatAdapter
from ai_chat.adapters.gemini._events import GenerateContentMapper
from ai_chat.limits import JSONLimits
from ai_chat.types import ChatEvent

from .._support.common import (
    HANG_GUARD,
    HELLO,
    TLS,
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
from .._support.release import ReleaseOnStop, released

MODEL = "gemini-test"
RESPONSE_ID = "resp-7f3a"
PATH = f"/v1beta/models/{MODEL}:streamGenerateContent?alt=sse"
SSE_HEADERS = {"content-type": "text/event-stream"}
USAGE = {
    "promptTokenCount": 42,
    "candidatesTokenCount": 9,
    "thoughtsTokenCount": 5,
    "cachedContentTokenCount": 10,
    "totalTokenCount": 56,
}


# --- the wire format ----------------------------------------------------------------------


def chunk(
    *parts: Mapping[str, Any],
    finish: str | None = None,
    usage: Mapping[str, Any] | None = None,
    **extra: Any,
) -> bytes:
    """One streamed GenerateContentResponse, framed as Google sends it (CRLF)."""
    candidate: dict[str, Any] = {"content": {"parts": list(parts), "role": "model"}, "index": 0}
    if finish is not None:
        candidate["finishReason"] = finish
    body: dict[str, Any] = {
        "candidates": [candidate],
        "usageMetadata": dict(usage or {"promptTokenCount": 42, "totalTokenCount": 42}),
        "modelVersion": "gemini-test-001",
        "responseId": RESPONSE_ID,
        **extra,
    }
    return sse(body, eol="\r\n")


def text(value: str, **fields: Any) -> dict[str, Any]:
    return {"text": value, **fields}


def thought(value: str, **fields: Any) -> dict[str, Any]:
    return {"text": value, "thought": True, **fields}


def call(name: str, args: Any, **fields: Any) -> dict[str, Any]:
    return {"functionCall": {"name": name, "args": args}, **fields}


def ending(reason: str = "STOP", usage: Mapping[str, Any] = USAGE) -> bytes:
    return chunk(text(""), finish=reason, usage=usage)


def text_answer(*deltas: str) -> list[bytes]:
    return [*(chunk(text(d)) for d in deltas), ending()]


def streaming(steps: Sequence[Step]) -> Callable[[Request], Response]:
    return lambda request: Response(200, SSE_HEADERS, steps)


# --- running the adapter --------------------------------------------------------------------


@asynccontextmanager
async def sdk_client(base_url: str, **options: Any) -> AsyncGenerator[genai.Client]:
    """The genuine SDK client, as a caller would hand it over: an httpx2 transport of
    the caller's, closed by the caller."""
    async with httpx2.AsyncClient(verify=TLS) as http:
        with httpx2.Client(verify=TLS) as sync_http:
            http_options = {
                "base_url": base_url,
                "api_version": "v1beta",
                "httpx_async_client": http,
                "httpx_client": sync_http,
                **options.pop("http_options", {}),
            }
            options["http_options"] = genai_types.HttpOptions.model_validate(http_options)
            yield genai.Client(api_key="test", **options)


@asynccontextmanager
async def gemini_adapter(
    handler: Callable[[Request], Response], **options: Any
) -> AsyncGenerator[tuple[FakeServer, GeminiChatAdapter]]:
    """A fake server and an adapter whose (caller-owned) SDK client points at it."""
    async with serve(handler) as server, sdk_client(server.url()) as client:
        yield server, GeminiChatAdapter(client, model=MODEL, **options)


async def run(steps: Sequence[Step], request: Mapping[str, Any] = HELLO) -> list[ChatEvent]:
    return await run_with(gemini_adapter, streaming(steps), request)


async def failure(
    handler: Callable[[Request], Response],
    expected: type[BaseException],
    request: Mapping[str, Any] = HELLO,
) -> tuple[Any, list[ChatEvent], FakeServer]:
    """The error the stream raised, the events delivered before it, and the server."""
    return await failure_with(gemini_adapter, handler, expected, request)


# --- streaming ------------------------------------------------------------------------------

pytestmark = pytest.mark.anyio

TEXT = "Grüße aus Köln! 日本語のテキスト 🎉🚀 and plain ASCII, in many small deltas. "


async def test_text_in_many_deltas_with_utf8_split_across_chunks() -> None:
    deltas = [TEXT[i : i + 3] for i in range(0, len(TEXT), 3)] * 4
    body = b"".join([*(chunk(text(d)) for d in deltas), ending()])
    # 7-byte HTTP chunks cut multi-byte characters and CRLF line ends anywhere.
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
    assert events[0] == {"type": "start", "messageId": RESPONSE_ID}
    assert {e["id"] for e in of_type(events, "text-delta")} == {"text-0"}
    assert finish_of(events) == {
        "type": "finish",
        "finishReason": "stop",
        # Thinking is output (reasoningTokens is a part of outputTokens, as with OpenAI).
        "usage": {
            "inputTokens": 42,
            "outputTokens": 14,
            "totalTokens": 56,
            "cachedInputTokens": 10,
            "reasoningTokens": 5,
        },
    }


async def test_ten_thousand_deltas() -> None:
    lines = [chunk(text(f"w{i} ")) for i in range(10_000)]
    steps: list[Step] = [b"".join(lines[i : i + 250]) for i in range(0, len(lines), 250)]
    events = await run([*steps, ending()])
    assert len(of_type(events, "text-delta")) == 10_000
    assert text_of(events) == "".join(f"w{i} " for i in range(10_000))


async def test_thoughts_then_text_carry_their_signatures() -> None:
    steps = [
        chunk(thought("The user ")),
        chunk(thought("greets me.", thoughtSignature="c2lnLTE=")),
        chunk(text("Hi")),
        chunk(text("!"), text("", thoughtSignature="c2lnLTI=")),
        ending(),
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
            "providerMetadata": {"gemini": {"thoughtSignature": "c2lnLTE="}},
        }
    ]
    assert of_type(events, "text-end") == [
        {
            "type": "text-end",
            "id": "text-1",
            "providerMetadata": {"gemini": {"thoughtSignature": "c2lnLTI="}},
        }
    ]


async def test_a_signature_closes_its_part_and_later_text_opens_another() -> None:
    steps = [chunk(text("One.", thoughtSignature="c2ln")), chunk(text("Two.")), ending()]
    events = await run(steps)
    assert [(e["id"], e.get("providerMetadata")) for e in of_type(events, "text-end")] == [
        ("text-0", {"gemini": {"thoughtSignature": "c2ln"}}),
        ("text-1", None),
    ]


async def test_parallel_function_calls_are_kept_apart() -> None:
    steps = [
        chunk(text("Let me look.")),
        chunk(
            call("get_weather", {"city": "Paris"}, thoughtSignature="c2lnLWZj"),
            call("get_weather", {"city": "Köln"}),
            call("get_time", {}),
        ),
        ending("STOP"),
    ]
    events = await run(steps)
    assert types(events)[2:] == [
        "text-start",
        "text-delta",
        "text-end",
        *["tool-input-start", "tool-input-delta", "tool-input-available"] * 3,
        "finish-step",
        "finish",
    ]
    starts = of_type(events, "tool-input-start")
    ids = [e["toolCallId"] for e in starts]
    assert len(set(ids)) == 3 and all(i.startswith("gemini-call-") for i in ids)
    signed = {"gemini": {"thoughtSignature": "c2lnLWZj"}}
    assert starts[0]["providerMetadata"] == signed and "providerMetadata" not in starts[1]
    # Gemini sends each call whole: one delta with the complete JSON.
    assert [e["inputTextDelta"] for e in of_type(events, "tool-input-delta")] == [
        '{"city":"Paris"}',
        '{"city":"Köln"}',
        "{}",
    ]
    assert of_type(events, "tool-input-available") == [
        {
            "type": "tool-input-available",
            "toolCallId": ids[0],
            "toolName": "get_weather",
            "input": {"city": "Paris"},
            "providerMetadata": signed,
        },
        {
            "type": "tool-input-available",
            "toolCallId": ids[1],
            "toolName": "get_weather",
            "input": {"city": "Köln"},
        },
        {"type": "tool-input-available", "toolCallId": ids[2], "toolName": "get_time", "input": {}},
    ]
    # A tool call finishes with STOP on the wire.
    assert finish_of(events)["finishReason"] == "tool-calls"


async def test_a_call_id_the_api_issued_is_kept() -> None:
    steps = [chunk({"functionCall": {"id": "fc-9", "name": "f", "args": {"a": 1}}}), ending()]
    events = await run(steps)
    assert [e["toolCallId"] for e in of_type(events, "tool-input-available")] == ["fc-9"]


async def test_a_repeated_call_id_is_a_provider_error() -> None:
    same: dict[str, Any] = {"functionCall": {"id": "fc-9", "name": "f", "args": {}}}
    error, _events, _server = await failure(streaming([chunk(same, same), ending()]), ProviderError)
    assert "two function calls with the id 'fc-9'" in error.detail


async def test_arguments_that_are_not_an_object_become_tool_input_error() -> None:
    events = await run([chunk(call("f", [1, 2])), ending()])
    [error] = of_type(events, "tool-input-error")
    assert error["toolName"] == "f" and error["input"] == "[1,2]"
    assert "not a JSON object" in error["errorText"]
    assert of_type(events, "tool-input-available") == []


async def test_generated_files_become_file_events() -> None:
    image = {"inlineData": {"mimeType": "image/png", "data": "iVBORw0KGgo="}}
    events = await run([chunk(text("Here:"), image), ending()])
    assert of_type(events, "file") == [
        {"type": "file", "url": "data:image/png;base64,iVBORw0KGgo=", "mediaType": "image/png"}
    ]
    assert types(events).index("text-end") < types(events).index("file")


@pytest.mark.parametrize(
    ("reason", "expected"),
    [
        ("STOP", "stop"),
        ("MAX_TOKENS", "length"),
        ("SAFETY", "content-filter"),
        ("RECITATION", "content-filter"),
        ("BLOCKLIST", "content-filter"),
        ("PROHIBITED_CONTENT", "content-filter"),
        ("SPII", "content-filter"),
        ("IMAGE_SAFETY", "content-filter"),
        ("MALFORMED_FUNCTION_CALL", "error"),
        ("UNEXPECTED_TOOL_CALL", "error"),
        ("LANGUAGE", "other"),
        ("OTHER", "other"),
        ("FINISH_REASON_UNSPECIFIED", "other"),
        ("SOMETHING_NEW", "other"),
    ],
)
async def test_finish_reasons(reason: str, expected: str) -> None:
    events = await run([chunk(text("x")), ending(reason)])
    assert finish_of(events)["finishReason"] == expected


async def test_max_tokens_with_a_call_stays_length() -> None:
    events = await run([chunk(call("f", {})), ending("MAX_TOKENS")])
    assert finish_of(events)["finishReason"] == "length"


async def test_the_last_usage_counts_and_is_never_added() -> None:
    steps = [
        chunk(text("a"), usage={"promptTokenCount": 42, "totalTokenCount": 42}),
        chunk(text("b"), usage={"promptTokenCount": 42, "candidatesTokenCount": 1}),
        chunk(text(""), finish="STOP", usage={"promptTokenCount": 42, "candidatesTokenCount": 2}),
    ]
    events = await run(steps)
    assert finish_of(events)["usage"] == {"inputTokens": 42, "outputTokens": 2}


async def test_a_blocked_prompt_finishes_as_content_filter() -> None:
    blocked = {
        "promptFeedback": {"blockReason": "PROHIBITED_CONTENT"},
        "usageMetadata": {"promptTokenCount": 7, "totalTokenCount": 7},
        "modelVersion": "gemini-test-001",
        "responseId": RESPONSE_ID,
    }
    events = await run([sse(blocked, eol="\r\n")])
    assert types(events) == ["start", "start-step", "finish-step", "finish"]
    assert finish_of(events) == {
        "type": "finish",
        "finishReason": "content-filter",
        "usage": {"inputTokens": 7, "totalTokens": 7},
    }


@pytest.mark.parametrize(
    ("part", "words"),
    [
        ({"executableCode": {"language": "PYTHON", "code": "1+1"}}, "executableCode"),
        ({"fileData": {"mimeType": "image/png", "fileUri": "gs://b/x"}}, "fileData"),
    ],
)
async def test_output_the_adapter_cannot_map_is_a_provider_error(
    part: Mapping[str, Any], words: str
) -> None:
    error, events, _server = await failure(
        streaming([chunk(text("Hi")), chunk(part), ending()]), ProviderError
    )
    assert words in error.detail and "cannot map" in error.detail
    assert text_of(events) == "Hi"


async def test_a_continuation_finish_is_a_provider_error() -> None:
    steps = [chunk(text("Hi")), chunk(text(""), finish="CONTINUATION", continuationToken="t")]
    error, _events, _server = await failure(streaming(steps), ProviderError)
    assert "CONTINUATION" in error.detail


class TestStreamChecks(StreamChecks):
    headers: ClassVar[Mapping[str, str]] = SSE_HEADERS
    answer: ClassVar[Sequence[Step]] = text_answer("ok")
    eol: ClassVar[bytes] = b"\r\n"

    def serve_adapter(
        self, handler: Callable[[Request], Response]
    ) -> AbstractAsyncContextManager[tuple[FakeServer, AIChatAdapter]]:
        return gemini_adapter(handler)


# Any sequence of chunks Gemini could send gives events the core accepts (or a typed error).

_JSON_LEAF = st.none() | st.booleans() | st.integers() | st.text(max_size=5)


def _containers(inner: st.SearchStrategy[object]) -> st.SearchStrategy[object]:
    # A named function: hypothesis checks by its source that extend= uses its argument,
    # which a multi-line lambda does not always let it find.
    return st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner, max_size=3)


_ARGS: st.SearchStrategy[object] = st.recursive(_JSON_LEAF, _containers, max_leaves=6)
_SIGNATURE = st.none() | st.sampled_from(["", "c2ln"])


def _text_part(value: str, is_thought: bool, signature: str | None) -> dict[str, Any]:
    part: dict[str, Any] = {"text": value}
    if is_thought:
        part["thought"] = True
    if signature is not None:
        part["thoughtSignature"] = signature
    return part


def _call_part(
    name: str, args: object, call_id: str | None, signature: str | None
) -> dict[str, Any]:
    function_call: dict[str, Any] = {"name": name, "args": args}
    if call_id is not None:
        function_call["id"] = call_id
    part: dict[str, Any] = {"functionCall": function_call}
    if signature is not None:
        part["thoughtSignature"] = signature
    return part


def _chunk(
    parts: list[dict[str, Any]], finish: str | None, usage: dict[str, int] | None, blocked: bool
) -> dict[str, Any]:
    candidate: dict[str, Any] = {"content": {"parts": parts, "role": "model"}}
    if finish is not None:
        candidate["finishReason"] = finish
    body: dict[str, Any] = {"candidates": [candidate]}
    if usage is not None:
        body["usageMetadata"] = usage
    if blocked:
        body["promptFeedback"] = {"blockReason": "SAFETY"}
    return body


_PART: st.SearchStrategy[dict[str, Any]] = st.one_of(
    st.builds(_text_part, st.text(max_size=4), st.booleans(), _SIGNATURE),
    st.builds(
        _call_part,
        st.sampled_from(["f", "g"]),
        _ARGS,
        st.none() | st.sampled_from(["fc-1", "fc-2"]),
        _SIGNATURE,
    ),
    st.just({"inlineData": {"mimeType": "image/png", "data": "AA=="}}),
    st.just({"thoughtSignature": "c2ln"}),
    st.just({"executableCode": {"code": "1"}}),
)
_CHUNK = st.builds(
    _chunk,
    st.lists(_PART, max_size=4),
    st.none() | st.sampled_from(["STOP", "MAX_TOKENS", "SAFETY", "CONTINUATION", "NEW"]),
    st.none() | st.dictionaries(st.sampled_from(sorted(USAGE)), st.integers(-1, 99), max_size=4),
    st.booleans(),
)
_ERROR_CHUNK: dict[str, Any] = {"error": {"code": 500, "status": "INTERNAL"}}


@pytest.mark.slow
@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(_CHUNK | st.just(_ERROR_CHUNK), max_size=6))
def test_any_chunk_sequence_maps_to_a_valid_event_sequence(chunks: list[dict[str, Any]]) -> None:
    mapper = GenerateContentMapper()
    checker = EventChecker(JSONLimits(), 10_000_000, "GeminiChatAdapter")
    out: list[dict[str, Any]] = []
    try:
        for item in chunks:
            mapper.feed("message", json.dumps(item), out)
        mapper.finish(out)
    except ProviderError:
        ended = False
    else:
        ended = True
    for event in out:
        checker.check(event)
    if ended:
        checker.check_end()


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
                {"type": "file", "mediaType": "application/pdf", "url": "gs://bucket/b.pdf"},
            ],
        },
        {
            "id": "a1",
            "role": "assistant",
            "parts": [
                {
                    "type": "reasoning",
                    "text": "They want weather.",
                    "providerMetadata": {"gemini": {"thoughtSignature": "c2lnLTE="}},
                },
                {"type": "text", "text": "Checking the weather."},
                {
                    "type": "tool-call",
                    "toolCallId": "gemini-call-0a1b",
                    "toolName": "get_weather",
                    "input": {"city": "Zürich"},
                    "providerMetadata": {"gemini": {"thoughtSignature": "c2lnLTI="}},
                },
                {
                    "type": "tool-call",
                    "toolCallId": "fc-issued",
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
                    "toolCallId": "gemini-call-0a1b",
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
                    "toolCallId": "fc-issued",
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
        "model": "gemini-other",
        "temperature": 0.2,
        "topP": 0.9,
        "topK": 40,
        "maxOutputTokens": 512,
        "stopSequences": ["\n\n", "END"],
        "seed": 7,
        "presencePenalty": 0.1,
        "frequencyPenalty": 0.3,
        "toolChoice": {"type": "tool", "toolName": "get_weather"},
        "providerOptions": {
            "gemini": {
                "thinkingConfig": {"includeThoughts": True, "thinkingBudget": 1024},
                "generationConfig": {"responseMimeType": "text/plain"},
                "safetySettings": [
                    {"category": "HARM_CATEGORY_HARASSMENT", "threshold": "BLOCK_NONE"}
                ],
                "cachedContent": "cachedContents/abc",
            },
            "openai": {"ignored": True},
        },
    },
}

RICH_BODY: Mapping[str, Any] = {
    "systemInstruction": {"parts": [{"text": "Be brief."}, {"text": "Be kind."}]},
    "contents": [
        {
            "role": "user",
            "parts": [
                {"text": "What is in these?"},
                {"fileData": {"mimeType": "image/jpeg", "fileUri": "https://example.com/a.jpg"}},
                {"inlineData": {"mimeType": "image/png", "data": "iVBORw0KGgo="}},
                {"inlineData": {"mimeType": "application/pdf", "data": "JVBERi0xLjQK"}},
                {"fileData": {"mimeType": "application/pdf", "fileUri": "gs://bucket/b.pdf"}},
            ],
        },
        {
            "role": "model",
            "parts": [
                {"text": "They want weather.", "thought": True, "thoughtSignature": "c2lnLTE="},
                {"text": "Checking the weather."},
                {
                    # A made-up id is not sent back; Gemini pairs by name and order.
                    "functionCall": {"name": "get_weather", "args": {"city": "Zürich"}},
                    "thoughtSignature": "c2lnLTI=",
                },
                {"functionCall": {"name": "get_time", "args": {}, "id": "fc-issued"}},
            ],
        },
        {
            "role": "user",
            "parts": [
                {
                    "functionResponse": {
                        "name": "get_weather",
                        "response": {"output": {"temp": 21.5, "sky": "clear"}},
                    }
                },
                {
                    "functionResponse": {
                        "name": "get_time",
                        "response": {"error": "clock broken"},
                        "id": "fc-issued",
                    }
                },
            ],
        },
        {"role": "model", "parts": [{"text": "Sunny."}]},
        {"role": "user", "parts": [{"text": "Thanks"}]},
    ],
    "tools": [
        {
            "functionDeclarations": [
                {
                    "name": "get_weather",
                    "description": "Weather for a city",
                    "parametersJsonSchema": {
                        "type": "object",
                        "properties": {"city": {"type": "string"}},
                    },
                },
                {"name": "get_time", "parametersJsonSchema": {"type": "object"}},
            ]
        }
    ],
    "toolConfig": {
        "functionCallingConfig": {"mode": "ANY", "allowedFunctionNames": ["get_weather"]}
    },
    "generationConfig": {
        "temperature": 0.2,
        "topP": 0.9,
        "topK": 40,
        "maxOutputTokens": 512,
        "stopSequences": ["\n\n", "END"],
        "seed": 7,
        "presencePenalty": 0.1,
        "frequencyPenalty": 0.3,
        "thinkingConfig": {"includeThoughts": True, "thinkingBudget": 1024},
        "responseMimeType": "text/plain",
    },
    "safetySettings": [{"category": "HARM_CATEGORY_HARASSMENT", "threshold": "BLOCK_NONE"}],
    "cachedContent": "cachedContents/abc",
}


async def test_request_mapping() -> None:
    async with gemini_adapter(streaming(text_answer("ok"))) as (server, adapter):
        await collect(adapter, RICH_REQUEST)
    [request] = server.requests
    # The model is in the URL the SDK built; the key in the SDK's header.
    assert (request.method, request.path) == (
        "POST",
        "/v1beta/models/gemini-other:streamGenerateContent?alt=sse",
    )
    assert request.headers["x-goog-api-key"] == "test"
    assert request.headers["user-agent"].startswith("google-genai-sdk/")
    assert request.json() == RICH_BODY


async def test_minimal_request() -> None:
    async with gemini_adapter(streaming(text_answer("ok"))) as (server, adapter):
        await collect(adapter)
    [request] = server.requests
    assert request.path == PATH
    assert request.json() == {"contents": [{"role": "user", "parts": [{"text": "Hello"}]}]}


@pytest.mark.parametrize(
    ("choice", "expected"),
    [
        ("auto", {"mode": "AUTO"}),
        ("none", {"mode": "NONE"}),
        ("required", {"mode": "ANY"}),
        ({"type": "tool", "toolName": "f"}, {"mode": "ANY", "allowedFunctionNames": ["f"]}),
    ],
)
async def test_tool_choice(choice: object, expected: object) -> None:
    request = {
        **HELLO,
        "tools": [{"name": "f", "inputSchema": {"type": "object"}}],
        "parameters": {"toolChoice": choice},
    }
    async with gemini_adapter(streaming(text_answer("ok"))) as (server, adapter):
        await collect(adapter, request)
    assert server.requests[0].json()["toolConfig"] == {"functionCallingConfig": expected}


async def test_default_parameters_are_merged_under_the_request_ones() -> None:
    defaults = {
        "temperature": 1.0,
        "maxOutputTokens": 100,
        "providerOptions": {
            "gemini": {"thinkingConfig": {"thinkingBudget": 0}, "cachedContent": "c/1"}
        },
    }
    request = {
        **HELLO,
        "parameters": {
            "temperature": 0.1,
            "providerOptions": {"gemini": {"thinkingConfig": {"thinkingBudget": 64}}},
        },
    }
    steps = text_answer("ok")
    async with gemini_adapter(streaming(steps), parameters=defaults) as (server, adapter):
        await collect(adapter, request)
    body = server.requests[0].json()
    assert body["generationConfig"] == {
        "temperature": 0.1,
        "maxOutputTokens": 100,
        "thinkingConfig": {"thinkingBudget": 64},
    }
    assert body["cachedContent"] == "c/1"


async def test_the_sdk_builds_vertex_ai_urls() -> None:
    async with (
        serve(streaming(text_answer("ok"))) as server,
        sdk_client(server.url(), vertexai=True, http_options={"api_version": "v1"}) as client,
    ):
        adapter = GeminiChatAdapter(client, model=MODEL)
        assert text_of(await collect(adapter)) == "ok"
    assert server.requests[0].path == (
        f"/v1/publishers/google/models/{MODEL}:streamGenerateContent?alt=sse"
    )


UNSUPPORTED = [
    pytest.param(with_parameters(mood="happy"), "$.parameters.mood", "unknown", id="unknown"),
    pytest.param(
        with_parameters(providerOptions={"gemini": {"temperature": 5}}),
        "$.parameters.providerOptions.gemini.temperature",
        "parameters.temperature",
        id="options-shadowing-a-parameter",
    ),
    pytest.param(
        with_parameters(providerOptions={"gemini": {"generationConfig": {"seed": 1}}}),
        "$.parameters.providerOptions.gemini.generationConfig.seed",
        "parameters.seed",
        id="options-generation-config-shadowing",
    ),
    pytest.param(
        with_parameters(providerOptions={"gemini": {"candidateCount": 2}}),
        "$.parameters.providerOptions.gemini.candidateCount",
        "exactly one answer",
        id="options-candidates",
    ),
    pytest.param(
        with_parameters(providerOptions={"gemini": {"systemInstruction": "x"}}),
        "$.parameters.providerOptions.gemini.systemInstruction",
        "system messages",
        id="options-system",
    ),
    pytest.param(
        with_parameters(providerOptions={"gemini": {"generationConfig": 3}}),
        "$.parameters.providerOptions.gemini.generationConfig",
        "object",
        id="options-generation-config-not-object",
    ),
    pytest.param(
        with_parameters(model="bad?model"),
        "$.parameters.model",
        "model name",
        id="bad-model-name",
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
        with_message(
            {
                "type": "reasoning",
                "text": "hmm",
                "providerMetadata": {"gemini": {"thoughtSignature": 5}},
            },
            role="assistant",
        ),
        "$.messages[1].parts[0].providerMetadata.gemini.thoughtSignature",
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
        with_message({"type": "file", "mediaType": "application/zip", "url": "data:x;base64,A"}),
        "$.messages[1].parts[0].mediaType",
        "application/zip",
        id="zip-file",
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
        "gs://",
        id="ftp-url",
    ),
]


@pytest.mark.parametrize(("request_", "path", "words"), UNSUPPORTED)
async def test_unsupported_input_raises_before_any_request(
    request_: Mapping[str, Any], path: str, words: str
) -> None:
    error, events, server = await failure(streaming([ending()]), ValidationError, request_)
    assert error.path == path
    assert words in error.reason
    assert events == []
    assert server.connections == 0 and server.requests == []


# --- truncation and broken streams ------------------------------------------------------------


@pytest.mark.parametrize(
    "steps",
    [
        pytest.param([chunk(text("Hel")), chunk(text("lo"))], id="body-ends"),
        pytest.param([chunk(call("f", {"a": 1}))], id="after-a-call"),
        pytest.param([], id="empty-body"),
    ],
)
async def test_truncation_is_an_error(steps: Sequence[Step]) -> None:
    error, events, _server = await failure(streaming(steps), TruncatedStreamError)
    assert isinstance(error, ProviderError)
    assert "finishReason" in str(error)
    assert error.provider == "gemini" and error.status is None
    assert error.request_id == (RESPONSE_ID if steps else None)
    assert "finish" not in types(events)


@pytest.mark.parametrize(
    ("fault", "cause"),
    [("drop", httpx2.RemoteProtocolError), ("reset", httpx2.TransportError)],
)
async def test_a_broken_connection_is_a_provider_error(
    fault: Step, cause: type[BaseException]
) -> None:
    steps: list[Step] = [*(chunk(text(w)) for w in ("one ", "two ", "three ")), 0.01, fault]
    error, events, _server = await failure(streaming(steps), ProviderError)
    assert type(error) is ProviderError
    assert isinstance(error.__cause__, cause)
    assert "mid-answer" in error.detail
    assert error.request_id == RESPONSE_ID and error.status is None
    assert text_of(events) == "one two three "


async def test_a_malformed_data_line_is_a_provider_error() -> None:
    steps = [chunk(text("Hi")), b"data: {not json\r\n\r\n", ending()]
    error, events, _server = await failure(streaming(steps), ProviderError)
    assert type(error) is ProviderError
    assert isinstance(error.__cause__, json.JSONDecodeError)
    assert "malformed data line" in error.detail and "{not json" in error.detail
    assert text_of(events) == "Hi"


async def test_an_error_object_in_a_200_stream_is_a_provider_error() -> None:
    failed = {
        "error": {"code": 500, "message": "Internal error encountered.", "status": "INTERNAL"}
    }
    steps = [chunk(text("Hi")), sse(failed, eol="\r\n")]
    error, events, _server = await failure(streaming(steps), ProviderError)
    assert type(error) is ProviderError
    assert error.error_type == "INTERNAL"
    assert error.status is None and error.request_id == RESPONSE_ID
    assert "Internal error encountered." in str(error) and "retry later" in str(error)
    assert text_of(events) == "Hi"


@pytest.mark.parametrize(
    ("body", "reason"),
    [
        (b'data: {}\r\n\r\ndata: {"cand', "middle of a line"),
        (b"data: \xff\xfe\r\n\r\n", "not valid UTF-8"),
    ],
)
async def test_sse_format_errors_pass_through(body: bytes, reason: str) -> None:
    error, _events, _server = await failure(streaming([body]), StreamFormatError)
    assert reason in error.reason


def google_error(
    status: int, kind: str, message: str, headers: Mapping[str, str] = {}, **extra: Any
) -> Response:
    body = {"error": {"code": status, "message": message, "status": kind, **extra}}
    return Response(
        status,
        {"content-type": "application/json; charset=UTF-8", **headers},
        [json.dumps(body).encode()],
    )


@pytest.mark.parametrize(
    ("status", "kind", "hint", "sdk_class"),
    [
        (400, "INVALID_ARGUMENT", "rejected", genai_errors.ClientError),
        (401, "UNAUTHENTICATED", "GEMINI_API_KEY", genai_errors.ClientError),
        (403, "PERMISSION_DENIED", "may not use", genai_errors.ClientError),
        (404, "NOT_FOUND", "model name", genai_errors.ClientError),
        (429, "RESOURCE_EXHAUSTED", "rate limited", genai_errors.ClientError),
        (500, "INTERNAL", "retry later", genai_errors.ServerError),
        (503, "UNAVAILABLE", "overloaded", genai_errors.ServerError),
    ],
)
async def test_http_errors(
    status: int, kind: str, hint: str, sdk_class: type[BaseException]
) -> None:
    raised, events, server = await failure(
        lambda request: google_error(status, kind, "Something specific."), ProviderError
    )
    assert type(raised) is ProviderError
    assert isinstance(raised.__cause__, sdk_class)
    assert (raised.provider, raised.status, raised.error_type) == ("gemini", status, kind)
    assert raised.retry_after is None
    assert "Something specific." in str(raised) and hint in str(raised)
    assert events == []
    assert len(server.requests) == 1  # no retry_options: the SDK does not retry


async def test_a_429_carries_retry_after_from_the_header_or_retry_info() -> None:
    raised, _events, _server = await failure(
        lambda request: google_error(429, "RESOURCE_EXHAUSTED", "Quota.", {"retry-after": "7"}),
        ProviderError,
    )
    assert raised.retry_after == 7.0
    retry_info = {
        "@type": "type.googleapis.com/google.rpc.RetryInfo",
        "retryDelay": "12.5s",
    }
    raised, _events, _server = await failure(
        lambda request: google_error(
            429, "RESOURCE_EXHAUSTED", "Quota.", details=[{"@type": "x.QuotaFailure"}, retry_info]
        ),
        ProviderError,
    )
    assert raised.retry_after == 12.5


async def test_an_error_page_that_is_not_json_is_a_provider_error() -> None:
    page = Response(502, {"content-type": "text/html"}, [b"<html>Bad Gateway</html>"])
    raised, _events, _server = await failure(lambda request: page, ProviderError)
    assert raised.status == 502 and "Bad Gateway" in str(raised)


async def test_the_sdk_retry_options_apply() -> None:
    answers = [
        google_error(503, "UNAVAILABLE", "Busy."),
        Response(200, SSE_HEADERS, text_answer("ok")),
    ]
    retry = {"attempts": 2, "initial_delay": 0.0, "max_delay": 0.0, "jitter": 0.0}
    async with (
        serve(lambda request: answers.pop(0)) as server,
        sdk_client(server.url(), http_options={"retry_options": retry}) as client,
    ):
        adapter = GeminiChatAdapter(client, model=MODEL)
        assert text_of(await collect(adapter)) == "ok"
    assert len(server.requests) == 2


async def test_a_refused_connection_is_a_provider_error() -> None:
    listener = await anyio.create_tcp_listener(local_host="127.0.0.1")
    port = listener.extra(SocketAttribute.local_port)
    await listener.aclose()
    async with sdk_client(f"http://127.0.0.1:{port}") as client:
        adapter = GeminiChatAdapter(client, model=MODEL)
        with anyio.fail_after(HANG_GUARD), pytest.raises(ProviderError) as caught:
            await collect(adapter)
    assert isinstance(caught.value.__cause__, httpx2.ConnectError)
    assert "could not reach" in str(caught.value) and caught.value.status is None


async def test_a_stalled_stream_is_a_provider_error() -> None:
    async with (
        serve(streaming([chunk(text("Hi")), "hang"])) as server,
        sdk_client(server.url(), http_options={"timeout": 200}) as client,
    ):
        adapter = GeminiChatAdapter(client, model=MODEL)
        with anyio.fail_after(HANG_GUARD), pytest.raises(ProviderError) as caught:
            await collect(adapter)
        await released(server)
    assert isinstance(caught.value.__cause__, httpx2.ReadTimeout)
    assert "stalled" in str(caught.value)


# --- stopping releases the connection -------------------------------------------------------

SLOW: list[Step] = [chunk(text("one ")), chunk(text("two ")), "hang"]


class TestReleaseOnStop(ReleaseOnStop):
    slow: ClassVar[Sequence[Step]] = SLOW
    headers: ClassVar[Mapping[str, str]] = SSE_HEADERS
    small_response_chars: ClassVar[int] = 100

    def serve_adapter(
        self, handler: Callable[[Request], Response]
    ) -> AbstractAsyncContextManager[tuple[FakeServer, AIChatAdapter]]:
        return gemini_adapter(handler)

    async def test_aclose_mid_stream_closes_the_connection(self) -> None:
        # The SDK's own generator does not release the connection on aclose() (its
        # generators form a cycle that only the garbage collector breaks); ours does, at once.
        gc.disable()
        try:
            async with self._slow() as (server, adapter):
                stream = create_chat_stream(adapter, HELLO)
                with anyio.fail_after(HANG_GUARD):
                    await stream.__anext__()
                    await stream.aclose()
                    await server.wait_until(lambda s: s.disconnects == 1)
        finally:
            gc.enable()
        await released(server)


# --- construction and ownership -------------------------------------------------------------


def transport(client: genai.Client) -> httpx2.AsyncClient:
    """The httpx2 client the SDK sends streaming requests through."""
    http = client.aio._api_client._async_httpx_client  # pyright: ignore[reportPrivateUsage]
    assert isinstance(http, httpx2.AsyncClient)
    return http


def owned_adapter(server: FakeServer, **settings: Any) -> GeminiChatAdapter:
    http_options = {"base_url": server.url(), "api_version": "v1beta"}
    return GeminiChatAdapter(model=MODEL, api_key="k-owned", http_options=http_options, **settings)


async def test_an_owned_client_is_created_from_settings_and_closed_by_aclose() -> None:
    async with serve(streaming(text_answer("ok"))) as server:
        adapter = owned_adapter(server)
        assert text_of(await collect(adapter)) == "ok"
        assert server.requests[0].headers["x-goog-api-key"] == "k-owned"
        http = transport(adapter.client)
        sync_http = adapter.client._api_client._httpx_client  # pyright: ignore[reportPrivateUsage]
        assert isinstance(sync_http, httpx2.Client)
        assert not http.is_closed and not sync_http.is_closed
        await adapter.aclose()
        assert http.is_closed and sync_http.is_closed
        with anyio.fail_after(HANG_GUARD):  # the pooled connection went with the client
            await server.wait_until(lambda s: s.closed == 1)


async def test_an_owned_client_is_closed_by_async_with() -> None:
    async with serve(streaming(text_answer("ok"))) as server:
        async with owned_adapter(server) as adapter:
            http = transport(adapter.client)
            assert text_of(await collect(adapter)) == "ok"
        assert http.is_closed


async def test_an_owned_client_uses_the_async_client_args() -> None:
    own = httpx2.AsyncHTTPTransport(retries=0)
    async with serve(streaming(text_answer("ok"))) as server:
        http_options = {"base_url": server.url(), "async_client_args": {"transport": own}}
        async with GeminiChatAdapter(
            model=MODEL, api_key="k", http_options=http_options
        ) as adapter:
            assert text_of(await collect(adapter)) == "ok"
            http = transport(adapter.client)
            assert http._transport is own  # pyright: ignore[reportPrivateUsage]


async def test_a_callers_client_is_never_closed() -> None:
    async with serve(streaming(text_answer("ok"))) as server, sdk_client(server.url()) as client:
        async with GeminiChatAdapter(client, model=MODEL) as adapter:
            assert adapter.client is client
            assert text_of(await collect(adapter)) == "ok"
        await adapter.aclose()
        http = transport(client)
        assert not http.is_closed
        assert server.closed == 0


def test_the_owned_client_reads_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("GOOGLE_API_KEY", "GOOGLE_GENAI_USE_VERTEXAI", "GOOGLE_GENAI_USE_ENTERPRISE"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("GEMINI_API_KEY", "k-from-env")
    monkeypatch.setenv("GOOGLE_GEMINI_BASE_URL", "http://127.0.0.1:9")
    adapter = GeminiChatAdapter(model=MODEL)
    api = adapter.client._api_client  # pyright: ignore[reportPrivateUsage]
    assert api.api_key == "k-from-env"
    assert api.get_read_only_http_options()["base_url"].startswith("http://127.0.0.1:9")


@pytest.mark.parametrize(
    ("kwargs", "parameter", "expected"),
    [
        ({"model": ""}, "model", "non-empty"),
        ({"parameters": {"mood": 3}}, "parameters", "unknown parameter"),
        ({"parameters": {"toolChoice": "auto"}}, "parameters", "toolChoice"),
        ({"parameters": {"temperature": "hot"}}, "parameters", "temperature"),
        ({"project": "p"}, "settings", "genai.Client"),
        ({"http_options": {"timeout": "soon"}}, "http_options", "HttpOptions"),
    ],
)
def test_invalid_construction(
    kwargs: dict[str, Any], parameter: str, expected: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("GOOGLE_GENAI_USE_VERTEXAI", raising=False)
    arguments: dict[str, Any] = {"model": MODEL, "api_key": "k", **kwargs}
    with pytest.raises(ConfigurationError) as caught:
        GeminiChatAdapter(**arguments)
    assert caught.value.parameter == parameter
    assert expected in caught.value.expected


async def test_settings_with_a_client_are_refused() -> None:
    async with sdk_client("http://127.0.0.1:9") as client:
        with pytest.raises(ConfigurationError, match="no client settings"):
            GeminiChatAdapter(client, model=MODEL, api_key="k")
    with pytest.raises(ConfigurationError, match="Client"):
        GeminiChatAdapter(cast(Any, object()), model=MODEL)


def test_missing_credentials_are_a_configuration_error(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in (
        "GEMINI_API_KEY",
        "GOOGLE_API_KEY",
        "GOOGLE_GENAI_USE_VERTEXAI",
        "GOOGLE_GENAI_USE_ENTERPRISE",
    ):
        monkeypatch.delenv(name, raising=False)
    with pytest.raises(ConfigurationError, match="GEMINI_API_KEY") as caught:
        GeminiChatAdapter(model=MODEL)
    assert caught.value.parameter == "api_key"


class TestSDKImports(SDKImports):
    extra: ClassVar[str] = "gemini"
    sdk: ClassVar[str] = "google.genai"
    loaded: ClassVar[str] = "m.startswith('google.genai')"


# --- the conformance kit --------------------------------------------------------------------


def conformance_handler(request: Request) -> Response:
    """Model "slow" (in the URL path): a few events, then nothing until the client hangs up."""
    if "/models/slow:" in request.path:
        return Response(200, SSE_HEADERS, SLOW)
    return Response(200, SSE_HEADERS, text_answer("Hello", " there"))


class TestGeminiConformance(ServedConformance):
    def handler(self, request: Request) -> Response:
        return conformance_handler(request)

    def client(self, server: FakeServer) -> AbstractAsyncContextManager[genai.Client]:
        return sdk_client(server.url())

    def make_adapter(
        self, client: genai.Client, server: FakeServer, *, slow: bool
    ) -> GeminiChatAdapter:
        return GeminiChatAdapter(client, model="slow" if slow else MODEL)


# --- the example ----------------------------------------------------------------------------


@pytest.mark.slow
def test_the_example_streams_from_a_base_url() -> None:
    # Run once rather than per backend: importing the SDK in the subprocess takes
    # seconds. The fake server runs on asyncio here, the example on trio.
    anyio.run(_run_the_example, backend="asyncio")


async def _run_the_example() -> None:
    steps = [chunk(thought("Rayleigh.")), chunk(text("Blue ")), chunk(text("light.")), ending()]
    async with serve(streaming(steps)) as server:
        result = await run_example(
            "examples/gemini_chat.py",
            *("--base-url", server.url(), "--api-key", "test", "--model", "gemini-x"),
            *("--system", "Be brief.", "--backend", "trio", "Why is the sky blue?"),
            env_prefixes=("GEMINI_", "GOOGLE_"),
        )
    assert result.returncode == 0, result.stderr.decode()
    assert result.stdout.decode().splitlines() == [
        "[Rayleigh.]",
        "",
        "Blue light.",
        '[finish: stop · usage: {"inputTokens": 42, "outputTokens": 14, "totalTokens": 56, '
        '"cachedInputTokens": 10, "reasoningTokens": 5}]',
    ]
    [request] = server.requests
    assert request.path == "/v1beta/models/gemini-x:streamGenerateContent?alt=sse"
    assert request.json()["systemInstruction"] == {"parts": [{"text": "Be brief."}]}
