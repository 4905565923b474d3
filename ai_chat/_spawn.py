"""The one module that knows which event loop is running.

A chat stream's adapter runs in a task of its own so that an adapter which ignores
cancellation (a shielded scope, a blocking worker thread) cannot hold its consumer
hostage: the consumer stops waiting at once and the adapter's leftover work finishes
later. A task group cannot give that guarantee, since leaving one waits for every child,
so the task is spawned outside the caller's task tree: an asyncio task on asyncio, a
system task on trio. The few other questions only the backend can answer cheaply (is this
task being cancelled from outside, how to reach the loop from another thread) live here
too. Everything else in ai_chat uses anyio only.
"""

from __future__ import annotations

import asyncio
import contextvars
from collections.abc import Awaitable, Callable

import anyio.lowlevel

__all__ = ["LoopHandle", "spawn_detached", "task_cancelled_from_outside"]

# asyncio keeps only weak references to tasks: hold them until they finish.
_running: set[asyncio.Task[None]] = set()


def spawn_detached(function: Callable[[], Awaitable[None]], name: str) -> None:
    """Run ``function()`` in a new task that belongs to no task group.

    The function must handle every exception itself except cancellation (it is
    cancelled, like any task, when the event loop shuts down). It runs in a copy of the
    caller's context variables, as a task would.
    """
    loop = anyio.lowlevel.current_token().native_token
    if isinstance(loop, asyncio.AbstractEventLoop):

        async def run() -> None:
            await function()

        task = loop.create_task(run(), name=name)
        _running.add(task)
        task.add_done_callback(_running.discard)
    else:
        import trio

        trio.lowlevel.spawn_system_task(function, name=name, context=contextvars.copy_context())


def task_cancelled_from_outside() -> bool:
    """Whether the running task itself is being cancelled (on trio: always, since a
    Cancelled that escaped every scope of ours can only come from the task's own).

    On asyncio a CancelledError can also come from awaiting a future that someone else
    cancelled; that is a failure of whatever awaited it, not a cancellation of the task.
    """
    try:
        task = asyncio.current_task()
    except RuntimeError:
        return True
    return task is None or task.cancelling() > 0


class LoopHandle:
    """A way back into the event loop from any thread (for the garbage collector)."""

    __slots__ = ("_call_soon", "_thread")

    def __init__(self) -> None:
        import threading

        self._thread = threading.get_ident()
        native = anyio.lowlevel.current_token().native_token
        if isinstance(native, asyncio.AbstractEventLoop):
            self._call_soon: Callable[[Callable[[], None]], object] = native.call_soon_threadsafe
        else:
            self._call_soon = native.run_sync_soon  # pyright: ignore[reportAttributeAccessIssue, reportUnknownMemberType]

    def run_soon(self, function: Callable[[], None]) -> None:
        """Call ``function`` in the loop's thread: now if already there, else soon.

        Raises RuntimeError if the loop is gone.
        """
        import threading

        if threading.get_ident() == self._thread:
            function()
        else:
            self._call_soon(function)
