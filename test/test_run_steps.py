"""doccc run with --step: several steps in one process, on one instance of
the model, each with its own -i, -o and --expect (a stateful decoder's
prefill and decode steps, gated in CI).

  - a stateless model (linear + relu, and a row sum) at two different
    inputs: each step's outputs against its own eager references, PASS;
    the references swapped between the steps, or a wrong one in step 2,
    FAIL naming step 2 (text, stderr and the JSON "steps" array)
  - one step, with or without a --step before it: the report of before
    steps existed, byte for byte (no "steps" in the JSON)
  - run-time dims: a prefill of 5 rows, then decodes of 1, then 5 again;
    each step's outputs have its own shape and match eager
  - a hand-written library with state (test/capi/counter.c: y = x + the
    number of runs before): the steps run in order on ONE instance; a run
    failure in step 2 is named and writes nothing
  - --repeat times the sequence and each step
  - a cuda --simulate library, through NAME_run_host and with --device
  - usage errors (exit 2): an empty step, a step without -i; per-step
    counts, shapes and missing files (exit 1) name the step
"""

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from conftest import ATOL, RTOL, ROOT, compile_model, doccc_cmd, fmt_result, require


def assert_exit(r, code, *needles):
    assert r.returncode == code, f"expected exit {code}\n" + fmt_result(r)
    for n in needles:
        assert str(n) in r.stdout + r.stderr, f"{n!r} missing from the output\n" + fmt_result(r)


def save(path, a):
    require("numpy").save(path, a)
    return path


def expect_args(paths):
    return [a for p in paths for a in ("--expect", p)]


def model():
    """Two outputs: relu(linear(x)) and x.sum(-1) + x.sum() (every row counts:
    a run at other dims than the inputs' shows)."""
    torch = require("torch")

    class M(torch.nn.Module):
        def __init__(self):
            super().__init__()
            torch.manual_seed(0)
            self.fc = torch.nn.Linear(8, 4)

        def forward(self, x):
            return torch.relu(self.fc(x)), x.sum(-1) + x.sum()

    return M().eval()


def eager(m, x):
    torch = require("torch")
    with torch.no_grad():
        return [t.numpy() for t in m(torch.from_numpy(x))]


@pytest.fixture(scope="module")
def lin(tmp_path_factory):
    """The model compiled for x [2, 8], and two inputs with their references:
    {"lib", "x": [x1, x2], "refs": [[y1, s1], [y2, s2]] (paths), "arrays"}."""
    torch = require("torch")
    np = require("numpy")
    d = tmp_path_factory.mktemp("steps")
    m = model()
    torch.export.save(torch.export.export(m, (torch.randn(2, 8),)), str(d / "lin.pt2"))
    lib = compile_model(d / "lin.pt2", "none", d, "-n", "steplin")
    rng = np.random.default_rng(7)
    xs, refs, arrays = [], [], []
    for s in (1, 2):
        x = rng.standard_normal((2, 8)).astype(np.float32)
        outs = eager(m, x)
        xs.append(save(d / f"x{s}.npy", x))
        refs.append([save(d / f"ref{s}_{k}.npy", o) for k, o in enumerate(outs)])
        arrays.append(outs)
    assert not np.allclose(arrays[0][0], arrays[1][0], rtol=RTOL, atol=ATOL), "the steps' references must differ"
    return {"lib": lib, "x": xs, "refs": refs, "arrays": arrays}


def two_steps(lin, refs1=None, refs2=None, *extra):
    return doccc_cmd("run", lin["lib"], "-i", lin["x"][0], *expect_args(refs1 or lin["refs"][0]),
                     "--step", "-i", lin["x"][1], *expect_args(refs2 or lin["refs"][1]), *extra)


def report_lines(r):
    return [l for l in r.stdout.splitlines() if re.match(r"(step \d+: )?out\d ", l) and " -> " not in l]


# ---- two steps, each against its references ----------------------------------------

