"""The helpers: what each returns, that none changes its input, and their errors."""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from typing import Any, cast

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ai_chat import ConfigurationError, ValidationError
from ai_chat.history import (
    DuplicateIdError,
    History,
    ToolPairingError,
    bookkeeping,
    check,
)

from .strategies import PROPERTY, build_history, fresh, texts, view

CALL = {"toolCallId": "c1", "toolName": "lookup", "input": {"id": 1}}


def snapshot(history: History) -> str:
    """The whole value as text: a deep copy to compare against."""
    return json.dumps(history.to_json(), sort_keys=True)


def conversation() -> History:
    return (
        fresh()
        .append_system("Be brief.")
        .append_user("Look up account 1.")
        .append_assistant("I can do that.", tool_calls=[CALL])
        .append_tool_result("c1", {"status": "active"})
        .append_assistant("It is active.")
    )


def ids(history: History) -> list[str]:
    return [m["id"] for m in history.messages]


HELPERS: dict[str, Callable[[History], object]] = {
    "append": lambda h: h.append(
        {"id": "new", "role": "user", "parts": [{"type": "text", "text": "x"}]}
    ),
    "extend": lambda h: h.extend(
        [{"id": "n1", "role": "user", "parts": [{"type": "text", "text": "x"}]}]
    ),
    "append_user": lambda h: h.append_user("more", metadata={"m": 1}),
    "append_system": lambda h: h.append_system("late"),
    "append_assistant": lambda h: h.append_assistant(
        "sure", tool_calls=[{**CALL, "toolCallId": "c9"}]
    ),
    "append_tool_result": lambda h: h.append_assistant(
        tool_calls=[{**CALL, "toolCallId": "c9"}]
    ).append_tool_result("c9", 1),
    "append_tool_results": lambda h: h.append_assistant(
        tool_calls=[{**CALL, "toolCallId": "c9"}]
    ).append_tool_results([{"toolCallId": "c9", "output": 2}]),
    "update_message": lambda h: h.update_message(
        view(h)[1]["id"], parts=[{"type": "text", "text": "edited"}], metadata={"edited": True}
    ),
    "remove_message": lambda h: h.remove_message(view(h)[2]["id"]),
    "set_hidden": lambda h: h.set_hidden(view(h)[4]["id"]),
    "replace_tool_result": lambda h: h.replace_tool_result(
        "c1", {"status": "closed"}, is_error=True
    ),
    "prepend_system": lambda h: h.prepend_system("first"),
    "replace_system": lambda h: h.replace_system("Be thorough."),
    "collapse_system": lambda h: h.append_system("again").collapse_system(),
    "start_streaming": lambda h: h.start_streaming(parts=[{"type": "text", "text": "typ"}]),
    "update_streaming": lambda h: (s := h.start_streaming())[0].update_streaming(
        s[1], [{"type": "text", "text": "t"}]
    ),
    "finish_streaming": lambda h: (s := h.start_streaming())[0].finish_streaming(
        s[1], usage={"inputTokens": 1}
    ),
    "cancel_streaming": lambda h: (s := h.start_streaming())[0].cancel_streaming(s[1]),
    "with_title": lambda h: h.with_title("T"),
    "with_metadata": lambda h: h.with_metadata({"x": [1]}),
}


@pytest.mark.parametrize("name", sorted(HELPERS))
def test_no_helper_changes_its_input(name: str) -> None:
    history = conversation()
    before = snapshot(history)
    result = HELPERS[name](history)
    assert snapshot(history) == before
    changed = cast(Any, result)[0] if isinstance(result, tuple) else result
    assert isinstance(changed, History) and changed is not history


def test_no_helper_changes_what_it_was_given() -> None:
    message = {
        "id": "m",
        "role": "user",
        "parts": [{"type": "text", "text": "hi"}],
        "metadata": {"a": [1]},
    }
    calls = [{"toolCallId": "c", "toolName": "t", "input": {"deep": [1, {"x": 2}]}}]
    results = [{"toolCallId": "c", "output": {"deep": [3]}}]
    metadata = {"keep": {"me": [1]}}
    given = copy.deepcopy((message, calls, results, metadata))
    history = fresh().append(message).append_assistant("a", tool_calls=calls, metadata=metadata)
    history = history.append_tool_results(results).append_user("u", metadata=metadata)
    history.update_message("m", parts=cast(Any, message["parts"]), metadata=metadata)
    assert (message, calls, results, metadata) == given


