#!/usr/bin/python3
"""Data-parallel training throughput: 1 rank against K ranks on one machine, with `transduce train`.

    bench/dist_scaling.py [--ranks 2] [--model recipe|base] [--steps 40] [--batch-tokens 4096]
                          [--data DIR] [--pair en-de] [--transduce build/transduce]

On Multi30k's training text (a shared vocabulary made first) it trains, each for --steps updates:
  single    1 process, CORES/K threads, batches of B tokens        (what one rank does alone)
  ranks     mpirun -np K, CORES/K threads each, B tokens each       (global batch K*B)
  threads   1 process, all cores, B tokens x K accumulated          (the same global batch)
and reads source+target tokens/s from each run's train_log.jsonl, leaving out the first log
interval (start-up). Scaling efficiency = ranks / (K * single). `ranks / threads` says whether K
ranks or one process with K times the threads uses the machine better. It prints a table and
`name value` lines. Models: `recipe` is recipes/multi30k's (4+4 layers, d_model 128), `base` the
paper's base model (slow on a small machine: use few steps).
"""

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
MODELS = {
    "recipe": ["--layers", "4", "--d-model", "128", "--d-ff", "256", "--heads", "4",
               "--dropout", "0.3"],
    "base": ["--preset", "base"],
}


def fail(message):
    sys.exit(f"bench/dist_scaling: {message}")


def throughput(model_dir):
    """Mean tokens/s and sync share of a run's training log lines after the first."""
    lines = [json.loads(l) for l in (model_dir / "train_log.jsonl").read_text().splitlines()]
    train = [l for l in lines if l["kind"] == "train"][1:]
    if not train:
        fail(f"{model_dir}: too few log lines; give more --steps")
    tps = sum(l["tokens_per_second"] for l in train) / len(train)
    sync = sum(l.get("sync_share", 0.0) for l in train) / len(train)
    return tps, sync


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--ranks", type=int, default=2)
    p.add_argument("--model", choices=MODELS, default="recipe")
    p.add_argument("--steps", type=int, default=40)
    p.add_argument("--batch-tokens", type=int, default=4096, help="per rank and batch")
    p.add_argument("--data", type=Path, default=REPO.parent / "shared" / "data" / "multi30k")
    p.add_argument("--pair", default="en-de")
    p.add_argument("--transduce", type=Path, default=REPO / "build" / "transduce")
    args = p.parse_args()
    if args.steps < 2 or args.ranks < 2:
        fail("give --steps of at least 2 and --ranks of at least 2")
    if shutil.which("mpirun") is None:
        fail("no mpirun (Debian: openmpi-bin)")
    src_lang, tgt_lang = args.pair.split("-")
    src, tgt = args.data / f"train.{src_lang}", args.data / f"train.{tgt_lang}"
    for f in (src, tgt):
        if not f.exists():
            fail(f"{f}: missing (give --data DIR)")
    cores = len(os.sched_getaffinity(0))
    per_rank = max(1, cores // args.ranks)
    env = {k: v for k, v in os.environ.items() if k != "OMP_WAIT_POLICY"}
    # Each rank bound to its own share of the cores.
    mpirun = ["mpirun", "-np", str(args.ranks), "--map-by", f"slot:PE={per_rank}"]
    if os.geteuid() == 0:
        mpirun.append("--allow-run-as-root")

    with tempfile.TemporaryDirectory(prefix="dist_scaling_") as tmp:
        tmp = Path(tmp)
        subprocess.run([args.transduce, "vocab", "--input", src, tgt, "--vocab-size", "6000",
                        "--output", tmp / "vocab"], check=True, capture_output=True)
        log_every = max(1, args.steps // 5)
        common = ["train", "--src", src, "--tgt", tgt, "--vocab", tmp / "vocab",
                  *MODELS[args.model], "--max-steps", str(args.steps), "--warmup", "4000",
                  "--log-every", str(log_every), "--save-every-minutes", "0"]
        runs = {
            "single": [args.transduce, "--threads", str(per_rank), *common,
                       "--batch-tokens", str(args.batch_tokens)],
            "ranks": [*mpirun, args.transduce, "--threads", str(per_rank), *common,
                      "--batch-tokens", str(args.batch_tokens)],
            "threads": [args.transduce, "--threads", str(cores), *common,
                        "--batch-tokens", str(args.batch_tokens), "--accum", str(args.ranks)],
        }
        results = {}
        for name, cmd in runs.items():
            out = tmp / name
            cmd = [str(c) for c in cmd] + ["--output", str(out)]
            r = subprocess.run(cmd, env=env, capture_output=True, text=True)
            if r.returncode != 0:
                fail(f"{name}: {' '.join(cmd)} failed:\n{r.stdout[-2000:]}{r.stderr[-2000:]}")
            results[name] = throughput(out)
            print(f"{name:8s} {results[name][0]:10.0f} tokens/s", file=sys.stderr, flush=True)

    single, ranks, threads = results["single"][0], results["ranks"][0], results["threads"][0]
    k = args.ranks
    print(f"\n{args.model} model, {args.batch_tokens} tokens per batch and rank, {cores} cores, "
          f"{per_rank} thread(s) per rank, {args.steps} updates per run\n")
    print("| run | processes x threads | global batch | tokens/s |")
    print("|---|---|---|---|")
    print(f"| single | 1 x {per_rank} | {args.batch_tokens} | {single:.0f} |")
    print(f"| ranks | {k} x {per_rank} | {k} x {args.batch_tokens} | {ranks:.0f} |")
    print(f"| threads | 1 x {cores} | {k} x {args.batch_tokens} (accum) | {threads:.0f} |\n")
    print(f"scaling_efficiency {ranks / (k * single):.3f}")
    print(f"speedup_ranks {ranks / single:.3f}")
    print(f"ranks_over_threads {ranks / threads:.3f}")
    print(f"sync_share {results['ranks'][1]:.4f}")


if __name__ == "__main__":
    main()
