/*
 * norm.c - expansion of the norm family's library nodes: batch norm (what
 * fold_constants left), softmax and log-softmax (also _safe_softmax), and
 * the normalizations with statistics of the input (layer, group,
 * instance, batch statistics, RMS). The vector norms are reduce nodes
 * (ir/expand/reduce.c).
 *
 * Softmax makes three passes over a row (max, sum of exp, normalize) and
 * recomputes exp rather than storing twice; on SIMD targets a float32 row
 * keeps its max and sum per vector lane (xp_lane_fold). A normalization
 * computes its statistics (in double) once per set of elements normalized
 * together and stores each output element once.
 */
#include <math.h>
#include <string.h>

#include "expand.h"

/* ---- batch norm (what fold_constants left) --------------------------------------- */

int expand_batchnorm(Sdfg *g, LibNode *l, Node *seq, const char *label, const XpTile *tile)
{
	(void)tile;
	int out = l->out[0];
	Container *o = sdfg_c(g, out);
	int vars[MAXDIM];
	Node *body = xp_nest(g, seq, out, vars);
	Node *b = xp_block(g, body, label);
	Expr *ch[1] = {o->rank > 1 ? ex_sym(g, vars[1]) : ex_int(g, 0)};
	Operand x = xp_bcast(g, l->in[0], out, vars);
	/* float16/bfloat16 compute in float and round once, as PyTorch's CPU
	 * kernel does */
	Dtype dt = o->dt == DT_F16 || o->dt == DT_BF16 ? DT_F32 : o->dt;
	int v;
	if (lib_int(l, "prepared", 0)) {
		/* in[1] = scale, in[2] = shift per channel */
		Operand fin[3] = {x, opd_mem(l->in[1], 1, ch), opd_mem(l->in[2], 1, ch)};
		v = sdfg_tasklet(g, b, T_FMA, dt, 3, fin);
	} else {
		double eps = lib_float(l, "eps", 1e-5);
		Operand s[2] = {x, opd_mem(l->in[3], 1, ch)};
		int d = sdfg_tasklet(g, b, T_SUB, dt, 2, s);
		Operand va[2] = {opd_mem(l->in[4], 1, ch), opd_const(eps)};
		int ve = sdfg_tasklet(g, b, T_ADD, dt, 2, va);
		Operand vs[1] = {opd_val(ve)};
		int sq = sdfg_tasklet(g, b, T_SQRT, dt, 1, vs);
		Operand dv[2] = {opd_val(d), opd_val(sq)};
		v = sdfg_tasklet(g, b, T_DIV, dt, 2, dv);
		if (l->in[1] >= 0) {
			Operand mw[2] = {opd_val(v), opd_mem(l->in[1], 1, ch)};
			v = sdfg_tasklet(g, b, T_MUL, dt, 2, mw);
		}
		if (l->in[2] >= 0) {
			Operand ab[2] = {opd_val(v), opd_mem(l->in[2], 1, ch)};
			v = sdfg_tasklet(g, b, T_ADD, dt, 2, ab);
		}
	}
	if (dt != o->dt) {
		Operand cv[1] = {opd_val(v)};
		v = sdfg_tasklet(g, b, T_ASSIGN, o->dt, 1, cv);
	}
	sdfg_store(b, v, xp_memlet(out, o->rank, xp_vars(g, o->rank, vars)), W_NONE);
	return 0;
}

/* ---- softmax: max, sum of exp, normalize (exp recomputed, nothing stored twice) ---- */

/* out[idx] = exp(in[idx] - mx) * fc (log: in[idx] - mx - fc) in block b. */
static void softmax_out(Sdfg *g, Node *b, int in, int out, int r, Expr *const *idx, int mx, int fc, int islog)
{
	Expr *none[1] = {NULL};
	Operand s3[2] = {opd_mem(in, r, idx), opd_mem(mx, 0, none)};
	int dx = sdfg_tasklet(g, b, T_SUB, DT_F32, 2, s3);
	int v;
	if (islog) {
		Operand sb[2] = {opd_val(dx), opd_mem(fc, 0, none)};
		v = sdfg_tasklet(g, b, T_SUB, DT_F32, 2, sb);
	} else {
		Operand e3[1] = {opd_val(dx)};
		int ex = sdfg_tasklet(g, b, T_EXP, DT_F32, 1, e3);
		Operand mu[2] = {opd_val(ex), opd_mem(fc, 0, none)};
		v = sdfg_tasklet(g, b, T_MUL, DT_F32, 2, mu);
	}
	sdfg_store(b, v, xp_memlet(out, r, idx), W_NONE);
}

