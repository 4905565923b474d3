"""How a value appears in an error message: bounded, and safe for any value.

Error messages echo what was wrong (a role, a key, an id, a path), and what was wrong may
come from a hostile client or provider: a megabyte string, an integer too long for
``str()`` (over 4,300 digits raises ``ValueError``), a string with a lone surrogate that
no UTF-8 encoder (a log handler, ``JSONResponse``) accepts, an object key of any type.
Everything here takes any value, never raises, costs time in proportion to its bound
rather than to the value, and returns text that encodes as UTF-8:

* :func:`shown` - a value as a message quotes it, at most :data:`MAX_SHOWN_CHARS`
  characters: strings double-quoted with JSON escapes, a cut one ending with ``..."``
  and its length (``"aaaa..." (1,000,000 chars)``);
* :func:`clip` - free text (a reason, a provider's detail) cut to a bound;
* :func:`clip_path` - a JSON path cut in its middle, keeping both ends;
* :func:`exception_text` - ``"TypeName: message"`` of any exception, bounded.

:class:`~ai_chat.AIChatError` clips every message to :data:`MAX_MESSAGE_CHARS`, so a
message is bounded even where a caller forgot to use these. The standard library's
``reprlib`` is not used: it sorts whole sets and dicts and calls ``repr`` on ints.
This module imports nothing from ai_chat, so that every module can import it.
"""

from __future__ import annotations

import math
from collections.abc import Collection
from itertools import islice
from typing import Final, cast

__all__ = [
    "MAX_DETAIL_CHARS",
    "MAX_MESSAGE_CHARS",
    "MAX_PATH_CHARS",
    "MAX_SHOWN_CHARS",
    "clip",
    "clip_path",
    "exception_text",
    "shown",
]

MAX_SHOWN_CHARS: Final = 200
"""The most characters :func:`shown` returns for one value."""
MAX_PATH_CHARS: Final = 200
"""The most characters of a JSON path a message shows (:func:`clip_path`)."""
MAX_DETAIL_CHARS: Final = 500
"""The most characters of free text from elsewhere a message shows (an exception's text,
a provider's description of its failure, an abort reason)."""
MAX_MESSAGE_CHARS: Final = 1_000
"""The most characters of any :class:`~ai_chat.AIChatError` message."""

# Within a container, each item is shown in at most this many characters, and at most
# this many items (then "...").
_ITEM_CHARS: Final = 40
_ITEMS: Final = 6
# Up to this many bits an int prints in under 200 digits, below the smallest limit
# Python lets ``sys.set_int_max_str_digits`` set (640): ``str()`` is safe.
_PRINTABLE_INT_BITS: Final = 600
_SHORT_ESCAPES: Final = {'"': '\\"', "\\": "\\\\", "\b": "\\b", "\f": "\\f", "\n": "\\n"}
_SHORT_ESCAPES.update({"\r": "\\r", "\t": "\\t"})


def shown(value: object, limit: int = MAX_SHOWN_CHARS) -> str:
    """``value`` as an error message quotes it, in at most ``limit`` characters (48 or
    more: a smaller limit counts as 48).

    A ``str`` is double-quoted with JSON's escapes, and anything not printable (controls,
    lone surrogates, bidirectional overrides) is written as ``\\uXXXX``: the result is a
    valid JSON string literal unless cut, and then ends with ``..."`` and the string's
    length: ``"aaaa..." (1,000,000 chars)``. An ``int`` of up to about 180 digits is
    printed; a longer one is described (``an integer of about 5,000 digits``) instead of
    converted. ``bytes`` are shown as ``repr`` of their start and their length; lists,
    tuples, sets and dicts by their first few items (never sorted, never walked whole);
    anything else by its ``repr`` (or its type name when ``repr`` fails). Never raises.
    """
    limit = max(limit, 48)
    text = _show(value, limit, 2)
    if len(text) > limit:
        text = text[: limit - 3] + "..."
    return text


def clip(text: str, limit: int = MAX_DETAIL_CHARS) -> str:
    """``text`` in at most ``limit`` characters (32 or more), encodable as UTF-8; never
    raises.

    Text that is longer is cut and ends with ``...`` and its length (``... (70,076
    chars)``). Lone surrogates are written as ``\\udXXX``; other characters, newlines
    included, are kept.
    """
    limit = max(limit, 32)
    size = len(text)
    head = text[:limit]
    if not head.isascii():
        head = head.encode("utf-8", "backslashreplace").decode("utf-8")
    if size <= limit and len(head) <= limit:
        return head
    suffix = f"... ({size:,} chars)"
    return head[: limit - len(suffix)] + suffix


