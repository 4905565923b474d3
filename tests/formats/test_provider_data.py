"""Provider-private data goes back only to the provider it came from, byte for byte."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest

from ai_chat import normalize_messages
from ai_chat.formats import (
    FormatError,
    to_anthropic,
    to_gemini,
    to_openai_chat,
    to_openai_responses,
)
from ai_chat.types import Message

from ._support import RICH, plain

# Each provider's private values in RICH, as they must appear in its own payload only.
PRIVATE = {
    "anthropic": ["sig-1"],
    "openai": ["rs_1", "gAAA", "msg_1", "fc_1"],
    "gemini": ["AAEC/w=="],
}
EXPORTS: dict[str, Callable[[tuple[Message, ...]], Any]] = {
    "openai-chat": lambda h: to_openai_chat(h, reasoning_parts="omit"),
    "openai-responses": to_openai_responses,
    "anthropic": to_anthropic,
    "gemini": to_gemini,
}
OWNER = {
    "openai-chat": None,
    "openai-responses": "openai",
    "anthropic": "anthropic",
    "gemini": "gemini",
}


@pytest.mark.parametrize("fmt", list(EXPORTS))
def test_private_data_goes_only_to_its_provider(fmt: str) -> None:
    text = json.dumps(EXPORTS[fmt](RICH))
    for provider, values in PRIVATE.items():
        for value in values:
            assert (json.dumps(value) in text) == (provider == OWNER[fmt]), (provider, value)


def test_private_data_is_never_rewritten() -> None:
    # Values with every character JSON or base64 could touch: they go out as they came.
    odd = 'sig+/=\u00e9\u2028\\"\n'
    history = normalize_messages(
        [
            {"id": "u", "role": "user", "parts": [{"type": "text", "text": "hi"}]},
            {
                "id": "a",
                "role": "assistant",
                "parts": [
                    {
                        "type": "reasoning",
                        "text": "t",
                        "providerMetadata": {
                            "anthropic": {"signature": odd},
                            "openai": {"itemId": "rs", "reasoningEncryptedContent": odd},
                            "gemini": {"thoughtSignature": odd},
                        },
                    }
                ],
            },
        ]
    )
    assert to_anthropic(history)["messages"][1]["content"][0]["signature"] == odd
    assert to_openai_responses(history)[1]["encrypted_content"] == odd
    assert to_gemini(history)["contents"][1]["parts"][0]["thoughtSignature"] == odd


def test_reasoning_from_another_provider_is_an_error_or_left_out_on_request() -> None:
    gemini_thought = normalize_messages(
        [
            {"id": "u", "role": "user", "parts": [{"type": "text", "text": "hi"}]},
            {
                "id": "a",
                "role": "assistant",
                "parts": [
                    {
                        "type": "reasoning",
                        "text": "t",
                        "providerMetadata": {"gemini": {"thoughtSignature": "AAEC"}},
                    },
                    {"type": "text", "text": "Hello."},
                ],
            },
        ]
    )
    for export in (to_anthropic, to_openai_responses, to_openai_chat):
        with pytest.raises(FormatError) as caught:
            export(gemini_thought)
        assert caught.value.path == "$.messages[1].parts[0]"
        assert (caught.value.message_id, caught.value.part_index) == ("a", 0)
    assert plain(to_anthropic(gemini_thought, reasoning_parts="omit")["messages"][1]) == {
        "role": "assistant",
        "content": [{"type": "text", "text": "Hello."}],
    }
    # Gemini reads reasoning as thought parts, and sends no other provider's signature.
    assert plain(to_gemini(RICH)["contents"][1]["parts"][0]) == {
        "text": "They want the weather.",
        "thought": True,
        "thoughtSignature": "AAEC/w==",
    }
