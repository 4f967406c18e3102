"""test/bench_peers.py's parts, cheaply: its models, its FMA peak program, and (where the
peers are installed) the whole pipeline on one small model.

Every bench model (test/bench_models.py) is built at its reduced size (small=True)
twice: the forward passes must agree exactly (fixed seeds), give finite outputs
of the expected shapes, and no BatchNorm may be at its identity defaults. The
peak program, test/bench_peak.c, is compiled as the bench compiles it and must
print a positive rate at 1 and 2 threads. The suite's CI has torch but neither
onnxruntime nor openvino: the end-to-end test runs only where both are
importable and says why it is skipped otherwise.
"""

import importlib.util
import json
import os
import subprocess
import sys

import pytest

from conftest import ATOL, ROOT, RTOL, fmt_result, require

sys.path.insert(0, str(ROOT / "test"))
import bench_peers  # noqa: E402  (stdlib only at import time)

# bench_models.MODELS (which imports torch), checked by test_model_list.
MODELS = ("resnet18", "resnet50", "mobilenet_v2", "mobilenet_v3_large", "efficientnet_b0",
          "convnext_tiny", "vit_tiny", "bert_base", "gpt2", "lstm")
# The leading dims of each small model's first output at batch 2.
OUT_LEAD = {"vit_tiny": (2, 100), "resnet50": (2, 100), "bert_base": (2, 16), "gpt2": (2, 16), "lstm": (10, 2)}


def test_model_list():
    require("torch")
    import bench_models
    assert bench_models.MODELS == MODELS
    assert set(bench_models.CONV_MODELS) < set(MODELS)


@pytest.mark.parametrize("name", MODELS)
def test_model_small(name):
    torch = require("torch")
    import bench_models
    outs = []
    for _ in range(2):
        model, inputs = bench_models.make(name, 2, small=True)
        with torch.no_grad():
            y = model(*inputs)
        outs.append(y if isinstance(y, tuple) else (y,))
    for a, b in zip(*outs):
        assert torch.equal(a, b), f"{name}: two builds differ"
    assert tuple(outs[0][0].shape[:2]) == OUT_LEAD.get(name, (2, 1000)), outs[0][0].shape
    for y in outs[0]:
        assert torch.isfinite(y).all() and y.abs().max() > 0, name
    for mod in model.modules():
        if isinstance(mod, torch.nn.BatchNorm2d):
            assert not torch.equal(mod.running_var, torch.ones_like(mod.running_var)), f"{name}: {mod}"


def test_peak(tmp_path):
    exe = bench_peers.build_peak(tmp_path / "bench_peak")
    peak, lines = bench_peers.measure_peak(exe, [1, 2], "--iters", "200000", "--trials", "3")
    assert set(peak) == {1, 2} and all(g > 0 for g in peak.values()), lines


def test_peers_end_to_end(doccc, tmp_path):
    require("torch")
    missing = [m for m in ("onnxruntime", "openvino", "onnxscript") if importlib.util.find_spec(m) is None]
    if missing:
        pytest.skip(f"{', '.join(missing)} not installed (test/bench_peers.py installs them)")
    report = tmp_path / "report.json"
    r = subprocess.run([sys.executable, str(ROOT / "test" / "bench_peers.py"), "--small", "--models", "resnet18",
                        "--batches", "1", "--threads", "1", "--repeat", "2", "--warmup", "1", "--skip-peers-install",
                        "--tune-budget", "15", "--dir", str(tmp_path / "work"), "--json", str(report)],
                       capture_output=True, text=True, timeout=400, env=dict(os.environ, DOCCC=str(doccc)))
    assert r.returncode == 0, fmt_result(r)
    rep = json.loads(report.read_text())
    assert rep["small"] and rep["rtol"] == RTOL and rep["atol"] == ATOL
    (row,) = rep["rows"]
    engines = row["engines"]
    assert set(engines) == set(bench_peers.ENGINES)
    for name, res in engines.items():
        assert res.get("median_ms", 0) > 0, (name, res)
    assert engines["doccc"]["within_tolerance"], engines["doccc"]
    # the tuned library: doccc tune within its budget, then the compile with the database
    assert engines["doccc tuned"]["within_tolerance"], engines["doccc tuned"]
    assert row["ratio_tuned"] > 0 and 0 < row["tune_s"] < 120, row
    for peer in ("ORT", "OpenVINO"):
        assert engines[peer]["max_abs_diff"] < 1e-4, (peer, engines[peer])
    assert row["ratio"] > 0 and row["peak_pct"] > 0 and row["flops"] > 0


def test_int8_table(doccc, tmp_path):
    """--int8: one small model through the quantized table: doccc's int8
    library (PT2E, its integer kernels) and its fp32 one both run and give
    a speedup; its outputs are the converted program's within one step of
    the last quantization; where the peers are installed, ORT and OpenVINO
    run the int8 ONNX file onnxruntime.quantization made."""
    require("torch")
    require("torchao")
    report = tmp_path / "report.json"
    r = subprocess.run([sys.executable, str(ROOT / "test" / "bench_peers.py"), "--int8", "--small", "--models",
                        "resnet18", "--batches", "1", "--threads", "1", "--repeat", "2", "--warmup", "1",
                        "--skip-peers-install", "--dir", str(tmp_path / "work"), "--json", str(report)],
                       capture_output=True, text=True, timeout=600, env=dict(os.environ, DOCCC=str(doccc)))
    assert r.returncode == 0, fmt_result(r)
    rep = json.loads(report.read_text())
    assert rep["int8"] and rep["small"]
    (row,) = rep["rows"]
    e = row["engines"]
    assert set(e) == {"ORT", "OpenVINO", "doccc", "doccc fp32"}, e
    assert e["doccc"]["median_ms"] > 0 and e["doccc fp32"]["median_ms"] > 0 and row["int8_speedup"] > 0, e
    # against the converted program: the int32 sums are exact where eager rounds (a small fraction of
    # the outputs' range), against the fp32 model: the quantization error
    assert e["doccc"]["max_abs_diff"] <= 0.05 * row["ref_abs_max"], e["doccc"]
    assert e["doccc"]["max_abs_diff_fp32"] < row["ref_abs_max"], e["doccc"]
    if all(importlib.util.find_spec(m) for m in ("onnxruntime", "openvino", "onnxscript")):
        for peer in ("ORT", "OpenVINO"):
            assert e[peer].get("median_ms", 0) > 0, (peer, e[peer])
