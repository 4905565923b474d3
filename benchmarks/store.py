"""Conversation store benchmark: our SQLite and PostgreSQL stores vs the Agents SDK's SQLiteSession.

Run with ``uv run --no-sync python benchmarks/store.py`` after ``uv sync --group bench``
(the baseline is ``agents.SQLiteSession`` from the openai-agents package). PostgreSQL
comes from ``AI_CHAT_TEST_POSTGRES_DSN`` or a throwaway server started for the run
(Debian's postgresql package), with fsync on.

Measured in the same run, on asyncio (SQLiteSession is asyncio-only), on files in one
temporary folder:

* appends per second, one writer appending one message at a time to one conversation;
* appends per second with 50 concurrent writers, each to its own conversation (one
  SQLiteSession per conversation, as the SDK is used; one store for all of ours);
* loading a 10,000-message conversation (``load_messages`` vs ``get_items``): ours as
  configured by default, where the decoded messages stay cached after the first load
  and a load reads only what was appended since (the median is of loads again), and
  ours with the cache off (``cache_chars=0``), where each load reads and decodes all.

The conversation alternates user and assistant turns of the same text, each library
storing them in its own format (ai_chat's parts-based messages; the SDK's Responses API
items). Also:

* ``find_latest`` among 100,000 conversations (1,000 subjects with 100 each). The SDK
  has no such call: its baseline is the best query its schema allows (a range over the
  session id prefix, sorted by ``updated_at``). The 100,000 rows are inserted with SQL
  on both sides; the query plans are printed.

Durability is compared like with like, and printed: the SDK sets ``journal_mode=WAL``
and leaves ``synchronous`` at SQLite's default, FULL in this build; ours uses WAL with
``synchronous=FULL`` too (each commit is synced to disk); PostgreSQL runs with
``fsync`` and ``synchronous_commit`` on.

Ratios are ours against the baseline: above 1 means ours is faster.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import functools
import gc
import importlib
import os
import random
import sqlite3
import statistics
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable, Generator
from pathlib import Path
from typing import Any

import psycopg
import psycopg.conninfo

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from ai_chat.store import ConversationStore, PostgresConversationStore, SQLiteConversationStore
from ai_chat.store._cache import DEFAULT_CACHE_CHARS
from ai_chat.store._postgres import LIST_CONVERSATIONS_SQL as PG_LATEST
from ai_chat.store._sqlite import LIST_CONVERSATIONS_SQL as SQLITE_LATEST
from ai_chat.store._sqlite import SYNCHRONOUS
from tests.store.postgres_server import throwaway_postgres


def _sqlite_session() -> Any:
    """``agents.SQLiteSession``, imported by name (CI type-checks this file without the
    bench group installed), or ``None``."""
    try:
        return importlib.import_module("agents").SQLiteSession
    except ImportError:
        return None


SQLiteSession: Any = _sqlite_session()

TEXT = "Show me the bookings for tomorrow, and tell me which rooms are still free. " * 3


def ours(message_id: str) -> dict[str, Any]:
    """A chat turn as ai_chat stores it: user and assistant turns alternate."""
    role = "user" if int(message_id[1:]) % 2 == 0 else "assistant"
    return {"id": message_id, "role": role, "parts": [{"type": "text", "text": TEXT}]}


def theirs(message_id: str) -> dict[str, Any]:
    """The same turn as the Agents SDK stores it (Responses API input and output items)."""
    if int(message_id[1:]) % 2 == 0:
        return {"role": "user", "content": TEXT}
    return {
        "id": f"msg_{message_id}",
        "type": "message",
        "role": "assistant",
        "status": "completed",
        "content": [{"type": "output_text", "text": TEXT, "annotations": []}],
    }


async def timed(work: Callable[[], Awaitable[object]]) -> float:
    # Each measurement starts from a quiet state: the worker threads have dropped the
    # previous contender's results (freeing 10,000 decoded messages in a worker thread
    # holds the GIL for milliseconds), and the garbage collector starts afresh.
    await asyncio.sleep(0.05)
    gc.collect()
    start = time.perf_counter()
    await work()
    return time.perf_counter() - start


@contextlib.contextmanager
def postgres() -> Generator[str]:
    given = os.environ.get("AI_CHAT_TEST_POSTGRES_DSN")
    if given:
        yield given
    else:
        with throwaway_postgres(durable=True) as dsn:
            yield dsn


def fresh_schema(dsn: str, name: str) -> str:
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute(f'DROP SCHEMA IF EXISTS "{name}" CASCADE'.encode())
        conn.execute(f'CREATE SCHEMA "{name}"'.encode())
    return psycopg.conninfo.make_conninfo(dsn, options=f"-c search_path={name}")


# --- the contenders ----------------------------------------------------------------------

Round = Callable[[int], Awaitable[None]]
"""One measured round of a benchmark; its argument is the round number."""


class SDK:
    """SQLiteSession, one per conversation, as the SDK is used."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.sessions: dict[str, Any] = {}

    def session(self, name: str) -> Any:
        if name not in self.sessions:
            self.sessions[name] = SQLiteSession(name, self.path)
        return self.sessions[name]

    def close(self) -> None:
        for session in self.sessions.values():
            session.close()

    async def append(self, conversation: str, ids: list[str]) -> None:
        await self.session(conversation).add_items([theirs(i) for i in ids])

    async def load(self, conversation: str) -> int:
        return len(await self.session(conversation).get_items())


