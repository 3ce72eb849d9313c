"""recipes/common/mpi.py: how many MPI ranks a recipe trains on by default, and the
launcher that binds them and shares the threads out, against fake binaries and Open MPI's own
affinity masks."""

import os
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
import mpi
from fake_binary import fake_binary
from pytest_support import transduce_binary


def fail(message):
    raise AssertionError(message)


@pytest.mark.parametrize("output, status, library", [
    ("transduce 0.1.0\\nMPI: Open MPI v4.1.4, package: Debian\\nGEMMs: fp32\\n", 0,
     "Open MPI v4.1.4, package: Debian"),
    ("transduce 0.1.0\\nMPI: none (built without MPI: one process only)\\n", 0, None),
    ("MPI: Open MPI v4.1.4\\n", 1, None),  # a failing --version says nothing
    ("A subcommand is required\\n", 0, None),  # a binary from before --version
])
def test_mpi_library_reads_the_version_text(tmp_path, output, status, library):
    assert mpi.mpi_library(fake_binary(tmp_path, output, status)) == library


def test_the_binary_under_test_names_its_mpi_as_built():
    library = mpi.mpi_library(transduce_binary())
    assert (library is not None) == (os.environ["TRANSDUCE_WITH_MPI"] == "1"), library


def test_default_ranks_are_the_profiles_at_most_one_per_core(tmp_path):
    with_mpi = fake_binary(tmp_path, "transduce 0.1.0\\nMPI: Open MPI v4.1.4\\n")
    logged = []
    assert mpi.default_ranks(2, 2, with_mpi, logged.append) == 2
    assert mpi.default_ranks(2, 16, with_mpi, logged.append) == 2
    assert mpi.default_ranks(4, 3, with_mpi, logged.append) == 3
    assert mpi.default_ranks(2, 1, with_mpi, logged.append) == 1
    assert mpi.default_ranks(1, 8, with_mpi, logged.append) == 1
    assert logged == []


def test_default_ranks_fall_back_to_one_process_and_say_why(tmp_path, monkeypatch):
    logged = []
    no_mpi = fake_binary(tmp_path, "transduce 0.1.0\\nMPI: none (built without MPI)\\n")
    assert mpi.default_ranks(2, 2, no_mpi, logged.append) == 1
    assert logged == [f"training in one process, not 2 MPI ranks: {no_mpi} was built without MPI"]
    with_mpi = fake_binary(tmp_path, "transduce 0.1.0\\nMPI: Open MPI v4.1.4\\n")
    monkeypatch.setenv("PATH", str(tmp_path / "nowhere"))
    assert mpi.default_ranks(2, 2, with_mpi, logged.append) == 1
    assert logged[1] == ("training in one process, not 2 MPI ranks: no mpirun "
                         "(Debian: openmpi-bin)")


def cores_each_rank_sees(launcher):
    """How many cores each rank of LAUNCHER may run on. Each rank writes its count to a file of
    its own: through mpirun's shared standard output two ranks' lines can run together ("22")."""
    with tempfile.TemporaryDirectory() as d:
        probe = ("import os; open(os.path.join(%r, str(os.getpid())), 'w')"
                 ".write(str(len(os.sched_getaffinity(0))))" % d)
        subprocess.run([*map(str, launcher), sys.executable, "-c", probe], check=True,
                       capture_output=True, text=True, timeout=120)
        return sorted(int(f.read_text()) for f in Path(d).iterdir())


def test_one_rank_starts_no_launcher():
    assert mpi.mpi_launcher(1, fail, 4) == []
    with pytest.raises(AssertionError, match="--ranks must be at least 1, got 0"):
        mpi.mpi_launcher(0, fail)


def test_the_launcher_binds_each_rank_to_its_share_of_the_cores():
    # Open MPI's default binds each of two ranks to one core; --map-by slot:PE=N gives it N.
    assert os.cpu_count() >= 2, "this test needs two cores"
    assert cores_each_rank_sees(mpi.mpi_launcher(2, fail, 1)) == [1, 1]
    assert cores_each_rank_sees(mpi.mpi_launcher(2, fail, 2)) == [2, 2]


def test_update_batches_keep_the_parts_of_an_update_whatever_the_ranks():
    assert mpi.update_batches(4096, 4, 1) == (1024, 4)
    assert mpi.update_batches(4096, 4, 2) == (1024, 2)
    assert mpi.update_batches(4096, 4, 4) == (1024, 1)
    # More ranks than parts: one batch each, of each rank's share.
    assert mpi.update_batches(600, 2, 3) == (200, 1)
    assert mpi.update_batches(600, 1, 2) == (300, 1)
    # Not a multiple: fewer parts, never more.
    assert mpi.update_batches(4096, 4, 3) == (1365, 1)


def test_training_launcher_shares_the_threads_out_among_the_ranks():
    assert mpi.training_launcher("tx", 1, 3, fail) == ["tx", "--threads", 3]
    two = mpi.training_launcher("tx", 2, 2, fail)
    assert two[:2] == ["mpirun", "-np"] and two[-3:] == ["tx", "--threads", 1]
    assert "--map-by" not in two
    four = mpi.training_launcher("tx", 2, 4, fail)
    assert four[-3:] == ["tx", "--threads", 2] and "slot:PE=2" in four
    # More ranks than threads: each still gets one.
    assert mpi.training_launcher("tx", 2, 1, fail)[-3:] == ["tx", "--threads", 1]
