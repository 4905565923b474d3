"""create_chat_stream snapshots the request at the call; stream_chat at the first iteration."""

from __future__ import annotations

import copy
import math
from collections.abc import AsyncIterator, Mapping
from typing import Any, cast

import anyio
import pytest

from ai_chat import (
    AbortSignal,
    AIChatAdapter,
    ChatStream,
    ConfigurationError,
    LimitExceededError,
    ValidationError,
    create_chat_stream,
    stream_chat,
)
from ai_chat.limits import FrozenDict, JSONLimits
from ai_chat.types import ChatEvent, ChatRequest

HANG_GUARD = 10.0

FINISH: dict[str, object] = {"type": "finish", "finishReason": "stop"}


class RecordingAdapter:
    """Records every stream() call and the request it received; answers with finish."""

    def __init__(self) -> None:
        self.requests: list[ChatRequest] = []

    def stream(
        self, request: ChatRequest, signal: AbortSignal
    ) -> AsyncIterator[Mapping[str, object]]:
        self.requests.append(request)
        return self._events()

    async def _events(self) -> AsyncIterator[Mapping[str, object]]:
        yield {"type": "start"}
        yield FINISH


def message(text: str = "hi", id: str = "u1") -> dict[str, Any]:
    return {"id": id, "role": "user", "parts": [{"type": "text", "text": text}]}


def tool(name: str) -> dict[str, Any]:
    return {
        "name": name,
        "description": f"the {name} tool",
        "inputSchema": {"type": "object", "properties": {"q": {"type": "string"}}},
    }


def thaw(value: object) -> object:
    if isinstance(value, dict):
        return {k: thaw(v) for k, v in cast("dict[str, object]", value).items()}
    if isinstance(value, list | tuple):
        return [thaw(v) for v in cast("tuple[object, ...]", value)]
    return value


async def drain(stream: ChatStream) -> list[ChatEvent]:
    events: list[ChatEvent] = []
    with anyio.fail_after(HANG_GUARD):
        async for event in stream:
            events.append(event)
    return events


# --------------------------------------------------------------------------------------
# Invalid requests raise at the call, before the adapter is touched
# --------------------------------------------------------------------------------------

M = [message()]
TOOLS = [tool("search"), tool("weather")]

EMPTY: dict[str, object] = {}

