"""freeze_json: detached deep-frozen copies, FrozenDict, exact limit boundaries, JSONLimits."""

from __future__ import annotations

import copy
import dataclasses
import enum
import json
import math
import operator
import pickle
import random
from collections.abc import Callable
from typing import TypeAlias, cast

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ai_chat._errors import ConfigurationError, LimitExceededError, ValidationError
from ai_chat.limits import FrozenDict, JSONLimits, freeze_json, json_size

# --------------------------------------------------------------------------------------
# A strategy for plain (mutable, caller-owned) JSON values.
# --------------------------------------------------------------------------------------

JSONIn: TypeAlias = "bool | int | float | str | list[JSONIn] | dict[str, JSONIn] | None"

# Characters that are easy to get wrong: escapes, line separators, DEL, non-BMP.
_TRICKY_CHARS = ["\x00", "\x1f", '"', "\\", "\u2028", "\u2029", "\x7f", "\U0001f600", "\U0010ffff"]
_chars = st.characters(exclude_categories=("Cs",)) | st.sampled_from(_TRICKY_CHARS)
_text = st.text(_chars, max_size=12)
_scalars: st.SearchStrategy[JSONIn] = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**53 - 1), max_value=2**53 - 1)
    | st.floats(allow_nan=False, allow_infinity=False)
    | _text
)


def _extend(children: st.SearchStrategy[JSONIn]) -> st.SearchStrategy[JSONIn]:
    return st.lists(children, max_size=6) | st.dictionaries(_text, children, max_size=6)


json_values: st.SearchStrategy[JSONIn] = st.recursive(_scalars, _extend, max_leaves=30)

PROPERTY = settings(max_examples=150, deadline=None, derandomize=True, database=None)


# --------------------------------------------------------------------------------------
# Helpers
# --------------------------------------------------------------------------------------


def assert_same_json(frozen: object, plain: object, where: str = "$") -> None:
    """`frozen` is the frozen form of `plain` (as json.loads builds it), type by type.

    Stricter than ``==``: True is not 1, 1.0 is not 1, -0.0 is not 0.0, key order counts,
    arrays must be tuples and objects FrozenDicts.
    """
    if plain is None:
        assert frozen is None, where
    elif isinstance(plain, bool):
        assert type(frozen) is bool, where
        assert frozen is plain, where
    elif isinstance(plain, int):
        assert type(frozen) is int, where
        assert frozen == plain, where
    elif isinstance(plain, float):
        assert type(frozen) is float, where
        assert frozen == plain, where
        assert math.copysign(1.0, frozen) == math.copysign(1.0, plain), where
    elif isinstance(plain, str):
        assert type(frozen) is str, where
        assert frozen == plain, where
    elif isinstance(plain, list):
        items = cast("list[object]", plain)
        assert type(frozen) is tuple, f"{where}: {type(frozen).__name__} is not a tuple"
        frozen_items = cast("tuple[object, ...]", frozen)
        assert len(frozen_items) == len(items), where
        for i, (f, p) in enumerate(zip(frozen_items, items, strict=True)):
            assert_same_json(f, p, f"{where}[{i}]")
    elif isinstance(plain, dict):
        members = cast("dict[str, object]", plain)
        assert type(frozen) is FrozenDict, f"{where}: {type(frozen).__name__} is not a FrozenDict"
        frozen_members = cast("FrozenDict[str, object]", frozen)
        assert list(frozen_members) == list(members), f"{where}: keys or key order differ"
        for k, p in members.items():
            assert_same_json(frozen_members[k], p, f"{where}.{k}")
    else:
        raise AssertionError(f"{where}: unexpected plain type {type(plain).__name__}")


def assert_deeply_frozen(value: object) -> None:
    """Only tuples, FrozenDicts and immutable scalars, all the way down; and hashable."""
    stack: list[object] = [value]
    while stack:
        v = stack.pop()
        t = type(v)
        if t is FrozenDict:
            members = cast("FrozenDict[object, object]", v)
            for k, item in members.items():
                assert type(k) is str
                stack.append(item)
        elif t is tuple:
            stack.extend(cast("tuple[object, ...]", v))
        else:
            assert v is None or t in (bool, int, float, str), f"{t.__name__} is not frozen JSON"
    hash(value)


