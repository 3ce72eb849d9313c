#!/usr/bin/env python3
"""scripts/check_skips on JUnit files shaped as ctest writes them: a skip fails the run unless
allowed, a run without tests fails, failures and passes are counted as run."""

import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "check_skips"


def case(name, status, skipped=False, out=""):
    inner = '<skipped message="SKIP_REGULAR_EXPRESSION_MATCHED"/>' if skipped else ""
    return (f'<testcase name="{name}" classname="{name}" time="0.1" status="{status}">{inner}'
            f"<system-out>{out}</system-out></testcase>")


def junit(*cases):
    return '<?xml version="1.0"?><testsuite name="x" tests="{}">{}</testsuite>'.format(
        len(cases), "".join(cases))


class CheckSkips(unittest.TestCase):
    def run_script(self, xml, allow=None):
        with tempfile.TemporaryDirectory() as d:
            path = Path(d) / "junit.xml"
            path.write_text(xml)
            cmd = [sys.executable, str(SCRIPT), str(path)]
            if allow is not None:
                (Path(d) / "allow").write_text(allow)
                cmd += ["--allow", str(Path(d) / "allow")]
            return subprocess.run(cmd, capture_output=True, text=True)

    def test_a_skip_fails_and_is_named_with_its_reason(self):
        gtest_out = ("[ RUN      ] A.B\n/src/a_test.cc:12: Skipped\nno mpirun\n"
                     "[  SKIPPED ] A.B (0 ms)\n")
        r = self.run_script(junit(case("A.Ok", "run"), case("A.B", "notrun", True, gtest_out)))
        self.assertEqual(r.returncode, 1)
        self.assertIn("A.B did not run: /src/a_test.cc:12: no mpirun", r.stderr)
        self.assertIn("1 test(s) skipped", r.stderr)

    def test_an_allowed_skip_passes_and_others_still_fail(self):
        xml = junit(case("A.Ok", "run"), case("A.B", "notrun", True), case("A.C", "notrun", True))
        self.assertEqual(self.run_script(xml, "A.B  # no MPI here\n# comment\nA.C\n").returncode, 0)
        r = self.run_script(xml, "A.B\n")
        self.assertEqual(r.returncode, 1)
        self.assertIn("A.C did not run", r.stderr)
        self.assertNotIn("A.B did not run", r.stderr)

    def test_failures_count_as_run_and_an_empty_run_fails(self):
        r = self.run_script(junit(case("A.Ok", "run"), case("A.Bad", "fail")))
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("2 tests ran, none skipped", r.stdout)
        self.assertEqual(self.run_script(junit()).returncode, 1)

    def test_an_unreadable_file_fails(self):
        r = self.run_script("<testsuite")
        self.assertEqual(r.returncode, 1)
        self.assertIn("check_skips:", r.stderr)


if __name__ == "__main__":
    unittest.main()
