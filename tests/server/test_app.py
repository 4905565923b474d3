"""create_chat_app and chat_endpoint through a real uvicorn on loopback (and direct ASGI
calls where the test must see exactly what the server reads)."""

from __future__ import annotations

import json
import threading
from collections.abc import AsyncIterator, Iterator, Mapping
from typing import Any

import anyio
import anyio.to_thread
import httpx
import pytest
from starlette.applications import Starlette
from starlette.routing import Route
from starlette.types import Message

from ai_chat import AbortSignal, ConfigurationError, ValidationError
from ai_chat.adapters import ScriptedAdapter
from ai_chat.limits import JSONLimits
from ai_chat.server import MASKED_ERROR, chat_endpoint, create_chat_app
from ai_chat.server._page import CHAT_PAGE_HTML, chat_page_html
from ai_chat.types import ChatRequest

from .harness import (
    HANG_GUARD,
    HELLO,
    Recorder,
    call_asgi,
    hang_up_mid_answer,
    running,
    sse_chunks,
)
from .scripts import EVERY_CHUNK, EVERY_EVENT

pytestmark = pytest.mark.anyio

PROTOCOL_HEADERS = {
    "content-type": "text/event-stream",
    "cache-control": "no-cache",
    "connection": "keep-alive",
    "x-vercel-ai-ui-message-stream": "v1",
    "x-accel-buffering": "no",
}


class Capturing:
    """Records each request (thread-safely enough: appends) and answers with one text."""

    def __init__(self) -> None:
        self.requests: list[ChatRequest] = []

    async def stream(
        self, request: ChatRequest, signal: AbortSignal
    ) -> AsyncIterator[Mapping[str, object]]:
        self.requests.append(request)
        yield {"type": "start", "messageId": "from-adapter"}
        yield {"type": "text-start", "id": "t"}
        yield {"type": "text-delta", "id": "t", "delta": "ok"}
        yield {"type": "text-end", "id": "t"}
        yield {"type": "finish", "finishReason": "stop"}


@pytest.fixture(scope="module")
def every_event_url() -> Iterator[str]:
    with running(create_chat_app(ScriptedAdapter(EVERY_EVENT))) as url:
        yield url


async def post(url: str, body: object, **kwargs: Any) -> httpx.Response:
    content = body if isinstance(body, bytes) else json.dumps(body).encode()
    with anyio.fail_after(HANG_GUARD):
        async with httpx.AsyncClient() as client:
            return await client.post(
                url + "/api/chat",
                content=content,
                headers={"content-type": "application/json"},
                **kwargs,
            )


async def test_the_default_adapter_answers_over_real_http() -> None:
    with running(create_chat_app(ScriptedAdapter())) as url:
        response = await post(url, HELLO)
    assert response.status_code == 200
    assert {k: response.headers[k] for k in PROTOCOL_HEADERS} == PROTOCOL_HEADERS
    assert response.headers["transfer-encoding"] == "chunked"
    chunks = sse_chunks(response.text)
    assert chunks[0]["type"] == "start" and chunks[0]["messageId"].startswith("msg-")
    assert "".join(c["delta"] for c in chunks if c["type"] == "text-delta").startswith(
        'You said: "Hello".'
    )
    finish = chunks[-1]
    assert finish["type"] == "finish" and "usage" not in finish
    assert finish["messageMetadata"]["finishReason"] == "tool-calls"
    assert finish["messageMetadata"]["usage"]["inputTokens"] == 1


async def test_every_event_kind_over_real_http(every_event_url: str) -> None:
    response = await post(every_event_url, HELLO)
    assert sse_chunks(response.text) == EVERY_CHUNK


async def test_events_arrive_as_they_are_sent() -> None:
    # The adapter waits after its first delta until the client has seen that delta: a
    # server that buffered events would leave both waiting (until the guard expires).
    seen_first = threading.Event()

    class Waits:
        async def stream(
            self, request: ChatRequest, signal: AbortSignal
        ) -> AsyncIterator[Mapping[str, object]]:
            yield {"type": "start"}
            yield {"type": "text-start", "id": "t"}
            yield {"type": "text-delta", "id": "t", "delta": "first"}
            await anyio.to_thread.run_sync(seen_first.wait, HANG_GUARD)
            yield {"type": "text-end", "id": "t"}
            yield {
                "type": "finish",
                "finishReason": "stop",
                "messageMetadata": {"waited": seen_first.is_set()},
            }

    with running(create_chat_app(Waits())) as url:
        with anyio.fail_after(HANG_GUARD * 2):
            async with (
                httpx.AsyncClient() as client,
                client.stream("POST", url + "/api/chat", json=HELLO) as response,
            ):
                body = b""
                async for piece in response.aiter_raw():
                    body += piece
                    if b'"first"' in body:
                        seen_first.set()
    chunks = sse_chunks(body.decode())
    assert chunks[-1]["messageMetadata"]["waited"] is True


