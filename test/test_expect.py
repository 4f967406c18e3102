"""doccc run LIB -i x.npy --expect ref.npy: the CI gate that checks a library's
outputs against references, with exit codes (0 every output within the
tolerance, 1 an output outside it or a bad reference, 2 a usage error).

  - the MLP of test/models.py against eager PyTorch: PASS, exit 0, with and
    without -o (the outputs are compared in memory; -o writes them too)
  - a reference perturbed beyond the tolerance: FAIL, exit 1, the output and
    the worst element's index and values named; --rtol / --atol wide enough
    for the perturbation pass it, narrower ones do not
  - references that cannot be used (missing, not .npy, truncated, the wrong
    shape or dtype family, the wrong count): exit 1 before the model runs,
    the file and the reason named, no output written
  - NaN and infinities: a NaN matches only a NaN of the reference, an
    infinity only the same infinity
  - --json: one object, parsed with json.loads, its fields checked
  - bad --rtol/--atol values and --json without --expect: exit 2
  - a model with three outputs (float, int64, bool): integers and bool
    compare exactly
  - a cuda --simulate library (device-resident), through NAME_run_host and
    with --device
"""

import json
import re

import pytest

from conftest import ATOL, RTOL, compile_model, doccc_cmd, fmt_result, require


def assert_exit(r, code, *needles):
    assert r.returncode == code, f"expected exit {code}\n" + fmt_result(r)
    for n in needles:
        assert str(n) in r.stdout + r.stderr, f"{n!r} missing from the output\n" + fmt_result(r)


@pytest.fixture(scope="module")
def mlp(exports):
    return exports.get("mlp", "training", 1, "pt2")


@pytest.fixture(scope="module")
def mlp_lib(mlp, tmp_path_factory):
    return compile_model(mlp.path, "none", tmp_path_factory.mktemp("expect"), "-n", "expmlp")


@pytest.fixture
def files(mlp, tmp_path):
    """x.npy (the MLP's input) and ref.npy (its eager output)."""
    np = require("numpy")
    x, ref = tmp_path / "x.npy", tmp_path / "ref.npy"
    np.save(x, mlp.x)
    np.save(ref, mlp.ref[0])
    return x, ref


def save(path, a):
    np = require("numpy")
    np.save(path, a)
    return path


def report_line(r, k):
    """The text report's line of output k (not the "-> FILE" line of -o)."""
    lines = [l for l in r.stdout.splitlines() if l.startswith(f"out{k} ") and " -> " not in l]
    assert len(lines) == 1, fmt_result(r)
    return lines[0]


# ---- pass and fail ----------------------------------------------------------------

def test_defaults_are_the_suites_tolerances(doccc):
    """The help's defaults are conftest's RTOL and ATOL (the run's own report
    says which it used: test_pass, test_json)."""
    r = doccc_cmd("run", "--help")
    assert_exit(r, 0)
    got = dict(re.findall(r"--([ra]tol) \w\s+\w+ tolerance of --expect \(default (\S+)\)", r.stdout))
    assert {k: float(v) for k, v in got.items()} == {"rtol": RTOL, "atol": ATOL}, r.stdout


def test_pass(mlp_lib, files, tmp_path):
    x, ref = files
    r = doccc_cmd("run", mlp_lib, "-i", x, "--expect", ref)
    assert_exit(r, 0, "PASS: 0 of 1 output outside rtol 0.0001, atol 1e-05")
    line = report_line(r, 0)
    assert re.match(r"out0 '\w+' \[1, 10\] float32: max abs err [0-9.e+-]+, max rel err [0-9.e+-]+, "
                    r"0 of 10 outside tolerance, worst \[0, \d\] got \S+ expected \S+: PASS$", line), line
    assert sorted(p.name for p in tmp_path.iterdir()) == ["ref.npy", "x.npy"], \
        "--expect without -o wrote a file"
    # with -o the outputs are written too, and listed
    y = tmp_path / "y.npy"
    r = doccc_cmd("run", mlp_lib, "-i", x, "-o", y, "--expect", ref)
    assert_exit(r, 0, f"-> {y}", "PASS")
    np = require("numpy")
    np.testing.assert_allclose(np.load(y), np.load(ref), rtol=RTOL, atol=ATOL)


