"""doccc check MODEL (and doccc MODEL --check): the op census, dtypes,
dynamic dims and GPU verdict of a program, without compiling.

  - a supported model with a dynamic batch: exit 0, every op counted as the
    graph has it and supported, the symbol with its range, the size it is
    compiled for and the input dim using it; the same as JSON; nothing
    written; no compiler run (check works with a CC that does not exist)
  - unsupported ops: exit 1, each with its count and reason (a known
    unsupported op with the op table's reason, an op doccc has no lowering
    for, a supported op with an argument it rejects), the supported ones
    still listed
  - the GPU verdict: a model whose attention needs more per-thread memory
    than the GPU has takes the host fallback, with the step named
"""

import json
from collections import Counter

import pytest

from conftest import doccc_cmd, fmt_result, require


def _export(tmp, name, mod, args, dynamic_shapes=None):
    torch = require("torch")
    with torch.no_grad():
        ep = torch.export.export(mod, args, dynamic_shapes=dynamic_shapes)
    p = tmp / f"{name}.pt2"
    torch.export.save(ep, str(p))
    census = Counter(str(n.target) for n in ep.graph.nodes if n.op == "call_function"
                     and str(n.target).startswith("aten."))
    return p, census


@pytest.fixture(scope="module")
def progs(tmp_path_factory):
    torch = require("torch")
    from torch.export import Dim
    tmp = tmp_path_factory.mktemp("check")

    class Mlp(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.a, self.b = torch.nn.Linear(8, 16), torch.nn.Linear(16, 4)

        def forward(self, x):
            return torch.softmax(self.b(torch.relu(self.a(x))), -1)

    class Bad(torch.nn.Module):
        def forward(self, x, i):
            y = torch.special.bessel_j0(x)                   # no lowering in doccc
            z = torch.nn.functional.dropout(x, 0.5, True)    # training-mode dropout: known unsupported
            w = torch.nn.functional.scaled_dot_product_attention(x[None], x[None], x[None], dropout_p=0.3)
            return y + z + w[0] + torch.relu(x), i * 2

    class Attn(torch.nn.Module):
        def forward(self, q, k, v):
            return torch.nn.functional.scaled_dot_product_attention(q, k, v)

    g = torch.Generator().manual_seed(0)
    out = {}
    out["mlp"] = _export(tmp, "mlp", Mlp().eval(), (torch.randn(3, 8, generator=g),),
                         ({0: Dim("batch", min=1, max=64)},))
    out["bad"] = _export(tmp, "bad", Bad(), (torch.rand(4, 6, generator=g) + 1, torch.arange(3)))
    out["attn"] = _export(tmp, "attn", Attn(), (torch.randn(1, 2, 4, 16, generator=g),
                                                torch.randn(1, 2, 20000, 16, generator=g),
                                                torch.randn(1, 2, 20000, 16, generator=g)))
    return tmp, out


def test_check_supported_model(progs, tmp_path):
    tmp, out = progs
    pt2, census = out["mlp"]
    r = doccc_cmd("check", pt2, cwd=tmp_path, env={"CC": "/nonexistent/cc"})
    assert r.returncode == 0, fmt_result(r)
    for op, n in census.items():
        assert any(line.split()[:3] == [str(n), op, "supported"] for line in r.stdout.splitlines()), \
            f"{op} x{n} not listed as supported:\n{r.stdout}"
    assert "result: supported" in r.stdout
    assert "in [1, 64], taken at run time: x[0]" in r.stdout, r.stdout
    assert "gpu (cuda, server): runs on the GPU" in r.stdout, r.stdout
    assert list(tmp_path.iterdir()) == [], "doccc check wrote files"

    r = doccc_cmd(pt2, "--check", "--json", "-t", "openmp", "-c", "edge", cwd=tmp_path)
    assert r.returncode == 0, fmt_result(r)
    d = json.loads(r.stdout)
    assert d["supported"] is True and d["target"] == "openmp" and d["category"] == "edge"
    assert {o["op"]: o["count"] for o in d["ops"]} == dict(census)
    assert all(o["supported"] and o["reason"] is None for o in d["ops"])
    assert d["nodes"] == sum(census.values())
    assert {t["dtype"] for t in d["dtypes"]} == {"float32"} and all(t["supported"] for t in d["dtypes"])
    (sym,) = d["dynamic_dims"]
    assert (sym["min"], sym["max"], sym["run_time"], sym["compiled_for"], sym["inputs"]) == (1, 64, True, None, "x[0]"), sym
    assert d["gpu"] == {"backend": "cuda", "category": "edge", "runs_on_gpu": True, "host_steps": 0, "reasons": []}
    assert d["errors"] == []
    # a chosen size is what it reports as compiled for; --dynamic=no: the example's
    r = doccc_cmd("check", pt2, "--json", "--dim", f"{sym['symbol']}=17", cwd=tmp_path)
    assert r.returncode == 0 and json.loads(r.stdout)["dynamic_dims"][0]["compiled_for"] == 17, fmt_result(r)
    r = doccc_cmd("check", pt2, "--dynamic=no", cwd=tmp_path)
    assert r.returncode == 0 and "in [1, 64], compiled for 3: x[0]" in r.stdout, fmt_result(r)


def test_check_unsupported_ops(progs, tmp_path):
    tmp, out = progs
    pt2, census = out["bad"]
    r = doccc_cmd("check", pt2, "--json", cwd=tmp_path)
    assert r.returncode == 1, fmt_result(r)
    d = json.loads(r.stdout)
    assert d["supported"] is False
    ops = {o["op"]: o for o in d["ops"]}
    assert {k: o["count"] for k, o in ops.items()} == dict(census)
    j0 = next(o for k, o in ops.items() if "bessel_j0" in k)
    assert not j0["supported"] and "no lowering" in j0["reason"], j0
    drop = next(o for k, o in ops.items() if "dropout" in k)
    assert not drop["supported"] and "model.eval()" in drop["reason"], drop
    sdpa = ops["aten.scaled_dot_product_attention.default"]
    assert not sdpa["supported"] and "dropout_p" in sdpa["reason"], sdpa
    assert ops["aten.relu.default"]["supported"] and ops["aten.mul.Tensor"]["supported"]
    assert d["ops"][0]["supported"] is False, "unsupported ops come first"
    assert d["gpu"]["runs_on_gpu"] is None
    # the text form says the same, and names the reasons
    r = doccc_cmd("check", pt2, cwd=tmp_path)
    assert r.returncode == 1 and "result: NOT SUPPORTED" in r.stdout and "dropout_p" in r.stdout, fmt_result(r)
    assert list(tmp_path.iterdir()) == []


def test_check_gpu_host_fallback(progs, tmp_path):
    tmp, out = progs
    pt2, _ = out["attn"]
    # attention in its row form (no scores in device memory): its long key
    # row overflows a GPU thread's locals, a step with no GPU expansion
    rows = ("--pass-opt", "expand.attention_scores_mb=0")
    r = doccc_cmd("check", pt2, "-t", "cuda", *rows, "--json", cwd=tmp_path)
    assert r.returncode == 0, fmt_result(r)
    gpu = json.loads(r.stdout)["gpu"]
    assert gpu["backend"] == "cuda" and gpu["runs_on_gpu"] is False and gpu["host_steps"] == 1, gpu
    assert any("per-thread buffers" in w for w in gpu["reasons"]), gpu
    r = doccc_cmd("check", pt2, "-t", "rocm", *rows, cwd=tmp_path)
    assert r.returncode == 0 and "gpu (rocm, server): host fallback, 1 step without a GPU expansion" in r.stdout, \
        fmt_result(r)


def test_check_usage(progs, tmp_path):
    tmp, out = progs
    r = doccc_cmd(out["mlp"][0], "--json", cwd=tmp_path)
    assert r.returncode == 2 and "--json goes with --check" in r.stderr, fmt_result(r)
    r = doccc_cmd("check", tmp_path / "missing.pt2", cwd=tmp_path)
    assert r.returncode == 1 and "missing.pt2" in r.stderr, fmt_result(r)
    # a malformed program: the errors name the file and the place
    bad = tmp_path / "bad.json"
    bad.write_text('{"graph_module": ')
    r = doccc_cmd("check", bad, "--json", cwd=tmp_path)
    assert r.returncode == 1, fmt_result(r)
    d = json.loads(r.stdout)
    assert d["supported"] is False and d["ops"] == [] and d["gpu"]["runs_on_gpu"] is None
    assert d["errors"] and all(str(bad) in e and "error: " in e for e in d["errors"]), d["errors"]
    bad.unlink()


def test_check_agrees_with_build(tmp_path):
    """What a build refuses, check lists first, with the build's words; what
    a build compiles, check calls supported. The programs are the classes of
    the third round of real models: a window wider than its input in ceil
    mode, unfold, in-place and alias overloads of the default IR (scatter_,
    dropout_, concat), mse_loss, histc; and a model that keeps state (a
    buffer it writes in place: the library's state, no error) beside an op
    doccc has no lowering for."""
    torch = require("torch")
    F = torch.nn.functional

    class Good(torch.nn.Module):
        def forward(self, x, i):
            p = F.avg_pool2d(x, 5, ceil_mode=True)                   # one output from a 2x2 map
            f = x.flatten(1).unfold(1, 4, 2)
            w = torch.zeros(2, 4)
            w.scatter_(1, i, 1.0)
            F.dropout(w, 0.1, False, True)
            h = torch.histc(x, bins=4, min=-1, max=1)
            return torch.concat([p.flatten(), f.flatten(), w.flatten(), h]), F.mse_loss(x, x.flip(0))

    class Stateful(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.register_buffer("cache", torch.zeros(2, 8, 2, 2))

        def forward(self, x):
            self.cache.mul_(0.5).add_(x)
            return torch.special.bessel_j0(self.cache + 2)

    g = torch.Generator().manual_seed(0)
    x = torch.randn(2, 8, 2, 2, generator=g)
    for name, mod, args, ok in (("good", Good(), (x, torch.tensor([[0, 3], [1, 1]])), True),
                                ("stateful", Stateful(), (x,), False)):
        for ir in ("training", "core"):
            with torch.no_grad():
                ep = torch.export.export(mod, args)
                if ir == "core":
                    ep = ep.run_decompositions()
            pt2 = tmp_path / f"{name}_{ir}.pt2"
            torch.export.save(ep, str(pt2))
            c = doccc_cmd("check", pt2, cwd=tmp_path)
            b = doccc_cmd(pt2, "-o", f"{tmp_path}/{name}_{ir}_out/", cwd=tmp_path)
            assert (c.returncode, b.returncode) == ((0, 0) if ok else (1, 1)), f"{name} [{ir}]\n{fmt_result(c)}\n{fmt_result(b)}"
            if ok:
                assert "result: supported" in c.stdout and "NOT SUPPORTED" not in c.stdout, c.stdout
                continue
            # the state is the library's (at both levels: Core ATen's
            # buffer_mutation, the training IR's in-place nodes), no error;
            # only the op without a lowering is, never blamed on batch norm
            errors = [line.split(": error: ", 1)[1] for line in b.stderr.splitlines() if ": error: " in line]
            assert errors and all("bessel_j0" in e for e in errors), b.stderr
            assert not any("batch norm" in e or "cache" in e for e in errors), b.stderr
            # every error of the build, in check's listing
            for e in errors:
                assert e[:60] in c.stdout + c.stderr, f"{name} [{ir}]: the build's error is not in check's output:\n  {e}\n{c.stdout}{c.stderr}"
