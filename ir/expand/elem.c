/*
 * elem.c - expansion of elementwise library nodes: one map nest over the
 * output, operands read through broadcast memlets, a tasklet chain stored
 * once per element.
 *
 * Type promotion is settled here, following PyTorch: the op computes in its
 * compute dtype (attr "cdt", else the output's dtype), so every tensor
 * operand of another dtype is first converted by a T_CAST tasklet; the op's
 * own tasklet has that dtype, or bool for comparisons (which compute in the
 * promoted type of their operands and produce bool), and a last T_CAST
 * converts to the output's dtype where it differs. Operands that are only
 * tested for truth (logical ops, isnan/isinf, the condition of where) and
 * the operand of a cast are read as they are (signbit's too: a bool of any
 * operand). Python scalars stay constants
 * printed in the compute dtype; for float16/bfloat16 PyTorch rounds them
 * (and zero-dim tensors) to that dtype first, except in mul and div, which
 * keep float precision (opmath_scalar), as lerp keeps its weight.
 */
#include <math.h>
#include <string.h>

#include "expand.h"

static int is_compare(TCode c)
{
	return c >= T_EQ && c <= T_GE;
}

/* Does PyTorch apply a python scalar at float precision to float16 and
 * bfloat16 tensors (mul and the divisions), rather than rounding it to the
 * tensor's dtype first (every other op)? Checked against torch 2.13. */
static int opmath_scalar(TCode c)
{
	return c == T_MUL || c == T_DIV || c == T_DIV_FLOOR || c == T_DIV_TRUNC || c == T_LERP;
}

/* Is operand i used only for its truth value (no promotion)? tdt is the
 * dtype of the op's tasklet: bool for logical ops (cdt bool, set by their
 * lowering, so logical_and_ on float tensors computes in bool too). */
static int raw_operand(TCode c, Dtype tdt, int i)
{
	if (c == T_CAST || c == T_ISNAN || c == T_ISINF || c == T_SIGNBIT)
		return 1;
	if (c == T_WHERE)
		return i == 0;
	return tdt == DT_BOOL && (c == T_AND || c == T_OR || c == T_XOR || c == T_NOT);
}

int expand_elemwise(Sdfg *g, LibNode *l, Node *seq, const char *label, const XpTile *tile)
{
	(void)tile;
	int out = l->out[0];
	Container *o = sdfg_c(g, out);
	int vars[MAXDIM];
	Node *body = xp_nest(g, seq, out, vars);
	Node *b = xp_block(g, body, label);
	TCode code = (TCode)lib_int(l, "code", T_ASSIGN);
	Dtype cdt = (Dtype)lib_int(l, "cdt", o->dt);
	Dtype tdt = is_compare(code) || code == T_ISNAN || code == T_ISINF || code == T_SIGNBIT ? DT_BOOL : cdt;
	if (code == T_CAST)
		tdt = o->dt;
	int reduced = cdt == DT_F16 || cdt == DT_BF16;
	Operand in[3];
	for (int i = 0; i < l->nin; i++) {
		if (l->in[i] >= 0) {
			Container *ic = sdfg_c(g, l->in[i]);
			in[i] = xp_bcast(g, l->in[i], out, vars);
			/* a zero-dim operand is a scalar to PyTorch: same rule as constants */
			Dtype want = reduced && !ic->rank && opmath_scalar(code) ? DT_F32 : cdt;
			if (!raw_operand(code, tdt, i) && ic->dt != cdt && ic->dt != want)
				in[i] = opd_val(sdfg_tasklet(g, b, T_CAST, want, 1, &in[i]));
		} else {
			in[i] = opd_const(lib_float(l, arena_printf(g->arena, "scalar%d", i), 0));
			if (is_compare(code) || (reduced && !opmath_scalar(code)))
				in[i] = opd_val(sdfg_tasklet(g, b, T_CAST, cdt, 1, &in[i]));
		}
	}
	double alpha = lib_float(l, "alpha", 1);
	if (alpha != 1 && l->nin == 2) {
		/* alpha * other is rounded on its own (float16 too), as in PyTorch */
		Operand ab[2] = {in[1], opd_const(alpha)};
		in[1] = opd_val(sdfg_tasklet(g, b, T_MUL, cdt, 2, ab));
	}
	int t = sdfg_tasklet(g, b, code, tdt, tcode_arity(code), in);
	if (code == T_CLAMP) {
		b->ts[t].p[0] = lib_float(l, "lo", -INFINITY);
		b->ts[t].p[1] = lib_float(l, "hi", INFINITY);
	} else {
		b->ts[t].p[0] = lib_float(l, "p0", 0);
		b->ts[t].p[1] = lib_float(l, "p1", 0);
	}
	double scale = lib_float(l, "scale", 1);
	if (scale != 1) {
		Operand sc[2] = {opd_val(t), opd_const(scale)};
		t = sdfg_tasklet(g, b, T_MUL, tdt, 2, sc);
	}
	if (tdt != o->dt) {
		Operand cv = opd_val(t);
		t = sdfg_tasklet(g, b, T_CAST, o->dt, 1, &cv);
	}
	sdfg_store(b, t, xp_memlet(out, o->rank, xp_vars(g, o->rank, vars)), W_NONE);
	return 0;
}