INVALID_SHAPES: list[Any] = [
    # (request, error type, path, words in the reason)
    pytest.param([], ValidationError, "$", ["request object"], id="not-an-object"),
    pytest.param(None, ValidationError, "$", ["request object"], id="none"),
    pytest.param({}, ValidationError, "$", ['missing required field "messages"'], id="no-messages"),
    pytest.param(
        {"tools": TOOLS},
        ValidationError,
        "$",
        ['missing required field "messages"'],
        id="only-tools",
    ),
    pytest.param(
        {"messages": M, "model": "x"},
        ValidationError,
        "$.model",
        ["unknown request field", "messages, tools, parameters"],
        id="unknown-key",
    ),
    pytest.param(
        {"messages": M, "odd key": 1},
        ValidationError,
        '$["odd key"]',
        ["unknown request field"],
        id="unknown-odd-key",
    ),
    pytest.param(
        {"messages": {"0": message()}},
        ValidationError,
        "$.messages",
        ["array of messages"],
        id="messages-object",
    ),
    pytest.param(
        {
            "messages": [
                message(),
                {"id": "a", "role": "user", "parts": [{"type": "text", "text": 1}]},
            ]
        },
        ValidationError,
        "$.messages[1].parts[0].text",
        ["expected a string"],
        id="message-text",
    ),
    pytest.param(
        {"messages": [{"id": "a", "role": "user", "parts": [{"type": "text", "text": math.nan}]}]},
        ValidationError,
        "$.messages[0].parts[0].text",
        ["NaN"],
        id="message-nan",
    ),
    # Tools
    pytest.param(
        {"messages": M, "tools": {"search": tool("search")}},
        ValidationError,
        "$.tools",
        ["array of tool definitions"],
        id="tools-object",
    ),
    pytest.param(
        {"messages": M, "tools": None},
        ValidationError,
        "$.tools",
        ["array of tool definitions", "null"],
        id="tools-null",
    ),
    pytest.param(
        {"messages": M, "tools": [tool("a"), "b"]},
        ValidationError,
        "$.tools[1]",
        ["tool definition", "a string"],
        id="tool-str",
    ),
    pytest.param(
        {"messages": M, "tools": [tool("a"), {"name": "", "inputSchema": EMPTY}]},
        ValidationError,
        "$.tools[1].name",
        ["non-empty string", "empty string"],
        id="tool-empty-name",
    ),
    pytest.param(
        {"messages": M, "tools": [{"inputSchema": EMPTY}]},
        ValidationError,
        "$.tools[0]",
        ['missing required field "name"'],
        id="tool-no-name",
    ),
    pytest.param(
        {"messages": M, "tools": [{"name": 3, "inputSchema": EMPTY}]},
        ValidationError,
        "$.tools[0].name",
        ["non-empty string"],
        id="tool-int-name",
    ),
    pytest.param(
        {"messages": M, "tools": [{"name": "a"}]},
        ValidationError,
        "$.tools[0]",
        ['missing required field "inputSchema"'],
        id="tool-no-schema",
    ),
    pytest.param(
        {"messages": M, "tools": [{"name": "a", "inputSchema": "object"}]},
        ValidationError,
        "$.tools[0].inputSchema",
        ["JSON object", "a string"],
        id="tool-schema-str",
    ),
    pytest.param(
        {"messages": M, "tools": [{"name": "a", "inputSchema": None}]},
        ValidationError,
        "$.tools[0].inputSchema",
        ["JSON object", "null"],
        id="tool-schema-null",
    ),
    pytest.param(
        {"messages": M, "tools": [{"name": "a", "inputSchema": EMPTY, "description": 5}]},
        ValidationError,
        "$.tools[0].description",
        ["expected a string", "number 5"],
        id="tool-description-int",
    ),
    pytest.param(
        {"messages": M, "tools": [{"name": "a", "inputSchema": EMPTY, "description": None}]},
        ValidationError,
        "$.tools[0].description",
        ["expected a string", "leave an optional field out"],
        id="tool-description-null",
    ),
    pytest.param(
        {"messages": M, "tools": [tool("a"), tool("b"), tool("a")]},
        ValidationError,
        "$.tools[2].name",
        ['duplicate tool name "a"'],
        id="tool-duplicate",
    ),
    pytest.param(
        {"messages": M, "tools": [{"name": "a", "inputSchema": {"x": {1, 2}}}]},
        ValidationError,
        "$.tools[0].inputSchema.x",
        ["not a JSON value"],
        id="tool-schema-set",
    ),
    # Parameters
    pytest.param(
        {"messages": M, "parameters": [("temperature", 1)]},
        ValidationError,
        "$.parameters",
        ["parameters object"],
        id="parameters-list",
    ),
    pytest.param(
        {"messages": M, "parameters": None},
        ValidationError,
        "$.parameters",
        ["parameters object", "null"],
        id="parameters-null",
    ),
]

BAD_PARAMETERS: list[tuple[str, object, str]] = [
    ("model", "", "non-empty string"),
    ("model", 4, "non-empty string"),
    ("model", None, "leave an optional field out"),
    ("temperature", "0.2", "a number"),
    ("temperature", True, "a number"),
    ("temperature", None, "leave an optional field out"),
    ("topP", "high", "a number"),
    ("topP", [0.9], "a number"),
    ("topK", -1, "non-negative integer"),
    ("topK", 2.0, "non-negative integer"),
    ("topK", False, "non-negative integer"),
    ("presencePenalty", "0", "a number"),
    ("frequencyPenalty", {}, "a number"),
    ("maxOutputTokens", 0, "positive integer"),
    ("maxOutputTokens", -5, "positive integer"),
    ("maxOutputTokens", 1.5, "positive integer"),
    ("maxOutputTokens", "512", "positive integer"),
    ("maxOutputTokens", True, "positive integer"),
    ("stopSequences", "\n\n", "array of strings"),
    ("stopSequences", ["a", 1], "array of strings"),
    ("stopSequences", [None], "array of strings"),
    ("seed", 1.5, "an integer"),
    ("seed", "7", "an integer"),
    ("seed", True, "an integer"),
    ("providerOptions", [], "object of objects"),
    ("providerOptions", {"openai": 1}, "object of objects"),
    ("providerOptions", {"openai": {}, "anthropic": "x"}, "object of objects"),
    ("providerOptions", None, "leave an optional field out"),
]

INVALID_PARAMETERS: list[Any] = [
    pytest.param(
        {"messages": M, "parameters": {"temperature": 0.2, name: value}},
        ValidationError,
        f"$.parameters.{name}",
        [words],
        id=f"{name}={value!r}",
    )
    for name, value, words in BAD_PARAMETERS
]

