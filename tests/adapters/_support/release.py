"""Every way a consumer stops closes the provider's HTTP response: one suite, every adapter.

A provider's test module subclasses :class:`ReleaseOnStop` and says how to serve its
adapter (``serve_adapter``) and what a slow answer looks like (``slow``: a start, some
text deltas, then ``"hang"``). Each check stops the consumer one way while the server
still holds the response open, then waits until the server saw the client hang up::

    class TestReleaseOnStop(ReleaseOnStop):
        slow = [*text_chunks("one ", "two "), "hang"]

        def serve_adapter(self, handler):
            return openai_adapter(handler)
"""

from __future__ import annotations

import gc
from collections.abc import AsyncGenerator, Callable, Mapping, Sequence
from contextlib import AbstractAsyncContextManager
from typing import Any, ClassVar, cast

import anyio
import anyio.lowlevel
import pytest

from ai_chat import (
    AbortSignal,
    AIChatAdapter,
    LimitExceededError,
    create_chat_stream,
)

from .fake_server import FakeServer, Request, Response, Step

__all__ = ["HANG_GUARD", "HELLO", "ReleaseOnStop", "released"]

# Generous bounds on waits that end at once when things work (never timing assertions).
HANG_GUARD = 10.0

HELLO: Mapping[str, Any] = {
    "messages": [{"id": "u1", "role": "user", "parts": [{"type": "text", "text": "Hello"}]}]
}


async def released(server: FakeServer, disconnects: int = 1) -> None:
    """The server saw the client hang up; no body generator was left for the GC."""
    with anyio.fail_after(HANG_GUARD):
        await server.wait_until(lambda s: s.disconnects == disconnects)
    assert server.closed == server.connections == disconnects
    # A body generator left suspended would be reported now (trio warns, and pytest turns
    # the warning into an error).
    gc.collect()
    await anyio.lowlevel.checkpoint()


class ReleaseOnStop:
    """The checks; subclasses set :attr:`slow` and implement :meth:`serve_adapter`."""

    # A streaming answer that starts, sends a text delta or two, then hangs.
    slow: ClassVar[Sequence[Step]]
    # The response headers of ``slow`` (the provider's content type and so on).
    headers: ClassVar[Mapping[str, str]] = {"content-type": "text/event-stream"}
    # Small enough that the first events of ``slow`` exceed it.
    small_response_chars: ClassVar[int] = 120

    def serve_adapter(
        self, handler: Callable[[Request], Response]
    ) -> AbstractAsyncContextManager[tuple[FakeServer, AIChatAdapter]]:
        """A server running ``handler`` and an adapter pointed at it, without retries."""
        raise NotImplementedError

    def _slow(self) -> AbstractAsyncContextManager[tuple[FakeServer, AIChatAdapter]]:
        response = Response(200, self.headers, list(self.slow))
        return self.serve_adapter(lambda request: response)

    async def test_cancelling_a_pending_read_closes_the_connection(self) -> None:
        async with self._slow() as (server, adapter):
            stream = create_chat_stream(adapter, HELLO)
            with anyio.fail_after(HANG_GUARD):
                while (await stream.__anext__())["type"] != "text-delta":
                    pass
            with anyio.move_on_after(0.05):
                while True:
                    await stream.__anext__()
            await released(server)
            await stream.aclose()

    async def test_cancelling_while_the_response_headers_are_pending(self) -> None:
        hanging = Response(200, self.headers, [], head="hang")
        async with self.serve_adapter(lambda request: hanging) as (server, adapter):
            stream = create_chat_stream(adapter, HELLO)
            with anyio.CancelScope() as scope:
                async with anyio.create_task_group() as tg:

                    async def consume() -> None:
                        async for _event in stream:
                            pass

                    tg.start_soon(consume)
                    with anyio.fail_after(HANG_GUARD):
                        await server.wait_until(lambda s: len(s.requests) == 1)
                    scope.cancel()
            assert scope.cancelled_caught
            await released(server)
            await stream.aclose()

    async def test_aclose_mid_stream_closes_the_connection(self) -> None:
        async with self._slow() as (server, adapter):
            stream = create_chat_stream(adapter, HELLO)
            with anyio.fail_after(HANG_GUARD):
                await stream.__anext__()
                await stream.aclose()
            await released(server)

    async def test_break_inside_async_with_closes_the_connection(self) -> None:
        async with self._slow() as (server, adapter):
            with anyio.fail_after(HANG_GUARD):
                async with create_chat_stream(adapter, HELLO) as stream:
                    async for event in stream:
                        if event["type"] == "text-delta":
                            break
            await released(server)

    async def test_a_validation_failure_downstream_closes_the_connection(self) -> None:
        async with self._slow() as (server, adapter):
            with anyio.fail_after(HANG_GUARD), pytest.raises(LimitExceededError):
                async with create_chat_stream(
                    adapter, HELLO, max_response_chars=self.small_response_chars
                ) as stream:
                    async for _event in stream:
                        pass
            await released(server)

    async def test_closing_the_adapter_generator_at_a_yield_closes_the_connection(self) -> None:
        async with self._slow() as (server, adapter):
            request = create_chat_stream(adapter, HELLO).request
            events = cast(
                "AsyncGenerator[Mapping[str, object]]", adapter.stream(request, AbortSignal())
            )
            with anyio.fail_after(HANG_GUARD):
                assert (await events.__anext__())["type"] == "start"
                await events.aclose()  # suspended at a yield, the response still open
            await released(server)

    async def test_cancellation_passes_through_the_adapter_unwrapped(self) -> None:
        async with self._slow() as (server, adapter):
            request = create_chat_stream(adapter, HELLO).request
            events = cast(
                "AsyncGenerator[Mapping[str, object]]", adapter.stream(request, AbortSignal())
            )
            with anyio.fail_after(HANG_GUARD):
                while (await events.__anext__())["type"] != "text-delta":
                    pass
                with anyio.move_on_after(0.05) as scope:
                    # The adapter now waits for the hanging server; a cancellation it
                    # wrapped would escape here as an error instead of ending in the scope.
                    async for _event in events:
                        pass
                assert scope.cancelled_caught
            await released(server)
