"""The GPU targets (cuda, rocm): real toolchains, architecture options, and the
device-resident runtime in its simulation.

  - real toolchains: small models built with nvcc (-t cuda) and hipcc (-t rocm)
    carry their fat binary (.nv_fatbin, .hip_fatbin) for the category's
    architecture (server: sm_90 / gfx90a, edge: sm_87), and `doccc run`
    reports the runtime's own error on this machine, which has no GPU;
  - architecture options: DOCC_CUDA_ARCH, --offload-arch and --march, and the
    usage errors (unknown arch, gfx942, --simulate for openmp), which leave
    no library behind;
  - residency (-t cuda --simulate, through the doccc_model descriptor with
    ctypes): run takes device pointers only, run_host copies and warns once
    per instance through the log hook, set_stream/sync, NULL handles;
  - the host fallback of a model with a step that cannot run on the GPU (a
    scaled-dot-product attention over 20000 keys, whose score row outgrows
    a GPU thread's locals), whose run rejects device memory; a long stable
    sort stays on the GPU (its merge sort goes in chunks that fit);
  - the simulation's device memory is unreadable outside kernels and copies;
  - `doccc run` with and without --device; index checks on the GPU; the
    simulation's DOCCC_SIM_NO_DEVICE and DOCCC_SIM_DEVICE_MEMORY.

Everything that loads a library with ctypes runs in a python subprocess (the
scripts below), so a crash in a library fails one test instead of pytest.
Missing nvcc/hipcc fails in CI and skips elsewhere, like a missing module.
"""

import json
import os
import re
import shutil
import struct
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import (IN_CI, RUN_TIMEOUT, compare, device_resident, doccc_cmd,
                      fmt_result, header_of, num_outputs, parse_header, require, run_lib)

SIM_BASE = 0x3e0000000000  # where the simulation maps its "device" memory


def require_cmd(cmd):
    """Path of a toolchain command; fail in CI, skip elsewhere, when it is missing."""
    path = shutil.which(cmd)
    if path is None:
        msg = f"{cmd} is not on PATH; the {cmd} tests need it"
        if IN_CI:
            pytest.fail(f"CI: {msg}", pytrace=False)
        pytest.skip(msg)
    return path