def test_fail_names_output_and_worst_index(mlp, mlp_lib, files, tmp_path):
    np = require("numpy")
    x, _ = files
    bad = mlp.ref[0].copy()
    bad[0, 7] += 0.5
    bad[0, 2] += 0.01
    ref = save(tmp_path / "bad.npy", bad)
    y = tmp_path / "y.npy"
    r = doccc_cmd("run", mlp_lib, "-i", x, "-o", y, "--expect", ref)
    assert_exit(r, 1, "FAIL: 1 of 1 output outside rtol 0.0001, atol 1e-05")
    line = report_line(r, 0)
    assert "2 of 10 outside tolerance" in line and line.endswith(": FAIL"), line
    m = re.search(r"worst \[0, 7\] got (\S+) expected (\S+): FAIL$", line)
    assert m, line
    assert float(m.group(1)) == pytest.approx(float(mlp.ref[0][0, 7]), abs=1e-4)
    assert float(m.group(2)) == pytest.approx(float(bad[0, 7]), rel=1e-7)
    assert re.search(r"max abs err 0\.5", line), line
    # stderr names the reference, the output and the count
    assert re.search(rf"{re.escape(str(ref))}: error: output 0 \('\w+'\) of \S+ differs from this "
                     r"reference: 2 of 10 elements outside rtol 0.0001, atol 1e-05", r.stderr), fmt_result(r)
    # the outputs were written: they are what was compared
    np.testing.assert_allclose(np.load(y), mlp.ref[0], rtol=RTOL, atol=ATOL)


def test_tolerances_loosen(mlp, mlp_lib, files, tmp_path):
    """A relative perturbation of 1e-2 on every element: rtol 2e-2 passes it,
    rtol 5e-3 does not; an absolute shift of 0.1: atol 0.2 passes, 0.05 not."""
    x, _ = files
    rel = save(tmp_path / "rel.npy", mlp.ref[0] * 1.01)
    r = doccc_cmd("run", mlp_lib, "-i", x, "--expect", rel)
    assert_exit(r, 1, "FAIL")
    r = doccc_cmd("run", mlp_lib, "-i", x, "--expect", rel, "--rtol", "2e-2")
    assert_exit(r, 0, "PASS: 0 of 1 output outside rtol 0.02, atol 1e-05")
    r = doccc_cmd("run", mlp_lib, "-i", x, "--expect", rel, "--rtol=5e-3")
    assert_exit(r, 1, "10 of 10 outside tolerance")
    shifted = save(tmp_path / "abs.npy", mlp.ref[0] + 0.1)
    r = doccc_cmd("run", mlp_lib, "-i", x, "--expect", shifted, "--atol", "0.2", "--rtol", "0")
    assert_exit(r, 0, "PASS: 0 of 1 output outside rtol 0, atol 0.2")
    r = doccc_cmd("run", mlp_lib, "-i", x, "--expect", shifted, "--atol", "0.05", "--rtol", "0")
    assert_exit(r, 1, "10 of 10 outside tolerance")


# ---- references that cannot be used ------------------------------------------------

@pytest.mark.parametrize("kind", ["missing", "not_npy", "truncated"])
def test_broken_reference(kind, mlp, mlp_lib, files, tmp_path):
    x, good = files
    ref = tmp_path / "broken.npy"
    if kind == "not_npy":
        ref.write_text("a,b,c\n1,2,3\n")
        why = "not a .npy file"
    elif kind == "truncated":
        data = good.read_bytes()
        ref.write_bytes(data[:len(data) - 8])
        why = "file holds 32 data bytes, shape and dtype need 40"
    else:
        why = "broken.npy"
    y = tmp_path / "y.npy"
    r = doccc_cmd("run", mlp_lib, "-i", x, "-o", y, "--expect", ref)
    assert_exit(r, 1, str(ref), why)
    assert "PASS" not in r.stdout and "FAIL" not in r.stdout, "the model ran\n" + fmt_result(r)
    assert not y.exists(), "an output was written after a broken reference"


