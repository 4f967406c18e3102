"""The generated library from C and C++ programs (test/capi/main.c, main.cpp).

The MLP is compiled with `-n mlp` (so the programs can use the MLP_* macros and
mlp_* functions), for the none and openmp targets, and once with
--external-weights (instances then come from mlp_create_from). The programs
are built against the generated header and library exactly as a user would:

    clang   -std=c11   -I OUT -DMODEL_HEADER='"mlp.h"' main.c   -L OUT -lmlp -Wl,-rpath,OUT
    clang++ -std=c++17 -I OUT -DMODEL_HEADER='"mlp.h"' main.cpp -L OUT -lmlp -Wl,-rpath,OUT

with -Wall -Wextra -Werror: a generated header that makes a user's program
warn is a defect. Each program reads a raw float32 input, writes the raw output,
and checks the API itself (see the comment at the top of main.c); the test then
compares the output with eager PyTorch (rtol 1e-4, atol 1e-5).
"""

import shutil
import subprocess
from pathlib import Path

import pytest

from conftest import compile_model

HERE = Path(__file__).resolve().parent


def _cxx():
    for c in ("clang++", "g++"):
        if shutil.which(c):
            return c
    pytest.fail("no C++ compiler (clang++ or g++) on PATH", pytrace=False)


def _build(compiler, std, src, outdir, exe, extra=(), name="mlp"):
    cmd = [compiler, f"-std={std}", "-O1", "-g", "-Wall", "-Wextra", "-Werror", f"-I{outdir}", f"-I{HERE / 'capi'}",
           f'-DMODEL_HEADER="{name}.h"', str(src), "-o", str(exe), f"-L{outdir}", f"-l{name}",
           f"-Wl,-rpath,{outdir}", "-lpthread", *extra]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, f"{' '.join(cmd)}\n{r.stdout}{r.stderr}"
    return exe


