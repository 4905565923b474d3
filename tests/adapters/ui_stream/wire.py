"""Shared helpers for the UI message stream client tests: the wire format and running the adapter."""

from __future__ import annotations

import json
from collections.abc import AsyncGenerator, Callable, Mapping, Sequence
from contextlib import asynccontextmanager
from typing import Any

from ai_chat.adapters.ui_stream import UIMessageStreamAdapter
from ai_chat.types import ChatEvent

from .._support.common import HANG_GUARD, HELLO, collect, failure_with, types
from .._support.fake_server import FakeServer, Request, Response, Step, serve

HEADERS: Mapping[str, str] = {
    "content-type": "text/event-stream",
    "cache-control": "no-cache",
    "x-vercel-ai-ui-message-stream": "v1",
    "x-accel-buffering": "no",
}
DONE = b"data: [DONE]\n\n"


def chunk(kind: str, **fields: Any) -> bytes:
    """One chunk as AI SDK servers frame it: ``data: <json>`` and a blank line."""
    return b"data: " + json.dumps({"type": kind, **fields}, ensure_ascii=False).encode() + b"\n\n"


def text_answer(*deltas: str, part: str = "t1") -> list[bytes]:
    """A complete answer: start, one step with one text part, finish, [DONE]."""
    return [
        chunk("start", messageId="m1"),
        chunk("start-step"),
        chunk("text-start", id=part),
        *(chunk("text-delta", id=part, delta=d) for d in deltas),
        chunk("text-end", id=part),
        chunk("finish-step"),
        chunk("finish", finishReason="stop"),
        DONE,
    ]


def answering(
    steps: Sequence[Step], *, status: int = 200, headers: Mapping[str, str] = HEADERS
) -> Callable[[Request], Response]:
    return lambda request: Response(status, headers, steps)


@asynccontextmanager
async def served(
    handler: Callable[[Request], Response], **options: Any
) -> AsyncGenerator[tuple[FakeServer, UIMessageStreamAdapter]]:
    """A loopback server and an adapter (owning its client) pointed at it."""
    async with (
        serve(handler) as server,
        UIMessageStreamAdapter(server.url("/api/chat"), **options) as adapter,
    ):
        yield server, adapter


async def run(
    steps: Sequence[Step], request: Mapping[str, Any] = HELLO, **options: Any
) -> list[ChatEvent]:
    async with served(answering(steps), **options) as (_server, adapter):
        return await collect(adapter, request)


async def failure(
    handler: Callable[[Request], Response],
    expected: type[BaseException],
    request: Mapping[str, Any] = HELLO,
    *,
    closed: bool = False,
    **options: Any,
) -> tuple[Any, list[ChatEvent], FakeServer]:
    """The error the stream raised, the events delivered before it, and the server.

    With ``closed``, also wait (bounded) until the server saw the connection closed
    while the adapter's client is still open: the adapter closed the response itself.
    """
    return await failure_with(
        lambda handler: served(handler, **options), handler, expected, request, closed=closed
    )


def plain(events: Sequence[ChatEvent]) -> list[dict[str, Any]]:
    """Events as plain JSON, for comparing with literals."""
    return json.loads(json.dumps(events))


__all__ = [
    "DONE",
    "HANG_GUARD",
    "HEADERS",
    "HELLO",
    "answering",
    "chunk",
    "collect",
    "failure",
    "plain",
    "run",
    "served",
    "text_answer",
    "types",
]
