"""Scans, selections from sorted rows, searches, index ops and vector norms
against eager PyTorch: cumsum/cumprod/logcumsumexp/cummax/cummin (ties and
NaN move cummax's index to the latest one; log-sum-exp stays finite for
large inputs and handles infinities as torch), argsort/msort, median,
nanmedian, kthvalue and mode (indices of ties follow torch's CPU
comparators: median by stable order, mode at the last occurrence),
searchsorted/bucketize (left/right, sorter, batched rows, NaN, scalars,
int32 results), histc (given and data ranges, values outside and on the
edges, NaN, an empty data range, float64/float16), repeat_interleave (static counts; tensor counts with
output_size or constant), index_add/index_copy/index_fill (duplicates
accumulate / last write wins), one_hot, vector norms of every ord, dims
and dtypes, weight norm (wav2vec2's conv), cosine similarity and im2col
(F.unfold). Few groups, many cases each, at both IR levels."""

import os

from harness import Case, check_cases
from conftest import require

FAST = os.environ.get("DOCCC_SCAN_FAST")  # one target, one IR level: for debugging
KW = dict(targets=("none",), irs=("training",)) if FAST else {}

NAN, INF = float("nan"), float("inf")


def test_scans(tmp_path):
    torch = require("torch")
    g = torch.Generator().manual_seed(0)
    a = torch.randn(3, 5, generator=g)
    t = torch.randint(0, 3, (4, 7), generator=g).float()  # ties
    t[1, 2] = t[2, 5] = t[3, 0] = NAN
    t[0, 4] = INF
    t[2, 1] = -INF
    i = torch.randint(-4, 5, (3, 6), generator=g)
    i32 = torch.randint(-3, 4, (2, 9), generator=g, dtype=torch.int32)
    p = torch.rand(4, 6, generator=g) + 0.5
    h = torch.randn(3, 6, generator=g).to(torch.float16)
    bf = torch.randn(2, 7, generator=g).to(torch.bfloat16)
    d = torch.randn(2, 3, 4, generator=g).double()
    big = torch.randn(2, 9, generator=g) * 50 + 80  # exp overflows float32: needs the stable form
    lse = torch.tensor([[-INF, -INF, 1.0, INF, INF, NAN, 0.0], [INF, -INF, 1.0, -INF, 2.0, 3.0, INF]])
    bo = torch.rand(3, 5, generator=g) > 0.5
    long = torch.randn(2, 300, generator=g)
    s0 = torch.tensor(2.5)
    cases = [
        Case("cumsum_long", lambda x: (x.cumsum(1), x.cumsum(0)), (long,)),
        Case("cumprod", lambda x: (x.cumprod(1), x.t().cumprod(-1), x.cumprod(0, dtype=torch.float64)), (p,)),
        Case("cumprod_ints", lambda x, y: (x.cumprod(1), y.cumprod(0), y.cumprod(1, dtype=torch.int32)), (i, i32)),
        Case("cumprod_lowp", lambda x, y: (x.cumprod(1), y.cumprod(-1), x.cumsum(1), y.cumsum(0)), (h, bf)),
        Case("logcumsumexp", lambda x: (torch.logcumsumexp(x, 1), torch.logcumsumexp(x, 0), torch.logcumsumexp(x.t(), -1)), (a,)),
        Case("logcumsumexp_big", lambda x: torch.logcumsumexp(x, 1), (big,)),
        Case("logcumsumexp_inf_nan", lambda x: (torch.logcumsumexp(x, 1), torch.logcumsumexp(x, 0)), (lse,)),
        Case("logcumsumexp_dtypes", lambda x, y, z: (torch.logcumsumexp(x, 1), torch.logcumsumexp(y, 1),
                                                     torch.logcumsumexp(z, 2)), (h, bf, d)),
        Case("cummax_ties_nan", lambda x: (*torch.cummax(x, 1), *torch.cummin(x, 1), *torch.cummax(x, 0),
                                           *torch.cummin(x.t(), 0)), (t,)),
        Case("cummax_ints", lambda x, y: (*torch.cummax(x, 1), *torch.cummin(x, 0), *torch.cummax(y, -1)), (i, i32)),
        Case("cummax_other", lambda x, y, z: (*torch.cummax(x, 1), *torch.cummin(y, 1), *torch.cummax(z, 1),
                                              *torch.cummin(z, 2)), (h, bf, d)),
        Case("cummax_bool", lambda x: (*torch.cummax(x, 1), *torch.cummin(x, 0), x.cumsum(1), x.cumprod(0)), (bo,)),
        Case("cummax_unused", lambda x: (torch.cummax(x, 1).indices, torch.cummin(x, 1).values), (a,)),
        Case("scan_0d", lambda x: (x.cumsum(0), x.cumprod(-1), torch.logcumsumexp(x, 0), *torch.cummax(x, 0)), (s0,)),
    ]
    check_cases(tmp_path, "scans", cases, **KW)


