"""examples/history_basics.py runs as documented on both backends."""

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent.parent


@pytest.mark.parametrize("backend", ["asyncio", "trio"])
def test_history_basics(backend: str) -> None:
    result = subprocess.run(
        [sys.executable, "examples/history_basics.py", backend],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,  # a hang guard
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == [
        "while streaming: 3 messages shown, 2 sent",
        'answer: You said: "Show me bookings for tomorrow...',
        "pending: search",
        "check, all providers: True",
        "problems: ['unanswered-tool-call']",
        "repaired: ['added-result'], ok: True",
        "stored and loaded: True, 7 messages",
        "JSON round trip: True",
    ]
