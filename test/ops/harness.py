"""Per-op test harness: many small cases compiled as one program.

    check_cases(tmp, group, cases, targets=TARGETS, irs=IRS, expect=None, dynamic_shapes=None)

A case is Case(label, fn, inputs, rtol=None, atol=None): fn(*inputs) returns a
tensor or a tuple of tensors; inputs are tensors (any dtype doccc supports,
non-contiguous ones are made contiguous: a graph input is always contiguous;
test non-contiguity inside fn with permute/slicing) or python scalars baked
into fn. All cases of a group become ONE nn.Module whose forward takes every
case's inputs and returns every case's outputs, so a group costs one export
per IR level and one compile per target (compile time is what bounds the
suite). doccc's messages name the failing node, which names the op.

The openmp target compiles with schedule.min_parallel_work=1, so that the
parallel code is what its runs test.

Comparison with eager PyTorch, per output dtype:
  float32   rtol 1e-4, atol 1e-5 (docc's tolerance)
  float64   rtol 1e-7, atol 1e-9
  float16   rtol 1e-3, atol 1e-5 (torch.testing's defaults for half)
  bfloat16  rtol 1.6e-2, atol 1e-5 (torch.testing's defaults)
  integers, bool: exact
A case may set its own rtol/atol only with a comment saying why (e.g. an
op whose PyTorch kernel itself differs by ulps across implementations).
bfloat16 crosses `doccc run` as uint16 bit patterns (numpy has no bfloat16).

expect={ir: {"aten.abs_.default", ...}} fails the group unless each named
overload is a node of its exported program at that IR level, so that a
group meant to cover an overload cannot silently stop exporting it.
dynamic_shapes (one spec per input, in order, as torch.export takes them)
exports the group with dynamic dims; doccc compiles it for the inputs' sizes.
"""

import dataclasses
import os
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from conftest import IRS, TARGETS, compile_model, device_resident, fmt_result, require, run_lib  # noqa: E402

TOL = {
    "torch.float32": (1e-4, 1e-5),
    "torch.float64": (1e-7, 1e-9),
    "torch.float16": (1e-3, 1e-5),
    "torch.bfloat16": (1.6e-2, 1e-5),
}


@dataclasses.dataclass
class Case:
    label: str
    fn: object
    inputs: tuple
    rtol: float = None
    atol: float = None


def _to_numpy(t):
    torch = require("torch")
    t = t.detach().contiguous()
    if t.dtype == torch.bfloat16:
        return t.view(torch.int16).numpy().view("<u2")
    return t.numpy()


def _from_numpy(a, like):
    torch = require("torch")
    if like.dtype == torch.bfloat16:
        return torch.from_numpy(a.view("<i2").copy()).view(torch.bfloat16)
    return torch.from_numpy(a.copy())


def _module(cases):
    torch = require("torch")

    class Group(torch.nn.Module):
        def forward(self, *xs):
            outs = []
            k = 0
            for c in cases:
                n = len(c.inputs)
                r = c.fn(*xs[k:k + n])
                k += n
                outs += list(r) if isinstance(r, (tuple, list)) else [r]
            return tuple(outs)

    return Group()


def _compare(label, got, ref, rtol, atol):
    torch = require("torch")
    assert tuple(got.shape) == tuple(ref.shape), f"{label}: shape {tuple(got.shape)}, eager {tuple(ref.shape)}"
    assert got.dtype == ref.dtype, f"{label}: dtype {got.dtype}, eager {ref.dtype}"
    if ref.dtype.is_floating_point:
        r, a = TOL[str(ref.dtype)]
        torch.testing.assert_close(got, ref, rtol=rtol if rtol is not None else r,
                                   atol=atol if atol is not None else a, equal_nan=True,
                                   msg=lambda m: f"{label}: {m}")
    else:
        assert torch.equal(got, ref), f"{label}: got {got}, eager {ref}"


