"""transduce.Translator against `transduce translate` and `transduce score-pairs` on the same
model: identical translations, n-best lists, scores and attention weights; its arrays' shapes and
types; its errors; and its behaviour under several Python threads."""

import ast
import json
import threading
import time
from pathlib import Path

import numpy as np
import pytest

import transduce
from conftest import read_lines, run


@pytest.fixture(scope="module")
def translator(model):
    return transduce.Translator(str(model / "model"), threads=2)


@pytest.mark.parametrize("beam,alpha", [(4, 0.6), (1, 0.0), (5, 1.5)])
def test_translations_equal_the_command_line(model, transduce_bin, translator, beam, alpha):
    src = read_lines(model / "val.en")
    cli = run(transduce_bin, "--threads", 2, "translate", "-m", model / "model", "--input",
              model / "val.en", "--beam", beam, "--alpha", alpha).splitlines()
    ours = translator.translate(src, beam=beam, alpha=alpha)
    assert len(ours) == len(src) == len(cli)
    assert [t.text for t in ours] == cli
    # The model's translations are long and varied, not one string repeated.
    assert len(set(cli)) > 50


def test_nbest_equals_the_command_line(model, transduce_bin, translator):
    src = read_lines(model / "val.en")[:60]
    (model / "val60.en").write_text("\n".join(src) + "\n", encoding="utf-8")
    cli = run(transduce_bin, "--threads", 2, "translate", "-m", model / "model", "--input",
              model / "val60.en", "--beam", 4, "--nbest", 3).splitlines()
    ours = translator.translate(src, beam=4, nbest=3)
    flat = []
    for i, hyps in enumerate(ours):
        assert 1 <= len(hyps) <= 3
        assert [h.score for h in hyps] == sorted((h.score for h in hyps), reverse=True)
        flat += [f"{i} ||| {h.text} ||| {h.score:.4f}" for h in hyps]
    assert flat == cli


def test_tokens_pieces_and_text_agree(translator):
    tok = translator.tokenizer
    for t in translator.translate(["A man in a blue shirt is standing on a ladder."] * 2):
        assert t.tokens and all(isinstance(i, int) for i in t.tokens)
        assert t.pieces == [tok.piece(i) for i in t.tokens]
        assert t.text == tok.decode(t.tokens)
        assert t.attention is None and t.score < 0


def test_translate_pieces_equals_translate(model, translator):
    src = read_lines(model / "val.en")[:50]
    tok = translator.tokenizer
    by_text = translator.translate(src, beam=3)
    by_pieces = translator.translate_pieces([tok.encode(s) for s in src], beam=3)
    assert [(t.text, t.tokens, t.score) for t in by_text] == \
        [(t.text, t.tokens, t.score) for t in by_pieces]


def test_attention_equals_the_command_line(model, transduce_bin, translator):
    src = read_lines(model / "val.en")[:5]
    (model / "val5.en").write_text("\n".join(src) + "\n", encoding="utf-8")
    out = model / "attention.json"
    run(transduce_bin, "--threads", 2, "translate", "-m", model / "model", "--input",
        model / "val5.en", "--attention", out)
    cli = json.loads(out.read_text(encoding="utf-8"))["sentences"]
    config = translator.config
    layers, heads = config["layers"], config["heads"]
    for t, c in zip(translator.translate(src, return_attention=True), cli):
        a = t.attention
        ls, lt = len(a.source_ids), len(t.tokens) + 1
        assert a.source_ids == translator.tokenizer.encode(c["source"]) + [2]
        assert a.target_ids == t.tokens + [2]
        for name, shape in (("encoder_self", (layers, heads, ls, ls)),
                            ("decoder_self", (layers, heads, lt, lt)),
                            ("cross", (layers, heads, lt, ls))):
            array = getattr(a, name)
            assert array.dtype == np.float32 and array.shape == shape
            np.testing.assert_allclose(array.sum(axis=-1), 1.0, atol=1e-5)
            np.testing.assert_allclose(array, np.array(c["attention"][name]), atol=2e-6)
        assert np.all(np.triu(a.decoder_self, k=1) == 0)
        assert a.target_pieces == c["attention"]["target_tokens"]
        assert a.source_pieces == c["attention"]["source_tokens"]
        assert a.target_input_pieces == c["attention"]["target_input_tokens"]


