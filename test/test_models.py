"""End-to-end tests on real architectures (models_zoo.py) against eager PyTorch.

Each case exports a zoo model at one IR level, compiles it with doccc for one
CPU target, runs the library with `doccc run` on the model's fixed-seed inputs
(int64 ones too: BERT's ids and mask) and compares every output with eager
float32 PyTorch under no_grad at rtol 1e-4 / atol 1e-5 (conftest.compare).

IR levels:
  training    torch.export.export's default IR (conv2d, linear, layer_norm,
              scaled_dot_product_attention, ...)
  core        ep.run_decompositions(): Core ATen; SDPA becomes its math chain
              (bmm, _softmax, any/eq/where, ...); upsample_bilinear2d stays
              (torch preserves it by default)
  core_sdpa   Core ATen with scaled_dot_product_attention kept (deleted from
              default_decompositions()), the pipeline torch-export.md 3.1
              recommends; only for the models that call SDPA

Cases (model x IR x batch x target):
  default     every model on every target at batch 1 in training IR; every model
              in core IR on openmp at batch 2; the SDPA models (vit_tiny, bert,
              qwen2_layer) in core_sdpa IR on openmp at batch 2. A zoo compile
              takes ~3 s and `make test` must stay within ~12 minutes on 2 cores.
  DOCCC_FULL=1 (or pytest --doccc-full): the full cross product, every IR level
              x batch {1, 2} x {none, sequential, openmp}.

Known gaps: KNOWN_GAPS below is the ONE place that marks cases as expected to
fail (xfail, strict=False), keyed "model-ir" (every batch and target) or a full
case id "model-ir-bB-target". It was filled from a real run; when an operator
lands, the case turns XPASS and its entry should be deleted.
`python3 test/test_models.py` compiles every (model, IR) for `none` at batch 1
and prints the KNOWN_GAPS the current build calls for.
"""

import itertools
import re
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from conftest import TARGETS, compare, compile_model, device_resident, full_run, require, run_lib  # noqa: E402

MODELS = ("resnet50", "mobilenet_v2", "vit_tiny", "bert", "segformer_b0", "qwen2_layer")
SDPA_MODELS = ("vit_tiny", "bert", "qwen2_layer")
ZOO_IRS = ("training", "core", "core_sdpa")
ZOO_BATCHES = (1, 2)

# Filled from a real run (see the module docstring); shrink it as operators land.
KNOWN_GAPS = {
}


def case_id(model, ir, batch, target):
    return f"{model}-{ir}-b{batch}-{target}"


def model_cases():
    if full_run():
        cases = [(m, ir, b, t) for m, ir, b, t in itertools.product(MODELS, ZOO_IRS, ZOO_BATCHES, TARGETS)
                 if ir != "core_sdpa" or m in SDPA_MODELS]
    else:
        cases = [(m, "training", 1, t) for m in MODELS for t in TARGETS]
        cases += [(m, "core", 2, t) for m in MODELS for t in ("openmp", "cuda-sim")]
        cases += [(m, "core_sdpa", 2, t) for m in SDPA_MODELS for t in ("openmp", "cuda-sim")]
        cases += [(m, "core", 1, "rocm-sim") for m in MODELS]
    return cases


def gap(model, ir, batch, target):
    return KNOWN_GAPS.get(case_id(model, ir, batch, target)) or KNOWN_GAPS.get(f"{model}-{ir}")


def _params():
    out = []
    for c in model_cases():
        reason = gap(*c)
        marks = [pytest.mark.xfail(strict=False, reason=reason)] if reason else []
        out.append(pytest.param(*c, id=case_id(*c), marks=marks))
    return out


def export_zoo(model, example_inputs, ir):
    """torch.export at one of ZOO_IRS; returns the ExportedProgram."""
    torch = require("torch")
    with torch.no_grad():
        ep = torch.export.export(model, example_inputs)
        if ir == "core":
            ep = ep.run_decompositions()
        elif ir == "core_sdpa":
            table = torch.export.default_decompositions()
            del table[torch.ops.aten.scaled_dot_product_attention.default]
            ep = ep.run_decompositions(table)
        elif ir != "training":
            raise ValueError(f"unknown IR level {ir!r}")
    return ep


class Zoo:
    """Session cache: models, inputs and eager references, and .pt2 exports."""

    def __init__(self, base):
        self.torch = require("torch")
        require("numpy")
        import models_zoo
        self.zoo = models_zoo
        self.base = Path(base)
        self._models, self._data, self._pt2 = {}, {}, {}

    def model(self, name):
        if name not in self._models:
            self._models[name] = self.zoo.make(name)
        return self._models[name]

    def data(self, name, batch):
        """(inputs as tensors, inputs as numpy, eager outputs as numpy float32)."""
        key = (name, batch)
        if key not in self._data:
            model, make_inputs = self.model(name)
            xs = make_inputs(batch)
            with self.torch.no_grad():
                ys = model(*xs)
            ys = list(ys) if isinstance(ys, (tuple, list)) else [ys]
            self._data[key] = (xs, [x.numpy() for x in xs], [y.detach().numpy() for y in ys])
        return self._data[key]

    def pt2(self, name, ir, batch):
        key = (name, ir, batch)
        if key not in self._pt2:
            xs = self.data(name, batch)[0]
            path = self.base / f"{name}_{ir}_b{batch}.pt2"
            self.torch.export.save(export_zoo(self.model(name)[0], xs, ir), str(path))
            self._pt2[key] = path
        return self._pt2[key]


