"""Per-op tests of einsum (aten.einsum.default, ir/lower/linalg.c) against
eager PyTorch (test/ops/harness.py: one compiled program per group, IR level
and target). At the core IR level torch decomposes einsum itself (permute,
view, unsqueeze, diagonal, sum, mul, bmm), so the core runs check those ops
on the same equations.

Also: a bmm-shaped and an attention-shaped einsum lower to one gemm library
node reading the operands in place, and malformed equations (written into
an exported program) get messages naming the equation and the problem."""

import json
import re
import sys
from pathlib import Path

from harness import Case, check_cases
from conftest import compile_model, doccc_cmd, fmt_result, require

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))


def _gen(seed=0):
    torch = require("torch")
    return torch.Generator().manual_seed(seed)


def _ein(eq):
    torch = require("torch")
    return lambda *xs: torch.einsum(eq, *xs)


def test_einsum_float(tmp_path):
    """Products of two operands, one-operand forms, ellipsis and broadcasting, float32."""
    torch = require("torch")
    g = _gen(1)

    def r(*s):
        return torch.randn(s, generator=g)

    cases = [
        Case("matmul", _ein("ij,jk->ik"), (r(5, 7), r(7, 6))),
        Case("matmul_implicit", _ein("ij,jk"), (r(5, 7), r(7, 6))),
        Case("matmul_out_t", _ein("ij,jk->ki"), (r(5, 7), r(7, 6))),
        Case("mat_bt", _ein("ij,kj->ik"), (r(5, 7), r(6, 7))),
        Case("mat_at_bt", _ein("ji,kj->ik"), (r(7, 5), r(6, 7))),
        Case("bmm", _ein("bij,bjk->bik"), (r(3, 4, 9), r(3, 9, 5))),
        Case("attention_qk", _ein("bhqd,bhkd->bhqk"), (r(2, 3, 5, 8), r(2, 3, 6, 8))),
        Case("attention_pv", _ein("bhqk,bhkd->bhqd"), (r(2, 3, 5, 6), r(2, 3, 6, 8))),
        Case("attention_bqhd", _ein("bqhd,bkhd->bhqk"), (r(2, 5, 3, 8), r(2, 6, 3, 8))),
        Case("matvec", _ein("ij,j->i"), (r(6, 9), r(9))),
        Case("vecmat", _ein("j,jk->k"), (r(9), r(9, 6))),
        Case("dot", _ein("i,i->", ), (r(11), r(11))),
        Case("dot_implicit_2d", _ein("ij,ij"), (r(4, 5), r(4, 5))),
        Case("outer", _ein("i,j->ij"), (r(5), r(4))),
        Case("outer_implicit_order", _ein("j,i"), (r(5), r(4))),
        Case("hadamard", _ein("ij,ij->ij"), (r(4, 5), r(4, 5))),
        Case("batch_outer", _ein("bi,bj->bij"), (r(3, 4), r(3, 5))),
        Case("two_k_dims", _ein("abcd,cdef->abef"), (r(2, 3, 4, 5), r(4, 5, 3, 2))),
        Case("two_k_dims_swapped", _ein("abdc,cdef->fbea"), (r(2, 3, 5, 4), r(4, 5, 3, 2))),
        Case("sum_out_each", _ein("ij,kl->ik"), (r(3, 4), r(5, 6))),
        Case("sum_out_and_contract", _ein("ijk,jl->il"), (r(3, 4, 5), r(4, 6))),
        Case("bilinear", _ein("bn,anm,bm->ba"), (r(3, 4), r(5, 4, 6), r(3, 6))),
        Case("chain3", _ein("ij,jk,kl->il"), (r(4, 5), r(5, 6), r(6, 3))),
        Case("chain4_scalar", _ein("i,ij,jk,k->"), (r(4), r(4, 5), r(5, 6), r(6))),
        Case("transpose", _ein("ij->ji"), (r(3, 4),)),
        Case("permute3", _ein("abc->cab"), (r(2, 3, 4),)),
        Case("implicit_sorted", _ein("ba"), (r(2, 3),)),
        Case("upper_before_lower", _ein("bA"), (r(2, 3),)),
        Case("diagonal", _ein("ii->i"), (r(5, 5),)),
        Case("trace", _ein("ii"), (r(5, 5),)),
        Case("trace_explicit", _ein("ii->"), (r(5, 5),)),
        Case("diag_sum", _ein("iij->j"), (r(4, 4, 3),)),
        Case("diag_keep", _ein("iji->ij"), (r(4, 3, 4),)),
        Case("diag3", _ein("iii->i"), (r(3, 3, 3),)),
        Case("diag_two_operands", _ein("ii,ij->j"), (r(4, 4), r(4, 5))),
        Case("sum_all", _ein("ijk->"), (r(3, 4, 5),)),
        Case("sum_middle", _ein("ijk->ik"), (r(3, 4, 5),)),
        Case("sum_rows_transposed", _ein("ij->j"), (r(3, 4),)),
        Case("ellipsis_batch", _ein("...ij,...jk->...ik"), (r(2, 3, 4, 5), r(2, 3, 5, 6))),
        Case("ellipsis_implicit", _ein("...ij,...jk"), (r(2, 3, 4), r(5, 1, 4, 2))),
        Case("ellipsis_broadcast_rank", _ein("...ij,jk->...ik"), (r(2, 3, 4, 5), r(5, 6))),
        Case("ellipsis_size1", _ein("b...i,b...i->b..."), (r(2, 1, 4, 5), r(2, 3, 1, 5))),
        Case("ellipsis_middle", _ein("i...j->j...i"), (r(2, 3, 4, 5),)),
        Case("ellipsis_summed", _ein("...i,...i->i"), (r(2, 3, 4), r(3, 4))),
        Case("ellipsis_empty", _ein("...ij,jk->...ik"), (r(4, 5), r(5, 6))),
        Case("ellipsis_out_only_dims", _ein("i...->..."), (r(3, 4, 2),)),
        Case("label_size1_broadcast", _ein("ij,jk->ik"), (r(3, 1), r(4, 2))),
        Case("label_size1_bcast_out", _ein("bi,bi->bi"), (r(1, 4), r(3, 4))),
        Case("spaces", _ein(" i j , j k -> i k "), (r(3, 4), r(4, 2))),
        Case("noncontig_operand", lambda a, b: torch.einsum("ij,jk->ik", a.t(), b[:, ::2]), (r(7, 5), r(7, 12))),
        Case("sliced_k", lambda a, b: torch.einsum("abk,bkc->ac", a[:, :, ::2], b), (r(3, 4, 10), r(4, 5, 6))),
        Case("path", lambda a, b, c: torch.ops.aten.einsum.default("ij,jk,kl->il", [a, b, c], path=[1, 2, 0, 1]),
             (r(4, 5), r(5, 6), r(6, 3))),
        Case("scalar_operand", _ein("i,->i"), (r(5), r())),
        Case("scalars", _ein(",->"), (r(), r())),
        Case("scalar_identity", _ein("->"), (r(),)),
        Case("ellipsis_rank0", _ein("...,...->..."), (r(), r(4))),
        Case("large_ragged", _ein("mk,nk->mn"), (r(37, 70), r(45, 70))),
        Case("large_bmm", _ein("bmk,bkn->bnm"), (r(3, 33, 64), r(3, 64, 29))),
        Case("f64_bmm", _ein("bij,bkj->bik"), (r(2, 3, 4).double(), r(2, 5, 4).double())),
        Case("f64_trace", _ein("ii"), (r(4, 4).double(),)),
    ]
    check_cases(tmp_path, "einsum_float", cases)


