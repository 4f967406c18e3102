"""CLI tests: messages and exit codes of doccc and `doccc run`.

Exit codes (the CLI contract): 0 ok; 1 bad input, unsupported model or a
run-time failure of `doccc run`; 2 usage error; 3 the external C compiler
failed. After any failure the output folder holds nothing doccc wrote.
Messages put the location first: "FILE: graph.nodes[K] (node 'N'): error: ...",
"FILE:LINE:COL: error: ..." for JSON and YAML.

Tests that need a real model export it with torch inside the run (see
conftest.Exports); the others run on hand-made files.
"""

import os
import re
import stat
from pathlib import Path

import pytest

from conftest import compile_model, doccc_cmd, fmt_result, require


def assert_exit(r, code, *needles, regex=None):
    """Exit status code, each needle in stderr (or stdout), and regex if given."""
    assert r.returncode == code, f"expected exit {code}\n" + fmt_result(r)
    text = r.stderr + r.stdout
    for n in needles:
        assert str(n) in text, f"{n!r} missing from the output\n" + fmt_result(r)
    if regex:
        assert re.search(regex, text), f"/{regex}/ does not match the output\n" + fmt_result(r)


def assert_empty(d):
    d = Path(d)
    left = sorted(p.name for p in d.iterdir()) if d.exists() else []
    assert left == [], f"{d} should be empty after a failure, holds {left}"


@pytest.fixture
def outdir(tmp_path):
    d = tmp_path / "out"
    d.mkdir()
    return d


@pytest.fixture(scope="module")
def mlp(exports):
    return exports.get("mlp", "training", 1, "pt2")


@pytest.fixture(scope="module")
def mlp_json(exports):
    return exports.get("mlp", "training", 1, "json")


# ---- informational flags and usage errors ---------------------------------------------

def test_help(doccc):
    r = doccc_cmd("--help")
    assert_exit(r, 0)
    assert "usage" in r.stdout.lower(), fmt_result(r)
    for flag in ("-t", "-o", "--emit-source", "run"):
        assert flag in r.stdout, f"--help does not mention {flag}\n" + fmt_result(r)


def test_version(doccc):
    r = doccc_cmd("--version")
    assert_exit(r, 0)
    assert "doccc 0.1.0" in r.stdout, fmt_result(r)


@pytest.mark.parametrize("flag,needle", [("--list-passes", "expand"),
                                         ("--list-options", "target"),
                                         ("--list-ops", "conv2d")])
def test_list_flags(doccc, flag, needle):
    r = doccc_cmd(flag)
    assert_exit(r, 0)
    assert needle in r.stdout, f"{flag} does not list {needle!r}\n" + fmt_result(r)
    assert len(r.stdout.splitlines()) >= 3, fmt_result(r)


def test_list_ops_covers_resnet(doccc):
    """Both IR levels of ResNet-18 (torch-export.md 3.4) must be listed as supported."""
    r = doccc_cmd("--list-ops")
    assert_exit(r, 0)
    for op in ("conv2d", "convolution", "batch_norm", "_native_batch_norm_legit_no_training",
               "relu", "relu_", "max_pool2d", "max_pool2d_with_indices", "add_", "add",
               "adaptive_avg_pool2d", "mean", "flatten", "view", "linear", "addmm", "permute"):
        assert re.search(rf"(?<!\w){re.escape(op)}(?!\w)", r.stdout), \
            f"--list-ops does not list {op}"


def test_no_input_is_usage_error(doccc):
    r = doccc_cmd()
    assert_exit(r, 2)
    assert "usage" in (r.stderr + r.stdout).lower(), fmt_result(r)


def test_unknown_flag(doccc, tmp_path):
    r = doccc_cmd("--frobnicate", tmp_path / "m.pt2")
    assert_exit(r, 2, "--frobnicate")


@pytest.mark.parametrize("args,needle", [(["-t", "gpu"], "gpu"),
                                         (["-c", "laptop"], "laptop"),
                                         (["-t"], "-t")])       # -t without a value
def test_bad_option_values(mlp, outdir, args, needle):
    r = doccc_cmd(mlp.path, "-o", f"{outdir}/", *args)
    assert_exit(r, 2, needle)
    assert_empty(outdir)


