"""Event validation through a real stream: shape, sequence, JSON limits and response size."""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping, Sequence
from typing import Any, cast

import anyio
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ai_chat import (
    AIChatError,
    LimitExceededError,
    ProtocolError,
    create_chat_stream,
)
from ai_chat._events import EVENT_TYPES, FINISH_REASONS
from ai_chat.adapters import ScriptedAdapter
from ai_chat.limits import FrozenDict, JSONLimits, json_size
from ai_chat.types import ChatEvent

HANG_GUARD = 10.0

REQUEST: dict[str, object] = {
    "messages": [{"id": "u1", "role": "user", "parts": [{"type": "text", "text": "hi"}]}]
}

Event = dict[str, Any]


def thaw(value: object) -> object:
    if isinstance(value, dict):
        return {k: thaw(v) for k, v in cast("dict[str, object]", value).items()}
    if isinstance(value, list | tuple):
        return [thaw(v) for v in cast("tuple[object, ...]", value)]
    return value


def walk(value: object) -> Iterator[object]:
    yield value
    if isinstance(value, dict):
        for item in cast("dict[object, object]", value).values():
            yield from walk(item)
    elif isinstance(value, list | tuple):
        for item in cast("tuple[object, ...]", value):
            yield from walk(item)


async def run(
    events: Sequence[object], **options: Any
) -> tuple[list[ChatEvent], AIChatError | None]:
    """Stream ``events`` through ScriptedAdapter; the delivered events and the error, if any."""
    adapter = ScriptedAdapter(cast("Sequence[Mapping[str, object]]", events))
    stream = create_chat_stream(adapter, REQUEST, **options)
    delivered: list[ChatEvent] = []
    with anyio.fail_after(HANG_GUARD):
        try:
            async for event in stream:
                delivered.append(event)
        except AIChatError as exc:
            return delivered, exc
    return delivered, None


async def run_ok(events: Sequence[object], **options: Any) -> list[ChatEvent]:
    delivered, error = await run(events, **options)
    assert error is None, repr(error)
    return delivered


async def run_error(
    events: Sequence[object], **options: Any
) -> tuple[list[ChatEvent], AIChatError]:
    delivered, error = await run(events, **options)
    assert error is not None, "the stream passed"
    return delivered, error


S: Event = {"type": "start"}
F: Event = {"type": "finish", "finishReason": "stop"}
SS: Event = {"type": "start-step"}
FS: Event = {"type": "finish-step"}


def ts(i: str = "t") -> Event:
    return {"type": "text-start", "id": i}


def td(i: str = "t", delta: str = "x") -> Event:
    return {"type": "text-delta", "id": i, "delta": delta}


def te(i: str = "t") -> Event:
    return {"type": "text-end", "id": i}


def rs(i: str = "r") -> Event:
    return {"type": "reasoning-start", "id": i}


def rd(i: str = "r", delta: str = "x") -> Event:
    return {"type": "reasoning-delta", "id": i, "delta": delta}


def re_(i: str = "r") -> Event:
    return {"type": "reasoning-end", "id": i}


def tis(c: str = "c", name: str = "search") -> Event:
    return {"type": "tool-input-start", "toolCallId": c, "toolName": name}


def tid(c: str = "c", text: str = "{") -> Event:
    return {"type": "tool-input-delta", "toolCallId": c, "inputTextDelta": text}


def tia(c: str = "c", name: str = "search", value: object = None) -> Event:
    return {"type": "tool-input-available", "toolCallId": c, "toolName": name, "input": value}


def tie(c: str = "c", name: str = "search") -> Event:
    return {
        "type": "tool-input-error",
        "toolCallId": c,
        "toolName": name,
        "input": "{",
        "errorText": "bad",
    }


def toa(c: str = "c", output: object = 1, **extra: object) -> Event:
    return {"type": "tool-output-available", "toolCallId": c, "output": output, **extra}


def toe(c: str = "c") -> Event:
    return {"type": "tool-output-error", "toolCallId": c, "errorText": "failed"}


# --------------------------------------------------------------------------------------
# Valid streams
# --------------------------------------------------------------------------------------

PM = {"openai": {"itemId": "it_1"}, "anthropic": {}}

