"""ai_chat's client adapter against ai_chat's own server: the answer survives the trip.

The server (:func:`ai_chat.server.create_chat_app`) runs in-process behind
``httpx.ASGITransport``; the adapter is given that client. The events that arrive are
the adapter's events, except for what the wire format changes on purpose: ``start``
gains a ``messageId``, and the finish reason and usage also travel in the finish
chunk's ``messageMetadata`` (from which the client restores ``usage``).
"""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from ai_chat.adapters import ScriptedAdapter
from ai_chat.adapters.ui_stream import UIMessageStreamAdapter
from ai_chat.server import create_chat_app

from .wire import HELLO, collect, plain

pytestmark = pytest.mark.anyio


async def test_the_scripted_answer_survives_a_round_trip() -> None:
    scripted = ScriptedAdapter()
    direct = plain(await collect(scripted))
    app = create_chat_app(scripted, keep_alive=None)
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app)) as client:
        adapter = UIMessageStreamAdapter("http://ai-chat.test/api/chat", client=client)
        tripped = plain(await collect(adapter, HELLO))
    assert [e["type"] for e in tripped] == [e["type"] for e in direct]
    start, *middle, finish = tripped
    assert start["type"] == "start" and start["messageId"]
    assert middle == direct[1:-1]
    expected: dict[str, Any] = dict(direct[-1])
    assert finish["finishReason"] == expected["finishReason"]
    assert finish["usage"] == expected["usage"]
    assert finish["messageMetadata"]["usage"] == expected["usage"]
