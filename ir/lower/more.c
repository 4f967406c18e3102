/*
 * more.c - lowerings of more elementwise and shape ops: nan_to_num,
 * round.decimals, glu, lerp; linspace and logspace (LIB_LINSPACE), tril
 * and triu (LIB_TRI); fliplr, flipud and rot90 (a flip, LIB_REMAP, of the
 * input or of its transposed view); pixel_shuffle, pixel_unshuffle and the
 * channel shuffles (a copy of a permuted view, viewed in the output's
 * shape, as torch's own decompositions); diff (a slice of one view minus
 * another, n times, after the prepend/append concatenation); and the
 * run-time assertions on tensors (_assert_async: LIB_ASSERT).
 *
 * fmin/fmax, erfinv, frac and xlogy are plain unary/binary rows (elem.c).
 */
#include <float.h>
#include <math.h>
#include <string.h>

#include "lower.h"

/* The library node the last lw_elemwise call appended. */
static LibNode *last_lib(Imp *m)
{
	return m->g->root->kids[m->g->root->nkids - 1]->lib;
}

/* ---- elementwise -------------------------------------------------------------------------- */

/* Largest finite value of a float dtype (nan_to_num's default for +inf). */
static double dtype_max(Dtype d)
{
	switch (d) {
	case DT_F64: return DBL_MAX;
	case DT_F16: return 65504.0;
	case DT_BF16: return 3.3895313892515355e38;   /* 0x7f7f */
	default: return FLT_MAX;
	}
}

int lower_nan_to_num(Imp *m, const cJSON *node)
{
	Val *x = lw_arg(m, "self");
	if (x->k != V_TENSOR)
		return -1;
	Dtype dt = lw_c(m, x->t)->dt;
	Val nan = {.k = V_FLOAT, .f = lw_num(m, "nan", 0)};
	Val *ops[2] = {x, &nan};
	if (lw_elemwise(m, node, T_NAN_TO_NUM, 2, ops))
		return -1;
	LibNode *l = last_lib(m);
	lib_set_float(m->g, l, "p0", lw_num(m, "posinf", dtype_max(dt)));
	lib_set_float(m->g, l, "p1", lw_num(m, "neginf", -dtype_max(dt)));
	return 0;
}

int lower_round_decimals(Imp *m, const cJSON *node)
{
	Val *x = &m->args[0];
	if (lw_elemwise(m, node, T_ROUND_DEC, 1, &x))
		return -1;
	lib_set_float(m->g, last_lib(m), "p0", (double)lw_int(m, "decimals", 0));
	return 0;
}

/* glu(x, dim): the first half of dim times the sigmoid of the second. */
int lower_glu(Imp *m, const cJSON *node)
{
	int x = lw_tensor(m, "self");
	if (x < 0)
		return -1;
	Container *c = lw_c(m, x);
	int d = lw_norm_dim(m, lw_int(m, "dim", -1), c->rank);
	if (d < 0)
		return -1;
	/* the halved dim is a number (a run-time one asks for static sizes);
	 * the others keep their sizes, run-time dims included */
	int64_t n = lw_dim(m, x, d);
	if (n % 2) {
		lw_error(m, "glu: dimension %d has odd size %lld; it must halve", d, (long long)n);
		return -1;
	}
	Expr *st[MAXDIM], *sh[MAXDIM];
	for (int i = 0; i < c->rank; i++) {
		sh[i] = i == d ? ex_int(m->g, n / 2) : c->shape[i];
		st[i] = c->stride[i];
	}
	Val a = {.k = V_TENSOR, .t = lw_scratch_view_x(m, arena_printf(m->a, "%s_a", m->nodename), x, c->rank, sh, st, c->offset)};
	Val b = {.k = V_TENSOR, .t = lw_scratch_view_x(m, arena_printf(m->a, "%s_b", m->nodename), x, c->rank, sh, st,
	                                    ex_add(m->g, c->offset, ex_muli(m->g, c->stride[d], n / 2)))};
	Val *ops[2] = {&a, &b};
	return lw_elemwise(m, node, T_GLU, 2, ops);
}

/* lerp(self, end, weight), weight a tensor or a number. */
int lower_lerp(Imp *m, const cJSON *node)
{
	Val *ops[3] = {lw_arg(m, "self"), lw_arg(m, "end"), lw_arg(m, "weight")};
	return lw_elemwise(m, node, T_LERP, 3, ops);
}

/* ---- run-time assertions -------------------------------------------------------------------- */

/* _assert_async(self[, assert_msg]): the run fails with DOCCC_ERR_ASSERT
 * and the message where the one element of self is zero (torch raises). */
int lower_assert_async(Imp *m, const cJSON *node)
{
	(void)node;
	int x = lw_tensor(m, "self");
	if (x < 0)
		return -1;
	if (sdfg_numel(m->g, x) != 1) {
		lw_error(m, "%s needs a tensor of one element (got %lld)", m->info->target, (long long)sdfg_numel(m->g, x));
		return -1;
	}
	const char *msg = m->info->nargs > 1 ? lw_arg(m, "assert_msg")->s : NULL;
	Sdfg *g = m->g;
	const char *text = arena_printf(g->arena, "run-time assertion of node '%s' failed: %s", m->nodename,
	                                msg ? msg : "Expected Tensor with single nonzero value, but got zero");
	VEC_PUSH(g->arena, g->msgs, g->nmsgs, g->capmsgs, text);
	LibNode *l = lw_lib(m, LIB_ASSERT);
	l->in[0] = x, l->nin = 1;
	l->nout = 0;
	lib_set_int(g, l, "msg", g->nmsgs - 1);
	return 0;
}
