"""examples/store_basic.py runs as documented on both backends."""

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent.parent


@pytest.mark.parametrize("backend", ["asyncio", "trio"])
def test_store_basic(backend: str) -> None:
    result = subprocess.run(
        [sys.executable, "examples/store_basic.py", backend],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,  # a hang guard
        check=False,
    )
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0].startswith("turn 1: conversation ") and lines[0].endswith(", version 2")
    assert lines[1].endswith(", version 4")
    assert lines[0].split()[3] == lines[1].split()[3]  # the second turn resumed the first
    assert lines[2] == "rating: 5 (Very helpful!), messages: 4"
    assert lines[3] == "  #1 user: Show me bookings for tomorrow"
    assert lines[5] == "  #3 user: And for Friday?"
    assert lines[-1] == "last two: [3, 4]"
