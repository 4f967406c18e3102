"""More elementwise and shape ops against eager PyTorch, over every dtype
torch supports for each: fmin/fmax (NaN loses, unlike minimum/maximum),
erfinv, frac, round(decimals=), nan_to_num (defaults: the dtype's largest
finite values), glu, lerp (scalar and tensor weights), xlogy and their
in-place forms; linspace and logspace (every overload, integer dtypes with
torch's truncation, float16/bfloat16 with their rounding), tril/triu,
fliplr/flipud/rot90, pixel (un)shuffle and channel shuffles, diff; and the
run-time assertion _assert_async, whose failure fails the run with
DOCCC_ERR_ASSERT and its message.

Groups are few and large: each costs one export per IR level and one
compile per target."""

from harness import Case, check_cases
from conftest import require

FLOATS = ("float32", "float64", "float16", "bfloat16")


def _gen():
    torch = require("torch")
    return torch, torch.Generator().manual_seed(0)


def _math_cases():
    torch, g = _gen()
    F = torch.nn.functional
    inf, nan = float("inf"), float("nan")
    cases = []
    for name in FLOATS:
        dt = getattr(torch, name)
        a = torch.tensor([nan, 1.0, nan, -inf, inf, 0.0, -0.0, 2.5, -3.0, 7.0, inf, -1.0], dtype=dt)
        b = torch.tensor([1.0, nan, nan, 2.0, -inf, -0.0, 0.0, -1.5, -3.0, inf, nan, -inf], dtype=dt)
        x = (torch.randn(3, 4, 6, generator=g) * 3).to(dt)
        y = (torch.randn(3, 4, 6, generator=g) * 3).to(dt)
        w = (torch.rand(4, 6, generator=g) * 2 - 0.5).to(dt)                       # [-0.5, 1.5): both lerp formulas
        u = (torch.rand(5, 7, generator=g) * 1.998 - 0.999).to(dt)                  # (-0.999, 0.999)
        edge = torch.tensor([1.0, -1.0, 1.5, -2.0, nan, 0.0, -0.0, 0.5, -0.5, 0.9, -0.99, 1e-3], dtype=dt)
        r = torch.tensor([2.5, -2.5, 0.125, -0.05, 1234.5, 1250.0, -49.0, inf, -inf, nan, 0.3, 1.005], dtype=dt)
        p = torch.tensor([0.0, 0.0, 1.0, -2.0, 3.5, 0.0, 2.0, 1.5, -0.0, 4.0], dtype=dt)
        q = torch.tensor([nan, 0.0, 0.0, 2.0, 0.5, -1.0, -1.0, inf, 3.0, 1e-3], dtype=dt)
        cases += [
            Case(f"fminmax_{name}", lambda a, b: (torch.fmin(a, b), torch.fmax(a, b), torch.fmax(b, a), torch.fmin(b, a),
                                                  torch.fmax(a.view(3, 4), b.view(3, 4)[:1])), (a, b)),
            Case(f"fminmax_rand_{name}", lambda x, y: (torch.fmax(x, y), torch.fmin(x, y[0])), (x, y)),
            Case(f"erfinv_{name}", lambda u, e: (torch.erfinv(u), torch.erfinv(e), u.clone().erfinv_()), (u, edge)),
            Case(f"frac_round_{name}", lambda r, x: (torch.frac(r), torch.frac(x), torch.round(r, decimals=1),
                                                     torch.round(x, decimals=2), torch.round(r, decimals=-2),
                                                     torch.round(x * 10, decimals=-1), torch.round(r, decimals=0),
                                                     r.clone().frac_(), x.clone().round_(decimals=1)), (r, x)),
            Case(f"nan_to_num_{name}", lambda a: (torch.nan_to_num(a), torch.nan_to_num(a, nan=1.5, posinf=100.0, neginf=-100.0),
                                                  torch.nan_to_num(a, posinf=-7.0), a.clone().nan_to_num_(nan=-1.0)), (a,)),
            Case(f"glu_{name}", lambda x: (F.glu(x), F.glu(x, 1), F.glu(x.permute(2, 0, 1), 0), F.glu(x, -1)), (x,)),
            Case(f"lerp_{name}", lambda x, y, w: (torch.lerp(x, y, 0.3), torch.lerp(x, y, 0.7), torch.lerp(x, y, w),
                                                  torch.lerp(x, y, 1.0), x.clone().lerp_(y, 0.6), x.clone().lerp_(y, w)),
                 (x, y, w)),
            Case(f"xlogy_{name}", lambda p, q: (torch.xlogy(p, q), torch.special.xlogy(p, q), p.clone().xlogy_(q)), (p, q)),
        ]
    ints = {name: torch.randint(-6, 7, (3, 5), generator=g, dtype=getattr(torch, name)) for name in ("int64", "int32")}
    m = torch.rand(3, 5, generator=g) > 0.5
    n = torch.rand(3, 5, generator=g) > 0.5
    f = torch.randn(3, 5, generator=g)
    # float32 rows long enough for the CPU's vector code (fmax, fmin, glu have SIMD forms)
    va = torch.randn(4, 64, generator=g)
    vb = torch.randn(4, 64, generator=g)
    va[0, ::3] = nan
    vb[1, ::5] = nan
    vb[0, ::7] = nan
    cases += [
        Case("vec_f32", lambda a, b: (torch.fmax(a, b), torch.fmin(a, b), F.glu(a), F.glu(b, 0)), (va, vb)),
        Case("int", lambda i, j, m, n, f: (torch.fmax(i, i.flip(0)), torch.fmin(i, i.flip(1)), torch.fmax(j, j.t().reshape(3, 5)),
                                           torch.fmin(j, j * 2), torch.fmax(m, n), torch.fmin(m, n),
                                           torch.nan_to_num(i), torch.nan_to_num(j), torch.nan_to_num(m),
                                           torch.erfinv(i.clamp(-1, 1)), torch.xlogy(i, j.abs()), torch.fmax(j, f),
                                           torch.fmin(i, f)),
             (ints["int64"], ints["int32"], m, n, f)),
    ]
    return cases


