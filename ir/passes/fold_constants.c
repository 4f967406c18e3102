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

/* ---- elementwise functions of constants --------------------------------------------
 * A library node that computes elementwise from constants only (a weight's
 * dequantization: int8 to (q - zero point) * scale, as PT2E's dequantize
 * nodes and the casts, subtractions and products of torchao's Core ATen
 * graphs do it) would recompute the same values on every run. Its output
 * becomes a constant instead, whose source computes it when the weights are
 * written, element by element in the types the expansion would use at run
 * time (each operation rounded on its own, as torch does), so the
 * contraction that reads it packs it as any weight. Only float32 and
 * float64 results of the exact operations (conversion, +, -, *, /,
 * negation) and of float32 dequantization are folded. */

/* Element idx of container c (constant geometry) of a constant as a double. */
static double elem(Sdfg *g, int c, const char *bytes, const int64_t *idx)
{
	Container *k = sdfg_c(g, c);
	int64_t e = 0, v;
	if (k->offset && ex_isint(k->offset, &v))
		e = v;
	for (int d = 0; d < k->rank; d++)
		if (ex_isint(k->stride[d], &v))
			e += idx[d] * v;
	return sdfg_elem(k->dt, bytes, e);
}

/* Is container c a constant with bytes to be had, of constant geometry and
 * a type elem() reads? */
static int const_operand(Sdfg *g, int c)
{
	Container *k = sdfg_c(g, c);
	int r = sdfg_root_of(g, c);
	int64_t v;
	if (!sdfg_const_known(g, r) || k->dt == DT_F16 || k->dt == DT_BF16 || (k->offset && !ex_isint(k->offset, &v)))
		return 0;
	for (int d = 0; d < k->rank; d++)
		if (!ex_isint(k->shape[d], &v) || !ex_isint(k->stride[d], &v))
			return 0;
	return 1;
}

/* Can library node l be computed at compile time, exactly as at run time? */
static int foldable(Sdfg *g, LibNode *l)
{
	int out = l->nout == 1 ? l->out[0] : -1;
	if (out < 0 || sdfg_root_of(g, out) != out || sdfg_c(g, out)->kind != CK_TRANSIENT || sdfg_numel(g, out) < 0)
		return 0;
	Dtype odt = sdfg_c(g, out)->dt;
	if (l->op == LIB_ELEMWISE) {
		TCode code = (TCode)lib_int(l, "code", T_ASSIGN);
		if (code != T_ASSIGN && code != T_CAST && code != T_ADD && code != T_SUB && code != T_MUL && code != T_DIV &&
		    code != T_NEG)
			return 0;
		if ((odt != DT_F32 && odt != DT_F64) || lib_int(l, "cdt", odt) != odt || lib_float(l, "alpha", 1) != 1 ||
		    lib_float(l, "scale", 1) != 1 || l->nin != tcode_arity(code))
			return 0;
	} else if (l->op == LIB_QUANT) {
		/* dequantization whose every type is float32 */
		if (!lib_int(l, "dq", 0) || odt != DT_F32 || (l->in[1] >= 0 && sdfg_c(g, l->in[1])->dt != DT_F32))
			return 0;
	} else
		return 0;
	int any = 0;
	for (int i = 0; i < l->nin; i++) {
		if (l->in[i] < 0)
			continue;
		if (!const_operand(g, l->in[i]) || sdfg_c(g, l->in[i])->rank > sdfg_c(g, out)->rank)
			return 0;
		any = 1;
	}
	return any;
}

typedef struct {
	LibNode l;
	int out;
} Folded;

/* The index into input c (rank ri) of output element oi (rank ro), numpy
 * broadcasting; quant's parameters: one element per block. */
