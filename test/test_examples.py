"""examples/pipeline, as a build pipeline runs it.

docs/pipelines.md (doccc in a build pipeline) points at examples/pipeline/
Makefile; this runs that Makefile (copied into a temporary folder, so two
checkouts of it can be told apart) as a make-based build and a CI job would:
  - `make` exports, compiles with -MD and --emit-pkgconfig through ccache,
    links the program through the .pc file, and passes the CI gate
    (doccc inspect, doccc run --expect);
  - `make -q` says the library is up to date; a changed options.yaml or a
    new doccc makes it out of date, and `make` rebuilds it;
  - a second checkout of the same model artifact, with another DOCC_TMP,
    gets its C compile from ccache;
  - a reference that the library does not match fails `make check`.
"""
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

from conftest import doccc_path, fmt_result, require
from test_gpu import require_cmd
from test_toolchain import ccache_stats

EXAMPLE = Path(__file__).resolve().parent.parent / "examples" / "pipeline"


def make(args, cwd, env, check=True):
    r = subprocess.run(["make", "--no-print-directory", *args], cwd=cwd, env=env, capture_output=True,
                       text=True, timeout=600)
    if check:
        assert r.returncode == 0, fmt_result(r)
    return r


def age(path):
    """Make path two seconds older than now (what it depends on is then newer)."""
    old = path.stat().st_mtime_ns - 2 * 10**9
    os.utime(path, ns=(old, old))


def checkout(tmp_path, name):
    d = tmp_path / name
    shutil.copytree(EXAMPLE, d, ignore=shutil.ignore_patterns("build"))
    return d


def test_pipeline_example(tmp_path):
    require("torch")
    np = require("numpy")
    require_cmd("make")
    require_cmd("ccache")
    require_cmd("pkg-config")
    doccc = tmp_path / "bin" / "doccc"  # a copy, so a "new doccc" can be installed
    doccc.parent.mkdir()
    shutil.copy2(doccc_path(), doccc)
    env = dict(os.environ, CCACHE_DIR=str(tmp_path / "ccache"), CCACHE_CONFIGPATH=str(tmp_path / "ccache.conf"),
               DOCCC=str(doccc), PYTHON=sys.executable)
    env.pop("CCACHE_DISABLE", None)
    env.pop("DOCC_CC", None)
    (tmp_path / "ccache.conf").write_text("")
    subprocess.run(["ccache", "-z"], env=env, check=True, capture_output=True)

    one = checkout(tmp_path, "one")
    env1 = dict(env, DOCC_TMP=str(tmp_path / "t1"))
    r = make([], one, env1)
    assert "class " in r.stdout and "PASS: 0 of 1 output outside" in r.stdout, fmt_result(r)
    assert re.search(r"^  name +tinynet$", r.stdout, re.M) and re.search(r"^  target +openmp$", r.stdout, re.M), \
        fmt_result(r)
    lib = "build/libtinynet.so"
    assert make(["-q", lib], one, env1, check=False).returncode == 0
    st = ccache_stats(env)
    assert st["cache_miss"] == 1 and st["direct_cache_hit"] + st["preprocessed_cache_hit"] == 0, st

    # options.yaml changes: out of date, rebuilt, then up to date again
    opts = one / "options.yaml"
    opts.write_text(opts.read_text() + "approximate_math: false\n")
    age(one / lib)
    t0 = (one / lib).stat().st_mtime_ns
    assert make(["-q", lib], one, env1, check=False).returncode == 1
    r = make([lib], one, env1)
    assert "doccc" in r.stdout and (one / lib).stat().st_mtime_ns > t0, fmt_result(r)
    assert make(["-q", lib], one, env1, check=False).returncode == 0

    # a new doccc: out of date
    os.utime(doccc)
    age(one / lib)
    assert make(["-q", lib], one, env1, check=False).returncode == 1

    # a second checkout, another DOCC_TMP, the same model artifact (a new
    # export would differ: its stack traces name the checkout's path): the
    # C compile comes from ccache
    two = checkout(tmp_path, "two")
    (two / "build").mkdir()
    for f in ("tinynet.pt2", "x.npy", "y_ref.npy"):
        shutil.copy(one / "build" / f, two / "build" / f)
    before = ccache_stats(env)
    r = make([], two, dict(env, DOCC_TMP=str(tmp_path / "t2")))
    after = ccache_stats(env)
    hits = lambda s: s["direct_cache_hit"] + s["preprocessed_cache_hit"]  # noqa: E731
    assert hits(after) == hits(before) + 1 and after["cache_miss"] == before["cache_miss"], (before, after)

    # the gate fails on a reference the library does not match
    ref = two / "build" / "y_ref.npy"
    y = np.load(ref)
    y[0, 0] += 0.01
    np.save(ref, y)
    r = make(["check"], two, env, check=False)
    assert r.returncode != 0 and "FAIL" in r.stdout + r.stderr, fmt_result(r)


def test_llm_example(tmp_path):
    """examples/llm: a decoder with its KV cache exported by transformers'
    own path, compiled, and generating from C: the tokens are eager's, and
    the program reports prefill and decode speed. A tampered reference
    fails `make check`."""
    require("torch")
    require("transformers")
    require_cmd("make")
    d = tmp_path / "llm"
    shutil.copytree(EXAMPLE.parent / "llm", d, ignore=shutil.ignore_patterns("build"))
    env = dict(os.environ, DOCCC=str(doccc_path()), PYTHON=sys.executable)
    r = make(["TOKENS=24", "MAXCACHE=64"], d, env)
    assert "tokens: the same as eager PyTorch's" in r.stdout, fmt_result(r)
    assert re.search(r"prefill: 8 tokens, [0-9.]+ tokens/s; decode: 23 tokens, [0-9.]+ tokens/s", r.stderr), \
        fmt_result(r)
    toks = (d / "build" / "tokens.txt").read_text().split()
    assert len(toks) == 24 and toks == (d / "build" / "tokens_ref.txt").read_text().split()
    ref = d / "build" / "tokens_ref.txt"
    ref.write_text(" ".join(toks[:-1] + [str((int(toks[-1]) + 1) % 256)]) + "\n")
    r = make(["TOKENS=24", "MAXCACHE=64", "check"], d, env, check=False)
    assert r.returncode != 0 and "tokens differ from eager PyTorch's" in r.stdout, fmt_result(r)
