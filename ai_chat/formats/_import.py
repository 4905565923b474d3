"""What every ``from_*`` does the same way: read a payload strictly, build messages.

A payload is read field by field: a field the reader knows is converted, an empty one
(``None``, ``[]``, ``{}``) is the same as an absent one, and any other field is a
:class:`FormatError` naming it, so nothing a provider sent is ever dropped unseen. The
objects the provider SDKs return (pydantic models) are read through their
``model_dump``, so no SDK is imported here.

:class:`Builder` lays the converted parts out as normalized messages: consecutive
tool results form one tool message, and each tool result gets its tool's name from
the call it answers (no provider repeats the name on the result, or only some do).
"""

# pyright: reportUnknownVariableType=false, reportUnknownMemberType=false, reportUnknownArgumentType=false

from __future__ import annotations

import base64
import binascii
import json
import mimetypes
from collections.abc import Callable, Collection, Iterable, Mapping
from typing import Any, Final, cast

from .._ids import random_ids
from .._messages import _normalize  # pyright: ignore[reportPrivateUsage]
from .._shape import describe
from .._types import Message, Role
from ..limits import JSONLimits
from ..limits._limits import PER_MESSAGE
from ._errors import Format, FormatError, format_name

__all__ = [
    "MESSAGE_LIMITS",
    "Builder",
    "IdSource",
    "Where",
    "as_items",
    "data_url",
    "decode_bytes",
    "guess_media_type",
    "id_source",
    "image_part",
    "parse_arguments",
    "plain",
    "read_user",
]

IdSource = Callable[[], str]

MESSAGE_LIMITS: Final = PER_MESSAGE
"""The bounds on each message ``from_*`` builds by default: a history's own bounds on one
message (``ai_chat.history.MESSAGE_LIMITS``), so that any message built can be appended
to a history and stored."""

_CONTAINERS: Final = frozenset({str, list, dict, tuple})


def id_source(new_id: IdSource | None) -> IdSource:
    """``new_id``, or a source of fresh random ids (a random prefix and a counter)."""
    return random_ids() if new_id is None else new_id


class Where:
    """A place in a payload: a path, and the message and part it is in (for errors)."""

    __slots__ = ("fmt", "message_index", "part_index", "path")

    def __init__(
        self,
        fmt: Format,
        path: str,
        message_index: int | None = None,
        part_index: int | None = None,
    ) -> None:
        self.fmt: Format = fmt
        self.path = path
        self.message_index = message_index
        self.part_index = part_index

    def at(self, key: str | int) -> Where:
        """The place of ``key`` inside this one."""
        step = f"[{key}]" if type(key) is int else f".{key}"
        return Where(self.fmt, self.path + step, self.message_index, self.part_index)

    def message(self, index: int) -> Where:
        """The place of message ``index`` of the list here."""
        return Where(self.fmt, f"{self.path}[{index}]", index)

    def part(self, key: str, index: int) -> Where:
        """The place of part ``index`` of the list ``key`` of this message."""
        return Where(self.fmt, f"{self.path}.{key}[{index}]", self.message_index, index)

    def error(self, reason: str) -> FormatError:
        return FormatError(
            self.path,
            reason,
            format=self.fmt,
            message_index=self.message_index,
            part_index=self.part_index,
        )

    def no_place(self, what: str) -> FormatError:
        """ai_chat's messages cannot hold ``what``, found here."""
        return self.error(
            f"ai_chat's messages have no place for {what} (from {format_name(self.fmt)}); "
            "remove it from the payload, or keep this conversation in the provider's format"
        )

    def expected(self, what: str, value: object) -> FormatError:
        return self.error(f"expected {what}, got {describe(value)}")

    def string(self, value: object, *, empty: bool = True) -> str:
        """``value``, which must be a string (non-empty unless ``empty``)."""
        if type(value) is not str or (not empty and not value):
            raise self.expected("a string" if empty else "a non-empty string", value)
        return value

    def items(self, value: object) -> list[Any] | tuple[Any, ...]:
        """``value``, which must be an array."""
        if type(value) is not list and type(value) is not tuple:
            raise self.expected("an array", value)
        return value

    def fields(self, value: object, known: Collection[str]) -> Mapping[str, Any]:
        """``value`` as an object whose fields are all in ``known`` (or empty)."""
        obj = plain(value, self)
        for key, item in obj.items():
            if key not in known and not _is_empty(item):
                raise self.at(key).no_place(f"the field {key!r}")
        return obj


