/*
 * pool.c - expansion of the pool family's library nodes: pooling (max
 * with -inf padding through guarded memlets, average with the window
 * clipped to the input and PyTorch's divisor rules, adaptive average and
 * max, the indices of the maximum), upsampling (nearest, nearest-exact,
 * bilinear, bicubic), grid sampling, col2im (fold) and im2col (unfold).
 *
 * Every output element is one iteration of a map nest over the output,
 * stored once. Upsampling's source indices and weights, which depend on
 * the output index only, are computed at compile time; grid sampling's
 * come from the grid at run time, in range by construction. The
 * arithmetic follows torch's CPU kernels operation by operation, so
 * results match to the last bits where the C compiler keeps the order:
 * grid sampling follows the vectorized kernel (GridSamplerKernel.cpp), in
 * the input's dtype (float16 and bfloat16 round after every operation, as
 * Vectorized<Half> does), with a fused multiply-add (T_FMA) where GCC
 * contracts torch's float and double code.
 */
#include <math.h>
#include <string.h>

#include "expand.h"

/* ---- pooling --------------------------------------------------------------------- */

/* Global average pooling (adaptive to size 1, squeeze-excitation's
 * squeeze) of a float32 input whose spatial dims are contiguous: each
 * plane read flat, in vector lanes (xp_lane_fold), instead of one scalar
 * chain of adds as long as the plane. 0: not that case. */
static int pool_global_avg(Sdfg *g, LibNode *l, Node *seq, const char *label, const XpTile *tile, int sd)
{
	int in = l->in[0], out = l->out[0];
	Container *o = sdfg_c(g, out), *x = sdfg_c(g, in);
	int r = o->rank, L = tile->vec_lanes;
	int64_t n, st, plane = 1;
	if (L < 2 || lib_int(l, "mode", PL_MAX) != PL_ADAPTIVE || l->nout > 1 || o->dt != DT_F32 || x->dt != DT_F32)
		return 0;
	for (int d = r - 1; d >= sd; d--) {
		if (!ex_isint(o->shape[d], &n) || n != 1 || !ex_isint(x->shape[d], &n) || !ex_isint(x->stride[d], &st) ||
		    st != plane)
			return 0;
		plane *= n;
	}
	Expr *sh[MAXDIM], *str[MAXDIM], *idx[MAXDIM], *oi[MAXDIM];
	int vars[MAXDIM];
	Node *body = seq, *owner = NULL;
	for (int d = 0; d < sd; d++) {
		owner = xp_loop(g, body, N_MAP, "i", ex_int(g, 0), o->shape[d], 1, &vars[d]);
		body = owner->body;
		sh[d] = x->shape[d], str[d] = x->stride[d];
		idx[d] = oi[d] = ex_sym(g, vars[d]);
	}
	if (!owner)
		return 0;
	sh[sd] = ex_int(g, plane), str[sd] = ex_int(g, 1), idx[sd] = NULL;
	for (int d = sd; d < r; d++)
		oi[d] = ex_int(g, 0);
	int flat = sdfg_add_view(g, arena_printf(g->arena, "%s_planes", x->name), in, sd + 1, sh, str, x->offset);
	int64_t sl[1] = {L};
	int part = xp_local(g, "part", DT_F32, 1, sl, owner), tot = xp_local(g, "sum", DT_F32, 0, NULL, owner);
	xp_lane_fold(g, body, L, ex_int(g, plane), label, part, tot, T_ADD, 0, flat, sd + 1, idx, sd, -1, 0);
	Node *fb = xp_block(g, body, label);
	Expr *none[1] = {NULL};
	Operand fin[2] = {opd_mem(tot, 0, none), opd_const((double)plane)};
	sdfg_store(fb, sdfg_tasklet(g, fb, T_DIV, DT_F32, 2, fin), xp_memlet(out, r, oi), W_NONE);
	return 1;
}

