"""The GPU contractions: register-tiled fp32 and tensor-core (wmma) kernels,
chosen by contraction_precision and the operands' dtype (issue 11).

Everything runs in `-t cuda --simulate`, whose wmma does the same arithmetic
as the device: operands rounded as the kernel stores them (tf32 to nearest
with ties away, as cvt.rna; bf16 to nearest even), exact products, fp32 sums.
So a result of `high` or `medium` must match a float64 reference computed
from operands rounded the same way, far more tightly than it matches fp32
eager, and `highest` must match eager at the suite's tolerance. The real
nvcc compiles the same kernels for sm_90, and ptxas must report no spill in
any of them (the registers of a tile are what make it fast).
"""

import json
import re
import shutil
import subprocess

import pytest

from conftest import ROOT, compare, doccc_cmd, fmt_result, require, run_lib
from test_gpu import require_cmd  # fails in CI, skips elsewhere, when a command is missing


def tf32(a):
    """float32 to tf32 as cvt.rna.tf32.f32: to nearest, ties away from zero."""
    np = require("numpy")
    u = np.ascontiguousarray(a, dtype=np.float32).view(np.uint32).astype(np.uint64)
    finite = (u & 0x7F800000) != 0x7F800000
    u = np.where(finite, (u + 0x1000) & 0xFFFFE000, u).astype(np.uint32)
    return u.view(np.float32)


def bf16(a):
    """float32 to bfloat16 (to nearest even), widened back to float32."""
    np = require("numpy")
    u = np.ascontiguousarray(a, dtype=np.float32).view(np.uint32).astype(np.uint64)
    u = ((u + 0x7FFF + ((u >> 16) & 1)) >> 16 << 16).astype(np.uint32)
    return u.view(np.float32)


