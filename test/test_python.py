"""The Python loader (python/doccc): doccc.load on libraries the suite compiles,
against eager PyTorch.

  - the ctypes mirror of doccc_model_desc is the header's: field names in
    order, each abi version's cut, and every offset as a C compiler lays
    the struct out; the dtype and status tables are the header's enums;
  - real exported models (small_cnn of test/models.py on sequential and
    openmp) on numpy arrays, torch tensors and out= buffers, with the
    metadata (name, target, inputs, outputs, info); a model with several
    outputs; bfloat16 (torch bf16 tensors and numpy uint16 bits);
  - run-time dims: one library at many sizes, ranks and ranges refused;
  - state: a buffer updated in forward, step by step against eager; reset,
    get_state/set_state by index and name, copy_state_from, and two loads
    of one path are independent instances;
  - an input the program writes in place comes back written, as in eager,
    from a contiguous array, a non-contiguous tensor, and not into a
    read-only array;
  - errors: wrong count, dtype and shape name the input (TypeError,
    ValueError); an out-of-range index is doccc.Error with DOCCC_ERR_INDEX;
    threads on a sequential build, weights missing or wrong;
  - threads: two instances in two threads; one instance shared by four
    threads at different run-time dims (its lock serializes them);
  - device-resident libraries in their simulation (-t cuda --simulate):
    host arrays through run_host, DeviceArrays from the library's own
    device_alloc/device_copy, mixed inputs refused;
  - `pip install --no-deps --no-build-isolation --target` installs the
    package offline.

The package is imported from the repository (python/ on sys.path): no
install needed. The libraries run in this process, as a user's would.
"""

import ctypes
import os
import re
import shutil
import subprocess
import sys
import threading
import types

import pytest

from conftest import ATOL, RTOL, ROOT, compare, compile_model, export_eager, fmt_result, require

sys.path.insert(0, str(ROOT / "python"))


@pytest.fixture(scope="module")
def dc():
    require("numpy")
    import doccc
    assert doccc.__file__.startswith(str(ROOT / "python")), doccc.__file__
    return doccc


# ---- the descriptor's mirror against backends/doccc_model.h --------------------

def header_struct():
    """[(field, abi version)] of doccc_model_desc in the header, in order."""
    text = (ROOT / "backends" / "doccc_model.h").read_text()
    body = re.search(r"typedef struct \{\n(\tint abi_version;.*?)\} doccc_model_desc;", text, re.S).group(1)
    body = re.sub(r"/\* abi_version >= (\d+)", r"@abi \1; /*", body)  # the version marks, before comments go
    body = re.sub(r"/\*.*?\*/", "", body, flags=re.S)
    fields, abi = [], 1
    for decl in (s.strip() for s in body.split(";")):
        if decl.startswith("@abi"):
            abi = int(decl.split()[1])
        elif "(*" in decl:  # a function pointer
            fields.append((re.search(r"\(\*(\w+)\)", decl).group(1), abi))
        elif decl:  # "int ninputs, noutputs", "const char *const *input_dims"
            fields += [(re.findall(r"\w+", part)[-1], abi) for part in decl.split(",")]
    return fields


def header_enum(first):
    """{value: name} of the header's enum that starts with first."""
    text = (ROOT / "backends" / "doccc_model.h").read_text()
    body = re.search(r"enum \{\s*(" + first + r" = 0.*?)\};", text, re.S).group(1)
    body = re.sub(r"/\*.*?\*/", "", body, flags=re.S)
    return {int(v): n for n, v in re.findall(r"(DOCCC_\w+) = (\d+)", body)}


