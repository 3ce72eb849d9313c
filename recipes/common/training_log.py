"""A training run's log (MODEL_DIR/train_log.jsonl) read and summed up for a recipe's report, and
the number formats the reports share (standard library only)."""

import json
from pathlib import Path


def read_log(model_dir):
    """The records of MODEL_DIR/train_log.jsonl (docs/model_dir.md)."""
    path = Path(model_dir) / "train_log.jsonl"
    records = []
    if path.exists():
        for line in path.read_text().splitlines():
            if line.strip():
                records.append(json.loads(line))
    return records


def training_summary(records):
    """Steps, epochs, time, speed and losses of a training log, for a results.json."""
    train = [r for r in records if r["kind"] == "train"]
    valid = [r for r in records if r["kind"] == "valid"]
    tps = [r["tokens_per_second"] for r in train]
    return {
        "steps": train[-1]["step"] if train else 0,
        "epochs": train[-1]["epoch"] if train else 0,
        "training_seconds": records[-1]["elapsed_seconds"] if records else 0,
        "tokens_per_second": sum(tps) / len(tps) if tps else 0,
        "final_train_loss": train[-1]["loss"] if train else None,
        "final_valid_ppl": valid[-1]["ppl"] if valid else None,
        "best_valid_ppl": min(r["ppl"] for r in valid) if valid else None,
        "final_valid_bleu": valid[-1].get("bleu") if valid else None,
        "best_valid_bleu": max((r["bleu"] for r in valid if "bleu" in r), default=None),
    }


def clock(seconds):
    """H:MM:SS."""
    s = int(seconds)
    return f"{s // 3600}:{s // 60 % 60:02}:{s % 60:02}"


def fmt(x):
    """Two decimals, or n/a for None."""
    return "n/a" if x is None else f"{x:.2f}"
