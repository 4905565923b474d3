"""UI message stream chunks as ai_chat events (sans-IO: SSE data strings in, events out).

ai_chat's event vocabulary is the UI message stream's chunk vocabulary, so most chunks
pass through as they are (the chat stream then checks each one's shape and place in the
sequence, and freezes it). What this mapper adds is the strictness the AI SDK's own
client lacks (see the reference notes, section 4):

* ``data: [DONE]`` must come, last: a data event after it is an error, and so is a
  body that ends without it;
* a body that ends without a ``finish`` chunk is a :class:`~ai_chat.TruncatedStreamError`,
  not a quietly complete answer; so is ``finish`` with ``finishReason: "interrupted"``
  (the AI SDK's "provider stream ended without a completion signal") and an ``abort``
  chunk;
* an ``error`` chunk is a :class:`~ai_chat.RemoteStreamError` carrying its ``errorText``;
* a data line that is not JSON, not an object, or has no string ``type``, and a chunk
  type ai_chat events cannot express (tool approvals, ``reset-step``, ``custom``,
  ``reasoning-file``, ``steering-message``) or that no protocol version defines, is a
  :class:`~ai_chat.ProviderError` naming it; nothing is dropped silently.

A ``finish`` chunk without ``finishReason`` (optional in the protocol) becomes
``finishReason: "other"``. The chunk has no usage field; when its ``messageMetadata`` has
a ``usage`` object of token counts (where :mod:`ai_chat.server` puts them, as
``{"inputTokens": ..., "outputTokens": ...}``), the counts also become the event's
``usage``, so that usage survives a round trip through ai_chat's own server; the
metadata is kept as it is.
"""

# The per-chunk code reads parsed JSON and checks types at run time with `type(x) is ...`
# (exact and cheap), which pyright cannot follow without a cast per value: these three
# "unknown type" reports are off here, as in ai_chat/_messages.py.
# pyright: reportUnknownVariableType=false, reportUnknownMemberType=false, reportUnknownArgumentType=false

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any, Final

from ..._errors import ProviderError, RemoteStreamError, TruncatedStreamError
from ..._sse import SSEEvent
from ...limits._parse import reject_constant
from .._base.http import shorten
from ._errors import PROVIDER

__all__ = ["PASSED_THROUGH", "UNSUPPORTED", "UIChunkMapper"]

Event = dict[str, Any]

# Chunk types that are ai_chat events as they are.
PASSED_THROUGH: Final = frozenset(
    {
        "start",
        "start-step",
        "finish-step",
        "text-start",
        "text-delta",
        "text-end",
        "reasoning-start",
        "reasoning-delta",
        "reasoning-end",
        "tool-input-start",
        "tool-input-delta",
        "tool-input-available",
        "tool-input-error",
        "tool-output-available",
        "tool-output-error",
        "source-url",
        "source-document",
        "file",
        "message-metadata",
    }
)
# Valid chunk types (ai@7) that no ai_chat event can express, with what they mean.
UNSUPPORTED: Final = {
    "reset-step": "a step retry (discard the parts since the last step-start)",
    "tool-approval-request": "a tool approval request",
    "tool-approval-response": "a tool approval response",
    "tool-output-denied": "a denied tool call",
    "reasoning-file": "a file produced by reasoning",
    "custom": "a provider-specific custom part",
    "steering-message": "a steering message",
}
_SHOWN: Final = 120
_USAGE_FIELDS: Final = (
    "inputTokens",
    "outputTokens",
    "totalTokens",
    "cachedInputTokens",
    "reasoningTokens",
)


_DECODER: Final = json.JSONDecoder(parse_constant=reject_constant)
_decode: Final = _DECODER.decode
# The C scanner alone: json.loads' Python layers (two regex matches and two calls around
# it) cost more than the parse itself for a typical chunk. Anything it does not take
# whole (leading or trailing whitespace, junk, [DONE]) goes through the full decode.
_scan: Final[Callable[[str, int], tuple[Any, int]]] = _DECODER.scan_once  # pyright: ignore[reportAttributeAccessIssue]