def test_sort_select(tmp_path):
    torch = require("torch")
    g = torch.Generator().manual_seed(1)
    s = torch.randperm(24, generator=g).view(4, 6).float()  # distinct: unstable sorts and kthvalue agree with torch
    t = torch.randint(0, 4, (5, 7), generator=g).float()  # ties
    tn = t.clone()
    tn[0, 3] = tn[2, 0] = tn[2, 6] = tn[4, 1] = NAN
    tn[3] = NAN  # an all-NaN row: median's index is its first NaN; nanmedian's is nth_element's choice
    # among equals (torch gives 5 of 7 here, 0 for rows of up to 3), so nanmedian.dim sees short all-NaN rows only
    ti = torch.randint(-3, 3, (3, 10), generator=g)
    i32 = torch.randint(0, 5, (4, 8), generator=g, dtype=torch.int32)
    h = torch.randint(-2, 3, (3, 9), generator=g).to(torch.float16)
    bf = torch.randperm(12, generator=g).view(2, 6).to(torch.bfloat16)
    d = torch.randint(0, 5, (2, 3, 5), generator=g).double()
    long = torch.randint(0, 50, (3, 301), generator=g).float()  # ties, rows of many merge passes
    lg = torch.randperm(3 * 301, generator=g).view(3, 301).float()
    mo = torch.tensor([[2, 1, 2, 1, 3, 0, 0, 0, 3], [5, 5, 4, 4, 4, 5, 1, 2, 3]])
    s0 = torch.tensor(1.5)
    cases = [
        Case("argsort", lambda x: (torch.argsort(x, 1), torch.argsort(x, 0, descending=True), torch.argsort(x.t(), -1)), (s,)),
        Case("argsort_stable", lambda x: (torch.argsort(x, stable=True), torch.argsort(x, dim=0, stable=True, descending=True),
                                          torch.argsort(x, stable=True, descending=True)), (tn,)),
        Case("argsort_ints", lambda x, y: (torch.argsort(x, stable=True), torch.argsort(y, dim=0, stable=True, descending=True)),
             (ti, i32)),
        Case("msort", lambda x, y: (torch.msort(x), torch.msort(y), torch.msort(x.t())), (tn, ti)),
        Case("median_all", lambda x, y, z: (torch.median(x), torch.median(y), torch.median(z), torch.median(x[:, :6])),
             (t, tn, ti)),
        Case("median_dim", lambda x: (*torch.median(x, 1), *torch.median(x, 0, keepdim=True), *torch.median(x.t(), -1)), (t,)),
        Case("median_nan", lambda x: (*torch.median(x, 1), *torch.median(x, 0)), (tn,)),
        Case("nanmedian", lambda x: (torch.nanmedian(x), *torch.nanmedian(x[[0, 1, 2, 4]], 1),
                                     *torch.nanmedian(x[:, :3], 1, keepdim=True), torch.nanmedian(x[3])), (tn,)),
        Case("nanmedian_nonan", lambda x: (torch.nanmedian(x), *torch.nanmedian(x, 0)), (t,)),
        Case("median_types", lambda x, y, z, w: (*torch.median(x, 1), *torch.median(y, 0), *torch.median(z, 1),
                                                 *torch.median(w, 2), torch.median(y)), (i32, h, bf, d)),
        Case("median_long", lambda x: (*torch.median(x, 1), torch.median(x), *torch.nanmedian(x, 1)), (long,)),
        Case("kthvalue", lambda x: (*torch.kthvalue(x, 1), *torch.kthvalue(x, 4, 0), *torch.kthvalue(x, 6, 1, keepdim=True),
                                    *torch.kthvalue(x.t(), 2, -1)), (s,)),
        Case("kthvalue_long", lambda x: (*torch.kthvalue(x, 150), *torch.kthvalue(x, 301, 1)), (lg,)),
        # values only: these rows have ties, where torch's quickselect picks an index among equals its
        # own way (indices of kthvalue are exact where the k-th value is unique, the cases above)
        Case("kthvalue_nan_values", lambda x: torch.kthvalue(x, 7, 1).values, (tn,)),
        Case("mode", lambda x: (*torch.mode(x, 1), *torch.mode(x, 0, keepdim=True), *torch.mode(x.t(), -1)), (t,)),
        Case("mode_ints", lambda x, y, z: (*torch.mode(x), *torch.mode(y, 1), *torch.mode(z, 0)), (mo, i32, ti)),
        Case("mode_types", lambda x, y, z: (*torch.mode(x, 1), *torch.mode(y, 1), *torch.mode(z, 1)), (h, bf, d)),
        Case("select_0d", lambda x: (torch.median(x), *torch.median(x, 0), *torch.kthvalue(x, 1), *torch.mode(x),
                                     torch.nanmedian(x), torch.argsort(x)), (s0,)),
    ]
    check_cases(tmp_path, "sort_select", cases, **KW)


