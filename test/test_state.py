"""Models with state: an LLM decoder whose KV cache lives in the library.

A tiny Llama (random weights, fixed seed) exported with transformers' own
path, TorchExportableModuleForDecoderOnlyLM and its static cache, with the
sequence length a run-time dim, so one library prefills and decodes. At
both IR levels (the training IR writes the cache in place with
index_copy_; Core ATen returns it as buffer_mutation outputs):

  - generation: a 5-token prompt, then 32 greedy tokens, every step's
    logits against eager running the same exported module step by step,
    through `doccc run --step` on every CPU target and cuda --simulate; the
    library's tokens are eager's;
  - the cache is updated in place (doccc check, doccc inspect);
  - the API: reset gives the first run's logits again; get_state after the
    prompt and set_state later restore the conversation; copy_state forks
    it into another instance; a state buffer of the wrong size is
    DOCCC_ERR_ARG; a cache_position past the cache is DOCCC_ERR_INDEX;
  - two instances generating in two threads give the tokens of one
    instance at a time (test/capi/state_threads.c, under ThreadSanitizer);
  - a streaming GRU whose hidden state is a buffer (copy_), and
    `--disable-pass state` (the copies) gives the same results.
"""

import ctypes
import json
import shutil
import subprocess
from pathlib import Path

import pytest

from conftest import ATOL, RTOL, ROOT, compile_model, doccc_cmd, fmt_result, require

PROMPT = [3, 17, 42, 5, 99]
NEW = 32
CACHE = 48
TARGETS = ["none", "sequential", "openmp", "cuda-sim"]


def tiny_llama():
    torch = require("torch")
    require("transformers")
    from transformers import GenerationConfig, LlamaConfig, LlamaForCausalLM
    torch.manual_seed(0)
    cfg = LlamaConfig(vocab_size=128, hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                      num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=128)
    m = LlamaForCausalLM(cfg).eval()
    m.generation_config = GenerationConfig(use_cache=True, cache_implementation="static", max_length=CACHE,
                                           cache_config={"batch_size": 1, "max_cache_len": CACHE})
    return m


def export_decoder(m):
    """The static-cache export, the sequence length a run-time dim."""
    torch = require("torch")
    from transformers.integrations.executorch import TorchExportableModuleForDecoderOnlyLM
    w = TorchExportableModuleForDecoderOnlyLM(m, batch_size=1, max_cache_len=CACHE)
    seq = torch.export.Dim("seq", min=1, max=CACHE)
    ids = torch.tensor([PROMPT])
    return w.export(input_ids=ids, cache_position=torch.arange(len(PROMPT)),
                    dynamic_shapes={"input_ids": {1: seq}, "cache_position": {0: seq}})


def eager_steps(ep):
    """The prompt, then NEW greedy tokens, by the exported module step by
    step: [(input_ids, cache_position, logits)] and the tokens."""
    torch = require("torch")
    mod = ep.module()
    steps, toks, ids, p = [], [], torch.tensor([PROMPT]), 0
    with torch.no_grad():
        for _ in range(NEW):
            pos = torch.arange(p, p + ids.shape[1])
            logits = mod(input_ids=ids, cache_position=pos)
            steps.append((ids.numpy().copy(), pos.numpy().copy(), logits.numpy().copy()))
            t = int(logits[0, -1].argmax())
            toks.append(t)
            p += ids.shape[1]
            ids = torch.tensor([[t]])
    return steps, toks


@pytest.fixture(scope="module")
def decoder(tmp_path_factory):
    """{ir: (pt2, steps)} and the step files, made once."""
    torch = require("torch")
    np = require("numpy")
    d = tmp_path_factory.mktemp("decoder")
    m = tiny_llama()
    ep = export_decoder(m)
    steps, toks = eager_steps(ep)
    # the reference is sound: the HF model's own greedy generation
    with torch.no_grad():
        hf = m.generate(torch.tensor([PROMPT]), max_new_tokens=NEW, do_sample=False)[0, len(PROMPT):].tolist()
    assert hf == toks, f"the exported module generates {toks}, the model {hf}"
    out = {"dir": d, "toks": toks, "steps": steps}
    for ir, prog in (("training", ep), ("core", ep.run_decompositions())):
        pt2 = d / f"llama_{ir}.pt2"
        torch.export.save(prog, str(pt2))
        out[ir] = pt2
    files = []
    for s, (ids, pos, logits) in enumerate(steps):
        f = [d / f"ids{s}.npy", d / f"pos{s}.npy", d / f"ref{s}.npy"]
        np.save(f[0], ids), np.save(f[1], pos), np.save(f[2], logits)
        files.append(f)
    out["files"] = files
    return out


