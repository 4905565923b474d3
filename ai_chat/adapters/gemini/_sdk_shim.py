"""Every use of google-genai's private API, in one place.

google-genai has no raw streaming-response API like openai's and anthropic's
``with_streaming_response``, and its own stream does not release the connection on
``aclose()`` (its generators form a reference cycle; measured in the provider notes).
So the adapter goes one level down, to the SDK's API client, the layer every
``client.aio.models`` call goes through:

* ``Client._api_client``: that API client (a ``BaseApiClient``);
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
* ``BaseApiClient._use_aiohttp()``, ``._async_httpx_client`` and the ``_per_loop`` flag
  of the SDK's per-event-loop client, to tell whether the transport is one the adapter
  can read and close on any anyio backend: :func:`api_client`.

The google-genai versions the ``gemini`` extra allows are tested against these
(``tests/adapters/gemini/test_sdk_shim.py`` fails naming the installed version when one
moves), and :func:`api_client` checks them on every adapter's construction.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping
from typing import Any, Final

import google.genai
import httpx2
from google.genai import _api_client as sdk_api_client
from google.genai import _transformers
from google.genai import types as genai_types

from ..._errors import ConfigurationError

__all__ = [
    "SDK_VERSION",
    "api_client",
    "build_request",
    "client_arguments",
    "missing",
    "model_path",
    "send",
]

SDK_VERSION: Final[str] = google.genai.__version__

_HTTPX2_CLIENT: Final = (
    "genai.Client(..., http_options=types.HttpOptions("
    "httpx_async_client=httpx2.AsyncClient())) "
    "(close that httpx2 client yourself)"
)

# The private methods used, and the parameters each call passes.
_METHODS: Final[Mapping[str, tuple[str, ...]]] = {
    "_build_request": ("http_method", "path", "request_dict", "http_options"),
    "_async_request": ("http_request", "http_options", "stream"),
    "_use_aiohttp": (),
    "_ensure_httpx_ssl_ctx": ("options", "vertexai", "client_cls", "async_client_cls"),
}


def missing() -> list[str]:
    """What of the private API this module uses the installed SDK lacks (empty: all there).

    Checked: each private method and the parameters the calls pass, ``t_model``'s
    parameters, the ``response_stream`` of the SDK's ``HttpResponse``, and the
    ``_async_httpx_client`` and ``_per_loop`` attributes the transport check reads.
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
    if "_async_httpx_client" not in _source(base.__init__):
        found.append("BaseApiClient._async_httpx_client")
    per_loop: Any = getattr(sdk_api_client, "_PerLoopAsyncClientMixin", None)
    if per_loop is not None and "self._per_loop" not in _source(per_loop):
        found.append("_PerLoopAsyncClientMixin._per_loop")
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
    """The SDK's API client behind ``client``, checked for what the adapter uses.

    Raises:
        ConfigurationError: the installed SDK lacks a private method the adapter calls,
            or the client's async transport is not an httpx2 client the adapter can read
            and close on any anyio backend (aiohttp, or the SDK's per-event-loop pool).
    """
    api = getattr(client, "_api_client", None)
    if api is None or not all(
        callable(getattr(api, name, None))
        for name in ("_build_request", "_async_request", "_use_aiohttp")
    ):
        raise ConfigurationError(
            "client",
            client,
            "a google-genai version the gemini extra supports (its API client changed; "
            f"installed: google-genai {SDK_VERSION})",
        )
    transport = getattr(api, "_async_httpx_client", None)
    if (
        api._use_aiohttp()
        or not isinstance(transport, httpx2.AsyncClient)
        or getattr(transport, "_per_loop", False)
    ):
        raise ConfigurationError(
            "client",
            client,
            "a genai.Client with an httpx2 async transport the adapter can read and close "
            f"on any anyio backend: {_HTTPX2_CLIENT}",
        )
    return api


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
    transport was checked by :func:`api_client`, so it would be an SDK change).
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
