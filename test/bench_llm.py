"""make bench-llm: tokens/s of a 0.5 B Qwen2-shaped decoder: doccc, llama.cpp, torch eager, and the memory bound.

    python3 test/bench_llm.py [--quick] [--threads 1,2] [--precisions fp32,bf16,int8,int4]
                              [--gguf f32,f16,bf16,q8_0,q4_0] [--engines triad,llamacpp,torch,doccc]
                              [--prompt 128] [--gen 128] [--window W] [--repeat 3] [--warmup 1]
                              [--dir build/llmbench] [--json PATH] [--doccc-flags=FLAGS]

The model: Qwen2-0.5B's shape (hidden 896, 24 layers, 14 heads, 2 KV heads,
head dim 64, intermediate 4864, vocabulary 151936, embeddings tied to the LM
head, q/k/v biases, RMSNorm 1e-6, rope theta 1e6): 494 M parameters, 1.98 GB
of fp32. transformers' Qwen2ForCausalLM with its own random initialization
after torch.manual_seed(0) (the RMSNorm weights and biases random as well,
around 1 and 0), saved once with save_pretrained under --dir.
Why Qwen2 and not a Llama of the same size: it is a real, much-benchmarked
0.5 B shape, llama.cpp's qwen2 architecture takes HF's q/k layout as it is
(NEOX rope: no permutation of the weights to get wrong), and its vocabulary
is what modern small models have: the LM head (136 M parameters, 28 % of the
weights) is a large part of every decode step, which a 32 k Llama vocabulary
would hide. --quick: the same architecture, tiny (hidden 64, 2 layers,
vocabulary 1024), for smoke tests in seconds.

Each repetition: a prefill of --prompt tokens (pseudo-random ids) at
positions 0.., then --gen decode steps at positions --prompt.., at 1 and 2
threads (--threads); medians of --repeat repetitions after --warmup ones
(torch and doccc: a warm-up is the prefill and 8 decode steps; llama-bench
does its own warm-up run).

  triad     test/bench_triad.c (clang -O3 -march=native -fopenmp, compiled
            once): STREAM's triad and a read-only sum, best and median GB/s.
  llamacpp  llama.cpp's llama-bench (built by test/llamacpp.sh from the
            llama-cpp-python sdist) on GGUFs written from the SAME weights by
            llama.cpp's own gguf-py: F32, F16 and BF16 directly (BF16 the bits
            torch's own rounding gives), Q8_0 and Q4_0 by llama-quantize from
            the F32 file; 1-D tensors (norms, biases) stay F32 as llama.cpp's converter
            leaves them. The tokenizer is llama.cpp's "none" vocabulary of
            vocab_size dummy tokens (llama-bench feeds random ids). Each GGUF is
            first checked against torch eager (test/llamacpp_greedy.c: 8 prompt
            ids, 8 greedy tokens, no flash attention, fp32 KV cache): the
            prompt's last logits must agree within 2e-4 (F32: the check of the
            tensor mapping), 1 % (F16) or 5 % (BF16, Q8_0) of the largest
            logit, else the run fails. Prefill:
            `-p PROMPT -n 0`; decode: `-p 0 -n GEN -d PROMPT` (the decode steps
            at the same cache depth as the other engines').
  torch     eager PyTorch with the module transformers exports for a static
            cache (TorchExportableModuleForDecoderOnlyLM(model, batch_size=1,
            max_cache_len=PROMPT+GEN); its inner TorchExportableModuleWithStaticCache,
            which is what its .export() exports: the outer forward of
            transformers 5.x drops cache_position), torch.set_num_threads(T),
            inference_mode; fp32 and bf16 weights (the fp32 ones rounded), and
            int8 and int4 weights: torchao's quantize_ with
            IntxWeightOnlyConfig (int8 per output channel; int4 in groups of 32,
            symmetric), on every linear layer (the LM head too: untied from the
            fp32 embedding table).
  doccc     the same module exported (torch.export, its seq dim dynamic up to
            PROMPT+GEN), compiled by doccc (-t openmp, the host's category,
            --march native, external weights) and run by the C driver
            test/bench_llm_driver.c (its comment is the library interface it
            expects: the KV cache is the instance's state, doccc's ABI 5); int8
            and int4 export torchao's model and save its Core ATen form (the
            weights are tensor subclasses). Its
            first 16 greedy tokens are compared with eager's (reported, not a
            failure: random weights have near ties). When the export or the
            compile fails the row says "pending" and why.

Every engine's next decode token is the argmax of the last logits (llama-bench
feeds random ids; the cost is the same). torch's and doccc's prefill returns
the logits of all PROMPT positions (the export's output), llama.cpp's only the
last one's: at this vocabulary that is 128 x 136 M multiply-adds more for them
(about 20 % of the prefill's work).

The table: engine, weights, threads, prefill tok/s, decode tok/s, decode GB/s
(bytes of weights read per decode token / time per token: every weight
except the embedding table, which is read once as the tied LM head; the KV
cache, at most a few MB a token, is left out), % of the triad's best at that
thread count, MB of weights per token. The "bound" rows are the decode tok/s
the triad's best would allow: bandwidth / bytes per token.

Writes everything to build/bench-llm.json (--quick: build/bench-llm-quick.json).
Exit status 1 when triad, llama.cpp or torch failed; doccc "pending" is not
a failure. Disk: about 7 GB under --dir at full size (the fp32 safetensors,
the four GGUFs; the doccc exports and weights add 3 GB once they compile).
"""

