"""The WMT 2014 recipe's two metrics: the paper's tokenised BLEU (tokenisation and compound
splitting checked by hand-worked cases) and sacreBLEU, both on newstest2014."""

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
])
def test_compound_splitting_by_hand(line, expected):
    assert paper_bleu.split_compounds(line) == expected


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
