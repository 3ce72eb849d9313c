"""transduce from Python: the Transformer toolkit's translation, forced scoring, BLEU/chrF and
model files, computed by the same C++ library as the `transduce` command.

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
    Tokenizer,
    Translation,
    Translator,
    bleu,
    chrf,
    load_weights,
    num_cores,
    set_threads,
    train,
)

__all__ = [
    "Attention", "BLEUScore", "CHRFScore", "Error", "PairScore", "Tokenizer", "Translation",
    "Translator", "bleu", "chrf", "load_weights", "num_cores", "set_threads", "train",
]
__version__ = "0.1.0"