def container_ids(value: object) -> set[int]:
    ids: set[int] = set()
    stack: list[object] = [value]
    while stack:
        v = stack.pop()
        if isinstance(v, dict):
            members = cast("dict[str, object]", v)
            ids.add(id(members))
            stack.extend(members.values())
        elif isinstance(v, (list, tuple)):
            items = cast("list[object] | tuple[object, ...]", v)
            ids.add(id(items))
            stack.extend(items)
    return ids


def mutate_everything(value: object) -> None:
    """Append to every list, add a key to every dict, and overwrite their first member."""
    stack: list[object] = [value]
    while stack:
        v = stack.pop()
        if type(v) is list:
            items = cast("list[object]", v)
            stack.extend(items)
            if items:
                items[0] = "overwritten"
            items.append("appended")
        elif type(v) is dict:
            members = cast("dict[str, object]", v)
            stack.extend(members.values())
            for k in list(members)[:1]:
                members[k] = "overwritten"
            members["\x00added"] = ["appended"]


# --------------------------------------------------------------------------------------
# Properties
# --------------------------------------------------------------------------------------


@pytest.mark.slow
@PROPERTY
@given(json_values)
def test_freeze_equals_json_round_trip_of_input(value: JSONIn) -> None:
    assert_same_json(freeze_json(value), json.loads(json.dumps(value)))


@PROPERTY
@given(json_values)
def test_frozen_value_round_trips_through_plain_json_dumps(value: JSONIn) -> None:
    frozen = freeze_json(value)
    # Plain json.dumps: no default=, FrozenDict and tuples serialize natively.
    assert_same_json(frozen, json.loads(json.dumps(frozen)))
    assert json.dumps(frozen) == json.dumps(value)


@PROPERTY
@given(json_values)
def test_freeze_is_idempotent_and_size_is_preserved(value: JSONIn) -> None:
    frozen = freeze_json(value)
    again = freeze_json(frozen)
    assert_same_json(again, json.loads(json.dumps(value)))
    assert json_size(frozen) == json_size(value)


@PROPERTY
@given(json_values)
def test_result_is_immutable_all_the_way_down(value: JSONIn) -> None:
    assert_deeply_frozen(freeze_json(value))


@pytest.mark.slow
@PROPERTY
@given(json_values)
def test_input_is_not_mutated(value: JSONIn) -> None:
    before = copy.deepcopy(value)
    before_text = json.dumps(value)
    freeze_json(value)
    assert value == before
    assert json.dumps(value) == before_text  # also catches list -> tuple, order changes


@pytest.mark.slow
@PROPERTY
@given(json_values)
def test_input_is_not_retained(value: JSONIn) -> None:
    expected = json.loads(json.dumps(value))
    frozen = freeze_json(value)
    input_ids = container_ids(value)
    assert not (container_ids(frozen) & input_ids), "the result shares a container with the input"
    mutate_everything(value)
    assert_same_json(frozen, expected)


def test_input_is_not_retained_concrete() -> None:
    xs = [1, 2]
    inner: dict[str, object] = {"x": xs}
    value: dict[str, object] = {"a": inner, "b": [inner, "s"]}
    frozen = freeze_json(value)
    xs.append(3)
    inner["y"] = 1
    value["c"] = 2
    assert frozen == {"a": {"x": (1, 2)}, "b": ({"x": (1, 2)}, "s")}


def test_frozen_dict_input_is_copied_and_frozen_inside() -> None:
    source = FrozenDict({"a": [1, {"b": [2]}]})
    frozen = freeze_json(source)
    assert frozen == {"a": (1, {"b": (2,)})}
    assert_deeply_frozen(frozen)
    cast("list[object]", source["a"]).append(3)
    assert frozen == {"a": (1, {"b": (2,)})}


def test_tuples_become_tuples_and_scalars_are_unchanged() -> None:
    assert freeze_json((1, [2, (3,)])) == (1, (2, (3,)))
    for scalar in ("", "text", 0, -5, 2**53 - 1, 1.5, -0.0, True, False, None):
        result = freeze_json(scalar)
        assert type(result) is type(scalar)
        assert result == scalar


# --------------------------------------------------------------------------------------
# FrozenDict
# --------------------------------------------------------------------------------------


def _sample() -> FrozenDict[str, object]:
    frozen = freeze_json({"a": 1, "b": [1, 2], "c": {"d": None}})
    assert type(frozen) is FrozenDict
    return cast("FrozenDict[str, object]", frozen)


