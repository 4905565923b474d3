"""The JSON boundary: one iterative walk that validates, measures and freezes a value.

The walk never recurses (a million-deep nesting costs nothing but the limit check), never
builds the JSON text (sizes are summed per scalar), and stops at the first violation, so
memory and time stay bounded by the limits. Cycles need no bookkeeping on the hot path:
a cycle is infinite, so it always runs into a limit, and only then are the containers on
the current path compared to tell "cycle" from "too big".
"""

# The hot loops here walk JSON values typed Any and check their types at run time with
# `type(x) is ...` (exact types, on purpose), which pyright cannot follow without casts
# that would cost a call per value: so these three "unknown type" reports are off here.
# pyright: reportUnknownVariableType=false, reportUnknownMemberType=false, reportUnknownArgumentType=false

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping
from typing import Any, TypeAlias, cast

from .._describe import clip, shown
from .._errors import AIChatError, LimitExceededError, ValidationError
from ._frozen import FrozenDict
from ._limits import JSONLimits

__all__ = [
    "JSONObject",
    "JSONValue",
    "format_path",
    "freeze_and_measure",
    "freeze_json",
    "js_number",
    "json_size",
    "string_size",
]

JSONValue: TypeAlias = (
    "bool | int | float | str | tuple[JSONValue, ...] | Mapping[str, JSONValue] | None"
)
"""A frozen JSON value, as :func:`freeze_json` returns it.

Objects are typed as read-only ``Mapping`` s so that pyright flags an attempt to change
one; at run time they are :class:`FrozenDict` (a ``dict``), which ``json.dumps`` takes.
"""

JSONObject: TypeAlias = "Mapping[str, JSONValue]"
"""A frozen JSON object (a :class:`FrozenDict` at run time)."""

_DEFAULT_LIMITS = JSONLimits()

# JavaScript's JSON.stringify escapes ", \ and the controls below U+0020: \b \f \n \r \t
# take two characters, the others six (\u00XX); everything else is written as it is, and a
# character outside the BMP is two UTF-16 code units. In UTF-8, controls, quotes and
# backslashes are single bytes below 0x80 and every character outside the BMP starts with a
# byte from 0xF0, so deleting every other byte leaves exactly the characters that add to the
# length: one unit each, plus four more for a six-character control escape.
_ADDS_LENGTH = bytes(range(0x20)) + b'"\\' + bytes(range(0xF0, 0x100))
_KEEP_ADDS_LENGTH = bytes(b for b in range(0x100) if b not in _ADDS_LENGTH)
_KEEP_LONG_ESCAPES = bytes(
    b for b in range(0x100) if b not in bytes(range(0x20)) or b in b"\b\t\n\f\r"
)


def string_size(s: str) -> int:
    """The length of ``JSON.stringify(s)`` in UTF-16 code units, quotes included: the one
    place the JSON string-size formula is written (escapes count in their escaped form,
    characters outside the BMP as two units).

    Raises:
        UnicodeEncodeError: ``s`` holds a lone surrogate (it cannot be written as JSON).
    """
    adds = s.encode().translate(None, _KEEP_ADDS_LENGTH)
    if adds:
        return len(s) + 2 + len(adds) + 4 * len(adds.translate(None, _KEEP_LONG_ESCAPES))
    return len(s) + 2


# JavaScript's Number.MAX_SAFE_INTEGER: beyond it a JavaScript reader rounds integers.
_MAX_SAFE_INT = 2**53 - 1
_PATH_KEY_MAX = 64
_IDENTIFIER = re.compile(r"[A-Za-z_$][A-Za-z0-9_$]*\Z")


def js_number(value: int | float) -> str:
    """Format a number as JavaScript's ``JSON.stringify`` would.

    ``100.0`` gives ``100``, ``-0.0`` gives ``0``, ``1e-7`` stays ``1e-7``, ``1e21``
    gives ``1e+21``; an ``int`` is first rounded to the nearest double, as
    ``JSON.parse`` does. Both languages print the shortest digit string that round-trips,
    so only the notation needs translating.

    Raises:
        ValueError: ``value`` is NaN or infinite, or an int too large for a double.
    """
    if type(value) is int and -_MAX_SAFE_INT <= value <= _MAX_SAFE_INT:
        return str(value)
    try:
        number = float(value)
    except OverflowError:
        raise ValueError(f"{shown(value)} is too large for a double") from None
    if not math.isfinite(number):
        raise ValueError(f"{value!r} is not a finite number")
    if number == 0:
        return "0"
    text = repr(number)
    sign = ""
    if text[0] == "-":
        sign, text = "-", text[1:]
    mantissa, _, exponent = text.partition("e")
    whole, _, fraction = mantissa.partition(".")
    digits = whole + fraction
    stripped = digits.lstrip("0")
    # The decimal point sits after `point` digits of `stripped`: value = 0.stripped * 10**point.
    point = len(whole) + (int(exponent) if exponent else 0) - (len(digits) - len(stripped))
    stripped = stripped.rstrip("0")
    k = len(stripped)
    if k <= point <= 21:
        body = stripped + "0" * (point - k)
    elif 0 < point <= 21:
        body = stripped[:point] + "." + stripped[point:]
    elif -6 < point <= 0:
        body = "0." + "0" * -point + stripped
    else:
        e = point - 1
        head = stripped if k == 1 else stripped[0] + "." + stripped[1:]
        body = f"{head}e{'+' if e >= 0 else '-'}{abs(e)}"
    return sign + body


