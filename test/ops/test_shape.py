"""Shape, indexing and creation ops against eager PyTorch (exact for data
movement): views and list outputs (split, chunk, unbind), copies (cat,
stack, flip, repeat, roll, padding of every mode), indexing (index_select,
gather, embedding, index.Tensor, scatters, index_put, slice/select_scatter;
large tables, duplicate indices, and out-of-range indices, which fail the
run with DOCCC_ERR_INDEX where torch raises),
creation (full, zeros, ones, empty, arange, fill, copy) and arg-reductions
(argmax, max.dim, cumsum). Cases cover size-1 dims, non-contiguous inputs,
negative dims and indices, empty tensors, several dtypes, multi-output ops
and graphs that return an input unchanged or one tensor twice. Few groups,
because compile time dominates."""


from harness import Case, check_cases
from conftest import TARGETS, compile_model, debug_knob, doccc_cmd, fmt_result, require

FAST = debug_knob("DOCCC_SHAPE_FAST")  # one target, one IR level: for debugging
KW = dict(targets=("none",), irs=("training",)) if FAST else {}


def test_views_and_copies(tmp_path):
    torch = require("torch")
    g = torch.Generator().manual_seed(0)
    a = torch.randn(2, 3, 4, generator=g)
    b = torch.randn(4, 5, generator=g)
    h = torch.randn(3, 4, generator=g).to(torch.float16)
    bf = torch.randn(2, 5, generator=g).to(torch.bfloat16)
    i = torch.randint(-100, 100, (3, 4), generator=g)
    bo = torch.rand(2, 3, generator=g) > 0.5
    e = torch.randn(0, 5, generator=g)
    one = torch.randn(1, 3, 1, generator=g)
    d = torch.randn(2, 6, generator=g).double()
    cases = [
        Case("identity", lambda x: x, (b,)),
        Case("twice", lambda x: (x * 2, x * 2), (b,)),
        Case("same_twice", lambda x: (lambda y: (y, y))(x + 1), (b,)),
        Case("split", lambda x: tuple(t * 1 for t in torch.split(x, 2, dim=-1)), (a,)),
        Case("split_sizes", lambda x: tuple(t + 0 for t in torch.split(x, [1, 3], dim=0)), (b,)),
        Case("chunk_perm", lambda x: tuple(t * 1 for t in x.permute(2, 0, 1).chunk(3, dim=0)), (a,)),
        Case("split_unused", lambda x: (lambda t: (t[0] * 1, t[2] * 1))(torch.split(x, [1, 2, 1], 0)), (b,)),
        Case("chunk_uneven", lambda x: (lambda t: (t[2] + 0, t[0] + 0))(x.chunk(3, 1)), (b,)),
        Case("unbind", lambda x: tuple(t + 0 for t in x.unbind(1)), (a,)),
        Case("narrow_t", lambda x: x.t().narrow(0, -3, 2) * 1, (b,)),
        Case("diagonal", lambda x: (torch.diagonal(x, 1) * 1, torch.diagonal(x, -1) * 1, x.diagonal(0, -1, 0) * 1), (b,)),
        Case("as_strided", lambda x: (torch.as_strided(x, (3, 3), (1, 2), 1) * 1, torch.as_strided(x[1:], (2, 2), (5, 1)) * 1),
             (b,)),
        Case("squeeze_unsq", lambda x: (x.squeeze() * 1, x.squeeze(-1).unsqueeze(0) * 1), (one,)),
        Case("expand_sel", lambda x: (x.expand(2, 3, 4) * 1, x[0, :, 0] * 1), (one,)),
        Case("slice_big", lambda x: x[1:2 ** 63 - 1:2] * 1, (b,)),
        Case("view_as", lambda x, y: x.view_as(y) + 0, (a, torch.zeros(6, 4))),
        Case("clone_perm", lambda x: x.permute(1, 0).clone() + 0, (b,)),
        Case("cat_neg", lambda x, y: torch.cat([x, y.t()[:4, :3]], dim=-1), (b, b)),
        Case("cat_empty", lambda x, y: torch.cat([y, x, y], dim=0), (b, e)),
        Case("cat_many", lambda x: torch.cat([x * k for k in range(10)], dim=1), (b,)),
        Case("stack", lambda x, y: (torch.stack([x, y], dim=1), torch.stack([x, y], dim=-1)), (b, b * 2)),
        Case("flip", lambda x: (x.flip(0, -1), x.permute(2, 1, 0).flip(1)), (a,)),
        Case("repeat", lambda x: (x.repeat(2, 1, 3), x.repeat(2, 1)), (b[:2, :3],)),
        Case("roll", lambda x: (x.roll(1, -1), x.roll((2, -1), (0, 1)), x.roll(3)), (b,)),
        Case("pad_const", lambda x: (torch.nn.functional.pad(x, (1, 2, 0, 1), value=1.5),
                                     torch.nn.functional.pad(x, (-1, 1))), (b,)),
        Case("pad_modes", lambda x: (torch.nn.functional.pad(x, (2, 1, 1, 2), mode="reflect"),
                                     torch.nn.functional.pad(x, (2, 1, 1, 2), mode="replicate"),
                                     torch.nn.functional.pad(x, (2, 1, 1, 2), mode="circular")), (a.unsqueeze(0),)),
        Case("pad1d", lambda x: (torch.nn.functional.pad(x, (3, 2), mode="reflect"),
                                 torch.nn.functional.pad(x, (3, 2), mode="replicate")), (a,)),
        Case("f16_copies", lambda x: (x.flip(1), torch.cat([x, x], 0), x.t() + 0), (h,)),
        Case("bf16_copies", lambda x: (x.roll(1, 1), torch.stack([x, x])), (bf,)),
        Case("f64_pad", lambda x: torch.nn.functional.pad(x, (1, 1)), (d,)),
        Case("int_copies", lambda x: (x.flip(0), x.repeat(1, 2), torch.cat([x, x], 1)), (i,)),
        Case("empty_copies", lambda x: (x[:, :0].flip(1), torch.cat([x[:0], x[:0]]), x[:0].t() + 0), (b,)),
        Case("bool_copies", lambda x: (x.flip(1), torch.stack([x, x], 0)), (bo,)),
        # transposes of the default IR (Core ATen makes them permutes)
        Case("numpy_T", lambda x: (x.T * 1, x.mT * 1, x.mH * 1, x.adjoint() * 1), (a,)),
        Case("numpy_T_int", lambda x: (x.T + 0, x.mT + 0), (i,)),
        Case("meshgrid", lambda x, y: tuple(t * 1 for t in torch.meshgrid(x, y, indexing="ij"))
             + tuple(t * 1 for t in torch.meshgrid(x, y, x[:2], indexing="xy"))
             + tuple(t * 1 for t in torch.ops.aten.meshgrid.default([y, x[1:]]))
             + tuple(t + 0 for t in torch.meshgrid(x[0], y, indexing="xy")), (b[0], a[0, 0, :3])),
        # device and layout conversions: identities or casts
        Case("to_device", lambda x: (x.to("cpu") * 1, x.to("cpu", torch.float64), x.to(device="cpu", dtype=torch.float16),
                                     x.to(torch.device("cpu"), non_blocking=True) * 1,
                                     x.contiguous(memory_format=torch.channels_last) * 1,
                                     x.clone(memory_format=torch.channels_last) + 0), (a.unsqueeze(0),)),
        # an expanded (stride-0) last dim read by vector code: broadcast, not loaded
        Case("expand_vec", lambda x: (x / x.sum(-1, keepdim=True).expand_as(x), x * x[..., :1].expand(2, 3, 64),
                                      x - torch.broadcast_to(x.amax(-1, keepdim=True), (2, 3, 64))),
             (torch.rand(2, 3, 64, generator=g) + 0.5,)),
        Case("broadcast_to", lambda x: (torch.broadcast_to(x, (2, 2, 3, 4)) * 1, x[:, :1].broadcast_to(2, 5, 4) + 0), (a,)),
        Case("reshape_as", lambda x, y: (x.reshape_as(y) + 0, x.permute(2, 0, 1).reshape_as(y) * 1), (a, torch.zeros(6, 4))),
        Case("min_max_other", lambda x, y: (torch.min(x, y), torch.max(x, y), torch.multiply(x, y)), (b, b.flip(0))),
    ]
    check_cases(tmp_path, "shape_views", cases, **KW)


