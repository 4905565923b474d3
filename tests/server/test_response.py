"""UIMessageStreamResponse called directly as an ASGI app, on asyncio and trio.

The server code runs in the test's own event loop here, so these tests cover both
backends; tests/server/test_app.py covers the same behaviour through a real uvicorn.
"""

from __future__ import annotations

import json
import logging
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from typing import Any

import anyio
import pytest

from ai_chat import AbortSignal, ProviderError, create_chat_stream
from ai_chat.adapters import ScriptedAdapter
from ai_chat.server import MASKED_ERROR, UIMessageStreamResponse
from ai_chat.types import ChatRequest

from .harness import HANG_GUARD, HELLO, ASGIResult, Recorder, call_asgi, sse_chunks
from .scripts import EVERY_CHUNK, EVERY_EVENT, USAGE

pytestmark = pytest.mark.anyio

REQUEST = {"messages": HELLO["messages"]}
PROTOCOL_HEADERS = {
    "content-type": "text/event-stream",
    "cache-control": "no-cache",
    "connection": "keep-alive",
    "x-vercel-ai-ui-message-stream": "v1",
    "x-accel-buffering": "no",
}


async def respond(
    adapter: Any,
    *,
    disconnect: anyio.Event | None = None,
    on_body: Callable[[ASGIResult], None] | None = None,
    **options: Any,
) -> ASGIResult:
    stream = create_chat_stream(adapter, REQUEST)
    with anyio.fail_after(HANG_GUARD):
        return await call_asgi(
            UIMessageStreamResponse(stream, **options),
            b"",
            disconnect=disconnect,
            on_body=on_body,
        )


class Failing:
    """Streams some text, then raises ``error``."""

    def __init__(self, error: Exception) -> None:
        self.error = error

    async def stream(
        self, request: ChatRequest, signal: AbortSignal
    ) -> AsyncIterator[Mapping[str, object]]:
        yield {"type": "start"}
        yield {"type": "text-start", "id": "t"}
        yield {"type": "text-delta", "id": "t", "delta": "so far"}
        raise self.error


class Gated:
    """Streams ``before``, waits for ``gate``, then streams ``after``."""

    def __init__(
        self, before: Sequence[Mapping[str, object]], after: Sequence[Mapping[str, object]]
    ) -> None:
        self.before = before
        self.after = after
        self.gate = anyio.Event()

    async def stream(
        self, request: ChatRequest, signal: AbortSignal
    ) -> AsyncIterator[Mapping[str, object]]:
        for event in self.before:
            yield event
        await self.gate.wait()
        for event in self.after:
            yield event


async def test_every_event_kind_is_one_frame() -> None:
    result = await respond(ScriptedAdapter(EVERY_EVENT), keep_alive=None)
    assert result.status == 200
    assert result.headers == PROTOCOL_HEADERS
    assert sse_chunks(result.body.decode()) == EVERY_CHUNK
    # Every write holds whole frames (events the adapter produced at once share one).
    frames = 0
    for body in result.bodies:
        assert body.startswith(b"data: ") and body.endswith(b"\n\n")
        for frame in body.removesuffix(b"\n\n").split(b"\n\n"):
            assert frame.startswith(b"data: ") and b"\n" not in frame
            frames += 1
    assert frames == len(EVERY_CHUNK) + 1
    assert result.bodies[-1].endswith(b"data: [DONE]\n\n")
    assert result.complete


async def test_no_event_waits_for_the_next_one() -> None:
    class Lockstep:
        """Produces each event only once the previous one was written to the client."""

        def __init__(self) -> None:
            self.written = anyio.Event()

        async def stream(
            self, request: ChatRequest, signal: AbortSignal
        ) -> AsyncIterator[Mapping[str, object]]:
            for event in EVERY_EVENT:
                yield event
                await self.written.wait()
                self.written = anyio.Event()

    adapter = Lockstep()
    result = await respond(adapter, keep_alive=None, on_body=lambda result: adapter.written.set())
    # Each event was sent before the adapter produced the next: one write each.
    assert len(result.bodies) == len(EVERY_EVENT) + 1
    for body, chunk in zip(result.bodies, EVERY_CHUNK, strict=False):
        assert json.loads(body.removeprefix(b"data: ").removesuffix(b"\n\n")) == chunk
    assert result.bodies[-1] == b"data: [DONE]\n\n"


