#!/usr/bin/python3
"""transduce against PyTorch on the workloads of ../shared/BENCHMARKS.md, side by side in one run.

    bench/compare.py [--threads 2] [--rounds 1] [--transduce build/transduce] [--quick] [--no-bf16]
                     [--baseline OTHER/transduce] [--only REGEX] [--facts]

For each workload it runs `transduce bench ...` and bench/pytorch_reference.py one after the other
(alternating, `--rounds` times, keeping each side's best) with the same number of threads, and
measures each process's peak resident memory. Training runs in fp32 and in bf16 on both sides
(ours: --compute-type bf16, oneDNN; PyTorch: torch.autocast on the CPU, oneDNN too). Each side gets
its best thread setting on the machine at hand: before the workloads, each side's tiny training
step runs under both OpenMP wait policies (transduce: libgomp's default and passive; PyTorch:
passive and active) and the faster is kept for every workload (where the environment names
OpenBLAS kernels without AVX-512 on an AVX-512 CPU, each is also tried with
OPENBLAS_CORETYPE=SKYLAKEX); the table's header says which BLAS library PyTorch loaded and which thread pools run it (OpenMP or pthreads, their sizes). It
prints a table and ends with one `name value` line per figure (train_tiny_ratio,
train_base_ratio, train_tiny_bf16_ratio, train_base_bf16_over_our_fp32, train_base25k_ratio,
decode_greedy_ratio, decode_beam4_ratio, mfu_base, rss_base_ratio, ...). `--quick` runs only the tiny workloads (a smoke test of the script, not a
measurement). `--baseline` also runs another build of transduce (say, the commit before a change)
on our side of every workload, alternating with this one, and reports this build's speed over
that one's (`..._over_baseline`): a speed-up measured in one run. `--only` keeps the workloads
whose names match a regular expression. Training workloads also report the time a step spends
outside matrix products (`..._outside_products_ms`, from `transduce bench train`'s phase record).
`--facts` also measures, on PyTorch's tiny training step, what OpenBLAS's thread
count at load and a spinning OpenMP pool do to it.
"""

import argparse
import json
import os
import re
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def run_child(cmd, env):
    """Runs cmd, returns (parsed JSON stdout, peak RSS in MB of that process)."""
    proc = subprocess.Popen([str(c) for c in cmd], stdout=subprocess.PIPE, env=env, text=True)
    out = proc.stdout.read()
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        sys.exit(f"bench/compare: {' '.join(map(str, cmd))} failed (exit {proc.returncode})")
    return json.loads(out), usage.ru_maxrss / 1024.0


def settings_env(base_env, policy, coretype):
    """base_env under an OpenMP wait policy ("default": libgomp's own) and, unless None, an
    OPENBLAS_CORETYPE."""
    env = {k: v for k, v in base_env.items() if k != "OMP_WAIT_POLICY"}
    if policy != "default":
        env["OMP_WAIT_POLICY"] = policy
    if coretype is not None:
        env["OPENBLAS_CORETYPE"] = coretype
    return env


