"""Shape checks over frozen JSON: the small vocabulary messages, requests and events share.

Values reaching these checks already passed :func:`~ai_chat.limits.freeze_json`, so
objects are ``FrozenDict`` and arrays are ``tuple``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import cast

from ._describe import MAX_SHOWN_CHARS, clip, shown
from ._errors import ValidationError
from .limits import FrozenDict
from .limits._walk import format_path

__all__ = [
    "Check",
    "Shape",
    "any_json",
    "boolean",
    "check_shape",
    "describe",
    "json_object",
    "non_empty_str",
    "non_negative_int",
    "number",
    "one_of",
    "provider_metadata",
    "string",
    "string_list",
]

Check = Callable[[object], str | None]
"""Returns ``None`` for a good value, else what was expected, in words."""

Path = list[str | int]


def describe(value: object) -> str:
    """A short description of a JSON value for error messages: its kind (``an object``,
    ``a string``), or the number itself; bounded and safe for any value (see
    :func:`~ai_chat._describe.shown`)."""
    if value is None:
        return "null"
    if type(value) is bool:
        return "a boolean"
    if type(value) is FrozenDict or type(value) is dict:
        return "an object"
    if type(value) is tuple or type(value) is list:
        return "an array"
    if type(value) is str:
        return "an empty string" if not value else "a string"
    if type(value) is int or type(value) is float:
        return f"the number {shown(value)}"
    return clip(type(value).__name__, MAX_SHOWN_CHARS)


def any_json(value: object) -> str | None:
    return None


def string(value: object) -> str | None:
    return None if type(value) is str else "a string"


def non_empty_str(value: object) -> str | None:
    return None if type(value) is str and value else "a non-empty string"


def boolean(value: object) -> str | None:
    return None if type(value) is bool else "a boolean"


def number(value: object) -> str | None:
    return None if type(value) is int or type(value) is float else "a number"


def non_negative_int(value: object) -> str | None:
    return None if type(value) is int and value >= 0 else "a non-negative integer"


def json_object(value: object) -> str | None:
    return None if type(value) is FrozenDict else "a JSON object"


def string_list(value: object) -> str | None:
    if type(value) is tuple and all(
        type(item) is str for item in cast("tuple[object, ...]", value)
    ):
        return None
    return "an array of strings"


def provider_metadata(value: object) -> str | None:
    """``{provider: {key: json}}``, as the AI SDK defines it."""
    if type(value) is FrozenDict and all(
        type(inner) is FrozenDict for inner in cast("FrozenDict[str, object]", value).values()
    ):
        return None
    return "an object of objects ({provider: {...}})"


def one_of(*allowed: str) -> Check:
    expected = "one of " + ", ".join(f'"{a}"' for a in allowed)
    allowed_set = frozenset(allowed)

    def check(value: object) -> str | None:
        return None if type(value) is str and value in allowed_set else expected

    return check


_MISSING = object()


class Shape:
    """Required and optional fields of one kind of object; other keys are kept as they are."""

    __slots__ = ("optional", "required")

    def __init__(
        self,
        required: Mapping[str, Check] | None = None,
        optional: Mapping[str, Check] | None = None,
    ) -> None:
        # Tuples iterate faster than dicts; any_json needs no call at all.
        self.required = tuple(
            (name, None if c is any_json else c) for name, c in (required or {}).items()
        )
        self.optional = tuple(
            (name, None if c is any_json else c) for name, c in (optional or {}).items()
        )


def check_shape(obj: Mapping[str, object], shape: Shape, path: Path, root: str) -> None:
    """Raise :class:`ValidationError` for the first field of ``obj`` that ``shape`` rejects.

    Optional fields must be absent rather than ``null``, as the AI SDK requires.
    """
    get = obj.get
    for name, check in shape.required:
        value = get(name, _MISSING)
        if value is _MISSING:
            raise ValidationError(format_path(path, root), f'missing required field "{name}"')
        if check is not None:
            expected = check(value)
            if expected is not None:
                raise ValidationError(
                    format_path([*path, name], root), f"expected {expected}, got {describe(value)}"
                )
    for name, check in shape.optional:
        value = get(name, _MISSING)
        if value is not _MISSING and check is not None:
            expected = check(value)
            if expected is not None:
                hint = (
                    " (leave an optional field out instead of sending null)"
                    if value is None
                    else ""
                )
                raise ValidationError(
                    format_path([*path, name], root),
                    f"expected {expected}, got {describe(value)}{hint}",
                )
