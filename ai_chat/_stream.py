"""The send lifecycle: a lazy, validated, cancellable stream of one chat answer."""

from __future__ import annotations

import contextlib
import inspect
import logging
import math
import time
from collections import deque
from typing import Any, Final, Self, cast

import anyio
import anyio.lowlevel

from ._adapter import AbortSignal, AIChatAdapter
from ._closing import AsyncClosing
from ._describe import MAX_SHOWN_CHARS, clip, exception_text
from ._errors import (
    AdapterError,
    AIChatError,
    ConfigurationError,
    ProtocolError,
    StreamBusyError,
    StreamClosedError,
)
from ._events import EventChecker
from ._request import snapshot_request
from ._spawn import LoopHandle, spawn_detached, task_cancelled_from_outside
from ._types import ChatEvent, ChatRequest
from .limits import JSONLimits

__all__ = ["ChatStream", "create_chat_stream", "stream_chat"]

logger = logging.getLogger("ai_chat")

_DEFAULT_LIMITS = JSONLimits()
DEFAULT_MAX_RESPONSE_CHARS: Final = 1_000_000
MAX_RESPONSE_CHARS_CAP: Final = 10_000_000
DEFAULT_CLOSE_TIMEOUT: Final = 0.5
MAX_CLOSE_TIMEOUT: Final = 60.0
# Events the adapter may run ahead of its consumer. Handing events over in small batches
# instead of one task switch per event is what keeps the per-event cost near json.dumps.
READ_AHEAD: Final = 32


class _End:
    """The adapter finished cleanly after its finish event."""


_END: Final = _End()


class _Pipe:
    """What the consumer and the adapter's task share; it never refers to the ChatStream,
    so an abandoned stream can be garbage-collected and stop its adapter."""

    __slots__ = (
        "abandoned",
        "buffer",
        "close_requested",
        "close_timeout",
        "data_ready",
        "done",
        "iterator",
        "loop",
        "name",
        "outcome",
        "scope",
        "signal",
        "space_ready",
        "stop_reason",
        "stopped_at",
    )

    def __init__(self, name: str, close_timeout: float) -> None:
        self.name = name
        self.close_timeout = close_timeout
        self.buffer: deque[ChatEvent] = deque()
        self.data_ready: anyio.Event | None = None
        self.space_ready: anyio.Event | None = None
        # _END, or the exception the consumer gets after the buffered events.
        self.outcome: _End | BaseException | None = None
        self.stop_reason: str | None = None
        self.stopped_at = 0.0
        self.abandoned = False
        self.iterator: Any = None
        # Set once the iterator's aclose() was requested while its __anext__ was blocked.
        self.close_requested: anyio.Event | None = None
        self.signal = AbortSignal()
        self.scope = anyio.CancelScope()
        self.done = anyio.Event()
        self.loop = LoopHandle()

    def wake_reader(self) -> None:
        waiter = self.data_ready
        if waiter is not None:
            self.data_ready = None
            waiter.set()

    def wake_writer(self) -> None:
        waiter = self.space_ready
        if waiter is not None:
            self.space_ready = None
            waiter.set()

    def stop(self, reason: str) -> None:
        """Stop the adapter and wake a pending read. Idempotent; call in the loop's thread.

        The signal is aborted with ``reason`` and the adapter's task cancelled. An
        iterator that is not an async generator also gets its ``aclose()`` requested at
        once, without waiting for a blocked ``__anext__`` (an async generator cannot be
        closed while it runs; it is closed as soon as its ``__anext__`` returns).
        """
        if self.stop_reason is not None:
            return
        if not self.done.is_set():
            self.stopped_at = time.monotonic()
            self.signal.abort(reason)
            self.scope.cancel()
            iterator = self.iterator
            if (
                iterator is not None
                and not inspect.isasyncgen(iterator)
                and self.close_requested is None
            ):
                closed = self.close_requested = anyio.Event()
                name, limit = self.name, self.close_timeout

                async def close_now() -> None:
                    failure = await _close(iterator, limit, name, closed)
                    if failure is not None:
                        logger.error("closing adapter %s raised %r", name, failure)

                spawn_detached(close_now, name=f"ai_chat close {name}")
        self.stop_reason = reason
        self.wake_reader()
        self.wake_writer()


