#!/usr/bin/env python3
"""The reference side of tests/gguf_py.rs: llama.cpp's gguf-py reads and dequantizes files,
and quantizes inputs, so that relax-gguf can be compared with it.

    gguf_py_check.py read FILE OUT_DIR      OUT_DIR/meta.json, OUT_DIR/<i>.f32 per tensor
    gguf_py_check.py quantize IN.f32 OUT_DIR OUT_DIR/<TYPE>.bin, OUT_DIR/quantize.json

meta.json holds the fields (key, value types, contents, with floats as their bit patterns so
that nothing is lost in printing) and the tensor infos. quantize.json says, per type, whether
gguf-py implements its quantization.
"""

import json
import struct
import sys
from pathlib import Path

import numpy as np
import gguf
from gguf import GGMLQuantizationType as Q, GGUFValueType as V


def bits(value, vtype):
    if vtype == V.FLOAT32:
        return struct.unpack("<I", struct.pack("<f", value))[0]
    if vtype == V.FLOAT64:
        return struct.unpack("<Q", struct.pack("<d", value))[0]
    return value


def read(path, out):
    reader = gguf.GGUFReader(path)
    fields = []
    for field in reader.fields.values():
        if field.name.startswith("GGUF."):
            continue
        leaf = field.types[-1]
        contents = field.contents()
        if isinstance(contents, list):
            contents = [bits(v, leaf) for v in contents]
        else:
            contents = bits(contents, leaf)
        fields.append({"key": field.name, "types": [int(t) for t in field.types], "value": contents})
    tensors = []
    for i, t in enumerate(reader.tensors):
        tensors.append({
            "name": t.name,
            "type": int(t.tensor_type),
            "dims": [int(d) for d in t.shape],
            "n_elements": int(t.n_elements),
            "n_bytes": int(t.n_bytes),
            "file_offset": int(t.data_offset),
        })
        values = gguf.quants.dequantize(t.data, t.tensor_type).astype(np.float32)
        values.tofile(out / f"{i}.f32")
    meta = {"alignment": int(reader.alignment), "data_offset": int(reader.data_offset),
            "fields": fields, "tensors": tensors}
    (out / "meta.json").write_text(json.dumps(meta))


def quantize(path, out):
    x = np.fromfile(path, dtype=np.float32).reshape(-1, 256)
    status = {}
    for qtype in (Q.F16, Q.BF16, Q.Q8_0, Q.Q4_0, Q.Q4_K, Q.Q6_K):
        try:
            data = gguf.quants.quantize(x, qtype)
        except NotImplementedError:
            status[qtype.name] = "not implemented"
            continue
        np.ascontiguousarray(data).tofile(out / f"{qtype.name}.bin")
        status[qtype.name] = "ok"
    (out / "quantize.json").write_text(json.dumps(status))


def main():
    mode, src, out = sys.argv[1], sys.argv[2], Path(sys.argv[3])
    out.mkdir(parents=True, exist_ok=True)
    {"read": read, "quantize": quantize}[mode](src, out)


if __name__ == "__main__":
    main()
