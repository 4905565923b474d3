"""The OpenAI adapter on the Responses API, through the genuine openai SDK over loopback HTTP.

Every test drives ``openai.AsyncOpenAI`` against :mod:`tests.adapters._support.fake_server`,
which sends the Responses API wire format (``event: <type>`` plus ``data: {"type":
<type>, "sequence_number": n, ...}``, raw UTF-8, no ``[DONE]``) with chunked encoding,
and records what it received.
"""

from __future__ import annotations

import json
from collections.abc import AsyncGenerator, Callable, Mapping, Sequence
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from typing import Any, ClassVar, cast

import httpx2
import openai
import pytest

from ai_chat import (
    AIChatAdapter,
    ConfigurationError,
    ProviderError,
    StreamFormatError,
    TruncatedStreamError,
    ValidationError,
)
from ai_chat.adapters.openai import OpenAIChatAdapter
from ai_chat.types import ChatEvent

from .._support.common import (
    HELLO,
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
from .test_chat import (
    MODEL,
    PDF,
    PNG,
    REQUEST_ID,
    SSE_HEADERS,
    json_error,
    sdk_client,
    streaming,
)

RESPONSE_ID = "resp_0123456789"
USAGE = {
    "input_tokens": 11,
    "input_tokens_details": {"cached_tokens": 3},
    "output_tokens": 7,
    "output_tokens_details": {"reasoning_tokens": 2},
    "total_tokens": 18,
}
MAPPED_USAGE = {
    "inputTokens": 11,
    "outputTokens": 7,
    "totalTokens": 18,
    "cachedInputTokens": 3,
    "reasoningTokens": 2,
}


# --- the wire format ----------------------------------------------------------------------


class Wire:
    """A Responses API event stream as OpenAI sends it: each event named twice (the
    ``event:`` line and the data's ``type``), numbered by ``sequence_number``; the
    terminal event repeats the whole response with its output items and usage."""

    def __init__(self) -> None:
        self.sequence = 0
        self.output: list[dict[str, Any]] = []

    def event(self, kind: str, **fields: Any) -> bytes:
        data = {"type": kind, "sequence_number": self.sequence, **fields}
        self.sequence += 1
        return sse(data, event=kind)

    def response(self, status: str, **fields: Any) -> dict[str, Any]:
        return {
            "id": RESPONSE_ID,
            "object": "response",
            "created_at": 1_760_000_000,
            "status": status,
            "background": False,
            "error": None,
            "incomplete_details": None,
            "instructions": None,
            "max_output_tokens": None,
            "model": MODEL,
            "output": list(self.output),
            "parallel_tool_calls": True,
            "previous_response_id": None,
            "reasoning": {"effort": None, "summary": None},
            "store": True,
            "temperature": 1.0,
            "text": {"format": {"type": "text"}, "verbosity": "medium"},
            "tool_choice": "auto",
            "tools": [],
            "top_p": 1.0,
            "truncation": "disabled",
            "usage": None,
            "user": None,
            "metadata": {},
            **fields,
        }

    def created(self) -> list[bytes]:
        return [
            self.event("response.created", response=self.response("in_progress")),
            self.event("response.in_progress", response=self.response("in_progress")),
        ]

    # message items

    def message_added(self, index: int, item_id: str) -> list[bytes]:
        item: dict[str, Any] = {
            "id": item_id,
            "type": "message",
            "status": "in_progress",
            "content": [],
            "role": "assistant",
        }
        part: dict[str, Any] = {
            "type": "output_text",
            "annotations": [],
            "logprobs": [],
            "text": "",
        }
        where = {"item_id": item_id, "output_index": index, "content_index": 0}
        return [
            self.event("response.output_item.added", output_index=index, item=item),
            self.event("response.content_part.added", **where, part=part),
        ]

    def text_delta(self, index: int, item_id: str, delta: str) -> bytes:
        return self.event(
            "response.output_text.delta",
            item_id=item_id,
            output_index=index,
            content_index=0,
            delta=delta,
            logprobs=[],
            obfuscation="x1",
        )

    def message_done(self, index: int, item_id: str, text: str) -> list[bytes]:
        part: dict[str, Any] = {
            "type": "output_text",
            "annotations": [],
            "logprobs": [],
            "text": text,
        }
        item: dict[str, Any] = {
            "id": item_id,
            "type": "message",
            "status": "completed",
            "content": [part],
            "role": "assistant",
        }
        self.output.append(item)
        where = {"item_id": item_id, "output_index": index, "content_index": 0}
        return [
            self.event("response.output_text.done", **where, text=text, logprobs=[]),
            self.event("response.content_part.done", **where, part=part),
            self.event("response.output_item.done", output_index=index, item=item),
        ]

    def message(self, index: int, item_id: str, *deltas: str) -> list[bytes]:
        return [
            *self.message_added(index, item_id),
            *(self.text_delta(index, item_id, delta) for delta in deltas),
            *self.message_done(index, item_id, "".join(deltas)),
        ]

    # reasoning items

    def reasoning(
        self,
        index: int,
        item_id: str,
        summaries: Sequence[Sequence[str]],
        encrypted: str | None = None,
    ) -> list[bytes]:
        added: dict[str, Any] = {"id": item_id, "type": "reasoning", "summary": []}
        steps = [self.event("response.output_item.added", output_index=index, item=added)]
        where = {"item_id": item_id, "output_index": index}
        for number, deltas in enumerate(summaries):
            text = "".join(deltas)
            steps.append(
                self.event(
                    "response.reasoning_summary_part.added",
                    **where,
                    summary_index=number,
                    part={"type": "summary_text", "text": ""},
                )
            )
            steps += [
                self.event(
                    "response.reasoning_summary_text.delta",
                    **where,
                    summary_index=number,
                    delta=delta,
                    obfuscation="x1",
                )
                for delta in deltas
            ]
            steps += [
                self.event(
                    "response.reasoning_summary_text.done", **where, summary_index=number, text=text
                ),
                self.event(
                    "response.reasoning_summary_part.done",
                    **where,
                    summary_index=number,
                    part={"type": "summary_text", "text": text},
                ),
            ]
        done: dict[str, Any] = {
            "id": item_id,
            "type": "reasoning",
            "summary": [{"type": "summary_text", "text": "".join(d)} for d in summaries],
        }
        if encrypted is not None:
            done["encrypted_content"] = encrypted
        self.output.append(done)
        steps.append(self.event("response.output_item.done", output_index=index, item=done))
        return steps

    # function call items

    def call_added(self, index: int, item_id: str, call_id: str, name: str) -> bytes:
        item = {
            "id": item_id,
            "type": "function_call",
            "status": "in_progress",
            "arguments": "",
            "call_id": call_id,
            "name": name,
        }
        return self.event("response.output_item.added", output_index=index, item=item)

    def call_delta(self, index: int, item_id: str, fragment: str) -> bytes:
        return self.event(
            "response.function_call_arguments.delta",
            item_id=item_id,
            output_index=index,
            delta=fragment,
            obfuscation="x1",
        )

    def call_done(
        self, index: int, item_id: str, call_id: str, name: str, arguments: str
    ) -> list[bytes]:
        item = {
            "id": item_id,
            "type": "function_call",
            "status": "completed",
            "arguments": arguments,
            "call_id": call_id,
            "name": name,
        }
        self.output.append(item)
        return [
            self.event(
                "response.function_call_arguments.done",
                item_id=item_id,
                output_index=index,
                name=name,
                arguments=arguments,
            ),
            self.event("response.output_item.done", output_index=index, item=item),
        ]

    def call(
        self, index: int, item_id: str, call_id: str, name: str, *fragments: str
    ) -> list[bytes]:
        return [
            self.call_added(index, item_id, call_id, name),
            *(self.call_delta(index, item_id, fragment) for fragment in fragments),
            *self.call_done(index, item_id, call_id, name, "".join(fragments)),
        ]

    # the end

    def completed(self, usage: Mapping[str, Any] | None = USAGE) -> bytes:
        return self.event("response.completed", response=self.response("completed", usage=usage))

    def incomplete(self, reason: str | None, usage: Mapping[str, Any] | None = USAGE) -> bytes:
        details = {"reason": reason} if reason is not None else None
        response = self.response("incomplete", usage=usage, incomplete_details=details)
        return self.event("response.incomplete", response=response)

    def failed(self, code: str, message: str) -> bytes:
        error = {"code": code, "message": message}
        return self.event("response.failed", response=self.response("failed", error=error))


def text_stream(*deltas: str) -> list[bytes]:
    wire = Wire()
    return [*wire.created(), *wire.message(0, "msg_1", *deltas), wire.completed()]


# --- running the adapter --------------------------------------------------------------------


@asynccontextmanager
async def responses_adapter(
    handler: Callable[[Request], Response], **options: Any
) -> AsyncGenerator[tuple[FakeServer, OpenAIChatAdapter]]:
    """A fake server and a Responses adapter whose (caller-owned) SDK client points at it."""
    async with (
        serve(handler) as server,
        sdk_client(server.url("/v1")) as client,
    ):
        yield server, OpenAIChatAdapter(client, model=MODEL, api="responses", **options)


async def run(steps: Sequence[Step], request: Mapping[str, Any] = HELLO) -> list[ChatEvent]:
    return await run_with(responses_adapter, streaming(steps), request)


async def failure(
    handler: Callable[[Request], Response],
    expected: type[BaseException],
    request: Mapping[str, Any] = HELLO,
) -> tuple[Any, list[ChatEvent], FakeServer]:
    """The error the stream raised, the events delivered before it, and the server."""
    return await failure_with(responses_adapter, handler, expected, request)


def assistant_message(events: Sequence[ChatEvent], message_id: str = "a1") -> dict[str, Any]:
    """The assistant message a client builds from the events (as the AI SDK UI does):
    parts in the order they started, with the providerMetadata of their last event."""
    parts: list[dict[str, Any]] = []
    open_parts: dict[tuple[str, str], dict[str, Any]] = {}
    for raw in events:
        event = cast("Mapping[str, Any]", raw)
        kind = event["type"]
        if kind in ("text-start", "reasoning-start"):
            family = kind.split("-")[0]
            part: dict[str, Any] = {"type": family, "text": ""}
            open_parts[family, event["id"]] = part
            parts.append(part)
        elif kind in ("text-delta", "reasoning-delta"):
            open_parts[kind.split("-")[0], event["id"]]["text"] += event["delta"]
        elif kind in ("text-end", "reasoning-end"):
            part = open_parts[kind.split("-")[0], event["id"]]
            if "providerMetadata" in event:
                part["providerMetadata"] = event["providerMetadata"]
        elif kind == "tool-input-start":
            part = {"type": "tool-call", "toolCallId": event["toolCallId"]}
            open_parts["tool", event["toolCallId"]] = part
            parts.append(part)
        elif kind == "tool-input-available":
            part = open_parts["tool", event["toolCallId"]]
            part.update(toolName=event["toolName"], input=event["input"])
            if "providerMetadata" in event:
                part["providerMetadata"] = event["providerMetadata"]
    return {"id": message_id, "role": "assistant", "parts": parts}


# --- streaming ------------------------------------------------------------------------------

pytestmark = pytest.mark.anyio

TEXT = "Grüße aus Köln! 日本語のテキスト 🎉🚀 and plain ASCII, in many small deltas. "
ITEM = {"openai": {"itemId": "msg_1"}}


async def test_text_in_many_deltas_with_utf8_split_across_chunks() -> None:
    deltas = [TEXT[i : i + 3] for i in range(0, len(TEXT), 3)] * 4
    body = b"".join(text_stream(*deltas))
    # 7-byte HTTP chunks cut multi-byte characters, lines and events anywhere.
    events = await run([body[i : i + 7] for i in range(0, len(body), 7)])
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
    assert of_type(events, "text-start") == [
        {"type": "text-start", "id": "msg_1", "providerMetadata": ITEM}
    ]
    assert of_type(events, "text-end") == [
        {"type": "text-end", "id": "msg_1", "providerMetadata": ITEM}
    ]
    assert {e["id"] for e in of_type(events, "text-delta")} == {"msg_1"}
    assert finish_of(events) == {"type": "finish", "finishReason": "stop", "usage": MAPPED_USAGE}


async def test_ten_thousand_deltas() -> None:
    wire = Wire()
    lines = [wire.text_delta(0, "msg_1", f"w{i} ") for i in range(10_000)]
    # Sent in batches, as a busy server's writes arrive.
    steps: list[Step] = [*wire.created(), *wire.message_added(0, "msg_1")]
    steps += [b"".join(lines[i : i + 250]) for i in range(0, len(lines), 250)]
    text = "".join(f"w{i} " for i in range(10_000))
    events = await run([*steps, *wire.message_done(0, "msg_1", text), wire.completed()])
    assert len(of_type(events, "text-delta")) == 10_000
    assert text_of(events) == text
    assert finish_of(events)["usage"]["totalTokens"] == 18


async def test_an_event_without_its_event_line_is_read_by_its_type() -> None:
    # A proxy that strips event names still leaves the data's "type".
    steps = [line.split(b"\n", 1)[1] for line in text_stream("Hi", "!")]
    events = await run(steps)
    assert text_of(events) == "Hi!"
    assert finish_of(events)["finishReason"] == "stop"


async def test_reasoning_summaries_then_text() -> None:
    wire = Wire()
    steps = [
        *wire.created(),
        *wire.reasoning(0, "rs_1", [["The user ", "greets me."], ["Be kind."]], "gAAAA-secret"),
        *wire.message(1, "msg_1", "Hi", "!"),
        wire.completed(),
    ]
    events = await run(steps)
    assert types(events) == [
        "start",
        "start-step",
        "reasoning-start",
        "reasoning-delta",
        "reasoning-delta",
        "reasoning-start",
        "reasoning-delta",
        "reasoning-end",
        "reasoning-end",
        "text-start",
        "text-delta",
        "text-delta",
        "text-end",
        "finish-step",
        "finish",
    ]
    starts = of_type(events, "reasoning-start")
    assert [e["id"] for e in starts] == ["rs_1:0", "rs_1:1"]
    assert all(e["providerMetadata"] == {"openai": {"itemId": "rs_1"}} for e in starts)
    metadata = {"openai": {"itemId": "rs_1", "reasoningEncryptedContent": "gAAAA-secret"}}
    assert of_type(events, "reasoning-end") == [
        {"type": "reasoning-end", "id": "rs_1:0", "providerMetadata": metadata},
        {"type": "reasoning-end", "id": "rs_1:1", "providerMetadata": metadata},
    ]
    assert text_of(events, "reasoning") == "The user greets me.Be kind."
    assert text_of(events) == "Hi!"


async def test_reasoning_without_a_summary_is_still_a_part() -> None:
    # Without reasoning.summary the item has no summary; its id and encrypted content
    # must still reach the client, to be sent back with the next request.
    wire = Wire()
    steps = [*wire.created(), *wire.reasoning(0, "rs_9", [], "gAAAA-only"), wire.completed()]
    events = await run(steps)
    assert types(events)[2:4] == ["reasoning-start", "reasoning-end"]
    assert of_type(events, "reasoning-end")[0]["providerMetadata"] == {
        "openai": {"itemId": "rs_9", "reasoningEncryptedContent": "gAAAA-only"}
    }


async def test_encrypted_content_announced_with_the_added_item() -> None:
    wire = Wire()
    item: dict[str, Any] = {"id": "rs_3", "type": "reasoning", "summary": []}
    steps = [
        *wire.created(),
        wire.event(
            "response.output_item.added",
            output_index=0,
            item={**item, "encrypted_content": "gAAAA-early"},
        ),
        wire.event("response.output_item.done", output_index=0, item=item),
        wire.completed(),
    ]
    [end] = of_type(await run(steps), "reasoning-end")
    assert end["providerMetadata"]["openai"]["reasoningEncryptedContent"] == "gAAAA-early"


async def test_raw_reasoning_text() -> None:
    wire = Wire()
    added: dict[str, Any] = {"id": "rs_2", "type": "reasoning", "summary": [], "content": []}
    done = {
        "id": "rs_2",
        "type": "reasoning",
        "summary": [],
        "content": [{"type": "reasoning_text", "text": "Thinking hard."}],
    }
    where = {"item_id": "rs_2", "output_index": 0, "content_index": 0}
    steps = [
        *wire.created(),
        wire.event("response.output_item.added", output_index=0, item=added),
        wire.event("response.reasoning_text.delta", **where, delta="Thinking "),
        wire.event("response.reasoning_text.delta", **where, delta="hard."),
        wire.event("response.reasoning_text.done", **where, text="Thinking hard."),
        wire.event("response.output_item.done", output_index=0, item=done),
        wire.completed(),
    ]
    events = await run(steps)
    assert text_of(events, "reasoning") == "Thinking hard."
    assert [e["id"] for e in of_type(events, "reasoning-delta")] == ["rs_2:0"] * 2
    assert [e["id"] for e in of_type(events, "reasoning-end")] == ["rs_2:0"]


async def test_a_function_call_with_fragmented_arguments() -> None:
    wire = Wire()
    steps = [
        *wire.created(),
        *wire.message(0, "msg_1", "Let me look."),
        *wire.call(1, "fc_1", "call_abc", "get_weather", '{"ci', 'ty": "Pa', 'ris"}'),
        wire.completed(),
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
    metadata = {"openai": {"itemId": "fc_1"}}
    assert of_type(events, "tool-input-start") == [
        {
            "type": "tool-input-start",
            "toolCallId": "call_abc",
            "toolName": "get_weather",
            "providerMetadata": metadata,
        }
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
            "providerMetadata": metadata,
        }
    ]
    assert finish_of(events)["finishReason"] == "tool-calls"


async def test_parallel_function_calls_are_kept_apart_by_item() -> None:
    wire = Wire()
    steps = [
        *wire.created(),
        wire.call_added(0, "fc_0", "call_0", "get_weather"),
        wire.call_delta(0, "fc_0", '{"city":'),
        wire.call_added(1, "fc_1", "call_1", "get_time"),
        wire.call_delta(1, "fc_1", '{"zone":'),
        wire.call_added(2, "fc_2", "call_2", "get_weather"),
        wire.call_delta(0, "fc_0", ' "Paris"}'),
        wire.call_delta(2, "fc_2", '{"city": "Oslo"}'),
        wire.call_delta(1, "fc_1", ' "CET"}'),
        *wire.call_done(1, "fc_1", "call_1", "get_time", '{"zone": "CET"}'),
        *wire.call_done(0, "fc_0", "call_0", "get_weather", '{"city": "Paris"}'),
        *wire.call_done(2, "fc_2", "call_2", "get_weather", '{"city": "Oslo"}'),
        wire.completed(),
    ]
    events = await run(steps)
    deltas: dict[str, str] = {}
    for event in of_type(events, "tool-input-delta"):
        deltas[event["toolCallId"]] = deltas.get(event["toolCallId"], "") + event["inputTextDelta"]
    assert deltas == {
        "call_0": '{"city": "Paris"}',
        "call_1": '{"zone": "CET"}',
        "call_2": '{"city": "Oslo"}',
    }
    assert [
        (e["toolCallId"], e["toolName"], e["input"], e["providerMetadata"]["openai"]["itemId"])
        for e in of_type(events, "tool-input-available")
    ] == [
        ("call_1", "get_time", {"zone": "CET"}, "fc_1"),
        ("call_0", "get_weather", {"city": "Paris"}, "fc_0"),
        ("call_2", "get_weather", {"city": "Oslo"}, "fc_2"),
    ]
    assert finish_of(events)["finishReason"] == "tool-calls"


async def test_arguments_that_come_whole_are_one_delta() -> None:
    # Some OpenAI-compatible servers send no argument deltas, only the done item.
    wire = Wire()
    steps = [
        *wire.created(),
        wire.call_added(0, "fc_1", "call_1", "f"),
        *wire.call_done(0, "fc_1", "call_1", "f", '{"n": 1}'),
        wire.completed(),
    ]
    events = await run(steps)
    assert [e["inputTextDelta"] for e in of_type(events, "tool-input-delta")] == ['{"n": 1}']
    assert of_type(events, "tool-input-available")[0]["input"] == {"n": 1}


async def test_arguments_in_the_added_item_then_deltas_are_not_doubled() -> None:
    # A server that puts the arguments in the added item and streams them too.
    wire = Wire()
    call = {"type": "function_call", "id": "fc_1", "call_id": "call_1", "name": "f"}
    where = {"item_id": "fc_1", "output_index": 0}
    steps = [
        *wire.created(),
        wire.event(
            "response.output_item.added", output_index=0, item={**call, "arguments": '{"n": 1}'}
        ),
        wire.event("response.function_call_arguments.delta", **where, delta='{"n": '),
        wire.event("response.function_call_arguments.delta", **where, delta="1}"),
        wire.event("response.output_item.done", output_index=0, item=call),
        wire.completed(),
    ]
    events = await run(steps)
    assert "".join(e["inputTextDelta"] for e in of_type(events, "tool-input-delta")) == '{"n": 1}'
    assert of_type(events, "tool-input-available")[0]["input"] == {"n": 1}


@pytest.mark.parametrize(
    ("arguments", "reason"),
    [
        ('{"city": "Par', "Unterminated string"),
        ('{"n": NaN}', "NaN is not JSON"),
        ("[1, 2] trailing", "Extra data"),
        ('{"n": 9007199254740993}', "safe"),
    ],
)
async def test_invalid_arguments_become_tool_input_error(arguments: str, reason: str) -> None:
    wire = Wire()
    steps = [*wire.created(), *wire.call(0, "fc_x", "call_x", "f", arguments), wire.completed()]
    events = await run(steps)
    [error] = of_type(events, "tool-input-error")
    assert error["toolCallId"] == "call_x" and error["toolName"] == "f"
    assert error["input"] == arguments
    assert error["errorText"].startswith("the tool arguments are not valid JSON")
    assert reason in error["errorText"]
    assert not of_type(events, "tool-input-available")
    assert finish_of(events)["finishReason"] == "tool-calls"


async def test_empty_arguments_are_an_empty_object() -> None:
    wire = Wire()
    events = await run([*wire.created(), *wire.call(0, "fc_y", "call_y", "now"), wire.completed()])
    assert of_type(events, "tool-input-available")[0]["input"] == {}
    assert not of_type(events, "tool-input-delta")


async def test_items_without_ids_get_no_item_metadata() -> None:
    # Some OpenAI-compatible servers send items without ids: the output index names the
    # parts, and no made-up id is offered for sending back.
    wire = Wire()
    message: dict[str, Any] = {
        "type": "message",
        "role": "assistant",
        "status": "in_progress",
        "content": [],
    }
    call = {"type": "function_call", "call_id": "call_1", "name": "f", "arguments": ""}
    steps = [
        *wire.created(),
        wire.event("response.output_item.added", output_index=0, item=message),
        wire.event("response.output_text.delta", output_index=0, content_index=0, delta="Hi"),
        wire.event("response.output_item.done", output_index=0, item=message),
        wire.event("response.output_item.added", output_index=1, item=call),
        wire.event("response.function_call_arguments.delta", output_index=1, delta="{}"),
        wire.event("response.output_item.done", output_index=1, item={**call, "arguments": "{}"}),
        wire.completed(),
    ]
    events = await run(steps)
    assert text_of(events) == "Hi"
    assert of_type(events, "text-start") == [{"type": "text-start", "id": "item-0"}]
    assert of_type(events, "tool-input-available") == [
        {"type": "tool-input-available", "toolCallId": "call_1", "toolName": "f", "input": {}}
    ]
    assert not [e for e in events if "providerMetadata" in e]


async def test_a_refusal_is_delivered_as_text() -> None:
    wire = Wire()
    where = {"item_id": "msg_1", "output_index": 0, "content_index": 0}
    steps = [
        *wire.created(),
        *wire.message_added(0, "msg_1"),
        wire.event("response.refusal.delta", **where, delta="I can't "),
        wire.event("response.refusal.delta", **where, delta="help with that."),
        wire.event("response.refusal.done", **where, refusal="I can't help with that."),
        *wire.message_done(0, "msg_1", ""),
        wire.completed(),
    ]
    assert text_of(await run(steps)) == "I can't help with that."


async def test_unknown_events_are_ignored() -> None:
    wire = Wire()
    annotation = {"type": "url_citation", "url": "https://example.com", "title": "x"}
    steps = [
        *wire.created(),
        *wire.message_added(0, "msg_1"),
        wire.text_delta(0, "msg_1", "Hi"),
        wire.event(
            "response.output_text.annotation.added",
            item_id="msg_1",
            output_index=0,
            content_index=0,
            annotation_index=0,
            annotation=annotation,
        ),
        wire.event("response.something_new", detail={"x": 1}),
        *wire.message_done(0, "msg_1", "Hi"),
        wire.completed(),
    ]
    assert text_of(await run(steps)) == "Hi"


async def test_an_output_item_the_adapter_cannot_map_is_an_error() -> None:
    wire = Wire()
    item = {"id": "ws_1", "type": "web_search_call", "status": "in_progress"}
    steps = [
        *wire.created(),
        wire.event("response.output_item.added", output_index=0, item=item),
        wire.completed(),
    ]
    error, _events, _server = await failure(streaming(steps), ProviderError)
    assert "'web_search_call' output item" in error.detail


@pytest.mark.parametrize(
    ("usage", "expected"),
    [
        (USAGE, MAPPED_USAGE),
        (
            {"input_tokens": 5, "output_tokens": 2, "total_tokens": 7},
            {"inputTokens": 5, "outputTokens": 2, "totalTokens": 7},
        ),
        (
            {
                "input_tokens": 5,
                "input_tokens_details": None,
                "output_tokens": 2,
                "output_tokens_details": {"reasoning_tokens": None},
                "total_tokens": 7,
            },
            {"inputTokens": 5, "outputTokens": 2, "totalTokens": 7},
        ),
    ],
    ids=["with-details", "without-details", "null-details"],
)
async def test_usage_on_finish(usage: Mapping[str, Any], expected: Mapping[str, int]) -> None:
    wire = Wire()
    events = await run([*wire.created(), *wire.message(0, "m", "Hi"), wire.completed(usage)])
    assert finish_of(events)["usage"] == expected


async def test_no_usage_means_no_usage() -> None:
    wire = Wire()
    events = await run([*wire.created(), *wire.message(0, "m", "Hi"), wire.completed(None)])
    assert "usage" not in finish_of(events)


@pytest.mark.parametrize(
    ("reason", "expected"),
    [
        ("max_output_tokens", "length"),
        ("content_filter", "content-filter"),
        ("something_new", "other"),
        (None, "other"),
    ],
)
async def test_an_incomplete_response(reason: str | None, expected: str) -> None:
    wire = Wire()
    steps = [
        *wire.created(),
        *wire.message_added(0, "msg_1"),
        wire.text_delta(0, "msg_1", "The answer is"),
        wire.incomplete(reason),
    ]
    events = await run(steps)
    # The message item the provider left open is closed before the finish.
    assert types(events)[-4:] == ["text-delta", "text-end", "finish-step", "finish"]
    assert finish_of(events) == {"type": "finish", "finishReason": expected, "usage": MAPPED_USAGE}


async def test_a_length_stop_during_a_function_call_is_length() -> None:
    wire = Wire()
    steps = [
        *wire.created(),
        wire.call_added(0, "fc_1", "call_1", "f"),
        wire.call_delta(0, "fc_1", '{"n": '),
        wire.incomplete("max_output_tokens"),
    ]
    events = await run(steps)
    assert of_type(events, "tool-input-error")[0]["input"] == '{"n": '
    assert finish_of(events)["finishReason"] == "length"


class TestStreamChecks(StreamChecks):
    headers: ClassVar[Mapping[str, str]] = SSE_HEADERS
    answer: ClassVar[Sequence[Step]] = text_stream("Hi")
    answer_text: ClassVar[str] = "Hi"

    def serve_adapter(
        self, handler: Callable[[Request], Response]
    ) -> AbstractAsyncContextManager[tuple[FakeServer, AIChatAdapter]]:
        return responses_adapter(handler)


# --- the request ----------------------------------------------------------------------------

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
                {"type": "file", "mediaType": "application/pdf", "url": "https://x.org/b.pdf"},
            ],
        },
        {
            "id": "a1",
            "role": "assistant",
            "parts": [
                {
                    "type": "reasoning",
                    "text": "Weather first.",
                    "providerMetadata": {
                        "openai": {"itemId": "rs_1", "reasoningEncryptedContent": "gAAA"}
                    },
                },
                {
                    "type": "reasoning",
                    "text": "Then time.",
                    "providerMetadata": {
                        "openai": {"itemId": "rs_1", "reasoningEncryptedContent": "gAAA"}
                    },
                },
                {
                    "type": "text",
                    "text": "Checking the weather.",
                    "providerMetadata": {"openai": {"itemId": "msg_1"}},
                },
                {
                    "type": "tool-call",
                    "toolCallId": "call_1",
                    "toolName": "get_weather",
                    "input": {"city": "Zürich"},
                    "providerMetadata": {"openai": {"itemId": "fc_1"}},
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
                },
            ],
        },
        {
            "id": "a2",
            "role": "assistant",
            "parts": [{"type": "text", "text": "Sunny, "}, {"type": "text", "text": "noon."}],
        },
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
        "toolChoice": {"type": "tool", "toolName": "get_weather"},
        "providerOptions": {
            "openai": {
                "reasoning": {"effort": "low", "summary": "auto"},
                "include": ["reasoning.encrypted_content"],
                "store": False,
                "parallel_tool_calls": False,
                "instructions": "Answer in English.",
                "previous_response_id": "resp_prev",
                "text": {"verbosity": "low"},
            },
            "anthropic": {"ignored": True},
        },
    },
}

