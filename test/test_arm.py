"""ARM (issue 30): libraries cross-compiled for aarch64-linux-gnu on this
x86-64 machine (--triple), run under qemu-user by `doccc run`, which hands
an aarch64 library to doccc's aarch64 runner (build/aarch64-linux-gnu/
doccc-run) under qemu-aarch64, and compared with eager at the suite's
tolerance.

The models of the suite at emulation's sizes (the MLP, the small CNN,
ResNet-18 on a 64x64 image, the BERT encoder and the Qwen2 layer of
models_zoo), one module per op family, a PT2E int8 CNN (its integer kernels
on sdot for edge, usdot for server: exact, so equal to the int16 pairs bit
for bit) and the stateful Llama decoder step by step, each for the edge
(Cortex-A76: armv8.2-a+dotprod+fp16) and server (Neoverse V2: armv9-a with
SVE2 and i8mm) categories. qemu's default CPU has every extension; a
Cortex-A53 lacks the edge ISA, and the library says so at create. Also: the
static archive and pkg-config for the cross target, linked into a C program
run under qemu; the triple's spellings and its usage errors.

`make test` installs the cross toolchain (test/setup.sh --cross); without it
these tests fail in CI and are skipped elsewhere.
"""

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from conftest import (ATOL, IN_CI, ROOT, RTOL, compare, compile_model, doccc_cmd, fmt_result, require, run_lib)

TRIPLE = "aarch64-linux-gnu"
ARM = ("--triple", TRIPLE)
SYSROOT = Path("/usr") / TRIPLE
RUNNER = ROOT / os.environ.get("BUILD", "build") / TRIPLE / "doccc-run"
CATEGORIES = ("edge", "server")


def need_cross():
    missing = [what for what, ok in (("qemu-aarch64 (qemu-user)", shutil.which("qemu-aarch64")),
                                     ("the aarch64 sysroot", (SYSROOT / "include/stdlib.h").is_file()),
                                     ("libomp.so.5 for arm64", (SYSROOT / "lib/libomp.so.5").is_file()),
                                     (f"the runner {RUNNER} (make)", RUNNER.is_file())) if not ok]
    if missing:
        msg = f"no {', '.join(missing)}: sh test/setup.sh --cross, then make"
        if IN_CI:
            pytest.fail(msg, pytrace=False)
        pytest.skip(msg)


def arm_lib(src, outdir, category, *extra, target="openmp"):
    need_cross()
    lib = compile_model(src, target, outdir, "-c", category, *ARM, *extra)
    head = lib.read_bytes()[:20]
    assert head[:4] == b"\x7fELF" and int.from_bytes(head[18:20], "little") == 183, f"{lib} is not an aarch64 ELF"
    return lib


def export(m, xs, path):
    torch = require("torch")
    torch.export.save(torch.export.export(m, xs), str(path))
    with torch.no_grad():
        y = m(*xs)
    ys = list(y) if isinstance(y, (tuple, list)) else [y]
    return path, [x.numpy() for x in xs], [t.detach().numpy() for t in ys]


# ---- the model suite --------------------------------------------------------------

def model_suite(name):
    torch = require("torch")
    import models
    import models_zoo
    if name in ("mlp", "small_cnn"):
        return models.make_model(name), (models.make_input(name, 2),)
    if name == "resnet18":
        return models.make_model(name), (torch.randn(1, 3, 64, 64, generator=torch.Generator().manual_seed(1)),)
    m, inputs = models_zoo.make(name)
    return m, inputs(1)


SUITE = ("mlp", "small_cnn", "resnet18", "bert", "qwen2_layer")


@pytest.fixture(scope="module")
def suite(tmp_path_factory):
    d = tmp_path_factory.mktemp("arm_suite")
    out = {}
    for name in SUITE:
        m, xs = model_suite(name)
        out[name] = export(m, xs, d / f"{name}.pt2")
    return out


@pytest.mark.parametrize("category", CATEGORIES)
@pytest.mark.parametrize("name", SUITE)
def test_model_under_emulation(suite, name, category, tmp_path):
    pt2, xs, eager = suite[name]
    lib = arm_lib(pt2, tmp_path, category)
    got = run_lib(lib, xs)
    for j, (g, e) in enumerate(zip(got, eager)):
        compare(g, e, f"aarch64 {category} {name} output {j}")


