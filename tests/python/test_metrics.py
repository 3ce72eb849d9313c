"""transduce.bleu and transduce.chrf against `transduce score` (itself equal to sacreBLEU) on the
same files: scores, statistics and signatures; lowercasing, tokenizers, several references; and
their errors."""

import json

import pytest

import transduce
from conftest import read_lines, run


@pytest.fixture(scope="module")
def hyps(model, transduce_bin):
    """A system's output on val: the session model's greedy translations."""
    path = model / "val.hyp"
    run(transduce_bin, "--threads", 2, "translate", "-m", model / "model", "--input",
        model / "val.en", "--output", path, "--beam", 1)
    return path


def cli_score(binary, hyp, refs, *flags):
    args = ["score", "--hyp", hyp, "--json", *flags]
    for r in refs:
        args += ["--ref", r]
    return json.loads(run(binary, *args))


@pytest.mark.parametrize("lowercase,tokenize", [(False, "13a"), (True, "13a"), (False, "intl"),
                                                (False, "none")])
def test_scores_equal_the_command_line(model, transduce_bin, hyps, lowercase, tokenize):
    flags = ["--tokenize", tokenize] + (["--lowercase"] if lowercase else [])
    cli = cli_score(transduce_bin, hyps, [model / "val.de"], *flags)
    h, r = read_lines(hyps), read_lines(model / "val.de")
    b = transduce.bleu(h, [r], lowercase=lowercase, tokenize=tokenize)
    assert b.score == pytest.approx(cli["score"], abs=1e-9) and b.score > 0
    assert b.counts == cli["counts"] and b.totals == cli["totals"]
    assert b.precisions == pytest.approx(cli["precisions"], abs=1e-9)
    assert (b.bp, b.ratio, b.sys_len, b.ref_len) == \
        pytest.approx((cli["bp"], cli["ratio"], cli["hyp_len"], cli["ref_len"]), abs=1e-9)
    assert b.signature == cli["bleu_signature"] and str(b) == cli["bleu"]
    c = transduce.chrf(h, [r], lowercase=lowercase)
    assert c.score == pytest.approx(cli["chrf"], abs=1e-9)
    assert c.signature == cli["chrf_signature"] and c.name == cli["chrf_name"] == "chrF2"
    # One stream may be given without the outer list, as a plain list of lines.
    assert transduce.bleu(h, r, lowercase=lowercase, tokenize=tokenize).score == b.score


def test_several_references_and_empty_lines(model, transduce_bin, hyps, tmp_path):
    h = read_lines(hyps)
    second = read_lines(model / "val.en")  # another (poor) reference stream
    second[3] = ""  # an empty reference line is left out of that segment: nrefs:var
    (tmp_path / "second").write_text("\n".join(second) + "\n", encoding="utf-8")
    cli = cli_score(transduce_bin, hyps, [model / "val.de", tmp_path / "second"])
    b = transduce.bleu(h, [read_lines(model / "val.de"), second])
    c = transduce.chrf(h, [read_lines(model / "val.de"), second])
    assert b.score == pytest.approx(cli["score"], abs=1e-9)
    assert b.signature == cli["bleu_signature"] and "nrefs:var" in b.signature
    assert c.score == pytest.approx(cli["chrf"], abs=1e-9)


def test_trailing_whitespace_is_stripped_as_files_are_read():
    refs = ["The dog runs on the beach .", "A man sleeps ."]
    assert transduce.bleu(["The dog runs on the beach .  ", "A man sleeps .\t"], [refs]).score \
        == pytest.approx(100.0)


def test_bad_input_raises():
    with pytest.raises(transduce.Error, match="no hypotheses"):
        transduce.bleu([], [[]])
    with pytest.raises(transduce.Error, match="no hypotheses"):
        transduce.chrf([], [])
    with pytest.raises(transduce.Error, match="2 hypotheses but reference stream 1 has 1"):
        transduce.bleu(["a", "b"], [["a"]])
    with pytest.raises(transduce.Error, match="empty"):
        transduce.bleu(["a"], [[""]])
    with pytest.raises(transduce.Error, match="tokenizer|tok"):
        transduce.bleu(["a"], [["a"]], tokenize="moses")
    with pytest.raises(TypeError):
        transduce.bleu("a b c", [["a b c"]])
    with pytest.raises((TypeError, RuntimeError)):
        transduce.chrf(["a"], [[1]])
