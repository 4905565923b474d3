"""freeze_json rejects everything that is not exact JSON with a typed error and its path."""

from __future__ import annotations

import collections
import dataclasses
import datetime
import decimal
import enum
import fractions
import json
from collections.abc import Callable
from typing import cast

import pytest

from ai_chat._errors import AIChatError, LimitExceededError, ValidationError
from ai_chat.limits import FrozenDict, JSONLimits, freeze_json, json_size

# --------------------------------------------------------------------------------------
# Bad values, and places to put them
# --------------------------------------------------------------------------------------


@dataclasses.dataclass
class Point:
    x: int
    y: int


class MyStr(str):
    __slots__ = ()


class MyInt(int):
    __slots__ = ()


class MyFloat(float):
    __slots__ = ()


class MyDict(dict[str, object]):
    pass


class MyList(list[object]):
    pass


class MyTuple(tuple[object, ...]):
    __slots__ = ()


class MyFrozenDict(FrozenDict[str, object]):
    __slots__ = ()


class Color(enum.IntEnum):
    RED = 1


class Mode(enum.StrEnum):
    FAST = "fast"


def _gen() -> object:
    yield 1


_BAD_VALUES: dict[str, Callable[[], object]] = {
    "bytes": lambda: b"abc",
    "bytearray": lambda: bytearray(b"abc"),
    "memoryview": lambda: memoryview(b"abc"),
    "set": lambda: {1, 2},
    "empty set": lambda: set[int](),
    "frozenset": lambda: frozenset({"a"}),
    "datetime": lambda: datetime.datetime(2024, 1, 1, tzinfo=datetime.UTC),
    "date": lambda: datetime.date(2024, 1, 1),
    "Decimal": lambda: decimal.Decimal("1.5"),
    "Fraction": lambda: fractions.Fraction(1, 3),
    "complex": lambda: 1 + 2j,
    "dataclass": lambda: Point(1, 2),
    "object": lambda: object(),
    "type": lambda: int,
    "function": lambda: len,
    "generator": _gen,
    "range": lambda: range(3),
    "str subclass": lambda: MyStr("text"),
    "int subclass": lambda: MyInt(5),
    "float subclass": lambda: MyFloat(1.5),
    "dict subclass": lambda: MyDict(a=1),
    "OrderedDict": lambda: collections.OrderedDict[str, int](a=1),
    "defaultdict": lambda: collections.defaultdict[str, list[int]](list),
    "FrozenDict subclass": lambda: MyFrozenDict(a=1),
    "list subclass": lambda: MyList([1]),
    "tuple subclass": lambda: MyTuple((1,)),
    "IntEnum member": lambda: Color.RED,
    "str Enum member": lambda: Mode.FAST,
    "nan": lambda: float("nan"),
    "inf": lambda: float("inf"),
    "-inf": lambda: float("-inf"),
    "lone high surrogate": lambda: "\ud800",
    "lone low surrogate": lambda: "abc\udfffdef",
    "reversed surrogate pair": lambda: "\udc00\ud800",
    "surrogate after non-BMP": lambda: "\U0001f600\ud83d",
    "int beyond double": lambda: 10**400,
    "negative int beyond double": lambda: -(10**400),
    "2**1024": lambda: 2**1024,
}


def _top(bad: object) -> tuple[object, str]:
    return bad, "$"


def _in_list(bad: object) -> tuple[object, str]:
    return [1, bad, 3], "$[1]"


def _in_tuple(bad: object) -> tuple[object, str]:
    return ("a", "b", bad), "$[2]"


def _in_object(bad: object) -> tuple[object, str]:
    return {"ok": 1, "field": bad, "later": 2}, "$.field"


def _under_odd_key(bad: object) -> tuple[object, str]:
    return {"odd key": bad}, '$["odd key"]'


def _deep(bad: object) -> tuple[object, str]:
    message = {"role": "user", "parts": [{"type": "text"}, {"input": {"items": [0, 1, bad]}}]}
    return [{}, {}, {}, message], "$[3].parts[1].input.items[2]"


def _after_valid_siblings(bad: object) -> tuple[object, str]:
    return [1, "a", {"b": [None, True, bad, float("nan")]}], "$[2].b[2]"


_PLACES: dict[str, Callable[[object], tuple[object, str]]] = {
    "top": _top,
    "list": _in_list,
    "tuple": _in_tuple,
    "object": _in_object,
    "odd key": _under_odd_key,
    "deep": _deep,
    "after siblings": _after_valid_siblings,
}


@pytest.mark.parametrize("place", list(_PLACES))
@pytest.mark.parametrize("kind", list(_BAD_VALUES))
def test_bad_value_is_rejected_with_its_path(kind: str, place: str) -> None:
    value, path = _PLACES[place](_BAD_VALUES[kind]())
    for fn in (freeze_json, json_size):
        with pytest.raises(ValidationError) as exc:
            fn(value)
        assert type(exc.value) is ValidationError
        assert exc.value.path == path
        assert exc.value.reason
        assert str(exc.value).startswith(path)
        assert isinstance(exc.value, ValueError)
        assert isinstance(exc.value, AIChatError)


