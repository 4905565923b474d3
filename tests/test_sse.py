"""The sans-IO SSE decoder: byte splits anywhere, line ends, UTF-8, bounds, truncation."""

from __future__ import annotations

import itertools
import tracemalloc

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ai_chat import ConfigurationError, LimitExceededError, StreamFormatError
from ai_chat.sse import SSEDecoder, SSEEvent


def decode(body: bytes, *, splits: list[int] | None = None, **limits: int) -> list[SSEEvent]:
    decoder = SSEDecoder(**limits)
    events: list[SSEEvent] = []
    cuts = [0, *(splits or []), len(body)]
    for start, end in itertools.pairwise(cuts):
        events.extend(decoder.feed(body[start:end]))
    events.extend(decoder.close())
    return events


def every_split(body: bytes) -> list[list[SSEEvent]]:
    """Decode with the body cut in two at every position, and in single bytes."""
    results = [decode(body, splits=[i]) for i in range(len(body) + 1)]
    results.append(decode(body, splits=list(range(1, len(body)))))
    return results


TABLE: list[tuple[bytes, list[SSEEvent]]] = [
    (b"data: hello\n\n", [SSEEvent("hello")]),
    (b"data: hello\r\n\r\n", [SSEEvent("hello")]),
    (b"data: hello\r\r", [SSEEvent("hello")]),
    (b"data:no space\n\n", [SSEEvent("no space")]),
    (b"data:  two spaces\n\n", [SSEEvent(" two spaces")]),
    (b"data: a\ndata: b\n\n", [SSEEvent("a\nb")]),
    (b"data: a\r\ndata: b\rdata: c\n\n", [SSEEvent("a\nb\nc")]),
    (b"data\n\n", [SSEEvent("")]),
    (b"data:\ndata:\n\n", [SSEEvent("\n")]),
    (b": comment\n: keep-alive\n\n", []),
    (b"event: ping\n\n", []),  # no data: nothing dispatched
    (b"event: update\ndata: {}\n\n", [SSEEvent("{}", "update")]),
    (b"id: 7\ndata: x\n\ndata: y\n\n", [SSEEvent("x", id="7"), SSEEvent("y", id="7")]),
    (b"retry: 1500\ndata: x\n\n", [SSEEvent("x", retry=1500)]),
    (b"retry: soon\ndata: x\n\n", [SSEEvent("x")]),
    # retry is ASCII digits only (WHATWG); anything else is ignored.
    (b"retry: 0003000\ndata: x\n\n", [SSEEvent("x", retry=3000)]),
    (b"retry: 0\ndata: x\n\n", [SSEEvent("x", retry=0)]),
    (b"retry:\ndata: x\n\n", [SSEEvent("x")]),
    (b"retry: -5\ndata: x\n\n", [SSEEvent("x")]),
    (b"retry: 1e3\ndata: x\n\n", [SSEEvent("x")]),
    (b"retry: 15 \ndata: x\n\n", [SSEEvent("x")]),
    ("retry: \u0661\u0662\ndata: x\n\n".encode(), [SSEEvent("x")]),  # Arabic-Indic digits
    (b"retry: 18446744073709551615\ndata: x\n\n", [SSEEvent("x", retry=2**64 - 1)]),
    (b"retry: 18446744073709551616\ndata: x\n\n", [SSEEvent("x", retry=2**64 - 1)]),
    (b"foo: bar\ndata: x\nbaz\n\n", [SSEEvent("x")]),  # unknown fields are ignored
    (b"\xef\xbb\xbfdata: bom\n\n", [SSEEvent("bom")]),
    (b"data: \xef\xbb\xbfnot a bom here\n\n", [SSEEvent("\ufeffnot a bom here")]),
    ("data: héllo wörld 🙂 日本\n\n".encode(), [SSEEvent("héllo wörld 🙂 日本")]),
    (b"data: [DONE]\n\n", [SSEEvent("[DONE]")]),
    (b"\n\n\ndata: late\n\n", [SSEEvent("late")]),
]


@pytest.mark.parametrize(("body", "expected"), TABLE)
def test_table_at_every_split(body: bytes, expected: list[SSEEvent]) -> None:
    for result in every_split(body):
        assert result == expected


def test_cr_at_a_chunk_end_followed_by_lf_is_one_line_end() -> None:
    # "data: a\r" + "\n\r\n": CRLF split across chunks must not make an extra blank line.
    assert decode(b"data: a\r\n\r\ndata: b\r\n\r\n", splits=[8]) == [SSEEvent("a"), SSEEvent("b")]
    assert decode(b"data: a\r\ndata: b\r\n\r\n", splits=[8]) == [SSEEvent("a\nb")]


@pytest.mark.parametrize(
    "body",
    [b"data: cut", b"data: cut\n", b"event: x\ndata: y\n", b"data: a\n\ndata: b\r\n", b"id: 1\n"],
)
def test_a_truncated_body_is_an_error(body: bytes) -> None:
    for cut in range(len(body) + 1):
        decoder = SSEDecoder()
        decoder.feed(body[:cut])
        decoder.feed(body[cut:])
        with pytest.raises(StreamFormatError, match="ended in the middle"):
            decoder.close()


