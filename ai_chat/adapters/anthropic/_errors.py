"""Anthropic SDK and transport exceptions as :class:`~ai_chat.ProviderError`: the one place.

The SDK raises its own classes for what happens before the body streams (an error
status, a refused connection, a timeout, missing credentials); once the adapter reads the
body itself, a dropped or reset connection surfaces as a raw ``httpx2`` exception (the
anthropic SDK does not wrap those even in its own iteration). Both become one
:class:`~ai_chat.ProviderError` carrying status, error type, request id and
retry-after, with the original as ``__cause__``. Cancellation is never caught here.

An error *inside* a 200 stream (``event: error``, for example ``overloaded_error``) is
read by the event mapper, which builds its :class:`~ai_chat.ProviderError` with
:func:`stream_error`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final, cast

import anthropic
import httpx2

from ..._errors import ProviderError
from .._base.http import retry_after, shorten, status_error
from .._base.response import timeout_error, transport_error, unreachable_error
from .._base.sdk import HTTPX2

__all__ = ["PROVIDER", "TRANSLATED", "provider_error", "stream_error"]

PROVIDER: Final = "anthropic"

# What provider_error() translates; anything else is a bug and stays itself.
TRANSLATED: Final = (anthropic.APIError, anthropic.CredentialsError, httpx2.RequestError)

_HINTS: Final = {
    400: "the provider rejected the request",
    401: "check the API key (api_key=... or ANTHROPIC_API_KEY)",
    403: "the key may not use this model or endpoint",
    404: "check the model name and the base_url (without /v1)",
    408: "the provider timed out; retry",
    409: "a conflict at the provider; retry",
    413: "the request is too large",
    422: "the provider could not process the request",
    429: "rate limited or out of quota; wait, slow down, or check the plan",
    529: "Anthropic is overloaded; retry later",
}


def provider_error(
    exc: anthropic.APIError | anthropic.CredentialsError | httpx2.RequestError,
    request_id: str | None,
) -> ProviderError:
    """The :class:`~ai_chat.ProviderError` for ``exc``; raise it ``from exc``.

    ``request_id`` is the response's ``request-id`` when the failure came mid-stream.
    """
    if isinstance(exc, anthropic.APIStatusError):
        return _status_error(exc)
    if isinstance(exc, anthropic.APITimeoutError):
        return timeout_error(PROVIDER)
    if isinstance(exc, anthropic.APIConnectionError):
        return unreachable_error(PROVIDER, exc.request.url, exc.__cause__)
    if isinstance(exc, anthropic.CredentialsError):
        return ProviderError(
            PROVIDER,
            shorten(f"no usable credentials ({exc}); pass api_key=... or set ANTHROPIC_API_KEY"),
        )
    if isinstance(exc, anthropic.APIError):
        return ProviderError(PROVIDER, shorten(exc.message), request_id=request_id)
    return transport_error(PROVIDER, exc, request_id, HTTPX2)


def stream_error(body: object, request_id: str | None) -> ProviderError:
    """An ``event: error`` inside a 200 stream: ``{"type": "error", "error": {...}}``."""
    fields: Mapping[str, object] = (
        cast("Mapping[str, object]", body) if isinstance(body, Mapping) else {}
    )
    error = fields.get("error")
    message: object = None
    error_type: object = None
    if isinstance(error, Mapping):
        details = cast("Mapping[str, object]", error)
        message = details.get("message")
        error_type = details.get("type")
    own_id = fields.get("request_id")
    if isinstance(own_id, str) and own_id:
        request_id = own_id
    if not isinstance(message, str) or not message:
        message = repr(dict(fields)) if fields else repr(cast(object, body))
    hint = "retry later" if error_type in ("overloaded_error", "api_error") else "retry the request"
    return ProviderError(
        PROVIDER,
        shorten(f"the provider reported an error in the stream: {message} ({hint})"),
        error_type=error_type if isinstance(error_type, str) else None,
        request_id=request_id,
    )


def _status_error(exc: anthropic.APIStatusError) -> ProviderError:
    status = exc.status_code
    message: object = exc.api_message
    error_type: object = exc.type
    return status_error(
        PROVIDER,
        status,
        message,
        exc.message,
        _HINTS,
        error_type=error_type,
        request_id=exc.request_id,
        retry_after=retry_after(exc.response.headers),
    )