def test_nested_nan_path() -> None:
    with pytest.raises(ValidationError) as exc:
        freeze_json({"a": [1, {"b": float("nan")}]})
    assert exc.value.path == "$.a[1].b"


def test_first_violation_wins() -> None:
    with pytest.raises(ValidationError) as exc:
        freeze_json([1, {"x": b"bytes"}, float("nan")])
    assert exc.value.path == "$[1].x"


# --------------------------------------------------------------------------------------
# Keys
# --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "path"),
    [
        ({1: "a"}, "$"),
        ({None: "a"}, "$"),
        ({(1, 2): "a"}, "$"),
        ({1.5: "a"}, "$"),
        ({True: "a"}, "$"),
        ({b"k": "a"}, "$"),
        ({MyStr("k"): "a"}, "$"),
        ({"ok": 1, 2: "a"}, "$"),
        ({"a": {None: 1}}, "$.a"),
        ([0, {"a": [{"fine": 1, 3: 4}]}], "$[1].a[0]"),
    ],
    ids=[
        "int",
        "None",
        "tuple",
        "float",
        "bool",
        "bytes",
        "str subclass",
        "after valid",
        "nested",
        "deep",
    ],
)
def test_non_string_keys_are_rejected(value: object, path: str) -> None:
    for fn in (freeze_json, json_size):
        with pytest.raises(ValidationError) as exc:
            fn(value)
        assert type(exc.value) is ValidationError
        assert exc.value.path == path


@pytest.mark.parametrize(
    ("value", "path"),
    [
        ({"\ud800": 1}, '$["\\ud800"]'),
        ({"ok": 1, "b\udfff": 2}, '$["b\\udfff"]'),
        ({"a": [{"x": 1, "\udc00\ud800": list[object]()}]}, '$.a[0]["\\udc00\\ud800"]'),
        ([{"k\ud83d": {"deeper": 1}}], '$[0]["k\\ud83d"]'),
    ],
    ids=["top", "after valid", "nested", "container value"],
)
def test_lone_surrogates_in_keys_are_rejected(value: object, path: str) -> None:
    for fn in (freeze_json, json_size):
        with pytest.raises(ValidationError) as exc:
            fn(value)
        assert exc.value.path == path


def test_valid_non_bmp_text_is_accepted_in_keys_and_values() -> None:
    value = {"\U0001f600": "\U0001f600\U0010ffff\ue000\uffff", "é": ["中文"]}
    assert freeze_json(value) == {"\U0001f600": "\U0001f600\U0010ffff\ue000\uffff", "é": ("中文",)}
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    assert json_size(value) == len(text) + 3  # three characters outside the BMP


@pytest.mark.parametrize(
    ("key", "path"),
    [
        ("odd key", '$["odd key"]'),
        ("", '$[""]'),
        ('a"b', '$["a\\"b"]'),
        ("1abc", '$["1abc"]'),
        ("a.b", '$["a.b"]'),
        ("_x$1", "$._x$1"),
        ("camelCase", "$.camelCase"),
    ],
)
def test_path_formatting_of_keys(key: str, path: str) -> None:
    with pytest.raises(ValidationError) as exc:
        freeze_json({key: {1, 2}})
    assert exc.value.path == path


# --------------------------------------------------------------------------------------
# Numbers
# --------------------------------------------------------------------------------------

_MAX_DOUBLE_INT = int(1.7976931348623157e308)
_SAFE = 2**53 - 1  # JavaScript's Number.MAX_SAFE_INTEGER


@pytest.mark.parametrize("edge", [_SAFE, -_SAFE, _SAFE - 1, 0])
def test_ints_within_the_safe_range_are_accepted_unchanged(edge: int) -> None:
    frozen = cast("tuple[object, ...]", freeze_json([edge]))
    assert frozen == (edge,)
    assert type(frozen[0]) is int
    assert json_size(edge) == len(str(edge))


@pytest.mark.parametrize(
    "big",
    [
        _SAFE + 1,
        -_SAFE - 1,
        2**64,
        -(2**70),
        10**308,
        _MAX_DOUBLE_INT,
        2**1024,
        10**400,
        -(10**400),
    ],
)
def test_ints_beyond_the_safe_range_are_rejected(big: int) -> None:
    # A JavaScript reader would round them silently; nothing is silently altered.
    for fn in (freeze_json, json_size):
        with pytest.raises(ValidationError, match="safe range") as exc:
            fn({"n": [big]})
        assert exc.value.path == "$.n[0]"


@pytest.mark.parametrize(
    ("value", "path"),
    [
        (float("nan"), "$"),
        ([float("inf")], "$[0]"),
        ({"a": {"b": [0.5, float("-inf")]}}, "$.a.b[1]"),
    ],
)
def test_non_finite_floats_are_rejected(value: object, path: str) -> None:
    with pytest.raises(ValidationError) as exc:
        freeze_json(value)
    assert exc.value.path == path


