/*
 * shape.c - expansion of data-movement library nodes: concatenation writes
 * each input into its slice of the output, one map nest per input, all in
 * one top-level subtree; remapped copies (flip, roll, repeat, padding) read
 * the input at a per-dim index expression; arange; gathers and scatters
 * with tensor indices, read and written at bound indices (see below);
 * arg-reductions with scalar accumulators; sort, topk and the picks of
 * sorted rows (kth value, median, mode). Every output element
 * is stored once, except by a scatter's stores at bound indices.
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

/* ---- remapped copies ------------------------------------------------------------------------
 * out[i] = in[j] with, per dim, t = i - ofs and j = t (RK_OFFSET; reads
 * outside the input give `value` when guard is set: constant padding),
 * n-1-i (RK_FLIP), the mirror of t without repeating the edge (RK_REFLECT),
 * t clamped to [0, n) (RK_REPLICATE) or t mod n (RK_CIRCULAR: roll, repeat,
 * circular padding). */

static Expr *ex_abs(Sdfg *g, Expr *e)
{
	return ex_max(g, e, ex_muli(g, e, -1));
}

int expand_remap(Sdfg *g, LibNode *l, Node *seq, const char *label, const XpTile *tile)
{
	(void)tile;
	int in = l->in[0], out = l->out[0];
	Container *x = sdfg_c(g, in), *o = sdfg_c(g, out);
	int64_t kinds[MAXDIM], ofs[MAXDIM];
	lib_ints(l, "kinds", kinds, MAXDIM);
	lib_ints(l, "ofs", ofs, MAXDIM);
	int vars[MAXDIM];
	Node *body = xp_nest(g, seq, out, vars);
	Node *b = xp_block(g, body, label);
	Expr *idx[MAXDIM];
	for (int d = 0; d < o->rank; d++) {
		Expr *i = ex_sym(g, vars[d]), *n = x->shape[d], *nm1 = ex_addi(g, x->shape[d], -1);
		Expr *t = ex_addi(g, i, -ofs[d]);
		switch (kinds[d]) {
		case RK_FLIP: idx[d] = ex_sub(g, nm1, i); break;
		case RK_REFLECT: idx[d] = ex_sub(g, nm1, ex_abs(g, ex_sub(g, nm1, ex_abs(g, t)))); break;
		case RK_REPLICATE: idx[d] = ex_min(g, ex_max(g, t, ex_int(g, 0)), nm1); break;
		case RK_CIRCULAR: idx[d] = ex_mod(g, t, n); break;
		default: idx[d] = t; break;
		}
	}
	Operand a[1] = {lib_int(l, "guard", 0) ? opd_guarded(in, x->rank, idx, lib_float(l, "value", 0))
	                                       : opd_mem(in, x->rank, idx)};
	sdfg_store(b, sdfg_tasklet(g, b, T_ASSIGN, o->dt, 1, a), xp_memlet(out, o->rank, xp_vars(g, o->rank, vars)), W_NONE);
	return 0;
}

/* ---- arange: start + i*step, computed in double (int64 for integer outputs) as torch's CPU kernel --- */

int expand_arange(Sdfg *g, LibNode *l, Node *seq, const char *label, const XpTile *tile)
{
	(void)tile;
	int out = l->out[0];
	Container *o = sdfg_c(g, out);
	int vars[MAXDIM];
	Node *body = xp_nest(g, seq, out, vars);
	Node *b = xp_block(g, body, label);
	Dtype adt = dtype_info[o->dt].isfloat ? DT_F64 : DT_I64;
	Operand a[3] = {opd_expr(ex_sym(g, vars[0])), opd_const(lib_float(l, "step", 1)), opd_const(lib_float(l, "start", 0))};
	int t = sdfg_tasklet(g, b, T_FMA, adt, 3, a);
	Operand v[1] = {opd_val(t)};
	sdfg_store(b, sdfg_tasklet(g, b, T_ASSIGN, o->dt, 1, v), xp_memlet(out, o->rank, xp_vars(g, o->rank, vars)), W_NONE);
	return 0;
}
