"""Data-parallel ranks for the recipes' training (standard library only): how many, the mpirun
command that starts them and shares the cores out, and how an update's batches are divided
among them."""

import os
import shutil

from machine import version_field


def mpi_launcher(ranks, fail, cores_per_rank=1):
    """The command prefix that starts RANKS data-parallel ranks ([] for one), each bound to
    CORES_PER_RANK cores, or fail(message)."""
    if ranks < 1:
        fail(f"--ranks must be at least 1, got {ranks}")
    if ranks == 1:
        return []
    if shutil.which("mpirun") is None:
        fail("--ranks needs mpirun (Debian: openmpi-bin)")
    launcher = ["mpirun", "-np", ranks, "--oversubscribe"]
    if cores_per_rank > 1:
        # Open MPI binds each of two ranks to one core: give each its share of the cores.
        launcher += ["--map-by", f"slot:PE={cores_per_rank}"]
    if os.geteuid() == 0:
        launcher.append("--allow-run-as-root")
    return launcher


def training_launcher(binary, ranks, cores, fail):
    """The command that starts BINARY's training on RANKS ranks sharing CORES threads in all:
    mpirun binding each rank to its share and giving it `--threads` of it; for one process, the
    binary with all CORES. Fails (via fail(message)) as mpi_launcher does."""
    share = max(1, cores // max(ranks, 1))
    return [*mpi_launcher(ranks, fail, share), binary, "--threads", share]


def update_batches(batch_tokens, parts, ranks):
    """(tokens of each batch, batches each rank accumulates) so that an update of BATCH_TOKENS
    a side is made of about PARTS length-sorted batches in all, whatever the RANKS. One process
    makes PARTS batches; more ranks than PARTS, one each. Why several parts:
    docs/experiments/multi30k.md, "batches of mixed lengths"."""
    ranks = max(ranks, 1)
    accum = max(1, parts // ranks)
    return batch_tokens // (ranks * accum), accum


def mpi_library(binary):
    """The MPI library BINARY was built with, as its `--version` names it, or None for a build
    without MPI (or a binary that cannot say)."""
    library = version_field(binary, "MPI")
    return None if library is None or library.startswith("none") else library


def default_ranks(profile_ranks, cores, binary, log):
    """How many data-parallel ranks a recipe trains on when --ranks is not given: the profile's,
    at most one per core, or one process (said in the log) where mpirun or an MPI build of
    BINARY is missing."""
    ranks = max(1, min(profile_ranks, cores))
    if ranks == 1:
        return 1
    if shutil.which("mpirun") is None:
        log(f"training in one process, not {ranks} MPI ranks: no mpirun (Debian: openmpi-bin)")
        return 1
    if mpi_library(binary) is None:
        log(f"training in one process, not {ranks} MPI ranks: {binary} was built without MPI")
        return 1
    return ranks
