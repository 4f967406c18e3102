"""Pointwise (1x1) convolutions vectorized along the flat pixels (issue 29):
conv_pointwise in ir/expand/linalg.c reads and writes the H x W plane as
one run of H*W floats (row p/W and column p%W, which the expression
simplifier adds back up to p), so that vectors cross row ends; the tile is
output channels (broadcast weights) by pixels (lanes), the loops pixel
block outside channel block, and the pixels past the whole blocks one tile
of whole vectors ending at H*W that computes some of the last block's
pixels again. A tail that stays in one row, (i + 768) // 28 for i in
[0, 16), must fold to one quotient, or its loop is scalar code (it was: a
third of ResNet-50's 28x28 layers' time).

The cases: a 14x14 map (196 pixels: the overlapping tail) into 40 channels
with a residual add and ReLU fused into the store; a 7x7 map from few
channels (the pointwise_max_channels rule) into 100 outputs (a last channel
block of its rows only); 56-wide rows (448 pixels); a 3x3 map, fewer
pixels than a vector on AVX-512 (the channel kernel's); a sliced input, not
contiguous along the pixels (the channel kernel's); a stride-2 one (ResNet's
downsampling), whose pixels are copied first (9x9 of 17x18, two images). Each category's library
(4, 8 and 16 lanes where this CPU runs them), with the rules and with
every pointwise layer forced to the channel kernel, must match eager, and
the two forms must be different code.
"""

import pytest

from conftest import compare, compile_category, export_eager, require, run_lib

CHANNELS = ("--pass-opt", "expand.pointwise_max_channels=0", "--pass-opt", "expand.pointwise_min_pixels=1000000")


@pytest.fixture(scope="module")
def pointwise(tmp_path_factory):
    torch = require("torch")
    torch.manual_seed(0)

    class M(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.a = torch.nn.Conv2d(64, 40, 1)
            self.a2 = torch.nn.Conv2d(64, 40, 1, bias=False)
            self.b = torch.nn.Conv2d(24, 100, 1)
            self.c = torch.nn.Conv2d(16, 72, 1)
            self.d = torch.nn.Conv2d(48, 16, 1)
            self.e = torch.nn.Conv2d(40, 24, 1)
            self.f = torch.nn.Conv2d(48, 64, 1, stride=2)

        def forward(self, a, b, c, d, e, f):
            ya = torch.relu(self.a(a) + self.a2(a))
            yb = self.b(b)
            yc = self.c(c) * 0.5
            yd = self.d(d)
            ye = self.e(e[:, :, :, 1:])
            yf = torch.relu(self.f(f) + 1)
            return ya, yb, yc, yd, ye, yf

    m = M().eval()
    xs = (torch.randn(2, 64, 14, 14), torch.randn(1, 24, 7, 7), torch.randn(1, 16, 8, 56), torch.randn(1, 48, 3, 3),
          torch.randn(1, 40, 20, 21), torch.randn(2, 48, 17, 18))
    return export_eager(m, xs, tmp_path_factory.mktemp("pointwise") / "pointwise.pt2")


@pytest.mark.parametrize("category", ["edge", "desktop", "server"])
@pytest.mark.parametrize("target", ["sequential", "openmp"])
def test_pointwise_pixels_match_eager(pointwise, target, category, tmp_path):
    pt2, xs, eager = pointwise
    srcs = []
    for form, extra in (("rules", ()), ("channels", CHANNELS)):
        lib, src = compile_category(pt2, target, tmp_path / form, category, *extra)
        srcs.append(src)
        got = run_lib(lib, xs)
        for j, what in enumerate(("14x14 -> 40 + add + relu", "7x7 24 -> 100", "8x56 -> 72", "3x3", "sliced", "stride 2")):
            compare(got[j], eager[j], f"{target}/{category}/{form} {what}")
    assert srcs[0] != srcs[1], "the rules chose the channel kernel for every pointwise layer"
