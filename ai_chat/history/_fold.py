"""One answer's events folded into the normalized messages they describe (sans-IO).

:class:`AnswerFold` reads the events of one answer, in order (the UI message stream
vocabulary a :class:`~ai_chat.ChatStream` yields), and builds what the AI SDK client
builds from the same chunks, as normalized messages:

* each step (split at ``start-step``, as the client starts a ``step-start`` part) is an
  assistant message ``<id>`` (later steps ``<id>:<n>``) holding the text, reasoning,
  file, tool-call and ``data-*`` parts in the order they started; text and reasoning are
  the concatenated deltas, with the last ``providerMetadata`` seen for the part;
* a tool call's input is the ``tool-input-available`` (or ``tool-input-error``) input;
  its result (``tool-output-available`` that is not preliminary, or
  ``tool-output-error`` / ``tool-input-error`` with ``isError`` and the error text) goes
  into a ``tool`` message ``<id>:tool`` (``<id>:tool:<n>``) after the step that made the
  call, the order providers need; a later result of the same call replaces an earlier
  one;
* a ``data-*`` event with an ``id`` replaces the earlier part of the same type and id,
  as the client does; transient data parts are not kept;
* message metadata: the ``messageMetadata`` objects of ``start``, ``message-metadata``
  and ``finish`` merged in order, on the first assistant message;
* ``finish``'s reason and usage, and the ``source-url`` / ``source-document`` events
  (normalized messages have no source part), are kept on the fold
  (:attr:`~AnswerFold.finish_reason`, :attr:`~AnswerFold.usage`,
  :attr:`~AnswerFold.sources`) for the caller to record.

Constant work per event: a delta appends to its open part; the messages are built only
when asked for, and a part that ended is built once. Events after ``finish`` or
:meth:`~AnswerFold.stop` are ignored (a late delta changes nothing).
"""

# pyright: reportUnknownVariableType=false, reportUnknownMemberType=false, reportUnknownArgumentType=false

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, Final, cast

from .._errors import LimitExceededError, ProtocolError
from .._events import EventChecker
from .._types import FinishReason, Message, Usage
from ..limits import FrozenDict, JSONLimits, JSONObject, freeze_json
from ._validate import MESSAGE_LIMITS

__all__ = ["AnswerFold"]

_PM: Final = "providerMetadata"
_EVENT_LIMITS: Final = JSONLimits()


class _Part:
    """One part being built: its fields, its text chunks while open, its frozen form."""

    __slots__ = ("chunks", "fields", "frozen", "open")

    def __init__(self, fields: dict[str, Any], *, chunks: bool = False) -> None:
        self.fields = fields
        self.chunks: list[str] | None = [] if chunks else None
        self.frozen: FrozenDict[str, Any] | None = None
        self.open = chunks

    def build(self) -> FrozenDict[str, Any]:
        frozen = self.frozen
        if frozen is None:
            if self.chunks is not None:
                text = "".join(self.chunks)
                self.chunks = [text] if text else []
                self.fields["text"] = text
            frozen = FrozenDict(self.fields)
            if not self.open:
                self.frozen = frozen  # an open part may still change
        return frozen


class _Step:
    __slots__ = ("content", "results")

    def __init__(self) -> None:
        self.content: list[_Part] = []
        self.results: dict[str, FrozenDict[str, Any]] = {}  # toolCallId -> result part


