#!/usr/bin/env bash
# `cmake --install` of a build, and examples/translate built against the installed package
# (find_package(transduce), transduce::transduce) as another project would build it. The example
# must translate, score and compute BLEU and chrF exactly as the installed `transduce` does, and
# libtransduce must export the public API and nothing of the library's internals.
#   tests/install/install_test.sh BUILD_DIR DATA_DIR
set -euo pipefail
build=$(realpath "$1")
data=$(realpath "$2")/multi30k
source_dir=$(realpath "$(dirname "$0")/../..")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "install_test: $*" >&2; exit 1; }

cmake --install "$build" --prefix "$work/prefix" >/dev/null
tx="$work/prefix/bin/transduce"
"$tx" --version >/dev/null || fail "the installed binary does not run"
lib=$(ls "$work"/prefix/lib*/libtransduce.so* | head -1)
[ -f "$work/prefix/include/transduce/transduce.h" ] || fail "no installed header"

# Everything the library exports is the public API (or a template instance it needs).
leaked=$(nm -DC --defined-only "$lib" | grep -E ' [TDBRV] ' | grep 'transduce::' |
  grep -v 'transduce::api::' || true)
[ -z "$leaked" ] || fail "libtransduce exports internals:
$(echo "$leaked" | head -5)"

cmake -S "$source_dir/examples/translate" -B "$work/example" -G Ninja \
  -DCMAKE_PREFIX_PATH="$work/prefix" -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$work/example" >/dev/null
example="$work/example/translate_example"

# A small model to translate with: a few updates of a tiny Transformer.
head -n 2000 "$data/train.en" >"$work/train.en"
head -n 2000 "$data/train.de" >"$work/train.de"
head -n 20 "$data/test_2016_flickr.en" >"$work/src"
head -n 20 "$data/test_2016_flickr.de" >"$work/ref"
"$tx" --threads 2 vocab --input "$work/train.en" "$work/train.de" --vocab-size 500 \
  -o "$work/vocab" >/dev/null
"$tx" --threads 2 train --src "$work/train.en" --tgt "$work/train.de" --vocab "$work/vocab" \
  -o "$work/model" --layers 1 --d-model 32 --d-ff 64 --heads 2 --batch-tokens 2000 \
  --warmup 10 --max-steps 15 >/dev/null

"$example" "$work/model" "$work/ref" <"$work/src" >"$work/example.out"
"$tx" translate -m "$work/model" <"$work/src" >"$work/hyps"
head -n 20 "$work/example.out" | cut -f1 | diff - "$work/hyps" ||
  fail "the example's translations differ from transduce translate's"
"$tx" score-pairs -m "$work/model" --src "$work/src" --tgt "$work/hyps" --json >"$work/pairs.json"
/usr/bin/python3 - "$work/example.out" "$work/pairs.json" <<'PY' || fail "scores differ"
import json, sys
ours = [float(l.split("\t")[1]) for l in open(sys.argv[1]).read().splitlines()[:20]]
theirs = [json.loads(l)["score"] for l in open(sys.argv[2])]
assert len(ours) == len(theirs) == 20, (len(ours), len(theirs))
for a, b in zip(ours, theirs):
    assert abs(a - b) <= 1e-4 * max(1.0, abs(b)), (a, b)
PY
"$tx" score --ref "$work/ref" --hyp "$work/hyps" | head -n 2 >"$work/score.out"
tail -n 2 "$work/example.out" | diff - "$work/score.out" ||
  fail "the example's BLEU and chrF differ from transduce score's"
echo "install_test: the installed package builds the example, which agrees with transduce"
