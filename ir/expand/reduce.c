/*
 * reduce.c - expansion of the reduce family's library nodes: reductions
 * over dims (the vector norms' too), arg-reductions, scans, sorts and the
 * picks of sorted rows, binary searches and histograms. Each section
 * says how.
 *
 * What they share: a row (every index but the reduced, scanned or sorted
 * dim) is one iteration of a map nest over the output, and what a row
 * carries (an accumulator, the running extreme and its index, a sort's
 * buffers, a search's bounds) lives in locals of that loop, so each
 * output element is stored once. Accumulation types are torch's CPU
 * kernels' (double for float32 var/std, logsumexp and the scans' sums and
 * products, int64 for integers), so results match torch's rounding.
 */
#include <math.h>
#include <string.h>

#include "expand.h"

/* A scalar accumulator owned by loop `owner`, or a rank-0 transient at top level. */
static int acc_local(Sdfg *g, const char *name, Dtype dt, Node *owner)
{
	if (owner)
		return xp_local(g, name, dt, 0, NULL, owner);
	int c = sdfg_add_container(g, name, dt, CK_TRANSIENT, 0, NULL);
	sdfg_c(g, c)->origin = "";
	return c;
}

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

/* ---- reductions ------------------------------------------------------------------ */

/* One pass over the reduced dims of `in` (N_FOR loops inside body); ovars
 * index the kept dims. Returns the innermost block and fills idx. */
static Node *reduce_pass(Sdfg *g, Node *body, int in, const int *red, int keep, const int *ovars, Expr **idx,
                         const char *label)
{
	Container *x = sdfg_c(g, in);
	Node *inner = body;
	for (int d = 0, od = 0; d < x->rank; d++) {
		if (red[d]) {
			int v;
			Node *lp = xp_loop(g, inner, N_FOR, "r", ex_int(g, 0), x->shape[d], 1, &v);
			inner = lp->body;
			idx[d] = ex_sym(g, v);
			if (keep)
				od++;
		} else
			idx[d] = ex_sym(g, ovars[od++]);
	}
	return xp_block(g, inner, label);
}

/* Vector p-norms (RD_NORM_, attr "p"), as PyTorch's CPU norm kernels: the
 * accumulator (float for float16/bfloat16 and float32, else the output's
 * dtype) takes |x|^p per element (p = 0: x != 0, a count; p = 1: |x|;
 * p = 2: x*x; p = +-inf: the max / min of |x|, NaN propagating), then
 * acc^(1/p) (2: sqrt; 0, 1, +-inf: acc itself). */
static void norm_step(Sdfg *g, Node *rb, int in, Expr **idx, int acc, Dtype adt, double p)
{
	Expr *none[1] = {NULL};
	Operand xv[1] = {opd_mem(in, sdfg_c(g, in)->rank, idx)};
	int x = sdfg_tasklet(g, rb, T_ASSIGN, adt, 1, xv), t;
	Operand a1[1] = {opd_val(x)};
	if (p == 0) {
		Operand ne[2] = {opd_val(x), opd_const(0)};
		t = sdfg_tasklet(g, rb, T_NE, adt, 2, ne);
	} else if (p == 2) {
		Operand sq[2] = {opd_val(x), opd_val(x)};
		t = sdfg_tasklet(g, rb, T_MUL, adt, 2, sq);
	} else {
		t = sdfg_tasklet(g, rb, T_ABS, adt, 1, a1);
		if (p != 1 && !isinf(p)) {
			Operand pw[2] = {opd_val(t), opd_const(p)};
			t = sdfg_tasklet(g, rb, T_POW, adt, 2, pw);
		}
	}
	Operand ac[2] = {opd_mem(acc, 0, none), opd_val(t)};
	TCode c = p == INFINITY ? T_MAX : p == -INFINITY ? T_MIN : T_ADD;
	sdfg_store(rb, sdfg_tasklet(g, rb, c, adt, 2, ac), xp_memlet(acc, 0, none), W_NONE);
}

static void norm_final(Sdfg *g, Node *fb, int acc, Dtype adt, double p, int out, Expr **oidx)
{
	Expr *none[1] = {NULL};
	Container *o = sdfg_c(g, out);
	Operand a[2] = {opd_mem(acc, 0, none), opd_const(1 / p)};
	int v = p == 2 ? sdfg_tasklet(g, fb, T_SQRT, adt, 1, a)
	      : p == 0 || p == 1 || isinf(p) ? sdfg_tasklet(g, fb, T_ASSIGN, adt, 1, a)
	      : sdfg_tasklet(g, fb, T_POW, adt, 2, a);
	Operand cv[1] = {opd_val(v)};
	sdfg_store(fb, sdfg_tasklet(g, fb, T_ASSIGN, o->dt, 1, cv), xp_memlet(out, o->rank, oidx), W_NONE);
}

/* Sum, mean, max, min, prod, any, all accumulate in one pass; var/std make
 * two (mean, then the sum of squared deviations, divided by count minus
 * the correction); logsumexp two (max, then the sum of exp(x - max)).
 * float32 sums accumulate in float32 like PyTorch's kernels; var/std and
 * logsumexp in double. */
