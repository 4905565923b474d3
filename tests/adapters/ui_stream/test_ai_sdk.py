"""The adapter against the genuine AI SDK's server helpers, through Node.

``tests/js/ui_client_server.mjs`` is a chat endpoint made of the npm package ``ai``
(pinned in ``tests/js/package.json``) only: ``validateUIMessages`` and
``convertToModelMessages`` on the request, ``streamText`` over ``MockLanguageModelV4``
from ``ai/test``, ``toUIMessageStream`` / ``createUIMessageStream``, and
``createUIMessageStreamResponse`` or ``pipeUIMessageStreamToResponse``. The suite
installs the npm packages itself when they are missing; these tests never skip.
"""

from __future__ import annotations

import json
import subprocess
import tempfile
from collections.abc import AsyncGenerator, Iterator, Mapping
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest

from ai_chat import RemoteStreamError, TruncatedStreamError, create_chat_stream
from ai_chat.adapters.ui_stream import UIMessageStreamAdapter

from .._support.common import run_example, stream_failure
from .wire import HANG_GUARD, HELLO, collect, plain, types

pytestmark = pytest.mark.anyio

JS = Path(__file__).resolve().parents[2] / "js"


@pytest.fixture(scope="module")
def node_server(node: str, node_modules: Path) -> Iterator[str]:
    """The AI SDK endpoint's base URL."""
    # stderr goes to a file, so that nothing the server logs can ever block it.
    with tempfile.TemporaryFile() as errors:
        process = subprocess.Popen(
            [node, str(JS / "ui_client_server.mjs")],
            stdout=subprocess.PIPE,
            stderr=errors,
            text=True,
        )
        try:
            assert process.stdout is not None
            line = process.stdout.readline()
            if not line:
                errors.seek(0)
                pytest.fail(
                    f"the Node server did not start: {errors.read().decode(errors='replace')}"
                )
            yield f"http://127.0.0.1:{json.loads(line)['port']}"
        finally:
            process.terminate()
            process.wait(timeout=10)
            if process.stdout is not None:
                process.stdout.close()


@pytest.fixture
async def sdk(node_server: str) -> AsyncGenerator[tuple[str, httpx.AsyncClient]]:
    async with httpx.AsyncClient() as client:
        yield node_server, client


def adapter_for(sdk: tuple[str, httpx.AsyncClient], scenario: str) -> UIMessageStreamAdapter:
    base, client = sdk
    return UIMessageStreamAdapter(
        f"{base}/api/chat", client=client, body={"scenario": scenario}, chat_id="chat-1"
    )


async def test_a_text_answer_with_message_metadata(sdk: tuple[str, httpx.AsyncClient]) -> None:
    events = await collect(adapter_for(sdk, "text"))
    assert plain(events) == [
        {"type": "start", "messageMetadata": {"model": "mock-model-id"}},
        {"type": "start-step"},
        {"type": "text-start", "id": "t1"},
        {"type": "text-delta", "id": "t1", "delta": "Hello"},
        {"type": "text-delta", "id": "t1", "delta": ", "},
        {"type": "text-delta", "id": "t1", "delta": "world"},
        {"type": "text-end", "id": "t1"},
        {"type": "finish-step"},
        {
            "type": "finish",
            "finishReason": "stop",
            "messageMetadata": {"usage": {"inputTokens": 5, "outputTokens": 7}},
            "usage": {"inputTokens": 5, "outputTokens": 7},
        },
    ]


async def test_reasoning_through_pipe_to_response(sdk: tuple[str, httpx.AsyncClient]) -> None:
    events = await collect(adapter_for(sdk, "reasoning"))
    assert plain(events) == [
        {"type": "start"},
        {"type": "start-step"},
        {"type": "reasoning-start", "id": "r1"},
        {"type": "reasoning-delta", "id": "r1", "delta": "The user greets; "},
        {"type": "reasoning-delta", "id": "r1", "delta": "answer briefly."},
        {"type": "reasoning-end", "id": "r1"},
        {"type": "text-start", "id": "t1"},
        {"type": "text-delta", "id": "t1", "delta": "Hi!"},
        {"type": "text-end", "id": "t1"},
        {"type": "finish-step"},
        {"type": "finish", "finishReason": "stop"},
    ]


