"""Detached tasks: the one place that knows which event loop is running.

A chat stream's adapter runs in a task of its own so that an adapter which ignores
cancellation (a shielded scope, a blocking worker thread) cannot hold its consumer
hostage: the consumer stops waiting at once and the adapter's leftover work finishes
later. A task group cannot give that guarantee, since leaving one waits for every child,
so the task is spawned outside the caller's task tree: an asyncio task on asyncio, a
system task on trio. Everything else in ai_chat uses anyio only.
"""

from __future__ import annotations

import asyncio
import contextvars
from collections.abc import Awaitable, Callable

import anyio.lowlevel

__all__ = ["spawn_detached"]

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
