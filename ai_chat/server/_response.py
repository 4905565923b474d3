"""A Starlette response that streams a :class:`~ai_chat.ChatStream` as a UI message stream."""

from __future__ import annotations

import logging
import math
from collections.abc import Awaitable, Callable, Mapping
from typing import Final, Protocol, cast

import anyio
from starlette.responses import Response
from starlette.types import Receive, Scope, Send

from .._errors import ConfigurationError
from .._stream import ChatStream
from .._types import ChatEvent
from ._encode import DONE, KEEP_ALIVE, ChunkEncoder, error_chunk

__all__ = ["DEFAULT_KEEP_ALIVE", "MASKED_ERROR", "UIMessageStreamResponse", "check_keep_alive"]

logger = logging.getLogger("ai_chat.server")


class AnswerRecorder(Protocol):
    """What keeps an answer (the chat endpoint's store wiring): sees every event sent,
    then is told the stream ended after ``finish`` and stores the answer (``False`` if
    that failed)."""

    def feed(self, event: ChatEvent) -> None: ...

    def complete(self, message_id: str | None) -> Awaitable[bool]: ...


ANSWER_NOT_SAVED: Final = "The answer could not be saved."

DEFAULT_KEEP_ALIVE: Final = 15.0
# Events already waiting when one is sent go out in the same write, up to this size.
BATCH_BYTES: Final = 64 * 1024
MASKED_ERROR: Final = "An error occurred."

UI_MESSAGE_STREAM_HEADERS: Final = (
    (b"content-type", b"text/event-stream"),
    (b"cache-control", b"no-cache"),
    (b"connection", b"keep-alive"),
    (b"x-vercel-ai-ui-message-stream", b"v1"),
    (b"x-accel-buffering", b"no"),
)


