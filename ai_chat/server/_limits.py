"""How many answers one subject may run: at most N at once, at most M started per minute.

The chat endpoint asks an :class:`AnswerLimiter` before an answer starts (after the request
was checked, before anything is stored or the adapter runs) and tells it when the answer's
response has ended. A refusal is a 429 with ``Retry-After``. The limiter is an interface of
two methods so that another one can count across processes (in Redis, say) without the
endpoint changing; :class:`MemoryAnswerLimiter` counts in one process, with an injected
clock.

Why not the ``limits`` package: its asynchronous storage is asyncio-only (the server runs
on trio too), it has no concurrency limit, and its clock cannot be injected, so the window
could only be tested by sleeping. A later Redis limiter can still use it behind this
interface.
"""

from __future__ import annotations

import math
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Final, Literal, Protocol

import anyio
from starlette.responses import Response
from starlette.types import Receive, Scope, Send

from .._errors import ConfigurationError
from ._http import JSONError

__all__ = [
    "DEFAULT_ANSWERS_PER_MINUTE",
    "DEFAULT_CONCURRENT_ANSWERS",
    "AnswerLimiter",
    "AnswerLimits",
    "LimitRefusal",
    "MemoryAnswerLimiter",
    "ReleasingResponse",
    "rate_limited",
    "release",
]

DEFAULT_CONCURRENT_ANSWERS: Final = 4
DEFAULT_ANSWERS_PER_MINUTE: Final = 30
WINDOW: Final = 60.0
# A subject at its concurrency limit may retry once one of its answers ends, which no one
# can predict: a second is a polite guess.
_BUSY_RETRY: Final = 1.0
# How long releasing a slot may take once the response has ended (a remote counter).
_RELEASE_TIMEOUT: Final = 5.0


@dataclass(frozen=True, slots=True)
class AnswerLimits:
    """Per-subject answer limits; ``None`` turns one off.

    Attributes:
        concurrent: answers one subject may have running at once (default 4).
        per_minute: answers one subject may start in any 60 seconds (default 30).

    Raises:
        ConfigurationError: a limit is not ``None`` or a positive int.
    """

    concurrent: int | None = DEFAULT_CONCURRENT_ANSWERS
    per_minute: int | None = DEFAULT_ANSWERS_PER_MINUTE

    def __post_init__(self) -> None:
        for name in ("concurrent", "per_minute"):
            value: object = getattr(self, name)
            if value is not None and (type(value) is not int or value < 1):
                raise ConfigurationError(name, value, "None or a positive int")


@dataclass(frozen=True, slots=True)
class LimitRefusal:
    """Why an answer may not start now.

    Attributes:
        limit: ``"concurrent"`` or ``"per_minute"``.
        value: that limit's configured value.
        retry_after: seconds until a retry may succeed (at least a second).
    """

    limit: Literal["concurrent", "per_minute"]
    value: int
    retry_after: float


class AnswerLimiter(Protocol):
    """Counts answers per key (a subject, or a client address for a client without one).

    ``acquire`` either counts a new answer as running and started now (``None``) or
    refuses it (a :class:`LimitRefusal`, nothing counted); every successful ``acquire`` is
    followed by exactly one ``release`` of the same key, once that answer's response has
    ended (also when it failed or the client went away). ``release`` runs shielded from
    cancellation, for at most 5 seconds.
    """

    async def acquire(self, key: str) -> LimitRefusal | None: ...

    async def release(self, key: str) -> None: ...


@dataclass(slots=True)
class _Usage:
    running: int = 0
    starts: deque[float] = field(default_factory=deque[float])


class MemoryAnswerLimiter:
    """An :class:`AnswerLimiter` that counts in this process, over a sliding 60-second window.

    It keeps, per key with recent activity, the number of running answers and the start
    times of the last minute (at most ``per_minute`` of them); keys without either are
    dropped, so memory follows the keys active in the last minute. It is not thread-safe:
    use it from one event loop (one server process), which is what its methods assume
    (they never wait).

    Args:
        limits: the limits to apply.
        clock: seconds as a monotonic float (default :func:`time.monotonic`); tests pass
            their own to move the window without sleeping.
    """

    __slots__ = ("_clock", "_limits", "_swept", "_usage")

    def __init__(
        self, limits: AnswerLimits | None = None, *, clock: Callable[[], float] = time.monotonic
    ) -> None:
        if limits is None:
            limits = AnswerLimits()
        if not isinstance(limits, AnswerLimits):  # pyright: ignore[reportUnnecessaryIsInstance]
            raise ConfigurationError("limits", limits, "an AnswerLimits")
        self._limits = limits
        self._clock = clock
        self._usage: dict[str, _Usage] = {}
        self._swept = clock()

    @property
    def limits(self) -> AnswerLimits:
        """The limits applied."""
        return self._limits

    async def acquire(self, key: str) -> LimitRefusal | None:
        now = self._clock()
        if now - self._swept >= WINDOW:
            self._sweep(now)
        usage = self._usage.get(key)
        if usage is None:
            usage = self._usage[key] = _Usage()
        _expire(usage.starts, now)
        concurrent, per_minute = self._limits.concurrent, self._limits.per_minute
        if per_minute is not None and len(usage.starts) >= per_minute:
            wait = usage.starts[0] + WINDOW - now
            return LimitRefusal("per_minute", per_minute, max(wait, 1.0))
        if concurrent is not None and usage.running >= concurrent:
            return LimitRefusal("concurrent", concurrent, _BUSY_RETRY)
        usage.running += 1
        if per_minute is not None:
            usage.starts.append(now)
        return None

    async def release(self, key: str) -> None:
        usage = self._usage.get(key)
        if usage is None or usage.running == 0:
            return
        usage.running -= 1
        if usage.running == 0:
            _expire(usage.starts, self._clock())
            if not usage.starts:
                del self._usage[key]

    def _sweep(self, now: float) -> None:
        for key, usage in list(self._usage.items()):
            _expire(usage.starts, now)
            if usage.running == 0 and not usage.starts:
                del self._usage[key]
        self._swept = now


def _expire(starts: deque[float], now: float) -> None:
    while starts and starts[0] <= now - WINDOW:
        starts.popleft()


def rate_limited(refusal: LimitRefusal) -> JSONError:
    """The 429 answer to ``refusal``, with ``Retry-After`` in whole seconds."""
    seconds = max(1, math.ceil(refusal.retry_after))
    if refusal.limit == "concurrent":
        what = f"at most {refusal.value} answers may run at once"
    else:
        what = f"at most {refusal.value} answers may start per minute"
    return JSONError(
        429,
        "rate_limited",
        f"too many answers: {what}; retry in {seconds} s",
        fields={"limit": refusal.limit},
        headers={"retry-after": str(seconds)},
    )


async def release(limiter: AnswerLimiter, key: str) -> None:
    """``limiter.release(key)``, shielded from cancellation for at most 5 seconds."""
    with anyio.move_on_after(_RELEASE_TIMEOUT, shield=True):
        await limiter.release(key)


class ReleasingResponse(Response):
    """Sends ``inner``, then releases ``key``'s answer slot, however the sending ended.

    Shares ``inner``'s headers, so headers added to this response reach the client.
    """

    def __init__(self, inner: Response, limiter: AnswerLimiter, key: str) -> None:
        self.inner = inner
        self._limiter = limiter
        self._key = key
        self.status_code = inner.status_code
        self.raw_headers = inner.raw_headers
        self.background = None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        try:
            await self.inner(scope, receive, send)
        finally:
            await release(self._limiter, self._key)
