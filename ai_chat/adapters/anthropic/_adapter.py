"""The Anthropic Messages adapter: the SDK sends, ai_chat decodes the stream."""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping
from typing import Any, ClassVar, Final, cast

import anthropic

from ..._adapter import AbortSignal
from ..._errors import ConfigurationError
from ..._types import ChatRequest
from .._base.client import ClientAdapter
from .._base.sdk import Opening, Provider, check_defaults, check_model, sdk_response, stream_answer
from ._errors import PROVIDER, TRANSLATED, provider_error
from ._events import MessagesEventMapper
from ._request import ReasoningParts, messages_body

__all__ = ["AnthropicChatAdapter"]

_ANTHROPIC: Final = Provider(PROVIDER, "request-id", TRANSLATED, provider_error)


class AnthropicChatAdapter(ClientAdapter[anthropic.AsyncAnthropic]):
    """Streams answers from Anthropic's Messages API.

    The official ``anthropic`` SDK builds, authenticates and sends the request and checks
    the status; the adapter reads the SSE body with ai_chat's bounded decoder and maps the
    events to ai_chat events. Thinking blocks become reasoning parts whose
    ``reasoning-end`` carries ``providerMetadata.anthropic.signature`` (redacted thinking:
    ``providerMetadata.anthropic.redactedData``); send those parts back unchanged in the
    history and they go out as the signed blocks Anthropic requires for multi-turn tool
    use with thinking.

    Args:
        client: an ``anthropic.AsyncAnthropic`` client. It stays the caller's: the adapter
            never closes it. With ``None`` the adapter creates
            ``anthropic.AsyncAnthropic(**settings)``, which also reads
            ``ANTHROPIC_API_KEY``, ``ANTHROPIC_BASE_URL`` and friends, and owns it: close
            the adapter (:meth:`aclose` or ``async with``) to close that client.
        model: the model, unless a request's ``parameters.model`` names another.
        parameters: default request parameters (the request vocabulary: ``temperature``,
            ``maxOutputTokens``, ``providerOptions``...; not ``toolChoice``, which depends
            on each request's tools). A request's own parameters override them;
            ``providerOptions.anthropic`` is merged field by field. Anthropic requires
            ``max_tokens``: without ``maxOutputTokens`` it is
            :data:`~ai_chat.adapters.anthropic.DEFAULT_MAX_TOKENS` (4096).
        reasoning_parts: what to do with reasoning parts in the history that carry no
            Anthropic signature (from another provider, say), which Anthropic cannot
            take: ``"error"`` (the default) raises :class:`~ai_chat.ValidationError`;
            ``"omit"`` leaves them out of the request. Signed ones are always sent.
        **settings: ``anthropic.AsyncAnthropic`` arguments (``api_key``, ``base_url``
            without ``/v1``, ``timeout``, ``max_retries``...) when ``client`` is ``None``.

    Raises:
        ConfigurationError: an argument is invalid, settings were given with a client, the
            SDK refused the settings, or it found no credentials for a client the adapter
            creates.

    The stream raises :class:`~ai_chat.ValidationError` (naming the JSON path) before any
    request for input the Messages API cannot express (a ``seed``, say),
    :class:`~ai_chat.ProviderError` when the provider fails (status, error type, request
    id, retry-after; an ``event: error`` inside the stream, such as
    ``overloaded_error``, too), :class:`~ai_chat.TruncatedStreamError` when the answer is
    cut off before ``message_stop``, and passes the SSE decoder's
    :class:`~ai_chat.StreamFormatError` and :class:`~ai_chat.LimitExceededError` on.
    However the stream stops, the HTTP response is closed at once.
    """

    provider: ClassVar[str] = PROVIDER

    def __init__(
        self,
        client: anthropic.AsyncAnthropic | None = None,
        *,
        model: str,
        parameters: Mapping[str, object] | None = None,
        reasoning_parts: ReasoningParts = "error",
        **settings: Any,
    ) -> None:
        self._model = check_model(model)
        if reasoning_parts not in ("error", "omit"):
            raise ConfigurationError("reasoning_parts", reasoning_parts, '"error" or "omit"')
        self._reasoning_parts: ReasoningParts = reasoning_parts
        self._defaults = check_defaults(
            parameters,
            "Anthropic Messages",
            lambda request: messages_body(
                request, model="-", parameters=request["parameters"], reasoning_parts="error"
            ),
        )
        self._adopt(
            client,
            anthropic.AsyncAnthropic,
            lambda: _create(settings),
            anthropic.AsyncAnthropic.close,
            settings=settings,
        )

    def __repr__(self) -> str:
        owner = "owned" if self._owns_client else "caller's"
        return f"AnthropicChatAdapter(model={self._model!r}, {owner} client)"

    @property
    def model(self) -> str:
        """The default model."""
        return self._model

    def stream(
        self, request: ChatRequest, signal: AbortSignal
    ) -> AsyncIterator[Mapping[str, object]]:
        """Stream one answer to ``request`` (see the class docstring for what it raises)."""
        return stream_answer(_ANTHROPIC, self._defaults, self._open, request)

    def _open(self, request: ChatRequest, parameters: Mapping[str, object]) -> Opening:
        body = messages_body(
            request,
            model=self._model,
            parameters=parameters,
            reasoning_parts=self._reasoning_parts,
        )
        model = body.pop("model")
        messages = body.pop("messages")
        max_tokens = body.pop("max_tokens")
        del body["stream"]
        create = cast(Any, self._client.messages.with_streaming_response.create)
        opening = create(
            model=model, messages=messages, max_tokens=max_tokens, stream=True, extra_body=body
        )
        return sdk_response(opening), MessagesEventMapper(PROVIDER)


def _create(settings: Mapping[str, Any]) -> anthropic.AsyncAnthropic:
    try:
        client = anthropic.AsyncAnthropic(**settings)
    except anthropic.CredentialsError as exc:
        raise ConfigurationError(
            "api_key",
            None,
            f"an API key: pass api_key=... or set ANTHROPIC_API_KEY ({exc})",
        ) from exc
    except anthropic.AnthropicError as exc:
        raise ConfigurationError(
            "settings",
            sorted(settings),
            f"settings anthropic.AsyncAnthropic accepts ({exc})",
        ) from exc
    if not _has_credentials(client):
        raise ConfigurationError(
            "api_key",
            None,
            "an API key: pass api_key=... or set ANTHROPIC_API_KEY (or "
            "ANTHROPIC_AUTH_TOKEN, or an Anthropic credentials profile)",
        )
    return client


def _has_credentials(client: anthropic.AsyncAnthropic) -> bool:
    """Whether the SDK found any way to authenticate (it would only fail on the first
    request, with a ``TypeError``): a key, a token, a credentials provider (profiles,
    workload identity...), or an authentication header of its own."""
    if client.api_key or client.auth_token:
        return True
    if getattr(client, "_token_cache", None) is not None:
        return True
    headers = {name.lower() for name in client.default_headers}
    return bool(headers & {"authorization", "x-api-key"})
