/*
 * sample.c - expansion of the sampling and bagging library nodes whose
 * reads or writes sit at data-dependent positions: grid sampling
 * (LIB_GRIDSAMPLE), embedding bags (LIB_EMBBAG) and masked_scatter
 * (LIB_MSCATTER).
 *
 * Every data-dependent position goes through a T_INDEX tasklet bound to a
 * value symbol (ir.h), so no memlet addresses memory outside its container.
 * Grid sampling computes its taps in range by construction (an in-bounds
 * flag selects the tap or 0, the index itself is clamped to 0 when out of
 * bounds), so its checks never fail; embedding bags and masked_scatter
 * check indices, offsets and the source's length, and fail the run with
 * DOCCC_ERR_INDEX where torch raises.
 *
 * The arithmetic follows torch's CPU kernels operation by operation, so
 * results match to the last bits where the C compiler keeps the order:
 * grid sampling follows the vectorized kernel (GridSamplerKernel.cpp), in
 * the input's dtype (float16 and bfloat16 round after every operation, as
 * Vectorized<Half> does), with a fused multiply-add (T_FMA) where GCC
 * contracts torch's float and double code; embedding bags accumulate in
 * float (double for double weights) in index order, as EmbeddingBag.cpp.
 * Outputs are stored once per element; accumulators are transients of
 * their own, so fusion can still move an output's consumers.
 */
#include <string.h>

#include "expand.h"

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

/* ---- embedding bags ----------------------------------------------------------------------------
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

/* ---- masked_scatter --------------------------------------------------------------------------------
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
