"""The helper methods of :class:`~ai_chat.history.History`: each returns a new history.

They are methods (as ``str.replace`` and ``datetime.replace`` are) so that a value's
operations are found on it and calls chain; this module holds them apart from the value
itself (``_history``), and the code behind each lives by concept in ``_edits`` and
``_streaming``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime
from typing import TYPE_CHECKING, cast

from .._types import Part, Role, Usage
from . import _edits, _streaming

if TYPE_CHECKING:
    from ._history import History

__all__ = ["Helpers"]


def _this(helpers: Helpers) -> History:
    return cast("History", helpers)


class Helpers:
    """The helpers of :class:`~ai_chat.history.History` (its only subclass)."""

    __slots__ = ()

    def append(self, message: object, *, created_at: datetime | None = None) -> History:
        """This history with ``message`` (any normalized message, or JSON for one) at the
        end; see :meth:`extend`."""
        return _edits.extend(_this(self), (message,), created_at)

    def extend(self, messages: Iterable[object], *, created_at: datetime | None = None) -> History:
        """This history with ``messages`` at the end, checked as one batch.

        Each goes through the JSON boundary and the invariants (only the new messages
        are checked); each without a creation time gets ``created_at`` (default: now).

        Raises:
            ValidationError: not a message; :class:`DuplicateIdError`,
                :class:`ToolPairingError` (paths are into the batch: ``$[1].id``).
            LimitExceededError: a message exceeds the history's ``limits``.
        """
        return _edits.extend(_this(self), tuple(messages), created_at)

    def append_user(
        self,
        text: str,
        *,
        metadata: Mapping[str, object] | None = None,
        id: str | None = None,
        created_at: datetime | None = None,
    ) -> History:
        """This history with a user message of one text part at the end (``id`` from
        the env unless given). Raises as :meth:`extend` does."""
        return _edits.append_text(_this(self), "user", text, metadata, id, created_at)

    def append_system(
        self,
        text: str,
        *,
        metadata: Mapping[str, object] | None = None,
        id: str | None = None,
        created_at: datetime | None = None,
    ) -> History:
        """This history with a system message at the end (see :meth:`prepend_system`
        for providers that take system messages only first)."""
        return _edits.append_text(_this(self), "system", text, metadata, id, created_at)

    def append_assistant(
        self,
        text: str = "",
        *,
        tool_calls: Iterable[Mapping[str, object]] = (),
        metadata: Mapping[str, object] | None = None,
        id: str | None = None,
        created_at: datetime | None = None,
    ) -> History:
        """This history with an assistant message: a text part (unless ``text`` is
        empty), then one ``tool-call`` part per item of ``tool_calls``
        (``{"toolCallId", "toolName", "input"}``). Raises as :meth:`extend` does."""
        return _edits.append_assistant(
            _this(self), text, tuple(tool_calls), metadata, id, created_at
        )

    def append_tool_result(
        self,
        tool_call_id: str,
        output: object,
        *,
        is_error: bool = False,
        id: str | None = None,
        created_at: datetime | None = None,
    ) -> History:
        """This history with a tool message answering call ``tool_call_id`` (the tool's
        name is the call's). Raises :class:`ToolPairingError` for an unknown or
        answered call, ValidationError for an output that is not JSON."""
        results = ({"toolCallId": tool_call_id, "output": output, "isError": is_error},)
        return _edits.append_tool_results(_this(self), results, id, created_at)

    def append_tool_results(
        self,
        results: Iterable[Mapping[str, object]],
        *,
        id: str | None = None,
        created_at: datetime | None = None,
    ) -> History:
        """This history with one tool message answering several calls:
        ``{"toolCallId", "output", "isError"?}`` each. Raises as
        :meth:`append_tool_result` does."""
        return _edits.append_tool_results(_this(self), tuple(results), id, created_at)

    def update_message(
        self,
        message_id: str,
        *,
        parts: Sequence[Part | Mapping[str, object]] | None = None,
        metadata: Mapping[str, object] | None = None,
    ) -> History:
        """This history with the message's parts and/or metadata replaced.

        Its id, role, position, bookkeeping (``metadata.aiChat``: creation time, hidden,
        usage) and tool call and result ids (with their tool names) are kept: the new
        parts must hold the same ones. An unknown id returns this history.

        Raises:
            ValidationError: the parts are not valid for the role, or ``metadata`` holds
                the reserved key ``aiChat``; :class:`ToolPairingError` for changed tool ids.
            StreamingMessageError: the message is streaming (use :meth:`update_streaming`).
        """
        return _edits.update_message(_this(self), message_id, parts, metadata)

    def remove_message(self, message_id: str) -> History:
        """This history without the message; when it holds tool calls, their results go
        too (a tool message left empty goes), so no result is left without its call.
        An unknown id returns this history.

        Raises:
            StreamingMessageError: the message is streaming (use :meth:`cancel_streaming`).
        """
        return _edits.remove_message(_this(self), message_id)

    def set_hidden(self, message_id: str, hidden: bool = True) -> History:
        """This history with the message hidden from people (or shown again). An unknown
        id, or no change, returns this history."""
        return _edits.set_hidden(_this(self), message_id, hidden)

    def replace_tool_result(
        self, tool_call_id: str, output: object, *, is_error: bool = False
    ) -> History:
        """This history with the result of call ``tool_call_id`` replaced (in place: same
        message, same position). A call without a result, or an unknown one, returns
        this history.

        Raises:
            ValidationError: ``output`` is not JSON.
        """
        return _edits.replace_tool_result(_this(self), tool_call_id, output, is_error)

    def prepend_system(
        self,
        text: str,
        *,
        metadata: Mapping[str, object] | None = None,
        id: str | None = None,
        created_at: datetime | None = None,
    ) -> History:
        """This history with a system message first. O(n)."""
        return _edits.prepend_system(_this(self), text, metadata, id, created_at)

    def replace_system(self, text: str) -> History:
        """This history with the first system message's text replaced (id, position and
        bookkeeping kept), or with one prepended when there is none."""
        return _edits.replace_system(_this(self), text)

    def collapse_system(self) -> History:
        """This history with every system message merged into the first: its text parts,
        then the others' parts not already there, in order; the others removed. With at
        most one system message, this history."""
        return _edits.collapse_system(_this(self))

    # --- streaming messages (see _streaming) ------------------------------------------

    def start_streaming(
        self,
        *,
        role: Role = "assistant",
        parts: Sequence[Part | Mapping[str, object]] = (),
        metadata: Mapping[str, object] | None = None,
        id: str | None = None,
        created_at: datetime | None = None,
    ) -> tuple[History, str]:
        """This history with a new streaming message at the end, and the message's id.

        Until :meth:`finish_streaming` or :meth:`cancel_streaming`, the message is left
        out of :meth:`request_messages` and only the streaming helpers change it.
        Raises as :meth:`extend` does.
        """
        return _streaming.start(_this(self), role, parts, metadata, id, created_at)

    def update_streaming(
        self,
        message_id: str,
        parts: Sequence[Part | Mapping[str, object]],
        *,
        metadata: Mapping[str, object] | None = None,
    ) -> History:
        """This history with the streaming message's parts (and metadata) replaced.

        A message that is not streaming (finished, cancelled or unknown) is left alone:
        a late delta after a stop is a no-op and returns this history.

        Raises:
            ValidationError: the parts are not valid for the role or break tool pairing.
        """
        return _streaming.update(_this(self), message_id, parts, metadata)

    def finish_streaming(self, message_id: str, *, usage: Usage | None = None) -> History:
        """This history with the streaming message ended (kept as it is, with ``usage``
        recorded when given). Not streaming or unknown: this history."""
        return _streaming.finish(_this(self), message_id, usage)

    def cancel_streaming(self, message_id: str) -> History:
        """This history without the streaming message (and the results of its calls).
        Not streaming or unknown: this history."""
        return _streaming.cancel(_this(self), message_id)