def test_elem_more_math(tmp_path):
    """fmin/fmax, erfinv, frac, round.decimals, nan_to_num, glu, lerp, xlogy and
    the in-place forms export keeps, every float dtype, NaN/inf/signed zero edges;
    integer and bool operands where torch takes them."""
    check_cases(tmp_path, "elem_more_math", _math_cases())


SPECIAL_OPS = {"exp2.default", "erfc.default", "lgamma.default", "digamma.default", "polygamma.default", "i0.default",
               "special_i0e.default", "special_i1.default", "special_i1e.default", "special_erfcx.default",
               "special_ndtri.default", "signbit.default", "special_zeta.default", "special_zeta.self_scalar",
               "special_zeta.other_scalar", "hypot.default", "copysign.Tensor", "copysign.Scalar", "ldexp.Tensor",
               "nextafter.default", "remainder.Scalar_Tensor"}
BIT_OPS = {"gcd.default", "lcm.default", "bitwise_left_shift.Tensor", "bitwise_left_shift.Tensor_Scalar",
           "bitwise_left_shift.Scalar_Tensor", "bitwise_right_shift.Tensor", "bitwise_right_shift.Tensor_Scalar",
           "bitwise_right_shift.Scalar_Tensor", "__lshift__.Tensor", "__lshift__.Scalar", "__rshift__.Tensor",
           "__rshift__.Scalar", "bitwise_and.Scalar_Tensor", "bitwise_or.Scalar_Tensor", "bitwise_xor.Scalar_Tensor"}


