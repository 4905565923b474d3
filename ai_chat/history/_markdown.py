"""A history as Markdown: lossless for storage and review, or a transcript for people.

With ``metadata=True`` (the default) the Markdown holds everything the history holds and
:func:`~ai_chat.history.from_markdown` reads it back to an equal history::

    ---
    {
      "format": "ai_chat.markdown",
      "version": 1,
      "id": "h1",
      ...the history's own fields (History.to_json() without the messages)
    }
    ---

    ## User

    <!-- message {"id":"m1","metadata":{"aiChat":{"createdAt":"..."}}} -->

    ```text
    Hello
    ```

* The front matter is JSON between ``---`` lines (JSON is also YAML, so front-matter
  readers take it, and no YAML library is needed).
* Each message is a role heading (``## System``, ``## User``, ``## Assistant``,
  ``## Tool``), then its *message line*, an HTML comment (hidden when rendered) with the
  message's fields other than its role and parts as JSON, then one fenced block per part.
* Every part is a fenced block whose fence is longer than any run of backticks in its
  content, so no content can close it: a ``### Assistant`` line, a fence, a ``---``
  line or a message line inside a message is content, never structure. Text and
  reasoning are written as they are (the info string is the part type, then the part's
  other fields as JSON when it has some); tool calls, tool results, files and data parts
  as JSON. A text that holds a carriage return or another control character that
  editors and line-ending conversions change is written as a ``part`` block (the whole
  part as JSON, escaped), so that it survives them.
* The last line is ``<!-- end of history -->``, so a text cut off anywhere is refused
  rather than read as a shorter history.
* Line endings are ``\\n``; the reader takes ``\\r\\n`` and ``\\r`` as well.

With ``metadata=False`` it is a transcript for people: the title, then each message that
is not hidden under its role heading, text as Markdown, reasoning quoted, tool calls and
results as JSON blocks. It drops ids, times and bookkeeping, and message text is
rendered as Markdown (so it can look like anything): it is not read back.
"""

# pyright: reportUnknownVariableType=false, reportUnknownMemberType=false, reportUnknownArgumentType=false

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from typing import Any, Final, cast

from .._errors import ConfigurationError
from ._bookkeeping import is_hidden
from ._history import History

__all__ = [
    "END_LINE",
    "MARKDOWN_FORMAT",
    "MARKDOWN_VERSION",
    "PART_BLOCK",
    "ROLE_HEADINGS",
    "TEXT_TYPES",
    "WORD_TYPE",
    "to_markdown",
]

MARKDOWN_FORMAT: Final = "ai_chat.markdown"
MARKDOWN_VERSION: Final = 1
END_LINE: Final = "<!-- end of history -->"
ROLE_HEADINGS: Final = {
    "system": "## System",
    "user": "## User",
    "assistant": "## Assistant",
    "tool": "## Tool",
}
TEXT_TYPES: Final = frozenset({"text", "reasoning"})
PART_BLOCK: Final = "part"
# A part type that can be a fence's info word as it is.
WORD_TYPE: Final = re.compile(r"text|reasoning|file|tool-call|tool-result|data-[A-Za-z0-9_.:-]+")

# Characters that editors, line-ending conversions or terminals change or drop: raw in a
# text block they would not survive, so such a text is written escaped.
# The order of the fields a reader looks for first, in a part, a message line and the
# front matter; any others follow, sorted.
_FIELD_ORDER: Final = {
    name: index
    for index, name in enumerate(
        (
            "format",
            "version",
            "type",
            "id",
            "title",
            "text",
            "toolCallId",
            "toolName",
            "input",
            "output",
            "isError",
            "mediaType",
            "filename",
            "url",
            "data",
            "providerMetadata",
            "metadata",
            "createdAt",
            "updatedAt",
        )
    )
}
_FRAGILE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029\ufeff]")
_BACKTICKS = re.compile("`+")
_LINK = re.compile(r"https?://[^\s<>]+")
_OPENING = re.compile(r" {0,3}(`{3,}|~{3,})")


def to_markdown(history: History, *, metadata: bool = True) -> str:
    """``history`` as Markdown (see the module): lossless with ``metadata`` (read it back
    with :func:`~ai_chat.history.from_markdown`), or a transcript for people without.

    Lines end with ``\\n``, the text ends with one. O(size of the history).

    Raises:
        ConfigurationError: ``history`` is not a History.
    """
    if not isinstance(cast(object, history), History):
        raise ConfigurationError("history", history, "a History")
    if type(metadata) is not bool:
        raise ConfigurationError("metadata", metadata, "a bool")
    return _lossless(history) if metadata else _transcript(history)


def json_text(value: object, *, indent: int | None = None) -> str:
    """JSON with characters outside ASCII kept, except those ``_FRAGILE`` names, escaped
    (they can only be inside strings, where an escape means the same). Objects below the
    top level have their keys sorted, so that the text does not depend on the order in
    which a value was built (a store returns its messages with sorted keys)."""
    text = json.dumps(
        _ordered(value, _FIELD_ORDER),
        ensure_ascii=False,
        indent=indent,
        separators=(",", ": ") if indent is not None else (",", ":"),
    )
    return _FRAGILE.sub(_escape, text)


