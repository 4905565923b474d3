"""The answer assembler and the stored-history view (sans-IO): what the store keeps of an
answer agrees with what the genuine AI SDK client built from the same chunks, and the
restored history converts back into the same normalized messages."""

from __future__ import annotations

import copy
from collections.abc import Iterable, Mapping
from typing import Any, cast

from ai_chat._events import EventChecker
from ai_chat._messages import normalize_messages
from ai_chat.limits import JSONLimits
from ai_chat.server import convert_ui_messages
from ai_chat.server._assemble import AnswerAssembler
from ai_chat.server._history import current_line, parent_of, title_of, ui_history
from ai_chat.types import ChatEvent

from .scripts import EVERY_EVENT
from .test_js_client import EXPECTED_MESSAGE

USER = {"id": "u1", "role": "user", "parts": [{"type": "text", "text": "Hello"}]}


def checked(events: Iterable[Mapping[str, object]]) -> list[ChatEvent]:
    """The events as a ChatStream yields them: validated and frozen."""
    checker = EventChecker(JSONLimits(), 10_000_000, "test")
    return [checker.check(dict(event)) for event in events]


def assemble(
    events: Iterable[Mapping[str, object]], message_id: str = "m", first_step: int = 0
) -> tuple[AnswerAssembler, list[dict[str, Any]]]:
    assembler = AnswerAssembler(first_step)
    for event in checked(events):
        assembler.feed(event)
    return assembler, assembler.messages(message_id)


def plain(value: object) -> Any:
    """Frozen JSON (FrozenDict, tuples) as plain dicts and lists, for comparisons."""
    if isinstance(value, Mapping):
        return {k: plain(v) for k, v in cast("Mapping[str, object]", value).items()}
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in cast("Iterable[object]", value)]
    return value


def test_every_event_assembles_to_what_the_ai_sdk_client_built() -> None:
    # EXPECTED_MESSAGE is the UIMessage the genuine AI SDK built from these chunks
    # (tests/server/test_js_client.py checks that); its normalized conversion is what the
    # client's next request will hold, and the store must agree with it.
    assembler, messages = assemble(EVERY_EVENT, "msg-every")
    assert assembler.finished
    client = convert_ui_messages(
        [USER, EXPECTED_MESSAGE], trigger="submit-message", message_id=None
    )
    assert plain(messages) == client.messages[1:]
    assert [m["id"] for m in messages] == ["msg-every", "msg-every:tool", "msg-every:1"]
    # And it is a valid normalized history (what a store checks on the way in).
    normalize_messages([USER, *messages])


def test_text_reasoning_tools_and_metadata_in_detail() -> None:
    _, messages = assemble(
        [
            {"type": "start", "messageMetadata": {"a": 1}},
            {"type": "reasoning-start", "id": "r"},
            {"type": "reasoning-delta", "id": "r", "delta": "think"},
            {"type": "reasoning-end", "id": "r", "providerMetadata": {"p": {"sig": "s"}}},
            {"type": "text-start", "id": "t"},
            {"type": "text-delta", "id": "t", "delta": "Hel"},
            {"type": "text-delta", "id": "t", "delta": "lo"},
            {"type": "text-end", "id": "t"},
            {"type": "tool-input-start", "toolCallId": "c", "toolName": "add"},
            {"type": "tool-input-delta", "toolCallId": "c", "inputTextDelta": '{"a":1}'},
            {
                "type": "tool-input-available",
                "toolCallId": "c",
                "toolName": "add",
                "input": {"a": 1},
            },
            {"type": "data-x", "data": [1]},
            {"type": "data-y", "data": 1, "transient": True},
            {"type": "message-metadata", "messageMetadata": {"b": 2}},
            {"type": "finish", "finishReason": "tool-calls", "usage": {"inputTokens": 3}},
        ]
    )
    assert plain(messages) == [
        {
            "id": "m",
            "role": "assistant",
            "parts": [
                {"type": "reasoning", "text": "think", "providerMetadata": {"p": {"sig": "s"}}},
                {"type": "text", "text": "Hello"},
                {"type": "tool-call", "toolCallId": "c", "toolName": "add", "input": {"a": 1}},
                {"type": "data-x", "data": [1]},
            ],
            "metadata": {
                "a": 1,
                "b": 2,
                "finishReason": "tool-calls",
                "usage": {"inputTokens": 3},
            },
        }
    ]