RICH_BODY = {
    "model": "gpt-other",
    "input": [
        {"role": "system", "content": "Be brief."},
        {
            "role": "user",
            "content": [
                {"type": "input_text", "text": "What is in these?"},
                {
                    "type": "input_image",
                    "image_url": "https://example.com/a.jpg",
                    "detail": "auto",
                },
                {"type": "input_image", "image_url": PNG, "detail": "auto"},
                {"type": "input_file", "filename": "r.pdf", "file_data": PDF},
                {"type": "input_file", "filename": "part-4.pdf", "file_data": PDF},
                {"type": "input_file", "file_url": "https://x.org/b.pdf"},
            ],
        },
        {
            "type": "reasoning",
            "id": "rs_1",
            "summary": [
                {"type": "summary_text", "text": "Weather first."},
                {"type": "summary_text", "text": "Then time."},
            ],
            "encrypted_content": "gAAA",
        },
        # store: false, so the message and call ids stay home (the API keeps no items and
        # would fail to find them); the reasoning item travels with its encrypted content.
        # An assistant message without an item id carries its text as a string: the SDK's
        # EasyInputMessageParam takes output_text parts only in an output message item.
        {"role": "assistant", "content": "Checking the weather."},
        {
            "type": "function_call",
            "call_id": "call_1",
            "name": "get_weather",
            "arguments": '{"city":"Zürich"}',
        },
        {"type": "function_call", "call_id": "call_2", "name": "get_time", "arguments": "{}"},
        {
            "type": "function_call_output",
            "call_id": "call_1",
            "output": '{"temp":21.5,"sky":"clear"}',
        },
        {"type": "function_call_output", "call_id": "call_2", "output": "12:00"},
        {"role": "assistant", "content": "Sunny, "},
        {"role": "assistant", "content": "noon."},
        {"role": "user", "content": [{"type": "input_text", "text": "Thanks"}]},
    ],
    "tools": [
        {
            "type": "function",
            "name": "get_weather",
            "description": "Weather for a city",
            "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
            "strict": False,
        },
        {"type": "function", "name": "get_time", "parameters": {"type": "object"}, "strict": False},
    ],
    "tool_choice": {"type": "function", "name": "get_weather"},
    "temperature": 0.2,
    "top_p": 0.9,
    "max_output_tokens": 512,
    "stream": True,
    "reasoning": {"effort": "low", "summary": "auto"},
    "include": ["reasoning.encrypted_content"],
    "store": False,
    "parallel_tool_calls": False,
    "instructions": "Answer in English.",
    "previous_response_id": "resp_prev",
    "text": {"verbosity": "low"},
}


