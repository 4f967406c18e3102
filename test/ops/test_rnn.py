"""Per-op tests of the recurrent layers (aten.lstm.input, gru.input,
rnn_tanh.input, rnn_relu.input; at Core ATen level they decompose into
addmm / mm, sigmoid, tanh, split and cat) against eager PyTorch
(test/ops/harness.py: one compiled program per group, IR level and target).

Each case is an nn module called on its inputs: 1 and 2 layers, one or both
directions, batch_first or not, initial states given or omitted (zeros),
LSTM projections, no biases, batch 1 and 3, a non-contiguous input, and
results (output, h_n, c_n) used in part."""

import warnings

import pytest

from harness import Case, check_cases
from conftest import compile_model, doccc_cmd, require, target_args


def _gen(seed):
    torch = require("torch")
    return torch.Generator().manual_seed(seed)


def _mod(cls, *args, train=False, **kw):
    torch = require("torch")
    m = getattr(torch.nn, cls)(*args, **kw)
    return m.train() if train else m.eval()


@pytest.fixture(autouse=True)
def _quiet():
    # torch.export warns that nn.RNNBase's _flat_weights are assigned during
    # export; nothing to act on
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        yield


def test_lstm(tmp_path):
    torch = require("torch")
    torch.manual_seed(10)
    g = _gen(11)
    one = _mod("LSTM", 4, 6)
    deep = _mod("LSTM", 7, 5, num_layers=2, bidirectional=True, batch_first=True)
    proj = _mod("LSTM", 4, 8, proj_size=3)
    nobias = _mod("LSTM", 4, 20, num_layers=2, bias=False)
    pdeep = _mod("LSTM", 4, 6, num_layers=2, proj_size=2, bidirectional=True, batch_first=True)
    # left in training mode: train=True reaches the op, dropout 0 changes nothing
    trained = _mod("LSTM", 4, 5, num_layers=2, train=True)
    x = torch.randn(5, 3, 4, generator=g)
    x1 = torch.randn(6, 1, 4, generator=g)
    xb = torch.randn(3, 5, 7, generator=g)
    xp = torch.randn(1, 4, 4, generator=g)
    h2 = torch.randn(4, 3, 5, generator=g)
    c2 = torch.randn(4, 3, 5, generator=g)
    hp = torch.randn(1, 1, 3, generator=g)
    cp = torch.randn(1, 1, 8, generator=g)
    hq = torch.randn(4, 1, 2, generator=g)
    cq = torch.randn(4, 1, 6, generator=g)
    cases = [
        Case("lstm", lambda a: (lambda o, hc: (o, hc[0], hc[1]))(*one(a)), (x,)),
        Case("lstm_b1", lambda a: (lambda o, hc: (o, hc[0], hc[1]))(*one(a)), (x1,)),
        Case("lstm_2l_bidir_bf_h0", lambda a, h, c: (lambda o, hc: (o, hc[0], hc[1]))(*deep(a, (h, c))), (xb, h2, c2)),
        Case("lstm_proj_h0", lambda a, h, c: (lambda o, hc: (o, hc[0], hc[1]))(*proj(a, (h, c))), (x1, hp, cp)),
        Case("lstm_2l_nobias", lambda a: (lambda o, hc: (o, hc[0], hc[1]))(*nobias(a)), (x,)),
        Case("lstm_2l_bidir_proj_bf", lambda a, h, c: (lambda o, hc: (o, hc[0], hc[1]))(*pdeep(a, (h, c))),
             (xp, hq, cq)),
        Case("lstm_noncontig", lambda a: one(a.transpose(0, 1))[0], (x,)),
        Case("lstm_hn_only", lambda a: nobias(a)[1][0] * 2, (x1,)),
        Case("lstm_train_no_dropout", lambda a: trained(a)[0], (x,)),
    ]
    check_cases(tmp_path, "lstm", cases)