def _special_cases():
    torch, g = _gen()
    inf, nan = float("inf"), float("nan")
    cases = []
    for name in FLOATS:
        dt = getattr(torch, name)
        full = dt in (torch.float32, torch.float64)   # erfcx, ndtri and zeta: torch has no float16/bfloat16 kernels
        a = torch.tensor([0.0, -0.0, 1.0, -1.0, -2.5, 0.5, 2.0, 7.5, -3.0, 100.0, inf, -inf, nan, 1e-3, -7.25, 35.0], dtype=dt)
        b = torch.tensor([1.0, -2.0, -0.0, 0.0, 3.0, nan, 2.0, -inf, -3.0, 1.5, -1.0, 5.0, 1.0, 4.0, inf, -35.0], dtype=dt)
        x = (torch.randn(3, 4, 5, generator=g) * 4).to(dt)
        y = (torch.randn(3, 4, 5, generator=g) * 4).to(dt)
        pole_free = (torch.rand(3, 4, 5, generator=g) * 12 - 5.75).to(dt)       # polygamma away from 0, -1, -2, ...
        e = torch.tensor([0, 3, -2, 200, -160, 1, 5, -1, 2, 0, 4, -3, 0, 7, -20, -149])
        cases += [
            Case(f"gamma_{name}", lambda a, x, p: (torch.exp2(a), torch.erfc(a), torch.lgamma(a), torch.digamma(a), torch.digamma(x),
                                                   torch.lgamma(x), torch.polygamma(0, x), torch.polygamma(1, p), torch.polygamma(2, p),
                                                   torch.polygamma(3, a[[0, 2, 5, 6, 7, 9, 10, 12, 13, 15]]), torch.exp2(x),
                                                   torch.erfc(x), torch.signbit(a), torch.signbit(x)), (a, x, pole_free)),
            # i0e: torch's float16/bfloat16 kernel computes in that precision (ulps off), which doccc refuses
            Case(f"bessel_{name}", lambda a, x: (torch.i0(a), torch.special.i1(a), torch.special.i1e(a), torch.i0(x * 8),
                                                 torch.special.i1(x * 8), torch.special.i1e(x * 20))
                 + ((torch.special.i0e(a), torch.special.i0e(x * 20)) if a.dtype in (torch.float32, torch.float64) else ()), (a, x)),
            Case(f"binary_{name}", lambda a, b, x, y, e: (torch.hypot(a, b), torch.copysign(a, b), torch.copysign(x, -1.5),
                                                         torch.copysign(y, 2), torch.ldexp(a, e), torch.ldexp(x, y.round()),
                                                         torch.nextafter(a, b), torch.nextafter(x, y), torch.remainder(3.5, a),
                                                         torch.remainder(-2, x), torch.hypot(x, y)), (a, b, x, y, e)),
        ]
        if full:
            p = torch.tensor([0.0, 1.0, 0.5, 0.25, 0.75, 1e-10, 1e-30, 0.999999, 0.1, -0.1, 1.1, nan, 0.3, 0.05, 0.95, 1e-38], dtype=dt)
            u = torch.rand(4, 5, generator=g).to(dt)
            s = torch.tensor([1.0, 2.0, 0.5, 3.0, 4.5, 2.0, 2.0, 3.0, inf, nan, 1.5, 10.0, 6.0, 2.0, 3.0, 30.0], dtype=dt)
            q = torch.tensor([1.0, 2.0, 1.0, -2.5, 0.5, 0.0, -3.0, 1e-3, 2.0, 1.0, -1.5, 3.0, 100.0, inf, 20.0, 1.0], dtype=dt)
            cases += [
                Case(f"erfcx_ndtri_zeta_{name}", lambda a, x, p, u, s, q: (torch.special.erfcx(a), torch.special.erfcx(x * 5),
                                                                          torch.special.ndtri(p), torch.special.ndtri(u),
                                                                          torch.special.zeta(s, q), torch.special.zeta(x.abs() + 1, y.abs()),
                                                                          torch.special.zeta(2.5, q), torch.special.zeta(s, 3.0)),
                     (a, x, p, u, s, q)),
            ]
    i = torch.tensor([-3, 0, 5, 12, -8, 7, 1, 0, -2**31, 2**31 - 1, 6, 9])
    j = torch.tensor([6, 0, 0, -18, 12, 7, -1, 4, 2, 3, 9, 15])
    k = torch.tensor([3, 0, 5, 1, 2, 7, 1, 4, 63, 64, -1, 70])
    i8 = torch.tensor([5, -5, 1, -128, 127, 3, -1, 0, 64, -64, 2, 100], dtype=torch.int8)
    k8 = torch.tensor([-1, 9, 7, 1, 0, 8, 3, 2, 1, 6, 5, -2], dtype=torch.int8)
    u8 = torch.tensor([5, 200, 1, 255, 0, 128, 7, 3, 9, 64, 16, 33], dtype=torch.uint8)
    v8 = torch.tensor([200, 1, 7, 8, 3, 0, 2, 1, 9, 2, 4, 5], dtype=torch.uint8)
    m = torch.tensor([True, False, True, False, True, True, False, False, True, False, True, False])
    f = torch.randn(12, generator=g) * 3
    cases += [
        Case("int_special", lambda i, j, m, f, k8: (torch.exp2(i), torch.erfc(i), torch.lgamma(j), torch.digamma(i), torch.i0(i),
                                                torch.special.i1e(j), torch.special.erfcx(m), torch.special.ndtri(m), torch.signbit(i),
                                                torch.signbit(m), torch.copysign(i, j), torch.copysign(m, -1), torch.ldexp(i, j),
                                                torch.ldexp(f, i.clamp(-20, 20)), torch.hypot(f, i), torch.remainder(7, k8[5:]),
                                                torch.remainder(2.5, i), torch.polygamma(1, m), torch.special.zeta(j, 2.0),
                                                torch.nextafter(f, i)), (i, j, m, f, k8)),
        Case("int_bits", lambda i, j, k, i8, k8, u8, v8, m: (torch.gcd(i, j), torch.lcm(i, j), torch.gcd(i8, k8), torch.lcm(u8, v8),
                                                             torch.bitwise_left_shift(i, k), torch.bitwise_right_shift(i, k),
                                                             torch.bitwise_left_shift(i8, k8), torch.bitwise_right_shift(i8, k8),
                                                             torch.bitwise_left_shift(u8, v8), torch.bitwise_right_shift(u8, v8),
                                                             i << k, i >> 2, i8 << 3, u8 >> k8, torch.bitwise_left_shift(i, 3),
                                                             torch.bitwise_right_shift(i8, 9), torch.bitwise_left_shift(3, k),
                                                             torch.bitwise_right_shift(-100, k8), torch.bitwise_and(6, j),
                                                             torch.bitwise_or(-8, i8), torch.bitwise_xor(5, u8), torch.bitwise_and(True, m),
                                                             torch.bitwise_or(False, m), torch.bitwise_xor(True, m)),
             (i, j, k, i8, k8, u8, v8, m)),
    ]
    return cases


