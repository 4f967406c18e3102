/*
 * fold_constants.c - precompute what depends on weights only.
 *
 * Inference batch norm is an affine map per channel,
 *     y = (x - mean) / sqrt(var + eps) * gamma + beta = x * scale + shift,
 * with scale and shift known at compile time. After a convolution whose
 * weights are constant and whose output feeds nothing but this batch norm,
 * the map folds into the convolution: w'[oc] = w[oc] * scale[oc] and
 * b'[oc] = (b[oc] - mean[oc]) * scale[oc] + beta[oc]; the convolution then
 * writes the batch norm's output and the batch norm disappears. Any other
 * batch norm with constant statistics is "prepared": its five parameter
 * tensors become the two per-channel constants scale and shift, so the
 * expansion emits one fused multiply-add per element. A batch norm over the
 * columns of a 2-d GEMM with constant B (Linear followed by BatchNorm1d)
 * folds the same way into B and the GEMM's bias.
 *
 * Arithmetic is done in double and rounded once to the weights' float32.
 * Works on library nodes at the top level, before expansion. The folded
 * weights are not computed here: they get a source (consts.c) that scales
 * the original's elements when the weights file is written, so folding a
 * model's batch norms costs no memory; the per-channel vectors (biases,
 * scale and shift) are small and computed at once, from the statistics'
 * bytes: a constant whose bytes cannot be had (a damaged archive, or an
 * SDFG dump, which holds the small ones only) fails the pass, reported.
 */
#include <math.h>
#include <string.h>

#include "../ir.h"

/* Is c (>= 0) a float32 constant with bytes to be had? */
static int known(Sdfg *g, int c)
{
	return c >= 0 && sdfg_c(g, c)->kind == CK_CONST && sdfg_c(g, c)->dt == DT_F32 && sdfg_const_known(g, c);
}

/* The bytes of the constants in cs[0..n) (-1: absent, NULL), pinned; 0, or
 * -1 if one could not be made (reported; none stays pinned). */
static int get_all(Sdfg *g, const int *cs, int n, const float **d)
{
	int i = 0;
	for (; i < n; i++)
		if (cs[i] >= 0 && !(d[i] = sdfg_const_get(g, cs[i])))
			break;
		else if (cs[i] < 0)
			d[i] = NULL;
	if (i == n)
		return 0;
	while (i--)
		if (cs[i] >= 0)
			sdfg_const_put(g, cs[i]);
	return -1;
}

static void put_all(Sdfg *g, const int *cs, int n)
{
	for (int i = 0; i < n; i++)
		if (cs[i] >= 0)
			sdfg_const_put(g, cs[i]);
}

/* scale and shift per channel: 0, 1 if some statistic is not constant,
 * -1 if their bytes could not be had (reported). */
static int bn_affine(Sdfg *g, LibNode *bn, int64_t nc, double *scale, double *shift)
{
	const int *in = bn->in; /* x, weight, bias, mean, var */
	if (!known(g, in[3]) || !known(g, in[4]) || (in[1] >= 0 && !known(g, in[1])) || (in[2] >= 0 && !known(g, in[2])))
		return 1;
	const float *d[4];
	if (get_all(g, in + 1, 4, d))
		return -1;
	const float *w = d[0], *b = d[1], *mean = d[2], *var = d[3];
	double eps = lib_float(bn, "eps", 1e-5);
	for (int64_t c = 0; c < nc; c++) {
		double s = 1.0 / sqrt((double)var[c] + eps);
		if (w)
			s *= w[c];
		scale[c] = s;
		shift[c] = (b ? b[c] : 0.0) - mean[c] * s;
	}
	put_all(g, in + 1, 4);
	return 0;
}

/* A new float32 constant with its bytes (zeroed, to be filled). */
static int new_const(Sdfg *g, const char *name, int rank, const int64_t *shape, float **data)
{
	int id = sdfg_add_container(g, name, DT_F32, CK_CONST, rank, shape);
	int64_t n = sdfg_numel(g, id);
	*data = arena_alloc_aligned(g->arena, sizeof(float) * (size_t)(n ? n : 1), 64);
	sdfg_c(g, id)->data = *data;
	sdfg_c(g, id)->origin = "";
	return id;
}

/* A folded weight [R][C]: element (i, j) of constant src at ofs + i*s0 +
 * j*s1 (elements of src), times scale[j] (by_col) or scale[i]. */
typedef struct {
	int src;
	int64_t R, C, s0, s1, ofs;
	int by_col;
	const double *scale;
} Scaled;

