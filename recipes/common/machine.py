"""Facts about the machine a recipe runs on (standard library only): the CPU's features and name,
the GEMM type and environment chosen for it, and the machine and commit a report names."""

import os
import platform
import subprocess
from pathlib import Path

AVX512 = ("avx512f", "avx512bw", "avx512dq", "avx512vl")


def cpuinfo(field):
    """The first value of `field` in /proc/cpuinfo, or None."""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith(field):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return None


def cpu_flags():
    return set((cpuinfo("flags") or "").split())


def cpu_name():
    return cpuinfo("model name") or platform.processor() or "unknown"


def default_compute_type():
    """The GEMMs' type a recipe trains with unless given (`train --compute-type`): bf16 where the
    CPU has bf16 dot products (AVX512-BF16; AMX CPUs have it too), else fp32. Why:
    docs/experiments/precision.md."""
    flags = cpu_flags()
    return "bf16" if "avx512_bf16" in flags and all(f in flags for f in AVX512) else "fp32"


def tune_environment():
    """Sets what the transduce processes should run with; returns what was set, for the report.

    OMP_WAIT_POLICY=passive unless set; OPENBLAS_CORETYPE=SKYLAKEX on a CPU with AVX-512 unless
    set: OpenBLAS 0.3.21 (Debian 12) picks its kernels by CPU family and falls back to slower ones
    on CPUs newer than itself, where the Skylake-X kernels are correct and faster
    (docs/experiments/training-speed.md). Set OPENBLAS_CORETYPE yourself to override.
    """
    notes = {}
    os.environ.setdefault("OMP_WAIT_POLICY", "passive")
    notes["OMP_WAIT_POLICY"] = os.environ["OMP_WAIT_POLICY"]
    if "OPENBLAS_CORETYPE" not in os.environ and all(f in cpu_flags() for f in AVX512):
        os.environ["OPENBLAS_CORETYPE"] = "SKYLAKEX"
    if "OPENBLAS_CORETYPE" in os.environ:
        notes["OPENBLAS_CORETYPE"] = os.environ["OPENBLAS_CORETYPE"]
    return notes


def machine(env_notes, threads):
    """The machine, for a results.json: the CPU, its cores, the threads used and the environment
    tune_environment() set."""
    return {"cpu": cpu_name(), "cores": os.cpu_count(), "threads": threads or os.cpu_count(),
            "environment": env_notes}


def provenance_line(m, commit):
    """A report's line saying where its figures come from: "Machine: CPU, N threads; environment
    K=V ...; commit C." (m as machine() returns it)."""
    env = " ".join(f"{k}={v}" for k, v in m["environment"].items())
    return f"Machine: {m['cpu']}, {m['threads']} threads; environment {env}; commit {commit}."


def git_commit(repo):
    """The short commit REPO is at, or None."""
    try:
        out = subprocess.run(["git", "-C", str(repo), "rev-parse", "--short", "HEAD"],
                             capture_output=True, text=True, timeout=10)
        return out.stdout.strip() or None
    except (OSError, subprocess.SubprocessError):
        return None


# The commit the checkout was at when the recipe started (when its script imported this module):
# a run takes hours, and the checkout may move before the report is written.
STARTING_COMMIT = git_commit(Path(__file__).resolve().parents[2])


def version_field(binary, name):
    """The value of the line "NAME: value" that BINARY's `transduce --version` prints, or None
    (a binary that fails, or one from before that line)."""
    try:
        result = subprocess.run([str(binary), "--version"], capture_output=True, text=True,
                                timeout=60)
    except (OSError, subprocess.TimeoutExpired):
        return None
    if result.returncode != 0:
        return None
    for line in result.stdout.splitlines():
        if line.startswith(name + ": "):
            return line[len(name) + 2:]
    return None


def built_commit(binary):
    """The commit a report names: the one BINARY was built from (with "with uncommitted
    changes" when its tree had them), or, for a binary that cannot say, the commit the recipe's
    checkout was at when it started."""
    commit = version_field(binary, "Commit")
    return commit if commit not in (None, "unknown") else STARTING_COMMIT
