"""transduce from Python: the Transformer toolkit's translation, forced scoring, BLEU/chrF and
model files, and constituency parsing, computed by the same C++ library as the `transduce`
command.

    import transduce
    translator = transduce.Translator("runs/multi30k-en-de/model-averaged")
    best = translator.translate(["A dog runs on the beach."], beam=4, alpha=1.0)[0]
    print(best.text, best.score)
    print(transduce.bleu([best.text], [["Ein Hund läuft am Strand."]]))

See docs/python.md.
"""

from ._transduce import (  # noqa: F401  (re-exported)
    Attention,
    BLEUScore,
    CHRFScore,
    Error,
    PairScore,
    Parse,
    Parser,
    Repairs,
    Tokenizer,
    Translation,
    Translator,
    bleu,
    chrf,
    load_weights,
    num_cores,
    search_options,
    set_threads,
    train,
)

__all__ = [
    "Attention", "BLEUScore", "CHRFScore", "Error", "PairScore", "Parse", "Parser", "Repairs",
    "Tokenizer", "Translation", "Translator", "bleu", "chrf", "load_weights", "num_cores", "parse",
    "search_options", "set_threads", "train",
]


def parse(model_dir, sentences, threads=0, **options):
    """Parser(model_dir, threads).parse(sentences, **options), for a single call: constituency
    trees in Penn Treebank brackets, one for each sentence (words separated by spaces)."""
    return Parser(model_dir, threads=threads).parse(sentences, **options)
__version__ = "0.1.0"
