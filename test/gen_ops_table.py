#!/usr/bin/env python3
"""Write docs/ops.md, doccc's operator coverage table.

    python3 test/gen_ops_table.py [-o docs/ops.md] [--doccc build/doccc]

Sources:
  (a) the Core ATen operator set of the installed torch: every aten
      OpOverload tagged torch.Tag.core (found through torch's registered
      schemas, so no lazily loaded op is missed);
  (b) `doccc --list-ops`: the supported overloads (overload, lowering, schema)
      and the known-and-not-supported ones with their reasons
      (ir/ops_unsupported.h);
  (c) from (b), the overloads doccc supports beyond Core ATen (training-IR
      ops such as conv2d, linear, layer_norm, in-place variants, ...).

Each Core ATen overload gets a status: "supported", "unsupported: REASON", or
"not yet" (an honest gap). The output depends only on the torch version and
on the doccc binary, so test/test_coverage.py regenerates it in memory and
fails when the checked-in file is stale: run this script after adding ops.
The doccc binary is $DOCCC, else $BUILD/doccc (default build/doccc).

It also writes ir/ops_variants.h, the op table's derived rows: the in-place
overloads (relu_, scatter_.value, dropout_, ...) and the aliases (concat,
clip, arccos, swapaxes, ...) of the hand-written functional rows, each with
torch's own schema and the row it lowers through. A derived overload is
found by signature, not by name: its arguments and returns have the same
types, kinds and defaults as its base (names may differ: swapaxes's axis0
is transpose's dim0), and an in-place one writes its first argument and
returns it. Aliases are torch's own: the `aliases` of its OpInfo database
and the "X, alias for Y" notes of native_functions.yaml. After adding a
row, run this script, rebuild, and commit both files.
"""

import argparse
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "docs" / "ops.md"
VARIANTS = ROOT / "ir" / "ops_variants.h"


def default_doccc():
    return Path(os.environ.get("DOCCC") or ROOT / os.environ.get("BUILD", "build") / "doccc")


def torch_version(torch):
    return torch.__version__.split("+")[0]


def all_aten_overloads(torch):
    """{"name.overload": OpOverload} of every registered aten op."""
    out = {}
    for s in torch._C._jit_get_all_schemas():
        if not s.name.startswith("aten::"):
            continue
        name, ov = s.name[len("aten::"):], s.overload_name or "default"
        try:
            out[f"{name}.{ov}"] = getattr(getattr(torch.ops.aten, name), ov)
        except (AttributeError, RuntimeError):
            continue
    return out


def core_aten_ops(torch):
    """Sorted "name.overload" of every aten OpOverload tagged core."""
    return sorted(k for k, op in all_aten_overloads(torch).items() if torch.Tag.core in op.tags)


# The module that registers each non-aten namespace's custom ops.
NAMESPACE_MODULES = {"transformers": "transformers.integrations.moe",
                     "quantized_decomposed": "torch.ao.quantization.fx._decomposed", "torchao": "torchao"}


# what a forward pass of a model cannot hold after run_decompositions(), by name
_NOT_FORWARD = ("backward", "sparse", "nested", "quantiz", "cudnn", "mkldnn", "miopen", "mps", "fbgemm", "foreach",
                "vulkan", "xnnpack", "_out", ".out", "q_", "dequant", "int_repr", "lift", "fake", "_copy.")


def decomposition_leftovers(torch):
    """Sorted "name.overload" of the public aten overloads that
    run_decompositions() leaves in a graph although torch does not tag them
    Core ATen: no entry in torch.export.default_decompositions(), no
    CompositeImplicitAutograd kernel, functional, and a forward op of dense
    tensors (not backward, sparse, nested, quantized or a device library's)."""
    table = torch.export.default_decompositions()
    out = []
    for k, op in all_aten_overloads(torch).items():
        if torch.Tag.core in op.tags or op in table or k.startswith("_") or any(w in k for w in _NOT_FORWARD):
            continue
        try:
            if torch._C._dispatch_has_kernel_for_dispatch_key(op.name(), "CompositeImplicitAutograd"):
                continue
        except RuntimeError:
            continue
        if any(a.alias_info is not None and a.alias_info.is_write for a in op._schema.arguments):
            continue
        out.append(k)
    return sorted(out)