def test_elem_special(tmp_path):
    """exp2, erfc, lgamma, digamma, polygamma, Bessel i0/i0e/i1/i1e, erfcx,
    ndtri, zeta (every overload), signbit, hypot, copysign, ldexp, nextafter
    (float16/bfloat16 in their own ulps) and remainder of a scalar, every float
    dtype torch has a kernel for, with 0, -0, poles, negative, large, inf and
    NaN inputs; integer and bool inputs (promoted to float as torch does);
    gcd, lcm and the shifts (every overload and alias, counts below 0 or past
    the width, int8 and uint8) and bitwise ops with a scalar first."""
    ops = {f"aten.{o}" for o in SPECIAL_OPS | BIT_OPS}
    check_cases(tmp_path, "elem_special", _special_cases(), expect={"training": ops, "core": ops})


def _shape_cases():
    torch, g = _gen()
    cases = []
    s = torch.tensor([-1.25, 3.5])
    si = torch.tensor([-7, 40])
    cases += [
        Case("linspace", lambda: (torch.linspace(0, 1, 7), torch.linspace(-3.5, 17.25, 40, dtype=torch.float64),
                                  torch.linspace(0, 10, 25, dtype=torch.int64), torch.linspace(-7, 0, 37, dtype=torch.int32),
                                  torch.linspace(5, -5, 33, dtype=torch.float16), torch.linspace(0.1, 7.9, 20, dtype=torch.bfloat16),
                                  torch.linspace(2.7, 3, 1), torch.linspace(2.7, 3, 1, dtype=torch.int64),
                                  torch.linspace(0, 1, 100), torch.linspace(1e3, 1.7e3, 300, dtype=torch.float16)), ()),
        Case("linspace_tensor", lambda s, si: (torch.linspace(s[0], s[1], 9), torch.linspace(s[0], 4.0, 11),
                                               torch.linspace(-2, s[1], 13, dtype=torch.float64),
                                               torch.linspace(si[0], si[1], 30, dtype=torch.int64),
                                               torch.linspace(s[1], s[0], 10, dtype=torch.int32),
                                               torch.linspace(s[0], s[1], 17, dtype=torch.float16)), (s, si)),
        Case("logspace", lambda: (torch.logspace(0, 2, 7), torch.logspace(-1, 1.5, 9, base=2.0, dtype=torch.float64),
                                  torch.logspace(0.5, 2, 13, dtype=torch.float16), torch.logspace(-2, 3, 25, base=3.0, dtype=torch.bfloat16),
                                  torch.logspace(0, 3, 10, dtype=torch.int64), torch.logspace(1, 4, 7, base=2.0, dtype=torch.int32),
                                  torch.logspace(0.5, 3, 1, base=2.0), torch.logspace(2, 3, 1, dtype=torch.int64)), ()),
        Case("logspace_tensor", lambda s: (torch.logspace(s[0], s[1], 8, base=2.0), torch.logspace(s[0], 2, 6),
                                           torch.logspace(-1, s[1], 5, dtype=torch.float64),
                                           torch.logspace(s[0], s[1], 9, base=1.5, dtype=torch.int64)), (s,)),
    ]
    dtypes = ("float32", "float64", "float16", "bfloat16", "int64", "int32", "bool")
    for name in dtypes:
        dt = getattr(torch, name)
        if dt == torch.bool:
            x = torch.rand(2, 3, 4, 5, generator=g) > 0.4
            v = torch.rand(2, 8, 3, 3, generator=g) > 0.5
        elif dt.is_floating_point:
            x = torch.randn(2, 3, 4, 5, generator=g).to(dt)
            v = torch.randn(2, 8, 3, 3, generator=g).to(dt)
        else:
            x = torch.randint(-50, 50, (2, 3, 4, 5), generator=g, dtype=dt)
            v = torch.randint(-50, 50, (2, 8, 3, 3), generator=g, dtype=dt)
        cases += [
            Case(f"tri_{name}", lambda x: (torch.tril(x), torch.triu(x), torch.tril(x, 1), torch.triu(x, -2), torch.tril(x, -3),
                                           torch.triu(x, 7), torch.tril(x[0, 0].t(), 2), torch.triu(x[1].permute(2, 0, 1), 1),
                                           x.clone().tril_(-1), x.clone().triu_(2)), (x,)),
            Case(f"flip_{name}", lambda x: (torch.fliplr(x), torch.flipud(x), torch.flipud(x[0, 0, 0]), torch.rot90(x),
                                            torch.rot90(x, 2), torch.rot90(x, -1, [2, 0]), torch.rot90(x, 3, [1, 3]),
                                            torch.rot90(x, 4), torch.rot90(x, -6, [-1, -3]), torch.rot90(x[0].permute(1, 0, 2), 5, [1, 2])),
                 (x,)),
            Case(f"shuffle_{name}", lambda v, x: (torch.pixel_shuffle(v, 2), torch.pixel_unshuffle(v[:, :2, :2, :], 1),
                                                  torch.pixel_unshuffle(x, 1), torch.pixel_unshuffle(x[..., :4, :4], 2),
                                                  torch.pixel_shuffle(v[:, :, :2, :2].reshape(2, 2, 4, 2, 2), 2),
                                                  torch.pixel_shuffle(v.reshape(2, 72, 1, 1)[:, :18], 3),
                                                  torch.channel_shuffle(v, 2), torch.channel_shuffle(v[:, :6], 3),
                                                  torch.nn.ChannelShuffle(4)(v[0, :, :, 0].unsqueeze(0)),
                                                  torch.native_channel_shuffle(v, 4), torch.pixel_shuffle(v.permute(0, 1, 3, 2), 2)),
                 (v, x)),
            Case(f"diff_{name}", lambda x: (torch.diff(x), torch.diff(x, n=2, dim=0 if x.shape[0] > 2 else 2), torch.diff(x, n=3, dim=-2),
                                            torch.diff(x, dim=1, prepend=x[:, :1], append=x[:, 1:]),
                                            torch.diff(x[0, 0], n=2, dim=0, prepend=x[1, 1, :2]),
                                            torch.diff(x.transpose(1, 3), dim=1, append=x.transpose(1, 3)[:, :2])), (x,)),
        ]
    return cases