INVALID_TOOL_CHOICE: list[Any] = [
    pytest.param(
        {"messages": M, "parameters": {"temperature": math.nan}},
        ValidationError,
        "$.parameters.temperature",
        ["NaN"],
        id="temperature-nan",
    ),
    # toolChoice
    pytest.param(
        {"messages": M, "tools": TOOLS, "parameters": {"toolChoice": "any"}},
        ValidationError,
        "$.parameters.toolChoice",
        ['"auto", "none", "required"', '"any"'],
        id="toolChoice-unknown-str",
    ),
    pytest.param(
        {"messages": M, "parameters": {"toolChoice": "required"}},
        ValidationError,
        "$.parameters.toolChoice",
        ['"required" needs at least one tool'],
        id="toolChoice-required-without-tools",
    ),
    pytest.param(
        {"messages": M, "tools": [], "parameters": {"toolChoice": "required"}},
        ValidationError,
        "$.parameters.toolChoice",
        ['"required" needs at least one tool'],
        id="toolChoice-required-empty-tools",
    ),
    pytest.param(
        {
            "messages": M,
            "tools": TOOLS,
            "parameters": {"toolChoice": {"type": "tool", "toolName": "calendar"}},
        },
        ValidationError,
        "$.parameters.toolChoice.toolName",
        ['no tool named "calendar"'],
        id="toolChoice-unknown-tool",
    ),
    pytest.param(
        {"messages": M, "parameters": {"toolChoice": {"type": "tool", "toolName": "search"}}},
        ValidationError,
        "$.parameters.toolChoice.toolName",
        ['no tool named "search"'],
        id="toolChoice-tool-without-tools",
    ),
    pytest.param(
        {"messages": M, "tools": TOOLS, "parameters": {"toolChoice": {"type": "tool"}}},
        ValidationError,
        "$.parameters.toolChoice.toolName",
        ["non-empty string"],
        id="toolChoice-no-toolName",
    ),
    pytest.param(
        {
            "messages": M,
            "tools": TOOLS,
            "parameters": {"toolChoice": {"type": "tool", "toolName": ""}},
        },
        ValidationError,
        "$.parameters.toolChoice.toolName",
        ["non-empty string"],
        id="toolChoice-empty-toolName",
    ),
    pytest.param(
        {"messages": M, "tools": TOOLS, "parameters": {"toolChoice": {"type": "auto"}}},
        ValidationError,
        "$.parameters.toolChoice",
        ['"auto", "none", "required"', "an object"],
        id="toolChoice-object-auto",
    ),
    pytest.param(
        {"messages": M, "tools": TOOLS, "parameters": {"toolChoice": {"toolName": "search"}}},
        ValidationError,
        "$.parameters.toolChoice",
        ['"auto", "none", "required"'],
        id="toolChoice-object-without-type",
    ),
    pytest.param(
        {"messages": M, "tools": TOOLS, "parameters": {"toolChoice": ["auto"]}},
        ValidationError,
        "$.parameters.toolChoice",
        ['"auto", "none", "required"', "an array"],
        id="toolChoice-list",
    ),
    pytest.param(
        {"messages": M, "tools": TOOLS, "parameters": {"toolChoice": None}},
        ValidationError,
        "$.parameters.toolChoice",
        ['"auto", "none", "required"', "null"],
        id="toolChoice-null",
    ),
    pytest.param(
        {"messages": M, "tools": TOOLS, "parameters": {"toolChoice": "AUTO"}},
        ValidationError,
        "$.parameters.toolChoice",
        ['"AUTO"'],
        id="toolChoice-case",
    ),
]


INVALID = [*INVALID_SHAPES, *INVALID_PARAMETERS, *INVALID_TOOL_CHOICE]


@pytest.mark.parametrize(("request_", "error_type", "path", "words"), INVALID)
def test_invalid_request_raises_at_the_call_without_starting_the_adapter(
    request_: object, error_type: type[ValidationError], path: str, words: list[str]
) -> None:
    adapter = RecordingAdapter()
    with pytest.raises(error_type) as caught:
        create_chat_stream(adapter, request_)
    assert caught.value.path == path
    for word in words:
        assert word in caught.value.reason, (word, caught.value.reason)
    assert adapter.requests == []


