"""What the browser tests need: Node, Debian's Chromium, playwright-core and ESLint from npm.

A missing piece fails the tests with the command that installs it; they never skip.
``npm ci --prefix tests/js`` runs by itself when ``tests/js/node_modules`` lacks a package
that tests/js/package.json pins, or has another version of it (the lockfile pins them).
``AI_CHAT_CHROMIUM`` overrides the browser path.
"""

from __future__ import annotations

import json
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


def _stale() -> list[str]:
    """The packages pinned in tests/js/package.json that node_modules lacks at their pin."""
    manifest = json.loads((JS / "package.json").read_text(encoding="utf-8"))
    pinned: dict[str, str] = {
        **manifest.get("dependencies", {}),
        **manifest.get("devDependencies", {}),
    }
    stale: list[str] = []
    for name, version in sorted(pinned.items()):
        installed = JS / "node_modules" / name / "package.json"
        if not installed.is_file() or (
            json.loads(installed.read_text(encoding="utf-8")).get("version") != version
        ):
            stale.append(f"{name}@{version}")
    return stale


@pytest.fixture(scope="session")
def node_modules(node: str) -> Path:
    """tests/js/node_modules with every pinned package, installed with ``npm ci`` if not."""
    if _stale():
        npm = shutil.which("npm")
        if npm is None:
            pytest.fail("tests/js/node_modules is out of date and npm is not on PATH to install it")
        result = subprocess.run(
            [npm, "ci", "--prefix", str(JS), "--no-audit", "--no-fund"],
            capture_output=True,
            text=True,
            timeout=NPM_TIMEOUT,
            check=False,
        )
        missing = _stale()
        if result.returncode != 0 or missing:
            pytest.fail(
                f"npm ci --prefix tests/js failed (still missing: {missing}):\n"
                f"{result.stdout}\n{result.stderr}"
            )
    return JS / "node_modules"


@pytest.fixture(scope="session")
def playwright_core(node_modules: Path) -> Path:
    """tests/js/node_modules, with playwright-core (the browser driver's only import)."""
    return node_modules
