"""OpenAI SDK and transport exceptions as :class:`~ai_chat.ProviderError`: the one place.

The SDK raises its own classes for what happens before the body streams (an error
status, a refused connection, a timeout); once the adapter reads the body itself, a
dropped or reset connection surfaces as a raw ``httpx2`` exception. Both become one
:class:`~ai_chat.ProviderError` carrying status, error type, request id and
retry-after, with the original as ``__cause__``. Cancellation is never caught here.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final, cast

import httpx2
import openai

from ..._errors import ProviderError
from .._base.http import retry_after, shorten, status_error
from .._base.response import timeout_error, transport_error, unreachable_error
from .._base.sdk import HTTPX2

__all__ = ["PROVIDER", "TRANSLATED", "provider_error"]

PROVIDER: Final = "openai"

# What provider_error() translates; anything else is a bug and stays itself.
TRANSLATED: Final = (openai.APIError, httpx2.RequestError)

_HINTS: Final = {
    400: "the provider rejected the request",
    401: "check the API key (api_key=... or OPENAI_API_KEY)",
    403: "the key may not use this model or endpoint",
    404: "check the model name and the base_url",
    408: "the provider timed out; retry",
    409: "a conflict at the provider; retry",
    422: "the provider could not process the request",
    429: "rate limited or out of quota; wait, slow down, or check the plan",
}


def provider_error(
    exc: openai.APIError | httpx2.RequestError, request_id: str | None
) -> ProviderError:
    """The :class:`~ai_chat.ProviderError` for ``exc``; raise it ``from exc``.

    ``request_id`` is the response's ``x-request-id`` when the failure came mid-stream.
    """
    if isinstance(exc, openai.APIStatusError):
        return _status_error(exc)
    if isinstance(exc, openai.APITimeoutError):
        return timeout_error(PROVIDER)
    if isinstance(exc, openai.APIConnectionError):
        return unreachable_error(PROVIDER, exc.request.url, exc.__cause__)
    if isinstance(exc, openai.APIError):
        return ProviderError(
            PROVIDER,
            shorten(exc.message),
            error_type=exc.type or exc.code,
            request_id=request_id,
        )
    return transport_error(PROVIDER, exc, request_id, HTTPX2)


def _status_error(exc: openai.APIStatusError) -> ProviderError:
    status = exc.status_code
    body = exc.body
    message: object = None
    error_type: object = None
    if isinstance(body, Mapping):
        error = cast("Mapping[str, object]", body)
        message = error.get("message")
        error_type = error.get("type") or error.get("code")
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
