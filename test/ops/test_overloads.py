"""Overloads of the op table that no model or other op test exports, each
called directly (torch.ops.aten.<op>.<overload>) so the exported program
holds exactly that overload, and compared with eager PyTorch.

  - in-place forms (abs_, add_.Scalar, ge_.Tensor, bitwise_and_.Scalar, ...)
    on intermediates, which the training IR keeps as they are (Core ATen
    makes them functional): the result keeps self's dtype (a comparison in
    place writes 0/1 in it, an int self stays int), with broadcasting
    operands, scalars of another kind and mutation through a view;
  - the functional rest: Scalar and mode overloads of the arithmetic,
    clamp_min/clamp_max/clip, reductions (mean, amin, all.dims, var_mean,
    std_mean), _log_softmax, _native_batch_norm_legit (both modes),
    reflection/replication pads 1d-3d, upsample_nearest2d and
    upsample_bilinear2d with their explicit scales, where.Scalar's result
    dtypes, empty_strided/new_empty (then written), views;
  - the shape queries of a dynamic-shape export (sym_stride, sym_numel,
    sym_is_contiguous), compiled for the example sizes.

Each group names the overloads it must export (harness expect=), so that a
change in torch.export cannot make it stop covering them unnoticed.
"""

from harness import Case, check_cases
from conftest import doccc_cmd, fmt_result, require

FLOATS = ("float32", "float16")
INTS = ("int64", "int32", "uint8")


def _gen():
    torch = require("torch")
    return torch, torch.Generator().manual_seed(0)


# ---- in-place forms ---------------------------------------------------------------

UNARY_ = {  # op -> which input: u in (-0.95, 0.95), p in (0.1, 4), x ~ N(0, 2)
    "abs_": "x", "acos_": "u", "acosh_": "a", "asin_": "u", "asinh_": "x", "atan_": "x", "atanh_": "u",
    "ceil_": "x", "cos_": "x", "cosh_": "x", "erf_": "x", "exp_": "x", "expm1_": "x", "floor_": "x",
    "log10_": "p", "log1p_": "p", "log2_": "p", "log_": "p", "neg_": "x", "reciprocal_": "x", "round_": "x",
    "rsqrt_": "p", "sin_": "x", "sinh_": "x", "sqrt_": "p", "tan_": "u", "tanh_": "x", "trunc_": "x",
    "relu6_": "x", "hardsigmoid_": "x", "hardswish_": "x", "mish_": "x",
}
COMPARE_ = ("eq_.Tensor", "ge_.Scalar", "ge_.Tensor", "gt_.Scalar", "gt_.Tensor", "le_.Scalar", "le_.Tensor",
            "lt_.Scalar", "ne_.Scalar", "ne_.Tensor")
BITWISE_ = ("bitwise_and_", "bitwise_or_", "bitwise_xor_")


def _ov(name):
    torch = require("torch")
    op, _, ov = name.partition(".")
    return getattr(getattr(torch.ops.aten, op), ov or "default")


