"""Helpers the HTTP provider adapters share (no provider SDK imported here)."""

from __future__ import annotations

import email.utils
import math
import time
from collections.abc import Mapping
from typing import Final

__all__ = ["MAX_DETAIL_CHARS", "retry_after", "shorten"]

MAX_DETAIL_CHARS: Final = 500


def retry_after(headers: Mapping[str, str]) -> float | None:
    """Seconds to wait before retrying, from ``retry-after-ms`` or ``retry-after``.

    ``retry-after`` may be seconds or an HTTP date (then the time left, at least 0).
    ``None`` when neither header is present or readable. ``headers`` must look names up
    case-insensitively (``httpx`` headers do).
    """
    value = headers.get("retry-after-ms")
    if value is not None:
        seconds = _number(value)
        if seconds is not None:
            return seconds / 1000
    value = headers.get("retry-after")
    if value is None:
        return None
    seconds = _number(value)
    if seconds is not None:
        return seconds
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError):
        return None
    return max(0.0, when.timestamp() - time.time())


def _number(value: str) -> float | None:
    try:
        number = float(value)
    except ValueError:
        return None
    return number if math.isfinite(number) and number >= 0 else None


def shorten(text: str, limit: int = MAX_DETAIL_CHARS) -> str:
    """``text`` cut to ``limit`` characters (an error page must not become the message)."""
    return text if len(text) <= limit else text[:limit] + f"... (+{len(text) - limit:,} chars)"
