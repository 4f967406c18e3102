"""Recurrent layers on threads (issue 29): the schedule pass runs the maps
inside a step's sequential loop on threads, so a recurrent layer's matrix
product of every time step is a parallel loop (the LSTM of the peer
benchmark, batch 1, 2 threads: 2.4 -> 1.7 ms). A two-layer LSTM and a GRU
over 20 steps, batch 3, on openmp with 1 and 2 threads, must match eager,
and the step's time loop must hold a parallel loop.
"""

import re

import pytest

from conftest import compare, compile_model, export_eager, require, run_lib


@pytest.fixture(scope="module")
def rnn(tmp_path_factory):
    torch = require("torch")
    torch.manual_seed(0)

    class M(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.lstm = torch.nn.LSTM(24, 96, num_layers=2, batch_first=True)
            self.gru = torch.nn.GRU(24, 80, batch_first=True)

        def forward(self, x):
            y, (h, c) = self.lstm(x)
            z, g = self.gru(x)
            return y, h, c, z, g

    xs = (torch.randn(3, 20, 24),)
    return export_eager(M().eval(), xs, tmp_path_factory.mktemp("rnn") / "rnn.pt2")


def test_rnn_steps_on_threads(rnn, tmp_path):
    pt2, xs, eager = rnn
    lib = compile_model(pt2, "openmp", tmp_path / "lib", "--emit-source")
    src = (lib.parent / (lib.stem[3:] + ".c")).read_text()
    assert re.search(r"for \(int64_t i\d+ = 0; i\d+ < 20; i\d+ \+= 1\) \{\n\t+#pragma omp parallel for", src), \
        "no parallel loop inside the 20 time steps"
    for threads in ("1", "2"):
        got = run_lib(lib, xs, "--threads", threads)
        for j, what in enumerate(("lstm y", "lstm h", "lstm c", "gru y", "gru h")):
            compare(got[j], eager[j], f"{threads} threads {what}")
