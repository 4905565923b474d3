"""Per-message bookkeeping: creation time, hidden, streaming, usage, in ``metadata.aiChat``.

Where it lives, and why: a history's messages are ai_chat's normalized messages, which
have ``id``, ``role``, ``parts`` and a free ``metadata`` object and nothing else. The
bookkeeping is one JSON object under the reserved key ``aiChat`` of that metadata, so a
message that carries it is still exactly a normalized message: it passes
:func:`~ai_chat.normalize_messages` unchanged, goes into a request as it is (the provider
adapters do not send message metadata), and is stored and loaded by every conversation
store byte for byte, like any other metadata. The chat server keeps its own facts under
the same key (``parentId``) and leaves the key out of what a browser sees.

The keys (camelCase, as all of ai_chat's JSON): ``createdAt`` (ISO 8601 UTC), ``hidden``
(``true``, absent when not hidden), ``streaming`` (``true`` while the message is being
streamed, absent otherwise), ``usage`` (an answer's token counts, the ``Usage`` of its
``finish`` event), ``finishReason`` and ``sources`` (the answer's ``source-url`` and
``source-document`` events). Other keys under ``aiChat`` are kept as they are.
"""

# pyright: reportUnknownVariableType=false, reportUnknownMemberType=false, reportUnknownArgumentType=false

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Final, cast

from .._errors import ValidationError
from .._events import _usage as usage_problem  # pyright: ignore[reportPrivateUsage]
from .._shape import describe
from .._types import FinishReason, Message, Usage
from ..limits import FrozenDict, JSONObject
from ..limits._walk import format_path
from ._env import parse_time

__all__ = [
    "BOOKKEEPING_KEY",
    "Bookkeeping",
    "bookkeeping",
    "check_bookkeeping",
    "check_usage",
    "is_hidden",
    "is_streaming",
    "own_fields",
    "with_bookkeeping",
]

BOOKKEEPING_KEY: Final = "aiChat"
"""The metadata key reserved for ai_chat's own facts about a message."""

_EMPTY: Final[FrozenDict[str, Any]] = FrozenDict()


@dataclass(frozen=True, slots=True)
class Bookkeeping:
    """What the history records about one message (see :func:`bookkeeping`).

    Attributes:
        created_at: when it entered the history, or ``None`` for a message that never
            went through a history (a plain normalized message).
        hidden: hidden from people: left out of :meth:`History.visible` (it is still
            sent to the model; remove a message to keep it from the model).
        streaming: being streamed: left out of :meth:`History.request_messages` and
            changed only by the streaming helpers until it ends.
        usage: the token counts of the answer it starts, when the provider reported them.
        finish_reason: how that answer ended, once it did.
        sources: the answer's ``source-url`` / ``source-document`` events (citations).
    """

    created_at: datetime | None
    hidden: bool
    streaming: bool
    usage: Usage | None
    finish_reason: FinishReason | None
    sources: tuple[JSONObject, ...]


def own_fields(message: Message) -> Mapping[str, Any]:
    """The message's ``metadata.aiChat`` object (empty when it has none)."""
    metadata = message.get("metadata")
    if metadata is None:
        return _EMPTY
    own = metadata.get(BOOKKEEPING_KEY)
    return cast("Mapping[str, Any]", own) if type(own) is FrozenDict else _EMPTY


def is_streaming(message: Message) -> bool:
    """Whether ``message`` is a streaming message (``metadata.aiChat.streaming``)."""
    metadata = message.get("metadata")
    if metadata is None:
        return False
    own: Any = metadata.get(BOOKKEEPING_KEY)
    return type(own) is FrozenDict and own.get("streaming") is True


def is_hidden(message: Message) -> bool:
    """Whether ``message`` is hidden from people (``metadata.aiChat.hidden``)."""
    return own_fields(message).get("hidden") is True


def bookkeeping(message: Message) -> Bookkeeping:
    """What the history records about ``message``, read from ``metadata.aiChat``.

    A plain normalized message (no such key) reads as not hidden, not streaming, with no
    creation time. The message is assumed valid (as a history holds it).
    """
    own = own_fields(message)
    created = own.get("createdAt")
    return Bookkeeping(
        created_at=None if created is None else parse_time(created, "$.metadata.aiChat"),
        hidden=own.get("hidden") is True,
        streaming=own.get("streaming") is True,
        usage=cast("Usage | None", own.get("usage")),
        finish_reason=cast("FinishReason | None", own.get("finishReason")),
        sources=cast("tuple[JSONObject, ...]", own.get("sources", ())),
    )


def with_bookkeeping(message: Message, **changes: object) -> Message:
    """``message`` with ``metadata.aiChat`` keys set (``None`` removes one).

    Keys are the wire names (``createdAt``...). The result is a new frozen message;
    ``metadata`` and ``aiChat`` are dropped when they end up empty.
    """
    metadata: Mapping[str, Any] = message.get("metadata", _EMPTY)
    own = dict(own_fields(message))
    for key, value in changes.items():
        if value is None:
            own.pop(key, None)
        else:
            own[key] = value
    new_metadata = dict(metadata)
    if own:
        new_metadata[BOOKKEEPING_KEY] = FrozenDict(own)
    else:
        new_metadata.pop(BOOKKEEPING_KEY, None)
    copy: dict[str, Any] = dict(message)
    if new_metadata:
        copy["metadata"] = FrozenDict(new_metadata)
    else:
        copy.pop("metadata", None)
    return cast(Message, FrozenDict(copy))


def check_bookkeeping(message: Message, path: list[str | int], root: str) -> None:
    """Raise :class:`~ai_chat.ValidationError` for a malformed ``metadata.aiChat`` of a
    normalized message (its path below ``root``/``path``); unknown keys are allowed."""
    metadata = message.get("metadata")
    if metadata is None or BOOKKEEPING_KEY not in metadata:
        return
    where = [*path, "metadata", BOOKKEEPING_KEY]
    own: Any = metadata[BOOKKEEPING_KEY]
    if type(own) is not FrozenDict:
        raise ValidationError(
            format_path(where, root),
            f"expected an object (the key {BOOKKEEPING_KEY!r} is reserved for ai_chat's "
            f"bookkeeping), got {describe(own)}",
        )
    for key in ("hidden", "streaming"):
        if key in own and type(own[key]) is not bool:
            raise ValidationError(
                format_path([*where, key], root), f"expected a boolean, got {describe(own[key])}"
            )
    if "createdAt" in own:
        parse_time(own["createdAt"], format_path([*where, "createdAt"], root))
    if "finishReason" in own and type(own["finishReason"]) is not str:
        raise ValidationError(format_path([*where, "finishReason"], root), "expected a string")
    if "usage" in own:
        check_usage(own["usage"], format_path([*where, "usage"], root))
    sources = own.get("sources", ())
    if type(sources) is not tuple or any(type(s) is not FrozenDict for s in sources):
        raise ValidationError(
            format_path([*where, "sources"], root), "expected an array of source objects"
        )


def check_usage(usage: object, path: str) -> None:
    """Raise :class:`~ai_chat.ValidationError` unless ``usage`` (frozen) is a ``Usage``, by
    the check the ``finish`` event's usage gets."""
    expected = usage_problem(usage)
    if expected is not None:
        raise ValidationError(path, f"expected {expected}, got {describe(usage)}")
