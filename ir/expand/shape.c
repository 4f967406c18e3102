/*
 * shape.c - expansion of data-movement library nodes: concatenation writes
 * each input into its slice of the output, one map nest per input, all in
 * one top-level subtree.
 */
#include <math.h>
#include <string.h>

#include "expand.h"

/* ---- concatenation ------------------------------------------------------------------------ */

int expand_cat(Sdfg *g, LibNode *l, Node *seq, const char *label, const XpTile *tile)
{
	(void)tile;
	int out = l->out[0];
	Container *o = sdfg_c(g, out);
	int dim = (int)lib_int(l, "dim", 0);
	Expr *off = ex_int(g, 0);
	for (int i = 0; i < l->nin; i++) {
		int in = l->in[i];
		Container *x = sdfg_c(g, in);
		int vars[MAXDIM];
		Node *body = xp_nest(g, seq, in, vars);
		Node *b = xp_block(g, body, label);
		Expr *idx[MAXDIM];
		for (int d = 0; d < o->rank; d++)
			idx[d] = d == dim ? ex_add(g, ex_sym(g, vars[d]), off) : ex_sym(g, vars[d]);
		Operand a[1] = {opd_mem(in, x->rank, xp_vars(g, x->rank, vars))};
		sdfg_store(b, sdfg_tasklet(g, b, T_ASSIGN, o->dt, 1, a), xp_memlet(out, o->rank, idx), W_NONE);
		off = ex_add(g, off, x->shape[dim]);
	}
	return 0;
}

