"""The documented pages (docs/**/*.md and README.md) and the code fences in them.

The convention (DECISIONS.md): a page's ```python blocks, concatenated in order, are one
program that runs from the repository root and is pyright-strict checked; its ```py
blocks are pyright-checked only; every other fence (```sh, ```text, ```json, ...) is
prose. A fence must name its language, so that no Python escapes the checks unnoticed.
"""

from __future__ import annotations

import re
import textwrap
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

# Languages a fence may name; python and py are checked, the rest are shown as they are.
PROSE_LANGUAGES = frozenset({"sh", "console", "text", "json", "yaml", "toml", "js", "html"})
CHECKED_LANGUAGES = frozenset({"python", "py"})

FENCE = re.compile(
    r"^(?P<indent>[ \t]*)```(?P<info>[^\n`]*)\n(?P<body>.*?)^(?P=indent)```[ \t]*$",
    re.M | re.S,
)


# Each block stands alone on its page, so imports repeat across a page's blocks.
HEADER = "# pyright: reportDuplicateImport=false\n"


@dataclass(frozen=True)
class Fence:
    language: str
    code: str
    line: int  # 1-based line of the opening fence


@dataclass(frozen=True)
class Page:
    path: Path

    @property
    def name(self) -> str:
        return self.path.relative_to(ROOT).as_posix()

    @property
    def text(self) -> str:
        return self.path.read_text(encoding="utf-8")

    def fences(self) -> list[Fence]:
        text = self.text
        found: list[Fence] = []
        for match in FENCE.finditer(text):
            language = match["info"].strip().split(" ", 1)[0]
            code = textwrap.dedent(match["body"])
            found.append(Fence(language, code, text.count("\n", 0, match.start()) + 1))
        return found

    def blocks(self, language: str) -> list[str]:
        return [fence.code for fence in self.fences() if fence.language == language]

    def program(self, language: str) -> str:
        """The page's blocks of ``language`` as one module (imports repeat across blocks)."""
        return "".join(line for line, _ in self._program_lines(language))

    def page_line(self, language: str, program_line: int) -> int:
        """The line of the page that line ``program_line`` (1-based) of the program is."""
        return self._program_lines(language)[program_line - 1][1]

    def _program_lines(self, language: str) -> list[tuple[str, int]]:
        lines = [(HEADER, 0)]
        for fence in self.fences():
            if fence.language == language:
                if len(lines) > 1:
                    lines += [("\n", 0), ("\n", 0)]
                code = fence.code.splitlines(keepends=True)
                lines += [(text, fence.line + 1 + index) for index, text in enumerate(code)]
        return lines


def pages() -> list[Page]:
    docs = sorted((ROOT / "docs").rglob("*.md"))
    return [Page(ROOT / "README.md"), *(Page(path) for path in docs)]