static void in_index(Sdfg *g, const LibNode *l, int c, int ro, const int64_t *oi, int64_t *ii)
{
	Container *k = sdfg_c(g, c);
	int64_t blk[MAXDIM] = {0};
	int param = l->op == LIB_QUANT && c != l->in[0];
	if (param && lib_ints(l, "blk", blk, MAXDIM) != ro)
		memset(blk, 0, sizeof blk);
	for (int d = 0; d < k->rank; d++) {
		int od = d + ro - k->rank;
		if (od < 0) {
			ii[d] = 0;   /* not broadcastable: foldable() keeps such nodes out */
			continue;
		}
		int64_t n = 1;
		ex_isint(k->shape[d], &n);
		if (param)
			ii[d] = blk[od] == 0 ? 0 : blk[od] == 1 ? oi[od] : oi[od] / blk[od];
		else
			ii[d] = n == 1 ? 0 : oi[od];
	}
}

static int folded_make(Sdfg *g, const ConstSrc *cs, void *dst)
{
	const Folded *f = cs->ctx;
	const LibNode *l = &f->l;
	const char *in[8] = {0};
	int n = 0;
	for (; n < l->nin; n++)
		if (l->in[n] >= 0 && !(in[n] = sdfg_const_get(g, sdfg_root_of(g, l->in[n]))))
			break;
	int rc = n < l->nin ? -1 : 0;
	Container *o = sdfg_c(g, f->out);
	int r = o->rank;
	int64_t sh[MAXDIM], oi[MAXDIM] = {0}, ii[MAXDIM], total = sdfg_numel(g, f->out);
	for (int d = 0; d < r; d++)
		ex_isint(o->shape[d], &sh[d]);
	TCode code = (TCode)lib_int(l, "code", T_ASSIGN);
	/* the numbers in place of absent operands, once */
	double num[3] = {0, 0, 0};
	static const char *const scalar[3] = {"scalar0", "scalar1", "scalar2"};
	for (int i = 0; i < l->nin && i < 3; i++)
		if (l->in[i] < 0)
			num[i] = l->op == LIB_QUANT ? lib_float(l, i == 1 ? "scale" : "zp", i == 1 ? 1 : 0)
			                            : lib_float(l, scalar[i], 0);
	for (int64_t e = 0; !rc && e < total; e++) {
		double a[3] = {num[0], num[1], num[2]};
		for (int i = 0; i < l->nin; i++)
			if (l->in[i] >= 0) {
				in_index(g, l, l->in[i], r, oi, ii);
				a[i] = elem(g, l->in[i], in[i], ii);
			}
		double v;
		if (o->dt == DT_F32) {
			/* each operation rounded to float32 on its own */
			float x = (float)a[0], y = (float)a[1], z = (float)a[2], t;
			if (l->op == LIB_QUANT) {
				t = x - z;
				t = t * y;
			} else
				switch (code) {
				case T_ADD: t = x + y; break;
				case T_SUB: t = x - y; break;
				case T_MUL: t = x * y; break;
				case T_DIV: t = x / y; break;
				case T_NEG: t = -x; break;
				default: t = x; break;
				}
			memcpy((char *)dst + e * 4, &t, 4);
		} else {
			switch (code) {
			case T_ADD: v = a[0] + a[1]; break;
			case T_SUB: v = a[0] - a[1]; break;
			case T_MUL: v = a[0] * a[1]; break;
			case T_DIV: v = a[0] / a[1]; break;
			case T_NEG: v = -a[0]; break;
			default: v = a[0]; break;
			}
			memcpy((char *)dst + e * 8, &v, 8);
		}
		for (int d = r - 1; d >= 0 && ++oi[d] == sh[d]; d--)
			oi[d] = 0;
	}
	while (n--)
		if (l->in[n] >= 0)
			sdfg_const_put(g, sdfg_root_of(g, l->in[n]));
	return rc;
}

static int same_shape(Sdfg *g, int a, int b)
{
	Container *x = sdfg_c(g, a), *y = sdfg_c(g, b);
	if (x->rank != y->rank)
		return 0;
	for (int d = 0; d < x->rank; d++) {
		int64_t m, n;
		if (!ex_isint(x->shape[d], &m) || !ex_isint(y->shape[d], &n) || m != n)
			return 0;
	}
	return 1;
}

