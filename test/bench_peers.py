"""make bench: CPU latency of doccc next to ONNX Runtime, OpenVINO and PyTorch eager, side by side.

    python3 test/bench_peers.py [--models resnet18,...] [--batches 1,8] [--threads 1,2]
                                [--repeat 15] [--warmup 3] [--row-budget S] [--category server]
                                [--march M] [--tune-budget S | --no-tune]
                                [--skip-peers-install] [--small] [--dir D] [--json PATH]

Models: test/bench_models.py (resnet18, resnet50, mobilenet_v2, mobilenet_v3_large,
efficientnet_b0, convnext_tiny, vit_tiny, bert_base, gpt2, lstm; fixed-seed random
weights, full size, 224x224 images, 1000 classes; --small: the reduced sizes the
test uses, which say nothing about speed).

The peers are installed first, pinned (PEERS below), with `python3 -m pip install`
of only what is missing or at another version. pip is asked first with
--dry-run what it would install: if that would touch torch or numpy, the
packages it names are installed with --no-deps without those two, and the
bench stops if torch's or numpy's version changed anyway.
--skip-peers-install uses what is there; a peer that is not importable gets
its error in every row.

For every model and batch: build the model and its inputs, eager's outputs
(the reference) and its FLOPs (torch.utils.flop_counter, 2 per multiply-add),
then the exports, cached in --dir (build/bench-peers/) under MODEL_bBATCH and
made again only when missing or when the model sources (bench_models.py and
the files it takes models from), torch's or the ONNX exporter's versions
changed: a torch.export .pt2 for doccc and torch.onnx.export(dynamo=True)
for the peers (fixed shapes). doccc compiles ONE library per model and batch,
`-t openmp -c CATEGORY` (server: AVX-512). Then for every thread count T, in
turn:

  torch eager   torch.set_num_threads(T), in this process
  ORT           onnxruntime, CPU provider, intra_op_num_threads T,
                inter_op_num_threads 1, ORT_ENABLE_ALL, sequential execution
  OpenVINO      openvino.convert_model of the ONNX file, compiled for "CPU" with
                INFERENCE_PRECISION_HINT f32, INFERENCE_NUM_THREADS T,
                PERFORMANCE_HINT LATENCY, NUM_STREAMS 1
  doccc         `doccc run LIB --threads T --repeat N --warmup W`
  doccc tuned   the same, of the library compiled with the tuning database:
                before the rows of a model and batch, `doccc tune` measures
                its steps (--tuning-db build/bench-peers/tuning-CATEGORY.db,
                --threads the largest T, --tune-budget S, default 180 s, the
                time in the "tune s" column), then the library is compiled
                with the database; the steps a budget left take the nearest
                tuned step's schedule (transfer). The database persists:
                a second run measures only what the first left.

ORT and OpenVINO each run in a child process of their own (this script with
--peer-worker, no torch in it), so that a crash or a thread pool of one
never touches the others; their session set-up is not timed. Each engine
runs --warmup untimed calls, then --repeat timed ones; median and minimum.
Heavy rows run fewer (at least 5, and fewer warm-ups): as many as fit in
--row-budget seconds per engine at eager's speed. Every engine's outputs are
compared with eager's (largest absolute difference); doccc's must also be
within rtol 1e-4 / atol 1e-5, the suite's tolerance.

--int8 (`make bench-int8`): the quantized table instead. Each model is
quantized the way its users would: the convolution networks by PT2E with
the XNNPACK quantizer (static, int8 activations per tensor, int8 weights per
channel; torchao 0.18), BERT by PT2E's dynamic flow (X86 quantizer,
activations quantized per tensor at run time), calibrated on the bench
inputs. doccc compiles the converted program (its integer kernels) and, in
the same run, the fp32 model; the peers run the fp32 ONNX file quantized by
onnxruntime.quantization on the same inputs (quantize_static, QDQ, per
channel, int8 activations and weights; quantize_dynamic for BERT), ORT and
OpenVINO both on that int8 file (OpenVINO executes QDQ models in int8).
Columns: the peers' and doccc's int8 medians, doccc fp32's, doccc's int8
speedup over its fp32, doccc/best, and for the convolution networks the
share of the integer peak (bench_peak --int8: pmaddwd, or vpdpwssd with
VNNI, per second) doccc reaches; the differences are against eager
running the converted program (doccc) and against the fp32 model (all).
torch's own int8 path (Inductor with the X86 quantizer) is not timed.

A small C program, test/bench_peak.c (clang -O3 -march=native -fopenmp),
measures the fp32 FMA peak at every thread count; for the convolution
networks the table gives the share of it doccc reaches: FLOPs / doccc's
median / peak at T.

Prints one row per model, batch and thread count (medians in ms; doccc/best:
doccc's median over the better of ORT's and OpenVINO's, < 1: doccc is
faster; %peak), then the geometric mean of doccc/best per thread count and
the rows short of 0.9x (doccc/best above 0.9: doccc not at least 10% faster
than the best peer), and writes everything to build/bench-peers.json
(--json): the machine, the CPU model, the versions of torch, numpy, the
peers and doccc, the peak and every row (with the 1-minute load average after
it: the machine may be shared).

Exit status 1 if doccc failed to compile or run a model (the table still
shows the rest); doccc outputs outside the tolerance are marked in the table
and listed after it, and a peer's failure is only recorded.
"""

