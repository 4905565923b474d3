"""Reading a history's Markdown back (the format is described in ``_markdown``).

The reader is strict: outside fenced blocks only blank lines, role headings and message
lines may appear, and a block ends only at a line that is exactly its own fence. So the
structure comes from what :func:`~ai_chat.history.to_markdown` wrote and nothing in a
message's content can change it; anything else is a :class:`MarkdownError` naming its
line. The history then goes through :meth:`History.from_json`, whose errors are turned
into MarkdownErrors at the line of the message or part concerned.
"""

from __future__ import annotations

import json
import re
from typing import Any, Final, cast

from .._describe import shown
from .._errors import ConfigurationError, LimitExceededError, ValidationError
from ..limits import JSONLimits
from ._env import HistoryEnv
from ._errors import MarkdownError
from ._history import History
from ._markdown import (
    END_LINE,
    MARKDOWN_FORMAT,
    MARKDOWN_VERSION,
    PART_BLOCK,
    ROLE_HEADINGS,
    TEXT_TYPES,
    WORD_TYPE,
)
from ._validate import MESSAGE_LIMITS

__all__ = ["from_markdown"]

_ROLES: Final = {heading: role for role, heading in ROLE_HEADINGS.items()}
_MESSAGE_LINE = re.compile(r"<!-- message (.*) -->")
_FENCE = re.compile(r"(`{3,})([^`\s]+)(?: (.*))?")
_FRONT_FIELDS = ("format", "version", "id", "title", "metadata", "createdAt", "updatedAt")
_PATH = re.compile(r"\$\.messages\[(\d+)\](?:\.parts\[(\d+)\])?")


def from_markdown(
    text: str, *, env: HistoryEnv | None = None, limits: JSONLimits = MESSAGE_LIMITS
) -> History:
    """The history that ``to_markdown(history)`` wrote, read back: equal to ``history``.

    Line endings may be ``\\n``, ``\\r\\n`` or ``\\r``; a leading byte order mark is
    ignored. The history goes through :meth:`History.from_json` (with ``env`` and
    ``limits``), so it holds every invariant. A transcript written with
    ``metadata=False`` is for people and is refused.

    Raises:
        MarkdownError: the text is not a history's Markdown, or describes an invalid
            history; ``line`` and ``path`` say where.
        ConfigurationError: ``text`` is not a str.
    """
    if type(text) is not str:
        raise ConfigurationError("text", text, "a str (the Markdown text)")
    lines = text.removeprefix("\ufeff").replace("\r\n", "\n").replace("\r", "\n").split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    reader = _Reader(lines)
    data = reader.read()
    try:
        return History.from_json(data, env=env, limits=limits)
    except (ValidationError, LimitExceededError) as exc:
        reason = exc.reason if isinstance(exc, ValidationError) else str(exc)
        raise MarkdownError(reader.line_of(exc.path), reason, exc.path) from exc


