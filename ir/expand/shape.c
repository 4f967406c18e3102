/*
 * shape.c - expansion of data-movement library nodes: concatenation writes
 * each input into its slice of the output, one map nest per input, all in
 * one top-level subtree; remapped copies (flip, roll, repeat, padding) read
 * the input at a per-dim index expression; arange; gathers and scatters
 * with tensor indices, read and written at bound indices (see below);
 * arg-reductions with scalar accumulators; sort, topk and the picks of
 * sorted rows (kth value, median, mode). Every output element
 * is stored once, except by a scatter's stores at bound indices.
 */
#include <math.h>
#include <string.h>

#include "expand.h"

/* ---- concatenation ------------------------------------------------------------------------ */

int expand_cat(Sdfg *g, LibNode *l, Node *seq, const char *label, const XpTile *tile)
{
	(void)tile;
	int out = l->out[0];
	Container *o = sdfg_c(g, out);
	int dim = (int)lib_int(l, "dim", 0);
	Expr *off = ex_int(g, 0);
	for (int i = 0; i < l->nin; i++) {
		int in = l->in[i];
		Container *x = sdfg_c(g, in);
		int vars[MAXDIM];
		Node *body = xp_nest(g, seq, in, vars);
		Node *b = xp_block(g, body, label);
		Expr *idx[MAXDIM];
		for (int d = 0; d < o->rank; d++)
			idx[d] = d == dim ? ex_add(g, ex_sym(g, vars[d]), off) : ex_sym(g, vars[d]);
		Operand a[1] = {opd_mem(in, x->rank, xp_vars(g, x->rank, vars))};
		sdfg_store(b, sdfg_tasklet(g, b, T_ASSIGN, o->dt, 1, a), xp_memlet(out, o->rank, idx), W_NONE);
		off = ex_add(g, off, x->shape[dim]);
	}
	return 0;
}

/* ---- remapped copies ------------------------------------------------------------------------
 * out[i] = in[j] with, per dim, t = i - ofs and j = t (RK_OFFSET; reads
 * outside the input give `value` when guard is set: constant padding),
 * n-1-i (RK_FLIP), the mirror of t without repeating the edge (RK_REFLECT),
 * t clamped to [0, n) (RK_REPLICATE) or t mod n (RK_CIRCULAR: roll, repeat,
 * circular padding). */

static Expr *ex_abs(Sdfg *g, Expr *e)
{
	return ex_max(g, e, ex_muli(g, e, -1));
}

int expand_remap(Sdfg *g, LibNode *l, Node *seq, const char *label, const XpTile *tile)
{
	(void)tile;
	int in = l->in[0], out = l->out[0];
	Container *x = sdfg_c(g, in), *o = sdfg_c(g, out);
	int64_t kinds[MAXDIM], ofs[MAXDIM];
	lib_ints(l, "kinds", kinds, MAXDIM);
	lib_ints(l, "ofs", ofs, MAXDIM);
	int vars[MAXDIM];
	Node *body = xp_nest(g, seq, out, vars);
	Node *b = xp_block(g, body, label);
	Expr *idx[MAXDIM];
	for (int d = 0; d < o->rank; d++) {
		Expr *i = ex_sym(g, vars[d]), *n = x->shape[d], *nm1 = ex_addi(g, x->shape[d], -1);
		Expr *t = ex_addi(g, i, -ofs[d]);
		switch (kinds[d]) {
		case RK_FLIP: idx[d] = ex_sub(g, nm1, i); break;
		case RK_REFLECT: idx[d] = ex_sub(g, nm1, ex_abs(g, ex_sub(g, nm1, ex_abs(g, t)))); break;
		case RK_REPLICATE: idx[d] = ex_min(g, ex_max(g, t, ex_int(g, 0)), nm1); break;
		case RK_CIRCULAR: idx[d] = ex_mod(g, t, n); break;
		default: idx[d] = t; break;
		}
	}
	Operand a[1] = {lib_int(l, "guard", 0) ? opd_guarded(in, x->rank, idx, lib_float(l, "value", 0))
	                                       : opd_mem(in, x->rank, idx)};
	sdfg_store(b, sdfg_tasklet(g, b, T_ASSIGN, o->dt, 1, a), xp_memlet(out, o->rank, xp_vars(g, o->rank, vars)), W_NONE);
	return 0;
}

/* ---- arange: start + i*step, computed in double (int64 for integer outputs) as torch's CPU kernel --- */

