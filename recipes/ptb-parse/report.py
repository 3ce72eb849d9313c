"""The parsing recipe's report: results.json, results.md and training.svg (standard library
only)."""

import json
from pathlib import Path

from machine import built_commit, machine, provenance_line
from plot import loss_and_perplexity_panels, panel, svg
from processes import write_atomically
from training_log import clock, fmt, read_log, training_summary


# The schemes whose parsers write part-of-speech tags (train --tree-scheme's choices).
TAGGED_SCHEMES = ("tagged", "tagged-after")
# How each scheme writes a word in the target.
TARGET_WORD = {"words": "as itself", "tagged": "as its tag and itself",
               "tagged-after": "as itself and its tag"}


def collect(r, curve, grid, best, chosen_weights, dev, test, timings, wall_seconds):
    """results.json's object. R is the run (recipes/ptb-parse/run's plan(): its profile, prof,
    trained settings, sources, model_dir, env_notes and args); DEV and TEST are each (EVALB
    scores, parse statistics); TIMINGS the seconds of each stage."""
    config = json.loads((Path(r.model_dir) / "config.json").read_text())
    (dev, dev_stats), (test, test_stats) = dev, test
    trained, prof = r.trained, r.prof

    def scores(s, stats):
        return {k: s[k] for k in ("recall", "precision", "f1", "complete_match", "sentences",
                                  "scored", "errors", "skipped", "tagging_accuracy")} | {
            "repaired_sentences": stats["repaired_sentences"],
            "repaired_share": stats["repaired_sentences"] / max(stats["sentences"], 1),
            "repairs": stats["repairs"],
            "sentences_per_second": stats["sentences"] / max(stats["seconds"], 1e-9)}

    return {
        "profile": r.profile,
        "data": {s: str(p) for s, p in r.sources.items()},
        "commit": built_commit(r.tx),
        "machine": machine(r.env_notes, r.args.threads),
        "vocab": {"type": "bpe", "size": trained["vocab"], "tree_symbols": True},
        "scheme": trained["scheme"],
        "model": config,
        "training": {
            **{k: v for k, v in trained.items() if k not in ("scheme", "vocab")},
            **training_summary(read_log(r.model_dir)),
            "averaged_checkpoints": prof["average"],
        },
        "curve": {"beam": prof["curve_beam"], "points": curve},
        "decoding": {"tuned_on": "dev", "metric": "EVALB F1", "grid": grid, "chosen": best,
                     "weights": chosen_weights, "constrained": True},
        "dev": scores(dev, dev_stats),
        "test": scores(test, test_stats),
        "decode_only": r.args.decode_only,
        "stage_seconds": {k: round(v, 1) for k, v in timings.items()},
        "wall_seconds": round(wall_seconds, 1),
    }


def write(out, r):
    """OUT/results.json, training.svg and results.md."""
    write_atomically(out / "results.json", json.dumps(r, indent=1) + "\n")
    width, height = 1140, 300
    curve = [(c["minutes"], c["dev_f1"]) for c in r["curve"]["points"]]
    panels = loss_and_perplexity_panels(read_log(out / "model"), width, height, 3)
    panels.append(panel(curve, f"dev F1 (checkpoints, beam {r['curve']['beam']})",
                        2 * width / 3, width / 3, height, "#2ca02c"))
    write_atomically(out / "training.svg", svg(panels, width, height))
    write_atomically(out / "results.md", markdown(r))