class Ours:
    """An ai_chat store, with conversations named like the SDK's sessions."""

    def __init__(self, store: ConversationStore) -> None:
        self.store = store
        self.ids: dict[str, str] = {}

    async def conversation(self, name: str) -> str:
        if name not in self.ids:
            self.ids[name] = (await self.store.create_conversation("bench", name)).id
        return self.ids[name]

    async def append(self, conversation: str, ids: list[str]) -> None:
        target = await self.conversation(conversation)
        await self.store.append_messages(target, [ours(i) for i in ids])

    async def load(self, conversation: str) -> int:
        return len(await self.store.load_messages(await self.conversation(conversation)))


async def interleaved(contenders: dict[str, Round], rounds: int) -> dict[str, float]:
    """Each contender's median round time, the rounds taken in turn so that the machine's
    changing load affects them all alike."""
    times: dict[str, list[float]] = {name: [] for name in contenders}
    for number in range(rounds):
        for name, one_round in contenders.items():
            times[name].append(await timed(functools.partial(one_round, number)))
    return {name: statistics.median(values) for name, values in times.items()}


def single_writer(side: SDK | Ours, chunk: int) -> Round:
    async def one_round(number: int) -> None:
        for i in range(number * chunk, (number + 1) * chunk):
            await side.append("single", [f"m{i}"])

    return one_round


def many_writers(side: SDK | Ours, writers: int, per_writer: int) -> Round:
    async def write(writer: int, number: int) -> None:
        for i in range(number * per_writer, (number + 1) * per_writer):
            await side.append(f"writer-{writer}", [f"m{i}"])

    async def one_round(number: int) -> None:
        await asyncio.gather(*(write(w, number) for w in range(writers)))

    return one_round


def loading(side: SDK | Ours, expected: int) -> Round:
    async def one_round(number: int) -> None:
        assert await side.load("long") == expected

    return one_round


# --- find_latest among 100,000 conversations ----------------------------------------------


def seed_rows(subjects: list[str]) -> list[tuple[Any, ...]]:
    rows: list[tuple[Any, ...]] = []
    activity = 0
    for n in range(100):
        for subject in subjects:
            activity += 1
            rows.append((f"{subject}-{n:03d}", "ctx", subject, activity))
    return rows


def seed_sdk(path: Path, subjects: list[str]) -> tuple[sqlite3.Connection, Callable[[str], str]]:
    """The SDK's tables with 100,000 sessions, and the best query its schema allows."""
    SQLiteSession("seed", path).close()  # creates the SDK's tables
    conn = sqlite3.connect(path, check_same_thread=False)
    conn.executemany(
        "INSERT INTO agent_sessions (session_id, created_at, updated_at) VALUES (?, ?, ?)",
        [
            (f"ctx:{subject}:{n:03d}", stamp, stamp)
            for subject in subjects
            for n in range(100)
            for stamp in [f"2026-01-01 {n // 60:02d}:{n % 60:02d}:00"]
        ],
    )
    conn.commit()
    query = (
        "SELECT session_id FROM agent_sessions WHERE session_id >= ? AND session_id < ? "
        "ORDER BY updated_at DESC LIMIT 1"
    )
    print("    SQLiteSession schema, the latest session of a subject:")
    for row in conn.execute("EXPLAIN QUERY PLAN " + query, ("a", "b")).fetchall():
        print(f"      {row[-1]}")

    def latest(subject: str) -> str:
        row = conn.execute(query, (f"ctx:{subject}:", f"ctx:{subject};")).fetchone()
        return str(row[0])

    return conn, latest


