"""The derived rows of the op table (ir/ops_variants.h): every in-place
overload (relu_, scatter_.value, dropout_, squeeze_) and every alias
(concat, clip, arccos, swapaxes) that test/gen_ops_table.py derived from
torch's registry, each called directly (torch.ops.aten.<op>.<overload>) so
that the exported program holds exactly that overload, and compared with
eager PyTorch at both IR levels on every target.

An in-place call writes an intermediate (a clone), and the case returns
the written tensor read through its old name, which is what the importer's
write-back (lw_rebind_mutated) must get right; an in-place view op
(squeeze_, t_) changes only what that name means.

The sample arguments are the base row's (the functional row the variant
lowers through): sample() builds them from the base's schema (self in
(0.2, 0.8), other in (0.5, 1.5), scalars 0.75, defaults left out), and
SAMPLES gives them where the schema does not say enough (dims, indices,
masks, modes). A new derived row whose base the rule cannot fill fails here
with the base named: add its SAMPLES entry.
"""

import subprocess

import pytest

from harness import Case, check_cases
from conftest import doccc_path, require


def derived_rows():
    """[(overload, base)] of `doccc --list-ops`'s derived section."""
    out = subprocess.run([str(doccc_path()), "--list-ops"], capture_output=True, text=True, check=True).stdout
    rows, on = [], False
    for line in out.splitlines():
        if line.startswith("# derived"):
            on = True
        elif line.startswith("#"):
            on = False
        elif on and line.strip():
            o, b = line.split()
            rows.append((o, b))
    return rows


def _op(torch, name):
    n, _, ov = name.rpartition(".")
    return getattr(getattr(torch.ops.aten, n), ov)


def _tensors(torch):
    g = torch.Generator().manual_seed(0)
    u = torch.rand(3, 4, generator=g) * 0.6 + 0.2
    v = torch.rand(3, 4, generator=g) + 0.5
    i = torch.randint(-20, 20, (3, 4), generator=g, dtype=torch.int32)
    j = torch.randint(1, 20, (3, 4), generator=g, dtype=torch.int32)
    mask = torch.rand(3, 4, generator=g) > 0.5
    idx = torch.tensor([2, 0])
    sidx = torch.randint(0, 3, (2, 4), generator=g)
    return dict(u=u, v=v, i=i, j=j, mask=mask, idx=idx, sidx=sidx, w=torch.rand(4, 5, generator=g),
                b3=torch.rand(2, 3, 4, generator=g), c3=torch.rand(2, 4, 5, generator=g),
                s=torch.rand(2, 4, generator=g), one=torch.rand(3, 1, 4, generator=g), z=torch.tensor(0.25),
                vec=torch.rand(5, generator=g), nan=torch.tensor([[0.5, float("nan"), float("inf")], [-float("inf"), 0.25, 0.75]]))


