"""make bench: latency of models compiled by doccc (batch 1 unless named), next to PyTorch.

    python3 test/bench.py [--models resnet18,vit_tiny,bert_mini,lstm,lstm_b16] [--repeat N] [--warmup N]
                          [--targets none,sequential,openmp] [--categories server,desktop]
                          [--no-inductor]

Models (fixed-seed random weights, full size):
  resnet18   torchvision's ResNet-18, 224x224 (examples/resnet18)
  vit_tiny   ViT-Tiny/16, 224x224: 12 blocks, width 192, 3 heads
  bert_mini  a BERT encoder of BERT-mini's shape (4 layers, hidden 256, 4 heads,
             intermediate 1024, vocabulary 30522) on 128 tokens with padding
  lstm       a 2-layer LSTM, input 256, hidden 256, over 100 steps, batch 1
             (outputs: the sequence, h_n, c_n); lstm_b16 the same at batch 16
  gru, gru_b16  the same shapes as a 2-layer GRU (not in the default list)

For every model, target and category: compile build/bench/MODEL.pt2 with doccc,
run `doccc run --repeat N --json` (whose report gives "latency_ms": median, min and p90 over
N runs") and check the outputs against eager PyTorch. In the same run: PyTorch
eager with torch.set_num_threads(1) and with all cores, and torch.compile
(inductor) in a subprocess with a time limit (skipped with the reason if it
fails or takes too long). Prints one table per model of medians, minimums and
ratios to eager (ratio > 1: slower than eager at the same thread count; the
single-core targets none and sequential are compared with eager on 1 thread,
openmp with eager on all cores) and writes everything to build/bench.json.

Exit status 1 if a doccc compile or run failed (the table still shows the rest).
"""

import argparse
import json
import os
import platform
import re
import statistics
import subprocess
import sys
import time
from pathlib import Path

import hostcpu

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
BUILD = ROOT / os.environ.get("BUILD", "build")
DOCCC = Path(os.environ.get("DOCCC") or BUILD / "doccc")
OUT = ROOT / "build" / "bench"
def doccc_latency(r):
    """(median ms, min ms) from the report of doccc run --repeat N --json, or None."""
    try:
        lat = json.loads(r.stdout)["latency_ms"]
        return float(lat["median"]), float(lat["min"])
    except (ValueError, KeyError, TypeError):
        return None


def time_calls(fn, repeat, warmup):
    """(median, min) in ms of `repeat` calls of fn() after `warmup` untimed ones."""
    for _ in range(warmup):
        fn()
    ms = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        ms.append((time.perf_counter() - t0) * 1e3)
    return statistics.median(ms), min(ms)


def time_torch(fn, inputs, repeat, warmup):
    import torch
    with torch.no_grad():
        return time_calls(lambda: fn(*inputs), repeat, warmup)