int expand_reduce(Sdfg *g, LibNode *l, Node *seq, const char *label, const XpTile *tile)
{
	(void)tile;
	int in = l->in[0], out = l->out[0], mout = l->nout > 1 ? l->out[1] : -1;
	Container *x = sdfg_c(g, in), *o = sdfg_c(g, out);
	int64_t dims[MAXDIM];
	int nd = lib_ints(l, "dims", dims, MAXDIM);
	int red[MAXDIM] = {0};
	for (int i = 0; i < nd; i++)
		red[dims[i]] = 1;
	int keep = o->rank == x->rank;
	/* Output loops over kept dims. */
	int ovars[MAXDIM];
	Node *body = xp_nest(g, seq, out, ovars);
	Node *owner = o->rank ? body->parent : NULL;
	int mode = (int)lib_int(l, "mode", RD_SUM);
	int twopass = mode == RD_VAR_ || mode == RD_STD_ || mode == RD_LSE_;
	Dtype adt = o->dt == DT_F16 || o->dt == DT_BF16 ? DT_F32 : o->dt;
	if (mode == RD_ANY_ || mode == RD_ALL_)
		adt = DT_BOOL;
	if (twopass)
		adt = DT_F64;
	Expr *none[1] = {NULL};
	int acc, acc2 = -1;
	if (owner) {
		acc = xp_local(g, "acc", adt, 0, NULL, owner);
		if (twopass)
			acc2 = xp_local(g, "acc2", adt, 0, NULL, owner);
	} else {
		acc = sdfg_add_container(g, "acc", adt, CK_TRANSIENT, 0, NULL);
		sdfg_c(g, acc)->origin = "";
		if (twopass) {
			acc2 = sdfg_add_container(g, "acc2", adt, CK_TRANSIENT, 0, NULL);
			sdfg_c(g, acc2)->origin = "";
		}
	}
	/* the number of reduced elements; a run-time one (a reduced batch dim)
	 * divides the mean as an expression (var/std are static there) */
	int64_t count = 1;
	Expr *countx = NULL;
	for (int d = 0; d < x->rank; d++) {
		int64_t n = 0;
		if (red[d] && !ex_isint(x->shape[d], &n))
			countx = countx ? ex_mul(g, countx, x->shape[d]) : x->shape[d];
		else if (red[d])
			count *= n;
	}
	if (countx)
		countx = ex_muli(g, countx, count);
	Node *ib = xp_block(g, body, label);
	double p = lib_float(l, "p", 2);
	double init = mode == RD_MAX || mode == RD_LSE_ ? -INFINITY : mode == RD_MIN || (mode == RD_NORM_ && p == -INFINITY) ? INFINITY
	            : mode == RD_PROD_ || mode == RD_ALL_ ? 1 : 0;
	Operand z[1] = {opd_const(init)}, z0[1] = {opd_const(0)};
	sdfg_store(ib, sdfg_tasklet(g, ib, T_ASSIGN, adt, 1, z), xp_memlet(acc, 0, none), W_NONE);
	if (twopass)
		sdfg_store(ib, sdfg_tasklet(g, ib, T_ASSIGN, adt, 1, z0), xp_memlet(acc2, 0, none), W_NONE);
	/* Inner loops over reduced dims, in order (innermost = last dim). */
	Expr *idx[MAXDIM];
	Node *rb = reduce_pass(g, body, in, red, keep, ovars, idx, label);
	if (mode == RD_NORM_) {
		norm_step(g, rb, in, idx, acc, adt, p);
		norm_final(g, xp_block(g, body, label), acc, adt, p, out, xp_vars(g, o->rank, ovars));
		return 0;
	}
	Operand rd[2] = {opd_mem(acc, 0, none), opd_mem(in, x->rank, idx)};
	TCode c = mode == RD_MAX || mode == RD_LSE_ ? T_MAX : mode == RD_MIN ? T_MIN : mode == RD_PROD_ ? T_MUL
	        : mode == RD_ANY_ ? T_OR : mode == RD_ALL_ ? T_AND : T_ADD;
	if (mode == RD_ANY_ || mode == RD_ALL_) {
		Operand cv[1] = {rd[1]};
		rd[1] = opd_val(sdfg_tasklet(g, rb, T_CAST, DT_BOOL, 1, cv));
	}
	sdfg_store(rb, sdfg_tasklet(g, rb, c, adt, 2, rd), xp_memlet(acc, 0, none), W_NONE);
	Node *fb = xp_block(g, body, label);
	Expr **oidx = xp_vars(g, o->rank, ovars);
	if (!twopass) {
		Operand fin[2] = {opd_mem(acc, 0, none), countx ? opd_expr(countx) : opd_const((double)count)};
		int v = sdfg_tasklet(g, fb, mode == RD_MEAN ? T_DIV : T_ASSIGN, o->dt, mode == RD_MEAN ? 2 : 1, fin);
		sdfg_store(fb, v, xp_memlet(out, o->rank, oidx), W_NONE);
		return 0;
	}
	if (mode == RD_LSE_) {
		/* m = isinf(max) ? 0 : max, as torch does */
		Operand ab[1] = {opd_mem(acc, 0, none)};
		int av = sdfg_tasklet(g, fb, T_ABS, adt, 1, ab);
		Operand eq[2] = {opd_val(av), opd_const(INFINITY)};
		int isinf_ = sdfg_tasklet(g, fb, T_EQ, DT_BOOL, 2, eq);
		Operand wh[3] = {opd_val(isinf_), opd_const(0), opd_mem(acc, 0, none)};
		sdfg_store(fb, sdfg_tasklet(g, fb, T_WHERE, adt, 3, wh), xp_memlet(acc, 0, none), W_NONE);
	} else {
		Operand mn[2] = {opd_mem(acc, 0, none), countx ? opd_expr(countx) : opd_const((double)count)};
		sdfg_store(fb, sdfg_tasklet(g, fb, T_DIV, adt, 2, mn), xp_memlet(acc, 0, none), W_NONE);
	}
	Node *sb = reduce_pass(g, body, in, red, keep, ovars, idx, label);
	Operand dd[2] = {opd_mem(in, x->rank, idx), opd_mem(acc, 0, none)};
	int dv = sdfg_tasklet(g, sb, T_SUB, adt, 2, dd);
	int sq;
	if (mode == RD_LSE_) {
		Operand e[1] = {opd_val(dv)};
		sq = sdfg_tasklet(g, sb, T_EXP, adt, 1, e);
	} else {
		Operand m2[2] = {opd_val(dv), opd_val(dv)};
		sq = sdfg_tasklet(g, sb, T_MUL, adt, 2, m2);
	}
	Operand ad[2] = {opd_mem(acc2, 0, none), opd_val(sq)};
	sdfg_store(sb, sdfg_tasklet(g, sb, T_ADD, adt, 2, ad), xp_memlet(acc2, 0, none), W_NONE);
	Node *eb = xp_block(g, body, label);
	int v;
	if (mode == RD_LSE_) {
		Operand lg[1] = {opd_mem(acc2, 0, none)};
		int lv = sdfg_tasklet(g, eb, T_LOG, adt, 1, lg);
		Operand ad2[2] = {opd_val(lv), opd_mem(acc, 0, none)};
		v = sdfg_tasklet(g, eb, T_ADD, o->dt, 2, ad2);
	} else {
		double denom = (double)count - lib_float(l, "correction", 1);
		Operand vd[2] = {opd_mem(acc2, 0, none), opd_const(denom > 0 ? denom : 0)};
		v = sdfg_tasklet(g, eb, T_DIV, adt, 2, vd);
		if (mode == RD_STD_) {
			Operand sq1[1] = {opd_val(v)};
			v = sdfg_tasklet(g, eb, T_SQRT, adt, 1, sq1);
		}
		Operand cv[1] = {opd_val(v)};
		v = sdfg_tasklet(g, eb, T_ASSIGN, o->dt, 1, cv);
		if (mout >= 0) {
			Operand mv[1] = {opd_mem(acc, 0, none)};
			int m = sdfg_tasklet(g, eb, T_ASSIGN, sdfg_c(g, mout)->dt, 1, mv);
			sdfg_store(eb, m, xp_memlet(mout, o->rank, oidx), W_NONE);
		}
	}
	sdfg_store(eb, v, xp_memlet(out, o->rank, oidx), W_NONE);
	return 0;
}

/* ---- argmax / argmin / max.dim / min.dim: first extreme wins, NaN counts as the extreme ---- */

int expand_argred(Sdfg *g, LibNode *l, Node *seq, const char *label, const XpTile *tile)
{
	(void)tile;
	int x = l->in[0], vals = l->out[0], idxs = l->out[1];
	Container *xc = sdfg_c(g, x);
	int ref = idxs >= 0 ? idxs : vals;
	Container *o = sdfg_c(g, ref);
	int dim = (int)lib_int(l, "dim", 0), keep = (int)lib_int(l, "keepdim", 0), ismin = (int)lib_int(l, "min", 0);
	int ov[MAXDIM];
	Node *body = xp_nest(g, seq, ref, ov);
	Node *owner = o->rank ? body->parent : NULL;
	int best = acc_local(g, "best", xc->dt, owner), bi = acc_local(g, "bi", DT_I64, owner);
	Expr *none[1] = {NULL}, *xi[MAXDIM];
	for (int d = 0, k = 0; d < xc->rank; d++) {
		if (d == dim) {
			xi[d] = ex_int(g, 0);
			if (keep)
				k++;
		} else
			xi[d] = ex_sym(g, ov[k++]);
	}
	Node *ib = xp_block(g, body, label);
	Operand i0[1] = {opd_mem(x, xc->rank, xi)};
	sdfg_store(ib, sdfg_tasklet(g, ib, T_ASSIGN, xc->dt, 1, i0), xp_memlet(best, 0, none), W_NONE);
	Operand z[1] = {opd_const(0)};
	sdfg_store(ib, sdfg_tasklet(g, ib, T_ASSIGN, DT_I64, 1, z), xp_memlet(bi, 0, none), W_NONE);
	int v;
	Node *lp = xp_loop(g, body, N_FOR, "k", ex_int(g, 1), xc->shape[dim], 1, &v);
	Expr *xk[MAXDIM];
	for (int d = 0; d < xc->rank; d++)
		xk[d] = d == dim ? ex_sym(g, v) : xi[d];
	Node *b = xp_block(g, lp->body, label);
	Operand ld[1] = {opd_mem(x, xc->rank, xk)};
	int cur = sdfg_tasklet(g, b, T_ASSIGN, xc->dt, 1, ld);
	Operand lb[1] = {opd_mem(best, 0, none)};
	int bv = sdfg_tasklet(g, b, T_ASSIGN, xc->dt, 1, lb);
	Operand cmp[2] = {opd_val(cur), opd_val(bv)};
	int better = sdfg_tasklet(g, b, ismin ? T_LT : T_GT, DT_I64, 2, cmp);
	if (dtype_info[xc->dt].isfloat) {
		Operand n1[1] = {opd_val(cur)}, n2[1] = {opd_val(bv)};
		int cn = sdfg_tasklet(g, b, T_ISNAN, DT_I64, 1, n1);
		int bn = sdfg_tasklet(g, b, T_ISNAN, DT_I64, 1, n2);
		Operand nb[1] = {opd_val(bn)};
		int nbn = sdfg_tasklet(g, b, T_NOT, DT_I64, 1, nb);
		Operand an[2] = {opd_val(cn), opd_val(nbn)};
		int nanwin = sdfg_tasklet(g, b, T_AND, DT_I64, 2, an);
		Operand orr[2] = {opd_val(better), opd_val(nanwin)};
		better = sdfg_tasklet(g, b, T_OR, DT_I64, 2, orr);
	}
	Operand s1[3] = {opd_val(better), opd_val(cur), opd_val(bv)};
	sdfg_store(b, sdfg_tasklet(g, b, T_WHERE, xc->dt, 3, s1), xp_memlet(best, 0, none), W_NONE);
	Operand s2[3] = {opd_val(better), opd_expr(ex_sym(g, v)), opd_mem(bi, 0, none)};
	sdfg_store(b, sdfg_tasklet(g, b, T_WHERE, DT_I64, 3, s2), xp_memlet(bi, 0, none), W_NONE);
	Node *fb = xp_block(g, body, label);
	Expr **O = xp_vars(g, o->rank, ov);
	if (vals >= 0) {
		Operand f[1] = {opd_mem(best, 0, none)};
		sdfg_store(fb, sdfg_tasklet(g, fb, T_ASSIGN, sdfg_c(g, vals)->dt, 1, f), xp_memlet(vals, o->rank, O), W_NONE);
	}
	if (idxs >= 0) {
		Operand f[1] = {opd_mem(bi, 0, none)};
		sdfg_store(fb, sdfg_tasklet(g, fb, T_ASSIGN, DT_I64, 1, f), xp_memlet(idxs, o->rank, O), W_NONE);
	}
	return 0;
}

