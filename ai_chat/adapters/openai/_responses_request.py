"""A chat request as an OpenAI Responses API request body (pure code, no I/O).

What the Responses API cannot express raises :class:`~ai_chat.ValidationError` with the
JSON path of the offending value, before anything is sent; nothing is dropped silently.
The body is plain JSON (objects may be ``FrozenDict``, arrays ``tuple``: ``json.dumps``
takes both).

The mapping, into the ``input`` item list (the conversation in order):

* system messages become ``{"role": "system", "content": ...}`` input messages where
  they stand (``providerOptions.openai.instructions`` is passed on for the top-level
  field);
* user text (``input_text``), images (``input_image``, by URL or data URL) and PDFs
  (``input_file``: ``file_url`` for an http(s) URL, ``file_data`` for a data URL);
* assistant text becomes an assistant message of ``output_text`` (with its item ``id``
  from ``providerMetadata.openai.itemId`` when it has one); reasoning parts become
  ``reasoning`` items (``id`` from ``providerMetadata.openai.itemId``, ``encrypted_content``
  from ``providerMetadata.openai.reasoningEncryptedContent``; the parts of one item, one
  per summary, are joined again); tool calls become ``function_call`` items (``call_id``,
  ``name``, ``arguments`` as a JSON string). With ``providerOptions.openai.store: false``
  the API keeps no items, so message and function call ids are left out (the API would
  look them up and fail) and a reasoning item needs its encrypted content;
* tool messages become ``function_call_output`` items;
* tools are ``{"type": "function", "name", "description", "parameters", "strict":
  false}``; ``toolChoice`` becomes ``tool_choice``;
* parameters: ``temperature``, ``topP`` (``top_p``), ``maxOutputTokens``
  (``max_output_tokens``); the Responses API has no stop sequences, seed, top-k or
  penalties, so those are errors; ``providerOptions.openai`` is merged into the body
  (``reasoning``, ``include``, ``store``, ``previous_response_id``, ``text``...).
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
    compact_json,
    output_text,
    provider_metadata,
    provider_options,
    refuse_reserved,
    tool_definition,
    unsendable,
    user_parts,
)

__all__ = ["ReasoningParts", "responses_body"]

ReasoningParts: TypeAlias = Literal["error", "omit"]

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
    items: list[Body] = []
    for index, message in enumerate(request["messages"]):
        _message(items, message, index, reasoning_parts, stateless)
    body: Body = {"model": parameters.get("model", model), "input": items}
    _PARAMETERS.map_streaming(
        parameters, body, tools=request["tools"], tool=_tool, tool_choice=_tool_choice
    )
    for name, value in extra.items():
        refuse_reserved(name, _RESERVED, format_path([name], _OPTIONS_PATH))
        body[name] = value
    return body


def _message(
    items: list[Body],
    message: Message,
    index: int,
    reasoning_parts: ReasoningParts,
    stateless: bool,
) -> None:
    role = message["role"]
    parts = cast("tuple[Mapping[str, Any], ...]", message["parts"])
    root = format_path([index, "parts"], "$.messages")
    if role == "system":
        items.append({"role": "system", "content": _text_content([p["text"] for p in parts])})
    elif role == "user":
        items.append({"role": "user", "content": _user_content(parts, root)})
    elif role == "tool":
        items.extend(
            {
                "type": "function_call_output",
                "call_id": part["toolCallId"],
                "output": output_text(part["output"]),
            }
            for part in parts
        )
    else:
        _assistant(items, parts, root, reasoning_parts, stateless)


def _assistant(
    items: list[Body],
    parts: tuple[Mapping[str, Any], ...],
    root: str,
    reasoning_parts: ReasoningParts,
    stateless: bool,
) -> None:
    # The item the previous part went into, to join the parts of one output item again
    # (several summaries of one reasoning item, several texts of one message).
    previous: tuple[str, str | None] | None = None
    for position, part in enumerate(parts):
        kind = part["type"]
        path = format_path([position], root)
        if kind == "text":
            item_id = None if stateless else _item_id(part, path)
            if previous == ("text", item_id):
                items[-1]["content"].append({"type": "output_text", "text": part["text"]})
                continue
            entry: Body = {
                "role": "assistant",
                "content": [{"type": "output_text", "text": part["text"]}],
            }
            if item_id is not None:
                entry["id"] = item_id
            items.append(entry)
            previous = ("text", item_id)
        elif kind == "reasoning":
            item_id = _item_id(part, path)
            if item_id is None:
                if reasoning_parts == "omit":
                    continue
                raise ValidationError(
                    path,
                    "the OpenAI Responses API takes reasoning back only as a reasoning item, "
                    "and this part has no providerMetadata.openai.itemId (it did not come "
                    "from the Responses API); remove the part, or construct the adapter "
                    'with reasoning_parts="omit" to leave such reasoning out of requests',
                )
            encrypted = _encrypted_content(part, path)
            if stateless and encrypted is None:
                if reasoning_parts == "omit":
                    continue
                raise ValidationError(
                    path,
                    "with store: false the Responses API keeps no reasoning items, and this "
                    "part has no providerMetadata.openai.reasoningEncryptedContent to carry "
                    'it; request include: ["reasoning.encrypted_content"] with store: false, '
                    'or construct the adapter with reasoning_parts="omit" to leave such '
                    "reasoning out of requests",
                )
            text = cast(str, part["text"])
            if previous == ("reasoning", item_id):
                reasoning = items[-1]
                if text:
                    reasoning["summary"].append({"type": "summary_text", "text": text})
                if encrypted is not None:
                    reasoning["encrypted_content"] = encrypted
                continue
            reasoning = {
                "type": "reasoning",
                "id": item_id,
                "summary": [{"type": "summary_text", "text": text}] if text else [],
            }
            if encrypted is not None:
                reasoning["encrypted_content"] = encrypted
            items.append(reasoning)
            previous = ("reasoning", item_id)
        elif kind == "tool-call":
            call: Body = {
                "type": "function_call",
                "call_id": part["toolCallId"],
                "name": part["toolName"],
                "arguments": compact_json(part["input"]),
            }
            item_id = None if stateless else _item_id(part, path)
            if item_id is not None:
                call["id"] = item_id
            items.append(call)
            previous = None
        else:
            raise ValidationError(path, unsendable(kind, "assistant", _API))


def _item_id(part: Mapping[str, Any], path: str) -> str | None:
    item_id = provider_metadata(part, "openai").get("itemId")
    if item_id is None:
        return None
    if type(item_id) is not str or not item_id:
        raise ValidationError(
            format_path(["providerMetadata", "openai", "itemId"], path),
            "expected a non-empty string (the Responses API output item's id)",
        )
    return item_id


def _encrypted_content(part: Mapping[str, Any], path: str) -> str | None:
    encrypted = provider_metadata(part, "openai").get("reasoningEncryptedContent")
    if encrypted is None or type(encrypted) is str:
        return encrypted
    raise ValidationError(
        format_path(["providerMetadata", "openai", "reasoningEncryptedContent"], path),
        "expected a string (the reasoning item's encrypted_content) or null",
    )


def _user_content(parts: Parts, root: str) -> list[Body]:
    return user_parts(
        parts, root, _API, text=lambda text: {"type": "input_text", "text": text}, file=_file
    )


def _file(part: Mapping[str, Any], position: int, path: str) -> Body:
    media_type = cast(str, part["mediaType"])
    url = cast(str, part["url"])
    by_reference = url.startswith(("https://", "http://"))
    if not by_reference and not url.startswith("data:"):
        raise ValidationError(format_path(["url"], path), "expected a data: URL or an http(s) URL")
    if media_type.lower().startswith("image/"):
        return {"type": "input_image", "image_url": url, "detail": "auto"}
    if media_type.lower() == "application/pdf":
        if by_reference:
            return {"type": "input_file", "file_url": url}
        return {
            "type": "input_file",
            "filename": part.get("filename") or f"part-{position}.pdf",
            "file_data": url,
        }
    raise ValidationError(
        format_path(["mediaType"], path),
        f'{_API} cannot take "{media_type}" files here (images and PDFs only)',
    )


def _text_content(texts: list[str]) -> str | list[Body]:
    if len(texts) == 1:
        return texts[0]
    return [{"type": "input_text", "text": text} for text in texts]


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
