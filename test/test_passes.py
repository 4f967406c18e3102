"""IR-in/IR-out tests of every pass, through `doccc opt`.

test/passes/ holds, for every pass of the table, small SDFGs from real exports
of tiny models (test/passes/make_cases.py wrote them): CASE.in.json, the
stage before the pass; CASE.args, the arguments of `doccc opt` that run it
(--pass, the target and category, pass options; @CASES@ is test/passes/, where
tuning.db is); CASE.out.json, what the pass
made of it. test_pass_golden runs every case and compares, byte for byte, with
a unified diff of the IR when it differs; `make golden` (DOCCC_GOLDEN_UPDATE=1)
regenerates the inputs and rewrites the outputs, so that a change to a pass
shows as a diff of IR in git. These tests need doccc only, not torch.

test_round_trip_all_stages then compiles real models (exported here, so they
need torch) with --dump-sdfg on several targets: every stage reads back as the
same bytes (`doccc opt` without --pass), and every pass run by `doccc opt` on
the stage before it gives the compile's own stage after it.
"""

import difflib
import os
import shlex
from pathlib import Path

import pytest

from conftest import debug_knob, doccc_cmd, fmt_result, require

CASES_DIR = Path(__file__).resolve().parent / "passes"
UPDATE = debug_knob("DOCCC_GOLDEN_UPDATE") == "1"
# The category's own ISA on any machine, not the suite's DOCC_MARCH for this
# CPU (conftest.py): the cases were made with it.
NO_MARCH = {"DOCC_MARCH": ""}
PASSES = ("dce", "fold_constants", "state", "integer", "tuning", "expand", "map_fusion", "dce_late", "schedule", "gpu_plan", "memplan", "perturb")

CASES = sorted(p.name[:-len(".args")] for p in CASES_DIR.glob("*.args"))


def unified(want, got, name):
    """The first lines of a unified diff of two texts."""
    diff = list(difflib.unified_diff(want.splitlines(), got.splitlines(), f"{name} (expected)", f"{name} (doccc opt)",
                                     lineterm="", n=2))
    return "\n".join(diff[:200]) + ("\n..." if len(diff) > 200 else "")


def test_every_pass_has_cases(doccc):
    """Each pass of the table, and no other name, has at least two cases."""
    listed = [l.split()[0] for l in doccc_cmd("--list-passes").stdout.splitlines() if l and not l.startswith(" ")]
    assert tuple(listed) == PASSES, f"the pass table is {listed}: add cases for a new pass (make_cases.py)"
    for p in PASSES:
        n = sum(shlex.split((CASES_DIR / f"{c}.args").read_text())[1] == p for c in CASES)
        assert n >= 2 or p == "dce_late", f"pass {p} has {n} case(s) in test/passes/"


@pytest.mark.parametrize("case", CASES)
def test_pass_golden(doccc, case):
    args = [a.replace("@CASES@", str(CASES_DIR)) for a in shlex.split((CASES_DIR / f"{case}.args").read_text())]
    r = doccc_cmd("opt", CASES_DIR / f"{case}.in.json", *args, env=NO_MARCH)
    assert r.returncode == 0, fmt_result(r)
    out = CASES_DIR / f"{case}.out.json"
    if UPDATE:
        out.write_text(r.stdout)
        return
    assert out.exists(), f"no {out}; run `make golden`"
    want = out.read_text()
    assert r.stdout == want, f"{case}: the pass's output differs; review, then `make golden`:\n" + \
        unified(want, r.stdout, out.name)


def test_pass_inputs_read_back(doccc):
    """Every case's input is the same bytes read back (a file that is not
    would make its golden output depend on the reader's normalization)."""
    for case in CASES:
        src = CASES_DIR / f"{case}.in.json"
        r = doccc_cmd("opt", src)
        assert r.returncode == 0, fmt_result(r)
        assert r.stdout == src.read_text(), f"{src.name} does not read back as itself:\n" + \
            unified(src.read_text(), r.stdout, src.name)


def _models(torch):
    """(name, module, example inputs, dynamic batch) of the round-trip models."""
    from torch import nn
    import models

    class Gather(nn.Module):
        def forward(self, x, i):
            torch._assert_async((i < 4).all(), "i must be below 4")
            return torch.index_select(x, 1, i) * torch.softmax(x, -1).sum(-1, keepdim=True)

    torch.manual_seed(0)
    return [("mlp", models.make_model("mlp"), (torch.randn(2, 64),), False),
            ("small_cnn", models.make_model("small_cnn"), (torch.randn(1, 3, 32, 32),), False),
            ("gather_dyn", Gather(), (torch.randn(3, 4), torch.tensor([3, 0, 1])), True)]


@pytest.mark.parametrize("target", ["none", "openmp", "cuda"])
def test_round_trip_all_stages(tmp_path, target):
    torch = require("torch")
    fake = {"DOCC_CC": "true", "DOCC_CXX": "true", "DOCC_NVCC": "true", "DOCC_HIPCC": "true", **NO_MARCH}
    for name, model, inputs, dynamic in _models(torch):
        pt2 = tmp_path / f"{name}.pt2"
        with torch.no_grad():
            ep = torch.export.export(model.eval(), inputs, dynamic_shapes=(
                ({0: torch.export.Dim("n", min=2, max=32)}, None) if dynamic else None))
        torch.export.save(ep, str(pt2))
        dump = tmp_path / f"{name}_dump"
        # the C compiler is `true`: the stages are written, the library is not
        doccc_cmd(pt2, "-t", target, "-o", f"{tmp_path}/out/", "--dump-sdfg", dump, env=fake)
        stages = sorted(dump.glob("*.json"))
        # every pass's stage but perturb's, the last, which is off by default
        assert [s.name[:2] for s in stages] == [f"{k:02d}" for k in range(len(PASSES))], stages
        for k, stage in enumerate(stages):
            r = doccc_cmd("opt", stage, env=NO_MARCH)
            assert r.returncode == 0, fmt_result(r)
            assert r.stdout == stage.read_text(), f"{name} {target}: {stage.name} does not read back:\n" + \
                unified(stage.read_text(), r.stdout, stage.name)
            if k == 0:
                continue
            r = doccc_cmd("opt", stages[k - 1], "--pass", PASSES[k - 1], "-t", target, env=NO_MARCH)
            assert r.returncode == 0, fmt_result(r)
            assert r.stdout == stage.read_text(), \
                f"{name} {target}: --pass {PASSES[k - 1]} on {stages[k - 1].name} is not the compile's {stage.name}:\n" + \
                unified(stage.read_text(), r.stdout, stage.name)