def best_settings(side, kind, cmd, key, base_env, policies, coretypes):
    """Each side's best OpenMP wait policy and OpenBLAS kernel set (coretypes: None keeps
    base_env's) on this machine for one kind of work (training or decoding), from a short run of
    its tiny workload (cmd: the whole command; key: the figure). Returns the policy and the env."""
    rates = {}
    for coretype in coretypes:
        for policy in policies:
            j, _ = run_child(cmd, settings_env(base_env, policy, coretype))
            if "runs" in j:
                j = dict(j, **j["runs"][0])
            rates[policy, coretype] = j[key]
            kernels = "" if coretype is None else f", OPENBLAS_CORETYPE={coretype}"
            print(f"  {side:<6} {kind} with OMP_WAIT_POLICY={policy}{kernels}: "
                  f"{rates[policy, coretype]:.1f} {key}", file=sys.stderr, flush=True)
    policy, coretype = max(rates, key=rates.get)
    return policy, settings_env(base_env, policy, coretype)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--rounds", type=int, default=1)
    p.add_argument("--transduce", type=Path, default=REPO / "build" / "transduce")
    p.add_argument("--python", default="/usr/bin/python3", help="a Python with Debian's torch")
    p.add_argument("--quick", action="store_true", help="tiny workloads only")
    p.add_argument("--no-bf16", action="store_true",
                   help="no bf16 workloads (a CPU without bf16 dot products)")
    p.add_argument("--no-int8", action="store_true",
                   help="decode in fp32 only (a CPU without int8 dot products)")
    p.add_argument("--baseline", type=Path,
                   help="another transduce binary, run beside ours on every workload")
    p.add_argument("--only", help="run only the workloads whose names match this regex")
    p.add_argument("--facts", action="store_true",
                   help="also measure PyTorch under other thread settings")
    args = p.parse_args()
    if args.baseline and not os.access(args.baseline, os.X_OK):
        sys.exit(f"bench/compare: --baseline {args.baseline} is not an executable")

    base_env = dict(os.environ)
    # transduce asks OpenBLAS for its AVX-512 kernels itself where OpenBLAS 0.3.21 does not know
    # the CPU (src/ops/cpu/blas_kernels.h); PyTorch gets them the only way it can, from the start.
    flags = set()
    with open("/proc/cpuinfo") as info:
        for line in info:
            if line.startswith("flags"):
                flags = set(line.split(":", 1)[1].split())
                break
    avx512 = {"avx512f", "avx512bw", "avx512dq", "avx512vl"} <= flags
    if "OPENBLAS_CORETYPE" not in base_env and avx512:
        base_env["OPENBLAS_CORETYPE"] = "SKYLAKEX"
    # An environment may name OpenBLAS kernels without AVX-512 on an AVX-512 CPU (this project's
    # EPYC sets OPENBLAS_CORETYPE=Haswell, half the fp32 GEMM rate): then both sides are also
    # probed with the AVX-512 kernels, and each keeps the faster.
    named = os.environ.get("OPENBLAS_CORETYPE", "").upper()
    coretypes = [None]
    if avx512 and named and named not in ("SKYLAKEX", "COOPERLAKE", "SAPPHIRERAPIDS"):
        coretypes.append("SKYLAKEX")
    ours = [args.transduce, "--threads", args.threads, "bench"]
    torch = [args.python, REPO / "bench" / "pytorch_reference.py", "--threads", args.threads,
             "--json"]
    # Each side gets the wait policy it runs fastest with here, chosen apart for training and for
    # decoding: one OpenMP pool driving everything prefers spinning a little (libgomp's default),
    # two pools side by side prefer passive, and decoding's many short parallel regions are the
    # most sensitive to it.
    probes = {
        "train": (["train", "--preset", "tiny", "--steps", 4], ["train", "--preset", "tiny",
                                                                "--steps", 4],
                  "tokens_per_second"),
        "decode": (["translate", "--preset", "tiny", "--greedy-only", "--sentences", 200],
                   ["translate", "--preset", "tiny", "--beam", 1, "--sentences", 200],
                   "sentences_per_second"),
    }
    policy, env = {}, {}
    for kind, (our_probe, torch_probe, key) in probes.items():
        policy["ours", kind], env["ours", kind] = best_settings(
            "ours", kind, [*ours, *our_probe, "--json"], key, dict(os.environ),
            ("default", "passive"), coretypes)
        policy["torch", kind], env["torch", kind] = best_settings(
            "torch", kind, [*torch, *torch_probe], key, base_env, ("passive", "active"),
            coretypes)

    # name, our command, PyTorch's command, how to read the figure from each JSON
    train_fig = ("tokens_per_second", "tokens_per_second")
    precisions = ("fp32",) if args.no_bf16 else ("fp32", "bf16")
    workloads = []
    for preset in ("tiny",) if args.quick else ("tiny", "base"):
        for precision in precisions:
            suffix = "" if precision == "fp32" else "_bf16"
            # fp32 is the default: left unsaid, so that a --baseline build that named the flag
            # otherwise still runs the workload.
            compute = [] if precision == "fp32" else ["--compute-type", precision]
            workloads.append((f"train_{preset}{suffix}",
                              [*ours, "train", "--preset", preset, *compute, "--json"],
                              [*torch, "train", "--preset", preset, "--precision", precision],
                              train_fig))
    if not args.quick:
        # The paper's batch, 25000 source + 25000 target tokens in one step: its activations do
        # not fit 24 GB in one pass on either side, so both run it as 4 slices of 250 sentences
        # whose gradients are summed before the one update.
        workloads.append(("train_base25k",
                          [*ours, "train", "--preset", "base", "--batch-sentences", 1000, "--accum", 4,
                           "--steps", 3, "--json"],
                          [*torch, "train", "--preset", "base", "--batch", 1000, "--accum", 4,
                           "--steps", 3],
                          train_fig))
    # Decoding in fp32, in bf16 (ours: bf16 weights at load; PyTorch: the model in bfloat16), and
    # in int8: ours quantized at load (--compute-type int8), PyTorch's
    # torch.ao.quantization.quantize_dynamic on its Linear layers with the oneDNN engine (faster
    # than QNNPACK here: 101 against 95 sentences/s, tiny greedy).
    compute_types = (("fp32",) + (() if args.no_bf16 else ("bf16",)) +
                     (() if args.no_int8 else ("int8",)))
    for preset in ("tiny",) if args.quick else ("tiny", "base"):
        for compute in compute_types:
            suffix = "" if compute == "fp32" else f"_{compute}"
            for search, beam, flag in (("greedy", 1, "--greedy-only"),
                                       ("beam4", 4, "--beam-only")):
                workloads.append((f"decode_{search}_{preset}{suffix}",
                                  [*ours, "translate", "--preset", preset, flag, "--beam", 4,
                                   "--compute-type", compute, "--json"],
                                  [*torch, "translate", "--preset", preset, "--beam", beam,
                                   "--compute-type", compute],
                                  ("sentences_per_second", "sentences_per_second")))

    if args.only:
        workloads = [w for w in workloads if re.search(args.only, w[0])]
        if not workloads:
            sys.exit(f"bench/compare: no workload matches --only {args.only}")
    # The baseline build runs our commands with its own binary, under our wait policy.
    sides = ["ours", "torch"] + (["baseline"] if args.baseline else [])
    for kind in ("train", "decode"):
        env["baseline", kind] = env["ours", kind]

    results = {}
    for name, our_cmd, torch_cmd, (our_key, torch_key) in workloads:
        best = {side: None for side in sides}
        for _ in range(args.rounds):
            kind = "train" if name.startswith("train") else "decode"
            for side in sides:
                cmd = {"ours": our_cmd, "torch": torch_cmd,
                       "baseline": [args.baseline, *our_cmd[1:]]}[side]
                j, rss = run_child(cmd, env[side, kind])
                if side != "torch" and "runs" in j:
                    j = dict(j, **j["runs"][0])
                value = j[torch_key if side == "torch" else our_key]
                if best[side] is None or value > best[side]["value"]:
                    best[side] = {"value": value, "rss_mb": rss, "json": j}
                print(f"  {name:<22} {side:<8} {value:10.1f}  rss {rss:8.0f} MB", file=sys.stderr,
                      flush=True)
        results[name] = best

    report(results, args, policy, env, torch)


