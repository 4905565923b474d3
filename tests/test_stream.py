"""The send lifecycle: laziness, finish, and every way a consumer can stop, on both backends."""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import AsyncIterator, Callable, Mapping
from typing import Any

import anyio
import pytest

from ai_chat import (
    AbortSignal,
    AdapterError,
    AIChatError,
    ChatStream,
    ConfigurationError,
    LimitExceededError,
    ProtocolError,
    StreamBusyError,
    StreamClosedError,
    ValidationError,
    create_chat_stream,
    stream_chat,
)
from ai_chat.adapters import ScriptedAdapter
from ai_chat.limits import FrozenDict
from ai_chat.types import ChatRequest

pytestmark = pytest.mark.anyio

GUARD = 10.0  # seconds: a hang guard, never a performance assertion

REQUEST: Mapping[str, Any] = {
    "messages": [{"id": "u1", "role": "user", "parts": [{"type": "text", "text": "Hello"}]}]
}
TEXT: list[dict[str, Any]] = [
    {"type": "start"},
    {"type": "text-start", "id": "t"},
    {"type": "text-delta", "id": "t", "delta": "Hi"},
    {"type": "text-end", "id": "t"},
    {"type": "finish", "finishReason": "stop"},
]


class Recorder:
    """An adapter built from a script of steps; it records what happened to it.

    Each step is an event to yield, or a callable to await (for waits and failures).
    """

    def __init__(self, *steps: Mapping[str, Any] | Callable[[AbortSignal], Any]) -> None:
        self.steps = steps
        self.started = 0
        self.closed = 0
        self.signal: AbortSignal | None = None
        self.request: ChatRequest | None = None

    async def stream(
        self, request: ChatRequest, signal: AbortSignal
    ) -> AsyncIterator[Mapping[str, Any]]:
        self.started += 1
        self.signal = signal
        self.request = request
        try:
            for step in self.steps:
                if callable(step):
                    await step(signal)
                else:
                    yield step
        finally:
            self.closed += 1


async def forever(signal: AbortSignal) -> None:
    await anyio.sleep_forever()


async def read_all(stream: ChatStream) -> list[Any]:
    return [event async for event in stream]


# --- laziness, finish and the happy path ---------------------------------------------


async def test_nothing_starts_before_the_first_read() -> None:
    adapter = Recorder(*TEXT)
    stream = create_chat_stream(adapter, REQUEST)
    await anyio.sleep(0.01)
    assert adapter.started == 0 and stream.signal is None and not stream.adapter_running
    with anyio.fail_after(GUARD):
        events = await read_all(stream)
    assert adapter.started == 1 and adapter.closed == 1
    assert [e["type"] for e in events] == [e["type"] for e in TEXT]
    assert all(type(e) is FrozenDict for e in events)
    assert events == TEXT


async def test_the_adapter_receives_the_frozen_snapshot() -> None:
    adapter = Recorder(*TEXT)
    with anyio.fail_after(GUARD):
        await read_all(create_chat_stream(adapter, REQUEST))
    assert adapter.request is not None
    assert type(adapter.request) is FrozenDict
    assert json.loads(json.dumps(adapter.request["messages"])) == REQUEST["messages"]
    assert adapter.request["tools"] == () and adapter.request["parameters"] == {}


async def test_finish_then_clean_end_completes_and_stays_exhausted() -> None:
    stream = create_chat_stream(ScriptedAdapter(TEXT), REQUEST)
    with anyio.fail_after(GUARD):
        assert (await read_all(stream))[-1]["type"] == "finish"
        for _ in range(2):
            with pytest.raises(StopAsyncIteration):
                await stream.__anext__()
        assert not stream.adapter_running


async def test_missing_finish_is_a_protocol_error() -> None:
    stream = create_chat_stream(ScriptedAdapter(TEXT[:-1]), REQUEST)
    seen: list[str] = []
    with (
        anyio.fail_after(GUARD),
        pytest.raises(ProtocolError, match="without a finish event") as caught,
    ):
        async for event in stream:
            seen.append(event["type"])
    assert seen == ["start", "text-start", "text-delta", "text-end"]
    assert caught.value.event_index is None