def test_search_and_index(tmp_path):
    torch = require("torch")
    g = torch.Generator().manual_seed(2)
    bd = torch.tensor([-1.0, 0.0, 0.0, 0.5, 2.0, 2.0, 2.0, 3.5])  # ties at boundaries
    x = torch.tensor([[-2.0, -1.0, 0.0, 0.25], [2.0, 3.5, 9.0, NAN]])
    bn = torch.tensor([0.0, 1.0, 2.0, NAN, NAN])  # NaN boundaries sort last
    rows = torch.sort(torch.randint(0, 6, (3, 9), generator=g).float()).values
    v = torch.randint(-1, 8, (3, 5), generator=g).float()
    u = torch.randn(9, generator=g)
    srt = torch.argsort(u)
    ib = torch.tensor([1, 3, 3, 7, 10])
    iv = torch.randint(0, 12, (2, 6), generator=g)
    h = torch.tensor([0.5, 1.0, 1.5, 2.0]).to(torch.float16)
    e = torch.randn(3, 4, generator=g)
    reps = torch.tensor([1, 0, 3])
    self_ = torch.randn(4, 5, generator=g)
    idx = torch.tensor([0, 2, 2, 3, 0])
    src = torch.randn(5, 5, generator=g)
    cases = [
        Case("bucketize", lambda x, b: (torch.bucketize(x, b), torch.bucketize(x, b, right=True),
                                        torch.bucketize(x, b, out_int32=True)), (x, bd)),
        Case("bucketize_scalar", lambda b: (torch.bucketize(0.0, b), torch.bucketize(2, b, right=True),
                                            torch.bucketize(-5.0, b, out_int32=True, right=True)), (bd,)),
        Case("bucketize_nan", lambda x, b: (torch.bucketize(x, b), torch.bucketize(x, b, right=True)), (x, bn)),
        Case("searchsorted", lambda b, x: (torch.searchsorted(b, x), torch.searchsorted(b, x, right=True),
                                           torch.searchsorted(b, x, side="right"), torch.searchsorted(b, x, side="left")),
             (bd, x)),
        Case("searchsorted_rows", lambda b, x: (torch.searchsorted(b, x), torch.searchsorted(b, x, right=True, out_int32=True),
                                                torch.searchsorted(b, x[:, :2].t().contiguous().t())), (rows, v)),
        Case("searchsorted_sorter", lambda u, s, x: (torch.searchsorted(u, x, sorter=s),
                                                     torch.searchsorted(u, x, sorter=s, side="right"),
                                                     torch.searchsorted(u, x, sorter=torch.argsort(u))), (u, srt, e)),
        Case("searchsorted_scalar", lambda b: (torch.searchsorted(b, 2.0), torch.searchsorted(b, 2, side="right"),
                                               torch.searchsorted(b, 0.1, out_int32=True)), (bd,)),
        Case("searchsorted_int", lambda b, x: (torch.searchsorted(b, x), torch.bucketize(x, b, right=True),
                                               torch.searchsorted(b, 3.5), torch.bucketize(x.float() + 0.5, b)), (ib, iv)),
        Case("searchsorted_f16", lambda b, x: torch.searchsorted(b, x), (h, torch.tensor([0.75, 2.0, 1.0]).half())),
        Case("repeat_interleave_int", lambda x: (x.repeat_interleave(2), x.repeat_interleave(3, dim=1),
                                                 x.repeat_interleave(2, dim=-2), x.t().repeat_interleave(1, 0)), (e,)),
        Case("repeat_interleave_tensor", lambda x, r: (x.repeat_interleave(r, dim=0, output_size=4),
                                                       torch.repeat_interleave(r, output_size=4),
                                                       x.repeat_interleave(torch.tensor([2]), dim=1, output_size=8),
                                                       x.repeat_interleave(torch.tensor([1, 2, 0]), dim=0),
                                                       torch.repeat_interleave(torch.tensor([2, 2])),
                                                       x.repeat_interleave(r.repeat(4), output_size=16)), (e, reps)),
        Case("index_add", lambda x, i, s: (x.index_add(0, i, s), x.index_add(1, i, s.t()[:4], alpha=-2.5),
                                           x.index_add(0, i[:1], s[:1], alpha=2)),
             (self_, idx, src)),
        Case("index_add_int", lambda x, i: x.index_add(1, i, torch.ones(3, 5, dtype=torch.int64), alpha=3),
             (torch.randint(0, 9, (3, 4), generator=g), idx.to(torch.int32))),
        Case("index_copy", lambda x, i, s: (x.index_copy(0, i, s), x.index_copy(1, i, s.t()[:4]),
                                            x.index_copy(-1, i[:2], s[:4, :2])), (self_, idx, src)),
        Case("index_fill", lambda x, i: (x.index_fill(0, i, 2.5), x.index_fill(1, i - 5, -1.0),
                                         x.index_fill(1, i[:2], torch.tensor(7.0)), x.int().index_fill(0, i, 3)),
             (self_, idx)),
    ]
    check_cases(tmp_path, "search_index", cases, **KW)


