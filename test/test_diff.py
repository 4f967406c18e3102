"""Differential tests: compiled models against eager PyTorch.

Each case exports a model inside the test run (torch 2.13, see export.py),
compiles it with doccc for a CPU target, runs the library with `doccc run`, and
compares every output with the eager float32 output of model(x) under
no_grad, for a fixed-seed input.

Tolerance: rtol = 1e-4, atol = 1e-5, docc's own tolerance for its PyTorch
tests, applied literally (np.testing.assert_allclose) to every model, ResNet-18
included. The largest absolute difference of every case is printed in a table
at the end of the run, so drift shows before it fails.

Cases (model x IR level x input form x batch x target):
  mlp, small_cnn   the full cross product: {training, core} x {pt2, json+safetensors}
                   x {1, 4} x {none, sequential, openmp}
  resnet18         by default: training IR, pt2, batch 1, every target; core IR,
                   pt2, batch 4, every target; json+safetensors once (core, batch 1,
                   openmp). A ResNet-18 compile takes several seconds, and the
                   whole suite should stay within ~10 minutes on 2 cores.
                   DOCCC_FULL=1 (or pytest --doccc-full) runs the full cross product.

Then properties of the artifacts: header macros agree with the program's
inputs and outputs; --emit-source leaves NAME.c (and only then); two compiles
give byte-identical NAME.c and NAME.h without machine paths; a library built
with --external-weights runs with `doccc run --weights`; the extracted-archive
layout finds its weights beside models/model.json.
"""

import itertools
import re

import pytest

from conftest import (BATCHES, FORMS, IRS, TARGETS, compile_model, doccc_cmd, fmt_result,
                      full_run, header_of, macro_shape, parse_header, require, run_lib)


def diff_cases():
    cases = []
    for model in ("mlp", "small_cnn"):
        cases += [(model,) + c for c in itertools.product(IRS, FORMS, BATCHES, TARGETS)]
    if full_run():
        cases += [("resnet18",) + c for c in itertools.product(IRS, FORMS, BATCHES, TARGETS)]
    else:
        cases += [("resnet18", "training", "pt2", 1, t) for t in TARGETS]
        cases += [("resnet18", "core", "pt2", 4, t) for t in TARGETS]
        cases += [("resnet18", "core", "json", 1, "openmp")]
    return cases


def _case_id(c):
    return f"{c[0]}-{c[1]}-{c[2]}-b{c[3]}-{c[4]}"


@pytest.mark.parametrize("model,ir,form,batch,target",
                         [pytest.param(*c, id=_case_id(c)) for c in diff_cases()])
def test_matches_eager(exports, session_tmp, check_close, model, ir, form, batch, target):
    ex = exports.get(model, ir, batch, form)
    outdir = session_tmp / "diff" / f"{model}_{ir}_{form}_b{batch}_{target}"
    lib = compile_model(ex.path, target, outdir, *ex.weight_args())
    got = run_lib(lib, [ex.x])
    assert len(got) == len(ex.ref), f"{len(got)} outputs, the model has {len(ex.ref)}"
    for k, (g, r) in enumerate(zip(got, ex.ref)):
        check_close(g, r, f"{_case_id((model, ir, form, batch, target))} out{k}")


def test_extracted_archive_finds_weights(exports, session_tmp, check_close):
    """models/model.json of an unzipped .pt2 reads ../data/weights without --weights."""
    ex = exports.get("small_cnn", "training", 1, "pt2")
    model_json = exports.export_mod.extract_pt2(ex.path, session_tmp / "extracted_small_cnn")
    assert model_json.is_file()
    lib = compile_model(model_json, "none", session_tmp / "extracted_small_cnn_out", "-n", "scnn")
    check_close(run_lib(lib, [ex.x])[0], ex.ref[0], "small_cnn extracted archive, none")


# ---- the generated header ---------------------------------------------------------

_DTYPES = {"torch.float32": "DOCCC_F32", "torch.float64": "DOCCC_F64",
           "torch.int64": "DOCCC_I64", "torch.int32": "DOCCC_I32"}


