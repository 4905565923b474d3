"""What a format cannot express is a typed error naming the message and the part; bad
input is a typed error with a path, never a crash or a silent drop."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from ai_chat import LimitExceededError, ValidationError, normalize_messages
from ai_chat.formats import (
    Format,
    FormatError,
    from_anthropic,
    from_gemini,
    from_openai_chat,
    from_openai_responses,
    to_anthropic,
    to_gemini,
    to_openai_chat,
    to_openai_responses,
)
from ai_chat.limits import FrozenDict, JSONLimits, freeze_json
from ai_chat.types import Message

from ._support import PDF, PNG

TO: dict[Format, Callable[..., Any]] = {
    "openai-chat": to_openai_chat,
    "openai-responses": to_openai_responses,
    "anthropic": to_anthropic,
    "gemini": to_gemini,
}
FROM: dict[Format, Callable[..., Any]] = {
    "openai-chat": from_openai_chat,
    "openai-responses": from_openai_responses,
    "anthropic": from_anthropic,
    "gemini": from_gemini,
}
HELLO: dict[str, Any] = {"id": "u0", "role": "user", "parts": [{"type": "text", "text": "hi"}]}


def history(*parts: dict[str, Any], role: str = "user", **message: Any) -> tuple[Message, ...]:
    return normalize_messages([HELLO, {"id": "m1", "role": role, "parts": list(parts), **message}])


def export_error(fmt: Format, messages: tuple[Message, ...], **options: Any) -> FormatError:
    with pytest.raises(FormatError) as caught:
        TO[fmt](messages, **options)
    error = caught.value
    assert error.format == fmt and isinstance(error, ValidationError)
    assert error.message_index == 1 and error.message_id == "m1"
    return error


DATA = {"type": "data-weather", "data": {"t": 1}}
AUDIO = {"type": "file", "mediaType": "audio/wav", "url": "data:audio/wav;base64,AA=="}
ZIP = {"type": "file", "mediaType": "application/zip", "url": "data:application/zip;base64,AA=="}
REASONING = {"type": "reasoning", "text": "hmm"}


@pytest.mark.parametrize("fmt", list(TO))
@pytest.mark.parametrize("role", ["user", "assistant"])
def test_a_data_part_is_an_error_naming_it(fmt: Format, role: str) -> None:
    error = export_error(fmt, history({"type": "text", "text": "a"}, DATA, role=role))
    assert (error.path, error.part_index) == ("$.messages[1].parts[1]", 1)
    assert "data-weather" in error.reason and "convert it to a text part" in error.reason


@pytest.mark.parametrize(
    ("fmt", "part", "role", "path", "words"),
    [
        ("openai-chat", REASONING, "assistant", "", 'reasoning_parts="omit"'),
        ("openai-chat", AUDIO, "user", ".mediaType", "audio/wav"),
        (
            "openai-chat",
            {"type": "file", "mediaType": "image/png", "url": PNG},
            "assistant",
            "",
            "file parts in assistant",
        ),
        (
            "openai-chat",
            {"type": "file", "mediaType": "application/pdf", "url": "https://x/a.pdf"},
            "user",
            ".url",
            "data: URL",
        ),
        ("openai-responses", REASONING, "assistant", "", "itemId"),
        ("openai-responses", ZIP, "user", ".mediaType", "application/zip"),
        (
            "openai-responses",
            {"type": "file", "mediaType": "image/png", "url": "ftp://x"},
            "user",
            ".url",
            "http(s)",
        ),
        ("anthropic", REASONING, "assistant", "", "signature"),
        ("anthropic", AUDIO, "user", ".mediaType", "audio/wav"),
        (
            "anthropic",
            {"type": "file", "mediaType": "image/png", "url": "data:image/png,raw"},
            "user",
            ".url",
            "base64",
        ),
        (
            "anthropic",
            {"type": "file", "mediaType": "text/plain", "url": "https://x/a.txt"},
            "user",
            ".url",
            "inline",
        ),
        (
            "anthropic",
            {"type": "file", "mediaType": "text/plain", "url": "data:text/plain;base64,//8="},
            "user",
            ".url",
            "UTF-8",
        ),
        (
            "anthropic",
            {"type": "tool-call", "toolCallId": "c", "toolName": "f", "input": [1]},
            "assistant",
            ".input",
            "object",
        ),
        (
            "anthropic",
            {"type": "reasoning", "text": "t", "providerMetadata": {"anthropic": {"signature": 5}}},
            "assistant",
            ".providerMetadata.anthropic.signature",
            "signature",
        ),
        ("gemini", ZIP, "user", ".mediaType", "application/zip"),
        (
            "gemini",
            {"type": "tool-call", "toolCallId": "c", "toolName": "f", "input": "x"},
            "assistant",
            ".input",
            "object",
        ),
        (
            "gemini",
            {"type": "text", "text": "t", "providerMetadata": {"gemini": {"thoughtSignature": 1}}},
            "assistant",
            ".providerMetadata.gemini.thoughtSignature",
            "base64",
        ),
        (
            "gemini",
            {"type": "file", "mediaType": "image/png", "url": "file:///etc/passwd"},
            "user",
            ".url",
            "gs://",
        ),
    ],
)
def test_what_a_format_cannot_express(
    fmt: Format, part: dict[str, Any], role: str, path: str, words: str
) -> None:
    error = export_error(fmt, history(part, role=role))
    assert error.path == "$.messages[1].parts[0]" + path
    assert error.part_index == 0
    assert words in error.reason


def test_responses_without_store_needs_the_encrypted_reasoning() -> None:
    reasoning = {"type": "reasoning", "text": "t", "providerMetadata": {"openai": {"itemId": "rs"}}}
    messages = history(reasoning, role="assistant")
    error = export_error("openai-responses", messages, store=False)
    assert "reasoning.encrypted_content" in error.reason
    assert to_openai_responses(messages, store=False, reasoning_parts="omit") == [
        {"role": "user", "content": [{"type": "input_text", "text": "hi"}]}
    ]


@pytest.mark.parametrize("fmt", ["anthropic", "gemini"])
def test_a_late_system_message_is_an_error(fmt: Format) -> None:
    error = export_error(fmt, history({"type": "text", "text": "late"}, role="system"))
    assert error.path == "$.messages[1].role" and error.part_index is None
    assert "start of messages" in error.reason


@pytest.mark.parametrize("fmt", list(TO))
def test_a_streaming_message_is_never_exported(fmt: Format) -> None:
    streaming = {"aiChat": {"streaming": True}}
    error = export_error(
        fmt, history({"type": "text", "text": "Hel"}, role="assistant", metadata=streaming)
    )
    assert error.path == "$.messages[1]" and "request_messages" in error.reason


@pytest.mark.parametrize("fmt", list(TO))
def test_plain_messages_are_normalized_first(fmt: Format) -> None:
    assert TO[fmt]([HELLO]) == TO[fmt](normalize_messages([HELLO]))
    with pytest.raises(ValidationError) as caught:
        TO[fmt]([HELLO, {"id": "x", "role": "robot", "parts": []}])
    assert caught.value.path == "$.messages[1].role"


@pytest.mark.parametrize("fmt", list(TO))
def test_frozen_values_that_are_not_messages_are_a_validation_error(fmt: Format) -> None:
    # Frozen, so taken as normalized, but never normalized: the boundary words the error.
    bogus = freeze_json([{"id": "x", "role": "user", "parts": [{"type": "text"}]}], JSONLimits())
    with pytest.raises(ValidationError) as caught:
        TO[fmt](bogus)
    assert caught.value.path == "$.messages[0].parts[0]"


NOT_MESSAGES: list[Any] = ["not a list", 42, None, [1], [FrozenDict()]]


@pytest.mark.parametrize("fmt", list(TO))
@pytest.mark.parametrize("value", NOT_MESSAGES)
def test_not_messages_at_all(fmt: Format, value: Any) -> None:
    with pytest.raises(ValidationError):
        TO[fmt](value)


# --- from_* ---------------------------------------------------------------------------------

CALL = {
    "role": "assistant",
    "content": None,
    "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{}"}}],
}


UNREADABLE: list[tuple[Format, Any, str, str]] = [
    ("openai-chat", [{"role": "user", "content": "hi", "name": "bob"}], "$[0].name", "'name'"),
    (
        "openai-chat",
        [{"role": "tool", "tool_call_id": "nope", "content": "x"}],
        "$[0]",
        "no earlier",
    ),
    (
        "openai-chat",
        [
            CALL,
            {"role": "tool", "tool_call_id": "c1", "content": "x"},
            {"role": "tool", "tool_call_id": "c1", "content": "y"},
        ],
        "$[2]",
        "already has a result",
    ),
    (
        "openai-chat",
        [
            {
                **CALL,
                "tool_calls": [
                    {
                        "id": "c",
                        "type": "function",
                        "function": {"name": "f", "arguments": "{oops"},
                    }
                ],
            }
        ],
        "$[0].tool_calls[0].function.arguments",
        "not JSON",
    ),
    (
        "openai-chat",
        [
            {
                **CALL,
                "tool_calls": [
                    {
                        "id": "c",
                        "type": "function",
                        "function": {"name": "f", "arguments": "NaN"},
                    }
                ],
            }
        ],
        "$[0].tool_calls[0].function.arguments",
        "not JSON",
    ),
    (
        "openai-chat",
        [
            {
                **CALL,
                "tool_calls": [
                    {
                        "id": "c",
                        "type": "function",
                        "function": {"name": "f", "arguments": "[" * 100_000},
                    }
                ],
            }
        ],
        "$[0].tool_calls[0].function.arguments",
        "not JSON",
    ),
    (
        "openai-chat",
        [{**CALL, "tool_calls": [{"id": "c", "type": "custom", "custom": {"name": "f"}}]}],
        "$[0].tool_calls[0].custom",
        "'custom'",
    ),
    ("openai-chat", [{"role": "assistant", "audio": {"id": "a"}}], "$[0].audio", "'audio'"),
    (
        "openai-chat",
        [{"role": "function", "name": "f", "content": "x"}],
        "$[0].role",
        "legacy function",
    ),
    (
        "openai-chat",
        [{"role": "user", "content": [{"type": "file", "file": {"file_id": "file-1"}}]}],
        "$[0].content[0].file.file_id",
        "'file_id'",
    ),
    ("openai-chat", [{"role": "robot", "content": "x"}], "$[0].role", "expected"),
    ("openai-chat", ["hi"], "$[0]", "expected an object"),
    (
        "openai-responses",
        [{"type": "web_search_call", "id": "ws"}],
        "$[0].type",
        "'web_search_call'",
    ),
    (
        "openai-responses",
        [{"type": "function_call_output", "call_id": "x", "output": "y"}],
        "$[0]",
        "no earlier",
    ),
    ("openai-responses", [{"type": "reasoning", "summary": []}], "$[0].id", "non-empty"),
    (
        "openai-responses",
        [{"role": "user", "content": [{"type": "input_file", "file_id": "f"}]}],
        "$[0].content[0].file_id",
        "'file_id'",
    ),
    (
        "anthropic",
        {
            "messages": [
                {
                    "role": "assistant",
                    "content": [
                        {
                            "type": "server_tool_use",
                            "id": "s",
                            "name": "web_search",
                            "input": {},
                        }
                    ],
                }
            ]
        },
        "$.messages[0].content[0].type",
        "'server_tool_use'",
    ),
    (
        "anthropic",
        {
            "messages": [
                {
                    "role": "user",
                    "content": [{"type": "tool_result", "tool_use_id": "t", "content": "x"}],
                }
            ]
        },
        "$.messages[0].content[0]",
        "no earlier",
    ),
    (
        "anthropic",
        {
            "messages": [
                {
                    "role": "assistant",
                    "content": [{"type": "tool_use", "id": "t", "name": "f", "input": {}}],
                },
                {
                    "role": "user",
                    "content": [
                        {
                            "type": "tool_result",
                            "tool_use_id": "t",
                            "content": [
                                {
                                    "type": "image",
                                    "source": {"type": "url", "url": "https://x/a.png"},
                                }
                            ],
                        }
                    ],
                },
            ]
        },
        "$.messages[1].content[0].content[0]",
        "'image'",
    ),
    (
        "anthropic",
        {
            "messages": [
                {
                    "role": "user",
                    "content": [{"type": "image", "source": {"type": "file", "file_id": "f"}}],
                }
            ]
        },
        "$.messages[0].content[0].source.file_id",
        "'file_id'",
    ),
    (
        "anthropic",
        {
            "messages": [
                {
                    "role": "user",
                    "content": [
                        {
                            "type": "image",
                            "source": {
                                "type": "base64",
                                "media_type": "image/png",
                                "data": "not base64!",
                            },
                        }
                    ],
                }
            ]
        },
        "$.messages[0].content[0].source.data",
        "base64",
    ),
    ("anthropic", {"messages": "hi"}, "$.messages", "an array"),
    ("anthropic", {"system": "x", "messages": [], "tools": [1]}, "$.tools", "'tools'"),
    (
        "anthropic",
        {"messages": [{"role": "system", "content": "x"}]},
        "$.messages[0].role",
        "expected",
    ),
    (
        "gemini",
        {"contents": [{"role": "model", "parts": [{"executableCode": {"code": "1"}}]}]},
        "$.contents[0].parts[0].executableCode",
        "'executableCode'",
    ),
    (
        "gemini",
        {
            "contents": [
                {"role": "user", "parts": [{"functionResponse": {"name": "f", "response": {}}}]}
            ]
        },
        "$.contents[0].parts[0].functionResponse",
        "no earlier call",
    ),
    (
        "gemini",
        {"contents": [{"role": "user", "parts": [{"functionCall": {"name": "f", "args": {}}}]}]},
        "$.contents[0].parts[0].functionCall",
        "user turn",
    ),
    (
        "gemini",
        {"candidates": [{"content": {"parts": []}}, {"content": {"parts": []}}]},
        "$.candidates",
        "one candidate",
    ),
    (
        "gemini",
        {
            "contents": [
                {
                    "role": "model",
                    "parts": [{"inlineData": {"mimeType": "image/png", "data": "%%"}}],
                }
            ]
        },
        "$.contents[0].parts[0].inlineData.data",
        "base64",
    ),
    (
        "gemini",
        {"contents": [{"role": "model", "parts": [{}]}]},
        "$.contents[0].parts[0]",
        "none of",
    ),
]


@pytest.mark.parametrize(("fmt", "payload", "path", "words"), UNREADABLE)
def test_what_ai_chat_cannot_hold_or_read(fmt: Format, payload: Any, path: str, words: str) -> None:
    with pytest.raises(FormatError) as caught:
        FROM[fmt](payload)
    assert caught.value.format == fmt
    assert caught.value.path == path
    assert words in caught.value.reason


@pytest.mark.parametrize("fmt", list(FROM))
def test_a_message_over_the_limits_is_a_limit_error(fmt: Format) -> None:
    payload = TO[fmt](
        normalize_messages(
            [{"id": "u", "role": "user", "parts": [{"type": "text", "text": "x" * 1000}]}]
        )
    )
    with pytest.raises(LimitExceededError):
        FROM[fmt](payload, limits=JSONLimits(max_chars=500))


@pytest.mark.parametrize("fmt", list(FROM))
@pytest.mark.parametrize("value", ["text", 42, b"bytes", None])
def test_not_a_payload(fmt: Format, value: Any) -> None:
    with pytest.raises(FormatError):
        FROM[fmt](value)


def test_files_and_documents_read_back() -> None:
    messages = from_anthropic(
        {
            "messages": [
                {
                    "role": "user",
                    "content": [
                        {
                            "type": "document",
                            "source": {
                                "type": "base64",
                                "media_type": "application/pdf",
                                "data": PDF[28:],
                            },
                            "title": "r.pdf",
                        },
                        {
                            "type": "document",
                            "source": {"type": "text", "media_type": "text/plain", "data": "Grüße"},
                        },
                    ],
                }
            ]
        }
    )
    assert [dict(part) for part in messages[0]["parts"]] == [
        {"type": "file", "mediaType": "application/pdf", "url": PDF, "filename": "r.pdf"},
        {"type": "file", "mediaType": "text/plain", "url": "data:text/plain;base64,R3LDvMOfZQ=="},
    ]
