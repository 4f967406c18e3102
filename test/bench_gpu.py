"""make bench-gpu: latency of doccc's CUDA libraries on a GPU, next to PyTorch eager and torch.compile.

    python3 test/bench_gpu.py build [--models M,...] [--batches 1,32] [--no-gemm] [--no-check] [--dir D]
    python3 test/bench_gpu.py run   [--repeat N] [--warmup N] [--row-budget S] [--deadline S]
                                    [--json PATH] [--rtol R] [--atol A] [--dir D]
    python3 test/bench_gpu.py --simulate [--models gpt2] [--batches 1] [--compile] [--json PATH] [--dir D]

Models (fixed-seed random weights, full size):
  resnet18   torchvision's ResNet-18, 224x224 (examples/resnet18)
  vit_tiny   ViT-Tiny/16, 224x224: 12 blocks, width 192, 3 heads (models_zoo.make_vit_tiny)
  bert_base  a BERT encoder of BERT-base's shape (12 layers, hidden 768, 12 heads,
             intermediate 3072, vocabulary 30522) on 128 tokens, the last 28 padding
             (models_zoo.BertEncoder)
  gpt2       a GPT-2-small-style decoder (12 pre-norm blocks, width 768, 12 heads,
             causal SDPA, tanh GELU, vocabulary 50257, LM head tied to the token
             embedding) on 128 tokens: the logits (B, 128, 50257)
each at batch 1 and 32, and first, one GEMM (gemm_f16): an fp16 matmul module
a @ b with M = N = K = 8192, whose doccc rate is set against torch's fp16 and
bf16 matmul rates (the goal is at least 70% of torch's fp16 rate). --simulate's
small sizes: ResNet-18 on 32x32 crops, models_zoo's ViT-Tiny (4 blocks, 64x64),
BERT and GPT-2 of 2 layers, width 64, on 16 tokens, the GEMM at 64.

Why two stages. The H200 test machine is reached through the `run` device tool, which
carries the working tree and at most 64 MiB of ignored files; BERT-base (440 MB)
and GPT-2 (500 MB) do not fit, and weights built into a library or written to
NAME.weights (--external-weights) come out of doccc's passes (folded, repacked),
so Python could not recreate that file there. What does travel is small: each
model's program (the serialized ExportedProgram JSON, without weights) and doccc
itself with the shared libraries it loads (libzip, libyaml, libcjson, libsqlite3 and theirs;
glibc is the machine's own; doccc runs through the dynamic loader with
--library-path, so the nvcc and cc it starts keep the machine's libraries).
The weights are regenerated there by this script's own model code (the same
seeds and CPU generator, so they should be bit-identical to the ones exported
here: the report's weights_differ_from_build names every tensor whose sha256
differs; the comparisons use the regenerated ones either way) and written as
safetensors, and
doccc compiles there (`-t cuda -c server`: sm_90, nvcc 13 on that machine, the
weights' assembler file through DOCC_CC, which falls back to gcc or cc where
there is no clang). A compile takes seconds: nvcc's share is small next to
torch.compile's. The programs are exported here with torch 2.13, so the torch
2.11 on the machine only needs to run the models, not to export them.

  build  (here) exports every model at every batch to build/bench-gpu/programs/,
         compiles each here with -t cuda -c server as a check (unless --no-check;
         nvcc is needed then), copies build/doccc and its libraries to
         build/bench-gpu/{bin,lib}/, writes build/bench-gpu/manifest.json, and
         prints the device command (test/bench_gpu.sh with carry build/bench-gpu).
  run    (on the GPU machine) in two passes over the cases. Pass 1, case by case:
         regenerate the weights, compile with the carried doccc, load the library
         with ctypes through its `doccc_model` descriptor, time doccc's run on the
         data pointers of torch CUDA tensors, then torch eager (for the GEMM:
         torch's fp16 and bf16 matmul); all the compiles are started first, while
         the next cases' weights are made (compile_s is their wall time, side by
         side). Pass 2, over the same cases: torch.compile,
         mode "default" and "reduce-overhead" (which replays CUDA graphs), each
         in a try/except that records the reason when it fails. torch.compile's
         compiles are the slow part (tens of seconds each), so doccc and eager come
         first for every case, and nothing starts after --deadline S seconds
         (default 450, inside the device tool's 10 minutes): a skipped case or
         mode says so in the report. Everything runs on one CUDA stream, a
         torch.cuda.Stream made current and handed to the library's set_stream,
         so that its runs are asynchronous as torch's are (the default stream's
         handle is NULL, which set_stream takes for synchronous runs). Every
         number is the median (and minimum) over --repeat runs (fewer, at least
         3, when they would take more than --row-budget seconds) after --warmup
         runs, each run between a pair of CUDA events. Every run's outputs are
         compared with eager float32 (TF32 off): the largest absolute difference,
         and allclose at --rtol/--atol (the suite's 1e-4/1e-5 by default). Each
         case also records the kernels of one doccc run by kind (from --report).
         --models, --batches and --no-gemm choose among the built cases. The JSON
         report ($OUT/bench_gpu.json on the device machine, else
         build/bench-gpu.json, or --json) is rewritten after each step, so a run
         stopped at its time limit keeps what it measured.
  --simulate  the whole pipeline on this machine: build (small model sizes, no check
         compile), then run with `-t cuda --simulate` libraries (device memory
         through the library's device_alloc and device_copy), torch eager on the
         CPU and CPU timers; torch.compile (on the CPU) only with --compile.
         test/test_bench_gpu.py runs it on one model. Its times say nothing about
         a GPU. --dir D puts the pack in D (scratch in D-work, D-check).

Ratios are doccc's median over each torch median (> 1: doccc is slower).
Exit status 1 if a doccc compile, create or run failed (the report still holds the rest).
"""

