#!/usr/bin/env python3
"""Makes the vocab target's seeds (fuzz/corpus/vocab/) from vocabularies made by `transduce vocab`.

A SentencePiece model made by `transduce vocab` is 240 KB, nearly all of it the NFKC normalisation
table; the seeds keep everything else (the pieces, the trainer and normaliser settings with
transduce's reserved ids) and leave the table out, so that they are a few KB and the fuzzer spends
its time on the pieces. Usage:

  transduce vocab --input TEXT --size 100 --out V1
  transduce vocab --input TEXT --size 60 --type unigram --out V2
  fuzz/make_vocab_seeds.py V1/spm.model V2/spm.model --out fuzz/corpus/vocab
"""
import argparse
import os


def varint(data, i):
    value, shift = 0, 0
    while True:
        b = data[i]
        i += 1
        value |= (b & 0x7F) << shift
        shift += 7
        if b < 0x80:
            return value, i


def encode_varint(value):
    out = bytearray()
    while True:
        b = value & 0x7F
        value >>= 7
        out.append(b | (0x80 if value else 0))
        if not value:
            return bytes(out)


def fields(data):
    """(number, wire type, raw bytes of the whole field) for each field of a message."""
    i = 0
    while i < len(data):
        start = i
        key, i = varint(data, i)
        number, wire = key >> 3, key & 7
        if wire == 0:
            _, i = varint(data, i)
        elif wire == 1:
            i += 8
        elif wire == 2:
            length, i = varint(data, i)
            i += length
        elif wire == 5:
            i += 4
        else:
            raise ValueError(f"wire type {wire} at byte {start}")
        yield number, wire, data[start:i]


def payload(raw):
    _, i = varint(raw, 0)
    _, i = varint(raw, i)
    return raw[i:]


def length_delimited(number, body):
    return encode_varint(number << 3 | 2) + encode_varint(len(body)) + body


def strip_charsmap(normalizer_spec):
    """NormalizerSpec without precompiled_charsmap (2), its name (1) made "identity"."""
    out = length_delimited(1, b"identity")
    for number, _, raw in fields(normalizer_spec):
        if number not in (1, 2):
            out += raw
    return out


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("models", nargs="+")
    parser.add_argument("--out", required=True)
    args = parser.parse_args()
    os.makedirs(args.out, exist_ok=True)
    for path in args.models:
        data = open(path, "rb").read()
        out = b""
        for number, _, raw in fields(data):
            # ModelProto: 3 normalizer_spec, 5 denormalizer_spec
            out += length_delimited(number, strip_charsmap(payload(raw))) if number in (3, 5) else raw
        name = os.path.basename(os.path.dirname(os.path.abspath(path))) + ".model"
        with open(os.path.join(args.out, name), "wb") as f:
            f.write(out)
        print(f"{path}: {len(data)} -> {len(out)} bytes, {os.path.join(args.out, name)}")


if __name__ == "__main__":
    main()
