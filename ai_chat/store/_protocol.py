"""The conversation store contract."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Protocol, runtime_checkable

from ._records import AppendResult, Conversation, StoredMessage

__all__ = ["ConversationStore"]


@runtime_checkable
class ConversationStore(Protocol):
    """Where conversations and their messages live; async, on asyncio and trio.

    A conversation belongs to a *context* (the agent use case) and a *subject* (its
    owner: an organization, user or tenant). Its messages are the library's normalized
    messages, checked by the same JSON boundary on the way in, kept in an append-only log
    ordered by a store-assigned sequence number (1, 2, 3... with no gaps), never by time.

    Guarantees every implementation keeps (:class:`ConversationStoreCompliance` checks
    them):

    * An append is one atomic batch: all of it is stored or none of it, and a reader
      never sees part of one. Appends to one conversation are serialized; appends to
      different conversations do not wait for each other (beyond what the database
      itself serializes).
    * Appends are idempotent by message id (ids are unique within a conversation):
      replaying a message with the same id and content stores nothing and returns its
      original sequence number, so retrying after a timeout, an error or a cancellation
      is safe. The same id with other content raises :class:`DuplicateMessageError`.
    * A cancelled call leaves the store as if the call either completed or never
      started; a retry converges.
    * Argument checks (messages, ratings, ids, counts) happen before any I/O.
    * Nothing is ever created implicitly: append, load and rate of an unknown id raise
      :class:`ConversationNotFoundError`.
    * Methods never block the event loop.
    """

    async def create_conversation(
        self,
        context: str,
        subject_id: str,
        metadata: Mapping[str, object] | None = None,
        *,
        conversation_id: str | None = None,
    ) -> Conversation:
        """Create an empty conversation (version 0) and return it.

        ``conversation_id`` is normally left to the store (a UUID); give one to use an
        id from elsewhere, such as a chat id chosen by the browser.

        Raises:
            ConversationExistsError: ``conversation_id`` is taken.
            ValidationError, LimitExceededError: ``metadata`` is not a JSON object within
                the store's limits.
            ConfigurationError: an id, context or subject is not a non-empty str of at
                most 256 characters.
        """
        ...

    async def find_by_id(self, conversation_id: str) -> Conversation | None:
        """The conversation with this id, or ``None``."""
        ...

    async def find_latest(self, context: str, subject_id: str) -> Conversation | None:
        """The subject's most recently active conversation in this context, or ``None``.

        Activity is the last append, or the creation before any; rating is not activity.
        Ties are impossible: activity is a counter the store increments, not a timestamp.
        """
        ...

    async def list_conversations(
        self, context: str, subject_id: str, *, limit: int = 20
    ) -> tuple[Conversation, ...]:
        """The subject's conversations in this context, most recently active first."""
        ...

    async def append_messages(
        self,
        conversation_id: str,
        messages: Sequence[object],
        *,
        expected_version: int | None = None,
    ) -> AppendResult:
        """Append a batch of messages atomically; see the class for the guarantees.

        With ``expected_version``, the batch is stored only if the conversation's version
        is still that number (a complete replay of stored messages is always accepted).

        Raises:
            ConversationNotFoundError: no such conversation.
            VersionConflictError: ``expected_version`` is not the current version.
            DuplicateMessageError: an id is stored with other content, or repeated in
                the batch.
            ValidationError, LimitExceededError: a message is invalid (nothing stored).
            AppendError: the backend failed (``__cause__``); nothing was stored.
        """
        ...

    async def load_messages(
        self, conversation_id: str, *, after: int = 0, limit: int | None = None
    ) -> tuple[StoredMessage, ...]:
        """Messages with ``seq > after`` in order, at most ``limit``, from one snapshot.

        Page with the last ``seq`` seen as the next ``after``.

        Raises:
            ConversationNotFoundError: no such conversation.
        """
        ...

    async def load_recent_messages(
        self, conversation_id: str, count: int
    ) -> tuple[StoredMessage, ...]:
        """The last ``count`` messages, in sequence order, from one snapshot.

        Raises:
            ConversationNotFoundError: no such conversation.
        """
        ...

    async def rate(
        self, conversation_id: str, rating: int, comment: str | None = None
    ) -> Conversation:
        """Set the conversation's rating (an int from 1 to 5) and comment; return it.

        Replaces any earlier rating. Not activity: ``updated_at``, ``version`` and
        ``find_latest`` are unaffected.

        Raises:
            InvalidRatingError: before any I/O, for a rating that is not an int from 1
                to 5 (``True`` included) or a comment that is not a short str.
            ConversationNotFoundError: no such conversation.
        """
        ...

    async def aclose(self) -> None:
        """Release what the store created (idempotent); later calls raise StoreError."""
        ...
