"""The rows form of the channel kernel (issue 29): a convolution whose
output rows are one register tile wide (7x7 maps with the server's 7-row
tile) and whose sums run in blocks (expand.sum_block) loops, per block of
output channels, over the blocks outside its rows, the rows' sums waiting
in one tile of the whole map (conv_rows in ir/expand/linalg.c); a 1x1
layer's tile is then up to 4 vectors wide (7 x 64 on the server) where
those divide the channels into 8 blocks. It adds the same blocks in the same
order as the direct form, so the two libraries must agree bit for bit, and
both must match eager.

The cases: 1x1 160 -> 512 with a residual add and ReLU fused into the store
(7 x 64 tiles); 3x3 144 -> 256 with padding and ReLU (7 x 32: tap loops
stay at two vectors); a grouped 3x3 (2 groups of 32 -> 256); 1x1 200 -> 320
at batch 2 (5 blocks of 64 per image); a 5x7 map from a stride-2 1x1 layer
(its pixels copied first); two transposed ones from 7x7 to 14x14, whose
stride phases are 7x7 maps (4x4 kernel: 2x2 taps per phase; 2x2 kernel: one
tap, 7 x 64 tiles); and 1x1 64 -> 96, too few channel blocks for two
threads, which keeps the direct form. The desktop library takes 7-row
tiles (expand.tile_m=7) so that an AVX2 machine runs the form too.
"""

import pytest

from conftest import compare, compile_category, export_eager, require, run_lib

DIRECT = ("--pass-opt", "expand.rows_form=false")
CASES = ("1x1 160->512 + add + relu", "3x3 144->256", "grouped 3x3", "1x1 200->320 batch 2", "5x7 stride 2",
         "transposed 4x4", "transposed 2x2", "1x1 64->96")


@pytest.fixture(scope="module")
def rows(tmp_path_factory):
    torch = require("torch")
    torch.manual_seed(0)

    class M(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.a = torch.nn.Conv2d(160, 512, 1)
            self.b = torch.nn.Conv2d(144, 256, 3, padding=1)
            self.c = torch.nn.Conv2d(64, 256, 3, padding=1, groups=2)
            self.d = torch.nn.Conv2d(200, 320, 1)
            self.e = torch.nn.Conv2d(192, 256, 1, stride=2)
            self.t4 = torch.nn.ConvTranspose2d(160, 256, 4, stride=2, padding=1)
            self.t2 = torch.nn.ConvTranspose2d(160, 512, 2, stride=2)
            self.f = torch.nn.Conv2d(64, 96, 1)

        def forward(self, a, r, b, c, d, e, f):
            return (torch.relu(self.a(a) + r), torch.relu(self.b(b)), self.c(c), self.d(d), self.e(e), self.t4(a),
                    self.t2(a), self.f(f))

    m = M().eval()
    xs = (torch.randn(1, 160, 7, 7), torch.randn(1, 512, 7, 7), torch.randn(1, 144, 7, 7), torch.randn(1, 64, 7, 7),
          torch.randn(2, 200, 7, 7), torch.randn(1, 192, 9, 13), torch.randn(1, 64, 7, 7))
    return export_eager(m, xs, tmp_path_factory.mktemp("rows") / "rows.pt2")


@pytest.mark.parametrize("category", ["desktop", "server"])
@pytest.mark.parametrize("target", ["sequential", "openmp"])
def test_rows_form_matches_direct_and_eager(rows, target, category, tmp_path):
    np = require("numpy")
    pt2, xs, eager = rows
    tile = ("--pass-opt", "expand.tile_m=7") if category == "desktop" else ()
    outs, srcs = [], []
    for form, extra in (("rows", tile), ("direct", tile + DIRECT)):
        lib, src = compile_category(pt2, target, tmp_path / form, category, *extra)
        srcs.append(src)
        got = run_lib(lib, xs)
        outs.append(got)
        for j, what in enumerate(CASES):
            compare(got[j], eager[j], f"{target}/{category}/{form} {what}")
    assert srcs[0] != srcs[1], "expand.rows_form=false changed nothing"
    for j, what in enumerate(CASES):
        assert np.array_equal(outs[0][j], outs[1][j]), f"{what}: the rows form's sums differ from the direct form's"
