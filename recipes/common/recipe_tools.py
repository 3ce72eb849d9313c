"""What the recipes share (standard library only): running the transduce binary stage by stage,
the environment it runs with, the machine for the report, and the SVG charts of a training run.
"""

import json
import math
import os
import platform
import shutil
import subprocess
import sys
import time
from pathlib import Path

AVX512 = ("avx512f", "avx512bw", "avx512dq", "avx512vl")


class Stages:
    """Runs a recipe's commands, adding up each stage's seconds; a failing command ends the recipe
    with one line naming the stage."""

    def __init__(self, name):
        self.name = name
        self.seconds = {}

    def log(self, message):
        print(f"[{self.name}] {message}", file=sys.stderr, flush=True)

    def fail(self, message):
        print(f"recipes/{self.name}: {message}", file=sys.stderr)
        sys.exit(1)

    def add(self, stage, seconds):
        self.seconds[stage] = self.seconds.get(stage, 0.0) + seconds

    def run(self, cmd, stage, stdout=None, stdin=None):
        """Runs one command, its output passed through."""
        self.log(" ".join(str(c) for c in cmd))
        start = time.time()
        result = subprocess.run([str(c) for c in cmd], stdout=stdout, stdin=stdin)
        self.add(stage, time.time() - start)
        if result.returncode != 0:
            self.fail(f"stage '{stage}' failed (exit {result.returncode}): "
                      f"{' '.join(map(str, cmd))}")

    def run_together(self, cmds, stage, logs):
        """Runs commands at the same time; logs[i] is a file for command i's output, or None to
        pass it through. One failing ends the recipe once all have ended."""
        start = time.time()
        procs = []
        for cmd, log_path in zip(cmds, logs):
            self.log(" ".join(str(c) for c in cmd) + (f" > {log_path}" if log_path else ""))
            sink = open(log_path, "w") if log_path else None  # noqa: SIM115 - closed below
            procs.append((cmd, log_path, sink,
                          subprocess.Popen([str(c) for c in cmd], stdout=sink,
                                           stderr=subprocess.STDOUT if sink else None)))
        failed = []
        for cmd, log_path, sink, proc in procs:
            if proc.wait() != 0:
                failed.append((cmd, log_path, proc.returncode))
            if sink:
                sink.close()
        self.add(stage, time.time() - start)
        if failed:
            cmd, log_path, code = failed[0]
            self.fail(f"stage '{stage}' failed (exit {code}): {' '.join(map(str, cmd))}" +
                      (f" (its output: {log_path})" if log_path else ""))

    def score(self, tx, hyp, ref, *flags):
        """`transduce score --json` of a hypothesis file against one reference (stage "score"),
        with `flags` added (e.g. "--lowercase"): its JSON object."""
        cmd = [tx, "score", "--ref", ref, "--hyp", hyp, "--json", *flags]
        return json.loads(self.output(cmd, "score", f"scoring {hyp}"))

    def output(self, cmd, stage, what):
        """Runs one command quietly and returns its standard output; `what` names it on failure."""
        start = time.time()
        out = subprocess.run([str(c) for c in cmd], capture_output=True, text=True)
        self.add(stage, time.time() - start)
        if out.returncode != 0:
            self.fail(f"{what} failed: {out.stderr.strip()}")
        return out.stdout


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


def default_precision():
    """bf16 where the CPU has bf16 dot products (AVX512-BF16; AMX CPUs have it too), else fp32.

    In the full Multi30k recipe's 100 minutes, bf16 made 1.58x the updates of fp32 and ended with
    a lower validation perplexity and no lower test BLEU (docs/experiments/precision.md).
    """
    flags = cpu_flags()
    return "bf16" if "avx512_bf16" in flags and all(f in flags for f in AVX512) else "fp32"


