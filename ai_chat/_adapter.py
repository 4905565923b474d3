"""The adapter protocol and the abort signal adapters receive."""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping
from typing import Protocol, runtime_checkable

import anyio

from ._describe import shown
from ._types import ChatRequest

__all__ = ["AIChatAdapter", "AbortSignal"]


class AbortSignal:
    """Tells an adapter that its consumer has stopped.

    The stream that owns the signal aborts it, with a reason, when the consumer cancels,
    closes, aborts or breaks off, and when an event fails validation. An adapter that
    holds a network request open should stop it when :meth:`wait` returns (adapters
    written as async generators are also cancelled and closed, which is usually enough).
    Create it inside a running event loop.
    """

    __slots__ = ("_event", "_reason")

    def __init__(self) -> None:
        self._event = anyio.Event()
        self._reason: str | None = None

    @property
    def aborted(self) -> bool:
        """Whether the signal has been aborted."""
        return self._reason is not None

    @property
    def reason(self) -> str | None:
        """Why it was aborted, or ``None`` while it has not been."""
        return self._reason

    async def wait(self) -> None:
        """Return once the signal is aborted (at once if it already is)."""
        await self._event.wait()

    def abort(self, reason: str) -> None:
        """Abort the signal; later calls keep the first reason."""
        if self._reason is None:
            self._reason = reason
            self._event.set()

    def __repr__(self) -> str:
        return f"AbortSignal(aborted={self.aborted}, reason={shown(self._reason)})"


@runtime_checkable
class AIChatAdapter(Protocol):
    """Anything that can stream one chat answer.

    ``stream(request, signal)`` receives the frozen request snapshot and an abort signal
    and returns an async iterator of events (plain ``dict`` s), typically by being an async
    generator. The events must follow the event vocabulary (see :data:`ai_chat.types.ChatEvent`)
    and end with ``finish``; the chat stream validates every one. An adapter reports a
    failure by raising: an :class:`~ai_chat.AIChatError` reaches the consumer as it is,
    anything else as :class:`~ai_chat.AdapterError`. It should stop promptly when
    cancelled or closed, and release its network work when ``signal`` is aborted.
    """

    def stream(
        self, request: ChatRequest, signal: AbortSignal
    ) -> AsyncIterator[Mapping[str, object]]: ...