def _float_size(value: float) -> int:
    # Between 1e-4 and 1e16 Python's repr and JavaScript both use plain decimal notation
    # with the same shortest digits; only Python's trailing ".0" differs.
    magnitude = abs(value)
    if 1e-4 <= magnitude < 1e16:
        text = repr(value)
        return len(text) - 2 if text.endswith(".0") else len(text)
    return len(js_number(value))


def format_path(parts: list[str | int] | tuple[str | int, ...], root: str = "$") -> str:
    """Render path components as a JSON path: ``$[3].parts[0]["odd key"]``.

    An ``int`` is an array index, a ``str`` an object key. Keys longer than 64 characters
    are shortened, with the number of characters left out. Anything else (which no JSON
    path can name) is written as ``[<tuple key>]``.
    """
    out = [root]
    for part in parts:
        if type(part) is int:
            out.append(f"[{part}]")
            continue
        if type(part) is not str:
            out.append(f"[<{clip(type(part).__name__, _PATH_KEY_MAX)} key>]")
            continue
        if len(part) > _PATH_KEY_MAX:
            # A huge key is abbreviated: an error message must not copy megabytes.
            head = json.dumps(part[:_PATH_KEY_MAX])
            out.append(f'[{head[:-1]}..." (+{len(part) - _PATH_KEY_MAX:,} chars)]')
        elif _IDENTIFIER.match(part):
            out.append(f".{part}")
        else:
            out.append(f"[{json.dumps(part)}]")
    return "".join(out)


def _describe(value: object) -> str:
    kind = type(value)
    return (
        kind.__qualname__
        if kind.__module__ == "builtins"
        else f"{kind.__module__}.{kind.__qualname__}"
    )


# A frame is one container being walked, kept as a list for speed:
# [source, iterator over it, output so far, key of the child container being walked, is
# it a dict]. Every frame below the top is walking a child container: a dict frame
# recorded its key, a list frame's index is len(output). Error paths are rebuilt from the
# stack only when an error is raised; errors at the top frame name their key themselves.
_SRC, _IT, _OUT, _KEY, _IS_DICT = range(5)
_Frame: TypeAlias = list[Any]


def _child_key(frame: _Frame) -> str | int:
    return cast("str | int", frame[_KEY]) if frame[_IS_DICT] else len(frame[_OUT])


def _path_of(stack: list[_Frame], child: str | int | None, root: str) -> str:
    parts: list[str | int] = [_child_key(frame) for frame in stack[:-1]]
    if child is not None:
        parts.append(child)
    return format_path(parts, root)


def _cycle_path(stack: list[_Frame], extra: object, root: str) -> str | None:
    """The path where the current path first re-enters one of its own containers, if any."""
    sources = [frame[_SRC] for frame in stack]
    if extra is not None:
        sources.append(extra)
    seen: set[int] = set()
    for depth, src in enumerate(sources):
        if id(src) in seen:
            return format_path([_child_key(frame) for frame in stack[:depth]], root)
        seen.add(id(src))
    return None


# Sizes of object keys already seen (field names repeat endlessly); cleared when full so
# it stays small. Only keys: string values are content and are not kept.
_known_sizes: dict[str, int] = {}
_KNOWN_MAX_ENTRIES = 4096
_KNOWN_MAX_LENGTH = 64


