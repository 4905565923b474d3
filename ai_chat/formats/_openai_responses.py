"""Normalized messages as OpenAI Responses API input items, and back.

The mapping (docs/formats.md has it side by side with the other providers), into the
``input`` item list, the conversation in order:

* system and user messages are input messages (``input_text``; images as
  ``input_image``, by URL or data URL, ``detail`` from
  ``providerMetadata.openai.imageDetail``, ``"auto"`` otherwise; PDFs as ``input_file``:
  ``file_url`` for an http(s) URL, ``file_data`` for a data URL);
* assistant text with ``providerMetadata.openai.itemId`` is the output message item of
  that id (``output_text`` with its ``annotations``, a refusal as ``refusal``, the
  message's ``phase``; consecutive parts of one item joined again), and without one an
  assistant message of that text;
* reasoning parts are ``reasoning`` items: ``id`` from ``providerMetadata.openai.itemId``,
  ``encrypted_content`` from ``providerMetadata.openai.reasoningEncryptedContent``, one
  summary per part (or raw ``reasoning_text`` for a part with
  ``providerMetadata.openai.reasoningText``); reasoning from elsewhere (no item id) is an
  error, or left out with ``reasoning_parts="omit"``;
* tool calls are ``function_call`` items (``call_id``, ``name``, ``arguments`` as a JSON
  string, ``id`` from ``itemId``), tool results ``function_call_output`` items (no error
  flag in the API: ``isError`` is not sent).

With ``store=False`` (the request's ``store: false``) the API keeps no items, so message
and function call ids are left out (the API would look them up and fail), and a
reasoning item needs its encrypted content.
"""

# pyright: reportUnknownVariableType=false, reportUnknownMemberType=false, reportUnknownArgumentType=false

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Final

from .._types import Message
from ..limits import JSONLimits
from ._export import (
    Body,
    Malformed,
    ReasoningParts,
    compact_json,
    exported,
    is_streaming,
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
    guess_media_type,
    image_part,
    parse_arguments,
    plain,
    read_user,
)

if TYPE_CHECKING:
    from ..history import History

__all__ = ["from_openai_responses", "to_openai_responses"]

_FMT: Final = "openai-responses"


def to_openai_responses(
    messages: Sequence[Message] | History,
    *,
    reasoning_parts: ReasoningParts = "error",
    store: bool = True,
) -> list[Any]:
    """``messages`` as the ``input`` argument of ``responses.create``.

    ``messages`` are normalized messages, or a :class:`~ai_chat.history.History` (its
    request messages: streaming ones left out). ``store`` is the request's ``store`` (``False``: the API keeps no items, so item ids
    are left out and reasoning travels by its encrypted content). Returns new plain JSON
    objects sharing the messages' frozen values; other providers' ``providerMetadata``
    is not sent.

    Raises:
        FormatError: a message or part the Responses API cannot express (a data part, an
            assistant file, a file that is neither an image nor a PDF, reasoning without
            its item id, or without its encrypted content when ``store`` is false,
            unless ``reasoning_parts="omit"``; a streaming message), naming it.
        ValidationError: not a list of normalized messages.
    """
    messages = exported(messages)
    items: list[Any] = []
    try:
        for index, message in enumerate(messages):
            role = message["role"]
            parts: Any = message["parts"]
            if "metadata" in message and is_streaming(message["metadata"]):
                raise streaming_error(_FMT, index, message)
            if role == "assistant":
                _assistant(items, message, index, reasoning_parts, store)
            elif role == "tool":
                items.extend(
                    {
                        "type": "function_call_output",
                        "call_id": part["toolCallId"],
                        "output": output_text(part["output"]),
                    }
                    for part in parts
                )
            elif role == "user":
                items.append(
                    {
                        "role": "user",
                        "content": user_content(_FMT, message, index, _input_text, _file),
                    }
                )
            else:
                texts = [part["text"] for part in parts]
                items.append(
                    {
                        "role": "system",
                        "content": texts[0]
                        if len(texts) == 1
                        else [{"type": "input_text", "text": text} for text in texts],
                    }
                )
    except Malformed as exc:
        malformed(messages, exc)
    return items