@settings(PROPERTY, max_examples=150)
@given(st.data())
def test_random_helpers_never_change_earlier_versions(data: st.DataObject) -> None:
    # Versions share storage; each must stay the value it was.
    history = build_history(data, well_behaved=False)
    before = snapshot(history)
    versions = [history]
    for _ in range(data.draw(st.integers(1, 6))):
        base = data.draw(st.sampled_from(versions))
        name = data.draw(
            st.sampled_from(
                ["append_user", "append_assistant", "set_hidden", "remove_message", "extend"]
            )
        )
        if (
            name in ("set_hidden", "remove_message")
            and len(base)
            and not any(bookkeeping(m).streaming for m in base.messages)
        ):
            target = view(base)[data.draw(st.integers(0, len(base) - 1))]["id"]
            versions.append(getattr(base, name)(target))
        elif name == "append_user":
            versions.append(base.append_user(data.draw(texts)))
        elif name == "extend":
            versions.append(
                base.extend(
                    [
                        {
                            "id": f"x{len(versions)}",
                            "role": "user",
                            "parts": [{"type": "text", "text": "x"}],
                        }
                    ]
                    * 1
                )
            )
        else:
            versions.append(base.append_assistant(data.draw(texts)))
    assert snapshot(history) == before
    for version in versions:
        assert History.from_json(version.to_json()) == version
        assert [version.position(m["id"]) for m in version.messages] == list(range(len(version)))


def test_appends_add_bookkeeping_and_keep_given_ids_and_times() -> None:
    history = conversation()
    assert [m["role"] for m in history.messages] == [
        "system",
        "user",
        "assistant",
        "tool",
        "assistant",
    ]
    assert view(history)[3]["parts"][0] == {
        "type": "tool-result",
        "toolCallId": "c1",
        "toolName": "lookup",
        "output": {"status": "active"},
    }
    for message in history.messages:
        assert bookkeeping(message).created_at is not None
    stamped = "2020-01-01T00:00:00.000000Z"
    kept = history.append(
        {
            "id": "m",
            "role": "user",
            "parts": [{"type": "text", "text": "x"}],
            "metadata": {"aiChat": {"createdAt": stamped}},
        }
    )
    assert view(kept)[-1]["metadata"]["aiChat"]["createdAt"] == stamped
    assert history.append_user("x", id="given").messages[-1]["id"] == "given"
    # Non-ASCII text takes the general path and ends up the same.
    assert view(history.append_user("héllo"))[-1]["parts"][0]["text"] == "héllo"


def test_append_tool_results_names_the_calls_tool_and_drops_a_false_is_error() -> None:
    history = (
        fresh()
        .append_assistant(tool_calls=[CALL])
        .append_tool_results([{"toolCallId": "c1", "output": 1, "isError": False}])
    )
    assert view(history)[-1]["parts"] == (
        {"type": "tool-result", "toolName": "lookup", "toolCallId": "c1", "output": 1},
    )
    assert history.append_tool_results([]) is history


