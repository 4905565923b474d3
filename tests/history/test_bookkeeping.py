"""Bookkeeping lives in metadata.aiChat: messages stay normalized and round-trip through stores."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ai_chat import normalize_messages
from ai_chat.history import BOOKKEEPING_KEY, History, bookkeeping
from ai_chat.store import (
    ConversationStore,
    MemoryConversationStore,
    SQLiteConversationStore,
    messages_of,
)

from .strategies import START, fresh, view


def rich() -> History:
    history = fresh().append_system("sys").append_user("hi")
    history = history.append_assistant(
        "", tool_calls=[{"toolCallId": "c", "toolName": "t", "input": {"q": [1, 2]}}]
    )
    history = history.append_tool_result("c", {"ok": True}).set_hidden(view(history)[1]["id"])
    history, streaming = history.start_streaming(parts=[{"type": "text", "text": "par"}])
    return history.finish_streaming(streaming, usage={"inputTokens": 1, "outputTokens": 2})


def test_the_messages_pass_normalize_messages_unchanged() -> None:
    history = rich()
    assert normalize_messages(list(history.messages)) == history.messages
    assert normalize_messages(json.loads(json.dumps(history.messages))) == history.messages


def test_bookkeeping_reads_each_fact() -> None:
    history = rich()
    facts = [bookkeeping(m) for m in history.messages]
    assert all(f.created_at is not None and f.created_at >= START for f in facts)
    assert [f.hidden for f in facts] == [False, True, False, False, False]
    assert facts[-1].usage == {"inputTokens": 1, "outputTokens": 2} and not facts[-1].streaming
    plain = {"id": "p", "role": "user", "parts": [{"type": "text", "text": "x"}]}
    (message,) = normalize_messages([plain])
    assert bookkeeping(message).created_at is None and bookkeeping(message).sources == ()
    assert set(view(history)[1]["metadata"]) == {BOOKKEEPING_KEY}


@pytest.mark.anyio
async def test_messages_round_trip_through_the_stores(tmp_path: Path) -> None:
    history = rich()
    stores: list[ConversationStore] = [
        MemoryConversationStore(),
        SQLiteConversationStore(tmp_path / "chats.db"),
    ]
    for store in stores:
        try:
            conversation = await store.create_conversation("history", "alice")
            await store.append_messages(conversation.id, history.messages)
            loaded = messages_of(await store.load_messages(conversation.id))
            assert loaded == history.messages
            again = History.create(id=history.id, env=history.env).extend(loaded)
            assert again.messages == history.messages
            assert [bookkeeping(m) for m in again.messages] == [
                bookkeeping(m) for m in history.messages
            ]
        finally:
            await store.aclose()