int expand_pool(Sdfg *g, LibNode *l, Node *seq, const char *label, const XpTile *tile)
{
	int in = l->in[0], out = l->out[0];
	Container *o = sdfg_c(g, out), *x = sdfg_c(g, in);
	int r = o->rank;                        /* [N,] C, spatial dims */
	int ns = (int)lib_int(l, "nd", 2);      /* spatial dims: 2 or 3 */
	int sd = r - ns;                        /* first spatial dim */
	if (pool_global_avg(g, l, seq, label, tile, sd))
		return 0;
	int vars[MAXDIM];
	Node *body = xp_nest(g, seq, out, vars);
	Node *owmap = body->parent;
	int mode = (int)lib_int(l, "mode", PL_MAX);
	int64_t I[3], O[3];
	Expr *ov[3], *lo[3], *hi[3], *start[3]; /* window [lo,hi) in kernel coords */
	for (int j = 0; j < ns; j++) {
		ex_isint(x->shape[sd + j], &I[j]);
		ex_isint(o->shape[sd + j], &O[j]);
		ov[j] = ex_sym(g, vars[sd + j]);
	}
	int64_t k[3] = {1, 1, 1}, s[3] = {1, 1, 1}, p[3] = {0, 0, 0}, d[3] = {1, 1, 1};
	int ismax = mode == PL_MAX || mode == PL_ADAPTIVE_MAX_;
	/* averages of float16/bfloat16 sum in float and round once, as
	 * PyTorch's CPU kernels do (opmath); maxima are exact in any type */
	Dtype adt = !ismax && (o->dt == DT_F16 || o->dt == DT_BF16) ? DT_F32 : o->dt;
	int acc = xp_local(g, "acc", adt, 0, NULL, owmap);
	Expr *none[1] = {NULL};
	Node *ib = xp_block(g, body, label);
	double init = ismax ? -INFINITY : 0;
	Operand z[1] = {opd_const(init)};
	sdfg_store(ib, sdfg_tasklet(g, ib, T_ASSIGN, adt, 1, z), xp_memlet(acc, 0, none), W_NONE);
	Expr *divisor = NULL;
	if (mode == PL_ADAPTIVE || mode == PL_ADAPTIVE_MAX_) {
		/* start = floor(o*H/OH), end = ceil((o+1)*H/OH) */
		for (int j = 0; j < ns; j++) {
			start[j] = ex_div(g, ex_muli(g, ov[j], I[j]), ex_int(g, O[j]));
			Expr *end = ex_div(g, ex_addi(g, ex_muli(g, ex_addi(g, ov[j], 1), I[j]), O[j] - 1), ex_int(g, O[j]));
			lo[j] = ex_int(g, 0);
			hi[j] = ex_sub(g, end, start[j]);
			if (mode == PL_ADAPTIVE)
				divisor = divisor ? ex_mul(g, divisor, hi[j]) : hi[j];
		}
	} else {
		lib_ints(l, "kernel", k, ns);
		lib_ints(l, "stride", s, ns);
		lib_ints(l, "padding", p, ns);
		lib_ints(l, "dilation", d, ns);
		int64_t dv = lib_int(l, "divisor", 0), cip = lib_int(l, "count_include_pad", 1);
		if (mode == PL_AVG && dv)
			divisor = ex_int(g, dv);
		for (int j = 0; j < ns; j++) {
			start[j] = ex_addi(g, ex_muli(g, ov[j], s[j]), -p[j]);
			if (mode == PL_MAX) {
				/* out-of-range taps read -inf through guarded memlets */
				lo[j] = ex_int(g, 0);
				hi[j] = ex_int(g, k[j]);
				continue;
			}
			/* clip the window to the input: taps with 0 <= start+k*d < H */
			Expr *ns0 = ex_sub(g, ex_int(g, 0), start[j]);
			lo[j] = ex_div(g, ex_addi(g, ex_max(g, ex_int(g, 0), ns0), d[j] - 1), ex_int(g, d[j]));
			Expr *rr = ex_sub(g, ex_int(g, I[j]), start[j]);
			hi[j] = ex_min(g, ex_int(g, k[j]), ex_div(g, ex_addi(g, ex_max(g, ex_int(g, 0), rr), d[j] - 1), ex_int(g, d[j])));
			if (dv)
				continue;
			Expr *f;
			if (cip) /* window clipped to the padded input */
				f = ex_sub(g, ex_min(g, ex_addi(g, start[j], k[j]), ex_int(g, I[j] + p[j])), start[j]);
			else
				f = ex_sub(g, hi[j], lo[j]);
			divisor = divisor ? ex_mul(g, divisor, f) : f;
		}
	}
	static const char *kn[3] = {"kd", "kh", "kw"};
	int kv[3];
	Node *inner = body;
	for (int j = 0; j < ns; j++) {
		Node *lp = xp_loop(g, inner, N_FOR, kn[j + 3 - ns], lo[j], hi[j], 1, &kv[j]);
		inner = lp->body;
	}
	Node *rb = xp_block(g, inner, label);
	Expr *idx[MAXDIM];
	for (int i = 0; i < sd; i++)
		idx[i] = ex_sym(g, vars[i]);
	for (int j = 0; j < ns; j++)
		idx[sd + j] = ex_add(g, start[j], ex_muli(g, ex_sym(g, kv[j]), d[j]));
	int ixo = l->nout > 1 ? l->out[1] : -1, ixl = -1;
	if (ixo >= 0) {
		/* indices (flat (d*H + h)*W + w) of the first maximum, NaN counting
		 * as a maximum, starting at the window's first tap inside the
		 * input, as torch's kernel does */
		ixl = xp_local(g, "amax", DT_I64, 0, NULL, owmap);
		Expr *f0e = ex_int(g, 0), *fi = ex_int(g, 0);
		for (int j = 0; j < ns; j++) {
			Expr *neg = ex_max(g, ex_int(g, 0), ex_sub(g, ex_int(g, 0), start[j]));
			Expr *fj = ex_add(g, start[j], ex_muli(g, ex_div(g, ex_addi(g, neg, d[j] - 1), ex_int(g, d[j])), d[j]));
			f0e = ex_add(g, ex_muli(g, f0e, I[j]), fj);
			fi = ex_add(g, ex_muli(g, fi, I[j]), idx[sd + j]);
		}
		Operand f0[1] = {opd_expr(f0e)};
		sdfg_store(ib, sdfg_tasklet(g, ib, T_ASSIGN, DT_I64, 1, f0), xp_memlet(ixl, 0, none), W_NONE);
		Operand xv[1] = {opd_guarded(in, r, idx, -INFINITY)};
		int xt = sdfg_tasklet(g, rb, T_ASSIGN, o->dt, 1, xv);
		Operand gt[2] = {opd_val(xt), opd_mem(acc, 0, none)};
		int c1 = sdfg_tasklet(g, rb, T_GT, DT_BOOL, 2, gt);
		Operand nn[1] = {opd_val(xt)};
		int c2 = sdfg_tasklet(g, rb, T_ISNAN, DT_BOOL, 1, nn);
		Operand orr[2] = {opd_val(c1), opd_val(c2)};
		int c = sdfg_tasklet(g, rb, T_OR, DT_BOOL, 2, orr);
		Operand wv[3] = {opd_val(c), opd_val(xt), opd_mem(acc, 0, none)};
		sdfg_store(rb, sdfg_tasklet(g, rb, T_WHERE, o->dt, 3, wv), xp_memlet(acc, 0, none), W_NONE);
		Operand wi[3] = {opd_val(c), opd_expr(fi), opd_mem(ixl, 0, none)};
		sdfg_store(rb, sdfg_tasklet(g, rb, T_WHERE, DT_I64, 3, wi), xp_memlet(ixl, 0, none), W_NONE);
	} else {
		Operand rd[2] = {opd_mem(acc, 0, none),
		                 ismax ? opd_guarded(in, r, idx, -INFINITY) : opd_mem(in, r, idx)};
		int t = sdfg_tasklet(g, rb, ismax ? T_MAX : T_ADD, adt, 2, rd);
		sdfg_store(rb, t, xp_memlet(acc, 0, none), W_NONE);
	}
	Node *fb = xp_block(g, body, label);
	if (ixo >= 0) {
		Operand iv[1] = {opd_mem(ixl, 0, none)};
		sdfg_store(fb, sdfg_tasklet(g, fb, T_ASSIGN, DT_I64, 1, iv), xp_memlet(ixo, r, xp_vars(g, r, vars)), W_NONE);
	}
	Operand fin[2] = {opd_mem(acc, 0, none), divisor ? opd_expr(divisor) : opd_const(1)};
	int v = sdfg_tasklet(g, fb, divisor ? T_DIV : T_ASSIGN, o->dt, divisor ? 2 : 1, fin);
	sdfg_store(fb, v, xp_memlet(out, r, xp_vars(g, r, vars)), W_NONE);
	return 0;
}