def aten_op(torch, overload):
    """torch.ops.aten.NAME.OVERLOAD for "NAME.OVERLOAD", torch.ops.NS.NAME.OVERLOAD
    for "NS.NAME.OVERLOAD" (a custom op, its module imported), or None."""
    name, _, ov = overload.rpartition(".")
    ns, _, name = name.rpartition(".")
    try:
        if ns:
            import importlib
            importlib.import_module(NAMESPACE_MODULES.get(ns, ns))
        return getattr(getattr(getattr(torch.ops, ns or "aten"), name), ov)
    except (AttributeError, RuntimeError, ImportError):
        return None


def list_ops(doccc=None, derived_too=False):
    """Parse `doccc --list-ops`: ([(overload, lowering, schema)], [(overload, reason)])."""
    doccc = Path(doccc or default_doccc())
    r = subprocess.run([str(doccc), "--list-ops"], capture_output=True, text=True, timeout=60)
    if r.returncode != 0:
        raise RuntimeError(f"{doccc} --list-ops failed (exit {r.returncode}): {r.stderr.strip()}")
    supported, unsupported, derived, section = [], [], set(), None
    for line in r.stdout.splitlines():
        if line.startswith("# supported"):
            section = "supported"
        elif line.startswith("# derived"):
            section = "derived"
        elif line.startswith("# known and not supported"):
            section = "unsupported"
        elif not line.strip() or line.startswith("#"):
            continue
        elif section == "supported":
            overload, lowering, schema = line.split(None, 2)
            supported.append((overload, lowering, schema))
        elif section == "unsupported":
            overload, word, reason = line.split(None, 2)
            if word != "unsupported":
                raise ValueError(f"unexpected --list-ops line: {line!r}")
            unsupported.append((overload, reason))
        elif section == "derived":
            derived.add(line.split()[0])
        else:
            raise ValueError(f"--list-ops line outside a section: {line!r}")
    if derived_too:
        return supported, unsupported, derived
    return supported, unsupported


# ---- derived rows: in-place overloads and aliases ---------------------------------

def _py_to_aten(name):
    """OpInfo's Python name of an op -> its aten name, or None (nn.functional.*
    and the like are not aten ops)."""
    name = name.removeprefix("torch.")
    for ns in ("special.", "linalg.", "fft."):
        if name.startswith(ns):
            return ns[:-1] + "_" + name[len(ns):]
    return None if "." in name else name


def _yaml_aliases(torch):
    """{alias: target} from the notes of native_functions.yaml ("# clip is an
    alias for clamp" above "- func: clip(...)"), where torchgen ships it."""
    import re
    try:
        import torchgen
    except ImportError:
        return {}
    path = Path(torchgen.__file__).parent / "packaged" / "ATen" / "native" / "native_functions.yaml"
    if not path.is_file():
        return {}
    out, note = {}, None
    for line in path.read_text().splitlines():
        s = line.strip()
        if s.startswith("#"):
            m = re.search(r"alias (?:for|of|to) (?:torch\.)?([\w.]+)", s, re.I)
            note = None if (not m or "not an alias" in s.lower()) else m.group(1).replace(".", "_")
        elif s.startswith("- func:"):
            if note:
                out.setdefault(s[len("- func:"):].strip().split("(")[0].split(".")[0], note)
            note = None
        elif not s:
            note = None
    return out


def aliases(torch):
    """{aten name: aten name} of the aliases torch registers, both ways."""
    from torch.testing._internal.common_methods_invocations import op_db
    pairs = dict(_yaml_aliases(torch))
    for info in op_db:
        for a in info.aliases:
            x, y = _py_to_aten(a.name), _py_to_aten(info.name)
            if x and y and x != y:
                pairs.setdefault(x, y)
    out = {}
    for x, y in pairs.items():
        out.setdefault(x, set()).add(y)
        out.setdefault(y, set()).add(x)
    return out


def _sig(op):
    """An overload's signature without names and alias annotations."""
    s = op._schema
    return (tuple((str(a.type), a.kwarg_only, repr(a.default_value)) for a in s.arguments),
            tuple(str(r.type) for r in s.returns))


