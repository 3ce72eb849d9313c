"""Cleaning parallel training text: what goes, and how many of each.

A pair is dropped, by the first rule it fails, when a side is not valid UTF-8, a side is empty
(after whitespace is collapsed), a side has more than `max_words` words, the longer side has more
than `max_ratio` times the words of the shorter, or the pair repeats one kept before. Kept pairs
are written with their whitespace collapsed (tabs, carriage returns and runs of spaces become one
space), one pair a line.
"""

import hashlib
import itertools
from pathlib import Path

REASONS = ("invalid_utf8", "empty", "too_long", "length_ratio", "duplicate")


class Cleaner:
    def __init__(self, max_words, max_ratio):
        self.max_words = max_words
        self.max_ratio = max_ratio
        self.seen = set()
        self.counts = {"read": 0, "kept": 0, **dict.fromkeys(REASONS, 0)}

    def verdict(self, src_bytes, tgt_bytes):
        """The cleaned (src, tgt) strings, or the reason the pair goes."""
        try:
            src = src_bytes.decode("utf-8")
            tgt = tgt_bytes.decode("utf-8")
        except UnicodeDecodeError:
            return "invalid_utf8"
        src_words, tgt_words = src.split(), tgt.split()
        if not src_words or not tgt_words:
            return "empty"
        if max(len(src_words), len(tgt_words)) > self.max_words:
            return "too_long"
        if max(len(src_words), len(tgt_words)) > self.max_ratio * min(len(src_words),
                                                                     len(tgt_words)):
            return "length_ratio"
        src, tgt = " ".join(src_words), " ".join(tgt_words)
        # 16 bytes of BLAKE2 per pair: a set of 36M of them fits in memory; a collision would
        # need ~2^64 pairs.
        key = hashlib.blake2b(f"{src}\t{tgt}".encode(), digest_size=16).digest()
        if key in self.seen:
            return "duplicate"
        self.seen.add(key)
        return src, tgt

    def add_corpus(self, src_path, tgt_path, src_out, tgt_out):
        """Cleans one corpus into the open output files; returns its own counts."""
        own = {"read": 0, "kept": 0, **dict.fromkeys(REASONS, 0)}
        with open(src_path, "rb") as fs, open(tgt_path, "rb") as ft:
            for s, t in zip_strict(fs, ft, src_path, tgt_path):
                own["read"] += 1
                v = self.verdict(s.rstrip(b"\r\n"), t.rstrip(b"\r\n"))
                if isinstance(v, str):
                    own[v] += 1
                    continue
                own["kept"] += 1
                src_out.write(v[0] + "\n")
                tgt_out.write(v[1] + "\n")
        for k, v in own.items():
            self.counts[k] += v
        return own


def zip_strict(a, b, a_name, b_name):
    """Lines of two files side by side; unequal lengths fail naming both files."""
    for number, (x, y) in enumerate(itertools.zip_longest(a, b), 1):
        if x is None or y is None:
            short = a_name if x is None else b_name
            raise RuntimeError(f"{short} ends at line {number - 1}, its other side goes on "
                               f"({a_name}, {b_name}): the corpus is not aligned")
        yield x, y


def clean(corpora, src_dest, tgt_dest, max_words, max_ratio):
    """Cleans [(name, src_path, tgt_path)] into src_dest and tgt_dest (each written aside and
    renamed when complete). Returns {"total": counts, name: counts, ...}."""
    cleaner = Cleaner(max_words, max_ratio)
    per_corpus = {}
    src_part, tgt_part = Path(f"{src_dest}.part"), Path(f"{tgt_dest}.part")
    with open(src_part, "w", encoding="utf-8") as so, open(tgt_part, "w", encoding="utf-8") as to:
        for name, src_path, tgt_path in corpora:
            per_corpus[name] = cleaner.add_corpus(src_path, tgt_path, so, to)
    src_part.replace(src_dest)
    tgt_part.replace(tgt_dest)
    return {"total": cleaner.counts, **per_corpus}
