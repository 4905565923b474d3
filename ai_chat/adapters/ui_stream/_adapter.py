"""The UI message stream client adapter: POST as ``DefaultChatTransport`` does, read strictly."""

from __future__ import annotations

import json
import math
import re
import secrets
import string
from collections.abc import AsyncIterator, Mapping
from typing import Final, cast

import anyio
import httpx

from ..._adapter import AbortSignal
from ..._errors import ConfigurationError, LimitExceededError, ProviderError, ValidationError
from ..._sse import DEFAULT_MAX_EVENT_CHARS, DEFAULT_MAX_LINE_CHARS, SSEDecoder
from ..._types import ChatRequest
from ...limits import FrozenDict, freeze_json
from .._base.client import ClientAdapter
from .._base.http import retry_after, shorten
from .._base.response import TransportErrors, release, transport_error
from ._errors import PROVIDER
from ._events import UIChunkMapper
from ._request import PROTOCOL_KEYS, request_body

__all__ = [
    "DEFAULT_IDLE_TIMEOUT",
    "DEFAULT_MAX_BODY_BYTES",
    "DEFAULT_MAX_ERROR_BODY_BYTES",
    "UIMessageStreamAdapter",
]

DEFAULT_IDLE_TIMEOUT: Final = 60.0
DEFAULT_MAX_BODY_BYTES: Final = 64 * 1024 * 1024
DEFAULT_MAX_ERROR_BODY_BYTES: Final = 16 * 1024
# Timeouts of the client the adapter creates: reading is governed by idle_timeout.
_OWNED_TIMEOUT: Final = httpx.Timeout(30.0, connect=10.0, read=None)
_HTTPX: Final = TransportErrors.of(httpx)
_ID_ALPHABET: Final = string.ascii_letters + string.digits
_PROTOCOL_HEADER: Final = "x-vercel-ai-ui-message-stream"
_TOKEN: Final = re.compile(r"[!#$%&'*+.^_`|~0-9A-Za-z-]+")


def _generate_id() -> str:
    """16 alphanumeric characters, like the AI SDK's ``generateId()``."""
    return "".join(secrets.choice(_ID_ALPHABET) for _ in range(16))


