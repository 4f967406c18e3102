/*
 * nn.c - lowerings of the neural-network layers: convolution, linear and
 * matrix products (with 1-d operands), batch norm, pooling, reductions,
 * softmax.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "lower.h"

int lower_conv(Imp *m, const cJSON *node)
{
	int x = lw_tensor(m, "input"), w = lw_tensor(m, "weight"), b = lw_tensor(m, "bias");
	if (x < 0 || w < 0)
		return -1;
	if (m->info->param == 1 && lw_int(m, "transposed", 0)) {
		lw_error(m, "transposed convolution is not supported yet");
		return -1;
	}
	int nd = lw_c(m, x)->rank - 2;
	if (nd < 1 || nd > 3 || lw_c(m, w)->rank != nd + 2) {
		lw_error(m, "convolution of a rank-%d input is not supported (batched 1-d, 2-d or 3-d inputs only)", lw_c(m, x)->rank);
		return -1;
	}
	Val *st = lw_arg(m, "stride"), *pd = lw_arg(m, "padding"), *dl = lw_arg(m, "dilation");
	int64_t s[3], p[3], d[3];
	for (int i = 0; i < nd; i++) {
		s[i] = st->n > i ? st->is[i] : st->n ? st->is[0] : 1;
		p[i] = pd->n > i ? pd->is[i] : pd->n ? pd->is[0] : 0;
		d[i] = dl->n > i ? dl->is[i] : dl->n ? dl->is[0] : 1;
	}
	int out = lw_new_out(m, node, 0);
	if (out < 0)
		return -1;
	LibNode *l = lw_lib(m, LIB_CONV);
	l->in[0] = x;
	l->in[1] = w;
	l->in[2] = b;
	l->nin = 3;
	l->out[0] = out;
	l->nout = 1;
	lib_set_ints(m->g, l, "stride", s, nd);
	lib_set_ints(m->g, l, "padding", p, nd);
	lib_set_ints(m->g, l, "dilation", d, nd);
	lib_set_int(m->g, l, "groups", lw_int(m, "groups", 1));
	return 0;
}

/* Rank-2+ operand for a matrix product: 1-d vectors become [1,K] or [K,1]. */
static int mat_operand(Imp *m, int c, int isleft)
{
	Container *s = lw_c(m, c);
	if (s->rank >= 2)
		return c;
	int64_t shape[2];
	Expr *st[2];
	if (isleft) {
		shape[0] = 1, shape[1] = lw_dim(m, c, 0);
		st[0] = ex_int(m->g, 0), st[1] = s->stride[0];
	} else {
		shape[0] = lw_dim(m, c, 0), shape[1] = 1;
		st[0] = s->stride[0], st[1] = ex_int(m->g, 0);
	}
	Expr *sh[2] = {ex_int(m->g, shape[0]), ex_int(m->g, shape[1])};
	int id = sdfg_add_view(m->g, arena_printf(m->a, "%s_mat", s->name), c, 2, sh, st, s->offset);
	lw_c(m, id)->origin = "";
	return id;
}