async def test_event_after_finish_raises_on_the_next_read() -> None:
    adapter = Recorder(*TEXT, {"type": "start-step"}, forever)
    stream = create_chat_stream(adapter, REQUEST)
    with anyio.fail_after(GUARD):
        events = [await stream.__anext__() for _ in TEXT]
        assert events[-1]["type"] == "finish"
        with pytest.raises(ProtocolError, match="after finish") as caught:
            await stream.__anext__()
        assert caught.value.event_index == len(TEXT)
        # The adapter was stopped although it meant to go on forever.
        await stream.aclose()
    assert adapter.closed == 1
    assert adapter.signal is not None and adapter.signal.aborted


async def test_stream_chat_snapshots_on_first_iteration() -> None:
    messages: list[dict[str, Any]] = [dict(m) for m in REQUEST["messages"]]
    request: dict[str, Any] = {"messages": messages}
    adapter = Recorder(*TEXT)
    stream = stream_chat(adapter, request)
    messages.append({"id": "u2", "role": "user", "parts": [{"type": "text", "text": "again"}]})
    with anyio.fail_after(GUARD):
        async for _ in stream:
            pass
    assert adapter.request is not None and len(adapter.request["messages"]) == 2


async def test_stream_chat_reports_invalid_input_at_iteration() -> None:
    bad: dict[str, Any] = {"messages": [{"id": "", "role": "user", "parts": []}]}
    stream = stream_chat(Recorder(*TEXT), bad)
    with pytest.raises(ValidationError) as caught:
        async for _ in stream:
            pass
    assert caught.value.path == "$.messages[0].id"


# --- reading from several tasks, one read at a time -------------------------------------


async def test_a_stream_started_in_one_task_can_be_read_on_in_another() -> None:
    adapter = Recorder(*TEXT)
    stream = create_chat_stream(adapter, REQUEST)
    rest: list[Any] = []

    async def worker() -> None:
        rest.extend(await read_all(stream))

    with anyio.fail_after(GUARD):
        first = await stream.__anext__()
        async with anyio.create_task_group() as tg:
            tg.start_soon(worker)
    assert [first, *rest] == TEXT
    assert adapter.closed == 1 and not stream.adapter_running


async def test_a_stream_started_in_a_child_task_can_be_read_on_by_its_parent() -> None:
    stream = create_chat_stream(ScriptedAdapter(TEXT), REQUEST)
    first: list[Any] = []

    async def peek() -> None:
        first.append(await stream.__anext__())

    with anyio.fail_after(GUARD):
        async with anyio.create_task_group() as tg:
            tg.start_soon(peek)
        rest = await read_all(stream)
    assert [*first, *rest] == TEXT


async def test_an_overlapping_read_is_refused_and_the_pending_reader_keeps_every_event() -> None:
    release = anyio.Event()

    async def held(signal: AbortSignal) -> None:
        await release.wait()

    adapter = Recorder({"type": "start"}, held, *TEXT[1:])
    stream = create_chat_stream(adapter, REQUEST)
    seen: list[Any] = []

    async def first_reader() -> None:
        seen.extend(await read_all(stream))

    with anyio.fail_after(GUARD):
        async with anyio.create_task_group() as tg:
            tg.start_soon(first_reader)
            await anyio.wait_all_tasks_blocked()  # first_reader waits for the adapter
            with pytest.raises(StreamBusyError, match="another read of this chat stream"):
                await stream.__anext__()
            with pytest.raises(StreamBusyError):  # refused again, still harmless
                await stream.__anext__()
            release.set()
    assert seen == TEXT
    assert adapter.signal is not None and not adapter.signal.aborted
    assert adapter.closed == 1


async def test_an_overlapping_read_cannot_take_events_meant_for_the_pending_read() -> None:
    # The intruding read runs in the adapter's task right after an event was buffered
    # and the pending reader woken, before that reader has run: the buffered event is
    # the pending read's.
    stream: ChatStream | None = None
    refused: list[StreamBusyError] = []

    async def intrude(signal: AbortSignal) -> None:
        assert stream is not None and stream.buffered_events == 1
        try:
            await stream.__anext__()
        except StreamBusyError as exc:
            refused.append(exc)

    stream = create_chat_stream(Recorder({"type": "start"}, intrude, *TEXT[1:]), REQUEST)
    with anyio.fail_after(GUARD):
        events = await read_all(stream)
    assert len(refused) == 1
    assert events == TEXT


