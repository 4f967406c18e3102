"""Elementwise ops against eager PyTorch: unary math, binary arithmetic with
broadcasting and python scalars, comparisons, logical and bitwise ops,
where/masked_fill, clamps, casts and in-place variants, over every dtype
doccc supports, with PyTorch's type promotion, its NaN rules, integer
division and remainder signs, and float16/bfloat16 rounded after every op.

Groups are few and large: each costs one export per IR level and one
compile per target."""

from harness import Case, check_cases
from conftest import require


def _gen():
    torch = require("torch")
    return torch, torch.Generator().manual_seed(0)


def test_elem_float_math(tmp_path):
    """float32 unary and binary math, activations, NaN/inf rules."""
    torch, g = _gen()
    F = torch.nn.functional
    x = torch.randn(3, 4, 5, generator=g)
    u = torch.rand(3, 4, 5, generator=g) * 1.8 - 0.9          # (-0.9, 0.9): asin, atanh
    p = torch.rand(3, 4, 5, generator=g) * 4 + 0.1            # positive
    big = torch.rand(3, 4, 5, generator=g) * 4 + 1.01         # > 1: acosh
    y = torch.randn(4, 1, generator=g)                        # broadcasts against x
    nan = torch.tensor([float("nan"), float("inf"), -float("inf"), 0.0, -0.0, 1.5, -2.5, 0.5, 2.5, 3.0])
    other = torch.tensor([1.0, float("nan"), 2.0, -1.0, float("nan"), 1.5, -3.0, 0.5, float("inf"), -0.0])
    cases = [
        Case("unary_a", lambda t: (torch.abs(t), torch.neg(t), torch.exp(t), torch.expm1(t), torch.sin(t),
                                   torch.cos(t), torch.tan(t), torch.atan(t), torch.sinh(t), torch.cosh(t),
                                   torch.tanh(t), torch.asinh(t), torch.erf(t), torch.sigmoid(t),
                                   torch.sign(t), torch.floor(t * 3), torch.ceil(t * 3), torch.round(t * 3),
                                   torch.trunc(t * 3)), (x,)),
        Case("unary_dom", lambda a, b, c: (torch.asin(a), torch.acos(a), torch.atanh(a), torch.log(b),
                                           torch.log2(b), torch.log10(b), torch.log1p(b), torch.sqrt(b),
                                           torch.rsqrt(b), torch.reciprocal(b), torch.acosh(c)), (u, p, big)),
        Case("activations", lambda t: (F.relu(t), F.relu6(t * 4), F.silu(t), F.gelu(t), F.gelu(t, approximate="tanh"),
                                       F.hardswish(t * 4), F.hardsigmoid(t * 4), F.hardtanh(t, -0.5, 0.7),
                                       F.leaky_relu(t, 0.2), F.elu(t), F.elu(t, alpha=0.7), F.mish(t),
                                       F.softplus(t), F.softplus(t * 10, beta=2, threshold=5),
                                       torch.ops.aten.elu(t, 1.3, 1.2, 0.8)), (x,)),
        Case("binary_bcast", lambda a, b: (a + b, a - b, a * b, a / b, torch.maximum(a, b), torch.minimum(a, b),
                                           torch.atan2(a, b), torch.pow(a.abs() + 0.1, b), torch.add(a, b, alpha=2.5),
                                           torch.sub(a, b, alpha=0.5), torch.rsub(a, b), torch.rsub(a, 2.0, alpha=3),
                                           torch.fmod(a, b), torch.remainder(a, b),
                                           torch.div(a * 5, b, rounding_mode="floor"),
                                           torch.div(a * 5, b, rounding_mode="trunc")), (x, y)),
        Case("scalars", lambda a: (a + 2, a * 0.5, 3 - a, a / 3, a ** 2, a ** 0.5, 2 ** a, a.pow(3), a.pow(-1),
                                   torch.fmod(a, 0.3), torch.remainder(a, -0.3), torch.div(a, 0.3, rounding_mode="floor"),
                                   torch.clamp(a, -0.5, 0.5), torch.clamp(a, min=0.2), torch.clamp(a, max=-0.1),
                                   torch.clamp(a, 0.5, -0.5), a > 0, a <= 0.25, a == 0, a != 1), (x,)),
        Case("noncontig", lambda a, b: (a.permute(2, 0, 1) * b.t()[:, None, :],
                                        a[:, ::2, 1:4] - a[:, 1::2, :3], torch.where(a[..., ::2] > 0, a[..., ::2], -1.0)),
             (x, y.expand(4, 5).contiguous())),
        Case("nan_rules", lambda a, b: (torch.maximum(a, b), torch.minimum(a, b), torch.clamp(a, -1, 1), F.relu(a),
                                        torch.isnan(a), torch.isinf(a), torch.sign(a), a == b, a != b, a < b, a >= b,
                                        torch.clamp(a, b, b + 1), torch.clamp_min(a, b), torch.clamp_max(a, b),
                                        torch.fmod(a, b), torch.remainder(a, b), torch.round(a), torch.floor(a),
                                        F.hardtanh(a), F.relu6(a), torch.div(a, b, rounding_mode="floor"),
                                        F.leaky_relu(a), F.hardsigmoid(a), torch.abs(a), torch.neg(a)),
             (nan, other)),
        Case("where_mask", lambda a, b: (torch.where(a > 0, a, b), a.masked_fill(a < 0, -7.5),
                                         a.masked_fill(b > 0, b[1, 0]), torch.where(b > 0, a, 0.25)), (x, y)),
        Case("inplace", lambda a, b: _inplace(a.clone(), b), (x, y)),
        Case("more", lambda a, b: (torch.selu(a), F.celu(a, 1.3), torch.square(a), torch.clip(a, -0.4, 0.6),
                                   torch.true_divide(a, b), torch.sgn(a), torch.clamp(a, min=b), torch.clamp(a, max=b),
                                   torch.clamp(a, b - 0.5, b + 0.5), torch.logical_not(a > 0),
                                   F.hardtanh(a.clone(), -0.2, 0.2, inplace=True), F.leaky_relu(a.clone(), 0.3, inplace=True),
                                   F.relu6(a * 5, inplace=False), torch.nn.functional.silu(a.clone(), inplace=True),
                                   a.clone().logical_and_(b > 0), a.clone().logical_not_(), a.clone().lt_(b),
                                   a.clone().eq_(0.5), a.clone().floor_divide_(b), a.clone().sign_()),
             (x, y)),
        # rank-0 tensors made inside fn (select): conftest's run_lib turns 0-d inputs into 1-d
        Case("rank0", lambda a, s: (a * s[1], s[1] + 1, torch.exp(s[0]), torch.where(s[1] > 0, a, s[2])),
             (x, torch.tensor([0.75, -0.5, 2.0]))),
        Case("empty", lambda a, b: (a + b, torch.exp(a), a > 0), (torch.zeros(0, 3), torch.ones(3))),
    ]
    check_cases(tmp_path, "elem_f32", cases)


