"""make bench-compile (and make bench, after test/bench.py): doccc's compile time
and memory as the weights grow (issue 12).

    python3 test/bench_compile.py [--sizes 0.1,0.5,1,2] [--modes embedded,external]
                                  [--repeat N] [--layers 4] [--target openmp]
                                  [--category desktop] [--json PATH] [--dir D]

For every size S (GB, 10^9 bytes): a synthetic fp32 MLP of about S GB of
weights, `--layers` square nn.Linear layers with tanh between them
(test/large_models.py: fixed seed, weights N(0, 1/width)), exported to a .pt2.
For every mode (embedded: weights in libNAME.so; external: --external-weights,
NAME.weights beside it) doccc compiles it --repeat times (default 1) with
--report, and each row gives:

  compile s     wall time of the doccc command, the median of the repeats
  s/GB          that over the weights in GB
  doccc peak    the report's peak_rss_bytes: doccc's own peak resident memory
  tree peak     the largest ru_maxrss of the process tree, doccc and the
                compilers it starts (clang, the linker): RUSAGE_CHILDREN of a
                small runner process whose only child is doccc
                (test/large_models.py, compile_measured, says why: a process is
                booked its parent's resident size at exec; so a compiler started
                by doccc's posix_spawn is booked doccc's size then, and this is
                at least that)
  import, passes (expand alone too), build
                the report's phase times (s), of the last repeat
  ext           whether the library's weights are external (doccc inspect)
  max err       the largest difference from eager PyTorch (`doccc run --expect`,
                at the suite's rtol 1e-4, atol 1e-5; FAIL when outside it)

Memory and disk: the weights exist once in this process while it exports
them, and every file is deleted as soon as its row is done (the .pt2 after
its size), so the largest size needs about 3 x S of disk at once: the
.pt2, the library or NAME.weights, and doccc's temporary files.

Prints the table and writes it to build/bench-compile.json (--json PATH
elsewhere). Exit status 1 if a compile or a run failed or an output was
outside the tolerance (the table still shows the rest).
"""

import argparse
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))
BUILD = ROOT / os.environ.get("BUILD", "build")
DOCCC = Path(os.environ.get("DOCCC") or BUILD / "doccc")
GB = 1e9
RTOL, ATOL = 1e-4, 1e-5  # conftest's


def inspect_external(lib):
    r = subprocess.run([str(DOCCC), "inspect", str(lib), "--json"], capture_output=True, text=True)
    try:
        return json.loads(r.stdout)["weights_external"]
    except (ValueError, KeyError):
        return None


def bench_mode(args, e, size, mode, work):
    """One row: compile --repeat times, then check the last library's output."""
    import large_models as lm
    out = work / f"out_{mode}"
    cmd = [e.path, "-t", args.target, "-c", args.category, "-n", "big", "-o", f"{out}/"]
    cmd += ["--external-weights"] if mode == "external" else ["--embed-weights"]  # past 1 GiB external is the default
    row = dict(size_gb=size, mode=mode, weights_bytes=e.weight_bytes, largest_weight_bytes=e.largest_bytes)
    walls = []
    for i in range(args.repeat):
        shutil.rmtree(out, ignore_errors=True)
        c = lm.compile_measured(DOCCC, cmd, report=work / "report.json")
        if c.returncode != 0:
            row["error"] = f"compile: {c.describe()[-1500:]}"
            shutil.rmtree(out, ignore_errors=True)
            return row
        walls.append(c.wall_s)
    t = c.report["time_ms"]
    lib = out / "libbig.so"
    row.update(compile_s=statistics.median(walls), compile_runs_s=walls,
               s_per_gb=statistics.median(walls) / (e.weight_bytes / GB),
               doccc_peak_rss_bytes=c.report["peak_rss_bytes"], tree_peak_rss_bytes=c.tree_peak_bytes,
               import_s=t["import"] / 1e3, passes_s=t["passes"] / 1e3,
               expand_s=t["per_pass"].get("expand", 0.0) / 1e3, build_s=t["build"] / 1e3,
               external=inspect_external(lib),
               library_bytes=lib.stat().st_size,
               weights_file_bytes=(out / "big.weights").stat().st_size if (out / "big.weights").exists() else 0)
    r = lm.run_expect(DOCCC, lib, e.x, e.ref, work, RTOL, ATOL)
    if "error" in r:
        row["error"] = f"run: {r['error']}"
    else:
        row.update(max_abs_err=r["outputs"][0]["max_abs_err"], matches_eager=r["pass"])
    shutil.rmtree(out, ignore_errors=True)
    return row


