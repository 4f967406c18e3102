/*
 * more.c - expansion of linspace / logspace, tril / triu and run-time
 * assertions.
 *
 * linspace follows torch's CPU kernel: start and end converted to the
 * output dtype, step = (end - start) / (steps - 1) in the output's float
 * type (double for integer outputs, which truncate at the end), the first
 * half of the elements start + step * i and the second end - step *
 * (steps - 1 - i), so both ends are exact; two loops, one per half, and
 * every float16/bfloat16 tasklet rounds as torch's Half arithmetic does.
 * logspace is base ** that exponent, computed in double from the dtype's
 * start and (end - start) as torch's logspace_out. One step gives start
 * (base ** start, with start unconverted, for logspace).
 *
 * tril / triu keep x where j - i <= diagonal (tril) or j - i >= diagonal
 * (triu) over the last two dims, zeros elsewhere: one map nest with a
 * select on an index expression, no second pass.
 *
 * An assertion is one block that reads its element and fails the run
 * (T_ASSERT) where it is zero.
 */
#include <math.h>
#include <string.h>

#include "expand.h"

/* ---- run-time assertions --------------------------------------------------------------------- */

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
