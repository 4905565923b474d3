"""The OpenAI adapter (Chat Completions or Responses API): the SDK sends, ai_chat decodes."""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping
from typing import Any, ClassVar, Final, Literal, TypeAlias

import openai

from ..._adapter import AbortSignal
from ..._errors import ConfigurationError
from ..._types import ChatRequest
from .._base.client import ClientAdapter
from .._base.sdk import Opening, Provider, check_defaults, check_model, sdk_response, stream_answer
from ._chat_events import ChatChunkMapper
from ._chat_request import ReasoningParts, chat_body
from ._errors import PROVIDER, TRANSLATED, provider_error
from ._responses_events import ResponsesEventMapper
from ._responses_request import responses_body

__all__ = ["OpenAIChatAdapter"]

API: TypeAlias = Literal["chat", "responses"]

_APIS: Final = '"chat" (Chat Completions) or "responses" (the Responses API)'
_API_NAMES: Final = {"chat": "Chat Completions", "responses": "the Responses API"}
_OPENAI: Final = Provider(PROVIDER, "x-request-id", TRANSLATED, provider_error)


class OpenAIChatAdapter(ClientAdapter[openai.AsyncOpenAI]):
    """Streams answers from OpenAI's Chat Completions or Responses API, or any
    OpenAI-compatible server.

    The official ``openai`` SDK builds, authenticates and sends the request and checks
    the status; the adapter reads the SSE body with ai_chat's bounded decoder and maps the
    chunks (Chat Completions) or events (Responses API) to ai_chat events. Point it at
    vLLM, Ollama, the llama.cpp server or another OpenAI-compatible server with
    ``base_url`` (``http://localhost:11434/v1`` for Ollama, for example, with any
    ``api_key`` the server accepts).

    With ``api="responses"`` reasoning items become reasoning parts (one per summary)
    whose events carry ``providerMetadata.openai.itemId`` (and
    ``reasoningEncryptedContent`` when the request includes
    ``"reasoning.encrypted_content"``); text parts and tool calls carry their item id
    too. Send those parts back unchanged in the history and they go out as the same
    output items, which reasoning models need across tool calls. With
    ``providerOptions.openai.store: false`` the API keeps no items: ask for
    ``include: ["reasoning.encrypted_content"]`` so that reasoning can travel in the
    history (message and call ids are then left out of requests).

    Args:
        client: an ``openai.AsyncOpenAI`` client (or a subclass such as
            ``AsyncAzureOpenAI``). It stays the caller's: the adapter never closes it.
            With ``None`` the adapter creates ``openai.AsyncOpenAI(**settings)``, which
            also reads ``OPENAI_API_KEY``, ``OPENAI_BASE_URL`` and friends, and owns it:
            close the adapter (:meth:`aclose` or ``async with``) to close that client.
        model: the model, unless a request's ``parameters.model`` names another.
        api: ``"chat"`` (the default: ``POST /chat/completions``) or ``"responses"``
            (``POST /responses``).
        parameters: default request parameters (the request vocabulary: ``temperature``,
            ``providerOptions``...; not ``toolChoice``, which depends on each request's
            tools). A request's own parameters override them; ``providerOptions.openai``
            is merged field by field.
        reasoning_parts: what to do with reasoning parts in assistant messages of the
            history that the API cannot take as input (Chat Completions: every one; the
            Responses API: those without ``providerMetadata.openai.itemId``, from another
            provider, say, and with ``providerOptions.openai.store: false`` those without
            ``reasoningEncryptedContent``): ``"error"`` (the default) raises
            :class:`~ai_chat.ValidationError`; ``"omit"`` leaves them out of the request.
        **settings: ``openai.AsyncOpenAI`` arguments (``api_key``, ``base_url``,
            ``organization``, ``timeout``, ``max_retries``...) when ``client`` is
            ``None``.

    Raises:
        ConfigurationError: an argument is invalid, settings were given with a client,
            or no API key was found for a client the adapter creates.

    The stream raises :class:`~ai_chat.ValidationError` (naming the JSON path) before
    any request for input the API cannot express (the Responses API has no
    ``stopSequences`` or ``seed``, for example), :class:`~ai_chat.ProviderError` when
    the provider fails (status, error type, request id, retry-after; also the Responses
    API's ``error`` and ``response.failed`` events, which the SDK itself lets pass),
    :class:`~ai_chat.TruncatedStreamError` when the answer is cut off before its
    ``finish_reason`` (Responses API: before ``response.completed`` or
    ``response.incomplete``), and passes the SSE decoder's
    :class:`~ai_chat.StreamFormatError` and :class:`~ai_chat.LimitExceededError` on.
    However the stream stops, the HTTP response is closed at once.
    """

    provider: ClassVar[str] = PROVIDER

    def __init__(
        self,
        client: openai.AsyncOpenAI | None = None,
        *,
        model: str,
        api: API = "chat",
        parameters: Mapping[str, object] | None = None,
        reasoning_parts: ReasoningParts = "error",
        **settings: Any,
    ) -> None:
        if api not in _API_NAMES:
            raise ConfigurationError("api", api, _APIS)
        self._api: API = api
        self._model = check_model(model)
        if reasoning_parts not in ("error", "omit"):
            raise ConfigurationError("reasoning_parts", reasoning_parts, '"error" or "omit"')
        self._reasoning_parts: ReasoningParts = reasoning_parts
        build = chat_body if api == "chat" else responses_body
        self._defaults = check_defaults(
            parameters,
            _API_NAMES[api],
            lambda request: build(
                request, model="-", parameters=request["parameters"], reasoning_parts="error"
            ),
        )
        self._adopt(
            client,
            openai.AsyncOpenAI,
            lambda: _create(settings),
            openai.AsyncOpenAI.close,
            settings=settings,
        )

    def __repr__(self) -> str:
        owner = "owned" if self._owns_client else "caller's"
        return f"OpenAIChatAdapter(model={self._model!r}, api={self._api!r}, {owner} client)"

    @property
    def api(self) -> API:
        """The API requests go to: ``"chat"`` or ``"responses"``."""
        return self._api

    @property
    def model(self) -> str:
        """The default model."""
        return self._model

    def stream(
        self, request: ChatRequest, signal: AbortSignal
    ) -> AsyncIterator[Mapping[str, object]]:
        """Stream one answer to ``request`` (see the class docstring for what it raises)."""
        return stream_answer(_OPENAI, self._defaults, self._open, request)

    def _open(self, request: ChatRequest, parameters: Mapping[str, object]) -> Opening:
        if self._api == "responses":
            return self._open_responses(request, parameters)
        body = chat_body(
            request,
            model=self._model,
            parameters=parameters,
            reasoning_parts=self._reasoning_parts,
        )
        model = body.pop("model")
        messages = body.pop("messages")
        del body["stream"]
        opening = self._client.chat.completions.with_streaming_response.create(
            model=model, messages=messages, stream=True, extra_body=body
        )
        return sdk_response(opening), ChatChunkMapper(PROVIDER)

    def _open_responses(self, request: ChatRequest, parameters: Mapping[str, object]) -> Opening:
        body = responses_body(
            request,
            model=self._model,
            parameters=parameters,
            reasoning_parts=self._reasoning_parts,
        )
        model = body.pop("model")
        items = body.pop("input")
        del body["stream"]
        opening = self._client.responses.with_streaming_response.create(
            model=model, input=items, stream=True, extra_body=body
        )
        return sdk_response(opening), ResponsesEventMapper(PROVIDER)


def _create(settings: Mapping[str, Any]) -> openai.AsyncOpenAI:
    try:
        return openai.AsyncOpenAI(**settings)
    except openai.OpenAIError as exc:
        raise ConfigurationError(
            "api_key", None, f"an API key: pass api_key=... or set OPENAI_API_KEY ({exc})"
        ) from exc
