"""The code stays ruff clean, formatted, and pyright strict clean (library and tests).

The docs' and the README's snippets are checked in tests/docs/test_snippets.py.
"""

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def run(*command: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        command, cwd=ROOT, capture_output=True, text=True, timeout=600, check=False
    )


def tool(name: str) -> str:
    found = shutil.which(name, path=str(Path(sys.executable).parent))
    assert found, f"{name} is not installed in the environment (uv sync installs the dev group)"
    return found


def test_ruff_check() -> None:
    result = run(tool("ruff"), "check", ".")
    assert result.returncode == 0, result.stdout + result.stderr


def test_ruff_format() -> None:
    result = run(tool("ruff"), "format", "--check", ".")
    assert result.returncode == 0, result.stdout + result.stderr


@pytest.mark.usefixtures("node")  # pyright runs on Node.js
def test_pyright_strict() -> None:
    result = run(tool("pyright"))
    assert result.returncode == 0, result.stdout[-20_000:] + result.stderr[-5_000:]
    assert "0 errors" in result.stdout
