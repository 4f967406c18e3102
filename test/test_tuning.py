"""The tuning database (issue 29): doccc tune measures candidate schedules
of a model's convolutions and GEMMs on this machine and keeps the best in a
SQLite file; a compile given the file (tuning.db, --tuning-db,
remote_tuning with DOCC_TUNING_DB) takes them.

  - doccc tune fills the database, one row per distinct step, with every
    candidate's time; a second run has nothing left to do; the runner path
    (--tune-runner, a stand-in for ssh that runs `sh -s` here) gives the
    same rows; a budget of 0 tunes nothing and says so;
  - every candidate schedule of every step, written into the database by
    hand, builds a library that matches eager (so no schedule the tuner
    may pick is wrong), and changes the generated code;
  - the same database gives the same bytes; the library records how many
    steps were tuned, not the database's path;
  - a step without an entry takes the nearest tuned step's of its kind
    (transfer), which the dump and the note show;
  - a corrupt database is an error; one of a newer doccc, or entries of
    another cost-model version, are ignored with a note;
  - two doccc tune writing one database at once lose nothing;
  - the depfile lists the database.
"""

import os
import sqlite3
import subprocess

import pytest

from conftest import compare, compile_model, doccc_cmd, doccc_path, fmt_result, require, run_lib

TARGET = "sequential"


def export(tmp_path, name, mod, x):
    torch = require("torch")
    ep = torch.export.export(mod.eval(), (x,))
    pt2 = tmp_path / f"{name}.pt2"
    torch.export.save(ep, str(pt2))
    with torch.no_grad():
        return pt2, x.numpy(), mod(x).numpy()


def convnet(tmp_path, name="convnet", c=16, oc=32, hw=16):
    """A 3x3 convolution (Winograd applies), a pointwise one (pixels
    applies), a strided 3x3 and a linear layer: four kinds of step."""
    torch = require("torch")

    class Net(torch.nn.Module):
        def __init__(self):
            super().__init__()
            torch.manual_seed(0)
            self.c1 = torch.nn.Conv2d(c, oc, 3, padding=1)
            self.c2 = torch.nn.Conv2d(oc, oc, 1)
            self.c3 = torch.nn.Conv2d(oc, oc, 3, stride=2, padding=1)
            self.fc = torch.nn.Linear(oc, 10)

        def forward(self, x):
            y = torch.relu(self.c1(x))
            y = torch.relu(self.c2(y)) + y
            y = self.c3(y).mean((2, 3))
            return self.fc(y)

    torch.manual_seed(1)
    return export(tmp_path, name, Net(), torch.randn(2, c, hw, hw))


@pytest.fixture(scope="module")
def net(tmp_path_factory):
    return convnet(tmp_path_factory.mktemp("tuning"))


def tune(pt2, db, *extra, env=None, timeout=900):
    e = {"DOCC_TUNE_MS": "2"}
    e.update(env or {})
    return doccc_cmd("tune", pt2, "-t", TARGET, "-c", "desktop", "--tuning-db", db, *extra, env=e, timeout=timeout)


def rows(db):
    with sqlite3.connect(db) as c:
        return c.execute("select key, kind, target, threads, version, dims, params, ns, rule_ns, trials, text "
                         "from steps order by kind, key").fetchall()


@pytest.fixture(scope="module")
def tuned(net, tmp_path_factory):
    """The model tuned once: (database, the tune's result)."""
    db = tmp_path_factory.mktemp("db") / "tuning.db"
    r = tune(net[0], db)
    assert r.returncode == 0, fmt_result(r)
    return db, r