import argparse
import contextlib
import hashlib
import importlib.metadata
import json
import math
import os
import platform
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))
import bench  # noqa: E402  (stdlib only at import time; torch is imported when needed)
import hostcpu  # noqa: E402

DOCCC = bench.DOCCC
PEERS = {"onnxruntime": "1.32.0", "openvino": "2026.4.1", "onnx": "1.23.2", "onnxscript": "0.7.2"}
KEEP = ("torch", "numpy")        # what installing the peers must not change
ENGINES = ("eager", "ORT", "OpenVINO", "doccc", "doccc tuned")
RTOL, ATOL = 1e-4, 1e-5
PEAK_LINE = re.compile(r"peak (\d+) threads?: ([0-9.]+) G(?:FL)?OP/s")
# The files the bench models come from: a change to any of them makes the exports again.
MODEL_SOURCES = ("test/bench_models.py", "test/models.py", "test/models_zoo.py", "test/bench.py",
                 "test/bench_gpu.py", "examples/resnet18/model.py")


# ---- the peers' installation --------------------------------------------------------

def dist_version(name):
    try:
        return importlib.metadata.version(name)
    except importlib.metadata.PackageNotFoundError:
        return None


def pip(*args):
    cmd = [sys.executable, "-m", "pip", "install", "--disable-pip-version-check", *args]
    print("bench-peers: " + " ".join(cmd), flush=True)
    subprocess.run(cmd, check=True)


def install_peers():
    """pip-install the pinned peers that are missing, never changing torch or numpy."""
    missing = [f"{n}=={v}" for n, v in PEERS.items() if dist_version(n) != v]
    if not missing:
        return
    kept = {n: dist_version(n) for n in KEEP}
    with tempfile.TemporaryDirectory() as tmp:
        report = Path(tmp) / "report.json"
        subprocess.run([sys.executable, "-m", "pip", "install", "--disable-pip-version-check", "--dry-run",
                        "--quiet", "--report", str(report), *missing], check=True)
        plan = [(i["metadata"]["name"], i["metadata"]["version"])
                for i in json.loads(report.read_text())["install"]]
    touched = [n for n, _ in plan if n.lower() in KEEP]
    if touched:
        print(f"bench-peers: pip would change {', '.join(touched)}; installing the rest with --no-deps",
              flush=True)
        pip("--no-deps", *[f"{n}=={v}" for n, v in plan if n.lower() not in KEEP])
    else:
        pip(*missing)
    changed = [f"{n} {v} -> {dist_version(n)}" for n, v in kept.items() if dist_version(n) != v]
    if changed:
        sys.exit(f"bench-peers: installing the peers changed {', '.join(changed)}")


# ---- the ORT and OpenVINO child process ---------------------------------------------

def peer_session(engine, onnx_path, threads):
    """A function that runs the ONNX model on a list of numpy inputs and returns its outputs."""
    import numpy as np
    if engine == "ORT":
        import onnxruntime as ort
        so = ort.SessionOptions()
        so.intra_op_num_threads = threads
        so.inter_op_num_threads = 1
        so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        so.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
        sess = ort.InferenceSession(str(onnx_path), so, providers=["CPUExecutionProvider"])
        names = [i.name for i in sess.get_inputs()]
        return lambda xs: sess.run(None, dict(zip(names, xs)))
    import openvino as ov
    compiled = ov.Core().compile_model(ov.convert_model(str(onnx_path)), "CPU", {
        "INFERENCE_PRECISION_HINT": "f32", "INFERENCE_NUM_THREADS": threads,
        "PERFORMANCE_HINT": "LATENCY", "NUM_STREAMS": 1})
    req = compiled.create_infer_request()

    def run(xs):
        res = req.infer(xs)
        return [np.array(res[o]) for o in compiled.outputs]
    return run


def peer_worker(args):
    """Child process: set up one peer, time it, save its outputs; prints one JSON line."""
    import numpy as np
    xs = [np.load(p) for p in args.inputs.split(",")]
    t0 = time.perf_counter()
    run = peer_session(args.peer_worker, args.onnx, args.worker_threads)
    setup_s = time.perf_counter() - t0
    outs = run(xs)
    median, best = bench.time_calls(lambda: run(xs), args.repeat, args.warmup)
    for i, y in enumerate(outs):
        np.save(f"{args.outputs}{i}.npy", np.asarray(y))
    print(json.dumps({"median_ms": median, "min_ms": best, "setup_s": round(setup_s, 2), "outputs": len(outs)}))


