"""Static typing contract, checked by pyright (tests/test_tooling.py), never executed.

Each line marked with an ignore comment must be a type error: pyright runs with
reportUnnecessaryTypeIgnoreComment, so if one of them stopped being an error the check
fails. The lines without a comment must type-check cleanly.
"""

from ai_chat import (
    ChatStream,
    is_data,
    is_event,
    is_part,
    normalize_messages,
)
from ai_chat.limits import freeze_json
from ai_chat.types import Message, TextPart


async def readers_get_typed_values(stream: ChatStream) -> None:
    async for event in stream:
        kind: str = event["type"]
        del kind
        match event:
            case {"type": "text-delta", "delta": str(delta)}:
                print(delta.upper())
            case _:
                pass


async def guards_narrow_events_and_parts(stream: ChatStream, messages: tuple[Message, ...]) -> None:
    async for event in stream:
        if is_event(event, "text-delta"):
            print(event["delta"].upper())
        elif is_event(event, "finish"):
            print(event["finishReason"], event.get("usage"))
        elif is_data(event, "weather"):
            print(event["data"])
        print(event["delta"])  # pyright: ignore[reportGeneralTypeIssues, reportUnknownArgumentType]
    for part in messages[0]["parts"]:
        if is_part(part, "tool-call"):
            print(part["toolName"], part["input"])
        elif is_data(part):
            print(part["data"])


def messages_are_read_only(messages: tuple[Message, ...], part: TextPart) -> None:
    message = messages[0]
    message["id"] = "x"  # pyright: ignore[reportTypedDictNotRequiredAccess]
    part["text"] = "y"  # pyright: ignore[reportTypedDictNotRequiredAccess]
    message["parts"].append(part)  # pyright: ignore[reportAttributeAccessIssue, reportUnknownMemberType]
    metadata = message.get("metadata")
    if metadata is not None:
        metadata["a"] = 1  # pyright: ignore[reportIndexIssue]


def frozen_json_objects_are_read_only() -> None:
    value = freeze_json({"a": {"b": 1}})
    if not isinstance(value, (str, int, float, bool, tuple)) and value is not None:
        value["a"] = 2  # pyright: ignore[reportIndexIssue]
    history = normalize_messages([])
    history.append(history[0])  # pyright: ignore[reportAttributeAccessIssue, reportUnknownMemberType]
