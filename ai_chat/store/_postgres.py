"""The PostgreSQL store: psycopg 3's sync API in anyio worker threads (asyncio and trio)."""

from __future__ import annotations

import threading
from collections.abc import Callable, Generator, Mapping, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, LiteralString, Self, TypeVar

import anyio
import anyio.lowlevel
import anyio.to_thread

from .._closing import AsyncClosing
from ..limits import JSONLimits
from ._codec import (
    DEFAULT_CACHE_CHARS,
    DEFAULT_STORE_LIMITS,
    EncodedMessage,
    MessageCache,
    check_append,
    check_cache_chars,
    check_create,
    check_key,
    check_listing,
    check_load,
    check_rate,
    check_recent,
    decode_json,
    decode_rows,
    encode_json,
    from_micros,
    new_record,
    now_micros,
)
from ._errors import (
    AppendError,
    ConversationExistsError,
    ConversationNotFoundError,
    DuplicateMessageError,
    SchemaVersionError,
    StoreError,
    VersionConflictError,
)
from ._records import AppendResult, Conversation, StoredMessage

try:
    import psycopg
    import psycopg_pool
    from psycopg.pq import TransactionStatus
except ImportError as exc:  # pragma: no cover - exercised without the extra
    raise ImportError(
        "PostgresConversationStore needs psycopg 3 and psycopg-pool: "
        "pip install 'ai_chat[postgres]'"
    ) from exc

if TYPE_CHECKING:
    from psycopg.rows import TupleRow

__all__ = ["LIST_CONVERSATIONS_SQL", "SCHEMA_VERSION", "PostgresConversationStore"]

_T = TypeVar("_T")

# A constant key for pg_advisory_xact_lock: migrations by any number of processes run
# one at a time (the bytes of "ai_chat" as an integer).
_MIGRATION_LOCK = 0x61695F63686174

