"""Gemini ``streamGenerateContent`` chunks as ai_chat events (sans-IO: SSE data in, events out).

The wire format (``data: <GenerateContentResponse>`` events, CRLF line ends, no terminal
sentinel) is described in the provider notes; the points that shape this code:

* every event is a whole ``GenerateContentResponse``: ``candidates[0].content.parts``
  hold the new output (``text``; ``thought: true`` for reasoning summaries;
  ``functionCall`` whole, never in fragments, parallel calls as several parts of one
  chunk; ``inlineData`` for generated files), and ``thoughtSignature`` may ride on any part;
* ``usageMetadata`` may come on every chunk: the last one counts, never a sum;
* the answer is complete only once a candidate has a ``finishReason`` (or the prompt was
  blocked: ``promptFeedback.blockReason``); a tool call still finishes with ``STOP``, so
  ``functionCall`` parts turn ``STOP`` into ``tool-calls``;
* a data line holding ``{"error": {...}}`` is the provider failing mid-answer.

Text and reasoning parts of one kind in a row form one ai_chat part (one id, many deltas).
A part carrying a ``thoughtSignature`` closes its ai_chat part, and the signature rides on
its ``text-end``/``reasoning-end`` as ``providerMetadata.gemini.thoughtSignature`` (on a
function call: ``tool-input-start`` and ``tool-input-available``); sent back in the
history, it goes out on that part again, as Gemini requires for multi-turn tool use with
thinking. Output the adapter cannot map (``executableCode``, ``codeExecutionResult``,
``fileData``...) is an error rather than lost output.
"""

# The per-chunk code reads parsed JSON and checks types at run time with `type(x) is ...`
# (exact and cheap), which pyright cannot follow without a cast per value: these three
# "unknown type" reports are off here, as in ai_chat/_messages.py.
# pyright: reportUnknownVariableType=false, reportUnknownMemberType=false, reportUnknownArgumentType=false

from __future__ import annotations

import json
import secrets
from typing import Any, Final

from ..._errors import LimitExceededError, TruncatedStreamError, ValidationError
from ...limits import freeze_json
from .._base.mapping import compact_json
from .._base.stream_mapping import (
    Event,
    StreamMapper,
    begin_events,
    count,
    finish_events,
    malformed_line,
    tool_input_available,
    tool_input_error,
)
from ._errors import stream_error
from ._request import GENERATED_ID_PREFIX, PROVIDER

__all__ = ["GenerateContentMapper"]


_FINISH_REASONS: Final = {
    "STOP": "stop",
    "MAX_TOKENS": "length",
    "SAFETY": "content-filter",
    "RECITATION": "content-filter",
    "BLOCKLIST": "content-filter",
    "PROHIBITED_CONTENT": "content-filter",
    "SPII": "content-filter",
    "IMAGE_SAFETY": "content-filter",
    "IMAGE_PROHIBITED_CONTENT": "content-filter",
    "IMAGE_RECITATION": "content-filter",
    "MALFORMED_FUNCTION_CALL": "error",
    "UNEXPECTED_TOOL_CALL": "error",
    "TOO_MANY_TOOL_CALLS": "error",
    "MISSING_THOUGHT_SIGNATURE": "error",
    "MALFORMED_RESPONSE": "error",
    # LANGUAGE, NO_IMAGE, IMAGE_OTHER, OTHER, FINISH_REASON_UNSPECIFIED, new ones: "other"
}
# Part fields that carry no output of their own.
_QUIET_FIELDS: Final = frozenset({"thoughtSignature", "thought", "partMetadata", "videoMetadata"})