def _assistant(
    items: list[Any], message: Message, index: int, reasoning_parts: ReasoningParts, store: bool
) -> None:
    # The item the previous part went into, to join the parts of one output item again
    # (several summaries of one reasoning item, several texts of one message).
    previous: tuple[str, str] | None = None
    parts: Any = message["parts"]
    for position, part in enumerate(parts):
        kind = part["type"]
        metadata = metadata_of(part, "openai") if "providerMetadata" in part else None
        if kind == "text":
            item_id = _item_id(metadata, message, index, position) if store else None
            if item_id is None:
                entry: Body = {"role": "assistant", "content": part["text"]}
                if metadata and "phase" in metadata:
                    entry["phase"] = metadata["phase"]
                items.append(entry)
                previous = None
                continue
            content = _output_content(part, metadata)
            if previous == ("message", item_id):
                items[-1]["content"].append(content)
                continue
            entry = {
                "type": "message",
                "id": item_id,
                "role": "assistant",
                "status": "completed",
                "content": [content],
            }
            if metadata and "phase" in metadata:
                entry["phase"] = metadata["phase"]
            items.append(entry)
            previous = ("message", item_id)
        elif kind == "reasoning":
            item_id = _item_id(metadata, message, index, position)
            if item_id is None:
                if reasoning_parts == "omit":
                    continue
                raise part_error(
                    _FMT,
                    index,
                    message,
                    position,
                    "the OpenAI Responses API takes reasoning back only as a reasoning item, "
                    "and this part has no providerMetadata.openai.itemId (it did not come "
                    'from the Responses API); remove the part, or pass reasoning_parts="omit" '
                    "(the adapters take it too) to leave such reasoning out",
                )
            encrypted = _encrypted(metadata, message, index, position)
            if not store and encrypted is None:
                if reasoning_parts == "omit":
                    continue
                raise part_error(
                    _FMT,
                    index,
                    message,
                    position,
                    "with store: false the Responses API keeps no reasoning items, and this "
                    "part has no providerMetadata.openai.reasoningEncryptedContent to carry "
                    'it; request include: ["reasoning.encrypted_content"] with store: false, '
                    'or pass reasoning_parts="omit" to leave such reasoning out',
                )
            reasoning: Any
            if previous == ("reasoning", item_id):
                reasoning = items[-1]
            else:
                reasoning = {"type": "reasoning", "id": item_id, "summary": []}
                items.append(reasoning)
                previous = ("reasoning", item_id)
            text = part["text"]
            if metadata is not None and metadata.get("reasoningText") is True:
                reasoning.setdefault("content", []).append({"type": "reasoning_text", "text": text})
            elif text:
                reasoning["summary"].append({"type": "summary_text", "text": text})
            if encrypted is not None:
                reasoning["encrypted_content"] = encrypted
        elif kind == "tool-call":
            call: Body = {
                "type": "function_call",
                "call_id": part["toolCallId"],
                "name": part["toolName"],
                "arguments": compact_json(part["input"]),
            }
            item_id = _item_id(metadata, message, index, position) if store else None
            if item_id is not None:
                call["id"] = item_id
            items.append(call)
            previous = None
        else:
            raise part_error(_FMT, index, message, position, unsendable(_FMT, kind, "assistant"))


def _output_content(part: Any, metadata: Any) -> Body:
    if metadata.get("refusal") is True:
        return {"type": "refusal", "refusal": part["text"]}
    return {
        "type": "output_text",
        "text": part["text"],
        "annotations": list(metadata.get("annotations", ())),
    }


def _item_id(metadata: Any, message: Message, index: int, position: int) -> str | None:
    item_id = metadata.get("itemId") if metadata else None
    if item_id is None:
        return None
    if type(item_id) is not str or not item_id:
        raise part_error(
            _FMT,
            index,
            message,
            position,
            "expected a non-empty string (the Responses API output item's id)",
            "providerMetadata",
            "openai",
            "itemId",
        )
    return item_id


def _encrypted(metadata: Any, message: Message, index: int, position: int) -> str | None:
    encrypted = metadata.get("reasoningEncryptedContent")
    if encrypted is None or type(encrypted) is str:
        return encrypted
    raise part_error(
        _FMT,
        index,
        message,
        position,
        "expected a string (the reasoning item's encrypted_content) or null",
        "providerMetadata",
        "openai",
        "reasoningEncryptedContent",
    )


def _input_text(part: Any) -> Body:
    return {"type": "input_text", "text": part["text"]}


def _file(message: Message, part: Any, index: int, position: int) -> Body:
    media_type: str = part["mediaType"]
    url: str = part["url"]
    by_reference = url.startswith(("https://", "http://"))
    if not by_reference and not url.startswith("data:"):
        raise part_error(
            _FMT, index, message, position, "expected a data: URL or an http(s) URL", "url"
        )
    lowered = media_type.lower()
    if lowered.startswith("image/"):
        detail = metadata_of(part, "openai").get("imageDetail", "auto")
        return {"type": "input_image", "image_url": url, "detail": detail}
    if lowered == "application/pdf":
        filename = part.get("filename")
        if by_reference:
            entry: Body = {"type": "input_file", "file_url": url}
            if filename:
                entry["filename"] = filename
            return entry
        return {
            "type": "input_file",
            "filename": filename or f"part-{position}.pdf",
            "file_data": url,
        }
    raise part_error(
        _FMT,
        index,
        message,
        position,
        f'the OpenAI Responses API cannot take "{media_type}" files here (images and PDFs only)',
        "mediaType",
    )


