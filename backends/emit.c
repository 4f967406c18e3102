/*
 * emit.c - the target-independent walker: from tasklets, blocks and steps
 * of the scheduled SDFG to C statements, for every printer.
 *
 * Every top-level child of the root sequence (an op or a fused group) is a
 * step: a static function NAME_sK taking restrict pointers to the
 * containers it touches (inside one step those are live at the same time
 * and so never share arena memory, which makes restrict true). Steps print
 * with canonical names, so repeated layers share one function and forward
 * calls it with each layer's pointers. Views have no pointer of their
 * own: a memlet on a view addresses its root with the view's offset and
 * strides, folded by the expression simplifier into one index. Local
 * containers are declared at the top of the body of the loop that owns
 * them (an accumulator tile stays in registers once the unrolled code is
 * scalar-replaced by the compiler).
 *
 * Dtypes: a tasklet's value has the C type of its dtype, float for float16
 * and bfloat16, which are stored as raw 16 bits and converted with dc_h2f,
 * dc_f2h, dc_b2f, dc_f2b (round to nearest even, subnormals, inf and NaN as
 * PyTorch; test/ops/test_elem.py checks them bit for bit). Such a value is
 * rounded to its 16-bit precision as soon as it is computed, so a fused
 * chain of ops gives what PyTorch's one-op-at-a-time kernels give. Integer
 * division, remainder and pow go through helpers with PyTorch's semantics
 * (floor division, Python remainder, exponentiation by squaring). A zero
 * integer divisor fails the run with DOCCC_ERR_ZERODIV, as the index
 * checks below do, where PyTorch raises ZeroDivisionError (the helpers
 * still return 0 for it, so nothing traps before the check).
 *
 * Data-dependent indices: a tasklet that binds a value symbol declares it
 * as a const int64_t C variable of that name right after itself, so the
 * memlets after it in its block index with it. A T_INDEX tasklet checks
 * its index first; outside the dim the printer's fail statement stops the
 * run (the CPU: a goto to the end of forward, or a return from a parallel
 * kernel that leaves the status in forward's dc_err; the GPU: the device
 * error flag), and NAME_run returns DOCCC_ERR_INDEX, where PyTorch raises
 * IndexError. So no memlet reads or writes at an unchecked index.
 * A run-time assertion (T_ASSERT, torch._assert_async) fails the run the
 * same way, with DOCCC_ERR_ASSERT + 256 * the number of its message; the
 * run entry points decode that (emit_status_decode): the message goes to
 * NAME_last_error and the caller gets DOCCC_ERR_ASSERT.
 *
 * Loops, kernels and vector code are the printer's (emit.h): the walker
 * calls e->p for every N_MAP and N_FOR and for SCHED_VECTOR operands.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "doccc_model.h"
#include "emit.h"

const char *const emit_storage_type[NDTYPES] = {
	[DT_F32] = "float", [DT_F64] = "double", [DT_F16] = "uint16_t", [DT_BF16] = "uint16_t",
	[DT_I64] = "int64_t", [DT_I32] = "int32_t", [DT_I16] = "int16_t", [DT_I8] = "int8_t",
	[DT_U8] = "uint8_t", [DT_BOOL] = "_Bool",
};

const char *emit_ctype(Dtype d)
{
	return d == DT_F16 || d == DT_BF16 ? "float" : emit_storage_type[d];
}

static int isfloat(Dtype d)
{
	return d == DT_F32 || d == DT_F64 || d == DT_F16 || d == DT_BF16;
}

static void indent(Em *e)
{
	for (int i = 0; i < e->ind; i++)
		buf_puts(e->b, "\t");
}

void emit_line(Em *e, const char *fmt, ...)
{
	va_list ap;
	indent(e);
	va_start(ap, fmt);
	buf_vprintf(e->b, fmt, ap);
	va_end(ap);
	buf_putc(e->b, '\n');
}

const char *emit_comment(Arena *a, const char *s)
{
	Buf c = {0};
	buf_ccomment(&c, s);
	char *r = arena_strdup(a, c.s ? c.s : "");
	buf_free(&c);
	return r;
}

void emit_message(Buf *b, const char *s)
{
	Buf t = {0};
	buf_escape(&t, ESC_TERM, s, s ? strlen(s) : 0);
	buf_cstr(b, t.s ? t.s : "");
	buf_free(&t);
}

void emit_double(Buf *b, double v, Dtype d)
{
	if (isnan(v))
		buf_puts(b, d == DT_F64 ? "NAN" : "NAN");
	else if (isinf(v))
		buf_puts(b, v > 0 ? "INFINITY" : "-INFINITY");
	else if (isfloat(d)) {
		char tmp[64];
		snprintf(tmp, sizeof tmp, d == DT_F64 ? "%.17g" : "%.9g", v);
		buf_puts(b, tmp);
		if (!strpbrk(tmp, ".e"))
			buf_puts(b, ".0");
		if (d != DT_F64)
			buf_puts(b, "f");
	}
	else if (d == DT_BOOL)
		buf_printf(b, "%d", v != 0);
	else
		buf_printf(b, "(%s)%.17g", emit_storage_type[d], v);
}

void emit_expr(Em *e, Buf *b, const Expr *x)
{
	ex_print_names(b, e->g, x, e->sn);
}

const char *emit_expr_str(Em *e, const Expr *x)
{
	Buf b = {0};
	emit_expr(e, &b, x);
	char *s = arena_strdup(e->g->arena, b.s ? b.s : "0");
	buf_free(&b);
	return s;
}

/* Is container c printed as a local (l_NAME) rather than a pointer (v_NAME)? */
static int is_local(Em *e, int c)
{
	return sdfg_c(e->g, c)->kind == CK_LOCAL || c == e->as_local;
}

static void ptr_name(Em *e, Buf *b, int c)
{
	int r = sdfg_root_of(e->g, c);
	buf_printf(b, "%s%s", is_local(e, r) ? "l_" : "v_", e->cn[r]);
}

/* The lvalue of memlet m: "v_x[...]" (or "l_acc" for a scalar local). */
void emit_lvalue(Em *e, Buf *b, const Memlet *m)
{
	Container *c = sdfg_c(e->g, m->data);
	ptr_name(e, b, m->data);
	if (is_local(e, m->data) && c->rank == 0)
		return;
	buf_puts(b, "[");
	emit_expr(e, b, sdfg_flat_index(e->g, m));
	buf_puts(b, "]");
}

/* The distance in elements between lanes of a vector access (0: the same
 * element in every lane, 1: consecutive; anything else the schedule
 * allowed only for a map worth gathers, schedule.c). */
int64_t emit_vec_stride(Em *e, const Memlet *m)
{
	int64_t k;
	return sdfg_lane_step(e->g, m, e->vecvar, &k) ? k : 0;
}

/* the schedule vectorized only constant strides; a stride-0 dim (an
 * expanded view) leaves the address invariant */
int emit_uses_vec(Em *e, const Memlet *m)
{
	int64_t k;
	return e->vecvar >= 0 && (!sdfg_lane_step(e->g, m, e->vecvar, &k) || k != 0);
}

/* The CPU vector type of a SCHED_VECTOR tasklet's value of type dt:
 * float32 lanes, int32 lanes (integer tiles), 8-bit lanes (a quantization
 * stored). */
const char *emit_vtype(Dtype dt)
{
	return dt == DT_I32 ? "dc_vi" : dt == DT_U8 ? "dc_vu8" : dt == DT_I8 ? "dc_vs8" : "dc_vf";
}

void emit_operand(Em *e, Buf *b, const Operand *o, Dtype want)
{
	switch (o->kind) {
	case OPD_CONST:
		if (e->vecvar >= 0)
			e->p->voperand(e, b, o);
		else
			emit_double(b, o->c, want);
		return;
	case OPD_VAL:
		buf_printf(b, "t%d", o->val);
		return;
	case OPD_EXPR:
		buf_printf(b, "((%s)(", emit_ctype(want));
		emit_expr(e, b, o->e);
		buf_puts(b, "))");
		return;
	case OPD_MEM:
		break;
	}
	Container *c = sdfg_c(e->g, o->m.data);
	Dtype dt = c->dt;
	if (e->vecvar >= 0) {
		e->p->voperand(e, b, o);
		return;
	}
	if (o->guard) {
		buf_puts(b, "(");
		int any = 0;
		for (int d = 0; d < c->rank; d++) {
			int64_t v, n;
			if (ex_isint(o->m.idx[d], &v) && ex_isint(c->shape[d], &n) && v >= 0 && v < n)
				continue;
			if (o->m.idx[d]->k == E_SYM && ex_isint(c->shape[d], &n)) {
				const Symbol *sy = &e->g->syms[o->m.idx[d]->v];
				if (sy->kind == SYM_LOOP && sy->lo >= 0 && sy->hi < n)
					continue;
			}
			if (any++)
				buf_puts(b, " && ");
			buf_puts(b, "(uint64_t)(");
			emit_expr(e, b, o->m.idx[d]);
			buf_puts(b, ") < (uint64_t)(");
			emit_expr(e, b, c->shape[d]);
			buf_puts(b, ")");
		}
		if (!any)
			buf_puts(b, "1");
		buf_puts(b, " ? ");
	}
	if (dt == DT_BF16)
		buf_puts(b, "dc_b2f(");
	else if (dt == DT_F16)
		buf_puts(b, "dc_h2f(");
	emit_lvalue(e, b, &o->m);
	if (dt == DT_BF16 || dt == DT_F16)
		buf_puts(b, ")");
	if (o->guard) {
		buf_puts(b, " : ");
		emit_double(b, o->pad, want);
		buf_puts(b, ")");
	}
}