def step_args(files, outdir=None):
    args = []
    for s, (ids, pos, ref) in enumerate(files):
        args += (["--step"] if s else []) + ["-i", ids, "-i", pos, "--expect", ref]
        if outdir:
            args += ["-o", Path(outdir) / f"out{s}.npy"]
    return args


@pytest.mark.parametrize("ir", ["training", "core"])
@pytest.mark.parametrize("target", TARGETS)
def test_decoder_generates(decoder, ir, target, tmp_path):
    """Prefill and 31 decode steps in one process: every step's logits within
    the suite's tolerance of eager's, and the same tokens."""
    np = require("numpy")
    lib = compile_model(decoder[ir], target, tmp_path / "b")
    r = doccc_cmd("run", lib, *step_args(decoder["files"], tmp_path), "--json")
    assert r.returncode == 0, fmt_result(r)
    rep = json.loads(r.stdout)
    assert len(rep["steps"]) == NEW and all(s["pass"] for s in rep["steps"]), rep
    toks = [int(np.load(tmp_path / f"out{s}.npy")[0, -1].argmax()) for s in range(NEW)]
    assert toks == decoder["toks"]


def test_cache_updated_in_place(decoder, tmp_path):
    """doccc check and doccc inspect say every cache is updated in place."""
    r = doccc_cmd("check", decoder["core"], "--json")
    assert r.returncode == 0, fmt_result(r)
    states = json.loads(r.stdout)["states"]
    caches = [s for s in states if "cumulative" not in s["name"]]
    assert len(caches) == 4 and all(s["in_place"] for s in caches), states
    assert all(s["shape"][2] == CACHE for s in caches), states
    lib = compile_model(decoder["training"], "sequential", tmp_path)
    r = doccc_cmd("inspect", lib)
    assert r.returncode == 0 and "state             6" in r.stdout, fmt_result(r)
    assert r.stdout.count("updated in place") >= 4, r.stdout
    r = doccc_cmd("inspect", lib, "--json")
    info = json.loads(r.stdout)
    assert info["abi_version"] == 6 and len(info["states"]) == 6, info


class Lib:
    """The typed API of a decoder library through ctypes."""

    def __init__(self, lib):
        self.np = require("numpy")
        self.nm = lib.stem[3:]
        self.L = ctypes.CDLL(str(lib))
        self.f("last_error").restype = ctypes.c_char_p
        self.f("strerror").restype = ctypes.c_char_p

    def f(self, name):
        return getattr(self.L, f"{self.nm}_{name}")  # cached: restype sticks

    def create(self):
        h = ctypes.c_void_p()
        assert self.f("create")(ctypes.byref(h)) == 0, self.f("last_error")(None)
        return h

    def run(self, h, ids, pos, vocab=128):
        np = self.np
        ids, pos = np.ascontiguousarray(ids, np.int64), np.ascontiguousarray(pos, np.int64)
        out = np.zeros((1, ids.shape[1], vocab), np.float32)
        dims = np.array([ids.shape[1]], np.int64)
        P = ctypes.c_void_p
        rc = self.f("run_dims")(h, P(dims.ctypes.data), P(ids.ctypes.data), P(pos.ctypes.data), P(out.ctypes.data))
        return rc, out



def state_bytes(lib_json):
    return [s["nbytes"] for s in lib_json["states"]]


