"""A conversation kept as a History: answers folded in while they stream, tools answered,
pairing checked per provider, a broken history repaired, and the whole kept in a store.

Run: uv run python examples/history_basics.py [asyncio|trio]

Offline: the answers come from the scripted adapter, the store is in memory, and the
history's ids and times come from a deterministic env (so every run prints the same).
"""

import json
import sys

import anyio

from ai_chat import create_chat_stream
from ai_chat.adapters import ScriptedAdapter
from ai_chat.history import History, HistoryEnv, Projection, check, message_text, repair
from ai_chat.store import MemoryConversationStore, messages_of


async def answer(history: History) -> History:
    """Stream one answer into the history, the way a UI would render it."""
    live = Projection(history, checked=True)
    request = {"messages": history.request_messages()}
    shown = False
    async with create_chat_stream(ScriptedAdapter(), request) as stream:
        async for event in stream:
            live.apply([event])
            if event["type"] == "text-delta" and not shown:
                snapshot, shown = live.snapshot(), True
                visible, sent = len(snapshot.visible()), len(snapshot.request_messages())
                print(f"while streaming: {visible} messages shown, {sent} sent")
    return live.snapshot()


async def main() -> None:
    history = History.create(title="Bookings", env=HistoryEnv.deterministic())
    history = history.prepend_system("You help with room bookings.")
    history = await answer(history.append_user("Show me bookings for tomorrow"))
    last = history.at(-1)
    assert last is not None
    print(f"answer: {message_text(last)[:40]}...")

    # The scripted model asked for a tool: answer it, then every provider accepts it.
    (call,) = history.pending_tool_calls()
    print(f"pending: {call['toolName']}")
    history = history.append_tool_result(call["toolCallId"], {"bookings": ["room 4", "room 7"]})
    print(f"check, all providers: {check(history, provider='all').ok}")

    # A user message before a call's result is what every provider refuses; repair it.
    broken = history.append_assistant(
        tool_calls=[{"toolCallId": "call-2", "toolName": "search", "input": {"day": "Friday"}}]
    ).append_user("Never mind")
    print(f"problems: {[p.code for p in check(broken, provider='all')]}")
    fixed = repair(broken, provider="all")
    print(
        f"repaired: {[c.action for c in fixed.changes]}, ok: {check(fixed.history, provider='all').ok}"
    )

    # The messages are normalized messages: a store keeps them as they are.
    store = MemoryConversationStore()
    conversation = await store.create_conversation("bookings", "org-42")
    await store.append_messages(conversation.id, fixed.history.messages)
    loaded = messages_of(await store.load_messages(conversation.id))
    print(f"stored and loaded: {loaded == fixed.history.messages}, {len(loaded)} messages")
    again = History.from_json(json.loads(json.dumps(fixed.history.to_json())))
    print(f"JSON round trip: {again == fixed.history}")
    await store.aclose()


if __name__ == "__main__":
    anyio.run(main, backend=sys.argv[1] if len(sys.argv) > 1 else "asyncio")