def test_einsum_dtypes(tmp_path):
    """Integer, bool, float16 and bfloat16 operands: torch's result dtypes
    (sums of integers are int64, products keep the operands' dtype)."""
    torch = require("torch")
    g = _gen(2)

    def ri(*s, dtype=torch.int64):
        return torch.randint(-5, 6, s, generator=g, dtype=dtype)

    def rh(*s, dtype=torch.float16):
        return torch.randn(*s, generator=g).to(dtype)

    cases = [
        Case("i64_matmul", _ein("ij,jk->ik"), (ri(4, 6), ri(6, 5))),
        Case("i64_bmm", _ein("bij,bjk->bik"), (ri(2, 3, 4), ri(2, 4, 5))),
        Case("i64_trace", _ein("ii"), (ri(4, 4),)),
        Case("i64_outer", _ein("i,j->ij"), (ri(3), ri(4))),
        Case("i64_chain3", _ein("ij,jk,kl->il"), (ri(3, 4), ri(4, 5), ri(5, 2))),
        Case("i32_matmul", _ein("ij,jk"), (ri(4, 6, dtype=torch.int32), ri(6, 5, dtype=torch.int32))),
        Case("i32_sum_to_i64", _ein("ij->j"), (ri(4, 6, dtype=torch.int32),)),
        Case("i32_diag_keeps_dtype", _ein("ii->i"), (ri(4, 4, dtype=torch.int32),)),
        Case("i32_dot", _ein("i,i->"), (ri(7, dtype=torch.int32), ri(7, dtype=torch.int32))),
        Case("i16_sum_all", _ein("ij->"), (ri(3, 4, dtype=torch.int16),)),
        Case("u8_sum_out_first", _ein("ij,j->j"), (ri(3, 4).abs().to(torch.uint8), ri(4))),
        Case("bool_outer", _ein("i,j->ij"), (ri(4) > 0, ri(3) > 0)),
        Case("bool_sum", _ein("ij->i"), (ri(4, 5) > 0,)),
        Case("f16_bmm", _ein("bij,bjk->bik"), (rh(2, 3, 8), rh(2, 8, 5))),
        Case("f16_attention", _ein("bhqd,bhkd->bhqk"), (rh(1, 2, 4, 8), rh(1, 2, 5, 8))),
        Case("f16_trace", _ein("ii->"), (rh(6, 6),)),
        Case("f16_sum_out", _ein("ijk,jl->il"), (rh(3, 4, 5), rh(4, 6))),
        Case("f16_outer", _ein("i,j->ij"), (rh(5), rh(3))),
        Case("bf16_matmul", _ein("ij,jk->ik", ), (rh(4, 8, dtype=torch.bfloat16), rh(8, 3, dtype=torch.bfloat16))),
        Case("bf16_chain3", _ein("ij,jk,kl->il"),
             (rh(3, 4, dtype=torch.bfloat16), rh(4, 5, dtype=torch.bfloat16), rh(5, 2, dtype=torch.bfloat16))),
        Case("bf16_diag", _ein("ii->i"), (rh(4, 4, dtype=torch.bfloat16),)),
        Case("i8_matmul", _ein("ij,jk->ik"), (ri(3, 4, dtype=torch.int8), ri(4, 2, dtype=torch.int8))),
        Case("f16_large_k", _ein("ik,jk->ij"), (rh(9, 96), rh(7, 96))),
        Case("bf16_large_k", _ein("bik,bkj->bij"), (rh(2, 5, 80, dtype=torch.bfloat16), rh(2, 80, 6, dtype=torch.bfloat16))),
        Case("mixed_3_operands_mul", _ein("i,i,i->i"),
             (rh(5, dtype=torch.float32), rh(5, dtype=torch.float64), rh(5, dtype=torch.float32))),
        Case("mixed_f32_f64_mul", _ein("i,i->i"), (rh(5, dtype=torch.float32), rh(5, dtype=torch.float64))),
    ]
    check_cases(tmp_path, "einsum_dtypes", cases)


