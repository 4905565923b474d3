"""A chat request as an OpenAI Chat Completions request body (pure code, no I/O).

The messages are :func:`ai_chat.formats.to_openai_chat`'s; this module maps the tools and
parameters. What the API cannot express raises :class:`~ai_chat.ValidationError` with the
JSON path of the offending value, before anything is sent; nothing is dropped silently.
The body is plain JSON (objects may be ``FrozenDict``, arrays ``tuple``: ``json.dumps``
takes both).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final, cast

from ..._errors import ValidationError
from ..._types import ChatRequest, ToolDefinition
from ...formats import ReasoningParts, to_openai_chat
from ...limits import FrozenDict
from ...limits._walk import format_path
from .._base.mapping import (
    Body,
    Parameters,
    provider_options,
    refuse_reserved,
    tool_definition,
)

__all__ = ["ReasoningParts", "chat_body"]

# The portable parameters and the Chat Completions fields they become.
_FIELDS: Final = {
    "temperature": "temperature",
    "topP": "top_p",
    "maxOutputTokens": "max_completion_tokens",
    "stopSequences": "stop",
    "seed": "seed",
    "presencePenalty": "presence_penalty",
    "frequencyPenalty": "frequency_penalty",
}
_REFUSED: Final = {
    "topK": (
        "OpenAI Chat Completions has no top_k; remove it (an OpenAI-compatible server that "
        "accepts top_k takes it as providerOptions.openai.top_k)"
    ),
}

# providerOptions.openai fields the adapter sets itself or cannot map back to events.
_RESERVED: Final = {
    "model": "set parameters.model instead",
    "messages": "the adapter builds it from the request's messages",
    "tools": "the adapter builds it from the request's tools",
    "tool_choice": "set parameters.toolChoice instead",
    "stream": "the adapter always streams",
    "functions": "use the request's tools (the legacy functions API is not supported)",
    "function_call": "use parameters.toolChoice (the legacy functions API is not supported)",
    "n": "the adapter streams exactly one answer",
    "logprobs": "ai_chat events cannot carry log probabilities",
    "top_logprobs": "ai_chat events cannot carry log probabilities",
    "audio": "ai_chat events cannot carry audio output",
    "modalities": "ai_chat events carry text output only",
    **{field: f"set parameters.{name} instead" for name, field in _FIELDS.items()},
}

_FIELD_PATH = "$.parameters.providerOptions.openai"
_PARAMETERS: Final = Parameters(_FIELDS, _REFUSED, "OpenAI Chat Completions", "openai")


def chat_body(
    request: ChatRequest,
    *,
    model: str,
    parameters: Mapping[str, object],
    reasoning_parts: ReasoningParts,
) -> Body:
    """The streaming Chat Completions body for ``request``.

    ``parameters`` are the request's parameters merged over the adapter's defaults
    (:func:`~ai_chat.adapters._base.http.merge_parameters`). Raises :class:`~ai_chat.ValidationError` for anything
    Chat Completions cannot express.
    """
    body: Body = {
        "model": parameters.get("model", model),
        "messages": to_openai_chat(request["messages"], reasoning_parts=reasoning_parts),
    }
    _PARAMETERS.map_streaming(
        parameters, body, tools=request["tools"], tool=_tool, tool_choice=_tool_choice
    )
    body["stream_options"] = {"include_usage": True}
    _merge_provider_options(body, provider_options(parameters, "openai"))
    return body


def _merge_provider_options(body: Body, extra: Mapping[str, object]) -> None:
    for name, value in extra.items():
        path = format_path([name], _FIELD_PATH)
        if name == "stream_options":
            if not isinstance(value, Mapping):
                raise ValidationError(path, "expected an object")
            stream_options = cast("Mapping[str, object]", value)
            if stream_options.get("include_usage", True) is not True:
                raise ValidationError(
                    format_path(["include_usage"], path),
                    "the adapter needs include_usage: true (usage is reported on finish)",
                )
            body["stream_options"] = {**stream_options, "include_usage": True}
        elif name == "n" and type(value) is int and value == 1:
            body["n"] = 1
        else:
            refuse_reserved(name, _RESERVED, path)
            body[name] = value


def _tool(tool: ToolDefinition) -> Body:
    return {"type": "function", "function": tool_definition(tool, "parameters")}


def _tool_choice(choice: object) -> object:
    if isinstance(choice, str):
        return choice
    name = cast("FrozenDict[str, object]", choice)["toolName"]
    return {"type": "function", "function": {"name": name}}
