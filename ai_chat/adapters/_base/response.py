"""Releasing a streaming HTTP response, and the errors of sending and reading one.

Written once for both HTTP libraries the adapters read: ``httpx`` (the UI message stream
adapter) and ``httpx2`` (the transport of the provider SDKs), whose responses and
exception trees have the same shape. This module imports neither: a response is anything
with ``is_closed`` and ``aclose()`` (:class:`StreamingResponse`), and a library's
exception classes come as a :class:`TransportErrors`.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from types import ModuleType
from typing import Any, Final, NamedTuple, Protocol, cast

import anyio

from ..._errors import ProviderError
from .http import shorten

__all__ = [
    "CLOSE_SECONDS",
    "StreamingResponse",
    "TransportErrors",
    "drain",
    "release",
    "timeout_error",
    "transport_error",
    "unreachable_error",
]

# After the terminal event the rest of the body (normally just the last, empty chunk) is
# read so the connection can go back to the pool, as the SDKs do; past these bounds it is
# closed instead.
DRAIN_SECONDS: Final = 0.1
DRAIN_BYTES: Final = 64 * 1024
# Closing a response is a socket close; the bound only guards against a stuck transport.
CLOSE_SECONDS: Final = 5.0
# Buffered body pieces a closed response may still hand over (see release).
LEFTOVER_READS: Final = 1024


class StreamingResponse(Protocol):
    """An ``httpx.Response`` or an ``httpx2.Response``, as far as releasing it goes."""

    @property
    def is_closed(self) -> bool: ...

    async def aclose(self) -> None: ...


class TransportErrors(NamedTuple):
    """One HTTP library's exception classes (httpx and httpx2 have the same tree)."""

    request: type[Exception]  # RequestError: any failure to send or to read
    connect: tuple[type[Exception], ...]  # no connection was made
    timeout: type[Exception]
    remote_protocol: type[Exception]  # the server broke the HTTP protocol (or hung up)
    transport: type[Exception]  # the connection failed (reset, refused...)

    @classmethod
    def of(cls, library: ModuleType) -> TransportErrors:
        """The classes of ``library``: the ``httpx`` or the ``httpx2`` module."""
        return cls(
            library.RequestError,
            (library.ConnectError, library.UnsupportedProtocol),
            library.TimeoutException,
            library.RemoteProtocolError,
            library.TransportError,
        )


async def drain(chunks: AsyncIterator[bytes], errors: TransportErrors) -> None:
    """Read what follows the terminal event, briefly, so that the connection can be reused."""
    received = 0
    with anyio.move_on_after(DRAIN_SECONDS):
        try:
            async for chunk in chunks:
                received += len(chunk)
                if received > DRAIN_BYTES:
                    return
        except errors.request:
            return  # the answer is complete; the connection just cannot be reused


async def release(response: StreamingResponse, chunks: AsyncIterator[bytes] | None) -> None:
    """Close the response, then finish the body iterator, even during a cancellation.

    This runs on every way out: the end, an error, a cancelled read, and ``aclose()``
    while the stream is suspended at a ``yield`` (an SDK's context manager would close
    the response too, but not shielded from a pending cancellation).

    Closing the response releases the connection at once (a body that was not read to
    its end closes the connection, which the server sees as a disconnect). The iterator
    is then resumed rather than closed: the transports iterate their connection pool's
    body generators with a bare ``async for``, so closing the outer one from the outside
    would leave the inner ones suspended for the garbage collector (which trio reports as
    a ResourceWarning). Resumed, every layer ends by itself: it hands over what was
    already buffered, then fails on the closed connection (or ends, if the body was
    complete).
    """
    with anyio.move_on_after(CLOSE_SECONDS, shield=True):
        if not response.is_closed:
            await response.aclose()
        if chunks is not None:
            try:
                for _ in range(LEFTOVER_READS):
                    await chunks.__anext__()
            except (StopAsyncIteration, Exception):
                pass  # the end, or the closed connection's error: either way, it is over
            finally:
                await cast(Any, chunks).aclose()


def transport_error(
    provider: str,
    exc: BaseException,
    request_id: str | None,
    errors: TransportErrors,
    *,
    answering: bool = True,
) -> ProviderError:
    """The ProviderError for a failure to send the request or to read the answer (raise it
    ``from exc``); ``answering``: whether the response had begun."""
    what = f"{type(exc).__name__}: {exc}"
    when = "mid-answer" if answering else "before a response came"
    if isinstance(exc, errors.connect):
        return unreachable_error(provider, _url(exc), exc)
    if isinstance(exc, errors.timeout):
        waited = "the stream stalled: no data" if answering else "no response came"
        detail = (
            f"{waited} within the client's timeout ({what}); retry, or raise the client's timeout"
        )
    elif isinstance(exc, errors.remote_protocol):
        detail = (
            f"the connection dropped {when} (closed before the response ended): {what}; "
            "retry the request"
        )
    elif isinstance(exc, errors.transport):
        detail = f"the connection was lost {when} (reset or failed): {what}; retry the request"
    else:
        detail = f"the request to {_url(exc)} failed: {what}"
    return ProviderError(provider, shorten(detail), request_id=request_id)


def _url(exc: BaseException) -> str:
    """The URL of the request ``exc`` failed (httpx's and httpx2's ``RequestError``)."""
    try:
        return str(cast(Any, exc).request.url)
    except (AttributeError, RuntimeError):  # no request attached
        return "the server"


def timeout_error(provider: str) -> ProviderError:
    """The ProviderError for an SDK's timeout before any response came."""
    return ProviderError(
        provider,
        "the request timed out before a response came; retry, or raise the client's timeout",
    )


def unreachable_error(provider: str, url: object, cause: BaseException | None) -> ProviderError:
    """The ProviderError for a connection that could not be made (``cause``: the
    transport's error, which an SDK's connection error wraps)."""
    reason = f": {type(cause).__name__}: {cause}" if cause is not None else ""
    return ProviderError(
        provider, shorten(f"could not reach {url}{reason}; check the URL and the network")
    )
