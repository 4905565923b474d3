"""Redaction: placeholders, sessions, custom rules and detectors, and messages."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from collections.abc import Iterator

import pytest

from ai_chat import ConfigurationError, ValidationError, is_part, normalize_messages
from ai_chat.history import (
    Finding,
    Redactor,
    Rule,
    default_detectors,
    redact_message,
    redact_messages,
    redact_text,
)
from ai_chat.limits import FrozenDict, JSONLimits
from ai_chat.types import Message

# --- text ------------------------------------------------------------------------------


def test_the_issues_false_positives_stay_and_its_misses_are_found() -> None:
    # The seed's rules redact the first two as phone numbers and miss the rest.
    assert redact_text("ids 1607635102 and 2024-0001234") == "ids 1607635102 and 2024-0001234"
    assert (
        redact_text(
            "card 4111 1111 1111 1111, SSN 536-22-1234, +44 20 7946 0958, "
            "sk-ant-api03-AbCdEfGhIjKlMnOpQrSt0123456789, ghp_aB3dE6gH9jK2mN5pQ8sT1vW4yZ7bC0eF3hI6, "
            "AKIAIOSFODNN7EXAMPLE, Authorization: Bearer AbC123dEf456GhI789jKl0"
        )
        == "card [CARD_1], SSN [SSN_1], [PHONE_1], [ANTHROPIC_KEY_1], [GITHUB_TOKEN_1], "
        "[AWS_ACCESS_KEY_1], Authorization: Bearer [BEARER_TOKEN_1]"
    )


def test_placeholders_are_stable_per_value_and_numbered_per_label() -> None:
    text = (
        "alice@example.com wrote to bob@example.com; ALICE@example.com replied; "
        "call (415) 555-2671 or +1 415 555 2671 or 212-555-7890"
    )
    assert redact_text(text) == (
        "[EMAIL_1] wrote to [EMAIL_2]; [EMAIL_1] replied; call [PHONE_1] or [PHONE_1] or [PHONE_2]"
    )


def test_the_one_call_forms_are_pure() -> None:
    text = "bob@example.com then alice@example.com"
    assert redact_text(text) == redact_text(text) == "[EMAIL_1] then [EMAIL_2]"


def test_a_session_numbers_across_calls() -> None:
    session = Redactor().session()
    assert session.redact_text("from alice@example.com") == "from [EMAIL_1]"
    assert session.redact_text("to bob@example.com") == "to [EMAIL_2]"
    assert session.redact_text("cc alice@example.com") == "cc [EMAIL_1]"


def test_placeholders_already_present_keep_their_numbers() -> None:
    # A history redacted before, with new text added since: the new address must not
    # become [EMAIL_1], which already stands for another.
    assert redact_text("[EMAIL_1] wrote; now carol@example.com") == (
        "[EMAIL_1] wrote; now [EMAIL_2]"
    )
    history = normalize_messages(
        [
            {
                "id": "1",
                "role": "user",
                "parts": [{"type": "text", "text": "new: dan@example.com"}],
            },
            {"id": "2", "role": "user", "parts": [{"type": "text", "text": "old: [EMAIL_7]"}]},
        ]
    )
    redacted = redact_messages(history)
    assert redacted[0]["parts"][0] == {"type": "text", "text": "new: [EMAIL_8]"}


def test_redaction_is_idempotent_on_the_corpus_samples() -> None:
    text = "mail alice@example.com, key sk-proj-abc123DEF456ghi789JKL012mno345, ip 10.0.0.1"
    once = redact_text(text)
    assert once == "mail [EMAIL_1], key [OPENAI_KEY_1], ip [IP_ADDRESS_1]"
    assert redact_text(once) == once


def test_find_reports_non_overlapping_findings_in_order() -> None:
    text = "Authorization: Bearer sk-proj-abc123DEF456ghi789JKL012mno345 from alice@example.com"
    findings = Redactor().find(text)
    assert [(f.label, text[f.start : f.end]) for f in findings] == [
        ("OPENAI_KEY", "sk-proj-abc123DEF456ghi789JKL012mno345"),
        ("EMAIL", "alice@example.com"),
    ]
    assert findings[1].key == "alice@example.com"


def test_phone_regions_add_national_formats() -> None:
    text = "UK 020 7946 0958, US (415) 555-2671"
    assert redact_text(text) == "UK 020 7946 0958, US [PHONE_1]"
    both = Redactor(default_detectors(phone_regions=("US", "GB")))
    assert both.redact_text(text) == "UK [PHONE_1], US [PHONE_2]"
    # One number, two ways: the same placeholder.
    assert both.redact_text("020 7946 0958 = +44 20 7946 0958") == "[PHONE_1] = [PHONE_1]"


@pytest.mark.parametrize("regions", [(), ("XX",), ["US"], ("us",)])
def test_unknown_phone_regions_are_configuration_errors(regions: object) -> None:
    with pytest.raises(ConfigurationError) as caught:
        default_detectors(phone_regions=regions)  # pyright: ignore[reportArgumentType]
    assert caught.value.parameter == "phone_regions"


# --- custom rules and detectors ---------------------------------------------------------


def test_a_rule_adds_a_label() -> None:
    redactor = Redactor([*default_detectors(), Rule(r"\bORD-[0-9]{6,12}\b", "ORDER_ID")])
    assert redactor.redact_text("ORD-123456 for bob@example.com, ORD-123456 again") == (
        "[ORDER_ID_1] for [EMAIL_1], [ORDER_ID_1] again"
    )
    assert Rule(r"x+", "X").name == "x"


def test_a_rule_can_redact_one_group_and_validate() -> None:
    rule = Rule(
        re.compile(r"password=(\S{1,64})"), "PASSWORD", group=1, validate=lambda s: s != "***"
    )
    redactor = Redactor([rule])
    assert redactor.redact_text("password=hunter2 password=*** password=hunter2") == (
        "password=[PASSWORD_1] password=*** password=[PASSWORD_1]"
    )
    named = Redactor([Rule(r"pin (?P<pin>[0-9]{4})", "PIN", group="pin")])
    assert named.redact_text("pin 1234") == "pin [PIN_1]"


def test_zero_width_matches_and_absent_groups_redact_nothing() -> None:
    redactor = Redactor([Rule(r"(?=x)|a(b)?", "B", group=1)])
    assert redactor.redact_text("xa ab") == "xa a[B_1]"


@pytest.mark.parametrize(
    ("kwargs", "parameter"),
    [
        ({"pattern": "x", "label": "lower"}, "label"),
        ({"pattern": "x", "label": "A" * 41}, "label"),
        ({"pattern": "x", "label": "SPACE BAR"}, "label"),
        ({"pattern": "(", "label": "X"}, "pattern"),
        ({"pattern": "x*", "label": "X"}, "pattern"),
        ({"pattern": "x", "label": "X", "group": 1}, "group"),
        ({"pattern": "(x)", "label": "X", "group": "name"}, "group"),
        ({"pattern": 5, "label": "X"}, "pattern"),
    ],
)
def test_bad_rules_are_configuration_errors(kwargs: dict[str, object], parameter: str) -> None:
    with pytest.raises(ConfigurationError) as caught:
        Rule(**kwargs)  # pyright: ignore[reportArgumentType]
    assert caught.value.parameter == parameter


class Initials:
    """A custom detector: two capital letters with dots, such as "J.D."."""

    name = "initials"

    def find(self, text: str, /) -> Iterator[Finding]:
        for match in re.finditer(r"\b[A-Z]\.[A-Z]\.", text):
            yield Finding(match.start(), match.end(), "INITIALS", match.group().upper())


def test_a_custom_detector_plugs_in_and_overlaps_resolve_by_position_length_and_order() -> None:
    redactor = Redactor([Initials(), *default_detectors()])
    assert redactor.redact_text("J.D. and J.D. and alice@example.com") == (
        "[INITIALS_1] and [INITIALS_1] and [EMAIL_1]"
    )
    # The longest finding at a position wins; at equal length the first detector.
    first = Redactor([Rule("abc", "SHORT"), Rule("abcdef", "LONG"), Rule("abcdef", "SAME")])
    assert first.redact_text("abcdef") == "[LONG_1]"
    assert Redactor([Rule("bcd", "LATER"), Rule("abc", "EARLIER")]).redact_text("abcd") == (
        "[EARLIER_1]d"
    )


class Broken:
    def __init__(self, finding: object) -> None:
        self.name = "broken"
        self.finding = finding

    def find(self, text: str, /) -> list[Finding]:
        return [self.finding]  # pyright: ignore[reportReturnType]


@pytest.mark.parametrize(
    "finding",
    [
        Finding(0, 0, "X"),
        Finding(3, 2, "X"),
        Finding(0, 99, "X"),
        Finding(-1, 2, "X"),
        Finding(0, 2, "lower"),
        Finding(0, 2, "X", 5),  # pyright: ignore[reportArgumentType]
        (0, 2, "X"),
    ],
)
def test_a_custom_detectors_malformed_findings_are_errors(finding: object) -> None:
    with pytest.raises(ConfigurationError, match="broken"):
        Redactor([Broken(finding)]).redact_text("hello")


def test_redactor_rejects_what_is_not_a_detector() -> None:
    with pytest.raises(ConfigurationError) as caught:
        Redactor(["email"])  # pyright: ignore[reportArgumentType]
    assert caught.value.parameter == "detectors"


def test_importing_the_package_does_not_load_libphonenumber() -> None:
    probe = "import ai_chat.history, sys; print('phonenumbers' in sys.modules)"
    result = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, timeout=120, check=True
    )
    assert result.stdout.strip() == "False"


# --- messages --------------------------------------------------------------------------

SIGNED = [
    {"anthropic": {"signature": "EqQBCkgIARABGAIiQL"}},
    {"anthropic": {"redactedData": "EmwKAhgBEgy3va3pzix"}},
    {"openai": {"itemId": "rs_123", "reasoningEncryptedContent": "gAAAAB"}},
    {"openai": {"itemId": "rs_123"}},
    {"gemini": {"thoughtSignature": "CiQB0e2Kb"}},
    {"bedrock": {"signature": "x"}},
    {"other": {"encryptedContent": "x"}},
]


def history() -> tuple[Message, ...]:
    return normalize_messages(
        [
            {
                "id": "m1",
                "role": "system",
                "parts": [{"type": "text", "text": "Support for alice@example.com"}],
            },
            {
                "id": "m2",
                "role": "user",
                "metadata": {"email": "alice@example.com", "n": 3, "ok": True},
                "parts": [
                    {"type": "text", "text": "I am alice@example.com, call (415) 555-2671"},
                    {
                        "type": "file",
                        "mediaType": "application/pdf",
                        "url": "https://files.example.com/u/alice@example.com/scan.pdf",
                        "filename": "alice@example.com-passport.pdf",
                    },
                    {"type": "data-profile", "id": "p1", "data": {"phone": "+1 415 555 2671"}},
                ],
            },
            {
                "id": "m3",
                "role": "assistant",
                "parts": [
                    {"type": "reasoning", "text": "The user alice@example.com wants a refund."},
                    {
                        "type": "reasoning",
                        "text": "alice@example.com again",
                        "providerMetadata": SIGNED[0],
                    },
                    {
                        "type": "tool-call",
                        "toolCallId": "call-alice@example.com",
                        "toolName": "lookup",
                        "input": {
                            "email": "alice@example.com",
                            "limit": 5,
                            "tags": ["x", "bob@example.com"],
                        },
                        "providerMetadata": {"gemini": {"thoughtSignature": "alice@example.com"}},
                    },
                    {
                        "type": "text",
                        "text": "Looking up alice@example.com",
                        "providerMetadata": {"openai": {"itemId": "msg_1"}},
                        "x-extra": "bob@example.com",
                    },
                ],
            },
            {
                "id": "m4",
                "role": "tool",
                "parts": [
                    {
                        "type": "tool-result",
                        "toolCallId": "call-alice@example.com",
                        "toolName": "lookup",
                        "output": [{"card": "4111 1111 1111 1111", "email": "bob@example.com"}],
                        "isError": False,
                    }
                ],
            },
        ]
    )


def test_messages_are_redacted_where_they_hold_text_and_kept_where_they_hold_ids() -> None:
    redacted = redact_messages(history())
    assert json.loads(json.dumps(redacted)) == [
        {
            "id": "m1",
            "role": "system",
            "parts": [{"type": "text", "text": "Support for [EMAIL_1]"}],
        },
        {
            "id": "m2",
            "role": "user",
            "metadata": {"email": "[EMAIL_1]", "n": 3, "ok": True},
            "parts": [
                {"type": "text", "text": "I am [EMAIL_1], call [PHONE_1]"},
                {
                    "type": "file",
                    "mediaType": "application/pdf",
                    "url": "https://files.example.com/u/alice@example.com/scan.pdf",
                    "filename": "[EMAIL_1]-passport.pdf",
                },
                {"type": "data-profile", "id": "p1", "data": {"phone": "[PHONE_1]"}},
            ],
        },
        {
            "id": "m3",
            "role": "assistant",
            "parts": [
                {"type": "reasoning", "text": "The user [EMAIL_1] wants a refund."},
                {
                    "type": "tool-call",
                    "toolCallId": "call-alice@example.com",
                    "toolName": "lookup",
                    "input": {"email": "[EMAIL_1]", "limit": 5, "tags": ["x", "[EMAIL_2]"]},
                    "providerMetadata": {"gemini": {"thoughtSignature": "alice@example.com"}},
                },
                {
                    "type": "text",
                    "text": "Looking up [EMAIL_1]",
                    "providerMetadata": {"openai": {"itemId": "msg_1"}},
                    "x-extra": "[EMAIL_2]",
                },
            ],
        },
        {
            "id": "m4",
            "role": "tool",
            "parts": [
                {
                    "type": "tool-result",
                    "toolCallId": "call-alice@example.com",
                    "toolName": "lookup",
                    "output": [{"card": "[CARD_1]", "email": "[EMAIL_2]"}],
                    "isError": False,
                }
            ],
        },
    ]
    assert normalize_messages(redacted) == redacted
    assert all(type(message) is FrozenDict for message in redacted)


@pytest.mark.parametrize("metadata", SIGNED, ids=lambda m: "-".join(m[next(iter(m))]))
def test_signed_reasoning_is_dropped_never_rewritten(metadata: dict[str, object]) -> None:
    message = normalize_messages(
        [
            {
                "id": "a",
                "role": "assistant",
                "parts": [
                    {"type": "reasoning", "text": "bob@example.com", "providerMetadata": metadata},
                    {"type": "text", "text": "done"},
                ],
            }
        ]
    )[0]
    assert redact_message(message) == {
        "id": "a",
        "role": "assistant",
        "parts": ({"type": "text", "text": "done"},),
    }


def test_reasoning_with_unsigned_provider_metadata_is_redacted() -> None:
    message = normalize_messages(
        [
            {
                "id": "a",
                "role": "assistant",
                "parts": [
                    {
                        "type": "reasoning",
                        "text": "bob@example.com",
                        "providerMetadata": {"openai": {"reasoningSummaryIndex": 0}},
                    }
                ],
            }
        ]
    )[0]
    part = redact_message(message)["parts"][0]
    assert is_part(part, "reasoning")
    assert part["text"] == "[EMAIL_1]"


def test_dropping_every_part_leaves_a_valid_assistant_message() -> None:
    message = normalize_messages(
        [
            {
                "id": "a",
                "role": "assistant",
                "parts": [{"type": "reasoning", "text": "", "providerMetadata": SIGNED[1]}],
            }
        ]
    )
    redacted = redact_messages(message)
    assert redacted == ({"id": "a", "role": "assistant", "parts": ()},)
    assert normalize_messages(redacted) == redacted


def test_the_input_is_not_changed_and_nothing_is_copied_needlessly() -> None:
    original = history()
    before = json.dumps(original)
    redact_messages(original)
    assert json.dumps(original) == before
    quiet = normalize_messages(
        [{"id": "q", "role": "user", "parts": [{"type": "text", "text": "hi"}]}]
    )
    assert redact_messages(quiet) == quiet


def test_an_iterator_of_messages_is_read_whole() -> None:
    messages = history()
    assert redact_messages(iter(messages)) == redact_messages(messages)  # pyright: ignore[reportArgumentType]


def test_deeply_nested_tool_input_does_not_exhaust_the_stack() -> None:
    depth = 20_000
    value: object = "bob@example.com"
    for _ in range(depth):
        value = [value]
    message = normalize_messages(
        [
            {
                "id": "a",
                "role": "assistant",
                "parts": [
                    {"type": "tool-call", "toolCallId": "c", "toolName": "t", "input": value}
                ],
            }
        ],
        limits=JSONLimits(max_depth=depth + 10, max_values=depth * 3),
    )[0]
    part = redact_message(message)["parts"][0]
    assert is_part(part, "tool-call")
    inner = part["input"]
    for _ in range(depth):
        assert isinstance(inner, tuple) and len(inner) == 1
        inner = inner[0]
    assert inner == "[EMAIL_1]"


@pytest.mark.parametrize(
    ("messages", "path"),
    [
        (["not a message"], "$[0]"),
        ([{"id": "a", "role": "user"}], "$[0].parts"),
        ([{"id": "a", "role": "user", "parts": ["x"]}], "$[0].parts[0]"),
        ([{"id": "a", "role": "user", "parts": [{"text": "x"}]}], "$[0].parts[0].type"),
    ],
)
def test_what_is_not_a_message_is_a_validation_error(messages: list[object], path: str) -> None:
    with pytest.raises(ValidationError) as caught:
        redact_messages(messages)  # pyright: ignore[reportArgumentType]
    assert caught.value.path == path
