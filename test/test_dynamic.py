"""Dynamic shapes: exports with dynamic_shapes= compile, specialized.

doccc compiles static shapes. Each dynamic dim of an export is a symbol with
a range; doccc compiles for the export's example size unless --shape or
--dim names another, checks the value against the range, and folds the
graph's size arithmetic (sym_size, _operator.*, torch.sym_*) and guards
(_assert_scalar) at compile time. item() / _local_scalar_dense stay run-time
numbers. Every case is compared with eager PyTorch at the compiled size, on
each CPU target, in both IR levels.
"""

import json
from pathlib import Path

import pytest

from conftest import IRS, TARGETS, target_args, compile_model, doccc_cmd, fmt_result, header_of, parse_header, \
    macro_shape, require, run_lib

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
    got = run_lib(lib, [t.numpy() for t in inputs])
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
def test_dynamic_batch_default_and_chosen(dyn, tmp_path, target, ir):
    """Compiled for the example size by default (with a note), and for --shape."""
    torch = require("torch")
    src, model = dyn["mlp", ir], dyn["models"]["mlp"]
    r = doccc_cmd(src, *target_args(target), "-o", f"{tmp_path}/a/")
    assert r.returncode == 0, fmt_result(r)
    assert "input 'x' dim 0 is dynamic" in r.stderr and "compiled for 3" in r.stderr, r.stderr
    lib = Path(f"{tmp_path}/a/lib{src.stem}.so")
    check(lib, model, (torch.randn(3, 8),))
    lib = compile_model(src, target, tmp_path / "b", "--shape", "x=17,8")
    h = parse_header(header_of(lib))
    name = src.stem.upper()
    assert macro_shape(h[f"{name}_INPUT0_SHAPE"]) == (17, 8)
    assert "dims s" in header_of(lib).read_text().split("*/")[0], "the header's comment names the specialization"
    check(lib, model, (torch.randn(17, 8),))


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


def test_guard_checked_at_compile_time(tmp_path):
    """An _assert_scalar on the shape symbols (torch inserts them for guards it
    cannot state as ranges) is checked against the sizes compiled for. Export
    folds a simple torch._check into the range, so the guard is added to the
    exported graph by hand, as insert_deferred_runtime_asserts does."""
    torch = require("torch")
    import operator
    from torch.export import Dim

    class G(torch.nn.Module):
        def forward(self, x):
            return x * 2

    ep = torch.export.export(G(), (torch.randn(4, 3),), dynamic_shapes=({0: Dim("n", min=2, max=32)},))
    g = ep.graph
    x = next(n for n in g.nodes if n.op == "placeholder")
    with g.inserting_after(x):
        s = g.call_function(torch.ops.aten.sym_size.int, (x, 0))
    with g.inserting_after(s):
        ne = g.call_function(operator.ne, (s, 6))
    with g.inserting_after(ne):
        a = g.call_function(torch.ops.aten._assert_scalar.default, (ne, "n must not be 6"))
    s.meta["val"] = x.meta["val"].shape[0]
    ne.meta["val"] = s.meta["val"] != 6
    a.meta["val"] = None
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
