"""Sampling and bagging ops at data-dependent positions against eager PyTorch:
grid sampling (F.grid_sample: bilinear, nearest, bicubic x zeros, border,
reflection x align_corners, float32/float64/float16/bfloat16), embedding
bags (nn.EmbeddingBag, F.embedding_bag and torch's _embedding_bag* with all
four results: sum, mean, max, per_sample_weights, padding_idx,
include_last_offset, empty bags, 2-d input), masked_scatter (broadcast masks,
an empty source), take_along_dim and index_put with None among the indices.
Cases cover size-1 dims, non-contiguous inputs made in the graph and empty
tensors; out-of-range indices and a too-short source fail the run with
DOCCC_ERR_INDEX where torch raises. Few groups, because compile time
dominates."""


from harness import Case, check_cases
from conftest import TARGETS, compile_model, debug_knob, doccc_cmd, fmt_result, require

FAST = debug_knob("DOCCC_INDEX_FAST")  # one target, one IR level: for debugging
KW = dict(targets=("none",), irs=("training",)) if FAST else {}

MODES = ("bilinear", "nearest", "bicubic")
PADS = ("zeros", "border", "reflection")


def _grid(torch, g, n, h, w, span=1.3):
    """A sampling grid in [-span, span] with exact probes: the corners,
    the centre and positions whose source coordinate is a tie for nearest."""
    grid = (torch.rand(n, h, w, 2, generator=g) * 2 - 1) * span
    flat = grid.view(-1, 2)
    probes = torch.tensor([[-1.0, -1.0], [1.0, 1.0], [0.0, 0.0], [0.25, -0.5], [-2.75, 3.5], [0.5, 0.75]])
    k = min(len(probes), flat.shape[0])
    flat[:k] = probes[:k]
    return grid


def test_grid_sample(tmp_path):
    torch = require("torch")
    F = torch.nn.functional
    g = torch.Generator().manual_seed(0)
    x = torch.randn(2, 3, 5, 4, generator=g)
    grid = _grid(torch, g, 2, 3, 6)
    x1 = torch.randn(1, 2, 1, 6, generator=g)          # a size-1 input dim
    g1 = _grid(torch, g, 1, 4, 1, span=2.2)            # a size-1 output dim, far outside
    xt = torch.randn(2, 4, 3, 5, generator=g)          # permuted in the graph: (2, 3, 5, 4)

    def gs(m, p, ac):
        return lambda a, b: F.grid_sample(a, b, mode=m, padding_mode=p, align_corners=ac)

    def combos(flip):
        """every mode and padding, align_corners alternating (both for float32)"""
        return lambda a, b: tuple(gs(m, p, (i + j + flip) % 2 == 1)(a, b) for i, m in enumerate(MODES)
                                  for j, p in enumerate(PADS))

    cases = [Case(f"{m}_{p}", lambda a, b, m=m, p=p: (gs(m, p, False)(a, b), gs(m, p, True)(a, b)), (x, grid))
             for m in MODES for p in PADS]
    cases += [
        Case("size1", combos(0), (x1, g1)),
        Case("size1_flip", combos(1), (x1[..., :1], g1)),
        Case("noncontig", lambda a, b: tuple(gs(m, "reflection", False)(a.permute(0, 2, 3, 1), b[:, ::2].flip(-1))
                                             for m in MODES), (xt, grid)),
        Case("empty", lambda a, b: (gs("bilinear", "zeros", False)(a, b[:, :0]), gs("bicubic", "border", True)(a[:, :0], b)),
             (x, grid)),
        Case("f64", combos(1), (x.double(), grid.double())),
    ]
    # float16 / bfloat16 compute in their own precision, rounding every
    # operation as torch's Vectorized<Half> kernel does
    for k, dt in enumerate((torch.float16, torch.bfloat16)):
        cases.append(Case(str(dt)[6:], combos(k), (x.to(dt), grid.to(dt))))
    check_cases(tmp_path, "grid_sample", cases, **KW)


