"""Group commit: the writes queued while one group runs make up the next group."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Generic, Protocol, TypeVar

import anyio
import anyio.lowlevel

__all__ = ["GroupCommit", "Job"]


class Job(Protocol):
    """What a group commit needs of a job: the size of what it writes."""

    @property
    def chars(self) -> int: ...


_J = TypeVar("_J", bound=Job)


@dataclass(eq=False, slots=True)
class _Entry(Generic[_J]):
    job: _J
    # The event of the group that took the job out of the queue: set once it has run.
    finished: anyio.Event | None = None


class GroupCommit(Generic[_J]):
    """Runs jobs in groups: those queued while a group runs are run together next, so
    that a backend commits (and syncs to disk) once for all of them.

    ``run`` runs one group and records on each job what came of it; the jobs taken, at
    most ``max_jobs`` and ``max_chars`` of their ``chars`` (a larger job is taken alone),
    are the oldest queued. A job is taken out of the queue before its group starts: a task
    cancelled while its job is still queued removes it (never run); a task cancelled
    after that waits, shielded, for the group to end (its job committed or rolled back
    as a whole) before the cancellation goes on. A group, once taken, always runs.
    """

    __slots__ = ("_max_chars", "_max_jobs", "_pending", "_run", "lock")

    def __init__(
        self,
        run: Callable[[list[_J]], Awaitable[None]],
        *,
        max_jobs: int,
        max_chars: int,
    ) -> None:
        self._run = run
        self._max_jobs = max_jobs
        self._max_chars = max_chars
        self._pending: list[_Entry[_J]] = []
        # Held while a group runs. fast_acquire: a free lock is taken without a trip
        # through the event loop (submit checks for cancellation first).
        self.lock = anyio.Lock(fast_acquire=True)

    async def submit(self, job: _J) -> None:
        """Queue ``job`` and return once the group that took it has run."""
        await anyio.lowlevel.checkpoint_if_cancelled()
        if not self._pending and not self.lock.locked():
            # Nobody queued and no group running: this job is a group of its own, with
            # nobody else to tell (taking the free lock does not yield).
            async with self.lock:
                with anyio.CancelScope(shield=True):
                    await self._run([job])
            return
        entry = _Entry(job)
        self._pending.append(entry)
        try:
            async with self.lock:
                # The holder of the lock runs the group holding this job before it
                # lets go, so a job is only found taken here once its group has run.
                while entry.finished is None:
                    group = self._take()
                    finished = anyio.Event()
                    for queued in group:
                        queued.finished = finished
                    with anyio.CancelScope(shield=True):
                        try:
                            await self._run([queued.job for queued in group])
                        finally:
                            finished.set()
        except BaseException:
            if entry.finished is None:
                self._pending.remove(entry)
            else:
                with anyio.CancelScope(shield=True):
                    await entry.finished.wait()
            raise

    def _take(self) -> list[_Entry[_J]]:
        count = chars = 0
        for entry in self._pending:
            chars += entry.job.chars
            if count and (count == self._max_jobs or chars > self._max_chars):
                break
            count += 1
        group = self._pending[:count]
        del self._pending[:count]
        return group
