"""Normalized messages as OpenAI Chat Completions messages, and back.

The mapping (docs/formats.md has it side by side with the other providers):

* system messages stay ``system`` messages where they stand (their text parts as one
  string, or as ``text`` parts when there are several); ``developer`` messages read
  back as system messages;
* user text, images (``image_url``, by URL or data URL; ``detail`` from
  ``providerMetadata.openai.imageDetail``) and PDFs (``file`` with ``file_data``, a
  base64 data URL only; the filename, ``part-<n>.pdf`` when the part has none);
* assistant text (a text part with ``providerMetadata.openai.refusal`` is a
  ``refusal`` part) and tool calls (``tool_calls``, the input as a JSON string); the
  API has no input field for reasoning, so a reasoning part is an error, or left out
  with ``reasoning_parts="omit"``. Chat Completions holds an assistant's text before
  its tool calls, so a text after a call is sent before the calls;
* each tool result is a ``tool`` message (``tool_call_id``; a non-string output as its
  JSON text). The API has no error flag, so ``isError`` is not sent.
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
    image_part,
    parse_arguments,
    plain,
    read_user,
)

if TYPE_CHECKING:
    from ..history import History

__all__ = ["from_openai_chat", "to_openai_chat"]

_FMT: Final = "openai-chat"
_API: Final = "OpenAI Chat Completions"


def to_openai_chat(
    messages: Sequence[Message] | History, *, reasoning_parts: ReasoningParts = "error"
) -> list[Any]:
    """``messages`` as the ``messages`` argument of ``chat.completions.create``.

    ``messages`` are normalized messages, or a :class:`~ai_chat.history.History` (its
    request messages: streaming ones left out). Returns new plain JSON objects (they share the messages' frozen values, such as
    tool inputs); other providers' ``providerMetadata`` is not sent.

    Raises:
        FormatError: a message or part Chat Completions cannot express (a data part, an
            assistant file, a file that is neither an image nor a PDF, a PDF by URL,
            reasoning unless ``reasoning_parts="omit"``, a streaming message), naming
            it (``$.messages[3].parts[1]``).
        ValidationError: not a list of normalized messages.
    """
    messages = exported(messages)
    out: list[Any] = []
    append = out.append
    try:
        for index, message in enumerate(messages):
            role = message["role"]
            parts: Any = message["parts"]
            if "metadata" in message and is_streaming(message["metadata"]):
                raise streaming_error(_FMT, index, message)
            if role == "tool":
                for part in parts:
                    output = part["output"]
                    append(
                        {
                            "role": "tool",
                            "tool_call_id": part["toolCallId"],
                            "content": output if type(output) is str else compact_json(output),
                        }
                    )
            elif role == "assistant":
                append(_assistant(message, parts, index, reasoning_parts))
            elif role == "user":
                if len(parts) == 1 and parts[0]["type"] == "text":
                    append({"role": "user", "content": parts[0]["text"]})
                else:
                    append(
                        {
                            "role": "user",
                            "content": user_content(_FMT, message, index, _text_part, _file),
                        }
                    )
            else:
                texts = [part["text"] for part in parts]
                append(
                    {
                        "role": "system",
                        "content": texts[0]
                        if len(texts) == 1
                        else [{"type": "text", "text": text} for text in texts],
                    }
                )
    except Malformed as exc:
        malformed(messages, exc)
    return out


def _assistant(message: Message, parts: Any, index: int, reasoning_parts: ReasoningParts) -> Body:
    content: list[Body] = []
    refused = False
    calls: list[Body] = []
    for position, part in enumerate(parts):
        kind = part["type"]
        if kind == "text":
            if "providerMetadata" in part and metadata_of(part, "openai").get("refusal") is True:
                content.append({"type": "refusal", "refusal": part["text"]})
                refused = True
            else:
                content.append({"type": "text", "text": part["text"]})
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
                raise part_error(
                    _FMT,
                    index,
                    message,
                    position,
                    "OpenAI Chat Completions has no input field for reasoning; remove the "
                    'part, or pass reasoning_parts="omit" (the adapters take it too) to '
                    "leave reasoning parts out",
                )
        else:
            raise part_error(_FMT, index, message, position, unsendable(_FMT, kind, "assistant"))
    entry: Body = {"role": "assistant"}
    if len(content) == 1 and not refused:
        entry["content"] = content[0]["text"]
    elif content:
        entry["content"] = content
    else:
        entry["content"] = None if calls else ""
    if calls:
        entry["tool_calls"] = calls
    return entry


def _text_part(part: Any) -> Body:
    return {"type": "text", "text": part["text"]}


def _file(message: Message, part: Any, index: int, position: int) -> Body:
    media_type: str = part["mediaType"]
    url: str = part["url"]
    lowered = media_type.lower()
    if lowered.startswith("image/"):
        image: Body = {"url": url}
        detail = metadata_of(part, "openai").get("imageDetail")
        if detail is not None:
            image["detail"] = detail
        return {"type": "image_url", "image_url": image}
    if lowered == "application/pdf":
        if not url.startswith("data:"):
            raise part_error(
                _FMT,
                index,
                message,
                position,
                "OpenAI Chat Completions takes a PDF only as a data: URL (base64), not by "
                "reference; fetch the file and send it as a data: URL",
                "url",
            )
        filename = part.get("filename") or f"part-{position}.pdf"
        return {"type": "file", "file": {"filename": filename, "file_data": url}}
    raise part_error(
        _FMT,
        index,
        message,
        position,
        f'OpenAI Chat Completions cannot take "{media_type}" files (images and PDFs only)',
        "mediaType",
    )


# --- from Chat Completions ---------------------------------------------------------------

_SYSTEM_FIELDS: Final = frozenset({"role", "content"})
_USER_FIELDS: Final = _SYSTEM_FIELDS
_TOOL_FIELDS: Final = frozenset({"role", "content", "tool_call_id"})
_ASSISTANT_FIELDS: Final = frozenset(
    {"role", "content", "refusal", "tool_calls", "annotations", "reasoning_content", "reasoning"}
)
_AUDIO_FORMATS: Final = {"wav": "audio/wav", "mp3": "audio/mpeg"}


def from_openai_chat(
    messages: Iterable[object],
    *,
    new_id: IdSource | None = None,
    limits: JSONLimits = MESSAGE_LIMITS,
) -> tuple[Message, ...]:
    """Chat Completions messages as normalized messages.

    ``messages`` holds message objects (what :func:`to_openai_chat` returns, the
    ``messages`` of a request) or what the SDK returns (``completion.choices[0].message``,
    a ``ChatCompletionMessage``), in order. Consecutive tool messages become one tool
    message, each result named after its call; a ``refusal`` becomes a text part with
    ``providerMetadata.openai.refusal``, an answer's ``annotations`` go to its first text
    part's ``providerMetadata.openai.annotations`` (kept, but Chat Completions takes
    none back), and the ``reasoning_content`` (or ``reasoning``) of an OpenAI-compatible
    server becomes a reasoning part. ``new_id`` names each message (random ids by
    default; ``history.env.new_id`` for a history's own); each message is held to
    ``limits``.

    Raises:
        FormatError: not Chat Completions messages, or something ai_chat's messages have
            no place for (a participant ``name``, audio output, a legacy
            ``function_call``, a custom tool call, a file by ``file_id``), or a tool
            message for a call no earlier assistant message made; ``path`` names it
            (``$[2].tool_calls[0].function.arguments``).
        LimitExceededError: a message exceeds ``limits``.
    """
    builder = Builder(_FMT, new_id, limits)
    root = Where(_FMT, "$")
    for index, item in enumerate(as_items(messages, root)):
        where = root.message(index)
        message = plain(item, where)
        role = message.get("role")
        if role == "tool":
            where.fields(message, _TOOL_FIELDS)
            call_id = where.at("tool_call_id").string(message.get("tool_call_id"), empty=False)
            output = "".join(_texts(message.get("content"), where.at("content")))
            builder.tool_result(call_id, output, False, where)
            continue
        builder.end_turn()
        if role == "assistant":
            where.fields(message, _ASSISTANT_FIELDS)
            _read_assistant(message, where, builder)
        elif role == "user":
            where.fields(message, _USER_FIELDS)
            read_user(message.get("content"), where.at("content"), builder, "text", _user_entry)
        elif role in ("system", "developer"):
            where.fields(message, _SYSTEM_FIELDS)
            texts = _texts(message.get("content"), where.at("content"))
            builder.system([{"type": "text", "text": text} for text in texts])
        elif role == "function":
            raise where.at("role").no_place("a legacy function message (use tool messages)")
        else:
            raise where.at("role").expected(
                '"system", "developer", "user", "assistant" or "tool"', role
            )
        builder.end_turn()
    return builder.messages()


def _texts(content: object, where: Where) -> list[str]:
    """A system or tool message's content: a string, or text parts."""
    if type(content) is str:
        return [content]
    texts: list[str] = []
    for position, item in enumerate(where.items(content)):
        at = where.at(position)
        part = at.fields(item, ("type", "text"))
        if part.get("type") != "text":
            raise at.at("type").expected('"text"', part.get("type"))
        texts.append(at.at("text").string(part.get("text")))
    if not texts:
        raise where.error("expected a string or text parts")
    return texts


def _user_entry(kind: str, part: Mapping[str, Any], at: Where) -> dict[str, Any]:
    if kind == "image_url":
        at.fields(part, ("type", "image_url"))
        image = at.at("image_url").fields(part.get("image_url"), ("url", "detail"))
        return image_part(
            at.at("image_url").at("url").string(image.get("url"), empty=False), image.get("detail")
        )
    if kind == "file":
        at.fields(part, ("type", "file"))
        inner = at.at("file")
        fields = inner.fields(part.get("file"), ("file_data", "filename"))
        url = inner.at("file_data").string(fields.get("file_data"), empty=False)
        if not url.startswith("data:"):
            raise inner.at("file_data").expected("a data: URL", url)
        file: dict[str, Any] = {
            "type": "file",
            "mediaType": guess_media_type(url, "application/pdf"),
        }
        file["url"] = url
        if fields.get("filename"):
            file["filename"] = inner.at("filename").string(fields["filename"])
        return file
    if kind == "input_audio":
        at.fields(part, ("type", "input_audio"))
        inner = at.at("input_audio")
        audio = inner.fields(part.get("input_audio"), ("data", "format"))
        media_type = _AUDIO_FORMATS.get(audio.get("format", ""))
        if media_type is None:
            raise inner.at("format").expected('"wav" or "mp3"', audio.get("format"))
        data = inner.at("data").string(audio.get("data"))
        return {
            "type": "file",
            "mediaType": media_type,
            "url": data_url(media_type, data, inner.at("data")),
        }
    raise at.at("type").expected('"text", "image_url", "file" or "input_audio"', kind)


def _read_assistant(message: Any, where: Where, builder: Builder) -> None:
    builder.open_assistant()
    for field in ("reasoning_content", "reasoning"):
        reasoning = message.get(field)
        if reasoning:
            text = where.at(field).string(reasoning)
            builder.add("assistant", {"type": "reasoning", "text": text})
    texts: list[dict[str, Any]] = []
    content = message.get("content")
    if type(content) is str:
        if content:
            texts.append({"type": "text", "text": content})
    elif content is not None:
        at = where.at("content")
        for position, item in enumerate(at.items(content)):
            inner = Where(_FMT, f"{at.path}[{position}]", where.message_index, position)
            part = inner.fields(item, ("type", "text", "refusal"))
            if part.get("type") == "text":
                texts.append({"type": "text", "text": inner.at("text").string(part.get("text"))})
            elif part.get("type") == "refusal":
                refusal = inner.at("refusal").string(part.get("refusal"))
                texts.append(_refusal(refusal))
            else:
                raise inner.at("type").expected('"text" or "refusal"', part.get("type"))
    if message.get("refusal"):
        texts.append(_refusal(where.at("refusal").string(message["refusal"])))
    annotations = message.get("annotations")
    if annotations:
        if not texts:
            raise where.at("annotations").error("annotations without any text to annotate")
        first = texts[0]
        metadata = first.setdefault("providerMetadata", {"openai": {}})
        metadata["openai"]["annotations"] = where.at("annotations").items(annotations)
    for text in texts:
        builder.add("assistant", text)
    calls = message.get("tool_calls")
    if calls:
        at = where.at("tool_calls")
        for position, item in enumerate(at.items(calls)):
            _read_call(item, Where(_FMT, f"{at.path}[{position}]", where.message_index), builder)


def _refusal(text: str) -> dict[str, Any]:
    return {"type": "text", "text": text, "providerMetadata": {"openai": {"refusal": True}}}


def _read_call(item: object, where: Where, builder: Builder) -> None:
    call = where.fields(item, ("id", "type", "function"))
    if call.get("type", "function") != "function":
        raise where.at("type").no_place(f"a {call.get('type')!r} tool call")
    call_id = where.at("id").string(call.get("id"), empty=False)
    at = where.at("function")
    function = at.fields(call.get("function"), ("name", "arguments"))
    name = at.at("name").string(function.get("name"), empty=False)
    arguments = at.at("arguments").string(function.get("arguments", ""))
    builder.tool_call(call_id, name, parse_arguments(arguments, at.at("arguments")), {}, where)
