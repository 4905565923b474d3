"""The OpenAI Chat Completions adapter: the SDK sends, ai_chat decodes the stream."""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping
from typing import Any, Final, cast

import openai

from .._adapter import AbortSignal
from .._errors import ConfigurationError, LimitExceededError, ValidationError
from .._request import snapshot_request
from .._sse import SSEDecoder
from .._types import ChatRequest
from ..limits import FrozenDict, JSONLimits, freeze_json
from ._http import merge_parameters
from ._openai_chat_events import ChatChunkMapper
from ._openai_chat_request import ReasoningParts, chat_body
from ._openai_errors import PROVIDER, TRANSLATED, provider_error
from ._owned import OwnedClient
from ._response import drain, release

__all__ = ["OpenAIChatAdapter"]

_APIS: Final = "chat (responses is not supported yet)"


class OpenAIChatAdapter(OwnedClient[openai.AsyncOpenAI]):
    """Streams answers from OpenAI's Chat Completions API or any OpenAI-compatible server.

    The official ``openai`` SDK builds, authenticates and sends the request and checks
    the status; the adapter reads the SSE body with ai_chat's bounded decoder and maps the
    chunks to ai_chat events. Point it at vLLM, Ollama, the llama.cpp server or another
    OpenAI-compatible server with ``base_url`` (``http://localhost:11434/v1`` for Ollama,
    for example, with any ``api_key`` the server accepts).

    Args:
        client: an ``openai.AsyncOpenAI`` client (or a subclass such as
            ``AsyncAzureOpenAI``). It stays the caller's: the adapter never closes it.
            With ``None`` the adapter creates ``openai.AsyncOpenAI(**settings)``, which
            also reads ``OPENAI_API_KEY``, ``OPENAI_BASE_URL`` and friends, and owns it:
            close the adapter (:meth:`aclose` or ``async with``) to close that client.
        model: the model, unless a request's ``parameters.model`` names another.
        api: ``"chat"``; the Responses API is not supported yet.
        parameters: default request parameters (the request vocabulary: ``temperature``,
            ``providerOptions``...; not ``toolChoice``, which depends on each request's
            tools). A request's own parameters override them; ``providerOptions.openai``
            is merged field by field.
        reasoning_parts: what to do with reasoning parts in assistant messages of the
            history, which Chat Completions cannot take as input: ``"error"`` (the
            default) raises :class:`~ai_chat.ValidationError`; ``"omit"`` leaves them
            out of the request.
        **settings: ``openai.AsyncOpenAI`` arguments (``api_key``, ``base_url``,
            ``organization``, ``timeout``, ``max_retries``...) when ``client`` is
            ``None``.

    Raises:
        ConfigurationError: an argument is invalid, settings were given with a client,
            or no API key was found for a client the adapter creates.

    The stream raises :class:`~ai_chat.ValidationError` (naming the JSON path) before
    any request for input Chat Completions cannot express,
    :class:`~ai_chat.ProviderError` when the provider fails (status, error type, request
    id, retry-after), :class:`~ai_chat.TruncatedStreamError` when the answer is cut off
    before its ``finish_reason``, and passes the SSE decoder's
    :class:`~ai_chat.StreamFormatError` and :class:`~ai_chat.LimitExceededError` on.
    However the stream stops, the HTTP response is closed at once.
    """

    provider: Final = PROVIDER

    def __init__(
        self,
        client: openai.AsyncOpenAI | None = None,
        *,
        model: str,
        api: str = "chat",
        parameters: Mapping[str, object] | None = None,
        reasoning_parts: ReasoningParts = "error",
        **settings: Any,
    ) -> None:
        if api != "chat":
            raise ConfigurationError("api", api, _APIS)
        if type(model) is not str or not model:
            raise ConfigurationError("model", model, "a non-empty model name")
        if reasoning_parts not in ("error", "omit"):
            raise ConfigurationError("reasoning_parts", reasoning_parts, '"error" or "omit"')
        self._model = model
        self._reasoning_parts: ReasoningParts = reasoning_parts
        self._defaults = _default_parameters(parameters)
        if client is not None:
            if not isinstance(cast(object, client), openai.AsyncOpenAI):
                raise ConfigurationError(
                    "client", client, "an openai.AsyncOpenAI client (or None to create one)"
                )
            if settings:
                raise ConfigurationError(
                    "settings",
                    sorted(settings),
                    "no client settings when a client is passed (configure that client)",
                )
            self._client = client
            self._owns_client = False
        else:
            try:
                self._client = openai.AsyncOpenAI(**settings)
            except openai.OpenAIError as exc:
                raise ConfigurationError(
                    "api_key", None, f"an API key: pass api_key=... or set OPENAI_API_KEY ({exc})"
                ) from exc
            self._owns_client = True

    def __repr__(self) -> str:
        owner = "owned" if self._owns_client else "caller's"
        return f"OpenAIChatAdapter(model={self._model!r}, api='chat', {owner} client)"

    async def stream(
        self, request: ChatRequest, signal: AbortSignal
    ) -> AsyncIterator[Mapping[str, object]]:
        """Stream one answer to ``request`` (see the class docstring for what it raises)."""
        parameters = merge_parameters(self._defaults, request["parameters"], PROVIDER)
        body = chat_body(
            request,
            model=self._model,
            parameters=parameters,
            reasoning_parts=self._reasoning_parts,
        )
        model = body.pop("model")
        messages = body.pop("messages")
        del body["stream"]
        mapper = ChatChunkMapper(PROVIDER)
        events: list[dict[str, Any]] = []
        try:
            async with self._client.chat.completions.with_streaming_response.create(
                model=model, messages=messages, stream=True, extra_body=body
            ) as response:
                http = response.http_response
                mapper.request_id = http.headers.get("x-request-id")
                chunks = http.aiter_bytes()
                try:
                    decoder = SSEDecoder()
                    async for chunk in chunks:
                        for sse in decoder.feed(chunk):
                            mapper.feed(sse.data, events)
                            if mapper.done:
                                break
                        if mapper.done:
                            break
                        if events:
                            for event in events:
                                yield event
                            events.clear()
                    else:
                        for sse in decoder.close():
                            mapper.feed(sse.data, events)
                    if mapper.done:
                        await drain(chunks)
                finally:
                    await release(chunks, http)
        except TRANSLATED as exc:
            raise provider_error(exc, mapper.request_id) from exc
        mapper.finish(events)
        for event in events:
            yield event


def _default_parameters(parameters: Mapping[str, object] | None) -> Mapping[str, object]:
    if parameters is None:
        return FrozenDict()
    try:
        frozen = freeze_json(parameters, root="parameters")
        if type(frozen) is not FrozenDict:
            raise ValidationError("parameters", "expected an object of request parameters")
        if "toolChoice" in frozen:
            raise ValidationError(
                "parameters.toolChoice",
                "not a default: it depends on each request's tools; set it per request",
            )
        # The checks a request's parameters get, then the adapter's own mapping.
        shell: dict[str, object] = {"messages": [], "parameters": frozen}
        request = snapshot_request(shell, JSONLimits())
        chat_body(request, model="-", parameters=request["parameters"], reasoning_parts="error")
    except (ValidationError, LimitExceededError) as exc:
        raise ConfigurationError(
            "parameters", parameters, f"request parameters Chat Completions accepts ({exc})"
        ) from exc
    return cast("Mapping[str, object]", frozen)