# Each step takes the schema from version i to i + 1; never edited once released.
# JSON is kept as text, not jsonb: jsonb refuses "\u0000", which JSON allows.
_MIGRATIONS: tuple[tuple[LiteralString, ...], ...] = (
    (
        """CREATE TABLE ai_chat_conversations (
            id text PRIMARY KEY,
            context text NOT NULL,
            subject_id text NOT NULL,
            created_at timestamptz NOT NULL,
            updated_at timestamptz NOT NULL,
            activity bigint NOT NULL,
            metadata text NOT NULL,
            rating smallint CHECK (rating BETWEEN 1 AND 5),
            comment text,
            version bigint NOT NULL DEFAULT 0
        )""",
        """CREATE INDEX ai_chat_conversations_by_activity
            ON ai_chat_conversations (context, subject_id, activity DESC)""",
        """CREATE TABLE ai_chat_messages (
            conversation_id text NOT NULL
                REFERENCES ai_chat_conversations (id) ON DELETE CASCADE,
            seq bigint NOT NULL,
            message_id text NOT NULL,
            digest bytea NOT NULL,
            created_at timestamptz NOT NULL,
            body text NOT NULL,
            PRIMARY KEY (conversation_id, seq),
            UNIQUE (conversation_id, message_id)
        )""",
        "CREATE SEQUENCE ai_chat_activity",
        # One round trip per append: the row lock, the idempotency check, the version
        # check and the writes run in the server. Statuses: ok, not-found, duplicate
        # (r_version is the stored seq, r_detail the message id), conflict.
        """CREATE FUNCTION ai_chat_append(
            p_id text, p_expected bigint, p_ids text[], p_digests bytea[], p_bodies text[],
            p_now timestamptz
        ) RETURNS TABLE (
            r_status text, r_version bigint, r_seqs bigint[], r_stored integer, r_detail text
        ) LANGUAGE plpgsql AS $$
        DECLARE
            v_version bigint;
            v_updated timestamptz;
            v_next bigint;
            v_seqs bigint[] := '{}';
            v_seq bigint;
            v_digest bytea;
            v_now timestamptz;
        BEGIN
            SELECT c.version, c.updated_at INTO v_version, v_updated
                FROM ai_chat_conversations c WHERE c.id = p_id FOR UPDATE;
            IF NOT FOUND THEN
                RETURN QUERY SELECT 'not-found', NULL::bigint, NULL::bigint[], 0, NULL::text;
                RETURN;
            END IF;
            v_next := v_version;
            FOR i IN 1 .. coalesce(array_length(p_ids, 1), 0) LOOP
                SELECT m.seq, m.digest INTO v_seq, v_digest FROM ai_chat_messages m
                    WHERE m.conversation_id = p_id AND m.message_id = p_ids[i];
                IF FOUND THEN
                    IF v_digest <> p_digests[i] THEN
                        RETURN QUERY SELECT 'duplicate', v_seq, NULL::bigint[], 0, p_ids[i];
                        RETURN;
                    END IF;
                    v_seqs := v_seqs || v_seq;
                ELSE
                    v_next := v_next + 1;
                    v_seqs := v_seqs || v_next;
                END IF;
            END LOOP;
            IF v_next = v_version THEN
                RETURN QUERY SELECT 'ok', v_version, v_seqs, 0, NULL::text;
                RETURN;
            END IF;
            IF p_expected IS NOT NULL AND p_expected <> v_version THEN
                RETURN QUERY SELECT 'conflict', v_version, NULL::bigint[], 0, NULL::text;
                RETURN;
            END IF;
            v_now := greatest(p_now, v_updated);
            INSERT INTO ai_chat_messages (conversation_id, seq, message_id, digest, created_at, body)
                SELECT p_id, s.seq, s.id, s.digest, v_now, s.body
                FROM unnest(v_seqs, p_ids, p_digests, p_bodies) AS s (seq, id, digest, body)
                WHERE s.seq > v_version;
            UPDATE ai_chat_conversations SET version = v_next, updated_at = v_now,
                activity = nextval('ai_chat_activity') WHERE id = p_id;
            RETURN QUERY SELECT 'ok', v_next, v_seqs, (v_next - v_version)::integer, NULL::text;
        END
        $$""",
    ),
)
SCHEMA_VERSION = len(_MIGRATIONS)

_COLUMNS = "id, context, subject_id, created_at, updated_at, metadata, rating, comment, version"

LIST_CONVERSATIONS_SQL: LiteralString = (
    f"SELECT {_COLUMNS} FROM ai_chat_conversations WHERE context = %s AND subject_id = %s "
    "ORDER BY activity DESC LIMIT %s"
)
"""The query behind ``find_latest`` and ``list_conversations`` (for query plans)."""


def _utc(moment: datetime) -> datetime:
    return moment.astimezone(UTC)


def _record(row: Sequence[Any]) -> Conversation:
    return Conversation(
        id=row[0],
        context=row[1],
        subject_id=row[2],
        created_at=_utc(row[3]),
        updated_at=_utc(row[4]),
        metadata=decode_json(row[5]),
        rating=row[6],
        comment=row[7],
        version=row[8],
    )


class _SharedConnection:
    """A caller's single connection, used by one thread at a time.

    Each call is its own transaction, committed at its end (as a pool's connection is),
    unless the connection is in autocommit mode: otherwise a read would leave a
    transaction open and every later write would only be a savepoint inside it, never
    committed.
    """

    def __init__(self, conn: psycopg.Connection[TupleRow]) -> None:
        self._conn = conn
        self._lock = threading.Lock()

    @contextmanager
    def connection(self) -> Generator[psycopg.Connection[TupleRow]]:
        with self._lock:
            conn = self._conn
            if conn.autocommit:
                yield conn
                return
            if conn.info.transaction_status != TransactionStatus.IDLE:
                raise StoreError(
                    "the psycopg.Connection passed to PostgresConversationStore is inside a "
                    "transaction of its own: commit or roll it back first (the store commits "
                    "each of its calls), or pass an autocommit connection or a pool"
                )
            with conn.transaction():
                yield conn