def markdown(r):
    t, d, m = r["training"], r["decoding"], r["model"]
    lines = [
        f"# Constituency parsing ({r['profile']} recipe)",
        "",
        f"Data: {', '.join(f'{s} {p}' for s, p in r['data'].items())}.",
        provenance_line(r["machine"], r["commit"]),
        "",
        "| set | F1 | recall | precision | complete match | tagging accuracy "
        "| sentences (scored, errors) | repaired |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for name in ("dev", "test"):
        s = r[name]
        lines.append(f"| {name} | {s['f1']:.2f} | {s['recall']:.2f} | {s['precision']:.2f} | "
                     f"{s['complete_match']:.2f} | {s.get('tagging_accuracy', 0):.2f} | "
                     f"{s['sentences']} ({s['scored']}, {s['errors']}) | "
                     f"{100 * s['repaired_share']:.1f}% |")
    tagged = r["scheme"] in TAGGED_SCHEMES
    # A run from before batch_parts was recorded made one batch on each rank.
    parts = t.get("batch_parts", t.get("ranks", 1))
    lines += [
        "",
        "F1 is `transduce evalb` (EVALB's rules with COLLINS.prm) on the parser's output as it is"
        + (": the parser writes its own part-of-speech tags, and EVALB deletes punctuation by "
           "each tree's own tags." if tagged else
           ", with the gold tags spliced in (`--gold-tags`): this parser writes every tag XX.")
        + " Decoding is constrained to well-formed trees over the input words, so no output "
        "needs repair.",
        "",
        "## Training",
        "",
        f"- target: brackets with each word {TARGET_WORD.get(r['scheme'], 'as XX')}"
        f" (scheme `{r['scheme']}`)",
        f"- model: {m['layers']}+{m['layers']} layers ({m.get('norm', 'post')}-norm), "
        f"d_model {m['d_model']}, d_ff {m['d_ff']}, "
        f"{m['heads']} heads, dropout {m['dropout']:.3g} (attention {m['attention_dropout']:.3g}, "
        f"ReLU {m['relu_dropout']:.3g}), label smoothing {m['label_smoothing']:.3g}, "
        f"BPE vocabulary of {m['vocab_size']} with the tree symbols; GEMMs in "
        f"{t.get('compute_type', 'fp32')}",
        f"- batches of {t['batch_tokens']} tokens a side"
        + (f" in {parts} length-sorted parts" if parts > 1 else "")
        + (f" on {t['ranks']} data-parallel ranks" if t.get("ranks", 1) > 1 else "")
        + f", warmup {t['warmup']}, learning-rate scale {t['lr_scale']} on equation 3"
        + (f", then falling to 0 at the end of training (`--lr-schedule {t['lr_schedule']}`)"
           if t.get("lr_schedule", "inverse-sqrt") != "inverse-sqrt" else "")
        + (", every constituent of two or more words also trained on as a sentence (`--subtrees`)"
           if t.get("subtrees") else "")
        + (f", {t['word_swaps']} copies of the training trees with open-class words swapped for"
           f" others of the same tag at rate {t['word_swap_rate']} (`--word-swaps`)"
           if t.get("word_swaps") else ""),
        f"- {t['steps']} steps, {t['epochs']} epochs in {clock(t['training_seconds'])} of training, "
        f"{t['tokens_per_second']:.0f} tokens/s (source + target) on average",
        f"- validation perplexity: last {fmt(t['final_valid_ppl'])}, best {fmt(t['best_valid_ppl'])}",
        (f"- decoded with the average of the last {t['averaged_checkpoints']} checkpoints"
         if r["decoding"]["weights"] == "averaged" else
         f"- decoded with the last weights (they scored better on dev than the average of the last"
         f" {t['averaged_checkpoints']} checkpoints)"),
        "",
        "![training loss, validation perplexity and dev F1](training.svg)",
        "",
        "| step | minutes | dev F1 (beam {}) |".format(r["curve"]["beam"]),
        "|---|---|---|",
    ]
    for c in r["curve"]["points"]:
        lines.append(f"| {c['step']} | {c['minutes']:.1f} | {c['dev_f1']:.2f} |")
    lines += [
        "",
        "## Decoding, chosen on dev (F1)",
        "",
        "| weights | beam | alpha | bracket bonus | dev F1 | recall | precision | complete match "
        "| sentences/s |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for g in d["grid"]:
        mark = " **chosen**" if g == d["chosen"] else ""
        lines.append(f"| {g['weights']} | {g['beam']} | {g['alpha']} | {g['bracket_bonus']} | "
                     f"{g['dev_f1']:.2f}{mark} | {g['dev_recall']:.2f} | "
                     f"{g['dev_precision']:.2f} | {g['dev_complete_match']:.2f} | "
                     f"{g['sentences_per_second']:.2f} |")
    lines += ["", "## Wall time", ""]
    if r.get("decode_only"):
        lines += ["Decoding was re-run (`--decode-only`) on the trained model.", ""]
    lines += ["| stage | seconds |", "|---|---|"]
    for stage, s in r["stage_seconds"].items():
        lines.append(f"| {stage} | {s:.1f} |")
    lines += [f"| all | {r['wall_seconds']:.1f} |", ""]
    return "\n".join(lines)
