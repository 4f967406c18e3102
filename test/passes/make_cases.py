#!/usr/bin/env python3
"""Write the inputs of the IR-in/IR-out tests of every pass (test/test_passes.py).

    python3 test/passes/make_cases.py [DOCCC]     # `make golden` runs it (DOCCC: build/doccc)

For each case below, a tiny torch model is exported (torch.export, training
IR), compiled by DOCCC with --dump-sdfg and the case's target, category and
pass options (the C compiler is `true`: nothing is compiled), and the stage
before the case's pass is kept as test/passes/CASE.in.json, its "hash"
emptied (the input's hash covers stack traces with this checkout's paths).
CASE.args holds the arguments of `doccc opt` that run the pass: --pass, -t,
-c and any --pass-opt. The expected output, CASE.out.json, is what
`doccc opt CASE.in.json $(cat CASE.args)` writes; test_passes.py compares it
and, under `make golden`, rewrites it. Before keeping a case this script
checks that the pass run by `doccc opt` on the stage before it gives the
compile's own stage after it, byte for byte.

A new pass of the table gets its cases here: a row naming it, with models
that exercise what it does (the stage before it is found by its position in
`doccc --list-passes`). Needs torch; the tests themselves need only doccc.
"""

import json
import os
import re
import shlex
import shutil
import sqlite3
import subprocess
import sys
import tempfile
from pathlib import Path

import torch
from torch import nn

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
sys.path.insert(0, str(HERE.parent))
import export  # noqa: E402  (test/export.py)


# ---- the models: a few ops each, tiny shapes ---------------------------------------------

class Fn(nn.Module):
    """forward is f (no parameters)."""

    def __init__(self, f):
        super().__init__()
        self.f = f

    def forward(self, x, *more):
        return self.f(x, *more)


def seq(*mods):
    torch.manual_seed(0)
    m = nn.Sequential(*mods)
    for b in m.modules():  # statistics that are not the identity, so that folding shows
        if isinstance(b, (nn.BatchNorm1d, nn.BatchNorm2d)):
            g = torch.Generator().manual_seed(1)
            b.running_mean.uniform_(-1, 1, generator=g)
            b.running_var.uniform_(0.5, 2, generator=g)
            b.weight.data.uniform_(0.5, 1.5, generator=g)
            b.bias.data.uniform_(-0.5, 0.5, generator=g)
    return m


class Bias(nn.Module):
    """x + a per-row bias (a [3, 1] parameter broadcast over the columns)."""

    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.b = nn.Parameter(torch.randn(3, 1))

    def forward(self, x):
        return x + self.b


class Unused(nn.Module):
    """A parameter forward never reads (the export keeps it), and a split's dead parts."""

    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.w = nn.Parameter(torch.randn(3))
        self.unused = nn.Parameter(torch.randn(3))

    def forward(self, x):
        return (x * self.w).split(1, 0)[1]


class Cache(nn.Module):
    """A KV cache's update: rows at the given positions, then a read of the whole cache."""

    def __init__(self):
        super().__init__()
        self.register_buffer("k", torch.zeros(1, 6, 4), persistent=False)

    def forward(self, x, pos):
        self.k.index_copy_(1, pos, x)
        return self.k.sum(1)


class Counter(nn.Module):
    """A counter read before its update (its new value is computed from it: a copy stays)."""

    def __init__(self):
        super().__init__()
        self.register_buffer("n", torch.full((1,), 0.5))

    def forward(self, x):
        y = x + self.n
        self.n.add_(1)
        return y


class Hidden(nn.Module):
    """A streaming cell: the hidden state, written from a new value that is also the output."""

    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.w = nn.Parameter(torch.randn(4, 4))
        self.register_buffer("h", torch.zeros(2, 4))

    def forward(self, x):
        new = torch.tanh(x @ self.w + self.h)
        self.h.copy_(new * 0.5)
        return new


def x(*shape):
    torch.manual_seed(0)
    return torch.randn(*shape)


def pt2e(model, inputs, dynamic=False):
    """model quantized by PT2E (torchao's XNNPACK quantizer: int8 weights per
    channel, int8 activations, static or dynamic), as a module to export."""
    from torchao.quantization.pt2e.quantize_pt2e import convert_pt2e, prepare_pt2e
    from torchao.testing.pt2e._xnnpack_quantizer import XNNPACKQuantizer, get_symmetric_quantization_config
    q = XNNPACKQuantizer().set_global(get_symmetric_quantization_config(is_per_channel=True, is_dynamic=dynamic))
    rng = torch.get_rng_state()   # the other cases' weights stay as they were
    g = prepare_pt2e(torch.export.export(model.eval(), inputs).module(), q)
    g(*inputs)
    torch.set_rng_state(rng)
    from torchao.quantization.pt2e import allow_exported_model_train_eval
    g = convert_pt2e(g)
    allow_exported_model_train_eval(g)   # make_cases calls eval()
    return g