/* ---- upsampling ---------------------------------------------------------------------
 *
 * Source indices and weights are functions of the output index only, so
 * they are computed here, at compile time, with PyTorch's CPU formulas in
 * its arithmetic (float for float32 and half inputs, double for float64):
 *   nearest        min(floor(dst * scale), in - 1), scale = 1/scale_factor
 *                  when given, else in/out (float)
 *   nearest-exact  min(floor((dst + 0.5) * scale), in - 1)
 *   bilinear       src = align_corners ? dst * (in-1)/(out-1)
 *                                      : max(0, (dst + 0.5) * scale - 0.5);
 *                  i0 = floor(src), i1 = min(i0 + 1, in - 1), weight of i1
 *                  = src - i0 (a constant table indexed by dst).
 *   bicubic        src as bilinear but not clamped at 0 (it may be -0.5),
 *                  sc * (dst + 0.5) - 0.5 as one FMA like torch's wheels;
 *                  i0 = min(floor(src), in - 1), t = clamp(src - i0, 0, 1);
 *                  taps clamp(i0 - 1 .. i0 + 2, 0, in - 1) (torch's bounded
 *                  reads) with the cubic convolution weights of t, A = -0.75
 *                  (a constant table [out, 4], stored in the input's type
 *                  as torch stores them, so rounded for float16/bfloat16).
 * The integer index must be an index expression, so the table is matched
 * against clamp(floor((A*dst + B) / C), lo, in - 1) for small A, C and B that
 * reproduce it exactly (in/out, 1/scale and their halves); no match is an
 * error (none is known for sizes that occur in practice). */

static int64_t up_index(int mode, int align, double sopt, int64_t in, int64_t out, int64_t dst, int dbl, double *lam)
{
	*lam = 0;
	if (mode != UP_BILINEAR && mode != UP_BICUBIC) {
		if (mode == UP_NEAREST && out == in)
			return dst;
		if (mode == UP_NEAREST && out == 2 * in)
			return dst >> 1;
		float sc = sopt > 0 ? (float)(1.0 / sopt) : (float)in / (float)out;
		int64_t s = mode == UP_NEAREST ? (int64_t)floorf((float)dst * sc) : (int64_t)floorf((float)(((double)dst + 0.5) * (double)sc));
		return s < in - 1 ? s : in - 1;
	}
	int cubic = mode == UP_BICUBIC;
	if (dbl) {
		double sc = align ? (out > 1 ? (double)(in - 1) / (double)(out - 1) : 0) : sopt > 0 ? 1.0 / sopt : (double)in / (double)out;
		double src = align ? sc * (double)dst : cubic ? fma(sc, (double)dst + 0.5, -0.5) : sc * ((double)dst + 0.5) - 0.5;
		if (!align && !cubic && src < 0)
			src = 0;
		/* torch floors the double through floorf */
		int64_t i0 = cubic ? (int64_t)floorf((float)src) : (int64_t)floor(src);
		if (cubic && i0 > in - 1)
			i0 = in - 1;
		double l = src - (double)i0;
		*lam = l < 0 ? 0 : l > 1 ? 1 : l;
		return i0;
	}
	float sc = align ? (out > 1 ? (float)(in - 1) / (float)(out - 1) : 0.0f) : sopt > 0 ? (float)(1.0 / sopt) : (float)in / (float)out;
	float src = align ? sc * (float)dst : cubic ? fmaf(sc, (float)dst + 0.5f, -0.5f) : sc * ((float)dst + 0.5f) - 0.5f;
	if (!align && !cubic && src < 0)
		src = 0;
	int64_t i0 = (int64_t)floorf(src);
	if (cubic && i0 > in - 1)
		i0 = in - 1;
	float l = src - (float)i0;
	*lam = l < 0 ? 0 : l > 1 ? 1 : l;
	return i0;
}

/* The cubic convolution weights of taps i0-1 .. i0+2 for the offset t, in
 * type T, as torch's get_cubic_upsample_coefficients computes them in the
 * x86-64 wheels, whose compiler contracts some of its operations into
 * fused multiply-adds (FMA: fmaf or fma): measured against torch 2.13,
 *   w0, w3  fma(fma(A, x, -5A), x, 8A) * x - 4A   (x = t + 1, 2 - t)
 *   w1, w2  fma(A + 2, x, -(A + 3)) * x * x + 1   (x = t, 1 - t)
 * One operation a statement, so that no C compiler contracts more. */
