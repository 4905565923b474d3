"""Every use of google-genai's private API, in one place.

google-genai has no raw streaming-response API like openai's and anthropic's
``with_streaming_response``, and its own stream does not release the connection on
``aclose()`` (its generators form a reference cycle; measured in the provider notes).
So the adapter goes one level down, to the SDK's API client, the layer every
``client.aio.models`` call goes through:

* ``Client._api_client``: that API client (a ``BaseApiClient``): :func:`api_client`;
* ``BaseApiClient._build_request(method, path, body, http_options)`` builds the URL
  (base URL, API version, Vertex AI project and location), the headers
  (``x-goog-api-key``, the SDK's version headers, ``http_options.headers``), the timeout
  and the body (``extra_body`` merged): :func:`build_request`;
* ``BaseApiClient._async_request(http_request=, http_options=, stream=True)``
  authenticates (Vertex AI credentials), applies ``http_options.retry_options``, sends,
  and checks the status (raising the SDK's ``ClientError``/``ServerError``), and returns
  the SDK's ``HttpResponse`` whose ``response_stream`` is the open ``httpx2.Response``:
  :func:`send`;
* ``google.genai._transformers.t_model(api, model)``, the model's resource path:
  :func:`model_path`;
* ``BaseApiClient._ensure_httpx_ssl_ctx(options, vertexai=, client_cls=,
  async_client_cls=)``, the arguments the SDK builds its own httpx2 clients with (its TLS
  rules, ``client_args``/``async_client_args``): :func:`client_arguments`;
* ``BaseApiClient._credentials`` and ``google.genai._api_client.load_auth`` /
  ``refresh_auth``, the Vertex AI credentials the SDK sends and how it loads and
  refreshes them, which :func:`fresh_credentials` does in a worker thread so that the
  SDK's asyncio-only refresh is not reached on trio.

The async transport of a caller's client is read where the adapter can read and close its
responses on any anyio backend: an ``httpx2.AsyncClient`` that is not the SDK's
per-event-loop pool. The SDK's other transports (its aiohttp sessions, its per-event-loop
httpx2 or httpx pool) run on asyncio only, so the adapter sends through an httpx2 client
of its own built from the same configuration (:func:`transport_arguments`), through a copy
of the API client that differs in that transport only (:func:`borrow`). These read
``BaseApiClient._use_aiohttp()``, ``._http_options``, ``._async_httpx_client`` and its
``_per_loop`` flag, ``._async_httpx_client_args`` (the arguments the SDK built its httpx
client with), ``._httpx_client``, ``._aiohttp_sessions``, ``._use_mtls_endpoint()`` and
``_api_client._has_client_cert()``; the copy is safe to drop because ``BaseApiClient``'s
``close()``, ``aclose()`` and ``__del__`` leave a client named in ``http_options``
alone and close only the aiohttp sessions in ``_aiohttp_sessions``.

The google-genai versions the ``gemini`` extra allows are tested against these
(``tests/adapters/gemini/test_sdk_shim.py`` fails naming the installed version when one
moves), and :func:`api_client` checks them on every adapter's construction.
"""

from __future__ import annotations

import copy
import functools
import inspect
import re
import ssl
from collections.abc import Callable, Mapping
from typing import Any, Final

import anyio.to_thread
import google.genai
import httpx2
from google.genai import _api_client as sdk_api_client
from google.genai import _transformers
from google.genai import types as genai_types

from ..._errors import ConfigurationError

__all__ = [
    "SDK_VERSION",
    "api_client",
    "borrow",
    "build_request",
    "client_arguments",
    "fresh_credentials",
    "missing",
    "model_path",
    "send",
    "transport_arguments",
]

SDK_VERSION: Final[str] = google.genai.__version__

_HTTPX2_CLIENT: Final = (
    "types.HttpOptions(httpx_async_client=httpx2.AsyncClient(...)) configured as you need "
    "(close that httpx2 client yourself), or leave the transport to the SDK"
)

