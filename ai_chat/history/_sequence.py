"""The messages of a history: an immutable sequence that shares storage between versions.

A history built one append at a time must not copy what it already holds (that is what
makes the seed's appends quadratic). So a :class:`Seq` is a view: the first ``size``
entries of a shared, append-only :class:`_Log`, then a short private ``suffix``. The log
only ever grows, and a view never sees entries past its ``size``, so every view stays
the value it was. Appending to the newest view (the log's tip) writes into the log in
place; appending to an older one, or changing a message, touches only the suffix; a
suffix longer than :data:`SUFFIX_MAX` moves into the log (in place at the tip, else into
a new log of the view's own). Appends cost O(1) amortized, edits near the end O(distance
from the end), anything else O(n) once.

The log keeps indexes (message id, tool call id, tool result id to position) so that an
append checks only what is new; entries past a view's size are ignored by that view.
Messages reaching here are normalized and checked for the history's invariants.
"""

# Messages are frozen JSON typed as TypedDicts; reading their parts as plain mappings
# here keeps the hot loops free of casts.
# pyright: reportUnknownVariableType=false, reportUnknownMemberType=false, reportUnknownArgumentType=false

from __future__ import annotations

import threading
from bisect import bisect_left
from collections.abc import Iterator, Sequence
from itertools import islice, repeat
from operator import sub
from typing import Any, Final

from .._types import Message
from ._bookkeeping import is_streaming

__all__ = ["SUFFIX_MAX", "Seq"]

SUFFIX_MAX: Final = 32
"""The longest private suffix a view keeps before it moves into a log."""


class _Log:
    """Append-only storage shared by views, with its indexes (guarded by ``lock``).

    Each index is filled in position order (only :meth:`add` and ``extend_plain`` write
    to them, at the end), so its positions never decrease: :func:`_shifted` bisects
    them.
    """

    __slots__ = ("calls", "ids", "lock", "messages", "results", "streaming")

    def __init__(self) -> None:
        self.messages: list[Message] = []
        self.ids: dict[str, int] = {}
        self.calls: dict[str, int] = {}  # tool call id -> position of its call's message
        self.results: dict[str, int] = {}  # tool call id -> position of its result's message
        self.streaming: set[int] = set()  # positions of streaming messages
        self.lock = threading.Lock()

    def add(self, messages: Sequence[Message]) -> None:
        """Append and index (the caller holds the lock or owns the log)."""
        position = len(self.messages)
        ids, calls, results = self.ids, self.calls, self.results
        for message in messages:
            ids[message["id"]] = position
            if "metadata" in message and is_streaming(message):
                self.streaming.add(position)
            part: Any
            for part in message["parts"]:
                kind = part["type"]
                if kind == "tool-call":
                    calls[part["toolCallId"]] = position
                elif kind == "tool-result":
                    results[part["toolCallId"]] = position
            position += 1
        self.messages.extend(messages)

    def prefix(self, size: int) -> _Log:
        """A new log holding the first ``size`` entries of this one."""
        log = _Log()
        with self.lock:
            log.messages = self.messages[:size]
            log.ids = dict(self.ids)
            log.calls = dict(self.calls)
            log.results = dict(self.results)
            log.streaming = {p for p in self.streaming if p < size}
            beyond = self.messages[size:]
        for message in beyond:  # ids are unique within a log: what they name goes away
            del log.ids[message["id"]]
            part: Any
            for part in message["parts"]:
                kind = part["type"]
                if kind == "tool-call":
                    del log.calls[part["toolCallId"]]
                elif kind == "tool-result":
                    del log.results[part["toolCallId"]]
        return log


def _shifted(index: dict[str, int], start: int, size: int, shift: int) -> Iterator[tuple[str, int]]:
    """The entries of ``index`` at positions ``start <= p < size``, each moved ``shift``
    earlier (positions never decrease in an index, so a bisection finds them, and the
    rest runs at C speed)."""
    positions = list(index.values())
    low, high = bisect_left(positions, start), bisect_left(positions, size)
    keys = list(index)[low:high]
    return zip(keys, map(sub, positions[low:high], repeat(shift)), strict=True)