def test_state_api(decoder, tmp_path):
    """reset, get_state / set_state (save and restore a conversation),
    copy_state (a fork), and the errors: a wrong size, an index past the
    cache."""
    np = require("numpy")
    lib = compile_model(decoder["training"], "openmp", tmp_path)
    info = json.loads(doccc_cmd("inspect", lib, "--json").stdout)
    sizes = state_bytes(info)
    L = Lib(lib)
    st = decoder["steps"]
    a = L.create()
    rc, first = L.run(a, st[0][0], st[0][1])
    assert rc == 0
    np.testing.assert_allclose(first, st[0][2], rtol=RTOL, atol=ATOL)
    # save the conversation after the prompt
    saved = [np.zeros(n, np.uint8) for n in sizes]
    for i, buf in enumerate(saved):
        assert L.f("get_state")(a, i, ctypes.c_void_p(buf.ctypes.data), ctypes.c_size_t(buf.size)) == 0
    # fork it into b before a goes on
    b = L.create()
    assert L.f("copy_state")(b, a) == 0
    for s in range(1, 4):
        rc, out = L.run(a, st[s][0], st[s][1])
        assert rc == 0
        np.testing.assert_allclose(out, st[s][2], rtol=RTOL, atol=ATOL)
    rc, fork = L.run(b, st[1][0], st[1][1])  # b continues from the prompt
    assert rc == 0
    np.testing.assert_allclose(fork, st[1][2], rtol=RTOL, atol=ATOL)
    # restore a to after the prompt: step 1 again gives step 1's logits
    for i, buf in enumerate(saved):
        assert L.f("set_state")(a, i, ctypes.c_void_p(buf.ctypes.data), ctypes.c_size_t(buf.size)) == 0
    rc, again = L.run(a, st[1][0], st[1][1])
    np.testing.assert_allclose(again, st[1][2], rtol=RTOL, atol=ATOL)
    # reset: the prompt again from an empty cache
    assert L.f("reset")(a) == 0
    rc, out = L.run(a, st[0][0], st[0][1])
    np.testing.assert_allclose(out, first, rtol=0, atol=0)
    # a state buffer of the wrong size, a state that does not exist
    buf = np.zeros(sizes[2] + 4, np.uint8)
    assert L.f("set_state")(a, 2, ctypes.c_void_p(buf.ctypes.data), ctypes.c_size_t(buf.size)) == 3  # DOCCC_ERR_ARG
    msg = L.f("last_error")(a).decode()
    assert f"takes a buffer of {sizes[2]} bytes, not {sizes[2] + 4}" in msg, msg
    assert L.f("get_state")(a, len(sizes), ctypes.c_void_p(buf.ctypes.data), ctypes.c_size_t(buf.size)) == 3
    assert "no state" in L.f("last_error")(a).decode()
    # a position past the cache: DOCCC_ERR_INDEX, and the cache is untouched
    rc, _ = L.run(a, np.array([[1]]), np.array([CACHE]))
    assert rc == 5, rc
    assert b"index out of range" in L.f("strerror")(rc)
    rc, out = L.run(a, st[1][0], st[1][1])
    np.testing.assert_allclose(out, st[1][2], rtol=RTOL, atol=ATOL)
    for h in (a, b):
        L.f("destroy")(h)


def test_index_past_the_cache_fails_the_run(decoder, tmp_path):
    """doccc run: a cache_position past max_cache_len is DOCCC_ERR_INDEX
    with a message, exit 1, never a write out of bounds."""
    np = require("numpy")
    lib = compile_model(decoder["core"], "sequential", tmp_path)
    np.save(tmp_path / "ids.npy", np.array([[1, 2]], np.int64))
    np.save(tmp_path / "pos.npy", np.array([CACHE - 1, CACHE], np.int64))
    r = doccc_cmd("run", lib, "-i", tmp_path / "ids.npy", "-i", tmp_path / "pos.npy", "-o", tmp_path / "o.npy")
    assert r.returncode == 1 and "out of range" in r.stderr, fmt_result(r)