@pytest.mark.parametrize(
    ("request_", "path_prefix"),
    [
        pytest.param({"messages": [message("x" * 200)]}, "$.messages", id="messages"),
        pytest.param(
            {"messages": M, "tools": [tool("a"), {**tool("b"), "description": "x" * 200}]},
            "$.tools",
            id="tools",
        ),
        pytest.param(
            {"messages": M, "parameters": {"model": "m" * 200}}, "$.parameters", id="parameters"
        ),
    ],
)
def test_limits_raise_at_the_call_with_the_path(request_: object, path_prefix: str) -> None:
    adapter = RecordingAdapter()
    with pytest.raises(LimitExceededError) as caught:
        create_chat_stream(adapter, request_, limits=JSONLimits(max_chars=150))
    assert caught.value.limit == "max_chars"
    assert caught.value.path.startswith(path_prefix), caught.value.path
    assert adapter.requests == []


def test_limits_apply_to_messages_tools_and_parameters_each_on_its_own() -> None:
    # Each part fits in 40 values; together they would not.
    messages = [message(str(i), id=f"m{i}") for i in range(5)]  # 1 + 5 * 7 = 36 values
    tools = [tool("a"), tool("b"), tool("c")]  # 1 + 3 * 8 = 25 values
    parameters = {"stopSequences": ["x"] * 30}  # 1 + 1 + 30 = 32 values
    request = {"messages": messages, "tools": tools, "parameters": parameters}
    stream = create_chat_stream(RecordingAdapter(), request, limits=JSONLimits(max_values=40))
    assert thaw(stream.request) == request
    with pytest.raises(LimitExceededError) as caught:
        create_chat_stream(RecordingAdapter(), request, limits=JSONLimits(max_values=35))
    assert caught.value.path.startswith("$.messages")
    assert caught.value.limit == "max_values"


def test_the_default_message_limits_apply_to_the_request() -> None:
    request = {"messages": [message(id=f"m{i}") for i in range(2000)]}
    adapter = RecordingAdapter()
    with pytest.raises(LimitExceededError) as caught:
        create_chat_stream(adapter, request)
    assert caught.value.limit == "max_values"
    assert caught.value.path.startswith("$.messages[")
    assert adapter.requests == []


# --------------------------------------------------------------------------------------
# Valid requests
# --------------------------------------------------------------------------------------

GOOD_PARAMETERS: list[dict[str, object]] = [
    {"model": "gpt-4.1-mini"},
    {"temperature": 0},
    {"temperature": 0.2, "topP": 1, "topK": 0, "presencePenalty": -0.5, "frequencyPenalty": 1.5},
    {"maxOutputTokens": 1},
    {"stopSequences": []},
    {"stopSequences": ["\n\n", "END"]},
    {"seed": -7},
    {"seed": 0},
    {"providerOptions": {}},
    {"providerOptions": {"openai": {"store": False}, "anthropic": {}, "gemini": {"x": [1]}}},
    {"toolChoice": "auto"},
    {"toolChoice": "none"},
    {"toolChoice": "required"},
    {"toolChoice": {"type": "tool", "toolName": "weather"}},
    {"toolChoice": {"type": "tool", "toolName": "search", "extra": True}},
    {"customThing": {"nested": [1, "two", None]}, "x-vendor": "kept", "temperature": 1},
]


@pytest.mark.parametrize("parameters", GOOD_PARAMETERS, ids=lambda p: ",".join(p))
def test_valid_parameters_are_kept_as_given(parameters: dict[str, object]) -> None:
    request = {"messages": M, "tools": TOOLS, "parameters": parameters}
    stream = create_chat_stream(RecordingAdapter(), request)
    snapshot = stream.request
    assert type(snapshot["parameters"]) is FrozenDict
    assert thaw(cast(object, snapshot["parameters"])) == parameters
    assert thaw(snapshot) == request


def test_tools_and_parameters_are_always_present() -> None:
    stream = create_chat_stream(RecordingAdapter(), {"messages": M})
    snapshot = stream.request
    assert type(snapshot) is FrozenDict
    assert list(snapshot.keys()) == ["messages", "tools", "parameters"]
    assert snapshot["tools"] == ()
    assert type(snapshot["tools"]) is tuple
    assert snapshot["parameters"] == {}
    assert type(snapshot["parameters"]) is FrozenDict


def test_empty_tools_and_parameters_given_explicitly() -> None:
    stream = create_chat_stream(RecordingAdapter(), {"messages": M, "tools": [], "parameters": {}})
    assert stream.request["tools"] == ()
    assert stream.request["parameters"] == FrozenDict()