def freeze_json(
    value: object, limits: JSONLimits = _DEFAULT_LIMITS, *, root: str = "$"
) -> JSONValue:
    """Return a detached, deeply immutable copy of a JSON value.

    Objects (``dict``) become :class:`FrozenDict`, arrays (``list`` or ``tuple``) become
    ``tuple``; strings, ints, floats, bools and ``None`` stay as they are. The result
    serializes with plain ``json.dumps`` and round-trips to an equal value. The caller's
    objects are neither kept nor changed.

    Args:
        value: the value to freeze.
        limits: the bounds to enforce (default ``JSONLimits()``).
        root: the name of the value in error paths (default ``$``).

    Raises:
        ValidationError: the value is not JSON: a non-string key, a type other than
            dict, list, tuple, str, int, float, bool and None (subclasses included, other
            than FrozenDict), NaN or an infinity, a cycle, a string with a lone
            surrogate, or an int too large for a double. ``path`` names the value.
        LimitExceededError: the value is deeper, has more values or a longer JSON text
            than ``limits`` allow. The walk stops at the first violation.
    """
    return freeze_and_measure(value, limits, root)[0]


def json_size(value: object, limits: JSONLimits = _DEFAULT_LIMITS) -> int:
    """The length of ``JSON.stringify(value)`` in UTF-16 code units, as JavaScript counts it.

    Escapes count in their escaped form, characters outside the BMP as two units, numbers
    in JavaScript's notation. The text is never built. Raises as :func:`freeze_json` does;
    pass larger ``limits`` to measure larger values.
    """
    return freeze_and_measure(value, limits, "$")[1]


def _fail(stack: list[_Frame], root: str, reason: str, child: str | int | None) -> ValidationError:
    return ValidationError(_path_of(stack, child, root), reason)


def _over(
    stack: list[_Frame],
    root: str,
    limit: str,
    limit_value: int,
    observed: int,
    child: str | int | None,
    extra: object = None,
) -> Exception:
    # A cycle is infinite, so it always ends at a limit: name it as what it is.
    cycle = _cycle_path(stack, extra, root)
    if cycle is not None:
        return ValidationError(cycle, "cycle: this container contains itself")
    return LimitExceededError(_path_of(stack, child, root), limit, limit_value, observed)


def _surrogate(
    stack: list[_Frame], root: str, s: str, exc: UnicodeEncodeError, child: str | int | None
) -> ValidationError:
    return _fail(
        stack,
        root,
        f"string has a lone surrogate {s[exc.start]!r} at index {exc.start} and cannot be "
        "encoded as UTF-8",
        child,
    )


def _str_size(
    s: str, max_chars: int, size: int, stack: list[_Frame], root: str, child: str | int | None
) -> int:
    """The JSON length of a string, checked for lone surrogates and against max_chars."""
    if len(s) + 2 > max_chars:
        # Rejected before any encoding: a huge string costs no extra memory.
        raise _over(stack, root, "max_chars", max_chars, size + len(s) + 2, child)
    try:
        return string_size(s)
    except UnicodeEncodeError as exc:
        raise _surrogate(stack, root, s, exc, child) from None


def _key_size(key: str, max_chars: int, size: int, stack: list[_Frame], root: str) -> int:
    n = _str_size(key, max_chars, size, stack, root, key)
    if len(key) <= _KNOWN_MAX_LENGTH:
        if len(_known_sizes) >= _KNOWN_MAX_ENTRIES:
            _known_sizes.clear()
        _known_sizes[key] = n
    return n


def _scalar_size(v: object, stack: list[_Frame], root: str, child: str | int | None) -> int:
    """The JSON length of anything but str and containers, or why it is not JSON."""
    t = type(v)
    if v is None:
        return 4
    if t is bool:
        return 4 if v else 5
    if t is int:
        if -_MAX_SAFE_INT <= cast(int, v) <= _MAX_SAFE_INT:
            return len(str(v))
        raise _fail(
            stack,
            root,
            "integer beyond JavaScript's safe range (±9007199254740991): a JavaScript reader "
            "would silently round it; send it as a string",
            child,
        )
    if t is float:
        f = cast(float, v)
        if not math.isfinite(f):
            raise _fail(
                stack, root, f"{f!r} is not valid JSON (NaN and infinities are not allowed)", child
            )
        return _float_size(f)
    base = next((b for b in (str, int, float, dict, list, tuple) if issubclass(t, b)), None)
    if base is not None:
        raise _fail(
            stack,
            root,
            f"{_describe(v)} is a subclass of {base.__name__}; only exact JSON types are "
            "accepted (convert it first)",
            child,
        )
    raise _fail(stack, root, f"{_describe(v)} is not a JSON value", child)


class _Bail(AIChatError):
    """The fast walk met something it does not handle; the careful walk takes over."""


