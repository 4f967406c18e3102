/*
 * nn.c - expansion of batch norm (what fold_constants left), pooling
 * (max with -inf padding through guarded memlets, average with the window
 * clipped to the input and PyTorch's divisor rules, adaptive average),
 * reductions and softmax. Reductions accumulate into a local scalar and
 * store once; softmax makes three passes (max, sum of exp, normalize) and
 * recomputes exp rather than storing twice.
 */
#include <math.h>
#include <string.h>

#include "expand.h"

/* ---- batch norm (what fold_constants left) ------------------------------------------ */

int expand_batchnorm(Sdfg *g, LibNode *l, Node *seq, const char *label, const XpTile *tile)
{
	(void)tile;
	int out = l->out[0];
	Container *o = sdfg_c(g, out);
	int vars[MAXDIM];
	Node *body = xp_nest(g, seq, out, vars);
	Node *b = xp_block(g, body, label);
	Expr *ch[1] = {o->rank > 1 ? ex_sym(g, vars[1]) : ex_int(g, 0)};
	Operand x = xp_bcast(g, l->in[0], out, vars);
	Dtype dt = o->dt;
	int v;
	if (lib_int(l, "prepared", 0)) {
		/* in[1] = scale, in[2] = shift per channel */
		Operand fin[3] = {x, opd_mem(l->in[1], 1, ch), opd_mem(l->in[2], 1, ch)};
		v = sdfg_tasklet(g, b, T_FMA, dt, 3, fin);
	} else {
		double eps = lib_float(l, "eps", 1e-5);
		Operand s[2] = {x, opd_mem(l->in[3], 1, ch)};
		int d = sdfg_tasklet(g, b, T_SUB, dt, 2, s);
		Operand va[2] = {opd_mem(l->in[4], 1, ch), opd_const(eps)};
		int ve = sdfg_tasklet(g, b, T_ADD, dt, 2, va);
		Operand vs[1] = {opd_val(ve)};
		int sq = sdfg_tasklet(g, b, T_SQRT, dt, 1, vs);
		Operand dv[2] = {opd_val(d), opd_val(sq)};
		v = sdfg_tasklet(g, b, T_DIV, dt, 2, dv);
		if (l->in[1] >= 0) {
			Operand mw[2] = {opd_val(v), opd_mem(l->in[1], 1, ch)};
			v = sdfg_tasklet(g, b, T_MUL, dt, 2, mw);
		}
		if (l->in[2] >= 0) {
			Operand ab[2] = {opd_val(v), opd_mem(l->in[2], 1, ch)};
			v = sdfg_tasklet(g, b, T_ADD, dt, 2, ab);
		}
	}
	sdfg_store(b, v, xp_memlet(out, o->rank, xp_vars(g, o->rank, vars)), W_NONE);
	return 0;
}

/* ---- pooling ---------------------------------------------------------------------- */

