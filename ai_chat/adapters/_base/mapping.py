"""What every provider's request mapping does the same way (pure code, no I/O).

The portable parameters (``temperature``, ``toolChoice``...) become provider fields by
one loop, :meth:`Parameters.map`; ``providerOptions.<provider>`` is read by
:func:`provider_options`, a part's ``providerMetadata.<provider>`` by
:func:`provider_metadata`; and the messages a request cannot be sent with read alike
for every provider (:func:`unsendable`, :func:`base64_payload`, :func:`refuse_reserved`).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final, TypeAlias, cast

from ..._errors import ValidationError
from ..._types import Message, ToolDefinition
from ...limits import FrozenDict
from ...limits._walk import format_path

__all__ = [
    "HANDLED",
    "Body",
    "Parameters",
    "Parts",
    "base64_payload",
    "compact_json",
    "conversation_turns",
    "known_parameters",
    "late_system_message",
    "output_text",
    "provider_metadata",
    "provider_options",
    "refuse_reserved",
    "tool_definition",
    "unsendable",
    "user_parts",
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


Parts: TypeAlias = tuple[Mapping[str, Any], ...]


def conversation_turns(
    messages: Sequence[Message],
    provider: str,
    *,
    content: str,
    assistant_role: str,
    system_part: Callable[[Mapping[str, Any]], Body],
    tool_result: Callable[[Mapping[str, Any]], Body],
    user: Callable[[Parts, str], list[Body]],
    assistant: Callable[[Parts, str], list[Body]],
) -> tuple[list[Body], list[Body]]:
    """The messages as system parts and turns, for an API that takes the system
    messages apart (so only at the start) and tool results in a user turn.

    A turn is ``{"role", <content>: [...]}``; the parts come from ``system_part``,
    ``tool_result``, ``user`` and ``assistant`` (given the parts and their path), in
    the messages' order. Consecutive tool messages share one user turn.
    """
    system: list[Body] = []
    turns: list[Body] = []
    tool_turn: list[Body] | None = None  # the open user turn of tool results, if any
    for index, message in enumerate(messages):
        role = message["role"]
        parts = cast(Parts, message["parts"])
        root = format_path([index, "parts"], "$.messages")
        if role == "system":
            if turns:
                raise late_system_message(index, provider)
            system.extend(system_part(part) for part in parts)
            continue
        if role == "tool":
            results = [tool_result(part) for part in parts]
            if tool_turn is None:
                tool_turn = results
                turns.append({"role": "user", content: tool_turn})
            else:
                tool_turn.extend(results)
            continue
        tool_turn = None
        if role == "user":
            turns.append({"role": "user", content: user(parts, root)})
        else:
            turns.append({"role": assistant_role, content: assistant(parts, root)})
    return system, turns


def user_parts(
    parts: Parts,
    root: str,
    api: str,
    *,
    text: Callable[[str], Body],
    file: Callable[[Mapping[str, Any], int, str], Body],
) -> list[Body]:
    """A user message's parts, at ``root``: each text as ``text`` gives it, each file as
    ``file`` gives it (from the part, its position and its path); another kind raises."""
    content: list[Body] = []
    for position, part in enumerate(parts):
        kind = part["type"]
        path = format_path([position], root)
        if kind == "text":
            content.append(text(part["text"]))
        elif kind == "file":
            content.append(file(part, position, path))
        else:
            raise ValidationError(path, unsendable(kind, "user", api))
    return content


def _named(container: object, provider: str) -> Mapping[str, object]:
    if isinstance(container, Mapping):
        value = cast("Mapping[str, object]", container).get(provider)
        if isinstance(value, Mapping):
            return cast("Mapping[str, object]", value)
    return FrozenDict()


def provider_options(parameters: Mapping[str, object], provider: str) -> Mapping[str, object]:
    """``parameters.providerOptions.<provider>``, empty when there is none."""
    return _named(parameters.get("providerOptions"), provider)


def provider_metadata(part: Mapping[str, Any], provider: str) -> Mapping[str, object]:
    """A part's ``providerMetadata.<provider>``, empty when there is none."""
    return _named(part.get("providerMetadata"), provider)


def refuse_reserved(name: str, reserved: Mapping[str, str], path: str) -> None:
    """Raise for a provider option the adapter sets itself (saying what to do instead)."""
    if name in reserved:
        raise ValidationError(path, f"not allowed here: {reserved[name]}")


def late_system_message(index: int, provider: str) -> ValidationError:
    """A system message after the conversation started, for an API that takes system
    instructions apart from the turns (and so only before them)."""
    return ValidationError(
        format_path([index, "role"], "$.messages"),
        f"{provider} takes system instructions only before the conversation; move this "
        "system message to the start of messages (or make it a user message)",
    )


def unsendable(kind: str, role: str, api: str) -> str:
    """Why a part of ``kind`` cannot go to ``api`` in a ``role`` message."""
    if kind.startswith("data-"):
        return (
            f'"{kind}" is application data, which the provider cannot take; convert it to '
            "a text part or remove it before sending"
        )
    return f"{api} cannot take {kind} parts in {role} messages"


def base64_payload(url: str, path: str, provider: str) -> str:
    """The data of a base64 ``data:`` URL (the caller checked the ``data:`` prefix)."""
    header, comma, data = url.partition(",")
    if not comma or not header.endswith(";base64"):
        raise ValidationError(
            format_path(["url"], path),
            f"{provider} takes a data: URL only base64-encoded (data:<type>;base64,...)",
        )
    return data


def compact_json(value: object) -> str:
    """``value`` as compact JSON text, non-ASCII kept as is."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def output_text(output: object) -> str:
    """A tool result's output as text: a string as it is, anything else as JSON."""
    return output if isinstance(output, str) else compact_json(output)
