"""What the browser tests need: Node, Chromium, playwright-core and ESLint from tests/js.

The ``node``, ``chromium`` and ``node_modules`` fixtures come from tests/provision.py,
which installs what is missing before the first test (``AI_CHAT_CHROMIUM`` overrides the
browser path).
"""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture(scope="session")
def playwright_core(node_modules: Path) -> Path:
    """tests/js/node_modules, with playwright-core (the lockfile pins it)."""
    marker = node_modules / "playwright-core" / "package.json"
    assert marker.is_file(), f"{marker} is missing: tests/js/package.json must list playwright-core"
    return node_modules