class UIMessageStreamResponse(Response):
    """Streams one chat answer in the AI SDK's UI message stream protocol.

    The response starts at once with status 200 and the five protocol headers
    (``content-type: text/event-stream``, ``cache-control: no-cache``, ``connection:
    keep-alive``, ``x-vercel-ai-ui-message-stream: v1``, ``x-accel-buffering: no``), then
    sends each event of ``stream`` as one ``data: <json>`` frame as soon as the adapter
    has produced it, and ends with ``data: [DONE]``. No event ever waits for a later one:
    events that are already waiting when one is sent (an adapter that produced several
    at once) go out in the same write, up to 64 KiB, which saves a system call per event. The first chunk is always ``start`` with a ``messageId``; the
    finish reason and usage travel in ``messageMetadata`` (see :mod:`ai_chat.server`).

    A failure of the stream after the headers went out (a provider error, a protocol
    error, a limit) becomes one ``error`` chunk, then ``[DONE]``. Its ``errorText`` is
    ``"An error occurred."`` unless ``on_error`` returns another text for the exception;
    the exception itself is logged on the ``ai_chat.server`` logger and never sent. If
    ``on_error`` raises or returns something other than a string, the masked text is sent.

    If the client disconnects, the read in progress is cancelled, which aborts the
    adapter's signal and cancels it, and the stream is closed (the adapter's iterator
    closed, which releases its upstream connection); the stream is always closed when
    the response ends, within the stream's ``close_timeout``.

    Args:
        stream: the answer; the response reads it from one task and closes it.
        message_id: the ``messageId`` for ``start`` (a continued assistant message's id);
            ``None`` keeps the adapter's, or generates ``msg-<16 hex digits>``.
        on_error: formats the ``errorText`` a client sees for an exception.
        keep_alive: send a ``: keep-alive`` comment after this many seconds without a
            chunk (checked every ``keep_alive`` seconds, so a comment comes after one to
            two periods of silence); ``None`` sends none.
        headers: extra response headers (they cannot replace the protocol's five).

    Raises:
        ConfigurationError: ``keep_alive`` is not ``None`` or a positive finite number.
    """

    media_type = "text/event-stream"

    def __init__(
        self,
        stream: ChatStream,
        *,
        message_id: str | None = None,
        on_error: Callable[[Exception], str] | None = None,
        keep_alive: float | None = DEFAULT_KEEP_ALIVE,
        headers: Mapping[str, str] | None = None,
    ) -> None:
        check_keep_alive(keep_alive)
        if message_id is not None and (type(message_id) is not str or not message_id):
            raise ConfigurationError("message_id", message_id, "None or a non-empty string")
        self.stream = stream
        self.message_id = message_id
        self.on_error = on_error
        self.keep_alive = None if keep_alive is None else float(keep_alive)
        self.status_code = 200
        self.background = None
        protocol = {name for name, _ in UI_MESSAGE_STREAM_HEADERS}
        extra = [
            (name.lower().encode("latin-1"), value.encode("latin-1"))
            for name, value in (headers or {}).items()
        ]
        self.raw_headers = [
            *UI_MESSAGE_STREAM_HEADERS,
            *((name, value) for name, value in extra if name not in protocol),
        ]
        # Sends never overlap: the reader marks its sends, and waits for a keep-alive
        # comment in flight (rare) before its own; the keep-alive task sends only while
        # the reader is waiting for an event.
        self._sent = 0
        self._sending = False
        self._ending = False
        self._comment: anyio.Event | None = None
        # Set by the chat endpoint when it keeps conversations (not a public option).
        self.recorder: AnswerRecorder | None = None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        stream = self.stream
        try:
            async with anyio.create_task_group() as tg:
                tg.start_soon(_until_disconnect, receive, tg.cancel_scope)
                if self.keep_alive is not None:
                    tg.start_soon(self._keep_alive, send, self.keep_alive)
                await self._respond(send)
                tg.cancel_scope.cancel()
        except BaseExceptionGroup as group:
            # The ASGI server failed (a bug, not the client going away): let it see the
            # original exception, not a group of one.
            if len(group.exceptions) == 1:
                raise group.exceptions[0] from None
            raise
        finally:
            await stream.aclose()

    async def _respond(self, send: Send) -> None:
        """Send the whole response; return early (quietly) if the client has gone."""
        try:
            await send({"type": "http.response.start", "status": 200, "headers": self.raw_headers})
            encoder = ChunkEncoder(self.message_id)
            stream = self.stream
            anext = stream.__aiter__().__anext__
            ending = DONE
            pending: list[bytes] = []
            size = 0
            recorder = self.recorder
            while True:
                try:
                    event = await anext()
                except StopAsyncIteration:
                    # The answer is complete (a stream ends only after finish): it is
                    # stored before the client sees the end of the response.
                    if recorder is not None and not await recorder.complete(encoder.message_id):
                        ending = error_chunk(ANSWER_NOT_SAVED) + DONE
                    break
                except Exception as exc:
                    ending = error_chunk(self._error_text(exc)) + DONE
                    break
                frame = encoder.encode(event)
                if recorder is not None:
                    recorder.feed(event)
                pending.append(frame)
                size += len(frame)
                if size < BATCH_BYTES and _ready(stream):
                    continue  # the next event is already here: reading it does not wait
                await self._send(send, b"".join(pending), True)
                pending.clear()
                size = 0
            self._ending = True
            await self._send(send, b"".join(pending) + ending, False)
        except OSError:
            # ASGI 2.4 servers raise an OSError from send() once the client has gone.
            return

    async def _send(self, send: Send, body: bytes, more: bool) -> None:
        comment = self._comment
        if comment is not None:
            await comment.wait()
        self._sending = True
        try:
            await send({"type": "http.response.body", "body": body, "more_body": more})
        finally:
            self._sending = False
        self._sent += 1

    def _error_text(self, exc: Exception) -> str:
        logger.warning(
            "the chat stream failed after the response started: %s: %s",
            type(exc).__name__,
            exc,
            exc_info=exc,
        )
        if self.on_error is None:
            return MASKED_ERROR
        try:
            text = self.on_error(exc)
        except Exception:
            logger.exception("on_error raised; sending the masked error text instead")
            return MASKED_ERROR
        if type(text) is not str:
            logger.error("on_error returned %r, not a string; sending the masked text", text)
            return MASKED_ERROR
        return text

    async def _keep_alive(self, send: Send, period: float) -> None:
        seen = -1
        while True:
            await anyio.sleep(period)
            if self._sent == seen and not self._sending and not self._ending:
                comment = self._comment = anyio.Event()
                try:
                    await send(
                        {"type": "http.response.body", "body": KEEP_ALIVE, "more_body": True}
                    )
                except OSError:
                    return  # the client has gone (ASGI 2.4): the disconnect ends the response
                finally:
                    self._comment = None
                    comment.set()
            seen = self._sent


def _ready(stream: ChatStream) -> bool:
    """Whether the stream's next event is already buffered, so that reading it cannot wait.

    ChatStream hands buffered events over without waiting (like ``receive_nowait``).
    """
    return stream.buffered_events > 0


def check_keep_alive(keep_alive: object) -> None:
    """Raise :class:`~ai_chat.ConfigurationError` unless ``keep_alive`` is valid."""
    if keep_alive is not None and (
        type(keep_alive) not in (int, float)
        or not math.isfinite(cast(float, keep_alive))
        or cast(float, keep_alive) <= 0
    ):
        raise ConfigurationError(
            "keep_alive", keep_alive, "None or a positive, finite number of seconds"
        )


async def _until_disconnect(receive: Receive, scope: anyio.CancelScope) -> None:
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            scope.cancel()
            return