static int scaled_make(Sdfg *g, const ConstSrc *s, void *dst)
{
	const Scaled *f = s->ctx;
	const float *x = sdfg_const_get(g, f->src);
	if (!x)
		return -1;
	float *y = dst;
	for (int64_t i = 0; i < f->R; i++)
		for (int64_t j = 0; j < f->C; j++)
			y[i * f->C + j] = (float)(x[f->ofs + i * f->s0 + j * f->s1] * f->scale[f->by_col ? j : i]);
	sdfg_const_put(g, f->src);
	return 0;
}


/* The top-level library node producing container c, or -1. */
static int producer(Sdfg *g, int c)
{
	Node *root = g->root;
	for (int i = 0; i < root->nkids; i++) {
		LibNode *l = root->kids[i]->kind == N_BLOCK ? root->kids[i]->lib : NULL;
		for (int k = 0; l && k < l->nout; k++)
			if (l->out[k] == c)
				return i;
	}
	return -1;
}

static int readers(Sdfg *g, int c)
{
	int n = 0;
	for (int i = 0; i < g->root->nkids; i++)
		n += node_reads(g, g->root->kids[i], c);
	for (int i = 0; i < g->noutputs; i++)
		n += sdfg_root_of(g, g->outputs[i]) == c;
	return n;
}

/* Fold the batch norm at root position bi into the convolution before it:
 * 1 folded, 0 not foldable, -1 failed (reported). */
static int fold_into_conv(Sdfg *g, int bi)
{
	LibNode *bn = g->root->kids[bi]->lib;
	int x = bn->in[0];
	if (sdfg_root_of(g, x) != x || sdfg_c(g, x)->kind != CK_TRANSIENT)
		return 0;
	int pi = producer(g, x);
	if (pi < 0 || g->root->kids[pi]->lib->op != LIB_CONV || readers(g, x) != 1)
		return 0;
	LibNode *cv = g->root->kids[pi]->lib;
	int w = cv->in[1], b = cv->in[2];
	if (!known(g, w) || (b >= 0 && !known(g, b)))
		return 0;
	Container *wc = sdfg_c(g, w);
	int64_t oc = 0;
	ex_isint(wc->shape[0], &oc);
	int64_t per = sdfg_numel(g, w) / (oc ? oc : 1);
	double *scale = arena_alloc(g->arena, sizeof(double) * (size_t)oc * 2);
	double *shift = scale + oc;
	int rc = bn_affine(g, bn, oc, scale, shift);
	if (rc)
		return rc > 0 ? 0 : -1;
	int64_t wshape[MAXDIM], bshape[1] = {oc};
	for (int i = 0; i < wc->rank; i++)
		ex_isint(wc->shape[i], &wshape[i]);
	const float *bd = b >= 0 ? sdfg_const_get(g, b) : NULL;
	if (b >= 0 && !bd)
		return -1;
	float *nb;
	Scaled f = {w, oc, per, per, 1, 0, 0, scale};
	int nwid = sdfg_const_new(g, arena_printf(g->arena, "%s_bn", wc->name), DT_F32, wc->rank, wshape, scaled_make, &f,
	                          sizeof f);
	int nbid = new_const(g, arena_printf(g->arena, "%s_bn_bias", wc->name), 1, bshape, &nb);
	for (int64_t c = 0; c < oc; c++)
		nb[c] = (float)((bd ? bd[c] : 0.0) * scale[c] + shift[c]);
	if (bd)
		sdfg_const_put(g, b);
	cv->in[1] = nwid;
	cv->in[2] = nbid;
	cv->out[0] = bn->out[0];
	g->root->kids[pi]->label = arena_printf(g->arena, "%s+%s", g->root->kids[pi]->label, g->root->kids[bi]->label);
	sdfg_remove(g->root, bi);
	return 1;
}

/* The root of a rank-2 float32 constant or view of one, with element
 * [i][j] at ofs + i*st0 + j*st1 of it; or -1. */
static int const2d(Sdfg *g, int c, int64_t *st0, int64_t *st1, int64_t *ofs)
{
	Container *k = sdfg_c(g, c);
	int r = sdfg_root_of(g, c);
	if (k->rank != 2 || k->dt != DT_F32 || !known(g, r))
		return -1;
	*ofs = 0;
	if (!ex_isint(k->stride[0], st0) || !ex_isint(k->stride[1], st1) || (k->offset && !ex_isint(k->offset, ofs)))
		return -1;
	return r;
}

/* Batch norm over the columns of a 2-d GEMM with constant B (Linear then
 * BatchNorm1d): B'[k][n] = B[k][n] * scale[n], bias'[n] = beta * bias[n] *
 * scale[n] + shift[n] (with beta then 1); alpha stays. Returns as
 * fold_into_conv. */
