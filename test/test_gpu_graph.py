"""Launch-free replay of device-resident runs (CUDA graphs / HIP graphs), in
the simulation (-t cuda --simulate), whose stream capture is real: launches
and async copies issued on a capturing stream are recorded, not run, and
cudaGraphLaunch replays them. DOCCC_SIM_TRACE=1 makes the simulation print a
line for every capture and graph call ("doccc simulation: begin capture
...", "graph launch: 3 nodes"); the tests count those lines, so a library
that never replays fails them.

  - `doccc run --repeat N` (device pointers, and run_host) captures once and
    replays every later run: a convolution net (tiled contractions, kernels
    with barriers) and a GRU (a host time loop launching its step kernels
    every step), with the same bits as DOCCC_GPU_GRAPHS=0, which captures
    nothing;
  - a C program (test/capi/gpu_graph.c) against an index_select model: the
    same pointers replay, new pointers capture (two output buffers
    alternately; more pointer sets than the library keeps graphs for, which
    updates graphs in place), an out-of-range index inside a replayed run
    still returns DOCCC_ERR_INDEX and the next good run DOCCC_OK, caller
    streams, run_host, and destroy destroys every executable graph, checked
    by the trace and, in an AddressSanitizer build, by LeakSanitizer;
  - a capture that fails (the simulation's DOCCC_SIM_CAPTURE_FAIL=1 fails
    the launches issued into it) returns DOCCC_ERR_DEVICE with the
    runtime's message, leaves no stream capturing, and the runs after it
    capture and replay again.
"""

import os
import re
import shutil
import subprocess
from collections import Counter
from pathlib import Path

import pytest

from conftest import RUN_TIMEOUT, compare, compile_model, device_resident, doccc_cmd, fmt_result, require
from test_gpu import _modules as gpu_modules, run_script

HERE = Path(__file__).resolve().parent
TRACE = re.compile(r"^doccc simulation: ([a-z -]+?)(?::| \(|$)")


def events(text):
    """{phase: Counter of trace events} of a process's stderr; lines before the
    first "phase NAME" line (doccc run prints none) count under ""."""
    out, phase = {"": Counter()}, ""
    for line in text.splitlines():
        if line.startswith("phase "):
            phase = line[6:].strip()
            out[phase] = Counter()
            continue
        m = TRACE.match(line)
        if m:
            out[phase][m.group(1)] += 1
    return out