EVERY_EVENT: list[Event] = [
    {"type": "start", "messageId": "msg-1", "messageMetadata": {"model": "m", "n": [1, 2]}},
    {"type": "start-step"},
    {"type": "reasoning-start", "id": "r1", "providerMetadata": PM},
    {"type": "reasoning-delta", "id": "r1", "delta": "Thinking"},
    {"type": "reasoning-delta", "id": "r1", "delta": " more", "providerMetadata": PM},
    {"type": "reasoning-end", "id": "r1", "providerMetadata": PM},
    {"type": "text-start", "id": "t1"},
    {"type": "text-start", "id": "t2", "providerMetadata": PM},
    {"type": "text-delta", "id": "t1", "delta": "Hello"},
    {"type": "text-delta", "id": "t2", "delta": ""},
    {"type": "text-delta", "id": "t1", "delta": ' "world"\n\\ \x00 \U0001f600', "x-extra": [1]},
    {"type": "text-delta", "id": "t2", "delta": "b", "providerMetadata": PM},
    {"type": "text-end", "id": "t1"},
    {
        "type": "text-end",
        "id": "t2",
        "providerMetadata": PM,
        "citations": [{"source": {"type": "source", "sourceType": "url"}, "startIndex": 0}],
    },
    {"type": "text-start", "id": "t1"},
    {"type": "text-delta", "id": "t1", "delta": "reused"},
    {"type": "text-end", "id": "t1"},
    {
        "type": "tool-input-start",
        "toolCallId": "c1",
        "toolName": "weather",
        "inputEncoding": "json",
        "providerExecuted": False,
        "dynamic": False,
        "title": "Weather",
        "toolMetadata": {"k": [1]},
        "providerMetadata": PM,
    },
    {"type": "tool-input-delta", "toolCallId": "c1", "inputTextDelta": '{"city":'},
    {"type": "tool-input-delta", "toolCallId": "c1", "inputTextDelta": '"Berlin"}'},
    {
        "type": "tool-input-available",
        "toolCallId": "c1",
        "toolName": "weather",
        "input": {"city": "Berlin"},
        "providerExecuted": False,
        "dynamic": False,
        "title": "Weather",
        "toolMetadata": {},
        "providerMetadata": PM,
    },
    {"type": "data-weather", "id": "w1", "data": {"status": "loading"}},
    {"type": "data-weather", "id": "w1", "data": {"status": "done"}, "transient": False},
    {"type": "data-note", "data": None, "transient": True},
    {"type": "tool-output-available", "toolCallId": "c1", "output": {"t": 21}, "preliminary": True},
    {"type": "tool-output-available", "toolCallId": "c1", "output": {"t": 22}, "preliminary": True},
    {
        "type": "tool-output-available",
        "toolCallId": "c1",
        "output": {"t": 23},
        "providerExecuted": False,
        "dynamic": False,
        "preliminary": False,
        "toolMetadata": {},
        "providerMetadata": PM,
    },
    {"type": "tool-input-available", "toolCallId": "c2", "toolName": "search", "input": None},
    {
        "type": "tool-output-error",
        "toolCallId": "c2",
        "errorText": "boom",
        "providerExecuted": True,
        "dynamic": True,
        "toolMetadata": {"x": None},
        "providerMetadata": PM,
    },
    {"type": "tool-input-start", "toolCallId": "c3", "toolName": "calc", "inputEncoding": "text"},
    {"type": "tool-input-delta", "toolCallId": "c3", "inputTextDelta": "1+"},
    {
        "type": "tool-input-error",
        "toolCallId": "c3",
        "toolName": "calc",
        "input": "1+",
        "errorText": "bad input",
        "title": "Calc",
    },
    {"type": "tool-input-available", "toolCallId": "c4", "toolName": "local", "input": [1, "a"]},
    {"type": "message-metadata", "messageMetadata": {"step": 1}},
    {"type": "finish-step"},
    {"type": "start-step", "x-step": {"unknown": True}},
    {
        "type": "source-url",
        "sourceId": "s1",
        "url": "https://example.com",
        "title": "Example",
        "providerMetadata": PM,
    },
    {"type": "source-url", "sourceId": "s2", "url": "https://example.org"},
    {
        "type": "source-document",
        "sourceId": "s3",
        "mediaType": "application/pdf",
        "title": "Doc",
        "filename": "doc.pdf",
        "providerMetadata": PM,
    },
    {"type": "source-document", "sourceId": "s4", "mediaType": "text/plain", "title": ""},
    {"type": "file", "url": "data:image/png;base64,iVBOR", "mediaType": "image/png"},
    {
        "type": "file",
        "url": "https://x/y.pdf",
        "mediaType": "application/pdf",
        "providerMetadata": PM,
    },
    {"type": "message-metadata", "messageMetadata": None},
    {"type": "finish-step"},
    {
        "type": "finish",
        "finishReason": "tool-calls",
        "usage": {
            "inputTokens": 10,
            "outputTokens": 20,
            "totalTokens": 30,
            "cachedInputTokens": 0,
            "reasoningTokens": 5,
            "x-unknown-count": 1.5,
        },
        "messageMetadata": [1, {"a": None}],
        "x-extra": "kept",
    },
]

# The vocabulary, as documented (the AI SDK's UI message stream chunks ai_chat accepts).
VOCABULARY = {
    "start",
    "start-step",
    "finish-step",
    "text-start",
    "text-delta",
    "text-end",
    "reasoning-start",
    "reasoning-delta",
    "reasoning-end",
    "tool-input-start",
    "tool-input-delta",
    "tool-input-available",
    "tool-input-error",
    "tool-output-available",
    "tool-output-error",
    "source-url",
    "source-document",
    "file",
    "message-metadata",
    "finish",
    "data-<name>",
}


def test_the_tables_cover_the_whole_vocabulary() -> None:
    assert set(EVENT_TYPES) == VOCABULARY
    covered = {"data-<name>" if e["type"].startswith("data-") else e["type"] for e in EVERY_EVENT}
    assert covered == VOCABULARY
    assert {name for name, _ in MINIMAL} | {"data-<name>"} >= VOCABULARY - {"data-<name>"}
    assert set(FINISH_REASONS) == {
        "stop",
        "length",
        "content-filter",
        "tool-calls",
        "error",
        "other",
    }


@pytest.mark.anyio
async def test_every_event_type_passes_unchanged_and_frozen() -> None:
    delivered = await run_ok(EVERY_EVENT)
    assert len(delivered) == len(EVERY_EVENT)
    for got, sent in zip(delivered, EVERY_EVENT, strict=True):
        assert type(got) is FrozenDict
        assert thaw(got) == sent
        assert list(got.keys()) == list(sent.keys())
        for node in walk(got):
            assert type(node) not in (list, dict), node
    # Unknown extra keys are preserved, also on the events the fast path could take.
    assert cast("dict[str, object]", delivered[10])["x-extra"] == (1,)
    assert cast("dict[str, object]", delivered[-1])["x-extra"] == "kept"
    assert json.loads(json.dumps(delivered)) == EVERY_EVENT


def wrap(*events: Event) -> list[Event]:
    return [S, *events, F]