async def test_cancelling_a_task_group_that_was_handed_the_stream_stops_the_adapter() -> None:
    adapter = Recorder({"type": "start"}, {"type": "start-step"}, forever)
    stream = create_chat_stream(adapter, REQUEST)
    outcome: list[str] = []

    async def worker() -> None:
        try:
            async for _ in stream:
                pass
        except anyio.get_cancelled_exc_class():
            outcome.append("cancelled")
            raise

    with anyio.fail_after(GUARD):
        assert (await stream.__anext__())["type"] == "start"
        async with anyio.create_task_group() as tg:
            tg.start_soon(worker)
            await anyio.wait_all_tasks_blocked()  # worker's read waits for the adapter
            tg.cancel_scope.cancel()
        assert outcome == ["cancelled"]
        while stream.adapter_running:  # nobody calls aclose(): the cancellation did it
            await anyio.sleep(0.001)
    assert adapter.closed == 1
    assert adapter.signal is not None
    assert adapter.signal.reason == "the consumer's read was cancelled"
    with pytest.raises(StreamClosedError, match="read was cancelled"):
        await stream.__anext__()


async def test_an_adapter_returning_a_coroutine_is_a_protocol_error() -> None:
    class Wrong:
        async def stream(self, request: ChatRequest, signal: AbortSignal) -> None:
            return None

    with anyio.fail_after(GUARD), pytest.raises(ProtocolError, match="coroutine"):
        await read_all(create_chat_stream(Wrong(), REQUEST))  # type: ignore[arg-type]


async def test_an_adapter_returning_a_non_iterator_is_a_protocol_error() -> None:
    class Wrong:
        def stream(self, request: ChatRequest, signal: AbortSignal) -> list[object]:
            return []

    with anyio.fail_after(GUARD), pytest.raises(ProtocolError, match="not an async iterator"):
        await read_all(create_chat_stream(Wrong(), REQUEST))  # type: ignore[arg-type]


# --- a. cancelling the consumer --------------------------------------------------------


@pytest.mark.parametrize("how", ["move_on_after", "fail_after", "cancel_scope", "task_cancel"])
async def test_cancelling_a_pending_read(how: str) -> None:
    adapter = Recorder({"type": "start"}, forever)
    stream = create_chat_stream(adapter, REQUEST)
    with anyio.fail_after(GUARD):
        assert (await stream.__anext__())["type"] == "start"
        if how == "move_on_after":
            with anyio.move_on_after(0.01) as scope:
                await stream.__anext__()
            assert scope.cancelled_caught
        elif how == "fail_after":
            with pytest.raises(TimeoutError):
                with anyio.fail_after(0.01):
                    await stream.__anext__()
        elif how == "cancel_scope":
            with anyio.CancelScope() as scope:
                scope.cancel()
                await stream.__anext__()
            assert scope.cancelled_caught
        else:
            # The read pending in another task (the stream's first read was this one's).
            reached: list[bool] = []

            async def reader() -> None:
                try:
                    await stream.__anext__()
                except anyio.get_cancelled_exc_class():
                    reached.append(True)
                    raise

            async with anyio.create_task_group() as tg:
                tg.start_soon(reader)
                await anyio.wait_all_tasks_blocked()
                tg.cancel_scope.cancel()
            assert reached == [True]
        signal = adapter.signal
        assert signal is not None and signal.aborted
        assert signal.reason == "the consumer's read was cancelled"
        await stream.aclose()
    assert adapter.closed == 1 and not stream.adapter_running
    with pytest.raises(StreamClosedError, match="read was cancelled"):
        await stream.__anext__()


# --- b. aclose, leaving async with, break ------------------------------------------------


async def test_aclose_stops_the_adapter_and_is_idempotent() -> None:
    adapter = Recorder({"type": "start"}, forever)
    stream = create_chat_stream(adapter, REQUEST)
    with anyio.fail_after(GUARD):
        await stream.__anext__()
        await stream.aclose()
        await stream.aclose()
    assert adapter.signal is not None and adapter.signal.reason == "the stream was closed"
    assert adapter.closed == 1 and not stream.adapter_running
    with pytest.raises(StreamClosedError):
        await stream.__anext__()


