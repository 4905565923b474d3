"""The answer being streamed, as a history: :class:`Projection` folds an event log onto a seed.

A projection holds a seed history (the conversation before the answer) and an
:class:`~ai_chat.history.AnswerFold` of the answer's events. Its :meth:`~Projection.snapshot`
is the seed with the answer's messages after it, marked streaming
(``metadata.aiChat.streaming``) until ``finish``: a UI renders every snapshot, a request
never takes the streaming messages, nothing trims them.

Incremental: :meth:`~Projection.apply` folds only the events it is given, touching only
the open message; :meth:`~Projection.sync` takes the whole log so far (what a UI receives
on every frame) and folds only its new tail when it extends what was folded, or refolds
from the seed when it does not (a reconnect, a reload, another session). Either way a
snapshot equals folding the same events from the seed in one go (:func:`project`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from datetime import datetime
from typing import Literal, TypeAlias, cast

from .._errors import ConfigurationError
from .._types import Message
from ._bookkeeping import with_bookkeeping
from ._env import format_time
from ._fold import AnswerFold
from ._history import History
from ._validate import check_invariants

__all__ = ["Projection", "project"]

State: TypeAlias = Literal["streaming", "finished", "finalized", "cancelled"]


class Projection:
    """A seed history and the answer streaming onto it (see the module).

    Args:
        seed: the history before the answer.
        message_id: the answer's id; by default ``start``'s ``messageId``, or else a new
            id from the seed's env (taken now, so a refold keeps it).
        first_step: the number of the answer's first step (see
            :class:`~ai_chat.history.AnswerFold`).
        created_at: the answer's creation time (default: now, from the seed's env).
        checked: the events come from a :class:`~ai_chat.ChatStream` and need no
            validation (see :class:`~ai_chat.history.AnswerFold`).

    """

    __slots__ = (
        "_checked",
        "_created_at",
        "_first",
        "_first_step",
        "_fold",
        "_generated_id",
        "_last",
        "_message_id",
        "_seed",
        "_snapshot",
        "_state",
    )

    def __init__(
        self,
        seed: History,
        *,
        message_id: str | None = None,
        first_step: int = 0,
        created_at: datetime | None = None,
        checked: bool = False,
    ) -> None:
        if not isinstance(cast(object, seed), History):
            raise ConfigurationError("seed", seed, "a History")
        if message_id is not None and (type(message_id) is not str or not message_id):
            raise ConfigurationError("message_id", message_id, "a non-empty str or None")
        if type(first_step) is not int or first_step < 0:
            raise ConfigurationError("first_step", first_step, "an int of 0 or more")
        self._seed = seed
        self._message_id = message_id
        self._generated_id = seed.env.identifier() if message_id is None else message_id
        self._first_step = first_step
        if created_at is None:
            created_at = seed.env.time()
        elif type(created_at) is not datetime or created_at.utcoffset() is None:
            raise ConfigurationError("created_at", created_at, "a timezone-aware datetime")
        self._created_at = created_at
        self._checked = checked
        self._fold = AnswerFold(first_step=first_step, checked=checked, limits=seed.limits)
        self._first: object = None
        self._last: object = None
        self._snapshot: History | None = None
        self._state: State = "streaming"

    @property
    def state(self) -> State:
        """``"streaming"``, ``"finished"`` (``finish`` came), ``"finalized"``
        (:meth:`finalize`) or ``"cancelled"`` (:meth:`cancel`)."""
        return self._state

    @property
    def seed(self) -> History:
        """The history before the answer."""
        return self._seed

    @property
    def fold(self) -> AnswerFold:
        """The fold of the answer's events (read it; feed it through this projection)."""
        return self._fold

    @property
    def processed(self) -> int:
        """How many events of the log were folded (or ignored after the end)."""
        return self._fold.events

    @property
    def message_id(self) -> str:
        """The answer's id (its first message's)."""
        return self._message_id or self._fold.message_id or self._generated_id

    def apply(self, events: Iterable[object]) -> None:
        """Fold the next ``events`` (those after the ones already folded).

        Events after ``finish``, :meth:`finalize` or :meth:`cancel` are ignored: a late
        delta changes nothing. Raises as :meth:`AnswerFold.feed` does (the event's
        ``event_index`` is its index in the whole log); the events before it stay folded
        and later ones are ignored until :meth:`reset` (or a :meth:`sync` that refolds).
        """
        fold = self._fold
        for event in events:
            first = fold.events == 0
            if self._state != "streaming":
                fold.feed(event)  # counted and ignored: the snapshot stays
            else:
                self._snapshot = None
                fold.feed(event)
                if fold.finished:
                    self._state = "finished"
            if first:
                self._first = event
            self._last = event

    def sync(
        self, log: Sequence[object], *, identify: Callable[[object], object] | None = None
    ) -> None:
        """Bring the projection to the whole ``log`` so far.

        When ``log`` extends what was folded (it is at least as long and its first and
        last folded events are the same: equal, or equal by ``identify``, which should
        return a durable event id or sequence number), only the new tail is folded (O(1)
        to tell). Otherwise the answer is refolded from the seed.
        """
        done = self._fold.events
        if done:
            same = identify or _itself
            if (
                len(log) < done
                or same(log[0]) != same(self._first)
                or same(log[done - 1]) != same(self._last)
            ):
                self.reset()
                done = 0
        self.apply(log[done:])

    def reset(self, seed: History | None = None) -> None:
        """Start the answer again from ``seed`` (default: the same seed), as before any
        event; the answer's id and creation time are kept."""
        if seed is not None:
            if not isinstance(cast(object, seed), History):
                raise ConfigurationError("seed", seed, "a History")
            self._seed = seed
        self._fold = AnswerFold(
            first_step=self._first_step, checked=self._checked, limits=self._seed.limits
        )
        self._first = self._last = None
        self._snapshot = None
        self._state = "streaming"

    def finalize(self) -> None:
        """End the answer where it is (the user stopped it): what was folded stays, as
        it is, no longer streaming; later events are ignored. After the end: no-op."""
        if self._state == "streaming":
            self._fold.stop()
            self._state = "finalized"
            self._snapshot = None

    def cancel(self) -> None:
        """Drop the answer: the snapshot is the seed again; later events are ignored."""
        if self._state != "cancelled":
            self._fold.stop()
            self._state = "cancelled"
            self._snapshot = None

    def snapshot(self) -> History:
        """The seed with the answer so far after it (kept until the next event).

        While streaming, the answer's messages carry ``streaming`` and include its open
        parts; once finished, its first message records ``usage``, ``finishReason`` and
        ``sources``. Every message records the answer's ``createdAt``.

        Raises:
            DuplicateIdError: an answer message's id is already in the seed.
        """
        found = self._snapshot
        if found is None:
            found = self._snapshot = self._build()
        return found

    def _build(self) -> History:
        seed, fold, state = self._seed, self._fold, self._state
        if state == "cancelled":
            return seed
        built = fold.messages(self.message_id, partial=state != "finished")
        if not built:
            return seed
        stamp = format_time(self._created_at)
        messages: list[Message] = []
        for message in built:
            if state == "streaming":
                message = with_bookkeeping(message, createdAt=stamp, streaming=True)
            elif not messages and state == "finished":
                message = with_bookkeeping(
                    message,
                    createdAt=stamp,
                    usage=fold.usage,
                    finishReason=fold.finish_reason,
                    sources=fold.sources or None,
                )
            else:
                message = with_bookkeeping(message, createdAt=stamp)
            messages.append(message)
        seq = seed._seq  # pyright: ignore[reportPrivateUsage]
        checked = check_invariants(seq, messages, "$", None)
        return History._make(  # pyright: ignore[reportPrivateUsage]
            seed.id,
            seed.title,
            seed.metadata,
            seed.created_at,
            max(seed.updated_at, self._created_at),
            seq.extend(checked),
            seed.env,
            seed.limits,
        )


def _itself(event: object) -> object:
    return event


def project(
    seed: History,
    events: Iterable[object],
    *,
    message_id: str | None = None,
    first_step: int = 0,
    created_at: datetime | None = None,
) -> History:
    """``events`` folded onto ``seed`` in one go: what a :class:`Projection` given the
    same events shows (its snapshot). Raises as :meth:`Projection.apply` does."""
    projection = Projection(
        seed, message_id=message_id, first_step=first_step, created_at=created_at
    )
    projection.apply(events)
    return projection.snapshot()
