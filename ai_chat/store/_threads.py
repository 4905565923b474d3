"""A thread of its own for a connection (or a pool slot), fed calls through a queue."""

from __future__ import annotations

import contextlib
import queue
import threading
import weakref
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar, cast

import anyio

from .._spawn import LoopHandle

__all__ = ["ThreadWorker"]

_T = TypeVar("_T")


@dataclass(eq=False, slots=True)
class _Reply:
    """What a call came to, and how to tell the task waiting for it."""

    loop: LoopHandle
    event: anyio.Event
    result: Any = None
    error: BaseException | None = None


_Request = tuple[Callable[[], Any], _Reply]


def _serve(requests: queue.SimpleQueue[_Request | None]) -> None:
    """The worker's thread: run each call, then wake its task through the event loop."""
    while True:
        request = requests.get()
        if request is None:
            return
        call, reply = request
        try:
            reply.result = call()
        except BaseException as exc:  # handed to the waiting task, which raises it
            reply.error = exc
        del call, request
        with contextlib.suppress(RuntimeError):  # the event loop is gone: nobody waits
            reply.loop.run_soon(reply.event.set)
        del reply


class ThreadWorker:
    """A thread of its own, fed calls through a queue.

    The task hands a call over and is woken through the event loop's thread-safe
    callback: two trips through the event loop per call, where a pooled worker thread
    behind a capacity limiter (``anyio.to_thread.run_sync``) takes four. The thread ends
    when :meth:`close` is called or, for a store never closed, when this object is
    garbage collected.
    """

    __slots__ = ("__weakref__", "_requests", "_thread")

    def __init__(self, name: str) -> None:
        self._requests: queue.SimpleQueue[_Request | None] = queue.SimpleQueue()
        self._thread = threading.Thread(
            target=_serve, args=(self._requests,), name=name, daemon=True
        )
        self._thread.start()
        weakref.finalize(self, self._requests.put, None)

    async def run(self, call: Callable[[], _T]) -> _T:
        """Run ``call`` in the thread. A cancelled task waits for it, like
        ``anyio.to_thread.run_sync``, and the cancellation then lands at its next
        checkpoint."""
        reply = _Reply(LoopHandle(), anyio.Event())
        self._requests.put((call, reply))
        with anyio.CancelScope(shield=True):
            await reply.event.wait()
        if reply.error is not None:
            raise reply.error
        return cast(_T, reply.result)

    def close(self) -> None:
        """End the thread once the calls handed over have run (blocking: call it in a
        thread)."""
        self._requests.put(None)
        self._thread.join()
