"""Shared fixtures and helpers of the doccc test suite (pytest).

The suite drives the compiler only through its command line, as users do:

    compile_model(src, target, outdir, *extra)   doccc SRC -t TARGET -o OUTDIR/ EXTRA...;
                                                 asserts exit 0, returns the library path
    run_lib(lib, inputs, *extra)                 doccc run LIB -i in0.npy ... -o out0.npy ...;
                                                 returns the outputs as numpy arrays
    load_lib(lib, **kw)                          doccc.load(LIB) with the Python loader of
                                                 python/ (in this process, no .npy files)
    doccc_cmd(*args)                             runs build/doccc, returns CompletedProcess
    parse_header(path)                           the generated header's #define macros

Fixtures: root (the repository), doccc ($BUILD/doccc, default build/doccc,
built with `make` once if missing), session_tmp (one temporary folder for the session), exports (a
session cache of exported models, keyed by (model, ir, batch, form), with
inputs and eager references), check_close (compares with eager PyTorch at
rtol 1e-4 / atol 1e-5 and records the largest difference; the table is printed
at the end of the run).

PyTorch and numpy are test dependencies only. With CI=true in the environment
a missing one is a failure (pytest.fail), never a skip; elsewhere the tests
that need it are skipped with the reason.

--doccc-full (or DOCCC_FULL=1) runs the full differential cross product,
ResNet-18 included; the default set keeps `make test` within minutes.

Parallel runs. `make test` runs the suite in one process per core with
pytest-xdist (pytest -n N --dist loadgroup; TEST_JOBS=1 in make's command
line runs it serially): N worker processes, each its own pytest session,
handed one test at a time in file order. What that asks of a test file
(any new one too):

  - session and module fixtures run once per worker (each worker exports
    its own models); tmp_path, tmp_path_factory and session_tmp are per
    worker already (xdist gives each worker its own basetemp, .../popen-gwN).
    Write only there, never to a fixed path (under the repository, /tmp/NAME).
  - a test must not read what another test wrote: that one may have run in
    the other worker. Tests that must share one process, run in file order,
    carry the same @pytest.mark.xdist_group("NAME").
  - another worker runs beside every test: a test that times itself or
    counts cores allows for a busy machine, as it would under any load.
  - work worth doing once for the whole run (a slow build every worker
    uses) goes to the run_tmp fixture, one folder shared by all workers,
    under locked(path), an exclusive flock: the first worker builds, the
    others wait for it and reuse the result:
        with locked(run_tmp / "big.lock"):
            if not (run_tmp / "big" / "libbig.so").exists():
                compile_model(src, "none", run_tmp / "big", "-n", "big")
    worker() names this worker ("gw0", ...; None in a serial run).
  - a record that a module global keeps across tests (EXPORTED_OVERLOADS,
    DIFF_RECORDS) holds only its own worker's tests: test_coverage.py's
    census, run last, reads every other worker's record (worker_records),
    and the tolerance table goes to the controller (pytest_testnodedown).
"""

import contextlib
import fcntl
import importlib
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
# `make asan` runs the suite with BUILD=build/asan on make's command line, which
# make exports to the environment; DOCCC names another compiler binary outright.
DOCCC = Path(os.environ.get("DOCCC") or ROOT / os.environ.get("BUILD", "build") / "doccc")
CPU_TARGETS = ("none", "sequential", "openmp")
# The GPU targets run here in their simulation (doccc -t cuda --simulate):
# the same generated device source, compiled for the host. TARGETS is what
# the differential tests run on: every target this machine can execute.
SIM_TARGETS = ("cuda-sim",)
TARGETS = CPU_TARGETS + SIM_TARGETS
IRS = ("training", "core")
FORMS = ("pt2", "json")
BATCHES = (1, 4)

# docc's own tolerance for comparing compiled models with eager PyTorch.
RTOL = 1e-4
ATOL = 1e-5

COMPILE_TIMEOUT = 900
RUN_TIMEOUT = 600

IN_CI = os.environ.get("CI", "").strip().lower() in ("1", "true", "yes")

sys.path.insert(0, str(Path(__file__).resolve().parent))

