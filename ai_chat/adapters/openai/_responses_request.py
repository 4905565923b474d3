"""A chat request as an OpenAI Responses API request body (pure code, no I/O).

What the Responses API cannot express raises :class:`~ai_chat.ValidationError` with the
JSON path of the offending value, before anything is sent; nothing is dropped silently.
The body is plain JSON (objects may be ``FrozenDict``, arrays ``tuple``: ``json.dumps``
takes both).

The messages are :func:`ai_chat.formats.to_openai_responses`'s (with ``store`` from
``providerOptions.openai.store``); this module maps the rest:

* tools are ``{"type": "function", "name", "description", "parameters", "strict":
  false}``; ``toolChoice`` becomes ``tool_choice``;
* parameters: ``temperature``, ``topP`` (``top_p``), ``maxOutputTokens``
  (``max_output_tokens``); the Responses API has no stop sequences, seed, top-k or
  penalties, so those are errors; ``providerOptions.openai`` is merged into the body
  (``reasoning``, ``include``, ``store``, ``previous_response_id``, ``text``...).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final, cast

from ..._types import ChatRequest, ToolDefinition
from ...formats import ReasoningParts, to_openai_responses
from ...limits import FrozenDict
from ...limits._walk import format_path
from .._base.mapping import (
    Body,
    Parameters,
    provider_options,
    refuse_reserved,
    tool_definition,
)

__all__ = ["ReasoningParts", "responses_body"]

_API: Final = "the OpenAI Responses API"

# The portable parameters and the Responses API fields they become.
_FIELDS: Final = {
    "temperature": "temperature",
    "topP": "top_p",
    "maxOutputTokens": "max_output_tokens",
}
_NOT_IN_RESPONSES: Final = {
    "stopSequences": (
        "the OpenAI Responses API has no stop sequences; remove stopSequences, or use "
        'the Chat Completions API (api="chat"), which has stop'
    ),
    "seed": (
        'the OpenAI Responses API has no seed; remove it, or use api="chat" (Chat '
        "Completions takes a seed)"
    ),
    "topK": "the OpenAI Responses API has no top_k; remove it",
    "presencePenalty": (
        'the OpenAI Responses API has no presence penalty; remove it, or use api="chat"'
    ),
    "frequencyPenalty": (
        'the OpenAI Responses API has no frequency penalty; remove it, or use api="chat"'
    ),
}

# providerOptions.openai fields the adapter sets itself or cannot map back to events.
_RESERVED: Final = {
    "model": "set parameters.model instead",
    "input": "the adapter builds it from the request's messages",
    "tools": (
        "the adapter builds it from the request's function tools (built-in tools produce "
        "output items ai_chat events cannot carry)"
    ),
    "tool_choice": "set parameters.toolChoice instead",
    "stream": "the adapter always streams",
    "top_logprobs": "ai_chat events cannot carry log probabilities",
    "stop": "the Responses API has no stop sequences",
    "seed": "the Responses API has no seed",
    **{field: f"set parameters.{name} instead" for name, field in _FIELDS.items()},
}

_OPTIONS_PATH: Final = "$.parameters.providerOptions.openai"
_PARAMETERS: Final = Parameters(_FIELDS, _NOT_IN_RESPONSES, _API, "openai")


def responses_body(
    request: ChatRequest,
    *,
    model: str,
    parameters: Mapping[str, object],
    reasoning_parts: ReasoningParts,
) -> Body:
    """The streaming Responses API body for ``request``.

    ``parameters`` are the request's parameters merged over the adapter's defaults
    (:func:`~ai_chat.adapters._base.http.merge_parameters`). Raises
    :class:`~ai_chat.ValidationError` for anything the Responses API cannot express.
    """
    extra = provider_options(parameters, "openai")
    # With store: false the API keeps nothing, so an item id in the input names an item
    # it cannot find (a 400/404): ids go out only for items the API stores.
    stateless = extra.get("store") is False
    items = to_openai_responses(
        request["messages"], reasoning_parts=reasoning_parts, store=not stateless
    )
    body: Body = {"model": parameters.get("model", model), "input": items}
    _PARAMETERS.map_streaming(
        parameters, body, tools=request["tools"], tool=_tool, tool_choice=_tool_choice
    )
    for name, value in extra.items():
        refuse_reserved(name, _RESERVED, format_path([name], _OPTIONS_PATH))
        body[name] = value
    return body


def _tool(tool: ToolDefinition) -> Body:
    definition = tool_definition(tool, "parameters", {"type": "function"})
    # The API's default is strict, which refuses most hand-written schemas (every
    # property required, additionalProperties false); the request's schema is sent as is.
    definition["strict"] = False
    return definition


def _tool_choice(choice: object) -> object:
    if isinstance(choice, str):
        return choice
    name = cast("FrozenDict[str, object]", choice)["toolName"]
    return {"type": "function", "name": name}