MINIMAL: list[tuple[str, list[Event]]] = [
    ("start", [{"type": "start", "messageId": "m", "messageMetadata": None}, F]),
    ("start-step", wrap(SS, FS)),
    ("finish-step", wrap(SS, {"type": "finish-step", "x": 1}, SS, FS)),
    ("text-start", wrap(ts(), te())),
    ("text-delta", wrap(ts(), td(), td(delta=""), te())),
    ("text-end", wrap(ts("a"), ts("b"), te("b"), te("a"))),
    ("reasoning-start", wrap(rs(), re_())),
    ("reasoning-delta", wrap(rs(), rd(), rd(delta="\n"), re_())),
    ("reasoning-end", wrap(rs("same"), ts("same"), re_("same"), te("same"))),
    ("tool-input-start", wrap(tis(), tia())),
    ("tool-input-delta", wrap(tis(), tid(), tid(text=""), tia())),
    ("tool-input-available", wrap(tia(value={"q": "x"}))),
    ("tool-input-error", wrap(tie())),
    ("tool-output-available", wrap(tia(), toa(preliminary=True), toa(preliminary=True), toa())),
    ("tool-output-error", wrap(tis(), tia(), toe())),
    ("source-url", wrap({"type": "source-url", "sourceId": "s", "url": "u"})),
    (
        "source-document",
        wrap({"type": "source-document", "sourceId": "s", "mediaType": "a/b", "title": "t"}),
    ),
    ("file", wrap({"type": "file", "url": "u", "mediaType": "a/b"})),
    ("message-metadata", wrap({"type": "message-metadata", "messageMetadata": "anything"})),
    ("data-x", wrap({"type": "data-x", "data": [1, 2]}, {"type": "data-x", "id": "", "data": 0})),
    ("finish", [{"type": "finish", "finishReason": "stop", "usage": {}}]),
    ("no-start", [ts(), td(), te(), F]),
    ("text-reuse-after-end", wrap(ts(), te(), ts(), td(), te())),
    ("tool-output-after-input-error", wrap(tie(), toe())),
    (
        "step-with-everything",
        wrap(SS, rs(), rd(), re_(), ts(), td(), te(), tis(), tid(), tia(), FS),
    ),
    ("two-steps", wrap(SS, FS, SS, FS)),
    ("tool-call-left-without-output", wrap(tis(), tid(), tia())),
]


@pytest.mark.anyio
@pytest.mark.parametrize("events", [pytest.param(e, id=n) for n, e in MINIMAL])
async def test_valid_sequences_pass(events: list[Event]) -> None:
    delivered = await run_ok(events)
    assert [thaw(e) for e in delivered] == events


@pytest.mark.anyio
@pytest.mark.parametrize("reason", FINISH_REASONS)
async def test_every_finish_reason_passes(reason: str) -> None:
    finish = {"type": "finish", "finishReason": reason, "usage": {"inputTokens": 0}}
    delivered = await run_ok([S, finish])
    assert delivered[-1] == finish


# --------------------------------------------------------------------------------------
# Shape violations: ProtocolError with index, type and path; earlier events delivered
# --------------------------------------------------------------------------------------

OPEN = [S, ts(), rs(), tis()]  # a text part "t", a reasoning part "r", a tool call "c"