def _writes_self(op):
    s = op._schema
    a0 = s.arguments[0] if s.arguments else None
    return (a0 is not None and a0.alias_info is not None and a0.alias_info.is_write and len(s.returns) == 1 and
            s.returns[0].alias_info is not None and s.returns[0].alias_info.is_write and
            not any(a.alias_info is not None and a.alias_info.is_write for a in s.arguments[1:]))


def _mutates(op):
    return any(a.alias_info is not None and a.alias_info.is_write for a in op._schema.arguments)


def derive_variants(torch, hand):
    """[(overload, base, schema)] of the in-place and alias overloads of the
    hand-written rows `hand` ({overload: schema}) that torch has, sorted.
    base is always a hand-written functional row."""
    ops = all_aten_overloads(torch)
    by_name = {}
    for k, op in ops.items():
        by_name.setdefault(k.rpartition(".")[0], []).append(k)
    functional = {o: o for o in hand if o in ops and not _mutates(ops[o])}
    # aliases of the functional rows (and of their in-place forms, below)
    al = aliases(torch)
    for o in list(functional):
        for other in sorted(al.get(o.rpartition(".")[0], ())):
            for k in by_name.get(other, ()):
                if k not in hand and k not in functional and not _mutates(ops[k]) and _sig(ops[k]) == _sig(ops[o]):
                    functional[k] = o
    # an overload with the signature of a supported one of the same name
    # (mH.a and mH.default) is a second registration: export records the other
    def twin(k):
        return any(o != k and o in hand and _sig(ops[o]) == _sig(ops[k]) for o in by_name[k.rpartition(".")[0]])
    out = {k: (b, str(ops[k]._schema)) for k, b in functional.items() if k not in hand and not twin(k)}
    # in-place forms: NAME_.* that writes self, matching a functional NAME.*
    for f, base in sorted(functional.items()):
        for k in by_name.get(f.rpartition(".")[0] + "_", ()):
            if k in hand or k in out or not _writes_self(ops[k]) or _sig(ops[k]) != _sig(ops[f]):
                continue
            out[k] = (base, str(ops[k]._schema))
    return sorted((k, b, s) for k, (b, s) in out.items())


def _c_str(s):
    return s.replace("\\", "\\\\").replace('"', '\\"')


def render_variants(rows):
    """The text of ir/ops_variants.h."""
    lines = [
        "/*",
        " * ops_variants.h - the derived rows of the op table: the in-place overloads",
        " * and the aliases torch has for the hand-written functional rows of",
        " * ir/ops_*.h. Generated by `python3 test/gen_ops_table.py` from torch's",
        " * registry; do not edit by hand (test/test_coverage.py fails when it is",
        " * stale).",
        " *",
        " * X(\"overload\", \"base overload\", \"schema\"): the overload lowers through",
        " * its base's lowering and parameter, its arguments bound by its own schema",
        " * (torch's) and read by the base's names (the signatures match position",
        " * by position). An in-place one's write-back is the importer's",
        " * (lw_rebind_mutated). Included by ops.h only.",
        " */",
        "#define ATEN_VARIANTS(X) \\",
    ]
    lines += [f'\tX("{o}", "{b}", "{_c_str(s)}") \\' for o, b, s in rows]
    lines += ["", ""]
    return "\n".join(lines)


def variants(doccc=None):
    import torch
    supported, _, derived = list_ops(doccc, derived_too=True)
    hand = {o: s for o, _, s in supported if o not in derived}
    return render_variants(derive_variants(torch, hand))


def _cell(text):
    return text.replace("|", "\\|")


