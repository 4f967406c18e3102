#!/usr/bin/env python3
"""Write docs/performance.md from the JSON files `make bench` and its parts wrote.

    python3 test/gen_perf_page.py [--build build] [-o docs/performance.md] [--date YYYY-MM-DD]

`make perf-page` runs it, and `make bench` runs it last. The page shows one run on one machine:
every table comes from the JSON files under --build as they are now, so a new run replaces the
old figures instead of adding to them. A part that did not run (its JSON is missing) gets a
section that says "not measured in this run"; nothing is carried over from older runs.

The files (see docs/benchmarks.md):
    bench-peers.json                 ten models next to ONNX Runtime and OpenVINO (test/bench_peers.py)
    bench-int8.json                  the same, int8 (test/bench_peers.py --int8)
    bench.json                       doccc's targets and categories next to eager (test/bench.py)
    bench-dynamic/bench_dynamic.json run-time dims next to specialized libraries (test/bench_dynamic.py)
    bench-compile.json               compile time and memory as the weights grow (test/bench_compile.py)
    bench-ccache.json                compiler-cache hits (test/bench_ccache.py)
    bench-llm.json                   a 0.5 B decoder next to llama.cpp (test/bench_llm.py)
    bench-arm.json                   aarch64 instructions per multiply-add (test/bench_arm.py)

The machine is named from bench-peers.json (its CPU and the fp32 FMA peak test/bench_peak.c
measured), else from /proc/cpuinfo; the date is --date, else the newest JSON's modification day.
test/test_docs.py runs this on the fixtures in test/fixtures/perf/.
"""
import argparse
import datetime
import json
import math
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import hostcpu  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent

SOURCES = {  # section key: path under --build
    "peers": "bench-peers.json",
    "int8": "bench-int8.json",
    "targets": "bench.json",
    "dynamic": "bench-dynamic/bench_dynamic.json",
    "compile": "bench-compile.json",
    "ccache": "bench-ccache.json",
    "llm": "bench-llm.json",
    "arm": "bench-arm.json",
}

NOT_MEASURED = "Not measured in this run (`{make}` writes `build/{file}`)."


def load(build):
    """{key: parsed JSON} for the files that exist and parse; {key: path} of the newest mtime."""
    data, mtimes = {}, []
    for key, rel in SOURCES.items():
        p = build / rel
        if not p.is_file():
            continue
        try:
            data[key] = json.loads(p.read_text())
        except ValueError as e:
            sys.exit(f"gen_perf_page: {p}: not JSON: {e}")
        mtimes.append(p.stat().st_mtime)
    return data, max(mtimes) if mtimes else None


def ms(x):
    """A latency in ms with three significant digits or so."""
    if x is None:
        return "-"
    return f"{x:.0f}" if x >= 1000 else f"{x:.1f}" if x >= 100 else f"{x:.2f}"


def num(x, spec):
    return "-" if x is None else format(x, spec)


def table(head, rows):
    out = ["| " + " | ".join(head) + " |", "|" + "|".join("---" for _ in head) + "|"]
    out += ["| " + " | ".join(str(c) for c in r) + " |" for r in rows]
    return "\n".join(out)


def median_of(engine):
    return engine.get("median_ms") if isinstance(engine, dict) else None


def geomean(xs):
    xs = [x for x in xs if x]
    return math.exp(sum(map(math.log, xs)) / len(xs)) if xs else None


def machine_line(data):
    p = data.get("peers") or data.get("int8")
    if p:
        cpu, cores = p.get("cpu") or hostcpu.cpu_model(), p.get("cores")
        peak = p.get("peak_gflops") or {}
        unit = "GOP/s (int8)" if p is data.get("int8") and not data.get("peers") else "GFLOP/s"
        peaks = ", ".join(f"{float(v):.0f}{' ' + unit if i == 0 else ''} on {t} thread{'s' if str(t) != '1' else ''}"
                          for i, (t, v) in enumerate(peak.items()))
        s = f"{cpu}, {cores} cores" if cores else cpu
        return s + (f"; measured fp32 FMA peak {peaks} (test/bench_peak.c)" if peaks else
                    "; peak not measured in this run")
    return f"{hostcpu.cpu_model()}; peak not measured in this run (it comes with bench-peers.json)"


