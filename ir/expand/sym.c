/*
 * sym.c - expansion of the sym family's library node: a run-time
 * assertion (_assert_async) is one block that reads the tensor's one
 * element and fails the run (T_ASSERT, DOCCC_ERR_ASSERT with the node's
 * message) where it is zero. The other ops of the family build no library
 * node: their values are compile-time numbers, expressions of run-time
 * dims, or the library's checks of its dims (guards).
 */
#include "expand.h"

/* ---- run-time assertions --------------------------------------------------------- */

int expand_assert(Sdfg *g, LibNode *l, Node *seq, const char *label, const XpTile *tile)
{
	(void)tile;
	Container *c = sdfg_c(g, l->in[0]);
	Node *b = xp_block(g, seq, label);
	Expr *z[MAXDIM];
	for (int d = 0; d < c->rank; d++)
		z[d] = ex_int(g, 0);
	Operand a[1] = {opd_mem(l->in[0], c->rank, z)};
	int t = sdfg_tasklet(g, b, T_ASSERT, c->dt, 1, a);
	b->ts[t].p[0] = (double)lib_int(l, "msg", 0);
	return 0;
}
