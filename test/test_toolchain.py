"""doccc inside build pipelines: compiler launchers and static archives.

Launchers: DOCC_CC (clang), DOCC_CXX (clang++ of --simulate), DOCC_NVCC and
DOCC_HIPCC name the compiler command, a launcher included, split on blanks
without a shell. The compilers run in the working directory on relative
paths, so that

  - ccache hits on a second build of the same model from another DOCC_TMP
    and into another output directory, through clang, nvcc and hipcc
    (CCACHE_DIR in the test's folder; `ccache --print-stats` counts the hit),
    the two libraries are byte-identical, and the CPU library built through
    it gives eager PyTorch's results; two builds without a cache give one
    library too;
  - a fake launcher (logs its argv, then execs the rest) sees every command of
    the backend: the weights object (DOCC_CC), the compile and the link
    (DOCC_NVCC for cuda, DOCC_HIPCC for rocm, DOCC_CXX for --simulate);
  - an empty or blank variable, or one of more than 64 words, is a usage
    error (exit 2, the variable named),
    a launcher that is not there exit 1 with the variable named, and neither
    leaves anything behind.

Static archives: -o DIR/libNAME.a. Two models go into two archives; one C
program includes both headers, links both archives (with gcc and with
clang, and the flags a program needs besides the archive, which doccc -v
prints) and writes both outputs, which are compared with eager PyTorch. Every
global symbol the archive defines starts with the model's prefix (no
doccc_model alias). The archive's pkg-config file (--emit-pkgconfig) links
a gcc program on its own. Failures: an output directory that cannot be made, and a
failing ar (exit 3), leave nothing.
"""

import os
import re
import subprocess
from pathlib import Path

import pytest

from conftest import doccc_cmd, fmt_result, require, run_lib, target_args
from test_gpu import require_cmd  # fails in CI, skips elsewhere, when a command is missing


def assert_exit(r, code, *needles):
    assert r.returncode == code, fmt_result(r)
    for n in needles:
        assert n in r.stderr, f"{n!r} not in stderr\n" + fmt_result(r)


def listing(d):
    return sorted(str(p.relative_to(d)) for p in Path(d).rglob("*")) if Path(d).exists() else []


@pytest.fixture(scope="module")
def mlp(exports):
    return exports.get("mlp", "training", 1, "pt2")


def logging_launcher(d):
    """A launcher that appends its arguments (one line per call) to d/calls.log and execs them."""
    d.mkdir(parents=True, exist_ok=True)
    log = d / "calls.log"
    p = d / "logcc"
    p.write_text(f'#!/bin/sh\necho "$*" >> "{log}"\nexec "$@"\n')
    p.chmod(0o755)
    return p, log


# ---- launchers ----------------------------------------------------------------------

def ccache_stats(env):
    r = subprocess.run(["ccache", "--print-stats"], capture_output=True, text=True, env=env, timeout=60)
    assert r.returncode == 0, r.stderr
    return {k: int(v) for k, v in (line.split("\t") for line in r.stdout.splitlines() if "\t" in line)}


# The real compilers: the GPU libraries are built and compared, not run (no GPU here).
CCACHE_CASES = [("openmp", "DOCC_CC", "clang", "c"), ("cuda", "DOCC_NVCC", "nvcc", "cu"),
                ("rocm", "DOCC_HIPCC", "hipcc", "cu")]


