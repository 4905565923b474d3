"""Provider stream benchmark: client CPU per chunk, adapter vs the SDK vs plain httpx.

Run with ``uv run python benchmarks/providers.py`` (``--chunks N`` to change the size).
A loopback server in a separate process streams the same OpenAI Chat Completions body
(N text-delta chunks, a finish chunk, a usage chunk, ``[DONE]``) to every client, so the
client process's CPU time (``time.process_time``) measures only the client. Each path is
run several times, interleaved, and the median is reported, with the ratios the provider
issue sets as targets: adapter + lifecycle at most 0.5x the SDK's own iteration, and at
most 3x reading the same SSE lines with plain httpx.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

import anyio
import httpx
import openai

from ai_chat import create_chat_stream
from ai_chat.adapters.openai import OpenAIChatAdapter

ROOT = Path(__file__).resolve().parent.parent

SERVER = r"""
import json, sys
import anyio
sys.path.insert(0, sys.argv[1])
from tests.providers.fake_server import Response, serve, sse

CHUNKS = int(sys.argv[2])

def chunk(delta, finish=None, usage=None, choices=True):
    body = {"id": "chatcmpl-bench", "object": "chat.completion.chunk", "created": 0,
            "model": "bench", "choices": [], "usage": usage}
    if choices:
        body["choices"] = [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}]
    return sse(body)

BODY = b"".join(
    [chunk({"role": "assistant", "content": ""})]
    + [chunk({"content": "word "}) for _ in range(CHUNKS)]
    + [chunk({}, finish="stop"),
       chunk(None, usage={"prompt_tokens": 5, "completion_tokens": CHUNKS, "total_tokens": CHUNKS + 5},
             choices=False),
       b"data: [DONE]\n\n"]
)
# Send in pieces of about 16 KiB, as a real server's writes would arrive.
PIECES = [BODY[i:i + 16384] for i in range(0, len(BODY), 16384)]

def handler(request):
    return Response(200, {"content-type": "text/event-stream"}, PIECES)

async def main():
    async with serve(handler) as server:
        print(server.url("/v1"), flush=True)
        await anyio.sleep_forever()

anyio.run(main)
"""

REQUEST_BODY = {
    "model": "bench",
    "messages": [{"role": "user", "content": "Hello"}],
    "stream": True,
    "stream_options": {"include_usage": True},
}
CHAT_REQUEST = {
    "messages": [{"id": "u1", "role": "user", "parts": [{"type": "text", "text": "Hello"}]}]
}


async def via_sdk(base_url: str) -> int:
    async with openai.AsyncOpenAI(base_url=base_url, api_key="bench", max_retries=0) as client:
        stream = await client.chat.completions.create(
            model="bench",
            messages=[{"role": "user", "content": "Hello"}],
            stream=True,
            stream_options={"include_usage": True},
        )
        count = 0
        async with stream:
            async for _ in stream:
                count += 1
        return count


async def via_httpx_lines(base_url: str) -> int:
    async with (
        httpx.AsyncClient() as client,
        client.stream(
            "POST",
            f"{base_url}/chat/completions",
            json=REQUEST_BODY,
            headers={"authorization": "Bearer bench"},
        ) as response,
    ):
        count = 0
        async for line in response.aiter_lines():
            if line.startswith("data: ") and line != "data: [DONE]":
                json.loads(line[6:])
                count += 1
        return count


async def via_adapter(base_url: str) -> int:
    async with OpenAIChatAdapter(
        model="bench", base_url=base_url, api_key="bench", max_retries=0
    ) as adapter:
        count = 0
        async with create_chat_stream(
            adapter, CHAT_REQUEST, max_response_chars=10_000_000
        ) as stream:
            async for _ in stream:
                count += 1
        return count


def cpu(path: Callable[[str], Awaitable[int]], base_url: str, backend: str) -> float:
    start = time.process_time()
    anyio.run(path, base_url, backend=backend)
    return time.process_time() - start


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--chunks", type=int, default=10_000)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    server = subprocess.Popen(
        [sys.executable, "-c", SERVER, str(ROOT), str(args.chunks)],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert server.stdout is not None
        base_url = server.stdout.readline().strip()
        paths = {
            "openai SDK iteration": via_sdk,
            "plain httpx line reading": via_httpx_lines,
            "ai_chat adapter + lifecycle": via_adapter,
        }
        for backend in ("asyncio", "trio"):
            timings: dict[str, list[float]] = {name: [] for name in paths}
            for _ in range(args.rounds):
                for name, path in paths.items():
                    timings[name].append(cpu(path, base_url, backend))
            per_chunk = {
                name: statistics.median(t) / args.chunks * 1e6 for name, t in timings.items() if t
            }
            print(
                f"\n{backend}: client CPU per chunk over {args.chunks:,} chunks (median of {args.rounds})"
            )
            for name, micros in per_chunk.items():
                print(f"  {name:<32} {micros:8.1f} µs")
            ours = per_chunk["ai_chat adapter + lifecycle"]
            if "openai SDK iteration" in per_chunk:
                print(
                    f"  ratio adapter / SDK iteration    {ours / per_chunk['openai SDK iteration']:8.2f}  (target <= 0.5)"
                )
            print(
                f"  ratio adapter / plain httpx      {ours / per_chunk['plain httpx line reading']:8.2f}  (target <= 3)"
            )
    finally:
        server.terminate()
        server.wait(timeout=10)
    return 0


if __name__ == "__main__":
    sys.exit(main())
