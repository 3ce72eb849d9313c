"""recipes/common/machine.py: the commit a recipe's report names, read from the binary's
`--version` (fake binaries, and the build under test against its checkout)."""

import subprocess
from pathlib import Path

import machine
import pytest
from fake_binary import fake_binary
from pytest_support import transduce_binary

CHECKOUT = Path(__file__).resolve().parents[3]


@pytest.mark.parametrize("output, status, field", [
    ("transduce 0.1.0\\nCommit: 0133de7\\nMPI: none\\n", 0, "0133de7"),
    ("transduce 0.1.0\\nCommit: 0133de7 with uncommitted changes\\n", 0,
     "0133de7 with uncommitted changes"),
    ("transduce 0.1.0\\nMPI: none\\n", 0, None),  # a binary from before the line
    ("transduce 0.1.0\\nCommit: 0133de7\\n", 1, None),  # a failing --version says nothing
])
def test_version_field_reads_one_line(tmp_path, output, status, field):
    assert machine.version_field(fake_binary(tmp_path, output, status), "Commit") == field


def test_the_report_names_the_binarys_commit_or_else_the_checkouts(tmp_path, monkeypatch):
    monkeypatch.setattr(machine, "STARTING_COMMIT", "fedcba9")
    named = fake_binary(tmp_path, "transduce 0.1.0\\nCommit: abc1234\\nMPI: none\\n")
    assert machine.built_commit(named) == "abc1234"
    (tmp_path / "old").mkdir()
    old = fake_binary(tmp_path / "old", "transduce 0.1.0\\nMPI: none\\n")
    assert machine.built_commit(old) == "fedcba9"
    (tmp_path / "tarball").mkdir()
    tarball = fake_binary(tmp_path / "tarball", "transduce 0.1.0\\nCommit: unknown\\n")
    assert machine.built_commit(tarball) == "fedcba9"


def test_the_build_under_test_names_a_commit_of_this_checkout():
    commit = machine.version_field(transduce_binary(), "Commit")
    if machine.git_commit(CHECKOUT) is None:  # sources git cannot read: no commit to name
        assert commit == "unknown"
        return
    head = commit.removesuffix(" with uncommitted changes")
    ancestor = subprocess.run(["git", "-C", str(CHECKOUT), "merge-base", "--is-ancestor", head,
                               "HEAD"], capture_output=True, text=True)
    assert ancestor.returncode == 0, (commit, ancestor.stderr)