class ChatStream(AsyncClosing):
    """One chat answer as an async iterator of frozen events and an async context manager.

    Create it with :func:`create_chat_stream` or :func:`stream_chat`. Nothing starts
    until the first read; then the adapter runs in a task of its own, at most
    ``READ_AHEAD`` events ahead of the reader, and every event is validated before it
    is delivered. Events are delivered once: a stream cannot be replayed or resumed.

    Any task of the event loop may read, one read at a time: a read that starts while
    another is waiting for the adapter raises :class:`~ai_chat.StreamBusyError` and
    changes nothing, so the waiting reader still gets every event. Reading the first
    event in one task and the rest in another (an endpoint that peeks before returning a
    ``StreamingResponse``, whose body Starlette iterates in a child task; a consumer that
    hands the stream to a worker) is fine. Tasks that take turns reading each get part
    of the answer: giving the stream to one reader at a time is the caller's job.

    A stream ends normally only after a ``finish`` event followed by the end of the
    adapter's iterator. Otherwise a read raises: :class:`~ai_chat.ProtocolError` (a bad
    or out-of-order event, a missing finish, events after finish),
    :class:`~ai_chat.LimitExceededError`, :class:`~ai_chat.AdapterError` (or the
    adapter's own :class:`~ai_chat.AIChatError`), and, after the consumer stopped the
    stream, :class:`~ai_chat.StreamClosedError`.

    Every way of stopping early (a cancelled read, in whichever task it runs;
    :meth:`aclose`, leaving ``async with``, :meth:`abort`, a validation failure, garbage
    collection of a running stream) aborts the adapter's signal with a reason, cancels
    the adapter and then closes its iterator.
    A cancelled read returns at once even if the adapter ignores cancellation;
    :meth:`aclose` waits at most ``close_timeout`` seconds for the adapter to stop and
    otherwise leaves it to finish in the background (logged on the ``ai_chat`` logger).
    """

    __slots__ = (
        "__weakref__",
        "_adapter",
        "_close_timeout",
        "_early_stop",
        "_limits",
        "_max_response_chars",
        "_pipe",
        "_raw_request",
        "_reading",
        "_request",
    )

    def __init__(
        self,
        adapter: AIChatAdapter,
        request: object,
        *,
        limits: JSONLimits = _DEFAULT_LIMITS,
        max_response_chars: int = DEFAULT_MAX_RESPONSE_CHARS,
        close_timeout: float = DEFAULT_CLOSE_TIMEOUT,
        lazy: bool = False,
    ) -> None:
        if not callable(getattr(adapter, "stream", None)):
            raise ConfigurationError(
                "adapter",
                adapter,
                "an AIChatAdapter (an object with a stream(request, signal) method)",
            )
        if (
            type(max_response_chars) is not int
            or not 1 <= max_response_chars <= MAX_RESPONSE_CHARS_CAP
        ):
            raise ConfigurationError(
                "max_response_chars",
                max_response_chars,
                f"an int from 1 to {MAX_RESPONSE_CHARS_CAP:,}",
            )
        if (
            type(close_timeout) not in (int, float)
            or not math.isfinite(close_timeout)
            or not 0 < close_timeout <= MAX_CLOSE_TIMEOUT
        ):
            raise ConfigurationError(
                "close_timeout",
                close_timeout,
                f"a number of seconds above 0 and at most {MAX_CLOSE_TIMEOUT:g}",
            )
        self._adapter = adapter
        self._limits = limits
        self._max_response_chars = max_response_chars
        self._close_timeout = float(close_timeout)
        self._pipe: _Pipe | None = None
        self._early_stop: str | None = None
        # True while a read waits for the adapter; a second read meanwhile is refused.
        self._reading = False
        self._request: ChatRequest | None = None
        self._raw_request: object = request
        if not lazy:
            self._snapshot()

    def _snapshot(self) -> ChatRequest:
        if self._request is None:
            self._request = snapshot_request(self._raw_request, self._limits)
            self._raw_request = None
        return self._request

    @property
    def request(self) -> ChatRequest:
        """The frozen request snapshot the adapter receives."""
        return self._snapshot()

    @property
    def adapter_running(self) -> bool:
        """Whether the adapter's task is still running (it starts on the first read).

        After :meth:`aclose` returns this is ``False`` unless the adapter ignored
        cancellation for longer than ``close_timeout``.
        """
        return self._pipe is not None and not self._pipe.done.is_set()

    @property
    def buffered_events(self) -> int:
        """How many validated events wait to be read: the next read returns one of them
        without waiting. 0 before the stream starts. (A server uses it to put events
        that are already there into one write.)"""
        return 0 if self._pipe is None else len(self._pipe.buffer)

    @property
    def signal(self) -> AbortSignal | None:
        """The adapter's abort signal, once the stream has started."""
        return None if self._pipe is None else self._pipe.signal

    # --- reading --------------------------------------------------------------------

    def __aiter__(self) -> ChatStream:
        self._snapshot()
        return self

    async def __anext__(self) -> ChatEvent:
        """The next validated event; the first read starts the adapter.

        Any task may read when no other read is pending. A buffered event is returned
        without a checkpoint.

        Raises:
            StopAsyncIteration: the answer is complete (and on every later read).
            StreamBusyError: another read of this stream is pending (the stream is left
                as it was, for that reader).
            StreamClosedError: the stream was stopped (:meth:`aclose`, :meth:`abort`,
                a cancelled read).
            AIChatError: what the stream failed with (see the class), again on every
                later read.

        Cancellation: cancelling a pending read stops the stream: the adapter's signal is
        aborted and the adapter cancelled and closed, and later reads raise
        :class:`~ai_chat.StreamClosedError`. Cancelling the task reading it is the same.
        """
        pipe = self._pipe
        if pipe is None:
            pipe = await self._start()
        if pipe.stop_reason is not None:
            raise StreamClosedError(pipe.stop_reason)
        if self._reading:
            # Checked before the buffer: events the adapter added since the pending read
            # began waiting are that read's, not an overlapping one's.
            raise StreamBusyError()
        buffer = pipe.buffer
        if buffer:
            # Buffered events are handed over without a checkpoint, like receive_nowait().
            event = buffer.popleft()
            if pipe.space_ready is not None:
                pipe.wake_writer()
            return event
        self._reading = True
        try:
            while not buffer or pipe.stop_reason is not None:
                if pipe.stop_reason is not None:
                    raise StreamClosedError(pipe.stop_reason)
                outcome = pipe.outcome
                if outcome is not None:
                    # A failed stream keeps failing: a second loop must not look complete.
                    if outcome is _END:
                        raise StopAsyncIteration
                    raise cast(BaseException, outcome)
                waiter = pipe.data_ready = anyio.Event()
                try:
                    await waiter.wait()
                except anyio.get_cancelled_exc_class():
                    pipe.stop("the consumer's read was cancelled")
                    raise
        finally:
            self._reading = False
        event = buffer.popleft()
        pipe.wake_writer()
        return event

    async def _start(self) -> _Pipe:
        if self._early_stop is not None:
            raise StreamClosedError(self._early_stop)
        request = self._snapshot()
        try:
            # A read in an already-cancelled scope must not start the adapter.
            await anyio.lowlevel.checkpoint_if_cancelled()
        except anyio.get_cancelled_exc_class():
            self._early_stop = "the consumer's read was cancelled"
            raise
        if self._pipe is not None:  # another task started it meanwhile
            return self._pipe
        adapter = self._adapter
        name = type(adapter).__name__
        pipe = self._pipe = _Pipe(name, self._close_timeout)
        # The task must not refer to self, so that an abandoned stream can be collected.
        limits, max_chars = self._limits, self._max_response_chars
        spawn_detached(
            lambda: _run_adapter(adapter, request, pipe, limits, max_chars),
            name=f"ai_chat adapter {name}",
        )
        return pipe

    # --- stopping -------------------------------------------------------------------

    def abort(self, reason: str = "aborted") -> None:
        """Stop the stream from any task of the same event loop thread.

        The adapter's signal is aborted with ``reason`` and the adapter is cancelled; a
        pending read and every later read raise :class:`~ai_chat.StreamClosedError`.
        Call :meth:`aclose` (or leave ``async with``) to wait for the adapter to stop.
        """
        if type(reason) is not str:
            raise ConfigurationError("reason", reason, "a string saying why the stream stops")
        if self._pipe is None:
            if self._early_stop is None:
                self._early_stop = reason
        else:
            self._pipe.stop(reason)

    async def aclose(self) -> None:
        """Stop the stream and wait up to ``close_timeout`` for the adapter to stop.

        Idempotent. If the adapter ignores cancellation, this returns after the timeout
        and the adapter's leftover work finishes in the background, logged as a warning.
        Cancelling ``aclose`` itself does not shorten the (bounded) wait.
        """
        if self._pipe is None:
            self.abort("the stream was closed before it started")
            return
        pipe = self._pipe
        pipe.stop("the stream was closed")
        if pipe.done.is_set() or pipe.abandoned:
            return
        with anyio.move_on_after(self._close_timeout, shield=True):
            await pipe.done.wait()
        if not pipe.done.is_set() and not pipe.abandoned:
            pipe.abandoned = True
            logger.warning(
                "adapter %s did not stop within %.3g s of being closed; its leftover work "
                "continues in the background",
                type(self._adapter).__name__,
                self._close_timeout,
            )

    async def __aenter__(self) -> Self:
        self._snapshot()
        return self

    def __del__(self) -> None:
        pipe = getattr(self, "_pipe", None)
        if pipe is not None and pipe.stop_reason is None and not pipe.done.is_set():
            # The collector may run in any thread; the stop must happen in the loop's.
            # Without a running event loop there is nothing left to stop.
            with contextlib.suppress(Exception):
                pipe.loop.run_soon(
                    lambda: pipe.stop(
                        "the stream was garbage-collected while the adapter was running"
                    )
                )

    def __repr__(self) -> str:
        pipe = self._pipe
        if pipe is None:
            state = "not started"
        elif pipe.stop_reason is not None:
            state = f"stopped: {clip(pipe.stop_reason, MAX_SHOWN_CHARS)}"
        elif pipe.outcome is not None:
            state = "adapter done"
        else:
            state = "running"
        return f"<ChatStream {type(self._adapter).__name__} {state}>"


