"""What the format tests share: histories, the SDK type checks, and hypothesis strategies.

``expressible(fmt)`` draws normalized histories in a format's canonical form: everything
the format can express, laid out as ``from_*`` lays it out (a run of tool results is
one tool message; Responses assistant items form one assistant message; Anthropic and
Gemini take system messages only at the start, as one). For those,
``from_x(to_x(h))`` equals ``h`` up to message ids (and, for Gemini, the tool call ids
ai_chat makes up, which never go to the API).
"""

from __future__ import annotations

import base64
import itertools
import json
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import Any, TypeAlias, cast

from hypothesis import strategies as st

from ai_chat import normalize_messages
from ai_chat.formats import GENERATED_ID_PREFIX, Format
from ai_chat.types import Message

__all__ = [
    "PDF",
    "PNG",
    "RICH",
    "Draw",
    "expressible",
    "materialize",
    "plain",
    "without_ids",
]

Draw: TypeAlias = Callable[[st.SearchStrategy[Any]], Any]

PNG = "data:image/png;base64,iVBORw0KGgo="
PDF = "data:application/pdf;base64,JVBERi0xLjQK"
TEXT = "data:text/plain;base64," + base64.b64encode("Grüße".encode()).decode()

_RICH: list[dict[str, Any]] = [
    {"id": "s", "role": "system", "parts": [{"type": "text", "text": "Be brief."}]},
    {
        "id": "u1",
        "role": "user",
        "parts": [
            {"type": "text", "text": "What is in these?"},
            {"type": "file", "mediaType": "image/png", "url": PNG},
            {"type": "file", "mediaType": "image/jpeg", "url": "https://example.com/a.jpg"},
            {"type": "file", "mediaType": "application/pdf", "url": PDF, "filename": "r.pdf"},
        ],
    },
    {
        "id": "a1",
        "role": "assistant",
        "parts": [
            {
                "type": "reasoning",
                "text": "They want the weather.",
                "providerMetadata": {
                    "anthropic": {"signature": "sig-1"},
                    "openai": {"itemId": "rs_1", "reasoningEncryptedContent": "gAAA"},
                    "gemini": {"thoughtSignature": "AAEC/w=="},
                },
            },
            {
                "type": "text",
                "text": "Checking the weather.",
                "providerMetadata": {"openai": {"itemId": "msg_1"}},
            },
            {
                "type": "tool-call",
                "toolCallId": "call_1",
                "toolName": "get_weather",
                "input": {"city": "Zürich"},
                "providerMetadata": {"openai": {"itemId": "fc_1"}},
            },
            {"type": "tool-call", "toolCallId": "call_2", "toolName": "get_time", "input": {}},
        ],
    },
    {
        "id": "t1",
        "role": "tool",
        "parts": [
            {
                "type": "tool-result",
                "toolCallId": "call_1",
                "toolName": "get_weather",
                "output": {"temp": 21.5, "sky": "clear"},
            },
            {
                "type": "tool-result",
                "toolCallId": "call_2",
                "toolName": "get_time",
                "output": "clock broken",
                "isError": True,
            },
        ],
    },
    {"id": "a2", "role": "assistant", "parts": [{"type": "text", "text": "Sunny, 21.5°C."}]},
    {"id": "u2", "role": "user", "parts": [{"type": "text", "text": "Thanks"}]},
]
RICH: tuple[Message, ...] = normalize_messages(_RICH)
"""A history every format can take (Chat Completions with ``reasoning_parts="omit"``)."""


def plain(value: object) -> Any:
    """``value`` as JSON would give it back (frozen dicts and tuples as dicts and lists)."""
    return json.loads(json.dumps(value))


def materialize(value: object) -> Any:
    """A pydantic-validated value with its lazy iterables (``Iterable[...]`` fields) read
    out, so that every item is validated and the whole compares to plain JSON."""
    if isinstance(value, Mapping):
        fields = cast("Mapping[str, object]", value)
        return {key: materialize(item) for key, item in fields.items()}
    if value is None or isinstance(value, (str, bytes, int, float)):
        return value
    return [materialize(item) for item in cast("Iterable[object]", value)]


def without_ids(messages: Sequence[Message]) -> list[Any]:
    """The messages as plain JSON, each id replaced by its position, and the tool call
    ids that ai_chat made up for Gemini by their order of appearance."""
    renamed: dict[str, str] = {}
    numbers = itertools.count()

    def rename(call_id: str) -> str:
        if not call_id.startswith(GENERATED_ID_PREFIX):
            return call_id
        return renamed.setdefault(call_id, f"{GENERATED_ID_PREFIX}#{next(numbers)}")

    out: list[Any] = []
    for index, message in enumerate(plain(messages)):
        message["id"] = index
        for part in message["parts"]:
            if "toolCallId" in part:
                part["toolCallId"] = rename(part["toolCallId"])
        out.append(message)
    return out


