#!/usr/bin/env python3
"""Write the seed corpora of the reader fuzz harnesses from real exports.

    python3 test/fuzz/make_seeds.py [OUTDIR]      (default: test/fuzz/corpus)

Each harness test/fuzz/fuzz_NAME.c gets OUTDIR/NAME/, rewritten from scratch:

  pt2          .pt2 archives of tiny models from torch.export.save (a static MLP,
               a convolution with a dynamic batch and height), and one of them
               re-zipped with deflated entries (libzip inflates those too)
  json         models/model.json and model_weights_config.json of those
               archives, the serialized ExportedProgram JSON (test/export.py's
               "json" form) and a few small documents with 64-bit integers
  safetensors  the weights of the JSON form, written by test/export.py
  npy          numpy .npy files: format 1.0, 2.0 and 3.0 headers, every dtype
               doccc reads, ranks 0 to 3, an empty array
  yaml         options files: every top-level key, both pass_options forms
  expr         symbolic sizes: every expr_str and range_constraints key of the
               dynamic exports, plus hand-written srepr and infix forms

Seeds are kept small (a few KB each): the models have a handful of weights.
Needs torch and numpy (test dependencies). The output is deterministic for a
given torch version, apart from the archives' zip timestamps.
"""

import io
import json
import shutil
import sys
import zipfile
from pathlib import Path

import numpy as np
import torch

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
import export  # noqa: E402  (test/export.py)


