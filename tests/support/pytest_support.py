"""What the pytest suites share (tests/python, tests/recipes/wmt14): skips count as failures, and
where the transduce binary is.

A conftest.py imports pytest_runtest_makereport from here, which registers the hook for its suite.
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


def transduce_binary():
    """The binary under test: TRANSDUCE_BINARY (ctest sets it), else build/transduce."""
    path = Path(os.environ.get("TRANSDUCE_BINARY", REPO / "build" / "transduce"))
    assert path.is_file() and os.access(path, os.X_OK), \
        f"{path}: no transduce binary (set TRANSDUCE_BINARY)"
    return path