class AnswerFold:
    """Feed it one answer's events with :meth:`feed`; :meth:`messages` builds them.

    Args:
        first_step: the number of the answer's first step: 0 for a new answer, the
            number of steps already held for a continued one (ids then go on from there:
            ``<id>:<first_step>``...).
        checked: the events come from a :class:`~ai_chat.ChatStream` (validated and
            frozen already), so they are not validated again. Otherwise each event goes
            through the same checks a ``ChatStream`` applies (the JSON boundary with
            ``limits``, its shape, its place in the sequence, and ``max_chars`` for the
            whole answer).
        limits: the bounds on each event when not ``checked``.
        max_chars: the bound on the whole answer's events when not ``checked``.

    Raises (from :meth:`feed`, when not ``checked``):
        ProtocolError: an event that is not valid where it comes (``event_index`` names it).
        LimitExceededError: an event, or the answer, exceeds its bound.
    """

    __slots__ = (
        "_broken",
        "_calls",
        "_checker",
        "_data",
        "_first_step",
        "_metadata",
        "_open",
        "_steps",
        "_stopped",
        "events",
        "finish_reason",
        "finished",
        "ignored",
        "message_id",
        "sources",
        "usage",
    )

    def __init__(
        self,
        *,
        first_step: int = 0,
        checked: bool = False,
        limits: JSONLimits = _EVENT_LIMITS,
        max_chars: int = MESSAGE_LIMITS.max_chars,
    ) -> None:
        self._first_step = first_step
        self._checker = None if checked else EventChecker(limits, max_chars, "an event log")
        self._steps: list[_Step] = [_Step()]
        self._open: dict[tuple[str, str], _Part] = {}  # (kind, part id) -> open part
        self._calls: dict[str, tuple[_Part, _Step]] = {}  # toolCallId -> (call, its step)
        self._data: dict[tuple[str, str], _Part] = {}  # (type, id) -> data part
        self._metadata: dict[str, Any] = {}
        self._stopped = False
        self._broken: ProtocolError | LimitExceededError | None = None
        self.events = 0
        """How many events were fed (ignored ones included)."""
        self.ignored = 0
        """How many events came after ``finish`` or :meth:`stop` and were ignored."""
        self.finished = False
        """Whether ``finish`` was fed: the answer is complete."""
        self.finish_reason: FinishReason | None = None
        """``finish``'s reason, once it came."""
        self.usage: Usage | None = None
        """``finish``'s usage, when it had one."""
        self.message_id: str | None = None
        """``start``'s ``messageId``, when it had one."""
        self.sources: tuple[JSONObject, ...] = ()
        """The ``source-url`` and ``source-document`` events, in order."""

    @property
    def metadata(self) -> JSONObject:
        """The message metadata so far (``messageMetadata`` objects merged in order)."""
        return cast(JSONObject, FrozenDict(self._metadata))

    def stop(self) -> None:
        """Ignore every later event (the answer is stopped where it is)."""
        self._stopped = True

    def feed_all(self, events: Iterable[object]) -> None:
        """:meth:`feed` each event, in order."""
        for event in events:
            self.feed(event)

    def feed(self, event: object) -> None:
        """Take the next event (see the class for what is checked).

        An event that fails the checks raises and is not counted; the events before it
        stay folded, and every later :meth:`feed` raises the same error (the log is broken
        there: start a new fold to go on).
        """
        if self._broken is not None:
            raise self._broken
        if self.finished or self._stopped:
            self.events += 1
            self.ignored += 1
            return
        checker = self._checker
        if checker is None:
            fields = cast("Mapping[str, Any]", event)
        else:
            try:
                fields = cast("Mapping[str, Any]", checker.check(event))
            except (ProtocolError, LimitExceededError) as exc:
                self._broken = exc
                raise
        self.events += 1
        kind: str = fields["type"]
        if kind == "text-delta" or kind == "reasoning-delta":
            part = self._open[(kind[:-6], fields["id"])]
            cast("list[str]", part.chunks).append(fields["delta"])
            if _PM in fields:
                part.fields[_PM] = fields[_PM]
        elif kind == "text-start" or kind == "reasoning-start":
            part = _Part({"type": kind[:-6], "text": ""}, chunks=True)
            _keep_metadata(fields, part)
            self._open[(kind[:-6], fields["id"])] = part
            self._steps[-1].content.append(part)
        elif kind == "text-end" or kind == "reasoning-end":
            part = self._open.pop((kind[:-4], fields["id"]))
            part.open = False
            _keep_metadata(fields, part)
        elif kind == "start-step":
            step = self._steps[-1]
            if step.content or step.results:
                self._steps.append(_Step())
        elif kind.startswith("tool-"):
            self._tool(kind, fields)
        elif kind.startswith("data-"):
            self._data_part(kind, fields)
        elif kind == "file":
            part = _Part({"type": "file", "mediaType": fields["mediaType"], "url": fields["url"]})
            _keep_metadata(fields, part)
            self._steps[-1].content.append(part)
        elif kind == "start" or kind == "message-metadata":
            if kind == "start" and "messageId" in fields:
                self.message_id = fields["messageId"]
            self._merge(fields.get("messageMetadata"))
        elif kind == "finish":
            self.finish_reason = fields["finishReason"]
            self.usage = fields.get("usage")
            self._merge(fields.get("messageMetadata"))
            self.finished = True
        elif kind == "source-url" or kind == "source-document":
            self.sources = (*self.sources, cast(JSONObject, fields))
        # finish-step: nothing to keep.

    def _merge(self, metadata: object) -> None:
        if isinstance(metadata, Mapping):
            self._metadata.update(cast("Mapping[str, Any]", metadata))

    def _tool(self, kind: str, fields: Mapping[str, Any]) -> None:
        call_id: str = fields["toolCallId"]
        if kind == "tool-input-start":
            call = _Part(
                {"type": "tool-call", "toolCallId": call_id, "toolName": fields["toolName"]}
            )
            call.open = True  # its input is not there yet
            self._steps[-1].content.append(call)
            self._calls[call_id] = (call, self._steps[-1])
        elif kind == "tool-input-available" or kind == "tool-input-error":
            known = self._calls.get(call_id)
            if known is None:
                call = _Part(
                    {"type": "tool-call", "toolCallId": call_id, "toolName": fields["toolName"]}
                )
                self._steps[-1].content.append(call)
                known = self._calls[call_id] = (call, self._steps[-1])
            call = known[0]
            call.fields["input"] = fields["input"]
            call.open = False
            call.frozen = None
            _keep_metadata(fields, call)
            if kind == "tool-input-error":
                _result(call, known[1], fields["errorText"], error=True, fields=None)
        elif kind == "tool-output-available" or kind == "tool-output-error":
            if fields.get("preliminary", False):
                return
            call, step = self._calls[call_id]
            if kind == "tool-output-available":
                _result(call, step, fields["output"], error=False, fields=fields)
            else:
                _result(call, step, fields["errorText"], error=True, fields=fields)
        # tool-input-delta: the input is taken whole from tool-input-available.

    def _data_part(self, kind: str, fields: Mapping[str, Any]) -> None:
        if fields.get("transient", False):
            return
        part_id = fields.get("id")
        if part_id is None:
            self._steps[-1].content.append(_Part({"type": kind, "data": fields["data"]}))
            return
        earlier = self._data.get((kind, part_id))
        if earlier is not None:
            earlier.fields["data"] = fields["data"]
            earlier.frozen = None
            return
        part = self._data[(kind, part_id)] = _Part(
            {"type": kind, "data": fields["data"], "id": part_id}
        )
        self._steps[-1].content.append(part)

    def messages(
        self,
        message_id: str,
        extra_metadata: Mapping[str, object] | None = None,
        *,
        partial: bool = False,
    ) -> tuple[Message, ...]:
        """The answer as normalized messages (frozen), ids from ``message_id``.

        ``extra_metadata`` (JSON) is merged into the first assistant message's metadata.
        Parts still open (text and reasoning without their end, calls without their
        input) are left out unless ``partial``: then text so far is included, and a
        call without its input has ``"input": null``. Steps without parts are left out;
        an answer without any part builds to nothing.
        """
        out: list[Message] = []
        number = self._first_step
        metadata: dict[str, Any] = dict(self._metadata)
        if extra_metadata:
            metadata.update(cast("Mapping[str, Any]", freeze_json(dict(extra_metadata))))
        placed = False
        for step in self._steps:
            content: list[FrozenDict[str, Any]] = []
            for part in step.content:
                if part.open and not partial:
                    continue
                if part.open and part.fields["type"] == "tool-call":
                    content.append(FrozenDict({**part.fields, "input": None}))
                else:
                    content.append(part.build())
            if not content and not step.results:
                continue
            suffix = f":{number}" if number else ""
            if content:
                message: dict[str, Any] = {
                    "id": message_id + suffix,
                    "role": "assistant",
                    "parts": tuple(content),
                }
                if metadata and not placed:
                    message["metadata"] = FrozenDict(metadata)
                placed = True
                out.append(cast(Message, FrozenDict(message)))
            if step.results:
                parts = tuple(step.results.values())
                out.append(
                    cast(
                        Message,
                        FrozenDict(id=f"{message_id}:tool{suffix}", role="tool", parts=parts),
                    )
                )
            number += 1
        return tuple(out)


def _keep_metadata(fields: Mapping[str, Any], part: _Part) -> None:
    if _PM in fields:
        part.fields[_PM] = fields[_PM]
        part.frozen = None


def _result(
    call: _Part, step: _Step, output: object, *, error: bool, fields: Mapping[str, Any] | None
) -> None:
    result: dict[str, Any] = {
        "type": "tool-result",
        "toolCallId": call.fields["toolCallId"],
        "toolName": call.fields["toolName"],
        "output": output,
    }
    if error:
        result["isError"] = True
    if fields is not None and _PM in fields:
        result[_PM] = fields[_PM]
    step.results[result["toolCallId"]] = FrozenDict(result)
