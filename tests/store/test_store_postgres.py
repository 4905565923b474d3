"""The PostgreSQL store passes the compliance suite on a real server.

The server comes from ``conftest.py``: a throwaway cluster, or the one named by
``AI_CHAT_TEST_POSTGRES_DSN``; each test gets its own empty schema.
"""

from __future__ import annotations

import uuid
from collections.abc import AsyncGenerator, Iterator
from contextlib import asynccontextmanager

import anyio
import anyio.to_thread
import psycopg
import psycopg.conninfo
import psycopg_pool
import pytest

from ai_chat.store import (
    ConversationStore,
    PostgresConversationStore,
    SchemaVersionError,
    StoreError,
)
from ai_chat.store._postgres_schema import SCHEMA_VERSION
from ai_chat.testing import (
    ConversationStoreCompliance,
    PersistentStoreCompliance,
    StoreFactory,
)

from .postgres_server import raw_execute

pytestmark = pytest.mark.anyio


class TestPostgresStore(PersistentStoreCompliance):
    @pytest.fixture
    def store_factory(self, postgres_dsn: str) -> StoreFactory:
        self.dsn = postgres_dsn
        return lambda: PostgresConversationStore(postgres_dsn, max_connections=8)

    async def break_backend(self, store: ConversationStore) -> None:
        await anyio.to_thread.run_sync(raw_execute, self.dsn, "DROP TABLE ai_chat_messages")

    @asynccontextmanager
    async def hold_lock(
        self, store: ConversationStore, conversation_id: str
    ) -> AsyncGenerator[None]:
        conn = await anyio.to_thread.run_sync(lambda: psycopg.connect(self.dsn))
        try:
            await anyio.to_thread.run_sync(
                lambda: conn.execute(
                    "SELECT 1 FROM ai_chat_conversations WHERE id = %s FOR UPDATE",
                    (conversation_id,),
                )
            )
            yield
            await anyio.to_thread.run_sync(conn.rollback)
        finally:
            await anyio.to_thread.run_sync(conn.close)


@pytest.fixture
def callers_pool(postgres_dsn: str) -> Iterator[psycopg_pool.ConnectionPool[psycopg.Connection]]:
    pool = psycopg_pool.ConnectionPool[psycopg.Connection](
        postgres_dsn, min_size=1, max_size=6, open=False
    )
    pool.open(wait=True, timeout=30)
    try:
        yield pool
    finally:
        pool.close()


class TestPostgresStoreOnACallersPool(ConversationStoreCompliance):
    @pytest.fixture
    def store_factory(
        self, callers_pool: psycopg_pool.ConnectionPool[psycopg.Connection]
    ) -> StoreFactory:
        return lambda: PostgresConversationStore(callers_pool)


def _user(message_id: str) -> dict[str, object]:
    return {"id": message_id, "role": "user", "parts": [{"type": "text", "text": message_id}]}


async def test_a_callers_pool_stays_open(
    callers_pool: psycopg_pool.ConnectionPool[psycopg.Connection],
) -> None:
    async with PostgresConversationStore(callers_pool) as store:
        conversation = await store.create_conversation("ctx", "subj")
    assert not callers_pool.closed
    with callers_pool.connection() as conn:
        row = conn.execute(
            "SELECT count(*) FROM ai_chat_conversations WHERE id = %s", (conversation.id,)
        ).fetchone()
    assert row == (1,)


async def test_a_callers_connection_stays_open(postgres_dsn: str) -> None:
    conn = await anyio.to_thread.run_sync(lambda: psycopg.connect(postgres_dsn))
    try:
        async with PostgresConversationStore(conn) as store:
            conversation = await store.create_conversation("ctx", "subj")
            async with anyio.create_task_group() as tg:
                for n in range(5):
                    tg.start_soon(store.append_messages, conversation.id, [_user(f"m{n}")])
            assert len(await store.load_messages(conversation.id)) == 5
        assert not conn.closed
        assert conn.execute("SELECT version FROM ai_chat_conversations").fetchone() == (5,)
    finally:
        conn.close()