@pytest.mark.parametrize("target,var,compiler,ext", CCACHE_CASES, ids=[c[0] for c in CCACHE_CASES])
def test_ccache_hits_from_another_working_directory(exports, tmp_path, check_close, target, var, compiler, ext):
    """nvcc got -gencode, which ccache 4.7 takes for -g (debug information: the
    working directory is hashed), and named its intermediates after its
    process id, which went into the object; both missed the cache or made
    another library."""
    require_cmd("ccache")
    require_cmd(compiler)
    cnn = exports.get("small_cnn", "training", 1, "pt2")
    env = {"CCACHE_DIR": str(tmp_path / "ccache"), "CCACHE_CONFIGPATH": str(tmp_path / "ccache.conf"),
           var: f"ccache {compiler}"}
    (tmp_path / "ccache.conf").write_text("")
    full = dict(os.environ, **env)
    full.pop("CCACHE_DISABLE", None)
    subprocess.run(["ccache", "-z"], env=full, check=True, capture_output=True)
    libs = []
    for i in (1, 2):
        out = tmp_path / f"out{i}"
        r = doccc_cmd(cnn.path, "-t", target, "-n", "small_cnn", "-o", f"{out}/", "-v",
                      env=dict(env, DOCC_TMP=str(tmp_path / f"tmp{i}")))
        assert_exit(r, 0)
        # -v shows the launcher and where the command runs
        assert re.search(r"^cd \S+/tmp%d/doccc-\S+ && ccache %s .* -c -o small_cnn\.o small_cnn\.%s$"
                         % (i, compiler, ext), r.stderr, re.M), r.stderr
        stats = ccache_stats(full)
        hits = stats["direct_cache_hit"] + stats["preprocessed_cache_hit"]
        assert hits == (i - 1), f"build {i}: {hits} ccache hits\n{stats}\n{r.stderr}"
        libs.append(out / "libsmall_cnn.so")
    assert stats["cache_miss"] == 1, stats
    assert libs[0].read_bytes() == libs[1].read_bytes(), "the cached object made another library"
    if target == "openmp":
        check_close(run_lib(libs[1], [cnn.x])[0], cnn.ref[0], "small_cnn openmp through ccache")


@pytest.mark.parametrize("target,compiler", [("openmp", "clang"), ("cuda", "nvcc"), ("rocm", "hipcc")])
def test_rebuild_is_byte_identical(mlp, tmp_path, target, compiler):
    """Without a cache, two builds from two DOCC_TMPs into two folders give the
    same library (nvcc's intermediates named after its process id made the
    cuda libraries differ)."""
    require_cmd(compiler)
    libs = []
    for i in (1, 2):
        out = tmp_path / f"out{i}"
        r = doccc_cmd(mlp.path, "-t", target, "-n", "m", "-o", f"{out}/", env={"DOCC_TMP": str(tmp_path / f"tmp{i}")})
        assert_exit(r, 0)
        libs.append((out / "libm.so").read_bytes())
    assert libs[0] == libs[1], f"-t {target}: two builds made two libraries"


@pytest.mark.parametrize("target,var,compiler", [("none", "DOCC_CC", "clang"),
                                                 ("cuda-sim", "DOCC_CXX", "clang++"),
                                                 ("cuda", "DOCC_NVCC", "nvcc"),
                                                 ("rocm", "DOCC_HIPCC", "hipcc")])
def test_launcher_runs_every_command(mlp, tmp_path, target, var, compiler):
    require_cmd(compiler)
    launcher, log = logging_launcher(tmp_path / "bin")
    env = {"DOCC_CC": f"{launcher} clang", var: f"{launcher} {compiler}"}
    out = tmp_path / "out"
    r = doccc_cmd(mlp.path, *target_args(target), "-n", "m", "-o", f"{out}/", "-v", env=env)
    assert_exit(r, 0)
    assert listing(out) == ["libm.so", "m.h"], listing(out)
    calls = log.read_text().splitlines()
    ext = ".c" if target == "none" else ".cu"
    assert len(calls) == 2, calls  # the compile, the link (doccc writes weights.o itself)
    assert calls[0].startswith(compiler + " ") and calls[0].endswith(f"-c -o m.o m{ext}"), calls
    assert calls[1].startswith(compiler + " ") and " -shared " in calls[1] and "-o libm.so m.o weights.o" in calls[1]
    assert f"{launcher} {compiler} " in r.stderr, r.stderr


def test_relative_launcher_path(mlp, tmp_path):
    """A relative path in DOCC_CC is taken from doccc's directory, not the working directory's."""
    launcher, log = logging_launcher(tmp_path / "bin")
    r = doccc_cmd(mlp.path, "-n", "m", "-o", f"{tmp_path}/out/", env={"DOCC_CC": "./bin/logcc clang"},
                  cwd=tmp_path)
    assert_exit(r, 0)
    assert len(log.read_text().splitlines()) == 2


@pytest.mark.parametrize("var,value,target", [("DOCC_CC", "", "none"), ("DOCC_CC", " \t ", "openmp"),
                                              ("DOCC_CXX", "", "cuda-sim"), ("DOCC_NVCC", " ", "cuda"),
                                              ("DOCC_HIPCC", "", "rocm")])