# The private methods used, and the parameters each call passes.
_METHODS: Final[Mapping[str, tuple[str, ...]]] = {
    "_build_request": ("http_method", "path", "request_dict", "http_options"),
    "_async_request": ("http_request", "http_options", "stream"),
    "_use_aiohttp": (),
    "_ensure_httpx_ssl_ctx": ("options", "vertexai", "client_cls", "async_client_cls"),
    "_use_mtls_endpoint": ("client_cert_loaded",),
}
# The attributes the API client's constructor sets that the transport choice reads.
_ATTRIBUTES: Final = (
    "_http_options",
    "_async_httpx_client",
    "_async_httpx_client_args",
    "_httpx_client",
    "_aiohttp_sessions",
    "_async_httpx_use_mtls_endpoint",
    "_credentials",
)
# The module functions: Vertex AI's default credentials and their refresh.
_FUNCTIONS: Final[Mapping[str, tuple[str, ...]]] = {
    "_has_client_cert": ("ctx",),
    "load_auth": ("project",),
    "refresh_auth": ("credentials",),
}
# The HttpOptions fields that say which transport a client uses.
_OPTIONS: Final = ("async_client_args", "httpx_client", "httpx_async_client", "aiohttp_client")
# Packages whose objects an httpx2 client cannot take.
_FOREIGN: Final = frozenset({"aiohttp", "httpx", "yarl"})


def missing() -> list[str]:
    """What of the private API this module uses the installed SDK lacks (empty: all there).

    Checked: each private method and the parameters the calls pass, ``t_model``'s
    parameters, the ``response_stream`` of the SDK's ``HttpResponse``, the attributes the
    transport choice reads and the per-event-loop pool's ``_per_loop`` flag, the
    ``HttpOptions`` fields naming a transport, ``_has_client_cert``, and that closing or
    collecting an API client still leaves a client named in its options alone.
    """
    found: list[str] = []
    base: Any = getattr(sdk_api_client, "BaseApiClient", None)
    if base is None:
        return ["google.genai._api_client.BaseApiClient"]
    for name, wanted in _METHODS.items():
        method = getattr(base, name, None)
        if not callable(method):
            found.append(f"BaseApiClient.{name}")
        elif not set(wanted) <= set(_parameters(method)):
            found.append(f"BaseApiClient.{name}({', '.join(wanted)})")
    t_model = getattr(_transformers, "t_model", None)
    if not callable(t_model) or _parameters(t_model)[:2] != ["client", "model"]:
        found.append("google.genai._transformers.t_model(client, model)")
    response: Any = getattr(sdk_api_client, "HttpResponse", None)
    if response is None or "response_stream" not in _parameters(response.__init__):
        found.append("google.genai._api_client.HttpResponse(response_stream=...)")
    constructor = _source(base.__init__)
    found += [
        f"BaseApiClient.{name}"
        for name in _ATTRIBUTES
        if not re.search(rf"self\.{name}\s*(:[^=\n]*)?=", constructor)
    ]
    per_loop: Any = getattr(sdk_api_client, "_PerLoopAsyncClientMixin", None)
    if per_loop is not None and "self._per_loop" not in _source(per_loop):
        found.append("_PerLoopAsyncClientMixin._per_loop")
    fields = getattr(genai_types.HttpOptions, "model_fields", {})
    found += [f"HttpOptions.{name}" for name in _OPTIONS if name not in fields]
    for name, wanted in _FUNCTIONS.items():
        function = getattr(sdk_api_client, name, None)
        if not callable(function) or _parameters(function) != list(wanted):
            found.append(f"google.genai._api_client.{name}({', '.join(wanted)})")
    # A borrowed copy is dropped without being closed: what its close(), aclose() and
    # __del__ would close must stay guarded by the options and the session registry.
    for name, guard in (
        ("close", "self._http_options.httpx_client"),
        ("aclose", "self._http_options.httpx_async_client"),
        ("aclose", "self._aiohttp_sessions"),
        ("__del__", "self._http_options.httpx_client"),
    ):
        if guard not in _source(getattr(base, name, None)):
            found.append(f"BaseApiClient.{name} (guarded by {guard})")
    return found


def _parameters(function: Callable[..., object]) -> list[str]:
    try:
        return [name for name in inspect.signature(function).parameters if name != "self"]
    except (TypeError, ValueError):
        return []


def _source(thing: object) -> str:
    try:
        return inspect.getsource(thing)  # pyright: ignore[reportArgumentType]
    except (OSError, TypeError):
        return ""


def api_client(client: object) -> Any:
    """The SDK's API client behind ``client``, checked for what the adapter calls.

    Raises:
        ConfigurationError: the installed SDK lacks a private method the adapter calls.
    """
    api = getattr(client, "_api_client", None)
    if api is None or not all(
        callable(getattr(api, name, None)) for name in _METHODS if name != "_ensure_httpx_ssl_ctx"
    ):
        raise ConfigurationError(
            "client",
            client,
            "a google-genai version the gemini extra supports (its API client changed; "
            f"installed: google-genai {SDK_VERSION})",
        )
    return api


