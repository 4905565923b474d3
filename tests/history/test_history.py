"""The History value: creation, JSON both ways, equality, the env, the invariants."""

from __future__ import annotations

import copy
import json
import pickle
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ai_chat import ConfigurationError, LimitExceededError, ValidationError, normalize_messages
from ai_chat.history import (
    BOOKKEEPING_KEY,
    DuplicateIdError,
    History,
    HistoryEnv,
    ToolPairingError,
    bookkeeping,
)
from ai_chat.limits import JSONLimits

from .strategies import PROPERTY, START, build_history, fresh, view


def plain(value: object) -> Any:
    return json.loads(json.dumps(value))


@settings(PROPERTY, max_examples=200)
@given(st.data())
def test_from_json_of_to_json_is_the_same_history(data: st.DataObject) -> None:
    history = build_history(data, well_behaved=data.draw(st.booleans()))
    assert History.from_json(history.to_json()) == history
    text = json.dumps(history.to_json())
    again = History.from_json(json.loads(text))
    assert again == history and hash(again) == hash(history)
    assert json.dumps(again.to_json()) == text
    # The messages are normalized messages, unchanged by normalize_messages.
    assert (
        normalize_messages(list(history.messages), limits=JSONLimits(max_values=10**6))
        == history.messages
    )


def test_create_takes_its_id_and_times_from_the_env() -> None:
    env = HistoryEnv.deterministic(start=START, step=timedelta(seconds=2), prefix="x-")
    history = History.create(title="Support", metadata={"orderId": "ord_1"}, env=env)
    assert (history.id, history.title, history.created_at, history.updated_at) == (
        "x-1",
        "Support",
        START,
        START,
    )
    assert history.metadata == {"orderId": "ord_1"} and len(history) == 0 and history.messages == ()
    later = history.append_user("hi")
    # One reading of the clock: the message's creation is the history's update.
    assert later.updated_at == START + timedelta(seconds=2)
    assert bookkeeping(view(later)[0]).created_at == later.updated_at
    assert view(later)[0]["id"] == "x-2"
    assert History.create(id="mine", env=env).id == "mine"


def test_two_runs_with_equal_envs_build_equal_histories() -> None:
    def run() -> History:
        history = History.create(env=HistoryEnv.deterministic())
        history = history.append_user("hi").append_assistant(
            "", tool_calls=[{"toolCallId": "c", "toolName": "t", "input": 1}]
        )
        return history.append_tool_result("c", 2).set_hidden(view(history)[0]["id"])

    assert run() == run()
    assert json.dumps(run().to_json()) == json.dumps(run().to_json())


def test_the_default_env_uses_the_system_clock_and_unique_ids() -> None:
    before = datetime.now(UTC)
    history = History.create()
    assert before <= history.created_at <= datetime.now(UTC)
    ids = {History.create().id for _ in range(100)} | {HistoryEnv().new_id() for _ in range(100)}
    assert len(ids) == 200


def test_a_bad_env_is_a_configuration_error() -> None:
    with pytest.raises(ConfigurationError):
        History.create(env=HistoryEnv(now=lambda: datetime(2030, 1, 1)))  # naive
    with pytest.raises(ConfigurationError):
        History.create(env=HistoryEnv(new_id=lambda: ""))
    with pytest.raises(ConfigurationError):
        HistoryEnv.deterministic(start=datetime(2030, 1, 1))
    with pytest.raises(ConfigurationError):
        HistoryEnv.deterministic(step=timedelta(seconds=-1))


def test_equality_is_the_value_not_the_env() -> None:
    history = fresh().append_user("hi")
    assert history.with_env(HistoryEnv()) == history
    assert history != history.with_title("other") and history != "not a history"
    assert history.with_title("other").title == "other"
    assert history.with_metadata({"k": 2}).metadata == {"k": 2}
    assert len({history, history.with_env(HistoryEnv())}) == 1
    assert copy.deepcopy(history) is history and copy.copy(history) is history
    assert pickle.loads(pickle.dumps(history)) == history
    assert repr(history).startswith("History(id='id-1', title='t', messages=1")


def test_history_cannot_be_made_or_changed_directly() -> None:
    with pytest.raises(TypeError):
        History()
    history = fresh()
    with pytest.raises(AttributeError):
        history.title = "x"  # type: ignore[misc]
    with pytest.raises(TypeError):
        history.metadata["k"] = 2  # type: ignore[index]
    with pytest.raises(TypeError):
        history.append_user("hi").messages[0]["parts"][0]["text"] = "x"  # type: ignore[index]