async def test_a_callers_connection_in_a_transaction_commits_each_call(
    postgres_dsn: str,
) -> None:
    # Not autocommit: a read would open a transaction that later writes only nest in.
    conn = await anyio.to_thread.run_sync(lambda: psycopg.connect(postgres_dsn))
    try:
        store = PostgresConversationStore(conn)
        conversation = await store.create_conversation("ctx", "subj")
        assert await store.find_by_id(conversation.id) is not None
        await store.append_messages(conversation.id, [_user("m1")])
        # Another connection sees the append at once: it was committed.
        assert raw_execute(postgres_dsn, "SELECT count(*) FROM ai_chat_messages") == [(1,)]
        await store.aclose()
        conn.execute("SELECT 1")  # the caller opens a transaction of its own...
        again = PostgresConversationStore(conn)
        with pytest.raises(StoreError, match="inside a transaction of its own"):
            await again.find_by_id(conversation.id)
        conn.rollback()
        assert await again.find_by_id(conversation.id) is not None
        await again.aclose()
    finally:
        conn.close()


async def test_a_failed_first_open_can_be_retried(postgres_server: str) -> None:
    # The database does not exist yet (a service starting before its database is ready).
    name = f"late_{uuid.uuid4().hex}"
    dsn = psycopg.conninfo.make_conninfo(postgres_server, dbname=name)
    store = PostgresConversationStore(dsn, open_timeout=2)
    try:
        with pytest.raises(StoreError):
            await store.find_latest("ctx", "subj")
        with psycopg.connect(postgres_server, autocommit=True) as admin:
            admin.execute(f'CREATE DATABASE "{name}"'.encode())
        conversation = await store.create_conversation("ctx", "subj")
        assert await store.find_latest("ctx", "subj") == conversation
    finally:
        await store.aclose()
        with psycopg.connect(postgres_server, autocommit=True) as admin:
            admin.execute(f'DROP DATABASE IF EXISTS "{name}"'.encode())


async def test_concurrent_first_opens_migrate_once(postgres_dsn: str) -> None:
    stores = [PostgresConversationStore(postgres_dsn, max_connections=2) for _ in range(5)]
    try:
        with anyio.fail_after(30):
            async with anyio.create_task_group() as tg:
                for store in stores:
                    tg.start_soon(store.find_latest, "ctx", "subj")
    finally:
        for store in stores:
            await store.aclose()
    assert raw_execute(postgres_dsn, "SELECT version FROM ai_chat_schema") == [(SCHEMA_VERSION,)]


async def test_a_newer_schema_is_refused(postgres_dsn: str) -> None:
    async with PostgresConversationStore(postgres_dsn) as store:
        await store.create_conversation("ctx", "subj")
    raw_execute(postgres_dsn, "UPDATE ai_chat_schema SET version = %s", (SCHEMA_VERSION + 1,))
    store = PostgresConversationStore(postgres_dsn)
    with pytest.raises(SchemaVersionError) as caught:
        await store.find_latest("ctx", "subj")
    assert caught.value.found == SCHEMA_VERSION + 1
    assert caught.value.supported == SCHEMA_VERSION
    await store.aclose()
    with pytest.raises(StoreError):
        await store.find_latest("ctx", "subj")


@pytest.mark.slow
async def test_an_unreachable_server_is_a_store_error(tmp_path: object) -> None:
    store = PostgresConversationStore(
        f"host={tmp_path} port=1 dbname=none connect_timeout=1", open_timeout=1
    )
    with pytest.raises(StoreError) as caught:
        await store.find_by_id("x")
    assert isinstance(caught.value.__cause__, psycopg.Error)
    await store.aclose()


async def test_a_locked_conversation_does_not_block_others(postgres_dsn: str) -> None:
    async with PostgresConversationStore(postgres_dsn, max_connections=4) as store:
        busy = await store.create_conversation("ctx", "subj")
        free = await store.create_conversation("ctx", "subj")
        locker = await anyio.to_thread.run_sync(lambda: psycopg.connect(postgres_dsn))
        try:
            await anyio.to_thread.run_sync(
                lambda: locker.execute(
                    "SELECT 1 FROM ai_chat_conversations WHERE id = %s FOR UPDATE", (busy.id,)
                )
            )
            busy_done = anyio.Event()

            async def append_busy() -> None:
                await store.append_messages(busy.id, [_user("b1")])
                busy_done.set()

            with anyio.fail_after(20):
                async with anyio.create_task_group() as tg:
                    tg.start_soon(append_busy)
                    await anyio.sleep(0.05)
                    result = await store.append_messages(free.id, [_user("f1")])
                    assert result.seqs == (1,)
                    assert not busy_done.is_set(), "the locked conversation's append ran"
                    await anyio.to_thread.run_sync(locker.rollback)
                    await busy_done.wait()
        finally:
            await anyio.to_thread.run_sync(locker.close)
        assert [m.seq for m in await store.load_messages(busy.id)] == [1]