def freeze_and_measure(value: object, limits: JSONLimits, root: str = "$") -> tuple[JSONValue, int]:
    """Freeze and measure ``value``: the fast walk, or the careful walk when it bails.

    Valid values at ordinary depths take the fast recursive walk. Anything else (an
    error, a cycle, a limit, a subclass, a lone surrogate, a depth the interpreter's
    recursion limit cannot take) makes it give up and the careful walk redo the value
    from the start, which finds and words the first violation. Both stop at the first
    violation, so the total stays bounded by the limits.
    """
    try:
        return _fast_walk(value, limits.max_depth, limits.max_values, limits.max_chars)
    except (_Bail, UnicodeEncodeError, RecursionError):
        return _careful_walk(value, limits, root)


def _fast_walk(
    value: object, max_depth: int, max_values: int, max_chars: int
) -> tuple[JSONValue, int]:
    """Recursive, no bookkeeping for error paths; raises _Bail on anything unusual."""
    t = type(value)
    if t is dict or t is FrozenDict:
        result, size, _ = _fast_dict(value, 1, max_chars, max_values - 1, max_depth)
    elif t is list or t is tuple:
        result, size, _ = _fast_list(value, 1, max_chars, max_values - 1, max_depth)
    else:
        raise _Bail
    return result, size


# The fast walk's two halves. Each takes the room left for its JSON text and the number
# of values still allowed, and returns the frozen container, the text length it used and
# the values still allowed; everything it needs is a local (a default argument) or a
# global, which CPython reads fastest.


def _fast_dict(
    d: Any,
    depth: int,
    room: int,
    values: int,
    max_depth: int,
    known_get: Any = _known_sizes.get,
    set_item: Any = dict.__setitem__,
    frozen_dict: Any = FrozenDict,
    size_of: Any = string_size,
) -> tuple[FrozenDict[str, JSONValue], int, int]:
    n = len(d)
    values -= n
    used = n + 1 if n else 2
    if values < 0 or used > room:
        raise _Bail
    # Copy everything at C speed, then swap in the frozen containers.
    out = frozen_dict(d)
    for k, v in d.items():
        if type(k) is not str:
            raise _Bail
        ks = known_get(k)
        if ks is None:
            ks = _learn_key(k, room)
        t = type(v)
        if t is str:
            if len(v) < 64 and v.isascii() and v.isprintable() and '"' not in v and "\\" not in v:
                used += ks + 3 + len(v)  # a short plain string: nothing to escape
            elif len(v) >= room:
                raise _Bail
            else:
                used += ks + 1 + size_of(v)
        elif t is dict or t is frozen_dict:
            if depth >= max_depth:
                raise _Bail
            child, child_used, values = _fast_dict(v, depth + 1, room - used, values, max_depth)
            used += ks + 1 + child_used
            set_item(out, k, child)
        elif t is list or t is tuple:
            if depth >= max_depth:
                raise _Bail
            child, child_used, values = _fast_list(v, depth + 1, room - used, values, max_depth)
            used += ks + 1 + child_used
            set_item(out, k, child)
        else:
            used += ks + 1 + _fast_scalar(v)
        if used > room:
            raise _Bail
    return out, used, values


def _fast_list(
    items: Any,
    depth: int,
    room: int,
    values: int,
    max_depth: int,
    frozen_dict: Any = FrozenDict,
    size_of: Any = string_size,
) -> tuple[tuple[JSONValue, ...], int, int]:
    n = len(items)
    values -= n
    used = n + 1 if n else 2
    if values < 0 or used > room:
        raise _Bail
    out: list[Any] | None = None
    index = -1
    for v in items:
        index += 1
        t = type(v)
        if t is str:
            if len(v) < 64 and v.isascii() and v.isprintable() and '"' not in v and "\\" not in v:
                used += len(v) + 2
            elif len(v) >= room:
                raise _Bail
            else:
                used += size_of(v)
        elif t is dict or t is frozen_dict or t is list or t is tuple:
            if depth >= max_depth:
                raise _Bail
            if t is dict or t is frozen_dict:
                child, child_used, values = _fast_dict(v, depth + 1, room - used, values, max_depth)
            else:
                child, child_used, values = _fast_list(v, depth + 1, room - used, values, max_depth)
            used += child_used
            if out is None:
                out = list(items)
            out[index] = child
        else:
            used += _fast_scalar(v)
        if used > room:
            raise _Bail
    return tuple(items if out is None else out), used, values


def _fast_scalar(v: Any) -> int:
    t = type(v)
    if t is int:
        if -_MAX_SAFE_INT <= v <= _MAX_SAFE_INT:
            return len(str(v))
        raise _Bail
    if v is None:
        return 4
    if t is bool:
        return 4 if v else 5
    if t is float and math.isfinite(v):
        return _float_size(v)
    raise _Bail