def _inplace(a, b):
    a.add_(b)
    a.mul_(2.0)
    a.sub_(b, alpha=0.5)
    a.div_(3.0)
    c = a.clone()
    c.relu_()
    d = a.clone()
    d.clamp_(-0.3, 0.3)
    e = a.clone()
    e.sigmoid_()
    f = a.clone()
    f.masked_fill_(f > 0.1, 0.0)
    return a, c, d, e, f


def test_elem_int_bool(tmp_path):
    """Integers and bool: wraparound, floor/trunc division and remainder
    signs with negative operands, integer pow, bitwise and logical ops,
    promotion with python scalars and across dtypes."""
    torch, g = _gen()
    a = torch.randint(-20, 20, (4, 6), generator=g)
    b = torch.randint(1, 7, (4, 6), generator=g) * torch.where(torch.rand(4, 6, generator=g) > 0.5, 1, -1)
    i32 = a.to(torch.int32)
    i16 = a.to(torch.int16)
    i8 = (a * 6).to(torch.int8)
    u8 = torch.randint(0, 256, (4, 6), generator=g).to(torch.uint8)
    u8b = torch.randint(0, 256, (1, 6), generator=g).to(torch.uint8)
    bo = torch.rand(4, 6, generator=g) > 0.5
    bo2 = torch.rand(1, 6, generator=g) > 0.3
    f = torch.randn(4, 6, generator=g)
    cases = [
        Case("i64_div", lambda x, y: (torch.div(x, y, rounding_mode="floor"), torch.div(x, y, rounding_mode="trunc"),
                                      torch.remainder(x, y), torch.fmod(x, y), x // y, x % y, x / y,
                                      torch.remainder(x, -3), torch.fmod(x, -3), torch.div(x, -3, rounding_mode="floor"),
                                      torch.div(x, 4, rounding_mode="trunc")), (a, b)),
        Case("i64_arith", lambda x, y: (x + y, x - 3, x * y, -x, torch.abs(x), torch.sign(x), x ** 2, torch.pow(y, 3),
                                        torch.pow(2, y.abs()), torch.maximum(x, y), torch.minimum(x, y),
                                        torch.clamp(x, -5, 5), torch.relu(x), x.floor(), x.round(),
                                        x > y, x == 3, x <= 0.5, x + 0.5, x * 1.5, torch.sqrt(x.abs()), torch.exp(x * 0.1),
                                        x & y, x | 5, x ^ y, ~x, torch.pow(x, y.abs()), torch.square(x),
                                        torch.bitwise_and(x, y), torch.bitwise_xor(x, 6)), (a, b)),
        Case("i32_i16_i8", lambda x, y, z: (x + y, y * z, z + z * 50, x // 3, y % -4, z.abs(), x.to(torch.float32) + z,
                                            x + y.to(torch.int64), torch.bitwise_not(z), z & 0x0F, x < y), (i32, i16, i8)),
        Case("uint8", lambda x, y: (x + y, x - y, x * 3, x // 7, x % 5, x > y, x & y, ~x, x + 1.5,
                                    torch.maximum(x, y), x.to(torch.int64) - 300), (u8, u8b)),
        Case("bool", lambda p, q, x, y: (p & q, p | q, p ^ q, ~p, torch.logical_and(p, q), torch.logical_or(x, q),
                                         torch.logical_xor(x, y), torch.logical_not(y), p + q, p * 3, p + 0.5, p == q,
                                         torch.where(p, x, y), torch.where(q, 1.0, y), x.masked_fill(p, 7),
                                         p.to(torch.float32), y.to(torch.bool), x.to(torch.bool), y > 0),
             (bo, bo2, a, f)),
        Case("mixed", lambda x, y, z: (x + y, x * y, x / y, y - x, x > y, torch.maximum(x, y), z + y, z.type_as(y),
                                       y.to(torch.int32), (y * 10).to(torch.int8), torch.where(x > 0, x, y),
                                       x.to(torch.float64) + y, torch.eq(x, y.round())), (a, f, bo)),
    ]
    check_cases(tmp_path, "elem_int", cases)