_MUTATORS: list[tuple[str, Callable[[FrozenDict[str, object]], object]]] = [
    ("setitem new", lambda d: operator.setitem(d, "new", 1)),
    ("setitem existing", lambda d: operator.setitem(d, "a", 2)),
    ("delitem", lambda d: operator.delitem(d, "a")),
    ("ior", lambda d: d.__ior__({"new": 1})),
    ("ior empty", lambda d: d.__ior__({})),
    ("clear", lambda d: d.clear()),
    ("pop", lambda d: d.pop("a")),
    ("pop default", lambda d: d.pop("missing", None)),
    ("popitem", lambda d: d.popitem()),
    ("setdefault new", lambda d: d.setdefault("new", 1)),
    ("setdefault existing", lambda d: d.setdefault("a", 1)),
    ("update mapping", lambda d: d.update({"a": 5})),
    ("update kwargs", lambda d: d.update(a=5)),
    ("update pairs", lambda d: d.update([("z", 1)])),
]


@pytest.mark.parametrize(("name", "mutate"), _MUTATORS, ids=[name for name, _ in _MUTATORS])
def test_frozen_dict_mutators_raise_type_error(
    name: str, mutate: Callable[[FrozenDict[str, object]], object]
) -> None:
    d = _sample()
    with pytest.raises(TypeError):
        mutate(d)
    assert d == {"a": 1, "b": (1, 2), "c": {"d": None}}, f"{name} changed the FrozenDict"
    assert list(d) == ["a", "b", "c"]


def _merge_into(target: dict[str, object]) -> None:
    target |= {"new": 1}


def test_frozen_dict_statement_forms_raise() -> None:
    d = _sample()
    with pytest.raises(TypeError):
        _merge_into(d)  # even code that only knows it as a dict
    with pytest.raises(TypeError):
        d["new"] = 1
    with pytest.raises(TypeError):
        del d["a"]
    assert d == {"a": 1, "b": (1, 2), "c": {"d": None}}


def test_frozen_dict_nested_objects_are_frozen_too() -> None:
    d = _sample()
    inner = cast("FrozenDict[str, object]", d["c"])
    assert type(inner) is FrozenDict
    with pytest.raises(TypeError):
        operator.setitem(inner, "d", 1)


def test_frozen_dict_equals_dict_both_ways() -> None:
    d = _sample()
    plain = {"a": 1, "b": (1, 2), "c": {"d": None}}
    assert d == plain
    assert plain == d
    assert d != {"a": 1}
    assert d != {"a": 1, "b": (1, 2), "c": {"d": 0}}
    assert isinstance(d, dict)
    thawed = dict(d)
    assert type(thawed) is dict
    thawed["new"] = 1  # a plain, mutable shallow copy
    assert "new" not in d


def test_frozen_dict_is_hashable_and_hash_is_order_independent() -> None:
    # Objects are typed as read-only Mappings; at run time they are hashable FrozenDicts.
    one = cast("FrozenDict[str, object]", freeze_json({"a": 1, "b": [1, {"c": "x"}]}))
    same = cast("FrozenDict[str, object]", freeze_json({"b": [1, {"c": "x"}], "a": 1}))
    other = cast("FrozenDict[str, object]", freeze_json({"a": 2, "b": [1, {"c": "x"}]}))
    assert one == same
    assert hash(one) == hash(same)
    assert len({one, same, other}) == 2
    table = {one: "found"}
    assert table[same] == "found"
    assert other not in table


_PROTOCOLS = list(range(pickle.HIGHEST_PROTOCOL + 1))


@pytest.mark.parametrize("protocol", _PROTOCOLS)
def test_frozen_dict_pickle_round_trip(protocol: int) -> None:
    value = {"a": [1, {"b": [2.5, None]}], "é": {"😀": True}}
    frozen = freeze_json(value)
    restored = pickle.loads(pickle.dumps(frozen, protocol=protocol))
    assert_same_json(restored, value)
    assert_deeply_frozen(restored)
    with pytest.raises(TypeError):
        operator.setitem(restored, "x", 1)


@pytest.mark.parametrize("copier", [copy.copy, copy.deepcopy], ids=["copy", "deepcopy"])
def test_frozen_dict_copy_round_trip(copier: Callable[[object], object]) -> None:
    value = {"a": [1, {"b": [2.5, None]}], "c": "d"}
    frozen = freeze_json(value)
    copied = cast("dict[str, object]", copier(frozen))
    assert_same_json(copied, value)
    assert_deeply_frozen(copied)
    with pytest.raises(TypeError):
        operator.setitem(copied, "x", 1)
    # Inside a mutable container too.
    holder = copier([frozen])
    assert isinstance(holder, list)
    assert_same_json(cast("list[object]", holder)[0], value)


