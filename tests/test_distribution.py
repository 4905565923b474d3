"""The built package works as users install it: the wheel and the sdist from ``uv build``.

Every file git tracks under ai_chat/ (the code, the page's assets, ``py.typed``, schemas
and other data) is in the wheel, and the sdist builds the same wheel. In a fresh virtual
environment the wheel alone answers ``ai-chat send``, and each command that needs an
extra says which, in one line; with the ``server`` extra, ``ai-chat serve`` serves the
page, its assets and a chat. Nothing here imports ai_chat from the source tree.
"""

from __future__ import annotations

import hashlib
import json
import os
import queue
import re
import shutil
import signal
import subprocess
import sys
import threading
import tomllib
import zipfile
from collections.abc import Generator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import IO
from urllib.parse import urljoin

import httpx
import pytest

pytestmark = pytest.mark.slow  # two builds and two fresh environments: some 20 s

ROOT = Path(__file__).resolve().parent.parent
VERSION: str = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"][
    "version"
]
TIMEOUT = 300  # seconds: a hang guard (a build may fetch its backend), not a bound
SERVING = re.compile(r"^ai-chat: serving .+ at (http://\S+/) \(Ctrl\+C to stop\)$")
HELLO = {
    "id": "chat-1",
    "messages": [{"id": "u1", "role": "user", "parts": [{"type": "text", "text": "Hello"}]}],
    "trigger": "submit-message",
}
EXTRAS = {"openai": ["send", "hi", "--provider", "openai"],
          "anthropic": ["send", "hi", "--provider", "anthropic"],
          "gemini": ["send", "hi", "--provider", "gemini"],
          "server": ["serve", "--port", "0"]}  # fmt: skip


def _uv() -> str:
    found = os.environ.get("UV") or shutil.which("uv")  # `uv run` sets UV
    if found is None:
        pytest.fail("these tests build with uv, which is not on PATH (pip install uv)")
    return found


def _clean_env() -> dict[str, str]:
    # Nothing that could point the installed command back at the source tree or the
    # development environment.
    dropped = {"VIRTUAL_ENV", "PYTHONPATH", "PYTHONHOME", "PYTHONSTARTUP"}
    return {k: v for k, v in os.environ.items() if k not in dropped}


def _run(*command: str | Path, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(part) for part in command],
        cwd=cwd,
        env={**_clean_env(), "PYTHONIOENCODING": "utf-8"},
        capture_output=True,
        text=True,
        encoding="utf-8",
        timeout=TIMEOUT,
        check=False,
    )


def _ok(result: subprocess.CompletedProcess[str]) -> str:
    assert result.returncode == 0, f"{result.args} failed:\n{result.stdout}\n{result.stderr}"
    return result.stdout


def _contents(wheel: Path) -> dict[str, str]:
    """Each file in the wheel and the digest of its bytes."""
    with zipfile.ZipFile(wheel) as archive:
        return {
            name: hashlib.sha256(archive.read(name)).hexdigest()
            for name in archive.namelist()
            if not name.endswith("/")
        }


@dataclass(frozen=True)
class Built:
    wheel: Path
    """Built from the sdist (what ``uv build`` does by default)."""
    sdist: Path
    tree_wheel: Path
    """Built from the source tree directly."""


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Built:
    out = tmp_path_factory.mktemp("dist")
    _ok(_run(_uv(), "build", ROOT, "--out-dir", out / "release", cwd=out))
    _ok(_run(_uv(), "build", ROOT, "--wheel", "--out-dir", out / "tree", cwd=out))
    (sdist,) = (out / "release").glob("*.tar.gz")
    (wheel,) = (out / "release").glob("*.whl")
    (tree_wheel,) = (out / "tree").glob("*.whl")
    return Built(wheel, sdist, tree_wheel)


def test_the_wheel_holds_exactly_the_files_git_tracks_under_ai_chat(built: Built) -> None:
    tracked = set(_ok(_run("git", "ls-files", "-z", "--", "ai_chat", cwd=ROOT)).split("\0")) - {""}
    shipped = set(_contents(built.wheel))
    package = {name for name in shipped if name.startswith("ai_chat/")}
    assert {"ai_chat/__init__.py", "ai_chat/py.typed"} <= tracked
    assert sorted(tracked - package) == [], "tracked but not in the wheel"
    assert sorted(package - tracked) == [], "in the wheel but not tracked by git (git add it?)"
    info = f"ai_chat-{VERSION}.dist-info/"
    assert sorted(shipped - package - {n for n in shipped if n.startswith(info)}) == []
    assert info + "licenses/LICENSE" in shipped
    assert info + "entry_points.txt" in shipped


def test_the_sdist_builds_the_same_wheel(built: Built) -> None:
    assert built.wheel.name == built.tree_wheel.name == f"ai_chat-{VERSION}-py3-none-any.whl"
    assert built.sdist.name == f"ai_chat-{VERSION}.tar.gz"
    assert _contents(built.wheel) == _contents(built.tree_wheel)


@dataclass(frozen=True)
class Installed:
    root: Path
    bin: Path