def test_embedding_bag(tmp_path):
    torch = require("torch")
    F = torch.nn.functional
    eb, ebf = torch.ops.aten._embedding_bag, torch.ops.aten._embedding_bag_forward_only
    g = torch.Generator().manual_seed(1)
    w = torch.randn(10, 4, generator=g)
    w[3, 1] = w[5, 1]  # a tie for max: the first row wins
    idx = torch.tensor([1, 2, 4, 5, 4, 3, 2, 9, 0, 3])
    ofs = torch.tensor([0, 4, 4, 7])       # bag 1 is empty
    ofs_last = torch.tensor([0, 4, 4, 7, 10])
    psw = torch.rand(10, generator=g)
    i2 = torch.randint(0, 10, (3, 4), generator=g)
    wt = torch.randn(4, 10, generator=g)   # transposed in the graph: a weight with inner stride 10 (torch's slow path)

    def bag(mode, **kw):
        return lambda W, I, O: F.embedding_bag(I, W, O, mode=mode, **kw)

    cases = [
        Case("modes", lambda W, I, O: tuple(bag(m)(W, I, O) for m in ("sum", "mean", "max")), (w, idx, ofs)),
        Case("padding_idx", lambda W, I, O: tuple(bag(m, padding_idx=p)(W, I, O) for m in ("sum", "mean", "max")
                                                  for p in (3, -6)), (w, idx, ofs)),
        Case("last_offset", lambda W, I, O: tuple(bag(m, include_last_offset=True)(W, I, O) for m in ("sum", "mean", "max")),
             (w, idx, ofs_last)),
        Case("psw", lambda W, I, O, P: (bag("sum", per_sample_weights=P)(W, I, O),
                                        bag("sum", per_sample_weights=P, include_last_offset=True, padding_idx=2)(W, I, O)),
             (w, idx, ofs_last, psw)),
        Case("input_2d", lambda W, I: (F.embedding_bag(I, W), F.embedding_bag(I, W, mode="max"),
                                       F.embedding_bag(I[:, 1:2], W, mode="mean")), (w, i2)),
        Case("module", lambda I, O: torch.nn.EmbeddingBag.from_pretrained(w, mode="mean", padding_idx=4)(I, O), (idx, ofs)),
        Case("noncontig", lambda W, I, O: tuple(bag(m)(W.t(), I, O[::2]) for m in ("sum", "mean", "max")), (wt, idx, ofs)),
        # no indices: empty bags give 0; no bags: an empty result (torch's
        # max kernel crashes on indices without bags, so that is not asked)
        Case("empty", lambda W, I, O: (*[bag(m)(W, I[:0], O[:2] * 0) for m in ("sum", "mean", "max")],
                                       bag("mean")(W, I[:0], O[:0])), (w, idx, ofs)),
        Case("int32", lambda W, I, O: bag("mean")(W, I.int(), O.int()), (w, idx, ofs)),
        # all four results; indices past the last offset: torch's fast path
        # (sum of float rows) drops them, its slow path (double, padding_idx)
        # adds them to the last bag
        Case("raw", lambda W, I, O: (*eb(W, I, O, False, 0), *eb(W, I, O, False, 1, False, None, False, 2),
                                     *eb(W, I, O, False, 2, False, None, False, 5),
                                     torch.ops.aten.embedding_bag.default(W, I, O, False, 1)[0]), (w, idx, ofs)),
        Case("raw_last", lambda W, I, O: (*eb(W, I, O[:3], False, 0, False, None, True),
                                          *eb(W.double(), I, O[:3], False, 0, False, None, True),
                                          *eb(W, I, O[:3], False, 2, False, None, True)), (w, idx, ofs)),
        # _embedding_bag_forward_only's meta records bag_size and max_indices
        # with one row per offset where eager has one per bag under
        # include_last_offset, so those two are compared without it only
        Case("forward_only", lambda W, I, O, P: (*ebf(W, I, O, False, 1, False, None, False, 3),
                                                 *ebf(W, I, O, False, 0, False, P, False),
                                                 ebf(W, I, O, False, 2, False, None, True)[0]), (w, idx, ofs, psw)),
        Case("f64", lambda W, I, O, P: (*[bag(m)(W, I, O) for m in ("sum", "mean", "max")],
                                        bag("sum", per_sample_weights=P)(W, I, O)), (w.double(), idx, ofs, psw.double())),
    ]
    for dt in (torch.float16, torch.bfloat16):
        cases.append(Case(str(dt)[6:], lambda W, I, O, P: (*[bag(m)(W, I, O) for m in ("sum", "mean", "max")],
                                                           bag("sum", per_sample_weights=P)(W, I, O),
                                                           bag("mean", padding_idx=2)(W, I, O)),
                          (w.to(dt), idx, ofs, psw.to(dt))))
    check_cases(tmp_path, "embedding_bag", cases, **KW)