def test_two_instances_in_two_threads(decoder, tmp_path):
    """Two instances generating at once give the tokens of one at a time,
    under ThreadSanitizer (test/capi/state_threads.c)."""
    cc = shutil.which("clang")
    if not cc:
        pytest.fail("clang is needed for this test", pytrace=False)
    lib = compile_model(decoder["training"], "sequential", tmp_path / "b")
    exe = tmp_path / "state_threads"
    src = ROOT / "test" / "capi" / "state_threads.c"
    r = subprocess.run([cc, "-O1", "-g", "-fsanitize=thread", "-I", str(ROOT / "backends"), str(src), "-o", str(exe),
                        "-ldl", "-lpthread"], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    r = subprocess.run([str(exe), str(lib), str(NEW), *map(str, PROMPT)], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    toks = [int(t) for t in r.stdout.split()]
    assert toks == decoder["toks"], (toks, decoder["toks"])


def test_streaming_gru_hidden_state(tmp_path):
    """A GRU whose hidden state is a buffer, updated with copy_: chunks
    of a stream, each against eager, with and without the state pass."""
    torch = require("torch")
    np = require("numpy")

    class Stream(torch.nn.Module):
        def __init__(self):
            super().__init__()
            torch.manual_seed(0)
            self.gru = torch.nn.GRU(6, 8, batch_first=True)
            self.out = torch.nn.Linear(8, 3)
            self.register_buffer("h", torch.zeros(1, 2, 8))

        def forward(self, x):
            y, h = self.gru(x, self.h)
            self.h.copy_(h)
            return self.out(y)

    m = Stream().eval()
    x0 = torch.randn(2, 4, 6)
    ep = torch.export.export(m, (x0,))
    pt2 = tmp_path / "stream.pt2"
    torch.export.save(ep, str(pt2))
    mod = ep.module()
    args = []
    for s in range(5):
        x = torch.randn(2, 4, 6)
        with torch.no_grad():
            y = mod(x)
        np.save(tmp_path / f"x{s}.npy", x.numpy())
        np.save(tmp_path / f"y{s}.npy", y.numpy())
        args += (["--step"] if s else []) + ["-i", tmp_path / f"x{s}.npy", "--expect", tmp_path / f"y{s}.npy"]
    for extra in ([], ["--disable-pass", "state"]):
        lib = compile_model(pt2, "openmp", tmp_path / ("b" + "".join(extra)), *extra)
        r = doccc_cmd("run", lib, *args)
        assert r.returncode == 0 and "in 5 steps" in r.stdout, fmt_result(r)
    r = doccc_cmd("check", pt2)
    assert "updated in place" in r.stdout, fmt_result(r)


@pytest.mark.parametrize("ir", ["training", "core"])
@pytest.mark.parametrize("target", ["sequential", "cuda-sim"])
def test_input_written_in_place(ir, target, tmp_path):
    """x.add_(1) in forward (user_input_mutation in Core ATen): the run leaves
    x's new value in the caller's buffer, as eager does; the header and the
    descriptor say so."""
    torch = require("torch")
    np = require("numpy")

    class M(torch.nn.Module):
        def forward(self, x, y):
            x.add_(1)
            return x * y

    x0, y = torch.randn(2, 3), torch.randn(2, 3)
    ep = torch.export.export(M(), (x0.clone(), y))
    if ir == "core":
        ep = ep.run_decompositions()
        assert any(s.kind.name == "USER_INPUT_MUTATION" for s in ep.graph_signature.output_specs)
    pt2 = tmp_path / "inplace.pt2"
    torch.export.save(ep, str(pt2))
    lib = compile_model(pt2, target, tmp_path / "b")
    h = (tmp_path / "b" / "inplace.h").read_text()
    assert "#define INPLACE_INPUT0_WRITTEN 1" in h and "INPLACE_INPUT1_WRITTEN" not in h, h
    x = x0.numpy().copy()
    yn, out = y.numpy().copy(), np.zeros((2, 3), np.float32)
    L = ctypes.CDLL(str(lib))
    m = ctypes.c_void_p()
    assert L.inplace_create(ctypes.byref(m)) == 0
    run = L.inplace_run_host if target.endswith("-sim") else L.inplace_run
    P = ctypes.c_void_p
    assert run(m, P(x.ctypes.data), P(yn.ctypes.data), P(out.ctypes.data)) == 0
    xe = x0.clone()
    ye = M()(xe, y)
    np.testing.assert_allclose(x, xe.numpy(), rtol=RTOL, atol=ATOL)
    np.testing.assert_allclose(out, ye.numpy(), rtol=RTOL, atol=ATOL)
    L.inplace_destroy(m)
