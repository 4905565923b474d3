"""Message normalization: the chat history crosses the JSON boundary as one value."""

# The hot loops here walk JSON values typed Any and check their types at run time with
# `type(x) is ...` (exact types, on purpose), which pyright cannot follow without casts
# that would cost a call per value: so these three "unknown type" reports are off here.
# pyright: reportUnknownVariableType=false, reportUnknownMemberType=false, reportUnknownArgumentType=false

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, cast

from ._describe import shown
from ._errors import ValidationError
from ._shape import (
    Shape,
    any_json,
    boolean,
    check_shape,
    describe,
    json_object,
    non_empty_str,
    provider_metadata,
    string,
)
from ._types import Message
from .limits import FrozenDict, JSONLimits, freeze_json
from .limits._walk import format_path

__all__ = ["normalize_messages"]

_DEFAULT_LIMITS = JSONLimits()

_MESSAGE = Shape(
    required={"id": non_empty_str, "role": any_json, "parts": any_json},
    optional={"metadata": json_object},
)

_PART_SHAPES: dict[str, Shape] = {
    "text": Shape({"text": string}, {"providerMetadata": provider_metadata}),
    "reasoning": Shape({"text": string}, {"providerMetadata": provider_metadata}),
    "file": Shape(
        {"mediaType": non_empty_str, "url": non_empty_str},
        {"filename": string, "providerMetadata": provider_metadata},
    ),
    "tool-call": Shape(
        {"toolCallId": non_empty_str, "toolName": non_empty_str, "input": any_json},
        {"providerMetadata": provider_metadata},
    ),
    "tool-result": Shape(
        {"toolCallId": non_empty_str, "toolName": non_empty_str, "output": any_json},
        {"isError": boolean, "providerMetadata": provider_metadata},
    ),
}
_DATA_PART = Shape({"data": any_json}, {"id": string, "providerMetadata": provider_metadata})

_ALLOWED_PARTS: dict[str, frozenset[str]] = {
    "system": frozenset({"text"}),
    "user": frozenset({"text", "file", "data"}),
    "assistant": frozenset({"text", "reasoning", "file", "tool-call", "data"}),
    "tool": frozenset({"tool-result"}),
}
_ROLES = '"system", "user", "assistant" or "tool"'


def normalize_messages(
    messages: Sequence[object], *, limits: JSONLimits = _DEFAULT_LIMITS
) -> tuple[Message, ...]:
    """Validate a chat history and return it as a new tuple of deep-frozen messages.

    ``messages`` is a list or tuple of message objects: parsed JSON, or messages this
    function already returned. The whole history is held to ``limits`` as one JSON value.
    Order is kept; nothing is invented, trimmed, paired or executed; unknown properties
    on messages and parts are kept.

    A message is ``{id, role, parts, metadata?}`` with a non-empty ``id``, a ``role`` of
    ``system``, ``user``, ``assistant`` or ``tool``, and ``parts`` as described in
    :class:`~ai_chat.types.Message`. File URLs and media types are checked only as non-empty
    strings: whether a URL is safe to fetch is the application's policy.

    Raises:
        ValidationError: not JSON, or a missing field, a wrong type, an empty id, an
            unknown part type or a part the role may not hold; ``path`` names it, such as
            ``$[3].parts[0].toolCallId``.
        LimitExceededError: the history exceeds ``limits``.
    """
    return _normalize(messages, limits, "$")


def _normalize(messages: object, limits: JSONLimits, root: str) -> tuple[Message, ...]:
    kind = type(messages)
    if kind is not list and kind is not tuple:
        if not isinstance(messages, Sequence) or isinstance(messages, (str, bytes, bytearray)):
            raise ValidationError(root, f"expected an array of messages, got {describe(messages)}")
        messages = list(cast("Sequence[object]", messages))
    items = cast("list[object] | tuple[object, ...]", messages)
    if any(
        type(m) is not dict and type(m) is not FrozenDict and isinstance(m, Mapping) for m in items
    ):
        # Any mapping is taken as a message; what it holds must be plain JSON.
        messages = [
            dict(cast("Mapping[str, object]", m)) if isinstance(m, Mapping) else m for m in items
        ]
    frozen = cast("tuple[object, ...]", freeze_json(messages, limits, root=root))
    valid = _plainly_valid
    for index, message in enumerate(frozen):
        if not valid(message):
            _check_message(message, index, root)
    return cast("tuple[Message, ...]", frozen)


