"""doccc inside build systems: make depfiles (-MD, -MF, -MT) and the packaging
files (--emit-pkgconfig, --emit-cmake), each tried with the real tool: GNU
make reading the depfile, pkg-config and CMake building a small C program
that links the generated library and runs the model, whose outputs are
compared with eager PyTorch.

make, pkg-config, cmake and a C compiler are test dependencies (test/setup.sh
installs them); under CI=true a missing one is a failure, elsewhere a skip.
"""

import os
import shlex
import shutil
import subprocess
import time
from pathlib import Path

import pytest

from conftest import IN_CI, compile_model, doccc_cmd, doccc_path, fmt_result, require

NAME = "mlpnet"


def need_tool(name):
    path = shutil.which(name)
    if not path:
        msg = f"{name} is required for this test; `make setup` installs it"
        if IN_CI:
            pytest.fail(f"CI: {msg}", pytrace=False)
        pytest.skip(msg)
    return path


def run(cmd, cwd=None, env=None, check=True):
    full = dict(os.environ)
    full.pop("MAKEFLAGS", None)  # a surrounding make's -j or -q is not this one's
    full.pop("MFLAGS", None)
    full.update(env or {})
    r = subprocess.run([str(c) for c in cmd], cwd=cwd, env=full, capture_output=True, text=True, timeout=900)
    if check and r.returncode != 0:
        pytest.fail(f"{cmd[0]} failed:\n{fmt_result(r)}", pytrace=False)
    return r


def touch_after(path, newer_than):
    """Set path's mtime to now, waiting until now is past newer_than's mtime
    (file times are coarser than a fast build)."""
    limit = Path(newer_than).stat().st_mtime_ns + 20_000_000
    while time.time_ns() <= limit:
        time.sleep(0.005)
    os.utime(path)


@pytest.fixture(scope="module")
def mlp(exports):
    return exports.get("mlp", "training", 1, "pt2")


# ---- make depfiles --------------------------------------------------------------------

MAKEFILE = """\
DOCCC = doccc
build/libm.so: m.pt2 opts.yaml
\t$(DOCCC) m.pt2 --options opts.yaml -o build/ -MD
-include build/libm.d
"""


def test_depfile_drives_make(tmp_path, mlp):
    """make rebuilds when the YAML or doccc itself changes, and only then;
    a doccc moved elsewhere is not a missing prerequisite (the empty rules)."""
    need_tool("make")
    shutil.copy(mlp.path, tmp_path / "m.pt2")
    (tmp_path / "opts.yaml").write_text("target: sequential\n")
    (tmp_path / "bin").mkdir()
    exe = tmp_path / "bin" / "doccc"
    shutil.copy2(doccc_path(), exe)
    (tmp_path / "Makefile").write_text(MAKEFILE)
    lib, dep = tmp_path / "build" / "libm.so", tmp_path / "build" / "libm.d"

    def make(*args):
        return run(["make", f"DOCCC={exe}", *args], cwd=tmp_path, check=not args)

    def up_to_date():
        return make("-q").returncode == 0

    make()
    assert lib.is_file() and dep.is_file()
    text = dep.read_text()
    assert text.startswith("build/libm.so: \\\n"), text
    for p in ("m.pt2", "opts.yaml", str(exe)):
        assert f"  {p}" in text and f"\n{p}:\n" in text, f"{p} is not a prerequisite with an empty rule:\n{text}"
    assert up_to_date()

    touch_after(tmp_path / "opts.yaml", lib)
    assert not up_to_date(), "a newer opts.yaml leaves the library up to date"
    before = lib.stat().st_mtime_ns
    make()
    assert lib.stat().st_mtime_ns != before, "make did not rebuild the library"
    assert up_to_date()
    assert up_to_date(), "touching nothing made the library out of date"

    # Only the depfile names doccc: a new doccc must rebuild.
    touch_after(exe, lib)
    assert not up_to_date(), "a newer doccc executable leaves the library up to date"
    make()
    assert up_to_date()

    # doccc moved: the old path's empty rule keeps make going, and the rebuild
    # names the new one.
    (tmp_path / "bin2").mkdir()
    moved = tmp_path / "bin2" / "doccc"
    exe.rename(moved)
    r = run(["make", f"DOCCC={moved}"], cwd=tmp_path)
    assert "doccc m.pt2" in r.stdout, fmt_result(r)
    assert f"  {moved}" in dep.read_text()
    assert run(["make", "-q", f"DOCCC={moved}"], cwd=tmp_path, check=False).returncode == 0


