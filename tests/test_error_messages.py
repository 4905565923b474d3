"""Hostile values in error messages (issue 22, points 3, 4 and 7, in the core modules).

Each reproducer gets its typed error, never a ValueError or TypeError from formatting the
message, and a message that is short (the values it echoes are cut to 200 characters) and
encodable as UTF-8, so that it can reach a log or a JSON response as it is.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable, Mapping
from typing import Any

import anyio
import pytest

from ai_chat import (
    AbortSignal,
    AdapterError,
    AIChatError,
    ConfigurationError,
    LimitExceededError,
    ProtocolError,
    ProviderError,
    StreamClosedError,
    ValidationError,
    create_chat_stream,
    normalize_messages,
)
from ai_chat._describe import MAX_MESSAGE_CHARS
from ai_chat._errors import (
    ConversationNotFoundError,
    DuplicateMessageError,
    VersionConflictError,
)
from ai_chat.adapters import ScriptedAdapter
from ai_chat.limits import JSONLimits, freeze_json
from ai_chat.types import ChatRequest

HUGE_INT = 10**5000  # str() of it raises ValueError (over 4,300 digits)
MEGA = "r" * 1_000_000
# A message echoing one value: its fixed words, a path and the value cut to 200 chars.
SHORT = 500
# Limits that let a megabyte string through the JSON boundary to the check that echoes it.
ROOMY = JSONLimits(max_chars=2_000_000)

NO_SCHEMA: dict[str, object] = {}
USER = {"id": "u1", "role": "user", "parts": [{"type": "text", "text": "hi"}]}


def check(error: BaseException, *, limit: int = SHORT) -> str:
    """The message of ``error``: bounded and encodable, or the test fails."""
    assert isinstance(error, AIChatError)
    message = str(error)
    assert len(message) <= limit, (len(message), message[:300])
    json.dumps(message, ensure_ascii=False).encode("utf-8")
    return message


# --- point 3: integers over 4,300 digits ---------------------------------------------------


def test_normalize_messages_of_a_huge_int() -> None:
    with pytest.raises(ValidationError) as caught:
        normalize_messages(HUGE_INT)  # type: ignore[arg-type]
    assert "an integer of about 5,000 digits" in check(caught.value)
    assert caught.value.path == "$"


@pytest.mark.parametrize(
    ("request_value", "path"),
    [
        (HUGE_INT, "$"),
        ({"messages": [USER], "tools": HUGE_INT}, "$.tools"),
        ({"messages": [USER], "parameters": HUGE_INT}, "$.parameters"),
        ({"messages": [USER], HUGE_INT: 1}, "$"),
        ({"messages": HUGE_INT}, "$.messages"),
    ],
    ids=["request", "tools", "parameters", "unknown-field", "messages"],
)
def test_request_checks_of_a_huge_int(request_value: object, path: str) -> None:
    with pytest.raises(ValidationError) as caught:
        create_chat_stream(ScriptedAdapter([]), request_value)
    assert "about 5,000 digits" in check(caught.value)
    assert caught.value.path == path


def test_an_object_key_that_is_a_huge_int() -> None:
    with pytest.raises(ValidationError) as caught:
        freeze_json({HUGE_INT: 1})
    message = check(caught.value)
    assert "object key an integer of about 5,000 digits is a int" in message


def test_a_configuration_value_that_is_a_huge_int() -> None:
    with pytest.raises(ConfigurationError) as caught:
        JSONLimits(max_depth=HUGE_INT)
    assert caught.value.value == HUGE_INT  # the attribute keeps the value whole
    assert "about 5,000 digits" in check(caught.value)


@pytest.mark.anyio
async def test_an_adapter_exception_whose_text_cannot_be_made_is_still_an_adapter_error() -> None:
    # str(ValueError(10**5000)) raises: the stream must still end with a typed error
    # (on trio an exception escaping the adapter's system task would crash the run).
    class Raises:
        async def stream(
            self, request: ChatRequest, signal: AbortSignal
        ) -> AsyncIterator[Mapping[str, object]]:
            yield {"type": "start"}
            raise ValueError(HUGE_INT)

    stream = create_chat_stream(Raises(), {"messages": [USER]})
    with anyio.fail_after(10), pytest.raises(AdapterError) as caught:
        async for _ in stream:
            pass
    assert isinstance(caught.value.__cause__, ValueError)
    assert "ValueError" in check(caught.value)
    assert stream.signal is not None and (stream.signal.reason or "").startswith(
        "the stream failed: AdapterError"
    )


# --- point 4: object keys that are not strings, past max_values ---------------------------


@pytest.mark.parametrize(
    "key", [(1,), b"k", 1.5, None, HUGE_INT], ids=["tuple", "bytes", "float", "none", "int"]
)
def test_a_non_string_key_past_max_values_is_a_limit_error(key: object) -> None:
    with pytest.raises(LimitExceededError) as caught:
        normalize_messages([{key: 2}], limits=JSONLimits(7, 2, 153))
    check(caught.value)
    assert caught.value.path == "$[0]"  # the object: no JSON path can name that key
    assert caught.value.limit == "max_values"


def test_an_int_key_past_max_values_does_not_read_like_an_array_index() -> None:
    # max_values (10,000) runs out at the 9,999th key of "data", which is the int 9998.
    data: dict[object, int] = {f"k{i}": 0 for i in range(9_998)}
    data[9_998] = 0
    with pytest.raises(LimitExceededError) as caught:
        freeze_json({"data": data})
    assert caught.value.path == "$.data"
    assert "9998" not in check(caught.value)


# --- point 7: messages of unbounded size ----------------------------------------------------


def test_a_megabyte_object_key_in_a_tuple() -> None:
    with pytest.raises(ValidationError) as caught:
        freeze_json({(MEGA,): 1})
    assert "r" * 300 not in check(caught.value)


def test_a_megabyte_role() -> None:
    with pytest.raises(ValidationError) as caught:
        normalize_messages([{**USER, "role": MEGA}], limits=ROOMY)
    message = check(caught.value)
    assert caught.value.path == "$[0].role"
    assert message.endswith('..." (1,000,000 chars)')


def test_a_lone_surrogate_role_gives_an_encodable_message() -> None:
    with pytest.raises(ValidationError) as caught:
        normalize_messages([{"id": "u", "role": "\ud800", "parts": []}])
    assert "lone surrogate" in check(caught.value)
    assert caught.value.path == "$[0].role"


@pytest.mark.parametrize(
    ("message", "path"),
    [
        ({**USER, "parts": [{"type": MEGA}]}, "$[0].parts[0].type"),
        ({**USER, "role": "system", "parts": [{"type": "data-" + MEGA}]}, "$[0].parts[0].type"),
    ],
    ids=["unknown", "not-allowed"],
)
def test_a_megabyte_part_type(message: dict[str, Any], path: str) -> None:
    with pytest.raises(ValidationError) as caught:
        normalize_messages([message], limits=ROOMY)
    assert "(1,000,00" in check(caught.value)
    assert caught.value.path == path


@pytest.mark.parametrize(
    ("request_value", "path"),
    [
        ({"messages": [USER], MEGA: 1}, "$"),
        ({"messages": [USER], "parameters": {"toolChoice": MEGA}}, "$.parameters.toolChoice"),
        (
            {"messages": [USER], "parameters": {"toolChoice": {"type": "tool", "toolName": MEGA}}},
            "$.parameters.toolChoice.toolName",
        ),
        (
            {
                "messages": [USER],
                "tools": [{"name": MEGA[:400_000], "inputSchema": NO_SCHEMA}] * 2,
            },
            "$.tools[1].name",
        ),
    ],
    ids=["unknown-field", "toolChoice", "toolName", "duplicate-tool"],
)
def test_request_checks_of_a_megabyte_string(request_value: dict[Any, Any], path: str) -> None:
    with pytest.raises(ValidationError) as caught:
        create_chat_stream(ScriptedAdapter([]), request_value, limits=ROOMY)
    check(caught.value)
    assert caught.value.path.startswith(path[:40])


@pytest.mark.anyio
@pytest.mark.parametrize(
    "events",
    [
        [{"type": "start"}, {"type": "text-delta", "id": "p" * 5_092, "delta": "x"}],
        [{"type": "start"}, {"type": "text-end", "id": "p" * 5_092}],
        [{"type": "start"}, {"type": "t" * 5_092}],
        [{"type": "start"}, {"type": "data-x", "data": {"p" * 70_000: [float("nan")]}}],
    ],
    ids=["delta", "end", "type", "key"],
)
async def test_a_protocol_error_about_a_long_id_or_type(events: list[dict[str, Any]]) -> None:
    stream = create_chat_stream(ScriptedAdapter(events), {"messages": [USER]})
    with anyio.fail_after(10), pytest.raises(ProtocolError) as caught:
        async for _ in stream:
            pass
    check(caught.value, limit=700)


def test_a_path_at_the_greatest_depth_is_shortened_in_the_message() -> None:
    depth = 100_000
    value: object = 0
    for _ in range(depth + 1):
        value = [value]
    limits = JSONLimits(max_depth=depth, max_values=10 * depth, max_chars=10 * depth)
    with pytest.raises(LimitExceededError) as caught:
        freeze_json(value, limits)
    assert caught.value.path == "$" + "[0]" * depth  # the attribute is the whole path
    check(caught.value)


@pytest.mark.anyio
async def test_a_stop_reason_a_megabyte_long() -> None:
    stream = create_chat_stream(ScriptedAdapter([]), {"messages": [USER]})
    stream.abort(MEGA)
    with pytest.raises(StreamClosedError) as caught:
        await stream.__anext__()
    assert caught.value.reason == MEGA
    check(caught.value, limit=MAX_MESSAGE_CHARS)


def test_provider_labels_and_detail_are_bounded() -> None:
    error = ProviderError(
        "openai",
        "d" * 70_076,
        status=400,
        error_type="e" * 10_000,
        request_id="\ud800" * 10_000,
    )
    message = check(error, limit=MAX_MESSAGE_CHARS)
    assert "(70,076 chars)" in message and "[request id \\ud800" in message
    assert error.request_id == "\ud800" * 10_000  # the attribute is whole


@pytest.mark.parametrize(
    "make",
    [
        lambda: ConversationNotFoundError(MEGA),
        lambda: DuplicateMessageError(MEGA, MEGA, "stored with other content"),
        lambda: VersionConflictError("c", HUGE_INT, 3),
    ],
    ids=["not-found", "duplicate", "version"],
)
def test_store_errors_show_ids_bounded(make: Callable[[], AIChatError]) -> None:
    check(make(), limit=MAX_MESSAGE_CHARS)
