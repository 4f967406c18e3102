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
 * Works on library nodes at the top level, before expansion.
 */
#include <math.h>
#include <string.h>

#include "../ir.h"

static const void *cdata(Sdfg *g, int c)
{
	if (c < 0)
		return NULL;
	Container *k = sdfg_c(g, c);
	if (k->kind != CK_CONST || k->dt != DT_F32 || !k->data)
		return NULL;
	return k->data;
}

/* scale and shift per channel, or -1 if some statistic is not constant. */
static int bn_affine(Sdfg *g, LibNode *bn, int64_t nc, double *scale, double *shift)
{
	const float *w = cdata(g, bn->in[1]), *b = cdata(g, bn->in[2]);
	const float *mean = cdata(g, bn->in[3]), *var = cdata(g, bn->in[4]);
	if (!mean || !var || (bn->in[1] >= 0 && !w) || (bn->in[2] >= 0 && !b))
		return -1;
	double eps = lib_float(bn, "eps", 1e-5);
	for (int64_t c = 0; c < nc; c++) {
		double s = 1.0 / sqrt((double)var[c] + eps);
		if (w)
			s *= w[c];
		scale[c] = s;
		shift[c] = (b ? b[c] : 0.0) - mean[c] * s;
	}
	return 0;
}

static int new_const(Sdfg *g, const char *name, int rank, const int64_t *shape, float **data)
{
	int id = sdfg_add_container(g, name, DT_F32, CK_CONST, rank, shape);
	int64_t n = sdfg_numel(g, id);
	*data = arena_alloc_aligned(g->arena, sizeof(float) * (size_t)(n ? n : 1), 64);
	sdfg_c(g, id)->data = *data;
	sdfg_c(g, id)->origin = "";
	return id;
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
	const float *wd = cdata(g, w), *bd = cdata(g, b);
	if (!wd || (b >= 0 && !bd))
		return 0;
	Container *wc = sdfg_c(g, w);
	int64_t oc = 0;
	ex_isint(wc->shape[0], &oc);
	int64_t per = sdfg_numel(g, w) / (oc ? oc : 1);
	double *scale = arena_alloc(g->arena, sizeof(double) * (size_t)oc * 2);
	double *shift = scale + oc;
	if (bn_affine(g, bn, oc, scale, shift))
		return 0;
	int64_t wshape[MAXDIM], bshape[1] = {oc};
	for (int i = 0; i < wc->rank; i++)
		ex_isint(wc->shape[i], &wshape[i]);
	float *nw, *nb;
	int nwid = new_const(g, arena_printf(g->arena, "%s_bn", wc->name), wc->rank, wshape, &nw);
	int nbid = new_const(g, arena_printf(g->arena, "%s_bn_bias", wc->name), 1, bshape, &nb);
	for (int64_t c = 0; c < oc; c++) {
		for (int64_t k = 0; k < per; k++)
			nw[c * per + k] = (float)(wd[c * per + k] * scale[c]);
		nb[c] = (float)((bd ? bd[c] : 0.0) * scale[c] + shift[c]);
	}
	cv->in[1] = nwid;
	cv->in[2] = nbid;
	cv->out[0] = bn->out[0];
	g->root->kids[pi]->label = arena_printf(g->arena, "%s+%s", g->root->kids[pi]->label, g->root->kids[bi]->label);
	sdfg_remove(g->root, bi);
	return 1;
}

/* Element [i][j] of a rank-2 float32 constant or view of one, or NULL data. */
static const float *const2d(Sdfg *g, int c, int64_t *st0, int64_t *st1, int64_t *ofs)
{
	Container *k = sdfg_c(g, c), *r = sdfg_c(g, sdfg_root_of(g, c));
	if (k->rank != 2 || k->dt != DT_F32 || r->kind != CK_CONST || !r->data)
		return NULL;
	*ofs = 0;
	if (!ex_isint(k->stride[0], st0) || !ex_isint(k->stride[1], st1) || (k->offset && !ex_isint(k->offset, ofs)))
		return NULL;
	return r->data;
}

/* Batch norm over the columns of a 2-d GEMM with constant B (Linear then
 * BatchNorm1d): B'[k][n] = B[k][n] * scale[n], bias'[n] = beta * bias[n] *
 * scale[n] + shift[n] (with beta then 1); alpha stays. */
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
	const float *bd = const2d(g, B, &s0, &s1, &ofs);
	if (!bd || sdfg_c(g, gm->in[0])->rank != 2)
		return 0;
	ex_isint(sdfg_c(g, B)->shape[0], &K);
	ex_isint(sdfg_c(g, B)->shape[1], &N);
	const float *biasd = NULL;
	double beta = lib_float(gm, "beta", 1);
	if (b >= 0 && beta != 0) {
		int64_t n = 0;
		biasd = cdata(g, b);
		if (!biasd || sdfg_c(g, b)->rank != 1 || !ex_isint(sdfg_c(g, b)->shape[0], &n) || n != N)
			return 0;
	}
	double *scale = arena_alloc(g->arena, sizeof(double) * (size_t)N * 2);
	double *shift = scale + N;
	if (bn_affine(g, bn, N, scale, shift))
		return 0;
	int64_t wshape[2] = {K, N}, bshape[1] = {N};
	float *nw, *nb;
	const char *wn = sdfg_c(g, sdfg_root_of(g, B))->name;
	int nwid = new_const(g, arena_printf(g->arena, "%s_bn", wn), 2, wshape, &nw);
	int nbid = new_const(g, arena_printf(g->arena, "%s_bn_bias", wn), 1, bshape, &nb);
	for (int64_t k = 0; k < K; k++)
		for (int64_t n = 0; n < N; n++)
			nw[k * N + n] = (float)(bd[ofs + k * s0 + n * s1] * scale[n]);
	for (int64_t n = 0; n < N; n++)
		nb[n] = (float)((biasd ? beta * biasd[n] : 0.0) * scale[n] + shift[n]);
	gm->in[1] = nwid;
	gm->in[2] = nbid;
	lib_set_float(g, gm, "beta", 1);
	gm->out[0] = bn->out[0];
	g->root->kids[pi]->label = arena_printf(g->arena, "%s+%s", g->root->kids[pi]->label, g->root->kids[bi]->label);
	sdfg_remove(g->root, bi);
	return 1;
}

static void prepare(Sdfg *g, LibNode *bn)
{
	Container *x = sdfg_c(g, bn->in[0]);
	int64_t nc = 1;
	if (x->rank > 1)
		ex_isint(x->shape[1], &nc);
	double *scale = arena_alloc(g->arena, sizeof(double) * (size_t)nc * 2);
	double *shift = scale + nc;
	if (x->dt != DT_F32 || bn_affine(g, bn, nc, scale, shift))
		return;
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
}

int pass_fold_constants(PassCtx *c)
{
	Sdfg *g = c->g;
	int fold = pass_bool(c, "batchnorm");
	for (int i = 0; i < g->root->nkids; i++) {
		Node *n = g->root->kids[i];
		if (n->kind != N_BLOCK || !n->lib || n->lib->op != LIB_BATCHNORM)
			continue;
		if (fold && (fold_into_conv(g, i) || fold_into_gemm(g, i))) {
			i--;
			continue;
		}
		prepare(g, n->lib);
	}
	return 0;
}
