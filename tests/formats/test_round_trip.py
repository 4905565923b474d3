"""``from_x(to_x(h))`` is ``h`` for everything format ``x`` can express (up to message ids).

Each property draws histories in the format's canonical form (tests/formats/_support.py):
every part kind, file kind and piece of provider metadata the format carries. A second
property holds for any history: converting what ``from_x`` read gives the same payload
again (``to_x`` is a fixed point after one round).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings

from ai_chat.formats import (
    Format,
    from_anthropic,
    from_gemini,
    from_openai_chat,
    from_openai_responses,
    to_anthropic,
    to_gemini,
    to_openai_chat,
    to_openai_responses,
)
from ai_chat.types import Message

from ._support import RICH, expressible, plain, without_ids

Convert = Callable[[Sequence[Message]], Any]

PAIRS: dict[Format, tuple[Convert, Callable[[Any], tuple[Message, ...]]]] = {
    "openai-chat": (to_openai_chat, from_openai_chat),
    "openai-responses": (to_openai_responses, from_openai_responses),
    "anthropic": (to_anthropic, from_anthropic),
    "gemini": (to_gemini, from_gemini),
}

SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def round_trip(fmt: Format, history: Sequence[Message]) -> tuple[Message, ...]:
    to, back = PAIRS[fmt]
    return back(to(history))


@SETTINGS
@given(expressible("openai-chat"))
def test_openai_chat_round_trip(history: tuple[Message, ...]) -> None:
    assert without_ids(round_trip("openai-chat", history)) == without_ids(history)


@SETTINGS
@given(expressible("openai-responses"))
def test_openai_responses_round_trip(history: tuple[Message, ...]) -> None:
    assert without_ids(round_trip("openai-responses", history)) == without_ids(history)


@SETTINGS
@given(expressible("anthropic"))
def test_anthropic_round_trip(history: tuple[Message, ...]) -> None:
    assert without_ids(round_trip("anthropic", history)) == without_ids(history)


@SETTINGS
@given(expressible("gemini"))
def test_gemini_round_trip(history: tuple[Message, ...]) -> None:
    assert without_ids(round_trip("gemini", history)) == without_ids(history)


@pytest.mark.parametrize("fmt", list(PAIRS))
def test_a_second_round_gives_the_same_payload(fmt: Format) -> None:
    to, back = PAIRS[fmt]
    # Chat Completions takes no reasoning back: the rich history's goes with "omit".
    first = to_openai_chat(RICH, reasoning_parts="omit") if fmt == "openai-chat" else to(RICH)
    assert plain(to(back(first))) == plain(first)


def test_message_ids_come_from_new_id() -> None:
    numbers = iter(range(100))
    messages = from_anthropic(to_anthropic(RICH), new_id=lambda: f"n{next(numbers)}")
    assert [m["id"] for m in messages] == [f"n{i}" for i in range(len(messages))]


def test_default_ids_are_unique_across_calls() -> None:
    first = from_gemini(to_gemini(RICH))
    second = from_gemini(to_gemini(RICH))
    ids = [m["id"] for m in (*first, *second)]
    assert len(set(ids)) == len(ids)