def _inplace_cases():
    torch, g = _gen()
    A = torch.ops.aten
    inf, nan = float("inf"), float("nan")
    cases = []
    for name in FLOATS:
        dt = getattr(torch, name)
        x = (torch.randn(3, 4, 5, generator=g) * 2).to(dt)
        u = (torch.rand(3, 4, 5, generator=g) * 1.9 - 0.95).to(dt)
        p = (torch.rand(3, 4, 5, generator=g) * 3.9 + 0.1).to(dt)
        a = (p + 1).to(dt)
        y = (torch.randn(4, 5, generator=g) * 2).to(dt)                     # broadcast over dim 0
        e = torch.tensor([0.5, 1.5, 2.5, -0.5, -2.5, 0.0, -0.0, inf, -inf, nan, 3.7, -3.7], dtype=dt)
        ins = {"x": x, "u": u, "p": p, "a": a}
        cases += [Case(f"{op}_{name}", lambda v, e, op=op: (_ov(op)(v.clone()), _ov(op)(e.clone())), (ins[w], e))
                  for op, w in UNARY_.items()]
        cases += [
            Case(f"act_{name}", lambda x: (A.elu_.default(x.clone()), A.elu_.default(x.clone(), 0.5, 1.5, 2.0),
                                           A.gelu_.default(x.clone()), A.gelu_.default(x.clone(), approximate="tanh")), (x,)),
            Case(f"scalar_{name}", lambda x: (A.add_.Scalar(x.clone(), 2.5), A.add_.Scalar(x.clone(), 2, 1.5),
                                              A.sub_.Scalar(x.clone(), 0.75), A.sub_.Scalar(x.clone(), 3, -2),
                                              A.mul_.Scalar(x.clone(), -1.25), A.mul_.Scalar(x.clone(), 3),
                                              A.div_.Scalar(x.clone(), 0.3), A.div_.Scalar(x.clone(), -4),
                                              A.div_.Scalar_mode(x.clone(), 0.7, rounding_mode="floor"),
                                              A.div_.Scalar_mode(x.clone(), -0.7, rounding_mode="trunc"),
                                              A.div_.Scalar_mode(x.clone(), 3, rounding_mode=None),
                                              A.fmod_.Scalar(x.clone(), 1.5), A.fmod_.Scalar(x.clone(), -1.5),
                                              A.remainder_.Scalar(x.clone(), 1.5), A.remainder_.Scalar(x.clone(), -1.5),
                                              A.clamp_min_.default(x.clone(), -0.5), A.clamp_max_.default(x.clone(), 0.25)),
                 (x,)),
            Case(f"pow_{name}", lambda x, p: (A.pow_.Scalar(x.clone(), 2), A.pow_.Scalar(x.clone(), 3.0), A.pow_.Scalar(p.clone(), 0.5),
                                              A.pow_.Scalar(p.clone(), -1.5), A.pow_.Tensor(p.clone(), x),
                                              A.pow_.Tensor(x.clone(), torch.round(p))), (x, p)),
            Case(f"tensor_{name}", lambda x, y: (A.div_.Tensor_mode(x.clone(), y, rounding_mode="floor"),
                                                 A.div_.Tensor_mode(x.clone(), y, rounding_mode="trunc"),
                                                 A.div_.Tensor_mode(x.clone(), y, rounding_mode=None),
                                                 A.fmod_.Tensor(x.clone(), y), A.remainder_.Tensor(x.clone(), y),
                                                 A.clamp_.Tensor(x.clone(), y - 1, y + 1), A.clamp_.Tensor(x.clone(), y),
                                                 A.clamp_.Tensor(x.clone(), None, y[0]),
                                                 A.clamp_min_.Tensor(x.clone(), y), A.clamp_max_.Tensor(x.clone(), y[1:2]),
                                                 A.atan2_.default(x.clone(), y),
                                                 A.masked_fill_.Tensor(x.clone(), y > 0, torch.tensor(-7.5)),
                                                 A.masked_fill_.Tensor(x.clone(), (x > 1)[0], y[0, 0])), (x, y)),
            Case(f"compare_{name}", lambda x, y, e: tuple(_ov(op)(x.clone(), y if op.endswith("Tensor") else 0.5)
                                                          for op in COMPARE_) +
                 tuple(_ov(op)(e.clone(), e.flip(0) if op.endswith("Tensor") else 2.5) for op in COMPARE_), (x, y, e)),
            Case(f"logical_{name}", lambda x, e: (A.logical_or_.default(x.clone(), x > 1), A.logical_xor_.default(x.clone(), x < 0),
                                                  A.logical_or_.default(e.clone(), e.flip(0)),
                                                  A.logical_xor_.default(e.clone(), e.flip(0))), (x, e)),
        ]
    # integers: the result stays self's dtype (comparisons write 0/1; a float
    # scalar is compared in float; a float fill value is truncated)
    for name in INTS:
        dt = getattr(torch, name)
        lo = 0 if dt == torch.uint8 else -20
        i = torch.randint(lo, 20, (3, 4, 5), generator=g, dtype=dt)
        j = torch.randint(1, 7, (4, 5), generator=g, dtype=dt)                 # non-zero divisors
        k = torch.randint(lo, 20, (4, 5), generator=g, dtype=dt)
        m = torch.rand(3, 4, 5, generator=g) > 0.5
        cases += [
            Case(f"int_unary_{name}", lambda i: tuple(_ov(op)(i.clone()) for op in ("abs_", "neg_", "ceil_", "floor_", "round_",
                                                                                   "trunc_", "bitwise_not_")), (i,)),
            Case(f"int_arith_{name}", lambda i, j, k: (A.add_.Scalar(i.clone(), 3), A.add_.Scalar(i.clone(), 2, 3),
                                                       A.sub_.Scalar(i.clone(), 1), A.mul_.Scalar(i.clone(), 3),
                                                       A.div_.Scalar_mode(i.clone(), 3, rounding_mode="floor"),
                                                       A.div_.Scalar_mode(i.clone(), 3, rounding_mode="trunc"),
                                                       A.div_.Tensor_mode(i.clone(), j, rounding_mode="floor"),
                                                       A.div_.Tensor_mode(i.clone(), j, rounding_mode="trunc"),
                                                       A.fmod_.Scalar(i.clone(), 3), A.fmod_.Tensor(i.clone(), j),
                                                       A.remainder_.Scalar(i.clone(), 3), A.remainder_.Tensor(i.clone(), j),
                                                       A.pow_.Scalar(i.clone() % 5, 2), A.pow_.Tensor(i.clone() % 4, j % 3),
                                                       A.clamp_min_.default(i.clone(), 4), A.clamp_max_.default(i.clone(), 9),
                                                       A.clamp_.Tensor(i.clone(), k, k + 5), A.clamp_min_.Tensor(i.clone(), k),
                                                       A.clamp_max_.Tensor(i.clone(), k),
                                                       A.masked_fill_.Tensor(i.clone(), i > 5, torch.tensor(2.7)),
                                                       A.masked_fill_.Tensor(i.clone(), k > 5, torch.tensor(11))), (i, j, k)),
            Case(f"int_compare_{name}", lambda i, k: tuple(_ov(op)(i.clone(), k if op.endswith("Tensor") else 2.5)
                                                           for op in COMPARE_) +
                 tuple(_ov(op)(i.clone(), 5) for op in COMPARE_ if op.endswith("Scalar")), (i, k)),
            Case(f"int_bitwise_{name}", lambda i, k, m: tuple(_ov(op + ".Scalar")(i.clone(), 5) for op in BITWISE_) +
                 tuple(_ov(op + ".Tensor")(i.clone(), k) for op in BITWISE_) +
                 tuple(_ov(op + ".Tensor")(i.clone(), m[0]) for op in BITWISE_) +
                 (A.logical_or_.default(i.clone(), k), A.logical_xor_.default(i.clone(), m)), (i, k, m)),
        ]
    b = torch.rand(3, 4, 5, generator=g) > 0.5
    c = torch.rand(4, 5, generator=g) > 0.5
    f = torch.randn(3, 4, 5, generator=g)
    x = torch.randn(3, 4, 5, generator=g)
    cases += [
        Case("bool", lambda b, c, f: tuple(_ov(op + ".Scalar")(b.clone(), True) for op in BITWISE_) +
             tuple(_ov(op + ".Scalar")(b.clone(), False) for op in BITWISE_) +
             tuple(_ov(op + ".Tensor")(b.clone(), c) for op in BITWISE_) +
             (A.bitwise_not_.default(b.clone()), A.logical_or_.default(b.clone(), c), A.logical_xor_.default(b.clone(), f),
              A.eq_.Tensor(b.clone(), c), A.ne_.Tensor(b.clone(), c), A.ge_.Tensor(b.clone(), c), A.lt_.Scalar(b.clone(), 1),
              A.gt_.Tensor(b.clone(), f), A.le_.Scalar(b.clone(), 0.5)), (b, c, f)),
        # float self, other operands of another dtype: compared/combined in
        # the promoted type, written back as float
        Case("mixed", lambda x, i: (A.ge_.Tensor(x.clone(), i), A.ne_.Tensor(x.clone(), i), A.le_.Tensor(x.clone(), i[0]),
                                    A.gt_.Scalar(x.clone(), 0), A.fmod_.Tensor(x.clone(), i.clamp(1, 9)),
                                    A.remainder_.Tensor(x.clone(), i.clamp(1, 9)), A.pow_.Tensor(x.clone(), i.clamp(0, 3))),
             (x, torch.randint(-3, 4, (3, 4, 5), generator=g))),
        # in place on a view whose base is not read again
        Case("view_only", lambda x: _view_only(x), (x,)),
    ]
    return cases


