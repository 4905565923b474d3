"""The chat page's files: what the server makes of them, how they ship, and their lint.

``ai_chat/server/static/`` holds ``index.html``, ``chat.css`` and ``chat.js``;
``ai_chat/server/_page.py`` inlines the style and the script and allows them by hash. Here:
the served document holds the files' text exactly and its CSP names their hashes (computed
here from the files on disk, not by the module under test); the files are in the wheel
that ``uv build`` makes and the page loads from that wheel as a zip; the script passes
``node --check`` and the ESLint pinned in tests/js (tests/js/eslint.config.js).
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
import shutil
import subprocess
import sys
import zipfile
from html.parser import HTMLParser
from pathlib import Path
from typing import Any, cast

import pytest

from ai_chat.server._page import CHAT_PAGE_HTML, chat_page_html

ROOT = Path(__file__).resolve().parents[2]
STATIC = ROOT / "ai_chat" / "server" / "static"
FILES = ("index.html", "chat.css", "chat.js")
ESLINT_CONFIG = ROOT / "tests" / "js" / "eslint.config.js"
# Hang guards for the subprocesses, never performance assertions.
TOOL_TIMEOUT = 300


def text_of(name: str) -> str:
    # As a browser's HTML parser keeps it: CR and CRLF become LF.
    return (STATIC / name).read_bytes().decode("utf-8").replace("\r\n", "\n").replace("\r", "\n")


def sha256_source(text: str) -> str:
    return "'sha256-" + base64.b64encode(hashlib.sha256(text.encode()).digest()).decode() + "'"


class Elements(HTMLParser):
    """Every element's tag and attributes, and the text of <script> and <style> elements."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.raw: dict[str, list[str]] = {"script": [], "style": []}
        self._inside: str | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))
        if tag in self.raw:
            self._inside = tag
            self.raw[tag].append("")

    def handle_endtag(self, tag: str) -> None:
        if tag == self._inside:
            self._inside = None

    def handle_data(self, data: str) -> None:
        if self._inside is not None:
            self.raw[self._inside][-1] += data


def parse(page: str) -> Elements:
    parsed = Elements()
    parsed.feed(page)
    parsed.close()
    return parsed


def csp_of(parsed: Elements) -> dict[str, list[str]]:
    [policy] = [
        attrs["content"]
        for tag, attrs in parsed.tags
        if tag == "meta" and attrs.get("http-equiv") == "Content-Security-Policy"
    ]
    assert policy is not None
    directives: dict[str, list[str]] = {}
    for directive in policy.split(";"):
        name, *sources = directive.split()
        directives[name] = sources
    return directives


def test_the_page_inlines_the_files_and_allows_exactly_them_by_hash() -> None:
    style, script = text_of("chat.css"), text_of("chat.js")
    for page in (CHAT_PAGE_HTML, chat_page_html("v1/chat", "v1/chats")):
        parsed = parse(page)
        assert parsed.raw == {"script": [script], "style": [style]}
        csp = csp_of(parsed)
        assert csp["default-src"] == ["'none'"]
        assert csp["script-src"] == [sha256_source(script)]
        assert csp["style-src"] == [sha256_source(style)]
        assert csp["connect-src"] == ["'self'"]
        assert "'unsafe-inline'" not in page and "'unsafe-eval'" not in page
        # Nothing is fetched from elsewhere: no src, no stylesheet, the icon is data:.
        assert [attrs for _, attrs in parsed.tags if "src" in attrs] == []
        assert [attrs["href"] for tag, attrs in parsed.tags if tag == "link"] == ["data:,"]


def test_every_slot_of_index_html_is_filled_once() -> None:
    template = text_of("index.html")
    slots = re.findall(r"\{\{([a-z]+)\}\}", template)
    assert sorted(slots) == ["api", "chats", "csp", "script", "style", "token"]
    page = chat_page_html("v1/chat", "v1/chats", token=True)
    outside = page.replace(text_of("chat.js"), "").replace(text_of("chat.css"), "")
    assert re.search(r"\{\{[a-z]+\}\}", outside) is None
    assert '<meta name="ai-chat-api" content="v1/chat">' in page
    assert '<meta name="ai-chat-chats" content="v1/chats">' in page
    assert '<meta name="ai-chat-token" content="required">' in page
    assert '<meta name="ai-chat-token" content="">' in chat_page_html("v1/chat")
    # What is outside the slots is index.html, as written.
    literal = re.split(r"\{\{[a-z]+\}\}", template)
    position = 0
    for piece in literal:
        found = page.find(piece, position)
        assert found >= position, piece
        position = found + len(piece)


def test_a_slot_written_in_a_value_is_not_filled() -> None:
    page = chat_page_html("{{script}}", "{{csp}}")
    assert '<meta name="ai-chat-api" content="{{script}}">' in page
    assert '<meta name="ai-chat-chats" content="{{csp}}">' in page
    assert page.count(text_of("chat.js")) == 1


