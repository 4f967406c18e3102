"""Large synthetic models for issue 12 (compile memory and time), shared by
test/test_large.py, test/bench_compile.py and test/gpt2_xl.py.

    mlp_export(path, total_bytes, layers=4, dtype=torch.float32, seed=0)
        -> Exported(path, x, ref, largest_bytes, weight_bytes)
    gpt2_export(path, layers, d, heads, tokens=16, vocab=50257, ctx=1024, seed=0)
        -> Exported(...)

mlp: `layers` square nn.Linear(w, w) layers (bias, tanh between them) whose
weights add up to about total_bytes; w is the width that makes them so,
rounded down to a multiple of 64 (so GEMM packing needs no padding) and at
least 64. Weights are drawn from N(0, 1/w) with a fixed seed, so every
activation stays O(1) through the layers; the input x is N(0, 1) of shape
[1, w]. dtype=torch.bfloat16 makes weights, biases and input bf16.

gpt2: bench_gpu.py's GPT-2 layout (HF GPT2LMHeadModel with nn.Linear for
Conv1D): learned token and position embeddings, pre-norm blocks (LayerNorm,
causal F.scaled_dot_product_attention, tanh GELU MLP of width 4d), final
LayerNorm, the LM head tied to the token embedding (one weight, used twice).
Linear and embedding weights N(0, 0.02), biases 0, LayerNorm affine random
(models_zoo._randomize_layernorm), all fp32 with fixed seeds. Input: token
ids [1, tokens] (int64); output: logits [1, tokens, vocab]. GPT-2-XL is
layers=48, d=1600, heads=25 (1.56 B parameters, 6.2 GB fp32).

Memory: the weights exist once in this process (modules are built on the
meta device, then given real storage and initialized in place, under
torch.no_grad), plus whatever torch.export.save holds while it writes one
tensor. The module is dropped before returning; only the input and the eager
reference come back (numpy; bf16 as raw uint16 bits, doccc run's convention).

    compile_measured(doccc, args, limit_bytes=None, report=None) -> Compiled

runs `doccc ARGS... [--report REPORT]`, optionally under an address-space limit
(RLIMIT_AS: what `ulimit -v` and `prlimit --as` set; doccc and every compiler
it starts inherit it), and measures its wall time and the peak resident
memory of its process tree. Both go through a small runner process (RUNNER:
python3 -S, about 10 MB) whose only child is doccc, because Linux books a
process's resident size at exec to the program it execs: doccc started
straight from this process (torch loaded, weights in memory) would have this
process's peak in its own ru_maxrss, and so in the report's peak_rss_bytes.
The runner's getrusage(RUSAGE_CHILDREN).ru_maxrss is the largest of doccc's
peak and those of the compilers it waited for (clang, the linker); a
compiler started by posix_spawn is booked doccc's resident size at its exec
too, so this tree peak is at least doccc's size when it started them.
doccc's own peak is the report's peak_rss_bytes.
"""

import gc
import json
import os
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import torch

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))


@dataclass
class Exported:
    """An exported large model: the .pt2, its input and eager output (numpy,
    bf16 as uint16 bits), the largest single weight and all weights in bytes,
    and how long building (with the eager run) and exporting took."""
    path: Path
    x: np.ndarray
    ref: np.ndarray
    largest_bytes: int
    weight_bytes: int
    times: dict = field(default_factory=dict)


def to_numpy(t):
    """A tensor as numpy; bfloat16 as its raw bits (uint16), as doccc run writes it."""
    t = t.detach().contiguous()
    if t.dtype == torch.bfloat16:
        return t.view(torch.int16).numpy().view("<u2")
    return t.numpy()


def mlp_width(total_bytes, layers, itemsize):
    """The width w, a multiple of 64, of `layers` w x w weights of about total_bytes."""
    w = int((total_bytes / (layers * itemsize)) ** 0.5) // 64 * 64
    return max(w, 64)


class MLP(torch.nn.Module):
    def __init__(self, width, layers, dtype):
        super().__init__()
        self.layers = torch.nn.ModuleList(torch.nn.Linear(width, width, dtype=dtype, device="meta")
                                          for _ in range(layers))

    def forward(self, x):
        for i, lin in enumerate(self.layers):
            x = lin(x)
            if i + 1 < len(self.layers):
                x = torch.tanh(x)
        return x


def _materialize(model, init):
    """Give a meta-device module real CPU storage and initialize it in place:
    one copy of the weights, never two."""
    model.to_empty(device="cpu")
    with torch.no_grad():
        init(model)
    return model


def _export(model, inputs, path, times, t0):
    """Eager reference, torch.export, torch.export.save; drops the module."""
    with torch.no_grad():
        ref = model(*inputs)
        times["build_s"] = time.perf_counter() - t0
        t1 = time.perf_counter()
        ep = torch.export.export(model.eval(), inputs)
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        torch.export.save(ep, str(path))
        times["export_s"] = time.perf_counter() - t1
    sizes = [p.numel() * p.element_size() for p in model.parameters()]
    del ep, model
    gc.collect()
    return ref, max(sizes), sum(sizes)


def mlp_export(path, total_bytes, layers=4, dtype=torch.float32, seed=0):
    """Build, run and export the synthetic MLP (see the module comment)."""
    t0 = time.perf_counter()
    itemsize = torch.empty(0, dtype=dtype).element_size()
    width = mlp_width(total_bytes, layers, itemsize)
    g = torch.Generator().manual_seed(seed)

    def init(m):
        for lin in m.layers:
            lin.weight.normal_(0.0, width ** -0.5, generator=g)
            lin.bias.uniform_(-0.1, 0.1, generator=g)

    model = _materialize(MLP(width, layers, dtype), init)
    x = torch.randn(1, width, generator=g).to(dtype)
    times = {}
    ref, largest, total = _export(model, (x,), path, times, t0)
    return Exported(Path(path), to_numpy(x), to_numpy(ref), largest, total, times)


