"""The helpers that return a changed history: appends, edits, removal, system messages.

Each takes a history and returns a new one (the same one when nothing changes, as for an
unknown id). Only what changes is checked, against the history's indexes.
"""

# pyright: reportUnknownVariableType=false, reportUnknownMemberType=false, reportUnknownArgumentType=false

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any, cast

from .._errors import ConfigurationError, ValidationError
from .._types import Message
from ..limits import FrozenDict, freeze_json
from ..limits._walk import format_path
from ._bookkeeping import (
    BOOKKEEPING_KEY,
    is_streaming,
    own_fields,
    with_bookkeeping,
)
from ._env import format_time
from ._errors import DuplicateIdError, StreamingMessageError, ToolPairingError
from ._validate import call_name, check_new, normalize_one

if TYPE_CHECKING:
    from ._history import History

__all__ = [
    "append_assistant",
    "append_text",
    "append_tool_results",
    "collapse_system",
    "extend",
    "prepend_system",
    "remove_message",
    "replace_system",
    "replace_tool_result",
    "set_hidden",
    "stamp",
    "tool_ids",
    "update_message",
    "without_results",
]

# A text message whose text is this short cannot exceed any limit JSONLimits allows, so
# it skips the general check (JSON escaping makes a character at most 6 long).
_ENVELOPE = 512


def stamp(history: History, created_at: datetime | None) -> tuple[str, datetime | None]:
    """The creation time for new messages (``created_at``, or the env's now), and the
    now it read (``None`` when it read none), which is also the history's update time."""
    if created_at is None:
        moment = history.env.time()
        return format_time(moment), moment
    if type(created_at) is not datetime or created_at.utcoffset() is None:
        raise ConfigurationError("created_at", created_at, "a timezone-aware datetime")
    return format_time(created_at), None


def extend(history: History, messages: Sequence[object], created_at: datetime | None) -> History:
    if not messages:
        return history
    seq = history._seq  # pyright: ignore[reportPrivateUsage]
    when, now = stamp(history, created_at)
    checked = check_new(seq, messages, history.limits, "$", when)
    return history._changed(seq.extend(checked), now)  # pyright: ignore[reportPrivateUsage]


def _new_id(history: History, message_id: str | None) -> str:
    if message_id is None:
        return history.env.identifier()
    if type(message_id) is not str or not message_id:
        raise ConfigurationError("id", message_id, "a non-empty str or None")
    return message_id


def append_text(
    history: History,
    role: str,
    text: str,
    metadata: Mapping[str, object] | None,
    message_id: str | None,
    created_at: datetime | None,
) -> History:
    if type(text) is not str:
        raise ConfigurationError("text", text, "a str")
    message_id = _new_id(history, message_id)
    when, now = stamp(history, created_at)
    seq = history._seq  # pyright: ignore[reportPrivateUsage]
    limits = history.limits
    if (
        metadata is None
        and len(text) * 6 + len(message_id) * 6 + _ENVELOPE <= limits.max_chars
        and limits.max_depth >= 5
        and limits.max_values >= 16
        and text.isascii()  # no lone surrogate either
    ):
        # The common case, built directly: what the boundary would build, without the walk.
        if seq.position(message_id) is not None:
            raise DuplicateIdError("$[0].id", message_id)
        message = cast(
            Message,
            FrozenDict(
                id=message_id,
                role=role,
                parts=(FrozenDict(type="text", text=text),),
                metadata=FrozenDict({BOOKKEEPING_KEY: FrozenDict(createdAt=when)}),
            ),
        )
        return history._changed(seq.extend_plain(message), now)  # pyright: ignore[reportPrivateUsage]
    checked = check_new(seq, (_raw_text(message_id, role, text, metadata),), limits, "$", when)
    return history._changed(seq.extend(checked), now)  # pyright: ignore[reportPrivateUsage]


def _raw_text(
    message_id: str, role: str, text: str, metadata: Mapping[str, object] | None
) -> dict[str, object]:
    """A text message as JSON, for the boundary to check."""
    raw: dict[str, object] = {"id": message_id, "role": role}
    raw["parts"] = [{"type": "text", "text": text}]
    if metadata is not None:
        raw["metadata"] = _plain_metadata(metadata)
    return raw


def _plain_metadata(metadata: object) -> dict[str, object]:
    if not isinstance(metadata, Mapping):
        raise ValidationError("$[0].metadata", "expected a JSON object")
    return dict(cast("Mapping[str, object]", metadata))


