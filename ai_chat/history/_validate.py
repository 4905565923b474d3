"""Messages on their way into a history: the JSON boundary, then the history's invariants.

A history holds only valid normalized messages, and these invariants hold in every
history value (so :meth:`History.from_json` can insist on them):

* message ids are unique;
* a tool call id is used by one tool call;
* every tool result answers a call earlier in the history, names the call's tool, and
  is the only result of that call.

Ordering that a provider may refuse (an unanswered call before the next user message, a
result not right after its call) is not refused here: it is what
:func:`~ai_chat.history.check` reports and :func:`~ai_chat.history.repair` fixes.

Only what is new is checked: each new message against the history's indexes (O(1)
lookups), never the history again.
"""

# pyright: reportUnknownVariableType=false, reportUnknownMemberType=false, reportUnknownArgumentType=false

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Final

from .._errors import LimitExceededError, ValidationError
from .._messages import _normalize  # pyright: ignore[reportPrivateUsage]
from .._types import Message
from ..limits import JSONLimits
from ..limits._walk import format_path
from ._bookkeeping import check_bookkeeping, own_fields, with_bookkeeping
from ._errors import DuplicateIdError, ToolPairingError
from ._sequence import Seq

__all__ = [
    "MESSAGE_LIMITS",
    "call_name",
    "check_invariants",
    "check_new",
    "check_result",
    "normalize_one",
]

MESSAGE_LIMITS: Final = JSONLimits(max_depth=64, max_values=100_000, max_chars=16_000_000)
"""The bounds on each message of a history by default: the conversation stores' bounds on
one appended batch, so that any message of a history can be stored."""


def normalize_one(raw: object, limits: JSONLimits, root: str, index: int) -> Message:
    """One message through :func:`~ai_chat.normalize_messages`, errors at ``root[index]``."""
    try:
        return _normalize((raw,), limits, root)[0]
    except ValidationError as exc:
        if index == 0:
            raise
        raise ValidationError(_moved(exc.path, root, index), exc.reason) from None
    except LimitExceededError as exc:
        if index == 0:
            raise
        raise LimitExceededError(
            _moved(exc.path, root, index), exc.limit, exc.limit_value, exc.observed
        ) from None


def _moved(path: str, root: str, index: int) -> str:
    head = f"{root}[0]"
    return f"{root}[{index}]{path[len(head) :]}" if path.startswith(head) else path


def check_new(
    seq: Seq, batch: Sequence[object], limits: JSONLimits, root: str, stamp: str | None
) -> tuple[Message, ...]:
    """The messages of ``batch``, normalized, checked against ``seq`` and each other.

    Each message lacking a ``metadata.aiChat.createdAt`` gets ``stamp`` (unless it is
    ``None``). Raises ValidationError (DuplicateIdError, ToolPairingError) or
    LimitExceededError with the path of the first problem below ``root``.
    """
    normalized = [normalize_one(raw, limits, root, index) for index, raw in enumerate(batch)]
    return check_invariants(seq, normalized, root, stamp)


def check_invariants(
    seq: Seq, messages: Sequence[Message], root: str, stamp: str | None
) -> tuple[Message, ...]:
    """Normalized ``messages`` checked against ``seq`` and each other (see
    :func:`check_new`): bookkeeping, ids and tool pairing, then stamped."""
    out: list[Message] = []
    ids: set[str] = set()
    calls: dict[str, str] = {}  # new tool call id -> its tool's name
    answered: set[str] = set()
    for index, message in enumerate(messages):
        check_bookkeeping(message, [index], root)
        message_id = message["id"]
        if message_id in ids or seq.position(message_id) is not None:
            raise DuplicateIdError(format_path([index, "id"], root), message_id)
        ids.add(message_id)
        part: Any
        for number, part in enumerate(message["parts"]):
            kind = part["type"]
            if kind == "tool-call":
                call_id: str = part["toolCallId"]
                if call_id in calls or seq.call_position(call_id) is not None:
                    raise ToolPairingError(
                        format_path([index, "parts", number, "toolCallId"], root),
                        call_id,
                        f"tool call id {call_id!r} is already used by another call; each "
                        "call needs an id of its own",
                    )
                calls[call_id] = part["toolName"]
            elif kind == "tool-result":
                check_result(seq, calls, answered, part, [index, "parts", number], root)
        if stamp is not None and "createdAt" not in own_fields(message):
            message = with_bookkeeping(message, createdAt=stamp)
        out.append(message)
    return tuple(out)


def check_result(
    seq: Seq,
    calls: Mapping[str, str],
    answered: set[str],
    part: Any,
    path: list[str | int],
    root: str,
) -> None:
    """Raise ToolPairingError unless ``part`` (a tool result) answers a call of ``seq``
    or ``calls`` (new calls by id, to tool name) not yet answered in ``seq`` or
    ``answered``; then add it to ``answered``."""
    call_id: str = part["toolCallId"]
    where = format_path([*path, "toolCallId"], root)
    name = calls.get(call_id)
    if name is None:
        position = seq.call_position(call_id)
        if position is None:
            raise ToolPairingError(
                where,
                call_id,
                f"tool result for call {call_id!r}, which is not earlier in the history; "
                "append the assistant message holding the call first",
            )
        name = call_name(seq.at(position), call_id)
    if call_id in answered or seq.result_position(call_id) is not None:
        raise ToolPairingError(
            where,
            call_id,
            f"tool call {call_id!r} already has a result; change it with "
            "replace_tool_result() instead of adding another",
        )
    if part["toolName"] != name:
        raise ToolPairingError(
            format_path([*path, "toolName"], root),
            call_id,
            f"the result names tool {part['toolName']!r}, but call {call_id!r} called {name!r}",
        )
    answered.add(call_id)


def call_name(message: Message, call_id: str) -> str:
    """The tool name of the call ``call_id`` in ``message`` (which holds it)."""
    for part in message["parts"]:
        fields: Any = part
        if fields["type"] == "tool-call" and fields["toolCallId"] == call_id:
            return fields["toolName"]
    raise AssertionError(f"{call_id!r} is not in message {message['id']!r}")  # pragma: no cover
