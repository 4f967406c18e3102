"""Faults around the compiler and in the libraries it generates.

Around the compiler: a full disk (an LD_PRELOAD shim, test/capi/enospc.c,
and a real 1 MiB tmpfs where this runner may mount one), SIGINT/SIGTERM
while clang runs (a fake slow clang on PATH), two doccc processes writing
one output or sharing one DOCC_REUSE_BINARIES cache, and a damaged cache
entry. Each failure must name the file, exit with the documented code and
leave no output or temporary behind.

In generated libraries: create() under allocation failure (the k-th
allocation fails, for every k: test/capi/failalloc.c and failcreate.c),
a truncated or altered --external-weights file, N threads with an
instance each under ThreadSanitizer (test/capi/threads.c), and `doccc run`
with bad .npy inputs.

The C helpers are built here with clang into the test's folders.
"""

import os
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from conftest import compile_model, doccc_cmd, doccc_path, fmt_result, require
from test_cli import assert_exit, mlp, mlp_lib  # noqa: F401 (fixtures)

HERE = Path(__file__).resolve().parent
CAPI = HERE / "capi"


def enospc_env(helpers, prefix, at):
    """The ENOSPC shim's environment; under `make asan` the sanitizer must
    let another preloaded library come first."""
    opts = (os.environ.get("ASAN_OPTIONS", "") + ":verify_asan_link_order=0").lstrip(":")
    return {"LD_PRELOAD": str(helpers["enospc"]), "DOCCC_ENOSPC": str(prefix), "DOCCC_ENOSPC_AT": str(at),
            "ASAN_OPTIONS": opts}


def listing(d):
    """Every path under d, relative (empty list if d is missing)."""
    d = Path(d)
    return sorted(str(p.relative_to(d)) for p in d.rglob("*")) if d.exists() else []


def build_c(src, out, *flags, shared=False):
    """Compile a helper of test/capi with clang; returns the output path."""
    cmd = ["clang", "-std=c11", "-O1", "-g", "-Wall", "-Wextra", "-Werror"]
    cmd += ["-shared", "-fPIC"] if shared else []
    cmd += [str(src), "-o", str(out), *map(str, flags)]
    r = subprocess.run(cmd, capture_output=True, text=True)
    assert r.returncode == 0, f"{' '.join(cmd)}\n{r.stderr}"
    return out


HELPERS = {  # name: (source, flags, shared)
    "enospc": ("enospc.c", ["-ldl"], True),
    "failalloc": ("failalloc.c", ["-ldl", "-lpthread"], True),
    "failcreate": ("failcreate.c", ["-ldl"], False),
}


class Helpers:
    """test/capi helpers, each built on first use."""

    def __init__(self, d):
        self.d, self.built = d, {}

    def __getitem__(self, name):
        if name not in self.built:
            src, flags, shared = HELPERS[name]
            out = self.d / (name + (".so" if shared else ""))
            self.built[name] = build_c(CAPI / src, out, *flags, shared=shared)
        return self.built[name]


@pytest.fixture(scope="module")
def helpers(tmp_path_factory):
    return Helpers(tmp_path_factory.mktemp("capi"))


# ---- a full disk -------------------------------------------------------------------

@pytest.mark.parametrize("what", ["lib", "header", "weights", "workdir"])
def test_disk_full(mlp, helpers, tmp_path, what):
    """A write that fails with ENOSPC, part-way, in each output and in the
    working directory: exit 1, the file named, nothing left behind (the
    earlier outputs of the same build included). The outputs are written
    (copied) only when the working directory is on another file system,
    else renamed into place: the working directory goes to /dev/shm then."""
    out, work = tmp_path / "out", tmp_path / "work"
    out.mkdir()
    if what != "workdir":
        shm = Path(tempfile.mkdtemp(dir="/dev/shm"))
        assert os.stat(shm).st_dev != os.stat(out).st_dev, "/dev/shm is on the file system of the outputs"
        work = shm / "work"
    target = {"lib": out / "libm.so", "header": out / "m.h", "weights": out / "m.weights", "workdir": work}[what]
    env = dict(enospc_env(helpers, target, 1000), DOCC_TMP=str(work))
    r = doccc_cmd(mlp.path, "-n", "m", "-o", f"{out}/", "--external-weights", env=env)
    assert_exit(r, 1, "No space left on device", target if what != "workdir" else work)
    assert listing(out) == [], fmt_result(r)
    assert listing(work) == [], fmt_result(r)
    if what != "workdir":
        shutil.rmtree(work.parent)


