"""Fixtures of the Python module's tests: the `transduce` binary they compare with, the shared
Multi30k data, and one small model trained on it for the whole session.

ctest runs these with PYTHONPATH=BUILD/python, TRANSDUCE_BINARY and TRANSDUCE_DATA_DIR set. A skip
counts as a failure here (a missing dependency must not pass as a skipped test)."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "tests" / "support"))
from pytest_support import (  # noqa: E402,F401
    pytest_make_collect_report, pytest_runtest_makereport, transduce_binary)


@pytest.fixture(scope="session")
def transduce_bin():
    return transduce_binary()


def run(binary, *args, stdin=None):
    """Runs the binary; its standard output, or an assertion naming the failure."""
    r = subprocess.run([str(binary), *map(str, args)], input=stdin, capture_output=True,
                       text=True, env=dict(os.environ, OMP_WAIT_POLICY="passive"))
    assert r.returncode == 0, f"transduce {' '.join(map(str, args))}: {r.stderr}"
    return r.stdout


def shared_data():
    """The shared data folder (TRANSDUCE_DATA_DIR, else ../shared/data)."""
    return Path(os.environ.get("TRANSDUCE_DATA_DIR", REPO.parent / "shared" / "data"))


@pytest.fixture(scope="session")
def data_dir():
    path = shared_data() / "multi30k"
    assert (path / "train.en").is_file(), f"{path}: the shared Multi30k data is missing"
    return path


@pytest.fixture(scope="session")
def model(tmp_path_factory, transduce_bin, data_dir):
    """A 2+2-layer d_model 64 English-German model trained for 400 updates on 3,000 Multi30k
    pairs: its translations are poor but long and varied, which is what comparing with the
    command line needs. Checkpoints at 200 and 400 updates (an average for ensembles). Returns
    the folder holding model/, val.en and val.de (300 lines each)."""
    root = tmp_path_factory.mktemp("model")
    for lang in ("en", "de"):
        lines = (data_dir / f"train.{lang}").read_text(encoding="utf-8").splitlines()
        (root / f"train.{lang}").write_text("\n".join(lines[:3000]) + "\n", encoding="utf-8")
        val = (data_dir / f"val.{lang}").read_text(encoding="utf-8").splitlines()
        (root / f"val.{lang}").write_text("\n".join(val[:300]) + "\n", encoding="utf-8")
    run(transduce_bin, "vocab", "--input", root / "train.en", root / "train.de", "--vocab-size", 1000,
        "--output", root / "vocab")
    run(transduce_bin, "--threads", 2, "train", "--src", root / "train.en", "--tgt",
        root / "train.de", "--vocab", root / "vocab", "--output", root / "model", "--layers", 2,
        "--d-model", 64, "--d-ff", 128, "--heads", 4, "--batch-tokens", 2000, "--warmup", 200,
        "--max-steps", 400, "--log-every", 50, "--save-every", 200)
    return root


def read_lines(path):
    return Path(path).read_text(encoding="utf-8").splitlines()
