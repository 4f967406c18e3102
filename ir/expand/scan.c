/*
 * scan.c - expansion of the row-sequential library nodes: scans (cumsum,
 * cumprod, logcumsumexp, cummax, cummin), binary search (searchsorted,
 * bucketize, the indices of repeat_interleave) and im2col (unfold).
 *
 * A scan is one map nest over the rows (every dim but the scanned one) and
 * in each row one N_FOR along the dim that carries the accumulator, a
 * scalar local of the row loop, and stores each output element once: O(n)
 * per row. The accumulator has PyTorch's CPU accumulation type (double for
 * float32/float64 sums and products and log-sum-exp, float for
 * float16/bfloat16, int64 for integers); cummax/cummin keep the input's
 * dtype and the index of the running extreme.
 *
 * A binary search is one map nest over the output; each element runs
 * bit_length(M) halvings of [lo, hi) over its sorted row of M elements
 * (locals lo and hi, read into value symbols that address the row), the
 * loop of torch's cus_lower_bound / cus_upper_bound step for step, so NaN
 * values and NaN boundaries land where torch puts them. Reads at the
 * midpoint of an empty range (lo == hi == M) are guarded.
 */
#include <math.h>

#include "expand.h"

/* The loops over every dim of shape[0..rank) but skip (-1: none) into
 * seq, their variables in oi (oi[skip] NULL); one loop of one iteration
 * if there are no such dims, so that a loop always owns the row's locals.
 * Returns the innermost loop. */
static Node *xp_rows(Sdfg *g, Node *seq, int rank, Expr *const *shape, int skip, Expr **oi)
{
	Node *row = NULL;
	for (int d = 0; d < rank; d++) {
		oi[d] = NULL;
		if (d == skip)
			continue;
		int v;
		row = xp_loop(g, row ? row->body : seq, N_MAP, "r", ex_int(g, 0), shape[d], 1, &v);
		oi[d] = ex_sym(g, v);
	}
	if (!row) {
		int v;
		row = xp_loop(g, seq, N_MAP, "r", ex_int(g, 0), ex_int(g, 1), 1, &v);
	}
	return row;
}

/* A tasklet of n operands appended to block b; T1..T3 spell it for the
 * block `b` and graph `g` in scope. */
static int tk(Sdfg *g, Node *b, TCode c, Dtype dt, int n, Operand a0, Operand a1, Operand a2)
{
	Operand in[3] = {a0, a1, a2};
	return sdfg_tasklet(g, b, c, dt, n, in);
}
#define T1(c, dt, a) tk(g, b, c, dt, 1, a, opd_const(0), opd_const(0))
#define T2(c, dt, a, x) tk(g, b, c, dt, 2, a, x, opd_const(0))
#define T3(c, dt, a, x, y) tk(g, b, c, dt, 3, a, x, y)

/* ---- scans ------------------------------------------------------------------------------------- */

/* log(exp(x) + exp(a)) as torch's _log_add_exp_helper: NaN propagates
 * (dc_min / dc_max do), equal infinities give x, else
 * log1p(exp(min - max)) + max. */
static int log_add_exp(Sdfg *g, Node *b, Dtype adt, int x, int a)
{
	int mn = T2(T_MIN, adt, opd_val(x), opd_val(a)), mx = T2(T_MAX, adt, opd_val(x), opd_val(a));
	int d = T2(T_SUB, adt, opd_val(mn), opd_val(mx));
	int e = T1(T_EXP, adt, opd_val(d));
	int lp = T1(T_LOG1P, adt, opd_val(e));
	int r = T2(T_ADD, adt, opd_val(lp), opd_val(mx));
	int eq = T2(T_EQ, DT_I64, opd_val(mn), opd_val(mx));
	int inf = T1(T_ISINF, DT_I64, opd_val(mn));
	int same = T2(T_AND, DT_I64, opd_val(eq), opd_val(inf));
	return T3(T_WHERE, adt, opd_val(same), opd_val(x), opd_val(r));
}

