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
