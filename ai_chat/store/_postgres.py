"""The PostgreSQL store: psycopg 3's sync API in threads of its own (asyncio and trio)."""

from __future__ import annotations

import threading
from collections.abc import Callable, Generator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from functools import partial
from typing import Any, LiteralString, Self, TypeVar

import anyio
import anyio.lowlevel
import anyio.to_thread

from .._closing import AsyncClosing
from ..limits import JSONLimits
from ._cache import DEFAULT_CACHE_CHARS, MessageCache, check_cache_chars
from ._checks import (
    DEFAULT_STORE_LIMITS,
    check_create,
    check_key,
    check_listing,
    check_load,
    check_rate,
    check_recent,
    new_record,
)
from ._codec import (
    EncodedMessage,
    check_append,
    decode_json,
    decode_rows,
    encode_json,
    from_micros,
    now_micros,
)
from ._errors import (
    AppendError,
    ConversationExistsError,
    ConversationNotFoundError,
    DuplicateMessageError,
    StoreError,
    VersionConflictError,
)
from ._group import GroupCommit
from ._postgres_schema import migrate
from ._records import AppendResult, Conversation, StoredMessage
from ._threads import ThreadWorker

try:
    import psycopg
    import psycopg_pool
    from psycopg.pq import TransactionStatus
    from psycopg.rows import TupleRow
except ImportError as exc:  # pragma: no cover - exercised without the extra
    raise ImportError(
        "PostgresConversationStore needs psycopg 3 and psycopg-pool: "
        "pip install 'ai_chat[postgres]'"
    ) from exc

__all__ = ["LIST_CONVERSATIONS_SQL", "PostgresConversationStore"]

_T = TypeVar("_T")


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


_Source = psycopg_pool.ConnectionPool[Any] | _SharedConnection


_GROUP_MAX = 64  # appends committed together at most
_GROUP_CHARS = 4_000_000  # and their JSON text at most (a larger append goes alone)


@dataclass(eq=False, slots=True)
class _Append:
    """One queued append, and what came of it in its group."""

    conversation_id: str
    batch: tuple[EncodedMessage, ...]
    expected: int | None
    chars: int
    # The result, the error to raise, or None: the group skipped it (its conversation
    # was locked elsewhere) or failed as a whole, so it is to be appended alone.
    outcome: AppendResult | Exception | None = None


def _on_connection(source: _Source, work: Callable[[psycopg.Connection[TupleRow]], _T]) -> _T:
    """Run ``work`` on a connection from the source, for the length of the call."""
    with source.connection() as conn:
        return work(conn)