/* Scalar expression of tasklet t into b; operands already formatted. The
 * operands have the tasklet's dtype except for the codes that test truth
 * (logical ops and casts) and comparisons (bool result, operands converted
 * by earlier tasklets to the compute type). Integer variants follow
 * PyTorch's integer kernels (floor division, Python remainder, integer pow,
 * rounding functions as the identity). */
int emit_scalar_expr(Em *e, Buf *b, const Tasklet *t, char *const *a)
{
	Dtype d = t->dt;
	const char *f = d == DT_F64 ? "" : "f"; /* libm suffix */
	const char *T = emit_ctype(d);
	int fl = isfloat(d);
	(void)e;
	switch (t->code) {
	case T_ASSIGN: buf_printf(b, "(%s)(%s)", T, a[0]); break;
	case T_CAST:
		if (d == DT_BOOL)
			buf_printf(b, "(%s) != 0", a[0]);
		else
			buf_printf(b, "(%s)(%s)", T, a[0]);
		break;
	case T_NEG: buf_printf(b, "-(%s)", a[0]); break;
	case T_ABS:
		if (fl)
			buf_printf(b, "fabs%s(%s)", f, a[0]);
		else
			buf_printf(b, "(%s < 0 ? -(%s) : (%s))", a[0], a[0], a[0]);
		break;
	case T_RELU: buf_printf(b, "(%s < 0 ? (%s)0 : %s)", a[0], T, a[0]); break;
	case T_SIGMOID: buf_printf(b, "1 / (1 + exp%s(-(%s)))", f, a[0]); break;
	case T_TANH: buf_printf(b, "tanh%s(%s)", f, a[0]); break;
	case T_EXP: buf_printf(b, "exp%s(%s)", f, a[0]); break;
	case T_LOG: buf_printf(b, "log%s(%s)", f, a[0]); break;
	case T_SQRT: buf_printf(b, "sqrt%s(%s)", f, a[0]); break;
	case T_RSQRT: buf_printf(b, "1 / sqrt%s(%s)", f, a[0]); break;
	case T_ERF: buf_printf(b, "erf%s(%s)", f, a[0]); break;
	case T_RECIP: buf_printf(b, "1 / (%s)", a[0]); break;
	case T_FLOOR: buf_printf(b, fl ? "floor%s(%s)" : "%s(%s)", fl ? f : "", a[0]); break;
	case T_CEIL: buf_printf(b, fl ? "ceil%s(%s)" : "%s(%s)", fl ? f : "", a[0]); break;
	case T_ROUND: buf_printf(b, fl ? "nearbyint%s(%s)" : "%s(%s)", fl ? f : "", a[0]); break;
	case T_TRUNC: buf_printf(b, fl ? "trunc%s(%s)" : "%s(%s)", fl ? f : "", a[0]); break;
	case T_SIN: buf_printf(b, "sin%s(%s)", f, a[0]); break;
	case T_COS: buf_printf(b, "cos%s(%s)", f, a[0]); break;
	case T_TAN: buf_printf(b, "tan%s(%s)", f, a[0]); break;
	case T_ASIN: buf_printf(b, "asin%s(%s)", f, a[0]); break;
	case T_ACOS: buf_printf(b, "acos%s(%s)", f, a[0]); break;
	case T_ATAN: buf_printf(b, "atan%s(%s)", f, a[0]); break;
	case T_SINH: buf_printf(b, "sinh%s(%s)", f, a[0]); break;
	case T_COSH: buf_printf(b, "cosh%s(%s)", f, a[0]); break;
	case T_ASINH: buf_printf(b, "asinh%s(%s)", f, a[0]); break;
	case T_ACOSH: buf_printf(b, "acosh%s(%s)", f, a[0]); break;
	case T_ATANH: buf_printf(b, "atanh%s(%s)", f, a[0]); break;
	case T_EXPM1: buf_printf(b, "expm1%s(%s)", f, a[0]); break;
	case T_LOG1P: buf_printf(b, "log1p%s(%s)", f, a[0]); break;
	case T_LOG2: buf_printf(b, "log2%s(%s)", f, a[0]); break;
	case T_LOG10: buf_printf(b, "log10%s(%s)", f, a[0]); break;
	case T_ATAN2: buf_printf(b, "atan2%s(%s, %s)", f, a[0], a[1]); break;
	case T_NOT: buf_printf(b, d == DT_BOOL ? "!(%s)" : "~(%s)", a[0]); break;
	case T_GELU: buf_printf(b, "0.5%s * (%s) * (1 + erf%s((%s) * 0.70710678118654752440))", f, a[0], f, a[0]); break;
	case T_GELU_TANH:
		buf_printf(b, "0.5%s * (%s) * (1 + tanh%s(0.79788456080286535588 * ((%s) + 0.044715 * (%s) * (%s) * (%s))))", f, a[0],
		           f, a[0], a[0], a[0], a[0]);
		break;
	case T_SILU: buf_printf(b, "(%s) / (1 + exp%s(-(%s)))", a[0], f, a[0]); break;
	case T_MISH: buf_printf(b, "(%s) * tanh%s(log1p%s(exp%s(%s)))", a[0], f, f, f, a[0]); break;
	case T_HARDSIGMOID: buf_printf(b, "dc_clamp%s((%s) + 3, 0, 6) / 6", f, a[0]); break;
	case T_HARDSWISH: buf_printf(b, "(%s) * dc_clamp%s((%s) + 3, 0, 6) / 6", a[0], f, a[0]); break;
	case T_SOFTPLUS:
	case T_ELU:
	case T_LEAKY_RELU: {
		Buf p0 = {0}, p1 = {0};
		emit_double(&p0, t->p[0], d);
		emit_double(&p1, t->p[1], d);
		if (t->code == T_SOFTPLUS)
			buf_printf(b, "((%s) * %s > %s ? (%s) : log1p%s(exp%s((%s) * %s)) / %s)", a[0], p0.s, p1.s, a[0], f, f, a[0], p0.s, p0.s);
		else if (t->code == T_ELU)
			buf_printf(b, "((%s) <= 0 ? expm1%s((%s) * %s) * %s : (%s))", a[0], f, a[0], p1.s, p0.s, a[0]);
		else
			buf_printf(b, "((%s) > 0 ? (%s) : (%s) * %s)", a[0], a[0], a[0], p0.s);
		buf_free(&p0);
		buf_free(&p1);
		break;
	}
	case T_SIGN:
		if (d == DT_BOOL)
			buf_printf(b, "(%s)", a[0]);
		else
			buf_printf(b, "(%s)((0 < (%s)) - ((%s) < 0))", T, a[0], a[0]);
		break;
	case T_ISNAN: buf_printf(b, "(%s) != (%s)", a[0], a[0]); break;
	case T_ISINF: buf_printf(b, "isinf((double)(%s))", a[0]); break;
	case T_ADD: buf_printf(b, "%s + %s", a[0], a[1]); break;
	case T_SUB: buf_printf(b, "%s - %s", a[0], a[1]); break;
	case T_MUL: buf_printf(b, "%s * %s", a[0], a[1]); break;
	case T_DIV: buf_printf(b, "(%s)%s / (%s)%s", T, a[0], T, a[1]); break;
	case T_DIV_TRUNC: buf_printf(b, fl ? "trunc%s((%s) / (%s))" : "dc_divti(%s%s, %s)", fl ? f : "", a[0], a[1]); break;
	case T_DIV_FLOOR: buf_printf(b, "dc_floordiv%s(%s, %s)", fl ? f : "i", a[0], a[1]); break;
	case T_MAX: buf_printf(b, fl ? "dc_max%s(%s, %s)" : "dc_maxi(%s%s, %s)", fl ? f : "", a[0], a[1]); break;
	case T_MIN: buf_printf(b, fl ? "dc_min%s(%s, %s)" : "dc_mini(%s%s, %s)", fl ? f : "", a[0], a[1]); break;
	case T_POW: buf_printf(b, fl ? "pow%s(%s, %s)" : "dc_pow%si(%s, %s)", fl ? f : "", a[0], a[1]); break;
	case T_FMOD: buf_printf(b, fl ? "fmod%s(%s, %s)" : "dc_fmodi(%s%s, %s)", fl ? f : "", a[0], a[1]); break;
	case T_REM: buf_printf(b, fl ? "dc_rem%s(%s, %s)" : "dc_remi(%s%s, %s)", fl ? f : "", a[0], a[1]); break;
	case T_EQ: buf_printf(b, "%s == %s", a[0], a[1]); break;
	case T_NE: buf_printf(b, "%s != %s", a[0], a[1]); break;
	case T_LT: buf_printf(b, "%s < %s", a[0], a[1]); break;
	case T_LE: buf_printf(b, "%s <= %s", a[0], a[1]); break;
	case T_GT: buf_printf(b, "%s > %s", a[0], a[1]); break;
	case T_GE: buf_printf(b, "%s >= %s", a[0], a[1]); break;
	case T_AND: buf_printf(b, d == DT_BOOL ? "(%s) && (%s)" : "(%s) & (%s)", a[0], a[1]); break;
	case T_OR: buf_printf(b, d == DT_BOOL ? "(%s) || (%s)" : "(%s) | (%s)", a[0], a[1]); break;
	case T_XOR: buf_printf(b, d == DT_BOOL ? "(!(%s)) != (!(%s))" : "(%s) ^ (%s)", a[0], a[1]); break;
	case T_FMA:
		/* one rounding on every target, also without FMA instructions (-t none) */
		if (fl)
			buf_printf(b, "fma%s(%s, %s, %s)", f, a[0], a[1], a[2]);
		else
			buf_printf(b, "%s * %s + %s", a[0], a[1], a[2]);
		break;
	case T_WHERE: buf_printf(b, "(%s) ? (%s) : (%s)", a[0], a[1], a[2]); break;
	case T_DOT2: /* int32 halves: arithmetic shifts (clang, nvcc, hipcc) */
		buf_printf(b, "(int32_t)(int16_t)(%s) * (int16_t)(%s) + ((int32_t)(%s) >> 16) * ((int32_t)(%s) >> 16)", a[0], a[1], a[0],
		           a[1]);
		break;
	case T_PACK2: buf_printf(b, "(int32_t)((uint32_t)(uint16_t)(%s) | (uint32_t)(%s) << 16)", a[0], a[1]); break;
	case T_DOT4: buf_printf(b, "dc_dot4(%s, %s)", a[0], a[1]); break;
	case T_FMAX: buf_printf(b, fl ? "fmax%s(%s, %s)" : "dc_maxi(%s%s, %s)", fl ? f : "", a[0], a[1]); break;
	case T_FMIN: buf_printf(b, fl ? "fmin%s(%s, %s)" : "dc_mini(%s%s, %s)", fl ? f : "", a[0], a[1]); break;
	case T_ERFINV: buf_printf(b, "dc_erfinv%s(%s)", f, a[0]); break;
	case T_FRAC: buf_printf(b, fl ? "(%s) - trunc%s(%s)" : "(%s) - (%s%s)", a[0], fl ? f : "", a[0]); break;
	case T_ROUND_DEC: {
		/* torch: nearbyint(a * 10^d) / 10^d, for d < 0 nearbyint(a / 10^-d) * 10^-d,
		 * with 10^|d| in the compute type */
		int dec = (int)t->p[0];
		Buf p = {0};
		emit_double(&p, pow(10, dec < 0 ? -dec : dec), d == DT_F64 ? DT_F64 : DT_F32);
		if (!fl)
			buf_printf(b, "(%s)", a[0]);
		else
			buf_printf(b, dec < 0 ? "nearbyint%s((%s) / %s) * %s" : "nearbyint%s((%s) * %s) / %s", f, a[0], p.s, p.s);
		buf_free(&p);
		break;
	}
	case T_NAN_TO_NUM: {
		Buf hi = {0}, lo = {0};
		emit_double(&hi, t->p[0], d);
		emit_double(&lo, t->p[1], d);
		if (!fl)
			buf_printf(b, "(%s)", a[0]);
		else
			buf_printf(b, "((%s) != (%s) ? (%s) : (%s) == INFINITY ? %s : (%s) == -INFINITY ? %s : (%s))", a[0], a[0], a[1], a[0],
			           hi.s, a[0], lo.s, a[0]);
		buf_free(&hi);
		buf_free(&lo);
		break;
	}
	case T_GLU: buf_printf(b, "(%s) * (1 / (1 + exp%s(-(%s))))", a[0], f, a[1]); break;
	case T_LERP:
		/* torch's lerp: from the nearer end, so that weight 1 gives b exactly */
		buf_printf(b, "((%s) < 0.5%s && (%s) > -0.5%s ? (%s) + (%s) * ((%s) - (%s)) : (%s) - ((%s) - (%s)) * (1 - (%s)))", a[2],
		           fl ? f : "", a[2], fl ? f : "", a[0], a[2], a[1], a[0], a[1], a[1], a[0], a[2]);
		break;
	case T_XLOGY:
		buf_printf(b, "((%s) != (%s) ? (%s)NAN : (%s) == 0 ? (%s)0 : (%s) * log%s(%s))", a[1], a[1], T, a[0], T, a[0], f, a[1]);
		break;
	case T_EXP2: buf_printf(b, "exp2%s(%s)", f, a[0]); break;
	case T_ERFC: buf_printf(b, "erfc%s(%s)", f, a[0]); break;
	case T_LGAMMA: buf_printf(b, "dc_lgamma%s(%s)", f, a[0]); break;
	case T_DIGAMMA: buf_printf(b, "dc_digamma%s(%s)", f, a[0]); break;
	case T_POLYGAMMA: buf_printf(b, "dc_polygamma%s(%d, %s)", f, (int)t->p[0], a[0]); break;
	case T_I0: case T_I0E: case T_I1: case T_I1E:
		buf_printf(b, "dc_bessel_i%s(%d, %s, %d)", f, t->code == T_I1 || t->code == T_I1E, a[0], t->code == T_I0E || t->code == T_I1E);
		break;
	case T_ERFCX: buf_printf(b, "dc_erfcx%s(%s)", f, a[0]); break;
	case T_NDTRI: buf_printf(b, "dc_ndtri%s(%s)", f, a[0]); break;
	case T_SIGNBIT: buf_printf(b, "signbit((double)(%s))", a[0]); break;
	case T_ZETA: buf_printf(b, "dc_zeta%s(%s, %s)", f, a[0], a[1]); break;
	case T_HYPOT: buf_printf(b, "hypot%s(%s, %s)", f, a[0], a[1]); break;
	case T_COPYSIGN: buf_printf(b, "copysign%s(%s, %s)", f, a[0], a[1]); break;
	case T_LDEXP:
		/* in double and rounded once: exact, as torch's, down to the subnormals */
		buf_printf(b, d == DT_F64 ? "dc_ldexp(%s, %s)" : "(float)dc_ldexp(%s, %s)", a[0], a[1]);
		break;
	case T_NEXTAFTER:
		if (d == DT_F16 || d == DT_BF16)
			buf_printf(b, "dc_nextafter16(%s, %s, %d)", a[0], a[1], d == DT_BF16);
		else
			buf_printf(b, "nextafter%s(%s, %s)", f, a[0], a[1]);
		break;
	case T_GCD: buf_printf(b, "dc_gcdi(%s, %s)", a[0], a[1]); break;
	case T_LCM: buf_printf(b, "dc_lcmi(%s, %s)", a[0], a[1]); break;
	case T_SHL: buf_printf(b, "dc_shli(%s, %s)", a[0], a[1]); break;
	case T_SHR: buf_printf(b, "dc_shri(%s, %s)", a[0], a[1]); break;
	case T_CLAMP: {
		/* min(max(a, lo), hi) as PyTorch: lo > hi gives hi, NaN stays NaN;
		 * an absent (infinite) bound is left out, so integers stay exact */
		Buf lo = {0}, hi = {0}, x = {0};
		emit_double(&lo, t->p[0], d);
		emit_double(&hi, t->p[1], d);
		buf_printf(&x, "(%s)", a[0]);
		if (!(isinf(t->p[0]) && t->p[0] < 0)) {
			Buf y = {0};
			buf_printf(&y, "(%s < %s ? %s : %s)", x.s, lo.s, lo.s, x.s);
			buf_free(&x);
			x = y;
		}
		if (!(isinf(t->p[1]) && t->p[1] > 0)) {
			Buf y = {0};
			buf_printf(&y, "(%s > %s ? %s : %s)", x.s, hi.s, hi.s, x.s);
			buf_free(&x);
			x = y;
		}
		buf_puts(b, x.s);
		buf_free(&lo);
		buf_free(&hi);
		buf_free(&x);
		break;
	}
	default:
		return 0;
	}
	return 1;
}

