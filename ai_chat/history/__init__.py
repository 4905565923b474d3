"""Conversation history: an immutable, JSON-safe :class:`History` and pure helpers over it.

A history's messages are ai_chat's normalized messages, so they go into a request as
they are. Its helpers return new histories; :func:`check` reports what each provider
would refuse, :func:`repair` fixes the tool pairing; :class:`Projection` folds a
streaming answer's events onto a history, and :class:`AnswerFold` folds them into the
answer's messages. Redaction (:class:`Redactor`, :func:`redact_text`) replaces personal
data and credentials with stable placeholders; instruction templates
(:class:`InstructionTemplate`, :class:`InstructionComposer`) compose system prompts.
:func:`public_projection` is what of a history may be shown publicly (user and assistant
text, redacted); :func:`to_markdown` / :func:`from_markdown` write and read it as
lossless Markdown, :func:`to_snapshot` / :func:`from_snapshot` as a versioned snapshot
sealed with a SHA-256 digest (and an HMAC). The context window: :func:`estimate_tokens`
(:class:`HeuristicEstimator` offline, :class:`BPETokenEstimator` exact, :func:`calibrate`
to a provider's counts), :func:`fit_to_tokens` and :func:`compact`.
See the guide, docs/history/index.md.
"""

from ._bookkeeping import BOOKKEEPING_KEY, Bookkeeping, bookkeeping
from ._check import check
from ._compact import Compaction, compact, is_summary
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
    ContextOverflowError,
    DuplicateIdError,
    HistoryError,
    IntegrityError,
    MarkdownError,
    SnapshotError,
    StreamingMessageError,
    ToolPairingError,
)
from ._estimate import (
    DEFAULT_ESTIMATOR,
    AsyncTokenEstimator,
    CalibratedEstimator,
    HeuristicEstimator,
    TokenEstimator,
    aestimate_tokens,
    calibrate,
    estimate_tokens,
)
from ._fit import FitReport, afit_to_tokens, fit_to_tokens
from ._fold import AnswerFold
from ._history import History
from ._markdown import to_markdown
from ._markdown_read import from_markdown
from ._projection import Projection, project
from ._public import public_projection
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
from ._snapshot import SNAPSHOT_VERSION, from_snapshot, to_snapshot
from ._templates import (
    InstructionTemplate,
    MissingVariable,
    MissingVariableError,
    TemplateSyntaxError,
    extract_template_variables,
    render_template,
)
from ._tokenizer import BPETokenEstimator
from ._validate import MESSAGE_LIMITS

__all__ = [
    "BOOKKEEPING_KEY",
    "DEFAULT_ESTIMATOR",
    "MESSAGE_LIMITS",
    "PROVIDERS",
    "SNAPSHOT_VERSION",
    "UNANSWERED_OUTPUT",
    "AnswerFold",
    "AsyncTokenEstimator",
    "BPETokenEstimator",
    "Bookkeeping",
    "CalibratedEstimator",
    "Change",
    "CheckReport",
    "Compaction",
    "Condition",
    "ContextOverflowError",
    "Detector",
    "DuplicateIdError",
    "Finding",
    "FitReport",
    "HeuristicEstimator",
    "History",
    "HistoryEnv",
    "HistoryError",
    "InstructionComposer",
    "InstructionContext",
    "InstructionSection",
    "InstructionTemplate",
    "IntegrityError",
    "MarkdownError",
    "MissingVariable",
    "MissingVariableError",
    "Problem",
    "Projection",
    "Provider",
    "RedactionSession",
    "Redactor",
    "Repair",
    "Rule",
    "SnapshotError",
    "Statistics",
    "StreamingMessageError",
    "TemplateSyntaxError",
    "TokenEstimator",
    "ToolInteraction",
    "ToolPairingError",
    "aestimate_tokens",
    "afit_to_tokens",
    "bookkeeping",
    "calibrate",
    "check",
    "compact",
    "create_test_instruction_context",
    "default_detectors",
    "estimate_tokens",
    "extract_template_variables",
    "fit_to_tokens",
    "from_markdown",
    "from_snapshot",
    "is_summary",
    "message_text",
    "project",
    "public_projection",
    "redact_message",
    "redact_messages",
    "redact_text",
    "render_template",
    "repair",
    "to_markdown",
    "to_snapshot",
    "when_any_tool_available",
    "when_metadata",
    "when_metadata_present",
    "when_step",
    "when_tools_available",
]
