"""Cutting a history at a position: rewind (drop the newest) and truncate (drop the oldest).

Which helper drops which end:

=============================================  ====================================  ======
Goal                                           Helper                                Drops
=============================================  ====================================  ======
Fit a context window                           ``fit_to_tokens``, ``recent_messages``  Oldest
Keep only the tail from a point onwards        ``truncate_from_position``            Oldest
Undo a branch (edit-and-resend, regenerate)    ``rewind_before_position``,           Newest
                                               ``rewind_before_message``
=============================================  ====================================  ======

Each returns a new history with positions counted from zero again and its ids, times and
indexes consistent; a cut that changes nothing returns the history itself. A history
never holds a tool result without its call, so the oldest-dropping helpers always drop
the results of the calls they drop; the rewind helpers drop a tool call whose result is
cut off with it (the pair goes whole), or with ``keep_tool_pairs=False`` cut strictly
and leave the call pending.
"""

# pyright: reportUnknownVariableType=false, reportUnknownMemberType=false, reportUnknownArgumentType=false

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .._errors import ConfigurationError
from .._types import Message
from ._edits import without_results
from ._sequence import Seq

if TYPE_CHECKING:
    from ._history import History

__all__ = [
    "recent_messages",
    "rewind_before_message",
    "rewind_before_position",
    "truncate_from_position",
]


def _position_arg(position: int) -> int:
    if type(position) is not int or position < 0:
        raise ConfigurationError("position", position, "an int of 0 or more")
    return position


def rewind_before_position(
    history: History, position: int, *, keep_tool_pairs: bool = True
) -> History:
    """The history without the message at ``position`` and everything after it.

    With ``keep_tool_pairs`` (the default), a call before the cut whose result is cut
    off goes too, with its whole message (and so on, until no pair straddles the cut);
    otherwise the cut is strict and such a call is left pending. A position at or past
    the end returns the history itself.

    Raises:
        ConfigurationError: ``position`` is not an int of 0 or more.
    """
    cut = _position_arg(position)
    seq = history._seq  # pyright: ignore[reportPrivateUsage]
    if cut >= len(seq):
        return history
    if keep_tool_pairs:
        _, calls, answers = seq.tool_pairs()
        pairs = sorted(zip(answers, calls, strict=True), reverse=True)
        moved = True
        while moved:  # each pass moves the cut earlier; at most one pass per call
            moved = False
            for answer, call in pairs:
                if answer < cut:
                    break  # sorted by answer: the rest are answered before the cut
                if call < cut:
                    cut, moved = call, True
    return history._changed(seq.rewrite(cut, ()))  # pyright: ignore[reportPrivateUsage]


def rewind_before_message(
    history: History, message_id: str, *, keep_tool_pairs: bool = True
) -> History:
    """:func:`rewind_before_position` at the message with ``message_id`` (the message
    being edited, or the answer being regenerated); an unknown id returns the history
    itself."""
    position = history.position(message_id)
    if position is None:
        return history
    return rewind_before_position(history, position, keep_tool_pairs=keep_tool_pairs)


def truncate_from_position(history: History, position: int, *, keep_system: bool = True) -> History:
    """The history from ``position`` on: the messages before it dropped, except system
    messages (with ``keep_system``) and streaming messages, which stay in front.

    Results whose calls are dropped are dropped too (a history holds no result without
    its call; a tool message left empty goes). A position of 0 returns the history
    itself. The kept messages may start with something a provider refuses as a first
    message (an assistant message): :func:`~ai_chat.history.check` reports it, and
    :func:`~ai_chat.history.fit_to_tokens` always cuts at a user message.

    Raises:
        ConfigurationError: ``position`` is not an int of 0 or more.
    """
    cut = _position_arg(position)
    seq = history._seq  # pyright: ignore[reportPrivateUsage]
    if cut == 0:
        return history
    cut = min(cut, len(seq))
    messages = seq.messages()
    streaming = seq.streaming_positions()
    head = [
        p for p in range(cut) if (keep_system and messages[p]["role"] == "system") or p in streaming
    ]
    dropped_calls = {
        part["toolCallId"]
        for p in range(cut)
        if p not in streaming
        for part in _parts(messages[p])
        if part["type"] == "tool-call"
    }
    orphaned = {
        call_id
        for call_id in dropped_calls
        if (at := seq.result_position(call_id)) is not None and at >= cut
    }
    if not orphaned:
        return history._changed(seq.keep(head, cut))  # pyright: ignore[reportPrivateUsage]
    kept: list[Message] = [messages[p] for p in head]
    kept.extend(without_results(list(messages[cut:]), orphaned))
    return history._changed(Seq.of(kept))  # pyright: ignore[reportPrivateUsage]


def recent_messages(history: History, count: int, *, keep_system: bool = True) -> History:
    """The history with only its last ``count`` non-system messages (and, with
    ``keep_system``, every system message): :func:`truncate_from_position` at the
    position where they start.

    Raises:
        ConfigurationError: ``count`` is not an int of 0 or more.
    """
    if type(count) is not int or count < 0:
        raise ConfigurationError("count", count, "an int of 0 or more")
    messages = history.messages
    position = len(messages)
    seen = 0
    while position > 0 and seen < count:
        position -= 1
        if messages[position]["role"] != "system":
            seen += 1
    if seen < count:
        position = 0  # fewer than count: all of them
    return truncate_from_position(history, position, keep_system=keep_system)


def _parts(message: Message) -> Any:
    return message["parts"]
