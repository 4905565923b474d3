"""google-genai SDK and transport exceptions as :class:`~ai_chat.ProviderError`: the one place.

The SDK checks the status of the streaming response and raises ``errors.ClientError``
(4xx), ``errors.ServerError`` (5xx) or ``errors.APIError`` with Google's error object
(``{"error": {"code", "message", "status"}}``, ``status`` being the kind, such as
``RESOURCE_EXHAUSTED``). It does not wrap transport failures: a refused connection, a
timeout, and (once the adapter reads the body itself) a dropped or reset connection
surface as raw ``httpx2`` exceptions. All become one :class:`~ai_chat.ProviderError`
carrying status, error type, request id and retry-after, with the original as
``__cause__``. Cancellation is never caught here.

An error object *inside* a 200 stream (a ``data:`` line holding ``{"error": ...}``) is read
by the event mapper, which builds its :class:`~ai_chat.ProviderError` with
:func:`stream_error`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final, cast

import httpx2
from google.auth.exceptions import GoogleAuthError
from google.genai import errors

from ..._errors import ProviderError
from .._base.http import retry_after, shorten, status_error
from .._base.response import transport_error
from .._base.sdk import HTTPX2
from ._request import PROVIDER

__all__ = ["TRANSLATED", "provider_error", "stream_error"]

# What provider_error() translates; anything else is a bug and stays itself.
TRANSLATED: Final = (errors.APIError, httpx2.RequestError, GoogleAuthError)

_HINTS: Final = {
    400: "the provider rejected the request",
    401: "check the API key (api_key=... or GEMINI_API_KEY / GOOGLE_API_KEY)",
    403: "the key may not use this model or API (or it is restricted); check the key",
    404: "check the model name, the base_url and the api_version",
    408: "the provider timed out; retry",
    409: "a conflict at the provider; retry",
    413: "the request is too large",
    429: "rate limited or out of quota; wait, slow down, or check the plan",
    499: "the request was cancelled at the provider",
    503: "the model is overloaded or unavailable; retry later",
    504: "the provider timed out; retry, or ask for a shorter answer",
}


def provider_error(
    exc: errors.APIError | httpx2.RequestError | GoogleAuthError, request_id: str | None
) -> ProviderError:
    """The :class:`~ai_chat.ProviderError` for ``exc``; raise it ``from exc``.

    ``request_id`` is the answer's id when the failure came mid-stream.
    """
    if isinstance(exc, errors.APIError):
        return _status_error(exc, request_id)
    if isinstance(exc, GoogleAuthError):  # refreshing Vertex AI credentials failed
        return ProviderError(
            PROVIDER,
            shorten(
                f"could not get credentials for the request: {type(exc).__name__}: {exc}; "
                "check the Google credentials (or use an API key)"
            ),
        )
    if isinstance(exc, httpx2.ConnectTimeout | httpx2.PoolTimeout | httpx2.WriteTimeout):
        return ProviderError(
            PROVIDER,
            "the request timed out before a response came; retry, or raise the timeout "
            "(http_options={'timeout': milliseconds})",
        )
    return transport_error(PROVIDER, exc, request_id, HTTPX2)


def stream_error(body: Mapping[str, object], request_id: str | None) -> ProviderError:
    """An error object inside a 200 stream: ``{"error": {"code", "message", "status"}}``."""
    error = body.get("error")
    message: object = None
    kind: object = None
    code: object = None
    if isinstance(error, Mapping):
        details = cast("Mapping[str, object]", error)
        message = details.get("message")
        kind = details.get("status")
        code = details.get("code")
    if not isinstance(message, str) or not message:
        message = repr(dict(body))
    retryable = kind in ("INTERNAL", "UNAVAILABLE", "RESOURCE_EXHAUSTED", "DEADLINE_EXCEEDED")
    hint = "retry later" if retryable else "the answer failed"
    where = f" (code {code})" if type(code) is int else ""
    return ProviderError(
        PROVIDER,
        shorten(f"the provider reported an error in the stream{where}: {message} ({hint})"),
        error_type=kind if isinstance(kind, str) and kind else None,
        request_id=request_id,
    )


def _status_error(exc: errors.APIError, request_id: str | None) -> ProviderError:
    response = getattr(exc, "response", None)
    headers: Mapping[str, str] = {}
    if isinstance(response, httpx2.Response):
        headers = response.headers
    return status_error(
        PROVIDER,
        exc.code if type(exc.code) is int else None,
        exc.message,
        str(exc),
        _HINTS,
        error_type=exc.status,
        request_id=request_id,
        retry_after=_retry_delay(exc) if (seconds := retry_after(headers)) is None else seconds,
    )


def _retry_delay(exc: errors.APIError) -> float | None:
    """Google's ``RetryInfo`` detail (``"retryDelay": "7s"``), which 429s carry."""
    details = cast(object, exc.details)  # pyright: ignore[reportUnknownMemberType]
    if isinstance(details, Mapping):
        fields = cast("Mapping[str, object]", details)
        error = fields.get("error", fields)
        if isinstance(error, Mapping):
            details = cast("Mapping[str, object]", error).get("details")
    if not isinstance(details, list | tuple):
        return None
    for item in cast("list[object]", details):
        if isinstance(item, Mapping):
            delay = cast("Mapping[str, object]", item).get("retryDelay")
            if isinstance(delay, str) and delay.endswith("s"):
                try:
                    seconds = float(delay[:-1])
                except ValueError:
                    continue
                if seconds >= 0:
                    return seconds
    return None
