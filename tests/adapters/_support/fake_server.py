"""A loopback HTTP/1.1 server that speaks a provider's wire format, for adapter tests.

It runs on anyio's TCP listener inside the test's own task group, so the same test runs on
asyncio and trio, and the genuine provider SDKs talk to it over real sockets::

    def handler(request: Request) -> Response:
        return Response(200, {"content-type": "text/event-stream"}, [b"data: hi\\n\\n"])

    async with serve(handler) as server:
        client = AsyncOpenAI(base_url=server.url("/v1"), api_key="test", max_retries=0)
        ...
        assert server.requests[0].json()["model"] == "gpt-test"

A handler maps each :class:`Request` (method, path, lower-cased headers, body) to a
:class:`Response`: a status, headers, and a list of body *steps*, sent in order with
chunked transfer encoding:

* ``bytes``: one HTTP chunk (empty bytes are skipped: an empty chunk would end the body);
* a number: sleep that many seconds;
* ``"drop"``: close the connection without the final chunk (the client sees an
  incomplete body after a clean TCP close);
* ``"reset"``: close with ``SO_LINGER`` 0, so the client sees a TCP reset;
* ``"hang"``: send nothing more and wait until the client closes the connection.

After the last step the final chunk is sent and the connection stays open for the next
request (keep-alive), as a real server's would. The server counts connections accepted,
connections *closed* (by either side, at any time) and *disconnects* (responses the
client abandoned by closing the connection before their end), so a test can assert that
a stopped stream really released its connection; wait for a count with
:meth:`FakeServer.wait_until`, bounded by ``anyio.fail_after``. The closed and
disconnect counts change as the last act of a connection's task, so once such a wait
returns that task has ended (which keeps task-counting checks, such as the conformance
kit's, exact).
"""

from __future__ import annotations

import json
import socket
import struct
from collections.abc import AsyncGenerator, Callable, Mapping, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from http import HTTPStatus
from typing import Any, Literal, TypeAlias

import anyio
from anyio.abc import SocketAttribute, SocketStream
from anyio.streams.buffered import BufferedByteReceiveStream

__all__ = ["FakeServer", "Request", "Response", "Step", "serve", "sse"]

Step: TypeAlias = bytes | float | Literal["drop", "reset", "hang"]

_MAX_HEAD = 64 * 1024
# Statuses providers send that the standard library does not name.
_REASONS = {529: "Overloaded"}
_CLIENT_GONE = (anyio.BrokenResourceError, anyio.ClosedResourceError, anyio.EndOfStream, OSError)


@dataclass(frozen=True)
class Request:
    """One request as the server received it; header names are lower case."""

    method: str
    path: str
    headers: Mapping[str, str]
    body: bytes

    def json(self) -> Any:
        """The body parsed as JSON."""
        return json.loads(self.body)


@dataclass(frozen=True)
class Response:
    """What to answer: ``transfer-encoding: chunked`` is added to ``headers``."""

    status: int = 200
    headers: Mapping[str, str] = field(default_factory=dict[str, str])
    body: Sequence[Step] = ()
    # "hang": send no status line at all and wait until the client closes the connection
    # (a provider that accepted the request but has not answered yet).
    head: Literal["send", "hang"] = "send"


Handler: TypeAlias = Callable[[Request], Response]


def sse(data: object, *, event: str | None = None, eol: str = "\n") -> bytes:
    """One SSE event as providers send it: ``data: <json>`` (raw UTF-8), a blank line.

    A ``str`` is sent as the data text itself (``"[DONE]"``, or a malformed line).
    ``event`` adds an ``event:`` line (Anthropic, the Responses API); ``eol="\r\n"``
    gives Google's line ends.
    """
    text = data if isinstance(data, str) else json.dumps(data, ensure_ascii=False)
    head = f"event: {event}{eol}" if event is not None else ""
    return f"{head}data: {text}{eol}{eol}".encode()


