"""OpenAI Responses API stream events as ai_chat events (sans-IO: SSE events in, events out).

The wire format (``event: <type>`` plus ``data: {"type": <type>, "sequence_number": n,
...}``, no ``[DONE]``) is described in the provider notes; the points that shape this
code:

* ``response.created`` carries the response id;
* the answer is a list of output items, numbered by ``output_index`` and named by
  ``item_id``: ``message`` items (``response.output_text.delta``, and
  ``response.refusal.delta`` for a refusal), ``reasoning`` items (one
  ``response.reasoning_summary_text.delta`` stream per ``summary_index``, or
  ``response.reasoning_text.delta`` for raw reasoning; ``encrypted_content`` arrives with
  ``response.output_item.done``) and ``function_call`` items
  (``response.function_call_arguments.delta`` fragments, the whole string in the done
  item). Items may interleave, so every delta is routed by its ``item_id``;
* the terminal event is ``response.completed`` or ``response.incomplete`` (with
  ``incomplete_details.reason``), both carrying usage; there is no finish reason, so a
  completed response with function calls finishes with ``tool-calls``;
* ``response.failed`` and ``event: error`` are the provider failing mid-answer: the SDK
  yields them as ordinary events, this mapper raises;
* a body that ends before ``response.completed`` or ``response.incomplete`` is a
  truncated answer.

Reasoning parts are named ``<item id>:<summary index>`` and carry
``providerMetadata.openai.itemId`` (and ``reasoningEncryptedContent`` when the response
includes it), text parts and tool calls ``providerMetadata.openai.itemId``: sent back in
the history they become the same output items again (see ``_openai_responses_request``).
Unknown event types are ignored (OpenAI adds them over time); an output item of a type
the adapter cannot map (a built-in tool's call, say) is an error rather than lost output.
"""

# The per-event code reads parsed JSON and checks types at run time with `type(x) is ...`
# (exact and cheap), which pyright cannot follow without a cast per value: these three
# "unknown type" reports are off here, as in ai_chat/_messages.py.
# pyright: reportUnknownVariableType=false, reportUnknownMemberType=false, reportUnknownArgumentType=false

from __future__ import annotations

import json
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

__all__ = ["ResponsesEventMapper"]

_INCOMPLETE_REASONS: Final = {
    "max_output_tokens": "length",
    "content_filter": "content-filter",
}


class _Item:
    """One output item in progress."""

    __slots__ = (
        "arguments",
        "call_id",
        "encrypted",
        "id",
        "kind",
        "metadata",
        "name",
        "open",
        "streamed",
    )

    def __init__(self, kind: str, item_id: str, provided: bool) -> None:
        self.kind = kind  # "message", "reasoning" or "function_call"
        self.id = item_id
        # The providerMetadata that sends the item back under its id; none for an id the
        # adapter made up (the API would not know it).
        self.metadata: dict[str, Any] | None = {"openai": {"itemId": item_id}} if provided else None
        # reasoning: the ids of its open parts, one per summary (or raw text) index.
        self.open: list[str] = []
        self.call_id = ""
        self.name = ""
        self.arguments: list[str] = []
        self.streamed = False  # whether any argument delta was passed on
        self.encrypted: str | None = None  # a reasoning item's encrypted_content, if seen