async def test_with_keep_alive_on_the_frames_are_the_same() -> None:
    result = await respond(ScriptedAdapter(EVERY_EVENT), keep_alive=30)
    assert sse_chunks(result.body.decode()) == EVERY_CHUNK
    assert result.headers == PROTOCOL_HEADERS


async def test_each_event_reaches_the_client_before_the_adapter_goes_on() -> None:
    adapter = Gated(
        [
            {"type": "start"},
            {"type": "text-start", "id": "t"},
            {"type": "text-delta", "id": "t", "delta": "first"},
        ],
        [{"type": "text-end", "id": "t"}, {"type": "finish", "finishReason": "stop"}],
    )
    seen: list[bytes] = []

    def on_body(result: ASGIResult) -> None:
        seen.append(result.bodies[-1])
        if b'"first"' in result.bodies[-1]:
            assert not adapter.gate.is_set()
            adapter.gate.set()

    result = await respond(adapter, on_body=on_body)
    assert adapter.gate.is_set()
    chunks = sse_chunks(result.body.decode())
    assert [c["type"] for c in chunks] == [
        "start",
        "text-start",
        "text-delta",
        "text-end",
        "finish",
    ]


async def test_start_is_sent_first_with_a_message_id() -> None:
    no_start = [
        {"type": "text-start", "id": "t"},
        {"type": "text-end", "id": "t"},
        {"type": "finish", "finishReason": "stop"},
    ]
    chunks = sse_chunks((await respond(ScriptedAdapter(no_start))).body.decode())
    assert chunks[0]["type"] == "start"
    assert chunks[0]["messageId"].startswith("msg-") and len(chunks[0]["messageId"]) == 20
    assert chunks[1:] == [
        *no_start[:2],
        {**no_start[2], "messageMetadata": {"finishReason": "stop"}},
    ]

    # The adapter's own id is kept; a message_id given to the response wins.
    kept = sse_chunks((await respond(ScriptedAdapter(EVERY_EVENT))).body.decode())
    assert kept[0] == EVERY_EVENT[0]
    forced = sse_chunks(
        (await respond(ScriptedAdapter(EVERY_EVENT), message_id="a-1")).body.decode()
    )
    assert forced[0] == {**EVERY_EVENT[0], "messageId": "a-1"}
    added = sse_chunks((await respond(ScriptedAdapter(no_start), message_id="a-2")).body.decode())
    assert added[0] == {"type": "start", "messageId": "a-2"}


@pytest.mark.parametrize(
    ("metadata", "expected"),
    [
        (
            None,
            [
                {
                    "type": "finish",
                    "finishReason": "length",
                    "messageMetadata": {"finishReason": "length", "usage": USAGE},
                }
            ],
        ),
        (
            {"usage": "mine", "x": 1},
            [
                {
                    "type": "finish",
                    "finishReason": "length",
                    "messageMetadata": {"finishReason": "length", "usage": "mine", "x": 1},
                }
            ],
        ),
        (
            ["not", "an", "object"],
            [
                {
                    "type": "message-metadata",
                    "messageMetadata": {"finishReason": "length", "usage": USAGE},
                },
                {
                    "type": "finish",
                    "finishReason": "length",
                    "messageMetadata": ["not", "an", "object"],
                },
            ],
        ),
    ],
)
async def test_usage_and_finish_reason_travel_in_message_metadata(
    metadata: object, expected: list[dict[str, Any]]
) -> None:
    finish: dict[str, Any] = {"type": "finish", "finishReason": "length", "usage": USAGE}
    if metadata is not None:
        finish["messageMetadata"] = metadata
    chunks = sse_chunks((await respond(ScriptedAdapter([finish]))).body.decode())
    assert chunks[1:] == expected
    assert all("usage" not in chunk for chunk in chunks if chunk["type"] == "finish")


