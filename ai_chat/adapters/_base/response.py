"""Releasing an SDK's streaming HTTP response (httpx2), shared by the SDK-based adapters.

Imported only by the provider adapter modules, which need their SDK (and so httpx2).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any, Final, cast

import anyio
import httpx2

from ..._errors import ProviderError
from .http import shorten

__all__ = ["drain", "release", "timeout_error", "transport_error", "unreachable_error"]

# After the terminal event the rest of the body (normally just the last, empty chunk) is
# read so the connection can go back to the pool, as the SDKs do; past these bounds it is
# closed instead.
DRAIN_SECONDS: Final = 0.1
DRAIN_BYTES: Final = 64 * 1024
# Closing a response is a socket close; the bound only guards against a stuck transport.
CLOSE_SECONDS: Final = 5.0
# Buffered body pieces a closed response may still hand over (see release).
LEFTOVER_READS: Final = 1024


async def drain(chunks: AsyncIterator[bytes]) -> None:
    """Read what follows the terminal event, briefly, so that the connection can be reused."""
    received = 0
    with anyio.move_on_after(DRAIN_SECONDS):
        try:
            async for chunk in chunks:
                received += len(chunk)
                if received > DRAIN_BYTES:
                    return
        except httpx2.RequestError:
            return  # the answer is complete; the connection just cannot be reused


async def release(chunks: AsyncIterator[bytes], http: httpx2.Response) -> None:
    """Close the response, then finish the body iterator, even during a cancellation.

    This runs on every way out: the end, an error, a cancelled read, and ``aclose()``
    while the stream is suspended at a ``yield`` (the SDK's context manager would close
    the response too, but not shielded from a pending cancellation).

    Closing the response releases the connection at once. The iterator is then resumed
    rather than closed: httpx2's transport stream iterates httpcore's body generator with
    a bare ``async for``, so closing from the outside would leave that generator
    suspended for the garbage collector (which trio reports as a ResourceWarning).
    Resumed, every layer ends by itself: it hands over what was already buffered, then
    fails on the closed connection (or ends, if the body was complete).
    """
    with anyio.move_on_after(CLOSE_SECONDS, shield=True):
        if not http.is_closed:
            await http.aclose()
        try:
            for _ in range(LEFTOVER_READS):
                await chunks.__anext__()
        except (StopAsyncIteration, Exception):
            pass  # the end, or the closed connection's error: either way, it is over
        finally:
            await cast(Any, chunks).aclose()


def transport_error(provider: str, exc: BaseException, request_id: str | None) -> ProviderError:
    """The ProviderError for a failure reading the response body (raise it ``from exc``)."""
    if isinstance(exc, httpx2.TimeoutException):
        detail = "the stream stalled: no data within the client's read timeout"
    elif isinstance(exc, httpx2.RemoteProtocolError):
        detail = "the connection dropped mid-answer (closed before the response ended)"
    elif isinstance(exc, httpx2.TransportError):
        detail = "the connection was lost mid-answer (reset or failed)"
    else:
        detail = "the response could not be read"
    return ProviderError(
        provider,
        shorten(f"{detail}: {type(exc).__name__}: {exc}; retry the request"),
        request_id=request_id,
    )


def timeout_error(provider: str) -> ProviderError:
    """The ProviderError for an SDK's timeout before any response came."""
    return ProviderError(
        provider,
        "the request timed out before a response came; retry, or raise the client's timeout",
    )


def unreachable_error(provider: str, url: object, cause: BaseException | None) -> ProviderError:
    """The ProviderError for an SDK's connection error (``cause``: the transport's)."""
    reason = f": {type(cause).__name__}: {cause}" if cause is not None else ""
    return ProviderError(
        provider, shorten(f"could not reach {url}{reason}; check base_url and the network")
    )