@pytest.fixture(scope="module")
def zoo(tmp_path_factory):
    return Zoo(tmp_path_factory.mktemp("zoo"))


@pytest.mark.parametrize("model,ir,batch,target", _params())
def test_model_matches_eager(zoo, session_tmp, check_close, model, ir, batch, target):
    pt2 = zoo.pt2(model, ir, batch)
    _, xs, refs = zoo.data(model, batch)
    cid = case_id(model, ir, batch, target)
    lib = compile_model(pt2, target, session_tmp / "zoo" / cid, "-n", model)
    extra = []
    if target.endswith("-sim"):
        # every zoo model runs entirely on the GPU; batch 2 passes device
        # pointers (NAME_run), batch 1 host pointers (NAME_run_host)
        assert device_resident(lib), f"{cid}: the model took the host fallback"
        extra = ["--device"] if batch == 2 else []
    got = run_lib(lib, xs, *extra)
    assert len(got) == len(refs), f"{len(got)} outputs, the model has {len(refs)}"
    for k, (g, r) in enumerate(zip(got, refs)):
        check_close(g, r, f"{cid} out{k}")


@pytest.mark.parametrize("model", MODELS)
@pytest.mark.parametrize("backend", ["cuda", "rocm"])
def test_model_builds_with_gpu_toolchain(zoo, session_tmp, model, backend):
    """Every zoo model compiles with nvcc (sm_90) and hipcc (gfx90a) into a
    device-resident library with its fat binary; here, without a GPU, create
    reports the runtime's error."""
    import numpy as np
    from test_gpu import REAL, check_real_build, require_cmd
    require_cmd(REAL[backend][0])
    pt2 = zoo.pt2(model, "training", 1)
    out = session_tmp / "zoo_gpu" / f"{model}-{backend}"
    lib = compile_model(pt2, backend, out, "-n", model)
    assert device_resident(lib), f"{model} on {backend}: the model took the host fallback"
    files = []
    _, xs, refs = zoo.data(model, 1)
    for k, x in enumerate(xs):
        files.append(out / f"in{k}.npy")
        np.save(files[-1], x)

    def check(got):
        assert len(got) == len(refs), f"{len(got)} outputs, the model has {len(refs)}"
        for k, (g, r) in enumerate(zip(got, refs)):
            compare(g, r, f"{model}-{backend} out{k}")
    check_real_build(lib, backend, files, check)


def test_known_gaps_name_real_cases():
    """Every KNOWN_GAPS key names a model and IR level (or a full case id) of this file."""
    valid = {f"{m}-{ir}" for m in MODELS for ir in ZOO_IRS if ir != "core_sdpa" or m in SDPA_MODELS}
    for key in KNOWN_GAPS:
        base = re.sub(r"-b\d+-(none|sequential|openmp|cuda-sim|rocm-sim)$", "", key)
        assert base in valid, f"KNOWN_GAPS key {key!r} names no case of test_models.py"


# ---- python3 test/test_models.py: what KNOWN_GAPS should be today ----------------------

def _survey():
    """Compile every (model, IR) for `none` at batch 1, run it, compare; print KNOWN_GAPS."""
    import subprocess
    import tempfile

    import numpy as np

    from conftest import ATOL, RTOL, doccc_path

    zoo = Zoo(tempfile.mkdtemp(prefix="doccc-zoo-"))
    gaps = {}
    for m in MODELS:
        for ir in ZOO_IRS:
            if ir == "core_sdpa" and m not in SDPA_MODELS:
                continue
            pt2 = zoo.pt2(m, ir, 1)
            out = zoo.base / f"out_{m}_{ir}"
            r = subprocess.run([str(doccc_path()), str(pt2), "-t", "none", "-o", f"{out}/", "-n", m],
                               capture_output=True, text=True)
            key = f"{m}-{ir}"
            if r.returncode != 0:
                ops = list(dict.fromkeys(re.findall(r"unsupported operator '([^']+)'", r.stderr)))
                if ops:
                    rest = ", ".join(o.replace("aten.", "", 1) for o in ops[1:])
                    gaps[key] = f"op coverage in progress: {ops[0]}" + (f" (also {rest})" if rest else "")
                else:
                    gaps[key] = "compile fails: " + (r.stderr.strip().splitlines() or ["?"])[0][:160]
                continue
            try:
                got = run_lib(out / f"lib{m}.so", zoo.data(m, 1)[1])
            except BaseException as e:  # pytest.fail raises an exception derived from BaseException
                gaps[key] = f"run fails: {str(e).splitlines()[0][:160]}"
                continue
            for k, (g, ref) in enumerate(zip(got, zoo.data(m, 1)[2])):
                if g.shape != ref.shape or not np.allclose(g, ref, rtol=RTOL, atol=ATOL):
                    d = float(np.abs(g.astype(np.float64) - ref).max()) if g.shape == ref.shape else float("nan")
                    gaps[key] = f"numerics: out{k} max abs diff {d:.3e}"
                    break
            print(f"{key}: {'ok' if key not in gaps else gaps[key]}", file=sys.stderr)
    print("KNOWN_GAPS = {")
    for k, v in gaps.items():
        print(f"    {k!r}: {v!r},")
    print("}")


if __name__ == "__main__":
    _survey()