async def test_aclose_before_the_first_read_never_starts_the_adapter() -> None:
    adapter = Recorder(*TEXT)
    stream = create_chat_stream(adapter, REQUEST)
    await stream.aclose()
    with pytest.raises(StreamClosedError):
        await stream.__anext__()
    assert adapter.started == 0


async def test_leaving_async_with_early_stops_the_adapter() -> None:
    adapter = Recorder({"type": "start"}, {"type": "start-step"}, forever)
    with anyio.fail_after(GUARD):
        async with create_chat_stream(adapter, REQUEST) as stream:
            await stream.__anext__()
    assert adapter.closed == 1 and adapter.signal is not None and adapter.signal.aborted
    assert not stream.adapter_running


async def test_break_inside_async_with_stops_the_adapter() -> None:
    adapter = Recorder({"type": "start"}, {"type": "start-step"}, forever)
    with anyio.fail_after(GUARD):
        async with create_chat_stream(adapter, REQUEST) as stream:
            async for _ in stream:
                break
    assert adapter.closed == 1 and not stream.adapter_running


async def test_an_error_inside_async_with_stops_the_adapter_and_propagates() -> None:
    adapter = Recorder({"type": "start"}, forever)
    with anyio.fail_after(GUARD), pytest.raises(KeyError):
        async with create_chat_stream(adapter, REQUEST) as stream:
            await stream.__anext__()
            raise KeyError("consumer bug")
    assert adapter.closed == 1


async def test_abort_from_another_task_wakes_the_pending_read() -> None:
    adapter = Recorder({"type": "start"}, forever)
    stream = create_chat_stream(adapter, REQUEST)
    with anyio.fail_after(GUARD):
        await stream.__anext__()
        async with anyio.create_task_group() as tg:

            async def abort_later() -> None:
                await anyio.wait_all_tasks_blocked()
                stream.abort("user pressed stop")

            tg.start_soon(abort_later)
            with pytest.raises(StreamClosedError, match="user pressed stop"):
                await stream.__anext__()
        await stream.aclose()
    assert adapter.signal is not None and adapter.signal.reason == "user pressed stop"
    assert adapter.closed == 1


async def test_an_abandoned_running_stream_is_stopped_when_collected() -> None:
    adapter = Recorder({"type": "start"}, forever)
    stream = create_chat_stream(adapter, REQUEST)
    with anyio.fail_after(GUARD):
        await stream.__anext__()
        del stream  # never closed: the garbage collector must not leave the adapter running
        while adapter.closed == 0:
            await anyio.sleep(0.001)
    assert adapter.signal is not None and "garbage-collected" in (adapter.signal.reason or "")


# --- c. validation failures and limits ---------------------------------------------------


@pytest.mark.parametrize(
    ("bad_event", "error"),
    [
        ({"type": "text-delta", "id": "nope", "delta": "x"}, ProtocolError),
        ({"type": "text-delta", "id": "t", "delta": float("nan")}, ProtocolError),
        ({"type": "text-delta", "id": "t", "delta": "x" * 1_000_001}, LimitExceededError),
        ({"type": "error", "errorText": "boom"}, ProtocolError),
    ],
)
async def test_a_bad_event_reaches_the_consumer_and_stops_the_adapter(
    bad_event: dict[str, Any], error: type[AIChatError]
) -> None:
    adapter = Recorder({"type": "start"}, {"type": "text-start", "id": "t"}, bad_event, forever)
    stream = create_chat_stream(adapter, REQUEST)
    seen: list[str] = []
    with anyio.fail_after(GUARD):
        with pytest.raises(error):
            async for event in stream:
                seen.append(event["type"])
        assert seen == ["start", "text-start"]
        while stream.adapter_running:
            await anyio.sleep(0.001)
    assert adapter.closed == 1
    assert adapter.signal is not None and (adapter.signal.reason or "").startswith(
        "the stream failed"
    )