def test_histc(tmp_path):
    torch = require("torch")
    g = torch.Generator().manual_seed(5)
    x = torch.randn(5, 7, generator=g)
    edges = torch.tensor([0.0, 1.0, 2.0, 3.0, 3.0, -0.5, 3.5, NAN, 1.5, 0.9999999])
    ids = torch.randint(0, 6, (12,), generator=g).float()  # MoE routing: expert ids, one past the range
    cases = [
        Case("histc_data_range", lambda x: (torch.histc(x), torch.histc(x, bins=10), torch.histc(x.t(), bins=3, min=2, max=2)),
             (x,)),
        Case("histc_given_range", lambda x: (torch.histc(x, bins=4, min=-1, max=1), torch.histc(x, bins=3, min=0, max=0.5),
                                             torch.histc(x * 10, bins=7, min=-3.3, max=4.1)), (x,)),
        Case("histc_edges", lambda e: (torch.histc(e, bins=3, min=0, max=3), torch.histc(e, bins=1, min=1, max=3),
                                       torch.histc(e, bins=6, min=-0.5, max=1)), (edges,)),
        Case("histc_experts", lambda i: (torch.histc(i, bins=4, min=0, max=3), torch.histc(i, bins=6, min=0, max=5)), (ids,)),
        Case("histc_flat_data", lambda c: (torch.histc(c, bins=4), torch.histc(c, bins=3, min=7, max=7)),
             (torch.full((3, 2), 2.0),)),
        Case("histc_0d", lambda c: (torch.histc(c, bins=3, min=0, max=5), torch.histc(c, bins=2)), (torch.tensor(2.5),)),
        Case("histc_f64", lambda x: (torch.histc(x, bins=5), torch.histc(x, bins=4, min=-1, max=1)), (x.double(),)),
        Case("histc_f16", lambda x: (torch.histc(x, bins=5), torch.histc(x, bins=4, min=-1, max=1)), (x.half(),)),
    ]
    check_cases(tmp_path, "histc", cases, expect={"training": {"aten.histc.default"}, "core": {"aten.histc.default"}},
                **KW)


def test_one_hot_and_0d_index(tmp_path):
    """one_hot at both IR levels (Core ATen checks the classes with
    _assert_async.msg, a run-time check). index_add with a 0-d index: its Core ATen
    decomposition is an index_put that torch's own kernel rejects (values
    [N, 1] for an indexed result [N]), so only the training IR is meaningful."""
    torch = require("torch")
    g = torch.Generator().manual_seed(4)
    cls = torch.randint(0, 5, (2, 3), generator=g)
    x, s = torch.randn(4, 5, generator=g), torch.randn(4, 5, generator=g)
    cases = [
        Case("one_hot", lambda c: (torch.nn.functional.one_hot(c, 5), torch.nn.functional.one_hot(c[0], 7),
                                   torch.nn.functional.one_hot(c.t(), 6)), (cls,)),
    ]
    check_cases(tmp_path, "one_hot", cases, **KW)
    cases = [
        Case("index_0d", lambda x, s: (x.index_add(1, torch.tensor(4), s[:, :1]), x.index_add(0, torch.tensor(2), s[:1], alpha=3)),
             (x, s)),
    ]
    check_cases(tmp_path, "index_0d", cases, **dict(KW, irs=("training",)))