import hostcpu  # noqa: E402

# The libraries the suite builds run on this machine: where its CPU lacks the
# default category's instruction set level (x86-64-v4), doccc is told the one
# it has through DOCC_MARCH, unless the caller chose one (test/hostcpu.py).
# Every doccc the suite starts inherits it; a test that needs the category's
# own march (the golden files) passes DOCC_MARCH="".
HOST_MARCH = hostcpu.use_host_march()


def debug_knob(name):
    """A debugging environment variable that narrows or rewrites what the
    suite checks (DOCCC_INDEX_FAST, DOCCC_SHAPE_FAST, DOCCC_GOLDEN_UPDATE):
    its value, or None. Under CI it must not be set: a run that checks less,
    or that rewrites the expected files, must not pass for a whole one."""
    v = os.environ.get(name)
    if v and IN_CI:
        raise RuntimeError(f"{name} is set under CI: it narrows or rewrites what the suite checks; unset it")
    return v


def require(module):
    """Import a test dependency; fail in CI, skip elsewhere, when it is missing."""
    try:
        return importlib.import_module(module)
    except ImportError as e:
        msg = f"{module} is required ({e}); `make setup` installs it"
        if IN_CI:
            pytest.fail(f"CI: {msg}", pytrace=False)
        pytest.skip(msg)


def pytest_report_header(config):
    if HOST_MARCH:
        return f"DOCC_MARCH={os.environ.get('DOCC_MARCH')}: this CPU lacks the server category's x86-64-v4 (test/hostcpu.py)"
    return None


def pytest_addoption(parser):
    parser.addoption("--doccc-full", action="store_true", default=False,
                     help="run the full differential cross product (also DOCCC_FULL=1)")


def pytest_configure(config):
    if config.getoption("--doccc-full"):
        os.environ["DOCCC_FULL"] = "1"
    # torch 2.13's own pytree deprecation noise when exporting; not ours to fix.
    config.addinivalue_line("filterwarnings", "ignore:.*LeafSpec.*:FutureWarning")
    if not config.pluginmanager.hasplugin("xdist"):
        # known without pytest-xdist too (a serial run), which then ignores it
        config.addinivalue_line("markers", "xdist_group(name): run in one xdist worker, in file order")


def pytest_collection_modifyitems(session, config, items):
    """test_coverage's census of exported overloads runs after every other
    test, and only a whole-suite session (every test file, no -k or -m)
    can judge it."""
    last = [i for i in items if i.name == "test_every_supported_overload_is_exported"]
    items[:] = [i for i in items if i not in last] + last
    files = {Path(str(i.fspath)).resolve() for i in items}
    every = set(ROOT.glob("test/test_*.py")) | set(ROOT.glob("test/ops/test_*.py"))
    config.doccc_whole_suite = every <= files and not config.option.keyword and not config.option.markexpr


def full_run():
    return os.environ.get("DOCCC_FULL", "") not in ("", "0")


# ---- parallel runs (pytest-xdist) -------------------------------------------------

def worker():
    """This process's xdist worker ("gw0", "gw1", ...), or None in a serial run."""
    return os.environ.get("PYTEST_XDIST_WORKER") or None


@contextlib.contextmanager
def locked(path):
    """An exclusive flock on path (created if missing) while the block runs:
    one worker at a time, the others wait."""
    with open(path, "a") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)


def _worker_run_dir(config):
    """A worker's run_tmp: xdist makes each worker's basetemp RUN/popen-gwN."""
    return Path(config.option.basetemp).resolve().parent


def _record_file(run_dir, name, wid):
    return Path(run_dir) / f"record-{name}-{wid}.json"


def write_worker_record(run_dir, name, value):
    """This worker's end-of-session record NAME (JSON), for worker_records."""
    final = _record_file(run_dir, name, worker())
    part = final.with_suffix(".part")
    part.write_text(json.dumps(value))
    os.replace(part, final)  # whole or absent: a reader never sees half of it


