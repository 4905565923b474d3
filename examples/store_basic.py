"""Keep a conversation in SQLite between turns: resume, append, answer, rate, reopen.

Run: uv run python examples/store_basic.py [asyncio|trio]

Offline: the answers come from the scripted adapter, the database is a temporary file.
"""

import sys
import tempfile
from pathlib import Path

import anyio

from ai_chat import create_chat_stream, is_part
from ai_chat.adapters import ScriptedAdapter
from ai_chat.store import ConversationStore, SQLiteConversationStore, messages_of


async def chat_turn(store: ConversationStore, subject_id: str, turn: int, text: str) -> None:
    """One turn of the integration pattern: resume or create, store, answer, store."""
    conversation = await store.find_latest("support_assistant", subject_id)
    if conversation is None:
        conversation = await store.create_conversation(
            "support_assistant", subject_id, {"plan": "trial"}
        )
    user = {"id": f"user-{turn}", "role": "user", "parts": [{"type": "text", "text": text}]}
    await store.append_messages(conversation.id, [user])

    history = messages_of(await store.load_messages(conversation.id))
    answer: list[str] = []
    async with create_chat_stream(ScriptedAdapter(delay=0), {"messages": history}) as stream:
        async for event in stream:
            match event:
                case {"type": "text-delta", "delta": str(delta)}:
                    answer.append(delta)
                case _:
                    pass
    assistant = {
        "id": f"assistant-{turn}",
        "role": "assistant",
        "parts": [{"type": "text", "text": "".join(answer)}],
    }
    # A retry of the same append (after a timeout, say) stores nothing twice.
    result = await store.append_messages(conversation.id, [assistant])
    again = await store.append_messages(conversation.id, [assistant])
    assert again.seqs == result.seqs and again.stored == 0
    print(f"turn {turn}: conversation {conversation.id[:8]}, version {result.version}")


async def main() -> None:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "chats.db"
        async with SQLiteConversationStore(path) as store:
            await chat_turn(store, "org-42", 1, "Show me bookings for tomorrow")
            await chat_turn(store, "org-42", 2, "And for Friday?")
            latest = await store.find_latest("support_assistant", "org-42")
            assert latest is not None
            await store.rate(latest.id, 5, "Very helpful!")

        # Everything is still there after closing and reopening the database.
        async with SQLiteConversationStore(path) as store:
            latest = await store.find_latest("support_assistant", "org-42")
            assert latest is not None
            print(f"rating: {latest.rating} ({latest.comment}), messages: {latest.version}")
            for stored in await store.load_messages(latest.id):
                role = stored.message["role"]
                part = stored.message["parts"][0]
                text = part["text"] if is_part(part, "text") else part["type"]
                print(f"  #{stored.seq} {role}: {text[:40]}")
            recent = await store.load_recent_messages(latest.id, 2)
            print(f"last two: {[m.seq for m in recent]}")


if __name__ == "__main__":
    anyio.run(main, backend=sys.argv[1] if len(sys.argv) > 1 else "asyncio")
