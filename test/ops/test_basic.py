"""Smoke test of the per-op harness with ops of the first milestone:
broadcasting elementwise arithmetic, python scalars, views of non-contiguous
data, reductions and softmax in one program per IR level and target."""

import pytest

from harness import Case, check_cases
from conftest import require


def test_basic_group(tmp_path):
    torch = require("torch")
    g = torch.Generator().manual_seed(0)
    a = torch.randn(2, 3, 4, generator=g)
    b = torch.randn(3, 1, generator=g)
    c = torch.randn(4, 6, generator=g)
    cases = [
        Case("add_bcast", lambda x, y: x + y, (a, b)),
        Case("mul_scalar_relu", lambda x: torch.relu(x * 0.5 - 0.1), (a,)),
        Case("permute_view", lambda x: x.permute(2, 0, 1).reshape(4, 6) * 2, (a,)),
        Case("mean_dim", lambda x: x.mean(dim=-1, keepdim=True), (a,)),
        Case("softmax", lambda x: torch.softmax(x, dim=0), (c,)),
        Case("slice_step", lambda x: x[:, ::2] + 1, (c,)),
        Case("sum_all", lambda x: x.sum(), (c,)),
    ]
    check_cases(tmp_path, "basic", cases)