import argparse
import contextlib
import ctypes
import hashlib
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))
BUILD = ROOT / os.environ.get("BUILD", "build")
DOCCC = Path(os.environ.get("DOCCC") or BUILD / "doccc")
PACK = ROOT / "build" / "bench-gpu"          # what travels (carry build/bench-gpu)
SIM_PACK = ROOT / "build" / "bench-gpu-sim"  # the --simulate stage's own
MODELS = ("resnet18", "vit_tiny", "bert_base", "gpt2")
GEMM = "gemm_f16"
GEMM_SIZE = {False: 8192, True: 64}          # full, small (--simulate)


# ---- the models ---------------------------------------------------------------------

def _bench_modules():
    import torch
    import torch.nn as nn
    import torch.nn.functional as F

    class GPT2Block(nn.Module):
        def __init__(self, dim, heads):
            super().__init__()
            self.heads = heads
            self.ln_1 = nn.LayerNorm(dim)
            self.c_attn = nn.Linear(dim, 3 * dim)
            self.attn_proj = nn.Linear(dim, dim)
            self.ln_2 = nn.LayerNorm(dim)
            self.c_fc = nn.Linear(dim, 4 * dim)
            self.mlp_proj = nn.Linear(4 * dim, dim)

        def forward(self, x):
            b, s, c = x.shape
            q, k, v = self.c_attn(self.ln_1(x)).split(c, dim=2)
            q, k, v = (t.view(b, s, self.heads, c // self.heads).transpose(1, 2) for t in (q, k, v))
            a = F.scaled_dot_product_attention(q, k, v, is_causal=True)
            x = x + self.attn_proj(a.transpose(1, 2).reshape(b, s, c))
            return x + self.mlp_proj(F.gelu(self.c_fc(self.ln_2(x)), approximate="tanh"))

    class GPT2(nn.Module):
        """GPT-2's layout (HF GPT2LMHeadModel, Linear for Conv1D): token and learned
        position embeddings, pre-norm blocks, final norm, logits through the token
        embedding's weight (tied)."""

        def __init__(self, vocab, ctx, dim, layers, heads):
            super().__init__()
            self.wte = nn.Embedding(vocab, dim)
            self.wpe = nn.Embedding(ctx, dim)
            self.register_buffer("position_ids", torch.arange(ctx).unsqueeze(0), persistent=False)
            self.blocks = nn.ModuleList(GPT2Block(dim, heads) for _ in range(layers))
            self.ln_f = nn.LayerNorm(dim)

        def forward(self, ids):
            x = self.wte(ids) + self.wpe(self.position_ids[:, :ids.shape[1]])
            for blk in self.blocks:
                x = blk(x)
            return F.linear(self.ln_f(x), self.wte.weight)

    class MatMul(nn.Module):
        """The GEMM as a module."""

        def forward(self, a, b):
            return a @ b

    return GPT2, MatMul


def _token_inputs(batch, seq, vocab, pad):
    """Fixed-seed token ids, token types and a 0/1 mask with `pad` padding tokens at the end."""
    import torch
    g = torch.Generator().manual_seed(1234 + batch)
    ids = torch.randint(1, vocab, (batch, seq), generator=g)
    types = torch.zeros(batch, seq, dtype=torch.int64)
    mask = torch.ones(batch, seq, dtype=torch.int64)
    if pad:
        mask[:, seq - pad:] = 0
        ids[:, seq - pad:] = 0
    return ids, types, mask


def make_gpt2(cfg):
    """The GPT-2-style decoder of config cfg (vocab, ctx, dim, layers, heads) with
    fixed-seed N(0, 0.02) weights and random LayerNorms, in eval mode (also
    test/bench_models.py's gpt2)."""
    import torch
    import models_zoo
    torch.manual_seed(0)
    model = _bench_modules()[0](**cfg)
    with torch.no_grad():
        for mod in model.modules():
            if isinstance(mod, (torch.nn.Linear, torch.nn.Embedding)):
                torch.nn.init.normal_(mod.weight, 0.0, 0.02)
    models_zoo._randomize_layernorm(model, torch.Generator().manual_seed(1))
    return model.eval()


def make_case(name, batch, small=False):
    """(model in eval mode, inputs) of a bench case on the CPU; small: the sizes --simulate uses."""
    import torch
    import models
    import models_zoo
    if name == "resnet18":
        model = models.make_model("resnet18")
        x = models.make_input("resnet18", batch)
        return model, (x[:, :, :32, :32].contiguous() if small else x,)
    if name == "vit_tiny":
        model, inputs = (models_zoo.make_vit_tiny() if small else
                         models_zoo.make_vit_tiny(depth=12, image=224, num_classes=1000))
        return model, inputs(batch)
    if name == "bert_base":
        torch.manual_seed(0)
        cfg = (dict(vocab=1000, hidden=64, layers=2, heads=2, inter=128, max_pos=64) if small else
               dict(vocab=30522, hidden=768, layers=12, heads=12, inter=3072, max_pos=512))
        model = models_zoo.BertEncoder(**cfg).eval()
        seq = 16 if small else 128
        return model, _token_inputs(batch, seq, cfg["vocab"], 4 if small else 28)
    if name == "gpt2":
        cfg = (dict(vocab=1000, ctx=64, dim=64, layers=2, heads=2) if small else
               dict(vocab=50257, ctx=1024, dim=768, layers=12, heads=12))
        seq = 16 if small else 128
        return make_gpt2(cfg), _token_inputs(batch, seq, cfg["vocab"], 0)[:1]
    if name == GEMM:
        n = GEMM_SIZE[small]
        g = torch.Generator().manual_seed(1234)
        return _bench_modules()[1]().eval(), tuple(torch.randn(n, n, generator=g).half() for _ in range(2))
    raise SystemExit(f"bench-gpu: unknown model '{name}' ({', '.join(MODELS + (GEMM,))})")


def module_tensors(model):
    """{FQN: tensor} of a module's parameters and buffers, persistent or not:
    what an export binds by name, recreated from the module alone."""
    out = dict(model.state_dict(keep_vars=False))
    out.update((n, b) for n, b in model.named_buffers())
    return {n: t.detach().contiguous() for n, t in out.items()}


def tensor_sha(t):
    import export
    return hashlib.sha256(export._tensor_bytes(t)).hexdigest()


# ---- build ----------------------------------------------------------------------------

def beside(pack, what):
    """A scratch folder next to the pack (never inside it: the pack is what travels)."""
    return pack.with_name(f"{pack.name}-{what}")


def case_name(model, batch):
    return model if model == GEMM else f"{model}_b{batch}"


def bundle_doccc(pack):
    """Copy doccc and the shared libraries it loads (all but glibc's) into pack/bin, pack/lib."""
    if not DOCCC.exists():
        sys.exit(f"bench-gpu: {DOCCC} does not exist; run `make` first")
    (pack / "bin").mkdir(parents=True, exist_ok=True)
    (pack / "lib").mkdir(parents=True, exist_ok=True)
    shutil.copy2(DOCCC, pack / "bin" / "doccc")
    glibc = ("linux-vdso", "ld-linux", "libc.so", "libm.so", "libdl.so", "libpthread.so", "librt.so")
    out = subprocess.run(["ldd", str(DOCCC)], capture_output=True, text=True, check=True).stdout
    for line in out.splitlines():
        parts = line.split("=>")
        if len(parts) != 2 or parts[0].strip().startswith(glibc):
            continue
        path = parts[1].split("(")[0].strip()
        if path and path != "not":
            shutil.copy2(os.path.realpath(path), pack / "lib" / parts[0].strip())


# The carried doccc runs through the dynamic loader with the carried libraries
# (--library-path applies to doccc alone, not to the nvcc and cc it starts,
# which keep the machine's own libraries).
INTERP = "/lib64/ld-linux-x86-64.so.2"


def doccc_argv(pack):
    if not Path(INTERP).exists():
        sys.exit(f"bench-gpu: {INTERP} does not exist: the carried doccc is an x86-64 Linux program")
    return [INTERP, "--library-path", str(pack / "lib"), str(pack / "bin" / "doccc")]


def doccc_env():
    """doccc's environment: DOCC_CC (which assembles weights.S) falls back to gcc or cc without clang."""
    env = dict(os.environ)
    if not env.get("DOCC_CC") and not shutil.which("clang"):
        cc = next((c for c in ("gcc", "cc") if shutil.which(c)), None)
        if cc:
            env["DOCC_CC"] = cc
    return env


class Compile:
    """doccc PROGRAM --weights W -t cuda ... -o OUTDIR/ --report OUTDIR.json,
    started in the background (its output in OUTDIR.log, not a pipe that a
    compiler's remarks could fill while another compile is waited for)."""

    def __init__(self, pack, name, program, weights, outdir, target_flags):
        self.lib, self.report, self.log = outdir / f"lib{name}.so", Path(f"{outdir}.json"), Path(f"{outdir}.log")
        self.t0 = time.perf_counter()
        with open(self.log, "w") as log:
            self.proc = subprocess.Popen([*doccc_argv(pack), str(program), "--weights", str(weights), *target_flags,
                                          "-n", name, "-o", f"{outdir}/", "--report", str(self.report)],
                                         stdout=log, stderr=subprocess.STDOUT, env=doccc_env())

    def result(self):
        """Wait: (library, seconds, error or None)."""
        rc = self.proc.wait()
        sec = time.perf_counter() - self.t0
        if rc != 0:
            return None, sec, f"compile: exit {rc}: {self.log.read_text().strip()[-1500:]}"
        return self.lib, sec, None


def compile_case(*args):
    """A Compile waited for: (library, seconds, error or None)."""
    return Compile(*args).result()


def build(args, pack, small):
    """Fill pack (through pack-new, renamed at the end: no half pack is left); True if a check failed."""
    final, pack = pack, beside(pack, "new")
    shutil.rmtree(pack, ignore_errors=True)
    try:
        failed = build_into(args, pack, beside(final, "check"), small)
    except BaseException:
        shutil.rmtree(pack, ignore_errors=True)
        raise
    shutil.rmtree(final, ignore_errors=True)
    pack.rename(final)
    size = sum(p.stat().st_size for p in final.rglob("*") if p.is_file())
    print(f"\nwrote {final}/ ({size / 2**20:.1f} MiB, the carry limit is 64 MiB)")
    return failed


def build_into(args, pack, check_dir, small):
    import torch
    import export
    from torch._export.serde.serialize import serialize
    (pack / "programs").mkdir(parents=True)
    bundle_doccc(pack)
    cases, failed = [], False
    names = ([GEMM] if args.gemm else []) + args.models.split(",")
    for model_name in names:
        for batch in ([1] if model_name == GEMM else [int(b) for b in args.batches.split(",")]):
            name = case_name(model_name, batch)
            model, inputs = make_case(model_name, batch, small)
            t0 = time.perf_counter()
            ep = export.export_program(model, inputs)
            program = pack / "programs" / f"{name}.json"
            program.write_bytes(serialize(ep).exported_program)
            tensors = export.program_tensors(ep)
            have = module_tensors(model)
            missing = sorted(set(tensors) - set(have))
            if missing:
                sys.exit(f"bench-gpu: {name}: the export binds {missing}, which the module does not hold; "
                         "the run stage could not recreate them")
            case = dict(name=name, model=model_name, batch=batch,
                        inputs=[dict(shape=list(t.shape), dtype=str(t.dtype)) for t in inputs],
                        weights={n: dict(shape=list(t.shape), dtype=str(t.dtype), sha256=tensor_sha(t))
                                 for n, t in sorted(tensors.items())},
                        weight_bytes=sum(t.numel() * t.element_size() for t in tensors.values()))
            print(f"  {name:<16} exported in {time.perf_counter() - t0:5.1f} s, "
                  f"program {program.stat().st_size / 1e6:6.2f} MB, weights {case['weight_bytes'] / 1e6:8.1f} MB",
                  flush=True)
            if args.check and not small:
                tmp = check_dir
                tmp.mkdir(parents=True, exist_ok=True)
                w = export.write_safetensors(tensors, tmp / f"{name}.safetensors")
                lib, sec, err = compile_case(pack, name, program, w, tmp / name, ["-t", "cuda", "-c", "server"])
                w.unlink()
                if not err:
                    resident = f"#define {name.upper()}_DEVICE_RESIDENT 1" in (tmp / name / f"{name}.h").read_text()
                    err = None if resident else "compiles for the host only (a step has no GPU expansion)"
                print(f"  {name:<16} " + (err if err else f"compiles for cuda/server in {sec:.1f} s"), flush=True)
                failed |= err is not None
                shutil.rmtree(tmp, ignore_errors=True)
            cases.append(case)
            del model, ep, tensors, have
    manifest = dict(small=small, cases=cases, torch_build=torch.__version__, doccc=doccc_version(pack))
    (pack / "manifest.json").write_text(json.dumps(manifest, indent=1) + "\n")
    return failed


def doccc_version(pack):
    r = subprocess.run([*doccc_argv(pack), "--version"], capture_output=True, text=True,
                       env=doccc_env())
    return r.stdout.strip() or r.stderr.strip()


# ---- the library through its descriptor (backends/doccc_model.h, abi 3) ------------------

class TensorDesc(ctypes.Structure):
    _fields_ = [("name", ctypes.c_char_p), ("dtype", ctypes.c_int), ("rank", ctypes.c_int),
                ("shape", ctypes.POINTER(ctypes.c_int64)), ("numel", ctypes.c_int64),
                ("nbytes", ctypes.c_size_t)]


_P = ctypes.c_void_p
_RUN = ctypes.CFUNCTYPE(ctypes.c_int, _P, ctypes.POINTER(_P), ctypes.POINTER(_P))


class ModelDesc(ctypes.Structure):
    _fields_ = [("abi_version", ctypes.c_int), ("name", ctypes.c_char_p), ("target", ctypes.c_char_p),
                ("category", ctypes.c_char_p), ("doccc_version", ctypes.c_char_p),
                ("input_hash", ctypes.c_char_p), ("ninputs", ctypes.c_int), ("noutputs", ctypes.c_int),
                ("inputs", ctypes.POINTER(TensorDesc)), ("outputs", ctypes.POINTER(TensorDesc)),
                ("workspace_size", ctypes.c_size_t), ("weights_embedded", ctypes.c_int),
                ("create", ctypes.CFUNCTYPE(ctypes.c_int, ctypes.POINTER(_P), ctypes.c_char_p)),
                ("run", _RUN), ("destroy", ctypes.CFUNCTYPE(None, _P)),
                ("strerror", ctypes.CFUNCTYPE(ctypes.c_char_p, ctypes.c_int)),
                ("set_num_threads", ctypes.CFUNCTYPE(ctypes.c_int, _P, ctypes.c_int)),
                ("device_resident", ctypes.c_int), ("device_backend", ctypes.c_char_p),
                ("simulated", ctypes.c_int), ("run_host", _RUN),
                ("set_stream", ctypes.CFUNCTYPE(ctypes.c_int, _P, _P)),
                ("sync", ctypes.CFUNCTYPE(ctypes.c_int, _P)),
                ("last_error", ctypes.CFUNCTYPE(ctypes.c_char_p, _P)),
                ("set_log", _P),
                ("device_alloc", ctypes.CFUNCTYPE(ctypes.c_int, ctypes.POINTER(_P), ctypes.c_size_t)),
                ("device_free", ctypes.CFUNCTYPE(ctypes.c_int, _P)),
                ("device_copy", ctypes.CFUNCTYPE(ctypes.c_int, _P, _P, ctypes.c_size_t, ctypes.c_int)),
                ("march", ctypes.c_char_p), ("options", ctypes.c_char_p), ("weights_size", ctypes.c_size_t),
                ("weights_sha256", ctypes.c_char_p), ("info", ctypes.c_char_p)]


DTYPES = ("float32", "float64", "float16", "bfloat16", "int64", "int32", "int16", "int8", "uint8", "bool")
COPY_TO_DEVICE, COPY_TO_HOST = 1, 2


class Library:
    """One doccc library, created; run(ins, outs) takes device pointers (ints)."""

    def __init__(self, path):
        self.dll = ctypes.CDLL(str(path))
        self.d = ModelDesc.in_dll(self.dll, "doccc_model")
        if self.d.abi_version < 2 or not self.d.device_resident:
            raise RuntimeError(f"{path}: not a device-resident library (abi {self.d.abi_version}, "
                               f"device_resident {self.d.device_resident if self.d.abi_version >= 2 else 0})")
        self.m = _P()
        self.check(self.d.create(ctypes.byref(self.m), None), "create", None)
        self.nin, self.nout = self.d.ninputs, self.d.noutputs

    def check(self, status, what, model=True):
        if status:
            msg = self.d.last_error(self.m if model else None)
            raise RuntimeError(f"{what}: {self.d.strerror(status).decode()}: {(msg or b'').decode()}")

    def outputs(self):
        """[(shape, dtype name)] of the outputs."""
        o = self.d.outputs
        return [(tuple(o[i].shape[k] for k in range(o[i].rank)), DTYPES[o[i].dtype]) for i in range(self.nout)]

    def set_stream(self, stream):
        self.check(self.d.set_stream(self.m, _P(stream)), "set_stream")

    def runner(self, ins, outs):
        """A call of run on these pointers, its argument arrays made once (not in the timed calls)."""
        run, m, i, o = self.d.run, self.m, (_P * self.nin)(*ins), (_P * self.nout)(*outs)

        def call():
            status = run(m, i, o)
            if status:
                self.check(status, "run")
        return call

    def sync(self):
        self.check(self.d.sync(self.m), "sync")

    def close(self):
        if self.m:
            self.d.destroy(self.m)
            self.m = _P()


class SimBuffers:
    """--simulate: device buffers through the library's own runtime, for torch CPU tensors."""

    def __init__(self, lib, inputs, out_tensors):
        self.lib, self.ptrs = lib, []
        for t in list(inputs) + list(out_tensors):
            p = _P()
            lib.check(lib.d.device_alloc(ctypes.byref(p), max(t.numel() * t.element_size(), 1)), "device_alloc")
            self.ptrs.append(p.value)
        for p, t in zip(self.ptrs, inputs):
            lib.check(lib.d.device_copy(_P(p), _P(t.data_ptr()), t.numel() * t.element_size(), COPY_TO_DEVICE),
                      "device_copy")
        self.ins, self.outs = self.ptrs[:len(inputs)], self.ptrs[len(inputs):]

    def fetch(self, out_tensors):
        for p, t in zip(self.outs, out_tensors):
            self.lib.check(self.lib.d.device_copy(_P(t.data_ptr()), _P(p), t.numel() * t.element_size(),
                                                  COPY_TO_HOST), "device_copy")

    def free(self):
        for p in self.ptrs:
            self.lib.d.device_free(_P(p))


# ---- timing -------------------------------------------------------------------------------

def measure(fn, args, gpu):
    """(median ms, min ms, runs) of fn(): each run between two CUDA events on the
    current stream (gpu), else by the CPU clock. The first warm-up run is timed
    alone, and a slow fn gets fewer runs (at least 3) and no more warm-ups, so
    that one row takes about --row-budget seconds."""
    import torch
    sync = torch.cuda.synchronize if gpu else (lambda: None)
    sync()
    t0 = time.perf_counter()
    fn()
    sync()
    once = time.perf_counter() - t0
    n = max(3, min(args.repeat, int(args.row_budget / max(once, 1e-9))))
    for _ in range(args.warmup - 1 if once * args.warmup < args.row_budget else 0):
        fn()
    if gpu:
        ev = [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)) for _ in range(n)]
        for start, end in ev:
            start.record()
            fn()
            end.record()
        sync()
        ms = [start.elapsed_time(end) for start, end in ev]
        return statistics.median(ms), min(ms), n
    from bench import time_torch     # make bench's CPU timer
    return (*time_torch(fn, (), n, 0), n)


