/*
 * scan.c - expansion of im2col (unfold); the scans and binary searches
 * that shared this file are in reduce.c.
 */
#include <math.h>

#include "expand.h"

/* ---- im2col (unfold) --------------------------------------------------------------------------------
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