def test_scores_equal_score_pairs(model, transduce_bin, translator):
    src = read_lines(model / "val.en")[:80]
    tgt = read_lines(model / "val.de")[:80]
    for name, lines in (("s.en", src), ("s.de", tgt)):
        (model / name).write_text("\n".join(lines) + "\n", encoding="utf-8")
    cli = [json.loads(line) for line in run(
        transduce_bin, "--threads", 2, "score-pairs", "-m", model / "model", "--src",
        model / "s.en", "--tgt", model / "s.de", "--alpha", 1.0, "--json").splitlines()]
    ours = translator.score(src, tgt, alpha=1.0)
    assert len(ours) == len(cli) == 80
    for s, c in zip(ours, cli):
        assert s.token_log_probs.dtype == np.float32
        assert s.pieces == c["pieces"]
        assert s.log_prob == pytest.approx(c["log_prob"], rel=1e-6, abs=1e-5)
        assert s.score == pytest.approx(c["score"], rel=1e-6, abs=1e-5)
        np.testing.assert_allclose(s.token_log_probs, c["token_log_probs"], rtol=1e-6, atol=1e-6)
        assert s.log_prob == pytest.approx(float(s.token_log_probs.sum()), rel=1e-5)


def test_scores_of_its_own_translations_equal_the_search_scores(model, translator):
    src = read_lines(model / "val.en")[:40]
    found = translator.translate(src, beam=4, alpha=0.8)
    scored = translator.score(src, [t.text for t in found], alpha=0.8)
    # The text re-encodes to the same pieces for all but rare detokenisation cases: those are
    # compared, and they must be nearly all of them.
    compared = 0
    for t, s in zip(found, scored):
        if translator.tokenizer.encode(t.text) == t.tokens:
            assert s.score == pytest.approx(t.score, abs=2e-4)
            assert np.allclose(s.token_log_probs, t.token_log_probs, atol=2e-4)
            compared += 1
    assert compared >= 0.9 * len(src), f"only {compared} of {len(src)} translations re-encode"


def test_empty_input_and_empty_lines(translator):
    assert translator.translate([]) == []
    out = translator.translate(["", "A dog.", "   "])
    assert [t.text for t in out[::2]] == ["", ""] and out[1].text != ""


def test_bad_input_raises(model, translator):
    with pytest.raises(transduce.Error, match="no-such-model"):
        transduce.Translator(str(model / "no-such-model"))
    with pytest.raises(transduce.Error, match="int4|compute"):
        transduce.Translator(str(model / "model"), compute_type="int4")
    with pytest.raises(TypeError):
        translator.translate("a single string, not a list")
    with pytest.raises(TypeError):
        translator.translate([1, 2, 3])
    with pytest.raises(transduce.Error, match="nbest"):
        translator.translate(["a dog"], beam=2, nbest=3)
    with pytest.raises(transduce.Error, match="beam"):
        translator.translate(["a dog"], beam=0)
    with pytest.raises(transduce.Error, match="sources and"):
        translator.score(["a dog"], [])
    long = " ".join(["dog"] * 2000)
    with pytest.raises(transduce.Error, match=r"targets\[0\]: .* pieces, more than"):
        translator.score(["a dog"], [long])
    assert isinstance(transduce.Error("x"), RuntimeError)