def test_shape_mismatch(mlp, mlp_lib, files, tmp_path):
    x, _ = files
    ref = save(tmp_path / "wide.npy", mlp.ref[0].reshape(10))
    y = tmp_path / "y.npy"
    r = doccc_cmd("run", mlp_lib, "-i", x, "-o", y, "--expect", ref)
    assert_exit(r, 1)
    assert re.search(rf"{re.escape(str(ref))}: error: the reference of output 0 \('\w+'\) has shape "
                     r"\[10\] but the output has shape \[1, 10\]", r.stderr), fmt_result(r)
    assert not y.exists()


def test_dtype_family_mismatch(mlp, mlp_lib, files, tmp_path):
    np = require("numpy")
    x, _ = files
    ref = save(tmp_path / "ints.npy", np.zeros((1, 10), np.int64))
    r = doccc_cmd("run", mlp_lib, "-i", x, "--expect", ref)
    assert_exit(r, 1, str(ref), "has dtype int64 ('<i8'), an integer type, but the output is float32, "
                "a floating-point type")
    # another float type is the same family: a float64 reference is compared
    ref64 = save(tmp_path / "f64.npy", mlp.ref[0].astype(np.float64))
    r = doccc_cmd("run", mlp_lib, "-i", x, "--expect", ref64)
    assert_exit(r, 0, "PASS")


def test_wrong_count(mlp_lib, files, tmp_path):
    x, ref = files
    r = doccc_cmd("run", mlp_lib, "-i", x, "--expect", ref, "--expect", ref)
    assert_exit(r, 1, str(mlp_lib), "the library expects 1 output", "got 2 (--expect)")
    assert "PASS" not in r.stdout
    # -o, when given with --expect, is counted too
    r = doccc_cmd("run", mlp_lib, "-i", x, "-o", tmp_path / "a.npy", "-o", tmp_path / "b.npy",
                  "--expect", ref)
    assert_exit(r, 1, "got 2 (-o)")
    assert not (tmp_path / "a.npy").exists()


# ---- NaN and infinities ------------------------------------------------------------

@pytest.fixture(scope="module")
def log_lib(tmp_path_factory):
    """log(x) on an input with negatives (NaN) and zeros (-inf)."""
    torch = require("torch")
    d = tmp_path_factory.mktemp("explog")

    class Log(torch.nn.Module):
        def forward(self, x):
            return torch.log(x)

    x = torch.tensor([[1.0, -1.0, 0.0, 2.0], [-3.0, 0.5, 0.0, 4.0]])
    ep = torch.export.export(Log(), (x,))
    torch.export.save(ep, str(d / "log.pt2"))
    lib = compile_model(d / "log.pt2", "none", d, "-n", "explog")
    with torch.no_grad():
        ref = torch.log(x).numpy()
    return lib, save(d / "x.npy", x.numpy()), ref


def test_nan_and_inf(log_lib, tmp_path):
    np = require("numpy")
    lib, x, ref = log_lib
    assert np.isnan(ref[0, 1]) and ref[0, 2] == -np.inf, ref
    r = doccc_cmd("run", lib, "-i", x, "--expect", save(tmp_path / "same.npy", ref))
    assert_exit(r, 0, "0 of 8 outside tolerance", "PASS")

    cases = {
        "nan_in_output": ((0, 1), 0.0, "got nan expected 0"),     # a NaN where the reference has a number
        "nan_in_ref": ((0, 0), np.nan, "got 0 expected nan"),     # a number where the reference has NaN
        "wrong_inf": ((0, 2), np.inf, "got -inf expected inf"),   # -inf against +inf
        "inf_vs_number": ((1, 2), -1e30, "got -inf expected -1.00000002e+30"),
    }
    for label, (idx, val, shown) in cases.items():
        bad = ref.copy()
        bad[idx] = val
        r = doccc_cmd("run", lib, "-i", x, "--expect", save(tmp_path / f"{label}.npy", bad))
        assert_exit(r, 1, "1 of 8 outside tolerance", f"worst [{idx[0]}, {idx[1]}] {shown}: FAIL")
    # with every tolerance wide open, a NaN still fails
    bad = ref.copy()
    bad[0, 1] = 5.0
    r = doccc_cmd("run", lib, "-i", x, "--expect", save(tmp_path / "wide.npy", bad),
                  "--rtol", "1e30", "--atol", "1e30")
    assert_exit(r, 1, "worst [0, 1] got nan expected 5")


