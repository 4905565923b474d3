"""OpenAI Chat Completions stream chunks as ai_chat events (sans-IO: data lines in, events out).

The wire format (``chat.completion.chunk`` objects on ``data:`` lines, ending with
``data: [DONE]``) is described in the provider notes; the points that shape this code:

* the first fragment of each tool call carries ``index``, ``id`` and ``function.name``,
  later ones only ``index`` and an ``arguments`` substring, so calls are accumulated by
  ``index`` (parallel calls use 0, 1, ...);
* reasoning has no official field: OpenAI-compatible servers send
  ``delta.reasoning_content`` (DeepSeek, vLLM) or ``delta.reasoning`` (OpenRouter, newer
  vLLM);
* with ``stream_options.include_usage`` a last chunk with ``choices: []`` carries usage;
* an error inside the stream is a data line whose object has an ``error`` key;
* the answer is complete only once a ``finish_reason`` arrived: a body that ends, or a
  ``[DONE]`` that comes, before one is a truncated answer.
"""

# The per-chunk code reads parsed JSON and checks types at run time with `type(x) is ...`
# (exact and cheap), which pyright cannot follow without a cast per value: these three
# "unknown type" reports are off here, as in ai_chat/_messages.py.
# pyright: reportUnknownVariableType=false, reportUnknownMemberType=false, reportUnknownArgumentType=false

from __future__ import annotations

import json
import uuid
from collections.abc import Mapping
from typing import Any, Final

from ..._errors import ProviderError, TruncatedStreamError
from .._base.stream_mapping import (
    Event,
    StreamMapper,
    begin_events,
    finish_events,
    malformed_line,
    openai_usage,
    tool_input,
)

__all__ = ["ChatChunkMapper"]

_FINISH_REASONS: Final = {
    "stop": "stop",
    "length": "length",
    "tool_calls": "tool-calls",
    "function_call": "tool-calls",
    "content_filter": "content-filter",
}


class _ToolCall:
    __slots__ = ("arguments", "id", "name")

    def __init__(self, call_id: str, name: str) -> None:
        self.id = call_id
        self.name = name
        self.arguments: list[str] = []


