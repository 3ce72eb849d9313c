"""Running a recipe's commands stage by stage, and writing its files whole (standard library
only)."""

import json
import os
import subprocess
import sys
import time
from pathlib import Path


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


def require_binary(tx, fail):
    """Fails (via fail(message)) unless TX is an executable file."""
    if not os.access(tx, os.X_OK) or not Path(tx).is_file():
        fail(f"{tx}: no transduce binary; build it with scripts/setup or give --transduce PATH")


def write_lines(path, lines):
    """Writes LINES to PATH, each ended by a newline, in UTF-8 (atomically)."""
    write_atomically(path, "".join(line + "\n" for line in lines))


def write_atomically(path, text):
    """Writes TEXT to PATH through a temporary file beside it: PATH is whole or as it was."""
    path = Path(path)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)
