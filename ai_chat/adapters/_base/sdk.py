"""The skeleton every SDK-based provider adapter shares: the SDK sends, ai_chat decodes.

A provider adapter (a :class:`~.client.ClientAdapter` over its SDK's client) supplies the
provider's parts and calls :func:`stream_answer` from its ``stream`` method:

* an ``open`` function that builds the provider's request body (raising
  :class:`~ai_chat.ValidationError` for input the provider cannot express, before any
  I/O) and returns an async context manager that sends it through the SDK and yields the
  streaming ``httpx2.Response`` once the SDK has checked the status, plus a fresh
  :class:`StreamMapper` for the answer;
* a :class:`Provider`: its name, the header carrying its request id, and how its SDK's
  and transport's exceptions become :class:`~ai_chat.ProviderError`.

The skeleton owns what is the same everywhere: the checks of the model and the default
parameters (:func:`check_model`, :func:`check_defaults`), the bounded SSE decoding, the
hand-over of events in batches, the drain after the terminal event, the release of the
response on every way out, and the translation of failures. Imported only by the
provider modules, which need their SDK (and so httpx2).
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, Callable, Mapping
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from dataclasses import dataclass
from typing import Any, Final, Protocol, TypeAlias, cast

import httpx2

from ..._errors import ConfigurationError, LimitExceededError, ProviderError, ValidationError
from ..._request import snapshot_request
from ..._sse import SSEDecoder
from ..._types import ChatRequest
from ...limits import FrozenDict, JSONLimits, freeze_json
from .http import merge_parameters
from .response import TransportErrors, drain, release
from .stream_mapping import Event

__all__ = [
    "HTTPX2",
    "Event",
    "Opening",
    "Provider",
    "StreamMapper",
    "check_defaults",
    "check_model",
    "sdk_response",
    "stream_answer",
]

HTTPX2: Final = TransportErrors.of(httpx2)
"""httpx2's exception classes, the transport every provider SDK here sends through."""


class StreamMapper(Protocol):
    """A provider's sans-IO stream mapper: SSE events in, ai_chat events out."""

    request_id: str | None

    @property
    def done(self) -> bool:
        """Whether the provider's terminal signal arrived (stop feeding then)."""
        ...

    def feed(self, name: str, data: str, out: list[Event]) -> None:
        """Map one SSE event (its ``event`` name and ``data``), appending to ``out``."""
        ...

    def finish(self, out: list[Event]) -> None:
        """Append the closing events, or raise if the answer was cut off."""
        ...


Opening: TypeAlias = tuple[AbstractAsyncContextManager[httpx2.Response], StreamMapper]
"""A request on its way (not yet entered) and the mapper for its answer."""


@dataclass(frozen=True, slots=True)
class Provider:
    """What the skeleton needs to know of one provider.

    ``name`` names it in errors and under ``providerOptions``; ``request_id_header`` is
    the response header carrying its request id; ``error(exc, request_id)`` turns each
    exception of the ``translated`` classes into :class:`~ai_chat.ProviderError`
    (anything else is a bug and stays itself).
    """

    name: str
    request_id_header: str
    translated: tuple[type[BaseException], ...]
    error: Callable[[Any, str | None], ProviderError]


@asynccontextmanager
async def sdk_response(
    opening: AbstractAsyncContextManager[Any],
) -> AsyncGenerator[httpx2.Response]:
    """The ``httpx2.Response`` inside an SDK's ``with_streaming_response`` context."""
    async with opening as response:
        yield cast(httpx2.Response, response.http_response)


def check_model(model: object) -> str:
    """The default model: a non-empty ``str``, or :class:`~ai_chat.ConfigurationError`."""
    if type(model) is not str or not model:
        raise ConfigurationError("model", model, "a non-empty model name")
    return model


def check_defaults(
    parameters: Mapping[str, object] | None,
    api: str,
    check: Callable[[ChatRequest], object],
) -> Mapping[str, object]:
    """Default parameters, validated once as a request's would be, then by ``check`` (the
    provider's body builder for a request carrying them); frozen.

    Raises:
        ConfigurationError: they are not request parameters ``api`` accepts (or name a
            ``toolChoice``, which depends on each request's tools).
    """
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
        shell: dict[str, object] = {"messages": [], "parameters": frozen}
        check(snapshot_request(shell, JSONLimits()))
    except (ValidationError, LimitExceededError) as exc:
        raise ConfigurationError(
            "parameters", parameters, f"request parameters {api} accepts ({exc})"
        ) from exc
    return cast("Mapping[str, object]", frozen)


async def stream_answer(
    provider: Provider,
    defaults: Mapping[str, object],
    open_answer: Callable[[ChatRequest, Mapping[str, object]], Opening],
    request: ChatRequest,
) -> AsyncGenerator[Event]:
    """Stream one answer to ``request``: ``open_answer(request, parameters)`` (the
    request's parameters over ``defaults``) sends it, and the SSE body is decoded and
    mapped here. However the stream stops, the HTTP response is closed at once.

    Raises what ``open_answer`` raises before any I/O, :class:`~ai_chat.ProviderError`
    (``provider.error``) for the translated exceptions, what the mapper raises (a
    truncated answer, an error inside the stream), and the SSE decoder's
    :class:`~ai_chat.StreamFormatError` and :class:`~ai_chat.LimitExceededError`.
    """
    parameters = merge_parameters(defaults, request["parameters"], provider.name)
    opening, mapper = open_answer(request, parameters)
    events: list[Event] = []
    try:
        async with opening as http:
            mapper.request_id = http.headers.get(provider.request_id_header)
            chunks = http.aiter_bytes()
            try:
                decoder = SSEDecoder()
                async for chunk in chunks:
                    for sse in decoder.feed(chunk):
                        mapper.feed(sse.event, sse.data, events)
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
                        mapper.feed(sse.event, sse.data, events)
                        if mapper.done:
                            break
                if mapper.done:
                    await drain(chunks, HTTPX2)
            finally:
                await release(http, chunks)
    except provider.translated as exc:
        raise provider.error(exc, mapper.request_id) from exc
    mapper.finish(events)
    for event in events:
        yield event