def transport_arguments(api: Any) -> dict[str, Any] | None:
    """How the adapter sends through ``api``: ``None`` when its async transport is an
    ``httpx2.AsyncClient`` the adapter can read and close on any anyio backend (one the
    caller gave, or one the SDK built around the caller's ``transport`` or ``mounts``),
    which is then used as it is.

    Otherwise (the SDK's aiohttp sessions, its per-event-loop httpx2 or httpx pool, or no
    async httpx client at all), the arguments of the ``httpx2.AsyncClient`` the adapter
    sends through instead, built as the SDK built its own: its TLS context (with the
    client certificate it loaded for Vertex AI, if any), the ``async_client_args`` an
    httpx2 client takes (aiohttp's ``ssl``, a context or ``False``, as ``verify``), and
    redirects followed. Everything else (credentials, base URL, API version, headers,
    timeout, retries, Vertex AI project and location) stays in the API client.

    Raises:
        ConfigurationError: the transport is one the caller built that the adapter can
            neither read on any backend nor rebuild (their own aiohttp session, their own
            httpx client), or ``async_client_args`` hold arguments or objects an httpx2
            client does not take.
    """
    options: Any = api._http_options
    transport = api._async_httpx_client
    aiohttp = bool(api._use_aiohttp())
    if (
        not aiohttp
        and isinstance(transport, httpx2.AsyncClient)
        and not getattr(transport, "_per_loop", False)
    ):
        return None
    if aiohttp and options.aiohttp_client is not None:
        raise ConfigurationError(
            "http_options.aiohttp_client",
            options.aiohttp_client,
            "a transport the adapter can read on any anyio backend (an aiohttp session is "
            f"asyncio-only, and its settings cannot be carried over): {_HTTPX2_CLIENT}",
        )
    if not aiohttp and options.httpx_async_client is not None:
        raise ConfigurationError(
            "http_options.httpx_async_client",
            options.httpx_async_client,
            "an httpx2.AsyncClient (the adapter reads httpx2 responses; an httpx client's "
            f"settings cannot be carried over): {_HTTPX2_CLIENT}",
        )
    arguments: dict[str, Any] = dict(api._async_httpx_client_args or {})
    if aiohttp:
        # The SDK's args are aiohttp request arguments here; those it kept for its httpx2
        # client are the ones both take. aiohttp's ssl is httpx2's verify.
        given: dict[str, Any] = dict(options.async_client_args or {})
        if "ssl" in given:
            verify = given.pop("ssl")
            if verify is not True and "verify" not in given:  # True: the SDK's TLS context
                if not isinstance(verify, ssl.SSLContext | bool):
                    raise ConfigurationError(
                        "http_options.async_client_args.ssl",
                        verify,
                        "an ssl.SSLContext or a bool (the adapter's httpx2 transport takes it "
                        f"as verify): {_HTTPX2_CLIENT}",
                    )
                arguments["verify"] = verify
        dropped = sorted(set(given) - set(arguments))
        if dropped:
            raise ConfigurationError(
                "http_options.async_client_args",
                given,
                f"arguments an httpx2.AsyncClient takes too (not {', '.join(dropped)}: "
                f"aiohttp's own, which the adapter's transport cannot carry over): "
                f"{_HTTPX2_CLIENT}",
            )
    foreign = sorted(name for name, value in arguments.items() if _package(value) in _FOREIGN)
    if foreign:
        raise ConfigurationError(
            "http_options.async_client_args",
            options.async_client_args,
            f"arguments an httpx2.AsyncClient takes ({', '.join(foreign)}: aiohttp or httpx "
            f"objects, which the adapter's httpx2 transport cannot use): {_HTTPX2_CLIENT}",
        )
    arguments.setdefault("follow_redirects", True)  # as the SDK's own clients
    return arguments


def _package(value: object) -> str:
    """The top-level package of ``value``'s class or of the first base from one other
    than the builtins (a subclass of an aiohttp or httpx class counts as theirs)."""
    for kind in type(value).__mro__:
        package = (kind.__module__ or "").split(".")[0]
        if package in _FOREIGN:
            return package
    return type(value).__module__.split(".")[0]


