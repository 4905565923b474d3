"""The SQLite store: the embedded default, stdlib ``sqlite3`` with a thread per connection."""

from __future__ import annotations

import contextlib
import os
import sqlite3
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import partial
from typing import Any, Generic, Literal, Self, TypeVar, cast

import anyio
import anyio.lowlevel
import anyio.to_thread

from .._closing import AsyncClosing
from .._errors import ConfigurationError
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
    plan_append,
)
from ._errors import (
    AppendError,
    ConversationExistsError,
    ConversationNotFoundError,
    StoreError,
)
from ._group import GroupCommit
from ._records import AppendResult, Conversation, StoredMessage
from ._sqlite_schema import migrate
from ._threads import ThreadWorker

__all__ = [
    "LIST_CONVERSATIONS_SQL",
    "SYNCHRONOUS",
    "SQLiteConversationStore",
    "append_lookup_sql",
]

_T = TypeVar("_T")

SYNCHRONOUS = "FULL"
"""The writer's ``PRAGMA synchronous`` by default: in WAL mode, each commit is synced to
disk before it returns, so it survives a power loss or an operating system crash."""

_COLUMNS = "id, context, subject_id, created_at, updated_at, metadata, rating, comment, version"
LIST_CONVERSATIONS_SQL = (
    f"SELECT {_COLUMNS} FROM ai_chat_conversations WHERE context = ? AND subject_id = ? "
    "ORDER BY activity DESC LIMIT ?"
)
"""The query behind ``find_latest`` and ``list_conversations`` (for query plans)."""
# Activity orders one subject's conversations, so it only needs to grow within the subject:
# the next value is one more than the subject's highest, read from the find_latest index.
# Writes are serialized (BEGIN IMMEDIATE), so two never read the same highest value.
_NEXT_ACTIVITY = (
    "coalesce((SELECT activity FROM ai_chat_conversations WHERE context = ? AND "
    "subject_id = ? ORDER BY activity DESC LIMIT 1), 0) + 1"
)
_ID_CHUNK = 500  # ids per IN (...) query, well under SQLite's bound on parameters
# Without statistics the planner would rather range over a conversation's messages by
# primary key than look each id up: it is told.
_BY_MESSAGE_ID = "INDEXED BY ai_chat_messages_by_message_id"


def append_lookup_sql(ids: int) -> str:
    """The statement an append starts with: the conversation, its subject's latest
    activity, and which of ``ids`` message ids are stored already (one row each, or one
    row of NULLs)."""
    return (
        "SELECT c.version, c.updated_at, c.activity, (SELECT l.activity FROM "
        "ai_chat_conversations l WHERE l.context = c.context AND l.subject_id = c.subject_id "
        "ORDER BY l.activity DESC LIMIT 1), m.message_id, m.seq, m.digest "
        f"FROM ai_chat_conversations c LEFT JOIN ai_chat_messages m {_BY_MESSAGE_ID} "
        f"ON m.conversation_id = c.id AND m.message_id IN ({', '.join('?' * ids)}) "
        "WHERE c.id = ?"
    )


def _record(row: Sequence[Any]) -> Conversation:
    return Conversation(
        id=row[0],
        context=row[1],
        subject_id=row[2],
        created_at=from_micros(row[3]),
        updated_at=from_micros(row[4]),
        metadata=decode_json(row[5]),
        rating=row[6],
        comment=row[7],
        version=row[8],
    )


def _connect(
    path: str, busy_timeout: float, *, reader: bool, synchronous: str = SYNCHRONOUS
) -> sqlite3.Connection:
    # isolation_level=None: no implicit transactions; every transaction below is explicit.
    conn = sqlite3.connect(
        path, timeout=busy_timeout, isolation_level=None, check_same_thread=False
    )
    try:
        conn.execute(f"PRAGMA busy_timeout = {int(busy_timeout * 1000)}")
        conn.execute("PRAGMA foreign_keys = ON")
        if reader:
            conn.execute("PRAGMA query_only = ON")
        else:
            conn.execute("PRAGMA journal_mode = WAL")
            conn.execute(f"PRAGMA synchronous = {synchronous}")
    except BaseException:
        conn.close()
        raise
    return conn


_GROUP_MAX = 256  # writes committed together at most
_GROUP_CHARS = 16_000_000  # and their JSON text at most (a larger write goes alone)


@dataclass(eq=False, slots=True)
class _Job(Generic[_T]):
    """One queued write: its work, and what came of it."""

    work: Callable[[sqlite3.Connection], _T]
    chars: int = 0
    done: bool = False
    result: _T | None = None
    error: BaseException | None = None