# ---- one module per op family ---------------------------------------------------

def op_families():
    torch = require("torch")
    nn, F = torch.nn, torch.nn.functional

    class Ops(nn.Module):
        def __init__(self):
            super().__init__()
            self.gru = nn.GRU(12, 16, batch_first=True)
            self.ln = nn.LayerNorm(12)
            self.conv = nn.Conv1d(12, 12, 3, padding=1, groups=4)

        def forward(self, x, idx, img):
            elem = torch.where(x > 0, torch.exp(-x) * torch.tanh(x), F.gelu(x) + torch.sigmoid(x).sqrt())
            red = (x.sum(-1), x.amax(1), x.var(-1), torch.logsumexp(x, -1))
            norm = (F.softmax(x, -1), self.ln(x), F.rms_norm(x, (12,)))
            pool = (F.max_pool2d(img, 3, 2, 1), F.avg_pool2d(img, 2), F.adaptive_avg_pool2d(img, 3),
                    F.interpolate(img, scale_factor=2, mode="bilinear", align_corners=False))
            index = (x[:, :, idx], torch.gather(x, 2, idx.view(1, 1, -1).expand(2, 5, -1)),
                     torch.cumsum(x, 1), torch.sort(x, -1)[0], torch.topk(x, 3, -1)[0])
            shape = torch.cat([x.transpose(1, 2).reshape(2, -1), x.flip(1).reshape(2, -1)], 1)[:, ::3]
            att = F.scaled_dot_product_attention(x.view(2, 1, 5, 12), x.view(2, 1, 5, 12), x.view(2, 1, 5, 12),
                                                 is_causal=True)
            rnn = self.gru(x)[0]
            conv = self.conv(x.transpose(1, 2))
            half = (x.half() * 3).float() + (x.bfloat16() * 2).float()
            return (elem, *red, *norm, *pool, *index, shape, att, rnn, conv, half)

    torch.manual_seed(0)
    xs = (torch.randn(2, 5, 12), torch.tensor([0, 3, 3, 11, 7]), torch.randn(2, 3, 9, 9))
    return Ops().eval(), xs


@pytest.fixture(scope="module")
def ops(tmp_path_factory):
    m, xs = op_families()
    return export(m, xs, tmp_path_factory.mktemp("arm_ops") / "ops.pt2")


@pytest.mark.parametrize("target", ["none", "sequential", "openmp"])
@pytest.mark.parametrize("category", CATEGORIES)
def test_op_families(ops, category, target, tmp_path):
    pt2, xs, eager = ops
    got = run_lib(arm_lib(pt2, tmp_path, category, target=target), xs)
    for j, (g, e) in enumerate(zip(got, eager)):
        compare(g, e, f"aarch64 {category} {target} ops output {j}")


# ---- int8 ------------------------------------------------------------------------

@pytest.fixture(scope="module")
def int8_cnn(tmp_path_factory):
    torch = require("torch")
    import test_quant
    model, x, last = test_quant.cnn()
    ep = test_quant.pt2e(model, x, "x86_static")
    p = tmp_path_factory.mktemp("arm_int8") / "cnn_int8.pt2"
    torch.export.save(ep, str(p))
    ref = torch.export.load(str(p)).module()(x).detach().numpy()
    return p, x.numpy(), ref, test_quant.last_step(model, ep, x, last)


@pytest.mark.parametrize("category,dot", [("edge", "vdotq_s32"), ("server", "vusdotq_s32")])
def test_int8_dot_products(int8_cnn, category, dot, tmp_path):
    """The integer kernels take four-byte words (expand.int8_dot=auto: the
    category's -march has dot products) on sdot (edge: the activations'
    bytes less 128, 128 times the weights' sums added back) or usdot (server:
    i8mm); the int32 sums are exact, so the outputs equal those of int16
    pairs bit for bit, and eager's within one step of the last layer's input."""
    np = require("numpy")
    pt2, x, ref, step = int8_cnn
    got = {}
    for form in ("auto", "pairs"):
        out = tmp_path / form
        lib = arm_lib(pt2, out, category, "--pass-opt", f"expand.int8_dot={form}", "--emit-source")
        src = next(out.glob("*.c")).read_text()
        assert ("= dc_vdot4acc(*" in src) == (form == "auto"), f"{form}: the kernels' dot products"
        if form == "auto":
            assert dot in src, f"no {dot} in dc_vdot4acc"
        got[form] = run_lib(lib, [x])[0]
    assert np.array_equal(got["auto"], got["pairs"]), np.abs(got["auto"] - got["pairs"]).max()
    err = np.abs(got["auto"].astype(np.float64) - ref)
    off = err > ATOL + RTOL * np.abs(ref)
    assert err[off].max(initial=0) <= step, f"largest difference from eager {err.max():.3g}, one step {step:.3g}"