/* Float32 softmax over the last, contiguous dim on a SIMD target: the max
 * and the sum of exponentials are kept per vector lane (pm[L], ps[L]) so
 * those passes vectorize, then folded into one value per row; the third
 * pass multiplies exp(x - max) by 1/sum (log: x - max - log(sum)), as
 * PyTorch's vectorized kernel does. */
static int softmax_lanes(Sdfg *g, LibNode *l, Node *seq, const char *label, int L)
{
	int in = l->in[0], out = l->out[0];
	Container *o = sdfg_c(g, out);
	int islog = (int)lib_int(l, "log", 0), safe = (int)lib_int(l, "safe", 0);
	int r = o->rank;
	Expr *n = o->shape[r - 1];
	int vars[MAXDIM];
	Node *body = seq, *owner = NULL;
	for (int d = 0; d < r - 1; d++) {
		Node *lp = xp_loop(g, body, N_MAP, "i", ex_int(g, 0), o->shape[d], 1, &vars[d]);
		body = lp->body;
		owner = lp;
	}
	int64_t sl[1] = {L};
	int pm = xp_local(g, "pm", DT_F32, 1, sl, owner);
	int mx = xp_local(g, "mx", DT_F32, 0, NULL, owner), sm = xp_local(g, "sum", DT_F32, 0, NULL, owner);
	int fc = xp_local(g, "f", DT_F32, 0, NULL, owner);
	Expr *none[1] = {NULL}, *idx[MAXDIM];
	for (int d = 0; d < r - 1; d++)
		idx[d] = ex_sym(g, vars[d]);
	idx[r - 1] = NULL;
	xp_lane_fold(g, body, L, n, label, pm, mx, T_MAX, -INFINITY, in, r, idx, r - 1, -1, 0);
	if (safe) {
		/* a row of -inf: max 0, so every exp is 0 (and the factor below 0) */
		Node *sb = xp_block(g, body, label);
		Operand eq[2] = {opd_mem(mx, 0, none), opd_const(-INFINITY)};
		int allinf = sdfg_tasklet(g, sb, T_EQ, DT_BOOL, 2, eq);
		Operand wz[3] = {opd_val(allinf), opd_const(0), opd_mem(mx, 0, none)};
		sdfg_store(sb, sdfg_tasklet(g, sb, T_WHERE, DT_F32, 3, wz), xp_memlet(mx, 0, none), W_NONE);
	}
	xp_lane_fold(g, body, L, n, label, pm, sm, T_ADD, 0, in, r, idx, r - 1, mx, 0);
	/* the per-row factor: 1/sum (0 for a masked-out row of safe softmax), or log(sum) */
	Node *cb = xp_block(g, body, label);
	Operand sv[1] = {opd_mem(sm, 0, none)};
	int fac = sdfg_tasklet(g, cb, islog ? T_LOG : T_RECIP, DT_F32, 1, sv);
	if (safe && !islog) {
		Operand eq[2] = {opd_mem(sm, 0, none), opd_const(0)};
		int z = sdfg_tasklet(g, cb, T_EQ, DT_BOOL, 2, eq);
		Operand wh[3] = {opd_val(z), opd_const(0), opd_val(fac)};
		fac = sdfg_tasklet(g, cb, T_WHERE, DT_F32, 3, wh);
	}
	sdfg_store(cb, fac, xp_memlet(fc, 0, none), W_NONE);
	/* pass 3: the output; a run-time row length in whole vectors of L
	 * (a map the printer vectorizes), then a scalar tail */
	int64_t k;
	int split = !ex_isint(n, &k);
	Expr *nv = ex_muli(g, ex_div(g, n, ex_int(g, L)), L);
	for (int part = 0; part <= split; part++) {
		int j3, jb;
		Node *p3 = body;
		Expr *J;
		if (split && !part) {
			p3 = xp_loop(g, p3, N_FOR, "jb", ex_int(g, 0), ex_div(g, n, ex_int(g, L)), 1, &jb)->body;
			p3 = xp_loop(g, p3, N_MAP, "j", ex_int(g, 0), ex_int(g, L), 1, &j3)->body;
			J = ex_add(g, ex_muli(g, ex_sym(g, jb), L), ex_sym(g, j3));
		} else {
			p3 = xp_loop(g, p3, split ? N_FOR : N_MAP, "j", split ? nv : ex_int(g, 0), n, 1, &j3)->body;
			J = ex_sym(g, j3);
		}
		idx[r - 1] = J;
		softmax_out(g, xp_block(g, p3, label), in, out, r, idx, mx, fc, islog);
	}
	return 0;
}