async def test_max_response_chars_stops_an_endless_stream() -> None:
    class Endless:
        closed = False

        async def stream(
            self, request: ChatRequest, signal: AbortSignal
        ) -> AsyncIterator[Mapping[str, Any]]:
            try:
                yield {"type": "text-start", "id": "t"}
                while True:
                    yield {"type": "text-delta", "id": "t", "delta": "spam " * 100}
            finally:
                self.closed = True

    adapter = Endless()
    stream = create_chat_stream(adapter, REQUEST, max_response_chars=100_000)
    count = 0
    with anyio.fail_after(GUARD):
        with pytest.raises(LimitExceededError) as caught:
            async for _ in stream:
                count += 1
        while stream.adapter_running:
            await anyio.sleep(0.001)
    assert caught.value.limit == "max_response_chars"
    assert caught.value.limit_value == 100_000 and caught.value.observed > 100_000
    assert 150 < count < 250
    assert adapter.closed


# --- d. an adapter that ignores cancellation ----------------------------------------------


class Stubborn:
    """Ignores cancellation until released: in a shielded scope or in a worker thread."""

    def __init__(self, where: str) -> None:
        self.where = where
        self.release_thread = threading.Event()
        self.release = anyio.Event()
        self.closed = False

    async def stream(
        self, request: ChatRequest, signal: AbortSignal
    ) -> AsyncIterator[Mapping[str, Any]]:
        try:
            yield {"type": "start"}
            if self.where == "shield":
                with anyio.CancelScope(shield=True):
                    await self.release.wait()
            else:
                await anyio.to_thread.run_sync(self.release_thread.wait)
            yield {"type": "start-step"}
        finally:
            self.closed = True

    def let_go(self) -> None:
        self.release.set()
        self.release_thread.set()


@pytest.mark.parametrize("where", ["shield", "thread"])
async def test_an_uncooperative_adapter_does_not_hold_the_consumer(
    where: str, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="ai_chat")
    adapter = Stubborn(where)
    stream = create_chat_stream(adapter, REQUEST, close_timeout=0.05)
    with anyio.fail_after(GUARD):
        await stream.__anext__()
        # The adapter will not stop for GUARD seconds unless let go, so these only return
        # in time if the stream stops waiting for it.
        with anyio.move_on_after(0.02) as scope:
            await stream.__anext__()
        assert scope.cancelled_caught
        await stream.aclose()
        assert stream.adapter_running and not adapter.closed
        assert "did not stop within" in caplog.text
        adapter.let_go()
        while stream.adapter_running:
            await anyio.sleep(0.001)
    assert adapter.closed
    assert "finished its leftover work" in caplog.text
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR]


async def test_exiting_async_with_is_bounded_with_an_uncooperative_adapter() -> None:
    adapter = Stubborn("shield")
    with anyio.fail_after(GUARD):
        async with create_chat_stream(adapter, REQUEST, close_timeout=0.05) as stream:
            await stream.__anext__()
        assert stream.adapter_running
        adapter.let_go()
        while stream.adapter_running:
            await anyio.sleep(0.001)
    assert adapter.closed


# --- e. adapter exceptions ----------------------------------------------------------------


async def test_an_adapter_exception_becomes_adapter_error_with_cause() -> None:
    async def boom(signal: AbortSignal) -> None:
        raise ConnectionResetError("peer went away")

    stream = create_chat_stream(Recorder({"type": "start"}, boom), REQUEST)
    with anyio.fail_after(GUARD), pytest.raises(AdapterError) as caught:
        await read_all(stream)
    assert isinstance(caught.value.__cause__, ConnectionResetError)
    assert caught.value.adapter == "Recorder"
    assert "peer went away" in str(caught.value)


async def test_an_adapter_aichat_error_passes_unwrapped() -> None:
    async def typed(signal: AbortSignal) -> None:
        raise ValidationError("$.parameters.seed", "this provider has no seed")

    with anyio.fail_after(GUARD), pytest.raises(ValidationError, match="no seed"):
        await read_all(create_chat_stream(Recorder(typed), REQUEST))


async def test_an_exception_from_stream_itself_becomes_adapter_error() -> None:
    class Raises:
        def stream(
            self, request: ChatRequest, signal: AbortSignal
        ) -> AsyncIterator[Mapping[str, Any]]:
            raise RuntimeError("bad configuration")

    with anyio.fail_after(GUARD), pytest.raises(AdapterError) as caught:
        await read_all(create_chat_stream(Raises(), REQUEST))
    assert isinstance(caught.value.__cause__, RuntimeError)