def max_abs_diff(got, ref):
    """The largest |got - ref| over all outputs, in float64 (where they are: on the GPU)."""
    return max(float((g.detach().double() - r.double()).abs().max()) if r.numel() else 0.0
               for g, r in zip(got, ref))


def as_list(y):
    return list(y) if isinstance(y, (tuple, list)) else [y]


def write_safetensors_from(model, case, path):
    """The weights the program binds, from the regenerated module; {names that differ from the build}."""
    import export
    have = module_tensors(model)
    tensors = {n: have[n] for n in case["weights"]}
    export.write_safetensors(tensors, path)
    return sorted(n for n, t in tensors.items() if tensor_sha(t) != case["weights"][n]["sha256"])


# ---- run --------------------------------------------------------------------------------------

class Case:
    """One model at one batch on the run stage: its module and inputs where the
    run is, the eager float32 reference, and its entry of the report."""

    def __init__(self, args, case, small, sim):
        self.args, self.sim, self.gemm = args, sim, case["model"] == GEMM
        self.name = case["name"]
        self.entry = dict(name=self.name, model=case["model"], batch=case["batch"], results={}, ratios={})
        self.model, self.inputs = make_case(case["model"], case["batch"], small)

    def to_device(self):
        import torch
        dev = "cpu" if self.sim else "cuda"
        self.model = self.model.to(dev)
        self.inputs = tuple(t.to(dev).contiguous() for t in self.inputs)
        with torch.no_grad():
            # eager float32 (for the fp16 GEMM: the product of the same fp16 inputs in float32)
            ref = as_list(self.model(*[t.float() for t in self.inputs]) if self.gemm else self.model(*self.inputs))
            self.ref = [r.clone() for r in ref]
        self.entry["ref_max_abs"] = max(float(r.double().abs().max()) for r in self.ref)

    def add(self, label, fn, outputs=None, extra=None):
        """Time fn and record its row; outputs() (default: fn()) gives what is compared with eager."""
        import torch
        a = self.args
        median, best, n = measure(fn, a, gpu=not self.sim)
        row = dict(median_ms=median, min_ms=best, runs=n, **(extra or {}))
        got = outputs() if outputs else as_list(fn())
        row["max_abs_diff"] = max_abs_diff(got, self.ref)
        row["allclose"] = all(torch.allclose(g.detach().double(), r.double(), rtol=a.rtol, atol=a.atol)
                              for g, r in zip(got, self.ref))
        if self.gemm:
            row["tflops"] = 2.0 * self.inputs[0].shape[0] ** 3 / (median * 1e-3) / 1e12
        self.entry["results"][label] = row
        print(f"  {label:<30} median {median:9.3f} ms   min {best:9.3f} ms ({n:2} runs)   "
              f"max diff {row['max_abs_diff']:9.2e}"
              + (f"   {row['tflops']:7.1f} TFLOP/s" if self.gemm else ""), flush=True)

    def fail(self, label, msg):
        self.entry["results"][label] = dict(error=msg)
        print(f"  {label}: {msg}", flush=True)

    def failed(self, label, e):
        """Record an exception of torch as the row's result (its first line), not a crash."""
        lines = [line for line in f"{type(e).__name__}: {e}".splitlines() if line.strip()]
        self.fail(label, "failed: " + (lines[0][:500] if lines else type(e).__name__))


