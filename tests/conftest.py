"""The suite's rules: both anyio backends, nothing skips, and coverage with a floor.

``uv run pytest`` runs everything; tests/provision.py (registered here) first installs
what the selected tests drive for real. ``uv run pytest -m "not slow"`` is the fast loop.

Coverage (coverage.py, configured in pyproject.toml: branches, subprocesses too) is
measured when the whole suite runs, and the run fails below the floor
(``[tool.coverage.report] fail_under``). A partial run (paths, ``-m``, ``-k``, ``--lf``)
is not measured: tracing costs some 40% more CPU time, which the fast loop should not
pay, and a partial figure says nothing about the floor. ``uv run coverage report``
shows the last whole run's detail.
"""

from __future__ import annotations

import gc
import io
from collections.abc import Generator
from pathlib import Path

import coverage
import hypothesis  # noqa: F401  # pyright: ignore[reportUnusedImport] -- before gc.freeze(), below
import pytest
import trio  # noqa: F401  # pyright: ignore[reportUnusedImport] -- fail loudly without trio

pytest_plugins = ["provision"]

ROOT = Path(__file__).resolve().parent.parent
_COVERAGE = pytest.StashKey[coverage.Coverage]()
_TOTAL = pytest.StashKey[float]()


@pytest.fixture(params=["asyncio", "trio"], scope="session")
def anyio_backend(request: pytest.FixtureRequest) -> str:
    return str(request.param)


def pytest_collection_finish(session: pytest.Session) -> None:
    """Freeze what collection built, so that each ``gc.collect()`` skips it.

    The SDKs, the test modules and their parameters (some 300,000 objects) live until the
    session ends. The release checks call ``gc.collect()`` to find generators left
    suspended, and each call rescanned all of them: 0.3 to 0.6 s, half of the fast loop.
    What a test creates is still collected as before. ``gc.get_referrers`` no longer
    sees frozen referrers: Hypothesis's ``register_random`` (which trio calls when
    Hypothesis is imported) would think trio's generator unreferenced, so Hypothesis is
    imported above, before the freeze.
    """
    gc.collect()
    gc.freeze()


# --------------------------------------------------------------------------------------
# Nothing skips
# --------------------------------------------------------------------------------------


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    """A skipped test fails: a missing tool is installed or named, never skipped over."""
    report = yield
    if report.skipped and not hasattr(report, "wasxfail"):
        longrepr = report.longrepr
        reason = longrepr[2] if isinstance(longrepr, tuple) else str(longrepr)
        report.outcome = "failed"
        report.longrepr = f"tests here never skip, but this one did: {reason}"
    return report


@pytest.hookimpl(wrapper=True)
def pytest_make_collect_report(
    collector: pytest.Collector,
) -> Generator[None, pytest.CollectReport, pytest.CollectReport]:
    """A module that skips itself (``pytest.importorskip``, say) is an error, too."""
    report = yield
    if report.skipped:
        report.outcome = "failed"
        report.longrepr = f"tests here never skip, but {collector.nodeid} did: {report.longrepr}"
    return report


# --------------------------------------------------------------------------------------
# Coverage of the whole suite
# --------------------------------------------------------------------------------------


def _whole_suite(config: pytest.Config) -> bool:
    option = config.option
    return (
        config.args_source is pytest.Config.ArgsSource.TESTPATHS
        and not option.markexpr
        and not option.keyword
        and not option.deselect
        and not option.collectonly
        and not config.getoption("lf", False)
        and not config.getoption("stepwise", False)
    )


def pytest_configure(config: pytest.Config) -> None:
    # Early enough: ai_chat is first imported when the test modules are collected.
    if not _whole_suite(config):
        return
    # An absolute data file, so that subprocesses started in other folders write theirs
    # next to it (their configuration travels in an environment variable).
    measured = coverage.Coverage(data_file=str(ROOT / ".coverage"))
    measured.erase()
    measured.start()
    config.stash[_COVERAGE] = measured


@pytest.hookimpl(wrapper=True)
def pytest_runtestloop(session: pytest.Session) -> Generator[None, object, object]:
    result = yield
    measured = session.config.stash.get(_COVERAGE, None)
    if measured is not None:
        measured.stop()
        measured.save()
        measured.combine()  # the subprocesses' data files
        measured.save()
        total = measured.report(file=io.StringIO())
        session.config.stash[_TOTAL] = total
        if total < float(measured.get_option("report:fail_under")):  # pyright: ignore[reportArgumentType]
            session.testsfailed += 1
    return result


def pytest_terminal_summary(
    terminalreporter: pytest.TerminalReporter, config: pytest.Config
) -> None:
    measured = config.stash.get(_COVERAGE, None)
    total = config.stash.get(_TOTAL, None)
    if measured is None or total is None:
        return
    floor = float(measured.get_option("report:fail_under"))  # pyright: ignore[reportArgumentType]
    verdict = "below the floor" if total < floor else "floor"
    terminalreporter.write_line(
        f"coverage: {total:.2f}% of lines and branches ({verdict} {floor:g}%); "
        "`uv run coverage report` lists what is missed",
        red=total < floor,
    )