async def test_cancellation_is_never_wrapped_or_logged(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG, logger="ai_chat")
    adapter = Recorder({"type": "start"}, forever)
    stream = create_chat_stream(adapter, REQUEST)
    caught: list[BaseException] = []
    with anyio.fail_after(GUARD):
        await stream.__anext__()
        with anyio.CancelScope() as scope:
            try:
                scope.cancel()
                await stream.__anext__()
            except BaseException as exc:
                caught.append(exc)
                raise
        await stream.aclose()
    assert len(caught) == 1 and isinstance(caught[0], anyio.get_cancelled_exc_class())
    assert caplog.records == []


async def test_a_failing_aclose_of_the_adapter_is_logged_not_raised(
    caplog: pytest.LogCaptureFixture,
) -> None:
    class BadClose:
        def __init__(self) -> None:
            self.done = False

        def __aiter__(self) -> BadClose:
            return self

        async def __anext__(self) -> Mapping[str, Any]:
            if self.done:
                await anyio.sleep_forever()
            self.done = True
            return {"type": "start"}

        async def aclose(self) -> None:
            raise OSError("socket already gone")

    class Adapter:
        def stream(self, request: ChatRequest, signal: AbortSignal) -> BadClose:
            return BadClose()

    stream = create_chat_stream(Adapter(), REQUEST)
    with anyio.fail_after(GUARD):
        await stream.__anext__()
        await stream.aclose()
    assert "closing adapter Adapter raised" in caplog.text
    assert not stream.adapter_running


async def test_a_failed_stream_keeps_failing() -> None:
    stream = create_chat_stream(ScriptedAdapter(TEXT[:-1]), REQUEST)
    with anyio.fail_after(GUARD):
        for _ in range(2):  # a second loop must not look like a complete answer
            with pytest.raises(ProtocolError, match="without a finish event"):
                async for _ in stream:
                    pass


class StrSubclass(str):
    pass


@pytest.mark.parametrize(
    "delta_event",
    [
        {"type": StrSubclass("text-delta"), "id": "t", "delta": "x"},
        {StrSubclass("type"): "text-delta", "id": "t", "delta": "x"},
        {"type": "text-delta", "id": StrSubclass("t"), "delta": "x"},
        {"type": "text-delta", "id": "t", "delta": StrSubclass("x")},
    ],
)
async def test_the_delta_fast_path_accepts_only_exact_json_types(
    delta_event: dict[Any, Any],
) -> None:
    events = [{"type": "text-start", "id": "t"}, delta_event, *TEXT[3:]]
    with anyio.fail_after(GUARD), pytest.raises(ProtocolError) as caught:
        await read_all(create_chat_stream(ScriptedAdapter(events), REQUEST))
    assert caught.value.event_index == 1


# --- review findings: stopping in odd places --------------------------------------------


class AcloseRaises:
    """A class-based iterator whose aclose() fails in the given way."""

    def __init__(self, failure: str) -> None:
        self.failure = failure
        self.events = [{"type": "start"}, {"type": "finish", "finishReason": "stop"}]

    def __aiter__(self) -> AcloseRaises:
        return self

    async def __anext__(self) -> Mapping[str, Any]:
        if not self.events:
            raise StopAsyncIteration
        return self.events.pop(0)

    async def aclose(self) -> None:
        if self.failure == "keyboard":
            raise KeyboardInterrupt
        # A helper task it cancels and then awaits: a stray cancellation on asyncio.
        async with anyio.create_task_group() as tg:
            tg.start_soon(anyio.sleep_forever)
            tg.cancel_scope.cancel()
        raise OSError("close failed")


@pytest.mark.parametrize("failure", ["keyboard", "oserror"])
async def test_a_failing_aclose_never_hangs_the_reader(failure: str) -> None:
    class Adapter:
        def stream(self, request: ChatRequest, signal: AbortSignal) -> AcloseRaises:
            return AcloseRaises(failure)

    stream = create_chat_stream(Adapter(), REQUEST)
    seen: list[str] = []
    with anyio.fail_after(GUARD):
        if failure == "keyboard":
            with pytest.raises(KeyboardInterrupt):
                async for event in stream:
                    seen.append(event["type"])
        else:
            async for event in stream:
                seen.append(event["type"])
    assert seen == ["start", "finish"]
    assert not stream.adapter_running