# --------------------------------------------------------------------------------------
# max_depth
# --------------------------------------------------------------------------------------


def nested(kinds: list[str], leaf: object = None) -> tuple[object, str]:
    """Containers kinds[0] (outermost) to kinds[-1] (innermost), built without recursion.

    The innermost container holds `leaf` unless it is None. Returns the value and the
    path of the innermost container.
    """

    def key_at(level: int) -> str:
        return "odd key" if level % 3 == 0 else f"k{level}"

    inner: object
    if kinds[-1] == "list":
        inner = [] if leaf is None else [leaf]
    else:
        inner = {} if leaf is None else {"leaf": leaf}
    for level in range(len(kinds) - 2, -1, -1):
        inner = [inner] if kinds[level] == "list" else {key_at(level): inner}
    parts = ["$"]
    for level, kind in enumerate(kinds[:-1]):
        if kind == "list":
            parts.append("[0]")
        elif key_at(level) == "odd key":
            parts.append('["odd key"]')
        else:
            parts.append(f".{key_at(level)}")
    return inner, "".join(parts)


_MIXED = [random.Random(seed).choice(["list", "dict"]) for seed in range(65)]
_SHAPES = {
    "lists": ["list"] * 65,
    "dicts": ["dict"] * 65,
    "alternating": ["list", "dict"] * 32 + ["list"],
    "mixed": _MIXED,
}


@pytest.mark.parametrize("shape", list(_SHAPES))
def test_depth_64_passes(shape: str) -> None:
    kinds = _SHAPES[shape][:64]
    value, _ = nested(kinds, leaf="scalar at depth 65 is fine")
    frozen = freeze_json(value)
    expected = json.loads(json.dumps(value))
    assert_same_json(frozen, expected)
    assert json_size(value) == len(json.dumps(value, separators=(",", ":")))


@pytest.mark.parametrize("shape", list(_SHAPES))
def test_depth_65_fails(shape: str) -> None:
    kinds = _SHAPES[shape]
    assert len(kinds) == 65
    value, path = nested(kinds)
    for fn in (freeze_json, json_size):
        with pytest.raises(LimitExceededError) as exc:
            fn(value)
        assert exc.value.limit == "max_depth"
        assert exc.value.limit_value == 64
        assert exc.value.observed == 65
        assert exc.value.path == path


def test_depth_65_inside_a_wide_value_reports_its_path() -> None:
    # 3 containers above `parts`, then 62 nested lists: the innermost is the 65th.
    deep, deep_path = nested(["list"] * 62)
    value = {"messages": [1, "two", {"parts": deep}]}
    with pytest.raises(LimitExceededError) as exc:
        freeze_json(value)
    assert exc.value.limit == "max_depth"
    assert exc.value.path == "$.messages[2].parts" + deep_path[1:]
    shallower = {"messages": [1, "two", {"parts": nested(["list"] * 61)[0]}]}
    freeze_json(shallower)  # 3 + 61 = 64 containers


def test_custom_max_depth() -> None:
    limits = JSONLimits(max_depth=3)
    freeze_json([{"a": list[object]()}], limits)
    freeze_json({"a": {"b": "not a container"}}, limits)
    with pytest.raises(LimitExceededError) as exc:
        freeze_json([{"a": [list[object]()]}], limits)
    assert (exc.value.limit, exc.value.limit_value, exc.value.observed) == ("max_depth", 3, 4)
    assert exc.value.path == "$[0].a[0]"
    one = JSONLimits(max_depth=1)
    freeze_json([1, "x", None], one)
    with pytest.raises(LimitExceededError) as exc:
        freeze_json([1, dict[str, object]()], one)
    assert (exc.value.limit, exc.value.limit_value, exc.value.path) == ("max_depth", 1, "$[1]")


# --------------------------------------------------------------------------------------
# max_values
# --------------------------------------------------------------------------------------


def _assert_values_error(exc: LimitExceededError, limit_value: int, path: str) -> None:
    assert exc.limit == "max_values"
    assert exc.limit_value == limit_value
    assert exc.observed == limit_value + 1
    assert exc.path == path


