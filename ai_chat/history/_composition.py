"""System-prompt composition: sections (heading and content), included when their
conditions hold for the request at hand.

Rendering is pure and synchronous. The seed's ``render`` is async so that a section's
content function may await; here, fetch what the prompt needs first and pass it in the
context's ``variables`` (or close over it): the composer then stays a function of its
input, testable without an event loop, and never does I/O behind the caller's back.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Mapping
from dataclasses import dataclass, field, replace
from typing import Literal, TypeAlias, cast

from .._errors import ConfigurationError
from .._types import ChatRequest, ToolDefinition
from ..limits import FrozenDict, JSONObject, JSONValue, freeze_json
from ._templates import InstructionTemplate, MissingVariable, MissingVariableError

__all__ = [
    "Condition",
    "InstructionComposer",
    "InstructionContext",
    "InstructionSection",
    "create_test_instruction_context",
    "when_any_tool_available",
    "when_metadata",
    "when_metadata_present",
    "when_step",
    "when_tools_available",
]

_EMPTY: JSONObject = FrozenDict()
_NO_VARIABLES: Mapping[str, str] = FrozenDict()


@dataclass(frozen=True, slots=True)
class InstructionContext:
    """What conditions and templates see when instructions are rendered.

    Attributes:
        step: the model call's index in the current turn (0 for the first call, 1 after
            the first round of tool calls...).
        tools: the names of the tools the model can call.
        metadata: application values to branch on (JSON, frozen).
        variables: template values, ``{{name}}`` -> text.

    Raises:
        ConfigurationError: ``step`` is not a non-negative ``int``, ``tools`` is not a
            frozenset of names, or a variable is not a ``str``.
        ValidationError: ``metadata`` is not a JSON object.
    """

    step: int = 0
    tools: frozenset[str] = frozenset()
    metadata: JSONObject = _EMPTY
    variables: Mapping[str, str] = _NO_VARIABLES

    def __post_init__(self) -> None:
        if type(self.step) is not int or self.step < 0:
            raise ConfigurationError("step", self.step, "a non-negative int")
        tools = cast(object, self.tools)
        if not isinstance(tools, frozenset) or any(
            type(name) is not str for name in cast("frozenset[object]", tools)
        ):
            raise ConfigurationError("tools", self.tools, "a frozenset of tool names")
        metadata = freeze_json(self.metadata)
        if not isinstance(metadata, Mapping):
            raise ConfigurationError("metadata", self.metadata, "a JSON object")
        object.__setattr__(self, "metadata", metadata)
        variables = dict(self.variables)
        for name, value in variables.items():
            if type(value) is not str:
                raise ConfigurationError(f"variables[{name!r}]", value, "a str")
        object.__setattr__(self, "variables", FrozenDict(variables))

    @classmethod
    def from_request(
        cls,
        request: ChatRequest,
        *,
        step: int = 0,
        metadata: JSONObject = _EMPTY,
        variables: Mapping[str, str] = _NO_VARIABLES,
    ) -> InstructionContext:
        """A context whose tools are the request's."""
        tools = frozenset(tool["name"] for tool in request["tools"])
        return cls(step=step, tools=tools, metadata=metadata, variables=variables)


def create_test_instruction_context(
    *,
    step: int = 0,
    tools: Iterable[str | ToolDefinition] = (),
    metadata: Mapping[str, object] | None = None,
    variables: Mapping[str, str] | None = None,
) -> InstructionContext:
    """A context from plain values, for tests and examples.

    ``tools`` may be names or tool definitions; ``metadata`` any JSON-compatible mapping
    (lists and dicts are frozen). Every argument has a neutral default: step 0, no tools,
    no metadata, no variables.

    Raises:
        ConfigurationError: as :class:`InstructionContext` does.
        ValidationError: ``metadata`` is not JSON.
    """
    names = frozenset(tool if isinstance(tool, str) else tool["name"] for tool in tools)
    frozen = freeze_json(dict(metadata or {}))
    return InstructionContext(
        step=step,
        tools=names,
        metadata=cast(JSONObject, frozen),
        variables=variables or _NO_VARIABLES,
    )