def test_long_inputs_are_refused_or_cut(translator):
    """max_input_len and long_input, as translate's flags: a text over the limit (else the
    model's) raises naming it, or is cut to its first pieces with a warning, translating as
    those pieces do; score cuts sources the same way and never a target."""
    tok = translator.tokenizer
    long = " ".join(["dog"] * 2000)
    with pytest.raises(transduce.Error, match=r"line 2: \d+ subword pieces; the model takes at most"):
        translator.translate(["a dog", long], beam=1, max_len_b=5)
    with pytest.warns(UserWarning, match=r"line 2: \d+ subword pieces, cut to the first"):
        translator.translate(["a dog", long], beam=1, max_len_b=5, long_input="truncate")
    text = "a black dog runs along the beach with a ball in its mouth"
    pieces = tok.encode(text)
    assert len(pieces) > 6
    with pytest.raises(transduce.Error, match=r"line 1: .* more than max_input_len 6"):
        translator.translate([text], beam=2, max_input_len=6)
    with pytest.warns(UserWarning, match="cut to the first 6"):
        cut = translator.translate([text], beam=2, max_input_len=6, long_input="truncate")
    assert cut[0].text == translator.translate_pieces([pieces[:6]], beam=2)[0].text
    assert cut[0].score == translator.translate_pieces([pieces[:6]], beam=2)[0].score
    with pytest.raises(transduce.Error, match=r"sources\[0\]: .* more than max_input_len 6"):
        translator.translate_pieces([pieces], beam=2, max_input_len=6)
    assert (translator.translate_pieces([pieces], beam=2, max_input_len=6, long_input="truncate")[0]
            .score == cut[0].score)
    with pytest.raises(transduce.Error, match="long_input"):
        translator.translate([text], long_input="cut")
    # Two sources sharing their first 6 pieces score alike once cut, and not whole.
    other = " ".join(text.split()[:6]) + " under a tree"
    assert tok.encode(other)[:6] == pieces[:6]
    with pytest.warns(UserWarning, match=r"sources\[1\]: .* cut to the first 6"):
        scored = translator.score([text, other], ["ein Hund"] * 2, max_input_len=6,
                                  long_input="truncate")
    # Alike to rounding: rows of one batch may take different kernel paths.
    assert scored[0].log_prob == pytest.approx(scored[1].log_prob, rel=1e-5)
    whole = translator.score([text, other], ["ein Hund"] * 2)
    assert whole[0].log_prob != pytest.approx(whole[1].log_prob, rel=1e-3)
    with pytest.raises(transduce.Error, match=r"sources\[0\]: .* more than max_input_len 6"):
        translator.score([text], ["ein Hund"], max_input_len=6)
    with pytest.raises(transduce.Error, match=r"targets\[0\]: .* a target is never cut"):
        translator.score(["a dog"], [long], long_input="truncate")


def test_an_ensemble_translates_as_the_command_line(model, transduce_bin, translator):
    """Several directories translate together as `translate -m A -m B` does: here the trained
    model and the average of its last two checkpoints (other weights, one vocabulary)."""
    averaged = model / "averaged-2"
    if not averaged.exists():
        run(transduce_bin, "average", "-m", model / "model", "--last", 2, "--output", averaged)
    src = read_lines(model / "val.en")[:100]
    (model / "val100.en").write_text("\n".join(src) + "\n", encoding="utf-8")
    cli = run(transduce_bin, "--threads", 2, "translate", "-m", model / "model", "-m", averaged,
              "--input", model / "val100.en", "--beam", 4).splitlines()
    pair = transduce.Translator([str(model / "model"), str(averaged)], threads=2)
    assert pair.model_dirs == [str(model / "model"), str(averaged)]
    assert [t.text for t in pair.translate(src, beam=4)] == cli
    # Not the first model's translations alone.
    assert cli != [t.text for t in translator.translate(src, beam=4)]
    with pytest.raises(transduce.Error, match="one model"):
        pair.score(src[:1], ["ein Hund"])
    with pytest.raises(transduce.Error, match="no model"):
        transduce.Translator([])


def test_two_threads_translate_as_one(model, translator):
    src = read_lines(model / "val.en")[:150]
    alone = [t.text for t in translator.translate(src)]
    results = {}

    def work(key, lines):
        results[key] = [t.text for t in translator.translate(lines)]

    threads = [threading.Thread(target=work, args=(k, src)) for k in range(2)]
    threads.append(threading.Thread(target=work, args=(2, src[::-1])))
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert results[0] == alone and results[1] == alone and results[2] == alone[::-1]


def test_the_gil_is_released_while_translating(model, translator):
    src = read_lines(model / "val.en") * 2
    ticks = []
    done = threading.Event()

    def tick():
        while not done.is_set():
            ticks.append(time.perf_counter())
            time.sleep(0.001)

    started = time.perf_counter()
    ticker = threading.Thread(target=tick)
    ticker.start()
    translator.translate(src, beam=4)
    ended = time.perf_counter()
    done.set()
    ticker.join()
    during = [t for t in ticks if started < t < ended]
    # With the GIL held the ticker could run only at the call's two ends.
    assert ended - started > 0.2
    assert len(during) > 20