BAD_REQUESTS: list[tuple[object, int, str, str | None, str]] = [
    (b"{bad", 400, "invalid_json", None, "not JSON"),
    (b"\xff\xfe", 400, "invalid_json", None, "not UTF-8"),
    (b"[" * 100_000, 400, "invalid_json", None, "nested too deeply"),
    (b'{"messages": NaN}', 400, "invalid_json", None, "NaN is not JSON"),
    (b"", 400, "invalid_json", None, "not JSON"),
    (b"[]", 422, "invalid_request", "$", "expected a JSON object"),
    (b"{}", 422, "invalid_request", "$", 'missing required field "messages"'),
    ({"messages": {}}, 422, "invalid_request", "$.messages", "expected an array"),
    ({"messages": []}, 422, "invalid_request", "$.messages", "at least one message"),
    ({"messages": [1]}, 422, "invalid_request", "$.messages[0]", "expected a message object"),
    (
        {"messages": [{"id": "u", "role": "bot", "parts": []}]},
        422,
        "invalid_request",
        "$.messages[0].role",
        '"bot"',
    ),
    (
        {"messages": [{"id": "", "role": "user", "parts": []}]},
        422,
        "invalid_request",
        "$.messages[0].id",
        "non-empty string",
    ),
    (
        {"messages": [{"id": "u", "role": "user"}]},
        422,
        "invalid_request",
        "$.messages[0]",
        '"parts"',
    ),
    (
        {"messages": [{"id": "u", "role": "user", "parts": []}]},
        422,
        "invalid_request",
        "$.messages[0].parts",
        "at least one text or file part",
    ),
    (
        {"messages": [{"id": "u", "role": "user", "parts": [{"type": "textt", "text": ""}]}]},
        422,
        "invalid_request",
        "$.messages[0].parts[0].type",
        'unknown part type "textt"',
    ),
    (
        {"messages": [{"id": "u", "role": "user", "parts": [{"type": "reasoning", "text": ""}]}]},
        422,
        "invalid_request",
        "$.messages[0].parts[0].type",
        'cannot hold a "reasoning" part',
    ),
    (
        {"messages": [{"id": "u", "role": "user", "parts": [{"type": "text", "text": None}]}]},
        422,
        "invalid_request",
        "$.messages[0].parts[0].text",
        "expected a string, got null",
    ),
    (
        {
            "messages": [
                HELLO["messages"][0],
                {
                    "id": "a",
                    "role": "assistant",
                    "parts": [{"type": "tool-x", "state": "output-available"}],
                },
            ]
        },
        422,
        "invalid_request",
        "$.messages[1].parts[0]",
        '"toolCallId"',
    ),
    ({**HELLO, "trigger": "resume"}, 422, "invalid_request", "$.trigger", '"resume"'),
    ({**HELLO, "messageId": 5}, 422, "invalid_request", "$.messageId", "non-empty string"),
    ({**HELLO, "id": ["x"]}, 422, "invalid_request", "$.id", "a string"),
]


@pytest.mark.parametrize(("body", "status", "kind", "path", "words"), BAD_REQUESTS)
async def test_bad_requests_get_a_json_error_naming_the_problem(
    every_event_url: str, body: object, status: int, kind: str, path: str | None, words: str
) -> None:
    response = await post(every_event_url, body)
    assert response.status_code == status, response.text
    assert response.headers["content-type"] == "application/json"
    error = response.json()["error"]
    assert error["type"] == kind
    assert words in error["message"]
    assert error.get("path") == path


async def test_extra_body_keys_are_tolerated(every_event_url: str) -> None:
    response = await post(every_event_url, {**HELLO, "extra": {"any": "thing"}, "model": 1})
    assert response.status_code == 200
    assert sse_chunks(response.text) == EVERY_CHUNK


async def test_other_methods_get_a_json_405(every_event_url: str) -> None:
    with anyio.fail_after(HANG_GUARD):
        async with httpx.AsyncClient() as client:
            response = await client.get(every_event_url + "/api/chat")
    assert response.status_code == 405
    assert response.headers["allow"] == "POST"
    assert response.json()["error"]["type"] == "method_not_allowed"


