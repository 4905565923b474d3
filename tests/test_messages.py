"""normalize_messages: valid histories come back frozen and equal; every rejection is precise."""

from __future__ import annotations

import copy
import json
import math
from collections.abc import Iterator
from typing import Any, cast

import pytest

from ai_chat import LimitExceededError, ValidationError, normalize_messages
from ai_chat.limits import FrozenDict, JSONLimits, json_size

# --------------------------------------------------------------------------------------
# Valid histories
# --------------------------------------------------------------------------------------

PM = {"openai": {"itemId": "it_1", "nested": {"a": [1, 2.5, None, True]}}, "anthropic": {}}


def full_history() -> list[dict[str, Any]]:
    """Every role, every part type, optional fields present and absent, unknown keys."""
    return [
        {
            "id": "sys-1",
            "role": "system",
            "parts": [{"type": "text", "text": "You are terse."}],
        },
        {
            "id": "user-1",
            "role": "user",
            "metadata": {"createdAt": 1796022622142, "tags": ["a", "b"], "nested": {"x": None}},
            "parts": [
                {"type": "text", "text": "Look at these", "providerMetadata": PM},
                {"type": "file", "mediaType": "image/png", "url": "data:image/png;base64,iVBOR"},
                {
                    "type": "file",
                    "mediaType": "application/pdf",
                    "url": "https://example.com/a.pdf",
                    "filename": "a.pdf",
                    "providerMetadata": PM,
                },
                {"type": "data-weather", "data": {"city": "Berlin", "temp": 21}},
                {"type": "data-weather", "id": "w-1", "data": None},
            ],
            "clientOnly": {"unknown": "message property"},
        },
        {
            "id": "asst-1",
            "role": "assistant",
            "metadata": {},
            "parts": [
                {"type": "reasoning", "text": "They want the weather.", "providerMetadata": PM},
                {"type": "text", "text": "Let me check.", "state": "done"},
                {"type": "file", "mediaType": "text/plain", "url": "data:text/plain,hi"},
                {
                    "type": "tool-call",
                    "toolCallId": "call-1",
                    "toolName": "get_weather",
                    "input": {"city": "Berlin", "days": [1, 2, 3], "opts": {"unit": "C"}},
                    "providerMetadata": PM,
                },
                {"type": "tool-call", "toolCallId": "call-2", "toolName": "noop", "input": None},
                {"type": "data-progress", "id": "p-1", "data": [1, "two", {"three": 3}]},
            ],
        },
        {
            "id": "tool-1",
            "role": "tool",
            "parts": [
                {
                    "type": "tool-result",
                    "toolCallId": "call-1",
                    "toolName": "get_weather",
                    "output": {"temperature": 21, "condition": "sunny"},
                    "isError": False,
                    "providerMetadata": PM,
                },
                {
                    "type": "tool-result",
                    "toolCallId": "call-2",
                    "toolName": "noop",
                    "output": "boom",
                    "isError": True,
                    "extra": [1, {"kept": True}],
                },
                {"type": "tool-result", "toolCallId": "call-3", "toolName": "x", "output": None},
            ],
        },
        {"id": "asst-2", "role": "assistant", "parts": []},
        {
            "id": "user-2",
            "role": "user",
            "parts": [{"type": "text", "text": "", "x-unknown": 1}],
        },
    ]


def thaw(value: object) -> object:
    """A frozen value as plain lists and dicts, to compare with the input."""
    if isinstance(value, dict):
        return {k: thaw(v) for k, v in cast("dict[str, object]", value).items()}
    if isinstance(value, list | tuple):
        return [thaw(v) for v in cast("tuple[object, ...]", value)]
    return value


def walk(value: object) -> Iterator[object]:
    """Every container and scalar inside ``value``, itself included."""
    yield value
    if isinstance(value, dict):
        for item in cast("dict[object, object]", value).values():
            yield from walk(item)
    elif isinstance(value, list | tuple):
        for item in cast("tuple[object, ...]", value):
            yield from walk(item)


