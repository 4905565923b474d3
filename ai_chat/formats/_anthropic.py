"""Normalized messages as an Anthropic Messages payload, and back.

The mapping (docs/formats.md has it side by side with the other providers):

* leading system messages are ``system`` (text blocks); a system message after the
  conversation started cannot be placed and is an error;
* user text, images (``image``: ``base64`` from a data URL, ``url`` otherwise) and
  documents (``document``: a PDF as ``base64`` or ``url``, plain text as a ``text``
  source; the filename as ``title``);
* assistant text, reasoning (``thinking`` with ``providerMetadata.anthropic.signature``,
  ``redacted_thinking`` with ``providerMetadata.anthropic.redactedData``; unsigned
  reasoning is an error, or left out with ``reasoning_parts="omit"``) and tool calls
  (``tool_use``, an object input);
* tool messages are ``tool_result`` blocks (``is_error``) in a user turn, consecutive
  ones in one turn;
* ``providerMetadata.anthropic.cacheControl`` on a part is its block's
  ``cache_control``, ``providerMetadata.anthropic.citations`` a text block's
  ``citations``.
"""

# pyright: reportUnknownVariableType=false, reportUnknownMemberType=false, reportUnknownArgumentType=false

from __future__ import annotations

import base64
import binascii
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Final, NotRequired, TypedDict

from .._types import Message
from ..limits import JSONLimits
from ._export import (
    Body,
    Malformed,
    ReasoningParts,
    base64_payload,
    exported,
    is_streaming,
    late_system_message,
    malformed,
    metadata_of,
    output_text,
    part_error,
    streaming_error,
    unsendable,
    user_content,
)
from ._import import (
    MESSAGE_LIMITS,
    Builder,
    IdSource,
    Where,
    as_items,
    data_url,
    guess_media_type,
    plain,
)

if TYPE_CHECKING:
    from ..history import History

__all__ = ["AnthropicPayload", "from_anthropic", "to_anthropic"]

_FMT: Final = "anthropic"
_IMAGE_TYPES: Final = frozenset({"image/jpeg", "image/png", "image/gif", "image/webp"})


class AnthropicPayload(TypedDict):
    """The ``system`` and ``messages`` arguments of ``messages.create``, as
    :func:`to_anthropic` returns them (``system`` only when there is a system message).

    Pass them on with ``client.messages.create(model=..., max_tokens=..., **payload)``.
    The elements are plain JSON objects, typed ``Any`` so that they pass to the SDK's
    typed parameters as they are.
    """

    messages: list[Any]
    system: NotRequired[list[Any]]


def to_anthropic(
    messages: Sequence[Message] | History, *, reasoning_parts: ReasoningParts = "error"
) -> AnthropicPayload:
    """``messages`` as the ``system`` and ``messages`` of an Anthropic request.

    ``messages`` are normalized messages, or a :class:`~ai_chat.history.History` (its
    request messages: streaming ones left out). Returns new plain JSON objects sharing the messages' frozen values; other providers'
    ``providerMetadata`` is not sent.

    Raises:
        FormatError: a message or part Anthropic cannot express (a data part, an
            assistant file, a file type it does not read, a non-object tool input,
            reasoning without a signature unless ``reasoning_parts="omit"``, a system
            message after the first turn, a streaming message), naming it.
        ValidationError: not a list of normalized messages.
    """
    messages = exported(messages)
    system: list[Any] = []
    turns: list[Any] = []
    results: list[Body] | None = None  # the open user turn of tool results, if any
    try:
        for index, message in enumerate(messages):
            role = message["role"]
            parts: Any = message["parts"]
            if "metadata" in message and is_streaming(message["metadata"]):
                raise streaming_error(_FMT, index, message)
            if role == "tool":
                blocks = [_tool_result(part) for part in parts]
                if results is None:
                    results = blocks
                    turns.append({"role": "user", "content": results})
                else:
                    results.extend(blocks)
                continue
            results = None
            if role == "user":
                turns.append(
                    {
                        "role": "user",
                        "content": user_content(_FMT, message, index, _text_block, _file),
                    }
                )
            elif role == "assistant":
                content = _assistant(message, parts, index, reasoning_parts)
                turns.append({"role": "assistant", "content": content})
            elif turns:
                raise late_system_message(_FMT, index, message, "Anthropic")
            else:
                system.extend(_text_block(part) for part in parts)
    except Malformed as exc:
        malformed(messages, exc)
    payload: AnthropicPayload = {"messages": turns}
    if system:
        payload["system"] = system
    return payload


