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
from ai_chat.store._postgres import SCHEMA_VERSION
from ai_chat.store.testing import (
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
