"""Snapshot benchmark: writing and verified loading of a 10,000-message history.

Run with ``uv run python benchmarks/snapshot.py`` (``--quick`` for a short run). Each
figure is the best of several interleaved rounds, printed as a ratio against a baseline
measured in the same run (the machine is shared and noisy; the ratios hold):

* **write**: :func:`~ai_chat.history.to_snapshot` (canonical JSON, SHA-256, the envelope;
  also with an HMAC key) against ``json.dumps(history.to_json())``.
* **verified load**: :func:`~ai_chat.history.from_snapshot` (parse, canonicalize the
  payload, SHA-256 and HMAC, then :meth:`History.from_json`, which validates every
  message and invariant) against two baselines: ``History.from_json(json.loads(text))``
  (loading the same history from plain JSON, validated the same way) and ``json.loads``
  alone (no history, nothing checked). ``unseal`` is the integrity check alone (digest
  and HMAC, the payload parsed but not made a history) against ``json.loads``.

The history alternates user and assistant text messages, with a tool call and its result
every tenth turn.
"""

from __future__ import annotations

import argparse
import gc
import json
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from ai_chat.history import History, from_snapshot, to_snapshot
from ai_chat.history._snapshot import unseal

KEY = b"benchmark-key-0123456789abcdef"
QUESTION = "Show me the bookings for tomorrow, please. café ☕"
ANSWER = "Here are tomorrow's bookings: rooms 1, 4 and 7 are taken."


def build(count: int) -> History:
    history = History.create(title="Bookings", metadata={"team": "front desk"})
    turn = 0
    while len(history) < count:
        turn += 1
        history = history.append_user(f"{QUESTION} ({turn})")
        if turn % 10 == 0 and len(history) + 3 <= count:
            call = {"toolCallId": f"call-{turn}", "toolName": "bookings", "input": {"day": turn}}
            history = history.append_assistant("Looking.", tool_calls=[call])
            history = history.append_tool_result(f"call-{turn}", {"rooms": [1, 4, 7]})
        if len(history) < count:
            history = history.append_assistant(ANSWER)
    return history


def timings(runs: dict[str, Callable[[], object]], rounds: int) -> dict[str, float]:
    """The best time of each run, in seconds, rounds interleaved, the GC off while timing."""
    best = dict.fromkeys(runs, float("inf"))
    for _ in range(rounds):
        for name, run in runs.items():
            gc.collect()
            gc.disable()
            try:
                start = time.perf_counter()
                run()
                best[name] = min(best[name], time.perf_counter() - start)
            finally:
                gc.enable()
    return best


def main() -> None:
    options = argparse.ArgumentParser(description=__doc__)
    options.add_argument("--quick", action="store_true", help="fewer messages and rounds")
    args = options.parse_args()
    count, rounds = (1_000, 3) if args.quick else (10_000, 7)
    history = build(count)
    plain = json.dumps(history.to_json())
    snapshot = to_snapshot(history)
    signed = to_snapshot(history, key=KEY)
    assert from_snapshot(signed, key=KEY) == history == History.from_json(json.loads(plain))
    best = timings(
        {
            "json.dumps": lambda: json.dumps(history.to_json()),
            "to_snapshot": lambda: to_snapshot(history),
            "to_snapshot+hmac": lambda: to_snapshot(history, key=KEY),
            "json.loads": lambda: json.loads(plain),
            "from_json(loads)": lambda: History.from_json(json.loads(plain)),
            "from_snapshot": lambda: from_snapshot(snapshot),
            "from_snapshot+hmac": lambda: from_snapshot(signed, key=KEY),
            "unseal+hmac": lambda: unseal(signed, "history", KEY),
        },
        rounds,
    )
    size = len(snapshot.encode())
    print(f"{count:,} messages, snapshot {size / 1e6:.2f} MB, best of {rounds} rounds")
    print(f"{'':22}{'ms':>9}  ratio")
    rows = [
        ("json.dumps", "json.dumps"),
        ("to_snapshot", "json.dumps"),
        ("to_snapshot+hmac", "json.dumps"),
        ("json.loads", "json.loads"),
        ("from_json(loads)", "json.loads"),
        ("from_snapshot", "from_json(loads)"),
        ("from_snapshot+hmac", "from_json(loads)"),
        ("from_snapshot", "json.loads"),
        ("unseal+hmac", "json.loads"),
    ]
    for name, baseline in rows:
        ratio = best[name] / best[baseline]
        print(f"{name:22}{best[name] * 1e3:9.1f}  {ratio:5.2f}x {baseline}")


if __name__ == "__main__":
    main()