@pytest.mark.parametrize("target,compiler", [("cuda", "nvcc"), ("rocm", "hipcc")])
def test_gpu_compiler_failure(mlp, outdir, tmp_path, target, compiler):
    """A failing nvcc/hipcc: exit 3, its own messages passed through, nothing left behind."""
    import os
    bindir = tmp_path / "bin"
    bindir.mkdir()
    fake = bindir / compiler
    fake.write_text("#!/bin/sh\necho \"fake-%s: error: no device compiler today\" >&2\nexit 1\n" % compiler)
    fake.chmod(0o755)
    env = {"PATH": f"{bindir}:{os.environ['PATH']}"}
    r = doccc_cmd(mlp.path, "-t", target, "-o", f"{outdir}/", env=env)
    assert_exit(r, 3, f"fake-{compiler}: error: no device compiler today")
    assert f"{compiler} failed" in r.stderr, r.stderr
    assert_empty(outdir)


# ---- bad input files --------------------------------------------------------------

def test_missing_file(doccc, tmp_path, outdir):
    missing = tmp_path / "does_not_exist.pt2"
    r = doccc_cmd(missing, "-o", f"{outdir}/")
    assert_exit(r, 1, "does_not_exist.pt2")
    assert_empty(outdir)


def test_truncated_json(mlp_json, tmp_path, outdir):
    text = Path(mlp_json.path).read_text()
    bad = tmp_path / "trunc.json"
    bad.write_text(text[: len(text) // 2])
    r = doccc_cmd(bad, "--weights", mlp_json.weights, "-o", f"{outdir}/")
    assert_exit(r, 1, regex=r"trunc\.json:\d+:\d+")
    assert_empty(outdir)


def test_json_error_location_line_col(doccc, tmp_path, outdir):
    """A syntax error on line 3, column 14 of a pretty-printed file."""
    bad = tmp_path / "bad.json"
    bad.write_text('{\n  "graph_module": {\n    "graph": ]\n  }\n}\n')
    r = doccc_cmd(bad, "-o", f"{outdir}/")
    assert_exit(r, 1, regex=r"bad\.json:3:\d+:")
    assert_empty(outdir)


def test_pt2_not_a_zip(doccc, tmp_path, outdir):
    bad = tmp_path / "random.pt2"
    bad.write_bytes(bytes(range(256)) * 37)
    r = doccc_cmd(bad, "-o", f"{outdir}/")
    assert_exit(r, 1, "random.pt2", "not a zip archive")
    assert_empty(outdir)


def test_pt2_named_json_read_as_json(doccc, tmp_path, outdir):
    """A .pt2 that is JSON, blanks first, goes to the JSON reader; one that starts with a NUL does not."""
    js = tmp_path / "blanks.pt2"
    js.write_bytes(b'\n  {"x": 1}')
    r = doccc_cmd(js, "-o", f"{outdir}/")
    assert_exit(r, 1, "blanks.pt2", "no 'graph_module'")
    nul = tmp_path / "nul.pt2"
    nul.write_bytes(b"\0{}")
    r = doccc_cmd(nul, "-o", f"{outdir}/")
    assert_exit(r, 1, "nul.pt2", "not a zip archive")
    assert_empty(outdir)


@pytest.mark.parametrize("what", ["directory", "device", "empty.pt2", "empty.json"])
def test_input_not_a_model_file(doccc, tmp_path, outdir, what):
    """What the input is, not 'No such file or directory' for a path that exists."""
    path, needle = {"directory": (tmp_path, "it is a directory"), "device": ("/dev/null", "not a regular file"),
                    "empty.pt2": (tmp_path / "empty.pt2", "the file is empty"),
                    "empty.json": (tmp_path / "empty.json", "the file is empty")}[what]
    if what.startswith("empty"):
        path.write_bytes(b"")
    r = doccc_cmd(path, "-o", f"{outdir}/")
    assert_exit(r, 1, f"{path}: error: cannot read: {needle}" if what in ("directory", "device") else needle)
    assert "No such file" not in r.stderr, r.stderr
    assert_empty(outdir)


def test_pt2_schema_major_7(mlp, exports, tmp_path, outdir):
    def bump(d):
        d["schema_version"]["major"] = 7
        return d

    old = exports.export_mod.rewrite_pt2(mlp.path, tmp_path / "old_schema.pt2", bump)
    r = doccc_cmd(old, "-o", f"{outdir}/")
    assert_exit(r, 1, "old_schema.pt2")
    assert re.search(r"schema", r.stderr, re.I) and "7" in r.stderr, fmt_result(r)
    assert_empty(outdir)


def test_rewritten_pt2_still_compiles(mlp, exports, tmp_path, outdir):
    """Control for the test above: the unchanged copy made the same way compiles."""
    same = exports.export_mod.rewrite_pt2(mlp.path, tmp_path / "same.pt2", lambda d: d)
    compile_model(same, "none", outdir)


def test_json_missing_weights(mlp_json, tmp_path, outdir):
    """Bare JSON outside an archive, without --weights: exit 1 naming a tensor."""
    lone = tmp_path / "lone.json"
    lone.write_bytes(Path(mlp_json.path).read_bytes())
    r = doccc_cmd(lone, "-o", f"{outdir}/")
    assert_exit(r, 1)
    fqns = ("fc1.weight", "fc1.bias", "fc2.weight", "fc2.bias", "fc3.weight", "fc3.bias")
    assert any(f in r.stderr for f in fqns), "no missing tensor named\n" + fmt_result(r)
    assert_empty(outdir)


def test_safetensors_missing_one_tensor(mlp_json, exports, tmp_path, outdir):
    st = exports.export_mod.read_safetensors(mlp_json.weights)
    torch = exports.torch
    del st["fc2.bias"]
    partial = exports.export_mod.write_safetensors(
        {k: torch.from_numpy(v.copy()) for k, v in st.items()}, tmp_path / "partial.safetensors")
    r = doccc_cmd(mlp_json.path, "--weights", partial, "-o", f"{outdir}/")
    assert_exit(r, 1, "fc2.bias")
    assert_empty(outdir)


# ---- unsupported models ---------------------------------------------------------------

def _export_module(exports, module, x, path, ir="training", train=False):
    ep, _ = exports.export_mod.export(module, (x,), path, ir=ir, train=train)
    return ep


@pytest.mark.parametrize("ir", ["training", "core"])
def test_all_unsupported_ops_listed(exports, tmp_path, outdir, ir):
    torch = exports.torch
    torch.manual_seed(0)
    path = tmp_path / "unsup.pt2"
    ep = _export_module(exports, exports.models.UnsupportedOps().eval(), torch.randn(2, 4), path, ir)
    bad = [n for n in ep.graph.nodes if n.op == "call_function" and "linalg" in str(n.target)]
    assert len(bad) == 2, [str(n.target) for n in bad]
    r = doccc_cmd(path, "-o", f"{outdir}/")
    assert_exit(r, 1, "unsup.pt2")
    for n in bad:
        op = str(n.target)                       # aten.linalg_det.default
        assert op in r.stderr, f"unsupported op {op} not named\n" + fmt_result(r)
        assert f"'{n.name}'" in r.stderr, f"node {n.name!r} not named\n" + fmt_result(r)
    # ... with the first line of each node's stack trace (where in the model it came from)
    assert "models.py" in r.stderr, "no stack_trace line for the unsupported nodes\n" + fmt_result(r)
    assert re.search(r"unsup\.pt2: graph\.nodes\[\d+\] \(node '[^']+'\): error: unsupported operator",
                     r.stderr), fmt_result(r)
    assert_empty(outdir)


def test_complex_dtype_rejected(exports, tmp_path, outdir):
    torch = exports.torch
    path = tmp_path / "cplx.pt2"
    _export_module(exports, exports.models.ComplexFFT().eval(), torch.randn(2, 8), path)
    r = doccc_cmd(path, "-o", f"{outdir}/")
    assert_exit(r, 1, "cplx.pt2")
    assert re.search(r"complex", r.stderr, re.I), "the complex dtype is not named\n" + fmt_result(r)
    assert_empty(outdir)


@pytest.mark.parametrize("ir", ["training", "core"])
def test_train_mode_batchnorm_rejected(exports, tmp_path, outdir, ir):
    torch = exports.torch
    torch.manual_seed(0)
    path = tmp_path / "trainbn.pt2"
    ep = _export_module(exports, exports.models.TrainBN(), torch.randn(2, 3, 8, 8), path, ir, train=True)
    assert any("batch_norm" in str(n.target) for n in ep.graph.nodes)
    r = doccc_cmd(path, "-o", f"{outdir}/")
    assert_exit(r, 1, "doccc compiles inference only", "trainbn.pt2")
    assert_empty(outdir)


def test_joint_loss_graph_rejected(exports, tmp_path, outdir):
    """A joint forward-backward program: LOSS_OUTPUT and GRADIENT_TO_PARAMETER outputs."""
    torch = exports.torch
    from torch.export.experimental import _export_forward_backward
    torch.manual_seed(0)
    ep = torch.export.export(exports.models.LossModel(), (torch.randn(2, 4),))
    joint = _export_forward_backward(ep, 0)
    kinds = {s.kind.name for s in joint.graph_signature.output_specs}
    assert {"LOSS_OUTPUT", "GRADIENT_TO_PARAMETER"} <= kinds, kinds
    path = tmp_path / "joint.pt2"
    torch.export.save(joint, str(path))
    r = doccc_cmd(path, "-o", f"{outdir}/")
    assert_exit(r, 1, "doccc compiles inference only")
    assert_empty(outdir)


# ---- options files ----------------------------------------------------------------------

def test_yaml_unknown_key_warns(mlp, tmp_path, outdir):
    opts = tmp_path / "opts.yaml"
    opts.write_text("target: none\nbogus_key: 3\ncategory: edge\n")
    r = doccc_cmd(mlp.path, "--options", opts, "-o", f"{outdir}/")
    assert_exit(r, 0, "opts.yaml:2:1: warning: unknown option 'bogus_key' ignored")
    assert (outdir / "libmlp_training_b1.so").is_file()


@pytest.mark.parametrize("text,line", [("# options\ntarget: 5\n", 2),
                                       ("target: none\napproximate_math: maybe\n", 2),
                                       ("category: huge\n", 1)])
def test_yaml_wrong_type(mlp, tmp_path, outdir, text, line):
    opts = tmp_path / "bad.yaml"
    opts.write_text(text)
    r = doccc_cmd(mlp.path, "--options", opts, "-o", f"{outdir}/")
    assert_exit(r, 1, regex=rf"bad\.yaml:{line}:\d+: error")
    assert_empty(outdir)


# A pass option's value outside the range --list-passes gives is an error
# located at the value (the YAML file's line and column), not a register
# tile of a trillion rows or a 4 TB weight layout later on.
@pytest.mark.parametrize("text,needle", [
    ("pass_options:\n  expand: {tile_m: -3}\n", "bad.yaml:2:20: error: pass option 'expand.tile_m' must be from 0 to 64 (got -3)"),
    ("pass_options:\n  expand.tile_n: 2147483647\n",
     "bad.yaml:2:18: error: pass option 'expand.tile_n' must be from 0 to 256 (got 2147483647)"),
    ("pass_options: {expand: {attention_scores_mb: 99999999999999999999}}\n",
     "pass option 'expand.attention_scores_mb' must be an int (got '99999999999999999999')"),
    ("pass_options: {schedule: {min_parallel_work: -1}}\n", "'schedule.min_parallel_work' must be from 0 to"),
], ids=["negative", "huge", "past-64-bits", "negative-work"])
def test_yaml_pass_option_out_of_range(mlp, tmp_path, outdir, text, needle):
    opts = tmp_path / "bad.yaml"
    opts.write_text(text)
    r = doccc_cmd(mlp.path, "--options", opts, "-t", "sequential", "-o", f"{outdir}/")
    assert_exit(r, 1, needle)
    assert_empty(outdir)


def test_pass_opt_flag_out_of_range(mlp, outdir):
    r = doccc_cmd(mlp.path, "--pass-opt", "expand.tile_m=65", "-o", f"{outdir}/")
    assert_exit(r, 2, "command line: error: pass option 'expand.tile_m' must be from 0 to 64 (got 65)")
    assert_empty(outdir)
    r = doccc_cmd("--list-passes")
    assert_exit(r, 0, "expand.tile_m  int 0 to 64, default 0:")


def test_yaml_malformed(mlp, tmp_path, outdir):
    opts = tmp_path / "broken.yaml"
    opts.write_text("target: [none\ncategory: edge\n")
    r = doccc_cmd(mlp.path, "--options", opts, "-o", f"{outdir}/")
    assert_exit(r, 1, regex=r"broken\.yaml:\d+:\d+")
    assert_empty(outdir)


def test_yaml_missing_file(mlp, tmp_path, outdir):
    r = doccc_cmd(mlp.path, "--options", tmp_path / "nope.yaml", "-o", f"{outdir}/")
    assert r.returncode in (1, 2), fmt_result(r)
    assert "nope.yaml" in r.stderr, fmt_result(r)
    assert_empty(outdir)


def test_cli_flag_overrides_yaml(mlp, tmp_path, outdir):
    """CLI flags win over the YAML file: the file asks for cuda, -t none compiles."""
    opts = tmp_path / "gpu.yaml"
    opts.write_text("target: cuda\n")
    r = doccc_cmd(mlp.path, "--options", opts, "-t", "none", "-o", f"{outdir}/")
    assert_exit(r, 0)


# ---- the external compiler -----------------------------------------------------------

def test_failing_c_compiler_exit_3(mlp, tmp_path, outdir):
    fake = tmp_path / "fakebin"
    fake.mkdir()
    for tool in ("clang", "cc"):
        script = fake / tool
        script.write_text("#!/bin/sh\necho 'fake clang failure' >&2\nexit 1\n")
        script.chmod(script.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    env = {"PATH": f"{fake}{os.pathsep}{os.environ.get('PATH', '')}", "CC": "clang"}
    r = doccc_cmd(mlp.path, "-t", "none", "-n", "ccfail", "-o", f"{outdir}/", env=env)
    assert_exit(r, 3, "fake clang failure")
    assert not (outdir / "libccfail.so").exists() and not (outdir / "ccfail.h").exists()
    assert_empty(outdir)


# ---- where outputs go -------------------------------------------------------------------

def test_output_dir_created(mlp, tmp_path):
    fresh = tmp_path / "fresh"
    r = doccc_cmd(mlp.path, "-n", "m", "-o", f"{fresh}/")
    assert_exit(r, 0)
    assert sorted(p.name for p in fresh.iterdir()) == ["libm.so", "m.h"]


def test_output_so_path(mlp, tmp_path):
    r = doccc_cmd(mlp.path, "-n", "m", "-o", tmp_path / "custom.so")
    assert_exit(r, 0)
    assert (tmp_path / "custom.so").is_file() and (tmp_path / "m.h").is_file(), \
        sorted(p.name for p in tmp_path.iterdir())


def test_default_output_cwd_and_name(mlp, tmp_path):
    """No -o: the current folder; NAME from the file name, made a C identifier."""
    src = tmp_path / "my-model.v2.pt2"
    src.write_bytes(Path(mlp.path).read_bytes())
    work = tmp_path / "cwd"
    work.mkdir()
    r = doccc_cmd(src, cwd=work)
    assert_exit(r, 0)
    assert sorted(p.name for p in work.iterdir()) == ["libmy_model_v2.so", "my_model_v2.h"]


def test_verbose_echoes_commands(mlp, outdir):
    r = doccc_cmd(mlp.path, "-v", "-n", "verb", "-o", f"{outdir}/")
    assert_exit(r, 0)
    assert "clang" in r.stderr, "-v does not echo the compiler command\n" + fmt_result(r)


def test_dump_sdfg(mlp, tmp_path, outdir):
    dump = tmp_path / "dump"
    r = doccc_cmd(mlp.path, "--dump-sdfg", dump, "-o", f"{outdir}/")
    assert_exit(r, 0)
    assert dump.is_dir() and any(dump.iterdir()), "--dump-sdfg wrote nothing"


# ---- doccc opt ------------------------------------------------------------------------

@pytest.fixture(scope="module")
def mlp_dump(mlp, tmp_path_factory):
    """The MLP's stages (openmp), as --dump-sdfg writes them."""
    tmp = tmp_path_factory.mktemp("optdump")
    r = doccc_cmd(mlp.path, "-t", "openmp", "--dump-sdfg", tmp / "dump", "-o", f"{tmp}/out/")
    assert_exit(r, 0)
    return tmp / "dump"


def test_opt_round_trip_and_one_pass(mlp_dump, tmp_path):
    """Without --pass, the input's bytes (to stdout); with one, the compile's next stage (to -o)."""
    folded = mlp_dump / "02-folded.json"
    r = doccc_cmd("opt", folded)
    assert_exit(r, 0)
    assert r.stdout == folded.read_text(), "doccc opt without --pass changed the SDFG"
    out = tmp_path / "expanded.json"
    r = doccc_cmd("opt", folded, "-t", "openmp", "--pass", "expand", "-o", out)
    assert_exit(r, 0)
    assert r.stdout == "" and out.read_text() == (mlp_dump / "06-expanded.json").read_text()
    # two passes in a row, the second with an option: the same as the compile's
    r = doccc_cmd("opt", mlp_dump / "06-expanded.json", "-t", "openmp", "--pass", "map_fusion", "--pass",
                  "dce_late", "-o", out)
    assert_exit(r, 0)
    assert out.read_text() == (mlp_dump / "08-cleaned.json").read_text()


@pytest.mark.parametrize("args,needle", [
    ([], "doccc: error: no input file"),
    (["a.json", "b.json"], "more than one input file ('b.json')"),
    (["x.json", "--pass"], "option '--pass' needs a value"),
    (["x.json", "--pass", "fusion"], "unknown pass 'fusion' (see doccc --list-passes)"),
    (["x.json", "-t", "gpu"], "unknown target 'gpu'"),
    (["x.json", "--pass-opt", "expand.tile_m"], "--pass-opt takes PASS.OPTION=VALUE"),
    (["x.json", "--pass-opt", "expand.tile_m=-3"], "must be from 0 to 64"),
    (["x.json", "--bogus"], "unknown option '--bogus'"),
    (["x.json", "-o"], "option '-o' needs a value"),
])
def test_opt_usage_errors(doccc, args, needle):
    r = doccc_cmd("opt", *args)
    assert_exit(r, 2, needle)
    if "unknown option" in needle or "no input" in needle:
        assert "usage: doccc opt SDFG.json" in r.stderr


def test_opt_help(doccc):
    r = doccc_cmd("opt", "--help")
    assert_exit(r, 0, "--pass NAME", "Exit status")
    assert "doccc opt SDFG.json [--pass NAME]" in doccc_cmd("--help").stdout


@pytest.mark.parametrize("stage,old,new,needle", [
    ("02-folded", None, None, "x.json:"),  # the file cut in half: malformed JSON, its line and column
    ("02-folded", '"sdfg_format": 1,', "", "x.json: error: not an SDFG dump of doccc"),
    ("02-folded", '"sdfg_format": 1', '"sdfg_format": 9', "x.json: error: sdfg_format: this doccc reads version 1"),
    ("02-folded", '"name": "x"', '"name": "x y"', "x.json: containers[6]: error: name 'x y' is not a C identifier"),
    ("02-folded", '"op": "gemm"', '"op": "gemmm"', "x.json: root.children[0].library.op: error: expected one of"),
    ("06-expanded", '"subset": ["m + x_2", "k"]', '"subset": ["m + x_2"]',
     "subset: error: expected an array of 2 expressions"),
    ("06-expanded", '"subset": ["m + x_2", "k"]', '"subset": ["m + x_2", "k + q"]', "error: unknown symbol 'q' in 'k + q'"),
])
def test_opt_bad_input(mlp_dump, tmp_path, stage, old, new, needle):
    """A damaged SDFG: exit 1, the problem at its place in the file, nothing written."""
    text = (mlp_dump / f"{stage}.json").read_text()
    assert old is None or old in text, f"{old!r} is not in {stage}.json"
    bad = tmp_path / "x.json"
    bad.write_text(text[:len(text) // 2] if old is None else text.replace(old, new, 1))
    out = tmp_path / "out.json"
    r = doccc_cmd("opt", bad, "--pass", "dce", "-o", out)
    assert_exit(r, 1, needle)
    assert not out.exists(), "a failed doccc opt wrote its output"


def test_opt_missing_file(doccc, tmp_path):
    r = doccc_cmd("opt", tmp_path / "none.json")
    assert_exit(r, 1, "none.json: error: cannot read")
    r = doccc_cmd("opt", tmp_path)
    assert_exit(r, 1, "error: cannot read: it is a directory")


def test_opt_pass_needs_bytes_not_dumped(exports, tmp_path):
    """fold_constants reads the batch norm statistics while it runs; the dump
    holds the bytes of constants of at most 1 KiB only: 260 channels' do not
    fit, and the pass fails naming the constant (the compile folds them)."""
    torch = require("torch")
    m = torch.nn.Sequential(torch.nn.Conv2d(1, 260, 1), torch.nn.BatchNorm2d(260))
    src = tmp_path / "bn.pt2"
    _export_module(exports, m, torch.randn(1, 1, 2, 2), src)
    r = doccc_cmd(src, "--dump-sdfg", tmp_path / "dump", "-o", f"{tmp_path}/out/")
    assert_exit(r, 0)
    r = doccc_cmd("opt", tmp_path / "dump" / "01-dce.json", "--pass", "fold_constants", "-o", tmp_path / "f.json")
    assert_exit(r, 1, "01-dce.json: error: the bytes of constant", "are not in the SDFG dump")
    assert not (tmp_path / "f.json").exists()


# ---- doccc run ------------------------------------------------------------------------

@pytest.fixture(scope="module")
def mlp_lib(mlp, tmp_path_factory):
    return compile_model(mlp.path, "none", tmp_path_factory.mktemp("runlib"), "-n", "runmlp")


def test_run_wrong_shape(mlp_lib, tmp_path):
    np = require("numpy")
    x = tmp_path / "x.npy"
    np.save(x, np.zeros((2, 64), np.float32))
    r = doccc_cmd("run", mlp_lib, "-i", x, "-o", tmp_path / "y.npy")
    assert_exit(r, 1)
    assert re.search(r"1\s*[,x×]\s*64", r.stderr), "expected shape not named\n" + fmt_result(r)
    assert re.search(r"2\s*[,x×]\s*64", r.stderr), "given shape not named\n" + fmt_result(r)
    assert not (tmp_path / "y.npy").exists()


def test_run_wrong_dtype(mlp_lib, tmp_path):
    np = require("numpy")
    x = tmp_path / "x.npy"
    np.save(x, np.zeros((1, 64), np.float64))
    r = doccc_cmd("run", mlp_lib, "-i", x, "-o", tmp_path / "y.npy")
    assert_exit(r, 1)
    assert re.search(r"f(loat)?64|<f8|double", r.stderr, re.I), fmt_result(r)


def test_run_missing_input_file(mlp_lib, tmp_path):
    r = doccc_cmd("run", mlp_lib, "-i", tmp_path / "nothere.npy", "-o", tmp_path / "y.npy")
    assert_exit(r, 1, "nothere.npy")


def test_run_not_a_library(doccc, tmp_path):
    np = require("numpy")
    bogus = tmp_path / "libbogus.so"
    bogus.write_bytes(b"not an ELF file")
    x = tmp_path / "x.npy"
    np.save(x, np.zeros((1, 64), np.float32))
    r = doccc_cmd("run", bogus, "-i", x, "-o", tmp_path / "y.npy")
    assert_exit(r, 1, "libbogus.so")


def test_run_repeat_prints_latency(mlp, mlp_lib, tmp_path):
    np = require("numpy")
    x = tmp_path / "x.npy"
    np.save(x, mlp.x)
    r = doccc_cmd("run", mlp_lib, "-i", x, "-o", tmp_path / "y.npy", "--repeat", "5", "--warmup", "1")
    assert_exit(r, 0)
    assert re.search(r"latency: median [0-9.]+ (ns|µs|ms|s), min [0-9.]+ (ns|µs|ms|s), p90 [0-9.]+ (ns|µs|ms|s) "
                     r"over 5 runs", r.stdout + r.stderr), \
        fmt_result(r)
    np.testing.assert_allclose(np.load(tmp_path / "y.npy"), mlp.ref[0], rtol=1e-4, atol=1e-5)


def test_run_usage_errors(mlp_lib, tmp_path):
    r = doccc_cmd("run")
    assert_exit(r, 2)
    np = require("numpy")
    x = tmp_path / "x.npy"
    np.save(x, np.zeros((1, 64), np.float32))
    r = doccc_cmd("run", mlp_lib, "-i", x, "-o", tmp_path / "y.npy", "--repeat", "many")
    assert_exit(r, 2, "many")
    assert not (tmp_path / "y.npy").exists()


def test_report_json(tmp_path, exports):
    """--report writes the op census, fused nodes, sizes and phase times."""
    import json
    ex = exports.get("small_cnn", "training", 1, "pt2")
    rep = tmp_path / "report.json"
    r = doccc_cmd(ex.path, "-t", "sequential", "-o", f"{tmp_path}/", "-n", "rep", "--report", rep)
    assert r.returncode == 0, fmt_result(r)
    data = json.loads(rep.read_text())
    assert data["name"] == "rep" and data["target"] == "sequential"
    assert data["aten_ops"].get("aten.conv2d.default", 0) >= 1, data["aten_ops"]
    assert data["weights_bytes"] > 0 and data["time_ms"]["build"] > 0
    assert data["peak_rss_bytes"] > data["weights_bytes"], "doccc holds at least the weights"
    assert "expand" in data["time_ms"]["per_pass"]
    assert any("+" in n for n in data["fused_nodes"]), data["fused_nodes"]
    assert data["device_resident"] is False and data["device_backend"] is None
    assert data["sdfg"]["name"] == "rep" and data["sdfg"]["containers"], "the final stage's SDFG"


@pytest.mark.parametrize("target", ["openmp", "cuda-sim"])
def test_fusion_through_identity_views(target, tmp_path):
    """A consumer that reads its producer through a view of the same layout
    (dropout and clone in eval mode) fuses into it: linear -> dropout -> add
    of the residual is one node, on the CPU and the GPU, and matches eager."""
    import json
    torch = require("torch")
    from conftest import compare, run_lib, target_args

    class Block(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = torch.nn.Linear(48, 48)
            self.drop = torch.nn.Dropout(0.1)

        def forward(self, x):
            return self.drop(self.fc(x)) + x, self.fc(x).clone() * 2

    torch.manual_seed(0)
    m = Block().eval()
    x = torch.randn(20, 48)
    pt2 = tmp_path / "blk.pt2"
    with torch.no_grad():
        torch.export.save(torch.export.export(m, (x,)), str(pt2))
        want = m(x)
    rep = tmp_path / "r.json"
    r = doccc_cmd(pt2, *target_args(target), "-o", f"{tmp_path}/", "-n", "blk", "--report", rep)
    assert r.returncode == 0, fmt_result(r)
    fused = json.loads(rep.read_text())["fused_nodes"]
    assert len(fused) == 2 and all("linear" in n and "+" in n for n in fused), fused
    for j, (g, w) in enumerate(zip(run_lib(tmp_path / "libblk.so", [x.numpy()]), want)):
        compare(g, w.numpy(), f"identity view {target} out{j}")


def test_report_json_gpu(tmp_path, exports):
    """docc's on_compile fields for a GPU target: device_resident, device_backend,
    the architecture and the scheduled SDFG with its GPU schedules."""
    import json
    ex = exports.get("small_cnn", "training", 1, "pt2")
    rep = tmp_path / "report.json"
    r = doccc_cmd(ex.path, "-t", "cuda", "--simulate", "-o", f"{tmp_path}/", "-n", "rep", "--report", rep)
    assert r.returncode == 0, fmt_result(r)
    data = json.loads(rep.read_text())
    assert data["target"] == "cuda" and data["category"] == "server" and data["march"] == "sm_90"
    assert data["device_resident"] is True and data["device_backend"] == "cuda" and data["simulated"] is True
    assert data["host_fallback"] is False
    assert "gpu_thread" in json.dumps(data["sdfg"]), "no map scheduled onto GPU threads"


@pytest.mark.parametrize("form", ["pt2", "extracted"])
def test_weights_viewing_one_storage(form, tmp_path):
    """Two buffers that are views of one storage (a slice, and a transposed
    slice at an offset): torch.export.save writes the storage once, and
    each weight is read as its own part of it (a ranged read of the entry or
    the data file), in the archive and in an extracted archive."""
    import zipfile
    torch = require("torch")
    from conftest import compare, run_lib

    class Views(torch.nn.Module):
        def __init__(self):
            super().__init__()
            big = torch.randn(16, 24)
            self.register_buffer("a", big[:, :8])
            self.register_buffer("b", big[:, 8:].t())

        def forward(self, x):
            return x @ self.a + x @ self.b.t()[:, :8]

    torch.manual_seed(0)
    m = Views().eval()
    x = torch.randn(3, 16)
    pt2 = tmp_path / "views.pt2"
    with torch.no_grad():
        torch.export.save(torch.export.export(m, (x,)), str(pt2))
        want = m(x)
    names = zipfile.ZipFile(pt2).namelist()
    assert sum("/data/weights/weight_" in n for n in names) == 1, names  # one storage for both
    src = pt2
    if form == "extracted":
        zipfile.ZipFile(pt2).extractall(tmp_path / "x")
        src = tmp_path / "x" / "views" / "models" / "model.json"
    r = doccc_cmd(src, "-o", f"{tmp_path}/out/", "-n", "views")
    assert r.returncode == 0, fmt_result(r)
    (got,) = run_lib(tmp_path / "out" / "libviews.so", [x.numpy()])
    compare(got, want.numpy(), f"weights viewing one storage, {form}")