#define UP_CUBIC_FN(name, T, FMA) \
	static void name(double t_, double w[4]) \
	{ \
		const T A = (T)-0.75, t = (T)t_, x2 = (T)(1.0 - t); \
		const T x[4] = {(T)(t + 1.0), t, x2, (T)(x2 + 1.0)}; \
		for (int k = 0; k < 4; k++) { \
			T v; \
			if (k == 0 || k == 3) { \
				v = FMA(FMA(A, x[k], -5 * A), x[k], 8 * A); \
				v = v * x[k]; \
				v = v - 4 * A; \
			} else { \
				v = FMA(A + 2, x[k], -(A + 3)); \
				v = v * x[k]; \
				v = v * x[k]; \
				v = v + 1; \
			} \
			w[k] = v; \
		} \
	}
UP_CUBIC_FN(up_cubic_f, float, fmaf)
UP_CUBIC_FN(up_cubic_d, double, fma)

/* v rounded to float16 or bfloat16 (nearest, ties to even; float16
 * subnormals included); other types unchanged. */
static double up_round(double v, Dtype dt)
{
	if (v == 0 || (dt != DT_F16 && dt != DT_BF16))
		return v;
	int e;
	frexp(v, &e);
	int lsb = e - (dt == DT_F16 ? 11 : 8);
	if (dt == DT_F16 && lsb < -24)
		lsb = -24;
	return ldexp(nearbyint(ldexp(v, -lsb)), lsb);
}

static int up_match(const int64_t *t, int64_t n, int64_t lo, int64_t in, int64_t A, int64_t B, int64_t C)
{
	for (int64_t d = 0; d < n; d++) {
		int64_t num = A * d + B;
		int64_t q = num >= 0 ? num / C : -((-num + C - 1) / C);
		q = q < lo ? lo : q > in - 1 ? in - 1 : q;
		if (q != t[d])
			return 0;
	}
	return 1;
}

/* clamp(floor((A*dst + B)/C), lo, in-1) equal to t[0..n), or NULL. */
static Expr *up_expr(Sdfg *g, const int64_t *t, int64_t n, int64_t lo, int64_t in, double scale, Expr *dst)
{
	int64_t cs[200];
	int nc = 0;
	cs[nc++] = n, cs[nc++] = 2 * n, cs[nc++] = in, cs[nc++] = 2 * in;
	if (n > 1)
		cs[nc++] = n - 1, cs[nc++] = 2 * (n - 1);
	for (int64_t q = 1; q <= 64; q++)
		cs[nc++] = q, cs[nc++] = 2 * q;
	for (int i = 0; i < nc; i++) {
		int64_t C = cs[i];
		if (C <= 0)
			continue;
		int64_t A0 = llround(scale * (double)C);
		for (int64_t A = A0 - 1; A <= A0 + 1; A++) {
			if (A < 0)
				continue;
			/* B/C: -0.5 (align_corners off) up to (scale - 1) / 2 (bilinear,
			 * bicubic) or scale / 2 (nearest-exact), and the taps' offsets */
			for (int64_t B = -2 * C; B <= 2 * C + (A + 1) / 2; B++) {
				if (!up_match(t, n, lo, in, A, B, C))
					continue;
				Expr *e = ex_div(g, ex_addi(g, ex_muli(g, dst, A), B), ex_int(g, C));
				e = ex_max(g, e, ex_int(g, lo));
				return ex_min(g, e, ex_int(g, in - 1));
			}
		}
	}
	return NULL;
}

/* Index expression and weight table for one dim: bilinear, the weight of
 * i+1 [out]; bicubic, the weights of the four taps [out, 4] (the index is
 * then i0, which may be -1). */
static Expr *up_dim(Sdfg *g, LibNode *l, int64_t in, int64_t out, double sopt, Dtype dt, Expr *dst, int *lamc,
                    const char *name)
{
	int mode = (int)lib_int(l, "mode", UP_NEAREST), align = (int)lib_int(l, "align_corners", 0);
	int cubic = mode == UP_BICUBIC, nw = cubic ? 4 : 1;
	Dtype cdt = dt == DT_F64 ? DT_F64 : DT_F32;
	int64_t *t = arena_alloc(g->arena, sizeof(int64_t) * (size_t)out);
	int64_t shp[2] = {out, 4};
	*lamc = sdfg_add_container(g, name, cdt, CK_CONST, cubic ? 2 : 1, shp);
	sdfg_c(g, *lamc)->origin = "";
	void *data = arena_alloc(g->arena, (size_t)(out * nw * 8 + 8));
	for (int64_t d = 0; d < out; d++) {
		double lam, w[4];
		t[d] = up_index(mode, align, sopt, in, out, d, cdt == DT_F64, &lam);
		w[0] = lam;
		if (cubic)
			(cdt == DT_F64 ? up_cubic_d : up_cubic_f)(lam, w);
		for (int k = 0; k < nw; k++) {
			if (cdt == DT_F64)
				((double *)data)[d * nw + k] = w[k];
			else
				/* bilinear weights stay float (torch's opmath); bicubic
				 * ones are stored in the input's type, as torch does */
				((float *)data)[d * nw + k] = (float)(cubic ? up_round(w[k], dt) : w[k]);
		}
	}
	sdfg_c(g, *lamc)->data = data;
	double scale = align ? (out > 1 ? (double)(in - 1) / (double)(out - 1) : 0) : sopt > 0 ? 1.0 / sopt : (double)in / (double)out;
	return up_expr(g, t, out, cubic ? -1 : 0, in, scale, dst);
}

/* Bicubic: sum over the four row taps j of wh[j] * (sum over the four
 * column taps k of ww[k] * x[hj, wk]), each sum started with a product
 * and continued with multiply-adds in tap order, as torch's kernel. */
