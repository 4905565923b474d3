"""One answer's events assembled into the normalized messages a store keeps (sans-IO).

:class:`AnswerAssembler` reads an answer's validated events (what the adapter produced,
in order) and builds what the AI SDK client builds from the same chunks, in the
normalized form that :func:`~ai_chat.server.convert_ui_messages` would make of the
client's copy, so that the stored answer and the client's next request agree:

* each step (split at ``start-step``, as the client starts a ``step-start`` part) is an
  assistant message ``<id>`` (later steps ``<id>:<n>``) holding the text, reasoning,
  file, tool-call and ``data-*`` parts in the order they started; text and reasoning are
  the concatenated deltas, with the last ``providerMetadata`` seen for the part;
* a tool call's input is the ``tool-input-available`` (or ``tool-input-error``) input;
  its result (``tool-output-available`` that is not preliminary, or
  ``tool-output-error`` / ``tool-input-error`` with ``isError`` and the error text) goes
  into a ``tool`` message ``<id>:tool`` (``<id>:tool:<n>``) after the step that made the
  call, the order providers need;
* a ``data-*`` event with an ``id`` replaces the earlier part of the same type and id,
  as the client does; transient data parts are not kept;
* message metadata: ``start`` and ``message-metadata`` objects merged in order, then
  ``{"finishReason", "usage"}`` from ``finish`` under the adapter's finish metadata
  object (the adapter's keys win): exactly the ``metadata`` the client ends up with;
* ``source-url`` and ``source-document`` are not kept: normalized messages have no
  such part (they are citations for the reader, which the request conversion drops too).

Steps without parts are left out; an answer without any part assembles to nothing.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final, cast

from .._types import ChatEvent

__all__ = ["AnswerAssembler"]

_PM: Final = "providerMetadata"

JSONDict = dict[str, Any]


class _Step:
    __slots__ = ("content", "results")

    def __init__(self) -> None:
        self.content: list[JSONDict] = []
        self.results: list[JSONDict] = []


class AnswerAssembler:
    """Feed it an answer's events with :meth:`feed`; :meth:`messages` assembles them.

    Args:
        first_step: the number of the answer's first step: 0 for a new answer, the
            number of steps the client already holds for a continued one (its ids then
            go on from there: ``<id>:<first_step>``...).
    """

    __slots__ = (
        "_calls",
        "_data",
        "_finished",
        "_first_step",
        "_metadata",
        "_open",
        "_steps",
        "_texts",
    )

    def __init__(self, first_step: int = 0) -> None:
        self._first_step = first_step
        self._steps: list[_Step] = [_Step()]
        self._open: dict[tuple[str, str], JSONDict] = {}  # (kind, part id) -> part
        self._texts: dict[int, list[str]] = {}  # id(part) -> its deltas
        self._calls: dict[str, tuple[JSONDict, _Step]] = {}  # toolCallId -> (call, step)
        self._data: dict[tuple[str, str], JSONDict] = {}  # (type, id) -> data part
        self._metadata: JSONDict = {}
        self._finished = False

    @property
    def finished(self) -> bool:
        """Whether ``finish`` was fed: the answer is complete."""
        return self._finished

    def feed(self, event: ChatEvent) -> None:
        """Take the next event (validated, in order, as a :class:`~ai_chat.ChatStream` yields)."""
        fields = cast("Mapping[str, Any]", event)
        kind: str = fields["type"]
        step = self._steps[-1]
        if kind == "text-delta" or kind == "reasoning-delta":
            part = self._open[(kind[:-6], fields["id"])]
            self._texts[id(part)].append(fields["delta"])
            _keep_metadata(fields, part)
        elif kind == "text-start" or kind == "reasoning-start":
            part: JSONDict = {"type": kind[:-6], "text": ""}
            _keep_metadata(fields, part)
            self._open[(kind[:-6], fields["id"])] = part
            self._texts[id(part)] = []
            step.content.append(part)
        elif kind == "text-end" or kind == "reasoning-end":
            part = self._open.pop((kind[:-4], fields["id"]))
            part["text"] = "".join(self._texts.pop(id(part)))
            _keep_metadata(fields, part)
        elif kind == "start-step":
            if step.content or step.results:
                self._steps.append(_Step())
        elif kind.startswith("tool-"):
            self._tool(kind, fields, step)
        elif kind.startswith("data-"):
            self._data_part(kind, fields, step)
        elif kind == "file":
            part = {"type": "file", "mediaType": fields["mediaType"], "url": fields["url"]}
            _keep_metadata(fields, part)
            step.content.append(part)
        elif kind == "start" or kind == "message-metadata":
            self._merge(fields.get("messageMetadata"))
        elif kind == "finish":
            facts: JSONDict = {"finishReason": fields["finishReason"]}
            if "usage" in fields:
                facts["usage"] = fields["usage"]
            self._merge(facts)
            self._merge(fields.get("messageMetadata"))
            self._finished = True
        # finish-step, source-url, source-document: nothing to keep.

    def _merge(self, metadata: object) -> None:
        if isinstance(metadata, Mapping):
            self._metadata.update(cast("Mapping[str, Any]", metadata))

    def _tool(self, kind: str, fields: Mapping[str, Any], step: _Step) -> None:
        call_id: str = fields["toolCallId"]
        if kind == "tool-input-start":
            call: JSONDict = {
                "type": "tool-call",
                "toolCallId": call_id,
                "toolName": fields["toolName"],
                "input": None,
            }
            step.content.append(call)
            self._calls[call_id] = (call, step)
        elif kind == "tool-input-available" or kind == "tool-input-error":
            known = self._calls.get(call_id)
            if known is None:
                call = {"type": "tool-call", "toolCallId": call_id, "toolName": fields["toolName"]}
                step.content.append(call)
                known = self._calls[call_id] = (call, step)
            call = known[0]
            call["input"] = fields["input"]
            _keep_metadata(fields, call)
            if kind == "tool-input-error":
                self._result(call, known[1], fields["errorText"], error=True)
        elif kind == "tool-output-available" or kind == "tool-output-error":
            if fields.get("preliminary", False):
                return
            call, call_step = self._calls[call_id]
            if kind == "tool-output-available":
                self._result(call, call_step, fields["output"], error=False, fields=fields)
            else:
                self._result(call, call_step, fields["errorText"], error=True, fields=fields)
        # tool-input-delta: the input is taken whole from tool-input-available.

    @staticmethod
    def _result(
        call: JSONDict,
        step: _Step,
        output: object,
        *,
        error: bool,
        fields: Mapping[str, Any] | None = None,
    ) -> None:
        result: JSONDict = {
            "type": "tool-result",
            "toolCallId": call["toolCallId"],
            "toolName": call["toolName"],
            "output": output,
        }
        if error:
            result["isError"] = True
        if fields is not None:
            _keep_metadata(fields, result)
        step.results.append(result)

    def _data_part(self, kind: str, fields: Mapping[str, Any], step: _Step) -> None:
        if fields.get("transient", False):
            return
        part: JSONDict = {"type": kind, "data": fields["data"]}
        part_id = fields.get("id")
        if part_id is None:
            step.content.append(part)
            return
        part["id"] = part_id
        earlier = self._data.get((kind, part_id))
        if earlier is not None:
            earlier["data"] = fields["data"]
            return
        self._data[(kind, part_id)] = part
        step.content.append(part)

    def messages(
        self, message_id: str, extra_metadata: Mapping[str, object] | None = None
    ) -> list[JSONDict]:
        """The answer as normalized messages (plain JSON values), ids from ``message_id``.

        ``extra_metadata`` is merged into the first message's metadata. Parts still
        open (an answer that never finished) are left out.
        """
        out: list[JSONDict] = []
        number = self._first_step
        metadata = {**self._metadata, **(extra_metadata or {})}
        for step in self._steps:
            content = [part for part in step.content if id(part) not in self._texts]
            if not content and not step.results:
                continue
            suffix = f":{number}" if number else ""
            if content:
                message: JSONDict = {"id": message_id + suffix, "role": "assistant"}
                message["parts"] = content
                if metadata and not any(m["role"] == "assistant" for m in out):
                    message["metadata"] = metadata
                out.append(message)
            if step.results:
                out.append(
                    {"id": f"{message_id}:tool{suffix}", "role": "tool", "parts": step.results}
                )
            number += 1
        return out


def _keep_metadata(fields: Mapping[str, Any], part: JSONDict) -> None:
    if _PM in fields:
        part[_PM] = fields[_PM]