def _tricky_f32():
    torch = require("torch")
    v = [0.0, -0.0, 1.0, -1.0, 65504.0, 65505.0, 65519.0, 65520.0, 65536.0, 1e6, -1e6, 1e-8, 5.96e-8, 2.98e-8,
         2.9802322e-08, 5.9604645e-08, 8.940697e-08, 6.1035156e-05, 6.097555e-05, 6.1e-05, 1.0009765625,
         1.00048828125, 1.000732421875, 1.00146484375, 0.1, 1 / 3, 2049.0, 2051.0, 4097.0,
         float("inf"), -float("inf"), float("nan"), 3.4e38, 1.17549435e-38, 1e-40, -1e-45,
         1.00390625, 1.01171875, 1.0078125, 1.01953125, 255.5, 256.5, 257.0, 3.0e38, -7.5e-41]
    r = torch.Generator().manual_seed(1)
    rnd = torch.cat([torch.randn(200, generator=r) * 10 ** torch.randint(-9, 6, (200,), generator=r).float(),
                     (torch.randint(-(1 << 30), 1 << 30, (200,), generator=r).to(torch.int32)).view(torch.float32)])
    return torch.cat([torch.tensor(v, dtype=torch.float32), rnd])


def test_elem_half(tmp_path):
    """float16 and bfloat16: conversions bit-exact against PyTorch over
    subnormals, overflow, NaN, inf and rounding ties; ops computed in float
    and rounded after each op, also where fused."""
    torch, g = _gen()
    F = torch.nn.functional
    t = _tricky_f32()
    h = torch.randn(3, 8, generator=g).to(torch.float16)
    hb = torch.randn(1, 8, generator=g).to(torch.float16)
    bf = torch.randn(3, 8, generator=g).to(torch.bfloat16)
    i = torch.randint(-5, 5, (3, 8), generator=g)
    cases = [
        # conversions are exact operations: compared bit for bit
        Case("cast_f16", lambda x: (x.to(torch.float16).to(torch.float32), x.to(torch.float16),
                                    x.to(torch.float64).to(torch.float16)), (t,), rtol=0, atol=0),
        Case("cast_bf16", lambda x: (x.to(torch.bfloat16).to(torch.float32), x.to(torch.bfloat16),
                                     x.to(torch.float16).to(torch.bfloat16)), (t,), rtol=0, atol=0),
        Case("f16_ops", lambda x, y: (x + y, x * y, x / y, x - y * 2, torch.exp(x), torch.sigmoid(x), F.gelu(x),
                                      torch.tanh(x), x.abs().sqrt(), torch.maximum(x, y), x > y, x * 0.1,
                                      x.to(torch.float32) + 1, (x * y + x) * y, torch.clamp(x, -0.5, 0.5),
                                      torch.add(x, y, alpha=3), torch.where(x > 0, x, y), F.silu(x),
                                      torch.remainder(x, 0.7), torch.div(x, y, rounding_mode="floor"), -x),
             (h, hb)),
        Case("bf16_ops", lambda x, y: (x + 1, x * x, x / 3, torch.exp(x), F.relu(x), torch.log1p(x.abs()), x > 0,
                                       (x + 1) * (x - 1), x.to(torch.float16), x + y.to(torch.bfloat16),
                                       torch.sin(x), F.hardswish(x), torch.sign(x)), (bf, h)),
        Case("half_mixed", lambda x, y, z: (x + z, y * z, x + y, x + 1.5, z / 2, (z * 0.5).to(torch.float16),
                                            x.to(torch.bfloat16) + y, x * z[0, 1].to(torch.float32) / 7, x + (z[0, 1] / 7),
                                            x * (z[1, 2] / 7).to(torch.float64), x > z[2, 2] / 3), (h, bf, i)),
    ]
    check_cases(tmp_path, "elem_half", cases)


