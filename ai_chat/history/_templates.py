"""``{{variable}}`` templates for instructions: parsed once, rendered purely.

The syntax is one construct: ``{{name}}`` (spaces inside the braces allowed), where
``name`` is a Python-style identifier. Any other ``{{`` is a syntax error rather than
text left as it is, so a typo (``{{user name}}``, ``{{userName}``) fails when the
template is made, not in a prompt. Values are inserted as they are and never rendered
again: a value that holds ``{{x}}`` stays that text, so user input cannot reach other
variables.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from functools import lru_cache
from typing import Literal, TypeAlias

from .._errors import AIChatError, ConfigurationError

__all__ = [
    "InstructionTemplate",
    "MissingVariable",
    "MissingVariableError",
    "TemplateSyntaxError",
    "extract_template_variables",
    "render_template",
]

MissingVariable: TypeAlias = Literal["raise", "leave", "empty"]
"""What rendering does with a variable that has no value: raise
:class:`MissingVariableError` (the default), leave the ``{{name}}`` text in place, or put
nothing there."""

_STRATEGIES = ("raise", "leave", "empty")
_VARIABLE = re.compile(r"\{\{[ \t]*([A-Za-z_][A-Za-z0-9_]*)[ \t]*\}\}")
_EXCERPT = 60


def _excerpt(source: str, position: int) -> str:
    start = max(0, position - _EXCERPT // 2)
    text = source[start : start + _EXCERPT]
    return ("..." if start else "") + text + ("..." if start + _EXCERPT < len(source) else "")


class TemplateSyntaxError(AIChatError, ValueError):
    """A template has a ``{{`` that does not open a ``{{name}}`` variable.

    Attributes:
        position: the index of the offending ``{{`` in the template.
        reason: what is wrong, in words.
        source: the template.
    """

    def __init__(self, source: str, position: int, reason: str) -> None:
        self.source = source
        self.position = position
        self.reason = reason
        super().__init__(f"template at {position} ({_excerpt(source, position)!r}): {reason}")


class MissingVariableError(AIChatError, LookupError):
    """Rendering needed a variable that was not given (with ``missing="raise"``).

    Attributes:
        variable: the variable's name.
        source: the template.
        position: where the variable stands in the template.
        given: the names that were given, sorted.
        section: the heading of the instruction section being rendered, if any.
    """

    def __init__(
        self,
        variable: str,
        source: str,
        position: int,
        given: tuple[str, ...],
        section: str | None = None,
    ) -> None:
        self.variable = variable
        self.source = source
        self.position = position
        self.given = given
        self.section = section
        where = f" in section {section!r}" if section is not None else ""
        super().__init__(
            f"template variable {variable!r} has no value{where} (at {position}: "
            f"{_excerpt(source, position)!r}; given: {', '.join(given) or 'none'}); pass "
            "it, or render with missing='leave' or missing='empty'"
        )


class InstructionTemplate:
    """A parsed ``{{variable}}`` template; immutable and hashable.

    Raises:
        TemplateSyntaxError: a ``{{`` does not open a ``{{name}}`` variable.
        ConfigurationError: ``source`` is not a ``str``.
    """

    __slots__ = ("_pieces", "_source", "_variables")

    def __init__(self, source: str) -> None:
        if type(source) is not str:
            raise ConfigurationError("source", source, "a template str")
        # Literal text and (name, position, written form) in order.
        pieces: list[str | tuple[str, int, str]] = []
        position = 0
        while (opening := source.find("{{", position)) >= 0:
            match = _VARIABLE.match(source, opening)
            if match is None:
                closing = source.find("}}", opening + 2)
                reason = (
                    "unclosed '{{'"
                    if closing < 0
                    else f"{source[opening : closing + 2]!r} is not a variable: write "
                    "{{name}} with a name of letters, digits and underscores"
                )
                raise TemplateSyntaxError(source, opening, reason)
            if opening > position:
                pieces.append(source[position:opening])
            pieces.append((match.group(1), opening, match.group()))
            position = match.end()
        if position < len(source):
            pieces.append(source[position:])
        self._source = source
        self._pieces = tuple(pieces)
        self._variables = tuple(
            dict.fromkeys(piece[0] for piece in pieces if isinstance(piece, tuple))
        )

    @property
    def source(self) -> str:
        """The template as written."""
        return self._source

    @property
    def variables(self) -> tuple[str, ...]:
        """The variable names, each once, in order of first appearance."""
        return self._variables

    def render(
        self, variables: Mapping[str, str] | None = None, *, missing: MissingVariable = "raise"
    ) -> str:
        """The template with each ``{{name}}`` replaced by ``variables[name]``.

        Raises:
            MissingVariableError: a variable has no value and ``missing`` is ``"raise"``.
            ConfigurationError: ``missing`` is not a strategy, or a value is not a ``str``.
        """
        if missing not in _STRATEGIES:
            raise ConfigurationError("missing", missing, "'raise', 'leave' or 'empty'")
        values: Mapping[str, str] = variables or {}
        out: list[str] = []
        for piece in self._pieces:
            if isinstance(piece, str):
                out.append(piece)
                continue
            name, position, written = piece
            value = values.get(name)
            if value is None:
                if missing == "raise":
                    raise MissingVariableError(name, self._source, position, tuple(sorted(values)))
                out.append(written if missing == "leave" else "")
            elif type(value) is str:
                out.append(value)
            else:
                raise ConfigurationError(f"variables[{name!r}]", value, "a str")
        return "".join(out)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, InstructionTemplate) and other._source == self._source

    def __hash__(self) -> int:
        return hash(self._source)

    def __repr__(self) -> str:
        return f"InstructionTemplate({self._source!r})"


@lru_cache(maxsize=256)
def _parsed(source: str) -> InstructionTemplate:
    return InstructionTemplate(source)


def _template(template: str | InstructionTemplate) -> InstructionTemplate:
    if isinstance(template, InstructionTemplate):
        return template
    if type(template) is not str:
        raise ConfigurationError("template", template, "a str or an InstructionTemplate")
    return _parsed(template)


def render_template(
    template: str | InstructionTemplate,
    variables: Mapping[str, str] | None = None,
    *,
    missing: MissingVariable = "raise",
) -> str:
    """Render a template (a string is parsed first, and the parse is cached).

    Raises:
        TemplateSyntaxError: the template string is malformed.
        MissingVariableError: a variable has no value and ``missing`` is ``"raise"``.
        ConfigurationError: ``missing`` is not a strategy, or a value is not a ``str``.
    """
    return _template(template).render(variables, missing=missing)


def extract_template_variables(template: str | InstructionTemplate) -> tuple[str, ...]:
    """The names a template uses, each once, in order of first appearance.

    Raises:
        TemplateSyntaxError: the template string is malformed.
    """
    return _template(template).variables
