"""Timing for the benchmarks that compare several subjects in one run."""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping

__all__ = ["interleaved_best"]


def interleaved_best(subjects: Mapping[str, Callable[[], object]], rounds: int) -> dict[str, float]:
    """The best time of each subject over ``rounds`` rounds, in seconds.

    Each round runs every subject once, in turn, so that a slow spell of the machine
    (other jobs share it) falls on all of them alike; the best round is the least
    disturbed one.
    """
    times = dict.fromkeys(subjects, float("inf"))
    for _ in range(rounds):
        for name, run in subjects.items():
            start = time.perf_counter()
            run()
            times[name] = min(times[name], time.perf_counter() - start)
    return times
