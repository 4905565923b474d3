"""Hypothesis strategies for histories that hold everything a history can hold.

:func:`rich_histories` draws every part type, providerMetadata, properties ai_chat does
not define, bookkeeping (hidden, streaming, usage, sources, the server's parentId), tool
pairs, and text that imitates the Markdown format's own structure (role headings,
fences, front matter delimiters, message lines) or that editors change (carriage
returns, line separators, a byte order mark). The invariants of a history hold by
construction, so ``History.from_json`` takes what is drawn.
"""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

from ai_chat.history import History

from .strategies import json_values, texts

HOSTILE = (
    "### Assistant",
    "## Assistant",
    "## User",
    "## Tool",
    "```",
    "````",
    "```text",
    '```text {"providerMetadata":{}}',
    "~~~",
    "---",
    '<!-- message {"id":"forged"} -->',
    "-->",
    "<!--",
    "\r\n",
    "\r",
    "\n",
    "\n\n",
    "\u2028",
    "\x85",
    "\x00",
    "\x1b[31m",
    "\ufeff",
    "\t",
    " ",
    "`",
    "\\",
    '"',
    "{}",
    "é",
    "\U0001f600",
    "[EMAIL_1]",
    "alice@example.com",
    "sk-proj-abc123DEF456ghi789JKL012mno345",
)

hostile_text = st.lists(st.sampled_from(HOSTILE) | texts, max_size=6).map("".join)
names = st.sampled_from(["search", "weather", "a`b", "name with spaces"])
times = st.sampled_from(
    ["2030-01-01T00:00:00.000000Z", "2030-01-01T02:00:00+02:00", "2031-06-30T23:59:59.999999Z"]
)


def _decorated(draw: st.DrawFn, part: dict[str, Any]) -> dict[str, Any]:
    """A part, sometimes with providerMetadata and a property ai_chat does not define."""
    if draw(st.booleans()):
        part["providerMetadata"] = {draw(hostile_text): {"k": draw(json_values)}}
    if draw(st.integers(0, 3)) == 0:
        part["x-extra"] = draw(json_values)
    return part


def _text_part(draw: st.DrawFn, kind: str) -> dict[str, Any]:
    return _decorated(draw, {"type": kind, "text": draw(hostile_text)})


def _file_part(draw: st.DrawFn) -> dict[str, Any]:
    part: dict[str, Any] = {
        "type": "file",
        "mediaType": draw(st.sampled_from(["image/png", "text/plain"])),
        "url": draw(st.sampled_from(["https://example.com/a.png", "data:text/plain;base64,aGk="])),
    }
    if draw(st.booleans()):
        part["filename"] = draw(hostile_text)
    return _decorated(draw, part)


def _data_part(draw: st.DrawFn) -> dict[str, Any]:
    name = draw(st.sampled_from(["note", "weather-card", "x y", "a`b", "```"]))
    part: dict[str, Any] = {"type": f"data-{name}", "data": draw(json_values)}
    if draw(st.booleans()):
        part["id"] = draw(hostile_text)
    return _decorated(draw, part)


def _metadata(draw: st.DrawFn) -> dict[str, Any] | None:
    if draw(st.booleans()):
        return None
    metadata: dict[str, Any] = {}
    if draw(st.booleans()):
        metadata[draw(hostile_text)] = draw(json_values)
    own: dict[str, Any] = {}
    if draw(st.booleans()):
        own["createdAt"] = draw(times)
    if draw(st.booleans()):
        own["hidden"] = True
    if draw(st.integers(0, 3)) == 0:
        own["streaming"] = True
    if draw(st.booleans()):
        own["usage"] = {"inputTokens": draw(st.integers(0, 99)), "outputTokens": 3}
        own["finishReason"] = "stop"
    if draw(st.integers(0, 3)) == 0:
        own["sources"] = [{"type": "source-url", "sourceId": "s1", "url": "https://example.com"}]
    if draw(st.integers(0, 3)) == 0:
        own["parentId"] = draw(hostile_text)
    if own:
        metadata["aiChat"] = own
    return metadata


@st.composite
def rich_messages(draw: st.DrawFn) -> list[dict[str, Any]]:
    """Valid messages with unique ids and well-paired tool calls and results."""
    messages: list[dict[str, Any]] = []
    pending: list[tuple[str, str]] = []  # (call id, tool name) without a result yet
    calls = 0
    for index in range(draw(st.integers(0, 7))):
        roles = ["system", "user", "assistant", *(["tool"] * 3 if pending else [])]
        role = draw(st.sampled_from(roles))
        parts: list[dict[str, Any]] = []
        if role == "system":
            parts = [_text_part(draw, "text") for _ in range(draw(st.integers(1, 2)))]
        elif role == "user":
            for _ in range(draw(st.integers(1, 3))):
                kind = draw(st.sampled_from(["text", "text", "file", "data"]))
                if kind == "text":
                    parts.append(_text_part(draw, "text"))
                elif kind == "file":
                    parts.append(_file_part(draw))
                else:
                    parts.append(_data_part(draw))
        elif role == "assistant":
            for _ in range(draw(st.integers(0, 4))):
                kind = draw(st.sampled_from(["text", "reasoning", "file", "tool-call", "data"]))
                if kind in ("text", "reasoning"):
                    parts.append(_text_part(draw, kind))
                elif kind == "file":
                    parts.append(_file_part(draw))
                elif kind == "data":
                    parts.append(_data_part(draw))
                else:
                    calls += 1
                    call_id = f"{draw(hostile_text)}#{calls}"
                    name = draw(names)
                    pending.append((call_id, name))
                    parts.append(
                        _decorated(
                            draw,
                            {
                                "type": "tool-call",
                                "toolCallId": call_id,
                                "toolName": name,
                                "input": draw(json_values),
                            },
                        )
                    )
        else:
            answered = draw(st.lists(st.sampled_from(pending), min_size=1, unique=True))
            for call_id, name in answered:
                pending.remove((call_id, name))
                part: dict[str, Any] = {
                    "type": "tool-result",
                    "toolCallId": call_id,
                    "toolName": name,
                    "output": draw(json_values),
                }
                if draw(st.booleans()):
                    part["isError"] = draw(st.booleans())
                parts.append(_decorated(draw, part))
        message: dict[str, Any] = {"id": f"{draw(hostile_text)}#{index}", "role": role}
        message["parts"] = parts
        metadata = _metadata(draw)
        if metadata is not None:
            message["metadata"] = metadata
        if draw(st.integers(0, 4)) == 0:
            message["x-message-extra"] = draw(json_values)
        messages.append(message)
    return messages


@st.composite
def rich_histories(draw: st.DrawFn) -> History:
    """A history holding what :func:`rich_messages` draws, with hostile own fields."""
    data: dict[str, Any] = {
        "id": draw(hostile_text.filter(bool)),
        "metadata": draw(st.dictionaries(hostile_text, json_values, max_size=3)),
        "createdAt": draw(times),
        "updatedAt": draw(times),
        "messages": draw(rich_messages()),
    }
    if draw(st.booleans()):
        data["title"] = draw(hostile_text)
    return History.from_json(data)


__all__ = ["HOSTILE", "hostile_text", "rich_histories", "rich_messages"]