/* ---- scans --------------------------------------------------------------------------
 * A scan is one map nest over the rows (every dim but the scanned one) and
 * in each row one N_FOR along the dim that carries the accumulator, a
 * scalar local of the row loop, and stores each output element once: O(n)
 * per row. The accumulator has PyTorch's CPU accumulation type (double for
 * float32/float64 sums and products and log-sum-exp, float for
 * float16/bfloat16, int64 for integers); cummax/cummin keep the input's
 * dtype and the index of the running extreme. */

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

/* ---- sort / topk: a bottom-up merge sort per row ------------------------------------
 * Each row (all indices but dim) is sorted with its indices in local
 * buffers: first runs of 8 elements by a sorting network (read straight
 * from the input), then log2(n/8) passes of merges between two ping-pong
 * buffers, pass p merging the neighbouring runs of 8*2^p elements. Both
 * are stable, which gives torch.sort(stable=True)'s order: the network
 * breaks ties by index, and a merge takes from the right run only what
 * orders strictly before the left run's head (NaN orders after every
 * number ascending and before them descending, as torch; torch.topk's
 * results match for distinct values, its order of ties is unspecified).
 * Merge cursors are scalar locals read into value symbols, which address
 * the runs. topk keeps only the first k of every merged run, about
 * n*log2(2k/8) merge steps instead of n*log2(n/8). Rows too long for the
 * buffers (XpTile.row_bytes per row: 256 KiB of stack on the CPU, half a
 * GPU thread's locals on the GPU) go in chunks of a power of
 * two: topk merges each chunk's first k into a running top k; a sort (or
 * a topk whose k outgrows the chunk) stores each sorted chunk into a
 * transient of all rows, and further passes merge its runs pairwise, each
 * into a fresh transient. O(n log n) per row, and each element of an
 * output or transient is stored once (the locals take the repeated
 * stores). Sizes known only at run time (and a 0-d input) fall back to
 * rank counting: output position j holds the element that j others order
 * before, O(n^2) per output element. */

/* 1 where a orders strictly before c (int64 0/1). Floats: NaN after
 * every number ascending, before them descending; ascending that is
 * (a == a) - (a >= c), descending (c == c) - (a <= c). */
static int sort_before(Sdfg *g, Node *b, int a, int c, int desc, Dtype dt)
{
	Operand cmp[2] = {opd_val(a), opd_val(c)};
	if (!dtype_info[dt].isfloat)
		return sdfg_tasklet(g, b, desc ? T_GT : T_LT, DT_I64, 2, cmp);
	int ge = sdfg_tasklet(g, b, desc ? T_LE : T_GE, DT_I64, 2, cmp);
	Operand self[2] = {opd_val(desc ? c : a), opd_val(desc ? c : a)};
	int num = sdfg_tasklet(g, b, T_EQ, DT_I64, 2, self);
	Operand d[2] = {opd_val(num), opd_val(ge)};
	return sdfg_tasklet(g, b, T_SUB, DT_I64, 2, d);
}

/* Rank counting (any sizes, a scalar too). */
static int sort_ranks(Sdfg *g, LibNode *l, Node *seq, const char *label)
{
	int x = l->in[0], vals = l->out[0], idxs = l->out[1];
	Container *xc = sdfg_c(g, x);
	int ref = vals >= 0 ? vals : idxs;
	Container *o = sdfg_c(g, ref);
	int dim = (int)lib_int(l, "dim", 0), desc = (int)lib_int(l, "descending", 0);
	int ov[MAXDIM];
	Node *body = xp_nest(g, seq, ref, ov);
	Node *owner = o->rank ? body->parent : NULL;
	Expr **O = xp_vars(g, o->rank, ov);
	Expr *none[1] = {NULL};
	int bv = acc_local(g, "val", xc->dt, owner), bi = acc_local(g, "idx", DT_I64, owner);
	Node *ib = xp_block(g, body, label);
	Operand z[1] = {opd_const(0)};
	sdfg_store(ib, sdfg_tasklet(g, ib, T_ASSIGN, xc->dt, 1, z), xp_memlet(bv, 0, none), W_NONE);
	sdfg_store(ib, sdfg_tasklet(g, ib, T_ASSIGN, DT_I64, 1, z), xp_memlet(bi, 0, none), W_NONE);
	if (xc->rank == 0) {
		/* a scalar sorts to itself */
		Node *b = xp_block(g, body, label);
		Operand a[1] = {opd_mem(x, 0, none)};
		sdfg_store(b, sdfg_tasklet(g, b, T_ASSIGN, xc->dt, 1, a), xp_memlet(bv, 0, none), W_NONE);
	} else {
		int vi, vk;
		Node *li = xp_loop(g, body, N_FOR, "i", ex_int(g, 0), xc->shape[dim], 1, &vi);
		int cnt = xp_local(g, "rank", DT_I64, 0, NULL, li);
		Node *b0 = xp_block(g, li->body, label);
		sdfg_store(b0, sdfg_tasklet(g, b0, T_ASSIGN, DT_I64, 1, z), xp_memlet(cnt, 0, none), W_NONE);
		Node *lk = xp_loop(g, li->body, N_FOR, "k", ex_int(g, 0), xc->shape[dim], 1, &vk);
		Expr *xi[MAXDIM], *xk[MAXDIM];
		for (int d = 0; d < xc->rank; d++) {
			xi[d] = d == dim ? ex_sym(g, vi) : O[d];
			xk[d] = d == dim ? ex_sym(g, vk) : O[d];
		}
		Node *b = xp_block(g, lk->body, label);
		Operand la[1] = {opd_mem(x, xc->rank, xk)}, lb[1] = {opd_mem(x, xc->rank, xi)};
		int a = sdfg_tasklet(g, b, T_ASSIGN, xc->dt, 1, la), c = sdfg_tasklet(g, b, T_ASSIGN, xc->dt, 1, lb);
		int before = sort_before(g, b, a, c, desc, xc->dt);
		/* equal (or both NaN) and earlier */
		int eq1 = sort_before(g, b, c, a, desc, xc->dt);
		Operand ne[2] = {opd_val(before), opd_val(eq1)};
		int neither = sdfg_tasklet(g, b, T_OR, DT_I64, 2, ne);
		Operand nn[1] = {opd_val(neither)};
		int tie = sdfg_tasklet(g, b, T_NOT, DT_I64, 1, nn);
		Operand lt[2] = {opd_expr(ex_sym(g, vk)), opd_expr(ex_sym(g, vi))};
		int earlier = sdfg_tasklet(g, b, T_LT, DT_I64, 2, lt);
		Operand te[2] = {opd_val(tie), opd_val(earlier)};
		int tb = sdfg_tasklet(g, b, T_AND, DT_I64, 2, te);
		Operand ob[2] = {opd_val(before), opd_val(tb)};
		int cb = sdfg_tasklet(g, b, T_OR, DT_I64, 2, ob);
		Operand ad[2] = {opd_mem(cnt, 0, none), opd_val(cb)};
		sdfg_store(b, sdfg_tasklet(g, b, T_ADD, DT_I64, 2, ad), xp_memlet(cnt, 0, none), W_NONE);
		Node *b1 = xp_block(g, li->body, label);
		Operand eq[2] = {opd_mem(cnt, 0, none), opd_expr(O[dim])};
		int hit = sdfg_tasklet(g, b1, T_EQ, DT_I64, 2, eq);
		Operand sv[3] = {opd_val(hit), opd_mem(x, xc->rank, xi), opd_mem(bv, 0, none)};
		sdfg_store(b1, sdfg_tasklet(g, b1, T_WHERE, xc->dt, 3, sv), xp_memlet(bv, 0, none), W_NONE);
		Operand si[3] = {opd_val(hit), opd_expr(ex_sym(g, vi)), opd_mem(bi, 0, none)};
		sdfg_store(b1, sdfg_tasklet(g, b1, T_WHERE, DT_I64, 3, si), xp_memlet(bi, 0, none), W_NONE);
	}
	Node *fb = xp_block(g, body, label);
	if (vals >= 0) {
		Operand f[1] = {opd_mem(bv, 0, none)};
		sdfg_store(fb, sdfg_tasklet(g, fb, T_ASSIGN, o->dt, 1, f), xp_memlet(vals, o->rank, O), W_NONE);
	}
	if (idxs >= 0) {
		Operand f[1] = {opd_mem(bi, 0, none)};
		sdfg_store(fb, sdfg_tasklet(g, fb, T_ASSIGN, DT_I64, 1, f), xp_memlet(idxs, o->rank, O), W_NONE);
	}
	return 0;
}