def start_compile(c, pack, work, case):
    """Pass 0 of a case: regenerate its weights and start its doccc compile."""
    c.weights = work / f"{c.name}.safetensors"
    differ = c.entry["weights_differ_from_build"] = write_safetensors_from(c.model, case, c.weights)
    if differ:
        print(f"  {c.name}: note: regenerated weights differ from the build's: {differ[:5]}"
              " (the program is the same; every comparison uses these weights)")
    flags = ["-t", "cuda", "--simulate"] if c.sim else ["-t", "cuda", "-c", "server"]
    c.compile = Compile(pack, c.name, pack / "programs" / f"{c.name}.json", c.weights, work / c.name, flags)


def bench_doccc(c):
    """Pass 1 of a case: wait for its compile, time doccc and torch eager. True if doccc failed."""
    import torch
    sim = c.sim
    lib_path, c.entry["compile_s"], err = c.compile.result()
    c.weights.unlink()
    if lib_path:    # the kernels of one run, by kind (tiled-fp32, tiled-fp16, block-cooperative, ...)
        rep = json.loads(c.compile.report.read_text())
        c.entry["gpu_kernels"] = dict(Counter(k["kind"] for k in rep.get("gpu_kernels", [])
                                              for _ in range(k.get("per_run", 1))))
        c.entry["gpu_launches_per_run"] = rep.get("gpu_launches_per_run")
    c.to_device()
    failed = err is not None
    if err:
        c.fail("doccc", err)
    else:
        lib, buf = None, None
        try:
            lib = Library(lib_path)
            outs = [torch.empty(s, dtype=getattr(torch, dt), device=c.inputs[0].device) for s, dt in lib.outputs()]
            if sim:
                buf = SimBuffers(lib, c.inputs, outs)
                ins_p, outs_p = buf.ins, buf.outs
            else:
                lib.set_stream(torch.cuda.current_stream().cuda_stream)
                ins_p, outs_p = [t.data_ptr() for t in c.inputs], [t.data_ptr() for t in outs]

            def fetch():
                lib.sync()
                if buf:
                    buf.fetch(outs)
                return outs
            c.add("doccc", lib.runner(ins_p, outs_p), fetch, dict(compile_s=round(c.entry["compile_s"], 2)))
        except (RuntimeError, OSError) as e:    # a status of the library, or a library that does not load
            failed = True
            c.fail("doccc", str(e)[-1500:])
        finally:
            if buf:
                buf.free()
            if lib:
                lib.close()
    if not c.gemm:
        rows = [("torch eager", lambda: c.model(*c.inputs))]
    else:   # the operands converted once, outside the timed calls
        ops = {dt: [t.to(dt) for t in c.inputs] for dt in (torch.float16, torch.bfloat16)}
        rows = [(f"torch matmul {str(dt)[6:]}", lambda x=x, y=y: x @ y) for dt, (x, y) in ops.items()]
    for label, fn in rows:
        try:
            with torch.no_grad():
                c.add(label, fn)
        except Exception as e:      # out of memory, say: a result too
            c.failed(label, e)
    ratios(c.entry)
    return failed