def test_a_frozen_request_is_accepted_again() -> None:
    first = create_chat_stream(RecordingAdapter(), {"messages": M, "tools": TOOLS})
    second = create_chat_stream(RecordingAdapter(), first.request)
    assert second.request == first.request


# --------------------------------------------------------------------------------------
# The snapshot is frozen and detached
# --------------------------------------------------------------------------------------


def full_request() -> dict[str, Any]:
    return {
        "messages": [
            {"id": "s", "role": "system", "parts": [{"type": "text", "text": "be brief"}]},
            message("what is the weather?"),
        ],
        "tools": [tool("weather"), tool("search")],
        "parameters": {
            "model": "m1",
            "temperature": 0.2,
            "stopSequences": ["a"],
            "toolChoice": {"type": "tool", "toolName": "weather"},
            "providerOptions": {"openai": {"store": False}},
            "custom": {"list": [1, 2]},
        },
    }


@pytest.mark.anyio
async def test_the_adapter_receives_the_request_as_it_was_at_the_call() -> None:
    request = full_request()
    expected = copy.deepcopy(request)
    adapter = RecordingAdapter()
    stream = create_chat_stream(adapter, request)

    # Mutate everything the caller still holds.
    messages, tools, parameters = request["messages"], request["tools"], request["parameters"]
    messages.append(message("late", id="late"))
    messages[1]["parts"][0]["text"] = "changed"
    messages[1]["parts"].append({"type": "text", "text": "more"})
    messages[0]["id"] = "changed"
    tools[0]["name"] = "changed"
    tools[0]["inputSchema"]["properties"]["q"]["type"] = "number"
    tools.pop()
    parameters["temperature"] = 1.0
    parameters["stopSequences"].append("b")
    parameters["providerOptions"]["openai"]["store"] = True
    parameters["custom"]["list"].clear()
    parameters["new"] = 1
    request["messages"] = []
    request["extra"] = "late"

    assert adapter.requests == []
    events = await drain(stream)
    assert [e["type"] for e in events] == ["start", "finish"]
    assert len(adapter.requests) == 1
    received = adapter.requests[0]
    assert thaw(received) == expected
    assert received == stream.request


@pytest.mark.anyio
async def test_the_snapshot_is_deeply_frozen() -> None:
    adapter = RecordingAdapter()
    stream = create_chat_stream(adapter, full_request())
    await drain(stream)
    received = adapter.requests[0]
    assert type(received) is FrozenDict
    assert type(received["messages"]) is tuple
    assert type(received["tools"]) is tuple
    assert type(received["messages"][1]["parts"]) is tuple
    assert type(received["parameters"]["stopSequences"]) is tuple
    with pytest.raises(TypeError):
        cast("dict[str, object]", received)["messages"] = ()
    with pytest.raises(TypeError):
        cast("dict[str, object]", received["parameters"])["temperature"] = 1
    with pytest.raises(TypeError):
        cast("dict[str, object]", received["tools"][0]["inputSchema"]).clear()
    with pytest.raises(TypeError):
        cast("dict[str, object]", received["messages"][0]).update(id="x")
    assert hash(received) == hash(stream.request)


# --------------------------------------------------------------------------------------
# stream_chat: snapshot on first iteration
# --------------------------------------------------------------------------------------


@pytest.mark.anyio
async def test_stream_chat_sees_mutations_made_before_the_first_iteration() -> None:
    request = full_request()
    adapter = RecordingAdapter()
    stream = stream_chat(adapter, request)
    request["messages"].append(message("added later", id="late"))
    request["parameters"]["temperature"] = 0.9
    expected = copy.deepcopy(request)

    with anyio.fail_after(HANG_GUARD):
        async for event in stream:
            # Mutations after the first iteration are no longer seen.
            request["parameters"]["temperature"] = 0.1
            assert event["type"] in ("start", "finish")

    assert len(adapter.requests) == 1
    assert thaw(adapter.requests[0]) == expected
    assert adapter.requests[0]["parameters"]["temperature"] == 0.9


@pytest.mark.anyio
async def test_stream_chat_raises_invalid_input_at_iteration_not_at_the_call() -> None:
    adapter = RecordingAdapter()
    request: dict[str, Any] = {"messages": M, "parameters": {"temperature": "hot"}}
    stream = stream_chat(adapter, request)  # no error yet
    with pytest.raises(ValidationError) as caught, anyio.fail_after(HANG_GUARD):
        async for _ in stream:
            pytest.fail("no event may be delivered")
    assert caught.value.path == "$.parameters.temperature"
    assert adapter.requests == []


