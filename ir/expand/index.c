/*
 * index.c - expansion of the index family's library nodes: gathers,
 * scatters, embedding bags and masked_scatter, whose reads or writes sit
 * at positions held in tensors.
 *
 * Every such position goes through a T_INDEX tasklet bound to a value
 * symbol (xp_bind_index), so no memlet addresses memory outside its
 * container; an index outside its dim, offsets past the end or a source
 * too short fail the run with DOCCC_ERR_INDEX where torch raises. Outputs
 * are stored once per element, except by a scatter's stores at bound
 * indices (ir.h's invariant allows those): the last store wins, as in
 * torch's CPU kernels. Embedding bags accumulate in float (double for
 * double weights) in index order, as EmbeddingBag.cpp; accumulators are
 * transients of their own, so fusion can still move an output's
 * consumers.
 */
#include <string.h>

#include "expand.h"

/* ---- gathers and scatters -----------------------------------------------------------
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

/* ---- scatters -------------------------------------------------------------------- */

/* out = self with the slice / selected row taken from src: one nest; in
 * place (self is out) a nest over src. */
static void scatter_slice(Sdfg *g, LibNode *l, Node *seq, const char *label)
{
	int x = l->in[0], out = l->out[0], src = l->in[1];
	Container *xc = sdfg_c(g, x), *o = sdfg_c(g, out), *sc = sdfg_c(g, src);
	int mode = (int)lib_int(l, "mode", SC_SLICE), dim = (int)lib_int(l, "dim", 0);
	int ov[MAXDIM];
	int64_t start = lib_int(l, "start", 0);
	if (x == out) {
		/* in place (the state pass): only src's positions */
		int sv[MAXDIM];
		Node *sb = xp_block(g, xp_nest(g, seq, src, sv), label);
		Expr **S = xp_vars(g, sc->rank, sv), *oi[MAXDIM];
		for (int d = 0, k = 0; d < o->rank; d++)
			if (mode == SC_SELECT)
				oi[d] = d == dim ? ex_int(g, start) : S[k++];
			else
				oi[d] = d == dim ? ex_addi(g, ex_muli(g, S[d], lib_int(l, "step", 1)), start) : S[d];
		Operand v[1] = {opd_mem(src, sc->rank, S)};
		sdfg_store(sb, sdfg_tasklet(g, sb, T_ASSIGN, o->dt, 1, v), xp_memlet(out, o->rank, oi), W_NONE);
		return;
	}
	Node *body = xp_nest(g, seq, out, ov);
	Expr **O = xp_vars(g, o->rank, ov);
	Node *b = xp_block(g, body, label);
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
 * through a view, made functional (ir/lower/api.c). One copy nest, then one
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
	/* 1. dst = self (cnt = 1 where self counts, else 0); in place (self is
	 * out: the state pass) dst holds self already */
	int ov[MAXDIM];
	Node *body = x != dst || cnt >= 0 ? xp_nest(g, seq, out, ov) : NULL;
	Expr **O = body ? xp_vars(g, o->rank, ov) : NULL;
	Node *cb = body ? xp_block(g, body, label) : NULL;
	if (x != dst) {
		Operand s0[1] = {opd_mem(x, xc->rank, O)};
		sdfg_store(cb, sdfg_tasklet(g, cb, T_ASSIGN, o->dt, 1, s0), xp_memlet(dst, o->rank, O), W_NONE);
	}
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

/* ---- helpers of embedding bags and masked_scatter -------------------------------- */

#define V(t) opd_val(t)
#define K(c) opd_const(c)

/* A rank-0 transient (a scalar that sequential loops carry). */
static int scalar_transient(Sdfg *g, const char *name, Dtype dt)
{
	int c = sdfg_add_container(g, name, dt, CK_TRANSIENT, 0, NULL);
	sdfg_c(g, c)->origin = "";
	return c;
}

static int transient(Sdfg *g, const char *name, Dtype dt, int rank, Expr *const *shape)
{
	int c = sdfg_add_container_x(g, name, dt, CK_TRANSIENT, rank, shape);
	sdfg_c(g, c)->origin = "";
	return c;
}

/* c[...] = v over all of c (a map nest). */
static void fill(Sdfg *g, Node *seq, const char *label, int c, double v)
{
	int vars[MAXDIM];
	Container *k = sdfg_c(g, c);
	Node *b = xp_block(g, xp_nest(g, seq, c, vars), label);
	sdfg_store(b, xp_tk1(g, b, T_ASSIGN, k->dt, K(v)), xp_memlet(c, k->rank, xp_vars(g, k->rank, vars)), W_NONE);
}

/* ---- embedding bags -----------------------------------------------------------------
 * Bag b holds the indices from offsets[b] up to the next bag's offset; as
 * torch does, the bag of index i (offset2bag) is the number of offsets
 * (among the first nb) at or before i, minus 1: counts scattered at the
 * offsets, then a running sum. One sequential loop over the indices then
 * adds row indices[i] of weight into its bag's accumulator (float, or
 * double for double weights; per_sample_weights scale it), or, for max,
 * keeps the first row and every larger value with its row index; rows at
 * padding_idx count for nothing. bag_size counts the rows of each bag
 * (0 in sum mode, as torch); max_indices is the argmax (max mode) or a
 * copy of bag_size. */

int expand_embedding_bag(Sdfg *g, LibNode *l, Node *seq, const char *label, const XpTile *tile)
{
	(void)tile;
	int w = l->in[0], idx = l->in[1], ofs = l->in[2], psw = l->in[3];
	int out = l->out[0], o2b_out = l->out[1], bs_out = l->out[2], mi_out = l->out[3];
	Container *wc = sdfg_c(g, w), *o = sdfg_c(g, out);
	int mode = (int)lib_int(l, "mode", EBM_SUM), ilo = (int)lib_int(l, "include_last_offset", 0);
	int64_t pad = lib_int(l, "padding_idx", -1);
	int fast = (int)lib_int(l, "fast", 0);
	Dtype dt = wc->dt, adt = mode == EBM_MAX ? dt : dt == DT_F64 ? DT_F64 : DT_F32;
	Expr *n = sdfg_c(g, idx)->shape[0], *nb = o->shape[0], *D = wc->shape[1];
	int64_t nbv = -1;
	ex_isint(nb, &nbv);
	Expr *none[1] = {NULL};
	int v, vd;
	/* accumulators and counts, zeroed */
	Expr *ash[2] = {nb, D};
	int acc = transient(g, "acc", adt, 2, ash), cnt = transient(g, "bagcnt", DT_I64, 1, ash);
	int mi = mode == EBM_MAX ? transient(g, "argmax", DT_I64, 2, ash) : -1;
	fill(g, seq, label, acc, 0);
	fill(g, seq, label, cnt, 0);
	if (mi >= 0)
		fill(g, seq, label, mi, 0);
	/* no bags: torch's running sum is -1 throughout; an empty offset2bag
	 * (torch's fast path) is written by a nest of no iterations */
	if (o2b_out >= 0 && (nbv == 0 || sdfg_numel(g, o2b_out) == 0))
		fill(g, seq, label, o2b_out, -1);
	if (nbv != 0) {
		/* 1. offset2bag: hits[p] counts the offsets equal to p, bag[i] = their running sum up to i, minus 1 */
		Expr *n1 = ex_addi(g, n, 1);
		int hits = transient(g, "hits", DT_I64, 1, &n1), bag = transient(g, "bag", DT_I64, 1, &n);
		int run = scalar_transient(g, "run", DT_I64);
		fill(g, seq, label, hits, 0);
		Node *lj = xp_loop(g, seq, N_FOR, "j", ex_int(g, 0), nb, 1, &v);
		Node *b = xp_block(g, lj->body, label);
		Expr *jv[1] = {ex_sym(g, v)};
		Expr *p[1] = {xp_bind_index(g, b, opd_mem(ofs, 1, jv), n1, 0)};
		sdfg_store(b, xp_tk2(g, b, T_ADD, DT_I64, opd_mem(hits, 1, p), K(1)), xp_memlet(hits, 1, p), W_NONE);
		b = xp_block(g, seq, label);
		sdfg_store(b, xp_tk1(g, b, T_ASSIGN, DT_I64, K(0)), xp_memlet(run, 0, none), W_NONE);
		Node *li = xp_loop(g, seq, N_FOR, "i", ex_int(g, 0), n, 1, &v);
		b = xp_block(g, li->body, label);
		Expr *iv[1] = {ex_sym(g, v)};
		int r = xp_tk2(g, b, T_ADD, DT_I64, opd_mem(run, 0, none), opd_mem(hits, 1, iv));
		sdfg_store(b, r, xp_memlet(run, 0, none), W_NONE);
		int bi = xp_tk2(g, b, T_SUB, DT_I64, V(r), K(1));
		sdfg_store(b, bi, xp_memlet(bag, 1, iv), W_NONE);
		if (o2b_out >= 0 && sdfg_numel(g, o2b_out) != 0)
			sdfg_store(b, xp_tk1(g, b, T_ASSIGN, sdfg_c(g, o2b_out)->dt, V(bi)), xp_memlet(o2b_out, 1, iv), W_NONE);

		/* 2. one index after the other: the row into its bag, per column */
		li = xp_loop(g, seq, N_FOR, "i", ex_int(g, 0), n, 1, &v);
		iv[0] = ex_sym(g, v);
		Node *ld = xp_loop(g, li->body, N_MAP, "d", ex_int(g, 0), D, 1, &vd);
		for (int pass = 0; pass < 2; pass++) {
			/* pass 0: the columns (inside the map over d); pass 1: the bag's count, after them */
			b = xp_block(g, pass ? li->body : ld->body, label);
			int wi = xp_tk1(g, b, T_ASSIGN, DT_I64, opd_mem(idx, 1, iv));
			Expr *wx = xp_bind_index(g, b, V(wi), wc->shape[0], 0);
			Expr *bg[2] = {xp_bind_index(g, b, opd_mem(bag, 1, iv), nb, 0), ex_sym(g, vd)};
			int keep = pad >= 0 ? xp_tk2(g, b, T_NE, DT_I64, V(wi), K((double)pad)) : -1;
			if (pass) {
				int inc = keep >= 0 ? keep : xp_tk1(g, b, T_ASSIGN, DT_I64, K(1));
				sdfg_store(b, xp_tk2(g, b, T_ADD, DT_I64, opd_mem(cnt, 1, bg), V(inc)), xp_memlet(cnt, 1, bg), W_NONE);
				continue;
			}
			Expr *wi2[2] = {wx, ex_sym(g, vd)};
			if (mode == EBM_MAX) {
				int val = xp_tk1(g, b, T_ASSIGN, dt, opd_mem(w, 2, wi2)), cur = xp_tk1(g, b, T_ASSIGN, dt, opd_mem(acc, 2, bg));
				int first = xp_tk2(g, b, T_EQ, DT_I64, opd_mem(cnt, 1, bg), K(0));
				int take = xp_tk2(g, b, T_OR, DT_I64, V(first), V(xp_tk2(g, b, T_GT, DT_I64, V(val), V(cur))));
				if (keep >= 0)
					take = xp_tk2(g, b, T_AND, DT_I64, V(take), V(keep));
				sdfg_store(b, xp_tk3(g, b, T_WHERE, dt, V(take), V(val), V(cur)), xp_memlet(acc, 2, bg), W_NONE);
				sdfg_store(b, xp_tk3(g, b, T_WHERE, DT_I64, V(take), V(wi), opd_mem(mi, 2, bg)), xp_memlet(mi, 2, bg), W_NONE);
				continue;
			}
			/* torch's fast path stops at the last offset with include_last_offset */
			if (fast && ilo) {
				Expr *last[1] = {nb};
				int in = xp_tk2(g, b, T_LT, DT_I64, opd_expr(iv[0]), opd_mem(ofs, 1, last));
				keep = keep >= 0 ? xp_tk2(g, b, T_AND, DT_I64, V(keep), V(in)) : in;
			}
			int val = xp_tk1(g, b, T_ASSIGN, adt, opd_mem(w, 2, wi2));
			int sum = psw >= 0 ? xp_tk3(g, b, T_FMA, adt, V(val), opd_mem(psw, 1, iv), opd_mem(acc, 2, bg))
			                   : xp_tk2(g, b, T_ADD, adt, opd_mem(acc, 2, bg), V(val));
			if (keep >= 0)
				sum = xp_tk3(g, b, T_WHERE, adt, V(keep), V(sum), opd_mem(acc, 2, bg));
			sdfg_store(b, sum, xp_memlet(acc, 2, bg), W_NONE);
		}
	}
	/* 3. the results: the mean divides in the weight's dtype by max(count, 1) */
	int ov[MAXDIM];
	Node *b = xp_block(g, xp_nest(g, seq, out, ov), label);
	Expr **O = xp_vars(g, 2, ov);
	int res = xp_tk1(g, b, T_ASSIGN, dt, opd_mem(acc, 2, O));
	if (mode == EBM_MEAN) {
		int c = xp_tk1(g, b, T_ASSIGN, dt, V(xp_tk2(g, b, T_MAX, DT_I64, opd_mem(cnt, 1, O), K(1))));
		res = xp_tk2(g, b, T_DIV, dt, V(res), V(c));
	}
	sdfg_store(b, res, xp_memlet(out, 2, O), W_NONE);
	if (mi_out >= 0 && mode == EBM_MAX) {
		b = xp_block(g, xp_nest(g, seq, mi_out, ov), label);
		O = xp_vars(g, 2, ov);
		sdfg_store(b, xp_tk1(g, b, T_ASSIGN, sdfg_c(g, mi_out)->dt, opd_mem(mi, 2, O)), xp_memlet(mi_out, 2, O), W_NONE);
	}
	/* bag_size (and max_indices outside max mode, a copy of it): the count,
	 * 0 in sum mode and past the last bag (a shape some overloads record) */
	int sizes[2] = {bs_out, mode == EBM_MAX ? -1 : mi_out};
	for (int k = 0; k < 2; k++) {
		if (sizes[k] < 0)
			continue;
		b = xp_block(g, xp_nest(g, seq, sizes[k], ov), label);
		O = xp_vars(g, 1, ov);
		Operand c = mode == EBM_SUM ? K(0) : opd_guarded(cnt, 1, O, 0);
		sdfg_store(b, xp_tk1(g, b, T_ASSIGN, sdfg_c(g, sizes[k])->dt, c), xp_memlet(sizes[k], sdfg_c(g, sizes[k])->rank, O),
		           W_NONE);
	}
	return 0;
}

/* ---- masked_scatter -----------------------------------------------------------------
 * out = self where the (broadcast) mask is false; the k-th true position in
 * row-major order takes source element k. A sequential pass counts the
 * true positions before each element, then every element reads the source
 * at its count, checked against the source's length. */

int expand_masked_scatter(Sdfg *g, LibNode *l, Node *seq, const char *label, const XpTile *tile)
{
	(void)tile;
	int x = l->in[0], mk = l->in[1], src = l->in[2], out = l->out[0];
	Container *o = sdfg_c(g, out);
	int r = o->rank;
	Expr *none[1] = {NULL};
	int cnt = transient(g, "before", DT_I64, r, o->shape), run = scalar_transient(g, "run", DT_I64);
	Node *b = xp_block(g, seq, label);
	sdfg_store(b, xp_tk1(g, b, T_ASSIGN, DT_I64, K(0)), xp_memlet(run, 0, none), W_NONE);
	static const char *const names[] = {"i0", "i1", "i2", "i3", "i4", "i5", "i6", "i7"};
	Node *inner = seq;
	int vars[MAXDIM];
	for (int d = 0; d < r; d++)
		inner = xp_loop(g, inner, N_FOR, names[d], ex_int(g, 0), o->shape[d], 1, &vars[d])->body;
	Expr **O = xp_vars(g, r, vars), *mi[MAXDIM], *xi[MAXDIM];
	xp_bcast_idx(g, mk, r, o->shape, O, mi);
	b = xp_block(g, inner, label);
	int before = xp_tk1(g, b, T_ASSIGN, DT_I64, opd_mem(run, 0, none));
	sdfg_store(b, before, xp_memlet(cnt, r, O), W_NONE);
	int m = xp_tk1(g, b, T_ASSIGN, DT_I64, opd_mem(mk, sdfg_c(g, mk)->rank, mi));
	sdfg_store(b, xp_tk2(g, b, T_ADD, DT_I64, V(before), V(xp_tk2(g, b, T_NE, DT_I64, V(m), K(0)))), xp_memlet(run, 0, none),
	           W_NONE);

	int ov[MAXDIM];
	Node *body = xp_nest(g, seq, out, ov);
	O = xp_vars(g, r, ov);
	xp_bcast_idx(g, mk, r, o->shape, O, mi);
	xp_bcast_idx(g, x, r, o->shape, O, xi);
	b = xp_block(g, body, label);
	m = xp_tk2(g, b, T_NE, DT_I64, opd_mem(mk, sdfg_c(g, mk)->rank, mi), K(0));
	Expr *ns = sdfg_c(g, src)->shape[0];
	int64_t nsv;
	Operand sv;
	if (ex_isint(ns, &nsv) && nsv == 0) {
		/* no source elements: a true position fails the check (1 is not
		 * below 1), whose symbol addresses a one-element sink */
		Expr *one = ex_int(g, 1);
		int sink = transient(g, "sink", DT_I64, 1, &one);
		Expr *k[1] = {xp_bind_index(g, b, V(m), one, 0)};
		sdfg_store(b, xp_tk1(g, b, T_ASSIGN, DT_I64, K(0)), xp_memlet(sink, 1, k), W_NONE);
		sv = K(0);
	} else {
		int k = xp_tk3(g, b, T_WHERE, DT_I64, V(m), opd_mem(cnt, r, O), K(0));
		Expr *ks[1] = {xp_bind_index(g, b, V(k), ns, 0)};
		sv = opd_mem(src, 1, ks);
	}
	int res = xp_tk3(g, b, T_WHERE, o->dt, V(m), sv, opd_mem(x, sdfg_c(g, x)->rank, xi));
	sdfg_store(b, res, xp_memlet(out, r, O), W_NONE);
	return 0;
}
