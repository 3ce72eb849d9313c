"""transduce.Tokenizer against the model's own vocabulary use, and transduce.load_weights against
an independent reader of safetensors written here with numpy."""

import json
import struct

import numpy as np
import pytest

import transduce
from conftest import read_lines, run

NUMPY_TYPES = {"F32": np.float32, "I32": np.int32, "I64": np.int64, "U8": np.uint8, "I8": np.int8,
               "F16": np.float16}


def read_safetensors(path):
    """The safetensors layout read with the standard library and numpy alone."""
    data = path.read_bytes()
    (n,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8:8 + n])
    header.pop("__metadata__", None)
    body = data[8 + n:]
    out = {}
    for name, info in header.items():
        begin, end = info["data_offsets"]
        out[name] = np.frombuffer(body[begin:end], dtype=NUMPY_TYPES[info["dtype"]]).reshape(
            info["shape"])
    return out


def test_tokenizer_round_trip_and_pieces(model):
    tok = transduce.Tokenizer(str(model / "vocab"))
    same = transduce.Tokenizer(str(model / "model"))
    assert tok.vocab_size == len(tok) == same.vocab_size == 1000
    for line in read_lines(model / "val.de")[:100]:
        ids = tok.encode(line)
        assert ids == same.encode(line) and 3 not in ids  # no <unk> in in-domain text
        assert tok.decode(ids) == " ".join(line.split())
        pieces = tok.encode_pieces(line)
        assert pieces == [tok.piece(i) for i in ids]
        assert [tok.piece_id(p) for p in pieces] == ids
    assert tok.piece_id("no such piece") == -1
    assert tok.decode([1, 2, 0]) == ""  # BOS, EOS and PAD are not text


def test_tokenizer_errors(model):
    with pytest.raises(transduce.Error, match="missing"):
        transduce.Tokenizer(str(model / "missing"))
    tok = transduce.Tokenizer(str(model / "vocab"))
    with pytest.raises(transduce.Error):
        tok.decode([1000])
    with pytest.raises(TypeError):
        tok.encode(["a list"])


def test_load_weights_equals_an_independent_reader(model):
    path = model / "model" / "model.safetensors"
    ours = transduce.load_weights(str(model / "model"))
    theirs = read_safetensors(path)
    assert sorted(ours) == sorted(theirs) and len(ours) > 20
    for name, array in theirs.items():
        assert ours[name].dtype == array.dtype and ours[name].shape == array.shape
        np.testing.assert_array_equal(ours[name], array)
    assert transduce.load_weights(str(path)).keys() == ours.keys()


def test_load_weights_of_quantized_models(model, transduce_bin):
    fp32 = transduce.load_weights(str(model / "model"))
    run(transduce_bin, "quantize", "-m", model / "model", "--compute-type", "bf16", "--output", model / "bf16")
    run(transduce_bin, "quantize", "-m", model / "model", "--compute-type", "int8", "--output", model / "int8")
    bf16 = transduce.load_weights(str(model / "bf16"))
    as_bf16 = 0
    for name, array in bf16.items():
        assert array.dtype == np.float32
        # bfloat16 is float32's top half: the values read equal fp32's rounded to bfloat16.
        bits = fp32[name].view(np.uint32).astype(np.uint64)
        rounded = ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16 << 16).astype(np.uint32)
        if not np.array_equal(array, fp32[name]):
            np.testing.assert_array_equal(array, rounded.view(np.float32))
            as_bf16 += 1
    assert as_bf16 > 10
    int8 = transduce.load_weights(str(model / "int8"))
    quantized = [n for n, a in int8.items() if a.dtype == np.int8]
    assert quantized and all(int8[n + "_scale"].dtype == np.float32 for n in quantized)
    for n in quantized:  # each row's scale brings it back within half a step
        restored = int8[n].astype(np.float32) * int8[n + "_scale"][:, None]
        assert np.all(np.abs(restored - fp32[n]) <= int8[n + "_scale"][:, None] * 0.5001)


def test_load_weights_errors(tmp_path):
    with pytest.raises(transduce.Error, match="nothing-here"):
        transduce.load_weights(str(tmp_path / "nothing-here"))
    bad = tmp_path / "bad.safetensors"
    bad.write_bytes(b"\x10\x00\x00\x00\x00\x00\x00\x00{not json}")
    with pytest.raises(transduce.Error, match="bad.safetensors"):
        transduce.load_weights(str(bad))
