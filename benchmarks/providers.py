"""Provider stream benchmark: client CPU per chunk, adapter vs the SDK vs plain httpx.

Run with ``uv run python benchmarks/providers.py`` (``--chunks N``, ``--rounds R``,
``--only openai-chat,anthropic``; ``uv sync --group bench`` first to include LiteLLM
and pydantic-ai). For each provider a loopback server in a separate process streams the
same body (N text deltas, the provider's closing events and usage) to every client, so
the client process's CPU time (``time.process_time``) measures only the client. Each
path is run several times, interleaved, and the median is reported with the ratios the
provider issue sets as targets: adapter + lifecycle at most 0.5x the SDK's own
iteration, and at most 3x reading the same SSE lines with plain httpx.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from pathlib import Path

import anyio

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from benchmarks._cases import CASES, Case
from benchmarks._cases import Path as ClientPath

ROOT = Path(__file__).resolve().parent.parent

SERVER = r"""
import sys
import anyio
sys.path.insert(0, sys.argv[1])
from benchmarks._cases import CASES
from tests.adapters._support.fake_server import Response, serve

BODY = CASES[sys.argv[2]].body(int(sys.argv[3]))
# Send in pieces of about 16 KiB, as a real server's writes would arrive.
PIECES = [BODY[i:i + 16384] for i in range(0, len(BODY), 16384)]

def handler(request):
    return Response(200, {"content-type": "text/event-stream"}, PIECES)

async def main():
    async with serve(handler) as server:
        print(server.url(""), flush=True)
        await anyio.sleep_forever()

anyio.run(main)
"""

ADAPTER = "ai_chat adapter + lifecycle"
SDK = "SDK's own iteration"
HTTPX = "plain httpx line reading"


def cpu(path: ClientPath, base_url: str, backend: str) -> float:
    start = time.process_time()
    anyio.run(path, base_url, backend=backend)
    return time.process_time() - start


def run_case(key: str, case: Case, chunks: int, rounds: int) -> None:
    server = subprocess.Popen(
        [sys.executable, "-c", SERVER, str(ROOT), key, str(chunks)],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert server.stdout is not None
        base_url = server.stdout.readline().strip() + case.base_path
        paths: dict[str, ClientPath] = {
            SDK: case.sdk,
            HTTPX: case.httpx_lines,
            ADAPTER: case.adapter,
        }
        for name, load in case.others.items():
            other = load()
            if other is None:
                print(f"({name} is not installed: uv sync --group bench)")
            else:
                paths[name] = other
        for backend in ("asyncio", "trio"):
            timings: dict[str, list[float]] = {name: [] for name in paths}
            for _ in range(rounds):
                for name, path in paths.items():
                    if backend == "trio" and name not in (ADAPTER, HTTPX, SDK):
                        continue  # the other libraries run on asyncio only
                    timings[name].append(cpu(path, base_url, backend))
            per_chunk = {
                name: statistics.median(t) / chunks * 1e6 for name, t in timings.items() if t
            }
            print(
                f"\n{case.name}, {backend}: client CPU per chunk over {chunks:,} chunks (median of {rounds})"
            )
            for name, micros in per_chunk.items():
                print(f"  {name:<32} {micros:8.1f} µs   {micros / per_chunk[SDK]:5.2f}x SDK")
            ours = per_chunk[ADAPTER]
            print(
                f"  ratio adapter / SDK iteration    {ours / per_chunk[SDK]:8.2f}  (target <= 0.5)"
            )
            print(
                f"  ratio adapter / plain httpx      {ours / per_chunk[HTTPX]:8.2f}  (target <= 3)"
            )
    finally:
        server.terminate()
        server.wait(timeout=10)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--chunks", type=int, default=10_000)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument(
        "--only", default=",".join(CASES), help="comma-separated: " + ", ".join(CASES)
    )
    args = parser.parse_args()
    for key in args.only.split(","):
        run_case(key, CASES[key], args.chunks, args.rounds)
    return 0


if __name__ == "__main__":
    sys.exit(main())