def test_the_search_keywords_are_the_declared_options(translator):
    """translate()'s keyword arguments come from the search options' one declaration
    (decode/search_options.h): the stub lists exactly those with the declared defaults, the
    docstring names each, and a keyword outside it is Python's TypeError."""
    declared = {o["key"]: o["default"] for o in transduce.search_options()}
    assert {"beam", "alpha", "nbest", "max_len_a", "max_len_b"} <= declared.keys()
    stub = ast.parse((Path(transduce.__file__).parent / "__init__.pyi").read_text())
    cls = next(n for n in stub.body if isinstance(n, ast.ClassDef) and n.name == "Translator")
    translate = [f for f in cls.body if isinstance(f, ast.FunctionDef) and f.name == "translate"]
    for f in translate:
        stubbed = {a.arg: ast.literal_eval(d) for a, d in zip(f.args.kwonlyargs, f.args.kw_defaults)}
        stubbed.pop("return_attention")
        stubbed.pop("return_alignment")
        stubbed.pop("target_prefix")
        stubbed.pop("constraints")
        assert stubbed.keys() == declared.keys()
        for key, default in declared.items():
            if isinstance(default, float):
                assert stubbed[key] == pytest.approx(default), key
            else:
                assert stubbed[key] == default, key
    for key in declared:
        assert f"{key}=" in transduce.Translator.translate.__doc__, key
    with pytest.raises(TypeError, match="unexpected keyword argument 'beams'"):
        translator.translate(["a dog"], beams=2)
    with pytest.raises(transduce.Error, match="alpha must be between 0 and 10, got -1"):
        translator.translate(["a dog"], alpha=-1)


def test_decoding_controls_equal_the_command_line(model, transduce_bin, translator):
    """Prefixes, alternatives and samples through Python are the command line's: the same
    translations, and in JSON output the same per-token scores."""
    src = read_lines(model / "val.en")[:20]
    (model / "val20.en").write_text("\n".join(src) + "\n", encoding="utf-8")
    firsts = [" ".join(t.text.split()[:2]) for t in translator.translate(src, beam=1)]
    prefixes = [p if i % 3 else "" for i, p in enumerate(firsts)]
    (model / "val20.prefix").write_text("\n".join(prefixes) + "\n", encoding="utf-8")
    base = [transduce_bin, "--threads", 2, "translate", "-m", model / "model", "--input",
            model / "val20.en"]
    cli = run(*base, "--prefix", model / "val20.prefix").splitlines()
    ours = translator.translate(src, target_prefix=prefixes)
    assert [t.text for t in ours] == cli
    for t, p in zip(ours, prefixes):
        assert t.text.startswith(p)

    lines = run(*base, "--prefix", model / "val20.prefix", "--alternatives", 3,
                "--output-format", "json").splitlines()
    alternatives = translator.translate(src, target_prefix=prefixes, alternatives=3)
    for line, hyps in zip(lines, alternatives, strict=True):
        got = json.loads(line)["translations"]
        assert [h["text"] for h in got] == [h.text for h in hyps]
        for h, mine in zip(got, hyps):
            assert np.allclose(h["token_log_probs"], mine.token_log_probs, rtol=1e-6, atol=1e-6)
            assert mine.log_prob == pytest.approx(float(np.sum(mine.token_log_probs)), abs=1e-4)

    words = [t.text.split()[-2] if len(t.text.split()) > 2 else "" for t in ours]
    (model / "val20.constraints").write_text("\n".join(words) + "\n", encoding="utf-8")
    cli = run(*base, "--constraints", model / "val20.constraints").splitlines()
    held = translator.translate(src, constraints=[[w] if w else [] for w in words])
    assert [t.text for t in held] == cli
    for t, w in zip(held, words):
        assert t.constraints_unmet or w in t.text

    cli = run(*base, "--alignment").splitlines()
    aligned = translator.translate(src, return_alignment=True)
    assert [f"{t.text} ||| " + " ".join(f"{s}-{w}" for s, w in t.alignment) for t in aligned] == cli
    assert all(t.alignment for t in aligned)

    cli = run(*base, "--sampling", "topk:10", "--temperature", 0.8, "--nbest", 2, "--seed", 4)
    samples = translator.translate(src, sampling="topk:10", temperature=0.8, nbest=2, seed=4)
    flat = [f"{i} ||| {h.text} ||| {h.score:.4f}" for i, hyps in enumerate(samples) for h in hyps]
    assert flat == cli.splitlines()
    again = translator.translate(src, sampling="topk:10", temperature=0.8, nbest=2, seed=5)
    assert [h.text for hyps in again for h in hyps] != [h.text for hyps in samples for h in hyps]
