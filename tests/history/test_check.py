"""check: the general rules and each provider's, against a naive reference and by hand."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ai_chat import ConfigurationError, ValidationError
from ai_chat.history import PROVIDERS, History, IntegrityError, Provider, check

from .strategies import (
    PROPERTY,
    build_history,
    found_by_check,
    fresh,
    reference_problems,
    two_call_messages_then_results,
    view,
)

CALL = {"toolCallId": "c1", "toolName": "lookup", "input": {"id": 1}}
ALL: tuple[Provider | None, ...] = (None, *PROVIDERS)


def codes(
    history: History | list[Any], provider: Provider | None = None
) -> list[tuple[str, str | None, str]]:
    return [(p.code, p.provider, p.path) for p in check(history, provider=provider)]


@settings(PROPERTY, max_examples=300)
@given(st.data())
def test_a_well_behaved_history_has_no_problem_for_any_provider(data: st.DataObject) -> None:
    history = build_history(data, well_behaved=True)
    for provider in ALL:
        assert reference_problems(history, provider) == set()
        assert check(history, provider=provider).ok, provider
    assert check(history, provider="all").ok


@settings(PROPERTY, max_examples=400)
@given(st.data())
def test_any_history_holds_exactly_the_problems_the_rules_describe(data: st.DataObject) -> None:
    history = build_history(data, well_behaved=False)
    union: set[Any] = set()
    for provider in ALL:
        expected = reference_problems(history, provider)
        assert found_by_check(check(history, provider=provider)) == expected, provider
        # ...and a list of the same messages reads the same.
        assert found_by_check(check(list(history.messages), provider=provider)) == expected
        union |= expected
    assert found_by_check(check(history, provider="all")) == union


def test_an_unanswered_call_before_a_user_message_is_a_problem_for_everyone() -> None:
    history = fresh().append_user("hi").append_assistant(tool_calls=[CALL]).append_user("again")
    for provider in ALL:
        (problem,) = check(history, provider=provider)
        assert (problem.code, problem.provider, problem.path) == (
            "unanswered-tool-call",
            None,
            "$[1].parts[0]",
        )
        assert problem.tool_call_id == "c1" and problem.message_id == view(history)[1]["id"]
        assert "'c1'" in problem.reason and "user message" in problem.reason


def test_a_pending_call_at_the_end_is_not_a_problem() -> None:
    history = fresh().append_user("hi").append_assistant("let me", tool_calls=[CALL])
    assert check(history, provider="all").ok
    assert [c["toolCallId"] for c in history.pending_tool_calls()] == ["c1"]


def test_an_assistant_message_between_call_and_result_is_a_problem_for_openai_and_gemini() -> None:
    history = (
        fresh()
        .append_user("hi")
        .append_assistant(tool_calls=[CALL])
        .append_assistant("meanwhile")
        .append_tool_result("c1", 2)
    )
    assert codes(history) == []
    assert codes(history, "openai") == [("unanswered-tool-call", "openai", "$[1].parts[0]")]
    assert codes(history, "anthropic") == []  # consecutive assistant turns merge
    assert codes(history, "gemini") == [("unanswered-tool-call", "gemini", "$[1].parts[0]")]


def test_a_call_turn_after_a_model_turn_is_a_problem_for_gemini_only() -> None:
    history = (
        fresh()
        .append_user("hi")
        .append_assistant("first")
        .append_assistant(tool_calls=[CALL])
        .append_tool_result("c1", 2)
    )
    assert codes(history, "openai") == codes(history, "anthropic") == []
    assert codes(history, "gemini") == [("function-call-position", "gemini", "$[2]")]


def test_a_history_starting_with_a_call_turn_is_a_problem_for_gemini() -> None:
    history = (
        fresh().append_system("sys").append_assistant(tool_calls=[CALL]).append_tool_result("c1", 1)
    )
    assert codes(history, "gemini") == [("function-call-position", "gemini", "$[1]")]
    assert codes(history, "anthropic") == codes(history, "openai") == []


def test_a_late_system_message_is_a_problem_for_anthropic_and_gemini() -> None:
    history = fresh().append_system("first").append_user("hi").append_system("late")
    assert codes(history, "openai") == []
    assert codes(history, "anthropic") == [("late-system-message", "anthropic", "$[2]")]
    assert codes(history, "gemini") == [("late-system-message", "gemini", "$[2]")]
    assert check(history.collapse_system(), provider="all").ok


def test_a_system_message_before_a_result_is_a_general_problem() -> None:
    history = fresh().append_user("hi").append_assistant(tool_calls=[CALL]).append_system("x")
    assert codes(history.append_tool_result("c1", 1)) == [
        ("unanswered-tool-call", None, "$[1].parts[0]")
    ]


def test_results_split_across_two_assistant_messages_for_anthropic() -> None:
    history = two_call_messages_then_results()
    assert codes(history, "anthropic") == []
    assert codes(history, "openai") == [("unanswered-tool-call", "openai", "$[1].parts[0]")]
    assert codes(history, "gemini") == [
        ("unanswered-tool-call", "gemini", "$[1].parts[0]"),
        ("function-call-position", "gemini", "$[2]"),
    ]


def test_streaming_messages_are_left_out_of_the_provider_rules() -> None:
    history = fresh().append_user("hi").append_assistant(tool_calls=[CALL])
    history, _ = history.start_streaming(parts=[{"type": "text", "text": "typing"}])
    # The streaming message is not sent, so the call is still pending for the providers.
    assert check(history, provider="all").ok


def test_a_list_of_messages_is_checked_for_the_invariants_a_history_keeps() -> None:
    def tool(message_id: str, call_id: str, name: str = "t") -> dict[str, Any]:
        part = {"type": "tool-result", "toolCallId": call_id, "toolName": name, "output": 1}
        return {"id": message_id, "role": "tool", "parts": [part]}

    def calls(message_id: str, *call_ids: str) -> dict[str, Any]:
        parts: list[dict[str, object]] = [
            {"type": "tool-call", "toolCallId": c, "toolName": "t", "input": {}} for c in call_ids
        ]
        return {"id": message_id, "role": "assistant", "parts": parts}

    user = {"id": "u", "role": "user", "parts": [{"type": "text", "text": "hi"}]}
    messages = [
        user,
        tool("r0", "early"),
        calls("a1", "early", "c1"),
        tool("r1", "c1"),
        tool("r1b", "c1"),
        calls("a2", "c1"),
        tool("r2", "nobody"),
        {**tool("r3", "c9"), "id": "u"},
    ]
    found = {(p.code, p.path) for p in check(messages)}
    assert found == {
        ("result-before-call", "$[1].parts[0]"),
        ("duplicate-tool-result", "$[4].parts[0]"),
        ("duplicate-tool-call", "$[5].parts[0]"),
        ("orphan-tool-result", "$[6].parts[0]"),
        ("duplicate-id", "$[7]"),
        ("orphan-tool-result", "$[7].parts[0]"),
    }
    named = [calls("a", "c1"), tool("r", "c1", "other")]
    assert codes(named) == [("tool-name-mismatch", None, "$[1].parts[0]")]


MALFORMED: list[tuple[object, str]] = [
    ("not a list", "$"),
    ([1], "$[0]"),
    ([{"id": "", "role": "user", "parts": []}], "$[0].id"),
    ([{"id": "a", "role": "robot", "parts": []}], "$[0].role"),
    ([{"id": "a", "role": "user", "parts": None}], "$[0].parts"),
    ([{"id": "a", "role": "user", "parts": [7]}], "$[0].parts[0]"),
    ([{"id": "a", "role": "user", "parts": [{"type": "tool-call"}]}], "$[0].parts[0].type"),
    (
        [{"id": "a", "role": "tool", "parts": [{"type": "tool-result", "toolCallId": 3}]}],
        "$[0].parts[0].toolCallId",
    ),
    ([{"id": "a", "role": "user", "parts": [], "metadata": []}], "$[0].metadata"),
]


@pytest.mark.parametrize(("messages", "path"), MALFORMED)
def test_a_malformed_list_is_a_validation_error_with_a_path(messages: Any, path: str) -> None:
    with pytest.raises(ValidationError) as caught:
        check(messages)
    assert caught.value.path == path


def test_an_unknown_provider_is_a_configuration_error() -> None:
    with pytest.raises(ConfigurationError):
        check(fresh(), provider="mistral")  # type: ignore[arg-type]


def test_raise_for_problems_names_the_first_problem() -> None:
    history = fresh().append_user("hi").append_assistant(tool_calls=[CALL]).append_user("again")
    report = check(history)
    assert not report.ok and len(report) == 1 and list(report) == list(report.problems)
    with pytest.raises(IntegrityError) as caught:
        report.raise_for_problems()
    assert caught.value.path == "$[1].parts[0]" and caught.value.problems == report.problems
    check(fresh()).raise_for_problems()