static int fold_into_gemm(Sdfg *g, int bi)
{
	LibNode *bn = g->root->kids[bi]->lib;
	int x = bn->in[0];
	if (sdfg_root_of(g, x) != x || sdfg_c(g, x)->kind != CK_TRANSIENT || sdfg_c(g, x)->rank != 2)
		return 0;
	int pi = producer(g, x);
	if (pi < 0 || g->root->kids[pi]->lib->op != LIB_GEMM || readers(g, x) != 1)
		return 0;
	LibNode *gm = g->root->kids[pi]->lib;
	int B = gm->in[1], b = gm->in[2];
	int64_t s0, s1, ofs, K = 0, N = 0;
	int broot = const2d(g, B, &s0, &s1, &ofs);
	if (broot < 0 || sdfg_c(g, gm->in[0])->rank != 2)
		return 0;
	ex_isint(sdfg_c(g, B)->shape[0], &K);
	ex_isint(sdfg_c(g, B)->shape[1], &N);
	double beta = lib_float(gm, "beta", 1);
	int hasb = b >= 0 && beta != 0;
	if (hasb) {
		int64_t n = 0;
		if (!known(g, b) || sdfg_c(g, b)->rank != 1 || !ex_isint(sdfg_c(g, b)->shape[0], &n) || n != N)
			return 0;
	}
	double *scale = arena_alloc(g->arena, sizeof(double) * (size_t)N * 2);
	double *shift = scale + N;
	int rc = bn_affine(g, bn, N, scale, shift);
	if (rc)
		return rc > 0 ? 0 : -1;
	int64_t wshape[2] = {K, N}, bshape[1] = {N};
	const float *biasd = hasb ? sdfg_const_get(g, b) : NULL;
	if (hasb && !biasd)
		return -1;
	float *nb;
	const char *wn = sdfg_c(g, broot)->name;
	Scaled f = {broot, K, N, s0, s1, ofs, 1, scale};
	int nwid = sdfg_const_new(g, arena_printf(g->arena, "%s_bn", wn), DT_F32, 2, wshape, scaled_make, &f, sizeof f);
	int nbid = new_const(g, arena_printf(g->arena, "%s_bn_bias", wn), 1, bshape, &nb);
	for (int64_t n = 0; n < N; n++)
		nb[n] = (float)((biasd ? beta * biasd[n] : 0.0) * scale[n] + shift[n]);
	if (biasd)
		sdfg_const_put(g, b);
	gm->in[1] = nwid;
	gm->in[2] = nbid;
	lib_set_float(g, gm, "beta", 1);
	gm->out[0] = bn->out[0];
	g->root->kids[pi]->label = arena_printf(g->arena, "%s+%s", g->root->kids[pi]->label, g->root->kids[bi]->label);
	sdfg_remove(g->root, bi);
	return 1;
}

/* 0, or -1 if the statistics' bytes could not be had (reported). */
static int prepare(Sdfg *g, LibNode *bn)
{
	Container *x = sdfg_c(g, bn->in[0]);
	int64_t nc = 1;
	if (x->rank > 1)
		ex_isint(x->shape[1], &nc);
	double *scale = arena_alloc(g->arena, sizeof(double) * (size_t)nc * 2);
	double *shift = scale + nc;
	int rc = x->dt != DT_F32 ? 1 : bn_affine(g, bn, nc, scale, shift);
	if (rc)
		return rc > 0 ? 0 : -1;
	float *s, *t;
	int64_t shape[1] = {nc};
	int sid = new_const(g, "bn_scale", 1, shape, &s);
	int tid = new_const(g, "bn_shift", 1, shape, &t);
	for (int64_t c = 0; c < nc; c++) {
		s[c] = (float)scale[c];
		t[c] = (float)shift[c];
	}
	bn->in[1] = sid;
	bn->in[2] = tid;
	bn->in[3] = bn->in[4] = -1;
	lib_set_int(g, bn, "prepared", 1);
	return 0;
}

int pass_fold_constants(PassCtx *c)
{
	Sdfg *g = c->g;
	int fold = pass_bool(c, "batchnorm");
	for (int i = 0; i < g->root->nkids; i++) {
		Node *n = g->root->kids[i];
		if (n->kind != N_BLOCK || !n->lib || n->lib->op != LIB_BATCHNORM)
			continue;
		int rc = fold ? fold_into_conv(g, i) : 0;
		if (rc == 0 && fold)
			rc = fold_into_gemm(g, i);
		if (rc < 0 || (rc == 0 && prepare(g, n->lib)))
			return -1;
		if (rc > 0)
			i--;
	}
	return 0;
}