def seed_sqlite(path: Path, subjects: list[str]) -> None:
    conn = sqlite3.connect(path)
    try:
        conn.executemany(
            "INSERT INTO ai_chat_conversations (id, context, subject_id, created_at, "
            "updated_at, activity, metadata) VALUES (?, ?, ?, 0, 0, ?, '{}')",
            seed_rows(subjects),
        )
        conn.commit()
        print("    ai_chat SQLite, find_latest:")
        for row in conn.execute(
            "EXPLAIN QUERY PLAN " + SQLITE_LATEST, ("ctx", subjects[0], 1)
        ).fetchall():
            print(f"      {row[-1]}")
    finally:
        conn.close()


def seed_postgres(dsn: str, subjects: list[str]) -> None:
    with psycopg.connect(dsn, autocommit=True) as conn:
        with (
            conn.cursor() as cursor,
            cursor.copy(
                "COPY ai_chat_conversations (id, context, subject_id, created_at, updated_at, "
                "activity, metadata) FROM STDIN"
            ) as copy,
        ):
            for row_id, context, subject, activity in seed_rows(subjects):
                copy.write_row(
                    (row_id, context, subject, "2026-01-01Z", "2026-01-01Z", activity, "{}")
                )
        conn.execute(
            "SELECT setval('ai_chat_activity', (SELECT max(activity) FROM ai_chat_conversations))"
        )
        conn.execute("ANALYZE ai_chat_conversations")
        print("    ai_chat PostgreSQL, find_latest:")
        plan = conn.execute(
            b"EXPLAIN ANALYZE " + PG_LATEST.encode(), ("ctx", subjects[0], 1)
        ).fetchall()
        for (line,) in plan:
            print(f"      {line}")


def latest_queries(
    find: Callable[[str], Awaitable[object]], queries: list[str], chunk: int
) -> Round:
    async def one_round(number: int) -> None:
        for subject in queries[number * chunk : (number + 1) * chunk]:
            await find(subject)

    return one_round


async def floor(folder: Path) -> None:
    """Print what every contender pays per call on this machine, whatever its design: a
    hand-off to a worker thread and back (a no-op through ``asyncio.to_thread``), and a
    small write synced to disk (``fdatasync``), as a commit does."""

    def noop() -> None:
        return None

    hops: list[float] = []
    for _ in range(500):
        start = time.perf_counter()
        await asyncio.to_thread(noop)
        hops.append(time.perf_counter() - start)
    syncs: list[float] = []
    fd = os.open(folder / "sync-probe", os.O_RDWR | os.O_CREAT, 0o600)
    try:
        page = b"\0" * 4096
        for n in range(200):
            os.pwrite(fd, page, (n % 16) * 4096)
            start = time.perf_counter()
            os.fdatasync(fd)
            syncs.append(time.perf_counter() - start)
    finally:
        os.close(fd)
    print("the floor on this machine (medians):")
    print(f"    a hand-off to a worker thread and back: {statistics.median(hops) * 1e6:,.0f} µs")
    print(f"    fdatasync after a 4 KiB write: {statistics.median(syncs) * 1e6:,.0f} µs")


