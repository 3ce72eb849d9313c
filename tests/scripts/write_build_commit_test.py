#!/usr/bin/env python3
"""cmake/write_build_commit.cmake against git checkouts made here: it names the commit, says when
tracked files differ from it (and not when only untracked files are there), says "unknown"
outside a checkout, and leaves the header untouched (no recompiling) when nothing changed.
CMake is the build's (CMAKE_COMMAND)."""

import os
import subprocess
import tempfile
import unittest
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[2] / "cmake" / "write_build_commit.cmake"
CMAKE = os.environ.get("CMAKE_COMMAND", "cmake")


def git(repo, *args):
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True,
                          text=True).stdout.strip()


def named_commit(source, header):
    """What the header written for SOURCE defines TRANSDUCE_BUILD_COMMIT as."""
    subprocess.run([CMAKE, f"-DSOURCE_DIR={source}", f"-DOUTPUT={header}", "-P", str(SCRIPT)],
                   check=True, capture_output=True)
    for line in header.read_text().splitlines():
        if line.startswith("#define TRANSDUCE_BUILD_COMMIT "):
            return line.split(" ", 2)[2].strip('"')
    raise AssertionError(f"no TRANSDUCE_BUILD_COMMIT in {header.read_text()!r}")


class WriteBuildCommit(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()
        self.root = Path(self.dir.name)
        self.repo = self.root / "checkout"
        self.repo.mkdir()
        self.header = self.root / "build_commit.h"
        git(self.repo, "init", "-q")
        (self.repo / "a.cc").write_text("int a;\n")
        git(self.repo, "add", "a.cc")
        git(self.repo, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "one")

    def tearDown(self):
        self.dir.cleanup()

    def test_names_the_commit_and_its_changes(self):
        head = git(self.repo, "rev-parse", "--short=7", "HEAD")
        self.assertRegex(head, r"^[0-9a-f]{7,}$")
        self.assertEqual(named_commit(self.repo, self.header), head)
        (self.repo / "notes.txt").write_text("not part of the build\n")
        self.assertEqual(named_commit(self.repo, self.header), head)
        (self.repo / "a.cc").write_text("int a = 1;\n")
        self.assertEqual(named_commit(self.repo, self.header), head + " with uncommitted changes")
        git(self.repo, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-am", "two")
        second = git(self.repo, "rev-parse", "--short=7", "HEAD")
        self.assertNotEqual(second, head)
        self.assertEqual(named_commit(self.repo, self.header), second)

    def test_unknown_outside_a_checkout(self):
        plain = self.root / "plain"
        plain.mkdir()
        self.assertEqual(named_commit(plain, self.header), "unknown")

    def test_an_unchanged_commit_leaves_the_header_alone(self):
        named_commit(self.repo, self.header)
        os.utime(self.header, (1_000_000_000, 1_000_000_000))
        named_commit(self.repo, self.header)
        self.assertEqual(self.header.stat().st_mtime, 1_000_000_000)
        (self.repo / "a.cc").write_text("int a = 2;\n")
        named_commit(self.repo, self.header)
        self.assertNotEqual(self.header.stat().st_mtime, 1_000_000_000)


if __name__ == "__main__":
    unittest.main()