def _run_group(conn: sqlite3.Connection, group: list[_Job[Any]]) -> None:
    """Run the jobs in one ``BEGIN IMMEDIATE`` transaction, each in its own savepoint."""
    try:
        conn.execute("BEGIN IMMEDIATE")
        try:
            if len(group) == 1:
                group[0].result = group[0].work(conn)
            else:
                for job in group:
                    conn.execute("SAVEPOINT job")
                    try:
                        job.result = job.work(conn)
                    except Exception as exc:
                        conn.execute("ROLLBACK TO job")
                        job.error = exc
                    conn.execute("RELEASE job")
            conn.execute("COMMIT")
        except BaseException:
            with contextlib.suppress(sqlite3.Error):
                conn.execute("ROLLBACK")
            raise
    except BaseException as exc:
        # Nothing of the transaction was committed: every job failed with it.
        for job in group:
            job.result = None
            job.error = exc
        if not isinstance(exc, Exception):
            raise
    finally:
        for job in group:
            job.done = True


class _Connection:
    """A connection with a thread of its own (each read connection has one, and so does
    the writer)."""

    __slots__ = ("conn", "thread")

    def __init__(self, conn: sqlite3.Connection, name: str) -> None:
        self.conn = conn
        self.thread = ThreadWorker(f"ai_chat-sqlite-{name}")

    async def run(self, work: Callable[[sqlite3.Connection], _T]) -> _T:
        """Run ``work`` on the connection, in its thread."""
        return await self.thread.run(partial(work, self.conn))

    def close(self) -> None:
        """End the thread, then close the connection (blocking: call it in a thread)."""
        self.thread.close()
        self.conn.close()


