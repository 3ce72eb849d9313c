"""A miniature WMT 2014 release for the recipe's tests: the official archives' names, members and
formats (gzipped tars, a plain tar of gzipped files, the test set's SGML), a few thousand lines of
synthetic parallel text, and pairs every cleaning rule must drop, in known numbers."""

import gzip
import html
import io
import sys
import tarfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "recipes" / "wmt14"))
import corpora  # noqa: E402  (the recipe's own table of archives and members)

# What cleaning must drop from each corpus (the recipe's rules, by the first rule a pair fails).
DIRTY = {"invalid_utf8": 2, "empty": 3, "too_long": 2, "length_ratio": 4, "duplicate": 5}
CLEAN_PAIRS = 600  # per corpus

WORDS = {
    "en": "the a red blue small big house dog man woman child street car tree sees has walks "
          "near with under over and".split(),
    "de": "der ein rote blaue kleine große haus hund mann frau kind straße auto baum sieht hat "
          "geht nahe mit unter über und".split(),
    "fr": "le un rouge bleu petit grand maison chien homme femme enfant rue voiture arbre voit "
          "a marche près avec sous sur et".split(),
}


def sentence(lang, k, words=6):
    """The k-th synthetic sentence: a word-for-word parallel pattern, unique for each k."""
    vocab = WORDS[lang]
    picked = [vocab[(k * (i + 3) + i * i) % len(vocab)] for i in range(words)]
    return " ".join(picked) + f" {k} ."


def clean_ids(name_index):
    """The sentence numbers of the clean pairs of corpus `name_index`."""
    return range(name_index * 10_000, name_index * 10_000 + CLEAN_PAIRS)


def corpus_lines(name_index, src, tgt):
    """The pairs of one corpus (bytes), clean ones and DIRTY's in a fixed order."""
    pairs = [(sentence(src, k).encode(), sentence(tgt, k).encode()) for k in clean_ids(name_index)]
    dirty = []
    dirty += [(b"caf\xe9 au lait", sentence(tgt, 1).encode()),
              (sentence(src, 2).encode(), b"\xff\xfe broken")]
    dirty += [(b"", b"x"), (b"   \t", sentence(tgt, 3).encode()), (sentence(src, 4).encode(), b"")]
    dirty += [(" ".join(["word"] * 251).encode(), " ".join(["wort"] * 251).encode()),
              (b"short", " ".join(["lang"] * 300).encode())]
    dirty += [(b"one two", b"eins zwei drei vier"), (b"a b c d e f g", b"a b c d"),
              (b"x", b"y z"), (b"one two three", b"1 2 3 4 5")]
    # Repeats of kept pairs: exact, and with other whitespace (the same after collapsing).
    dirty += [pairs[0], pairs[1], pairs[1],
              (pairs[2][0].replace(b" ", b"  "), pairs[2][1]),
              (pairs[3][0] + b" \t", b"\t" + pairs[3][1])]
    # Dirty pairs spread through the clean ones.
    out = []
    step = len(pairs) // len(dirty)
    for i, pair in enumerate(pairs):
        out.append(pair)
        if i % step == step - 1 and dirty:
            out.append(dirty.pop(0))
    out += dirty
    return out


def sgml(segments, setid, lang, kind):
    """A WMT test-set SGML file, entities escaped as the official files escape them."""
    tag = "srcset" if kind == "src" else "refset"
    lines = [f'<{tag} setid="{setid}" srclang="any" trglang="{lang}">',
             '<doc sysid="ref" docid="mini-1" genre="news" origlang="en">', "<p>"]
    for i, s in enumerate(segments, 1):
        lines.append(f'<seg id="{i}">{html.escape(s, quote=True)}</seg>')
    lines += ["</p>", "</doc>", f"</{tag}>"]
    return "\n".join(lines) + "\n"


def test_segments(lang, count):
    segs = [sentence(lang, 90_000 + k) for k in range(count)]
    # What the SGML reader must decode: & < > " ' and a run of spaces inside a segment.
    segs[0] = segs[0].replace(" .", ' & <b> "quoted" it\'s .')
    segs[1] = segs[1].replace(" ", "  ", 1)
    return segs


def add(tar, member, data):
    info = tarfile.TarInfo(member)
    info.size = len(data)
    tar.addfile(info, io.BytesIO(data))


def build(root, pair, dev_lines=60, test_lines=60):
    """Writes the release under root (root/wmt13/..., root/wmt14/..., root/wmt10/...) and returns
    {"train": {corpus: [(src, tgt) bytes]}, "newstest2014": {lang: [segments]}}."""
    root = Path(root)
    src, tgt = pair.split("-")
    train = {}
    by_archive = {}
    for index, (name, archive, member) in enumerate(corpora.TRAINING[pair]):
        lines = corpus_lines(index, src, tgt)
        train[name] = lines
        for lang, side in ((src, 0), (tgt, 1)):
            data = b"".join(p[side] + b"\n" for p in lines)
            m = member.format(xx=lang)
            by_archive.setdefault(archive, []).append(
                (m, gzip.compress(data) if m.endswith(".gz") else data))
    dev = {lang: [sentence(lang, 80_000 + k) for k in range(dev_lines)] for lang in (src, tgt)}
    for lang, segs in dev.items():
        by_archive.setdefault(corpora.DEV[0], []).append(
            (corpora.DEV[1].format(xx=lang), "".join(s + "\n" for s in segs).encode()))
    test = {lang: test_segments(lang, test_lines) for lang in (src, tgt)}
    for lang, segs in test.items():
        member = corpora.test_member(pair, lang)
        by_archive.setdefault(corpora.TEST[0], []).append(
            (member, sgml(segs, "newstest2014", lang, "src" if lang == src else "ref").encode()))
    for archive, members in by_archive.items():
        path = root / archive
        path.parent.mkdir(parents=True, exist_ok=True)
        with tarfile.open(path, "w:gz" if archive.endswith(".tgz") else "w") as tar:
            for member, data in members:
                add(tar, member, data)
    return {"train": train, "newstest2013": dev, "newstest2014": test}