def test_scatter_and_take(tmp_path):
    """masked_scatter, take_along_dim and index_put with None among the indices."""
    torch = require("torch")
    g = torch.Generator().manual_seed(2)
    a = torch.randn(3, 4, generator=g)
    m = torch.rand(3, 4, generator=g) > 0.5
    src = torch.randn(4, 3, generator=g)
    a3 = torch.randn(2, 3, 4, generator=g)
    k = torch.tensor([2, 0, 3])
    kk = torch.tensor([[1, 0], [2, 2]])
    tk = torch.tensor([[0, 3, -1], [2, -4, 1], [3, 3, 0]])
    put = torch.ops.aten.index_put.default  # torch.index_put takes no None
    cases = [
        Case("masked_scatter", lambda x, mk, s: (x.masked_scatter(mk, s), x.masked_scatter(mk[:1], s.t()),
                                                 x[0].masked_scatter(mk, s), x.t().masked_scatter(mk.t(), s[:, :2])),
             (a, m, src)),
        Case("masked_scatter_dtypes", lambda x, mk, s: (x.half().masked_scatter(mk, s.half()), x.bfloat16().masked_scatter(mk, s.bfloat16()),
                                                        x.double().masked_scatter(mk, s.double()),
                                                        (x * 10).int().masked_scatter(mk, (s * 10).int())), (a, m, src)),
        Case("masked_scatter_edge", lambda x, mk, s: (x.masked_scatter(mk & False, s[:0]), x[:0].masked_scatter(mk[:0], s),
                                                      x.masked_scatter(mk | True, s)), (a, m, src)),
        Case("take_along_dim", lambda x, i: (torch.take_along_dim(x, i.abs() % 4, 1), torch.take_along_dim(x, i, -1),
                                             torch.take_along_dim(x, i[:, :1] % 3, 0), torch.take_along_dim(x, i % 12),
                                             torch.take_along_dim(x, i[:1], 1), torch.take_along_dim(x[:, :1], i % 1, 1)),
             (a, tk)),
        Case("take_along_dim_3d", lambda x, i: torch.take_along_dim(x, i.view(2, 1, 2) % 4, 2), (a3, kk)),
        Case("index_put_none", lambda x, i, v: (put(x, [None, i], v[:, :3]),
                                                put(x, [None, i], v[:, :3], True),
                                                put(x, [None, i], v[0, :1])),
             (a, k, torch.randn(3, 4, generator=g))),
        Case("index_put_none_3d", lambda x, i, j, v: (put(x, [i, None, j], v),
                                                      put(x, [None, None, j], v[0, :, :1], True),
                                                      put(x, [None, i, j], v[:, :, :1], True),
                                                      put(x.permute(2, 1, 0), [None, i], v[:, :, 0])),
             (a3, kk % 2, kk, torch.randn(2, 2, 3, generator=g))),
    ]
    check_cases(tmp_path, "scatter_take", cases, **KW)


def test_out_of_range(tmp_path):
    """An embedding_bag index outside the table, an offset past the end and
    a masked_scatter source shorter than the mask's true count fail the run
    with DOCCC_ERR_INDEX on every target (torch raises); in-range inputs run."""
    torch = require("torch")
    np = require("numpy")
    F = torch.nn.functional

    class M(torch.nn.Module):
        def forward(self, w, i, o, mk, s):
            return F.embedding_bag(i, w, o, mode="max"), w[:2].masked_scatter(mk, s)

    w = torch.randn(20, 8)
    i = torch.randint(0, 20, (300,), generator=torch.Generator().manual_seed(5))
    o = torch.tensor([0, 100, 200])
    mk = torch.zeros(2, 8, dtype=torch.bool)
    mk[0, :3] = True
    s = torch.randn(4)
    pt2 = tmp_path / "oob.pt2"
    torch.export.save(torch.export.export(M(), (w, i, o, mk, s)), str(pt2))
    bad_i, bad_o, bad_m = i.clone(), o.clone(), mk.clone()
    bad_i[250] = 20
    bad_o[2] = 301
    bad_m[1, :2] = True  # 5 true positions, 4 source elements
    runs = [("in range", (i, o, mk)), ("index", (bad_i, o, mk)), ("offset", (i, bad_o, mk)), ("source", (i, o, bad_m))]
    for target in (("sequential", "cuda-sim") if FAST else TARGETS):
        lib = compile_model(pt2, target, tmp_path / target, "-n", "oob")
        for label, (ii, oo, mm) in runs:
            args = ["run", lib]
            for k, t in enumerate((w, ii, oo, mm, s)):
                np.save(tmp_path / f"in{k}.npy", t.numpy())
                args += ["-i", tmp_path / f"in{k}.npy"]
            args += ["-o", tmp_path / "o0.npy", "-o", tmp_path / "o1.npy"]
            r = doccc_cmd(*args)
            if label == "in range":
                assert r.returncode == 0, f"[{target}] {label}:\n{fmt_result(r)}"
                ref = F.embedding_bag(i, w, o, mode="max").numpy()
                assert np.array_equal(np.load(tmp_path / "o0.npy"), ref), f"[{target}] {label}"
            else:
                assert r.returncode == 1 and "index out of range" in r.stderr, f"[{target}] {label}:\n{fmt_result(r)}"
