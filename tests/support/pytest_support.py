"""What the pytest suites share (tests/python, tests/recipes/*): skips count as failures, and
where the transduce binary is.

A conftest.py imports pytest_runtest_makereport and pytest_make_collect_report from here, which
registers the hooks for its suite.
"""

import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    """A missing dependency must not pass as a skipped test: a skip is reported as a failure."""
    report = (yield).get_result()
    if report.skipped:
        report.outcome = "failed"
        report.longrepr = f"skipped, which these tests do not allow: {report.longrepr}"


@pytest.hookimpl(hookwrapper=True)
def pytest_make_collect_report(collector):
    """The same for a whole module skipped while it is collected (a module-level
    pytest.importorskip or pytest.skip(allow_module_level=True)): its tests never reach
    pytest_runtest_makereport, so the collection itself fails."""
    report = (yield).get_result()
    if report.skipped:
        report.outcome = "failed"
        report.longrepr = f"{collector.nodeid}: skipped while collected, which these tests do " \
            f"not allow: {report.longrepr}"


def transduce_binary():
    """The binary under test: TRANSDUCE_BINARY (ctest sets it), else build/transduce."""
    path = Path(os.environ.get("TRANSDUCE_BINARY", REPO / "build" / "transduce"))
    assert path.is_file() and os.access(path, os.X_OK), \
        f"{path}: no transduce binary (set TRANSDUCE_BINARY)"
    return path