class Mlp(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = torch.nn.Linear(4, 3)
        self.fc2 = torch.nn.Linear(3, 2)

    def forward(self, x):
        return self.fc2(torch.relu(self.fc1(x)))


class Conv(torch.nn.Module):
    """Strided convolution and a reshape: sizes with FloorDiv and products."""

    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv2d(1, 2, 3, stride=2)
        self.bn = torch.nn.BatchNorm2d(2)

    def forward(self, x):
        y = torch.relu(self.bn(self.conv(x)))
        return y.flatten(1), y.sum(dim=(2, 3))


def exports():
    """(name, ExportedProgram) of the seed models."""
    torch.manual_seed(0)
    out = [("mlp", export.export_program(Mlp(), (torch.randn(2, 4),)))]
    out.append(("mlp_core", export.export_program(Mlp(), (torch.randn(2, 4),), ir="core")))
    batch = torch.export.Dim("batch", min=2, max=64)
    height = torch.export.Dim("height", min=5, max=33)
    conv = Conv().eval()
    with torch.no_grad():
        ep = torch.export.export(conv, (torch.randn(2, 1, 9, 7),),
                                 dynamic_shapes=({0: batch, 2: height},))
    out.append(("conv_dyn", ep))
    with torch.no_grad():
        out.append(("mlp_dyn", torch.export.export(Mlp().eval(), (torch.randn(3, 4),),
                                                   dynamic_shapes=({0: batch},))))
    return out


def put(d, name, data):
    """Write seed d/name, unless d already holds the same bytes."""
    data = data if isinstance(data, bytes) else data.encode()
    d.mkdir(parents=True, exist_ok=True)
    if any(f.read_bytes() == data for f in d.iterdir()):
        return
    (d / name).write_bytes(data)


def rezip_deflated(src):
    """src's entries in a new zip, deflated."""
    b = io.BytesIO()
    with zipfile.ZipFile(src) as zin, zipfile.ZipFile(b, "w", zipfile.ZIP_DEFLATED) as zout:
        for info in zin.infolist():
            zout.writestr(info.filename, zin.read(info.filename))
    return b.getvalue()


def expr_strings(obj, acc):
    """Every expr_str under obj, and the keys of range_constraints."""
    if isinstance(obj, dict):
        for k, v in obj.items():
            if k == "expr_str" and isinstance(v, str):
                acc.add(v)
            elif k == "range_constraints" and isinstance(v, dict):
                acc.update(v)
            expr_strings(v, acc)
    elif isinstance(obj, list):
        for v in obj:
            expr_strings(v, acc)


HAND_EXPRS = [
    "s0", "2*s0 + 1", "Max(s0, 3)", "Min(2, s0)", "floor(s0/2)", "Eq(s0, 4)", "s0//2", "s0 % 3",
    "(s0 + 1)*(s1 - 2)", "s0**2", "-s0 + 7", "Symbol('s77', integer=True, positive=True)",
    "Mul(Integer(768), Symbol('s77', integer=True, positive=True))",
    "Add(Mul(Integer(2), Symbol('s0')), Integer(4))",
    "FloorDiv(Mul(Integer(2), Symbol('x')), Add(Mul(Integer(3), Symbol('y')), Integer(4)))",
    "PythonMod(Symbol('s0', integer=True, nonnegative=True), Integer(3))",
    "CleanDiv(Mul(Integer(4), Symbol('s0')), Integer(2))", "Pow(Symbol('s0'), Integer(3))",
    "Max(Integer(1), Symbol('u0', integer=True))", "Integer(-9223372036854775807)",
    "Rational(1, 2)", "Float('1.5', precision=53)", "TruncToInt(Symbol('s0'))",
]


def npy_bytes(arr, version):
    b = io.BytesIO()
    np.lib.format.write_array(b, arr, version=version, allow_pickle=False)
    return b.getvalue()


def npy_seeds(d):
    rng = np.random.default_rng(0)
    arrays = {
        "f4_2x3": rng.standard_normal((2, 3)).astype("<f4"),
        "f8_4": rng.standard_normal(4).astype("<f8"),
        "f2_2x2": rng.standard_normal((2, 2)).astype("<f2"),
        "i8_3": np.arange(3, dtype="<i8"),
        "i4_1x2x2": np.arange(4, dtype="<i4").reshape(1, 2, 2),
        "i2_2": np.array([-1, 7], dtype="<i2"),
        "i1_3": np.array([-3, 0, 5], dtype="i1"),
        "u1_4": np.arange(4, dtype="u1"),
        "b1_3": np.array([True, False, True]),
        "u2_bf16_2": np.array([0x3F80, 0xC000], dtype="<u2"),
        "f4_scalar": np.array(1.5, dtype="<f4"),
        "f4_empty": np.zeros((0, 3), dtype="<f4"),
    }
    for name, a in arrays.items():
        put(d, f"{name}_v1.npy", npy_bytes(a, (1, 0)))
    for name in ("f4_2x3", "i8_3", "b1_3"):
        put(d, f"{name}_v2.npy", npy_bytes(arrays[name], (2, 0)))
        put(d, f"{name}_v3.npy", npy_bytes(arrays[name], (3, 0)))
    # Rejected on purpose (each with its message): Fortran order, big-endian.
    put(d, "fortran_v1.npy", npy_bytes(np.asfortranarray(arrays["f4_2x3"]), (1, 0)))
    put(d, "bigendian_v1.npy", npy_bytes(arrays["f8_4"].astype(">f8"), (1, 0)))


YAML_SEEDS = {
    "all_keys.yaml": "# every top-level option\ntarget: openmp\ncategory: desktop\nmarch: native\n"
                     "approximate_math: false\ncontraction_precision: highest\n",
    "gpu.yaml": "target: cuda\ncategory: server\nmarch: sm_90\napproximate_math: yes\n"
                "contraction_precision: medium\n",
    "passopts_nested.yaml": "target: sequential\npass_options:\n  map_fusion: {enabled: false}\n"
                            "  expand: {tile_m: 8, tile_n: 4, pack_weights: off}\n"
                            "  schedule:\n    vectorize: true\n    min_parallel_work: 4096\n",
    "passopts_flat.yaml": "pass_options:\n  expand.tile_m: 8\n  fold_constants.batchnorm: false\n"
                          "  schedule.parallel: on\n  dce.enabled: true\n",
    "unknown.yaml": "target: none\nbogus_key: 3\ncategory: edge\n",
    "bad_type.yaml": "# options\ntarget: 5\napproximate_math: maybe\n",
    "flow.yaml": "{target: rocm, category: edge, pass_options: {memplan.enabled: false}}\n",
    "anchors.yaml": "base: &b {enabled: false}\npass_options:\n  map_fusion: *b\n  'dce_late': *b\n",
    "multi_doc.yaml": "---\ntarget: none\n...\n---\ntarget: cuda\n",
    "empty_passopts.yaml": "target: openmp\npass_options:\n",
    "quoted.yaml": "target: \"sequential\"\nmarch: 'x86-64-v3'\ncontraction_precision: !!str high\n",
}


def main():
    out = Path(sys.argv[1]) if len(sys.argv) > 1 else HERE / "corpus"
    names = ("pt2", "json", "safetensors", "npy", "yaml", "expr")
    for n in names:
        shutil.rmtree(out / n, ignore_errors=True)
    tmp = out / ".tmp"
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    exprs = set(HAND_EXPRS)
    try:
        for name, ep in exports():
            pt2 = tmp / f"{name}.pt2"
            export.save(ep, pt2, "pt2")
            put(out / "pt2", f"{name}.pt2", pt2.read_bytes())
            with zipfile.ZipFile(pt2) as z:
                for entry in z.namelist():
                    if entry.endswith("models/model.json"):
                        text = z.read(entry)
                        put(out / "json", f"{name}_model.json", text)
                        expr_strings(json.loads(text), exprs)
                    elif entry.endswith("model_weights_config.json") and name == "conv_dyn":
                        put(out / "json", f"{name}_weights_config.json", z.read(entry))
            # The JSON form's program is the archive's model.json (put keeps one).
            wpath = export.save(ep, tmp / f"{name}.json", "json")
            put(out / "json", f"{name}_serialized.json", (tmp / f"{name}.json").read_bytes())
            if name in ("mlp", "conv_dyn"):
                put(out / "safetensors", f"{name}.safetensors", wpath.read_bytes())
        put(out / "pt2", "mlp_deflated.pt2", rezip_deflated(tmp / "mlp.pt2"))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    put(out / "json", "bigints.json", '{"end": 9223372036854775807, "neg": -9223372036854775808, '
                                      '"f": [1.5e300, "Infinity", "-Infinity", "NaN"], "n": null}\n')
    put(out / "json", "union.json", '[{"as_none": true}, {"as_ints": [1, -2, 30000000000000000]}, '
                                    '{"as_float": 0.125}, {"as_string": "tanh\\u00e9\\n"}]')
    # One tensor of every dtype the reader knows, and a header with no tensors.
    tensors = {"f64": torch.ones(2, dtype=torch.float64), "bf16": torch.ones(3, dtype=torch.bfloat16),
               "i16": torch.arange(2, dtype=torch.int16), "b": torch.tensor([True]),
               "u8": torch.arange(3, dtype=torch.uint8), "s": torch.tensor(2.0)}
    export.write_safetensors(tensors, out / "safetensors" / "dtypes.safetensors")
    export.write_safetensors({}, out / "safetensors" / "empty.safetensors")
    npy_seeds(out / "npy")
    for fname, text in YAML_SEEDS.items():
        put(out / "yaml", fname, text)
    for i, e in enumerate(sorted(exprs)):
        put(out / "expr", f"e{i:03d}.txt", e)
    total = sum(f.stat().st_size for n in names for f in (out / n).iterdir())
    print(f"{out}: {sum(len(list((out / n).iterdir())) for n in names)} seeds, {total} bytes")


if __name__ == "__main__":
    main()