async def _run_adapter(
    adapter: AIChatAdapter,
    request: ChatRequest,
    pipe: _Pipe,
    limits: JSONLimits,
    max_response_chars: int,
) -> None:
    """The adapter's task: read, validate and hand over events until the end or a stop.

    Whatever happens, the iterator is closed, the outcome recorded and the reader woken
    (the ``finally``); only a cancellation of this task itself (the event loop shutting
    down) propagates out of it.
    """
    name = pipe.name
    checker = EventChecker(limits, max_response_chars, name)
    outcome: _End | BaseException = _END
    shutdown: BaseException | None = None
    try:
        try:
            with pipe.scope:
                iterator = _open(adapter, request, pipe.signal, name)
                pipe.iterator = iterator
                anext = iterator.__anext__
                buffer = pipe.buffer
                while True:
                    try:
                        raw = await anext()
                    except StopAsyncIteration:
                        checker.check_end()
                        break
                    if pipe.stop_reason is not None:
                        break
                    buffer.append(checker.check(raw))
                    if pipe.data_ready is not None:
                        pipe.wake_reader()
                    while len(buffer) >= READ_AHEAD and pipe.stop_reason is None:
                        waiter = pipe.space_ready = anyio.Event()
                        await waiter.wait()
        except AIChatError as exc:
            outcome = exc
        except Exception as exc:
            outcome = _adapter_error(name, exc)
        except anyio.get_cancelled_exc_class() as exc:
            if task_cancelled_from_outside():
                # Not our scope's cancellation (the scope absorbs that): the event loop is
                # shutting down. Stop and close the adapter, then let this task end.
                shutdown = exc
                outcome = StreamClosedError("the event loop is shutting down")
                pipe.stop("the event loop is shutting down")
            else:
                # asyncio only: the adapter awaited something that someone else cancelled.
                outcome = _adapter_error(name, exc)
        except BaseException as exc:  # KeyboardInterrupt, SystemExit: for the consumer to see
            outcome = exc
        if isinstance(outcome, BaseException):
            pipe.signal.abort(f"the stream failed: {exception_text(outcome)}")
    finally:
        failure = await _close(pipe.iterator, pipe.close_timeout, name, None, pipe.close_requested)
        if failure is not None and outcome is _END:
            outcome = failure
        pipe.outcome = outcome
        _finished(pipe, name)
    if shutdown is not None:
        raise shutdown


