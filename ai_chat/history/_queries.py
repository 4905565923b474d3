"""What a history holds, read without changing it: statistics, search, tool interactions."""

# pyright: reportUnknownVariableType=false, reportUnknownMemberType=false, reportUnknownArgumentType=false

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, cast

from .._errors import ConfigurationError
from .._types import Message, Role, ToolCallPart, ToolResultPart
from ..limits import FrozenDict
from ._bookkeeping import is_hidden, is_streaming
from ._sequence import Seq

__all__ = [
    "Statistics",
    "ToolInteraction",
    "message_text",
    "pending_tool_calls",
    "request_messages",
    "search",
    "statistics",
    "system_messages",
    "tool_interactions",
    "visible",
]

_ROLES = ("system", "user", "assistant", "tool")


@dataclass(frozen=True, slots=True)
class Statistics:
    """Counts over a history's messages (see :meth:`History.statistics`).

    Attributes:
        messages: how many messages.
        by_role: how many of each role (every role present, 0 included).
        hidden: how many are hidden.
        streaming: how many are streaming.
        tool_calls: how many tool-call parts.
        tool_results: how many tool-result parts.
        pending_tool_calls: calls without a result.
        files: how many file parts.
        characters: characters of text and reasoning parts.
    """

    messages: int
    by_role: Mapping[Role, int]
    hidden: int
    streaming: int
    tool_calls: int
    tool_results: int
    pending_tool_calls: int
    files: int
    characters: int


@dataclass(frozen=True, slots=True)
class ToolInteraction:
    """One tool call and its result (see :meth:`History.tool_interactions`).

    Attributes:
        call: the ``tool-call`` part.
        call_message_id: the id of the assistant message holding it.
        result: the ``tool-result`` part, or ``None`` while the call is pending.
        result_message_id: the id of the tool message holding it, or ``None``.
    """

    call: ToolCallPart
    call_message_id: str
    result: ToolResultPart | None
    result_message_id: str | None

    @property
    def pending(self) -> bool:
        """Whether the call has no result yet."""
        return self.result is None


def statistics(seq: Seq) -> Statistics:
    counts = dict.fromkeys(_ROLES, 0)
    hidden = streaming = calls = results = files = characters = 0
    for message in seq.messages():
        counts[message["role"]] += 1
        if "metadata" in message:
            hidden += is_hidden(message)
            streaming += is_streaming(message)
        for part in message["parts"]:
            fields: Any = part
            kind = fields["type"]
            if kind == "text" or kind == "reasoning":
                characters += len(fields["text"])
            elif kind == "tool-call":
                calls += 1
            elif kind == "tool-result":
                results += 1
            elif kind == "file":
                files += 1
    return Statistics(
        messages=len(seq),
        by_role=cast("Mapping[Role, int]", FrozenDict(counts)),
        hidden=hidden,
        streaming=streaming,
        tool_calls=calls,
        tool_results=results,
        pending_tool_calls=calls - results,  # a history never holds a result without its call
        files=files,
        characters=characters,
    )


def search(
    seq: Seq,
    query: str | Callable[[Message], bool],
    roles: Iterable[Role] | None,
    case_sensitive: bool,
) -> tuple[Message, ...]:
    wanted = None if roles is None else frozenset(roles)
    if wanted is not None and not wanted <= set(_ROLES):
        raise ConfigurationError("roles", roles, "roles among system, user, assistant, tool")
    if isinstance(query, str):
        needle = query if case_sensitive else query.casefold()

        def matches(message: Message) -> bool:
            for part in message["parts"]:
                fields: Any = part
                if fields["type"] == "text" or fields["type"] == "reasoning":
                    text: str = fields["text"]
                    if needle in (text if case_sensitive else text.casefold()):
                        return True
            return False

        predicate = matches
    elif callable(query):
        predicate = query
    else:
        raise ConfigurationError("query", query, "a str or a function of a message")
    return tuple(
        message
        for message in seq.messages()
        if (wanted is None or message["role"] in wanted) and predicate(message)
    )


def message_text(message: Message) -> str:
    """The text of a message: its text parts joined (reasoning, tool parts, files and data
    left out)."""
    return "".join(cast(Any, p)["text"] for p in message["parts"] if p["type"] == "text")


def _find_part(message: Message, kind: str, call_id: str) -> Any:
    for part in message["parts"]:
        fields: Any = part
        if fields["type"] == kind and fields["toolCallId"] == call_id:
            return fields
    raise AssertionError(f"no {kind} {call_id!r} in {message['id']!r}")  # pragma: no cover


def tool_interactions(seq: Seq) -> tuple[ToolInteraction, ...]:
    out: list[ToolInteraction] = []
    for call_id, position in seq.call_positions():
        call_message = seq.at(position)
        result_position = seq.result_position(call_id)
        result_message = None if result_position is None else seq.at(result_position)
        out.append(
            ToolInteraction(
                call=_find_part(call_message, "tool-call", call_id),
                call_message_id=call_message["id"],
                result=None
                if result_message is None
                else _find_part(result_message, "tool-result", call_id),
                result_message_id=None if result_message is None else result_message["id"],
            )
        )
    return tuple(out)


def pending_tool_calls(seq: Seq) -> tuple[ToolCallPart, ...]:
    return tuple(
        _find_part(seq.at(position), "tool-call", call_id)
        for call_id, position in seq.call_positions()
        if seq.result_position(call_id) is None
    )


def visible(seq: Seq) -> tuple[Message, ...]:
    return tuple(m for m in seq.messages() if "metadata" not in m or not is_hidden(m))


def request_messages(seq: Seq) -> tuple[Message, ...]:
    messages = seq.messages()
    if not any("metadata" in m and is_streaming(m) for m in messages):
        return messages
    return tuple(m for m in messages if "metadata" not in m or not is_streaming(m))


def system_messages(seq: Seq) -> tuple[Message, ...]:
    return tuple(m for m in seq.messages() if m["role"] == "system")