/* Integer division and remainder, whose zero divisor fails the run. */
static int is_int_div(const Tasklet *t)
{
	switch (t->code) {
	case T_DIV: case T_DIV_TRUNC: case T_DIV_FLOOR: case T_REM: case T_FMOD:
		return !dtype_info[t->dt].isfloat && t->dt != DT_BOOL;
	default:
		return 0;
	}
}

/* T_ASSERT: a zero a[0] fails the run with DOCCC_ERR_ASSERT; the message's
 * number rides above the status's low byte (emit_status_decode). */
static void emit_assert(Em *e, const Node *n, int i, char *const *a)
{
	const Tasklet *t = &n->ts[i];
	const char *op = e->top && *e->top ? e->top : n->label && *n->label ? n->label : "?";
	char *code = arena_printf(e->g->arena, "DOCCC_ERR_ASSERT + 256 * %d", (int)t->p[0]);
	emit_line(e, "if (!(%s)) %s /* run-time assertion of '%s' */", a[0], e->p->fail(e, code), emit_comment(e->g->arena, op));
}

/* T_INDEX: the index a[0] wrapped once (p[0]) and checked against the size
 * a[1]; nothing after it runs with an index outside [0, size). */
static void emit_index(Em *e, const Node *n, int i, char *const *a)
{
	const Tasklet *t = &n->ts[i];
	const char *op = e->top && *e->top ? e->top : n->label && *n->label ? n->label : "?";
	emit_line(e, "int64_t t%d = (int64_t)(%s);", i, a[0]);
	if (t->p[0] != 0)
		emit_line(e, "if (t%d < 0) t%d += %s;", i, i, a[1]);
	emit_line(e, "if ((uint64_t)t%d >= (uint64_t)%s) %s /* index out of range in '%s' */", i, a[1], e->p->fail(e, "DOCCC_ERR_INDEX"),
	     emit_comment(e->g->arena, op));
}

