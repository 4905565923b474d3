"""UI messages (what DefaultChatTransport sends) into normalized messages."""

from __future__ import annotations

from typing import Any

import pytest

from ai_chat import ValidationError, normalize_messages
from ai_chat.server import convert_ui_messages

USER = {"id": "u1", "role": "user", "parts": [{"type": "text", "text": "Hi"}]}


def tool(state: str, **fields: Any) -> dict[str, Any]:
    return {"type": "tool-weather", "toolCallId": f"c-{state}", "state": state, **fields}


def convert(
    messages: list[Any], trigger: str = "submit-message", message_id: str | None = None
) -> Any:
    converted = convert_ui_messages(messages, trigger=trigger, message_id=message_id)
    normalize_messages(converted.messages)  # every conversion is a valid normalized history
    return converted


def test_user_and_system_parts() -> None:
    messages = [
        {"id": "s", "role": "system", "parts": [{"type": "text", "text": "Be brief."}]},
        {
            "id": "u",
            "role": "user",
            "metadata": {"sentAt": 1},
            "parts": [
                {
                    "type": "file",
                    "mediaType": "image/png",
                    "url": "data:image/png;base64,AA==",
                    "filename": "a.png",
                },
                {"type": "text", "text": "What is this?", "state": "done"},
                {"type": "data-context", "id": "d1", "data": {"page": 3}},
                {"type": "source-url", "sourceId": "s", "url": "https://example.com"},
            ],
        },
    ]
    converted = convert(messages)
    assert converted.message_id is None
    assert converted.messages == [
        {"id": "s", "role": "system", "parts": [{"type": "text", "text": "Be brief."}]},
        {
            "id": "u",
            "role": "user",
            "parts": [
                {
                    "type": "file",
                    "mediaType": "image/png",
                    "url": "data:image/png;base64,AA==",
                    "filename": "a.png",
                },
                {"type": "text", "text": "What is this?"},
                {"type": "data-context", "data": {"page": 3}, "id": "d1"},
            ],
            "metadata": {"sentAt": 1},
        },
    ]


def test_tool_parts_in_every_state_and_steps() -> None:
    assistant: dict[str, Any] = {
        "id": "a",
        "role": "assistant",
        "metadata": {"model": "m"},
        "parts": [
            {"type": "step-start"},
            {
                "type": "reasoning",
                "text": "hmm",
                "providerMetadata": {"anthropic": {"signature": "s"}},
            },
            {"type": "text", "text": "Checking."},
            tool("input-streaming", input={"ci": None}),
            tool("input-available", input={"city": "A"}),
            tool("approval-requested", input={"city": "B"}, approval={"id": "p1"}),
            tool(
                "approval-responded", input={"city": "C"}, approval={"id": "p2", "approved": True}
            ),
            tool(
                "approval-responded",
                input={"city": "D"},
                approval={"id": "p3", "approved": False, "reason": "no"},
            ),
            tool(
                "output-available",
                input={"city": "E"},
                output={"t": 1},
                callProviderMetadata={"p": {"k": 1}},
            ),
            tool("output-error", rawInput="{bad", errorText="bad input"),
            tool("output-denied", input={"city": "F"}, approval={"id": "p4", "approved": False}),
            {"type": "step-start"},
            {
                "type": "dynamic-tool",
                "toolName": "lookup",
                "toolCallId": "d1",
                "state": "output-available",
                "input": {},
                "output": "x",
            },
            {"type": "source-document", "sourceId": "s", "mediaType": "text/plain", "title": "t"},
            {"type": "reasoning-file", "mediaType": "image/png", "url": "data:,"},
            {"type": "custom", "kind": "x.y"},
            {"type": "text", "text": "Done."},
        ],
    }
    converted = convert([USER, assistant])
    assert converted.message_id == "a"  # the last message is an assistant's: continued
    calls = [
        ("c-input-available", {"city": "A"}),
        ("c-approval-requested", {"city": "B"}),
        ("c-approval-responded", {"city": "C"}),
        ("c-approval-responded", {"city": "D"}),
        ("c-output-available", {"city": "E"}),
        ("c-output-error", "{bad"),
        ("c-output-denied", {"city": "F"}),
    ]
    first, results, second = converted.messages[1:4]
    assert first["id"] == "a" and first["metadata"] == {"model": "m"}
    assert first["parts"][:2] == [
        {"type": "reasoning", "text": "hmm", "providerMetadata": {"anthropic": {"signature": "s"}}},
        {"type": "text", "text": "Checking."},
    ]
    assert [(p["toolCallId"], p["input"]) for p in first["parts"][2:]] == calls
    assert first["parts"][6]["providerMetadata"] == {"p": {"k": 1}}
    assert results == {
        "id": "a:tool",
        "role": "tool",
        "parts": [
            {
                "type": "tool-result",
                "toolCallId": "c-approval-responded",
                "toolName": "weather",
                "output": "The tool call was denied: no",
                "isError": True,
            },
            {
                "type": "tool-result",
                "toolCallId": "c-output-available",
                "toolName": "weather",
                "output": {"t": 1},
            },
            {
                "type": "tool-result",
                "toolCallId": "c-output-error",
                "toolName": "weather",
                "output": "bad input",
                "isError": True,
            },
            {
                "type": "tool-result",
                "toolCallId": "c-output-denied",
                "toolName": "weather",
                "output": "The tool call was denied",
                "isError": True,
            },
        ],
    }
    assert second == {
        "id": "a:1",
        "role": "assistant",
        "parts": [
            {"type": "tool-call", "toolCallId": "d1", "toolName": "lookup", "input": {}},
            {"type": "text", "text": "Done."},
        ],
    }
    assert converted.messages[4] == {
        "id": "a:tool:1",
        "role": "tool",
        "parts": [{"type": "tool-result", "toolCallId": "d1", "toolName": "lookup", "output": "x"}],
    }
    assert len(converted.messages) == 5