int expand_softmax(Sdfg *g, LibNode *l, Node *seq, const char *label, const XpTile *tile)
{
	int in = l->in[0], out = l->out[0];
	Container *o = sdfg_c(g, out);
	int dim = (int)lib_int(l, "dim", 0), islog = (int)lib_int(l, "log", 0), safe = (int)lib_int(l, "safe", 0);
	int r = o->rank;
	int64_t n;
	/* a run-time row length takes the lanes too: their fold has a scalar tail */
	if (tile->vec_lanes > 1 && r >= 2 && dim == r - 1 && o->dt == DT_F32 && sdfg_c(g, in)->dt == DT_F32 &&
	    (!ex_isint(o->shape[r - 1], &n) || n >= tile->vec_lanes))
		return softmax_lanes(g, l, seq, label, tile->vec_lanes);
	/* Maps over all dims but `dim`. */
	int vars[MAXDIM];
	Node *body = seq, *owner = NULL;
	for (int d = 0; d < r; d++) {
		if (d == dim)
			continue;
		Node *lp = xp_loop(g, body, N_MAP, "i", ex_int(g, 0), o->shape[d], 1, &vars[d]);
		body = lp->body;
		owner = lp;
	}
	Dtype adt = o->dt == DT_F64 ? DT_F64 : DT_F32;
	int half = o->dt == DT_F16 || o->dt == DT_BF16, last = 1;
	for (int d = dim + 1; d < r; d++) {
		int64_t k;
		last &= ex_isint(o->shape[d], &k) && k == 1;  /* torch's inner size 1 */
	}
	Expr *none[1] = {NULL};
	int mx, sm;
	if (owner) {
		mx = xp_local(g, "mx", adt, 0, NULL, owner);
		sm = xp_local(g, "sum", adt, 0, NULL, owner);
	} else {
		mx = sdfg_add_container(g, "mx", adt, CK_TRANSIENT, 0, NULL);
		sm = sdfg_add_container(g, "sum", adt, CK_TRANSIENT, 0, NULL);
	}
	Node *ib = xp_block(g, body, label);
	Operand z[1] = {opd_const(-INFINITY)}, z0[1] = {opd_const(0)};
	sdfg_store(ib, sdfg_tasklet(g, ib, T_ASSIGN, adt, 1, z), xp_memlet(mx, 0, none), W_NONE);
	sdfg_store(ib, sdfg_tasklet(g, ib, T_ASSIGN, adt, 1, z0), xp_memlet(sm, 0, none), W_NONE);
	Expr *idx[MAXDIM];
	for (int pass = 0; pass < 3; pass++) {
		int j;
		Node *lp = xp_loop(g, body, N_FOR, "j", ex_int(g, 0), o->shape[dim], 1, &j);
		for (int d = 0; d < r; d++)
			idx[d] = d == dim ? ex_sym(g, j) : ex_sym(g, vars[d]);
		Node *b = xp_block(g, lp->body, label);
		Operand xv = opd_mem(in, r, idx);
		if (pass == 0) {
			Operand a[2] = {opd_mem(mx, 0, none), xv};
			sdfg_store(b, sdfg_tasklet(g, b, T_MAX, adt, 2, a), xp_memlet(mx, 0, none), W_NONE);
			continue;
		}
		Operand s[2] = {xv, opd_mem(mx, 0, none)};
		int dx = sdfg_tasklet(g, b, T_SUB, adt, 2, s);
		if (pass == 1) {
			Operand e[1] = {opd_val(dx)};
			int ex = sdfg_tasklet(g, b, T_EXP, adt, 1, e);
			Operand a[2] = {opd_mem(sm, 0, none), opd_val(ex)};
			sdfg_store(b, sdfg_tasklet(g, b, T_ADD, adt, 2, a), xp_memlet(sm, 0, none), W_NONE);
			continue;
		}
		int v;
		if (islog) {
			Operand ls[1] = {opd_mem(sm, 0, none)};
			int lg;
			if (half && last) {
				/* torch's last-dim kernel for float16/bfloat16 keeps the
				 * sum and its log in the input's type */
				Operand hs[1] = {opd_val(sdfg_tasklet(g, b, T_ASSIGN, o->dt, 1, ls))};
				lg = sdfg_tasklet(g, b, T_LOG, o->dt, 1, hs);
			} else
				lg = sdfg_tasklet(g, b, T_LOG, adt, 1, ls);
			Operand sb[2] = {opd_val(dx), opd_val(lg)};
			v = sdfg_tasklet(g, b, T_SUB, o->dt, 2, sb);
		} else {
			Operand e[1] = {opd_val(dx)};
			int ex = sdfg_tasklet(g, b, T_EXP, adt, 1, e);
			Operand dv[2] = {opd_val(ex), opd_mem(sm, 0, none)};
			v = sdfg_tasklet(g, b, T_DIV, safe ? adt : o->dt, 2, dv);
			if (safe) {
				/* _safe_softmax: a row that is all -inf gives 0, not NaN */
				Operand eq[2] = {opd_mem(mx, 0, none), opd_const(-INFINITY)};
				int allinf = sdfg_tasklet(g, b, T_EQ, DT_BOOL, 2, eq);
				Operand wh[3] = {opd_val(allinf), opd_const(0), opd_val(v)};
				v = sdfg_tasklet(g, b, T_WHERE, o->dt, 3, wh);
			}
		}
		sdfg_store(b, v, xp_memlet(out, r, idx), W_NONE);
	}
	return 0;
}