def test_elem_f64(tmp_path):
    """float64 math and promotion (float64 with float32 and ints)."""
    torch, g = _gen()
    d = torch.randn(2, 3, 4, generator=g, dtype=torch.float64)
    f = torch.randn(3, 1, generator=g)
    i = torch.randint(-9, 9, (4,), generator=g)
    cases = [
        Case("f64", lambda x, y, k: (x + y, x * k, torch.exp(x), torch.sigmoid(x), torch.atan2(x, y), x ** 2,
                                     torch.div(x, 0.3, rounding_mode="floor"), torch.remainder(x, -0.7), x > y,
                                     torch.log1p(x.abs()), torch.erf(x), torch.nn.functional.gelu(x),
                                     torch.nn.functional.elu(x), x.to(torch.float32), y.to(torch.float64) * 2,
                                     x + 1.2345678901234, torch.where(x > 0, x, y), torch.clamp(x, -1.5, 0.25)),
             (d, f, i)),
    ]
    check_cases(tmp_path, "elem_f64", cases)


def test_elem_rank0_promotion(tmp_path):
    """Zero-dim tensors do not promote dimensioned ones of the same category
    (float32 tensor * float64 0-dim stays float32), but do across categories
    (int tensor * float 0-dim becomes float32). The 0-dim tensors are
    selected inside fn: conftest's run_lib turns 0-d inputs into 1-d."""
    torch, g = _gen()
    x = torch.randn(5, generator=g)
    k = torch.randint(-4, 4, (5,), generator=g)
    s64 = torch.tensor([1.25, 2.5], dtype=torch.float64)
    sf = torch.tensor([-0.5, 1.5])
    si = torch.tensor([3, -2])
    cases = [
        Case("zero_dim", lambda a, b, c, d, e: (a * c[0], b * d[0], b + e[0], a > c[0], b < d[1], c[0] * d[0],
                                                b == e[1], torch.maximum(a, d[1]), b * c[1], e[0] * d[1]),
             (x, k, s64, sf, si)),
    ]
    check_cases(tmp_path, "elem_r0", cases, targets=("none",))


def test_integer_division_by_zero(tmp_path):
    """An integer division or remainder by zero fails the run with
    DOCCC_ERR_ZERODIV ("integer division by zero"), where torch raises
    ZeroDivisionError, on every target, in serial and parallel loops; other
    inputs run, and float division by zero gives inf/nan as in torch."""
    torch = require("torch")
    np = require("numpy")
    from conftest import TARGETS, compile_model, doccc_cmd, fmt_result

    class M(torch.nn.Module):
        def forward(self, a, b, x):
            return (torch.div(a, b, rounding_mode="floor"), torch.div(a, b, rounding_mode="trunc"),
                    torch.remainder(a, b), torch.fmod(a, b), x / x[:1])

    a = torch.randint(-50, 50, (4, 256), generator=torch.Generator().manual_seed(1))
    ok = torch.randint(1, 9, (4, 256), generator=torch.Generator().manual_seed(2))
    x = torch.tensor([0.0, 1.0, -2.0])
    pt2 = tmp_path / "zd.pt2"
    torch.export.save(torch.export.export(M(), (a, ok, x)), str(pt2))
    zero = ok.clone()
    zero[3, 200] = 0
    for target in TARGETS:
        lib = compile_model(pt2, target, tmp_path / target, "-n", "zd")
        for label, b in (("nonzero", ok), ("zero", zero)):
            for name, t in (("a", a), ("b", b), ("x", x)):
                np.save(tmp_path / f"{name}.npy", t.numpy())
            args = ["run", lib] + sum((["-i", tmp_path / f"{n}.npy"] for n in "abx"), [])
            args += sum((["-o", tmp_path / f"o{i}.npy"] for i in range(5)), [])
            r = doccc_cmd(*args)
            if label == "nonzero":
                assert r.returncode == 0, f"[{target}]\n{fmt_result(r)}"
                want = M()(a, ok, x)
                for i, w in enumerate(want):
                    np.testing.assert_array_equal(np.load(tmp_path / f"o{i}.npy"), w.numpy(), err_msg=f"[{target}] {i}")
            else:
                assert r.returncode == 1 and "integer division by zero" in r.stderr, f"[{target}]\n{fmt_result(r)}"
