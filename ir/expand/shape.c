/*
 * shape.c - expansion of data-movement library nodes: concatenation writes
 * each input into its slice of the output, one map nest per input, all in
 * one top-level subtree; remapped copies (flip, roll, repeat, padding) read
 * the input at a per-dim index expression; arange; gathers and scatters
 * with tensor indices, built by search (see below); arg-reductions and
 * cumsum with scalar accumulators. Every output element is stored once.
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

/* ---- data-dependent indices --------------------------------------------------------------------
 * Memlet indices are symbolic expressions, so a read or write at an index
 * held in a tensor is built by search: for every candidate position k
 * along an indexed dim, the element is selected where the (wrapped) index
 * equals k. This costs one pass over the indexed dim per element, which is
 * fine for the small index spaces of inference graphs (embedding tables of
 * a few thousand rows) and keeps the IR free of indirect memlets. Indices
 * may be negative (wrapped once, as torch does); an index out of range
 * matches nothing, so the result there is 0 (gather) or unchanged (scatter)
 * where torch would raise: undefined behaviour in doccc's generated code. */

/* Value of "wrapped index operand == e" into block b (int64 0/1). */
static int idx_match(Sdfg *g, Node *b, Operand idx, Expr *n, Expr *e)
{
	Operand v[1] = {idx};
	int t = sdfg_tasklet(g, b, T_ASSIGN, DT_I64, 1, v);
	Operand lt[2] = {opd_val(t), opd_const(0)};
	int neg = sdfg_tasklet(g, b, T_LT, DT_I64, 2, lt);
	Operand ad[2] = {opd_val(t), opd_expr(n)};
	int w = sdfg_tasklet(g, b, T_ADD, DT_I64, 2, ad);
	Operand wh[3] = {opd_val(neg), opd_val(w), opd_val(t)};
	int wr = sdfg_tasklet(g, b, T_WHERE, DT_I64, 3, wh);
	Operand eq[2] = {opd_val(wr), opd_expr(e)};
	return sdfg_tasklet(g, b, T_EQ, DT_I64, 2, eq);
}

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

/* Broadcast shape of containers ins[0..n) (right-aligned). */
static int bcast_shape(Sdfg *g, const int *ins, int n, Expr **sh)
{
	int rb = 0;
	for (int i = 0; i < n; i++)
		if (sdfg_c(g, ins[i])->rank > rb)
			rb = sdfg_c(g, ins[i])->rank;
	for (int d = 0; d < rb; d++)
		sh[d] = ex_int(g, 1);
	for (int i = 0; i < n; i++) {
		Container *c = sdfg_c(g, ins[i]);
		for (int q = 0; q < c->rank; q++) {
			int64_t v;
			if (!ex_isint(c->shape[q], &v) || v != 1)
				sh[rb - c->rank + q] = c->shape[q];
		}
	}
	return rb;
}

/* Memlet indices of container c broadcast against a shape of rank rb whose
 * dims are indexed by e[0..rb). */