def test_desc_mirror_matches_header(dc, tmp_path):
    from doccc import _desc
    fields = header_struct()
    mirror = [(n, v) for v in sorted(_desc._FIELDS) for n, _ in _desc._FIELDS[v]]
    assert [n for n, _ in mirror] == [n for n, _ in fields], "field names differ from the header's"
    # abi 5's tail has no "abi_version >= 5" line of its own: the state fields' comment says "abi_version >= 5"
    assert [v for _, v in mirror] == [v for _, v in fields], "abi cuts differ from the header's"
    assert _desc.ABI_VERSION == int(re.search(r"#define DOCCC_ABI_VERSION (\d+)",
                                              (ROOT / "backends" / "doccc_model.h").read_text()).group(1))
    # every field's offset and size, and each struct's size, as the C compiler lays them out
    structs = [("doccc_model_desc", _desc.ModelDesc, [n for n, _ in fields]),
               ("doccc_tensor_desc", _desc.TensorDesc, [n for n, _ in _desc.TensorDesc._fields_]),
               ("doccc_dim_desc", _desc.DimDesc, [n for n, _ in _desc.DimDesc._fields_])]
    lines, want = [], []
    for cname, cls, names in structs:
        for n in names:
            lines.append(f'\tprintf("{cname}.{n} %zu %zu\\n", offsetof({cname}, {n}), sizeof((({cname} *)0)->{n}));')
            want.append(f"{cname}.{n} {getattr(cls, n).offset} {getattr(cls, n).size}")
        lines.append(f'\tprintf("sizeof({cname}) %zu\\n", sizeof({cname}));')
        want.append(f"sizeof({cname}) {ctypes.sizeof(cls)}")
    src = tmp_path / "layout.c"
    src.write_text('#include <stdio.h>\n#include <stddef.h>\n#include "doccc_model.h"\nint main(void)\n{\n'
                   + "\n".join(lines) + "\n\treturn 0;\n}\n")
    exe = tmp_path / "layout"
    r = subprocess.run(["cc", "-I", str(ROOT / "backends"), str(src), "-o", str(exe)], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    got = subprocess.run([str(exe)], capture_output=True, text=True, check=True).stdout.splitlines()
    assert got == want, [(g, w) for g, w in zip(got, want) if g != w]
    # each older abi's struct is the newest one cut short
    for v, cls in _desc.DESC.items():
        assert [n for n, _ in cls._fields_] == [n for n, a in fields if a <= v]
    assert header_enum("DOCCC_OK") == _desc.STATUS
    assert {k: n[len("DOCCC_"):].lower() for k, n in header_enum("DOCCC_F32").items()} == \
        {k: {"float32": "f32", "float64": "f64", "float16": "f16", "bfloat16": "bf16", "int64": "i64", "int32": "i32",
             "int16": "i16", "int8": "i8", "uint8": "u8", "bool": "bool"}[nm] for k, (nm, _) in _desc.DTYPES.items()}


# ---- real models against eager ---------------------------------------------------

@pytest.mark.parametrize("target", ["sequential", "openmp"])
def test_small_cnn_matches_eager(dc, exports, target, tmp_path):
    torch = require("torch")
    np = require("numpy")
    e = exports.get("small_cnn", batch=4)
    lib = compile_model(e.path, target, tmp_path / target, "-c", "desktop", *e.weight_args())
    m = dc.load(lib, threads=2 if target == "openmp" else None)
    assert m.name == lib.stem[3:] and m.target == target and m.abi_version == 6 and not m.device_resident
    assert m.info["name"] == m.name and m.info["target"] == target
    assert [(t.name, t.dtype, t.shape) for t in m.inputs] == \
        [(n, "float32", tuple(s)) for n, _, s in e.inputs], (m.inputs, e.inputs)
    assert len(m.outputs) == 1 and m.outputs[0].shape == e.ref[0].shape and m.dims == [] and m.states == []
    y = m(e.x)
    assert isinstance(y, np.ndarray) and y.ctypes.data % 64 == 0
    compare(y, e.ref[0], f"small_cnn[{target},python numpy]")
    yt = m(torch.from_numpy(e.x))
    assert isinstance(yt, torch.Tensor)
    compare(yt.numpy(), e.ref[0], f"small_cnn[{target},python torch]")
    out = np.zeros_like(e.ref[0])
    assert m.run(e.x, out=out) is out
    np.testing.assert_array_equal(out, y)
    # a non-contiguous input (the same values): copied, same result
    xt = np.asfortranarray(e.x)
    np.testing.assert_array_equal(m(xt), y)
    m.close()
    with pytest.raises(ValueError, match="closed"):
        m(e.x)


def test_several_outputs(dc, tmp_path):
    torch = require("torch")
    np = require("numpy")

    class Heads(torch.nn.Module):
        def __init__(self):
            super().__init__()
            torch.manual_seed(0)
            self.body = torch.nn.Linear(16, 32)
            self.cls = torch.nn.Linear(32, 5)

        def forward(self, x, mask):
            h = torch.relu(self.body(x))
            return self.cls(h), h.sum(-1), (h > 0.5) & mask, h.argmax(-1)

    xs = (torch.randn(3, 16), torch.rand(3, 32) > 0.3)
    pt2, ins, eager = export_eager(Heads().eval(), xs, tmp_path / "heads.pt2")
    m = dc.load(compile_model(pt2, "sequential", tmp_path / "b"))
    assert [(t.dtype, t.shape) for t in m.outputs] == [("float32", (3, 5)), ("float32", (3,)), ("bool", (3, 32)),
                                                       ("int64", (3,))]
    assert [t.dtype for t in m.inputs] == ["float32", "bool"]
    got = m(*ins)
    assert isinstance(got, tuple) and len(got) == 4
    for k, (g, w) in enumerate(zip(got, eager)):
        compare(g, w, f"heads output {k}")
    got_t = m(*xs)
    assert [g.dtype for g in got_t] == [torch.float32, torch.float32, torch.bool, torch.int64]
    np.testing.assert_array_equal(got_t[3].numpy(), eager[3])


def test_bfloat16(dc, tmp_path):
    torch = require("torch")
    np = require("numpy")

    class Lin(torch.nn.Module):
        def __init__(self):
            super().__init__()
            torch.manual_seed(0)
            self.l = torch.nn.Linear(16, 8)

        def forward(self, x):
            return torch.relu(self.l(x))

    m0 = Lin().to(torch.bfloat16).eval()
    x = torch.randn(4, 16).to(torch.bfloat16)
    pt2 = tmp_path / "lin_bf16.pt2"
    torch.export.save(torch.export.export(m0, (x,)), str(pt2))
    m = dc.load(compile_model(pt2, "sequential", tmp_path / "b"))
    assert m.inputs[0].dtype == "bfloat16" and m.outputs[0].dtype == "bfloat16"
    y = m(x)
    assert y.dtype == torch.bfloat16 and y.shape == (4, 8)
    with torch.no_grad():
        want = m0(x)
    np.testing.assert_allclose(y.float().numpy(), want.float().numpy(), rtol=2e-2, atol=2e-2)
    bits = m(x.view(torch.int16).numpy().view(np.uint16))  # numpy: the raw bits, as doccc run takes them
    assert bits.dtype == np.uint16
    np.testing.assert_array_equal(bits, y.view(torch.int16).numpy().view(np.uint16))
    with pytest.raises(TypeError, match=r"input 0 \('x'\) has dtype float32 but the model expects bfloat16"):
        m(x.float().numpy())


# ---- run-time dims -----------------------------------------------------------------

@pytest.fixture(scope="module")
def dyn(tmp_path_factory):
    torch = require("torch")

    class Mlp(torch.nn.Module):
        def __init__(self):
            super().__init__()
            torch.manual_seed(0)
            self.l1 = torch.nn.Linear(8, 16)
            self.l2 = torch.nn.Linear(16, 4)

        def forward(self, x):
            y = self.l2(torch.relu(self.l1(x)))
            return y, y.sum(0) * x.shape[0]

    d = tmp_path_factory.mktemp("dyn")
    model = Mlp().eval()
    b = torch.export.Dim("b", min=2, max=64)
    pt2 = d / "dmlp.pt2"
    torch.export.save(torch.export.export(model, (torch.randn(3, 8),), dynamic_shapes={"x": {0: b}}), str(pt2))
    return types.SimpleNamespace(model=model, lib=compile_model(pt2, "sequential", d / "b"))


def eager(model, *xs):
    torch = require("torch")
    with torch.no_grad():
        y = model(*[torch.as_tensor(x) for x in xs])
    return [t.numpy() for t in (y if isinstance(y, tuple) else (y,))]


def test_dynamic_sizes(dc, dyn):
    torch = require("torch")
    np = require("numpy")
    m = dc.load(dyn.lib)
    assert m.dims == [dc.Dim(m.dims[0].name, 2, 64)]
    assert m.inputs[0].shape == (None, 8) and m.outputs[0].shape == (None, 4) and m.outputs[1].shape == (4,)
    for n in (2, 17, 5, 64, 5):
        x = torch.randn(n, 8)
        y, s = m(x.numpy())
        assert y.shape == (n, 4)
        want = eager(dyn.model, x)
        compare(y, want[0], f"dmlp b={n}")
        compare(s, want[1], f"dmlp b={n} sum")
    with pytest.raises(dc.ShapeError, match=r"outside the range.*\[2, 64\]") as e:
        m(np.zeros((65, 8), np.float32))
    assert isinstance(e.value, ValueError) and e.value.status == 9 and e.value.name == "DOCCC_ERR_SHAPE"
    with pytest.raises(dc.ShapeError):
        m(np.zeros((4, 9), np.float32))
    with pytest.raises(ValueError, match=r"input 0 \('x'\) has shape \(4,\) \(rank 1\) but the model expects rank 2"):
        m(np.zeros(4, np.float32))
    # a refused size leaves the instance usable at the next
    x = torch.randn(7, 8)
    compare(m(x)[0].numpy(), eager(dyn.model, x)[0], "dmlp b=7 after errors")


def test_shared_instance_serializes(dc, dyn):
    """Four threads on one instance, each at its own batch size: set_dims and
    run are one step under the instance's lock, so each gets its own sizes'
    results."""
    np = require("numpy")
    m = dc.load(dyn.lib)
    assert isinstance(m._lock, type(threading.Lock()))
    rng = np.random.default_rng(0)
    cases = [rng.standard_normal((n, 8), dtype=np.float32) for n in (2, 9, 33, 64)]
    wants = [eager(dyn.model, x) for x in cases]
    bad = []

    def work(k):
        for _ in range(300):
            y, s = m(cases[k])
            if y.shape != wants[k][0].shape or not np.allclose(y, wants[k][0], rtol=RTOL, atol=ATOL) \
                    or not np.allclose(s, wants[k][1], rtol=RTOL, atol=1e-4):
                bad.append(k)
                return

    ts = [threading.Thread(target=work, args=(k,)) for k in range(4)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    assert not bad, f"threads {bad} got another size's results"


def test_instances_in_two_threads(dc, exports, tmp_path):
    np = require("numpy")
    e = exports.get("small_cnn", batch=4)
    lib = compile_model(e.path, "sequential", tmp_path / "b", "-c", "desktop", *e.weight_args())
    xs = [e.x, np.ascontiguousarray(e.x[::-1])]
    refs = [e.ref[0], eager(exports.model("small_cnn").eval(), xs[1])[0]]
    got = [[], []]

    def work(k):
        m = dc.load(lib)  # one instance per thread
        for _ in range(10):
            got[k].append(m(xs[k]))

    ts = [threading.Thread(target=work, args=(k,)) for k in range(2)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    assert [len(g) for g in got] == [10, 10]
    for k in range(2):
        for g in got[k]:
            np.testing.assert_allclose(g, refs[k], rtol=RTOL, atol=ATOL)


# ---- state ---------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def stream(tmp_path_factory):
    """A streaming cell whose hidden state is a buffer updated in forward."""
    torch = require("torch")

    class Cell(torch.nn.Module):
        def __init__(self):
            super().__init__()
            torch.manual_seed(0)
            self.i2h = torch.nn.Linear(6, 8)
            self.h2h = torch.nn.Linear(8, 8)
            self.register_buffer("h", torch.zeros(2, 8))
            self.register_buffer("steps", torch.zeros(1))

        def forward(self, x):
            h = torch.tanh(self.i2h(x) + self.h2h(self.h))
            self.h.copy_(h)
            self.steps.add_(1)
            return h * 2, self.steps * 1

    d = tmp_path_factory.mktemp("stream")
    ep = torch.export.export(Cell().eval(), (torch.randn(2, 6),))
    pt2 = d / "cell.pt2"
    torch.export.save(ep, str(pt2))
    return ep, compile_model(pt2, "openmp", d / "b")


def test_state_matches_eager(dc, stream):
    torch = require("torch")
    np = require("numpy")
    ep, lib = stream
    mod = ep.module()
    m = dc.load(lib)
    assert [(s.dtype, s.shape) for s in m.states] == [("float32", (2, 8)), ("float32", (1,))], m.states
    hname = m.states[0].name
    torch.manual_seed(1)
    xs = [torch.randn(2, 6) for _ in range(5)]
    outs = []
    for k, x in enumerate(xs):
        with torch.no_grad():
            want = mod(x)
        got = m(x.numpy())
        outs.append(got)
        compare(got[0], want[0].numpy(), f"cell step {k}")
        assert got[1].tolist() == [k + 1.0]
        np.testing.assert_allclose(m.get_state(hname), got[0] / 2, rtol=RTOL, atol=ATOL)
    after2 = None
    m.reset()
    np.testing.assert_array_equal(m.get_state(0), np.zeros((2, 8), np.float32))
    for k, x in enumerate(xs):
        got = m(x)
        np.testing.assert_array_equal(got[0].numpy(), outs[k][0])  # reset: the same sequence again
        if k == 1:
            after2 = (m.get_state(0), m.get_state(1))
            fork = dc.load(lib)  # a second load: its own, fresh state
            np.testing.assert_array_equal(fork.get_state(1), [0.0])
            fork.copy_state_from(m)
    # restore step 2's state: the rest of the sequence again
    m.set_state(hname, after2[0])
    m.set_state(1, torch.from_numpy(after2[1]))
    for k in (2, 3, 4):
        np.testing.assert_array_equal(m(xs[k].numpy())[0], outs[k][0])
        np.testing.assert_array_equal(fork(xs[k].numpy())[0], outs[k][0])  # the fork went on from step 2
    with pytest.raises(ValueError, match=r"state 0 .* has shape \(2, 8\), not \(8, 2\)"):
        m.set_state(0, np.zeros((8, 2), np.float32))
    with pytest.raises(TypeError):
        m.set_state(0, np.zeros((2, 8)))
    with pytest.raises(KeyError, match="no state 'nope'"):
        m.get_state("nope")
    with pytest.raises(ValueError, match="same library"):
        m.copy_state_from(object())


def test_input_written_back(dc, tmp_path):
    torch = require("torch")
    np = require("numpy")

    class M(torch.nn.Module):
        def forward(self, x, y):
            x.add_(1)
            return x * y

    x0, y = torch.randn(2, 3), torch.randn(2, 3)
    pt2 = tmp_path / "inplace.pt2"
    torch.export.save(torch.export.export(M(), (x0.clone(), y)), str(pt2))
    m = dc.load(compile_model(pt2, "sequential", tmp_path / "b"))
    assert m._written == [True, False]
    xe = x0.clone()
    ye = M()(xe, y)
    x = x0.numpy().copy()
    compare(m(x, y.numpy()), ye.numpy(), "inplace numpy")
    np.testing.assert_allclose(x, xe.numpy(), rtol=RTOL, atol=ATOL)  # written into the caller's array
    # a non-contiguous tensor: run on a copy, written back
    xt = x0.clone().t().contiguous().t()
    assert not xt.is_contiguous()
    got = m(xt, y)
    assert isinstance(got, torch.Tensor)
    np.testing.assert_allclose(xt.numpy(), xe.numpy(), rtol=RTOL, atol=ATOL)
    ro = x0.numpy().copy()
    ro.flags.writeable = False
    with pytest.raises(ValueError, match="written in place.*read-only"):
        m(ro, y.numpy())


# ---- errors ----------------------------------------------------------------------------

@pytest.fixture(scope="module")
def gather(tmp_path_factory):
    torch = require("torch")

    class Gather(torch.nn.Module):
        def forward(self, x, idx):
            return x[idx] * 2.0

    d = tmp_path_factory.mktemp("gather")
    xs = (torch.randn(6, 3), torch.tensor([0, 5, 2, 2]))
    pt2, ins, _ = export_eager(Gather(), xs, d / "gather.pt2")  # (its eager list is of rows: one output)
    return pt2, ins, eager(Gather(), *xs), d


def test_errors(dc, gather):
    np = require("numpy")
    pt2, (x, idx), want, d = gather
    m = dc.load(compile_model(pt2, "sequential", d / "seq"))
    compare(m(x, idx), want[0], "gather")
    with pytest.raises(TypeError, match=r"gather takes 2 inputs \(x, idx\), got 1"):
        m(x)
    with pytest.raises(ValueError, match=r"input 0 \('x'\) has shape \(6, 4\) but the model expects \(6, 3\)"):
        m(np.zeros((6, 4), np.float32), idx)
    with pytest.raises(TypeError, match=r"input 1 \('idx'\) has dtype int32 but the model expects int64"):
        m(x, idx.astype(np.int32))
    with pytest.raises(dc.Error) as e:
        m(x, np.array([0, 6, 2, 2]))
    err = e.value
    assert isinstance(err, RuntimeError) and not isinstance(err, ValueError)
    assert (err.status, err.name) == (5, "DOCCC_ERR_INDEX") and "index out of range" in str(err), err
    compare(m(x, idx), want[0], "gather after a failed run")
    with pytest.raises(dc.Error) as e:
        m.set_num_threads(4)
    assert e.value.name == "DOCCC_ERR_THREADS"
    m.set_num_threads(1)
    # a shared library that is not doccc's
    src = d / "other.c"
    src.write_text("int other;\n")
    r = subprocess.run(["cc", "-shared", "-fPIC", str(src), "-o", str(d / "libother.so")], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    with pytest.raises(ValueError, match="not a doccc library"):
        dc.load(d / "libother.so")


def test_weights_file(dc, gather, tmp_path):
    np = require("numpy")
    torch = require("torch")
    pt2, (x, idx), want, _ = gather
    # a model with weights, built with --external-weights
    lin = torch.nn.Linear(3, 2).eval()
    p2, ins, _ = export_eager(lin, (torch.randn(4, 3),), tmp_path / "lin.pt2")
    ref = eager(lin, *ins)
    lib = compile_model(p2, "sequential", tmp_path / "ext", "--external-weights")
    wfile = lib.parent / "lin.weights"
    assert wfile.is_file()
    compare(dc.load(lib)(ins[0]), ref[0], "lin, weights beside the library")
    moved = tmp_path / "elsewhere.weights"
    wfile.rename(moved)
    with pytest.raises(FileNotFoundError, match="lin.weights does not exist; pass weights=FILE"):
        dc.load(lib)
    compare(dc.load(lib, weights=moved)(ins[0]), ref[0], "lin, weights=")
    bad = tmp_path / "bad.weights"
    bad.write_bytes(b"\0" * 16)
    with pytest.raises(dc.Error) as e:
        dc.load(lib, weights=bad)
    assert e.value.name == "DOCCC_ERR_WEIGHTS" and e.value.detail, e.value


# ---- device-resident libraries (simulated) -----------------------------------------------

def test_device_simulated(dc, gather):
    np = require("numpy")
    torch = require("torch")
    pt2, (x, idx), want, d = gather
    m = dc.load(compile_model(pt2, "cuda-sim", d / "sim"))
    assert m.device_resident and m.device_backend == "cuda" and m.info["simulated"] is True
    compare(m(x, idx), want[0], "gather[cuda-sim,run_host]")  # host arrays: run_host
    compare(m(torch.from_numpy(x), torch.from_numpy(idx)).numpy(), want[0], "gather[cuda-sim,run_host torch]")
    dx, di = m.to_device(x), m.to_device(idx)
    np.testing.assert_array_equal(dx.numpy(), x)  # device_copy both ways
    y = m(dx, di)  # device pointers: run, the output left on the device
    assert isinstance(y, dc.DeviceArray) and y.shape == (4, 3) and y.dtype == np.float32
    compare(y.numpy(), want[0], "gather[cuda-sim,run]")
    out = m.device_empty((4, 3), "float32")
    assert m.run(dx, di, out=out) is out
    np.testing.assert_array_equal(out.numpy(), y.numpy())
    with pytest.raises(TypeError, match=r"input 1 \('idx'\) is host memory but other inputs are on the device"):
        m(dx, idx)
    with pytest.raises(dc.Error) as e:
        m(dx, m.to_device(np.array([0, 7, 2, 2])))
    assert e.value.name == "DOCCC_ERR_INDEX", e.value
    with pytest.raises(TypeError, match=r"input 1 \('idx'\) has dtype int32"):
        m(dx, m.to_device(idx.astype(np.int32)))
    for a in (dx, di, y, out):
        a.free()
    host = dc.load(compile_model(pt2, "sequential", d / "seq2"))
    with pytest.raises(TypeError, match="has no device memory"):
        host.to_device(x)
    with pytest.raises(TypeError, match="is device memory, but this library runs on the host"):
        host(m.to_device(x), m.to_device(idx))


# ---- the package installs ------------------------------------------------------------------

def test_pip_install(tmp_path):
    """pip installs python/ offline (no index, no build isolation: the
    setuptools here builds it) and the installed copy imports. pip builds
    in the source folder (build/, *.egg-info): a copy of it, not the tree."""
    src = tmp_path / "src"
    shutil.copytree(ROOT / "python", src, ignore=shutil.ignore_patterns("build", "*.egg-info", "__pycache__"))
    target = tmp_path / "site"
    r = subprocess.run([sys.executable, "-m", "pip", "install", "--no-deps", "--no-build-isolation", "--no-index",
                        "--disable-pip-version-check", "--target", str(target), str(src)],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, fmt_result(r)
    r = subprocess.run([sys.executable, "-c", "import doccc, sys; print(doccc.__file__, doccc.__version__, "
                        "doccc.load.__doc__ is not None)"],
                       capture_output=True, text=True, cwd=str(tmp_path), env={"PYTHONPATH": str(target), "PATH": os.environ.get("PATH", "")})
    assert r.returncode == 0, fmt_result(r)
    assert r.stdout.startswith(str(target / "doccc" / "__init__.py")) and "True" in r.stdout, r.stdout