def test_empty_compiler_variable(mlp, tmp_path, var, value, target):
    out = tmp_path / "out"
    r = doccc_cmd(mlp.path, *target_args(target), "-o", f"{out}/", env={var: value})
    assert_exit(r, 2, f"{var} is empty or blank")
    assert listing(out) == []


def test_too_many_words(mlp, tmp_path):
    r = doccc_cmd(mlp.path, "-o", f"{tmp_path}/out/", env={"DOCC_CC": " ".join(["clang"] + ["-O2"] * 64)})
    assert_exit(r, 2, "DOCC_CC has 65 words, more than 64")
    assert listing(tmp_path / "out") == []


def test_empty_ar_variable(mlp, tmp_path):
    r = doccc_cmd(mlp.path, "-o", tmp_path / "out" / "libm.a", env={"DOCC_AR": ""})
    assert_exit(r, 2, "DOCC_AR is empty or blank")
    assert listing(tmp_path / "out") == []


def test_missing_launcher(mlp, tmp_path):
    out = tmp_path / "out"
    work = tmp_path / "work"
    r = doccc_cmd(mlp.path, "-o", f"{out}/", env={"DOCC_CC": "doccc-no-such-launcher clang", "DOCC_TMP": str(work)})
    assert_exit(r, 1, "cannot run 'doccc-no-such-launcher'", "DOCC_CC ('doccc-no-such-launcher clang')")
    assert listing(out) == [] and listing(work) == []


def test_quotes_are_not_interpreted(mlp, tmp_path):
    """No shell: a quote is part of the word, so "'clang'" is a program of that name."""
    r = doccc_cmd(mlp.path, "-o", f"{tmp_path}/out/", env={"DOCC_CC": "'clang'"})
    assert_exit(r, 1, "cannot run ''clang''")


# ---- static archives ----------------------------------------------------------------

PROGRAM = r"""
#include <stdio.h>
#include "first.h"
#include "second.h"

/* a device-resident build (--simulate) takes host pointers in run_host */
#if FIRST_DEVICE_RESIDENT
#define RUN_FIRST first_run_host
#define RUN_SECOND second_run_host
#else
#define RUN_FIRST first_run
#define RUN_SECOND second_run
#endif

/* argv: xa.bin xb.bin ya.bin yb.bin [first.weights] */
static int io(const char *path, void *p, size_t n, int out)
{
	FILE *f = fopen(path, out ? "wb" : "rb");
	size_t k = f ? (out ? fwrite(p, 1, n, f) : fread(p, 1, n, f)) : 0;
	if (f)
		fclose(f);
	return k != n;
}

int main(int argc, char **argv)
{
	static float xa[FIRST_INPUT0_NUMEL], ya[FIRST_OUTPUT0_NUMEL];
	static float xb[SECOND_INPUT0_NUMEL], yb[SECOND_OUTPUT0_NUMEL];
	first_t *a = NULL;
	second_t *b = NULL;
	if (argc < 5 || io(argv[1], xa, sizeof xa, 0) || io(argv[2], xb, sizeof xb, 0))
		return 2;
	int rc = argc > 5 ? first_create_from(&a, argv[5]) : first_create(&a);
	if (rc || second_create(&b))
		return 3;
	if (RUN_FIRST(a, xa, ya) || RUN_SECOND(b, xb, yb))
		return 4;
	if (io(argv[3], ya, sizeof ya, 1) || io(argv[4], yb, sizeof yb, 1))
		return 5;
	printf("%s %s\n", first_desc.name, second_desc.name);
	first_destroy(a);
	second_destroy(b);
	return 0;
}
"""


