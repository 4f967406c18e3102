/*
 * pool.c - lowerings of the pool family (ops_pool.h; the expansions are in
 * ir/expand/pool.c): pooling, resampling and sliding windows. Max, average
 * and adaptive pooling of 2 or 3 spatial dims (1-d through the 2-d node
 * over a height of 1; max with indices: LIB_POOL), upsampling (nearest,
 * nearest-exact, bilinear, bicubic, by output size or scale factors:
 * LIB_UPSAMPLE), grid sampling (grid_sampler, grid_sampler_2d:
 * LIB_GRIDSAMPLE), col2im (fold: LIB_COL2IM) and im2col (unfold:
 * LIB_IM2COL).
 *
 * Windows are checked here, where the message can name the node: kernel,
 * stride and dilation at least 1, padding at most half the window, and
 * each output size the one torch's formula gives in either ceil mode
 * (lw_check_window; 3-d average pooling also as torch's avg_pool3d, no
 * input smaller than the kernel), so the expansions index without checks. With run-time dims a pooling takes
 * a symbolic batch only.
 */
#include <math.h>
#include <string.h>

#include "lower.h"

/* ---- pooling --------------------------------------------------------------------- */

/* Pooling's padding, at most half the window as torch's kernels have it
 * (a window wholly in the padding would have nothing to take). A window
 * of no size is lw_check_window's to report. */
static int pool_padding(Imp *m, int mode, int n, const int64_t *k, const int64_t *p, const int64_t *d)
{
	for (int j = 0; j < n; j++) {
		int64_t ext = k[j];
		if (k[j] < 1 || d[j] < 1)
			continue;
		if (mode == PL_MAX && (ck_mul(k[j] - 1, d[j], &ext) || ck_add(ext, 1, &ext)))
			ext = INT64_MAX;
		if (p[j] > ext / 2) {
			lw_error(m, "pooling with padding %lld, more than half the window of %lld", (long long)p[j], (long long)ext);
			return -1;
		}
	}
	return 0;
}

/* 3-d average pooling's input, as large as the kernel in every dim
 * whatever the padding and ceil mode: torch's avg_pool3d checks it
 * (pool3d_shape_check's check_input_size), where its 2-d and max pooling
 * take a window wider than the input. */
static int pool_avg3d_input(Imp *m, int x, const int64_t *k)
{
	int first = lw_c(m, x)->rank - 3;
	for (int j = 0; j < 3; j++) {
		int64_t in;
		if (ex_isint(lw_dimx(m, x, first + j), &in) && in < k[j]) {
			lw_error(m, "3-d average pooling of size %lld in dim %d with kernel %lld (torch's avg_pool3d takes no "
			            "input smaller than its kernel)",
			         (long long)in, first + j, (long long)k[j]);
			return -1;
		}
	}
	return 0;
}

/* 2-d and 3-d pooling (PL_3D), and 1-d pooling (PL_1D) as 2-d over a
 * size-1 height. */
