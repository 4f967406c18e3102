"""Looking inside a run: doccc run's timing, --profile, --trace and the
numerics bisector (--values, --dump-values, python -m doccc.reference,
doccc compare).

The bisector is tested on a model made wrong on purpose: the test-only
pass option perturb.node adds 1 to the first element of one step's value,
and doccc compare must name that step, not a later one, while the same
model built without it compares clean against PyTorch.
"""

import json
import math
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import compile_model, doccc_cmd, fmt_result, require

ROOT = Path(__file__).resolve().parent.parent
TIME = r"[0-9.]+ (?:ns|µs|ms|s)"
PERTURB = ("--pass-opt", "perturb.enabled=true", "--pass-opt")


def cnn():
    """A small CNN: two convolutions (their steps fuse the ReLUs), a pooling,
    a linear layer and a softmax; fixed seed."""
    torch = require("torch")
    nn = torch.nn
    torch.manual_seed(3)

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.c1 = nn.Conv2d(3, 8, 3, padding=1)
            self.c2 = nn.Conv2d(8, 8, 3, padding=1)
            self.fc = nn.Linear(8 * 4 * 4, 10)

        def forward(self, x):
            y = torch.relu(self.c1(x))
            y = torch.nn.functional.max_pool2d(torch.relu(self.c2(y)), 2)
            return torch.softmax(self.fc(y.flatten(1)), -1)

    return Net().eval(), torch.randn(2, 3, 8, 8)


@pytest.fixture(scope="module")
def net(tmp_path_factory):
    """The export, its input and reference, and libraries built plain, with
    --profile, with --values, and with --values and a wrong step."""
    torch = require("torch")
    np = require("numpy")
    d = tmp_path_factory.mktemp("debug")
    m, x = cnn()
    ep = torch.export.export(m, (x,))
    torch.export.save(ep, str(d / "net.pt2"))
    np.save(d / "x.npy", x.numpy())
    with torch.no_grad():
        np.save(d / "y.npy", m(x).numpy())
    libs = {}
    for tag, extra in (("plain", ()), ("profile", ("--profile",)), ("values", ("--values",)),
                       ("wrong", ("--values", *PERTURB, "perturb.node=relu_1"))):
        libs[tag] = compile_model(d / "net.pt2", "openmp", d / tag, "-n", "net", *extra)
    return dict(dir=d, pt2=d / "net.pt2", x=d / "x.npy", y=d / "y.npy", libs=libs, ep=ep)


def reference(net, out):
    """python -m doccc.reference, from the repository's python/ directory."""
    env = dict(os.environ, PYTHONPATH=str(ROOT / "python") + os.pathsep + os.environ.get("PYTHONPATH", ""))
    r = subprocess.run([sys.executable, "-m", "doccc.reference", str(net["pt2"]), "-i", str(net["x"]), "-o", str(out)],
                       capture_output=True, text=True, env=env, timeout=300)
    assert r.returncode == 0, fmt_result(r)
    return out


@pytest.fixture(scope="module")
def ref_dir(net):
    return reference(net, net["dir"] / "ref")


# ---- timing ---------------------------------------------------------------------

def test_repeat_needs_no_outputs_and_prints_units(net):
    r = doccc_cmd("run", net["libs"]["plain"], "-i", net["x"], "--repeat", "20")
    assert r.returncode == 0, fmt_result(r)
    m = re.fullmatch(rf"latency: median ({TIME}), min ({TIME}), p90 ({TIME}) over 20 runs\n", r.stdout)
    assert m, r.stdout
    # a run of this model takes far less than a millisecond: microseconds, not "0.000 ms"
    assert "µs" in m.group(1) and not m.group(1).startswith("0.00"), r.stdout


def test_repeat_json_gives_numbers(net):
    r = doccc_cmd("run", net["libs"]["plain"], "-i", net["x"], "--repeat", "15", "--json")
    assert r.returncode == 0, fmt_result(r)
    rep = json.loads(r.stdout)
    lat = rep["latency_ms"]
    assert lat["runs"] == 15 and 0 < lat["min"] <= lat["median"] <= lat["p90"], lat
    assert rep["outputs"] == [] and rep["pass"] is None


# ---- --profile and --trace --------------------------------------------------------

