"""The WMT 2014 recipe's two metrics: the paper's tokenised BLEU (tokenisation and compound
splitting checked by hand-worked cases, and line by line against the real tokenizer.perl's output
on newstest2013 and newstest2014) and sacreBLEU, both on newstest2014."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from pytest_support import transduce_binary  # tests/support, put on the path by conftest.py

REPO = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(REPO / "recipes" / "wmt14"))
import paper_bleu  # noqa: E402

DATA = Path(os.environ.get("TRANSDUCE_DATA_DIR", REPO.parent / "shared" / "data"))


def transduce():
    return str(transduce_binary())


@pytest.mark.parametrize("lang,line,expected", [
    # Punctuation splits off; a sentence-final period is split, an abbreviation's kept.
    ("en", "Mr. Smith paid $5,300.50 for it.", "Mr. Smith paid $ 5,300.50 for it ."),
    # Commas split off words but stay inside numbers; a number's final comma is split.
    ("en", "1,000 cats,dogs and 7,", "1,000 cats , dogs and 7 ,"),
    # English contractions split to the right, "1990's" too; XML characters escaped.
    ("en", "Don't say \"1990's\" & <b>", "Don &apos;t say &quot; 1990 &apos;s &quot; &amp; &lt; b &gt;"),
    # A run of periods is one token; a period inside an acronym stays.
    ("en", "Wait... the U.S. team [won]|", "Wait ... the U.S. team &#91; won &#93; &#124;"),
    # A period before a lowercase word stays; before a capital it splits unless an abbreviation.
    ("en", "at 5 p.m. today. Then No. 7 and end. Now", "at 5 p.m. today . Then No. 7 and end . Now"),
    # French contractions split to the left.
    ("fr", "L'homme d'affaires: « c'est fini ».", "L&apos; homme d&apos; affaires : « c&apos; est fini » ."),
    # German: every apostrophe splits; "Nr." keeps its period only before a number.
    ("de", "Geht's? Nr. 5 und Nr. Eins.", "Geht &apos; s ? Nr. 5 und Nr . Eins ."),
    # Whitespace and control characters.
    ("de", "  zwei\tWörter\x07  ", "zwei Wörter"),
    # German numbers of one or two digits keep their period (ordinals); longer ones split.
    ("de", "Am 22. September, nicht im Jahr 2013. Danach Seite 100. Ende",
     "Am 22. September , nicht im Jahr 2013 . Danach Seite 100 . Ende"),
    # German single letters, of either case, keep their period: "h." before a number, "n."
    # before a capital ("d." and "Chr." stay anyway: a lowercase word follows).
    ("de", "d. h. 21 Mio. Euro, z. B. Marella, 70 n. Chr. zerstört",
     "d. h. 21 Mio. Euro , z. B. Marella , 70 n. Chr. zerstört"),
    # German Roman numerals up to XX keep their period; XXI and English numerals split.
    ("de", "König Mswati III., die VI. Sitzung, Band XXI. Dann",
     "König Mswati III. , die VI. Sitzung , Band XXI . Dann"),
    ("en", "King Mswati III., is", "King Mswati III . , is"),
    # The line's last word is judged as any other: an abbreviation, a word with an inner period,
    # a German ordinal or an initial keeps its period there too; other words split.
    ("en", "He lives in the U.S.A.", "He lives in the U.S.A."),
    ("en", "from 10 a.m.", "from 10 a.m."),
    ("en", "told Amazon.com.", "told Amazon.com."),
    ("de", "Spenden dieser Art.", "Spenden dieser Art."),
    ("de", "zu Gate 24.", "zu Gate 24."),
    ("de", "E / S.", "E / S."),
    # Words that tokenizer.perl does not keep: English "etc.", "Jr.", German "geb.".
    ("en", "UV etc.), then Jr.", "UV etc . ) , then Jr ."),
    ("de", "Ingenieurs (geb. 1905)", "Ingenieurs ( geb . 1905 )"),
    # English titles in German text keep their period.
    ("de", "Mr. President, St. Josef und Mrs. Thatcher",
     "Mr. President , St. Josef und Mrs. Thatcher"),
    # An apostrophe at a line's very start or end has no neighbour for the English rules: it stays
    # on its word, where one in the middle splits.
    ("en", "'However, it's 'fine'", "&apos;However , it &apos;s &apos; fine&apos;"),
    # A final .' is split by a rule of its own, which leaves a trailing space, as Moses' does.
    ("en", "We are who we are.'", "We are who we are . &apos; "),
])
def test_tokenisation_by_hand(lang, line, expected):
    assert paper_bleu.tokenize(line, lang) == expected


@pytest.mark.parametrize("line,expected", [
    ("Osteuropa-Länder", "Osteuropa ##AT##-##AT## Länder"),
    # Matches do not overlap: "a-b-c" leaves its second hyphen, as the Perl expression does.
    ("a-b-c", "a ##AT##-##AT## b-c"),
    ("Rot-Grün-Koalition", "Rot ##AT##-##AT## Grün ##AT##-##AT## Koalition"),
    # A hyphen beside a space, or alone, stays.
    ("Mittel- und Ost - Europa -", "Mittel- und Ost - Europa -"),
    # Perl matches UTF-8 bytes: "à" (C3 A0) ends in a byte of its own after the first match took
    # "s-C3", so the second hyphen splits too.
    ("vis-à-vis", "vis ##AT##-##AT## à ##AT##-##AT## vis"),
])
def test_compound_splitting_by_hand(line, expected):
    assert paper_bleu.split_compounds(line) == expected


def test_prepare_file_reads_lines_as_perl_does(tmp_path):
    # A line ends at "\n" alone: the "\r" inside the first is whitespace, not a line break.
    src, dst = tmp_path / "in", tmp_path / "out"
    src.write_bytes("a\rb-c\nEnde.\n".encode())
    paper_bleu.prepare_file(src, dst, "de")
    assert dst.read_bytes() == b"a b ##AT##-##AT## c\nEnde .\n"


REFERENCE_SETS = [(name, lang) for name in ("newstest2013", "newstest2014")
                  for lang in ("en", "de")]


def read_lines(path):
    """A file's lines, split at line feeds alone; a missing file fails the test (never a skip)."""
    assert path.is_file(), f"{path}: missing; the shared data folder (TRANSDUCE_DATA_DIR, here " \
        f"{DATA}) must hold wmt14/ and moses-reference/"
    with open(path, encoding="utf-8", newline="") as f:
        return f.read().removesuffix("\n").split("\n")