/* Value and index buffers: locals v[C], ix[C] of one row (row NULL), or
 * transients v[R][n + 1], ix[R][n + 1] of all rows (row: this one's). */
typedef struct {
	int v, ix;
	Expr *row;
} SortBuf;

static Memlet sort_at(int c, Expr *row, Expr *pos)
{
	Expr *i[2] = {row ? row : pos, pos};
	return xp_memlet(c, row ? 2 : 1, i);
}

static Operand sort_rd(int c, Expr *row, Expr *pos)
{
	Memlet m = sort_at(c, row, pos);
	return opd_mem(c, row ? 2 : 1, m.idx);
}

/* Into seq: the stable merge of run a[alo, aend) with the later run
 * b[blo, bend) into d[dpos, dpos + cnt) (cnt at most the two lengths'
 * sum), with cursor locals owned by loop owner. */
static void sort_merge(Sdfg *g, Node *seq, Node *owner, const char *label, int desc, Dtype vdt, Dtype idt, SortBuf a,
                       Expr *alo, Expr *aend, SortBuf b, Expr *blo, Expr *bend, SortBuf d, Expr *dpos, Expr *cnt)
{
	Expr *none[1] = {NULL};
	int ci = xp_local(g, "ci", DT_I64, 0, NULL, owner), cj = xp_local(g, "cj", DT_I64, 0, NULL, owner);
	Node *ib = xp_block(g, seq, label);
	Operand i0[1] = {opd_expr(alo)}, j0[1] = {opd_expr(blo)};
	sdfg_store(ib, sdfg_tasklet(g, ib, T_ASSIGN, DT_I64, 1, i0), xp_memlet(ci, 0, none), W_NONE);
	sdfg_store(ib, sdfg_tasklet(g, ib, T_ASSIGN, DT_I64, 1, j0), xp_memlet(cj, 0, none), W_NONE);
	int vt;
	Node *lt = xp_loop(g, seq, N_FOR, "t", ex_int(g, 0), cnt, 1, &vt);
	Node *k = xp_block(g, lt->body, label);
	Operand li[1] = {opd_mem(ci, 0, none)}, lj[1] = {opd_mem(cj, 0, none)};
	int ti = sdfg_tasklet(g, k, T_ASSIGN, DT_I64, 1, li), tj = sdfg_tasklet(g, k, T_ASSIGN, DT_I64, 1, lj);
	Expr *si = ex_sym(g, sdfg_bind(g, k, ti, "si", INT64_MIN, INT64_MAX));
	Expr *sj = ex_sym(g, sdfg_bind(g, k, tj, "sj", INT64_MIN, INT64_MAX));
	/* the heads (a spent cursor reads the buffers' spare last element) */
	Operand ha[1] = {sort_rd(a.v, a.row, si)}, hb[1] = {sort_rd(b.v, b.row, sj)};
	int va = sdfg_tasklet(g, k, T_ASSIGN, vdt, 1, ha), vb = sdfg_tasklet(g, k, T_ASSIGN, vdt, 1, hb);
	/* take b's head if b has one and a has none or b's orders strictly first */
	int bfirst = sort_before(g, k, vb, va, desc, vdt);
	Operand ad[2] = {opd_expr(si), opd_expr(aend)}, bh[2] = {opd_expr(sj), opd_expr(bend)};
	int adone = sdfg_tasklet(g, k, T_GE, DT_I64, 2, ad), bhas = sdfg_tasklet(g, k, T_LT, DT_I64, 2, bh);
	Operand o1[2] = {opd_val(adone), opd_val(bfirst)};
	int t1 = sdfg_tasklet(g, k, T_OR, DT_I64, 2, o1);
	Operand o2[2] = {opd_val(bhas), opd_val(t1)};
	int takeb = sdfg_tasklet(g, k, T_AND, DT_I64, 2, o2);
	Expr *di = ex_add(g, dpos, ex_sym(g, vt));
	Operand wv[3] = {opd_val(takeb), opd_val(vb), opd_val(va)};
	sdfg_store(k, sdfg_tasklet(g, k, T_WHERE, vdt, 3, wv), sort_at(d.v, d.row, di), W_NONE);
	Operand wi[3] = {opd_val(takeb), sort_rd(b.ix, b.row, sj), sort_rd(a.ix, a.row, si)};
	sdfg_store(k, sdfg_tasklet(g, k, T_WHERE, idt, 3, wi), sort_at(d.ix, d.row, di), W_NONE);
	Operand nj[2] = {opd_expr(sj), opd_val(takeb)}, ni[2] = {opd_expr(ex_addi(g, si, 1)), opd_val(takeb)};
	sdfg_store(k, sdfg_tasklet(g, k, T_ADD, DT_I64, 2, nj), xp_memlet(cj, 0, none), W_NONE);
	sdfg_store(k, sdfg_tasklet(g, k, T_SUB, DT_I64, 2, ni), xp_memlet(ci, 0, none), W_NONE);
}

/* Into seq: for j in [0, cnt) d[dofs + j] = s[j] (both buffers; dofs
 * NULL for 0), or the outputs when d is NULL (oi: the row's index). */