# ---- state ------------------------------------------------------------------------

def test_stateful_decoder(tmp_path_factory, tmp_path):
    """The Llama decoder with its static KV cache, prompt then 31 greedy
    tokens, one instance across the steps (doccc run --step), on edge."""
    need_cross()
    import test_state
    require("transformers")
    np = require("numpy")
    d = tmp_path_factory.mktemp("arm_decoder")
    ep = test_state.export_decoder(test_state.tiny_llama())
    steps, _ = test_state.eager_steps(ep)
    pt2 = d / "llama.pt2"
    require("torch").export.save(ep, str(pt2))
    files = []
    for s, (ids, pos, logits) in enumerate(steps[:8]):
        f = [d / f"ids{s}.npy", d / f"pos{s}.npy", d / f"ref{s}.npy"]
        np.save(f[0], ids), np.save(f[1], pos), np.save(f[2], logits)
        files.append(f)
    lib = arm_lib(pt2, tmp_path, "edge")
    r = doccc_cmd("run", lib, *test_state.step_args(files), "-q")
    assert r.returncode == 0, fmt_result(r)
    assert r.stdout.count("PASS") >= len(files), r.stdout


# ---- the CPU check, the archive, the triple's spellings -----------------------------

@pytest.fixture(scope="module")
def mlp(tmp_path_factory):
    m, xs = model_suite("mlp")
    return export(m, xs, tmp_path_factory.mktemp("arm_mlp") / "mlp.pt2")


def test_cpu_check_under_emulation(mlp, tmp_path):
    """An edge library on a Cortex-A53 (no dot products, no fp16 vectors)
    refuses at create, naming what the CPU lacks (HWCAP), exit 1; on a
    Cortex-A76 it runs; the server library needs SVE2 and i8mm."""
    pt2, xs, eager = mlp
    np = require("numpy")
    np.save(tmp_path / "x.npy", xs[0])
    np.save(tmp_path / "ref.npy", eager[0])
    edge = arm_lib(pt2, tmp_path / "edge", "edge")
    server = arm_lib(pt2, tmp_path / "server", "server")
    for lib, cpu, ok, lacks in ((edge, "cortex-a53", False, "asimddp"), (edge, "cortex-a76", True, None),
                                (server, "cortex-a76", False, "sve2"), (server, "max", True, None)):
        env = dict(os.environ, DOCC_QEMU=f"qemu-aarch64 -cpu {cpu}")
        r = subprocess.run([str(ROOT / "build/doccc"), "run", str(lib), "-i", str(tmp_path / "x.npy"), "--expect",
                            str(tmp_path / "ref.npy")], capture_output=True, text=True, env=env, timeout=300)
        if ok:
            assert r.returncode == 0, fmt_result(r)
        else:
            assert r.returncode == 1 and "does not have" in r.stderr and lacks in r.stderr, fmt_result(r)