def test_two_steps_pass(lin, tmp_path):
    np = require("numpy")
    outs = [tmp_path / f"o{s}_{k}.npy" for s in (1, 2) for k in (0, 1)]
    r = doccc_cmd("run", lin["lib"], "-i", lin["x"][0], "-o", outs[0], "-o", outs[1], *expect_args(lin["refs"][0]),
                  "--step", "-i", lin["x"][1], "-o", outs[2], "-o", outs[3], *expect_args(lin["refs"][1]))
    assert_exit(r, 0, "PASS: 0 of 4 outputs outside rtol 0.0001, atol 1e-05 in 2 steps")
    lines = report_lines(r)
    assert [l.split(" [")[0] for l in lines] == ["step 1: out0 'relu'", "step 1: out1 'add'",
                                                 "step 2: out0 'relu'", "step 2: out1 'add'"], r.stdout
    assert all(l.endswith(": PASS") for l in lines), r.stdout
    assert f"step 2: out1 'add' [2] float32 -> {outs[3]}" in r.stdout, r.stdout
    # each step wrote its own outputs, from its own inputs
    for s in (0, 1):
        for k in (0, 1):
            np.testing.assert_allclose(np.load(outs[2 * s + k]), lin["arrays"][s][k], rtol=RTOL, atol=ATOL)


def test_references_swapped_fail(lin):
    """Each step is checked against its own references: step 1's given to
    step 2 (and the other way round) fail in both steps."""
    r = two_steps(lin, lin["refs"][1], lin["refs"][0])
    assert_exit(r, 1, "; first: step 1, out0 'relu'")
    assert [l.endswith(": FAIL") for l in report_lines(r)] == [True, True, True, True], r.stdout


def test_wrong_reference_in_step_2(lin, tmp_path):
    np = require("numpy")
    bad = lin["arrays"][1][1].copy()
    bad[1] += 1.0
    ref = save(tmp_path / "bad.npy", bad)
    r = two_steps(lin, None, [lin["refs"][1][0], ref])
    assert_exit(r, 1, "FAIL: 1 of 4 outputs outside rtol 0.0001, atol 1e-05 in 2 steps; first: step 2, out1 'add'")
    assert [l.endswith(": PASS") for l in report_lines(r)] == [True, True, True, False], r.stdout
    assert re.search(r"^step 2: out1 'add' \[2\] float32: .* 1 of 2 outside tolerance, worst \[1\] ", r.stdout, re.M), \
        r.stdout
    assert re.search(rf"{re.escape(str(ref))}: error: step 2: output 1 \('add'\) of \S+ differs from this "
                     r"reference: 1 of 2 elements", r.stderr), fmt_result(r)
    assert "step 1: output" not in r.stderr, r.stderr

    r = two_steps(lin, None, [lin["refs"][1][0], ref], "--json")
    assert_exit(r, 1)
    rep = json.loads(r.stdout)
    assert rep["pass"] is False and "outputs" not in rep, rep
    assert [s["step"] for s in rep["steps"]] == [1, 2]
    assert [s["pass"] for s in rep["steps"]] == [True, False]
    assert [o["pass"] for o in rep["steps"][1]["outputs"]] == [True, False]
    o = rep["steps"][1]["outputs"][1]
    assert o["reference"] == str(ref) and o["worst"]["index"] == [1] and o["mismatches"] == 1
    assert o["worst"]["expected"] == pytest.approx(float(bad[1]))
    assert rep["steps"][0]["outputs"][0]["reference"] == str(lin["refs"][0][0])


def test_step_without_expect(lin, tmp_path):
    """A step may have -o and no --expect: it runs, is not checked, and the
    verdict says how many steps were; its JSON entry has pass null."""
    np = require("numpy")
    o = [tmp_path / "a.npy", tmp_path / "b.npy"]
    args = ["run", lin["lib"], "-i", lin["x"][0], "-o", o[0], "-o", o[1], "--step", "-i", lin["x"][1],
            *expect_args(lin["refs"][1])]
    r = doccc_cmd(*args)
    assert_exit(r, 0, "PASS: 0 of 2 outputs outside rtol 0.0001, atol 1e-05 in 1 of 2 steps")
    assert not any(l.startswith("step 1: out0 'relu' [2, 4] float32: ") for l in r.stdout.splitlines())
    np.testing.assert_allclose(np.load(o[0]), lin["arrays"][0][0], rtol=RTOL, atol=ATOL)
    rep = json.loads(doccc_cmd(*args, "--json").stdout)
    assert rep["steps"][0] == {"step": 1, "outputs": [], "pass": None} and rep["steps"][1]["pass"] is True, rep


