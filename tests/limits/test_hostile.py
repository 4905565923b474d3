"""Hostile inputs: the walk is iterative, stops early, and never copies what it rejects.

"Stops early" is measured in operations, not seconds: a profiler counts the Python and C
calls the walk makes, and a budget far below the input's size (or, where the input is
astronomically large, a small multiple of the limit) separates stopping at the limit from
walking the input. Clock-based bounds flake on a loaded machine; a count does not.
"""

from __future__ import annotations

import json
import re
import sys
import tracemalloc
from collections.abc import Callable
from types import FrameType
from typing import cast

import pytest

from ai_chat._errors import LimitExceededError
from ai_chat.limits import JSONLimits, freeze_json, json_size

_MB = 1_000_000


def _deep_list(depth: int) -> object:
    value: object = []
    for _ in range(depth - 1):
        value = [value]
    return value


def _deep_dict(depth: int) -> object:
    value: object = {}
    for _ in range(depth - 1):
        value = {"a": value}
    return value


def _raises_limit(fn: Callable[[], object]) -> LimitExceededError:
    with pytest.raises(LimitExceededError) as exc:
        fn()
    return exc.value


def _peak_while_failing(fn: Callable[[], object]) -> tuple[LimitExceededError, int]:
    """Run `fn`, which must raise LimitExceededError; return it and the peak traced memory."""
    error: LimitExceededError | None = None
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        try:
            fn()
        except LimitExceededError as exc:
            error = exc
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert error is not None, "no LimitExceededError was raised"
    return error, peak


class _OverBudget(Exception):
    """Raised inside the walk when it makes more calls than the test allows."""


def _raises_limit_within(budget: int, fn: Callable[[], object]) -> LimitExceededError:
    """Run `fn`, which must raise LimitExceededError within `budget` profiler events.

    Every call and return, Python or C, is one event. An over-budget walk is stopped where
    it is (the profiler raises inside it), so a walk that would never end fails at once.
    """
    steps = 0

    def count(frame: FrameType, event: str, arg: object) -> None:
        nonlocal steps
        steps += 1
        if steps > budget:
            raise _OverBudget(f"the walk made more than {budget:,} calls")

    error: LimitExceededError | None = None
    previous = sys.getprofile()
    sys.setprofile(count)
    try:
        try:
            fn()
        except LimitExceededError as exc:
            error = exc
        # A profiler that raised (a RecursionError in it, say) would have been removed,
        # and the count would stop: it must still be ours.
        still_counting = sys.getprofile() is count
    finally:
        sys.setprofile(previous)
    assert still_counting, "the profiler was removed during the walk"
    assert error is not None, "no LimitExceededError was raised"
    return error


# --------------------------------------------------------------------------------------
# Depth
# --------------------------------------------------------------------------------------


@pytest.mark.slow
@pytest.mark.parametrize(
    ("build", "step"), [(_deep_list, "[0]"), (_deep_dict, ".a")], ids=["list", "dict"]
)
def test_million_deep_nesting_hits_max_depth(build: Callable[[int], object], step: str) -> None:
    value = build(1_000_000)
    for fn in (freeze_json, json_size):
        # About 2,500 calls: the walk goes 64 levels down, not a million.
        error = _raises_limit_within(100_000, lambda: fn(value))  # noqa: B023 - called now
        assert error.limit == "max_depth"
        assert error.limit_value == 64
        assert error.observed == 65
        assert error.path == "$" + step * 64


@pytest.mark.slow
@pytest.mark.parametrize(
    ("build", "step"), [(_deep_list, "[0]"), (_deep_dict, ".a")], ids=["list", "dict"]
)
def test_million_deep_nesting_at_the_largest_depth_limit(
    build: Callable[[int], object], step: str
) -> None:
    value = build(1_000_000)
    limits = JSONLimits(max_depth=100_000, max_values=100_000_000, max_chars=1_000_000_000)
    error = _raises_limit(lambda: freeze_json(value, limits))
    assert error.limit == "max_depth"
    assert error.limit_value == 100_000
    assert error.observed == 100_001
    assert error.path == "$" + step * 100_000


