"""What ``to_*`` returns is what each provider's official SDK types take, exactly.

The openai and anthropic SDKs describe their request arguments as ``TypedDict`` s;
pydantic's ``TypeAdapter`` validates a value against them, and the validated value read
back equals the value (so no field was unknown to the SDK type and dropped). google-genai
describes contents as pydantic models that forbid unknown fields. Each check runs on a
rich history and, as a property, on every history a format can express.
"""

from __future__ import annotations

import base64
from collections.abc import Sequence
from typing import Any

from anthropic.types import MessageParam, TextBlockParam
from google.genai import types as genai_types
from hypothesis import HealthCheck, given, settings
from openai.types.chat import ChatCompletionMessageParam
from openai.types.responses import ResponseInputParam
from pydantic import TypeAdapter

from ai_chat.formats import to_anthropic, to_gemini, to_openai_chat, to_openai_responses
from ai_chat.types import Message

from ._support import RICH, expressible, materialize, plain

SETTINGS = settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])

CHAT = TypeAdapter(list[ChatCompletionMessageParam])
RESPONSES = TypeAdapter(ResponseInputParam)
ANTHROPIC_MESSAGES = TypeAdapter(list[MessageParam])
ANTHROPIC_SYSTEM = TypeAdapter(list[TextBlockParam])


def assert_takes(adapter: TypeAdapter[Any], value: object) -> None:
    assert materialize(adapter.validate_python(value)) == plain(value)


def assert_gemini_takes(contents: Sequence[Any]) -> None:
    for content in contents:
        model = genai_types.Content.model_validate(content)
        dumped = model.model_dump(mode="json", by_alias=True, exclude_none=True)
        # The SDK holds bytes and writes them back in the URL-safe base64 alphabet.
        assert _standard_base64(dumped) == plain(content)


def _standard_base64(content: Any) -> Any:
    for part in content.get("parts", []):
        if "thoughtSignature" in part:
            part["thoughtSignature"] = _standard(part["thoughtSignature"])
        if "inlineData" in part:
            part["inlineData"]["data"] = _standard(part["inlineData"]["data"])
    return content


def _standard(text: str) -> str:
    return base64.b64encode(base64.urlsafe_b64decode(text)).decode()


def test_chat_messages_are_chat_completion_message_params() -> None:
    assert_takes(CHAT, to_openai_chat(RICH, reasoning_parts="omit"))


def test_responses_items_are_response_input_params() -> None:
    assert_takes(RESPONSES, to_openai_responses(RICH))
    assert_takes(RESPONSES, to_openai_responses(RICH, store=False))


def test_anthropic_payload_is_message_params_and_text_blocks() -> None:
    payload = to_anthropic(RICH)
    assert_takes(ANTHROPIC_MESSAGES, payload["messages"])
    assert_takes(ANTHROPIC_SYSTEM, payload.get("system"))


def test_gemini_contents_are_genai_contents() -> None:
    payload = to_gemini(RICH)
    assert_gemini_takes(payload["contents"])
    assert_gemini_takes([payload.get("systemInstruction")])


@SETTINGS
@given(expressible("openai-chat"))
def test_any_chat_history(history: tuple[Message, ...]) -> None:
    assert_takes(CHAT, to_openai_chat(history))


@SETTINGS
@given(expressible("openai-responses"))
def test_any_responses_history(history: tuple[Message, ...]) -> None:
    assert_takes(RESPONSES, to_openai_responses(history))
    assert_takes(RESPONSES, to_openai_responses(history, store=False, reasoning_parts="omit"))


@SETTINGS
@given(expressible("anthropic"))
def test_any_anthropic_history(history: tuple[Message, ...]) -> None:
    payload = to_anthropic(history)
    assert_takes(ANTHROPIC_MESSAGES, payload["messages"])
    assert_takes(ANTHROPIC_SYSTEM, payload.get("system", []))


@SETTINGS
@given(expressible("gemini"))
def test_any_gemini_history(history: tuple[Message, ...]) -> None:
    payload = to_gemini(history)
    assert_gemini_takes(payload["contents"])
    if "systemInstruction" in payload:
        assert_gemini_takes([payload["systemInstruction"]])