def test_disk_full_tmpfs(mlp, tmp_path):
    """The same on a real, small file system: a 1 MiB tmpfs holds the
    working directory and the outputs (in a private mount namespace; needs
    root and unshare)."""
    if os.geteuid() != 0 or subprocess.run(["unshare", "-m", "true"], capture_output=True).returncode != 0:
        pytest.skip("cannot mount a tmpfs here (needs root and unshare -m)")
    mnt = tmp_path / "small"
    mnt.mkdir()
    # Fill the file system but for 8 KiB: the source fits nowhere.
    script = (f"mount -t tmpfs -o size=1m tmpfs {mnt} && mkdir {mnt}/out {mnt}/work && "
              f"head -c $((1024*1024 - 8192)) /dev/zero > {mnt}/fill 2>/dev/null; "
              f"DOCC_TMP={mnt}/work {doccc_path()} {mlp.path} -n m -o {mnt}/out/; rc=$?; "
              f"ls -A {mnt}/out {mnt}/work; exit $rc")
    r = subprocess.run(["unshare", "-m", "sh", "-c", script], capture_output=True, text=True, timeout=300)
    assert_exit(r, 1, "No space left on device", f"{mnt}/work/doccc-")
    assert r.stdout.split() == [f"{mnt}/out:", f"{mnt}/work:"], fmt_result(r)


def test_disk_full_run_output(mlp, mlp_lib, helpers, tmp_path):
    """`doccc run` whose output cannot be written: exit 1, the file named, no
    partial .npy left."""
    np = require("numpy")
    x, y = tmp_path / "x.npy", tmp_path / "y.npy"
    np.save(x, mlp.x)
    r = doccc_cmd("run", mlp_lib, "-i", x, "-o", y, env=enospc_env(helpers, y, 100))
    assert_exit(r, 1, f"{y}: error: cannot write: No space left on device")
    assert listing(tmp_path) == ["x.npy"], fmt_result(r)


def test_stdout_full(doccc):
    with open("/dev/full", "w") as full:
        r = subprocess.run([str(doccc), "--list-ops"], stdout=full, stderr=subprocess.PIPE, text=True)
    assert r.returncode == 1 and "cannot write to standard output" in r.stderr, r.stderr


# ---- signals -----------------------------------------------------------------------

def fake_clang(d, body):
    d.mkdir()
    for tool in ("clang", "clang++"):
        p = d / tool
        p.write_text("#!/bin/sh\n" + body)
        p.chmod(p.stat().st_mode | stat.S_IXUSR)
    return {"PATH": f"{d}{os.pathsep}{os.environ['PATH']}"}


def alive(pid):
    try:
        st = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return st.rsplit(")", 1)[1].split()[0] != "Z"


def _default_signals():
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, signal.SIG_DFL)


@pytest.mark.parametrize("sig,ignore_term", [(signal.SIGINT, False), (signal.SIGTERM, False),
                                             (signal.SIGTERM, True)])
