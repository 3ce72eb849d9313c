#!/usr/bin/env python3
"""docs/python.md's example as one script: translate Multi30k's test_2016_flickr with a trained
model, score it, rescore an n-best list, and draw one sentence's attention (python_attention.png).

    PYTHONPATH=build/python python3 docs/python_example.py runs/multi30k-en-de/model-averaged
"""

import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

import transduce  # noqa: E402

model_dir = sys.argv[1]
data = Path(sys.argv[2] if len(sys.argv) > 2 else "../shared/data/multi30k")
out = Path(sys.argv[3] if len(sys.argv) > 3 else Path(__file__).parent / "python_attention.png")

translator = transduce.Translator(model_dir)
sources = (data / "test_2016_flickr.en").read_text(encoding="utf-8").splitlines()
references = (data / "test_2016_flickr.de").read_text(encoding="utf-8").splitlines()

hyps = [t.text for t in translator.translate(sources, beam=4, alpha=1.0)]
print(transduce.bleu(hyps, [references]))
print(transduce.bleu(hyps, [references], lowercase=True).signature)
print(transduce.chrf(hyps, [references]))

# The model's own scores of the references against those of its translations.
ref_scores = translator.score(sources[:3], references[:3], alpha=1.0)
hyp_scores = translator.score(sources[:3], hyps[:3], alpha=1.0)
for src, r, h in zip(sources, ref_scores, hyp_scores):
    print(f"{src}\n  reference {r.score:.3f}, translation {h.score:.3f}")

for hyp in translator.translate([sources[0]], beam=8, nbest=3)[0]:
    print(f"{hyp.score:.3f}  {hyp.text}")

t = translator.translate([sources[0]], beam=4, alpha=1.0, return_attention=True)[0]
a = t.attention
print(t.text, a.cross.shape)  # [layers, heads, target pieces + EOS, source pieces + EOS]
fig, ax = plt.subplots(figsize=(6, 5))
ax.imshow(a.cross[-1].mean(axis=0), cmap="Greys", vmin=0, vmax=1)
ax.set_xticks(range(len(a.source_pieces)), a.source_pieces, rotation=90)
ax.set_yticks(range(len(a.target_pieces)), a.target_pieces)
ax.set_title("encoder-decoder attention, last layer, mean of heads")
fig.tight_layout()
fig.savefig(out, dpi=100)
print(f"wrote {out}")
