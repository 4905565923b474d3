"""Rewinding (drop the newest) and truncating (drop the oldest) at a position."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ai_chat import ConfigurationError
from ai_chat.history import History

from .strategies import PROPERTY, build_history, fresh


def ids(history: History) -> list[str]:
    return [m["id"] for m in history.messages]


def conversation() -> History:
    history = fresh().append_system("Be brief.", id="s").append_user("weather?", id="u1")
    calls: list[dict[str, Any]] = [
        {"toolCallId": "c1", "toolName": "weather", "input": {}},
        {"toolCallId": "c2", "toolName": "time", "input": {}},
    ]
    history = history.append_assistant("looking", tool_calls=calls, id="a1")
    history = history.append_tool_result("c1", "sunny", id="t1")
    history = history.append_tool_result("c2", "noon", id="t2")
    history = history.append_assistant("sunny at noon", id="a2")
    return history.append_user("thanks", id="u2").append_assistant("welcome", id="a3")


def test_rewind_drops_the_message_and_everything_after() -> None:
    history = conversation()
    assert ids(history.rewind_before_message("u2")) == ["s", "u1", "a1", "t1", "t2", "a2"]
    assert ids(history.rewind_before_position(1)) == ["s"]


def test_a_pair_straddling_the_rewind_goes_whole() -> None:
    history = conversation()
    # Cutting at t2 would leave c2 unanswered: its call's message goes too.
    assert ids(history.rewind_before_message("t2")) == ["s", "u1"]
    strict = history.rewind_before_message("t2", keep_tool_pairs=False)
    assert ids(strict) == ["s", "u1", "a1", "t1"]
    assert [c["toolCallId"] for c in strict.pending_tool_calls()] == ["c2"]


def test_a_rewind_that_changes_nothing_returns_the_history_itself() -> None:
    history = conversation()
    assert history.rewind_before_position(len(history)) is history
    assert history.rewind_before_position(10**9) is history
    assert history.rewind_before_message("no such id") is history


def test_truncate_keeps_the_tail_the_system_messages_and_drops_orphaned_results() -> None:
    history = conversation()
    tail = history.truncate_from_position(4)  # from t2: its call c2 is in a1, dropped
    assert ids(tail) == ["s", "a2", "u2", "a3"]  # t2 lost its only result, so it went
    assert ids(history.truncate_from_position(4, keep_system=False)) == ["a2", "u2", "a3"]
    assert history.truncate_from_position(0) is history
    assert ids(history.truncate_from_position(100)) == ["s"]


def test_truncate_keeps_a_streaming_message_in_front() -> None:
    history, live = fresh().append_user("a", id="a").start_streaming(id="live")
    history = history.append_user("b", id="b")
    assert ids(history.truncate_from_position(2)) == [live, "b"]


def test_recent_messages() -> None:
    history = conversation()
    assert ids(history.recent_messages(2)) == ["s", "u2", "a3"]
    assert ids(history.recent_messages(2, keep_system=False)) == ["u2", "a3"]
    assert ids(history.recent_messages(100)) == ids(history)
    assert ids(history.recent_messages(0)) == ["s"]


@pytest.mark.parametrize("position", [-1, 1.5, "3", None])
def test_a_bad_position(position: Any) -> None:
    history = conversation()
    for helper in (history.rewind_before_position, history.truncate_from_position):
        with pytest.raises(ConfigurationError) as caught:
            helper(position)
        assert caught.value.parameter == "position"
    with pytest.raises(ConfigurationError):
        history.recent_messages(position)


@PROPERTY
@given(st.data(), st.integers(0, 40), st.booleans())
def test_the_results_are_valid_histories_and_the_input_is_unchanged(
    data: st.DataObject, position: int, pairs: bool
) -> None:
    history = build_history(data, well_behaved=False)
    before = copy.deepcopy(history.to_json())
    rewound = history.rewind_before_position(position, keep_tool_pairs=pairs)
    assert ids(rewound) == ids(history)[: len(rewound)]
    truncated = history.truncate_from_position(position)
    for result in (rewound, truncated, history.recent_messages(position % 5)):
        again = History.from_json(result.to_json())  # the invariants hold
        assert again.messages == result.messages
    assert history.to_json() == before
    kept = set(ids(truncated))
    tail = [m["id"] for m in history.messages[position:] if m["role"] != "tool"]
    assert all(message_id in kept for message_id in tail)  # only orphaned results go
