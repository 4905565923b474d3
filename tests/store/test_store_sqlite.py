"""The SQLite store passes the compliance suite, migrates once and waits for other writers."""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import AsyncGenerator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, Literal

import anyio
import anyio.to_thread
import pytest

from ai_chat import ConfigurationError
from ai_chat.store import (
    AppendError,
    SchemaVersionError,
    SQLiteConversationStore,
    StoreError,
)
from ai_chat.store._checks import DEFAULT_STORE_LIMITS
from ai_chat.store._codec import encode_batch
from ai_chat.store._sqlite import LIST_CONVERSATIONS_SQL, append_lookup_sql
from ai_chat.store._sqlite_schema import MIGRATIONS, SCHEMA_VERSION
from ai_chat.testing import (
    ConversationStoreCompliance,
    PersistentStoreCompliance,
    StoreFactory,
)

pytestmark = pytest.mark.anyio


class TestSQLiteStore(PersistentStoreCompliance):
    @pytest.fixture
    def store_factory(self, tmp_path: Path) -> StoreFactory:
        self.path = tmp_path / "chats.db"
        return lambda: SQLiteConversationStore(self.path)

    async def break_backend(self, store: object) -> None:
        def drop() -> None:
            conn = sqlite3.connect(self.path)
            try:
                conn.execute("DROP TABLE ai_chat_messages")
                conn.commit()
            finally:
                conn.close()

        await anyio.to_thread.run_sync(drop)

    @asynccontextmanager
    async def hold_lock(self, store: object, conversation_id: str) -> AsyncGenerator[None]:
        conn = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False)
        try:
            await anyio.to_thread.run_sync(conn.execute, "BEGIN IMMEDIATE")
            yield
            await anyio.to_thread.run_sync(conn.execute, "ROLLBACK")
        finally:
            conn.close()


class TestSQLiteInMemoryDatabase(ConversationStoreCompliance):
    @pytest.fixture
    def store_factory(self) -> StoreFactory:
        return lambda: SQLiteConversationStore(":memory:")


def _user(message_id: str) -> dict[str, object]:
    return {"id": message_id, "role": "user", "parts": [{"type": "text", "text": message_id}]}


def _query(path: Path, sql: str) -> list[tuple[object, ...]]:
    conn = sqlite3.connect(path)
    try:
        return conn.execute(sql).fetchall()
    finally:
        conn.close()


async def test_the_database_is_wal_and_migrated_once(tmp_path: Path) -> None:
    path = tmp_path / "chats.db"
    async with SQLiteConversationStore(path) as store:
        conversation = await store.create_conversation("ctx", "subj")
    assert _query(path, "PRAGMA journal_mode") == [("wal",)]
    assert _query(path, "PRAGMA user_version") == [(SCHEMA_VERSION,)]
    # Reopening finds the schema current and changes nothing.
    async with SQLiteConversationStore(path) as store:
        assert await store.find_by_id(conversation.id) == conversation
    assert _query(path, "PRAGMA user_version") == [(SCHEMA_VERSION,)]


async def test_a_version_1_database_is_migrated_with_its_messages(tmp_path: Path) -> None:
    # A database as ai_chat's first schema left it: messages in a rowid table.
    path = tmp_path / "chats.db"
    conn = sqlite3.connect(path, isolation_level=None)
    for statement in MIGRATIONS[0]:
        conn.execute(statement)
    conn.execute("PRAGMA user_version = 1")
    conn.execute(
        "INSERT INTO ai_chat_conversations (id, context, subject_id, created_at, updated_at, "
        "activity, metadata, version) VALUES ('c1', 'ctx', 'subj', 1, 2, 1, '{}', 2)"
    )
    batch = encode_batch("c1", [_user("m1"), _user("m2")], DEFAULT_STORE_LIMITS)
    conn.executemany(
        "INSERT INTO ai_chat_messages VALUES ('c1', ?, ?, ?, 2, ?)",
        [(seq, item.id, item.digest, item.body) for seq, item in enumerate(batch, 1)],
    )
    conn.close()

    async with SQLiteConversationStore(path) as store:
        loaded = await store.load_messages("c1")
        assert [(m.seq, m.message) for m in loaded] == [
            (1, batch[0].message),
            (2, batch[1].message),
        ]
        # The stored digests still recognize a replay, and the log goes on from seq 3.
        replay = await store.append_messages("c1", [_user("m2"), _user("m3")])
        assert (replay.seqs, replay.version, replay.stored) == ((2, 3), 3, 1)
    assert _query(path, "PRAGMA user_version") == [(SCHEMA_VERSION,)]
    ddl = _query(path, "SELECT sql FROM sqlite_master WHERE name = 'ai_chat_messages'")
    assert str(ddl[0][0]).rstrip().endswith("WITHOUT ROWID")
    assert _query(path, "PRAGMA foreign_key_check") == []
    assert _query(path, "PRAGMA integrity_check") == [("ok",)]


async def test_a_newer_schema_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "chats.db"
    async with SQLiteConversationStore(path) as store:
        await store.create_conversation("ctx", "subj")
    conn = sqlite3.connect(path)
    conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    conn.close()
    store = SQLiteConversationStore(path)
    with pytest.raises(SchemaVersionError) as caught:
        await store.find_latest("ctx", "subj")
    assert caught.value.found == SCHEMA_VERSION + 1
    assert caught.value.supported == SCHEMA_VERSION
    await store.aclose()
    # Nothing was changed.
    assert _query(path, "PRAGMA user_version") == [(SCHEMA_VERSION + 1,)]


