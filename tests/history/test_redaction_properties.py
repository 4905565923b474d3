"""Properties of redaction over random texts and histories (hypothesis)."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import cast

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from ai_chat import normalize_messages
from ai_chat.history import Redactor, redact_messages, redact_text
from ai_chat.types import Message

# Each property runs 200 examples: several seconds.
pytestmark = pytest.mark.slow

PLACEHOLDER = re.compile(r"\[[A-Z][A-Z0-9_]*_[1-9][0-9]*\]")
PROPERTY = settings(
    max_examples=200,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.too_slow],
)

# Values each detector finds on its own, with the label it gives. Two spellings of one
# value (the same address in capitals, the same number in two formats) share a key.
VALUES: dict[str, tuple[str, str]] = {
    "alice@example.com": ("EMAIL", "alice@example.com"),
    "ALICE@example.com": ("EMAIL", "alice@example.com"),
    "bob.smith+x@mail.example.org": ("EMAIL", "bob.smith+x@mail.example.org"),
    "(415) 555-2671": ("PHONE", "+14155552671"),
    "+1 415 555 2671": ("PHONE", "+14155552671"),
    "+44 20 7946 0958": ("PHONE", "+442079460958"),
    "4111 1111 1111 1111": ("CARD", "4111111111111111"),
    "4111111111111111": ("CARD", "4111111111111111"),
    "536-22-1234": ("SSN", "536221234"),
    "10.0.0.1": ("IP_ADDRESS", "10.0.0.1"),
    "2001:db8::1": ("IP_ADDRESS", "2001:db8::1"),
    "sk-proj-abc123DEF456ghi789JKL012mno345": ("OPENAI_KEY", "openai"),
    "ghp_aB3dE6gH9jK2mN5pQ8sT1vW4yZ7bC0eF3hI6": ("GITHUB_TOKEN", "github"),
    "AKIAIOSFODNN7EXAMPLE": ("AWS_ACCESS_KEY", "aws"),
}
FRAGMENTS = st.one_of(
    st.sampled_from(list(VALUES)),
    st.sampled_from(["[EMAIL_1]", "[PHONE_3]", "[CARD_12]", "[X_1]", "[", "]", "_1]"]),
    st.sampled_from([" ", "\n", ", ", "-", ".", "@", "+", ":", "/", "(", ")", "0", "7"]),
    st.text(max_size=12),
    st.from_regex(r"[0-9 .\-()+]{1,16}", fullmatch=True),
    st.from_regex(r"[a-z0-9._%+-]{1,8}@[a-z0-9-]{1,8}\.[a-z]{2,4}", fullmatch=True),
)
TEXTS = st.lists(FRAGMENTS, max_size=20).map("".join)


@PROPERTY
@given(TEXTS)
def test_redaction_is_idempotent(text: str) -> None:
    once = redact_text(text)
    assert redact_text(once) == once


@PROPERTY
@given(st.lists(st.sampled_from(list(VALUES)), min_size=1, max_size=12))
def test_one_placeholder_per_value_and_one_value_per_placeholder(chosen: list[str]) -> None:
    redacted = redact_text(" ; ".join(chosen)).split(" ; ")
    assert len(redacted) == len(chosen)
    by_key: dict[tuple[str, str], str] = {}
    for value, placeholder in zip(chosen, redacted, strict=True):
        label, key = VALUES[value]
        assert placeholder.startswith(f"[{label}_") and placeholder.endswith("]")
        assert by_key.setdefault((label, key), placeholder) == placeholder
    assert len(set(by_key.values())) == len(by_key)
    # Numbered in order of first appearance, per label.
    for label in {label for label, _ in by_key}:
        numbers = [int(p[len(label) + 2 : -1]) for (lab, _), p in by_key.items() if lab == label]
        assert numbers == list(range(1, len(numbers) + 1))


@PROPERTY
@given(st.lists(TEXTS, min_size=1, max_size=5))
def test_a_session_is_the_one_call_form_over_the_joined_texts(texts: list[str]) -> None:
    # Redacting texts one by one in a session numbers them as one text would be (when
    # they hold no placeholders yet: a session cannot take back a number it gave out
    # before it saw a later text's [EMAIL_1]; redact_messages reserves them first).
    assume(PLACEHOLDER.search("".join(texts)) is None)
    session = Redactor().session()
    pieces = [session.redact_text(text) for text in texts]
    separator = "\n\u2028\n"  # nothing matches across it
    assert separator.join(pieces) == redact_text(separator.join(texts))


# --- histories -------------------------------------------------------------------------

STRINGS = st.one_of(TEXTS, st.sampled_from(list(VALUES)))
JSON = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**53) + 1, 2**53 - 1) | STRINGS,
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.dictionaries(st.sampled_from(["a", "email", "n", "x y", "id"]), inner, max_size=4)
    ),
    max_leaves=12,
)
SIGNATURES = st.sampled_from(
    [
        {"anthropic": {"signature": "c2ln"}},
        {"openai": {"itemId": "rs_1", "reasoningEncryptedContent": "ZW5j"}},
        {"gemini": {"thoughtSignature": "dGhvdWdodA=="}},
    ]
)
IDS = st.text(st.sampled_from("abc123-_@."), min_size=1, max_size=8)


Strategy = st.SearchStrategy[object]


def record(
    required: dict[str, Strategy], optional: dict[str, Strategy] | None = None
) -> st.SearchStrategy[dict[str, object]]:
    return st.fixed_dictionaries(required, optional=optional or {})


def text_part(kind: str) -> st.SearchStrategy[dict[str, object]]:
    return record({"type": st.just(kind), "text": STRINGS})


USER_PARTS = st.one_of(
    text_part("text"),
    record(
        {"type": st.just("file"), "mediaType": st.just("image/png"), "url": STRINGS.filter(bool)},
        {"filename": STRINGS},
    ),
    record({"type": st.just("data-note"), "data": JSON}, {"id": IDS}),
)
ASSISTANT_PARTS = st.one_of(
    text_part("text"),
    text_part("reasoning"),
    record({"type": st.just("reasoning"), "text": STRINGS, "providerMetadata": SIGNATURES}),
    record({"type": st.just("tool-call"), "toolCallId": IDS, "toolName": IDS, "input": JSON}),
)
TOOL_PARTS = record(
    {"type": st.just("tool-result"), "toolCallId": IDS, "toolName": IDS, "output": JSON},
    {"isError": st.booleans()},
)
MESSAGES = st.one_of(
    record(
        {"role": st.just("user"), "parts": st.lists(USER_PARTS, min_size=1, max_size=3)},
        {"metadata": st.dictionaries(st.sampled_from(["a", "b"]), JSON, max_size=2)},
    ),
    record({"role": st.just("assistant"), "parts": st.lists(ASSISTANT_PARTS, max_size=4)}),
    record(
        {"role": st.just("system"), "parts": st.lists(text_part("text"), min_size=1, max_size=2)}
    ),
    record({"role": st.just("tool"), "parts": st.lists(TOOL_PARTS, min_size=1, max_size=2)}),
)


@st.composite
def histories(draw: st.DrawFn) -> tuple[Message, ...]:
    messages = draw(st.lists(MESSAGES, max_size=6))
    numbered: list[object] = [
        {"id": f"m{index}-{draw(IDS)}", **cast("dict[str, object]", message)}
        for index, message in enumerate(cast("list[object]", messages))
    ]
    return normalize_messages(numbered)


def skeleton(value: object) -> object:
    """``value`` with every string replaced by "s": its structure alone."""
    if isinstance(value, str):
        return "s"
    if isinstance(value, Mapping):
        return {key: skeleton(child) for key, child in cast("Mapping[str, object]", value).items()}
    if isinstance(value, tuple | list):
        return [skeleton(child) for child in cast("list[object]", value)]
    return value


def kept_parts(message: Message) -> list[Mapping[str, object]]:
    return [
        cast("Mapping[str, object]", part)
        for part in message["parts"]
        if not (part["type"] == "reasoning" and "providerMetadata" in part)
    ]


KEPT_FIELDS = (
    "type",
    "id",
    "toolCallId",
    "toolName",
    "mediaType",
    "url",
    "isError",
    "providerMetadata",
)


@PROPERTY
@given(histories())
def test_redacted_histories_keep_ids_roles_and_structure_and_stay_valid(
    history: tuple[Message, ...],
) -> None:
    redacted = redact_messages(history)
    assert normalize_messages(redacted) == redacted
    assert [m["id"] for m in redacted] == [m["id"] for m in history]
    assert [m["role"] for m in redacted] == [m["role"] for m in history]
    for before, after in zip(history, redacted, strict=True):
        parts = kept_parts(before)
        assert len(after["parts"]) == len(parts)
        for original, copy in zip(parts, after["parts"], strict=True):
            assert list(copy) == list(original)  # same keys, same order
            for name in KEPT_FIELDS:
                assert copy.get(name) == original.get(name)
            assert skeleton(copy) == skeleton(original)
        assert skeleton(after.get("metadata")) == skeleton(before.get("metadata"))


@PROPERTY
@given(histories())
def test_redacting_a_history_twice_changes_nothing(history: tuple[Message, ...]) -> None:
    once = redact_messages(history)
    assert redact_messages(once) == once


def leaves(value: object) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, Mapping):
        value = list(cast("Mapping[str, object]", value).values())
    if isinstance(value, tuple | list):
        return [leaf for child in cast("list[object]", value) for leaf in leaves(child)]
    return []


@PROPERTY
@given(histories())
def test_nothing_detectable_is_left_in_a_redacted_field(history: tuple[Message, ...]) -> None:
    redactor = Redactor()
    for message in redact_messages(history):
        texts = leaves(message.get("metadata"))
        for part in message["parts"]:
            texts += leaves([v for k, v in part.items() if k not in KEPT_FIELDS])
        for text in texts:
            assert redactor.find(text) == (), text