/* GEMM whose result has the output's shape with the 1-d dims restored. */
static int gemm(Imp *m, const cJSON *node, int a, int b, int bias, double alpha, double beta)
{
	const char *on = lw_out_name(node, 0);
	Meta mt;
	if (!on || lw_meta(m, on, &mt) || lw_check_dtype(m, &mt, on))
		return -1;
	int ra = lw_c(m, a)->rank, rb = lw_c(m, b)->rank;
	a = mat_operand(m, a, 1);
	b = mat_operand(m, b, 0);
	int out;
	if (ra >= 2 && rb >= 2) {
		out = lw_new_out(m, node, 0);
	} else {
		/* Compute into [.., M, N] with the missing dim as 1, then view. */
		int r = MAX(lw_c(m, a)->rank, lw_c(m, b)->rank);
		int64_t full[MAXDIM];
		int nb = r - 2;
		for (int i = 0; i < nb; i++)
			full[i] = mt.shape[i];
		full[nb] = ra == 1 ? 1 : lw_dim(m, a, lw_c(m, a)->rank - 2);
		full[nb + 1] = rb == 1 ? 1 : lw_dim(m, b, lw_c(m, b)->rank - 1);
		int id = sdfg_add_container(m->g, arena_printf(m->a, "%s_mm", on), (Dtype)mt.dt, CK_TRANSIENT, r, full);
		lw_c(m, id)->origin = "";
		LibNode *l = lw_lib(m, LIB_GEMM);
		l->in[0] = a, l->in[1] = b, l->in[2] = bias, l->nin = 3;
		l->out[0] = id, l->nout = 1;
		lib_set_float(m->g, l, "alpha", alpha);
		lib_set_float(m->g, l, "beta", beta);
		Expr *st[MAXDIM];
		Expr *sh[MAXDIM];
		for (int i = 0; i < mt.rank; i++)
			sh[i] = ex_int(m->g, mt.shape[i]);
		lw_reshape_strides(m, id, mt.rank, mt.shape, st);
		int v = sdfg_add_view(m->g, on, id, mt.rank, sh, st, ex_int(m->g, 0));
		lw_c(m, v)->origin = arena_strdup(m->a, on);
		lw_bind(m, on, v);
		return 0;
	}
	if (out < 0)
		return -1;
	LibNode *l = lw_lib(m, LIB_GEMM);
	l->in[0] = a, l->in[1] = b, l->in[2] = bias, l->nin = 3;
	l->out[0] = out, l->nout = 1;
	lib_set_float(m->g, l, "alpha", alpha);
	lib_set_float(m->g, l, "beta", beta);
	return 0;
}

int lower_gemm(Imp *m, const cJSON *node)
{
	if (m->info->param == 1) {
		int bias = lw_tensor(m, "self"), a = lw_tensor(m, "mat1"), b = lw_tensor(m, "mat2");
		if (a < 0 || b < 0 || bias < 0)
			return -1;
		return gemm(m, node, a, b, bias, lw_num(m, "alpha", 1), lw_num(m, "beta", 1));
	}
	int a = lw_tensor(m, "self"), b = m->info->param == 2 ? lw_tensor(m, "other") : lw_tensor(m, "mat2");
	if (a < 0 || b < 0)
		return -1;
	return gemm(m, node, a, b, -1, 1, 0);
}

int lower_linear(Imp *m, const cJSON *node)
{
	int x = lw_tensor(m, "input"), w = lw_tensor(m, "weight"), b = lw_tensor(m, "bias");
	if (x < 0 || w < 0)
		return -1;
	Container *ws = lw_c(m, w);
	if (ws->rank != 2) {
		lw_error(m, "linear: weight of rank %d (expected 2)", ws->rank);
		return -1;
	}
	/* weight^T as a view: [K, N] */
	Expr *sh[2] = {ws->shape[1], ws->shape[0]}, *st[2] = {ws->stride[1], ws->stride[0]};
	int wt = sdfg_add_view(m->g, arena_printf(m->a, "%s_t", ws->name), w, 2, sh, st, ws->offset);
	lw_c(m, wt)->origin = "";
	return gemm(m, node, x, wt, b, 1, b >= 0 ? 1 : 0);
}

int lower_batchnorm(Imp *m, const cJSON *node)
{
	if (m->info->param == 0 && lw_int(m, "training", 0)) {
		lw_error(m, "batch_norm in training mode; doccc compiles inference only (call model.eval() before export)");
		return -1;
	}
	int x = lw_tensor(m, "input"), w = lw_tensor(m, "weight"), b = lw_tensor(m, "bias");
	int rm = lw_tensor(m, "running_mean"), rv = lw_tensor(m, "running_var");
	if (x < 0 || rm < 0 || rv < 0) {
		lw_error(m, "batch_norm without running statistics is not supported");
		return -1;
	}
	int out = lw_new_out(m, node, 0);
	if (out < 0)
		return -1;
	LibNode *l = lw_lib(m, LIB_BATCHNORM);
	l->in[0] = x, l->in[1] = w, l->in[2] = b, l->in[3] = rm, l->in[4] = rv, l->nin = 5;
	l->out[0] = out, l->nout = 1;
	lib_set_float(m->g, l, "eps", lw_num(m, "eps", 1e-5));
	return 0;
}