def tune_environment():
    """Sets what the transduce processes should run with; returns what was set, for the report.

    OpenBLAS 0.3.21 (Debian 12) picks its kernels by CPU family and falls back to slower ones on
    CPUs newer than itself (e.g. AMD family 0x1A); on a CPU with AVX-512 the Skylake-X kernels are
    correct and about twice as fast (docs/experiments/training-speed.md). Set OPENBLAS_CORETYPE yourself to
    override.
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
    return {"cpu": cpu_name(), "cores": os.cpu_count(), "threads": threads or os.cpu_count(),
            "environment": env_notes}


def read_log(model_dir):
    """The records of MODEL_DIR/train_log.jsonl (docs/model_dir.md)."""
    path = Path(model_dir) / "train_log.jsonl"
    records = []
    if path.exists():
        for line in path.read_text().splitlines():
            if line.strip():
                records.append(json.loads(line))
    return records


def training_summary(records):
    """Steps, epochs, time, speed and losses of a training log, for a results.json."""
    train = [r for r in records if r["kind"] == "train"]
    valid = [r for r in records if r["kind"] == "valid"]
    tps = [r["tokens_per_second"] for r in train]
    return {
        "steps": train[-1]["step"] if train else 0,
        "epochs": train[-1]["epoch"] if train else 0,
        "training_seconds": records[-1]["elapsed_seconds"] if records else 0,
        "tokens_per_second": sum(tps) / len(tps) if tps else 0,
        "final_train_loss": train[-1]["loss"] if train else None,
        "final_valid_ppl": valid[-1]["ppl"] if valid else None,
        "best_valid_ppl": min(r["ppl"] for r in valid) if valid else None,
        "final_valid_bleu": valid[-1].get("bleu") if valid else None,
        "best_valid_bleu": max((r["bleu"] for r in valid if "bleu" in r), default=None),
    }


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
    a side is made of about PARTS length-sorted batches in all, whatever the RANKS: an update that
    mixes several lengths learns more than one batch of the same tokens, all of one length
    (docs/experiments/multi30k.md, "batches of mixed lengths"). One process makes PARTS batches; more ranks
    than PARTS, one each."""
    ranks = max(ranks, 1)
    accum = max(1, parts // ranks)
    return batch_tokens // (ranks * accum), accum


def mpi_library(binary):
    """The MPI library BINARY was built with, as its `--version` names it, or None for a build
    without MPI (or a binary that cannot say)."""
    try:
        result = subprocess.run([str(binary), "--version"], capture_output=True, text=True,
                                timeout=60)
    except (OSError, subprocess.TimeoutExpired):
        return None
    for line in result.stdout.splitlines():
        if result.returncode == 0 and line.startswith("MPI: ") and not line.startswith("MPI: none"):
            return line[len("MPI: "):]
    return None


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


def write_lines(path, lines):
    """Writes LINES to PATH, each ended by a newline, in UTF-8 (atomically)."""
    write_atomically(path, "".join(line + "\n" for line in lines))


def write_atomically(path, text):
    """Writes TEXT to PATH through a temporary file beside it: PATH is whole or as it was."""
    path = Path(path)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)


def git_commit(repo):
    try:
        out = subprocess.run(["git", "-C", str(repo), "rev-parse", "--short", "HEAD"],
                             capture_output=True, text=True, timeout=10)
        return out.stdout.strip() or None
    except (OSError, subprocess.SubprocessError):
        return None


def clock(seconds):
    s = int(seconds)
    return f"{s // 3600}:{s // 60 % 60:02}:{s % 60:02}"


def fmt(x):
    return "n/a" if x is None else f"{x:.2f}"


def svg(panels, width, height):
    """An SVG document of side-by-side panels (each from panel())."""
    return (f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
            f'viewBox="0 0 {width} {height}" font-family="sans-serif" font-size="11">\n'
            f'<rect width="{width}" height="{height}" fill="white"/>\n' + "".join(panels) +
            "</svg>\n")


def loss_and_perplexity_panels(records, width, height, count):
    """The first two of `count` panels: training loss, and validation perplexity."""
    train = [(r["elapsed_seconds"] / 60, r["loss"]) for r in records if r["kind"] == "train"]
    valid = [(r["elapsed_seconds"] / 60, r["ppl"]) for r in records if r["kind"] == "valid"]
    w = width / count
    return [panel(train, "training loss (label-smoothed, per token)", 0, w, height, "#1f77b4"),
            panel(valid, "validation perplexity (log scale)", w, w, height, "#d62728",
                  log_scale=True)]


