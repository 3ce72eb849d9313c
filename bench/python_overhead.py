#!/usr/bin/python3
"""The Python module's overhead: transduce.Translator.translate against `transduce translate` on
the same model, input and settings, alternating, in one run.

    PYTHONPATH=build/python bench/python_overhead.py MODEL_DIR INPUT [--rounds 3] [--threads 2]
        [--beam 4] [--alpha 0.6] [--transduce build/transduce]

Each round times, in fresh processes: the command (start, load, translate, write) and a Python
process doing the same (import, Translator(...), translate(lines), write). It also times the
translate call alone, in the Python process, against the command's own whole run less its time
with an empty input (start and load). Prints each round and the medians; checks that both wrote
the same translations.
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]

PY_SIDE = r"""
import json, sys, time
t0 = time.perf_counter()
import transduce
tr = transduce.Translator(sys.argv[1], threads=int(sys.argv[3]))
lines = open(sys.argv[2], encoding="utf-8").read().splitlines()
t1 = time.perf_counter()
out = tr.translate(lines, beam=int(sys.argv[4]), alpha=float(sys.argv[5]))
t2 = time.perf_counter()
with open(sys.argv[6], "w", encoding="utf-8") as f:
    f.write("".join(t.text + "\n" for t in out))
t3 = time.perf_counter()
print(json.dumps({"load": t1 - t0, "translate": t2 - t1, "all": t3 - t0}))
"""


def timed(cmd, env):
    t0 = time.perf_counter()
    r = subprocess.run(cmd, capture_output=True, text=True, env=env)
    elapsed = time.perf_counter() - t0
    if r.returncode != 0:
        sys.exit(f"{' '.join(map(str, cmd))}: {r.stderr}")
    return elapsed, r.stdout


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("model")
    p.add_argument("input")
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--beam", type=int, default=4)
    p.add_argument("--alpha", type=float, default=0.6)
    p.add_argument("--transduce", default=str(REPO / "build" / "transduce"))
    a = p.parse_args()
    env = dict(os.environ, OMP_WAIT_POLICY=os.environ.get("OMP_WAIT_POLICY", "passive"))
    env.setdefault("PYTHONPATH", str(REPO / "build" / "python"))
    tmp = Path(tempfile.mkdtemp(prefix="python_overhead_"))
    empty = tmp / "empty"
    empty.write_text("")
    cli_all, cli_load, py_all, py_translate = [], [], [], []
    base = [a.transduce, "--threads", str(a.threads), "translate", "-m", a.model]
    search = ["--beam", str(a.beam), "--alpha", str(a.alpha)]
    for r in range(a.rounds):
        t, _ = timed([*base, *search, "--input", a.input, "--output", tmp / "cli.out"], env)
        cli_all.append(t)
        t, _ = timed([*base, *search, "--input", empty, "--output", tmp / "empty.out"], env)
        cli_load.append(t)
        _, out = timed([sys.executable, "-c", PY_SIDE, a.model, a.input, str(a.threads),
                        str(a.beam), str(a.alpha), tmp / "py.out"], env)
        py = json.loads(out)
        py_all.append(py["all"])
        py_translate.append(py["translate"])
        print(f"round {r + 1}: command {cli_all[-1]:.2f} s (start and load {cli_load[-1]:.2f} s); "
              f"Python {py['all']:.2f} s (translate {py['translate']:.2f} s)", flush=True)
        if (tmp / "cli.out").read_text() != (tmp / "py.out").read_text():
            sys.exit("the command and the module wrote different translations")
    med = statistics.median
    cli_translate = med(cli_all) - med(cli_load)
    print(f"lines {sum(1 for _ in open(a.input, encoding='utf-8'))}, threads {a.threads}, "
          f"beam {a.beam}, alpha {a.alpha}, rounds {a.rounds} (medians)")
    print(f"whole run: command {med(cli_all):.3f} s, Python {med(py_all):.3f} s, "
          f"ratio {med(py_all) / med(cli_all):.3f}")
    print(f"translating: command {cli_translate:.3f} s (whole less an empty input's run), "
          f"Translator.translate {med(py_translate):.3f} s, "
          f"ratio {med(py_translate) / cli_translate:.3f}")


if __name__ == "__main__":
    main()