def test_indexing(tmp_path):
    torch = require("torch")
    g = torch.Generator().manual_seed(1)
    a = torch.randn(4, 5, generator=g)
    w = torch.randn(10, 3, generator=g)
    i = torch.randint(0, 100, (4, 5), generator=g, dtype=torch.int32)
    h = torch.randn(4, 5, generator=g).to(torch.bfloat16)
    idx = torch.tensor([3, -1, 0, 3])
    idx2 = torch.tensor([[0, 2], [-1, 1]])
    a3 = torch.randn(3, 4, 5, generator=g)
    sel = torch.tensor([3, 1, 0, 3])  # index_select, gather and scatter take no negative indices
    gidx = torch.tensor([[0, 1, 3], [2, 4, 1]])
    tok = torch.tensor([[1, 9, 0], [4, 0, 9]])
    cases = [
        Case("index_select", lambda x, k: (x.index_select(0, k), x.index_select(-1, k[:2])), (a, sel)),
        Case("index_select_t", lambda x, k: x.t().index_select(1, k), (a, sel)),
        Case("gather", lambda x, k: (torch.gather(x, 1, k), torch.gather(x, 0, k[:, :2].abs() % 4)), (a, gidx)),
        Case("embedding", lambda x, k: torch.nn.functional.embedding(k, x), (w, tok)),
        Case("index_first", lambda x, k: x[k], (a, idx)),
        Case("index_second", lambda x, k: x[:, k], (a, idx)),
        Case("index_2d", lambda x, k: x[k], (a, idx2)),
        Case("index_pair", lambda x, k, j: x[k, j], (a, idx2, idx2.abs())),
        Case("index_nonadj", lambda x, k, j: (x[k, :, j], x[:, k[:3]]), (a3, idx2, idx2.abs() + 1)),
        Case("index_int32", lambda x, k: x[k.to(torch.int32)], (a, idx)),
        Case("index_ints", lambda x, k: (x[:, k], x[k]), (i, idx)),
        Case("index_bf16", lambda x, k: x[k], (h, idx)),
        Case("scatter_src", lambda x, k, s: torch.scatter(x, 1, k[:, :2].abs(), s), (a, gidx, torch.ones(2, 2))),
        Case("scatter_value", lambda x, k: torch.scatter(x, 0, k[:, :2].abs() % 4, 7.0), (a, gidx)),
        Case("scatter_add", lambda x, k, s: torch.scatter_add(x, 1, k, s), (a, gidx, torch.arange(6.).view(2, 3))),
        Case("scatter_reduce", lambda x, k, s: tuple(torch.scatter_reduce(x, 1, k, s, r, include_self=inc)
                                                      for r in ("sum", "prod", "amax", "amin", "mean")
                                                      for inc in (True, False)),
             (a, torch.tensor([[0, 1, 1], [2, 2, 2]]), torch.randn(2, 3, generator=g))),
        Case("index_put", lambda x, k, v: (torch.index_put(x, (k,), v), torch.index_put(x, (k,), v, accumulate=True)),
             (a, idx, torch.randn(5, generator=g))),
        Case("index_put_pair", lambda x, k, j: torch.index_put(x, (k, j), torch.tensor(9.)), (a, idx2, idx2.abs())),
        Case("setitem", lambda x, k: (lambda y: (y.__setitem__(k, 0.5), y)[1])(x.clone()), (a, idx)),
        Case("slice_scatter", lambda x, s, t: (torch.slice_scatter(x, s, 1, 1, 5, 2), torch.slice_scatter(x, t, 0, -2)),
             (a, torch.randn(4, 2, generator=g), torch.randn(2, 5, generator=g))),
        Case("select_scatter", lambda x, s: torch.select_scatter(x, s, 1, -1), (a, torch.randn(4, generator=g))),
    ]
    check_cases(tmp_path, "shape_index", cases, **KW)


