"""Conversation history helpers: redaction and instruction templates.

Pure functions over values: nothing here does I/O or reads a clock.

Redaction (:func:`redact_text`, :func:`redact_messages`, :class:`Redactor`) replaces
personal data and credentials with placeholders that stay stable per value
(``[EMAIL_1]``); custom :class:`Rule` s and :class:`Detector` s plug in. Instruction
templates (:class:`InstructionTemplate`, :class:`InstructionComposer`) build system
prompts from ``{{variable}}`` templates and conditional sections.
"""

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
from ._redaction import (
    RedactionSession,
    Redactor,
    default_detectors,
    redact_message,
    redact_messages,
    redact_text,
)
from ._templates import (
    InstructionTemplate,
    MissingVariable,
    MissingVariableError,
    TemplateSyntaxError,
    extract_template_variables,
    render_template,
)

__all__ = [
    "Condition",
    "Detector",
    "Finding",
    "InstructionComposer",
    "InstructionContext",
    "InstructionSection",
    "InstructionTemplate",
    "MissingVariable",
    "MissingVariableError",
    "RedactionSession",
    "Redactor",
    "Rule",
    "TemplateSyntaxError",
    "create_test_instruction_context",
    "default_detectors",
    "extract_template_variables",
    "redact_message",
    "redact_messages",
    "redact_text",
    "render_template",
    "when_any_tool_available",
    "when_metadata",
    "when_metadata_present",
    "when_step",
    "when_tools_available",
]