def _export(mod, inputs, path, ir, dynamic_shapes=None):
    """Export and save; returns the program's call_function targets."""
    torch = require("torch")
    with torch.no_grad():
        ep = torch.export.export(mod, inputs, dynamic_shapes=None if dynamic_shapes is None else (tuple(dynamic_shapes),))
        if ir == "core":
            ep = ep.run_decompositions()
    torch.export.save(ep, str(path))
    return {str(n.target) for n in ep.graph.nodes if n.op == "call_function"}


def _run_group(tmp, name, cases, target, ir, options=()):
    torch = require("torch")
    mod = _module(cases).eval()
    inputs = tuple(x.contiguous() for c in cases for x in c.inputs)
    with torch.no_grad():
        ref = mod(*inputs)
    pt2 = Path(tmp) / f"{name}_{ir}.pt2"
    # openmp: every map parallel, whatever its size (the default threshold
    # leaves the small test tensors sequential, and the parallel code --
    # accumulating scatters, error flags across threads -- untested)
    extra = tuple(options) + (("--pass-opt", "schedule.min_parallel_work=1") if target == "openmp" else ())
    lib = compile_model(pt2, target, Path(tmp) / f"{name}_{ir}_{target}", "-n", "ops", *extra)
    # a simulated GPU library runs through both entry points: the host copy
    # (NAME_run_host) and device pointers (NAME_run, doccc run --device)
    # (unless the model took the host fallback: an op without a GPU expansion)
    for entry in (("host", "device") if device_resident(lib) else ("host",)):
        got = run_lib(lib, [_to_numpy(x) for x in inputs], *(["--device"] if entry == "device" else []))
        _compare_group(name, cases, got, ref, f"{ir},{target}" + (",device" if entry == "device" else ""))


def _compare_group(name, cases, got, ref, where):
    """Each case's outputs in got (numpy, in graph order) against eager's (ref)."""
    torch = require("torch")
    assert len(got) == len(ref), f"{name}: {len(got)} outputs, eager has {len(ref)}"
    k = 0
    for c in cases:
        with torch.no_grad():
            r = c.fn(*c.inputs)
        n = len(r) if isinstance(r, (tuple, list)) else 1
        for j in range(n):
            _compare(f"{name}/{c.label}[{where}] out{j}", _from_numpy(got[k], ref[k]), ref[k], c.rtol, c.atol)
            k += 1


def check_cases(tmp, name, cases, targets=TARGETS, irs=IRS, real_gpu=False, expect=None, dynamic_shapes=None,
                options=()):
    """Export, compile and compare a group of cases on every target and IR level.
    options: more doccc arguments (pass options) for every compile.
    real_gpu: also build the training-IR group with nvcc and hipcc and check the
    libraries (fat binary; the runtime's error on a machine without a GPU).
    expect, dynamic_shapes: see the module's comment."""
    inputs = tuple(x.contiguous() for c in cases for x in c.inputs)
    for ir in irs:
        have = _export(_module(cases).eval(), inputs, Path(tmp) / f"{name}_{ir}.pt2", ir, dynamic_shapes)
        missing = sorted(set((expect or {}).get(ir, ())) - have)
        assert not missing, f"{name}: the {ir} export has no node of {missing}"
        for target in targets:
            _run_group(tmp, name, cases, target, ir, options)
    if real_gpu:
        import numpy as np
        from test_gpu import REAL, check_real_build, require_cmd
        torch = require("torch")
        pt2 = Path(tmp) / f"{name}_{irs[0]}.pt2"
        inputs = tuple(x.contiguous() for c in cases for x in c.inputs)
        with torch.no_grad():
            ref = _module(cases).eval()(*inputs)
        files = []
        for k, x in enumerate(inputs):
            files.append(Path(tmp) / f"{name}_in{k}.npy")
            np.save(files[-1], _to_numpy(x))
        for backend in ("cuda", "rocm"):
            require_cmd(REAL[backend][0])
            lib = compile_model(pt2, backend, Path(tmp) / f"{name}_{backend}", "-n", "ops")
            check_real_build(lib, backend, files,
                             lambda got, b=backend: _compare_group(name, cases, got, ref, f"{irs[0]},{b}"))