static void sort_copy(Sdfg *g, Node *seq, const char *label, SortBuf s, const SortBuf *d, Expr *dofs, Expr *cnt, int vals,
                      int idxs, int dim, Expr **oi)
{
	int vj;
	Node *lj = xp_loop(g, seq, N_MAP, "j", ex_int(g, 0), cnt, 1, &vj);
	Node *b = xp_block(g, lj->body, label);
	Expr *j[1] = {ex_sym(g, vj)}, *at = dofs ? ex_add(g, dofs, j[0]) : j[0];
	Operand rv[1] = {sort_rd(s.v, s.row, j[0])}, ri[1] = {sort_rd(s.ix, s.row, j[0])};
	if (d) {
		sdfg_store(b, sdfg_tasklet(g, b, T_ASSIGN, sdfg_c(g, s.v)->dt, 1, rv), sort_at(d->v, d->row, at), W_NONE);
		sdfg_store(b, sdfg_tasklet(g, b, T_ASSIGN, sdfg_c(g, s.ix)->dt, 1, ri), sort_at(d->ix, d->row, at), W_NONE);
		return;
	}
	Expr *o[MAXDIM];
	int r = sdfg_c(g, vals >= 0 ? vals : idxs)->rank;
	for (int q = 0; q < r; q++)
		o[q] = q == dim ? j[0] : oi[q];
	if (vals >= 0)
		sdfg_store(b, sdfg_tasklet(g, b, T_ASSIGN, sdfg_c(g, vals)->dt, 1, rv), xp_memlet(vals, r, o), W_NONE);
	if (idxs >= 0)
		sdfg_store(b, sdfg_tasklet(g, b, T_ASSIGN, DT_I64, 1, ri), xp_memlet(idxs, r, o), W_NONE);
}

/* Into seq (the row loop `owner`'s body): the pick of sorted row s of n
 * elements (ascending, NaN last) into the outputs at the row's index oi
 * (the dim's index 0: keepdim shape). PK_KTH: position k (torch.kthvalue;
 * torch's quickselect may return another index among equal values);
 * PK_MEDIAN: the first NaN if the row has one, else position (n-1)/2;
 * PK_NANMEDIAN: position (number of non-NaN - 1)/2, 0 if all are NaN
 * (torch.median / nanmedian; the row's order breaks ties by index, as
 * their comparators do); PK_MODE: the last element of the first longest
 * run of equal values (torch.mode: smallest most frequent value, at its
 * last occurrence, as torch's sort of the row leaves it for rows of up to
 * 16 elements). */
static void sort_pick(Sdfg *g, Node *seq, Node *owner, const char *label, SortBuf s, const LibNode *l, int64_t n,
                      int vals, int idxs, int dim, Expr **oi)
{
	int pick = (int)lib_int(l, "pick", PK_NONE);
	Container *ref = sdfg_c(g, vals >= 0 ? vals : idxs);
	Dtype vdt = sdfg_c(g, s.v)->dt;
	Expr *o[MAXDIM], *none[1] = {NULL}, *pos = ex_int(g, pick == PK_KTH ? lib_int(l, "k", 0) : (n - 1) / 2);
	for (int q = 0; q < ref->rank; q++)
		o[q] = q == dim ? ex_int(g, 0) : oi[q];
	Operand z[1] = {opd_const(0)};
	int vj;
	if (pick == PK_MODE) {
		int run = xp_local(g, "run", DT_I64, 0, NULL, owner), best = xp_local(g, "best", DT_I64, 0, NULL, owner);
		int mv = xp_local(g, "mval", vdt, 0, NULL, owner), mi = xp_local(g, "midx", DT_I64, 0, NULL, owner);
		Node *ib = xp_block(g, seq, label);
		sdfg_store(ib, sdfg_tasklet(g, ib, T_ASSIGN, DT_I64, 1, z), xp_memlet(run, 0, none), W_NONE);
		sdfg_store(ib, sdfg_tasklet(g, ib, T_ASSIGN, DT_I64, 1, z), xp_memlet(best, 0, none), W_NONE);
		sdfg_store(ib, sdfg_tasklet(g, ib, T_ASSIGN, vdt, 1, z), xp_memlet(mv, 0, none), W_NONE);
		sdfg_store(ib, sdfg_tasklet(g, ib, T_ASSIGN, DT_I64, 1, z), xp_memlet(mi, 0, none), W_NONE);
		Node *lj = xp_loop(g, seq, N_FOR, "j", ex_int(g, 0), ex_int(g, n), 1, &vj);
		Node *b = xp_block(g, lj->body, label);
		Expr *j = ex_sym(g, vj);
		Operand ra[1] = {sort_rd(s.v, s.row, j)}, rn[1] = {sort_rd(s.v, s.row, ex_min(g, ex_addi(g, j, 1), ex_int(g, n - 1)))};
		int a = sdfg_tasklet(g, b, T_ASSIGN, vdt, 1, ra), nx = sdfg_tasklet(g, b, T_ASSIGN, vdt, 1, rn);
		Operand ne[2] = {opd_val(a), opd_val(nx)}, last[2] = {opd_expr(j), opd_const((double)(n - 1))};
		int d1 = sdfg_tasklet(g, b, T_NE, DT_I64, 2, ne), d2 = sdfg_tasklet(g, b, T_EQ, DT_I64, 2, last);
		Operand eo[2] = {opd_val(d1), opd_val(d2)};
		int end = sdfg_tasklet(g, b, T_OR, DT_I64, 2, eo);
		Operand fr[2] = {opd_mem(run, 0, none), opd_const(1)};
		int freq = sdfg_tasklet(g, b, T_ADD, DT_I64, 2, fr);
		Operand gt[2] = {opd_val(freq), opd_mem(best, 0, none)};
		int more = sdfg_tasklet(g, b, T_GT, DT_I64, 2, gt);
		Operand up[2] = {opd_val(end), opd_val(more)};
		int upd = sdfg_tasklet(g, b, T_AND, DT_I64, 2, up);
		Operand w1[3] = {opd_val(upd), opd_val(a), opd_mem(mv, 0, none)};
		Operand w2[3] = {opd_val(upd), sort_rd(s.ix, s.row, j), opd_mem(mi, 0, none)};
		Operand w3[3] = {opd_val(upd), opd_val(freq), opd_mem(best, 0, none)};
		Operand w4[3] = {opd_val(end), opd_const(0), opd_val(freq)};
		sdfg_store(b, sdfg_tasklet(g, b, T_WHERE, vdt, 3, w1), xp_memlet(mv, 0, none), W_NONE);
		sdfg_store(b, sdfg_tasklet(g, b, T_WHERE, DT_I64, 3, w2), xp_memlet(mi, 0, none), W_NONE);
		sdfg_store(b, sdfg_tasklet(g, b, T_WHERE, DT_I64, 3, w3), xp_memlet(best, 0, none), W_NONE);
		sdfg_store(b, sdfg_tasklet(g, b, T_WHERE, DT_I64, 3, w4), xp_memlet(run, 0, none), W_NONE);
		Node *fb = xp_block(g, seq, label);
		Operand fv[1] = {opd_mem(mv, 0, none)}, fi[1] = {opd_mem(mi, 0, none)};
		if (vals >= 0)
			sdfg_store(fb, sdfg_tasklet(g, fb, T_ASSIGN, vdt, 1, fv), xp_memlet(vals, ref->rank, o), W_NONE);
		if (idxs >= 0)
			sdfg_store(fb, sdfg_tasklet(g, fb, T_ASSIGN, DT_I64, 1, fi), xp_memlet(idxs, ref->rank, o), W_NONE);
		return;
	}
	Node *fb;
	if ((pick == PK_MEDIAN || pick == PK_NANMEDIAN) && dtype_info[vdt].isfloat) {
		/* count the row's NaNs */
		int cnt = xp_local(g, "nans", DT_I64, 0, NULL, owner);
		Node *ib = xp_block(g, seq, label);
		sdfg_store(ib, sdfg_tasklet(g, ib, T_ASSIGN, DT_I64, 1, z), xp_memlet(cnt, 0, none), W_NONE);
		Node *lj = xp_loop(g, seq, N_FOR, "j", ex_int(g, 0), ex_int(g, n), 1, &vj);
		Node *b = xp_block(g, lj->body, label);
		Operand rv[1] = {sort_rd(s.v, s.row, ex_sym(g, vj))};
		Operand nn[1] = {opd_val(sdfg_tasklet(g, b, T_ASSIGN, vdt, 1, rv))};
		Operand ad[2] = {opd_mem(cnt, 0, none), opd_val(sdfg_tasklet(g, b, T_ISNAN, DT_I64, 1, nn))};
		sdfg_store(b, sdfg_tasklet(g, b, T_ADD, DT_I64, 2, ad), xp_memlet(cnt, 0, none), W_NONE);
		fb = xp_block(g, seq, label);
		Operand c[1] = {opd_mem(cnt, 0, none)};
		int cv = sdfg_tasklet(g, fb, T_ASSIGN, DT_I64, 1, c), pv;
		Operand left[2] = {opd_const((double)n), opd_val(cv)};
		int good = sdfg_tasklet(g, fb, T_SUB, DT_I64, 2, left);
		if (pick == PK_MEDIAN) {
			Operand any[2] = {opd_val(cv), opd_const(0)};
			Operand w[3] = {opd_val(sdfg_tasklet(g, fb, T_GT, DT_I64, 2, any)), opd_val(good), opd_expr(pos)};
			pv = sdfg_tasklet(g, fb, T_WHERE, DT_I64, 3, w);
		} else {
			Operand m1[2] = {opd_val(good), opd_const(1)};
			Operand m2[2] = {opd_val(sdfg_tasklet(g, fb, T_SUB, DT_I64, 2, m1)), opd_const(0)};
			Operand h[2] = {opd_val(sdfg_tasklet(g, fb, T_MAX, DT_I64, 2, m2)), opd_const(2)};
			pv = sdfg_tasklet(g, fb, T_DIV, DT_I64, 2, h);
		}
		pos = ex_sym(g, sdfg_bind(g, fb, pv, "pos", INT64_MIN, INT64_MAX));
	} else
		fb = xp_block(g, seq, label);
	Operand rv[1] = {sort_rd(s.v, s.row, pos)}, ri[1] = {sort_rd(s.ix, s.row, pos)};
	if (vals >= 0)
		sdfg_store(fb, sdfg_tasklet(g, fb, T_ASSIGN, vdt, 1, rv), xp_memlet(vals, ref->rank, o), W_NONE);
	if (idxs >= 0)
		sdfg_store(fb, sdfg_tasklet(g, fb, T_ASSIGN, DT_I64, 1, ri), xp_memlet(idxs, ref->rank, o), W_NONE);
}