def test_profile_table(net):
    r = doccc_cmd("run", net["libs"]["profile"], "-i", net["x"], "--repeat", "10", "--profile")
    assert r.returncode == 0, fmt_result(r)
    lines = r.stdout.splitlines()
    head = next(i for i, l in enumerate(lines) if l.startswith("profile: "))
    assert re.match(rf"profile: (\d+) nodes, {TIME} per run in them over 10 runs$", lines[head]), r.stdout
    rows = [re.match(rf"\s*({TIME})\s+([0-9.]+)%\s+([0-9.]*)\s+(\S.*)$", l) for l in lines[head + 2:]]
    assert rows and all(rows), r.stdout
    names = [m.group(4) for m in rows]
    assert any("conv2d" in n for n in names) and any("linear" in n for n in names), names
    assert abs(sum(float(m.group(2)) for m in rows) - 100) < 1, r.stdout
    for m in rows:  # GFLOP/s for the contractions only
        assert bool(m.group(3)) == ("conv2d" in m.group(4) or "linear" in m.group(4)), m.group(0)


def test_profile_json_flops(net):
    r = doccc_cmd("run", net["libs"]["profile"], "-i", net["x"], "--profile", "--json")
    assert r.returncode == 0, fmt_result(r)
    prof = json.loads(r.stdout)["profile"]
    assert prof["runs"] == 1
    ms = [n["ms"] for n in prof["nodes"]]
    assert ms == sorted(ms, reverse=True), "not sorted by time"
    flops = {n["name"].split("+")[0]: n["flops"] for n in prof["nodes"] if n["flops"]}
    # 2 x multiply-adds: batch x out channels x pixels x (in channels x taps); batch x out x in
    assert flops == {"conv2d": 2 * 2 * 8 * 64 * 3 * 9, "conv2d_1": 2 * 2 * 8 * 64 * 8 * 9, "linear": 2 * 2 * 10 * 128}
    for n in prof["nodes"]:
        assert (n["gflops"] is None) == (n["flops"] == 0), n


def test_python_loader_sees_the_nodes(net):
    """The Python loader reads the abi-6 node table, and runs the library too."""
    sys.path.insert(0, str(ROOT / "python"))
    import doccc
    np = require("numpy")
    prof = json.loads(doccc_cmd("run", net["libs"]["profile"], "-i", net["x"], "--profile", "--json").stdout)["profile"]
    with doccc.load(net["libs"]["profile"]) as m:
        by_index = sorted(prof["nodes"], key=lambda n: n["node"])
        assert m.nodes == [(n["name"], float(n["flops"])) for n in by_index]
        np.testing.assert_allclose(m(np.load(net["x"])), np.load(net["y"]), rtol=1e-4, atol=1e-5)
    with doccc.load(net["libs"]["plain"]) as m:
        assert m.nodes == []


def test_trace_is_chrome_trace_events(net, tmp_path):
    trace = tmp_path / "t.json"
    r = doccc_cmd("run", net["libs"]["profile"], "-i", net["x"], "--repeat", "3", "--trace", trace, "-q")
    assert r.returncode == 0, fmt_result(r)
    t = json.loads(trace.read_text())
    ev = t["traceEvents"]
    runs = [e for e in ev if e["cat"] == "run"]
    nodes = [e for e in ev if e["cat"] == "node"]
    assert len(runs) == 3 and all(e["ph"] == "X" and e["dur"] >= 0 for e in ev)
    per_run = len(nodes) // 3
    assert per_run >= 5 and len(nodes) == 3 * per_run
    # each run's nodes lie inside it, in order
    for k, run in enumerate(runs):
        mine = [e for e in nodes if e["args"]["run"] == k + 1]
        assert [e["args"]["node"] for e in mine] == list(range(per_run))
        assert run["ts"] <= mine[0]["ts"] and mine[-1]["ts"] + mine[-1]["dur"] <= run["ts"] + run["dur"] + 1
    assert any("gflops" in e["args"] for e in nodes)


def test_profile_needs_an_instrumented_library(net, tmp_path):
    for flag in (["--profile"], ["--trace", str(tmp_path / "t.json")]):
        r = doccc_cmd("run", net["libs"]["plain"], "-i", net["x"], *flag)
        assert r.returncode == 1 and "built with --profile" in r.stderr, fmt_result(r)
    assert not (tmp_path / "t.json").exists()
    r = doccc_cmd("run", net["libs"]["profile"], "-i", net["x"], "--dump-values", tmp_path / "v")
    assert r.returncode == 1 and "--values" in r.stderr, fmt_result(r)


def test_gpu_targets_refuse_instrumentation(net, tmp_path):
    r = doccc_cmd(net["pt2"], "-t", "cuda", "--simulate", "--profile", "-o", tmp_path)
    assert r.returncode == 2 and "--profile" in r.stderr, fmt_result(r)
    assert not list(tmp_path.iterdir())


