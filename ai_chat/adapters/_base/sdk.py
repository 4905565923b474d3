"""The skeleton every SDK-based provider adapter shares: the SDK sends, ai_chat decodes.

A provider adapter subclasses :class:`SDKAdapter` and supplies the provider's parts:

* ``_open(request, parameters)`` builds the provider's request body (raising
  :class:`~ai_chat.ValidationError` for input the provider cannot express, before any
  I/O) and returns an async context manager that sends it through the SDK and yields the
  streaming ``httpx2.Response`` once the SDK has checked the status, plus a fresh
  :class:`StreamMapper` for the answer;
* ``_provider_error(exc, request_id)`` turns an SDK or transport exception into
  :class:`~ai_chat.ProviderError` (the exception classes listed in ``_translated``).

The skeleton owns what is the same everywhere: the defaults, the client checks and
ownership, the bounded SSE decoding, the hand-over of events in batches, the drain after
the terminal event, the release of the response on every way out, and the translation of
failures. Imported only by the provider modules, which need their SDK (and so httpx2).
"""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import AsyncGenerator, AsyncIterator, Callable, Mapping
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from typing import Any, ClassVar, Protocol, TypeVar, cast

import httpx2

from ..._adapter import AbortSignal
from ..._errors import ConfigurationError, LimitExceededError, ProviderError, ValidationError
from ..._request import snapshot_request
from ..._sse import SSEDecoder
from ..._types import ChatRequest
from ...limits import FrozenDict, JSONLimits, freeze_json
from .client import Closable, OwnedClient
from .http import merge_parameters
from .response import drain, release

__all__ = ["Event", "SDKAdapter", "StreamMapper", "sdk_response"]

Event = dict[str, Any]


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


@asynccontextmanager
async def sdk_response(
    opening: AbstractAsyncContextManager[Any],
) -> AsyncGenerator[httpx2.Response]:
    """The ``httpx2.Response`` inside an SDK's ``with_streaming_response`` context."""
    async with opening as response:
        yield cast(httpx2.Response, response.http_response)


ClientT = TypeVar("ClientT", bound=Closable)


class SDKAdapter(OwnedClient[ClientT]):
    """An adapter whose provider SDK sends the request and whose body ai_chat decodes."""

    provider: ClassVar[str]
    # The response header carrying the provider's request id.
    _request_id_header: ClassVar[str]
    # What _provider_error translates; anything else is a bug and stays itself.
    _translated: ClassVar[tuple[type[BaseException], ...]]

    _defaults: Mapping[str, object]

    @abstractmethod
    def _open(
        self, request: ChatRequest, parameters: Mapping[str, object]
    ) -> tuple[AbstractAsyncContextManager[httpx2.Response], StreamMapper]:
        """The request on its way (not yet entered) and the mapper for its answer."""

    @abstractmethod
    def _provider_error(self, exc: BaseException, request_id: str | None) -> ProviderError:
        """The :class:`~ai_chat.ProviderError` for a translated exception."""

    def _check_model(self, model: object) -> None:
        if type(model) is not str or not model:
            raise ConfigurationError("model", model, "a non-empty model name")
        self._model = model

    def _adopt(
        self,
        client: object,
        settings: Mapping[str, object],
        kind: type[ClientT],
        create: Callable[[], ClientT],
    ) -> None:
        """Keep the caller's ``client`` (checked), or create one from ``settings`` and own it.

        ``create`` raises :class:`~ai_chat.ConfigurationError` for settings the SDK refuses.
        """
        if client is None:
            self._client = create()
            self._owns_client = True
            return
        if not isinstance(client, kind):
            raise ConfigurationError(
                "client",
                client,
                f"a {kind.__name__} client (or None to create one)",
            )
        if settings:
            raise ConfigurationError(
                "settings",
                sorted(settings),
                "no client settings when a client is passed (configure that client)",
            )
        self._client = client
        self._owns_client = False

    def _set_defaults(
        self,
        parameters: Mapping[str, object] | None,
        api: str,
        check: Callable[[ChatRequest], object],
    ) -> None:
        """Validate default parameters once, as a request's would be, then by ``check``
        (the provider's body builder for a request carrying them)."""
        if parameters is None:
            self._defaults = FrozenDict()
            return
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
        self._defaults = cast("Mapping[str, object]", frozen)

    async def stream(
        self, request: ChatRequest, signal: AbortSignal
    ) -> AsyncIterator[Mapping[str, object]]:
        """Stream one answer to ``request`` (see the class docstring for what it raises)."""
        parameters = merge_parameters(self._defaults, request["parameters"], self.provider)
        opening, mapper = self._open(request, parameters)
        events: list[Event] = []
        try:
            async with opening as http:
                mapper.request_id = http.headers.get(self._request_id_header)
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
                        await drain(chunks)
                finally:
                    await release(chunks, http)
        except self._translated as exc:
            raise self._provider_error(exc, mapper.request_id) from exc
        mapper.finish(events)
        for event in events:
            yield event