def append_assistant(
    history: History,
    text: str,
    tool_calls: tuple[Mapping[str, object], ...],
    metadata: Mapping[str, object] | None,
    message_id: str | None,
    created_at: datetime | None,
) -> History:
    if not tool_calls:
        return append_text(history, "assistant", text, metadata, message_id, created_at)
    if type(text) is not str:
        raise ConfigurationError("text", text, "a str")
    parts: list[object] = [{"type": "text", "text": text}] if text else []
    for call in cast("tuple[object, ...]", tool_calls):
        if not isinstance(call, Mapping):
            raise ValidationError(f"$[0].parts[{len(parts)}]", "expected a tool call object")
        parts.append({"type": "tool-call", **cast("Mapping[str, object]", call)})
    raw: dict[str, object] = {"id": _new_id(history, message_id), "role": "assistant"}
    raw["parts"] = parts
    if metadata is not None:
        raw["metadata"] = _plain_metadata(metadata)
    return extend(history, (raw,), created_at)


def append_tool_results(
    history: History,
    results: tuple[Mapping[str, object], ...],
    message_id: str | None,
    created_at: datetime | None,
) -> History:
    seq = history._seq  # pyright: ignore[reportPrivateUsage]
    parts: list[object] = []
    for number, result in enumerate(cast("tuple[object, ...]", results)):
        if not isinstance(result, Mapping):
            raise ValidationError(f"$[0].parts[{number}]", "expected a tool result object")
        fields = cast("Mapping[str, Any]", result)
        call_id = fields.get("toolCallId")
        if type(call_id) is not str or not call_id:
            raise ValidationError(f"$[0].parts[{number}].toolCallId", "expected a non-empty string")
        position = seq.call_position(call_id)
        if position is None:
            raise ToolPairingError(
                f"$[0].parts[{number}].toolCallId",
                call_id,
                f"no tool call {call_id!r} in the history to answer",
            )
        part: dict[str, object] = {
            "type": "tool-result",
            "toolName": call_name(seq.at(position), call_id),
        }
        part.update(fields)
        if part.get("isError") is False:
            del part["isError"]
        parts.append(part)
    if not parts:
        return history
    raw = {"id": _new_id(history, message_id), "role": "tool", "parts": parts}
    return extend(history, (raw,), created_at)


def _position(history: History, message_id: str) -> int | None:
    return history._seq.position(message_id)  # pyright: ignore[reportPrivateUsage]


def _replace_at(history: History, position: int, message: Message | None) -> History:
    """This history with the message at ``position`` replaced (or removed)."""
    seq = history._seq  # pyright: ignore[reportPrivateUsage]
    tail = list(seq.iter_from(position + 1))
    if message is not None:
        tail.insert(0, message)
    return history._changed(seq.rewrite(position, tail))  # pyright: ignore[reportPrivateUsage]


def tool_ids(message: Message) -> list[tuple[str, str, str]]:
    """The message's tool parts as (kind, toolCallId, toolName), in order."""
    out: list[tuple[str, str, str]] = []
    for part in message["parts"]:
        fields: Any = part
        kind = fields["type"]
        if kind == "tool-call" or kind == "tool-result":
            out.append((kind, fields["toolCallId"], fields["toolName"]))
    return out


def update_message(
    history: History,
    message_id: str,
    parts: Sequence[object] | None,
    metadata: Mapping[str, object] | None,
) -> History:
    position = _position(history, message_id)
    if position is None or (parts is None and metadata is None):
        return history
    seq = history._seq  # pyright: ignore[reportPrivateUsage]
    old = seq.at(position)
    path = f"$[{position}]"
    if is_streaming(old):
        raise StreamingMessageError(path, message_id, "updated")
    new = _rebuilt(history, old, parts, metadata, position)
    before, after = sorted(tool_ids(old)), sorted(tool_ids(new))
    if before != after:
        changed = next((a for a, b in zip(after, before, strict=False) if a != b), None)
        changed = changed or (after[len(before)] if len(after) > len(before) else before[-1])
        raise ToolPairingError(
            f"{path}.parts",
            changed[1],
            f"an update keeps the message's tool calls and results (same ids and tool "
            f"names), but {changed[0]} {changed[1]!r} differs; append or remove messages "
            "to change them",
        )
    if new == old:
        return history
    return _replace_at(history, position, new)


def _rebuilt(
    history: History,
    old: Message,
    parts: Sequence[object] | None,
    metadata: Mapping[str, object] | None,
    position: int,
) -> Message:
    """``old`` (at ``position``) with new parts and/or metadata, normalized, its
    bookkeeping kept."""
    path = f"$[{position}]"
    raw: dict[str, object] = {"id": old["id"], "role": old["role"]}
    raw["parts"] = old["parts"] if parts is None else list(parts)
    own = own_fields(old)
    if metadata is None:
        kept: Mapping[str, object] = old.get("metadata", FrozenDict())
    else:
        if not isinstance(cast(object, metadata), Mapping):
            raise ValidationError(f"{path}.metadata", "expected a JSON object")
        if BOOKKEEPING_KEY in metadata:
            raise ValidationError(
                format_path(["metadata", BOOKKEEPING_KEY], path),
                f"the key {BOOKKEEPING_KEY!r} is ai_chat's bookkeeping, kept by the "
                "helpers: leave it out",
            )
        kept = {**metadata, BOOKKEEPING_KEY: own} if own else dict(metadata)
    if kept:
        raw["metadata"] = kept
    return normalize_one(raw, history.limits, "$", position)