# --- from Responses input or output items --------------------------------------------------

_MESSAGE_FIELDS: Final = frozenset({"type", "role", "content", "id", "status", "phase"})
_REASONING_FIELDS: Final = frozenset(
    {"type", "id", "summary", "content", "encrypted_content", "status"}
)
_CALL_FIELDS: Final = frozenset({"type", "id", "call_id", "name", "arguments", "status"})
_OUTPUT_FIELDS: Final = frozenset({"type", "id", "call_id", "output", "status"})


def from_openai_responses(
    items: Iterable[object],
    *,
    new_id: IdSource | None = None,
    limits: JSONLimits = MESSAGE_LIMITS,
) -> tuple[Message, ...]:
    """Responses API items as normalized messages.

    ``items`` holds input items (what :func:`to_openai_responses` returns) or what the
    SDK returns (``response.output``: ``ResponseOutputMessage``,
    ``ResponseReasoningItem``, ``ResponseFunctionToolCall``), in order. Consecutive
    assistant items (messages, reasoning, function calls) become one assistant message;
    item ids go to ``providerMetadata.openai.itemId``, a reasoning item's encrypted
    content to its last part's ``reasoningEncryptedContent``, output text annotations to
    ``annotations`` and a message's ``phase`` to ``phase``, so that the items go back to
    the API as they came. An item's ``status`` is not kept. ``new_id`` and ``limits`` as
    for :func:`from_openai_chat`.

    Raises:
        FormatError: not Responses items, or an item ai_chat's messages have no place
            for (a built-in tool's call, an item reference, a file by ``file_id``), or a
            function call output for a call no earlier item made; ``path`` names it.
        LimitExceededError: a message exceeds ``limits``.
    """
    builder = Builder(_FMT, new_id, limits)
    root = Where(_FMT, "$")
    for index, raw in enumerate(as_items(items, root)):
        where = root.message(index)
        item = plain(raw, where)
        kind = item.get("type", "message")
        if kind == "message":
            where.fields(item, _MESSAGE_FIELDS)
            role = item.get("role")
            if role == "assistant":
                _read_assistant_message(item, where, builder)
                continue
            builder.end_turn()
            if role == "user":
                read_user(
                    item.get("content"), where.at("content"), builder, "input_text", _user_entry
                )
            elif role in ("system", "developer"):
                _read_system(item.get("content"), where.at("content"), builder)
            else:
                raise where.at("role").expected(
                    '"user", "assistant", "system" or "developer"', role
                )
            builder.end_turn()
        elif kind == "reasoning":
            _read_reasoning(where.fields(item, _REASONING_FIELDS), where, builder)
        elif kind == "function_call":
            where.fields(item, _CALL_FIELDS)
            call_id = where.at("call_id").string(item.get("call_id"), empty=False)
            name = where.at("name").string(item.get("name"), empty=False)
            arguments = where.at("arguments").string(item.get("arguments", ""))
            extra = _with_item_id({}, item, where)
            tool_input = parse_arguments(arguments, where.at("arguments"))
            builder.tool_call(call_id, name, tool_input, extra, where)
        elif kind == "function_call_output":
            where.fields(item, _OUTPUT_FIELDS)
            call_id = where.at("call_id").string(item.get("call_id"), empty=False)
            output = _output(item.get("output"), where.at("output"))
            builder.tool_result(call_id, output, False, where)
        else:
            raise where.at("type").no_place(f"a {kind!r} item")
    return builder.messages()


def _with_item_id(part: dict[str, Any], item: Any, where: Where) -> dict[str, Any]:
    item_id = item.get("id")
    if item_id is not None:
        item_id = where.at("id").string(item_id, empty=False)
        part["providerMetadata"] = {"openai": {"itemId": item_id}}
    return part


def _output(output: object, where: Where) -> str:
    if type(output) is str:
        return output
    texts: list[str] = []
    for position, raw in enumerate(where.items(output)):
        at = where.at(position)
        entry = at.fields(raw, ("type", "text"))
        if entry.get("type") != "input_text":
            raise at.at("type").no_place(f"a {entry.get('type')!r} tool output")
        texts.append(at.at("text").string(entry.get("text")))
    return "".join(texts)


def _read_system(content: object, where: Where, builder: Builder) -> None:
    if type(content) is str:
        builder.system([{"type": "text", "text": content}])
        return
    parts: list[dict[str, Any]] = []
    for position, raw in enumerate(where.items(content)):
        at = Where(_FMT, f"{where.path}[{position}]", where.message_index, position)
        entry = at.fields(raw, ("type", "text"))
        if entry.get("type") != "input_text":
            raise at.at("type").expected('"input_text"', entry.get("type"))
        parts.append({"type": "text", "text": at.at("text").string(entry.get("text"))})
    if not parts:
        raise where.error("a system message needs content")
    builder.system(parts)