def mismatches(path, ours, moses, shown=5):
    """What a failure says when our lines differ from Moses' in path: the file, how many lines
    differ, and the first `shown` of them side by side; empty when all agree."""
    if len(ours) != len(moses):
        return [f"{path}: {len(moses)} lines, ours {len(ours)}"]
    bad = [n for n, (a, b) in enumerate(zip(ours, moses), 1) if a != b]
    if not bad:
        return []
    out = [f"{path}: {len(bad)} of {len(moses)} lines differ; the first {min(shown, len(bad))}:"]
    for n in bad[:shown]:
        out += [f"  line {n}:", f"    ours:  {ours[n - 1]!r}", f"    Moses: {moses[n - 1]!r}"]
    return out


@pytest.mark.parametrize("name,lang", REFERENCE_SETS)
def test_equal_to_moses_on_every_reference_line(tmp_path, name, lang):
    # tokenizer.perl -l LANG -q's own output on newstest2013/2014 (moses-reference/), and that
    # with compounds split (tok-atat): tokenize() and the recipe's prepare_file() must give it
    # on every line.
    raw = DATA / "wmt14" / f"{name}.{lang}"
    tok = DATA / "moses-reference" / f"{name}.tok.{lang}"
    tok_atat = DATA / "moses-reference" / f"{name}.tok-atat.{lang}"
    tokenised = [paper_bleu.tokenize(line, lang) for line in read_lines(raw)]
    paper_bleu.prepare_file(raw, tmp_path / "prepared", lang)
    report = (mismatches(tok, tokenised, read_lines(tok)) +
              mismatches(tok_atat, read_lines(tmp_path / "prepared"), read_lines(tok_atat)))
    if report:
        pytest.fail("\n".join(report), pytrace=False)


def score(hyp, ref):
    out = subprocess.run([transduce(), "score", "--json", "--ref", ref, "--hyp", hyp,
                          *paper_bleu.SCORE_FLAGS], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


def test_paper_bleu_is_multi_bleu_on_prepared_text(tmp_path):
    # 4 tokens against 5 after tokenisation and splitting: "Ost-West ." -> "Ost ##AT##-##AT##
    # West ."; the hypothesis "Ost West ." matches unigrams 3/3, bigrams 1/2 ("West ."),
    # trigrams 0/1: no smoothing, so BLEU 0.
    ref, hyp = tmp_path / "ref", tmp_path / "hyp"
    prepared = paper_bleu.prepare("Ost-West.", "de")
    assert prepared == "Ost ##AT##-##AT## West ."
    ref.write_text(prepared + "\n")
    hyp.write_text(paper_bleu.prepare("Ost West.", "de") + "\n")
    s = score(hyp, ref)
    assert s["score"] == 0.0
    assert s["counts"][:3] == [3, 1, 0]
    assert "|tok:none|smooth:none|" in s["bleu_signature"]


@pytest.mark.parametrize("lang", ["en", "de"])
def test_newstest2014_references_score_100_against_themselves(tmp_path, lang):
    ref = DATA / "wmt14" / f"newstest2014.{lang}"
    assert ref.is_file(), f"no {ref}: the shared data is missing"
    prepared = tmp_path / "ref.tok"
    paper_bleu.prepare_file(ref, prepared, lang)
    lines = prepared.read_text(encoding="utf-8").splitlines()
    assert len(lines) == 3003
    assert all(line for line in lines)
    assert score(prepared, prepared)["score"] == pytest.approx(100.0)
    sacre = subprocess.run([transduce(), "score", "--ref", ref, "--hyp", ref, "--json"],
                           capture_output=True, text=True)
    assert sacre.returncode == 0, sacre.stderr
    assert json.loads(sacre.stdout)["score"] == pytest.approx(100.0)
    # Splitting compounds adds tokens: the prepared text has more of them than the tokenised.
    tokenised = sum(len(paper_bleu.tokenize(x, lang).split())
                    for x in ref.read_text(encoding="utf-8").splitlines())
    assert sum(len(x.split()) for x in lines) > tokenised
