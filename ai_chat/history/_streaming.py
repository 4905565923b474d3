"""Streaming messages: a message being streamed, protected until it is finished or cancelled.

A streaming message carries ``metadata.aiChat.streaming: true``. It is shown (a UI renders
it as it grows) but never sent to a model (:meth:`History.request_messages` leaves it
out), and the general helpers refuse to edit or remove it. Only these helpers change it:
:func:`update` replaces its content while it streams, :func:`finish` ends it as it is,
:func:`cancel` removes it. Once it is finished or cancelled, :func:`update` is a no-op:
the token that lands after the user pressed stop changes nothing.
"""

# pyright: reportUnknownVariableType=false, reportUnknownMemberType=false, reportUnknownArgumentType=false

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any, cast

from .._errors import ValidationError
from .._types import Message, Usage
from ..limits import freeze_json
from ..limits._walk import format_path
from ._bookkeeping import BOOKKEEPING_KEY, check_usage, is_streaming, own_fields, with_bookkeeping
from ._edits import remove_message, stamp
from ._errors import ToolPairingError
from ._sequence import Seq
from ._validate import call_name, check_new, normalize_one

if TYPE_CHECKING:
    from ._history import History

__all__ = ["cancel", "finish", "start", "update"]


def start(
    history: History,
    role: str,
    parts: Sequence[object],
    metadata: Mapping[str, object] | None,
    message_id: str | None,
    created_at: datetime | None,
) -> tuple[History, str]:
    seq = history._seq  # pyright: ignore[reportPrivateUsage]
    new_id = history.env.identifier() if message_id is None else message_id
    raw: dict[str, object] = {"id": new_id, "role": role, "parts": list(parts)}
    if metadata is not None:
        raw["metadata"] = dict(metadata)
    when, now = stamp(history, created_at)
    (message,) = check_new(seq, (raw,), history.limits, "$", when)
    message = with_bookkeeping(message, streaming=True)
    return history._changed(seq.extend((message,)), now), message["id"]  # pyright: ignore[reportPrivateUsage]


def update(
    history: History,
    message_id: str,
    parts: Sequence[object],
    metadata: Mapping[str, object] | None,
) -> History:
    found = _streaming_message(history, message_id)
    if found is None:
        return history  # finished, cancelled or unknown: a late update changes nothing
    seq, position, old = found
    path = f"$[{position}]"
    raw: dict[str, object] = {"id": message_id, "role": old["role"], "parts": list(parts)}
    own = own_fields(old)
    if metadata is None:
        raw["metadata"] = old.get("metadata", {})
    else:
        if BOOKKEEPING_KEY in metadata:
            raise ValidationError(
                format_path(["metadata", BOOKKEEPING_KEY], path),
                f"the key {BOOKKEEPING_KEY!r} is ai_chat's bookkeeping: leave it out",
            )
        raw["metadata"] = {**metadata, BOOKKEEPING_KEY: own}
    new = normalize_one(raw, history.limits, "$", position)
    _check_tools(history, position, old, new, path)
    if new == old:
        return history
    tail = [new, *seq.iter_from(position + 1)]
    return history._changed(seq.rewrite(position, tail))  # pyright: ignore[reportPrivateUsage]


def _check_tools(history: History, position: int, old: Message, new: Message, path: str) -> None:
    """The updated message's tool parts keep the history's invariants."""
    seq = history._seq  # pyright: ignore[reportPrivateUsage]
    kept: set[str] = set()
    answered: set[str] = set()
    for number, part in enumerate(new["parts"]):
        fields: Any = part
        kind = fields["type"]
        where = format_path(["parts", number, "toolCallId"], path)
        if kind == "tool-call":
            call_id: str = fields["toolCallId"]
            found = seq.call_position(call_id)
            if call_id in kept or (found is not None and found != position):
                raise ToolPairingError(where, call_id, f"tool call id {call_id!r} is already used")
            kept.add(call_id)
        elif kind == "tool-result":
            call_id = fields["toolCallId"]
            found = seq.call_position(call_id)
            if found is None or found >= position:
                raise ToolPairingError(where, call_id, f"no earlier tool call {call_id!r}")
            other = seq.result_position(call_id)
            if call_id in answered or (other is not None and other != position):
                raise ToolPairingError(
                    where, call_id, f"tool call {call_id!r} already has a result"
                )
            if fields["toolName"] != call_name(seq.at(found), call_id):
                raise ToolPairingError(
                    where, call_id, "the result names another tool than its call"
                )
            answered.add(call_id)
    for part in old["parts"]:
        fields = part
        if fields["type"] == "tool-call" and fields["toolCallId"] not in kept:
            call_id = fields["toolCallId"]
            if seq.result_position(call_id) is not None:
                raise ToolPairingError(
                    format_path(["parts"], path),
                    call_id,
                    f"tool call {call_id!r} has a result, so the update must keep the call",
                )


def finish(history: History, message_id: str, usage: Usage | None) -> History:
    found = _streaming_message(history, message_id)
    if found is None:
        return history
    seq, position, old = found
    recorded = None
    if usage is not None:
        recorded = freeze_json(
            dict(cast("Mapping[str, object]", usage)), history.limits, root="$.usage"
        )
        check_usage(recorded, "$.usage")
    new = with_bookkeeping(old, streaming=None, usage=recorded)
    tail = [new, *seq.iter_from(position + 1)]
    return history._changed(seq.rewrite(position, tail))  # pyright: ignore[reportPrivateUsage]


def cancel(history: History, message_id: str) -> History:
    if _streaming_message(history, message_id) is None:
        return history
    return remove_message(history, message_id, streaming=True)


def _streaming_message(history: History, message_id: str) -> tuple[Seq, int, Message] | None:
    """The history's messages, the position and the message with this id, if it is
    streaming."""
    seq = history._seq  # pyright: ignore[reportPrivateUsage]
    position = seq.position(message_id) if type(message_id) is str else None
    if position is None:
        return None
    message = seq.at(position)
    return (seq, position, message) if is_streaming(message) else None