Condition: TypeAlias = Callable[[InstructionContext], bool]
"""A predicate over the context; a section is included when all of its conditions hold."""


@dataclass(frozen=True, slots=True)
class InstructionSection:
    """One section of a system prompt.

    ``content`` is literal text, an :class:`InstructionTemplate` (rendered with the
    context's variables) or a function of the context. A section whose content renders
    empty (or only whitespace) is left out, heading included. ``heading`` ``None``
    renders the content alone.
    """

    heading: str | None
    content: str | InstructionTemplate | Callable[[InstructionContext], str]
    conditions: tuple[Condition, ...] = field(default=())

    def applies(self, context: InstructionContext) -> bool:
        """Whether every condition holds for ``context``."""
        return all(condition(context) for condition in self.conditions)


@dataclass(frozen=True, slots=True)
class _StepIn:
    steps: Collection[int]

    def __call__(self, context: InstructionContext) -> bool:
        return context.step in self.steps


@dataclass(frozen=True, slots=True)
class _ToolsAvailable:
    names: frozenset[str]
    mode: Literal["all", "any"]

    def __call__(self, context: InstructionContext) -> bool:
        if self.mode == "all":
            return self.names <= context.tools
        return bool(context.tools) if not self.names else not self.names.isdisjoint(context.tools)


def _same_json(left: JSONValue, right: JSONValue) -> bool:
    # JSON equality: true is not 1, as Python's == would have it.
    if type(left) is bool or type(right) is bool:
        return type(left) is type(right) and left == right
    if isinstance(left, Mapping) and isinstance(right, Mapping):
        return left.keys() == right.keys() and all(
            _same_json(value, right[key]) for key, value in left.items()
        )
    if isinstance(left, tuple) and isinstance(right, tuple):
        return len(left) == len(right) and all(map(_same_json, left, right))
    return type(left) is not tuple and not isinstance(left, Mapping) and left == right


@dataclass(frozen=True, slots=True)
class _MetadataIs:
    key: str
    value: JSONValue

    def __call__(self, context: InstructionContext) -> bool:
        return self.key in context.metadata and _same_json(context.metadata[self.key], self.value)


@dataclass(frozen=True, slots=True)
class _MetadataPresent:
    key: str

    def __call__(self, context: InstructionContext) -> bool:
        return self.key in context.metadata


def _adding(section: InstructionSection, condition: Condition) -> InstructionSection:
    given = cast(object, section)
    if not isinstance(given, InstructionSection):
        raise ConfigurationError("section", section, "an InstructionSection")
    return replace(section, conditions=(*section.conditions, condition))


def when_step(step: int | Collection[int], section: InstructionSection) -> InstructionSection:
    """``section``, included only at ``step`` (an int, or a collection such as ``range(3)``).

    Conditions add up: ``when_step(0, when_metadata("mode", "strict", section))`` needs
    both.

    Raises:
        ConfigurationError: ``step`` is neither an int nor a collection.
    """
    if type(step) is int:
        return _adding(section, _StepIn((step,)))
    if isinstance(step, Collection) and not isinstance(step, str):
        return _adding(section, _StepIn(step))
    raise ConfigurationError("step", step, "an int or a collection of ints")


def _tool_names(names: Iterable[str]) -> frozenset[str]:
    if isinstance(names, str):
        raise ConfigurationError("names", names, "an iterable of tool names, not one str")
    chosen = frozenset(names)
    if any(type(name) is not str for name in cast("frozenset[object]", chosen)):
        raise ConfigurationError("names", names, "tool names")
    return chosen


def when_tools_available(names: Iterable[str], section: InstructionSection) -> InstructionSection:
    """``section``, included only when every one of the named tools is available.

    Raises:
        ConfigurationError: ``names`` is empty or holds something other than names.
    """
    chosen = _tool_names(names)
    if not chosen:
        raise ConfigurationError("names", names, "at least one tool name")
    return _adding(section, _ToolsAvailable(chosen, "all"))