import argparse
import gc
import json
import os
import platform
import re
import shlex
import statistics
import subprocess
import sys
import time
from pathlib import Path

import hostcpu

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
BUILD = ROOT / os.environ.get("BUILD", "build")
DOCCC = Path(os.environ.get("DOCCC") or BUILD / "doccc")

FULL = dict(name="qwen2-0.5b", vocab_size=151936, hidden_size=896, intermediate_size=4864,
            num_hidden_layers=24, num_attention_heads=14, num_key_value_heads=2,
            max_position_embeddings=32768, rope_theta=1000000.0, rms_norm_eps=1e-6,
            tie_word_embeddings=True)
QUICK = dict(FULL, name="qwen2-tiny", vocab_size=1024, hidden_size=64, intermediate_size=256,
             num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2,
             max_position_embeddings=4096)

GGUF_TYPES = ("f32", "f16", "bf16", "q8_0", "q4_0")
PRECISIONS = ("fp32", "bf16", "int8", "int4")
INIT = 2  # the checkpoint's initialization (a new number makes it again)
# The check of the GGUFs: greedy tokens from CHECK_PROMPT ids, and the largest
# logit difference allowed, relative to the largest logit. F32 is the check of
# the tensors' names, layout and hyperparameters: llama.cpp without flash
# attention and torch then agree within 1e-6 here, where a dropped q bias of
# one layer is 6e-4 off and rope theta 1e4 for 1e6 is 6e-4 off (the tiny model);
# the others check that the format is read as written (f16 rounding, bf16
# activations in torch, Q8_0's quantization).
CHECK_PROMPT, CHECK_GEN = 8, 8
# Q4_0: 4-bit weights of a random initialization, through 24 layers, move the
# logits by about half of the largest (0.45 measured on the 0.5 B model, 8 of 8
# greedy tokens parting); a misread format gives noise beyond the largest logit.
CHECK_TOL = {"f32": 2e-4, "f16": 0.01, "bf16": 0.05, "q8_0": 0.05, "q4_0": 0.75}


def log(msg):
    print(f"bench_llm: {msg}", file=sys.stderr, flush=True)


def run(cmd, **kw):
    """subprocess.run with the command printed; text output captured."""
    log("+ " + " ".join(str(c) for c in cmd))
    return subprocess.run([str(c) for c in cmd], capture_output=True, text=True, **kw)


WINDOW = None  # --window: the static cache's length (default prompt + gen)


def cache_len(prompt, gen):
    return WINDOW or prompt + gen


def median(xs):
    return statistics.median(xs) if xs else None


# ---------------------------------------------------------------- the model

def model_config(spec):
    from transformers import Qwen2Config
    kw = {k: v for k, v in spec.items() if k not in ("name", "rope_theta")}
    cfg = Qwen2Config(**kw, use_sliding_window=False, use_cache=True)
    # transformers 5 keeps rope theta in rope_parameters, 4.x as rope_theta
    if getattr(cfg, "rope_parameters", None) is not None:
        cfg.rope_parameters = dict(cfg.rope_parameters, rope_theta=spec["rope_theta"])
    else:
        cfg.rope_theta = spec["rope_theta"]
    return cfg


def rope_theta(cfg):
    rp = getattr(cfg, "rope_parameters", None)
    return float(rp["rope_theta"] if rp else cfg.rope_theta)


def ensure_model(spec, mdir):
    """The HF checkpoint (fp32 safetensors) under mdir/hf, made once: (path, config)."""
    hf = mdir / "hf"
    stamp = hf / "bench_llm.json"
    want = json.dumps(dict(spec, init=INIT), sort_keys=True)
    if stamp.exists() and stamp.read_text() == want:
        from transformers import AutoConfig
        return hf, AutoConfig.from_pretrained(hf)
    import torch
    from transformers import Qwen2ForCausalLM
    log(f"building {spec['name']} (random weights, torch.manual_seed(0)) into {hf}")
    t0 = time.time()
    torch.manual_seed(0)
    cfg = model_config(spec)
    model = Qwen2ForCausalLM(cfg).eval()
    # transformers starts RMSNorm weights at 1 and biases at 0: make them random
    # too, so that the GGUF check below sees a misplaced norm or bias
    with torch.no_grad():
        for n, p in model.named_parameters():
            if p.dim() == 1:
                p.copy_(1 + 0.1 * torch.randn_like(p) if "norm" in n else 0.02 * torch.randn_like(p))
    hf.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(hf)
    stamp.write_text(want)
    n = sum(p.numel() for p in model.parameters())
    log(f"{n / 1e6:.1f} M parameters, saved in {time.time() - t0:.1f} s")
    del model
    gc.collect()
    return hf, cfg


