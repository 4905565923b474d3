"""Conversation history: an immutable, JSON-safe :class:`History` and pure helpers over it.

A history's messages are ai_chat's normalized messages, so they go into a request as
they are. Its helpers return new histories; :func:`check` reports what each provider
would refuse, :func:`repair` fixes the tool pairing; :class:`Projection` folds a
streaming answer's events onto a history, and :class:`AnswerFold` folds them into the
answer's messages. Redaction (:class:`Redactor`, :func:`redact_text`) replaces personal
data and credentials with stable placeholders; instruction templates
(:class:`InstructionTemplate`, :class:`InstructionComposer`) compose system prompts.
See the guide, docs/history/index.md.
"""

from ._bookkeeping import BOOKKEEPING_KEY, Bookkeeping, bookkeeping
from ._check import check
from ._composition import (
    Condition,
    InstructionComposer,
    InstructionContext,
    InstructionSection,
    create_test_instruction_context,
    when_any_tool_available,
    when_metadata,
    when_metadata_present,
    when_step,
    when_tools_available,
)
from ._detector import Detector, Finding, Rule
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
from ._redaction import (
    RedactionSession,
    Redactor,
    default_detectors,
    redact_message,
    redact_messages,
    redact_text,
)
from ._repair import UNANSWERED_OUTPUT, Change, Repair, repair
from ._report import PROVIDERS, CheckReport, Problem, Provider
from ._templates import (
    InstructionTemplate,
    MissingVariable,
    MissingVariableError,
    TemplateSyntaxError,
    extract_template_variables,
    render_template,
)
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
    "Condition",
    "Detector",
    "DuplicateIdError",
    "Finding",
    "History",
    "HistoryEnv",
    "HistoryError",
    "InstructionComposer",
    "InstructionContext",
    "InstructionSection",
    "InstructionTemplate",
    "IntegrityError",
    "MissingVariable",
    "MissingVariableError",
    "Problem",
    "Projection",
    "Provider",
    "RedactionSession",
    "Redactor",
    "Repair",
    "Rule",
    "Statistics",
    "StreamingMessageError",
    "TemplateSyntaxError",
    "ToolInteraction",
    "ToolPairingError",
    "bookkeeping",
    "check",
    "create_test_instruction_context",
    "default_detectors",
    "extract_template_variables",
    "message_text",
    "project",
    "redact_message",
    "redact_messages",
    "redact_text",
    "render_template",
    "repair",
    "when_any_tool_available",
    "when_metadata",
    "when_metadata_present",
    "when_step",
    "when_tools_available",
]
