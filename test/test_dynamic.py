"""Dynamic shapes: exports with dynamic_shapes= compile to libraries that take
their dims at run time, or, with --shape, --dim or --dynamic=no, specialized.

By default each dynamic dim of an export stays a symbol with the export's
range: the library takes the dims at run time (NAME_set_dims / NAME_run_dims,
or `doccc run`, which infers them from the input arrays) and checks them
against the ranges and the export's guards (DOCCC_ERR_SHAPE, with a message
naming the dim, its value and the range). --shape or --dim fixes a dim,
--dynamic=no fixes every dim at the export's example size: such a library
is specialized, as before run-time dims, and the graph's size arithmetic
(sym_size, _operator.*, torch.sym_*) and guards (_assert_scalar) are folded
at compile time. --max-dim SYM=N caps a dim's range. item() /
_local_scalar_dense stay run-time numbers. Every case is compared with eager
PyTorch, on each CPU target, in both IR levels; test_dynamic_models.py runs
whole models (MLP, CNN, ResNet-18, BERT, Qwen2) at many sizes.
"""

import json
import os
import subprocess
from pathlib import Path

import pytest

from conftest import CPU_TARGETS, IRS, TARGETS, target_args, compile_model, doccc_cmd, fmt_result, header_of, parse_header, \
    load_lib, macro_shape, require

RTOL, ATOL = 1e-4, 1e-5


def export(tmp, name, model, args, dynamic_shapes, ir):
    torch = require("torch")
    ep = torch.export.export(model.eval(), args, dynamic_shapes=dynamic_shapes)
    if ir == "core":
        ep = ep.run_decompositions()
    path = Path(tmp) / f"{name}_{ir}.pt2"
    torch.export.save(ep, str(path))
    return path, ep


def check(lib, model, inputs):
    torch = require("torch")
    np = require("numpy")
    with torch.no_grad():
        want = model(*inputs)
    want = want if isinstance(want, tuple) else (want,)
    got = load_lib(lib)(*[t.numpy() for t in inputs])  # the Python loader: no .npy round trip
    got = got if isinstance(got, tuple) else (got,)
    assert len(got) == len(want)
    for i, (g, w) in enumerate(zip(got, want)):
        w = w.numpy()
        assert g.shape == w.shape, f"output {i}: shape {g.shape}, torch {w.shape}"
        np.testing.assert_allclose(g, w, rtol=RTOL, atol=ATOL, err_msg=f"output {i}")