def test_tune_fills_the_database(net, tuned, tmp_path):
    db, r = tuned
    got = rows(db)
    kinds = sorted(k for _, k, *_ in got)
    assert len(got) == 4, got
    assert any(k.startswith("conv2d k3x3 s1x1") for k in kinds) and any(k.startswith("conv2d k1x1") for k in kinds)
    assert any(k.startswith("conv2d k3x3 s2x2") for k in kinds) and any(k.startswith("gemm") for k in kinds)
    for key, kind, target, threads, version, dims, params, ns, rule_ns, trials, text in got:
        assert target == TARGET and threads == 1 and version >= 1 and len(key) == 64
        assert 0 < ns <= rule_ns, (kind, ns, rule_ns)
        assert trials.startswith("rules: ") and trials.count(";") >= 2, trials
        assert text.startswith(("conv ", "gemm ")), text
    assert "4 tuned now" in r.stderr and "step 'conv2d" in r.stderr, r.stderr
    again = tune(net[0], db)
    assert again.returncode == 0 and "0 tuned now" in again.stderr and "4 already in the database" in again.stderr, \
        fmt_result(again)
    assert rows(db) == got


def test_runner_times_elsewhere(net, tmp_path):
    """A stand-in for ssh: it logs its command line, drops the host and
    runs the rest (sh -s, reading the script on stdin) here."""
    log = tmp_path / "runner.log"
    stand_in = tmp_path / "fake-ssh"
    stand_in.write_text(f"#!/bin/sh\necho \"$@\" >> {log}\nshift\nexec \"$@\"\n")
    stand_in.chmod(0o755)
    db = tmp_path / "remote.db"
    r = tune(net[0], db, "--tune-runner", f"{stand_in} user@board")
    assert r.returncode == 0, fmt_result(r)
    assert log.read_text().splitlines() == ["user@board sh -s"] * 4
    assert len(rows(db)) == 4 and "through" in r.stderr
    bad = tune(net[0], tmp_path / "x.db", "--tune-runner", "false")
    assert bad.returncode == 1 and "the timing harness failed" in bad.stderr, fmt_result(bad)


def test_budget_zero_tunes_nothing(net, tmp_path):
    db = tmp_path / "b.db"
    r = tune(net[0], db, "--tune-budget", "0")
    assert r.returncode == 0 and "0 tuned now" in r.stderr and "4 left by the budget" in r.stderr, fmt_result(r)


def copy_db(src, dst, *sql):
    """dst: a copy of database src with the statements sql run on it."""
    dst.write_bytes(src.read_bytes())
    with sqlite3.connect(dst) as c:
        for q in sql:
            c.execute(q)
    return dst


def put(db, key, params):
    with sqlite3.connect(db) as c:
        n = c.execute("update steps set params = ? where key = ?", (params, key)).rowcount
    assert n == 1


def candidates(tuned):
    """Each step's key and the candidates its trials list."""
    for key, kind, *_, trials, _ in rows(tuned[0]):
        yield key, kind, [t.split(":")[0] for t in trials.split("; ")]


def source(lib):
    return next(lib.parent.glob("*.c")).read_text()


def test_every_candidate_matches_eager(net, tuned, tmp_path):
    """The schedules the tuner tries, each written as a step's entry: the
    library matches eager, and its code differs from the rules'."""
    pt2, x, want = net
    db = copy_db(tuned[0], tmp_path / "t.db")
    for key, _, _ in candidates(tuned):
        put(db, key, "")  # every step: the rules'
    base = compile_model(pt2, TARGET, tmp_path / "rules", "-c", "desktop", "--tuning-db", db, "--emit-source")
    rules = source(base)
    n = 0
    for key, kind, cands in candidates(tuned):
        for i, params in enumerate(cands[1:]):
            put(db, key, params)
            lib = compile_model(pt2, TARGET, tmp_path / f"{key[:8]}_{i}", "-c", "desktop", "--tuning-db", db,
                                "--emit-source")
            compare(run_lib(lib, [x])[0], want, f"{kind}: {params}")
            if "parallel" not in params:  # one thread here: threads or not is the same code
                assert source(lib) != rules, f"{kind}: {params} printed the rules' code"
            n += 1
        put(db, key, "")
    assert n >= 12


def test_same_database_same_bytes(net, tuned, tmp_path):
    pt2 = net[0]
    a = compile_model(pt2, TARGET, tmp_path / "a", "-c", "desktop", "--tuning-db", tuned[0], "--emit-source")
    b = compile_model(pt2, TARGET, tmp_path / "b", "-c", "desktop", "--tuning-db", tuned[0], "--emit-source")
    assert a.read_bytes() == b.read_bytes() and source(a) == source(b)
    assert str(tuned[0]) not in source(a) and "tuned=4+0" in source(a)