def elf_sections(path):
    """{section name: contents} of a 64-bit little-endian ELF file (b'' for NOBITS)."""
    data = Path(path).read_bytes()
    assert data[:4] == b"\x7fELF" and data[4] == 2 and data[5] == 1, f"{path}: not an ELF64 LE file"
    shoff, = struct.unpack_from("<Q", data, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", data, 0x3A)
    hdrs = [struct.unpack_from("<IIQQQQIIQQ", data, shoff + i * shentsize) for i in range(shnum)]
    strtab = hdrs[shstrndx][4]
    out = {}
    for name, kind, _flags, _addr, off, size, *_ in hdrs:
        end = data.index(b"\0", strtab + name)
        out[data[strtab + name:end].decode()] = b"" if kind == 8 else data[off:off + size]
    return out


def source_arch(cu):
    """The architecture named in the header comment of a generated NAME.cu."""
    m = re.search(r"^ \* target (\w+), category (\w+), architecture (\w+)", Path(cu).read_text(), re.M)
    assert m, f"{cu}: no 'target ..., category ..., architecture ...' comment line"
    return m.group(3)


def gpu_present(backend):
    return Path("/dev/nvidiactl" if backend == "cuda" else "/dev/kfd").exists()


# ---- models ---------------------------------------------------------------------


def _modules():
    torch = require("torch")

    class ConvNet(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = torch.nn.Conv2d(3, 4, 3)
            self.fc = torch.nn.Linear(4 * 6 * 6, 5)

        def forward(self, x):
            return self.fc(torch.relu(self.conv(x)).flatten(1))

    class Attention(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.q, self.k, self.v = (torch.nn.Linear(8, 8) for _ in range(3))

        def forward(self, x):
            a = torch.softmax(self.q(x) @ self.k(x).transpose(-1, -2) / 8 ** 0.5, dim=-1)
            return a @ self.v(x)

    class Sort(torch.nn.Module):
        def forward(self, x):
            v, i = torch.sort(x, dim=-1, stable=True)
            return v, i

    class LongAttention(torch.nn.Module):
        def forward(self, q, k, v):
            return torch.nn.functional.scaled_dot_product_attention(q, k, v)

    class Gather(torch.nn.Module):
        def forward(self, x, idx):
            return torch.index_select(x, 0, idx) * 2.0

    g = torch.Generator().manual_seed(0)
    torch.manual_seed(0)
    return {
        "convnet": (ConvNet(), (torch.randn(2, 3, 8, 8, generator=g),)),
        "attention": (Attention(), (torch.randn(1, 4, 8, generator=g),)),
        # many ties (integers 0..99): the stable order of equal values is checked too
        "sort_long": (Sort(), (torch.randint(0, 100, (2, 20000), generator=g).float(),)),
        "sort_short": (Sort(), (torch.randint(0, 10, (3, 64), generator=g).float(),)),
        "attn_long": (LongAttention(), (torch.randn(1, 2, 4, 16, generator=g), torch.randn(1, 2, 20000, 16, generator=g),
                                        torch.randn(1, 2, 20000, 16, generator=g))),
        "gather": (Gather(), (torch.randn(6, 3, generator=g), torch.tensor([0, 5, 2, 2]))),
    }


class Model:
    def __init__(self, name, path, inputs, ref, files):
        self.name, self.path, self.inputs, self.ref, self.files = name, path, inputs, ref, files


@pytest.fixture(scope="module")
def models(tmp_path_factory):
    torch = require("torch")
    np = require("numpy")
    import export as export_mod
    base = tmp_path_factory.mktemp("gpu_exports")
    out = {}
    for name, (mod, xs) in _modules().items():
        mod.eval()
        with torch.no_grad():
            r = mod(*xs)
        r = r if isinstance(r, tuple) else (r,)
        path = base / f"{name}.pt2"
        export_mod.export(mod, xs, path, ir="training")
        inputs = [x.numpy() for x in xs]
        files = []
        for i, a in enumerate(inputs):
            files.append(base / f"{name}_in{i}.npy")
            np.save(files[-1], a)
        out[name] = Model(name, path, inputs, [y.numpy() for y in r], files)
    return out


def compile_capture(src, outdir, *args, env=None):
    """doccc SRC ARGS -o OUTDIR/; asserts exit 0; returns (library, CompletedProcess)."""
    outdir = Path(outdir)
    r = doccc_cmd(src, *args, "-o", f"{outdir}/", env=env)
    assert r.returncode == 0, fmt_result(r)
    name = args[list(args).index("-n") + 1]
    lib = outdir / f"lib{name}.so"
    assert lib.is_file() and header_of(lib).is_file(), fmt_result(r)
    return lib, r


@pytest.fixture(scope="module")
def builds(models, tmp_path_factory):
    """Libraries built lazily, once per module: builds(key) -> (lib, CompletedProcess)."""
    base = tmp_path_factory.mktemp("gpu_builds")
    cache = {}
    specs = {
        "convnet-sim": ("convnet", ["-t", "cuda", "--simulate"]),
        "sort_long-sim": ("sort_long", ["-t", "cuda", "--simulate"]),
        # attention one query row per block (scores in no device memory): its
        # 20000 scores overflow a thread's locals, so the model falls back
        "attn_long-sim": ("attn_long", ["-t", "cuda", "--simulate", "--pass-opt", "expand.attention_scores_mb=0"]),
        "attn_long-scores-sim": ("attn_long", ["-t", "cuda", "--simulate"]),
        "attn_long-openmp": ("attn_long", ["-t", "openmp"]),
        "sort_short-sim": ("sort_short", ["-t", "cuda", "--simulate"]),
        "gather-sim": ("gather", ["-t", "cuda", "--simulate"]),
        "convnet-openmp": ("convnet", ["-t", "openmp"]),
    }

    def get(key):
        if key not in cache:
            model, args = specs[key]
            cache[key] = compile_capture(models[model].path, base / key, *args, "-n", model)
        return cache[key]
    return get


# ---- ctypes in a subprocess ---------------------------------------------------------

# The doccc_model descriptor (backends/doccc_model.h, ABI version 2) and helpers;
# every scenario below is appended to this and run with `python3 -c`.
PRELUDE = r'''
import ctypes, json, sys
from ctypes import (CFUNCTYPE, POINTER, Structure, byref, c_char_p, c_int, c_int64,
                    c_size_t, c_void_p)
import numpy as np

class TensorDesc(Structure):
    _fields_ = [("name", c_char_p), ("dtype", c_int), ("rank", c_int),
                ("shape", POINTER(c_int64)), ("numel", c_int64), ("nbytes", c_size_t)]

LOGFN = CFUNCTYPE(None, c_void_p, c_int, c_char_p)
RUNFN = CFUNCTYPE(c_int, c_void_p, POINTER(c_void_p), POINTER(c_void_p))

class Desc(Structure):
    _fields_ = [
        ("abi_version", c_int), ("name", c_char_p), ("target", c_char_p),
        ("category", c_char_p), ("doccc_version", c_char_p), ("input_hash", c_char_p),
        ("ninputs", c_int), ("noutputs", c_int),
        ("inputs", POINTER(TensorDesc)), ("outputs", POINTER(TensorDesc)),
        ("workspace_size", c_size_t), ("weights_embedded", c_int),
        ("create", CFUNCTYPE(c_int, POINTER(c_void_p), c_char_p)),
        ("run", RUNFN),
        ("destroy", CFUNCTYPE(None, c_void_p)),
        ("strerror", CFUNCTYPE(c_char_p, c_int)),
        ("set_num_threads", CFUNCTYPE(c_int, c_void_p, c_int)),
        ("device_resident", c_int), ("device_backend", c_char_p), ("simulated", c_int),
        ("run_host", RUNFN),
        ("set_stream", CFUNCTYPE(c_int, c_void_p, c_void_p)),
        ("sync", CFUNCTYPE(c_int, c_void_p)),
        ("last_error", CFUNCTYPE(c_char_p, c_void_p)),
        ("set_log", CFUNCTYPE(None, c_void_p, LOGFN, c_void_p)),
        ("device_alloc", CFUNCTYPE(c_int, POINTER(c_void_p), c_size_t)),
        ("device_free", CFUNCTYPE(c_int, c_void_p)),
        ("device_copy", CFUNCTYPE(c_int, c_void_p, c_void_p, c_size_t, c_int)),
    ]

TO_DEVICE, TO_HOST = 1, 2
NP = {0: np.float32, 1: np.float64, 2: np.float16, 4: np.int64, 5: np.int32,
      6: np.int16, 7: np.int8, 8: np.uint8, 9: np.bool_}
args = json.loads(sys.argv[1])
result = {}

def load(path):
    lib = ctypes.CDLL(path)
    return lib, Desc.in_dll(lib, "doccc_model")

def create(d):
    m = c_void_p()
    st = d.create(byref(m), None)
    assert st == 0, (st, d.last_error(None))
    return m

def err(d, m):
    s = d.last_error(m)
    return s.decode() if s else None

def ptrs(xs):
    return (c_void_p * max(len(xs), 1))(*xs)

def host_outputs(d):
    return [np.zeros([d.outputs[i].shape[k] for k in range(d.outputs[i].rank)],
                     NP[d.outputs[i].dtype]) for i in range(d.noutputs)]

def dev_alloc(d, n):
    p = c_void_p()
    st = d.device_alloc(byref(p), n)
    assert st == 0 and p.value, (st, err(d, None))
    return p.value

def to_device(d, a):
    a = np.ascontiguousarray(a)
    p = dev_alloc(d, a.nbytes)
    assert d.device_copy(p, a.ctypes.data, a.nbytes, TO_DEVICE) == 0
    return p

def from_device(d, p, like):
    h = np.zeros_like(like)
    assert d.device_copy(h.ctypes.data, p, h.nbytes, TO_HOST) == 0
    return h

def run_host(d, m, xs):
    outs = host_outputs(d)
    st = d.run_host(m, ptrs([x.ctypes.data for x in xs]), ptrs([o.ctypes.data for o in outs]))
    return st, outs

def run_device(d, m, xs, stream=None):
    """Copy xs in, run with device pointers (on stream: then sync), copy out."""
    outs = host_outputs(d)
    dins = [to_device(d, x) for x in xs]
    douts = [dev_alloc(d, o.nbytes) for o in outs]
    if stream is not None:
        result["set_stream"] = d.set_stream(m, stream)
    st = d.run(m, ptrs(dins), ptrs(douts))
    if stream is not None:
        result["run_on_stream"] = st
        st = d.sync(m)
    outs = [from_device(d, p, o) for p, o in zip(douts, outs)]
    for p in dins + douts:
        assert d.device_free(p) == 0
    return st, outs

def save(outs, prefix):
    for i, o in enumerate(outs):
        np.save(f"{prefix}{i}.npy", o)
'''

EPILOGUE = r'''
print("RESULT " + json.dumps(result), flush=True)
'''


def run_script(body, expect_rc=0, env=None, **args):
    """Run PRELUDE + body in a python subprocess with args as json; returns (result dict, process)."""
    full_env = dict(os.environ)
    full_env.update(env or {})
    r = subprocess.run([sys.executable, "-c", PRELUDE + body + EPILOGUE, json.dumps(args)],
                       capture_output=True, text=True, timeout=RUN_TIMEOUT, env=full_env)
    info = f"exit {r.returncode}\n--- stdout:\n{r.stdout[-4000:]}\n--- stderr:\n{r.stderr[-4000:]}"
    assert r.returncode == expect_rc, info
    lines = [ln for ln in r.stdout.splitlines() if ln.startswith("RESULT ")]
    return (json.loads(lines[-1][7:]) if lines else None), r, info


# ---- 1. real toolchains ---------------------------------------------------------------

REAL = {
    # backend: (compiler, fat binary section, server arch, doccc run's runtime messages)
    "cuda": ("nvcc", ".nv_fatbin", "sm_90", ("CUDA driver version is insufficient", "cudaErrorInsufficientDriver")),
    "rocm": ("hipcc", ".hip_fatbin", "gfx90a", ("hipErrorNoDevice",)),
}


def check_real_build(lib, backend, inputs, check):
    """A library built by nvcc or hipcc for the server architecture: its fat
    binary is there; on a machine with that GPU the library runs on the
    inputs (.npy paths) through `doccc run --device` and check(outputs)
    compares them with eager, and without one `doccc run` gives the
    runtime's own error."""
    np = require("numpy")
    tool, section, arch, messages = REAL[backend]
    secs = elf_sections(lib)
    assert section in secs, f"{lib}: no {section} section (sections: {sorted(secs)})"
    assert arch.encode() in secs[section], f"{section} of {lib} holds no {arch} code object"
    if gpu_present(backend):
        check(run_lib(lib, [np.load(f) for f in inputs], "--device"))
        return
    out = Path(lib).parent / "gpu_check_y.npy"
    outs = sum((["-o", f"{out}{k}"] for k in range(num_outputs(lib))), [])
    rr = doccc_cmd("run", lib, *sum((["-i", f] for f in inputs), []), *outs)
    assert rr.returncode == 1, fmt_result(rr)
    assert "create failed:" in rr.stderr, fmt_result(rr)
    for text in messages:
        assert text in rr.stderr, fmt_result(rr)


def test_check_real_build_compares_on_a_gpu(models, tmp_path, monkeypatch):
    """check_real_build on a machine with a GPU runs the library and hands
    its outputs to the caller's check, so the op groups and the model zoo
    compare a real nvcc build with eager there: here a GPU is pretended
    (gpu_present) and `doccc run` stood in for (run_lib), once with eager's
    outputs (passes) and once with wrong ones (fails)."""
    require_cmd("nvcc")
    np = require("numpy")
    m = models["convnet"]
    lib, r = compile_capture(m.path, tmp_path, "-t", "cuda", "-n", "convnet")
    ref = np.asarray(m.ref[0])
    seen = []

    def check(got):  # not compare(): the wrong outputs must not reach the suite's table
        seen.append(len(got))
        assert got[0].shape == ref.shape and np.allclose(got[0], ref, rtol=1e-4, atol=1e-5)
    monkeypatch.setattr(sys.modules[__name__], "gpu_present", lambda backend: True)
    monkeypatch.setattr(sys.modules[__name__], "run_lib", lambda lib, xs, *extra: [ref.copy()])
    check_real_build(lib, "cuda", m.files, check)
    assert seen == [1]
    monkeypatch.setattr(sys.modules[__name__], "run_lib", lambda lib, xs, *extra: [ref + 1])
    with pytest.raises(AssertionError):
        check_real_build(lib, "cuda", m.files, check)


@pytest.mark.parametrize("model", ["convnet", "attention"])
@pytest.mark.parametrize("backend", ["cuda", "rocm"])
def test_real_toolchain(backend, model, models, tmp_path):
    tool, section, arch, messages = REAL[backend]
    require_cmd(tool)
    m = models[model]
    lib, r = compile_capture(m.path, tmp_path, "-t", backend, "--emit-source", "-n", model)
    assert source_arch(tmp_path / f"{model}.cu") == arch
    macros = parse_header(header_of(lib))
    assert macros[f"{model.upper()}_DEVICE_RESIDENT"] == "1"
    assert macros[f"{model.upper()}_DEVICE_BACKEND"] == f'"{backend}"'
    secs = elf_sections(lib)
    assert section in secs, f"{lib}: no {section} section (sections: {sorted(secs)})"
    assert arch.encode() in secs[section], f"{section} of {lib} holds no {arch} code object"
    if gpu_present(backend):  # not on the CI machines; then the library must simply work
        got = run_lib(lib, m.inputs)
        compare(got[0], m.ref[0], f"{model}[{backend}]")
        return
    out = tmp_path / "y.npy"
    rr = doccc_cmd("run", lib, *sum((["-i", f] for f in m.files), []), "-o", out)
    assert rr.returncode == 1, fmt_result(rr)
    assert "create failed:" in rr.stderr, fmt_result(rr)
    for text in messages:
        assert text in rr.stderr, fmt_result(rr)
    assert not out.exists()


def test_real_cuda_edge(models, tmp_path):
    require_cmd("nvcc")
    lib, _ = compile_capture(models["convnet"].path, tmp_path, "-t", "cuda", "-c", "edge",
                             "--emit-source", "-n", "net")
    assert source_arch(tmp_path / "net.cu") == "sm_87"
    fat = elf_sections(lib).get(".nv_fatbin")
    assert fat is not None, f"{lib}: no .nv_fatbin section"
    assert b"sm_87" in fat and b"sm_90" not in fat


# ---- 2. architecture options -------------------------------------------------------------


@pytest.mark.parametrize("env,extra,arch", [
    ({"DOCC_CUDA_ARCH": "sm_86"}, [], "sm_86"),
    ({"DOCC_CUDA_ARCH": "cuda:sm_86"}, [], "sm_86"),
    ({"DOCC_CUDA_ARCH": "sm_86"}, ["--offload-arch", "sm_75"], "sm_75"),
    ({"DOCC_CUDA_ARCH": "sm_86"}, ["--march", "sm_80"], "sm_80"),
    ({}, ["-c", "desktop"], "sm_89"),
], ids=["env", "env-prefixed", "offload-arch-wins", "march-wins", "desktop"])
def test_cuda_arch_choice(env, extra, arch, models, tmp_path):
    # --simulate compiles the same source without nvcc: the choice is the compiler's
    compile_capture(models["convnet"].path, tmp_path, "-t", "cuda", "--simulate", *extra,
                    "--emit-source", "-n", "net", env=env)
    assert source_arch(tmp_path / "net.cu") == arch


def test_cuda_arch_reaches_nvcc(models, tmp_path):
    require_cmd("nvcc")
    lib, _ = compile_capture(models["convnet"].path, tmp_path, "-t", "cuda", "--emit-source", "-n", "net",
                             env={"DOCC_CUDA_ARCH": "cuda:sm_86"})
    assert source_arch(tmp_path / "net.cu") == "sm_86"
    fat = elf_sections(lib).get(".nv_fatbin", b"")
    assert b"sm_86" in fat and b"sm_90" not in fat


@pytest.mark.parametrize("args,env,texts", [
    (["-t", "cuda", "--offload-arch", "sm_12"], {},
     ["unknown cuda architecture 'sm_12' (known: sm_75,", "sm_90"]),
    (["-t", "cuda", "--simulate", "--march", "sm_12"], {}, ["unknown cuda architecture 'sm_12'"]),
    (["-t", "cuda"], {"DOCC_CUDA_ARCH": "sm_12"}, ["sm_12", "known: sm_75"]),
    (["-t", "rocm", "--offload-arch", "gfx942"], {}, ["gfx942", "hipcc 5.2"]),
    (["-t", "openmp", "--simulate"], {}, ["--simulate", "openmp"]),
], ids=["unknown-arch", "unknown-arch-sim", "unknown-env-arch", "gfx942", "simulate-openmp"])
def test_arch_usage_errors(args, env, texts, models, tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    r = doccc_cmd(models["convnet"].path, *args, "-o", f"{out}/", "-n", "net", env=env)
    assert r.returncode == 2, fmt_result(r)
    for t in texts:
        assert t in r.stderr, fmt_result(r)
    assert not (out / "libnet.so").exists() and not (out / "net.h").exists(), sorted(os.listdir(out))
    assert os.listdir(out) == [], f"left behind: {sorted(os.listdir(out))}"


# ---- 3. residency (simulation) ------------------------------------------------------------

RESIDENCY = r'''
lib, d = load(args["lib"])
xs = [np.load(f) for f in args["inputs"]]
result["abi"] = d.abi_version
result["resident"] = d.device_resident
result["backend"] = d.device_backend.decode() if d.device_backend else None
result["simulated"] = d.simulated
result["weights_embedded"] = d.weights_embedded
result["has_device_entries"] = all(bool(f) for f in (d.device_alloc, d.device_free, d.device_copy,
                                                     d.set_stream, d.sync))

# the log hook: per instance
logs = []
@LOGFN
def hook(user, level, msg):
    logs.append([user or 0, level, msg.decode()])

m = create(d)
d.set_log(m, hook, c_void_p(1234))
# host pointers to run: rejected
outs = host_outputs(d)
result["run_host_ptrs"] = d.run(m, ptrs([x.ctypes.data for x in xs]), ptrs([o.ctypes.data for o in outs]))
result["run_host_ptrs_error"] = err(d, m)
result["run_host_ptrs_logs"] = len(logs)
for k in range(3):
    st, outs = run_host(d, m, xs)
    result[f"run_host{k}"] = st
    save(outs, args["prefix"] + f"host{k}_")
result["logs1"] = list(logs)
st, outs = run_device(d, m, xs)
result["run_device"] = st
save(outs, args["prefix"] + "dev_")
result["logs1_after_device"] = len(logs)
d.destroy(m)

m2 = create(d)
d.set_log(m2, hook, c_void_p(1234))
for k in range(2):
    result[f"second_run_host{k}"] = run_host(d, m2, xs)[0]
result["logs2"] = list(logs)
# a stream: the simulation ignores its value; run then sync
st, outs = run_device(d, m2, xs, stream=c_void_p(0x1000))
result["stream_sync"] = st
save(outs, args["prefix"] + "stream_")
d.destroy(m2)

# NULL handles
null_in = ptrs([x.ctypes.data for x in xs])
null_out = ptrs([o.ctypes.data for o in host_outputs(d)])
result["null_run"] = d.run(None, null_in, null_out)
result["null_run_host"] = d.run_host(None, null_in, null_out)
result["null_set_stream"] = d.set_stream(None, c_void_p(0x1000))
result["null_sync"] = d.sync(None)
result["null_strerror"] = d.strerror(3).decode()
'''


@pytest.fixture(scope="module")
def residency(models, builds, tmp_path_factory):
    lib, _ = builds("convnet-sim")
    prefix = tmp_path_factory.mktemp("residency") / "out_"
    res, _, info = run_script(RESIDENCY, lib=str(lib), inputs=[str(f) for f in models["convnet"].files],
                              prefix=str(prefix))
    assert res is not None, info
    return res, str(prefix), info


def test_sim_descriptor(residency, builds):
    res, _, info = residency
    lib, _ = builds("convnet-sim")
    assert device_resident(lib)
    assert parse_header(header_of(lib))["CONVNET_DEVICE_BACKEND"] == '"cuda"'
    assert (res["abi"], res["resident"], res["backend"], res["simulated"]) == (6, 1, "cuda", 1), info
    assert res["weights_embedded"] == 1 and res["has_device_entries"], info


def test_sim_run_rejects_host_pointers(residency):
    res, _, info = residency
    assert res["run_host_ptrs"] == 7, info
    e = res["run_host_ptrs_error"] or ""
    assert "is not GPU memory" in e and "_run_host" in e, info
    assert res["run_host_ptrs_logs"] == 0, info  # a rejected run copies nothing: no warning


def test_sim_run_device_matches_eager(residency, models):
    np = require("numpy")
    res, prefix, info = residency
    ref = models["convnet"].ref[0]
    assert res["run_device"] == 0 and res["run_host0"] == 0, info
    dev = np.load(prefix + "dev_0.npy")
    host = np.load(prefix + "host0_0.npy")
    compare(host, ref, "convnet[cuda-sim,run_host]")
    compare(dev, ref, "convnet[cuda-sim,run]")
    np.testing.assert_array_equal(dev, host, err_msg="run and run_host differ on the same input")


def test_sim_run_host_warns_once_per_instance(residency, models):
    np = require("numpy")
    res, prefix, info = residency
    assert [res[f"run_host{k}"] for k in range(3)] == [0, 0, 0], info
    for k in (1, 2):
        np.testing.assert_array_equal(np.load(prefix + f"host{k}_0.npy"), np.load(prefix + "host0_0.npy"))
    logs1 = res["logs1"]
    assert len(logs1) == 1, info
    user, level, msg = logs1[0]
    assert user == 1234 and level == 1 and "performance warning" in msg, info
    assert "\n" not in msg
    assert res["logs1_after_device"] == 1, info  # run with device pointers does not warn
    assert [res["second_run_host0"], res["second_run_host1"]] == [0, 0], info
    assert len(res["logs2"]) == 2 and res["logs2"][1][1:] == logs1[0][1:], info


def test_sim_stream_and_sync(residency, models):
    np = require("numpy")
    res, prefix, info = residency
    assert res["set_stream"] == 0 and res["run_on_stream"] == 0 and res["stream_sync"] == 0, info
    compare(np.load(prefix + "stream_0.npy"), models["convnet"].ref[0], "convnet[cuda-sim,stream]")


def test_sim_null_model(residency):
    res, _, info = residency
    assert (res["null_run"], res["null_run_host"], res["null_set_stream"], res["null_sync"]) == (3, 3, 3, 3), info
    assert res["null_strerror"], info


# ---- 4. host fallback ---------------------------------------------------------------------------

FALLBACK = r'''
glib, g = load(args["gpu_lib"])
hlib, h = load(args["host_lib"])
result["resident"] = h.device_resident
result["backend"] = h.device_backend.decode() if h.device_backend else None
result["device_entries_null"] = not any(bool(f) for f in (h.device_alloc, h.device_free, h.device_copy))
xs = [np.load(f) for f in args["inputs"]]
outs = host_outputs(h)
din = to_device(g, xs[0])   # device memory of the device-resident library
m = create(h)
ins = [x.ctypes.data for x in xs]
result["run_device_ptr"] = h.run(m, ptrs([din] + ins[1:]), ptrs([o.ctypes.data for o in outs]))
result["run_device_ptr_error"] = err(h, m)
dout = dev_alloc(g, outs[0].nbytes)
result["run_device_out"] = h.run(m, ptrs(ins), ptrs([dout] + [o.ctypes.data for o in outs[1:]]))
result["run_device_out_error"] = err(h, m)
st, outs = run_host(h, m, xs)
result["run_host"] = st
save(outs, args["prefix"])
h.destroy(m)
'''


def test_fallback_long_attention(models, builds, tmp_path):
    np = require("numpy")
    m = models["attn_long"]
    lib, r = builds("attn_long-sim")
    assert "no GPU expansion" in r.stderr and "device_resident = 0" in r.stderr, fmt_result(r)
    assert re.search(r"its kernel needs \d+ bytes of per-thread buffers, more than the 65536", r.stderr), fmt_result(r)
    assert not device_resident(lib)
    assert parse_header(header_of(lib))["ATTN_LONG_DEVICE_BACKEND"] == '""'
    got = run_lib(lib, m.inputs)
    compare(got[0], m.ref[0], "attn_long[cuda-sim fallback]")

    gpu_lib, _ = builds("convnet-sim")
    res, _, info = run_script(FALLBACK, gpu_lib=str(gpu_lib), host_lib=str(lib),
                              inputs=[str(f) for f in m.files], prefix=str(tmp_path / "o_"))
    assert (res["resident"], res["backend"]) == (0, None), info
    assert res["device_entries_null"], info
    for key in ("run_device_ptr", "run_device_out"):
        assert res[key] == 7, info
        e = res[key + "_error"] or ""
        assert "GPU memory" in e and "host" in e, info
    assert res["run_host"] == 0, info
    compare(np.load(tmp_path / "o_0.npy"), m.ref[0], "attn_long[fallback,run_host]")


def test_long_attention_stays_on_the_gpu(models, builds):
    """By default attention keeps its scores in device memory (two tiled
    contractions and a softmax): 20000 keys need no per-thread buffer, so
    the model that falls back in its row form stays device-resident."""
    m = models["attn_long"]
    lib, r = builds("attn_long-scores-sim")
    assert "no GPU expansion" not in r.stderr, fmt_result(r)
    assert device_resident(lib)
    for extra in ([], ["--device"]):
        compare(run_lib(lib, m.inputs, *extra)[0], m.ref[0], f"attn_long[cuda-sim scores{','.join([''] + extra)}]")


def test_fallback_note_names_the_node(builds):
    _, r = builds("attn_long-sim")
    assert re.search(r"node 'scaled_dot_product_attention[^']*': no GPU expansion", r.stderr), fmt_result(r)


def test_fallback_not_needed(models, builds):
    np = require("numpy")
    lib, r = builds("attn_long-openmp")
    assert "no GPU expansion" not in r.stderr and "device_resident" not in r.stderr, fmt_result(r)
    assert not device_resident(lib)
    compare(run_lib(lib, models["attn_long"].inputs)[0], models["attn_long"].ref[0], "attn_long[openmp]")

    # sorts stay on the GPU: a long row in chunks that fit a thread's locals, a short one whole
    for key in ("sort_long", "sort_short"):
        m = models[key]
        lib, r = builds(f"{key}-sim")
        assert "no GPU expansion" not in r.stderr, fmt_result(r)
        assert device_resident(lib)
        for extra in ([], ["--device"]):
            got = run_lib(lib, m.inputs, *extra)
            compare(got[0], m.ref[0], f"{key}[cuda-sim{','.join([''] + extra)}] values")
            np.testing.assert_array_equal(got[1], m.ref[1], err_msg=f"{key}: stable sort indices differ from eager")


# ---- 5. device memory protection --------------------------------------------------------------

PROTECT = r'''
lib, d = load(args["lib"])
a = np.arange(4, dtype=np.float32)
p = to_device(d, a)
back = from_device(d, p, a)      # copies work
print("ALLOC", p, back.tolist(), flush=True)
ctypes.string_at(p, 4)           # a direct read does not
print("READ", flush=True)
'''


def test_sim_device_memory_protected(builds):
    lib, _ = builds("convnet-sim")
    _, r, info = run_script(PROTECT, expect_rc=-11, lib=str(lib))
    m = re.search(r"^ALLOC (\d+) (.*)$", r.stdout, re.M)
    assert m, info
    assert SIM_BASE <= int(m.group(1)) < SIM_BASE + (1 << 40), info
    assert json.loads(m.group(2)) == [0.0, 1.0, 2.0, 3.0], info
    assert "READ" not in r.stdout, info


# ---- 6. doccc run ---------------------------------------------------------------------------


def _io_args(m, tmp_path):
    return sum((["-i", f] for f in m.files), []) + ["-o", tmp_path / "y.npy"]


def test_doccc_run_warns_once(models, builds, tmp_path):
    np = require("numpy")
    lib, _ = builds("convnet-sim")
    m = models["convnet"]
    r = doccc_cmd("run", lib, *_io_args(m, tmp_path), "--repeat", "3")
    assert r.returncode == 0, fmt_result(r)
    warn = [ln for ln in r.stderr.splitlines() if "performance warning" in ln]
    assert len(warn) == 1, fmt_result(r)
    assert warn[0].startswith("convnet: performance warning: convnet_run_host copies"), fmt_result(r)
    compare(np.load(tmp_path / "y.npy"), m.ref[0], "convnet[cuda-sim,doccc run --repeat 3]")

    r = doccc_cmd("run", lib, *_io_args(m, tmp_path), "--device", "--repeat", "3")
    assert r.returncode == 0, fmt_result(r)
    assert "performance warning" not in r.stderr, fmt_result(r)
    compare(np.load(tmp_path / "y.npy"), m.ref[0], "convnet[cuda-sim,doccc run --device]")


def test_doccc_run_device_on_host_library(models, builds, tmp_path):
    lib, _ = builds("convnet-openmp")
    r = doccc_cmd("run", lib, *_io_args(models["convnet"], tmp_path), "--device")
    assert r.returncode == 2, fmt_result(r)
    assert "--device" in r.stderr, fmt_result(r)
    assert not (tmp_path / "y.npy").exists()


# ---- 7. index checks on the GPU ----------------------------------------------------------------

INDEX = r'''
lib, d = load(args["lib"])
xs = [np.load(f) for f in args["inputs"]]
m = create(d)
for name, idx in (("valid", xs[1]), ("bad", np.array([0, 6, 2, 2], dtype=np.int64)),
                  ("negative", np.array([0, -7, 2, 2], dtype=np.int64))):
    st, outs = run_device(d, m, [xs[0], idx])
    result[name] = st
    result[name + "_host"] = run_host(d, m, [xs[0], idx])[0]
    if name == "valid":
        save(outs, args["prefix"])
d.destroy(m)
'''


def test_sim_index_check(models, builds, tmp_path):
    np = require("numpy")
    m = models["gather"]
    lib, _ = builds("gather-sim")
    x, idx = m.inputs
    expect = x[idx] * np.float32(2.0)
    compare(m.ref[0], expect, "gather eager vs numpy")
    for extra in ([], ["--device"]):
        compare(run_lib(lib, m.inputs, *extra)[0], m.ref[0], f"gather[cuda-sim{','.join([''] + extra)}]")

    bad = tmp_path / "bad.npy"
    np.save(bad, np.array([0, 6, 2, 2], dtype=np.int64))
    for extra in ([], ["--device"]):
        r = doccc_cmd("run", lib, "-i", m.files[0], "-i", bad, "-o", tmp_path / "y.npy", *extra)
        assert r.returncode == 1, fmt_result(r)
        assert "index out of range" in r.stderr, fmt_result(r)

    res, _, info = run_script(INDEX, lib=str(lib), inputs=[str(f) for f in m.files], prefix=str(tmp_path / "o_"))
    assert res["valid"] == 0 and res["valid_host"] == 0, info
    compare(np.load(tmp_path / "o_0.npy"), m.ref[0], "gather[cuda-sim,ctypes run]")
    for k in ("bad", "bad_host", "negative", "negative_host"):
        assert res[k] == 5, (k, info)


# ---- 8. the simulation's environment knobs ---------------------------------------------------------

NO_DEVICE = r'''
lib, d = load(args["lib"])
m = c_void_p()
result["create"] = d.create(byref(m), None)
result["error"] = err(d, None)
'''


# create's status: DOCCC_ERR_DEVICE (7) without a device, DOCCC_ERR_NOMEM (1)
# when the device's memory is too small for the workspace.
@pytest.mark.parametrize("env,texts,status", [
    ({"DOCCC_SIM_NO_DEVICE": "1"}, ["no CUDA-capable device"], 7),
    ({"DOCCC_SIM_DEVICE_MEMORY": "100"}, ["out of memory"], 1),
], ids=["no-device", "device-memory"])
def test_sim_environment(env, texts, status, models, builds, tmp_path):
    lib, _ = builds("convnet-sim")
    r = doccc_cmd("run", lib, *_io_args(models["convnet"], tmp_path), env=env)
    assert r.returncode == 1, fmt_result(r)
    assert "create failed:" in r.stderr, fmt_result(r)
    for t in texts:
        assert t in r.stderr, fmt_result(r)
    assert not (tmp_path / "y.npy").exists()

    res, _, info = run_script(NO_DEVICE, env=env, lib=str(lib))
    assert res["create"] == status, info
    for t in texts:
        assert t in (res["error"] or ""), info


def test_sim_create_failure_message_wording(builds, models, tmp_path):
    lib, _ = builds("convnet-sim")
    r = doccc_cmd("run", lib, *_io_args(models["convnet"], tmp_path), env={"DOCCC_SIM_NO_DEVICE": "1"})
    assert r.returncode == 1, fmt_result(r)
    assert not re.search(r"\b(\w+) \1\b", r.stderr), f"a doubled word in the message:\n{r.stderr}"


# ---- 9. block-cooperative kernels -------------------------------------------------------


def test_block_cooperative_reductions(tmp_path):
    """Few rows with long reductions run as one thread block per row (a shared-
    memory tree and barriers: DC_LAUNCH_SYNC): layer norm, a GEMV at batch 1,
    global float and int64 sums, an amax that must keep a NaN, softmax rows.
    Results match eager through both entry points."""
    torch = require("torch")
    np = require("numpy")

    class M(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.ln = torch.nn.LayerNorm(1000)
            self.fc = torch.nn.Linear(1000, 300)

        def forward(self, x, k, y):
            h = self.ln(x)
            return (self.fc(h), x.sum(), k.sum(), y.amax(dim=1), torch.softmax(x * 3, dim=-1))

    torch.manual_seed(0)
    m = M().eval()
    x = torch.randn(2, 1000)
    k = torch.randint(-2 ** 40, 2 ** 40, (3, 700))
    y = torch.randn(4, 900)
    y[2, 517] = float("nan")
    pt2 = tmp_path / "coop.pt2"
    with torch.no_grad():
        torch.export.save(torch.export.export(m, (x, k, y)), str(pt2))
        want = m(x, k, y)
    lib, _ = compile_capture(pt2, tmp_path / "out", "-t", "cuda", "--simulate", "--emit-source", "-n", "coop")
    src = (tmp_path / "out" / "coop.cu").read_text()
    assert src.count("DC_LAUNCH_SYNC(") >= 4 and "__syncthreads();" in src, "no block-cooperative kernel"
    assert "__shared__ double" in src or "__shared__ float" in src
    assert "__shared__ int64_t" in src, "the int64 sum did not take the cooperative form"
    for extra in ([], ["--device"]):
        got = run_lib(lib, [x.numpy(), k.numpy(), y.numpy()], *extra)
        for j, (g, w) in enumerate(zip(got, want)):
            w = w.numpy()
            if w.dtype == np.int64:
                assert np.array_equal(g, w), f"out{j} {extra}: int64 sum {g} != {w}"
            else:
                compare(g, w, f"coop out{j} {extra}") if not np.isnan(w).any() else \
                    np.testing.assert_allclose(g, w, rtol=1e-4, atol=1e-5, equal_nan=True)
        assert np.isnan(got[3][2]) and not np.isnan(got[3][[0, 1, 3]]).any(), got[3]


def test_shared_memory_tiled_contractions(tmp_path):
    """GEMMs, a convolution and a batched matmul of sizes that are no multiple
    of the 16x16 tiles run as shared-memory tiled kernels (X and Y slices
    loaded per block, barriers), the epilogue (bias, GELU, ReLU) fused; the
    results match eager through both entry points."""
    torch = require("torch")

    class M(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = torch.nn.Linear(70, 45)
            self.conv = torch.nn.Conv2d(5, 37, 3, padding=1)

        def forward(self, x, img, a, b):
            return (torch.nn.functional.gelu(self.fc(x)), torch.relu(self.conv(img)), torch.bmm(a, b))

    torch.manual_seed(0)
    m = M().eval()
    xs = (torch.randn(53, 70), torch.randn(2, 5, 9, 11), torch.randn(3, 33, 40), torch.randn(3, 40, 35))
    pt2 = tmp_path / "gt.pt2"
    with torch.no_grad():
        torch.export.save(torch.export.export(m, xs), str(pt2))
        want = m(*xs)
    lib, _ = compile_capture(pt2, tmp_path / "out", "-t", "cuda", "--simulate", "--emit-source", "-n", "gt")
    src = (tmp_path / "out" / "gt.cu").read_text()
    assert src.count("dc_xs[dc_kk][dc_r] = dc_ra[dc_j];") >= 3, "not every contraction took the tiled kernel"
    for extra in ([], ["--device"]):
        got = run_lib(lib, [x.numpy() for x in xs], *extra)
        for j, (g, w) in enumerate(zip(got, want)):
            compare(g, w.numpy(), f"tiled out{j} {extra}")
