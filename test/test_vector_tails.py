"""Masked vector tails (issue 29): a vector map whose extent is not a whole
number of vectors ends in one masked vector (dc_vload_n / dc_vstore_n),
not in a scalar loop with scalar expf, where its lanes are all float32
(backends/emit_cpu.c: masked_ok). The depthwise layers of the mobile
networks at 7x7 and 14x14 stored their rows so (7 of 7 and 6 of 14
outputs scalar, SiLU by expf).

Rows of 7, 14 and 13 floats (fewer than one vector, one and a bit, an odd
rest) through a depthwise convolution with SiLU and a residual add, a
sigmoid gate and tanh/exp, on the three forms of the helpers: edge
(x86-64-v2, 4 lanes: memcpy), desktop (x86-64-v3, 8 lanes: AVX maskload
and maskstore) and server (x86-64-v4, 16 lanes: AVX-512 masks) where this
CPU runs it. Each library must use the masked helpers and match eager.
"""

import pytest

from conftest import compare, compile_category, export_eager, require, run_lib


@pytest.fixture(scope="module")
def tails(tmp_path_factory):
    torch = require("torch")
    torch.manual_seed(0)

    class M(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.dw7 = torch.nn.Conv2d(24, 24, 3, padding=1, groups=24)
            self.dw14 = torch.nn.Conv2d(16, 16, 5, padding=2, groups=16)

        def forward(self, a, b, c):
            y7 = torch.nn.functional.silu(self.dw7(a)) + a
            y14 = torch.nn.functional.silu(self.dw14(b)) * torch.sigmoid(b)
            y13 = torch.tanh(c) * 2 + torch.exp(-c)
            return y7, y14, y13

    m = M().eval()
    xs = (torch.randn(2, 24, 7, 7), torch.randn(1, 16, 14, 14), torch.randn(5, 13))
    return export_eager(m, xs, tmp_path_factory.mktemp("tails") / "tails.pt2")


@pytest.mark.parametrize("category", ["edge", "desktop", "server"])
@pytest.mark.parametrize("target", ["sequential", "openmp"])
def test_masked_tails_match_eager(tails, target, category, tmp_path):
    pt2, xs, eager = tails
    lib, src = compile_category(pt2, target, tmp_path / "lib", category)
    assert "dc_vstore_n(&" in src and "dc_vload_n(&" in src, "no masked tail in the generated code"
    assert "expf(" not in src.split("_forward(", 1)[0].split("dc_vstore_n", 1)[1], \
        "a scalar expf left in the steps: some tail is still a scalar loop"
    got = run_lib(lib, xs)
    for j, what in enumerate(("dw 7x7 + silu + add", "dw 14x14 silu * sigmoid", "tanh/exp 13")):
        compare(got[j], eager[j], f"{target}/{category} {what}")
