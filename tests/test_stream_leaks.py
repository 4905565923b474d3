"""Nothing leaks: 10,000 streams, each stopped at a random point in one of every way."""

from __future__ import annotations

import gc
import logging
import random
import sys
import threading
import time
from collections.abc import AsyncIterator, Mapping
from typing import Any

import anyio
import anyio.lowlevel
import pytest

from ai_chat import AbortSignal, AIChatError, create_chat_stream
from ai_chat.types import ChatRequest

pytestmark = pytest.mark.anyio

STREAMS = 10_000
REQUEST = {"messages": [{"id": "u1", "role": "user", "parts": [{"type": "text", "text": "Hi"}]}]}
WAYS = (
    "complete",
    "cancel_read",
    "aclose",
    "async_with_break",
    "abort",
    "garbage",
    "bad_event",
    "adapter_error",
    "limit",
    "shielded",
    "worker_thread",
)


class Stubborn:
    """Ignores cancellation for a moment: in a shielded scope or a blocking worker thread."""

    def __init__(self, where: str) -> None:
        self.where = where

    async def stream(
        self, request: ChatRequest, signal: AbortSignal
    ) -> AsyncIterator[Mapping[str, Any]]:
        yield {"type": "start"}
        if self.where == "shielded":
            with anyio.CancelScope(shield=True):
                await anyio.sleep(0.003)
        else:
            await anyio.to_thread.run_sync(time.sleep, 0.002)
        yield {"type": "finish", "finishReason": "stop"}


class Paced:
    """Streams a text answer with a checkpoint between events, so reads really wait."""

    def __init__(self, length: int, bad_at: int | None = None, fail_at: int | None = None) -> None:
        self.length = length
        self.bad_at = bad_at
        self.fail_at = fail_at

    async def stream(
        self, request: ChatRequest, signal: AbortSignal
    ) -> AsyncIterator[Mapping[str, Any]]:
        yield {"type": "text-start", "id": "t"}
        for index in range(self.length):
            await anyio.lowlevel.checkpoint()
            if index == self.bad_at:
                yield {"type": "text-delta", "id": "unknown", "delta": "x"}
            if index == self.fail_at:
                raise OSError("connection reset")
            yield {"type": "text-delta", "id": "t", "delta": "word "}
        yield {"type": "text-end", "id": "t"}
        yield {"type": "finish", "finishReason": "stop"}


async def run_one(rng: random.Random, way: str) -> None:
    if way in ("shielded", "worker_thread"):
        stubborn = create_chat_stream(Stubborn(way), REQUEST, close_timeout=0.001)
        await stubborn.__anext__()
        with anyio.move_on_after(0.0005):
            await stubborn.__anext__()
        await stubborn.aclose()  # gives up after close_timeout: the leftover work ends later
        return
    length = rng.randrange(1, 40)
    stop_after = rng.randrange(0, length + 2)
    adapter = Paced(
        length,
        bad_at=stop_after if way == "bad_event" else None,
        fail_at=stop_after if way == "adapter_error" else None,
    )
    max_chars = 60 + 20 * stop_after if way == "limit" else 1_000_000
    stream = create_chat_stream(adapter, REQUEST, max_response_chars=max_chars, close_timeout=1.0)
    try:
        if way == "async_with_break":
            async with stream:
                seen = 0
                async for _ in stream:
                    seen += 1
                    if seen > stop_after:
                        break
            return
        for _ in range(stop_after):
            await stream.__anext__()
        if way == "cancel_read":
            with anyio.CancelScope() as scope:
                scope.cancel()
                while True:
                    await stream.__anext__()
        elif way == "aclose":
            await stream.aclose()
        elif way == "abort":
            stream.abort("test")
        elif way == "garbage":
            del stream
        else:
            async for _ in stream:
                pass
    except (AIChatError, StopAsyncIteration):
        pass


@pytest.mark.slow
async def test_ten_thousand_stopped_streams_leave_nothing_behind(
    caplog: pytest.LogCaptureFixture,
) -> None:
    # The stubborn adapters log two warnings each (tested elsewhere); pytest would keep
    # every record in memory, which is not what this test measures.
    caplog.set_level(logging.ERROR, logger="ai_chat")
    rng = random.Random(20261130)
    gc.collect()
    tasks_before = len(anyio.get_running_tasks())
    # Warm up caches and lazily created state (anyio's worker thread pool) first.
    for way in WAYS * 10:
        await run_one(rng, way)
    await settle(tasks_before)
    threads_before = other_threads()
    gc.collect()
    blocks_before = sys.getallocatedblocks()
    with anyio.fail_after(120):
        for index in range(STREAMS):
            await run_one(rng, WAYS[index % len(WAYS)])
        await settle(tasks_before)
    gc.collect()
    grown = sys.getallocatedblocks() - blocks_before
    assert len(anyio.get_running_tasks()) == tasks_before
    assert other_threads() == threads_before
    # Worker threads are pooled and retire when idle; the pool stays small.
    assert len(threading.enumerate()) - len(threads_before) <= 8
    # A small constant, not per stream: leaking anything per stream would be >= 10,000.
    assert grown < 2_000, f"{grown} more memory blocks after {STREAMS} streams"


def other_threads() -> set[threading.Thread]:
    """Threads other than the worker-thread pools (anyio's, trio's, asyncio's executor)."""
    pools = ("AnyIO worker thread", "Trio thread", "asyncio_")
    return {t for t in threading.enumerate() if not t.name.startswith(pools)}


async def settle(tasks_before: int) -> None:
    """Wait (bounded) until every adapter task has finished its cleanup."""
    with anyio.fail_after(30):
        while len(anyio.get_running_tasks()) > tasks_before:
            await anyio.sleep(0.001)