@pytest.mark.parametrize("json_flag", [[], ["--json"]])
def test_one_step_report_unchanged(lin, json_flag):
    """One step, with a --step before it or without: the same report as
    before steps existed (no "step 1: ", no "steps" in the JSON)."""
    base = ["run", lin["lib"], "-i", lin["x"][0], *expect_args(lin["refs"][0]), *json_flag]
    r0 = doccc_cmd(*base)
    r1 = doccc_cmd("run", lin["lib"], "--step", *base[2:])
    assert_exit(r0, 0)
    assert r1.returncode == 0 and r1.stdout == r0.stdout, fmt_result(r1)
    assert "step 1" not in r0.stdout and '"steps"' not in r0.stdout
    if json_flag:
        assert set(json.loads(r0.stdout)) == {"library", "rtol", "atol", "outputs", "pass"}


# ---- run-time dims: each step its own ------------------------------------------------

@pytest.fixture(scope="module")
def dyn(tmp_path_factory):
    torch = require("torch")
    from torch.export import Dim
    d = tmp_path_factory.mktemp("stepdyn")
    m = model()
    ep = torch.export.export(m, (torch.randn(3, 8),), dynamic_shapes=({0: Dim("t", min=1, max=32)},))
    torch.export.save(ep, str(d / "dyn.pt2"))
    return m, compile_model(d / "dyn.pt2", "none", d, "-n", "stepdyn")


def test_dynamic_dims_per_step(dyn, tmp_path):
    """Prefill with 5 rows, decode with 1, twice, then 5 rows again: each
    step's dims come from its inputs (set again when they change, also on
    the second timed run of the sequence), its outputs have its shapes."""
    np = require("numpy")
    m, lib = dyn
    rng = np.random.default_rng(3)
    sizes = (5, 1, 1, 5)
    args, outs, want = ["run", lib], [], []
    for s, n in enumerate(sizes):
        x = rng.standard_normal((n, 8)).astype(np.float32)
        refs = eager(m, x)
        o = tmp_path / f"y{s}.npy"
        args += (["--step"] if s else []) + ["-i", save(tmp_path / f"x{s}.npy", x), "-o", o,
                                              "-o", tmp_path / f"z{s}.npy"]
        args += expect_args([save(tmp_path / f"r{s}_{k}.npy", a) for k, a in enumerate(refs)])
        outs.append(o)
        want.append(refs[0])
    r = doccc_cmd(*args, "--repeat", "2", "--warmup", "0")
    assert_exit(r, 0, "PASS: 0 of 8 outputs outside rtol 0.0001, atol 1e-05 in 4 steps")
    assert "step 1: out0 'relu' [5, 4] float32: " in r.stdout and "step 2: out0 'relu' [1, 4] float32: " in r.stdout
    for o, w in zip(outs, want):
        got = np.load(o)
        assert got.shape == w.shape
        np.testing.assert_allclose(got, w, rtol=RTOL, atol=ATOL)


def test_dynamic_step_outside_range(dyn, tmp_path):
    """A step whose input is outside the dim's range is an error naming the
    step, before anything runs: step 1's output is not written."""
    np = require("numpy")
    _, lib = dyn
    y1 = tmp_path / "y1.npy"
    r = doccc_cmd("run", lib, "-i", save(tmp_path / "a.npy", np.ones((4, 8), np.float32)), "-o", y1,
                  "-o", tmp_path / "z1.npy",
                  "--step", "-i", save(tmp_path / "b.npy", np.ones((40, 8), np.float32)), "-o", tmp_path / "y2.npy",
                  "-o", tmp_path / "z2.npy")
    assert_exit(r, 1, "error: step 2: the inputs do not fit the library's run-time dims:", "= 40 is outside")
    assert not y1.exists()


# ---- one instance, in order: a library with state ---------------------------------------

@pytest.fixture(scope="module")
def counter(tmp_path_factory):
    """test/capi/counter.c as a library: y = x + the runs this instance made."""
    cc = shutil.which("clang") or shutil.which("cc")
    if not cc:
        pytest.skip("no C compiler (clang or cc)")
    d = tmp_path_factory.mktemp("counter")
    lib = d / "libcounter.so"
    cmd = [cc, "-std=c11", "-Wall", "-Wextra", "-Werror", "-shared", "-fPIC", "-o", str(lib),
           str(ROOT / "test" / "capi" / "counter.c")]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, f"{' '.join(cmd)}\n{r.stdout}{r.stderr}"
    return lib