def _ordered(value: object, first: Mapping[str, int] | None = None) -> object:
    """``value`` with its objects' keys sorted (the top level's by ``first``, then sorted)."""
    if isinstance(value, Mapping):
        fields = cast("Mapping[str, object]", value)
        if first is None:
            keys = sorted(fields)
        else:
            keys = sorted(fields, key=lambda k: (first.get(k, len(first)), k))
        return {k: _ordered(fields[k]) for k in keys}
    if type(value) is tuple or type(value) is list:
        return [_ordered(item) for item in cast("Sequence[object]", value)]
    return value


def _escape(match: re.Match[str]) -> str:
    return f"\\u{ord(match.group()):04x}"


def fence_for(body: str) -> str:
    """A backtick fence longer than any run of backticks in ``body`` (at least 3)."""
    longest = max((len(run) for run in _BACKTICKS.findall(body)), default=0)
    return "`" * max(3, longest + 1)


def _block(out: list[str], info: str, body: str) -> None:
    fence = fence_for(body)
    out.append(f"{fence}{info}\n{body}\n{fence}\n\n")


def _one_line_json(value: object) -> str:
    # On a line of its own (a message line, an info string): no ">" (which could end the
    # HTML comment) and no backtick (which an info string may not hold), both escaped.
    return json_text(value).replace(">", "\\u003e").replace("`", "\\u0060")


def _lossless(history: History) -> str:
    front: dict[str, object] = {"format": MARKDOWN_FORMAT, "version": MARKDOWN_VERSION}
    for key, value in history.to_json().items():
        if key != "messages":
            front[key] = value
    out = ["---\n", json_text(front, indent=2), "\n---\n\n"]
    for message in history.messages:
        fields: Any = message
        out.append(ROLE_HEADINGS[fields["role"]] + "\n\n")
        own = {k: v for k, v in fields.items() if k not in ("role", "parts")}
        out.append(f"<!-- message {_one_line_json(own)} -->\n\n")
        for part in fields["parts"]:
            _lossless_part(out, part)
    out.append(END_LINE + "\n")
    return "".join(out)


def _lossless_part(out: list[str], part: Any) -> None:
    kind = part["type"]
    if kind in TEXT_TYPES and not _FRAGILE.search(part["text"]):
        rest = {k: v for k, v in part.items() if k not in ("type", "text")}
        info = f"{kind} {_one_line_json(rest)}" if rest else kind
        _block(out, info, part["text"])
    elif kind not in TEXT_TYPES and WORD_TYPE.fullmatch(kind):
        rest = {k: v for k, v in part.items() if k != "type"}
        _block(out, kind, json_text(rest, indent=2))
    else:
        _block(out, PART_BLOCK, json_text(part, indent=2))


# --- the transcript for people ----------------------------------------------------------


def _transcript(history: History) -> str:
    out: list[str] = []
    if history.title is not None:
        out.append(f"# {' '.join(history.title.split()) or 'Conversation'}\n\n")
    for message in history.messages:
        if is_hidden(message):
            continue
        fields: Any = message
        out.append(ROLE_HEADINGS[fields["role"]] + "\n\n")
        for part in fields["parts"]:
            _transcript_part(out, part)
    text = "".join(out).replace("\r\n", "\n").replace("\r", "\n")
    return text.removesuffix("\n") or "\n"


def _transcript_part(out: list[str], part: Any) -> None:
    kind = part["type"]
    if kind == "text":
        if part["text"].strip():
            out.append(_closed(part["text"].rstrip("\n")) + "\n\n")
    elif kind == "reasoning":
        if part["text"].strip():
            quoted = "\n".join(f"> {line}".rstrip() for line in part["text"].split("\n"))
            out.append(f"> *Reasoning*\n>\n{quoted}\n\n")
    elif kind == "tool-call":
        out.append(f"Tool call `{_code(part['toolName'])}`:\n\n")
        _block(out, "json", json_text(part["input"], indent=2))
    elif kind == "tool-result":
        error = " (error)" if part.get("isError") is True else ""
        out.append(f"Tool result `{_code(part['toolName'])}`{error}:\n\n")
        _block(out, "json", json_text(part["output"], indent=2))
    elif kind == "file":
        name = part.get("filename") or part["mediaType"]
        url: str = part["url"]
        label = f"[{_label(name)}](<{url}>)" if _LINK.fullmatch(url) else _label(name)
        out.append(f"File: {label} ({_label(part['mediaType'])})\n\n")
    else:
        out.append(f"Data `{_code(kind)}`:\n\n")
        _block(out, "json", json_text(part["data"], indent=2))


def _closed(text: str) -> str:
    """``text``, with a fenced code block it opens and never closes closed at its end, so
    that it cannot swallow the rest of the transcript when rendered."""
    open_fence: str | None = None
    for line in text.replace("\r\n", "\n").replace("\r", "\n").split("\n"):
        fence = _OPENING.match(line)
        if fence is None:
            continue
        run = fence.group(1)
        if open_fence is None:
            if run[0] == "~" or "`" not in line[fence.end() :]:
                open_fence = run
        elif (
            run[0] == open_fence[0]
            and len(run) >= len(open_fence)
            and not line[fence.end() :].strip()
        ):
            open_fence = None
    return text if open_fence is None else f"{text}\n{open_fence}"


def _code(name: str) -> str:
    return " ".join(name.replace("`", "'").split())


def _label(name: str) -> str:
    return " ".join(re.sub(r"[\[\]()<>`*_\\]", "", name).split())