# Part types -> (the family the role must allow, required fields with their checks):
# None accepts any JSON, str a string, "" a non-empty string.
_PLAIN_FIELDS: dict[str, tuple[tuple[str, type | str | None], ...]] = {
    "text": (("text", str),),
    "reasoning": (("text", str),),
    "file": (("mediaType", ""), ("url", "")),
    "tool-call": (("toolCallId", ""), ("toolName", ""), ("input", None)),
    "tool-result": (("toolCallId", ""), ("toolName", ""), ("output", None)),
}
# Part type -> (the family the role must allow, its field count with "type", its fields).
_PLAIN_PARTS: dict[object, tuple[str, int, tuple[tuple[str, type | str | None], ...]]] = {
    kind: (kind, len(fields) + 1, fields) for kind, fields in _PLAIN_FIELDS.items()
}
_ABSENT = object()


def _plainly_valid(message: Any) -> bool:
    """True for a valid message without optional or unknown part fields, fast.

    A conservative shortcut for the common case: False sends the message through the full
    check, which accepts anything valid and words the error for anything that is not.
    (``Any`` instead of casts: this runs once per message and part, and ``cast`` is a call.)
    """
    kind: type = type(message)  # compared, not narrowed: message stays Any for speed
    if kind is not FrozenDict:
        return False
    get = message.get
    message_id = get("id")
    role = get("role")
    parts = get("parts")
    allowed = _ALLOWED_PARTS.get(role) if type(role) is str else None
    if (
        type(message_id) is not str
        or not message_id
        or allowed is None
        or type(parts) is not tuple
        or (not parts and role != "assistant")
    ):
        return False
    if "metadata" in message and type(get("metadata")) is not FrozenDict:
        return False
    part: Any
    for part in parts:
        kind = type(part)
        if kind is not FrozenDict:
            return False
        spec = _PLAIN_PARTS.get(part.get("type"))
        if spec is None:
            return False
        family, size, fields = spec
        if family not in allowed or len(part) != size:
            return False
        for name, check in fields:
            value = part.get(name, _ABSENT)
            if value is _ABSENT:
                return False
            if check is not None and (type(value) is not str or (check == "" and not value)):
                return False
    return True


def _check_message(message: object, index: int, root: str) -> None:
    path: list[str | int] = [index]
    if type(message) is not FrozenDict:
        raise ValidationError(
            format_path(path, root), f"expected a message object, got {describe(message)}"
        )
    fields = cast("FrozenDict[str, object]", message)
    check_shape(fields, _MESSAGE, path, root)
    role = fields["role"]
    allowed = _ALLOWED_PARTS.get(role) if type(role) is str else None
    if allowed is None:
        raise ValidationError(
            format_path([*path, "role"], root),
            f"expected {_ROLES}, got {shown(role) if type(role) is str else describe(role)}",
        )
    parts = fields["parts"]
    if type(parts) is not tuple:
        raise ValidationError(
            format_path([*path, "parts"], root),
            f"expected an array of parts, got {describe(parts)}",
        )
    if not parts and role != "assistant":
        raise ValidationError(
            format_path([*path, "parts"], root), f"a {role} message needs at least one part"
        )
    for number, part in enumerate(cast("tuple[object, ...]", parts)):
        _check_part(part, cast(str, role), allowed, index, number, root)


def _check_part(
    part: object, role: str, allowed: frozenset[str], index: int, number: int, root: str
) -> None:
    path: list[str | int] = [index, "parts", number]
    if type(part) is not FrozenDict:
        raise ValidationError(
            format_path(path, root), f"expected a part object, got {describe(part)}"
        )
    fields = cast("FrozenDict[str, object]", part)
    kind = fields.get("type")
    if type(kind) is not str:
        reason = (
            'missing required field "type"'
            if kind is None and "type" not in fields
            else (f"expected a part type string, got {describe(kind)}")
        )
        raise ValidationError(
            format_path([*path, "type"] if "type" in fields else path, root), reason
        )
    if kind.startswith("data-") and len(kind) > 5:
        family, shape = "data", _DATA_PART
    else:
        family, found = kind, _PART_SHAPES.get(kind)
        if found is None:
            raise ValidationError(
                format_path([*path, "type"], root),
                f"unknown part type {shown(kind)} (expected text, reasoning, file, tool-call, "
                "tool-result or data-<name>)",
            )
        shape = found
    if family not in allowed:
        raise ValidationError(
            format_path([*path, "type"], root), f"a {role} message cannot hold a {shown(kind)} part"
        )
    check_shape(fields, shape, path, root)