SHAPES: list[Any] = [
    # (events before, bad event, path, words in the reason)
    pytest.param(
        [],
        {"type": "start", "messageId": None},
        "$.messageId",
        ["leave an optional field out"],
        id="start.messageId-null",
    ),
    pytest.param(
        [],
        {"type": "start", "messageId": ""},
        "$.messageId",
        ["non-empty string"],
        id="start.messageId-empty",
    ),
    pytest.param(
        [],
        {"type": "start", "messageId": 5},
        "$.messageId",
        ["non-empty string"],
        id="start.messageId-int",
    ),
    pytest.param(
        [S], {"type": "text-start"}, "$", ['missing required field "id"'], id="text-start.no-id"
    ),
    pytest.param(
        [S],
        {"type": "text-start", "id": ""},
        "$.id",
        ["non-empty string"],
        id="text-start.empty-id",
    ),
    pytest.param(
        [S], {"type": "text-start", "id": 1}, "$.id", ["non-empty string"], id="text-start.int-id"
    ),
    pytest.param(
        [S],
        {"type": "text-start", "id": "t", "providerMetadata": None},
        "$.providerMetadata",
        ["leave an optional field out"],
        id="text-start.pm-null",
    ),
    pytest.param(
        [S],
        {"type": "text-start", "id": "t", "providerMetadata": {"openai": "x"}},
        "$.providerMetadata",
        ["object of objects"],
        id="text-start.pm-flat",
    ),
    pytest.param(
        OPEN,
        {"type": "text-delta", "id": "t"},
        "$",
        ['missing required field "delta"'],
        id="text-delta.no-delta",
    ),
    pytest.param(
        OPEN,
        {"type": "text-delta", "id": "t", "delta": 5},
        "$.delta",
        ["expected a string"],
        id="text-delta.int",
    ),
    pytest.param(
        OPEN,
        {"type": "text-delta", "id": "t", "delta": None},
        "$.delta",
        ["expected a string", "null"],
        id="text-delta.null",
    ),
    pytest.param(
        OPEN,
        {"type": "text-delta", "id": "t", "delta": ["x"]},
        "$.delta",
        ["expected a string"],
        id="text-delta.list",
    ),
    pytest.param(
        OPEN,
        {"type": "text-delta", "delta": "x", "x": "y"},
        "$",
        ['missing required field "id"'],
        id="text-delta.no-id",
    ),
    pytest.param(
        OPEN,
        {"type": "text-delta", "id": "", "delta": "x"},
        "$.id",
        ["non-empty string"],
        id="text-delta.empty-id",
    ),
    pytest.param(
        OPEN, {"type": "text-end"}, "$", ['missing required field "id"'], id="text-end.no-id"
    ),
    pytest.param(
        OPEN, {"type": "text-end", "id": None}, "$.id", ["non-empty string"], id="text-end.null-id"
    ),
    pytest.param(
        OPEN,
        {"type": "reasoning-start", "id": ""},
        "$.id",
        ["non-empty string"],
        id="reasoning-start.empty-id",
    ),
    pytest.param(
        OPEN,
        {"type": "reasoning-delta", "id": "r", "delta": 1.5},
        "$.delta",
        ["expected a string"],
        id="reasoning-delta.float",
    ),
    pytest.param(
        OPEN,
        {"type": "reasoning-end", "id": "r", "providerMetadata": []},
        "$.providerMetadata",
        ["object of objects"],
        id="reasoning-end.pm-list",
    ),
    pytest.param(
        [S],
        {"type": "tool-input-start", "toolCallId": "c"},
        "$",
        ['missing required field "toolName"'],
        id="tool-input-start.no-name",
    ),
    pytest.param(
        [S],
        {"type": "tool-input-start", "toolCallId": "", "toolName": "s"},
        "$.toolCallId",
        ["non-empty string"],
        id="tool-input-start.empty-id",
    ),
    pytest.param(
        [S],
        {"type": "tool-input-start", "toolCallId": "c", "toolName": ""},
        "$.toolName",
        ["non-empty string"],
        id="tool-input-start.empty-name",
    ),
    pytest.param(
        [S],
        {**tis(), "inputEncoding": "xml"},
        "$.inputEncoding",
        ['"json", "text"'],
        id="tool-input-start.encoding",
    ),
    pytest.param(
        [S],
        {**tis(), "providerExecuted": "yes"},
        "$.providerExecuted",
        ["a boolean"],
        id="tool-input-start.providerExecuted",
    ),
    pytest.param(
        [S],
        {**tis(), "dynamic": None},
        "$.dynamic",
        ["leave an optional field out"],
        id="tool-input-start.dynamic-null",
    ),
    pytest.param([S], {**tis(), "title": 3}, "$.title", ["a string"], id="tool-input-start.title"),
    pytest.param(
        [S],
        {**tis(), "toolMetadata": [1]},
        "$.toolMetadata",
        ["JSON object"],
        id="tool-input-start.toolMetadata",
    ),
    pytest.param(
        OPEN,
        {"type": "tool-input-delta", "toolCallId": "c", "inputTextDelta": 1},
        "$.inputTextDelta",
        ["a string"],
        id="tool-input-delta.int",
    ),
    pytest.param(
        OPEN,
        {"type": "tool-input-delta", "inputTextDelta": "x"},
        "$",
        ['missing required field "toolCallId"'],
        id="tool-input-delta.no-id",
    ),
    pytest.param(
        OPEN,
        {"type": "tool-input-available", "toolCallId": "c", "toolName": "search"},
        "$",
        ['missing required field "input"'],
        id="tool-input-available.no-input",
    ),
    pytest.param(
        [S],
        {**tia(), "toolCallId": ""},
        "$.toolCallId",
        ["non-empty string"],
        id="tool-input-available.empty-id",
    ),
    pytest.param(
        [S],
        {**tia(), "title": None},
        "$.title",
        ["leave an optional field out"],
        id="tool-input-available.title-null",
    ),
    pytest.param(
        [S],
        {**tie(), "errorText": None},
        "$.errorText",
        ["a string"],
        id="tool-input-error.errorText-null",
    ),
    pytest.param(
        [S],
        {"type": "tool-input-error", "toolCallId": "c", "toolName": "s", "errorText": "e"},
        "$",
        ['missing required field "input"'],
        id="tool-input-error.no-input",
    ),
    pytest.param(
        [S, tia()],
        {"type": "tool-output-available", "toolCallId": "c"},
        "$",
        ['missing required field "output"'],
        id="tool-output-available.no-output",
    ),
    pytest.param(
        [S, tia()],
        toa(preliminary="no"),
        "$.preliminary",
        ["a boolean"],
        id="tool-output-available.preliminary",
    ),
    pytest.param(
        [S, tia()],
        toa(toolMetadata=None),
        "$.toolMetadata",
        ["leave an optional field out"],
        id="tool-output-available.toolMetadata-null",
    ),
    pytest.param(
        [S, tia()],
        {"type": "tool-output-error", "toolCallId": "c", "errorText": 5},
        "$.errorText",
        ["a string"],
        id="tool-output-error.errorText",
    ),
    pytest.param(
        [S],
        {"type": "source-url", "sourceId": "s", "url": ""},
        "$.url",
        ["non-empty string"],
        id="source-url.empty-url",
    ),
    pytest.param(
        [S],
        {"type": "source-url", "url": "u"},
        "$",
        ['missing required field "sourceId"'],
        id="source-url.no-id",
    ),
    pytest.param(
        [S],
        {"type": "source-url", "sourceId": "", "url": "u"},
        "$.sourceId",
        ["non-empty string"],
        id="source-url.empty-id",
    ),
    pytest.param(
        [S],
        {"type": "source-url", "sourceId": "s", "url": "u", "title": None},
        "$.title",
        ["leave an optional field out"],
        id="source-url.title-null",
    ),
    pytest.param(
        [S],
        {"type": "source-document", "sourceId": "s", "mediaType": "a/b"},
        "$",
        ['missing required field "title"'],
        id="source-document.no-title",
    ),
    pytest.param(
        [S],
        {
            "type": "source-document",
            "sourceId": "s",
            "mediaType": "a/b",
            "title": "t",
            "filename": None,
        },
        "$.filename",
        ["leave an optional field out"],
        id="source-document.filename-null",
    ),
    pytest.param(
        [S],
        {"type": "file", "url": "u", "mediaType": ""},
        "$.mediaType",
        ["non-empty string"],
        id="file.empty-mediaType",
    ),
    pytest.param(
        [S],
        {"type": "file", "mediaType": "a/b"},
        "$",
        ['missing required field "url"'],
        id="file.no-url",
    ),
    pytest.param(
        [S], {"type": "data-x"}, "$", ['missing required field "data"'], id="data.no-data"
    ),
    pytest.param(
        [S],
        {"type": "data-x", "data": 1, "transient": "yes"},
        "$.transient",
        ["a boolean"],
        id="data.transient",
    ),
    pytest.param(
        [S],
        {"type": "data-x", "data": 1, "id": None},
        "$.id",
        ["leave an optional field out"],
        id="data.id-null",
    ),
    pytest.param(
        [S],
        {"type": "message-metadata"},
        "$",
        ['missing required field "messageMetadata"'],
        id="message-metadata.missing",
    ),
    pytest.param(
        [S],
        {"type": "finish"},
        "$",
        ['missing required field "finishReason"'],
        id="finish.no-reason",
    ),
    pytest.param(
        [S],
        {"type": "finish", "finishReason": None},
        "$.finishReason",
        ['"stop"'],
        id="finish.reason-null",
    ),
    pytest.param(
        [S],
        {"type": "finish", "finishReason": "done"},
        "$.finishReason",
        ['"stop", "length", "content-filter", "tool-calls", "error", "other"'],
        id="finish.reason-unknown",
    ),
    pytest.param(
        [S],
        {"type": "finish", "finishReason": "STOP"},
        "$.finishReason",
        ['"stop"'],
        id="finish.reason-case",
    ),
    pytest.param(
        [S],
        {**F, "usage": None},
        "$.usage",
        ["usage object", "leave an optional field out"],
        id="finish.usage-null",
    ),
    pytest.param([S], {**F, "usage": [1]}, "$.usage", ["usage object"], id="finish.usage-list"),
    pytest.param(
        [S],
        {**F, "usage": {"inputTokens": -1}},
        "$.usage",
        ["inputTokens is a non-negative integer"],
        id="finish.usage-negative",
    ),
    pytest.param(
        [S],
        {**F, "usage": {"outputTokens": 1.5}},
        "$.usage",
        ["outputTokens"],
        id="finish.usage-float",
    ),
    pytest.param(
        [S],
        {**F, "usage": {"totalTokens": 3.0}},
        "$.usage",
        ["totalTokens"],
        id="finish.usage-whole-float",
    ),
    pytest.param(
        [S],
        {**F, "usage": {"cachedInputTokens": True}},
        "$.usage",
        ["cachedInputTokens"],
        id="finish.usage-bool",
    ),
    pytest.param(
        [S],
        {**F, "usage": {"reasoningTokens": None}},
        "$.usage",
        ["reasoningTokens"],
        id="finish.usage-null-count",
    ),
    pytest.param(
        [S], {**F, "usage": {"inputTokens": "3"}}, "$.usage", ["inputTokens"], id="finish.usage-str"
    ),
]


