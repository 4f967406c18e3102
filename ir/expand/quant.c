/*
 * quant.c - expansions of the quant family (ir/ops_quant.h).
 *
 * quant: one map over the output, a tasklet per step of torch's own
 * formula, each in the type torch computes it in, so that the result is
 * bit-identical to eager running the converted program:
 *   quantize    clamp(round(x * (1/s)) + zp, qmin, qmax)   per tensor, channel, affine
 *               clamp(round(x * (1/s) + zp), qmin, qmax)   per token, group
 *               1/s of a Python number or an .item() in double, then the
 *               compute type; of a scale tensor in the scale's type
 *   dequantize  (q - zp) * s, in the output type per tensor, else in the
 *               scale's, then the output type
 * qparams: a map over rows; per row the minimum and maximum (NaN
 * propagates, as torch's amin/amax), then choose_qparams' formula. On the
 * GPUs a few long rows are first reduced in parts, a block each.
 */
#include <math.h>

#include "expand.h"

static int fl(Dtype d)
{
	return dtype_info[d].isfloat;
}

/* torch's type of a binary op of two tensors' types a and b, one of them
 * floating-point. */
static Dtype fpromote(Dtype a, Dtype b)
{
	if (a == b || !fl(b))
		return a;
	if (!fl(a))
		return b;
	if (a == DT_F64 || b == DT_F64)
		return DT_F64;
	return DT_F32;
}

/* Parameter container p (the output's rank, one element per block of
 * blk) at the output element vars. */
static Operand param_at(Sdfg *g, int p, const int64_t *blk, int r, const int *vars)
{
	Expr *idx[MAXDIM];
	for (int d = 0; d < r; d++)
		idx[d] = blk[d] == 0 ? ex_int(g, 0)
		       : blk[d] == 1 ? ex_sym(g, vars[d])
		       : ex_div(g, ex_sym(g, vars[d]), ex_int(g, blk[d]));
	return opd_mem(p, r, idx);
}

/* Operand a in type dt (a cast tasklet in b if its type `have` differs). */
static Operand as(Sdfg *g, Node *b, Operand a, Dtype have, Dtype dt)
{
	return have == dt ? a : opd_val(xp_tk1(g, b, T_CAST, dt, a));
}

static int quantize(Sdfg *g, LibNode *l, Node *b, Operand xv, Operand sv, Operand zv, int hasz)
{
	Container *xc = sdfg_c(g, l->in[0]), *o = sdfg_c(g, l->out[0]);
	int s = l->in[1], z = l->in[2], form = (int)lib_int(l, "form", QF_TENSOR);
	Dtype sdt = s >= 0 ? sdfg_c(g, s)->dt : DT_F64;
	Dtype cdt = form == QF_TENSOR ? DT_F32 : fpromote(form == QF_CHANNEL ? DT_F32 : xc->dt, sdt);
	Operand a = as(g, b, xv, xc->dt, cdt), inv;
	if (s < 0)
		inv = opd_const(1.0 / lib_float(l, "scale", 1));
	else if (form == QF_TENSOR) {
		/* scale.item() is a Python float: 1.0 / scale in double */
		int r = xp_tk1(g, b, T_RECIP, DT_F64, as(g, b, sv, sdt, DT_F64));
		inv = as(g, b, opd_val(r), DT_F64, cdt);
	} else
		inv = as(g, b, opd_val(xp_tk1(g, b, T_RECIP, sdt, sv)), sdt, cdt);
	int v = xp_tk2(g, b, T_MUL, cdt, a, inv);
	Operand zc = z >= 0 ? as(g, b, zv, sdfg_c(g, z)->dt, cdt) : zv;
	if (form == QF_TOKEN || form == QF_GROUP) {
		if (hasz)
			v = xp_tk2(g, b, T_ADD, cdt, opd_val(v), zc);
		v = xp_tk1(g, b, T_ROUND, cdt, opd_val(v));
	} else {
		v = xp_tk1(g, b, T_ROUND, cdt, opd_val(v));
		if (hasz)
			v = xp_tk2(g, b, T_ADD, cdt, opd_val(v), zc);
	}
	v = xp_tk1(g, b, T_CLAMP, cdt, opd_val(v));
	b->ts[v].p[0] = lib_float(l, "qmin", -INFINITY);
	b->ts[v].p[1] = lib_float(l, "qmax", INFINITY);
	return xp_tk1(g, b, T_CAST, o->dt, opd_val(v));
}