def _imported(dump):
    """The SDFG after import (--dump-sdfg), as a dict."""
    return json.loads((Path(dump) / "00-imported.json").read_text())


def _lib_nodes(sdfg):
    return [k for k in sdfg["root"]["children"] if "library" in k]


def test_einsum_is_gemm(tmp_path):
    """bmm- and attention-shaped einsums become one gemm node each, reading
    the inputs through views (no copy), the bmm writing the output itself."""
    torch = require("torch")
    from export import export

    class M(torch.nn.Module):
        def forward(self, a, b, q, k):
            return torch.einsum("bij,bjk->bik", a, b), torch.einsum("bhqd,bhkd->bhqk", q, k)

    g = _gen(3)
    ins = (torch.randn(3, 4, 5, generator=g), torch.randn(3, 5, 6, generator=g),
           torch.randn(2, 3, 4, 8, generator=g), torch.randn(2, 3, 6, 8, generator=g))
    pt2 = tmp_path / "gemm.pt2"
    export(M(), ins, pt2, "training")
    dump = tmp_path / "dump"
    compile_model(pt2, "sequential", tmp_path / "out", "-n", "eg", "--dump-sdfg", str(dump))
    sdfg = _imported(dump)
    libs = _lib_nodes(sdfg)
    ops = [(k["label"], k["library"]["op"]) for k in libs]
    assert ops == [("einsum", "gemm"), ("einsum_1", "gemm")], ops
    cs = {c["name"]: c for c in sdfg["containers"]}
    bmm, att = libs[0]["library"], libs[1]["library"]
    # the bmm writes the graph's output; both read views of the inputs
    assert cs[bmm["outputs"][0]]["kind"] == "output", cs[bmm["outputs"][0]]
    for lib, bases in ((bmm, ("a", "b")), (att, ("q", "k"))):
        for name, base in zip(lib["inputs"][:2], bases):
            c = cs[name]
            assert c["kind"] == "view" and sdfg["containers"][c["base"]]["name"] == base, c
    # K^T as strides: k [2,3,6,8] read as [2,3,8,6] with strides (144,48,1,8)
    kt = cs[att["inputs"][1]]
    assert kt["shape"] == ["2", "3", "8", "6"] and kt["strides"] == ["144", "48", "1", "8"], kt


