"""Hostile input: the default detectors run in linear time whatever the text.

Two guarantees, checked separately: every repeat in the built-in patterns is bounded
(so no pattern can backtrack without limit), and large adversarial texts finish well
inside a generous deadline (a bound on the wait, never a timed assertion). The costly
step, libphonenumber's validation, is counted.
"""

from __future__ import annotations

import importlib
import random
import re
from collections.abc import Callable, Iterator
from typing import Any, cast

import anyio
import anyio.to_thread
import pytest

from ai_chat.history import (
    Redactor,
    _detector,  # pyright: ignore[reportPrivateUsage]
    _phones,
    _pii,
    _redaction,  # pyright: ignore[reportPrivateUsage]
    _secrets,
    default_detectors,
)

pytestmark = pytest.mark.anyio

_parser: Any = importlib.import_module("re._parser")
_constants: Any = importlib.import_module("re._constants")

MB = 1_000_000
REDACTOR = Redactor()


def built_in_patterns() -> Iterator[re.Pattern[str]]:
    for detector in default_detectors():
        if isinstance(detector, _detector.PatternDetector):
            yield detector.pattern
    for module in (_phones, _pii, _secrets, _redaction):
        for value in vars(module).values():
            if isinstance(value, re.Pattern):
                yield cast("re.Pattern[str]", value)


def unbounded_repeats(pattern: re.Pattern[str]) -> list[str]:
    """The repeats in ``pattern`` whose maximum is unlimited."""
    found: list[str] = []
    repeats = {_constants.MAX_REPEAT, _constants.MIN_REPEAT, _constants.POSSESSIVE_REPEAT}

    def walk(items: Any) -> None:
        for op, argument in items:
            if op in repeats:
                low, high, inner = argument
                if high == _constants.MAXREPEAT:
                    found.append(f"{op} {{{low},}}")
                walk(inner)
            elif op is _constants.SUBPATTERN:
                walk(argument[-1])
            elif op is _constants.BRANCH:
                for branch in argument[1]:
                    walk(branch)
            elif op in (_constants.ASSERT, _constants.ASSERT_NOT):
                walk(argument[1])
            elif op is _constants.ATOMIC_GROUP:
                walk(argument)
            elif op is _constants.GROUPREF_EXISTS:
                walk(argument[1])
                if argument[2] is not None:
                    walk(argument[2])

    walk(_parser.parse(pattern.pattern, pattern.flags))
    return found


def test_the_check_sees_an_unbounded_repeat() -> None:
    assert unbounded_repeats(re.compile(r"a(?:b|c+)d")) != []
    assert unbounded_repeats(re.compile(r"a(?=x*)")) != []
    assert unbounded_repeats(re.compile(r"a{1,5}(?>b{2})")) == []


def test_every_built_in_pattern_is_bounded() -> None:
    patterns = list(built_in_patterns())
    assert len(patterns) >= 20
    for pattern in patterns:
        assert unbounded_repeats(pattern) == [], pattern.pattern


def _random(alphabet: str, size: int) -> Callable[[], str]:
    return lambda: "".join(random.Random(size).choices(alphabet, k=size))


# Built when a test runs, not when the module is collected.
HOSTILE: dict[str, Callable[[], str]] = {
    "letters-5MB": lambda: "a" * (5 * MB),
    "words-5MB": _random("abcdefghij klmnop\n", 5 * MB),
    "at-signs": lambda: "a@" * (MB // 2),
    "almost-addresses": lambda: "a@a." * (MB // 4),
    "long-local-parts": lambda: ("a" * 70 + "@") * (MB // 71),
    "dotted-local-parts": lambda: ("a." * 40 + "@") * (MB // 81),
    "colons": lambda: ":" * MB,
    "hex-and-colons": _random("0123456789abcdef:", MB),
    "dotted-digits": lambda: "1." * (MB // 2),
    "dashed-digits": lambda: "1-" * (MB // 2),
    "plus-digits": lambda: "+1 " * (MB // 3),
    "digit-soup": _random("0123456789 -().+", MB),
    "card-groups": lambda: "4111 " * (MB // 5),
    "key-prefixes": lambda: "sk-ant-" * (MB // 7),
    "jwt-headers": lambda: ("eyJ" + "a" * 100 + ".") * (MB // 104),
    "pem-begins": lambda: "-----BEGIN PRIVATE KEY-----\n" * (MB // 28),
    "pem-wrong-ends": lambda: (
        "-----BEGIN RSA PRIVATE KEY-----\n-----END EC PRIVATE KEY-----\n" * (MB // 62)
    ),
    "bearers": lambda: "Authorization: Bearer " * (MB // 22),
    "placeholders-and-addresses": lambda: "[EMAIL_1] a@b.co " * (MB // 17),
}


@pytest.mark.slow
@pytest.mark.parametrize("name", list(HOSTILE))
async def test_hostile_text_is_redacted_within_a_wide_bound(name: str) -> None:
    text = HOSTILE[name]()
    # Each takes well under two seconds on an idle laptop; a backtracking pattern would
    # take hours. The thread is abandoned if the bound is hit, so a regression fails.
    with anyio.fail_after(120):
        redacted = await anyio.to_thread.run_sync(
            REDACTOR.redact_text, text, abandon_on_cancel=True
        )
    if name.endswith("5MB"):
        assert redacted is text  # nothing found: the text itself, not a copy


def validations(text: str) -> int:
    _phones._phone_key.cache_clear()  # pyright: ignore[reportPrivateUsage]
    REDACTOR.redact_text(text)
    return _phones._phone_key.cache_info().misses  # pyright: ignore[reportPrivateUsage]


def test_numeric_tool_output_costs_no_phone_validation() -> None:
    rng = random.Random(3)
    decimals = " ".join(f"{rng.random():.4f}" for _ in range(20_000))
    integers = " ".join(str(rng.randint(0, 99_999)) for _ in range(20_000))
    table = "\n".join(",".join(str(rng.randint(0, 10**9)) for _ in range(8)) for _ in range(2_000))
    assert validations(decimals) == 0
    assert validations(integers) == 0
    assert validations(table) == 0


def test_phone_validations_grow_linearly_with_phone_shaped_text() -> None:
    def soup(size: int, seed: int) -> str:
        rng = random.Random(seed)
        return "".join(rng.choice("0123456789 -().+") for _ in range(size))

    small, large = validations(soup(100_000, 1)), validations(soup(400_000, 2))
    # About one validation per 180 characters of digits and punctuation (measured: 566
    # and 2,032), and four times the text costs about four times as many.
    assert 0 < small <= 100_000 // 50
    assert large <= 5 * small