int expand_pool(Sdfg *g, LibNode *l, Node *seq, const char *label, const XpTile *tile)
{
	(void)tile;
	int in = l->in[0], out = l->out[0];
	Container *o = sdfg_c(g, out), *x = sdfg_c(g, in);
	int r = o->rank; /* 3 or 4: [N,] C, H, W */
	int vars[MAXDIM];
	Node *body = xp_nest(g, seq, out, vars);
	Node *owmap = body->parent;
	int mode = (int)lib_int(l, "mode", PL_MAX);
	int64_t H, W, OH, OW;
	ex_isint(x->shape[r - 2], &H);
	ex_isint(x->shape[r - 1], &W);
	ex_isint(o->shape[r - 2], &OH);
	ex_isint(o->shape[r - 1], &OW);
	Expr *oh = ex_sym(g, vars[r - 2]), *ow = ex_sym(g, vars[r - 1]);
	Expr *h0, *h1, *w0, *w1, *hstart, *wstart; /* window [h0,h1) x [w0,w1) in kernel coords */
	int64_t k[2] = {1, 1}, s[2] = {1, 1}, p[2] = {0, 0}, d[2] = {1, 1};
	int acc = xp_local(g, "acc", o->dt, 0, NULL, owmap);
	Expr *none[1] = {NULL};
	Node *ib = xp_block(g, body, label);
	double init = mode == PL_MAX ? -INFINITY : 0;
	Operand z[1] = {opd_const(init)};
	sdfg_store(ib, sdfg_tasklet(g, ib, T_ASSIGN, o->dt, 1, z), xp_memlet(acc, 0, none), W_NONE);
	Expr *divisor = NULL;
	if (mode == PL_ADAPTIVE) {
		/* start = floor(o*H/OH), end = ceil((o+1)*H/OH) */
		hstart = ex_div(g, ex_muli(g, oh, H), ex_int(g, OH));
		wstart = ex_div(g, ex_muli(g, ow, W), ex_int(g, OW));
		Expr *hend = ex_div(g, ex_addi(g, ex_muli(g, ex_addi(g, oh, 1), H), OH - 1), ex_int(g, OH));
		Expr *wend = ex_div(g, ex_addi(g, ex_muli(g, ex_addi(g, ow, 1), W), OW - 1), ex_int(g, OW));
		h0 = w0 = ex_int(g, 0);
		h1 = ex_sub(g, hend, hstart);
		w1 = ex_sub(g, wend, wstart);
		divisor = ex_mul(g, h1, w1);
	} else {
		lib_ints(l, "kernel", k, 2);
		lib_ints(l, "stride", s, 2);
		lib_ints(l, "padding", p, 2);
		lib_ints(l, "dilation", d, 2);
		hstart = ex_addi(g, ex_muli(g, oh, s[0]), -p[0]);
		wstart = ex_addi(g, ex_muli(g, ow, s[1]), -p[1]);
		if (mode == PL_MAX) {
			/* out-of-range taps read -inf through guarded memlets */
			h0 = w0 = ex_int(g, 0);
			h1 = ex_int(g, k[0]);
			w1 = ex_int(g, k[1]);
		} else {
			/* clip the window to the input: taps with 0 <= start+k*d < H */
			Expr *hs = ex_sub(g, ex_int(g, 0), hstart), *ws = ex_sub(g, ex_int(g, 0), wstart);
			h0 = ex_div(g, ex_addi(g, ex_max(g, ex_int(g, 0), hs), d[0] - 1), ex_int(g, d[0]));
			w0 = ex_div(g, ex_addi(g, ex_max(g, ex_int(g, 0), ws), d[1] - 1), ex_int(g, d[1]));
			Expr *hr = ex_sub(g, ex_int(g, H), hstart), *wr = ex_sub(g, ex_int(g, W), wstart);
			h1 = ex_min(g, ex_int(g, k[0]), ex_div(g, ex_addi(g, ex_max(g, ex_int(g, 0), hr), d[0] - 1), ex_int(g, d[0])));
			w1 = ex_min(g, ex_int(g, k[1]), ex_div(g, ex_addi(g, ex_max(g, ex_int(g, 0), wr), d[1] - 1), ex_int(g, d[1])));
			int64_t dv = lib_int(l, "divisor", 0);
			if (dv)
				divisor = ex_int(g, dv);
			else if (lib_int(l, "count_include_pad", 1)) {
				/* window clipped to the padded input */
				Expr *he = ex_min(g, ex_addi(g, hstart, k[0]), ex_int(g, H + p[0]));
				Expr *we = ex_min(g, ex_addi(g, wstart, k[1]), ex_int(g, W + p[1]));
				divisor = ex_mul(g, ex_sub(g, he, hstart), ex_sub(g, we, wstart));
			} else
				divisor = ex_mul(g, ex_sub(g, h1, h0), ex_sub(g, w1, w0));
		}
	}
	int kh, kw;
	Node *lh = xp_loop(g, body, N_FOR, "kh", h0, h1, 1, &kh);
	Node *lw = xp_loop(g, lh->body, N_FOR, "kw", w0, w1, 1, &kw);
	Node *rb = xp_block(g, lw->body, label);
	Expr *idx[MAXDIM];
	for (int i = 0; i < r - 2; i++)
		idx[i] = ex_sym(g, vars[i]);
	idx[r - 2] = ex_add(g, hstart, ex_muli(g, ex_sym(g, kh), d[0]));
	idx[r - 1] = ex_add(g, wstart, ex_muli(g, ex_sym(g, kw), d[1]));
	Operand rd[2] = {opd_mem(acc, 0, none),
	                 mode == PL_MAX ? opd_guarded(in, r, idx, -INFINITY) : opd_mem(in, r, idx)};
	int t = sdfg_tasklet(g, rb, mode == PL_MAX ? T_MAX : T_ADD, o->dt, 2, rd);
	sdfg_store(rb, t, xp_memlet(acc, 0, none), W_NONE);
	Node *fb = xp_block(g, body, label);
	Operand fin[2] = {opd_mem(acc, 0, none), divisor ? opd_expr(divisor) : opd_const(1)};
	int v = sdfg_tasklet(g, fb, divisor ? T_DIV : T_ASSIGN, o->dt, divisor ? 2 : 1, fin);
	sdfg_store(fb, v, xp_memlet(out, r, xp_vars(g, r, vars)), W_NONE);
	return 0;
}

