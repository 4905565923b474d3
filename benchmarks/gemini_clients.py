"""What sending through the adapter's own transport costs, for a default genai.Client.

Run with ``uv run python benchmarks/gemini_clients.py`` (``--chunks N``, ``--rounds R``).
A client built as the google-genai docs build one sends through the SDK's own transport
(aiohttp, or a per-event-loop httpx2 pool), which the adapter replaces by an httpx2
client of its own built from the same settings. Against the baseline of a client given an
httpx2 client by its caller (which the adapter reads as it is), measured in the same run:

* constructing the adapter (a copy of the SDK's API client and a new httpx2 client, which
  reuses the SDK's TLS context): CPU per construction;
* streaming one answer of N chunks through the adapter and its lifecycle: client CPU per
  chunk, on asyncio and trio, the loopback server in another process.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from pathlib import Path

import anyio
import httpx2
from google import genai
from google.genai import types as genai_types

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from ai_chat.adapters.gemini import GeminiChatAdapter
from benchmarks._cases import count_adapter_events
from benchmarks._gemini_case import MODEL
from benchmarks.providers import SERVER, cpu

ROOT = Path(__file__).resolve().parent.parent
CONSTRUCTIONS = 200


def default_client(base_url: str) -> genai.Client:
    return genai.Client(api_key="bench", http_options=genai_types.HttpOptions(base_url=base_url))


def construction_cpu(client: genai.Client) -> float:
    """CPU seconds per adapter construction on ``client`` (closed again each time)."""
    start = time.process_time()
    for _ in range(CONSTRUCTIONS):
        adapter = GeminiChatAdapter(client, model=MODEL)
        anyio.run(adapter.aclose)
    return (time.process_time() - start) / CONSTRUCTIONS


async def via_default_client(base_url: str) -> int:
    client = default_client(base_url)
    try:
        return await count_adapter_events(GeminiChatAdapter(client, model=MODEL))
    finally:
        client.close()


async def via_callers_httpx2(base_url: str) -> int:
    async with httpx2.AsyncClient() as http:
        options = genai_types.HttpOptions(base_url=base_url, httpx_async_client=http)
        client = genai.Client(api_key="bench", http_options=options)
        try:
            return await count_adapter_events(GeminiChatAdapter(client, model=MODEL))
        finally:
            client.close()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--chunks", type=int, default=10_000)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()

    own: list[float] = []
    callers: list[float] = []
    with httpx2.Client() as sync_http:
        for _ in range(args.rounds):
            client = default_client("http://127.0.0.1:9")
            own.append(construction_cpu(client))
            client.close()
            http = httpx2.AsyncClient()
            options = genai_types.HttpOptions(
                base_url="http://127.0.0.1:9", httpx_async_client=http, httpx_client=sync_http
            )
            callers.append(construction_cpu(genai.Client(api_key="bench", http_options=options)))
            anyio.run(http.aclose)
    mine, theirs = statistics.median(own), statistics.median(callers)
    print(f"adapter construction, CPU (median of {args.rounds} x {CONSTRUCTIONS})")
    print(f"  on a caller's httpx2 client (baseline)  {theirs * 1e6:8.1f} µs")
    print(f"  on a default client (own transport)      {mine * 1e6:8.1f} µs")
    print(f"  ratio own transport / baseline          {mine / theirs:8.2f}")

    server = subprocess.Popen(
        [sys.executable, "-c", SERVER, str(ROOT), "gemini", str(args.chunks)],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert server.stdout is not None
        base_url = server.stdout.readline().strip()
        for backend in ("asyncio", "trio"):
            timings: dict[str, list[float]] = {"baseline": [], "own": []}
            for _ in range(args.rounds):
                timings["baseline"].append(cpu(via_callers_httpx2, base_url, backend))
                timings["own"].append(cpu(via_default_client, base_url, backend))
            per_chunk = {k: statistics.median(v) / args.chunks * 1e6 for k, v in timings.items()}
            print(f"\nstreaming, {backend}: client CPU per chunk over {args.chunks:,} chunks")
            print(f"  caller's httpx2 client (baseline)       {per_chunk['baseline']:8.2f} µs")
            print(f"  default client (own transport)           {per_chunk['own']:8.2f} µs")
            print(
                f"  ratio own transport / baseline          {per_chunk['own'] / per_chunk['baseline']:8.2f}"
            )
    finally:
        server.terminate()
        server.wait(timeout=10)
    return 0


if __name__ == "__main__":
    sys.exit(main())
