"""Quantized models: PT2E (torch.ao's quantized_decomposed ops) and torchao.

  - test_qdq_bit_identical: every quantize / dequantize form and the dynamic
    choice of parameters (choose_qparams*), called directly, at both IR
    levels on every CPU target and cuda --simulate: each output, integer and
    float, equals eager's bit for bit (rounding half to even, clamping, zero
    points, axes, groups, torchao's blocks; inputs on the .5 boundaries).
  - test_pt2e: a CNN with a depthwise layer and a residual add, a
    ResNet-style and a MobileNetV2-style network, quantized by the X86
    quantizer (static, uint8 activations, per-channel int8 weights) and by
    the symmetric XNNPACK configuration; linear layers and a BERT encoder by
    the dynamic X86 and XNNPACK flows. Outputs are compared with eager running
    the same converted program: the usual tolerance, or at most one step of
    the last layer's input quantization on an element where a float sum
    rounded across a quantization boundary. The error against the fp32
    model is printed for the record.
  - test_torchao_core: torchao's int8 weight-only, int8 dynamic (aten._int_mm),
    intx weight-only and int8-dynamic/intx configurations in Core ATen.
  - test_torchao_subclass_message: the default IR stores torchao's weights as
    pickled tensor subclasses; the message says which export form works.
  - test_float_between_qdq_note: the compile names the nodes that run in float
    between dequantize and quantize, and doccc check lists them.
  - test_integer_kernels: linear layers between dequantizations run as
    integer kernels (int32 sums of int8 products) on the CPU targets.
  - test_int_mm_constant_weights: _int_mm of constant weights, bit-identical.
  - test_weight_only_stays_int8: the weight-only GEMMs keep int8 weights in
    their panels and dequantize them in registers.
  - test_quantized_decoder_generates: a Llama-style decoder with its KV cache,
    torchao int8 and int4 weight-only and int8-dynamic/int4-weight, 32 steps.

The quantization flows need torchao (test/setup.sh installs torchao 0.18.0).
"""

import pytest

from conftest import ATOL, RTOL, compile_model, doccc_cmd, fmt_result, require, run_lib

TARGETS = ["none", "sequential", "openmp", "cuda-sim"]
IRS = ["training", "core"]


def torchao():
    require("torch")
    return require("torchao")


def save(ep, path, ir):
    torch = require("torch")
    torch.export.save(ep if ir == "training" else ep.run_decompositions(), str(path))
    return path


# ---- the forms, called directly ---------------------------------------------------

def qdq_module():
    torch = require("torch")
    torchao()
    import torch.ao.quantization.fx._decomposed  # noqa: F401 (registers quantized_decomposed)
    qd = torch.ops.quantized_decomposed
    ao = torch.ops.torchao

    class QDQ(torch.nn.Module):
        def __init__(self):
            super().__init__()
            g = torch.Generator().manual_seed(3)
            self.register_buffer("cs", torch.rand(6, generator=g) * 0.05 + 0.01)
            self.register_buffer("cz", torch.randint(-5, 5, (6,), generator=g))
            self.register_buffer("gs", torch.rand(12, generator=g) * 0.05 + 0.01)
            self.register_buffer("gz", torch.randint(-3, 3, (12,), generator=g))
            self.register_buffer("bs", torch.rand(3, 2, generator=g) * 0.05 + 0.01)
            self.register_buffer("bz", torch.randint(-4, 4, (3, 2), generator=g).to(torch.int8))
            self.register_buffer("qlo", torch.tensor(3))
            self.register_buffer("qhi", torch.tensor(250))

        def forward(self, x):
            s = 0.02328810654580593
            a = qd.quantize_per_tensor(x, s, 132, 0, 255, torch.uint8)
            af = qd.dequantize_per_tensor(a, s, 132, 0, 255, torch.uint8)
            b = qd.quantize_per_channel(x, self.cs, self.cz, 0, -128, 127, torch.int8)
            bf = qd.dequantize_per_channel(b, self.cs, self.cz, 0, -128, 127, torch.int8)
            sc, zp = qd.choose_qparams.tensor(x, 0, 255, 0.000244140625, torch.uint8)
            c = qd.quantize_per_tensor.tensor(x, sc, zp, 0, 255, torch.uint8)
            cf = qd.dequantize_per_tensor.tensor(c, sc, zp, 0, 255, torch.uint8)
            ts, tz = qd.choose_qparams_per_token_asymmetric(x, torch.int8)
            d = qd.quantize_per_token(x, ts, tz, -128, 127, torch.int8)
            df = qd.dequantize_per_token(d, ts, tz, -128, 127, torch.int8, torch.float32)
            e = qd.quantize_per_channel_group(x, self.gs, self.gz, -8, 7, torch.int8, 16)
            ef = qd.dequantize_per_channel_group(e, self.gs, self.gz, -8, 7, torch.int8, 16, torch.float32)
            f = ao.quantize_affine(x, [2, 16], self.bs, self.bz, torch.int8, -128, 127)
            ff = ao.dequantize_affine(f, [2, 16], self.bs, self.bz, torch.int8, -128, 127)
            ss, sz = qd.choose_qparams_symmetric.tensor(x, -128, 127, 1e-5, torch.int8)
            g = qd.quantize_per_tensor.tensor2(x, sc, zp, self.qlo, self.qhi, torch.uint8)
            gf = qd.dequantize_per_tensor.tensor2(g, sc, zp, self.qlo, self.qhi, torch.uint8)
            return a, af, b, bf, c, cf, d, df, e, ef, f, ff, ss, sz, g, gf

    torch.manual_seed(0)
    x = torch.randn(6, 32) * 2
    # halfway cases of the per-tensor form (round half to even) and clamping
    x[0, :8] = torch.tensor([0.5, 1.5, 2.5, -0.5, -1.5, 100.0, -100.0, 0.0]) * 0.02328810654580593
    return QDQ(), x