/* The sorted row s into the outputs: its first K elements, or its pick. */
static void sort_out(Sdfg *g, Node *owner, const char *label, SortBuf s, const LibNode *l, int64_t n, Expr *Kx,
                     int vals, int idxs, int dim, Expr **oi)
{
	if (lib_int(l, "pick", PK_NONE) != PK_NONE)
		sort_pick(g, owner->body, owner, label, s, l, n, vals, idxs, dim, oi);
	else
		sort_copy(g, owner->body, label, s, NULL, NULL, Kx, vals, idxs, dim, oi);
}

/* Runs of SORT_RUN elements sorted at once by an optimal sorting network
 * (19 compare-exchanges, depth 6; Knuth, TAOCP 5.3.4). */
#define SORT_RUN 8

static const int sort_net[19][2] = {
	{0, 2}, {1, 3}, {4, 6}, {5, 7}, {0, 4}, {1, 5}, {2, 6}, {3, 7}, {0, 1}, {2, 3},
	{4, 5}, {6, 7}, {2, 4}, {3, 5}, {1, 4}, {3, 6}, {1, 2}, {3, 4}, {5, 6},
};

/* Into block b: elements pos[0..SORT_RUN) of the row (xi with dim set per
 * element) sorted into d[at, at + SORT_RUN) with their indices. The
 * comparator breaks ties by index, which makes the network stable;
 * positions past the row (n) read a value that orders last, their index
 * keeping them behind real equals. */
static void sort_network(Sdfg *g, Node *b, int x, Expr **xi, int dim, int64_t n, Expr *const *pos, int desc, Dtype idt,
                         SortBuf d, Expr *at)
{
	Container *xc = sdfg_c(g, x);
	Dtype vdt = xc->dt;
	int v[SORT_RUN], ix[SORT_RUN];
	for (int e = 0; e < SORT_RUN; e++) {
		xi[dim] = pos[e];
		int64_t lo, hi;
		int past = !ex_range(g, pos[e], &lo, &hi) || hi >= n;
		Operand rd[1] = {past ? opd_guarded(x, xc->rank, xi, 0) : opd_mem(x, xc->rank, xi)};
		v[e] = sdfg_tasklet(g, b, T_ASSIGN, vdt, 1, rd);
		if (past) {
			Operand in[2] = {opd_expr(pos[e]), opd_expr(ex_int(g, n))};
			int ok = sdfg_tasklet(g, b, T_LT, DT_I64, 2, in);
			/* the last value: NaN ascending, -inf descending; integers' extremes */
			Operand last = dtype_info[vdt].isfloat ? opd_const(desc ? -INFINITY : NAN) : opd_const(desc ? 0 : 1);
			if (!dtype_info[vdt].isfloat && vdt != DT_BOOL) {
				int bits = 8 * dtype_info[vdt].size;
				int64_t mx = vdt == DT_U8 ? 255 : bits == 64 ? INT64_MAX : ((int64_t)1 << (bits - 1)) - 1;
				/* -2^63 is exact as a double; 2^63 - 1 only as an integer expression */
				last = desc ? opd_const(vdt == DT_U8 ? 0.0 : (double)(-mx - 1)) : opd_expr(ex_int(g, mx));
			}
			Operand w[3] = {opd_val(ok), opd_val(v[e]), last};
			v[e] = sdfg_tasklet(g, b, T_WHERE, vdt, 3, w);
		}
		Operand ip[1] = {opd_expr(pos[e])};
		ix[e] = sdfg_tasklet(g, b, T_ASSIGN, idt, 1, ip);
	}
	for (int k = 0; k < 19; k++) {
		int p = sort_net[k][0], q = sort_net[k][1];
		/* swap when q's element orders before p's: by value, or equal by index */
		int qf = sort_before(g, b, v[q], v[p], desc, vdt), pf = sort_before(g, b, v[p], v[q], desc, vdt);
		Operand il[2] = {opd_val(ix[q]), opd_val(ix[p])}, nb[1] = {opd_val(pf)};
		int ilt = sdfg_tasklet(g, b, T_LT, DT_I64, 2, il), npf = sdfg_tasklet(g, b, T_NOT, DT_I64, 1, nb);
		Operand t[2] = {opd_val(ilt), opd_val(npf)};
		int tie = sdfg_tasklet(g, b, T_AND, DT_I64, 2, t);
		Operand o[2] = {opd_val(qf), opd_val(tie)};
		int sw = sdfg_tasklet(g, b, T_OR, DT_I64, 2, o);
		Operand a1[3] = {opd_val(sw), opd_val(v[q]), opd_val(v[p])}, a2[3] = {opd_val(sw), opd_val(v[p]), opd_val(v[q])};
		Operand b1[3] = {opd_val(sw), opd_val(ix[q]), opd_val(ix[p])}, b2[3] = {opd_val(sw), opd_val(ix[p]), opd_val(ix[q])};
		int nvp = sdfg_tasklet(g, b, T_WHERE, vdt, 3, a1), nvq = sdfg_tasklet(g, b, T_WHERE, vdt, 3, a2);
		int nip = sdfg_tasklet(g, b, T_WHERE, idt, 3, b1), niq = sdfg_tasklet(g, b, T_WHERE, idt, 3, b2);
		v[p] = nvp, v[q] = nvq, ix[p] = nip, ix[q] = niq;
	}
	for (int e = 0; e < SORT_RUN; e++) {
		Expr *o[1] = {ex_addi(g, at, e)};
		sdfg_store(b, v[e], xp_memlet(d.v, 1, o), W_NONE);
		sdfg_store(b, ix[e], xp_memlet(d.ix, 1, o), W_NONE);
	}
}

/* The loops over the rows of x (every dim but dim; one iteration for a
 * 1-d x, so that a loop owns the row's buffers), into seq: oi[d] their
 * variables, *lin the row's number; returns the innermost loop. */