/* In a masked tail: out += v over the lanes left (a masked load, the sum,
 * a masked store). */
static void emit_masked_sum(Em *e, const Memlet *out, const char *v)
{
	Buf lv = {0};
	emit_lvalue(e, &lv, out);
	emit_line(e, "dc_vstore_n(&%s, dc_vload_n(&%s, %s) + (%s), %s);", lv.s, lv.s, e->vrem, v, e->vrem);
	buf_free(&lv);
}

void emit_block(Em *e, Node *n)
{
	Sdfg *g = e->g;
	for (int i = 0; i < n->nts; i++) {
		Tasklet *t = &n->ts[i];
		/* an index stays scalar in a vector body: the schedule made sure
		 * it is the same in every lane */
		int scalar = t->code == T_INDEX || t->bind >= 0;
		int vec = e->vecvar >= 0 && !scalar;
		int saved = e->vecvar;
		if (scalar)
			e->vecvar = -1;
		Buf ops[3] = {{0}, {0}, {0}};
		char *a[3] = {"", "", ""};
		e->vdt = t->dt;
		for (int k = 0; k < t->nin; k++) {
			emit_operand(e, &ops[k], &t->in[k], t->dt);
			a[k] = ops[k].s;
		}
		e->vecvar = saved;
		Buf ex = {0};
		if (is_int_div(t))
			emit_line(e, "if ((%s) == 0) %s /* integer division by zero in '%s' */", a[1], e->p->fail(e, "DOCCC_ERR_ZERODIV"),
			     emit_comment(e->g->arena, e->top && *e->top ? e->top : n->label && *n->label ? n->label : "?"));
		if (t->code == T_INDEX)
			emit_index(e, n, i, a);
		else if (t->code == T_ASSERT) {
			emit_assert(e, n, i, a);
			for (int k = 0; k < 3; k++)
				buf_free(&ops[k]);
			continue;
		} else if (vec)
			DOCC_ASSERT(e->p->vexpr(e, &ex, t, a));
		else
			DOCC_ASSERT(emit_scalar_expr(e, &ex, t, a));
		Buf dot4 = {0}; /* a vector T_DOT4's operands: vpdpbusd adds to its first one */
		if (vec && t->code == T_DOT4)
			buf_printf(&dot4, "%s, %s", a[0], a[1]);
		for (int k = 0; k < 3; k++)
			buf_free(&ops[k]);
		Container *dc = t->store ? sdfg_c(g, t->out.data) : NULL;
		/* An accumulation whose value nothing else reads is one statement,
		 * "acc += a * b", so the C compiler may contract it into an FMA. */
		int used = 0;
		for (int j = i + 1; j < n->nts && !used; j++)
			for (int k = 0; k < n->ts[j].nin; k++)
				used |= n->ts[j].in[k].kind == OPD_VAL && n->ts[j].in[k].val == i;
		if (t->code != T_INDEX && t->bind < 0 && t->store && t->wcr == W_SUM && !used && (vec || dc->dt == t->dt)) {
			Buf lv = {0};
			if (vec && e->vrem) {
				emit_masked_sum(e, &t->out, ex.s);
				buf_free(&ex);
				buf_free(&dot4);
				continue;
			}
			if (vec) {
				buf_printf(&lv, "*(%s *)&", e->p->vcast(e, &t->out));
			}
			emit_lvalue(e, &lv, &t->out);
			if (dot4.s)
				emit_line(e, "%s = dc_vdot4acc(%s, %s);", lv.s, lv.s, dot4.s);
			else
				emit_line(e, "%s += %s;", lv.s, ex.s);
			buf_free(&lv);
			buf_free(&ex);
			buf_free(&dot4);
			continue;
		}
		buf_free(&dot4);
		/* float16/bfloat16 compute in float, but each op rounds its result
		 * to the storage precision, as PyTorch does, also inside fused maps */
		if (t->code == T_INDEX)
			;
		else if (!vec && (t->dt == DT_F16 || t->dt == DT_BF16) && !(t->store && t->wcr != W_NONE))
			emit_line(e, "float t%d = %s(%s(%s));", i, t->dt == DT_F16 ? "dc_h2f" : "dc_b2f", t->dt == DT_F16 ? "dc_f2h" : "dc_f2b", ex.s);
		else
			emit_line(e, "%s%s t%d = %s;", vec ? "const " : "", vec ? emit_vtype(t->dt) : emit_ctype(t->dt), i, ex.s);
		buf_free(&ex);
		if (t->bind >= 0)
			emit_line(e, "%s%s = t%d;", e->esc[t->bind] ? "" : "const int64_t ", e->sn[t->bind], i);
		if (!t->store)
			continue;
		Buf lv = {0};
		if (vec && emit_vec_stride(e, &t->out) != 1) {
			/* a scattered store (schedule.c: W_NONE only) */
			buf_puts(&lv, "&");
			emit_lvalue(e, &lv, &t->out);
			if (e->vrem) /* float32 (emit_cpu.c: masked_ok) */
				emit_line(e, "dc_vscatter_n(%s, %lld, t%d, %s);", lv.s, (long long)emit_vec_stride(e, &t->out), i, e->vrem);
			else
				emit_line(e, "dc_vscatter%s(%s, %lld, t%d);", dc->dt == DT_U8 ? "u8" : dc->dt == DT_I8 ? "s8" : "", lv.s,
				          (long long)emit_vec_stride(e, &t->out), i);
			buf_free(&lv);
			continue;
		}
		if (vec && e->vrem) { /* W_NONE or W_SUM, unit-stride (emit_cpu.c: masked_ok) */
			const char *v = arena_printf(g->arena, "t%d", i);
			if (t->wcr == W_SUM)
				emit_masked_sum(e, &t->out, v);
			else {
				emit_lvalue(e, &lv, &t->out);
				emit_line(e, "dc_vstore_n(&%s, %s, %s);", lv.s, v, e->vrem);
				buf_free(&lv);
			}
			continue;
		}
		if (vec) {
			buf_printf(&lv, "*(%s *)&", e->p->vcast(e, &t->out));
		}
		emit_lvalue(e, &lv, &t->out);
		const char *conv = dc->dt == DT_BF16 ? "dc_f2b" : dc->dt == DT_F16 ? "dc_f2h" : "";
		switch (t->wcr) {
		case W_NONE:
			if (*conv)
				emit_line(e, "%s = %s(t%d);", lv.s, conv, i);
			else if (dc->dt != t->dt && !vec)
				emit_line(e, "%s = (%s)t%d;", lv.s, emit_storage_type[dc->dt], i);
			else
				emit_line(e, "%s = t%d;", lv.s, i);
			break;
		case W_SUM:
			emit_line(e, "%s += t%d;", lv.s, i);
			break;
		case W_PROD:
			emit_line(e, "%s *= t%d;", lv.s, i);
			break;
		case W_MAX:
		case W_MIN:
			if (vec)
				emit_line(e, "%s = dc_v%s(%s, t%d);", lv.s, t->wcr == W_MAX ? "max" : "min", lv.s, i);
			else
				emit_line(e, "%s = dc_%s%s(%s, t%d);", lv.s, t->wcr == W_MAX ? "max" : "min", isfloat(dc->dt) ? (dc->dt == DT_F64 ? "" : "f") : "i", lv.s, i);
			break;
		}
		buf_free(&lv);
	}
}