def test_einsum_errors(tmp_path):
    """Malformed equations (written into an exported program, since torch
    refuses to export them): one message per einsum, naming the equation."""
    torch = require("torch")
    from export import export, rewrite_pt2

    class M(torch.nn.Module):
        def forward(self, a, b, c):
            return (torch.einsum("ij,jk->ik", a, b), torch.einsum("ij->i", a), torch.einsum("ij,jk->ik", a, c),
                    torch.einsum("ii->i", c), torch.einsum("ij->j", a), torch.einsum("ij,jk", a, b),
                    torch.einsum("ij->ij", a), torch.einsum("ij->ij", a), torch.einsum("ij,jk->ik", a, b),
                    torch.einsum("ij->ij", a), torch.einsum("ij->ij", a))

    ins = (torch.randn(3, 4), torch.randn(4, 5), torch.randn(4, 4))
    pt2 = tmp_path / "ok.pt2"
    export(M(), ins, pt2, "training")
    # the fourth einsum is pointed at a (3, 4) below, which torch would not export
    bad = ["ij,jk,kl->il", "ijk->i", "ij,ik->jk", "ii->i", "ij->jj", "ij,j1", "i..j->ij", "ij->k", "ij",
           "ij->i..", "...i...->i"]
    want = [
        "einsum 'ij,jk,kl->il': fewer operands were provided (2) than specified in the equation",
        "einsum 'ijk->i': the number of subscripts in the equation (3) does not match the number of dimensions (2) "
        "for operand 0 and no ellipsis was given",
        "einsum 'ij,ik->jk': subscript i has size 4 for operand 1 which does not broadcast with previously seen size 3",
        "einsum 'ii->i': subscript i is repeated for operand 0 but the sizes don't match, 4 != 3",
        "einsum 'ij->jj': output subscript j appears more than once in the output",
        "einsum 'ij,j1': invalid subscript '1' given at index 4 in the equation string, subscripts must be in [a-zA-Z]",
        "einsum 'i..j->ij': found '.' for operand 0 that is not part of any ellipsis",
        "einsum 'ij->k': output subscript k does not appear in the equation for any input operand",
        "einsum 'ij': more operands were provided (2) than specified in the equation (1)",
        "einsum 'ij->i..': found '.' for output that is not part of any ellipsis (...)",
        "einsum '...i...->i': found '.' for operand 0 for which an ellipsis was already found",
    ]
    def edit(d):
        nodes = [n for n in d["graph_module"]["graph"]["nodes"] if n["target"] == "torch.ops.aten.einsum.default"]
        assert len(nodes) == len(bad)
        for n, eq in zip(nodes, bad):
            n["inputs"][0]["arg"]["as_string"] = eq
        nodes[3]["inputs"][1]["arg"]["as_tensors"] = [{"name": "a"}]
        return d

    broken = rewrite_pt2(pt2, tmp_path / "bad.pt2", edit)
    r = doccc_cmd(broken, "-o", f"{tmp_path}/out/")
    assert r.returncode == 1, fmt_result(r)
    for w in want:
        assert w in r.stderr, f"missing: {w}\n" + fmt_result(r)
    assert len(re.findall(r"error: einsum '", r.stderr)) == len(bad), fmt_result(r)