class ResponsesEventMapper(StreamMapper):
    """Turns the SSE events of one streamed response into ai_chat events.

    Feed each event's name and data to :meth:`feed`, which appends the events it
    completes to ``out``; stop feeding once :attr:`done` (``response.completed`` or
    ``response.incomplete`` arrived). At the end of the body call :meth:`finish` for the
    closing events (``finish-step``, ``finish``).

    Raises :class:`~ai_chat.ProviderError` for ``response.failed``, an ``error`` event, a
    data line that is not JSON or not an event object, and an unmappable output item, and
    :class:`~ai_chat.TruncatedStreamError` from :meth:`finish` when the response never
    completed.
    """

    __slots__ = (
        "_calls",
        "_finish_reason",
        "_items",
        "_order",
        "_started",
        "_usage",
    )

    def __init__(self, provider: str = "openai") -> None:
        super().__init__(provider)
        self._started = False
        self._items: dict[str, _Item] = {}  # open items by item id
        self._order: dict[int, str] = {}  # open item ids by output_index
        self._calls = 0
        self._finish_reason: str | None = None
        self._usage: dict[str, Any] | None = None

    # --- feeding ----------------------------------------------------------------------

    def feed(self, name: str, data: str, out: list[Event]) -> None:
        """Map one SSE event (its data's ``type`` names it; ``name`` is the fallback)."""
        try:
            event = json.loads(data)
        except ValueError as exc:
            raise self._error(malformed_line(data, exc)) from exc
        if type(event) is not dict:
            raise self._error(f"expected an event object in the stream, got {data[:120]!r}")
        kind = event.get("type")
        if type(kind) is not str:
            kind = name
        if kind == "response.output_text.delta" or kind == "response.refusal.delta":
            self._text_delta(event, out)
        elif kind == "response.function_call_arguments.delta":
            self._arguments_delta(event, out)
        elif kind == "response.reasoning_summary_text.delta":
            self._reasoning_delta(event, "summary_index", out)
        elif kind == "response.reasoning_text.delta":
            self._reasoning_delta(event, "content_index", out)
        elif kind == "response.output_item.added":
            self._item_added(event, out)
        elif kind == "response.output_item.done":
            self._item_done(event, out)
        elif kind == "response.reasoning_summary_part.added":
            item = self._item(event, "reasoning")
            self._reasoning_part(item, _index(event, "summary_index"), out)
        elif kind == "response.created":
            response = event.get("response")
            response_id = response.get("id") if type(response) is dict else None
            self._begin(out, response_id if type(response_id) is str and response_id else None)
        elif kind == "response.completed" or kind == "response.incomplete":
            self._complete(event, out)
        elif kind == "response.failed":
            raise self._failed(event)
        elif kind == "error":
            error = event.get("error")
            raise self._stream_error(error if type(error) is dict else event)

    def _item_added(self, event: dict[str, Any], out: list[Event]) -> None:
        self._begin(out, None)
        item = event.get("item")
        if type(item) is not dict:
            raise self._error(f"expected an output item object, got {item!r}"[:200])
        kind = item.get("type")
        index = event.get("output_index")
        item_id = item.get("id")
        provided = type(item_id) is str and item_id != ""
        if type(item_id) is not str or not item_id:
            # Some OpenAI-compatible servers leave ids out; the output index stands in.
            item_id = f"item-{index if type(index) is int else len(self._order)}"
        if item_id in self._items:
            raise self._error(f"output item {item_id!r} was added twice")
        if kind == "message":
            part = _Item("message", item_id, provided)
            out.append(_with_metadata({"type": "text-start", "id": item_id}, part))
        elif kind == "reasoning":
            part = _Item("reasoning", item_id, provided)
            encrypted = item.get("encrypted_content")
            if encrypted and type(encrypted) is str:
                part.encrypted = encrypted
            self._reasoning_part(part, 0, out)
        elif kind == "function_call":
            call_id = item.get("call_id")
            name = item.get("name")
            if not call_id or type(call_id) is not str or not name or type(name) is not str:
                raise self._error("a function_call item came without its call_id or name")
            part = _Item("function_call", item_id, provided)
            part.call_id = call_id
            part.name = name
            arguments = item.get("arguments")
            if arguments and type(arguments) is str:
                part.arguments.append(arguments)
            self._calls += 1
            out.append(
                _with_metadata(
                    {"type": "tool-input-start", "toolCallId": call_id, "toolName": name}, part
                )
            )
        else:
            raise self._error(
                f"a {kind!r} output item arrived, which the adapter cannot map to ai_chat "
                "events (it maps message, reasoning and function_call items)"
            )
        self._items[item_id] = part
        if type(index) is int:
            self._order[index] = item_id

    def _item(self, event: dict[str, Any], kind: str) -> _Item:
        """The open item an event belongs to, by ``item_id`` (or ``output_index``)."""
        item_id = event.get("item_id")
        item = self._items.get(item_id) if type(item_id) is str else None
        if item is None:
            index = event.get("output_index")
            if type(index) is int and index in self._order:
                item = self._items[self._order[index]]
        if item is None:
            raise self._error(
                f"a {event.get('type')} event for output item {item_id!r}, which is not open"
            )
        if item.kind != kind:
            raise self._error(
                f"a {event.get('type')} event for output item {item.id!r}, a {item.kind} item"
            )
        return item

    def _text_delta(self, event: dict[str, Any], out: list[Event]) -> None:
        delta = event.get("delta")
        if type(delta) is not str:
            raise self._error(f"expected a text delta string, got {delta!r}"[:200])
        item = self._item(event, "message")
        if delta:
            out.append({"type": "text-delta", "id": item.id, "delta": delta})

    def _reasoning_delta(self, event: dict[str, Any], field: str, out: list[Event]) -> None:
        delta = event.get("delta")
        if type(delta) is not str:
            raise self._error(f"expected a reasoning delta string, got {delta!r}"[:200])
        item = self._item(event, "reasoning")
        part_id = self._reasoning_part(item, _index(event, field), out)
        if delta:
            out.append({"type": "reasoning-delta", "id": part_id, "delta": delta})

    def _reasoning_part(self, item: _Item, number: int, out: list[Event]) -> str:
        """The id of the reasoning part for summary (or raw text) ``number``, started if new.

        Part 0 starts with the item, so that a client sees the model thinking even when
        no summary follows; raw reasoning text (from open-weight models, which send no
        summary) shares the numbering.
        """
        part_id = f"{item.id}:{number}"
        if part_id not in item.open:
            item.open.append(part_id)
            out.append(_with_metadata({"type": "reasoning-start", "id": part_id}, item))
        return part_id

    def _arguments_delta(self, event: dict[str, Any], out: list[Event]) -> None:
        delta = event.get("delta")
        if type(delta) is not str:
            raise self._error(f"expected an arguments delta string, got {delta!r}"[:200])
        item = self._item(event, "function_call")
        if delta:
            if not item.streamed:
                # Deltas carry the whole input: arguments the added item already held
                # are sent again by them, not continued.
                item.arguments.clear()
            item.arguments.append(delta)
            item.streamed = True
            out.append(
                {"type": "tool-input-delta", "toolCallId": item.call_id, "inputTextDelta": delta}
            )

    def _item_done(self, event: dict[str, Any], out: list[Event]) -> None:
        done = event.get("item")
        done = done if type(done) is dict else {}
        item_id = done.get("id")
        item = self._items.get(item_id) if type(item_id) is str else None
        if item is None:
            index = event.get("output_index")
            if type(index) is int and index in self._order:
                item = self._items.get(self._order[index])
        if item is None:
            raise self._error(f"output item {item_id!r} is done, but it was never added")
        self._close(item, done, out)

    def _close(self, item: _Item, done: dict[str, Any], out: list[Event]) -> None:
        del self._items[item.id]
        for index, item_id in list(self._order.items()):
            if item_id == item.id:
                del self._order[index]
        if item.kind == "message":
            out.append(_with_metadata({"type": "text-end", "id": item.id}, item))
        elif item.kind == "reasoning":
            encrypted = done.get("encrypted_content")
            if not encrypted or type(encrypted) is not str:
                encrypted = item.encrypted
            if encrypted and item.metadata is not None:
                item.metadata = {
                    "openai": {"itemId": item.id, "reasoningEncryptedContent": encrypted}
                }
            for part_id in item.open:
                out.append(_with_metadata({"type": "reasoning-end", "id": part_id}, item))
        else:
            arguments = done.get("arguments")
            self._tool_input(item, arguments if type(arguments) is str else None, out)

    def _tool_input(self, item: _Item, final: str | None, out: list[Event]) -> None:
        text = "".join(item.arguments) if final is None else final
        if text and not item.streamed:
            # The arguments came whole (in the added or the done item): one delta, so the
            # deltas always add up to the input.
            out.append(
                {"type": "tool-input-delta", "toolCallId": item.call_id, "inputTextDelta": text}
            )
        # Empty arguments: a function without parameters.
        out.append(
            _with_metadata(
                tool_input(item.call_id, item.name, text, "the tool arguments are"), item
            )
        )

    def _begin(self, out: list[Event], response_id: str | None) -> None:
        if not self._started:
            self._started = True
            begin_events(out, response_id)

    # --- the end ----------------------------------------------------------------------

    def _complete(self, event: dict[str, Any], out: list[Event]) -> None:
        self._begin(out, None)
        for item in list(self._items.values()):  # items the provider left open
            self._close(item, {}, out)
        response = event.get("response")
        response = response if type(response) is dict else {}
        usage = response.get("usage")
        if type(usage) is dict:
            self._usage = usage
        if event.get("type") == "response.incomplete" or response.get("status") == "incomplete":
            details = response.get("incomplete_details")
            reason = details.get("reason") if type(details) is dict else None
            self._finish_reason = (
                _INCOMPLETE_REASONS.get(reason, "other") if type(reason) is str else "other"
            )
        else:
            self._finish_reason = "tool-calls" if self._calls else "stop"
        self.done = True

    def finish(self, out: list[Event]) -> None:
        """The closing events, once ``response.completed`` or ``response.incomplete`` came.

        Raises :class:`~ai_chat.TruncatedStreamError` if neither did.
        """
        if self._finish_reason is None:
            raise TruncatedStreamError(
                self.provider,
                "the answer was cut off: the response body ended before response.completed "
                "(or response.incomplete); retry the request",
                request_id=self.request_id,
            )
        finish_events(out, self._finish_reason, openai_usage(self._usage, "input", "output"))

    # --- errors -----------------------------------------------------------------------

    def _failed(self, event: dict[str, Any]) -> ProviderError:
        """``response.failed``: the response's ``error`` says why."""
        response = event.get("response")
        error = response.get("error") if type(response) is dict else None
        if type(error) is not dict:
            return self._error("the response failed (response.failed, without an error object)")
        return self._stream_error(error, "the response failed")

    def _stream_error(
        self, error: dict[str, Any], what: str = "the provider reported an error in the stream"
    ) -> ProviderError:
        message = error.get("message")
        kind = error.get("code") or error.get("type")
        if kind == "error":
            kind = None  # the event's own type, not a kind of error
        shown = message if type(message) is str and message else repr(error)
        return ProviderError(
            self.provider,
            f"{what}: {shown}"[:500],
            error_type=kind if type(kind) is str else None,
            request_id=self.request_id,
        )


def _with_metadata(event: Event, item: _Item) -> Event:
    if item.metadata is not None:
        event["providerMetadata"] = item.metadata
    return event


def _index(event: dict[str, Any], field: str) -> int:
    number = event.get(field)
    return number if type(number) is int and number >= 0 else 0
