"""Event validation: the JSON boundary, each event's shape, and its place in the sequence."""

from __future__ import annotations

from collections.abc import Mapping
from typing import cast

from ._describe import shown
from ._errors import LimitExceededError, ProtocolError, ValidationError
from ._shape import (
    Shape,
    any_json,
    boolean,
    check_shape,
    describe,
    json_object,
    non_empty_str,
    non_negative_int,
    one_of,
    provider_metadata,
    string,
)
from ._types import ChatEvent
from .limits import FrozenDict, JSONLimits
from .limits._walk import freeze_and_measure, string_size

__all__ = ["EVENT_TYPES", "FINISH_REASONS", "EventChecker"]

FINISH_REASONS = ("stop", "length", "content-filter", "tool-calls", "error", "other")

_USAGE_FIELDS = (
    "inputTokens",
    "outputTokens",
    "totalTokens",
    "cachedInputTokens",
    "reasoningTokens",
)


def _usage(value: object) -> str | None:
    if type(value) is not FrozenDict:
        return "a usage object"
    usage = cast("FrozenDict[str, object]", value)
    for name in _USAGE_FIELDS:
        if name in usage and non_negative_int(usage[name]) is not None:
            return f"a usage object whose {name} is a non-negative integer"
    return None


_PM = {"providerMetadata": provider_metadata}
_TOOL_OPTIONS = {
    "providerExecuted": boolean,
    "dynamic": boolean,
    "title": string,
    "toolMetadata": json_object,
    **_PM,
}
_PART_ID = {"id": non_empty_str}
_DELTA = {"id": non_empty_str, "delta": string}

_SHAPES: dict[str, Shape] = {
    "start": Shape(optional={"messageId": non_empty_str, "messageMetadata": any_json}),
    "start-step": Shape(),
    "finish-step": Shape(),
    "text-start": Shape(_PART_ID, _PM),
    "text-delta": Shape(_DELTA, _PM),
    "text-end": Shape(_PART_ID, _PM),
    "reasoning-start": Shape(_PART_ID, _PM),
    "reasoning-delta": Shape(_DELTA, _PM),
    "reasoning-end": Shape(_PART_ID, _PM),
    "tool-input-start": Shape(
        {"toolCallId": non_empty_str, "toolName": non_empty_str},
        {"inputEncoding": one_of("json", "text"), **_TOOL_OPTIONS},
    ),
    "tool-input-delta": Shape({"toolCallId": non_empty_str, "inputTextDelta": string}),
    "tool-input-available": Shape(
        {"toolCallId": non_empty_str, "toolName": non_empty_str, "input": any_json}, _TOOL_OPTIONS
    ),
    "tool-input-error": Shape(
        {
            "toolCallId": non_empty_str,
            "toolName": non_empty_str,
            "input": any_json,
            "errorText": string,
        },
        _TOOL_OPTIONS,
    ),
    "tool-output-available": Shape(
        {"toolCallId": non_empty_str, "output": any_json},
        {
            "providerExecuted": boolean,
            "dynamic": boolean,
            "preliminary": boolean,
            "toolMetadata": json_object,
            **_PM,
        },
    ),
    "tool-output-error": Shape(
        {"toolCallId": non_empty_str, "errorText": string},
        {"providerExecuted": boolean, "dynamic": boolean, "toolMetadata": json_object, **_PM},
    ),
    "source-url": Shape(
        {"sourceId": non_empty_str, "url": non_empty_str}, {"title": string, **_PM}
    ),
    "source-document": Shape(
        {"sourceId": non_empty_str, "mediaType": non_empty_str, "title": string},
        {"filename": string, **_PM},
    ),
    "file": Shape({"url": non_empty_str, "mediaType": non_empty_str}, _PM),
    "message-metadata": Shape({"messageMetadata": any_json}),
    "finish": Shape(
        {"finishReason": one_of(*FINISH_REASONS)}, {"usage": _usage, "messageMetadata": any_json}
    ),
}
_DATA = Shape({"data": any_json}, {"id": string, "transient": boolean})

EVENT_TYPES = (*_SHAPES, "data-<name>")

# The JSON text of a delta event minus its id and delta strings' contents:
# {"type":"text-delta","id":"","delta":""}
_TEXT_DELTA_OVERHEAD = len('{"type":"text-delta","id":"","delta":""}')
_REASONING_DELTA_OVERHEAD = len('{"type":"reasoning-delta","id":"","delta":""}')

# Tool call states, by toolCallId.
_STREAMING, _INPUT_DONE, _OUTPUT_DONE = range(3)