class FakeServer:
    """The running server: its address, what it received, and what its clients did."""

    def __init__(self, handler: Handler, port: int) -> None:
        self.handler = handler
        self.port = port
        self.requests: list[Request] = []
        self.connections = 0  # TCP connections accepted
        self.disconnects = 0  # responses abandoned by the client before their end
        self.closed = 0  # connections ended, by either side, at any time
        self._changed: anyio.Event | None = None

    def url(self, path: str = "") -> str:
        """``http://127.0.0.1:<port><path>``."""
        return f"http://127.0.0.1:{self.port}{path}"

    async def wait_until(self, predicate: Callable[[FakeServer], bool]) -> None:
        """Return once ``predicate(self)`` holds; bound it with ``anyio.fail_after``."""
        while not predicate(self):
            changed = self._changed = self._changed or anyio.Event()
            await changed.wait()

    def _notify(self) -> None:
        changed, self._changed = self._changed, None
        if changed is not None:
            changed.set()

    async def _connection(self, stream: SocketStream) -> None:
        self.connections += 1
        self._notify()
        reader = BufferedByteReceiveStream(stream)
        abandoned = False
        try:
            while True:
                request = await _read_request(reader)
                if request is None:
                    return
                self.requests.append(request)
                self._notify()
                outcome = await self._respond(stream, reader, self.handler(request))
                if outcome != "done":
                    abandoned = outcome == "abandoned"
                    return
        finally:
            await stream.aclose()
            # Counted last, so that a test woken by it finds this task finished.
            self.disconnects += abandoned
            self.closed += 1
            self._notify()

    async def _respond(
        self, stream: SocketStream, reader: BufferedByteReceiveStream, response: Response
    ) -> Literal["done", "closed", "abandoned"]:
        """Send ``response``: ``"done"`` (ready for another request), ``"closed"`` (the
        server closed the connection) or ``"abandoned"`` (the client closed it first)."""
        if response.head == "hang":
            await _until_closed(reader)
            return "abandoned"
        reason = _REASONS.get(response.status) or HTTPStatus(response.status).phrase
        head = [f"HTTP/1.1 {response.status} {reason}"]
        head += [f"{name}: {value}" for name, value in response.headers.items()]
        head.append("transfer-encoding: chunked")
        try:
            await stream.send(("\r\n".join(head) + "\r\n\r\n").encode("latin-1"))
            for step in response.body:
                if isinstance(step, bytes):
                    if step:
                        await stream.send(b"%x\r\n%s\r\n" % (len(step), step))
                elif step == "drop":
                    return "closed"
                elif step == "reset":
                    raw: socket.socket = stream.extra(SocketAttribute.raw_socket)
                    raw.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                    return "closed"
                elif step == "hang":
                    await _until_closed(reader)
                    return "abandoned"
                else:
                    await anyio.sleep(step)
            await stream.send(b"0\r\n\r\n")
        except _CLIENT_GONE:
            return "abandoned"
        return "done"


@asynccontextmanager
async def serve(handler: Handler) -> AsyncGenerator[FakeServer]:
    """Run a server on an ephemeral loopback port for the duration of the block."""
    listener = await anyio.create_tcp_listener(local_host="127.0.0.1")
    port: int = listener.extra(SocketAttribute.local_port)
    server = FakeServer(handler, port)
    async with listener, anyio.create_task_group() as tg:
        tg.start_soon(listener.serve, server._connection)  # pyright: ignore[reportPrivateUsage]
        try:
            yield server
        finally:
            tg.cancel_scope.cancel()


async def _read_request(reader: BufferedByteReceiveStream) -> Request | None:
    """Read one request (Content-Length bodies only); ``None`` once the client is gone."""
    try:
        head = await reader.receive_until(b"\r\n\r\n", _MAX_HEAD)
    except (anyio.IncompleteRead, *_CLIENT_GONE):
        return None
    request_line, *lines = head.decode("latin-1").split("\r\n")
    method, path, _version = request_line.split(" ", 2)
    headers: dict[str, str] = {}
    for line in lines:
        name, _, value = line.partition(":")
        headers[name.strip().lower()] = value.strip()
    assert "transfer-encoding" not in headers, "chunked request bodies are not supported"
    length = int(headers.get("content-length", "0"))
    try:
        body = await reader.receive_exactly(length) if length else b""
    except (anyio.IncompleteRead, *_CLIENT_GONE):
        return None
    return Request(method, path, headers, body)


async def _until_closed(reader: BufferedByteReceiveStream) -> None:
    """Wait for the client to close the connection (whatever it sends meanwhile is ignored)."""
    try:
        while True:
            await reader.receive()
    except _CLIENT_GONE:
        return