def test_a_trailing_comment_or_blank_line_is_not_truncation() -> None:
    assert decode(b"data: a\n\n: bye\n") == [SSEEvent("a")]
    assert decode(b"data: a\n\n\n") == [SSEEvent("a")]


@pytest.mark.parametrize(
    "body", [b"data: \xff\n\n", b"data: \xc3\x28\n\n", b"data: \xed\xa0\x80\n\n"]
)
def test_invalid_utf8_is_an_error(body: bytes) -> None:
    with pytest.raises(StreamFormatError, match="not valid UTF-8"):
        decode(body)


def test_a_body_ending_inside_a_utf8_character_is_an_error() -> None:
    decoder = SSEDecoder()
    decoder.feed(b"data: a\n\n\xe6\x97")
    with pytest.raises(StreamFormatError, match="UTF-8"):
        decoder.close()


def test_line_limit_counts_characters_and_is_exact() -> None:
    assert decode(b"data: " + b"x" * 94 + b"\n\n", max_line_chars=100) == [SSEEvent("x" * 94)]
    with pytest.raises(LimitExceededError) as caught:
        decode(b"data: " + b"x" * 95 + b"\n\n", max_line_chars=100)
    assert caught.value.limit == "max_line_chars"


def test_an_endless_line_dripped_byte_by_byte_fails_at_the_bound() -> None:
    decoder = SSEDecoder(max_line_chars=10_000)
    decoder.feed(b"data: ")
    with pytest.raises(LimitExceededError) as caught:
        for _ in range(20_000):
            decoder.feed(b"x")
    assert caught.value.limit == "max_line_chars"
    assert decoder.bytes_seen <= 10_001


def test_event_limit_sums_data_lines() -> None:
    body = b"data: 12345\n" * 4 + b"\n"
    assert decode(body, max_event_chars=23) == [SSEEvent("12345\n12345\n12345\n12345")]
    with pytest.raises(LimitExceededError) as caught:
        decode(body, max_event_chars=22)
    assert caught.value.limit == "max_event_chars"


def test_body_limit_counts_bytes() -> None:
    body = b"data: x\n\n" * 10
    assert len(decode(body, max_body_bytes=len(body))) == 10
    with pytest.raises(LimitExceededError) as caught:
        decode(body, max_body_bytes=len(body) - 1)
    assert caught.value.limit == "max_body_bytes"


def test_an_endless_stream_of_small_events_stops_at_the_body_limit() -> None:
    decoder = SSEDecoder(max_body_bytes=1_000_000)
    with pytest.raises(LimitExceededError):
        for _ in range(1_000_000):
            decoder.feed(b"data: {}\n\n")


def test_memory_stays_bounded_by_the_line_limit() -> None:
    decoder = SSEDecoder(max_line_chars=1_000_000)
    tracemalloc.start()
    try:
        with pytest.raises(LimitExceededError):
            for _ in range(100):
                decoder.feed(b"y" * 65_536)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 4_000_000


@pytest.mark.parametrize("digits", [4_301, 5_000, 4 * 1024 * 1024 - len("retry: ")])
def test_a_retry_of_thousands_of_digits_is_clamped_without_converting_it(digits: int) -> None:
    # int() of over 4,300 digits raises ValueError, and any server can send this line
    # (up to the line limit); leading zeros do not count.
    huge = b"retry: " + b"9" * digits + b"\ndata: x\n\n"
    zeros = b"retry: " + b"0" * (digits - 1) + b"7\ndata: y\n\n"
    body = huge + zeros
    assert decode(body, splits=[3, len(huge) + 5]) == [
        SSEEvent("x", retry=2**64 - 1),
        SSEEvent("y", retry=7),
    ]


def test_limits_are_validated() -> None:
    for bad in (0, -1, 1.5, True):
        with pytest.raises(ConfigurationError):
            SSEDecoder(max_line_chars=bad)  # type: ignore[arg-type]


field_text = st.text(
    alphabet=st.characters(blacklist_categories=("Cs",), blacklist_characters="\r\n"), max_size=20
)


@pytest.mark.slow
@settings(max_examples=300, deadline=None, derandomize=True)
@given(
    events=st.lists(
        st.tuples(
            st.lists(field_text, min_size=1, max_size=3), st.sampled_from(["", "update", "x y"])
        ),
        max_size=6,
    ),
    newline=st.sampled_from([b"\n", b"\r", b"\r\n"]),
    data=st.data(),
)
def test_any_split_of_any_encoding_decodes_the_same(
    events: list[tuple[list[str], str]], newline: bytes, data: st.DataObject
) -> None:
    body = b""
    expected: list[SSEEvent] = []
    for lines, name in events:
        if name:
            body += b"event: " + name.encode() + newline
        for line in lines:
            body += b"data: " + line.encode() + newline
        body += newline
        expected.append(SSEEvent("\n".join(lines), name or "message"))
    splits = sorted(data.draw(st.lists(st.integers(0, len(body)), max_size=8)))
    assert decode(body, splits=splits) == expected