int expand_scan(Sdfg *g, LibNode *l, Node *seq, const char *label, const XpTile *tile)
{
	(void)tile;
	int x = l->in[0], out = l->out[0], idxs = l->nout > 1 ? l->out[1] : -1;
	Container *xc = sdfg_c(g, x), *o = sdfg_c(g, out);
	int mode = (int)lib_int(l, "mode", CS_SUM), dim = (int)lib_int(l, "dim", 0), r = o->rank;
	int ext = mode == CS_MAX || mode == CS_MIN;
	Dtype adt = ext ? xc->dt : !dtype_info[o->dt].isfloat ? DT_I64 : o->dt == DT_F32 || o->dt == DT_F64 ? DT_F64 : DT_F32;
	Expr *oi[MAXDIM], *none[1] = {NULL};
	Node *row = xp_rows(g, seq, r, o->shape, r ? dim : -1, oi);
	int acc = xp_local(g, "acc", adt, 0, NULL, row), bi = ext ? xp_local(g, "bi", DT_I64, 0, NULL, row) : -1;
	/* acc = the identity, or the row's first element for the extremes */
	Node *b = xp_block(g, row->body, label);
	if (r)
		oi[dim] = ex_int(g, 0);
	Operand init = ext ? opd_mem(x, r, oi) : opd_const(mode == CS_PROD ? 1 : mode == CS_LSE ? -INFINITY : 0);
	sdfg_store(b, T1(T_ASSIGN, adt, init), xp_memlet(acc, 0, none), W_NONE);
	if (ext)
		sdfg_store(b, T1(T_ASSIGN, DT_I64, opd_const(0)), xp_memlet(bi, 0, none), W_NONE);
	int v;
	Node *lp = xp_loop(g, row->body, N_FOR, "k", ex_int(g, 0), r ? o->shape[dim] : ex_int(g, 1), 1, &v);
	if (r)
		oi[dim] = ex_sym(g, v);
	b = xp_block(g, lp->body, label);
	/* the element in the output's dtype first (torch converts self to it),
	 * then in the accumulator's */
	int xv = T1(T_ASSIGN, ext ? xc->dt : o->dt, opd_mem(x, r, oi));
	if (lib_int(l, "nonneg", 0)) /* repeat_interleave's repeats: negative ones fail the run, as in torch */
		xv = T2(T_INDEX, DT_I64, opd_val(xv), opd_expr(ex_int(g, INT64_MAX)));
	if (!ext && adt != o->dt)
		xv = T1(T_ASSIGN, adt, opd_val(xv));
	int av = T1(T_ASSIGN, adt, opd_mem(acc, 0, none)), nv;
	if (mode == CS_SUM || mode == CS_PROD)
		nv = T2(mode == CS_SUM ? T_ADD : T_MUL, adt, opd_val(av), opd_val(xv));
	else if (mode == CS_LSE)
		nv = log_add_exp(g, b, adt, xv, av);
	else {
		/* torch's cummax_cummin_helper: x replaces the running extreme if
		 * x is NaN, or neither is and x >= it (<= for cummin): ties and
		 * NaNs move the index to the latest one */
		int better = T2(mode == CS_MAX ? T_GE : T_LE, DT_I64, opd_val(xv), opd_val(av));
		if (dtype_info[adt].isfloat) {
			int xn = T1(T_ISNAN, DT_I64, opd_val(xv)), an = T1(T_ISNAN, DT_I64, opd_val(av));
			int ok = T2(T_SUB, DT_I64, opd_const(1), opd_val(an));
			better = T2(T_AND, DT_I64, opd_val(better), opd_val(ok));
			better = T2(T_OR, DT_I64, opd_val(better), opd_val(xn));
		}
		nv = T3(T_WHERE, adt, opd_val(better), opd_val(xv), opd_val(av));
		int ni = T3(T_WHERE, DT_I64, opd_val(better), opd_expr(ex_sym(g, v)), opd_mem(bi, 0, none));
		sdfg_store(b, ni, xp_memlet(bi, 0, none), W_NONE);
		sdfg_store(b, T1(T_ASSIGN, DT_I64, opd_val(ni)), xp_memlet(idxs, r, oi), W_NONE);
	}
	sdfg_store(b, nv, xp_memlet(acc, 0, none), W_NONE);
	sdfg_store(b, T1(T_ASSIGN, o->dt, opd_val(nv)), xp_memlet(out, r, oi), W_NONE);
	return 0;
}