def worker_records(run_dir, name, poll=0.5):
    """Every other worker's record NAME (written at its session's end), once
    all of them have ended: {worker: value}. Meant for a test that runs
    last (after it, no test is left to hand out, so the other workers are
    finishing theirs). Fails at once if a worker died without its record."""
    me, count = worker(), int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1"))
    if me is None:
        return {}
    others = [f"gw{i}" for i in range(count) if f"gw{i}" != me]
    got = {}
    while len(got) < len(others):
        for wid in (w for w in others if w not in got):
            f = _record_file(run_dir, name, wid)
            dead = not _alive(Path(run_dir) / f"pid-{wid}")  # first: a worker writes its record, then exits
            if f.is_file():
                got[wid] = json.loads(f.read_text())
            elif dead:
                pytest.fail(f"xdist worker {wid} ended without its record {f.name} (did it crash?)",
                            pytrace=False)
        if len(got) < len(others):
            time.sleep(poll)
    return got


def _alive(pidfile):
    """The worker whose pid pidfile holds is running (or has not written it
    yet). A worker that died is a zombie until xdist reaps it: dead too."""
    try:
        pid = int(pidfile.read_text())
    except (OSError, ValueError):
        return True
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state not in ("Z", "X")


def pytest_sessionstart(session):
    if worker():
        (_worker_run_dir(session.config) / f"pid-{worker()}").write_text(str(os.getpid()))


def pytest_sessionfinish(session):
    if worker():
        write_worker_record(_worker_run_dir(session.config), "overloads", sorted(EXPORTED_OVERLOADS))
        session.config.workeroutput["doccc_diff_records"] = DIFF_RECORDS


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node, error):
    """The controller of a parallel run: a worker's rows of the tolerance table."""
    DIFF_RECORDS.extend(tuple(r) for r in getattr(node, "workeroutput", {}).get("doccc_diff_records", []))


@pytest.fixture(scope="session")
def run_tmp(tmp_path_factory):
    """The folder every worker of this run shares (the parent of the workers'
    basetemps under xdist; the basetemp in a serial run), fresh for each run."""
    base = tmp_path_factory.getbasetemp()
    return base.parent if worker() else base


# ---- the compiler ---------------------------------------------------------------

_built = {"tried": False, "error": None}


def doccc_path():
    """build/doccc, running `make` once in the repository when it is missing
    (one make at a time: the workers of a parallel run share the build folder)."""
    if not DOCCC.exists() and not _built["tried"]:
        _built["tried"] = True
        DOCCC.parent.mkdir(parents=True, exist_ok=True)
        with locked(DOCCC.parent / ".doccc-make.lock"):
            if not DOCCC.exists():
                r = subprocess.run(["make", "-C", str(ROOT), "all"], capture_output=True, text=True)
                if r.returncode != 0:
                    _built["error"] = r.stdout[-4000:] + r.stderr[-4000:]
    if not DOCCC.exists():
        pytest.fail(f"{DOCCC} does not exist and `make` did not build it:\n{_built['error'] or ''}",
                    pytrace=False)
    return DOCCC


# ---- which ATen overloads the suite's programs contain -------------------------
# Every program a test hands to doccc is read here (its nodes' targets), so
# that test_coverage can require each supported overload to be exported by
# some test (test_coverage.py's last test, run after every other).
EXPORTED_OVERLOADS = set()
_seen_programs = {}


def record_program(path):
    """Add the ATen overloads of a .pt2 or ExportedProgram JSON to EXPORTED_OVERLOADS."""
    import json
    import zipfile
    p = Path(path)
    try:
        key = (str(p.resolve()), p.stat().st_mtime_ns)
    except OSError:
        return
    if key in _seen_programs:
        return
    _seen_programs[key] = True
    try:
        if zipfile.is_zipfile(p):
            with zipfile.ZipFile(p) as z:
                names = [n for n in z.namelist() if n.endswith("models/model.json")]
                text = z.read(names[0]) if names else b""
        else:
            text = p.read_bytes()
        ep = json.loads(text)
        nodes = ep["graph_module"]["graph"]["nodes"]
    except (OSError, ValueError, KeyError, TypeError, IndexError, zipfile.BadZipFile):
        return  # malformed inputs of the error tests
    for n in nodes if isinstance(nodes, list) else []:
        t = n.get("target") if isinstance(n, dict) else None
        if isinstance(t, str) and t.startswith("torch.ops.aten."):
            EXPORTED_OVERLOADS.add(t[len("torch.ops.aten."):])
        elif isinstance(t, str) and t.startswith("torch.ops."):  # a custom op: named with its namespace
            EXPORTED_OVERLOADS.add(t[len("torch.ops."):])