def quantize_worker(args):
    """Child process: onnxruntime.quantization of args.onnx into args.outputs,
    static (calibrated on args.inputs) or dynamic."""
    import numpy as np
    from onnxruntime.quantization import (CalibrationDataReader, QuantFormat, QuantType, quantize_dynamic,
                                          quantize_static)
    from onnxruntime.quantization.shape_inference import quant_pre_process
    pre = args.outputs + ".pre.onnx"
    quant_pre_process(args.onnx, pre, skip_symbolic_shape=True)
    if args.quantize_worker == "dynamic":
        quantize_dynamic(pre, args.outputs, weight_type=QuantType.QInt8, per_channel=False)
        return 0
    import onnx
    names = [i.name for i in onnx.load(pre, load_external_data=False).graph.input]
    xs = [np.load(p) for p in args.inputs.split(",")]

    class Reader(CalibrationDataReader):
        def __init__(self):
            self.it = iter([dict(zip(names, xs))])

        def get_next(self):
            return next(self.it, None)

    quantize_static(pre, args.outputs, Reader(), quant_format=QuantFormat.QDQ, per_channel=True,
                    activation_type=QuantType.QInt8, weight_type=QuantType.QInt8)
    return 0


def quantize_onnx(args, onnx_path, out, ins, mode):
    """The int8 ONNX file of onnx_path (made once, then cached with its source); None or the error."""
    if out.exists() and out.stat().st_mtime >= onnx_path.stat().st_mtime:
        return None
    cmd = [sys.executable, str(Path(__file__).resolve()), "--quantize-worker", mode, "--onnx", str(onnx_path),
           "--inputs", ",".join(map(str, ins)), "--outputs", str(out)]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=args.peer_timeout)
    if r.returncode != 0:
        lines = [l for l in r.stderr.strip().splitlines() if l.strip()]
        out.unlink(missing_ok=True)
        return lines[-1][:300] if lines else f"exit {r.returncode}"
    return None


def pt2e_int8(model, inputs, dynamic):
    """model quantized by PT2E as doccc's int8 users do: XNNPACK static per
    channel (the convolution networks), X86 dynamic (BERT); the converted
    program's export."""
    import torch
    from torchao.quantization.pt2e.quantize_pt2e import convert_pt2e, prepare_pt2e
    if dynamic:
        import torchao.quantization.pt2e.quantizer.x86_inductor_quantizer as xiq
        q = xiq.X86InductorQuantizer()
        q.set_global(xiq.get_default_x86_inductor_quantization_config(is_dynamic=True))
    else:
        from torchao.testing.pt2e._xnnpack_quantizer import XNNPACKQuantizer, get_symmetric_quantization_config
        q = XNNPACKQuantizer().set_global(get_symmetric_quantization_config(is_per_channel=True))
    g = prepare_pt2e(torch.export.export(model, tuple(inputs)).module(), q)
    g(*inputs)
    return torch.export.export(convert_pt2e(g), tuple(inputs))


def run_peer(args, engine, onnx_path, threads, ins, out_prefix, repeat, warmup):
    """One peer's row in its own process: {median_ms, min_ms, setup_s, outputs} or {error}."""
    cmd = [sys.executable, str(Path(__file__).resolve()), "--peer-worker", engine, "--onnx", str(onnx_path),
           "--worker-threads", str(threads), "--inputs", ",".join(map(str, ins)), "--outputs", str(out_prefix),
           "--repeat", str(repeat), "--warmup", str(warmup)]
    try:
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=args.peer_timeout)
    except subprocess.TimeoutExpired:
        return {"error": f"took longer than {args.peer_timeout} s"}
    if r.returncode != 0:
        lines = [l for l in r.stderr.strip().splitlines() if l.strip()]
        return {"error": lines[-1][:300] if lines else f"exit {r.returncode}"}
    return json.loads(r.stdout.strip().splitlines()[-1])


# ---- the FMA peak -------------------------------------------------------------------

def build_peak(exe, openmp=True):
    """Compile test/bench_peak.c to exe with clang -O3 -march=native (and -fopenmp)."""
    exe.parent.mkdir(parents=True, exist_ok=True)
    cmd = ["clang", "-O3", "-march=native", *(["-fopenmp"] if openmp else []), str(HERE / "bench_peak.c"),
           "-o", str(exe)]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)}: {r.stderr.strip()[-500:]}")
    return exe


def measure_peak(exe, threads, *extra):
    """{threads: GFLOP/s} from bench_peak, and its output lines."""
    r = subprocess.run([str(exe), *extra, *map(str, threads)], capture_output=True, text=True, check=True)
    peak = {int(m.group(1)): float(m.group(2)) for m in PEAK_LINE.finditer(r.stdout)}
    return peak, r.stdout.strip().splitlines()


# ---- one model at one batch -----------------------------------------------------------

def sources_key(small):
    """What the cached exports depend on: the model sources, torch's and the ONNX exporter's versions."""
    h = hashlib.sha256()
    for rel in MODEL_SOURCES:
        h.update((ROOT / rel).read_bytes())
    for dist in ("torch", "onnxscript", "onnx"):
        h.update(f"{dist}={dist_version(dist)}".encode())
    h.update(b"small" if small else b"full")
    return h.hexdigest()