def section_peers(d):
    rows = []
    for r in d["rows"]:
        e = r["engines"]
        rows.append([r["model"], r["batch"], r["threads"], ms(median_of(e.get("eager"))),
                     ms(median_of(e.get("ORT"))), ms(median_of(e.get("OpenVINO"))),
                     ms(median_of(e.get("doccc"))), num(r.get("ratio"), ".2f"),
                     num(r.get("peak_pct"), ".0f") if "peak_pct" in r else "",
                     ms(median_of(e.get("doccc tuned"))) if "doccc tuned" in e else "-",
                     num(r.get("ratio_tuned"), ".2f"),
                     num(e.get("doccc", {}).get("max_abs_diff"), ".1e")
                     + ("" if e.get("doccc", {}).get("within_tolerance", True) else " (outside tol)")])
    out = [f"`python3 test/bench_peers.py`, category `{d.get('category', 'server')}`, medians of "
           f"{d.get('repeat', '?')} runs in ms after {d.get('warmup', '?')} warm-ups; doccc/best: doccc over the faster "
           "of ONNX Runtime and OpenVINO; %peak: doccc's share of the fp32 FMA peak (convolution networks); "
           "tuned: compiled with the tuning database `doccc tune` filled.", ""]
    out.append(table(["model", "batch", "threads", "eager", "ORT", "OpenVINO", "doccc", "doccc/best", "%peak",
                      "tuned", "tuned/best", "doccc max abs diff"], rows))
    g, gt = d.get("geomean_ratio") or {}, {}
    for t in sorted({r["threads"] for r in d["rows"]}):
        gt[t] = geomean([r.get("ratio_tuned") for r in d["rows"] if r["threads"] == t])
    line = ", ".join(f"{float(v):.2f} on {t} thread{'s' if str(t) != '1' else ''}" for t, v in g.items())
    if line:
        out += ["", f"Geometric mean of doccc/best: {line}"
                + ("; tuned " + ", ".join(f"{v:.2f}" for v in gt.values() if v) if any(gt.values()) else "") + "."]
    v = d.get("versions") or {}
    if v:
        out += ["", "Versions: " + ", ".join(str(val) if str(val).startswith(k + " ") else f"{k} {val}"
                                           for k, val in v.items()) + "."]
    return "\n".join(out)


def section_int8(d):
    rows = []
    for r in d["rows"]:
        e = r["engines"]
        rows.append([r["model"], r["batch"], r["threads"], ms(median_of(e.get("ORT"))),
                     ms(median_of(e.get("OpenVINO"))), ms(median_of(e.get("doccc"))),
                     ms(median_of(e.get("doccc fp32"))), num(r.get("int8_speedup"), ".2f"),
                     num(r.get("ratio"), ".2f")])
    return ("`python3 test/bench_peers.py --int8`: PT2E int8 for doccc, `onnxruntime.quantization`'s int8 ONNX "
            "for the peers; medians in ms; speedup: doccc fp32 over doccc int8.\n\n"
            + table(["model", "batch", "threads", "ORT int8", "OpenVINO int8", "doccc int8", "doccc fp32",
                     "speedup", "doccc/best"], rows))


def section_targets(d):
    out = [f"`python3 test/bench.py`: batch {d.get('batch', 1)}, medians of {d.get('repeat', '?')} runs in ms; "
           "ratio: to eager at the same thread count.", ""]
    rows = []
    for model, rs in d["models"].items():
        eager = {r["threads"]: r["median_ms"] for r in rs if r.get("name", "").startswith("torch eager")}
        for r in rs:
            if "median_ms" not in r:
                rows.append([model, r["name"], "-", "-", "-", "-", r.get("error", r.get("skipped", ""))[:60]])
                continue
            ratio = r["median_ms"] / eager[r["threads"]] if r.get("threads") in eager else None
            rows.append([model, r["name"], r["threads"], ms(r["median_ms"]), num(ratio, ".2f"),
                         num(r.get("compile_s"), ".1f"), num(r.get("max_abs_diff"), ".1e")])
    out.append(table(["model", "engine", "threads", "median", "ratio", "compile s", "max abs diff"], rows))
    return "\n".join(out)


def section_dynamic(d):
    rows = []
    for r in d["rows"]:
        s, y = r.get("specialized", {}), r.get("dynamic", {})
        rows.append([r["model"], r["target"], "x".join(map(str, r["size"])), ms(s.get("median_ms")) if s else "-",
                     ms(y.get("median_ms")) if y else "-", num(r.get("ratio"), ".2f")])
    return (f"`python3 test/bench_dynamic.py`: one library with run-time dims next to a library specialized to "
            f"each size; medians of {d.get('repeat', '?')} runs in ms; the goal is a ratio of at most "
            f"{d.get('goal', 1.1):.2f}.\n\n"
            + table(["model", "target", "size", "specialized", "dynamic", "ratio"], rows))


def section_compile(d):
    mib = 1 << 20
    rows = []
    for r in d["rows"]:
        if "error" in r:
            rows.append([r["size_gb"], r["mode"], "error", "", "", "", "", ""])
            continue
        rows.append([r["size_gb"], r["mode"], num(r["compile_s"], ".1f"), num(r["s_per_gb"], ".1f"),
                     f"{r['doccc_peak_rss_bytes'] / mib:.0f}", f"{r['tree_peak_rss_bytes'] / mib:.0f}",
                     {True: "yes", False: "no"}.get(r.get("external"), "?"), num(r.get("max_abs_err"), ".1e")])
    return (f"`python3 test/bench_compile.py`: {d.get('layers', 4)} fp32 Linear layers, `-t {d.get('target')} "
            f"-c {d.get('category')}`, embedded and `--external-weights`; peak memory in MiB.\n\n"
            + table(["weights GB", "mode", "compile s", "s per GB", "doccc peak", "with compilers",
                     "external", "max abs err"], rows))