def _view_only(x):
    torch = require("torch")
    A = torch.ops.aten
    v = (x * 2).view(-1)
    A.relu6_.default(v)
    w = (x + 1).transpose(0, 2)
    A.mul_.Scalar(w, 3)
    return v, A.add_.Scalar(w, 1)


def _views(x):
    """In place through views: the base sees the writes."""
    torch = require("torch")
    A = torch.ops.aten
    t = x.clone()
    A.abs_.default(t[1])
    A.add_.Scalar(t[:, 1:3], 10.0)
    A.mul_.Scalar(t.transpose(1, 2)[0], -2.0)
    s = x.clone()
    A.ge_.Scalar(s[:, :, ::2], 0.0)
    A.sqrt_.default(s.abs_()[2])
    return t, s


def test_inplace_overloads(tmp_path):
    """Every in-place overload of the op table that no other test exports, on
    float32 and float16 (edges: halves for round_, signed zeros, infinities,
    NaN), int64/int32/uint8 and bool where torch takes them."""
    want = {f"aten.{op}.default" for op in UNARY_} | {f"aten.{op}" for op in COMPARE_} | \
        {f"aten.{op}.{k}" for op in BITWISE_ for k in ("Scalar", "Tensor")} | {
        "aten.add_.Scalar", "aten.sub_.Scalar", "aten.mul_.Scalar", "aten.div_.Scalar", "aten.div_.Scalar_mode",
        "aten.div_.Tensor_mode", "aten.pow_.Scalar", "aten.pow_.Tensor", "aten.fmod_.Scalar", "aten.fmod_.Tensor",
        "aten.remainder_.Scalar", "aten.remainder_.Tensor", "aten.clamp_.Tensor", "aten.clamp_min_.default",
        "aten.clamp_min_.Tensor", "aten.clamp_max_.default", "aten.clamp_max_.Tensor", "aten.masked_fill_.Tensor",
        "aten.atan2_.default", "aten.elu_.default", "aten.gelu_.default", "aten.logical_or_.default",
        "aten.logical_xor_.default", "aten.bitwise_not_.default"}
    check_cases(tmp_path, "overloads_inplace", _inplace_cases(), expect={"training": want})


