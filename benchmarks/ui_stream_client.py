"""UI message stream client benchmark: client CPU per event, adapter vs plain httpx.

Run with ``uv run --no-sync python benchmarks/ui_stream_client.py`` (``--events N`` to
change the size). A loopback server in a separate process streams the same UI message
stream body (``start``, a step with one text part of N ``text-delta`` chunks, ``finish``,
``data: [DONE]``, framed as the AI SDK frames it) to every client, so the client
process's CPU time (``time.process_time``) measures only the client:

* plain httpx line reading: ``httpx.AsyncClient.stream`` + ``aiter_lines()``, and
  ``json.loads`` of every ``data:`` line (the least any client must do);
* the adapter alone: :class:`UIMessageStreamAdapter`'s own iterator (bounded SSE
  decoding, JSON parsing, the strictness checks);
* the ai_chat adapter + lifecycle: the same, read through
  :func:`ai_chat.create_chat_stream` (every event validated and frozen, handed over from
  the adapter's task): what an application pays.

"bytes only" reads the same body without parsing it: the fixed cost of a request (the
client, its TLS context, the event loop) spread over the events, which every other line
includes too.

Each path runs several times, interleaved, on asyncio and trio; the median is reported
with the ratio the issue sets as the target: at most 2x plain httpx.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

import anyio
import httpx

from ai_chat import AbortSignal, create_chat_stream
from ai_chat.adapters.ui_stream import UIMessageStreamAdapter

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from benchmarks._cases import count_adapter_events, count_httpx_lines

ROOT = Path(__file__).resolve().parent.parent

SERVER = r"""
import json, sys
import anyio
sys.path.insert(0, sys.argv[1])
from tests.adapters._support.fake_server import Response, serve

EVENTS = int(sys.argv[2])

def chunk(kind, **fields):
    return b"data: " + json.dumps({"type": kind, **fields}, separators=(",", ":")).encode() + b"\n\n"

BODY = b"".join(
    [chunk("start", messageId="msg-bench"), chunk("start-step"), chunk("text-start", id="t1")]
    + [chunk("text-delta", id="t1", delta="word ") for _ in range(EVENTS)]
    + [chunk("text-end", id="t1"), chunk("finish-step"), chunk("finish", finishReason="stop"),
       b"data: [DONE]\n\n"]
)
# Send in pieces of about 16 KiB, as a real server's writes would arrive.
PIECES = [BODY[i:i + 16384] for i in range(0, len(BODY), 16384)]
HEADERS = {"content-type": "text/event-stream", "x-vercel-ai-ui-message-stream": "v1"}

def handler(request):
    return Response(200, HEADERS, PIECES)

async def main():
    async with serve(handler) as server:
        print(server.url("/api/chat"), flush=True)
        await anyio.sleep_forever()

anyio.run(main)
"""

CHAT_REQUEST = {
    "messages": [{"id": "u1", "role": "user", "parts": [{"type": "text", "text": "Hello"}]}]
}
REQUEST_BODY = {
    "id": "bench",
    "messages": [{"id": "u1", "role": "user", "parts": [{"type": "text", "text": "Hello"}]}],
    "trigger": "submit-message",
}


async def via_httpx_lines(url: str) -> int:
    return await count_httpx_lines(url, REQUEST_BODY)


async def via_bytes(url: str) -> int:
    """The floor: the same request and body, read as bytes and not parsed at all."""
    async with (
        httpx.AsyncClient() as client,
        client.stream("POST", url, json=REQUEST_BODY) as response,
    ):
        body = bytearray()
        async for piece in response.aiter_bytes():
            body += piece
        return body.count(b"\n\ndata: ") + 1 - body.count(b"data: [DONE]")


async def via_adapter_alone(url: str) -> int:
    """The adapter's own iterator, without the chat stream's validation and hand-over."""
    async with UIMessageStreamAdapter(url, chat_id="bench") as adapter:
        request = create_chat_stream(adapter, CHAT_REQUEST).request
        count = 0
        async for _ in adapter.stream(request, AbortSignal()):
            count += 1
        return count


async def via_adapter(url: str) -> int:
    return await count_adapter_events(UIMessageStreamAdapter(url, chat_id="bench"))


def cpu(path: Callable[[str], Awaitable[int]], url: str, backend: str, events: int) -> float:
    start = time.process_time()
    count = anyio.run(path, url, backend=backend)
    elapsed = time.process_time() - start
    assert count == events + 6, f"{path.__name__} read {count} events"
    return elapsed


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--events", type=int, default=20_000)
    parser.add_argument("--rounds", type=int, default=7)
    args = parser.parse_args()
    server = subprocess.Popen(
        [sys.executable, "-c", SERVER, str(ROOT), str(args.events)],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert server.stdout is not None
        url = server.stdout.readline().strip()
        paths = {
            "bytes only (no parsing)": via_bytes,
            "plain httpx line reading": via_httpx_lines,
            "adapter alone": via_adapter_alone,
            "ai_chat adapter + lifecycle": via_adapter,
        }
        for backend in ("asyncio", "trio"):
            timings: dict[str, list[float]] = {name: [] for name in paths}
            for _ in range(args.rounds):
                for name, path in paths.items():
                    timings[name].append(cpu(path, url, backend, args.events))
            per_event = {
                name: statistics.median(t) / (args.events + 6) * 1e6 for name, t in timings.items()
            }
            print(
                f"\n{backend}: client CPU per event over {args.events + 6:,} events "
                f"(median of {args.rounds})"
            )
            for name, micros in per_event.items():
                print(f"  {name:<30} {micros:8.2f} µs")
            lines = per_event["plain httpx line reading"]
            alone = per_event["adapter alone"] / lines
            ratio = per_event["ai_chat adapter + lifecycle"] / lines
            print(f"  ratio adapter alone / httpx    {alone:8.2f}")
            print(f"  ratio adapter + lifecycle / httpx {ratio:5.2f}  (target <= 2)")
    finally:
        server.terminate()
        server.wait(timeout=10)
    return 0


if __name__ == "__main__":
    sys.exit(main())