int lower_pool(Imp *m, const cJSON *node)
{
	int x = lw_tensor(m, "self");
	if (x < 0)
		return -1;
	if (lw_c(m, x)->rank != 4 && lw_c(m, x)->rank != 3) {
		lw_error(m, "2-d pooling of a rank-%d tensor is not supported", lw_c(m, x)->rank);
		return -1;
	}
	if (m->info->param == PL_MAX && m->info->nrets == 2) {
		const char *idx = lw_out_name(node, 1);
		if (idx && lw_value_used(m, idx)) {
			lw_error(m, "the indices output of max_pool2d_with_indices is used; doccc computes only the values");
			return -1;
		}
	}
	int out = lw_new_out(m, node, 0);
	if (out < 0)
		return -1;
	LibNode *l = lw_lib(m, LIB_POOL);
	l->in[0] = x, l->nin = 1;
	l->out[0] = out, l->nout = 1;
	lib_set_int(m->g, l, "mode", m->info->param);
	if (m->info->param == PL_ADAPTIVE)
		return 0;
	Val *k = lw_arg(m, "kernel_size"), *s = lw_arg(m, "stride"), *p = lw_arg(m, "padding");
	int64_t kk[2] = {k->is[0], k->n > 1 ? k->is[1] : k->is[0]};
	int64_t ss[2] = {kk[0], kk[1]}, pp[2] = {0, 0}, dd[2] = {1, 1};
	if (s->k == V_INTS && s->n > 0)
		ss[0] = s->is[0], ss[1] = s->n > 1 ? s->is[1] : s->is[0];
	if (p->k == V_INTS && p->n > 0)
		pp[0] = p->is[0], pp[1] = p->n > 1 ? p->is[1] : p->is[0];
	if (m->info->param == PL_MAX) {
		Val *d = lw_arg(m, "dilation");
		if (d->k == V_INTS && d->n > 0)
			dd[0] = d->is[0], dd[1] = d->n > 1 ? d->is[1] : d->is[0];
	} else {
		lib_set_int(m->g, l, "count_include_pad", lw_int(m, "count_include_pad", 1));
		lib_set_int(m->g, l, "divisor", lw_int(m, "divisor_override", 0));
	}
	lib_set_ints(m->g, l, "kernel", kk, 2);
	lib_set_ints(m->g, l, "stride", ss, 2);
	lib_set_ints(m->g, l, "padding", pp, 2);
	lib_set_ints(m->g, l, "dilation", dd, 2);
	lib_set_int(m->g, l, "ceil_mode", lw_int(m, "ceil_mode", 0));
	return 0;
}

int lower_reduce(Imp *m, const cJSON *node)
{
	int x = lw_tensor(m, "self");
	if (x < 0)
		return -1;
	int r = lw_c(m, x)->rank;
	int64_t dims[MAXDIM];
	int nd = 0;
	Val *d = NULL;
	for (int i = 0; i < m->info->nargs; i++)
		if (!strcmp(m->info->args[i].name, "dim"))
			d = &m->args[i];
	if (d && d->k == V_INTS && d->n > 0) {
		for (int i = 0; i < d->n; i++) {
			int k = lw_norm_dim(m, d->is[i], r);
			if (k < 0)
				return -1;
			dims[nd++] = k;
		}
	} else
		for (int i = 0; i < r; i++)
			dims[nd++] = i;
	int out = lw_new_out(m, node, 0);
	if (out < 0)
		return -1;
	LibNode *l = lw_lib(m, LIB_REDUCE);
	l->in[0] = x, l->nin = 1;
	l->out[0] = out, l->nout = 1;
	lib_set_int(m->g, l, "mode", m->info->param);
	lib_set_ints(m->g, l, "dims", dims, nd);
	return 0;
}

int lower_softmax(Imp *m, const cJSON *node)
{
	int x = lw_tensor(m, "self");
	if (x < 0)
		return -1;
	int d = lw_norm_dim(m, lw_int(m, "dim", -1), lw_c(m, x)->rank);
	if (d < 0)
		return -1;
	int out = lw_new_out(m, node, 0);
	if (out < 0)
		return -1;
	LibNode *l = lw_lib(m, LIB_SOFTMAX);
	l->in[0] = x, l->nin = 1;
	l->out[0] = out, l->nout = 1;
	lib_set_int(m->g, l, "dim", d);
	lib_set_int(m->g, l, "log", m->info->param);
	return 0;
}