def load_state(hf):
    """{name: fp32 tensor} of the saved checkpoint."""
    from safetensors.torch import load_file
    sd = {}
    for f in sorted(hf.glob("*.safetensors")):
        sd.update(load_file(f))
    return sd


def weight_bytes(shapes_bytes, tied):
    """Bytes read per decode token: every tensor but the embedding table, which is read
    once when it is also the LM head (tied) and not at all (one row) when it is not."""
    total = sum(b for name, b in shapes_bytes if "embed" not in name or tied)
    return total


# ---------------------------------------------------------------- llama.cpp

def ensure_llamacpp():
    """Run test/llamacpp.sh (idempotent): the llama.cpp directory, or None and the reason."""
    r = subprocess.run(["sh", str(HERE / "llamacpp.sh")], stdout=subprocess.PIPE, text=True,
                       env=dict(os.environ, PYTHON=sys.executable))
    if r.returncode != 0:
        return None, "test/llamacpp.sh failed (see above)"
    return Path(r.stdout.strip().splitlines()[-1]), None


def import_gguf(lcpp):
    sys.path.insert(0, str(lcpp / "src" / "gguf-py"))
    import gguf
    return gguf


def write_gguf(gguf, sd, cfg, name, path, kind):
    """A GGUF of arch qwen2 with the checkpoint's tensors: 2-D ones as kind
    (f32, f16, bf16), 1-D ones (norms, biases) f32."""
    import torch
    qt = gguf.GGMLQuantizationType
    ftype = {"f32": gguf.LlamaFileType.ALL_F32, "f16": gguf.LlamaFileType.MOSTLY_F16,
             "bf16": gguf.LlamaFileType.MOSTLY_BF16}[kind]
    tmap = gguf.get_tensor_name_map(gguf.MODEL_ARCH.QWEN2, cfg.num_hidden_layers)
    w = gguf.GGUFWriter(str(path) + ".tmp", "qwen2")
    w.add_name(name)
    w.add_context_length(cfg.max_position_embeddings)
    w.add_embedding_length(cfg.hidden_size)
    w.add_block_count(cfg.num_hidden_layers)
    w.add_feed_forward_length(cfg.intermediate_size)
    w.add_head_count(cfg.num_attention_heads)
    w.add_head_count_kv(cfg.num_key_value_heads)
    w.add_rope_freq_base(rope_theta(cfg))
    w.add_layer_norm_rms_eps(cfg.rms_norm_eps)
    w.add_file_type(ftype)
    w.add_vocab_size(cfg.vocab_size)
    w.add_tokenizer_model("none")   # llama.cpp: vocab_size dummy tokens, no tokenizer
    for hf_name, t in sd.items():
        if hf_name == "lm_head.weight" and cfg.tie_word_embeddings:
            continue
        new = tmap.get_name(hf_name, try_suffixes=(".weight", ".bias"))
        if new is None:
            raise RuntimeError(f"no GGUF name for {hf_name}")
        t = t.float().contiguous()
        if t.dim() == 1 or kind == "f32":
            w.add_tensor(new, t.numpy())
        elif kind == "f16":
            w.add_tensor(new, t.to(torch.float16).numpy())
        else:  # bf16: torch's rounding, the bits the torch bf16 rows use
            bits = t.to(torch.bfloat16).view(torch.int16).numpy().view("uint8")
            w.add_tensor(new, bits.reshape(*t.shape[:-1], -1), raw_dtype=qt.BF16)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    os.replace(str(path) + ".tmp", path)


def ensure_ggufs(gguf, lcpp, hf, cfg, spec, mdir, kinds):
    """{kind: path} of the GGUFs, written when missing (or older than the checkpoint)."""
    gdir = mdir / "gguf"
    gdir.mkdir(parents=True, exist_ok=True)
    paths = {k: gdir / f"{spec['name']}-{k}.gguf" for k in GGUF_TYPES}
    src_time = (hf / "bench_llm.json").stat().st_mtime
    fresh = {k: p.exists() and p.stat().st_mtime >= src_time for k, p in paths.items()}
    need = [k for k in kinds if not fresh[k]]
    if ("q8_0" in need or "q4_0" in need) and not fresh["f32"]:
        need.append("f32")
    sd = None
    for k in ("f32", "f16", "bf16"):
        if k in need:
            if sd is None:
                sd = load_state(hf)
            log(f"writing {paths[k]}")
            write_gguf(gguf, sd, cfg, spec["name"], paths[k], k)
    del sd
    gc.collect()
    for q in ("q8_0", "q4_0"):
        if q in need:
            r = run([lcpp / "bin" / "llama-quantize", paths["f32"], str(paths[q]) + ".tmp", q.upper(), "2"])
            if r.returncode != 0:
                raise RuntimeError("llama-quantize failed: " + (r.stderr or r.stdout)[-2000:])
            os.replace(str(paths[q]) + ".tmp", paths[q])
    return {k: paths[k] for k in kinds}


