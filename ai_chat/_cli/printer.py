"""What ``ai-chat send`` prints: one JSON event per line, or text for a person."""

from __future__ import annotations

import json
from typing import TextIO, cast

from .._stream import ChatStream
from .._types import ChatEvent, FinishEvent, ToolInputAvailableEvent

__all__ = ["Printer", "print_stream"]


async def print_stream(stream: ChatStream, as_json: bool, out: TextIO) -> None:
    """Read ``stream`` to its end, printing each event as it comes (and closing it)."""
    printer = Printer(out)
    async with stream:
        async for event in stream:
            if as_json:
                out.write(json.dumps(event, ensure_ascii=False) + "\n")
                out.flush()
            else:
                printer.show(event)


class Printer:
    """Human output: text live, reasoning live but marked, the rest summarized."""

    def __init__(self, out: TextIO) -> None:
        self._out = out
        self._column = 0
        self._section: str | None = None

    def _write(self, text: str) -> None:
        self._out.write(text)
        self._out.flush()
        newline = text.rfind("\n")
        self._column = len(text) - newline - 1 if newline >= 0 else self._column + len(text)

    def _line(self, text: str) -> None:
        if self._column:
            self._write("\n")
        self._write(text + "\n")
        self._section = None

    def _enter(self, section: str, header: str) -> None:
        if self._section != section:
            if self._column:
                self._write("\n")
            self._write(header)
            self._section = section

    def show(self, event: ChatEvent) -> None:
        """Print one event (most kinds print nothing of their own)."""
        kind = event["type"]
        if kind == "reasoning-delta":
            self._enter("reasoning", "[reasoning] ")
            self._write(cast(str, event.get("delta", "")))
        elif kind == "text-delta":
            self._enter("text", "")
            self._write(cast(str, event.get("delta", "")))
        elif kind == "tool-input-available":
            call = cast(ToolInputAvailableEvent, event)
            self._line(
                f"[tool call {call['toolName']} {json.dumps(call['input'], ensure_ascii=False)}]"
            )
        elif kind in ("tool-input-error", "tool-output-error"):
            self._line(f"[{kind}: {event.get('errorText', '')}]")
        elif kind == "tool-output-available":
            self._line(f"[tool output {json.dumps(event.get('output'), ensure_ascii=False)}]")
        elif kind in ("source-url", "source-document", "file"):
            self._line(f"[{kind} {event.get('url') or event.get('title', '')}]")
        elif kind == "finish":
            self._line(_finish_summary(cast(FinishEvent, event)))


def _finish_summary(event: FinishEvent) -> str:
    summary = f"[finish: {event['finishReason']}"
    usage = event.get("usage")
    if usage:
        counts = [
            f"{usage[key]} {label}"
            for key, label in (
                ("inputTokens", "in"),
                ("outputTokens", "out"),
                ("reasoningTokens", "reasoning"),
                ("cachedInputTokens", "cached"),
                ("totalTokens", "total"),
            )
            if key in usage
        ]
        summary += " · tokens: " + ", ".join(counts)
    return summary + "]"