# --- strategies ----------------------------------------------------------------------------

_TEXT = st.text(st.characters(exclude_categories=("Cs",)), max_size=12)
_NAME = st.sampled_from(["get_weather", "get_time", "search"])
_SCALARS = (
    st.none()
    | st.booleans()
    | st.integers(-(2**53) + 1, 2**53 - 1)
    | st.floats(allow_nan=False, allow_infinity=False)
    | _TEXT
)
_JSON = st.recursive(
    _SCALARS,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_TEXT, inner, max_size=3),
    max_leaves=6,
)
_OBJECT = st.dictionaries(_TEXT, _JSON, max_size=3)
_B64 = st.binary(min_size=1, max_size=12).map(lambda b: base64.b64encode(b).decode())


def _text(draw: Draw, metadata: Mapping[str, Any] | None = None) -> dict[str, Any]:
    part: dict[str, Any] = {"type": "text", "text": draw(_TEXT)}
    if metadata:
        part["providerMetadata"] = dict(metadata)
    return part


def _file(media_type: str, url: str, filename: str | None = None) -> dict[str, Any]:
    part: dict[str, Any] = {"type": "file", "mediaType": media_type, "url": url}
    if filename is not None:
        part["filename"] = filename
    return part


def _user_parts(draw: Draw, fmt: Format) -> list[dict[str, Any]]:
    files: list[st.SearchStrategy[dict[str, Any]]]
    if fmt == "openai-chat":
        files = [
            st.just(_file("image/png", PNG)),
            st.sampled_from(["low", "high", "auto"]).map(
                lambda d: (
                    _file("image/jpeg", "https://x.test/a.jpg")
                    | {"providerMetadata": {"openai": {"imageDetail": d}}}
                )
            ),
            _TEXT.map(lambda name: _file("application/pdf", PDF, name + ".pdf")),
        ]
    elif fmt == "openai-responses":
        files = [
            st.just(_file("image/png", PNG)),
            st.sampled_from(["low", "high"]).map(
                lambda d: (
                    _file("image/jpeg", "https://x.test/a.jpg")
                    | {"providerMetadata": {"openai": {"imageDetail": d}}}
                )
            ),
            _TEXT.map(lambda name: _file("application/pdf", PDF, name + ".pdf")),
            st.just(_file("application/pdf", "https://x.test/b.pdf")),
        ]
    elif fmt == "anthropic":
        files = [
            st.just(_file("image/png", PNG)),
            st.just(_file("image/jpeg", "https://x.test/a.jpg")),
            _TEXT.map(lambda name: _file("application/pdf", PDF, name + ".pdf")),
            st.just(_file("application/pdf", "https://x.test/b.pdf")),
            st.just(_file("text/plain", TEXT, "notes.txt")),
        ]
    else:
        files = [
            st.sampled_from(["image/png", "audio/wav", "application/pdf", "text/plain"]).flatmap(
                lambda media: _B64.map(lambda data: _file(media, f"data:{media};base64,{data}"))
            ),
            st.just(_file("video/mp4", "gs://bucket/v.mp4")),
            st.just(_file("application/pdf", "https://x.test/b.pdf")),
        ]
    parts = draw(st.lists(st.one_of(st.none(), *files), min_size=1, max_size=3))
    return [part or _text(draw) for part in parts]


class _Calls:
    """Tool call ids for one history, unique."""

    def __init__(self) -> None:
        self._numbers = itertools.count()

    def new(self, fmt: Format, generated: bool) -> str:
        number = next(self._numbers)
        if fmt == "gemini" and generated:
            return f"{GENERATED_ID_PREFIX}{number}"
        return f"call_{number}"