COMPILE_MODES = (("torch.compile default", "default"), ("torch.compile reduce-overhead", "reduce-overhead"))


def bench_compile(c, deadline):
    """Pass 2 of a case: torch.compile in each mode, unless past the deadline."""
    import torch
    for label, mode in COMPILE_MODES:
        if time.monotonic() > deadline:
            c.fail(label, f"skipped: past the --deadline of {c.args.deadline:g} s")
            continue
        try:
            torch._dynamo.reset()
            compiled = torch.compile(c.model, mode=mode)
            t0 = time.perf_counter()
            with torch.no_grad():
                for _ in range(3):     # reduce-overhead records its CUDA graph on a later call
                    compiled(*c.inputs)
                if not c.sim:
                    torch.cuda.synchronize()
                compile_s = time.perf_counter() - t0

                def call():
                    torch.compiler.cudagraph_mark_step_begin()
                    return compiled(*c.inputs)
                c.add(label, call, lambda: [t.clone() for t in as_list(call())], dict(compile_s=round(compile_s, 2)))
        except Exception as e:      # any failure of torch.compile is a result
            c.failed(label, e)
    torch._dynamo.reset()
    ratios(c.entry)


def ratios(entry):
    """doccc's median over every torch row's median (> 1: doccc is slower)."""
    res = entry["results"]
    d = res.get("doccc", {}).get("median_ms")
    entry["ratios"] = {f"doccc / {k}": d / r["median_ms"] for k, r in res.items()
                       if d and k != "doccc" and "median_ms" in r}
    if "tflops" in res.get("doccc", {}) and "median_ms" in res.get("torch matmul float16", {}):
        entry["doccc_fraction_of_torch_fp16"] = res["doccc"]["tflops"] / res["torch matmul float16"]["tflops"]
        entry["goal_fraction"] = 0.70