def clip_path(path: str, limit: int = MAX_PATH_CHARS) -> str:
    """A JSON path in at most ``limit`` characters (48 or more): a longer one keeps its
    start and its end (where the field that failed is) around ``...(+N chars)...``;
    never raises."""
    limit = max(limit, 48)
    size = len(path)
    if size <= limit:
        return clip(path, limit)
    middle_size = len(f"...(+{size:,} chars)...")
    head = (limit - middle_size) // 3
    tail = limit - middle_size - head
    left_out = size - head - tail
    return clip(f"{path[:head]}...(+{left_out:,} chars)...{path[size - tail :]}", limit)


def exception_text(exc: BaseException, limit: int = MAX_DETAIL_CHARS) -> str:
    """``"TypeName: message"`` of ``exc`` (``"TypeName"`` when it has no message), in at
    most ``limit`` characters; never raises, even when ``str(exc)`` does."""
    name = type(exc).__name__
    try:
        text = str(exc)
    except Exception:
        text = "(its message cannot be shown)"
    return clip(f"{name}: {text}" if text else name, limit)


def _show(value: object, limit: int, depth: int) -> str:
    if isinstance(value, str):
        return _quote(value, limit)
    if value is None or isinstance(value, bool):
        return "None" if value is None else "True" if value else "False"
    if isinstance(value, int):
        return _integer(value)
    if isinstance(value, float):
        return float.__repr__(value)
    if isinstance(value, (bytes, bytearray)):
        data = bytes(value[:limit])
        text = repr(data)
        return text if len(data) == len(value) else f"{text}... ({len(value):,} bytes)"
    if isinstance(value, dict):
        mapping = cast("dict[object, object]", value)
        if depth <= 0:
            return "{...}" if mapping else "{}"
        pieces = [
            f"{_show(k, _ITEM_CHARS, depth - 1)}: {_show(v, _ITEM_CHARS, depth - 1)}"
            for k, v in islice(mapping.items(), _ITEMS)
        ]
        return "{" + _join(pieces, len(mapping)) + "}"
    if isinstance(value, (list, tuple, set, frozenset)):
        items = cast("Collection[object]", value)
        if isinstance(items, list):
            left, right = "[", "]"
        elif isinstance(items, tuple):
            left, right = "(", ")"
        else:
            left, right = "{", "}"
        if depth <= 0:
            return f"{left}...{right}" if items else left + right
        pieces = [_show(v, _ITEM_CHARS, depth - 1) for v in islice(items, _ITEMS)]
        if len(items) == 1 and isinstance(items, tuple):
            return f"({pieces[0]},)"
        return left + _join(pieces, len(items)) + right
    try:
        text = repr(value)
    except Exception:
        text = f"<{type(value).__name__} object>"
    return clip(text, limit)


def _join(pieces: list[str], size: int) -> str:
    if size > len(pieces):
        pieces.append(f"... ({size:,} items)")
    return ", ".join(pieces)


def _integer(value: int) -> str:
    bits = value.bit_length()
    if bits <= _PRINTABLE_INT_BITS:
        return int.__repr__(value)
    digits = round(bits * math.log10(2))
    sign = "a negative" if value < 0 else "an"
    return f"{sign} integer of about {digits:,} digits"


def _quote(text: str, limit: int) -> str:
    """``text`` as a JSON string literal (non-printable characters escaped), cut to
    ``limit`` characters with its length when it does not fit."""
    room = limit - 2
    pieces: list[str] = []
    used = 0
    cut = False
    for char in islice(text, room + 1):
        piece = char if char.isprintable() and char != '"' and char != "\\" else _escape(char)
        if used + len(piece) > room:
            cut = True
            break
        pieces.append(piece)
        used += len(piece)
    if not cut:
        return '"' + "".join(pieces) + '"'
    suffix = f'..." ({len(text):,} chars)'
    room = limit - 1 - len(suffix)
    while pieces and used > room:
        used -= len(pieces.pop())
    return '"' + "".join(pieces) + suffix


def _escape(char: str) -> str:
    short = _SHORT_ESCAPES.get(char)
    if short is not None:
        return short
    code = ord(char)
    if code < 0x10000:
        return f"\\u{code:04x}"
    code -= 0x10000
    return f"\\u{0xD800 + (code >> 10):04x}\\u{0xDC00 + (code & 0x3FF):04x}"
