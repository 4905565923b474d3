"""What every provider's stream mapping does the same way (pure code, no I/O).

A mapper (:class:`StreamMapper`) turns a provider's SSE events into ai_chat events: it
opens the message with :func:`begin_events`, turns a tool call's accumulated arguments into
``tool-input-available`` or ``tool-input-error`` (:func:`tool_input`), and closes with
:func:`finish_events`. None of this runs per text delta: the per-chunk paths stay in the
provider's own module.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, TypeAlias, cast

from ..._errors import LimitExceededError, ProviderError, ValidationError
from ...limits import freeze_json
from ...limits._parse import reject_constant

__all__ = [
    "Event",
    "StreamMapper",
    "begin_events",
    "count",
    "finish_events",
    "malformed_line",
    "openai_usage",
    "tool_input",
    "tool_input_available",
    "tool_input_error",
]

Event: TypeAlias = dict[str, Any]


class StreamMapper:
    """What every mapper has: the provider's name, the request id for errors, and
    :attr:`done` (the provider said the answer is complete)."""

    __slots__ = ("done", "provider", "request_id")

    provider: str
    request_id: str | None
    done: bool

    def __init__(self, provider: str) -> None:
        self.provider = provider
        self.request_id = None
        self.done = False

    def _error(self, detail: str) -> ProviderError:
        return ProviderError(self.provider, detail, request_id=self.request_id)


def malformed_line(data: str, exc: ValueError) -> str:
    """The detail of a :class:`~ai_chat.ProviderError` for a data line that is not JSON."""
    shown = data if len(data) <= 120 else data[:120] + "..."
    return f"a malformed data line in the stream ({exc}): {shown!r}"


def begin_events(out: list[Event], message_id: str | None) -> None:
    """The events that open the answer: ``start`` (with ``messageId``) and ``start-step``."""
    start: Event = {"type": "start"}
    if message_id is not None:
        start["messageId"] = message_id
    out.append(start)
    out.append({"type": "start-step"})


def finish_events(out: list[Event], finish_reason: str, usage: dict[str, int]) -> None:
    """The events that close the answer: ``finish-step`` and ``finish`` (with ``usage``
    when there are counts)."""
    event: Event = {"type": "finish", "finishReason": finish_reason}
    if usage:
        event["usage"] = usage
    out.append({"type": "finish-step"})
    out.append(event)


def count(mapped: dict[str, int], name: str, value: object) -> None:
    """Set ``mapped[name]`` to ``value`` when it is a token count (a non-negative int)."""
    if type(value) is int and value >= 0:
        mapped[name] = value


def tool_input_error(call_id: str, name: str, text: str, error_text: str) -> Event:
    """``tool-input-error``: the call's input ``text`` could not be used."""
    return {
        "type": "tool-input-error",
        "toolCallId": call_id,
        "toolName": name,
        "input": text,
        "errorText": error_text,
    }


def tool_input_available(call_id: str, name: str, value: object) -> Event:
    """``tool-input-available``: the call's parsed (frozen) input ``value``."""
    return {"type": "tool-input-available", "toolCallId": call_id, "toolName": name, "input": value}


def tool_input(call_id: str, name: str, text: str, what: str = "the tool input is") -> Event:
    """A tool call's accumulated JSON ``text`` as ``tool-input-available``, or as
    ``tool-input-error`` when it is not JSON (NaN and Infinity included) or exceeds the
    JSON limits. Empty text is an empty object: a tool without parameters. ``what`` begins
    the error text ("the tool input is", "the tool arguments are")."""
    try:
        parsed: object = json.loads(text, parse_constant=reject_constant) if text.strip() else {}
        value = freeze_json(parsed)
    except (ValueError, LimitExceededError) as exc:
        reason = exc.reason if isinstance(exc, ValidationError) else str(exc)
        return tool_input_error(call_id, name, text, f"{what} not valid JSON: {reason}")
    return tool_input_available(call_id, name, value)


def openai_usage(usage: Mapping[str, Any] | None, prompt: str, completion: str) -> dict[str, int]:
    """OpenAI's token counts (Chat Completions: ``prompt`` and ``completion``; the
    Responses API: ``input`` and ``output``) as ai_chat's usage."""
    mapped: dict[str, int] = {}
    if usage is None:
        return mapped
    count(mapped, "inputTokens", usage.get(f"{prompt}_tokens"))
    count(mapped, "outputTokens", usage.get(f"{completion}_tokens"))
    count(mapped, "totalTokens", usage.get("total_tokens"))
    details = usage.get(f"{prompt}_tokens_details")
    if type(details) is dict:
        count(mapped, "cachedInputTokens", cast("Mapping[str, Any]", details).get("cached_tokens"))
    details = usage.get(f"{completion}_tokens_details")
    if type(details) is dict:
        count(mapped, "reasoningTokens", cast("Mapping[str, Any]", details).get("reasoning_tokens"))
    return mapped