def _is_empty(value: Any) -> bool:
    return value is None or (type(value) in _CONTAINERS and not value)


def plain(value: object, where: Where) -> Mapping[str, Any]:
    """An object of the payload: a mapping as it is, or a provider SDK's pydantic model
    through its ``model_dump`` (JSON field names; absent fields left out)."""
    if isinstance(value, Mapping):
        return cast("Mapping[str, Any]", value)
    dump = getattr(value, "model_dump", None)
    if callable(dump):
        data = dump(mode="python", by_alias=True, exclude_none=True)
        if isinstance(data, Mapping):
            return cast("Mapping[str, Any]", data)
    raise where.expected("an object", value)


def as_items(value: object, where: Where) -> Iterable[object]:
    """The items of a payload list; one SDK model (a response message) is one item."""
    if callable(getattr(value, "model_dump", None)):
        return (value,)
    if isinstance(value, (str, bytes, Mapping)) or not isinstance(value, Iterable):
        raise where.expected("an array (or one message the SDK returned)", value)
    return cast("Iterable[object]", value)


def read_user(
    content: object,
    where: Where,
    builder: Builder,
    text_type: str,
    read: Callable[[str, Mapping[str, Any], Where], dict[str, Any]],
) -> None:
    """A user message's content into ``builder``: a string as one text part; else each
    entry, a ``text_type`` entry as a text part and any other as ``read`` gives it (from
    the entry's type, the entry and its place)."""
    if type(content) is str:
        builder.add("user", {"type": "text", "text": content})
        return
    entries = where.items(content)
    if not entries:
        raise where.error("a user message needs content")
    for position, raw in enumerate(entries):
        at = Where(where.fmt, f"{where.path}[{position}]", where.message_index, position)
        entry = plain(raw, at)
        kind = entry.get("type")
        if kind == text_type:
            at.fields(entry, ("type", "text"))
            builder.add("user", {"type": "text", "text": at.at("text").string(entry.get("text"))})
        else:
            builder.add("user", read(at.at("type").string(kind), entry, at))


def image_part(url: str, detail: object) -> dict[str, Any]:
    """An OpenAI image as a file part (``detail`` kept in ``providerMetadata.openai``)."""
    part: dict[str, Any] = {"type": "file", "mediaType": guess_media_type(url, "image/*")}
    part["url"] = url
    if detail is not None:
        part["providerMetadata"] = {"openai": {"imageDetail": detail}}
    return part


def decode_bytes(value: object, where: Where) -> str:
    """Provider bytes as base64 text: a string as it is, ``bytes`` (what an SDK model
    holds) encoded with the standard alphabet, as the APIs' JSON carries them."""
    if type(value) is bytes:
        return base64.b64encode(value).decode("ascii")
    return where.string(value)


def data_url(media_type: str, data: str, where: Where) -> str:
    """A ``data:`` URL of base64 ``data``, checked to be base64."""
    try:
        base64.b64decode(data, validate=True)
    except (binascii.Error, ValueError):
        raise where.error("expected base64 data") from None
    return f"data:{media_type};base64,{data}"


def guess_media_type(url: str, default: str) -> str:
    """The media type of a ``data:`` URL's header, or guessed from a URL's file name."""
    if url.startswith("data:"):
        header = url[5:].partition(",")[0].partition(";")[0]
        return header or default
    guessed, _ = mimetypes.guess_type(url.partition("?")[0], strict=False)
    return guessed or default