int expand_arange(Sdfg *g, LibNode *l, Node *seq, const char *label, const XpTile *tile)
{
	(void)tile;
	int out = l->out[0];
	Container *o = sdfg_c(g, out);
	int vars[MAXDIM];
	Node *body = xp_nest(g, seq, out, vars);
	Node *b = xp_block(g, body, label);
	Dtype adt = dtype_info[o->dt].isfloat ? DT_F64 : DT_I64;
	Operand a[3] = {opd_expr(ex_sym(g, vars[0])), opd_const(lib_float(l, "step", 1)), opd_const(lib_float(l, "start", 0))};
	int t = sdfg_tasklet(g, b, T_FMA, adt, 3, a);
	Operand v[1] = {opd_val(t)};
	sdfg_store(b, sdfg_tasklet(g, b, T_ASSIGN, o->dt, 1, v), xp_memlet(out, o->rank, xp_vars(g, o->rank, vars)), W_NONE);
	return 0;
}

/* ---- gathers and scatters -----------------------------------------------------------------
 * A read or write at an index held in a tensor binds the index to a value
 * symbol with a T_INDEX tasklet (xp_bind_index: ir/expand/common.c) and
 * addresses the element with it: O(1) per element. Negative indices wrap
 * once where torch wraps them (index.Tensor, index_put); index_select,
 * gather, embedding and the scatters take none. Gathers are one map nest
 * over the output. Scatters copy self into the output in one nest, then
 * visit the source positions in a second one whose dims that can reach one
 * output element more than once are sequential (N_FOR, in index order), so
 * the last store wins and reductions combine self first, then the sources
 * in order, as torch's CPU kernels do. */

static int and_vals(Sdfg *g, Node *b, int a, int c)
{
	if (a < 0)
		return c;
	Operand o[2] = {opd_val(a), opd_val(c)};
	return sdfg_tasklet(g, b, T_AND, DT_I64, 2, o);
}

/* A scalar accumulator owned by loop `owner`, or a rank-0 transient at top level. */
static int acc_local(Sdfg *g, const char *name, Dtype dt, Node *owner)
{
	if (owner)
		return xp_local(g, name, dt, 0, NULL, owner);
	int c = sdfg_add_container(g, name, dt, CK_TRANSIENT, 0, NULL);
	sdfg_c(g, c)->origin = "";
	return c;
}

int expand_gather(Sdfg *g, LibNode *l, Node *seq, const char *label, const XpTile *tile)
{
	(void)tile;
	int x = l->in[0], out = l->out[0];
	Container *xc = sdfg_c(g, x), *o = sdfg_c(g, out);
	int mode = (int)lib_int(l, "mode", GA_GATHER);
	int64_t dims[MAXDIM];
	int nd = lib_ints(l, "dims", dims, MAXDIM);
	int ov[MAXDIM];
	Node *body = xp_nest(g, seq, out, ov);
	Node *b = xp_block(g, body, label);
	/* x's index per dim (NULL: bound below), and each index tensor's memlet */
	Expr *xi[MAXDIM] = {NULL}, *ii[MAXDIM][MAXDIM];
	Expr **O = xp_vars(g, o->rank, ov);
	int d0 = (int)dims[0];
	if (mode == GA_INDEX_SELECT) {
		for (int d = 0; d < xc->rank; d++)
			xi[d] = d == d0 ? NULL : O[d];
		if (sdfg_c(g, l->in[1])->rank)
			ii[0][0] = O[d0];
	} else if (mode == GA_GATHER) {
		for (int d = 0; d < xc->rank; d++) {
			xi[d] = d == d0 ? NULL : O[d];
			ii[0][d] = O[d];
		}
	} else if (mode == GA_EMBEDDING) {
		int ri = sdfg_c(g, l->in[1])->rank;
		xi[0] = NULL;
		xi[1] = O[ri];
		for (int q = 0; q < ri; q++)
			ii[0][q] = O[q];
	} else {
		/* index.Tensor: the broadcast index block sits where the indexed
		 * dims were if they are adjacent, else in front. */
		Expr *bsh[MAXDIM];
		int rb = xp_bcast_shape(g, l->in + 1, nd, bsh);
		int adjacent = dims[nd - 1] - dims[0] == nd - 1;
		int bstart = adjacent ? d0 : 0;
		int isidx[MAXDIM] = {0};
		for (int j = 0; j < nd; j++)
			isidx[dims[j]] = 1;
		for (int d = 0, k = 0; d < xc->rank; d++) {
			if (isidx[d])
				continue;
			if (adjacent)
				xi[d] = O[d < d0 ? d : d - nd + rb];
			else
				xi[d] = O[rb + k++];
		}
		for (int j = 0; j < nd; j++)
			xp_bcast_idx(g, l->in[1 + j], rb, bsh, O + bstart, ii[j]);
	}
	if (mode != GA_INDEX)
		nd = 1;
	for (int j = 0; j < nd; j++) {
		int ic = l->in[1 + j];
		xi[dims[j]] = xp_bind_index(g, b, opd_mem(ic, sdfg_c(g, ic)->rank, ii[j]), xc->shape[dims[j]],
		                            mode == GA_INDEX || lib_int(l, "wrap", 0));
	}
	Operand a[1] = {opd_mem(x, xc->rank, xi)};
	sdfg_store(b, sdfg_tasklet(g, b, T_ASSIGN, o->dt, 1, a), xp_memlet(out, o->rank, O), W_NONE);
	return 0;
}

