#!/usr/bin/env python3
"""tests/support/pytest_support.py's hooks on a throwaway pytest suite: a skipped test and a module
skipped while it is collected (a module-level pytest.importorskip) both fail the run, where pytest
alone would pass it."""

import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

SUPPORT = Path(__file__).resolve().parents[1] / "support"

CONFTEST = f"""
import sys
sys.path.insert(0, {str(SUPPORT)!r})
from pytest_support import pytest_make_collect_report, pytest_runtest_makereport  # noqa: F401
"""

PASSING = "def test_passes():\n    assert True\n"
SKIPPED_TEST = "import pytest\n\ndef test_skips():\n    pytest.skip('no widget here')\n"
SKIPPED_MODULE = ("import pytest\n\nno_such = pytest.importorskip('no_such_module_anywhere')\n\n"
                  "def test_never_collected():\n    assert False\n")


class PytestSupport(unittest.TestCase):
    def run_suite(self, modules, hooks=True):
        with tempfile.TemporaryDirectory() as d:
            if hooks:
                (Path(d) / "conftest.py").write_text(CONFTEST)
            for name, text in modules.items():
                (Path(d) / name).write_text(text)
            return subprocess.run(
                [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", d],
                capture_output=True, text=True)

    def test_a_passing_suite_passes(self):
        r = self.run_suite({"test_a.py": PASSING})
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)

    def test_a_skipped_test_fails(self):
        modules = {"test_a.py": PASSING, "test_b.py": SKIPPED_TEST}
        self.assertEqual(self.run_suite(modules, hooks=False).returncode, 0)
        r = self.run_suite(modules)
        self.assertNotEqual(r.returncode, 0, r.stdout)
        self.assertIn("skipped, which these tests do not allow", r.stdout)
        self.assertIn("no widget here", r.stdout)

    def test_a_module_skipped_while_collected_fails(self):
        modules = {"test_a.py": PASSING, "test_b.py": SKIPPED_MODULE}
        self.assertEqual(self.run_suite(modules, hooks=False).returncode, 0)
        r = self.run_suite(modules)
        self.assertNotEqual(r.returncode, 0, r.stdout)
        self.assertIn("test_b.py: skipped while collected", r.stdout)
        self.assertIn("no_such_module_anywhere", r.stdout)


if __name__ == "__main__":
    unittest.main()
