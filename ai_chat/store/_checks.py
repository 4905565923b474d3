"""The argument checks every store backend runs before any I/O, and the records they
lead to.

Each ``check_*`` takes a store method's arguments as the caller gave them (untyped
callers included) and returns them checked, or raises :class:`~ai_chat.ConfigurationError`
(a key, count or version out of range), :class:`~ai_chat.ValidationError` (metadata that
is not a JSON object) or :class:`~ai_chat.store.InvalidRatingError`.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from datetime import datetime
from typing import cast

from .._errors import ConfigurationError, ValidationError
from ..limits import FrozenDict, JSONLimits, JSONObject, freeze_json
from ._errors import InvalidRatingError
from ._records import Conversation

__all__ = [
    "DEFAULT_STORE_LIMITS",
    "MAX_COMMENT_CHARS",
    "MAX_KEY_CHARS",
    "check_count",
    "check_create",
    "check_expected_version",
    "check_key",
    "check_listing",
    "check_load",
    "check_optional_count",
    "check_rate",
    "check_rating",
    "check_recent",
    "freeze_metadata",
    "new_conversation_id",
    "new_record",
    "text_problem",
]

DEFAULT_STORE_LIMITS = JSONLimits(max_depth=64, max_values=100_000, max_chars=16_000_000)
"""The bounds on one appended batch (and on one conversation's metadata) by default."""

MAX_KEY_CHARS = 256
MAX_COMMENT_CHARS = 10_000


def new_conversation_id() -> str:
    return str(uuid.uuid4())


def text_problem(value: str) -> str | None:
    """Why ``value`` cannot be stored as text (NUL, a lone surrogate), or ``None``."""
    if "\x00" in value:
        return "must not contain NUL characters"
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return "must not contain lone surrogates"
    return None


def check_key(name: str, value: object) -> str:
    """A conversation id, context or subject id: a non-empty ``str`` of bounded length."""
    expected = f"a non-empty str of at most {MAX_KEY_CHARS} characters without NUL"
    if type(value) is not str or not value or len(value) > MAX_KEY_CHARS:
        raise ConfigurationError(name, value, expected)
    if text_problem(value) is not None:
        raise ConfigurationError(name, value, expected)
    return value


def check_count(name: str, value: object) -> int:
    """``after``, ``limit`` or ``count``: an ``int`` >= 0 (``bool`` excluded)."""
    if type(value) is not int or value < 0:
        raise ConfigurationError(name, value, "an int >= 0")
    return value


def check_optional_count(name: str, value: object) -> int | None:
    """An ``int`` >= 0 or ``None``."""
    if value is None:
        return None
    if type(value) is not int or value < 0:
        raise ConfigurationError(name, value, "an int >= 0 or None")
    return value


def check_expected_version(value: object) -> int | None:
    return check_optional_count("expected_version", value)


def check_rating(rating: object, comment: object) -> tuple[int, str | None]:
    """Raise :class:`InvalidRatingError` unless ``rating`` is an int from 1 to 5."""
    if type(rating) is not int or not 1 <= rating <= 5:
        raise InvalidRatingError(
            rating, f"a rating is an int from 1 to 5 (not a bool or float), got {rating!r}"
        )
    if comment is None:
        return rating, None
    if type(comment) is not str or len(comment) > MAX_COMMENT_CHARS:
        shown = comment if type(comment) is not str else f"a str of {len(comment)} characters"
        raise InvalidRatingError(
            rating,
            f"a rating comment is None or a str of at most {MAX_COMMENT_CHARS:,} "
            f"characters, got {shown!r}",
        )
    problem = text_problem(comment)
    if problem is not None:
        raise InvalidRatingError(rating, f"a rating comment {problem}")
    return rating, comment


def freeze_metadata(metadata: object, limits: JSONLimits) -> JSONObject:
    """Metadata as a deep-frozen JSON object (``None`` gives ``{}``)."""
    if metadata is None:
        return FrozenDict()
    if not isinstance(metadata, Mapping):
        raise ValidationError("metadata", f"expected a JSON object, got {type(metadata).__name__}")
    frozen = freeze_json(dict(cast("Mapping[str, object]", metadata)), limits, root="metadata")
    return cast(JSONObject, frozen)


def check_create(
    context: object,
    subject_id: object,
    metadata: object,
    conversation_id: object,
    limits: JSONLimits,
) -> tuple[str, JSONObject]:
    """``create_conversation``'s arguments checked: the id to create (a new one when
    ``conversation_id`` is ``None``) and the frozen metadata."""
    check_key("context", context)
    check_key("subject_id", subject_id)
    wanted = None if conversation_id is None else check_key("conversation_id", conversation_id)
    frozen = freeze_metadata(metadata, limits)
    return (new_conversation_id() if wanted is None else wanted), frozen


def new_record(
    conversation_id: str, context: str, subject_id: str, metadata: JSONObject, created: datetime
) -> Conversation:
    """The record of a conversation just created: no messages, no rating."""
    return Conversation(
        id=conversation_id,
        context=context,
        subject_id=subject_id,
        created_at=created,
        updated_at=created,
        metadata=metadata,
        rating=None,
        comment=None,
        version=0,
    )


def check_listing(context: object, subject_id: object, limit: object) -> int:
    """``list_conversations``'s arguments checked: the ``limit``."""
    check_key("context", context)
    check_key("subject_id", subject_id)
    return check_count("limit", limit)


def check_load(conversation_id: object, after: object, limit: object) -> tuple[int, int | None]:
    """``load_messages``'s arguments checked: ``after`` and ``limit``."""
    check_key("conversation_id", conversation_id)
    return check_count("after", after), check_optional_count("limit", limit)


def check_recent(conversation_id: object, count: object) -> int:
    """``load_recent_messages``'s arguments checked: the ``count``."""
    check_key("conversation_id", conversation_id)
    return check_count("count", count)


def check_rate(conversation_id: object, rating: object, comment: object) -> tuple[int, str | None]:
    """``rate``'s arguments checked (the rating first): the rating and the comment."""
    checked = check_rating(rating, comment)
    check_key("conversation_id", conversation_id)
    return checked
