"""A GEMM's rows over the last two dims before its columns (issue 29):
packed_tiles in ir/expand/linalg.c takes [.., H, W, C] as H*W rows (row m
is (m // W, m % W)) where the output and A are contiguous over H and W, so
that a panel of weights serves every row tile of an image: ConvNeXt's last
stage, [1, 7, 7, 768] x [768, 3072], read its 9 MB of weights once per 7
rows (4.0 -> 2.1 ms per layer on one thread). The cases: rows that fill
the tiles (7x7), rows that do not (5x3 and two images), a permuted view
(not contiguous: rows stay per H), and a bias with GELU fused into the
store. Each must match eager on sequential and openmp, and the flattened
rows must appear in the code as one run (the index of row m is m*C).
"""

import pytest

from conftest import compare, compile_model, export_eager, require, run_lib


@pytest.fixture(scope="module")
def gemm_rows(tmp_path_factory):
    torch = require("torch")
    torch.manual_seed(0)

    class M(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.a = torch.nn.Linear(96, 200)
            self.b = torch.nn.Linear(40, 24, bias=False)
            self.c = torch.nn.Linear(16, 32)

        def forward(self, a, b, c):
            ya = torch.nn.functional.gelu(self.a(a))
            yb = self.b(b)
            yc = self.c(c.permute(0, 2, 3, 1))
            return ya, yb, yc

    m = M().eval()
    xs = (torch.randn(1, 7, 7, 96), torch.randn(2, 5, 3, 40), torch.randn(2, 16, 6, 5))
    return export_eager(m, xs, tmp_path_factory.mktemp("gemm_rows") / "gemm_rows.pt2")


@pytest.mark.parametrize("target", ["sequential", "openmp"])
def test_gemm_rows_match_eager(gemm_rows, target, tmp_path):
    pt2, xs, eager = gemm_rows
    lib = compile_model(pt2, target, tmp_path / "lib", "--emit-source")
    src = (lib.parent / (lib.stem[3:] + ".c")).read_text()
    assert "/7)" not in src and "%7)" not in src, "the 7x7 rows are not one run"
    got = run_lib(lib, xs)
    for j, what in enumerate(("7x7 -> 200 + gelu", "2x5x3 -> 24", "permuted")):
        compare(got[j], eager[j], f"{target} {what}")