int lower_pool(Imp *m, const cJSON *node)
{
	int x = lw_tensor(m, "self");
	if (x < 0)
		return -1;
	int mode = m->info->param & ~(PL_1D | PL_3D), one = (m->info->param & PL_1D) != 0;
	int ns = one ? 1 : (m->info->param & PL_3D) ? 3 : 2;
	int r = lw_c(m, x)->rank;
	if (r != ns + 1 && r != ns + 2) {
		lw_error(m, "%d-d pooling of a rank-%d tensor is not supported", ns, r);
		return -1;
	}
	if (m->ndyn && (lw_batch_only(m, node, x, r == ns + 2) || lw_batch_only(m, node, -1, r == ns + 2)))
		return -1;
	int idx = -1;
	if ((mode == PL_MAX || mode == PL_ADAPTIVE_MAX_) && m->info->nrets == 2)
		idx = lw_used_out(m, node, 1);
	int out;
	if (one) {
		x = lw_unsqueeze_h(m, x);
		out = lw_squeezed_out(m, node);
	} else
		out = lw_new_out(m, node, 0);
	if (out < 0)
		return -1;
	LibNode *l = lw_lib(m, LIB_POOL);
	l->in[0] = x, l->nin = 1;
	l->out[0] = out, l->nout = 1;
	if (idx >= 0)
		l->out[1] = idx, l->nout = 2;
	lib_set_int(m->g, l, "mode", mode);
	int nk = ns == 3 ? 3 : 2; /* spatial dims of the node */
	if (nk == 3)
		lib_set_int(m->g, l, "nd", 3);
	if (mode == PL_ADAPTIVE || mode == PL_ADAPTIVE_MAX_)
		return 0;
	Val *k = lw_arg(m, "kernel_size"), *s = lw_arg(m, "stride"), *p = lw_arg(m, "padding");
	int64_t kk[3], ss[3], pp[3] = {0, 0, 0}, dd[3] = {1, 1, 1};
	if (k->k != V_INTS || k->n < 1) {
		lw_error(m, "pooling with an empty kernel_size");
		return -1;
	}
	for (int j = 0; j < nk; j++) {
		kk[j] = k->n > j ? k->is[j] : k->is[0];
		ss[j] = kk[j];
		if (s->k == V_INTS && s->n > 0)
			ss[j] = s->n > j ? s->is[j] : s->is[0];
		if (p->k == V_INTS && p->n > 0)
			pp[j] = p->n > j ? p->is[j] : p->is[0];
	}
	if (mode == PL_MAX) {
		Val *d = lw_arg(m, "dilation");
		if (d->k == V_INTS && d->n > 0)
			for (int j = 0; j < nk; j++)
				dd[j] = d->n > j ? d->is[j] : d->is[0];
	} else {
		lib_set_int(m->g, l, "count_include_pad", lw_int(m, "count_include_pad", 1));
		lib_set_int(m->g, l, "divisor", lw_has_arg(m, "divisor_override") ? lw_int(m, "divisor_override", 0) : 0);
	}
	if (one) {
		kk[1] = kk[0], ss[1] = ss[0], pp[1] = pp[0], dd[1] = dd[0];
		kk[0] = 1, ss[0] = 1, pp[0] = 0, dd[0] = 1;
	}
	int ceil = lw_int(m, "ceil_mode", 0) != 0;
	if (mode == PL_AVG && nk == 3 && pool_avg3d_input(m, x, kk))
		return -1;
	if (pool_padding(m, mode, nk, kk, pp, dd) ||
	    lw_check_window(m, &(Window){"pooling", lw_c(m, x)->rank - nk, nk, one, ceil ? WIN_CEIL : WIN_FLOOR, kk, ss, pp, NULL, dd},
	                 x, out))
		return -1;
	lib_set_ints(m->g, l, "kernel", kk, nk);
	lib_set_ints(m->g, l, "stride", ss, nk);
	lib_set_ints(m->g, l, "padding", pp, nk);
	lib_set_ints(m->g, l, "dilation", dd, nk);
	lib_set_int(m->g, l, "ceil_mode", ceil);
	return 0;
}

/* ---- upsampling ------------------------------------------------------------------ */

/* Upsampling: output size from the graph; scales (0 if none) as torch
 * passes them to its kernels (scale_factors of .vec, scales_h/w). */
int lower_upsample(Imp *m, const cJSON *node)
{
	int vec = lw_has_arg(m, "input"), one = (m->info->param & UP_1D) != 0;
	int x = lw_tensor(m, vec ? "input" : "self");
	if (x < 0)
		return -1;
	if (lw_c(m, x)->rank != (one ? 3 : 4)) {
		lw_error(m, "%d-d upsampling of a rank-%d tensor", one ? 1 : 2, lw_c(m, x)->rank);
		return -1;
	}
	double sh = 0, sw = 0;
	if (vec) {
		Val *sf = lw_arg(m, "scale_factors");
		if (sf->k == V_FLOATS && sf->n >= 1)
			sh = one ? 0 : sf->fs[0], sw = sf->n > 1 ? sf->fs[1] : sf->fs[0];
	} else if (one)
		sw = lw_num(m, "scales", 0);
	else {
		sh = lw_num(m, "scales_h", 0);
		sw = lw_num(m, "scales_w", 0);
	}
	int out;
	if (one) {
		x = lw_unsqueeze_h(m, x);
		out = lw_squeezed_out(m, node);
	} else
		out = lw_new_out(m, node, 0);
	if (out < 0)
		return -1;
	LibNode *l = lw_lib(m, LIB_UPSAMPLE);
	l->in[0] = x, l->nin = 1;
	l->out[0] = out, l->nout = 1;
	lib_set_int(m->g, l, "mode", m->info->param & ~UP_1D);
	lib_set_int(m->g, l, "align_corners", lw_has_arg(m, "align_corners") ? lw_int(m, "align_corners", 0) : 0);
	lib_set_float(m->g, l, "scale_h", sh);
	lib_set_float(m->g, l, "scale_w", sw);
	return 0;
}

/* ---- grid_sampler, grid_sampler_2d ----------------------------------------------- */