class PostgresConversationStore(AsyncClosing):
    """A :class:`ConversationStore` in PostgreSQL, for deployments on several machines.

    Uses psycopg 3's synchronous API in threads of the store's own (one per connection
    the pool may lend it, started when first needed and fed through queues), so it
    runs on trio as well as asyncio and never blocks the event loop; at most as many
    calls run at once as the pool has connections (the rest wait in the event loop,
    not in threads).

    Appends lock the conversation's row (``SELECT ... FOR UPDATE``), so appends to one
    conversation are serialized and sequence order equals commit order, while appends
    to other conversations proceed in parallel. Appends queued while the store's
    previous group of appends ran are committed together (group commit: one round
    trip, one transaction, one WAL flush), each checked before anything of it is
    written, so one refused leaves the others whole. A group never waits for a row lock
    held elsewhere (``FOR UPDATE SKIP LOCKED``): an append whose conversation is locked
    by another transaction is run alone and waits for the lock without holding up the
    group, so a group cannot deadlock with other processes. Reads are single
    statements, so each sees one snapshot (a load that finds no messages then checks
    that the conversation exists: conversations are never deleted, so the two agree).
    The schema is created or migrated once at open, under a transaction-scoped advisory
    lock, so processes starting together migrate once; a schema newer than this code
    raises :class:`SchemaVersionError`. Tables are created in the connection's
    ``search_path`` (set ``options=-csearch_path=...`` in the DSN to use another
    schema).

    Messages once loaded stay decoded in memory (a log is append-only and a stored
    message never changes), up to ``cache_chars`` characters of their stored JSON, the
    least recently loaded conversations dropped first: loading a conversation again
    reads only the messages appended since, in one snapshot, whichever machine
    appended them. This assumes the tables are changed only through stores (``0``
    turns the cache off).

    Cancellation: a call cancelled while its thread runs waits for the thread (the
    transaction commits or rolls back as a whole) and is then cancelled; an append
    cancelled while still queued is never run; retrying a cancelled append is safe.

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
        self._limiter = anyio.CapacityLimiter(1)  # opening and closing
        # A call holding a slot always finds an idle thread (started when first needed),
        # which takes a connection from the source for the call.
        self._slots = anyio.Semaphore(slots, fast_acquire=True)
        self._workers: list[ThreadWorker] = []
        self._idle: list[ThreadWorker] = []
        self._appends = GroupCommit[_Append](
            self._run_appends, max_jobs=_GROUP_MAX, max_chars=_GROUP_CHARS
        )
        self._open_lock = anyio.Lock()
        self._opened = False
        self._closed = False
        self._running = 0
        self._all_done = anyio.Event()

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
                migrate(conn)
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
                    await self._all_done.wait()
                workers, self._workers, self._idle = self._workers, [], []
                for worker in workers:
                    await anyio.to_thread.run_sync(worker.close, limiter=self._limiter)
                if self._owned_pool is not None and self._opened:
                    await anyio.to_thread.run_sync(self._owned_pool.close, limiter=self._limiter)

    # --- running work in threads -------------------------------------------------------

    async def _run(self, work: Callable[[psycopg.Connection[TupleRow]], _T]) -> _T:
        if not self._opened:
            await self._open()
        if self._closed:
            raise StoreError("the conversation store is closed")
        await anyio.lowlevel.checkpoint_if_cancelled()
        self._running += 1
        try:
            async with self._slots:  # fast_acquire: no trip through the loop when free
                if self._closed:
                    raise StoreError("the conversation store is closed")
                worker = self._idle.pop() if self._idle else self._new_worker()
                try:
                    return await worker.run(partial(_on_connection, self._source, work))
                finally:
                    self._idle.append(worker)
        finally:
            self._running -= 1
            if not self._running:
                self._all_done.set()
                self._all_done = anyio.Event()

    def _new_worker(self) -> ThreadWorker:
        worker = ThreadWorker("ai_chat-postgres")
        self._workers.append(worker)
        return worker

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
        job = _Append(conversation_id, batch, expected, sum(len(item.body) for item in batch))
        try:
            outcome = await self._append_in_group(job)
            if outcome is None:  # skipped, or the group failed: append it alone
                outcome = await self._run(partial(_append, job=job))
        except psycopg.Error as exc:
            raise AppendError(conversation_id, type(self).__name__, str(exc)) from exc
        if isinstance(outcome, Exception):
            raise outcome
        return outcome

    async def _append_in_group(self, job: _Append) -> AppendResult | Exception | None:
        """Append in one transaction with the appends queued meanwhile (group commit:
        one commit, one WAL flush, one round trip for all of them); see
        :class:`GroupCommit` for cancellation."""
        if not self._opened:
            await self._open()
        if self._closed:
            raise StoreError("the conversation store is closed")
        await self._appends.submit(job)
        return job.outcome

    async def _run_appends(self, group: list[_Append]) -> None:
        """Run one group of appends (``_appends`` holds its lock)."""
        try:
            await self._run(partial(_append_group, group=group))
        except Exception:  # each of them is appended alone
            for queued in group:
                queued.outcome = None

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
        query: LiteralString = (
            "SELECT seq, body, created_at FROM ai_chat_messages "
            "WHERE conversation_id = %s AND seq > %s ORDER BY seq LIMIT %s"
        )

        def work(conn: psycopg.Connection[TupleRow]) -> tuple[tuple[StoredMessage, ...], int]:
            # Binary results: no text to parse for the numbers and times.
            rows = conn.execute(query, (conversation_id, start, count), binary=True).fetchall()
            if not rows:
                if not head:  # a cached prefix shows the conversation exists
                    _require(conn, conversation_id)
                return (), 0
            return _stored(rows), sum(len(row[1]) for row in rows)

        loaded, chars = await self._call("load_messages", work)
        return self._cache.join(conversation_id, start, head, loaded, chars)

    async def load_recent_messages(
        self, conversation_id: str, count: int
    ) -> tuple[StoredMessage, ...]:
        """The last ``count`` messages, in sequence order, from one snapshot."""
        wanted = check_recent(conversation_id, count)
        query: LiteralString = (
            "SELECT seq, body, created_at FROM ai_chat_messages "
            "WHERE conversation_id = %s ORDER BY seq DESC LIMIT %s"
        )

        def work(conn: psycopg.Connection[TupleRow]) -> tuple[StoredMessage, ...]:
            rows = conn.execute(query, (conversation_id, wanted), binary=True).fetchall()
            if not rows:
                _require(conn, conversation_id)
                return ()
            rows.reverse()
            return _stored(rows)

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


def _stored(rows: list[TupleRow]) -> tuple[StoredMessage, ...]:
    return decode_rows(rows, _utc)


def _require(conn: psycopg.Connection[TupleRow], conversation_id: str) -> None:
    """Raise unless the conversation exists: a load found no messages, and it is not
    known whether the conversation has none or does not exist. Conversations are never
    deleted, so this later statement agrees with the load's snapshot."""
    row = conn.execute(
        "SELECT 1 FROM ai_chat_conversations WHERE id = %s", (conversation_id,)
    ).fetchone()
    if row is None:
        raise ConversationNotFoundError(conversation_id)


