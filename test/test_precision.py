"""contraction_precision on the CPU targets (issue 28): `medium` rounds the
float32 operands of the matrix products (linear layers, matmul, bmm) to
bfloat16, to nearest even, and sums their exact products in float32, as
torch's set_float32_matmul_precision('medium') allows. The constant weights
are rounded once, when the weights are written, and stay bfloat16 (half the
bytes); the run-time operands are rounded by a copy. So a medium result must
match a float64 reference from bf16-rounded operands far more tightly than
it matches fp32 eager. Convolutions keep float32 (torch's matmul precision
does not govern them on the CPU); `high` (tf32) computes as `highest`.
"""

import pytest

from conftest import compare, compile_model, require, run_lib
from test_gpu_tc import Contractions, bf16, contraction_pt2  # noqa: F401 (the fixture)


def options(tmp_path, precision):
    p = tmp_path / f"{precision}.yaml"
    p.write_text(f"contraction_precision: {precision}\n")
    return str(p)


@pytest.mark.parametrize("target", ["none", "sequential", "openmp"])
def test_medium_rounds_products_to_bf16(contraction_pt2, target, tmp_path):
    """The GEMM with a GELU epilogue, the bmm and the 512 x 512 GEMM: within
    a few fp32 ulps of the bf16-operand reference, and off fp32 eager by the
    bf16 rounding (so it happened); the convolution as in fp32. The library
    holds the two linear layers' weights in bf16: its weights file is about
    half that of highest."""
    np = require("numpy")
    pt2, m, xs, want = contraction_pt2
    ref = Contractions.reference(m, xs, bf16)
    libs = {}
    for prec in ("highest", "medium"):
        libs[prec] = compile_model(pt2, target, tmp_path / prec, "--options", options(tmp_path, prec),
                                   "--external-weights")
    got = run_lib(libs["medium"], [x.numpy() for x in xs])
    for j, (g, r, w) in enumerate(zip(got, ref, want)):
        if j == 1:  # the convolution: float32
            compare(g, w, f"medium {target} conv")
            continue
        scale = np.abs(r).max()
        to_ref, to_eager = np.abs(g - r).max() / scale, np.abs(g - w).max() / scale
        assert to_ref < 2e-6, f"out{j}: {to_ref:.3g} of the scale from the bf16-operand reference"
        assert to_eager > 20 * to_ref, f"out{j}: no sign of bf16 rounding ({to_eager:.3g})"
    for j, (g, w) in enumerate(zip(run_lib(libs["highest"], [x.numpy() for x in xs]), want)):
        compare(g, w, f"highest {target} out{j}")
    size = {p: sum(f.stat().st_size for f in lib.parent.glob("*.weights")) for p, lib in libs.items()}
    # fc (150 x 90) and big (64 x 512) in bf16, the convolution's float32
    linear = (150 * 90 + 64 * 512) * 2
    assert size["highest"] - size["medium"] >= linear * 0.9, size