class UIMessageStreamAdapter(ClientAdapter[httpx.AsyncClient]):
    """Streams answers from any server that speaks the AI SDK's UI message stream.

    That is what a ``useChat`` front end talks to: an AI SDK route
    (``toUIMessageStreamResponse``, ``createUIMessageStreamResponse``...), an
    :mod:`ai_chat.server` endpoint, or any other backend that follows the protocol. Each
    answer is one ``POST`` of the JSON body ``DefaultChatTransport`` sends: the chat
    ``id``, the whole history as ``UIMessage`` s (see
    :mod:`ai_chat.adapters.ui_stream` for the conversion), ``trigger:
    "submit-message"``, ``messageId`` when the history ends with an assistant message
    being continued, and the extra ``body`` keys. The response's Server-Sent Events are
    read with ai_chat's bounded decoder, and the chunks, which already are ai_chat
    events, are handed on.

    The adapter is stricter than the AI SDK's client, which accepts several broken
    streams silently; each of these ends the stream with a typed error (after the events
    that came before it): an HTTP error status, a content type other than
    ``text/event-stream``, a missing or unknown ``x-vercel-ai-ui-message-stream``
    header, an ``error`` chunk (:class:`~ai_chat.RemoteStreamError`), an ``abort`` chunk, a
    ``finish`` with ``finishReason: "interrupted"`` or none at all before the body
    ends, a missing ``data: [DONE]`` or a data event after it
    (:class:`~ai_chat.TruncatedStreamError` / :class:`~ai_chat.ProviderError`), a final
    event without its blank line, bytes that are not UTF-8
    (:class:`~ai_chat.StreamFormatError`), a line that is not a JSON chunk object, an
    unknown chunk type (:class:`~ai_chat.ProviderError`), a bound exceeded
    (:class:`~ai_chat.LimitExceededError`), and no event within ``idle_timeout``; a chunk
    out of order or of the wrong shape is caught by the chat stream
    (:class:`~ai_chat.ProtocolError`).

    Args:
        url: the endpoint, such as ``http://127.0.0.1:8000/api/chat``.
        client: an ``httpx.AsyncClient`` to send through. It stays the caller's: the
            adapter never closes it, and its own timeouts apply too (httpx's default
            5 s read timeout may cut a slow model off: create it with
            ``timeout=httpx.Timeout(30, read=None)`` and let ``idle_timeout`` govern
            reading). With ``None`` the adapter creates one (connect timeout 10 s, no
            read timeout) and owns it: close the adapter (:meth:`aclose` or
            ``async with``) to close it.
        headers: extra request headers (authentication, for example); they may override
            the ``content-type: application/json`` the adapter sends.
        body: extra keys for every request body, as the transport's ``body`` option
            (JSON; not ``id``, ``messages``, ``trigger`` or ``messageId``). A request's
            ``parameters.providerOptions["ui-stream"]`` adds keys for that request.
        chat_id: the chat ``id`` every request carries; by default a random 16-character
            id made once per adapter, as an AI SDK ``Chat`` makes one per chat.
        idle_timeout: the most seconds to wait for the response, and then for each next
            event; a keep-alive comment line (``: keep-alive``) counts as activity. Above
            0, or ``None`` for no limit. Default 60 s.
        max_line_chars: the longest SSE line (default 4 MiB characters).
        max_event_chars: the most data one SSE event may carry (default 8 MiB characters).
        max_body_bytes: the most bytes the whole response body may have (default 64 MiB;
            the chat stream's ``max_response_chars`` also bounds the events).
        max_error_body_bytes: how much of an error response's body is read for the
            error message (default 16 KiB; the message shows at most 500 characters).
        require_protocol_header: whether the response must carry
            ``x-vercel-ai-ui-message-stream: v1`` (default ``True``; the header is the
            protocol's only version marker, and AI SDK servers always send it). With
            ``False`` a missing header is accepted, an unknown version still is not.

    Raises:
        ConfigurationError: an argument is invalid.
    """

    def __init__(
        self,
        url: str,
        *,
        client: httpx.AsyncClient | None = None,
        headers: Mapping[str, str] | None = None,
        body: Mapping[str, object] | None = None,
        chat_id: str | None = None,
        idle_timeout: float | None = DEFAULT_IDLE_TIMEOUT,
        max_line_chars: int = DEFAULT_MAX_LINE_CHARS,
        max_event_chars: int = DEFAULT_MAX_EVENT_CHARS,
        max_body_bytes: int = DEFAULT_MAX_BODY_BYTES,
        max_error_body_bytes: int = DEFAULT_MAX_ERROR_BODY_BYTES,
        require_protocol_header: bool = True,
    ) -> None:
        self._url = _check_url(url)
        self._headers = _check_headers(headers)
        self._body = _check_body(body)
        if chat_id is None:
            chat_id = _generate_id()
        elif type(chat_id) is not str or not chat_id:
            raise ConfigurationError("chat_id", chat_id, "a non-empty string (or None)")
        self._chat_id = chat_id
        if idle_timeout is not None and (
            type(idle_timeout) not in (int, float)
            or not math.isfinite(idle_timeout)
            or idle_timeout <= 0
        ):
            raise ConfigurationError(
                "idle_timeout", idle_timeout, "a number of seconds above 0, or None"
            )
        self._idle_timeout = None if idle_timeout is None else float(idle_timeout)
        # The decoder checks its own bounds; one made here fails fast on bad ones.
        SSEDecoder(
            max_line_chars=max_line_chars,
            max_event_chars=max_event_chars,
            max_body_bytes=max_body_bytes,
        )
        self._limits = (max_line_chars, max_event_chars, max_body_bytes)
        if type(max_error_body_bytes) is not int or max_error_body_bytes < 1:
            raise ConfigurationError("max_error_body_bytes", max_error_body_bytes, "a positive int")
        self._max_error_body_bytes = max_error_body_bytes
        if type(require_protocol_header) is not bool:
            raise ConfigurationError(
                "require_protocol_header", require_protocol_header, "True or False"
            )
        self._require_protocol_header = require_protocol_header
        self._adopt(
            client,
            httpx.AsyncClient,
            lambda: httpx.AsyncClient(timeout=_OWNED_TIMEOUT),
            httpx.AsyncClient.aclose,
            expected="an httpx.AsyncClient",
        )

    # --- ownership ------------------------------------------------------------------

    @property
    def url(self) -> str:
        """The endpoint requests are sent to."""
        return self._url

    @property
    def chat_id(self) -> str:
        """The chat ``id`` every request carries."""
        return self._chat_id

    def __repr__(self) -> str:
        owner = "owned" if self._owns_client else "caller's"
        return f"UIMessageStreamAdapter({self._url!r}, chat_id={self._chat_id!r}, {owner} client)"

    # --- streaming ------------------------------------------------------------------

    async def stream(
        self, request: ChatRequest, signal: AbortSignal
    ) -> AsyncIterator[Mapping[str, object]]:
        """Stream one answer to ``request`` (see the class docstring for what it raises).

        However the stream stops (its end, an error, a cancelled read, ``aclose()``), the
        HTTP response is closed before this returns, so the server sees the disconnect
        of an unfinished answer at once.
        """
        body = request_body(request, chat_id=self._chat_id, extra=self._body)
        content = json.dumps(body, ensure_ascii=False, separators=(",", ":")).encode()
        headers = {"content-type": "application/json", **self._headers}
        http_request = self._client.build_request(
            "POST", self._url, content=content, headers=headers
        )
        idle = self._idle_timeout
        response: httpx.Response | None = None
        with anyio.CancelScope(deadline=_deadline(idle)) as scope:
            try:
                response = await self._client.send(http_request, stream=True)
            except httpx.HTTPError as exc:
                raise transport_error(PROVIDER, exc, None, _HTTPX, answering=False) from exc
        if response is None:
            assert scope.cancelled_caught
            raise ProviderError(
                PROVIDER,
                f"no response from {self._url} within idle_timeout={idle:g} s; check that the "
                "server is up, or raise idle_timeout",
            )
        mapper = UIChunkMapper(response.headers.get("x-request-id"))
        chunks: AsyncIterator[bytes] | None = None
        try:
            await self._check_response(response, mapper.request_id)
            max_line, max_event, max_body = self._limits
            decoder = SSEDecoder(
                max_line_chars=max_line, max_event_chars=max_event, max_body_bytes=max_body
            )
            chunks = response.aiter_bytes()
            read = chunks.__anext__
            feed = decoder.feed
            map_events = mapper.feed_events
            deadline = _deadline(idle)
            chunk = b""
            while True:
                with anyio.CancelScope(deadline=deadline) as scope:
                    try:
                        chunk = await read()
                    except StopAsyncIteration:
                        break
                    except httpx.HTTPError as exc:
                        raise transport_error(PROVIDER, exc, mapper.request_id, _HTTPX) from exc
                if scope.cancelled_caught:
                    raise ProviderError(
                        PROVIDER,
                        f"the stream stalled: no event within idle_timeout={idle:g} s; retry, "
                        "or raise idle_timeout",
                        request_id=mapper.request_id,
                    )
                completed = feed(chunk)
                if completed:
                    for event in map_events(completed):
                        yield event
                    deadline = _deadline(idle)
                elif idle is not None and (b"\n:" in chunk or b"\r:" in chunk or chunk[:1] == b":"):
                    deadline = _deadline(idle)  # a keep-alive comment
            for event in map_events(decoder.close()):
                yield event
            mapper.end()
        finally:
            await release(response, chunks)

    async def _check_response(self, response: httpx.Response, request_id: str | None) -> None:
        """Raise for an error status, a wrong content type or protocol header."""
        status = response.status_code
        headers = response.headers
        if not 200 <= status < 300:
            text = await self._error_text(response)
            raise ProviderError(
                PROVIDER,
                f"{self._url} answered {status} {response.reason_phrase}: {text or '(no body)'}",
                status=status,
                request_id=request_id,
                retry_after=retry_after(headers),
            )
        content_type = headers.get("content-type", "")
        media_type, _, params = content_type.partition(";")
        charset = _charset(params)
        if media_type.strip().lower() != "text/event-stream" or charset not in (None, "utf-8"):
            text = await self._error_text(response)
            raise ProviderError(
                PROVIDER,
                f"{self._url} answered with content-type {content_type or '(none)'!r}, not "
                f"text/event-stream (UTF-8); is it a UI message stream endpoint? Body: "
                f"{text or '(empty)'}",
                status=status,
                request_id=request_id,
            )
        version = headers.get(_PROTOCOL_HEADER)
        if version is None and self._require_protocol_header:
            raise ProviderError(
                PROVIDER,
                f"{self._url} answered without the {_PROTOCOL_HEADER}: v1 header, so it may not "
                "speak the UI message stream protocol; construct the adapter with "
                "require_protocol_header=False to accept servers that omit it",
                status=status,
                request_id=request_id,
            )
        if version is not None and version.strip() != "v1":
            raise ProviderError(
                PROVIDER,
                f"{self._url} speaks UI message stream version {shorten(version, 40)!r}; this "
                "client reads v1",
                status=status,
                request_id=request_id,
            )

    async def _error_text(self, response: httpx.Response) -> str:
        """The start of the body, bounded in bytes and time, for an error message."""
        received = bytearray()
        limit = self._max_error_body_bytes
        chunks = response.aiter_bytes()
        try:
            with anyio.move_on_after(self._idle_timeout or math.inf):
                while len(received) < limit:
                    received += await chunks.__anext__()
        except (StopAsyncIteration, httpx.HTTPError):
            pass  # what came is all there is to show
        finally:
            await release(response, chunks)
        text = bytes(received[:limit]).decode("utf-8", errors="replace").strip()
        return shorten(" ".join(text.split()))