def make_recurrent(cell, batch, size=256, steps=100):
    """(model, inputs) of a 2-layer LSTM or GRU (cell), input and hidden `size`, over
    `steps` steps; the model returns the sequence and the final states."""
    import torch
    torch.manual_seed(0)
    rnn = cell(size, size, num_layers=2).eval()

    class Recurrent(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.rnn = rnn

        def forward(self, x):
            y, h = self.rnn(x)
            return (y, *h) if isinstance(h, tuple) else (y, h)

    g = torch.Generator().manual_seed(1234)
    return Recurrent().eval(), (torch.randn(steps, batch, size, generator=g),)


def make_bench_model(name):
    """(model, inputs) of a bench model, batch 1."""
    import torch
    sys.path.insert(0, str(HERE))
    import models
    import models_zoo
    if name == "resnet18":
        return models.make_model("resnet18"), (models.make_input("resnet18", 1),)
    if name == "vit_tiny":
        model, inputs = models_zoo.make_vit_tiny(depth=12, image=224, num_classes=1000)
        return model, inputs(1)
    if name == "bert_mini":
        torch.manual_seed(0)
        model = models_zoo.BertEncoder(vocab=30522, hidden=256, layers=4, heads=4, inter=1024, max_pos=512).eval()
        g = torch.Generator().manual_seed(1234)
        ids = torch.randint(1, 30522, (1, 128), generator=g)
        types = torch.zeros(1, 128, dtype=torch.int64)
        mask = torch.ones(1, 128, dtype=torch.int64)
        mask[:, 100:] = 0
        return model, (ids, types, mask)
    if name in ("lstm", "lstm_b16", "gru", "gru_b16"):
        cell = torch.nn.LSTM if name.startswith("lstm") else torch.nn.GRU
        return make_recurrent(cell, 16 if name.endswith("_b16") else 1)
    raise SystemExit(f"bench: unknown model '{name}' (resnet18, vit_tiny, bert_mini, lstm, lstm_b16, gru, gru_b16)")


def inductor_worker(args):
    """Child process: torch.compile(model) on all cores; prints one JSON line."""
    import torch
    torch.set_num_threads(os.cpu_count() or 1)
    model, inputs = make_bench_model(args.models)
    t0 = time.perf_counter()
    with torch.no_grad():
        compiled = torch.compile(model, backend="inductor")
        compiled(*inputs)
    compile_s = time.perf_counter() - t0
    median, best = time_torch(compiled, inputs, args.repeat, args.warmup)
    print(json.dumps({"median_ms": median, "min_ms": best, "compile_s": compile_s}))


def run_inductor(args, name):
    # Compile in-process (no pool of compile workers left running in the
    # background while we time), and warm up at least 3 runs.
    cmd = [sys.executable, str(Path(__file__).resolve()), "--inductor-worker", "--models", name,
           "--repeat", str(args.repeat), "--warmup", str(max(args.warmup, 3))]
    env = dict(os.environ, TORCHINDUCTOR_COMPILE_THREADS="1")
    try:
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=args.inductor_timeout, env=env)
    except subprocess.TimeoutExpired:
        return {"error": f"took longer than {args.inductor_timeout} s"}
    if r.returncode != 0:
        lines = [l for l in r.stderr.strip().splitlines() if l.strip()]
        return {"error": lines[-1] if lines else f"exit {r.returncode}"}
    return json.loads(r.stdout.strip().splitlines()[-1])


def doccc_version():
    try:
        return subprocess.run([str(DOCCC), "--version"], capture_output=True, text=True).stdout.strip()
    except OSError as e:
        return str(e)


