"""The values a conversation store returns: conversations, stored messages, append results."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import NamedTuple

from .._types import Message
from ..limits import FrozenDict, JSONObject, JSONValue

__all__ = ["AppendResult", "Conversation", "StoredMessage", "iso8601", "messages_of"]


def iso8601(moment: datetime) -> str:
    """A UTC time as ISO 8601 with microseconds and ``Z``, as JavaScript's ``Date`` reads it."""
    return moment.astimezone(UTC).isoformat(timespec="microseconds").replace("+00:00", "Z")


@dataclass(frozen=True, slots=True)
class Conversation:
    """One conversation's record, as the store held it when it was read.

    Attributes:
        id: the conversation's id (store-assigned unless given to ``create_conversation``).
        context: the agent use case it belongs to (``"admin_assistant"``...).
        subject_id: its owner: an organization, user or tenant id.
        created_at: when it was created (timezone-aware, UTC).
        updated_at: when messages were last appended (``created_at`` before the first
            append). Rating is not activity and leaves it unchanged.
        metadata: the JSON object given at creation, deep-frozen.
        rating: ``None``, or an int from 1 to 5.
        comment: the rating's comment, or ``None``.
        version: the number of messages stored, which is also the sequence number of the
            last one; it changes with each append and nothing else. Pass it as
            ``expected_version`` for optimistic concurrency.
    """

    id: str
    context: str
    subject_id: str
    created_at: datetime
    updated_at: datetime
    metadata: JSONObject
    rating: int | None
    comment: str | None
    version: int

    def to_json(self) -> JSONObject:
        """The wire form: camelCase keys, times as ISO 8601 UTC strings (``...Z``)."""
        return FrozenDict(
            {
                "id": self.id,
                "context": self.context,
                "subjectId": self.subject_id,
                "createdAt": iso8601(self.created_at),
                "updatedAt": iso8601(self.updated_at),
                "metadata": self.metadata,
                "rating": self.rating,
                "ratingComment": self.comment,
                "version": self.version,
            }
        )


class StoredMessage(NamedTuple):
    """A message as stored: its place in the conversation's log and the normalized message.

    A named tuple ``(seq, message, created_at)``: immutable, and cheap to build for
    every row of a long conversation.

    Attributes:
        seq: its sequence number, from 1, contiguous within the conversation. Order is
            always by ``seq``, never by time.
        message: the normalized, deep-frozen message (its ``id`` is the idempotency key).
        created_at: when it was stored (timezone-aware, UTC); informational only.
    """

    seq: int
    message: Message
    created_at: datetime

    def to_json(self) -> JSONObject:
        """The wire form: ``{"seq", "createdAt", "message"}``."""
        value: dict[str, JSONValue] = {
            "seq": self.seq,
            "createdAt": iso8601(self.created_at),
            "message": self.message,  # pyright: ignore[reportAssignmentType] -- frozen JSON at run time
        }
        return FrozenDict(value)


@dataclass(frozen=True, slots=True)
class AppendResult:
    """What ``append_messages`` did.

    Attributes:
        seqs: the sequence number of each message of the batch, in the batch's order:
            the new ones for messages stored now, the original ones for messages that
            were already stored (an idempotent replay).
        version: the conversation's version after the call.
        stored: how many messages this call stored (0 for a complete replay).
    """

    seqs: tuple[int, ...]
    version: int
    stored: int


def messages_of(stored: Iterable[StoredMessage]) -> tuple[Message, ...]:
    """The normalized messages of stored messages, in the order given.

    What an adapter's request takes: ``messages_of(await store.load_messages(id))``.
    """
    return tuple(item.message for item in stored)