static int dequantize(Sdfg *g, LibNode *l, Node *b, Operand xv, Operand sv, Operand zv, int hasz)
{
	Container *xc = sdfg_c(g, l->in[0]), *o = sdfg_c(g, l->out[0]);
	int s = l->in[1], z = l->in[2], form = (int)lib_int(l, "form", QF_TENSOR);
	Dtype sdt = s >= 0 ? sdfg_c(g, s)->dt : o->dt;
	Dtype cdt = form == QF_TENSOR ? o->dt : fpromote(form == QF_AFFINE ? o->dt : sdt, sdt);
	/* per tensor and torchao subtract in the output type; the others in
	 * integers, exactly, which the compute type holds */
	Dtype sub = form == QF_TENSOR || form == QF_AFFINE ? o->dt : cdt;
	Operand a = as(g, b, xv, xc->dt, sub);
	if (hasz) {
		Operand zc = z >= 0 ? as(g, b, zv, sdfg_c(g, z)->dt, sub) : zv;
		a = opd_val(xp_tk2(g, b, T_SUB, sub, a, zc));
	}
	a = as(g, b, a, sub, cdt);
	Operand sc = s >= 0 ? as(g, b, sv, sdt, cdt) : sv;
	int v = xp_tk2(g, b, T_MUL, cdt, a, sc);
	return cdt == o->dt ? v : xp_tk1(g, b, T_CAST, o->dt, opd_val(v));
}

int expand_quant(Sdfg *g, LibNode *l, Node *seq, const char *label, const XpTile *t)
{
	(void)t;
	int out = l->out[0], s = l->in[1], z = l->in[2];
	Container *o = sdfg_c(g, out);
	int r = o->rank;
	int64_t blk[MAXDIM] = {0};
	if (lib_ints(l, "blk", blk, MAXDIM) != r)
		for (int d = 0; d < MAXDIM; d++)
			blk[d] = 0;
	int vars[MAXDIM];
	Node *body = xp_nest(g, seq, out, vars);
	Node *b = xp_block(g, body, label);
	Operand xv = opd_mem(l->in[0], r, xp_vars(g, r, vars));
	Operand sv = s >= 0 ? param_at(g, s, blk, r, vars) : opd_const(lib_float(l, "scale", 1));
	Operand zv = z >= 0 ? param_at(g, z, blk, r, vars) : opd_const(lib_float(l, "zp", 0));
	int hasz = z >= 0 || lib_float(l, "zp", 0) != 0;
	int v = lib_int(l, "dq", 0) ? dequantize(g, l, b, xv, sv, zv, hasz) : quantize(g, l, b, xv, sv, zv, hasz);
	sdfg_store(b, v, xp_memlet(out, r, xp_vars(g, r, vars)), W_NONE);
	return 0;
}

/* ---- qparams ---------------------------------------------------------------------- */

#define C(x) opd_const(x)
#define V(t) opd_val(t)

/* torch's scale and zero point from a row's minimum mn and maximum mx
 * (float32 values in block b); their tasklets into *s and *z. */