def test_indexing_large_and_duplicates(tmp_path):
    """Tables too large for a search, gathers along the innermost dim (whose
    index differs per lane, so the map must stay scalar), broadcast index
    tensors, and scatters whose indices repeat (sequential, in order)."""
    torch = require("torch")
    g = torch.Generator().manual_seed(3)
    table = torch.randn(30000, 64, generator=g)
    tok = torch.randint(0, 30000, (2, 64), generator=g)
    x3 = torch.randn(2, 3, 32, generator=g)
    gl = torch.randint(0, 32, (2, 3, 32), generator=g)
    a = torch.randn(6, 16, generator=g)
    a3 = torch.randn(5, 4, 6, generator=g)
    kb = torch.tensor([[0], [-1], [2]])          # broadcasts against jb: (3, 4)
    jb = torch.tensor([5, -6, 1, 0])
    dup = torch.tensor([3, 1, 3, 0, 3])
    uniq = torch.tensor([-1, 0, 2])
    sdup = torch.randint(0, 6, (4, 16), generator=g)
    cases = [
        Case("embedding_large", lambda w, k: (torch.nn.functional.embedding(k, w),
                                              torch.nn.functional.embedding(k.to(torch.int32)[:, :5], w)), (table, tok)),
        Case("index_select_large", lambda w, k: w.index_select(0, k[0]), (table, tok)),
        Case("gather_last", lambda x, k: (torch.gather(x, -1, k), torch.gather(x, 2, k[:, :, :16])), (x3, gl)),
        # index tensors computed in the graph: map fusion moves the gather into their producer's loops
        Case("index_fused", lambda x, k: (x[:, 0].index_select(0, (k[0] * 3 + 1) % 6),
                                          x[:, 1].index_select(0, torch.cat([k[0], k[1] + 1]) % 6)), (a, sdup)),
        Case("index_bcast_nonadj", lambda x, k, j: (x[k, :, j], x[:, k, j], x[k, j]), (a3, kb, jb[:3].abs() % 4)),
        Case("index_bcast_neg", lambda x, k, j: x[k, :, j], (a3, kb, jb)),
        Case("index_put_acc_dup", lambda x, k, v: (torch.index_put(x, (k,), v, accumulate=True),
                                                   torch.index_put(x, (k, k), v[:, 0], accumulate=True)),
             (a, dup, torch.randn(5, 16, generator=g))),
        Case("index_put_unique", lambda x, k, v: (torch.index_put(x, (k,), v), torch.index_put(x, (k, k.abs()), v[:, 3])),
             (a, uniq, torch.randn(3, 16, generator=g))),
        Case("scatter_add_dup", lambda x, k, s: (torch.scatter_add(x, 0, k, s), torch.scatter_add(x, 1, k, s)),
             (a, sdup, torch.randn(4, 16, generator=g))),
        Case("scatter_reduce_dup", lambda x, k, s: tuple(torch.scatter_reduce(x, 0, k, s, r, include_self=inc)
                                                         for r in ("sum", "amax", "mean") for inc in (True, False)),
             (a, sdup, torch.randn(4, 16, generator=g))),
    ]
    check_cases(tmp_path, "shape_index_large", cases, **KW)