def test_norms(tmp_path):
    torch = require("torch")
    F = torch.nn.functional
    g = torch.Generator().manual_seed(3)
    a = torch.randn(3, 5, generator=g)
    a[0, 1] = 0.0
    a[2, 3] = 0.0
    z = torch.tensor([[0.0, 0.0, 1.0], [0.0, -2.0, NAN]])
    b = torch.randn(2, 3, 4, generator=g)
    h = torch.randn(4, 6, generator=g).to(torch.float16)
    bf = torch.randn(4, 6, generator=g).to(torch.bfloat16)
    d = torch.randn(3, 4, generator=g).double()
    img = torch.randn(2, 3, 5, 6, generator=g)

    class WeightNorm(torch.nn.Module):
        """wav2vec2 / HuBERT's positional convolution: weight norm over dim 2."""

        def __init__(self, new):
            super().__init__()
            c = torch.nn.Conv1d(4, 6, 3, padding=1, groups=2)
            wn = torch.nn.utils.parametrizations.weight_norm if new else torch.nn.utils.weight_norm
            self.c = wn(c, name="weight", dim=2)

        def forward(self, x):
            return self.c(x)

    torch.manual_seed(0)
    wn_old, wn_new = WeightNorm(False).eval(), WeightNorm(True).eval()
    x1 = torch.randn(2, 4, 7, generator=g)
    v = torch.randn(4, 2, 3, generator=g)
    gg = torch.randn(4, 1, 1, generator=g)
    gl = torch.randn(1, 1, 3, generator=g)
    gm = torch.randn(1, 2, 1, generator=g)
    vn = torch.linalg.vector_norm
    cases = [
        Case("vector_norm_ords", lambda x: (vn(x), vn(x, 1), vn(x, 0), vn(x, INF), vn(x, -INF), vn(x, 3), vn(x, 0.5),
                                            vn(x, -1), vn(x, -2.5)), (a,)),
        Case("vector_norm_dims", lambda x: (vn(x, dim=1), vn(x, 1, dim=(0, 2)), vn(x, INF, dim=-1, keepdim=True),
                                            vn(x, 0, dim=[1], keepdim=True), vn(x, 3, dim=(0, 1, 2), keepdim=True),
                                            vn(x.permute(2, 0, 1), 2, dim=0)), (b,)),
        Case("vector_norm_zero_nan", lambda x: (vn(x, dim=1), vn(x, 0, dim=1), vn(x, INF, dim=1), vn(x, -INF, dim=1),
                                                vn(x, -1, dim=1), vn(x, 1, dim=0)), (z,)),
        Case("vector_norm_dtypes", lambda x, y, w: (vn(x), vn(x, 1, dim=1), vn(y, INF, dim=0), vn(y, 3), vn(w, dim=0),
                                                    vn(x, dtype=torch.float32), vn(w, 0.5)), (h, bf, d)),
        Case("vector_norm_dtype_arg", lambda x: (vn(x, 2, dim=[0], dtype=torch.float64), vn(x.half(), 2, dtype=torch.float32)),
             (a,)),
        Case("torch_norm", lambda x: (torch.norm(x), torch.norm(x, p=1, dim=1), x.norm(3), torch.norm(x, dim=1, keepdim=True),
                                      torch.norm(x, p="fro", dim=(0, 1)), torch.norm(x, INF)), (a,)),
        Case("linalg_norm", lambda x, y: (torch.linalg.norm(x), torch.linalg.norm(x, 3, dim=1), torch.linalg.norm(y, dim=(1, 2)),
                                          torch.linalg.norm(x[0], -INF), torch.linalg.norm(y, 0, dim=-1, keepdim=True)), (a, b)),
        Case("frobenius", lambda x: (torch.frobenius_norm(x, [0, 1]), torch.frobenius_norm(x, [2], keepdim=True)), (b,)),
        Case("normalize", lambda x, y: (F.normalize(x, dim=1), F.normalize(x, p=1, dim=0), F.normalize(y, dim=-1),
                                        F.normalize(torch.zeros(2, 3))), (a, h)),
        Case("cosine", lambda x, y: (F.cosine_similarity(x, x + 1, dim=1), F.cosine_similarity(x, torch.zeros(3, 5)),
                                     F.cosine_similarity(y, y[:1] * 2, dim=-1), F.cosine_similarity(y, y.flip(0), dim=0, eps=1e-3)),
             (a, b)),
        Case("cosine_dtypes", lambda x, y: (F.cosine_similarity(x, x.flip(1), dim=1), F.cosine_similarity(y, y * 3, dim=0)),
             (h, d)),
        Case("weight_norm_old", wn_old, (x1,)),
        Case("weight_norm_new", wn_new, (x1,)),
        Case("weight_norm_fns", lambda v, g0, g2, g1: (torch._weight_norm(v, g0, 0), torch._weight_norm(v, g2, 2),
                                                       torch._weight_norm(v, g1, 1), torch._weight_norm(v, g0.sum(), -1),
                                                       *torch._weight_norm_interface(v, g0, 0),
                                                       torch._weight_norm_interface(v, g2, 2)[0]), (v, gg, gl, gm)),
        Case("weight_norm_lowp", lambda v, g0, g2: (torch._weight_norm(v.bfloat16(), g0.bfloat16(), 0),
                                                torch._weight_norm(v.half(), g0.half(), 0),
                                                *torch._weight_norm_interface(v.bfloat16(), g0.bfloat16(), 0),
                                                torch._weight_norm(v.double(), g2.double(), 2)), (v, gg, gl)),
        Case("unfold", lambda x: (F.unfold(x, 2), F.unfold(x, (2, 3), padding=1, stride=(2, 1)),
                                  F.unfold(x, 3, dilation=2, padding=2, stride=3), F.unfold(x[0], 2, stride=2)), (img,)),
    ]
    check_cases(tmp_path, "norms", cases, **KW)