int lower_grid_sampler(Imp *m, const cJSON *node)
{
	int x = lw_tensor(m, "input"), gr = lw_tensor(m, "grid");
	if (x < 0 || gr < 0)
		return -1;
	Container *xc = lw_c(m, x), *gc = lw_c(m, gr);
	if (xc->rank != 4 || gc->rank != 4 || lw_dim(m, gr, 3) != 2) {
		lw_error(m, "%s: only 4-d input with a (N, H, W, 2) grid is supported (got ranks %d and %d)", m->info->target,
		         xc->rank, gc->rank);
		return -1;
	}
	if (lw_float_tensor(m, x, "input") || lw_float_tensor(m, gr, "grid"))
		return -1;
	if (xc->dt != gc->dt) {
		lw_error(m, "%s: input (%s) and grid (%s) must have the same dtype", m->info->target, dtype_info[xc->dt].name,
		         dtype_info[gc->dt].name);
		return -1;
	}
	if (lw_dim(m, x, 2) == 0 || lw_dim(m, x, 3) == 0) {
		lw_error(m, "%s: input has an empty spatial dimension", m->info->target);
		return -1;
	}
	int64_t mode = lw_int(m, "interpolation_mode", 0), pad = lw_int(m, "padding_mode", 0);
	if (mode < GS_BILINEAR || mode > GS_BICUBIC || pad < GS_ZEROS || pad > GS_REFLECTION) {
		lw_error(m, "%s: interpolation mode %lld / padding mode %lld unknown", m->info->target, (long long)mode,
		         (long long)pad);
		return -1;
	}
	int out = lw_new_out(m, node, 0);
	if (out < 0)
		return -1;
	LibNode *l = lw_lib(m, LIB_GRIDSAMPLE);
	l->in[0] = x, l->in[1] = gr, l->nin = 2;
	l->out[0] = out, l->nout = 1;
	lib_set_int(m->g, l, "mode", mode);
	lib_set_int(m->g, l, "padding", pad);
	lib_set_int(m->g, l, "align_corners", lw_int(m, "align_corners", 0));
	return 0;
}

/* ---- col2im (fold), im2col (unfold) ---------------------------------------------- */

/* The window arguments of fold and unfold (kernel_size, dilation, padding,
 * stride: one value or two) into w[4][2], checked, and the number of
 * blocks per spatial dim of a (padded) size[2] in nb. */
static int window2(Imp *m, const char *op, const int64_t *size, int64_t w[4][2], int64_t nb[2])
{
	static const char *const names[4] = {"kernel_size", "dilation", "padding", "stride"};
	for (int k = 0; k < 4; k++) {
		Val *a = lw_arg(m, names[k]);
		for (int j = 0; j < 2; j++)
			w[k][j] = a->k == V_INTS && a->n > 0 ? a->is[a->n > j ? j : 0] : 0;
	}
	int64_t *ks = w[0], *dl = w[1], *pd = w[2], *st = w[3];
	for (int j = 0; j < 2; j++) {
		if (ks[j] < 1 || dl[j] < 1 || st[j] < 1 || pd[j] < 0) {
			lw_error(m, "%s with kernel_size %lld, dilation %lld, stride %lld, padding %lld", op, (long long)ks[j],
			         (long long)dl[j], (long long)st[j], (long long)pd[j]);
			return -1;
		}
		nb[j] = (size[j] + 2 * pd[j] - dl[j] * (ks[j] - 1) - 1) / st[j] + 1;
	}
	return 0;
}

/* col2im (F.fold): self [N,] C*kh*kw, L with L = Lh*Lw blocks, where
 * Lh = (H + 2*pad - dil*(kh-1) - 1) / stride + 1 (likewise Lw). The node
 * reads self through a view [N,] C, kh, kw, Lh, Lw (the column dims split,
 * any strides), so the expansion indexes taps and blocks directly. */