class SQLiteConversationStore(AsyncClosing):
    """A :class:`ConversationStore` in an SQLite database file: the embedded default.

    Runs the standard library's ``sqlite3`` with a thread per connection, so it never blocks
    the event loop, on asyncio and trio. The database is in WAL mode (readers never wait
    for the writer) with ``synchronous=FULL`` (a committed append survives a power
    loss). Writes run in ``BEGIN IMMEDIATE`` transactions on one writer connection,
    serialized in the event loop (SQLite has one writer at a time; appends are short);
    other processes are waited for up to ``busy_timeout`` seconds. Reads use a small
    pool of read-only connections, each read one snapshot.

    The schema is created or migrated once, when the store opens (on first use or on
    ``async with``); its version is the database's ``user_version``. A database
    migrated by a newer ai_chat raises :class:`SchemaVersionError`.

    Messages once loaded stay decoded in memory (a log is append-only and a stored
    message never changes), up to ``cache_chars`` characters of their stored JSON, the
    least recently loaded conversations dropped first: loading a conversation again
    reads only the messages appended since, in one snapshot, whichever process
    appended them. This assumes the tables are changed only through stores (``0``
    turns the cache off).

    Cancellation: a call cancelled while its thread runs waits for the thread (the
    transaction commits or rolls back as a whole) and is then cancelled; an append so
    cancelled may have been stored, and retrying it is a no-op that returns the
    original sequence numbers.

    Args:
        path: the database file (created if missing), or ``":memory:"`` for a private
            in-memory database (one connection, reads and writes serialized).
        limits: the bounds one appended batch (and metadata) is held to.
        busy_timeout: seconds to wait for another process's write lock.
        readers: read connections (reads running at once).
        cache_chars: the stored JSON text of the decoded messages kept in memory, at
            most (8,000,000 by default; 0 turns the cache off).
        synchronous: ``"FULL"`` (the default): each commit is synced to disk before the
            call returns, so it survives a power loss. ``"NORMAL"``: commits are synced
            at checkpoints only, which makes a single writer's appends faster; a commit
            still survives the process crashing, but the last ones before a power loss
            or an operating system crash may be lost (never half of one: the database
            stays consistent).
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        limits: JSONLimits = DEFAULT_STORE_LIMITS,
        busy_timeout: float = 5.0,
        readers: int = 4,
        cache_chars: int = DEFAULT_CACHE_CHARS,
        synchronous: Literal["FULL", "NORMAL"] = "FULL",
    ) -> None:
        if synchronous not in ("FULL", "NORMAL"):
            raise ConfigurationError("synchronous", synchronous, '"FULL" or "NORMAL"')
        self._synchronous = synchronous
        self._path = os.fspath(path)
        self._cache = MessageCache(check_cache_chars(cache_chars))
        self._memory = self._path == ":memory:"
        self._limits = limits
        self._busy_timeout = busy_timeout
        self._reader_count = 1 if self._memory else readers
        self._open_lock = anyio.Lock()
        self._writes = GroupCommit[_Job[Any]](
            self._run_writes, max_jobs=_GROUP_MAX, max_chars=_GROUP_CHARS
        )
        # Threads: one per connection, its own (anyio's for opening and closing); a read
        # holding a slot always finds an idle reader.
        self._limiter = anyio.CapacityLimiter(1)
        self._read_slots = anyio.Semaphore(self._reader_count, fast_acquire=True)
        self._writer: _Connection | None = None
        self._readers: list[_Connection] = []
        self._idle: list[_Connection] = []
        self._closed = False

    @property
    def path(self) -> str:
        """The database file."""
        return self._path

    async def __aenter__(self) -> Self:
        await self._open()
        return self

    # --- opening and closing -----------------------------------------------------------

    async def _open(self) -> _Connection:
        if self._closed:
            raise StoreError("the conversation store is closed")
        if self._writer is not None:
            return self._writer
        async with self._open_lock:
            if self._closed:
                raise StoreError("the conversation store is closed")
            if self._writer is None:
                writer, readers = await anyio.to_thread.run_sync(
                    self._open_sync, limiter=self._limiter
                )
                if not self._memory:
                    self._readers = [_Connection(conn, "reader") for conn in readers]
                    self._idle = list(self._readers)
                self._writer = _Connection(writer, "writer")
            return self._writer

    def _open_sync(self) -> tuple[sqlite3.Connection, list[sqlite3.Connection]]:
        opened: list[sqlite3.Connection] = []
        try:
            writer = _connect(
                self._path, self._busy_timeout, reader=False, synchronous=self._synchronous
            )
            opened.append(writer)
            migrate(writer)
            if self._memory:
                return writer, [writer]
            for _ in range(self._reader_count):
                opened.append(_connect(self._path, self._busy_timeout, reader=True))
            return writer, opened[1:]
        except sqlite3.Error as exc:
            for conn in opened:
                conn.close()
            raise StoreError(f"could not open SQLite database {self._path!r}: {exc}") from exc
        except BaseException:
            for conn in opened:
                conn.close()
            raise

    async def aclose(self) -> None:
        """Close the database connections (idempotent; waits for running calls)."""
        if self._closed:
            return
        self._closed = True
        self._cache.clear()
        with anyio.CancelScope(shield=True):
            async with self._open_lock, self._writes.lock:
                for _ in range(self._reader_count):  # wait for running reads; keep them out
                    await self._read_slots.acquire()
                readers, writer = self._readers, self._writer
                self._writer = None
                self._readers = []
                self._idle = []
                for reader in readers:
                    await anyio.to_thread.run_sync(reader.close, limiter=self._limiter)
                if writer is not None:  # ends the writer's thread, closes its connection
                    await anyio.to_thread.run_sync(writer.close, limiter=self._limiter)

    # --- running work in threads -------------------------------------------------------

    async def _write(self, work: Callable[[sqlite3.Connection], _T], chars: int = 0) -> _T:
        """Run ``work`` in a write transaction, committed together with the writes that
        queued up meanwhile (group commit: one sync to disk for all of them).

        Each job runs in its own savepoint, so one that fails leaves no trace and does
        not affect the others; ``chars`` is the size of what it writes. A task cancelled
        while its job is still queued removes it (never run), a task cancelled after
        that finds it run (committed, or failed as a whole).
        """
        if self._writer is None or self._closed:
            await self._open()
        job = _Job[_T](work, chars)
        await self._writes.submit(job)
        if not job.done:  # cannot happen: a taken job always runs
            raise StoreError("a queued write was lost")
        if job.error is not None:
            raise job.error
        return cast(_T, job.result)

    async def _run_writes(self, group: list[_Job[Any]]) -> None:
        """Run one group of writes in the writer's thread (``_writes`` holds its lock)."""
        writer = self._writer
        if self._closed or writer is None:
            for job in group:
                job.error = StoreError("the conversation store is closed")
                job.done = True
            return
        await writer.run(partial(_run_group, group=group))

    async def _read(self, work: Callable[[sqlite3.Connection], _T]) -> _T:
        """Run ``work`` on a read connection. Each statement sees one snapshot: reads
        are single statements (a load checks for the conversation only when it found
        no messages; conversations are never deleted, so that is consistent)."""
        if self._writer is None:
            await self._open()
        if self._memory:
            async with self._writes.lock:
                writer = self._writer
                if self._closed or writer is None:
                    raise StoreError("the conversation store is closed")
                return await writer.run(work)
        if self._closed:
            raise StoreError("the conversation store is closed")
        await anyio.lowlevel.checkpoint_if_cancelled()
        async with self._read_slots:  # fast_acquire: no trip through the loop when free
            if self._closed:
                raise StoreError("the conversation store is closed")
            reader = self._idle.pop()  # the slot guarantees one
            try:
                return await reader.run(work)
            finally:
                self._idle.append(reader)

    async def _call(self, operation: str, run: Callable[[], Any]) -> Any:
        try:
            return await run()
        except sqlite3.Error as exc:
            raise StoreError(f"SQLite {operation} failed: {exc}") from exc

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

        def work(conn: sqlite3.Connection) -> Conversation:
            now = now_micros()
            inserted = conn.execute(
                "INSERT INTO ai_chat_conversations (id, context, subject_id, created_at, "
                f"updated_at, activity, metadata, version) SELECT ?, ?, ?, ?, ?, {_NEXT_ACTIVITY}, "
                "?, 0 WHERE true ON CONFLICT (id) DO NOTHING",  # WHERE: SQLite's upsert syntax
                (new_id, context, subject_id, now, now, context, subject_id, metadata_text),
            ).rowcount
            if not inserted:
                raise ConversationExistsError(new_id)
            return new_record(new_id, context, subject_id, frozen, from_micros(now))

        result: Conversation = await self._call("create", lambda: self._write(work))
        return result

    async def find_by_id(self, conversation_id: str) -> Conversation | None:
        """The conversation with this id, or ``None``."""
        check_key("conversation_id", conversation_id)

        def work(conn: sqlite3.Connection) -> Conversation | None:
            row = conn.execute(
                f"SELECT {_COLUMNS} FROM ai_chat_conversations WHERE id = ?", (conversation_id,)
            ).fetchone()
            return None if row is None else _record(row)

        result: Conversation | None = await self._call("find_by_id", lambda: self._read(work))
        return result

    async def find_latest(self, context: str, subject_id: str) -> Conversation | None:
        """The subject's most recently active conversation in this context, or ``None``."""
        check_key("context", context)
        check_key("subject_id", subject_id)

        def work(conn: sqlite3.Connection) -> Conversation | None:
            row = conn.execute(LIST_CONVERSATIONS_SQL, (context, subject_id, 1)).fetchone()
            return None if row is None else _record(row)

        try:
            return await self._read(work)
        except sqlite3.Error as exc:
            raise StoreError(f"SQLite find_latest failed: {exc}") from exc

    async def list_conversations(
        self, context: str, subject_id: str, *, limit: int = 20
    ) -> tuple[Conversation, ...]:
        """The subject's conversations in this context, most recently active first."""
        count = check_listing(context, subject_id, limit)

        def work(conn: sqlite3.Connection) -> tuple[Conversation, ...]:
            rows = conn.execute(LIST_CONVERSATIONS_SQL, (context, subject_id, count)).fetchall()
            return tuple(_record(row) for row in rows)

        result: tuple[Conversation, ...] = await self._call(
            "list_conversations", lambda: self._read(work)
        )
        return result

    async def append_messages(
        self,
        conversation_id: str,
        messages: Sequence[object],
        *,
        expected_version: int | None = None,
    ) -> AppendResult:
        """Append a batch atomically; see :meth:`ConversationStore.append_messages`."""
        expected, batch = check_append(conversation_id, messages, expected_version, self._limits)

        def work(conn: sqlite3.Connection) -> AppendResult:
            return _append(conn, conversation_id, batch, expected)

        try:
            return await self._write(work, sum(len(item.body) for item in batch))
        except sqlite3.Error as exc:
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

        def work(conn: sqlite3.Connection) -> tuple[tuple[StoredMessage, ...], int]:
            rows = conn.execute(
                "SELECT seq, body, created_at FROM ai_chat_messages "
                "WHERE conversation_id = ? AND seq > ? ORDER BY seq LIMIT ?",
                (conversation_id, start, -1 if count is None else count),
            ).fetchall()
            if not rows:
                if not head:
                    _require(conn, conversation_id)
                return (), 0
            return _stored(rows), sum(len(row[1]) for row in rows)

        loaded: tuple[StoredMessage, ...]
        loaded, chars = await self._call("load_messages", lambda: self._read(work))
        return self._cache.join(conversation_id, start, head, loaded, chars)

    async def load_recent_messages(
        self, conversation_id: str, count: int
    ) -> tuple[StoredMessage, ...]:
        """The last ``count`` messages, in sequence order, from one snapshot."""
        wanted = check_recent(conversation_id, count)

        def work(conn: sqlite3.Connection) -> tuple[StoredMessage, ...]:
            rows = conn.execute(
                "SELECT seq, body, created_at FROM ai_chat_messages "
                "WHERE conversation_id = ? ORDER BY seq DESC LIMIT ?",
                (conversation_id, wanted),
            ).fetchall()
            if not rows:
                _require(conn, conversation_id)
            rows.reverse()
            return _stored(rows)

        result: tuple[StoredMessage, ...] = await self._call(
            "load_recent_messages", lambda: self._read(work)
        )
        return result

    async def rate(
        self, conversation_id: str, rating: int, comment: str | None = None
    ) -> Conversation:
        """Set the rating and comment; see :meth:`ConversationStore.rate`."""
        checked_rating, checked_comment = check_rate(conversation_id, rating, comment)

        def work(conn: sqlite3.Connection) -> Conversation:
            row = conn.execute(
                "UPDATE ai_chat_conversations SET rating = ?, comment = ? WHERE id = ? "
                f"RETURNING {_COLUMNS}",
                (checked_rating, checked_comment, conversation_id),
            ).fetchone()
            if row is None:
                raise ConversationNotFoundError(conversation_id)
            return _record(row)

        result: Conversation = await self._call("rate", lambda: self._write(work))
        return result