def test_signal_during_compile(mlp, tmp_path, sig, ignore_term):
    """SIGINT/SIGTERM while clang runs: the compiler is stopped (SIGKILL after
    2 s if it ignores the signal), the working directory removed, nothing
    written, and doccc dies of the same signal."""
    pidfile = tmp_path / "clang.pid"
    trap = "trap '' TERM INT\n" if ignore_term else ""
    env = fake_clang(tmp_path / "bin", f"{trap}echo $$ > {pidfile}\nexec sleep 60\n")
    out, work = tmp_path / "out", tmp_path / "work"
    out.mkdir()
    env.update(os.environ, PATH=env["PATH"], DOCC_TMP=str(work))
    # doccc keeps a signal ignored that its parent ignored (nohup, a background
    # job: a non-interactive shell starts those with SIGINT ignored, as the
    # suite is when run in the background); the test stands for a terminal user
    p = subprocess.Popen([str(doccc_path()), str(mlp.path), "-n", "m", "-o", f"{out}/", "--external-weights"],
                         env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                         preexec_fn=_default_signals)
    for _ in range(600):
        if pidfile.exists() and pidfile.read_text().strip():
            break
        time.sleep(0.05)
    else:
        p.kill()
        pytest.fail("the fake clang never started:\n" + p.communicate()[1])
    child = int(pidfile.read_text())
    t0 = time.monotonic()
    p.send_signal(sig)
    _, err = p.communicate(timeout=30)
    assert p.returncode == -sig, f"exit {p.returncode}\n{err}"
    assert time.monotonic() - t0 < (5 if ignore_term else 1.5)
    assert not alive(child), "the compiler was left running"
    assert listing(out) == [] and listing(work) == [], (listing(out), listing(work))


# ---- concurrent builds and the DOCC_REUSE_BINARIES cache ----------------------------

def cache_entry(cache):
    entries = [p for p in (cache / "doccc-cache").iterdir()]
    assert len(entries) == 1 and entries[0].is_dir(), entries
    return entries[0]