/* ---- reductions ----------------------------------------------------------------------- */

int expand_reduce(Sdfg *g, LibNode *l, Node *seq, const char *label, const XpTile *tile)
{
	(void)tile;
	int in = l->in[0], out = l->out[0];
	Container *x = sdfg_c(g, in), *o = sdfg_c(g, out);
	int64_t dims[MAXDIM];
	int nd = lib_ints(l, "dims", dims, MAXDIM);
	int red[MAXDIM] = {0};
	for (int i = 0; i < nd; i++)
		red[dims[i]] = 1;
	int keep = o->rank == x->rank;
	/* Output loops over kept dims. */
	int ovars[MAXDIM];
	Node *body = xp_nest(g, seq, out, ovars);
	Node *owner = o->rank ? body->parent : NULL;
	int mode = (int)lib_int(l, "mode", RD_SUM);
	Dtype adt = o->dt == DT_F16 || o->dt == DT_BF16 ? DT_F32 : o->dt;
	Expr *none[1] = {NULL};
	int acc;
	if (owner)
		acc = xp_local(g, "acc", adt, 0, NULL, owner);
	else {
		acc = sdfg_add_container(g, "acc", adt, CK_TRANSIENT, 0, NULL);
		sdfg_c(g, acc)->origin = "";
	}
	Node *ib = xp_block(g, body, label);
	double init = mode == RD_MAX ? -INFINITY : mode == RD_MIN ? INFINITY : 0;
	Operand z[1] = {opd_const(init)};
	sdfg_store(ib, sdfg_tasklet(g, ib, T_ASSIGN, adt, 1, z), xp_memlet(acc, 0, none), W_NONE);
	/* Inner loops over reduced dims, in order (innermost = last dim). */
	Expr *idx[MAXDIM];
	Node *inner = body;
	int64_t count = 1;
	for (int d = 0, od = 0; d < x->rank; d++) {
		if (red[d]) {
			int v;
			Node *lp = xp_loop(g, inner, N_FOR, "r", ex_int(g, 0), x->shape[d], 1, &v);
			inner = lp->body;
			idx[d] = ex_sym(g, v);
			int64_t n = 0;
			ex_isint(x->shape[d], &n);
			count *= n;
			if (keep)
				od++;
		} else
			idx[d] = ex_sym(g, ovars[od++]);
	}
	Node *rb = xp_block(g, inner, label);
	Operand rd[2] = {opd_mem(acc, 0, none), opd_mem(in, x->rank, idx)};
	TCode c = mode == RD_MAX ? T_MAX : mode == RD_MIN ? T_MIN : T_ADD;
	sdfg_store(rb, sdfg_tasklet(g, rb, c, adt, 2, rd), xp_memlet(acc, 0, none), W_NONE);
	Node *fb = xp_block(g, body, label);
	Operand fin[2] = {opd_mem(acc, 0, none), opd_const((double)count)};
	int v = sdfg_tasklet(g, fb, mode == RD_MEAN ? T_DIV : T_ASSIGN, o->dt, mode == RD_MEAN ? 2 : 1, fin);
	sdfg_store(fb, v, xp_memlet(out, o->rank, xp_vars(g, o->rank, ovars)), W_NONE);
	return 0;
}