def test_elem_more_shape(tmp_path):
    """linspace/logspace (every overload, steps 1, integer, float16, bfloat16),
    tril/triu (diagonal offsets, batched, non-contiguous), fliplr/flipud/rot90
    (k of every residue, negative, dims), pixel_shuffle/unshuffle, channel
    shuffles and diff (n, dim, prepend, append), every dtype."""
    check_cases(tmp_path, "elem_more_shape", _shape_cases())


def test_assert_async(tmp_path):
    """torch._assert_async(cond) and (cond, msg) check at run time: inputs for
    which they hold run and give torch's results; inputs for which one fails
    make `doccc run` fail with DOCCC_ERR_ASSERT, whose text and the library's
    last_error (the message) it prints, on every target and IR level."""
    torch = require("torch")
    np = require("numpy")
    from conftest import IRS, TARGETS, compile_model, doccc_cmd, fmt_result

    class M(torch.nn.Module):
        def forward(self, x, i):
            torch._assert_async(x.sum() > 0)
            torch._assert_async((i < 5).all(), "index i must be below 5")
            return x * 2, i + 1

    x = torch.tensor([1.0, 2.0, -0.5])
    i = torch.tensor([0, 4, 2, 1])
    cases = {"ok": (x, i, None), "sum": (-x, i, "Expected Tensor with single nonzero value"),
             "msg": (x, torch.tensor([0, 5, 2, 1]), "index i must be below 5")}
    for ir in IRS:
        ep = torch.export.export(M(), (x, i))
        if ir == "core":
            ep = ep.run_decompositions()
        ops = {str(n.target) for n in ep.graph.nodes if n.op == "call_function"}
        assert "aten._assert_async.msg" in ops, ops
        if ir == "training":
            assert "aten._assert_async.default" in ops, ops
        pt2 = tmp_path / f"as_{ir}.pt2"
        torch.export.save(ep, str(pt2))
        for target in TARGETS:
            lib = compile_model(pt2, target, tmp_path / f"{ir}_{target}", "-n", "as")
            for label, (xv, iv, want) in cases.items():
                np.save(tmp_path / "x.npy", xv.numpy())
                np.save(tmp_path / "i.npy", iv.numpy())
                r = doccc_cmd("run", lib, "-i", tmp_path / "x.npy", "-i", tmp_path / "i.npy",
                              "-o", tmp_path / "o0.npy", "-o", tmp_path / "o1.npy")
                where = f"[{ir},{target},{label}]"
                if label == "ok" or (label == "sum" and ir == "core"):
                    # torch's core decomposition drops _assert_async.default (not .msg):
                    # the core program has no check left for the sum
                    assert r.returncode == 0, f"{where}\n{fmt_result(r)}"
                    np.testing.assert_array_equal(np.load(tmp_path / "o0.npy"), (xv * 2).numpy(), err_msg=where)
                    np.testing.assert_array_equal(np.load(tmp_path / "o1.npy"), (iv + 1).numpy(), err_msg=where)
                else:
                    assert r.returncode == 1 and "run-time assertion" in r.stderr and want in r.stderr, \
                        f"{where}\n{fmt_result(r)}"


