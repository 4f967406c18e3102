"""Run-time dims: one library per model serves every size the export allows.

Each model is exported with dynamic dims (dynamic_shapes=), compiled once per
IR level and target (CPU ones and cuda --simulate) with no size option, so that the library takes its
dims at run time, and that one library is run by `doccc run` (which infers
the dims from the input arrays) at several sizes: both ends of the range, 1,
primes, and sizes that are no multiple of any tile size (7, 31, 33). Every
run is compared with eager PyTorch at rtol 1e-4 / atol 1e-5.

    mlp       three Linear+ReLU, dynamic batch [1, 64]
    cnn       test/models.py's SmallCNN (conv, batchnorm, maxpool, residual,
              adaptive avgpool), 16x16 images, dynamic batch [1, 33]
    resnet18  examples/resnet18's ResNet-18, 10 classes, 64x64 images,
              dynamic batch [1, 9]
    effnet    test/bench_models.py's EfficientNet-B0 at its small size
              (64x64: depthwise 3x3 and 5x5 at strides 1 and 2, pointwise
              convolutions of few channels, squeeze-excitation, SiLU),
              dynamic batch [1, 5]
    bert      a one-layer BERT encoder (embeddings, LayerNorm, SDPA with the
              attention mask as an input, GELU, pooler), dynamic batch [1, 4]
              and sequence [1, 64]
    qwen2     a Qwen2 decoder layer (RMSNorm, rotary embedding, GQA, causal
              SDPA, SiLU MLP), dynamic sequence [1, 64]
    ops       tril/masked_fill/softmax attention, constant and reflect
              padding, flip, roll, repeat, split, dropout, a SymInt
              operand and a full() of one on a dynamic sequence [4, 64]
    ops2      square, lerp, nan_to_num, round, sort, topk, vector norms,
              nearest and bilinear resampling, argmax/argmin, cumsum and
              one_hot and glu, along and across a dynamic batch [2, 40]

Each test also asserts that the library is dynamic: the compile printed no
note that it was specialized to the export's example sizes, and the header
names the run-time dims (NAME_NUM_DIMS, NAME_DIMk_NAME/MIN/MAX) with the
export's ranges.
"""

import pytest

from conftest import IRS, TARGETS, compare, compile_model, doccc_cmd, fmt_result, header_of, \
    parse_header, require, run_lib, target_args

# Sizes to run each library at: per model, (args maker, sizes). A size is the
# tuple of the model's dims in the order of its dynamic_shapes.
SIZES = {
    "mlp": [(1,), (7,), (31,), (33,), (64,)],
    "cnn": [(1,), (2,), (7,), (31,), (33,)],
    "resnet18": [(1,), (2,), (7,), (9,)],
    "effnet": [(1,), (3,), (5,)],
    "bert": [(1, 1), (2, 7), (3, 31), (4, 33), (1, 64), (4, 64)],
    "qwen2": [(1,), (7,), (31,), (33,), (64,)],
    "ops": [(4,), (5,), (31,), (64,)],
    "ops2": [(2,), (7,), (40,)],
}