def print_table(report):
    print(f"\n{'case':<14}{'run':<31}{'median ms':>11}{'min ms':>11}{'doccc/this':>11}{'max diff':>10}")
    for e in report["cases"]:
        for k, r in e["results"].items():
            if "error" in r:
                print(f"{e['name']:<14}{k:<31}  {r['error'][:70]}")
                continue
            ratio = e["ratios"].get(f"doccc / {k}")
            ratio_text = f"{ratio:11.2f}" if ratio else " " * 11
            print(f"{e['name']:<14}{k:<31}{r['median_ms']:11.3f}{r['min_ms']:11.3f}"
                  f"{ratio_text}{r['max_abs_diff']:10.2e}")
        if "doccc_fraction_of_torch_fp16" in e:
            r = e["results"]
            bf16 = r.get("torch matmul bfloat16", {}).get("tflops")
            print(f"{e['name']:<14}doccc {r['doccc']['tflops']:.1f} TFLOP/s: "
                  f"{100 * e['doccc_fraction_of_torch_fp16']:.1f}% of torch's fp16 matmul, "
                  f"{r['torch matmul float16']['tflops']:.1f} TFLOP/s (goal {100 * e['goal_fraction']:.0f}%)"
                  + (f"; torch bf16 {bf16:.1f} TFLOP/s" if bf16 else ""))