def _string_cost(text: str) -> int | None:
    """What ``text`` adds to a JSON document's size, quotes aside (its characters and
    their escapes, as ``JSON.stringify`` writes them); None if it cannot be encoded."""
    try:
        return string_size(text) - 2
    except UnicodeEncodeError:
        return None


class EventChecker:
    """Checks an adapter's events one at a time and returns them frozen.

    It applies the JSON boundary (``limits`` per event), the event's shape, its place in
    the sequence and the running total against ``max_response_chars``.
    """

    __slots__ = (
        "_adapter",
        "_limits",
        "_max_response_chars",
        "_open_reasoning",
        "_open_text",
        "_step_open",
        "_tools",
        "finished",
        "index",
        "total_chars",
    )

    def __init__(self, limits: JSONLimits, max_response_chars: int, adapter: str) -> None:
        self._limits = limits
        self._max_response_chars = max_response_chars
        self._adapter = adapter
        # Open part ids, each with what it adds to a delta's JSON size (None: a delta
        # for it takes the general path).
        self._open_text: dict[str, int | None] = {}
        self._open_reasoning: dict[str, int | None] = {}
        self._tools: dict[str, tuple[int, str]] = {}
        self._step_open = False
        self.index = 0
        self.total_chars = 0
        self.finished = False

    def check(self, value: object) -> ChatEvent:
        """Validate the next event.

        Raises:
            ProtocolError: the event is not JSON, has the wrong shape, an unknown type,
                or comes out of order (including anything after ``finish``).
            LimitExceededError: the event exceeds the JSON limits, or the total of all
                events exceeds ``max_response_chars``.
        """
        index = self.index
        self.index = index + 1
        raw = cast("dict[object, object]", value)
        kind_of_value: type[object] = type(value)
        if kind_of_value is dict and len(raw) == 3:
            # Fast path for the bulk of every stream: a plain text or reasoning delta.
            event = self._delta(raw)
            if event is not None:
                return event
        if self.finished:
            raise ProtocolError(
                "the adapter yielded an event after finish; finish must be its last event",
                event_index=index,
                event_type=_type_of(raw),
            )
        if kind_of_value is not dict and kind_of_value is not FrozenDict:
            if not isinstance(value, Mapping):
                raise ProtocolError(
                    f"expected an event object, got {describe(value)}", event_index=index
                )
            raw = dict(cast("Mapping[object, object]", value))  # any mapping, copied once
        try:
            frozen, size = freeze_and_measure(raw, self._limits)
        except ValidationError as exc:
            raise ProtocolError(
                exc.reason, event_index=index, event_type=_type_of(raw), path=exc.path
            ) from exc
        except LimitExceededError as exc:
            exc.add_note(f"in event #{index} ({shown(_type_of(raw))}) from adapter {self._adapter}")
            raise
        event = cast("FrozenDict[str, object]", frozen)
        kind = event.get("type")
        shape = _SHAPES.get(kind) if type(kind) is str else None
        if shape is None:
            if type(kind) is str and kind.startswith("data-") and len(kind) > 5:
                shape = _DATA
            else:
                raise ProtocolError(
                    _unknown_type(event), event_index=index, event_type=_type_of(raw)
                )
        try:
            check_shape(event, shape, [], "$")
        except ValidationError as exc:
            raise ProtocolError(
                exc.reason, event_index=index, event_type=cast(str, kind), path=exc.path
            ) from exc

        reason = self._sequence(cast(str, kind), event)
        if reason is not None:
            raise ProtocolError(reason, event_index=index, event_type=cast(str, kind))

        total = self.total_chars + size
        self.total_chars = total
        if total > self._max_response_chars:
            error = LimitExceededError("$", "max_response_chars", self._max_response_chars, total)
            error.add_note(f"at event #{index} ({kind}) from adapter {self._adapter}")
            raise error
        return cast(ChatEvent, event)

    def _delta(self, raw: dict[object, object]) -> ChatEvent | None:
        """A valid text or reasoning delta for an open part, frozen; None for anything else.

        Produces exactly what the general path would, only faster; every other case
        (including every invalid one) is left to the general path, which words the errors.
        """
        kind = raw.get("type")
        if type(kind) is not str:
            return None
        if kind == "text-delta":
            parts, overhead = self._open_text, _TEXT_DELTA_OVERHEAD
        elif kind == "reasoning-delta":
            parts, overhead = self._open_reasoning, _REASONING_DELTA_OVERHEAD
        else:
            return None
        part_id = raw.get("id")
        delta = raw.get("delta")
        if type(part_id) is not str or type(delta) is not str or self.finished:
            return None
        id_cost = parts.get(part_id)
        if id_cost is None or len(delta) >= self._limits.max_chars:
            return None
        for key in raw:
            if type(key) is not str:
                return None
        try:
            size = overhead + id_cost + string_size(delta) - 2
        except UnicodeEncodeError:
            return None
        if size > self._limits.max_chars or self._limits.max_values < 4:
            return None
        total = self.total_chars + size
        if total > self._max_response_chars:
            return None
        self.total_chars = total
        return FrozenDict(raw)  # pyright: ignore[reportReturnType]  # checked above; no cast call in the hot path

    def check_end(self) -> None:
        """The adapter's iterator ended: raise unless ``finish`` came."""
        if not self.finished:
            raise ProtocolError(
                f"the adapter ended after {self.index} events without a finish event; the "
                "response may be truncated",
            )

    def _sequence(self, kind: str, event: FrozenDict[str, object]) -> str | None:
        """Why ``event`` cannot come now, or None; records its effect otherwise."""
        if kind == "text-delta" or kind == "reasoning-delta":
            parts = self._open_text if kind == "text-delta" else self._open_reasoning
            if event["id"] not in parts:
                return f"{kind} for part id {shown(event['id'])}, which was never started (or already ended)"
            return None
        if kind == "start":
            return None if self.index == 1 else "start must be the first event"
        if kind == "start-step":
            if self._step_open:
                return "start-step while the previous step is still open (missing finish-step)"
            self._step_open = True
            return None
        if kind == "finish-step":
            if not self._step_open:
                return "finish-step without an open step"
            self._step_open = False
            return None
        if kind in ("text-start", "reasoning-start", "text-end", "reasoning-end"):
            parts = self._open_text if kind[0] == "t" else self._open_reasoning
            part_id = cast(str, event["id"])
            if kind.endswith("-start"):
                if part_id in parts:
                    return f"{kind} for part id {shown(part_id)}, which is already open"
                parts[part_id] = _string_cost(part_id)
            else:
                if part_id not in parts:
                    return f"{kind} for part id {shown(part_id)}, which was never started (or already ended)"
                del parts[part_id]
            return None
        if kind.startswith("tool-"):
            return self._tool(kind, event)
        if kind == "finish":
            return self._finish()
        return None

    def _tool(self, kind: str, event: FrozenDict[str, object]) -> str | None:
        call_id = cast(str, event["toolCallId"])
        known = self._tools.get(call_id)
        if kind == "tool-input-start":
            if known is not None:
                return f"tool call {shown(call_id)} was already started"
            self._tools[call_id] = (_STREAMING, cast(str, event["toolName"]))
            return None
        if kind == "tool-input-delta":
            if known is None or known[0] != _STREAMING:
                return (
                    f"tool-input-delta for tool call {shown(call_id)}, whose input is not streaming"
                )
            return None
        if kind in ("tool-input-available", "tool-input-error"):
            name = cast(str, event["toolName"])
            if known is not None:
                if known[0] != _STREAMING:
                    return f"tool call {shown(call_id)} already has its input"
                if known[1] != name:
                    return f"tool call {shown(call_id)} was started as {shown(known[1])} but completed as {shown(name)}"
            self._tools[call_id] = (_INPUT_DONE, name)
            return None
        # tool-output-available / tool-output-error
        if known is None:
            return f"{kind} for unknown tool call {shown(call_id)}"
        if known[0] == _STREAMING:
            return f"{kind} for tool call {shown(call_id)} before its input was available"
        if known[0] == _OUTPUT_DONE:
            return f"tool call {shown(call_id)} already has its output"
        if not event.get("preliminary", False):
            self._tools[call_id] = (_OUTPUT_DONE, known[1])
        return None

    def _finish(self) -> str | None:
        open_parts = sorted(self._open_text) + sorted(self._open_reasoning)
        if open_parts:
            return (
                f"finish while part {shown(open_parts[0])} is still open (missing its -end event)"
            )
        streaming = sorted(c for c, (state, _) in self._tools.items() if state == _STREAMING)
        if streaming:
            return f"finish while the input of tool call {shown(streaming[0])} is still streaming"
        if self._step_open:
            return "finish while a step is still open (missing finish-step)"
        self.finished = True
        return None


def _type_of(raw: object) -> str | None:
    if type(raw) is dict or type(raw) is FrozenDict:
        kind = cast("dict[object, object]", raw).get("type")
        return kind if type(kind) is str else None
    return None


def _unknown_type(event: FrozenDict[str, object]) -> str:
    kind = event.get("type")
    if "type" not in event:
        return 'missing required field "type"'
    if kind in ("error", "abort"):
        return (
            f'"{kind}" is not an adapter event: an adapter reports a failure by raising an '
            "exception, and stops when its abort signal fires"
        )
    return f"unknown event type {shown(kind)} (expected one of {', '.join(EVENT_TYPES)})"
