"""Every import the docs and the README show works, and names only public API.

The pages are scanned for ``from ai_chat... import ...`` and ``import ai_chat...`` (in
code blocks and in prose alike); each imported module must be importable and each name
must be in that module's ``__all__`` (or be a public submodule of it).
"""

from __future__ import annotations

import importlib
import re
from types import ModuleType

import pytest

from .pages import pages

FROM_IMPORT = re.compile(
    r"\bfrom\s+(?P<module>ai_chat(?:\.\w+)*)\s+import\s+(?P<names>\([^)]*\)|[^\n`#;]+)"
)
IMPORT = re.compile(
    r"(?:^|[\s`;])import\s+(?P<modules>ai_chat(?:\.\w+)*(?:\s*,\s*ai_chat(?:\.\w+)*)*)"
)


def documented_imports() -> dict[tuple[str, str | None], list[str]]:
    """``(module, name or None)`` -> the pages that show the import."""
    found: dict[tuple[str, str | None], list[str]] = {}
    for page in pages():
        text = page.text
        for match in FROM_IMPORT.finditer(text):
            names = match["names"].strip().strip("()")
            for item in names.replace("\n", " ").split(","):
                name = item.split("#", 1)[0].strip().split(" as ", 1)[0].strip()
                if name:
                    found.setdefault((match["module"], name), []).append(page.name)
        for match in IMPORT.finditer(text):
            for module in match["modules"].split(","):
                found.setdefault((module.strip(), None), []).append(page.name)
    return found


IMPORTS = documented_imports()
CASES = sorted(IMPORTS, key=lambda case: (case[0], case[1] or ""))


def test_the_docs_show_imports() -> None:
    modules = {module for module, _ in IMPORTS}
    assert {"ai_chat", "ai_chat.types", "ai_chat.store", "ai_chat.server"} <= modules
    assert len(IMPORTS) >= 30


def _public(module: ModuleType) -> set[str]:
    return set(getattr(module, "__all__", ()))


@pytest.mark.parametrize(
    ("module_name", "name"), CASES, ids=[f"{m}:{n}" if n else m for m, n in CASES]
)
def test_the_documented_import_works(module_name: str, name: str | None) -> None:
    shown_on = ", ".join(sorted(set(IMPORTS[(module_name, name)])))
    assert not any(part.startswith("_") for part in module_name.split(".")), (
        f"{shown_on}: {module_name} is private"
    )
    module = importlib.import_module(module_name)
    if name is None:
        return
    if name in _public(module):
        assert hasattr(module, name)
        return
    try:
        importlib.import_module(f"{module_name}.{name}")
    except ModuleNotFoundError:
        pytest.fail(f"{shown_on}: `from {module_name} import {name}`: not in its __all__")
