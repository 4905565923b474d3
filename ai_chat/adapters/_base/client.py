"""The one helper base of the adapters: a client the adapter may own, and closing it."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from typing import Generic, Self, TypeVar

from ..._errors import ConfigurationError

__all__ = ["ClientAdapter"]

ClientT = TypeVar("ClientT")

_NO_SETTINGS: Mapping[str, object] = {}


class ClientAdapter(Generic[ClientT]):
    """The client an adapter sends through, which it closes only if it created it.

    Being an adapter needs no base class (:class:`~ai_chat.AIChatAdapter` is a protocol:
    a ``stream`` method); this is the only one the adapters have, and it holds the
    ownership rule: a caller's client stays the caller's, one the adapter created is
    closed by :meth:`aclose` or by leaving ``async with``. A subclass calls
    :meth:`_adopt` once, in its constructor.
    """

    _client: ClientT
    _owns_client: bool
    _close_client: Callable[[ClientT], Awaitable[object]]

    @property
    def client(self) -> ClientT:
        """The client requests go through."""
        return self._client

    def _adopt(
        self,
        client: object,
        kind: type[ClientT],
        create: Callable[[], ClientT],
        close: Callable[[ClientT], Awaitable[object]],
        *,
        settings: Mapping[str, object] = _NO_SETTINGS,
        expected: str | None = None,
    ) -> None:
        """Keep the caller's ``client`` (checked to be a ``kind``), or, when it is ``None``,
        ``create`` one (from ``settings``) and own it: :meth:`aclose` then awaits
        ``close(client)``.

        Raises:
            ConfigurationError: ``client`` is not a ``kind`` (``expected`` describes one:
                by default "a <kind> client"), or ``settings`` were given with a client;
                whatever ``create`` raises for settings the client refuses.
        """
        if client is None:
            self._client = create()
            self._owns_client = True
            self._close_client = close
            return
        if not isinstance(client, kind):
            wanted = expected or f"a {kind.__name__} client"
            raise ConfigurationError("client", client, f"{wanted} (or None to create one)")
        if settings:
            raise ConfigurationError(
                "settings",
                sorted(settings),
                "no client settings when a client is passed (configure that client)",
            )
        self._client = client
        self._owns_client = False
        self._close_client = close

    async def aclose(self) -> None:
        """Close the client if the adapter created it; a caller's client is left open."""
        if self._owns_client:
            await self._close_client(self._client)

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()
