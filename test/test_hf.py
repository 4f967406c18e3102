"""The real-model suite: architectures of the `transformers` package (built
from small configs with random weights in test/hf_zoo.py; nothing is
downloaded), exported as users export them, at both IR levels (the default
training IR of torch.export.export, and Core ATen after
run_decompositions()), compiled for every CPU target and compared with
eager PyTorch at float32's tolerance (rtol 1e-4, atol 1e-5).

One test per architecture: two exports, one compile per IR level and target
(the three targets' compiles run side by side), one run each.

EXPORT_FAILS names the architectures that torch.export itself cannot export,
with torch's error: they are not doccc failures. Their test checks that
torch still fails that way, so that a torch that fixes them puts them back
in the suite instead of leaving them silently out.
"""

import concurrent.futures
import json
import os
from pathlib import Path

import pytest

import hf_zoo
from conftest import CPU_TARGETS, IRS, compile_model, doccc_cmd, fmt_result, require, run_lib

RTOL, ATOL = 1e-4, 1e-5

# name -> (the IR levels it fails at, a fragment of torch's error message)
EXPORT_FAILS = {
    # torch 2.13: "Could not guard on data-dependent expression Eq(u0, 1)":
    # LongformerSelfAttention branches on is_index_global_attn.any().item()
    "longformer": (("training", "core"), "Could not guard on data-dependent expression"),
}

# name -> (the IR levels doccc refuses, a fragment of its message): none.
# (BEiT builds its relative-position index with writes through views,
# coords[:, :, 0] += n - 1 and index[1:, 1:] = ...; the training IR keeps
# them in place, and doccc makes them functional: test_overloads.py.)
DOCCC_REFUSES = {}

ERRORS = Path(os.environ.get("DOCCC_HF_ERRORS", "")) if os.environ.get("DOCCC_HF_ERRORS") else None


def _export(torch, model, xs, ir, path):
    with torch.no_grad():
        ep = torch.export.export(model, xs)
        if ir == "core":
            ep = ep.run_decompositions()
    torch.export.save(ep, str(path))


@pytest.mark.parametrize("name", [a[0] for a in hf_zoo.ARCHS])
def test_hf_architecture(name, tmp_path):
    torch = require("torch")
    require("transformers")
    np = require("numpy")
    model, xs = hf_zoo.make(name)
    with torch.no_grad():
        ref = model(*xs).numpy()
    inputs = [x.numpy() for x in xs]
    worst = {}
    for ir in IRS:
        pt2 = tmp_path / f"{name}_{ir}.pt2"
        if name in EXPORT_FAILS and ir in EXPORT_FAILS[name][0]:
            with pytest.raises(Exception, match=EXPORT_FAILS[name][1]):
                _export(torch, model, xs, ir, pt2)
            continue
        _export(torch, model, xs, ir, pt2)
        if name in DOCCC_REFUSES and ir in DOCCC_REFUSES[name][0]:
            r = doccc_cmd(pt2, "-o", f"{tmp_path}/{ir}_refused/")
            assert r.returncode == 1 and DOCCC_REFUSES[name][1] in r.stderr, fmt_result(r)
            continue
        with concurrent.futures.ThreadPoolExecutor(len(CPU_TARGETS)) as pool:
            libs = list(pool.map(lambda t: compile_model(pt2, t, tmp_path / f"{ir}_{t}", "-n", name),
                                 CPU_TARGETS))
        for target, lib in zip(CPU_TARGETS, libs):
            (got,) = run_lib(lib, inputs)
            where = f"{name} [{ir}, {target}]"
            assert got.shape == ref.shape and got.dtype == ref.dtype, \
                f"{where}: {got.dtype}{got.shape}, eager {ref.dtype}{ref.shape}"
            np.testing.assert_allclose(got, ref, rtol=RTOL, atol=ATOL, err_msg=where)
            err = float(np.max(np.abs(got.astype(np.float64) - ref) / (ATOL + RTOL * np.abs(ref))))
            worst[f"{ir},{target}"] = err
    if ERRORS is not None:
        # the largest error as a fraction of the tolerance, per IR level and
        # target (the closing note's table): DOCCC_HF_ERRORS=FILE appends
        family = next(a[1] for a in hf_zoo.ARCHS if a[0] == name)
        with open(ERRORS, "a") as f:
            f.write(json.dumps({"name": name, "family": family, "worst": worst}) + "\n")
