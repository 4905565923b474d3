"""AI SDK ``UIMessage`` s (what ``DefaultChatTransport`` sends) into normalized messages.

The mapping, part by part (``$.messages[i]`` paths name the problem in a 422 answer):

========================  =========================================================
UI part                   normalized
========================  =========================================================
``text``                  ``text`` (``state`` and ``citations`` dropped)
``reasoning``             ``reasoning`` (assistant only)
``file``                  ``file``
``data-<name>``           ``data-<name>`` (kept: adapters that cannot send data parts
                          leave them out)
``step-start``            ends a step: each step of an assistant message becomes its own
                          assistant message, followed by a ``tool`` message holding the
                          results of that step's tool calls (the order providers need)
``tool-<name>``,          ``input-streaming``: dropped (the call never completed);
``dynamic-tool``          ``input-available``, ``approval-requested``,
                          ``approval-responded`` (approved): a ``tool-call`` only;
                          ``output-available``: a ``tool-call`` and a ``tool-result``;
                          ``output-error``: a ``tool-call`` and a ``tool-result`` with
                          ``isError`` and the error text as output;
                          ``output-denied`` or ``approval-responded`` (denied): a
                          ``tool-call`` and a ``tool-result`` with ``isError`` saying the
                          call was denied (and why, when the user said)
``source-url``,           dropped: citations for the reader, not model input
``source-document``,
``reasoning-file``,
``custom``,
``steering-message``
anything else             rejected (422)
========================  =========================================================

Message ids: the first step of an assistant message keeps the message's id, later
steps are ``<id>:<step>``; tool messages are ``<id>:tool`` (``<id>:tool:<step>`` after
the first step). Message ``metadata`` that is a JSON object is kept (on the first
message made from it).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Final, cast

from .._errors import ValidationError
from ..limits._walk import format_path

__all__ = ["ConvertedMessages", "convert_ui_messages"]

_ROOT: Final = "$.messages"
_TOOL_STATES: Final = frozenset(
    {
        "input-streaming",
        "input-available",
        "approval-requested",
        "approval-responded",
        "output-available",
        "output-error",
        "output-denied",
    }
)
_DROPPED: Final = frozenset(
    {"source-url", "source-document", "reasoning-file", "custom", "steering-message"}
)
_MISSING: Final = object()

Path = list[str | int]
JSONDict = dict[str, object]


class ConvertedMessages:
    """The result of a conversion.

    Attributes:
        messages: normalized messages (plain dicts, for :func:`ai_chat.create_chat_stream`).
        message_id: the id the answer must reuse (a continued assistant message), or
            ``None`` for a new message.
    """

    __slots__ = ("message_id", "messages")

    def __init__(self, messages: list[JSONDict], message_id: str | None) -> None:
        self.messages = messages
        self.message_id = message_id


def _fail(path: Path, reason: str) -> ValidationError:
    return ValidationError(format_path(path, _ROOT), reason)


def _describe(value: object) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, dict):
        return "an object"
    if isinstance(value, list):
        return "an array"
    if isinstance(value, str):
        return "a string"
    return "a number"


def _string(obj: Mapping[str, object], key: str, path: Path, *, empty: bool = False) -> str:
    value = obj.get(key, _MISSING)
    if value is _MISSING:
        raise _fail(path, f'missing required field "{key}"')
    if type(value) is not str or (not empty and not value):
        expected = "a string" if empty else "a non-empty string"
        raise _fail([*path, key], f"expected {expected}, got {_describe(value)}")
    return value


def _copy_optional(
    source: Mapping[str, object], target: JSONDict, key: str, path: Path, kind: type
) -> None:
    value = source.get(key, _MISSING)
    if value is _MISSING:
        return
    if type(value) is not kind:
        name = {str: "a string", dict: "an object", bool: "a boolean"}[kind]
        hint = " (leave an optional field out instead of sending null)" if value is None else ""
        raise _fail([*path, key], f"expected {name}, got {_describe(value)}{hint}")
    target[key] = value


def convert_ui_messages(
    messages: object, *, trigger: str, message_id: str | None
) -> ConvertedMessages:
    """Convert the request's ``messages`` (parsed JSON) for ``trigger`` and ``messageId``.

    ``regenerate-message``: the message ``message_id`` names and everything after it are
    dropped when it is an assistant message (after it, when a user message); without an
    id, a trailing assistant message is dropped. ``submit-message``: history after the
    message ``message_id`` names is dropped; then, if the last message is an assistant
    message, the answer continues it and reuses its id.

    Raises:
        ValidationError: the messages are not ``UIMessage`` s, or nothing is left to
            answer; ``path`` names the place, such as ``$.messages[2].parts[0].type``.
    """
    if type(messages) is not list:
        raise ValidationError(_ROOT, f"expected an array of messages, got {_describe(messages)}")
    items = cast("list[object]", messages)
    if not items:
        raise ValidationError(_ROOT, "expected at least one message")
    checked = [_message(item, [index]) for index, item in enumerate(items)]
    cut = len(checked)
    if message_id is not None:
        for index, (ui_id, role, _) in enumerate(checked):
            if ui_id == message_id:
                keep_it = trigger != "regenerate-message" or role != "assistant"
                cut = index + 1 if keep_it else index
                break
    elif trigger == "regenerate-message" and checked[-1][1] == "assistant":
        cut -= 1
    checked = checked[:cut]
    if not checked:
        raise ValidationError(_ROOT, "no message is left to answer after regenerating")
    continued = None
    if trigger == "submit-message" and checked[-1][1] == "assistant":
        continued = checked[-1][0]
    out: list[JSONDict] = []
    seen: dict[str, int] = {}
    for index, (ui_id, _, converted) in enumerate(checked):
        first = seen.setdefault(ui_id, index)
        if first != index:
            raise _fail([index, "id"], f'the id "{ui_id}" is also message {first}\'s id')
        out.extend(converted)
    ids = [message["id"] for message in out]
    if len(set(ids)) != len(ids):
        # A made-up id (<id>:1, <id>:tool) met an id the client sent.
        taken = next(i for i in ids if ids.count(i) > 1)
        raise ValidationError(
            _ROOT, f'the message id "{taken}" is taken twice: rename the message that sent it'
        )
    if not out:
        raise ValidationError(_ROOT, "no message holds anything a model can read")
    return ConvertedMessages(out, continued)


def _message(item: object, path: Path) -> tuple[str, str, list[JSONDict]]:
    if type(item) is not dict:
        raise _fail(path, f"expected a message object, got {_describe(item)}")
    message = cast(JSONDict, item)
    ui_id = _string(message, "id", path)
    role = message.get("role", _MISSING)
    if role is _MISSING:
        raise _fail(path, 'missing required field "role"')
    if role not in ("system", "user", "assistant"):
        shown = f'"{role}"' if type(role) is str else _describe(role)
        raise _fail([*path, "role"], f'expected "system", "user" or "assistant", got {shown}')
    parts = message.get("parts", _MISSING)
    if parts is _MISSING:
        raise _fail(path, 'missing required field "parts"')
    if type(parts) is not list:
        raise _fail([*path, "parts"], f"expected an array of parts, got {_describe(parts)}")
    metadata = message.get("metadata")
    kept = cast(JSONDict, metadata) if type(metadata) is dict else None
    role = cast(str, role)
    part_list = cast("list[object]", parts)
    if role == "assistant":
        return ui_id, role, _assistant(ui_id, part_list, kept, path)
    converted: list[object] = []
    for number, part in enumerate(part_list):
        out = _content_part(part, role, [*path, "parts", number])
        if out is not None:
            converted.append(out)
    if not converted:
        raise _fail([*path, "parts"], f"a {role} message needs at least one text or file part")
    normalized: JSONDict = {"id": ui_id, "role": role, "parts": converted}
    if kept is not None:
        normalized["metadata"] = kept
    return ui_id, role, [normalized]


def _part_type(part: object, path: Path) -> tuple[JSONDict, str]:
    if type(part) is not dict:
        raise _fail(path, f"expected a part object, got {_describe(part)}")
    fields = cast(JSONDict, part)
    kind = fields.get("type", _MISSING)
    if kind is _MISSING:
        raise _fail(path, 'missing required field "type"')
    if type(kind) is not str:
        raise _fail([*path, "type"], f"expected a part type string, got {_describe(kind)}")
    return fields, kind


def _content_part(part: object, role: str, path: Path) -> JSONDict | None:
    """A text, reasoning, file or data part converted; None for a part that is dropped."""
    fields, kind = _part_type(part, path)
    if kind == "text" or (kind == "reasoning" and role == "assistant"):
        out: JSONDict = {"type": kind, "text": _string(fields, "text", path, empty=True)}
    elif kind == "file" and role != "system":
        out = {
            "type": "file",
            "mediaType": _string(fields, "mediaType", path),
            "url": _string(fields, "url", path),
        }
        _copy_optional(fields, out, "filename", path, str)
    elif kind.startswith("data-") and len(kind) > 5 and role != "system":
        if "data" not in fields:
            raise _fail(path, 'missing required field "data"')
        out = {"type": kind, "data": fields["data"]}
        _copy_optional(fields, out, "id", path, str)
        return out
    elif kind in _DROPPED or kind == "step-start":
        return None
    elif kind in ("reasoning", "file") or kind.startswith("data-"):
        raise _fail([*path, "type"], f'a {role} message cannot hold a "{kind}" part')
    else:
        raise _fail([*path, "type"], _unknown(kind))
    _copy_optional(fields, out, "providerMetadata", path, dict)
    return out


def _unknown(kind: str) -> str:
    return (
        f'unknown part type "{kind}" (expected text, reasoning, file, tool-<name>, '
        "dynamic-tool, data-<name>, step-start, source-url, source-document, reasoning-file, "
        "custom or steering-message)"
    )


def _assistant(
    ui_id: str, parts: Sequence[object], metadata: JSONDict | None, path: Path
) -> list[JSONDict]:
    steps: list[tuple[list[JSONDict], list[JSONDict]]] = [([], [])]
    for number, part in enumerate(parts):
        part_path: Path = [*path, "parts", number]
        fields, kind = _part_type(part, part_path)
        if kind == "step-start":
            if steps[-1][0] or steps[-1][1]:
                steps.append(([], []))
            continue
        if kind == "dynamic-tool" or (kind.startswith("tool-") and len(kind) > 5):
            call, result = _tool(fields, kind, part_path)
            if call is not None:
                steps[-1][0].append(call)
            if result is not None:
                steps[-1][1].append(result)
            continue
        converted = _content_part(fields, "assistant", part_path)
        if converted is not None:
            steps[-1][0].append(converted)
    out: list[JSONDict] = []
    step_number = 0
    for content, results in steps:
        if not content and not results:
            continue
        suffix = f":{step_number}" if step_number else ""
        message: JSONDict = {"id": ui_id + suffix, "role": "assistant", "parts": content}
        if metadata is not None and not out:
            message["metadata"] = metadata
        out.append(message)
        if results:
            out.append({"id": f"{ui_id}:tool{suffix}", "role": "tool", "parts": results})
        step_number += 1
    return out


def _tool(fields: JSONDict, kind: str, path: Path) -> tuple[JSONDict | None, JSONDict | None]:
    call_id = _string(fields, "toolCallId", path)
    name = _string(fields, "toolName", path) if kind == "dynamic-tool" else kind[5:]
    state = fields.get("state", _MISSING)
    if state is _MISSING:
        raise _fail(path, 'missing required field "state"')
    if type(state) is not str or state not in _TOOL_STATES:
        shown = f'"{state}"' if type(state) is str else _describe(state)
        raise _fail([*path, "state"], f"expected a tool part state, got {shown}")
    if state == "input-streaming":
        return None, None
    tool_input = fields.get("input", _MISSING)
    if tool_input is _MISSING:
        tool_input = fields.get("rawInput")
    call: JSONDict = {
        "type": "tool-call",
        "toolCallId": call_id,
        "toolName": name,
        "input": tool_input,
    }
    _copy_provider_metadata(fields, call, "callProviderMetadata", path)
    result: JSONDict = {"type": "tool-result", "toolCallId": call_id, "toolName": name}
    approval = fields.get("approval")
    decision: JSONDict = cast(JSONDict, approval) if type(approval) is dict else {}
    approved = decision.get("approved")
    if state == "output-available":
        result["output"] = fields.get("output")
    elif state == "output-error":
        result["output"] = _string(fields, "errorText", path, empty=True)
        result["isError"] = True
    elif state == "output-denied" or (state == "approval-responded" and approved is False):
        reason = decision.get("reason")
        denied = "The tool call was denied"
        result["output"] = f"{denied}: {reason}" if isinstance(reason, str) and reason else denied
        result["isError"] = True
    else:
        return call, None
    _copy_provider_metadata(fields, result, "resultProviderMetadata", path)
    return call, result


def _copy_provider_metadata(fields: JSONDict, target: JSONDict, key: str, path: Path) -> None:
    value = fields.get(key, _MISSING)
    if value is _MISSING:
        return
    if type(value) is not dict:
        raise _fail([*path, key], f"expected an object, got {_describe(value)}")
    target["providerMetadata"] = value
