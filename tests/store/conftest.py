"""A real PostgreSQL server for the store tests, and a fresh schema for each test.

With ``AI_CHAT_TEST_POSTGRES_DSN`` set, the tests use that server. Otherwise they start
a throwaway one from Debian's ``postgresql`` package: ``initdb`` into a temporary
folder and ``pg_ctl start`` listening on a Unix socket only (no TCP), run as the
``postgres`` system user when the tests run as root (PostgreSQL refuses root). It is
stopped and deleted at the end of the session. Missing binaries fail the tests, never
skip them.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from contextlib import ExitStack

import psycopg
import psycopg.conninfo
import pytest

from .postgres_server import PostgresUnavailableError, throwaway_postgres

DSN_VARIABLE = "AI_CHAT_TEST_POSTGRES_DSN"


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[str]:
    """The DSN of a PostgreSQL server for this test session."""
    given = os.environ.get(DSN_VARIABLE)
    if given:
        yield given
        return
    with ExitStack() as stack:
        try:
            dsn = stack.enter_context(throwaway_postgres())
        except PostgresUnavailableError as exc:
            pytest.fail(str(exc), pytrace=False)
        yield dsn


@pytest.fixture
def postgres_dsn(postgres_server: str) -> Iterator[str]:
    """A DSN whose ``search_path`` is a new, empty schema, dropped after the test."""
    schema = f"test_{uuid.uuid4().hex}"
    with psycopg.connect(postgres_server, autocommit=True) as conn:
        conn.execute(f'CREATE SCHEMA "{schema}"'.encode())
    try:
        yield psycopg.conninfo.make_conninfo(postgres_server, options=f"-c search_path={schema}")
    finally:
        with psycopg.connect(postgres_server, autocommit=True) as conn:
            conn.execute(f'DROP SCHEMA "{schema}" CASCADE'.encode())
