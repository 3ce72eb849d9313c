#!/usr/bin/env python3
"""Reads a safetensors file the way a Python user would, with numpy (Debian: python3-numpy), and
writes what it found for tests/io/safetensors_python_test.cc to compare with the C++ side:

    safetensors_to_raw.py MODEL.safetensors OUT_DIR

OUT_DIR/index.json: {"metadata": {...}, "tensors": [{"name", "dtype", "shape", "file"}]};
OUT_DIR/<n>.bin: each tensor's values as little-endian float32 in row-major order (int8 and bf16
tensors, as a quantized model directory holds, converted exactly). The format (an 8-byte
little-endian header length, a JSON header, a byte buffer) is read here from its specification,
not through transduce's code.
"""

import json
import struct
import sys
from pathlib import Path

import numpy as np

DTYPES = {"F32": "<f4", "F16": "<f2", "F64": "<f8", "I32": "<i4", "I64": "<i8", "I8": "i1"}


def array_of(raw, dtype, shape):
    if dtype == "BF16":  # numpy has no bfloat16: its 16 bits are the top half of a float32's
        bits = np.frombuffer(raw, dtype="<u2").astype("<u4") << 16
        return bits.view("<f4").reshape(shape)
    return np.frombuffer(raw, dtype=DTYPES[dtype]).reshape(shape)


def main():
    path, out = Path(sys.argv[1]), Path(sys.argv[2])
    out.mkdir(parents=True, exist_ok=True)
    data = path.read_bytes()
    (header_len,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8:8 + header_len])
    body = memoryview(data)[8 + header_len:]
    metadata = header.pop("__metadata__", {})
    tensors = []
    for i, (name, t) in enumerate(sorted(header.items())):
        begin, end = t["data_offsets"]
        array = array_of(body[begin:end], t["dtype"], t["shape"])
        file = f"{i}.bin"
        np.ascontiguousarray(array, dtype="<f4").tofile(out / file)
        tensors.append({"name": name, "dtype": t["dtype"], "shape": list(array.shape),
                        "file": file})
    (out / "index.json").write_text(json.dumps({"metadata": metadata, "tensors": tensors}))


if __name__ == "__main__":
    main()
