"""Normalized messages as a Gemini ``generateContent`` payload, and back.

The mapping (docs/formats.md has it side by side with the other providers), in the
API's own camelCase spelling (what google-genai accepts as well as its snake_case):

* leading system messages are ``systemInstruction`` (text parts); a system message after
  the conversation started cannot be placed and is an error;
* user text, and files: ``inlineData`` from a base64 data URL, ``fileData`` with
  ``fileUri`` for an ``https``/``http``/``gs`` URL (Files API URIs too): images, PDFs,
  audio, video and text;
* assistant text, reasoning (``thought: true`` parts), tool calls (``functionCall``) and
  files, each with the ``thoughtSignature`` from ``providerMetadata.gemini`` when there
  is one; the role is ``model``;
* tool messages are ``functionResponse`` parts in a ``user`` turn (consecutive ones in
  one turn): ``{"output": ...}``, or ``{"error": ...}`` for ``isError``, named after
  the call;
* tool call ids: the Gemini API usually issues none, so ai_chat makes them up
  (:data:`GENERATED_ID_PREFIX`); those are not sent, while ids the API issued go back
  on the call and its response.
"""

# pyright: reportUnknownVariableType=false, reportUnknownMemberType=false, reportUnknownArgumentType=false

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Final, NotRequired, TypedDict

from .._types import Message
from ..limits import JSONLimits
from ._export import (
    Body,
    Malformed,
    base64_payload,
    exported,
    is_streaming,
    late_system_message,
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
    decode_bytes,
    id_source,
    plain,
)

if TYPE_CHECKING:
    from ..history import History

__all__ = ["GENERATED_ID_PREFIX", "GeminiPayload", "from_gemini", "to_gemini"]

GENERATED_ID_PREFIX: Final = "gemini-call-"
"""How tool call ids that ai_chat made up begin (the Gemini API usually issues none):
such ids are never sent to the API."""

_FMT: Final = "gemini"
_MEDIA_PREFIXES: Final = ("image/", "audio/", "video/", "text/")
_URL_SCHEMES: Final = ("https://", "http://", "gs://")


class GeminiPayload(TypedDict):
    """The contents and system instruction of a ``generateContent`` request, as
    :func:`to_gemini` returns them (``systemInstruction`` only when there is one).

    With google-genai: ``client.models.generate_content(model=...,
    contents=payload["contents"], config={"system_instruction":
    payload["systemInstruction"]})``; over REST, the body's own fields. The elements
    are plain JSON objects, typed ``Any`` so that they pass to the SDK's typed
    parameters as they are.
    """

    contents: list[Any]
    systemInstruction: NotRequired[Any]


def to_gemini(messages: Sequence[Message] | History) -> GeminiPayload:
    """``messages`` as the ``contents`` and ``systemInstruction`` of a Gemini request.

    ``messages`` are normalized messages, or a :class:`~ai_chat.history.History` (its
    request messages: streaming ones left out). Returns new plain JSON objects sharing the messages' frozen values; other providers'
    ``providerMetadata`` is not sent (their reasoning text goes as ``thought`` parts).

    Raises:
        FormatError: a message or part Gemini cannot express (a data part, a file type
            it does not read, a non-object tool input, a system message after the first
            turn, a streaming message), naming it.
        ValidationError: not a list of normalized messages.
    """
    messages = exported(messages)
    system: list[Any] = []
    contents: list[Any] = []
    results: list[Body] | None = None  # the open user turn of function responses
    calls: dict[str, str] = {}  # tool call id -> function name
    try:
        for index, message in enumerate(messages):
            role = message["role"]
            parts: Any = message["parts"]
            if "metadata" in message and is_streaming(message["metadata"]):
                raise streaming_error(_FMT, index, message)
            if role == "tool":
                responses = [_function_response(part, calls) for part in parts]
                if results is None:
                    results = responses
                    contents.append({"role": "user", "parts": results})
                else:
                    results.extend(responses)
                continue
            results = None
            if role == "user":
                contents.append(
                    {"role": "user", "parts": user_content(_FMT, message, index, _text, _file)}
                )
            elif role == "assistant":
                contents.append({"role": "model", "parts": _model(message, parts, index, calls)})
            elif contents:
                raise late_system_message(_FMT, index, message, "Gemini")
            else:
                system.extend({"text": part["text"]} for part in parts)
    except Malformed as exc:
        malformed(messages, exc)
    payload: GeminiPayload = {"contents": contents}
    if system:
        payload["systemInstruction"] = {"parts": system}
    return payload