def gguf_weight_bytes(gguf, path):
    rd = gguf.GGUFReader(str(path))
    names = {t.name for t in rd.tensors}
    tied = "output.weight" not in names
    return weight_bytes([(t.name.replace("token_embd", "embed"), int(t.n_bytes)) for t in rd.tensors], tied)


def greedy_torch(mod, ids, gen):
    """(logits of the prompt's last position, gen greedy tokens) through the static-cache module."""
    import torch
    with torch.inference_mode():
        y = mod(input_ids=ids, cache_position=torch.arange(ids.shape[1]))
        first = y[0, -1].float().numpy()
        nxt, toks = y[0, -1].argmax(), []
        for g in range(gen):
            toks.append(int(nxt))
            y = mod(input_ids=nxt.view(1, 1), cache_position=torch.tensor([ids.shape[1] + g]))
            nxt = y[0, -1].argmax()
    return first, toks


def check_ggufs(lcpp, paths, hf, cfg):
    """{kind: dict(rel_err, tokens_equal, ok)}: llama.cpp (llamacpp_greedy) against torch
    eager on the same prompt, fp32 weights for F32, F16 and Q8_0, bf16 ones for BF16."""
    import numpy as np
    exe = lcpp / "bin" / "llamacpp_greedy"
    ids = prompt_ids(cfg.vocab_size, CHECK_PROMPT)
    res = {}
    for prec, kinds in (("fp32", ("f32", "f16", "q8_0", "q4_0")), ("bf16", ("bf16",))):
        kinds = [k for k in kinds if k in paths]
        if not kinds:
            continue
        model, _, mod = load_static_cache_module(hf, prec, CHECK_PROMPT + CHECK_GEN)
        ref, ref_toks = greedy_torch(mod, ids, CHECK_GEN)
        del model, mod
        gc.collect()
        for k in kinds:
            r = run([exe, paths[k], CHECK_GEN, ",".join(map(str, ids[0].tolist()))])
            if r.returncode != 0:
                raise RuntimeError(f"llamacpp_greedy failed on {paths[k]}: {r.stderr[-2000:]}")
            lines = dict(ln.split(" ", 1) for ln in r.stdout.splitlines() if " " in ln)
            lg = np.array(lines["logits"].split(), dtype=np.float32)
            toks = [int(t) for t in lines["tokens"].split()]
            rel = float(np.abs(lg - ref).max() / np.abs(ref).max())
            res[k] = dict(rel_err=rel, tokens_equal=sum(a == b for a, b in zip(toks, ref_toks)),
                          tokens=len(ref_toks), ok=rel <= CHECK_TOL[k], against=prec)
    return res


def llama_bench(lcpp, path, threads, prompt, gen, repeat):
    """{threads: (prefill tok/s, decode tok/s)} medians of llama-bench's samples."""
    exe = lcpp / "bin" / "llama-bench"
    t = ",".join(map(str, threads))
    out = {n: [None, None] for n in threads}
    for col, extra in ((0, ["-p", prompt, "-n", 0]), (1, ["-p", 0, "-n", gen, "-d", prompt])):
        r = run([exe, "-m", path, "-t", t, "-r", repeat, "-o", "json", *extra])
        if r.returncode != 0:
            raise RuntimeError(f"llama-bench failed ({r.returncode}): " + (r.stderr or r.stdout)[-2000:])
        for e in json.loads(r.stdout):
            ts = e.get("samples_ts") or [e["avg_ts"]]
            out[int(e["n_threads"])][col] = median(ts)
    return out


# ---------------------------------------------------------------- torch and doccc

def load_static_cache_module(hf, precision, max_cache_len):
    """(model, the static-cache module) in precision: transformers' export recipe."""
    import torch
    from transformers import AutoModelForCausalLM
    from transformers.integrations.executorch import TorchExportableModuleForDecoderOnlyLM
    dtype = {"bf16": torch.bfloat16}.get(precision, torch.float32)
    try:
        model = AutoModelForCausalLM.from_pretrained(hf, dtype=dtype)
    except TypeError:  # transformers 4.x
        model = AutoModelForCausalLM.from_pretrained(hf, torch_dtype=dtype)
    model.eval()
    if precision in ("int8", "int4"):
        quantize_weights(model, precision)
    model.generation_config.cache_implementation = "static"
    wrapper = TorchExportableModuleForDecoderOnlyLM(model, batch_size=1, max_cache_len=max_cache_len)
    # the inner TorchExportableModuleWithStaticCache: what wrapper.export() exports
    return model, wrapper, wrapper.model


def quantize_weights(model, precision):
    """torchao weight-only quantization of every linear layer: int8 per output
    channel, int4 in groups of 32 (symmetric); the LM head gets its own copy
    of the tied embedding table first, which stays fp32."""
    import torch
    from torchao.quantization import IntxWeightOnlyConfig, quantize_
    from torchao.quantization.granularity import PerAxis, PerGroup
    if model.lm_head.weight is model.model.embed_tokens.weight:
        model.lm_head.weight = torch.nn.Parameter(model.lm_head.weight.detach().clone())
    cfg = (IntxWeightOnlyConfig(weight_dtype=torch.int8, granularity=PerAxis(0)) if precision == "int8" else
           IntxWeightOnlyConfig(weight_dtype=torch.int4, granularity=PerGroup(32)))
    quantize_(model, cfg)