def f32(*v):
    return require("numpy").array(v, dtype="float32")


def test_steps_share_one_instance(counter, tmp_path):
    """Three steps see the instance's 0, 1, 2 runs before them: one instance,
    the steps in the order given. Each step's reference says so."""
    x = [save(tmp_path / f"x{s}.npy", f32(10 * s, 1, 2, 3)) for s in range(3)]
    refs = [save(tmp_path / f"r{s}.npy", f32(10 * s, 1, 2, 3) + s) for s in range(3)]
    args = ["run", counter]
    for s in range(3):
        args += (["--step"] if s else []) + ["-i", x[s], "--expect", refs[s]]
    r = doccc_cmd(*args)
    assert_exit(r, 0, "PASS: 0 of 3 outputs outside rtol 0.0001, atol 1e-05 in 3 steps")
    # the same file in every step: a new instance per step would pass this
    same = ["run", counter, "-i", x[0], "--expect", refs[0], "--step", "-i", x[0], "--expect", refs[0]]
    r = doccc_cmd(*same)
    assert_exit(r, 1, "first: step 2, out0 'y'", "worst [0] got 1 expected 0")
    # --repeat runs the whole sequence again on the same instance: the
    # outputs compared are those of the last run (here the 3rd and 4th)
    r = doccc_cmd("run", counter, "-i", x[0], "-o", tmp_path / "a.npy", "--step", "-i", x[1], "-o", tmp_path / "b.npy",
                  "--repeat", "2", "--warmup", "0")
    assert_exit(r, 0, "over 2 runs of the 2 steps")
    np = require("numpy")
    np.testing.assert_array_equal(np.load(tmp_path / "a.npy"), f32(0, 1, 2, 3) + 2)
    np.testing.assert_array_equal(np.load(tmp_path / "b.npy"), f32(10, 1, 2, 3) + 3)


def test_run_failure_names_the_step(counter, tmp_path):
    """Step 2's run fails: the message names step 2, exit 1, and no output
    of any step is written (step 1's ran, but outputs come after all ran)."""
    a, b = tmp_path / "a.npy", tmp_path / "b.npy"
    r = doccc_cmd("run", counter, "-i", save(tmp_path / "x.npy", f32(1, 2, 3, 4)), "-o", a,
                  "--step", "-i", save(tmp_path / "neg.npy", f32(-1, 2, 3, 4)), "-o", b)
    assert_exit(r, 1, "error: step 2: run failed: counter: x[0] is negative")
    assert not a.exists() and not b.exists()


# ---- --repeat ---------------------------------------------------------------------

def test_repeat_times_the_sequence_and_each_step(lin):
    r = two_steps(lin, None, None, "--repeat", "3")
    assert_exit(r, 0)
    t = r"[0-9.]+ (?:ns|µs|ms|s)"
    assert re.search(rf"^latency: median {t}, min {t}, p90 {t} over 3 runs of the 2 steps$", r.stdout, re.M), r.stdout
    for s in (1, 2):
        assert re.search(rf"^step {s}: latency: median {t}, min {t}, p90 {t}$", r.stdout, re.M), r.stdout
    rep = json.loads(two_steps(lin, None, None, "--repeat", "3", "--json").stdout)
    assert rep["latency_ms"]["runs"] == 3 and rep["latency_ms"]["min"] > 0
    for s in rep["steps"]:
        assert set(s["latency_ms"]) == {"median", "min", "p90"} and 0 < s["latency_ms"]["min"] <= rep["latency_ms"]["median"]


# ---- errors ------------------------------------------------------------------------