/* ---- scatters --------------------------------------------------------------------------------- */

enum { SR_SUM, SR_PROD, SR_AMAX, SR_AMIN, SR_MEAN };

/* out = self with the slice / selected row taken from src: one nest. */
static void scatter_slice(Sdfg *g, LibNode *l, Node *seq, const char *label)
{
	int x = l->in[0], out = l->out[0], src = l->in[1];
	Container *xc = sdfg_c(g, x), *o = sdfg_c(g, out), *sc = sdfg_c(g, src);
	int mode = (int)lib_int(l, "mode", SC_SLICE), dim = (int)lib_int(l, "dim", 0);
	int ov[MAXDIM];
	Node *body = xp_nest(g, seq, out, ov);
	Expr **O = xp_vars(g, o->rank, ov);
	Node *b = xp_block(g, body, label);
	int64_t start = lib_int(l, "start", 0);
	Expr *rel = ex_addi(g, O[dim], -start), *si[MAXDIM];
	int cond;
	if (mode == SC_SELECT) {
		for (int d = 0, k = 0; d < o->rank; d++)
			if (d != dim)
				si[k++] = O[d];
		Operand e[2] = {opd_expr(rel), opd_const(0)};
		cond = sdfg_tasklet(g, b, T_EQ, DT_I64, 2, e);
	} else {
		int64_t step = lib_int(l, "step", 1);
		for (int d = 0; d < o->rank; d++)
			si[d] = d == dim ? ex_div(g, rel, ex_int(g, step)) : O[d];
		Operand e1[2] = {opd_expr(ex_mod(g, rel, ex_int(g, step))), opd_const(0)};
		Operand e2[2] = {opd_expr(rel), opd_const(0)};
		Operand e3[2] = {opd_expr(rel), opd_expr(ex_muli(g, sc->shape[dim], step))};
		cond = and_vals(g, b, sdfg_tasklet(g, b, T_EQ, DT_I64, 2, e1), sdfg_tasklet(g, b, T_GE, DT_I64, 2, e2));
		cond = and_vals(g, b, cond, sdfg_tasklet(g, b, T_LT, DT_I64, 2, e3));
	}
	Operand w[3] = {opd_val(cond), opd_guarded(src, sc->rank, si, 0), opd_mem(x, xc->rank, O)};
	sdfg_store(b, sdfg_tasklet(g, b, T_WHERE, o->dt, 3, w), xp_memlet(out, o->rank, O), W_NONE);
}

/* out = self (a flat storage) with the positions of a strided view of it
 * (strides, offset: static) taken from src, element by element: a write
 * through a view, made functional (import.c). One copy nest, then one
 * store per element of src. */
static void scatter_view(Sdfg *g, LibNode *l, Node *seq, const char *label)
{
	int x = l->in[0], src = l->in[1], out = l->out[0];
	Container *o = sdfg_c(g, out), *sc = sdfg_c(g, src);
	int ov[MAXDIM], sv[MAXDIM];
	Node *body = xp_nest(g, seq, out, ov);
	Expr **O = xp_vars(g, 1, ov);
	Node *b = xp_block(g, body, label);
	Operand a[1] = {opd_mem(x, 1, O)};
	sdfg_store(b, sdfg_tasklet(g, b, T_ASSIGN, o->dt, 1, a), xp_memlet(out, 1, O), W_NONE);
	int64_t st[MAXDIM] = {0};
	lib_ints(l, "strides", st, sc->rank);
	Node *sbody = xp_nest(g, seq, src, sv);
	Expr *p = ex_int(g, lib_int(l, "offset", 0));
	for (int d = 0; d < sc->rank; d++)
		p = ex_add(g, p, ex_muli(g, ex_sym(g, sv[d]), st[d]));
	Node *sb = xp_block(g, sbody, label);
	Operand v[1] = {opd_mem(src, sc->rank, xp_vars(g, sc->rank, sv))};
	Expr *pi[1] = {p};
	sdfg_store(sb, sdfg_tasklet(g, sb, T_ASSIGN, o->dt, 1, v), xp_memlet(out, 1, pi), W_NONE);
}

