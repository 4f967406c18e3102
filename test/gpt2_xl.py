"""A GPT-2-XL-shaped model through doccc (issue 12), outside the suite.

    python3 test/gpt2_xl.py [--layers 48] [--d 1600] [--heads 25] [--tokens 16]
                            [--embedded] [--target openmp] [--category desktop]
                            [--repeat 10] [--dir D] [--keep] [--json PATH]

Builds a GPT-2-shaped decoder with random fp32 weights (test/large_models.py,
gpt2_module: bench_gpu.py's GPT-2 layout, vocabulary 50257, context 1024,
LayerNorm, causal scaled_dot_product_attention, tanh-GELU MLP, LM head tied
to the token embedding); the defaults are GPT-2-XL's shape: 48 layers, width
1600, 25 heads, 1.56 B parameters, 6.2 GB of fp32 weights. It runs it eagerly
on --tokens token ids (batch 1), exports it (torch.export, torch.export.save),
compiles it with doccc (-t openmp -c desktop, --external-weights unless
--embedded), runs the library with `doccc run --repeat N --expect` against
the eager logits at the suite's tolerance (rtol 1e-4, atol 1e-5), and prints:
the build, export and compile times, doccc's phase times and peak resident
memory (--report's peak_rss_bytes; the process tree's peak, doccc and its
compilers, beside it), the sizes of the .pt2, the library and the weights
file, the run latency (median and minimum of --repeat runs), and the largest
absolute and relative errors. Exit status 1 if a step failed or the logits
are outside the tolerance. --json PATH writes the same as one object.

Try it small first: `python3 test/gpt2_xl.py --layers 2 --d 256 --heads 4`
takes seconds. The full size needs several minutes, about 6.2 GB of memory
for the weights in this process (once: the eager run and the export share
them) and up to about 13 GB of disk (the .pt2, NAME.weights or the library,
doccc's temporary files); everything goes into a temporary folder (--dir D:
under D) removed at the end unless --keep.
"""

