"""An offline, deterministic adapter: the embedded default and the workhorse of the tests."""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import AsyncIterator, Iterator, Mapping, Sequence
from typing import cast

import anyio

from .._adapter import AbortSignal
from .._errors import ConfigurationError
from .._types import ChatRequest, Message, TextPart, ToolResultPart

__all__ = ["ScriptedAdapter", "default_script"]

_DEFAULT_TOOL = "search"


class ScriptedAdapter:
    """Streams a fixed script of events, with no model and no network.

    With ``events``, every request replays those events as given (they are not checked
    here, so a script can also break the protocol on purpose). Without, it answers the
    last message of each request with :func:`default_script`: a reasoning part, text in
    many small deltas, a tool call with streamed input, usage and finish.

    Args:
        events: the events to replay, or ``None`` for the default answer.
        delay: seconds to wait between events (0 for none; then the adapter never
            yields to the event loop between events).
    """

    def __init__(
        self, events: Sequence[Mapping[str, object]] | None = None, *, delay: float = 0.0
    ) -> None:
        if type(delay) not in (int, float) or not math.isfinite(delay) or delay < 0:
            raise ConfigurationError("delay", delay, "a finite number of seconds, 0 or more")
        self._events = None if events is None else tuple(events)
        self._delay = float(delay)

    async def stream(
        self, request: ChatRequest, signal: AbortSignal
    ) -> AsyncIterator[Mapping[str, object]]:
        events = self._events if self._events is not None else default_script(request)
        delay = self._delay
        for index, event in enumerate(events):
            if delay and index:
                await anyio.sleep(delay)
            yield event

    def __repr__(self) -> str:
        script = "default script" if self._events is None else f"{len(self._events)} events"
        return f"ScriptedAdapter({script}, delay={self._delay:g})"


def default_script(request: ChatRequest) -> Iterator[Mapping[str, object]]:
    """The default answer to ``request``, as a realistic event sequence.

    After a user message: reasoning, an answer in word-sized text deltas, then a call to
    the first offered tool (``search`` when none is offered) with ``{"query": <the
    user's text>}`` streamed in small fragments, ending with ``finishReason:
    "tool-calls"``. After tool results: a text answer that reports them, ending with
    ``"stop"``. The message id, the tool call id and every count derive from the request
    alone (the ids from a digest of its messages: the answers of one conversation have
    calls of their own, as a history requires).
    """
    messages = request["messages"]
    last = messages[-1] if messages else None
    digest = hashlib.sha256(json.dumps(messages, sort_keys=True).encode()).hexdigest()
    prompt_tokens = sum(len(_text_of(m).split()) for m in messages)
    yield {"type": "start", "messageId": f"msg-{digest[:16]}"}
    yield {"type": "start-step"}
    output_tokens = 0
    reasoning_tokens = 0

    if last is not None and last["role"] == "tool":
        results = [cast(ToolResultPart, p) for p in last["parts"] if p["type"] == "tool-result"]
        summary = "; ".join(f"{p['toolName']} returned {json.dumps(p['output'])}" for p in results)
        answer = f"Here is what the tools told me: {summary}. That completes the answer."
        for event in _text_part("text-1", answer):
            output_tokens += event["type"] == "text-delta"
            yield event
        finish_reason = "stop"
    else:
        said = _text_of(last) if last is not None else ""
        tools = request["tools"]
        tool = tools[0]["name"] if tools else _DEFAULT_TOOL
        count = len(said.split())
        thought = (
            f"The user wrote {count} word{'' if count == 1 else 's'}. I will answer, then "
            f"look the message up with the {tool} tool."
        )
        yield {"type": "reasoning-start", "id": "reasoning-1"}
        for word in _words(thought):
            reasoning_tokens += 1
            yield {"type": "reasoning-delta", "id": "reasoning-1", "delta": word}
        yield {"type": "reasoning-end", "id": "reasoning-1"}
        answer = (
            f'You said: "{said}". This answer comes from the offline scripted adapter, '
            "streamed word by word with no model and no network, so the whole send "
            f"lifecycle can be tried anywhere. Next I will call the {tool} tool."
        )
        for event in _text_part("text-1", answer):
            output_tokens += event["type"] == "text-delta"
            yield event
        arguments = json.dumps({"query": said}, ensure_ascii=False)
        call_id = f"call-{digest[:16]}"
        yield {"type": "tool-input-start", "toolCallId": call_id, "toolName": tool}
        for start in range(0, len(arguments), 8):
            output_tokens += 1
            yield {
                "type": "tool-input-delta",
                "toolCallId": call_id,
                "inputTextDelta": arguments[start : start + 8],
            }
        yield {
            "type": "tool-input-available",
            "toolCallId": call_id,
            "toolName": tool,
            "input": {"query": said},
        }
        finish_reason = "tool-calls"

    output_tokens += reasoning_tokens
    yield {"type": "finish-step"}
    usage: dict[str, int] = {
        "inputTokens": prompt_tokens,
        "outputTokens": output_tokens,
        "totalTokens": prompt_tokens + output_tokens,
    }
    if reasoning_tokens:
        usage["reasoningTokens"] = reasoning_tokens
    yield {"type": "finish", "finishReason": finish_reason, "usage": usage}


def _text_of(message: Message) -> str:
    return " ".join(
        cast(TextPart, part)["text"] for part in message["parts"] if part["type"] == "text"
    )


def _words(text: str) -> Iterator[str]:
    words = text.split(" ")
    for index, word in enumerate(words):
        yield word if index == len(words) - 1 else word + " "


def _text_part(part_id: str, text: str) -> Iterator[dict[str, str]]:
    yield {"type": "text-start", "id": part_id}
    for word in _words(text):
        yield {"type": "text-delta", "id": part_id, "delta": word}
    yield {"type": "text-end", "id": part_id}
