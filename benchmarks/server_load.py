"""Server load benchmark: ai_chat.server under concurrent streams, and vs the AI SDK's server.

Run with ``uv run --no-sync python benchmarks/server_load.py`` (``--quick`` for a short
smoke run; ``--clients 10,100,1000``, ``--deltas N``, ``--rounds R``).

Three processes: the server under test (uvicorn serving :func:`ai_chat.server.create_chat_app`
over the offline :class:`~ai_chat.adapters.ScriptedAdapter`), a load client (raw loopback
sockets on a bare asyncio protocol, so the client costs as little as possible), and this orchestrator,
which reads the server's resident memory from ``/proc``.

1. **Load**: for 10, 100 and 1,000 concurrent clients, each stream is ``start``,
   ``start-step``, ``text-start``, ``--load-deltas`` text deltas, ``text-end``,
   ``finish-step``, ``finish`` (then ``[DONE]``). Reported: errors, aggregate events per
   second (all events received / wall time), p50 and p99 time to first event.
2. **Memory per open stream**: the same number of streams held open (each has sent its
   first events and waits), server RSS with them open minus RSS before, per stream.
3. **One stream vs the AI SDK**: served events per second for one stream of
   ``--deltas`` text deltas from our server and from the AI SDK's own Node server
   (``streamText`` over ``MockLanguageModelV4`` from ``ai/test`` with
   ``toUIMessageStreamResponse``; tests/js/server_bench_node.mjs), the same events,
   rounds interleaved, medians and their ratio.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import resource
import shutil
import statistics
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, cast

import anyio

ROOT = Path(__file__).resolve().parent.parent
JS = ROOT / "tests" / "js"
sys.path.insert(0, str(ROOT))


def raise_fd_limit() -> None:
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < hard:
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))


def script(deltas: int) -> list[dict[str, Any]]:
    """The events of one answer: the same as the Node baseline's."""
    events: list[dict[str, Any]] = [
        {"type": "start"},
        {"type": "start-step"},
        {"type": "text-start", "id": "t"},
    ]
    events += [{"type": "text-delta", "id": "t", "delta": f"word{i % 10} "} for i in range(deltas)]
    events += [
        {"type": "text-end", "id": "t"},
        {"type": "finish-step"},
        {"type": "finish", "finishReason": "stop", "usage": {"inputTokens": 1}},
    ]
    return events


# --- the server process ----------------------------------------------------------------


def serve(deltas: int, load_deltas: int) -> None:
    """Serve /api/chat (``deltas``), /api/load (``load_deltas``) and /api/hold."""
    import socket

    import uvicorn
    from starlette.applications import Starlette
    from starlette.requests import Request
    from starlette.responses import PlainTextResponse
    from starlette.routing import Route

    from ai_chat import AbortSignal
    from ai_chat.adapters import ScriptedAdapter
    from ai_chat.server import chat_endpoint
    from ai_chat.types import ChatRequest

    raise_fd_limit()
    release: list[anyio.Event] = []

    class Hold:
        """Sends its first events, then waits for /release."""

        async def stream(
            self, request: ChatRequest, signal: AbortSignal
        ) -> AsyncIterator[Mapping[str, object]]:
            if not release:
                release.append(anyio.Event())
            gate = release[0]
            yield {"type": "start"}
            yield {"type": "text-start", "id": "t"}
            yield {"type": "text-delta", "id": "t", "delta": "held"}
            await gate.wait()
            yield {"type": "text-end", "id": "t"}
            yield {"type": "finish", "finishReason": "stop"}

    async def do_release(request: Request) -> PlainTextResponse:
        if release:
            release.pop().set()
        return PlainTextResponse("released")

    # The load comes from one address without cookies: the per-client answer limits
    # (on by default) would refuse all but a few streams, so this measures without them.
    app = Starlette(
        routes=[
            Route(
                "/api/chat",
                chat_endpoint(ScriptedAdapter(script(deltas)), answer_limits=None),
                methods=["POST"],
            ),
            Route(
                "/api/load",
                chat_endpoint(ScriptedAdapter(script(load_deltas)), answer_limits=None),
                methods=["POST"],
            ),
            Route("/api/hold", chat_endpoint(Hold(), answer_limits=None), methods=["POST"]),
            Route("/release", do_release, methods=["POST"]),
        ]
    )
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(4096)  # connections wait in the backlog until uvicorn accepts them
    print(f"http://127.0.0.1:{sock.getsockname()[1]}", flush=True)
    config = uvicorn.Config(app, lifespan="off", log_level="warning", backlog=4096)
    uvicorn.Server(config).run(sockets=[sock])