def run_ok(lib, mlp, tmp_path):
    np = require("numpy")
    x, y = tmp_path / "x.npy", tmp_path / "y.npy"
    np.save(x, mlp.x)
    r = doccc_cmd("run", lib, "-i", x, "-o", y)
    assert_exit(r, 0)
    np.testing.assert_allclose(np.load(y), mlp.ref[0], rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("damage", ["truncate", "alter", "remove", "manifest"])
def test_cache_damaged_entry_rebuilt(mlp, tmp_path, damage):
    """A cache entry whose library was truncated, altered (same size),
    removed, or whose MANIFEST is gone is not used: doccc says so under -v,
    compiles again, and the rebuilt entry replaces it."""
    cache, out = tmp_path / "cache", tmp_path / "out"
    env = {"DOCC_REUSE_BINARIES": "1", "DOCC_TMP": str(cache)}
    args = (mlp.path, "-n", "m", "-o", f"{out}/", "-v")
    assert_exit(doccc_cmd(*args, env=env), 0)
    r = doccc_cmd(*args, env=env)
    assert_exit(r, 0, "reused the build")
    entry = cache_entry(cache)
    assert sorted(p.name for p in entry.iterdir()) == ["MANIFEST", "libm.so", "m.h"]
    so = entry / "libm.so"
    data = so.read_bytes()
    if damage == "truncate":
        so.write_bytes(data[: len(data) // 2])
    elif damage == "alter":
        so.write_bytes(data[:4096] + bytes(b ^ 0xFF for b in data[4096:4160]) + data[4160:])
    elif damage == "remove":
        so.unlink()
    else:
        (entry / "MANIFEST").unlink()
    (out / "libm.so").unlink()
    r = doccc_cmd(*args, env=env)
    why = {"truncate": "libm.so does not match its sha256", "alter": "libm.so does not match its sha256",
           "remove": "libm.so is missing", "manifest": "MANIFEST is missing"}[damage]
    assert_exit(r, 0, "stale cache entry", why)
    assert "reused the build" not in r.stderr and "clang" in r.stderr, fmt_result(r)
    run_ok(out / "libm.so", mlp, tmp_path)
    entry = cache_entry(cache)
    assert (entry / "libm.so").read_bytes() == (out / "libm.so").read_bytes()
    assert_exit(doccc_cmd(*args, env=env), 0, "reused the build")


def test_concurrent_builds_one_output_one_cache(mlp, tmp_path):
    """Four doccc processes build the same model into the same output path
    with one shared cache: all succeed, the library is whole and runs, and
    the cache holds one complete entry and no temporary."""
    cache, out = tmp_path / "cache", tmp_path / "out"
    out.mkdir()
    env = dict(os.environ, DOCC_REUSE_BINARIES="1", DOCC_TMP=str(cache))
    cmd = [str(doccc_path()), str(mlp.path), "-n", "m", "-o", f"{out}/", "--external-weights"]
    for _round in range(2):  # the second round reuses the cache, concurrently too
        ps = [subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
              for _ in range(4)]
        for p in ps:
            _, err = p.communicate(timeout=300)
            assert p.returncode == 0, err
        assert listing(out) == ["libm.so", "m.h", "m.weights"]
        run_ok(out / "libm.so", mlp, tmp_path)
        entry = cache_entry(cache)
        assert sorted(p.name for p in entry.iterdir()) == ["MANIFEST", "libm.so", "m.h", "m.weights"]
        assert [p.name for p in cache.iterdir() if p.name != "doccc-cache"] == []


# ---- the external weights file ---------------------------------------------------

def damage_weights(path, how):
    data = path.read_bytes()
    if how == "truncated":
        data = data[:-100]
    elif how == "altered":  # same size, one byte of the data changed
        i = 128 + (len(data) - 128) // 2
        data = data[:i] + bytes([data[i] ^ 1]) + data[i + 1:]
    elif how == "header":  # another build's sha256 in the header
        data = data[:16] + b"0" * 64 + data[80:]
    elif how == "magic":
        data = b"NOTDOCCC" + data[8:]
    path.write_bytes(data)


WEIGHTS_DAMAGE = {
    "truncated": "holds", "altered": "damaged or was altered", "header": "made for another build",
    "magic": "not a doccc weights file",
}


@pytest.mark.parametrize("target", ["sequential", "cuda-sim"])
@pytest.mark.parametrize("how", list(WEIGHTS_DAMAGE))
def test_damaged_weights_file(mlp, tmp_path, target, how):
    """create() refuses a truncated, altered (same size), foreign or
    non-doccc weights file: `doccc run` exits 1 with the file and the
    library's reason; the intact file runs."""
    np = require("numpy")
    from conftest import target_args
    lib = compile_model(mlp.path, target_args(target)[1], tmp_path, "-n", "w", "--external-weights",
                        *target_args(target)[2:])
    x, y = tmp_path / "x.npy", tmp_path / "y.npy"
    np.save(x, mlp.x)
    bad = tmp_path / "bad.weights"
    bad.write_bytes((tmp_path / "w.weights").read_bytes())
    damage_weights(bad, how)
    r = doccc_cmd("run", lib, "-i", x, "-o", y, "--weights", bad)
    assert_exit(r, 1, f"{bad}: error: cannot load the weights of {lib}", WEIGHTS_DAMAGE[how])
    assert not y.exists()
    r = doccc_cmd("run", lib, "-i", x, "-o", y)
    assert_exit(r, 0)
    # DOCCC_TRUST_WEIGHTS=1 skips the data's hash, and nothing else.
    r = doccc_cmd("run", lib, "-i", x, "-o", y, "--weights", bad, env={"DOCCC_TRUST_WEIGHTS": "1"})
    assert_exit(r, 0 if how == "altered" else 1)


# ---- create() under allocation failure --------------------------------------------

@pytest.mark.parametrize("target,external", [("sequential", False), ("sequential", True), ("openmp", False),
                                             ("cuda-sim", False), ("cuda-sim", True)])
def test_create_allocation_failure(mlp, helpers, tmp_path, target, external):
    """The k-th allocation of create() fails, for every k until create
    succeeds (test/capi/failcreate.c): each failure is DOCCC_ERR_NOMEM and
    leaks no allocation or mapping (the simulated device's memory is
    mmap'd, so it is counted too)."""
    from conftest import target_args
    t = target_args(target)
    extra = t[2:] + (["--external-weights"] if external else [])
    lib = compile_model(mlp.path, t[1], tmp_path, "-n", "fa", *extra)
    cmd = [str(helpers["failcreate"]), str(lib)] + ([str(tmp_path / "fa.weights")] if external else [])
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=120,
                       env=dict(os.environ, LD_PRELOAD=str(helpers["failalloc"]), OMP_NUM_THREADS="2"))
    assert r.returncode == 0, fmt_result(r)
    n = int(r.stdout.split("failcreate: ")[1].split()[0])
    assert n >= (3 if external else 2), r.stdout  # the instance, the workspace (, the weights' map)


# ---- instances on many threads, under ThreadSanitizer ---------------------------

def tsan_build(mlp, tmp_path, target):
    """The library doccc builds, compiled again from its kept working
    directory (DOCC_DEBUG=build) with the command `doccc -v` printed, plus
    -fsanitize=thread -g (and -O1 for time)."""
    import resource
    import shlex
    work = tmp_path / "work"
    r = doccc_cmd(mlp.path, "-t", target, "-n", "ts", "-v", "-o", f"{tmp_path}/out/",
                  env={"DOCC_DEBUG": "build", "DOCC_TMP": str(work)})
    assert_exit(r, 0)
    # "cd DIR && clang ...": the compile, the link (with the weights object doccc wrote)
    steps = [shlex.split(line) for line in r.stderr.splitlines() if line.startswith("cd ")]
    assert len(steps) == 2 and all(s[2] == "&&" and s[3] == "clang" for s in steps), r.stderr
    lib = tmp_path / "libts_tsan.so"
    compile_, link = steps[0][3:], steps[1][3:]
    compile_[compile_.index("-o") + 1] = "ts_tsan.o"
    compile_ = [c for c in compile_ if not c.startswith("-O")] + ["-O1", "-g", "-fsanitize=thread", "-Wno-psabi"]
    link[link.index("-o") + 1] = str(lib)
    link = [("ts_tsan.o" if c == "ts.o" else c) for c in link] + ["-fsanitize=thread"]

    def limit():  # a runaway compile must not take the machine
        resource.setrlimit(resource.RLIMIT_AS, (8 << 30, 8 << 30))
    for cmd in (compile_, link):
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=300, preexec_fn=limit, cwd=steps[1][1])
        assert r.returncode == 0, f"{shlex.join(cmd)}\n{r.stderr[-4000:]}"
    return lib


@pytest.mark.parametrize("target", ["sequential", "openmp"])
def test_threads_tsan(mlp, tmp_path, target):
    """8 threads with an instance each, 10 runs each, give the outputs of a
    single-threaded run bit for bit, with no ThreadSanitizer report. OpenMP
    builds run 2 OpenMP threads per instance with LLVM's Archer tool
    (OMP_TOOL_LIBRARIES), which tells ThreadSanitizer about the OpenMP
    runtime's synchronization, and ignore_noninstrumented_modules=1, which
    keeps the uninstrumented libomp's own accesses out of the reports
    (without both, libomp's thread pool shows false races)."""
    lib = tsan_build(mlp, tmp_path, target)
    exe = build_c(CAPI / "threads.c", tmp_path / "threads", "-fsanitize=thread", "-ldl", "-lpthread")
    env = dict(os.environ, TSAN_OPTIONS="halt_on_error=1:exitcode=66:ignore_noninstrumented_modules=1",
               OMP_NUM_THREADS="2")
    archer = sorted(Path("/usr/lib").glob("llvm-*/lib/libarcher.so"))
    if target == "openmp":
        assert archer, "LLVM's libarcher.so (libomp-dev) is needed to check OpenMP code under ThreadSanitizer"
        env["OMP_TOOL_LIBRARIES"] = str(archer[-1])
    r = subprocess.run([str(exe), str(lib), "-", "8", "10"], capture_output=True, text=True, timeout=300, env=env)
    assert r.returncode == 0 and "ThreadSanitizer" not in r.stderr, fmt_result(r)
    assert "8 threads x 10 runs, 0 differ" in r.stdout, fmt_result(r)


# ---- doccc run with bad .npy files ---------------------------------------------
# (test_cli.py has the wrong shape, a float64 input and a missing file.)

def _npy_cases(np, d):
    ok = d / "ok.npy"
    np.save(ok, np.zeros((1, 64), np.float32))
    data = ok.read_bytes()
    cases = {
        "truncated_data": (data[:-10], "file holds 246 data bytes, shape and dtype need 256"),
        "truncated_header": (data[:20], "header runs past the end of the file"),
        "empty": (b"", "npy"),
    }
    for name, arr, needle in (("int32", np.zeros((1, 64), np.int32), "has dtype int32"),
                              ("bigendian", np.zeros((1, 64), ">f4"), "big-endian"),
                              ("rank1", np.zeros((64,), np.float32), "has shape [64]"),
                              ("rank3", np.zeros((1, 1, 64), np.float32), "has shape [1, 1, 64]")):
        p = d / f"{name}.npy"
        np.save(p, arr)
        cases[name] = (p.read_bytes(), needle)
    obj = d / "obj.npy"
    np.save(obj, np.array([None, 1], dtype=object), allow_pickle=True)
    cases["object"] = (obj.read_bytes(), "unsupported dtype")
    return cases


@pytest.mark.parametrize("case", ["truncated_data", "truncated_header", "empty", "int32", "bigendian", "rank1",
                                  "rank3", "object"])
def test_run_bad_npy(mlp_lib, tmp_path, case):
    np = require("numpy")
    data, needle = _npy_cases(np, tmp_path)[case]
    x = tmp_path / f"bad_{case}.npy"
    x.write_bytes(data)
    r = doccc_cmd("run", mlp_lib, "-i", x, "-o", tmp_path / "y.npy")
    assert_exit(r, 1, f"{x}: error:", needle)
    assert not (tmp_path / "y.npy").exists()


@pytest.mark.parametrize("nin,nout", [(0, 1), (2, 1), (1, 0), (1, 2)])
def test_run_wrong_number_of_files(mlp_lib, tmp_path, nin, nout):
    """Too few or too many -i or -o files for the library: exit 1, the
    library named with what it expects."""
    np = require("numpy")
    x = tmp_path / "x.npy"
    np.save(x, np.zeros((1, 64), np.float32))
    args = ["run", mlp_lib] + ["-i", x] * nin + ["-o", tmp_path / "y.npy"] * nout
    r = doccc_cmd(*args)
    what = f"expects 1 input (x), got {nin} (-i)" if nin != 1 else f"expects 1 output (linear_2), got {nout} (-o)"
    assert_exit(r, 1, f"{mlp_lib}: error: the library {what}")
    assert not (tmp_path / "y.npy").exists()


def test_cache_key_covers_every_file_read(tmp_path, exports):
    """The cache key hashes every file the compile reads: an options YAML
    whose pass options change, or a changed weight file of an extracted
    archive, is a new build, not the old one reused; and a compile with
    --report is not served from the cache (the report describes a
    compilation) but is stored for the next."""
    np = require("numpy")
    ex = exports.get("mlp", "training", 1, "pt2")
    model_json = exports.export_mod.extract_pt2(ex.path, tmp_path / "x")
    env = {"DOCC_REUSE_BINARIES": "1", "DOCC_TMP": str(tmp_path / "cache")}
    opts = tmp_path / "o.yaml"
    opts.write_text("passes:\n  expand:\n    tile_m: 8\n")
    args = (model_json, "-n", "m", "-o", f"{tmp_path}/out/", "--options", opts, "-v")
    assert_exit(doccc_cmd(*args, env=env), 0)
    assert_exit(doccc_cmd(*args, env=env), 0, "reused the build")
    opts.write_text("passes:\n  expand:\n    tile_m: 4\n")
    r = doccc_cmd(*args, env=env)
    assert_exit(r, 0)
    assert "reused the build" not in r.stderr, fmt_result(r)
    assert_exit(doccc_cmd(*args, env=env), 0, "reused the build")
    # the first weight, negated: a different model, compiled again
    w = sorted((model_json.parent.parent / "data" / "weights").glob("weight_*"))[0]
    a = np.frombuffer(w.read_bytes(), dtype=np.float32)
    w.write_bytes((-a).tobytes())
    r = doccc_cmd(*args, env=env)
    assert_exit(r, 0)
    assert "reused the build" not in r.stderr, fmt_result(r)
    report = tmp_path / "r.json"
    r = doccc_cmd(*args, "--report", report, env=env)
    assert_exit(r, 0)
    assert "reused the build" not in r.stderr and report.exists(), fmt_result(r)


def test_cache_key_covers_the_compiler(mlp, tmp_path):
    """Another compiler command (DOCC_CC) is another cache entry; the same
    one is reused. A static archive installed from the cache is not
    executable (0644, as a build writes it)."""
    env = {"DOCC_REUSE_BINARIES": "1", "DOCC_TMP": str(tmp_path / "cache")}
    args = (mlp.path, "-n", "m", "-o", f"{tmp_path}/out/", "-v")
    assert_exit(doccc_cmd(*args, env=env), 0)
    assert_exit(doccc_cmd(*args, env=env), 0, "reused the build")
    r = doccc_cmd(*args, env=dict(env, DOCC_CC="clang -O1"))
    assert_exit(r, 0)
    assert "reused the build" not in r.stderr, fmt_result(r)
    assert_exit(doccc_cmd(*args, env=dict(env, DOCC_CC="clang -O1")), 0, "reused the build")
    a = (mlp.path, "-n", "m", "-o", f"{tmp_path}/st/libm.a", "-v")
    assert_exit(doccc_cmd(*a, env=env), 0)
    (tmp_path / "st" / "libm.a").unlink()
    assert_exit(doccc_cmd(*a, env=env), 0, "reused the build")
    assert stat.S_IMODE((tmp_path / "st" / "libm.a").stat().st_mode) == 0o644


# ---- a library built for an instruction set this CPU lacks ----------------------

def foreign_march():
    """A -march that clang knows and this CPU lacks, with one extension it
    lacks as the library names it; None where the CPU's flags are unknown."""
    import hostcpu
    flags = hostcpu.cpu_flags()
    if flags is None:
        return None
    for march, flag in (("x86-64-v4", "avx512f"), ("znver3", "sse4a"), ("sapphirerapids", "amx_tile")):
        if flag not in flags:
            return march, flag.replace("_", "-")
    return None


@pytest.fixture(scope="module")
def dyn_mlp(tmp_path_factory):
    """An MLP with a run-time batch: its library has the dims functions a
    loader may call before create (NAME_infer_dims and the shapes)."""
    torch = require("torch")
    from torch.export import Dim
    torch.manual_seed(0)
    m = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.ReLU(), torch.nn.Linear(32, 8)).eval()
    ep = torch.export.export(m, (torch.randn(4, 16),), dynamic_shapes=({0: Dim("batch", min=1, max=64)},))
    path = tmp_path_factory.mktemp("cpu") / "dm.pt2"
    torch.export.save(ep, str(path))
    return path


