"""The op table against torch 2.13, and the coverage table docs/ops.md.

  - docs/ops.md is what test/gen_ops_table.py writes today (regenerated in
    memory from torch's Core ATen set and `doccc --list-ops`); a stale file
    fails with the command that refreshes it.
  - every schema string of `doccc --list-ops` is torch's own `_schema` string
    of that overload: the importer binds arguments by that schema, so a
    mismatch means the op table is wrong.
  - ir/ops_variants.h holds every in-place overload and alias torch 2.13
    has for a supported functional row (test/gen_ops_table.py derives them
    from torch's registry): an op added by hand without rerunning the
    generator, or a torch that adds an in-place form, fails here by name;
  - every known-unsupported row (ir/ops_unsupported.h) names a real aten
    overload, and no overload is both supported and known-unsupported.
  - "supported" means tested: every supported overload is in the exported
    program of some test (conftest records the programs every test hands to
    doccc; this check runs last, in whole-suite sessions).
"""

import pytest

import gen_ops_table
from conftest import doccc_path, require


@pytest.fixture(scope="module")
def table():
    require("torch")
    return gen_ops_table.list_ops(doccc_path())


def test_ops_doc_is_current(table):
    torch = require("torch")
    supported, unsupported = table
    want = gen_ops_table.render(gen_ops_table.core_aten_ops(torch), supported, unsupported,
                                gen_ops_table.torch_version(torch), gen_ops_table.decomposition_leftovers(torch))
    path = gen_ops_table.OUT
    have = path.read_text() if path.is_file() else None
    if have != want:
        pytest.fail(f"{path} is {'missing' if have is None else 'stale'} (the op table or torch "
                    f"changed): run `python3 test/gen_ops_table.py` and commit the result",
                    pytrace=False)


def test_schemas_match_torch(table):
    torch = require("torch")
    supported, _ = table
    assert supported, "doccc --list-ops listed no supported overloads"
    bad = []
    for overload, _, schema in supported:
        op = gen_ops_table.aten_op(torch, overload)
        if op is None:
            bad.append(f"{overload}: no such aten overload in torch {torch.__version__}")
        elif str(op._schema) != schema:
            bad.append(f"{overload}:\n    doccc: {schema}\n    torch: {op._schema}")
    assert not bad, "op-table schemas differ from torch's:\n  " + "\n  ".join(bad)


def test_inplace_and_alias_rows_are_current():
    """Every in-place overload and alias of a supported functional row is a
    derived row, and every derived row is one."""
    torch = require("torch")
    supported, _, derived = gen_ops_table.list_ops(doccc_path(), derived_too=True)
    hand = {o: s for o, _, s in supported if o not in derived}
    want = {o: b for o, b, _ in gen_ops_table.derive_variants(torch, hand)}
    missing = sorted(f"{o} (of {b})" for o, b in want.items() if o not in derived)
    extra = sorted(o for o in derived if o not in want)
    assert not missing and not extra, (
        "ir/ops_variants.h is stale: run `python3 test/gen_ops_table.py`, rebuild, and commit it\n"
        f"  torch has these in-place or alias overloads of supported rows that doccc lacks: {missing}\n"
        f"  derived rows that are no longer in-place forms or aliases of a supported row: {extra}")
    path = gen_ops_table.VARIANTS
    have = path.read_text() if path.is_file() else None
    assert have == gen_ops_table.render_variants(gen_ops_table.derive_variants(torch, hand)), \
        f"{path} differs from what test/gen_ops_table.py writes: run it, rebuild, and commit the result"


def test_supported_overloads_unique(table):
    supported, _ = table
    names = [o for o, _, _ in supported]
    dups = sorted({o for o in names if names.count(o) > 1})
    assert not dups, f"overloads listed twice in the op table: {dups}"


def test_unsupported_rows_are_real_and_disjoint(table):
    torch = require("torch")
    supported, unsupported = table
    sup = {o for o, _, _ in supported}
    missing = [o for o, _ in unsupported if gen_ops_table.aten_op(torch, o) is None]
    assert not missing, f"ir/ops_unsupported.h names overloads torch does not have: {missing}"
    both = sorted(sup & {o for o, _ in unsupported})
    assert not both, f"overloads both supported and in ir/ops_unsupported.h: {both}"
    empty = [o for o, why in unsupported if not why.strip()]
    assert not empty, f"ir/ops_unsupported.h rows without a reason: {empty}"


def test_every_supported_overload_is_exported(table, request, run_tmp):
    """Every overload that --list-ops calls supported is in some test's
    exported program. Runs last (conftest orders it), over the programs
    every earlier test handed to doccc, in this process and, in a parallel
    run, in every other worker (their records, once they have ended); it
    needs the whole suite."""
    import conftest
    if not request.config.doccc_whole_suite:
        pytest.skip("needs the whole suite (make test): it checks what every other test exported")
    supported, _ = table
    exported = set(conftest.EXPORTED_OVERLOADS)
    for ops in conftest.worker_records(run_tmp, "overloads").values():
        exported.update(ops)
    missing = sorted(o for o, _, _ in supported if o not in exported)
    assert not missing, (f"{len(missing)} supported overloads appear in no test's exported program "
                         f"(add a case that exports each, or drop the row):\n  " + "\n  ".join(missing))