static void formula(Sdfg *g, LibNode *l, Node *b, Operand mn, Operand mx, int *s, int *z)
{
	int form = (int)lib_int(l, "form", QP_TENSOR);
	double lo = lib_float(l, "qmin", 0), hi = lib_float(l, "qmax", 255), eps = lib_float(l, "eps", 0x1p-23);
	int mnn = xp_tk2(g, b, T_MIN, DT_F32, mn, C(0));
	int mxp = xp_tk2(g, b, T_MAX, DT_F32, mx, C(0));
	switch (form) {
	case QP_SYMMETRIC: {
		int ng = xp_tk1(g, b, T_NEG, DT_F32, V(mnn));
		int top = xp_tk2(g, b, T_MAX, DT_F32, V(ng), V(mxp));
		int sc = xp_tk2(g, b, T_DIV, DT_F32, V(top), C((hi - lo) / 2));
		*s = xp_tk2(g, b, T_MAX, DT_F32, V(sc), C(eps));
		*z = xp_tk1(g, b, T_ASSIGN, DT_I64, C(lib_int(l, "zp_u8", 0) ? 128 : 0));
		return;
	}
	case QP_TOKEN_ASYM: {
		int w = xp_tk2(g, b, T_SUB, DT_F32, V(mxp), V(mnn));
		int sc = xp_tk2(g, b, T_DIV, DT_F32, V(w), C(hi - lo));
		sc = xp_tk2(g, b, T_MAX, DT_F32, V(sc), C(eps));
		int dmin = xp_tk2(g, b, T_DIV, DT_F32, V(mnn), V(sc));
		int dmax = xp_tk2(g, b, T_DIV, DT_F32, V(mxp), V(sc));
		int e1 = xp_tk2(g, b, T_ADD, DT_F32, C(lo), V(dmin));
		int e2 = xp_tk2(g, b, T_ADD, DT_F32, C(hi), V(dmax));
		int es = xp_tk2(g, b, T_ADD, DT_F32, V(e1), V(e2));
		int gt = xp_tk2(g, b, T_GT, DT_BOOL, V(es), C(0));
		int a1 = xp_tk2(g, b, T_SUB, DT_F32, C(lo), V(dmin));
		int a2 = xp_tk2(g, b, T_SUB, DT_F32, C(hi), V(dmax));
		int zp = xp_tk3(g, b, T_WHERE, DT_F32, V(gt), V(a1), V(a2));
		zp = xp_tk1(g, b, T_CLAMP, DT_F32, V(zp));
		b->ts[zp].p[0] = lo;
		b->ts[zp].p[1] = hi;
		zp = xp_tk1(g, b, T_ROUND, DT_F32, V(zp));
		*s = sc;
		*z = xp_tk1(g, b, T_CAST, DT_I64, V(zp));
		return;
	}
	default: {
		/* determine_qparams, per_tensor_affine */
		int w = xp_tk2(g, b, T_SUB, DT_F32, V(mxp), V(mnn));
		int sc = xp_tk2(g, b, T_DIV, DT_F32, V(w), C(hi - lo));
		sc = xp_tk2(g, b, T_MAX, DT_F32, V(sc), C(eps));
		int q = xp_tk2(g, b, T_DIV, DT_F32, V(mnn), V(sc));
		q = xp_tk1(g, b, T_ROUND, DT_F32, V(q));
		q = xp_tk1(g, b, T_CAST, DT_I32, V(q));
		int zp = xp_tk2(g, b, T_SUB, DT_I32, C(lo), V(q));
		zp = xp_tk1(g, b, T_CLAMP, DT_I32, V(zp));
		b->ts[zp].p[0] = lo;
		b->ts[zp].p[1] = hi;
		*s = sc;
		*z = xp_tk1(g, b, T_CAST, DT_I64, V(zp));
		return;
	}
	}
}

/* A map over q in [0, rows) of the minimum and maximum (its locals *mn,
 * *mx) of xmn[row][k] and xmx[row][k] over k: with parts 1, row q's [0,
 * len); else part q % parts of row q / parts, [n p, n p + n), past len
 * the identities (a loop of constant length, which the GPU plan splits
 * among a block's threads). The map. */