BAD_INPUT: list[tuple[Callable[[History], object], type[Exception], str]] = [
    (lambda h: h.append({"id": "x", "role": "user"}), ValidationError, "$[0]"),
    (
        lambda h: h.extend(
            [
                {"id": "ok", "role": "user", "parts": [{"type": "text", "text": "a"}]},
                {"id": "y", "role": "user", "parts": [{"type": "image"}]},
            ]
        ),
        ValidationError,
        "$[1].parts[0].type",
    ),
    (lambda h: h.append_user("hi", id=view(h)[0]["id"]), DuplicateIdError, "$[0].id"),
    (
        lambda h: h.extend(
            [{"id": "d", "role": "user", "parts": [{"type": "text", "text": "a"}]}] * 2
        ),
        DuplicateIdError,
        "$[1].id",
    ),
    (lambda h: h.append_tool_result("nope", 1), ToolPairingError, "$[0].parts[0].toolCallId"),
    (lambda h: h.append_tool_result("c1", 1), ToolPairingError, "$[0].parts[0].toolCallId"),
    (
        lambda h: h.append(
            {
                "id": "r",
                "role": "tool",
                "parts": [
                    {"type": "tool-result", "toolCallId": "zz", "toolName": "t", "output": 1}
                ],
            }
        ),
        ToolPairingError,
        "$[0].parts[0].toolCallId",
    ),
    (
        lambda h: h.append_assistant(tool_calls=[CALL]),
        ToolPairingError,
        "$[0].parts[0].toolCallId",
    ),
    (
        lambda h: h.append_assistant(tool_calls=[{**CALL, "toolCallId": "n"}]).append(
            {
                "id": "r",
                "role": "tool",
                "parts": [
                    {"type": "tool-result", "toolCallId": "n", "toolName": "other", "output": 1}
                ],
            }
        ),
        ToolPairingError,
        "$[0].parts[0].toolName",
    ),
    (
        lambda h: h.append_user("x", metadata={"v": float("inf")}),
        ValidationError,
        "$[0].metadata.v",
    ),
    (lambda h: h.append_user("bad \ud800 surrogate"), ValidationError, "$[0].parts[0].text"),
    (lambda h: h.replace_tool_result("c1", {1, 2}), ValidationError, "$.output"),
    (
        lambda h: h.update_message(view(h)[2]["id"], parts=[{"type": "text", "text": "no call"}]),
        ToolPairingError,
        "$[2].parts",
    ),
    (
        lambda h: h.update_message(view(h)[1]["id"], parts=[{"type": "reasoning", "text": "x"}]),
        ValidationError,
        "$[1].parts[0].type",
    ),
    (
        lambda h: h.update_message(view(h)[1]["id"], metadata={"aiChat": {}}),
        ValidationError,
        "$[1].metadata.aiChat",
    ),
]


@pytest.mark.parametrize(("change", "error", "path"), BAD_INPUT)
def test_bad_input_is_a_typed_error_with_a_path(
    change: Callable[[History], object], error: type[Exception], path: str
) -> None:
    history = conversation()
    with pytest.raises(error) as caught:
        change(history)
    found: Any = caught.value
    assert found.path == path


def test_bad_arguments_are_configuration_errors() -> None:
    history = conversation()
    for change in (
        lambda: history.append_user(3),  # type: ignore[arg-type]
        lambda: history.append_user("x", id=""),
        lambda: history.append_user("x", created_at="now"),  # type: ignore[arg-type]
        lambda: history.set_hidden(view(history)[0]["id"], "yes"),  # type: ignore[arg-type]
        lambda: history.at("1"),  # type: ignore[arg-type]
        lambda: History.create(title=3),  # type: ignore[arg-type]
        lambda: history.search(3),  # type: ignore[arg-type]
        lambda: history.search("x", roles=["robot"]),  # type: ignore[list-item]
    ):
        with pytest.raises(ConfigurationError):
            change()


def test_unknown_ids_are_no_ops() -> None:
    history = conversation()
    assert history.update_message("nope", parts=[{"type": "text", "text": "x"}]) is history
    assert history.remove_message("nope") is history
    assert history.set_hidden("nope") is history
    assert history.replace_tool_result("nope", 1) is history
    assert history.update_streaming("nope", []) is history
    assert history.finish_streaming("nope") is history
    assert history.cancel_streaming("nope") is history
    assert history.set_hidden(view(history)[0]["id"], False) is history  # no change
    assert history.update_message(view(history)[0]["id"]) is history
    assert history.extend([]) is history


def test_update_keeps_id_role_position_bookkeeping_and_tool_ids() -> None:
    history = conversation().set_hidden("id-4")
    target = view(history)[2]
    updated = history.update_message(
        target["id"],
        parts=[{"type": "text", "text": "Checking."}, target["parts"][1]],
        metadata={"edited": True},
    )
    new = view(updated)[2]
    assert (new["id"], new["role"], updated.position(new["id"])) == (target["id"], "assistant", 2)
    assert new["parts"][0]["text"] == "Checking." and new["parts"][1] == target["parts"][1]
    assert new["metadata"]["edited"] is True
    assert bookkeeping(new) == bookkeeping(target)
    assert ids(updated) == ids(history)


def test_remove_takes_the_results_of_its_calls_along() -> None:
    history = conversation()
    removed = history.remove_message(view(history)[2]["id"])
    assert [m["role"] for m in removed.messages] == ["system", "user", "assistant"]
    assert check(removed, provider="all").ok
    removed_result = history.remove_message(view(history)[3]["id"])
    assert [c["toolCallId"] for c in removed_result.pending_tool_calls()] == ["c1"]