def _stored(rows: list[tuple[int, str, int]]) -> tuple[StoredMessage, ...]:
    return decode_rows(rows, from_micros)


def _require(conn: sqlite3.Connection, conversation_id: str) -> None:
    if (
        conn.execute(
            "SELECT 1 FROM ai_chat_conversations WHERE id = ?", (conversation_id,)
        ).fetchone()
        is None
    ):
        raise ConversationNotFoundError(conversation_id)


def _append(
    conn: sqlite3.Connection,
    conversation_id: str,
    batch: tuple[EncodedMessage, ...],
    expected: int | None,
) -> AppendResult:
    # One statement reads the conversation, the subject's latest activity and which of
    # the batch's (first) ids are stored already.
    ids = [item.id for item in batch[:_ID_CHUNK]]
    rows = conn.execute(append_lookup_sql(len(ids)), (*ids, conversation_id)).fetchall()
    if not rows:
        raise ConversationNotFoundError(conversation_id)
    version: int
    updated_at: int
    activity: int
    latest: int
    version, updated_at, activity, latest = rows[0][:4]
    existing: dict[str, tuple[int, bytes]] = {
        row[4]: (row[5], row[6]) for row in rows if row[4] is not None
    }
    for start in range(_ID_CHUNK, len(batch), _ID_CHUNK):
        more = [item.id for item in batch[start : start + _ID_CHUNK]]
        for message_id, seq, digest in conn.execute(
            f"SELECT message_id, seq, digest FROM ai_chat_messages {_BY_MESSAGE_ID} "
            f"WHERE conversation_id = ? AND message_id IN ({', '.join('?' * len(more))})",
            (conversation_id, *more),
        ):
            existing[message_id] = (seq, digest)
    seqs, new = plan_append(conversation_id, batch, existing, version, expected)
    if not new:
        return AppendResult(seqs, version, 0)
    now = max(now_micros(), updated_at)  # never backwards, whatever the clock does
    conn.executemany(
        "INSERT INTO ai_chat_messages (conversation_id, seq, message_id, digest, created_at, "
        "body) VALUES (?, ?, ?, ?, ?, ?)",
        [
            (conversation_id, version + number, item.id, item.digest, now, item.body)
            for number, item in enumerate(new, 1)
        ],
    )
    new_version = version + len(new)
    if activity == latest:
        # Already the subject's most recently active conversation: its place in the
        # activity index stays (one index page fewer to write).
        conn.execute(
            "UPDATE ai_chat_conversations SET version = ?, updated_at = ? WHERE id = ?",
            (new_version, now, conversation_id),
        )
    else:
        conn.execute(
            "UPDATE ai_chat_conversations SET version = ?, updated_at = ?, activity = ? "
            "WHERE id = ?",
            (new_version, now, latest + 1, conversation_id),
        )
    return AppendResult(seqs, new_version, len(new))