# --- the client process ------------------------------------------------------------------

BODY = json.dumps(
    {
        "id": "bench",
        "messages": [{"id": "u1", "role": "user", "parts": [{"type": "text", "text": "Hi"}]}],
        "trigger": "submit-message",
    }
).encode()


def request_bytes(path: str) -> bytes:
    return (
        f"POST {path} HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\n"
        f"connection: close\r\ncontent-length: {len(BODY)}\r\n\r\n"
    ).encode() + BODY


class _Stream(asyncio.Protocol):
    """One request on a raw connection: counts ``data: `` frames as the bytes arrive.

    A bare asyncio protocol, so that the client spends as little CPU per event as it
    can and the measurement is the server's.
    """

    def __init__(self, request: bytes, on_first: Callable[[], None]) -> None:
        self.request = request
        self.on_first = on_first
        self.started = time.perf_counter()
        self.first = -1.0
        self.count = 0
        self.tail = b""
        self.done: asyncio.Future[None] = asyncio.get_running_loop().create_future()

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        cast(asyncio.Transport, transport).write(self.request)

    def data_received(self, data: bytes) -> None:
        window = self.tail + data
        found = window.count(b"data: ")
        if found:
            if self.first < 0:
                self.first = time.perf_counter() - self.started
                self.on_first()
            self.count += found
        self.tail = window[-5:]
        if self.tail == b"0\r\n\r\n" and not self.done.done():
            self.done.set_result(None)  # the last chunk of the body: the answer is complete

    def connection_lost(self, exc: Exception | None) -> None:
        if not self.done.done():
            self.done.set_result(None)


async def one_stream(
    port: int, request: bytes, on_first: Callable[[], None] = lambda: None
) -> tuple[float, int, bool]:
    """(time to first event, events received, complete) for one request."""
    loop = asyncio.get_running_loop()
    transport, protocol = await loop.create_connection(
        lambda: _Stream(request, on_first), "127.0.0.1", port
    )
    try:
        await protocol.done
    finally:
        transport.close()
    # Complete: the chunked body's last chunk came, after at least one event.
    complete = protocol.tail.endswith(b"0\r\n\r\n") and protocol.count > 1
    return protocol.first, protocol.count - 1, complete  # [DONE] is not an event