def test_transfer_from_the_nearest_step(net, tuned, tmp_path):
    """Another model, same kinds of step at other sizes: no entry of its
    own, each takes the nearest tuned step's schedule; the result is
    still eager's."""
    pt2, x, want = convnet(tmp_path, "other", c=24, oc=40, hw=20)
    db = copy_db(tuned[0], tmp_path / "t.db")
    for key, kind, cands in candidates(tuned):
        put(db, key, cands[1])
    dump = tmp_path / "dump"
    r = doccc_cmd(pt2, "-t", TARGET, "-c", "desktop", "--tuning-db", db, "-o", f"{tmp_path}/o/", "--dump-sdfg", dump)
    assert r.returncode == 0, fmt_result(r)
    assert "0 steps took their own tuned schedule, 4 the nearest tuned step's (transfer), 0 the rules'" in r.stderr
    assert r.stderr.count("transfer") >= 1 and '"tune": "' in (dump / "05-tuned.json").read_text()
    assert " transfer\"" in (dump / "05-tuned.json").read_text()
    compare(run_lib(tmp_path / "o" / "libother.so", [x])[0], want, "transferred")
    r = doccc_cmd(pt2, "-t", TARGET, "-c", "desktop", "--tuning-db", db, "--pass-opt", "tuning.transfer=false",
                  "-o", f"{tmp_path}/p/")
    assert r.returncode == 0 and "0 the nearest tuned step's (transfer), 4 the rules'" in r.stderr, fmt_result(r)


def test_bad_databases(net, tuned, tmp_path):
    pt2 = net[0]
    junk = tmp_path / "junk.db"
    junk.write_bytes(os.urandom(3000))
    r = doccc_cmd(pt2, "-t", TARGET, "--tuning-db", junk, "-o", f"{tmp_path}/j/")
    assert r.returncode == 1 and f"{junk}: error: not a doccc tuning database" in r.stderr, fmt_result(r)
    assert not (tmp_path / "j" / "libconvnet.so").exists()
    r = doccc_cmd(pt2, "-t", TARGET, "--tuning-db", tmp_path / "missing.db", "-o", f"{tmp_path}/m/")
    assert r.returncode == 1 and "missing.db" in r.stderr, fmt_result(r)
    truncated = tmp_path / "trunc.db"
    truncated.write_bytes(tuned[0].read_bytes()[:1500])
    r = doccc_cmd(pt2, "-t", TARGET, "--tuning-db", truncated, "-o", f"{tmp_path}/t/")
    assert r.returncode == 1 and "trunc.db: error:" in r.stderr, fmt_result(r)
    newer = copy_db(tuned[0], tmp_path / "newer.db", "update meta set value = '99' where key = 'format'")
    r = doccc_cmd(pt2, "-t", TARGET, "-c", "desktop", "--tuning-db", newer, "-o", f"{tmp_path}/n/")
    assert r.returncode == 0 and "a tuning database of a newer doccc: not read" in r.stderr, fmt_result(r)
    r = tune(pt2, newer)
    assert r.returncode == 1 and "newer doccc" in r.stderr, fmt_result(r)
    old = copy_db(tuned[0], tmp_path / "old.db", "update steps set version = version + 1000")
    r = doccc_cmd(pt2, "-t", TARGET, "-c", "desktop", "--tuning-db", old, "-o", f"{tmp_path}/o/")
    assert r.returncode == 0 and "4 entries of another doccc version not used" in r.stderr, fmt_result(r)
    assert "0 steps took their own tuned schedule, 0 the nearest tuned step's (transfer), 4 the rules'" in r.stderr
    bad = copy_db(tuned[0], tmp_path / "params.db", "update steps set params = 'tm=999 tn=8'")
    r = doccc_cmd(pt2, "-t", TARGET, "-c", "desktop", "--tuning-db", bad, "-o", f"{tmp_path}/p/")
    assert r.returncode == 0 and "params 'tm=999 tn=8': a value out of its range" in r.stderr, fmt_result(r)