def _migrate(conn: psycopg.Connection[TupleRow]) -> None:
    with conn.transaction():
        conn.execute("SELECT pg_advisory_xact_lock(%s)", (_MIGRATION_LOCK,))
        conn.execute("CREATE TABLE IF NOT EXISTS ai_chat_schema (version integer NOT NULL)")
        row = conn.execute("SELECT version FROM ai_chat_schema").fetchone()
        found: int = 0 if row is None else row[0]
        if found > SCHEMA_VERSION:
            raise SchemaVersionError(found, SCHEMA_VERSION)
        for step in _MIGRATIONS[found:]:
            for statement in step:
                conn.execute(statement)
        if row is None:
            conn.execute("INSERT INTO ai_chat_schema (version) VALUES (%s)", (SCHEMA_VERSION,))
        elif found != SCHEMA_VERSION:
            conn.execute("UPDATE ai_chat_schema SET version = %s", (SCHEMA_VERSION,))


class PostgresConversationStore(AsyncClosing):
    """A :class:`ConversationStore` in PostgreSQL, for deployments on several machines.

    Uses psycopg 3's synchronous API in anyio worker threads, so it runs on trio as well
    as asyncio and never blocks the event loop; at most as many calls run at once as
    the pool has connections (the rest wait in the event loop, not in threads).

    Appends lock the conversation's row (``SELECT ... FOR UPDATE``), so appends to one
    conversation are serialized and sequence order equals commit order, while appends
    to other conversations proceed in parallel. Reads are single statements, so each
    sees one snapshot. The schema is created or migrated once at open, under a
    transaction-scoped advisory lock, so processes starting together migrate once; a
    schema newer than this code raises :class:`SchemaVersionError`. Tables are created
    in the connection's ``search_path`` (set ``options=-csearch_path=...`` in the DSN
    to use another schema).

    Messages once loaded stay decoded in memory (a log is append-only and a stored
    message never changes), up to ``cache_chars`` characters of their stored JSON, the
    least recently loaded conversations dropped first: loading a conversation again
    reads only the messages appended since, in one snapshot, whichever machine
    appended them. This assumes the tables are changed only through stores (``0``
    turns the cache off).

    Cancellation: a call cancelled while its thread runs waits for the thread (the
    transaction commits or rolls back as a whole) and is then cancelled; retrying a
    cancelled append is safe.

    Args:
        dsn_or_pool: a connection string (the store creates, and closes, its own
            ``psycopg_pool.ConnectionPool``), or a caller's ``ConnectionPool`` or
            ``psycopg.Connection``, which the store uses and never closes.
        limits: the bounds one appended batch (and metadata) is held to.
        max_connections: the size of the pool the store creates from a DSN.
        open_timeout: seconds to wait for the first connection when opening.
        cache_chars: the stored JSON text of the decoded messages kept in memory, at
            most (8,000,000 by default; 0 turns the cache off).
    """

    def __init__(
        self,
        dsn_or_pool: str | psycopg_pool.ConnectionPool[Any] | psycopg.Connection[Any],
        *,
        limits: JSONLimits = DEFAULT_STORE_LIMITS,
        max_connections: int = 10,
        open_timeout: float = 30.0,
        cache_chars: int = DEFAULT_CACHE_CHARS,
    ) -> None:
        self._limits = limits
        self._cache = MessageCache(check_cache_chars(cache_chars))
        self._open_timeout = open_timeout
        self._owned_pool: psycopg_pool.ConnectionPool[Any] | None = None
        self._source: psycopg_pool.ConnectionPool[Any] | _SharedConnection
        self._pool_spent = False  # the owned pool was opened (or tried to be) once
        if isinstance(dsn_or_pool, str):
            self._dsn = dsn_or_pool
            self._max_connections = max_connections
            self._owned_pool = self._new_pool()
            self._source = self._owned_pool
            slots = max_connections
        elif isinstance(dsn_or_pool, psycopg_pool.ConnectionPool):
            self._source = dsn_or_pool
            slots = dsn_or_pool.max_size
        elif isinstance(dsn_or_pool, psycopg.Connection):  # pyright: ignore[reportUnnecessaryIsInstance]
            self._source = _SharedConnection(dsn_or_pool)
            slots = 1
        else:
            raise TypeError(
                "dsn_or_pool must be a DSN string, a psycopg_pool.ConnectionPool or a "
                f"psycopg.Connection, got {type(dsn_or_pool).__name__}"
            )
        self._limiter = anyio.CapacityLimiter(slots)
        self._open_lock = anyio.Lock()
        self._opened = False
        self._closed = False
        self._running = 0
        self._idle = anyio.Event()

    def _new_pool(self) -> psycopg_pool.ConnectionPool[Any]:
        return psycopg_pool.ConnectionPool(
            self._dsn,
            min_size=1,
            max_size=self._max_connections,
            open=False,
            kwargs={"autocommit": True},
            name="ai_chat-store",
        )

    async def __aenter__(self) -> Self:
        await self._open()
        return self

    # --- opening and closing -----------------------------------------------------------

    async def _open(self) -> None:
        if self._opened and not self._closed:
            return
        async with self._open_lock:
            if self._closed:
                raise StoreError("the conversation store is closed")
            if not self._opened:
                try:
                    await anyio.to_thread.run_sync(self._open_sync, limiter=self._limiter)
                except psycopg.Error as exc:
                    raise StoreError(f"could not open the PostgreSQL store: {exc}") from exc
                self._opened = True

    def _open_sync(self) -> None:
        pool = self._owned_pool
        if pool is not None and self._pool_spent:
            # A pool that failed to open (or to migrate) was closed, and a closed pool
            # cannot be reopened: a new attempt gets a new pool.
            pool = self._owned_pool = self._new_pool()
            self._source = pool
        if pool is not None:
            self._pool_spent = True
            pool.open(wait=True, timeout=self._open_timeout)
        try:
            with self._source.connection() as conn:
                _migrate(conn)
        except BaseException:
            if pool is not None:
                pool.close()
            raise

    async def aclose(self) -> None:
        """Close the pool the store created (a caller's pool or connection stays open).

        Idempotent; waits for running calls first.
        """
        if self._closed:
            return
        self._closed = True
        self._cache.clear()
        with anyio.CancelScope(shield=True):
            async with self._open_lock:
                while self._running:
                    await self._idle.wait()
                if self._owned_pool is not None and self._opened:
                    await anyio.to_thread.run_sync(self._owned_pool.close)

    # --- running work in threads -------------------------------------------------------

    async def _run(self, work: Callable[[psycopg.Connection[TupleRow]], _T]) -> _T:
        await self._open()
        if self._closed:
            raise StoreError("the conversation store is closed")
        self._running += 1
        try:
            return await anyio.to_thread.run_sync(self._run_sync, work, limiter=self._limiter)
        finally:
            self._running -= 1
            if not self._running:
                self._idle.set()
                self._idle = anyio.Event()

    def _run_sync(self, work: Callable[[psycopg.Connection[TupleRow]], _T]) -> _T:
        with self._source.connection() as conn:
            return work(conn)

    async def _call(self, operation: str, work: Callable[[psycopg.Connection[TupleRow]], _T]) -> _T:
        try:
            return await self._run(work)
        except psycopg.Error as exc:
            raise StoreError(f"PostgreSQL {operation} failed: {exc}") from exc

    # --- the contract ------------------------------------------------------------------

    async def create_conversation(
        self,
        context: str,
        subject_id: str,
        metadata: Mapping[str, object] | None = None,
        *,
        conversation_id: str | None = None,
    ) -> Conversation:
        """Create an empty conversation; see :meth:`ConversationStore.create_conversation`."""
        new_id, frozen = check_create(context, subject_id, metadata, conversation_id, self._limits)
        metadata_text = encode_json(frozen)
        now = from_micros(now_micros())

        def work(conn: psycopg.Connection[TupleRow]) -> Conversation:
            with _atomic(conn):
                row = conn.execute(
                    "INSERT INTO ai_chat_conversations (id, context, subject_id, created_at, "
                    "updated_at, activity, metadata, version) "
                    "VALUES (%s, %s, %s, %s, %s, nextval('ai_chat_activity'), %s, 0) "
                    "ON CONFLICT (id) DO NOTHING RETURNING id",
                    (new_id, context, subject_id, now, now, metadata_text),
                ).fetchone()
            if row is None:
                raise ConversationExistsError(new_id)
            return new_record(new_id, context, subject_id, frozen, now)

        return await self._call("create", work)

    async def find_by_id(self, conversation_id: str) -> Conversation | None:
        """The conversation with this id, or ``None``."""
        check_key("conversation_id", conversation_id)

        def work(conn: psycopg.Connection[TupleRow]) -> Conversation | None:
            row = conn.execute(
                f"SELECT {_COLUMNS} FROM ai_chat_conversations WHERE id = %s",
                (conversation_id,),
            ).fetchone()
            return None if row is None else _record(row)

        return await self._call("find_by_id", work)

    async def find_latest(self, context: str, subject_id: str) -> Conversation | None:
        """The subject's most recently active conversation in this context, or ``None``."""
        check_key("context", context)
        check_key("subject_id", subject_id)

        def work(conn: psycopg.Connection[TupleRow]) -> Conversation | None:
            row = conn.execute(LIST_CONVERSATIONS_SQL, (context, subject_id, 1)).fetchone()
            return None if row is None else _record(row)

        return await self._call("find_latest", work)

    async def list_conversations(
        self, context: str, subject_id: str, *, limit: int = 20
    ) -> tuple[Conversation, ...]:
        """The subject's conversations in this context, most recently active first."""
        count = check_listing(context, subject_id, limit)

        def work(conn: psycopg.Connection[TupleRow]) -> tuple[Conversation, ...]:
            rows = conn.execute(LIST_CONVERSATIONS_SQL, (context, subject_id, count)).fetchall()
            return tuple(_record(row) for row in rows)

        return await self._call("list_conversations", work)

    async def append_messages(
        self,
        conversation_id: str,
        messages: Sequence[object],
        *,
        expected_version: int | None = None,
    ) -> AppendResult:
        """Append a batch atomically; see :meth:`ConversationStore.append_messages`."""
        expected, batch = check_append(conversation_id, messages, expected_version, self._limits)

        def work(conn: psycopg.Connection[TupleRow]) -> AppendResult:
            return _append(conn, conversation_id, batch, expected)

        try:
            return await self._run(work)
        except psycopg.Error as exc:
            raise AppendError(conversation_id, type(self).__name__, str(exc)) from exc

    async def load_messages(
        self, conversation_id: str, *, after: int = 0, limit: int | None = None
    ) -> tuple[StoredMessage, ...]:
        """Messages with ``seq > after`` in order, at most ``limit``, from one snapshot."""
        start, count = check_load(conversation_id, after, limit)
        head, start, count = self._cache.serve(conversation_id, start, count)
        if count == 0 and head:  # all from the cache
            await anyio.lowlevel.checkpoint()
            if self._closed:
                raise StoreError("the conversation store is closed")
            return head
        # One statement, so one snapshot: the conversation's existence and its messages.
        query = (
            "SELECT m.seq, m.body, m.created_at FROM ai_chat_conversations c "
            "LEFT JOIN LATERAL (SELECT seq, body, created_at FROM ai_chat_messages "
            "WHERE conversation_id = c.id AND seq > %s ORDER BY seq LIMIT %s) m ON true "
            "WHERE c.id = %s ORDER BY m.seq"
        )

        def work(conn: psycopg.Connection[TupleRow]) -> tuple[tuple[StoredMessage, ...], int]:
            rows = conn.execute(query, (start, count, conversation_id)).fetchall()
            loaded = _stored(conversation_id, rows)
            return loaded, sum(len(row[1]) for row in rows) if loaded else 0

        loaded, chars = await self._call("load_messages", work)
        return self._cache.join(conversation_id, start, head, loaded, chars)

    async def load_recent_messages(
        self, conversation_id: str, count: int
    ) -> tuple[StoredMessage, ...]:
        """The last ``count`` messages, in sequence order, from one snapshot."""
        wanted = check_recent(conversation_id, count)
        query = (
            "SELECT m.seq, m.body, m.created_at FROM ai_chat_conversations c "
            "LEFT JOIN LATERAL (SELECT seq, body, created_at FROM ai_chat_messages "
            "WHERE conversation_id = c.id ORDER BY seq DESC LIMIT %s) m ON true "
            "WHERE c.id = %s ORDER BY m.seq"
        )

        def work(conn: psycopg.Connection[TupleRow]) -> tuple[StoredMessage, ...]:
            rows = conn.execute(query, (wanted, conversation_id)).fetchall()
            return _stored(conversation_id, rows)

        return await self._call("load_recent_messages", work)

    async def rate(
        self, conversation_id: str, rating: int, comment: str | None = None
    ) -> Conversation:
        """Set the rating and comment; see :meth:`ConversationStore.rate`."""
        checked_rating, checked_comment = check_rate(conversation_id, rating, comment)

        def work(conn: psycopg.Connection[TupleRow]) -> Conversation:
            with _atomic(conn):
                row = conn.execute(
                    "UPDATE ai_chat_conversations SET rating = %s, comment = %s "
                    f"WHERE id = %s RETURNING {_COLUMNS}",
                    (checked_rating, checked_comment, conversation_id),
                ).fetchone()
            if row is None:
                raise ConversationNotFoundError(conversation_id)
            return _record(row)

        return await self._call("rate", work)