async def test_a_body_over_the_limit_is_refused_with_413() -> None:
    app = create_chat_app(ScriptedAdapter(), max_body_bytes=1000)
    big = {**HELLO, "padding": "x" * 2000}
    small = {**HELLO, "padding": "x" * 500}

    async def chunked() -> AsyncIterator[bytes]:
        data = json.dumps(big).encode()
        for start in range(0, len(data), 100):
            yield data[start : start + 100]

    with running(app) as url:
        declared = await post(url, big)
        assert declared.status_code == 413
        with anyio.fail_after(HANG_GUARD):
            async with httpx.AsyncClient() as client:
                streamed = await client.post(
                    url + "/api/chat",
                    content=chunked(),
                    headers={"content-type": "application/json"},
                )
        assert (await post(url, small)).status_code == 200
    assert streamed.status_code == 413
    for response in (declared, streamed):
        error = response.json()["error"]
        assert error == {
            "type": "body_too_large",
            "message": "the request body is larger than max_body_bytes=1,000 bytes",
        }


async def test_the_body_is_never_read_past_the_limit() -> None:
    app = create_chat_app(ScriptedAdapter(), max_body_bytes=1000)
    received = 0

    async def receive() -> Message:
        nonlocal received
        received += 1
        return {"type": "http.request", "body": b"x" * 100, "more_body": True}

    result: dict[str, Any] = {}

    async def send(message: Message) -> None:
        if message["type"] == "http.response.start":
            result["status"] = message["status"]

    scope = {
        "type": "http",
        "asgi": {"version": "3.0", "spec_version": "2.3"},
        "http_version": "1.1",
        "method": "POST",
        "scheme": "http",
        "path": "/api/chat",
        "raw_path": b"/api/chat",
        "query_string": b"",
        "root_path": "",
        "headers": [(b"content-type", b"application/json")],
        "client": ("127.0.0.1", 1),
        "server": ("127.0.0.1", 2),
    }
    with anyio.fail_after(HANG_GUARD):
        await app(scope, receive, send)
    assert result["status"] == 413
    assert received == 11  # 1,100 bytes: the first read past the limit stops it


async def test_a_history_over_the_json_limits_gets_413() -> None:
    app = create_chat_app(ScriptedAdapter(), limits=JSONLimits(max_values=20))
    parts = [{"type": "text", "text": str(n)} for n in range(30)]
    body = {"messages": [{"id": "u", "role": "user", "parts": parts}]}
    with anyio.fail_after(HANG_GUARD):
        result = await call_asgi(app, json.dumps(body).encode())
    assert result.status == 413
    error = json.loads(result.body)["error"]
    assert error["type"] == "limit_exceeded"
    assert "max_values=20" in error["message"]


async def test_a_client_disconnect_cancels_the_adapter_over_real_http() -> None:
    recorder = Recorder()
    with running(create_chat_app(recorder)) as url:
        await hang_up_mid_answer(url, recorder)
    assert recorder.log == ["cancelled", "closed, aborted=True"]
    assert recorder.reason == "the consumer's read was cancelled"


async def test_a_failure_mid_stream_is_masked_over_real_http() -> None:
    class Broken:
        async def stream(
            self, request: ChatRequest, signal: AbortSignal
        ) -> AsyncIterator[Mapping[str, object]]:
            yield {"type": "start"}
            raise RuntimeError("database password is hunter2")

    with running(create_chat_app(Broken())) as url:
        response = await post(url, HELLO)
    assert response.status_code == 200
    assert "hunter2" not in response.text
    assert sse_chunks(response.text)[-1] == {"type": "error", "errorText": MASKED_ERROR}


async def test_continuing_an_assistant_message_reuses_its_id() -> None:
    adapter = Capturing()
    assistant = {
        "id": "a1",
        "role": "assistant",
        "parts": [
            {"type": "step-start"},
            {"type": "text", "text": "Let me look.", "state": "done"},
            {
                "type": "tool-weather",
                "toolCallId": "c1",
                "state": "output-available",
                "input": {"city": "Berlin"},
                "output": {"temperature": 21},
            },
        ],
    }
    body = {
        "id": "chat",
        "messages": [HELLO["messages"][0], assistant],
        "trigger": "submit-message",
        "messageId": "a1",
    }
    with running(create_chat_app(adapter)) as url:
        response = await post(url, body)
        regenerated = await post(url, {**body, "trigger": "regenerate-message"})
    assert sse_chunks(response.text)[0] == {"type": "start", "messageId": "a1"}
    assert [dict(m) for m in adapter.requests[0]["messages"]] == [
        {"id": "u1", "role": "user", "parts": ({"type": "text", "text": "Hello"},)},
        {
            "id": "a1",
            "role": "assistant",
            "parts": (
                {"type": "text", "text": "Let me look."},
                {
                    "type": "tool-call",
                    "toolCallId": "c1",
                    "toolName": "weather",
                    "input": {"city": "Berlin"},
                },
            ),
        },
        {
            "id": "a1:tool",
            "role": "tool",
            "parts": (
                {
                    "type": "tool-result",
                    "toolCallId": "c1",
                    "toolName": "weather",
                    "output": {"temperature": 21},
                },
            ),
        },
    ]
    # Regenerating that message drops it: the adapter answers the user message afresh.
    assert sse_chunks(regenerated.text)[0] == {"type": "start", "messageId": "from-adapter"}
    assert [m["id"] for m in adapter.requests[1]["messages"]] == ["u1"]


