"""What the browser tests need: Node, Debian's Chromium and playwright-core from npm.

A missing piece fails the tests with the command that installs it; they never skip.
``npm ci --prefix tests/js`` runs by itself when ``tests/js/node_modules`` lacks
playwright-core (the lockfile pins it). ``AI_CHAT_CHROMIUM`` overrides the browser path.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
JS = ROOT / "tests" / "js"
# Hang guard for npm, not a performance assertion.
NPM_TIMEOUT = 600


@pytest.fixture(scope="session")
def node() -> str:
    """The ``node`` executable."""
    found = shutil.which("node")
    if found is None:
        pytest.fail("the browser tests need Node.js (apt-get install nodejs), not found on PATH")
    return found


@pytest.fixture(scope="session")
def chromium() -> str:
    """The Chromium executable (Debian's package: apt-get install chromium)."""
    path = os.environ.get("AI_CHAT_CHROMIUM", "/usr/bin/chromium")
    if not (os.path.isfile(path) and os.access(path, os.X_OK)):
        pytest.fail(
            f"the browser tests need Chromium at {path} (apt-get install chromium, or set "
            "AI_CHAT_CHROMIUM to another Chromium executable)"
        )
    return path


@pytest.fixture(scope="session")
def playwright_core(node: str) -> Path:
    """tests/js/node_modules with playwright-core, installed with ``npm ci`` if missing."""
    marker = JS / "node_modules" / "playwright-core" / "package.json"
    if not marker.is_file():
        npm = shutil.which("npm")
        if npm is None:
            pytest.fail("tests/js/node_modules is missing and npm is not on PATH to install it")
        result = subprocess.run(
            [npm, "ci", "--prefix", str(JS), "--no-audit", "--no-fund"],
            capture_output=True,
            text=True,
            timeout=NPM_TIMEOUT,
            check=False,
        )
        if result.returncode != 0 or not marker.is_file():
            pytest.fail(f"npm ci --prefix tests/js failed:\n{result.stdout}\n{result.stderr}")
    return JS / "node_modules"