static Node *min_max(Sdfg *g, Node *seq, Expr *rows, int xmn, int xmx, int64_t parts, int64_t n, Expr *len, int *mn,
                     int *mx, const char *label)
{
	int i, k;
	Node *lp = xp_loop(g, seq, N_MAP, "r", ex_int(g, 0), rows, 1, &i);
	*mn = xp_local(g, "mn", DT_F32, 0, NULL, lp), *mx = xp_local(g, "mx", DT_F32, 0, NULL, lp);
	Expr *none[1] = {NULL}, *q = ex_sym(g, i), *row = q, *lo = ex_int(g, 0), *hi = len;
	Node *b = xp_block(g, lp->body, label);
	sdfg_store(b, xp_tk1(g, b, T_ASSIGN, DT_F32, C(INFINITY)), xp_memlet(*mn, 0, none), W_NONE);
	sdfg_store(b, xp_tk1(g, b, T_ASSIGN, DT_F32, C(-INFINITY)), xp_memlet(*mx, 0, none), W_NONE);
	if (parts > 1) {
		row = ex_div(g, q, ex_int(g, parts));
		lo = ex_muli(g, ex_mod(g, q, ex_int(g, parts)), n);
		hi = ex_int(g, n);
	}
	Node *fl = xp_loop(g, lp->body, N_FOR, "k", ex_int(g, 0), hi, 1, &k);
	Node *rb = xp_block(g, fl->body, label);
	Expr *idx[2] = {row, ex_add(g, lo, ex_sym(g, k))};
	Operand vn = opd_guarded(xmn, 2, idx, INFINITY), vx = opd_guarded(xmx, 2, idx, -INFINITY);
	if (parts == 1)
		vn = opd_mem(xmn, 2, idx), vx = opd_mem(xmx, 2, idx);
	sdfg_store(rb, xp_tk2(g, rb, T_MIN, DT_F32, opd_mem(*mn, 0, none), vn), xp_memlet(*mn, 0, none), W_NONE);
	sdfg_store(rb, xp_tk2(g, rb, T_MAX, DT_F32, opd_mem(*mx, 0, none), vx), xp_memlet(*mx, 0, none), W_NONE);
	return lp;
}

int expand_qparams(Sdfg *g, LibNode *l, Node *seq, const char *label, const XpTile *t)
{
	int x = l->in[0], so = l->out[0], zo = l->out[1];
	Container *xc = sdfg_c(g, x);
	int mn, mx, xmn = x, xmx = x;
	Expr *len = xc->shape[1];
	int64_t R, K;
	/* GPU: few long rows (a per-tensor quantization's one row) would be a
	 * block each; first the minimum and maximum of parts of each row, a
	 * block each, enough to give every multiprocessor two (an empty
	 * part's are the identities, infinities) */
	if (t->gpu_sms && ex_isint(xc->shape[0], &R) && ex_isint(len, &K) && R > 0 && R < t->gpu_sms && K >= 8192) {
		int64_t P = MIN((2 * t->gpu_sms + R - 1) / R, K / 1024), n = (K + P - 1) / P;
		Expr *sh[2] = {ex_int(g, R), ex_int(g, P)};
		xmn = sdfg_add_container_x(g, arena_printf(g->arena, "%s_pmin", xc->name), DT_F32, CK_TRANSIENT, 2, sh);
		xmx = sdfg_add_container_x(g, arena_printf(g->arena, "%s_pmax", xc->name), DT_F32, CK_TRANSIENT, 2, sh);
		sdfg_c(g, xmn)->origin = sdfg_c(g, xmx)->origin = "";
		int pmn, pmx;
		Node *pl = min_max(g, seq, ex_int(g, R * P), x, x, P, n, len, &pmn, &pmx, label);
		Node *pb = xp_block(g, pl->body, label);
		Expr *q = ex_sym(g, pl->var), *pi[2] = {ex_div(g, q, ex_int(g, P)), ex_mod(g, q, ex_int(g, P))}, *none[1] = {NULL};
		sdfg_store(pb, xp_tk1(g, pb, T_ASSIGN, DT_F32, opd_mem(pmn, 0, none)), xp_memlet(xmn, 2, pi), W_NONE);
		sdfg_store(pb, xp_tk1(g, pb, T_ASSIGN, DT_F32, opd_mem(pmx, 0, none)), xp_memlet(xmx, 2, pi), W_NONE);
		len = ex_int(g, P);
	}
	Node *lp = min_max(g, seq, xc->shape[0], xmn, xmx, 1, 0, len, &mn, &mx, label);
	Expr *none[1] = {NULL}, *row[1] = {ex_sym(g, lp->var)};
	Node *fb = xp_block(g, lp->body, label);
	int s, z;
	formula(g, l, fb, opd_mem(mn, 0, none), opd_mem(mx, 0, none), &s, &z);
	sdfg_store(fb, xp_tk1(g, fb, T_CAST, sdfg_c(g, so)->dt, V(s)), xp_memlet(so, 1, row), W_NONE);
	sdfg_store(fb, xp_tk1(g, fb, T_CAST, sdfg_c(g, zo)->dt, V(z)), xp_memlet(zo, 1, row), W_NONE);
	return 0;
}