static int up_bicubic(Sdfg *g, Node *b, int in, Expr *n, Expr *c, Expr *const *hi, Expr *const *wi, int th, int tw,
                      Expr *oh, Expr *ow, Dtype cdt)
{
	int row[4], v = -1;
	for (int j = 0; j <= 4; j++) {
		int acc = -1;
		for (int k = 0; k < 4; k++) {
			Expr *wix[2] = {j < 4 ? ow : oh, ex_int(g, k)}, *xi[4] = {n, c, hi[j < 4 ? j : 0], wi[k]};
			Operand wt = opd_mem(j < 4 ? tw : th, 2, wix);
			Operand val = j < 4 ? opd_mem(in, 4, xi) : opd_val(row[k]);
			Operand op[3] = {val, wt, opd_val(acc)};
			acc = sdfg_tasklet(g, b, k ? T_FMA : T_MUL, cdt, k ? 3 : 2, op);
		}
		if (j < 4)
			row[j] = acc;
		else
			v = acc;
	}
	return v;
}

int expand_upsample(Sdfg *g, LibNode *l, Node *seq, const char *label, const XpTile *tile)
{
	(void)tile;
	int in = l->in[0], out = l->out[0];
	Container *o = sdfg_c(g, out), *x = sdfg_c(g, in);
	int64_t IH = 0, IW = 0, OH = 0, OW = 0;
	ex_isint(x->shape[2], &IH);
	ex_isint(x->shape[3], &IW);
	ex_isint(o->shape[2], &OH);
	ex_isint(o->shape[3], &OW);
	int mode = (int)lib_int(l, "mode", UP_NEAREST);
	Dtype cdt = x->dt == DT_F64 ? DT_F64 : DT_F32;
	int vars[MAXDIM];
	Node *body = xp_nest(g, seq, out, vars);
	Expr *oh = ex_sym(g, vars[2]), *ow = ex_sym(g, vars[3]);
	int lh, lwc;
	Expr *h0 = up_dim(g, l, IH, OH, lib_float(l, "scale_h", 0), x->dt, oh, &lh, "lam_h");
	Expr *w0 = up_dim(g, l, IW, OW, lib_float(l, "scale_w", 0), x->dt, ow, &lwc, "lam_w");
	if (!h0 || !w0) {
		diag_error(g->src, "node '%s': no index expression reproduces PyTorch's upsampling indices for %lldx%lld -> %lldx%lld",
		           label, (long long)IH, (long long)IW, (long long)OH, (long long)OW);
		return -1;
	}
	Node *b = xp_block(g, body, label);
	Expr *n = ex_sym(g, vars[0]), *c = ex_sym(g, vars[1]);
	int v;
	if (mode == UP_NEAREST || mode == UP_NEAREST_EXACT) {
		Expr *ii[4] = {n, c, h0, w0};
		Operand rd[1] = {opd_mem(in, 4, ii)};
		v = sdfg_tasklet(g, b, T_ASSIGN, o->dt, 1, rd);
	} else if (mode == UP_BICUBIC) {
		Expr *hi[4], *wi[4];
		for (int k = 0; k < 4; k++) {
			hi[k] = ex_min(g, ex_max(g, ex_addi(g, h0, k - 1), ex_int(g, 0)), ex_int(g, IH - 1));
			wi[k] = ex_min(g, ex_max(g, ex_addi(g, w0, k - 1), ex_int(g, 0)), ex_int(g, IW - 1));
		}
		v = up_bicubic(g, b, in, n, c, hi, wi, lh, lwc, oh, ow, cdt);
	} else {
		Expr *h1 = ex_min(g, ex_addi(g, h0, 1), ex_int(g, IH - 1)), *w1 = ex_min(g, ex_addi(g, w0, 1), ex_int(g, IW - 1));
		Expr *hi[1] = {oh}, *wi[1] = {ow};
		Operand l1h = opd_mem(lh, 1, hi), l1w = opd_mem(lwc, 1, wi);
		Operand s0[2] = {opd_const(1), l1h};
		int l0h = sdfg_tasklet(g, b, T_SUB, cdt, 2, s0);
		Operand s1[2] = {opd_const(1), l1w};
		int l0w = sdfg_tasklet(g, b, T_SUB, cdt, 2, s1);
		int row[2];
		for (int k = 0; k < 2; k++) {
			Expr *a[4] = {n, c, k ? h1 : h0, w0}, *bb[4] = {n, c, k ? h1 : h0, w1};
			Operand m0[2] = {opd_val(l0w), opd_mem(in, 4, a)};
			int t0 = sdfg_tasklet(g, b, T_MUL, cdt, 2, m0);
			Operand m1[3] = {l1w, opd_mem(in, 4, bb), opd_val(t0)};
			row[k] = sdfg_tasklet(g, b, T_FMA, cdt, 3, m1);
		}
		Operand r0[2] = {opd_val(l0h), opd_val(row[0])};
		int t0 = sdfg_tasklet(g, b, T_MUL, cdt, 2, r0);
		Operand r1[3] = {l1h, opd_val(row[1]), opd_val(t0)};
		v = sdfg_tasklet(g, b, T_FMA, cdt, 3, r1);
	}
	if (mode != UP_NEAREST && mode != UP_NEAREST_EXACT && o->dt != cdt) {
		Operand cv[1] = {opd_val(v)};
		v = sdfg_tasklet(g, b, T_ASSIGN, o->dt, 1, cv);
	}
	sdfg_store(b, v, xp_memlet(out, 4, xp_vars(g, 4, vars)), W_NONE);
	return 0;
}

/* ---- grid sampling ------------------------------------------------------------------
 * out[n, c, h, w] samples input[n, c] at the source position that
 * grid[n, h, w] = (x, y) in [-1, 1] names, per dim: unnormalize to pixel
 * units ((g + 1) * (size - 1) / 2 with align_corners, (g + 1) * size / 2 -
 * 0.5 without), then pad: clip to [0, size - 1] (border), or reflect about
 * the edges first (reflection). Bilinear weighs the 4 neighbours, nearest
 * takes the one nearbyint picks (ties to even), bicubic weighs 4x4 taps
 * with the cubic convolution (A = -0.75) and pads each tap's position.
 * Taps outside the input read 0 (zeros padding). */

#define V(t) opd_val(t)
#define K(c) opd_const(c)

