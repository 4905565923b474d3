"""What every provider's request mapping does the same way (pure code, no I/O).

The portable parameters (``temperature``, ``toolChoice``...) become provider fields by
one loop, :meth:`Parameters.map`; ``providerOptions.<provider>`` is read by
:func:`provider_options`, and the options an adapter sets itself are refused alike
(:func:`refuse_reserved`). The messages are :mod:`ai_chat.formats`'s.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final, TypeAlias, cast

from ..._errors import ValidationError
from ..._types import ToolDefinition
from ...formats._export import compact_json
from ...limits import FrozenDict
from ...limits._walk import format_path

__all__ = [
    "HANDLED",
    "Body",
    "Parameters",
    "compact_json",
    "known_parameters",
    "provider_options",
    "refuse_reserved",
    "tool_definition",
]

Body: TypeAlias = dict[str, Any]

# The portable parameters every mapping handles itself (not a field of its own).
HANDLED: Final = frozenset({"model", "toolChoice", "providerOptions"})


def known_parameters(fields: Mapping[str, str]) -> str:
    """The portable parameter names a provider takes, for error messages."""
    return ", ".join(sorted([*fields, *HANDLED]))


@dataclass(frozen=True, slots=True)
class Parameters:
    """How one API takes the portable parameters.

    ``fields``: the parameters it has a field for, and the field's name; ``refused``: the
    ones it cannot take, and why; ``api`` and ``provider`` name it in error messages
    (``providerOptions.<provider>``).
    """

    fields: Mapping[str, str]
    refused: Mapping[str, str]
    api: str
    provider: str

    def map(
        self,
        parameters: Mapping[str, object],
        into: Body,
        *,
        tools: bool,
        tool_choice: Callable[[object], None],
    ) -> None:
        """Set each of ``parameters`` that has a field on ``into``.

        ``toolChoice`` goes to ``tool_choice`` unless there are no tools and it is
        "auto" or "none" (which then mean what no tool choice means; some APIs reject a
        tool choice without tools). A refused parameter raises its reason; one that is
        neither known nor handled raises, naming the known ones.
        """
        fields = self.fields
        for name, value in parameters.items():
            field = fields.get(name)
            if field is not None:
                into[field] = value
            elif name == "toolChoice":
                if tools or value not in ("auto", "none"):
                    tool_choice(value)
            elif name in self.refused:
                raise ValidationError(format_path([name], "$.parameters"), self.refused[name])
            elif name not in HANDLED:
                raise ValidationError(
                    format_path([name], "$.parameters"),
                    f"unknown parameter for {self.api} (known: {known_parameters(fields)}); "
                    f"put provider-specific fields in providerOptions.{self.provider}",
                )

    def map_streaming(
        self,
        parameters: Mapping[str, object],
        into: Body,
        *,
        tools: Sequence[ToolDefinition],
        tool: Callable[[ToolDefinition], Body],
        tool_choice: Callable[[object], object],
    ) -> None:
        """Set ``tools`` (each as ``tool`` gives it) and ``parameters`` on a streaming
        body, then ``"stream": true``.

        ``parameters`` are set as :meth:`map` sets them, with ``toolChoice`` as
        ``tool_choice`` gives it under ``"tool_choice"``.
        """
        if tools:
            into["tools"] = [tool(item) for item in tools]

        def set_tool_choice(value: object) -> None:
            into["tool_choice"] = tool_choice(value)

        self.map(parameters, into, tools=bool(tools), tool_choice=set_tool_choice)
        into["stream"] = True


def tool_definition(tool: ToolDefinition, schema: str, head: Body | None = None) -> Body:
    """A request tool as a provider's function declaration: ``head``'s fields, then
    ``name``, ``description`` (when the tool has one) and its input schema as ``schema``."""
    definition: Body = {**(head or {}), "name": tool["name"]}
    if "description" in tool:
        definition["description"] = tool["description"]
    definition[schema] = tool["inputSchema"]
    return definition


def _named(container: object, provider: str) -> Mapping[str, object]:
    if isinstance(container, Mapping):
        value = cast("Mapping[str, object]", container).get(provider)
        if isinstance(value, Mapping):
            return cast("Mapping[str, object]", value)
    return FrozenDict()


def provider_options(parameters: Mapping[str, object], provider: str) -> Mapping[str, object]:
    """``parameters.providerOptions.<provider>``, empty when there is none."""
    return _named(parameters.get("providerOptions"), provider)


def refuse_reserved(name: str, reserved: Mapping[str, str], path: str) -> None:
    """Raise for a provider option the adapter sets itself (saying what to do instead)."""
    if name in reserved:
        raise ValidationError(path, f"not allowed here: {reserved[name]}")