def test_depfile_escapes_paths_for_make(tmp_path, mlp):
    """A space, '$' and '#' in a prerequisite's path are escaped as make reads them."""
    need_tool("make")
    odd = tmp_path / "a b$c#d"
    odd.mkdir()
    shutil.copy(mlp.path, odd / "m.pt2")
    r = doccc_cmd(odd / "m.pt2", "-o", "out/", "-MD", cwd=tmp_path)
    assert r.returncode == 0, fmt_result(r)
    dep = tmp_path / "out" / "libm.d"
    text = dep.read_text()
    esc = str(odd).replace(" ", "\\ ").replace("$", "$$").replace("#", "\\#")
    assert f"  {esc}/m.pt2 \\\n" in text, text
    (tmp_path / "Makefile").write_text("out/libm.so:\n\t@echo rebuild\n-include out/libm.d\n")
    assert run(["make", "-q"], cwd=tmp_path, check=False).returncode == 0, "make misread the escaped depfile"
    touch_after(odd / "m.pt2", tmp_path / "out" / "libm.so")
    assert run(["make", "-q"], cwd=tmp_path, check=False).returncode == 1


def test_depfile_lists_an_extracted_archives_weights(tmp_path, exports):
    """models/model.json of an unzipped .pt2 reads its weights beside it: they
    are prerequisites, and a changed one makes the library out of date."""
    need_tool("make")
    ex = exports.get("mlp", "training", 1, "pt2")
    model_json = exports.export_mod.extract_pt2(ex.path, tmp_path / "x").relative_to(tmp_path)
    root = model_json.parent.parent
    r = doccc_cmd(model_json, "-o", "out/", "-n", "m", "-MD", cwd=tmp_path)
    assert r.returncode == 0, fmt_result(r)
    text = (tmp_path / "out" / "libm.d").read_text()
    weights = sorted(p.relative_to(tmp_path) for p in (tmp_path / root / "data" / "weights").iterdir())
    want = [model_json] + weights + [root / "data" / "constants" / "model_constants_config.json"]
    listed = [line.strip(" \\") for line in text.split("\n\n")[0].splitlines()[1:-1]]
    assert listed == [str(p) for p in want], text
    (tmp_path / "Makefile").write_text("out/libm.so:\n\t@echo rebuild\n-include out/libm.d\n")
    assert run(["make", "-q"], cwd=tmp_path, check=False).returncode == 0
    touch_after(tmp_path / weights[0], tmp_path / "out" / "libm.so")
    assert run(["make", "-q"], cwd=tmp_path, check=False).returncode == 1


def test_depfile_mf_and_mt(tmp_path, exports):
    """-MF names the depfile (no -MD needed), -MTFILE and -MT FILE add targets
    written as given, in order; a JSON program's --weights file is a
    prerequisite."""
    ex = exports.get("mlp", "training", 1, "json")
    mf = tmp_path / "deps" / "model.d"
    mf.parent.mkdir()
    r = doccc_cmd(ex.path, "-o", tmp_path / "out/", "-n", "x", "-MF", mf, "-MTlib.so", "-MT", "x.h stamp",
                  *ex.weight_args())
    assert r.returncode == 0, fmt_result(r)
    text = mf.read_text()
    assert text.startswith("lib.so x.h stamp: \\\n"), text
    assert ex.weights and f"  {ex.path} \\\n  {ex.weights} \\\n" in text, text
    assert not (tmp_path / "out" / "libx.d").exists()


def test_help_lists_the_options(doccc):
    r = doccc_cmd("--help")
    assert r.returncode == 0, fmt_result(r)
    for flag in ("-MD", "-MF FILE", "-MT TARGET", "-MP", "--emit-pkgconfig", "--emit-cmake"):
        assert flag in r.stdout, f"--help does not mention {flag}\n" + fmt_result(r)


@pytest.mark.parametrize("args, needle", [
    (["-MF"], "option '-MF' needs a value"),
    (["-MD", "-MT"], "option '-MT' needs a value"),
    (["-MT", "t"], "-MT goes with -MD or -MF"),
    (["--check", "-MD"], "--check builds nothing"),
    (["--check", "--emit-cmake"], "--check builds nothing"),
])
def test_usage_errors(tmp_path, args, needle):
    src = tmp_path / "m.json"
    src.write_text("{}")
    r = doccc_cmd(src, "-o", tmp_path / "out/", *args)
    assert r.returncode == 2 and needle in r.stderr, fmt_result(r)
    assert not (tmp_path / "out").exists() or not any((tmp_path / "out").iterdir())


