"""Fresh ids without a system call per id: a random prefix per source and a counter."""

from __future__ import annotations

import itertools
import secrets
from collections.abc import Callable

__all__ = ["random_ids"]


def random_ids() -> Callable[[], str]:
    """A new id source: ``<20 random hex digits>-<counter in hex>``.

    80 random bits name the source and a counter the id, so ids are unique across
    sources without a system call per id (``uuid4`` costs more than the rest of a history
    append). Thread-safe: ``itertools.count`` advances atomically under the GIL.
    """
    prefix = secrets.token_hex(10)
    counter = itertools.count(1)
    return lambda: f"{prefix}-{next(counter):x}"