def make_models():
    """{name: (model, example args, dynamic_shapes, inputs(size) -> args, ranges)}."""
    torch = require("torch")
    from torch.export import Dim
    import models
    import models_zoo

    def mlp():
        torch.manual_seed(0)
        m = torch.nn.Sequential(torch.nn.Linear(24, 40), torch.nn.ReLU(), torch.nn.Linear(40, 40), torch.nn.ReLU(),
                                torch.nn.Linear(40, 10)).eval()
        b = Dim("batch", min=1, max=64)
        return m, (torch.randn(3, 24),), ({0: b},), lambda s: (randn(s[0], 24, seed=s[0]),), [(1, 64)]

    def cnn():
        m = models.make_small_cnn()
        b = Dim("batch", min=1, max=33)
        return m, (torch.randn(3, 3, 16, 16),), ({0: b},), lambda s: (randn(s[0], 3, 16, 16, seed=s[0]),), [(1, 33)]

    def resnet18():
        m = models.resnet18_model.make_resnet18(num_classes=10, seed=0)
        b = Dim("batch", min=1, max=9)
        return m, (torch.randn(2, 3, 64, 64),), ({0: b},), lambda s: (randn(s[0], 3, 64, 64, seed=s[0]),), [(1, 9)]

    def effnet():
        import bench_models
        m, _ = bench_models.make("efficientnet_b0", 2, small=True)
        b = Dim("batch", min=1, max=5)
        return m, (torch.randn(2, 3, 64, 64),), ({0: b},), lambda s: (randn(s[0], 3, 64, 64, seed=s[0]),), [(1, 5)]

    def bert():
        torch.manual_seed(0)
        m = models_zoo.BertEncoder(vocab=100, hidden=32, layers=1, heads=2, inter=64, max_pos=64).eval()
        with torch.no_grad():
            for mod in m.modules():
                if isinstance(mod, (torch.nn.Linear, torch.nn.Embedding)):
                    torch.nn.init.normal_(mod.weight, 0.0, 0.2)
        b, s = Dim("batch", min=1, max=4), Dim("seq", min=1, max=64)
        spec = {0: b, 1: s}
        return m, bert_inputs(2, 9), (spec, spec, spec), lambda sz: bert_inputs(*sz), [(1, 4), (1, 64)]

    def qwen2():
        torch.manual_seed(0)
        m = models_zoo.Qwen2Layer(hidden=64, heads=4, kv_heads=2, inter=96).eval()
        with torch.no_grad():
            g = torch.Generator().manual_seed(1)
            for mod in m.modules():
                if isinstance(mod, models_zoo.RMSNorm):
                    mod.weight.copy_(torch.empty(mod.weight.shape).uniform_(0.5, 1.5, generator=g))
        s = Dim("seq", min=1, max=64)
        return m, (torch.randn(1, 9, 64),), ({1: s},), lambda sz: (randn(1, sz[0], 64, seed=sz[0]),), [(1, 64)]

    def ops():
        # the smaller ops on a run-time sequence T: a causal mask from
        # tril(ones(T, T)), masked_fill, padding (constant and reflect), flip,
        # roll, repeat, split along a fixed dim, dropout, a SymInt operand
        class Ops(torch.nn.Module):
            def __init__(self):
                super().__init__()
                torch.manual_seed(3)
                self.q = torch.nn.Linear(8, 8)
                self.drop = torch.nn.Dropout(0.1)

            def forward(self, x):
                t = x.shape[1]
                mask = torch.tril(torch.ones(t, t, dtype=torch.bool))
                a = (self.q(x) @ x.transpose(1, 2)).masked_fill(~mask, float("-inf")).softmax(-1) @ x
                p = torch.nn.functional.pad(x, (1, 2, 3, 0)) + 1
                r = torch.nn.functional.pad(x, (2, 2), mode="reflect")
                u, v = self.drop(x).split([3, 5], dim=2)
                return (a * (t // 2), p, r, torch.flip(x, [1]) + torch.roll(x, 2, 1), x.repeat(1, 2, 1), u - v.sum(-1, True),
                        torch.full((t, 2), t) + x[0, :, :2])

        s = Dim("seq", min=4, max=64)
        return Ops().eval(), (torch.randn(2, 9, 8),), ({1: s},), lambda sz: (randn(2, sz[0], 8, seed=sz[0]),), [(4, 64)]

    def ops2():
        # more ops on a run-time batch: elementwise math, sort and topk,
        # norms, resampling, arg reductions, scans and one_hot, along the
        # run-time dim and across it
        class Ops2(torch.nn.Module):
            def forward(self, x, img):
                F = torch.nn.functional
                e = torch.square(x) + torch.lerp(x, x * 2, 0.3) + torch.nan_to_num(x) + torch.round(x, decimals=2)
                s = torch.sort(x, dim=1)[0] + torch.topk(x, 3, dim=1)[0].sum(1, True) + torch.sort(x, dim=0)[0]
                n = torch.linalg.vector_norm(x, dim=1) + x.norm(dim=0).sum()
                u = F.interpolate(img, scale_factor=2, mode="nearest") + F.interpolate(img, size=(7, 5), mode="bilinear")[..., :4, :4].sum()
                a = torch.argmax(x, dim=1) + torch.argmin(x, dim=0).sum()
                c = torch.cumsum(x, dim=1) + torch.cumsum(x, dim=0)
                o = F.one_hot(torch.argmax(x, dim=1) % 5, 5).float().sum(1)
                return e, s, n, u, a, c, o, F.glu(x, -1)

        b = Dim("batch", min=2, max=40)
        return Ops2().eval(), (torch.randn(3, 8), torch.randn(3, 2, 4, 4)), ({0: b}, {0: b}), \
            lambda sz: (randn(sz[0], 8, seed=sz[0]), randn(sz[0], 2, 4, 4, seed=sz[0] + 1)), [(2, 40)]

    return {"mlp": mlp, "cnn": cnn, "resnet18": resnet18, "effnet": effnet, "bert": bert, "qwen2": qwen2, "ops": ops,
            "ops2": ops2}


def randn(*shape, seed):
    torch = require("torch")
    return torch.randn(*shape, generator=torch.Generator().manual_seed(1000 + seed))


def bert_inputs(batch, seq):
    """ids, token types and an attention mask; sample i ends in i padding
    tokens (never its first one)."""
    torch = require("torch")
    g = torch.Generator().manual_seed(batch * 100 + seq)
    ids = torch.randint(1, 100, (batch, seq), generator=g)
    types = torch.zeros(batch, seq, dtype=torch.int64)
    types[:, seq // 2:] = 1
    mask = torch.ones(batch, seq, dtype=torch.int64)
    for i in range(batch):
        pad = min(i, seq - 1)
        if pad:
            mask[i, seq - pad:] = 0
            ids[i, seq - pad:] = 0
    return ids, types, mask


class Exported:
    """Per worker: each (model, ir) exported once, with its eager model."""

    def __init__(self, base):
        self.base, self.makers, self.made, self.cache = base, make_models(), {}, {}

    def get(self, name, ir):
        """(path, eager model, example args, dynamic_shapes, inputs, ranges)."""
        torch = require("torch")
        if name not in self.made:
            self.made[name] = self.makers[name]()
        model, args, dyn, inputs, ranges = self.made[name]
        if (name, ir) not in self.cache:
            with torch.no_grad():
                ep = torch.export.export(model, args, dynamic_shapes=dyn)
                if ir == "core":
                    ep = ep.run_decompositions()
            path = self.base / f"{name}_{ir}.pt2"
            torch.export.save(ep, str(path))
            self.cache[name, ir] = path
        return (self.cache[name, ir], model, args, dyn, inputs, ranges)


@pytest.fixture(scope="module")
def exported(tmp_path_factory):
    return Exported(tmp_path_factory.mktemp("dynmodels"))


def assert_dynamic(lib, stderr, ranges):
    """The compile printed no specialization note and the header declares
    one run-time dim per entry of ranges, with the export's range."""
    assert "specialized to the export's example sizes" not in stderr, stderr
    assert "the export's example size" not in stderr, stderr
    h = parse_header(header_of(lib))
    name = lib.stem[3:].upper()
    assert f"{name}_NUM_DIMS" in h, f"{header_of(lib)} declares no run-time dims (no {name}_NUM_DIMS)"
    assert int(h[f"{name}_NUM_DIMS"]) == len(ranges), h[f"{name}_NUM_DIMS"]
    got = sorted((int(h[f"{name}_DIM{k}_MIN"]), int(h[f"{name}_DIM{k}_MAX"])) for k in range(len(ranges)))
    assert got == sorted(ranges), f"the header's dim ranges {got}, the export's {ranges}"


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("ir", IRS)
@pytest.mark.parametrize("model", list(SIZES))
def test_one_library_every_size(exported, tmp_path, model, ir, target):
    src, m, _, _, inputs, ranges = exported.get(model, ir)
    out = tmp_path / "o"
    out.mkdir()
    r = doccc_cmd(src, *target_args(target), "-o", f"{out}/")
    assert r.returncode == 0, fmt_result(r)
    lib = out / f"lib{src.stem}.so"
    assert_dynamic(lib, r.stderr, ranges)
    for size in SIZES[model]:
        check_at(lib, m, inputs(size), f"dynamic {model} {ir} {target} at {size}")


def check_at(lib, model, args, label):
    """The library's outputs on args against eager model(*args)."""
    torch = require("torch")
    with torch.no_grad():
        want = model(*args)
    want = want if isinstance(want, tuple) else (want,)
    got = run_lib(lib, [a.numpy() for a in args])
    assert len(got) == len(want)
    for i, (g, w) in enumerate(zip(got, want)):
        compare(g, w.numpy(), f"{label}: output {i}")


@pytest.mark.parametrize("model", ["mlp", "bert"])
def test_specialized_library_agrees(exported, tmp_path, model):
    """--dynamic=no and --shape still give a specialized library (no
    NAME_NUM_DIMS), with the same numbers as the dynamic one."""
    src, m, args, _, inputs, _ = exported.get(model, "training")
    size = SIZES[model][2]
    lib = compile_model(src, "sequential", tmp_path / "fixed", "--dynamic=no")
    h = parse_header(header_of(lib))
    assert not any(k.endswith("_NUM_DIMS") for k in h), "--dynamic=no declared run-time dims"
    check_at(lib, m, args, f"--dynamic=no {model} at the example size")
    shape = ["--shape", f"{arg_name(model)}={','.join(map(str, inputs(size)[0].shape))}"]
    lib = compile_model(src, "sequential", tmp_path / "shape", *shape)
    assert not any(k.endswith("_NUM_DIMS") for k in parse_header(header_of(lib))), "--shape declared run-time dims"
    check_at(lib, m, inputs(size), f"--shape {model} at {size}")


def arg_name(model):
    return {"mlp": "input", "bert": "input_ids"}[model]


def test_bench_dynamic_quick(tmp_path, root):
    """test/bench_dynamic.py in its quick mode (DOCCC_BENCH_QUICK=1): every
    row has both libraries' medians and a ratio, and it exits 0."""
    import json
    import os
    import subprocess
    import sys
    env = dict(os.environ, DOCCC_BENCH_QUICK="1")
    r = subprocess.run([sys.executable, str(root / "test" / "bench_dynamic.py"), "--out", str(tmp_path)],
                       capture_output=True, text=True, env=env, timeout=900)
    assert r.returncode == 0, f"exit {r.returncode}\n{r.stdout[-4000:]}\n{r.stderr[-4000:]}"
    rows = json.loads((tmp_path / "bench_dynamic.json").read_text())["rows"]
    assert {row["model"] for row in rows} == {"resnet18", "bert_mini"}, rows
    for row in rows:
        assert "ratio" in row and row["ratio"] > 0, row
    assert "run-time dims vs specialized" in r.stdout, r.stdout