def test_gru_rnn(tmp_path):
    torch = require("torch")
    torch.manual_seed(12)
    g = _gen(13)
    gru = _mod("GRU", 4, 6)
    gdeep = _mod("GRU", 4, 20, num_layers=2, bidirectional=True, batch_first=True)
    gnob = _mod("GRU", 7, 5, bias=False)
    rt = _mod("RNN", 4, 6)
    rr = _mod("RNN", 4, 5, num_layers=2, bidirectional=True, nonlinearity="relu")
    rtb = _mod("RNN", 7, 6, num_layers=2, batch_first=True, bias=False)
    x = torch.randn(5, 3, 4, generator=g)
    x1 = torch.randn(6, 1, 4, generator=g)
    xb = torch.randn(3, 5, 4, generator=g)
    x7 = torch.randn(5, 1, 7, generator=g)
    xb7 = torch.randn(1, 4, 7, generator=g)
    hg = torch.randn(4, 3, 20, generator=g)
    h7 = torch.randn(1, 1, 5, generator=g)
    hr = torch.randn(4, 3, 5, generator=g)
    ht = torch.randn(2, 1, 6, generator=g)
    cases = [
        Case("gru", lambda a: gru(a), (x,)),
        Case("gru_b1", lambda a: gru(a), (x1,)),
        Case("gru_2l_bidir_bf_h0", lambda a, h: gdeep(a, h), (xb, hg)),
        Case("gru_nobias_h0", lambda a, h: gnob(a, h), (x7, h7)),
        Case("rnn_tanh", lambda a: rt(a), (x,)),
        Case("rnn_relu_2l_bidir_h0", lambda a, h: rr(a, h), (x, hr)),
        Case("rnn_tanh_2l_bf_nobias_h0", lambda a, h: rtb(a, h), (xb7, ht)),
        Case("rnn_relu_b1", lambda a: rr(a), (x1,)),
    ]
    check_cases(tmp_path, "gru_rnn", cases)


def test_rnn_f64(tmp_path):
    torch = require("torch")
    torch.manual_seed(14)
    g = _gen(15)
    lstm = _mod("LSTM", 4, 5, num_layers=2, bidirectional=True).double()
    proj = _mod("LSTM", 4, 6, proj_size=3, batch_first=True).double()
    gru = _mod("GRU", 4, 5, batch_first=True).double()
    rnn = _mod("RNN", 4, 5, nonlinearity="relu").double()
    x = torch.randn(5, 3, 4, generator=g, dtype=torch.float64)
    cases = [
        Case("lstm_2l_bidir", lambda a: (lambda o, hc: (o, hc[0], hc[1]))(*lstm(a)), (x,)),
        Case("lstm_proj_bf", lambda a: (lambda o, hc: (o, hc[0], hc[1]))(*proj(a)), (x,)),
        Case("gru_bf", lambda a: gru(a), (x,)),
        Case("rnn_relu", lambda a: rnn(a), (x,)),
    ]
    check_cases(tmp_path, "rnn_f64", cases)


def test_rnn_rejects_training_dropout(tmp_path):
    """Dropout between layers in training mode is random: a clear error."""
    torch = require("torch")
    m = _mod("LSTM", 4, 5, num_layers=2, dropout=0.5, train=True)

    class M(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.m = m

        def forward(self, x):
            return self.m(x)[0]

    with torch.no_grad():
        ep = torch.export.export(M().train(), (torch.randn(3, 2, 4),))
    assert any("lstm" in str(n.target) for n in ep.graph.nodes)
    pt2 = tmp_path / "drop.pt2"
    torch.export.save(ep, str(pt2))
    r = doccc_cmd(pt2, *target_args("none"), "-o", f"{tmp_path}/out/")
    assert r.returncode == 1, r.stderr
    assert "lstm in training mode with dropout 0.5 between layers" in r.stderr, r.stderr
    assert "model.eval()" in r.stderr, r.stderr
