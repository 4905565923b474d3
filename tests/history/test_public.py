"""The public projection: user and assistant text, redacted, and nothing else."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ai_chat import ConfigurationError, normalize_messages
from ai_chat.history import History, HistoryEnv, public_projection

from .strategies import PROPERTY

CANARY = "CANARY"
# The visible text never holds the canary's letters in a row: only lowercase letters,
# digits, punctuation and spaces, and the e-mail addresses redaction replaces.
visible_text = st.lists(
    st.sampled_from(["hello", "order 42", " ", "\n", "ça va?", " bob@example.com ", "ok!"]),
    min_size=1,
    max_size=4,
).map("".join)


def canary(n: int) -> str:
    return f"{CANARY}{n}"


@st.composite
def canary_histories(draw: st.DrawFn) -> tuple[History, list[str]]:
    """A history whose every field but visible user and assistant text holds a canary
    (ids, names, metadata, bookkeeping, reasoning, tool inputs and outputs, files, data,
    providerMetadata, properties ai_chat does not define, system and hidden text, the
    history's own fields); also the texts the projection shows, in order."""
    counter = iter(range(1, 1_000_000))

    def c() -> str:
        return canary(next(counter))

    def metadata() -> dict[str, Any]:
        return {c(): c(), "nested": [c(), {c(): 1}]}

    def extra(part: dict[str, Any]) -> dict[str, Any]:
        return {**part, "providerMetadata": {c(): {c(): c()}}, c(): c()}

    messages: list[dict[str, Any]] = []
    shown: list[str] = []
    pending: list[tuple[str, str]] = []  # calls without a result: (id, tool name)
    for _ in range(draw(st.integers(0, 8))):
        role = draw(st.sampled_from(["system", "user", "assistant", "tool"]))
        if role == "tool" and not pending:
            role = "user"
        hidden = draw(st.integers(0, 3)) == 0
        streaming = role == "assistant" and draw(st.integers(0, 3)) == 0
        parts: list[dict[str, Any]] = []
        texts: list[str] = []
        if role == "system":
            parts = [extra({"type": "text", "text": c()})]
        elif role == "tool":
            parts = [
                extra(
                    {
                        "type": "tool-result",
                        "toolCallId": call_id,
                        "toolName": name,
                        "output": {c(): c()},
                    }
                )
                for call_id, name in pending
            ]
            pending = []
        else:
            kinds = [
                "text",
                "file",
                "data",
                *(["reasoning", "call"] if role == "assistant" else []),
            ]
            for kind in draw(st.lists(st.sampled_from(kinds), min_size=1, max_size=5)):
                if kind == "text":
                    text = draw(visible_text)
                    texts.append(text)
                    parts.append(
                        {
                            "type": "text",
                            "text": text,
                            "providerMetadata": {c(): {c(): c()}},
                            c(): c(),
                        }
                    )
                elif kind == "reasoning":
                    parts.append(extra({"type": "reasoning", "text": c()}))
                elif kind == "file":
                    parts.append(
                        extra({"type": "file", "mediaType": c(), "url": c(), "filename": c()})
                    )
                elif kind == "data":
                    parts.append(extra({"type": f"data-{c()}", "data": {c(): [c()]}, "id": c()}))
                else:
                    call = (c(), c())
                    pending.append(call)
                    parts.append(
                        extra(
                            {
                                "type": "tool-call",
                                "toolCallId": call[0],
                                "toolName": call[1],
                                "input": {c(): c()},
                            }
                        )
                    )
        own: dict[str, Any] = {
            "createdAt": "2030-01-01T00:00:00Z",
            "usage": {"outputTokens": 7},
            "parentId": c(),
        }
        own["sources"] = [{"type": "source-url", "sourceId": c(), "url": c()}]
        if hidden:
            own["hidden"] = True
        if streaming:
            own["streaming"] = True
        if texts and not hidden and not streaming:
            shown.append("".join(texts))
        messages.append(
            {
                "id": c(),
                "role": role,
                "parts": parts,
                "metadata": {**metadata(), "aiChat": own},
                c(): c(),
            }
        )
    history = History.from_json(
        {
            "id": c(),
            "title": c(),
            "metadata": metadata(),
            "createdAt": "2030-01-01T00:00:00Z",
            "updatedAt": "2030-01-01T00:00:00Z",
            "messages": messages,
        }
    )
    return history, shown


@PROPERTY
@given(canary_histories())
def test_nothing_but_visible_user_and_assistant_text_appears(
    case: tuple[History, list[str]],
) -> None:
    history, shown = case
    projection = public_projection(history)
    text = json.dumps(projection, ensure_ascii=False)
    assert CANARY not in text
    assert "bob@example.com" not in text
    assert [message_text(m) for m in projection] == [
        t.replace("bob@example.com", "[EMAIL_1]") for t in shown
    ]
    assert [m["id"] for m in projection] == [f"m{n}" for n in range(1, len(shown) + 1)]
    for message in projection:
        assert set(message) == {"id", "role", "parts"}
        assert message["role"] in ("user", "assistant")
        assert [set(p) for p in message["parts"]] == [{"type", "text"}]
    assert normalize_messages(projection) == projection


def message_text(message: Any) -> str:
    return "".join(part["text"] for part in message["parts"])


def conversation() -> History:
    history = History.create(title="Billing", env=HistoryEnv.deterministic())
    history = history.append_system("Internal: refunds need approval.")
    history = history.append_user("I'm alice@example.com, my card is 4111 1111 1111 1111.")
    history = history.append_assistant(
        "Thanks alice@example.com, checking.",
        tool_calls=[
            {"toolCallId": "c1", "toolName": "billing", "input": {"email": "alice@example.com"}}
        ],
    )
    history = history.append_tool_result("c1", {"balance": 12})
    return history.append_assistant("You owe 12 EUR. Write to bob@example.com.")


def test_placeholders_are_stable_across_the_projection() -> None:
    projection = public_projection(conversation())
    assert [message_text(m) for m in projection] == [
        "I'm [EMAIL_1], my card is [CARD_1].",
        "Thanks [EMAIL_1], checking.",
        "You owe 12 EUR. Write to [EMAIL_2].",
    ]
    assert [(m["id"], m["role"]) for m in projection] == [
        ("m1", "user"),
        ("m2", "assistant"),
        ("m3", "assistant"),
    ]


def test_a_typed_placeholder_is_not_confused_with_a_value() -> None:
    history = (
        History.create().append_user("I wrote [EMAIL_1] literally").append_user("a@example.com")
    )
    texts = [message_text(m) for m in public_projection(history)]
    assert texts == ["I wrote [EMAIL_1] literally", "[EMAIL_2]"]


def test_a_stricter_redaction_runs_after_the_defaults() -> None:
    seen: list[str] = []

    def stricter(text: str) -> str:
        seen.append(text)
        return text.replace("EUR", "[CURRENCY]")

    projection = public_projection(conversation(), redact_text=stricter)
    assert seen[0] == "I'm [EMAIL_1], my card is [CARD_1]."
    assert message_text(projection[2]) == "You owe 12 [CURRENCY]. Write to [EMAIL_2]."


def test_hidden_streaming_and_textless_messages_are_left_out() -> None:
    history = conversation()
    history = history.set_hidden(history.messages[1]["id"])
    history, _ = history.start_streaming(parts=[{"type": "text", "text": "sk-proj-abc12"}])
    texts = [message_text(m) for m in public_projection(history)]
    assert texts == ["Thanks [EMAIL_1], checking.", "You owe 12 EUR. Write to [EMAIL_2]."]
    assert public_projection(History.create()) == ()


def test_arguments_are_checked() -> None:
    with pytest.raises(ConfigurationError):
        public_projection([])  # type: ignore[arg-type]
    with pytest.raises(ConfigurationError):
        public_projection(conversation(), redact_text="no")  # type: ignore[arg-type]
    with pytest.raises(ConfigurationError):
        public_projection(conversation(), redact_text=lambda text: None)  # type: ignore[arg-type,return-value]