def test_values_flat_list_boundary() -> None:
    assert freeze_json(list(range(9_999))) == tuple(range(9_999))  # 1 + 9,999 = 10,000
    with pytest.raises(LimitExceededError) as exc:
        freeze_json(list(range(10_000)))  # 10,001 values
    _assert_values_error(exc.value, 10_000, "$[9999]")


def test_values_flat_dict_boundary() -> None:
    ok = {f"k{i}": i for i in range(9_999)}
    assert freeze_json(ok) == ok
    too_many = {f"k{i}": i for i in range(10_000)}
    for fn in (freeze_json, json_size):
        with pytest.raises(LimitExceededError) as exc:
            fn(too_many)
        _assert_values_error(exc.value, 10_000, "$.k9999")


def test_values_nested_lists_boundary() -> None:
    # root + 99 lists + 99 * 100 ints = 10,000 values.
    ok = [list(range(100)) for _ in range(99)]
    freeze_json(ok)
    too_many = [list(range(100)) for _ in range(98)] + [list(range(101))]
    with pytest.raises(LimitExceededError) as exc:
        freeze_json(too_many)
    _assert_values_error(exc.value, 10_000, "$[98][100]")


def test_values_nested_objects_boundary() -> None:
    # root + pad list + pad items + items list + 1,666 * (object + id + list + 3 ints).
    def build(pad: int) -> dict[str, object]:
        items = [{"id": i, "v": [1, 2, 3]} for i in range(1_666)]
        return {"pad": [0] * pad, "items": items}

    assert 1 + 1 + 1 + 1 + 1_666 * 6 == 10_000
    freeze_json(build(1))
    with pytest.raises(LimitExceededError) as exc:
        freeze_json(build(2))
    _assert_values_error(exc.value, 10_000, "$.items[1665].v[2]")


def test_values_empty_containers_count() -> None:
    # 1 + 9,999 empty containers: every container is a value.
    empty: list[object] = [list[object]() for _ in range(5_000)]
    empty += [dict[str, object]() for _ in range(5_000)]
    freeze_json(empty[1:])
    with pytest.raises(LimitExceededError) as exc:
        freeze_json(empty)
    _assert_values_error(exc.value, 10_000, "$[9999]")


def test_values_keys_do_not_count() -> None:
    # 1 + 1 + 4,999 objects of one key each + 4,999 nulls = 10,000 values (14,999 with keys).
    objects: list[object] = [{"key": None} for _ in range(4_999)]
    freeze_json([1, *objects])
    with pytest.raises(LimitExceededError) as exc:
        freeze_json([1, 2, *objects])
    _assert_values_error(exc.value, 10_000, "$[5000].key")


def test_custom_max_values() -> None:
    limits = JSONLimits(max_values=5)
    freeze_json([1, 2, 3, list[object]()], limits)
    freeze_json({"a": [1, 2], "b": 3}, limits)
    with pytest.raises(LimitExceededError) as exc:
        freeze_json([1, 2, 3, [4]], limits)
    _assert_values_error(exc.value, 5, "$[3][0]")
    with pytest.raises(LimitExceededError) as exc:
        freeze_json({"a": 1, "b": 2, "c": 3, "d": 4, "e": 5}, limits)
    _assert_values_error(exc.value, 5, "$.e")
    single = JSONLimits(max_values=1)
    freeze_json([], single)
    freeze_json("a scalar is one value", single)
    with pytest.raises(LimitExceededError) as exc:
        freeze_json([None], single)
    _assert_values_error(exc.value, 1, "$[0]")


def test_raised_max_values_lets_more_through() -> None:
    big = list(range(50_000))
    assert freeze_json(big, JSONLimits(max_values=50_001)) == tuple(big)
    with pytest.raises(LimitExceededError) as exc:
        freeze_json(big, JSONLimits(max_values=50_000))
    _assert_values_error(exc.value, 50_000, "$[49999]")


# --------------------------------------------------------------------------------------
# max_chars
# --------------------------------------------------------------------------------------


def _assert_chars_error(exc: LimitExceededError, limit_value: int, path: str) -> None:
    assert exc.limit == "max_chars"
    assert exc.limit_value == limit_value
    assert exc.observed == limit_value + 1
    assert exc.path == path


def test_chars_top_level_string_boundary() -> None:
    ok = "x" * (1_000_000 - 2)
    assert json_size(ok) == 1_000_000
    assert freeze_json(ok) == ok
    for fn in (freeze_json, json_size):
        with pytest.raises(LimitExceededError) as exc:
            fn(ok + "x")
        _assert_chars_error(exc.value, 1_000_000, "$")


