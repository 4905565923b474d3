"""Anthropic Messages stream events as ai_chat events (sans-IO: SSE events in, events out).

The wire format (``event: <type>`` plus ``data: {"type": <type>, ...}``) is described in
the provider notes; the points that shape this code:

* ``message_start`` carries the message id and the first usage figures;
* content blocks are numbered by ``index``: ``text`` (``text_delta``), ``thinking``
  (``thinking_delta``, then one ``signature_delta`` just before its stop),
  ``redacted_thinking`` (whole, with ``data``) and ``tool_use`` (``input_json_delta``
  fragments, parsed at ``content_block_stop``; ``""`` means ``{}``);
* ``message_delta`` carries ``stop_reason`` and *cumulative* usage (overwrite, never add);
* ``ping`` may come anywhere; ``event: error`` is the provider failing mid-answer (for
  example ``overloaded_error`` on a 200 stream);
* the answer is complete only at ``message_stop``: a body that ends before it is a
  truncated answer.

An event without an ``event:`` line (a proxy that strips names) is dispatched by its
data's ``type``, where the SDK would skip it. Unknown event names and delta types are
ignored (Anthropic adds them over time, e.g. ``citations_delta``); a content block of a
type the adapter cannot map (a server tool's, say) is an error rather than lost output.
"""

# The per-event code reads parsed JSON and checks types at run time with `type(x) is ...`
# (exact and cheap), which pyright cannot follow without a cast per value: these three
# "unknown type" reports are off here, as in ai_chat/_messages.py.
# pyright: reportUnknownVariableType=false, reportUnknownMemberType=false, reportUnknownArgumentType=false

from __future__ import annotations

import json
from typing import Any, Final

from ..._errors import TruncatedStreamError
from .._base.stream_mapping import (
    Event,
    StreamMapper,
    begin_events,
    count,
    finish_events,
    malformed_line,
    tool_input,
)
from ._errors import stream_error

__all__ = ["MessagesEventMapper"]

_FINISH_REASONS: Final = {
    "end_turn": "stop",
    "stop_sequence": "stop",
    "max_tokens": "length",
    "model_context_window_exceeded": "length",
    "tool_use": "tool-calls",
    "refusal": "content-filter",
    "pause_turn": "other",
}
_USAGE_FIELDS: Final = (
    "input_tokens",
    "output_tokens",
    "cache_read_input_tokens",
    "cache_creation_input_tokens",
)


class _Block:
    __slots__ = ("id", "kind", "name", "parts")

    def __init__(self, kind: str, block_id: str, name: str = "") -> None:
        self.kind = kind  # "text", "reasoning", "redacted" or "tool"
        self.id = block_id
        self.name = name
        self.parts: list[str] = []  # tool input fragments, or the thinking signature


