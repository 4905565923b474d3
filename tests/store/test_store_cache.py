"""The decoded-message cache of the SQLite and PostgreSQL stores.

A log is append-only, so a store keeps the messages it loaded and reads only the ones
appended since. These tests check that the cache is coherent with appends made through
another store over the same database (another process, another machine), that paging
through it equals a cold load, that it is bounded, and that it can be turned off. The
compliance suite also runs on stores without it.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import anyio.to_thread
import psycopg
import pytest

from ai_chat import ConfigurationError
from ai_chat.store import (
    PostgresConversationStore,
    SQLiteConversationStore,
    StoredMessage,
    StoreError,
)
from ai_chat.testing import ConversationStoreCompliance, StoreFactory

pytestmark = pytest.mark.anyio

Opener = Callable[..., SQLiteConversationStore | PostgresConversationStore]
"""Opens a store over the test's database: ``open(cache_chars=...)``."""
SQL = Callable[[str, tuple[object, ...]], None]
"""Runs one statement on the test's database directly."""
Backend = tuple[Opener, SQL]


def _message(message_id: str, text: str = "hello") -> dict[str, Any]:
    return {"id": message_id, "role": "user", "parts": [{"type": "text", "text": text}]}


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.needs("postgresql"))])
def backend(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Backend]:
    """How to open a store over one database, and how to run SQL on it directly."""
    if request.param == "sqlite":
        path = tmp_path / "chats.db"

        def sql_sqlite(statement: str, params: tuple[object, ...]) -> None:
            conn = sqlite3.connect(path)
            try:
                conn.execute(statement.replace("%s", "?"), params)
                conn.commit()
            finally:
                conn.close()

        def open_sqlite(**options: Any) -> SQLiteConversationStore:
            return SQLiteConversationStore(path, **options)

        yield open_sqlite, sql_sqlite
        return
    dsn: str = request.getfixturevalue("postgres_dsn")

    def sql_postgres(statement: str, params: tuple[object, ...]) -> None:
        with psycopg.connect(dsn, autocommit=True) as conn:
            conn.execute(statement.encode(), params)

    def open_postgres(**options: Any) -> PostgresConversationStore:
        return PostgresConversationStore(dsn, **options)

    yield open_postgres, sql_postgres


async def _alter(sql: SQL, conversation_id: str, seq: int, text: str) -> None:
    """Change a stored message behind the stores' back (what the cache assumes never
    happens): a load that still shows the old text was served from the cache."""
    body = json.dumps(
        {"id": f"m{seq}", "role": "user", "parts": [{"type": "text", "text": text}]},
        separators=(",", ":"),
    )
    await anyio.to_thread.run_sync(
        sql,
        "UPDATE ai_chat_messages SET body = %s WHERE conversation_id = %s AND seq = %s",
        (body, conversation_id, seq),
    )


def _texts(stored: tuple[StoredMessage, ...]) -> list[str]:
    texts: list[str] = []
    for item in stored:
        part: Any = item.message["parts"][0]
        texts.append(part["text"])
    return texts


async def test_a_load_sees_what_another_store_appended(backend: Backend) -> None:
    open_store, _ = backend
    async with open_store() as reader, open_store() as writer:
        conversation = await writer.create_conversation("ctx", "subj")
        await writer.append_messages(conversation.id, [_message(f"m{i}") for i in range(1, 4)])
        assert [m.seq for m in await reader.load_messages(conversation.id)] == [1, 2, 3]
        await writer.append_messages(conversation.id, [_message(f"m{i}") for i in range(4, 7)])
        loaded = await reader.load_messages(conversation.id)
        assert [m.seq for m in loaded] == [1, 2, 3, 4, 5, 6]
        assert [m.message["id"] for m in loaded] == [f"m{i}" for i in range(1, 7)]
        assert loaded == await writer.load_messages(conversation.id)
        # An append through the reader itself, then a load: the new messages are there.
        await reader.append_messages(conversation.id, [_message("m7")])
        assert [m.seq for m in await reader.load_messages(conversation.id)] == list(range(1, 8))