@pytest.mark.slow
def test_hundred_thousand_deep_value_is_accepted_without_recursion() -> None:
    # A recursive walk (in Python or C) would raise RecursionError long before this depth.
    depth = 100_000
    limits = JSONLimits(max_depth=depth, max_values=depth + 1)
    value = _deep_list(depth)
    assert json_size(value, limits) == 2 * depth
    frozen = freeze_json(value, limits)
    level = 1
    node: object = frozen
    while True:
        assert type(node) is tuple
        items = cast("tuple[object, ...]", node)
        if not items:
            break
        assert len(items) == 1
        node = items[0]
        level += 1
    assert level == depth
    with pytest.raises(LimitExceededError) as exc:
        freeze_json([value], limits)
    assert (exc.value.limit, exc.value.observed) == ("max_depth", depth + 1)


# --------------------------------------------------------------------------------------
# Huge strings
# --------------------------------------------------------------------------------------

_HUGE = 10_000_000


def _huge_string() -> str:
    return "x" * _HUGE


_WRAPS: list[tuple[Callable[[str], object], str]] = [
    (lambda s: s, "$"),
    (lambda s: [s], "$[0]"),
    (lambda s: (1, s), "$[1]"),
    (lambda s: {"text": s}, "$.text"),
    (lambda s: [{"parts": [{"type": "text", "text": s}]}], "$[0].parts[0].text"),
]


@pytest.mark.parametrize(
    ("wrap", "path"), _WRAPS, ids=["top", "list", "tuple", "object value", "deep"]
)
@pytest.mark.parametrize("fn", [freeze_json, json_size], ids=["freeze_json", "json_size"])
def test_ten_million_char_string_is_rejected_without_copying(
    wrap: Callable[[str], object], path: str, fn: Callable[[object], object]
) -> None:
    value = wrap(_huge_string())
    error, peak = _peak_while_failing(lambda: fn(value))
    assert error.limit == "max_chars"
    assert error.limit_value == 1_000_000
    assert error.observed > 1_000_000
    assert error.path == path
    assert peak < _MB, f"peak {peak:,} bytes while rejecting a {_HUGE:,}-character string"


@pytest.mark.parametrize("fn", [freeze_json, json_size], ids=["freeze_json", "json_size"])
def test_ten_million_char_key_is_rejected_without_copying(fn: Callable[[object], object]) -> None:
    value = {_huge_string(): 1}
    error, peak = _peak_while_failing(lambda: fn(value))
    assert error.limit == "max_chars"
    assert error.limit_value == 1_000_000
    assert peak < _MB, f"peak {peak:,} bytes while rejecting a {_HUGE:,}-character key"


def test_ten_million_char_string_is_measured_when_the_limit_allows_it() -> None:
    text = _huge_string()
    limits = JSONLimits(max_chars=_HUGE + 2)
    assert json_size(text, limits) == _HUGE + 2
    assert json_size({"t": text}, JSONLimits(max_chars=_HUGE + 8)) == _HUGE + 8
    error = _raises_limit(lambda: json_size({"t": text}, JSONLimits(max_chars=_HUGE + 7)))
    assert (error.limit, error.path) == ("max_chars", "$.t")


# --------------------------------------------------------------------------------------
# Billion laughs: a DAG that is tiny in memory and astronomically large as JSON
# --------------------------------------------------------------------------------------

_PATH = re.compile(r"\$(\[[01]\]|\.[ab])*\Z")


def _laughs_list(levels: int, leaf: object = "lol") -> object:
    value = leaf
    for _ in range(levels):
        value = [value, value]
    return value


def _laughs_dict(levels: int, leaf: object = "lol") -> object:
    value = leaf
    for _ in range(levels):
        value = {"a": value, "b": value}
    return value


@pytest.mark.parametrize("build", [_laughs_list, _laughs_dict], ids=["list", "dict"])
def test_billion_laughs_hits_max_values_quickly(build: Callable[[int], object]) -> None:
    value = build(40)  # 2**41 - 1 values, 41 deep
    for fn in (freeze_json, json_size):
        # About 20 calls per value up to the limit of 10,000 (some 220,000 in all); a walk
        # past the limit would go on for 2**41 values.
        error = _raises_limit_within(1_000_000, lambda: fn(value))  # noqa: B023 - called now
        assert error.limit == "max_values"
        assert error.limit_value == 10_000
        assert error.observed == 10_001
        assert _PATH.match(error.path), error.path