def doccc_cmd(*args, env=None, cwd=None, timeout=COMPILE_TIMEOUT, input=None):
    """Run build/doccc with args; returns the CompletedProcess (text mode)."""
    for a in args:
        if str(a).endswith((".pt2", ".json")):
            record_program(Path(cwd or ".") / a)
    cmd = [str(doccc_path())] + [str(a) for a in args]
    full_env = None
    if args and str(args[0]) == "run":
        # Under `make asan`, LeakSanitizer cannot stop the OpenMP runtime's
        # worker threads that a loaded openmp library leaves behind (it
        # crashes at exit here); leaks of doccc itself are still checked by
        # every compile and by the unit tests.
        env = dict(env or {})
        env.setdefault("ASAN_OPTIONS", (os.environ.get("ASAN_OPTIONS", "") + ":detect_leaks=0").lstrip(":"))
    if env is not None:
        full_env = dict(os.environ)
        full_env.update(env)
    return subprocess.run(cmd, capture_output=True, text=True, env=full_env, cwd=cwd,
                          timeout=timeout, stdin=subprocess.DEVNULL if input is None else None,
                          input=input)


def c_identifier(s):
    """What doccc makes of a file's base name: non-identifier characters become '_',
    and a leading digit gets a '_' in front."""
    s = re.sub(r"[^A-Za-z0-9_]", "_", s)
    return "_" + s if s[:1].isdigit() else s


def model_name(src, extra=()):
    """NAME doccc will use: -n NAME from extra, else the input's base name."""
    extra = [str(e) for e in extra]
    for i, a in enumerate(extra):
        if a == "-n" and i + 1 < len(extra):
            return extra[i + 1]
    return c_identifier(Path(src).name.rsplit(".", 1)[0])


def fmt_result(r):
    return (f"exit {r.returncode}\n--- command: {' '.join(map(str, r.args))}\n"
            f"--- stdout:\n{r.stdout[-6000:]}\n--- stderr:\n{r.stderr[-6000:]}")


def target_args(target):
    """doccc's flags for a test target: 'cuda-sim' is -t cuda --simulate."""
    if target.endswith("-sim"):
        return ["-t", target[:-4], "--simulate"]
    return ["-t", target]


def compile_model(src, target, outdir, *extra, env=None):
    """doccc SRC -t TARGET -o OUTDIR/ EXTRA...; asserts success, returns OUTDIR/libNAME.so.
    TARGET may be a simulated GPU target ('cuda-sim', 'rocm-sim')."""
    outdir = Path(outdir)
    outdir.mkdir(parents=True, exist_ok=True)
    r = doccc_cmd(src, *target_args(target), "-o", f"{outdir}/", *extra, env=env)
    if r.returncode != 0:
        pytest.fail(f"doccc failed to compile {src}:\n{fmt_result(r)}", pytrace=False)
    name = model_name(src, extra)
    lib = outdir / f"lib{name}.so"
    assert lib.is_file(), f"doccc exited 0 but wrote no {lib}:\n{fmt_result(r)}"
    assert (outdir / f"{name}.h").is_file(), f"doccc exited 0 but wrote no {name}.h"
    return lib


def header_of(lib):
    """The generated header beside a library libNAME.so: NAME.h."""
    lib = Path(lib)
    return lib.parent / (lib.stem[3:] + ".h" if lib.stem.startswith("lib") else lib.stem + ".h")


def parse_header(path):
    """{macro: value text} of the single-line #defines in a generated header."""
    macros = {}
    for line in Path(path).read_text().splitlines():
        m = re.match(r"\s*#\s*define\s+([A-Za-z_]\w*)(?:\s+(.*?))?\s*$", line)
        if m and "(" not in m.group(1):
            macros[m.group(1)] = (m.group(2) or "").strip()
    return macros