def test_inplace_through_views(tmp_path):
    """Writes through a view reach its base in torch. Core ATen states them
    functionally (select_scatter, slice_scatter); in the training IR doccc
    makes them functional itself (the written storage, every other view of
    it re-viewed there). Both match eager, on every target. Reading the
    running statistics a training-mode batch norm updated in place is
    refused with the reason, never a stale result."""
    torch, g = _gen()
    A = torch.ops.aten
    x = torch.randn(3, 4, 5, generator=g)
    check_cases(tmp_path, "overloads_views", [Case("views", _views, (x,))])

    class Bad(torch.nn.Module):
        def forward(self, x):
            m, v = x[0, 0, :3] * 1, x[1, 1, :3].abs()
            y = A._native_batch_norm_legit.default(x.transpose(0, 1), None, None, m, v, True, 0.1, 1e-5)[0]
            return y, m + 1

    pt2 = tmp_path / "bad_training.pt2"
    torch.export.save(torch.export.export(Bad(), (x,)), str(pt2))
    r = doccc_cmd(pt2, "-o", f"{tmp_path}/t/")
    assert r.returncode == 1, fmt_result(r)
    want = ("reads 'mul', but node '_native_batch_norm_legit' updated it in place, updating "
            "the running statistics of a training-mode batch norm, which doccc does not compute")
    assert want in r.stderr, fmt_result(r)


# ---- the functional rest ------------------------------------------------------------