def prompt_ids(vocab, prompt):
    import torch
    g = torch.Generator().manual_seed(0)
    return torch.randint(0, vocab, (1, prompt), generator=g)


def torch_bench(hf, cfg, precision, threads, prompt, gen, repeat, warmup):
    """{threads: (prefill tok/s, decode tok/s)}, and the bytes of weights per token."""
    import torch
    model, _, mod = load_static_cache_module(hf, precision, cache_len(prompt, gen))
    wb = param_bytes(cfg, precision, json.loads((MDIR / "params.json").read_text()))
    ids = prompt_ids(cfg.vocab_size, prompt)
    pos = torch.arange(prompt)
    out = {}
    saved = torch.get_num_threads()
    with torch.inference_mode():
        for t in threads:
            torch.set_num_threads(t)
            pre, dec = [], []
            for r in range(-warmup, repeat):
                t0 = time.perf_counter()
                logits = mod(input_ids=ids, cache_position=pos)
                nxt = logits[0, -1].argmax()
                t1 = time.perf_counter()
                for g in range(gen if r >= 0 else min(gen, 8)):  # warm-up: 8 decode steps
                    logits = mod(input_ids=nxt.view(1, 1), cache_position=torch.tensor([prompt + g]))
                    nxt = logits[0, -1].argmax()
                t2 = time.perf_counter()
                if r >= 0:
                    pre.append(t1 - t0)
                    dec.append(t2 - t1)
            out[t] = (prompt / median(pre), gen / median(dec) if gen else None)
            log(f"torch {precision} {t} threads: prefill {out[t][0]:.1f} tok/s, decode {out[t][1]:.2f} tok/s")
    torch.set_num_threads(saved)
    del model, mod
    gc.collect()
    return out, wb


MDIR = None  # the model's cache directory (main)