def macro_shape(text):
    """'{1, 3, 224, 224}' -> (1, 3, 224, 224)."""
    return tuple(int(v.rstrip("LlUu")) for v in re.findall(r"-?\d+[LlUu]*", text))


def device_resident(lib):
    """NAME_DEVICE_RESIDENT of the library's header: 1 for a cuda/rocm build
    whose run takes device pointers, 0 for host libraries (and fallbacks)."""
    macros = parse_header(header_of(lib))
    key = [k for k in macros if k.endswith("_DEVICE_RESIDENT")]
    assert len(key) == 1, f"{header_of(lib)}: no single *_DEVICE_RESIDENT macro ({key})"
    return macros[key[0]] == "1"


def num_outputs(lib):
    h = header_of(lib)
    macros = parse_header(h)
    key = [k for k in macros if k.endswith("_NUM_OUTPUTS")]
    assert len(key) == 1, f"{h}: no single *_NUM_OUTPUTS macro ({key})"
    return int(macros[key[0]].strip("()"))


def run_lib(lib, inputs, *extra, noutputs=None, timeout=RUN_TIMEOUT):
    """Run a doccc library with `doccc run` on numpy inputs; returns its outputs."""
    np = require("numpy")
    if noutputs is None:
        noutputs = num_outputs(lib)
    with tempfile.TemporaryDirectory(prefix="doccc-run-") as d:
        args = ["run", str(lib)]
        for i, a in enumerate(inputs):
            p = Path(d) / f"in{i}.npy"
            a = np.asarray(a)
            np.save(p, np.ascontiguousarray(a) if a.ndim else a)  # keeps 0-d arrays 0-d
            args += ["-i", str(p)]
        outs = [Path(d) / f"out{i}.npy" for i in range(noutputs)]
        for p in outs:
            args += ["-o", str(p)]
        r = doccc_cmd(*args, *extra, timeout=timeout)
        if r.returncode != 0:
            pytest.fail(f"doccc run failed:\n{fmt_result(r)}", pytrace=False)
        return [np.load(p) for p in outs]


def load_lib(lib, **kw):
    """An instance of a doccc library through the repository's Python loader
    (python/doccc, imported from the tree): m(*arrays) runs it in this
    process, with no .npy round trip. The tests of `doccc run` itself keep
    run_lib."""
    require("numpy")
    if str(ROOT / "python") not in sys.path:
        sys.path.insert(0, str(ROOT / "python"))
    import doccc
    return doccc.load(lib, **kw)


# ---- fixtures -------------------------------------------------------------------

@pytest.fixture(scope="session")
def root():
    return ROOT


@pytest.fixture(scope="session")
def doccc():
    return doccc_path()


@pytest.fixture(scope="session")
def session_tmp(tmp_path_factory):
    return tmp_path_factory.mktemp("doccc")


class Export:
    """One exported model: path (.pt2 or .json), weights (.safetensors or None),
    the eager input x and reference outputs ref (numpy), and the program's
    user inputs/outputs [(name, torch dtype, shape)]."""

    def __init__(self, path, weights, x, ref, inputs, outputs, ops):
        self.path, self.weights, self.x, self.ref = path, weights, x, ref
        self.inputs, self.outputs, self.ops = inputs, outputs, ops

    def weight_args(self):
        return ["--weights", str(self.weights)] if self.weights else []


