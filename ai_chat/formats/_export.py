"""What every ``to_*`` does the same way: read the messages, word what cannot go.

The converters walk frozen normalized messages (what :func:`~ai_chat.normalize_messages`
returns) without re-validating them, which is what makes them as fast as a JSON round
trip: :func:`exported` normalizes anything else first, and :func:`malformed` turns a
``KeyError`` or ``TypeError`` met on a frozen value that was never normalized into the
:class:`~ai_chat.ValidationError` the boundary words for it.
"""

# Hot loops over frozen JSON typed Any, as in ai_chat/_messages.py.
# pyright: reportUnknownVariableType=false, reportUnknownMemberType=false, reportUnknownArgumentType=false

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Final, Literal, NoReturn, TypeAlias, cast

from .._messages import _normalize  # pyright: ignore[reportPrivateUsage]
from .._types import Message
from ..limits import FrozenDict, JSONLimits
from ._errors import Format, FormatError, format_name

if TYPE_CHECKING:
    from ..history import History

__all__ = [
    "BOOKKEEPING_KEY",
    "MESSAGES_ROOT",
    "Body",
    "Malformed",
    "ReasoningParts",
    "base64_payload",
    "compact_json",
    "exported",
    "is_streaming",
    "late_system_message",
    "malformed",
    "metadata_of",
    "output_text",
    "part_error",
    "streaming_error",
    "unsendable",
    "user_content",
]

Body: TypeAlias = dict[str, Any]
ReasoningParts: TypeAlias = Literal["error", "omit"]
"""What ``to_*`` does with a reasoning part the provider cannot take back: raise a
:class:`FormatError` (``"error"``, the default) or leave the part out (``"omit"``)."""

MESSAGES_ROOT: Final = "$.messages"
BOOKKEEPING_KEY: Final = "aiChat"  # ai_chat.history's key in message metadata

# What a frozen value that was never normalized can raise on the way through.
Malformed: Final = (KeyError, TypeError, AttributeError, IndexError)

_UNBOUNDED: Final = JSONLimits(max_depth=100_000, max_values=100_000_000, max_chars=1_000_000_000)
_EMPTY: Final[Mapping[str, Any]] = FrozenDict()


def exported(messages: Sequence[Message] | History) -> Sequence[Message]:
    """``messages`` ready to convert: a history's :meth:`~ai_chat.history.History.request_messages`
    (streaming messages left out); a list as it is when every message is frozen
    (normalized), otherwise through :func:`~ai_chat.normalize_messages` (errors under
    ``$.messages``).

    Raises:
        ValidationError: not a list of normalized messages.
    """
    request = getattr(messages, "request_messages", None)
    if callable(request):  # a History, read without importing ai_chat.history
        return cast("tuple[Message, ...]", request())
    if type(messages) is tuple or type(messages) is list:
        kinds = set(map(type, messages))
        if not kinds or kinds == {FrozenDict}:
            return messages
    # Unbounded: a history of any size converts; the limits were the caller's to apply.
    return _normalize(cast("Sequence[object]", messages), _UNBOUNDED, MESSAGES_ROOT)


def malformed(messages: Sequence[Message], exc: Exception) -> NoReturn:
    """Raise the boundary's error for frozen messages that were never normalized (the
    ``exc`` a converter met); ``exc`` itself when they are valid after all (a bug)."""
    _normalize(messages, _UNBOUNDED, MESSAGES_ROOT)
    raise exc


def is_streaming(metadata: Mapping[str, Any]) -> bool:
    """Whether a message's ``metadata`` marks it streaming (``aiChat.streaming``)."""
    own = metadata.get(BOOKKEEPING_KEY)
    return type(own) is FrozenDict and own.get("streaming") is True


def streaming_error(fmt: Format, index: int, message: Message) -> FormatError:
    """A streaming message, which no request takes until it ends."""
    return FormatError(
        f"{MESSAGES_ROOT}[{index}]",
        "the message is still streaming (metadata.aiChat.streaming), and a request never "
        "takes a message before it ends: finish or cancel it first, or send "
        "History.request_messages(), which leaves streaming messages out",
        format=fmt,
        message_index=index,
        message_id=message["id"],
    )


def part_error(
    fmt: Format, index: int, message: Message, position: int, reason: str, *tail: str
) -> FormatError:
    """A part ``to_*`` cannot convert; ``tail`` names a field inside it."""
    path = f"{MESSAGES_ROOT}[{index}].parts[{position}]" + "".join(f".{key}" for key in tail)
    return FormatError(
        path,
        reason,
        format=fmt,
        message_index=index,
        part_index=position,
        message_id=message["id"],
    )


def late_system_message(fmt: Format, index: int, message: Message, provider: str) -> FormatError:
    """A system message after the conversation started, for an API that takes system
    instructions apart from the turns (and so only before them)."""
    return FormatError(
        f"{MESSAGES_ROOT}[{index}].role",
        f"{provider} takes system instructions only before the conversation; move this "
        "system message to the start of messages (or make it a user message)",
        format=fmt,
        message_index=index,
        message_id=message["id"],
    )


def unsendable(fmt: Format, kind: str, role: str) -> str:
    """Why a part of ``kind`` cannot go to ``fmt`` in a ``role`` message."""
    if kind.startswith("data-"):
        return (
            f'"{kind}" is application data, which the provider cannot take; convert it to '
            "a text part or remove it before sending"
        )
    return f"{format_name(fmt)} cannot take {kind} parts in {role} messages"


def user_content(
    fmt: Format,
    message: Message,
    index: int,
    text: Callable[[Any], Body],
    file: Callable[[Message, Any, int, int], Body],
) -> list[Body]:
    """A user message's parts as ``fmt``'s content: each text part as ``text`` gives it,
    each file as ``file`` gives it (from the message, the part, the message's index and
    the part's position); another kind raises, naming the part."""
    content: list[Body] = []
    for position, part in enumerate(cast("tuple[Any, ...]", message["parts"])):
        kind = part["type"]
        if kind == "text":
            content.append(text(part))
        elif kind == "file":
            content.append(file(message, part, index, position))
        else:
            raise part_error(fmt, index, message, position, unsendable(fmt, kind, "user"))
    return content


def metadata_of(part: Mapping[str, Any], provider: str) -> Mapping[str, Any]:
    """A part's ``providerMetadata.<provider>``, empty when there is none."""
    metadata = part.get("providerMetadata")
    if metadata is None:
        return _EMPTY
    own = metadata.get(provider)
    return own if type(own) is FrozenDict else _EMPTY


def base64_payload(
    fmt: Format, index: int, message: Message, position: int, url: str, provider: str
) -> str:
    """The data of a base64 ``data:`` URL (the caller checked the ``data:`` prefix)."""
    header, comma, data = url.partition(",")
    if not comma or not header.endswith(";base64"):
        raise part_error(
            fmt,
            index,
            message,
            position,
            f"{provider} takes a data: URL only base64-encoded (data:<type>;base64,...)",
            "url",
        )
    return data


def compact_json(value: object) -> str:
    """``value`` as compact JSON text, non-ASCII kept as is."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def output_text(output: object) -> str:
    """A tool result's output as text: a string as it is, anything else as JSON."""
    return output if type(output) is str else compact_json(output)