# ---- the bisector ---------------------------------------------------------------------

def dump(lib, net, out, *extra):
    r = doccc_cmd("run", lib, "-i", net["x"], "--dump-values", out, "-q", *extra)
    assert r.returncode == 0, fmt_result(r)
    return out


def test_dump_values_are_torchs(net, tmp_path, ref_dir):
    np = require("numpy")
    got = dump(net["libs"]["values"], net, tmp_path / "got")
    index = json.loads((got / "values.json").read_text())
    names = [v["name"] for n in index["nodes"] for v in n["values"]]
    # every fused node's value, named by its torch node: the ReLUs fused into the convolutions included
    assert {"relu", "relu_1", "max_pool2d", "linear", "softmax"} <= set(names), names
    for n in index["nodes"]:
        for v in n["values"]:
            a = np.load(got / v["file"])
            assert list(a.shape) == v["shape"]
            np.testing.assert_allclose(a, np.load(ref_dir / f"{v['name']}.npy"), rtol=1e-4, atol=1e-5, err_msg=v["name"])


def test_compare_clean(net, tmp_path, ref_dir):
    got = dump(net["libs"]["values"], net, tmp_path / "got")
    r = doccc_cmd("compare", got, ref_dir)
    assert r.returncode == 0, fmt_result(r)
    assert "every value compared is within the tolerance" in r.stdout
    rep = json.loads(doccc_cmd("compare", got, ref_dir, "--json").stdout)
    assert rep["pass"] is True and rep["compared"] >= 5 and rep["first_difference"] is None


def test_compare_names_the_wrong_step(net, tmp_path, ref_dir):
    got = dump(net["libs"]["wrong"], net, tmp_path / "got")
    r = doccc_cmd("compare", got, ref_dir)
    assert r.returncode == 1, fmt_result(r)
    m = re.search(r"first difference: node (\d+) '([^']*)', value '([^']*)': max abs err ([0-9.e+-]+)", r.stdout)
    assert m, r.stdout
    assert "relu_1" in m.group(2).split("+") and m.group(3) == "relu_1", r.stdout
    assert math.isclose(float(m.group(4)), 1.0, rel_tol=1e-5), r.stdout
    assert re.search(r"worst \[0, 0, 0, 0\] got [0-9.e+-]+ expected", r.stdout), r.stdout
    assert re.search(r"\d+ later values? differs? too", r.stdout), r.stdout  # it propagates to the output
    rep = json.loads(doccc_cmd("compare", got, ref_dir, "--json").stdout)
    first = rep["first_difference"]
    assert rep["pass"] is False and first["value"] == "relu_1" and first["worst"]["index"] == [0, 0, 0, 0]
    # and the library's output is wrong, which is what sent the user here
    r = doccc_cmd("run", net["libs"]["wrong"], "-i", net["x"], "--expect", net["y"])
    assert r.returncode == 1, fmt_result(r)


def test_debug_values_env_is_values(net, tmp_path, ref_dir):
    lib = compile_model(net["pt2"], "sequential", tmp_path / "lib", "-n", "net", env={"DOCC_DEBUG": "values"})
    got = dump(lib, net, tmp_path / "got")
    assert doccc_cmd("compare", got, ref_dir).returncode == 0


def test_dump_failure_leaves_nothing(net, tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    r = doccc_cmd("run", net["libs"]["values"], "-i", net["x"], "--dump-values", blocker / "sub", "-o", tmp_path / "y.npy")
    assert r.returncode == 1, fmt_result(r)
    assert not (tmp_path / "y.npy").exists()


def test_compare_bad_input(net, tmp_path, ref_dir):
    r = doccc_cmd("compare", tmp_path, ref_dir)
    assert r.returncode == 1 and "values.json" in r.stderr, fmt_result(r)
    (tmp_path / "values.json").write_text('{"doccc_values": 1, "nodes": [{"node": 0, "name": "x", "values": '
                                          '[{"name": "x", "file": "../../etc/passwd"}]}]}')
    r = doccc_cmd("compare", tmp_path, ref_dir)
    assert r.returncode == 1 and "values.json: error: nodes[0].values[0]" in r.stderr, fmt_result(r)
    assert doccc_cmd("compare", tmp_path).returncode == 2


def test_perturb_names_a_node_it_covers(net, tmp_path):
    r = doccc_cmd(net["pt2"], "-t", "none", "-o", tmp_path, *PERTURB, "perturb.node=nosuch")
    assert r.returncode == 1 and "no step covers a torch node called 'nosuch'" in r.stderr, fmt_result(r)
    assert not list(tmp_path.iterdir())
