"""A chat request as an OpenAI Chat Completions request body (pure code, no I/O).

What the API cannot express raises :class:`~ai_chat.ValidationError` with the JSON path
of the offending value, before anything is sent; nothing is dropped silently. The body
is plain JSON (objects may be ``FrozenDict``, arrays ``tuple``: ``json.dumps`` takes both).
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
    compact_json,
    output_text,
    provider_options,
    refuse_reserved,
    tool_definition,
    unsendable,
    user_parts,
)

__all__ = ["ReasoningParts", "chat_body"]

ReasoningParts: TypeAlias = Literal["error", "omit"]

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
_API: Final = "OpenAI Chat Completions"
_PARAMETERS: Final = Parameters(_FIELDS, _REFUSED, _API, "openai")


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
        "messages": [
            entry
            for index, message in enumerate(request["messages"])
            for entry in _message(message, index, reasoning_parts)
        ],
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


def _message(message: Message, index: int, reasoning_parts: ReasoningParts) -> list[Body]:
    role = message["role"]
    parts = cast("tuple[Mapping[str, Any], ...]", message["parts"])
    root = format_path([index, "parts"], "$.messages")
    if role == "tool":
        return [
            {
                "role": "tool",
                "tool_call_id": part["toolCallId"],
                "content": output_text(part["output"]),
            }
            for part in parts
        ]
    if role == "system":
        return [{"role": "system", "content": _text_content([p["text"] for p in parts])}]
    if role == "user":
        return [{"role": "user", "content": _user_content(parts, root)}]
    texts: list[str] = []
    calls: list[Body] = []
    for position, part in enumerate(parts):
        kind = part["type"]
        if kind == "text":
            texts.append(part["text"])
        elif kind == "tool-call":
            calls.append(
                {
                    "id": part["toolCallId"],
                    "type": "function",
                    "function": {
                        "name": part["toolName"],
                        "arguments": compact_json(part["input"]),
                    },
                }
            )
        elif kind == "reasoning":
            if reasoning_parts == "error":
                raise ValidationError(
                    format_path([position], root),
                    "OpenAI Chat Completions has no input field for reasoning; remove the "
                    'part, or construct the adapter with reasoning_parts="omit" to leave '
                    "reasoning parts out of requests",
                )
        else:
            raise ValidationError(
                format_path([position], root), unsendable(kind, "assistant", _API)
            )
    entry: Body = {"role": "assistant", "content": _text_content(texts) if texts else None}
    if calls:
        entry["tool_calls"] = calls
    elif not texts:
        entry["content"] = ""
    return [entry]


def _user_content(parts: tuple[Mapping[str, Any], ...], root: str) -> str | list[Body]:
    if len(parts) == 1 and parts[0]["type"] == "text":
        return cast(str, parts[0]["text"])
    return user_parts(
        parts, root, _API, text=lambda text: {"type": "text", "text": text}, file=_file
    )


def _file(part: Mapping[str, Any], position: int, path: str) -> Body:
    media_type = cast(str, part["mediaType"])
    url = cast(str, part["url"])
    if media_type.lower().startswith("image/"):
        return {"type": "image_url", "image_url": {"url": url}}
    if media_type.lower() == "application/pdf":
        if not url.startswith("data:"):
            raise ValidationError(
                format_path(["url"], path),
                "OpenAI Chat Completions takes a PDF only as a data: URL (base64), not by "
                "reference; fetch the file and send it as a data: URL",
            )
        return {
            "type": "file",
            "file": {"filename": part.get("filename") or f"part-{position}.pdf", "file_data": url},
        }
    raise ValidationError(
        format_path(["mediaType"], path),
        f'OpenAI Chat Completions cannot take "{media_type}" files (images and PDFs only)',
    )


def _text_content(texts: list[str]) -> str | list[Body]:
    if len(texts) == 1:
        return texts[0]
    return [{"type": "text", "text": text} for text in texts]


def _tool(tool: ToolDefinition) -> Body:
    return {"type": "function", "function": tool_definition(tool, "parameters")}


def _tool_choice(choice: object) -> object:
    if isinstance(choice, str):
        return choice
    name = cast("FrozenDict[str, object]", choice)["toolName"]
    return {"type": "function", "function": {"name": name}}