void emit_locals(Em *e, Node *loop)
{
	Sdfg *g = e->g;
	for (int i = 0; i < g->ncs; i++) {
		Container *c = &g->cs[i];
		if (c->kind != CK_LOCAL || c->dead || c->owner != loop->id)
			continue;
		if (c->rank == 0)
			emit_line(e, "%s l_%s;", emit_storage_type[c->dt], e->cn[i]);
		else
			emit_line(e, "%s l_%s[%lld] __attribute__((aligned(64)));", emit_storage_type[c->dt], e->cn[i], (long long)sdfg_numel(g, i));
	}
}


/* Does subtree n check an index (a T_INDEX tasklet) or an integer divisor,
 * so that it can fail? */
int emit_has_check(const Node *n)
{
	switch (n->kind) {
	case N_SEQ:
		for (int i = 0; i < n->nkids; i++)
			if (emit_has_check(n->kids[i]))
				return 1;
		return 0;
	case N_MAP:
	case N_FOR:
		return emit_has_check(n->body);
	case N_BLOCK:
		for (int i = 0; i < n->nts && !n->lib; i++)
			if (n->ts[i].code == T_INDEX || n->ts[i].code == T_ASSERT || is_int_div(&n->ts[i]))
				return 1;
		return 0;
	}
	return 0;
}

void emit_node(Em *e, Node *n)
{
	switch (n->kind) {
	case N_SEQ:
		for (int i = 0; i < n->nkids; i++) {
			/* a value the later children use is declared outside its block */
			Node *k = n->kids[i];
			for (int t = 0; k->kind == N_BLOCK && !k->lib && t < k->nts; t++)
				if (k->ts[t].bind >= 0 && e->esc[k->ts[t].bind])
					emit_line(e, "int64_t %s;", e->sn[k->ts[t].bind]);
			emit_node(e, k);
		}
		break;
	case N_MAP:
	case N_FOR:
		e->p->loop(e, n);
		break;
	case N_BLOCK:
		DOCC_ASSERT(!n->lib);
		if (e->p->block) {
			e->p->block(e, n);
			break;
		}
		emit_line(e, "{");
		e->ind++;
		emit_block(e, n);
		e->ind--;
		emit_line(e, "}");
		break;
	}
}

/* Root containers touched by subtree n (bitmap indexed by id). */
void emit_touched(Sdfg *g, Node *n, unsigned char *set)
{
	switch (n->kind) {
	case N_SEQ:
		for (int i = 0; i < n->nkids; i++)
			emit_touched(g, n->kids[i], set);
		break;
	case N_MAP:
	case N_FOR:
		emit_touched(g, n->body, set);
		break;
	case N_BLOCK:
		for (int i = 0; i < n->nts; i++) {
			Tasklet *t = &n->ts[i];
			for (int k = 0; k < t->nin; k++)
				if (t->in[k].kind == OPD_MEM)
					set[sdfg_root_of(g, t->in[k].m.data)] = 1;
			if (t->store)
				set[sdfg_root_of(g, t->out.data)] = 2 | set[sdfg_root_of(g, t->out.data)];
		}
		break;
	}
}


/* Symbols of the loops and bound values in subtree n, in order of appearance. */
static void subtree_syms(Sdfg *g, Node *n, int *syms, int *nsyms)
{
	switch (n->kind) {
	case N_SEQ:
		for (int i = 0; i < n->nkids; i++)
			subtree_syms(g, n->kids[i], syms, nsyms);
		break;
	case N_MAP:
	case N_FOR:
		syms[(*nsyms)++] = n->var;
		subtree_syms(g, n->body, syms, nsyms);
		break;
	case N_BLOCK:
		for (int i = 0; i < n->nts && !n->lib; i++)
			if (n->ts[i].bind >= 0)
				syms[(*nsyms)++] = n->ts[i].bind;
		break;
	}
}

void emit_replace_all(Buf *out, const char *s, const char *from, const char *to)
{
	size_t fl = strlen(from);
	for (const char *p; (p = strstr(s, from)); s = p + fl) {
		buf_printf(out, "%.*s", (int)(p - s), s);
		buf_puts(out, to);
	}
	buf_puts(out, s);
}

/* A top-level step (one child of the root: an op or a fused group) as a
 * static function of its containers' pointers, called from forward.
 * Containers, loop variables and locals get canonical names while the step
 * is printed, so the steps of repeated layers print the same text; one
 * function then serves all of them (a transformer's 12 blocks compile as
 * one), which keeps the C file, the compile time and the code size small. */
int emit_readonly(const Container *c)
{
	return (c->kind == CK_INPUT && !c->written) || c->kind == CK_CONST;
}

const char *emit_step(Em *e, Node *k, const unsigned char *set)
{
	Sdfg *g = e->g;
	/* canonical names in the printer's tables while the step prints; the
	 * entries it changes (the containers it touches, the symbols of its
	 * loops and bound values) saved to restore, nothing else copied */
	int nset = 0, nsyms = 0;
	for (int c = 0; c < g->ncs; c++)
		nset += set[c] != 0;
	int *cs = malloc(sizeof(int) * (size_t)(nset + 1)), *syms = malloc(sizeof(int) * (size_t)(g->nsyms + 1));
	const char **scn = malloc(sizeof(char *) * (size_t)(nset + 1));
	DOCC_ASSERT(cs && syms && scn);
	Buf params = {0}, args = {0};
	int np = 0, nl = 0;
	nset = 0;
	for (int c = 0; c < g->ncs; c++) {
		Container *ct = &g->cs[c];
		if (!set[c])
			continue;
		cs[nset] = c, scn[nset++] = e->cn[c];
		if (ct->kind == CK_LOCAL) {
			e->cn[c] = arena_printf(g->arena, "%d", nl++);
			continue;
		}
		const char *T = emit_storage_type[ct->dt];
		int ro = emit_readonly(ct);
		e->cn[c] = arena_printf(g->arena, "%d", np++);
		buf_printf(&params, "%s%s *restrict v_%s, ", ro ? "const " : "", T, e->cn[c]);
		switch (ct->kind) {
		case CK_STATE: buf_printf(&args, "(%s *)(dc_st + %lld), ", T, (long long)ct->sofs); break;
		case CK_INPUT: buf_printf(&args, "(%s%s *)dc_in[%d], ", ro ? "const " : "", T, ct->io); break;
		case CK_OUTPUT: buf_printf(&args, "(%s *)dc_out[%d], ", T, ct->io); break;
		case CK_CONST: buf_printf(&args, "(const %s *)(dc_W + %lld), ", T, (long long)ct->wofs); break;
		case CK_TRANSIENT:
			DOCC_ASSERT(ct->aofs >= 0 || ct->aofs == -2);
			if (ct->aofs == -2) /* a slot whose offset depends on the run-time dims */
				buf_printf(&args, "(%s *)(dc_ws + dc_ofs[%d]), ", T, ct->aslot);
			else
				buf_printf(&args, "(%s *)(dc_ws + %lld), ", T, (long long)ct->aofs);
			break;
		default: DOCC_UNREACHABLE();
		}
	}
	for (int d = 0; d < g->ndims; d++) { /* the run-time dims, by their canonical names */
		buf_printf(&params, "const int64_t dc_d%d, ", d);
		buf_printf(&args, "dc_d%d, ", d);
	}
	subtree_syms(g, k, syms, &nsyms);
	const char **ssn = malloc(sizeof(char *) * (size_t)(nsyms + 1));
	DOCC_ASSERT(ssn);
	for (int i = 0; i < nsyms; i++) {
		ssn[i] = e->sn[syms[i]];
		e->sn[syms[i]] = arena_printf(g->arena, "%s%d", g->syms[syms[i]].kind == SYM_LOOP ? "i" : "x", i);
	}
	/* the body, with kernels of its own named after a placeholder */
	int check = emit_has_check(k);
	Buf body = {0}, kern = {0};
	Buf *sb = e->b, *sk = e->kern;
	int sind = e->ind, snk = e->nkern;
	const char *snm = e->nm, *stop = e->top;
	e->b = &body, e->kern = &kern, e->ind = 1, e->nkern = 0, e->nm = "@F@", e->top = "this step";
	e->p->step_begin(e, check);
	emit_dims_assume(e);
	emit_node(e, k);
	if (e->p->step_end)
		e->p->step_end(e, &body, check);
	e->b = sb, e->kern = sk, e->ind = sind, e->nkern = snk, e->nm = snm, e->top = stop;
	for (int i = 0; i < nset; i++)
		e->cn[cs[i]] = scn[i];
	for (int i = 0; i < nsyms; i++)
		e->sn[syms[i]] = ssn[i];
	free(cs), free(scn), free(syms), free(ssn);
	/* the same text as an earlier step: call that function */
	char *text = arena_printf(g->arena, "%s\n@F@(%s%s)\n{\n%s}\n", check && e->p->step_status ? "static int" : "static void", params.len ? params.s : "",
	                          e->p->step_params, body.s ? body.s : "");
	if (kern.len)
		text = arena_printf(g->arena, "%s%s", kern.s, text);
	int fid = -1;
	for (int i = 0; i < e->nfuncs && fid < 0; i++)
		if (!strcmp(e->funcs[i], text))
			fid = i;
	if (fid < 0) {
		fid = e->nfuncs;
		VEC_PUSH(g->arena, e->funcs, e->nfuncs, e->capfuncs, text);
		emit_replace_all(e->kern, text, "@F@", arena_printf(g->arena, "%s_s%d", e->nm, fid));
		buf_puts(e->kern, "\n");
	}
	if (check && e->p->step_status)
		emit_line(e, "if ((dc_err = %s_s%d(%s%s)) != DOCCC_OK) goto dc_fail;", e->nm, fid, args.len ? args.s : "",
		          e->p->step_args);
	else
		emit_line(e, "%s_s%d(%s%s);", e->nm, fid, args.len ? args.s : "", e->p->step_args);
	buf_free(&params);
	buf_free(&args);
	buf_free(&body);
	buf_free(&kern);
	return arena_printf(g->arena, "%s_s%d", e->nm, fid);
}

