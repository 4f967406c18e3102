"""Draw one run of a doccc trace (doccc run --trace FILE) as a PNG.

    python3 test/trace_png.py trace.json docs/img/trace.png [--title TEXT]

The picture is the median-length run of the trace: every fused node as a bar on a time axis, one
lane per kind of step (convolutions, matrix products, pooling and the rest), the longest nodes
labelled with their torch names and GFLOP/s. docs/performance.md shows one; a trace opens in
https://ui.perfetto.dev as well. Needs matplotlib (pip install matplotlib), which nothing else in
the repository does.
"""

import argparse
import json
import statistics
import sys

LANES = [("convolution", ("conv",)), ("matrix product", ("linear", "addmm", "mm", "bmm", "matmul")),
         ("pooling", ("pool",)), ("other", ())]
COLORS = ["#4e79a7", "#f28e2b", "#59a14f", "#9c9c9c"]


def lane_of(name):
    first = name.split("+")[0]
    for i, (_, keys) in enumerate(LANES[:-1]):
        if any(k in first for k in keys):
            return i
    return len(LANES) - 1


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("trace")
    ap.add_argument("png")
    ap.add_argument("--title", default="")
    ap.add_argument("--labels", type=int, default=8, help="label this many of the longest nodes")
    a = ap.parse_args(argv)
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    ev = json.load(open(a.trace))["traceEvents"]
    runs = [e for e in ev if e.get("cat") == "run"]
    if not runs:
        sys.exit(f"{a.trace}: no run events (doccc run --trace on a library built with --profile)")
    med = statistics.median_low([r["dur"] for r in runs])
    run = next(r for r in runs if r["dur"] == med)
    nodes = [e for e in ev if e.get("cat") == "node" and e["args"]["run"] == run["args"]["run"]]
    t0 = run["ts"]
    fig, ax = plt.subplots(figsize=(12, 3.6), dpi=110)
    for e in nodes:
        k = lane_of(e["name"])
        ax.barh(k, e["dur"], left=e["ts"] - t0, height=0.6, color=COLORS[k], edgecolor="white", linewidth=0.3)
    longest = sorted(nodes, key=lambda e: -e["dur"])[:a.labels]
    for n, e in enumerate(sorted(longest, key=lambda e: e["ts"])):
        k = lane_of(e["name"])
        gf = e["args"].get("gflops")
        text = e["name"].split("+")[0] + (f"\n{gf:.0f} GF/s" if gf else "")
        ax.annotate(text, (e["ts"] - t0 + e["dur"] / 2, k - 0.3), xytext=(0, 4 + 22 * (n % 2)),
                    textcoords="offset points", ha="center", va="bottom", fontsize=7,
                    arrowprops=dict(arrowstyle="-", lw=0.4, color="#555555"))
    ax.set_yticks(range(len(LANES)), [l for l, _ in LANES])
    ax.set_ylim(-1.9, len(LANES) - 0.4)
    ax.invert_yaxis()
    ax.set_xlim(0, run["dur"])
    ax.set_xlabel(f"µs into the run (the median of {len(runs)} runs: {run['dur'] / 1e3:.2f} ms, "
                  f"{len(nodes)} fused nodes)")
    ax.set_title(a.title or f"doccc run --trace: {json.load(open(a.trace))['otherData'].get('library', '')}",
                 fontsize=10)
    ax.grid(axis="x", lw=0.3, alpha=0.5)
    fig.tight_layout()
    fig.savefig(a.png)
    print(f"{a.png}: run {run['args']['run']} of {len(runs)}, {len(nodes)} nodes")


if __name__ == "__main__":
    main()