async def test_an_unopenable_file_is_a_store_error(tmp_path: Path) -> None:
    (tmp_path / "not-a-db").write_bytes(b"this is not an SQLite database" * 100)
    store = SQLiteConversationStore(tmp_path / "not-a-db")
    with pytest.raises(StoreError) as caught:
        await store.find_by_id("x")
    assert isinstance(caught.value.__cause__, sqlite3.Error)
    await store.aclose()


async def test_find_latest_uses_the_index(tmp_path: Path) -> None:
    path = tmp_path / "chats.db"
    async with SQLiteConversationStore(path) as store:
        await store.create_conversation("ctx", "subj")
    plan = _query(path, "EXPLAIN QUERY PLAN " + LIST_CONVERSATIONS_SQL.replace("?", "'x'"))
    details = " ".join(str(row[-1]) for row in plan)
    assert "USING INDEX ai_chat_conversations_by_activity" in details, details
    assert "TEMP B-TREE" not in details, details  # ordered by the index, no sort


async def test_an_append_looks_its_ids_up_by_index_not_by_scanning(tmp_path: Path) -> None:
    # Without statistics SQLite would range over all of the conversation's messages by
    # primary key for a batch of several ids: the append's lookup names its index.
    path = tmp_path / "chats.db"
    async with SQLiteConversationStore(path) as store:
        await store.create_conversation("ctx", "subj")
    for ids in (1, 3):
        plan = _query(path, "EXPLAIN QUERY PLAN " + append_lookup_sql(ids).replace("?", "'x'"))
        details = " ".join(str(row[-1]) for row in plan)
        assert "ai_chat_messages_by_message_id (conversation_id=? AND message_id=?)" in details
        assert "USING PRIMARY KEY" not in details, details
        assert "SCAN" not in details, details


async def test_an_append_waits_for_another_connections_write_lock(tmp_path: Path) -> None:
    path = tmp_path / "chats.db"
    async with SQLiteConversationStore(path) as store:
        conversation = await store.create_conversation("ctx", "subj")
        locked = threading.Event()
        release = threading.Event()

        def hold_lock() -> None:
            conn = sqlite3.connect(path, isolation_level=None)
            try:
                conn.execute("BEGIN IMMEDIATE")
                locked.set()
                release.wait(10)
                conn.execute("COMMIT")
            finally:
                conn.close()

        ticks = 0
        appended = anyio.Event()

        async def append() -> None:
            await store.append_messages(conversation.id, [_user("m1")])
            appended.set()

        with anyio.fail_after(10):
            async with anyio.create_task_group() as tg:
                tg.start_soon(anyio.to_thread.run_sync, hold_lock)
                await anyio.to_thread.run_sync(locked.wait, 10)
                tg.start_soon(append)
                # The loop keeps running while the append waits for the lock.
                while ticks < 5:
                    await anyio.sleep(0.01)
                    ticks += 1
                assert not appended.is_set()
                release.set()
                await appended.wait()
        assert [m.seq for m in await store.load_messages(conversation.id)] == [1]


async def test_a_lock_held_past_the_busy_timeout_is_an_append_error(tmp_path: Path) -> None:
    path = tmp_path / "chats.db"
    async with SQLiteConversationStore(path, busy_timeout=0.05) as store:
        conversation = await store.create_conversation("ctx", "subj")
        conn = sqlite3.connect(path, isolation_level=None)
        try:
            conn.execute("BEGIN IMMEDIATE")
            with pytest.raises(AppendError) as caught:
                await store.append_messages(conversation.id, [_user("m1")])
            conn.execute("ROLLBACK")
        finally:
            conn.close()
        assert isinstance(caught.value.__cause__, sqlite3.OperationalError)
        assert "locked" in str(caught.value.__cause__)
        # Retrying once the lock is gone works.
        result = await store.append_messages(conversation.id, [_user("m1")])
        assert result.seqs == (1,)


@pytest.mark.parametrize(("option", "level"), [(None, 2), ("FULL", 2), ("NORMAL", 1)])
async def test_synchronous_is_full_unless_normal_is_asked_for(
    tmp_path: Path, option: Literal["FULL", "NORMAL"] | None, level: int
) -> None:
    path = tmp_path / "chats.db"
    store = (
        SQLiteConversationStore(path)
        if option is None
        else SQLiteConversationStore(path, synchronous=option)
    )
    async with store:
        conversation = await store.create_conversation("ctx", "subj")
        await store.append_messages(conversation.id, [_hello("m1")])
        writer = store._writer  # pyright: ignore[reportPrivateUsage]
        assert writer is not None
        assert writer.conn.execute("PRAGMA synchronous").fetchone() == (level,)
    # Either way, a closed store's commits are in the file.
    async with SQLiteConversationStore(path, cache_chars=0) as reopened:
        assert [m.seq for m in await reopened.load_messages(conversation.id)] == [1]


@pytest.mark.parametrize("value", ["OFF", "EXTRA", "full", 2, None])
async def test_synchronous_is_checked(tmp_path: Path, value: Any) -> None:
    with pytest.raises(ConfigurationError):
        SQLiteConversationStore(tmp_path / "chats.db", synchronous=value)


def _hello(message_id: str) -> dict[str, Any]:
    return {"id": message_id, "role": "user", "parts": [{"type": "text", "text": "hello"}]}