def test_elem_more_eager_rules(tmp_path):
    """Rules of torch's eager kernels that its core decomposition does not
    follow (the decomposed program itself gives other values there), so at
    the training IR only: integer linspace truncates fractional ends first,
    logspace of one step is base ** start unconverted, float16 logspace
    rounds the start, end and their difference to float16."""
    torch = require("torch")
    s = torch.tensor([-2.75, 6.5])
    cases = [
        Case("linspace_int", lambda s: (torch.linspace(-7.9, -0.5, 37, dtype=torch.int32), torch.linspace(0.5, 7.9, 20, dtype=torch.int64),
                                        torch.linspace(s[0], s[1], 13, dtype=torch.int64)), (s,)),
        Case("logspace_eager", lambda: (torch.logspace(0.3, 2.1, 33, dtype=torch.float16), torch.logspace(0.5, 3, 1, dtype=torch.int64),
                                        torch.logspace(1.7, 2, 1, dtype=torch.int32)), ()),
    ]
    check_cases(tmp_path, "elem_more_eager", cases, irs=("training",))


def test_int_lanes(tmp_path):
    """int32 tensors in SIMD maps (int32 lanes): cast to float32, arithmetic,
    rounding half to even (torch.round), uint8 and int8 loads widened, and
    a clamp to uint8's range cast to uint8 (8-bit lanes): every target."""
    torch, g = _gen()
    i = torch.randint(-1000, 1000, (3, 40), generator=g, dtype=torch.int32)
    j = torch.randint(-1000, 1000, (3, 40), generator=g, dtype=torch.int32)
    u = torch.randint(0, 256, (3, 40), generator=g, dtype=torch.int32).to(torch.uint8)
    s = torch.randint(-128, 128, (3, 40), generator=g, dtype=torch.int32).to(torch.int8)
    h = torch.tensor([0.5, 1.5, 2.5, -0.5, -1.5, -2.5, 1e8, -3.7, 0.49999997, 8388609.0, float("nan"), -0.0] * 3)
    f = torch.randn(3, 40, generator=g) * 300
    # alone in its program: an int32 load in a float32 map, no int32 arithmetic anywhere
    check_cases(tmp_path, "int_cast", [Case("int32_to_float", lambda a: a.float() * 0.5 + 1, (i,))])
    check_cases(tmp_path, "int_lanes", [
        Case("int32_arith", lambda a, b: (a.float() * 0.5 + 1, a * b - a, a + 7), (i, j)),
        Case("round_even", lambda x, y: (torch.round(x), torch.round(y)), (h, f)),
        Case("u8_i8_widen", lambda a, b: (a.float() * 2 - 3, b.float() * 0.25), (u, s)),
        Case("clamp_to_u8", lambda x: torch.round(x).clamp(0, 255).to(torch.uint8), (f,)),
    ])
