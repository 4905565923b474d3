"""The suite sets up what it drives for real: a pytest plugin, registered by tests/conftest.py.

Some tests drive real programs: Node.js (the genuine AI SDK, JavaScript's own JSON sizes,
pyright), Chromium (the chat page), PostgreSQL (the stores), and the npm packages pinned
by ``tests/js/package-lock.json``. Each such program is a :class:`Need`, asked for by
the fixtures that hand it to a test (``node``, ``chromium``, ``postgres_server``, ...) or
by a ``needs(...)`` mark where a test asks for the fixture at run time
(``request.getfixturevalue``).

When collection is done, before the first test runs, this plugin looks at the tests that
were selected and installs what they need and this machine lacks: Debian packages with
apt-get, the npm packages with ``npm ci`` (again whenever package.json or the lockfile
changed: a stamp in node_modules remembers what was installed). A second run finds
everything present and costs a few ``stat`` calls. Where it cannot install (not root, no
apt-get, a failed download) it stops the run before any test, with one line naming the
command that installs the missing piece: a missing program never skips a test and never
becomes a page of errors.

The tests that need one of these programs are marked ``slow`` too, so
``pytest -m "not slow"`` leaves them out, and installs nothing.

Adding a program is one entry in :data:`NEEDS` (Redis, for example:
``"redis": Need("Redis", ("redis_server",), lambda: _on_path("redis-server"),
("redis-server",))``) plus the fixture that starts it.
"""

from __future__ import annotations

import contextlib
import fcntl
import glob
import hashlib
import os
import shutil
import subprocess
import time
from collections.abc import Callable, Generator, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Final

import pytest

ROOT: Final = Path(__file__).resolve().parent.parent
JS: Final = ROOT / "tests" / "js"
NODE_MODULES: Final = JS / "node_modules"
# What npm ci installed from, by digest: node_modules is current while it matches.
STAMP: Final = NODE_MODULES / ".ai_chat-installed"
NPM_CI: Final = ("ci", "--prefix", str(JS), "--no-audit", "--no-fund", "--loglevel=error")
DSN_VARIABLE: Final = "AI_CHAT_TEST_POSTGRES_DSN"
CHROMIUM_VARIABLE: Final = "AI_CHAT_CHROMIUM"
# Hang guards for installs (a large download on a slow mirror), not performance bounds.
APT_TIMEOUT: Final = 3600
NPM_TIMEOUT: Final = 900


def chromium_path() -> str:
    """The Chromium the browser tests drive: Debian's, or ``AI_CHAT_CHROMIUM``."""
    return os.environ.get(CHROMIUM_VARIABLE, "/usr/bin/chromium")


def _on_path(name: str) -> bool:
    return shutil.which(name) is not None


def _chromium_present() -> bool:
    path = chromium_path()
    return os.path.isfile(path) and os.access(path, os.X_OK)


def _postgres_present() -> bool:
    # The store tests start a throwaway server from Debian's binaries, unless given one.
    return bool(os.environ.get(DSN_VARIABLE)) or bool(glob.glob("/usr/lib/postgresql/*/bin/initdb"))


def _lock_digest() -> str:
    digest = hashlib.sha256()
    for name in ("package.json", "package-lock.json"):
        digest.update((JS / name).read_bytes())
    return digest.hexdigest()


def _npm_packages_current() -> bool:
    try:
        return STAMP.read_text(encoding="ascii") == _lock_digest()
    except FileNotFoundError:
        return False


@dataclass(frozen=True)
class Need:
    """A program some tests drive for real, and how to install it."""

    what: str
    """Its name in messages."""
    fixtures: tuple[str, ...]
    """A test that uses one of these fixtures needs it."""
    present: Callable[[], bool]
    """Whether this machine has it (cheap: a second run calls only this)."""
    debian: tuple[str, ...] = ()
    """The Debian packages that install it with apt-get."""
    requires: tuple[str, ...] = ()
    """Other needs that must be present before it can be installed."""