def durability(folder: Path, dsn: str) -> None:
    """Print what a commit survives on each side, so that like is compared with like."""
    path = folder / "sdk-durability.db"
    SQLiteSession("durability", path).close()
    # The SDK sets journal_mode=WAL (kept in the file) and leaves synchronous at the
    # library's default, which a fresh connection shows.
    conn = sqlite3.connect(path)
    try:
        journal: str = conn.execute("PRAGMA journal_mode").fetchone()[0]
        number: int = conn.execute("PRAGMA synchronous").fetchone()[0]
        level = ("OFF", "NORMAL", "FULL", "EXTRA")[number]
    finally:
        conn.close()
    print("durability:")
    print(f"    SQLiteSession: journal_mode={journal}, synchronous={level}")
    print(f"    ai_chat SQLite: journal_mode=wal, synchronous={SYNCHRONOUS}")
    with psycopg.connect(dsn) as pg:
        shown = [
            f"{name}={pg.execute(f'SHOW {name}'.encode()).fetchone()[0]}"  # pyright: ignore[reportOptionalSubscript]
            for name in ("fsync", "synchronous_commit", "wal_sync_method")
        ]
    print(f"    ai_chat PostgreSQL: {', '.join(shown)}")


# --- the run ------------------------------------------------------------------------------

Result = tuple[str, str, float, float, str]