def without_results(messages: list[Message], call_ids: set[str]) -> list[Message]:
    """The messages with the results of ``call_ids`` left out (and emptied tool
    messages with them)."""
    out: list[Message] = []
    for message in messages:
        if message["role"] != "tool":
            out.append(message)
            continue
        kept = tuple(p for p in message["parts"] if cast(Any, p)["toolCallId"] not in call_ids)
        if len(kept) == len(message["parts"]):
            out.append(message)
        elif kept:
            out.append(cast(Message, FrozenDict({**message, "parts": kept})))
    return out


def remove_message(history: History, message_id: str, *, streaming: bool = False) -> History:
    """Remove the message (and its calls' results); ``streaming`` allows a streaming one."""
    position = _position(history, message_id)
    if position is None:
        return history
    seq = history._seq  # pyright: ignore[reportPrivateUsage]
    old = seq.at(position)
    if is_streaming(old) and not streaming:
        raise StreamingMessageError(f"$[{position}]", message_id, "removed")
    calls = {call_id for kind, call_id, _ in tool_ids(old) if kind == "tool-call"}
    tail = list(seq.iter_from(position + 1))
    if calls:
        tail = without_results(tail, calls)
    return history._changed(seq.rewrite(position, tail))  # pyright: ignore[reportPrivateUsage]


def set_hidden(history: History, message_id: str, hidden: bool) -> History:
    if type(hidden) is not bool:
        raise ConfigurationError("hidden", hidden, "a bool")
    position = _position(history, message_id)
    if position is None:
        return history
    old = history._seq.at(position)  # pyright: ignore[reportPrivateUsage]
    if (own_fields(old).get("hidden") is True) == hidden:
        return history
    return _replace_at(history, position, with_bookkeeping(old, hidden=True if hidden else None))


def replace_tool_result(
    history: History, tool_call_id: str, output: object, is_error: bool
) -> History:
    if type(is_error) is not bool:
        raise ConfigurationError("is_error", is_error, "a bool")
    seq = history._seq  # pyright: ignore[reportPrivateUsage]
    position = seq.result_position(tool_call_id) if type(tool_call_id) is str else None
    if position is None:
        return history
    frozen = freeze_json(output, history.limits, root="$.output")
    old = seq.at(position)
    parts: list[object] = []
    for part in old["parts"]:
        fields: dict[str, Any] = dict(part)
        if fields["toolCallId"] == tool_call_id:
            fields["output"] = frozen
            if is_error:
                fields["isError"] = True
            else:
                fields.pop("isError", None)
            parts.append(FrozenDict(fields))
        else:
            parts.append(part)
    new = cast(Message, FrozenDict({**old, "parts": tuple(parts)}))
    return history if new == old else _replace_at(history, position, new)


def prepend_system(
    history: History,
    text: str,
    metadata: Mapping[str, object] | None,
    message_id: str | None,
    created_at: datetime | None,
) -> History:
    if type(text) is not str:
        raise ConfigurationError("text", text, "a str")
    seq = history._seq  # pyright: ignore[reportPrivateUsage]
    raw = _raw_text(_new_id(history, message_id), "system", text, metadata)
    when, now = stamp(history, created_at)
    (message,) = check_new(seq, (raw,), history.limits, "$", when)
    return history._changed(seq.rewrite(0, [message, *seq.iter_from(0)]), now)  # pyright: ignore[reportPrivateUsage]


def replace_system(history: History, text: str) -> History:
    if type(text) is not str:
        raise ConfigurationError("text", text, "a str")
    seq = history._seq  # pyright: ignore[reportPrivateUsage]
    for position, message in enumerate(seq.messages()):
        if message["role"] == "system":
            new = _rebuilt(history, message, [{"type": "text", "text": text}], None, position)
            return history if new == message else _replace_at(history, position, new)
    return prepend_system(history, text, None, None, None)


def collapse_system(history: History) -> History:
    seq = history._seq  # pyright: ignore[reportPrivateUsage]
    messages = seq.messages()
    systems = [p for p, m in enumerate(messages) if m["role"] == "system"]
    if len(systems) <= 1:
        return history
    first = systems[0]
    parts: list[object] = list(messages[first]["parts"])
    for position in systems[1:]:
        for part in messages[position]["parts"]:
            if part not in parts:
                parts.append(part)
    merged = cast(Message, FrozenDict({**messages[first], "parts": tuple(parts)}))
    later = set(systems[1:])
    tail = [merged] + [m for p, m in enumerate(messages) if p > first and p not in later]
    return history._changed(seq.rewrite(first, tail))  # pyright: ignore[reportPrivateUsage]
