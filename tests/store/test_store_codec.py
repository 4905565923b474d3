"""Stored JSON decodes back to exactly the frozen value that was stored."""

from __future__ import annotations

from typing import Any, cast

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ai_chat.limits import FrozenDict, freeze_json
from ai_chat.store import StoreError
from ai_chat.store._codec import decode_json, decode_rows, encode_json, from_micros


def _containers(inner: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    return st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=5), inner, max_size=4)


json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**53 - 1), 2**53 - 1) | st.floats(allow_nan=False, allow_infinity=False) | st.text(),
    _containers,
    max_leaves=20,
)  # fmt: skip


def same(a: Any, b: Any) -> bool:
    """Equal, with the same container types all the way down."""
    if type(a) is not type(b):
        return False
    if type(a) is FrozenDict:
        left, right = cast("dict[str, Any]", a), cast("dict[str, Any]", b)
        return left.keys() == right.keys() and all(same(left[k], right[k]) for k in left)
    if type(a) is tuple:
        first, second = cast("tuple[Any, ...]", a), cast("tuple[Any, ...]", b)
        return len(first) == len(second) and all(
            same(x, y) for x, y in zip(first, second, strict=True)
        )
    return bool(a == b) or (a != a and b != b)


@given(json_values)
def test_decode_is_the_inverse_of_encode(value: object) -> None:
    frozen = freeze_json(value)
    assert same(decode_json(encode_json(frozen)), frozen)


@given(st.text(), json_values)
def test_rows_decode_whatever_their_strings_hold(text: str, data: object) -> None:
    messages = [
        freeze_json({"id": "a", "role": "user", "parts": [{"type": "text", "text": text}]}),
        freeze_json({"id": "b", "role": "user", "parts": [{"type": "data-x", "data": data}]}),
        freeze_json({"id": "c[", "role": "assistant", "parts": [], "metadata": {"t": [text]}}),
    ]
    rows = [
        (n, encode_json(m), 1_700_000_000_000_000 + (n + 1) // 2) for n, m in enumerate(messages, 1)
    ]
    stored = decode_rows(rows, from_micros)
    assert [s.seq for s in stored] == [1, 2, 3]
    for item, message in zip(stored, messages, strict=True):
        assert same(item.message, message)
    assert stored[0].created_at == stored[1].created_at == from_micros(1_700_000_000_000_001)
    assert stored[2].created_at == from_micros(1_700_000_000_000_002)


def test_altered_stored_json_is_a_store_error() -> None:
    for text in ["", "{", '{"a":1} x', "nope", '{"id":"a","parts":[}']:
        with pytest.raises(StoreError):
            decode_json(text)
        with pytest.raises(StoreError):
            decode_rows([(1, text, 0)], from_micros)


def _usual(n: int, text: str = "hi") -> str:
    return encode_json(
        freeze_json({"id": f"m{n}", "role": "user", "parts": [{"type": "text", "text": text}]})
    )


@pytest.mark.parametrize(
    "altered", ['{"a":1} x', '{"a":1},{"b":2}', "", '{"id":"a","parts":[}', "[1", "2]"]
)
def test_an_altered_row_among_valid_ones_is_a_store_error(altered: str) -> None:
    rows = [(n, _usual(n), 0) for n in range(1, 2001)]
    rows[1500] = (1501, altered, 0)
    with pytest.raises(StoreError):
        decode_rows(rows, from_micros)


def test_altered_rows_never_combine_into_valid_json() -> None:
    # Two rows that are JSON only together (split at a comma), and a row padded with
    # spaces: each row must be one JSON value on its own.
    first, second = _usual(1), _usual(2)
    cut = second.index(',"parts"')
    split = [(1, first + "," + second[:cut], 0), (2, second[cut + 1 :], 0)]
    padded = [(1, " " + first + " ", 0)]
    for rows in (split, padded):
        with pytest.raises(StoreError):
            decode_rows(rows, from_micros)


def test_long_loads_decode_every_kind_of_row() -> None:
    # Usual messages, and messages with "[" in their text or with other arrays (lists
    # inside data and metadata must come back as tuples).
    messages = [
        freeze_json(
            {"id": f"m{n}", "role": "user", "parts": [{"type": "text", "text": "hi"}]}
            if n % 3
            else {
                "id": f"m{n}",
                "role": "assistant",
                "parts": [{"type": "data-x", "data": {"list": [n, [n]]}}],
                "metadata": {"see": ["[1]"]},
            }
        )
        for n in range(1, 2601)
    ]
    rows = [(n, encode_json(m), n // 7) for n, m in enumerate(messages, 1)]
    stored = decode_rows(rows, from_micros)
    assert [s.seq for s in stored] == list(range(1, 2601))
    for item, message in zip(stored, messages, strict=True):
        assert same(item.message, message)
        assert item.created_at == from_micros(item.seq // 7)