/* NAME_strerror: the text of every status. */
void emit_strerror(Em *e)
{
	buf_printf(e->b, "const char *%s_strerror(int status)\n{\n\tswitch (status) {\n\tcase DOCCC_OK: return \"success\";\n"
	              "\tcase DOCCC_ERR_NOMEM: return \"out of memory allocating the workspace\";\n"
	              "\tcase DOCCC_ERR_WEIGHTS: return \"weights file missing, unreadable or not made for this library\";\n"
	              "\tcase DOCCC_ERR_ARG: return \"a NULL model, input or output pointer\";\n"
	              "\tcase DOCCC_ERR_THREADS: return \"thread count not supported by this build (only openmp builds use threads)\";\n"
	              "\tcase DOCCC_ERR_INDEX: return \"index out of range: an index tensor holds an index outside the dimension it indexes\";\n"
	              "\tcase DOCCC_ERR_ZERODIV: return \"integer division by zero\";\n"
	              "\tcase DOCCC_ERR_DEVICE: return \"GPU runtime error, or a pointer on the wrong side (host memory to a device run, "
	              "GPU memory to a host library); %s_last_error() has the details\";\n"
	              "\tcase DOCCC_ERR_ASSERT: return \"a run-time assertion of the model failed (torch._assert_async); "
	              "%s_last_error() has its message\";\n"
	              "\tcase DOCCC_ERR_SHAPE: return \"the run-time dims are outside the export's ranges or guards, or the inputs' sizes "
	              "disagree, or none were set; %s_last_error() says which\";\n"
	              "\tcase DOCCC_ERR_CPU: return \"the library was compiled for instruction set extensions this CPU lacks; "
	              "%s_last_error(NULL) names them\";\n"
	              "\tdefault: return \"unknown status\";\n\t}\n}\n\n", e->nm, e->nm, e->nm, e->nm, e->nm);
}

/* dc_status(m, st): a run's status, where a failed run-time assertion
 * (T_ASSERT) returns DOCCC_ERR_ASSERT + 256 * its message's number: the
 * message goes to the instance's last_error, the status to the caller.
 * Printed only for models with assertions (g->nmsgs), before the API. */
void emit_status_decode(Em *e)
{
	Sdfg *g = e->g;
	Buf *b = e->b;
	if (!g->nmsgs)
		return;
	buf_puts(b, "#include <stdio.h>\nstatic const char *const dc_assert_msgs[] = {\n");
	for (int i = 0; i < g->nmsgs; i++) {
		buf_puts(b, "\t");
		emit_message(b, g->msgs[i]);
		buf_puts(b, ",\n");
	}
	buf_printf(b, "};\n\nstatic int dc_status(%s_t *m, int st)\n{\n\tif ((st & 255) != DOCCC_ERR_ASSERT)\n\t\treturn st;\n"
	              "\tsnprintf(m->msg, sizeof m->msg, \"%s: %%s\", dc_assert_msgs[st >> 8]);\n\treturn DOCCC_ERR_ASSERT;\n}\n\n", e->nm, e->nm);
}

/* The descriptor's tensor tables, dc_ins and dc_outs, for every printer. */
void emit_desc_tables(Em *e)
{
	Sdfg *g = e->g;
	Buf *b = e->b;
	for (int io = 0; io < 2; io++) {
		int n = io ? g->noutputs : g->ninputs;
		int *ids = io ? g->outputs : g->inputs;
		for (int i = 0; i < n; i++) {
			Container *c = sdfg_c(g, ids[i]);
			buf_printf(b, "static const int64_t dc_%s%d_shape[] = {", io ? "out" : "in", i);
			for (int d = 0; d < c->rank; d++) {
				int64_t v = -1; /* a run-time dim */
				ex_isint(c->shape[d], &v);
				buf_printf(b, "%s%lld", d ? ", " : "", (long long)v);
			}
			buf_printf(b, "%s};\n", c->rank ? "" : "0");
		}
		buf_printf(b, "static const doccc_tensor_desc dc_%s[] = {\n", io ? "outs" : "ins");
		for (int i = 0; i < n; i++) {
			Container *c = sdfg_c(g, ids[i]);
			int64_t numel = sdfg_numel(g, ids[i]);
			buf_puts(b, "\t{");
			buf_cstr(b, c->origin && *c->origin ? c->origin : c->name);
			buf_printf(b, ", %s, %d, dc_%s%d_shape, %lld, %lld},\n", emit_dtype_macro(c->dt), c->rank, io ? "out" : "in", i,
			           (long long)numel, (long long)(numel < 0 ? 0 : numel * dtype_info[c->dt].size));
		}
		if (!n)
			buf_puts(b, "\t{0, 0, 0, 0, 0, 0},\n");
		buf_puts(b, "};\n");
	}
	emit_dims_desc_tables(e);
}

/* ---- the node table and hook (--profile, --values) ---------------------------- */

/* Is c a container whose sizes and strides are all constant? */
static int fixed_layout(const Container *c)
{
	int64_t v;
	for (int d = 0; d < c->rank; d++)
		if (!ex_isint(c->shape[d], &v) || !ex_isint(c->stride[d], &v))
			return 0;
	return !c->offset || (ex_isint(c->offset, &v) && v == 0);
}

/* The values of top-level node i (sdfg_step_values) of constant layout:
 * with run-time dims a value's sizes are not in a table. */
int emit_node_values(Em *e, int i, int *ids, int max)
{
	Sdfg *g = e->g;
	if (!e->last_reads) {
		e->last_reads = arena_alloc(g->arena, sizeof(int) * (size_t)(g->ncs + 1));
		sdfg_last_reads(g, e->last_reads);
	}
	int n = sdfg_step_values(g, i, e->last_reads, ids, max), k = 0;
	for (int v = 0; v < n; v++)
		if (fixed_layout(sdfg_c(g, ids[v])))
			ids[k++] = ids[v];
	return k;
}

void emit_hook_type(Em *e)
{
	buf_puts(e->b, "typedef struct { doccc_node_hook fn; void *user; } dc_hook_t;\n");
}

void emit_node_table(Em *e)
{
	Sdfg *g = e->g;
	Buf *b = e->b;
	int *ids = malloc(sizeof(int) * (size_t)(g->ncs + 1));
	DOCC_ASSERT(ids);
	for (int i = 0; i < g->root->nkids; i++) {
		int n = e->values ? emit_node_values(e, i, ids, g->ncs) : 0;
		for (int v = 0; v < n; v++) {
			Container *c = sdfg_c(g, ids[v]);
			for (int part = 0; part < 2; part++) {
				buf_printf(b, "static const int64_t dc_n%d_v%d_%s[] = {", i, v, part ? "strides" : "shape");
				for (int d = 0; d < c->rank; d++) {
					int64_t x = 0;
					ex_isint(part ? c->stride[d] : c->shape[d], &x);
					buf_printf(b, "%s%lld", d ? ", " : "", (long long)x);
				}
				buf_printf(b, "%s};\n", c->rank ? "" : "0");
			}
		}
		if (!n)
			continue;
		buf_printf(b, "static const doccc_value_desc dc_n%d_values[] = {\n", i);
		for (int v = 0; v < n; v++) {
			Container *c = sdfg_c(g, ids[v]);
			buf_puts(b, "\t{");
			buf_cstr(b, c->origin);
			buf_printf(b, ", %s, %d, dc_n%d_v%d_shape, dc_n%d_v%d_strides},\n", emit_dtype_macro(c->dt), c->rank, i, v, i, v);
		}
		buf_puts(b, "};\n");
	}
	buf_puts(b, "static const doccc_node_desc dc_nodes[] = {\n");
	for (int i = 0; i < g->root->nkids; i++) {
		Node *k = g->root->kids[i];
		int n = e->values ? emit_node_values(e, i, ids, g->ncs) : 0;
		buf_puts(b, "\t{");
		buf_cstr(b, k->label && *k->label ? k->label : "?");
		buf_printf(b, ", %.17g, %d, %s},\n", k->flops, n, n ? arena_printf(g->arena, "dc_n%d_values", i) : "NULL");
	}
	if (!g->root->nkids)
		buf_puts(b, "\t{0, 0, 0, 0},\n");
	buf_puts(b, "};\n");
	buf_printf(b, "static int dc_set_hook(void *model, doccc_node_hook fn, void *user)\n{\n\t%s_t *m = model;\n"
	              "\tif (!m)\n\t\treturn DOCCC_ERR_ARG;\n\tm->hook.fn = fn;\n\tm->hook.user = user;\n\treturn DOCCC_OK;\n}\n\n",
	           e->nm);
	free(ids);
}