static void bcast_idx(Sdfg *g, int c, int rb, Expr *const *sh, Expr *const *e, Expr **idx)
{
	Container *k = sdfg_c(g, c);
	for (int q = 0; q < k->rank; q++) {
		int d = rb - k->rank + q;
		int64_t v;
		idx[q] = ex_isint(k->shape[q], &v) && v == 1 && !ex_eq(k->shape[q], sh[d]) ? ex_int(g, 0) : e[d];
	}
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
	Node *owner = o->rank ? body->parent : NULL;
	int acc = acc_local(g, "acc", o->dt, owner);
	Expr *none[1] = {NULL};
	Node *ib = xp_block(g, body, label);
	Operand z[1] = {opd_const(0)};
	sdfg_store(ib, sdfg_tasklet(g, ib, T_ASSIGN, o->dt, 1, z), xp_memlet(acc, 0, none), W_NONE);
	/* x's index per dim (NULL: searched), and each index tensor's memlet */
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
		int rb = bcast_shape(g, l->in + 1, nd, bsh);
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
			bcast_idx(g, l->in[1 + j], rb, bsh, O + bstart, ii[j]);
	}
	if (mode != GA_INDEX)
		nd = 1;
	/* search loops over the indexed dims */
	Node *inner = body;
	Expr *kx[MAXDIM];
	for (int j = 0; j < nd; j++) {
		int v;
		Node *lp = xp_loop(g, inner, N_FOR, "k", ex_int(g, 0), xc->shape[dims[j]], 1, &v);
		inner = lp->body;
		kx[j] = ex_sym(g, v);
		xi[dims[j]] = kx[j];
	}
	Node *b = xp_block(g, inner, label);
	int cond = -1;
	for (int j = 0; j < nd; j++) {
		int ic = l->in[1 + j];
		Operand io = opd_mem(ic, sdfg_c(g, ic)->rank, ii[j]);
		cond = and_vals(g, b, cond, idx_match(g, b, io, xc->shape[dims[j]], kx[j]));
	}
	Operand w[3] = {opd_val(cond), opd_mem(x, xc->rank, xi), opd_mem(acc, 0, none)};
	sdfg_store(b, sdfg_tasklet(g, b, T_WHERE, o->dt, 3, w), xp_memlet(acc, 0, none), W_NONE);
	Node *fb = xp_block(g, body, label);
	Operand f[1] = {opd_mem(acc, 0, none)};
	sdfg_store(fb, sdfg_tasklet(g, fb, T_ASSIGN, o->dt, 1, f), xp_memlet(out, o->rank, O), W_NONE);
	return 0;
}

/* ---- scatters: each output element searches the positions that write it ---------------------- */

enum { SR_SUM, SR_PROD, SR_AMAX, SR_AMIN, SR_MEAN };

