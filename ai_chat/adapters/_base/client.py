"""What the adapters share: a client they may own, and its closing."""

from __future__ import annotations

from typing import Generic, Protocol, TypeVar

from ..._closing import AsyncClosing

__all__ = ["ClientOwner", "Closable", "OwnedClient"]


class Closable(Protocol):
    async def close(self) -> None: ...


_Client = TypeVar("_Client", bound=Closable)


class ClientOwner(AsyncClosing):
    """``aclose()`` and ``async with`` for an adapter that may own its client: the
    client is closed (by :meth:`_close_client`) only if the adapter created it."""

    _owns_client: bool

    async def _close_client(self) -> None:
        raise NotImplementedError

    async def aclose(self) -> None:
        """Close the client if the adapter created it; a caller's client is left open."""
        if self._owns_client:
            await self._close_client()


class OwnedClient(ClientOwner, Generic[_Client]):
    """An adapter's SDK client and default model; closes the client only if it owns it."""

    _client: _Client
    _model: str

    @property
    def client(self) -> _Client:
        """The SDK client requests go through."""
        return self._client

    @property
    def model(self) -> str:
        """The default model."""
        return self._model

    async def _close_client(self) -> None:
        await self._client.close()