@pytest.mark.parametrize("where", ["missing-dir", "under-a-file"])
def test_mf_unwritable_leaves_nothing(tmp_path, mlp, where):
    """A depfile that cannot be written: exit 1 naming it, and no library,
    header, source, weights, report or packaging file stays."""
    (tmp_path / "afile").write_text("")
    mf = tmp_path / ("missing" if where == "missing-dir" else "afile") / "x.d"
    out = tmp_path / "out"
    out.mkdir()
    r = doccc_cmd(mlp.path, "-o", f"{out}/", "-MF", mf, "--emit-pkgconfig", "--emit-cmake", "--emit-source",
                  "--external-weights", "--report", out / "report.json")
    assert r.returncode == 1, fmt_result(r)
    assert f"{mf}: error: cannot write" in r.stderr, fmt_result(r)
    left = sorted(p.name for p in out.iterdir())
    assert left == [], f"{out} should be empty after a failure, holds {left}"


def test_failed_compile_keeps_the_earlier_depfile(tmp_path, mlp):
    """A compile that fails writes no depfile; the earlier one, which
    describes the earlier library (still there), stays as it was."""
    out = tmp_path / "out"
    compile_model(mlp.path, "none", out, "-n", "m", "-MD")
    dep = out / "libm.d"
    before = dep.read_bytes()
    bad = tmp_path / "bad.yaml"
    bad.write_text("target: [\n")
    r = doccc_cmd(mlp.path, "-o", f"{out}/", "-n", "m", "-MD", "--options", bad)
    assert r.returncode == 1, fmt_result(r)
    assert dep.read_bytes() == before
    assert sorted(p.name for p in out.iterdir()) == ["libm.d", "libm.so", "m.h"]


def test_written_when_the_cache_supplies_the_outputs(tmp_path, mlp):
    """DOCC_REUSE_BINARIES: the depfile and the packaging files of a build
    served from the cache."""
    env = {"DOCC_REUSE_BINARIES": "1", "DOCC_TMP": str(tmp_path / "cache")}
    (tmp_path / "cache").mkdir()
    compile_model(mlp.path, "none", tmp_path / "first", "-n", "m", env=env)
    out = tmp_path / "second"
    r = doccc_cmd(mlp.path, "-o", f"{out}/", "-n", "m", "-v", "-MD", "--emit-pkgconfig", "--emit-cmake", env=env)
    assert r.returncode == 0 and "reused the build" in r.stderr, fmt_result(r)
    assert sorted(p.name for p in out.iterdir()) == ["libm.d", "libm.so", "m.h", "m.pc", "mConfig.cmake"]


# ---- pkg-config and CMake ---------------------------------------------------------------

APP_C = """\
#include <stdio.h>
#include "mlpnet.h"

int main(int argc, char **argv)
{
	static float in[MLPNET_INPUT0_NUMEL], out[MLPNET_OUTPUT0_NUMEL];
	FILE *f = argc > 1 ? fopen(argv[1], "rb") : NULL;
	if (!f || fread(in, sizeof in, 1, f) != 1)
		return 2;
	fclose(f);
	mlpnet_t *m;
	int st = mlpnet_create(&m);
	if (st) {
		fprintf(stderr, "create: %s\\n", mlpnet_strerror(st));
		return 1;
	}
	if ((st = mlpnet_run(m, in, out))) {
		fprintf(stderr, "run: %s\\n", mlpnet_last_error(m));
		return 1;
	}
	for (int i = 0; i < MLPNET_OUTPUT0_NUMEL; i++)
		printf("%.9g\\n", out[i]);
	mlpnet_destroy(m);
	return 0;
}
"""


@pytest.fixture(params=["so", "a"])
def consumer(request, tmp_path, mlp):
    """The library with both packaging files in tmp_path/out, the C program
    app.c, its input as raw float32, and a check of a run's output: a
    shared library (sequential) and a static archive (openmp, whose
    consumer needs clang's OpenMP runtime from the packaging files)."""
    np = require("numpy")
    if request.param == "so":
        compile_model(mlp.path, "sequential", tmp_path / "out", "-n", NAME, "--emit-pkgconfig", "--emit-cmake")
    else:
        r = doccc_cmd(mlp.path, "-t", "openmp", "-o", tmp_path / "out" / f"lib{NAME}.a", "-n", NAME,
                      "--emit-pkgconfig", "--emit-cmake")
        assert r.returncode == 0, fmt_result(r)
        assert "STATIC IMPORTED" in (tmp_path / "out" / f"{NAME}Config.cmake").read_text()
    (tmp_path / "app.c").write_text(APP_C)
    x = tmp_path / "x.bin"
    x.write_bytes(np.ascontiguousarray(mlp.x, dtype=np.float32).tobytes())

    def check(app, check_close, label):
        env = dict(os.environ)
        env.pop("LD_LIBRARY_PATH", None)  # the run path finds the library
        r = subprocess.run([str(app), str(x)], capture_output=True, text=True, env=env, timeout=60)
        assert r.returncode == 0, fmt_result(r)
        got = np.array([float(v) for v in r.stdout.split()], dtype=np.float32).reshape(mlp.ref[0].shape)
        check_close(got, mlp.ref[0], label)

    return tmp_path, check