def _run(cmd):
    r = subprocess.run([str(c) for c in cmd], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, f"{' '.join(map(str, cmd))}: exit {r.returncode}\n{r.stdout}{r.stderr}"
    return r.stdout


@pytest.fixture(scope="module")
def mlp_export(exports):
    return exports.get("mlp", "training", 4, "pt2")


@pytest.mark.parametrize("variant", ["none", "openmp", "external-weights"])
def test_c_and_cpp_programs(exports, mlp_export, session_tmp, check_close, variant):
    np = exports.np
    target = "sequential" if variant == "external-weights" else variant
    out = session_tmp / f"capi_{variant}"
    extra = ["-n", "mlp"] + (["--external-weights"] if variant == "external-weights" else [])
    lib = compile_model(mlp_export.path, target, out, *extra)
    weights = [out / "mlp.weights"] if variant == "external-weights" else []
    if weights:
        assert weights[0].is_file(), "--external-weights wrote no mlp.weights"

    x_bin = out / "x.bin"
    mlp_export.x.astype("<f4").tofile(x_bin)
    ref = mlp_export.ref[0]

    exe_c = _build("clang", "c11", HERE / "capi" / "main.c", out, out / "capi_c", ["-ldl"])
    stdout = _run([exe_c, lib, x_bin, out / "y_c.bin", *weights])
    assert stdout.rstrip().endswith("ok"), stdout
    if target == "openmp":
        assert "set_num_threads(2) = 0" in stdout, f"openmp build refuses 2 threads:\n{stdout}"
    y_c = np.fromfile(out / "y_c.bin", dtype="<f4").reshape(ref.shape)
    check_close(y_c, ref, f"capi C, {variant}")

    exe_cpp = _build(_cxx(), "c++17", HERE / "capi" / "main.cpp", out, out / "capi_cpp")
    _run([exe_cpp, x_bin, out / "y_cpp.bin", *weights])
    y_cpp = np.fromfile(out / "y_cpp.bin", dtype="<f4").reshape(ref.shape)
    assert np.array_equal(y_cpp, y_c), "the C++ program got other bits than the C program"


def test_two_models_in_one_program(exports, session_tmp):
    """Two libraries with different names link into one program: every exported
    symbol carries the model name (only the weak doccc_model is shared)."""
    a = exports.get("mlp", "training", 1, "pt2")
    b = exports.get("small_cnn", "training", 1, "pt2")
    out = session_tmp / "capi_two"
    compile_model(a.path, "none", out, "-n", "first")
    compile_model(b.path, "none", out, "-n", "second")
    src = out / "two.c"
    src.write_text(
        '#include "first.h"\n#include "second.h"\n#include <stdio.h>\n'
        "int main(void) {\n"
        "  first_t *a = NULL; second_t *b = NULL;\n"
        "  static float xa[FIRST_INPUT0_NUMEL], ya[FIRST_OUTPUT0_NUMEL];\n"
        "  static float xb[SECOND_INPUT0_NUMEL], yb[SECOND_OUTPUT0_NUMEL];\n"
        "  if (first_create(&a) || second_create(&b)) return 1;\n"
        "  if (first_run(a, xa, ya) || second_run(b, xb, yb)) return 1;\n"
        "  printf(\"%s %s\\n\", first_desc.name, second_desc.name);\n"
        "  first_destroy(a); second_destroy(b);\n  return 0;\n}\n")
    exe = out / "two"
    cmd = ["clang", "-std=c11", "-Wall", "-Wextra", "-Werror", f"-I{out}", str(src), "-o", str(exe),
           f"-L{out}", "-lfirst", "-lsecond", f"-Wl,-rpath,{out}"]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, f"{' '.join(cmd)}\n{r.stdout}{r.stderr}"
    assert _run([exe]).strip() == "first second"


def test_gpu_c_program(mlp_export, session_tmp, check_close):
    """The device-resident API from C and C++ (test/capi/gpu.c): a --simulate
    build, host and device pointers, the log hook, a stream, two threads."""
    import numpy as np
    out = session_tmp / "capi_gpu"
    compile_model(mlp_export.path, "cuda-sim", out, "-n", "mlp")
    x_bin = out / "x.bin"
    mlp_export.x.astype("<f4").tofile(x_bin)
    ref = mlp_export.ref[0]
    exe_c = _build("clang", "c11", HERE / "capi" / "gpu.c", out, out / "gpu_c")
    stdout = _run([exe_c, x_bin, out / "y_c.bin"])
    assert stdout.rstrip().endswith("ok"), stdout
    check_close(np.fromfile(out / "y_c.bin", dtype="<f4").reshape(ref.shape), ref, "capi gpu C, cuda-sim")
    # the same file as C++ (the header's extern "C" and types)
    cpp = out / "gpu.cpp"
    cpp.write_text((HERE / "capi" / "gpu.c").read_text().replace("Log *l = user;", "Log *l = (Log *)user;")
                   .replace("Job *j = arg;", "Job *j = (Job *)arg;"))
    exe_cpp = _build(_cxx(), "c++17", cpp, out, out / "gpu_cpp")
    stdout = _run([exe_cpp, x_bin, out / "y_cpp.bin"])
    assert stdout.rstrip().endswith("ok"), stdout
    assert np.array_equal(np.fromfile(out / "y_cpp.bin", dtype="<f4"), np.fromfile(out / "y_c.bin", dtype="<f4"))


@pytest.mark.parametrize("target", ["none", "openmp"])
def test_dynamic_c_and_cpp_programs(session_tmp, check_close, target):
    """The run-time dims API from C and C++ (test/capi/dyn.c, dyn.cpp): an
    MLP exported with a dynamic batch in [1, 64], compiled with `-n dyn`,
    run at batches 7 and 33 by set_dims/run and run_dims (see dyn.c's
    comment for what the programs check themselves); the outputs are
    compared with eager PyTorch, and C++ must give the C program's bits."""
    import numpy as np
    import torch
    from torch.export import Dim
    out = session_tmp / f"capi_dyn_{target}"
    out.mkdir(parents=True, exist_ok=True)
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(12, 32), torch.nn.ReLU(), torch.nn.Linear(32, 5)).eval()
    src = out / "dyn.pt2"
    ep = torch.export.export(model, (torch.randn(3, 12),), dynamic_shapes=({0: Dim("batch", min=1, max=64)},))
    torch.export.save(ep, str(src))
    compile_model(src, target, out, "-n", "dyn")
    sizes, ins, refs = (7, 33), [], []
    for n in sizes:
        x = torch.randn(n, 12, generator=torch.Generator().manual_seed(n))
        ins.append(out / f"x{n}.bin")
        x.numpy().astype("<f4").tofile(ins[-1])
        with torch.no_grad():
            refs.append(model(x).numpy())
    args = [ins[0], sizes[0], ins[1], sizes[1]]

    exe_c = _build("clang", "c11", HERE / "capi" / "dyn.c", out, out / "dyn_c", name="dyn")
    stdout = _run([exe_c, *args, out / "ya_c.bin", out / "yb_c.bin"])
    assert stdout.rstrip().endswith("ok"), stdout
    for n, ref, f in zip(sizes, refs, ("ya_c.bin", "yb_c.bin")):
        check_close(np.fromfile(out / f, dtype="<f4").reshape(ref.shape), ref, f"capi dyn C, {target}, batch {n}")

    exe_cpp = _build(_cxx(), "c++17", HERE / "capi" / "dyn.cpp", out, out / "dyn_cpp", name="dyn")
    stdout = _run([exe_cpp, *args, out / "ya_cpp.bin", out / "yb_cpp.bin"])
    assert stdout.rstrip().endswith("ok"), stdout
    for f in ("ya", "yb"):
        assert np.array_equal(np.fromfile(out / f"{f}_cpp.bin", dtype="<f4"), np.fromfile(out / f"{f}_c.bin", dtype="<f4")), \
            f"{f}: the C++ program got other bits than the C program"