def commit_text(bench_json):
    """The commit a `transduce bench --json` names ("commit ..."), or what a build from before
    that field is."""
    commit = bench_json.get("commit")
    return f"commit {commit}" if commit else "a build that names no commit"


def report(results, args, policy, env, torch):
    """The table, the MFU lines and one `name value` line per figure."""
    first = results[next(iter(results))]
    t, o = first["torch"]["json"], first["ours"]["json"]
    print(f"\ntransduce {commit_text(o)}: {o['gemms']}; {args.threads} OpenMP threads drive "
          "everything; "
          f"OMP_WAIT_POLICY={policy['ours', 'train']} (training), "
          f"{policy['ours', 'decode']} (decoding)")
    if args.baseline:
        print(f"baseline: {args.baseline} ({commit_text(first['baseline']['json'])}), run on "
              "our side of every workload in the same run")
    print(f"PyTorch {t['torch']}: BLAS {t['blas_library']} ({t['blas_threading']}, "
          f"{t['blas_threads']} threads), {t['openmp_threads']} OpenMP threads for its own "
          f"kernels, {t['onednn']}; OMP_WAIT_POLICY={policy['torch', 'train']} (training), "
          f"{policy['torch', 'decode']} (decoding), "
          f"OPENBLAS_CORETYPE={env['torch', 'train'].get('OPENBLAS_CORETYPE', 'unset')}")
    int8_runs = [r for n, r in results.items() if n.endswith("_int8")]
    if int8_runs:
        print(f"int8 decoding: transduce {int8_runs[0]['ours']['json']['gemms']}; PyTorch "
              f"quantize_dynamic on its Linear layers, engine "
              f"{int8_runs[0]['torch']['json']['quantized_engine']}")
    baseline_head = f" {'baseline':>12} {'/baseline':>9}" if args.baseline else ""
    print(f"\n{'workload':<32} {'transduce':>12} {'PyTorch':>12} {'ratio':>7} "
          f"{'RSS ours MB':>12} {'RSS torch MB':>13}{baseline_head}")
    for name, b in results.items():
        unit = "tok/s" if name.startswith("train") else "sent/s"
        line = (f"{name + ' (' + unit + ')':<32} {b['ours']['value']:12.1f} "
                f"{b['torch']['value']:12.1f} {b['ours']['value'] / b['torch']['value']:7.2f} "
                f"{b['ours']['rss_mb']:12.0f} {b['torch']['rss_mb']:13.0f}")
        if args.baseline:
            line += (f" {b['baseline']['value']:12.1f} "
                     f"{b['ours']['value'] / b['baseline']['value']:9.2f}")
        print(line)
    for name in results:
        if name.startswith("train"):
            o, t = results[name]["ours"]["json"], results[name]["torch"]["json"]
            bf16 = name.endswith("_bf16")
            rate = "bf16_gemm_gflops" if bf16 else "sgemm_gflops"
            print(f"{name}: MFU transduce {o['mfu']:.2f} ({o['model_gflops']:.0f} of "
                  f"{o[rate]:.0f} GFLOP/s{', ' + o['bf16_gemm_kernel'] if bf16 else ''}), "
                  f"PyTorch {t['mfu']:.2f} ({t['model_gflops']:.0f} of {t[rate]:.0f} GFLOP/s); "
                  f"transduce's step {o['median_step_seconds'] * 1e3:.0f} ms, "
                  f"{o['outside_products_seconds_per_step'] * 1e3:.0f} ms of it outside products")
            split = o.get("phase_seconds_per_step", {})  # absent from builds before the phases
            if split:
                print(f"{name}: transduce's step by phase (ms): " +
                      ", ".join(f"{k} {v * 1e3:.0f}" for k, v in split.items()))

    print()
    summary = {f"{n}_ratio": b["ours"]["value"] / b["torch"]["value"] for n, b in results.items()}
    if args.baseline:
        summary.update({f"{n}_over_baseline": b["ours"]["value"] / b["baseline"]["value"]
                        for n, b in results.items()})
    presets = ("tiny",) if args.quick else ("tiny", "base")
    for search in ("greedy", "beam4"):
        per_model = [v for k, v in summary.items()
                     if k.startswith(f"decode_{search}_") and k.endswith("_ratio")
                     and "_int8" not in k and "_bf16" not in k]
        if per_model:
            summary[f"decode_{search}_ratio"] = min(per_model)  # the weaker of the two models
        for preset in presets:
            name = f"decode_{search}_{preset}"
            if f"{name}_bf16" in results and name in results:
                summary[f"{name}_bf16_over_our_fp32"] = (
                    results[f"{name}_bf16"]["ours"]["value"] / results[name]["ours"]["value"])
            if f"{name}_int8" in results and name in results:
                ours8, ours32 = results[f"{name}_int8"]["ours"], results[name]["ours"]
                summary[f"{name}_int8_over_our_fp32"] = ours8["value"] / ours32["value"]
                summary[f"{name}_int8_rss_over_our_fp32"] = ours8["rss_mb"] / ours32["rss_mb"]
    for preset in presets:
        if f"train_{preset}_bf16" in results and f"train_{preset}" in results:
            summary[f"train_{preset}_bf16_over_our_fp32"] = (
                results[f"train_{preset}_bf16"]["ours"]["value"] /
                results[f"train_{preset}"]["ours"]["value"])
    for name, b in results.items():
        if name.startswith("train"):
            summary[f"{name}_outside_products_ms"] = (
                b["ours"]["json"]["outside_products_seconds_per_step"] * 1e3)
    # MFU of each precision, against that precision's GEMM rate measured in the same process.
    main_model = "train_tiny" if args.quick else "train_base"
    for suffix in ("", "_bf16"):
        if main_model + suffix in results:
            summary[f"mfu_{main_model[6:]}{suffix}"] = (
                results[main_model + suffix]["ours"]["json"]["mfu"])
    if main_model in results:
        summary[f"rss_{main_model[6:]}_ratio"] = (results[main_model]["ours"]["rss_mb"] /
                                                  results[main_model]["torch"]["rss_mb"])
    if args.facts:
        summary.update(thread_facts(torch, args.threads))
    for k, v in summary.items():
        print(f"{k} {v:.3f}")