def selected(args, manifest):
    """The manifest's cases that --models, --batches and --no-gemm leave."""
    models = args.models.split(",") if args.models else None
    batches = [int(b) for b in args.batches.split(",")] if args.batches else None
    return [c for c in manifest["cases"]
            if (c["model"] == GEMM and args.gemm) or
            (c["model"] != GEMM and (models is None or c["model"] in models) and
             (batches is None or c["batch"] in batches))]


def write_report(report, out):
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(report, indent=2) + "\n")


def run_cases(args, pack, work, manifest, sim, deadline, report, out):
    """Pass 1 (doccc and eager) over every case, then pass 2 (torch.compile)
    over them while the deadline allows; the report is rewritten after each step."""
    import torch
    failed, todo, cases = False, [], []
    print("regenerating the weights; the doccc compiles run meanwhile", flush=True)
    for case in selected(args, manifest):
        c = Case(args, case, manifest["small"], sim)
        start_compile(c, pack, work, case)
        todo.append(c)
    for c in todo:
        if time.monotonic() > deadline:
            c.compile.proc.kill()
            c.compile.proc.wait()
            c.weights.unlink()
            c.entry["skipped"] = f"past the --deadline of {args.deadline:g} s"
            report["cases"].append(c.entry)
            print(f"\n{c.name}: skipped, past the --deadline of {args.deadline:g} s", flush=True)
            continue
        print(f"\n{c.name}: up to {args.repeat} runs after {args.warmup} warm-up", flush=True)
        failed |= bench_doccc(c)
        report["cases"].append(c.entry)
        write_report(report, out)
        if not c.gemm and (not sim or args.compile):
            cases.append(c)
        else:
            c.model = c.inputs = c.ref = None
    for c in cases:
        print(f"\n{c.name}: torch.compile", flush=True)
        bench_compile(c, deadline)
        write_report(report, out)
        c.model = c.inputs = c.ref = None
        if not sim:
            torch.cuda.empty_cache()
    return failed


