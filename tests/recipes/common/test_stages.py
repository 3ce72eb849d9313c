"""recipes/common/stages.py: the commands of the stages the recipes share, as the recipes ran them
before they shared them, and processes.Stages running them: a failing command ends the recipe
with one line naming its stage."""

import subprocess
import sys
from pathlib import Path

import processes
import pytest
import stages
from processes import Stages, require_binary


class Recorder:
    def __init__(self):
        self.runs = []

    def run(self, cmd, stage):
        self.runs.append((cmd, stage))


def test_vocabulary_of_text_and_of_trees():
    s = Recorder()
    stages.make_vocabulary(s, ["tx"], ["--input", "a.en", "a.de"], 6000, "out/vocab")
    stages.make_vocabulary(s, ["tx", "--threads", 1], ["--trees", "train.trees"], 2000, "v")
    stages.make_vocabulary(s, ["tx"], ["--input", "a", "b"], 37000, "v", ["--max-lines", 4])
    assert s.runs == [
        (["tx", "vocab", "--input", "a.en", "a.de", "--vocab-size", 6000, "--output", "out/vocab"],
         "vocab"),
        (["tx", "--threads", 1, "vocab", "--trees", "train.trees", "--vocab-size", 2000,
          "--output", "v"], "vocab"),
        (["tx", "vocab", "--input", "a", "b", "--vocab-size", 37000, "--max-lines", 4,
          "--output", "v"], "vocab"),
    ]


def test_average_of_the_last_checkpoints():
    s = Recorder()
    stages.average_checkpoints(s, ["tx"], "m", 5, "m-averaged")
    assert s.runs == [(["tx", "average", "-m", "m", "--last", 5, "--output", "m-averaged"],
                       "average")]


def test_a_failing_stage_is_one_line_naming_it():
    code = ("import sys; sys.path.insert(0, %r); from processes import Stages; "
            "Stages('demo').run([sys.executable, '-c', 'raise SystemExit(3)'], 'vocab')"
            % str(Path(processes.__file__).parent))
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert r.returncode == 1
    last = r.stderr.strip().splitlines()[-1]
    assert last.startswith("recipes/demo: stage 'vocab' failed (exit 3): "), r.stderr


def test_stage_seconds_add_up():
    s = Stages("demo")
    s.run([sys.executable, "-c", "pass"], "a")
    s.run([sys.executable, "-c", "pass"], "a")
    assert list(s.seconds) == ["a"] and s.seconds["a"] > 0


def test_require_binary_refuses_a_missing_or_plain_file(tmp_path):
    def fail(message):
        raise AssertionError(message)

    with pytest.raises(AssertionError, match="no transduce binary"):
        require_binary(tmp_path / "nowhere", fail)
    plain = tmp_path / "plain"
    plain.write_text("")
    with pytest.raises(AssertionError, match="no transduce binary"):
        require_binary(plain, fail)
    with pytest.raises(AssertionError, match="no transduce binary"):
        require_binary(tmp_path, fail)
    require_binary(sys.executable, fail)