def defined_globals(archive, demangle=False):
    r = subprocess.run(["nm", "-g", "--defined-only"] + (["-C"] if demangle else []) + [str(archive)],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    return [line[19:] for line in r.stdout.splitlines() if re.match(r"^[0-9a-f]{16} ", line)]


def link_flags(r):
    m = re.search(r"a program that links this archive also needs: (.*)$", r.stderr, re.M)
    assert m, "doccc -v named no link flags for the archive\n" + fmt_result(r)
    return m.group(1).split()


@pytest.mark.parametrize("target", ["sequential", "openmp", "cuda-sim", "external-weights"])
def test_two_static_archives_in_one_program(exports, mlp, tmp_path, check_close, target):
    np = require("numpy")
    cnn = exports.get("small_cnn", "training", 1, "pt2")
    external = target == "external-weights"
    tflags = target_args("sequential" if external else target)
    out = tmp_path / "out"
    flags = []
    for name, m in (("first", mlp), ("second", cnn)):
        extra = ["--external-weights"] if external and name == "first" else []
        r = doccc_cmd(m.path, *tflags, "-n", name, "-o", out / f"lib{name}.a", "-v", *extra)
        assert_exit(r, 0)
        flags += [f for f in link_flags(r) if f not in flags]
        syms = defined_globals(out / f"lib{name}.a", demangle=target == "cuda-sim")
        assert syms and all(s.startswith(name + "_") for s in syms), syms
        assert (f"{name}_weights_blob" in syms) == (not extra), syms
    assert listing(out) == ["first.h", "first.weights", "libfirst.a", "libsecond.a", "second.h"] if external \
        else ["first.h", "libfirst.a", "libsecond.a", "second.h"], listing(out)
    src = tmp_path / "two.c"
    src.write_text(PROGRAM)
    xa, xb = tmp_path / "xa.bin", tmp_path / "xb.bin"
    mlp.x.astype("<f4").tofile(xa)
    cnn.x.astype("<f4").tofile(xb)
    for cc in ("gcc", "clang"):
        require_cmd(cc)
        exe = tmp_path / f"two_{cc}"
        # the archives by path: nothing else named doccc or the models is linked
        cmd = [cc, "-std=c11", "-Wall", "-Wextra", "-Werror", f"-I{out}", str(src), "-o", str(exe),
               str(out / "libfirst.a"), str(out / "libsecond.a"), *flags]
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
        assert r.returncode == 0, f"{' '.join(cmd)}\n{r.stdout}{r.stderr}"
        ya, yb = tmp_path / f"ya_{cc}.bin", tmp_path / f"yb_{cc}.bin"
        run = [str(exe), str(xa), str(xb), str(ya), str(yb)] + ([str(out / "first.weights")] if external else [])
        r = subprocess.run(run, capture_output=True, text=True, timeout=300)
        assert r.returncode == 0 and r.stdout.strip() == "first second", f"exit {r.returncode}\n{r.stdout}{r.stderr}"
        check_close(np.fromfile(ya, "<f4").reshape(mlp.ref[0].shape), mlp.ref[0], f"static mlp {target} {cc}")
        check_close(np.fromfile(yb, "<f4").reshape(cnn.ref[0].shape), cnn.ref[0], f"static small_cnn {target} {cc}")


def test_static_archive_through_pkg_config(mlp, tmp_path, check_close):
    """--emit-pkgconfig beside an openmp archive: gcc links a program with
    `pkg-config --cflags --libs` alone, and it computes eager PyTorch's output."""
    np = require("numpy")
    require_cmd("pkg-config")
    require_cmd("gcc")
    out = tmp_path / "out"
    r = doccc_cmd(mlp.path, "-t", "openmp", "-n", "first", "-o", out / "libfirst.a", "--emit-pkgconfig")
    assert_exit(r, 0)
    env = dict(os.environ, PKG_CONFIG_PATH=str(out))
    pc = subprocess.run(["pkg-config", "--cflags", "--libs", "first"], capture_output=True, text=True, env=env)
    assert pc.returncode == 0, pc.stderr
    src = tmp_path / "one.c"
    src.write_text('#include <stdio.h>\n#include "first.h"\n'
                   "int main(int argc, char **argv) {\n"
                   "  static float x[FIRST_INPUT0_NUMEL], y[FIRST_OUTPUT0_NUMEL];\n"
                   "  first_t *m = NULL;\n  FILE *f = fopen(argv[1], \"rb\");\n"
                   "  if (argc < 3 || !f || fread(x, sizeof x, 1, f) != 1) return 2;\n  fclose(f);\n"
                   "  if (first_create(&m) || first_run(m, x, y)) return 3;\n"
                   "  f = fopen(argv[2], \"wb\");\n  if (!f || fwrite(y, sizeof y, 1, f) != 1) return 4;\n"
                   "  fclose(f);\n  first_destroy(m);\n  return 0;\n}\n")
    exe = tmp_path / "one"
    cmd = ["gcc", "-std=c11", "-Wall", "-Werror", str(src), "-o", str(exe), *pc.stdout.split()]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, f"{' '.join(cmd)}\n{r.stderr}"
    x, y = tmp_path / "x.bin", tmp_path / "y.bin"
    mlp.x.astype("<f4").tofile(x)
    r = subprocess.run([str(exe), str(x), str(y)], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, f"exit {r.returncode}\n{r.stderr}"
    check_close(np.fromfile(y, "<f4").reshape(mlp.ref[0].shape), mlp.ref[0], "static mlp openmp via pkg-config")


def test_static_archive_output_dir_cannot_be_made(mlp, tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("not a directory\n")
    r = doccc_cmd(mlp.path, "-o", blocker / "sub" / "libm.a")
    assert_exit(r, 1, str(blocker))
    assert listing(tmp_path) == ["file"]


def test_static_archive_ar_failure(mlp, tmp_path):
    fake = tmp_path / "bin" / "fake-ar"
    fake.parent.mkdir()
    fake.write_text("#!/bin/sh\necho 'fake-ar: cannot write archive' >&2\nexit 1\n")
    fake.chmod(0o755)
    out, work = tmp_path / "out", tmp_path / "work"
    r = doccc_cmd(mlp.path, "-n", "m", "-o", out / "libm.a", env={"DOCC_AR": str(fake), "DOCC_TMP": str(work)})
    assert_exit(r, 3, "fake-ar: cannot write archive", f"{fake} failed (exit status 1) making the archive")
    assert listing(out) == [] and listing(work) == []


def test_bench_ccache_script(tmp_path):
    """make bench's test/bench_ccache.py on one model: pass b hits on every
    compile and gives the same library."""
    import json
    import sys
    require_cmd("ccache")
    js = tmp_path / "bench-ccache.json"
    r = subprocess.run([sys.executable, str(Path(__file__).parent / "bench_ccache.py"), "--models", "mlp",
                        "--targets", "openmp,sequential", "--json", str(js), "--dir", str(tmp_path / "w")],
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, fmt_result(r)
    rep = json.loads(js.read_text())
    a, b = rep["passes"]
    assert (a["compiles"], a["hits"], a["misses"]) == (2, 0, 2), rep
    assert (b["compiles"], b["hits"], b["misses"], b["hit_rate"]) == (2, 2, 0, 1.0), rep
    assert rep["identical"] == 2 and rep["differ"] == [], rep


# ---- every size of weights compiles ------------------------------------------------------

@pytest.mark.parametrize("n", [1, 16, 17, 32])
@pytest.mark.parametrize("weights", ["embedded", "external"])
def test_small_weights_compile(tmp_path, n, weights):
    """A model with n float parameters (a blob of 4, 64, 68 or 128 bytes)
    compiles and matches eager, its weights embedded or in NAME.weights: a
    64-byte blob made clang 14 fold the weights file's hash of that constant
    length until it ran out of memory (rt/weights.h's dc_sha256_hex now
    hides the length from it)."""
    torch = require("torch")

    class M(torch.nn.Module):
        def __init__(self):
            super().__init__()
            torch.manual_seed(0)
            self.c = torch.nn.Parameter(torch.randn(n))

        def forward(self, x):
            return x * self.c + 1

    x = torch.randn(2, n)
    pt2 = tmp_path / "small.pt2"
    with torch.no_grad():
        torch.export.save(torch.export.export(M().eval(), (x,)), str(pt2))
        want = M().eval()(x).numpy()
    out = tmp_path / "out"
    extra = ["--external-weights"] if weights == "external" else []
    r = doccc_cmd(pt2, "-t", "sequential", "-n", "small", "-o", f"{out}/", *extra, timeout=120)
    assert r.returncode == 0, fmt_result(r)
    got = run_lib(out / "libsmall.so", [x.numpy()], *(["--weights", out / "small.weights"] if extra else []))
    assert abs(got[0] - want).max() < 1e-5