def thread_facts(torch, threads):
    """PyTorch's tiny training step under other thread settings than its fair one."""
    def train(env_changes, extra=()):
        env = {**os.environ, "OMP_WAIT_POLICY": "passive", **env_changes}
        j, _ = run_child([*torch, *extra, "train", "--preset", "tiny", "--steps", 3], env)
        print(f"  torch train_tiny {env_changes} {list(extra)}: {j['tokens_per_second']:.0f} "
              f"tok/s, sgemm {j['sgemm_gflops']:.0f} GFLOP/s", file=sys.stderr, flush=True)
        return j
    fair = train({})
    one_blas = train({}, ["--blas-threads", 1])
    spinning = train({"OMP_WAIT_POLICY": "active"})
    print(f"\nPyTorch, {threads} threads: OpenBLAS sized 1 at load gives sgemm "
          f"{one_blas['sgemm_gflops']:.0f} vs {fair['sgemm_gflops']:.0f} GFLOP/s; OpenMP spinning "
          f"beside OpenBLAS's pool: {spinning['tokens_per_second']:.0f} vs "
          f"{fair['tokens_per_second']:.0f} tok/s passive")
    return {"fact_sgemm_blas1_over_blas_n": one_blas["sgemm_gflops"] / fair["sgemm_gflops"],
            "fact_torch_spinning_over_passive":
                spinning["tokens_per_second"] / fair["tokens_per_second"]}


if __name__ == "__main__":
    main()