def test_full_history_comes_back_equal_frozen_and_in_order() -> None:
    history = full_history()
    result = normalize_messages(history)

    assert type(result) is tuple
    assert len(result) == len(history)
    assert all(type(message) is FrozenDict for message in result)
    assert [m["id"] for m in result] == [m["id"] for m in history]
    assert thaw(result) == history
    for message, original in zip(result, history, strict=True):
        assert type(message["parts"]) is tuple
        assert list(message.keys()) == list(original.keys())
        for part, original_part in zip(message["parts"], original["parts"], strict=True):
            assert type(part) is FrozenDict
            assert thaw(part) == original_part
    # Deeply frozen: no list or plain dict anywhere.
    for node in walk(result):
        assert type(node) not in (list, dict), node
    # Unknown properties survive on messages and parts.
    assert cast("dict[str, object]", result[1])["clientOnly"] == {"unknown": "message property"}
    assert cast("dict[str, object]", result[3]["parts"][1])["extra"] == (1, {"kept": True})
    assert cast("dict[str, object]", result[2]["parts"][1])["state"] == "done"


@pytest.mark.parametrize(
    "message",
    [pytest.param(m, id=m["id"]) for m in full_history()],
)
def test_each_message_alone_is_valid(message: dict[str, Any]) -> None:
    assert thaw(normalize_messages([message])) == [message]


def test_tuple_input_and_empty_history_are_accepted() -> None:
    history = full_history()
    assert thaw(normalize_messages(tuple(history))) == history
    assert normalize_messages([]) == ()


def test_result_is_json_serializable_and_round_trips() -> None:
    history = full_history()
    result = normalize_messages(history)
    text = json.dumps(result)
    assert text == json.dumps(history)
    assert json.loads(text) == history


def test_result_is_detached_from_the_input() -> None:
    history = full_history()
    expected = copy.deepcopy(history)
    result = normalize_messages(history)

    history.append({"id": "late", "role": "user", "parts": [{"type": "text", "text": "x"}]})
    history[0]["id"] = "changed"
    history[1]["parts"][0]["text"] = "changed"
    history[1]["parts"].clear()
    history[1]["metadata"]["tags"].append("c")
    history[2]["parts"][3]["input"]["days"][0] = 99
    history[2]["parts"][3]["input"]["opts"]["unit"] = "F"
    history[3]["parts"][0]["providerMetadata"]["openai"]["itemId"] = "changed"
    del history[4]

    assert thaw(result) == expected


def test_result_cannot_be_mutated() -> None:
    result = normalize_messages(full_history())
    message = cast("dict[str, object]", result[0])
    with pytest.raises(TypeError):
        message["id"] = "x"
    part = cast("dict[str, object]", result[1]["parts"][0])
    with pytest.raises(TypeError):
        part["text"] = "x"
    with pytest.raises(TypeError):
        cast("dict[str, dict[str, object]]", result[1])["metadata"].clear()
    assert hash(result) == hash(normalize_messages(full_history()))


def test_normalizing_twice_gives_an_equal_result() -> None:
    once = normalize_messages(full_history())
    twice = normalize_messages(once)
    assert twice == once
    assert type(twice) is tuple
    assert all(type(m) is FrozenDict for m in twice)
    assert normalize_messages(list(twice)) == once


# --------------------------------------------------------------------------------------
# Rejections
# --------------------------------------------------------------------------------------


def user(*parts: object, **fields: object) -> dict[str, object]:
    return {"id": "m1", "role": "user", "parts": list(parts), **fields}


def msg(role: str, *parts: object) -> dict[str, object]:
    return {"id": "m1", "role": role, "parts": list(parts)}


TEXT = {"type": "text", "text": "hi"}
EMPTY: dict[str, object] = {}
OK = user(TEXT)


def _generator() -> Iterator[object]:
    yield OK


