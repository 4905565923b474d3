"""A chat request as an Anthropic Messages request body (pure code, no I/O).

What the Messages API cannot express raises :class:`~ai_chat.ValidationError` with the
JSON path of the offending value, before anything is sent; nothing is dropped silently.
The body is plain JSON (objects may be ``FrozenDict``, arrays ``tuple``: ``json.dumps``
takes both).

The mapping:

* leading system messages become ``system`` (text blocks); a system message after the
  conversation started cannot be placed and is an error;
* user text, images (``image`` blocks: ``base64`` from a ``data:`` URL, ``url`` source
  otherwise) and PDFs (``document`` blocks, the filename as ``title``);
* assistant text, reasoning (``thinking`` with the signature from
  ``providerMetadata.anthropic.signature``, or ``redacted_thinking`` from
  ``providerMetadata.anthropic.redactedData``) and tool calls (``tool_use``);
* tool messages become ``tool_result`` blocks in a user turn, consecutive ones merged;
* parameters: ``temperature``, ``topP`` (``top_p``), ``topK`` (``top_k``),
  ``maxOutputTokens`` (``max_tokens``, which Anthropic requires:
  :data:`DEFAULT_MAX_TOKENS` when absent), ``stopSequences`` (``stop_sequences``),
  ``toolChoice``; ``providerOptions.anthropic`` is merged into the body (``thinking``,
  ``metadata``, ``service_tier``...). ``seed`` does not exist at Anthropic: an error.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final, Literal, TypeAlias, cast

from ..._errors import ValidationError
from ..._types import ChatRequest, Message, ToolDefinition
from ...limits import FrozenDict
from ...limits._walk import format_path
from .._base.mapping import (
    Body,
    Parameters,
    Parts,
    base64_payload,
    conversation_turns,
    output_text,
    provider_metadata,
    provider_options,
    refuse_reserved,
    tool_definition,
    unsendable,
    user_parts,
)

__all__ = ["DEFAULT_MAX_TOKENS", "ReasoningParts", "messages_body"]

ReasoningParts: TypeAlias = Literal["error", "omit"]

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

_IMAGE_TYPES: Final = frozenset({"image/jpeg", "image/png", "image/gif", "image/webp"})
_OPTIONS_PATH = "$.parameters.providerOptions.anthropic"
_API: Final = "Anthropic Messages"
_PARAMETERS: Final = Parameters(_FIELDS, _NOT_AT_ANTHROPIC, _API, "anthropic")


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
    system, messages = _conversation(request["messages"], reasoning_parts)
    body: Body = {
        "model": parameters.get("model", model),
        "max_tokens": DEFAULT_MAX_TOKENS,
        "messages": messages,
    }
    if system:
        body["system"] = system
    _PARAMETERS.map_streaming(
        parameters, body, tools=request["tools"], tool=_tool, tool_choice=_tool_choice
    )
    for name, value in provider_options(parameters, "anthropic").items():
        refuse_reserved(name, _RESERVED, format_path([name], _OPTIONS_PATH))
        body[name] = value
    return body


def _conversation(
    messages: tuple[Message, ...] | list[Message], reasoning_parts: ReasoningParts
) -> tuple[list[Body], list[Body]]:
    return conversation_turns(
        messages,
        "Anthropic",
        content="content",
        assistant_role="assistant",
        system_part=lambda part: {"type": "text", "text": part["text"]},
        tool_result=_tool_result,
        user=_user_content,
        assistant=lambda parts, root: _assistant_content(parts, root, reasoning_parts),
    )


def _user_content(parts: Parts, root: str) -> list[Body]:
    return user_parts(
        parts,
        root,
        _API,
        text=lambda text: {"type": "text", "text": text},
        file=lambda part, _, path: _file(part, path),
    )


def _assistant_content(
    parts: tuple[Mapping[str, Any], ...], root: str, reasoning_parts: ReasoningParts
) -> list[Body]:
    content: list[Body] = []
    for position, part in enumerate(parts):
        kind = part["type"]
        path = format_path([position], root)
        if kind == "text":
            content.append({"type": "text", "text": part["text"]})
        elif kind == "reasoning":
            block = _thinking(part, path, reasoning_parts)
            if block is not None:
                content.append(block)
        elif kind == "tool-call":
            tool_input = part["input"]
            if not isinstance(tool_input, Mapping):
                raise ValidationError(
                    format_path(["input"], path),
                    "Anthropic tool calls take an object as input, not "
                    f"{type(tool_input).__name__}",
                )
            content.append(
                {
                    "type": "tool_use",
                    "id": part["toolCallId"],
                    "name": part["toolName"],
                    "input": tool_input,
                }
            )
        else:
            raise ValidationError(path, unsendable(kind, "assistant", _API))
    return content


def _thinking(part: Mapping[str, Any], path: str, reasoning_parts: ReasoningParts) -> Body | None:
    metadata = provider_metadata(part, "anthropic")
    redacted = metadata.get("redactedData")
    if redacted is not None:
        if not isinstance(redacted, str):
            raise ValidationError(
                format_path(["providerMetadata", "anthropic", "redactedData"], path),
                "expected a string (the redacted_thinking block's data)",
            )
        return {"type": "redacted_thinking", "data": redacted}
    signature = metadata.get("signature")
    if isinstance(signature, str) and signature:
        return {"type": "thinking", "thinking": part["text"], "signature": signature}
    if signature is not None:
        raise ValidationError(
            format_path(["providerMetadata", "anthropic", "signature"], path),
            "expected a non-empty string (the thinking block's signature)",
        )
    if reasoning_parts == "omit":
        return None
    raise ValidationError(
        path,
        "Anthropic takes reasoning back only as a signed thinking block, and this part has "
        "no providerMetadata.anthropic.signature (or redactedData); remove the part, or "
        'construct the adapter with reasoning_parts="omit" to leave unsigned reasoning '
        "out of requests",
    )


def _tool_result(part: Mapping[str, Any]) -> Body:
    result: Body = {
        "type": "tool_result",
        "tool_use_id": part["toolCallId"],
        "content": output_text(part["output"]),
    }
    if part.get("isError"):
        result["is_error"] = True
    return result


def _file(part: Mapping[str, Any], path: str) -> Body:
    media_type = cast(str, part["mediaType"]).lower()
    url = cast(str, part["url"])
    if media_type in _IMAGE_TYPES:
        kind = "image"
    elif media_type == "application/pdf":
        kind = "document"
    else:
        raise ValidationError(
            format_path(["mediaType"], path),
            f'Anthropic cannot take "{part["mediaType"]}" files (JPEG, PNG, GIF and WebP '
            "images, and PDFs)",
        )
    if url.startswith("data:"):
        data = base64_payload(url, path, "Anthropic")
        source: Body = {"type": "base64", "media_type": media_type, "data": data}
    elif url.startswith(("https://", "http://")):
        source = {"type": "url", "url": url}
    else:
        raise ValidationError(format_path(["url"], path), "expected a data: URL or an http(s) URL")
    block: Body = {"type": kind, "source": source}
    filename = part.get("filename")
    if kind == "document" and filename:
        block["title"] = filename  # image blocks have no name field (as with OpenAI)
    return block


def _tool(tool: ToolDefinition) -> Body:
    return tool_definition(tool, "input_schema")


def _tool_choice(choice: object) -> Body:
    if choice == "required":
        return {"type": "any"}
    if isinstance(choice, str):
        return {"type": choice}
    name = cast("FrozenDict[str, object]", choice)["toolName"]
    return {"type": "tool", "name": name}
