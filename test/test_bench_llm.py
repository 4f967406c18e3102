"""test/bench_llm.py's parts, cheaply: never the 0.5 B model, and llama.cpp only where it is built.

The bandwidth program, test/bench_triad.c, is compiled as the bench compiles it
and must print positive rates at 1 and 2 threads. The C driver of the doccc
rows, test/bench_llm_driver.c, runs two small stand-ins for a decoder-only LM
compiled by doccc, and its greedy tokens must be eager PyTorch's on the same
prompt (the driver's: srand(seed), rand() % vocab, glibc's generator):

  - stateless, its seq dim a run-time dim: the prompt in one call, then one
    token a call (the protocol the static-cache export will follow, its KV
    cache kept in the instance);
  - with its state as an input and its new value as an output (a functional
    KV cache), compiled for one token a call: the prompt one token at a time,
    the driver swapping the state's two buffers after each run.

The tiny model through llama.cpp (GGUFs written, checked against torch and
benchmarked for a moment) runs where test/llamacpp.sh has built llama.cpp;
the whole pipeline is smoke-tested by `make bench-llm
BENCH_LLM_FLAGS=--quick`, which builds llama.cpp first (minutes), not here.
"""

import ctypes
import json
import ctypes.util
import re
import subprocess
import sys

import pytest

from conftest import ROOT, doccc_cmd, fmt_result, require

sys.path.insert(0, str(ROOT / "test"))
import bench_llm  # noqa: E402  (stdlib only at import time)

VOCAB, PROMPT, GEN, CACHE = 500, 12, 8, 32


def test_triad(tmp_path):
    exe = bench_llm.build_triad(tmp_path / "bench_triad")
    bw, text = bench_llm.triad(exe, [1, 2], "--mib", 8, "--trials", 2)
    assert set(bw) == {1, 2}, text
    for t in (1, 2):
        for kind in ("triad", "read"):
            assert 0 < bw[t][kind]["median"] <= bw[t][kind]["best"], text


def lm(torch, state):
    class LM(torch.nn.Module):
        """logits [1, s, vocab] of (input_ids [1, s], cache_position [s][, kv [CACHE, 16]])."""

        def __init__(self):
            super().__init__()
            self.emb = torch.nn.Embedding(VOCAB, 16)
            self.pos = torch.nn.Embedding(CACHE, 16)
            self.head = torch.nn.Linear(16, VOCAB, bias=False)

        def forward(self, input_ids, cache_position, kv=None):
            x = self.emb(input_ids)[0] + self.pos(cache_position)
            if kv is None:
                return self.head(x)[None]
            kv = kv.index_copy(0, cache_position, x)
            return self.head(x + 0.1 * kv.sum(0))[None], kv
    torch.manual_seed(0)
    return LM().eval()


def reference_tokens(torch, model, state):
    libc = ctypes.CDLL(ctypes.util.find_library("c"))
    libc.srand(0)
    ids = torch.tensor([[libc.rand() % VOCAB for _ in range(PROMPT)]])
    kv = torch.zeros(CACHE, 16) if state else None
    out = []
    with torch.no_grad():
        if state:  # one token a call, as the driver runs a one-token library
            for i in range(PROMPT):
                y, kv = model(ids[:, i:i + 1], torch.tensor([i]), kv)
        else:
            y = model(ids, torch.arange(PROMPT))
        for g in range(GEN):
            out.append(int(y[0, -1].argmax()))
            pos = torch.tensor([PROMPT + g])
            y = model(torch.tensor([[out[-1]]]), pos, kv) if state else model(torch.tensor([[out[-1]]]), pos)
            if state:
                y, kv = y
    return out


@pytest.mark.parametrize("state", [False, True], ids=["dynamic", "state-io"])
def test_driver(doccc, tmp_path, state):
    torch = require("torch")
    if not ctypes.util.find_library("c"):
        pytest.skip("no C library for ctypes (the prompt is the driver's rand())")
    model = lm(torch, state)
    n = 1 if state else 4  # the state-io library: one token a call
    kw = dict(input_ids=torch.zeros(1, n, dtype=torch.long), cache_position=torch.arange(n))
    if state:
        kw["kv"] = torch.zeros(CACHE, 16)
        ep = torch.export.export(model, (), kw)
    else:
        seq = torch.export.Dim("seq", max=CACHE)
        ep = torch.export.export(model, (), kw, dynamic_shapes={"input_ids": {1: seq}, "cache_position": {0: seq}})
    pt2 = tmp_path / "lm.pt2"
    torch.export.save(ep, pt2)
    r = doccc_cmd(pt2, "-t", "openmp", "-n", "lm", "-o", f"{tmp_path}/")
    assert r.returncode == 0, fmt_result(r)
    exe = bench_llm.build_driver(tmp_path / "bench_llm_driver")
    r = subprocess.run([str(exe), str(tmp_path / "liblm.so"), "--prompt", str(PROMPT), "--gen", str(GEN),
                        "--threads", "2", "--repeat", "2", "--warmup", "1"], capture_output=True, text=True,
                       timeout=120)
    assert r.returncode == 0, fmt_result(r)
    assert ("state as inputs and outputs" in r.stdout) == state, r.stdout
    assert ("prompt one token a call" in r.stdout) == state, r.stdout
    assert re.search(r"median prefill_ms [0-9.]+ decode_ms [0-9.]+ prefill_tok_s [0-9.]+ decode_tok_s [0-9.]+",
                     r.stdout), r.stdout
    got = [int(t) for t in re.search(r"^tokens (.*)$", r.stdout, re.M).group(1).split()]
    assert got == reference_tokens(torch, model, state), r.stdout


def test_quick_llamacpp(tmp_path):
    """The tiny model through llama.cpp, its GGUFs checked against torch, where
    test/llamacpp.sh has built llama.cpp (the suite does not build it: minutes)."""
    require("torch")
    require("transformers")
    lcpp = ROOT / "build" / "llamacpp"
    if not list(lcpp.glob("built-*")):
        pytest.skip("llama.cpp is not built (sh test/llamacpp.sh, or make bench-llm)")
    report = tmp_path / "report.json"
    r = subprocess.run([sys.executable, str(ROOT / "test" / "bench_llm.py"), "--quick", "--engines", "llamacpp",
                        "--threads", "1", "--repeat", "1", "--prompt", "16", "--gen", "16",
                        "--dir", str(tmp_path / "work"), "--json", str(report)],
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, fmt_result(r)
    assert r.stdout.count("check: llama.cpp") == 5 and "FAILED" not in r.stdout, r.stdout
    rep = json.loads(report.read_text())
    assert not rep["failed"] and len(rep["rows"]) == 5, rep
    assert all(row["prefill"] > 0 and row["decode"] > 0 for row in rep["rows"]), rep["rows"]
    sizes = [rep["gguf"][k]["file_bytes"] for k in ("q4_0", "q8_0", "bf16", "f32")]
    assert sizes == sorted(sizes), rep["gguf"]