def _rest_cases():
    torch, g = _gen()
    A = torch.ops.aten
    nan = float("nan")
    x = torch.randn(3, 4, 5, generator=g) * 2
    h = x.to(torch.float16)
    d = x.to(torch.float64)
    i = torch.randint(-20, 20, (3, 4, 5), generator=g)
    i32 = i.to(torch.int32)
    b = torch.rand(3, 4, 5, generator=g) > 0.3
    lo = torch.randn(4, 5, generator=g) - 1
    hi = lo + 1.5
    xn = x.clone()
    xn[0, 1, 2] = nan
    xn[2, 3, 4] = nan
    img = torch.randn(2, 3, 6, 7, generator=g)
    vol = torch.randn(2, 2, 4, 5, 6, generator=g)
    seq = torch.randn(2, 3, 8, generator=g)
    ii = torch.randint(-9, 9, (2, 3, 6, 7), generator=g)
    return [
        Case("xor_scalar", lambda i, i32, b: (A.__xor__.Scalar(i, 5), A.__xor__.Scalar(i32, -3), A.__xor__.Scalar(b, True),
                                              A.__xor__.Scalar(b, False)), (i, i32, b)),
        Case("scalar_arith", lambda x, h, i: (A.sub.Scalar(x, 1.5), A.sub.Scalar(x, 2, 0.5), A.sub.Scalar(i, 3), A.sub.Scalar(i, 2.5),
                                              A.sub.Scalar(h, 0.1), A.div.Scalar(x, 0.3), A.div.Scalar(i, 4), A.div.Scalar(h, 3),
                                              A.div.Scalar_mode(x, 0.7, rounding_mode="floor"),
                                              A.div.Scalar_mode(x, -0.7, rounding_mode="trunc"),
                                              A.div.Scalar_mode(i, 3, rounding_mode="floor"),
                                              A.div.Scalar_mode(i, -3, rounding_mode="trunc"),
                                              A.div.Scalar_mode(i, 3, rounding_mode=None),
                                              A.div.Scalar_mode(i, 2.5, rounding_mode="floor"),
                                              A.true_divide.Scalar(x, 7), A.true_divide.Scalar(i, 3),
                                              A.floor_divide.Scalar(x, 0.6), A.floor_divide.Scalar(x, -2),
                                              A.floor_divide.Scalar(i, 3), A.floor_divide.Scalar(i, -4),
                                              A.floor_divide.Scalar(i, 2.5), A.floor_divide.Scalar(h, 0.3)), (x, h, i)),
        Case("clamp", lambda x, h, i, lo, hi: (A.clamp_min.default(x, -0.5), A.clamp_max.default(x, 0.5), A.clamp_min.default(h, 1),
                                               A.clamp_max.default(i, 4), A.clamp_min.default(i, -3),
                                               A.clamp_min.default(i, 2.5), A.clamp_max.default(i, -1.5),
                                               A.clip.Tensor(x, lo, hi), A.clip.Tensor(x, lo), A.clip.Tensor(x, None, hi[0]),
                                               A.clip.Tensor(i, (lo * 4).to(torch.int64), None),
                                               A.clip.Tensor(i, lo, hi * 5)), (x, h, i, lo, hi)),
        Case("reduce", lambda x, xn, h, d, i, b: (A.mean.default(x), A.mean.default(h), A.mean.default(d),
                                                  A.mean.default(x, dtype=torch.float64), A.mean.default(i, dtype=torch.float32),
                                                  A.amin.default(x, [1]), A.amin.default(x, [0, 2], True), A.amin.default(xn, [-1]),
                                                  A.amin.default(i), A.amin.default(b, [2]), A.amin.default(h, [0, 1]),
                                                  A.all.dims(b, [0]), A.all.dims(b, [0, 2], True), A.all.dims(b),
                                                  A.all.dims(x, [1]), A.all.dims(i, [-1, 0]), A.all.dims(b, []),
                                                  *A.var_mean.dim(x, [1]), *A.var_mean.dim(x, [0, 2], False, True),
                                                  *A.var_mean.dim(d, None), *A.var_mean.dim(h, [-1]),
                                                  *A.std_mean.correction(x, [1]), *A.std_mean.correction(x, [0, 2], correction=0),
                                                  *A.std_mean.correction(d, None, correction=2, keepdim=True),
                                                  *A.std_mean.correction(x, [-1], correction=1.5),
                                                  *A.std_mean.correction(h, [1, 2])), (x, xn, h, d, i, b)),
        Case("log_softmax", lambda x, h, d: (A._log_softmax.default(x, 1, False), A._log_softmax.default(x, -1, False),
                                             A._log_softmax.default(x, 0, False), A._log_softmax.default(h, 1, False),
                                             A._log_softmax.default(h, -1, False), A._log_softmax.default(h.bfloat16(), 2, False),
                                             A._log_softmax.default(d, 1, False)), (x, h, d)),
        Case("pads", lambda s, img, vol, ii: (A.reflection_pad1d.default(s, [2, 3]), A.reflection_pad1d.default(s[0], [0, 7]),
                                              A.reflection_pad2d.default(img, [1, 2, 0, 3]),
                                              A.reflection_pad2d.default(img[0], [3, 0, 2, 2]),
                                              A.reflection_pad3d.default(vol, [1, 2, 3, 0, 2, 1]),
                                              A.reflection_pad3d.default(vol[0], [0, 1, 1, 1, 3, 2]),
                                              A.replication_pad1d.default(s, [4, 1]), A.replication_pad1d.default(s[1], [0, 9]),
                                              A.replication_pad2d.default(img, [2, 5, 1, 0]),
                                              A.replication_pad2d.default(ii, [1, 1, 3, 2]),
                                              A.replication_pad3d.default(vol, [2, 0, 1, 3, 0, 4]),
                                              A.replication_pad3d.default(vol[1], [1, 1, 1, 1, 1, 1]),
                                              A.reflection_pad2d.default(ii, [2, 2, 1, 1]),
                                              A.reflection_pad2d.default(img, [-1, 2, 1, -2])), (seq, img, vol, ii)),
        Case("upsample", lambda img: (A.upsample_nearest2d.default(img, [5, 7]), A.upsample_nearest2d.default(img, [13, 20]),
                                      A.upsample_nearest2d.default(img, [3, 4]),
                                      A.upsample_nearest2d.default(img, [12, 14], 2.0, 2.0),
                                      A.upsample_nearest2d.default(img, [9, 10], 1.6, 1.5),
                                      A.upsample_bilinear2d.default(img, [12, 15], False),
                                      A.upsample_bilinear2d.default(img, [12, 15], True),
                                      A.upsample_bilinear2d.default(img, [4, 5], False),
                                      A.upsample_bilinear2d.default(img, [4, 5], True),
                                      A.upsample_bilinear2d.default(img, [9, 10], False, 1.6, 1.5),
                                      A.upsample_bilinear2d.default(img, [12, 14], True, 2.0, 2.0),
                                      A.upsample_bilinear2d.default(img.to(torch.float64), [11, 8], False)), (img,)),
        Case("where_scalar", lambda b: (A.where.Scalar(b, 1.0, 2.0), A.where.Scalar(b, 1, -2), A.where.Scalar(b, True, False),
                                        A.where.Scalar(b, 3, 2.5), A.where.Scalar(b[0], -1.5, False)), (b,)),
        Case("fills", lambda x, i, h: _fills(x, i, h), (x, i, h)),
    ]


def _bn(x, w, b, rm, rv):
    torch = require("torch")
    A = torch.ops.aten
    out = list(A._native_batch_norm_legit.default(x, w, b, rm * 1, rv * 1, False, 0.1, 1e-5)[:1])
    out += A._native_batch_norm_legit.default(x, w, b, rm * 1, rv * 1, True, 0.3, 1e-3)
    return tuple(out)


def _fills(x, i, h):
    torch = require("torch")
    A = torch.ops.aten
    e = A.empty_strided.default([4, 5], [1, 4], dtype=torch.float32).copy_(x[0])
    f = A.empty_strided.default([3, 2], [2, 1], dtype=torch.int64).fill_(7)
    n = A.new_empty.default(x, [2, 3]).fill_(-1.5)
    k = A.new_empty.default(i, [5], dtype=torch.float16).copy_(h[0, 0])
    return (e, f, n, k, A.fill.Tensor(x, x[1, 2, 3]), A.fill.Tensor(i, x[0, 0, 0]), A.fill.Tensor(h, i[0, 0, 1]),
            A.detach.default(x) * 2, A.expand_as.default(x[:1, :, :1], x), A.expand_as.default(i[2], x),
            A.unflatten.int(x, 1, [2, 2]), A.unflatten.int(x, -1, [-1, 1]), A.unflatten.int(i, 0, [1, 3, 1]),
            A._unsafe_view.default(x * 1, [4, 15]), A._unsafe_view.default(i + 0, [-1]))


