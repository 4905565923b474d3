"""The errors a conversation store raises.

They sit one level under :class:`~ai_chat.AIChatError`, below :class:`StoreError`::

    AIChatError
    └── StoreError                    a store operation failed (base; also raised as is
        │                             for a closed store or an unexpected backend error
        │                             outside appends, with ``__cause__`` set)
        ├── ConversationNotFoundError  no conversation has this id (append, load, rate)
        ├── ConversationExistsError    create was given an id that is already taken
        ├── VersionConflictError       ``expected_version`` is not the current version
        ├── DuplicateMessageError      a message id is already stored with other content,
        │                              or repeated inside one batch
        ├── InvalidRatingError         a rating that is not an int from 1 to 5 (also a
        │                              ValueError), or a comment that is not a short str
        ├── AppendError                an append failed in the backend; ``__cause__`` is the
        │                              backend's exception; nothing of the batch was stored
        └── SchemaVersionError         the database was migrated by a newer ai_chat

Messages and metadata that are not valid JSON or exceed the store's limits raise the
library's :class:`~ai_chat.ValidationError` and :class:`~ai_chat.LimitExceededError`
before any I/O. Cancellation is never wrapped.
"""

from __future__ import annotations

from .._errors import (
    AppendError,
    ConversationExistsError,
    ConversationNotFoundError,
    DuplicateMessageError,
    InvalidRatingError,
    SchemaVersionError,
    StoreError,
    VersionConflictError,
)

__all__ = [
    "AppendError",
    "ConversationExistsError",
    "ConversationNotFoundError",
    "DuplicateMessageError",
    "InvalidRatingError",
    "SchemaVersionError",
    "StoreError",
    "VersionConflictError",
]