def test_index_out_of_range(tmp_path):
    """An index outside its dim fails the run with DOCCC_ERR_INDEX (torch
    raises IndexError) on every target, in serial and parallel loops, and
    never reads or writes outside memory; in-range inputs still run."""
    torch = require("torch")
    np = require("numpy")

    class M(torch.nn.Module):
        def forward(self, w, k, x):
            return (torch.nn.functional.embedding(k, w), w.index_select(0, k), w[k], torch.gather(x, 1, k.view(1, -1)),
                    torch.scatter_add(x, 1, k[:4].view(1, -1), x[:, :4]))

    # 512 indices: large enough for the openmp target's parallel kernels
    w = torch.randn(20, 64)
    x = torch.randn(1, 20)
    ok = torch.randint(0, 20, (512,), generator=torch.Generator().manual_seed(4))
    pt2 = tmp_path / "oob.pt2"
    torch.export.save(torch.export.export(M(), (w, ok, x)), str(pt2))
    bad = {}
    for label, pos, v in (("past the end", 300, 20), ("negative", 2, -1), ("far", 511, 2 ** 40)):
        bad[label] = ok.clone()
        bad[label][pos] = v
    for target in (("sequential", "cuda-sim") if FAST else TARGETS):
        lib = compile_model(pt2, target, tmp_path / target, "-n", "oob")
        for label, k in [("in range", ok)] + list(bad.items()):
            np.save(tmp_path / "w.npy", w.numpy())
            np.save(tmp_path / "k.npy", k.numpy())
            np.save(tmp_path / "x.npy", x.numpy())
            args = ["run", lib, "-i", tmp_path / "w.npy", "-i", tmp_path / "k.npy", "-i", tmp_path / "x.npy"]
            args += sum((["-o", tmp_path / f"o{i}.npy"] for i in range(5)), [])
            r = doccc_cmd(*args)
            if label == "in range":
                assert r.returncode == 0, f"[{target}] {label}:\n{fmt_result(r)}"
                ref = torch.nn.functional.embedding(ok, w).numpy()
                assert np.array_equal(np.load(tmp_path / "o0.npy"), ref), f"[{target}] {label}"
            else:
                assert r.returncode == 1 and "index out of range" in r.stderr, f"[{target}] {label}:\n{fmt_result(r)}"