@contextmanager
def _atomic(conn: psycopg.Connection[TupleRow]) -> Generator[None]:
    """Make one statement atomic: in autocommit it is already (one round trip)."""
    if conn.autocommit:
        yield
    else:
        with conn.transaction():
            yield


_GROUP_SQL: LiteralString = (
    "SELECT r_status, r_version, r_stored, r_detail, r_seqs FROM ai_chat_append_group("
    "%b::text[], %b::bigint[], %b::integer[], %b::text[], %b::bytea[], %b::text[], %b)"
)


def _append_group(conn: psycopg.Connection[TupleRow], group: list[_Append]) -> None:
    """Run the group's appends in one transaction (the function locks their rows in id
    order, skipping rows locked elsewhere) and set each job's outcome."""
    ids: list[str] = []
    digests: list[bytes] = []
    bodies: list[str] = []
    for job in group:
        for item in job.batch:
            ids.append(item.id)
            digests.append(item.digest)
            bodies.append(item.body)
    with _atomic(conn):
        row = conn.execute(
            _GROUP_SQL,
            (
                [job.conversation_id for job in group],
                [job.expected for job in group],
                [len(job.batch) for job in group],
                ids,
                digests,
                bodies,
                from_micros(now_micros()),
            ),
        ).fetchone()
    assert row is not None
    statuses, versions, stored, details, seqs = row
    at = 0
    for job, status, version, count, detail in zip(
        group, statuses, versions, stored, details, strict=True
    ):
        if status == "ok":
            size = len(job.batch)
            job.outcome = AppendResult(tuple(seqs[at : at + size]), version, count)
            at += size
        elif status == "busy":
            job.outcome = None
        else:
            job.outcome = _refusal(job, status, version, detail)


_APPEND_SQL: LiteralString = (
    "SELECT r_status, r_version, r_seqs, r_stored, r_detail "
    "FROM ai_chat_append(%b, %b, %b, %b, %b, %b)"
)


def _append(conn: psycopg.Connection[TupleRow], job: _Append) -> AppendResult | Exception:
    """Append one batch alone, waiting for its conversation's row lock."""
    batch = job.batch
    # Binary parameters: arrays of text and bytea sent as they are, not quoted and escaped.
    with _atomic(conn):
        row = conn.execute(
            _APPEND_SQL,
            (
                job.conversation_id,
                job.expected,
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
    return _refusal(job, status, version, detail)


def _refusal(job: _Append, status: str, version: int, detail: str | None) -> Exception:
    """The error for an append the database refused (nothing of it was written)."""
    if status == "not-found":
        return ConversationNotFoundError(job.conversation_id)
    if status == "duplicate":
        return DuplicateMessageError(
            job.conversation_id,
            detail or "",
            f"already stored as message #{version} with different content; a new message "
            "needs a new id",
        )
    assert job.expected is not None
    return VersionConflictError(job.conversation_id, job.expected, version)