static Node *sort_rows(Sdfg *g, Node *seq, Container *xc, int dim, Expr **oi, Expr **lin)
{
	Node *row = NULL;
	*lin = ex_int(g, 0);
	for (int d = 0; d < xc->rank; d++) {
		oi[d] = NULL;
		if (d != dim) {
			int v;
			row = xp_loop(g, row ? row->body : seq, N_MAP, "r", ex_int(g, 0), xc->shape[d], 1, &v);
			oi[d] = ex_sym(g, v);
			*lin = ex_add(g, ex_mul(g, *lin, xc->shape[d]), oi[d]);
		}
	}
	if (!row) {
		int v;
		row = xp_loop(g, seq, N_MAP, "r", ex_int(g, 0), ex_int(g, 1), 1, &v);
	}
	return row;
}

/* Value and index transients of R rows of n elements, plus the spare one. */
static SortBuf sort_rows_buf(Sdfg *g, const char *name, Dtype vdt, Dtype idt, int64_t R, int64_t n)
{
	int64_t sh[2] = {R, n + 1};
	SortBuf b = {sdfg_add_container(g, arena_printf(g->arena, "%s_val", name), vdt, CK_TRANSIENT, 2, sh),
	             sdfg_add_container(g, arena_printf(g->arena, "%s_idx", name), idt, CK_TRANSIENT, 2, sh), NULL};
	sdfg_c(g, b.v)->origin = sdfg_c(g, b.ix)->origin = "";
	return b;
}

int expand_sort(Sdfg *g, LibNode *l, Node *seq, const char *label, const XpTile *tile)
{
	int x = l->in[0], vals = l->out[0], idxs = l->out[1];
	Container *xc = sdfg_c(g, x);
	int dim = (int)lib_int(l, "dim", 0), desc = (int)lib_int(l, "descending", 0);
	int64_t n = -1, K = -1, C;
	if (xc->rank == 0 || sdfg_numel(g, x) < 0 || !ex_isint(xc->shape[dim], &n) ||
	    !ex_isint(sdfg_c(g, vals >= 0 ? vals : idxs)->shape[dim], &K) || n <= 0) {
		if (lib_int(l, "pick", PK_NONE) != PK_NONE) {
			diag_error(g->src, "node '%s': internal: a pick of sorted rows needs static sizes", label);
			return -1;
		}
		return sort_ranks(g, l, seq, label);
	}
	if (lib_int(l, "pick", PK_NONE) != PK_NONE)
		K = n; /* the whole row sorted, then one element picked */
	Dtype vdt = xc->dt, idt = n <= INT32_MAX ? DT_I32 : DT_I64;
	int64_t esz = dtype_info[vdt].size + dtype_info[idt].size, R = sdfg_numel(g, x) / n;
	/* The row in one chunk if its two buffers fit, else chunks of a power
	 * of two: beside a running top k if that fits too (topk), else each
	 * sorted into a transient of all rows, whose runs of C further passes
	 * merge through fresh transients (each element stored once). */
	for (C = n; C > 0 && 2 * C * esz + (C < n && C >= K ? K * esz : 0) > tile->row_bytes;)
		C = C < n ? C / 2 : (int64_t)1 << (63 - __builtin_clzll((uint64_t)n - 1));
	int64_t nch = (n + C - 1) / C;
	int running = nch > 1 && C >= K;

	Expr *oi[MAXDIM], *lin;
	Node *row = sort_rows(g, seq, xc, dim, oi, &lin), *cur = row->body;
	/* buffers of whole runs, plus one spare element that spent merge
	 * cursors read (and never use) */
	int64_t csh[1] = {(C + SORT_RUN - 1) / SORT_RUN * SORT_RUN + 1}, ksh[1] = {K + 1};
	SortBuf buf[2], top = {-1, -1, NULL}, all = {-1, -1, NULL};
	for (int i = 0; i < 2; i++)
		buf[i] = (SortBuf){xp_local(g, "sval", vdt, 1, csh, row), xp_local(g, "sidx", idt, 1, csh, row), NULL};
	if (running)
		top = (SortBuf){xp_local(g, "tval", vdt, 1, ksh, row), xp_local(g, "tidx", idt, 1, ksh, row), NULL};
	else if (nch > 1) {
		all = sort_rows_buf(g, "sorted", vdt, idt, R, n);
		all.row = lin;
	}

	/* chunk ch: elements [base, base + m) */
	Node *chunk = row, *body = cur;
	Expr *base = ex_int(g, 0), *m = ex_int(g, n);
	if (nch > 1) {
		int vch;
		chunk = xp_loop(g, cur, N_FOR, "ch", ex_int(g, 0), ex_int(g, nch), 1, &vch);
		body = chunk->body;
		base = ex_muli(g, ex_sym(g, vch), C);
		m = ex_min(g, ex_int(g, C), ex_sub(g, ex_int(g, n), base));
	}
	/* runs of SORT_RUN by the network, then pass p merges the runs of
	 * w = SORT_RUN * 2^p pairwise, each keeping at most K */
	int vq;
	Node *lq = xp_loop(g, body, N_MAP, "q", ex_int(g, 0), ex_div(g, ex_addi(g, m, SORT_RUN - 1), ex_int(g, SORT_RUN)), 1, &vq);
	Node *nb0 = xp_block(g, lq->body, label);
	Expr *at = ex_muli(g, ex_sym(g, vq), SORT_RUN), *pos[SORT_RUN], *xi[MAXDIM];
	for (int e = 0; e < SORT_RUN; e++)
		pos[e] = ex_addi(g, ex_add(g, base, at), e);
	for (int d = 0; d < xc->rank; d++)
		xi[d] = oi[d];
	sort_network(g, nb0, x, xi, dim, n, pos, desc, idt, buf[0], at);
	int p = 0;
	Expr *Kx = ex_int(g, K);
	for (int64_t w = SORT_RUN; w < C; w *= 2, p++) {
		int vb;
		Expr *nb = ex_div(g, ex_addi(g, m, 2 * w - 1), ex_int(g, 2 * w));
		Node *lb = xp_loop(g, body, N_MAP, "b", ex_int(g, 0), nb, 1, &vb);
		Expr *lo = ex_muli(g, ex_sym(g, vb), 2 * w);
		Expr *mid = ex_min(g, ex_addi(g, lo, w), m), *hi = ex_min(g, ex_addi(g, lo, 2 * w), m);
		Expr *la = ex_min(g, ex_sub(g, mid, lo), Kx), *lr = ex_min(g, ex_sub(g, hi, mid), Kx);
		sort_merge(g, lb->body, lb, label, desc, vdt, idt, buf[p % 2], lo, ex_add(g, lo, la), buf[p % 2], mid,
		           ex_add(g, mid, lr), buf[(p + 1) % 2], lo, ex_min(g, ex_add(g, la, lr), Kx));
	}
	if (nch == 1) {
		sort_out(g, row, label, buf[p % 2], l, n, Kx, vals, idxs, dim, oi);
		return 0;
	}
	Expr *zero = ex_int(g, 0), *rc = ex_min(g, m, Kx);
	if (running) {
		/* the running top k (of the chunks before) and this chunk's,
		 * merged through the free buffer */
		Expr *tc = ex_min(g, Kx, base), *nc = ex_min(g, ex_add(g, tc, rc), Kx);
		sort_merge(g, body, chunk, label, desc, vdt, idt, top, zero, tc, buf[p % 2], zero, rc, buf[(p + 1) % 2], zero, nc);
		sort_copy(g, body, label, buf[(p + 1) % 2], &top, NULL, nc, -1, -1, dim, oi);
		sort_out(g, row, label, top, l, n, Kx, vals, idxs, dim, oi);
		return 0;
	}
	/* the chunk's first k into its place in `all`, then merge passes over
	 * all rows, each into a fresh transient */
	sort_copy(g, body, label, buf[p % 2], &all, base, rc, -1, -1, dim, oi);
	Expr *N = ex_int(g, n);
	for (int64_t w = C; w < n; w *= 2) {
		SortBuf src = all;
		all = sort_rows_buf(g, "merged", vdt, idt, R, n);
		row = sort_rows(g, seq, xc, dim, oi, &lin);
		src.row = all.row = lin;
		int vb;
		Node *lb = xp_loop(g, row->body, N_MAP, "b", zero, ex_int(g, (n + 2 * w - 1) / (2 * w)), 1, &vb);
		Expr *lo = ex_muli(g, ex_sym(g, vb), 2 * w);
		Expr *mid = ex_min(g, ex_addi(g, lo, w), N), *hi = ex_min(g, ex_addi(g, lo, 2 * w), N);
		Expr *la = ex_min(g, ex_sub(g, mid, lo), Kx), *lr = ex_min(g, ex_sub(g, hi, mid), Kx);
		sort_merge(g, lb->body, lb, label, desc, vdt, idt, src, lo, ex_add(g, lo, la), src, mid, ex_add(g, mid, lr), all,
		           lo, ex_min(g, ex_add(g, la, lr), Kx));
	}
	row = sort_rows(g, seq, xc, dim, oi, &lin);
	all.row = lin;
	sort_out(g, row, label, all, l, n, Kx, vals, idxs, dim, oi);
	return 0;
}