void emit_state_api(Em *e)
{
	Sdfg *g = e->g;
	Buf *b = e->b;
	const char *nm = e->nm;
	if (!g->nstates)
		return;
	buf_printf(b, "/* state: offset in the state area, initial value's in the weights (-1: zeros), bytes */\n"
	              "static const struct { size_t sofs; long long wofs; size_t nbytes; } dc_state_tab[%d] = {\n", g->nstates);
	for (int i = 0; i < g->nstates; i++) {
		Container *c = sdfg_c(g, g->states[i]);
		buf_printf(b, "\t{%lldu, %lldLL, %lldu},\n", (long long)c->sofs, c->init >= 0 ? (long long)sdfg_c(g, c->init)->wofs : -1LL,
		           (long long)(sdfg_numel(g, g->states[i]) * dtype_info[c->dt].size));
	}
	buf_puts(b, "};\n");
	for (int i = 0; i < g->nstates; i++) {
		Container *c = sdfg_c(g, g->states[i]);
		buf_printf(b, "static const int64_t dc_st%d_shape[] = {", i);
		for (int d = 0; d < c->rank; d++) {
			int64_t v = -1;
			ex_isint(c->shape[d], &v);
			buf_printf(b, "%s%lld", d ? ", " : "", (long long)v);
		}
		buf_printf(b, "%s};\n", c->rank ? "" : "0");
	}
	buf_puts(b, "static const doccc_tensor_desc dc_states[] = {\n");
	for (int i = 0; i < g->nstates; i++) {
		Container *c = sdfg_c(g, g->states[i]);
		int64_t n = sdfg_numel(g, g->states[i]);
		buf_puts(b, "\t{");
		buf_cstr(b, c->origin && *c->origin ? c->origin : c->name);
		buf_printf(b, ", %s, %d, dc_st%d_shape, %lld, %lld},\n", emit_dtype_macro(c->dt), c->rank, i, (long long)n,
		           (long long)(n * dtype_info[c->dt].size));
	}
	buf_puts(b, "};\nstatic const int dc_state_inplace[] = {");
	for (int i = 0; i < g->nstates; i++)
		buf_printf(b, "%s%d", i ? ", " : "", sdfg_c(g, g->states[i])->inplace);
	buf_puts(b, "};\n\n");
	/* the API: reset (create's too), get, set, copy */
	buf_printf(b, "static int dc_state_reset(%s_t *m)\n{\n\tfor (int i = 0; i < %d; i++) {\n"
	              "\t\tconst void *src = dc_state_tab[i].wofs < 0 ? NULL : (const void *)(m->w + dc_state_tab[i].wofs);\n"
	              "\t\tint rc = dc_state_copy(m, m->st + dc_state_tab[i].sofs, src, dc_state_tab[i].nbytes, %d);\n"
	              "\t\tif (rc)\n\t\t\treturn rc;\n\t}\n\treturn DOCCC_OK;\n}\n\n", nm, g->nstates, DC_ST_INIT);
	buf_printf(b, "int %s_reset(%s_t *model)\n{\n\treturn model ? dc_state_reset(model) : DOCCC_ERR_ARG;\n}\n\n", nm, nm);
	buf_printf(b, "static int dc_state_arg(%s_t *m, int i, const void *p, size_t nbytes)\n{\n"
	              "\tif (i < 0 || i >= %d) {\n\t\tsnprintf(m->msg, sizeof m->msg, \"%s: no state %%d (the library has %d)\", i);\n"
	              "\t\treturn DOCCC_ERR_ARG;\n\t}\n"
	              "\tif (!p || nbytes != dc_state_tab[i].nbytes) {\n"
	              "\t\tsnprintf(m->msg, sizeof m->msg, \"%s: state %%d (%%s) takes a buffer of %%zu bytes, not %%s%%zu\", i, dc_states[i].name,\n"
	              "\t\t         dc_state_tab[i].nbytes, p ? \"\" : \"NULL of \", nbytes);\n"
	              "\t\treturn DOCCC_ERR_ARG;\n\t}\n\treturn DOCCC_OK;\n}\n\n", nm, g->nstates, nm, g->nstates, nm);
	buf_printf(b, "int %s_get_state(const %s_t *model, int state, void *dst, size_t nbytes)\n{\n"
	              "\t%s_t *m = (%s_t *)model; /* its message only */\n"
	              "\tint rc = m ? dc_state_arg(m, state, dst, nbytes) : DOCCC_ERR_ARG;\n"
	              "\treturn rc ? rc : dc_state_copy(m, dst, m->st + dc_state_tab[state].sofs, nbytes, %d);\n}\n\n",
	           nm, nm, nm, nm, DC_ST_OUT);
	buf_printf(b, "int %s_set_state(%s_t *model, int state, const void *src, size_t nbytes)\n{\n"
	              "\tint rc = model ? dc_state_arg(model, state, src, nbytes) : DOCCC_ERR_ARG;\n"
	              "\treturn rc ? rc : dc_state_copy(model, model->st + dc_state_tab[state].sofs, src, nbytes, %d);\n}\n\n",
	           nm, nm, DC_ST_IN);
	buf_printf(b, "int %s_copy_state(%s_t *dst, const %s_t *src)\n{\n\tif (!dst || !src)\n\t\treturn DOCCC_ERR_ARG;\n"
	              "\tif (dst == src)\n\t\treturn DOCCC_OK;\n"
	              "\tint rc = DOCCC_OK;\n\tfor (int i = 0; i < %d && !rc; i++)\n"
	              "\t\trc = dc_state_copy(dst, dst->st + dc_state_tab[i].sofs, src->st + dc_state_tab[i].sofs, dc_state_tab[i].nbytes, %d);\n"
	              "\treturn rc;\n}\n\n", nm, nm, nm, g->nstates, DC_ST_MOVE);
	buf_printf(b, "static int dc_reset_g(void *m) { return %s_reset((%s_t *)m); }\n"
	              "static int dc_get_state_g(const void *m, int i, void *p, size_t n) { return %s_get_state((const %s_t *)m, i, p, n); }\n"
	              "static int dc_set_state_g(void *m, int i, const void *p, size_t n) { return %s_set_state((%s_t *)m, i, p, n); }\n"
	              "static int dc_copy_state_g(void *d, const void *s) { return %s_copy_state((%s_t *)d, (const %s_t *)s); }\n\n",
	           nm, nm, nm, nm, nm, nm, nm, nm, nm);
}

/* The info text: the descriptor as one JSON object, a key per line. Every
 * string from the model or the command line goes through buf_quote; a dim
 * that is no constant is its expression, as a string. */
