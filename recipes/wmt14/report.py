"""results.json and results.md of a WMT 2014 run."""

import json

from machine import built_commit, machine
from processes import write_atomically
from training_log import clock, fmt

# Table 2 of the paper, newstest2014 BLEU (tokenised, compounds split).
PAPER = {("en-de", "base"): 27.3, ("en-de", "big"): 28.4, ("en-fr", "base"): 38.1,
         ("en-fr", "big"): 41.0}


def collect(pair, model, train, cleaning, vocab, tests, seconds, wall_seconds, env_notes,
            threads, out, binary):
    return {
        "pair": pair, "model": model, "paper_bleu_newstest2014": PAPER.get((pair, model)),
        "commit": built_commit(binary),
        "machine": machine(env_notes, threads), "cleaning": cleaning, "vocab": vocab,
        "train": train, "tests": tests,
        "seconds": {k: round(v, 1) for k, v in seconds.items()},
        "wall_seconds": round(wall_seconds, 1), "out": str(out),
    }


def markdown(r):
    lines = [f"# WMT 2014 {r['pair']}, {r['model']} model", ""]
    paper = r["paper_bleu_newstest2014"]
    lines += ["| set | sacreBLEU | chrF | tokenised BLEU, compounds split | the paper |",
              "|---|---|---|---|---|"]
    for split, t in r["tests"].items():
        lines.append(f"| {split} | {fmt(t['sacrebleu'])} | {fmt(t['chrf'])} | "
                     f"{fmt(t['paper_bleu'])} | "
                     f"{fmt(paper) if split == 'newstest2014' and paper else ''} |")
    lines += ["", f"sacreBLEU: `{r['tests']['newstest2014']['sacrebleu_signature']}`. "
              "Tokenised BLEU: recipes/wmt14/paper_bleu.py (Moses-style tokenisation, "
              "##AT## compound splitting, multi-bleu.perl's BLEU).", "", "## Training data", "",
              "| corpus | read | kept | invalid UTF-8 | empty | too long | length ratio | "
              "duplicate |", "|---|---|---|---|---|---|---|---|"]
    c = r["cleaning"]
    for name, n in c["counts"].items():
        lines.append(f"| {name} | {n['read']:,} | {n['kept']:,} | {n['invalid_utf8']:,} | "
                     f"{n['empty']:,} | {n['too_long']:,} | {n['length_ratio']:,} | "
                     f"{n['duplicate']:,} |")
    lines += ["", f"Dropped: more than {c['max_words']} words on a side, or a length ratio above "
              f"{c['max_ratio']}; duplicates after the first.", "", "## Training", ""]
    t = r["train"]
    lines += [f"- {t['steps']:,} updates, of {t['ranks']} rank(s) x {t['accum']} batch(es) x "
              f"{t['batch_tokens']:,} tokens a side ({t['tokens_per_update']:,}); dropout "
              f"{t['dropout']}, warmup {t['warmup']}, {t['precision']}",
              f"- shared vocabulary: {r['vocab']['size']:,} pieces, learnt on up to "
              f"{r['vocab']['sample_lines']:,} lines",
              f"- {clock(t['training_seconds'])} of training, {t['tokens_per_second']:,.0f} "
              f"tokens/s; last validation (newstest2013) perplexity "
              f"{fmt(t['final_valid_ppl'])}",
              f"- machine: {r['machine']['cpu']}, {r['machine']['threads']} thread(s); commit "
              f"{r['commit']}", ""]
    return "\n".join(lines)


def write(out, results):
    for name, text in (("results.json", json.dumps(results, indent=1) + "\n"),
                       ("results.md", markdown(results))):
        write_atomically(out / name, text)
