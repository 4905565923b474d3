"""The history guide's examples run and print what the pages show, and type-check.

Each page's ```python blocks are one program (DECISIONS.md); every ``# -> text`` comment
is a line the program prints, in order.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
BLOCK = re.compile(r"^```(\w*)\n(.*?)^```$", re.M | re.S)
PAGES = [
    page
    for page in sorted((ROOT / "docs" / "history").glob("*.md"))
    if "```python" in page.read_text(encoding="utf-8")
]


def program(page: Path) -> str:
    blocks = BLOCK.findall(page.read_text(encoding="utf-8"))
    assert all(language for language, _ in blocks), "every fence names its language"
    return "\n".join(code for language, code in blocks if language == "python")


def shown(code: str) -> list[str]:
    return [
        line.split("# -> ", 1)[1] for line in code.splitlines() if line.lstrip().startswith("# -> ")
    ]


@pytest.mark.parametrize("page", PAGES, ids=[p.name for p in PAGES])
def test_the_page_prints_what_it_shows(page: Path) -> None:
    code = program(page)
    assert code and shown(code)
    result = subprocess.run(
        [sys.executable, "-c", code],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == shown(code)


def test_the_pages_are_pyright_strict_clean(tmp_path: Path) -> None:
    pyright = shutil.which("pyright", path=str(Path(sys.executable).parent))
    assert pyright, "pyright is installed with the dev group"
    files: list[str] = []
    for page in PAGES:
        target = ROOT / "tests" / "history" / f"_page_{page.stem}.py"
        target.write_text(
            "# pyright: reportDuplicateImport=false\n" + program(page), encoding="utf-8"
        )
        files.append(str(target))
    try:
        result = subprocess.run(
            [pyright, *files], cwd=ROOT, capture_output=True, text=True, timeout=600, check=False
        )
    finally:
        for name in files:
            Path(name).unlink()
    assert result.returncode == 0, result.stdout[-5_000:]
