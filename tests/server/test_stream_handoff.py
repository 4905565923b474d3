"""A ChatStream peeked in a Starlette endpoint and read on by a ``StreamingResponse``.

Starlette iterates a streaming body in a child task of the endpoint's (ASGI spec 2.3,
as uvicorn serves it), so the stream's first read and the rest happen in two tasks. The
app here is a plain Starlette app written the way a user would, not ``ai_chat.server``:
over real HTTP with uvicorn (the app on asyncio in uvicorn's thread, the client on
either backend) and called in the test's own event loop (the app on asyncio and trio).
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Mapping
from typing import Any

import anyio
import httpx
import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from ai_chat import AbortSignal, AIChatAdapter, ProviderError, create_chat_stream
from ai_chat.adapters import ScriptedAdapter
from ai_chat.types import ChatRequest

from .harness import HANG_GUARD, HELLO, ASGIResult, Recorder, call_asgi, hang_up_mid_answer, running
from .scripts import EVERY_EVENT

pytestmark = pytest.mark.anyio


class Refused:
    """A provider that fails before its first event (a 401, say)."""

    async def stream(
        self, request: ChatRequest, signal: AbortSignal
    ) -> AsyncIterator[Mapping[str, object]]:
        raise ProviderError("example", "invalid api key", status=401)
        yield {}  # an async generator that never gets this far


def peeking_app(adapter: AIChatAdapter) -> Starlette:
    """An endpoint that reads the first event itself, to answer a failure before it
    commits to 200, then streams the rest as newline-delimited JSON."""

    async def chat(request: Request) -> Response:
        payload = await request.json()
        stream = create_chat_stream(adapter, {"messages": payload["messages"]})
        try:
            first = await stream.__anext__()
        except ProviderError as exc:
            await stream.aclose()
            return JSONResponse({"error": exc.detail}, status_code=502)

        async def body() -> AsyncIterator[str]:
            try:
                yield json.dumps(first) + "\n"
                async for event in stream:  # in Starlette's child task
                    yield json.dumps(event) + "\n"
            finally:
                await stream.aclose()

        return StreamingResponse(body(), media_type="application/x-ndjson")

    return Starlette(routes=[Route("/chat", chat, methods=["POST"])])


def events_of(text: str) -> list[Any]:
    return [json.loads(line) for line in text.splitlines()]


async def test_peek_then_streaming_response_over_real_http() -> None:
    with running(peeking_app(ScriptedAdapter(EVERY_EVENT))) as url:
        async with httpx.AsyncClient(base_url=url, timeout=HANG_GUARD) as client:
            response = await client.post("/chat", json=HELLO)
    assert response.status_code == 200
    assert events_of(response.text) == EVERY_EVENT


async def test_a_failure_seen_by_the_peek_gets_its_own_status_over_real_http() -> None:
    with running(peeking_app(Refused())) as url:
        async with httpx.AsyncClient(base_url=url, timeout=HANG_GUARD) as client:
            response = await client.post("/chat", json=HELLO)
    assert response.status_code == 502
    assert response.json() == {"error": "invalid api key"}


async def test_a_disconnect_after_the_peek_cancels_the_body_read_over_real_http() -> None:
    recorder = Recorder()
    with running(peeking_app(recorder)) as url:
        # Starlette cancels the body task, and with it the read pending in that task.
        await hang_up_mid_answer(url, recorder, path="/chat")
    assert recorder.log == ["cancelled", "closed, aborted=True"]
    assert recorder.reason == "the consumer's read was cancelled"


async def test_peek_then_streaming_response_in_the_tests_event_loop() -> None:
    transport = httpx.ASGITransport(app=peeking_app(ScriptedAdapter(EVERY_EVENT)))
    async with httpx.AsyncClient(transport=transport, base_url="http://test") as client:
        with anyio.fail_after(HANG_GUARD):
            ok = await client.post("/chat", json=HELLO)
    transport = httpx.ASGITransport(app=peeking_app(Refused()))
    async with httpx.AsyncClient(transport=transport, base_url="http://test") as client:
        with anyio.fail_after(HANG_GUARD):
            refused = await client.post("/chat", json=HELLO)
    assert ok.status_code == 200 and events_of(ok.text) == EVERY_EVENT
    assert refused.status_code == 502


async def test_a_disconnect_after_the_peek_cancels_the_body_read_in_the_tests_event_loop() -> None:
    recorder = Recorder()
    disconnect = anyio.Event()

    def on_body(result: ASGIResult) -> None:
        if b'"partial"' in result.body:
            disconnect.set()

    with anyio.fail_after(HANG_GUARD):
        result = await call_asgi(
            peeking_app(recorder),
            json.dumps(HELLO).encode(),
            path="/chat",
            disconnect=disconnect,
            on_body=on_body,
        )
    assert result.status == 200
    assert [e["type"] for e in events_of(result.body.decode())] == [
        "start",
        "text-start",
        "text-delta",
    ]
    # The body's finally closed the stream, which waits for the adapter to stop.
    assert recorder.closed.is_set()
    assert recorder.log == ["cancelled", "closed, aborted=True"]
    assert recorder.reason == "the consumer's read was cancelled"