def good() -> dict[str, Any]:
    return plain(
        fresh()
        .append_user("hi")
        .append_assistant("", tool_calls=[{"toolCallId": "c", "toolName": "t", "input": {}}])
        .to_json()
    )


def broken(change: Callable[[Any], object]) -> dict[str, Any]:
    data = good()
    change(data)
    return data


@pytest.mark.parametrize(
    ("data", "error", "path"),
    [
        ([], ValidationError, "$"),
        (broken(lambda d: d.update(extra=1)), ValidationError, "$"),
        (broken(lambda d: d.pop("id")), ValidationError, "$"),
        (broken(lambda d: d.update(id="")), ValidationError, "$.id"),
        (broken(lambda d: d.update(title=None)), ValidationError, "$.title"),
        (broken(lambda d: d.update(metadata=[])), ValidationError, "$.metadata"),
        (broken(lambda d: d.update(metadata={"x": float("nan")})), ValidationError, "$.metadata.x"),
        (broken(lambda d: d.update(createdAt="yesterday")), ValidationError, "$.createdAt"),
        (
            broken(lambda d: d.update(updatedAt="2030-01-01T00:00:00")),
            ValidationError,
            "$.updatedAt",
        ),
        (broken(lambda d: d.update(messages={})), ValidationError, "$.messages"),
        (
            broken(lambda d: d["messages"][1].update(role="robot")),
            ValidationError,
            "$.messages[1].role",
        ),
        (
            broken(lambda d: d["messages"][1]["parts"][0].update(input={1, 2})),
            ValidationError,
            "$.messages[1].parts[0].input",
        ),
        (
            broken(lambda d: d["messages"][1].update(id=d["messages"][0]["id"])),
            DuplicateIdError,
            "$.messages[1].id",
        ),
        (
            broken(
                lambda d: d["messages"].append(
                    {
                        "id": "r",
                        "role": "tool",
                        "parts": [
                            {
                                "type": "tool-result",
                                "toolCallId": "zz",
                                "toolName": "t",
                                "output": 1,
                            }
                        ],
                    }
                )
            ),
            ToolPairingError,
            "$.messages[2].parts[0].toolCallId",
        ),
        (
            broken(lambda d: d["messages"][0]["metadata"].update(aiChat=[])),
            ValidationError,
            "$.messages[0].metadata.aiChat",
        ),
        (
            broken(lambda d: d["messages"][0]["metadata"]["aiChat"].update(hidden="yes")),
            ValidationError,
            "$.messages[0].metadata.aiChat.hidden",
        ),
        (
            broken(lambda d: d["messages"][0]["metadata"]["aiChat"].update(createdAt=5)),
            ValidationError,
            "$.messages[0].metadata.aiChat.createdAt",
        ),
        (
            broken(
                lambda d: d["messages"][0]["metadata"]["aiChat"].update(usage={"inputTokens": -1})
            ),
            ValidationError,
            "$.messages[0].metadata.aiChat.usage",
        ),
        (
            broken(lambda d: d["messages"][0]["metadata"]["aiChat"].update(sources=[1])),
            ValidationError,
            "$.messages[0].metadata.aiChat.sources",
        ),
    ],
)
def test_bad_json_is_a_typed_error_with_a_path(
    data: Any, error: type[Exception], path: str
) -> None:
    with pytest.raises(error) as caught:
        History.from_json(data)
    found: Any = caught.value
    assert found.path == path


def test_limits_bound_each_message_and_the_metadata() -> None:
    limits = JSONLimits(max_depth=64, max_values=50, max_chars=2_000)
    with pytest.raises(LimitExceededError):
        History.create(metadata={"x": "y" * 3_000}, limits=limits)
    history = History.create(limits=limits)
    history.append_user("fits")
    with pytest.raises(LimitExceededError) as caught:
        history.extend(
            [
                {"id": "a", "role": "user", "parts": [{"type": "text", "text": "ok"}]},
                {"id": "b", "role": "user", "parts": [{"type": "text", "text": "z" * 3_000}]},
            ]
        )
    assert caught.value.path.startswith("$[1]")
    with pytest.raises(LimitExceededError):
        History.from_json(plain(fresh().append_user("q" * 3_000).to_json()), limits=limits)


def test_the_reserved_key_is_the_servers_too() -> None:
    assert BOOKKEEPING_KEY == "aiChat"
    from ai_chat.server._history import SERVER_KEY

    assert SERVER_KEY == BOOKKEEPING_KEY  # one key for ai_chat's own facts