NEEDS: Final[dict[str, Need]] = {
    "node": Need("Node.js", ("node",), lambda: _on_path("node"), ("nodejs",)),
    "npm": Need("npm", (), lambda: _on_path("npm"), ("npm",)),
    "chromium": Need("Chromium", ("chromium",), _chromium_present, ("chromium",)),
    "postgresql": Need("PostgreSQL", ("postgres_server",), _postgres_present, ("postgresql",)),
    "npm-packages": Need(
        "the npm packages pinned in tests/js",
        ("node_modules",),
        _npm_packages_current,
        requires=("node", "npm"),
    ),
}
"""Everything the suite may install, by name (the names ``needs(...)`` marks use)."""


class ProvisionError(Exception):
    """Something the selected tests need cannot be installed; the message says how to."""


def needs_of(fixtures: Iterable[str], marked: Iterable[str] = ()) -> set[str]:
    """The names of the needs of a test, from its fixtures and its ``needs`` marks.

    Raises:
        ProvisionError: a mark names no need in :data:`NEEDS`.
    """
    found = {name for name, need in NEEDS.items() if not set(need.fixtures).isdisjoint(fixtures)}
    for name in marked:
        if name not in NEEDS:
            raise ProvisionError(
                f"needs({name!r}) names nothing the suite can provide; known: "
                + ", ".join(sorted(NEEDS))
            )
        found.add(name)
    pending = list(found)
    while pending:  # what the needs themselves require
        for required in NEEDS[pending.pop()].requires:
            if required not in found:
                found.add(required)
                pending.append(required)
    return found


@dataclass(frozen=True)
class Plan:
    """What to install: Debian packages first, then the npm packages."""

    debian: tuple[str, ...]
    missing: tuple[str, ...]
    npm_ci: bool


def plan(needed: Iterable[str], present: Callable[[Need], bool]) -> Plan:
    """What is missing of ``needed`` (names in :data:`NEEDS`), as ``present`` tells."""
    missing = tuple(sorted(name for name in set(needed) if not present(NEEDS[name])))
    debian = tuple(dict.fromkeys(p for name in missing for p in NEEDS[name].debian))
    return Plan(debian, missing, "npm-packages" in missing)


def cannot_install(plan: Plan, *, is_root: bool, has_apt: bool) -> str | None:
    """The one line to stop with when ``plan`` cannot be carried out here, or None."""
    if not plan.debian or (is_root and has_apt):
        return None
    programs = [NEEDS[name].what for name in plan.missing if NEEDS[name].debian]
    them = "it" if len(programs) == 1 else "them"
    command = "apt-get install -y " + " ".join(plan.debian)
    if has_apt:
        how = f"only root can install {them}: run `sudo {command}`"
    else:
        how = f"without apt-get the suite cannot install {them}: install {them} (on Debian: `{command}`)"
    return (
        f"the selected tests need {' and '.join(programs)}, and {how}, then run the tests "
        'again (`uv run pytest -m "not slow"` leaves out the tests that need them)'
    )


def _last_line(text: str) -> str:
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    return lines[-1] if lines else "no output"


def _run(command: Sequence[str], timeout: float) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        command,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
        env={**os.environ, "DEBIAN_FRONTEND": "noninteractive"},
    )


def apt_install(packages: Sequence[str]) -> None:
    """Install Debian packages; refresh the package lists and retry once if that fails.

    A fresh machine has no package lists, and old ones name files the mirror has dropped:
    both make the first attempt fail quickly, so the lists are refreshed only then.

    Raises:
        ProvisionError: apt-get failed twice.
    """
    # Wait for another apt-get (another checkout's tests, say) instead of failing.
    install = ["apt-get", "install", "-y", "-qq", "-o", "DPkg::Lock::Timeout=600", *packages]
    if _run(install, APT_TIMEOUT).returncode == 0:
        return
    _run(["apt-get", "update", "-qq", "-o", "DPkg::Lock::Timeout=600"], APT_TIMEOUT)
    result = _run(install, APT_TIMEOUT)
    if result.returncode != 0:
        raise ProvisionError(
            f"`apt-get install -y {' '.join(packages)}` failed (exit {result.returncode}): "
            f"{_last_line(result.stderr or result.stdout)}"
        )


@contextlib.contextmanager
def _npm_lock() -> Generator[None]:
    # Two runs in one checkout must not both rewrite node_modules: the first installs, the
    # second waits and then finds the stamp current.
    with (JS / "package-lock.json").open("rb") as lockfile:
        fcntl.flock(lockfile, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lockfile, fcntl.LOCK_UN)