async def test_paging_through_a_warm_cache_equals_a_cold_load(
    backend: Backend,
) -> None:
    open_store, _ = backend
    async with open_store() as warm, open_store(cache_chars=0) as cold:
        conversation = await warm.create_conversation("ctx", "subj")
        for batch in range(4):
            ids = [f"m{batch * 3 + i}" for i in range(1, 4)]
            await warm.append_messages(conversation.id, [_message(i) for i in ids])
        await warm.load_messages(conversation.id, limit=5)  # caches a prefix mid-batch
        for after in range(14):
            for limit in (None, 0, 1, 2, 5, 20):
                got = await warm.load_messages(conversation.id, after=after, limit=limit)
                expected = await cold.load_messages(conversation.id, after=after, limit=limit)
                assert got == expected, (after, limit)
                assert [m.seq for m in got] == list(range(after + 1, after + 1 + len(got)))
        assert len(await warm.load_messages(conversation.id)) == 12


async def test_loaded_messages_are_served_from_the_cache(backend: Backend) -> None:
    open_store, sql = backend
    async with open_store() as cached, open_store(cache_chars=0) as uncached:
        conversation = await cached.create_conversation("ctx", "subj")
        await cached.append_messages(conversation.id, [_message("m1"), _message("m2")])
        await cached.load_messages(conversation.id)
        await _alter(sql, conversation.id, 1, "altered")
        assert _texts(await cached.load_messages(conversation.id)) == ["hello", "hello"]
        assert _texts(await cached.load_messages(conversation.id, limit=1)) == ["hello"]
        assert _texts(await uncached.load_messages(conversation.id)) == ["altered", "hello"]


async def test_the_cache_is_bounded(backend: Backend) -> None:
    open_store, sql = backend
    one = len('{"id":"m1","role":"user","parts":[{"type":"text","text":"hello"}]}')
    async with open_store(cache_chars=3 * one) as store:
        first = await store.create_conversation("ctx", "a")
        second = await store.create_conversation("ctx", "b")
        large = await store.create_conversation("ctx", "c")
        await store.append_messages(first.id, [_message("m1"), _message("m2")])
        await store.append_messages(second.id, [_message("m1"), _message("m2")])
        await store.append_messages(large.id, [_message(f"m{i}") for i in range(1, 5)])
        await store.load_messages(first.id)
        await store.load_messages(second.id)  # four messages are more than three: first goes
        await store.load_messages(large.id)  # larger than the whole cache: never kept
        for conversation in (first, second, large):
            await _alter(sql, conversation.id, 1, "altered")
        assert _texts(await store.load_messages(large.id))[0] == "altered"
        assert _texts(await store.load_messages(second.id))[0] == "hello"  # still cached
        assert _texts(await store.load_messages(first.id))[0] == "altered"
        # The first conversation is cached again now, and the second was dropped for it.
        assert _texts(await store.load_messages(second.id))[0] == "altered"


@pytest.mark.parametrize("value", [-1, True, 1.5, "10", None])
async def test_cache_chars_is_checked(backend: Backend, value: object) -> None:
    open_store, _ = backend
    with pytest.raises(ConfigurationError):
        open_store(cache_chars=value)


async def test_a_closed_store_does_not_serve_from_the_cache(
    backend: Backend,
) -> None:
    open_store, _ = backend
    store = open_store()
    conversation = await store.create_conversation("ctx", "subj")
    await store.append_messages(conversation.id, [_message("m1")])
    await store.load_messages(conversation.id)
    await store.aclose()
    with pytest.raises(StoreError):
        await store.load_messages(conversation.id, limit=1)
    with pytest.raises(StoreError):
        await store.load_messages(conversation.id)


class TestSQLiteStoreWithoutCache(ConversationStoreCompliance):
    @pytest.fixture
    def store_factory(self, tmp_path: Path) -> StoreFactory:
        return lambda: SQLiteConversationStore(tmp_path / "chats.db", cache_chars=0)


class TestPostgresStoreWithoutCache(ConversationStoreCompliance):
    @pytest.fixture
    def store_factory(self, postgres_dsn: str) -> StoreFactory:
        return lambda: PostgresConversationStore(postgres_dsn, max_connections=8, cache_chars=0)