def test_hidden_messages_are_left_out_of_visible_but_still_sent() -> None:
    history = conversation()
    hidden = history.set_hidden(view(history)[1]["id"])
    assert bookkeeping(view(hidden)[1]).hidden
    assert [m["id"] for m in hidden.visible()] == [
        i for i in ids(history) if i != view(history)[1]["id"]
    ]
    assert hidden.request_messages() == hidden.messages
    shown = hidden.set_hidden(view(history)[1]["id"], False)
    assert "hidden" not in view(shown)[1]["metadata"]["aiChat"]
    assert shown.messages == history.messages


def test_replace_tool_result_in_place() -> None:
    history = conversation()
    replaced = history.replace_tool_result("c1", {"status": "closed"}, is_error=True)
    part = view(replaced)[3]["parts"][0]
    assert part["output"] == {"status": "closed"} and part["isError"] is True
    assert replaced.position(view(history)[3]["id"]) == 3
    back = replaced.replace_tool_result("c1", {"status": "active"})
    assert "isError" not in view(back)[3]["parts"][0]
    pending = fresh().append_assistant(tool_calls=[CALL])
    assert pending.replace_tool_result("c1", 1) is pending  # no result to replace


def test_system_message_helpers() -> None:
    history = conversation()
    first = history.prepend_system("Hello.")
    assert [m["role"] for m in first.messages][:2] == ["system", "system"] and view(first)[0][
        "parts"
    ][0]["text"] == "Hello."
    replaced = history.replace_system("Be thorough.")
    assert (
        view(replaced)[0]["parts"][0]["text"] == "Be thorough."
        and view(replaced)[0]["id"] == view(history)[0]["id"]
    )
    assert bookkeeping(view(replaced)[0]) == bookkeeping(view(history)[0])
    none = fresh().append_user("hi").replace_system("Now.")
    assert [m["role"] for m in none.messages] == ["system", "user"]
    many = first.append_system("Be brief.").append_system("Late.")
    collapsed = many.collapse_system()
    assert len(collapsed.system_messages()) == 1
    assert [p["text"] for p in view(collapsed)[0]["parts"]] == ["Hello.", "Be brief.", "Late."]
    assert collapsed.collapse_system() is collapsed
    assert [m["role"] for m in history.system_messages()] == ["system"]


def test_queries() -> None:
    history = conversation().set_hidden("id-6")
    assert history.message("id-3") == view(history)[1] and history.message("nope") is None
    assert history.at(0) == view(history)[0] and history.at(-1) == view(history)[-1]
    assert history.at(99) is None and history.at(-99) is None and history.position("nope") is None
    stats = history.statistics()
    assert stats.by_role == {"system": 1, "user": 1, "assistant": 2, "tool": 1}
    assert (
        stats.messages,
        stats.tool_calls,
        stats.tool_results,
        stats.pending_tool_calls,
        stats.hidden,
        stats.streaming,
    ) == (5, 1, 1, 0, 1, 0)
    assert stats.characters == sum(
        len(t) for t in ("Be brief.", "Look up account 1.", "I can do that.", "It is active.")
    )
    assert [m["id"] for m in history.search("ACCOUNT")] == ["id-3"]
    assert history.search("ACCOUNT", case_sensitive=True) == ()
    assert [m["role"] for m in history.search("", roles=["assistant"])] == [
        "assistant",
        "assistant",
    ]
    assert [m["role"] for m in history.search(lambda m: m["role"] == "tool")] == ["tool"]
    (interaction,) = history.tool_interactions()
    assert (
        interaction.call["toolCallId"] == "c1"
        and interaction.result is not None
        and not interaction.pending
    )
    assert interaction.call_message_id == "id-4" and interaction.result_message_id == "id-5"
    more = history.append_assistant(tool_calls=[{**CALL, "toolCallId": "c2"}])
    assert [i.pending for i in more.tool_interactions()] == [False, True]
    assert more.statistics().pending_tool_calls == 1


def test_versions_appended_from_threads_stay_apart() -> None:
    import threading

    base = fresh().append_user("shared")
    results: dict[int, History] = {}

    def work(worker: int) -> None:
        history = base
        for index in range(300):
            history = history.append_user(f"{worker}-{index}", id=f"{worker}-{index}")
        results[worker] = history

    threads = [threading.Thread(target=work, args=(n,)) for n in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(base) == 1
    for worker, history in results.items():
        assert len(history) == 301
        assert [m["id"] for m in history.messages[1:]] == [f"{worker}-{i}" for i in range(300)]
        assert History.from_json(history.to_json()) == history