class Builder:
    """Lays converted parts out as normalized messages, in the payload's order.

    A part goes to the open message of its role, or opens one; :meth:`end_turn` closes
    the open user or assistant message (the next part opens a new one), while a run of
    tool results stays one tool message until a part of another kind comes.
    """

    def __init__(self, fmt: Format, new_id: IdSource | None, limits: JSONLimits) -> None:
        self.fmt: Format = fmt
        self._new_id = id_source(new_id)
        self._limits = limits
        self._messages: list[dict[str, Any]] = []
        self._open: dict[str, Any] | None = None
        self._pending: dict[str, str] = {}  # unanswered tool call id -> tool name
        self._made: set[str] = set()  # every tool call id seen

    def system(self, parts: list[dict[str, Any]]) -> None:
        self._open = None
        self._messages.append({"id": self._new_id(), "role": "system", "parts": parts})

    def add(self, role: Role, part: dict[str, Any]) -> None:
        """Add ``part`` to the open ``role`` message, opening one when there is none."""
        current: Any = self._open
        if current is None or current["role"] != role:
            current = {"id": self._new_id(), "role": role, "parts": []}
            self._messages.append(current)
            self._open = current
        current["parts"].append(part)

    def end_turn(self) -> None:
        """Close the open user or assistant message."""
        if self._open is not None and self._open["role"] != "tool":
            self._open = None

    def open_assistant(self) -> None:
        """Open an empty assistant message (a provider turn with no content yet)."""
        self._open = {"id": self._new_id(), "role": "assistant", "parts": []}
        self._messages.append(self._open)

    def tool_call(
        self, call_id: str, name: str, tool_input: object, part: dict[str, Any], where: Where
    ) -> None:
        """Add a tool call part (``part`` holds any extra fields, such as metadata)."""
        if call_id in self._made:
            raise where.error(f"a second tool call with the id {call_id!r} (ids are unique)")
        self._made.add(call_id)
        self._pending[call_id] = name
        self.add(
            "assistant",
            {"type": "tool-call", "toolCallId": call_id, "toolName": name, "input": tool_input}
            | part,
        )

    def knows(self, call_id: str) -> bool:
        return call_id in self._made

    def pending_named(self, name: str) -> str | None:
        """The first unanswered call of tool ``name`` (for results that carry no id)."""
        return next((cid for cid, tool in self._pending.items() if tool == name), None)

    def tool_result(
        self,
        call_id: str,
        output: object,
        is_error: bool,
        where: Where,
        part: dict[str, Any] | None = None,
    ) -> None:
        """Add the result of call ``call_id``, named after that call."""
        name = self._pending.pop(call_id, None)
        if name is None:
            answered = call_id in self._made
            raise where.error(
                f"this result answers tool call {call_id!r}, which "
                + (
                    "already has a result"
                    if answered
                    else "no earlier assistant message made (a tool result needs its call, "
                    "for the provider and for the tool's name)"
                )
            )
        result: dict[str, Any] = {
            "type": "tool-result",
            "toolCallId": call_id,
            "toolName": name,
            "output": output,
        }
        if is_error:
            result["isError"] = True
        if part:
            result.update(part)
        self.add("tool", result)

    def messages(self) -> tuple[Message, ...]:
        """The messages built, each normalized (frozen) within the limits."""
        limits = self._limits
        return tuple(_normalize((m,), limits, "$")[0] for m in self._messages)


def parse_arguments(arguments: str, where: Where) -> object:
    """A tool call's arguments, a JSON text (empty: no arguments, ``{}``)."""
    if not arguments:
        return {}
    try:
        return json.loads(arguments, parse_constant=_no_constant)
    except (ValueError, RecursionError):
        raise where.error(
            "the tool call's arguments are not JSON; ai_chat's tool calls hold their input "
            "as a JSON value"
        ) from None


def _no_constant(name: str) -> object:
    raise ValueError(name)  # NaN and Infinity are not JSON