/* ---- binary search ------------------------------------------------------------------
 * in[0] the sorted boundaries [..., M] (1-d: shared by every value; else
 * one row per leading index of the output), in[1] the values (the
 * output's shape) or -1: the constant "value", or with "iota" the output
 * position itself; in[2] an optional sorter (the boundaries' shape: row
 * positions in sorted order). "right": upper bound (first boundary > v),
 * else lower bound (first boundary >= v); compared in dtype "cdt".
 * One map nest over the output; each element runs bit_length(M) halvings
 * of [lo, hi) over its sorted row of M elements (locals lo and hi, read
 * into value symbols that address the row), the loop of torch's
 * cus_lower_bound / cus_upper_bound step for step, so NaN values and NaN
 * boundaries land where torch puts them. Reads at the midpoint of an empty
 * range (lo == hi == M) are guarded. */

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

/* ---- histc ----------------------------------------------------------------------------
 * torch's CPU kernel (LINEAR_INTERPOLATION) in the input's dtype: an
 * element x in [lo, hi] (NaN is not) counts in bin trunc((x - lo) * bins /
 * (hi - lo)), the last bin also taking hi. One sequential pass over the
 * input adds 1 or 0 to the bin of each element (an element outside the
 * range adds 0 to the bin of lo), after the bins are zeroed; float16 and
 * bfloat16 count in a float32 transient (exact to 2^24, where torch's
 * half-precision count stalls at 2048) copied into the output. With the
 * data's range (inputs 1 and 2) each element's block reads it, widens an
 * empty one by 1 each side, and a run-time assertion first checks it is
 * finite, as torch does. */

/* The range's end k: the constant in dtype dt (rounded as torch's bin
 * edges are), or the data's, widened when empty. */
static int histc_end(Sdfg *g, Node *b, LibNode *l, int k, Dtype dt)
{
	if (l->in[1] < 0)
		return xp_tk1(g, b, T_ASSIGN, dt, opd_const(lib_float(l, k ? "max" : "min", 0)));
	Expr *none[1] = {NULL};
	int lo = xp_tk1(g, b, T_ASSIGN, dt, opd_mem(l->in[1], 0, none)), hi = xp_tk1(g, b, T_ASSIGN, dt, opd_mem(l->in[2], 0, none));
	int eq = xp_tk2(g, b, T_EQ, dt, opd_val(lo), opd_val(hi));
	int v = k ? hi : lo;
	int wide = xp_tk2(g, b, k ? T_ADD : T_SUB, dt, opd_val(v), opd_const(1));
	return xp_tk3(g, b, T_WHERE, dt, opd_val(eq), opd_val(wide), opd_val(v));
}

int expand_histc(Sdfg *g, LibNode *l, Node *seq, const char *label, const XpTile *tile)
{
	(void)tile;
	int x = l->in[0], out = l->out[0];
	Container *xc = sdfg_c(g, x);
	Dtype dt = sdfg_c(g, out)->dt;
	int64_t bins = 0;
	ex_isint(sdfg_c(g, out)->shape[0], &bins);
	int cnt = out, ov[1];
	if (dt == DT_F16 || dt == DT_BF16) {
		Expr *sh[1] = {ex_int(g, bins)};
		cnt = sdfg_add_container_x(g, "counts", DT_F32, CK_TRANSIENT, 1, sh);
		sdfg_c(g, cnt)->origin = "";
	}
	Node *zb = xp_block(g, xp_nest(g, seq, out, ov), label);
	Expr **O = xp_vars(g, 1, ov);
	sdfg_store(zb, xp_tk1(g, zb, T_ASSIGN, sdfg_c(g, cnt)->dt, opd_const(0)), xp_memlet(cnt, 1, O), W_NONE);
	if (l->in[1] >= 0) {
		/* finite iff (lo - lo) + (hi - hi) == 0: inf - inf and NaN are NaN */
		Node *ab = xp_block(g, seq, label);
		Expr *none[1] = {NULL};
		int d[2];
		for (int k = 0; k < 2; k++)
			d[k] = xp_tk2(g, ab, T_SUB, dt, opd_mem(l->in[1 + k], 0, none), opd_mem(l->in[1 + k], 0, none));
		int ok = xp_tk2(g, ab, T_EQ, dt, opd_val(xp_tk2(g, ab, T_ADD, dt, opd_val(d[0]), opd_val(d[1]))), opd_const(0));
		int t = xp_tk1(g, ab, T_ASSERT, dt, opd_val(ok));
		ab->ts[t].p[0] = (double)lib_int(l, "msg", 0);
	}
	static const char *const names[] = {"i0", "i1", "i2", "i3", "i4", "i5", "i6", "i7"};
	Expr *xi[MAXDIM];
	Node *inner = seq;
	for (int d = 0; d < xc->rank; d++) {
		int v;
		inner = xp_loop(g, inner, N_FOR, names[d], ex_int(g, 0), xc->shape[d], 1, &v)->body;
		xi[d] = ex_sym(g, v);
	}
	Node *b = xp_block(g, inner, label);
	int v = xp_tk1(g, b, T_ASSIGN, dt, opd_mem(x, xc->rank, xi));
	int lo = histc_end(g, b, l, 0, dt), hi = histc_end(g, b, l, 1, dt);
	int ge = xp_tk2(g, b, T_GE, dt, opd_val(v), opd_val(lo)), le = xp_tk2(g, b, T_LE, dt, opd_val(v), opd_val(hi));
	int in = xp_tk3(g, b, T_WHERE, dt, opd_val(ge), opd_val(le), opd_const(0));
	int xs = xp_tk3(g, b, T_WHERE, dt, opd_val(in), opd_val(v), opd_val(lo));
	int pos = xp_tk2(g, b, T_MUL, dt, opd_val(xp_tk2(g, b, T_SUB, dt, opd_val(xs), opd_val(lo))), opd_const((double)bins));
	pos = xp_tk2(g, b, T_DIV, dt, opd_val(pos), opd_val(xp_tk2(g, b, T_SUB, dt, opd_val(hi), opd_val(lo))));
	/* hi itself falls in the last bin */
	pos = xp_tk2(g, b, T_MIN, dt, opd_val(pos), opd_const((double)(bins - 1)));
	pos = xp_tk1(g, b, T_CAST, DT_I64, opd_val(pos));
	Expr *e[1] = {xp_bind_index(g, b, opd_val(pos), ex_int(g, bins), 0)};
	int one = xp_tk3(g, b, T_WHERE, sdfg_c(g, cnt)->dt, opd_val(in), opd_const(1), opd_const(0));
	sdfg_store(b, one, xp_memlet(cnt, 1, e), W_SUM);
	if (cnt != out) {
		Node *cb = xp_block(g, xp_nest(g, seq, out, ov), label);
		O = xp_vars(g, 1, ov);
		sdfg_store(cb, xp_tk1(g, cb, T_ASSIGN, dt, opd_mem(cnt, 1, O)), xp_memlet(out, 1, O), W_NONE);
	}
	return 0;
}