def test_the_adapters_finish_metadata_wins_and_a_non_object_is_ignored() -> None:
    _, messages = assemble(
        [
            {"type": "text-start", "id": "t"},
            {"type": "text-end", "id": "t"},
            {"type": "finish", "finishReason": "stop", "messageMetadata": {"finishReason": "x"}},
        ]
    )
    assert messages[0]["metadata"] == {"finishReason": "x"}
    _, messages = assemble(
        [
            {"type": "start", "messageMetadata": "not an object"},
            {"type": "text-start", "id": "t"},
            {"type": "text-end", "id": "t"},
            {"type": "finish", "finishReason": "stop"},
        ]
    )
    assert messages[0]["metadata"] == {"finishReason": "stop"}


def test_an_unfinished_answer_leaves_open_parts_out_and_is_not_finished() -> None:
    assembler, messages = assemble(
        [
            {"type": "text-start", "id": "a"},
            {"type": "text-delta", "id": "a", "delta": "done"},
            {"type": "text-end", "id": "a"},
            {"type": "text-start", "id": "b"},
            {"type": "text-delta", "id": "b", "delta": "cut off"},
        ]
    )
    assert not assembler.finished
    assert plain(messages) == [
        {"id": "m", "role": "assistant", "parts": [{"type": "text", "text": "done"}]}
    ]


def test_an_answer_without_parts_assembles_to_nothing() -> None:
    assembler, messages = assemble(
        [
            {"type": "start-step"},
            {"type": "finish-step"},
            {"type": "finish", "finishReason": "stop"},
        ]
    )
    assert assembler.finished and messages == []


def test_a_continued_answer_numbers_its_steps_after_the_clients() -> None:
    _, messages = assemble(
        [
            {"type": "start-step"},
            {"type": "text-start", "id": "t"},
            {"type": "text-delta", "id": "t", "delta": "next"},
            {"type": "text-end", "id": "t"},
            {"type": "finish-step"},
            {"type": "finish", "finishReason": "stop"},
        ],
        "a1",
        first_step=1,
    )
    assert [m["id"] for m in messages] == ["a1:1"]


def stored_history() -> list[dict[str, Any]]:
    _, answer = assemble(EVERY_EVENT, "msg-every")
    answer[0]["metadata"] = {**answer[0]["metadata"], "aiChat": {"parentId": "u1"}}
    return [USER, *answer]


def test_the_restored_history_converts_back_to_the_stored_messages() -> None:
    stored = plain(normalize_messages(stored_history()))
    ui = ui_history(stored)
    assert [m["id"] for m in ui] == ["u1", "msg-every"]
    assert "aiChat" not in ui[1]["metadata"]
    # Resent by the page (or useChat) as the next request's history, it is the stored
    # log again (minus the server's own metadata key).
    again = convert_ui_messages(copy.deepcopy(ui), trigger="submit-message", message_id=None)
    expected = copy.deepcopy(stored)
    del expected[1]["metadata"]["aiChat"]
    assert again.messages == expected


def test_a_regenerated_answer_replaces_what_the_client_dropped() -> None:
    def answer(message_id: str, parent: str) -> dict[str, Any]:
        return {
            "id": message_id,
            "role": "assistant",
            "parts": [{"type": "text", "text": message_id}],
            "metadata": {"aiChat": {"parentId": parent}, "n": 1},
        }

    def user(message_id: str) -> dict[str, Any]:
        return {"id": message_id, "role": "user", "parts": [{"type": "text", "text": message_id}]}

    log = [user("u1"), answer("a1", "u1"), user("u2"), answer("a2", "u2"), answer("a1b", "u1")]
    log += [user("u3"), answer("a3", "u3")]
    line = current_line(cast(Any, log))
    assert [m["id"] for m in line] == ["u1", "a1b", "u3", "a3"]
    assert line[1].get("metadata") == {"n": 1}
    assert parent_of(log[4]) == "u1" and parent_of(log[0]) is None


def test_title_is_the_first_user_text_on_one_line() -> None:
    system = {"id": "s", "role": "system", "parts": [{"type": "text", "text": "sys"}]}
    user = {"id": "u", "role": "user", "parts": [{"type": "text", "text": " Hi\n there " * 20}]}
    title = title_of(cast(Any, [system, user]))
    assert title.startswith("Hi there Hi there") and len(title) == 80 and title.endswith("…")
    assert title_of(cast(Any, [system])) == ""
