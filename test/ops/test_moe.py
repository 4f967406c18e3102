"""transformers' grouped matrix product of mixture-of-experts layers
(torch.ops.transformers.grouped_mm_fallback) against eager PyTorch: uneven
groups, an empty group, rows past the last offset (zero), offsets past the
rows, decreasing and negative offsets (the fallback's Python slicing: a
later group overwrites, a negative bound wraps once), int32 and int64
offsets, sizes that are not multiples of the register tile, a transposed
weight view, float64 and bfloat16, and offsets computed in the graph from
expert ids (sort, histc, cumsum: what a MoE router exports). Both IR
levels, every target."""

from harness import Case, check_cases
from conftest import require


def test_grouped_mm_fallback(tmp_path):
    torch = require("torch")
    require("transformers")
    import transformers.integrations.moe  # noqa: F401  registers torch.ops.transformers
    gmm = torch.ops.transformers.grouped_mm_fallback
    g = torch.Generator().manual_seed(3)
    x = torch.randn(13, 19, generator=g)
    w = torch.randn(4, 19, 37, generator=g)
    wt = torch.randn(4, 37, 19, generator=g)  # (E, N, K): weight as a transposed view
    i32 = lambda *v: torch.tensor(v, dtype=torch.int32)  # noqa: E731
    ids = torch.randint(0, 4, (9, 2), generator=g)

    def routed(x, w, ids):
        e, perm = torch.sort(ids.reshape(-1), stable=True)  # ties in input order, as doccc sorts
        counts = torch.histc(e.float(), bins=4, min=0, max=3)
        offs = torch.cumsum(counts, dim=0, dtype=torch.int32)
        return gmm(x[perm // 2], w, offs)

    cases = [
        Case("uneven_empty", lambda x, w, o: gmm(x, w, o), (x, w, i32(3, 3, 10, 13))),
        Case("rows_past_last", lambda x, w, o: gmm(x, w, o), (x, w, i32(2, 5, 5, 9))),
        Case("past_rows", lambda x, w, o: gmm(x, w, o), (x, w, i32(4, 20, 25, 30))),
        Case("decreasing", lambda x, w, o: gmm(x, w, o), (x, w, i32(6, 2, 11, 13))),
        Case("negative", lambda x, w, o: gmm(x, w, o), (x, w, i32(5, -4, 12, 8))),
        Case("int64_offs", lambda x, w, o: gmm(x, w, o), (x, w, torch.tensor([0, 7, 7, 13]))),
        Case("transposed_w", lambda x, w, o: gmm(x, w.transpose(1, 2), o), (x, wt, i32(1, 6, 12, 13))),
        Case("wide", lambda x, w, o: gmm(x, w, o), (torch.randn(70, 8, generator=g), torch.randn(3, 8, 40, generator=g),
                                                      i32(30, 31, 70))),
        Case("float64", lambda x, w, o: gmm(x, w, o), (x.double(), w.double(), i32(3, 3, 10, 13))),
        Case("bfloat16", lambda x, w, o: gmm(x, w, o), (x.bfloat16(), w.bfloat16(), i32(4, 4, 9, 12))),
        Case("routed", routed, (torch.randn(9, 19, generator=g), w, ids)),
    ]
    ov = "transformers.grouped_mm_fallback.default"
    check_cases(tmp_path, "grouped_mm", cases, expect={"training": {ov}, "core": {ov}})
