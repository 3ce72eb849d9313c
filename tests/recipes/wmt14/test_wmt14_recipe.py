"""recipes/wmt14/run end to end on a miniature release served over file://: every stage's output,
the cleaning counts, the SGML test set read back, a run killed in training and continued, and one
clear line for missing data."""

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from pytest_support import transduce_binary  # tests/support, put on the path by conftest.py

sys.path.insert(0, str(Path(__file__).resolve().parent))
import miniature  # noqa: E402  (tests/recipes/wmt14/)

REPO = Path(__file__).resolve().parents[3]
RUN = REPO / "recipes" / "wmt14" / "run"
STEPS = 60


def transduce():
    return str(transduce_binary())


def recipe_args(release, out, pair="en-de"):
    return [sys.executable, RUN, "--pair", pair, "--model", "mini", "--download", "--release",
            f"file://{release}", "--output", out, "--steps", STEPS, "--save-every", 10,
            "--batch-tokens", 400, "--vocab-size", 120, "--threads", 1,
            "--transduce", transduce()]


def run_recipe(args, **kw):
    return subprocess.run([str(a) for a in args], capture_output=True, text=True, timeout=600,
                          env=dict(os.environ, OMP_WAIT_POLICY="passive"), **kw)


def complete_checkpoints(model_dir):
    folder = model_dir / "checkpoints"
    if not folder.is_dir():
        return []
    return sorted(p.name for p in folder.iterdir() if re.fullmatch(r"step-\d+", p.name))


@pytest.fixture(scope="module")
def en_de_run(tmp_path_factory):
    """The recipe killed during training (its whole process group, the trainer too), then run
    again to the end. Returns (release data, OUT, the two runs' stderr, the steps at the kill)."""
    root = tmp_path_factory.mktemp("wmt14")
    release, out = root / "release", root / "out"
    made = miniature.build(release, "en-de")
    first = subprocess.Popen([str(a) for a in recipe_args(release, out)],
                             stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                             start_new_session=True, env=dict(os.environ,
                                                              OMP_WAIT_POLICY="passive"))
    deadline = time.time() + 300
    while not complete_checkpoints(out / "model") and first.poll() is None:
        assert time.time() < deadline, "no checkpoint within 5 minutes"
        time.sleep(0.01)
    os.killpg(first.pid, signal.SIGKILL)
    first_log = first.communicate()[0]
    assert first.returncode == -signal.SIGKILL, first_log
    killed_at = complete_checkpoints(out / "model")
    second = run_recipe(recipe_args(release, out))
    assert second.returncode == 0, second.stdout + second.stderr
    return made, out, first_log, second.stderr + second.stdout, killed_at


def test_the_killed_run_continues_where_it_stopped(en_de_run):
    _, out, first_log, second_log, killed_at = en_de_run
    assert killed_at, "the first run was killed before its first checkpoint"
    assert "downloading" in first_log
    # The second run fetches, extracts, cleans and learns the vocabulary no more: it resumes.
    assert "downloading" not in second_log
    assert " vocab --input" not in second_log
    assert "resuming" in second_log, second_log
    state = json.loads((out / "state.json").read_text())
    assert list(state["done"]) == ["fetch", "extract", "clean", "vocab", "train", "average",
                                   "translate-newstest2013", "translate-newstest2014"]
    log = [json.loads(x) for x in (out / "model" / "train_log.jsonl").read_text().splitlines()]
    # The mini model logs every 5 updates: each of them once, across the kill and the resume.
    steps = [r["step"] for r in log if r["kind"] == "train"]
    assert steps == list(range(5, STEPS + 1, 5)), f"the resumed log repeats or skips steps: {steps}"
    # A third run has nothing left to do but score and report again.
    third = run_recipe(recipe_args(out.parent / "release", out))
    assert third.returncode == 0, third.stderr
    assert "[wmt14]" not in third.stderr, third.stderr


def test_cleaning_counts_are_the_dirty_pairs_planted(en_de_run):
    made, out, *_ = en_de_run
    results = json.loads((out / "results.json").read_text())
    counts = results["cleaning"]["counts"]
    for name, lines in made["train"].items():
        assert counts[name] == {"read": len(lines), "kept": miniature.CLEAN_PAIRS,
                                **miniature.DIRTY}, name
    assert counts["total"]["kept"] == 3 * miniature.CLEAN_PAIRS
    # The kept pairs are the clean ones, corpus by corpus, in order.
    src = (out / "data" / "train.en").read_text(encoding="utf-8").splitlines()
    tgt = (out / "data" / "train.de").read_text(encoding="utf-8").splitlines()
    expected = [(miniature.sentence("en", k), miniature.sentence("de", k))
                for index in range(3) for k in miniature.clean_ids(index)]
    assert list(zip(src, tgt)) == expected


def test_every_stage_left_its_output(en_de_run):
    made, out, *_ = en_de_run
    raw = out / "raw"
    for lang in ("en", "de"):
        # The SGML test set read back: entities decoded, whitespace collapsed.
        segments = (raw / f"newstest2014.{lang}").read_text(encoding="utf-8").splitlines()
        assert segments == [" ".join(s.split()) for s in made["newstest2014"][lang]]
        assert (raw / f"newstest2013.{lang}").read_text(encoding="utf-8").splitlines() == \
            made["newstest2013"][lang]
    assert '& <b> "quoted" it\'s' in (raw / "newstest2014.en").read_text(encoding="utf-8")
    assert (out / "vocab" / "spm.model").is_file()
    assert (out / "model-averaged" / "model.safetensors").is_file()
    for split, count in (("newstest2013", 60), ("newstest2014", 60)):
        hyp = (out / f"{split}.de.hyp").read_text(encoding="utf-8").splitlines()
        assert len(hyp) == count
    results = json.loads((out / "results.json").read_text())
    assert results["train"]["steps"] == STEPS
    # 25,000 tokens an update from one rank's 400-token batches: 63 accumulated.
    assert results["train"]["accum"] == 63
    for split in ("newstest2013", "newstest2014"):
        t = results["tests"][split]
        assert 0 <= t["sacrebleu"] <= 100 and 0 <= t["paper_bleu"] <= 100
        assert t["sacrebleu_signature"].startswith("nrefs:1|case:mixed|eff:no|tok:13a")
    assert results["paper_bleu_newstest2014"] is None  # Table 2 has no miniature model
    assert "| newstest2014 |" in (out / "results.md").read_text()