@pytest.mark.parametrize(
    ("unit", "unit_size"),
    [("\n", 2), ("\x01", 6), ('"', 2), ("\\", 2), ("\U0001f600", 2), ("é", 1), ("\u2028", 1)],
    ids=["newline", "control", "quote", "backslash", "non-bmp", "latin", "u2028"],
)
def test_chars_boundary_with_escapes_in_array(unit: str, unit_size: int) -> None:
    count = 1_000
    # ["<count units><filler>"]: 2 brackets + 2 quotes + count * unit_size + filler.
    filler = 1_000_000 - 4 - count * unit_size
    ok = [unit * count + "x" * filler]
    assert json_size(ok) == 1_000_000
    freeze_json(ok)
    too_long = [unit * count + "x" * (filler + 1)]
    for fn in (freeze_json, json_size):
        with pytest.raises(LimitExceededError) as exc:
            fn(too_long)
        _assert_chars_error(exc.value, 1_000_000, "$[0]")


def test_chars_boundary_in_object() -> None:
    # {"key":"<r>"}: 2 braces + 5 for "key" + 1 colon + 2 quotes + r.
    ok = {"key": "x" * (1_000_000 - 10)}
    assert json_size(ok) == 1_000_000
    freeze_json(ok)
    with pytest.raises(LimitExceededError) as exc:
        freeze_json({"key": "x" * (1_000_000 - 9)})
    _assert_chars_error(exc.value, 1_000_000, "$.key")


def test_chars_boundary_made_of_many_small_values() -> None:
    # 5,000 strings of 196 characters: 2 brackets + 4,999 commas + 5,000 * (196 + 2 quotes).
    value = ["x" * 196] * 5_000
    size = 2 + 4_999 + 5_000 * 198
    assert size == 995_001 == len(json.dumps(value, separators=(",", ":")))
    assert json_size(value) == size
    freeze_json(value, JSONLimits(max_chars=size))
    with pytest.raises(LimitExceededError) as exc:
        freeze_json(value, JSONLimits(max_chars=size - 1))
    _assert_chars_error(exc.value, size - 1, "$[4999]")


def test_custom_max_chars_with_js_number_formatting() -> None:
    value = [1.5, -0.0, 100.0, 1e21]
    assert json_size(value) == len("[1.5,0,100,1e+21]") == 17
    freeze_json(value, JSONLimits(max_chars=17))
    with pytest.raises(LimitExceededError) as exc:
        freeze_json(value, JSONLimits(max_chars=16))
    assert (exc.value.limit, exc.value.limit_value, exc.value.path) == ("max_chars", 16, "$[3]")


def test_custom_max_chars_top_level_scalars() -> None:
    assert json_size(12345, JSONLimits(max_chars=5)) == 5
    assert json_size(None, JSONLimits(max_chars=4)) == 4
    assert json_size(False, JSONLimits(max_chars=5)) == 5
    for value, size in ((12345, 5), (None, 4), (False, 5), ("abc", 5), (1e21, 5)):
        with pytest.raises(LimitExceededError) as exc:
            freeze_json(value, JSONLimits(max_chars=size - 1))
        _assert_chars_error(exc.value, size - 1, "$")


def test_custom_max_chars_top_level_string_with_escapes() -> None:
    # "\u0000" * 3 -> "\u0000\u0000\u0000" in quotes: 20 units, though len() is 3.
    value = "\x00" * 3
    assert json_size(value, JSONLimits(max_chars=20)) == 20
    with pytest.raises(LimitExceededError) as exc:
        freeze_json(value, JSONLimits(max_chars=19))
    _assert_chars_error(exc.value, 19, "$")


def test_custom_max_chars_top_level_non_bmp_string() -> None:
    value = "\U0001f600" * 3  # 3 code points, 6 UTF-16 units, 8 with quotes
    assert json_size(value, JSONLimits(max_chars=8)) == 8
    with pytest.raises(LimitExceededError) as exc:
        json_size(value, JSONLimits(max_chars=7))
    _assert_chars_error(exc.value, 7, "$")


# --------------------------------------------------------------------------------------
# Flat objects of strings (the common case), measured again once their keys are familiar
# --------------------------------------------------------------------------------------

