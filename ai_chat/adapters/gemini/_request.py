"""A chat request as a Gemini ``generateContent`` request body (pure code, no I/O).

What the Gemini API cannot express raises :class:`~ai_chat.ValidationError` with the JSON
path of the offending value, before anything is sent; nothing is dropped silently. The
body is plain JSON in the API's own camelCase spelling (objects may be ``FrozenDict``,
arrays ``tuple``: ``json.dumps`` takes both). The model is not part of the body: it goes
in the URL (``models/<model>:streamGenerateContent``).

The mapping:

* leading system messages become ``systemInstruction`` (text parts); a system message
  after the conversation started cannot be placed and is an error;
* user text, and files (``inlineData`` from a base64 ``data:`` URL, ``fileData`` with
  ``fileUri`` for an ``https``/``http``/``gs`` URL, including Files API URIs): images,
  PDFs, audio, video and text;
* assistant text, reasoning (``thought: true`` parts) and tool calls (``functionCall``
  parts), each with the ``thoughtSignature`` from ``providerMetadata.gemini`` when there
  is one; the role is ``model``;
* tool messages become ``functionResponse`` parts in a ``user`` turn (consecutive ones
  merged), ``{"output": ...}`` or, for ``isError``, ``{"error": ...}``, named after the
  matching call;
* tool call ids: the Gemini API usually issues none, so the stream mapper makes them up
  (:data:`GENERATED_ID_PREFIX`); those are not sent back, while ids the API did issue
  (``functionCall.id``) go back on the call and its response;
* parameters: ``temperature``, ``topP``, ``topK``, ``maxOutputTokens``,
  ``stopSequences``, ``seed``, ``presencePenalty`` and ``frequencyPenalty`` go to
  ``generationConfig``; ``toolChoice`` to ``toolConfig.functionCallingConfig``;
  ``providerOptions.gemini`` is merged: ``generationConfig`` fields (``thinkingConfig``,
  ``responseMimeType``...) into ``generationConfig``, anything else (``safetySettings``,
  ``cachedContent``, ``labels``...) at the top of the body.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final, cast

from ..._errors import ValidationError
from ..._types import ChatRequest, Message
from ...limits import FrozenDict
from ...limits._walk import format_path
from .._base.mapping import (
    Body,
    Parameters,
    Parts,
    base64_payload,
    conversation_turns,
    provider_metadata,
    provider_options,
    refuse_reserved,
    tool_definition,
    unsendable,
    user_parts,
)

__all__ = ["GENERATED_ID_PREFIX", "PROVIDER", "generate_content_body"]

PROVIDER: Final = "gemini"
"""The provider name: ``ProviderError.provider``, ``providerOptions.gemini`` and
``providerMetadata.gemini``."""

GENERATED_ID_PREFIX: Final = "gemini-call-"
"""How tool call ids the adapter made up begin (the Gemini API usually issues none)."""

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

_MEDIA_PREFIXES: Final = ("image/", "audio/", "video/", "text/")
_URL_SCHEMES: Final = ("https://", "http://", "gs://")
_OPTIONS_PATH = "$.parameters.providerOptions.gemini"
_API: Final = "the Gemini API"
_PARAMETERS: Final = Parameters(_FIELDS, {}, _API, PROVIDER)


def generate_content_body(
    request: ChatRequest, *, model: str, parameters: Mapping[str, object]
) -> tuple[str, Body]:
    """The model and the ``streamGenerateContent`` body for ``request``.

    ``parameters`` are the request's parameters merged over the adapter's defaults
    (:func:`~ai_chat.adapters._base.http.merge_parameters`). Raises
    :class:`~ai_chat.ValidationError` for anything the Gemini API cannot express.
    """
    system, contents = _conversation(request["messages"])
    body: Body = {"contents": contents}
    if system:
        body["systemInstruction"] = {"parts": system}
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


def _conversation(messages: tuple[Message, ...] | list[Message]) -> tuple[list[Body], list[Body]]:
    calls: dict[str, str] = {}  # tool call id -> function name, from assistant messages
    return conversation_turns(
        messages,
        "Gemini",
        content="parts",
        assistant_role="model",
        system_part=lambda part: {"text": part["text"]},
        tool_result=lambda part: _function_response(part, calls),
        user=_user_parts,
        assistant=lambda parts, root: _model_parts(parts, root, calls),
    )


def _user_parts(parts: Parts, root: str) -> list[Body]:
    return user_parts(
        parts,
        root,
        _API,
        text=lambda text: {"text": text},
        file=lambda part, _, path: _file(part, path),
    )


def _model_parts(
    parts: tuple[Mapping[str, Any], ...], root: str, calls: dict[str, str]
) -> list[Body]:
    content: list[Body] = []
    for position, part in enumerate(parts):
        kind = part["type"]
        path = format_path([position], root)
        if kind == "text":
            entry: Body = {"text": part["text"]}
        elif kind == "reasoning":
            entry = {"text": part["text"], "thought": True}
        elif kind == "tool-call":
            entry = {"functionCall": _function_call(part, path)}
            calls[part["toolCallId"]] = part["toolName"]
        elif kind == "file":
            entry = _file(part, path)
        else:
            raise ValidationError(path, unsendable(kind, "assistant", _API))
        signature = _signature(part, path)
        if signature is not None:
            entry["thoughtSignature"] = signature
        content.append(entry)
    return content


def _function_call(part: Mapping[str, Any], path: str) -> Body:
    arguments = part["input"]
    if not isinstance(arguments, Mapping):
        raise ValidationError(
            format_path(["input"], path),
            f"Gemini function calls take an object as input, not {type(arguments).__name__}",
        )
    call: Body = {"name": part["toolName"], "args": arguments}
    call_id = cast(str, part["toolCallId"])
    if not call_id.startswith(GENERATED_ID_PREFIX):
        call["id"] = call_id
    return call


def _function_response(part: Mapping[str, Any], calls: Mapping[str, str]) -> Body:
    call_id = cast(str, part["toolCallId"])
    output = part["output"]
    response: Body = {
        # Gemini pairs responses with calls by name (and id, when it issued one).
        "name": calls.get(call_id, part["toolName"]),
        "response": {"error": output} if part.get("isError") else {"output": output},
    }
    if not call_id.startswith(GENERATED_ID_PREFIX):
        response["id"] = call_id
    return {"functionResponse": response}


def _signature(part: Mapping[str, Any], path: str) -> str | None:
    signature = provider_metadata(part, PROVIDER).get("thoughtSignature")
    if signature is None:
        return None
    if not isinstance(signature, str) or not signature:
        raise ValidationError(
            format_path(["providerMetadata", PROVIDER, "thoughtSignature"], path),
            "expected a non-empty string (the base64 thought signature Gemini sent)",
        )
    return signature


def _file(part: Mapping[str, Any], path: str) -> Body:
    media_type = cast(str, part["mediaType"])
    lowered = media_type.lower()
    if not (lowered == "application/pdf" or lowered.startswith(_MEDIA_PREFIXES)):
        raise ValidationError(
            format_path(["mediaType"], path),
            f'Gemini cannot take "{media_type}" files (images, PDFs, audio, video and text)',
        )
    url = cast(str, part["url"])
    if url.startswith("data:"):
        data = base64_payload(url, path, "Gemini")
        return {"inlineData": {"mimeType": media_type, "data": data}}
    if url.startswith(_URL_SCHEMES):
        return {"fileData": {"mimeType": media_type, "fileUri": url}}
    raise ValidationError(
        format_path(["url"], path), "expected a data: URL, an http(s) URL or a gs:// URI"
    )


def _tool_choice(choice: object) -> Body:
    if choice == "auto":
        return {"mode": "AUTO"}
    if choice == "none":
        return {"mode": "NONE"}
    if choice == "required":
        return {"mode": "ANY"}
    name = cast("FrozenDict[str, object]", choice)["toolName"]
    return {"mode": "ANY", "allowedFunctionNames": [name]}