# ---- --json ----------------------------------------------------------------------

def test_json(mlp, mlp_lib, files, tmp_path):
    x, good = files
    r = doccc_cmd("run", mlp_lib, "-i", x, "--expect", good, "--json")
    assert_exit(r, 0)
    rep = json.loads(r.stdout)
    assert rep["library"] == str(mlp_lib) and rep["pass"] is True
    assert rep["rtol"] == RTOL and rep["atol"] == ATOL
    (o,) = rep["outputs"]
    assert o["shape"] == [1, 10] and o["dtype"] == "float32" and o["reference"] == str(good)
    assert o["mismatches"] == 0 and o["elements"] == 10 and o["pass"] is True
    assert 0 <= o["max_abs_err"] <= ATOL + RTOL * abs(mlp.ref[0]).max()
    assert isinstance(o["name"], str) and o["name"]

    bad = mlp.ref[0].copy()
    bad[0, 4] = 100.0
    ref = save(tmp_path / "bad.npy", bad)
    r = doccc_cmd("run", mlp_lib, "-i", x, "--expect", ref, "--json", "--repeat", "3")
    assert_exit(r, 1, f"{ref}: error: output 0")
    rep = json.loads(r.stdout)  # stdout is the JSON alone: no latency or listing line
    assert rep["pass"] is False and rep["latency_ms"]["runs"] == 3 and rep["latency_ms"]["min"] > 0
    (o,) = rep["outputs"]
    assert o["pass"] is False and o["mismatches"] == 1
    assert o["worst"]["index"] == [0, 4] and o["worst"]["expected"] == 100.0
    assert o["worst"]["got"] == pytest.approx(float(mlp.ref[0][0, 4]), abs=1e-4)
    assert o["max_abs_err"] == pytest.approx(100.0 - float(mlp.ref[0][0, 4]), abs=1e-4)
    assert o["max_rel_err"] == pytest.approx(o["max_abs_err"] / 100.0, rel=1e-6)


def test_json_non_finite(log_lib, tmp_path):
    """JSON has no NaN or infinity: they are the strings "nan", "inf", "-inf"."""
    lib, x, ref = log_lib
    bad = ref.copy()
    bad[0, 1] = 1.0
    r = doccc_cmd("run", lib, "-i", x, "--expect", save(tmp_path / "b.npy", bad), "--json")
    assert_exit(r, 1)
    o = json.loads(r.stdout, parse_constant=lambda c: pytest.fail(f"non-standard JSON constant {c}"))
    w = o["outputs"][0]["worst"]
    assert w == {"index": [0, 1], "got": "nan", "expected": 1.0}, w


# ---- usage errors ----------------------------------------------------------------

@pytest.mark.parametrize("args, text", [
    (["--rtol", "-1"], "--rtol needs a non-negative finite number, not '-1'"),
    (["--atol", "abc"], "--atol needs a non-negative finite number, not 'abc'"),
    (["--rtol=nan"], "--rtol needs a non-negative finite number, not 'nan'"),
    (["--atol", "inf"], "--atol needs a non-negative finite number, not 'inf'"),
    (["--rtol", "1e999"], "--rtol needs a non-negative finite number, not '1e999'"),
    (["--atol", "0.1x"], "--atol needs a non-negative finite number, not '0.1x'"),
])
def test_bad_tolerance(args, text, mlp_lib, files, tmp_path):
    x, ref = files
    r = doccc_cmd("run", mlp_lib, "-i", x, "--expect", ref, *args)
    assert_exit(r, 2, text)
    assert "PASS" not in r.stdout


