#!/usr/bin/env python3
"""Seed corpus of the SDFG reader's harness (fuzz_sdfg) from real dumps.

    python3 test/fuzz/make_sdfg_seeds.py [DOCCC]   # rewrites test/fuzz/corpus/sdfg/

Tiny models are exported with torch.export and compiled by DOCCC (default
build/doccc) with --dump-sdfg for some of the targets none, openmp and cuda
(nothing is compiled: the C compiler is `true`); every stage of at most
16 KB is a seed, named MODEL_TARGET_STAGE.json, identical ones once. The
models cover what the dump holds: an MLP (GEMM micro-kernels, packed
weights), a convolution with batch norm (folding), a softmax over rows of a
run-time batch (run-time dims, workspace slots, a parallel map's run-time work), and
a gather with a run-time assertion and a guard (value symbols, messages,
guards); and the integer pass's cases of test/passes (dequantized weights,
integer GEMMs and convolutions).
"""

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import torch

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))
import make_seeds  # noqa: E402  (the reader seeds' models)
from test_dynamic import add_guard_ne  # noqa: E402  (test/test_dynamic.py)

MAX_BYTES = 16 << 10


class Softmax(torch.nn.Module):
    """exp(x) / its row sums: two transients of a run-time size (workspace slots)."""

    def forward(self, x):
        t = torch.exp(x)
        return t / t.sum(1, keepdim=True)


class Gather(torch.nn.Module):
    """No parameters: the guard goes on x, the first placeholder."""

    def forward(self, x, i):
        torch._assert_async((i < 2).all(), "i must be below 2")
        return torch.index_select(x, 1, i) * 2, x * 3


def programs():
    """(name, ExportedProgram, targets) of the seed models."""
    torch.manual_seed(0)
    batch = torch.export.Dim("batch", min=2, max=64)
    with torch.no_grad():
        out = [("mlp", torch.export.export(make_seeds.Mlp().eval(), (torch.randn(2, 4),)), ("none", "openmp", "cuda")),
               ("conv", torch.export.export(make_seeds.Conv().eval(), (torch.randn(2, 1, 9, 7),)), ("none",)),
               ("softmax_dyn", torch.export.export(Softmax(), (torch.randn(3, 8),), dynamic_shapes=({0: batch},)),
                ("openmp", "cuda"))]
        ep = torch.export.export(Gather().eval(), (torch.randn(4, 2), torch.tensor([0, 1])),
                                 dynamic_shapes=({0: torch.export.Dim("n", min=2, max=32)}, None))
    add_guard_ne(ep, 6, "n must not be 6")
    out.append(("gather", ep, ("none", "cuda")))
    import make_graph_seeds  # the state's program: a cache and a counter
    with torch.no_grad():
        out.append(("cache", torch.export.export(make_graph_seeds.Cache(), (torch.randn(1, 2, 4), torch.tensor([3, 1]))),
                    ("none", "cuda")))
    return out


def main():
    doccc = Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT / "build" / "doccc"
    out = HERE / "corpus" / "sdfg"
    shutil.rmtree(out, ignore_errors=True)
    tmp = Path(tempfile.mkdtemp(prefix="sdfg-seeds-"))
    env = dict(os.environ, DOCC_MARCH="", DOCC_CC="true", DOCC_CXX="true", DOCC_NVCC="true")
    try:
        for name, ep, targets in programs():
            pt2 = tmp / f"{name}.pt2"
            torch.export.save(ep, str(pt2))
            for target in targets:
                dump = tmp / f"{name}_{target}"
                # min_parallel_work 1: the run-time sized maps run in parallel (par_work)
                subprocess.run([str(doccc), str(pt2), "-t", target, "-n", name, "-o", f"{tmp}/out/",
                                "--pass-opt", "schedule.min_parallel_work=1", "--dump-sdfg", str(dump)],
                               env=env, capture_output=True)
                for f in sorted(dump.glob("*.json")):
                    if f.stat().st_size <= MAX_BYTES:
                        make_seeds.put(out, f"{name}_{target}_{f.stem[3:]}.json", f.read_bytes())
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    # the passes' quantized cases (test/passes/make_cases.py): folded
    # dequantizations ("dequant") and integer GEMMs and convolutions
    for f in sorted((HERE.parent / "passes").glob("integer_*.json")):
        if f.stat().st_size <= MAX_BYTES:
            make_seeds.put(out, f"pass_{f.name}", f.read_bytes())
    # and the integer kernels' forms after expansion and scheduling: int4
    # weights two to a byte, four-byte words (T_DOT4); a little larger; and
    # steps given schedules by the tuning database ("tune"); a long sum in
    # blocks (a "rolled" loop)
    for case in ("expand_int4", "schedule_int4", "expand_quads", "schedule_quads", "tuning_own", "tuning_transfer",
                 "expand_sum_blocks"):
        f = HERE.parent / "passes" / f"{case}.out.json"
        if f.stat().st_size <= 2 * MAX_BYTES:
            make_seeds.put(out, f"passes_{case}.json", f.read_bytes())
    files = list(out.iterdir())
    print(f"{out}: {len(files)} seeds, {sum(f.stat().st_size for f in files)} bytes")


if __name__ == "__main__":
    main()
