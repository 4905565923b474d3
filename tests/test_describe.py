"""The one formatter for values in error messages: bounded, never raising, UTF-8 safe."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ai_chat import AIChatError
from ai_chat._describe import (
    MAX_DETAIL_CHARS,
    MAX_MESSAGE_CHARS,
    MAX_PATH_CHARS,
    MAX_SHOWN_CHARS,
    clip,
    clip_path,
    exception_text,
    shown,
)

PROPERTY = settings(max_examples=300, deadline=None, derandomize=True, database=None)

# Any str, lone surrogates included (hypothesis leaves out category Cs by default).
ANY_TEXT = st.text(st.characters(codec=None, exclude_categories=()), max_size=400)
KEYS = st.one_of(
    ANY_TEXT,
    st.integers(),
    st.floats(allow_nan=True),
    st.binary(max_size=300),
    st.tuples(st.integers(), ANY_TEXT),
    st.none(),
    st.booleans(),
)
VALUES = st.recursive(
    st.one_of(KEYS, st.floats()),
    lambda inner: st.one_of(
        st.lists(inner, max_size=10),
        st.dictionaries(KEYS, inner, max_size=10),
        st.frozensets(st.integers(), max_size=10),
    ),
    max_leaves=40,
)


def assert_safe(text: str, limit: int) -> None:
    assert len(text) <= limit, (len(text), text)
    text.encode("utf-8")  # no lone surrogate: any log handler or JSON response takes it
    json.dumps(text, ensure_ascii=False).encode("utf-8")


@PROPERTY
@given(VALUES)
def test_any_value_is_shown_bounded_and_encodable(value: object) -> None:
    assert_safe(shown(value), MAX_SHOWN_CHARS)


@PROPERTY
@given(ANY_TEXT)
def test_a_string_that_fits_is_a_json_literal_of_itself(text: str) -> None:
    result = shown(text)
    assert_safe(result, MAX_SHOWN_CHARS)
    if not result.endswith(" chars)"):
        assert json.loads(result) == text


@PROPERTY
@given(ANY_TEXT, st.integers(48, 300))
def test_a_cut_string_shows_its_start_and_its_length(text: str, limit: int) -> None:
    long = text + "x" * 400
    result = shown(long, limit)
    assert_safe(result, limit)
    assert result.endswith(f'..." ({len(long):,} chars)')
    assert result.startswith('"')


@PROPERTY
@given(ANY_TEXT, st.integers(32, 2000))
def test_clip_is_bounded_and_keeps_short_text(text: str, limit: int) -> None:
    result = clip(text, limit)
    assert_safe(result, limit)
    if len(text) <= limit and not any(0xD800 <= ord(c) <= 0xDFFF for c in text):
        assert result == text


def test_clip_says_how_long_the_text_was() -> None:
    result = clip("e" * 70_076)
    assert len(result) == MAX_DETAIL_CHARS
    assert result.endswith("... (70,076 chars)")
    assert clip("fine") == "fine"
    assert clip("line\nbreaks stay") == "line\nbreaks stay"


def test_lone_surrogates_are_escaped_everywhere() -> None:
    assert shown("\ud800") == '"\\ud800"'
    assert clip("a\udfffb") == "a\\udfffb"
    assert exception_text(ValueError("\ud800")) == "ValueError: \\ud800"


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("role", '"role"'),
        ('say "hi"\n', '"say \\"hi\\"\\n"'),
        ("\u202eevil", '"\\u202eevil"'),  # a bidirectional override cannot reorder a log
        ("\U000e0001", '"\\udb40\\udc01"'),  # non-printable outside the BMP: a JSON pair
        ("日本語 😀", '"日本語 😀"'),
        (7, "7"),
        (-2.5, "-2.5"),
        (None, "None"),
        (True, "True"),
        ((1,), "(1,)"),
        ({(1,): 2}, "{(1,): 2}"),
        (b"\x00ab", "b'\\x00ab'"),
        ([1, 2, 3, 4, 5, 6, 7], "[1, 2, 3, 4, 5, 6, ... (7 items)]"),
        ({}, "{}"),
        ([[[["deep"]]]], "[[[...]]]"),
    ],
)
def test_how_values_are_shown(value: object, expected: str) -> None:
    assert shown(value) == expected


@pytest.mark.parametrize("digits", [4_301, 5_000, 1_000_000])
def test_integers_too_long_for_str_are_described_not_converted(digits: int) -> None:
    value = 10 ** (digits - 1)
    assert shown(value) == f"an integer of about {digits - 1:,} digits"
    assert shown(-value) == f"a negative integer of about {digits - 1:,} digits"
    assert exception_text(ValueError(value)) == "ValueError: (its message cannot be shown)"


def test_integers_are_printed_whatever_the_interpreters_digit_limit() -> None:
    old = sys.get_int_max_str_digits()
    sys.set_int_max_str_digits(640)  # the smallest limit Python allows
    try:
        assert shown(10**179) == "1" + "0" * 179
        assert shown(10**639).startswith("an integer of about")
    finally:
        sys.set_int_max_str_digits(old)


def test_huge_containers_are_never_walked_whole() -> None:
    class Endless:
        """An iterable that never ends: showing it must stop early."""

        def __iter__(self) -> Iterator[int]:
            n = 0
            while True:
                yield n
                n += 1

        def __repr__(self) -> str:
            return "<Endless>"

    big = set(range(1_000_000))
    assert shown(big).endswith("... (1,000,000 items)}")
    assert shown(dict.fromkeys(range(1_000_000))).endswith("... (1,000,000 items)}")
    assert shown(Endless()) == "<Endless>"


def test_a_repr_that_fails_or_floods_is_contained() -> None:
    class Broken:
        def __repr__(self) -> str:
            raise RuntimeError("no")

    class Flood:
        def __repr__(self) -> str:
            return "\ud800" * 100_000

    assert shown(Broken()) == "<Broken object>"
    assert_safe(shown(Flood()), MAX_SHOWN_CHARS)


def test_a_long_path_keeps_both_ends() -> None:
    path = "$" + "[0]" * 100_000 + ".text"
    result = clip_path(path)
    assert len(result) <= MAX_PATH_CHARS
    assert result.startswith("$[0][0]") and result.endswith("[0].text")
    assert "chars)..." in result
    assert clip_path("$.messages[0].role") == "$.messages[0].role"


def test_every_error_message_is_bounded_by_the_base_class() -> None:
    error = AIChatError("\ud800" + "x" * 1_000_000)
    assert_safe(str(error), MAX_MESSAGE_CHARS)
    assert str(error).endswith("... (1,000,001 chars)")
    assert str(AIChatError("short")) == "short"


def test_strategies_cover_what_they_claim() -> None:
    # The property tests above are only as good as their inputs: lone surrogates and
    # huge ints must be reachable.
    seen: list[Any] = []

    @settings(max_examples=200, deadline=None, derandomize=True, database=None)
    @given(ANY_TEXT)
    def collect(text: str) -> None:
        seen.append(text)

    collect()
    assert any(any(0xD800 <= ord(c) <= 0xDFFF for c in t) for t in seen)