@pytest.mark.parametrize(
    "error",
    [
        RuntimeError("secret internal detail"),
        ProviderError("openai", "secret internal detail", status=500, request_id="req_1"),
    ],
    ids=["exception", "provider-error"],
)
async def test_a_failure_after_the_headers_is_one_masked_error_chunk(
    error: Exception, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.WARNING, logger="ai_chat.server"):
        result = await respond(Failing(error))
    assert result.status == 200
    body = result.body.decode()
    assert "secret" not in body and "Traceback" not in body
    chunks = sse_chunks(body)
    assert chunks[-1] == {"type": "error", "errorText": MASKED_ERROR}
    assert [c["type"] for c in chunks] == ["start", "text-start", "text-delta", "error"]
    assert (
        result.bodies[-1]
        == b'data: {"type":"error","errorText":"An error occurred."}\n\ndata: [DONE]\n\n'
    )
    # The server's log has what the client does not.
    assert "secret internal detail" in caplog.text


async def test_a_protocol_violation_by_the_adapter_is_masked_too() -> None:
    bad = [{"type": "start"}, {"type": "text-delta", "id": "never-started", "delta": "x"}]
    chunks = sse_chunks((await respond(ScriptedAdapter(bad))).body.decode())
    assert chunks == [
        {"type": "start", "messageId": chunks[0]["messageId"]},
        {"type": "error", "errorText": MASKED_ERROR},
    ]


async def test_on_error_formats_the_error_text() -> None:
    def on_error(exc: Exception) -> str:
        assert isinstance(exc, ProviderError)
        return f"provider failed with status {exc.status}"

    error = ProviderError("openai", "boom", status=503)
    chunks = sse_chunks((await respond(Failing(error), on_error=on_error)).body.decode())
    assert chunks[-1] == {"type": "error", "errorText": "provider failed with status 503"}


@pytest.mark.parametrize("hook_result", ["raise", "not-a-string"])
async def test_a_broken_on_error_falls_back_to_the_masked_text(
    hook_result: str, caplog: pytest.LogCaptureFixture
) -> None:
    def on_error(exc: Exception) -> Any:
        if hook_result == "raise":
            raise ValueError("hook bug")
        return 42

    with caplog.at_level(logging.WARNING, logger="ai_chat.server"):
        result = await respond(Failing(RuntimeError("x")), on_error=on_error)
    assert sse_chunks(result.body.decode())[-1] == {"type": "error", "errorText": MASKED_ERROR}
    assert "on_error" in caplog.text


async def test_keep_alive_comments_while_the_adapter_is_idle() -> None:
    adapter = Gated(
        [{"type": "start"}],
        [{"type": "finish", "finishReason": "stop"}],
    )

    def on_body(result: ASGIResult) -> None:
        if result.bodies[-1] == b": keep-alive\n\n":
            adapter.gate.set()

    result = await respond(adapter, keep_alive=0.01, on_body=on_body)
    assert adapter.gate.is_set()
    assert b": keep-alive\n\n" in result.bodies
    assert [c["type"] for c in sse_chunks(result.body.decode())] == ["start", "finish"]
    assert result.bodies[-1] == b"data: [DONE]\n\n"


async def test_a_client_disconnect_cancels_and_closes_the_adapter() -> None:
    recorder = Recorder()
    disconnect = anyio.Event()

    def on_body(result: ASGIResult) -> None:
        if b'"partial"' in result.bodies[-1]:
            assert recorder.log == []
            disconnect.set()

    result = await respond(recorder, disconnect=disconnect, on_body=on_body)
    # By the time the response returns, the adapter was cancelled and closed.
    assert recorder.log == ["cancelled", "closed, aborted=True"]
    assert recorder.reason == "the consumer's read was cancelled"
    assert not result.complete
    assert b"[DONE]" not in result.body


