"""The UI message stream client adapter over real loopback HTTP.

Every test runs :class:`UIMessageStreamAdapter` (and its own ``httpx.AsyncClient``)
against :mod:`tests.adapters._support.fake_server`, which sends the bytes given to it with chunked
encoding and records what it received and whether the client hung up.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import AbstractAsyncContextManager
from typing import Any, ClassVar, overload

import anyio
import httpx
import pytest
from anyio.abc import SocketAttribute, SocketStream

from ai_chat import (
    AIChatAdapter,
    ConfigurationError,
    LimitExceededError,
    ProtocolError,
    ProviderError,
    RemoteStreamError,
    StreamClosedError,
    StreamFormatError,
    TruncatedStreamError,
    ValidationError,
    create_chat_stream,
)
from ai_chat.adapters.ui_stream import DEFAULT_IDLE_TIMEOUT, UIMessageStreamAdapter

from .._support.common import ServedConformance
from .._support.fake_server import FakeServer, Request, Response, Step, serve
from .._support.release import ReleaseOnStop, released
from .wire import (
    DONE,
    HANG_GUARD,
    HEADERS,
    HELLO,
    answering,
    chunk,
    collect,
    failure,
    plain,
    run,
    served,
    text_answer,
    types,
)

pytestmark = pytest.mark.anyio


# --- a complete answer ----------------------------------------------------------------------


async def test_a_text_answer_becomes_the_same_events() -> None:
    events = await run(text_answer("Hel", "lo"))
    assert plain(events) == [
        {"type": "start", "messageId": "m1"},
        {"type": "start-step"},
        {"type": "text-start", "id": "t1"},
        {"type": "text-delta", "id": "t1", "delta": "Hel"},
        {"type": "text-delta", "id": "t1", "delta": "lo"},
        {"type": "text-end", "id": "t1"},
        {"type": "finish-step"},
        {"type": "finish", "finishReason": "stop"},
    ]


EVERY_KIND: list[dict[str, Any]] = [
    {"type": "start", "messageId": "m1", "messageMetadata": {"model": "x"}},
    {"type": "start-step"},
    {"type": "reasoning-start", "id": "r1", "providerMetadata": {"p": {"signature": "s"}}},
    {"type": "reasoning-delta", "id": "r1", "delta": "think"},
    {"type": "reasoning-end", "id": "r1"},
    {"type": "text-start", "id": "t1"},
    {"type": "text-delta", "id": "t1", "delta": 'Grüße 👋 "quoted"\n'},
    {"type": "text-end", "id": "t1", "citations": []},  # unknown extra keys are kept
    {"type": "tool-input-start", "toolCallId": "c1", "toolName": "search", "dynamic": False},
    {"type": "tool-input-delta", "toolCallId": "c1", "inputTextDelta": '{"q":'},
    {"type": "tool-input-delta", "toolCallId": "c1", "inputTextDelta": '"x"}'},
    {"type": "tool-input-available", "toolCallId": "c1", "toolName": "search", "input": {"q": "x"}},
    {"type": "tool-output-available", "toolCallId": "c1", "output": None, "preliminary": True},
    {"type": "tool-output-available", "toolCallId": "c1", "output": {"hits": [1, 2]}},
    {
        "type": "tool-input-error",
        "toolCallId": "c2",
        "toolName": "f",
        "input": "{",
        "errorText": "bad",
    },
    {"type": "tool-output-error", "toolCallId": "c2", "errorText": "bad input"},
    {"type": "data-weather", "id": "w1", "data": {"t": 21}},
    {"type": "data-progress", "data": None, "transient": True},
    {"type": "source-url", "sourceId": "s1", "url": "https://example.com", "title": "Ex"},
    {"type": "source-document", "sourceId": "s2", "mediaType": "application/pdf", "title": "Doc"},
    {"type": "file", "url": "data:image/png;base64,iVBORw==", "mediaType": "image/png"},
    {"type": "message-metadata", "messageMetadata": {"step": 1}},
    {"type": "finish-step"},
    {"type": "finish", "finishReason": "tool-calls", "messageMetadata": {"usage": {"out": 3}}},
]


async def test_every_event_kind_passes_through_unchanged() -> None:
    body = b"".join(b"data: " + json.dumps(c).encode() + b"\n\n" for c in EVERY_KIND) + DONE
    assert plain(await run([body])) == EVERY_KIND


async def test_a_finish_without_a_reason_finishes_with_other() -> None:
    steps = [chunk("start"), chunk("finish"), DONE]
    assert plain(await run(steps)) == [
        {"type": "start"},
        {"type": "finish", "finishReason": "other"},
    ]


@pytest.mark.parametrize(
    ("finish", "usage"),
    [
        (
            {"messageMetadata": {"usage": {"inputTokens": 3, "outputTokens": 4}}},
            {"inputTokens": 3, "outputTokens": 4},
        ),
        ({"messageMetadata": {"usage": {"inputTokens": 3, "other": "x"}}}, {"inputTokens": 3}),
        ({"messageMetadata": {"usage": {"inputTokens": -1}}}, None),
        ({"messageMetadata": {"usage": {"inputTokens": 2.5}}}, None),
        ({"messageMetadata": {"usage": "many"}}, None),
        ({"messageMetadata": {"totalUsage": {"inputTokens": 3}}}, None),
        ({"messageMetadata": None}, None),
        (
            {"usage": {"outputTokens": 1}, "messageMetadata": {"usage": {"outputTokens": 9}}},
            {"outputTokens": 1},
        ),
    ],
)
async def test_usage_in_the_finish_metadata_becomes_the_finish_usage(
    finish: dict[str, Any], usage: dict[str, int] | None
) -> None:
    events = plain(await run([chunk("finish", finishReason="stop", **finish), DONE]))
    expected = {"type": "finish", "finishReason": "stop", **finish}
    if usage is not None:
        expected["usage"] = usage
    assert events == [expected]


FRAMINGS: list[tuple[str, bytes]] = [
    (
        "keep-alive comments",
        b": stream-open\n\n" + b"".join(text_answer("a", "b")) + b": keep-alive\n\n",
    ),
    ("CRLF", b"".join(text_answer("a", "b")).replace(b"\n", b"\r\n")),
    ("CR", b"".join(text_answer("a", "b")).replace(b"\n", b"\r")),
    ("a BOM", b"\xef\xbb\xbf" + b"".join(text_answer("a", "b"))),
    ("no space after data:", b"".join(text_answer("a", "b")).replace(b"data: ", b"data:")),
    (
        "JSON over two data lines, other fields",
        b"event: message\nid: 7\nretry: 10\nfoo: bar\n"
        + b"".join(text_answer("a", "b")).replace(b'"type": ', b'"type":\ndata: ', 1),
    ),
]


@pytest.mark.parametrize(("name", "body"), FRAMINGS, ids=[name for name, _ in FRAMINGS])
async def test_sse_framing_variants_give_the_same_events(name: str, body: bytes) -> None:
    expected = plain(await run(text_answer("a", "b")))
    assert plain(await run([body])) == expected, name
    # The same bytes, one byte per HTTP chunk: line ends and UTF-8 split anywhere.
    assert plain(await run([body[i : i + 1] for i in range(len(body))])) == expected, name


async def test_utf8_split_across_reads() -> None:
    body = b"".join(text_answer("Grüße 👋"))
    at = body.index("👋".encode()) + 2
    events = await run([body[:at], 0.01, body[at:]])
    assert "".join(e["delta"] for e in plain(events) if e["type"] == "text-delta") == "Grüße 👋"


async def test_the_connection_is_reused_after_a_complete_answer() -> None:
    async with served(answering(text_answer("a"))) as (server, adapter):
        await collect(adapter)
        await collect(adapter)
    assert len(server.requests) == 2 and server.connections == 1 and server.disconnects == 0


# --- the request ----------------------------------------------------------------------------


async def test_the_request_is_what_default_chat_transport_sends() -> None:
    async with served(
        answering(text_answer("a")),
        headers={"authorization": "Bearer k", "x-app": "ai_chat"},
        body={"scenario": "demo", "nested": {"a": [1, None]}},
        chat_id="chat-1",
    ) as (server, adapter):
        await collect(adapter)
    (request,) = server.requests
    assert request.method == "POST" and request.path == "/api/chat"
    assert request.headers["content-type"] == "application/json"
    assert request.headers["authorization"] == "Bearer k"
    assert request.headers["x-app"] == "ai_chat"
    assert list(request.json()) == ["scenario", "nested", "id", "messages", "trigger"]
    assert request.json() == {
        "scenario": "demo",
        "nested": {"a": [1, None]},
        "id": "chat-1",
        "messages": [{"id": "u1", "role": "user", "parts": [{"type": "text", "text": "Hello"}]}],
        "trigger": "submit-message",
    }
    # Compact JSON, raw UTF-8, as JSON.stringify writes it.
    assert b'"trigger":"submit-message"' in request.body


HISTORY: list[dict[str, Any]] = [
    {"id": "s1", "role": "system", "parts": [{"type": "text", "text": "Be brief."}]},
    {
        "id": "u1",
        "role": "user",
        "metadata": {"sentAt": 1},
        "parts": [
            {
                "type": "file",
                "mediaType": "image/png",
                "url": "https://e.com/a.png",
                "filename": "a.png",
            },
            {"type": "data-context", "id": "d1", "data": {"page": 3}},
            {"type": "text", "text": "Weather?"},
        ],
    },
    {
        "id": "a1",
        "role": "assistant",
        "parts": [
            {"type": "reasoning", "text": "Call tools.", "providerMetadata": {"p": {"sig": "x"}}},
            {"type": "text", "text": "Checking."},
            {
                "type": "tool-call",
                "toolCallId": "c1",
                "toolName": "weather",
                "input": {"city": "Oslo"},
            },
            {"type": "tool-call", "toolCallId": "c2", "toolName": "clock", "input": {}},
        ],
    },
    {
        "id": "t1",
        "role": "tool",
        "parts": [
            {"type": "tool-result", "toolCallId": "c1", "toolName": "weather", "output": {"t": 3}},
            {
                "type": "tool-result",
                "toolCallId": "c2",
                "toolName": "clock",
                "output": {"e": 1},
                "isError": True,
            },
        ],
    },
]
HISTORY_AS_UI: list[dict[str, Any]] = [
    {"id": "s1", "role": "system", "parts": [{"type": "text", "text": "Be brief."}]},
    {
        "id": "u1",
        "role": "user",
        "parts": [
            {
                "type": "file",
                "mediaType": "image/png",
                "url": "https://e.com/a.png",
                "filename": "a.png",
            },
            {"type": "data-context", "data": {"page": 3}, "id": "d1"},
            {"type": "text", "text": "Weather?"},
        ],
        "metadata": {"sentAt": 1},
    },
    {
        "id": "a1",
        "role": "assistant",
        "parts": [
            {
                "type": "reasoning",
                "text": "Call tools.",
                "state": "done",
                "providerMetadata": {"p": {"sig": "x"}},
            },
            {"type": "text", "text": "Checking.", "state": "done"},
            {
                "type": "tool-weather",
                "toolCallId": "c1",
                "state": "output-available",
                "input": {"city": "Oslo"},
                "output": {"t": 3},
            },
            {
                "type": "tool-clock",
                "toolCallId": "c2",
                "state": "output-error",
                "input": {},
                "errorText": '{"e": 1}',
            },
        ],
    },
]


async def test_a_history_with_tool_results_continues_the_assistant_message() -> None:
    async with served(answering(text_answer("a")), chat_id="c") as (server, adapter):
        await collect(adapter, {"messages": HISTORY})
    body = server.requests[0].json()
    assert body["messages"] == HISTORY_AS_UI
    assert body["messageId"] == "a1"  # the transport's continuation of an assistant turn
    assert body["trigger"] == "submit-message"


async def test_per_request_body_keys_and_other_providers_options() -> None:
    request = {
        **HELLO,
        "parameters": {
            "providerOptions": {"ui-stream": {"mode": "fast"}, "openai": {"store": False}}
        },
    }
    async with served(answering(text_answer("a")), body={"mode": "slow", "user": "u"}) as (
        server,
        adapter,
    ):
        await collect(adapter, request)
    body = server.requests[0].json()
    assert body["mode"] == "fast" and body["user"] == "u" and "openai" not in body
    assert "messageId" not in body


REFUSED: list[tuple[dict[str, Any], str, str]] = [
    ({**HELLO, "tools": [{"name": "f", "inputSchema": {}}]}, "$.tools", "no tool definitions"),
    (
        {**HELLO, "parameters": {"temperature": 0.2}},
        "$.parameters.temperature",
        "no model parameters",
    ),
    (
        {**HELLO, "parameters": {"providerOptions": {"ui-stream": {"id": "x"}}}},
        '$.parameters.providerOptions["ui-stream"].id',
        "written by the adapter",
    ),
    (
        {"messages": [HISTORY[1], HISTORY[3]]},
        "$.messages[1].parts[0].toolCallId",
        "no earlier assistant message",
    ),
    (
        {"messages": [*HISTORY, HISTORY[3]]},
        "$.messages[4].parts[0].toolCallId",
        "already has a result",
    ),
    (
        {
            "messages": [
                HISTORY[2],
                {
                    "id": "t",
                    "role": "tool",
                    "parts": [
                        {
                            "type": "tool-result",
                            "toolCallId": "c1",
                            "toolName": "x",
                            "output": 1,
                        }
                    ],
                },
            ]
        },
        "$.messages[1].parts[0].toolName",
        'made to "weather"',
    ),
]


@pytest.mark.parametrize(("request_", "path", "words"), REFUSED)
async def test_what_the_protocol_cannot_carry_is_refused_before_sending(
    request_: Mapping[str, Any], path: str, words: str
) -> None:
    error, events, server = await failure(answering(text_answer("a")), ValidationError, request_)
    assert error.path == path and words in error.reason
    assert events == [] and server.requests == []


async def test_the_chat_id_is_made_once_per_adapter() -> None:
    async with served(answering(text_answer("a"))) as (server, adapter):
        await collect(adapter)
        await collect(adapter)
    first, second = (r.json()["id"] for r in server.requests)
    assert first == second == adapter.chat_id
    assert len(first) == 16 and first.isalnum() and first.isascii()
    assert UIMessageStreamAdapter("http://h/api/chat").chat_id != first


# --- stricter than the AI SDK client ---------------------------------------------------------


async def test_an_error_status_is_a_provider_error_with_the_body_text() -> None:
    error, events, _ = await failure(
        answering([b"model overloaded"], status=503, headers={"content-type": "text/plain"}),
        ProviderError,
    )
    assert events == []
    assert error.status == 503 and error.provider == "ui-stream"
    assert "503 Service Unavailable: model overloaded" in error.detail


async def test_an_error_body_is_bounded_and_retry_after_is_read() -> None:
    huge = [b"x" * 65536] * 64  # 4 MiB: only the first 16 KiB is read
    error, _, _ = await failure(
        answering(huge, status=429, headers={"retry-after": "7"}), ProviderError, closed=True
    )
    assert error.status == 429 and error.retry_after == 7.0
    assert len(str(error)) < 700 and "... (+15,884 chars)" in str(error)


@pytest.mark.parametrize(
    "content_type",
    ["application/json", "text/plain", "", "text/event-stream; charset=iso-8859-1"],
)
async def test_a_wrong_content_type_is_a_provider_error(content_type: str) -> None:
    headers = {**HEADERS, "content-type": content_type}
    if not content_type:
        del headers["content-type"]
    error, events, _ = await failure(answering(text_answer("a"), headers=headers), ProviderError)
    assert events == [] and error.status == 200
    assert "not text/event-stream" in error.detail and "data: " in error.detail


async def test_a_utf8_charset_parameter_is_accepted() -> None:
    headers = {**HEADERS, "content-type": 'Text/Event-Stream; charset="UTF-8"'}
    async with served(answering(text_answer("a"), headers=headers)) as (_server, adapter):
        assert types(await collect(adapter))[-1] == "finish"


async def test_the_protocol_header_is_required_unless_waived() -> None:
    headers = {k: v for k, v in HEADERS.items() if k != "x-vercel-ai-ui-message-stream"}
    error, _, _ = await failure(answering(text_answer("a"), headers=headers), ProviderError)
    assert "x-vercel-ai-ui-message-stream: v1" in error.detail
    assert "require_protocol_header=False" in error.detail
    async with served(
        answering(text_answer("a"), headers=headers), require_protocol_header=False
    ) as (_s, adapter):
        assert types(await collect(adapter))[-1] == "finish"


async def test_an_unknown_protocol_version_is_refused_even_when_the_header_is_waived() -> None:
    headers = {**HEADERS, "x-vercel-ai-ui-message-stream": "v2"}
    error, _, _ = await failure(
        answering(text_answer("a"), headers=headers),
        ProviderError,
        require_protocol_header=False,
    )
    assert "version 'v2'" in error.detail


PREFIX = [
    chunk("start"),
    chunk("start-step"),
    chunk("text-start", id="t"),
    chunk("text-delta", id="t", delta="Par"),
]
PREFIX_TYPES = ["start", "start-step", "text-start", "text-delta"]


async def test_an_error_chunk_is_a_remote_stream_error_after_the_events_before_it() -> None:
    steps = [
        *PREFIX,
        chunk("error", errorText="the model exploded"),
        chunk("text-end", id="t"),
        DONE,
    ]
    error, events, _ = await failure(answering(steps), RemoteStreamError)
    assert types(events) == PREFIX_TYPES
    assert isinstance(error, RemoteStreamError) and isinstance(error, ProviderError)
    assert error.error_text == "the model exploded"
    assert "the server reported an error in the stream: the model exploded" in str(error)


async def test_a_long_error_text_is_kept_whole_and_shown_shortened() -> None:
    text = "e" * 5000
    error, _, _ = await failure(
        answering([chunk("error", errorText=text), DONE]), RemoteStreamError
    )
    assert error.error_text == text and len(str(error)) < 700


async def test_an_abort_chunk_is_a_truncated_stream() -> None:
    steps = [*PREFIX, chunk("abort", reason="user left"), DONE]
    error, events, _ = await failure(answering(steps), TruncatedStreamError)
    assert types(events) == PREFIX_TYPES
    assert error.error_type == "abort" and "user left" in error.detail


async def test_an_interrupted_finish_is_a_truncated_stream() -> None:
    steps = [chunk("start"), chunk("finish", finishReason="interrupted"), DONE]
    error, events, _ = await failure(answering(steps), TruncatedStreamError)
    assert types(events) == ["start"] and error.error_type == "interrupted"


async def test_a_body_that_ends_without_finish_is_truncated() -> None:
    steps = [*PREFIX, chunk("text-end", id="t"), chunk("finish-step"), DONE]
    error, events, _ = await failure(answering(steps), TruncatedStreamError)
    assert types(events) == [*PREFIX_TYPES, "text-end", "finish-step"]
    assert "without a finish chunk" in error.detail


async def test_a_body_that_ends_without_done_is_truncated_after_finish() -> None:
    error, events, _ = await failure(answering(text_answer("a")[:-1]), TruncatedStreamError)
    assert types(events)[-1] == "finish"
    assert "without data: [DONE]" in error.detail


async def test_a_data_event_after_done_is_an_error() -> None:
    for extra in (chunk("text-delta", id="t1", delta="late"), DONE, b"data: junk\n\n"):
        error, events, _ = await failure(answering([*text_answer("a"), extra]), ProviderError)
        assert types(events)[-1] == "finish"
        assert "after data: [DONE]" in error.detail
    # Comments after [DONE] are fine.
    assert types(await run([*text_answer("a"), b": bye\n\n"]))[-1] == "finish"


@pytest.mark.parametrize(
    "ending",
    [b"data: [DONE]\n", b"data: [DONE]", b"data: [DONE]\r"],
    ids=["no blank line", "no line end", "a lone CR"],
)
async def test_a_final_event_without_its_blank_line_is_a_format_error(ending: bytes) -> None:
    error, events, _ = await failure(answering([*text_answer("a")[:-1], ending]), StreamFormatError)
    assert types(events)[-1] == "finish"
    assert "ended in the middle" in error.reason


async def test_a_final_finish_without_its_blank_line_is_not_delivered() -> None:
    steps = [*text_answer("a")[:-2], b'data: {"type":"finish","finishReason":"stop"}\n']
    _, events, _ = await failure(answering(steps), StreamFormatError)
    assert "finish" not in types(events)


@pytest.mark.parametrize(
    ("line", "words"),
    [
        (b"data: {not json\n\n", "not JSON"),
        (b"data: [1, 2]\n\n", "expected a chunk object"),
        (b'data: "text"\n\n', "expected a chunk object"),
        (b'data: {"delta": "x"}\n\n', "expected a chunk object with a string type"),
        (b'data: {"type": 7}\n\n', "expected a chunk object with a string type"),
        (b'data: {"type": ["text-delta"]}\n\n', "expected a chunk object with a string type"),
        (b'data: {"type": {"t": 1}}\n\n', "expected a chunk object with a string type"),
        (b'data: {"type": "text-delta", "id": "t", "delta": NaN}\n\n', "not JSON"),
        (b"data: " + b"[" * 200_000 + b"\n\n", "not JSON (RecursionError"),
        (b'data: {"type": "telepathy"}\n\n', "unknown chunk type 'telepathy'"),
        (
            b'data: {"type": "tool-approval-request", "approvalId": "a", "toolCallId": "c"}\n\n',
            "cannot express",
        ),
        (b'data: {"type": "reset-step"}\n\n', "cannot express"),
        (b'data: {"type": "error"}\n\n', "without a string errorText"),
    ],
)
async def test_a_malformed_or_unknown_chunk_is_a_provider_error(line: bytes, words: str) -> None:
    error, events, _ = await failure(
        answering([*PREFIX, line, *text_answer("x")]), ProviderError, closed=True
    )
    assert type(error) is ProviderError
    assert types(events) == PREFIX_TYPES
    assert words in error.detail and "event #5" in error.detail
    assert len(str(error)) < 700


@pytest.mark.parametrize(
    ("steps", "words"),
    [
        ([chunk("start"), chunk("text-delta", id="t", delta="x")], "never started"),
        ([chunk("start-step"), chunk("start")], "start must be the first event"),
        ([chunk("tool-output-available", toolCallId="c", output=1)], "unknown tool call"),
        ([chunk("text-start", id="t"), chunk("finish", finishReason="stop")], "still open"),
        ([chunk("finish", finishReason="stop"), chunk("start-step")], "after finish"),
        ([chunk("start", messageId=None)], "leave an optional field out"),
        ([chunk("finish", finishReason="done")], "finishReason"),
    ],
)
async def test_an_out_of_order_or_misshapen_chunk_is_a_protocol_error(
    steps: list[bytes], words: str
) -> None:
    error, _, _ = await failure(answering([*steps, *text_answer("x")]), ProtocolError, closed=True)
    assert words in str(error)


async def test_bytes_that_are_not_utf8_are_a_format_error() -> None:
    error, _, _ = await failure(
        answering([b'data: {"type":"start"}\n\n', b"data: \xff\n\n"]), StreamFormatError
    )
    assert "not valid UTF-8" in error.reason


# --- hostile servers -------------------------------------------------------------------------


class Endless(Sequence[Step]):
    """``first``, then the same step forever (as far as any client will read)."""

    def __init__(self, step: Step, first: Sequence[Step] = ()) -> None:
        self.step: Step = step
        self.first: Sequence[Step] = first

    def __len__(self) -> int:
        return 2**62

    @overload
    def __getitem__(self, index: int) -> Step: ...
    @overload
    def __getitem__(self, index: slice) -> Sequence[Step]: ...
    def __getitem__(self, index: int | slice) -> Step | Sequence[Step]:
        if isinstance(index, slice):
            raise TypeError("not sliceable")
        return self.first[index] if index < len(self.first) else self.step

    def __iter__(self) -> Iterator[Step]:
        yield from self.first
        while True:
            yield self.step


async def test_an_endless_stream_of_comments_hits_the_body_bound() -> None:
    handler = answering(Endless(b": keep-alive\n\n" * 4096))
    error, _, server = await failure(
        handler, LimitExceededError, closed=True, max_body_bytes=1 << 20
    )
    assert error.limit == "max_body_bytes" and error.limit_value == 1 << 20
    assert server.disconnects == 1


async def test_an_endless_answer_hits_the_response_bound() -> None:
    prefix = b"".join(text_answer()[:3])
    delta = chunk("text-delta", id="t1", delta="x" * 1000)
    async with served(answering(Endless(delta * 16, [prefix]))) as (server, adapter):
        with anyio.fail_after(HANG_GUARD), pytest.raises(LimitExceededError) as caught:
            async with create_chat_stream(adapter, HELLO, max_response_chars=200_000) as stream:
                async for _event in stream:
                    pass
        await released(server)
    assert caught.value.limit == "max_response_chars"


async def test_a_huge_line_hits_the_line_bound() -> None:
    handler = answering([b"data: ", *([b"x" * 4096] * 64), b"\n\n"])
    error, _, _ = await failure(handler, LimitExceededError, closed=True, max_line_chars=10_000)
    assert error.limit == "max_line_chars"


async def test_a_huge_event_hits_the_event_bound() -> None:
    handler = answering([b"data: x\n" * 10_000, b"\n"])
    error, _, _ = await failure(handler, LimitExceededError, max_event_chars=5_000)
    assert error.limit == "max_event_chars"


async def test_a_slow_drip_without_events_hits_the_idle_timeout() -> None:
    drip: list[Step] = [chunk("start")]
    for byte in b'data: {"type": "start-step"}':
        drip += [0.05, bytes([byte])]
    error, events, server = await failure(
        answering(drip), ProviderError, closed=True, idle_timeout=0.3
    )
    assert types(events) == ["start"]
    assert "no event within idle_timeout=0.3 s" in error.detail
    assert server.disconnects == 1


async def test_keep_alive_comments_count_as_activity() -> None:
    steps: list[Step] = [chunk("start")]
    for _ in range(12):
        steps += [0.05, b": keep-alive\n\n"]
    assert types(await run([*steps, *text_answer("a")[1:]], idle_timeout=0.4))[-1] == "finish"


async def test_no_response_within_the_idle_timeout() -> None:
    async def silent(stream: SocketStream) -> None:
        async with stream:
            await anyio.sleep_forever()

    listener = await anyio.create_tcp_listener(local_host="127.0.0.1")
    port = listener.extra(SocketAttribute.local_port)
    detail = ""
    async with listener, anyio.create_task_group() as tg:
        tg.start_soon(listener.serve, silent)
        async with UIMessageStreamAdapter(
            f"http://127.0.0.1:{port}/api/chat", idle_timeout=0.2
        ) as adapter:
            with anyio.fail_after(HANG_GUARD), pytest.raises(ProviderError) as caught:
                await collect(adapter)
            detail = caught.value.detail
        tg.cancel_scope.cancel()
    assert "no response from" in detail and "idle_timeout=0.2 s" in detail


async def test_a_refused_connection_is_a_provider_error() -> None:
    listener = await anyio.create_tcp_listener(local_host="127.0.0.1")
    port = listener.extra(SocketAttribute.local_port)
    await listener.aclose()
    async with UIMessageStreamAdapter(f"http://127.0.0.1:{port}/api/chat") as adapter:
        with pytest.raises(ProviderError) as caught:
            await collect(adapter)
    assert "could not reach" in caught.value.detail
    assert isinstance(caught.value.__cause__, httpx.ConnectError)


@pytest.mark.parametrize("how", ["drop", "reset"])
async def test_a_connection_lost_mid_answer_is_a_provider_error(how: Step) -> None:
    error, events, _ = await failure(answering([*PREFIX, how]), ProviderError)
    assert type(error) is ProviderError and types(events) == PREFIX_TYPES
    assert "connection" in error.detail
    assert isinstance(error.__cause__, httpx.TransportError)


# --- stopping closes the connection ----------------------------------------------------------

SLOW: list[Step] = [*PREFIX, "hang"]


class TestReleaseOnStop(ReleaseOnStop):
    slow: ClassVar[Sequence[Step]] = SLOW
    headers: ClassVar[Mapping[str, str]] = HEADERS
    small_response_chars: ClassVar[int] = 40

    def serve_adapter(
        self, handler: Callable[[Request], Response]
    ) -> AbstractAsyncContextManager[tuple[FakeServer, AIChatAdapter]]:
        return served(handler)

    async def test_abort_from_another_task_closes_the_connection(self) -> None:
        async with self._slow() as (server, adapter):
            with anyio.fail_after(HANG_GUARD):
                async with (
                    create_chat_stream(adapter, HELLO) as stream,
                    anyio.create_task_group() as tg,
                ):
                    await stream.__anext__()

                    async def abort_soon() -> None:
                        await anyio.sleep(0.05)
                        stream.abort("the user pressed stop")

                    tg.start_soon(abort_soon)
                    with pytest.raises(StreamClosedError):
                        while True:
                            await stream.__anext__()
            await released(server)


# --- construction and ownership -------------------------------------------------------------


async def test_an_owned_client_is_closed_by_aclose_and_async_with() -> None:
    adapter = UIMessageStreamAdapter("http://127.0.0.1:9/api/chat")
    assert not adapter.client.is_closed
    await adapter.aclose()
    assert adapter.client.is_closed
    async with UIMessageStreamAdapter("http://127.0.0.1:9/api/chat") as owned:
        client = owned.client
    assert client.is_closed


async def test_a_callers_client_is_used_and_never_closed() -> None:
    async with serve(answering(text_answer("a"))) as server, httpx.AsyncClient() as client:
        async with UIMessageStreamAdapter(server.url("/api/chat"), client=client) as adapter:
            assert adapter.client is client
            await collect(adapter)
        assert not client.is_closed
        assert "caller's client" in repr(adapter)


def test_the_defaults() -> None:
    assert DEFAULT_IDLE_TIMEOUT == 60.0
    adapter = UIMessageStreamAdapter("https://example.com/api/chat", chat_id="c")
    assert adapter.url == "https://example.com/api/chat" and adapter.chat_id == "c"
    assert (
        repr(adapter)
        == "UIMessageStreamAdapter('https://example.com/api/chat', chat_id='c', owned client)"
    )


@pytest.mark.parametrize(
    ("kwargs", "parameter"),
    [
        ({"url": "example.com/api/chat"}, "url"),
        ({"url": "ftp://example.com/x"}, "url"),
        ({"url": ""}, "url"),
        ({"url": "http://"}, "url"),
        ({"client": object()}, "client"),
        ({"headers": {"x": 1}}, "headers"),
        ({"headers": {"x": "a\r\nb"}}, "headers"),
        ({"headers": {"é": "a"}}, "headers"),
        ({"headers": {"x y": "a"}}, "headers"),
        ({"headers": {"x": "é"}}, "headers"),
        ({"headers": {"": "a"}}, "headers"),
        ({"body": {"id": "x"}}, "body"),
        ({"body": {"messageId": "x"}}, "body"),
        ({"body": {"x": math.nan}}, "body"),
        ({"body": ["x"]}, "body"),
        ({"chat_id": ""}, "chat_id"),
        ({"idle_timeout": 0}, "idle_timeout"),
        ({"idle_timeout": -1.0}, "idle_timeout"),
        ({"idle_timeout": math.inf}, "idle_timeout"),
        ({"idle_timeout": "5"}, "idle_timeout"),
        ({"max_line_chars": 0}, "max_line_chars"),
        ({"max_event_chars": 1.5}, "max_event_chars"),
        ({"max_body_bytes": -1}, "max_body_bytes"),
        ({"max_error_body_bytes": 0}, "max_error_body_bytes"),
        ({"require_protocol_header": 1}, "require_protocol_header"),
    ],
)
def test_invalid_construction(kwargs: dict[str, Any], parameter: str) -> None:
    arguments: dict[str, Any] = {"url": "http://127.0.0.1:9/api/chat", **kwargs}
    with pytest.raises(ConfigurationError) as caught:
        UIMessageStreamAdapter(**arguments)
    assert caught.value.parameter == parameter


def test_idle_timeout_none_disables_it() -> None:
    UIMessageStreamAdapter("http://127.0.0.1:9/api/chat", idle_timeout=None)


# --- the conformance kit --------------------------------------------------------------------


def conformance_handler(request: Request) -> Response:
    """``{"slow": true}`` in the body: one event, then nothing until the client hangs up."""
    if request.json().get("slow"):
        return Response(200, HEADERS, SLOW)
    return Response(200, HEADERS, text_answer("Hello", " there"))


class TestUIMessageStreamConformance(ServedConformance):
    def handler(self, request: Request) -> Response:
        return conformance_handler(request)

    def client(self, server: FakeServer) -> httpx.AsyncClient:
        return httpx.AsyncClient()

    def make_adapter(
        self, client: httpx.AsyncClient, server: FakeServer, *, slow: bool
    ) -> UIMessageStreamAdapter:
        return UIMessageStreamAdapter(server.url("/api/chat"), client=client, body={"slow": slow})