def test_static_archive_and_pkgconfig(mlp, tmp_path):
    """-o libmlp.a --emit-pkgconfig --emit-cmake for aarch64: a C program
    linked with the .pc's flags (clang --target) runs under qemu; the CMake
    file names the target's OpenMP runtime."""
    need_cross()
    pt2, xs, eager = mlp
    r = doccc_cmd(pt2, "-t", "openmp", "-c", "edge", *ARM, "-o", tmp_path / "libmlp.a", "--emit-pkgconfig",
                  "--emit-cmake")
    assert r.returncode == 0, fmt_result(r)
    pc = (tmp_path / "mlp.pc").read_text()
    libs = next(l for l in pc.splitlines() if l.startswith("Libs:"))[5:].replace("${libdir}", str(tmp_path)).split()
    assert "-l:libomp.so.5" in libs, pc
    cm = (tmp_path / "mlpConfig.cmake").read_text()
    assert "-l:libomp.so.5;-lm" in cm, cm
    (tmp_path / "main.c").write_text(
        '#include <stdio.h>\n#include <stdlib.h>\n#include "mlp.h"\n'
        'int main(void)\n{\n\tmlp_t *m;\n\tif (mlp_create(&m)) {\n\t\tputs(mlp_last_error(NULL));\n\t\treturn 1;\n\t}\n'
        '\tstatic float x[MLP_INPUT0_NUMEL], y[MLP_OUTPUT0_NUMEL];\n\tfor (int i = 0; i < MLP_INPUT0_NUMEL; i++)\n'
        '\t\tx[i] = (float)(i % 7) - 3.0f;\n\tint rc = mlp_run(m, x, y);\n\tprintf("rc %d y0 %.6f\\n", rc, y[0]);\n'
        '\tmlp_destroy(m);\n\treturn rc;\n}\n')
    exe = tmp_path / "main"
    c = subprocess.run(["clang", f"--target={TRIPLE}", "-O2", "-I", str(tmp_path), "-o", str(exe),
                        str(tmp_path / "main.c"), *libs], capture_output=True, text=True)
    assert c.returncode == 0, c.stderr
    run = subprocess.run(["qemu-aarch64", str(SYSROOT / "lib/ld-linux-aarch64.so.1"), "--library-path",
                          str(SYSROOT / "lib"), str(exe)], capture_output=True, text=True, timeout=120)
    assert run.returncode == 0 and run.stdout.startswith("rc 0 "), (run.stdout, run.stderr)


def test_triple_spellings_and_errors(mlp, tmp_path):
    need_cross()
    pt2 = mlp[0]
    # DOCC_TRIPLE and the YAML file's triple: the same library as --triple
    a = compile_model(pt2, "sequential", tmp_path / "flag", "-c", "edge", *ARM)
    b = compile_model(pt2, "sequential", tmp_path / "env", "-c", "edge", env={"DOCC_TRIPLE": "arm64"})
    (tmp_path / "o.yaml").write_text("triple: aarch64\n")
    c = compile_model(pt2, "sequential", tmp_path / "yaml", "-c", "edge", "--options", tmp_path / "o.yaml")
    assert a.read_bytes() == b.read_bytes() == c.read_bytes()
    # a CPU name is -mcpu, an -march an -march: both build
    for isa in ("cortex-a72", "armv8-a"):
        r = doccc_cmd(pt2, "-t", "openmp", *ARM, "--march", isa, "-o", tmp_path / isa / "", "-v")
        assert r.returncode == 0, fmt_result(r)
        assert ("-mcpu=" if isa.startswith("cortex") else "-march=") + isa in r.stderr, r.stderr
    for args, words in ((("--triple", "riscv64-linux-gnu"), "unknown triple 'riscv64-linux-gnu'"),
                        ((*ARM, "--march", "x86-64-v3"), "is an x86_64 ISA"),
                        ((*ARM, "--march", "native"), "names this machine's CPU"),
                        ((*ARM, "-t", "cuda"), "is for the CPU targets")):
        r = doccc_cmd(pt2, *args, "-o", tmp_path / "bad" / "")
        assert r.returncode == 2 and words in r.stderr, fmt_result(r)
        assert not (tmp_path / "bad").exists() or not any((tmp_path / "bad").iterdir())
    # an x86-64 library is untouched by all this
    x86 = compile_model(pt2, "sequential", tmp_path / "x86", "-c", "edge")
    assert int.from_bytes(x86.read_bytes()[18:20], "little") == 62


def test_run_without_qemu(mlp, tmp_path):
    need_cross()
    pt2, xs, _ = mlp
    lib = arm_lib(pt2, tmp_path, "edge")
    require("numpy").save(tmp_path / "x.npy", xs[0])
    env = dict(os.environ, DOCC_QEMU="qemu-aarch64-missing")
    r = subprocess.run([str(ROOT / "build/doccc"), "run", str(lib), "-i", str(tmp_path / "x.npy"), "-o",
                        str(tmp_path / "y.npy")], capture_output=True, text=True, env=env)
    assert r.returncode == 1 and "aarch64-linux-gnu library" in r.stderr and "qemu-user" in r.stderr, fmt_result(r)
    assert not (tmp_path / "y.npy").exists()
