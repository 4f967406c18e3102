"""make bench, dynamic section: a library with run-time dims next to libraries
specialized to each size.

    python3 test/bench_dynamic.py [--models resnet18,bert_mini] [--targets sequential,openmp]
                                  [--repeat N] [--warmup N] [--out DIR]
    DOCCC_BENCH_QUICK=1 python3 test/bench_dynamic.py      # smoke test: small models, 2 runs

Models (fixed-seed random weights):
  resnet18   examples/resnet18's ResNet-18, 224x224, dynamic batch [1, 32],
             run at batch 1, 8 and 32
  bert_mini  test/models_zoo.py's BertEncoder of BERT-mini's shape (4 layers,
             hidden 256, 4 heads, intermediate 1024, vocabulary 30522) with
             an attention mask, dynamic batch [1, 8] and sequence [1, 512],
             run at (1, 16), (1, 128), (8, 128) and (1, 512)
  mlp        (not in the default list) three Linear, width 1024, dynamic
             batch [1, 256], run at 1, 8, 33 and 256

For every model and target: the export is compiled once as it is (a dynamic
library: its header must declare NAME_NUM_DIMS, or the row is an error) and
once per size with --shape for every input (a specialized library). Both run
at each size with `doccc run --repeat N` (the median of N runs after the
warm-up) on the same inputs, and both outputs are checked against eager
PyTorch. The table gives both medians and the ratio dynamic / specialized;
the goal (issue 13) is at most 1.10 everywhere: rows above it are marked,
not failed (timing on a shared machine is noisy). Everything goes to
OUT/bench_dynamic.json (default build/bench-dynamic/).

DOCCC_BENCH_QUICK=1: ResNet-18 at 64x64 (batch 1 and 3) and a one-layer
BERT of width 32 at (1, 16) and (2, 33), target none, 2 runs after 1
warm-up: the same code path in seconds.

Exit status 1 if a compile or run failed, a "dynamic" library was
specialized, or an output differs from eager (rtol 1e-4, atol 1e-5).
"""

import argparse
import json
import os
import platform
import re
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))
import bench  # noqa: E402
import hostcpu  # noqa: E402

BUILD = ROOT / os.environ.get("BUILD", "build")
DOCCC = Path(os.environ.get("DOCCC") or BUILD / "doccc")
QUICK = os.environ.get("DOCCC_BENCH_QUICK", "") not in ("", "0")
GOAL = 1.10
RTOL, ATOL = 1e-4, 1e-5