def _cached(block: Body, part: Any) -> Body:
    if "providerMetadata" in part:
        cache_control = metadata_of(part, "anthropic").get("cacheControl")
        if cache_control is not None:
            block["cache_control"] = cache_control
    return block


def _text_block(part: Any) -> Body:
    block: Body = {"type": "text", "text": part["text"]}
    if "providerMetadata" in part:
        metadata = metadata_of(part, "anthropic")
        if "citations" in metadata:
            block["citations"] = metadata["citations"]
        if "cacheControl" in metadata:
            block["cache_control"] = metadata["cacheControl"]
    return block


def _tool_result(part: Any) -> Body:
    block: Body = {
        "type": "tool_result",
        "tool_use_id": part["toolCallId"],
        "content": output_text(part["output"]),
    }
    if part.get("isError"):
        block["is_error"] = True
    return _cached(block, part)


def _assistant(
    message: Message, parts: Any, index: int, reasoning_parts: ReasoningParts
) -> list[Body]:
    content: list[Body] = []
    for position, part in enumerate(parts):
        kind = part["type"]
        if kind == "text":
            content.append(_text_block(part))
        elif kind == "tool-call":
            tool_input = part["input"]
            if not isinstance(tool_input, Mapping):
                raise part_error(
                    _FMT,
                    index,
                    message,
                    position,
                    "Anthropic tool calls take an object as input, not "
                    f"{type(tool_input).__name__}",
                    "input",
                )
            block: Body = {
                "type": "tool_use",
                "id": part["toolCallId"],
                "name": part["toolName"],
                "input": tool_input,
            }
            content.append(_cached(block, part))
        elif kind == "reasoning":
            thinking = _thinking(message, part, index, position, reasoning_parts)
            if thinking is not None:
                content.append(thinking)
        else:
            raise part_error(_FMT, index, message, position, unsendable(_FMT, kind, "assistant"))
    return content


def _thinking(
    message: Message, part: Any, index: int, position: int, reasoning_parts: ReasoningParts
) -> Body | None:
    metadata = metadata_of(part, "anthropic")
    redacted = metadata.get("redactedData")
    if redacted is not None:
        if type(redacted) is not str:
            raise part_error(
                _FMT,
                index,
                message,
                position,
                "expected a string (the redacted_thinking block's data)",
                "providerMetadata",
                "anthropic",
                "redactedData",
            )
        return {"type": "redacted_thinking", "data": redacted}
    signature = metadata.get("signature")
    if type(signature) is str and signature:
        return {"type": "thinking", "thinking": part["text"], "signature": signature}
    if signature is not None:
        raise part_error(
            _FMT,
            index,
            message,
            position,
            "expected a non-empty string (the thinking block's signature)",
            "providerMetadata",
            "anthropic",
            "signature",
        )
    if reasoning_parts == "omit":
        return None
    raise part_error(
        _FMT,
        index,
        message,
        position,
        "Anthropic takes reasoning back only as a signed thinking block, and this part has "
        "no providerMetadata.anthropic.signature (or redactedData); remove the part, or "
        'pass reasoning_parts="omit" (the adapters take it too) to leave unsigned '
        "reasoning out",
    )


def _file(message: Message, part: Any, index: int, position: int) -> Body:
    media_type: str = part["mediaType"].lower()
    url: str = part["url"]
    if media_type in _IMAGE_TYPES:
        kind = "image"
    elif media_type in ("application/pdf", "text/plain"):
        kind = "document"
    else:
        raise part_error(
            _FMT,
            index,
            message,
            position,
            f'Anthropic cannot take "{part["mediaType"]}" files (JPEG, PNG, GIF and WebP '
            "images, PDFs and plain text)",
            "mediaType",
        )
    if url.startswith("data:"):
        data = base64_payload(_FMT, index, message, position, url, "Anthropic")
        if media_type == "text/plain":
            source: Body = {
                "type": "text",
                "media_type": media_type,
                "data": _plain_text(data, message, index, position),
            }
        else:
            source = {"type": "base64", "media_type": media_type, "data": data}
    elif url.startswith(("https://", "http://")) and media_type != "text/plain":
        source = {"type": "url", "url": url}
    else:
        raise part_error(
            _FMT,
            index,
            message,
            position,
            "expected a data: URL"
            + (" (Anthropic reads plain text only inline)" if media_type == "text/plain" else "")
            + (" or an http(s) URL" if media_type != "text/plain" else ""),
            "url",
        )
    block: Body = {"type": kind, "source": source}
    filename = part.get("filename")
    if kind == "document" and filename:
        block["title"] = filename  # image blocks have no name field
    return _cached(block, part)