async def test_request_mapping() -> None:
    async with responses_adapter(streaming(text_stream("ok"))) as (server, adapter):
        await collect(adapter, RICH_REQUEST)
    [request] = server.requests
    assert (request.method, request.path) == ("POST", "/v1/responses")
    assert request.headers["authorization"] == "Bearer test"
    assert request.json() == RICH_BODY


async def test_minimal_request_and_the_adapter_model() -> None:
    async with responses_adapter(streaming(text_stream("ok"))) as (server, adapter):
        await collect(adapter)
    assert server.requests[0].json() == {
        "model": MODEL,
        "input": [{"role": "user", "content": [{"type": "input_text", "text": "Hello"}]}],
        "stream": True,
    }


async def test_reasoning_and_calls_round_trip_into_the_next_request() -> None:
    """What a response streamed goes back, unchanged, as the same output items."""
    wire = Wire()
    first = [
        *wire.created(),
        *wire.reasoning(0, "rs_1", [["Need ", "weather."], ["And time."]], "gAAAA-enc"),
        *wire.message(1, "msg_1", "Checking."),
        *wire.call(2, "fc_1", "call_1", "get_weather", '{"city":', ' "Paris"}'),
        *wire.call(3, "fc_2", "call_2", "get_time", "{}"),
        wire.completed(),
    ]
    answers = iter([first, text_stream("Sunny at noon.")])
    async with responses_adapter(lambda request: Response(200, SSE_HEADERS, next(answers))) as (
        server,
        adapter,
    ):
        events = await collect(adapter)
        history = [
            *HELLO["messages"],
            assistant_message(events),
            {
                "id": "t1",
                "role": "tool",
                "parts": [
                    {
                        "type": "tool-result",
                        "toolCallId": "call_1",
                        "toolName": "get_weather",
                        "output": {"sky": "clear"},
                    },
                    {
                        "type": "tool-result",
                        "toolCallId": "call_2",
                        "toolName": "get_time",
                        "output": "12:00",
                    },
                ],
            },
        ]
        second = await collect(adapter, {"messages": history})
    assert text_of(second) == "Sunny at noon."
    assert server.requests[1].json()["input"] == [
        {"role": "user", "content": [{"type": "input_text", "text": "Hello"}]},
        {
            "type": "reasoning",
            "id": "rs_1",
            "summary": [
                {"type": "summary_text", "text": "Need weather."},
                {"type": "summary_text", "text": "And time."},
            ],
            "encrypted_content": "gAAAA-enc",
        },
        {
            "type": "message",
            "id": "msg_1",
            "role": "assistant",
            "status": "completed",
            "content": [{"type": "output_text", "text": "Checking.", "annotations": []}],
        },
        {
            "type": "function_call",
            "call_id": "call_1",
            "name": "get_weather",
            "arguments": '{"city":"Paris"}',
            "id": "fc_1",
        },
        {
            "type": "function_call",
            "call_id": "call_2",
            "name": "get_time",
            "arguments": "{}",
            "id": "fc_2",
        },
        {"type": "function_call_output", "call_id": "call_1", "output": '{"sky":"clear"}'},
        {"type": "function_call_output", "call_id": "call_2", "output": "12:00"},
    ]


