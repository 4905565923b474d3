"""ai_chat benchmarks: each prints a ratio against a baseline measured in the same run.

Run with ``uv run python benchmarks/run.py`` (add ``--quick`` for a short smoke run).
Absolute times drift on shared machines; the ratios are what to compare. Timings are
interleaved (baseline, subject, baseline, ...); normalize_messages reports the best round
of each (the least disturbed), the event and cancel benchmarks the median.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import time
from collections.abc import AsyncIterator, Callable, Mapping
from typing import Any

import anyio

from ai_chat import AbortSignal, create_chat_stream, normalize_messages
from ai_chat.adapters import ScriptedAdapter
from ai_chat.limits import json_size
from ai_chat.types import ChatRequest

WORDS_ASCII = [
    "the",
    "model",
    "said",
    '"yes"',
    "to",
    "a",
    "quick",
    "brown",
    "fox",
    "that",
    "jumps",
    "over",
    "the",
    "lazy",
    "dog",
    "while",
    "reading",
    "C:\\path\\to\\file",
    "and",
    "a",
    "new",
    "line\nand",
    "a",
    "tab\there",
]
WORDS_MIXED = [*WORDS_ASCII, "café", "naïve", "日本語の文章", "emoji 🙂", "Ελληνικά", "привет"]


def history_at_the_limits(words: list[str], seed: int = 7) -> list[dict[str, Any]]:
    """A realistic history close to the default limits: 10,000 values, ~1,000,000 chars.

    Alternating user and assistant turns; every fifth assistant turn also calls a tool and
    is followed by a tool result, as a real agent conversation would be.
    """
    rng = random.Random(seed)
    history: list[dict[str, Any]] = []

    def text(n: int) -> str:
        return " ".join(rng.choice(words) for _ in range(n))

    turn = 0
    while True:
        turn += 1
        history.append(
            {"id": f"user-{turn}", "role": "user", "parts": [{"type": "text", "text": text(100)}]}
        )
        parts: list[dict[str, Any]] = [{"type": "text", "text": text(160)}]
        if turn % 5 == 0:
            call = f"call-{turn}"
            parts.append(
                {
                    "type": "tool-call",
                    "toolCallId": call,
                    "toolName": "search",
                    "input": {"query": text(5), "limit": 10},
                }
            )
            history.append(
                {
                    "id": f"assistant-{turn}",
                    "role": "assistant",
                    "parts": parts,
                    "metadata": {"model": "demo", "tokens": 120},
                }
            )
            history.append(
                {
                    "id": f"tool-{turn}",
                    "role": "tool",
                    "parts": [
                        {
                            "type": "tool-result",
                            "toolCallId": call,
                            "toolName": "search",
                            "output": {"hits": [text(8), text(8)], "took": 0.25},
                        }
                    ],
                }
            )
        else:
            history.append({"id": f"assistant-{turn}", "role": "assistant", "parts": parts})
        if count_values(history) > 9_700:
            return history


def count_values(value: Any) -> int:
    if isinstance(value, dict):
        return 1 + sum(count_values(v) for v in value.values())  # pyright: ignore[reportUnknownVariableType]
    if isinstance(value, list):
        return 1 + sum(count_values(v) for v in value)  # pyright: ignore[reportUnknownVariableType]
    return 1


def interleaved(
    baseline: Callable[[], object], subject: Callable[[], object], rounds: int
) -> tuple[float, float]:
    """Best seconds of each, measured alternately so machine noise hits both alike."""
    base: list[float] = []
    subj: list[float] = []
    for _ in range(rounds):
        start = time.perf_counter()
        baseline()
        base.append(time.perf_counter() - start)
        start = time.perf_counter()
        subject()
        subj.append(time.perf_counter() - start)
    return min(base), min(subj)


def bench_normalize(rounds: int) -> list[tuple[str, float, float]]:
    rows: list[tuple[str, float, float]] = []
    for name, words in (("mixed-script text", WORDS_MIXED), ("ASCII text", WORDS_ASCII)):
        history = history_at_the_limits(words)
        values, size = count_values(history), json_size(history)
        base, subj = interleaved(
            lambda h=history: json.loads(json.dumps(h)),
            lambda h=history: normalize_messages(h),
            rounds,
        )
        rows.append((f"normalize_messages, {name} ({values:,} values, {size:,} chars)", base, subj))
    return rows


DELTAS = 100_000


def delta_script() -> list[Mapping[str, Any]]:
    words = ["Hello ", "world, ", "this ", "is ", "a ", "streamed ", "answer. "]
    return [
        {"type": "start"},
        {"type": "start-step"},
        {"type": "text-start", "id": "text-1"},
        *(
            {"type": "text-delta", "id": "text-1", "delta": words[i % len(words)]}
            for i in range(DELTAS)
        ),
        {"type": "text-end", "id": "text-1"},
        {"type": "finish-step"},
        {"type": "finish", "finishReason": "stop"},
    ]


REQUEST = {"messages": [{"id": "u1", "role": "user", "parts": [{"type": "text", "text": "Hello"}]}]}


def bench_events(rounds: int, backend: str) -> tuple[str, float, float]:
    """Lifecycle cost per event = (ChatStream time - raw adapter iteration time)."""
    script = delta_script()
    adapter = ScriptedAdapter(script)

    async def raw() -> float:
        stream = create_chat_stream(adapter, REQUEST)  # only for its request snapshot
        start = time.perf_counter()
        async for _ in adapter.stream(stream.request, AbortSignal()):
            pass
        return time.perf_counter() - start

    async def full() -> float:
        start = time.perf_counter()
        async with create_chat_stream(adapter, REQUEST, max_response_chars=10_000_000) as stream:
            async for _ in stream:
                pass
        return time.perf_counter() - start

    def dumps() -> float:
        start = time.perf_counter()
        for event in script:
            json.dumps(event)
        return time.perf_counter() - start

    base: list[float] = []
    subj: list[float] = []
    for _ in range(rounds):
        base.append(dumps())
        subj.append(anyio.run(full, backend=backend) - anyio.run(raw, backend=backend))
    return (
        f"lifecycle per event vs json.dumps(event), {len(script):,} events, {backend}",
        statistics.median(base),
        statistics.median(subj),
    )


class Uncooperative:
    """Blocks in a shielded scope until released."""

    def __init__(self) -> None:
        self.release: anyio.Event | None = None

    async def stream(
        self, request: ChatRequest, signal: AbortSignal
    ) -> AsyncIterator[Mapping[str, Any]]:
        yield {"type": "start"}
        self.release = anyio.Event()
        with anyio.CancelScope(shield=True):
            await self.release.wait()


class Cooperative:
    async def stream(
        self, request: ChatRequest, signal: AbortSignal
    ) -> AsyncIterator[Mapping[str, Any]]:
        yield {"type": "start"}
        await anyio.sleep_forever()


def bench_cancel(rounds: int, backend: str) -> list[tuple[str, float, float]]:
    """Time from cancel() to the consumer running again, vs cancelling a bare sleep."""

    async def latency(wait: Callable[[], Any]) -> float:
        stamps: list[float] = []

        async def canceller(scope: anyio.CancelScope) -> None:
            await anyio.wait_all_tasks_blocked()
            stamps.append(time.perf_counter())
            scope.cancel()

        async with anyio.create_task_group() as tg:
            with anyio.CancelScope() as scope:
                tg.start_soon(canceller, scope)
                await wait()
        return time.perf_counter() - stamps[0]

    async def bare() -> float:
        return await latency(anyio.sleep_forever)

    def through_stream(adapter_type: type[Any]) -> Callable[[], Any]:
        async def run() -> float:
            adapter = adapter_type()
            stream = create_chat_stream(adapter, REQUEST, close_timeout=0.01)
            await stream.__anext__()
            seconds = await latency(stream.__anext__)
            if isinstance(adapter, Uncooperative) and adapter.release is not None:
                adapter.release.set()
            await stream.aclose()
            with anyio.fail_after(5):
                while stream.adapter_running:
                    await anyio.sleep(0.001)
            return seconds

        return run

    rows: list[tuple[str, float, float]] = []
    for name, adapter_type in (
        ("cooperative", Cooperative),
        ("uncooperative (shielded)", Uncooperative),
    ):
        base: list[float] = []
        subj: list[float] = []
        for _ in range(rounds):
            base.append(anyio.run(bare, backend=backend))
            subj.append(anyio.run(through_stream(adapter_type), backend=backend))
        rows.append(
            (
                f"cancel to consumer control, {name} adapter, {backend}",
                statistics.median(base),
                statistics.median(subj),
            )
        )
    return rows


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true", help="fewer rounds (a smoke run)")
    args = parser.parse_args()
    rounds = 5 if args.quick else 41
    rows = bench_normalize(rounds)
    for backend in ("asyncio", "trio"):
        rows.append(bench_events(3 if args.quick else 9, backend))
    for backend in ("asyncio", "trio"):
        rows.extend(bench_cancel(rounds, backend))
    print(f"{'benchmark':<96} {'baseline':>12} {'ai_chat':>12} {'ratio':>7}")
    for name, base, subj in rows:
        if name.startswith("lifecycle"):
            per_base, per_subj = base / (DELTAS + 6) * 1e6, subj / (DELTAS + 6) * 1e6
            print(f"{name:<96} {per_base:>9.2f} µs {per_subj:>9.2f} µs {subj / base:>7.2f}")
        else:
            unit, scale = ("ms", 1e3)
            print(
                f"{name:<96} {base * scale:>9.3f} {unit} {subj * scale:>9.3f} {unit} {subj / base:>7.2f}"
            )
    print(
        "\nbaselines: json.loads(json.dumps(history)); json.dumps(event) per event; "
        "cancelling a bare anyio.sleep_forever()."
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