def when_any_tool_available(
    section: InstructionSection, *, names: Iterable[str] | None = None
) -> InstructionSection:
    """``section``, included when any of the named tools is available (any tool at
    all when ``names`` is ``None``).

    Raises:
        ConfigurationError: ``names`` holds something other than names.
    """
    chosen = frozenset[str]() if names is None else _tool_names(names)
    if names is not None and not chosen:
        raise ConfigurationError("names", names, "at least one tool name, or None")
    return _adding(section, _ToolsAvailable(chosen, "any"))


def when_metadata(key: str, value: object, section: InstructionSection) -> InstructionSection:
    """``section``, included only when ``metadata[key]`` equals ``value`` as JSON
    (``True`` is not ``1``).

    Raises:
        ValidationError: ``value`` is not JSON.
    """
    return _adding(section, _MetadataIs(key, freeze_json(value)))


def when_metadata_present(key: str, section: InstructionSection) -> InstructionSection:
    """``section``, included only when ``metadata`` has ``key`` (whatever its value,
    ``None`` included)."""
    return _adding(section, _MetadataPresent(key))


class InstructionComposer:
    """Renders sections into one system prompt, in order.

    Each included section renders as a Markdown heading of ``heading_level`` (``## Role``)
    on its own line, then its content; sections are joined by ``separator``.
    ``missing`` is what templates do with a variable the context lacks (see
    :data:`MissingVariable`).

    Raises:
        ConfigurationError: a section is not an :class:`InstructionSection`,
            ``heading_level`` is not 1 to 6, or ``missing`` is not a strategy.
    """

    __slots__ = ("_level", "_missing", "_sections", "_separator")

    def __init__(
        self,
        sections: Iterable[InstructionSection],
        *,
        heading_level: int = 2,
        separator: str = "\n\n",
        missing: MissingVariable = "raise",
    ) -> None:
        chosen = tuple(sections)
        for section in chosen:
            given = cast(object, section)
            if not isinstance(given, InstructionSection):
                raise ConfigurationError("sections", section, "InstructionSection values")
        if type(heading_level) is not int or not 1 <= heading_level <= 6:
            raise ConfigurationError("heading_level", heading_level, "an int from 1 to 6")
        if missing not in ("raise", "leave", "empty"):
            raise ConfigurationError("missing", missing, "'raise', 'leave' or 'empty'")
        self._sections = chosen
        self._level = heading_level
        self._separator = separator
        self._missing: MissingVariable = missing

    @property
    def sections(self) -> tuple[InstructionSection, ...]:
        """The sections, in order."""
        return self._sections

    def variables(self) -> tuple[str, ...]:
        """The variables the template sections use, each once, in order."""
        names: dict[str, None] = {}
        for section in self._sections:
            if isinstance(section.content, InstructionTemplate):
                names.update(dict.fromkeys(section.content.variables))
        return tuple(names)

    def render(self, context: InstructionContext | None = None) -> str:
        """The system prompt for ``context`` (a default context when ``None``).

        Raises:
            MissingVariableError: a template variable has no value (``missing="raise"``);
                ``section`` names the section.
            ConfigurationError: a content function returned something other than a str.
        """
        context = context or InstructionContext()
        blocks: list[str] = []
        for section in self._sections:
            if not section.applies(context):
                continue
            body = self._content(section, context)
            if not body.strip():
                continue
            if section.heading is None:
                blocks.append(body)
            else:
                blocks.append(f"{'#' * self._level} {section.heading}\n{body}")
        return self._separator.join(blocks)

    def _content(self, section: InstructionSection, context: InstructionContext) -> str:
        content = section.content
        if isinstance(content, str):
            return content
        if isinstance(content, InstructionTemplate):
            try:
                return content.render(context.variables, missing=self._missing)
            except MissingVariableError as exc:
                raise MissingVariableError(
                    exc.variable, exc.source, exc.position, exc.given, section=section.heading
                ) from None
        body = content(context)
        if type(body) is not str:
            raise ConfigurationError(
                f"the content of section {section.heading!r}", body, "a function returning a str"
            )
        return body

    def __repr__(self) -> str:
        return f"InstructionComposer({len(self._sections)} sections)"
