"""The documentation site builds with ``mkdocs build --strict``.

Strict turns every warning into a failure: a link to a missing page or anchor, a nav entry
without its file, a mkdocstrings reference to an object that does not exist (``:::
ai_chat.gone``), a docstring griffe cannot parse. The build goes to a temporary folder,
never to site/.
"""

from __future__ import annotations

import os
import pkgutil
import re
import subprocess
import sys
from pathlib import Path

import pytest

from .pages import ROOT


# The public modules the API reference documents, one page each: every module of the
# package whose dotted name has no private part.
def public_modules() -> set[str]:
    import ai_chat

    names = {"ai_chat"}
    for info in pkgutil.walk_packages(ai_chat.__path__, "ai_chat."):
        if not any(part.startswith("_") for part in info.name.split(".")):
            names.add(info.name)
    return names


def test_the_reference_documents_every_public_module() -> None:
    directives: set[str] = set()
    for page in (ROOT / "docs" / "reference").glob("*.md"):
        directives |= set(re.findall(r"^::: (\S+)$", page.read_text("utf-8"), re.M))
    assert directives == public_modules()


@pytest.mark.slow
def test_mkdocs_build_strict(tmp_path: Path) -> None:
    # Material prints a banner about MkDocs 2.0 on every build unless told not to.
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    site = tmp_path / "site"
    result = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(site)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert result.returncode == 0, result.stdout[-5_000:] + result.stderr[-10_000:]
    assert "WARNING" not in result.stderr, result.stderr[-10_000:]
    for page in ("index.html", "reference/ai_chat/index.html", "benchmarks/index.html"):
        assert (site / page).is_file(), page
    # The reference pages hold the rendered docstrings, not just a heading.
    reference = (site / "reference" / "ai_chat" / "index.html").read_text("utf-8")
    assert 'id="ai_chat.create_chat_stream"' in reference