def test_functional_overloads(tmp_path):
    """The functional overloads that no other test exports, float32, float16,
    float64, integer and bool operands, NaN in reductions, every mode."""
    want = {f"aten.{o}" for o in (
        "__xor__.Scalar", "_log_softmax.default", "_unsafe_view.default", "all.dims",
        "amin.default", "clamp_max.default", "clamp_min.default", "clip.Tensor", "detach.default", "div.Scalar",
        "div.Scalar_mode", "empty_strided.default", "expand_as.default", "fill.Tensor", "floor_divide.Scalar",
        "mean.default", "new_empty.default", "reflection_pad1d.default", "reflection_pad2d.default",
        "reflection_pad3d.default", "replication_pad1d.default", "replication_pad2d.default", "replication_pad3d.default",
        "std_mean.correction", "sub.Scalar", "true_divide.Scalar", "unflatten.int", "upsample_bilinear2d.default",
        "upsample_nearest2d.default", "var_mean.dim", "where.Scalar")}
    check_cases(tmp_path, "overloads_functional", _rest_cases(), expect={"training": want})


def test_batch_norm_legit(tmp_path):
    """_native_batch_norm_legit in eval mode (the running statistics) and in
    training mode (the batch's; the running statistics it updates in place
    are not read again: see test_inplace_through_views). Training IR only:
    Core ATen states it as _native_batch_norm_legit_functional, which doccc
    refuses (running-stat updates, ir/ops_unsupported.h)."""
    torch, g = _gen()
    x = torch.randn(4, 3, 5, 6, generator=g)
    w = torch.rand(3, generator=g) + 0.5
    b = torch.randn(3, generator=g)
    rm = torch.randn(3, generator=g)
    rv = torch.rand(3, generator=g) + 0.5
    check_cases(tmp_path, "overloads_bn", [Case("batch_norm", _bn, (x, w, b, rm, rv))], irs=("training",),
                expect={"training": {"aten._native_batch_norm_legit.default"}})


# ---- shape queries of a dynamic export ------------------------------------------

def test_dynamic_shape_queries(tmp_path):
    """sym_stride (a stride that is a product of two dynamic sizes), sym_numel
    and sym_is_contiguous, in an export with dynamic dims, compiled for the
    example sizes. Core ATen keeps sym_stride and rewrites the others into
    sym_size arithmetic."""
    torch, g = _gen()
    from torch.export import Dim
    A = torch.ops.aten
    x = torch.randn(6, 8, 5, generator=g)
    y = torch.randn(7, 3, generator=g)
    cases = [
        Case("queries", lambda x, y: (x * A.sym_stride.int(x, 0), x + A.sym_stride.int(x, -3) // 4,
                                      y * A.sym_numel.default(y), x.reshape(-1) * x.numel(),
                                      torch.full((2,), A.sym_is_contiguous.default(x)),
                                      y.t() * A.sym_stride.int(y, 0)), (x, y)),
    ]
    dyn = ({0: Dim("a", min=2, max=64), 1: Dim("b", min=2, max=64)}, {0: Dim("n", min=2, max=64)})
    check_cases(tmp_path, "overloads_dynamic", cases, dynamic_shapes=dyn,
                expect={"training": {"aten.sym_stride.int", "aten.sym_numel.default", "aten.sym_is_contiguous.default"},
                        "core": {"aten.sym_stride.int"}})


# ---- ops real models leave in the graph (the third round of real models) ---------