def print_row(r):
    mib = 1 << 20
    if "error" in r:
        print(f"{r['size_gb']:>7g} {r['mode']:<9} {r['error'][:300]}", flush=True)
        return
    ext = {True: "yes", False: "no", None: "?"}[r["external"]]
    err = f"{r['max_abs_err']:.2e}" + ("" if r["matches_eager"] else " FAIL")
    print(f"{r['size_gb']:>7g} {r['mode']:<9} {r['weights_bytes'] / mib:>9.0f} {r['compile_s']:>10.1f} "
          f"{r['s_per_gb']:>6.1f} {r['doccc_peak_rss_bytes'] / mib:>11.0f} {r['tree_peak_rss_bytes'] / mib:>10.0f} "
          f"{r['import_s']:>7.1f} {r['passes_s']:>7.1f} {r['expand_s']:>7.1f} {r['build_s']:>7.1f} {ext:>4} {err:>10}",
          flush=True)


HEADER = (f"{'size GB':>7} {'mode':<9} {'weights MiB':>9} {'compile s':>10} {'s/GB':>6} {'doccc peak MiB':>11} "
          f"{'tree MiB':>10} {'import':>7} {'passes':>7} {'expand':>7} {'build':>7} {'ext':>4} {'max err':>10}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", default="0.1,0.5,1,2", help="weights in GB (10^9 bytes), comma-separated")
    ap.add_argument("--modes", default="embedded,external")
    ap.add_argument("--repeat", type=int, default=1, help="compiles per row; the median is shown")
    ap.add_argument("--layers", type=int, default=4)
    ap.add_argument("--target", default="openmp")
    ap.add_argument("--category", default="desktop")
    ap.add_argument("--json", type=Path, default=ROOT / "build" / "bench-compile.json")
    ap.add_argument("--dir", type=Path, default=None, help="where the models go (default: a temporary folder)")
    args = ap.parse_args()
    modes = args.modes.split(",")
    if any(m not in ("embedded", "external") for m in modes) or args.repeat < 1:
        ap.error("--modes takes embedded and external; --repeat at least 1")
    if not DOCCC.exists():
        sys.exit(f"bench-compile: {DOCCC} does not exist; run `make` first")
    import torch
    import large_models as lm
    args.json.parent.mkdir(parents=True, exist_ok=True)
    rows, failed = [], False
    print(f"doccc compile time and memory, -t {args.target} -c {args.category}, {args.layers} fp32 Linear "
          f"layers, median of {args.repeat} compile(s), {os.cpu_count()} cores\n{HEADER}", flush=True)
    for size in (float(s) for s in args.sizes.split(",")):
        work = Path(tempfile.mkdtemp(prefix="doccc-bench-compile-", dir=args.dir))
        try:
            e = lm.mlp_export(work / "big.pt2", int(size * GB), layers=args.layers)
            for mode in modes:
                r = bench_mode(args, e, size, mode, work)
                r.update(export_s=e.times["export_s"])
                failed |= "error" in r or not r.get("matches_eager", False)
                rows.append(r)
                print_row(r)
        finally:
            shutil.rmtree(work, ignore_errors=True)
    doccc_version = subprocess.run([str(DOCCC), "--version"], capture_output=True, text=True).stdout.strip()
    result = dict(rows=rows, target=args.target, category=args.category, layers=args.layers, repeat=args.repeat,
                  cores=os.cpu_count(), machine=platform.machine(), torch=torch.__version__, doccc=doccc_version)
    args.json.write_text(json.dumps(result, indent=2) + "\n")
    print(f"\nwrote {args.json}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
