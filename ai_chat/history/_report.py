"""What :func:`~ai_chat.history.check` returns: problems, and the report holding them."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Final, Literal, TypeAlias

from ._errors import IntegrityError

__all__ = ["PROVIDERS", "CheckReport", "Problem", "Provider"]

Provider: TypeAlias = Literal["openai", "anthropic", "gemini"]
"""A provider whose rules :func:`~ai_chat.history.check` knows."""

PROVIDERS: Final[tuple[Provider, ...]] = ("openai", "anthropic", "gemini")


@dataclass(frozen=True, slots=True)
class Problem:
    """One problem :func:`check` found.

    Attributes:
        code: what kind (``unanswered-tool-call``...; see :func:`check`).
        reason: what is wrong and what to do, in words.
        path: where, as a JSON path into the messages: ``$[12]`` or ``$[12].parts[1]``.
        message_id: the id of that message.
        tool_call_id: the tool call concerned, if any.
        provider: the provider whose rule it is, or ``None`` for a general rule.
    """

    code: str
    reason: str
    path: str
    message_id: str
    tool_call_id: str | None = None
    provider: Provider | None = None


@dataclass(frozen=True, slots=True)
class CheckReport:
    """What :func:`check` found: ``problems`` in the order of the history.

    Attributes:
        problems: every problem found.
        provider: the rules checked: ``None`` (the general ones), a provider's, or
            ``"all"``.
    """

    problems: tuple[Problem, ...]
    provider: Provider | Literal["all"] | None

    @property
    def ok(self) -> bool:
        """Whether no problem was found."""
        return not self.problems

    def __iter__(self) -> Iterator[Problem]:
        return iter(self.problems)

    def __len__(self) -> int:
        return len(self.problems)

    def raise_for_problems(self) -> None:
        """Raise :class:`IntegrityError` (naming the first problem) unless :attr:`ok`."""
        if self.problems:
            raise IntegrityError(self.problems)
