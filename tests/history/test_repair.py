"""repair: every provider accepts what it returns, and it says what it changed."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from ai_chat.history import UNANSWERED_OUTPUT, History, HistoryEnv, check, repair

from .strategies import PROPERTY, build_history, fresh, two_call_messages_then_results, view

UNFIXABLE = {"late-system-message", "function-call-position"}
CALL: dict[str, object] = {"toolCallId": "c1", "toolName": "lookup", "input": {}}


def non_tool_ids(history: History) -> list[str]:
    return [m["id"] for m in history.messages if m["role"] != "tool"]


@settings(PROPERTY, max_examples=300)
@given(st.data())
def test_a_repaired_history_has_only_what_repair_cannot_fix(data: st.DataObject) -> None:
    history = build_history(data, well_behaved=False)
    before = json.dumps(history.to_json())
    result = repair(history, provider="all")
    assert json.dumps(history.to_json()) == before  # the input is unchanged
    found = check(result.history, provider="all").problems
    assert found == result.remaining
    assert {p.code for p in found} <= UNFIXABLE
    assert non_tool_ids(result.history) == non_tool_ids(history)  # nothing the model said is lost
    if check(history, provider="all").ok:
        assert result.history is history and not result.changed
    # Every result of the input is still there, unless it was a second one.
    kept = {i.call["toolCallId"]: i.result for i in result.history.tool_interactions()}
    for interaction in history.tool_interactions():
        if interaction.result is not None:
            assert kept[interaction.call["toolCallId"]] == interaction.result


def test_an_unanswered_call_gets_an_error_result() -> None:
    history = fresh().append_user("hi").append_assistant(tool_calls=[CALL]).append_user("again")
    result = repair(history)
    assert [m["role"] for m in result.history.messages] == ["user", "assistant", "tool", "user"]
    (part,) = view(result.history)[2]["parts"]
    assert part == {
        "type": "tool-result",
        "toolCallId": "c1",
        "toolName": "lookup",
        "output": UNANSWERED_OUTPUT,
        "isError": True,
    }
    (change,) = result.changes
    assert (change.action, change.path, change.tool_call_id) == (
        "added-result",
        "$[1].parts[0]",
        "c1",
    )
    assert change.message_id == view(result.history)[2]["id"]
    assert result.remaining == () and check(result.history, provider="all").ok
    assert result.history.id == history.id and result.history.created_at == history.created_at


def test_a_pending_call_is_left_alone() -> None:
    history = fresh().append_user("hi").append_assistant(tool_calls=[CALL])
    result = repair(history, provider="all")
    assert result.history is history and result.changes == () and result.remaining == ()


def test_a_late_result_moves_up_to_its_call() -> None:
    history = two_call_messages_then_results()
    assert repair(history, provider="anthropic").history is history  # fine for Anthropic
    result = repair(history, provider="openai")
    roles = [m["role"] for m in result.history.messages]
    assert roles == ["user", "assistant", "tool", "assistant", "tool"]
    assert [c.action for c in result.changes] == ["moved-part"]
    assert view(result.history)[4]["id"] == view(history)[3]["id"]  # the rest kept its id
    assert (
        check(result.history, provider="openai").ok
        and check(result.history, provider="anthropic").ok
    )
    assert result.remaining == () and repair(history, provider="gemini").remaining == ()
    # A call turn right after a model turn is what no moving of results fixes.
    model_first = (
        fresh().append_user("hi").append_assistant("first").append_assistant(tool_calls=[CALL])
    )
    model_first = model_first.append_tool_result("c1", 1)
    stuck = repair(model_first, provider="gemini")
    assert stuck.history is model_first and [p.code for p in stuck.remaining] == [
        "function-call-position"
    ]


def test_a_list_with_broken_invariants_becomes_a_valid_history() -> None:
    def result_of(message_id: str, call_id: str, name: str = "lookup") -> dict[str, Any]:
        part = {"type": "tool-result", "toolCallId": call_id, "toolName": name, "output": 1}
        return {"id": message_id, "role": "tool", "parts": [part]}

    user = {"id": "u", "role": "user", "parts": [{"type": "text", "text": "hi"}]}
    calls = {"id": "a", "role": "assistant", "parts": [{"type": "tool-call", **CALL}]}
    messages = [
        user,
        result_of("r0", "c1"),
        calls,
        result_of("r1", "c1", "other"),
        result_of("r2", "c1"),
        {**calls, "id": "a2"},
        user,
    ]
    result = repair(messages, env=HistoryEnv.deterministic(prefix="new-"))
    assert [m["id"] for m in result.history.messages] == ["u", "a", "r1"]
    assert view(result.history)[2]["parts"][0]["toolName"] == "lookup"
    assert [(c.action, c.path) for c in result.changes] == [
        ("dropped-part", "$[1].parts[0]"),
        ("renamed-part", "$[3].parts[0]"),
        ("dropped-part", "$[4].parts[0]"),
        ("dropped-message", "$[5]"),  # left with nothing
        ("dropped-part", "$[5].parts[0]"),
        ("dropped-message", "$[6]"),
    ]
    assert result.history.id == "new-1" and check(result.history, provider="all").ok
    # A tool message left empty by the drops is dropped as well.
    assert all(m["parts"] for m in result.history.messages if m["role"] == "tool")


def test_a_valid_list_becomes_a_history_unchanged() -> None:
    messages = list(fresh().append_user("hi").append_assistant("hello").messages)
    result = repair(messages)
    assert result.history.messages == tuple(messages) and not result.changed