/* ---- softmax: max, sum of exp, normalize (exp recomputed, nothing stored twice) ---- */

int expand_softmax(Sdfg *g, LibNode *l, Node *seq, const char *label, const XpTile *tile)
{
	(void)tile;
	int in = l->in[0], out = l->out[0];
	Container *o = sdfg_c(g, out);
	int dim = (int)lib_int(l, "dim", 0), islog = (int)lib_int(l, "log", 0);
	int r = o->rank;
	/* Maps over all dims but `dim`. */
	int vars[MAXDIM];
	Node *body = seq, *owner = NULL;
	for (int d = 0; d < r; d++) {
		if (d == dim)
			continue;
		Node *lp = xp_loop(g, body, N_MAP, "i", ex_int(g, 0), o->shape[d], 1, &vars[d]);
		body = lp->body;
		owner = lp;
	}
	Dtype adt = o->dt == DT_F64 ? DT_F64 : DT_F32;
	Expr *none[1] = {NULL};
	int mx, sm;
	if (owner) {
		mx = xp_local(g, "mx", adt, 0, NULL, owner);
		sm = xp_local(g, "sum", adt, 0, NULL, owner);
	} else {
		mx = sdfg_add_container(g, "mx", adt, CK_TRANSIENT, 0, NULL);
		sm = sdfg_add_container(g, "sum", adt, CK_TRANSIENT, 0, NULL);
	}
	Node *ib = xp_block(g, body, label);
	Operand z[1] = {opd_const(-INFINITY)}, z0[1] = {opd_const(0)};
	sdfg_store(ib, sdfg_tasklet(g, ib, T_ASSIGN, adt, 1, z), xp_memlet(mx, 0, none), W_NONE);
	sdfg_store(ib, sdfg_tasklet(g, ib, T_ASSIGN, adt, 1, z0), xp_memlet(sm, 0, none), W_NONE);
	Expr *idx[MAXDIM];
	for (int pass = 0; pass < 3; pass++) {
		int j;
		Node *lp = xp_loop(g, body, N_FOR, "j", ex_int(g, 0), o->shape[dim], 1, &j);
		for (int d = 0; d < r; d++)
			idx[d] = d == dim ? ex_sym(g, j) : ex_sym(g, vars[d]);
		Node *b = xp_block(g, lp->body, label);
		Operand xv = opd_mem(in, r, idx);
		if (pass == 0) {
			Operand a[2] = {opd_mem(mx, 0, none), xv};
			sdfg_store(b, sdfg_tasklet(g, b, T_MAX, adt, 2, a), xp_memlet(mx, 0, none), W_NONE);
			continue;
		}
		Operand s[2] = {xv, opd_mem(mx, 0, none)};
		int dx = sdfg_tasklet(g, b, T_SUB, adt, 2, s);
		if (pass == 1) {
			Operand e[1] = {opd_val(dx)};
			int ex = sdfg_tasklet(g, b, T_EXP, adt, 1, e);
			Operand a[2] = {opd_mem(sm, 0, none), opd_val(ex)};
			sdfg_store(b, sdfg_tasklet(g, b, T_ADD, adt, 2, a), xp_memlet(sm, 0, none), W_NONE);
			continue;
		}
		int v;
		if (islog) {
			Operand ls[1] = {opd_mem(sm, 0, none)};
			int lg = sdfg_tasklet(g, b, T_LOG, adt, 1, ls);
			Operand sb[2] = {opd_val(dx), opd_val(lg)};
			v = sdfg_tasklet(g, b, T_SUB, o->dt, 2, sb);
		} else {
			Operand e[1] = {opd_val(dx)};
			int ex = sdfg_tasklet(g, b, T_EXP, adt, 1, e);
			Operand dv[2] = {opd_val(ex), opd_mem(sm, 0, none)};
			v = sdfg_tasklet(g, b, T_DIV, o->dt, 2, dv);
		}
		sdfg_store(b, v, xp_memlet(out, r, idx), W_NONE);
	}
	return 0;
}