async def test_data_tools_sources_and_files(sdk: tuple[str, httpx.AsyncClient]) -> None:
    events = await collect(adapter_for(sdk, "tools"))
    assert plain(events) == [
        {"type": "start", "messageId": "msg-generated"},
        {"type": "data-weather", "id": "w1", "data": {"city": "Berlin", "status": "loading"}},
        {"type": "start-step"},
        {
            "type": "tool-input-start",
            "toolCallId": "call-1",
            "toolName": "weather",
            "dynamic": False,
        },
        {"type": "tool-input-delta", "toolCallId": "call-1", "inputTextDelta": '{"city":'},
        {"type": "tool-input-delta", "toolCallId": "call-1", "inputTextDelta": '"Berlin"}'},
        {
            "type": "tool-input-available",
            "toolCallId": "call-1",
            "toolName": "weather",
            "input": {"city": "Berlin"},
        },
        {
            "type": "tool-output-available",
            "toolCallId": "call-1",
            "output": {"city": "Berlin", "temperature": 21, "unit": "C"},
            "dynamic": False,
        },
        {"type": "finish-step"},
        {"type": "start-step"},
        {
            "type": "source-url",
            "sourceId": "src-1",
            "url": "https://example.com/berlin",
            "title": "Berlin weather",
        },
        {"type": "text-start", "id": "t2"},
        {"type": "text-delta", "id": "t2", "delta": "It is 21 degrees in Berlin."},
        {"type": "text-end", "id": "t2"},
        {"type": "file", "mediaType": "image/png", "url": "data:image/png;base64,iVBORw=="},
        {"type": "finish-step"},
        {
            "type": "finish",
            "finishReason": "stop",
            "messageMetadata": {"usage": {"inputTokens": 30, "outputTokens": 13}},
            "usage": {"inputTokens": 30, "outputTokens": 13},
        },
    ]


HISTORY: list[dict[str, Any]] = [
    {"id": "s1", "role": "system", "parts": [{"type": "text", "text": "Be brief."}]},
    {
        "id": "u1",
        "role": "user",
        "parts": [
            {"type": "file", "mediaType": "text/plain", "url": "data:text/plain;base64,aGk="},
            {"type": "text", "text": "Weather in Oslo?"},
        ],
    },
    {
        "id": "a1",
        "role": "assistant",
        "parts": [
            {"type": "reasoning", "text": "Use the tools."},
            {"type": "text", "text": "Checking."},
            {
                "type": "tool-call",
                "toolCallId": "c1",
                "toolName": "weather",
                "input": {"city": "Oslo"},
            },
            {"type": "tool-call", "toolCallId": "c2", "toolName": "clock", "input": {}},
        ],
    },
    {
        "id": "t1",
        "role": "tool",
        "parts": [
            {"type": "tool-result", "toolCallId": "c1", "toolName": "weather", "output": {"t": 3}},
            {
                "type": "tool-result",
                "toolCallId": "c2",
                "toolName": "clock",
                "output": "no clock",
                "isError": True,
            },
        ],
    },
    {"id": "a2", "role": "assistant", "parts": [{"type": "text", "text": "It is 3 degrees."}]},
    {"id": "u2", "role": "user", "parts": [{"type": "text", "text": "Thanks"}]},
]