def _value(text):
    """Macro value without wrapping parentheses."""
    text = text.strip()
    while text.startswith("(") and text.endswith(")"):
        text = text[1:-1].strip()
    return text


@pytest.mark.parametrize("model", ["mlp", "small_cnn"])
def test_header_describes_program(exports, session_tmp, model):
    ex = exports.get(model, "training", 4, "pt2")
    name = f"{model}_hdr"
    lib = compile_model(ex.path, "none", session_tmp / f"hdr_{model}", "-n", name)
    hdr = header_of(lib)
    text = hdr.read_text()
    mac = parse_header(hdr)
    up = name.upper()

    assert int(_value(mac[f"{up}_NUM_INPUTS"])) == len(ex.inputs)
    assert int(_value(mac[f"{up}_NUM_OUTPUTS"])) == len(ex.outputs)
    for kind, specs in (("INPUT", ex.inputs), ("OUTPUT", ex.outputs)):
        for k, (tname, dtype, shape) in enumerate(specs):
            p = f"{up}_{kind}{k}_"
            assert _value(mac[p + "NAME"]) == f'"{tname}"', (p + "NAME", mac.get(p + "NAME"))
            assert _value(mac[p + "DTYPE"]) == _DTYPES[str(dtype)], (p + "DTYPE", mac.get(p + "DTYPE"))
            assert int(_value(mac[p + "RANK"])) == len(shape)
            assert macro_shape(mac[p + "SHAPE"]) == shape, (p + "SHAPE", mac[p + "SHAPE"], shape)
            numel = 1
            for d in shape:
                numel *= d
            assert int(_value(mac[p + "NUMEL"]).rstrip("LlUu")) == numel

    # The C API: every exported name starts with the model name.
    for decl in (rf"typedef\s+struct\s+{name}\s+{name}_t\s*;",
                 rf"int\s+{name}_create\s*\(\s*{name}_t\s*\*\*",
                 rf"int\s+{name}_create_from\s*\(",
                 rf"int\s+{name}_run\s*\(\s*{name}_t\s*\*",
                 rf"void\s+{name}_destroy\s*\(",
                 rf"const\s+char\s*\*\s*{name}_strerror\s*\(\s*int",
                 rf"int\s+{name}_set_num_threads\s*\(",
                 rf"size_t\s+{name}_workspace_size\s*\(\s*void\s*\)",
                 rf"extern\s+const\s+doccc_model_desc\s+{name}_desc\s*;",
                 r"#\s*define\s+DOCCC_MODEL_DESC_H",
                 r'extern\s+"C"'):
        assert re.search(decl, text), f"{hdr}: nothing matches /{decl}/"
    # run() takes typed pointers: one const float * per input, then float * per output.
    m = re.search(rf"int\s+{name}_run\s*\(([^)]*)\)", text)
    params = [p.strip() for p in m.group(1).split(",")]
    assert len(params) == 1 + len(ex.inputs) + len(ex.outputs), params
    assert all(re.match(r"const\s+float\s*\*", p) for p in params[1:1 + len(ex.inputs)]), params
    assert all(re.match(r"float\s*\*", p) for p in params[1 + len(ex.inputs):]), params


# ---- artifacts ----------------------------------------------------------------------

