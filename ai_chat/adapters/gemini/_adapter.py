"""The Gemini adapter: the google-genai SDK sends, ai_chat decodes the stream.

google-genai has no raw streaming-response API like openai's and anthropic's
``with_streaming_response``, and its own stream does not release the connection on
``aclose()`` (its generators form a reference cycle; measured in the provider notes).
So the adapter goes one level down, to the SDK's API client: the SDK builds, authenticates,
sends and checks the request, and ai_chat reads the open ``httpx2.Response`` with its
bounded SSE decoder and closes it itself on every way out. Those are private SDK
methods, all called through :mod:`._sdk_shim`.

The response must be an ``httpx2`` one, which the adapter can read on any anyio backend
and close. A caller's client whose async transport is an httpx2 client is used as it is.
The SDK's default transports (aiohttp whenever it is importable, else a per-event-loop
httpx2 pool) run on asyncio only, so with those the adapter sends through an
``httpx2.AsyncClient`` of its own, built as the SDK built its transport, through a copy of
the caller's API client: the caller's configuration and credentials, the adapter's
connections, which :meth:`GeminiChatAdapter.aclose` closes. A client the adapter creates
gets httpx2 clients of the adapter's own.
"""

from __future__ import annotations

import os
from collections.abc import AsyncGenerator, AsyncIterator, Mapping
from contextlib import asynccontextmanager
from typing import Any, ClassVar, Final

import anyio
import httpx2
from google import genai
from google.auth.exceptions import GoogleAuthError
from google.genai import types as genai_types

from ..._adapter import AbortSignal
from ..._errors import ConfigurationError, ValidationError
from ..._types import ChatRequest
from .._base.client import ClientAdapter
from .._base.response import CLOSE_SECONDS
from .._base.sdk import Opening, Provider, check_defaults, check_model, stream_answer
from ._errors import TRANSLATED, provider_error
from ._events import GenerateContentMapper
from ._request import PROVIDER, generate_content_body
from ._sdk_shim import (
    api_client,
    borrow,
    build_request,
    client_arguments,
    fresh_credentials,
    model_path,
    send,
    transport_arguments,
)

__all__ = ["GeminiChatAdapter"]

# google-genai reads no request id header; gateways in front of the API may send this one.
# Without it the mapper takes the answer's responseId.
_GEMINI: Final = Provider(PROVIDER, "x-request-id", TRANSLATED, provider_error)