def test_default_ir_leftovers(tmp_path):
    """Ops that real models emit and that Core ATen does not tag: unfold
    (a vocoder's framing; it survives run_decompositions()), and, in the
    default IR, outer/ger, eye (both overloads, float and int), the 1-d linear
    upsample (both overloads, align_corners both ways), broadcast_tensors
    (ranks and size-1 dims broadcast) and mse_loss (a codec's losses in an eval
    forward: none, mean and sum)."""
    torch, g = _gen()
    A = torch.ops.aten
    F = torch.nn.functional
    sig = torch.randn(2, 40, generator=g)
    x3 = torch.randn(2, 3, 5, 4, generator=g)
    a, b = torch.randn(5, generator=g), torch.randn(7, generator=g)
    s = torch.randn(2, 3, 9, generator=g)
    p, q = torch.randn(3, 1, 4, generator=g), torch.randn(5, 1, generator=g)
    cases = [
        Case("unfold", lambda sig, x3: (sig.unfold(1, 8, 4), sig.unfold(-1, 5, 7), (sig * 2).unfold(0, 1, 1),
                                        x3.unfold(2, 2, 1), x3.permute(0, 2, 1, 3).unfold(1, 3, 2) * 1.5,
                                        torch.tensor(3.5).unfold(0, 1, 1)), (sig, x3)),
        Case("outer", lambda a, b: (torch.outer(a, b), torch.ger(b, a), A.outer.default(a[1:4], b * 2)), (a, b)),
        Case("eye", lambda a: (torch.eye(4) * a[0], torch.eye(3, 5) + a[1], torch.eye(5, 2, dtype=torch.int64),
                               A.eye.default(3, dtype=torch.bool).to(torch.int32)), (a,)),
        Case("linear1d", lambda s: (F.interpolate(s, scale_factor=2.0, mode="linear"),
                                    F.interpolate(s, size=13, mode="linear", align_corners=True),
                                    F.interpolate(s, size=4, mode="linear"),
                                    A.upsample_linear1d.default(s, [6], False),
                                    A.upsample_linear1d.default(s, [15], True, 1.5)), (s,)),
        Case("broadcast", lambda p, q, a: tuple(t * 1 for t in torch.broadcast_tensors(p, q, a[:4])) +
             tuple(t + 1 for t in A.broadcast_tensors.default([q, a[0:1]])), (p, q, a)),
        Case("mse", lambda x3, s: (F.mse_loss(x3, x3.flip(1)), F.mse_loss(x3, x3 * 0.5, reduction="sum"),
                                   F.mse_loss(x3, x3[:, :1], reduction="none"),
                                   F.mse_loss(s[0], s[1, 0], reduction="none"), F.mse_loss(s, s.flip(2))), (x3, s)),
    ]
    check_cases(tmp_path, "overloads_leftovers", cases,
                expect={"training": {"aten.unfold.default", "aten.outer.default", "aten.ger.default", "aten.eye.default",
                                     "aten.eye.m", "aten.upsample_linear1d.vec", "aten.upsample_linear1d.default",
                                     "aten.broadcast_tensors.default", "aten.mse_loss.default"},
                        "core": {"aten.unfold.default"}})


def test_tables_and_products(tmp_path):
    """More of what run_decompositions() leaves untagged: the signal windows
    (every overload, periodic and symmetric, lengths 0, 1 and more, float32,
    float64 and float16), the FFT sample frequencies (odd and even n),
    tril/triu_indices (offsets past both sides), range (inclusive end,
    fractional step), addmv (scalar and vector self, beta 0) and addbmm."""
    torch, g = _gen()
    A = torch.ops.aten
    x = torch.randn(7, generator=g)
    mat, vec = torch.randn(6, 5, generator=g), torch.randn(5, generator=g)
    b1, b2, s = torch.randn(3, 4, 5, generator=g), torch.randn(3, 5, 2, generator=g), torch.randn(4, 2, generator=g)
    cases = [
        Case("windows", lambda x: (A.hann_window.default(7) * x, A.hann_window.periodic(7, False) + x,
                                   A.hamming_window.default(1), A.hamming_window.periodic(6, True),
                                   A.hamming_window.periodic_alpha(5, False, 0.6),
                                   A.hamming_window.periodic_alpha_beta(8, True, 0.5, 0.4),
                                   A.blackman_window.default(9), A.blackman_window.periodic(9, False),
                                   A.bartlett_window.default(7), A.bartlett_window.periodic(6, False),
                                   A.kaiser_window.default(7), A.kaiser_window.periodic(6, False),
                                   A.kaiser_window.beta(10, True, 5.0), A.hann_window.default(0),
                                   A.hann_window.default(12, dtype=torch.float64),
                                   A.hamming_window.default(10, dtype=torch.float16)), (x,)),
        Case("freqs", lambda x: (A.fft_fftfreq.default(7) + x[0], A.fft_fftfreq.default(8, 0.25),
                                 A.fft_rfftfreq.default(7), A.fft_rfftfreq.default(10, 0.1)), (x,)),
        Case("indices", lambda x: (A.tril_indices.default(3, 4), A.tril_indices.default(4, 3, -1),
                                   A.triu_indices.default(3, 5, 1), A.triu_indices.default(4, 4, -2),
                                   A.tril_indices.default(3, 3, 5), A.triu_indices.default(2, 3, 7)), (x,)),
        Case("range", lambda x: (A.range.default(0, 4) + x[0], A.range.step(-1, 1, 0.25), A.range.step(5, 1, -2),
                                 A.range.default(1, 3, dtype=torch.int64)), (x,)),
        Case("addmv", lambda mat, vec: (A.addmv.default(vec[0:1] * 0 + 1.5, mat, vec), 
                                        A.addmv.default(mat[:, 0], mat, vec, beta=0.5, alpha=2),
                                        A.addmv.default(mat[:5, 1], mat.t()[:, :5].t(), vec, beta=0)), (mat, vec)),
        Case("addbmm", lambda b1, b2, s: (A.addbmm.default(s, b1, b2), A.addbmm.default(s, b1, b2, beta=0.5, alpha=-2),
                                          A.addbmm.default(s[0], b1, b2, beta=0)), (b1, b2, s)),
    ]
    ops = {"hann_window.default", "hann_window.periodic", "hamming_window.default", "hamming_window.periodic",
           "hamming_window.periodic_alpha", "hamming_window.periodic_alpha_beta", "blackman_window.default",
           "blackman_window.periodic", "bartlett_window.default", "bartlett_window.periodic", "kaiser_window.default",
           "kaiser_window.periodic", "kaiser_window.beta", "fft_fftfreq.default", "fft_rfftfreq.default",
           "tril_indices.default", "triu_indices.default", "range.default", "range.step", "addmv.default",
           "addbmm.default"}
    check_cases(tmp_path, "overloads_tables", cases, expect={"training": {f"aten.{o}" for o in ops}})