def pkg_build(tmp_path, pcdir, app):
    flags = run(["pkg-config", "--cflags", "--libs", NAME], env={"PKG_CONFIG_PATH": str(pcdir)}).stdout
    assert str(pcdir) in flags, flags
    cc = os.environ.get("CC", "cc")
    run([*shlex.split(cc), "-o", app, tmp_path / "app.c", *shlex.split(flags)])


def test_pkgconfig_consumer(consumer, check_close):
    """pkg-config --cflags --libs compiles and links a program that runs the
    model; the directory moved elsewhere still works (${pcfiledir})."""
    need_tool("pkg-config")
    tmp_path, check = consumer
    pc = (tmp_path / "out" / f"{NAME}.pc").read_text()
    assert "${pcfiledir}" in pc and str(tmp_path) not in pc, pc
    pkg_build(tmp_path, tmp_path / "out", tmp_path / "app")
    check(tmp_path / "app", check_close, "pkg-config consumer")

    moved = tmp_path / "elsewhere" / "lib"
    moved.parent.mkdir()
    (tmp_path / "out").rename(moved)
    pkg_build(tmp_path, moved, tmp_path / "app2")
    check(tmp_path / "app2", check_close, "pkg-config consumer, directory moved")


def test_pkgconfig_library_named_by_o(tmp_path, mlp, check_close):
    """-o DIR/FILE.so: Libs links it by -l:FILE.so, and -MD writes DIR/FILE.d."""
    need_tool("pkg-config")
    np = require("numpy")
    out = tmp_path / "out"
    out.mkdir()
    r = doccc_cmd(mlp.path, "-o", out / "model.so", "-n", NAME, "--emit-pkgconfig", "-MD")
    assert r.returncode == 0, fmt_result(r)
    assert sorted(p.name for p in out.iterdir()) == sorted(["model.d", "model.so", f"{NAME}.h", f"{NAME}.pc"])
    assert "-l:model.so" in (out / f"{NAME}.pc").read_text()
    (tmp_path / "app.c").write_text(APP_C)
    pkg_build(tmp_path, out, tmp_path / "app")
    x = tmp_path / "x.bin"
    x.write_bytes(np.ascontiguousarray(mlp.x, dtype=np.float32).tobytes())
    r = subprocess.run([str(tmp_path / "app"), str(x)], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, fmt_result(r)
    got = np.array([float(v) for v in r.stdout.split()], dtype=np.float32).reshape(mlp.ref[0].shape)
    check_close(got, mlp.ref[0], "pkg-config consumer of model.so")


CMAKELISTS = f"""\
cmake_minimum_required(VERSION 3.13)
project(consumer C)
find_package({NAME} CONFIG REQUIRED PATHS "${{MODEL_DIR}}" NO_DEFAULT_PATH)
add_executable(app app.c)
target_link_libraries(app doccc::{NAME})
"""


def cmake_build(tmp_path, model_dir, build):
    run(["cmake", "-S", tmp_path, "-B", build, f"-DMODEL_DIR={model_dir}"])
    run(["cmake", "--build", build])
    return build / "app"


def test_cmake_consumer(consumer, check_close):
    """find_package(NAME CONFIG) and doccc::NAME build a program that runs
    the model; the directory moved elsewhere still works."""
    need_tool("cmake")
    tmp_path, check = consumer
    cfg = (tmp_path / "out" / f"{NAME}Config.cmake").read_text()
    assert "${CMAKE_CURRENT_LIST_DIR}" in cfg and str(tmp_path) not in cfg, cfg
    (tmp_path / "CMakeLists.txt").write_text(CMAKELISTS)
    check(cmake_build(tmp_path, tmp_path / "out", tmp_path / "b1"), check_close, "cmake consumer")

    moved = tmp_path / "elsewhere"
    (tmp_path / "out").rename(moved)
    check(cmake_build(tmp_path, moved, tmp_path / "b2"), check_close, "cmake consumer, directory moved")
