#!/usr/bin/env python3
"""Seed corpora of the graph harnesses (fuzz_import, fuzz_pipeline) from real exports.

    python3 test/fuzz/make_graph_seeds.py        # rewrites test/fuzz/corpus/{import,pipeline}/

Both harnesses read a "bundle" (test/fuzz/graph_bundle.h): the model JSON of an
ExportedProgram, then files, each introduced by a line "@@file NAME":

    {"graph_module": ...}            models/model.json of the archive
    @@file data/weights/model_weights_config.json
    {"config": {"a.weight": {"path_name": "weight_0", "tensor_meta": ...}}}
    @@file data/weights/weight_0
    <raw bytes>

which the harness lays out as an extracted .pt2 archive (import reads the
weights through the same code as from a .pt2), or, when a file is named
weights.safetensors, as a bare JSON program with --weights. So a mutation
lands in the graph, the weight configuration or the weight bytes, never in
the zip container (fuzz_pt2 covers that).

Models: an MLP, conv + batch norm + relu + pool, attention with layer norm,
one heavy on reshape/slice/cat/permute, and an MLP with a dynamic batch dim;
each exported with torch.export at the training IR (the default) and at Core
ATen (run_decompositions), from torch.export.save's archive. The MLP also as
JSON + safetensors. Small on purpose: the whole corpus stays well under 2 MB.
"""

import io
import sys
import zipfile
from pathlib import Path

import torch

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
import export as ex  # noqa: E402  (test/export.py)

SEP = b"\n@@file "


class Mlp(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = torch.nn.Linear(8, 16)
        self.fc2 = torch.nn.Linear(16, 4)

    def forward(self, x):
        return self.fc2(torch.relu(self.fc1(x)))


class ConvBn(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv2d(3, 4, 3, padding=1)
        self.bn = torch.nn.BatchNorm2d(4)
        self.pool = torch.nn.MaxPool2d(2)

    def forward(self, x):
        return self.pool(torch.relu(self.bn(self.conv(x))))


class Attn(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.ln = torch.nn.LayerNorm(8)
        self.qkv = torch.nn.Linear(8, 24)

    def forward(self, x):
        b, t, c = x.shape
        q, k, v = self.qkv(self.ln(x)).split(8, dim=-1)
        q, k, v = (y.view(b, t, 2, 4).transpose(1, 2) for y in (q, k, v))
        y = torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True)
        return y.transpose(1, 2).reshape(b, t, c) + x


class Cache(torch.nn.Module):
    """State: a KV cache written at positions (index_copy_, Core ATen's index_put
    and buffer_mutation) and a counter (add_), both buffers of the instance."""

    def __init__(self):
        super().__init__()
        self.register_buffer("k", torch.zeros(1, 6, 4), persistent=False)
        self.register_buffer("n", torch.zeros(1, dtype=torch.int64))

    def forward(self, x, pos):
        self.k.index_copy_(1, pos, x)
        self.n.add_(pos.shape[0])
        return self.k.sum(1) * self.n


class Shapes(torch.nn.Module):
    def forward(self, x):
        a = x[:, 1:3]
        b = x.permute(1, 0)[:2].t()
        c = torch.cat([a, b, x[:, :1]], dim=1)
        d = c.reshape(2, -1).unsqueeze(0).expand(3, 2, 5)
        return d.flatten(1).sum(0, keepdim=True), torch.stack([x, x * 2], 0).squeeze()


def bundle_of_pt2(data):
    """The bundle of a .pt2 archive: models/model.json, then its weights and constants."""
    z = zipfile.ZipFile(io.BytesIO(data))
    root = next(n for n in z.namelist() if n.endswith("archive_format"))[: -len("archive_format")]
    out = [z.read(root + "models/model.json")]
    for n in sorted(z.namelist()):
        rel = n[len(root):]
        if rel.startswith(("data/weights/", "data/constants/")):
            out.append(SEP + rel.encode() + b"\n" + z.read(n))
    return b"".join(out)


def bundle_of_json(ep):
    from torch._export.serde.serialize import serialize

    buf = io.BytesIO()
    tmp = Path(sys.argv[0]).resolve().parent / ".seed.safetensors"
    ex.write_safetensors(ex.program_tensors(ep), tmp)
    st = tmp.read_bytes()
    tmp.unlink()
    buf.write(serialize(ep).exported_program)
    buf.write(SEP + b"weights.safetensors\n" + st)
    return buf.getvalue()


def pt2_bytes(ep):
    buf = io.BytesIO()
    torch.export.save(ep, buf)
    return buf.getvalue()


def main():
    from torch.export import Dim

    torch.manual_seed(0)
    models = [
        ("mlp", Mlp(), (torch.randn(2, 8),), None),
        ("convbn", ConvBn(), (torch.randn(1, 3, 8, 8),), None),
        ("attn", Attn(), (torch.randn(1, 4, 8),), None),
        ("shapes", Shapes(), (torch.randn(2, 4),), None),
        ("cache", Cache(), (torch.randn(1, 2, 4), torch.tensor([3, 1])), None),
        ("dynamic", Mlp(), (torch.randn(3, 8),), ({0: Dim("batch", min=1, max=64)},)),
    ]
    seeds = {}
    for name, model, args, dyn in models:
        model.eval()
        with torch.no_grad():
            ep = torch.export.export(model, args, dynamic_shapes=dyn)
            seeds[f"{name}_training"] = bundle_of_pt2(pt2_bytes(ep))
            if name == "mlp":
                seeds["mlp_json"] = bundle_of_json(ep)
            seeds[f"{name}_core"] = bundle_of_pt2(pt2_bytes(ep.run_decompositions()))
    total = 0
    for corpus in ("import", "pipeline"):
        d = HERE / "corpus" / corpus
        d.mkdir(parents=True, exist_ok=True)
        for old in d.iterdir():
            old.unlink()
        for name, data in seeds.items():
            (d / f"{name}.bundle").write_bytes(data)
            total += len(data)
    print(f"{len(seeds)} seeds in each of corpus/import and corpus/pipeline, {total} bytes in all")


if __name__ == "__main__":
    main()