def test_library_for_a_cpu_it_does_not_run_on(dyn_mlp, tmp_path):
    """create() of a library compiled for extensions this CPU lacks returns
    DOCCC_ERR_CPU and names them (last_error(NULL)); `doccc run` says so and
    exits 1. Neither dies of SIGILL, and infer_dims, called before create,
    works."""
    import ctypes
    foreign = foreign_march()
    if foreign is None:
        pytest.skip("this CPU's flags are unknown, or it has every extension the foreign -march values need")
    march, lacks = foreign
    lib = compile_model(dyn_mlp, "sequential", tmp_path, "-n", "fc", "--march", march)
    x = tmp_path / "x.npy"
    import numpy as np
    np.save(x, np.ones((3, 16), np.float32))
    r = doccc_cmd("run", lib, "-i", x, "-o", tmp_path / "y.npy")
    assert_exit(r, 1)
    assert f"fc was compiled for -march={march}, which this CPU does not have (it lacks " in r.stderr, fmt_result(r)
    assert lacks in r.stderr.split("(it lacks ")[1].split(")")[0].split(), fmt_result(r)
    assert "--march native" in r.stderr and not (tmp_path / "y.npy").exists(), fmt_result(r)
    so = ctypes.CDLL(str(lib))
    so.fc_last_error.restype = so.fc_strerror.restype = ctypes.c_char_p
    so.fc_last_error.argtypes = [ctypes.c_void_p]
    shapes = (ctypes.POINTER(ctypes.c_int64) * 1)((ctypes.c_int64 * 2)(5, 16))
    dims, msg = (ctypes.c_int64 * 1)(), ctypes.create_string_buffer(256)
    assert so.fc_infer_dims(shapes, dims, msg, 256) == 0 and dims[0] == 5, msg.value
    model = ctypes.c_void_p(1)
    assert so.fc_create(ctypes.byref(model)) == 10 and not model.value  # DOCCC_ERR_CPU, no instance
    assert b"(it lacks " in so.fc_last_error(None) and lacks.encode() in so.fc_last_error(None)
    assert b"instruction set extensions" in so.fc_strerror(10)


