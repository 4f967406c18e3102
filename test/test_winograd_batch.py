"""Winograd and the batch (issue 29): a 3x3 stride-1 convolution runs as
Winograd F(2x2, 3x3) only where its transformed tiles (16 values per 2x2
tile, inputs and outputs, every image) fit expand.winograd_max_mb; each
phase runs over the whole batch, so larger ones stream through memory
(ResNet-50's 56x56 layers at batch 8). Here 4 images of 32 channels at
30x30 transform to 2 MiB: with the default (32) the library has the
Winograd buffers, with 1 it runs direct, and both match eager with a
residual add and ReLU fused into the store, on sequential and openmp.
"""

import pytest

from conftest import compare, compile_model, export_eager, require, run_lib


@pytest.fixture(scope="module")
def conv3x3(tmp_path_factory):
    torch = require("torch")
    torch.manual_seed(0)

    class M(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = torch.nn.Conv2d(32, 32, 3, padding=1)

        def forward(self, x):
            return (torch.relu(self.conv(x) + x),)

    xs = (torch.randn(4, 32, 30, 30),)
    return export_eager(M().eval(), xs, tmp_path_factory.mktemp("conv3x3") / "conv3x3.pt2")


@pytest.mark.parametrize("target", ["sequential", "openmp"])
def test_winograd_by_transform_size(conv3x3, target, tmp_path):
    pt2, xs, eager = conv3x3
    code = {}
    for name, extra in (("default", ()), ("mb1", ("expand.winograd_max_mb=1",)), ("direct", ("expand.winograd=false",))):
        opts = [a for o in extra for a in ("--pass-opt", o)]
        lib = compile_model(pt2, target, tmp_path / name, "--emit-source", *opts)
        src = (lib.parent / (lib.stem[3:] + ".c")).read_text()
        for o in extra:  # the header comment and the library's info list the options
            src = src.replace(o, "")
        code[name] = src
        compare(run_lib(lib, xs)[0], eager[0], f"{target} {name}")
    assert code["mb1"] == code["direct"], "winograd_max_mb=1 did not run the 2 MiB of tiles direct"
    assert code["default"] != code["direct"], "the default did not run Winograd"