/* ---- binary search ------------------------------------------------------------------------------
 * in[0] the sorted boundaries [..., M] (1-d: shared by every value; else
 * one row per leading index of the output), in[1] the values (the
 * output's shape) or -1: the constant "value", or with "iota" the output
 * position itself; in[2] an optional sorter (the boundaries' shape: row
 * positions in sorted order). "right": upper bound (first boundary > v),
 * else lower bound (first boundary >= v); compared in dtype "cdt". */

int expand_search(Sdfg *g, LibNode *l, Node *seq, const char *label, const XpTile *tile)
{
	(void)tile;
	int bd = l->in[0], vals = l->nin > 1 ? l->in[1] : -1, sorter = l->nin > 2 ? l->in[2] : -1, out = l->out[0];
	Container *bc = sdfg_c(g, bd), *o = sdfg_c(g, out);
	int right = (int)lib_int(l, "right", 0), iota = (int)lib_int(l, "iota", 0), br = bc->rank, r = o->rank;
	Dtype cdt = (Dtype)lib_int(l, "cdt", bc->dt);
	int64_t M = 0;
	ex_isint(bc->shape[br - 1], &M);
	int bits = M > 0 ? 64 - __builtin_clzll((uint64_t)M) : 0;
	Expr *oi[MAXDIM], *none[1] = {NULL};
	Node *row = xp_rows(g, seq, r, o->shape, -1, oi);
	int lo = xp_local(g, "lo", DT_I64, 0, NULL, row), hi = xp_local(g, "hi", DT_I64, 0, NULL, row);
	int val = xp_local(g, "val", cdt, 0, NULL, row);
	Node *b = xp_block(g, row->body, label);
	sdfg_store(b, T1(T_ASSIGN, DT_I64, opd_const(0)), xp_memlet(lo, 0, none), W_NONE);
	sdfg_store(b, T1(T_ASSIGN, DT_I64, opd_expr(ex_int(g, M))), xp_memlet(hi, 0, none), W_NONE);
	Operand v0 = vals >= 0 ? opd_mem(vals, r, oi) : iota ? opd_expr(oi[0]) : opd_const(lib_float(l, "value", 0));
	sdfg_store(b, T1(vals >= 0 ? T_CAST : T_ASSIGN, cdt, v0), xp_memlet(val, 0, none), W_NONE);

	int vt;
	Node *lp = xp_loop(g, row->body, N_FOR, "h", ex_int(g, 0), ex_int(g, bits), 1, &vt);
	b = xp_block(g, lp->body, label);
	int a = T1(T_ASSIGN, DT_I64, opd_mem(lo, 0, none)), c = T1(T_ASSIGN, DT_I64, opd_mem(hi, 0, none));
	Expr *si = ex_sym(g, sdfg_bind(g, b, a, "lo", INT64_MIN, INT64_MAX));
	Expr *sj = ex_sym(g, sdfg_bind(g, b, c, "hi", INT64_MIN, INT64_MAX));
	int active = T2(T_LT, DT_I64, opd_val(a), opd_val(c));
	Expr *mid = ex_add(g, si, ex_div(g, ex_sub(g, sj, si), ex_int(g, 2))), *bi[MAXDIM];
	for (int q = 0; q < br - 1; q++)
		bi[q] = oi[q];
	bi[br - 1] = mid;
	Expr *pos = mid;
	if (sorter >= 0) {
		/* the sorter's entry at mid (0 past the end): the boundary's place in its row */
		pos = xp_bind_index(g, b, opd_guarded(sorter, br, bi, 0), ex_int(g, M), 0);
		bi[br - 1] = pos;
	}
	int mv = T1(T_CAST, cdt, opd_guarded(bd, br, bi, 0));
	int vv = T1(T_ASSIGN, cdt, opd_mem(val, 0, none));
	/* go right unless boundary >= v (left) / boundary > v (right), as !(...) so NaN goes right */
	int cmp = T2(right ? T_GT : T_GE, DT_I64, opd_val(mv), opd_val(vv));
	int nc = T2(T_SUB, DT_I64, opd_const(1), opd_val(cmp));
	int gor = T2(T_AND, DT_I64, opd_val(active), opd_val(nc));
	int gol = T2(T_SUB, DT_I64, opd_val(active), opd_val(gor));
	sdfg_store(b, T3(T_WHERE, DT_I64, opd_val(gor), opd_expr(ex_addi(g, mid, 1)), opd_expr(si)), xp_memlet(lo, 0, none), W_NONE);
	sdfg_store(b, T3(T_WHERE, DT_I64, opd_val(gol), opd_expr(mid), opd_expr(sj)), xp_memlet(hi, 0, none), W_NONE);
	b = xp_block(g, row->body, label);
	int res = T1(T_ASSIGN, DT_I64, opd_mem(lo, 0, none));
	int64_t total = lib_int(l, "total", -1);
	if (total >= 0 && M > 0) {
		/* repeat_interleave: the repeats must sum to output_size (the
		 * check's value, 0, is added to the result so that it stays) */
		Expr *last[MAXDIM] = {ex_int(g, M - 1)};
		int t = T2(T_SUB, DT_I64, opd_mem(bd, 1, last), opd_expr(ex_int(g, total)));
		int ck = T2(T_INDEX, DT_I64, opd_val(t), opd_expr(ex_int(g, 1)));
		res = T2(T_ADD, DT_I64, opd_val(res), opd_val(ck));
	}
	sdfg_store(b, T1(T_ASSIGN, o->dt, opd_val(res)), xp_memlet(out, r, oi), W_NONE);
	return 0;
}