def test_slow_conv_kernels(tmp_path):
    """The CPU convolution kernels' own overloads, which a graph holds when a
    model calls them (they are not tagged Core ATen and nothing decomposes
    them): dilated 2-d and 3-d, 3-d forward, transposed 2-d and 3-d (output
    padding, dilation), with and without bias, against eager."""
    torch, g = _gen()
    A = torch.ops.aten
    x, w, b = torch.randn(2, 4, 9, 8, generator=g), torch.randn(3, 4, 3, 2, generator=g), torch.randn(3, generator=g)
    x3, w3 = torch.randn(1, 3, 6, 5, 7, generator=g), torch.randn(2, 3, 3, 2, 3, generator=g)
    wt, wt3 = torch.randn(4, 3, 3, 2, generator=g), torch.randn(3, 2, 2, 3, 2, generator=g)
    cases = [
        Case("conv", lambda x, w, b: (A.slow_conv_dilated2d.default(x, w, [3, 2], b, [2, 1], [1, 0], [2, 3]),
                                      A.slow_conv_dilated2d.default(x, w, [3, 2]),
                                      A.slow_conv_transpose2d.default(x, wt, [3, 2], b, [2, 1], [1, 0], [1, 0], [1, 2]),
                                      A.slow_conv_transpose2d.default(x, wt, [3, 2])), (x, w, b)),
        Case("conv3d", lambda x3, w3: (A.slow_conv_dilated3d.default(x3, w3, [3, 2, 3], None, [1, 2, 1], [1, 1, 0], [1, 1, 2]),
                                       A.slow_conv3d_forward.default(x3, w3, [3, 2, 3], w3[:, 0, 0, 0, 0], [2, 1, 1], [0, 1, 1]),
                                       A.slow_conv_transpose3d.default(x3, wt3, [2, 3, 2], None, [2, 1, 2], [0, 1, 0], [1, 0, 0])),
             (x3, w3)),
    ]
    check_cases(tmp_path, "overloads_slow_conv", cases,
                expect={ir: {"aten.slow_conv_dilated2d.default", "aten.slow_conv_dilated3d.default",
                             "aten.slow_conv3d_forward.default", "aten.slow_conv_transpose2d.default",
                             "aten.slow_conv_transpose3d.default"} for ir in ("training", "core")})


def test_more_leftovers(tmp_path):
    """scatter's legacy reduce overloads (add and multiply, a source and a
    value), dist (p 2, 1, 3, inf and 0, broadcasting) and native_batch_norm in
    eval mode (with and without an affine part): what run_decompositions()
    leaves of them, against eager."""
    torch, g = _gen()
    A = torch.ops.aten
    x, src = torch.randn(4, 5, generator=g), torch.randn(3, 5, generator=g)
    idx = torch.randint(0, 4, (3, 5), generator=g)
    y = torch.randn(5, generator=g)
    bx, w, b = torch.randn(2, 3, 4, generator=g), torch.rand(3, generator=g) + 0.5, torch.randn(3, generator=g)
    rm, rv = torch.randn(3, generator=g), torch.rand(3, generator=g) + 0.5
    cases = [
        Case("scatter", lambda x, idx, src: (A.scatter.reduce(x, 0, idx, src, reduce="add"),
                                             A.scatter.reduce(x, 1, idx[:, :4] % 5, src, reduce="multiply"),
                                             A.scatter.value_reduce(x, 0, idx, 1.5, reduce="add"),
                                             A.scatter.value_reduce(x, 1, idx % 5, -2.0, reduce="multiply")),
             (x, idx, src)),
        Case("dist", lambda x, y: (A.dist.default(x, y), A.dist.default(x, y, 1), A.dist.default(x, x * 0.5, 3),
                                   A.dist.default(x, y, float("inf")), A.dist.default(x, y.round(), 0)), (x, y)),
        Case("native_bn", lambda bx, w, b, rm, rv: (A.native_batch_norm.default(bx, w, b, rm, rv, False, 0.1, 1e-5)[0],
                                                    A.native_batch_norm.default(bx, None, None, rm, rv, False, 0.1, 1e-3)[0]),
             (bx, w, b, rm, rv)),
    ]
    # (Core ATen rewrites native_batch_norm into _native_batch_norm_legit_no_training)
    kept = {"aten.scatter.reduce", "aten.scatter.value_reduce", "aten.dist.default"}
    check_cases(tmp_path, "overloads_more_leftovers", cases,
                expect={"training": kept | {"aten.native_batch_norm.default"}, "core": kept})