def _adapter_error(name: str, exc: BaseException) -> AdapterError:
    # exception_text never raises: an exception whose str() fails (a huge int in its
    # args) must still end the stream as an AdapterError.
    error = AdapterError(name, exception_text(exc))
    error.__cause__ = exc
    return error


def _open(adapter: AIChatAdapter, request: ChatRequest, signal: AbortSignal, name: str) -> Any:
    iterator: Any = adapter.stream(request, signal)
    if inspect.iscoroutine(iterator):
        iterator.close()
        raise ProtocolError(
            f"{name}.stream() returned a coroutine: write it as an async generator (with "
            "yield), or return an async iterator"
        )
    if not callable(getattr(iterator, "__anext__", None)):
        raise ProtocolError(
            f"{name}.stream() returned {type(iterator).__name__}, not an async iterator"
        )
    return iterator


async def _close(
    iterator: Any,
    limit: float,
    name: str,
    done: anyio.Event | None = None,
    requested: anyio.Event | None = None,
) -> BaseException | None:
    """Request the iterator's aclose(), bounded and shielded, and never raise.

    If ``requested`` is given, an earlier request is under way: wait for it instead.
    Failures are logged; a KeyboardInterrupt or SystemExit is returned for the consumer.
    """
    failure: BaseException | None = None
    with anyio.move_on_after(limit, shield=True) as scope:
        if requested is not None:
            await requested.wait()
        else:
            aclose = getattr(iterator, "aclose", None)
            try:
                if aclose is not None:
                    await aclose()
            except anyio.get_cancelled_exc_class():
                if task_cancelled_from_outside():
                    raise  # our own deadline: the scope absorbs it
                logger.warning(
                    "closing adapter %s raised a stray cancellation", name, exc_info=True
                )
            except Exception:
                logger.warning("closing adapter %s raised", name, exc_info=True)
            except BaseException as exc:  # KeyboardInterrupt, SystemExit
                failure = exc
    if scope.cancelled_caught:
        logger.warning("adapter %s did not finish closing within %.3g s", name, limit)
    if done is not None:
        done.set()
    return failure