int lower_col2im(Imp *m, const cJSON *node)
{
	int x = lw_tensor(m, "self");
	if (x < 0)
		return -1;
	Container *s = lw_c(m, x);
	if (s->rank != 2 && s->rank != 3) {
		lw_error(m, "col2im of a rank-%d tensor (expected (N, C*kh*kw, L) or (C*kh*kw, L))", s->rank);
		return -1;
	}
	Val *ov = lw_arg(m, "output_size");
	int64_t osz[2], w[4][2], nblk[2];
	for (int j = 0; j < 2; j++)
		osz[j] = ov->k == V_INTS && ov->n > 0 ? ov->is[ov->n > j ? j : 0] : 0;
	if (window2(m, "col2im", osz, w, nblk))
		return -1;
	int64_t *ks = w[0], *dl = w[1], *pd = w[2], *st = w[3];
	int b = s->rank - 2;   /* 1 if batched */
	int64_t rows = lw_dim(m, x, b), cols = lw_dim(m, x, b + 1);
	if (nblk[0] < 1 || nblk[1] < 1 || rows % (ks[0] * ks[1]) || cols != nblk[0] * nblk[1]) {
		lw_error(m, "col2im: input of %lld x %lld columns does not fold into %lldx%lld with kernel %lldx%lld "
		         "(expected a multiple of %lld rows and %lld blocks)", (long long)rows, (long long)cols,
		         (long long)osz[0], (long long)osz[1], (long long)ks[0], (long long)ks[1],
		         (long long)(ks[0] * ks[1]), (long long)(nblk[0] * nblk[1]));
		return -1;
	}
	Expr *sh[MAXDIM], *sd[MAXDIM];
	int r = 0;
	if (b)
		sh[r] = s->shape[0], sd[r++] = s->stride[0];
	Expr *s1 = s->stride[b], *s2 = s->stride[b + 1];
	int64_t dims[5] = {rows / (ks[0] * ks[1]), ks[0], ks[1], nblk[0], nblk[1]};
	int64_t mul[5] = {ks[0] * ks[1], ks[1], 1, nblk[1], 1};
	for (int k = 0; k < 5; k++) {
		sh[r] = ex_int(m->g, dims[k]);
		sd[r++] = ex_muli(m->g, k < 3 ? s1 : s2, mul[k]);
	}
	int cv = sdfg_add_view(m->g, arena_printf(m->a, "%s_cols", s->name), x, r, sh, sd, s->offset);
	lw_c(m, cv)->origin = "";
	int out = lw_new_out(m, node, 0);
	if (out < 0)
		return -1;
	LibNode *l = lw_lib(m, LIB_COL2IM);
	l->in[0] = cv, l->nin = 1;
	l->out[0] = out, l->nout = 1;
	lib_set_ints(m->g, l, "dilation", dl, 2);
	lib_set_ints(m->g, l, "padding", pd, 2);
	lib_set_ints(m->g, l, "stride", st, 2);
	return 0;
}

/* im2col (F.unfold): self [N,] C, H, W into [N,] C*kh*kw, L, computed as
 * [N,] C, kh, kw, Lh, Lw and viewed as the graph's shape. */
int lower_im2col(Imp *m, const cJSON *node)
{
	int x = lw_tensor(m, "self");
	if (x < 0)
		return -1;
	Container *s = lw_c(m, x);
	if (s->rank != 3 && s->rank != 4) {
		lw_error(m, "im2col of a rank-%d tensor (expected (N, C, H, W) or (C, H, W))", s->rank);
		return -1;
	}
	int bt = s->rank - 3;
	int64_t size[2] = {lw_dim(m, x, bt + 1), lw_dim(m, x, bt + 2)}, w[4][2], nb[2];
	if (window2(m, "im2col", size, w, nb))
		return -1;
	int64_t *ks = w[0], *dl = w[1], *pd = w[2], *st = w[3];
	for (int j = 0; j < 2; j++)
		if (nb[j] < 1) {
			lw_error(m, "im2col: the kernel does not fit the padded input in dim %d", bt + 1 + j);
			return -1;
		}
	const char *on = lw_out_name(node, 0);
	Meta mt;
	if (!on || lw_meta(m, on, &mt) || lw_check_dtype(m, &mt, on))
		return -1;
	int64_t sh[6];
	int r = 0;
	if (bt)
		sh[r++] = lw_dim(m, x, 0);
	sh[r++] = lw_dim(m, x, bt);
	sh[r++] = ks[0], sh[r++] = ks[1], sh[r++] = nb[0], sh[r++] = nb[1];
	int c = sdfg_add_container(m->g, arena_printf(m->a, "%s_cols", on), (Dtype)mt.dt, CK_TRANSIENT, r, sh);
	lw_c(m, c)->origin = "";
	if (lw_view_whole(m, on, c, mt.rank, mt.shape))
		return -1;
	LibNode *l = lw_lib(m, LIB_IM2COL);
	l->in[0] = x, l->nin = 1;
	l->out[0] = c, l->nout = 1;
	lib_set_ints(m->g, l, "dilation", dl, 2);
	lib_set_ints(m->g, l, "padding", pd, 2);
	lib_set_ints(m->g, l, "stride", st, 2);
	return 0;
}
