"""Helpers the HTTP provider adapters share (no provider SDK imported here)."""

from __future__ import annotations

import email.utils
import math
import time
from collections.abc import Mapping
from typing import Final, cast

from ..._errors import ProviderError

__all__ = ["MAX_DETAIL_CHARS", "merge_parameters", "retry_after", "shorten", "status_error"]

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


def merge_parameters(
    defaults: Mapping[str, object], parameters: Mapping[str, object], provider: str
) -> Mapping[str, object]:
    """A request's parameters over an adapter's defaults.

    A request value replaces the default, except under ``providerOptions.<provider>``,
    which is merged field by field (the request's fields win).
    """
    if not defaults:
        return parameters
    merged = {**defaults, **parameters}
    default_options = defaults.get("providerOptions")
    request_options = parameters.get("providerOptions")
    if isinstance(default_options, Mapping) and isinstance(request_options, Mapping):
        options = cast("Mapping[str, Mapping[str, object]]", default_options)
        override = cast("Mapping[str, Mapping[str, object]]", request_options)
        combined = {**options, **override}
        if provider in options and provider in override:
            combined[provider] = {**options[provider], **override[provider]}
        merged["providerOptions"] = combined
    return merged


def status_error(
    provider: str,
    status: int | None,
    message: object,
    fallback: str,
    hints: Mapping[int, str],
    *,
    error_type: object,
    request_id: str | None,
    retry_after: float | None,
) -> ProviderError:
    """The :class:`~ai_chat.ProviderError` for an error status: the provider's ``message``
    (``fallback`` when it gave none), then what to do about the status (``hints``, or a
    general hint for a 5xx or anything else). ``error_type`` is kept when it is a
    non-empty string."""
    if not isinstance(message, str) or not message:
        message = fallback
    hint = (hints.get(status) if status is not None else None) or (
        "the provider failed; retry later"
        if status is not None and status >= 500
        else "the request failed"
    )
    return ProviderError(
        provider,
        shorten(f"{message} ({hint})"),
        status=status,
        error_type=error_type if isinstance(error_type, str) and error_type else None,
        request_id=request_id,
        retry_after=retry_after,
    )