@pytest.mark.anyio
@pytest.mark.parametrize(("before", "bad", "path", "words"), SHAPES)
async def test_shape_violations(
    before: list[Event], bad: Event, path: str, words: list[str]
) -> None:
    delivered, error = await run_error([*before, bad, F])
    assert isinstance(error, ProtocolError), repr(error)
    assert [thaw(e) for e in delivered] == before
    assert error.event_index == len(before)
    assert error.event_type == bad["type"]
    assert error.path == path
    for word in words:
        assert word in error.reason, (word, error.reason)
    assert f"event #{len(before)}" in str(error)


@pytest.mark.anyio
@pytest.mark.parametrize(
    "kind", ["error", "abort", "tool-approval-request", "x", "data-", "reset-step", "Text-Delta"]
)
async def test_unknown_event_types(kind: str) -> None:
    bad = {"type": kind, "errorText": "e", "approvalId": "a", "toolCallId": "c"}
    delivered, error = await run_error([S, SS, bad, FS, F])
    assert isinstance(error, ProtocolError)
    assert len(delivered) == 2
    assert error.event_index == 2
    assert error.event_type == kind
    assert repr(kind) in error.reason or f'"{kind}"' in error.reason


@pytest.mark.anyio
@pytest.mark.parametrize(
    "bad",
    [{"id": "t"}, {"type": None}, {"type": 3}, {"type": ["start"]}],
    ids=["missing", "null", "int", "list"],
)
async def test_events_without_a_type_string(bad: Event) -> None:
    delivered, error = await run_error([S, bad, F])
    assert isinstance(error, ProtocolError)
    assert len(delivered) == 1
    assert error.event_index == 1
    assert error.event_type is None


@pytest.mark.anyio
@pytest.mark.parametrize(
    "bad",
    ["a string", None, [{"type": "start"}], ("start",), 5, b"{}"],
    ids=["str", "none", "list", "tuple", "int", "bytes"],
)
async def test_non_object_events(bad: object) -> None:
    delivered, error = await run_error([S, ts(), bad, te(), F])
    assert isinstance(error, ProtocolError)
    assert len(delivered) == 2
    assert error.event_index == 2
    assert error.event_type is None
    assert "expected an event object" in error.reason


@pytest.mark.anyio
async def test_a_non_object_first_event() -> None:
    delivered, error = await run_error([None, F])
    assert isinstance(error, ProtocolError)
    assert delivered == []
    assert error.event_index == 0


# --------------------------------------------------------------------------------------
# Sequence violations
# --------------------------------------------------------------------------------------

