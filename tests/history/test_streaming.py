"""Streaming messages: protected while they stream, late updates are no-ops, cancel removes."""

from __future__ import annotations

import pytest

from ai_chat import ValidationError
from ai_chat.history import StreamingMessageError, ToolPairingError, bookkeeping, check

from .strategies import fresh, view

CALL: dict[str, object] = {"type": "tool-call", "toolCallId": "c1", "toolName": "t", "input": {}}


def test_a_streaming_message_is_shown_but_never_sent() -> None:
    history = fresh().append_user("hi")
    streaming, message_id = history.start_streaming(parts=[{"type": "text", "text": "Hel"}])
    assert bookkeeping(view(streaming)[-1]).streaming
    assert streaming.visible()[-1]["id"] == message_id
    assert streaming.request_messages() == history.messages
    assert streaming.statistics().streaming == 1


def test_updates_while_streaming_then_finish_then_late_updates_are_no_ops() -> None:
    history, message_id = fresh().append_user("hi").start_streaming(id="answer")
    assert message_id == "answer" and view(history)[-1]["parts"] == ()
    history = history.update_streaming("answer", [{"type": "text", "text": "Hel"}])
    history = history.update_streaming(
        "answer", [{"type": "text", "text": "Hello"}], metadata={"model": "m"}
    )
    assert view(history)[-1]["parts"][0]["text"] == "Hello"
    assert view(history)[-1]["metadata"]["model"] == "m"
    done = history.finish_streaming("answer", usage={"inputTokens": 3, "outputTokens": 1})
    assert not bookkeeping(view(done)[-1]).streaming
    assert bookkeeping(view(done)[-1]).usage == {"inputTokens": 3, "outputTokens": 1}
    assert done.request_messages() == done.messages
    assert done.update_streaming("answer", [{"type": "text", "text": "late"}]) is done
    assert done.finish_streaming("answer") is done
    assert done.cancel_streaming("answer") is done


def test_cancel_removes_the_message_and_its_results() -> None:
    history, message_id = fresh().append_user("hi").start_streaming(parts=[CALL])
    history = history.append(
        {
            "id": "r",
            "role": "tool",
            "parts": [{"type": "tool-result", "toolCallId": "c1", "toolName": "t", "output": 1}],
        }
    )
    cancelled = history.cancel_streaming(message_id)
    assert [m["role"] for m in cancelled.messages] == ["user"]
    assert cancelled.cancel_streaming(message_id) is cancelled
    assert cancelled.update_streaming(message_id, [{"type": "text", "text": "late"}]) is cancelled


def test_the_general_helpers_refuse_a_streaming_message() -> None:
    history, message_id = fresh().append_user("hi").start_streaming()
    with pytest.raises(StreamingMessageError) as caught:
        history.update_message(message_id, parts=[])
    assert caught.value.path == "$[1]" and caught.value.message_id == message_id
    with pytest.raises(StreamingMessageError):
        history.remove_message(message_id)
    assert bookkeeping(history.set_hidden(message_id).messages[-1]).hidden  # display only


def test_streaming_updates_keep_tool_pairing() -> None:
    history, message_id = fresh().append_user("hi").start_streaming(parts=[CALL])
    history = history.append(
        {
            "id": "r",
            "role": "tool",
            "parts": [{"type": "tool-result", "toolCallId": "c1", "toolName": "t", "output": 1}],
        }
    )
    with pytest.raises(ToolPairingError) as caught:
        history.update_streaming(message_id, [{"type": "text", "text": "dropped the call"}])
    assert caught.value.tool_call_id == "c1"
    assert (
        view(history.update_streaming(message_id, [{"type": "text", "text": "kept"}, CALL]))[1][
            "parts"
        ][0]["text"]
        == "kept"
    )
    other = (
        fresh()
        .append_user("q")
        .append_assistant(tool_calls=[{"toolCallId": "c9", "toolName": "t", "input": 1}])
    )
    other, streaming = other.start_streaming(
        role="tool",
        parts=[{"type": "tool-result", "toolCallId": "c9", "toolName": "t", "output": 0}],
    )
    with pytest.raises(ToolPairingError):
        other.update_streaming(
            streaming,
            [{"type": "tool-result", "toolCallId": "c9", "toolName": "wrong", "output": 1}],
        )
    with pytest.raises(ToolPairingError):
        other.update_streaming(
            streaming, [{"type": "tool-result", "toolCallId": "nope", "toolName": "t", "output": 1}]
        )
    with pytest.raises(ValidationError):
        other.update_streaming(streaming, [{"type": "text", "text": "a tool message has no text"}])
    with pytest.raises(ValidationError):
        other.update_streaming(streaming, [], metadata={"aiChat": {}})
    with pytest.raises(ValidationError):
        other.finish_streaming(streaming, usage={"inputTokens": -1})
    assert check(other.finish_streaming(streaming), provider="all").ok