class GeminiChatAdapter(ClientAdapter[genai.Client]):
    """Streams answers from the Gemini API (or Vertex AI) through the ``google-genai`` SDK.

    The official SDK builds, authenticates and sends the request and checks the status;
    the adapter reads the SSE body with ai_chat's bounded decoder, maps the chunks to
    ai_chat events and closes the HTTP response itself however the stream stops
    (google-genai's own stream does not release it on ``aclose()``). Thought summaries
    (``providerOptions.gemini.thinkingConfig.includeThoughts``) become reasoning parts;
    ``thoughtSignature`` s ride on ``providerMetadata.gemini.thoughtSignature`` of the
    part that carried them (``text-end``, ``reasoning-end``, ``tool-input-available``):
    send those parts back unchanged in the history, as Gemini requires for multi-turn
    tool use with thinking. Gemini usually gives function calls no id: the adapter makes
    one up (``gemini-call-...``), which is not sent back; an id the API did issue is.

    Args:
        client: a ``google.genai.Client``, built however the SDK allows (the Gemini API or
            Vertex AI, an API key or Google credentials, ``http_options`` with a base URL,
            API version, headers, timeout, retries). It stays the caller's: the adapter
            never closes it, and it stays usable. When its async transport is an httpx2
            client (``http_options=types.HttpOptions(httpx_async_client=
            httpx2.AsyncClient())``), requests go through it. The SDK's own transports
            (aiohttp, or its per-event-loop httpx2 pool) run on asyncio only, so then the
            adapter sends through an ``httpx2.AsyncClient`` of its own built from the
            client's settings (its TLS context and ``async_client_args``; the rest of the
            configuration is the client's own), whose connections :meth:`aclose` closes.
            With ``None`` the adapter creates
            ``genai.Client(**settings)`` with httpx2 clients of its own (built as the SDK
            builds its, from ``http_options.client_args`` / ``async_client_args``); the
            SDK reads
            ``GEMINI_API_KEY`` / ``GOOGLE_API_KEY``, ``GOOGLE_GEMINI_BASE_URL``, and the
            Vertex AI variables. The adapter owns that client: close the adapter
            (:meth:`aclose` or ``async with``) to close it.
        model: the model (``gemini-2.5-flash``, ``models/...``, ``tunedModels/...``, or a
            Vertex AI publisher model), unless a request's ``parameters.model`` names
            another.
        parameters: default request parameters (the request vocabulary: ``temperature``,
            ``maxOutputTokens``, ``providerOptions``...; not ``toolChoice``, which depends
            on each request's tools). A request's own parameters override them;
            ``providerOptions.gemini`` is merged field by field.
        **settings: ``genai.Client`` arguments (``api_key``, ``vertexai``, ``project``,
            ``location``, ``credentials``, ``http_options`` with ``base_url``,
            ``api_version``, ``timeout`` in milliseconds, ``headers``, ``retry_options``...)
            when ``client`` is ``None``.

    Raises:
        ConfigurationError: an argument is invalid, settings were given with a client, the
            SDK refused the settings or found no credentials, or a caller's client sends
            through a transport of the caller's the adapter can neither read on any
            backend nor rebuild (an aiohttp session or an httpx client of their own, or
            ``async_client_args`` an httpx2 client cannot take).

    The stream raises :class:`~ai_chat.ValidationError` (naming the JSON path) before any
    request for input the Gemini API cannot express, :class:`~ai_chat.ProviderError` when
    the provider fails (status, error type such as ``RESOURCE_EXHAUSTED``, retry-after;
    an error object inside the stream too), :class:`~ai_chat.TruncatedStreamError` when the
    answer is cut off before a ``finishReason``, and passes the SSE decoder's
    :class:`~ai_chat.StreamFormatError` and :class:`~ai_chat.LimitExceededError` on.
    However the stream stops, the HTTP response is closed at once. Vertex AI with Google
    credentials (rather than an API key) works on trio too: the adapter loads the
    application default credentials and refreshes an expired token in a worker thread
    before the SDK, whose own refresh runs on asyncio only, would; a failed refresh is a
    :class:`~ai_chat.ProviderError`.
    """

    provider: ClassVar[str] = PROVIDER

    def __init__(
        self,
        client: genai.Client | None = None,
        *,
        model: str,
        parameters: Mapping[str, object] | None = None,
        **settings: Any,
    ) -> None:
        self._model = check_model(model)
        self._defaults = check_defaults(
            parameters,
            "the Gemini API",
            lambda request: generate_content_body(
                request, model="-", parameters=request["parameters"]
            ),
        )
        self._http: httpx2.AsyncClient | None = None  # the transports of an owned client
        self._http_sync: httpx2.Client | None = None
        self._adopt(
            client, genai.Client, lambda: self._create(settings), self._close, settings=settings
        )
        self._api = api_client(self._client)
        # Set when the client's own async transport cannot serve the adapter: the
        # arguments of the adapter's httpx2 client, which is made now (so that arguments
        # it refuses fail here) and again on the first stream after aclose().
        self._transport = transport_arguments(self._api)
        self._borrowed: tuple[httpx2.AsyncClient, Any] | None = None
        if self._transport is not None:
            self._borrowed = self._borrow(self._transport)

    def __repr__(self) -> str:
        owner = "owned" if self._owns_client else "caller's"
        transport = ", adapter's transport" if self._transport is not None else ""
        return f"GeminiChatAdapter(model={self._model!r}, {owner} client{transport})"

    @property
    def model(self) -> str:
        """The default model."""
        return self._model

    def stream(
        self, request: ChatRequest, signal: AbortSignal
    ) -> AsyncIterator[Mapping[str, object]]:
        """Stream one answer to ``request`` (see the class docstring for what it raises)."""
        return stream_answer(_GEMINI, self._defaults, self._open, request)

    async def aclose(self) -> None:
        """Close what the adapter holds: the client if it created it, and the httpx2
        client it sends a caller's client's requests through, if any (a later stream
        opens a new one). A caller's client is left open, and usable. Idempotent; the
        connections are released even when this is cancelled."""
        borrowed, self._borrowed = self._borrowed, None
        try:
            if borrowed is not None:
                with anyio.move_on_after(CLOSE_SECONDS, shield=True):
                    await borrowed[0].aclose()
        finally:
            await super().aclose()

    def _borrow(self, arguments: Mapping[str, Any]) -> tuple[httpx2.AsyncClient, Any]:
        try:
            return borrow(self._api, arguments)
        except (TypeError, ValueError, OSError) as exc:
            raise ConfigurationError(
                "http_options.async_client_args",
                arguments,
                f"arguments an httpx2.AsyncClient accepts ({exc})",
            ) from exc

    def _sender(self) -> Any:
        """The API client requests go through: the client's own, or the adapter's copy
        of it on the adapter's httpx2 client."""
        if self._transport is None:
            return self._api
        if self._borrowed is None:
            self._borrowed = self._borrow(self._transport)
        return self._borrowed[1]

    async def _close(self, client: genai.Client) -> None:
        """Close an owned client: the SDK closes the transports it made, the adapter its
        own."""
        try:
            client.close()  # the SDK closes the transports it made itself
            await client.aio.aclose()
        finally:
            if self._http_sync is not None:
                self._http_sync.close()
            if self._http is not None:
                await self._http.aclose()

    def _create(self, settings: Mapping[str, Any]) -> genai.Client:
        arguments = dict(settings)
        try:
            options = genai_types.HttpOptions.model_validate(arguments.get("http_options") or {})
        except ValueError as exc:
            raise ConfigurationError(
                "http_options", arguments.get("http_options"), f"valid HttpOptions ({exc})"
            ) from exc
        if options.httpx_async_client is None:
            options = self._own_transports(options, arguments.get("vertexai"))
        arguments["http_options"] = options
        try:
            return genai.Client(**arguments)
        except (ValueError, TypeError, GoogleAuthError) as exc:
            # Never used, so they hold no connection: nothing to close.
            self._http = self._http_sync = None
            if "API key" in str(exc) or isinstance(exc, GoogleAuthError):
                raise ConfigurationError(
                    "api_key",
                    None,
                    "an API key: pass api_key=... or set GEMINI_API_KEY (or GOOGLE_API_KEY; "
                    f"or Vertex AI settings) ({exc})",
                ) from exc
            raise ConfigurationError(
                "settings", sorted(settings), f"settings genai.Client accepts ({exc})"
            ) from exc

    def _own_transports(
        self, options: genai_types.HttpOptions, vertexai: object
    ) -> genai_types.HttpOptions:
        """``options`` with httpx2 clients of the adapter's own, built as the SDK would
        build its (its TLS rules, ``client_args``/``async_client_args``) around one shared
        TLS context: loading a CA bundle is most of what creating a client costs."""
        if vertexai is None:
            flag = os.environ.get("GOOGLE_GENAI_USE_ENTERPRISE") or os.environ.get(
                "GOOGLE_GENAI_USE_VERTEXAI", ""
            )
            vertexai = flag.lower() in ("true", "1")
        try:
            sync_args, async_args = client_arguments(options, vertexai=bool(vertexai))
            async_args.setdefault("follow_redirects", True)  # as the SDK's own clients
            self._http = httpx2.AsyncClient(**async_args)
            update: dict[str, object] = {"httpx_async_client": self._http}
            if options.httpx_client is None:
                sync_args.setdefault("follow_redirects", True)
                self._http_sync = httpx2.Client(**sync_args)
                update["httpx_client"] = self._http_sync
        except (TypeError, ValueError, OSError) as exc:
            raise ConfigurationError(
                "http_options",
                options,
                f"client_args / async_client_args httpx2 clients accept ({exc})",
            ) from exc
        return options.model_copy(update=update)

    def _open(self, request: ChatRequest, parameters: Mapping[str, object]) -> Opening:
        model, body = generate_content_body(request, model=self._model, parameters=parameters)
        api = self._sender()
        try:
            path = f"{model_path(api, model)}:streamGenerateContent?alt=sse"
        except ValueError as exc:
            raise ValidationError(
                "$.parameters.model", f"not a model name the Gemini API takes ({exc})"
            ) from exc
        try:
            http_request = build_request(api, path, body)
        except ValueError as exc:  # an ephemeral token, a client without a base URL...
            raise ConfigurationError(
                "client", self._client, f"a client the SDK can build this request with ({exc})"
            ) from exc
        return _send(api, http_request), GenerateContentMapper(PROVIDER)


@asynccontextmanager
async def _send(api: Any, http_request: Any) -> AsyncGenerator[httpx2.Response]:
    """Send through the SDK (auth, retries, status check); yield the open response."""
    await fresh_credentials(api)
    http = await send(api, http_request)
    try:
        yield http
    finally:
        with anyio.move_on_after(CLOSE_SECONDS, shield=True):
            await http.aclose()  # already closed by the skeleton's release(): a no-op