def borrow(api: Any, arguments: Mapping[str, Any]) -> tuple[httpx2.AsyncClient, Any]:
    """A new ``httpx2.AsyncClient(**arguments)`` and a copy of ``api`` that sends through
    it: the same configuration, credentials (the same object, so a refreshed token
    serves both), retries and auth locks. ``api`` itself is not changed.

    The caller owns the httpx2 client and closes it; the copy needs no closing, and
    dropping it closes nothing of ``api``'s: its options name ``api``'s sync client and
    the new client as given by the caller (which the SDK never closes), and it has no
    aiohttp sessions of its own.

    Raises:
        TypeError, ValueError, OSError: ``arguments`` are not ones httpx2 takes.
    """
    http = httpx2.AsyncClient(**arguments)
    borrowed = copy.copy(api)
    borrowed._http_options = api._http_options.model_copy(
        update={"httpx_async_client": http, "httpx_client": api._httpx_client}
    )
    borrowed._async_httpx_client = http
    borrowed._aiohttp_sessions = {}
    # Whether to rewrite googleapis.com URLs to their mTLS endpoints follows the TLS
    # context that is used, as the SDK decides it for each transport.
    borrowed._async_httpx_use_mtls_endpoint = api._use_mtls_endpoint(
        client_cert_loaded=sdk_api_client._has_client_cert(arguments.get("verify"))  # pyright: ignore[reportPrivateUsage]
    )
    return http, borrowed


async def fresh_credentials(api: Any) -> None:
    """Load and refresh the Google credentials ``api`` sends to Vertex AI, if it does and
    they need it, in a worker thread.

    The SDK does both itself through asyncio (its lock, ``asyncio.to_thread``), which trio
    lacks; done here first, the SDK finds the token fresh and only reads it, on any
    backend. The credentials are the ones the SDK would use: the client's own (the same
    object a refresh updates for every user of it), else the application default
    credentials, which are loaded once for ``api`` as the SDK would load them. A
    cancelled wait leaves the worker thread to finish on its own.

    Raises what google-auth raises (``GoogleAuthError``: a failed refresh, no default
    credentials), and :class:`ValueError` when the default credentials name no project
    and the client has none.
    """
    if not (api.vertexai and (api.project or api.location) and not api.api_key):
        return  # an API key, or a gateway that takes its auth in headers: no token
    if api._credentials is None:
        load = functools.partial(sdk_api_client.load_auth, project=api.project)
        credentials, project = await anyio.to_thread.run_sync(load, abandon_on_cancel=True)
        if api._credentials is None:
            api._credentials = credentials
        if not api.project:
            api.project = project
    credentials = api._credentials
    if credentials.expired or not credentials.token:
        refresh = sdk_api_client.refresh_auth
        await anyio.to_thread.run_sync(refresh, credentials, abandon_on_cancel=True)


def model_path(api: Any, model: str) -> str:
    """The model's resource path (``models/...``, ``publishers/google/models/...``).

    Raises:
        ValueError: not a model name the API takes.
    """
    return _transformers.t_model(api, model)


def build_request(api: Any, path: str, body: dict[str, Any]) -> Any:
    """The SDK's request for ``POST path`` with ``body`` (not sent).

    Raises:
        ValueError: the client cannot build it (an ephemeral token, no base URL...).
    """
    return api._build_request("post", path, body, None)


async def send(api: Any, http_request: Any) -> httpx2.Response:
    """Send ``http_request`` as a stream (auth, retries, status check): the open response.

    Raises what the SDK raises (``errors.APIError``, ``httpx2`` exceptions,
    ``GoogleAuthError``), and :class:`TypeError` if the response is not httpx2 (the
    transport was checked by :func:`transport_arguments`, so it would be an SDK change).
    """
    sent = await api._async_request(http_request=http_request, http_options=None, stream=True)
    http = sent.response_stream
    if not isinstance(http, httpx2.Response):
        raise TypeError(
            f"google-genai {SDK_VERSION} answered with a {type(http).__name__}, not httpx2"
        )
    return http


def client_arguments(
    options: genai_types.HttpOptions, *, vertexai: bool
) -> tuple[dict[str, Any], dict[str, Any]]:
    """The arguments of the sync and async httpx2 clients the SDK would build for
    ``options`` (its TLS rules, ``client_args`` and ``async_client_args``).

    Raises:
        TypeError, ValueError, OSError: the arguments are not ones httpx2 takes.
    """
    base: Any = sdk_api_client.BaseApiClient
    return base._ensure_httpx_ssl_ctx(
        options,
        vertexai=vertexai,
        client_cls=httpx2.Client,
        async_client_cls=httpx2.AsyncClient,
    )
