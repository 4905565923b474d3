"""Released migrations are never edited, only added to: a database migrated by one
release must be what the next one expects."""

from __future__ import annotations

import hashlib
from types import ModuleType

import pytest

from ai_chat.store import _postgres_schema, _sqlite_schema

# The SHA-256 of each released step's statements (joined by NUL). A new migration adds a
# digest here; an existing one never changes.
RELEASED = {
    _sqlite_schema: [
        "1678f19a6db3b4a774f5d572d0332aee4a606047c42fcd481b460c01ca917309",
        "a10d2abccbc13e8b9771a17044dc2e5e0a26f061857e8eda1c4cd8885d6a3a6d",
    ],
    _postgres_schema: [
        "88d45c96b0fe0c9d7a7a76bd4d6322ed179f683802a4ee16d30c0de4a1d64aab",
        "2d4cca780e048efa62e53e66e7591cb6f67c1874fa47d9704555cdc022f1f9f8",
    ],
}


def digest(step: tuple[str, ...]) -> str:
    return hashlib.sha256("\x00".join(step).encode()).hexdigest()


@pytest.mark.parametrize("schema", list(RELEASED), ids=lambda m: m.__name__)
def test_released_migrations_are_unchanged(schema: ModuleType) -> None:
    steps: tuple[tuple[str, ...], ...] = schema.MIGRATIONS
    released = RELEASED[schema]
    assert [digest(step) for step in steps[: len(released)]] == released
    assert schema.SCHEMA_VERSION == len(steps) >= len(released)


def test_the_digest_sees_an_edit() -> None:
    step = _sqlite_schema.MIGRATIONS[0]
    edited = (step[0].replace("TEXT", "text", 1), *step[1:])
    assert digest(edited) != digest(step)


def test_the_postgres_schema_imports_without_psycopg() -> None:
    import subprocess
    import sys

    code = (
        "import sys; sys.modules['psycopg'] = None\n"
        "import ai_chat.store._postgres_schema as schema\n"
        "print(schema.SCHEMA_VERSION)"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=False
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == str(_postgres_schema.SCHEMA_VERSION)
