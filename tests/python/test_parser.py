"""transduce.Parser and transduce.parse against `transduce parse` on the same parser: identical
trees under the tree constraint and without it (with the same repairs), the parse.json defaults,
the result types, and errors."""

import json

import pytest

import transduce
from conftest import read_lines, run, shared_data


@pytest.fixture(scope="module")
def parser_dir(tmp_path_factory, transduce_bin):
    """A 1+1-layer d_model 64 tagged parser trained for 80 updates on 300 trees of the Penn
    Treebank sample: its trees are poor, which does not matter for comparing with the command
    line.
    Returns the folder holding model/ and dev.words (40 sentences)."""
    data = shared_data() / "ptb-sample"
    assert (data / "train.trees").is_file(), f"{data}: the Penn Treebank sample is missing"
    root = tmp_path_factory.mktemp("parser")
    trees = read_lines(data / "train.trees")
    (root / "train.trees").write_text("\n".join(trees[:300]) + "\n", encoding="utf-8")
    (root / "valid.trees").write_text("\n".join(trees[300:340]) + "\n", encoding="utf-8")
    words = read_lines(data / "dev.words")[:40]
    (root / "dev.words").write_text("\n".join(words) + "\n", encoding="utf-8")
    run(transduce_bin, "vocab", "--trees", root / "train.trees", "--vocab-size", 1000, "--output",
        root / "vocab")
    run(transduce_bin, "--threads", 2, "train", "--trees", root / "train.trees", "--valid-trees",
        root / "valid.trees", "--vocab", root / "vocab", "--output", root / "model", "--layers", 1,
        "--d-model", 64, "--d-ff", 128, "--heads", 4, "--batch-tokens", 3000, "--max-steps", 80,
        "--log-every", 20, "--tree-scheme", "tagged")
    return root


@pytest.fixture(scope="module")
def parser(parser_dir):
    return transduce.Parser(str(parser_dir / "model"), threads=2)


@pytest.mark.parametrize("flags,options", [
    (["--beam", 4], {"beam": 4}),
    (["--beam", 3, "--alpha", 1.0, "--bracket-bonus", 0.5], {"beam": 3, "alpha": 1.0,
                                                             "bracket_bonus": 0.5}),
    (["--beam", 4, "--free"], {"beam": 4, "free": True}),
    (["--beam", 4, "--any-tag"], {"beam": 4, "any_tag": True}),
])
def test_trees_equal_the_command_line(parser_dir, transduce_bin, parser, flags, options):
    sentences = read_lines(parser_dir / "dev.words")
    stats = parser_dir / "stats.json"
    cli = run(transduce_bin, "--threads", 2, "parse", "-m", parser_dir / "model", "--input",
              parser_dir / "dev.words", "--stats", stats, *flags).splitlines()
    ours = parser.parse(sentences, **options)
    assert len(ours) == len(sentences) == len(cli)
    assert [p.tree for p in ours] == cli
    assert all(p.tree.startswith("(TOP ") for p in ours)
    # The trees are over the sentence's words, in order.
    for p, s in zip(ours, sentences):
        leaves = [t.rstrip(")") for t in p.tree.split() if not t.startswith("(")]
        assert len(leaves) == len(s.split())
    # The same repairs as the command counts (none under the constraint).
    want = json.loads(stats.read_text())["repairs"]
    for name in ("unclosed", "unopened", "mismatched", "extra_slots", "missing_words", "empty"):
        assert sum(getattr(p.repairs, name) for p in ours) == want[name], name
    if not options.get("free"):
        assert all(p.repairs.total == 0 for p in ours)


def test_parse_json_gives_the_defaults_and_parse_is_one_call(parser_dir, parser):
    settings = json.loads((parser_dir / "model" / "parse.json").read_text())["decoding"]
    assert parser.beam == settings["beam"] == 21
    assert parser.scheme == "tagged"
    assert parser.alpha == pytest.approx(settings["alpha"])
    sentences = read_lines(parser_dir / "dev.words")[:8] + ["", "   "]
    default = parser.parse(sentences)
    assert [p.tree for p in default] == [p.tree for p in parser.parse(sentences, beam=21,
                                                                       alpha=settings["alpha"])]
    once = transduce.parse(str(parser_dir / "model"), sentences, threads=2)
    assert [p.tree for p in once] == [p.tree for p in default]
    assert [p.score for p in once] == [p.score for p in default]
    p = default[0]
    assert isinstance(p, transduce.Parse) and isinstance(p.repairs, transduce.Repairs)
    assert isinstance(p.score, float) and p.score < 0
    assert p.tokens and all(isinstance(t, int) for t in p.tokens)
    # Empty and blank sentences get an empty tree.
    assert default[-1].tree == default[-2].tree == ""


def test_bad_input_raises_the_command_lines_error(parser_dir, parser, model):
    with pytest.raises(transduce.Error, match="nowhere"):
        transduce.Parser(str(parser_dir / "nowhere"))
    with pytest.raises(transduce.Error, match="not a parser"):
        transduce.Parser(str(model / "model"))
    with pytest.raises(transduce.Error, match="word_score"):
        parser.parse(["a b"], word_score="letters")
    with pytest.raises(transduce.Error, match="beam"):
        parser.parse(["a b"], beam=0)
    with pytest.raises(TypeError):
        parser.parse("not a list of sentences")
    with pytest.raises(TypeError):
        parser.parse([1, 2])