def test_creation_and_argred(tmp_path):
    torch = require("torch")
    g = torch.Generator().manual_seed(2)
    a = torch.randn(3, 4, generator=g)
    a[1, 2] = a[1, 0] = a.max() + 1  # ties: the first index wins
    i = torch.randint(-5, 5, (3, 4), generator=g)
    h = torch.randn(2, 3, generator=g).to(torch.float16)
    s = torch.randperm(12, generator=g).view(3, 4).float()  # distinct: topk's order of ties is unspecified
    nt = torch.tensor([[1.0, float("nan"), -2.0, 1.0, float("nan"), 0.5]])
    cases = [
        Case("full", lambda x: (x + torch.full((3, 4), 2.5), torch.full((2,), 7, dtype=torch.int64),
                                torch.full((2, 2), True)), (a,)),
        Case("zeros_ones", lambda x: (torch.zeros(2, 3) + x[:2, :3], torch.ones(3, dtype=torch.int32), torch.zeros_like(x),
                                      torch.ones_like(x, dtype=torch.float64), torch.full_like(x, -1.0)), (a,)),
        Case("new_", lambda x: (x.new_zeros(2), x.new_ones((1, 2)), x.new_full((2,), 3.0)), (a,)),
        Case("empty", lambda x: (torch.empty(2, 3).fill_(1.0) + x[:2, :3], torch.empty_like(x).zero_()), (a,)),
        Case("scalar_tensor", lambda x: x * torch.scalar_tensor(3.0), (a,)),
        Case("arange", lambda x: (torch.arange(5), torch.arange(2, 11, 3), torch.arange(0.0, 1.0, 0.1),
                                  torch.arange(1, 4, dtype=torch.float16), x[:, 0] + torch.arange(3)), (a,)),
        Case("fill", lambda x: (torch.fill(x, 2.0), x.clone().fill_(torch.tensor(4.0))), (a,)),
        Case("copy", lambda x, y: x.clone().copy_(y), (a, i)),
        Case("argmax", lambda x: (x.argmax(), x.argmax(1), x.argmin(0, keepdim=True), x.t().argmax(dim=-1),
                                  x.argmax(keepdim=True)), (a,)),
        Case("max_dim", lambda x: (*torch.max(x, 1), *torch.min(x, 0, keepdim=True)), (a,)),
        Case("argred_ints", lambda x: (x.argmax(0), *torch.max(x, -1)), (i,)),
        Case("argred_f16", lambda x: torch.max(x, 1), (h,)),
        Case("cumsum", lambda x: (x.cumsum(1), x.t().cumsum(-1), x.cumsum(0, dtype=torch.float64)), (a,)),
        Case("sort", lambda x: (*torch.sort(x, 1), *torch.sort(x.t(), descending=True), *torch.sort(x, dim=0, stable=True)), (s,)),
        Case("sort_nan_ties", lambda x: (*torch.sort(x, stable=True), *torch.sort(x, descending=True, stable=True)), (nt,)),
        Case("topk", lambda x: (*torch.topk(x, 2), *torch.topk(x, 1, dim=0, largest=False)), (s,)),
        Case("sort_ints", lambda x: torch.sort(x, dim=-1, stable=True), (i,)),
        Case("cumsum_int", lambda x: x.cumsum(0), (i,)),
    ]
    check_cases(tmp_path, "shape_create", cases, **KW)


