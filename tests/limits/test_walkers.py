"""The fast recursive walk and the careful iterative walk agree.

`freeze_json` tries the fast walk and falls back to the careful one whenever the fast one
bails. So the fast walk must never accept what the careful walk rejects, and when both
accept they must return the same value and size.
"""

from __future__ import annotations

import json
import math
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ai_chat._errors import AIChatError
from ai_chat.limits import FrozenDict, JSONLimits, freeze_json
from ai_chat.limits._walk import (
    _Bail,  # pyright: ignore[reportPrivateUsage]
    _careful_walk,  # pyright: ignore[reportPrivateUsage]
    _fast_walk,  # pyright: ignore[reportPrivateUsage]
)

# Valid and invalid leaves alike: the property covers both.
leaves = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**60), max_value=2**60),
    st.integers(min_value=-(10**400), max_value=10**400),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=30),
    st.text(alphabet=st.characters(min_codepoint=0xD800, max_codepoint=0xDFFF), max_size=2),
    st.binary(max_size=3),
    st.sampled_from(['"', "\\", "\n", "\x00", "\U0001f600", "é"]),
)
keys = st.one_of(st.text(max_size=8), st.text(min_size=60, max_size=70), st.integers(0, 3))


# Named functions, not lambdas: hypothesis checks by their source that extend= uses its
# argument, which it cannot always find for a multi-line lambda.
def _mixed_containers(children: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    return st.one_of(
        st.lists(children, max_size=6),
        st.lists(children, max_size=4).map(tuple),
        st.dictionaries(keys, children, max_size=6),
        st.dictionaries(st.text(max_size=6), children, max_size=4).map(FrozenDict),
    )


def _json_containers(children: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    return st.one_of(
        st.lists(children, max_size=6),
        st.dictionaries(st.text(max_size=10), children, max_size=6),
    )


values: st.SearchStrategy[Any] = st.recursive(
    leaves,
    _mixed_containers,
    max_leaves=40,
)
limits = st.builds(
    JSONLimits,
    max_depth=st.integers(1, 8),
    max_values=st.integers(1, 60),
    max_chars=st.integers(1, 400),
)


def run_careful(value: Any, chosen: JSONLimits) -> tuple[Any, int] | type[AIChatError]:
    try:
        return _careful_walk(value, chosen, "$")
    except AIChatError as exc:
        return type(exc)


def run_fast(value: Any, chosen: JSONLimits) -> tuple[Any, int] | None:
    try:
        return _fast_walk(value, chosen.max_depth, chosen.max_values, chosen.max_chars)
    except (_Bail, UnicodeEncodeError, RecursionError):
        return None


@pytest.mark.slow
@settings(max_examples=600, deadline=None, derandomize=True)
@given(value=values, chosen=limits)
def test_fast_walk_never_accepts_what_the_careful_walk_rejects(
    value: Any, chosen: JSONLimits
) -> None:
    careful = run_careful(value, chosen)
    fast = run_fast(value, chosen)
    if isinstance(careful, type):
        assert fast is None, (
            f"fast walk accepted a value the careful walk rejects with {careful.__name__}"
        )
    elif fast is not None:
        assert fast[1] == careful[1]
        assert json.dumps(fast[0]) == json.dumps(careful[0])


@pytest.mark.slow
@settings(max_examples=300, deadline=None, derandomize=True)
@given(
    value=st.recursive(
        st.one_of(
            st.none(),
            st.booleans(),
            st.integers(-(2**53 - 1), 2**53 - 1),
            st.floats(allow_nan=False, allow_infinity=False),
            st.text(max_size=40).filter(lambda s: not any(0xD800 <= ord(c) <= 0xDFFF for c in s)),
        ),
        _json_containers,
        max_leaves=60,
    )
)
def test_fast_walk_takes_ordinary_valid_values(value: Any) -> None:
    fast = run_fast(value, JSONLimits())
    careful = run_careful(value, JSONLimits())
    assert not isinstance(careful, type)
    if isinstance(value, (dict, list)):
        assert fast is not None, "an ordinary value should not need the careful walk"
        assert fast[1] == careful[1]
        assert fast[0] == careful[0]


def test_deep_values_beyond_the_recursion_limit_fall_back() -> None:
    deep: Any = 1
    for _ in range(5_000):
        deep = [deep]
    chosen = JSONLimits(max_depth=10_000)
    assert run_fast(deep, chosen) is None  # RecursionError: bailed
    frozen = freeze_json(deep, chosen)
    for _ in range(5_000):
        assert type(frozen) is tuple
        frozen = frozen[0]
    assert frozen == 1


def test_finite_float_sizes_agree() -> None:
    for number in (0.0, -0.0, 1e-7, 1e21, 123.0, math.pi, 5e-324, 1.7976931348623157e308):
        fast = run_fast([number], JSONLimits())
        careful = run_careful([number], JSONLimits())
        assert fast is not None and not isinstance(careful, type)
        assert fast[1] == careful[1]


@pytest.mark.parametrize("value", [[float("nan")], {"a": b"x"}, ["\ud800"], [10**400], {1: 2}])
def test_invalid_values_make_the_fast_walk_bail(value: Any) -> None:
    assert run_fast(value, JSONLimits()) is None