@pytest.mark.parametrize(
    ("choice", "expected"),
    [
        ("auto", "auto"),
        ("none", "none"),
        ("required", "required"),
        ({"type": "tool", "toolName": "f"}, {"type": "function", "name": "f"}),
    ],
)
async def test_tool_choice(choice: object, expected: object) -> None:
    request = {
        **HELLO,
        "tools": [{"name": "f", "inputSchema": {"type": "object"}}],
        "parameters": {"toolChoice": choice},
    }
    async with responses_adapter(streaming(text_stream("ok"))) as (server, adapter):
        await collect(adapter, request)
    assert server.requests[0].json()["tool_choice"] == expected


@pytest.mark.parametrize("choice", ["auto", "none"])
async def test_tool_choice_without_tools_is_left_out(choice: str) -> None:
    async with responses_adapter(streaming(text_stream("ok"))) as (server, adapter):
        await collect(adapter, {**HELLO, "parameters": {"toolChoice": choice}})
    body = server.requests[0].json()
    assert "tool_choice" not in body and "tools" not in body


async def test_default_parameters_are_merged_under_the_request_ones() -> None:
    defaults = {
        "temperature": 0.1,
        "maxOutputTokens": 100,
        "providerOptions": {"openai": {"user": "default-user", "store": False}},
    }
    request = {
        **HELLO,
        "parameters": {"maxOutputTokens": 200, "providerOptions": {"openai": {"user": "req"}}},
    }
    handler = streaming(text_stream("ok"))
    async with responses_adapter(handler, parameters=defaults) as (server, adapter):
        await collect(adapter, request)
    body = server.requests[0].json()
    assert (body["temperature"], body["max_output_tokens"]) == (0.1, 200)
    assert (body["user"], body["store"]) == ("req", False)