@pytest.mark.parametrize("args, needle", [
    (["X", "--step"], "step 2 is empty: give its -i, -o or --expect after --step"),
    (["X", "--step", "--step", "X"], "step 2 is empty"),
    (["--step", "--step", "X"], "step 1 is empty"),
    (["X", "--step", "-o", "y.npy", "-o", "z.npy"],
     "step 2: no -i, but the library takes 1 input (x): each step gives its own inputs"),
    (["-o", "y.npy", "-o", "z.npy", "--step", "X"], "step 1: no -i, but the library takes 1 input (x)"),
])
def test_usage_errors(lin, tmp_path, args, needle):
    """Exit 2 and the usage text; nothing written. X: -i x1.npy -o OUT -o OUT."""
    full = []
    for a in args:
        full += ["-i", lin["x"][0], "-o", tmp_path / "a.npy", "-o", tmp_path / "b.npy"] if a == "X" else \
                [tmp_path / a if a.endswith(".npy") else a]
    r = doccc_cmd("run", lin["lib"], *full)
    assert_exit(r, 2, needle, "usage: doccc run")
    assert "--step" in r.stderr.split("usage:")[1]
    assert sorted(p.name for p in tmp_path.iterdir()) == [], "a usage error wrote a file"


def test_json_needs_expect_in_some_step(lin, tmp_path):
    r = doccc_cmd("run", lin["lib"], "-i", lin["x"][0], "-o", tmp_path / "a.npy", "-o", tmp_path / "b.npy",
                  "--step", "-i", lin["x"][1], "-o", tmp_path / "c.npy", "-o", tmp_path / "d.npy", "--json")
    assert_exit(r, 2, "--json prints the report of --expect, --repeat or --profile: give one")


def test_errors_of_every_step_named(lin, tmp_path):
    """Counts, shapes and unreadable files: exit 1, every step's problems
    reported (each naming its step) before the model runs, nothing written."""
    np = require("numpy")
    r = doccc_cmd("run", lin["lib"], "-i", lin["x"][0], *expect_args(lin["refs"][0][:1]),
                  "--step", "-i", lin["x"][1], "-i", lin["x"][1], *expect_args(lin["refs"][1]))
    assert_exit(r, 1, "error: step 1: the library expects 2 outputs (relu, add), got 1 (--expect)",
                "error: step 2: the library expects 1 input (x), got 2 (-i)")
    wide = save(tmp_path / "wide.npy", np.zeros((3, 8), np.float32))
    a = tmp_path / "a.npy"
    r = doccc_cmd("run", lin["lib"], "-i", lin["x"][0], "-o", a, "-o", tmp_path / "b.npy",
                  "--step", "-i", wide, *expect_args(lin["refs"][1]),
                  "--step", "-i", tmp_path / "nothere.npy", *expect_args([lin["refs"][1][0], tmp_path / "gone.npy"]))
    assert_exit(r, 1, f"{wide}: error: step 2: input 0 ('x') has shape [3, 8] but the model expects [2, 8]",
                "nothere.npy: note: step 3: input 0 ('x')", "gone.npy: note: step 3: the reference of output 1 ('add')")
    assert "PASS" not in r.stdout and "FAIL" not in r.stdout and not a.exists()


def test_help_mentions_steps(doccc):
    r = doccc_cmd("run", "--help")
    assert_exit(r, 0, "--step", "N runs of the whole sequence")


# ---- a device-resident library (cuda, simulated) ----------------------------------

@pytest.fixture(scope="module")
def sim_lib(lin, tmp_path_factory):
    return compile_model(lin["lib"].parent / "lin.pt2", "cuda-sim", tmp_path_factory.mktemp("stepsim"), "-n", "stepsim")


@pytest.mark.parametrize("device", [[], ["--device"]])
def test_cuda_simulate(device, lin, sim_lib):
    """Through NAME_run_host, and with --device (each step's inputs copied to
    the device before the runs, its outputs back after them)."""
    lib = sim_lib
    r = doccc_cmd("run", lib, "-i", lin["x"][0], *expect_args(lin["refs"][0]),
                  "--step", "-i", lin["x"][1], *expect_args(lin["refs"][1]), *device)
    assert_exit(r, 0, "PASS: 0 of 4 outputs outside rtol 0.0001, atol 1e-05 in 2 steps")
    r = doccc_cmd("run", lib, "-i", lin["x"][0], *expect_args(lin["refs"][0]),
                  "--step", "-i", lin["x"][1], *expect_args(lin["refs"][0]), *device)
    assert_exit(r, 1, "first: step 2, out0 'relu'")
