"""Conversation history: an immutable, JSON-safe :class:`History` and pure helpers over it.

A history's messages are ai_chat's normalized messages, so they go into a request as
they are. Its helpers return new histories; :func:`check` reports what each provider
would refuse, :func:`repair` fixes the tool pairing; :class:`Projection` folds a
streaming answer's events onto a history, and :class:`AnswerFold` folds them into the
answer's messages. See the guide, docs/history/index.md.
"""

from ._bookkeeping import BOOKKEEPING_KEY, Bookkeeping, bookkeeping
from ._check import check
from ._env import HistoryEnv
from ._errors import (
    DuplicateIdError,
    HistoryError,
    IntegrityError,
    StreamingMessageError,
    ToolPairingError,
)
from ._fold import AnswerFold
from ._history import History
from ._projection import Projection, project
from ._queries import Statistics, ToolInteraction, message_text
from ._repair import UNANSWERED_OUTPUT, Change, Repair, repair
from ._report import PROVIDERS, CheckReport, Problem, Provider
from ._validate import MESSAGE_LIMITS

__all__ = [
    "BOOKKEEPING_KEY",
    "MESSAGE_LIMITS",
    "PROVIDERS",
    "UNANSWERED_OUTPUT",
    "AnswerFold",
    "Bookkeeping",
    "Change",
    "CheckReport",
    "DuplicateIdError",
    "History",
    "HistoryEnv",
    "HistoryError",
    "IntegrityError",
    "Problem",
    "Projection",
    "Provider",
    "Repair",
    "Statistics",
    "StreamingMessageError",
    "ToolInteraction",
    "ToolPairingError",
    "bookkeeping",
    "check",
    "message_text",
    "project",
    "repair",
]