def _assistant_parts(
    draw: Draw, fmt: Format, calls: _Calls, items: Iterator[int]
) -> list[dict[str, Any]]:
    parts: list[dict[str, Any]] = []
    if fmt == "openai-chat":
        refusal = {"openai": {"refusal": True}}
        texts = draw(st.lists(st.booleans(), max_size=2))
        parts = [_text(draw, refusal if flag else None) for flag in texts]
        if len(parts) == 1 and not parts[0]["text"]:
            parts[0]["text"] = "x"  # a lone empty text is no content at all to the API
    elif fmt == "openai-responses":
        for kind in draw(
            st.lists(st.sampled_from(["reasoning", "text", "message", "call"]), max_size=4)
        ):
            if kind == "reasoning":
                item = f"rs_{next(items)}"
                summaries = draw(st.lists(_TEXT.filter(bool), max_size=2)) or [""]
                raw = draw(st.lists(_TEXT, max_size=1))
                encrypted = draw(st.none() | _B64)
                entries = [({"itemId": item}, text) for text in summaries]
                entries += [({"itemId": item, "reasoningText": True}, text) for text in raw]
                if encrypted is not None:
                    entries[-1][0]["reasoningEncryptedContent"] = encrypted
                if raw and summaries == [""]:
                    entries = entries[1:]
                parts += [
                    {"type": "reasoning", "text": text, "providerMetadata": {"openai": own}}
                    for own, text in entries
                ]
            elif kind == "text":
                parts.append(_text(draw))
            elif kind == "message":
                item = f"msg_{next(items)}"
                for refusal in draw(st.lists(st.booleans(), min_size=1, max_size=2)):
                    own: dict[str, Any] = {"itemId": item}
                    if refusal:
                        own["refusal"] = True
                    parts.append(_text(draw, {"openai": own}))
            else:
                part = _call(draw, fmt, calls)
                if draw(st.booleans()):
                    part["providerMetadata"] = {"openai": {"itemId": f"fc_{next(items)}"}}
                parts.append(part)
        return parts or [_text(draw)]
    elif fmt == "anthropic":
        for kind in draw(
            st.lists(st.sampled_from(["thinking", "redacted", "text", "cached"]), max_size=3)
        ):
            if kind == "thinking":
                signed = {"anthropic": {"signature": draw(_B64)}}
                parts.append({"type": "reasoning", "text": draw(_TEXT), "providerMetadata": signed})
            elif kind == "redacted":
                redacted = {"anthropic": {"redactedData": draw(_B64)}}
                parts.append({"type": "reasoning", "text": "", "providerMetadata": redacted})
            elif kind == "cached":
                parts.append(_text(draw, {"anthropic": {"cacheControl": {"type": "ephemeral"}}}))
            else:
                parts.append(_text(draw))
    else:
        for kind in draw(st.lists(st.sampled_from(["thought", "text", "file"]), max_size=3)):
            signature = draw(st.none() | _B64)
            metadata = {"gemini": {"thoughtSignature": signature}} if signature else None
            if kind == "thought":
                part = {"type": "reasoning", "text": draw(_TEXT)}
                if metadata:
                    part["providerMetadata"] = metadata
            elif kind == "file":
                part = _file("image/png", PNG)
            else:
                part = _text(draw, metadata)
            parts.append(part)
    for _ in range(draw(st.integers(0, 2))):
        part = _call(draw, fmt, calls)
        if fmt == "gemini" and draw(st.booleans()):
            part["providerMetadata"] = {"gemini": {"thoughtSignature": draw(_B64)}}
        if fmt == "anthropic" and draw(st.booleans()):
            part["providerMetadata"] = {"anthropic": {"cacheControl": {"type": "ephemeral"}}}
        parts.append(part)
    return parts


def _call(draw: Draw, fmt: Format, calls: _Calls) -> dict[str, Any]:
    return {
        "type": "tool-call",
        "toolCallId": calls.new(fmt, draw(st.booleans())),
        "toolName": draw(_NAME),
        "input": draw(_OBJECT),
    }


def _results(draw: Draw, fmt: Format, made: list[dict[str, Any]]) -> list[dict[str, Any]]:
    results: list[dict[str, Any]] = []
    for call in made:
        result: dict[str, Any] = {
            "type": "tool-result",
            "toolCallId": call["toolCallId"],
            "toolName": call["toolName"],
        }
        if fmt in ("openai-chat", "openai-responses"):
            result["output"] = draw(_TEXT)  # the API takes text only, and no error flag
        else:
            result["output"] = draw(_TEXT if fmt == "anthropic" else _JSON)
            if draw(st.booleans()):
                result["isError"] = True
        results.append(result)
    return results


@st.composite
def _history(draw: Draw, fmt: Format) -> tuple[Message, ...]:
    calls = _Calls()
    items = itertools.count()
    messages: list[dict[str, Any]] = []

    def add(role: str, parts: list[dict[str, Any]]) -> None:
        messages.append({"id": f"m{len(messages)}", "role": role, "parts": parts})

    def system() -> None:
        add("system", [_text(draw) for _ in range(draw(st.integers(1, 2)))])

    if draw(st.booleans()):
        system()
    for _ in range(draw(st.integers(0, 3))):
        if fmt in ("openai-chat", "openai-responses") and draw(st.booleans()):
            system()  # these two take system messages anywhere
        add("user", _user_parts(draw, fmt))
        for _ in range(draw(st.integers(1, 2))):
            parts = _assistant_parts(draw, fmt, calls, items)
            if fmt == "openai-chat":
                parts.sort(key=lambda part: part["type"] == "tool-call")  # texts first
            add("assistant", parts)
            made = [part for part in parts if part["type"] == "tool-call"]
            if made:
                add("tool", _results(draw, fmt, made))
            elif fmt == "openai-responses":
                break  # two assistant messages in a row are one list of items
    return normalize_messages(messages)


def expressible(fmt: Format) -> st.SearchStrategy[tuple[Message, ...]]:
    """Normalized histories in ``fmt``'s canonical form (see the module docstring)."""
    return _history(fmt)