async def test_server_tools_and_parameters_reach_the_adapter() -> None:
    adapter = Capturing()
    tool = {"name": "weather", "inputSchema": {"type": "object"}, "description": "Weather"}
    app = create_chat_app(adapter, tools=[tool], parameters={"temperature": 0.5})
    with anyio.fail_after(HANG_GUARD):
        result = await call_asgi(app, json.dumps({**HELLO, "tools": "ignored"}).encode())
    assert result.status == 200
    assert adapter.requests[0]["tools"] == (tool,)
    assert adapter.requests[0]["parameters"] == {"temperature": 0.5}


async def test_the_page_is_served_at_the_root() -> None:
    with running(create_chat_app(ScriptedAdapter())) as url:
        with anyio.fail_after(HANG_GUARD):
            async with httpx.AsyncClient() as client:
                page = await client.get(url + "/")
    assert page.status_code == 200
    assert page.headers["content-type"] == "text/html; charset=utf-8"
    assert page.text == CHAT_PAGE_HTML
    with anyio.fail_after(HANG_GUARD):
        result = await call_asgi(
            create_chat_app(ScriptedAdapter(), page=False), b"", method="GET", path="/"
        )
    assert result.status == 404
    # Another endpoint path: the page posts there (relative, so a mount prefix works too).
    app = create_chat_app(ScriptedAdapter(), path="/v1/chat")
    with anyio.fail_after(HANG_GUARD):
        page_result = await call_asgi(app, b"", method="GET", path="/")
        answer = await call_asgi(app, json.dumps(HELLO).encode(), path="/v1/chat")
    assert page_result.body.decode() == chat_page_html("v1/chat") != CHAT_PAGE_HTML
    assert '<meta name="ai-chat-api" content="v1/chat">' in page_result.body.decode()
    assert answer.status == 200


async def test_the_endpoint_mounts_in_an_existing_starlette_app() -> None:
    app = Starlette(
        routes=[Route("/chat", chat_endpoint(ScriptedAdapter(EVERY_EVENT)), methods=["POST"])]
    )
    with anyio.fail_after(HANG_GUARD):
        result = await call_asgi(app, json.dumps(HELLO).encode(), path="/chat")
    assert result.status == 200
    assert sse_chunks(result.body.decode()) == EVERY_CHUNK


def test_configuration_is_checked_once_at_creation() -> None:
    adapter = ScriptedAdapter()
    with pytest.raises(ConfigurationError, match="max_body_bytes"):
        create_chat_app(adapter, max_body_bytes=0)
    with pytest.raises(ConfigurationError, match="keep_alive"):
        create_chat_app(adapter, keep_alive=0)
    with pytest.raises(ConfigurationError, match="path"):
        create_chat_app(adapter, path="api")
    with pytest.raises(ConfigurationError, match="adapter"):
        create_chat_app(object())  # pyright: ignore[reportArgumentType]
    with pytest.raises(ValidationError, match=r"\$\.tools\[0\]"):
        create_chat_app(adapter, tools=[{"name": ""}])
    with pytest.raises(ValidationError, match=r"\$\.parameters\.temperature"):
        create_chat_app(adapter, parameters={"temperature": "hot"})


@pytest.mark.parametrize("declared", ["\u00b2", "1" * 5000, "-1", " 12", "0x10"])
async def test_a_content_length_that_is_not_a_plain_number_is_a_400(declared: str) -> None:
    # uvicorn refuses these itself; other ASGI servers may pass them on to the app.
    result = await call_asgi(
        create_chat_app(ScriptedAdapter()),
        json.dumps(HELLO).encode(),
        headers=(("content-type", "application/json"), ("content-length", declared)),
    )
    assert result.status == 400
    assert json.loads(result.body)["error"] == {
        "type": "invalid_request",
        "message": "the content-length header is not a number",
    }
