"""The Multi30k recipe's report: results.json, results.md and training.svg (standard library only).

Also usable alone to redraw a run's curve: python3 recipes/multi30k/report.py MODEL_DIR OUT.svg
"""

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "common"))
from machine import built_commit, machine, provenance_line  # noqa: E402
from mpi import update_batches  # noqa: E402
from plot import loss_and_perplexity_panels, panel, svg  # noqa: E402
from processes import write_atomically  # noqa: E402
from training_log import clock, fmt, read_log, training_summary  # noqa: E402


def configured_settings(prof, ranks=1):
    """The training settings the recipe gives `transduce train` for profile PROF on RANKS."""
    tokens, accum = update_batches(prof["batch_tokens"], prof.get("batch_parts", 1), ranks)
    return {
        "batch_tokens": tokens * accum * ranks, "warmup": prof["warmup"],
        "lr_scale": prof["lr_scale"], "lr_schedule": prof.get("lr_schedule", "inverse-sqrt"),
        "minutes_limit": prof.get("minutes"), "steps_limit": prof.get("steps"),
        "precision": prof.get("compute_type", "fp32"), "ema_decay": prof.get("ema_decay") or 0,
        "rdrop": prof.get("rdrop") or 0, "ranks": ranks,
        "batch_parts": accum * ranks,
    }


def single(x):
    """A float32 option as the user wrote it: 0.9995, not 0.9994999766349792."""
    return float(f"{x:.7g}")


def trained_settings(model_dir, prof, ranks=1):
    """The training settings the run's newest checkpoint saved: what it trained with, also when
    --decode-only reports a run made under other defaults or flags; PROF's where there is no
    checkpoint. The batch is the global one: each rank's times the ranks the checkpoint names
    (RANKS for checkpoints from before it named them). Options a checkpoint from
    before them lacks were then off (R-Drop, the moving average) or the only choice (the inverse
    square root schedule)."""
    states = sorted((Path(model_dir) / "checkpoints").glob("step-*/state.json"))
    if not states:
        return configured_settings(prof, ranks)
    state = json.loads(states[-1].read_text())
    o = state.get("options", {})
    ranks = state.get("ranks", ranks)
    return {
        "batch_tokens": o["batch_tokens"] * o.get("accum", 1) * ranks, "warmup": o["warmup"],
        "lr_scale": single(o["lr_scale"]), "lr_schedule": o.get("lr_schedule", "inverse-sqrt"),
        "minutes_limit": o.get("max_minutes") or None, "steps_limit": o.get("max_steps") or None,
        "precision": o.get("compute_type", o.get("precision", "fp32")),
        "ema_decay": single(o.get("ema_decay", 0)),
        "rdrop": single(o.get("rdrop", 0)), "ranks": ranks,
        "batch_parts": o.get("accum", 1) * ranks,
    }


def collect(out, pair, profile, prof, data, model_dir, grid, chosen, tests, timings,
            wall_seconds, env_notes, threads, binary, decode_only=False, members=None, ranks=1,
            reranking=None, hold_out=0, back_translation=None):
    config = json.loads((Path(model_dir) / "config.json").read_text())
    return {
        "pair": pair,
        "profile": profile,
        "data": str(data),
        # Pairs of train held out (their target side alone may have been back-translated), and
        # the back-translation that was added to training, if any.
        "hold_out": hold_out,
        "back_translation": back_translation,
        "commit": built_commit(binary),
        "machine": machine(env_notes, threads),
        # The trained model's, which --decode-only cannot change.
        "vocab": {"type": "bpe", "size": config["vocab_size"], "shared": True},
        "model": config,
        "training": {
            **trained_settings(model_dir, prof, ranks),
            **training_summary(read_log(model_dir)),
            "averaged_checkpoints": prof["average"],
        },
        "decoding": {"tuned_on": "val", "metric": "cased BLEU", "grid": grid,
                     "chosen": chosen, "reranking": reranking},
        "tests": tests,
        "decode_only": decode_only,
        "members": members or {"count": 1},
        "stage_seconds": {k: round(v, 1) for k, v in timings.items()},
        "wall_seconds": round(wall_seconds, 1),
    }


def write(out, results):
    out = Path(out)
    write_atomically(out / "results.json", json.dumps(results, indent=1) + "\n")
    write_atomically(out / "training.svg", svg_curves(read_log(out / "model")))
    write_atomically(out / "results.md", markdown(results))