@pytest.mark.parametrize("flag", [["--rtol", "1e-3"], ["--atol", "1e-3"]])
def test_comparison_options_need_expect(flag, mlp_lib, files, tmp_path):
    x, _ = files
    y = tmp_path / "y.npy"
    r = doccc_cmd("run", mlp_lib, "-i", x, "-o", y, *flag)
    assert_exit(r, 2, f"{flag[0]} is for comparing the outputs with references: give --expect REF.npy")
    assert not y.exists()


def test_json_needs_a_report(mlp_lib, files, tmp_path):
    """--json prints a report: of --expect, --repeat or --profile; alone it is a usage error."""
    x, _ = files
    y = tmp_path / "y.npy"
    r = doccc_cmd("run", mlp_lib, "-i", x, "-o", y, "--json")
    assert_exit(r, 2, "--json prints the report of --expect, --repeat or --profile: give one")
    assert not y.exists()


# ---- several outputs, integers and bool ---------------------------------------------

@pytest.fixture(scope="module")
def multi(tmp_path_factory):
    """(linear(x), argmax(linear(x)), x > 0): float32, int64 and bool outputs."""
    torch = require("torch")
    np = require("numpy")
    d = tmp_path_factory.mktemp("expmulti")

    class M(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = torch.nn.Linear(6, 5)

        def forward(self, x):
            y = self.fc(x)
            return y, y.argmax(-1), x > 0

    torch.manual_seed(0)
    m = M().eval()
    x = torch.randn(3, 6, generator=torch.Generator().manual_seed(5))
    ep = torch.export.export(m, (x,))
    torch.export.save(ep, str(d / "multi.pt2"))
    lib = compile_model(d / "multi.pt2", "none", d, "-n", "expmulti")
    with torch.no_grad():
        refs = [t.numpy() for t in m(x)]
    assert refs[1].dtype == np.int64 and refs[2].dtype == np.bool_
    paths = [save(d / f"ref{k}.npy", a) for k, a in enumerate(refs)]
    return lib, save(d / "x.npy", x.numpy()), refs, paths


def test_multi_output(multi, tmp_path):
    lib, x, refs, paths = multi
    args = [a for p in paths for a in ("--expect", p)]
    r = doccc_cmd("run", lib, "-i", x, *args)
    assert_exit(r, 0, "PASS: 0 of 3 outputs outside")
    assert " float32: " in report_line(r, 0)
    assert re.search(r" int64: max abs err 0, max rel err 0, 0 of 3 outside tolerance", report_line(r, 1))
    assert re.search(r" bool: max abs err 0, max rel err 0, 0 of 18 outside tolerance", report_line(r, 2))

    # two outputs missing their reference
    r = doccc_cmd("run", lib, "-i", x, "--expect", paths[0])
    assert_exit(r, 1, "the library expects 3 outputs (", "got 1 (--expect)")

    # an index off by one fails however wide the tolerance: integers compare exactly
    idx = refs[1].copy()
    idx[2] = (idx[2] + 1) % 5
    bad = save(tmp_path / "idx.npy", idx)
    r = doccc_cmd("run", lib, "-i", x, "--expect", paths[0], "--expect", bad, "--expect", paths[2],
                  "--rtol", "1", "--atol", "10", "--json")
    assert_exit(r, 1)
    rep = json.loads(r.stdout)
    assert [o["pass"] for o in rep["outputs"]] == [True, False, True] and rep["pass"] is False
    o = rep["outputs"][1]
    assert o["dtype"] == "int64" and o["mismatches"] == 1
    assert o["worst"] == {"index": [2], "got": int(refs[1][2]), "expected": int(idx[2])}

    # a flipped bool
    flags = refs[2].copy()
    flags[1, 3] = not flags[1, 3]
    bad = save(tmp_path / "flags.npy", flags)
    r = doccc_cmd("run", lib, "-i", x, "--expect", paths[0], "--expect", paths[1], "--expect", bad)
    assert_exit(r, 1, "FAIL: 1 of 3 outputs outside")
    assert report_line(r, 2).endswith(
        f"1 of 18 outside tolerance, worst [1, 3] got {str(bool(refs[2][1, 3])).lower()} "
        f"expected {str(bool(flags[1, 3])).lower()}: FAIL"), report_line(r, 2)
    assert report_line(r, 0).endswith(": PASS") and report_line(r, 1).endswith(": PASS")


# ---- a device-resident library (cuda, simulated) ------------------------------------

@pytest.fixture(scope="module")
def sim_lib(mlp, tmp_path_factory):
    return compile_model(mlp.path, "cuda-sim", tmp_path_factory.mktemp("expsim"), "-n", "expsim")


@pytest.mark.parametrize("device", [[], ["--device"]])
def test_cuda_simulate(device, mlp, sim_lib, files, tmp_path):
    x, good = files
    r = doccc_cmd("run", sim_lib, "-i", x, "--expect", good, *device)
    assert_exit(r, 0, "PASS: 0 of 1 output outside")
    bad = mlp.ref[0].copy()
    bad[0, 9] -= 1.0
    r = doccc_cmd("run", sim_lib, "-i", x, "--expect", save(tmp_path / "bad.npy", bad), *device)
    assert_exit(r, 1, "1 of 10 outside tolerance, worst [0, 9]", "FAIL")


# ---- half-precision outputs -------------------------------------------------------

def test_half_precision_outputs(tmp_path):
    """float16 and bfloat16 outputs compare as floats: against float16 and
    float32 references, and a bfloat16 one as its raw bits (uint16)."""
    torch = require("torch")
    np = require("numpy")

    class Half(torch.nn.Module):
        def forward(self, x):
            return (x * 3).to(torch.float16), (x * 3).to(torch.bfloat16)

    x = torch.randn(4, 5, generator=torch.Generator().manual_seed(3))
    x[0, 0] = 1e-6  # a float16 subnormal
    ep = torch.export.export(Half(), (x,))
    torch.export.save(ep, str(tmp_path / "half.pt2"))
    lib = compile_model(tmp_path / "half.pt2", "none", tmp_path, "-n", "exphalf")
    with torch.no_grad():
        h, b = Half()(x)
    xp = save(tmp_path / "x.npy", x.numpy())
    h16 = save(tmp_path / "h16.npy", h.numpy())
    h32 = save(tmp_path / "h32.npy", h.float().numpy())
    bbits = save(tmp_path / "bbits.npy", b.view(torch.int16).numpy().view(np.uint16))
    b32 = save(tmp_path / "b32.npy", b.float().numpy())
    for hr, br in ((h16, bbits), (h32, b32), (h16, b32)):
        r = doccc_cmd("run", lib, "-i", xp, "--expect", hr, "--expect", br, "--rtol", "0", "--atol", "0")
        assert_exit(r, 0, "PASS: 0 of 2 outputs")
        assert " float16: max abs err 0," in report_line(r, 0) and " bfloat16: max abs err 0," in report_line(r, 1)
    # the worst element shows decoded values, not bits
    bad = b.float().numpy()
    bad[2, 1] = 1000.0
    r = doccc_cmd("run", lib, "-i", xp, "--expect", h16, "--expect", save(tmp_path / "bad.npy", bad), "--json")
    assert_exit(r, 1)
    o = json.loads(r.stdout)["outputs"][1]
    assert o["dtype"] == "bfloat16" and o["worst"]["index"] == [2, 1] and o["worst"]["expected"] == 1000.0
    assert np.float32(o["worst"]["got"]) == np.float32(b[2, 1].float()), o  # 9 digits: exact as a float32