def _finished(pipe: _Pipe, name: str) -> None:
    pipe.done.set()
    pipe.wake_reader()
    if pipe.stopped_at and pipe.abandoned:
        logger.warning(
            "adapter %s finished its leftover work %.3g s after the stream was stopped",
            name,
            time.monotonic() - pipe.stopped_at,
        )
    outcome = pipe.outcome
    if pipe.stop_reason is not None and isinstance(outcome, (KeyboardInterrupt, SystemExit)):
        # The consumer has gone: nobody will read this outcome, so say it here.
        logger.error("adapter %s raised %r after its stream was stopped", name, outcome)


def create_chat_stream(
    adapter: AIChatAdapter,
    request: object,
    *,
    limits: JSONLimits = _DEFAULT_LIMITS,
    max_response_chars: int = DEFAULT_MAX_RESPONSE_CHARS,
    close_timeout: float = DEFAULT_CLOSE_TIMEOUT,
) -> ChatStream:
    """Snapshot ``request`` now and return a stream that starts ``adapter`` on first read.

    Args:
        adapter: any :class:`~ai_chat.AIChatAdapter`.
        request: ``{"messages": [...], "tools": [...], "parameters": {...}}``; ``tools``
            and ``parameters`` are optional. It is normalized, frozen and detached here:
            changing the caller's objects later changes nothing.
        limits: JSON limits for the messages, the tools, the parameters and each event.
        max_response_chars: bound on the sum of ``json_size`` of all events, 1 to
            10,000,000.
        close_timeout: how long :meth:`ChatStream.aclose` waits for the adapter to stop,
            above 0 and at most 60 seconds.

    Raises:
        ValidationError: the request is invalid (before any adapter work).
        LimitExceededError: the request exceeds ``limits``.
        ConfigurationError: an argument is out of range.
    """
    return ChatStream(
        adapter,
        request,
        limits=limits,
        max_response_chars=max_response_chars,
        close_timeout=close_timeout,
    )


def stream_chat(
    adapter: AIChatAdapter,
    request: object,
    *,
    limits: JSONLimits = _DEFAULT_LIMITS,
    max_response_chars: int = DEFAULT_MAX_RESPONSE_CHARS,
    close_timeout: float = DEFAULT_CLOSE_TIMEOUT,
) -> ChatStream:
    """Like :func:`create_chat_stream`, but the request is snapshotted on first iteration.

    The convenience form for ``async for event in stream_chat(adapter, request):``. Use
    ``async with`` around it (or close it) when you may stop before the end.
    """
    return ChatStream(
        adapter,
        request,
        limits=limits,
        max_response_chars=max_response_chars,
        close_timeout=close_timeout,
        lazy=True,
    )