def param_bytes(cfg, precision, params):
    """Bytes of weights a decode token reads: float32 or bfloat16 everywhere;
    int8 and int4 (stored as int8): one byte per weight of a linear layer
    (the LM head included, untied) plus a float32 scale per column, or per
    group of 32 (int4); the norms, biases and the embedding table (one row
    read) stay float32."""
    if precision in ("fp32", "bf16"):
        return weight_bytes([(k, n * (4 if precision == "fp32" else 2)) for k, n in params.items()],
                            cfg.tie_word_embeddings)
    g = 32 if precision == "int4" else None

    def linear(n, fan_in):  # a byte per weight, a float32 scale per group or per row
        return n + 4 * (n // g if g else n // fan_in)

    total = 0
    for k, n in params.items():
        if k.endswith("_proj.weight"):
            total += linear(n, cfg.intermediate_size if "down_proj" in k else cfg.hidden_size)
        elif "embed" in k:
            total += linear(n, cfg.hidden_size)  # the LM head's quantized copy (the table: one row)
        else:
            total += 4 * n  # norms and biases
    return total


def doccc_category():
    return "server" if hostcpu.runs_category("server") else "desktop"


def first_error(text):
    lines = [ln for ln in text.splitlines() if ln.strip()]
    for ln in lines:
        if "error" in ln.lower():
            return ln.strip()
    return lines[-1].strip() if lines else "no output"


def doccc_bench(hf, cfg, spec, mdir, precision, threads, prompt, gen, repeat, warmup, flags=()):
    """{threads: (prefill tok/s, decode tok/s)}, bytes per token, and None; or None,
    bytes, and the reason it is pending.

    THE DOCCC HOOK: export (cached in mdir/doccc/PRECISION/model.pt2), doccc,
    then test/bench_llm_driver.c on the library (its header comment says what
    it expects of the library's inputs, outputs and state)."""
    import torch
    ddir = mdir / "doccc" / (precision if WINDOW is None else f"{precision}-window{WINDOW}")
    ddir.mkdir(parents=True, exist_ok=True)
    pt2 = ddir / "model.pt2"
    wb = param_bytes(cfg, precision, json.loads((mdir / "params.json").read_text()))
    if not DOCCC.exists():
        return None, wb, f"no {DOCCC} (make all)"
    stamp = ddir / "export.json"
    key = json.dumps(dict(spec, init=INIT, prompt=prompt, gen=gen, window=cache_len(prompt, gen), torch=torch.__version__),
                     sort_keys=True)
    if not (pt2.exists() and stamp.exists() and stamp.read_text() == key):
        log(f"exporting the static-cache module ({precision}) to {pt2}")
        t0 = time.time()
        try:
            model, wrapper, _ = load_static_cache_module(hf, precision, cache_len(prompt, gen))
            seq = torch.export.Dim("seq", max=prompt + gen)
            ids = prompt_ids(cfg.vocab_size, prompt)
            ep = wrapper.export(input_ids=ids, cache_position=torch.arange(prompt),
                                dynamic_shapes={"input_ids": {1: seq}, "cache_position": {0: seq}})
            if precision in ("int8", "int4"):  # torchao's tensor subclasses: the Core ATen form
                ep = ep.run_decompositions()
            torch.export.save(ep, pt2)
            stamp.write_text(key)
            del model, wrapper, ep
            gc.collect()
        except Exception as e:  # noqa: BLE001 - the row says why
            return None, wb, f"export failed: {type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"
        log(f"exported in {time.time() - t0:.1f} s")
    name = f"llm_{precision}"
    lib = ddir / f"lib{name}.so"
    r = run([DOCCC, pt2, "-t", "openmp", "-c", doccc_category(), "--march", "native", "-n", name,
             "--external-weights", *flags, "-o", f"{ddir}/"])
    if r.returncode != 0:
        return None, wb, "doccc: " + first_error(r.stderr + r.stdout).replace(f"{pt2}: ", "")
    driver = BUILD / "llmbench" / "bench_llm_driver"
    try:
        build_driver(driver)
    except RuntimeError as e:
        return None, wb, str(e)
    out = {}
    ids = prompt_ids(cfg.vocab_size, prompt)
    for t in threads:
        r = run([driver, lib, "--ids", ",".join(map(str, ids[0].tolist())), "--gen", gen, "--threads", t,
                 "--repeat", repeat, "--warmup", warmup])
        m = re.search(r"median prefill_ms ([0-9.]+) decode_ms ([0-9.]+)", r.stdout)
        if r.returncode != 0 or not m:
            return None, wb, f"driver: {first_error(r.stderr + r.stdout)}"
        print(r.stdout.splitlines()[0])
        pre, dec = float(m.group(1)), float(m.group(2))
        out[t] = (prompt / (pre * 1e-3), gen / (dec * 1e-3) if gen else None)
        toks = [int(x) for x in re.search(r"^tokens(.*)$", r.stdout, re.M).group(1).split()]
    # the library's greedy tokens (the driver prints the first 16) against eager's
    model, _, mod = load_static_cache_module(hf, precision, cache_len(prompt, gen))
    _, ref = greedy_torch(mod, ids, len(toks))
    del model, mod
    gc.collect()
    same = sum(a == b for a, b in zip(toks, ref))
    print(f"check: doccc {precision} against torch {precision}: {same} of {len(ref)} greedy tokens the same"
          f"{'' if same == len(ref) else ' (random weights: near ties may part them)'}")
    return out, wb, None


def build_driver(exe):
    """Compile test/bench_llm_driver.c to exe (when missing or older than the source)."""
    src = HERE / "bench_llm_driver.c"
    if not exe.exists() or exe.stat().st_mtime < src.stat().st_mtime:
        exe.parent.mkdir(parents=True, exist_ok=True)
        r = run(["cc", "-O2", "-std=c11", "-D_GNU_SOURCE", "-I", ROOT / "backends", src, "-ldl", "-o", exe])
        if r.returncode != 0:
            raise RuntimeError(f"driver build failed: {first_error(r.stderr)}")
    return exe


# ---------------------------------------------------------------- triad

def build_triad(exe):
    """Compile test/bench_triad.c to exe (when missing or older than the source)."""
    src = HERE / "bench_triad.c"
    if not exe.exists() or exe.stat().st_mtime < src.stat().st_mtime:
        exe.parent.mkdir(parents=True, exist_ok=True)
        r = run(["clang", "-O3", "-march=native", "-fopenmp", src, "-o", exe])
        if r.returncode != 0:
            raise RuntimeError("bench_triad build failed: " + r.stderr[-2000:])
    return exe


def triad(exe, threads, *flags):
    """{threads: {"triad"|"read": {"median", "best"}}} in GB/s, and bench_triad's output."""
    r = run([exe, *flags, *threads])
    if r.returncode != 0:
        raise RuntimeError("bench_triad failed: " + r.stderr[-2000:])
    res = {}
    for m in re.finditer(r"(triad|read) (\d+) threads: median ([0-9.]+) GB/s, best ([0-9.]+) GB/s", r.stdout):
        res.setdefault(int(m.group(2)), {})[m.group(1)] = dict(median=float(m.group(3)), best=float(m.group(4)))
    return res, r.stdout


# ---------------------------------------------------------------- the table

def fmt(x, spec):
    return "-" if x is None else format(x, spec)


def print_table(rows, bw, prompt, gen):
    cols = ("engine", "weights", "thr", "prefill tok/s", "decode tok/s", "decode GB/s", "% triad", "MB/token", "note")
    lines = []
    for r in rows:
        tb = bw.get(r["threads"], {}).get("triad", {}).get("best")
        gbs = r["decode"] * r["bytes"] / 1e9 if r.get("decode") and r.get("bytes") else None
        r["decode_gbs"] = gbs
        r["pct_triad"] = 100 * gbs / tb if gbs and tb else None
        lines.append((r["engine"], r["weights"], str(r["threads"]), fmt(r.get("prefill"), ".1f"),
                      fmt(r.get("decode"), ".2f"), fmt(gbs, ".2f"), fmt(r["pct_triad"], ".0f"),
                      fmt(r["bytes"] / 1e6 if r.get("bytes") else None, ".1f"), r.get("note", "")))
    w = [max(len(c), *(len(ln[i]) for ln in lines)) if lines else len(c) for i, c in enumerate(cols)]
    print(f"\nprefill {prompt} tokens, then decode {gen} tokens (tok/s: medians)")
    print("  ".join(c.ljust(w[i]) if i < 2 or i == 8 else c.rjust(w[i]) for i, c in enumerate(cols)).rstrip())
    prev = None
    for ln in lines:
        if prev is not None and ln[2] != prev:
            print()
        prev = ln[2]
        print("  ".join(c.ljust(w[i]) if i < 2 or i == 8 else c.rjust(w[i]) for i, c in enumerate(ln)).rstrip())


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="a tiny model of the same architecture (smoke test)")
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--precisions", default=",".join(PRECISIONS), help="torch and doccc weights")
    ap.add_argument("--gguf", default=",".join(GGUF_TYPES), help="llama.cpp weights")
    ap.add_argument("--engines", default="triad,llamacpp,torch,doccc")
    ap.add_argument("--prompt", type=int, default=128)
    ap.add_argument("--gen", type=int, default=128)
    ap.add_argument("--repeat", type=int, default=None, help="timed repetitions (default 3, --quick 2)")
    ap.add_argument("--warmup", type=int, default=1)
    ap.add_argument("--window", type=int, default=None,
                    help="torch and doccc: the static KV cache's length (max_cache_len; default prompt + gen); "
                         "decode time against cache position: --prompt P --gen 8 for windows W")
    ap.add_argument("--dir", type=Path, default=BUILD / "llmbench", help="the cache: checkpoint, GGUFs, exports")
    ap.add_argument("--json", type=Path, default=None)
    ap.add_argument("--doccc-flags", default=os.environ.get("DOCCC_LLM_FLAGS", ""),
                    help="more doccc flags for the LLM's compile (default: $DOCCC_LLM_FLAGS)")
    args = ap.parse_args()
    global WINDOW
    if args.window is not None and args.window < args.prompt + args.gen:
        ap.error(f"--window {args.window} holds fewer than --prompt + --gen = {args.prompt + args.gen} tokens")
    WINDOW = args.window
    threads = [int(t) for t in args.threads.split(",")]
    precisions = [p for p in args.precisions.split(",") if p]
    kinds = [k for k in args.gguf.split(",") if k]
    engines = set(args.engines.split(","))
    repeat = args.repeat or (2 if args.quick else 3)
    spec = QUICK if args.quick else FULL
    jpath = args.json or BUILD / ("bench-llm-quick.json" if args.quick else "bench-llm.json")
    mdir = args.dir / spec["name"]
    global MDIR
    MDIR = mdir
    bad = [p for p in precisions if p not in PRECISIONS] + [k for k in kinds if k not in GGUF_TYPES]
    if bad:
        ap.error(f"unknown weights {bad}")

    import torch
    print(f"bench_llm: {spec['name']}, {platform.machine()}, {os.cpu_count()} CPUs, torch {torch.__version__}, "
          f"threads {threads}, {repeat} repetitions after {args.warmup} warm-up")
    failed = []
    hf, cfg = ensure_model(spec, mdir)
    if not (mdir / "params.json").exists():
        sd = load_state(hf)
        (mdir / "params.json").write_text(json.dumps({k: v.numel() for k, v in sd.items()}))
        del sd
    n_params = sum(json.loads((mdir / "params.json").read_text()).values())
    print(f"model: {n_params / 1e6:.1f} M parameters (tied embeddings {cfg.tie_word_embeddings}), "
          f"checkpoint {hf}")

    bw, rows = {}, []
    if "triad" in engines:
        try:
            bw, text = triad(build_triad(BUILD / "llmbench" / "bench_triad"), threads,
                             *(["--mib", 64, "--trials", 3] if args.quick else []))
            print(text, end="")
        except Exception as e:  # noqa: BLE001
            failed.append("triad")
            log(str(e))

    gguf_info = {}
    if "llamacpp" in engines and kinds:
        lcpp, why = ensure_llamacpp()
        if lcpp is None:
            failed.append("llamacpp")
            for k in kinds:
                for t in threads:
                    rows.append(dict(engine="llama.cpp", weights=k.upper(), threads=t, bytes=None, note=why))
        else:
            try:
                gguf = import_gguf(lcpp)
                paths = ensure_ggufs(gguf, lcpp, hf, cfg, spec, mdir, kinds)
                for k, c in check_ggufs(lcpp, paths, hf, cfg).items():
                    print(f"check: llama.cpp {k.upper()} against torch {c['against']}: logits of the prompt "
                          f"within {c['rel_err']:.2e} of the largest (at most {CHECK_TOL[k]}), "
                          f"{c['tokens_equal']} of {c['tokens']} greedy tokens the same: "
                          f"{'ok' if c['ok'] else 'FAILED'}")
                    if not c["ok"]:
                        failed.append(f"gguf check {k}")
                for k in kinds:
                    size = paths[k].stat().st_size
                    wb = gguf_weight_bytes(gguf, paths[k])
                    gguf_info[k] = dict(path=str(paths[k]), file_bytes=size, weight_bytes_per_token=wb)
                    print(f"gguf {k}: {size} bytes ({size / 1e6:.1f} MB), {wb / 1e6:.1f} MB of weights per token: {paths[k]}")
                    res = llama_bench(lcpp, paths[k], threads, args.prompt, args.gen, repeat)
                    for t in threads:
                        rows.append(dict(engine="llama.cpp", weights=k.upper(), threads=t, bytes=wb,
                                         prefill=res[t][0], decode=res[t][1]))
            except Exception as e:  # noqa: BLE001
                failed.append("llamacpp")
                log(f"llama.cpp: {e}")

    for prec in precisions:
        if "torch" in engines:
            try:
                res, wb = torch_bench(hf, cfg, prec, threads, args.prompt, args.gen, repeat, args.warmup)
                for t in threads:
                    rows.append(dict(engine="torch eager", weights=prec, threads=t, bytes=wb,
                                     prefill=res[t][0], decode=res[t][1]))
            except Exception as e:  # noqa: BLE001
                failed.append(f"torch {prec}")
                log(f"torch {prec}: {type(e).__name__}: {e}")
        if "doccc" in engines:
            res, wb, why = doccc_bench(hf, cfg, spec, mdir, prec, threads, args.prompt, args.gen, repeat,
                                       args.warmup, shlex.split(args.doccc_flags))
            for t in threads:
                if res is None:
                    rows.append(dict(engine="doccc", weights=prec, threads=t, bytes=wb, note="pending (below)",
                                     pending=why))
                else:
                    rows.append(dict(engine="doccc", weights=prec, threads=t, bytes=wb,
                                     prefill=res[t][0], decode=res[t][1]))

    # the decode bound of each width of weights: the triad's best / bytes per token
    # (the GGUF's where there is one: its norms and biases stay f32)
    family = {"fp32": "32-bit", "F32": "32-bit", "bf16": "16-bit", "BF16": "16-bit", "F16": "16-bit",
              "Q8_0": "8-bit", "int8": "8-bit", "Q4_0": "4-bit", "int4": "4-bit"}
    fam_bytes = {}
    for r in rows:
        if r.get("bytes"):
            f = family[r["weights"]]
            if r["engine"] == "llama.cpp" or f not in fam_bytes:
                fam_bytes[f] = r["bytes"]
    for f, b in fam_bytes.items():
        for t in threads:
            tb = bw.get(t, {}).get("triad", {}).get("best")
            if tb:
                rows.append(dict(engine="bound (triad)", weights=f, threads=t, bytes=b, decode=tb * 1e9 / b,
                                 note=f"triad {tb:.1f} GB/s"))

    order_f = {"32-bit": 0, "16-bit": 1, "8-bit": 2, "4-bit": 3}
    order_w = {"fp32": 0, "F32": 1, "bf16": 2, "BF16": 3, "F16": 4, "int8": 5, "Q8_0": 6, "int4": 7, "Q4_0": 8}
    order_e = {"torch eager": 0, "doccc": 1, "llama.cpp": 2, "bound (triad)": 3}
    rows.sort(key=lambda r: (r["threads"], order_f[family.get(r["weights"], r["weights"])],
                             order_e[r["engine"]], order_w.get(r["weights"], 9)))
    for t in threads:
        if t in bw:
            tr, rd = bw[t].get("triad", {}), bw[t].get("read", {})
            print(f"memory bandwidth, {t} threads: triad best {tr.get('best')} GB/s (median {tr.get('median')}), "
                  f"read best {rd.get('best')} GB/s (median {rd.get('median')})")
    print_table(rows, bw, args.prompt, args.gen)
    print("decode GB/s: weight bytes per token / time per token (the KV cache not counted); % triad: of the\n"
          "triad's best at that thread count; prefill: torch and doccc return the logits of every position,\n"
          "llama.cpp only the last one's")
    whys = {}
    for r in rows:
        if r.get("pending"):
            whys.setdefault(r["pending"], []).append(r["weights"])
    for why, ws in whys.items():
        print(f"doccc {'/'.join(dict.fromkeys(ws))} pending: {why}")

    jpath.parent.mkdir(parents=True, exist_ok=True)
    jpath.write_text(json.dumps(dict(model=spec, n_params=n_params, prompt=args.prompt, gen=args.gen,
                                     repeat=repeat, warmup=args.warmup, threads=threads, bandwidth=bw,
                                     gguf=gguf_info, rows=rows, failed=failed,
                                     machine=dict(arch=platform.machine(), cpus=os.cpu_count(),
                                                  level=hostcpu.best_level()),
                                     torch=torch.__version__), indent=1))
    print(f"\nwritten: {jpath}")
    if failed:
        log(f"failed: {', '.join(failed)}")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