async def test_foreign_reasoning_parts_can_be_omitted_explicitly() -> None:
    request = {
        "messages": [
            *HELLO["messages"],
            {
                "id": "a",
                "role": "assistant",
                "parts": [
                    {"type": "reasoning", "text": "hmm"},  # from another provider
                    {"type": "text", "text": "Hi"},
                ],
            },
            {"id": "u2", "role": "user", "parts": [{"type": "text", "text": "Again"}]},
        ]
    }
    handler = streaming(text_stream("ok"))
    async with responses_adapter(handler, reasoning_parts="omit") as (server, adapter):
        await collect(adapter, request)
    assert server.requests[0].json()["input"][1] == {"role": "assistant", "content": "Hi"}


async def test_unresolvable_stateless_reasoning_can_be_omitted_explicitly() -> None:
    reasoning = {
        "type": "reasoning",
        "text": "hmm",
        "providerMetadata": {"openai": {"itemId": "rs_1"}},
    }
    request = {
        "messages": [
            *HELLO["messages"],
            {"id": "a", "role": "assistant", "parts": [reasoning, {"type": "text", "text": "Hi"}]},
            {"id": "u2", "role": "user", "parts": [{"type": "text", "text": "Again"}]},
        ],
        "parameters": {"providerOptions": {"openai": {"store": False}}},
    }
    handler = streaming(text_stream("ok"))
    async with responses_adapter(handler, reasoning_parts="omit") as (server, adapter):
        await collect(adapter, request)
    assert [item.get("type", item.get("role")) for item in server.requests[0].json()["input"]] == [
        "user",
        "assistant",
        "user",
    ]


