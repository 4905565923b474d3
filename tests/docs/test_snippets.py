"""Every Python snippet in the docs and the README runs or type-checks as documented.

A page's ```python blocks form one program: it runs in a subprocess from the repository
root (offline: the snippets use in-process transports and temporary folders) and must
leave the root as it found it. Both its ```python program and its ```py blocks are
checked by pyright in strict mode, in one pyright run over every page.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from .pages import CHECKED_LANGUAGES, PROSE_LANGUAGES, ROOT, Page, pages

PAGES = pages()
PROGRAMS = [page for page in PAGES if page.blocks("python")]
TYPED = [
    (page, language) for page in PAGES for language in ("python", "py") if page.blocks(language)
]

# What a page's program prints, where the page shows it (in a comment or in prose). Pages
# whose blocks mark every printed line with a ``# -> line`` comment need no entry here.
EXPECTED_OUTPUT = {
    "README.md": ['You said: "Hello".', "[tool-calls]"],
    "docs/getting-started.md": ['You said: "Hello".', "[tool-calls]", 'You said: "Hello"\n'],
    "docs/concepts/messages.md": [
        "tuple 4\n",
        "'x-note': 1",
        '$[0].role expected "system", "user", "assistant" or "tool", got "bot"\n',
        "Be brief.\n",
        "FrozenDict is immutable: __setitem__() is not supported; copy it with dict()\n",
    ],
    "docs/concepts/request.md": [
        "1 get_weather\n",
        '$.tool: unknown request field "tool" (expected messages, tools, parameters)\n',
        '$.parameters.toolChoice: "required" needs at least one tool in "tools"\n',
        "$.parameters.maxOutputTokens: expected a positive integer, got the number 0\n",
    ],
    "docs/concepts/events.md": [
        "text: Sunny.\n",
        "finish, output tokens: 2\n",
        "got start\n",
        "1 text-delta\n",
        'event #1 (text-delta): text-delta for part id "t1", which was never started',
    ],
    "docs/concepts/stopping.md": [
        'signal: AbortSignal(aborted=True, reason="the consumer\'s read was cancelled")\n',
        "after break, adapter running: False\n",
        "stopped: the user pressed stop\n",
    ],
    "docs/concepts/limits-and-errors.md": [
        "FrozenDict({'city': 'Zürich', 'days': (1, 2.0, 1e+21)})\n",
        "36 4 1e+21\n",
        "$: integer beyond JavaScript's safe range (±9007199254740991): ",
        "max_depth 64 65\n",
    ],
    "docs/adapters/writing.md": ["Hello, world\n"],
    "docs/adapters/ui-stream.md": ['You said: "Hi".', " [tool-calls, usage "],
    "docs/serving/server.md": [
        "v1\n",
        'data: {"type":"start","me\n',
        "data: [DONE]\n",
        "\n1\n",
        "422 $.messages[0].role\n",
        "200 data: [DONE]\n",
    ],
    "docs/serving/conversations.md": ["Hello ['user', 'assistant'] 404\n"],
    "docs/stores.md": [
        "1 1 5 ",
        "conflict: 0 1\n",
        "duplicate: u1\n",
        "not found: no-such-id\n",
    ],
}


def _root_files() -> list[str]:
    # Coverage data files of the whole-suite run (tests/conftest.py) come and go in the
    # root while any subprocess runs: they are the harness's, not the program's.
    return sorted(p.name for p in ROOT.iterdir() if not p.name.startswith(".coverage"))


def _id(page: Page) -> str:
    return page.name


def test_the_readme_and_the_pages_have_their_examples() -> None:
    names = {page.name for page in PROGRAMS}
    assert {"README.md", "docs/getting-started.md"} <= names
    assert set(EXPECTED_OUTPUT) <= names, "a page named in EXPECTED_OUTPUT has no program"
    assert len(PROGRAMS) >= 10


@pytest.mark.parametrize("page", PAGES, ids=_id)
def test_every_fence_names_a_known_language(page: Page) -> None:
    unknown = [
        (fence.line, fence.language)
        for fence in page.fences()
        if fence.language not in CHECKED_LANGUAGES | PROSE_LANGUAGES
    ]
    assert not unknown, f"{page.name}: fences without a known language (line, info): {unknown}"


@pytest.mark.slow
@pytest.mark.parametrize("page", PROGRAMS, ids=_id)
def test_the_python_blocks_run(page: Page, tmp_path: Path) -> None:
    program = tmp_path / "program.py"
    program.write_text(page.program("python"), encoding="utf-8")
    before = _root_files()
    result = subprocess.run(
        [sys.executable, str(program)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
    )
    assert result.returncode == 0, f"{page.name}:\n{result.stderr[-10_000:]}"
    assert _root_files() == before, "the program left files"
    for expected in EXPECTED_OUTPUT.get(page.name, []):
        assert expected in result.stdout, f"{page.name}: {expected!r} not in\n{result.stdout}"
    # A page that writes its output as ``# -> line`` comments shows every line it prints.
    shown = [
        line.split("# -> ", 1)[1]
        for line in page.program("python").splitlines()
        if line.lstrip().startswith("# -> ")
    ]
    if shown:
        assert result.stdout.splitlines() == shown, f"{page.name}:\n{result.stdout}"


@pytest.fixture(scope="module")
def pyright_errors(
    tmp_path_factory: pytest.TempPathFactory, node: str
) -> dict[str, list[tuple[int, str]]]:
    """Pyright strict over every page's programs at once: (line, message) by module name.

    ``node`` is there because pyright runs on Node.js (tests/provision.py installs it).
    """
    folder = tmp_path_factory.mktemp("snippets")
    for page, language in TYPED:
        (folder / _module_name(page, language)).write_text(page.program(language), "utf-8")
    pyright = shutil.which("pyright", path=str(Path(sys.executable).parent))
    assert pyright, "pyright is not installed in the environment (uv sync installs the dev group)"
    # Run from the root, so pyproject.toml's settings (strict, the venv) apply to the files.
    result = subprocess.run(
        [pyright, "--outputjson", *sorted(str(path) for path in folder.iterdir())],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    report = json.loads(result.stdout)
    assert report["summary"]["filesAnalyzed"] == len(TYPED), result.stdout[-5_000:]
    errors: dict[str, list[tuple[int, str]]] = {}
    for diagnostic in report["generalDiagnostics"]:
        if diagnostic["severity"] == "error":
            line = diagnostic["range"]["start"]["line"] + 1
            message = f"{diagnostic['message']} ({diagnostic.get('rule', '')})"
            errors.setdefault(Path(diagnostic["file"]).name, []).append((line, message))
    return errors


def _module_name(page: Page, language: str) -> str:
    stem = page.name.removesuffix(".md").replace("/", "__").replace("-", "_").replace(".", "_")
    return f"{stem}__{language}.py"


@pytest.mark.slow
@pytest.mark.parametrize(
    ("page", "language"), TYPED, ids=[f"{page.name}-{language}" for page, language in TYPED]
)
def test_the_python_blocks_are_pyright_strict_clean(
    page: Page, language: str, pyright_errors: dict[str, list[tuple[int, str]]]
) -> None:
    errors = [
        f"{page.name}:{page.page_line(language, line)}: {message}"
        for line, message in pyright_errors.get(_module_name(page, language), [])
    ]
    assert not errors, f"the ```{language} blocks are not pyright strict clean:\n" + "\n".join(
        errors
    )