def make_model(name):
    """(model, example inputs, dynamic_shapes, sizes, inputs(size) -> tuple)."""
    import torch
    from torch.export import Dim
    sys.path.insert(0, str(HERE))
    import models
    import models_zoo
    if name == "resnet18":
        image = 64 if QUICK else 224
        model = models.resnet18_model.make_resnet18(num_classes=10 if QUICK else 1000, seed=0)
        sizes = [(1,), (3,)] if QUICK else [(1,), (8,), (32,)]
        batch = Dim("batch", min=1, max=4 if QUICK else 32)

        def inputs(size):
            g = torch.Generator().manual_seed(1234 + size[0])
            return (torch.randn(size[0], 3, image, image, generator=g),)
        return model, inputs((2,)), ({0: batch},), sizes, inputs
    if name == "bert_mini":
        torch.manual_seed(0)
        if QUICK:
            model = models_zoo.BertEncoder(vocab=100, hidden=32, layers=1, heads=2, inter=64, max_pos=64)
            sizes, vocab, bmax, smax = [(1, 16), (2, 33)], 100, 4, 64
        else:
            model = models_zoo.BertEncoder(vocab=30522, hidden=256, layers=4, heads=4, inter=1024, max_pos=512)
            sizes, vocab, bmax, smax = [(1, 16), (1, 128), (8, 128), (1, 512)], 30522, 8, 512
        model.eval()

        def inputs(size):
            b, s = size
            g = torch.Generator().manual_seed(1234 + b * 1000 + s)
            ids = torch.randint(1, vocab, (b, s), generator=g)
            types = torch.zeros(b, s, dtype=torch.int64)
            mask = torch.ones(b, s, dtype=torch.int64)
            mask[:, s - s // 5:] = 0  # the last fifth is padding
            return ids, types, mask
        spec = {0: Dim("batch", min=1, max=bmax), 1: Dim("seq", min=1, max=smax)}
        return model, inputs((2, 9)), (spec, spec, spec), sizes, inputs
    if name == "mlp":
        torch.manual_seed(0)
        width = 64 if QUICK else 1024
        model = torch.nn.Sequential(torch.nn.Linear(width, width), torch.nn.ReLU(), torch.nn.Linear(width, width),
                                    torch.nn.ReLU(), torch.nn.Linear(width, 10)).eval()
        sizes = [(1,), (7,)] if QUICK else [(1,), (8,), (33,), (256,)]

        def inputs(size):
            return (torch.randn(size[0], width, generator=torch.Generator().manual_seed(size[0])),)
        return model, inputs((2,)), ({0: Dim("batch", min=1, max=256)},), sizes, inputs
    raise SystemExit(f"bench_dynamic: unknown model '{name}' (resnet18, bert_mini, mlp)")


def compile_lib(pt2, target, outdir, name, extra):
    """doccc PT2 -t TARGET -n NAME -o OUTDIR/ EXTRA; (library, header macros, error or None)."""
    t0 = time.perf_counter()
    r = subprocess.run([str(DOCCC), str(pt2), "-t", target, "-n", name, "-o", f"{outdir}/", *extra],
                       capture_output=True, text=True)
    secs = time.perf_counter() - t0
    if r.returncode != 0:
        return None, {}, f"compile: exit {r.returncode}: {r.stderr.strip()[-500:]}", secs
    macros = {}
    for line in (outdir / f"{name}.h").read_text().splitlines():
        m = re.match(r"\s*#\s*define\s+([A-Za-z_]\w*)\s+(.*?)\s*$", line)
        if m:
            macros[m.group(1)] = m.group(2)
    return outdir / f"lib{name}.so", macros, None, secs


def time_lib(lib, ins, nout, outdir, args):
    """doccc run LIB --repeat N: (median ms, min ms, outputs) or an error string."""
    import numpy as np
    outs = [outdir / f"y{i}.npy" for i in range(nout)]
    r = subprocess.run([str(DOCCC), "run", str(lib), *[a for p in ins for a in ("-i", str(p))],
                        *[a for o in outs for a in ("-o", str(o))],
                        "--repeat", str(args.repeat), "--warmup", str(args.warmup), "--json"],
                       capture_output=True, text=True)
    m = bench.doccc_latency(r)
    if r.returncode != 0 or not m:
        return f"run: exit {r.returncode}: {r.stderr.strip()[-500:]}"
    return m[0], m[1], [np.load(o) for o in outs]


def max_diff(got, ref):
    """The largest |got - ref|, or an error string if not within rtol/atol."""
    import numpy as np
    worst = 0.0
    for i, (g, w) in enumerate(zip(got, ref)):
        if g.shape != w.shape:
            return f"output {i}: shape {g.shape}, eager {w.shape}"
        if not np.allclose(g, w, rtol=RTOL, atol=ATOL) or np.isnan(g).any():
            return f"output {i}: max |diff| {float(np.abs(g.astype(np.float64) - w).max()):.3e} beyond rtol/atol"
        worst = max(worst, float(np.abs(g.astype(np.float64) - w).max()) if g.size else 0.0)
    return worst


def shape_args(ep, inputs):
    """--shape NAME=D0,D1,... for every user input of the export."""
    names = [s.arg.name for s in ep.graph_signature.input_specs if s.kind.name == "USER_INPUT"]
    return [a for n, t in zip(names, inputs) for a in ("--shape", f"{n}={','.join(map(str, t.shape))}")]


def bench_model(args, name, out):
    """Rows for one model; (rows, failed)."""
    import numpy as np
    import torch
    model, example, dyn, sizes, inputs = make_model(name)
    with torch.no_grad():
        ep = torch.export.export(model, example, dynamic_shapes=dyn)
    pt2 = out / f"{name}.pt2"
    torch.export.save(ep, str(pt2))
    rows, failed = [], False
    print(f"\n{name}, {args.repeat} runs after {args.warmup} warm-up, {os.cpu_count()} cores", flush=True)
    for target in args.targets.split(","):
        dyndir = out / f"{name}_{target}_dynamic"
        dlib, macros, err, dsecs = compile_lib(pt2, target, dyndir, name, [])
        if not err and f"{name.upper()}_NUM_DIMS" not in macros:
            err = "the dynamic compile gave a specialized library (no NUM_DIMS in its header)"
        for size in sizes:
            row = dict(model=name, target=target, size=list(size))
            rows.append(row)
            xs = inputs(size)
            with torch.no_grad():
                ref = model(*xs)
            ref = [t.numpy() for t in (ref if isinstance(ref, (tuple, list)) else (ref,))]
            tag = "x".join(map(str, size))
            ins = []
            for i, t in enumerate(xs):
                ins.append(out / f"{name}_{tag}_in{i}.npy")
                np.save(ins[-1], t.numpy())
            sdir = out / f"{name}_{target}_{tag}"
            slib, _, serr, ssecs = compile_lib(pt2, target, sdir, name, shape_args(ep, xs))
            for kind, lib, e, libdir in (("specialized", slib, serr, sdir), ("dynamic", dlib, err, dyndir)):
                if e:
                    row[kind] = dict(error=e)
                    continue
                got = time_lib(lib, ins, len(ref), libdir, args)
                if isinstance(got, str):
                    row[kind] = dict(error=got)
                    continue
                diff = max_diff(got[2], ref)
                row[kind] = dict(median_ms=got[0], min_ms=got[1]) if not isinstance(diff, str) else dict(error=diff)
                if not isinstance(diff, str):
                    row[kind]["max_abs_diff"] = diff
            row["compile_s"] = dict(specialized=round(ssecs, 2), dynamic=round(dsecs, 2))
            if all("median_ms" in row.get(k, {}) for k in ("specialized", "dynamic")):
                row["ratio"] = row["dynamic"]["median_ms"] / row["specialized"]["median_ms"]
            else:
                failed = True
            print_row(row, flush=True)
    return rows, failed


def print_header():
    print(f"\n{'model':<10}{'target':<12}{'size':<10}{'specialized ms':>16}{'dynamic ms':>13}{'ratio':>10}")


def print_row(r, flush=False):
    size = "x".join(map(str, r["size"]))
    cells = []
    for k in ("specialized", "dynamic"):
        c = r.get(k, {})
        cells.append(f"{c['median_ms']:.2f}" if "median_ms" in c else "error")
    ratio = f"{r['ratio']:.2f}{' *' if r['ratio'] > GOAL else ''}" if "ratio" in r else "-"
    print(f"{r['model']:<10}{r['target']:<12}{size:<10}{cells[0]:>16}{cells[1]:>13}{ratio:>10}", flush=flush)
    for k in ("specialized", "dynamic"):
        if "error" in r.get(k, {}):
            print(f"    {k}: {r[k]['error'][:300]}", flush=flush)


def main():
    hostcpu.use_host_march()  # the libraries are run here
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--models", default="resnet18,bert_mini")
    ap.add_argument("--targets", default="none" if QUICK else "sequential,openmp")
    ap.add_argument("--repeat", type=int, default=2 if QUICK else 10)
    ap.add_argument("--warmup", type=int, default=1 if QUICK else 2)
    ap.add_argument("--out", type=Path, default=ROOT / "build" / "bench-dynamic")
    args = ap.parse_args()
    import torch
    if not DOCCC.exists():
        sys.exit(f"bench_dynamic: {DOCCC} does not exist; run `make` first")
    args.out.mkdir(parents=True, exist_ok=True)
    rows, failed = [], False
    for name in args.models.split(","):
        r, bad = bench_model(args, name, args.out)
        rows += r
        failed |= bad
    print(f"\nrun-time dims vs specialized, median of {args.repeat} runs (goal: ratio <= {GOAL:.2f}; * above it)")
    print_header()
    for r in rows:
        print_row(r)
    result = dict(rows=rows, quick=QUICK, repeat=args.repeat, warmup=args.warmup, cores=os.cpu_count(),
                  machine=platform.machine(), torch=torch.__version__, goal=GOAL)
    path = args.out / "bench_dynamic.json"
    path.write_text(json.dumps(result, indent=2) + "\n")
    print(f"\nwrote {path}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
