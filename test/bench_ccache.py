"""make bench (after test/bench_compile.py): the model suite rebuilt through
ccache from a second working directory (README "Compiler caches and compile
farms").

    python3 test/bench_ccache.py [--models a,b,...] [--targets openmp,sequential,cuda,rocm]
                                 [--json PATH] [--dir D]

The models are those of the end-to-end suite: test/models.py's MODELS (mlp,
small_cnn, resnet18) and test/models_zoo.py's ZOO (resnet50, mobilenet_v2,
vit_tiny, bert, segformer_b0, qwen2_layer), each exported once at batch 1.
Every model is compiled for every target twice, with DOCC_CC="ccache clang",
DOCC_NVCC="ccache nvcc" and DOCC_HIPCC="ccache hipcc", a ccache of its own (a fresh CCACHE_DIR, no
configuration file), and DOCC_REUSE_BINARIES unset:

  pass a   from working directory D/a: doccc runs there, DOCC_TMP=D/a/tmp,
           the outputs in D/a/out/
  pass b   the same from D/b: another folder, DOCC_TMP and output path

For each pass it prints the compiles, ccache's hits and misses (its own
counters, `ccache --print-stats`, read before and after the pass), the hit
rate and the time of its doccc commands, and the hits and misses of
each target; then whether every library of pass b is
byte-identical to its pass-a twin. A target whose compiler is missing (nvcc
for cuda) is left out with a note.

Writes build/bench-ccache.json (--json PATH elsewhere). Exit status 1 when a
compile failed, pass b missed the cache, or a library differed.
"""

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))
BUILD = ROOT / os.environ.get("BUILD", "build")
DOCCC = Path(os.environ.get("DOCCC") or BUILD / "doccc")
COMPILERS = {"cuda": "nvcc", "rocm": "hipcc"}


def export_suite(names, d):
    """NAME -> .pt2 path, each model at batch 1."""
    import export as ex
    import models
    import models_zoo
    paths = {}
    for n in names:
        if n in models.MODELS:
            m, inputs = models.make_model(n).eval(), (models.make_input(n, 1),)
        else:
            m, make_inputs = models_zoo.make(n)
            inputs = make_inputs(1)
        paths[n] = d / f"{n}.pt2"
        ex.export(m, inputs, paths[n])
    return paths


def stats(env):
    r = subprocess.run(["ccache", "--print-stats"], capture_output=True, text=True, env=env, check=True)
    s = {k: int(v) for k, v in (line.split("\t") for line in r.stdout.splitlines() if "\t" in line)}
    return {"hits": s.get("direct_cache_hit", 0) + s.get("preprocessed_cache_hit", 0),
            "misses": s.get("cache_miss", 0)}


def one_pass(tag, paths, targets, d, env):
    wd = d / tag
    (wd / "tmp").mkdir(parents=True)
    env = dict(env, DOCC_TMP=str(wd / "tmp"))
    libs, errors, wall = {}, [], 0.0
    per = {t: dict(compiles=0, hits=0, misses=0) for t in targets}
    for n, p in paths.items():
        for t in targets:
            out = wd / "out" / f"{n}-{t}"
            before = stats(env)
            t0 = time.perf_counter()
            r = subprocess.run([str(DOCCC), str(p), "-t", t, "-n", n, "-o", f"{out}/"], cwd=wd, env=env,
                               capture_output=True, text=True)
            wall += time.perf_counter() - t0
            after = stats(env)
            if r.returncode != 0:
                errors.append(f"{n} -t {t}: exit {r.returncode}: {r.stderr.strip()[-400:]}")
                continue
            libs[(n, t)] = (out / f"lib{n}.so").read_bytes()
            per[t]["compiles"] += 1
            per[t]["hits"] += after["hits"] - before["hits"]
            per[t]["misses"] += after["misses"] - before["misses"]
    row = dict(pass_=tag, compiles=len(libs), wall_s=wall, hits=sum(v["hits"] for v in per.values()),
               misses=sum(v["misses"] for v in per.values()), per_target=per, errors=errors)
    row["hit_rate"] = row["hits"] / max(1, row["hits"] + row["misses"])
    return row, libs


def main():
    import models
    import models_zoo
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--models", default=",".join(list(models.MODELS) + list(models_zoo.ZOO)))
    ap.add_argument("--targets", default="openmp,sequential,cuda,rocm")
    ap.add_argument("--json", type=Path, default=BUILD / "bench-ccache.json")
    ap.add_argument("--dir", type=Path, default=None, help="the working folder (default: a temporary one)")
    args = ap.parse_args()
    names = args.models.split(",")
    unknown = [n for n in names if n not in models.MODELS and n not in models_zoo.ZOO]
    if unknown:
        ap.error(f"unknown models: {', '.join(unknown)}")
    if not DOCCC.exists():
        sys.exit(f"bench-ccache: {DOCCC} does not exist; run `make` first")
    if not shutil.which("ccache"):
        sys.exit("bench-ccache: ccache is not installed (make setup installs it)")
    targets = []
    for t in args.targets.split(","):
        if t in COMPILERS and not shutil.which(COMPILERS[t]):
            print(f"bench-ccache: no {COMPILERS[t]} here: -t {t} left out")
        else:
            targets.append(t)
    d = args.dir or Path(tempfile.mkdtemp(prefix="bench-ccache-"))
    d.mkdir(parents=True, exist_ok=True)
    (d / "exports").mkdir(exist_ok=True)
    paths = export_suite(names, d / "exports")
    (d / "ccache.conf").write_text("")
    env = {k: v for k, v in os.environ.items() if k not in ("DOCC_REUSE_BINARIES", "CCACHE_DISABLE", "CCACHE_RECACHE")}
    env.update(CCACHE_DIR=str(d / "ccache"), CCACHE_CONFIGPATH=str(d / "ccache.conf"),
               DOCC_CC="ccache clang", DOCC_NVCC="ccache nvcc", DOCC_HIPCC="ccache hipcc")
    subprocess.run(["ccache", "-z"], env=env, check=True, capture_output=True)
    rows, libs = [], {}
    print(f"{len(names)} models x {len(targets)} targets ({', '.join(targets)}), through ccache")
    print(f"{'pass':<5} {'compiles':>8} {'hits':>5} {'misses':>6} {'hit rate':>8} {'wall s':>7}  hits/misses by target")
    for tag in ("a", "b"):
        row, libs[tag] = one_pass(tag, paths, targets, d, env)
        rows.append(row)
        print(f"{tag:<5} {row['compiles']:>8} {row['hits']:>5} {row['misses']:>6} {row['hit_rate']:>8.0%} "
              f"{row['wall_s']:>7.1f}  " + ", ".join(f"{t} {v['hits']}/{v['misses']}"
                                               for t, v in row["per_target"].items()), flush=True)
        for e in row["errors"]:
            print(f"  FAILED {e}")
    same = [k for k in libs["a"] if libs["b"].get(k) == libs["a"][k]]
    differ = [f"{n} -t {t}" for (n, t) in libs["a"] if (n, t) in libs["b"] and (n, t) not in same]
    print(f"libraries of pass b byte-identical to pass a: {len(same)} of {len(libs['a'])}"
          + (f" (differ: {', '.join(differ)})" if differ else ""))
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps(dict(models=names, targets=targets, passes=rows, identical=len(same),
                                         differ=differ), indent=1) + "\n")
    if args.dir is None:
        shutil.rmtree(d, ignore_errors=True)
    b = rows[1]
    bad = any(r["errors"] for r in rows) or differ or b["misses"] or b["hits"] < b["compiles"]
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
