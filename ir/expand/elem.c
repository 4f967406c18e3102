/*
 * elem.c - expansion of elementwise library nodes: one map nest over the
 * output, operands read through broadcast memlets, a tasklet chain (with
 * alpha scaling for add/sub) stored once per element.
 */
#include <math.h>
#include <string.h>

#include "expand.h"

/* ---- elementwise ------------------------------------------------------------------ */

int expand_elemwise(Sdfg *g, LibNode *l, Node *seq, const char *label, const XpTile *tile)
{
	(void)tile;
	int out = l->out[0];
	Container *o = sdfg_c(g, out);
	int vars[MAXDIM];
	Node *body = xp_nest(g, seq, out, vars);
	Node *b = xp_block(g, body, label);
	Operand in[3];
	for (int i = 0; i < l->nin; i++) {
		if (l->in[i] >= 0)
			in[i] = xp_bcast(g, l->in[i], out, vars);
		else
			in[i] = opd_const(lib_float(l, arena_printf(g->arena, "scalar%d", i), 0));
	}
	TCode code = (TCode)lib_int(l, "code", T_ASSIGN);
	double alpha = lib_float(l, "alpha", 1);
	if (alpha != 1 && l->nin == 2) {
		Operand ab[2] = {in[1], opd_const(alpha)};
		in[1] = opd_val(sdfg_tasklet(g, b, T_MUL, o->dt, 2, ab));
	}
	int t = sdfg_tasklet(g, b, code, o->dt, tcode_arity(code), in);
	if (code == T_CLAMP) {
		b->ts[t].p[0] = lib_float(l, "lo", -INFINITY);
		b->ts[t].p[1] = lib_float(l, "hi", INFINITY);
	}
	sdfg_store(b, t, xp_memlet(out, o->rank, xp_vars(g, o->rank, vars)), W_NONE);
	return 0;
}