def render(core, supported, unsupported, version, left=()):
    """The text of docs/ops.md."""
    sup = {o: (low, sch) for o, low, sch in supported}
    uns = dict(unsupported)
    core_set = set(core)
    rows, n_sup, n_uns = [], 0, 0
    for op in core:
        if op in sup:
            status, low = "supported", sup[op][0]
            n_sup += 1
        elif op in uns:
            status, low = f"unsupported: {uns[op]}", ""
            n_uns += 1
        else:
            status, low = "not yet", ""
        rows.append(f"| `{op}` | {_cell(status)} | {low} |")
    n_gap = len(core) - n_sup - n_uns
    left_rows, left_n = [], {"supported": 0, "unsupported": 0, "not yet": 0}
    for op in left:
        st = "supported" if op in sup else f"unsupported: {uns[op]}" if op in uns else "not yet"
        left_n[st.split(":")[0]] += 1
        left_rows.append(f"| `{op}` | {_cell(st)} |")
    beyond = sorted((o, low, sch) for o, low, sch in supported if o not in core_set)
    beyond_uns = sorted((o, why) for o, why in unsupported if o not in core_set)

    out = [
        "# doccc operator coverage",
        "",
        "<!-- Generated by `python3 test/gen_ops_table.py`; do not edit by hand.",
        "     test/test_coverage.py fails when this file is stale. -->",
        "",
        f"Sources: the Core ATen operator set of torch {version} (every aten overload tagged",
        "`torch.Tag.core`) and `doccc --list-ops` (the op table in `ir/ops_*.h`, the",
        "known-unsupported overloads with their reasons in `ir/ops_unsupported.h`).",
        "",
        "## Summary",
        "",
        "| | overloads |",
        "|---|---:|",
        f"| Core ATen overloads (torch {version}) | {len(core)} |",
        f"| supported | {n_sup} / {len(core)} |",
        f"| unsupported by design (with a reason) | {n_uns} / {len(core)} |",
        f"| not yet (gaps) | {n_gap} / {len(core)} |",
        f"| left by run_decompositions() though not tagged Core ATen | {len(left)} |",
        f"| of those: supported / unsupported by design / not yet | {left_n['supported']} / "
        f"{left_n['unsupported']} / {left_n['not yet']} |",
        f"| supported beyond Core ATen (training IR and others) | {len(beyond)} |",
        f"| known and not supported beyond Core ATen | {len(beyond_uns)} |",
        f"| all supported overloads | {len(supported)} |",
        "",
        "## Core ATen",
        "",
        "Status: *supported* (compiled by doccc), *unsupported: reason* (deliberately not",
        "compiled; doccc prints the reason), *not yet* (not written yet).",
        "",
        "| overload | status | lowering |",
        "|---|---|---|",
        *rows,
        "",
        "## Left by run_decompositions() though not tagged Core ATen",
        "",
        "A Core ATen graph holds these too: torch 2.13's default decomposition table has no",
        "entry for them and they have no composite implementation, so `run_decompositions()`",
        "leaves them as they are (`unfold` in a vocoder's framing, `histc` in a mixture of",
        "experts' router). The list is computed from torch (public forward ops of dense",
        "tensors: no backward, sparse, nested, quantized or device-library ops); *not yet*",
        "is an honest gap.",
        "",
        "| overload | status |",
        "|---|---|",
        *left_rows,
        "",
        "## Supported beyond Core ATen",
        "",
        "Overloads of the default (training) IR of `torch.export.export` and others that",
        "`run_decompositions()` would decompose or rename; the schema is torch's own.",
        "",
        "| overload | lowering | schema |",
        "|---|---|---|",
        *[f"| `{o}` | {low} | `{_cell(sch)}` |" for o, low, sch in beyond],
        "",
        "## Known and not supported beyond Core ATen",
        "",
        "| overload | reason |",
        "|---|---|",
        *[f"| `{o}` | {_cell(why)} |" for o, why in beyond_uns],
        "",
    ]
    return "\n".join(out)


def generate(doccc=None):
    import torch

    supported, unsupported = list_ops(doccc)
    return render(core_aten_ops(torch), supported, unsupported, torch_version(torch), decomposition_leftovers(torch))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("-o", "--output", default=str(OUT), help="output file (default docs/ops.md)")
    ap.add_argument("--doccc", default=None, help="doccc binary (default $DOCCC or build/doccc)")
    args = ap.parse_args(argv)
    vtext = variants(args.doccc)
    if not VARIANTS.is_file() or VARIANTS.read_text() != vtext:
        VARIANTS.write_text(vtext)
        print(f"wrote {VARIANTS}: rebuild doccc (make) and run this script again for {args.output}")
        return 0
    text = generate(args.doccc)
    out = Path(args.output)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(text)
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
