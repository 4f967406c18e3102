"""A model file cannot inject code into the library doccc builds from it.

Strings from the input reach generated C, the header, JSON and DOT dumps and
terminal messages: node and tensor names, stack traces, nn_module_stack
paths, graph metadata, assertion messages, custom op names. Each test here
takes a real small export, plants one payload in all of those places at
once (rewriting models/model.json inside the .pt2, the other entries kept)
and checks, for every CPU target and -t cuda --simulate:

  - the library is built (or the model rejected with a located message,
    exit 1, and nothing written), with the compiler's and the run's working
    directory a fresh temporary one;
  - it runs with `doccc run` and gives exactly the unmodified model's outputs;
  - no PWNED file appears (the payloads that call system() touch one);
  - in the kept generated sources (--keep-temps) no payload survives outside
    a comment or a string literal, read by a small C lexer with the phases
    that matter here (trigraphs, line splices), and the header's NAME macros
    decode back to the planted names;
  - the stage dumps are valid JSON and DOT without raw control characters,
    and nothing doccc prints carries a control character but newlines.

-n NAME is checked too: anything but a C identifier of at most 64 characters
that is no keyword is a usage error (exit 2).
"""

import json
import os
import re
import subprocess
from pathlib import Path

import pytest

from conftest import TARGETS, doccc_path, fmt_result, require, target_args

PWNED = 'conv2d */ { extern int system(const char *); static int once; if (!once++) system("touch PWNED"); } /*'

# name -> the planted text; "@BAD@" stands for bytes that are not UTF-8.
PAYLOADS = {
    "pwned": PWNED,
    "close": "a*/b */ int dc_x = 1; /*",
    "open": "a/*b /* c",
    "newline": "x\n#include \"/etc/passwd\"\n",
    "splice": "y\\\n#pragma GCC poison float",
    "quotes": "q\"u'o\"te\\\" \\' \"); system(\"touch PWNED\"); (\"",
    "include": "#include \"/etc/passwd\"",
    "pragma": "#pragma GCC error \"pwned\"",
    "trigraph": "t??/\nsystem(\"touch PWNED\"); ??= ??( ??' ??< ??! ??> ??- ???/",
    "nonutf8": "bad@BAD@ */ system(\"touch PWNED\"); /*",
    "control": "esc\u001b[2J\u001b]0;title\u0007 \u202erev\u202c \u0085 %s%n%x",
}
BAD_BYTES = b"\xff\xfe\xc3\x28\xed\xa0\x80"

# What none of the generated code may contain outside comments and strings.
CODE_MARKERS = (r"\bsystem\b", "PWNED", "passwd", "poison", "GCC error", r"\bdc_x\b", r"once\+\+")


