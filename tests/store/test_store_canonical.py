"""Every store of ours returns a message in its canonical form: the stored JSON's keys
sorted, equal to the message appended."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from ai_chat.limits import freeze_json
from ai_chat.store import ConversationStore, MemoryConversationStore, SQLiteConversationStore

pytestmark = pytest.mark.anyio


@pytest.mark.parametrize("kind", ["memory", "sqlite"])
async def test_a_loaded_message_has_its_keys_sorted(tmp_path: Path, kind: str) -> None:
    store: ConversationStore = (
        MemoryConversationStore()
        if kind == "memory"
        else SQLiteConversationStore(tmp_path / "chats.db", cache_chars=0)
    )
    message = {
        "role": "assistant",
        "parts": [{"type": "data-x", "data": {"z": 1, "a": [{"y": 2, "b": 3}]}}],
        "id": "m1",
    }
    try:
        conversation = await store.create_conversation("ctx", "subj")
        await store.append_messages(conversation.id, [message])
        (stored,) = await store.load_messages(conversation.id)
    finally:
        await store.aclose()
    assert stored.message == freeze_json(message)
    loaded: Any = stored.message
    assert list(loaded) == ["id", "parts", "role"]
    assert list(loaded["parts"][0]) == ["data", "type"]
    assert list(loaded["parts"][0]["data"]) == ["a", "z"]
    assert list(loaded["parts"][0]["data"]["a"][0]) == ["b", "y"]
