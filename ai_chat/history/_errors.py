"""The errors of ``ai_chat.history``.

Bad input is a :class:`~ai_chat.ValidationError` (also a ``ValueError``), as everywhere
in ai_chat: a value that is not JSON or not a message raises the core class itself, and
the two ways a message can fit the boundary yet not the history have subclasses that
name what collides. An operation that this history cannot do is a :class:`HistoryError`::

    AIChatError
    ├── ValidationError              (ai_chat) not JSON, or not a message
    │   ├── DuplicateIdError         a message id the history already holds
    │   ├── ToolPairingError         a tool result for an unknown or answered call, a
    │   │                            reused tool call id, tool ids changed by an update
    │   ├── MarkdownError            ``from_markdown`` input that is not a history's
    │   │                            Markdown (``line`` says where)
    │   └── SnapshotError            a snapshot that is malformed, truncated, tampered
    │                                with, of an unknown version or not a valid history
    └── HistoryError                 this history cannot do it
        ├── StreamingMessageError    the message is streaming (protected until it ends)
        ├── IntegrityError           ``CheckReport.raise_for_problems()`` found problems
        └── ContextOverflowError     what ``fit_to_tokens`` must keep does not fit

Every one carries ``path``, a JSON path to what is wrong: into the appended messages
(``$[2].parts[0].toolCallId``), into :meth:`History.from_json`'s input
(``$.messages[7].id``) or into the history's messages (``$[12]``). An unknown message
id or tool call id is never an error: the helpers return the history unchanged, so a
stale event handler does no harm.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal, TypeAlias

from .._describe import clip_path
from .._errors import AIChatError, ValidationError

if TYPE_CHECKING:
    from ._report import Problem

__all__ = [
    "ContextOverflowError",
    "DuplicateIdError",
    "HistoryError",
    "IntegrityError",
    "MarkdownError",
    "SnapshotError",
    "SnapshotProblem",
    "StreamingMessageError",
    "ToolPairingError",
]


class DuplicateIdError(ValidationError):
    """A message's id is already used by another message of the history (or of the batch).

    Attributes:
        path: where, such as ``$[0].id``.
        reason: what is wrong, in words.
        message_id: the id in conflict.
    """

    def __init__(self, path: str, message_id: str) -> None:
        self.message_id = message_id
        super().__init__(
            path,
            f"message id {message_id!r} is already in the history; ids are unique "
            "(leave the id out to get a new one)",
        )


class ToolPairingError(ValidationError):
    """A tool call or result that would break the pairing of calls and results.

    Raised for a tool result whose call is not earlier in the history, for a second
    result to a call, for a result naming another tool than its call, for a tool call id
    used twice, and for an update that adds, drops or renames tool calls or results.

    Attributes:
        path: where, such as ``$[0].parts[1].toolCallId``.
        reason: what is wrong, in words.
        tool_call_id: the tool call id concerned.
    """

    def __init__(self, path: str, tool_call_id: str, reason: str) -> None:
        self.tool_call_id = tool_call_id
        super().__init__(path, reason)


class HistoryError(AIChatError):
    """The history cannot do what was asked (the base of the history's own errors).

    Attributes:
        path: the JSON path of the message concerned, such as ``$[12]``.
        reason: what is wrong, in words.
    """

    def __init__(self, path: str, reason: str) -> None:
        self.path = path
        self.reason = reason
        super().__init__(f"{path}: {reason}")


class StreamingMessageError(HistoryError):
    """A helper that must not touch a streaming message was given one.

    A streaming message changes only through the streaming helpers
    (``update_streaming``, ``finish_streaming``, ``cancel_streaming``) until it ends.

    Attributes:
        message_id: the streaming message.
    """

    def __init__(self, path: str, message_id: str, action: str) -> None:
        self.message_id = message_id
        super().__init__(
            path,
            f"message {message_id!r} is streaming and cannot be {action}; finish or cancel "
            "it first (finish_streaming / cancel_streaming)",
        )


class IntegrityError(HistoryError):
    """:meth:`CheckReport.raise_for_problems` found problems.

    Attributes:
        problems: every problem found (the message names the first); ``path`` is the
            first one's.
    """

    def __init__(self, problems: tuple[Problem, ...]) -> None:
        self.problems = problems
        first = problems[0]
        more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
        super().__init__(first.path, f"{first.reason}{more}")


class ContextOverflowError(HistoryError):
    """What :func:`~ai_chat.history.fit_to_tokens` must keep does not fit ``max_tokens``.

    What must be kept: the system messages (with ``keep_system``), the last
    ``keep_last`` messages, any streaming message, and the whole turns they are in. No
    over-budget history is ever returned instead.

    Attributes:
        max_tokens: the budget.
        required: the tokens of the least the history can be cut to.
    """

    def __init__(self, max_tokens: int, required: int, kept: str) -> None:
        self.max_tokens = max_tokens
        self.required = required
        super().__init__(
            "$",
            f"the history cannot fit {max_tokens:,} tokens: {kept} take {required:,}; "
            "raise max_tokens, keep fewer messages (keep_last, keep_system), or compact the "
            "history (compact) first",
        )


class MarkdownError(ValidationError):
    """:func:`~ai_chat.history.from_markdown` was given text that is not a history's Markdown.

    Raised for text without the front matter (such as a transcript written with
    ``metadata=False``, which is for people and is not read back), a line outside any
    block that is not a role heading or a message line, a block that is never closed
    (truncated text), JSON that does not parse, and content that is not a valid history
    (an unknown part type, a tool result without its call...).

    Attributes:
        line: the line (1-based, after line endings are normalized) where the problem is.
        path: the JSON path of the value concerned in the history
            (``$.messages[3].parts[0].toolCallId``), or ``$`` when it is about the text.
        reason: what is wrong, in words.
    """

    def __init__(self, line: int, reason: str, path: str = "$") -> None:
        self.line = line
        self.path = path
        self.reason = reason
        where = f"line {line}" if path == "$" else f"line {line}: {clip_path(path)}"
        AIChatError.__init__(self, f"{where}: {reason}")


SnapshotProblem: TypeAlias = Literal[
    "malformed", "truncated", "format", "version", "kind", "digest", "hmac", "invalid"
]
"""What is wrong with a snapshot (:attr:`SnapshotError.problem`)."""


class SnapshotError(ValidationError):
    """A snapshot that :func:`~ai_chat.history.from_snapshot` refuses.

    Attributes:
        problem: what is wrong: ``"malformed"`` (not a snapshot envelope: not JSON, a
            missing or mistyped field), ``"truncated"`` (the text ends early),
            ``"format"`` (another format), ``"version"`` (a format version this ai_chat
            does not read, or has no migration for), ``"kind"`` (a snapshot of something
            else than what was asked for), ``"digest"`` (the content does not match its
            SHA-256 digest: changed after it was written), ``"hmac"`` (a key was given
            and the signature is missing or does not match), ``"invalid"`` (intact, but
            not a valid history; ``__cause__`` is the history's error).
        path: the JSON path in the envelope (``$.digest``, ``$.payload.messages[2].id``).
        reason: what is wrong, in words.
    """

    def __init__(self, problem: SnapshotProblem, path: str, reason: str) -> None:
        self.problem: SnapshotProblem = problem
        super().__init__(path, reason)