def nice_ticks(lo, hi, count=5):
    if hi <= lo:
        hi = lo + 1
    raw = (hi - lo) / count
    mag = 10 ** math.floor(math.log10(raw))
    step = min((m * mag for m in (1, 2, 2.5, 5, 10) if m * mag >= raw), default=raw)
    start = math.ceil(lo / step) * step
    ticks = []
    v = start
    while v <= hi + 1e-9 * step:
        ticks.append(round(v, 10))
        v += step
    return ticks


def log_ticks(lo, hi):
    """1, 2, 5 times powers of ten between 10**lo and 10**hi, as (log10 value, label)."""
    ticks = []
    for e in range(math.floor(lo), math.ceil(hi) + 1):
        for m in (1, 2, 5):
            v = math.log10(m) + e
            if lo <= v <= hi:
                ticks.append((v, f"{m * 10.0 ** e:g}"))
    return ticks


def panel(points, title, x0, w, h, color, log_scale=False):
    """One chart of (minutes, value) points at x0, w wide and h high."""
    left, right, top, bottom = 48, 12, 24, 36
    pw, ph = w - left - right, h - top - bottom
    parts = [f'<text x="{x0 + w / 2:.1f}" y="15" text-anchor="middle" font-size="12">{title}'
             f'</text>\n']
    if not points:
        parts.append(f'<text x="{x0 + w / 2:.1f}" y="{h / 2:.1f}" text-anchor="middle">'
                     'no records</text>\n')
        return "".join(parts)
    if log_scale:
        points = [(x, math.log10(max(y, 1e-12))) for x, y in points]
    xs, ys = [p[0] for p in points], [p[1] for p in points]
    xmax = max(xs) if max(xs) > 0 else 1.0
    ylo, yhi = min(ys), max(ys)
    if yhi - ylo < 1e-9:
        ylo, yhi = ylo - 0.5, yhi + 0.5
    pad = 0.05 * (yhi - ylo)
    ylo, yhi = ylo - pad, yhi + pad

    def sx(x):
        return x0 + left + pw * x / xmax

    def sy(y):
        return top + ph * (1 - (y - ylo) / (yhi - ylo))

    parts.append(f'<rect x="{x0 + left}" y="{top}" width="{pw}" height="{ph}" fill="none" '
                 'stroke="#888"/>\n')
    yticks = log_ticks(ylo, yhi) if log_scale else [(t, f"{t:g}") for t in nice_ticks(ylo, yhi)]
    if len(yticks) < 2:  # a narrow range: label its ends
        yticks = [(v, f"{10 ** v if log_scale else v:.3g}") for v in (ylo, yhi)]
    for t, label in yticks:
        parts.append(f'<line x1="{x0 + left}" x2="{x0 + left + pw}" y1="{sy(t):.1f}" '
                     f'y2="{sy(t):.1f}" stroke="#eee"/>\n'
                     f'<text x="{x0 + left - 4}" y="{sy(t) + 4:.1f}" text-anchor="end">'
                     f'{label}</text>\n')
    for t in nice_ticks(0, xmax):
        parts.append(f'<text x="{sx(t):.1f}" y="{top + ph + 14}" text-anchor="middle">{t:g}'
                     '</text>\n')
    parts.append(f'<text x="{x0 + left + pw / 2:.1f}" y="{h - 6}" text-anchor="middle">'
                 'training time (minutes)</text>\n')
    path = " ".join(f"{sx(x):.1f},{sy(y):.1f}" for x, y in points)
    parts.append(f'<polyline points="{path}" fill="none" stroke="{color}" stroke-width="1.5"/>\n')
    for x, y in points if len(points) <= 60 else []:
        parts.append(f'<circle cx="{sx(x):.1f}" cy="{sy(y):.1f}" r="2" fill="{color}"/>\n')
    return "".join(parts)
