"""The suite's own set-up (tests/provision.py) and rules (tests/conftest.py).

The planning is pure and tested as values. The behaviour a contributor sees (one line and
no test run when a program cannot be installed, nothing installed by the fast loop, a
skip that fails) is tested by running pytest on a small test file in a subprocess, with
the real conftest and plugin.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from provision import NEEDS, Need, ProvisionError, cannot_install, needs_of, plan

TESTS = Path(__file__).resolve().parent
TIMEOUT = 120  # seconds: a hang guard for the inner pytest runs


def _absent(need: Need) -> bool:
    return False


def test_a_fixture_brings_its_need_and_what_that_requires() -> None:
    assert needs_of(["tmp_path", "chromium"]) == {"chromium"}
    assert needs_of(["node_modules"]) == {"npm-packages", "node", "npm"}
    assert needs_of(["postgres_server", "node"]) == {"postgresql", "node"}
    assert needs_of(["tmp_path"]) == set()


def test_a_mark_names_a_need() -> None:
    assert needs_of([], ["postgresql"]) == {"postgresql"}
    with pytest.raises(ProvisionError, match=r"needs\('postgres'\).*known: chromium, node"):
        needs_of([], ["postgres"])


def test_the_plan_installs_debian_packages_once_each_then_the_npm_packages() -> None:
    steps = plan(needs_of(["node_modules", "chromium", "node"]), _absent)
    assert steps.missing == ("chromium", "node", "npm", "npm-packages")
    assert steps.debian == ("chromium", "nodejs", "npm")
    assert steps.npm_ci
    assert plan(NEEDS, lambda need: True) == type(steps)((), (), False)


def test_npm_packages_alone_need_no_root() -> None:
    # Node.js and npm are there: npm ci needs no apt-get and no root.
    steps = plan(["npm-packages", "node", "npm"], lambda need: need is not NEEDS["npm-packages"])
    assert (steps.debian, steps.missing, steps.npm_ci) == ((), ("npm-packages",), True)
    assert cannot_install(steps, is_root=False, has_apt=False) is None


def test_what_cannot_be_installed_is_one_line_naming_the_command() -> None:
    steps = plan(["chromium", "postgresql"], _absent)
    assert cannot_install(steps, is_root=True, has_apt=True) is None
    not_root = cannot_install(steps, is_root=False, has_apt=True)
    assert not_root is not None and "\n" not in not_root
    assert "need Chromium and PostgreSQL" in not_root
    assert (
        "only root can install them: run `sudo apt-get install -y chromium postgresql`" in not_root
    )
    no_apt = cannot_install(steps, is_root=True, has_apt=False)
    assert no_apt is not None and "\n" not in no_apt
    assert "without apt-get the suite cannot install them" in no_apt
    assert "(on Debian: `apt-get install -y chromium postgresql`)" in no_apt


# --------------------------------------------------------------------------------------
# As a contributor sees it: pytest in a subprocess, with the real conftest and plugin
# --------------------------------------------------------------------------------------

INNER_TESTS = """
import pytest


def test_fast() -> None:
    pass


def test_with_the_browser(chromium: str) -> None:
    raise AssertionError("must not run: Chromium cannot be installed here")


@pytest.mark.parametrize("kind", ["memory", pytest.param("db", marks=pytest.mark.needs("chromium"))])
def test_marked(kind: str) -> None:
    pass
"""

INNER_INI = """[pytest]
markers =
    slow: slow
    needs(*names): needs
"""


def _pytest(folder: Path, *arguments: str, path: str) -> subprocess.CompletedProcess[str]:
    (folder / "conftest.py").write_text((TESTS / "conftest.py").read_text(encoding="utf-8"))
    (folder / "pytest.ini").write_text(INNER_INI, encoding="utf-8")
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith("COVERAGE_")},
        "PYTHONPATH": str(TESTS),  # the plugin, as tests/conftest.py registers it
        "PATH": path,
        "AI_CHAT_CHROMIUM": str(folder / "no-chromium-here"),
    }
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", *arguments],
        cwd=folder,
        env=env,
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        check=False,
    )


@pytest.mark.slow
def test_a_program_that_cannot_be_installed_stops_the_run_with_one_line(tmp_path: Path) -> None:
    (tmp_path / "test_inner.py").write_text(INNER_TESTS, encoding="utf-8")
    # No apt-get on this PATH (an empty folder), so Chromium cannot be installed.
    result = _pytest(tmp_path, "-q", path=str(tmp_path))
    assert result.returncode == pytest.ExitCode.USAGE_ERROR, result.stdout + result.stderr
    assert result.stderr.strip() == (
        "ERROR: the selected tests need Chromium, and without apt-get the suite cannot install "
        "it: install it (on Debian: `apt-get install -y chromium`), then run the tests again "
        '(`uv run pytest -m "not slow"` leaves out the tests that need them)'
    )
    assert "must not run" not in result.stdout
    assert "passed" not in result.stdout


@pytest.mark.slow
def test_the_fast_loop_needs_nothing_and_leaves_those_tests_out(tmp_path: Path) -> None:
    (tmp_path / "test_inner.py").write_text(INNER_TESTS, encoding="utf-8")
    result = _pytest(tmp_path, "-q", "-m", "not slow", "-rA", path=str(tmp_path))
    assert result.returncode == 0, result.stdout + result.stderr
    assert "2 passed, 2 deselected" in result.stdout
    assert "PASSED test_inner.py::test_fast" in result.stdout
    assert "PASSED test_inner.py::test_marked[memory]" in result.stdout


@pytest.mark.slow
def test_a_skip_fails_the_run(tmp_path: Path) -> None:
    (tmp_path / "test_inner.py").write_text(
        "import pytest\n\n\ndef test_skipping() -> None:\n    pytest.skip('no tool')\n",
        encoding="utf-8",
    )
    (tmp_path / "test_module.py").write_text(
        "import pytest\n\npytest.importorskip('no_such_module_anywhere')\n", encoding="utf-8"
    )
    result = _pytest(tmp_path, "-q", "test_inner.py", path=os.environ["PATH"])
    assert result.returncode == pytest.ExitCode.TESTS_FAILED, result.stdout + result.stderr
    assert "tests here never skip, but this one did: Skipped: no tool" in result.stdout
    result = _pytest(tmp_path, "-q", "test_module.py", path=os.environ["PATH"])
    assert result.returncode == pytest.ExitCode.INTERRUPTED, result.stdout + result.stderr
    assert "tests here never skip, but test_module.py did" in result.stdout