/* ---- im2col (unfold) --------------------------------------------------------------------------------
 * out [N,] C, kh, kw, Lh, Lw (the lowering views it as [N,] C*kh*kw, L):
 * out[n, c, i, j, y, x] = in[n, c, y*sh - ph + i*dh, x*sw - pw + j*dw],
 * 0 outside the image. */

int expand_im2col(Sdfg *g, LibNode *l, Node *seq, const char *label, const XpTile *tile)
{
	(void)tile;
	int in = l->in[0], out = l->out[0];
	Container *x = sdfg_c(g, in), *o = sdfg_c(g, out);
	int64_t dl[2], pd[2], st[2];
	lib_ints(l, "dilation", dl, 2);
	lib_ints(l, "padding", pd, 2);
	lib_ints(l, "stride", st, 2);
	int vars[MAXDIM];
	Node *body = xp_nest(g, seq, out, vars);
	Node *b = xp_block(g, body, label);
	Expr **O = xp_vars(g, o->rank, vars), *xi[MAXDIM];
	int bt = o->rank - 5; /* 1 if batched */
	for (int d = 0; d <= bt; d++)
		xi[d] = O[d];
	for (int k = 0; k < 2; k++)
		xi[bt + 1 + k] = ex_add(g, ex_addi(g, ex_muli(g, O[bt + 3 + k], st[k]), -pd[k]), ex_muli(g, O[bt + 1 + k], dl[k]));
	sdfg_store(b, T1(T_ASSIGN, o->dt, opd_guarded(in, x->rank, xi, 0)), xp_memlet(out, o->rank, O), W_NONE);
	return 0;
}