def _stored(conversation_id: str, rows: list[TupleRow]) -> tuple[StoredMessage, ...]:
    if not rows:
        raise ConversationNotFoundError(conversation_id)
    if rows[0][0] is None:  # the conversation exists, without messages in range
        return ()
    return decode_rows(rows, _utc)


@contextmanager
def _atomic(conn: psycopg.Connection[TupleRow]) -> Generator[None]:
    """Make one statement atomic: in autocommit it is already (one round trip)."""
    if conn.autocommit:
        yield
    else:
        with conn.transaction():
            yield


def _append(
    conn: psycopg.Connection[TupleRow],
    conversation_id: str,
    batch: tuple[EncodedMessage, ...],
    expected: int | None,
) -> AppendResult:
    with _atomic(conn):
        row = conn.execute(
            "SELECT r_status, r_version, r_seqs, r_stored, r_detail "
            "FROM ai_chat_append(%s, %s, %s, %s, %s, %s)",
            (
                conversation_id,
                expected,
                [item.id for item in batch],
                [item.digest for item in batch],
                [item.body for item in batch],
                from_micros(now_micros()),
            ),
        ).fetchone()
    assert row is not None
    status, version, seqs, stored, detail = row
    if status == "ok":
        return AppendResult(tuple(seqs), version, stored)
    if status == "not-found":
        raise ConversationNotFoundError(conversation_id)
    if status == "duplicate":
        raise DuplicateMessageError(
            conversation_id,
            detail,
            f"already stored as message #{version} with different content; a new message "
            "needs a new id",
        )
    assert expected is not None
    raise VersionConflictError(conversation_id, expected, version)
