/*
 * attention.c - lowering of the attention family (ops_attention.h):
 * scaled_dot_product_attention as one LIB_ATTENTION node (its expansion,
 * ir/expand/attention.c, computes the scores a query row or a tile of rows
 * at a time).
 *
 * The query, key and value share their rank (2 or more); a key head shared
 * by several query heads broadcasts (one key head) or needs enable_gqa (the
 * query heads in whole groups of the key heads). dropout_p must be 0
 * (inference). The scale is the argument's or 1/sqrt(head size); a mask
 * (attn_mask) or is_causal goes on the node. Run-time dims may size the
 * batch and the query and key lengths, not the head counts or head size,
 * which pick the kernel and the scale.
 */
#include <math.h>

#include "lower.h"

/* scaled_dot_product_attention as one node (ir/expand/attention.c). */
/* transformers' repeat_kv under grouped-query attention,
 * x[:, :, None].expand(b, hk, rep, L, d).reshape(b, hk * rep, L, d): the
 * reshape of the broadcast copies x, a KV cache once per layer and step.
 * When key or value c (rank r) is such a copy (a view of a transient
 * written only by an assign from a view whose dim r-2 of r+1, rep, has
 * stride 0), attention
 * reads x itself instead, each of its heads serving rep query heads (the
 * expansion's group), and the copy is left to dce. The view of x, else c;
 * *rep its group (1 for c). */
static int through_repeat_kv(Imp *m, int c, int64_t *rep)
{
	Sdfg *g = m->g;
	Container *v = lw_c(m, c);
	int r = v->rank, t = v->base;
	*rep = 1;
	if (v->kind != CK_VIEW || r < 3 || t < 0 || !sdfg_is_contiguous(g, t) || g->cs[t].kind != CK_TRANSIENT ||
	    g->cs[t].rank != r + 1 || !ex_isint(v->offset, rep) || *rep != 0)
		return (*rep = 1, c);
	Container *tc = &g->cs[t];
	LibNode *w = NULL;
	int nw = 0;
	for (int k = 0; k < g->root->nkids; k++)
		if (node_writes(g, g->root->kids[k], t))
			w = g->root->kids[k]->kind == N_BLOCK ? g->root->kids[k]->lib : NULL, nw++;
	*rep = 1;
	if (nw != 1 || !w || w->op != LIB_ELEMWISE || w->nin != 1 || w->nattrs != 1 || w->out[0] != t ||
	    lib_int(w, "code", -1) != T_ASSIGN || w->in[0] < 0)
		return c;
	Container *e = lw_c(m, w->in[0]);
	int64_t z = -1, hk, n;
	if (e->rank != r + 1 || e->dt != v->dt || !ex_isint(e->stride[r - 2], &z) || z != 0 ||
	    !ex_isint(tc->shape[r - 2], &n) || !ex_isint(tc->shape[r - 3], &hk) || !ex_isint(v->shape[r - 3], &z) ||
	    z != hk * n)
		return c;
	for (int d = 0; d <= r; d++)
		if (!ex_eq(e->shape[d], tc->shape[d]))
			return c;
	/* v is tc with dims r-3 (hk) and r-2 (rep) merged (a contiguous view of it) */
	for (int d = 0; d < r; d++)
		if (!ex_eq(v->shape[d], d < r - 3 ? tc->shape[d] : d == r - 3 ? ex_int(g, hk * n) : tc->shape[d + 1]))
			return c;
	Expr *shape[MAXDIM], *st[MAXDIM];
	for (int d = 0, j = 0; d <= r; d++)
		if (d != r - 2)
			shape[j] = e->shape[d], st[j++] = e->stride[d];
	*rep = n;
	return sdfg_add_view(g, arena_printf(m->a, "%s_kv", v->origin), w->in[0], r, shape, st, e->offset);
}

int lower_attention(Imp *m, const cJSON *node)
{
	int q = lw_tensor(m, "query"), k = lw_tensor(m, "key"), v = lw_tensor(m, "value");
	if (q < 0 || k < 0 || v < 0)
		return -1;
	if (lw_num(m, "dropout_p", 0) != 0) {
		lw_error(m, "scaled_dot_product_attention with dropout_p=%g; doccc compiles inference only (dropout_p must be 0)",
		         lw_num(m, "dropout_p", 0));
		return -1;
	}
	int r = lw_c(m, q)->rank;
	if (r < 2 || lw_c(m, k)->rank != r || lw_c(m, v)->rank != r) {
		lw_error(m, "scaled_dot_product_attention: query, key and value must have the same rank >= 2");
		return -1;
	}
	/* run-time dims may size the batch and the query and key lengths; the
	 * head counts and the head size pick the kernel and the scale */
	int64_t n;
	for (int i = 0; i < 3; i++) {
		int t = i == 0 ? q : i == 1 ? k : v;
		if (!ex_isint(lw_dimx(m, t, r - 1), &n) || (r >= 3 && !ex_isint(lw_dimx(m, t, r - 3), &n)))
			return lw_need_static(m, "a head count or head size of run-time dims");
	}
	int gqa = (int)lw_int(m, "enable_gqa", 0);
	if (r >= 4) {
		int64_t rk, rv;
		int k2 = through_repeat_kv(m, k, &rk), v2 = through_repeat_kv(m, v, &rv);
		if (rk > 1 && rk == rv)
			k = k2, v = v2, gqa = 1;
	}
	if (r >= 3 && lw_dim(m, q, r - 3) != lw_dim(m, k, r - 3)) {
		int64_t hq = lw_dim(m, q, r - 3), hk = lw_dim(m, k, r - 3);
		/* one key head broadcasts (torch's batch-dim broadcasting); more
		 * need enable_gqa, and query heads in whole groups of them */
		if ((!gqa && hk != 1) || hk <= 0 || hq % hk || lw_dim(m, v, r - 3) != hk) {
			lw_error(m, "scaled_dot_product_attention: %lld query heads and %lld key heads (enable_gqa=%d)",
			         (long long)hq, (long long)hk, gqa);
			return -1;
		}
	}
	int out = lw_new_out(m, node, 0);
	if (out < 0)
		return -1;
	int mask = lw_tensor(m, "attn_mask");
	LibNode *l = lw_lib(m, LIB_ATTENTION);
	l->in[0] = q, l->in[1] = k, l->in[2] = v, l->in[3] = mask, l->nin = 4;
	l->out[0] = out, l->nout = 1;
	Val *sc = lw_arg(m, "scale");
	double scale = sc->k == V_FLOAT || sc->k == V_INT ? lw_num(m, "scale", 1) : 1.0 / sqrt((double)lw_dim(m, q, r - 1));
	lib_set_float(m->g, l, "scale", scale);
	lib_set_int(m->g, l, "causal", lw_int(m, "is_causal", 0));
	return 0;
}
