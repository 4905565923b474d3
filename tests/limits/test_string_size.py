"""The one JSON string-size function, against JSON text actually written."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ai_chat.limits import json_size
from ai_chat.limits._walk import string_size

# Any text JSON can hold: every code point but the lone surrogates.
TEXT = st.text(st.characters(exclude_categories=["Cs"]), max_size=200)


def utf16_units(text: str) -> int:
    return len(text.encode("utf-16-le")) // 2


@given(TEXT)
def test_string_size_is_the_length_of_the_written_json(text: str) -> None:
    # Python writes the same escapes as JSON.stringify: \b \t \n \f \r, \" and \\ take two
    # characters, the other controls six.
    written = json.dumps(text, ensure_ascii=False)
    assert string_size(text) == utf16_units(written) == json_size(text)


@pytest.mark.parametrize(
    ("text", "size"),
    [("", 2), ("abc", 5), ('"', 4), ("\n", 4), ("\x00", 8), ("é", 3), ("😀", 4)],
)
def test_string_size_by_hand(text: str, size: int) -> None:
    assert string_size(text) == size


def test_a_lone_surrogate_cannot_be_measured() -> None:
    with pytest.raises(UnicodeEncodeError):
        string_size("a\ud800")