class U4Linear(nn.Module):
    """A linear layer of uint4 weights (0..15 in uint8, scales and zero
    points per group of 16) dequantized by quantized_decomposed."""

    def __init__(self, k=32, n=8):
        super().__init__()
        import torch.ao.quantization.fx._decomposed  # noqa: F401 (registers quantized_decomposed)
        g = torch.Generator().manual_seed(0)
        self.register_buffer("q", torch.randint(0, 16, (n, k), dtype=torch.uint8, generator=g))
        self.register_buffer("s", torch.rand(n, k // 16, generator=g) * 0.02 + 0.001)
        self.register_buffer("z", torch.randint(0, 16, (n, k // 16), generator=g).float())

    def forward(self, x):
        w = torch.ops.quantized_decomposed.dequantize_per_channel_group(
            self.q, self.s, self.z, 0, 15, torch.uint8, 16, torch.float32)
        return nn.functional.linear(x, w)


CHAIN = Fn(lambda x: torch.relu(x * 2 + 1))
SOFTMAX_CHAIN = Fn(lambda x: torch.softmax(x * 2, -1) + 1)
torch.manual_seed(0)
TUNED = seq(nn.Conv2d(8, 16, 3, padding=1), nn.ReLU(), nn.Flatten(), nn.Linear(1600, 10))

# name, model, example inputs, pass, target, extra doccc arguments
CASES = [
    ("dce_split", Fn(lambda x: x.split(2, 1)[0] * 2), (x(1, 6),), "dce", "none", []),
    ("dce_chunk_view", Fn(lambda x: torch.relu(x.chunk(2, -1)[1].t())), (x(2, 4),), "dce", "none", []),
    ("dce_unused_weight", Unused(), (x(2, 3),), "dce", "none", []),
    ("fold_conv_bn", seq(nn.Conv2d(2, 3, 3, padding=1), nn.BatchNorm2d(3)), (x(1, 2, 4, 4),), "fold_constants",
     "none", []),
    ("fold_linear_bn", seq(nn.Linear(4, 3), nn.BatchNorm1d(3)), (x(2, 4),), "fold_constants", "none", []),
    ("fold_bn_prepared", seq(nn.BatchNorm2d(2)), (x(1, 2, 2, 2),), "fold_constants", "none", []),
    ("state_cache", Cache(), (x(1, 2, 4), torch.tensor([3, 1])), "state", "none", []),
    ("state_counter", Counter(), (x(2, 1),), "state", "none", []),
    ("state_hidden", Hidden(), (x(2, 4),), "state", "none", []),
    ("expand_conv", seq(nn.Conv2d(2, 3, 3)), (x(1, 2, 5, 5),), "expand", "none", []),
    ("expand_gemm", seq(nn.Linear(4, 3)), (x(2, 4),), "expand", "none", []),
    ("expand_pool", seq(nn.MaxPool2d(2)), (x(1, 1, 4, 4),), "expand", "none", []),
    ("expand_softmax", Fn(lambda x: torch.softmax(x, -1)), (x(2, 5),), "expand", "none", []),
    ("expand_reduce", Fn(lambda x: x.sum(1)), (x(2, 3, 4),), "expand", "none", []),
    ("expand_broadcast", Bias(), (x(2, 3, 4),), "expand", "none", []),
    ("expand_gather", Fn(lambda x, i: torch.index_select(x, 0, i)), (x(5, 3), torch.tensor([4, 0])), "expand",
     "none", []),
    ("fuse_chain", CHAIN, (x(2, 3),), "map_fusion", "none", []),
    ("fuse_conv_bias_relu", seq(nn.Conv2d(1, 2, 3), nn.ReLU()), (x(1, 1, 4, 4),), "map_fusion", "none", []),
    ("fuse_not_into_reduction", Fn(lambda x: torch.relu(x).sum(1)), (x(2, 3),), "map_fusion", "none", []),
    ("dce_late_chain", CHAIN, (x(2, 3),), "dce_late", "none", []),
    ("schedule_none", SOFTMAX_CHAIN, (x(4, 16),), "schedule", "none", []),
    ("schedule_sequential", SOFTMAX_CHAIN, (x(4, 16),), "schedule", "sequential", []),
    ("schedule_openmp", SOFTMAX_CHAIN, (x(4, 16),), "schedule", "openmp",
     ["--pass-opt", "schedule.min_parallel_work=1"]),
    ("schedule_cuda", SOFTMAX_CHAIN, (x(4, 16),), "schedule", "cuda", []),
    ("gpu_plan_grid", SOFTMAX_CHAIN, (x(4, 16),), "gpu_plan", "cuda", []),
    ("gpu_plan_tiled", seq(nn.Linear(40, 24), nn.GELU()), (x(32, 40),), "gpu_plan", "cuda", []),
    ("gpu_plan_tile32", seq(nn.Linear(40, 24), nn.GELU()), (x(32, 40),), "gpu_plan", "cuda",
     ["--pass-opt", "gpu_plan.tile=32"]),
    ("gpu_plan_untiled", seq(nn.Linear(40, 24)), (x(32, 40),), "gpu_plan", "cuda", ["--pass-opt", "gpu_plan.tiled=false"]),
    ("gpu_plan_cooperative", seq(nn.LayerNorm(64)), (x(2, 64),), "gpu_plan", "cuda", []),
    ("gpu_plan_block_reduce", Fn(lambda x: x.sum()), (x(4, 100),), "gpu_plan", "cuda", []),
    ("gpu_plan_block64", CHAIN, (x(2, 300),), "gpu_plan", "cuda", ["--pass-opt", "gpu_plan.block=64"]),
    ("memplan_reuse", Fn(lambda x: torch.cat([x.exp(), x.sin()], 1).sum(0) + x.sum(0).repeat(2)), (x(3, 4),),
     "memplan", "none", []),
    ("memplan_dynamic", SOFTMAX_CHAIN, (x(3, 8),), "memplan", "none", ["dynamic"]),
    # last: their models draw random numbers the rows above would otherwise see
    ("integer_linear", pt2e(seq(nn.Linear(6, 4)), (x(3, 6),)), (x(3, 6),), "integer", "none", []),
    ("integer_dynamic", pt2e(seq(nn.Linear(6, 4)), (x(3, 6),), dynamic=True), (x(3, 6),), "integer", "none", []),
    ("integer_conv", pt2e(seq(nn.Conv2d(8, 4, 3, padding=1)), (x(1, 8, 4, 4),)), (x(1, 8, 4, 4),), "integer",
     "none", []),
    ("integer_cuda", pt2e(seq(nn.Linear(6, 4)), (x(3, 6),)), (x(3, 6),), "integer", "cuda", []),
    ("expand_integer", pt2e(seq(nn.Linear(6, 4)), (x(3, 6),)), (x(3, 6),), "expand", "sequential", []),
    # the integer kernel's int8 products on the GPUs: int8 tensor cores (cuda), int32 sums (rocm)
    ("gpu_plan_s8", pt2e(seq(nn.Linear(64, 32)), (x(32, 64),)), (x(32, 64),), "gpu_plan", "cuda", []),
    ("gpu_plan_i32", pt2e(seq(nn.Linear(64, 32)), (x(32, 64),)), (x(32, 64),), "gpu_plan", "rocm", []),
    ("expand_int4", U4Linear(), (x(1, 32),), "expand", "sequential", ["--pass-opt", "expand.int4_weights=true"]),
    ("schedule_int4", U4Linear(), (x(1, 32),), "schedule", "sequential", ["--pass-opt", "expand.int4_weights=true"]),
    # the integer kernel in four-byte words (T_DOT4, vpdpbusd): int8 inputs shifted to uint8
    ("expand_quads", pt2e(seq(nn.Linear(5, 3)), (x(2, 5),)), (x(2, 5),), "expand", "sequential",
     ["--pass-opt", "expand.int8_dot=quads"]),
    ("schedule_quads", pt2e(seq(nn.Linear(5, 3)), (x(2, 5),)), (x(2, 5),), "schedule", "sequential",
     ["--pass-opt", "expand.int8_dot=quads"]),
    # a long float sum in blocks of expand.sum_block products (300 > 128): a
    # partial tile per block, the blocks' loop kept rolled, their sums added
    ("expand_sum_blocks", seq(nn.Linear(300, 8)), (x(2, 300),), "expand", "sequential", []),
    # the tuning database (tuning.db, made by make_tuning_db below): a step's
    # own entry, and the nearest entry of its kind for a step without one
    # (desktop: the database is made by timing here, and every machine of
    # the suite runs x86-64-v3)
    ("tuning_own", TUNED, (x(1, 8, 10, 10),), "tuning", "sequential",
     ["-c", "desktop", "--tuning-db", "@CASES@/tuning.db"]),
    ("tuning_transfer", seq(nn.Conv2d(8, 12, 3, padding=1)), (x(1, 8, 12, 12),), "tuning", "sequential",
     ["-c", "desktop", "--tuning-db", "@CASES@/tuning.db"]),
    # the bisector's tests' wrong step: the fused chain's step that covers
    # add, and a convolution's with its ReLU (1 added to element 0 of its value)
    ("perturb_chain", CHAIN, (x(2, 3),), "perturb", "none",
     ["--pass-opt", "perturb.enabled=true", "--pass-opt", "perturb.node=add"]),
    ("perturb_conv", seq(nn.Conv2d(1, 2, 3), nn.ReLU()), (x(1, 1, 4, 4),), "perturb", "none",
     ["--pass-opt", "perturb.enabled=true", "--pass-opt", "perturb.node=relu"]),
]


def make_tuning_db(doccc, tmp):
    """tuning.db: TUNED tuned by doccc tune here, then its entries given
    fixed schedules (the times stay what they were; the pass reads only
    the schedules)."""
    db = HERE / "tuning.db"
    db.unlink(missing_ok=True)
    pt2 = tmp / "tuned.pt2"
    torch.export.save(torch.export.export(TUNED.eval(), (x(1, 8, 10, 10),)), str(pt2))
    subprocess.run([str(doccc), "tune", str(pt2), "-t", "sequential", "-c", "desktop", "--tuning-db", str(db)],
                   env=dict(os.environ, DOCC_MARCH="", DOCC_TUNE_MS="1"), check=True, capture_output=True)
    with sqlite3.connect(db) as c:
        c.execute("update steps set params = 'tm=4 tn=16 winograd=0' where kind like 'conv%'")
        c.execute("update steps set params = 'tm=2 tn=8' where kind like 'gemm%'")
    with sqlite3.connect(db) as c:
        c.execute("vacuum")


def passes(doccc):
    """The pass table's names in order (doccc --list-passes)."""
    out = subprocess.run([str(doccc), "--list-passes"], capture_output=True, text=True, check=True).stdout
    return [line.split()[0] for line in out.splitlines() if line and not line.startswith(" ")]


def main():
    doccc = Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT / "build" / "doccc"
    table = passes(doccc)
    env = dict(os.environ, DOCC_MARCH="", DOCC_CC="true", DOCC_CXX="true", DOCC_NVCC="true", DOCC_HIPCC="true")
    tmp = Path(tempfile.mkdtemp(prefix="pass-cases-"))
    for f in HERE.glob("*.json"):
        f.unlink()
    for f in HERE.glob("*.args"):
        f.unlink()
    try:
        make_tuning_db(doccc, tmp)
        for name, model, inputs, pas, target, extra in CASES:
            dynamic = "dynamic" in extra
            extra = [a for a in extra if a != "dynamic"]
            pt2 = tmp / f"{name}.pt2"
            with torch.no_grad():
                model.eval()   # (a PT2E module's eval returns None)
                ep = torch.export.export(model, inputs, dynamic_shapes=(
                    ({0: torch.export.Dim("batch", min=2, max=64)},) if dynamic else None))
            torch.export.save(ep, str(pt2))
            dump = tmp / f"{name}_dump"
            args = ["-t", target, "-c", "server", *extra]
            here = [a.replace("@CASES@", str(HERE)) for a in args]
            r = subprocess.run([str(doccc), str(pt2), *here, "-n", "m", "-o", f"{tmp}/out/", "--dump-sdfg", str(dump)],
                               capture_output=True, text=True, env=env)
            k = table.index(pas) + 1
            # the stage before: the last one written before k (a pass off by default writes none)
            before = sorted(f for f in dump.glob("*.json") if int(f.name[:2]) < k)[-1:]
            after = sorted(dump.glob(f"{k:02d}-*.json"))
            if not before or not after:
                sys.exit(f"{name}: doccc wrote no stage before {k}, or not {k}:\n{r.stderr}")
            text = re.sub(r'"hash": "[0-9a-f]*"', '"hash": ""', before[0].read_text(), count=1)
            (HERE / f"{name}.in.json").write_text(text)
            opt_args = ["--pass", pas, *args]
            (HERE / f"{name}.args").write_text(shlex.join(opt_args) + "\n")
            # the pass by doccc opt gives the compile's next stage
            check = subprocess.run([str(doccc), "opt", str(before[0]), "--pass", pas, *here], capture_output=True,
                                   text=True, env=env)
            if check.returncode != 0 or check.stdout != after[0].read_text():
                sys.exit(f"{name}: doccc opt --pass {pas} on {before[0].name} is not the compile's {after[0].name}:\n"
                         f"{check.stderr}")
            print(f"{name}: {before[0].name} --pass {pas} ({len(text)} bytes)")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