def cached_export(path, key, make):
    """make(path) unless path exists with the same key; returns (seconds spent, error or None)."""
    stamp = path.with_name(path.name + ".key")
    if path.exists() and stamp.exists() and stamp.read_text() == key:
        return 0.0, None
    stamp.unlink(missing_ok=True)
    t0 = time.perf_counter()
    try:
        make(path)
    except Exception as e:  # noqa: BLE001  (an exporter's failure is a table entry)
        lines = str(e).strip().splitlines()
        return time.perf_counter() - t0, f"{type(e).__name__}: {lines[0][:300] if lines else ''}"
    stamp.write_text(key)
    return time.perf_counter() - t0, None


@contextlib.contextmanager
def output_to(path):
    """Send this process's stdout and stderr, Python's and C's, to the file at path."""
    sys.stdout.flush()
    sys.stderr.flush()
    saved = [os.dup(1), os.dup(2)]
    try:
        with open(path, "w") as log:
            os.dup2(log.fileno(), 1)
            os.dup2(log.fileno(), 2)
            try:
                yield
            finally:
                sys.stdout.flush()
                sys.stderr.flush()
                os.dup2(saved[0], 1)
                os.dup2(saved[1], 2)
    finally:
        for fd in saved:
            os.close(fd)


def export_onnx(model, inputs, path):
    import torch
    # The exporters print progress and warnings: they go to a log beside the file.
    with output_to(path.with_name(path.name + ".log")):
        torch.onnx.export(model, inputs, str(path), dynamo=True, external_data=False)


def max_diff(outs, ref):
    import numpy as np
    if len(outs) != len(ref):
        return None
    return max(float(np.abs(np.asarray(o, np.float64) - w).max()) for o, w in zip(outs, ref))


def within_tolerance(outs, ref):
    import numpy as np
    return len(outs) == len(ref) and all(np.allclose(o, w, rtol=RTOL, atol=ATOL) for o, w in zip(outs, ref))


def load_outputs(prefix, n):
    import numpy as np
    return [np.load(f"{prefix}{i}.npy") for i in range(n)]