class _Reader:
    """One pass over the lines; remembers where each message and part began."""

    def __init__(self, lines: list[str]) -> None:
        self.lines = lines
        self.front_line = 1
        self.message_lines: list[int] = []
        self.part_lines: list[list[int]] = []

    def line_of(self, path: str) -> int:
        """The line of what ``path`` (into the history's JSON) names."""
        found = _PATH.match(path)
        if found is None:
            return self.front_line
        index = int(found.group(1))
        if found.group(2) is not None:
            return self.part_lines[index][int(found.group(2))]
        return self.message_lines[index]

    def read(self) -> dict[str, object]:
        lines = self.lines
        if not lines or lines[0].rstrip() != "---":
            raise MarkdownError(
                1,
                "expected the front matter ('---'): this is not a history's Markdown "
                "(a transcript written with metadata=False is for people and is not read back)",
            )
        end = next((i for i in range(1, len(lines)) if lines[i].rstrip() == "---"), None)
        if end is None:
            raise MarkdownError(1, "the front matter is never closed by a '---' line (truncated?)")
        self.front_line = 2
        front = _json("\n".join(lines[1:end]), 2, "the front matter")
        data = self._front(front)
        messages: list[dict[str, Any]] = []
        number = end + 1
        ended = False
        while number < len(lines):
            line = lines[number]
            number += 1
            if not line.strip():
                continue
            if ended:
                raise MarkdownError(number, f"text after the {END_LINE!r} line")
            if line.rstrip() == END_LINE:
                ended = True
                continue
            role = _ROLES.get(line.rstrip())
            if role is not None:
                number = self._message_line(number, role, messages)
                continue
            fence = _FENCE.fullmatch(line.rstrip())
            if fence is None:
                raise MarkdownError(
                    number,
                    "expected a role heading (## User, ## Assistant...), a message line or a "
                    f"block, got {shown(line)}",
                )
            if not messages:
                raise MarkdownError(number, "a block before the first role heading")
            number = self._part(number, fence, messages[-1])
        if not ended:
            raise MarkdownError(
                max(len(lines), 1),
                f"the text ends before its last line, {END_LINE!r}: it was cut off",
            )
        data["messages"] = messages
        return data

    def _front(self, front: object) -> dict[str, object]:
        if type(front) is not dict:
            raise MarkdownError(2, "the front matter must be a JSON object")
        fields = cast("dict[str, object]", front)
        for key in fields:
            if key not in _FRONT_FIELDS:
                raise MarkdownError(2, f"unknown front matter field {shown(key)}")
        if fields.get("format") != MARKDOWN_FORMAT:
            raise MarkdownError(
                2, f"expected format {MARKDOWN_FORMAT!r}, got {shown(fields.get('format'))}"
            )
        version = fields.get("version")
        if type(version) is not int or version != MARKDOWN_VERSION:
            raise MarkdownError(
                2,
                f"this ai_chat reads Markdown format version {MARKDOWN_VERSION}, got "
                f"{shown(version)}",
            )
        return {k: v for k, v in fields.items() if k not in ("format", "version")}

    def _message_line(self, number: int, role: str, messages: list[dict[str, Any]]) -> int:
        """After a role heading (line ``number``): its message line; the next line."""
        heading = number
        lines = self.lines
        while number < len(lines) and not lines[number].strip():
            number += 1
        found = _MESSAGE_LINE.fullmatch(lines[number].rstrip()) if number < len(lines) else None
        if found is None:
            raise MarkdownError(
                min(number + 1, len(lines)),
                f"the {role} message of line {heading} needs its message line, "
                '<!-- message {"id": ...} -->, after its heading',
            )
        own = _json(found.group(1), number + 1, "the message line")
        if type(own) is not dict:
            raise MarkdownError(number + 1, "the message line must hold a JSON object")
        fields = cast("dict[str, object]", own)
        for key in ("role", "parts"):
            if key in fields:
                raise MarkdownError(
                    number + 1, f'the message line cannot set "{key}" (the heading and blocks do)'
                )
        messages.append({**fields, "role": role, "parts": []})
        self.message_lines.append(number + 1)
        self.part_lines.append([])
        return number + 1

    def _part(self, number: int, fence: re.Match[str], message: dict[str, Any]) -> int:
        """A block opened on line ``number``; returns the line after its closing fence."""
        lines = self.lines
        marker, word, attributes = fence.group(1), fence.group(2), fence.group(3)
        close = next((i for i in range(number, len(lines)) if lines[i].rstrip() == marker), None)
        if close is None:
            raise MarkdownError(
                number,
                f"the {shown(word)} block opened here is never closed by a line of exactly "
                f"{len(marker)} backticks (truncated?)",
            )
        body = "\n".join(lines[number:close])
        if word in TEXT_TYPES:
            part: dict[str, object] = {"type": word, "text": body}
            if attributes is not None:
                extra = _json(attributes, number, "the block's fields")
                if type(extra) is not dict or "type" in extra or "text" in extra:
                    raise MarkdownError(
                        number,
                        'a text block\'s fields are a JSON object without "type" and "text"',
                    )
                part.update(cast("dict[str, object]", extra))
        elif attributes is not None:
            raise MarkdownError(number, f"a {shown(word)} block has nothing after its type")
        elif word == PART_BLOCK:
            whole = _json(body, number + 1, "the part")
            if type(whole) is not dict:
                raise MarkdownError(number + 1, "a part block holds a JSON object")
            part = cast("dict[str, object]", whole)
        elif WORD_TYPE.fullmatch(word):
            rest = _json(body, number + 1, f"the {word} part")
            if type(rest) is not dict or "type" in rest:
                raise MarkdownError(
                    number + 1, f'a {word} block holds a JSON object without "type"'
                )
            part = {"type": word, **cast("dict[str, object]", rest)}
        else:
            raise MarkdownError(number, f"unknown block type {shown(word)}")
        message["parts"].append(part)
        self.part_lines[-1].append(number)
        return close + 1


def _no_duplicates(pairs: list[tuple[str, object]]) -> dict[str, object]:
    result = dict(pairs)
    if len(result) != len(pairs):
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise ValueError(f"duplicate key {shown(key)}")
            seen.add(key)
    return result


def _reject_constant(name: str) -> object:
    raise ValueError(f"{name} is not JSON")


def _json(text: str, line: int, what: str) -> object:
    """JSON text that starts on ``line``, parsed; a MarkdownError at its line if not."""
    try:
        return json.loads(text, object_pairs_hook=_no_duplicates, parse_constant=_reject_constant)
    except json.JSONDecodeError as exc:
        raise MarkdownError(
            line + exc.lineno - 1, f"{what} is not JSON: {exc.msg} (column {exc.colno})"
        ) from None
    except RecursionError:
        raise MarkdownError(line, f"{what} is nested too deeply") from None
    except ValueError as exc:
        raise MarkdownError(line, f"{what} is not JSON: {exc}") from None
