"""Export helpers: turn an nn.Module into the inputs doccc reads.

    export(model, example_inputs, path, ir="training"|"core", form="pt2"|"json")

  ir="training"  torch.export.export's default (pre-dispatch) IR: conv2d,
                 batch_norm, relu_, add_, linear, ...
  ir="core"      ep.run_decompositions(): Core ATen (convolution,
                 _native_batch_norm_legit_no_training, addmm, ...)
  form="pt2"     torch.export.save(ep, path): the .pt2 archive (raw weights)
  form="json"    path gets the serialized ExportedProgram JSON
                 (torch._export.serde.serialize.serialize(ep).exported_program),
                 path with suffix .safetensors the weights, keyed by the FQNs of
                 ep.state_dict and ep.constants (the names the signature uses).

The safetensors file is written by hand, not with the safetensors package (which
is not a dependency): an 8-byte little-endian header length, a UTF-8 JSON header
{"NAME": {"dtype": "F32", "shape": [...], "data_offsets": [BEGIN, END]}, ...,
"__metadata__": {...}} padded with spaces to a multiple of 8, then the raw
little-endian data of every tensor, made contiguous. Tensors are laid out by
decreasing element size, then name (as the safetensors library does), so every
tensor is aligned to its element size when the file is mapped.

extract_pt2() unzips a .pt2 into a folder, the "extracted archive" layout in
which <root>/models/model.json finds its weights beside it (../data/weights).
rewrite_pt2() copies a .pt2 through an edit of its model.json (the CLI tests
use it to make a schema-version mismatch), keeping the archive's 64-byte record
alignment by writing through torch's own archive writer.

Exports run under torch.no_grad() with the model in eval mode (train=True keeps
train mode, for the tests that check that training graphs are rejected).
"""

import json
import struct
import sys
import zipfile
from collections import Counter
from pathlib import Path

import torch

_ST_DTYPES = {
    torch.float32: "F32", torch.float64: "F64", torch.float16: "F16",
    torch.bfloat16: "BF16", torch.int64: "I64", torch.int32: "I32",
    torch.int16: "I16", torch.int8: "I8", torch.uint8: "U8", torch.bool: "BOOL",
}


def export_program(model, example_inputs, ir="training", train=False):
    """torch.export.export of model at the given IR level; returns the ExportedProgram."""
    if ir not in ("training", "core"):
        raise ValueError(f"ir must be 'training' or 'core', not {ir!r}")
    if not isinstance(example_inputs, tuple):
        example_inputs = (example_inputs,)
    model.train(train)
    with torch.no_grad():
        ep = torch.export.export(model, example_inputs)
        if ir == "core":
            ep = ep.run_decompositions()
    return ep


def export(model, example_inputs, path, ir="training", form="pt2", train=False):
    """Export model to path. Returns (ExportedProgram, weights path or None)."""
    ep = export_program(model, example_inputs, ir, train)
    return ep, save(ep, path, form)


