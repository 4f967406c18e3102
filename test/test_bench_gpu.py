"""make bench-gpu's pipeline, run here: `test/bench_gpu.py --simulate` end to end.

The GPU benchmark itself needs the H200 machine; its --simulate mode runs the
same two stages here (export and pack, then regenerate the weights, compile
with the carried doccc, load the library through its descriptor with ctypes,
time, compare with eager) with `-t cuda --simulate` libraries and torch on the
CPU, on small sizes. One small model at batch 1 and the small GEMM: the report
must have every case and row, and doccc's outputs must agree with eager within
the suite's tolerance.
"""

import json
import math
import os
import subprocess
import sys

import pytest

from conftest import ATOL, ROOT, RTOL, fmt_result, require


def test_bench_gpu_simulate(doccc, tmp_path):
    require("torch")
    require("numpy")
    report = tmp_path / "report.json"
    r = subprocess.run([sys.executable, str(ROOT / "test" / "bench_gpu.py"), "--simulate", "--models", "gpt2",
                        "--batches", "1", "--dir", str(tmp_path / "pack"), "--json", str(report),
                        "--rtol", str(RTOL), "--atol", str(ATOL)],
                       capture_output=True, text=True, timeout=300, env=dict(os.environ, DOCCC=str(doccc)))
    assert r.returncode == 0, fmt_result(r)
    rep = json.loads(report.read_text())
    assert rep["simulate"] and rep["small"] and rep["timer"] == "cpu"
    assert [c["name"] for c in rep["cases"]] == ["gemm_f16", "gpt2_b1"]
    assert not (tmp_path / "pack-work" / "gpt2_b1.safetensors").exists()    # the weights are not left behind

    gemm, model = rep["cases"]
    # The same torch regenerated the same weights as the build exported.
    assert model["weights_differ_from_build"] == [] and gemm["weights_differ_from_build"] == []
    assert set(model["results"]) == {"doccc", "torch eager"}, model["results"]
    # The compile report's kernels of one run, by kind: the GEMMs are tiled contractions.
    assert model["gpu_kernels"].get("tiled-fp32", 0) > 0, model["gpu_kernels"]
    assert sum(model["gpu_kernels"].values()) == model["gpu_launches_per_run"]
    assert gemm["gpu_kernels"] == {"tiled-fp16": 1}, gemm["gpu_kernels"]
    for row in model["results"].values():
        assert row["median_ms"] > 0 and row["min_ms"] <= row["median_ms"] and row["runs"] >= 3, row
    doc = model["results"]["doccc"]
    assert doc["allclose"], f"doccc differs from eager by {doc['max_abs_diff']} (rtol {RTOL}, atol {ATOL})"
    assert 0 <= doc["max_abs_diff"] <= ATOL + RTOL * model["ref_max_abs"], doc
    assert model["ratios"]["doccc / torch eager"] == doc["median_ms"] / model["results"]["torch eager"]["median_ms"]

    assert set(gemm["results"]) == {"doccc", "torch matmul float16", "torch matmul bfloat16"}
    # An fp16 result: at most one fp16 ulp at the largest magnitude from the float32 product.
    ulp = 2.0 ** (math.floor(math.log2(gemm["ref_max_abs"])) - 10)
    assert gemm["results"]["doccc"]["max_abs_diff"] <= ulp, gemm
    assert gemm["results"]["doccc"]["tflops"] > 0
    assert gemm["doccc_fraction_of_torch_fp16"] == pytest.approx(
        gemm["results"]["doccc"]["tflops"] / gemm["results"]["torch matmul float16"]["tflops"])
    assert "% of torch's fp16 matmul" in r.stdout and "wrote" in r.stdout