def test_en_fr_reads_its_five_corpora(tmp_path):
    # English-French adds the UN corpus and the 10^9 corpus, gzipped files in a plain tar.
    made = miniature.build(tmp_path / "release", "en-fr")
    out = tmp_path / "out"
    args = recipe_args(tmp_path / "release", out, "en-fr")
    args[args.index("--steps") + 1] = 10
    r = run_recipe(args)
    assert r.returncode == 0, r.stderr
    results = json.loads((out / "results.json").read_text())
    assert list(results["cleaning"]["counts"]) == ["total", "europarl-v7", "commoncrawl",
                                                  "news-commentary-v9", "un", "giga-fren"]
    assert results["cleaning"]["counts"]["total"]["kept"] == 5 * miniature.CLEAN_PAIRS
    giga = (out / "raw" / "giga-fren.fr").read_bytes().splitlines()
    assert giga == [p[1] for p in made["train"]["giga-fren"]]
    assert len((out / "newstest2014.fr.hyp").read_text(encoding="utf-8").splitlines()) == 60


def test_new_training_limits_continue_a_finished_run(tmp_path):
    miniature.build(tmp_path / "release", "en-de")
    out = tmp_path / "out"
    args = recipe_args(tmp_path / "release", out)
    at = args.index("--steps") + 1
    args[at] = 10
    assert run_recipe(args).returncode == 0
    args[at] = 20
    r = run_recipe(args)
    assert r.returncode == 0, r.stderr
    assert "training goes on from the newest checkpoint" in r.stderr
    assert "resuming" in r.stderr
    results = json.loads((out / "results.json").read_text())
    assert results["train"]["steps"] == 20
    state = json.loads((out / "state.json").read_text())
    assert state["done"]["train"]["steps"] == 20 and "translate-newstest2014" in state["done"]


def test_two_ranks_from_a_hostfile(tmp_path):
    miniature.build(tmp_path / "release", "en-de")
    hosts = tmp_path / "hosts"
    hosts.write_text("localhost slots=2\n")
    out = tmp_path / "out"
    args = recipe_args(tmp_path / "release", out)
    args[args.index("--steps") + 1] = 10
    at = args.index("--batch-tokens")
    del args[at:at + 2]  # the default: 25,000 tokens shared out over the ranks
    r = run_recipe(args + ["--ranks", 2, "--hostfile", hosts])
    assert r.returncode == 0, r.stderr
    assert f"mpirun --hostfile {hosts}" in r.stderr
    assert "batches of 3125 tokens x 4 accumulated x 2 ranks" in r.stdout + r.stderr
    results = json.loads((out / "results.json").read_text())
    assert (results["train"]["ranks"], results["train"]["tokens_per_update"]) == (2, 25_000)


def test_updates_hold_25000_tokens_a_side_on_any_number_of_ranks():
    import importlib.machinery
    import importlib.util
    loader = importlib.machinery.SourceFileLoader("wmt14_run", str(RUN))
    run = importlib.util.module_from_spec(importlib.util.spec_from_loader("wmt14_run", loader))
    loader.exec_module(run)
    for ranks in (1, 2, 3, 8, 16, 64):
        accum, batch = run.update_shape(ranks, None, None)
        assert batch <= 4096
        assert 25_000 <= ranks * accum * batch < 25_000 + ranks * accum, (ranks, accum, batch)
        # No fewer batches of at most 4,096 tokens would do.
        assert accum == 1 or ranks * (accum - 1) * 4096 < 25_000
    assert run.update_shape(1, None, 400) == (63, 400)  # a given batch: the accumulation follows
    assert run.update_shape(2, 3, None) == (3, 4167)    # a given accumulation: the batch follows


def test_missing_data_is_one_clear_line(tmp_path):
    out = tmp_path / "out"
    r = run_recipe(recipe_args(tmp_path / "nowhere", out))
    assert r.returncode != 0
    lines = r.stderr.strip().splitlines()
    assert lines[-1].startswith("recipes/wmt14: stage 'fetch': file://"), r.stderr
    assert "could not be fetched" in lines[-1]
    # A release that is not a URL at all.
    args = recipe_args(tmp_path, tmp_path / "out3")
    args[args.index("--release") + 1] = "statmt.org"
    r = run_recipe(args)
    assert r.returncode != 0
    assert r.stderr.strip().splitlines()[-1].startswith(
        "recipes/wmt14: stage 'fetch': statmt.org/wmt13/"), r.stderr
    # --data naming a folder without the archives.
    args = recipe_args(tmp_path, tmp_path / "out2")
    at = args.index("--download")
    args[at:at + 3] = ["--data", tmp_path]
    r = run_recipe(args)
    assert r.returncode != 0
    assert "missing training-parallel-europarl-v7.tgz" in r.stderr.strip().splitlines()[-1]
