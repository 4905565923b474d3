"""``async with`` for the objects that ``aclose()`` closes."""

from __future__ import annotations

from types import TracebackType
from typing import Self

__all__ = ["AsyncClosing"]


class AsyncClosing:
    """Entering gives the object itself, leaving awaits its ``aclose()``.

    A class that must do something on entering (open a database, say) overrides
    ``__aenter__``.
    """

    __slots__ = ()

    async def aclose(self) -> None:
        raise NotImplementedError

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()