def _user_entry(kind: str, entry: Mapping[str, Any], at: Where) -> dict[str, Any]:
    if kind == "input_image":
        at.fields(entry, ("type", "image_url", "detail"))
        detail = entry.get("detail")
        url = at.at("image_url").string(entry.get("image_url"), empty=False)
        return image_part(url, None if detail == "auto" else detail)
    if kind == "input_file":
        at.fields(entry, ("type", "file_data", "file_url", "filename"))
        data, link = entry.get("file_data"), entry.get("file_url")
        if (data is None) == (link is None):
            raise at.error("expected file_data or file_url (a file by file_id has no URL)")
        url = (
            at.at("file_data").string(data, empty=False)
            if data is not None
            else at.at("file_url").string(link, empty=False)
        )
        if data is not None and not url.startswith("data:"):
            raise at.at("file_data").expected("a data: URL", url)
        file: dict[str, Any] = {
            "type": "file",
            "mediaType": guess_media_type(url, "application/octet-stream"),
            "url": url,
        }
        if entry.get("filename"):
            file["filename"] = at.at("filename").string(entry["filename"])
        return file
    raise at.at("type").expected('"input_text", "input_image" or "input_file"', kind)


def _read_assistant_message(item: Any, where: Where, builder: Builder) -> None:
    content = item.get("content")
    phase = item.get("phase")
    if type(content) is str:
        part: dict[str, Any] = {"type": "text", "text": content}
        if phase is not None:
            part["providerMetadata"] = {"openai": {"phase": phase}}
        builder.add("assistant", part)
        return
    item_id = item.get("id")
    if item_id is not None:
        item_id = where.at("id").string(item_id, empty=False)
    entries = where.at("content").items(content)
    if not entries:
        builder.add("assistant", {"type": "text", "text": ""} | _metadata(item_id, phase))
    for position, raw in enumerate(entries):
        at = Where(_FMT, f"{where.path}.content[{position}]", where.message_index, position)
        entry = at.fields(raw, ("type", "text", "annotations", "refusal", "logprobs"))
        metadata = _metadata(item_id, phase)
        kind = entry.get("type")
        if kind == "output_text":
            text = at.at("text").string(entry.get("text"))
            annotations = entry.get("annotations")
            if annotations:
                metadata.setdefault("providerMetadata", {"openai": {}})
                metadata["providerMetadata"]["openai"]["annotations"] = at.at("annotations").items(
                    annotations
                )
        elif kind == "refusal":
            text = at.at("refusal").string(entry.get("refusal"))
            metadata.setdefault("providerMetadata", {"openai": {}})
            metadata["providerMetadata"]["openai"]["refusal"] = True
        else:
            raise at.at("type").expected('"output_text" or "refusal"', kind)
        builder.add("assistant", {"type": "text", "text": text} | metadata)


def _metadata(item_id: str | None, phase: object) -> dict[str, Any]:
    own: dict[str, Any] = {}
    if item_id is not None:
        own["itemId"] = item_id
    if phase is not None:
        own["phase"] = phase
    return {"providerMetadata": {"openai": own}} if own else {}


def _read_reasoning(item: Any, where: Where, builder: Builder) -> None:
    item_id = where.at("id").string(item.get("id"), empty=False)
    texts: list[tuple[str, bool]] = []
    at = where.at("summary")
    for position, raw in enumerate(at.items(item.get("summary", ()))):
        entry = at.at(position).fields(raw, ("type", "text"))
        if entry.get("type") != "summary_text":
            raise at.at(position).at("type").expected('"summary_text"', entry.get("type"))
        texts.append((at.at(position).at("text").string(entry.get("text")), False))
    content = item.get("content")
    if content:
        at = where.at("content")
        for position, raw in enumerate(at.items(content)):
            entry = at.at(position).fields(raw, ("type", "text"))
            if entry.get("type") != "reasoning_text":
                raise at.at(position).at("type").expected('"reasoning_text"', entry.get("type"))
            texts.append((at.at(position).at("text").string(entry.get("text")), True))
    if not texts:
        texts.append(("", False))
    encrypted = item.get("encrypted_content")
    if encrypted is not None:
        encrypted = where.at("encrypted_content").string(encrypted)
    for number, (text, raw_text) in enumerate(texts):
        own: dict[str, Any] = {"itemId": item_id}
        if raw_text:
            own["reasoningText"] = True
        if encrypted is not None and number == len(texts) - 1:
            own["reasoningEncryptedContent"] = encrypted
        builder.add(
            "assistant", {"type": "reasoning", "text": text, "providerMetadata": {"openai": own}}
        )