# Instructions beyond the baseline x86-64: VEX/EVEX (v-mnemonics, ymm, zmm,
# mask registers) and the scalar extensions of x86-64-v2 and v3.
BEYOND_BASELINE = ("ymm", "zmm", "%k", "shlx", "shrx", "sarx", "rorx", "andn", "bextr", "blsr", "blsi", "blsmsk",
                   "bzhi", "pdep", "pext", "mulx", "lzcnt", "tzcnt", "popcnt", "movbe", "pshufb", "ptest", "pmaxs",
                   "pmins", "crc32", "pcmpestr", "pcmpistr", "roundps", "roundss", "blendv", "pmulld", "pextr", "pinsr")


def disassembly(lib):
    """Each function of lib: its instructions' mnemonics and operands (objdump)."""
    tool = shutil.which("objdump")
    if not tool:
        pytest.fail("objdump (binutils) is needed to read the library's code", pytrace=False)
    out = subprocess.run([tool, "-d", "--no-show-raw-insn", str(lib)], capture_output=True, text=True, check=True).stdout
    funcs, cur = {}, None
    for line in out.splitlines():
        if line.endswith(">:"):
            cur = funcs.setdefault(line.split("<", 1)[1][:-2], [])
        elif cur is not None and "\t" in line:
            cur.append(line.split("\t", 1)[1])
    return funcs


def test_entry_points_before_the_cpu_check_are_baseline(dyn_mlp, tmp_path):
    """What may run before create's CPU check, create_from, the check
    itself and the dims functions, is baseline x86-64 code in a library
    compiled for x86-64-v4 (compiled only: any machine reads it), while the
    model's own code uses AVX-512."""
    lib = compile_model(dyn_mlp, "sequential", tmp_path, "-n", "bl", "--march", "x86-64-v4", env={"DOCC_MARCH": ""})
    funcs = disassembly(lib)
    entry = [f for f in funcs if f in ("bl_create_from", "bl_infer_dims", "bl_input_shape", "bl_output_shape")
             or f.startswith(("dc_cpu", "dc_check_dims"))]
    assert {"bl_create_from", "bl_infer_dims", "bl_input_shape", "bl_output_shape"} <= set(entry), sorted(funcs)
    for f in entry:
        bad = [i for i in funcs[f] if i.startswith("v") or any(w in i for w in BEYOND_BASELINE)]
        assert not bad, f"{f} runs before the CPU check but has {bad[:5]}"
    model = [i for f, ins in funcs.items() if f not in entry for i in ins]
    assert any("zmm" in i for i in model), "the model's code uses no AVX-512: the check above proves nothing"