async def run(args: argparse.Namespace, folder: Path, dsn: str) -> list[Result]:
    results: list[Result] = []
    rounds = args.rounds

    def open_ours(
        kind: str, name: str, cache_chars: int = DEFAULT_CACHE_CHARS
    ) -> ConversationStore:
        if kind == "SQLite":
            return SQLiteConversationStore(folder / f"{name}.db", cache_chars=cache_chars)
        return PostgresConversationStore(
            fresh_schema(dsn, name), max_connections=20, cache_chars=cache_chars
        )

    def record(
        name: str, medians: dict[str, float], scale: float, unit: str, suffix: str = ""
    ) -> None:
        for kind in ("SQLite", "PostgreSQL"):
            baseline, subject = medians["SDK"], medians[kind + suffix]
            if unit == "/s":
                results.append((name, kind, scale / baseline, scale / subject, unit))
            else:
                results.append((name, kind, baseline * scale, subject * scale, unit))

    async def compare(
        name: str, make: Callable[[SDK | Ours], Round], scale: float, unit: str
    ) -> None:
        slug = "".join(c if c.isalnum() else "_" for c in name)
        sdk = SDK(folder / f"sdk-{slug}.db")
        sqlite_store = open_ours("SQLite", f"{slug}_sqlite")
        pg_store = open_ours("PostgreSQL", f"{slug}_postgres")
        # Not like with like (the SDK syncs each commit): what the option buys.
        normal_store = SQLiteConversationStore(folder / f"{slug}_normal.db", synchronous="NORMAL")
        try:
            sides: dict[str, SDK | Ours] = {
                "SDK": sdk,
                "SQLite": Ours(sqlite_store),
                "PostgreSQL": Ours(pg_store),
                "NORMAL": Ours(normal_store),
            }
            medians = await interleaved({k: make(v) for k, v in sides.items()}, rounds)
            record(name, medians, scale, unit)
            results.append(
                (name, "SQLite NORMAL*", scale / medians["SDK"], scale / medians["NORMAL"], unit)
            )
        finally:
            sdk.close()
            await sqlite_store.aclose()
            await pg_store.aclose()
            await normal_store.aclose()

    durability(folder, dsn)
    await floor(folder)
    chunk = args.appends // rounds
    print(f"appends, 1 writer: {rounds} rounds of {chunk}")
    await compare("appends/s, 1 writer", lambda side: single_writer(side, chunk), chunk, "/s")

    print(f"appends, {args.writers} writers: {rounds} rounds of {args.per_writer} each")
    await compare(
        f"appends/s, {args.writers} writers",
        lambda side: many_writers(side, args.writers, args.per_writer),
        args.writers * args.per_writer,
        "/s",
    )

    print(f"load a {args.messages:,}-message conversation: {rounds} rounds")

    async def fill(side: SDK | Ours) -> None:
        for start in range(0, args.messages, 100):
            await side.append("long", [f"m{i}" for i in range(start, start + 100)])

    sdk = SDK(folder / "sdk-load.db")
    stores = [
        open_ours("SQLite", "load_sqlite"),
        open_ours("PostgreSQL", "load_postgres"),
        # The same tables through stores without the cache: each load decodes them all.
        SQLiteConversationStore(folder / "load_sqlite.db", cache_chars=0),
        PostgresConversationStore(
            psycopg.conninfo.make_conninfo(dsn, options="-c search_path=load_postgres"),
            max_connections=20,
            cache_chars=0,
        ),
    ]
    try:
        cached = [Ours(stores[0]), Ours(stores[1])]
        for side in (sdk, *cached):
            await fill(side)
        uncached = [Ours(stores[2]), Ours(stores[3])]
        for warm, cold in zip(cached, uncached, strict=True):
            cold.ids["long"] = warm.ids["long"]
        sides: dict[str, SDK | Ours] = {
            "SDK": sdk,
            "SQLite": cached[0],
            "PostgreSQL": cached[1],
            "SQLite, cache off": uncached[0],
            "PostgreSQL, cache off": uncached[1],
        }
        medians = await interleaved(
            {k: loading(v, args.messages) for k, v in sides.items()}, rounds
        )
        record(f"load {args.messages:,} messages", medians, 1000, "ms")
        record(f"load {args.messages:,}, cache off", medians, 1000, "ms", ", cache off")
    finally:
        sdk.close()
        for store in stores:
            await store.aclose()

    print("find_latest among 100,000 conversations (query plans):")
    subjects = [f"subject-{n:04d}" for n in range(1000)]
    rng = random.Random(7)
    queries = [rng.choice(subjects) for _ in range(args.queries)]
    per_round = args.queries // rounds
    sdk_conn, latest = seed_sdk(folder / "sdk-latest.db", subjects)
    stores = [open_ours("SQLite", "latest_sqlite"), open_ours("PostgreSQL", "latest_postgres")]
    try:
        for store in stores:
            await store.find_latest("ctx", "nobody")  # creates the schema
        seed_sqlite(folder / "latest_sqlite.db", subjects)
        seed_postgres(
            psycopg.conninfo.make_conninfo(dsn, options="-c search_path=latest_postgres"), subjects
        )

        async def sdk_find(subject: str) -> object:
            return await asyncio.to_thread(latest, subject)

        def ours_find(store: ConversationStore) -> Callable[[str], Awaitable[object]]:
            async def find(subject: str) -> object:
                found = await store.find_latest("ctx", subject)
                assert found is not None and found.id == f"{subject}-099"
                return found

            return find

        medians = await interleaved(
            {
                "SDK": latest_queries(sdk_find, queries, per_round),
                "SQLite": latest_queries(ours_find(stores[0]), queries, per_round),
                "PostgreSQL": latest_queries(ours_find(stores[1]), queries, per_round),
            },
            rounds,
        )
        record("find_latest of 100,000", medians, 1e6 / per_round, "µs")
    finally:
        sdk_conn.close()
        for store in stores:
            await store.aclose()
    return results


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--appends", type=int, default=900, help="one writer, in all")
    parser.add_argument("--writers", type=int, default=50)
    parser.add_argument("--per-writer", type=int, default=4, help="per writer and round")
    parser.add_argument("--messages", type=int, default=10_000)
    parser.add_argument("--rounds", type=int, default=9)
    parser.add_argument("--queries", type=int, default=1800, help="in all")
    args = parser.parse_args()
    if SQLiteSession is None:
        print(
            "The baseline, the OpenAI Agents SDK's SQLiteSession, is not installed: install "
            "the bench group first (uv sync --group bench).",
            file=sys.stderr,
        )
        return 1
    with tempfile.TemporaryDirectory(prefix="ai_chat_store_bench_") as folder, postgres() as dsn:
        results = asyncio.run(run(args, Path(folder), dsn))
    print()
    print(
        f"{'benchmark':<28} {'ai_chat store':<14} {'SQLiteSession':>16} {'ai_chat':>16} {'ratio':>7}"
    )
    for name, kind, baseline, subject, unit in results:
        if unit == "/s":
            ratio = subject / baseline
            shown = (f"{baseline:>13,.0f} {unit}", f"{subject:>13,.0f} {unit}")
        else:
            ratio = baseline / subject
            shown = (f"{baseline:>13,.1f} {unit}", f"{subject:>13,.1f} {unit}")
        print(f"{name:<28} {kind:<14} {shown[0]:>16} {shown[1]:>16} {ratio:>6.1f}x")
    print("ratio: how many times faster ai_chat is (higher is better)")
    print(
        "* synchronous=NORMAL: commits synced at checkpoints only (the last ones may be "
        "lost on a power loss); not like with like, SQLiteSession syncs each commit"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
