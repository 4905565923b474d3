"""The request snapshot: messages, tools and parameters, frozen and checked at once."""

from __future__ import annotations

from collections.abc import Mapping
from typing import cast

from ._describe import shown
from ._errors import ValidationError
from ._messages import _normalize  # pyright: ignore[reportPrivateUsage]
from ._shape import (
    Shape,
    check_shape,
    describe,
    json_object,
    non_empty_str,
    non_negative_int,
    number,
    provider_metadata,
    string,
    string_list,
)
from ._types import ChatRequest
from .limits import FrozenDict, JSONLimits, freeze_json
from .limits._walk import format_path

__all__ = ["snapshot_request"]

_REQUEST_KEYS = ("messages", "tools", "parameters")
_TOOL = Shape({"name": non_empty_str, "inputSchema": json_object}, {"description": string})


def _positive_int(value: object) -> str | None:
    return None if type(value) is int and value > 0 else "a positive integer"


def _integer(value: object) -> str | None:
    return None if type(value) is int else "an integer"


_PARAMETERS = Shape(
    optional={
        "model": non_empty_str,
        "temperature": number,
        "topP": number,
        "topK": non_negative_int,
        "presencePenalty": number,
        "frequencyPenalty": number,
        "maxOutputTokens": _positive_int,
        "stopSequences": string_list,
        "seed": _integer,
        "providerOptions": provider_metadata,
    }
)
_TOOL_CHOICES = ("auto", "none", "required")


def snapshot_request(request: object, limits: JSONLimits) -> ChatRequest:
    """Freeze and check a chat request; see :func:`ai_chat.create_chat_stream`.

    ``messages``, ``tools`` and ``parameters`` are each held to ``limits`` on their own.
    """
    if type(request) is not dict and type(request) is not FrozenDict:
        raise ValidationError(
            "$", f"expected a request object with messages, got {describe(request)}"
        )
    fields = cast("Mapping[object, object]", request)
    for key in fields:
        if key not in _REQUEST_KEYS:
            raise ValidationError(
                format_path([key]) if type(key) is str else "$",
                f"unknown request field {shown(key)} (expected messages, tools, parameters)",
            )
    if "messages" not in fields:
        raise ValidationError("$", 'missing required field "messages"')
    messages = _normalize(fields["messages"], limits, "$.messages")
    no_tools: tuple[object, ...] = ()
    no_parameters: dict[str, object] = {}
    tools = _tools(fields.get("tools", no_tools), limits)
    parameters = _parameters(fields.get("parameters", no_parameters), tools, limits)
    return cast(
        ChatRequest,
        FrozenDict({"messages": messages, "tools": tools, "parameters": parameters}),
    )


def _tools(tools: object, limits: JSONLimits) -> tuple[FrozenDict[str, object], ...]:
    root = "$.tools"
    kind = type(tools)
    if kind is not list and kind is not tuple:
        raise ValidationError(root, f"expected an array of tool definitions, got {describe(tools)}")
    frozen = cast("tuple[object, ...]", freeze_json(tools, limits, root=root))
    names: set[str] = set()
    for index, tool in enumerate(frozen):
        if type(tool) is not FrozenDict:
            raise ValidationError(
                format_path([index], root), f"expected a tool definition, got {describe(tool)}"
            )
        definition = cast("FrozenDict[str, object]", tool)
        check_shape(definition, _TOOL, [index], root)
        name = cast(str, definition["name"])
        if name in names:
            raise ValidationError(
                format_path([index, "name"], root), f"duplicate tool name {shown(name)}"
            )
        names.add(name)
    return cast("tuple[FrozenDict[str, object], ...]", frozen)


def _parameters(
    parameters: object, tools: tuple[FrozenDict[str, object], ...], limits: JSONLimits
) -> FrozenDict[str, object]:
    root = "$.parameters"
    kind = type(parameters)
    if kind is not dict and kind is not FrozenDict:
        raise ValidationError(root, f"expected a parameters object, got {describe(parameters)}")
    frozen = cast("FrozenDict[str, object]", freeze_json(parameters, limits, root=root))
    check_shape(frozen, _PARAMETERS, [], root)
    if "toolChoice" in frozen:
        _check_tool_choice(frozen["toolChoice"], {cast(str, t["name"]) for t in tools}, root)
    return frozen


def _check_tool_choice(choice: object, names: set[str], root: str) -> None:
    path = format_path(["toolChoice"], root)
    if type(choice) is str:
        if choice not in _TOOL_CHOICES:
            raise ValidationError(
                path,
                f'expected "auto", "none", "required" or {{"type": "tool", "toolName": ...}}, got {shown(choice)}',
            )
        if choice == "required" and not names:
            raise ValidationError(path, '"required" needs at least one tool in "tools"')
        return
    fields = cast("FrozenDict[str, object]", choice)
    if type(fields) is FrozenDict and fields.get("type") == "tool":
        name = fields.get("toolName")
        if type(name) is not str or not name:
            raise ValidationError(
                format_path(["toolChoice", "toolName"], root), "expected a non-empty string"
            )
        if name not in names:
            raise ValidationError(
                format_path(["toolChoice", "toolName"], root),
                f'no tool named {shown(name)} in "tools"',
            )
        return
    raise ValidationError(
        path,
        f'expected "auto", "none", "required" or {{"type": "tool", "toolName": ...}}, got {describe(choice)}',
    )
