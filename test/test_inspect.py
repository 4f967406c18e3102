"""`doccc inspect`: what a library, static archive or weights file is, read
from the file alone.

A small Linear+ReLU model is compiled for sequential, openmp, -t cuda
--simulate and (with nvcc) a real -t cuda build; inspect's text and --json
report is checked against what the compile says elsewhere (the header's
comment and macros, the descriptor read through dlopen with ctypes) and
against the weights file. Libraries inspect must refuse (libm, text, a
truncated ELF, an ELF without the section, damaged info sections) exit 1
with a message that names the file; usage errors exit 2. An old library
(descriptor ABI 2, test/inspect/abi2_model.c) still runs with `doccc run`.
"""

import ctypes
import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from conftest import compile_model, doccc_cmd, doccc_path, fmt_result, parse_header, require, target_args
from test_gpu import require_cmd

HERE = Path(__file__).resolve().parent


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    torch = require("torch")
    d = tmp_path_factory.mktemp("inspect")

    class Net(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.l = torch.nn.Linear(8, 4)

        def forward(self, x):
            return torch.relu(self.l(x))

    torch.manual_seed(0)
    ep = torch.export.export(Net().eval(), (torch.randn(2, 8),))
    pt2 = d / "tiny.pt2"
    torch.export.save(ep, str(pt2))
    return pt2


def inspect(path, *extra):
    return doccc_cmd("inspect", path, *extra)


def inspect_json(path):
    r = inspect(path, "--json")
    assert r.returncode == 0, fmt_result(r)
    return json.loads(r.stdout)


def header_facts(hdr):
    """target, category, options, input sha256 and workspace bytes from the header's comment."""
    text = Path(hdr).read_text()
    m = re.search(r"\* target (\S+), category (\S+)\n \* options: (.*)\n \* input sha256 ([0-9a-f]{64})", text)
    ws = re.search(r"allocates\n \* the workspace \((\d+) bytes\)|workspace \((\d+) bytes\)", text)
    return m.group(1), m.group(2), m.group(3), m.group(4), int(ws.group(1) or ws.group(2))


def check_report(lib, target, device, simulated, external=False):
    """inspect LIB --json and its text against the header; returns the JSON.
    device: False, or the device backend ("cuda", "rocm")."""
    info = inspect_json(lib)
    hdr = lib.parent / "tiny.h"
    tg, cat, opts, sha, ws = header_facts(hdr)
    macros = parse_header(hdr)
    assert info["doccc_info"] == 1 and info["abi_version"] == 6, info
    assert info["dims"] == [], info
    assert info["format"] == "shared library" and info["member"] is None and info["file"] == str(lib)
    assert info["name"] == "tiny" and info["target"] == tg == target and info["category"] == cat
    assert info["options"] == opts and info["input_sha256"] == sha and info["workspace_size"] == ws
    assert info["march"], info
    assert info["device_resident"] is bool(device) and info["device_backend"] == (device or None)
    assert info["simulated"] is simulated and info["host_build_of"] is None
    assert info["weights_external"] is external and info["weights_size"] > 0
    assert re.fullmatch(r"[0-9a-f]{64}", info["weights_sha256"])
    ver = doccc_cmd("--version").stdout.split()[-1]
    assert info["doccc_version"] == ver
    assert info["inputs"] == [{"name": "x", "dtype": "float32", "shape": [2, 8], "numel": 16, "nbytes": 64}]
    assert info["outputs"] == [{"name": "relu", "dtype": "float32", "shape": [2, 4], "numel": 8, "nbytes": 32}]
    assert macros["TINY_INPUT0_SHAPE"] == "{2, 8}" and macros["TINY_DEVICE_RESIDENT"] == str(int(bool(device)))
    r = inspect(lib)
    assert r.returncode == 0 and r.stderr == "", fmt_result(r)
    want = [f"{lib}: doccc shared library", "  name              tiny", f"  target            {target}",
            f"  march             {info['march']}", f"  device resident   {'yes' if device else 'no'}",
            f"  simulated         {'yes' if simulated else 'no'}", f"  input sha256      {sha}",
            f"  options           {opts}", f"  weights external  {'yes' if external else 'no'}",
            f"  weights sha256    {info['weights_sha256']}", f"  workspace size    {ws}",
            "    x  float32 [2, 8]  64 bytes", "    relu  float32 [2, 4]  32 bytes"]
    lines = r.stdout.splitlines()
    for w in want:
        assert w in lines, f"{w!r} not in\n{r.stdout}"
    return info


# ---- ctypes: the descriptor's abi-3 fields, seen by a loader that dlopens ------

class TensorDesc(ctypes.Structure):
    _fields_ = [("name", ctypes.c_char_p), ("dtype", ctypes.c_int), ("rank", ctypes.c_int),
                ("shape", ctypes.POINTER(ctypes.c_int64)), ("numel", ctypes.c_int64), ("nbytes", ctypes.c_size_t)]


_FN = ctypes.c_void_p
ModelDesc = type("ModelDesc", (ctypes.Structure,), {"_fields_": [
    ("abi_version", ctypes.c_int), ("name", ctypes.c_char_p), ("target", ctypes.c_char_p),
    ("category", ctypes.c_char_p), ("doccc_version", ctypes.c_char_p), ("input_hash", ctypes.c_char_p),
    ("ninputs", ctypes.c_int), ("noutputs", ctypes.c_int), ("inputs", ctypes.POINTER(TensorDesc)),
    ("outputs", ctypes.POINTER(TensorDesc)), ("workspace_size", ctypes.c_size_t), ("weights_embedded", ctypes.c_int),
    ("create", _FN), ("run", _FN), ("destroy", _FN), ("strerror", _FN), ("set_num_threads", _FN),
    ("device_resident", ctypes.c_int), ("device_backend", ctypes.c_char_p), ("simulated", ctypes.c_int),
    ("run_host", _FN), ("set_stream", _FN), ("sync", _FN), ("last_error", _FN), ("set_log", _FN),
    ("device_alloc", _FN), ("device_free", _FN), ("device_copy", _FN),
    ("march", ctypes.c_char_p), ("options", ctypes.c_char_p), ("weights_size", ctypes.c_size_t),
    ("weights_sha256", ctypes.c_char_p), ("info", ctypes.c_char_p),
    ("ndims", ctypes.c_int), ("dims", ctypes.c_void_p), ("input_dims", ctypes.POINTER(ctypes.c_char_p)),
    ("output_dims", ctypes.POINTER(ctypes.c_char_p)), ("set_dims", _FN), ("infer_dims", _FN), ("output_shape", _FN),
    ("nstates", ctypes.c_int), ("states", ctypes.POINTER(TensorDesc)), ("state_inplace", ctypes.POINTER(ctypes.c_int)),
    ("reset", _FN), ("get_state", _FN), ("set_state", _FN), ("copy_state", _FN),
    ("input_written", ctypes.POINTER(ctypes.c_int)),
    ("nnodes", ctypes.c_int), ("nodes", ctypes.c_void_p), ("set_hook", _FN)]})


def check_descriptor(lib, info):
    """The abi-3 to abi-6 fields of doccc_model (dlopen) agree with inspect's report."""
    so = ctypes.CDLL(str(lib))
    d = ModelDesc.in_dll(so, "doccc_model")
    assert d.abi_version == 6
    assert d.nnodes == 0 and not d.nodes and d.set_hook is None  # built without --profile or --values
    assert d.nstates == len(info.get("states", [])) and (d.reset is None) == (d.nstates == 0)
    assert not d.input_written  # no input written in place: NULL
    assert d.ndims == len(info["dims"]) and (d.set_dims is None) == (d.ndims == 0)
    for i, t in enumerate(info["inputs"]):
        assert d.input_dims[i].decode() == ",".join(str(x) for x in t["shape"])
    assert d.march.decode() == info["march"] and d.options.decode() == info["options"]
    assert d.weights_size == info["weights_size"] and d.weights_sha256.decode() == info["weights_sha256"]
    text = json.loads(d.info.decode())
    assert {k: v for k, v in info.items() if k not in ("file", "format", "member")} == text
    assert d.weights_embedded == (0 if info["weights_external"] else 1)


# ---- libraries ----------------------------------------------------------------

@pytest.mark.parametrize("target", ["sequential", "openmp"])
def test_cpu_library(tiny, tmp_path, target):
    lib = compile_model(tiny, target, tmp_path / target, "-c", "desktop")
    info = check_report(lib, target, False, False)
    assert info["category"] == "desktop" and info["march"] == "x86-64-v3"
    check_descriptor(lib, info)


def test_cuda_simulated(tiny, tmp_path):
    lib = compile_model(tiny, "cuda-sim", tmp_path / "sim")
    info = check_report(lib, "cuda", "cuda", True)
    assert info["march"].startswith("sm_") and "simulate" in info["options"]
    check_descriptor(lib, info)


def test_host_fallback(tmp_path):
    """-t cuda of a model with a step that has no GPU expansion builds for
    the host: inspect says which GPU target it is the host build of."""
    torch = require("torch")

    class LongAttention(torch.nn.Module):
        def forward(self, q, k, v):
            return torch.nn.functional.scaled_dot_product_attention(q, k, v)

    ep = torch.export.export(LongAttention(), (torch.randn(1, 1, 2, 8), torch.randn(1, 1, 20000, 8),
                                               torch.randn(1, 1, 20000, 8)))
    pt2 = tmp_path / "attn.pt2"
    torch.export.save(ep, str(pt2))
    # attention in its row form: 20000 keys overflow a GPU thread's locals
    lib = compile_model(pt2, "cuda-sim", tmp_path / "fb", "--pass-opt", "expand.attention_scores_mb=0")
    info = inspect_json(lib)
    assert info["host_build_of"] == "cuda" and info["device_resident"] is False, info
    assert info["device_backend"] is None and info["target"] == "cuda", info
    assert "  host build of     cuda" in inspect(lib).stdout.splitlines()
    check_descriptor(lib, info)


@pytest.mark.parametrize("target,compiler,arch", [("cuda", "nvcc", "sm_90"), ("rocm", "hipcc", "gfx90a")])
def test_gpu_toolchain(tiny, tmp_path, target, compiler, arch):
    """A real nvcc or hipcc build: inspect reads it on a machine without a
    GPU or its runtime (it never loads the library)."""
    require_cmd(compiler)
    lib = compile_model(tiny, target, tmp_path / target, "-c", "server")
    info = check_report(lib, target, target, False)
    assert info["march"] == arch and info["category"] == "server"


def test_external_weights(tiny, tmp_path):
    lib = compile_model(tiny, "sequential", tmp_path / "ext", "--external-weights")
    info = check_report(lib, "sequential", False, False, external=True)
    check_descriptor(lib, info)
    wf = lib.parent / "tiny.weights"
    w = inspect_json(wf)
    assert w == {"file": str(wf), "format": "weights", "weights_size": info["weights_size"],
                 "data_size": info["weights_size"], "weights_sha256": info["weights_sha256"],
                 "data_sha256": info["weights_sha256"], "intact": True}
    r = inspect(wf)
    assert r.returncode == 0 and "  intact            yes" in r.stdout.splitlines(), fmt_result(r)
    # one byte of the data changed: reported, exit 1, the report still printed
    data = bytearray(wf.read_bytes())
    data[128 + 5] ^= 1
    bad = tmp_path / "bad.weights"
    bad.write_bytes(bytes(data))
    for extra in ((), ("--json",)):
        r = inspect(bad, *extra)
        assert r.returncode == 1, fmt_result(r)
        assert f"{bad}: error: the weights file is damaged or was altered" in r.stderr, fmt_result(r)
    rep = json.loads(inspect(bad, "--json").stdout)
    assert rep["intact"] is False and rep["weights_sha256"] == info["weights_sha256"]
    assert rep["data_sha256"] != rep["weights_sha256"]
    assert "  intact            NO" in inspect(bad).stdout.splitlines()
    # truncated data, truncated header, a header whose hash is no hex
    short = tmp_path / "short.weights"
    short.write_bytes(bytes(data[:-7]))
    r = inspect(short)
    assert r.returncode == 1 and "other than its header says" in r.stderr, fmt_result(r)
    head = tmp_path / "head.weights"
    head.write_bytes(bytes(data[:100]))
    r = inspect(head)
    assert r.returncode == 1 and f"{head}: error: truncated doccc weights file" in r.stderr and not r.stdout
    nohex = bytearray(wf.read_bytes())
    nohex[20] = ord("Z")
    (tmp_path / "nohex.weights").write_bytes(bytes(nohex))
    r = inspect(tmp_path / "nohex.weights")
    assert r.returncode == 1 and "sha256 is no hex digest" in r.stderr, fmt_result(r)


def test_static_archive(tiny, tmp_path):
    """libNAME.a from --emit-source (cc -c NAME.c; ar rcs), with another
    member whose name needs the archive's long-name table."""
    cc = require_cmd("clang")
    out = tmp_path / "a"
    lib = compile_model(tiny, "sequential", out, "--emit-source", "--external-weights", "-c", "desktop")
    so_info = inspect_json(lib)
    obj = tmp_path / "tiny_model_object_with_a_long_name.o"
    other = tmp_path / "another_long_member_name.o"
    (tmp_path / "other.c").write_text("int other_fn(void) { return 1; }\n")
    # doccc's own flags (`doccc -v` shows them): at -O1 clang takes minutes
    # and gigabytes on this source (seen with this machine's clang)
    flags = ["-std=c11", "-O3", "-fPIC", "-fno-math-errno", "-fwrapv", "-march=x86-64-v3"]
    for src, o in ((out / "tiny.c", obj), (tmp_path / "other.c", other)):
        subprocess.run([cc, "-c", *flags, str(src), "-o", str(o)], check=True)
    ar = tmp_path / "libtiny.a"
    subprocess.run(["ar", "rcs", str(ar), str(other), str(obj)], check=True)
    info = inspect_json(ar)
    assert info["format"] == "static archive" and info["member"] == obj.name and info["file"] == str(ar)
    strip = ("file", "format", "member")
    assert {k: v for k, v in info.items() if k not in strip} == {k: v for k, v in so_info.items() if k not in strip}
    r = inspect(ar)
    assert r.returncode == 0 and r.stdout.startswith(f"{ar}: doccc static archive (model in {obj.name})\n")
    # the object itself
    assert inspect_json(obj)["format"] == "object file"
    # an archive without a doccc member; a truncated archive
    none = tmp_path / "libnone.a"
    subprocess.run(["ar", "rcs", str(none), str(other)], check=True)
    r = inspect(none)
    assert r.returncode == 1 and f"{none}: error: no .doccc_info section in any member" in r.stderr
    cut = tmp_path / "libcut.a"
    cut.write_bytes(ar.read_bytes()[:-100])
    r = inspect(cut)
    assert r.returncode == 1 and f"{cut}: error: damaged ar archive" in r.stderr, fmt_result(r)
    # two doccc models in one archive
    obj2 = tmp_path / "second.o"
    shutil.copy(obj, obj2)
    two = tmp_path / "libtwo.a"
    subprocess.run(["ar", "rcs", str(two), str(obj), str(obj2)], check=True)
    r = inspect(two)
    assert r.returncode == 1 and "two members hold a doccc model" in r.stderr, fmt_result(r)


@pytest.mark.parametrize("target", ["openmp", "cuda-sim"])
def test_doccc_static_archive(tiny, tmp_path, target):
    """doccc -o libNAME.a: the archive's model object holds the same
    description as the shared library of the same build."""
    so = compile_model(tiny, target, tmp_path / "so")
    ar = tmp_path / "a" / "libtiny.a"
    ar.parent.mkdir()
    r = doccc_cmd(tiny, *target_args(target), "-o", ar)
    assert r.returncode == 0, fmt_result(r)
    info, so_info = inspect_json(ar), inspect_json(so)
    assert info["format"] == "static archive" and info["member"] == "tiny.o", info
    strip = ("file", "format", "member")
    assert {k: v for k, v in info.items() if k not in strip} == {k: v for k, v in so_info.items() if k not in strip}


# ---- what is not a doccc library ------------------------------------------------

def build_so(tmp_path, name, source):
    cc = require_cmd("cc")
    src = tmp_path / f"{name}.c"
    src.write_text(source)
    so = tmp_path / f"lib{name}.so"
    subprocess.run([cc, "-shared", "-fPIC", "-o", str(so), str(src)], check=True)
    return so


def info_section(text):
    """C source of a library whose .doccc_info holds text."""
    lit = json.dumps(text)  # a JSON string is a C string literal for these texts
    return f"static const char info[] __attribute__((section(\".doccc_info\"), used)) = {lit};\n"


def expect_refused(path, msg):
    r = inspect(path)
    assert r.returncode == 1 and not r.stdout, fmt_result(r)
    assert r.stderr.startswith(f"{path}: error: ") or r.stderr.startswith(f"{path}: .doccc_info"), fmt_result(r)
    assert msg in r.stderr, fmt_result(r)
    r = inspect(path, "--json")
    assert r.returncode == 1 and not r.stdout, fmt_result(r)


def test_not_a_doccc_library(tiny, tmp_path):
    libm = next((p for p in ("/lib/x86_64-linux-gnu/libm.so.6", "/usr/lib/x86_64-linux-gnu/libm.so.6",
                             "/lib64/libm.so.6") if Path(p).exists()), None)
    if libm:
        expect_refused(libm, "no .doccc_info section: not a doccc library")
    plain = build_so(tmp_path, "plain", "int f(void) { return 1; }\n")
    expect_refused(plain, "no .doccc_info section: not a doccc library")
    text = tmp_path / "notes.txt"
    text.write_text("hello\n")
    expect_refused(text, "not a doccc library: neither an ELF file, an ar archive nor a doccc weights file")
    expect_refused(tiny, "not a doccc library")
    empty = tmp_path / "empty.so"
    empty.write_bytes(b"")
    expect_refused(empty, "not a doccc library")
    expect_refused(tmp_path / "missing.so", "cannot open: No such file or directory")
    expect_refused(tmp_path, "not a regular file")
    lib = compile_model(tiny, "sequential", tmp_path / "seq")
    data = lib.read_bytes()
    for n, msg in ((20, "truncated ELF file"), (100, "section headers at offset"), (len(data) // 2, "outside the file")):
        cut = tmp_path / f"cut{n}.so"
        cut.write_bytes(data[:n])
        expect_refused(cut, msg)
    elf32 = tmp_path / "elf32.so"
    elf32.write_bytes(b"\x7fELF\x01\x01\x01" + bytes(57))
    expect_refused(elf32, "only 64-bit little-endian ELF files are read")
    # the section holds what no doccc wrote
    expect_refused(build_so(tmp_path, "notjson", info_section("not json")), "malformed JSON")
    expect_refused(build_so(tmp_path, "other", info_section('{"hello": 1}')), "holds no doccc info object")
    expect_refused(build_so(tmp_path, "partial", info_section('{"doccc_info": 1, "name": "m"}')),
                   "damaged doccc info: 'doccc_version' is missing")
    good = {k: v for k, v in inspect_json(lib).items() if k not in ("file", "format", "member")}
    bad = dict(good, inputs=[{"name": "x", "dtype": "float32", "shape": {"a": 1}, "numel": 1, "nbytes": 4}])
    expect_refused(build_so(tmp_path, "badshape", info_section(json.dumps(bad))), "inputs[0] lacks")
    expect_refused(build_so(tmp_path, "neg", info_section(json.dumps(dict(good, weights_size=-1)))),
                   "'weights_size' is not a non-negative integer")
    two = info_section(json.dumps(good)) + info_section(json.dumps(good)).replace("info[]", "info2[]")
    expect_refused(build_so(tmp_path, "two", two), "more than one doccc model in one file")
    # a later info version: the known keys shown, a note says so
    newer = build_so(tmp_path, "newer", info_section(json.dumps(dict(good, doccc_info=2, future_key=[1]))))
    r = inspect(newer, "--json")
    assert r.returncode == 0 and "doccc info version 2 is newer" in r.stderr, fmt_result(r)
    got = json.loads(r.stdout)
    assert got["doccc_info"] == 2 and got["name"] == "tiny" and "future_key" not in got


def test_usage_errors(tmp_path):
    for args, msg in (((), "no file given"), (("--bogus", "x"), "unknown option '--bogus'"),
                      (("a.so", "b.so"), "unexpected argument 'b.so'")):
        r = doccc_cmd("inspect", *args)
        assert r.returncode == 2 and msg in r.stderr and "usage: doccc inspect" in r.stderr, fmt_result(r)
    r = doccc_cmd("inspect", "--help")
    assert r.returncode == 0 and r.stdout.startswith("usage: doccc inspect")


def test_abi2_library_still_runs(tmp_path):
    """A descriptor of ABI version 2 (written before this one grew) still
    loads in `doccc run`; inspect says it lacks the info section."""
    np = require("numpy")
    cc = require_cmd("cc")
    so = tmp_path / "libold.so"
    subprocess.run([cc, "-shared", "-fPIC", "-O1", "-o", str(so), str(HERE / "inspect" / "abi2_model.c")], check=True)
    x = np.arange(4, dtype=np.float32)
    np.save(tmp_path / "x.npy", x)
    r = doccc_cmd("run", so, "-i", tmp_path / "x.npy", "-o", tmp_path / "y.npy")
    assert r.returncode == 0, fmt_result(r)
    np.testing.assert_array_equal(np.load(tmp_path / "y.npy"), x + 1)
    expect_refused(so, "or one built before descriptor ABI 3")


# ---- names from the model ---------------------------------------------------------

ODD = 'in "q\\" \n\x1b[2J\u202e é\t%s'


def test_odd_names(tiny, tmp_path):
    """Names with quotes, backslashes, control characters, a bidi control and
    non-ASCII text: exact in --json, made visible in the text report, and
    the library's own info text is valid JSON."""
    import export as export_mod
    from test_inject import _assert_clean_text, _walk_rename

    def edit(model):
        sig = model["graph_module"]["signature"]
        x = next(s["user_input"]["arg"]["as_tensor"]["name"] for s in sig["input_specs"] if "user_input" in s)
        y = next(s["user_output"]["arg"]["as_tensor"]["name"] for s in sig["output_specs"] if "user_output" in s)
        return _walk_rename(_walk_rename(model, x, "x " + ODD), y, "y " + ODD)

    odd = export_mod.rewrite_pt2(tiny, tmp_path / "odd.pt2", edit)
    lib = compile_model(odd, "sequential", tmp_path / "odd", "-n", "tiny")
    info = inspect_json(lib)
    assert info["inputs"][0]["name"] == "x " + ODD and info["outputs"][0]["name"] == "y " + ODD
    r = subprocess.run([str(doccc_path()), "inspect", str(lib)], capture_output=True)
    assert r.returncode == 0, r
    _assert_clean_text(r.stdout, "inspect's text report")
    text = r.stdout.decode()
    assert '    x in "q\\" \\n\\x1b[2J\\xe2\\x80\\xae é\\t%s  float32 [2, 8]  64 bytes' in text.splitlines(), text
    check_descriptor(lib, info)


def test_dynamic_library(tmp_path):
    """A library with a run-time batch: inspect shows the dim and its range,
    sizes as expressions, numel and nbytes null; the descriptor's abi-4
    fields say the same, and --report gives the workspace's bound."""
    torch = require("torch")

    class Net(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.l = torch.nn.Linear(8, 4)

        def forward(self, x):
            return torch.relu(self.l(x)).reshape(-1)

    torch.manual_seed(0)
    b = torch.export.Dim("b", min=1, max=32)
    ep = torch.export.export(Net().eval(), (torch.randn(3, 8),), dynamic_shapes={"x": {0: b}})
    pt2 = tmp_path / "dyn.pt2"
    torch.export.save(ep, str(pt2))
    lib = compile_model(pt2, "sequential", tmp_path / "out", "--report", str(tmp_path / "r.json"))
    info = inspect_json(lib)
    (sym,) = info["dims"]
    assert sym["min"] == 1 and sym["max"] == 32, info["dims"]
    s = sym["name"]
    assert info["inputs"] == [{"name": "x", "dtype": "float32", "shape": [s, 8], "numel": None, "nbytes": None}]
    assert info["outputs"][0]["shape"] == [f"{s}*4"] and info["outputs"][0]["numel"] is None
    check_descriptor(lib, info)
    text = inspect(lib).stdout.splitlines()
    assert "  run-time dims     1" in text and f"    {s}  [1, 32]" in text, text
    assert f"    x  float32 [{s}, 8]  bytes by the run-time dims" in text, text
    rep = json.loads((tmp_path / "r.json").read_text())
    assert rep["run_time_dims"] == [{"name": s, "min": 1, "max": 32}]
    assert rep["workspace"]["max_bytes"] == rep["workspace"]["bytes_at_create"] > 0
    assert rep["workspace"]["bound"] == "max_dims"
    # --dynamic=no: the example size, no dims
    lib2 = compile_model(pt2, "sequential", tmp_path / "fixed", "--dynamic=no")
    info2 = inspect_json(lib2)
    assert info2["dims"] == [] and info2["inputs"][0]["shape"] == [3, 8]