class Unhashable:
    """Not a JSON value."""


REJECTIONS: list[Any] = [
    # (messages, path, words the reason must contain)
    pytest.param({"0": OK}, "$", ["array of messages", "an object"], id="dict"),
    pytest.param("[]", "$", ["array of messages", "a string"], id="str"),
    pytest.param(None, "$", ["array of messages", "null"], id="none"),
    pytest.param(_generator(), "$", ["array of messages", "generator"], id="generator"),
    pytest.param(42, "$", ["array of messages", "number"], id="number"),
    pytest.param([OK, "hello"], "$[1]", ["message object", "a string"], id="message-str"),
    pytest.param([None], "$[0]", ["message object", "null"], id="message-null"),
    pytest.param([[OK]], "$[0]", ["message object", "an array"], id="message-list"),
    pytest.param(
        [{"role": "user", "parts": [TEXT]}], "$[0]", ['missing required field "id"'], id="no-id"
    ),
    pytest.param(
        [{"id": "m", "parts": [TEXT]}], "$[0]", ['missing required field "role"'], id="no-role"
    ),
    pytest.param(
        [{"id": "m", "role": "user"}], "$[0]", ['missing required field "parts"'], id="no-parts"
    ),
    pytest.param(
        [OK, {"id": "", "role": "user", "parts": [TEXT]}],
        "$[1].id",
        ["non-empty string", "empty string"],
        id="empty-id",
    ),
    pytest.param(
        [{"id": 7, "role": "user", "parts": [TEXT]}],
        "$[0].id",
        ["non-empty string", "number 7"],
        id="int-id",
    ),
    pytest.param(
        [{"id": None, "role": "user", "parts": [TEXT]}],
        "$[0].id",
        ["non-empty string", "null"],
        id="null-id",
    ),
    pytest.param(
        [{"id": "m", "role": "bot", "parts": [TEXT]}],
        "$[0].role",
        ['"system", "user", "assistant" or "tool"'],
        id="unknown-role",
    ),
    pytest.param(
        [{"id": "m", "role": "User", "parts": [TEXT]}],
        "$[0].role",
        ['"system", "user", "assistant" or "tool"'],
        id="role-case",
    ),
    pytest.param(
        [{"id": "m", "role": 1, "parts": [TEXT]}],
        "$[0].role",
        ['"system", "user", "assistant" or "tool"', "number 1"],
        id="role-number",
    ),
    pytest.param(
        [{"id": "m", "role": "user", "parts": TEXT}],
        "$[0].parts",
        ["array of parts", "an object"],
        id="parts-object",
    ),
    pytest.param(
        [{"id": "m", "role": "user", "parts": "hi"}],
        "$[0].parts",
        ["array of parts", "a string"],
        id="parts-str",
    ),
    pytest.param(
        [msg("user")], "$[0].parts", ["user message needs at least one part"], id="empty-user"
    ),
    pytest.param(
        [msg("system")], "$[0].parts", ["system message needs at least one part"], id="empty-system"
    ),
    pytest.param(
        [msg("tool")], "$[0].parts", ["tool message needs at least one part"], id="empty-tool"
    ),
    pytest.param([user(TEXT, "hi")], "$[0].parts[1]", ["part object", "a string"], id="part-str"),
    pytest.param([user(None)], "$[0].parts[0]", ["part object", "null"], id="part-null"),
    pytest.param(
        [user({"text": "hi"})], "$[0].parts[0]", ['missing required field "type"'], id="no-type"
    ),
    pytest.param(
        [user({"type": None, "text": "hi"})],
        "$[0].parts[0].type",
        ["part type string", "null"],
        id="null-type",
    ),
    pytest.param(
        [user({"type": 3})], "$[0].parts[0].type", ["part type string", "number 3"], id="int-type"
    ),
    pytest.param(
        [user({"type": "image", "url": "x"})],
        "$[0].parts[0].type",
        ['unknown part type "image"', "data-<name>"],
        id="unknown-type",
    ),
    pytest.param(
        [user({"type": "data-", "data": 1})],
        "$[0].parts[0].type",
        ['unknown part type "data-"'],
        id="data-alone",
    ),
    pytest.param(
        [user({"type": "tool-get_weather", "toolCallId": "c", "input": {}})],
        "$[0].parts[0].type",
        ['unknown part type "tool-get_weather"'],
        id="ui-tool-part",
    ),
    # Role / part mismatches
    pytest.param(
        [msg("system", {"type": "file", "mediaType": "a/b", "url": "u"})],
        "$[0].parts[0].type",
        ['system message cannot hold a "file" part'],
        id="system-file",
    ),
    pytest.param(
        [msg("system", {"type": "data-x", "data": 1})],
        "$[0].parts[0].type",
        ['system message cannot hold a "data-x" part'],
        id="system-data",
    ),
    pytest.param(
        [user(TEXT, {"type": "tool-call", "toolCallId": "c", "toolName": "t", "input": {}})],
        "$[0].parts[1].type",
        ['user message cannot hold a "tool-call" part'],
        id="user-tool-call",
    ),
    pytest.param(
        [user({"type": "reasoning", "text": "hmm"})],
        "$[0].parts[0].type",
        ['user message cannot hold a "reasoning" part'],
        id="user-reasoning",
    ),
    pytest.param(
        [msg("tool", TEXT)],
        "$[0].parts[0].type",
        ['tool message cannot hold a "text" part'],
        id="tool-text",
    ),
    pytest.param(
        [
            msg(
                "assistant",
                {"type": "tool-result", "toolCallId": "c", "toolName": "t", "output": 1},
            )
        ],
        "$[0].parts[0].type",
        ['assistant message cannot hold a "tool-result" part'],
        id="assistant-tool-result",
    ),
    # Missing required part fields
    pytest.param(
        [user({"type": "text"})], "$[0].parts[0]", ['missing required field "text"'], id="text.text"
    ),
    pytest.param(
        [msg("assistant", {"type": "reasoning"})],
        "$[0].parts[0]",
        ['missing required field "text"'],
        id="reasoning.text",
    ),
    pytest.param(
        [user({"type": "file", "url": "u"})],
        "$[0].parts[0]",
        ['missing required field "mediaType"'],
        id="file.mediaType",
    ),
    pytest.param(
        [user({"type": "file", "mediaType": "a/b"})],
        "$[0].parts[0]",
        ['missing required field "url"'],
        id="file.url",
    ),
    pytest.param(
        [msg("assistant", {"type": "tool-call", "toolCallId": "c", "toolName": "t"})],
        "$[0].parts[0]",
        ['missing required field "input"'],
        id="tool-call.input",
    ),
    pytest.param(
        [msg("assistant", {"type": "tool-call", "toolName": "t", "input": {}})],
        "$[0].parts[0]",
        ['missing required field "toolCallId"'],
        id="tool-call.toolCallId",
    ),
    pytest.param(
        [msg("tool", {"type": "tool-result", "toolCallId": "c", "toolName": "t"})],
        "$[0].parts[0]",
        ['missing required field "output"'],
        id="tool-result.output",
    ),
    pytest.param(
        [msg("tool", {"type": "tool-result", "toolCallId": "c", "output": 1})],
        "$[0].parts[0]",
        ['missing required field "toolName"'],
        id="tool-result.toolName",
    ),
    pytest.param(
        [user({"type": "data-x", "id": "d"})],
        "$[0].parts[0]",
        ['missing required field "data"'],
        id="data.data",
    ),
    # Wrong types
    pytest.param(
        [user({"type": "text", "text": 5})],
        "$[0].parts[0].text",
        ["expected a string", "number 5"],
        id="text-not-str",
    ),
    pytest.param(
        [user({"type": "text", "text": None})],
        "$[0].parts[0].text",
        ["expected a string", "null"],
        id="text-null",
    ),
    pytest.param(
        [user({"type": "text", "text": ["a"]})],
        "$[0].parts[0].text",
        ["expected a string", "an array"],
        id="text-list",
    ),
    pytest.param(
        [
            msg(
                "tool",
                {
                    "type": "tool-result",
                    "toolCallId": "c",
                    "toolName": "t",
                    "output": 1,
                    "isError": "yes",
                },
            )
        ],
        "$[0].parts[0].isError",
        ["expected a boolean", "a string"],
        id="isError-str",
    ),
    pytest.param(
        [
            msg(
                "tool",
                {
                    "type": "tool-result",
                    "toolCallId": "c",
                    "toolName": "t",
                    "output": 1,
                    "isError": 0,
                },
            )
        ],
        "$[0].parts[0].isError",
        ["expected a boolean", "number 0"],
        id="isError-int",
    ),
    pytest.param(
        [user({"type": "file", "mediaType": "a/b", "url": "u", "filename": None})],
        "$[0].parts[0].filename",
        ["expected a string", "null", "leave an optional field out"],
        id="filename-null",
    ),
    pytest.param(
        [user({"type": "file", "mediaType": "a/b", "url": "u", "filename": 3})],
        "$[0].parts[0].filename",
        ["expected a string", "number 3"],
        id="filename-int",
    ),
    pytest.param(
        [user({"type": "data-x", "data": 1, "id": 2})],
        "$[0].parts[0].id",
        ["expected a string"],
        id="data-id-int",
    ),
    # Empty strings where a value is needed
    pytest.param(
        [user({"type": "file", "mediaType": "", "url": "u"})],
        "$[0].parts[0].mediaType",
        ["non-empty string", "empty string"],
        id="empty-mediaType",
    ),
    pytest.param(
        [user({"type": "file", "mediaType": "a/b", "url": ""})],
        "$[0].parts[0].url",
        ["non-empty string", "empty string"],
        id="empty-url",
    ),
    pytest.param(
        [msg("assistant", {"type": "tool-call", "toolCallId": "", "toolName": "t", "input": {}})],
        "$[0].parts[0].toolCallId",
        ["non-empty string", "empty string"],
        id="empty-toolCallId",
    ),
    pytest.param(
        [msg("assistant", {"type": "tool-call", "toolCallId": "c", "toolName": "", "input": {}})],
        "$[0].parts[0].toolName",
        ["non-empty string", "empty string"],
        id="empty-toolName-call",
    ),
    pytest.param(
        [msg("tool", {"type": "tool-result", "toolCallId": "", "toolName": "t", "output": 1})],
        "$[0].parts[0].toolCallId",
        ["non-empty string", "empty string"],
        id="empty-toolCallId-result",
    ),
    pytest.param(
        [msg("tool", {"type": "tool-result", "toolCallId": "c", "toolName": "", "output": 1})],
        "$[0].parts[0].toolName",
        ["non-empty string", "empty string"],
        id="empty-toolName-result",
    ),
    # metadata and providerMetadata
    pytest.param(
        [user(TEXT, metadata=[1])],
        "$[0].metadata",
        ["JSON object", "an array"],
        id="metadata-list",
    ),
    pytest.param(
        [user(TEXT, metadata="x")],
        "$[0].metadata",
        ["JSON object", "a string"],
        id="metadata-str",
    ),
    pytest.param(
        [user(TEXT, metadata=None)],
        "$[0].metadata",
        ["JSON object", "null", "leave an optional field out"],
        id="metadata-null",
    ),
    pytest.param(
        [user({"type": "text", "text": "x", "providerMetadata": {"openai": 1}})],
        "$[0].parts[0].providerMetadata",
        ["object of objects"],
        id="providerMetadata-inner-number",
    ),
    pytest.param(
        [user({"type": "text", "text": "x", "providerMetadata": {"openai": [EMPTY]}})],
        "$[0].parts[0].providerMetadata",
        ["object of objects"],
        id="providerMetadata-inner-list",
    ),
    pytest.param(
        [user({"type": "text", "text": "x", "providerMetadata": "openai"})],
        "$[0].parts[0].providerMetadata",
        ["object of objects"],
        id="providerMetadata-str",
    ),
    pytest.param(
        [user({"type": "file", "mediaType": "a/b", "url": "u", "providerMetadata": None})],
        "$[0].parts[0].providerMetadata",
        ["object of objects", "leave an optional field out"],
        id="providerMetadata-null",
    ),
    # Not JSON, deep inside
    pytest.param(
        [
            OK,
            msg(
                "assistant",
                TEXT,
                {
                    "type": "tool-call",
                    "toolCallId": "c",
                    "toolName": "t",
                    "input": {"items": [1, 2, math.nan]},
                },
            ),
        ],
        "$[1].parts[1].input.items[2]",
        ["NaN"],
        id="nan-in-input",
    ),
    pytest.param(
        [
            msg(
                "assistant",
                {"type": "tool-call", "toolCallId": "c", "toolName": "t", "input": {"x": math.inf}},
            )
        ],
        "$[0].parts[0].input.x",
        ["not valid JSON"],
        id="inf-in-input",
    ),
    pytest.param(
        [user(TEXT, metadata={"tags": {"a", "b"}})],
        "$[0].metadata.tags",
        ["set", "not a JSON value"],
        id="set-in-metadata",
    ),
    pytest.param(
        [user(TEXT, metadata={"when": Unhashable()})],
        "$[0].metadata.when",
        ["Unhashable", "not a JSON value"],
        id="object-in-metadata",
    ),
    pytest.param(
        [user(TEXT, metadata={1: "x"})],
        "$[0].metadata",
        ["JSON keys must be str"],
        id="int-key-in-metadata",
    ),
    pytest.param(
        [msg("tool", {"type": "tool-result", "toolCallId": "c", "toolName": "t", "output": b"x"})],
        "$[0].parts[0].output",
        ["bytes", "not a JSON value"],
        id="bytes-in-output",
    ),
    pytest.param(
        [user({"type": "data-x", "data": {"deep": [{"odd key": 10**400}]}})],
        '$[0].parts[0].data.deep[0]["odd key"]',
        ["safe range"],
        id="huge-int-in-data",
    ),
    pytest.param(
        [user({"type": "text", "text": "a\ud800b"})],
        "$[0].parts[0].text",
        ["lone surrogate"],
        id="lone-surrogate",
    ),
]


