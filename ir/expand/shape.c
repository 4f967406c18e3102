/*
 * shape.c - expansion of the shape family's library nodes: concatenation
 * writes each input into its slice of the output, one map nest per input,
 * all in one top-level subtree; remapped copies (flip, roll, repeat,
 * padding) read the input at a per-dim index expression; arange,
 * linspace / logspace and tril / triu compute each element from its index.
 * Every output element is stored once.
 */
#include <math.h>
#include <string.h>

#include "expand.h"

/* ---- concatenation --------------------------------------------------------------- */

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

/* ---- remapped copies ----------------------------------------------------------------
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

/* ---- arange: start + i*step, computed in double (int64 for integer outputs) as torch's CPU kernel ---- */

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

/* ---- linspace, logspace -------------------------------------------------------------
 * linspace follows torch's CPU kernel: start and end converted to the
 * output dtype, step = (end - start) / (steps - 1) in the output's float
 * type (double for integer outputs, which truncate at the end), the first
 * half of the elements start + step * i and the second end - step *
 * (steps - 1 - i), so both ends are exact; two loops, one per half, and
 * every float16/bfloat16 tasklet rounds as torch's Half arithmetic does.
 * logspace is base ** that exponent, computed in double from the dtype's
 * start and (end - start) as torch's logspace_out. One step gives start
 * (base ** start, with start unconverted, for logspace). */

/* A tasklet value: code of operands a (and b), dtype dt. */
static int tk(Sdfg *g, Node *b, TCode code, Dtype dt, Operand a, Operand c)
{
	Operand in[2] = {a, c};
	return sdfg_tasklet(g, b, code, dt, tcode_arity(code), in);
}

static Operand val(int t)
{
	return opd_val(t);
}

/* Operand for the start or end of a linspace node: input k (a 0-d tensor)
 * or the attribute, converted to dtype dt (torch's Scalar.to<scalar_t>). */
static Operand end_value(Sdfg *g, LibNode *l, Node *b, int k, Dtype dt)
{
	Operand o;
	if (l->in[k] >= 0) {
		Container *c = sdfg_c(g, l->in[k]);
		Expr *z[MAXDIM];
		for (int d = 0; d < c->rank; d++)
			z[d] = ex_int(g, 0);
		o = opd_mem(l->in[k], c->rank, z);
	} else
		o = opd_const(lib_float(l, k ? "end" : "start", 0));
	return val(tk(g, b, T_CAST, dt, o, o));
}

/* The value (or logspace exponent) of element i of one half in block b. */
static int lin_value(Sdfg *g, LibNode *l, Node *b, Expr *i, int second)
{
	Dtype dt = sdfg_c(g, l->out[0])->dt;
	int log = (int)lib_int(l, "log", 0);
	int64_t steps = lib_int(l, "steps", 1);
	Dtype sdt = log || !dtype_info[dt].isfloat ? DT_F64 : dt;    /* torch's step_t */
	Operand s = end_value(g, l, b, 0, dt), e = end_value(g, l, b, 1, dt);
	int diff;
	if (log)
		diff = tk(g, b, T_SUB, dt, e, s);             /* scalar_end - scalar_start in scalar_t */
	else
		diff = tk(g, b, T_SUB, sdt, val(tk(g, b, T_CAST, sdt, e, e)), val(tk(g, b, T_CAST, sdt, s, s)));
	Operand n1 = opd_const((double)(steps - 1));
	if (sdt == DT_F16 || sdt == DT_BF16)
		n1 = val(tk(g, b, T_CAST, sdt, n1, n1));     /* Half / int64_t converts the int first */
	int step = tk(g, b, T_DIV, sdt, val(tk(g, b, T_CAST, sdt, val(diff), val(diff))), n1);
	Expr *k = second ? ex_sub(g, ex_int(g, steps - 1), i) : i;
	int ki = tk(g, b, T_CAST, sdt, opd_expr(k), opd_expr(k));
	int prod = tk(g, b, T_MUL, sdt, val(step), val(ki));
	Operand base = val(tk(g, b, T_CAST, sdt, second ? e : s, second ? e : s));
	return tk(g, b, second ? T_SUB : T_ADD, sdt, base, val(prod));
}

int expand_linspace(Sdfg *g, LibNode *l, Node *seq, const char *label, const XpTile *tile)
{
	(void)tile;
	int out = l->out[0];
	Dtype dt = sdfg_c(g, out)->dt;
	int log = (int)lib_int(l, "log", 0);
	int64_t steps = lib_int(l, "steps", 1), half = steps / 2;
	Operand base = opd_const(lib_float(l, "base", 10));
	if (steps == 1) {
		Node *b = xp_block(g, seq, label);
		Expr *z[1] = {ex_int(g, 0)};
		Operand v = end_value(g, l, b, 0, log ? DT_F64 : dt);
		if (log)
			v = val(tk(g, b, T_POW, DT_F64, base, v));
		sdfg_store(b, tk(g, b, T_CAST, dt, v, v), xp_memlet(out, 1, z), W_NONE);
		return 0;
	}
	for (int second = 0; second < 2; second++) {
		int var;
		Node *lp = xp_loop(g, seq, N_MAP, "i0", ex_int(g, second ? half : 0), ex_int(g, second ? steps : half), 1, &var);
		Node *b = xp_block(g, lp->body, label);
		Expr *i = ex_sym(g, var);
		int v = lin_value(g, l, b, i, second);
		if (log)
			v = tk(g, b, T_POW, DT_F64, base, val(v));
		Expr *ix[1] = {i};
		sdfg_store(b, tk(g, b, T_CAST, dt, val(v), val(v)), xp_memlet(out, 1, ix), W_NONE);
	}
	return 0;
}

/* ---- tril, triu ---------------------------------------------------------------------
 * x where j - i <= diagonal (tril) or j - i >= diagonal (triu) over the
 * last two dims, zeros elsewhere: one map nest with a select on an index
 * expression, no second pass. */

int expand_tri(Sdfg *g, LibNode *l, Node *seq, const char *label, const XpTile *tile)
{
	(void)tile;
	int in = l->in[0], out = l->out[0];
	Container *o = sdfg_c(g, out);
	int vars[MAXDIM], r = o->rank;
	Node *body = xp_nest(g, seq, out, vars);
	Node *b = xp_block(g, body, label);
	int64_t diag = lib_int(l, "diagonal", 0);
	Expr *i = ex_sym(g, vars[r - 2]), *j = ex_sym(g, vars[r - 1]);
	/* keep = 1 where j - i <= diag (tril) or j - i >= diag (triu), else 0 */
	Expr *slack = lib_int(l, "upper", 0) ? ex_addi(g, ex_sub(g, j, i), 1 - diag) : ex_addi(g, ex_sub(g, i, j), diag + 1);
	Expr *keep = ex_min(g, ex_max(g, slack, ex_int(g, 0)), ex_int(g, 1));
	Operand a[3] = {opd_expr(keep), opd_mem(in, r, xp_vars(g, r, vars)), opd_const(0)};
	int t = sdfg_tasklet(g, b, T_WHERE, o->dt, 3, a);
	sdfg_store(b, t, xp_memlet(out, r, xp_vars(g, r, vars)), W_NONE);
	return 0;
}