def test_finite_extremes_are_accepted() -> None:
    value = [5e-324, -5e-324, 1.7976931348623157e308, -1.7976931348623157e308, -0.0, 0.0]
    assert freeze_json(value) == tuple(value)


# --------------------------------------------------------------------------------------
# Cycles
# --------------------------------------------------------------------------------------


def _assert_cycle(value: object, path: str, limits: JSONLimits | None = None) -> None:
    limits = JSONLimits() if limits is None else limits
    for fn in (freeze_json, json_size):
        with pytest.raises(ValidationError) as exc:
            fn(value, limits)
        assert type(exc.value) is ValidationError  # not LimitExceededError, not RecursionError
        assert "cycle" in exc.value.reason
        assert exc.value.path == path


def test_self_referencing_list() -> None:
    loop: list[object] = []
    loop.append(loop)
    _assert_cycle(loop, "$[0]")


def test_self_referencing_list_with_siblings() -> None:
    loop: list[object] = [1, "two"]
    loop.append(loop)
    _assert_cycle(loop, "$[2]")


def test_self_referencing_dict() -> None:
    loop: dict[str, object] = {}
    loop["self"] = loop
    _assert_cycle(loop, "$.self")


def test_cycle_through_several_containers() -> None:
    root: dict[str, object] = {"ok": 1}
    middle: list[object] = [0, {"c": root}]
    root["b"] = middle
    _assert_cycle(root, "$.b[1].c")


def test_cycle_below_the_root() -> None:
    loop: list[object] = []
    loop.append({"again": loop})
    _assert_cycle({"x": [1, loop]}, "$.x[1][0].again")


def test_cycle_through_a_tuple() -> None:
    holder: list[object] = []
    holder.append((1, holder))
    _assert_cycle(holder, "$[0][1]")


def test_cycle_through_a_wide_object_reported_as_cycle_not_max_values() -> None:
    # Each turn adds ~2,000 values, so the value count runs out before the depth does.
    wide: dict[str, object] = {f"k{i}": i for i in range(2_000)}
    wide["loop"] = [wide]
    _assert_cycle(wide, "$.loop[0]")


def test_cycle_through_a_long_string_reported_as_cycle_not_max_chars() -> None:
    loop: list[object] = ["x" * 600_000]
    loop.append(loop)
    _assert_cycle(loop, "$[1]")


@pytest.mark.slow
def test_cycle_with_the_largest_allowed_depth() -> None:
    loop: list[object] = []
    loop.append(loop)
    _assert_cycle(loop, "$[0]", JSONLimits(max_depth=100_000, max_values=100_000_000))


def test_shared_references_are_not_cycles() -> None:
    shared: list[object] = [1, {"a": "b"}]
    value = [shared, shared, {"again": shared}, [shared]]
    frozen = freeze_json(value)
    one = (1, {"a": "b"})
    assert frozen == (one, one, {"again": one}, (one,))


def test_a_repeated_frozen_value_is_not_a_cycle() -> None:
    part = freeze_json({"type": "text", "text": "hi"})
    assert freeze_json([part, part, [part]]) == (part, part, (part,))


# --------------------------------------------------------------------------------------
# root=
# --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("root", "expected"),
    [
        ("$", "$.a[1].b"),
        ("request", "request.a[1].b"),
        ("$[3].parts[0].input", "$[3].parts[0].input.a[1].b"),
    ],
)
def test_root_prefixes_validation_paths(root: str, expected: str) -> None:
    with pytest.raises(ValidationError) as exc:
        freeze_json({"a": [0, {"b": float("inf")}]}, root=root)
    assert exc.value.path == expected


def test_root_is_the_whole_path_for_a_bad_top_level_value() -> None:
    with pytest.raises(ValidationError) as exc:
        freeze_json(b"raw", root="body")
    assert exc.value.path == "body"


def test_root_prefixes_limit_paths() -> None:
    with pytest.raises(LimitExceededError) as exc:
        freeze_json({"xs": [[list[object]()]]}, JSONLimits(max_depth=3), root="tool.input")
    assert exc.value.path == "tool.input.xs[0][0]"
    with pytest.raises(LimitExceededError) as exc:
        freeze_json([1, 2, 3], JSONLimits(max_values=3), root="args")
    assert exc.value.path == "args[2]"


def test_root_prefixes_cycle_paths() -> None:
    loop: dict[str, object] = {}
    loop["me"] = loop
    with pytest.raises(ValidationError) as exc:
        freeze_json(loop, root="messages[0]")
    assert exc.value.path == "messages[0].me"
    assert "cycle" in exc.value.reason


def test_str_subclass_key_equal_to_a_known_key_is_rejected() -> None:
    # The size cache knows "type" after the first call; an equal str subclass must not
    # ride on that cache entry past the exact-type check.
    class Key(str):
        pass

    assert freeze_json({"type": "x"}) == {"type": "x"}
    for value in ({Key("type"): "x"}, [{Key("type"): "x"}], {"a": {Key("type"): 1}}):
        with pytest.raises(ValidationError, match="JSON keys must be str"):
            freeze_json(value)