async def test_find_latest_uses_the_index(postgres_dsn: str) -> None:
    async with PostgresConversationStore(postgres_dsn) as store:
        for n in range(200):
            await store.create_conversation("ctx", f"subject-{n % 20}")
    raw_execute(postgres_dsn, "ANALYZE ai_chat_conversations")
    from ai_chat.store._postgres import LIST_CONVERSATIONS_SQL

    with psycopg.connect(postgres_dsn, autocommit=True) as conn:
        conn.execute("SET enable_seqscan = off")  # tiny tables favour a scan otherwise
        plan = conn.execute(
            b"EXPLAIN " + LIST_CONVERSATIONS_SQL.encode(), ("ctx", "subject-3", 1)
        ).fetchall()
    text = "\n".join(row[0] for row in plan)
    assert "ai_chat_conversations_by_activity" in text, text
    assert "Sort" not in text, text


async def test_a_version_1_database_migrates_to_the_current_schema(postgres_dsn: str) -> None:
    from ai_chat.store._postgres_schema import MIGRATIONS

    # The schema as release 1 left it, with a conversation and a message in it.
    with psycopg.connect(postgres_dsn, autocommit=True) as conn:
        for statement in MIGRATIONS[0]:
            conn.execute(statement)
        conn.execute("CREATE TABLE ai_chat_schema (version integer NOT NULL)")
        conn.execute("INSERT INTO ai_chat_schema (version) VALUES (1)")
        conn.execute(
            "INSERT INTO ai_chat_conversations (id, context, subject_id, created_at, "
            "updated_at, activity, metadata, version) VALUES ('old', 'ctx', 'subj', now(), "
            "now(), nextval('ai_chat_activity'), '{}', 0)"
        )
    async with PostgresConversationStore(postgres_dsn) as store:
        first = await store.append_messages("old", [_user("m1")])
        assert first.seqs == (1,)
    assert raw_execute(postgres_dsn, "SELECT version FROM ai_chat_schema") == [(SCHEMA_VERSION,)]
    assert SCHEMA_VERSION == 2
    async with PostgresConversationStore(postgres_dsn) as store:
        # The data survived, and appends (grouped, or alone) continue the log.
        assert (await store.append_messages("old", [_user("m1")])).stored == 0
        async with anyio.create_task_group() as tg:
            for n in range(2, 6):
                tg.start_soon(store.append_messages, "old", [_user(f"m{n}")])
        stored = await store.load_messages("old")
        assert [m.seq for m in stored] == [1, 2, 3, 4, 5]
        assert sorted(m.message["id"] for m in stored) == [f"m{n}" for n in range(1, 6)]
        found = await store.find_by_id("old")
        assert found is not None and found.version == 5
    # Release 1's function stays, for processes still running it during an upgrade.
    with psycopg.connect(postgres_dsn, autocommit=True) as conn:
        row = conn.execute(
            "SELECT r_status, r_seqs FROM ai_chat_append('old', NULL, %s, %s, %s, now())",
            (["m1"], [b"x"], ["{}"]),
        ).fetchone()
    assert row == ("duplicate", None)


async def test_appends_skipped_by_a_group_wait_for_the_lock_alone(postgres_dsn: str) -> None:
    # A group never waits for a row lock held elsewhere: the locked conversation's
    # append goes alone (and waits), the others of the same group commit at once.
    async with PostgresConversationStore(postgres_dsn, max_connections=4) as store:
        busy = await store.create_conversation("ctx", "subj")
        free = [await store.create_conversation("ctx", "subj") for _ in range(5)]
        locker = await anyio.to_thread.run_sync(lambda: psycopg.connect(postgres_dsn))
        try:
            await anyio.to_thread.run_sync(
                lambda: locker.execute(
                    "SELECT 1 FROM ai_chat_conversations WHERE id = %s FOR UPDATE", (busy.id,)
                )
            )
            done: list[str] = []

            async def append(conversation_id: str) -> None:
                await store.append_messages(conversation_id, [_user("x1")])
                done.append(conversation_id)

            with anyio.fail_after(20):
                async with anyio.create_task_group() as tg:
                    for conversation in [busy, *free]:
                        tg.start_soon(append, conversation.id)
                    while len(done) < len(free):
                        await anyio.sleep(0.01)
                    assert busy.id not in done
                    await anyio.to_thread.run_sync(locker.rollback)
        finally:
            await anyio.to_thread.run_sync(locker.close)
        assert busy.id in done
        for conversation in [busy, *free]:
            assert [m.seq for m in await store.load_messages(conversation.id)] == [1]
