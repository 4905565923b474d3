"""Conversation stores: where chats live between requests.

A conversation belongs to a context (the agent use case) and a subject (its owner); its
messages are the library's normalized messages in an append-only log ordered by a
store-assigned sequence number. :class:`ConversationStore` is the contract;
:class:`MemoryConversationStore` (the reference), :class:`SQLiteConversationStore` (the
embedded default) and :class:`PostgresConversationStore` (extra ``postgres``) keep it,
as :class:`ai_chat.testing.ConversationStoreCompliance` checks. The store errors
(:class:`StoreError` and its subclasses) are exported from here.

``import ai_chat.store`` loads neither psycopg nor pytest: the PostgreSQL store is
imported on first use of its name.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ._errors import (
    AppendError,
    ConversationExistsError,
    ConversationNotFoundError,
    DuplicateMessageError,
    InvalidRatingError,
    SchemaVersionError,
    StoreError,
    VersionConflictError,
)
from ._memory import MemoryConversationStore
from ._protocol import ConversationStore
from ._records import AppendResult, Conversation, StoredMessage, messages_of
from ._sqlite import SQLiteConversationStore

if TYPE_CHECKING:
    from ._postgres import PostgresConversationStore

__all__ = [
    "AppendError",
    "AppendResult",
    "Conversation",
    "ConversationExistsError",
    "ConversationNotFoundError",
    "ConversationStore",
    "DuplicateMessageError",
    "InvalidRatingError",
    "MemoryConversationStore",
    "PostgresConversationStore",
    "SQLiteConversationStore",
    "SchemaVersionError",
    "StoreError",
    "StoredMessage",
    "VersionConflictError",
    "messages_of",
]


# The one lazy name: it keeps the postgres extra optional (psycopg is imported only when
# PostgresConversationStore is first used, and its ImportError names the extra).
def __getattr__(name: str) -> Any:
    if name == "PostgresConversationStore":
        from ._postgres import PostgresConversationStore

        return PostgresConversationStore
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