def test_remote_tuning_option(net, tuned, tmp_path):
    pt2 = net[0]
    opts = tmp_path / "o.yaml"
    opts.write_text("remote_tuning: true\n")
    env = {k: v for k, v in os.environ.items() if k != "DOCC_TUNING_DB"}
    r = subprocess.run([str(doccc_path()), pt2, "-t", TARGET, "--options", opts, "-o", f"{tmp_path}/a/"],
                       capture_output=True, text=True, env=env)
    assert r.returncode == 1 and "remote_tuning: error: true, but no tuning database" in r.stderr, r.stderr
    r = doccc_cmd(pt2, "-t", TARGET, "-c", "desktop", "--options", opts, "-o", f"{tmp_path}/b/",
                  env={"DOCC_TUNING_DB": str(tuned[0])})
    assert r.returncode == 0 and "4 steps took their own tuned schedule" in r.stderr, fmt_result(r)


def test_depfile_lists_the_database(net, tuned, tmp_path):
    r = doccc_cmd(net[0], "-t", TARGET, "--tuning-db", tuned[0], "-o", f"{tmp_path}/d/", "-MD")
    assert r.returncode == 0, fmt_result(r)
    assert str(tuned[0]) in (tmp_path / "d" / "libconvnet.d").read_text()


def test_two_tunes_at_once_lose_nothing(tmp_path):
    """Two models tuned into one new database at the same time: every
    step of both is there."""
    torch = require("torch")
    a = export(tmp_path, "lina", torch.nn.Linear(40, 24), torch.randn(8, 40))[0]
    b = export(tmp_path, "linb", torch.nn.Sequential(torch.nn.Linear(56, 32), torch.nn.Linear(32, 16)),
               torch.randn(8, 56))[0]
    db = tmp_path / "shared.db"
    env = dict(os.environ, DOCC_TUNE_MS="2")
    ps = [subprocess.Popen([str(doccc_path()), "tune", m, "-t", TARGET, "--tuning-db", db, "-j", "1"],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env) for m in (a, b)]
    outs = [p.communicate(timeout=600) for p in ps]
    assert all(p.returncode == 0 for p in ps), outs
    assert len(rows(db)) == 3, rows(db)


def test_tune_usage(net, tmp_path):
    r = doccc_cmd("tune", net[0], "-t", TARGET)
    assert r.returncode == 2 and "--tuning-db FILE" in r.stderr
    r = doccc_cmd("tune", net[0], "-t", "none", "--tuning-db", tmp_path / "x.db")
    assert r.returncode == 2 and "not -t none" in r.stderr
    r = doccc_cmd(net[0], "-t", TARGET, "--tune-budget", "3")
    assert r.returncode == 2 and "goes with doccc tune" in r.stderr
    r = doccc_cmd("tune", net[0], "-t", TARGET, "--tuning-db", tmp_path / "x.db", "--threads", "0")
    assert r.returncode == 2 and "--threads takes a positive integer" in r.stderr


def test_openmp_tunes_threads_of_every_step(net, tmp_path):
    """On openmp every step is a step: the others than convolutions and
    GEMMs (here the mean) have one choice, threads, timed both ways; each
    choice written into the database gives eager's result."""
    pt2, x, want = net
    db = tmp_path / "omp.db"
    r = doccc_cmd("tune", pt2, "-t", "openmp", "-c", "desktop", "--tuning-db", db, "--threads", "2",
                  env={"DOCC_TUNE_MS": "2"}, timeout=900)
    assert r.returncode == 0, fmt_result(r)
    got = rows(db)
    other = [row for row in got if not row[1].startswith(("conv", "gemm"))]
    assert other and all(row[3] == 2 for row in got), got
    for key, kind, *_, trials, _ in other:
        assert [t.split(":")[0] for t in trials.split("; ")] == ["rules", "parallel=0", "parallel=1"], trials
        for params in ("parallel=0", "parallel=1"):
            put(db, key, params)
            lib = compile_model(pt2, "openmp", tmp_path / f"{key[:8]}_{params[-1]}", "-c", "desktop",
                                "--tuning-db", db)
            compare(run_lib(lib, [x], "--threads", "2")[0], want, f"{kind}: {params}")
