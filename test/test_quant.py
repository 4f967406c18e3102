"""Quantized models: PT2E (torch.ao's quantized_decomposed ops) and torchao.

  - test_qdq_bit_identical: every quantize / dequantize form and the dynamic
    choice of parameters (choose_qparams*), called directly, at both IR
    levels on every CPU target and cuda --simulate: each output, integer and
    float, equals eager's bit for bit (rounding half to even, clamping, zero
    points, axes, groups, torchao's blocks; inputs on the .5 boundaries).
  - test_pt2e: a CNN with a depthwise layer and a residual add, quantized by
    the X86 quantizer (static, uint8 activations, per-channel int8 weights)
    and by the symmetric XNNPACK configuration; linear layers and a BERT
    encoder by the dynamic X86 flow. Outputs are compared with eager running
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
            return a, af, b, bf, c, cf, d, df, e, ef, f, ff, ss, sz

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
    return XNNPACKQuantizer().set_global(get_symmetric_quantization_config(is_per_channel=True))


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
    torch = require("torch")
    scales = [n.args[1] for n in ep.graph.nodes if n.op == "call_function"
              and "dequantize_per_tensor" in str(n.target) and isinstance(n.args[1], float)]
    if not scales:
        return 0.0
    w = dict(model.named_modules())[last].weight.detach()
    return scales[-1] * float(w.abs().sum(1).max()) * 1.01


MODELS = {"cnn": cnn, "mlp": mlp, "bert": bert}
FLOWS = [("cnn", "x86_static"), ("cnn", "xnnpack_symmetric"), ("mlp", "x86_dynamic"), ("bert", "x86_dynamic")]


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
