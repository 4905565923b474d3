"""A client disconnect closes the adapter's real upstream connection (the genuine openai
SDK against the loopback fake provider), with the server called as an ASGI app in the
test's own event loop so that both backends run it."""

from __future__ import annotations

import json

import anyio
import pytest
from adapters._support.fake_server import Request, Response, serve
from adapters.openai.test_chat import SSE_HEADERS, sdk_client, text_chunks

from ai_chat.adapters.openai import OpenAIChatAdapter
from ai_chat.server import create_chat_app

from .harness import HANG_GUARD, HELLO, ASGIResult, call_asgi, sse_chunks

pytestmark = pytest.mark.anyio


def hanging(request: Request) -> Response:
    """Some text, then nothing until the client goes away."""
    return Response(200, SSE_HEADERS, [*text_chunks("Hel", "lo"), "hang"])


async def test_a_client_disconnect_closes_the_upstream_connection() -> None:
    disconnect = anyio.Event()
    upstream_open_when_client_left: list[int] = []

    async with serve(hanging) as upstream, sdk_client(upstream.url("/v1")) as client:
        app = create_chat_app(OpenAIChatAdapter(client, model="gpt-test"))

        def on_body(result: ASGIResult) -> None:
            if b'"lo"' in result.bodies[-1] and not disconnect.is_set():
                upstream_open_when_client_left.append(upstream.disconnects)
                disconnect.set()

        with anyio.fail_after(HANG_GUARD):
            result = await call_asgi(
                app, json.dumps(HELLO).encode(), disconnect=disconnect, on_body=on_body
            )
            # The provider sees its response abandoned: the connection was closed.
            await upstream.wait_until(lambda server: server.disconnects == 1)
    assert upstream_open_when_client_left == [0]
    assert len(upstream.requests) == 1
    assert not result.complete
    text = result.body.decode()
    assert '"delta":"Hel"' in text and "[DONE]" not in text


async def test_the_provider_answer_streams_through() -> None:
    def complete(request: Request) -> Response:
        from adapters.openai.test_chat import ending

        return Response(200, SSE_HEADERS, [*text_chunks("Hel", "lo"), *ending()])

    async with serve(complete) as upstream, sdk_client(upstream.url("/v1")) as client:
        app = create_chat_app(OpenAIChatAdapter(client, model="gpt-test"))
        with anyio.fail_after(HANG_GUARD):
            result = await call_asgi(app, json.dumps(HELLO).encode())
    chunks = sse_chunks(result.body.decode())
    assert "".join(c["delta"] for c in chunks if c["type"] == "text-delta") == "Hello"
    assert chunks[-1]["messageMetadata"]["usage"]["inputTokens"] == 11