class M:
    """conv2d (a step's comment names its node), index_select with an index
    input (the 'index out of range' check names the node), an integer floor
    division (the zero-divisor check names it) and _assert_async with a
    message (a string literal of the library)."""

    @staticmethod
    def make(torch):
        class Net(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.conv = torch.nn.Conv2d(2, 3, 3, padding=1)

            def forward(self, x, i):
                torch._assert_async((i < 48).all(), "index i must be below 48")
                y = self.conv(x).flatten(1)
                return torch.index_select(y, 1, i), torch.div(i * 7, i + 1, rounding_mode="floor")

        torch.manual_seed(0)
        return Net().eval()


def _walk_rename(obj, old, new):
    """obj with every string equal to old, value or key, replaced by new."""
    if isinstance(obj, dict):
        return {(new if k == old else k): _walk_rename(v, old, new) for k, v in obj.items()}
    if isinstance(obj, list):
        return [_walk_rename(v, old, new) for v in obj]
    return new if obj == old else obj


def _plant(model, payload):
    """The model.json dict with payload in names, traces, module paths, metadata
    and the assertion message; returns the JSON bytes."""
    gm = model["graph_module"]
    g = gm["graph"]
    sig = gm["signature"]
    user_in = [s["user_input"]["arg"]["as_tensor"]["name"] for s in sig["input_specs"] if "user_input" in s]
    params = [s["parameter"]["arg"]["name"] for s in sig["input_specs"] if "parameter" in s]
    user_out = [s["user_output"]["arg"]["as_tensor"]["name"] for s in sig["output_specs"] if "user_output" in s]
    conv = next(n for n in g["nodes"] if "conv" in n["target"])["outputs"][0]["as_tensor"]["name"]
    # distinct prefixes: a NUL in the payload truncates the name there
    renames = {conv: payload}
    for k, nm in enumerate(user_in):
        renames[nm] = f"in{k}_{payload}"
    for k, nm in enumerate(user_out):
        renames[nm] = f"out{k}_{payload}"
    renames[params[0]] = f"w_{payload}"
    for old, new in renames.items():
        model = _walk_rename(model, old, new)
    g = model["graph_module"]["graph"]
    for n in g["nodes"]:
        n["name"] = f"node_{payload}_{n['name']}"
        md = n.setdefault("metadata", {})
        md["stack_trace"] = f'File "{payload}", line 1, in forward\n    {payload}'
        md["nn_module_stack"] = f"L__self__,,{payload};L__self__{payload},{payload},{payload}"
        md["torch_fn"] = f"{payload};{payload}"
        for a in n["inputs"]:
            if "assert" in n["target"] and "as_string" in a["arg"]:
                a["arg"]["as_string"] = f"msg {payload}"
    model["graph_module"]["metadata"] = {payload: payload, "k": payload}
    return json.dumps(model).encode().replace(b"@BAD@", BAD_BYTES)


def _run(args, cwd, env=None):
    """doccc ARGS in cwd, output kept as bytes (a decode must not hide a raw byte)."""
    full = dict(os.environ, ASAN_OPTIONS=(os.environ.get("ASAN_OPTIONS", "") + ":detect_leaks=0").lstrip(":"))
    full.update(env or {})
    return subprocess.run([str(doccc_path())] + [str(a) for a in args], cwd=cwd, env=full,
                          capture_output=True, timeout=900, stdin=subprocess.DEVNULL)


def _show(r):
    return (f"exit {r.returncode}\n--- command: {' '.join(map(str, r.args))}\n"
            f"--- stdout:\n{r.stdout[-4000:]!r}\n--- stderr:\n{r.stderr[-4000:]!r}")


def _assert_clean_text(data, what):
    """No control character but newline, no invalid UTF-8, no bidi control."""
    m = re.search(rb"[\x00-\x08\x0b-\x1f\x7f]", data)
    assert m is None, f"{what}: raw control byte {m.group()!r} at {m.start()}: {data[max(0, m.start() - 80):m.start() + 40]!r}"
    text = data.decode("utf-8")  # raises on invalid UTF-8
    bad = [c for c in text if 0x80 <= ord(c) < 0xa0 or ord(c) in (0x202a, 0x202b, 0x202c, 0x202d, 0x202e, 0x2066, 0x2067,
                                                                  0x2068, 0x2069, 0x200e, 0x200f, 0x2028, 0x2029)]
    assert not bad, f"{what}: invisible or reordering characters {bad!r}"


# ---- a tiny C lexer ------------------------------------------------------------

_TRIGRAPHS = {"=": "#", "(": "[", "/": "\\", ")": "]", "'": "^", "<": "{", "!": "|", ">": "}", "-": "~"}


def c_phases(src):
    """Translation phases 1-2 as -std=c11 compilers run them: trigraphs, then
    line splices (gcc and clang also splice a backslash, blanks, newline)."""
    src = re.sub(r"\?\?([=(/)'<!>-])", lambda m: _TRIGRAPHS[m.group(1)], src)
    return re.sub(r"\\[ \t]*\n", "", src)


def c_lex(src):
    """(code, strings): c_phases(src) with every comment made one space (and
    the newlines it spanned) and every string or character literal made ""
    (code), and the decoded bytes of each string literal (strings). Fails on
    an unterminated comment or literal or a raw newline inside a literal."""
    s = c_phases(src)
    code, strings, i, n = [], [], 0, len(s)
    while i < n:
        if s.startswith("/*", i):
            j = s.find("*/", i + 2)
            assert j >= 0, f"unterminated comment at {s[i:i + 80]!r}"
            code.append(" " + "\n" * s.count("\n", i, j))  # lines stay where they were
            i = j + 2
        elif s.startswith("//", i):
            j = s.find("\n", i)
            i = n if j < 0 else j
        elif s[i] in "\"'":
            q, j, val = s[i], i + 1, bytearray()
            while True:
                assert j < n and s[j] != "\n", f"unterminated literal at {s[i:i + 80]!r}"
                c = s[j]
                if c == q:
                    break
                if c == "\\":
                    e = s[j + 1]
                    if e in "01234567":
                        k = j + 1
                        while k < j + 4 and s[k] in "01234567":
                            k += 1
                        val.append(int(s[j + 1:k], 8))
                        j = k
                        continue
                    if e == "x":
                        k = j + 2
                        while s[k] in "0123456789abcdefABCDEF":
                            k += 1
                        val.append(int(s[j + 2:k], 16) & 0xff)
                        j = k
                        continue
                    simple = {"n": 10, "t": 9, "r": 13, "a": 7, "b": 8, "f": 12, "v": 11}
                    val.append(simple.get(e, ord(e)))
                    j += 2
                    continue
                val += c.encode("utf-8")
                j += 1
            if q == '"':
                strings.append(bytes(val))
            code.append(q + q)
            i = j + 1
        else:
            code.append(s[i])
            i += 1
    return "".join(code), strings


def _check_source(path, names):
    data = Path(path).read_bytes()
    _assert_clean_text(data.replace(b"\t", b" "), str(path))
    code, strings = c_lex(data.decode("utf-8"))
    for mk in CODE_MARKERS:
        assert not re.search(mk, code), f"{path}: /{mk}/ outside comments and strings:\n" + \
            "\n".join(l for l in code.splitlines() if re.search(mk, l))[:2000]
    phased = c_phases(data.decode("utf-8")).splitlines()
    for k, line in enumerate(code.splitlines()):
        if not line.lstrip().startswith("#"):
            continue
        if re.match(r"\s*#\s*include\b", line):
            assert re.fullmatch(r'\s*#\s*include\s*(<[\w./]+>|"(m\.h|doccc_gpu\.h|gpu_sim\.h)")\s*', phased[k]), \
                f"{path}: unexpected include {phased[k]!r}"
        else:
            assert re.match(r"\s*#\s*(define|ifn?def|if|else|elif|endif|undef|pragma omp)\b", line), \
                f"{path}: unexpected directive {line!r}"
    return strings


# ---- fixtures ------------------------------------------------------------------

@pytest.fixture(scope="module")
def clean(tmp_path_factory):
    """The unmodified export, its inputs and each target's outputs."""
    torch = require("torch")
    np = require("numpy")
    d = tmp_path_factory.mktemp("inject")
    x = torch.randn(1, 2, 4, 4, generator=torch.Generator().manual_seed(3))
    i = torch.tensor([0, 47, 5, 5, 13], dtype=torch.int64)
    ep = torch.export.export(M.make(torch), (x, i))
    pt2 = d / "m.pt2"
    torch.export.save(ep, str(pt2))
    np.save(d / "x.npy", x.numpy())
    np.save(d / "i.npy", i.numpy())
    outs = {}
    for t in TARGETS:
        outs[t], _, _, kept = _build_and_run(pt2, t, d / f"clean_{t}", d)
        subprocess.run(["rm", "-rf", str(kept)])
    return pt2, d, outs


def _build_and_run(pt2, target, work, data, env=None):
    """Compile pt2 for target in a fresh cwd (work/cwd), run it there; returns
    (outputs, compile result, run result, kept temporary dir)."""
    np = require("numpy")
    cwd = Path(work) / "cwd"
    cwd.mkdir(parents=True)
    out = Path(work) / "out"
    r = _run([pt2, *target_args(target), "-o", f"{out}/", "-n", "m", "--keep-temps",
              "--dump-sdfg", Path(work) / "dump"], cwd, env)
    assert r.returncode == 0, _show(r)
    kept = re.search(rb"kept working directory (\S+)", r.stderr)
    assert kept, _show(r)
    o0, o1 = cwd / "o0.npy", cwd / "o1.npy"
    rr = _run(["run", out / "libm.so", "-i", data / "x.npy", "-i", data / "i.npy", "-o", o0, "-o", o1], cwd)
    assert rr.returncode == 0, _show(rr)
    assert not list(cwd.glob("PWNED")), "the library ran the payload"
    outs = [np.load(o0), np.load(o1)]
    # an index past the assertion's bound: the run fails with the model's message
    np.save(cwd / "bad_i.npy", np.array([0, 48, 5, 5, 13], dtype=np.int64))
    ra = _run(["run", out / "libm.so", "-i", data / "x.npy", "-i", cwd / "bad_i.npy", "-o", cwd / "f0.npy",
               "-o", cwd / "f1.npy"], cwd)
    assert ra.returncode == 1 and b"run-time assertion" in ra.stderr, _show(ra)
    _assert_clean_text(ra.stdout + ra.stderr, "the failed run's message")
    assert not list(cwd.glob("PWNED")), "the library ran the payload"
    return outs, r, rr, Path(kept.group(1).decode())


# ---- tests ---------------------------------------------------------------------

@pytest.mark.parametrize("kind", sorted(PAYLOADS))
def test_payload_in_every_name(clean, tmp_path, kind):
    np = require("numpy")
    import export as export_mod
    pt2, data, ref = clean
    payload = PAYLOADS[kind]
    bad = export_mod.rewrite_pt2(pt2, tmp_path / "evil.pt2", lambda m: _plant(m, payload))
    for t in TARGETS:
        work = tmp_path / t
        env = {"DOCC_DEBUG": "profile"} if t == "sequential" else None
        outs, r, rr, kept = _build_and_run(bad, t, work, data, env)
        try:
            where = f"[{kind}, {t}]"
            for got, want in zip(outs, ref[t]):
                np.testing.assert_array_equal(got, want, err_msg=where)
            for res in (r, rr):
                _assert_clean_text(res.stdout + res.stderr, f"{where} doccc's output")
            srcs = [p for p in kept.iterdir() if p.suffix in (".c", ".cu", ".h")]
            assert any(p.suffix in (".c", ".cu") for p in srcs), f"{where} no source kept in {kept}"
            strings = []
            for p in srcs:
                if p.name in ("doccc_gpu.h", "gpu_sim.h"):
                    continue
                strings += _check_source(p, payload)
            # the header's names decode back to the planted ones
            hdr = (work / "out" / "m.h").read_text()
            _check_source(work / "out" / "m.h", payload)
            planted = payload.encode().replace(b"@BAD@", BAD_BYTES)
            code, hstrings = c_lex(hdr)
            assert b"in0_" + planted in hstrings and b"out0_" + planted in hstrings, f"{where} {hstrings!r}"
            assert b"in0_" + planted in strings, f"{where} the descriptor's input name"
            for f in (work / "dump").iterdir():
                raw = f.read_bytes()
                _assert_clean_text(raw, f"{where} {f.name}")
                if f.suffix == ".json":
                    json.loads(raw)
                else:
                    assert raw.startswith(b"digraph "), f.name
            assert not list(work.rglob("PWNED"))
        finally:
            subprocess.run(["rm", "-rf", str(kept)])


# A NUL cannot be part of a name: doccc's JSON reader refuses the escape
# \u0000 (docs/large-models.md, Limits), so a model holding one is rejected where it is.
NUL_PAYLOAD = "nu\u0000l */ system(\"touch PWNED\"); /*"


def test_nul_in_a_name_rejected(clean, tmp_path):
    import export as export_mod
    pt2, data, ref = clean
    bad = export_mod.rewrite_pt2(pt2, tmp_path / "evil.pt2", lambda m: _plant(m, NUL_PAYLOAD))
    cwd = tmp_path / "cwd"
    cwd.mkdir()
    for t in TARGETS:
        out = tmp_path / f"out_{t}"
        r = _run([bad, *target_args(t), "-o", f"{out}/", "-n", "m"], cwd)
        assert r.returncode == 1, _show(r)
        _assert_clean_text(r.stdout + r.stderr, "doccc's output")
        assert re.search(rb"evil\.pt2:models/model\.json:\d+:\d+: error: .*\\u0000", r.stderr), _show(r)
        assert not out.exists() or not list(out.iterdir())
    assert not list(tmp_path.rglob("PWNED"))


def test_custom_op_name_rejected(clean, tmp_path):
    """An op that no table knows, its name a payload, with a payload stack
    trace: a located message (escaped), exit 1, no output, nothing run."""
    import export as export_mod
    pt2, data, _ = clean

    def edit(m):
        n = next(n for n in m["graph_module"]["graph"]["nodes"] if "conv" in n["target"])
        n["target"] = "torch.ops.evil\u001b[2J." + PWNED + ".default\n" + "m.pt2: note: all is well"
        n["metadata"]["stack_trace"] = 'File "models.py\u001b]0;x\u0007", line 1, in forward\n    ' + PWNED
        return m

    bad = export_mod.rewrite_pt2(pt2, tmp_path / "evil.pt2", edit)
    cwd = tmp_path / "cwd"
    cwd.mkdir()
    for t in TARGETS:
        r = _run([bad, *target_args(t), "-o", f"{tmp_path}/out_{t}/"], cwd)
        assert r.returncode == 1, _show(r)
        _assert_clean_text(r.stdout + r.stderr, "doccc's output")
        err = r.stderr.decode()
        assert re.search(r"evil\.pt2: graph\.nodes\[\d+\] \(node '[^\n]*'\): error: ", err), _show(r)
        assert "\\x1b[2J" in err, "the escape sequence is not shown as text\n" + _show(r)
        assert not any(l.startswith("m.pt2: note") for l in err.splitlines()), "a forged line\n" + _show(r)
        assert not (tmp_path / f"out_{t}").exists() or not list((tmp_path / f"out_{t}").iterdir())
    r = _run(["check", bad], cwd)
    _assert_clean_text(r.stdout + r.stderr, "doccc check's output")
    assert not list(cwd.glob("PWNED"))


@pytest.mark.parametrize("name", ["a b", "1x", "int", "class", "x;system", "a" * 300, "a" * 65, "__x", "_Bool", "a-b",
                                  "x\u001b[2J", "caf\u00e9"])
def test_bad_model_name_is_usage_error(clean, tmp_path, name):
    pt2, _, _ = clean
    r = _run([pt2, "-o", f"{tmp_path}/out/", "-n", name], tmp_path)
    assert r.returncode == 2, _show(r)
    assert b"model name" in r.stderr, _show(r)
    _assert_clean_text(r.stdout + r.stderr, "doccc's output")
    assert not (tmp_path / "out").exists() or not list((tmp_path / "out").iterdir())


def test_good_model_name(clean, tmp_path):
    pt2, _, _ = clean
    name = "_model_" + "x" * 57  # 64 characters
    r = _run([pt2, "-o", f"{tmp_path}/out/", "-n", name], tmp_path)
    assert r.returncode == 0, _show(r)
    assert (tmp_path / "out" / f"lib{name}.so").is_file()