@pytest.mark.parametrize(("messages", "path", "words"), REJECTIONS)
def test_rejections_name_the_path_and_the_reason(
    messages: object, path: str, words: list[str]
) -> None:
    with pytest.raises(ValidationError) as caught:
        normalize_messages(cast("list[object]", messages))
    error = caught.value
    assert error.path == path
    for word in words:
        assert word in error.reason, (word, error.reason)
    assert str(error) == f"{path}: {error.reason}"
    assert isinstance(error, ValueError)


def test_first_error_in_document_order_wins() -> None:
    # Two bad messages: the first one is reported.
    messages: list[object] = [OK, user({"type": "text"}), {"id": "", "role": "x", "parts": 1}]
    with pytest.raises(ValidationError) as caught:
        normalize_messages(messages)
    assert caught.value.path == "$[1].parts[0]"


def test_json_errors_anywhere_are_found_before_shape_errors() -> None:
    # The whole history crosses the JSON boundary first: a NaN in a later message is
    # reported even though an earlier message has the wrong shape.
    messages: list[object] = [user({"type": "text"}), user(TEXT, metadata={"x": math.nan})]
    with pytest.raises(ValidationError) as caught:
        normalize_messages(messages)
    assert caught.value.path == "$[1].metadata.x"


# --------------------------------------------------------------------------------------
# JSON limits over the whole history
# --------------------------------------------------------------------------------------