def npm_ci() -> None:
    """``npm ci`` in tests/js unless the stamp is current, then write the stamp.

    Raises:
        ProvisionError: npm is missing or npm ci failed.
    """
    npm = shutil.which("npm")
    if npm is None:
        raise ProvisionError("npm is not on PATH: install it (apt-get install -y npm)")
    with _npm_lock():
        if _npm_packages_current():
            return
        result = _run([npm, *NPM_CI], NPM_TIMEOUT)
        if result.returncode != 0:
            raise ProvisionError(
                f"`npm ci --prefix tests/js` failed (exit {result.returncode}): "
                f"{_last_line(result.stderr or result.stdout)}"
            )
        STAMP.write_text(_lock_digest(), encoding="ascii")


def provision(needed: Iterable[str], say: Callable[[str], None]) -> None:
    """Install what of ``needed`` this machine lacks; ``say`` reports each step.

    Raises:
        ProvisionError: it cannot be installed here; the message names the command.
    """
    steps = plan(needed, lambda need: need.present())
    stop = cannot_install(steps, is_root=os.geteuid() == 0, has_apt=_on_path("apt-get"))
    if stop is not None:
        raise ProvisionError(stop)
    if steps.debian:
        started = time.monotonic()
        say(f"installing {' '.join(steps.debian)} with apt-get (once per machine)...")
        apt_install(steps.debian)
        say(f"installed {' '.join(steps.debian)} in {time.monotonic() - started:.0f} s")
    if steps.npm_ci:
        started = time.monotonic()
        say("installing the npm packages pinned in tests/js (npm ci)...")
        npm_ci()
        say(f"installed the npm packages in {time.monotonic() - started:.0f} s")
    still = [NEEDS[name] for name in steps.missing if not NEEDS[name].present()]
    if still:
        raise ProvisionError(
            f"{', '.join(need.what for need in still)} still missing after installing "
            f"{' '.join(steps.debian) or 'nothing'}"
        )


# --------------------------------------------------------------------------------------
# The pytest side: marks, the install before the first test, and the fixtures
# --------------------------------------------------------------------------------------

_NEEDED: Final = pytest.StashKey[frozenset[str]]()


def _needs_of_item(item: pytest.Item) -> set[str]:
    marked = [str(arg) for mark in item.iter_markers("needs") for arg in mark.args]
    return needs_of(getattr(item, "fixturenames", ()), marked)


@pytest.hookimpl(tryfirst=True)  # before -m "not slow" deselects by mark
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        try:
            needed = _needs_of_item(item)
        except ProvisionError as exc:
            raise pytest.UsageError(f"{item.nodeid}: {exc}") from None
        item.stash[_NEEDED] = frozenset(needed)
        if needed:
            item.add_marker(pytest.mark.slow)


def pytest_collection_finish(session: pytest.Session) -> None:
    config = session.config
    if config.option.collectonly:
        return
    needed: set[str] = set()
    for item in session.items:
        needed |= item.stash.get(_NEEDED, frozenset[str]())
    reporter = config.pluginmanager.get_plugin("terminalreporter")

    def say(line: str) -> None:
        if reporter is not None:
            reporter.write_line(f"ai_chat tests: {line}")

    try:
        provision(needed, say)
    except ProvisionError as exc:
        raise pytest.UsageError(str(exc)) from None


def _need_present(name: str) -> None:
    # Provisioning ran before the first test; this catches a test that asks for a fixture
    # at run time without a needs(...) mark.
    if not NEEDS[name].present():
        pytest.fail(
            f"{NEEDS[name].what} is missing: mark the test needs({name!r}) so that the suite "
            "installs it before the first test",
            pytrace=False,
        )


@pytest.fixture(scope="session")
def node() -> str:
    """The ``node`` executable (Debian's nodejs, or any Node.js on PATH)."""
    _need_present("node")
    return str(shutil.which("node"))


@pytest.fixture(scope="session")
def chromium() -> str:
    """The Chromium executable (Debian's chromium, or ``AI_CHAT_CHROMIUM``)."""
    _need_present("chromium")
    return chromium_path()


@pytest.fixture(scope="session")
def node_modules(node: str) -> Path:
    """tests/js/node_modules, installed by ``npm ci`` from the lockfile."""
    _need_present("npm-packages")
    return NODE_MODULES