import argparse
import json
import os
import shutil
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))
BUILD = ROOT / os.environ.get("BUILD", "build")
DOCCC = Path(os.environ.get("DOCCC") or BUILD / "doccc")
RTOL, ATOL = 1e-4, 1e-5  # conftest's


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--layers", type=int, default=48)
    ap.add_argument("--d", type=int, default=1600, help="model width")
    ap.add_argument("--heads", type=int, default=25)
    ap.add_argument("--tokens", type=int, default=16)
    ap.add_argument("--embedded", action="store_true", help="embed the weights in the library")
    ap.add_argument("--target", default="openmp")
    ap.add_argument("--category", default="desktop")
    ap.add_argument("--repeat", type=int, default=10, help="timed runs of the library")
    ap.add_argument("--dir", type=Path, default=None, help="where the files go (default: a temporary folder)")
    ap.add_argument("--keep", action="store_true", help="keep the files and print where they are")
    ap.add_argument("--json", type=Path, default=None, help="also write the figures to PATH")
    args = ap.parse_args()
    if args.d % args.heads:
        ap.error(f"--d {args.d} is not a multiple of --heads {args.heads}")
    if not DOCCC.exists():
        sys.exit(f"gpt2_xl: {DOCCC} does not exist; run `make` first")
    import large_models as lm

    work = Path(tempfile.mkdtemp(prefix="doccc-gpt2-xl-", dir=args.dir))
    fig = dict(layers=args.layers, d=args.d, heads=args.heads, tokens=args.tokens, vocab=50257,
               weights="embedded" if args.embedded else "external", target=args.target, category=args.category)
    ok = False
    try:
        print(f"GPT-2 shape: {args.layers} layers, d={args.d}, {args.heads} heads, vocabulary 50257, "
              f"{args.tokens} tokens; files in {work}", flush=True)
        e = lm.gpt2_export(work / "gpt2.pt2", args.layers, args.d, args.heads, tokens=args.tokens)
        fig.update(parameters=e.weight_bytes // 4, weights_bytes=e.weight_bytes, largest_weight_bytes=e.largest_bytes,
                   pt2_bytes=e.path.stat().st_size, build_and_eager_s=e.times["build_s"],
                   export_s=e.times["export_s"])
        print(f"  {fig['parameters'] / 1e9:.3f} B parameters, {e.weight_bytes / 1e9:.2f} GB of weights "
              f"(largest {lm.fmt_mib(e.largest_bytes)}); build and eager run {e.times['build_s']:.1f} s, "
              f"export {e.times['export_s']:.1f} s, .pt2 {e.path.stat().st_size / 1e9:.2f} GB", flush=True)

        out = work / "out"
        cmd = [e.path, "-t", args.target, "-c", args.category, "-n", "gpt2", "-o", f"{out}/"]
        cmd += ["--embed-weights"] if args.embedded else ["--external-weights"]
        c = lm.compile_measured(DOCCC, cmd, report=work / "report.json")
        if c.returncode != 0:
            fig["error"] = f"compile: exit {c.returncode}: {c.stderr.strip()[-2000:]}"
            print(f"  doccc failed:\n{c.describe()}", flush=True)
            return 1
        t = c.report["time_ms"]
        lib, wf = out / "libgpt2.so", out / "gpt2.weights"
        fig.update(compile_s=c.wall_s, import_s=t["import"] / 1e3, passes_s=t["passes"] / 1e3,
                   expand_s=t["per_pass"].get("expand", 0.0) / 1e3, build_s=t["build"] / 1e3,
                   doccc_peak_rss_bytes=c.report["peak_rss_bytes"], tree_peak_rss_bytes=c.tree_peak_bytes,
                   library_bytes=lib.stat().st_size, weights_file_bytes=wf.stat().st_size if wf.exists() else 0,
                   notes=[l for l in c.stderr.splitlines() if l.strip()])
        print(f"  compile {c.wall_s:.1f} s (import {fig['import_s']:.1f} s, passes {fig['passes_s']:.1f} s "
              f"of which expand {fig['expand_s']:.1f} s, build {fig['build_s']:.1f} s); doccc peak RSS "
              f"{lm.fmt_mib(fig['doccc_peak_rss_bytes'])}, process tree {lm.fmt_mib(c.tree_peak_bytes)}; library "
              f"{fig['library_bytes'] / 1e6:.1f} MB, weights file {fig['weights_file_bytes'] / 1e9:.2f} GB", flush=True)
        for line in fig["notes"]:
            print(f"  doccc: {line}", flush=True)

        r = lm.run_expect(DOCCC, lib, e.x, e.ref, work, RTOL, ATOL, repeat=args.repeat)
        if "error" in r:
            fig["error"] = f"run: {r['error']}"
            print(f"  doccc run failed: {r['error']}", flush=True)
            return 1
        o = r["outputs"][0]
        fig.update(latency_median_ms=r["latency_ms"]["median"], latency_min_ms=r["latency_ms"]["min"],
                   max_abs_err=o["max_abs_err"], max_rel_err=o["max_rel_err"], mismatches=o["mismatches"],
                   elements=o["elements"], matches_eager=r["pass"])
        print(f"  run: median {fig['latency_median_ms']:.1f} ms, min {fig['latency_min_ms']:.1f} ms over "
              f"{args.repeat} runs ({os.cpu_count()} cores); logits {o['shape']}: max abs err {o['max_abs_err']:.3g}, "
              f"max rel err {o['max_rel_err']:.3g}, {o['mismatches']} of {o['elements']} outside rtol {RTOL:g}, "
              f"atol {ATOL:g}: {'PASS' if r['pass'] else 'FAIL'}", flush=True)
        ok = bool(r["pass"])
        return 0 if ok else 1
    finally:
        if args.json:
            args.json.write_text(json.dumps(fig, indent=2) + "\n")
        if args.keep:
            print(f"  kept {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