def models():
    torch = require("torch")
    nn = torch.nn

    class Mlp(nn.Module):
        """Dynamic batch: sym_size, _operator.mul in a view, view(-1), a guard."""

        def __init__(self):
            super().__init__()
            torch.manual_seed(0)
            self.l1 = nn.Linear(8, 16)
            self.l2 = nn.Linear(16, 4)

        def forward(self, x):
            b = x.shape[0]
            torch._check(b != 1000)
            y = self.l2(torch.relu(self.l1(x)))
            z = y.reshape(b * 2, 2) + x.sum()
            return z, y.view(-1) * (b // 2), torch.ones(b, 3) * b

    class Attn(nn.Module):
        """Dynamic sequence: heads split with T, arange(T), causal attention."""

        def __init__(self):
            super().__init__()
            torch.manual_seed(1)
            self.qkv = nn.Linear(16, 48)
            self.pos = nn.Embedding(64, 16)

        def forward(self, x):
            B, T, C = x.shape
            x = x + self.pos(torch.arange(T))
            q, k, v = self.qkv(x).split(C, dim=2)
            q = q.view(B, T, 4, C // 4).transpose(1, 2)
            k = k.view(B, T, 4, C // 4).transpose(1, 2)
            v = v.view(B, T, 4, C // 4).transpose(1, 2)
            y = torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True)
            return y.transpose(1, 2).reshape(B, T, C)

    class Pairs(nn.Module):
        """A derived dim (2*s): view into pairs and the half-size as a factor."""

        def forward(self, x):
            b = x.shape[0]
            return x.view(b // 2, 2, -1).sum(1) * (b // 2)

    return Mlp(), Attn(), Pairs()


@pytest.fixture(scope="module")
def dyn(tmp_path_factory):
    """Exports of the three models with dynamic dims, per IR level."""
    torch = require("torch")
    from torch.export import Dim
    mlp, attn, pairs = models()
    tmp = tmp_path_factory.mktemp("dyn")
    out = {}
    for ir in IRS:
        out["mlp", ir] = export(tmp, "mlp", mlp, (torch.randn(3, 8),), ({0: Dim("batch", min=1, max=64)},), ir)[0]
        out["attn", ir] = export(tmp, "attn", attn, (torch.randn(2, 5, 16),),
                                 ({0: Dim("b", max=8), 1: Dim("t", min=2, max=64)},), ir)[0]
        out["pairs", ir] = export(tmp, "pairs", pairs, (torch.randn(4, 8),), ({0: Dim("h", min=2, max=64) * 2},), ir)[0]
    out["models"] = {"mlp": mlp, "attn": attn, "pairs": pairs}
    return out


@pytest.mark.parametrize("ir", IRS)
@pytest.mark.parametrize("target", TARGETS)
def test_dynamic_batch_fixed_and_chosen(dyn, tmp_path, target, ir):
    """--dynamic=no: compiled for the example size (with a note), and for --shape."""
    torch = require("torch")
    src, model = dyn["mlp", ir], dyn["models"]["mlp"]
    r = doccc_cmd(src, *target_args(target), "-o", f"{tmp_path}/a/", "--dynamic=no")
    assert r.returncode == 0, fmt_result(r)
    assert "input 'x' dim 0 is dynamic" in r.stderr and "compiled for 3" in r.stderr, r.stderr
    lib = Path(f"{tmp_path}/a/lib{src.stem}.so")
    assert not any(k.endswith("_NUM_DIMS") for k in parse_header(header_of(lib))), "--dynamic=no: run-time dims"
    check(lib, model, (torch.randn(3, 8),))
    lib = compile_model(src, target, tmp_path / "b", "--shape", "x=17,8")
    h = parse_header(header_of(lib))
    name = src.stem.upper()
    assert macro_shape(h[f"{name}_INPUT0_SHAPE"]) == (17, 8)
    assert f"{name}_NUM_DIMS" not in h, "--shape fixes the only dim: no run-time dims"
    assert "dims s" in header_of(lib).read_text().split("*/")[0], "the header's comment names the specialization"
    check(lib, model, (torch.randn(17, 8),))


@pytest.mark.parametrize("ir", IRS)
@pytest.mark.parametrize("target", CPU_TARGETS)
@pytest.mark.parametrize("which, sizes", [
    ("mlp", [(1, 8), (2, 8), (13, 8), (64, 8)]),
    ("attn", [(1, 2, 16), (3, 37, 16), (8, 64, 16), (5, 3, 16)]),
    ("pairs", [(4, 8), (10, 8), (128, 8), (62, 8)]),
])
def test_dynamic_by_default(dyn, tmp_path, target, ir, which, sizes):
    """Without size options the library takes its dims at run time: one
    library runs at every size (sym_size arithmetic, a guard, arange(T),
    causal SDPA, a derived dim 2*s), with no specialization note."""
    torch = require("torch")
    src, model = dyn[which, ir], dyn["models"][which]
    out = tmp_path / "o"
    out.mkdir()
    r = doccc_cmd(src, *target_args(target), "-o", f"{out}/")
    assert r.returncode == 0, fmt_result(r)
    assert "specialized" not in r.stderr and "compiled for" not in r.stderr, r.stderr
    lib = out / f"lib{src.stem}.so"
    assert f"{src.stem.upper()}_NUM_DIMS" in parse_header(header_of(lib)), "no run-time dims in the header"
    for shape in sizes:
        check(lib, model, (torch.randn(*shape),))


@pytest.mark.parametrize("target", CPU_TARGETS)
def test_dynamic_rows_wide_panels(tmp_path, target):
    """A linear layer at a run-time batch packs its weights in panels as
    wide as 4 register tiles (1104 columns: 64-wide panels, the last one
    part full): the full row tiles walk a panel's tiles, a single row
    (a decode step) takes the panel at once. Every row count agrees with
    eager."""
    torch = require("torch")
    from torch.export import Dim
    torch.manual_seed(0)
    m = torch.nn.Sequential(torch.nn.Linear(64, 1104), torch.nn.ReLU(), torch.nn.Linear(1104, 48))
    src, _ = export(tmp_path, "wide", m, (torch.randn(5, 64),), ({0: Dim("b", max=64)},), "core")
    lib = compile_model(src, target, tmp_path / "o")
    for rows in (1, 2, 5, 6, 13):
        check(lib, m, (torch.randn(rows, 64),))


@pytest.mark.parametrize("ir", IRS)
def test_dynamic_sequence_attention(dyn, tmp_path, ir):
    """Two symbols, one set by --dim and one by --shape; SDPA and arange sized by T."""
    torch = require("torch")
    src, model = dyn["attn", ir], dyn["models"]["attn"]
    for target in TARGETS:
        lib = compile_model(src, target, tmp_path / target, "--shape", "x=3,37,16")
        check(lib, model, (torch.randn(3, 37, 16),))


@pytest.mark.parametrize("ir", IRS)
def test_derived_dim(dyn, tmp_path, ir):
    """A dim that is 2*s: --shape solves for s; an odd size is refused."""
    torch = require("torch")
    src, model = dyn["pairs", ir], dyn["models"]["pairs"]
    lib = compile_model(src, "sequential", tmp_path / "a", "--shape", "x=10,8")
    check(lib, model, (torch.randn(10, 8),))
    r = doccc_cmd(src, "-o", f"{tmp_path}/b/", "--shape", "x=7,8")
    assert r.returncode == 1 and "which cannot be 7" in r.stderr, fmt_result(r)
    assert not (tmp_path / "b").exists() or not any((tmp_path / "b").iterdir())


def test_report_names_the_specialization(dyn, tmp_path):
    src = dyn["mlp", "training"]
    rep = tmp_path / "r.json"
    compile_model(src, "none", tmp_path, "--shape", "x=5,8", "--report", rep)
    sym = json.loads(rep.read_text())["dims"]
    assert sym.endswith("=5") and sym.startswith("s"), sym
    aten = json.loads(rep.read_text())["aten_ops"]
    assert "aten.sym_size.int" in aten and "_operator.mul" in aten, aten


@pytest.mark.parametrize("args, code, needle", [
    (["--shape", "x=65,8"], 1, "is outside the range the export allows for it, [1, 64]"),
    (["--shape", "x=4,9"], 1, "dim 1 of 'x' is static (8) in the export"),
    (["--shape", "y=4,8"], 1, "the model has no input 'y' (its inputs: x)"),
    (["--shape", "x=4"], 1, "'x' has rank 2, the option gives 1 sizes"),
    (["--shape", "x=4,eight"], 1, "is not a list of sizes"),
    (["--dim", "s999=4"], 1, "the model has no symbol 's999' (its symbols: s"),
    (["--dim", "s0"], 2, "--dim takes SYMBOL=SIZE"),
    (["--shape", "x"], 2, "--shape takes INPUT=D0,D1,..."),
])
def test_bad_dims(dyn, tmp_path, args, code, needle):
    r = doccc_cmd(dyn["mlp", "training"], "-o", f"{tmp_path}/o/", *args)
    assert r.returncode == code and needle in r.stderr, fmt_result(r)
    assert not (tmp_path / "o").exists() or not any((tmp_path / "o").iterdir())


def add_guard_ne(ep, value, text):
    """Add the guard x.shape[0] != value to ep's graph, as
    insert_deferred_runtime_asserts writes one: sym_size, ne, _assert_scalar."""
    torch = require("torch")
    import operator
    g = ep.graph
    x = next(n for n in g.nodes if n.op == "placeholder")
    with g.inserting_after(x):
        s = g.call_function(torch.ops.aten.sym_size.int, (x, 0))
    with g.inserting_after(s):
        ne = g.call_function(operator.ne, (s, value))
    with g.inserting_after(ne):
        a = g.call_function(torch.ops.aten._assert_scalar.default, (ne, text))
    s.meta["val"] = x.meta["val"].shape[0]
    ne.meta["val"] = s.meta["val"] != value
    a.meta["val"] = None


def test_guard_checked_at_compile_time(tmp_path):
    """An _assert_scalar on the shape symbols (torch inserts them for guards it
    cannot state as ranges) is checked against the sizes compiled for. Export
    folds a simple torch._check into the range, so the guard is added to the
    exported graph by hand, as insert_deferred_runtime_asserts does."""
    torch = require("torch")
    from torch.export import Dim

    class G(torch.nn.Module):
        def forward(self, x):
            return x * 2

    ep = torch.export.export(G(), (torch.randn(4, 3),), dynamic_shapes=({0: Dim("n", min=2, max=32)},))
    add_guard_ne(ep, 6, "n must not be 6")
    src = tmp_path / "g.pt2"
    torch.export.save(ep, str(src))
    lib = compile_model(src, "none", tmp_path / "ok", "--shape", "x=5,3")
    check(lib, G(), (torch.randn(5, 3),))
    r = doccc_cmd(src, "-o", f"{tmp_path}/bad/", "--shape", "x=6,3")
    assert r.returncode == 1 and "guard does not hold for the sizes compiled for (s" in r.stderr, fmt_result(r)
    assert "n must not be 6" in r.stderr, fmt_result(r)
    assert not (tmp_path / "bad").exists() or not any((tmp_path / "bad").iterdir())


@pytest.mark.parametrize("ir", IRS)
def test_item_is_a_run_time_number(tmp_path, ir):
    """x * y.item() + z.sum().item(): item / _local_scalar_dense read at run time."""
    torch = require("torch")

    class M(torch.nn.Module):
        def forward(self, x, y, z, k):
            n = k.item()
            torch._check(n >= 0)  # a guard on a run-time number: not checkable at compile time
            return x * y.item() + z.sum().item(), torch.where(x > 0, x, y.item()), x + n

    m = M()
    src, _ = export(tmp_path, "item", m, (torch.randn(3, 8), torch.tensor(2.0), torch.randn(4), torch.tensor(3)),
                    None, ir)
    for target in TARGETS:
        lib = compile_model(src, target, tmp_path / target)
        check(lib, m, (torch.randn(3, 8), torch.tensor(-1.5), torch.randn(4), torch.tensor(7)))


@pytest.mark.parametrize("fn, needle", [
    # a run-time number where the lowering needs a constant
    (lambda x, y: torch_nn_f().leaky_relu(x, y.item()), "read from a tensor at run time (item()); doccc takes such"),
    # Python arithmetic on it
    (lambda x, y: x * (y.item() * 2), "doccc does not compile Python arithmetic on such numbers"),
])
def test_item_where_a_constant_is_needed(tmp_path, fn, needle):
    torch = require("torch")

    class M(torch.nn.Module):
        def forward(self, x, y):
            return fn(x, y)

    src, _ = export(tmp_path, "itemc", M(), (torch.randn(3, 8), torch.tensor(0.1)), None, "training")
    r = doccc_cmd(src, "-o", f"{tmp_path}/o/")
    assert r.returncode == 1 and needle in r.stderr, fmt_result(r)
    assert not (tmp_path / "o").exists() or not any((tmp_path / "o").iterdir())


def torch_nn_f():
    return require("torch").nn.functional


# ---- run-time dims: DOCCC_ERR_SHAPE, --max-dim, --dynamic -----------------------
# Small models whose every node takes run-time dims (linear, relu, add, view,
# select), so that these tests check the dims' checks and nothing else.

@pytest.fixture(scope="module")
def ready(tmp_path_factory):
    """Exports with dynamic dims and their dynamic libraries (none target):
    lin (batch [1, 64]), two (x + y, one dim n [2, 64] for both), guard
    (an _assert_scalar n != 6 on batch [2, 32]), derived (dim 0 is 2*h,
    h in [2, 64]). {name: (pt2, lib, eager model, symbol name)}."""
    torch = require("torch")
    from torch.export import Dim
    tmp = tmp_path_factory.mktemp("ready")
    torch.manual_seed(0)

    class Lin(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.l = torch.nn.Linear(8, 4)

        def forward(self, x):
            return torch.relu(self.l(x))

    class Two(torch.nn.Module):
        def forward(self, x, y):
            return x + y

    class G(torch.nn.Module):
        def forward(self, x):
            return x * 2

    class Derived(torch.nn.Module):
        def forward(self, x):
            b = x.shape[0]
            return x.view(b // 2, 2, -1)[:, 1] + 1

    n = Dim("n", min=2, max=64)
    eps = {
        "lin": (Lin().eval(), torch.export.export(Lin().eval(), (torch.randn(3, 8),),
                                                  dynamic_shapes=({0: Dim("batch", min=1, max=64)},))),
        "two": (Two(), torch.export.export(Two(), (torch.randn(4, 8), torch.randn(4, 8)),
                                           dynamic_shapes=({0: n}, {0: n}))),
        "guard": (G(), torch.export.export(G(), (torch.randn(4, 3),), dynamic_shapes=({0: Dim("n", min=2, max=32)},))),
        "derived": (Derived(), torch.export.export(Derived(), (torch.randn(4, 8),),
                                                   dynamic_shapes=({0: Dim("h", min=2, max=64) * 2},))),
    }
    eps["lin"] = (eps["lin"][1].module(), eps["lin"][1])
    # export folds a simple torch._check into the range or drops it
    add_guard_ne(eps["guard"][1], 6, "n must not be 6")
    out = {}
    for name, (model, ep) in eps.items():
        src = tmp / f"{name}.pt2"
        torch.export.save(ep, str(src))
        r = doccc_cmd(src, "-o", f"{tmp}/{name}/")
        assert r.returncode == 0, fmt_result(r)
        assert "specialized" not in r.stderr, r.stderr
        lib = tmp / name / f"lib{name}.so"
        h = parse_header(header_of(lib))
        assert h.get(f"{name.upper()}_NUM_DIMS") == "1", f"{name}: not a library with one run-time dim"
        out[name] = (src, lib, model, h[f"{name.upper()}_DIM0_NAME"].strip('"'))
    return out


def run_fails(lib, arrays, tmp_path):
    """doccc run LIB on arrays, which must fail: exit 1; returns stderr."""
    np = require("numpy")
    tmp_path.mkdir(parents=True, exist_ok=True)
    args = ["run", lib]
    for i, a in enumerate(arrays):
        p = tmp_path / f"in{i}.npy"
        np.save(p, a)
        args += ["-i", p]
    r = doccc_cmd(*args, "-o", tmp_path / "y.npy")
    assert r.returncode == 1, fmt_result(r)
    assert not (tmp_path / "y.npy").exists(), "a failed run wrote its output"
    return r.stderr


def f32(*shape):
    return require("numpy").random.default_rng(sum(shape)).standard_normal(shape).astype("float32")


@pytest.mark.parametrize("batch, rng", [(65, "[1, 64]"), (0, "[1, 64]"), (1000, "[1, 64]")])
def test_run_dim_outside_range(ready, tmp_path, batch, rng):
    _, lib, _, sym = ready["lin"]
    err = run_fails(lib, [f32(batch, 8)], tmp_path)
    assert f"dim {sym} = {batch} is outside the range the export allows, {rng}" in err, err


def test_run_range_ends_and_inside(ready, tmp_path):
    torch = require("torch")
    _, lib, model, _ = ready["lin"]
    for b in (1, 2, 31, 64):
        check(lib, model, (torch.randn(b, 8),))


def test_run_inputs_disagree(ready, tmp_path):
    """x and y share dim n: sizes 4 and 5 are refused, naming the input and both sizes."""
    torch = require("torch")
    _, lib, model, sym = ready["two"]
    err = run_fails(lib, [f32(4, 8), f32(5, 8)], tmp_path)
    assert "input 1 (y) dim 0 is 5, but the other inputs' sizes make it" in err and f"{sym}=4" in err, err
    err = run_fails(lib, [f32(4, 8), f32(4, 9)], tmp_path / "static")
    assert "input 1 (y) dim 1 is 9, but the other inputs' sizes make it 8" in err, err
    check(lib, model, (torch.randn(5, 8), torch.randn(5, 8)))


def test_run_rank_mismatch(ready, tmp_path):
    _, lib, _, _ = ready["lin"]
    err = run_fails(lib, [f32(3, 8, 1)], tmp_path)
    assert "input 0 ('x') has rank 3 but the model expects rank 2" in err, err
    err = run_fails(lib, [f32(8)], tmp_path / "one")
    assert "has rank 1 but the model expects rank 2" in err, err


def test_run_guard_broken(ready, tmp_path):
    """The export's guard n != 6 holds at 5 and 7 and fails at 6, with the
    guard's own message and the dim's value."""
    torch = require("torch")
    _, lib, model, sym = ready["guard"]
    for n in (2, 5, 7, 32):
        check(lib, model, (torch.randn(n, 3),))
    err = run_fails(lib, [f32(6, 3)], tmp_path)
    assert "the dims break the export's guard" in err and "n must not be 6" in err and f"{sym}=6" in err, err


def test_run_derived_dim(ready, tmp_path):
    """Dim 0 is 2*h: even sizes in [4, 128] run, an odd one or 130 does not."""
    torch = require("torch")
    _, lib, model, sym = ready["derived"]
    for n in (4, 6, 62, 128):
        check(lib, model, (torch.randn(n, 8),))
    err = run_fails(lib, [f32(7, 8)], tmp_path)
    assert f"input 0 (x) dim 0 is 7, which is not {sym}*2 for any {sym}" in err, err
    err = run_fails(lib, [f32(130, 8)], tmp_path / "big")
    assert f"dim {sym} = 65 is outside the range the export allows, [2, 64]" in err, err


def test_max_dim_caps_the_range(ready, tmp_path):
    """--max-dim SYM=16: the header's max is 16, a run at 16 works, at 17 it
    is DOCCC_ERR_SHAPE's message with the capped range; the report shows the
    dims with their ranges and the workspace's bound."""
    torch = require("torch")
    src, _, model, sym = ready["lin"]
    rep = tmp_path / "r.json"
    lib = compile_model(src, "sequential", tmp_path / "o", "--max-dim", f"{sym}=16", "--report", rep)
    h = parse_header(header_of(lib))
    assert (h["LIN_DIM0_MIN"], h["LIN_DIM0_MAX"]) == ("1", "16"), h
    for b in (1, 16):
        check(lib, model, (torch.randn(b, 8),))
    err = run_fails(lib, [f32(17, 8)], tmp_path)
    assert f"dim {sym} = 17 is outside the range the export allows, [1, 16]" in err, err
    report = json.loads(rep.read_text())
    assert report["run_time_dims"] == [{"name": sym, "min": 1, "max": 16}], report["run_time_dims"]
    assert report["workspace"]["bound"] == "max_dims", report.get("workspace")
    assert report["workspace"]["bytes_at_create"] == report["workspace"]["max_bytes"] >= report["workspace_bytes"], report["workspace"]


def test_report_of_an_unbounded_dim(tmp_path):
    """A dim without a finite max: the workspace grows on demand in
    set_dims, and the report says so."""
    torch = require("torch")
    from torch.export import Dim

    class M(torch.nn.Module):
        def forward(self, x):
            return torch.relu(x) + 1

    src = tmp_path / "unb.pt2"
    torch.export.save(torch.export.export(M(), (torch.randn(3, 8),), dynamic_shapes=({0: Dim("b", min=1)},)), str(src))
    rep = tmp_path / "r.json"
    lib = compile_model(src, "none", tmp_path / "o", "--report", rep)
    report = json.loads(rep.read_text())
    assert len(report["run_time_dims"]) == 1 and report["run_time_dims"][0]["max"] is None, report["run_time_dims"]
    assert report["workspace"]["bound"] == "on_demand", report.get("workspace")
    assert report["workspace"]["max_bytes"] is None and report["workspace"]["bytes_at_create"] == report["workspace_bytes"]
    for b in (1, 300):
        check(lib, M(), (torch.randn(b, 8),))


@pytest.mark.parametrize("value, code, needle", [
    ("foo=16", 1, "--max-dim foo=16: 'foo' is not a run-time dim of the model (its run-time dims: {sym})"),
    ("{sym}=0", 1, "--max-dim takes SYMBOL=N with N >= 1 (got '{sym}=0')"),
    ("{sym}=x", 1, "--max-dim takes SYMBOL=N with N >= 1 (got '{sym}=x')"),
    ("{sym}", 2, "--max-dim takes SYMBOL=N (got '{sym}')"),
])
def test_max_dim_refused(ready, tmp_path, value, code, needle):
    src, _, _, sym = ready["lin"]
    r = doccc_cmd(src, "-o", f"{tmp_path}/o/", "--max-dim", value.format(sym=sym))
    assert r.returncode == code and needle.format(sym=sym) in r.stderr, fmt_result(r)
    assert not (tmp_path / "o").exists() or not any((tmp_path / "o").iterdir())


def test_max_dim_below_the_range(ready, tmp_path):
    src, _, _, sym = ready["two"]
    r = doccc_cmd(src, "-o", f"{tmp_path}/o/", "--max-dim", f"{sym}=1")
    assert r.returncode == 1 and f"the export allows {sym} only from 2" in r.stderr, fmt_result(r)


@pytest.mark.parametrize("value", ["bogus", "", "YES"])
def test_dynamic_option_refused(ready, tmp_path, value):
    r = doccc_cmd(ready["lin"][0], "-o", f"{tmp_path}/o/", f"--dynamic={value}")
    assert r.returncode == 2 and f"--dynamic takes yes or no (got '{value}')" in r.stderr, fmt_result(r)


def test_dynamic_yes_and_no(ready, tmp_path):
    """--dynamic=yes is the default; --dynamic=no gives a fixed library at
    the example size (3) that refuses another."""
    torch = require("torch")
    src, _, model, _ = ready["lin"]
    lib = compile_model(src, "none", tmp_path / "yes", "--dynamic=yes")
    assert parse_header(header_of(lib)).get("LIN_NUM_DIMS") == "1"
    lib = compile_model(src, "none", tmp_path / "no", "--dynamic=no")
    h = parse_header(header_of(lib))
    assert "LIN_NUM_DIMS" not in h and macro_shape(h["LIN_INPUT0_SHAPE"]) == (3, 8), h
    check(lib, model, (torch.randn(3, 8),))
    err = run_fails(lib, [f32(4, 8)], tmp_path)
    assert "has shape [4, 8] but the model expects [3, 8]" in err, err


def test_inspect_shows_the_dims(ready):
    """doccc inspect --json of a dynamic library: the dims with their ranges,
    and each dynamic size as its expression."""
    _, lib, _, sym = ready["lin"]
    r = doccc_cmd("inspect", lib, "--json")
    assert r.returncode == 0, fmt_result(r)
    info = json.loads(r.stdout)
    assert info["dims"] == [{"name": sym, "min": 1, "max": 64}], info.get("dims")
    assert info["inputs"][0]["shape"] == [sym, 8] and info["outputs"][0]["shape"] == [sym, 4], info
    r = doccc_cmd("inspect", lib)
    assert r.returncode == 0 and sym in r.stdout and "[1, 64]" in r.stdout, fmt_result(r)


@pytest.mark.parametrize("name", ["lin", "two", "guard", "derived"])
def test_generated_source_passes_format_checks(ready, tmp_path, name):
    """The run-time dims' checks and messages in the generated C (set_dims,
    infer_dims, the guards) pass the C compiler's printf format checks as
    errors: a wrong argument there is undefined behaviour in the library
    (one such slip segfaulted a run before this test)."""
    src, _, _, _ = ready[name]
    out = tmp_path / "o"
    compile_model(src, "sequential", out, "--emit-source")
    (c,) = out.glob("*.c")
    cc = os.environ.get("CC_FOR_TESTS", "clang")
    r = subprocess.run([cc, "-fsyntax-only", "-std=c11", "-Wformat=2", "-Werror=format", "-Werror=format-security",
                        "-I", str(out), str(c)], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