def _install(root: Path, requirement: str) -> Installed:
    """A fresh virtual environment at ``root`` with ``requirement`` installed."""
    _ok(_run(_uv(), "venv", "--quiet", "--python", sys.executable, root / "venv", cwd=root))
    python = root / "venv" / "bin" / "python"
    _ok(_run(_uv(), "pip", "install", "--quiet", "--python", python, requirement, cwd=root))
    # The command imports the installed copy, not this checkout.
    where = _ok(_run(python, "-c", "import ai_chat; print(ai_chat.__file__)", cwd=root))
    assert Path(where.strip()).is_relative_to(root / "venv"), where
    return Installed(root, root / "venv" / "bin")


@pytest.fixture(scope="module")
def bare(built: Built, tmp_path_factory: pytest.TempPathFactory) -> Installed:
    return _install(tmp_path_factory.mktemp("bare"), str(built.wheel))


@pytest.fixture(scope="module")
def with_server(built: Built, tmp_path_factory: pytest.TempPathFactory) -> Installed:
    return _install(tmp_path_factory.mktemp("server"), f"ai_chat[server] @ {built.wheel.as_uri()}")


def test_the_wheel_alone_sends_hello(bare: Installed) -> None:
    out = _ok(_run(bare.bin / "ai-chat", "send", "Hello", "--delay", "0", cwd=bare.root))
    assert out.startswith("[reasoning] The user wrote 1 word.")
    assert 'You said: "Hello".' in out
    assert out.splitlines()[-1].startswith("[finish: tool-calls")
    version = _ok(
        _run(bare.bin / "python", "-c", "import ai_chat; print(ai_chat.__version__)", cwd=bare.root)
    )
    assert version.strip() == VERSION


@pytest.mark.parametrize(("extra", "argv"), EXTRAS.items(), ids=list(EXTRAS))
def test_without_an_extra_the_command_names_it_in_one_line(
    bare: Installed, extra: str, argv: list[str]
) -> None:
    result = _run(bare.bin / "ai-chat", *argv, cwd=bare.root)
    assert result.returncode == 1, result.stderr
    assert result.stdout == ""
    assert result.stderr.count("\n") == 1, result.stderr
    assert f'pip install "ai_chat[{extra}]"' in result.stderr


@contextmanager
def _serving(installed: Installed) -> Generator[tuple[str, subprocess.Popen[str]]]:
    """``ai-chat serve --port 0`` from ``installed``; yields its URL and the process.

    Its stderr is read by a thread until the "serving" line (a buffered reader and
    ``select`` do not mix), so that a silent server fails after :data:`TIMEOUT`.
    """
    with subprocess.Popen(
        [str(installed.bin / "ai-chat"), "serve", "--port", "0", "--delay", "0"],
        cwd=installed.root,  # the default SQLite store goes here
        env=_clean_env(),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        encoding="utf-8",
    ) as process:
        lines: queue.Queue[str] = queue.Queue()

        def read(stream: IO[str]) -> None:
            for line in iter(stream.readline, ""):
                lines.put(line)
                if SERVING.match(line.rstrip("\n")):
                    return
            lines.put("")  # the process closed stderr: it exited

        assert process.stderr is not None
        reader = threading.Thread(target=read, args=(process.stderr,), daemon=True)
        reader.start()
        try:
            seen: list[str] = []
            url: str | None = None
            while url is None:
                line = lines.get(timeout=TIMEOUT)
                assert line, f"ai-chat serve exited: {seen}"
                seen.append(line)
                match = SERVING.match(line.rstrip("\n"))
                url = match[1] if match else None
            reader.join(TIMEOUT)
            yield url, process
        finally:
            if process.poll() is None:
                process.kill()
            process.communicate()


def _assets(page: str) -> list[str]:
    """The page's own files it refers to (scripts, styles, icons), as relative URLs."""
    found = re.findall(r"""(?:src|href)\s*=\s*["']([^"'#]+)["']""", page)
    return [ref for ref in found if not re.match(r"^[a-z][a-z0-9+.-]*:|^//", ref, re.I)]


def _stop(process: subprocess.Popen[str]) -> tuple[int, str]:
    process.send_signal(signal.SIGINT)  # Ctrl+C
    _, rest = process.communicate(timeout=TIMEOUT)
    return process.returncode, rest


def test_with_the_server_extra_serve_answers_the_page_and_a_chat(with_server: Installed) -> None:
    with _serving(with_server) as (url, process), httpx.Client(timeout=TIMEOUT) as client:
        page = client.get(url)
        assert page.status_code == 200
        assert page.headers["content-type"].startswith("text/html")
        assert "<html" in page.text.lower()
        for asset in _assets(page.text):
            response = client.get(urljoin(url, asset))
            assert response.status_code == 200, f"{asset}: {response.status_code}"
        answer = client.post(urljoin(url, "api/chat"), json=HELLO)
        status, rest = _stop(process)
    assert answer.status_code == 200, answer.text
    assert answer.headers["content-type"].startswith("text/event-stream")
    assert answer.text.endswith("data: [DONE]\n\n")
    deltas = _deltas(answer.text)
    assert "".join(deltas).startswith('You said: "Hello".')
    assert (status, rest) == (0, "ai-chat: stopped\n")


def _deltas(body: str) -> list[str]:
    chunks: list[Mapping[str, object]] = [
        json.loads(event[6:]) for event in body.split("\n\n") if event.startswith("data: {")
    ]
    return [str(chunk["delta"]) for chunk in chunks if chunk.get("type") == "text-delta"]