def test_data_dependent_sizes(tmp_path):
    """repeat_interleave with repeats known only at run time and no
    output_size has a data-dependent size: doccc names the node and says
    to pass output_size, at both IR levels. With output_size, repeats that
    do not sum to it or are negative fail the run (torch raises), as does a
    one_hot class outside [0, num_classes); valid inputs still run."""
    torch = require("torch")
    np = require("numpy")
    from conftest import TARGETS, compile_model, doccc_cmd, fmt_result, run_lib

    class Dyn(torch.nn.Module):
        def forward(self, x, r):
            return x.repeat_interleave(r, dim=0)

    x, r = torch.randn(3, 4), torch.tensor([1, 2, 3])
    ep = torch.export.export(Dyn(), (x, r))
    for ir, e in (("training", ep), ("core", ep.run_decompositions())):
        pt2 = tmp_path / f"dyn_{ir}.pt2"
        torch.export.save(e, str(pt2))
        res = doccc_cmd(pt2, "-o", f"{tmp_path}/out_{ir}/")
        assert res.returncode == 1 and "data-dependent output size" in res.stderr and "output_size" in res.stderr, \
            f"[{ir}]\n{fmt_result(res)}"

    class Checked(torch.nn.Module):
        def forward(self, x, r, c):
            return x.repeat_interleave(r, dim=0, output_size=6), torch.nn.functional.one_hot(c, 4)

    c = torch.tensor([0, 3, 1])
    pt2 = tmp_path / "checked.pt2"
    torch.export.save(torch.export.export(Checked(), (x, r, c)), str(pt2))
    bad = (("sum 5", torch.tensor([1, 1, 3]), c), ("sum 7", torch.tensor([2, 2, 3]), c),
           ("negative", torch.tensor([4, -1, 3]), c), ("class 4", r, torch.tensor([0, 4, 1])),
           ("class -1", r, torch.tensor([-1, 0, 1])))
    for target in (("sequential", "cuda-sim") if FAST else TARGETS):
        lib = compile_model(pt2, target, tmp_path / target, "-n", "checked")
        got = run_lib(lib, [x.numpy(), r.numpy(), c.numpy()])
        assert np.array_equal(got[0], x.repeat_interleave(r, dim=0).numpy()), f"[{target}]"
        assert np.array_equal(got[1], torch.nn.functional.one_hot(c, 4).numpy()), f"[{target}]"
        for label, rr, cc in bad:
            files = []
            for k, a in enumerate((x, rr, cc)):
                files += ["-i", tmp_path / f"in{k}.npy"]
                np.save(tmp_path / f"in{k}.npy", a.numpy())
            res = doccc_cmd("run", lib, *files, "-o", tmp_path / "o0.npy", "-o", tmp_path / "o1.npy")
            assert res.returncode == 1 and "index out of range" in res.stderr, f"[{target}] {label}:\n{fmt_result(res)}"
