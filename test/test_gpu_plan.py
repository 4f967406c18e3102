"""The GPU planning pass (ir/passes/gpu_plan.c): each kernel's form, tile,
threads and tensor-core kind is a decision on the IR, shown in --dump-sdfg,
listed in --report, and set by pass options.

  - the dump of the gpu-planned stage holds every kernel's plan, and the
    report's kernel list is the same plans (kinds, tiles, blocks);
  - each option changes the plan it names: tiled, tile, tensor_cores,
    cooperative, block_reduce, block; and a library built with a plan other
    than the default still matches eager in the simulation, through both
    entry points (the printer prints any plan the pass can make);
  - a bad choice is a usage error located at the option; the pass is
    required (the GPU printer prints nothing else);
  - on a CPU target the pass records nothing.
"""

import json

import pytest

from conftest import compare, compile_model, doccc_cmd, fmt_result, require, run_lib


@pytest.fixture(scope="module")
def model(tmp_path_factory):
    """A GEMM with a fused GELU, a convolution, a batched matmul (tiled
    contractions), a layer norm over long rows and a softmax (cooperative
    blocks), a whole-tensor sum (a block reduction)."""
    torch = require("torch")

    class M(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = torch.nn.Linear(70, 45)
            self.conv = torch.nn.Conv2d(5, 37, 3, padding=1)
            self.ln = torch.nn.LayerNorm(700)

        def forward(self, x, img, a, b, r):
            return (torch.nn.functional.gelu(self.fc(x)), torch.relu(self.conv(img)), torch.bmm(a, b),
                    torch.softmax(self.ln(r) * 3, dim=-1), r.sum())

    torch.manual_seed(0)
    m = M().eval()
    xs = (torch.randn(53, 70), torch.randn(2, 5, 9, 11), torch.randn(3, 33, 40), torch.randn(3, 40, 35),
          torch.randn(2, 700))
    d = tmp_path_factory.mktemp("gpuplan")
    pt2 = d / "gp.pt2"
    with torch.no_grad():
        torch.export.save(torch.export.export(m, xs), str(pt2))
        want = [w.numpy() for w in m(*xs)]
    return pt2, [x.numpy() for x in xs], want


def plans(dump):
    """The plans of the gpu-planned stage, in order, from a --dump-sdfg folder."""
    stage = next(p for p in sorted(dump.iterdir()) if p.name.endswith("-gpu-planned.json"))
    out = []

    def walk(n):
        if "gpu" in n:
            out.append(n["gpu"])
        for k in n.get("children", []):
            walk(k)
        if n.get("body"):
            walk(n["body"])
    walk(json.loads(stage.read_text())["root"])
    return out


def build(model, tmp_path, name, *opts):
    pt2, _, _ = model
    out = tmp_path / name
    rep = tmp_path / f"{name}.report.json"
    lib = compile_model(pt2, "cuda", out, "--simulate", "-n", "gp", "--dump-sdfg", out / "dump", "--report", rep,
                        *sum((["--pass-opt", o] for o in opts), []))
    return lib, plans(out / "dump"), json.loads(rep.read_text())["gpu_kernels"]


def check_matches(model, lib, label):
    _, xs, want = model
    for extra in ([], ["--device"]):
        got = run_lib(lib, xs, *extra)
        for j, (g, w) in enumerate(zip(got, want)):
            compare(g, w, f"{label} out{j} {extra}")


def test_default_plan_in_dump_and_report(model, tmp_path):
    lib, ps, ks = build(model, tmp_path, "default")
    forms = [p["form"] for p in ps]
    assert forms.count("tiled") == 3 and "cooperative" in forms and "reduce" in forms, forms
    # the report lists the same plans, in the same order (empty grids aside)
    launched = [p for p in ps if p["grid"] != 0]
    assert len(ks) == len(launched)
    for p, k in zip(launched, ks):
        assert k["block"] == p["block"] and k["shared_bytes"] == p["shared"] and k["per_run"] == p["per_run"], (p, k)
        kind = {"grid": "grid-stride", "cooperative": "block-cooperative", "reduce": "block-reduce",
                "single": "single-thread"}.get(p["form"], f"tiled-{p.get('mma')}")
        assert k["kind"] == kind, (p, k)
        assert k["tile"] == p.get("tile", 0) if p["form"] == "tiled" else k["tile"] == 0
    tiled = [p for p in ps if p["form"] == "tiled"]
    assert all(p["mma"] == "fp32" and p["threads"] == 256 for p in tiled), tiled  # sm_90, precision highest
    check_matches(model, lib, "default plan")


@pytest.mark.parametrize("opts,expect", [
    (["gpu_plan.tiled=false"], lambda ps: not any(p["form"] == "tiled" for p in ps)),
    (["gpu_plan.tile=32"], lambda ps: {p["tile"] for p in ps if p["form"] == "tiled"} == {32}),
    (["gpu_plan.tile=16"], lambda ps: {p["tile"] for p in ps if p["form"] == "tiled"} == {16}),
    (["gpu_plan.cooperative=false"], lambda ps: not any(p["form"] == "cooperative" for p in ps)),
    (["gpu_plan.block_reduce=false"], lambda ps: not any(p["form"] == "reduce" for p in ps)),
    (["gpu_plan.block=64"], lambda ps: all(p["block"] <= 64 for p in ps if p["form"] in ("grid", "cooperative", "reduce"))
     and any(p["block"] == 64 for p in ps)),
], ids=["untiled", "tile32", "tile16", "no-coop", "no-block-reduce", "block64"])
def test_options_change_the_plan(model, tmp_path, opts, expect):
    lib, ps, _ = build(model, tmp_path, "opt", *opts)
    assert expect(ps), [(p["form"], p.get("tile"), p["block"]) for p in ps]
    check_matches(model, lib, " ".join(opts))


def test_tensor_cores_option(model, tmp_path):
    """contraction_precision high takes tf32 tensor cores on sm_90; with
    gpu_plan.tensor_cores=false the tiles stay fp32 (the architecture's
    tensor cores unused)."""
    pt2, _, _ = model
    opts = tmp_path / "high.yaml"
    opts.write_text("contraction_precision: high\n")
    for tc, mma in (("true", "tf32"), ("false", "fp32")):
        out = tmp_path / f"tc-{tc}"
        compile_model(pt2, "cuda", out, "--simulate", "-n", "gp", "--options", opts, "--dump-sdfg", out / "dump",
                      "--pass-opt", f"gpu_plan.tensor_cores={tc}", "--emit-source")
        tiled = [p for p in plans(out / "dump") if p["form"] == "tiled"]
        assert tiled and {p["mma"] for p in tiled} == {mma}, tiled
        assert ("nvcuda::wmma" in (out / "gp.cu").read_text()) == (tc == "true")


@pytest.mark.parametrize("args,text", [
    (["--pass-opt", "gpu_plan.tile=48"], "pass option 'gpu_plan.tile' must be one of auto|16|32|64 (got '48')"),
    (["--pass-opt", "gpu_plan.block=100"], "pass option 'gpu_plan.block' must be one of auto|32|64|128|256|512|1024"),
    (["--disable-pass", "gpu_plan"], "pass 'gpu_plan' is required and cannot be disabled"),
])
def test_bad_options(model, tmp_path, args, text):
    pt2, _, _ = model
    r = doccc_cmd(pt2, "-t", "cuda", "-o", f"{tmp_path}/", *args)
    assert r.returncode == 2 and text in r.stderr, fmt_result(r)
    assert not list(tmp_path.glob("*.so"))


def test_bad_option_in_file_is_located(model, tmp_path):
    pt2, _, _ = model
    opts = tmp_path / "o.yaml"
    opts.write_text("pass_options:\n  gpu_plan.tile: huge\n")
    r = doccc_cmd(pt2, "-t", "cuda", "--options", opts, "-o", f"{tmp_path}/")
    assert r.returncode == 1 and f"{opts}:2:18: error: pass option 'gpu_plan.tile' must be one of" in r.stderr, \
        fmt_result(r)


def test_cpu_targets_have_no_plan(model, tmp_path):
    pt2, _, _ = model
    out = tmp_path / "cpu"
    compile_model(pt2, "sequential", out, "-n", "gp", "--dump-sdfg", out / "dump")
    assert plans(out / "dump") == []
    assert "gpu_plan" in doccc_cmd("--list-passes").stdout
