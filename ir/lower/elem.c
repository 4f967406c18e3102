/*
 * elem.c - lowerings of elementwise ATen ops: unary math, binary arithmetic with
 * alpha and python scalars, clamps, dtype casts.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "lower.h"

int lower_unary(Imp *m, const cJSON *node)
{
	Val *x = &m->args[0];
	TCode code = (TCode)m->info->param;
	if (code == T_GELU) {
		const char *ap = lw_arg(m, "approximate")->s;
		if (ap && !strcmp(ap, "tanh"))
			code = T_GELU_TANH;
		else if (ap && strcmp(ap, "none")) {
			lw_error(m, "gelu: unknown approximation '%s'", ap);
			return -1;
		}
	}
	return lw_elemwise(m, node, code, 1, &x);
}

int lower_clamp(Imp *m, const cJSON *node)
{
	double lo = -INFINITY, hi = INFINITY;
	switch (m->info->param) {
	case 0: lo = lw_num(m, "min_val", -1); hi = lw_num(m, "max_val", 1); break;
	case 1: lo = 0; hi = 6; break;
	case 2: lo = lw_num(m, "min", -INFINITY); hi = lw_num(m, "max", INFINITY); break;
	case 3: lo = lw_num(m, "min", -INFINITY); break;
	case 4: hi = lw_num(m, "max", INFINITY); break;
	}
	Val *x = &m->args[0];
	if (lw_elemwise(m, node, T_CLAMP, 1, &x))
		return -1;
	LibNode *l = m->g->root->kids[m->g->root->nkids - 1]->lib;
	lib_set_float(m->g, l, "lo", lo);
	lib_set_float(m->g, l, "hi", hi);
	return 0;
}

int lower_binary(Imp *m, const cJSON *node)
{
	Val *a = &m->args[0], *b = &m->args[1];
	double alpha = 1;
	for (int i = 0; i < m->info->nargs; i++)
		if (!strcmp(m->info->args[i].name, "alpha"))
			alpha = lw_num(m, "alpha", 1);
	int rsub = !strcmp(m->info->target, "rsub.Scalar");
	Val *ops[2] = {rsub ? b : a, rsub ? a : b};
	if (lw_elemwise(m, node, (TCode)m->info->param, 2, ops))
		return -1;
	LibNode *l = m->g->root->kids[m->g->root->nkids - 1]->lib;
	if (alpha != 1) {
		if (rsub)
			lib_set_float(m->g, l, "alpha", alpha);   /* other - alpha*self: scales operand 1 */
		else
			lib_set_float(m->g, l, "alpha", alpha);
	}
	return 0;
}

int lower_cast(Imp *m, const cJSON *node)
{
	int x = lw_tensor(m, "self");
	const char *on = lw_out_name(node, 0);
	Meta mt;
	if (x < 0 || !on || lw_meta(m, on, &mt) || lw_check_dtype(m, &mt, on))
		return -1;
	if (mt.dt == (int)lw_c(m, x)->dt) {
		Container *s = lw_c(m, x);
		Expr *st[MAXDIM];
		for (int i = 0; i < s->rank; i++)
			st[i] = s->stride[i];
		lw_view(m, on, x, mt.rank, mt.shape, st, s->offset);
		return 0;
	}
	Val *v = &m->args[0];
	return lw_elemwise(m, node, T_CAST, 1, &v);
}

