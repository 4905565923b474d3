"""History benchmark: appends, check and the answer fold, each against a baseline of the same run.

Run with ``uv run python benchmarks/history.py`` (``--quick`` for a short run). The machine
is shared and noisy, so each figure is the best of several rounds and is printed next to
a baseline measured in the same run; the ratios are what to compare.

* **Appends**: building one history of 10,000 messages one append at a time (user and
  assistant text alternating, ``append_user`` / ``append_assistant``), and of 1,000: the
  ratio of the two shows the growth (10 is linear; the seed's copy-and-revalidate design
  is quadratic: 100). Baseline: the same messages through
  :func:`ai_chat.normalize_messages` one at a time into a list (the JSON boundary alone,
  with nothing kept).
* **check**: 20,000 messages with 5,000 tool pairs (user, assistant with a call, tool
  result, assistant text, repeated), with the general rules, each provider's, and all of
  them. Baseline: a plain Python scan that pairs calls with results over the same list
  (what one would write by hand: a dict of calls, a list of orphans). Each round checks
  a new version of the history (one more message), so the materialized messages are not
  reused from the round before. Also ``check`` of the same messages as a plain list
  (which scans every message in Python instead of reading the history's indexes).
* **Fold**: 100,000 text deltas into one answer (:class:`~ai_chat.history.Projection`,
  validating each event as a ``ChatStream`` does, and :class:`~ai_chat.history.AnswerFold`
  with ``checked=True``): the time of the last 1,000 deltas over the first 1,000 (1.0 is
  constant work per delta).
"""

from __future__ import annotations

import argparse
import gc
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from ai_chat import normalize_messages
from ai_chat.history import AnswerFold, History, Projection, check, message_text

QUESTION = "Show me the bookings for tomorrow, please."
ANSWER = "Here are tomorrow's bookings: rooms 1, 4 and 7 are taken."


def best(run: Callable[[], object], rounds: int) -> float:
    """The fastest of ``rounds`` runs, in seconds (the GC off while timing)."""
    times: list[float] = []
    for _ in range(rounds):
        gc.collect()
        gc.disable()
        try:
            start = time.perf_counter()
            run()
            times.append(time.perf_counter() - start)
        finally:
            gc.enable()
    return min(times)


def build(count: int) -> History:
    history = History.create()
    for index in range(count):
        history = (
            history.append_user(QUESTION) if index % 2 == 0 else history.append_assistant(ANSWER)
        )
    return history


def normalize_each(count: int) -> list[Any]:
    kept: list[Any] = []
    for index in range(count):
        text = QUESTION if index % 2 == 0 else ANSWER
        role = "user" if index % 2 == 0 else "assistant"
        message = {"id": f"m{index}", "role": role, "parts": [{"type": "text", "text": text}]}
        kept.append(normalize_messages([message])[0])
    return kept


def appends(rounds: int) -> None:
    small = best(lambda: build(1_000), rounds)
    large = best(lambda: build(10_000), rounds)
    baseline = best(lambda: normalize_each(10_000), rounds)
    print("appends, one at a time")
    print(f"  10,000 appends: {large * 1000:8.1f} ms   ({large / 10_000 * 1e6:.1f} µs each)")
    print(f"   1,000 appends: {small * 1000:8.1f} ms")
    print(f"  growth 10,000 / 1,000: {large / small:5.1f}x  (10 is linear)")
    print(
        f"  vs normalize_messages of each message alone ({baseline * 1000:.1f} ms): {large / baseline:.2f}x"
    )


def tool_history(pairs: int) -> History:
    history = History.create()
    for index in range(pairs):
        call = {"toolCallId": f"call-{index}", "toolName": "lookup", "input": {"q": index}}
        history = history.append_user(f"question {index}")
        history = history.append_assistant("", tool_calls=[call])
        history = history.append_tool_result(f"call-{index}", {"answer": index})
        history = history.append_assistant(f"answer {index}")
    return history


def pairing_scan(messages: tuple[Any, ...]) -> tuple[list[int], dict[str, int]]:
    """The baseline: pair calls with results by id, note orphans and unanswered calls."""
    calls: dict[str, int] = {}
    orphans: list[int] = []
    for index, message in enumerate(messages):
        for part in message["parts"]:
            kind = part["type"]
            if kind == "tool-call":
                calls[part["toolCallId"]] = index
            elif kind == "tool-result" and calls.pop(part["toolCallId"], None) is None:
                orphans.append(index)
    return orphans, calls


def checks(rounds: int) -> None:
    history = tool_history(5_000)
    assert len(history) == 20_000 and check(history, provider="all").ok
    versions = iter([history.append_user(f"v{n}") for n in range(rounds * 8)])
    messages = history.messages
    baseline = best(lambda: pairing_scan(messages), rounds)
    print("check, 20,000 messages with 5,000 tool pairs")
    print(f"  plain pairing scan (baseline): {baseline * 1000:7.2f} ms")
    for provider in (None, "openai", "anthropic", "gemini", "all"):
        took = best(lambda p=provider: check(next(versions), provider=p), rounds)
        name = "general rules" if provider is None else provider
        print(f"  check, {name:<14} {took * 1000:7.2f} ms   {took / baseline:5.2f}x the scan")
    as_list = list(messages)
    took = best(lambda: check(as_list, provider="all"), rounds)
    print(f"  check of a plain list, all: {took * 1000:7.2f} ms   {took / baseline:5.2f}x the scan")


def deltas(count: int) -> list[dict[str, object]]:
    return [{"type": "text-delta", "id": "t", "delta": "word "} for _ in range(count)]


def fold_rate(feed: Callable[[dict[str, object]], None], events: list[dict[str, object]]) -> float:
    """The time of the last 1,000 events over the first 1,000 (best of 5 runs each)."""
    stamps: list[float] = []
    clock = time.perf_counter
    for event in events:
        stamps.append(clock())
        feed(event)
    stamps.append(clock())
    first = stamps[1_000] - stamps[0]
    last = stamps[-1] - stamps[-1_001]
    return last / first


def folds(rounds: int) -> None:
    count = 100_000
    events = deltas(count)
    print(f"fold, {count:,} text deltas into one answer")
    for name in ("Projection (each event validated)", "AnswerFold (checked events)"):
        ratios: list[float] = []
        for _ in range(rounds):
            gc.collect()
            if name.startswith("Projection"):
                projection = Projection(History.create(), message_id="answer")
                projection.apply([{"type": "text-start", "id": "t"}])
                feed: Callable[[dict[str, object]], None] = lambda e, p=projection: p.apply((e,))  # noqa: E731
            else:
                fold = AnswerFold(checked=True)
                fold.feed({"type": "text-start", "id": "t"})
                feed = fold.feed
            ratios.append(fold_rate(feed, events))
        ratios.sort()
        print(
            f"  {name}: last 1,000 / first 1,000 = {ratios[len(ratios) // 2]:.2f} (median of {rounds})"
        )
    projection = Projection(History.create(), message_id="answer")
    projection.apply([{"type": "text-start", "id": "t"}, *events, {"type": "text-end", "id": "t"}])
    text = message_text(projection.snapshot().messages[-1])
    assert len(text) == 5 * count, len(text)


def main() -> None:
    parser = argparse.ArgumentParser(description="The history benchmark (see the module).")
    parser.add_argument("--quick", action="store_true", help="fewer rounds")
    args = parser.parse_args()
    rounds = 3 if args.quick else 7
    appends(rounds)
    checks(rounds)
    folds(3 if args.quick else 5)


if __name__ == "__main__":
    main()