/* a*x + y: one rounding (T_FMA) in float and double, where torch's kernels
 * are contracted by the compiler; two in float16 / bfloat16, which round
 * every operation. */
static int madd(Sdfg *g, Node *b, Dtype dt, Operand a, Operand x, Operand y)
{
	if (dt == DT_F32 || dt == DT_F64)
		return xp_tk3(g, b, T_FMA, dt, a, x, y);
	return xp_tk2(g, b, T_ADD, dt, y, V(xp_tk2(g, b, T_MUL, dt, a, x)));
}

typedef struct {
	Sdfg *g;
	Node *b;
	Dtype dt;
	int pad, ac;
} Gs;

/* The constant v in the compute dtype (rounded as torch's static_cast). */
static int gs_const(Gs *s, double v)
{
	return xp_tk1(s->g, s->b, T_ASSIGN, s->dt, K(v));
}

static int gs_unnormalize(Gs *s, int v, int64_t size)
{
	Sdfg *g = s->g;
	Node *b = s->b;
	int one = xp_tk2(g, b, T_ADD, s->dt, V(v), K(1));
	if (s->ac) {
		int sf = xp_tk2(g, b, T_DIV, s->dt, V(gs_const(s, (double)(size - 1))), K(2));
		return xp_tk2(g, b, T_MUL, s->dt, V(one), V(sf));
	}
	int sf = xp_tk2(g, b, T_DIV, s->dt, V(gs_const(s, (double)size)), K(2));
	return madd(g, b, s->dt, V(one), V(sf), K(-0.5));
}

/* clamp to [0, size - 1]; NaN becomes 0 (torch's operand order) */
static int gs_clip(Gs *s, int v, int64_t size)
{
	Sdfg *g = s->g;
	Node *b = s->b;
	int pos = xp_tk2(g, b, T_GT, DT_I64, V(v), K(0));
	int lo = xp_tk3(g, b, T_WHERE, s->dt, V(pos), V(v), K(0));
	int mx = gs_const(s, (double)(size - 1));
	int over = xp_tk2(g, b, T_GT, DT_I64, V(lo), V(mx));
	return xp_tk3(g, b, T_WHERE, s->dt, V(over), V(mx), V(lo));
}

static int gs_reflect(Gs *s, int v, int64_t size)
{
	Sdfg *g = s->g;
	Node *b = s->b;
	Dtype dt = s->dt;
	if (s->ac && size <= 1)
		return gs_const(s, 0);
	int tw = xp_tk2(g, b, T_MUL, dt, V(gs_const(s, (double)(s->ac ? size - 1 : size))), K(2));
	int a = xp_tk1(g, b, T_ABS, dt, s->ac ? V(v) : V(xp_tk2(g, b, T_SUB, dt, V(v), K(-0.5))));
	int flips = xp_tk1(g, b, T_TRUNC, dt, V(xp_tk2(g, b, T_DIV, dt, V(a), V(tw))));
	int extra = madd(g, b, dt, V(xp_tk1(g, b, T_NEG, dt, V(flips))), V(tw), V(a));
	int r = xp_tk2(g, b, T_MIN, dt, V(extra), V(xp_tk2(g, b, T_SUB, dt, V(tw), V(extra))));
	return s->ac ? r : xp_tk2(g, b, T_ADD, dt, V(r), K(-0.5));
}

/* torch's compute_coordinates: the padding mode applied to a position */
static int gs_pad(Gs *s, int v, int64_t size)
{
	if (s->pad == GS_BORDER)
		return gs_clip(s, v, size);
	if (s->pad == GS_REFLECTION)
		return gs_clip(s, gs_reflect(s, v, size), size);
	return v;
}

/* A tap coordinate: its in-bounds flag and its index symbol (0 when out of
 * bounds, so the T_INDEX check always passes). v holds an integral value. */
typedef struct {
	int in;
	Expr *ix;
} Tap;

static Tap gs_tap(Gs *s, int v, Expr *size)
{
	Sdfg *g = s->g;
	Node *b = s->b;
	int64_t n;
	ex_isint(size, &n);
	int ge = xp_tk2(g, b, T_GT, DT_I64, V(v), K(-1));
	int lt = xp_tk2(g, b, T_LT, DT_I64, V(v), K((double)n));
	Tap t;
	t.in = xp_tk2(g, b, T_AND, DT_I64, V(ge), V(lt));
	t.ix = xp_bind_index(g, b, V(xp_tk3(g, b, T_WHERE, DT_I64, V(t.in), V(v), K(0))), size, 0);
	return t;
}

/* input[n, c, y, x] where both are in bounds, else 0 */
static int gs_read(Gs *s, int x, Expr *const *nc, Tap ty, Tap tx)
{
	Expr *idx[4] = {nc[0], nc[1], ty.ix, tx.ix};
	int in = xp_tk2(s->g, s->b, T_AND, DT_I64, V(ty.in), V(tx.in));
	return xp_tk3(s->g, s->b, T_WHERE, s->dt, V(in), opd_mem(x, 4, idx), K(0));
}