def small(index: int) -> dict[str, object]:
    return {"id": f"m{index}", "role": "user", "parts": [{"type": "text", "text": "hi"}]}


# Values in a history of n small messages: the array, then per message the object, id,
# role, parts array, part object, type and text.
VALUES_PER_MESSAGE = 7


def test_many_small_messages_exceed_max_values_together() -> None:
    count = JSONLimits().max_values // VALUES_PER_MESSAGE + 1
    history = [small(i) for i in range(count)]
    for message in history[:3]:
        assert thaw(normalize_messages([message])) == [message]
    with pytest.raises(LimitExceededError) as caught:
        normalize_messages(history)
    error = caught.value
    assert error.limit == "max_values"
    assert error.limit_value == JSONLimits().max_values
    assert error.path.startswith("$[")
    # One message fewer than the limit allows passes.
    fitting = (JSONLimits().max_values - 1) // VALUES_PER_MESSAGE
    assert len(normalize_messages(history[:fitting])) == fitting


@pytest.mark.parametrize("count", [1, 3, 10])
def test_custom_max_values_is_exact(count: int) -> None:
    history = [small(i) for i in range(count)]
    total = 1 + VALUES_PER_MESSAGE * count
    assert thaw(normalize_messages(history, limits=JSONLimits(max_values=total))) == history
    with pytest.raises(LimitExceededError) as caught:
        normalize_messages(history, limits=JSONLimits(max_values=total - 1))
    assert caught.value.limit == "max_values"
    assert caught.value.limit_value == total - 1