static void info_json(Em *e, const BuildArgs *a, const Blob *w, Buf *j)
{
	Sdfg *g = e->g;
	const Target *t = e->t;
	int dev = TARGET_IS_GPU(t);
	buf_puts(j, "{\n\"doccc_info\": 1,\n\"name\": ");
	buf_quote(j, e->nm);
	buf_printf(j, ",\n\"doccc_version\": \"%s\",\n\"abi_version\": %d,\n\"target\": ", DOCCC_VERSION, DOCCC_ABI_VERSION);
	buf_quote(j, t->name);
	buf_puts(j, ",\n\"category\": ");
	buf_quote(j, t->category);
	buf_puts(j, ",\n\"march\": ");
	buf_quote(j, t->march);
	buf_printf(j, ",\n\"host_build_of\": %s,\n\"device_resident\": %s,\n\"device_backend\": %s,\n\"simulated\": %s,\n",
	           t->fallback ? arena_printf(g->arena, "\"%s\"", t->name) : "null", dev ? "true" : "false",
	           dev ? arena_printf(g->arena, "\"%s\"", t->name) : "null", t->simulate ? "true" : "false");
	buf_printf(j, "\"input_sha256\": \"%s\",\n\"options\": ", g->hash);
	buf_quote(j, a->cmdline);
	buf_printf(j, ",\n\"weights_size\": %zu,\n\"weights_external\": %s,\n\"weights_sha256\": \"%s\",\n"
	              "\"workspace_size\": %lld,\n", w->size, a->outweights ? "true" : "false", w->sha, (long long)g->arena_size);
	/* the run-time dims, and the sizes below, in the export's names */
	buf_puts(j, "\"dims\": [");
	for (int k = 0; k < g->ndims; k++) {
		const Symbol *y = &g->syms[g->dims[k]];
		buf_puts(j, k ? ", {\"name\": " : "{\"name\": ");
		buf_quote(j, y->name);
		if (y->hi < INT32_MAX)
			buf_printf(j, ", \"min\": %lld, \"max\": %lld}", (long long)y->lo, (long long)y->hi);
		else
			buf_printf(j, ", \"min\": %lld, \"max\": null}", (long long)y->lo);
	}
	buf_puts(j, "],\n");
	if (g->ndims) {
		int64_t at_create, mx = memplan_max_bytes(g, &at_create);
		if (mx >= 0)
			buf_printf(j, "\"workspace_max_size\": %lld,\n", (long long)mx);
		else
			buf_puts(j, "\"workspace_max_size\": null,\n");
		buf_printf(j, "\"workspace_at_create\": %lld,\n", (long long)at_create);
	}
	if (g->nstates) {
		buf_printf(j, "\"state_size\": %lld,\n\"states\": [", (long long)g->state_size);
		for (int i = 0; i < g->nstates; i++) {
			Container *c = sdfg_c(g, g->states[i]);
			int64_t n = sdfg_numel(g, g->states[i]);
			buf_puts(j, i ? ",\n  {\"name\": " : "\n  {\"name\": ");
			buf_quote(j, c->origin && *c->origin ? c->origin : c->name);
			buf_printf(j, ", \"dtype\": \"%s\", \"shape\": [", dtype_info[c->dt].name);
			for (int d = 0; d < c->rank; d++) {
				int64_t v = 0;
				ex_isint(c->shape[d], &v);
				buf_printf(j, "%s%lld", d ? ", " : "", (long long)v);
			}
			buf_printf(j, "], \"numel\": %lld, \"nbytes\": %lld, \"in_place\": %s}", (long long)n,
			           (long long)(n * dtype_info[c->dt].size), c->inplace ? "true" : "false");
		}
		buf_puts(j, "\n],\n");
	}
	for (int io = 0; io < 2; io++) {
		int n = io ? g->noutputs : g->ninputs;
		int *ids = io ? g->outputs : g->inputs;
		buf_printf(j, "\"%s\": [", io ? "outputs" : "inputs");
		for (int i = 0; i < n; i++) {
			Container *c = sdfg_c(g, ids[i]);
			int64_t numel = sdfg_numel(g, ids[i]);
			buf_puts(j, i ? ",\n  {\"name\": " : "\n  {\"name\": ");
			buf_quote(j, c->origin && *c->origin ? c->origin : c->name);
			buf_printf(j, ", \"dtype\": \"%s\", \"shape\": [", dtype_info[c->dt].name);
			for (int d = 0; d < c->rank; d++) {
				int64_t v = 0;
				if (d)
					buf_puts(j, ", ");
				if (ex_isint(c->shape[d], &v))
					buf_printf(j, "%lld", (long long)v);
				else {
					Buf x = {0};
					ex_print(&x, g, c->shape[d]);
					buf_quote(j, x.s);
					buf_free(&x);
				}
			}
			if (numel < 0)
				buf_puts(j, "], \"numel\": null, \"nbytes\": null}");
			else
				buf_printf(j, "], \"numel\": %lld, \"nbytes\": %lld}", (long long)numel,
				           (long long)(numel * dtype_info[c->dt].size));
		}
		buf_puts(j, n ? "\n]" : "]");
		buf_puts(j, io ? "\n}\n" : ",\n");
	}
}

/* The descriptor NAME_desc and its fixed-name alias doccc_model (not in a
 * static archive, where every symbol carries the model's prefix): run is
 * the generic run's name, device the ABI 2 fields from device_resident on,
 * lang "" for C or "\"C\" " for C++. Before it, the info text dc_info, a
 * C literal per line of its JSON, in the section .doccc_info that `doccc
 * inspect` reads from the file (used: no compiler drops it). */
void emit_descriptor(Em *e, const BuildArgs *a, const Blob *w, const char *run, const char *device, const char *lang)
{
	Sdfg *g = e->g;
	const char *nm = e->nm;
	Buf *b = e->b;
	Buf j = {0};
	info_json(e, a, w, &j);
	buf_puts(b, "static const char dc_info[] __attribute__((section(\".doccc_info\"), used)) =");
	for (const char *p = j.s; *p;) {
		const char *q = strchr(p, '\n') + 1;
		buf_puts(b, "\n\t");
		buf_escape(b, ESC_CSTR, p, (size_t)(q - p));
		p = q;
	}
	buf_puts(b, ";\n\n");
	buf_free(&j);
	for (int i = 0; i < g->ninputs; i++)
		if (sdfg_c(g, g->inputs[i])->written) { /* the descriptor's input_written (abi 5) */
			buf_puts(b, "static const int dc_input_written[] = {");
			for (int k = 0; k < g->ninputs; k++)
				buf_printf(b, "%s%d", k ? ", " : "", sdfg_c(g, g->inputs[k])->written);
			buf_puts(b, "};\n");
			break;
		}
	buf_printf(b, "const doccc_model_desc %s_desc = {\n\tDOCCC_ABI_VERSION, \"%s\", \"%s\", \"%s\", \"%s\", \"%s\",\n", nm, nm,
	           e->t->name, e->t->category, DOCCC_VERSION, g->hash);
	buf_printf(b, "\t%d, %d, dc_ins, dc_outs, DC_WORKSPACE_SIZE, %d,\n", g->ninputs, g->noutputs, a->outweights ? 0 : 1);
	buf_printf(b, "\tdc_create, %s, dc_destroy, %s_strerror, dc_threads,\n", run, nm);
	buf_printf(b, "\t%s\n\t", device);
	buf_cstr(b, e->t->march);
	buf_puts(b, ", ");
	buf_cstr(b, a->cmdline);
	buf_puts(b, ", DC_WEIGHTS_SIZE, dc_weights_sha, dc_info,\n");
	emit_dims_desc(e, b);
	int written = 0;
	for (int i = 0; i < g->ninputs; i++)
		written |= sdfg_c(g, g->inputs[i])->written;
	if (g->nstates)
		buf_printf(b, "\t%d, dc_states, dc_state_inplace, dc_reset_g, dc_get_state_g, dc_set_state_g, dc_copy_state_g,\n",
		           g->nstates);
	else if (written || e->hooks)
		buf_puts(b, "\t0, NULL, NULL, NULL, NULL, NULL, NULL,\n");
	if (written)
		buf_puts(b, "\tdc_input_written,\n");
	else if (e->hooks)
		buf_puts(b, "\tNULL,\n");
	if (e->hooks)
		buf_printf(b, "\t%d, dc_nodes, dc_set_hook,\n", g->root->nkids);
	buf_puts(b, "};\n");
	if (!a->static_lib) /* for dlopen; two models link into one static program */
		buf_printf(b, "extern %sconst doccc_model_desc doccc_model __attribute__((weak, alias(\"%s_desc\")));\n", lang, nm);
}

void emit_source(Sdfg *g, const Target *t, const Printer *p, const BuildArgs *a, const Blob *w, Buf *out)
{
	Em e = {.g = g, .t = t, .p = p, .b = out, .lanes = t->vec_bits / 32, .vecvar = -1, .nm = g->name, .profile = a->profile,
	        .hooks = a->hooks, .values = a->values,
	        .stepfn = a->stepfn, .api = "", .as_local = -1};
	if (e.lanes < 2)
		e.lanes = 0;
	e.cn = arena_alloc(g->arena, sizeof(char *) * (size_t)(g->ncs + 1));
	e.sn = arena_alloc(g->arena, sizeof(char *) * (size_t)(g->nsyms + 1));
	for (int c = 0; c < g->ncs; c++)
		e.cn[c] = g->cs[c].name;
	for (int i = 0; i < g->nsyms; i++)
		e.sn[i] = g->syms[i].name;
	for (int k = 0; k < g->ndims; k++)
		e.sn[g->dims[k]] = arena_printf(g->arena, "dc_d%d", k);
	e.esc = arena_alloc(g->arena, (size_t)g->nsyms + 1);
	sdfg_value_escapes(g, e.esc);
	p->emit_file(&e, a, w);
}


void emit_weights_loader(Buf *b)
{
	buf_puts(b, rt_body("weights.h"));
}

/* ---- the runtime sources (backends/rt/, embedded by make as rt_files) ---- */
extern const RtFile rt_files[];

const char *rt_text(const char *name)
{
	for (const RtFile *f = rt_files; f->name; f++)
		if (!strcmp(f->name, name))
			return f->text;
	DOCC_UNREACHABLE();
}

const char *rt_body(const char *name)
{
	const char *t = rt_text(name), *e;
	if (!strncmp(t, "/*", 2) && (e = strstr(t, "*/\n")))
		return e + 3;
	return t;
}