/* ---- normalization with statistics of the input -------------------------------------
 *
 * The input's dims split into "outer" ones (one set of statistics each:
 * maps) and "inner" ones (the elements normalized together: loops):
 *   layer / RMS  outer = leading dims, inner = the trailing ndims
 *   group        outer = (n, group), inner = (channel within group, space)
 *   batch        outer = channel, inner = (n, space)
 * Per outer point: the mean (double sum / count), then the biased variance
 * from a second pass over (x - mean)^2 (RMS: mean of x^2), rstd =
 * 1/sqrt(var + eps), then a map over the inner dims storing
 * (x - mean) * rstd * weight + bias. Statistics are kept in double and
 * rounded once to the compute type (float for float32 and half inputs). */

/* x index and weight index for outer vars o[] and inner vars i[]. */
static void norm_index(Sdfg *g, int mode, int r, int no, int64_t Cg, Expr *const *o, Expr *const *i, Expr **xi, Expr **wi,
                       int *wr)
{
	switch (mode) {
	case NM_GROUP:
		xi[0] = o[0];
		xi[1] = ex_add(g, ex_muli(g, o[1], Cg), i[0]);
		for (int d = 2; d < r; d++)
			xi[d] = i[d - 1];
		wi[0] = xi[1];
		*wr = 1;
		return;
	case NM_BATCH:
		xi[0] = i[0];
		xi[1] = o[0];
		for (int d = 2; d < r; d++)
			xi[d] = i[d - 1];
		wi[0] = o[0];
		*wr = 1;
		return;
	default:
		for (int d = 0; d < r; d++)
			xi[d] = d < no ? o[d] : i[d - no];
		for (int d = no; d < r; d++)
			wi[d - no] = i[d - no];
		*wr = r - no;
	}
}

/* Loops (kind k) over extents ext[n] inside seq; vars into v; innermost body. */
static Node *loops(Sdfg *g, Node *seq, NodeKind k, int n, Expr *const *ext, int *v, Node **last)
{
	for (int d = 0; d < n; d++) {
		Node *lp = xp_loop(g, seq, k, "j", ex_int(g, 0), ext[d], 1, &v[d]);
		seq = lp->body;
		if (last)
			*last = lp;
	}
	return seq;
}

/* The count n of the elements a statistic averages, as an operand in block
 * b: a constant, or the run-time value of its dims as a double. */