def _plain_text(data: str, message: Message, index: int, position: int) -> str:
    try:
        return base64.b64decode(data, validate=True).decode("utf-8")
    except (binascii.Error, ValueError):
        raise part_error(
            _FMT,
            index,
            message,
            position,
            "Anthropic reads a plain text document as text: expected base64 of UTF-8 text",
            "url",
        ) from None


# --- from Anthropic ------------------------------------------------------------------------

# A response Message's own fields, beside its role and content: not part of the message.
_RESPONSE_FIELDS: Final = frozenset(
    {
        "id",
        "type",
        "model",
        "stop_reason",
        "stop_sequence",
        "stop_details",
        "usage",
        "container",
        "context_management",
    }
)
_MESSAGE_FIELDS: Final = frozenset({"role", "content"})
_TEXT_FIELDS: Final = frozenset({"type", "text", "cache_control", "citations"})
_FILE_FIELDS: Final = frozenset({"type", "source", "cache_control", "title"})
_TOOL_USE_FIELDS: Final = frozenset({"type", "id", "name", "input", "cache_control", "caller"})
_RESULT_FIELDS: Final = frozenset({"type", "tool_use_id", "content", "is_error", "cache_control"})


def from_anthropic(
    payload: Mapping[str, object] | Iterable[object],
    *,
    new_id: IdSource | None = None,
    limits: JSONLimits = MESSAGE_LIMITS,
) -> tuple[Message, ...]:
    """An Anthropic payload as normalized messages.

    ``payload`` is ``{"system": ..., "messages": [...]}`` (what :func:`to_anthropic`
    returns; ``system`` a string or text blocks, optional), or a list of messages: message
    params, or what the SDK returns (a ``Message``, whose ``id``, ``usage`` and stop
    reason are not part of it). The system becomes one system message; a user turn's
    ``tool_result`` blocks become a tool message, each result named after its call, and
    its other blocks a user message, in their order; thinking signatures and redacted
    thinking go to ``providerMetadata.anthropic``, byte for byte. ``new_id`` and
    ``limits`` as for :func:`from_openai_chat`.

    Raises:
        FormatError: not an Anthropic payload, or a block ai_chat's messages have no
            place for (a server tool's use or result, a search result, a file by
            ``file_id``, a tool result holding images), or a tool result for a call no
            earlier turn made; ``path`` names it (``$.messages[1].content[0]``).
        LimitExceededError: a message exceeds ``limits``.
    """
    builder = Builder(_FMT, new_id, limits)
    top = Where(_FMT, "$")
    if isinstance(payload, Mapping):
        fields = top.fields(payload, ("system", "messages"))
        system = fields.get("system")
        if system is not None:
            _read_system(system, top.at("system"), builder)
        root = top.at("messages")
        turns: Iterable[object] = root.items(fields.get("messages", ()))
    else:
        root, turns = top, as_items(payload, top)
    for index, item in enumerate(turns):
        where = root.message(index)
        turn = plain(item, where)
        response = turn.get("type") == "message"
        where.fields(turn, _MESSAGE_FIELDS | _RESPONSE_FIELDS if response else _MESSAGE_FIELDS)
        role = turn.get("role")
        content = turn.get("content")
        builder.end_turn()
        if role == "user":
            _read_content(content, where, builder, "user")
        elif role == "assistant":
            builder.open_assistant()
            _read_content(content, where, builder, "assistant")
        else:
            raise where.at("role").expected('"user" or "assistant"', role)
        builder.end_turn()
    return builder.messages()


def _read_system(system: object, where: Where, builder: Builder) -> None:
    if type(system) is str:
        builder.system([{"type": "text", "text": system}])
        return
    parts: list[dict[str, Any]] = []
    for position, raw in enumerate(where.items(system)):
        at = Where(_FMT, f"{where.path}[{position}]", None, position)
        block = at.fields(raw, _TEXT_FIELDS)
        if block.get("type") != "text":
            raise at.at("type").expected('"text"', block.get("type"))
        parts.append(_text_part(block, at))
    if parts:
        builder.system(parts)


def _text_part(block: Mapping[str, Any], where: Where) -> dict[str, Any]:
    part: dict[str, Any] = {"type": "text", "text": where.at("text").string(block.get("text"))}
    own: dict[str, Any] = {}
    if block.get("citations"):
        own["citations"] = where.at("citations").items(block["citations"])
    if block.get("cache_control"):
        own["cacheControl"] = block["cache_control"]
    if own:
        part["providerMetadata"] = {"anthropic": own}
    return part