async def run_clients(port: int, path: str, clients: int, hold: bool) -> dict[str, Any]:
    request = request_bytes(path)
    errors: list[str] = []
    firsts = 0
    all_ready = asyncio.Event()

    def on_first() -> None:
        nonlocal firsts
        firsts += 1
        if firsts + len(errors) >= clients:
            all_ready.set()

    async def client() -> tuple[float, int, bool] | None:
        try:
            return await one_stream(port, request, on_first)
        except OSError as exc:
            errors.append(repr(exc))
            if firsts + len(errors) >= clients:
                all_ready.set()
            return None

    started = time.perf_counter()
    tasks = [asyncio.create_task(client()) for _ in range(clients)]
    if hold:
        await all_ready.wait()
        print("ready", flush=True)
        await asyncio.get_running_loop().run_in_executor(None, sys.stdin.readline)
    results = [r for r in await asyncio.gather(*tasks) if r is not None]
    wall = time.perf_counter() - started
    ttfe = sorted(r[0] for r in results)
    return {
        "clients": clients,
        "errors": len(errors) + sum(1 for r in results if not r[2]),
        "events": sum(r[1] for r in results),
        "wall": wall,
        "p50": ttfe[len(ttfe) // 2] if ttfe else None,
        "p99": ttfe[min(len(ttfe) - 1, int(len(ttfe) * 0.99))] if ttfe else None,
    }


def client_main(port: int, path: str, clients: int, hold: bool) -> None:
    raise_fd_limit()
    print(json.dumps(asyncio.run(run_clients(port, path, clients, hold))), flush=True)


# --- the orchestrator --------------------------------------------------------------------


def start(command: Sequence[str], cwd: Path = ROOT) -> tuple[subprocess.Popen[str], str]:
    process = subprocess.Popen(
        command, cwd=cwd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    assert process.stdout is not None
    url = process.stdout.readline().strip()
    assert url.startswith("http://"), url
    return process, url


def rss_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise RuntimeError("no VmRSS")


def client(url: str, path: str, clients: int) -> dict[str, Any]:
    port = url.rsplit(":", 1)[1]
    command = [sys.executable, __file__, "--client", port, path, str(clients)]
    output = subprocess.run(command, capture_output=True, text=True, check=True, timeout=600)
    result: dict[str, Any] = json.loads(output.stdout)
    return result


def held_memory(clients: int, deltas: int, load_deltas: int) -> tuple[float, int]:
    """(KiB per open stream, errors) with ``clients`` streams held open on a fresh server.

    A fresh process, warmed up by ten answers, so that memory freed by earlier phases
    (which the allocator keeps) does not hide what the open streams take.
    """
    import httpx

    server, url = start([sys.executable, __file__, "--serve", str(deltas), str(load_deltas)])
    try:
        port = url.rsplit(":", 1)[1]
        client(url, "/api/load", 10)
        time.sleep(0.2)
        before = rss_kib(server.pid)
        command = [sys.executable, __file__, "--client", port, "/api/hold", str(clients), "--hold"]
        process = subprocess.Popen(
            command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
        )
        assert process.stdout is not None and process.stdin is not None
        assert process.stdout.readline().strip() == "ready"
        time.sleep(0.2)
        during = rss_kib(server.pid)
        httpx.post(url + "/release")
        process.stdin.write("go\n")
        process.stdin.flush()
        result = json.loads(process.stdout.readline())
        process.wait(60)
    finally:
        server.terminate()
        server.wait(10)
    return (during - before) / clients, int(result["errors"])


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n", 1)[0])
    parser.add_argument("--quick", action="store_true", help="a short smoke run")
    parser.add_argument("--clients", default="10,100,1000")
    parser.add_argument("--load-deltas", type=int, default=100)
    parser.add_argument("--deltas", type=int, default=20_000)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    if args.quick:
        args.clients, args.load_deltas, args.deltas, args.rounds = "10,100", 20, 2_000, 2
    raise_fd_limit()
    node = shutil.which("node")
    assert node is not None, "node is needed for the AI SDK baseline"
    if not (JS / "node_modules" / "ai").exists():
        subprocess.run(["npm", "ci", "--prefix", str(JS)], check=True)

    ours, our_url = start(
        [sys.executable, __file__, "--serve", str(args.deltas), str(args.load_deltas)]
    )
    theirs, their_url = start([node, str(JS / "server_bench_node.mjs"), str(args.deltas)], JS)
    try:
        client(our_url, "/api/load", 10)  # warm-up
        print(f"== load: {args.load_deltas + 6} events per stream, one server process ==")
        print(
            f"{'clients':>8} {'errors':>6} {'events/s':>10} {'p50 TTFE':>10} {'p99 TTFE':>10} {'KiB/open stream':>16}"
        )
        for count in (int(c) for c in args.clients.split(",")):
            load = client(our_url, "/api/load", count)
            per_stream, held_errors = held_memory(count, args.deltas, args.load_deltas)
            print(
                f"{count:>8} {load['errors'] + held_errors:>6} "
                f"{load['events'] / load['wall']:>10,.0f} "
                f"{load['p50'] * 1000:>8.1f}ms {load['p99'] * 1000:>8.1f}ms "
                f"{per_stream:>16.1f}"
            )

        print(f"\n== one stream of {args.deltas + 6} events: served events/s ==")
        mine: list[float] = []
        sdk: list[float] = []
        for _ in range(args.rounds):
            for url, path, sink in ((their_url, "/", sdk), (our_url, "/api/chat", mine)):
                result = client(url, path, 1)
                assert result["errors"] == 0 and result["events"] == args.deltas + 6, result
                sink.append(result["events"] / result["wall"])
        ours_median, sdk_median = statistics.median(mine), statistics.median(sdk)
        print(f"AI SDK Node server (streamText + toUIMessageStreamResponse): {sdk_median:>10,.0f}")
        print(f"ai_chat.server (uvicorn, ScriptedAdapter):                  {ours_median:>10,.0f}")
        print(f"ratio ai_chat / AI SDK: {ours_median / sdk_median:.2f}x (target: >= 1.00x)")
    finally:
        for process in (ours, theirs):
            process.terminate()
            process.wait(10)


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--serve":
        serve(int(sys.argv[2]), int(sys.argv[3]))
    elif len(sys.argv) > 1 and sys.argv[1] == "--client":
        client_main(int(sys.argv[2]), sys.argv[3], int(sys.argv[4]), "--hold" in sys.argv)
    else:
        main()
