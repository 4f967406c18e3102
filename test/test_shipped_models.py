"""Hand-written models of the kinds people ship, each built to exercise one
class of what the third round of real models found (issue 26), exported at
both IR levels, compiled for every CPU target and compared with eager at
float32's tolerance:

  vocoder   1-d convolutions, then frames cut with Tensor.unfold (which
            run_decompositions() leaves in a Core ATen graph), a window and
            an overlap-add through a transposed convolution;
  router    a mixture-of-experts router written the way such code is: top-k
            routing weights written into a zero matrix with scatter_
            (in place, .value and .src), nn.Dropout(inplace=True), the experts'
            outputs joined with torch.concat and torch.concatenate;
  codec     an autoencoder that computes its losses inside an eval forward
            (mse_loss, mean and sum) and returns them beside the reconstruction,
            with a broadcast_tensors and an outer product on the way.
"""

import concurrent.futures

import pytest

from conftest import CPU_TARGETS, IRS, compile_model, require, run_lib

RTOL, ATOL = 1e-4, 1e-5

# the overloads each model is there for, per IR level: a change in torch or
# in the model that stops exporting them fails the test instead of passing
EXPECT = {
    "vocoder": {"training": {"aten.unfold.default"}, "core": {"aten.unfold.default"}},
    "router": {"training": {"aten.scatter_.src", "aten.scatter_.value", "aten.dropout_.default",
                            "aten.concat.default", "aten.concatenate.default"}, "core": set()},
    "codec": {"training": {"aten.mse_loss.default", "aten.broadcast_tensors.default", "aten.outer.default"},
              "core": set()},
}


def _models(torch):
    nn, F = torch.nn, torch.nn.functional

    class Vocoder(nn.Module):
        def __init__(self):
            super().__init__()
            self.pre = nn.Conv1d(1, 8, 7, padding=3)
            self.body = nn.Conv1d(8, 8, 5, padding=2, groups=2)
            self.proj = nn.Linear(16, 16)
            self.register_buffer("window", torch.hann_window(16))

        def forward(self, wav):
            h = F.leaky_relu(self.body(F.gelu(self.pre(wav.unsqueeze(1)))), 0.1)
            frames = h.unfold(-1, 16, 8) * self.window           # (B, 8, T', 16)
            frames = self.proj(frames).mean(1)                   # (B, T', 16)
            ola = F.fold(frames.transpose(1, 2), (1, 8 * (frames.shape[1] - 1) + 16), (1, 16), stride=(1, 8))
            return ola.flatten(1)

    class Router(nn.Module):
        def __init__(self, d=16, experts=4, k=2):
            super().__init__()
            self.gate = nn.Linear(d, experts, bias=False)
            self.experts = nn.ModuleList(nn.Linear(d, d) for _ in range(experts))
            self.drop = nn.Dropout(0.1, inplace=True)
            self.k = k

        def forward(self, x):
            logits = self.gate(x)
            top, idx = logits.topk(self.k, dim=-1)
            w = torch.zeros_like(logits)
            w.scatter_(-1, idx, top.softmax(-1))                 # scatter_.src
            hit = torch.zeros_like(logits)
            hit.scatter_(-1, idx, 1.0)                           # scatter_.value
            outs = torch.stack([e(x) for e in self.experts], -1)
            y = (outs * w.unsqueeze(-2)).sum(-1)
            self.drop(y)
            both = torch.concat([y, hit], -1)
            return torch.concatenate([both, w], -1)

    class Codec(nn.Module):
        def __init__(self):
            super().__init__()
            self.enc = nn.Conv1d(2, 6, 4, stride=2, padding=1)
            self.dec = nn.ConvTranspose1d(6, 2, 4, stride=2, padding=1)
            self.scale = nn.Parameter(torch.rand(6))

        def forward(self, x):
            z = torch.tanh(self.enc(x))
            zs, s = torch.broadcast_tensors(z, self.scale[:, None])
            zq = torch.round(zs * 4) / 4 * s
            y = self.dec(zq)
            rec = F.mse_loss(y, x)
            commit = F.mse_loss(zq, z, reduction="sum")
            gram = torch.outer(z.mean((0, 2)), self.scale)
            return y, torch.stack([rec, commit]), gram

    return {"vocoder": (Vocoder(), (torch.randn(2, 160),)),
            "router": (Router(), (torch.randn(3, 5, 16),)),
            "codec": (Codec(), (torch.randn(2, 2, 24),))}


@pytest.mark.parametrize("name", ["vocoder", "router", "codec"])
def test_shipped_model(name, tmp_path):
    torch = require("torch")
    np = require("numpy")
    torch.manual_seed(0)
    model, xs = _models(torch)[name]
    model.eval()
    with torch.no_grad():
        ref = model(*xs)
    ref = [r.numpy() for r in (ref if isinstance(ref, tuple) else (ref,))]
    for ir in IRS:
        pt2 = tmp_path / f"{name}_{ir}.pt2"
        with torch.no_grad():
            ep = torch.export.export(model, xs)
            if ir == "core":
                ep = ep.run_decompositions()
        have = {f"aten.{n.target._opname}.{n.target._overloadname}" for n in ep.graph.nodes
                if n.op == "call_function" and hasattr(n.target, "_overloadname")}
        missing = EXPECT[name][ir] - have
        assert not missing, f"{name}: the {ir} export has no node of {sorted(missing)}"
        torch.export.save(ep, str(pt2))
        with concurrent.futures.ThreadPoolExecutor(len(CPU_TARGETS)) as pool:
            libs = list(pool.map(lambda t: compile_model(pt2, t, tmp_path / f"{ir}_{t}", "-n", name), CPU_TARGETS))
        for target, lib in zip(CPU_TARGETS, libs):
            got = run_lib(lib, [x.numpy() for x in xs])
            assert len(got) == len(ref), f"{name} [{ir}, {target}]: {len(got)} outputs, eager {len(ref)}"
            for k, (g, r) in enumerate(zip(got, ref)):
                np.testing.assert_allclose(g, r, rtol=RTOL, atol=ATOL, err_msg=f"{name} [{ir}, {target}] out{k}")