async def test_abort_needs_a_string_reason() -> None:
    stream = create_chat_stream(ScriptedAdapter(TEXT), REQUEST)
    with pytest.raises(ConfigurationError):
        stream.abort(None)  # type: ignore[arg-type]


class BlockingIterator:
    """A class-based iterator blocked in __anext__ until its aclose() releases it."""

    def __init__(self) -> None:
        self.released = anyio.Event()
        self.sent = False
        self.aclose_calls = 0

    def __aiter__(self) -> BlockingIterator:
        return self

    async def __anext__(self) -> Mapping[str, Any]:
        if not self.sent:
            self.sent = True
            return {"type": "start"}
        with anyio.CancelScope(shield=True):  # ignores cancellation...
            await self.released.wait()  # ...until aclose() runs
        raise StopAsyncIteration

    async def aclose(self) -> None:
        self.aclose_calls += 1
        self.released.set()


async def test_aclose_of_a_blocked_class_iterator_is_requested_at_once() -> None:
    iterator = BlockingIterator()

    class Adapter:
        def stream(self, request: ChatRequest, signal: AbortSignal) -> BlockingIterator:
            return iterator

    stream = create_chat_stream(Adapter(), REQUEST, close_timeout=5.0)
    with anyio.fail_after(GUARD):
        await stream.__anext__()
        await stream.aclose()  # returns as soon as the adapter stops: aclose() unblocks it
    assert iterator.aclose_calls == 1
    assert not stream.adapter_running


async def test_garbage_collection_in_another_thread_still_stops_the_adapter() -> None:
    import gc

    adapter = Recorder({"type": "start"}, forever)
    stream = create_chat_stream(adapter, REQUEST)
    with anyio.fail_after(GUARD):
        await stream.__anext__()
        holder: list[Any] = [stream]
        holder.append(holder)  # a cycle: only the cyclic collector frees it
        del stream, holder
        await anyio.to_thread.run_sync(gc.collect)
        while adapter.closed == 0:
            await anyio.sleep(0.001)
    assert adapter.signal is not None
    assert "garbage-collected" in (adapter.signal.reason or "")


async def test_a_read_in_a_cancelled_scope_does_not_start_the_adapter() -> None:
    adapter = Recorder(*TEXT)
    stream = create_chat_stream(adapter, REQUEST)
    with anyio.CancelScope() as scope:
        scope.cancel()
        await stream.__anext__()
    assert scope.cancelled_caught
    assert adapter.started == 0
    with pytest.raises(StreamClosedError, match="read was cancelled"):
        await stream.__anext__()


@pytest.mark.parametrize("anyio_backend", ["asyncio"])  # only asyncio has stray cancellations
async def test_a_stray_cancellation_inside_the_adapter_is_an_adapter_error() -> None:
    import asyncio

    async def stray(signal: AbortSignal) -> None:
        future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        future.cancel()
        await future

    with anyio.fail_after(GUARD), pytest.raises(AdapterError) as caught:
        await read_all(create_chat_stream(Recorder({"type": "start"}, stray), REQUEST))
    assert isinstance(caught.value.__cause__, asyncio.CancelledError)


async def test_any_mapping_is_an_event_and_any_sequence_of_mappings_a_history() -> None:
    from collections import OrderedDict
    from types import MappingProxyType

    events: list[Mapping[str, Any]] = [
        MappingProxyType({"type": "start"}),
        OrderedDict(type="text-start", id="t"),
        {"type": "text-delta", "id": "t", "delta": "x"},
        {"type": "text-end", "id": "t"},
        {"type": "finish", "finishReason": "stop"},
    ]
    history = (MappingProxyType(m) for m in [dict(REQUEST["messages"][0])])
    request = {"messages": list(history)}
    with anyio.fail_after(GUARD):
        seen = await read_all(create_chat_stream(ScriptedAdapter(events), request))
    assert [type(e) for e in seen] == [FrozenDict] * 5
    assert [e["type"] for e in seen] == [e["type"] for e in events]