static Operand norm_count(Sdfg *g, Node *b, Expr *n, int fixed)
{
	int64_t v = 0;
	if (fixed && ex_isint(n, &v))
		return opd_const((double)v);
	Operand e[1] = {opd_expr(n)};
	return opd_val(sdfg_tasklet(g, b, T_ASSIGN, DT_F64, 1, e));
}

int expand_norm(Sdfg *g, LibNode *l, Node *seq, const char *label, const XpTile *tile)
{
	(void)tile;
	int in = l->in[0], w = l->in[1], bi = l->in[2], out = l->out[0];
	Container *x = sdfg_c(g, in), *o = sdfg_c(g, out);
	int r = x->rank, mode = (int)lib_int(l, "mode", NM_LAYER);
	int64_t G = lib_int(l, "groups", 1), Cg = 1;
	double eps = lib_float(l, "eps", 1e-5);
	Expr *oext[MAXDIM], *iext[MAXDIM];
	int no = 0, ni = 0;
	if (mode == NM_GROUP) {
		int64_t C = 0;
		ex_isint(x->shape[1], &C);
		Cg = C / G;
		oext[no++] = x->shape[0];
		oext[no++] = ex_int(g, G);
		iext[ni++] = ex_int(g, Cg);
		for (int d = 2; d < r; d++)
			iext[ni++] = x->shape[d];
	} else if (mode == NM_BATCH) {
		oext[no++] = x->shape[1];
		iext[ni++] = x->shape[0];
		for (int d = 2; d < r; d++)
			iext[ni++] = x->shape[d];
	} else {
		int k = (int)lib_int(l, "ndims", 1);
		for (int d = 0; d < r; d++) {
			if (d < r - k)
				oext[no++] = x->shape[d];
			else
				iext[ni++] = x->shape[d];
		}
	}
	/* the element count of a group: a run-time number where it holds run-time dims */
	Expr *countx = ex_int(g, 1);
	for (int d = 0; d < ni; d++)
		countx = ex_mul(g, countx, iext[d]);
	int64_t count = 0;
	int cfix = ex_isint(countx, &count);
	int ov[MAXDIM], iv[MAXDIM];
	Node *owner = NULL;
	Node *body = loops(g, seq, N_MAP, no, oext, ov, &owner);
	Dtype cdt = x->dt == DT_F64 ? DT_F64 : DT_F32;
	int ids[4];
	static const char *const nm[4] = {"sum", "sumsq", "mean", "rstd"};
	for (int k = 0; k < 4; k++) {
		Dtype dt = k < 2 ? DT_F64 : cdt;
		if (owner)
			ids[k] = xp_local(g, nm[k], dt, 0, NULL, owner);
		else {
			ids[k] = sdfg_add_container(g, nm[k], dt, CK_TRANSIENT, 0, NULL);
			sdfg_c(g, ids[k])->origin = "";
		}
	}
	int s1 = ids[0], s2 = ids[1], mu = ids[2], rs = ids[3];
	Expr *none[1] = {NULL};
	Expr **oe = xp_vars(g, no, ov);
	Expr *xi[MAXDIM], *wi[MAXDIM];
	int wr;
	Node *ib = xp_block(g, body, label);
	Operand z[1] = {opd_const(0)};
	sdfg_store(ib, sdfg_tasklet(g, ib, T_ASSIGN, DT_F64, 1, z), xp_memlet(s1, 0, none), W_NONE);
	sdfg_store(ib, sdfg_tasklet(g, ib, T_ASSIGN, DT_F64, 1, z), xp_memlet(s2, 0, none), W_NONE);
	if (mode != NM_RMS) {
		Node *pb = xp_block(g, loops(g, body, N_FOR, ni, iext, iv, NULL), label);
		norm_index(g, mode, r, no, Cg, oe, xp_vars(g, ni, iv), xi, wi, &wr);
		Operand a[2] = {opd_mem(s1, 0, none), opd_mem(in, r, xi)};
		sdfg_store(pb, sdfg_tasklet(g, pb, T_ADD, DT_F64, 2, a), xp_memlet(s1, 0, none), W_NONE);
		Node *mb = xp_block(g, body, label);
		Operand dv[2] = {opd_mem(s1, 0, none), norm_count(g, mb, countx, cfix)};
		sdfg_store(mb, sdfg_tasklet(g, mb, T_DIV, DT_F64, 2, dv), xp_memlet(s1, 0, none), W_NONE);
	}
	{
		Node *pb = xp_block(g, loops(g, body, N_FOR, ni, iext, iv, NULL), label);
		norm_index(g, mode, r, no, Cg, oe, xp_vars(g, ni, iv), xi, wi, &wr);
		Operand d[2] = {opd_mem(in, r, xi), opd_mem(s1, 0, none)};
		int dv = sdfg_tasklet(g, pb, T_SUB, DT_F64, 2, d);
		Operand sq[2] = {opd_val(dv), opd_val(dv)};
		int q = sdfg_tasklet(g, pb, T_MUL, DT_F64, 2, sq);
		Operand a[2] = {opd_mem(s2, 0, none), opd_val(q)};
		sdfg_store(pb, sdfg_tasklet(g, pb, T_ADD, DT_F64, 2, a), xp_memlet(s2, 0, none), W_NONE);
	}
	/* mean, rstd in the compute type; the saved statistics */
	Node *sb = xp_block(g, body, label);
	Operand m1[1] = {opd_mem(s1, 0, none)};
	int mv = sdfg_tasklet(g, sb, T_ASSIGN, cdt, 1, m1);
	sdfg_store(sb, mv, xp_memlet(mu, 0, none), W_NONE);
	Operand vv[2] = {opd_mem(s2, 0, none), norm_count(g, sb, countx, cfix)};
	int var = sdfg_tasklet(g, sb, T_DIV, DT_F64, 2, vv);
	Operand ve[1] = {opd_val(var)};
	int varc = sdfg_tasklet(g, sb, T_ASSIGN, cdt, 1, ve);
	Operand ae[2] = {opd_val(varc), opd_const(eps)};
	int vpe = sdfg_tasklet(g, sb, T_ADD, cdt, 2, ae);
	Operand rq[1] = {opd_val(vpe)};
	int rv = sdfg_tasklet(g, sb, T_RSQRT, cdt, 1, rq);
	sdfg_store(sb, rv, xp_memlet(rs, 0, none), W_NONE);
	for (int k = 1; k <= 2; k++) {
		int so = l->nout > k ? l->out[k] : -1;
		if (so < 0)
			continue;
		Container *sc = sdfg_c(g, so);
		Expr *si[MAXDIM];
		for (int d = 0; d < sc->rank; d++)
			si[d] = mode == NM_LAYER || mode == NM_RMS ? (d < no ? oe[d] : ex_int(g, 0)) : oe[d];
		Operand sv[1] = {opd_mem(k == 1 ? mu : rs, 0, none)};
		sdfg_store(sb, sdfg_tasklet(g, sb, T_ASSIGN, sc->dt, 1, sv), xp_memlet(so, sc->rank, si), W_NONE);
	}
	/* y = (x - mean) * rstd * w + b */
	Node *yb = xp_block(g, loops(g, body, N_MAP, ni, iext, iv, NULL), label);
	norm_index(g, mode, r, no, Cg, oe, xp_vars(g, ni, iv), xi, wi, &wr);
	Operand xx[2] = {opd_mem(in, r, xi), opd_mem(mu, 0, none)};
	int v = mode == NM_RMS ? sdfg_tasklet(g, yb, T_ASSIGN, cdt, 1, xx) : sdfg_tasklet(g, yb, T_SUB, cdt, 2, xx);
	Operand mr[2] = {opd_val(v), opd_mem(rs, 0, none)};
	v = sdfg_tasklet(g, yb, T_MUL, cdt, 2, mr);
	if (w >= 0) {
		Operand mw[2] = {opd_val(v), opd_mem(w, wr, wi)};
		v = sdfg_tasklet(g, yb, T_MUL, cdt, 2, mw);
	}
	if (bi >= 0) {
		Operand ab[2] = {opd_val(v), opd_mem(bi, wr, wi)};
		v = sdfg_tasklet(g, yb, T_ADD, cdt, 2, ab);
	}
	if (o->dt != cdt) {
		Operand cv[1] = {opd_val(v)};
		v = sdfg_tasklet(g, yb, T_ASSIGN, o->dt, 1, cv);
	}
	sdfg_store(yb, v, xp_memlet(out, r, xi), W_NONE);
	return 0;
}