def test_regenerate_and_continuation() -> None:
    assistant = {"id": "a", "role": "assistant", "parts": [{"type": "text", "text": "Old."}]}
    user2 = {"id": "u2", "role": "user", "parts": [{"type": "text", "text": "More"}]}
    # regenerate the last assistant message, with or without its id
    for message_id in (None, "a"):
        converted = convert([USER, assistant], "regenerate-message", message_id)
        assert [m["id"] for m in converted.messages] == ["u1"]
        assert converted.message_id is None
    # the client already cut the history: nothing more is dropped
    assert [m["id"] for m in convert([USER], "regenerate-message", "a").messages] == ["u1"]
    # regenerate from a user message keeps it and drops what follows
    converted = convert([USER, assistant, user2], "regenerate-message", "u1")
    assert [m["id"] for m in converted.messages] == ["u1"]
    # submit with the id of an edited user message drops what follows it
    assert [
        m["id"] for m in convert([USER, assistant, user2], "submit-message", "u1").messages
    ] == ["u1"]
    # continuing the last assistant message, with or without its id
    for message_id in (None, "a"):
        assert convert([USER, assistant], "submit-message", message_id).message_id == "a"
    with pytest.raises(ValidationError, match="no message is left"):
        convert([assistant], "regenerate-message")


@pytest.mark.parametrize(
    ("messages", "path", "words"),
    [
        ("x", "$.messages", "expected an array of messages, got a string"),
        (
            [
                USER,
                {"id": "a", "role": "assistant", "parts": [{"type": "tool-x", "toolCallId": "c"}]},
            ],
            "$.messages[1].parts[0]",
            '"state"',
        ),
        (
            [USER, {"id": "a", "role": "assistant", "parts": [tool("running")]}],
            "$.messages[1].parts[0].state",
            '"running"',
        ),
        (
            [USER, {"id": "a", "role": "assistant", "parts": [{**tool("x"), "state": ["x"]}]}],
            "$.messages[1].parts[0].state",
            "expected a tool part state, got an array",
        ),
        ([USER, USER], "$.messages[1].id", "also message 0's id"),
        (
            [
                USER,
                {"id": "a", "role": "assistant", "parts": [tool("output-available", output=1)]},
                {"id": "a:tool", "role": "user", "parts": [{"type": "text", "text": "Hi"}]},
            ],
            "$.messages",
            'the message id "a:tool" is taken twice',
        ),
        (
            [
                USER,
                {
                    "id": "a",
                    "role": "assistant",
                    "parts": [
                        {"type": "dynamic-tool", "toolCallId": "c", "state": "input-available"}
                    ],
                },
            ],
            "$.messages[1].parts[0]",
            '"toolName"',
        ),
        (
            [USER, {"id": "a", "role": "assistant", "parts": [tool("output-error")]}],
            "$.messages[1].parts[0]",
            '"errorText"',
        ),
        (
            [
                USER,
                {
                    "id": "a",
                    "role": "assistant",
                    "parts": [tool("output-available", callProviderMetadata=1)],
                },
            ],
            "$.messages[1].parts[0].callProviderMetadata",
            "an object",
        ),
        (
            [
                {
                    "id": "u",
                    "role": "user",
                    "parts": [{"type": "text", "text": "x", "providerMetadata": None}],
                }
            ],
            "$.messages[0].parts[0].providerMetadata",
            "instead of sending null",
        ),
        (
            [{"id": "u", "role": "user", "parts": [{"type": "data-x"}]}],
            "$.messages[0].parts[0]",
            '"data"',
        ),
        (
            [
                {
                    "id": "s",
                    "role": "system",
                    "parts": [{"type": "file", "mediaType": "a/b", "url": "u"}],
                }
            ],
            "$.messages[0].parts[0].type",
            'system message cannot hold a "file"',
        ),
        (
            [{"id": "u", "role": "user", "parts": [{"type": "file", "mediaType": "", "url": "u"}]}],
            "$.messages[0].parts[0].mediaType",
            "non-empty string",
        ),
        (
            [{"id": "u", "role": "user", "parts": [7]}],
            "$.messages[0].parts[0]",
            "expected a part object, got a number",
        ),
        (
            [{"id": "u", "role": "user", "parts": [{"text": "x"}]}],
            "$.messages[0].parts[0]",
            '"type"',
        ),
        (
            [{"id": "u", "role": "user", "parts": [{"type": 1}]}],
            "$.messages[0].parts[0].type",
            "part type string",
        ),
        (
            [{"id": "u", "role": "user", "parts": [{"type": "step-start"}]}],
            "$.messages[0].parts",
            "at least one",
        ),
        (
            [{"id": "a", "role": "assistant", "parts": [{"type": "step-start"}]}],
            "$.messages",
            "anything a model can read",
        ),
    ],
)
def test_wrong_shapes_name_their_path(messages: Any, path: str, words: str) -> None:
    with pytest.raises(ValidationError) as caught:
        convert_ui_messages(messages, trigger="submit-message", message_id=None)
    assert caught.value.path == path
    assert words in caught.value.reason