class MessagesEventMapper(StreamMapper):
    """Turns the SSE events of one streamed message into ai_chat events.

    Feed each event's name and data to :meth:`feed`, which appends the events it
    completes to ``out``; stop feeding once :attr:`done` (``message_stop`` arrived). At
    the end of the body call :meth:`finish` for the closing events (``finish-step``,
    ``finish``).

    Raises :class:`~ai_chat.ProviderError` for an ``error`` event, a data line that is
    not JSON or not an event object, and an unmappable content block, and
    :class:`~ai_chat.TruncatedStreamError` from :meth:`finish` when no ``message_stop``
    arrived.
    """

    __slots__ = ("_blocks", "_started", "_stop_reason", "_usage")

    def __init__(self, provider: str = "anthropic") -> None:
        super().__init__(provider)
        self._started = False
        self._blocks: dict[int, _Block] = {}
        self._stop_reason: str | None = None
        self._usage: dict[str, Any] = {}

    # --- feeding ----------------------------------------------------------------------

    def feed(self, name: str, data: str, out: list[Event]) -> None:
        """Map one SSE event (``name`` is ``"message"`` when it had no ``event:`` line)."""
        if name == "ping":
            return
        try:
            event = json.loads(data)
        except ValueError as exc:
            raise self._error(malformed_line(data, exc)) from exc
        if type(event) is not dict:
            raise self._error(f"expected an event object in the stream, got {data[:120]!r}")
        if name == "message":
            kind = event.get("type")
            name = kind if type(kind) is str else ""
        if name == "content_block_delta":
            self._block_delta(event, out)
        elif name == "content_block_start":
            self._block_start(event, out)
        elif name == "content_block_stop":
            self._block_stop(event, out)
        elif name == "message_start":
            self._message_start(event, out)
        elif name == "message_delta":
            self._message_delta(event)
        elif name == "message_stop":
            self._begin(out, None)
            for index in sorted(self._blocks):  # blocks the provider left open
                self._close(self._blocks.pop(index), out)
            self.done = True
        elif name == "error":
            raise stream_error(event, self.request_id)

    def _message_start(self, event: dict[str, Any], out: list[Event]) -> None:
        message = event.get("message")
        message = message if type(message) is dict else {}
        usage = message.get("usage")
        if type(usage) is dict:
            self._usage.update(usage)
        message_id = message.get("id")
        self._begin(out, message_id if type(message_id) is str and message_id else None)

    def _message_delta(self, event: dict[str, Any]) -> None:
        delta = event.get("delta")
        if type(delta) is dict:
            reason = delta.get("stop_reason")
            if type(reason) is str and reason:
                self._stop_reason = reason
        usage = event.get("usage")
        if type(usage) is dict:
            # Cumulative totals: they replace what message_start said, field by field.
            self._usage.update({k: v for k, v in usage.items() if v is not None})

    def _index(self, event: dict[str, Any]) -> int:
        index = event.get("index")
        if type(index) is not int:
            raise self._error(f"expected a content block index, got {index!r}"[:200])
        return index

    def _block_start(self, event: dict[str, Any], out: list[Event]) -> None:
        self._begin(out, None)
        index = self._index(event)
        if index in self._blocks:
            raise self._error(f"content block {index} started twice")
        block = event.get("content_block")
        if type(block) is not dict:
            raise self._error(f"expected a content_block object, got {block!r}"[:200])
        kind = block.get("type")
        if kind == "text":
            part = self._blocks[index] = _Block("text", f"text-{index}")
            out.append({"type": "text-start", "id": part.id})
            text = block.get("text")
            if text and type(text) is str:
                out.append({"type": "text-delta", "id": part.id, "delta": text})
        elif kind == "thinking":
            part = self._blocks[index] = _Block("reasoning", f"reasoning-{index}")
            out.append({"type": "reasoning-start", "id": part.id})
            text = block.get("thinking")
            if text and type(text) is str:
                out.append({"type": "reasoning-delta", "id": part.id, "delta": text})
            signature = block.get("signature")
            if signature and type(signature) is str:
                part.parts.append(signature)
        elif kind == "redacted_thinking":
            data = block.get("data")
            if type(data) is not str:
                raise self._error("a redacted_thinking block came without its data")
            part = self._blocks[index] = _Block("redacted", f"reasoning-{index}")
            part.parts.append(data)
            metadata = {"anthropic": {"redactedData": data}}
            out.append({"type": "reasoning-start", "id": part.id, "providerMetadata": metadata})
        elif kind == "tool_use":
            call_id = block.get("id")
            name = block.get("name")
            if not call_id or type(call_id) is not str or not name or type(name) is not str:
                raise self._error(f"a tool_use block came without its id or name (#{index})")
            part = self._blocks[index] = _Block("tool", call_id, name)
            out.append({"type": "tool-input-start", "toolCallId": call_id, "toolName": name})
        else:
            raise self._error(
                f"a {kind!r} content block arrived, which the adapter cannot map to ai_chat "
                "events (it maps text, thinking, redacted_thinking and tool_use blocks)"
            )

    def _block_delta(self, event: dict[str, Any], out: list[Event]) -> None:
        index = self._index(event)
        part = self._blocks.get(index)
        if part is None:
            raise self._error(f"a delta for content block {index}, which is not open")
        delta = event.get("delta")
        if type(delta) is not dict:
            raise self._error(f"expected a delta object, got {delta!r}"[:200])
        kind = delta.get("type")
        if kind == "text_delta":
            text = delta.get("text")
            if part.kind == "text" and type(text) is str:
                if text:
                    out.append({"type": "text-delta", "id": part.id, "delta": text})
                return
        elif kind == "input_json_delta":
            fragment = delta.get("partial_json")
            if part.kind == "tool" and type(fragment) is str:
                if fragment:
                    part.parts.append(fragment)
                    out.append(
                        {
                            "type": "tool-input-delta",
                            "toolCallId": part.id,
                            "inputTextDelta": fragment,
                        }
                    )
                return
        elif kind == "thinking_delta":
            text = delta.get("thinking")
            if part.kind == "reasoning" and type(text) is str:
                if text:
                    out.append({"type": "reasoning-delta", "id": part.id, "delta": text})
                return
        elif kind == "signature_delta":
            signature = delta.get("signature")
            if part.kind == "reasoning" and type(signature) is str:
                part.parts.append(signature)
                return
        else:
            return  # a delta type this adapter does not know (citations_delta...)
        raise self._error(f"a {kind} delta does not fit content block {index} ({part.kind})")

    def _block_stop(self, event: dict[str, Any], out: list[Event]) -> None:
        index = self._index(event)
        part = self._blocks.pop(index, None)
        if part is None:
            raise self._error(f"content block {index} stopped, but it is not open")
        self._close(part, out)

    def _close(self, part: _Block, out: list[Event]) -> None:
        if part.kind == "text":
            out.append({"type": "text-end", "id": part.id})
        elif part.kind == "reasoning":
            end: Event = {"type": "reasoning-end", "id": part.id}
            signature = "".join(part.parts)
            if signature:
                end["providerMetadata"] = {"anthropic": {"signature": signature}}
            out.append(end)
        elif part.kind == "redacted":
            metadata = {"anthropic": {"redactedData": part.parts[0]}}
            out.append({"type": "reasoning-end", "id": part.id, "providerMetadata": metadata})
        else:
            self._tool_input(part, out)

    def _tool_input(self, part: _Block, out: list[Event]) -> None:
        # Empty input: a tool without parameters (Anthropic sends no fragment at all).
        out.append(tool_input(part.id, part.name, "".join(part.parts)))

    def _begin(self, out: list[Event], message_id: str | None) -> None:
        if not self._started:
            self._started = True
            begin_events(out, message_id)

    # --- the end ----------------------------------------------------------------------

    def finish(self, out: list[Event]) -> None:
        """The closing events, once ``message_stop`` came.

        Raises :class:`~ai_chat.TruncatedStreamError` if it never did.
        """
        if not self.done:
            raise TruncatedStreamError(
                self.provider,
                "the answer was cut off: the response body ended before message_stop; "
                "retry the request",
                request_id=self.request_id,
            )
        reason = self._stop_reason
        finish_reason = _FINISH_REASONS.get(reason, "other") if reason else "other"
        finish_events(out, finish_reason, self._mapped_usage())

    def _mapped_usage(self) -> dict[str, int]:
        usage = self._usage
        counts: dict[str, int] = {}
        for field in _USAGE_FIELDS:
            count(counts, field, usage.get(field))
        mapped: dict[str, int] = {}
        if "input_tokens" in counts:
            # Anthropic counts cache reads and writes apart from input_tokens; ai_chat's
            # inputTokens is the whole prompt (cachedInputTokens is a part of it, as
            # with OpenAI).
            mapped["inputTokens"] = (
                counts["input_tokens"]
                + counts.get("cache_read_input_tokens", 0)
                + counts.get("cache_creation_input_tokens", 0)
            )
        if "output_tokens" in counts:
            mapped["outputTokens"] = counts["output_tokens"]
            if "inputTokens" in mapped:
                mapped["totalTokens"] = mapped["inputTokens"] + mapped["outputTokens"]
        if "cache_read_input_tokens" in counts:
            mapped["cachedInputTokens"] = counts["cache_read_input_tokens"]
        return mapped