class UIChunkMapper:
    """Turns the SSE data strings of one UI message stream into events.

    Feed each event's ``data`` to :meth:`feed`, which returns the event to deliver, or
    ``None`` for ``[DONE]``; call :meth:`end` when the body has ended. Raises as the
    module docstring says; ``request_id`` is attached to the errors.
    """

    __slots__ = ("done", "finished", "request_id", "sse_events")

    def __init__(self, request_id: str | None = None) -> None:
        self.request_id = request_id
        self.done = False  # [DONE] came
        self.finished = False  # a finish chunk came
        self.sse_events = 0

    def feed_events(self, events: list[SSEEvent]) -> list[Event]:
        """Map the SSE events one read completed: :meth:`feed` for each, with the common
        case (a JSON chunk object of a type that passes through) handled inline."""
        out: list[Event] = []
        append = out.append
        scan = _scan
        passed = PASSED_THROUGH
        for sse in events:
            data = sse.data
            if not self.done:
                try:
                    chunk, end = scan(data, 0)
                except (StopIteration, ValueError, RecursionError):
                    chunk, end = None, -1
                if (
                    end == len(data)
                    and type(chunk) is dict
                    and type(kind := chunk.get("type")) is str
                    and kind in passed
                ):
                    self.sse_events += 1
                    append(chunk)
                    continue
            event = self.feed(data)
            if event is not None:
                append(event)
        return out

    def feed(self, data: str) -> Event | None:
        """Map one data string: the event to deliver, or ``None`` for ``[DONE]``."""
        self.sse_events += 1
        if self.done:
            raise self._error(f"a data event after data: [DONE]: {_show(data)}")
        try:
            chunk, end = _scan(data, 0)
            if end != len(data):
                chunk = _decode(data)
        except (StopIteration, ValueError, RecursionError):
            chunk = self._decode_slowly(data)
            if chunk is None:
                return None
        if type(chunk) is dict:
            kind = chunk.get("type")
            if type(kind) is str:
                if kind in PASSED_THROUGH:
                    return chunk
                return self._special(kind, chunk, data)
        raise self._error(f"expected a chunk object with a string type, got {_show(data)}")

    def _decode_slowly(self, data: str) -> Any:
        """``[DONE]`` (``None``), or what the full decoder makes of ``data``."""
        if data == "[DONE]":
            self.done = True
            return None
        try:
            return _decode(data)
        except (ValueError, RecursionError) as exc:
            raise self._not_json(exc, data) from None

    def _not_json(self, exc: BaseException, data: str) -> ProviderError:
        reason = shorten(str(exc), _SHOWN)
        return self._error(
            f"a data line that is not JSON ({type(exc).__name__}: {reason}): {_show(data)}"
        )

    def _special(self, kind: str, chunk: Event, data: str) -> Event:
        if kind == "finish":
            reason = chunk.get("finishReason")
            if reason == "interrupted":
                raise TruncatedStreamError(
                    PROVIDER,
                    'the answer finished with finishReason "interrupted": the model\'s stream '
                    "ended without its completion signal, so the answer may be cut off; retry",
                    error_type="interrupted",
                    request_id=self.request_id,
                )
            if "finishReason" not in chunk:
                chunk["finishReason"] = "other"
            if "usage" not in chunk:
                usage = _usage(chunk.get("messageMetadata"))
                if usage:
                    chunk["usage"] = usage
            self.finished = True
            return chunk
        if kind == "error":
            text = chunk.get("errorText")
            if type(text) is not str:
                raise self._error(f"an error chunk without a string errorText: {_show(data)}")
            raise RemoteStreamError(text, request_id=self.request_id)
        if kind == "abort":
            reason = chunk.get("reason")
            said = f" (reason: {shorten(reason, _SHOWN)!r})" if type(reason) is str else ""
            raise TruncatedStreamError(
                PROVIDER,
                f"the server aborted the answer{said}; it is incomplete",
                error_type="abort",
                request_id=self.request_id,
            )
        if kind.startswith("data-") and len(kind) > 5:
            return chunk
        meaning = UNSUPPORTED.get(kind)
        if meaning is not None:
            raise self._error(
                f'the server sent a "{kind}" chunk ({meaning}), which ai_chat events cannot '
                "express; this client does not support that feature of the protocol"
            )
        raise self._error(f"an unknown chunk type {shorten(kind, _SHOWN)!r}: {_show(data)}")

    def end(self) -> None:
        """The body ended (after the SSE decoder's own end checks): raise unless it was
        complete, with ``finish`` and then ``[DONE]``."""
        if not self.finished:
            raise TruncatedStreamError(
                PROVIDER,
                f"the body ended after {self.sse_events} events without a finish chunk: the "
                "answer is incomplete; retry",
                request_id=self.request_id,
            )
        if not self.done:
            raise TruncatedStreamError(
                PROVIDER,
                "the body ended without data: [DONE] after the finish chunk; the stream was "
                "cut off or the server does not speak the UI message stream protocol",
                request_id=self.request_id,
            )

    def _error(self, detail: str) -> ProviderError:
        return ProviderError(
            PROVIDER, f"event #{self.sse_events}: {detail}", request_id=self.request_id
        )


def _usage(metadata: object) -> dict[str, int] | None:
    """The token counts of ``messageMetadata.usage``, where ai_chat's server puts them
    (the finish chunk has no usage field), when every count it has is a non-negative
    integer; otherwise ``None`` and the metadata is all there is."""
    if type(metadata) is not dict:
        return None
    usage = metadata.get("usage")
    if type(usage) is not dict:
        return None
    counts: dict[str, int] = {}
    for name in _USAGE_FIELDS:
        if name in usage:
            value = usage[name]
            if type(value) is not int or value < 0:
                return None
            counts[name] = value
    return counts


def _show(data: str) -> str:
    return repr(data) if len(data) <= _SHOWN else repr(data[:_SHOWN]) + f"... ({len(data):,} chars)"