SEQUENCES: list[Any] = [
    # (events before, bad event, words in the reason)
    pytest.param([S], td(), ["never started"], id="text-delta-unknown"),
    pytest.param([S, ts("a")], td("b"), ['"b"', "never started"], id="text-delta-other-id"),
    pytest.param(
        [S, ts(), td(), te()], td(), ["never started (or already ended)"], id="text-delta-after-end"
    ),
    pytest.param(
        [S, ts(), te()],
        {**td(), "providerMetadata": {}},
        ["never started"],
        id="text-delta-after-end-general",
    ),
    pytest.param([S, rs("t")], td("t"), ["never started"], id="text-delta-for-reasoning-id"),
    pytest.param([S], te(), ["never started"], id="text-end-unknown"),
    pytest.param([S, ts(), te()], te(), ["already ended"], id="text-end-twice"),
    pytest.param([S, ts()], ts(), ["already open"], id="text-start-twice"),
    pytest.param([S], rd(), ["never started"], id="reasoning-delta-unknown"),
    pytest.param([S, rs(), re_()], rd(), ["already ended"], id="reasoning-delta-after-end"),
    pytest.param([S, ts("r")], rd("r"), ["never started"], id="reasoning-delta-for-text-id"),
    pytest.param([S], re_(), ["never started"], id="reasoning-end-unknown"),
    pytest.param([S, rs(), re_()], re_(), ["already ended"], id="reasoning-end-twice"),
    pytest.param([S, rs()], rs(), ["already open"], id="reasoning-start-twice"),
    pytest.param([SS], S, ["first event"], id="start-not-first"),
    pytest.param([S], S, ["first event"], id="two-starts"),
    pytest.param([S, ts(), te()], S, ["first event"], id="start-late"),
    pytest.param([S, SS], SS, ["previous step is still open"], id="nested-start-step"),
    pytest.param([S], FS, ["without an open step"], id="finish-step-without-step"),
    pytest.param([S, SS, FS], FS, ["without an open step"], id="finish-step-twice"),
    pytest.param([S], tid(), ["not streaming"], id="tool-input-delta-unknown"),
    pytest.param(
        [S, tis(), tia()], tid(), ["not streaming"], id="tool-input-delta-after-available"
    ),
    pytest.param(
        [S, tia()], tid(), ["not streaming"], id="tool-input-delta-after-available-no-start"
    ),
    pytest.param([S, tis(), tie()], tid(), ["not streaming"], id="tool-input-delta-after-error"),
    pytest.param(
        [S, tis(name="search")],
        tia(name="weather"),
        ['"search"', '"weather"'],
        id="tool-input-available-other-name",
    ),
    pytest.param(
        [S, tis(name="search")],
        tie(name="weather"),
        ['"search"', '"weather"'],
        id="tool-input-error-other-name",
    ),
    pytest.param([S, tis()], tis(), ["already started"], id="tool-input-start-twice"),
    pytest.param([S, tia()], tis(), ["already started"], id="tool-input-start-after-available"),
    pytest.param(
        [S, tis(), tia()], tia(), ["already has its input"], id="tool-input-available-twice"
    ),
    pytest.param(
        [S, tia()], tia(), ["already has its input"], id="tool-input-available-twice-no-start"
    ),
    pytest.param(
        [S, tie()], tia(), ["already has its input"], id="tool-input-available-after-error"
    ),
    pytest.param([S], toa(), ["unknown tool call"], id="tool-output-available-unknown"),
    pytest.param(
        [S, tia("a")], toa("b"), ['unknown tool call "b"'], id="tool-output-available-other-id"
    ),
    pytest.param([S], toe(), ["unknown tool call"], id="tool-output-error-unknown"),
    pytest.param(
        [S, tis()],
        toa(),
        ["before its input was available"],
        id="tool-output-available-while-streaming",
    ),
    pytest.param(
        [S, tis(), tid()],
        toe(),
        ["before its input was available"],
        id="tool-output-error-while-streaming",
    ),
    pytest.param([S, tia(), toa()], toa(), ["already has its output"], id="two-final-outputs"),
    pytest.param(
        [S, tia(), toa()],
        toa(preliminary=True),
        ["already has its output"],
        id="preliminary-after-final",
    ),
    pytest.param([S, tia(), toa()], toe(), ["already has its output"], id="error-after-output"),
    pytest.param([S, tia(), toe()], toa(), ["already has its output"], id="output-after-error"),
    pytest.param([S, tia(), toe()], toe(), ["already has its output"], id="two-errors"),
    pytest.param(
        [S, tia(), toa(preliminary=False)],
        toa(),
        ["already has its output"],
        id="preliminary-false-is-final",
    ),
    pytest.param([S, ts()], F, ['"t"', "still open"], id="finish-text-open"),
    pytest.param([S, rs()], F, ['"r"', "still open"], id="finish-reasoning-open"),
    pytest.param(
        [S, ts("a"), te("a"), ts("b"), td("b")],
        F,
        ['"b"', "still open"],
        id="finish-second-text-open",
    ),
    pytest.param([S, tis()], F, ['"c"', "still streaming"], id="finish-tool-input-streaming"),
    pytest.param(
        [S, tis(), tid()], F, ["still streaming"], id="finish-tool-input-streaming-after-delta"
    ),
    pytest.param([S, SS], F, ["step is still open"], id="finish-step-open"),
    pytest.param(
        [S, SS, ts(), td(), te()], F, ["step is still open"], id="finish-step-open-after-text"
    ),
]


