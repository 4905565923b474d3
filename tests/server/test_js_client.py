"""The genuine AI SDK client (npm ``ai``, pinned in tests/js) against our server, through
Node: tests/js/server_client_check.mjs reads each answer with the SDK's own parser,
schema, ``readUIMessageStream`` and ``AbstractChat`` + ``DefaultChatTransport``."""

from __future__ import annotations

import json
import subprocess
from collections.abc import AsyncIterator, Mapping
from pathlib import Path
from typing import Any

import pytest
from starlette.applications import Starlette
from starlette.routing import Mount, Route

from ai_chat import AbortSignal
from ai_chat.adapters import ScriptedAdapter
from ai_chat.server import MASKED_ERROR, chat_endpoint, create_chat_app
from ai_chat.store import MemoryConversationStore
from ai_chat.types import ChatRequest

from .harness import running
from .scripts import EVERY_CHUNK, EVERY_EVENT, USAGE

JS = Path(__file__).resolve().parents[1] / "js"


class Failing:
    async def stream(
        self, request: ChatRequest, signal: AbortSignal
    ) -> AsyncIterator[Mapping[str, object]]:
        yield {"type": "start"}
        yield {"type": "text-start", "id": "t"}
        yield {"type": "text-delta", "id": "t", "delta": "so far"}
        raise RuntimeError("internal detail that must not leak")


class Continues:
    """Answers a tool result: reports the last tool message's output."""

    async def stream(
        self, request: ChatRequest, signal: AbortSignal
    ) -> AsyncIterator[Mapping[str, object]]:
        last = request["messages"][-1]
        assert last["role"] == "tool", last
        output = json.dumps(last["parts"][0].get("output"))
        yield {"type": "start", "messageId": "ignored"}
        yield {"type": "start-step"}
        yield {"type": "text-start", "id": "t"}
        yield {"type": "text-delta", "id": "t", "delta": f"The tool said {output}."}
        yield {"type": "text-end", "id": "t"}
        yield {"type": "finish-step"}
        yield {"type": "finish", "finishReason": "stop", "usage": {"inputTokens": 3}}