def _text(part: Any) -> Body:
    return {"text": part["text"]}


def _model(message: Message, parts: Any, index: int, calls: dict[str, str]) -> list[Body]:
    out: list[Body] = []
    for position, part in enumerate(parts):
        kind = part["type"]
        if kind == "text":
            entry: Body = {"text": part["text"]}
        elif kind == "reasoning":
            entry = {"text": part["text"], "thought": True}
        elif kind == "tool-call":
            arguments = part["input"]
            if not isinstance(arguments, Mapping):
                raise part_error(
                    _FMT,
                    index,
                    message,
                    position,
                    "Gemini function calls take an object as input, not "
                    f"{type(arguments).__name__}",
                    "input",
                )
            call_id: str = part["toolCallId"]
            call: Body = {"name": part["toolName"], "args": arguments}
            if not call_id.startswith(GENERATED_ID_PREFIX):
                call["id"] = call_id
            calls[call_id] = part["toolName"]
            entry = {"functionCall": call}
        elif kind == "file":
            entry = _file(message, part, index, position)
        else:
            raise part_error(_FMT, index, message, position, unsendable(_FMT, kind, "assistant"))
        if "providerMetadata" in part:
            signature = metadata_of(part, _FMT).get("thoughtSignature")
            if signature is not None:
                if type(signature) is not str or not signature:
                    raise part_error(
                        _FMT,
                        index,
                        message,
                        position,
                        "expected a non-empty string (the base64 thought signature Gemini sent)",
                        "providerMetadata",
                        _FMT,
                        "thoughtSignature",
                    )
                entry["thoughtSignature"] = signature
        out.append(entry)
    return out


def _function_response(part: Any, calls: Mapping[str, str]) -> Body:
    call_id: str = part["toolCallId"]
    output = part["output"]
    response: Body = {
        # Gemini pairs responses with calls by name (and id, when it issued one).
        "name": calls.get(call_id, part["toolName"]),
        "response": {"error": output} if part.get("isError") else {"output": output},
    }
    if not call_id.startswith(GENERATED_ID_PREFIX):
        response["id"] = call_id
    return {"functionResponse": response}


def _file(message: Message, part: Any, index: int, position: int) -> Body:
    media_type: str = part["mediaType"]
    lowered = media_type.lower()
    if not (lowered == "application/pdf" or lowered.startswith(_MEDIA_PREFIXES)):
        raise part_error(
            _FMT,
            index,
            message,
            position,
            f'Gemini cannot take "{media_type}" files (images, PDFs, audio, video and text)',
            "mediaType",
        )
    url: str = part["url"]
    if url.startswith("data:"):
        data = base64_payload(_FMT, index, message, position, url, "Gemini")
        return {"inlineData": {"mimeType": media_type, "data": data}}
    if url.startswith(_URL_SCHEMES):
        return {"fileData": {"mimeType": media_type, "fileUri": url}}
    raise part_error(
        _FMT,
        index,
        message,
        position,
        "expected a data: URL, an http(s) URL or a gs:// URI",
        "url",
    )


# --- from Gemini ---------------------------------------------------------------------------

