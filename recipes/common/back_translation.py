"""Back-translation (Sennrich et al. 2016; by sampling, Edunov et al. 2018): a model of the other
direction writes a source for each target-language sentence of monolingual text, and the
synthetic pairs join the parallel ones in training. Standard library only; the sampling is done
by `transduce translate --sampling`.

Multi30k has no monolingual text of its own, so its recipe can hold out the last N pairs of
train (hold_out) and use their target side alone: the held-out sources are never read.
"""

import shutil
from pathlib import Path

from processes import write_lines


def read_lines(path):
    return Path(path).read_text(encoding="utf-8").splitlines()


def hold_out(data, dest, count, langs, splits, fail):
    """DEST holds DATA's splits with the last COUNT pairs of train taken out of it: train.LANG
    keeps the rest, heldout.LANG the COUNT taken (COUNT 0: train whole, no heldout). The other
    splits are copied as they are."""
    dest = Path(dest)
    dest.mkdir(parents=True, exist_ok=True)
    for lang in langs:
        lines = read_lines(Path(data) / f"train.{lang}")
        if count == 0:
            write_lines(dest / f"train.{lang}", lines)
            continue
        if not 0 < count < len(lines):
            fail(f"--hold-out {count}: train has {len(lines)} pairs; hold out between 1 and "
                 f"{len(lines) - 1}")
        write_lines(dest / f"train.{lang}", lines[:-count])
        write_lines(dest / f"heldout.{lang}", lines[-count:])
    for split in splits:
        if split != "train":
            for lang in langs:
                if Path(data).resolve() != dest.resolve():
                    shutil.copyfile(Path(data) / f"{split}.{lang}", dest / f"{split}.{lang}")
    return dest


def back_translate(stages, txg, model, monolingual, output, sampling, seed):
    """Stage "back-translate": OUTPUT gets one source for each line of MONOLINGUAL, drawn from
    MODEL (target -> source) with translate's SAMPLING ("topk:10", "topp:0.9", "none" for
    greedy search) and SEED."""
    stages.run([*txg, "translate", "-m", model, "--input", monolingual, "--output", output,
                "--sampling", sampling, "--seed", seed, "--beam", 1], "back-translate")


def add_synthetic_pairs(train_src, train_tgt, synthetic_src, monolingual):
    """Appends the synthetic pairs (SYNTHETIC_SRC's lines with MONOLINGUAL's) to the training
    files, leaving out those with an empty side; returns how many were added."""
    sources, targets = read_lines(synthetic_src), read_lines(monolingual)
    if len(sources) != len(targets):
        raise ValueError(f"{synthetic_src} has {len(sources)} lines for {len(targets)} in "
                         f"{monolingual}")
    pairs = [(s, t) for s, t in zip(sources, targets) if s.strip() and t.strip()]
    write_lines(train_src, read_lines(train_src) + [s for s, _ in pairs])
    write_lines(train_tgt, read_lines(train_tgt) + [t for _, t in pairs])
    return len(pairs)
