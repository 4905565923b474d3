"""examples/server_app.py runs as documented."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.slow
def test_the_server_example_answers_on_every_route() -> None:
    result = subprocess.run(
        [sys.executable, "examples/server_app.py", "--smoke"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines == [
        "/api/chat: 200 'You said: \"Hi\". This answer comes from t'... finish",
        "/assistant/api/chat: 200 'You said: \"Hi\". This answer comes from t'... finish",
        "/api/custom: 200 'You said: \"Hi\". This answer comes from t'... finish",
        "/assistant/: 200 text/html; charset=utf-8",
    ]