def _deadline(idle: float | None) -> float:
    return math.inf if idle is None else anyio.current_time() + idle


def _charset(params: str) -> str | None:
    for param in params.split(";"):
        name, _, value = param.partition("=")
        if name.strip().lower() == "charset":
            return value.strip().strip('"').lower()
    return None


def _check_url(url: object) -> str:
    expected = "an absolute http:// or https:// URL"
    if type(url) is not str or not url:
        raise ConfigurationError("url", url, expected)
    try:
        parsed = httpx.URL(url)
    except (httpx.InvalidURL, TypeError) as exc:
        raise ConfigurationError("url", url, f"{expected} ({exc})") from exc
    if parsed.scheme not in ("http", "https") or not parsed.host:
        raise ConfigurationError("url", url, expected)
    return url


def _check_headers(headers: Mapping[str, str] | None) -> dict[str, str]:
    if headers is None:
        return {}
    if not isinstance(cast(object, headers), Mapping):
        raise ConfigurationError("headers", headers, "a mapping of header names to strings")
    checked: dict[str, str] = {}
    for name, value in headers.items():
        if type(name) is not str or type(value) is not str or not name:
            raise ConfigurationError("headers", headers, "a mapping of header names to strings")
        checked[name] = value
    for name, value in checked.items():
        if _TOKEN.fullmatch(name) is None:
            raise ConfigurationError(
                "headers", headers, f"valid HTTP header names ({name!r} is not a token)"
            )
        if any(c in value for c in "\r\n\0") or not value.isascii():
            raise ConfigurationError(
                "headers",
                headers,
                f"ASCII header values without CR, LF or NUL (see {name!r})",
            )
    return checked


def _check_body(body: Mapping[str, object] | None) -> Mapping[str, object]:
    if body is None:
        return FrozenDict()
    try:
        frozen = freeze_json(body, root="body")
    except (ValidationError, LimitExceededError) as exc:
        raise ConfigurationError("body", body, f"a JSON object ({exc})") from exc
    if type(frozen) is not FrozenDict:
        raise ConfigurationError("body", body, "a JSON object of extra request body keys")
    fields = cast("FrozenDict[str, object]", frozen)
    for key in PROTOCOL_KEYS:
        if key in fields:
            raise ConfigurationError(
                "body",
                body,
                f'extra keys other than {", ".join(PROTOCOL_KEYS)} (the adapter writes "{key}")',
            )
    return fields
