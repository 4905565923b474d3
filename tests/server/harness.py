"""Running the server for tests: a real uvicorn on loopback, or direct ASGI calls.

* :func:`running` starts uvicorn in a thread of its own (uvicorn runs on asyncio only),
  on an ephemeral loopback port, so tests on either anyio backend talk to it over real
  sockets with httpx. The app's adapters then run in that thread: adapters that report
  to a test do it through :mod:`threading` primitives.
* :func:`call_asgi` calls an ASGI app directly in the test's own event loop (so the
  server code runs on trio too), with a ``receive`` that delivers the body and then
  waits for the test to signal a disconnect, as Starlette's own tests do.
"""

from __future__ import annotations

import json
import socket
import threading
from collections.abc import AsyncIterator, Callable, Generator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import anyio
import anyio.to_thread
import uvicorn
from starlette.types import ASGIApp, Message

from ai_chat import AbortSignal
from ai_chat.types import ChatRequest

# A guard against hangs, never a performance assertion.
HANG_GUARD = 10.0

HELLO: Mapping[str, Any] = {
    "id": "chat-1",
    "messages": [{"id": "u1", "role": "user", "parts": [{"type": "text", "text": "Hello"}]}],
    "trigger": "submit-message",
}


@contextmanager
def running(app: ASGIApp) -> Generator[str]:
    """Serve ``app`` with uvicorn on 127.0.0.1 in a thread; yield its base URL."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    config = uvicorn.Config(app, lifespan="off", log_level="warning", timeout_graceful_shutdown=2)
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    try:
        for _ in range(int(HANG_GUARD / 0.01)):
            if server.started or not thread.is_alive():
                break
            threading.Event().wait(0.01)
        assert server.started, "uvicorn did not start"
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(HANG_GUARD)
        sock.close()
        assert not thread.is_alive(), "uvicorn did not stop"


async def hang_up_mid_answer(
    url: str, recorder: Recorder, *, path: str = "/api/chat", body: Mapping[str, Any] = HELLO
) -> None:
    """POST ``body`` to ``path`` over a plain socket, read until ``recorder`` waits in the
    middle of its answer, close the connection, and wait until the adapter has closed.

    A plain socket, not httpx: the test decides exactly when the connection closes.
    """
    data = json.dumps(body).encode()
    request = (
        b"POST %s HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\n"
        b"content-length: %d\r\n\r\n%s" % (path.encode(), len(data), data)
    )
    port = int(url.rsplit(":", 1)[1])
    with anyio.fail_after(HANG_GUARD):
        async with await anyio.connect_tcp("127.0.0.1", port) as connection:
            await connection.send(request)
            seen = b""
            while b'"partial"' not in seen:
                seen += await connection.receive()
            assert seen.startswith(b"HTTP/1.1 200 OK\r\n")
            assert await anyio.to_thread.run_sync(recorder.waiting.wait, HANG_GUARD)
            assert recorder.log == []
        # The connection is closed: the server must cancel the stream.
        assert await anyio.to_thread.run_sync(recorder.closed.wait, HANG_GUARD)


def sse_chunks(body: str) -> list[Any]:
    """The JSON chunks of a UI message stream body, checking its framing on the way.

    Every event must be exactly ``data: <json>`` and a blank line (comments are
    skipped), and the body must end with ``data: [DONE]`` and its blank line.
    """
    assert body.endswith("data: [DONE]\n\n"), body[-200:]
    events = body.split("\n\n")
    assert events.pop() == ""
    assert events.pop() == "data: [DONE]"
    chunks: list[Any] = []
    for event in events:
        if event.startswith(":"):
            assert "\n" not in event
            continue
        assert event.startswith("data: ") and "\n" not in event, event
        chunks.append(json.loads(event[len("data: ") :]))
    return chunks


@dataclass
class ASGIResult:
    """What an app sent: status, headers, the body chunks (one per ASGI message)."""

    status: int = 0
    headers: dict[str, str] = field(default_factory=dict[str, str])
    bodies: list[bytes] = field(default_factory=list[bytes])
    complete: bool = False

    @property
    def body(self) -> bytes:
        return b"".join(self.bodies)


async def call_asgi(
    app: ASGIApp,
    body: bytes,
    *,
    method: str = "POST",
    path: str = "/api/chat",
    headers: Sequence[tuple[str, str]] = (("content-type", "application/json"),),
    disconnect: anyio.Event | None = None,
    on_body: Callable[[ASGIResult], None] | None = None,
    server: tuple[str, int] = ("127.0.0.1", 8000),
) -> ASGIResult:
    """Call ``app`` once as an HTTP/1.1 server would (ASGI spec 2.3, like uvicorn).

    ``receive`` delivers ``body`` in one message, then blocks until ``disconnect`` is set
    (forever without one) and reports ``http.disconnect``. ``on_body`` runs after each
    body message the app sends. ``server`` is the address the connection came in on.
    """
    result = ASGIResult()
    delivered = False

    async def receive() -> Message:
        nonlocal delivered
        if not delivered:
            delivered = True
            return {"type": "http.request", "body": body, "more_body": False}
        if disconnect is None:
            await anyio.sleep_forever()
        else:
            await disconnect.wait()
        return {"type": "http.disconnect"}

    async def send(message: Message) -> None:
        if message["type"] == "http.response.start":
            result.status = message["status"]
            result.headers = {
                name.decode("latin-1"): value.decode("latin-1")
                for name, value in message["headers"]
            }
        elif message["type"] == "http.response.body":
            assert not result.complete, "a body message after the end of the body"
            result.bodies.append(message.get("body", b""))
            result.complete = not message.get("more_body", False)
            if on_body is not None:
                on_body(result)

    scope: dict[str, Any] = {
        "type": "http",
        "asgi": {"version": "3.0", "spec_version": "2.3"},
        "http_version": "1.1",
        "method": method,
        "scheme": "http",
        "path": path,
        "raw_path": path.encode(),
        "query_string": b"",
        "root_path": "",
        "headers": [(k.encode("latin-1"), v.encode("latin-1")) for k, v in headers]
        + [(b"content-length", str(len(body)).encode())],
        "client": ("127.0.0.1", 50000),
        "server": server,
        "state": {},
    }
    await app(scope, receive, send)
    return result


class Recorder:
    """An adapter that streams a little text, then waits until it is stopped.

    It records, thread-safely, that it started waiting, why its signal was aborted, and
    that it was cancelled and closed, in that order.
    """

    def __init__(self) -> None:
        self.waiting = threading.Event()
        self.closed = threading.Event()
        self.log: list[str] = []
        self.reason: str | None = None
        self.requests: list[ChatRequest] = []

    async def stream(
        self, request: ChatRequest, signal: AbortSignal
    ) -> AsyncIterator[Mapping[str, object]]:
        self.requests.append(request)
        try:
            yield {"type": "start"}
            yield {"type": "text-start", "id": "t"}
            yield {"type": "text-delta", "id": "t", "delta": "partial"}
            self.waiting.set()
            await anyio.sleep_forever()
        except anyio.get_cancelled_exc_class():
            self.log.append("cancelled")
            raise
        finally:
            self.reason = signal.reason
            self.log.append(f"closed, aborted={signal.aborted}")
            self.closed.set()
