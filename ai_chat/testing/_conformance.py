"""The adapter conformance kit: pytest checks every adapter must pass."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, cast

import anyio
import pytest

from .._adapter import AIChatAdapter
from .._errors import StreamClosedError
from .._stream import ChatStream, create_chat_stream
from .._types import ChatEvent
from ..limits import FrozenDict, json_size

__all__ = ["AdapterConformance"]

# A guard against hangs, not a performance assertion: every check below finishes in
# milliseconds with a conforming adapter.
_HANG_GUARD = 10.0

# Fields whose value is any JSON, null included; every other field must be absent
# rather than null.
_MAY_BE_NULL = frozenset({"input", "output", "data", "messageMetadata"})

_SIMPLE_REQUEST: Mapping[str, Any] = {
    "messages": [{"id": "user-1", "role": "user", "parts": [{"type": "text", "text": "Hello"}]}]
}


class AdapterConformance:
    """Subclass this in a test module to check an adapter against the protocol.

    Provide two fixtures (they may take any other fixture, a test server for example):

    * ``adapter``: an adapter that answers ``chat_request`` with a complete stream.
    * ``slow_adapter``: an adapter that, for ``chat_request``, streams at least one
      event and then keeps the answer open (for seconds, or until stopped), so that a
      read is pending when the checks stop the stream.

    Optionally override ``chat_request`` (the request both receive),
    :meth:`assert_released` (an adapter-specific check that its resources, such as an
    HTTP connection, were released after a stop) and ``stop_timeout``: how long an
    adapter may take to stop after its stream is stopped (default 0.5 s; a prompt
    adapter takes milliseconds). Your ``conftest.py`` must provide the
    ``anyio_backend`` fixture; parametrize it over ``asyncio`` and ``trio``.

    Example::

        class TestMyAdapter(AdapterConformance):
            @pytest.fixture
            def adapter(self) -> MyAdapter:
                return MyAdapter(...)

            @pytest.fixture
            def slow_adapter(self) -> MyAdapter:
                return MyAdapter(..., slow=True)
    """

    stop_timeout: float = 0.5

    @pytest.fixture
    def chat_request(self) -> Mapping[str, Any]:
        """The request every check sends; override for adapters that need more."""
        return _SIMPLE_REQUEST

    async def assert_released(self, adapter: AIChatAdapter) -> None:
        """Override to check adapter-specific resources after a stop (default: none)."""

    async def _assert_stopped(
        self, stream: ChatStream, adapter: AIChatAdapter, tasks_before: int
    ) -> None:
        """After a stop: the signal says why, the adapter stopped in time, nothing is left."""
        signal = stream.signal
        assert signal is not None, "the adapter never started"
        assert signal.aborted, "the adapter's signal was not aborted"
        assert signal.reason, "the abort carries no reason"
        assert not stream.adapter_running, "the adapter did not stop within stop_timeout"
        await self.assert_released(adapter)
        assert len(anyio.get_running_tasks()) == tasks_before, "a task was left running"

    # --- a complete stream ----------------------------------------------------------

    @pytest.mark.anyio
    async def test_stream_ends_with_finish(
        self, adapter: AIChatAdapter, chat_request: Mapping[str, Any]
    ) -> None:
        tasks_before = len(anyio.get_running_tasks())
        events: list[ChatEvent] = []
        with anyio.fail_after(_HANG_GUARD):
            async with create_chat_stream(
                adapter, chat_request, close_timeout=self.stop_timeout
            ) as stream:
                # `async for` ends normally only after finish and a clean end of the adapter.
                async for event in stream:
                    events.append(event)
                assert not stream.adapter_running
        assert events, "the adapter produced no events"
        assert events[-1]["type"] == "finish"
        assert [e["type"] for e in events].count("finish") == 1
        assert len(anyio.get_running_tasks()) == tasks_before

    @pytest.mark.anyio
    async def test_events_are_frozen_json(
        self, adapter: AIChatAdapter, chat_request: Mapping[str, Any]
    ) -> None:
        with anyio.fail_after(_HANG_GUARD):
            async with create_chat_stream(adapter, chat_request) as stream:
                async for event in stream:
                    assert type(event) is FrozenDict
                    text = json.dumps(event)
                    assert json.loads(text) == event
                    fields = cast("Mapping[str, object]", event)
                    nulls = [k for k, v in fields.items() if v is None and k not in _MAY_BE_NULL]
                    assert not nulls, f"optional fields must be absent, not null: {text}"
                    assert json_size(event) >= len(event)

    # --- stopping early -------------------------------------------------------------

    @pytest.mark.anyio
    async def test_cancelled_read_aborts_and_closes(
        self, slow_adapter: AIChatAdapter, chat_request: Mapping[str, Any]
    ) -> None:
        tasks_before = len(anyio.get_running_tasks())
        with anyio.fail_after(_HANG_GUARD):
            stream = create_chat_stream(slow_adapter, chat_request, close_timeout=self.stop_timeout)
            await _read_until_pending(stream)
            with anyio.move_on_after(0.05) as scope:
                await stream.__anext__()
            assert scope.cancelled_caught, "a read completed although the adapter should be slow"
            await stream.aclose()
            with pytest.raises(StreamClosedError):
                await stream.__anext__()
        await self._assert_stopped(stream, slow_adapter, tasks_before)

    @pytest.mark.anyio
    async def test_aclose_mid_stream_stops_adapter(
        self, slow_adapter: AIChatAdapter, chat_request: Mapping[str, Any]
    ) -> None:
        tasks_before = len(anyio.get_running_tasks())
        with anyio.fail_after(_HANG_GUARD):
            stream = create_chat_stream(slow_adapter, chat_request, close_timeout=self.stop_timeout)
            await stream.__anext__()
            await stream.aclose()
            await stream.aclose()  # idempotent
        await self._assert_stopped(stream, slow_adapter, tasks_before)

    @pytest.mark.anyio
    async def test_break_inside_async_with_stops_adapter(
        self, slow_adapter: AIChatAdapter, chat_request: Mapping[str, Any]
    ) -> None:
        tasks_before = len(anyio.get_running_tasks())
        with anyio.fail_after(_HANG_GUARD):
            async with create_chat_stream(
                slow_adapter, chat_request, close_timeout=self.stop_timeout
            ) as stream:
                async for _event in stream:
                    break
        await self._assert_stopped(stream, slow_adapter, tasks_before)

    @pytest.mark.anyio
    async def test_abort_from_another_task_ends_pending_read(
        self, slow_adapter: AIChatAdapter, chat_request: Mapping[str, Any]
    ) -> None:
        with anyio.fail_after(_HANG_GUARD):
            async with create_chat_stream(
                slow_adapter, chat_request, close_timeout=self.stop_timeout
            ) as stream:
                await _read_until_pending(stream)

                async def abort_soon() -> None:
                    await anyio.sleep(0.01)
                    stream.abort("stopped by the conformance kit")

                reasons: list[str] = []
                async with anyio.create_task_group() as tg:
                    tg.start_soon(abort_soon)
                    with pytest.raises(StreamClosedError) as caught:
                        await stream.__anext__()
                    reasons.append(caught.value.reason)
                assert reasons == ["stopped by the conformance kit"]
                signal = stream.signal
                assert signal is not None and signal.reason == "stopped by the conformance kit"
            assert not stream.adapter_running
        await self.assert_released(slow_adapter)


async def _read_until_pending(stream: ChatStream) -> None:
    """Read what the adapter produced up front, so that the next read has to wait."""
    await stream.__anext__()
    await anyio.sleep(0.05)
    pipe = stream._pipe  # pyright: ignore[reportPrivateUsage]
    while pipe is not None and pipe.buffer:
        await stream.__anext__()