class ChatChunkMapper(StreamMapper):
    """Turns the data lines of one streamed completion into events.

    Feed each SSE ``data`` string to :meth:`feed`, which appends the events it completes
    to ``out``; stop feeding once :attr:`done` (``[DONE]`` arrived). At the end of the
    body call :meth:`finish` for the closing events (``finish-step``, ``finish``).

    Raises :class:`~ai_chat.ProviderError` for an error object in the stream, a data line
    that is not JSON or not a chunk, and :class:`~ai_chat.TruncatedStreamError` from
    :meth:`finish` when no ``finish_reason`` arrived.
    """

    __slots__ = (
        "_calls",
        "_finish_reason",
        "_message_id",
        "_open",
        "_parts",
        "_started",
        "_usage",
    )

    def __init__(self, provider: str = "openai") -> None:
        super().__init__(provider)
        self._started = False
        self._message_id: str | None = None
        self._open: tuple[str, str] | None = None  # (kind, id) of the open text/reasoning part
        self._parts = {"text": 0, "reasoning": 0}
        self._calls: dict[int, _ToolCall] = {}
        self._finish_reason: str | None = None
        self._usage: Mapping[str, Any] | None = None

    # --- feeding ----------------------------------------------------------------------

    def feed(self, name: str, data: str, out: list[Event]) -> None:
        """Map one data line (a chunk, an error object or ``[DONE]``); ``name``, the SSE
        event name, is not used by Chat Completions."""
        if data == "[DONE]":
            self.done = True
            return
        try:
            chunk = json.loads(data)
        except ValueError as exc:
            raise self._error(malformed_line(data, exc)) from exc
        if type(chunk) is not dict:
            raise self._error(f"expected a chunk object in the stream, got {data[:120]!r}")
        if chunk.get("error") is not None:
            raise self._stream_error(chunk["error"])
        if self._message_id is None:
            message_id = chunk.get("id")
            if type(message_id) is str and message_id:
                self._message_id = message_id
        choices = chunk.get("choices")
        if choices:
            if type(choices) is not list:
                raise self._error(f"expected choices to be an array, got {choices!r}"[:200])
            for choice in choices:
                self._choice(choice, out)
        usage = chunk.get("usage")
        if type(usage) is dict:
            self._usage = usage

    def _choice(self, choice: object, out: list[Event]) -> None:
        if type(choice) is not dict:
            raise self._error(f"expected a choice object, got {choice!r}"[:200])
        index = choice.get("index")
        if index is not None and index != 0:
            raise self._error(
                f"a choice with index {index!r} arrived; the adapter streams one answer (n=1)"
            )
        delta = choice.get("delta")
        if delta:
            if type(delta) is not dict:
                raise self._error(f"expected a delta object, got {delta!r}"[:200])
            reasoning = delta.get("reasoning_content") or delta.get("reasoning")
            if reasoning and type(reasoning) is str:
                self._delta("reasoning", reasoning, out)
            content = delta.get("content")
            if content and type(content) is str:
                self._delta("text", content, out)
            refusal = delta.get("refusal")
            if refusal and type(refusal) is str:
                self._delta("text", refusal, out)
            tool_calls = delta.get("tool_calls")
            if tool_calls:
                self._tool_calls(tool_calls, out)
        reason = choice.get("finish_reason")
        if reason and self._finish_reason is None:
            self._finish_reason = str(reason)
            self._close_part(out)
            self._finish_tool_calls(out)

    def _delta(self, kind: str, text: str, out: list[Event]) -> None:
        self._after_finish(kind)
        current = self._open
        if current is None or current[0] != kind:
            self._begin(out)
            self._close_part(out)
            number = self._parts[kind]
            self._parts[kind] = number + 1
            part_id = f"{kind}-{number}"
            current = self._open = (kind, part_id)
            out.append({"type": f"{kind}-start", "id": part_id})
        out.append({"type": f"{kind}-delta", "id": current[1], "delta": text})

    def _close_part(self, out: list[Event]) -> None:
        current = self._open
        if current is not None:
            self._open = None
            out.append({"type": f"{current[0]}-end", "id": current[1]})

    def _tool_calls(self, fragments: object, out: list[Event]) -> None:
        if type(fragments) is not list:
            raise self._error(f"expected tool_calls to be an array, got {fragments!r}"[:200])
        self._after_finish("tool call")
        self._begin(out)
        self._close_part(out)
        for position, fragment in enumerate(fragments):
            if type(fragment) is not dict:
                raise self._error(f"expected a tool call object, got {fragment!r}"[:200])
            index = fragment.get("index")
            if type(index) is not int:
                index = self._index_of(fragment.get("id"), position)
            function = fragment.get("function")
            function = function if type(function) is dict else {}
            call = self._calls.get(index)
            if call is None:
                name = function.get("name")
                if not name or type(name) is not str:
                    raise self._error(f"tool call #{index} began without a function name")
                call_id = fragment.get("id")
                if not call_id or type(call_id) is not str:
                    call_id = f"call_{uuid.uuid4().hex[:24]}"  # some servers send none
                call = self._calls[index] = _ToolCall(call_id, name)
                out.append({"type": "tool-input-start", "toolCallId": call_id, "toolName": name})
            arguments = function.get("arguments")
            if arguments and type(arguments) is str:
                call.arguments.append(arguments)
                out.append(
                    {"type": "tool-input-delta", "toolCallId": call.id, "inputTextDelta": arguments}
                )

    def _index_of(self, call_id: object, position: int) -> int:
        """Where a fragment without ``index`` belongs (servers that send whole calls)."""
        if call_id and type(call_id) is str:
            for index, call in self._calls.items():
                if call.id == call_id:
                    return index
            return max(self._calls, default=-1) + 1
        return position

    def _finish_tool_calls(self, out: list[Event]) -> None:
        for index in sorted(self._calls):
            call = self._calls[index]
            # Empty arguments: a function without parameters (OpenAI itself sends "{}").
            out.append(
                tool_input(call.id, call.name, "".join(call.arguments), "the tool arguments are")
            )

    def _after_finish(self, what: str) -> None:
        if self._finish_reason is not None:
            raise self._error(f"a {what} delta arrived after the finish_reason")

    def _begin(self, out: list[Event]) -> None:
        if not self._started:
            self._started = True
            begin_events(out, self._message_id)

    # --- the end ----------------------------------------------------------------------

    def finish(self, out: list[Event]) -> None:
        """The closing events, once the body ended or ``[DONE]`` came.

        Raises :class:`~ai_chat.TruncatedStreamError` if no ``finish_reason`` arrived.
        """
        reason = self._finish_reason
        if reason is None:
            where = "[DONE] came" if self.done else "the response body ended"
            raise TruncatedStreamError(
                self.provider,
                f"the answer was cut off: {where} before any finish_reason; retry the request",
                request_id=self.request_id,
            )
        self._begin(out)
        finish_reason = _FINISH_REASONS.get(reason, "other")
        if finish_reason == "stop" and self._calls:
            finish_reason = "tool-calls"  # some OpenAI-compatible servers say "stop"
        finish_events(out, finish_reason, openai_usage(self._usage, "prompt", "completion"))

    # --- errors -----------------------------------------------------------------------

    def _stream_error(self, error: object) -> ProviderError:
        """An ``{"error": {...}}`` data line: the provider failed mid-answer."""
        if type(error) is not dict:
            return self._error(f"the provider reported an error in the stream: {error!r}"[:500])
        message = error.get("message")
        kind = error.get("type") or error.get("code")
        return ProviderError(
            self.provider,
            f"the provider reported an error in the stream: {message or error!r}"[:500],
            error_type=kind if type(kind) is str else None,
            request_id=self.request_id,
        )