def section_ccache(d):
    rows = [[p.get("tag", i + 1), p["compiles"], p["hits"], p["misses"], f"{p['hit_rate']:.0%}",
             num(p.get("wall_s"), ".0f")] for i, p in enumerate(d["passes"])]
    n = sum(1 for _ in d["passes"][0:1]) and d["passes"][0]["compiles"]
    return (f"`python3 test/bench_ccache.py`: {len(d['models'])} models x {len(d['targets'])} targets "
            f"({', '.join(d['targets'])}) built twice through ccache, the second time from another directory.\n\n"
            + table(["pass", "compiles", "hits", "misses", "hit rate", "wall s"], rows)
            + f"\n\nLibraries of the second pass byte-identical to the first: {d.get('identical')} of {n}.")


def section_llm(d):
    rows = []
    for r in d["rows"]:
        rows.append([r["engine"], r["weights"], r["threads"], num(r.get("prefill"), ".1f"),
                     num(r.get("decode"), ".2f"), num(r["bytes"] / 1e6 if r.get("bytes") else None, ".0f"),
                     r.get("note", "")])
    m = d.get("model") or {}
    name = m.get("name") if isinstance(m, dict) and m.get("name") else "the Qwen2-shaped decoder"
    return (f"`python3 test/bench_llm.py`: {name} ({d.get('n_params', 0) / 1e6:.0f} M parameters), prefill "
            f"{d.get('prompt')} tokens then decode {d.get('gen')}; tokens per second, medians; bound (triad): "
            "the decode rate the measured memory bandwidth allows.\n\n"
            + table(["engine", "weights", "threads", "prefill tok/s", "decode tok/s", "MB per token", "note"], rows))


def section_arm(d):
    rows = [[r["model"], r["target"], r["category"], f"{r['macs'] / 1e6:.0f}", f"{r['insns'] / 1e6:.0f}",
             f"{r['insns_per_mac']:.3f}"] for r in d]
    return ("`python3 test/bench_arm.py`: aarch64 libraries run under qemu-aarch64 with an instruction-counting "
            "plugin; instructions executed per multiply-add of the model (fewer is better).\n\n"
            + table(["model", "target", "category", "M MACs", "M instructions", "instructions per MAC"], rows))


SECTIONS = [  # key, title, make target, writer
    ("peers", "Models next to PyTorch, ONNX Runtime and OpenVINO", "make bench", section_peers),
    ("int8", "int8", "make bench-int8", section_int8),
    ("targets", "doccc's targets and categories", "make bench", section_targets),
    ("dynamic", "Dynamic shapes", "make bench", section_dynamic),
    ("compile", "Compile time and memory", "make bench-compile", section_compile),
    ("ccache", "Compiler caches", "make bench", section_ccache),
    ("llm", "LLM decoder", "make bench-llm", section_llm),
    ("arm", "ARM instructions per multiply-add", "make bench-arm", section_arm),
]


def page(data, date):
    out = ["# Performance", "",
           "<!-- Generated by test/gen_perf_page.py from make bench's JSON files; do not edit. -->", "",
           f"One run of `make bench` and its parts on one machine: {machine_line(data)}. Date: {date}.",
           "",
           "Each table is the last run of its benchmark; a new run replaces the figures. What each "
           "benchmark does, and its flags, is in [Benchmarks](benchmarks.md). The machines are shared and "
           "noisy: compare figures from one table only.", ""]
    for key, title, make, fn in SECTIONS:
        out += [f"## {title}", ""]
        if key in data:
            out.append(fn(data[key]))
        else:
            out.append(NOT_MEASURED.format(make=make, file=SOURCES[key]))
        out.append("")
    out += ["## A trace", "",
            "A run's timeline, fused node by fused node: on a library built with `--profile`, `doccc run lib.so -i x.npy --repeat 20 --trace trace.json` writes it, https://ui.perfetto.dev opens it, and `python3 test/trace_png.py trace.json trace.png` draws its median run, as below: ResNet-18 at batch 1 on one thread of the Intel Xeon, each convolution with the batch norm, residual and ReLU fused into it ([Debugging and profiling](debugging.md)).", "",
            '![One run of ResNet-18 traced by doccc run --trace, drawn by test/trace_png.py](img/trace.png)', ""]
    return "\n".join(out)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--build", type=Path, default=ROOT / "build", help="where the JSON files are (default build/)")
    ap.add_argument("-o", "--output", type=Path, default=ROOT / "docs" / "performance.md")
    ap.add_argument("--date", help="the run's date (default: the newest JSON's modification day)")
    args = ap.parse_args(argv)
    data, newest = load(args.build)
    date = args.date or (datetime.date.fromtimestamp(newest).isoformat() if newest else "no run")
    text = page(data, date)
    tmp = args.output.with_name(args.output.name + ".tmp")
    tmp.write_text(text)
    tmp.replace(args.output)
    print(f"wrote {args.output} ({', '.join(data) or 'no JSON found'})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