@pytest.fixture(scope="module")
def qdq(tmp_path_factory):
    torch = require("torch")
    m, x = qdq_module()
    ep = torch.export.export(m, (x,))
    d = tmp_path_factory.mktemp("qdq")
    out = {}
    for ir in IRS:
        p = save(ep, d / f"qdq_{ir}.pt2", ir)
        out[ir] = (p, [t.numpy() for t in (ep.module() if ir == "training" else torch.export.load(str(p)).module())(x)])
    return out, x.numpy()


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("ir", IRS)
def test_qdq_bit_identical(qdq, ir, target, tmp_path):
    np = require("numpy")
    progs, x = qdq
    pt2, ref = progs[ir]
    got = run_lib(compile_model(pt2, target, tmp_path), [x])
    names = "a af b bf c cf d df e ef f ff ss sz".split()
    bad = [f"{n}: {g.dtype}{g.shape} vs {r.dtype}{r.shape}, {np.sum(g != r) if g.shape == r.shape else '-'} differ"
           for n, g, r in zip(names, got, ref) if g.dtype != r.dtype or g.shape != r.shape or not np.array_equal(g, r)]
    assert not bad, "outputs differ from eager:\n  " + "\n  ".join(bad)


# ---- PT2E models --------------------------------------------------------------------

def cnn():
    torch = require("torch")
    nn = torch.nn

    class CNN(nn.Module):
        def __init__(self):
            super().__init__()
            self.c1 = nn.Conv2d(3, 16, 3, padding=1)
            self.dw = nn.Conv2d(16, 16, 3, padding=1, groups=16)
            self.pw = nn.Conv2d(16, 16, 1)
            self.fc = nn.Linear(16 * 8 * 8, 10)

        def forward(self, x):
            y = torch.relu(self.c1(x))
            y = y + torch.relu(self.pw(torch.relu(self.dw(y))))
            return self.fc(y.flatten(1))

    torch.manual_seed(0)
    return CNN().eval(), torch.randn(2, 3, 8, 8), "fc"