class GenerateContentMapper(StreamMapper):
    """Turns the SSE events of one ``streamGenerateContent`` answer into ai_chat events.

    Feed each event's data to :meth:`feed`, which appends the events it completes to
    ``out``. Gemini has no terminal event: the body simply ends after the chunk with the
    ``finishReason``, so :attr:`done` stays ``False`` and the whole body is read; then
    :meth:`finish` appends the closing events (``finish-step``, ``finish``).

    Raises :class:`~ai_chat.ProviderError` for an error object in the stream, a data line
    that is not JSON or not a response object, output it cannot map and a
    ``CONTINUATION`` finish, and :class:`~ai_chat.TruncatedStreamError` from
    :meth:`finish` when no ``finishReason`` (nor a prompt block) arrived.
    """

    __slots__ = (
        "_block",
        "_block_kind",
        "_call_ids",
        "_calls",
        "_finish_reason",
        "_parts",
        "_started",
        "_usage",
    )

    request_id: str | None  # the responseId, when no request id header came

    def __init__(self, provider: str = PROVIDER) -> None:
        super().__init__(provider)
        self._started = False
        self._block: str | None = None  # the id of the open text or reasoning part
        self._block_kind = ""  # "text" or "reasoning"
        self._calls = 0  # function calls seen so far
        self._call_ids: set[str] = set()
        self._parts = 0  # text and reasoning parts opened so far
        self._finish_reason: str | None = None
        self._usage: dict[str, Any] | None = None

    # --- feeding ----------------------------------------------------------------------

    def feed(self, name: str, data: str, out: list[Event]) -> None:
        """Map one SSE event's data (Gemini names no events; ``name`` is not used)."""
        try:
            chunk = json.loads(data)
        except ValueError as exc:
            raise self._error(malformed_line(data, exc)) from exc
        if type(chunk) is not dict:
            raise self._error(f"expected a response object in the stream, got {data[:120]!r}")
        if "error" in chunk:
            raise stream_error(chunk, self.request_id)
        if not self._started:
            self._begin(chunk, out)
        candidates = chunk.get("candidates")
        if candidates:
            if type(candidates) is not list or type(candidates[0]) is not dict:
                raise self._error(f"expected a list of candidates, got {candidates!r}"[:200])
            if len(candidates) > 1:
                raise self._error("the answer came with several candidates; ask for one")
            self._candidate(candidates[0], out)
        usage = chunk.get("usageMetadata")
        if type(usage) is dict:
            self._usage = usage
        feedback = chunk.get("promptFeedback")
        if type(feedback) is dict and feedback.get("blockReason"):
            self._close_block(out)
            self._finish_reason = "BLOCKED"

    def _begin(self, chunk: dict[str, Any], out: list[Event]) -> None:
        self._started = True
        response_id = chunk.get("responseId")
        if type(response_id) is str and response_id:
            if self.request_id is None:
                self.request_id = response_id
        else:
            response_id = None
        begin_events(out, response_id)

    def _candidate(self, candidate: dict[str, Any], out: list[Event]) -> None:
        content = candidate.get("content")
        if type(content) is dict:
            parts = content.get("parts")
            if type(parts) is list:
                for part in parts:
                    if type(part) is not dict:
                        raise self._error(f"expected a part object, got {part!r}"[:200])
                    self._part(part, out)
        reason = candidate.get("finishReason")
        if reason and type(reason) is str:
            if reason == "CONTINUATION":
                raise self._error(
                    "the answer continues in a follow-up request (finishReason "
                    "CONTINUATION), which the adapter does not make; ask for a shorter "
                    "answer (maxOutputTokens)"
                )
            self._close_block(out)
            self._finish_reason = reason

    def _part(self, part: dict[str, Any], out: list[Event]) -> None:
        text = part.get("text")
        if type(text) is str:
            kind = "reasoning" if part.get("thought") is True else "text"
            signature = part.get("thoughtSignature")
            if text or signature:
                block = self._block
                if block is None or self._block_kind != kind:
                    self._close_block(out)
                    block = self._open_block(kind, out)
                if text:
                    out.append({"type": f"{kind}-delta", "id": block, "delta": text})
                if signature:
                    self._close_block(out, signature)
            return  # an empty text part (the finishing chunk often has one): nothing
        call = part.get("functionCall")
        if call is not None:
            self._function_call(call, part.get("thoughtSignature"), out)
            return
        inline = part.get("inlineData")
        if inline is not None:
            self._file(inline, out)
            return
        extra = sorted(set(part) - _QUIET_FIELDS)
        if extra:
            raise self._error(
                f"a part with {', '.join(extra)} arrived, which the adapter cannot map to "
                "ai_chat events (it maps text, thought, functionCall and inlineData parts)"
            )
        signature = part.get("thoughtSignature")
        if signature:  # a signature on a part of its own: it belongs with the text before
            if self._block is None:
                self._open_block("text", out)
            self._close_block(out, signature)

    def _open_block(self, kind: str, out: list[Event]) -> str:
        block = self._block = f"{kind}-{self._parts}"
        self._parts += 1
        self._block_kind = kind
        out.append({"type": f"{kind}-start", "id": block})
        return block

    def _close_block(self, out: list[Event], signature: object = None) -> None:
        block = self._block
        if block is None:
            return
        self._block = None
        end: Event = {"type": f"{self._block_kind}-end", "id": block}
        if signature:
            if type(signature) is not str:
                raise self._error(f"expected a thoughtSignature string, got {signature!r}"[:200])
            end["providerMetadata"] = {PROVIDER: {"thoughtSignature": signature}}
        out.append(end)

    def _function_call(self, call: object, signature: object, out: list[Event]) -> None:
        self._close_block(out)
        if type(call) is not dict:
            raise self._error(f"expected a functionCall object, got {call!r}"[:200])
        name = call.get("name")
        if not name or type(name) is not str:
            raise self._error("a functionCall came without its name")
        call_id = call.get("id")
        if not call_id or type(call_id) is not str:
            call_id = f"{GENERATED_ID_PREFIX}{secrets.token_hex(8)}"
        elif call_id in self._call_ids:
            raise self._error(f"the answer has two function calls with the id {call_id!r}"[:200])
        self._call_ids.add(call_id)
        self._calls += 1
        start: Event = {"type": "tool-input-start", "toolCallId": call_id, "toolName": name}
        metadata: dict[str, Any] | None = None
        if signature:
            if type(signature) is not str:
                raise self._error(f"expected a thoughtSignature string, got {signature!r}"[:200])
            metadata = {PROVIDER: {"thoughtSignature": signature}}
            start["providerMetadata"] = metadata
        out.append(start)
        arguments = call.get("args", {})
        text = compact_json(arguments)
        out.append({"type": "tool-input-delta", "toolCallId": call_id, "inputTextDelta": text})
        try:
            if type(arguments) is not dict:
                raise ValueError(f"expected an object, got {type(arguments).__name__}")
            value = freeze_json(arguments)
        except (ValueError, LimitExceededError) as exc:
            reason = exc.reason if isinstance(exc, ValidationError) else str(exc)
            error_text = f"the tool input is not a JSON object: {reason}"
            event = tool_input_error(call_id, name, text, error_text)
        else:
            event = tool_input_available(call_id, name, value)
        if metadata is not None:
            event["providerMetadata"] = metadata
        out.append(event)

    def _file(self, inline: object, out: list[Event]) -> None:
        self._close_block(out)
        if type(inline) is not dict:
            raise self._error(f"expected an inlineData object, got {inline!r}"[:200])
        media_type = inline.get("mimeType")
        data = inline.get("data")
        if not media_type or type(media_type) is not str or type(data) is not str:
            raise self._error("an inlineData part came without its mimeType or data")
        out.append(
            {"type": "file", "url": f"data:{media_type};base64,{data}", "mediaType": media_type}
        )

    # --- the end ----------------------------------------------------------------------

    def finish(self, out: list[Event]) -> None:
        """The closing events, once a ``finishReason`` came.

        Raises :class:`~ai_chat.TruncatedStreamError` if none did.
        """
        reason = self._finish_reason
        if reason is None:
            raise TruncatedStreamError(
                self.provider,
                "the answer was cut off: the response body ended before a finishReason; "
                "retry the request",
                request_id=self.request_id,
            )
        self._close_block(out)  # output after the finishReason, which Gemini does not send
        if reason == "BLOCKED":
            mapped = "content-filter"
        elif reason == "STOP" and self._calls:
            mapped = "tool-calls"
        else:
            mapped = _FINISH_REASONS.get(reason, "other")
        finish_events(out, mapped, self._mapped_usage())

    def _mapped_usage(self) -> dict[str, int]:
        usage = self._usage
        if not usage:
            return {}
        counts: dict[str, int] = {}
        for field in (
            "promptTokenCount",
            "toolUsePromptTokenCount",
            "candidatesTokenCount",
            "thoughtsTokenCount",
            "totalTokenCount",
            "cachedContentTokenCount",
        ):
            count(counts, field, usage.get(field))
        mapped: dict[str, int] = {}
        if "promptTokenCount" in counts:
            # Tool-use prompt tokens (from server-side tools) are input too.
            mapped["inputTokens"] = counts["promptTokenCount"] + counts.get(
                "toolUsePromptTokenCount", 0
            )
        if "candidatesTokenCount" in counts or "thoughtsTokenCount" in counts:
            # Thinking is output, as with OpenAI (reasoningTokens is a part of it).
            mapped["outputTokens"] = counts.get("candidatesTokenCount", 0) + counts.get(
                "thoughtsTokenCount", 0
            )
        if "totalTokenCount" in counts:
            mapped["totalTokens"] = counts["totalTokenCount"]
        if "cachedContentTokenCount" in counts:
            mapped["cachedInputTokens"] = counts["cachedContentTokenCount"]
        if "thoughtsTokenCount" in counts:
            mapped["reasoningTokens"] = counts["thoughtsTokenCount"]
        return mapped
