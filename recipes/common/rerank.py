"""N-best reranking with a model of the reverse direction (standard library only).

A translation y of x is chosen among `transduce translate --nbest`'s hypotheses by

    forward score(y) + weight * log p(x | y) / (pieces of x + 1)

where the forward score is the beam's own length-normalised one and log p(x | y) is what a model
trained target -> source gives the source (`transduce score-pairs`), per piece so that the weight
means the same for short and long sentences. A hypothesis that drops or invents content explains
the source badly, which the forward model alone cannot see. Weight 0 keeps the beam's best.
"""

import json
from pathlib import Path

from processes import write_lines


def read_nbest(path, count):
    """`translate --nbest`'s `line ||| text ||| score` lines (line counted from 0) as COUNT lists of
    (text, score), best first; ValueError naming the line for anything else."""
    lists = [[] for _ in range(count)]
    with open(path, encoding="utf-8") as f:
        for n, raw in enumerate(f, 1):
            raw = raw.rstrip("\n")
            line, sep, rest = raw.partition(" ||| ")
            text, sep2, score = rest.rpartition(" ||| ")
            try:
                if not (sep and sep2):
                    raise ValueError
                k, value = int(line), float(score)
            except ValueError:
                raise ValueError(f"{path}:{n}: expected `LINE ||| TEXT ||| SCORE`, got {raw!r}")
            if not 0 <= k < count:
                raise ValueError(f"{path}:{n}: line {k} is not one of the {count} inputs")
            lists[k].append((text, value))
    for k, hyps in enumerate(lists):
        if not hyps:
            raise ValueError(f"{path}: no hypotheses for input line {k}")
    return lists


def read_reverse_scores(path, count):
    """`score-pairs --json` lines as COUNT log-probabilities per piece (EOS included)."""
    scores = []
    with open(path, encoding="utf-8") as f:
        for n, raw in enumerate(f, 1):
            try:
                o = json.loads(raw)
                scores.append(o["log_prob"] / len(o["pieces"]))
            except (ValueError, KeyError, TypeError, ZeroDivisionError):
                raise ValueError(f"{path}:{n}: expected score-pairs' JSON with log_prob and "
                                 f"pieces, got {raw.strip()!r}")
    if len(scores) != count:
        raise ValueError(f"{path}: {len(scores)} scores for {count} pairs")
    return scores


def flatten(nbest, sources):
    """The (hypothesis, source) pairs to score in reverse, in n-best order."""
    return [(text, src) for hyps, src in zip(nbest, sources) for text, _ in hyps]


def choose(nbest, reverse, weight):
    """The text of each input's best hypothesis by the combined score; REVERSE holds the per-piece
    reverse log-probabilities in flatten()'s order. Ties go to the beam's earlier hypothesis."""
    chosen, at = [], 0
    for hyps in nbest:
        scores = [score + weight * reverse[at + i] for i, (_, score) in enumerate(hyps)]
        best = max(range(len(hyps)), key=lambda i: (scores[i], -i))
        chosen.append(hyps[best][0])
        at += len(hyps)
    return chosen


def score_in_reverse(run, tx, reverse_model, nbest, sources, work, stage):
    """Runs `score-pairs` of the reverse model over every hypothesis (as its source) and its input
    (as its target) with files under WORK; RUN(cmd, stage) runs a command. Returns the per-piece
    log-probabilities in flatten()'s order."""
    pairs = flatten(nbest, sources)
    work = Path(work)
    hyp_file, src_file, out_file = (work.with_name(work.name + s)
                                    for s in (".pairs.src", ".pairs.tgt", ".reverse.jsonl"))
    write_lines(hyp_file, (h for h, _ in pairs))
    write_lines(src_file, (s for _, s in pairs))
    run([tx, "score-pairs", "-m", reverse_model, "--src", hyp_file, "--tgt", src_file,
         "--alpha", 0, "--json", "--output", out_file], stage)
    return read_reverse_scores(out_file, len(pairs))
