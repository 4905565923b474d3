"""The ``ai-chat`` command line: stream a chat answer to the terminal."""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Sequence
from typing import TextIO, cast

import anyio

from ._errors import AIChatError
from ._stream import ChatStream, create_chat_stream
from ._types import ChatEvent, FinishEvent, ToolInputAvailableEvent
from .adapters import ScriptedAdapter

__all__ = ["main"]


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="ai-chat", description="Stream chat answers through ai_chat's send lifecycle."
    )
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    send = commands.add_parser(
        "send",
        help="send one user message and stream the answer",
        description="Send one user message and print the answer as it streams. Without a "
        "provider option the built-in offline scripted adapter answers: no key, no network.",
    )
    send.add_argument("text", help="the user message")
    send.add_argument("--system", help="a system message to send first")
    send.add_argument("--json", action="store_true", help="print one normalized event per line")
    send.add_argument(
        "--delay",
        type=float,
        default=0.02,
        help="seconds between events of the offline adapter (default: %(default)s)",
    )
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit status (0 ok, 1 failed, 130 interrupted)."""
    args = _parser().parse_args(argv)
    # A terminal that cannot show a character gets an escape, not a traceback.
    for stream in (sys.stdout, sys.stderr):
        reconfigure = getattr(stream, "reconfigure", None)
        if reconfigure is not None:
            reconfigure(errors="backslashreplace")
    messages: list[dict[str, object]] = []
    if args.system is not None:
        messages.append(
            {"id": "system-1", "role": "system", "parts": [{"type": "text", "text": args.system}]}
        )
    messages.append(
        {"id": "user-1", "role": "user", "parts": [{"type": "text", "text": args.text}]}
    )
    try:
        adapter = ScriptedAdapter(delay=args.delay)
        stream = create_chat_stream(adapter, {"messages": messages})
        anyio.run(_print_stream, stream, args.json, sys.stdout)
    except AIChatError as exc:
        sys.stdout.flush()
        print(f"\nai-chat: {type(exc).__name__}: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("\nai-chat: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        # The reader went away (`ai-chat send ... | head`): stop quietly, as cat does.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 0
    return 0


async def _print_stream(stream: ChatStream, as_json: bool, out: TextIO) -> None:
    printer = _Printer(out)
    async with stream:
        async for event in stream:
            if as_json:
                out.write(json.dumps(event, ensure_ascii=False) + "\n")
                out.flush()
            else:
                printer.show(event)


class _Printer:
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


if __name__ == "__main__":
    sys.exit(main())