def save(ep, path, form="pt2"):
    """Write ep as a .pt2 archive or as JSON + safetensors; returns the weights path or None."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    if form == "pt2":
        torch.export.save(ep, str(path))
        return None
    if form == "json":
        return save_json(ep, path)
    raise ValueError(f"form must be 'pt2' or 'json', not {form!r}")


def program_tensors(ep):
    """{FQN: tensor} of everything the signature binds by name (parameters,
    buffers, lifted constants); non-tensor constants (TorchBind) are left out."""
    out = {}
    for name, t in list(ep.state_dict.items()) + list(ep.constants.items()):
        if isinstance(t, torch.Tensor):
            out[name] = t.detach()
    return out


def save_json(ep, path):
    """The serialized ExportedProgram JSON at path, its weights beside it as .safetensors."""
    from torch._export.serde.serialize import serialize

    path = Path(path)
    path.write_bytes(serialize(ep).exported_program)
    wpath = path.with_suffix(".safetensors")
    write_safetensors(program_tensors(ep), wpath)
    return wpath


def _tensor_bytes(t):
    t = t.detach().cpu().contiguous()
    if t.numel() == 0:
        return b""
    return t.reshape(-1).view(torch.uint8).numpy().tobytes()


def write_safetensors(tensors, path, metadata=None):
    """Write {name: tensor} as a safetensors file, by hand."""
    if sys.byteorder != "little":
        raise RuntimeError("write_safetensors assumes a little-endian host")
    items = []
    for name, t in tensors.items():
        if t.dtype not in _ST_DTYPES:
            raise TypeError(f"{name}: dtype {t.dtype} has no safetensors name here")
        items.append((name, t))
    items.sort(key=lambda it: (-it[1].element_size(), it[0]))
    header, blobs, offset = {}, [], 0
    for name, t in items:
        data = _tensor_bytes(t)
        header[name] = {"dtype": _ST_DTYPES[t.dtype], "shape": list(t.shape),
                        "data_offsets": [offset, offset + len(data)]}
        blobs.append(data)
        offset += len(data)
    header["__metadata__"] = dict(metadata or {"format": "pt"})
    hjson = json.dumps(header, separators=(",", ":")).encode("utf-8")
    hjson += b" " * (-len(hjson) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(hjson)))
        f.write(hjson)
        for b in blobs:
            f.write(b)
    return Path(path)


def read_safetensors(path):
    """Read a safetensors file into {name: numpy array} (for round-trip checks)."""
    import numpy as np

    np_dtypes = {"F32": np.float32, "F64": np.float64, "F16": np.float16,
                 "I64": np.int64, "I32": np.int32, "I16": np.int16, "I8": np.int8,
                 "U8": np.uint8, "BOOL": np.bool_}
    raw = Path(path).read_bytes()
    (n,) = struct.unpack("<Q", raw[:8])
    header = json.loads(raw[8:8 + n].decode("utf-8"))
    data = raw[8 + n:]
    out = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        b, e = info["data_offsets"]
        if info["dtype"] == "BF16":
            u16 = np.frombuffer(data[b:e], dtype="<u2").astype(np.uint32) << 16
            arr = u16.view(np.float32)
        else:
            arr = np.frombuffer(data[b:e], dtype=np.dtype(np_dtypes[info["dtype"]]).newbyteorder("<"))
        out[name] = arr.reshape(info["shape"])
    return out


def pt2_root(pt2_path):
    """The archive's root folder name (text before the first '/' of the entries)."""
    with zipfile.ZipFile(pt2_path) as z:
        first = z.namelist()[0]
    return first.split("/", 1)[0] if "/" in first else ""


def extract_pt2(pt2_path, dest):
    """Unzip a .pt2 into dest; returns the path of the extracted models/model.json."""
    dest = Path(dest)
    with zipfile.ZipFile(pt2_path) as z:
        z.extractall(dest)
    root = pt2_root(pt2_path)
    return dest / root / "models" / "model.json"


def rewrite_pt2(src, dst, edit):
    """Copy the .pt2 src to dst with models/model.json replaced by edit(dict) -> dict
    (or -> bytes, the new JSON text itself: the injection tests plant bytes that
    are not UTF-8).

    The writer adds its own .data/version, .data/serialization_id and byteorder
    records, so those are not copied; the root folder becomes dst's base name."""
    from torch.export.pt2_archive._package import PT2ArchiveWriter

    root = pt2_root(src)
    prefix = root + "/" if root else ""
    skip = {".data/version", ".data/serialization_id", "byteorder"}
    with zipfile.ZipFile(src) as z, PT2ArchiveWriter(str(dst)) as w:
        for info in z.infolist():
            name = info.filename[len(prefix):] if info.filename.startswith(prefix) else info.filename
            if name in skip or name.endswith("/"):
                continue
            data = z.read(info.filename)
            if name.startswith("models/") and name.endswith(".json"):
                data = edit(json.loads(data))
                data = data if isinstance(data, bytes) else json.dumps(data).encode("utf-8")
            w.write_bytes(name, data)
    return Path(dst)


def op_targets(ep):
    """Counter of the call_function targets of ep's graph ("aten.conv2d.default": 20)."""
    return Counter(str(n.target) for n in ep.graph.nodes if n.op == "call_function")


def io_info(ep):
    """User inputs and outputs of ep: ([(name, dtype, shape)], [(name, dtype, shape)])."""
    nodes = {n.name: n for n in ep.graph.nodes}

    def meta(name):
        v = nodes[name].meta.get("val")
        return (name, v.dtype, tuple(int(d) for d in v.shape))

    sig = ep.graph_signature
    return [meta(n) for n in sig.user_inputs], [meta(n) for n in sig.user_outputs]


if __name__ == "__main__":
    # python3 test/export.py OUTDIR: export every test model both ways and print
    # the operators (a quick look at what doccc has to accept).
    import models

    out = Path(sys.argv[1] if len(sys.argv) > 1 else "build/exports")
    for name in models.MODELS:
        m = models.make_model(name)
        x = models.make_input(name, 1)
        for ir in ("training", "core"):
            for form in ("pt2", "json"):
                ep, _ = export(m, (x,), out / f"{name}_{ir}.{'pt2' if form == 'pt2' else 'json'}", ir, form)
            print(f"{name} [{ir}]:", ", ".join(f"{k} x{v}" for k, v in sorted(op_targets(ep).items())))