class Seq:
    """An immutable sequence of messages: ``log[:size] + suffix`` (see the module)."""

    __slots__ = ("_log", "_messages", "_size", "_suffix")

    def __init__(self, log: _Log, size: int, suffix: tuple[Message, ...]) -> None:
        self._log = log
        self._size = size
        self._suffix = suffix
        self._messages: tuple[Message, ...] | None = None

    @staticmethod
    def of(messages: Sequence[Message]) -> Seq:
        log = _Log()
        log.add(messages)
        return Seq(log, len(messages), ())

    def __len__(self) -> int:
        return self._size + len(self._suffix)

    def messages(self) -> tuple[Message, ...]:
        """All messages as a tuple (built once per view, O(n))."""
        found = self._messages
        if found is None:
            found = self._messages = tuple(self._log.messages[: self._size]) + self._suffix
        return found

    def at(self, position: int) -> Message:
        """The message at ``0 <= position < len(self)``."""
        size = self._size
        return self._log.messages[position] if position < size else self._suffix[position - size]

    def iter_from(self, start: int) -> Iterator[Message]:
        """The messages from ``start`` on, in order."""
        size = self._size
        if start < size:
            yield from self._log.messages[start:size]
            yield from self._suffix
        else:
            yield from self._suffix[start - size :]

    def same_as(self, other: Seq) -> bool:
        """Whether both views are certainly the same messages (without comparing them)."""
        return (
            self._log is other._log and self._size == other._size and self._suffix is other._suffix
        )

    # --- lookups: the log's index below ``size``, then a scan of the short suffix -------

    def position(self, message_id: str) -> int | None:
        """Where the message with this id is, or ``None``."""
        found = self._log.ids.get(message_id)
        if found is not None and found < self._size:
            return found
        for offset, message in enumerate(self._suffix):
            if message["id"] == message_id:
                return self._size + offset
        return None

    def call_position(self, call_id: str) -> int | None:
        """Where the message holding the tool call ``call_id`` is, or ``None``."""
        return self._find(self._log.calls, call_id, "tool-call")

    def result_position(self, call_id: str) -> int | None:
        """Where the message holding the result of ``call_id`` is, or ``None``."""
        return self._find(self._log.results, call_id, "tool-result")

    def _find(self, index: dict[str, int], call_id: str, kind: str) -> int | None:
        found = index.get(call_id)
        if found is not None and found < self._size:
            return found
        for offset, message in enumerate(self._suffix):
            part: Any
            for part in message["parts"]:
                if part["type"] == kind and part["toolCallId"] == call_id:
                    return self._size + offset
        return None

    def tool_pairs(self) -> tuple[list[str], list[int], list[int]]:
        """Every tool call, in call order, as three lists: its id, its message's position,
        and its result's message's position (-1 without a result).

        At the log's tip (the common case) the lists come from the indexes at C speed.
        """
        size, log = self._size, self._log
        calls, results = log.calls, log.results
        with log.lock:
            tip = len(log.messages) == size
            ids = list(calls)
            positions = list(calls.values())
            answers = list(map(results.get, ids, repeat(-1)))
        if not tip:  # entries past this view's size are not its own
            kept = [i for i, position in enumerate(positions) if position < size]
            ids = [ids[i] for i in kept]
            positions = [positions[i] for i in kept]
            answers = [a if a < size else -1 for a in (answers[i] for i in kept)]
        if self._suffix:
            late: dict[str, int] = {}
            for offset, message in enumerate(self._suffix):
                part: Any
                for part in message["parts"]:
                    if part["type"] == "tool-call":
                        ids.append(part["toolCallId"])
                        positions.append(size + offset)
                        answers.append(-1)
                    elif part["type"] == "tool-result":
                        late[part["toolCallId"]] = size + offset
            if late:
                answers = [late.get(c, a) for c, a in zip(ids, answers, strict=True)]
        return ids, positions, answers

    def streaming_positions(self) -> set[int]:
        """The positions of the streaming messages."""
        size = self._size
        found = {p for p in self._log.streaming if p < size}
        for offset, message in enumerate(self._suffix):
            if "metadata" in message and is_streaming(message):
                found.add(size + offset)
        return found

    def call_positions(self) -> Iterator[tuple[str, int]]:
        """Every tool call id with the position of its message, in order."""
        size, log = self._size, self._log
        with log.lock:  # another view may be appending to the log
            entries = list(log.calls.items())
        for call_id, position in entries:
            if position < size:
                yield call_id, position
        for offset, message in enumerate(self._suffix):
            part: Any
            for part in message["parts"]:
                if part["type"] == "tool-call":
                    yield part["toolCallId"], size + offset

    # --- new versions -----------------------------------------------------------------

    def extend(self, new: tuple[Message, ...]) -> Seq:
        """This view with ``new`` (checked by the caller) appended."""
        if not new:
            return self
        log, size = self._log, self._size
        if not self._suffix:
            with log.lock:
                if len(log.messages) == size:
                    log.add(new)
                    return Seq(log, size + len(new), ())
        return self._settle(size, self._suffix + new)

    def extend_plain(self, message: Message) -> Seq:
        """:meth:`extend` with one message that holds no tool part and is not streaming."""
        log, size = self._log, self._size
        if not self._suffix:
            with log.lock:
                messages = log.messages
                if len(messages) == size:
                    log.ids[message["id"]] = size
                    messages.append(message)
                    return Seq(log, size + 1, ())
        return self._settle(size, (*self._suffix, message))

    def rewrite(self, start: int, tail: Sequence[Message]) -> Seq:
        """The first ``start`` messages of this view, then ``tail`` (checked by the caller)."""
        size = self._size
        if start >= size:
            return self._settle(size, self._suffix[: start - size] + tuple(tail))
        return self._settle(start, tuple(tail))

    def keep(self, head: Sequence[int], start: int) -> Seq:
        """The messages at the positions ``head`` (in order, each before ``start``), then
        every message from ``start`` on: what dropping the oldest messages leaves.

        The log's indexes are shifted rather than rebuilt (no message is read again), so
        this costs a few C-speed passes over the indexes, not a walk of the parts.
        """
        size, log = self._size, self._log
        if start >= size:  # the tail is in the (short) suffix: rebuild it
            kept = [self.at(p) for p in head]
            kept.extend(self._suffix[start - size :])
            return Seq.of(kept)
        new = _Log()
        new.add([self.at(p) for p in head])
        shift = start - len(head)
        with log.lock:
            new.messages.extend(log.messages[start:size])
            # Every message of a log has its id in ``ids``, in position order: the ids
            # of positions start..size are that slice of the keys.
            moved = islice(log.ids, start, size)
            new.ids.update(zip(moved, range(start - shift, size - shift), strict=True))
            new.calls.update(_shifted(log.calls, start, size, shift))
            new.results.update(_shifted(log.results, start, size, shift))
            new.streaming.update(p - shift for p in log.streaming if start <= p < size)
        new.add(self._suffix)
        return Seq(new, len(new.messages), ())

    def _settle(self, size: int, suffix: tuple[Message, ...]) -> Seq:
        """``log[:size] + suffix`` as a view, moving a long suffix into a log."""
        log = self._log
        if len(suffix) <= SUFFIX_MAX:
            return Seq(log, size, suffix)
        with log.lock:
            if len(log.messages) == size:
                log.add(suffix)
                return Seq(log, size + len(suffix), ())
        own = log.prefix(size)
        own.add(suffix)
        return Seq(own, size + len(suffix), ())