/* The cubic convolution weights of the 4 taps at distances 1 + t, t, 1 - t, 2 - t. */
static void gs_cubic(Gs *s, int t, int *w)
{
	Sdfg *g = s->g;
	Node *b = s->b;
	Dtype dt = s->dt;
	const double A = -0.75;
	for (int k = 0; k < 4; k++) {
		int x = k == 0 ? xp_tk2(g, b, T_ADD, dt, V(t), K(1)) : k == 1 ? t : xp_tk2(g, b, T_SUB, dt, K(k - 1), V(t));
		if (k == 0 || k == 3) {
			/* ((A x - 5A) x + 8A) x - 4A */
			int p = xp_tk2(g, b, T_SUB, dt, V(xp_tk2(g, b, T_MUL, dt, K(A), V(x))), K(5 * A));
			p = xp_tk2(g, b, T_ADD, dt, V(xp_tk2(g, b, T_MUL, dt, V(p), V(x))), K(8 * A));
			w[k] = xp_tk2(g, b, T_SUB, dt, V(xp_tk2(g, b, T_MUL, dt, V(p), V(x))), K(4 * A));
		} else {
			/* ((A + 2) x - (A + 3)) x x + 1 */
			int p = xp_tk2(g, b, T_SUB, dt, V(xp_tk2(g, b, T_MUL, dt, K(A + 2), V(x))), K(A + 3));
			p = xp_tk2(g, b, T_MUL, dt, V(xp_tk2(g, b, T_MUL, dt, V(p), V(x))), V(x));
			w[k] = xp_tk2(g, b, T_ADD, dt, V(p), K(1));
		}
	}
}

int expand_grid_sample(Sdfg *g, LibNode *l, Node *seq, const char *label, const XpTile *tile)
{
	(void)tile;
	int x = l->in[0], gr = l->in[1], out = l->out[0];
	Container *xc = sdfg_c(g, x), *o = sdfg_c(g, out);
	int mode = (int)lib_int(l, "mode", GS_BILINEAR);
	int64_t H, W;
	if (!ex_isint(xc->shape[2], &H) || !ex_isint(xc->shape[3], &W))
		DOCC_UNREACHABLE();
	int ov[MAXDIM];
	Node *body = xp_nest(g, seq, out, ov);
	Expr **O = xp_vars(g, 4, ov);
	Gs s = {g, xp_block(g, body, label), o->dt, (int)lib_int(l, "padding", GS_ZEROS), (int)lib_int(l, "align_corners", 0)};
	Node *b = s.b;
	Dtype dt = s.dt;
	Expr *gi[4] = {O[0], O[2], O[3], ex_int(g, 0)};
	int gx = xp_tk1(g, b, T_ASSIGN, dt, opd_mem(gr, 4, gi));
	gi[3] = ex_int(g, 1);
	int gy = xp_tk1(g, b, T_ASSIGN, dt, opd_mem(gr, 4, gi));
	Expr *nc[2] = {O[0], O[1]};
	int res;
	if (mode == GS_BICUBIC) {
		int ux = gs_unnormalize(&s, gx, W), uy = gs_unnormalize(&s, gy, H);
		int fx = xp_tk1(g, b, T_FLOOR, dt, V(ux)), fy = xp_tk1(g, b, T_FLOOR, dt, V(uy));
		int cx[4], cy[4];
		gs_cubic(&s, xp_tk2(g, b, T_SUB, dt, V(ux), V(fx)), cx);
		gs_cubic(&s, xp_tk2(g, b, T_SUB, dt, V(uy), V(fy)), cy);
		Tap tx[4], ty[4];
		for (int k = 0; k < 4; k++) {
			tx[k] = gs_tap(&s, gs_pad(&s, xp_tk2(g, b, T_ADD, dt, V(fx), K(k - 1)), W), xc->shape[3]);
			ty[k] = gs_tap(&s, gs_pad(&s, xp_tk2(g, b, T_ADD, dt, V(fy), K(k - 1)), H), xc->shape[2]);
		}
		res = -1;
		for (int i = 0; i < 4; i++) {
			int row = xp_tk2(g, b, T_MUL, dt, V(cx[0]), V(gs_read(&s, x, nc, ty[i], tx[0])));
			for (int j = 1; j < 4; j++)
				row = madd(g, b, dt, V(cx[j]), V(gs_read(&s, x, nc, ty[i], tx[j])), V(row));
			res = res < 0 ? xp_tk2(g, b, T_MUL, dt, V(cy[0]), V(row)) : madd(g, b, dt, V(cy[i]), V(row), V(res));
		}
	} else {
		int px = gs_pad(&s, gs_unnormalize(&s, gx, W), W), py = gs_pad(&s, gs_unnormalize(&s, gy, H), H);
		if (mode == GS_NEAREST) {
			Tap tx = gs_tap(&s, xp_tk1(g, b, T_ROUND, dt, V(px)), xc->shape[3]);
			Tap ty = gs_tap(&s, xp_tk1(g, b, T_ROUND, dt, V(py)), xc->shape[2]);
			res = gs_read(&s, x, nc, ty, tx);
		} else {
			int xw = xp_tk1(g, b, T_FLOOR, dt, V(px)), yn = xp_tk1(g, b, T_FLOOR, dt, V(py));
			int we = xp_tk2(g, b, T_SUB, dt, V(px), V(xw)), e = xp_tk2(g, b, T_SUB, dt, K(1), V(we));
			int ns = xp_tk2(g, b, T_SUB, dt, V(py), V(yn)), sn = xp_tk2(g, b, T_SUB, dt, K(1), V(ns));
			int wgt[4] = {xp_tk2(g, b, T_MUL, dt, V(sn), V(e)), xp_tk2(g, b, T_MUL, dt, V(sn), V(we)),
			              xp_tk2(g, b, T_MUL, dt, V(ns), V(e)), xp_tk2(g, b, T_MUL, dt, V(ns), V(we))};
			Tap tx[2] = {gs_tap(&s, xw, xc->shape[3]), gs_tap(&s, xp_tk2(g, b, T_ADD, dt, V(xw), K(1)), xc->shape[3])};
			Tap ty[2] = {gs_tap(&s, yn, xc->shape[2]), gs_tap(&s, xp_tk2(g, b, T_ADD, dt, V(yn), K(1)), xc->shape[2])};
			/* nw, ne, sw, se, summed in that order */
			res = xp_tk2(g, b, T_MUL, dt, V(gs_read(&s, x, nc, ty[0], tx[0])), V(wgt[0]));
			for (int k = 1; k < 4; k++)
				res = madd(g, b, dt, V(gs_read(&s, x, nc, ty[k / 2], tx[k % 2])), V(wgt[k]), V(res));
		}
	}
	sdfg_store(b, res, xp_memlet(out, 4, O), W_NONE);
	return 0;
}