def _learn_key(key: str, room: int) -> int:
    """Measure a key not in the cache, and remember it when it is short.

    Raises _Bail when the key alone exceeds the room left, UnicodeEncodeError (a bail as
    well) on a lone surrogate.
    """
    if len(key) >= room:
        raise _Bail
    n = string_size(key)
    if len(key) <= _KNOWN_MAX_LENGTH:
        if len(_known_sizes) >= _KNOWN_MAX_ENTRIES:
            _known_sizes.clear()
        _known_sizes[key] = n
    return n


def _careful_walk(value: object, limits: JSONLimits, root: str) -> tuple[JSONValue, int]:
    """The iterative walk: any depth, and errors that name their exact path."""
    max_depth = limits.max_depth
    max_values = limits.max_values
    max_chars = limits.max_chars
    frozen_dict = FrozenDict
    known_get = _known_sizes.get
    stack: list[_Frame] = []
    size = 0
    t: type[object] = type(value)
    k: object
    v: Any
    if t is str:
        size = _str_size(cast(str, value), max_chars, 0, stack, root, None)
        if size > max_chars:
            raise _over(stack, root, "max_chars", max_chars, size, None)
        return cast(str, value), size
    if t is not dict and t is not frozen_dict and t is not list and t is not tuple:
        size = _scalar_size(value, stack, root, None)
        if size > max_chars:
            raise _over(stack, root, "max_chars", max_chars, size, None)
        return cast(JSONValue, value), size

    result: JSONValue = None
    count = 1
    child: Any = value
    key: str | int | None = None
    while True:
        # Descend into `child`, a container at `key` in the frame on top of the stack.
        if len(stack) >= max_depth:
            raise _over(stack, root, "max_depth", max_depth, len(stack) + 1, key, child)
        frame: _Frame
        if t is dict or t is frozen_dict:
            frame = [child, iter(child.items()), {}, None, True]
        else:
            frame = [child, iter(child), [], None, False]
        n = len(child)
        if count + n > max_values:
            cycle = _cycle_path(stack, child, root)
            if cycle is not None:
                raise ValidationError(cycle, "cycle: this container contains itself")
            stack.append(frame)
            raise _over(
                stack,
                root,
                "max_values",
                max_values,
                max_values + 1,
                _nth_key(frame, max_values - count),
            )
        count += n
        size += 2 + (n - 1 if n else 0)
        if size > max_chars:
            raise _over(stack, root, "max_chars", max_chars, size, key, child)
        stack.append(frame)

        while stack:
            frame = stack[-1]
            out = frame[_OUT]
            child = None
            if frame[_IS_DICT]:
                for k, v in frame[_IT]:
                    if type(k) is not str:
                        raise _fail(
                            stack,
                            root,
                            f"object key {shown(k)} is a {_describe(k)}; JSON keys must be str",
                            None,
                        )
                    n = known_get(k)
                    size += (_key_size(k, max_chars, size, stack, root) if n is None else n) + 1
                    t = type(v)
                    if t is str:
                        size += _str_size(v, max_chars, size, stack, root, k)
                    elif t is dict or t is list or t is tuple or t is frozen_dict:
                        child = v
                        key = frame[_KEY] = k
                        break
                    else:
                        size += _scalar_size(v, stack, root, k)
                    if size > max_chars:
                        raise _over(stack, root, "max_chars", max_chars, size, k)
                    out[k] = v
            else:
                for v in frame[_IT]:
                    t = type(v)
                    if t is str:
                        size += _str_size(v, max_chars, size, stack, root, len(out))
                    elif t is dict or t is list or t is tuple or t is frozen_dict:
                        child = v
                        key = len(out)
                        break
                    else:
                        size += _scalar_size(v, stack, root, len(out))
                    if size > max_chars:
                        raise _over(stack, root, "max_chars", max_chars, size, len(out))
                    out.append(v)
            if child is not None:
                break
            # The container is complete: freeze it and hand it to its parent.
            stack.pop()
            done: JSONValue = frozen_dict(out) if frame[_IS_DICT] else tuple(out)
            if not stack:
                result = done
                break
            parent = stack[-1]
            if parent[_IS_DICT]:
                parent[_OUT][parent[_KEY]] = done
            else:
                parent[_OUT].append(done)
        if child is None:
            return result, size


def _nth_key(frame: _Frame, index: int) -> str | int | None:
    """The key of the ``index``-th child of ``frame``, or None for an object key that is
    not a ``str`` (no JSON path can name it; the error then names the object)."""
    index = max(index, 0)
    if frame[_IS_DICT]:
        for i, k in enumerate(frame[_SRC]):
            if i == index:
                return k if type(k) is str else None
        return None
    return index
