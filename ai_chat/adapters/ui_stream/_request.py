"""A chat request as the body ``DefaultChatTransport`` POSTs (pure code, no I/O).

The AI SDK's transport sends ``{...body, id, messages, trigger, messageId?}`` where
``messages`` is the whole history as ``UIMessage[]``. The conversion from normalized
messages:

* ``system``, ``user`` and ``assistant`` messages keep their id, role and metadata;
  text, reasoning, file and ``data-*`` parts keep their fields (text and reasoning parts
  of assistant messages are marked ``state: "done"``, as a finished answer is);
* a ``tool-call`` part becomes a ``tool-<name>`` part in state ``input-available``; the
  matching ``tool-result`` of a later ``tool`` message is folded into it (state
  ``output-available``, or ``output-error`` with ``errorText`` when ``isError``), since
  UI messages carry tool results inside the assistant message; ``tool`` messages have no
  UI message of their own (their ids and metadata are not sent);
* when the last UI message is an assistant message (tool results were just added to it),
  ``messageId`` names it: the transport's continuation of an assistant turn.

The protocol carries no tool definitions and no model parameters (the server owns
both): a request with tools, or with a parameter other than ``providerOptions``, raises
:class:`~ai_chat.ValidationError` instead of being sent without them.
``providerOptions["ui-stream"]`` is an object of extra body keys for that request,
merged over the adapter's own ``body``; options for other providers are ignored, as
every adapter ignores options that are not its own.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, Final, cast

from ..._errors import ValidationError
from ..._types import ChatRequest, Message
from ...limits._walk import format_path

__all__ = ["OPTIONS_KEY", "PROTOCOL_KEYS", "request_body", "ui_messages"]

OPTIONS_KEY: Final = "ui-stream"
# The keys the transport writes last, over any extra body key of the same name.
PROTOCOL_KEYS: Final = ("id", "messages", "trigger", "messageId")

Body = dict[str, Any]


def request_body(request: ChatRequest, *, chat_id: str, extra: Mapping[str, object]) -> Body:
    """The JSON body for ``request`` (objects may be ``FrozenDict``, arrays ``tuple``).

    Raises :class:`~ai_chat.ValidationError` for tools, model parameters, a tool result
    without its call, and per-request body keys that are not an object or name a
    protocol key.
    """
    if request["tools"]:
        raise ValidationError(
            "$.tools",
            "the UI message stream protocol carries no tool definitions: the server "
            "defines its tools; send the request without tools",
        )
    body: Body = dict(extra)
    for name, value in request["parameters"].items():
        if name != "providerOptions":
            raise ValidationError(
                format_path([name], "$.parameters"),
                "the UI message stream protocol carries no model parameters: the server "
                "chooses them; send extra body keys in "
                f'parameters.providerOptions["{OPTIONS_KEY}"] if your server reads them',
            )
        options = cast("Mapping[str, object]", value).get(OPTIONS_KEY)
        if options is not None:
            body.update(
                per_call_body(
                    options, format_path(["providerOptions", OPTIONS_KEY], "$.parameters")
                )
            )
    messages = ui_messages(request["messages"])
    body["id"] = chat_id
    body["messages"] = messages
    body["trigger"] = "submit-message"
    if messages and messages[-1]["role"] == "assistant":
        body["messageId"] = messages[-1]["id"]
    return body


def per_call_body(options: object, path: str) -> Mapping[str, object]:
    """Extra body keys given per request; ``path`` names them in errors."""
    if not isinstance(options, Mapping):
        raise ValidationError(path, "expected an object of extra request body keys")
    fields = cast("Mapping[str, object]", options)
    for key in PROTOCOL_KEYS:
        if key in fields:
            raise ValidationError(
                format_path([key], path),
                f'"{key}" is written by the adapter (the protocol keys are '
                f"{', '.join(PROTOCOL_KEYS)}); it cannot be an extra body key",
            )
    return fields


def ui_messages(messages: tuple[Message, ...]) -> list[Body]:
    """The history as ``UIMessage`` objects (see the module docstring)."""
    out: list[Body] = []
    calls: dict[str, Body] = {}  # toolCallId -> its UI tool part, to fold results into
    for index, message in enumerate(messages):
        role = message["role"]
        parts = cast("tuple[Mapping[str, Any], ...]", message["parts"])
        if role == "tool":
            for number, part in enumerate(parts):
                _fold_result(part, calls, format_path([index, "parts", number], "$.messages"))
            continue
        ui: Body = {"id": message["id"], "role": role, "parts": []}
        if "metadata" in message:
            ui["metadata"] = message["metadata"]
        done = role == "assistant"
        append = ui["parts"].append
        for part in parts:
            kind = part["type"]
            if kind == "text" or kind == "reasoning":
                converted: Body = {"type": kind, "text": part["text"]}
                if done:
                    converted["state"] = "done"
                if "providerMetadata" in part:
                    converted["providerMetadata"] = part["providerMetadata"]
            elif kind == "file":
                converted = {"type": "file", "mediaType": part["mediaType"], "url": part["url"]}
                for name in ("filename", "providerMetadata"):
                    if name in part:
                        converted[name] = part[name]
            elif kind == "tool-call":
                converted = {
                    "type": f"tool-{part['toolName']}",
                    "toolCallId": part["toolCallId"],
                    "state": "input-available",
                    "input": part["input"],
                }
                if "providerMetadata" in part:
                    converted["callProviderMetadata"] = part["providerMetadata"]
                calls[part["toolCallId"]] = converted
            else:  # data-<name>: normalization admits nothing else here
                converted = {"type": kind, "data": part["data"]}
                if "id" in part:
                    converted["id"] = part["id"]
            append(converted)
        out.append(ui)
    return out


def _fold_result(part: Mapping[str, Any], calls: dict[str, Body], path: str) -> None:
    call_id = part["toolCallId"]
    call = calls.get(call_id)
    if call is None:
        raise ValidationError(
            format_path(["toolCallId"], path),
            f'no earlier assistant message has tool call "{call_id}"; UI messages carry a '
            "tool result inside the assistant message that made the call",
        )
    if call["state"] != "input-available":
        raise ValidationError(
            format_path(["toolCallId"], path), f'tool call "{call_id}" already has a result'
        )
    if call["type"] != f"tool-{part['toolName']}":
        raise ValidationError(
            format_path(["toolName"], path),
            f'tool call "{call_id}" was made to "{call["type"][5:]}", not "{part["toolName"]}"',
        )
    output = part["output"]
    if part.get("isError", False):
        call["state"] = "output-error"
        call["errorText"] = (
            output if type(output) is str else json.dumps(output, ensure_ascii=False)
        )
    else:
        call["state"] = "output-available"
        call["output"] = output
    if "providerMetadata" in part:
        call["resultProviderMetadata"] = part["providerMetadata"]