def _modules():
    """test_gpu's conv net and index_select model, and a GRU."""
    torch = require("torch")

    class Gru(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.gru = torch.nn.GRU(4, 8, batch_first=True)

        def forward(self, x):
            return self.gru(x)[0]

    mods = {k: v for k, v in gpu_modules().items() if k in ("convnet", "gather")}
    mods["gru"] = (Gru(), (torch.randn(1, 5, 4, generator=torch.Generator().manual_seed(0)),))
    return mods


@pytest.fixture(scope="module")
def sims(tmp_path_factory):
    """{name: (library, input .npy paths, inputs, eager outputs)}: -t cuda --simulate builds."""
    torch = require("torch")
    np = require("numpy")
    import export as export_mod
    base = tmp_path_factory.mktemp("gpu_graph")
    out = {}
    for name, (mod, xs) in _modules().items():
        mod.eval()
        with torch.no_grad():
            ref = mod(*xs).numpy()
        path = base / f"{name}.pt2"
        export_mod.export(mod, xs, path, ir="training")
        lib = compile_model(path, "cuda-sim", base / name, "-n", name)
        assert device_resident(lib), f"{name}: not device-resident, nothing to replay"
        files = []
        for i, x in enumerate(xs):
            files.append(base / f"{name}_in{i}.npy")
            np.save(files[-1], x.numpy())
        out[name] = (lib, files, [x.numpy() for x in xs], ref)
    return out


def doccc_run(lib, files, out, *extra, env=None):
    args = sum((["-i", f] for f in files), []) + ["-o", out]
    r = doccc_cmd("run", lib, *args, *extra, env={"DOCCC_SIM_TRACE": "1", **(env or {})})
    assert r.returncode == 0, fmt_result(r)
    return r


@pytest.mark.parametrize("model", ["convnet", "gru"])
@pytest.mark.parametrize("entry", ["--device", "run_host"])
def test_repeat_replays(model, entry, sims, tmp_path):
    """doccc run --repeat 5: the warm-up run is eager, the first timed run
    captures, every timed run is one graph launch; the bits are those of
    DOCCC_GPU_GRAPHS=0, whose runs capture nothing."""
    np = require("numpy")
    lib, files, _, ref = sims[model]
    extra = ["--repeat", "5"] + ([entry] if entry == "--device" else [])
    r = doccc_run(lib, files, tmp_path / "y.npy", *extra)
    ev = events(r.stderr)[""]
    assert "latency: median" in r.stdout, fmt_result(r)
    assert ev["begin capture"] == 1 and ev["end capture"] == 1, (ev, fmt_result(r))
    assert ev["instantiate"] == 1 and ev["graph destroy"] == 1, (ev, fmt_result(r))
    assert ev["graph launch"] == 5, (ev, fmt_result(r))
    assert ev["exec destroy"] == 1, (ev, fmt_result(r))  # at destroy
    assert not ev["capture invalidated"], (ev, fmt_result(r))
    graphs = np.load(tmp_path / "y.npy")
    compare(graphs, ref, f"{model}[cuda-sim,graphs,{entry}]")

    r = doccc_run(lib, files, tmp_path / "y0.npy", *extra, env={"DOCCC_GPU_GRAPHS": "0"})
    assert not sum(events(r.stderr)[""].values()), fmt_result(r)
    np.testing.assert_array_equal(graphs, np.load(tmp_path / "y0.npy"),
                                  err_msg=f"{model}: replayed runs differ from eager ones")


# What each phase of test/capi/gpu_graph.c must trace (see its top comment).
# The library keeps 4 graphs: the evict phase's 4 new output buffers fill
# the 2 free slots, then replace the 2 least recently used in place.
PHASES = {
    "first": {},
    "same": {"begin capture": 1, "instantiate": 1, "graph launch": 3},
    "alternate": {"begin capture": 1, "instantiate": 1, "graph launch": 6},
    "evict": {"begin capture": 4, "instantiate": 2, "exec update": 2, "graph launch": 8},
    "index": {"begin capture": 1, "exec update": 1, "graph launch": 5},
    "stream": {"graph launch": 3},
    "host": {"begin capture": 1, "exec update": 1, "graph launch": 4},
    "destroy": {"exec destroy": 4},
    "again": {"begin capture": 1, "instantiate": 1, "graph launch": 2, "exec destroy": 1},
    "end": {},
}


def build_program(outdir, exe, extra=()):
    """test/capi/gpu_graph.c against the gather library in outdir."""
    cc = shutil.which("clang") or shutil.which("cc")
    assert cc, "no C compiler (clang or cc) on PATH"
    cmd = [cc, "-std=c11", "-O1", "-g", "-Wall", "-Wextra", "-Werror", f"-I{outdir}", f"-I{HERE / 'capi'}", str(HERE / "capi" / "gpu_graph.c"),
           "-o", str(exe), f"-L{outdir}", "-lgather", f"-Wl,-rpath,{outdir}", "-lpthread", *extra]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, f"{' '.join(cmd)}\n{r.stdout}{r.stderr}"
    return exe


def run_program(exe, xs, tmp_path, name, env=None):
    """Run the program on the gather inputs with the trace on, its output to
    tmp_path/NAME; returns (stderr, output bytes, report)."""
    xs[0].astype("<f4").tofile(tmp_path / "x.bin")
    xs[1].astype("<i8").tofile(tmp_path / "idx.bin")
    out = tmp_path / name
    full = dict(os.environ, DOCCC_SIM_TRACE="1", **(env or {}))
    r = subprocess.run([str(exe), str(tmp_path / "x.bin"), str(tmp_path / "idx.bin"), str(out)],
                       capture_output=True, text=True, timeout=RUN_TIMEOUT, env=full)
    info = f"exit {r.returncode}\n--- stdout:\n{r.stdout}\n--- stderr:\n{r.stderr[-8000:]}"
    assert r.returncode == 0 and r.stdout.strip() == "ok", info
    return r.stderr, out.read_bytes(), info


def test_c_program_captures_and_replays(sims, tmp_path):
    np = require("numpy")
    lib, _, xs, ref = sims["gather"]
    exe = build_program(lib.parent, tmp_path / "gpu_graph")
    stderr, graphs, info = run_program(exe, xs, tmp_path, "y.bin")
    ev = events(stderr)
    assert list(ev) == [""] + list(PHASES), info
    assert not ev[""], info
    for phase, want in PHASES.items():
        got = ev[phase]
        # every capture ends and its graph is destroyed once instantiated or applied
        assert got["end capture"] == got["begin capture"] == got["graph destroy"], (phase, got, info)
        assert not got["capture invalidated"] and not got["exec update refused"], (phase, got, info)
        counted = {k: v for k, v in got.items() if k in ("begin capture", "instantiate", "exec update",
                                                         "graph launch", "exec destroy")}
        assert counted == want, (phase, counted, want, info)
    made = sum(e["instantiate"] for e in ev.values())
    assert sum(e["exec destroy"] for e in ev.values()) == made, info
    compare(np.frombuffer(graphs, dtype="<f4").reshape(ref.shape), ref, "gather[cuda-sim,graphs,C]")

    # graphs off: no capture at all, the same statuses (checked by the program) and bits
    stderr, eager, info = run_program(exe, xs, tmp_path, "y0.bin", env={"DOCCC_GPU_GRAPHS": "0"})
    assert not any(sum(e.values()) for e in events(stderr).values()), info
    assert eager == graphs


def test_c_program_leaks_nothing(sims, tmp_path):
    """The same program and library under AddressSanitizer: LeakSanitizer
    finds every executable graph, graph and stream of the simulation that
    destroy or a capture leaves behind."""
    lib, _, xs, _ = sims["gather"]
    out = tmp_path / "asan"
    compile_model(lib.parent.parent / "gather.pt2", "cuda-sim", out, "-n", "gather",
                  env={"DOCC_CXX": "clang++ -fsanitize=address"})
    exe = build_program(out, tmp_path / "gpu_graph_asan", ["-fsanitize=address"])
    stderr, _, info = run_program(exe, xs, tmp_path, "y.bin", env={"ASAN_OPTIONS": "detect_leaks=1"})
    assert "ERROR: LeakSanitizer" not in stderr and "ERROR: AddressSanitizer" not in stderr, info
    launches = sum(e["graph launch"] for e in events(stderr).values())
    assert launches == sum(p.get("graph launch", 0) for p in PHASES.values()), info


CAPTURE_FAIL = r'''
import os
lib, d = load(args["lib"])
xs = [np.load(f) for f in args["inputs"]]
m = create(d)
dins = [to_device(d, x) for x in xs]
outs = host_outputs(d)
douts = [dev_alloc(d, o.nbytes) for o in outs]
def run():
    return d.run(m, ptrs(dins), ptrs(douts))
result["eager"] = run()
os.environ["DOCCC_SIM_CAPTURE_FAIL"] = "1"
for k in range(2):
    result[f"failed{k}"] = run()
    result[f"error{k}"] = err(d, m)
result["host_failed"] = run_host(d, m, xs)[0]
del os.environ["DOCCC_SIM_CAPTURE_FAIL"]
for k in range(2):
    result[f"again{k}"] = run()
save([from_device(d, p, o) for p, o in zip(douts, outs)], args["prefix"])
d.destroy(m)
'''


def test_capture_failure(sims, tmp_path):
    np = require("numpy")
    lib, files, _, ref = sims["convnet"]
    res, r, info = run_script(CAPTURE_FAIL, env={"DOCCC_SIM_TRACE": "1"}, lib=str(lib),
                              inputs=[str(f) for f in files], prefix=str(tmp_path / "o_"))
    assert res["eager"] == 0, info
    assert (res["failed0"], res["failed1"], res["host_failed"]) == (7, 7, 7), info
    for k in range(2):
        # the second failure is the same error: its capture began (none was left open)
        e = res[f"error{k}"] or ""
        assert e.startswith("convnet: capturing the run as a simulated graph (DOCCC_GPU_GRAPHS=0 runs without) failed: "
                            "operation not permitted when stream is capturing (cudaErrorStreamCaptureUnsupported"), info
    assert (res["again0"], res["again1"]) == (0, 0), info
    ev = events(r.stderr)[""]
    assert ev["begin capture"] == 4 and ev["end capture"] == 4 and ev["capture invalidated"] == 3, (ev, info)
    assert ev["instantiate"] == 1 and ev["graph launch"] == 2 and ev["exec destroy"] == 1, (ev, info)
    compare(np.load(tmp_path / "o_0.npy"), ref, "convnet[cuda-sim,after a failed capture]")