def row_counts(args, est_ms):
    """(repeat, warmup) of a row whose calls take about est_ms: all of them if they fit in
    --row-budget seconds, else fewer, at least 5 timed and 1 warm-up."""
    fit = int(args.row_budget * 1e3 / max(est_ms, 1e-3))
    repeat = max(min(args.repeat, 5), min(args.repeat, fit - args.warmup))
    if repeat + args.warmup <= fit:
        return repeat, args.warmup
    return repeat, max(1, min(args.warmup, args.warmup * repeat // args.repeat))


class Case:
    """One model at one batch: exports, the doccc library, reference outputs and rows."""

    def __init__(self, args, name, batch, key):
        import bench_models
        import numpy as np
        import torch
        from torch.utils.flop_counter import FlopCounterMode
        self.args, self.name, self.batch = args, name, batch
        self.tag = f"{name}_b{batch}"
        self.dir = args.dir / self.tag
        self.dir.mkdir(parents=True, exist_ok=True)
        self.model, self.inputs = bench_models.make(name, batch, args.small)
        with torch.no_grad(), FlopCounterMode(display=False) as fc:
            ref = self.model(*self.inputs)
        self.flops = fc.get_total_flops()
        self.ref = [t.numpy() for t in (ref if isinstance(ref, (tuple, list)) else (ref,))]
        self.ins = []
        for i, t in enumerate(self.inputs):
            p = self.dir / f"in{i}.npy"
            np.save(p, t.numpy())
            self.ins.append(p)
        self.pt2 = args.dir / f"{self.tag}.pt2"
        self.onnx = args.dir / f"{self.tag}.onnx"
        self.export_s = {}
        self.export_s["pt2"], self.pt2_error = cached_export(self.pt2, key, self.export_pt2)
        self.export_s["onnx"], self.onnx_error = cached_export(
            self.onnx, key, lambda p: export_onnx(self.model, self.inputs, p))
        self.lib, self.compile_s, self.lib_error = None, None, self.pt2_error and f"export: {self.pt2_error}"
        if not self.pt2_error:
            self.lib, self.compile_s, self.lib_error = self.compile(self.pt2, self.tag)
        self.tuned, self.tune_s = (None, "no --tune"), None
        if args.int8:
            self.int8(key)
        elif args.tune and not self.pt2_error:
            self.tuned, self.tune_s = self.tune()

    def tune(self):
        """((library, error), seconds of doccc tune) of the library compiled with the tuning database."""
        db = self.args.dir / f"tuning-{self.args.category}{'-' + self.args.march if self.args.march else ''}.db"
        march = ["--march", self.args.march] if self.args.march else []
        t0 = time.perf_counter()
        r = subprocess.run([str(DOCCC), "tune", str(self.pt2), "-t", "openmp", "-c", self.args.category, *march,
                            "--tuning-db", str(db), "--threads", str(max(self.args.threads)),
                            "--tune-budget", str(self.args.tune_budget)], capture_output=True, text=True)
        secs = round(time.perf_counter() - t0, 1)
        (self.dir / "tune.log").write_text(r.stderr)
        if r.returncode != 0:
            print(f"  doccc tune failed (exit {r.returncode})\n{r.stderr[-2000:]}", flush=True)
            return (None, f"tune: exit {r.returncode}: {r.stderr.strip()[-300:]}"), secs
        lib, _, err = self.compile(self.pt2, self.tag + "_tuned", "--tuning-db", str(db), "--pass-opt",
                                   "tuning.threads=0")
        return (lib, err), secs

    def int8(self, key):
        """The quantized program (doccc) and ONNX file (the peers); the fp32 library becomes doccc fp32."""
        import numpy as np
        import torch
        self.fp32 = (self.lib, self.lib_error)
        dynamic = self.name in ("bert_base", "gpt2")
        self.qpt2 = self.args.dir / f"{self.tag}_int8.pt2"
        self.export_s["int8"], err = cached_export(
            self.qpt2, key, lambda p: torch.export.save(pt2e_int8(self.model, self.inputs, dynamic), str(p)))
        self.lib_error = err and f"quantize: {err}"
        if not err:
            import torchao.quantization.pt2e.quantize_pt2e  # noqa: F401  (registers the quantized_decomposed ops)
            with torch.no_grad():
                ref = torch.export.load(str(self.qpt2)).module()(*self.inputs)
            self.qref = [t.numpy() for t in (ref if isinstance(ref, (tuple, list)) else (ref,))]
            self.lib, self.compile_s, self.lib_error = self.compile(self.qpt2, self.tag + "_int8")
        self.qonnx = self.args.dir / f"{self.tag}_int8.onnx"
        self.qonnx_error = self.onnx_error or quantize_onnx(self.args, self.onnx, self.qonnx, self.ins,
                                                            "dynamic" if dynamic else "static")

    def export_pt2(self, path):
        import export
        with output_to(path.with_name(path.name + ".log")):
            export.export(self.model, self.inputs, path, ir="training", form="pt2")

    def compile(self, pt2, name, *extra):
        """(library, seconds, error) of pt2 compiled as lib{name}.so."""
        outdir = self.dir / f"doccc-{self.args.category}"
        t0 = time.perf_counter()
        march = ["--march", self.args.march] if self.args.march else []
        r = subprocess.run([str(DOCCC), str(pt2), "-t", "openmp", "-c", self.args.category, *march, "-n", name,
                            "-o", f"{outdir}/", *extra], capture_output=True, text=True)
        secs = round(time.perf_counter() - t0, 2)
        if r.returncode != 0:
            print(f"  doccc compile failed (exit {r.returncode})\n{r.stderr[-2000:]}", flush=True)
            return None, secs, f"compile: exit {r.returncode}: {r.stderr.strip()[-300:]}"
        return outdir / f"lib{name}.so", secs, None

    def eager(self, threads, repeat, warmup):
        import torch
        torch.set_num_threads(threads)
        median, best = bench.time_torch(self.model, self.inputs, repeat, warmup)
        return {"median_ms": median, "min_ms": best}

    def doccc(self, threads, repeat, warmup, lib=None, lib_error=None, tag="doccc"):
        if lib is None and lib_error is None and tag != "doccc":
            return {"error": "not built"}
        lib, lib_error = (lib, lib_error) if tag != "doccc" else (self.lib, self.lib_error)
        if lib_error:
            return {"error": lib_error}
        prefix = self.dir / f"{tag}_t{threads}_y"
        outs = [f"{prefix}{i}.npy" for i in range(len(self.ref))]
        r = subprocess.run([str(DOCCC), "run", str(lib), *[a for p in self.ins for a in ("-i", str(p))],
                            *[a for o in outs for a in ("-o", o)], "--threads", str(threads),
                            "--repeat", str(repeat), "--warmup", str(warmup), "--json"], capture_output=True, text=True)
        m = bench.doccc_latency(r)
        if r.returncode != 0 or not m:
            print(f"  doccc run failed (exit {r.returncode})\n{r.stderr[-2000:]}", flush=True)
            return {"error": f"run: exit {r.returncode}: {r.stderr.strip()[-300:]}"}
        got = load_outputs(prefix, len(self.ref))
        res = {"median_ms": m[0], "min_ms": m[1]}
        if self.args.int8 and tag == "doccc":   # against the converted program, and the fp32 model
            return dict(res, max_abs_diff=max_diff(got, self.qref), max_abs_diff_fp32=max_diff(got, self.ref))
        return dict(res, max_abs_diff=max_diff(got, self.ref), within_tolerance=within_tolerance(got, self.ref))

    def peer(self, engine, threads, repeat, warmup):
        onnx, err = (self.qonnx, self.qonnx_error) if self.args.int8 else (self.onnx, self.onnx_error)
        if err:
            return {"error": f"onnx export: {err}"}
        prefix = self.dir / f"{engine}_t{threads}_y"
        res = run_peer(self.args, engine, onnx, threads, self.ins, prefix, repeat, warmup)
        if "error" not in res:
            got = load_outputs(prefix, res.pop("outputs"))
            res["max_abs_diff"] = max_diff(got, self.ref)
        return res

    def row(self, threads):
        """Every engine at one thread count, in turn."""
        import torch
        torch.set_num_threads(threads)
        with torch.no_grad():
            t0 = time.perf_counter()
            self.model(*self.inputs)
            est_ms = (time.perf_counter() - t0) * 1e3
        repeat, warmup = row_counts(self.args, est_ms)
        res = {} if self.args.int8 else {"eager": self.eager(threads, repeat, warmup)}
        res.update({"ORT": self.peer("ORT", threads, repeat, warmup),
               "OpenVINO": self.peer("OpenVINO", threads, repeat, warmup),
                    "doccc": self.doccc(threads, repeat, warmup)})
        if self.args.int8:
            res["doccc fp32"] = self.doccc(threads, repeat, warmup, *self.fp32, tag="doccc_fp32")
        elif self.args.tune:
            res["doccc tuned"] = self.doccc(threads, repeat, warmup, *self.tuned, tag="doccc_tuned")
        # The 1-minute load average after the row: how busy the machine was beside it.
        row = dict(model=self.name, batch=self.batch, threads=threads, repeat=repeat, warmup=warmup,
                   flops=self.flops, engines=res, loadavg_1m=os.getloadavg()[0],
                   ref_abs_max=max(float(abs(w).max()) for w in self.ref))
        peers = [res[e]["median_ms"] for e in ("ORT", "OpenVINO") if "median_ms" in res[e]]
        if "median_ms" in res["doccc"] and peers:
            row["ratio"] = res["doccc"]["median_ms"] / min(peers)
        if "median_ms" in res.get("doccc tuned", {}) and peers:
            row["ratio_tuned"] = res["doccc tuned"]["median_ms"] / min(peers)
            row["tune_s"] = self.tune_s
        if "median_ms" in res["doccc"] and "median_ms" in res.get("doccc fp32", {}):
            row["int8_speedup"] = res["doccc fp32"]["median_ms"] / res["doccc"]["median_ms"]
        return row


def add_peak_pct(rows, peak, conv_models):
    """doccc's share of the FMA peak at the row's thread count, for the convolution networks."""
    for r in rows:
        doccc = r["engines"]["doccc"]
        if r["model"] in conv_models and "median_ms" in doccc and peak.get(r["threads"]):
            r["peak_pct"] = 100 * r["flops"] / (doccc["median_ms"] * 1e-3) / (peak[r["threads"]] * 1e9)


# ---- the table ----------------------------------------------------------------------

HEAD = (f"{'model':<19}{'batch':>5}{'T':>3}{'eager':>9}{'ORT':>9}{'OpenVINO':>10}{'doccc':>9}"
        f"{'doccc/best':>11}{'%peak':>7}{'tuned':>9}{'tuned/best':>11}{'tune s':>8}"
        f"   max|diff| ORT / OpenVINO / doccc / tuned")


def fmt_ms(res):
    return f"{res['median_ms']:.2f}" if "median_ms" in res else "err"


def fmt_diff(res):
    if res.get("max_abs_diff") is None:
        return "-"
    flag = "" if res.get("within_tolerance", True) else " (outside tol)"
    return f"{res['max_abs_diff']:.1e}{flag}"


HEAD_INT8 = (f"{'model':<19}{'batch':>5}{'T':>3}{'ORT':>9}{'OpenVINO':>10}{'doccc':>9}{'doccc fp32':>11}"
             f"{'speedup':>8}{'doccc/best':>11}{'%peak':>7}   max|diff| ORT / OpenVINO / doccc vs fp32, doccc vs converted")


def fmt_row_int8(r):
    e = r["engines"]
    ratio = f"{r['ratio']:.2f}" if "ratio" in r else "-"
    sp = f"{r['int8_speedup']:.2f}" if "int8_speedup" in r else "-"
    d = e["doccc"]
    diffs = [fmt_diff(e["ORT"]), fmt_diff(e["OpenVINO"]),
             f"{d['max_abs_diff_fp32']:.1e}" if d.get("max_abs_diff_fp32") is not None else "-", fmt_diff(d)]
    pct = f"{r['peak_pct']:.0f}" if "peak_pct" in r else ""
    return (f"{r['model']:<19}{r['batch']:>5}{r['threads']:>3}{fmt_ms(e['ORT']):>9}{fmt_ms(e['OpenVINO']):>10}"
            f"{fmt_ms(d):>9}{fmt_ms(e['doccc fp32']):>11}{sp:>8}{ratio:>11}{pct:>7}   {' / '.join(diffs[:3])}, "
            f"{diffs[3]}")


def fmt_row(r):
    if "doccc fp32" in r["engines"]:
        return fmt_row_int8(r)
    e = r["engines"]
    ratio = f"{r['ratio']:.2f}" if "ratio" in r else "-"
    pct = f"{r['peak_pct']:.0f}" if "peak_pct" in r else ""
    tuned = e.get("doccc tuned", {"error": "-"})
    rt = f"{r['ratio_tuned']:.2f}" if "ratio_tuned" in r else "-"
    ts = f"{r['tune_s']:.0f}" if r.get("tune_s") is not None else "-"
    return (f"{r['model']:<19}{r['batch']:>5}{r['threads']:>3}{fmt_ms(e['eager']):>9}{fmt_ms(e['ORT']):>9}"
            f"{fmt_ms(e['OpenVINO']):>10}{fmt_ms(e['doccc']):>9}{ratio:>11}{pct:>7}{fmt_ms(tuned):>9}{rt:>11}{ts:>8}   "
            f"{' / '.join(fmt_diff(e[k]) for k in ('ORT', 'OpenVINO', 'doccc'))} / {fmt_diff(tuned)}")


def summary(rows, threads, key="ratio"):
    """(geometric mean of doccc/best per thread count, rows short of 0.9x); key ratio_tuned: the tuned library's."""
    geo = {}
    for t in threads:
        ratios = [r[key] for r in rows if r["threads"] == t and key in r]
        if ratios:
            geo[t] = math.exp(sum(map(math.log, ratios)) / len(ratios))
    short = [r for r in rows if r.get(key, 0) > 0.9]
    return geo, short


def print_report(rows, threads, peak, peak_lines, int8=False):
    print("\n" + "\n".join(peak_lines))
    unit = "GOP/s (int8: the integer kernels' instruction)" if int8 else "GFLOP/s"
    print("%peak against " + ", ".join(f"{g:.1f} {unit} at {t}T" for t, g in peak.items()))
    print(f"\n{HEAD_INT8 if int8 else HEAD}")
    for r in rows:
        print(fmt_row(r))
    geo, short = summary(rows, threads)
    print("\ngeometric mean of doccc/best(ORT, OpenVINO): "
          + ", ".join(f"{t} thread{'s' if t > 1 else ''} {g:.2f}" for t, g in geo.items()))
    geo_t, short_t = summary(rows, threads, "ratio_tuned")
    if geo_t:
        print("geometric mean of doccc tuned/best: "
              + ", ".join(f"{t} thread{'s' if t > 1 else ''} {g:.2f}" for t, g in geo_t.items())
              + f"; rows short of 0.9x tuned: {len(short_t)} of {sum('ratio_tuned' in r for r in rows)}")
    print("short of 0.9x (doccc/best > 0.9):" + (" none" if not short else ""))
    for r in short:
        e = r["engines"]
        best = min((e[k]["median_ms"], k) for k in ("ORT", "OpenVINO") if "median_ms" in e[k])
        print(f"  {r['model']} b{r['batch']} {r['threads']}T: {r['ratio']:.2f} "
              f"(doccc {e['doccc']['median_ms']:.2f} ms, {best[1]} {best[0]:.2f} ms)")
    if int8:
        sp = [r["int8_speedup"] for r in rows if "int8_speedup" in r]
        if sp:
            print(f"doccc int8 over doccc fp32: geometric mean {math.exp(sum(map(math.log, sp)) / len(sp)):.2f}x")
    bad = [r for r in rows for k in ("doccc", "doccc tuned") if r["engines"].get(k, {}).get("within_tolerance") is False]
    print(f"doccc outside rtol {RTOL:g} / atol {ATOL:g}: "
          + (", ".join(f"{r['model']} b{r['batch']} {r['threads']}T (outputs up to {r['ref_abs_max']:.3g})"
                       for r in bad) or "none"))
    errors = [(r, k, e["error"]) for r in rows for k, e in r["engines"].items() if "error" in e]
    if errors:
        print("errors:")
        for r, k, err in errors:
            print(f"  {r['model']} b{r['batch']} {r['threads']}T {k}: {err}")
    return geo, short


def ints(s):
    return [int(x) for x in s.split(",") if x]


def parse_args():
    import bench_models
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--models", default=",".join(bench_models.MODELS))
    ap.add_argument("--batches", type=ints, default=[1, 8])
    ap.add_argument("--threads", type=ints, default=[1, 2])
    ap.add_argument("--repeat", type=int, default=15)
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--row-budget", type=float, default=8.0,
                    help="seconds per engine and row: heavy rows run fewer calls (at least 5)")
    ap.add_argument("--category", default=hostcpu.host_category(),
                    help="doccc -c (server: AVX-512, desktop: AVX2; default: the widest this CPU runs)")
    ap.add_argument("--march", default=None,
                    help="doccc --march for every library (default: the category's; with --int8, native where "
                         "this CPU has AVX-VNNI or AVX512-VNNI, which the peers use at run time, so that doccc's "
                         "integer kernels do too: vpdpbusd)")
    ap.add_argument("--tune-budget", type=float, default=180,
                    help="seconds of doccc tune per model and batch (the tuned column)")
    ap.add_argument("--no-tune", dest="tune", action="store_false", help="no tuned column")
    ap.add_argument("--skip-peers-install", action="store_true")
    ap.add_argument("--small", action="store_true", help="the models' reduced sizes (a pipeline check)")
    ap.add_argument("--dir", type=Path, default=ROOT / "build" / "bench-peers")
    ap.add_argument("--json", type=Path, default=ROOT / "build" / "bench-peers.json")
    ap.add_argument("--peer-timeout", type=int, default=1200)
    ap.add_argument("--int8", action="store_true",
                    help="the quantized table: PT2E int8 for doccc, onnxruntime.quantization's int8 ONNX for the peers "
                         "(models: resnet50, mobilenet_v2, bert_base unless --models)")
    for hidden in ("--peer-worker", "--quantize-worker", "--onnx", "--inputs", "--outputs"):
        ap.add_argument(hidden, help=argparse.SUPPRESS)
    ap.add_argument("--worker-threads", type=int, help=argparse.SUPPRESS)
    models_given = any(a == "--models" or a.startswith("--models=") for a in sys.argv)
    args = ap.parse_args()
    if args.int8 and not models_given:
        args.models = "resnet50,mobilenet_v2,bert_base"
    if args.int8 and args.json == ROOT / "build" / "bench-peers.json":
        args.json = ROOT / "build" / "bench-int8.json"
    args.conv_models = bench_models.CONV_MODELS
    return args


def main():
    t_start = time.perf_counter()
    args = parse_args()
    if args.peer_worker:
        return peer_worker(args)
    if args.quantize_worker:
        return quantize_worker(args)
    if not args.skip_peers_install:
        install_peers()
    if not DOCCC.exists():
        sys.exit(f"bench-peers: {DOCCC} does not exist; run `make` first")
    import torch
    args.dir.mkdir(parents=True, exist_ok=True)
    if args.int8 and args.march is None and {"avx512_vnni", "avx_vnni"} & (hostcpu.cpu_flags() or set()):
        args.march = "native"
    if args.march:
        print(f"doccc --march {args.march}", flush=True)
    # --int8: the integer peak of the kernels' instruction (bench_peak --int8), else the FMA peak
    peak_args = ("--int8",) if args.int8 else ()
    peak, peak_lines = measure_peak(build_peak(args.dir / "bench_peak"), args.threads, *peak_args)
    print("\n".join(peak_lines), flush=True)
    key = sources_key(args.small)
    rows, failed = [], False
    print(f"\n{HEAD_INT8 if args.int8 else HEAD}", flush=True)
    for name in args.models.split(","):
        for batch in args.batches:
            case = Case(args, name, batch, key)
            for threads in args.threads:
                r = case.row(threads)
                r.update(compile_s=case.compile_s, export_s={k: round(v, 1) for k, v in case.export_s.items()},
                         tune_s=case.tune_s)
                rows.append(r)
                doccc = r["engines"]["doccc"]
                failed |= "error" in doccc
                add_peak_pct([r], peak, args.conv_models)
                print(fmt_row(r), flush=True)
            del case
    torch.set_num_threads(os.cpu_count() or 1)
    # Measured again at the end, the higher of the two: a busy machine lowers a
    # measured peak, never raises it.
    peak_end, lines_end = measure_peak(args.dir / "bench_peak", args.threads, *peak_args)
    peak_lines += [f"{line} (at the end)" for line in lines_end]
    peak = {t: max(g, peak_end.get(t, 0)) for t, g in peak.items()}
    add_peak_pct(rows, peak, args.conv_models)
    geo, short = print_report(rows, args.threads, peak, peak_lines, args.int8)
    total_s = time.perf_counter() - t_start
    result = dict(rows=rows, geomean_ratio={str(t): g for t, g in geo.items()},
                  short_of_0_9=[f"{r['model']}_b{r['batch']}_t{r['threads']}" for r in short],
                  peak_gflops={str(t): g for t, g in peak.items()}, peak_lines=peak_lines,
                  machine=platform.machine(), cpu=hostcpu.cpu_model(), cores=os.cpu_count(),
                  versions=dict(torch=torch.__version__, numpy=dist_version("numpy"),
                                **{n: dist_version(n) for n in PEERS}, doccc=bench.doccc_version()),
                  category=args.category, march=args.march, int8=args.int8, batches=args.batches, threads=args.threads, repeat=args.repeat,
                  warmup=args.warmup, row_budget_s=args.row_budget, small=args.small, rtol=RTOL, atol=ATOL,
                  total_s=round(total_s, 1))
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps(result, indent=2) + "\n")
    print(f"\nwrote {args.json} ({total_s / 60:.1f} min)")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