def resnet():
    """ResNet-style: a stem, two basic blocks (the second strided, with a
    1x1 downsample), batch norms, global pooling and a classifier."""
    torch = require("torch")
    nn = torch.nn

    def cbr(i, o, s=1, k=3):
        return nn.Sequential(nn.Conv2d(i, o, k, s, k // 2, bias=False), nn.BatchNorm2d(o))

    class Block(nn.Module):
        def __init__(self, i, o, s):
            super().__init__()
            self.a, self.b = cbr(i, o, s), cbr(o, o)
            self.down = cbr(i, o, s, 1) if s != 1 or i != o else None

        def forward(self, x):
            y = self.b(torch.relu(self.a(x)))
            return torch.relu(y + (self.down(x) if self.down is not None else x))

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.stem = cbr(3, 16)
            self.l1, self.l2 = Block(16, 16, 1), Block(16, 32, 2)
            self.fc = nn.Linear(32, 10)

        def forward(self, x):
            y = self.l2(self.l1(torch.relu(self.stem(x))))
            return self.fc(torch.flatten(nn.functional.adaptive_avg_pool2d(y, 1), 1))

    torch.manual_seed(0)
    m = Net().eval()
    for mod in m.modules():  # statistics that are not the identity
        if isinstance(mod, nn.BatchNorm2d):
            mod.running_mean.uniform_(-0.2, 0.2), mod.running_var.uniform_(0.5, 1.5)
    return m, torch.randn(2, 3, 16, 16), "fc"


def mobilenet():
    """MobileNetV2-style inverted residuals: 1x1 expansion, 3x3 depthwise,
    1x1 projection, ReLU6, a residual add."""
    torch = require("torch")
    nn = torch.nn

    class Inv(nn.Module):
        def __init__(self, c, e, s):
            super().__init__()
            h = c * e
            self.f = nn.Sequential(nn.Conv2d(c, h, 1), nn.ReLU6(), nn.Conv2d(h, h, 3, s, 1, groups=h), nn.ReLU6(),
                                   nn.Conv2d(h, c, 1))
            self.res = s == 1

        def forward(self, x):
            return x + self.f(x) if self.res else self.f(x)

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.stem = nn.Sequential(nn.Conv2d(3, 8, 3, 2, 1), nn.ReLU6())
            self.b = nn.Sequential(Inv(8, 4, 1), Inv(8, 4, 2))
            self.fc = nn.Linear(8, 10)

        def forward(self, x):
            y = self.b(self.stem(x))
            return self.fc(torch.flatten(nn.functional.adaptive_avg_pool2d(y, 1), 1))

    torch.manual_seed(0)
    return Net().eval(), torch.randn(2, 3, 16, 16), "fc"


def mlp():
    torch = require("torch")
    nn = torch.nn

    class MLP(nn.Module):
        def __init__(self):
            super().__init__()
            self.l1 = nn.Linear(32, 64)
            self.l2 = nn.Linear(64, 16)

        def forward(self, x):
            return self.l2(torch.relu(self.l1(x)))

    torch.manual_seed(0)
    return MLP().eval(), torch.randn(4, 32), "l2"


def bert():
    torch = require("torch")
    from transformers import BertConfig, BertModel
    cfg = BertConfig(vocab_size=100, hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                     intermediate_size=64, max_position_embeddings=16, attn_implementation="eager")
    torch.manual_seed(0)
    m = BertModel(cfg, add_pooling_layer=False).eval()

    class Enc(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.m = m

        def forward(self, emb):
            return self.m.encoder(emb)[0]

    return Enc().eval(), torch.randn(1, 8, 32), "m.encoder.layer.1.output.dense"


def quantizer(flow):
    torchao()
    if flow.startswith("x86"):
        import torchao.quantization.pt2e.quantizer.x86_inductor_quantizer as xiq
        q = xiq.X86InductorQuantizer()
        q.set_global(xiq.get_default_x86_inductor_quantization_config(is_dynamic=flow == "x86_dynamic"))
        return q
    from torchao.testing.pt2e._xnnpack_quantizer import XNNPACKQuantizer, get_symmetric_quantization_config
    return XNNPACKQuantizer().set_global(get_symmetric_quantization_config(is_per_channel=True,
                                                                           is_dynamic=flow == "xnnpack_dynamic"))


def pt2e(model, x, flow):
    torch = require("torch")
    from torchao.quantization.pt2e.quantize_pt2e import convert_pt2e, prepare_pt2e
    g = prepare_pt2e(torch.export.export(model, (x,)).module(), quantizer(flow))
    g(x)
    return torch.export.export(convert_pt2e(g), (x,))


def last_step(model, ep, x, last):
    """One quantization step of the last layer's input, through that layer:
    its input scale times the largest row sum of |weight| (what a
    one-step difference of its input can change an output by)."""
    scales = [n.args[1] for n in ep.graph.nodes if n.op == "call_function"
              and "dequantize_per_tensor" in str(n.target) and isinstance(n.args[1], float)]
    if not scales:
        return 0.0
    w = dict(model.named_modules())[last].weight.detach()
    return scales[-1] * float(w.abs().sum(1).max()) * 1.01


MODELS = {"cnn": cnn, "resnet": resnet, "mobilenet": mobilenet, "mlp": mlp, "bert": bert}
FLOWS = [("cnn", "x86_static"), ("cnn", "xnnpack_symmetric"), ("resnet", "x86_static"), ("mobilenet", "x86_static"),
         ("mobilenet", "xnnpack_symmetric"), ("mlp", "x86_dynamic"), ("mlp", "xnnpack_dynamic"),
         ("bert", "x86_dynamic")]


@pytest.fixture(scope="module")
def pt2e_models(tmp_path_factory):
    torch = require("torch")
    d = tmp_path_factory.mktemp("pt2e")
    out = {}
    for name, flow in FLOWS:
        model, x, last = MODELS[name]()
        ep = pt2e(model, x, flow)
        with torch.no_grad():
            fp32 = model(x).numpy()
        for ir in IRS:
            p = save(ep, d / f"{name}_{flow}_{ir}.pt2", ir)
            ref = torch.export.load(str(p)).module()(x).detach().numpy()
            out[name, flow, ir] = (p, x.numpy(), ref, fp32, last_step(model, ep, x, last))
    return out


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("ir", IRS)
@pytest.mark.parametrize("name,flow", FLOWS)
def test_pt2e(pt2e_models, name, flow, ir, target, tmp_path):
    np = require("numpy")
    pt2, x, ref, fp32, step = pt2e_models[name, flow, ir]
    got = run_lib(compile_model(pt2, target, tmp_path), [x])[0]
    err = np.abs(got.astype(np.float64) - ref)
    off = err > ATOL + RTOL * np.abs(ref)
    assert err[off].max(initial=0) <= step, (
        f"{int(off.sum())} of {ref.size} elements differ from eager by more than the tolerance and by more than "
        f"one step ({step:.3g}) of the last layer's input: largest {err.max():.3g}")
    print(f"{name} {flow} {ir} {target}: max |doccc - eager| {err.max():.3g} "
          f"({int(off.sum())} elements past tolerance, step {step:.3g}); "
          f"max |doccc - fp32 model| {np.abs(got - fp32).max():.3g}")


# ---- torchao ------------------------------------------------------------------------

def torchao_configs():
    torchao()
    import torchao.quantization as tq
    return {"int8_weight_only": tq.Int8WeightOnlyConfig(),
            "int8_dynamic": tq.Int8DynamicActivationInt8WeightConfig(),
            "intx_weight_only": tq.IntxWeightOnlyConfig(),
            "int8_dynamic_intx_weight": tq.Int8DynamicActivationIntxWeightConfig()}


@pytest.fixture(scope="module")
def torchao_models(tmp_path_factory):
    torch = require("torch")
    from torchao.quantization import quantize_
    d = tmp_path_factory.mktemp("torchao")
    out = {}
    for name, cfg in torchao_configs().items():
        model, x, _ = mlp()
        with torch.no_grad():
            fp32 = model(x).numpy()
        quantize_(model, cfg)
        ep = torch.export.export(model, (x,))
        torch.export.save(ep, str(d / f"{name}_training.pt2"))
        p = save(ep, d / f"{name}_core.pt2", "core")
        ref = torch.export.load(str(p)).module()(x).detach().numpy()
        out[name] = (d / f"{name}_training.pt2", p, x.numpy(), ref, fp32)
    return out


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("name", ["int8_weight_only", "int8_dynamic", "intx_weight_only", "int8_dynamic_intx_weight"])
def test_torchao_core(torchao_models, name, target, tmp_path):
    np = require("numpy")
    _, pt2, x, ref, fp32 = torchao_models[name]
    got = run_lib(compile_model(pt2, target, tmp_path), [x])[0]
    np.testing.assert_allclose(got, ref, rtol=RTOL, atol=ATOL)
    print(f"torchao {name} {target}: max |doccc - eager| {np.abs(got - ref).max():.3g}; "
          f"max |doccc - fp32 model| {np.abs(got - fp32).max():.3g}")


def test_torchao_subclass_message(torchao_models, tmp_path):
    training, *_ = torchao_models["int8_weight_only"]
    r = doccc_cmd(training, "-t", "none", "-o", f"{tmp_path}/")
    assert r.returncode != 0, fmt_result(r)
    assert "tensor subclass" in r.stderr and "run_decompositions()" in r.stderr, fmt_result(r)
    assert not list(tmp_path.iterdir()), "a failed compile left output behind"


def test_int_mm_exact(tmp_path):
    torch = require("torch")
    np = require("numpy")

    class M(torch.nn.Module):
        def forward(self, a, b):
            return torch._int_mm(a, b)

    torch.manual_seed(0)
    a = torch.randint(-128, 128, (32, 64), dtype=torch.int8)
    b = torch.randint(-128, 128, (64, 24), dtype=torch.int8)
    pt2 = tmp_path / "int_mm.pt2"
    torch.export.save(torch.export.export(M(), (a, b)), str(pt2))
    got = run_lib(compile_model(pt2, "openmp", tmp_path / "o"), [a.numpy(), b.numpy()])[0]
    assert got.dtype == np.int32 and np.array_equal(got, torch._int_mm(a, b).numpy())


# ---- weight-only: int8 weights in the GEMM's panels ------------------------------------

def test_weight_only_stays_int8(torchao_models, tmp_path):
    """torchao's weight-only int8 and intx (Core ATen): the dequantized
    weights are folded, and the GEMMs keep them int8 in their panels: the
    library holds about a quarter of the float32 weights' bytes, and the
    outputs are eager's within the tolerance (bit-identical weights)."""
    np = require("numpy")
    sizes = {}
    for name in ("int8_weight_only", "intx_weight_only"):
        _, pt2, x, ref, _ = torchao_models[name]
        lib = compile_model(pt2, "openmp", tmp_path / name)
        np.testing.assert_allclose(run_lib(lib, [x])[0], ref, rtol=RTOL, atol=ATOL)
        r = doccc_cmd(pt2, "-t", "openmp", "-o", f"{tmp_path}/{name}_off/", "--pass-opt", "expand.int8_weights=false")
        assert r.returncode == 0, fmt_result(r)
        sizes[name] = (lib.stat().st_size, next((tmp_path / f"{name}_off").glob("*.so")).stat().st_size)
    # the MLP's weights: 32*64 + 64*16 floats; int8 saves 3 bytes of each
    saved = 3 * (32 * 64 + 64 * 16)
    for name, (on, off) in sizes.items():
        assert off - on >= saved * 0.9, f"{name}: {on} bytes with int8 panels, {off} without: the weights did not stay int8"


def int4_linears(kind):
    """Two linear layers with 4-bit weights in groups of 16: torchao's int4
    (symmetric: -8..7 and no zero points; asymmetric: zero points), or
    uint8 integers 0..15 dequantized by quantized_decomposed's
    dequantize_per_channel_group. 1104 columns: panels 64 wide at a run-time
    batch, the last one part full."""
    torch = require("torch")
    torch.manual_seed(3)
    m = torch.nn.Sequential(torch.nn.Linear(64, 1104), torch.nn.Linear(1104, 40))
    if kind == "uint4":
        import torch.ao.quantization.fx._decomposed  # noqa: F401 (registers quantized_decomposed)

        class U4(torch.nn.Module):
            def __init__(self, lin):
                super().__init__()
                n, k = lin.weight.shape
                self.register_buffer("q", torch.randint(0, 16, (n, k), dtype=torch.uint8))
                self.register_buffer("s", torch.rand(n, k // 16) * 0.02 + 0.001)
                self.register_buffer("z", torch.randint(0, 16, (n, k // 16)).float())
                self.bias = lin.bias

            def forward(self, x):
                w = torch.ops.quantized_decomposed.dequantize_per_channel_group(
                    self.q, self.s, self.z, 0, 15, torch.uint8, 16, torch.float32)
                return torch.nn.functional.linear(x, w, self.bias)

        m = torch.nn.Sequential(U4(m[0]), U4(m[1]))
    else:
        torchao()
        from torchao.quantization import IntxWeightOnlyConfig, quantize_
        from torchao.quantization.granularity import PerGroup
        from torchao.quantization.quant_primitives import MappingType
        mt = MappingType.SYMMETRIC if kind == "int4" else MappingType.ASYMMETRIC
        quantize_(m, IntxWeightOnlyConfig(weight_dtype=torch.int4, granularity=PerGroup(16), mapping_type=mt))
    return m


@pytest.mark.parametrize("target", ["none", "sequential", "openmp"])
@pytest.mark.parametrize("kind", ["int4", "int4_asym", "uint4"])
def test_int4_weights_two_to_a_byte(kind, target, tmp_path):
    """Weights whose integers fit 4 bits are kept two to a byte
    (expand.int4_weights): the library holds half the bytes of the int8
    panels, and its outputs are those of the int8 panels and of the folded
    float32 weights (expand.int8_weights=false) bit for bit (the same
    weights, rounded the same way, summed in the same order) and eager's
    within the tolerance, at run-time batches that fill whole row tiles
    (which read each panel dequantized once), part of one, and one row (a
    decode step: a tile as wide as the 64-column panels)."""
    torch = require("torch")
    np = require("numpy")
    m = int4_linears(kind)
    x = torch.randn(13, 64)
    b = torch.export.Dim("b", max=64)
    ep = torch.export.export(m, (x,), dynamic_shapes=({0: b},))
    pt2 = save(ep, tmp_path / f"{kind}.pt2", "core")
    mod = torch.export.load(str(pt2)).module()
    nib = compile_model(pt2, target, tmp_path / "nib")
    byte = compile_model(pt2, target, tmp_path / "byte", "--pass-opt", "expand.int4_weights=false")
    folded = compile_model(pt2, target, tmp_path / "f32", "--pass-opt", "expand.int8_weights=false")
    # two layers' integers: 64*1104 + 1104*40, half a byte each saved
    saved = (64 * 1104 + 1104 * 40) // 2
    assert byte.stat().st_size - nib.stat().st_size >= saved * 0.9, (byte.stat().st_size, nib.stat().st_size)
    for rows in (13, 6, 1):
        xs = x[:rows].numpy()
        got, want, f32 = run_lib(nib, [xs])[0], run_lib(byte, [xs])[0], run_lib(folded, [xs])[0]
        assert np.array_equal(got, want), f"{rows} rows: nibbles and bytes differ by {np.abs(got - want).max()}"
        assert np.array_equal(want, f32), f"{rows} rows: bytes and float32 differ by {np.abs(want - f32).max()}"
        np.testing.assert_allclose(got, mod(x[:rows]).detach().numpy(), rtol=RTOL, atol=ATOL)


# ---- a quantized decoder with its KV cache ------------------------------------------------

DECODER_CONFIGS = ["int8_weight_only", "int4_weight_only", "int8_dynamic_int4_weight"]


@pytest.fixture(scope="module")
def quant_decoders(tmp_path_factory):
    """A tiny Llama with a static cache quantized by torchao, in Core ATen,
    and its eager steps (test_state's prompt and tokens)."""
    torch = require("torch")
    np = require("numpy")
    torchao()
    import test_state as ts
    from torchao.quantization import Int8DynamicActivationIntxWeightConfig, IntxWeightOnlyConfig, quantize_
    from torchao.quantization.granularity import PerAxis, PerGroup
    cfgs = {"int8_weight_only": IntxWeightOnlyConfig(weight_dtype=torch.int8, granularity=PerAxis(0)),
            "int4_weight_only": IntxWeightOnlyConfig(weight_dtype=torch.int4, granularity=PerGroup(16)),
            "int8_dynamic_int4_weight": Int8DynamicActivationIntxWeightConfig(weight_dtype=torch.int4,
                                                                              weight_granularity=PerGroup(16))}
    d = tmp_path_factory.mktemp("qdecoder")
    out = {}
    for name, cfg in cfgs.items():
        m = ts.tiny_llama()
        quantize_(m, cfg)
        ep = ts.export_decoder(m)
        steps, toks = ts.eager_steps(ep)
        pt2 = d / f"{name}.pt2"
        torch.export.save(ep.run_decompositions(), str(pt2))
        files = []
        for s, (ids, pos, logits) in enumerate(steps):
            f = [d / f"{name}_ids{s}.npy", d / f"{name}_pos{s}.npy", d / f"{name}_ref{s}.npy"]
            np.save(f[0], ids), np.save(f[1], pos), np.save(f[2], logits)
            files.append(f)
        out[name] = (pt2, files, toks)
    return out


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("name", DECODER_CONFIGS)
def test_quantized_decoder_generates(quant_decoders, name, target, tmp_path):
    """Prefill and 31 decode steps of the quantized decoder: every step's
    logits within the tolerance of eager's, and the same tokens."""
    import json
    np = require("numpy")
    import test_state as ts
    pt2, files, toks = quant_decoders[name]
    lib = compile_model(pt2, target, tmp_path / "b")
    r = doccc_cmd("run", lib, *ts.step_args(files, tmp_path), "--json")
    assert r.returncode == 0, fmt_result(r)
    rep = json.loads(r.stdout)
    assert all(s["pass"] for s in rep["steps"]), rep
    got = [int(np.load(tmp_path / f"out{s}.npy")[0, -1].argmax()) for s in range(len(files))]
    assert got == toks


def test_quantized_decoder_int4_bytes(quant_decoders, tmp_path):
    """The int4 decoder with its weights a byte each
    (expand.int4_weights=false; two to a byte is the default, which
    test_quantized_decoder_generates runs): every prefill and decode step
    as eager's, the same tokens."""
    import json
    np = require("numpy")
    import test_state as ts
    pt2, files, toks = quant_decoders["int4_weight_only"]
    lib = compile_model(pt2, "openmp", tmp_path / "b", "--pass-opt", "expand.int4_weights=false")
    r = doccc_cmd("run", lib, *ts.step_args(files, tmp_path), "--json")
    assert r.returncode == 0, fmt_result(r)
    assert all(s["pass"] for s in json.loads(r.stdout)["steps"]), r.stdout
    assert [int(np.load(tmp_path / f"out{s}.npy")[0, -1].argmax()) for s in range(len(files))] == toks


def test_float_between_qdq_note(pt2e_models, tmp_path):
    """The compile says, in one note, which quantized ops compute in float
    between dequantize and quantize; doccc check and --report list each
    quantized op and how it runs."""
    import json
    pt2 = pt2e_models["cnn", "x86_static", "training"][0]
    r = doccc_cmd(pt2, "-t", "none", "-o", f"{tmp_path}/b/", "--report", f"{tmp_path}/r.json")
    assert r.returncode == 0, fmt_result(r)
    notes = [ln for ln in r.stderr.splitlines() if "in float between dequantize and quantize" in ln]
    # the convolutions compute in float between the quantizations: the depthwise one (conv2d_1), and c1
    # and pw, whose outputs sum too few products (27 and 16: integer.conv_min_reduction)
    assert len(notes) == 1 and "3 quantized ops run" in notes[0] and "'conv2d_1'" in notes[0], r.stderr
    rep = json.loads((tmp_path / "r.json").read_text())["quantized_ops"]
    c = doccc_cmd("check", pt2, "--json")
    assert c.returncode == 0, fmt_result(c)
    chk = json.loads(c.stdout)["quantized_ops"]
    assert chk == rep, (chk, rep)
    # fc (linear) is an integer kernel
    assert sorted((q["node"], q["op"], q["runs"]) for q in chk) == [
        ("conv2d", "conv", "float"), ("conv2d_1", "conv", "float"), ("conv2d_2", "conv", "float"),
        ("linear", "gemm", "integer")], chk
    t = doccc_cmd("check", pt2)
    assert "quantized ops: 4, 1 as integer kernels, 3 in float between dequantize and quantize" in t.stdout, t.stdout
    # with every convolution's reduction long enough, c1 and pw are integer kernels too
    c = doccc_cmd("check", pt2, "--json", "--pass-opt", "integer.conv_min_reduction=1")
    assert c.returncode == 0, fmt_result(c)
    runs = {q["node"]: q["runs"] for q in json.loads(c.stdout)["quantized_ops"]}
    assert runs == {"conv2d": "integer", "conv2d_1": "float", "conv2d_2": "integer", "linear": "integer"}, runs


INTEGER_FLOWS = [("mlp", "x86_dynamic"), ("mlp", "xnnpack_dynamic"), ("bert", "x86_dynamic"), ("cnn", "xnnpack_symmetric"),
                 ("resnet", "x86_static")]


@pytest.mark.parametrize("name,flow", INTEGER_FLOWS)
def test_integer_kernels(pt2e_models, name, flow, tmp_path):
    """The linear layers between dequantizations (static and dynamic
    activations, uint8 and int8) run as integer kernels on the CPU targets:
    int32 sums of T_DOT2 (pmaddwd) over int16 pairs, rescaled once; the
    same program without the integer pass computes in float. cuda runs the
    same nodes as integer kernels, the large enough ones tiled on the int8
    tensor cores (wmma). (test_pt2e compares the outputs with eager.)"""
    import json
    pt2 = pt2e_models[name, flow, "training"][0]
    runs = {}
    for label, extra in (("on", []), ("off", ["--disable-pass", "integer"]), ("cuda", ["-t", "cuda", "--simulate"])):
        args = ["-t", "openmp", "-c", "desktop"] + extra + ["-o", f"{tmp_path}/{label}/", "--emit-source",
                                                           "--report", f"{tmp_path}/{label}.json"]
        r = doccc_cmd(pt2, *args)
        assert r.returncode == 0, fmt_result(r)
        steps = json.loads((tmp_path / f"{label}.json").read_text())["quantized_ops"]
        runs[label] = {q["node"]: q["runs"] for q in steps if q["op"] in ("gemm", "conv")}
        src = next((tmp_path / label).glob("*.c"), None)
        runs[label, "dot2"] = src is not None and "dc_vdot2(" in src.read_text()
        runs[label, "kinds"] = {k["kind"] for k in json.loads((tmp_path / f"{label}.json").read_text()).get("gpu_kernels", [])}
    if name == "resnet":  # the 3x3 convolutions of the blocks (16 channels x 9 taps)
        assert sum(v == "integer" for n, v in runs["on"].items() if n.startswith("conv")) == 4, runs
    else:
        gemms = {n: v for n, v in runs["on"].items() if not n.startswith("conv")}
        assert gemms and set(gemms.values()) == {"integer"}, runs
    assert runs["on", "dot2"], "the integer kernels are not vectorized with dc_vdot2"
    assert set(runs["off"].values()) == {"float"} and not runs["off", "dot2"], runs
    assert runs["cuda"] == runs["on"], runs
    if name == "resnet":  # 16 x 16 pixels by 16 channels: tiles of the int8 tensor cores
        assert "tiled-s8" in runs["cuda", "kinds"], runs["cuda", "kinds"]


QUAD_FLOWS = INTEGER_FLOWS + [("cnn", "x86_static"), ("mobilenet", "xnnpack_symmetric")]


@pytest.mark.parametrize("target", ["none", "sequential", "openmp"])
@pytest.mark.parametrize("name,flow", QUAD_FLOWS)
def test_int8_quads(pt2e_models, name, flow, target, tmp_path):
    """expand.int8_dot=quads, the integer kernels of VNNI machines: four
    bytes a word, the activations unsigned (an int8 one shifted by 128 with
    its zero point, static or computed at run time), T_DOT4 (vpdpbusd; here,
    without VNNI, its exact emulation). The int32 sums are exact either way,
    so the outputs equal those of int16 pairs (T_DOT2) bit for bit."""
    np = require("numpy")
    pt2, x = pt2e_models[name, flow, "training"][:2]
    got = {}
    for form in ("pairs", "quads"):
        out = tmp_path / form
        lib = compile_model(pt2, target, out, "--pass-opt", f"expand.int8_dot={form}", "--emit-source")
        src = next(out.glob("*.c")).read_text()
        dot = {"pairs": "+= dc_vdot2(" if target != "none" else "+= (int32_t)(int16_t)(",
               "quads": "= dc_vdot4acc(*" if target != "none" else "+= dc_dot4("}[form]
        assert dot in src, f"{form}: no {dot} in the kernels' updates"
        got[form] = run_lib(lib, [x])[0]
    assert np.array_equal(got["pairs"], got["quads"]), np.abs(got["pairs"] - got["quads"]).max()


@pytest.mark.parametrize("march,width", [("alderlake", "ymm"), ("icelake-server", "zmm"), ("x86-64-v4", None)])
def test_int8_quads_follow_march(pt2e_models, march, width, tmp_path):
    """expand.int8_dot=auto takes four-byte words where --march has VNNI:
    the library's integer kernels are vpdpbusd on ymm (AVX-VNNI) or zmm
    registers (AVX512-VNNI), compiled only (this CPU may lack them; such a
    library refuses to start, test_faults). x86-64-v4 has no VNNI: pmaddwd.
    On a CPU with VNNI, --march native runs the same kernels and the outputs
    equal those of int16 pairs bit for bit."""
    import hostcpu
    from test_faults import disassembly
    np = require("numpy")
    pt2, x = pt2e_models["resnet", "x86_static", "training"][:2]
    lib = compile_model(pt2, "openmp", tmp_path / "m", "--march", march, env={"DOCC_MARCH": ""})
    ins = [i for f in disassembly(lib).values() for i in f]
    dp = [i for i in ins if i.startswith(("vpdpbusd", "{vex} vpdpbusd"))]
    if width is None:
        assert not dp and any(i.startswith("vpmaddwd") for i in ins), dp[:3]
        return
    assert dp and all(width in i for i in dp), dp[:3]
    flags = hostcpu.cpu_flags() or set()
    if {"avx512_vnni", "avx_vnni"} & flags:
        native = compile_model(pt2, "openmp", tmp_path / "n", "--march", "native", "--emit-source", env={"DOCC_MARCH": ""})
        assert "= dc_vdot4acc(*" in next((tmp_path / "n").glob("*.c")).read_text()
        pairs = compile_model(pt2, "openmp", tmp_path / "p", "--march", "native", "--pass-opt", "expand.int8_dot=pairs",
                              env={"DOCC_MARCH": ""})
        assert np.array_equal(run_lib(native, [x])[0], run_lib(pairs, [x])[0])


def test_tensor2_bounds_computed_at_run_time(tmp_path):
    """quantize_per_tensor.tensor2 with a quant_min the program computes:
    an error naming the op and what to do, no library written."""
    torch = require("torch")
    torchao()
    import torch.ao.quantization.fx._decomposed  # noqa: F401
    qd = torch.ops.quantized_decomposed

    class M(torch.nn.Module):
        def forward(self, x):
            lo = (x[0, 0] * 0).to(torch.int64)
            return qd.quantize_per_tensor.tensor2(x, torch.tensor(0.1), torch.tensor(3), lo, lo + 255, torch.uint8)

    pt2 = tmp_path / "t2.pt2"
    torch.export.save(torch.export.export(M(), (torch.randn(2, 3),)), str(pt2))
    r = doccc_cmd(pt2, "-t", "none", "-o", f"{tmp_path}/o/")
    assert r.returncode == 1, fmt_result(r)
    assert "quantize_per_tensor.tensor2" in r.stderr and "one-element constant tensors" in r.stderr, r.stderr
    assert not (tmp_path / "o" / "libt2.so").exists()


def test_int8_tiles_build_with_nvcc(pt2e_models, tmp_path):
    """The integer kernels' tiles on the int8 tensor cores (wmma fragments
    of signed char, int32 sums) compile with the real nvcc for sm_90, and
    ptxas reports no spill and no stack frame in any of them."""
    import json
    from test_gpu_tc import assert_no_spills, nvcc_build
    pt2 = pt2e_models["resnet", "x86_static", "training"][0]
    r = doccc_cmd(pt2, "-t", "cuda", "--simulate", "-n", "tc", "-o", f"{tmp_path}/sim/", "--report", f"{tmp_path}/r.json")
    assert r.returncode == 0, fmt_result(r)
    tiled = {k["kernel"] for k in json.loads((tmp_path / "r.json").read_text())["gpu_kernels"] if k["kind"] == "tiled-s8"}
    assert len(tiled) == 4, tiled
    assert_no_spills(nvcc_build(pt2, tmp_path / "nvcc", "highest"), tiled)


@pytest.mark.parametrize("target", ["none", "cuda-sim"])
def test_qparams_long_row_in_parts(target, tmp_path):
    """A per-tensor choose_qparams of 20000 elements: on the GPUs the
    minimum and maximum of parts of the row first (a block each), then of
    the parts; the result bit-identical to eager, the extremes in the last,
    short part."""
    torch = require("torch")
    np = require("numpy")
    torchao()
    import torch.ao.quantization.fx._decomposed  # noqa: F401
    qd = torch.ops.quantized_decomposed

    class M(torch.nn.Module):
        def forward(self, x):
            sc, zp = qd.choose_qparams.tensor(x, 0, 255, 0.000244140625, torch.uint8)
            ss, sz = qd.choose_qparams_symmetric.tensor(x, -128, 127, 1e-5, torch.int8)
            return sc, zp, ss, sz, qd.quantize_per_tensor.tensor(x, sc, zp, 0, 255, torch.uint8)

    torch.manual_seed(0)
    x = torch.randn(4, 5000)
    x[3, -1], x[3, -2] = 9.5, -7.25  # the last of the parts holds both extremes
    pt2 = tmp_path / "qp.pt2"
    torch.export.save(torch.export.export(M(), (x,)), str(pt2))
    extra = ["--report", str(tmp_path / "r.json")] if target == "cuda-sim" else []
    got = run_lib(compile_model(pt2, target, tmp_path / "o", *extra), [x.numpy()])
    want = [t.numpy() for t in M()(x)]
    for g, w in zip(got, want):
        assert np.array_equal(g.reshape(w.shape), w), (g, w)
    if extra:
        import json
        grids = [k["grid"] for k in json.loads((tmp_path / "r.json").read_text())["gpu_kernels"]
                 if k["node"].startswith("choose_qparams") and k["kind"] == "block-cooperative"]
        # the parts, a block each; the few partials after them take a thread
        assert len(grids) == 2 and min(grids) > 1, grids


@pytest.mark.parametrize("target", ["none", "sequential", "openmp", "cuda-sim", "rocm-sim", "none-quads", "openmp-quads"])
def test_int_mm_constant_weights(target, tmp_path):
    """aten._int_mm of a constant int8 matrix (torchao's dynamic int8 in
    Core ATen): the integer kernel, bit-identical to eager, with odd K and
    N and rows not a multiple of the tile; on cuda a tile of the int8
    tensor cores, on rocm one of int32 sums. With four-byte words
    (expand.int8_dot=quads) A is shifted to uint8, and 128 times the
    weights' column sums comes off the sums again."""
    torch = require("torch")
    np = require("numpy")

    class M(torch.nn.Module):
        def __init__(self):
            super().__init__()
            torch.manual_seed(1)
            self.register_buffer("w", torch.randint(-128, 128, (37, 75), dtype=torch.int8))

        def forward(self, a):
            return torch._int_mm(a, self.w.t())

    a = torch.randint(-128, 128, (19, 75), dtype=torch.int8)
    a[0] = -128
    pt2 = tmp_path / "int_mm_w.pt2"
    torch.export.save(torch.export.export(M(), (a,)), str(pt2))
    extra = ["--report", str(tmp_path / "r.json")] if target.endswith("-sim") else []
    if target.endswith("-quads"):
        target, extra = target[:-6], ["--pass-opt", "expand.int8_dot=quads"]
    got = run_lib(compile_model(pt2, target, tmp_path / "o", *extra), [a.numpy()])[0]
    assert got.dtype == np.int32 and np.array_equal(got, torch._int_mm(a, M().w.t()).numpy())
    if extra and extra[0] == "--report":
        import json
        kinds = {k["kind"] for k in json.loads((tmp_path / "r.json").read_text())["gpu_kernels"]}
        assert ("tiled-s8" if target == "cuda-sim" else "tiled-i32") in kinds, kinds
