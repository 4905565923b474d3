"""A chat request as an Anthropic Messages request body (pure code, no I/O).

What the Messages API cannot express raises :class:`~ai_chat.ValidationError` with the
JSON path of the offending value, before anything is sent; nothing is dropped silently.
The body is plain JSON (objects may be ``FrozenDict``, arrays ``tuple``: ``json.dumps``
takes both).

The ``system`` and ``messages`` are :func:`ai_chat.formats.to_anthropic`'s; this module
maps the rest:

* tools are ``{"name", "description", "input_schema"}``;
* parameters: ``temperature``, ``topP`` (``top_p``), ``topK`` (``top_k``),
  ``maxOutputTokens`` (``max_tokens``, which Anthropic requires:
  :data:`DEFAULT_MAX_TOKENS` when absent), ``stopSequences`` (``stop_sequences``),
  ``toolChoice``; ``providerOptions.anthropic`` is merged into the body (``thinking``,
  ``metadata``, ``service_tier``...). ``seed`` does not exist at Anthropic: an error.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final, cast

from ..._types import ChatRequest, ToolDefinition
from ...formats import ReasoningParts, to_anthropic
from ...limits import FrozenDict
from ...limits._walk import format_path
from .._base.mapping import (
    Body,
    Parameters,
    provider_options,
    refuse_reserved,
    tool_definition,
)

__all__ = ["DEFAULT_MAX_TOKENS", "ReasoningParts", "messages_body"]

DEFAULT_MAX_TOKENS: Final = 4096
"""``max_tokens`` when neither the request nor the adapter's defaults set ``maxOutputTokens``."""

# The portable parameters and the Messages API fields they become.
_FIELDS: Final = {
    "temperature": "temperature",
    "topP": "top_p",
    "topK": "top_k",
    "maxOutputTokens": "max_tokens",
    "stopSequences": "stop_sequences",
}
_NOT_AT_ANTHROPIC: Final = {
    "seed": "Anthropic's Messages API has no seed; remove it",
    "presencePenalty": "Anthropic's Messages API has no presence penalty; remove it",
    "frequencyPenalty": "Anthropic's Messages API has no frequency penalty; remove it",
}

# providerOptions.anthropic fields the adapter sets itself.
_RESERVED: Final = {
    "model": "set parameters.model instead",
    "messages": "the adapter builds it from the request's messages",
    "system": "send system messages at the start of the request's messages",
    "tools": "the adapter builds it from the request's tools",
    "tool_choice": "set parameters.toolChoice instead",
    "stream": "the adapter always streams",
    **{field: f"set parameters.{name} instead" for name, field in _FIELDS.items()},
}

_OPTIONS_PATH = "$.parameters.providerOptions.anthropic"
_PARAMETERS: Final = Parameters(_FIELDS, _NOT_AT_ANTHROPIC, "Anthropic Messages", "anthropic")


def messages_body(
    request: ChatRequest,
    *,
    model: str,
    parameters: Mapping[str, object],
    reasoning_parts: ReasoningParts,
) -> Body:
    """The streaming Messages body for ``request``.

    ``parameters`` are the request's parameters merged over the adapter's defaults
    (:func:`~ai_chat.adapters._base.http.merge_parameters`). Raises :class:`~ai_chat.ValidationError` for anything
    the Messages API cannot express.
    """
    payload = to_anthropic(request["messages"], reasoning_parts=reasoning_parts)
    body: Body = {
        "model": parameters.get("model", model),
        "max_tokens": DEFAULT_MAX_TOKENS,
        "messages": payload["messages"],
    }
    if "system" in payload:
        body["system"] = payload["system"]
    _PARAMETERS.map_streaming(
        parameters, body, tools=request["tools"], tool=_tool, tool_choice=_tool_choice
    )
    for name, value in provider_options(parameters, "anthropic").items():
        refuse_reserved(name, _RESERVED, format_path([name], _OPTIONS_PATH))
        body[name] = value
    return body


def _tool(tool: ToolDefinition) -> Body:
    return tool_definition(tool, "input_schema")


def _tool_choice(choice: object) -> Body:
    if choice == "required":
        return {"type": "any"}
    if isinstance(choice, str):
        return {"type": choice}
    name = cast("FrozenDict[str, object]", choice)["toolName"]
    return {"type": "tool", "name": name}