def gpt2_module(layers, d, heads, vocab=50257, ctx=1024, seed=0):
    """bench_gpu.py's GPT-2, fp32 random weights (see the module comment)."""
    import bench_gpu
    import models_zoo
    gpt2 = bench_gpu._bench_modules()[0]
    with torch.device("meta"):
        model = gpt2(vocab=vocab, ctx=ctx, dim=d, layers=layers, heads=heads)
    g = torch.Generator().manual_seed(seed)

    def init(m):
        for mod in m.modules():
            if isinstance(mod, (torch.nn.Linear, torch.nn.Embedding)):
                mod.weight.normal_(0.0, 0.02, generator=g)
            if isinstance(mod, torch.nn.Linear):
                mod.bias.zero_()
            if isinstance(mod, torch.nn.LayerNorm):
                mod.weight.fill_(1.0)
                mod.bias.zero_()
        m.position_ids.copy_(torch.arange(ctx).unsqueeze(0))  # a buffer: to_empty left it undefined
        models_zoo._randomize_layernorm(m, torch.Generator().manual_seed(seed + 1))

    return _materialize(model, init).eval()


def gpt2_export(path, layers, d, heads, tokens=16, vocab=50257, ctx=1024, seed=0):
    """Build, run and export the GPT-2-shaped decoder on `tokens` token ids."""
    t0 = time.perf_counter()
    model = gpt2_module(layers, d, heads, vocab, ctx, seed)
    ids = torch.randint(0, vocab, (1, tokens), generator=torch.Generator().manual_seed(seed + 2))
    times = {}
    ref, largest, total = _export(model, (ids,), path, times, t0)
    return Exported(Path(path), to_numpy(ids), to_numpy(ref), largest, total, times)


@dataclass
class Compiled:
    """One measured doccc run: exit status, output, wall seconds, the process
    tree's peak RSS in bytes, and the --report (a dict, or None)."""
    cmd: list
    returncode: int
    stdout: str
    stderr: str
    wall_s: float
    tree_peak_bytes: int
    report: dict = None

    def describe(self):
        return (f"exit {self.returncode}\n--- command: {' '.join(self.cmd)}\n"
                f"--- stdout:\n{self.stdout[-4000:]}\n--- stderr:\n{self.stderr[-4000:]}")


# The runner: argv = RESULT_JSON LIMIT_BYTES CMD...; LIMIT_BYTES 0 is no limit.
RUNNER = """
import json, resource, subprocess, sys
result, limit, cmd = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
if limit:
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
rc = subprocess.call(cmd, stdin=subprocess.DEVNULL)
peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * 1024
with open(result, "w") as f:
    json.dump({"returncode": rc, "tree_peak_bytes": peak}, f)
"""


def compile_measured(doccc, args, limit_bytes=None, report=None, env=None):
    """doccc ARGS [--report REPORT] under RLIMIT_AS = limit_bytes (None: no
    limit), measured as the module comment says."""
    cmd = [str(doccc)] + [str(a) for a in args] + (["--report", str(report)] if report else [])
    with tempfile.TemporaryDirectory(prefix="doccc-measure-") as d:
        res = Path(d) / "result.json"
        with open(Path(d) / "out", "w+") as out, open(Path(d) / "err", "w+") as err:
            t0 = time.perf_counter()
            subprocess.run([sys.executable, "-S", "-c", RUNNER, str(res), str(limit_bytes or 0), *cmd],
                           stdin=subprocess.DEVNULL, stdout=out, stderr=err,
                           env=None if env is None else dict(os.environ, **env))
            wall = time.perf_counter() - t0
            out.seek(0)
            err.seek(0)
            if not res.is_file():
                err.seek(0)
                raise RuntimeError(f"the measuring runner of {cmd[0]} failed:\n{err.read()[-4000:]}")
            r = json.loads(res.read_text())
            c = Compiled(cmd, r["returncode"], out.read(), err.read(), wall, r["tree_peak_bytes"])
    if report and c.returncode == 0:
        c.report = json.loads(Path(report).read_text())
    return c


def run_expect(doccc, lib, x, ref, workdir, rtol, atol, repeat=0, weights=None):
    """`doccc run LIB -i x.npy --expect ref.npy --json` (with --repeat N when
    repeat > 0): its JSON report (outputs[0].max_abs_err, pass, latency_ms),
    or {"error": ...} when it could not run."""
    workdir = Path(workdir)
    np.save(workdir / "x.npy", x)
    np.save(workdir / "ref.npy", ref)
    cmd = [str(doccc), "run", str(lib), "-i", str(workdir / "x.npy"), "--expect", str(workdir / "ref.npy"),
           "--rtol", str(rtol), "--atol", str(atol), "--json"]
    cmd += ["--repeat", str(repeat)] if repeat else []
    cmd += ["--weights", str(weights)] if weights else []
    r = subprocess.run(cmd, capture_output=True, text=True, stdin=subprocess.DEVNULL)
    try:
        return json.loads(r.stdout)
    except ValueError:
        return {"error": f"exit {r.returncode}: {r.stderr.strip()[-1000:]}"}


MIB = 1 << 20


def fmt_mib(n):
    return f"{n / MIB:.0f} MiB"