def run(args, pack, sim):
    import torch
    if not (pack / "manifest.json").exists():
        sys.exit(f"bench-gpu: {pack / 'manifest.json'} does not exist; run `{sys.argv[0]} build` first")
    manifest = json.loads((pack / "manifest.json").read_text())
    if not sim and not torch.cuda.is_available():
        sys.exit("bench-gpu: torch sees no CUDA GPU; the run stage is for the GPU machine (--simulate runs here)")
    if not sim:
        # eager float32 is the reference and the baseline: no TF32 anywhere
        torch.backends.cuda.matmul.allow_tf32 = False
        torch.backends.cudnn.allow_tf32 = False
    deadline = time.monotonic() + args.deadline
    out = Path(args.json) if args.json else (Path(os.environ["OUT"]) / "bench_gpu.json" if os.environ.get("OUT")
                                             else ROOT / "build" / ("bench-gpu-sim.json" if sim else "bench-gpu.json"))
    work = beside(pack, "work")
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    env = doccc_env()
    report = dict(simulate=sim, small=manifest["small"], repeat=args.repeat, warmup=args.warmup, cases=[],
                  torch=torch.__version__, torch_build=manifest["torch_build"], doccc=manifest["doccc"],
                  cc=env.get("DOCC_CC", "clang"), machine=platform.machine(), cores=os.cpu_count(),
                  gpu=None if sim else torch.cuda.get_device_name(), timer="cpu" if sim else "cuda events",
                  tf32=False)
    stream = torch.cuda.Stream() if not sim else None
    with (torch.cuda.stream(stream) if stream else contextlib.nullcontext()):
        failed = run_cases(args, pack, work, manifest, sim, deadline, report, out)
    print_table(report)
    write_report(report, out)
    print(f"\nwrote {out}")
    return failed


DEVICE_COMMAND = 'run(command="bash test/bench_gpu.sh", carry=["build/bench-gpu"], timeout_s=600)'


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("stage", nargs="?", choices=("build", "run"))
    ap.add_argument("--simulate", action="store_true", help="build small models and run them with -t cuda --simulate")
    ap.add_argument("--models", default=None, help=f"comma-separated, of {','.join(MODELS)}")
    ap.add_argument("--batches", default=None, help="comma-separated batch sizes (default 1,32; --simulate: 1)")
    ap.add_argument("--no-gemm", dest="gemm", action="store_false", help=f"leave out the {GEMM} case")
    ap.add_argument("--no-check", dest="check", action="store_false", help="build: no check compile here")
    ap.add_argument("--repeat", type=int, default=None, help="timed runs (default 20; --simulate: 3)")
    ap.add_argument("--warmup", type=int, default=None, help="warm-up runs (default 3; --simulate: 2)")
    ap.add_argument("--row-budget", type=float, default=15.0,
                    help="run: seconds one row's timed runs may take about (fewer runs, at least 3, if slow)")
    ap.add_argument("--deadline", type=float, default=450.0, help="run: start nothing after S seconds")
    ap.add_argument("--compile", action="store_true",
                    help="--simulate: run torch.compile on the CPU too (slow; the GPU run always does)")
    ap.add_argument("--json", default=None, help="run: the report's path")
    ap.add_argument("--dir", default=None, help="the pack's folder (default build/bench-gpu; --simulate: "
                    "build/bench-gpu-sim); scratch goes to DIR-work and DIR-check beside it")
    ap.add_argument("--rtol", type=float, default=1e-4, help="run: each row's allclose with eager (the suite's)")
    ap.add_argument("--atol", type=float, default=1e-5)
    args = ap.parse_args()
    sim = args.simulate
    if sim == (args.stage is not None):
        ap.error("give a stage (build or run) or --simulate (which does both here)")
    if args.stage != "run":             # run: the manifest's cases, or those --models, --batches name
        args.models = args.models or ("gpt2" if sim else ",".join(MODELS))
        args.batches = args.batches or ("1" if sim else "1,32")
    args.repeat = args.repeat or (3 if sim else 20)
    args.warmup = args.warmup if args.warmup is not None else (2 if sim else 3)

    pack = Path(args.dir).resolve() if args.dir else SIM_PACK if sim else PACK
    if sim:
        failed = build(args, pack, small=True) or run(args, pack, sim=True)
    elif args.stage == "build":
        failed = build(args, pack, small=False)
        print(f"\nOn the GPU machine (the device tool, from the repository root):\n    {DEVICE_COMMAND}")
    else:
        failed = run(args, pack, sim=False)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
