"""The in-memory reference store."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace

import anyio.lowlevel

from .._closing import AsyncClosing
from ..limits import JSONLimits
from ._checks import (
    DEFAULT_STORE_LIMITS,
    check_create,
    check_key,
    check_listing,
    check_load,
    check_rate,
    check_recent,
    new_record,
)
from ._codec import check_append, decode_message, from_micros, now_micros, plan_append
from ._errors import ConversationExistsError, ConversationNotFoundError, StoreError
from ._records import AppendResult, Conversation, StoredMessage

__all__ = ["MemoryConversationStore"]


@dataclass(slots=True)
class _Entry:
    record: Conversation
    activity: int
    messages: list[StoredMessage] = field(default_factory=list[StoredMessage])
    ids: dict[str, tuple[int, bytes]] = field(default_factory=dict[str, tuple[int, bytes]])


class MemoryConversationStore(AsyncClosing):
    """A :class:`ConversationStore` in process memory: the reference implementation.

    No dependencies and no persistence: everything is gone when the process ends. Each
    operation runs without awaiting anything after its first checkpoint, so it is atomic
    with respect to other tasks, and a cancellation lands before any change.

    Args:
        limits: the bounds one appended batch (and one conversation's metadata) is held
            to; by default 64 levels, 100,000 values and 16,000,000 characters.
    """

    def __init__(self, *, limits: JSONLimits = DEFAULT_STORE_LIMITS) -> None:
        self._limits = limits
        self._entries: dict[str, _Entry] = {}
        self._by_subject: dict[tuple[str, str], list[_Entry]] = {}
        self._activity = 0
        self._closed = False

    async def aclose(self) -> None:
        """Close the store: later calls raise StoreError, the data is dropped (idempotent)."""
        self._closed = True
        self._entries.clear()
        self._by_subject.clear()

    def _check_open(self) -> None:
        if self._closed:
            raise StoreError("the conversation store is closed")

    def _entry(self, conversation_id: str) -> _Entry:
        entry = self._entries.get(conversation_id)
        if entry is None:
            raise ConversationNotFoundError(conversation_id)
        return entry

    def _next_activity(self) -> int:
        self._activity += 1
        return self._activity

    async def create_conversation(
        self,
        context: str,
        subject_id: str,
        metadata: Mapping[str, object] | None = None,
        *,
        conversation_id: str | None = None,
    ) -> Conversation:
        """Create an empty conversation; see :meth:`ConversationStore.create_conversation`."""
        new_id, frozen = check_create(context, subject_id, metadata, conversation_id, self._limits)
        await anyio.lowlevel.checkpoint()
        self._check_open()
        if new_id in self._entries:
            raise ConversationExistsError(new_id)
        record = new_record(new_id, context, subject_id, frozen, from_micros(now_micros()))
        entry = _Entry(record, self._next_activity())
        self._entries[new_id] = entry
        self._by_subject.setdefault((context, subject_id), []).append(entry)
        return record

    async def find_by_id(self, conversation_id: str) -> Conversation | None:
        """The conversation with this id, or ``None``."""
        check_key("conversation_id", conversation_id)
        await anyio.lowlevel.checkpoint()
        self._check_open()
        entry = self._entries.get(conversation_id)
        return None if entry is None else entry.record

    async def find_latest(self, context: str, subject_id: str) -> Conversation | None:
        """The subject's most recently active conversation in this context, or ``None``."""
        found = await self.list_conversations(context, subject_id, limit=1)
        return found[0] if found else None

    async def list_conversations(
        self, context: str, subject_id: str, *, limit: int = 20
    ) -> tuple[Conversation, ...]:
        """The subject's conversations in this context, most recently active first."""
        count = check_listing(context, subject_id, limit)
        await anyio.lowlevel.checkpoint()
        self._check_open()
        entries = self._by_subject.get((context, subject_id), [])
        ordered = sorted(entries, key=lambda entry: entry.activity, reverse=True)
        return tuple(entry.record for entry in ordered[:count])

    async def append_messages(
        self,
        conversation_id: str,
        messages: Sequence[object],
        *,
        expected_version: int | None = None,
    ) -> AppendResult:
        """Append a batch atomically; see :meth:`ConversationStore.append_messages`."""
        expected, batch = check_append(conversation_id, messages, expected_version, self._limits)
        await anyio.lowlevel.checkpoint()
        self._check_open()
        entry = self._entry(conversation_id)
        record = entry.record
        existing = {item.id: entry.ids[item.id] for item in batch if item.id in entry.ids}
        seqs, new = plan_append(conversation_id, batch, existing, record.version, expected)
        if not new:
            return AppendResult(seqs, record.version, 0)
        moment = max(from_micros(now_micros()), record.updated_at)  # never backwards
        seq = record.version
        for item in new:
            seq += 1
            # The message as the database stores return it: its canonical form (keys sorted).
            entry.messages.append(StoredMessage(seq, decode_message(item.body), moment))
            entry.ids[item.id] = (seq, item.digest)
        entry.record = replace(record, updated_at=moment, version=seq)
        entry.activity = self._next_activity()
        return AppendResult(seqs, seq, len(new))

    async def load_messages(
        self, conversation_id: str, *, after: int = 0, limit: int | None = None
    ) -> tuple[StoredMessage, ...]:
        """Messages with ``seq > after`` in order, at most ``limit``."""
        start, count = check_load(conversation_id, after, limit)
        await anyio.lowlevel.checkpoint()
        self._check_open()
        messages = self._entry(conversation_id).messages
        end = len(messages) if count is None else start + count
        return tuple(messages[start:end])

    async def load_recent_messages(
        self, conversation_id: str, count: int
    ) -> tuple[StoredMessage, ...]:
        """The last ``count`` messages, in sequence order."""
        wanted = check_recent(conversation_id, count)
        await anyio.lowlevel.checkpoint()
        self._check_open()
        messages = self._entry(conversation_id).messages
        return tuple(messages[len(messages) - wanted :]) if wanted else ()

    async def rate(
        self, conversation_id: str, rating: int, comment: str | None = None
    ) -> Conversation:
        """Set the rating and comment; see :meth:`ConversationStore.rate`."""
        checked_rating, checked_comment = check_rate(conversation_id, rating, comment)
        await anyio.lowlevel.checkpoint()
        self._check_open()
        entry = self._entry(conversation_id)
        entry.record = replace(entry.record, rating=checked_rating, comment=checked_comment)
        return entry.record