/* ---- col2im (fold) ------------------------------------------------------------------
 *
 * out[n, c, h, w] sums cols[n, c, i, j, bh, bw] over the kernel taps (i, j)
 * in row-major order, the order in which torch's col2im adds them, where
 * bh = (h + pad - i*dil) / stride when that divides exactly and lies in
 * [0, Lh) (likewise bw). A gather: each output element is stored once.
 * Blocks out of range read 0 through guarded memlets; with a stride > 1 a
 * tap whose offset does not divide adds 0 instead, which is exact since
 * torch's sum starts at +0. The sum is kept in the output type, as torch's
 * kernel keeps it (+= on float16/bfloat16 storage rounds every step). */
int expand_col2im(Sdfg *g, LibNode *l, Node *seq, const char *label, const XpTile *tile)
{
	(void)tile;
	int in = l->in[0], out = l->out[0];
	Container *o = sdfg_c(g, out), *x = sdfg_c(g, in);
	int r = o->rank, sd = r - 2;            /* [N,] C, H, W; in: [N,] C, kh, kw, Lh, Lw */
	int64_t d[2] = {1, 1}, p[2] = {0, 0}, s[2] = {1, 1};
	lib_ints(l, "dilation", d, 2);
	lib_ints(l, "padding", p, 2);
	lib_ints(l, "stride", s, 2);
	int vars[MAXDIM];
	Node *body = xp_nest(g, seq, out, vars);
	int acc = xp_local(g, "acc", o->dt, 0, NULL, body->parent);
	Expr *none[1] = {NULL};
	Node *ib = xp_block(g, body, label);
	Operand z[1] = {opd_const(0)};
	sdfg_store(ib, sdfg_tasklet(g, ib, T_ASSIGN, o->dt, 1, z), xp_memlet(acc, 0, none), W_NONE);
	static const char *const kn[2] = {"kh", "kw"};
	Expr *idx[MAXDIM], *rem = NULL;
	Node *inner = body;
	for (int i = 0; i < sd; i++)
		idx[i] = ex_sym(g, vars[i]);
	for (int j = 0; j < 2; j++) {
		int kv;
		Node *lp = xp_loop(g, inner, N_FOR, kn[j], ex_int(g, 0), x->shape[sd + j], 1, &kv);
		inner = lp->body;
		idx[sd + j] = ex_sym(g, kv);
		Expr *off = ex_sub(g, ex_addi(g, ex_sym(g, vars[sd + j]), p[j]), ex_muli(g, ex_sym(g, kv), d[j]));
		idx[sd + 2 + j] = ex_div(g, off, ex_int(g, s[j]));
		if (s[j] > 1) {
			Expr *m = ex_mod(g, off, ex_int(g, s[j]));
			rem = rem ? ex_add(g, rem, m) : m;
		}
	}
	Node *rb = xp_block(g, inner, label);
	Operand xv[1] = {opd_guarded(in, x->rank, idx, 0)};
	int v = sdfg_tasklet(g, rb, T_ASSIGN, o->dt, 1, xv);
	if (rem) {
		/* both remainders are >= 0, so their sum is 0 exactly when both are */
		Operand eq[2] = {opd_expr(rem), opd_const(0)};
		int c = sdfg_tasklet(g, rb, T_EQ, DT_BOOL, 2, eq);
		Operand wh[3] = {opd_val(c), opd_val(v), opd_const(0)};
		v = sdfg_tasklet(g, rb, T_WHERE, o->dt, 3, wh);
	}
	Operand ad[2] = {opd_mem(acc, 0, none), opd_val(v)};
	sdfg_store(rb, sdfg_tasklet(g, rb, T_ADD, o->dt, 2, ad), xp_memlet(acc, 0, none), W_NONE);
	Node *fb = xp_block(g, body, label);
	Operand fin[1] = {opd_mem(acc, 0, none)};
	sdfg_store(fb, sdfg_tasklet(g, fb, T_ASSIGN, o->dt, 1, fin), xp_memlet(out, r, xp_vars(g, r, vars)), W_NONE);
	return 0;
}

/* ---- im2col (unfold) ----------------------------------------------------------------
 * out [N,] C, kh, kw, Lh, Lw (the lowering views it as [N,] C*kh*kw, L):
 * out[n, c, i, j, y, x] = in[n, c, y*sh - ph + i*dh, x*sw - pw + j*dw],
 * 0 outside the image. */

int expand_im2col(Sdfg *g, LibNode *l, Node *seq, const char *label, const XpTile *tile)
{
	(void)tile;
	int in = l->in[0], out = l->out[0];
	Container *x = sdfg_c(g, in), *o = sdfg_c(g, out);
	int64_t dl[2], pd[2], st[2];
	lib_ints(l, "dilation", dl, 2);
	lib_ints(l, "padding", pd, 2);
	lib_ints(l, "stride", st, 2);
	int vars[MAXDIM];
	Node *body = xp_nest(g, seq, out, vars);
	Node *b = xp_block(g, body, label);
	Expr **O = xp_vars(g, o->rank, vars), *xi[MAXDIM];
	int bt = o->rank - 5; /* 1 if batched */
	for (int d = 0; d <= bt; d++)
		xi[d] = O[d];
	for (int k = 0; k < 2; k++)
		xi[bt + 1 + k] = ex_add(g, ex_addi(g, ex_muli(g, O[bt + 3 + k], st[k]), -pd[k]), ex_muli(g, O[bt + 1 + k], dl[k]));
	sdfg_store(b, xp_tk1(g, b, T_ASSIGN, o->dt, opd_guarded(in, x->rank, xi, 0)), xp_memlet(out, o->rank, O), W_NONE);
	return 0;
}