@pytest.mark.anyio
@pytest.mark.parametrize(("before", "bad", "words"), SEQUENCES)
async def test_sequence_violations(before: list[Event], bad: Event, words: list[str]) -> None:
    # Whatever follows the bad event would otherwise complete the stream.
    delivered, error = await run_error([*before, bad, F])
    assert isinstance(error, ProtocolError), repr(error)
    assert [thaw(e) for e in delivered] == before
    assert error.event_index == len(before)
    assert error.event_type == bad["type"]
    for word in words:
        assert word in error.reason, (word, error.reason)


@pytest.mark.anyio
@pytest.mark.parametrize(
    "events",
    [[], [S], [S, ts(), td(), te()], [S, SS, FS], [S, tis(), tid()], [S, ts()]],
    ids=["empty", "start", "text", "step", "tool-streaming", "text-open"],
)
async def test_an_adapter_ending_without_finish(events: list[Event]) -> None:
    delivered, error = await run_error(events)
    assert isinstance(error, ProtocolError)
    assert [thaw(e) for e in delivered] == events
    assert error.event_index is None
    assert "without a finish event" in error.reason
    assert f"after {len(events)} events" in error.reason


@pytest.mark.anyio
@pytest.mark.parametrize(
    "after",
    [S, F, td(), {"type": "data-x", "data": 1}, "not an event"],
    ids=["start", "finish", "text-delta", "data", "non-object"],
)
async def test_an_event_after_finish_is_seen_after_finish(after: object) -> None:
    # The consumer receives finish; the next read raises.
    events = [S, ts(), td(), te(), F, after]
    adapter = ScriptedAdapter(cast("Sequence[Mapping[str, object]]", events))
    stream = create_chat_stream(adapter, REQUEST)
    with anyio.fail_after(HANG_GUARD):
        for expected in events[:5]:
            assert thaw(await stream.__anext__()) == expected
        with pytest.raises(ProtocolError) as caught:
            await stream.__anext__()
    assert caught.value.event_index == 5
    assert "after finish" in caught.value.reason

    # The same with async for: the loop has seen finish when it raises.
    delivered, error = await run_error(events)
    assert isinstance(error, ProtocolError)
    assert [thaw(e) for e in delivered] == events[:5]
    assert delivered[-1]["type"] == "finish"


@pytest.mark.anyio
async def test_a_valid_sequence_after_finish_is_still_rejected() -> None:
    events = [S, F, ts(), td(), te()]
    delivered, error = await run_error(events)
    assert isinstance(error, ProtocolError)
    assert error.event_index == 2
    assert [e["type"] for e in delivered] == ["start", "finish"]


# --------------------------------------------------------------------------------------
# Per-event JSON limits
# --------------------------------------------------------------------------------------


@pytest.mark.anyio
async def test_a_huge_delta_exceeds_max_chars() -> None:
    before = [S, ts(), td(delta="small")]
    delivered, error = await run_error([*before, td(delta="x" * 2_000_000), te(), F])
    assert isinstance(error, LimitExceededError), repr(error)
    assert error.limit == "max_chars"
    assert error.limit_value == JSONLimits().max_chars
    assert error.path == "$.delta"
    assert [thaw(e) for e in delivered] == before


@pytest.mark.anyio
async def test_a_huge_tool_input_exceeds_max_chars() -> None:
    before = [S]
    delivered, error = await run_error([*before, tia(value={"big": ["y" * 600_000] * 2}), F])
    assert isinstance(error, LimitExceededError)
    assert error.limit == "max_chars"
    assert error.path.startswith("$.input.big")
    assert len(delivered) == 1


@pytest.mark.anyio
async def test_nan_inside_tool_input_is_a_protocol_error_naming_it() -> None:
    delivered, error = await run_error([S, tia(value={"a": [1, float("nan")]}), F])
    assert isinstance(error, ProtocolError)
    assert error.event_index == 1
    assert error.event_type == "tool-input-available"
    assert error.path == "$.input.a[1]"
    assert "NaN" in error.reason
    assert len(delivered) == 1


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("bad", "path"),
    [
        ({"type": "data-x", "data": {"s": {1, 2}}}, "$.data.s"),
        ({"type": "data-x", "data": {1: "int key"}}, "$.data"),
        ({"type": "data-x", "data": float("inf")}, "$.data"),
        ({"type": "text-start", "id": "t\ud800"}, "$.id"),
        ({"type": "message-metadata", "messageMetadata": [10**400]}, "$.messageMetadata[0]"),
    ],
    ids=["set", "int-key", "inf", "lone-surrogate", "huge-int"],
)
async def test_non_json_values_in_events(bad: Event, path: str) -> None:
    delivered, error = await run_error([S, bad, F])
    assert isinstance(error, ProtocolError)
    assert error.event_index == 1
    assert error.path == path
    assert len(delivered) == 1


@pytest.mark.anyio
async def test_a_lone_surrogate_in_a_delta_is_rejected() -> None:
    delivered, error = await run_error([S, ts(), td(delta="a\udc00b"), te(), F])
    assert isinstance(error, ProtocolError)
    assert error.event_index == 2
    assert error.event_type == "text-delta"
    assert error.path == "$.delta"
    assert len(delivered) == 2


@pytest.mark.anyio
async def test_custom_limits_apply_to_each_event() -> None:
    limits = JSONLimits(max_depth=4)  # the request needs 4: messages > message > parts > part
    ok: Event = {"type": "data-x", "data": {"a": {"b": {}}}}  # event > data > a > b: depth 4
    deeper: Event = {"type": "data-x", "data": {"a": {"b": {"c": {}}}}}
    assert thaw(await run_ok([S, ok, F], limits=limits)) == [S, ok, F]
    delivered, error = await run_error([S, deeper, F], limits=limits)
    assert isinstance(error, LimitExceededError)
    assert error.limit == "max_depth"
    assert len(delivered) == 1