async def test_the_stream_is_closed_when_the_response_ends() -> None:
    stream = create_chat_stream(ScriptedAdapter(EVERY_EVENT), REQUEST)
    with anyio.fail_after(HANG_GUARD):
        await call_asgi(UIMessageStreamResponse(stream), b"")
    assert not stream.adapter_running
    assert "stopped" in repr(stream) or "adapter done" in repr(stream)


def test_arguments_are_checked() -> None:
    from ai_chat import ConfigurationError

    stream = create_chat_stream(ScriptedAdapter(), REQUEST)
    for bad in (0, -1, float("inf"), float("nan"), "5", True):
        with pytest.raises(ConfigurationError, match="keep_alive"):
            UIMessageStreamResponse(stream, keep_alive=bad)  # pyright: ignore[reportArgumentType]
    with pytest.raises(ConfigurationError, match="message_id"):
        UIMessageStreamResponse(stream, message_id="")
    response = UIMessageStreamResponse(
        stream, headers={"X-Extra": "1", "Content-Type": "text/plain"}
    )
    assert (b"x-extra", b"1") in response.raw_headers
    assert [v for k, v in response.raw_headers if k == b"content-type"] == [b"text/event-stream"]


async def call_with_failing_send(
    response: UIMessageStreamResponse, failure: Exception, *, after: int, keep_alive_only: bool
) -> list[bytes]:
    """Call ``response`` with a ``send`` that raises ``failure`` from its ``after``-th body
    message on (only for keep-alive comments with ``keep_alive_only``), as an ASGI 2.4
    server does once the client has gone."""
    bodies: list[bytes] = []
    gone = anyio.Event()

    async def receive() -> Any:
        await gone.wait()  # a real server reports the disconnect it noticed
        return {"type": "http.disconnect"}

    async def send(message: Any) -> None:
        if message["type"] != "http.response.body":
            return
        comment = message["body"] == b": keep-alive\n\n"
        if len(bodies) >= after and (comment or not keep_alive_only):
            gone.set()
            raise failure
        bodies.append(message["body"])

    scope = {"type": "http", "asgi": {"version": "3.0", "spec_version": "2.4"}}
    with anyio.fail_after(HANG_GUARD):
        await response(scope, receive, send)
    return bodies


async def test_a_send_failing_with_oserror_ends_the_response_quietly() -> None:
    recorder = Recorder()
    stream = create_chat_stream(recorder, REQUEST)
    bodies = await call_with_failing_send(
        UIMessageStreamResponse(stream, keep_alive=None),
        OSError("client gone"),
        after=0,
        keep_alive_only=False,
    )
    assert bodies == []
    assert recorder.log == ["cancelled", "closed, aborted=True"]
    assert not stream.adapter_running


async def test_a_keep_alive_failing_with_oserror_ends_the_response_quietly() -> None:
    recorder = Recorder()
    stream = create_chat_stream(recorder, REQUEST)
    await call_with_failing_send(
        UIMessageStreamResponse(stream, keep_alive=0.01),
        OSError("client gone"),
        after=0,
        keep_alive_only=True,
    )
    assert recorder.log == ["cancelled", "closed, aborted=True"]


async def test_a_server_failure_reaches_the_server_unwrapped() -> None:
    stream = create_chat_stream(ScriptedAdapter(EVERY_EVENT), REQUEST)
    with pytest.raises(RuntimeError, match="server bug"):
        await call_with_failing_send(
            UIMessageStreamResponse(stream),
            RuntimeError("server bug"),
            after=1,
            keep_alive_only=False,
        )
    assert not stream.adapter_running