async def test_the_sdk_validates_and_converts_our_request(
    sdk: tuple[str, httpx.AsyncClient],
) -> None:
    """validateUIMessages accepts the body, and convertToModelMessages gives the model
    the history we meant (the mock model's prompt comes back as the answer's text)."""
    events = await collect(adapter_for(sdk, "prompt"), {"messages": HISTORY})
    prompt = json.loads("".join(e["delta"] for e in plain(events) if e["type"] == "text-delta"))
    assert prompt == [
        {"role": "system", "content": "Be brief."},
        {
            "role": "user",
            "content": [
                {
                    "type": "file",
                    "mediaType": "text/plain",
                    "data": {"type": "data", "data": "aGk="},
                },
                {"type": "text", "text": "Weather in Oslo?"},
            ],
        },
        {
            "role": "assistant",
            "content": [
                {"type": "reasoning", "text": "Use the tools."},
                {"type": "text", "text": "Checking."},
                {
                    "type": "tool-call",
                    "toolCallId": "c1",
                    "toolName": "weather",
                    "input": {"city": "Oslo"},
                },
                {"type": "tool-call", "toolCallId": "c2", "toolName": "clock", "input": {}},
            ],
        },
        {
            "role": "tool",
            "content": [
                {
                    "type": "tool-result",
                    "toolCallId": "c1",
                    "toolName": "weather",
                    "output": {"type": "json", "value": {"t": 3}},
                },
                {
                    "type": "tool-result",
                    "toolCallId": "c2",
                    "toolName": "clock",
                    "output": {"type": "error-text", "value": "no clock"},
                },
            ],
        },
        {"role": "assistant", "content": [{"type": "text", "text": "It is 3 degrees."}]},
        {"role": "user", "content": [{"type": "text", "text": "Thanks"}]},
    ]


async def test_an_error_chunk_from_stream_text(sdk: tuple[str, httpx.AsyncClient]) -> None:
    error, events = await stream_failure(adapter_for(sdk, "error"), RemoteStreamError)
    assert error.error_text == "the model exploded"
    # The SDK server goes on after the error chunk; the adapter stops at it.
    assert types(events) == ["start", "start-step", "text-start", "text-delta"]


@pytest.mark.parametrize(
    ("scenario", "error_type", "seen"),
    [
        ("abort", "abort", ["start", "start-step", "text-start"]),
        (
            "interrupted",
            "interrupted",
            ["start", "start-step", "text-start", "text-delta", "text-end", "finish-step"],
        ),
    ],
)
async def test_an_unfinished_answer_is_truncated(
    sdk: tuple[str, httpx.AsyncClient], scenario: str, error_type: str, seen: list[str]
) -> None:
    error, events = await stream_failure(adapter_for(sdk, scenario), TruncatedStreamError)
    assert error.error_type == error_type
    assert types(events) == seen


async def _abandoned(base: str, client: httpx.AsyncClient) -> int:
    response = await client.get(f"{base}/stats")
    stats: Mapping[str, int] = response.json()
    return stats["abandoned"]


async def test_stopping_mid_answer_closes_the_connection(
    sdk: tuple[str, httpx.AsyncClient],
) -> None:
    base, client = sdk
    before = await _abandoned(base, client)
    with anyio.fail_after(HANG_GUARD):
        async with create_chat_stream(adapter_for(sdk, "slow"), HELLO) as stream:
            deltas = 0
            async for event in stream:
                deltas += event["type"] == "text-delta"
                if deltas == 3:
                    break
        # The Node server saw the socket close before the body ended.
        while await _abandoned(base, client) != before + 1:
            await anyio.sleep(0.01)


# --- the example ------------------------------------------------------------------------------


async def test_the_example_streams_from_the_ai_sdk_endpoint(node_server: str) -> None:
    result = await run_example(
        "examples/ui_stream_client.py",
        f"{node_server}/api/chat",
        "What is the weather?",
        *("--body", '{"scenario": "tools"}', "--header", "x-app: example"),
    )
    assert result.returncode == 0, result.stderr.decode()
    assert result.stdout.decode().splitlines() == [
        '[data-weather {"city":"Berlin","status":"loading"}]',
        '[tool call weather {"city":"Berlin"}]',
        '[tool result call-1 {"city":"Berlin","temperature":21,"unit":"C"}]',
        "[source https://example.com/berlin]",
        "It is 21 degrees in Berlin.",
        '[finish: stop · metadata {"usage":{"inputTokens":30,"outputTokens":13}}]',
    ]


async def test_the_example_reports_a_failure(node_server: str) -> None:
    result = await run_example(
        "examples/ui_stream_client.py",
        f"{node_server}/api/chat",
        "Hello",
        *("--body", '{"scenario": "error"}'),
    )
    assert result.returncode == 1
    assert result.stdout.decode() == "Partial"
    assert result.stderr.decode().strip() == (
        "RemoteStreamError: ui-stream (error): the server reported an error in the stream: "
        "the model exploded"
    )
