"""The SQLite store's schema: its tables, the migrations that built them, and running them.

Two tables: ``ai_chat_conversations`` (one row per conversation: its keys, times,
metadata, rating and version, and ``activity``, which orders one subject's
conversations) and ``ai_chat_messages`` (the append-only log: one row per message, its
canonical JSON text and digest, clustered by ``(conversation_id, seq)``). The
database's ``user_version`` is the schema version.
"""

from __future__ import annotations

import sqlite3

from ._errors import SchemaVersionError

__all__ = ["MIGRATIONS", "SCHEMA_VERSION", "migrate"]

# Each step takes the schema from version i to i + 1; the database's ``user_version``
# says how many have run. Steps are never edited once released, only added.
MIGRATIONS: tuple[tuple[str, ...], ...] = (
    (
        """CREATE TABLE ai_chat_conversations (
            id TEXT PRIMARY KEY NOT NULL,
            context TEXT NOT NULL,
            subject_id TEXT NOT NULL,
            created_at INTEGER NOT NULL,
            updated_at INTEGER NOT NULL,
            activity INTEGER NOT NULL,
            metadata TEXT NOT NULL,
            rating INTEGER CHECK (rating BETWEEN 1 AND 5),
            comment TEXT,
            version INTEGER NOT NULL DEFAULT 0
        )""",
        """CREATE INDEX ai_chat_conversations_by_activity
            ON ai_chat_conversations (context, subject_id, activity DESC)""",
        """CREATE TABLE ai_chat_messages (
            conversation_id TEXT NOT NULL
                REFERENCES ai_chat_conversations (id) ON DELETE CASCADE,
            seq INTEGER NOT NULL,
            message_id TEXT NOT NULL,
            digest BLOB NOT NULL,
            created_at INTEGER NOT NULL,
            body TEXT NOT NULL,
            PRIMARY KEY (conversation_id, seq),
            UNIQUE (conversation_id, message_id)
        )""",
    ),
    # 2: messages clustered by (conversation_id, seq) in a WITHOUT ROWID table, so a
    # load reads one b-tree in order and an append writes one b-tree fewer; the message
    # id index gets a name, so that the idempotency lookup can insist on it.
    (
        """CREATE TABLE ai_chat_messages_2 (
            conversation_id TEXT NOT NULL
                REFERENCES ai_chat_conversations (id) ON DELETE CASCADE,
            seq INTEGER NOT NULL,
            message_id TEXT NOT NULL,
            digest BLOB NOT NULL,
            created_at INTEGER NOT NULL,
            body TEXT NOT NULL,
            PRIMARY KEY (conversation_id, seq)
        ) WITHOUT ROWID""",
        """INSERT INTO ai_chat_messages_2 (conversation_id, seq, message_id, digest,
            created_at, body)
            SELECT conversation_id, seq, message_id, digest, created_at, body
            FROM ai_chat_messages ORDER BY conversation_id, seq""",
        "DROP TABLE ai_chat_messages",
        "ALTER TABLE ai_chat_messages_2 RENAME TO ai_chat_messages",
        """CREATE UNIQUE INDEX ai_chat_messages_by_message_id
            ON ai_chat_messages (conversation_id, message_id)""",
    ),
)
SCHEMA_VERSION = len(MIGRATIONS)


def migrate(conn: sqlite3.Connection) -> None:
    """Bring the database to :data:`SCHEMA_VERSION` in one transaction.

    Raises:
        SchemaVersionError: a newer ai_chat migrated the database.
    """
    conn.execute("BEGIN IMMEDIATE")
    try:
        found: int = conn.execute("PRAGMA user_version").fetchone()[0]
        if found > SCHEMA_VERSION:
            raise SchemaVersionError(found, SCHEMA_VERSION)
        for step in MIGRATIONS[found:]:
            for statement in step:
                conn.execute(statement)
        if found != SCHEMA_VERSION:
            conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
        conn.execute("COMMIT")
    except BaseException:
        conn.execute("ROLLBACK")
        raise
