"""A chat request as a Gemini ``generateContent`` request body (pure code, no I/O).

What the Gemini API cannot express raises :class:`~ai_chat.ValidationError` with the JSON
path of the offending value, before anything is sent; nothing is dropped silently. The
body is plain JSON in the API's own camelCase spelling (objects may be ``FrozenDict``,
arrays ``tuple``: ``json.dumps`` takes both). The model is not part of the body: it goes
in the URL (``models/<model>:streamGenerateContent``).

The ``contents`` and ``systemInstruction`` are :func:`ai_chat.formats.to_gemini`'s (tool
call ids the adapter made up begin with :data:`GENERATED_ID_PREFIX` and are not sent);
this module maps the rest:

* tools are ``functionDeclarations`` with ``parametersJsonSchema``;
* parameters: ``temperature``, ``topP``, ``topK``, ``maxOutputTokens``,
  ``stopSequences``, ``seed``, ``presencePenalty`` and ``frequencyPenalty`` go to
  ``generationConfig``; ``toolChoice`` to ``toolConfig.functionCallingConfig``;
  ``providerOptions.gemini`` is merged: ``generationConfig`` fields (``thinkingConfig``,
  ``responseMimeType``...) into ``generationConfig``, anything else (``safetySettings``,
  ``cachedContent``, ``labels``...) at the top of the body.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final, cast

from ..._errors import ValidationError
from ..._types import ChatRequest
from ...formats import GENERATED_ID_PREFIX, to_gemini
from ...limits import FrozenDict
from ...limits._walk import format_path
from .._base.mapping import (
    Body,
    Parameters,
    provider_options,
    refuse_reserved,
    tool_definition,
)

__all__ = ["GENERATED_ID_PREFIX", "PROVIDER", "generate_content_body"]

PROVIDER: Final = "gemini"
"""The provider name: ``ProviderError.provider``, ``providerOptions.gemini`` and
``providerMetadata.gemini``."""

# The portable parameters and the generationConfig fields they become.
_FIELDS: Final = {
    "temperature": "temperature",
    "topP": "topP",
    "topK": "topK",
    "maxOutputTokens": "maxOutputTokens",
    "stopSequences": "stopSequences",
    "seed": "seed",
    "presencePenalty": "presencePenalty",
    "frequencyPenalty": "frequencyPenalty",
}

# providerOptions.gemini fields that belong in generationConfig (the API's spelling).
_GENERATION_FIELDS: Final = frozenset(
    {
        "thinkingConfig",
        "responseMimeType",
        "responseSchema",
        "responseJsonSchema",
        "responseModalities",
        "mediaResolution",
        "speechConfig",
        "imageConfig",
        "audioTimestamp",
        "enableAffectiveDialog",
        "enableEnhancedCivicAnswers",
        "routingConfig",
        "modelSelectionConfig",
    }
)

# providerOptions.gemini fields the adapter sets itself or cannot map back to events.
_RESERVED: Final = {
    "model": "set parameters.model instead",
    "contents": "the adapter builds it from the request's messages",
    "systemInstruction": "send system messages at the start of the request's messages",
    "tools": "the adapter builds it from the request's tools",
    "toolConfig": "set parameters.toolChoice instead",
    "candidateCount": "the adapter streams exactly one answer",
    "responseLogprobs": "ai_chat events cannot carry log probabilities",
    "logprobs": "ai_chat events cannot carry log probabilities",
    **{field: f"set parameters.{name} instead" for name, field in _FIELDS.items()},
}

_OPTIONS_PATH = "$.parameters.providerOptions.gemini"
_PARAMETERS: Final = Parameters(_FIELDS, {}, "the Gemini API", PROVIDER)


def generate_content_body(
    request: ChatRequest, *, model: str, parameters: Mapping[str, object]
) -> tuple[str, Body]:
    """The model and the ``streamGenerateContent`` body for ``request``.

    ``parameters`` are the request's parameters merged over the adapter's defaults
    (:func:`~ai_chat.adapters._base.http.merge_parameters`). Raises
    :class:`~ai_chat.ValidationError` for anything the Gemini API cannot express.
    """
    payload = to_gemini(request["messages"])
    body: Body = {"contents": payload["contents"]}
    if "systemInstruction" in payload:
        body["systemInstruction"] = payload["systemInstruction"]
    tools = request["tools"]
    if tools:
        body["tools"] = [
            {
                "functionDeclarations": [
                    tool_definition(tool, "parametersJsonSchema") for tool in tools
                ]
            }
        ]
    config: Body = {}

    def tool_choice(value: object) -> None:
        body["toolConfig"] = {"functionCallingConfig": _tool_choice(value)}

    _PARAMETERS.map(parameters, config, tools=bool(tools), tool_choice=tool_choice)
    _merge_options(body, config, provider_options(parameters, PROVIDER))
    if config:
        body["generationConfig"] = config
    return cast(str, parameters.get("model", model)), body


def _merge_options(body: Body, config: Body, extra: Mapping[str, object]) -> None:
    for name, value in extra.items():
        path = format_path([name], _OPTIONS_PATH)
        refuse_reserved(name, _RESERVED, path)
        if name == "generationConfig":
            if not isinstance(value, Mapping):
                raise ValidationError(path, "expected an object of generationConfig fields")
            for inner, setting in cast("Mapping[str, object]", value).items():
                refuse_reserved(inner, _RESERVED, format_path([inner], path))
                config[inner] = setting
        elif name in _GENERATION_FIELDS:
            config[name] = value
        else:
            body[name] = value


def _tool_choice(choice: object) -> Body:
    if choice == "auto":
        return {"mode": "AUTO"}
    if choice == "none":
        return {"mode": "NONE"}
    if choice == "required":
        return {"mode": "ANY"}
    name = cast("FrozenDict[str, object]", choice)["toolName"]
    return {"mode": "ANY", "allowedFunctionNames": [name]}