def test_custom_max_chars_is_exact() -> None:
    history = full_history()
    size = json_size(history)
    assert size == len(json.dumps(history, separators=(",", ":"), ensure_ascii=False))
    assert thaw(normalize_messages(history, limits=JSONLimits(max_chars=size))) == history
    with pytest.raises(LimitExceededError) as caught:
        normalize_messages(history, limits=JSONLimits(max_chars=size - 1))
    assert caught.value.limit == "max_chars"
    assert caught.value.limit_value == size - 1


def test_custom_max_chars_counts_the_history_not_each_message() -> None:
    history = [small(i) for i in range(50)]
    largest = max(json_size(m) for m in history)
    limits = JSONLimits(max_chars=largest + 2)
    for message in history:
        normalize_messages([message], limits=limits)
    with pytest.raises(LimitExceededError) as caught:
        normalize_messages(history, limits=limits)
    assert caught.value.limit == "max_chars"


def test_custom_max_depth_counts_from_the_history_array() -> None:
    # array(1) > message(2) > parts(3) > part(4) > input(5) > {"a": ...}(6)
    def history(depth_of_input: int) -> list[object]:
        value: object = {}
        for _ in range(depth_of_input - 1):
            value = {"a": value}
        part = {"type": "tool-call", "toolCallId": "c", "toolName": "t", "input": value}
        return [msg("assistant", part)]

    assert len(normalize_messages(history(1), limits=JSONLimits(max_depth=5))) == 1
    with pytest.raises(LimitExceededError) as caught:
        normalize_messages(history(2), limits=JSONLimits(max_depth=5))
    assert caught.value.limit == "max_depth"
    assert caught.value.path == "$[0].parts[0].input.a"


def test_default_limits_reject_deep_nesting() -> None:
    value: object = 1
    for _ in range(70):
        value = [value]
    part = {"type": "data-deep", "data": value}
    with pytest.raises(LimitExceededError) as caught:
        normalize_messages([user(part)])
    assert caught.value.limit == "max_depth"
    assert caught.value.limit_value == 64


def test_a_cycle_is_a_validation_error() -> None:
    metadata: dict[str, object] = {}
    metadata["self"] = metadata
    with pytest.raises(ValidationError) as caught:
        normalize_messages([user(TEXT, metadata=metadata)])
    assert "cycle" in caught.value.reason
    assert caught.value.path.startswith("$[0].metadata")