@pytest.fixture(scope="module")
def sdk_results(node: str, node_modules: Path) -> dict[str, Any]:
    app = Starlette(
        routes=[
            Route("/every", chat_endpoint(ScriptedAdapter(EVERY_EVENT)), methods=["POST"]),
            Route("/default", chat_endpoint(ScriptedAdapter()), methods=["POST"]),
            Route("/failing", chat_endpoint(Failing()), methods=["POST"]),
            Route("/continue", chat_endpoint(Continues()), methods=["POST"]),
            Mount(
                "/stored",
                create_chat_app(
                    ScriptedAdapter(EVERY_EVENT), store=MemoryConversationStore(), page=False
                ),
            ),
        ]
    )
    with running(app) as url:
        result = subprocess.run(
            [node, str(JS / "server_client_check.mjs"), url],
            cwd=JS,
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
    assert result.returncode == 0, result.stderr
    results: dict[str, Any] = json.loads(result.stdout)
    return results


EXPECTED_MESSAGE = {
    "id": "msg-every",
    "role": "assistant",
    "metadata": {"model": "scripted-2", "step": 1, "finishReason": "stop", "usage": USAGE},
    "parts": [
        {"type": "step-start"},
        {
            "type": "reasoning",
            "id": "r1",
            "text": "Thinking hard.",
            "providerMetadata": {"test": {"signature": "sig"}},
            "state": "done",
        },
        {"type": "text", "text": 'Hello, wörld ✓ "quoted"\n\u2028 😀', "state": "done"},
        {
            "type": "tool-weather",
            "toolCallId": "c1",
            "state": "output-available",
            "input": {"city": "Berlin"},
            "output": {"temperature": 21},
            "title": "Weather",
        },
        {"type": "data-weather", "id": "w1", "data": {"status": "done", "temperature": 21}},
        {
            "type": "dynamic-tool",
            "toolName": "lookup",
            "toolCallId": "c2",
            "state": "output-error",
            "input": {"q": "x"},
            "errorText": "lookup failed",
        },
        {
            "type": "tool-weather",
            "toolCallId": "c3",
            "state": "output-error",
            "input": "{bad",
            "errorText": "invalid JSON",
        },
        {
            "type": "tool-web_search",
            "toolCallId": "c4",
            "state": "output-available",
            "input": {"q": "web"},
            "output": None,
            "providerExecuted": True,
        },
        {"type": "step-start"},
        {"type": "source-url", "sourceId": "s1", "url": "https://example.com/b", "title": "Berlin"},
        {
            "type": "source-document",
            "sourceId": "s2",
            "mediaType": "application/pdf",
            "title": "Report",
            "filename": "report.pdf",
        },
        {"type": "file", "mediaType": "image/png", "url": "data:image/png;base64,iVBORw0KGgo="},
        {"type": "text", "text": "Done.", "state": "done"},
    ],
}


def test_every_chunk_validates_with_the_sdk_schema(sdk_results: dict[str, Any]) -> None:
    every = sdk_results["every"]
    assert every["status"] == 200
    assert every["headers"]["x-vercel-ai-ui-message-stream"] == "v1"
    assert every["headers"]["content-type"] == "text/event-stream"
    assert every["failures"] == []
    assert every["chunks"] == EVERY_CHUNK
    assert every["streamErrors"] == []


def test_the_sdk_assembles_the_expected_message(sdk_results: dict[str, Any]) -> None:
    assert sdk_results["every"]["message"] == EXPECTED_MESSAGE


def test_use_chat_ends_ready_with_the_message(sdk_results: dict[str, Any]) -> None:
    chat = sdk_results["everyChat"]
    assert chat["status"] == "ready" and chat["error"] is None and chat["errors"] == []
    assert chat["finishes"] == [
        {"isAbort": False, "isDisconnect": False, "isError": False, "finishReason": "stop"}
    ]
    user, assistant = chat["messages"]
    assert user["role"] == "user" and user["parts"] == [{"type": "text", "text": "Hello"}]
    assert assistant == EXPECTED_MESSAGE


def test_the_default_answer_and_regenerate(sdk_results: dict[str, Any]) -> None:
    chat = sdk_results["defaultChat"]
    assert chat["status"] == "ready"
    assert chat["finishes"][0]["finishReason"] == "tool-calls"
    assistant = chat["messages"][1]
    assert [p["type"] for p in assistant["parts"]] == [
        "step-start",
        "reasoning",
        "text",
        "tool-search",
    ]
    assert assistant["parts"][3]["state"] == "input-available"
    assert assistant["parts"][3]["input"] == {"query": "Hello"}
    assert assistant["metadata"]["usage"]["inputTokens"] == 1
    regenerated = sdk_results["regenerated"]
    assert regenerated["status"] == "ready"
    assert len(regenerated["messages"]) == 2
    # The same history gives the same deterministic answer, as a message of its own.
    assert regenerated["messages"][1]["parts"] == assistant["parts"]


def test_a_failure_is_a_masked_error_for_the_sdk(sdk_results: dict[str, Any]) -> None:
    failing = sdk_results["failing"]
    assert failing["failures"] == []
    assert failing["chunks"][-1] == {"type": "error", "errorText": MASKED_ERROR}
    assert failing["streamErrors"] == ["Error: An error occurred."]
    chat = sdk_results["failingChat"]
    assert chat["status"] == "error"
    assert chat["error"] == MASKED_ERROR
    assert chat["finishes"][0]["isError"] is True
    assert "internal detail" not in json.dumps(sdk_results)


def test_continuing_a_message_after_a_tool_result(sdk_results: dict[str, Any]) -> None:
    chat = sdk_results["continued"]
    assert chat["status"] == "ready", chat
    assert [m["id"] for m in chat["messages"]] == ["u1", "a1"]
    parts = chat["messages"][1]["parts"]
    assert [p["type"] for p in parts] == ["step-start", "tool-weather", "step-start", "text"]
    assert parts[3]["text"] == 'The tool said {"temperature": 21}.'
    assert chat["messages"][1]["metadata"] == {"finishReason": "stop", "usage": {"inputTokens": 3}}


def test_a_bad_request_reaches_the_sdk_as_the_json_error(sdk_results: dict[str, Any]) -> None:
    chat = sdk_results["badRequest"]
    assert chat["status"] == "error"
    error = json.loads(chat["error"])["error"]
    assert error["type"] == "invalid_request"
    assert error["path"] == "$.messages[0].parts[0].type"


def test_restored_messages_are_valid_ui_messages_the_sdk_continues(
    sdk_results: dict[str, Any],
) -> None:
    first = sdk_results["storedChat"]
    assert first["status"] == "ready", first
    restored = sdk_results["restored"]
    assert restored["valid"] is True, restored["validationError"]
    [summary] = restored["listed"]["chats"]
    assert summary["id"] == "stored-1" and summary["title"] == "Hello"
    # The same messages the SDK held, by id and text (sources are citations, not kept).
    sdk_messages = first["messages"]
    assert [m["id"] for m in restored["messages"]] == [m["id"] for m in sdk_messages]

    def texts(message: dict[str, Any]) -> list[str]:
        return [p["text"] for p in message["parts"] if p["type"] in ("text", "reasoning")]

    assert [texts(m) for m in restored["messages"]] == [texts(m) for m in sdk_messages]
    assert restored["messages"][1]["metadata"] == sdk_messages[1]["metadata"]
    # A Chat started from them sends them back and continues the conversation.
    continued = restored["continued"]
    assert continued["status"] == "ready", continued
    assert [m["role"] for m in continued["messages"]] == ["user", "assistant"] * 2
    assert continued["messages"][2]["parts"] == [{"type": "text", "text": "Again"}]


def test_an_edited_message_reaches_the_sdk_as_the_edit_unsupported_error(
    sdk_results: dict[str, Any],
) -> None:
    edited = sdk_results["edited"]
    chat = edited["chat"]
    first_id = edited["before"][0]["id"]
    # The SDK sent the history up to the edited message, which the server refused.
    assert chat["status"] == "error"
    assert [m["parts"] for m in chat["messages"]] == [[{"type": "text", "text": "Hello, edited"}]]
    error = json.loads(chat["error"])["error"]
    assert error["type"] == "edit_unsupported"
    assert error["messageId"] == first_id
    assert "branch support" in error["message"] and json.dumps(first_id) in error["message"]
    assert chat["errors"] == [chat["error"]]
    assert edited["after"] == edited["before"]
    assert len(edited["before"]) == 4