int expand_scatter(Sdfg *g, LibNode *l, Node *seq, const char *label, const XpTile *tile)
{
	(void)tile;
	int x = l->in[0], out = l->out[0];
	Container *xc = sdfg_c(g, x), *o = sdfg_c(g, out);
	int mode = (int)lib_int(l, "mode", SC_SRC), dim = (int)lib_int(l, "dim", 0);
	int ov[MAXDIM];
	Node *body = xp_nest(g, seq, out, ov);
	Expr **O = xp_vars(g, o->rank, ov);
	Expr *none[1] = {NULL};
	if (mode == SC_SLICE || mode == SC_SELECT) {
		/* out = self, with the slice / selected row taken from src */
		int src = l->in[1];
		Container *sc = sdfg_c(g, src);
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
		return 0;
	}
	Node *owner = o->rank ? body->parent : NULL;
	int acc = acc_local(g, "acc", o->dt, owner);
	int reduce = mode == SC_REDUCE ? (int)lib_int(l, "reduce", SR_SUM) : -1;
	int cnt = reduce >= 0 ? acc_local(g, "cnt", DT_I64, owner) : -1;
	Node *ib = xp_block(g, body, label);
	Operand s0[1] = {opd_mem(x, xc->rank, O)};
	sdfg_store(ib, sdfg_tasklet(g, ib, T_ASSIGN, o->dt, 1, s0), xp_memlet(acc, 0, none), W_NONE);
	if (cnt >= 0) {
		Operand c0[1] = {opd_const(lib_int(l, "include_self", 1) ? 1 : 0)};
		sdfg_store(ib, sdfg_tasklet(g, ib, T_ASSIGN, DT_I64, 1, c0), xp_memlet(cnt, 0, none), W_NONE);
	}
	Node *inner = body;
	Node *b;
	int cond = -1;
	Operand val;
	if (mode == SC_INDEX_PUT) {
		/* loops over the broadcast index shape; values broadcast against
		 * (index shape, self's trailing dims) */
		int vals = l->in[1], ni = l->nin - 2;
		Expr *bsh[MAXDIM], *kv[MAXDIM];
		int rb = bcast_shape(g, l->in + 2, ni, bsh);
		for (int q = 0; q < rb; q++) {
			int v;
			Node *lp = xp_loop(g, inner, N_FOR, "k", ex_int(g, 0), bsh[q], 1, &v);
			inner = lp->body;
			kv[q] = ex_sym(g, v);
		}
		b = xp_block(g, inner, label);
		for (int j = 0; j < ni; j++) {
			Expr *ii[MAXDIM];
			int ic = l->in[2 + j];
			bcast_idx(g, ic, rb, bsh, kv, ii);
			cond = and_vals(g, b, cond, idx_match(g, b, opd_mem(ic, sdfg_c(g, ic)->rank, ii), xc->shape[j], O[j]));
		}
		Expr *tsh[MAXDIM], *te[MAXDIM], *vi[MAXDIM];
		int rt = rb + o->rank - ni;
		for (int q = 0; q < rt; q++) {
			tsh[q] = q < rb ? bsh[q] : o->shape[ni + q - rb];
			te[q] = q < rb ? kv[q] : O[ni + q - rb];
		}
		bcast_idx(g, vals, rt, tsh, te, vi);
		val = opd_mem(vals, sdfg_c(g, vals)->rank, vi);
		reduce = lib_int(l, "accumulate", 0) ? SR_SUM : -1;
	} else {
		int idx = l->in[1];
		Container *ic = sdfg_c(g, idx);
		int v;
		Node *lp = xp_loop(g, inner, N_FOR, "k", ex_int(g, 0), ic->shape[dim], 1, &v);
		inner = lp->body;
		Expr *ii[MAXDIM];
		for (int d = 0; d < ic->rank; d++)
			ii[d] = d == dim ? ex_sym(g, v) : O[d];
		b = xp_block(g, inner, label);
		/* positions outside the index tensor (smaller than self) match nothing */
		cond = idx_match(g, b, opd_guarded(idx, ic->rank, ii, 1e18), xc->shape[dim], O[dim]);
		if (mode == SC_VALUE)
			val = opd_const(lib_float(l, "value", 0));
		else
			val = opd_guarded(l->in[2], sdfg_c(g, l->in[2])->rank, ii, 0);
		if (mode == SC_ADD)
			reduce = SR_SUM;
	}
	Operand a[1] = {opd_mem(acc, 0, none)};
	int av = sdfg_tasklet(g, b, T_ASSIGN, o->dt, 1, a);
	Operand vv[1] = {val};
	int sv = sdfg_tasklet(g, b, T_ASSIGN, o->dt, 1, vv);
	int nv = sv;
	if (reduce >= 0) {
		static const TCode rc[] = {T_ADD, T_MUL, T_MAX, T_MIN, T_ADD};
		Operand r2[2] = {opd_val(av), opd_val(sv)};
		nv = sdfg_tasklet(g, b, rc[reduce], o->dt, 2, r2);
		if (cnt >= 0) {
			/* the first contribution replaces self when include_self is false */
			Operand c1[1] = {opd_mem(cnt, 0, none)};
			int cv = sdfg_tasklet(g, b, T_ASSIGN, DT_I64, 1, c1);
			Operand fz[2] = {opd_val(cv), opd_const(0)};
			int first = sdfg_tasklet(g, b, T_EQ, DT_I64, 2, fz);
			Operand sel[3] = {opd_val(first), opd_val(sv), opd_val(nv)};
			nv = sdfg_tasklet(g, b, T_WHERE, o->dt, 3, sel);
			Operand inc[2] = {opd_val(cv), opd_val(cond)};
			sdfg_store(b, sdfg_tasklet(g, b, T_ADD, DT_I64, 2, inc), xp_memlet(cnt, 0, none), W_NONE);
		}
	}
	Operand w[3] = {opd_val(cond), opd_val(nv), opd_val(av)};
	sdfg_store(b, sdfg_tasklet(g, b, T_WHERE, o->dt, 3, w), xp_memlet(acc, 0, none), W_NONE);
	Node *fb = xp_block(g, body, label);
	Operand f[1] = {opd_mem(acc, 0, none)};
	int fv = sdfg_tasklet(g, fb, T_ASSIGN, o->dt, 1, f);
	if (reduce == SR_MEAN) {
		Operand c1[2] = {opd_mem(cnt, 0, none), opd_const(1)};
		int cm = sdfg_tasklet(g, fb, T_MAX, DT_I64, 2, c1);
		Operand dv[2] = {opd_val(fv), opd_val(cm)};
		/* integer means truncate toward zero; torch floors (they differ
		 * only for negative sums) */
		fv = sdfg_tasklet(g, fb, T_DIV, o->dt, 2, dv);
	}
	sdfg_store(fb, fv, xp_memlet(out, o->rank, O), W_NONE);
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

/* ---- cumsum: out[.., i, ..] = sum of in[.., 0..i, ..], accumulated in double / int64 as torch's CPU kernel ---- */

int expand_cumsum(Sdfg *g, LibNode *l, Node *seq, const char *label, const XpTile *tile)
{
	(void)tile;
	int x = l->in[0], out = l->out[0];
	Container *xc = sdfg_c(g, x), *o = sdfg_c(g, out);
	int dim = (int)lib_int(l, "dim", 0);
	int ov[MAXDIM];
	Node *body = xp_nest(g, seq, out, ov);
	Node *owner = o->rank ? body->parent : NULL;
	Dtype adt = dtype_info[o->dt].isfloat ? (o->dt == DT_F32 || o->dt == DT_F64 ? DT_F64 : DT_F32) : DT_I64;
	int acc = acc_local(g, "acc", adt, owner);
	Expr *none[1] = {NULL};
	Expr **O = xp_vars(g, o->rank, ov);
	Node *ib = xp_block(g, body, label);
	Operand z[1] = {opd_const(0)};
	sdfg_store(ib, sdfg_tasklet(g, ib, T_ASSIGN, adt, 1, z), xp_memlet(acc, 0, none), W_NONE);
	int v;
	Node *lp = xp_loop(g, body, N_FOR, "k", ex_int(g, 0), o->rank ? ex_addi(g, O[dim], 1) : ex_int(g, 1), 1, &v);
	Expr *xk[MAXDIM];
	for (int d = 0; d < xc->rank; d++)
		xk[d] = d == dim ? ex_sym(g, v) : O[d];
	Node *b = xp_block(g, lp->body, label);
	Operand ad[2] = {opd_mem(acc, 0, none), opd_mem(x, xc->rank, xk)};
	sdfg_store(b, sdfg_tasklet(g, b, T_ADD, adt, 2, ad), xp_memlet(acc, 0, none), W_NONE);
	Node *fb = xp_block(g, body, label);
	Operand f[1] = {opd_mem(acc, 0, none)};
	sdfg_store(fb, sdfg_tasklet(g, fb, T_ASSIGN, o->dt, 1, f), xp_memlet(out, o->rank, O), W_NONE);
	return 0;
}

/* ---- sort / topk by rank counting ---------------------------------------------------------------
 * Output position j along dim holds the element whose stable rank is j: the
 * rank of element i counts the elements that order before it (smaller, or
 * larger when descending; NaN orders after every number ascending and
 * before descending, as torch; equal ones before it by index). O(n^2) per
 * output element: meant for the short rows of inference graphs. */

/* 1 where a orders strictly before b (int64 0/1). */
static int sort_before(Sdfg *g, Node *b, int a, int c, int desc, Dtype dt)
{
	Operand cmp[2] = {opd_val(a), opd_val(c)};
	int r = sdfg_tasklet(g, b, desc ? T_GT : T_LT, DT_I64, 2, cmp);
	if (!dtype_info[dt].isfloat)
		return r;
	Operand na[1] = {opd_val(a)}, nc[1] = {opd_val(c)};
	int an = sdfg_tasklet(g, b, T_ISNAN, DT_I64, 1, na), cn = sdfg_tasklet(g, b, T_ISNAN, DT_I64, 1, nc);
	/* ascending: a number before NaN; descending: NaN before a number */
	Operand nn[1] = {opd_val(desc ? cn : an)};
	int notn = sdfg_tasklet(g, b, T_NOT, DT_I64, 1, nn);
	Operand w[2] = {opd_val(notn), opd_val(desc ? an : cn)};
	int nanb = sdfg_tasklet(g, b, T_AND, DT_I64, 2, w);
	Operand o[2] = {opd_val(r), opd_val(nanb)};
	return sdfg_tasklet(g, b, T_OR, DT_I64, 2, o);
}

int expand_sort(Sdfg *g, LibNode *l, Node *seq, const char *label, const XpTile *tile)
{
	(void)tile;
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