def _with_cache(part: dict[str, Any], block: Mapping[str, Any]) -> dict[str, Any]:
    if block.get("cache_control"):
        part["providerMetadata"] = {"anthropic": {"cacheControl": block["cache_control"]}}
    return part


def _read_content(content: object, where: Where, builder: Builder, role: str) -> None:
    if type(content) is str:
        builder.add("user" if role == "user" else "assistant", {"type": "text", "text": content})
        return
    blocks = where.at("content").items(content)
    for position, raw in enumerate(blocks):
        at = where.part("content", position)
        block = plain(raw, at)
        kind = block.get("type")
        if kind == "tool_result" and role == "user":
            _read_result(at.fields(block, _RESULT_FIELDS), at, builder)
            continue
        if kind == "text":
            part = _text_part(at.fields(block, _TEXT_FIELDS), at)
        elif kind in ("image", "document") and role == "user":
            part = _read_file(at.fields(block, _FILE_FIELDS), at)
        elif kind == "tool_use" and role == "assistant":
            at.fields(block, _TOOL_USE_FIELDS)
            caller = block.get("caller")
            if caller is not None and caller != {"type": "direct"}:
                raise at.at("caller").no_place("a tool call made by a server tool")
            call_id = at.at("id").string(block.get("id"), empty=False)
            name = at.at("name").string(block.get("name"), empty=False)
            tool_input = block.get("input")
            if not isinstance(tool_input, Mapping):
                raise at.at("input").expected("an object", tool_input)
            builder.tool_call(call_id, name, tool_input, _with_cache({}, block), at)
            continue
        elif kind == "thinking" and role == "assistant":
            at.fields(block, ("type", "thinking", "signature"))
            part = {
                "type": "reasoning",
                "text": at.at("thinking").string(block.get("thinking")),
                "providerMetadata": {
                    "anthropic": {
                        "signature": at.at("signature").string(block.get("signature"), empty=False)
                    }
                },
            }
        elif kind == "redacted_thinking" and role == "assistant":
            at.fields(block, ("type", "data"))
            data = at.at("data").string(block.get("data"), empty=False)
            part = {
                "type": "reasoning",
                "text": "",
                "providerMetadata": {"anthropic": {"redactedData": data}},
            }
        else:
            raise at.at("type").no_place(f"a {kind!r} block in a {role} turn")
        builder.add("user" if role == "user" else "assistant", part)


def _read_result(block: Mapping[str, Any], where: Where, builder: Builder) -> None:
    call_id = where.at("tool_use_id").string(block.get("tool_use_id"), empty=False)
    content = block.get("content", "")
    if type(content) is str:
        output = content
    else:
        texts: list[str] = []
        at = where.at("content")
        for position, raw in enumerate(at.items(content)):
            inner = plain(raw, at.at(position))
            if inner.get("type") != "text":
                raise at.at(position).no_place(
                    f"a {inner.get('type')!r} block in a tool result (tool outputs are JSON)"
                )
            at.at(position).fields(inner, ("type", "text"))
            texts.append(at.at(position).at("text").string(inner.get("text")))
        output = "".join(texts)
    is_error = block.get("is_error", False)
    if type(is_error) is not bool:
        raise where.at("is_error").expected("a boolean", is_error)
    builder.tool_result(call_id, output, is_error, where, _with_cache({}, block))


def _read_file(block: Mapping[str, Any], where: Where) -> dict[str, Any]:
    at = where.at("source")
    source = at.fields(block.get("source"), ("type", "media_type", "data", "url"))
    kind = source.get("type")
    if kind == "base64":
        media_type = at.at("media_type").string(source.get("media_type"), empty=False)
        data = at.at("data").string(source.get("data"))
        url = data_url(media_type, data, at.at("data"))
    elif kind == "url":
        url = at.at("url").string(source.get("url"), empty=False)
        media_type = _url_media_type(block.get("type"), url)
    elif kind == "text" and block.get("type") == "document":
        media_type = "text/plain"
        text = at.at("data").string(source.get("data"))
        url = "data:text/plain;base64," + base64.b64encode(text.encode("utf-8")).decode("ascii")
    else:
        raise at.at("type").no_place(f"a {kind!r} source")
    part: dict[str, Any] = {"type": "file", "mediaType": media_type, "url": url}
    if block.get("title"):
        if block.get("type") != "document":
            raise where.at("title").no_place("an image title")
        part["filename"] = where.at("title").string(block["title"])
    return _with_cache(part, block)


def _url_media_type(kind: object, url: str) -> str:
    if kind == "document":
        return "application/pdf"  # Anthropic reads only PDFs by URL
    return guess_media_type(url, "image/*")
