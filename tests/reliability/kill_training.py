#!/usr/bin/python3
"""Checkpoints under SIGKILL: does a training run killed 100 times end bitwise where one never
interrupted ends?

    tests/reliability/kill_training.py [--kills 100] [--seed 1] [--max-steps 3000]
                                       [--save-every 5] [--threads 1] [--data DIR | --toy]
                                       [--work DIR] [--transduce build/transduce]

    nice -n 19 tests/reliability/kill_training.py --kills 100 --seed 1      (docs/reliability.md)

ctest runs a short version (Reliability.KillTraining in tests/CMakeLists.txt: 10 kills of a
shorter job).

It prepares a small training job (the first --pairs pairs of Multi30k en-de from --data, by
default ../shared/data/multi30k; with --toy, or without --data where that folder is missing, a
parallel corpus it writes itself; a --data folder without train.en and train.de is an error; a
1000-piece BPE vocabulary; a 1-layer Transformer with d_model 32, d_ff 64, 2 heads; batches of
500 tokens; a checkpoint every --save-every updates, keeping 3; validation every 100 updates) and
runs it once without interruption: the reference.
Then, in a second model directory, it runs the same job and SIGKILLs it --kills times at random
moments (seeded by --seed): a fifth of the delays fall inside the start-up (reading the data and
the checkpoint), the rest over the next updates, checkpoint writes and validations. After each
kill it
  - classifies where the kill landed: start-up (the process had not logged its "model:" line),
    checkpoint write (a temporary dir or file of the killed process was left, model.safetensors
    lags the newest checkpoint, or more than --keep checkpoints remain), else training;
  - checks that the newest complete checkpoint loads: its safetensors headers and sizes (read
    here, in Python), its state.json, and `transduce average --checkpoints NEWEST` (which reads
    every tensor); and that MODEL_DIR/model.safetensors reads;
  - resumes with `transduce train --resume DIR` (or starts afresh with --output while no checkpoint
    exists) and checks from its log that it resumed from that newest checkpoint, skipping none.
At the end it lets the run finish and compares model.safetensors, the last checkpoint's weights,
optimizer moments and state (all but the clock), and the validation records of train_log.jsonl
with the reference, byte for byte. It prints a summary and exits 1 on any failure: a checkpoint
or model.safetensors that does not load, a resume from anything but the newest checkpoint, a run
that fails, or final weights that differ.

The step limit counts over the whole training (resumed runs included), so every run gets the
same --max-steps. Reference and killed runs use the same --threads (BLAS and kernel reductions
are only reproducible for a fixed thread count).
"""

import argparse
import datetime
import json
import random
import re
import shutil
import signal
import statistics
import struct
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
DEFAULT_DATA = REPO.parent / "shared" / "data" / "multi30k"
MODEL_FLAGS = ["--layers", "1", "--d-model", "32", "--d-ff", "64", "--heads", "2"]
LOG_TIME = re.compile(r"^\[(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d+)\]")
STEP_DIR = re.compile(r"^step-(\d{8,})$")


class Failure(Exception):
    pass


def log_time(line):
    m = LOG_TIME.match(line)
    if not m:
        return None
    return datetime.datetime.strptime(m.group(1), "%Y-%m-%d %H:%M:%S.%f").timestamp()


# --- reading what transduce wrote -------------------------------------------------------------

def read_safetensors(path):
    """(metadata, {name: (dtype, shape, bytes)}) of a safetensors file, checked for consistency."""
    data = Path(path).read_bytes()
    if len(data) < 8:
        raise Failure(f"{path}: {len(data)} bytes, shorter than a safetensors header")
    n = struct.unpack("<Q", data[:8])[0]
    if 8 + n > len(data):
        raise Failure(f"{path}: header of {n} bytes in a file of {len(data)}")
    try:
        header = json.loads(data[8:8 + n])
    except ValueError as e:
        raise Failure(f"{path}: header is not JSON: {e}")
    body = data[8 + n:]
    metadata = header.pop("__metadata__", {})
    tensors = {}
    spans = []
    for name, t in header.items():
        if t.get("dtype") != "F32":
            raise Failure(f"{path}: tensor {name} is {t.get('dtype')}, not F32")
        begin, end = t["data_offsets"]
        count = 1
        for d in t["shape"]:
            count *= d
        if end - begin != 4 * count or not 0 <= begin <= end <= len(body):
            raise Failure(f"{path}: tensor {name} has offsets {begin}..{end} for shape "
                          f"{t['shape']} in {len(body)} bytes of data")
        spans.append((begin, end))
        tensors[name] = ("F32", tuple(t["shape"]), body[begin:end])
    spans.sort()
    covered = 0
    for begin, end in spans:
        if begin != covered:
            raise Failure(f"{path}: the tensors' data is not contiguous at byte {covered}")
        covered = end
    if covered != len(body):
        raise Failure(f"{path}: {len(body) - covered} bytes after the last tensor")
    return metadata, tensors