# base -> (the input names, a function of those inputs giving (self, args, kwargs))
SAMPLES = {
    "acosh.default": (("v",), lambda v: (v + 1.0, (), {})),
    "addmm.default": (("s", "u", "w"), lambda s, u, w: (torch_().zeros(3, 5) + s[0, 0], (u, w), {"beta": 0.5, "alpha": 2})),
    "as_strided.default": (("u",), lambda u: (u, ([2, 3], [2, 1], 1), {})),
    "addmv.default": (("u", "w", "vec"), lambda u, w, v: (u[:, 0], (u, w[:, 0]), {"beta": 0.5, "alpha": 2})),
    "addbmm.default": (("b3", "c3"), lambda b, c: (b[0, :, :1] * 0 + c[0, 0], (b, c), {"alpha": -1})),
    "baddbmm.default": (("b3", "c3"), lambda b, c: (torch_().ones(2, 3, 5) * 0.5, (b, c), {"beta": 0.5})),
    "cat.default": (("u", "v"), lambda u, v: ([u, v], (1,), {})),
    "clamp.Tensor": (("u", "v"), lambda u, v: (u, (v - 0.9, v - 0.6), {})),
    "clip.Tensor": (("u", "v"), lambda u, v: (u, (v - 0.9, v - 0.6), {})),
    "clamp.default": (("u",), lambda u: (u, (0.3, 0.6), {})),
    "clip.default": (("u",), lambda u: (u, (0.3, 0.6), {})),
    "cumprod.default": (("v",), lambda v: (v, (1,), {})),
    "cumsum.default": (("u",), lambda u: (u, (1,), {})),
    "div.Scalar_mode": (("u",), lambda u: (u * 9, (0.7,), {"rounding_mode": "floor"})),
    "div.Tensor_mode": (("u", "v"), lambda u, v: (u * 9, (v,), {"rounding_mode": "trunc"})),
    "dropout.default": (("u",), lambda u: (u, (0.5, False), {})),
    "fill.Tensor": (("u", "z"), lambda u, z: (u, (z,), {})),
    "gcd.default": (("i", "j"), lambda i, j: (i, (j,), {})),
    "lcm.default": (("i", "j"), lambda i, j: (i, (j,), {})),
    "index_add.default": (("u", "idx", "s"), lambda u, i, s: (u, (0, i, s), {"alpha": 2})),
    "index_copy.default": (("u", "idx", "s"), lambda u, i, s: (u, (0, i, s), {})),
    "index_fill.int_Scalar": (("u", "idx"), lambda u, i: (u, (0, i, -1.5), {})),
    "index_fill.int_Tensor": (("u", "idx", "z"), lambda u, i, z: (u, (0, i, z), {})),
    "index_put.default": (("u", "idx", "s"), lambda u, i, s: (u, ([i], s), {"accumulate": True})),
    "lerp.Scalar": (("u", "v"), lambda u, v: (u, (v, 0.3), {})),
    "lerp.Tensor": (("u", "v"), lambda u, v: (u, (v, v - 0.5), {})),
    "logsumexp.default": (("u",), lambda u: (u, ([1],), {})),
    "masked_fill.Scalar": (("u", "mask"), lambda u, m: (u, (m, -2.0), {})),
    "masked_fill.Tensor": (("u", "mask", "z"), lambda u, m, z: (u, (m, z), {})),
    "masked_scatter.default": (("u", "mask", "v"), lambda u, m, v: (u, (m, v), {})),
    "matmul.default": (("u", "w"), lambda u, w: (u, (w,), {})),
    "outer.default": (("vec",), lambda v: (v, (v[:3] * 2,), {})),
    "nan_to_num.default": (("nan",), lambda x: (x, (0.0, 9.0, -9.0), {})),
    "round.decimals": (("u",), lambda u: (u * 10, (), {"decimals": 1})),
    "scatter.src": (("u", "sidx", "s"), lambda u, i, s: (u, (0, i, s), {})),
    "scatter.value": (("u", "sidx"), lambda u, i: (u, (0, i, 7.0), {})),
    "scatter.reduce": (("u", "sidx", "s"), lambda u, i, s: (u, (0, i, s), {"reduce": "multiply"})),
    "scatter.value_reduce": (("u", "sidx"), lambda u, i: (u, (0, i, 1.5), {"reduce": "add"})),
    "scatter_add.default": (("u", "sidx", "s"), lambda u, i, s: (u, (0, i, s), {})),
    "scatter_reduce.two": (("u", "sidx", "s"), lambda u, i, s: (u, (0, i, s, "amax"), {"include_self": False})),
    "softmax.int": (("u",), lambda u: (u, (1,), {})),
    "squeeze.default": (("one",), lambda x: (x, (), {})),
    "squeeze.dim": (("one",), lambda x: (x, (1,), {})),
    "squeeze.dims": (("one",), lambda x: (x, ([1],), {})),
    "transpose.int": (("u",), lambda u: (u, (0, 1), {})),
    "unsqueeze.default": (("u",), lambda u: (u, (1,), {})),
    "copy.default": (("u", "v"), lambda u, v: (u, (v,), {})),
    "xlogy.Tensor": (("u", "v"), lambda u, v: (u, (v,), {})),
}


def torch_():
    return require("torch")


def sample(torch, base, schema):
    """(input names, function of them -> (self, args, kwargs)) for a base row."""
    if base in SAMPLES:
        return SAMPLES[base]
    args = schema._schema.arguments
    ints = base.startswith(("bitwise_", "logical_"))
    x, y = ("i", "j") if ints else ("u", "v")
    names, rest = [x], []
    for a in args[1:]:
        t = str(a.type)
        if a.has_default_value() or a.kwarg_only:
            continue
        if t == "Tensor":
            names.append(y)
            rest.append("t")
        elif t in ("number", "Scalar"):
            rest.append(5 if ints else 0.75)
        else:
            return None
    def fn(*ts):
        it = iter(ts[1:])
        return ts[0], tuple(next(it) if r == "t" else r for r in rest), {}
    return tuple(names), fn


def _cases(torch, rows):
    T = _tensors(torch)
    cases, missing = [], []
    for overload, base in rows:
        op = _op(torch, overload)
        s = sample(torch, base, _op(torch, base))
        if s is None:
            missing.append(f"{overload} (base {base})")
            continue
        names, make = s
        inplace = op._schema.arguments[0].alias_info is not None and op._schema.arguments[0].alias_info.is_write

        def fn(*xs, op=op, make=make, inplace=inplace):
            self, args, kw = make(*xs)
            if not inplace:
                return op(self, *args, **kw)
            y = self.clone()
            r = op(y, *args, **kw)
            return r, y * 1      # the written tensor, read through its old name
        cases.append(Case(overload.replace(".", "_"), fn, tuple(T[n] for n in names)))
    assert not missing, ("derived rows whose base has no sample arguments (add a SAMPLES entry):\n  " +
                         "\n  ".join(missing))
    return cases


def _group(rows, k, n):
    return [r for i, r in enumerate(rows) if i % n == k]


@pytest.mark.parametrize("part", range(3))
def test_derived_rows(tmp_path, part):
    torch = require("torch")
    rows = _group(derived_rows(), part, 3)
    assert rows, "no derived rows: doccc --list-ops lists none"
    check_cases(tmp_path, f"variants{part}", _cases(torch, rows),
                expect={"training": {f"aten.{o}" for o, _ in rows}})