def test_sort_topk_long(tmp_path):
    """Rows longer than the sorting network's runs of 8 and the merge passes:
    ties and NaN (stable order, NaN last ascending and first descending),
    integers (whose padding of a partial run is the dtype's extreme), rows
    too long for one buffer (topk in chunks beside a running top k, sorts
    and large-k topk merged through transients)."""
    torch = require("torch")
    g = torch.Generator().manual_seed(7)
    t = torch.randint(0, 9, (3, 130), generator=g).float()  # many ties
    t[0, 5] = t[0, 77] = t[2, 129] = t[1, 0] = t[1, 64] = float("nan")
    t[2, 3] = float("inf")
    t[2, 4] = float("-inf")
    d = (torch.randperm(3 * 301, generator=g).view(3, 301).float() - 450) / 7  # distinct: topk's tie order is unspecified
    d[1, 200] = float("nan")
    big = torch.randperm(70001, generator=g).float().view(1, 70001) / 3
    hug = torch.randint(-1000, 1000, (2, 70001), generator=g).double()  # ties
    hug[1, ::1001] = float("nan")
    i64 = torch.randint(-(2 ** 62), 2 ** 62, (2, 67), generator=g)
    i64[0, :20] = i64[0, 20]
    i64[1, 3] = 2 ** 63 - 1
    i64[1, 9] = -(2 ** 63)
    i32 = torch.randint(-5, 5, (4, 45), generator=g, dtype=torch.int32)
    h = torch.randint(-3, 3, (2, 100), generator=g).to(torch.float16)
    cases = [
        Case("sort_ties_nan", lambda x: (*torch.sort(x, stable=True), *torch.sort(x, descending=True, stable=True),
                                         *torch.sort(x.t(), dim=0, stable=True)), (t,)),
        Case("sort_1d", lambda x: torch.sort(x[1], descending=True, stable=True), (t,)),
        Case("topk_large_k", lambda x: (*torch.topk(x, 300), *torch.topk(x, 37, largest=False), *torch.topk(x, 1),
                                        *torch.topk(x, 301, largest=False), *torch.topk(x.t(), 20, dim=0)), (d,)),
        Case("sort_default", lambda x: torch.sort(x, descending=True), (d,)),
        Case("topk_chunked", lambda x: (*torch.topk(x, 9), *torch.topk(x, 100, largest=False)), (big,)),
        Case("sort_ints", lambda a, b: (*torch.sort(a, stable=True), *torch.sort(a, descending=True, stable=True),
                                        *torch.sort(b, dim=1, stable=True), *torch.sort(b, dim=0, descending=True, stable=True)),
             (i64, i32)),
        Case("sort_f16", lambda x: torch.sort(x, descending=True, stable=True), (h,)),
        # rows past the buffers, merged through transients: 2 and 3 chunks
        Case("sort_huge_rows", lambda x, y: (*torch.sort(x, stable=True), *torch.sort(y, descending=True, stable=True),
                                             *torch.topk(x, 60000, largest=False)), (big, hug)),
    ]
    check_cases(tmp_path, "sort_long", cases, **KW)
