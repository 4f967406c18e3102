"""Golden files: text that doccc writes and users or tools read.

A small MLP (training IR and Core ATen) is exported inside the run and
compiled with --dump-sdfg; the SDFG after import and after the last pass
(JSON) and the generated header are compared with test/golden/. The input's
content hash (which covers stack traces with this checkout's paths) is
masked wherever it appears. `make golden` (DOCCC_GOLDEN_UPDATE=1) rewrites
the files; review the diff in git.
"""

import os
import re

import pytest

from conftest import compile_model, debug_knob, require

GOLDEN = os.path.join(os.path.dirname(__file__), "golden")
UPDATE = debug_knob("DOCCC_GOLDEN_UPDATE") == "1"


def mask(text):
    """The sha256 hashes masked; constants' bytes in a dump ("data": hex) kept."""
    return re.sub(r'("data": "[0-9a-f]*")|(?<![0-9a-f])[0-9a-f]{64}(?![0-9a-f])',
                  lambda m: m.group(1) or "<sha256>", text)


def check_golden(name, text):
    path = os.path.join(GOLDEN, name)
    text = mask(text)
    if UPDATE:
        with open(path, "w") as f:
            f.write(text)
        return
    assert os.path.exists(path), f"no golden file {path}; run `make golden`"
    with open(path) as f:
        want = f.read()
    assert text == want, f"{name} differs from the golden file; run `make golden` and review the diff"


# The golden files are the category's output on any machine: none of the
# suite's DOCC_MARCH for this CPU (conftest.py), since they are not run.
CATEGORY_MARCH = {"DOCC_MARCH": ""}


@pytest.mark.parametrize("ir", ["training", "core"])
def test_golden_mlp(exports, session_tmp, ir):
    require("torch")
    ex = exports.get("mlp", ir, 1, "pt2")
    out = session_tmp / f"golden_{ir}"
    dump = out / "dump"
    compile_model(ex.path, "openmp", out, "-n", "mlp", "--dump-sdfg", str(dump), env=CATEGORY_MARCH)
    stages = sorted(os.listdir(dump))
    assert stages[0] == "00-imported.dot" and stages[-1].endswith("-planned.json"), stages
    check_golden(f"mlp_{ir}.imported.json", (dump / "00-imported.json").read_text())
    check_golden(f"mlp_{ir}.planned.json", (dump / stages[-1]).read_text())
    check_golden(f"mlp_{ir}.h", (out / "mlp.h").read_text())


def _desc_block(text):
    """The DOCCC_MODEL_DESC_H block without comments and layout."""
    start = text.index("#ifndef DOCCC_MODEL_DESC_H")
    end = text.index("#endif", text.index("} doccc_model_desc;", start))
    block = re.sub(r"/\*.*?\*/", " ", text[start:end], flags=re.S)
    block = re.sub(r"#include <[a-z]+\.h>", " ", block)  # NAME.h includes them at its top
    return " ".join(block.split())


def test_descriptor_block_matches_public_header(exports, session_tmp):
    """The descriptor emitted into every NAME.h is backends/doccc_model.h's,
    so loaders compiled against either agree on the struct layout."""
    require("torch")
    ex = exports.get("mlp", "training", 1, "pt2")
    out = session_tmp / "golden_desc"
    compile_model(ex.path, "none", out, "-n", "mlp")
    public = open(os.path.join(os.path.dirname(__file__), "..", "backends", "doccc_model.h")).read()
    assert _desc_block((out / "mlp.h").read_text()) == _desc_block(public)


@pytest.mark.parametrize("target", ["none", "sequential", "openmp", "cuda-sim"])
def test_golden_source(exports, session_tmp, target):
    """The generated source of the MLP for each target (C for the CPU ones,
    CUDA for cuda, compiled here by the simulation), byte for byte: the
    emitter's walker and printers may be restructured, their output may not
    change without a reviewed golden diff."""
    require("torch")
    ex = exports.get("mlp", "core", 1, "pt2")
    out = session_tmp / f"golden_src_{target}"
    compile_model(ex.path, target, out, "-n", "mlp", "-c", "desktop", "--emit-source", env=CATEGORY_MARCH)
    if target.endswith("-sim"):
        check_golden("mlp_cuda.cu", (out / "mlp.cu").read_text())
        check_golden("mlp_cuda.h", (out / "mlp.h").read_text())
    else:
        check_golden(f"mlp_{target}.c", (out / "mlp.c").read_text())