@pytest.mark.anyio
async def test_custom_max_chars_applies_to_deltas_exactly() -> None:
    delta = td(delta="x" * 50)
    limits = JSONLimits(max_chars=json_size(delta))
    assert len(await run_ok([S, ts(), delta, te(), F], limits=limits)) == 5
    longer = td(delta="x" * 51)
    delivered, error = await run_error([S, ts(), longer, te(), F], limits=limits)
    assert isinstance(error, LimitExceededError)
    assert error.limit == "max_chars"
    assert len(delivered) == 2


# --------------------------------------------------------------------------------------
# max_response_chars
# --------------------------------------------------------------------------------------


def story() -> list[Event]:
    return [
        S,
        SS,
        rs(),
        rd(delta='Let me think "hard"\n'),
        re_(),
        ts(),
        *[td(delta=f"word{i} ") for i in range(20)],
        td(delta="émoji 😀 and \\ and \t"),
        te(),
        tis(),
        tid(text='{"q":'),
        tid(text='"x"}'),
        tia(value={"q": "x"}),
        toa(output={"results": [1, 2, 3]}),
        {"type": "data-x", "data": {"nested": [None, True, 1.5]}},
        FS,
        {**F, "usage": {"inputTokens": 1, "outputTokens": 2, "totalTokens": 3}},
    ]


@pytest.mark.anyio
async def test_max_response_chars_exactly_at_the_limit_passes() -> None:
    events = story()
    total = sum(json_size(e) for e in events)
    assert len(await run_ok(events, max_response_chars=total)) == len(events)


@pytest.mark.anyio
async def test_max_response_chars_one_less_fails_at_the_last_event() -> None:
    events = story()
    total = sum(json_size(e) for e in events)
    delivered, error = await run_error(events, max_response_chars=total - 1)
    assert isinstance(error, LimitExceededError), repr(error)
    assert error.limit == "max_response_chars"
    assert error.limit_value == total - 1
    assert error.observed == total
    assert error.path == "$"
    assert [thaw(e) for e in delivered] == events[:-1]


@pytest.mark.anyio
@pytest.mark.parametrize("cut", [1, 3, 5, 6, 10, 26, 28, 31])
async def test_max_response_chars_cut_anywhere(cut: int) -> None:
    # The limit admits exactly the first `cut` events: the event at `cut` fails.
    events = story()
    limit = sum(json_size(e) for e in events[:cut])
    delivered, error = await run_error(events, max_response_chars=limit)
    assert isinstance(error, LimitExceededError), repr(error)
    assert error.limit == "max_response_chars"
    assert error.observed == limit + json_size(events[cut])
    assert [thaw(e) for e in delivered] == events[:cut]


@pytest.mark.anyio
async def test_default_max_response_chars_is_a_million() -> None:
    # Many deltas, each well within max_chars, adding up past the default total.
    chunk = "y" * 100_000
    events = [S, ts(), *[td(delta=chunk) for _ in range(11)], te(), F]
    delivered, error = await run_error(events)
    assert isinstance(error, LimitExceededError)
    assert error.limit == "max_response_chars"
    assert error.limit_value == 1_000_000
    sizes = [json_size(e) for e in events]
    running = fitting = 0
    for size in sizes:
        if running + size > 1_000_000:
            break
        running += size
        fitting += 1
    assert len(delivered) == fitting


# --------------------------------------------------------------------------------------
# The text-delta fast path measures exactly like the general path
# --------------------------------------------------------------------------------------

SPECIAL = st.sampled_from(
    [
        '"',
        "\\",
        "\x00",
        "\x01",
        "\x08",
        "\t",
        "\n",
        "\x0b",
        "\x0c",
        "\r",
        "\x1f",
        "\x7f",
        "\u2028",
        "\ufeff",
        "é",
        "€",
        "\U0001f600",
        "\U00010000",
        "/",
        "<",
        " ",
    ]
)
DELTA_TEXT = st.text(alphabet=st.one_of(SPECIAL, st.characters(codec="utf-8")), max_size=40)
PART_ID = st.text(alphabet=st.one_of(SPECIAL, st.characters(codec="utf-8")), min_size=1, max_size=8)


def js_length(value: object) -> int:
    """JSON.stringify(value).length, from Python's compact JSON text in UTF-16."""
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    return len(text.encode("utf-16-le")) // 2


@pytest.mark.slow
@pytest.mark.anyio
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    deltas=st.lists(DELTA_TEXT, min_size=1, max_size=8),
    part_id=PART_ID,
    kind=st.sampled_from(["text", "reasoning"]),
)
async def test_fast_path_sizes_match_json_size(deltas: list[str], part_id: str, kind: str) -> None:
    events: list[Event] = [
        {"type": f"{kind}-start", "id": part_id},
        *[{"type": f"{kind}-delta", "id": part_id, "delta": d} for d in deltas],
        {"type": f"{kind}-end", "id": part_id},
        F,
    ]
    sizes = [json_size(e) for e in events]
    assert sizes == [js_length(e) for e in events]
    total = sum(sizes)

    delivered = await run_ok(events, max_response_chars=total)
    assert [thaw(e) for e in delivered] == events

    delivered, error = await run_error(events, max_response_chars=total - 1)
    assert isinstance(error, LimitExceededError)
    assert error.limit == "max_response_chars"
    assert error.observed == total
    assert len(delivered) == len(events) - 1

    # Cutting right after the last delta: the deltas' running total is exact.
    through_deltas = sum(sizes[:-2])
    delivered, error = await run_error(events, max_response_chars=through_deltas)
    assert isinstance(error, LimitExceededError)
    assert error.observed == through_deltas + sizes[-2]
    assert len(delivered) == len(events) - 2
