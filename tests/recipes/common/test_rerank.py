"""recipes/common/rerank.py: the n-best and score files it reads, and the choice it makes,
against hand-computed values."""

import json

import pytest
import rerank


def write(tmp_path, name, text):
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def test_reads_nbest_lists_in_order_with_empty_and_bar_texts(tmp_path):
    path = write(tmp_path, "n", "0 ||| a b ||| -0.5000\n0 |||  ||| -2.0000\n"
                                "1 ||| x ||| y ||| -1.2500\n")
    assert rerank.read_nbest(path, 2) == [[("a b", -0.5), ("", -2.0)], [("x ||| y", -1.25)]]


@pytest.mark.parametrize("text, message", [
    ("0 ||| a\n", "n:1: expected `LINE ||| TEXT ||| SCORE`"),
    ("0 ||| a ||| high\n", "n:1: expected"),
    ("0 ||| a ||| -1\n2 ||| b ||| -1\n", "n:2: line 2 is not one of the 2 inputs"),
    ("0 ||| a ||| -1\n", "n: no hypotheses for input line 1"),
])
def test_bad_nbest_lines_are_named(tmp_path, text, message):
    with pytest.raises(ValueError, match=message.replace("|", r"\|")):
        rerank.read_nbest(write(tmp_path, "n", text), 2)


def test_reverse_scores_are_per_piece_with_eos(tmp_path):
    lines = [{"log_prob": -6.0, "score": -6.0, "pieces": ["a", "b", "</s>"]},
             {"log_prob": -1.0, "score": -1.0, "pieces": ["</s>"]}]
    path = write(tmp_path, "r", "".join(json.dumps(o) + "\n" for o in lines))
    assert rerank.read_reverse_scores(path, 2) == [-2.0, -1.0]
    with pytest.raises(ValueError, match="r: 2 scores for 3 pairs"):
        rerank.read_reverse_scores(path, 3)
    with pytest.raises(ValueError, match="r:1: expected score-pairs' JSON"):
        rerank.read_reverse_scores(write(tmp_path, "r", '{"log_prob": -1}\n'), 1)


def test_choice_weighs_the_reverse_score():
    # Input 0: a (forward -1.0, reverse -2.0) against b (-1.2, -1.0): b wins once
    # -1.2 - w > -1.0 - 2w, that is for w > 0.2. Input 1 has one hypothesis.
    nbest = [[("a", -1.0), ("b", -1.2)], [("c", -3.0)]]
    reverse = [-2.0, -1.0, -5.0]
    assert rerank.choose(nbest, reverse, 0.0) == ["a", "c"]
    assert rerank.choose(nbest, reverse, 0.1) == ["a", "c"]
    assert rerank.choose(nbest, reverse, 0.3) == ["b", "c"]
    # At w = 0.2 both score -1.4 (to rounding): the beam's earlier one stays.
    assert rerank.choose([[("a", -1.0), ("b", -1.0)]], [-1.0, -1.0], 0.2) == ["a"]


def test_pairs_to_score_follow_the_nbest_order():
    nbest = [[("a", -1.0), ("b", -1.2)], [("c", -3.0)]]
    assert rerank.flatten(nbest, ["s0", "s1"]) == [("a", "s0"), ("b", "s0"), ("c", "s1")]