# google-genai's snake_case spelling of the fields read here, and the API's camelCase.
_CAMEL: Final = {
    "system_instruction": "systemInstruction",
    "function_call": "functionCall",
    "function_response": "functionResponse",
    "inline_data": "inlineData",
    "file_data": "fileData",
    "mime_type": "mimeType",
    "file_uri": "fileUri",
    "thought_signature": "thoughtSignature",
    "display_name": "displayName",
}
_PART_FIELDS: Final = frozenset(
    {
        "text",
        "thought",
        "thoughtSignature",
        "functionCall",
        "functionResponse",
        "inlineData",
        "fileData",
    }
)


def _camel(value: object, where: Where) -> dict[str, Any]:
    obj = plain(value, where)
    return {_CAMEL.get(key, key): item for key, item in obj.items()}


def from_gemini(
    payload: Mapping[str, object] | Iterable[object],
    *,
    new_id: IdSource | None = None,
    limits: JSONLimits = MESSAGE_LIMITS,
) -> tuple[Message, ...]:
    """A Gemini payload as normalized messages.

    ``payload`` is ``{"systemInstruction": ..., "contents": [...]}`` (what
    :func:`to_gemini` returns; the system instruction a string or a content, optional),
    a list of contents, or what google-genai returns: a ``Candidate`` (its content), a
    ``GenerateContentResponse`` with one candidate, or a ``Content``; camelCase or
    snake_case fields. A ``user`` content's ``functionResponse`` parts become a tool
    message and its other parts a user message, in their order; a function call without
    an id gets one made up (:data:`GENERATED_ID_PREFIX`, never sent back), and a response
    without one answers the first unanswered call of its name; ``{"output": x}`` is the
    output ``x``, ``{"error": x}`` an error output ``x``, another response object the
    output itself. ``thoughtSignature`` goes to ``providerMetadata.gemini``, as the API's
    standard base64. ``new_id`` and ``limits`` as for :func:`from_openai_chat`.

    Raises:
        FormatError: not a Gemini payload, or a part ai_chat's messages have no place
            for (executable code and its result, video metadata...), or a function
            response for a call no earlier content made; ``path`` names it
            (``$.contents[2].parts[0]``).
        LimitExceededError: a message exceeds ``limits``.
    """
    builder = Builder(_FMT, new_id, limits)
    ids = id_source(new_id)
    top = Where(_FMT, "$")
    if isinstance(payload, Mapping) or callable(getattr(payload, "model_dump", None)):
        fields = _camel(payload, top)
        if "candidates" in fields:
            candidates = top.at("candidates").items(fields["candidates"])
            if len(candidates) != 1:
                raise top.at("candidates").error(
                    f"expected one candidate, got {len(candidates)}: pass the one to keep"
                )
            fields = _camel(candidates[0], top.at("candidates").at(0))
        if "content" in fields:  # a candidate
            root, contents = top, [fields["content"]]
        elif "parts" in fields:  # a content
            root, contents = top, [fields]
        else:
            top.fields(fields, ("systemInstruction", "contents"))
            system = fields.get("systemInstruction")
            if system is not None:
                _read_system(system, top.at("systemInstruction"), builder)
            root = top.at("contents")
            contents = list(root.items(fields.get("contents", ())))
    else:
        root, contents = top, list(as_items(payload, top))
    for index, raw in enumerate(contents):
        where = root.message(index)
        content = _camel(raw, where)
        where.fields(content, ("role", "parts"))
        role = content.get("role", "user")
        if role not in ("user", "model"):
            raise where.at("role").expected('"user" or "model"', role)
        builder.end_turn()
        if role == "model":
            builder.open_assistant()
        for position, item in enumerate(where.at("parts").items(content.get("parts", ()))):
            _read_part(item, where.part("parts", position), role, builder, ids)
        builder.end_turn()
    return builder.messages()