def test_the_style_and_the_script_cannot_end_their_element_early() -> None:
    # The HTML parser ends a <script> at "</script" and a <style> at "</style", whatever
    # the case; inside the files that would cut the page's code short.
    assert "</script" not in text_of("chat.js").lower()
    assert "<!--" not in text_of("chat.js")
    assert "</style" not in text_of("chat.css").lower()


def test_the_script_passes_node_check(node: str) -> None:
    result = subprocess.run(
        [node, "--check", str(STATIC / "chat.js")],
        capture_output=True,
        text=True,
        timeout=TOOL_TIMEOUT,
        check=False,
    )
    assert result.returncode == 0, result.stderr


def eslint(node: str, node_modules: Path, *arguments: str, stdin: str | None = None) -> Any:
    """The pinned ESLint's JSON report, run from the repository root with our config."""
    result = subprocess.run(
        [
            node,
            str(node_modules / "eslint" / "bin" / "eslint.js"),
            "--config",
            str(ESLINT_CONFIG),
            "--format",
            "json",
            *arguments,
        ],
        cwd=ROOT,
        input=stdin,
        capture_output=True,
        text=True,
        timeout=TOOL_TIMEOUT,
        check=False,
    )
    # 0: clean, 1: problems found (in the report); anything else is ESLint failing.
    assert result.returncode in (0, 1), result.stdout + result.stderr
    return json.loads(result.stdout)


def problems(report: Any) -> list[str]:
    found: list[str] = []
    for result in cast("list[dict[str, Any]]", report):
        path = Path(result["filePath"]).relative_to(ROOT)
        for message in cast("list[dict[str, Any]]", result["messages"]):
            found.append(
                f"{path}:{message.get('line')}:{message.get('column')}: "
                f"{message['message']} ({message.get('ruleId')})"
            )
    return found


def test_eslint_finds_nothing_in_the_page_and_the_node_scripts(
    node: str, node_modules: Path
) -> None:
    report = eslint(node, node_modules, "--max-warnings", "0", "ai_chat/server/static", "tests/js")
    assert problems(report) == [], "\n".join(problems(report))
    linted = {Path(r["filePath"]).relative_to(ROOT).as_posix() for r in report}
    assert "ai_chat/server/static/chat.js" in linted
    assert {"tests/js/browser_chat.mjs", "tests/js/eslint.config.js"} <= linted


def test_eslint_lints_the_page_as_a_browser_script(node: str, node_modules: Path) -> None:
    # The config reaches the page's folder: browser globals are known, a typo is not,
    # and the page's rules hold (a strict-mode script, no shadowing, no loose equality).
    source = (
        '"use strict";\n'
        "const list = document.getElementById('log');\n"
        "function show(list) { if (list == null) return; windw.alert(list); }\n"
        "show(list);\n"
    )
    report = eslint(
        node,
        node_modules,
        "--stdin",
        "--stdin-filename",
        "ai_chat/server/static/probe.js",
        stdin=source,
    )
    rules = sorted(m["ruleId"] for r in report for m in r["messages"])
    assert rules == ["eqeqeq", "no-shadow", "no-undef"], problems(report)


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The wheel ``uv build`` makes from the source tree (through the sdist, as a release)."""
    uv = shutil.which("uv")
    if uv is None:
        pytest.fail("uv is not on PATH: it builds the wheel (https://docs.astral.sh/uv/)")
    out = tmp_path_factory.mktemp("dist")
    result = subprocess.run(
        [uv, "build", "--out-dir", str(out), str(ROOT)],
        capture_output=True,
        text=True,
        timeout=TOOL_TIMEOUT,
        check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    [built] = out.glob("*.whl")
    return built


def test_the_wheel_holds_the_page_files(wheel: Path) -> None:
    with zipfile.ZipFile(wheel) as archive:
        for name in FILES:
            assert archive.read(f"ai_chat/server/static/{name}") == (STATIC / name).read_bytes()


def test_the_page_loads_from_the_wheel_as_a_zip(wheel: Path) -> None:
    # The wheel itself on sys.path: zipimport, so importlib.resources reads from the zip.
    program = (
        "import json, sys\n"
        f"sys.path.insert(0, {str(wheel)!r})\n"
        "from ai_chat.server import _page\n"
        "print(json.dumps([_page.__file__, _page.__loader__.__class__.__name__,"
        " _page.chat_page_html('v1/chat', 'v1/chats')]))\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", program],
        cwd=wheel.parent,
        capture_output=True,
        text=True,
        timeout=TOOL_TIMEOUT,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    path, loader, page = json.loads(result.stdout)
    assert path.startswith(str(wheel) + "/") and loader == "zipimporter"
    assert page == chat_page_html("v1/chat", "v1/chats")