def bench_model(args, name):
    """Rows for one model; (rows, failed)."""
    import numpy as np
    import torch
    import export
    model, inputs = make_bench_model(name)
    ncpu = os.cpu_count() or 1
    pt2 = OUT / f"{name}.pt2"
    export.export(model, inputs, pt2, ir="training", form="pt2")
    with torch.no_grad():
        ref = model(*inputs)
    ref = [t.numpy() for t in (ref if isinstance(ref, (tuple, list)) else (ref,))]
    ins = []
    for i, t in enumerate(inputs):
        p = OUT / f"{name}_in{i}.npy"
        np.save(p, t.numpy())
        ins += ["-i", str(p)]

    rows, failed = [], False

    def add(label, threads, median, best, extra=None):
        rows.append(dict(name=label, threads=threads, median_ms=median, min_ms=best, **(extra or {})))
        print(f"  {label:<28} median {median:9.2f} ms   min {best:9.2f} ms", flush=True)

    print(f"\n{name}, {args.repeat} runs after {args.warmup} warm-up, {ncpu} cores", flush=True)
    for threads in sorted({1, ncpu}):
        torch.set_num_threads(threads)
        add(f"torch eager {threads}T", threads, *time_torch(model, inputs, args.repeat, args.warmup))
    torch.set_num_threads(ncpu)

    for category in args.categories.split(","):
        if not hostcpu.runs_category(category):
            # a library of that level would only say DOCCC_ERR_CPU here
            rows.append(dict(name=f"doccc */{category}", skipped=f"this CPU lacks {hostcpu.CATEGORY_LEVEL[category]}"))
            print(f"  doccc */{category}: not timed: this CPU lacks {hostcpu.CATEGORY_LEVEL[category]}", flush=True)
            continue
        for target in args.targets.split(","):
            label = f"doccc {target}/{category}"
            outdir = OUT / f"{name}_{target}_{category}"
            t0 = time.perf_counter()
            r = subprocess.run([str(DOCCC), str(pt2), "-t", target, "-c", category, "-n", name,
                                "-o", f"{outdir}/"], capture_output=True, text=True)
            compile_s = time.perf_counter() - t0
            if r.returncode != 0:
                failed = True
                rows.append(dict(name=label, error=f"compile: exit {r.returncode}: {r.stderr.strip()[-500:]}"))
                print(f"  {label:<28} compile failed (exit {r.returncode})\n{r.stderr[-2000:]}", flush=True)
                continue
            outs = [outdir / f"y{i}.npy" for i in range(len(ref))]
            r = subprocess.run([str(DOCCC), "run", str(outdir / f"lib{name}.so"), *ins,
                                *[a for o in outs for a in ("-o", str(o))],
                                "--repeat", str(args.repeat), "--warmup", str(args.warmup), "--json"],
                               capture_output=True, text=True)
            m = doccc_latency(r)
            if r.returncode != 0 or not m:
                failed = True
                rows.append(dict(name=label, error=f"run: exit {r.returncode}: {r.stderr.strip()[-500:]}"))
                print(f"  {label:<28} run failed (exit {r.returncode})\n{r.stderr[-2000:]}", flush=True)
                continue
            max_diff = max(float(np.abs(np.load(o).astype(np.float64) - w).max()) for o, w in zip(outs, ref))
            threads = ncpu if target == "openmp" else 1
            add(label, threads, m[0], m[1],
                dict(target=target, category=category, compile_s=round(compile_s, 2),
                     max_abs_diff=max_diff))

    if not args.no_inductor:
        ind = run_inductor(args, name)
        if "error" in ind:
            rows.append(dict(name=f"torch.compile inductor {ncpu}T", error=ind["error"]))
            print(f"  torch.compile inductor: skipped: {ind['error']}", flush=True)
        else:
            add(f"torch.compile inductor {ncpu}T", ncpu, ind["median_ms"], ind["min_ms"],
                dict(compile_s=round(ind["compile_s"], 2)))

    eager = {r["threads"]: r["median_ms"] for r in rows if r["name"].startswith("torch eager")}
    print(f"\n{name:<30}{'median ms':>11}{'min ms':>10}{'/eager 1T':>11}{f'/eager {ncpu}T':>11}"
          f"{'compile s':>11}{'max diff':>10}")
    for r in rows:
        if "error" in r or "skipped" in r:
            print(f"{r['name']:<30}  {r.get('error', r.get('skipped'))[:80]}")
            continue
        r["ratio_eager_1t"] = r["median_ms"] / eager[1]
        r["ratio_eager_same_threads"] = r["median_ms"] / eager[r["threads"]]
        diff = f"{r['max_abs_diff']:10.2e}" if "max_abs_diff" in r else f"{'':>10}"
        comp = f"{r['compile_s']:11.1f}" if "compile_s" in r else f"{'':>11}"
        print(f"{r['name']:<30}{r['median_ms']:11.2f}{r['min_ms']:10.2f}{r['ratio_eager_1t']:11.2f}"
              f"{r['median_ms'] / eager[ncpu]:11.2f}{comp}{diff}")
    return rows, failed


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--models", default="resnet18,vit_tiny,bert_mini,lstm,lstm_b16")
    ap.add_argument("--repeat", type=int, default=20)
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--targets", default="none,sequential,openmp")
    ap.add_argument("--categories", default="server,desktop")
    ap.add_argument("--no-inductor", action="store_true")
    ap.add_argument("--inductor-timeout", type=int, default=600)
    ap.add_argument("--inductor-worker", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.inductor_worker:
        return inductor_worker(args)

    import torch
    sys.path.insert(0, str(HERE))
    if not DOCCC.exists():
        sys.exit(f"bench: {DOCCC} does not exist; run `make` first")
    OUT.mkdir(parents=True, exist_ok=True)
    ncpu = os.cpu_count() or 1
    results, failed = {}, False
    for name in args.models.split(","):
        rows, bad = bench_model(args, name)
        results[name] = rows
        failed |= bad
    result = dict(models=results, batch=1, repeat=args.repeat, warmup=args.warmup, cores=ncpu,
                  machine=platform.machine(), processor=platform.processor(),
                  torch=torch.__version__, doccc=doccc_version())
    path = ROOT / "build" / "bench.json"
    path.write_text(json.dumps(result, indent=2) + "\n")
    print(f"\nwrote {path.relative_to(ROOT)}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