def markdown(r):
    t, d, m = r["training"], r["decoding"], r["model"]
    lines = [
        f"# Multi30k {r['pair']} ({r['profile']} recipe)",
        "",
        provenance_line(r["machine"], r["commit"]),
        "",
        "| test set | BLEU (cased) | BLEU (lowercased) | chrF (cased) |",
        "|---|---|---|---|",
    ]
    for name, s in r["tests"].items():
        lines.append(f"| {name} | {s['bleu']:.2f} | {s['bleu_lowercase']:.2f} | {s['chrf']:.2f} |")
    first = next(iter(r["tests"].values()))
    lines += [
        "",
        f"BLEU signatures: `{first['bleu_signature']}`, `{first['bleu_lowercase_signature']}`; "
        f"chrF: `{first['chrf_signature']}`.",
        "",
        "## Training",
        "",
        f"- model: {m['layers']}+{m['layers']} layers, d_model {m['d_model']}, d_ff {m['d_ff']}, "
        f"{m['heads']} heads, dropout {m['dropout']:.3g} (attention {m['attention_dropout']:.3g}, "
        f"ReLU {m['relu_dropout']:.3g}"
        + (f", source words {m['src_word_dropout']:.3g}" if m.get("src_word_dropout") else "")
        + (f", target words {m['tgt_word_dropout']:.3g}" if m.get("tgt_word_dropout") else "")
        + f"), label smoothing {m['label_smoothing']:.3g}, "
        f"{m['norm']}-norm, "
        f"{m['positions']} positions, shared BPE vocabulary of {m['vocab_size']}",
        f"- batches of {t['batch_tokens']} tokens a side"
        + (f" in {t['batch_parts']} length-sorted parts" if t.get("batch_parts", 1) > 1 else "")
        + f", warmup {t['warmup']}, "
        f"learning-rate scale {t['lr_scale']:g} on equation 3"
        + (f", then a {t['lr_schedule']} fall to 0" if t.get("lr_schedule", "inverse-sqrt")
           != "inverse-sqrt" else "")
        + f"; GEMMs in {t.get('precision', 'fp32')}"
        + (f"; R-Drop, weight {t['rdrop']:g}" if t.get("rdrop") else ""),
        f"- {t['steps']} steps, {t['epochs']} epochs in {clock(t['training_seconds'])} of training, "
        f"{t['tokens_per_second']:.0f} tokens/s (source + target) on average"
        + (f", {t['ranks']} data-parallel MPI ranks" if t.get("ranks", 1) > 1 else ""),
        f"- validation perplexity: last {fmt(t['final_valid_ppl'])}, best {fmt(t['best_valid_ppl'])}",
        f"- validation BLEU (greedy): last {fmt(t.get('final_valid_bleu'))}, best "
        f"{fmt(t.get('best_valid_bleu'))}" + (f"; moving average of the weights, decay "
                                              f"{t['ema_decay']}" if t.get("ema_decay") else ""),
        f"- the last {t['averaged_checkpoints']} checkpoints averaged",
    ]
    if r.get("hold_out"):
        lines.append(f"- the last {r['hold_out']} pairs of train held out of training")
    bt = r.get("back_translation")
    if bt:
        lines.append(f"- {bt['pairs']} back-translated pairs added to training: sources drawn "
                     f"by `{bt['model']}` ({bt['sampling']}, seed {bt['seed']}) for "
                     f"`{bt['monolingual']}`")
    ms = r.get("members", {"count": 1})
    if ms["count"] > 1:
        lines.append(f"- {ms['count']} models trained at once (seeds "
                     f"{', '.join(map(str, ms['seeds']))}), the threads shared out; the figures "
                     f"above are the first's; the tests were translated with "
                     f"{', '.join(ms['translated_with'])}")
    lines += [
        "",
        "![training loss, validation perplexity and BLEU](training.svg)",
        "",
        "## Decoding, tuned on val (cased BLEU)",
        "",
        "| weights | beam | alpha | val BLEU | val chrF |",
        "|---|---|---|---|---|",
    ]
    for g in d["grid"]:
        mark = " **chosen**" if g is d["chosen"] or g == d["chosen"] else ""
        lines.append(f"| {g['weights']} | {g['beam']} | {g['alpha']} | {g['val_bleu']:.2f}{mark} "
                     f"| {g['val_chrf']:.2f} |")
    rr = d.get("reranking")
    if rr:
        lines += [
            "",
            f"## Reranking the n-best (beam {rr['beam']}, alpha {rr['alpha']}) with the reverse "
            f"model `{rr['reverse_model']}`, tuned on val",
            "",
            "| reverse weight | val BLEU | val chrF |",
            "|---|---|---|",
        ]
        for g in rr["grid"]:
            chosen = g["weight"] == rr["weight"] and not rr.get("weight_given")
            mark = " **chosen**" if chosen else ""
            lines.append(f"| {g['weight']:g} | {g['val_bleu']:.2f}{mark} | {g['val_chrf']:.2f} |")
        if rr["weight"] is None:
            lines += ["", "No weight beat the chosen setting on val: the tests were not reranked."]
        elif rr.get("weight_given"):
            lines += ["", f"The tests were reranked with the given weight {rr['weight']:g}."]
    lines += ["", "## Wall time", ""]
    if r.get("decode_only"):
        lines += ["Decoding was re-run (`--decode-only`) on the trained model; training time is "
                  "above.", ""]
    lines += ["| stage | seconds |", "|---|---|"]
    for stage, s in r["stage_seconds"].items():
        lines.append(f"| {stage} | {s:.1f} |")
    lines += [f"| all | {r['wall_seconds']:.1f} |", ""]
    return "\n".join(lines)


def svg_curves(records):
    """Panels over training time (minutes): training loss, validation perplexity, and validation
    BLEU when the log has it."""
    bleu = [(r["elapsed_seconds"] / 60, r["bleu"]) for r in records
            if r["kind"] == "valid" and "bleu" in r]
    if not bleu:
        return svg(loss_and_perplexity_panels(records, 760, 300, 2), 760, 300)
    width = 1140
    panels = loss_and_perplexity_panels(records, width, 300, 3)
    panels.append(panel(bleu, "validation BLEU (greedy, cased)", 2 * width / 3, width / 3, 300,
                        "#2ca02c"))
    return svg(panels, width, 300)


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit("usage: report.py MODEL_DIR OUT.svg")
    write_atomically(sys.argv[2], svg_curves(read_log(sys.argv[1])))