@pytest.mark.anyio
async def test_stream_chat_invalid_input_fixed_before_iteration_passes() -> None:
    adapter = RecordingAdapter()
    request: dict[str, Any] = {"messages": M, "parameters": {"temperature": "hot"}}
    stream = stream_chat(adapter, request)
    request["parameters"]["temperature"] = 0.5
    events = await drain(stream)
    assert [e["type"] for e in events] == ["start", "finish"]
    assert adapter.requests[0]["parameters"] == {"temperature": 0.5}


@pytest.mark.anyio
async def test_stream_chat_limit_errors_raise_at_iteration() -> None:
    adapter = RecordingAdapter()
    stream = stream_chat(
        adapter, {"messages": [message("x" * 500)]}, limits=JSONLimits(max_chars=100)
    )
    with pytest.raises(LimitExceededError), anyio.fail_after(HANG_GUARD):
        async for _ in stream:
            pytest.fail("no event may be delivered")
    assert adapter.requests == []


def test_create_chat_stream_is_not_lazy_but_stream_chat_is() -> None:
    bad: dict[str, object] = {"messages": [{"id": "", "role": "user", "parts": ["x"]}]}
    with pytest.raises(ValidationError):
        create_chat_stream(RecordingAdapter(), bad)
    stream_chat(RecordingAdapter(), bad)  # the call itself does not look at the request


# --------------------------------------------------------------------------------------
# Configuration errors at the call
# --------------------------------------------------------------------------------------

FACTORIES = [
    pytest.param(create_chat_stream, id="create_chat_stream"),
    pytest.param(stream_chat, id="stream_chat"),
]


@pytest.mark.parametrize("factory", FACTORIES)
@pytest.mark.parametrize("value", [0, -1, 10_000_001, 1.5, 1000.0, True, None, "100"])
def test_max_response_chars_out_of_range(factory: Any, value: object) -> None:
    adapter = RecordingAdapter()
    with pytest.raises(ConfigurationError) as caught:
        factory(adapter, {"messages": M}, max_response_chars=value)
    assert caught.value.parameter == "max_response_chars"
    assert caught.value.value is value
    assert "10,000,000" in caught.value.expected
    assert isinstance(caught.value, ValueError)
    assert adapter.requests == []


@pytest.mark.parametrize("factory", FACTORIES)
@pytest.mark.parametrize("value", [1, 10_000_000])
def test_max_response_chars_bounds_are_allowed(factory: Any, value: int) -> None:
    stream = factory(RecordingAdapter(), {"messages": M}, max_response_chars=value)
    assert isinstance(stream, ChatStream)


@pytest.mark.parametrize("factory", FACTORIES)
@pytest.mark.parametrize(
    "value", [0, 0.0, -1, math.nan, math.inf, -math.inf, 61, 60.001, True, "1", None]
)
def test_close_timeout_out_of_range(factory: Any, value: object) -> None:
    with pytest.raises(ConfigurationError) as caught:
        factory(RecordingAdapter(), {"messages": M}, close_timeout=value)
    assert caught.value.parameter == "close_timeout"


@pytest.mark.parametrize("factory", FACTORIES)
@pytest.mark.parametrize("value", [0.001, 1, 60, 60.0])
def test_close_timeout_bounds_are_allowed(factory: Any, value: float) -> None:
    assert isinstance(factory(RecordingAdapter(), {"messages": M}, close_timeout=value), ChatStream)


class NotCallableStream:
    stream = "not a method"


@pytest.mark.parametrize("factory", FACTORIES)
@pytest.mark.parametrize(
    "adapter",
    [
        pytest.param(object(), id="object"),
        pytest.param(None, id="none"),
        pytest.param("adapter", id="str"),
        pytest.param(NotCallableStream(), id="stream-attribute"),
        pytest.param({"stream": lambda: None}, id="dict"),
    ],
)
def test_a_non_adapter_is_a_configuration_error(factory: Any, adapter: object) -> None:
    with pytest.raises(ConfigurationError) as caught:
        factory(cast(AIChatAdapter, adapter), {"messages": M})
    assert caught.value.parameter == "adapter"
    assert caught.value.value is adapter


def test_configuration_is_checked_before_the_request() -> None:
    with pytest.raises(ConfigurationError):
        create_chat_stream(RecordingAdapter(), {"bad": 1}, max_response_chars=0)
