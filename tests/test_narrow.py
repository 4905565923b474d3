"""The type guards answer by ``type`` at run time (their narrowing is in typing_contract)."""

from ai_chat import is_data, is_event, is_part
from ai_chat.limits import freeze_json
from ai_chat.types import ChatEvent, Part


def event(value: dict[str, object]) -> ChatEvent:
    return freeze_json(value)  # type: ignore[return-value]


def test_is_event() -> None:
    delta = event({"type": "text-delta", "id": "t", "delta": "x"})
    assert is_event(delta, "text-delta")
    assert not is_event(delta, "text-start")
    assert not is_data(delta)


def test_is_data() -> None:
    data = event({"type": "data-weather", "data": {"c": 21}})
    assert is_data(data)
    assert is_data(data, "weather")
    assert not is_data(data, "other")
    assert not is_data(event({"type": "data-", "data": 1}))


def test_is_part() -> None:
    part: Part = freeze_json({"type": "tool-call", "toolCallId": "c", "toolName": "t", "input": {}})  # type: ignore[assignment]
    assert is_part(part, "tool-call")
    assert not is_part(part, "text")