class Contractions:
    """A GEMM with a GELU epilogue, a padded convolution with bias and ReLU,
    a batched matmul (sizes that are no multiple of any tile) and a 512 x
    512 GEMM (64 tiles of 64: the 64 tile on an edge GPU's 16 SMs, the 32 one
    on the server's 132)."""

    @staticmethod
    def module():
        torch = require("torch")

        class M(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.fc = torch.nn.Linear(150, 90)
                self.conv = torch.nn.Conv2d(6, 40, 3, padding=1)
                self.big = torch.nn.Linear(64, 512)

            def forward(self, x, img, a, b, z):
                return (torch.nn.functional.gelu(self.fc(x)), torch.relu(self.conv(img)), torch.bmm(a, b), self.big(z))

        torch.manual_seed(0)
        return M().eval()

    @staticmethod
    def inputs():
        torch = require("torch")
        torch.manual_seed(1)
        return (torch.randn(70, 150), torch.randn(2, 6, 12, 10), torch.randn(3, 40, 96), torch.randn(3, 96, 50),
                torch.randn(512, 64))

    @staticmethod
    def reference(m, xs, rnd):
        """The outputs from operands rounded by rnd, in float64."""
        torch = require("torch")
        F = torch.nn.functional
        r = lambda t: torch.from_numpy(rnd(t.detach().numpy())).double()  # noqa: E731
        x, img, a, b, z = xs
        with torch.no_grad():
            fc = F.gelu(r(x) @ r(m.fc.weight).T + m.fc.bias.double())
            conv = torch.relu(F.conv2d(r(img), r(m.conv.weight), m.conv.bias.double(), padding=1))
            big = r(z) @ r(m.big.weight).T + m.big.bias.double()
            return [fc.numpy(), conv.numpy(), torch.bmm(r(a), r(b)).numpy(), big.numpy()]


@pytest.fixture(scope="module")
def contraction_pt2(tmp_path_factory):
    torch = require("torch")
    m, xs = Contractions.module(), Contractions.inputs()
    pt2 = tmp_path_factory.mktemp("tc") / "tc.pt2"
    with torch.no_grad():
        torch.export.save(torch.export.export(m, xs), str(pt2))
        want = [w.numpy() for w in m(*xs)]
    return pt2, m, xs, want


def build(pt2, outdir, precision, *extra):
    """cuda --simulate at the given contraction_precision with --report;
    returns (library, the report's kernel list)."""
    outdir.mkdir(parents=True, exist_ok=True)
    opts = outdir / "options.yaml"
    opts.write_text(f"contraction_precision: {precision}\n")
    rep = outdir / "report.json"
    r = doccc_cmd(pt2, "-t", "cuda", "--simulate", "--options", opts, "--report", rep, "-n", "tc", "-o", f"{outdir}/",
                  *extra)
    assert r.returncode == 0, fmt_result(r)
    report = json.loads(rep.read_text())
    return outdir / "libtc.so", report


KINDS = {"highest": "tiled-fp32", "high": "tiled-tf32", "medium": "tiled-bf16"}
NCONTRACT = 4
# server sm_90 (132 SMs), edge sm_87 (16)
ARCHS = {"server": [], "edge": ["-c", "edge"]}
SMS = {"server": 132, "edge": 16}
# (batch, x, y) of the four contractions: rows (or pixels) by output columns
SIZES = [(1, 70, 90), (1, 2 * 12 * 10, 40), (3, 40, 50), (1, 512, 512)]


def expected_side(size, sms, tc):
    """The tile the documented rule picks: the largest side whose tiles
    give every SM a block, else the smallest (16 fp32, 32 wmma)."""
    nb, nx, ny = size
    sides = (64, 32) if tc else (64, 32, 16)
    for s in sides:
        if nb * -(-nx // s) * -(-ny // s) >= sms:
            return s
    return sides[-1]


def test_highest_is_fp32_and_matches_eager(contraction_pt2, tmp_path):
    """The default: every contraction in the register-tiled fp32 kernel,
    results within the suite's tolerance of eager through both entry points."""
    pt2, m, xs, want = contraction_pt2
    lib, rep = build(pt2, tmp_path, "highest")
    kinds = [k["kind"] for k in rep["gpu_kernels"]]
    assert kinds.count("tiled-fp32") == NCONTRACT, kinds
    for extra in ([], ["--device"]):
        got = run_lib(lib, [x.numpy() for x in xs], *extra)
        for j, (g, w) in enumerate(zip(got, want)):
            compare(g, w, f"highest out{j} {extra}")


@pytest.mark.parametrize("category", ARCHS)
@pytest.mark.parametrize("precision,rnd", [("highest", None), ("high", tf32), ("medium", bf16)])
def test_tiles_by_size(precision, rnd, category, contraction_pt2, tmp_path):
    """The tile follows the SM count: the 512 x 512 GEMM takes the 64 tile on
    the edge GPU (16 SMs) and the 32 one on the server's 132, the small
    contractions smaller ones, with 256 threads, or 128 for a 32 wmma tile;
    the edge build has 64, 32 and 16 tiles. Every size computes right:
    fp32 within the suite's tolerance of eager, tf32 / bf16 close to the
    rounded-operand reference (test_tensor_core_precision)."""
    np = require("numpy")
    pt2, m, xs, want = contraction_pt2
    lib, rep = build(pt2, tmp_path, precision, *ARCHS[category])
    ks = [k for k in rep["gpu_kernels"] if k["kind"] == KINDS[precision]]
    assert len(ks) == NCONTRACT, rep["gpu_kernels"]
    sides = [k["tile"] for k in ks]
    assert sides == [expected_side(z, SMS[category], precision != "highest") for z in SIZES], sides
    assert sides[3] == (64 if category == "edge" else 32), sides
    for k, s in zip(ks, sides):
        assert k["block"] == (128 if precision != "highest" and s == 32 else 256), k
        elem, pad = (4, 1) if precision == "highest" else (4, 4) if precision == "high" else (2, 8)
        staged = 0 if precision == "highest" else 4 * s * (s + 4)  # the accumulators' way to the epilogue
        assert k["shared_bytes"] == elem * 32 * 2 * (s + pad) + staged, k
    got = run_lib(lib, [x.numpy() for x in xs], "--device")
    if rnd is None:
        for j, (g, w) in enumerate(zip(got, want)):
            compare(g, w, f"{category} {precision} out{j}")
        return
    for j, (g, r) in enumerate(zip(got, Contractions.reference(m, xs, rnd))):
        assert np.abs(g - r).max() / np.abs(r).max() < 2e-6, f"{category} {precision} out{j}"


@pytest.mark.parametrize("precision,rnd", [("high", tf32), ("medium", bf16)])
def test_tensor_core_precision(precision, rnd, contraction_pt2, tmp_path):
    """high and medium: every contraction on the tensor cores (wmma), the
    result that of operands rounded to tf32 / bf16 with fp32 sums: close to
    the rounded-operand reference, and measurably off fp32 eager (by the
    amount the documentation gives), so the rounding did happen."""
    np = require("numpy")
    pt2, m, xs, want = contraction_pt2
    lib, rep = build(pt2, tmp_path, precision)
    kinds = [k["kind"] for k in rep["gpu_kernels"]]
    assert kinds.count(KINDS[precision]) == NCONTRACT, kinds
    ref = Contractions.reference(m, xs, rnd)
    got = run_lib(lib, [x.numpy() for x in xs], "--device")
    for j, (g, r, w) in enumerate(zip(got, ref, want)):
        scale = np.abs(r).max()
        to_ref = np.abs(g - r).max() / scale
        to_eager = np.abs(g - w).max() / scale
        # fp32 sums of <= 150 exact products: a few fp32 ulps of the scale
        assert to_ref < 2e-6, f"{precision} out{j}: {to_ref:.3g} of the scale from the rounded-operand reference"
        assert to_eager > 20 * to_ref, f"{precision} out{j}: no sign of {precision} rounding ({to_eager:.3g})"
        bound = 2e-3 if precision == "high" else 1.6e-2
        assert to_eager < bound, f"{precision} out{j}: {to_eager:.3g} of the scale from eager"


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_half_models_use_tensor_cores(dtype, tmp_path):
    """16-bit models contract on the tensor cores at every precision (fp16 or
    bf16 fragments: their operands are exact there), with fp32 sums, so they
    match eager within its 16-bit tolerance."""
    torch = require("torch")
    np = require("numpy")
    dt = getattr(torch, dtype)
    torch.manual_seed(0)
    m = torch.nn.Linear(96, 80).to(dt).eval()
    x = torch.randn(40, 96).to(dt)
    pt2 = tmp_path / "h.pt2"
    with torch.no_grad():
        torch.export.save(torch.export.export(m, (x,)), str(pt2))
        want = m(x)
    lib, rep = build(pt2, tmp_path / "out", "highest")
    kinds = [k["kind"] for k in rep["gpu_kernels"]]
    assert kinds == ["tiled-fp16" if dtype == "float16" else "tiled-bf16"], kinds
    as_np = (lambda t: t.view(torch.int16).numpy().view("<u2")) if dtype == "bfloat16" else (lambda t: t.numpy())
    got = run_lib(lib, [as_np(x)], "--device")[0]
    if dtype == "bfloat16":
        got = torch.from_numpy(got.view("<i2").copy()).view(torch.bfloat16)
    else:
        got = torch.from_numpy(got)
    # torch.testing's tolerances for the dtype (test/ops/harness.py): eager
    # on the CPU also sums in fp32 and rounds once, in another order
    rtol = 1e-3 if dtype == "float16" else 1.6e-2
    assert got.dtype == want.dtype
    np.testing.assert_allclose(got.float().numpy(), want.float().numpy(), rtol=rtol, atol=1e-5)


def test_rocm_and_old_archs_stay_fp32(contraction_pt2, tmp_path):
    """rocm has no wmma, sm_75 no tf32/bf16 one: high contracts in fp32 there."""
    pt2, m, xs, want = contraction_pt2
    for i, extra in enumerate((["--march", "sm_75"],)):
        lib, rep = build(pt2, tmp_path / f"a{i}", "high", *extra)
        assert {k["kind"] for k in rep["gpu_kernels"] if k["kind"].startswith("tiled")} == {"tiled-fp32"}, rep["gpu_kernels"]
    opts = tmp_path / "o.yaml"
    opts.write_text("contraction_precision: high\n")
    rep = tmp_path / "r.json"
    r = doccc_cmd(pt2, "-t", "rocm", "--simulate", "--options", opts, "--report", rep, "-n", "tc", "-o", f"{tmp_path}/r/")
    assert r.returncode == 0, fmt_result(r)
    kinds = {k["kind"] for k in json.loads(rep.read_text())["gpu_kernels"]}
    assert "tiled-fp32" in kinds and not any(k in kinds for k in ("tiled-tf32", "tiled-bf16")), kinds
    got = run_lib(tmp_path / "r" / "libtc.so", [x.numpy() for x in xs], "--device")
    for j, (g, w) in enumerate(zip(got, want)):
        compare(g, w, f"rocm high out{j}")


def test_report_lists_every_launch(contraction_pt2, tmp_path):
    """--report's gpu_kernels: one entry per launch of a run, in order, each
    naming a kernel of the source with its geometry; the count per run adds
    the host loops' repeats."""
    pt2, m, xs, want = contraction_pt2
    lib, rep = build(pt2, tmp_path, "highest", "--emit-source")
    src = (tmp_path / "tc.cu").read_text()
    ks = rep["gpu_kernels"]
    assert ks and rep["gpu_launches_per_run"] == sum(k["per_run"] for k in ks)
    launched = re.findall(r"DC_LAUNCH(?:_SYNC)?\((\w+), dim3\(([^)]*)\), dim3\((\d+)\)", src)
    assert [(k["kernel"], str(k["grid"]), str(k["block"])) for k in ks] == launched
    for k in ks:
        assert re.search(rf"__global__ void {k['kernel']}\(", src), k
        assert k["node"], k


def nvcc_build(pt2, outdir, precision):
    """A real nvcc build for sm_90 of pt2's generated source, with ptxas'
    resource report; returns the report."""
    nvcc = require_cmd("nvcc")  # CUDA 13 is on the development machines, not in Debian's main
    outdir.mkdir(parents=True, exist_ok=True)
    opts = outdir / "options.yaml"
    opts.write_text(f"contraction_precision: {precision}\n")
    r = doccc_cmd(pt2, "-t", "cuda", "--simulate", "--options", opts, "--emit-source", "-n", "tc", "-o", f"{outdir}/")
    assert r.returncode == 0, fmt_result(r)
    shutil.copy(ROOT / "backends" / "rt" / "gpu_rt.h", outdir / "doccc_gpu.h")
    p = subprocess.run([nvcc, "-arch=sm_90", "-cubin", "-O3", "-Xptxas", "-v", "-o", str(outdir / "tc.cubin"), "tc.cu"],
                       cwd=outdir, capture_output=True, text=True, timeout=600)
    assert p.returncode == 0, p.stderr[-4000:]
    return p.stderr


def demangle(sym):
    """The function name of a mangled C++ symbol (_Z9tc_s0_k0PKf... -> tc_s0_k0)."""
    m = re.match(r"_Z(\d+)", sym)
    return sym[m.end():m.end() + int(m.group(1))] if m else sym


def assert_no_spills(log, kernels):
    """ptxas -v's log (nvcc_build) reports each of kernels with no stack
    frame and no spill stores or loads."""
    entries = re.findall(r"Compiling entry function '(\w+)' for 'sm_90'\n"
                         r"ptxas info\s*: Function properties for \S+\n"
                         r"\s*(\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads", log)
    seen = {demangle(name): (int(a), int(b), int(c)) for name, a, b, c in entries}
    assert kernels <= set(seen), f"ptxas did not report {kernels - set(seen)}:\n{log}"
    for k in sorted(kernels):
        assert seen[k] == (0, 0, 0), f"{k}: stack frame, spill stores, spill loads = {seen[k]}\n{log}"


@pytest.mark.parametrize("precision", ["highest", "high", "medium"])
def test_no_spills_in_tiled_kernels(precision, contraction_pt2, tmp_path):
    """ptxas -v on the kernels nvcc builds for sm_90: no spill stores or
    loads and no stack frame in any contraction kernel at the default tiles."""
    pt2, m, xs, want = contraction_pt2
    lib, rep = build(pt2, tmp_path / "sim", precision)
    tiled = {k["kernel"] for k in rep["gpu_kernels"] if k["kind"].startswith("tiled")}
    assert len(tiled) == NCONTRACT, rep["gpu_kernels"]
    assert_no_spills(nvcc_build(pt2, tmp_path / "nvcc", precision), tiled)