int expand_scatter(Sdfg *g, LibNode *l, Node *seq, const char *label, const XpTile *tile)
{
	(void)tile;
	int x = l->in[0], out = l->out[0];
	Container *xc = sdfg_c(g, x), *o = sdfg_c(g, out);
	int mode = (int)lib_int(l, "mode", SC_SRC), dim = (int)lib_int(l, "dim", 0);
	if (mode == SC_SLICE || mode == SC_SELECT) {
		scatter_slice(g, l, seq, label);
		return 0;
	}
	if (mode == SC_VIEW) {
		scatter_view(g, l, seq, label);
		return 0;
	}
	int reduce = mode == SC_REDUCE ? (int)lib_int(l, "reduce", SR_SUM) : mode == SC_ADD ? SR_SUM : -1;
	int incl = mode != SC_REDUCE || lib_int(l, "include_self", 1);
	if (mode == SC_INDEX_PUT)
		reduce = lib_int(l, "accumulate", 0) ? SR_SUM : -1;
	/* dst accumulates (a transient for mean, divided into out at the end);
	 * cnt counts the contributions where the first one replaces self or
	 * the mean divides by their number */
	int dst = out, cnt = -1;
	if (reduce == SR_MEAN) {
		dst = sdfg_add_container_x(g, "sum", o->dt, CK_TRANSIENT, o->rank, o->shape);
		sdfg_c(g, dst)->origin = "";
	}
	if (reduce == SR_MEAN || !incl) {
		cnt = sdfg_add_container_x(g, "cnt", DT_I64, CK_TRANSIENT, o->rank, o->shape);
		sdfg_c(g, cnt)->origin = "";
	}
	/* 1. dst = self (cnt = 1 where self counts, else 0) */
	int ov[MAXDIM];
	Node *body = xp_nest(g, seq, out, ov);
	Expr **O = xp_vars(g, o->rank, ov);
	Node *cb = xp_block(g, body, label);
	Operand s0[1] = {opd_mem(x, xc->rank, O)};
	sdfg_store(cb, sdfg_tasklet(g, cb, T_ASSIGN, o->dt, 1, s0), xp_memlet(dst, o->rank, O), W_NONE);
	if (cnt >= 0) {
		Operand c0[1] = {opd_const(incl)};
		sdfg_store(cb, sdfg_tasklet(g, cb, T_ASSIGN, DT_I64, 1, c0), xp_memlet(cnt, o->rank, O), W_NONE);
	}
	/* 2. every source position stores into dst at P, its bound position */
	static const char *const names[] = {"i0", "i1", "i2", "i3", "i4", "i5", "i6", "i7"};
	Node *inner = seq, *b;
	Expr *P[MAXDIM];
	Operand val;
	if (mode == SC_INDEX_PUT) {
		/* sequential over the broadcast index shape, parallel over self's
		 * other dims (those a None index takes whole); values broadcast
		 * against the shape of self[indices]: the index block where the
		 * indexed dims were if they are adjacent, else in front, then the
		 * other dims in order (torch's advanced indexing) */
		int vals = l->in[1], ni = l->nin - 2, v;
		int64_t dims[MAXDIM];
		if (lib_ints(l, "dims", dims, MAXDIM) != ni)
			for (int j = 0; j < ni; j++)
				dims[j] = j;
		int isidx[MAXDIM] = {0};
		for (int j = 0; j < ni; j++)
			isidx[dims[j]] = 1;
		Expr *bsh[MAXDIM], *kv[MAXDIM];
		int rb = xp_bcast_shape(g, l->in + 2, ni, bsh);
		for (int q = 0; q < rb; q++) {
			inner = xp_loop(g, inner, N_FOR, "k", ex_int(g, 0), bsh[q], 1, &v)->body;
			kv[q] = ex_sym(g, v);
		}
		for (int d = 0; d < o->rank; d++) {
			if (isidx[d])
				continue;
			inner = xp_loop(g, inner, N_MAP, names[d], ex_int(g, 0), o->shape[d], 1, &v)->body;
			P[d] = ex_sym(g, v);
		}
		b = xp_block(g, inner, label);
		for (int j = 0; j < ni; j++) {
			Expr *ii[MAXDIM];
			int ic = l->in[2 + j];
			xp_bcast_idx(g, ic, rb, bsh, kv, ii);
			P[dims[j]] = xp_bind_index(g, b, opd_mem(ic, sdfg_c(g, ic)->rank, ii), xc->shape[dims[j]],
			                           (int)lib_int(l, "wrap", 1));
		}
		Expr *tsh[MAXDIM], *te[MAXDIM], *vi[MAXDIM];
		int adjacent = dims[ni - 1] - dims[0] == ni - 1;
		int rt = 0, placed = 0;
		for (int d = 0; d < o->rank; d++) {
			if (!placed && (!adjacent || d == dims[0])) {
				for (int q = 0; q < rb; q++, rt++) {
					tsh[rt] = bsh[q];
					te[rt] = kv[q];
				}
				placed = 1;
			}
			if (!isidx[d]) {
				tsh[rt] = o->shape[d];
				te[rt++] = P[d];
			}
		}
		xp_bcast_idx(g, vals, rt, tsh, te, vi);
		val = opd_mem(vals, sdfg_c(g, vals)->rank, vi);
	} else {
		/* over the index tensor (no larger than src, nor than self outside
		 * dim): sequential along dim, where positions can collide */
		int idx = l->in[1], v;
		Container *ic = sdfg_c(g, idx);
		Expr *K[MAXDIM];
		for (int d = 0; d < ic->rank; d++) {
			inner = xp_loop(g, inner, d == dim ? N_FOR : N_MAP, d == dim ? "k" : names[d], ex_int(g, 0), ic->shape[d], 1, &v)->body;
			K[d] = ex_sym(g, v);
		}
		b = xp_block(g, inner, label);
		for (int d = 0; d < ic->rank; d++)
			P[d] = d == dim ? xp_bind_index(g, b, opd_mem(idx, ic->rank, K), xc->shape[dim], 0) : K[d];
		val = mode == SC_VALUE ? opd_const(lib_float(l, "value", 0)) : opd_mem(l->in[2], sdfg_c(g, l->in[2])->rank, K);
	}
	Operand vv[1] = {val};
	int nv = sdfg_tasklet(g, b, T_ASSIGN, o->dt, 1, vv), sv = nv;
	double alpha = lib_float(l, "alpha", 1);
	if (alpha != 1) {
		/* index_add: alpha * source, rounded on its own */
		Operand am[2] = {opd_val(nv), opd_const(alpha)};
		nv = sv = sdfg_tasklet(g, b, T_MUL, o->dt, 2, am);
	}
	if (reduce >= 0) {
		static const TCode rc[] = {T_ADD, T_MUL, T_MAX, T_MIN, T_ADD};
		Operand a[1] = {opd_mem(dst, o->rank, P)};
		int av = sdfg_tasklet(g, b, T_ASSIGN, o->dt, 1, a);
		Operand r2[2] = {opd_val(av), opd_val(sv)};
		nv = sdfg_tasklet(g, b, rc[reduce], o->dt, 2, r2);
		if (cnt >= 0) {
			/* the first contribution replaces self when include_self is false */
			Operand c1[1] = {opd_mem(cnt, o->rank, P)};
			int cv = sdfg_tasklet(g, b, T_ASSIGN, DT_I64, 1, c1);
			Operand fz[2] = {opd_val(cv), opd_const(0)};
			int first = sdfg_tasklet(g, b, T_EQ, DT_I64, 2, fz);
			Operand sel[3] = {opd_val(first), opd_val(sv), opd_val(nv)};
			nv = sdfg_tasklet(g, b, T_WHERE, o->dt, 3, sel);
			Operand inc[2] = {opd_val(cv), opd_const(1)};
			sdfg_store(b, sdfg_tasklet(g, b, T_ADD, DT_I64, 2, inc), xp_memlet(cnt, o->rank, P), W_NONE);
		}
	}
	sdfg_store(b, nv, xp_memlet(dst, o->rank, P), W_NONE);
	if (reduce != SR_MEAN)
		return 0;
	/* 3. out = sum / max(count, 1); integer means truncate toward zero where
	 * torch floors (they differ only for negative sums) */
	body = xp_nest(g, seq, out, ov);
	O = xp_vars(g, o->rank, ov);
	Node *fb = xp_block(g, body, label);
	Operand c1[2] = {opd_mem(cnt, o->rank, O), opd_const(1)};
	int cm = sdfg_tasklet(g, fb, T_MAX, DT_I64, 2, c1);
	Operand dv[2] = {opd_mem(dst, o->rank, O), opd_val(cm)};
	sdfg_store(fb, sdfg_tasklet(g, fb, T_DIV, o->dt, 2, dv), xp_memlet(out, o->rank, O), W_NONE);
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

/* ---- sort / topk: a bottom-up merge sort per row -------------------------------------------------
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