/* The dequantization of an int8 constant whose parts are q, s, z (ir.h,
 * Dequant), folded at its end: a float32 quant node (of int8 or uint8
 * integers: uint4 weights come as uint8), or torchao's chain
 * in Core ATen, cast, subtraction of the zero point, product with the
 * scale, each an earlier folded node. 1 and d set, or 0. */
static int dequant_of(Sdfg *g, const LibNode *l, Dequant *d)
{
	int out = l->out[0], r = sdfg_c(g, out)->rank;
	memset(d, 0, sizeof *d);
	d->s = d->z = -1;
	d->sc = 1;
	if (l->op == LIB_QUANT) {
		int q = l->in[0];
		Dtype qd = sdfg_c(g, q)->dt;
		if ((qd != DT_I8 && qd != DT_U8) || !same_shape(g, q, out))
			return 0;
		d->q = q, d->s = l->in[1], d->z = l->in[2], d->quant = 1;
		d->sc = lib_float(l, "scale", 1);
		d->zc = lib_float(l, "zp", 0);
		if (lib_ints(l, "blk", d->blk, MAXDIM) != r)
			memset(d->blk, 0, sizeof d->blk);
		return 1;
	}
	/* an operand that is a plain int8 cast so far (its node folded before) */
	const Dequant *pure[2] = {NULL, NULL};
	for (int i = 0; i < 2 && i < l->nin; i++) {
		int x = l->in[i];
		const Dequant *xd = x >= 0 && sdfg_root_of(g, x) == x && same_shape(g, x, out) ? sdfg_c(g, x)->dq : NULL;
		if (xd && !xd->quant && xd->s < 0 && xd->sc == 1)
			pure[i] = xd;
	}
	switch ((TCode)lib_int(l, "code", T_ASSIGN)) {
	case T_CAST:
	case T_ASSIGN: {
		int x = l->in[0];
		if (sdfg_c(g, x)->dt != DT_I8 || sdfg_c(g, sdfg_root_of(g, x))->dq || !same_shape(g, x, out))
			return 0;
		d->q = x;
		return 1;
	}
	case T_SUB:
		if (!pure[0] || pure[0]->z >= 0 || pure[0]->zc != 0)
			return 0;
		*d = *pure[0];
		if (l->in[1] >= 0)
			d->z = l->in[1];
		else
			d->zc = lib_float(l, "scalar1", 0);
		return 1;
	case T_MUL:
		for (int i = 0; i < 2; i++) {
			if (!pure[i])
				continue;
			*d = *pure[i];
			if (l->in[1 - i] >= 0)
				d->s = l->in[1 - i];
			else
				d->sc = lib_float(l, arena_printf(g->arena, "scalar%d", 1 - i), 1);
			return 1;
		}
		return 0;
	default:
		return 0;
	}
}

/* Fold every foldable node (in program order, so a chain folds whole). */
static void fold_elementwise(Sdfg *g)
{
	for (int i = 0; i < g->root->nkids; i++) {
		Node *n = g->root->kids[i];
		LibNode *l = n->kind == N_BLOCK ? n->lib : NULL;
		if (!l || !foldable(g, l))
			continue;
		Folded f = {*l, l->out[0]};
		Dequant d;
		if (dequant_of(g, l, &d)) {
			Dequant *keep = arena_alloc(g->arena, sizeof d);
			*keep = d;
			sdfg_c(g, f.out)->dq = keep;
		}
		Container *o = sdfg_c(g, f.out);
		o->kind = CK_CONST;
		void *ctx = arena_alloc(g->arena, sizeof f);
		memcpy(ctx, &f, sizeof f);
		sdfg_const_source(g, f.out, folded_make, ctx);
		sdfg_remove(g->root, i--);
	}
}

int pass_fold_constants(PassCtx *c)
{
	Sdfg *g = c->g;
	if (pass_bool(c, "elementwise"))
		fold_elementwise(g);
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