def _read_system(system: object, where: Where, builder: Builder) -> None:
    if type(system) is str:
        builder.system([{"type": "text", "text": system}])
        return
    content = _camel(system, where)
    where.fields(content, ("role", "parts"))
    parts: list[dict[str, Any]] = []
    for position, item in enumerate(where.at("parts").items(content.get("parts", ()))):
        at = where.part("parts", position)
        part = at.fields(_camel(item, at), ("text",))
        parts.append({"type": "text", "text": at.at("text").string(part.get("text"))})
    if parts:
        builder.system(parts)


def _read_part(item: object, where: Where, role: str, builder: Builder, ids: IdSource) -> None:
    part = _camel(item, where)
    where.fields(part, _PART_FIELDS)
    signature = part.get("thoughtSignature")
    own: dict[str, Any] = {}
    if signature is not None:
        own = {
            "providerMetadata": {
                _FMT: {"thoughtSignature": decode_bytes(signature, where.at("thoughtSignature"))}
            }
        }
    if "functionResponse" in part:
        if role != "user":
            raise where.at("functionResponse").error("a function response in a model turn")
        _read_response(part["functionResponse"], where.at("functionResponse"), builder)
        return
    target = "assistant" if role == "model" else "user"
    if "functionCall" in part:
        if role != "model":
            raise where.at("functionCall").error("a function call in a user turn")
        at = where.at("functionCall")
        call = at.fields(_camel(part["functionCall"], at), ("id", "name", "args"))
        name = at.at("name").string(call.get("name"), empty=False)
        arguments = call.get("args", {})
        if not isinstance(arguments, Mapping):
            raise at.at("args").expected("an object", arguments)
        call_id = call.get("id")
        call_id = (
            at.at("id").string(call_id, empty=False)
            if call_id is not None
            else GENERATED_ID_PREFIX + ids()
        )
        builder.tool_call(call_id, name, arguments, own, where)
    elif "inlineData" in part or "fileData" in part:
        builder.add(target, _read_file(part, where) | own)
    elif "text" in part or signature is not None:
        text = where.at("text").string(part.get("text", ""))
        thought = part.get("thought", False)
        if type(thought) is not bool:
            raise where.at("thought").expected("a boolean", thought)
        if thought and role != "model":
            raise where.at("thought").error("a thought in a user turn")
        builder.add(target, {"type": "reasoning" if thought else "text", "text": text} | own)
    else:
        raise where.error(
            "a part with none of text, functionCall, functionResponse, inlineData, fileData"
        )


def _read_file(part: Mapping[str, Any], where: Where) -> dict[str, Any]:
    if "inlineData" in part:
        at = where.at("inlineData")
        blob = at.fields(_camel(part["inlineData"], at), ("mimeType", "data"))
        media_type = at.at("mimeType").string(blob.get("mimeType"), empty=False)
        url = data_url(media_type, decode_bytes(blob.get("data"), at.at("data")), at.at("data"))
    else:
        at = where.at("fileData")
        ref = at.fields(_camel(part["fileData"], at), ("mimeType", "fileUri"))
        media_type = at.at("mimeType").string(ref.get("mimeType"), empty=False)
        url = at.at("fileUri").string(ref.get("fileUri"), empty=False)
    return {"type": "file", "mediaType": media_type, "url": url}


def _read_response(value: object, where: Where, builder: Builder) -> None:
    response = where.fields(_camel(value, where), ("id", "name", "response"))
    name = where.at("name").string(response.get("name"), empty=False)
    call_id = response.get("id")
    if call_id is not None:
        call_id = where.at("id").string(call_id, empty=False)
    else:
        call_id = builder.pending_named(name)
        if call_id is None:
            raise where.error(
                f"a response of {name!r} without an id, and no earlier call of {name!r} is "
                "unanswered"
            )
    body = response.get("response", {})
    if not isinstance(body, Mapping):
        raise where.at("response").expected("an object", body)
    if len(body) == 1 and "output" in body:
        builder.tool_result(call_id, body["output"], False, where)
    elif len(body) == 1 and "error" in body:
        builder.tool_result(call_id, body["error"], True, where)
    else:
        builder.tool_result(call_id, body, False, where)