def complete_checkpoints(model_dir):
    """{step: dir} of the checkpoints holding all three files (what transduce lists)."""
    found = {}
    ckpt = model_dir / "checkpoints"
    if not ckpt.is_dir():
        return found
    for d in ckpt.iterdir():
        m = STEP_DIR.match(d.name)
        if m and d.is_dir() and all((d / f).is_file() for f in
                                    ("model.safetensors", "optimizer.safetensors", "state.json")):
            found[int(m.group(1))] = d
    return found


def check_checkpoint(d, step, transduce, scratch):
    """Raises Failure unless checkpoint dir `d` of `step` reads, in Python and in transduce."""
    meta, weights = read_safetensors(d / "model.safetensors")
    if meta.get("step") != str(step):
        raise Failure(f"{d}/model.safetensors: metadata step {meta.get('step')}, not {step}")
    ometa, moments = read_safetensors(d / "optimizer.safetensors")
    if set(moments) != {f"{p}.{n}" for n in weights for p in ("m", "v")}:
        raise Failure(f"{d}/optimizer.safetensors: moments do not match the weights")
    try:
        state = json.loads((d / "state.json").read_text())
    except ValueError as e:
        raise Failure(f"{d}/state.json: not JSON: {e}")
    if state.get("step") != step or ometa.get("steps") != str(step):
        raise Failure(f"{d}: state step {state.get('step')}, optimizer steps {ometa.get('steps')}, "
                      f"directory step {step}")
    out = scratch / "average-check"
    shutil.rmtree(out, ignore_errors=True)
    r = subprocess.run([str(transduce), "average", "--checkpoints", str(d), "--output", str(out)],
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if r.returncode != 0:
        raise Failure(f"transduce average --checkpoints {d} failed:\n{r.stdout}")
    _, averaged = read_safetensors(out / "model.safetensors")
    if averaged != weights:
        raise Failure(f"transduce average of the single checkpoint {d} differs from its weights")


# --- the training job -------------------------------------------------------------------------

def write_toy_corpus(pairs, seed):
    """A parallel corpus of made-up words: the target spells each word backwards, reversed order."""
    rng = random.Random(seed)
    syllables = ["ka", "lo", "mi", "ne", "ru", "sa", "ti", "vo", "ze", "po", "an", "el"]
    words = sorted({"".join(rng.choice(syllables) for _ in range(rng.randint(1, 3)))
                    for _ in range(400)})
    src, tgt = [], []
    for _ in range(pairs):
        s = [rng.choice(words) for _ in range(rng.randint(3, 14))]
        src.append(" ".join(s))
        tgt.append(" ".join(w[::-1] for w in reversed(s)))
    return src, tgt


def prepare_data(args, work):
    data = work / "data"
    data.mkdir(parents=True, exist_ok=True)
    if args.toy or args.data is None:
        src, tgt = write_toy_corpus(args.pairs + 200, args.seed)
        source = "a toy corpus written by this script"
    else:
        with open(args.data / "train.en", encoding="utf-8") as f:
            src = [next(f).rstrip("\n") for _ in range(args.pairs + 200)]
        with open(args.data / "train.de", encoding="utf-8") as f:
            tgt = [next(f).rstrip("\n") for _ in range(args.pairs + 200)]
        source = f"the first {args.pairs} + 200 pairs of {args.data}/train.en-de"
    for name, lines in (("train.src", src[:args.pairs]), ("train.tgt", tgt[:args.pairs]),
                        ("valid.src", src[args.pairs:]), ("valid.tgt", tgt[args.pairs:])):
        (data / name).write_text("\n".join(lines) + "\n", encoding="utf-8")
    r = subprocess.run([str(args.transduce), "vocab", "--input", str(data / "train.src"),
                        str(data / "train.tgt"), "--vocab-size", "1000", "--output", str(data / "vocab")],
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if r.returncode != 0:
        raise Failure(f"transduce vocab failed:\n{r.stdout}")
    return data, source


class Job:
    def __init__(self, args, data):
        self.args = args
        self.data = data

    def command(self, model_dir, fresh):
        a = self.args
        cmd = [str(a.transduce), "--threads", str(a.threads), "train",
               "--src", str(self.data / "train.src"), "--tgt", str(self.data / "train.tgt"),
               "--valid-src", str(self.data / "valid.src"),
               "--valid-tgt", str(self.data / "valid.tgt"),
               "--max-steps", str(a.max_steps), "--save-every", str(a.save_every),
               "--save-every-minutes", "0", "--keep", str(a.keep), "--log-every", "50",
               "--valid-every", "100"]
        if fresh:
            # Only a new model takes the model and batching flags; a resumed one reads them back.
            cmd += ["--output", str(model_dir), "--vocab", str(self.data / "vocab"),
                    "--batch-tokens", "500", "--warmup", "400"] + MODEL_FLAGS
        else:
            cmd += ["--resume", str(model_dir)]
        return cmd

    def start(self, model_dir, fresh, log_path):
        log = open(log_path, "w")
        started = time.time()
        p = subprocess.Popen(self.command(model_dir, fresh), stdout=log, stderr=subprocess.STDOUT,
                             stdin=subprocess.DEVNULL)
        log.close()
        return p, started


def startup_seconds(log_text, started):
    """Seconds from the start of the process to its "model: ..." line (the training loop)."""
    for line in log_text.splitlines():
        if "] model: " in line:
            t = log_time(line)
            return None if t is None else t - started
    return None


def classify(model_dir, pid, log_text, keep, newest_before):
    """(phase, part, detail): where a kill of process `pid` landed, from what it left behind."""
    if "] model: " not in log_text:
        return "start-up", "before the training loop", ""
    ckpt = model_dir / "checkpoints"
    dirs = sorted(d for d in ckpt.iterdir() if f".tmp-{pid}" in d.name) if ckpt.is_dir() else []
    files = sorted(f.name for f in model_dir.iterdir() if f".tmp.{pid}." in f.name)
    if any(f.startswith("train_log.jsonl.") for f in files):
        return "start-up", "rewriting train_log.jsonl", ", ".join(files)
    if any(d.name.endswith("-delete") for d in dirs):
        return "checkpoint write", "pruning old checkpoints", ", ".join(d.name for d in dirs)
    if dirs:
        inside = ", ".join(sorted(f.name for f in dirs[0].iterdir()))
        return "checkpoint write", "writing the checkpoint dir", f"{dirs[0].name}: [{inside}]"
    if files:
        return "checkpoint write", "rewriting model.safetensors", ", ".join(files)
    complete = complete_checkpoints(model_dir)
    saved = complete and max(complete) > (newest_before or -1)  # this run wrote a checkpoint
    if saved and (model_dir / "model.safetensors").is_file():
        try:
            step = int(read_safetensors(model_dir / "model.safetensors")[0].get("step", -1))
        except Failure:
            step = -1  # reported by the load check
        if step < max(complete):
            return ("checkpoint write", "rewriting model.safetensors",
                    f"model.safetensors at step {step}, the newest checkpoint {max(complete)}")
    if saved and len(complete) > keep:
        return "checkpoint write", "pruning old checkpoints", f"{len(complete)} checkpoints"
    return "training", "updates, logging, validation", ""


def leftovers(model_dir):
    """Temporary files and dirs in a model directory (what an interrupted write leaves)."""
    found = [f.name for f in model_dir.iterdir() if ".tmp" in f.name]
    ckpt = model_dir / "checkpoints"
    if ckpt.is_dir():
        found += ["checkpoints/" + d.name for d in ckpt.iterdir() if ".tmp" in d.name]
    return sorted(found)


def resumed_from(log_text):
    m = re.search(r"resuming \S*step-(\d+) at step (\d+)", log_text)
    return None if m is None else int(m.group(2))


def final_comparison(ref, run, max_steps):
    """Lists of what differs between the reference's and the killed run's final files."""
    diffs = []
    for rel in ("model.safetensors", f"checkpoints/step-{max_steps:08d}/model.safetensors",
                f"checkpoints/step-{max_steps:08d}/optimizer.safetensors"):
        a, b = ref / rel, run / rel
        if not b.is_file():
            diffs.append(f"{rel}: missing")
            continue
        if a.read_bytes() == b.read_bytes():
            continue
        ma, ta = read_safetensors(a)
        mb, tb = read_safetensors(b)
        tensors = [n for n in ta if ta[n] != tb.get(n)]
        diffs.append(f"{rel}: {len(tensors)} tensors differ (first: {tensors[:3]}); metadata "
                     f"{'equal' if ma == mb else 'differs'}")
    sa = json.loads((ref / f"checkpoints/step-{max_steps:08d}/state.json").read_text())
    sb_path = run / f"checkpoints/step-{max_steps:08d}/state.json"
    if sb_path.is_file():
        sb = json.loads(sb_path.read_text())
        for s in (sa, sb):
            s.pop("elapsed_seconds", None)
        if sa != sb:
            diffs.append(f"state.json differs beyond elapsed_seconds: {sa} vs {sb}")

    def valid_records(d):
        records = [json.loads(line) for line in (d / "train_log.jsonl").read_text().splitlines()]
        steps = [r["step"] for r in records]
        if steps != sorted(steps):
            diffs.append(f"{d}/train_log.jsonl: steps go backwards: not one history")
        return [(r["step"], r["loss"], r["ppl"]) for r in records if r["kind"] == "valid"]

    va, vb = valid_records(ref), valid_records(run)
    if va != vb:
        diffs.append(f"train_log.jsonl validation records differ: {va[:3]}... vs {vb[:3]}...")
    return diffs


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--transduce", type=Path, default=REPO / "build" / "transduce")
    p.add_argument("--kills", type=int, default=100)
    p.add_argument("--seed", type=int, default=1, help="seed of the kill delays (and toy corpus)")
    p.add_argument("--max-steps", type=int, default=3000)
    p.add_argument("--save-every", type=int, default=5)
    p.add_argument("--keep", type=int, default=3)
    p.add_argument("--threads", type=int, default=1, help="transduce --threads, for every run")
    p.add_argument("--data", type=Path,
                   help="Multi30k's folder (default ../shared/data/multi30k, or the toy corpus "
                        "where it is missing)")
    p.add_argument("--toy", action="store_true", help="a corpus made here instead of --data")
    p.add_argument("--pairs", type=int, default=3000, help="training pairs")
    p.add_argument("--work", type=Path, default=Path("/tmp/reliability/kill_training"),
                   help="scratch directory (emptied first)")
    args = p.parse_args()
    args.transduce = args.transduce.resolve()
    if not args.transduce.is_file():
        sys.exit(f"kill_training: no binary at {args.transduce}")
    if args.data is None and not args.toy and (DEFAULT_DATA / "train.en").is_file():
        args.data = DEFAULT_DATA
    if args.data is not None and not args.toy and not all(
            (args.data / f"train.{lang}").is_file() for lang in ("en", "de")):
        sys.exit(f"kill_training: {args.data}: no train.en and train.de (give --toy for a corpus "
                 "made here)")
    t0 = time.time()
    failures = []
    try:
        summary = experiment(args, failures)
    except Failure as e:
        failures.append(str(e))
        summary = None
    wall = time.time() - t0
    print()
    if summary:
        for k, v in summary:
            print(f"{k:<36} {v}")
    print(f"{'wall time':<36} {wall:.1f} s")
    if failures:
        print(f"\nFAILED ({len(failures)}):")
        for f in failures[:20]:
            print(f"  {f}")
        sys.exit(1)
    print("\nOK")


def experiment(args, failures):
    work = args.work
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    logs = work / "logs"
    logs.mkdir()
    data, source = prepare_data(args, work)
    job = Job(args, data)
    print(f"data: {source}; transduce: {args.transduce}; threads {args.threads}", flush=True)

    # The reference: one run, never interrupted.
    ref = work / "reference"
    proc, started = job.start(ref, True, logs / "reference.log")
    rc = proc.wait()
    ref_seconds = time.time() - started
    ref_log = (logs / "reference.log").read_text()
    if rc != 0:
        raise Failure(f"the reference run failed ({rc}):\n{ref_log[-2000:]}")
    startup = startup_seconds(ref_log, started) or 0.05
    per_step = (ref_seconds - startup) / args.max_steps
    print(f"reference: {args.max_steps} steps in {ref_seconds:.1f} s (start-up {startup:.3f} s, "
          f"{1000 * per_step:.1f} ms a step with checkpoints)", flush=True)

    # The same job, killed --kills times.
    rng = random.Random(args.seed)
    run = work / "killed"
    scratch = work / "scratch"
    scratch.mkdir()
    startups = [startup]
    phases = {}
    parts = {}
    records = []
    load_failures = 0
    resume_checked = 0
    finished_early = False
    kill_time = time.time()
    for i in range(args.kills):
        complete = complete_checkpoints(run)
        newest = max(complete) if complete else None
        fresh = newest is None
        s = statistics.median(startups)
        remaining = args.max_steps - (newest or 0)
        # Aim to use about 70% of the remaining updates over the remaining kills, plus the work
        # lost since the last checkpoint; at least three checkpoint intervals.
        target = 0.7 * remaining / (0.8 * (args.kills - i)) + args.save_every / 2
        window = max(2 * target * per_step, 3 * args.save_every * per_step)
        window = min(window, 0.5 * remaining * per_step)  # the last kills too before the end
        delay = rng.uniform(0, 1.2 * s) if rng.random() < 0.2 else s + rng.uniform(0, window)
        log_path = logs / f"kill-{i:03d}.log"
        proc, started = job.start(run, fresh, log_path)
        time.sleep(max(0.0, started + delay - time.time()))
        if proc.poll() is None:
            proc.send_signal(signal.SIGKILL)
        rc = proc.wait()
        text = log_path.read_text(errors="replace")
        if rc != -signal.SIGKILL:
            if rc == 0:
                finished_early = True
                print(f"kill {i}: the run finished before the kill at {delay:.3f} s; stopping",
                      flush=True)
                break
            load_failures += 1
            failures.append(f"run {i} ({'new' if fresh else 'resumed'}) exited {rc} by itself: "
                            f"{text.strip().splitlines()[-1:]}; log {log_path}")
        su = startup_seconds(text, started)
        if su is not None:
            startups.append(su)
        phase, part, detail = classify(run, proc.pid, text, args.keep, newest)
        phases[phase] = phases.get(phase, 0) + 1
        parts[(phase, part)] = parts.get((phase, part), 0) + 1
        # The resumed run must have started from the newest checkpoint, skipping none.
        if not fresh and "resuming" in text:
            resume_checked += 1
            if resumed_from(text) != newest:
                load_failures += 1
                failures.append(f"run {i} resumed from step {resumed_from(text)}, the newest "
                                f"checkpoint was {newest}; log {log_path}")
        if "skipping checkpoint" in text:
            load_failures += 1
            failures.append(f"run {i} skipped a corrupt checkpoint; log {log_path}")
        # What the kill left must load.
        after = complete_checkpoints(run)
        new_newest = max(after) if after else None
        if new_newest is not None:
            try:
                check_checkpoint(after[new_newest], new_newest, args.transduce, scratch)
                read_safetensors(run / "model.safetensors")
            except Failure as e:
                load_failures += 1
                failures.append(f"after kill {i}: {e}")
        records.append({"kill": i, "delay": round(delay, 4), "phase": phase, "part": part,
                        "detail": detail,
                        "fresh": fresh, "from": newest, "newest": new_newest, "rc": rc})
        print(f"kill {i:3d}: {delay:7.3f} s  {phase}: {part}; checkpoint {newest} -> "
              f"{new_newest}{'  (' + detail + ')' if detail else ''}", flush=True)
    kills_done = len([r for r in records if r["rc"] == -signal.SIGKILL])
    kill_seconds = time.time() - kill_time

    # Let it finish (unless the last run did), then compare with the reference.
    complete = complete_checkpoints(run)
    newest = max(complete) if complete else None
    if finished_early:
        rc, text = 0, ""
    else:
        proc, started = job.start(run, newest is None, logs / "final.log")
        rc = proc.wait()
        text = (logs / "final.log").read_text()
    if rc != 0:
        failures.append(f"the final run failed ({rc}): {text.strip().splitlines()[-1:]}")
        diffs = ["no final model"]
    else:
        if text and newest is not None and resumed_from(text) != newest:
            load_failures += 1
            failures.append(f"the final run resumed from {resumed_from(text)}, not {newest}")
        diffs = final_comparison(ref, run, args.max_steps)
        failures.extend(diffs)
    (work / "kills.json").write_text(json.dumps(records, indent=1) + "\n")

    summary = [
        ("data", source),
        ("model", " ".join(MODEL_FLAGS) + f", --batch-tokens 500, --threads {args.threads}"),
        ("steps; checkpoint every; keep", f"{args.max_steps}; {args.save_every}; {args.keep}"),
        ("reference run", f"{ref_seconds:.1f} s"),
        ("kills (SIGKILL)", f"{kills_done} of {args.kills}, seed {args.seed}"
         + (" (the run finished first)" if finished_early else "")),
    ]
    for phase in ("start-up", "training", "checkpoint write"):
        summary.append((f"  landed in {phase}", phases.get(phase, 0)))
        for (ph, part), n in sorted(parts.items()):
            if ph == phase:
                summary.append((f"    {part}", n))
    summary += [
        ("runs started fresh (no checkpoint)", sum(r["fresh"] for r in records)),
        ("resumes that logged their checkpoint", resume_checked),
        ("loads that failed", load_failures),
        ("kill phase", f"{kill_seconds:.1f} s"),
        ("final weights bitwise equal", "yes" if not diffs else "NO: " + "; ".join(diffs)),
        ("temporary files left at the end", ", ".join(leftovers(run)) or "none"),
    ]
    return summary


if __name__ == "__main__":
    main()