def test_billion_laughs_hits_max_chars_when_values_are_allowed() -> None:
    value = _laughs_list(40, leaf="x" * 1_000)
    limits = JSONLimits(max_values=100_000_000)
    # About 43,000 calls: the text passes a million characters after some 1,000 leaves.
    error = _raises_limit_within(1_000_000, lambda: freeze_json(value, limits))
    assert error.limit == "max_chars"
    assert error.limit_value == 1_000_000
    assert _PATH.match(error.path), error.path


def test_small_laughs_are_accepted_and_expanded() -> None:
    value = _laughs_list(12)  # 2**13 - 1 = 8,191 values
    frozen = freeze_json(value)
    assert json.loads(json.dumps(frozen)) == json.loads(json.dumps(value))
    assert json_size(value) == len(json.dumps(value, separators=(",", ":")))


# --------------------------------------------------------------------------------------
# Control characters
# --------------------------------------------------------------------------------------


def test_ten_thousand_control_characters_in_one_string() -> None:
    text = "".join(chr(i % 32) for i in range(10_000))
    assert freeze_json(text) == text
    assert json_size(text) == len(json.dumps(text))  # Python escapes them as JS does
    as_key = {text: text}
    assert freeze_json(as_key) == as_key
    assert json_size(as_key) == len(json.dumps(as_key, separators=(",", ":")))


def test_ten_thousand_control_characters_as_separate_values() -> None:
    values = [chr(i % 32) for i in range(9_999)]
    assert freeze_json(values) == tuple(values)
    assert json_size(values) == len(json.dumps(values, separators=(",", ":")))
    error = _raises_limit(lambda: freeze_json([*values, "\x00"]))
    assert (error.limit, error.path) == ("max_values", "$[9999]")


def test_escape_expansion_counts_against_max_chars_in_an_array() -> None:
    # Each NUL is six characters of JSON: ["<166,666 NULs>"] is exactly 1,000,000.
    ok = ["\x00" * 166_666]
    assert json_size(ok) == 1_000_000
    freeze_json(ok)
    error = _raises_limit(lambda: freeze_json(["\x00" * 166_667]))
    assert (error.limit, error.limit_value, error.path) == ("max_chars", 1_000_000, "$[0]")
    assert error.observed == 1_000_006


def test_escape_expansion_counts_against_max_chars_at_top_level() -> None:
    # 200,000 characters, but 1,200,002 characters of JSON.
    text = "\x00" * 200_000
    assert json_size(text, JSONLimits(max_chars=1_200_002)) == 1_200_002
    for fn in (freeze_json, json_size):
        error = _raises_limit(lambda: fn(text))  # noqa: B023 - called immediately
        assert (error.limit, error.limit_value, error.path) == ("max_chars", 1_000_000, "$")
        assert error.observed > 1_000_000


# --------------------------------------------------------------------------------------
# Wide values
# --------------------------------------------------------------------------------------


def test_dict_with_100_000_keys_hits_max_values() -> None:
    value = {f"k{i}": i for i in range(100_000)}
    for fn in (freeze_json, json_size):
        # A few dozen calls: the key count alone is over the limit. Walking the keys would
        # take at least two calls each (200,000).
        error = _raises_limit_within(10_000, lambda: fn(value))  # noqa: B023 - called now
        assert error.limit == "max_values"
        assert error.limit_value == 10_000
        assert error.observed == 10_001
        assert error.path == "$.k9999"


def test_list_with_a_million_items_hits_max_values_without_walking_it() -> None:
    value = [0] * 1_000_000
    # A few dozen calls; walking the items would take at least two calls each.
    error = _raises_limit_within(100_000, lambda: freeze_json(value))
    assert (error.limit, error.path, error.observed) == ("max_values", "$[9999]", 10_001)


def test_many_distinct_keys_within_limits_are_measured_exactly() -> None:
    # More distinct keys than any internal cache of key sizes would hold.
    value = {f"key \x01{i}\U0001f600": [i] for i in range(4_999)}
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    assert json_size(value) == len(text.encode("utf-16-le")) // 2
    assert json_size(value) == json_size(freeze_json(value))
