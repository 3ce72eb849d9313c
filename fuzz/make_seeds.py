#!/usr/bin/env python3
"""Seeds for the fuzz targets, cut from the test fixtures and the shared data (scripts/fuzz runs it).

Writes OUT/<target>/*: the safetensors fixtures whole and cut to their header, small safetensors
files of every dtype, the fixtures' model config, a few lines of Multi30k (corpus, score and API
request seeds) and of the Penn Treebank sample. The hand-written seeds are in fuzz/corpus/<target>/.
Without the shared data (DATA, default ../shared/data) its seeds are left out with a warning.
"""
import argparse
import json
import os
import struct
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def write(out, target, name, data):
    d = os.path.join(out, target)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, name), "wb") as f:
        f.write(data.encode() if isinstance(data, str) else data)


def safetensors(tensors, metadata=None):
    """tensors: name -> (dtype, shape, bytes); laid out in name order, as save_safetensors does."""
    header, data = {}, b""
    for name in sorted(tensors):
        dtype, shape, raw = tensors[name]
        header[name] = {"dtype": dtype, "shape": shape, "data_offsets": [len(data), len(data) + len(raw)]}
        data += raw
    if metadata:
        header["__metadata__"] = metadata
    text = json.dumps(header, separators=(",", ":"), sort_keys=True).encode()
    text += b" " * ((8 - len(text) % 8) % 8)
    return struct.pack("<Q", len(text)) + text + data


def lines(path, first, count):
    with open(path, "rb") as f:
        return f.read().split(b"\n")[first:first + count]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", required=True)
    parser.add_argument("--data", default=os.environ.get("TRANSDUCE_DATA_DIR",
                                                         os.path.join(ROOT, "..", "shared", "data")))
    args = parser.parse_args()
    out = args.out

    # safetensors: the fixtures, whole and cut after the header; small files of every dtype.
    fixtures = os.path.join(ROOT, "tests", "fixtures")
    config = None
    for name in sorted(os.listdir(fixtures)):
        if not name.endswith(".safetensors"):
            continue
        data = open(os.path.join(fixtures, name), "rb").read()
        n = struct.unpack("<Q", data[:8])[0]
        write(out, "safetensors", name, data)
        write(out, "safetensors", name + ".header", data[:8 + n])
        config = config or json.loads(data[8:8 + n]).get("__metadata__", {}).get("config")
    f32 = struct.pack("<6f", 0.5, -1.0, 2.0, 0.0, 1e-3, 3.25)
    write(out, "safetensors", "small.safetensors", safetensors(
        {"w": ("F32", [2, 3], f32), "b": ("F32", [3], f32[:12])},
        {"config": config or "{}", "step": "7"}))
    write(out, "safetensors", "dtypes.safetensors", safetensors({
        "bf16": ("BF16", [2], b"\x80\x3f\x00\x40"), "f16": ("F16", [1, 2], b"\x00\x3c\x00\x40"),
        "i32": ("I32", [2], struct.pack("<2i", -1, 7)), "i64": ("I64", [1], struct.pack("<q", 1 << 40)),
        "u8": ("U8", [3], b"abc"), "scalar": ("F32", [], f32[:4]), "empty": ("F32", [0, 5], b""),
    }))
    write(out, "safetensors", "metadata_only.safetensors", safetensors({}, {"generator": "fuzz"}))
    write(out, "safetensors", "empty_header.safetensors", safetensors({}))

    # config.json as `transduce train` writes it, from the fixtures' metadata.
    if config:
        write(out, "model_config", "fixture.json", json.dumps(json.loads(config), indent=2) + "\n")

    data = args.data
    if not os.path.isdir(data):
        print(f"make_seeds: no shared data at {data}: corpus, score, API and tree seeds from it "
              "left out", file=sys.stderr)
        return
    m30k = os.path.join(data, "multi30k")
    en = lines(os.path.join(m30k, "val.en"), 0, 40)
    de = lines(os.path.join(m30k, "val.de"), 0, 40)
    fr = lines(os.path.join(m30k, "test_2016_flickr.fr"), 0, 12)
    en16 = lines(os.path.join(m30k, "test_2016_flickr.en"), 0, 12)
    tok = lines(os.path.join(m30k, "tok", "val.lc.norm.tok.en"), 0, 12)

    # corpus: SOURCE NUL TARGET
    write(out, "corpus", "val_en_de", b"\n".join(en[:20]) + b"\n\0" + b"\n".join(de[:20]) + b"\n")
    write(out, "corpus", "test_fr_en", b"\n".join(fr) + b"\0" + b"\n".join(en16))

    # score: OPTIONS HYP NUL REF [NUL REF]: a hypothesis that is not the reference.
    hyp = b"\n".join(de[1:13])
    ref = b"\n".join(de[:12])
    write(out, "score", "13a", b"\x00" + hyp + b"\0" + ref)
    write(out, "score", "intl_lower_two_refs", b"\x05" + hyp + b"\0" + ref + b"\0" + b"\n".join(de[2:14]))
    write(out, "score", "none_chrf_ws", b"\x1a" + b"\n".join(tok) + b"\0" + b"\n".join(en[:12]))

    # API request bodies
    sentences = [s.decode() for s in en[:6]]
    write(out, "api_request", "val_en", json.dumps({"text": sentences, "beam": 4, "nbest": 2}))
    write(out, "api_request", "val_de_one", json.dumps({"text": de[0].decode(), "alpha": 0.6},
                                                       ensure_ascii=False))

    # trees: a few lines of the treebank sample
    trees = os.path.join(data, "ptb-sample", "dev.trees")
    write(out, "trees", "dev_0_3", b"\n".join(lines(trees, 0, 3)) + b"\n")
    write(out, "trees", "dev_10_14", b"\n".join(lines(trees, 10, 4)) + b"\n")
    write(out, "trees", "dev_40", b"\n".join(lines(trees, 40, 1)) + b"\n")


if __name__ == "__main__":
    main()
