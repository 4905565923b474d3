"""The UI message stream encoder: validated chat events in, SSE bytes out (sans-IO).

It does no I/O and imports neither anyio nor Starlette. What it changes on the way, so
that the AI SDK client accepts every chunk and loses no fact:

* the first chunk is always ``start`` with a ``messageId`` (the one the server chose for
  a continued message, else the adapter's, else a generated one);
* ``finish`` carries no ``usage`` on the wire (the AI SDK's ``finish`` chunk has no such
  field and its client keeps only ``messageMetadata``): the finish reason and the usage
  go into the finish chunk's ``messageMetadata`` as ``{"finishReason": ..., "usage":
  {...}}``, merged under the adapter's own metadata object (the adapter's keys win). If
  the adapter's finish metadata is not an object, they travel in a ``message-metadata``
  chunk just before ``finish`` instead (the AI SDK client then replaces them with that
  non-object value, as its merge rules say: give an object to keep both).

Everything else is written as it is: events are already frozen JSON whose optional
fields are absent, never ``null``.
"""

from __future__ import annotations

import json
import secrets
from collections.abc import Mapping
from typing import Final, cast

from .._types import ChatEvent

__all__ = ["DONE", "KEEP_ALIVE", "ChunkEncoder", "error_chunk", "new_message_id"]

DONE: Final = b"data: [DONE]\n\n"
KEEP_ALIVE: Final = b": keep-alive\n\n"

_dumps = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), check_circular=False).encode


def new_message_id() -> str:
    """A fresh message id: ``msg-`` and 16 random hex digits."""
    return f"msg-{secrets.token_hex(8)}"


def _frame(chunk: Mapping[str, object]) -> bytes:
    return b"data: " + _dumps(chunk).encode() + b"\n\n"


def error_chunk(text: str) -> bytes:
    """The ``error`` chunk with ``errorText`` = ``text``, framed."""
    return _frame({"type": "error", "errorText": text})


class ChunkEncoder:
    """Turns one answer's events into SSE frames, one ``data:`` line per chunk.

    Args:
        message_id: the id for ``start``; ``None`` keeps the adapter's, or generates one.
    """

    __slots__ = ("_message_id", "_started")

    def __init__(self, message_id: str | None = None) -> None:
        self._message_id = message_id
        self._started = False

    @property
    def message_id(self) -> str | None:
        """The id sent in ``start`` (``None`` until then, unless given)."""
        return self._message_id

    def encode(self, event: ChatEvent) -> bytes:
        """The SSE bytes for ``event`` (sometimes two frames: see the module docstring)."""
        kind = event["type"]
        if self._started:
            if kind == "finish":
                return self._finish(cast("Mapping[str, object]", event))
            return _frame(event)
        self._started = True
        if kind == "start":
            start = dict(event)
            start["messageId"] = self._choose_id(start.get("messageId"))
            return _frame(start)
        head = _frame({"type": "start", "messageId": self._choose_id(None)})
        return head + self.encode(event)

    def _choose_id(self, adapters: object) -> str:
        if self._message_id is None:
            self._message_id = adapters if type(adapters) is str else new_message_id()
        return self._message_id

    def _finish(self, event: Mapping[str, object]) -> bytes:
        facts: dict[str, object] = {"finishReason": event["finishReason"]}
        if "usage" in event:
            facts["usage"] = event["usage"]
        finish = {key: value for key, value in event.items() if key != "usage"}
        if "messageMetadata" not in event:
            finish["messageMetadata"] = facts
            return _frame(finish)
        own = event["messageMetadata"]
        if isinstance(own, Mapping):
            finish["messageMetadata"] = {**facts, **cast("Mapping[str, object]", own)}
            return _frame(finish)
        return _frame({"type": "message-metadata", "messageMetadata": facts}) + _frame(finish)