_FAMILIAR_KEYS = ["type", "text", "id", "delta", "role", "k\x01", "\U0001f600", "é", ""]
_flat_objects = st.dictionaries(st.sampled_from(_FAMILIAR_KEYS) | _text, _text, max_size=8)


def _utf16_compact_length(value: object) -> int:
    # Strings only: Python's escapes are JavaScript's, so this is JSON.stringify's length.
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    return len(text.encode("utf-16-le")) // 2


@PROPERTY
@given(_flat_objects)
def test_flat_string_objects_measure_the_same_every_time(value: dict[str, str]) -> None:
    expected = _utf16_compact_length(value)
    for _ in range(3):
        assert json_size(value) == expected
        frozen = freeze_json(value)
        assert type(frozen) is FrozenDict
        assert frozen == value
        assert frozen is not value
        with pytest.raises(LimitExceededError) as exc:
            freeze_json(value, JSONLimits(max_chars=expected - 1))
        assert exc.value.limit == "max_chars"
        freeze_json(value, JSONLimits(max_chars=expected))


def test_flat_string_object_boundaries_with_familiar_keys() -> None:
    value = {"type": "text", "text": "a\x01\U0001f600", "id": "x"}
    size = len('{"type":"text","text":"a\\u0001XX","id":"x"}')  # XX: the emoji's 2 units
    for _ in range(3):
        assert json_size(value) == size
        freeze_json(value, JSONLimits(max_chars=size, max_values=4))
        with pytest.raises(LimitExceededError) as exc:
            freeze_json(value, JSONLimits(max_chars=size - 1))
        assert (exc.value.limit, exc.value.limit_value) == ("max_chars", size - 1)
        with pytest.raises(LimitExceededError) as exc:
            freeze_json(value, JSONLimits(max_values=3))
        _assert_values_error(exc.value, 3, "$.id")


class MyStr(str):
    __slots__ = ()


def test_flat_string_object_rejections_with_familiar_keys() -> None:
    freeze_json({"type": "text", "text": "warm the keys"})
    with pytest.raises(ValidationError) as bad:
        freeze_json({"type": "text", "text": "lone \ud800"})
    assert bad.value.path == "$.text"
    with pytest.raises(ValidationError) as bad:
        freeze_json({"type": "text", "text": MyStr("subclass")})
    assert bad.value.path == "$.text"
    with pytest.raises(ValidationError) as bad:
        freeze_json({"type": "text", 1: "x"})
    assert bad.value.path == "$"


# --------------------------------------------------------------------------------------
# JSONLimits
# --------------------------------------------------------------------------------------

_CAPS = {"max_depth": 100_000, "max_values": 100_000_000, "max_chars": 1_000_000_000}


class _Small(enum.IntEnum):
    ONE = 1


def test_json_limits_defaults() -> None:
    limits = JSONLimits()
    assert (limits.max_depth, limits.max_values, limits.max_chars) == (64, 10_000, 1_000_000)


def test_json_limits_accepts_bounds() -> None:
    JSONLimits(max_depth=1, max_values=1, max_chars=1)
    caps = JSONLimits(**_CAPS)
    assert caps.max_depth == 100_000
    assert caps.max_values == 100_000_000
    assert caps.max_chars == 1_000_000_000


@pytest.mark.parametrize("name", list(_CAPS))
@pytest.mark.parametrize(
    "bad",
    [0, -1, True, False, 1.5, 64.0, "64", None, _Small.ONE, "over cap"],
    ids=[
        "zero",
        "minus-one",
        "true",
        "false",
        "float",
        "integral-float",
        "str",
        "none",
        "intenum",
        "over-cap",
    ],
)
def test_json_limits_rejects_nonsense(name: str, bad: object) -> None:
    value = _CAPS[name] + 1 if bad == "over cap" else bad
    with pytest.raises(ConfigurationError) as exc:
        JSONLimits(**{name: cast(int, value)})
    assert exc.value.parameter == name
    assert exc.value.value is value
    assert isinstance(exc.value, ValueError)


def test_json_limits_is_frozen() -> None:
    limits = JSONLimits()
    with pytest.raises(dataclasses.FrozenInstanceError):
        limits.max_depth = 5  # pyright: ignore[reportAttributeAccessIssue]
    assert limits.max_depth == 64
    assert JSONLimits(max_depth=5) == JSONLimits(max_depth=5)
    assert hash(JSONLimits(max_depth=5)) == hash(JSONLimits(max_depth=5))