class Exports:
    """Session cache of exports; exporting ResNet-18 takes seconds, so each
    (model, ir, batch, form) is exported once and shared by all tests."""

    def __init__(self, base):
        self.torch = require("torch")
        self.np = require("numpy")
        import export as export_mod
        import models as models_mod
        self.export_mod, self.models = export_mod, models_mod
        self.base = Path(base)
        self._models, self._refs, self._exports = {}, {}, {}

    def model(self, name):
        if name not in self._models:
            self._models[name] = self.models.make_model(name)
        return self._models[name]

    def input(self, name, batch):
        return self.models.make_input(name, batch)

    def reference(self, name, batch):
        key = (name, batch)
        if key not in self._refs:
            model = self.model(name).eval()
            ys = self.models.reference(model, self.input(name, batch))
            self._refs[key] = [y.detach().numpy().astype(self.np.float32) for y in ys]
        return self._refs[key]

    def get(self, name, ir="training", batch=1, form="pt2"):
        key = (name, ir, batch, form)
        if key not in self._exports:
            x = self.input(name, batch)
            ext = ".pt2" if form == "pt2" else ".json"
            path = self.base / f"{name}_{ir}_b{batch}{ext}"
            ep, weights = self.export_mod.export(self.model(name), (x,), path, ir=ir, form=form)
            ins, outs = self.export_mod.io_info(ep)
            self._exports[key] = Export(path, weights, x.numpy(), self.reference(name, batch),
                                        ins, outs, self.export_mod.op_targets(ep))
        return self._exports[key]


@pytest.fixture(scope="session")
def exports(tmp_path_factory):
    return Exports(tmp_path_factory.mktemp("exports"))


def compile_category(src, target, outdir, category, *extra):
    """A library of a CPU category at its ISA level (hostcpu.CATEGORY_LEVEL),
    its C source kept: (library, source). Skips where this CPU lacks the
    level, which the library would need to load."""
    level = hostcpu.CATEGORY_LEVEL[category]
    if not hostcpu.runs_category(category):
        pytest.skip(f"this CPU lacks {level}, which the {category} library needs")
    lib = compile_model(src, target, outdir, "-c", category, "--march", level, "--emit-source", *extra)
    return lib, (lib.parent / (lib.stem[3:] + ".c")).read_text()


def export_eager(m, xs, path):
    """Export module m (eval) on inputs xs to the .pt2 path: (path, the
    inputs as numpy arrays, eager's outputs)."""
    torch = require("torch")
    torch.export.save(torch.export.export(m, xs), str(path))
    with torch.no_grad():
        eager = [t.numpy() for t in m(*xs)]
    return path, [x.numpy() for x in xs], eager


# ---- comparison with eager PyTorch ----------------------------------------------

DIFF_RECORDS = []


def compare(got, ref, label):
    """assert_allclose(got, ref, rtol=RTOL, atol=ATOL), recording the largest
    absolute difference for the summary table."""
    np = require("numpy")
    got, ref = np.asarray(got), np.asarray(ref)
    assert got.shape == ref.shape, f"{label}: shape {got.shape}, expected {ref.shape}"
    assert got.dtype == ref.dtype, f"{label}: dtype {got.dtype}, expected {ref.dtype}"
    diff = np.abs(got.astype(np.float64) - ref.astype(np.float64))
    max_abs = float(diff.max()) if diff.size else 0.0
    max_ref = float(np.abs(ref).max()) if ref.size else 0.0
    ok = bool(np.allclose(got, ref, rtol=RTOL, atol=ATOL)) and not np.isnan(got).any()
    DIFF_RECORDS.append((label, max_abs, max_ref, ok))
    print(f"{label}: max|got-ref| = {max_abs:.3e}, max|ref| = {max_ref:.3e}")
    np.testing.assert_allclose(got, ref, rtol=RTOL, atol=ATOL,
                               err_msg=f"{label}: max abs diff {max_abs:.3e} (max|ref| {max_ref:.3e})")


@pytest.fixture
def check_close(request):
    def check(got, ref, label=None):
        compare(got, ref, label or request.node.nodeid.split("::", 1)[-1])
    return check


def pytest_terminal_summary(terminalreporter):
    if not DIFF_RECORDS:
        return
    tr = terminalreporter
    tr.section(f"doccc vs eager PyTorch (rtol {RTOL:g}, atol {ATOL:g})")
    width = max(len(r[0]) for r in DIFF_RECORDS)
    tr.write_line(f"{'case':<{width}}  {'max abs diff':>12}  {'max |ref|':>10}")
    for label, max_abs, max_ref, ok in DIFF_RECORDS:
        tr.write_line(f"{label:<{width}}  {max_abs:12.3e}  {max_ref:10.3e}{'' if ok else '  FAIL'}")