def test_emit_source_only_when_asked(exports, session_tmp):
    ex = exports.get("mlp", "training", 1, "pt2")
    plain = session_tmp / "src_plain"
    compile_model(ex.path, "none", plain, "-n", "plain")
    assert not (plain / "plain.c").exists(), "NAME.c written without --emit-source"
    emitted = session_tmp / "src_emit"
    compile_model(ex.path, "none", emitted, "-n", "emitted", "--emit-source")
    src = emitted / "emitted.c"
    assert src.is_file() and src.stat().st_size > 0
    assert sorted(p.name for p in emitted.iterdir()) == ["emitted.c", "emitted.h", "libemitted.so"]
    # NAME.c is valid C on its own (with the header beside it); the
    # embedded weights are a separate object, so it compiles to an object
    import subprocess
    np = require("numpy")
    flags = ["clang", "-std=c11", "-O2", "-fPIC", "-fno-math-errno", "-fwrapv", "-Werror=implicit-function-declaration"]
    r = subprocess.run(flags + ["-c", "-I", str(emitted), "-o", str(session_tmp / "emitted.o"), str(src)],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, f"emitted.c does not compile on its own:\n{r.stderr[-3000:]}"
    # with --external-weights, NAME.c and NAME.weights are the whole
    # library: built from them alone it computes the same outputs
    ext = session_tmp / "src_ext"
    lib = compile_model(ex.path, "none", ext, "-n", "ext", "--emit-source", "--external-weights")
    lib2 = session_tmp / "src_rebuilt" / "libext.so"
    lib2.parent.mkdir(exist_ok=True)
    (lib2.parent / "ext.h").write_bytes((ext / "ext.h").read_bytes())
    r = subprocess.run(flags + ["-shared", "-I", str(ext), "-o", str(lib2), str(ext / "ext.c"), "-lm"],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, f"ext.c does not build a library on its own:\n{r.stderr[-3000:]}"
    ins = [np.asarray(ex.x)]
    a = run_lib(lib, ins, "--weights", ext / "ext.weights")
    b = run_lib(lib2, ins, "--weights", ext / "ext.weights")
    assert len(a) == len(b) and all(np.array_equal(x, y) for x, y in zip(a, b)), \
        "the library built from ext.c computes other outputs"


@pytest.mark.parametrize("target", ["none", "openmp", "cuda-sim"])
def test_deterministic_output(exports, session_tmp, target):
    """Two compiles of the same program: byte-identical NAME.c and NAME.h, with no
    machine paths (neither the input's nor the output's folder) in them."""
    ex = exports.get("small_cnn", "core", 1, "pt2")
    texts = []
    for run in ("a", "b"):
        out = session_tmp / f"det_{target}_{run}"
        compile_model(ex.path, target, out, "-n", "det", "--emit-source")
        src = out / ("det.cu" if target.endswith("-sim") else "det.c")
        texts.append((src.read_bytes(), (out / "det.h").read_bytes()))
    assert texts[0][1] == texts[1][1], "det.h differs between two identical compiles"
    assert texts[0][0] == texts[1][0], "det.c differs between two identical compiles"
    for blob in texts[0]:
        assert str(session_tmp).encode() not in blob, "generated file contains a machine path"
        assert str(ex.path.parent).encode() not in blob, "generated file contains the input's path"


@pytest.mark.parametrize("target", ["sequential", "cuda-sim"])
def test_external_weights(exports, session_tmp, check_close, target):
    """NAME.weights mapped by create(); on a GPU target uploaded from it."""
    ex = exports.get("small_cnn", "training", 4, "pt2")
    out = session_tmp / f"extw_{target}"
    lib = compile_model(ex.path, target, out, "-n", "extw", "--external-weights")
    wfile = out / "extw.weights"
    assert wfile.is_file() and wfile.stat().st_size > 0, "--external-weights wrote no NAME.weights"
    got = run_lib(lib, [ex.x], "--weights", wfile)
    check_close(got[0], ex.ref[0], f"small_cnn external weights, {target}")


def test_external_weights_missing_file(exports, session_tmp):
    """A library without embedded weights, run with a weights path that does not exist."""
    np = exports.np
    ex = exports.get("mlp", "training", 1, "pt2")
    out = session_tmp / "extw_missing"
    lib = compile_model(ex.path, "none", out, "-n", "extwm", "--external-weights")
    x = session_tmp / "extw_missing_x.npy"
    np.save(x, ex.x)
    missing = session_tmp / "no_such.weights"
    r = doccc_cmd("run", lib, "-i", x, "-o", session_tmp / "extw_missing_y.npy", "--weights", missing)
    if r.returncode != 1 or "no_such.weights" not in r.stderr:
        pytest.fail("expected exit 1 naming the missing weights file\n" + fmt_result(r), pytrace=False)