def with_options(**options: Any) -> dict[str, Any]:
    return with_parameters(providerOptions={"openai": options})


UNSUPPORTED = [
    pytest.param(
        with_parameters(stopSequences=["END"]),
        "$.parameters.stopSequences",
        "no stop sequences",
        id="stopSequences",
    ),
    pytest.param(with_parameters(seed=7), "$.parameters.seed", "no seed", id="seed"),
    pytest.param(with_parameters(topK=40), "$.parameters.topK", "no top_k", id="topK"),
    pytest.param(
        with_parameters(presencePenalty=0.5),
        "$.parameters.presencePenalty",
        "presence penalty",
        id="presencePenalty",
    ),
    pytest.param(
        with_parameters(frequencyPenalty=0.5),
        "$.parameters.frequencyPenalty",
        "frequency penalty",
        id="frequencyPenalty",
    ),
    pytest.param(with_parameters(mood="happy"), "$.parameters.mood", "unknown", id="unknown"),
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
        id="foreign-reasoning",
    ),
    pytest.param(
        with_message(
            {"type": "reasoning", "text": "hmm", "providerMetadata": {"openai": {"itemId": 7}}},
            role="assistant",
        ),
        "$.messages[1].parts[0].providerMetadata.openai.itemId",
        "non-empty string",
        id="bad-item-id",
    ),
    pytest.param(
        with_message(
            {
                "type": "reasoning",
                "text": "hmm",
                "providerMetadata": {
                    "openai": {"itemId": "rs_1", "reasoningEncryptedContent": ["x"]}
                },
            },
            role="assistant",
        ),
        "$.messages[1].parts[0].providerMetadata.openai.reasoningEncryptedContent",
        "encrypted_content",
        id="bad-encrypted-content",
    ),
    pytest.param(
        {
            **with_message(
                {
                    "type": "reasoning",
                    "text": "hmm",
                    "providerMetadata": {"openai": {"itemId": "rs_1"}},
                },
                role="assistant",
            ),
            "parameters": {"providerOptions": {"openai": {"store": False}}},
        },
        "$.messages[1].parts[0]",
        "reasoning.encrypted_content",
        id="stateless-reasoning-without-encrypted-content",
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
        with_message({"type": "file", "mediaType": "image/png", "url": "ftp://x/a.png"}),
        "$.messages[1].parts[0].url",
        "data: URL or an http(s) URL",
        id="ftp-url",
    ),
    pytest.param(
        with_options(temperature=1),
        "$.parameters.providerOptions.openai.temperature",
        "parameters.temperature",
        id="options-shadowing-a-parameter",
    ),
    pytest.param(
        with_options(max_output_tokens=5),
        "$.parameters.providerOptions.openai.max_output_tokens",
        "parameters.maxOutputTokens",
        id="options-max-output-tokens",
    ),
    pytest.param(
        with_options(stream=False),
        "$.parameters.providerOptions.openai.stream",
        "always streams",
        id="options-stream",
    ),
    pytest.param(
        with_options(tools=[{"type": "web_search"}]),
        "$.parameters.providerOptions.openai.tools",
        "built-in tools",
        id="options-tools",
    ),
    pytest.param(
        with_options(input="hi"),
        "$.parameters.providerOptions.openai.input",
        "messages",
        id="options-input",
    ),
    pytest.param(
        with_options(stop=["x"]),
        "$.parameters.providerOptions.openai.stop",
        "no stop sequences",
        id="options-stop",
    ),
]


