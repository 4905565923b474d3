"""A throwaway PostgreSQL server: ``initdb`` into a temporary folder, a Unix socket only.

Used by the store tests and ``benchmarks/store.py``. Debian's ``postgresql`` package
provides the binaries (``/usr/lib/postgresql/<version>/bin``). PostgreSQL refuses to run
as root, so as root the server runs as the ``postgres`` system user.
"""

from __future__ import annotations

import glob
import os
import shutil
import subprocess
import tempfile
from collections.abc import Generator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import psycopg
import psycopg.conninfo

__all__ = ["PostgresUnavailableError", "raw_execute", "throwaway_postgres"]


class PostgresUnavailableError(RuntimeError):
    """The PostgreSQL binaries are missing, or the server would not start."""


def _bindir() -> Path:
    found = sorted(
        glob.glob("/usr/lib/postgresql/*/bin/initdb"), key=lambda p: int(Path(p).parts[4])
    )
    if not found:
        raise PostgresUnavailableError(
            "PostgreSQL binaries not found under /usr/lib/postgresql/*/bin: install "
            "Debian's postgresql package (apt-get install postgresql), or point "
            "AI_CHAT_TEST_POSTGRES_DSN at a server"
        )
    return Path(found[-1]).parent


def _run(command: list[str], user: str | None) -> None:
    result = subprocess.run(
        command,
        user=user,
        capture_output=True,
        text=True,
        timeout=120,  # a hang guard
        check=False,
        env={**os.environ, "LC_ALL": "C.UTF-8", "LANG": "C.UTF-8"},
        cwd="/",
    )
    if result.returncode != 0:
        raise PostgresUnavailableError(
            f"{Path(command[0]).name} failed ({result.returncode}):\n{result.stdout}\n{result.stderr}"
        )


@contextmanager
def throwaway_postgres(*, durable: bool = False) -> Generator[str]:
    """Start a private server, yield its DSN, then stop it and delete its files.

    ``durable=False`` turns ``fsync`` off (tests need no crash safety); benchmarks pass
    ``durable=True`` to measure the settings a deployment would use.
    """
    bindir = _bindir()
    user = "postgres" if os.geteuid() == 0 else None
    base = Path(tempfile.mkdtemp(prefix="ai_chat_pg_"))
    data, socket_dir, log = base / "data", base / "socket", base / "server.log"
    socket_dir.mkdir()
    if user is not None:
        for path in (base, socket_dir):
            shutil.chown(path, user, user)
    os.chmod(base, 0o700)
    started = False
    try:
        _run(
            [str(bindir / "initdb"), "-D", str(data), "-U", "postgres", "--auth=trust",
             "--encoding=UTF8", "--no-locale", "--no-sync"],
            user,
        )  # fmt: skip
        options = f"-k {socket_dir} -c listen_addresses='' -c max_connections=200"
        if not durable:
            options += " -c fsync=off -c full_page_writes=off"
        _run(
            [str(bindir / "pg_ctl"), "-D", str(data), "-l", str(log), "-o", options, "-w",
             "-t", "60", "start"],
            user,
        )  # fmt: skip
        started = True
        yield psycopg.conninfo.make_conninfo(
            host=str(socket_dir), port=5432, user="postgres", dbname="postgres"
        )
    finally:
        try:
            if started:
                _run([str(bindir / "pg_ctl"), "-D", str(data), "-m", "fast", "-w", "stop"], user)
        finally:
            shutil.rmtree(base, ignore_errors=True)


def raw_execute(dsn: str, query: str, params: Any = None) -> list[tuple[Any, ...]]:
    """Run one statement on a fresh connection (autocommit) and return its rows."""
    with psycopg.connect(dsn, autocommit=True) as conn:
        cursor = conn.execute(query.encode(), params)
        return cursor.fetchall() if cursor.description else []
