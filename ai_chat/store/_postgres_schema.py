"""The PostgreSQL store's schema: its tables and server functions, the migrations that
built them, and running them.

Two tables, as in SQLite (``ai_chat_conversations``, ``ai_chat_messages``), a sequence
(``ai_chat_activity``) ordering conversations by their last write, and two plpgsql
functions that run a whole append, or a group of appends, in one round trip
(``ai_chat_append``, ``ai_chat_append_group``). The ``ai_chat_schema`` table holds the
schema version. Importing this module needs no psycopg: a connection is only passed in.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, LiteralString

from ._errors import SchemaVersionError

if TYPE_CHECKING:
    import psycopg
    from psycopg.rows import TupleRow

__all__ = ["MIGRATIONS", "SCHEMA_VERSION", "migrate"]

# A constant key for pg_advisory_xact_lock: migrations by any number of processes run
# one at a time (the bytes of "ai_chat" as an integer).
_MIGRATION_LOCK = 0x61695F63686174

# Each step takes the schema from version i to i + 1; never edited once released.
# JSON is kept as text, not jsonb: jsonb refuses "\u0000", which JSON allows.
MIGRATIONS: tuple[tuple[LiteralString, ...], ...] = (
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
    (
        # Group commit: the appends queued in one process while its previous group ran,
        # to any conversations, in one transaction (one commit, one WAL flush). A
        # conversation whose row another transaction has locked is skipped, never waited
        # for ('busy': the caller appends it alone), so a group never waits for a lock
        # and cannot deadlock. Each job is checked before anything of it is written, so a
        # job that fails (not-found, duplicate, conflict) leaves no trace. Per job: its
        # status, version, stored count and detail; r_seqs holds the seqs of the ok jobs,
        # one per message, in job order.
        """CREATE FUNCTION ai_chat_append_group(
            p_conversations text[], p_expected bigint[], p_counts integer[], p_ids text[],
            p_digests bytea[], p_bodies text[], p_now timestamptz,
            OUT r_status text[], OUT r_version bigint[], OUT r_stored integer[],
            OUT r_detail text[], OUT r_seqs bigint[]
        ) LANGUAGE plpgsql AS $$
        DECLARE
            v_locked text[];
            v_versions bigint[];
            v_times timestamptz[];
            v_at integer;
            v_id text;
            v_first integer := 0;
            v_version bigint;
            v_updated timestamptz;
            v_next bigint;
            v_seqs bigint[];
            v_seq bigint;
            v_digest bytea;
            v_status text;
            v_detail text;
        BEGIN
            r_status := '{}'; r_version := '{}'; r_stored := '{}'; r_detail := '{}';
            r_seqs := '{}';
            SELECT array_agg(c.id), array_agg(c.version), array_agg(c.updated_at)
                INTO v_locked, v_versions, v_times FROM (
                    SELECT id, version, updated_at FROM ai_chat_conversations
                    WHERE id = ANY (p_conversations) ORDER BY id FOR UPDATE SKIP LOCKED) c;
            FOR j IN 1 .. cardinality(p_conversations) LOOP
                v_id := p_conversations[j];
                v_version := NULL;
                v_next := NULL;
                v_status := NULL;
                v_detail := NULL;
                v_seqs := '{}';
                v_at := array_position(v_locked, v_id);
                IF v_at IS NULL THEN
                    v_status := 'busy';
                ELSE
                    v_version := v_versions[v_at];
                    v_updated := v_times[v_at];
                    v_next := v_version;
                    FOR i IN v_first + 1 .. v_first + p_counts[j] LOOP
                        SELECT m.seq, m.digest INTO v_seq, v_digest FROM ai_chat_messages m
                            WHERE m.conversation_id = v_id AND m.message_id = p_ids[i];
                        IF FOUND THEN
                            IF v_digest <> p_digests[i] THEN
                                v_status := 'duplicate';
                                v_next := v_seq;
                                v_detail := p_ids[i];
                                EXIT;
                            END IF;
                            v_seqs := v_seqs || v_seq;
                        ELSE
                            v_next := v_next + 1;
                            v_seqs := v_seqs || v_next;
                        END IF;
                    END LOOP;
                    IF v_status IS NULL AND v_next <> v_version AND p_expected[j] IS NOT NULL
                            AND p_expected[j] <> v_version THEN
                        v_status := 'conflict';
                        v_next := v_version;
                    END IF;
                    IF v_status IS NULL THEN
                        v_status := 'ok';
                        r_seqs := r_seqs || v_seqs;
                        IF v_next <> v_version THEN
                            v_updated := greatest(p_now, v_updated);
                            INSERT INTO ai_chat_messages
                                    (conversation_id, seq, message_id, digest, created_at, body)
                                SELECT v_id, s.seq, s.id, s.digest, v_updated, s.body
                                FROM unnest(v_seqs, p_ids[v_first + 1 : v_first + p_counts[j]],
                                            p_digests[v_first + 1 : v_first + p_counts[j]],
                                            p_bodies[v_first + 1 : v_first + p_counts[j]])
                                    AS s (seq, id, digest, body)
                                WHERE s.seq > v_version;
                            UPDATE ai_chat_conversations SET version = v_next,
                                updated_at = v_updated, activity = nextval('ai_chat_activity')
                                WHERE id = v_id;
                            v_versions[v_at] := v_next;  -- for a later job of the group
                            v_times[v_at] := v_updated;
                        END IF;
                    END IF;
                END IF;
                r_status := r_status || v_status;
                r_version := r_version || v_next;
                r_stored := r_stored || CASE WHEN v_status = 'ok'
                    THEN (v_next - v_version)::integer ELSE 0 END;
                r_detail := r_detail || v_detail;
                v_first := v_first + p_counts[j];
            END LOOP;
        END
        $$""",
    ),
)
SCHEMA_VERSION = len(MIGRATIONS)


def migrate(conn: psycopg.Connection[TupleRow]) -> None:
    """Bring the database to :data:`SCHEMA_VERSION` in one transaction, one process at a
    time (an advisory lock).

    Raises:
        SchemaVersionError: a newer ai_chat migrated the database.
    """
    with conn.transaction():
        conn.execute("SELECT pg_advisory_xact_lock(%s)", (_MIGRATION_LOCK,))
        conn.execute("CREATE TABLE IF NOT EXISTS ai_chat_schema (version integer NOT NULL)")
        row = conn.execute("SELECT version FROM ai_chat_schema").fetchone()
        found: int = 0 if row is None else row[0]
        if found > SCHEMA_VERSION:
            raise SchemaVersionError(found, SCHEMA_VERSION)
        for step in MIGRATIONS[found:]:
            for statement in step:
                conn.execute(statement)
        if row is None:
            conn.execute("INSERT INTO ai_chat_schema (version) VALUES (%s)", (SCHEMA_VERSION,))
        elif found != SCHEMA_VERSION:
            conn.execute("UPDATE ai_chat_schema SET version = %s", (SCHEMA_VERSION,))