@pytest.mark.parametrize(("request_", "path", "words"), UNSUPPORTED)
async def test_unsupported_input_raises_before_any_request(
    request_: Mapping[str, Any], path: str, words: str
) -> None:
    error, events, server = await failure(streaming(text_stream("x")), ValidationError, request_)
    assert error.path == path
    assert words in error.reason
    assert events == []
    assert server.connections == 0 and server.requests == []


# --- truncation and broken streams ------------------------------------------------------------


def cut_streams() -> list[Any]:
    wire = Wire()
    head = [*wire.created(), *wire.message_added(0, "msg_1"), wire.text_delta(0, "msg_1", "Hel")]
    return [
        pytest.param(head, id="mid-message"),
        pytest.param([*head, *wire.message_done(0, "msg_1", "Hel")], id="after-the-last-item"),
        pytest.param(Wire().created(), id="created-only"),
        pytest.param([], id="empty-body"),
    ]


@pytest.mark.parametrize("steps", cut_streams())
async def test_truncation_is_an_error(steps: Sequence[Step]) -> None:
    error, events, _server = await failure(streaming(steps), TruncatedStreamError)
    assert isinstance(error, ProviderError)
    assert "response.completed" in str(error) and "cut off" in str(error)
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
    wire = Wire()
    steps: list[Step] = [
        *wire.created(),
        *wire.message_added(0, "msg_1"),
        *(wire.text_delta(0, "msg_1", d) for d in ("one ", "two ", "three ")),
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
    wire = Wire()
    steps = [
        *wire.created(),
        *wire.message_added(0, "msg_1"),
        wire.text_delta(0, "msg_1", "Hi"),
        b"event: response.output_text.delta\ndata: {not json\n\n",
        *wire.message_done(0, "msg_1", "Hi"),
        wire.completed(),
    ]
    error, events, _server = await failure(streaming(steps), ProviderError)
    assert type(error) is ProviderError
    assert isinstance(error.__cause__, json.JSONDecodeError)
    assert "malformed data line" in error.detail and "{not json" in error.detail
    assert text_of(events) == "Hi"


async def test_an_error_event_is_a_provider_error() -> None:
    # The SDK itself yields this as an ordinary event and then ends normally.
    wire = Wire()
    steps = [
        *wire.created(),
        *wire.message_added(0, "msg_1"),
        wire.text_delta(0, "msg_1", "Hi"),
        wire.event(
            "error",
            code="server_error",
            message="The server had an error while processing your request.",
            param=None,
        ),
    ]
    error, events, _server = await failure(streaming(steps), ProviderError)
    assert type(error) is ProviderError
    assert error.error_type == "server_error"
    assert error.status is None and error.request_id == REQUEST_ID
    assert "The server had an error while processing your request." in str(error)
    assert text_of(events) == "Hi"


async def test_an_error_event_without_a_code() -> None:
    wire = Wire()
    steps = [*wire.created(), wire.event("error", code=None, message="Boom.", param=None)]
    error, _events, _server = await failure(streaming(steps), ProviderError)
    assert error.error_type is None and "Boom." in error.detail


async def test_a_failed_response_is_a_provider_error() -> None:
    wire = Wire()
    steps = [
        *wire.created(),
        *wire.message_added(0, "msg_1"),
        wire.text_delta(0, "msg_1", "Hi"),
        wire.failed("rate_limit_exceeded", "You exceeded your current quota."),
    ]
    error, events, _server = await failure(streaming(steps), ProviderError)
    assert type(error) is ProviderError
    assert error.error_type == "rate_limit_exceeded"
    assert "the response failed: You exceeded your current quota." in error.detail
    assert error.request_id == REQUEST_ID
    assert "finish" not in types(events)


def out_of_protocol() -> list[Any]:
    wire = Wire()
    return [
        pytest.param(
            [*wire.created(), b"event: response.output_text.delta\ndata: [1, 2]\n\n"],
            "expected an event object",
            id="not-an-object",
        ),
        pytest.param(
            [*Wire().created(), Wire().text_delta(0, "msg_x", "Hi")],
            "output item 'msg_x', which is not open",
            id="delta-for-an-unknown-item",
        ),
        pytest.param(
            [*wire.created(), *wire.message_added(0, "msg_1"), wire.call_delta(0, "msg_1", "{")],
            "for output item 'msg_1', a message item",
            id="delta-for-the-wrong-item",
        ),
        pytest.param(
            [*Wire().created(), Wire().call_added(0, "fc_1", "", "f")],
            "without its call_id or name",
            id="call-without-call-id",
        ),
    ]


@pytest.mark.parametrize(("steps", "words"), out_of_protocol())
async def test_events_out_of_protocol_are_provider_errors(
    steps: Sequence[Step], words: str
) -> None:
    error, _events, _server = await failure(streaming(steps), ProviderError)
    assert type(error) is ProviderError
    assert words in error.detail
    assert error.request_id == REQUEST_ID


@pytest.mark.parametrize(
    ("body", "reason"),
    [
        (b"event: response.created\ndata: {}\n\ndata: {", "middle of a line"),
        (b"data: \xff\xfe\n\n", "not valid UTF-8"),
    ],
)
async def test_sse_format_errors_pass_through(body: bytes, reason: str) -> None:
    error, _events, _server = await failure(streaming([body]), StreamFormatError)
    assert reason in error.reason


@pytest.mark.parametrize(
    ("status", "error", "headers", "error_type", "retry_after", "hint"),
    [
        (
            400,
            {
                "message": "Unsupported parameter: 'foo'.",
                "type": "invalid_request_error",
                "param": "foo",
                "code": "unsupported_parameter",
            },
            {},
            "invalid_request_error",
            None,
            "rejected the request",
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
    assert events == []
    assert [r.path for r in server.requests] == ["/v1/responses"]  # max_retries=0


# --- stopping releases the connection -------------------------------------------------------


def slow_stream() -> list[Step]:
    wire = Wire()
    return [
        *wire.created(),
        *wire.message_added(0, "msg_1"),
        wire.text_delta(0, "msg_1", "one "),
        wire.text_delta(0, "msg_1", "two "),
        "hang",
    ]


class TestReleaseOnStop(ReleaseOnStop):
    slow: ClassVar[Sequence[Step]] = slow_stream()
    headers: ClassVar[Mapping[str, str]] = SSE_HEADERS

    def serve_adapter(
        self, handler: Callable[[Request], Response]
    ) -> AbstractAsyncContextManager[tuple[FakeServer, AIChatAdapter]]:
        return responses_adapter(handler)


# --- construction ---------------------------------------------------------------------------


def test_the_api_is_shown_and_checked() -> None:
    adapter = OpenAIChatAdapter(model=MODEL, api="responses", api_key="k")
    assert adapter.api == "responses"
    assert repr(adapter) == "OpenAIChatAdapter(model='gpt-test', api='responses', owned client)"
    assert OpenAIChatAdapter(model=MODEL, api_key="k").api == "chat"
    with pytest.raises(ConfigurationError) as caught:
        OpenAIChatAdapter(model=MODEL, api=cast(Any, "completions"), api_key="k")
    assert caught.value.parameter == "api"
    assert '"chat"' in caught.value.expected and '"responses"' in caught.value.expected


@pytest.mark.parametrize(
    ("parameters", "words"),
    [
        ({"seed": 1}, "no seed"),
        ({"stopSequences": ["x"]}, "no stop sequences"),
        ({"providerOptions": {"openai": {"input": []}}}, "messages"),
    ],
)
def test_defaults_the_responses_api_cannot_take(parameters: dict[str, Any], words: str) -> None:
    with pytest.raises(ConfigurationError) as caught:
        OpenAIChatAdapter(model=MODEL, api="responses", api_key="k", parameters=parameters)
    assert caught.value.parameter == "parameters"
    assert "the Responses API" in caught.value.expected and words in caught.value.expected


def test_chat_defaults_stay_valid_for_chat() -> None:
    adapter = OpenAIChatAdapter(model=MODEL, api_key="k", parameters={"seed": 1})
    assert adapter.api == "chat"


# --- the conformance kit --------------------------------------------------------------------


def conformance_handler(request: Request) -> Response:
    """Model "slow": a few events, then nothing until the client hangs up."""
    if request.json()["model"] == "slow":
        return Response(200, SSE_HEADERS, slow_stream())
    return Response(200, SSE_HEADERS, text_stream("Hello", " there"))


class TestOpenAIResponsesConformance(ServedConformance):
    def handler(self, request: Request) -> Response:
        return conformance_handler(request)

    def client(self, server: FakeServer) -> openai.AsyncOpenAI:
        return sdk_client(server.url("/v1"))

    def make_adapter(
        self, client: openai.AsyncOpenAI, server: FakeServer, *, slow: bool
    ) -> OpenAIChatAdapter:
        return OpenAIChatAdapter(client, model="slow" if slow else MODEL, api="responses")


# --- the example ----------------------------------------------------------------------------


@pytest.mark.slow
async def test_the_example_streams_from_the_responses_api(anyio_backend: str) -> None:
    wire = Wire()
    steps = [
        *wire.created(),
        *wire.reasoning(0, "rs_1", [["Rayleigh."]]),
        *wire.message(1, "msg_1", "Blue ", "light."),
        wire.completed(),
    ]
    async with serve(streaming(steps)) as server:
        result = await run_example(
            "examples/openai_responses.py",
            *("--base-url", server.url("/v1"), "--model", "gpt-test", "--effort", "low"),
            "--system",
            "Be brief.",
            "--backend",
            anyio_backend,  # the example on the test's own backend
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
    assert (server.requests[0].path, body["model"]) == ("/v1/responses", "gpt-test")
    assert body["input"][0] == {"role": "system", "content": "Be brief."}
    assert body["reasoning"] == {"effort": "low", "summary": "auto"}
