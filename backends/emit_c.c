/*
 * emit_c.c - C source from the scheduled SDFG (targets none, sequential,
 * openmp).
 *
 * The generated file has, in order: a comment saying how it was made (doccc
 * version, options, hash of the input; no paths or times), small static
 * helpers (NaN-propagating max/min, vector splat and select when the target
 * has SIMD), the step functions, one static function NAME_forward that
 * runs the whole graph by calling them, and the public API of the header
 * (create/run/destroy, ...) plus the descriptor.
 *
 * Every top-level child of the root sequence (an op or a fused group) is a
 * step: a static function NAME_sK taking restrict pointers to the
 * containers it touches (inside one step those are live at the same time
 * and so never share arena memory, which makes restrict true). Steps print
 * with canonical names, so repeated layers share one function and forward
 * calls it with each layer's pointers. Views have no pointer of their
 * own: a memlet on a view addresses its root with the view's offset and
 * strides, folded by the expression simplifier into one index.
 *
 * Maps become for loops with a pragma per schedule: SCHED_PARALLEL an OpenMP
 * parallel for (collapse, static schedule, the handle's thread count),
 * SCHED_UNROLL a full-unroll pragma, SCHED_VECTOR explicit vector code in
 * GCC/clang vector extensions (the map steps by the lane count; unit-stride
 * memlets become vector loads and stores, invariant ones broadcasts; an
 * extent that is not a multiple of the lanes ends in a scalar loop over the
 * rest; exp, tanh, sigmoid, SiLU and GELU have vector versions below). Local
 * containers are declared at the top of the body of the loop that owns them
 * (an accumulator tile stays in registers once the unrolled code is
 * scalar-replaced by the C compiler).
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
 * its index first; outside the dim, NAME_forward stops at once (a goto to
 * its end, or a return from a parallel kernel that leaves the status in
 * forward's dc_err) and NAME_run returns DOCCC_ERR_INDEX, where PyTorch
 * raises IndexError. So no memlet reads or writes at an unchecked index.
 */
#include <math.h>
#include <string.h>

#include "backend.h"

typedef struct {
	Sdfg *g;
	const Target *t;
	Buf *b;
	int ind;
	int lanes;          /* fp32 lanes of dc_vf, 0 without SIMD */
	int vecvar;         /* symbol of the enclosing SCHED_VECTOR map, or -1 */
	int inkern;         /* emitting a parallel map's kernel function */
	int checks;         /* the graph has index checks (T_INDEX): forward can fail */
	const char *top;    /* label of the top-level child being emitted (fused ops joined by '+') */
	const char *nm;
	int profile;
	Buf *kern;          /* kernel functions of parallel maps, emitted before forward */
	int nkern;
	char **funcs;       /* text of each step function so far (dedup) */
	int nfuncs, capfuncs;
} Em;

static const char *const storage_type[NDTYPES] = {
	[DT_F32] = "float", [DT_F64] = "double", [DT_F16] = "uint16_t", [DT_BF16] = "uint16_t",
	[DT_I64] = "int64_t", [DT_I32] = "int32_t", [DT_I16] = "int16_t", [DT_I8] = "int8_t",
	[DT_U8] = "uint8_t", [DT_BOOL] = "_Bool",
};

static const char *ctype(Dtype d)
{
	return d == DT_F16 || d == DT_BF16 ? "float" : storage_type[d];
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

static void line(Em *e, const char *fmt, ...) PRINTF_LIKE(2, 3);
static void line(Em *e, const char *fmt, ...)
{
	va_list ap;
	indent(e);
	va_start(ap, fmt);
	buf_vprintf(e->b, fmt, ap);
	va_end(ap);
	buf_putc(e->b, '\n');
}

static void print_double(Buf *b, double v, Dtype d)
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
		buf_printf(b, "(%s)%.17g", storage_type[d], v);
}

/* Element index expression (in elements of the root) of memlet m. */
static Expr *flat_index(Sdfg *g, const Memlet *m)
{
	Container *c = sdfg_c(g, m->data);
	Expr *e = c->offset ? c->offset : ex_int(g, 0);
	for (int d = 0; d < c->rank; d++)
		e = ex_add(g, e, ex_mul(g, m->idx[d], c->stride[d]));
	return e;
}

static void ptr_name(Em *e, Buf *b, int c)
{
	Container *k = sdfg_c(e->g, sdfg_root_of(e->g, c));
	buf_printf(b, "%s%s", k->kind == CK_LOCAL ? "l_" : "v_", k->name);
	(void)e;
}

/* The lvalue of memlet m: "v_x[...]" (or "l_acc" for a scalar local). */
static void lvalue(Em *e, Buf *b, const Memlet *m)
{
	Container *c = sdfg_c(e->g, m->data);
	ptr_name(e, b, m->data);
	if (c->kind == CK_LOCAL && c->rank == 0)
		return;
	buf_puts(b, "[");
	ex_print(b, e->g, flat_index(e->g, m));
	buf_puts(b, "]");
}

static int uses_vec(Em *e, const Memlet *m)
{
	if (e->vecvar < 0)
		return 0;
	Container *c = sdfg_c(e->g, m->data);
	for (int d = 0; d < c->rank; d++)
		if (ex_uses(m->idx[d], e->vecvar))
			return 1;
	return 0;
}

static void operand(Em *e, Buf *b, const Operand *o, Dtype want)
{
	switch (o->kind) {
	case OPD_CONST:
		if (e->vecvar >= 0) {
			buf_puts(b, "dc_splat(");
			print_double(b, o->c, DT_F32);
			buf_puts(b, ")");
		} else
			print_double(b, o->c, want);
		return;
	case OPD_VAL:
		buf_printf(b, "t%d", o->val);
		return;
	case OPD_EXPR:
		buf_printf(b, "((%s)(", ctype(want));
		ex_print(b, e->g, o->e);
		buf_puts(b, "))");
		return;
	case OPD_MEM:
		break;
	}
	Container *c = sdfg_c(e->g, o->m.data);
	Dtype dt = c->dt;
	if (e->vecvar >= 0) {
		Container *r = sdfg_c(e->g, sdfg_root_of(e->g, o->m.data));
		if (uses_vec(e, &o->m)) {
			buf_printf(b, "(*(%s *)&", r->kind == CK_LOCAL ? "dc_vf" : "const dc_vfu");
			lvalue(e, b, &o->m);
			buf_puts(b, ")");
		} else {
			buf_puts(b, "dc_splat(");
			lvalue(e, b, &o->m);
			buf_puts(b, ")");
		}
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
			ex_print(b, e->g, o->m.idx[d]);
			buf_puts(b, ") < (uint64_t)(");
			ex_print(b, e->g, c->shape[d]);
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
	lvalue(e, b, &o->m);
	if (dt == DT_BF16 || dt == DT_F16)
		buf_puts(b, ")");
	if (o->guard) {
		buf_puts(b, " : ");
		print_double(b, o->pad, want);
		buf_puts(b, ")");
	}
}

/* Scalar expression of tasklet t into b; operands already formatted. The
 * operands have the tasklet's dtype except for the codes that test truth
 * (logical ops and casts) and comparisons (bool result, operands converted
 * by earlier tasklets to the compute type). Integer variants follow
 * PyTorch's integer kernels (floor division, Python remainder, integer pow,
 * rounding functions as the identity). */
static void scalar_expr(Em *e, Buf *b, const Tasklet *t, char *const *a)
{
	Dtype d = t->dt;
	const char *f = d == DT_F64 ? "" : "f"; /* libm suffix */
	const char *T = ctype(d);
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
		print_double(&p0, t->p[0], d);
		print_double(&p1, t->p[1], d);
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
	case T_CLAMP: {
		/* min(max(a, lo), hi) as PyTorch: lo > hi gives hi, NaN stays NaN;
		 * an absent (infinite) bound is left out, so integers stay exact */
		Buf lo = {0}, hi = {0}, x = {0};
		print_double(&lo, t->p[0], d);
		print_double(&hi, t->p[1], d);
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
		DOCC_UNREACHABLE();
	}
}

static void vector_expr(Em *e, Buf *b, const Tasklet *t, char *const *a)
{
	(void)e;
	switch (t->code) {
	case T_ASSIGN: buf_printf(b, "%s", a[0]); break;
	case T_NEG: buf_printf(b, "-(%s)", a[0]); break;
	case T_ADD: buf_printf(b, "%s + %s", a[0], a[1]); break;
	case T_SUB: buf_printf(b, "%s - %s", a[0], a[1]); break;
	case T_MUL: buf_printf(b, "%s * %s", a[0], a[1]); break;
	case T_DIV: buf_printf(b, "%s / %s", a[0], a[1]); break;
	case T_FMA: buf_printf(b, "%s * %s + %s", a[0], a[1], a[2]); break;
	case T_MAX: buf_printf(b, "dc_vmax(%s, %s)", a[0], a[1]); break;
	case T_MIN: buf_printf(b, "dc_vmin(%s, %s)", a[0], a[1]); break;
	case T_RELU: buf_printf(b, "dc_vrelu(%s)", a[0]); break;
	case T_ABS: buf_printf(b, "(dc_vf)((dc_vi)(%s) & ~(dc_vi)dc_splat(-0.0f))", a[0]); break;
	case T_RECIP: buf_printf(b, "1.0f / (%s)", a[0]); break;
	case T_EXP: buf_printf(b, "dc_vexp(%s)", a[0]); break;
	case T_SIGMOID: buf_printf(b, "1.0f / (1.0f + dc_vexp(-(%s)))", a[0]); break;
	case T_SILU: buf_printf(b, "(%s) / (1.0f + dc_vexp(-(%s)))", a[0], a[0]); break;
	case T_TANH: buf_printf(b, "dc_vtanh(%s)", a[0]); break;
	case T_GELU: buf_printf(b, "0.5f * (%s) * (1.0f + dc_verf((%s) * 0.70710678118654752440f))", a[0], a[0]); break;
	case T_GELU_TANH:
		buf_printf(b, "0.5f * (%s) * (1.0f + dc_vtanh(0.79788456080286535588f * ((%s) + 0.044715f * (%s) * (%s) * (%s))))", a[0],
		           a[0], a[0], a[0], a[0]);
		break;
	case T_HARDSIGMOID: buf_printf(b, "dc_vclamp((%s) + 3.0f, 0.0f, 6.0f) / 6.0f", a[0]); break;
	case T_HARDSWISH: buf_printf(b, "(%s) * dc_vclamp((%s) + 3.0f, 0.0f, 6.0f) / 6.0f", a[0], a[0]); break;
	case T_CLAMP: {
		Buf lo = {0}, hi = {0};
		print_double(&lo, t->p[0], DT_F32);
		print_double(&hi, t->p[1], DT_F32);
		buf_printf(b, "dc_vclamp(%s, %s, %s)", a[0], lo.s, hi.s);
		buf_free(&lo);
		buf_free(&hi);
		break;
	}
	default:
		DOCC_UNREACHABLE();
	}
}

/* The statement that fails the run from inside the loops: forward jumps
 * to its end, a parallel kernel returns and leaves the status for forward. */
static const char *fail_stmt(Em *e, const char *code)
{
	Arena *a = e->g->arena;
	return e->inkern ? arena_printf(a, "{ __atomic_store_n(dc_err, %s, __ATOMIC_RELAXED); return; }", code)
	                 : arena_printf(a, "{ dc_err = %s; goto dc_fail; }", code);
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

/* T_INDEX: the index a[0] wrapped once (p[0]) and checked against the size
 * a[1]; nothing after it runs with an index outside [0, size). */
static void emit_index(Em *e, const Node *n, int i, char *const *a)
{
	const Tasklet *t = &n->ts[i];
	const char *op = e->top && *e->top ? e->top : n->label && *n->label ? n->label : "?";
	line(e, "int64_t t%d = (int64_t)(%s);", i, a[0]);
	if (t->p[0] != 0)
		line(e, "if (t%d < 0) t%d += %s;", i, i, a[1]);
	line(e, "if ((uint64_t)t%d >= (uint64_t)%s) %s /* index out of range in '%s' */", i, a[1], fail_stmt(e, "DOCCC_ERR_INDEX"),
	     op);
}

static void emit_block(Em *e, Node *n)
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
		for (int k = 0; k < t->nin; k++) {
			operand(e, &ops[k], &t->in[k], t->dt);
			a[k] = ops[k].s;
		}
		e->vecvar = saved;
		Buf ex = {0};
		if (is_int_div(t))
			line(e, "if ((%s) == 0) %s /* integer division by zero in '%s' */", a[1], fail_stmt(e, "DOCCC_ERR_ZERODIV"),
			     e->top && *e->top ? e->top : n->label && *n->label ? n->label : "?");
		if (t->code == T_INDEX)
			emit_index(e, n, i, a);
		else if (vec)
			vector_expr(e, &ex, t, a);
		else
			scalar_expr(e, &ex, t, a);
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
			if (vec) {
				Container *r = sdfg_c(g, sdfg_root_of(g, t->out.data));
				buf_printf(&lv, "*(%s *)&", r->kind == CK_LOCAL ? "dc_vf" : "dc_vfu");
			}
			lvalue(e, &lv, &t->out);
			line(e, "%s += %s;", lv.s, ex.s);
			buf_free(&lv);
			buf_free(&ex);
			continue;
		}
		/* float16/bfloat16 compute in float, but each op rounds its result
		 * to the storage precision, as PyTorch does, also inside fused maps */
		if (t->code == T_INDEX)
			;
		else if (!vec && (t->dt == DT_F16 || t->dt == DT_BF16) && !(t->store && t->wcr != W_NONE))
			line(e, "float t%d = %s(%s(%s));", i, t->dt == DT_F16 ? "dc_h2f" : "dc_b2f", t->dt == DT_F16 ? "dc_f2h" : "dc_f2b", ex.s);
		else
			line(e, "%s t%d = %s;", vec ? "const dc_vf" : ctype(t->dt), i, ex.s);
		buf_free(&ex);
		if (t->bind >= 0)
			line(e, "const int64_t %s = t%d;", g->syms[t->bind].name, i);
		if (!t->store)
			continue;
		Buf lv = {0};
		if (vec) {
			Container *r = sdfg_c(g, sdfg_root_of(g, t->out.data));
			buf_printf(&lv, "*(%s *)&", r->kind == CK_LOCAL ? "dc_vf" : "dc_vfu");
		}
		lvalue(e, &lv, &t->out);
		const char *conv = dc->dt == DT_BF16 ? "dc_f2b" : dc->dt == DT_F16 ? "dc_f2h" : "";
		switch (t->wcr) {
		case W_NONE:
			if (*conv)
				line(e, "%s = %s(t%d);", lv.s, conv, i);
			else if (dc->dt != t->dt && !vec)
				line(e, "%s = (%s)t%d;", lv.s, storage_type[dc->dt], i);
			else
				line(e, "%s = t%d;", lv.s, i);
			break;
		case W_SUM:
			line(e, "%s += t%d;", lv.s, i);
			break;
		case W_PROD:
			line(e, "%s *= t%d;", lv.s, i);
			break;
		case W_MAX:
		case W_MIN:
			if (vec)
				line(e, "%s = dc_v%s(%s, t%d);", lv.s, t->wcr == W_MAX ? "max" : "min", lv.s, i);
			else
				line(e, "%s = dc_%s%s(%s, t%d);", lv.s, t->wcr == W_MAX ? "max" : "min", isfloat(dc->dt) ? (dc->dt == DT_F64 ? "" : "f") : "i", lv.s, i);
			break;
		}
		buf_free(&lv);
	}
}

static void emit_node(Em *e, Node *n);

static void emit_locals(Em *e, Node *loop)
{
	Sdfg *g = e->g;
	for (int i = 0; i < g->ncs; i++) {
		Container *c = &g->cs[i];
		if (c->kind != CK_LOCAL || c->dead || c->owner != loop->id)
			continue;
		if (c->rank == 0)
			line(e, "%s l_%s;", storage_type[c->dt], c->name);
		else
			line(e, "%s l_%s[%lld] __attribute__((aligned(64)));", storage_type[c->dt], c->name, (long long)sdfg_numel(g, i));
	}
}

static void touched(Sdfg *g, Node *n, unsigned char *set);
static void emit_node(Em *e, Node *n);

/* Does subtree n check an index (a T_INDEX tasklet) or an integer divisor,
 * so that it can fail? */
static int has_check(const Node *n)
{
	switch (n->kind) {
	case N_SEQ:
		for (int i = 0; i < n->nkids; i++)
			if (has_check(n->kids[i]))
				return 1;
		return 0;
	case N_MAP:
	case N_FOR:
		return has_check(n->body);
	case N_BLOCK:
		for (int i = 0; i < n->nts && !n->lib; i++)
			if (n->ts[i].code == T_INDEX || is_int_div(&n->ts[i]))
				return 1;
		return 0;
	}
	return 0;
}

/* A parallel map nest becomes a static kernel function taking restrict
 * pointers and the collapsed loop variables, called from an OpenMP loop:
 * the C compiler then keeps the aliasing facts (and the register tiles)
 * that it loses when it outlines a parallel region itself. */
static void emit_parallel(Em *e, Node *n)
{
	Sdfg *g = e->g;
	int k = n->collapse > 0 ? n->collapse : 1;
	Node *maps[3] = {n, NULL, NULL};
	for (int i = 1; i < k; i++)
		maps[i] = maps[i - 1]->body->kids[0];
	unsigned char *set = arena_alloc(g->arena, (size_t)g->ncs + 1);
	touched(g, n, set);
	int id = e->nkern++;
	Buf params = {0}, args = {0};
	for (int c = 0; c < g->ncs; c++) {
		Container *ct = &g->cs[c];
		if (!set[c] || ct->kind == CK_LOCAL)
			continue;
		int ro = ct->kind == CK_INPUT || ct->kind == CK_CONST;
		buf_printf(&params, "%s%s%s *restrict v_%s", params.len ? ", " : "", ro ? "const " : "", storage_type[ct->dt], ct->name);
		buf_printf(&args, "%sv_%s", args.len ? ", " : "", ct->name);
	}
	for (int i = 0; i < k; i++) {
		const char *v = g->syms[maps[i]->var].name;
		buf_printf(&params, "%sint64_t %s", params.len ? ", " : "", v);
		buf_printf(&args, "%s%s", args.len ? ", " : "", v);
	}
	int check = has_check(n);
	if (check) {
		buf_printf(&params, ", int *dc_err");
		buf_printf(&args, ", &dc_err");
	}
	Buf *saved = e->b;
	int sind = e->ind;
	e->b = e->kern;
	e->ind = 0;
	e->inkern = 1;
	line(e, "static void %s_k%d(%s)", e->nm, id, params.s);
	line(e, "{");
	e->ind++;
	for (int i = 0; i < k; i++)
		emit_locals(e, maps[i]);
	emit_node(e, maps[k - 1]->body);
	e->ind--;
	line(e, "}\n");
	e->b = saved;
	e->ind = sind;
	e->inkern = 0;
	line(e, "#pragma omp parallel for collapse(%d) schedule(static) num_threads(dc_nth)", k);
	for (int i = 0; i < k; i++) {
		Buf lo = {0}, hi = {0};
		const char *v = g->syms[maps[i]->var].name;
		ex_print(&lo, g, maps[i]->lo);
		ex_print(&hi, g, maps[i]->hi);
		line(e, "for (int64_t %s = %s; %s < %s; %s += %lld)", v, lo.s, v, hi.s, v, (long long)maps[i]->step);
		buf_free(&lo);
		buf_free(&hi);
		e->ind++;
	}
	line(e, "%s_k%d(%s);", e->nm, id, args.s);
	e->ind -= k;
	if (check)
		line(e, "if (dc_err) goto dc_fail;");
	buf_free(&params);
	buf_free(&args);
}

static void emit_loop(Em *e, Node *n)
{
	if (n->sched == SCHED_PARALLEL && n->kind == N_MAP) {
		emit_parallel(e, n);
		return;
	}
	Sdfg *g = e->g;
	const char *v = g->syms[n->var].name;
	Buf lo = {0}, hi = {0};
	ex_print(&lo, g, n->lo);
	ex_print(&hi, g, n->hi);
	int64_t step = n->step;
	int vec = n->sched == SCHED_VECTOR && e->lanes > 1 && e->vecvar < 0;
	if (vec)
		step = e->lanes;
	if (n->sched == SCHED_PARALLEL)
		line(e, "#pragma omp parallel for collapse(%d) schedule(static) num_threads(dc_nth)", n->collapse > 0 ? n->collapse : 1);
	else if (n->sched == SCHED_UNROLL)
		line(e, "#pragma clang loop unroll(full)");
	else if (n->sched == SCHED_VECTOR && !vec)
		line(e, "#pragma clang loop vectorize(enable)");
	int64_t l0, h0;
	int tail = vec && !(ex_isint(n->lo, &l0) && ex_isint(n->hi, &h0) && (h0 - l0) % step == 0);
	if (tail) {
		/* whole vectors, then the scalar remainder */
		line(e, "{");
		e->ind++;
		line(e, "int64_t %s = %s;", v, lo.s);
		line(e, "for (; %s + %lld <= %s; %s += %lld) {", v, (long long)step, hi.s, v, (long long)step);
	} else
		line(e, "for (int64_t %s = %s; %s < %s; %s += %lld) {", v, lo.s, v, hi.s, v, (long long)step);
	e->ind++;
	emit_locals(e, n);
	int saved = e->vecvar;
	if (vec)
		e->vecvar = n->var;
	emit_node(e, n->body);
	e->vecvar = saved;
	e->ind--;
	line(e, "}");
	if (tail) {
		line(e, "for (; %s < %s; %s += 1) {", v, hi.s, v);
		e->ind++;
		emit_locals(e, n);
		emit_node(e, n->body);
		e->ind--;
		line(e, "}");
		e->ind--;
		line(e, "}");
	}
	buf_free(&lo);
	buf_free(&hi);
}

static void emit_node(Em *e, Node *n)
{
	switch (n->kind) {
	case N_SEQ:
		for (int i = 0; i < n->nkids; i++)
			emit_node(e, n->kids[i]);
		break;
	case N_MAP:
	case N_FOR:
		emit_loop(e, n);
		break;
	case N_BLOCK:
		DOCC_ASSERT(!n->lib);
		line(e, "{");
		e->ind++;
		emit_block(e, n);
		e->ind--;
		line(e, "}");
		break;
	}
}

/* Root containers touched by subtree n (bitmap indexed by id). */
static void touched(Sdfg *g, Node *n, unsigned char *set)
{
	switch (n->kind) {
	case N_SEQ:
		for (int i = 0; i < n->nkids; i++)
			touched(g, n->kids[i], set);
		break;
	case N_MAP:
	case N_FOR:
		touched(g, n->body, set);
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

/* Vector transcendental functions for SCHED_VECTOR maps, in clang vector
 * extensions (any width).
 *  dc_vexp   Cody-Waite reduction x = n ln2 + r, the Cephes degree-6
 *            polynomial for e^r, then two multiplications by 2^(n/2) so
 *            results from the denormals up to overflow (inf) come out right;
 *            within 2 ulp of expf; NaN stays NaN.
 *  dc_vtanh  Cephes tanhf: an odd polynomial below |x| = 0.625, else
 *            1 - 2 / (e^2|x| + 1) with the sign restored.
 *  dc_verf   the approximation PyTorch's own vectorized CPU erf uses
 *            (Abramowitz-Stegun 7.1.26, absolute error < 1.5e-7): used for
 *            GELU only, where that absolute error vanishes in 0.5x(1+erf). */
static const char vmath[] =
	"static inline dc_vf dc_vexp(dc_vf x) {\n"
	"\tdc_vf xc = dc_vsel(x > 88.8f, dc_splat(88.8f), dc_vsel(x < -104.0f, dc_splat(-104.0f), x));\n"
	"\tdc_vf fx = xc * 1.44269504088896341f + 0.5f;\n"
	"\tdc_vf n = __builtin_convertvector(__builtin_convertvector(fx, dc_vi), dc_vf);\n"
	"\tn = dc_vsel(n > fx, n - 1.0f, n);\n"
	"\tdc_vf r = xc - n * 0.693359375f + n * 2.12194440e-4f, z = r * r;\n"
	"\tdc_vf y = (((((1.9875691500e-4f * r + 1.3981999507e-3f) * r + 8.3334519073e-3f) * r + 4.1665795894e-2f) * r\n"
	"\t\t+ 1.6666665459e-1f) * r + 5.0000001201e-1f) * z + r + 1.0f;\n"
	"\tdc_vi ni = __builtin_convertvector(n, dc_vi), n1 = ni >> 1, n2 = ni - n1;\n"
	"\treturn dc_vsel(x != x, x, y * (dc_vf)((n1 + 127) << 23) * (dc_vf)((n2 + 127) << 23)); }\n"
	"static inline dc_vf dc_vtanh(dc_vf x) {\n"
	"\tdc_vi sg = (dc_vi)x & (dc_vi)dc_splat(-0.0f);\n"
	"\tdc_vf a = (dc_vf)((dc_vi)x & ~(dc_vi)dc_splat(-0.0f)), z = x * x;\n"
	"\tdc_vf p = ((((-5.70498872745e-3f * z + 2.06390887954e-2f) * z - 5.37397155531e-2f) * z + 1.33314422036e-1f) * z\n"
	"\t\t- 3.33332819422e-1f) * z * x + x;\n"
	"\tdc_vf q = (dc_vf)((dc_vi)(1.0f - 2.0f / (dc_vexp(a + a) + 1.0f)) | sg);\n"
	"\treturn dc_vsel(a < 0.625f, p, q); }\n"
	"static inline dc_vf dc_verf(dc_vf x) {\n"
	"\tdc_vi sg = (dc_vi)x & (dc_vi)dc_splat(-0.0f);\n"
	"\tdc_vf a = (dc_vf)((dc_vi)x & ~(dc_vi)dc_splat(-0.0f));\n"
	"\tdc_vf t = 1.0f / (0.3275911f * a + 1.0f);\n"
	"\tdc_vf r = ((((1.061405429f * t - 1.453152027f) * t + 1.421413741f) * t - 0.284496736f) * t + 0.254829592f) * t;\n"
	"\treturn (dc_vf)((dc_vi)(1.0f - r * dc_vexp(-(x * x))) ^ sg); }\n";

static void emit_helpers(Em *e)
{
	Buf *b = e->b;
	buf_puts(b, "static inline float dc_maxf(float a, float b) { return (a != a || a > b) ? a : b; }\n"
	            "static inline float dc_minf(float a, float b) { return (a != a || a < b) ? a : b; }\n"
	            "static inline double dc_max(double a, double b) { return (a != a || a > b) ? a : b; }\n"
	            "static inline double dc_min(double a, double b) { return (a != a || a < b) ? a : b; }\n"
	            "static inline int64_t dc_maxi(int64_t a, int64_t b) { return a > b ? a : b; }\n"
	            "static inline int64_t dc_mini(int64_t a, int64_t b) { return a < b ? a : b; }\n"
	            "static inline float dc_clampf(float x, float lo, float hi) { return x < lo ? lo : (x > hi ? hi : x); }\n"
	            "static inline double dc_clamp(double x, double lo, double hi) { return x < lo ? lo : (x > hi ? hi : x); }\n"
	            "static inline float dc_remf(float a, float b) { float r = fmodf(a, b); return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r; }\n"
	            "static inline double dc_rem(double a, double b) { double r = fmod(a, b); return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r; }\n"
	            "static inline int64_t dc_remi(int64_t a, int64_t b) { if (!b) return 0; int64_t r = a % b; return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r; }\n"
	            "static inline int64_t dc_fmodi(int64_t a, int64_t b) { return b ? a % b : 0; }\n"
	            "static inline int64_t dc_divti(int64_t a, int64_t b) { return b ? a / b : 0; }\n"
	            "static inline int64_t dc_floordivi(int64_t a, int64_t b) { if (!b) return 0; int64_t q = a / b, r = a % b; return (r != 0 && ((r < 0) != (b < 0))) ? q - 1 : q; }\n"
	            "static inline float dc_floordivf(float a, float b) { if (b == 0) return a / b; float m = fmodf(a, b), d = (a - m) / b;\n"
	            "\tif (m != 0 && ((b < 0) != (m < 0))) d -= 1; if (d == 0) return copysignf(0, a / b); float q = floorf(d); return d - q > 0.5f ? q + 1 : q; }\n"
	            "static inline double dc_floordiv(double a, double b) { if (b == 0) return a / b; double m = fmod(a, b), d = (a - m) / b;\n"
	            "\tif (m != 0 && ((b < 0) != (m < 0))) d -= 1; if (d == 0) return copysign(0, a / b); double q = floor(d); return d - q > 0.5 ? q + 1 : q; }\n"
	            "static inline int64_t dc_powi(int64_t a, int64_t b) { if (b < 0) return a == 1 ? 1 : a == -1 ? ((-b) % 2 ? -1 : 1) : 0;\n"
	            "\tuint64_t r = 1, x = (uint64_t)a; while (b) { if (b & 1) r *= x; b /= 2; x *= x; } return (int64_t)r; }\n"
	            "static inline float dc_b2f(uint16_t h) { uint32_t u = (uint32_t)h << 16; float f; memcpy(&f, &u, 4); return f; }\n"
	            "static inline uint16_t dc_f2b(float f) { uint32_t u; memcpy(&u, &f, 4); if ((u & 0x7fffffffu) > 0x7f800000u) return (uint16_t)((u >> 16) | 64); u += 0x7fffu + ((u >> 16) & 1); return (uint16_t)(u >> 16); }\n"
	            "static inline float dc_h2f(uint16_t h) { uint32_t s = (uint32_t)(h & 0x8000) << 16, e = (h >> 10) & 31, m = h & 1023, u; float f;\n"
	            "\tif (e == 31) u = s | 0x7f800000u | (m << 13); else if (e) u = s | ((e + 112) << 23) | (m << 13);\n"
	            "\telse if (!m) u = s; else { f = (float)m * 5.9604644775390625e-8f; memcpy(&u, &f, 4); u |= s; }\n"
	            "\tmemcpy(&f, &u, 4); return f; }\n"
	            "static inline uint16_t dc_f2h(float f) { uint32_t u; memcpy(&u, &f, 4); uint32_t s = (u >> 16) & 0x8000; float a = fabsf(f);\n"
	            "\tif (a != a) return (uint16_t)(s | 0x7e00); if (a >= 65520.0f) return (uint16_t)(s | 0x7c00);\n"
	            "\tif (a < 6.103515625e-05f) return (uint16_t)(s | (uint32_t)nearbyintf(a * 16777216.0f));\n"
	            "\tmemcpy(&u, &a, 4); uint32_t r = u + 0xfffu + ((u >> 13) & 1); return (uint16_t)(s | ((r - (112u << 23)) >> 13)); }\n");
	if (e->lanes > 1) {
		int L = e->lanes;
		buf_printf(b, "typedef float dc_vf __attribute__((vector_size(%d)));\n", L * 4);
		buf_printf(b, "typedef float dc_vfu __attribute__((vector_size(%d), aligned(4)));\n", L * 4);
		buf_printf(b, "typedef int32_t dc_vi __attribute__((vector_size(%d)));\n", L * 4);
		buf_puts(b, "static inline dc_vf dc_splat(float s) { return (dc_vf){");
		for (int i = 0; i < L; i++)
			buf_puts(b, i ? ", s" : "s");
		buf_puts(b, "}; }\n");
		buf_puts(b, "static inline dc_vf dc_vsel(dc_vi m, dc_vf a, dc_vf b) { return (dc_vf)(((dc_vi)a & m) | ((dc_vi)b & ~m)); }\n"
		            "static inline dc_vf dc_vmax(dc_vf a, dc_vf b) { return dc_vsel((a > b) | (a != a), a, b); }\n"
		            "static inline dc_vf dc_vmin(dc_vf a, dc_vf b) { return dc_vsel((a < b) | (a != a), a, b); }\n"
		            "static inline dc_vf dc_vrelu(dc_vf a) { return dc_vsel(a < 0, dc_splat(0), a); }\n"
		            "static inline dc_vf dc_vclamp(dc_vf a, float lo, float hi) { a = dc_vsel(a < lo, dc_splat(lo), a); return dc_vsel(a > hi, dc_splat(hi), a); }\n");
		buf_puts(b, vmath);
	}
	buf_puts(b, "\n");
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

static void replace_all(Buf *out, const char *s, const char *from, const char *to)
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
static void emit_step(Em *e, Node *k, const unsigned char *set)
{
	Sdfg *g = e->g;
	/* canonical names, saved to restore */
	char **cname = arena_alloc(g->arena, sizeof(char *) * (size_t)(g->ncs + 1));
	int *syms = arena_alloc(g->arena, sizeof(int) * (size_t)(g->nsyms + 1)), nsyms = 0;
	char **sname = arena_alloc(g->arena, sizeof(char *) * (size_t)(g->nsyms + 1));
	Buf params = {0}, args = {0};
	int np = 0, nl = 0;
	for (int c = 0; c < g->ncs; c++) {
		Container *ct = &g->cs[c];
		cname[c] = ct->name;
		if (!set[c])
			continue;
		if (ct->kind == CK_LOCAL) {
			ct->name = arena_printf(g->arena, "%d", nl++);
			continue;
		}
		const char *T = storage_type[ct->dt];
		int ro = ct->kind == CK_INPUT || ct->kind == CK_CONST;
		ct->name = arena_printf(g->arena, "%d", np++);
		buf_printf(&params, "%s%s *restrict v_%s, ", ro ? "const " : "", T, ct->name);
		switch (ct->kind) {
		case CK_INPUT: buf_printf(&args, "(const %s *)dc_in[%d], ", T, ct->io); break;
		case CK_OUTPUT: buf_printf(&args, "(%s *)dc_out[%d], ", T, ct->io); break;
		case CK_CONST: buf_printf(&args, "(const %s *)(dc_W + %lld), ", T, (long long)ct->wofs); break;
		case CK_TRANSIENT:
			DOCC_ASSERT(ct->aofs >= 0);
			buf_printf(&args, "(%s *)(dc_ws + %lld), ", T, (long long)ct->aofs);
			break;
		default: DOCC_UNREACHABLE();
		}
	}
	subtree_syms(g, k, syms, &nsyms);
	for (int i = 0; i < nsyms; i++) {
		sname[i] = g->syms[syms[i]].name;
		g->syms[syms[i]].name = arena_printf(g->arena, "%s%d", g->syms[syms[i]].kind == SYM_LOOP ? "i" : "x", i);
	}
	/* the body, with kernels of its own named after a placeholder */
	int check = has_check(k);
	Buf body = {0}, kern = {0};
	Buf *sb = e->b, *sk = e->kern;
	int sind = e->ind, snk = e->nkern;
	const char *snm = e->nm, *stop = e->top;
	e->b = &body, e->kern = &kern, e->ind = 1, e->nkern = 0, e->nm = "@F@", e->top = "this step";
	line(e, "(void)dc_nth;");
	if (check)
		line(e, "int dc_err = DOCCC_OK;");
	emit_node(e, k);
	if (check) {
		line(e, "return DOCCC_OK;");
		buf_puts(&body, "dc_fail:\n\treturn dc_err;\n");
	}
	e->b = sb, e->kern = sk, e->ind = sind, e->nkern = snk, e->nm = snm, e->top = stop;
	for (int c = 0; c < g->ncs; c++)
		g->cs[c].name = cname[c];
	for (int i = 0; i < nsyms; i++)
		g->syms[syms[i]].name = sname[i];
	/* the same text as an earlier step: call that function */
	char *text = arena_printf(g->arena, "%s\n@F@(%sint dc_nth)\n{\n%s}\n", check ? "static int" : "static void",
	                          params.len ? params.s : "", body.s ? body.s : "");
	if (kern.len)
		text = arena_printf(g->arena, "%s%s", kern.s, text);
	int fid = -1;
	for (int i = 0; i < e->nfuncs && fid < 0; i++)
		if (!strcmp(e->funcs[i], text))
			fid = i;
	if (fid < 0) {
		fid = e->nfuncs;
		VEC_PUSH(g->arena, e->funcs, e->nfuncs, e->capfuncs, text);
		replace_all(e->kern, text, "@F@", arena_printf(g->arena, "%s_s%d", e->nm, fid));
		buf_puts(e->kern, "\n");
	}
	if (check)
		line(e, "if ((dc_err = %s_s%d(%sdc_nth)) != DOCCC_OK) goto dc_fail;", e->nm, fid, args.len ? args.s : "");
	else
		line(e, "%s_s%d(%sdc_nth);", e->nm, fid, args.len ? args.s : "");
	buf_free(&params);
	buf_free(&args);
	buf_free(&body);
	buf_free(&kern);
}

static void emit_forward(Em *e)
{
	Sdfg *g = e->g;
	/* forward returns DOCCC_OK, or DOCCC_ERR_INDEX / DOCCC_ERR_ZERODIV from a check */
	e->checks = has_check(g->root);
	line(e, "static int %s_forward(const unsigned char *dc_W, unsigned char *dc_ws, int dc_nth,", e->nm);
	line(e, "\tconst void *const *dc_in, void *const *dc_out, double *dc_prof)");
	line(e, "{");
	e->ind++;
	line(e, "(void)dc_W; (void)dc_ws; (void)dc_nth; (void)dc_in; (void)dc_out; (void)dc_prof;");
	if (e->checks)
		line(e, "int dc_err = DOCCC_OK;");
	if (e->profile)
		line(e, "struct timespec dc_t0, dc_t1;");
	unsigned char *set = arena_alloc(g->arena, (size_t)g->ncs + 1);
	for (int i = 0; i < g->root->nkids; i++) {
		Node *k = g->root->kids[i];
		memset(set, 0, (size_t)g->ncs + 1);
		touched(g, k, set);
		line(e, "{ /* %s */", k->label && *k->label ? k->label : "?");
		e->top = k->label;
		e->ind++;
		if (e->profile)
			line(e, "clock_gettime(CLOCK_MONOTONIC, &dc_t0);");
		emit_step(e, k, set);
		if (e->profile)
			line(e, "clock_gettime(CLOCK_MONOTONIC, &dc_t1); dc_prof[%d] += (dc_t1.tv_sec - dc_t0.tv_sec) + 1e-9 * (dc_t1.tv_nsec - dc_t0.tv_nsec);", i);
		e->ind--;
		line(e, "}");
	}
	if (e->checks) {
		e->ind--;
		line(e, "dc_fail:");
		e->ind++;
		line(e, "return dc_err;");
	} else
		line(e, "return DOCCC_OK;");
	e->ind--;
	line(e, "}");
	buf_puts(e->b, "\n");
}

void emit_c(Sdfg *g, const Target *t, const BuildArgs *a, const Blob *w, Buf *b)
{
	Em e = {.g = g, .t = t, .b = b, .lanes = t->vec_bits / 32, .vecvar = -1, .nm = g->name, .profile = a->profile};
	if (e.lanes < 2)
		e.lanes = 0;
	const char *nm = g->name;
	int omp = t->kind == TG_OPENMP;
	buf_printf(b, "/*\n * %s.c - generated by doccc %s; do not edit.\n * target %s, category %s, -march=%s\n"
	              " * options: %s\n * input sha256 %s\n */\n",
	           nm, DOCCC_VERSION, t->name, t->category, t->kind == TG_NONE ? "(default)" : t->march,
	           a->cmdline ? a->cmdline : "", g->hash);
	buf_puts(b, "#define _POSIX_C_SOURCE 200809L\n#include <time.h>\n#include <math.h>\n#include <stdint.h>\n#include <stdlib.h>\n#include <string.h>\n"
	            "#include <fcntl.h>\n#include <sys/mman.h>\n#include <sys/stat.h>\n#include <unistd.h>\n");
	if (omp)
		buf_puts(b, "#include <omp.h>\n");
	buf_printf(b, "#include \"%s.h\"\n\n", nm);
	emit_helpers(&e);
	Buf kern = {0}, fwd = {0};
	e.kern = &kern;
	e.b = &fwd;
	emit_forward(&e);
	e.b = b;
	if (kern.len)
		buf_puts(b, kern.s);
	buf_puts(b, fwd.s);
	buf_free(&kern);
	buf_free(&fwd);

	/* The API. */
	buf_printf(b, "struct %s {\n\tunsigned char *ws;\n\tconst unsigned char *w;\n\tint nth;\n\tvoid *map;\n\tsize_t maplen;\n"
	              "\tlong runs;\n\tdouble prof[%d];\n};\n\n", nm, g->root->nkids + 1);
	if (e.profile) {
		buf_puts(b, "#include <stdio.h>\nstatic const char *const dc_prof_names[] = {\n");
		for (int i = 0; i < g->root->nkids; i++) {
			buf_puts(b, "\t");
			buf_quote(b, g->root->kids[i]->label ? g->root->kids[i]->label : "?");
			buf_puts(b, ",\n");
		}
		buf_puts(b, "\t0};\n");
	}
	if (w->size && !a->outweights)
		buf_printf(b, "extern const unsigned char %s_weights_blob[] __attribute__((visibility(\"hidden\")));\n", nm);
	buf_printf(b, "#define DC_WEIGHTS_SIZE ((size_t)%zuu)\n#define DC_WORKSPACE_SIZE ((size_t)%lldu)\n", w->size, (long long)g->arena_size);
	buf_printf(b, "static const char dc_weights_sha[] = \"%s\";\n\n", w->sha);
	/* create */
	buf_printf(b, "int %s_create_from(%s_t **model, const char *weights_path)\n{\n", nm, nm);
	buf_printf(b, "\tif (!model)\n\t\treturn DOCCC_ERR_ARG;\n\t*model = NULL;\n\t%s_t *m = calloc(1, sizeof *m);\n\tif (!m)\n\t\treturn DOCCC_ERR_NOMEM;\n", nm);
	buf_puts(b, "\tif (DC_WORKSPACE_SIZE && posix_memalign((void **)&m->ws, 64, DC_WORKSPACE_SIZE)) {\n\t\tfree(m);\n\t\treturn DOCCC_ERR_NOMEM;\n\t}\n");
	if (a->outweights) {
		buf_puts(b, "\tif (!weights_path) {\n\t\tfree(m->ws);\n\t\tfree(m);\n\t\treturn DOCCC_ERR_WEIGHTS;\n\t}\n"
		            "\tint fd = open(weights_path, O_RDONLY | O_CLOEXEC);\n\tstruct stat st;\n"
		            "\tif (fd < 0 || fstat(fd, &st) || (size_t)st.st_size != 128 + DC_WEIGHTS_SIZE) {\n"
		            "\t\tif (fd >= 0)\n\t\t\tclose(fd);\n\t\tfree(m->ws);\n\t\tfree(m);\n\t\treturn DOCCC_ERR_WEIGHTS;\n\t}\n"
		            "\tm->maplen = (size_t)st.st_size;\n\tm->map = mmap(NULL, m->maplen, PROT_READ, MAP_PRIVATE, fd, 0);\n\tclose(fd);\n"
		            "\tif (m->map == MAP_FAILED || memcmp(m->map, \"DOCCCW01\", 8) || memcmp((char *)m->map + 16, dc_weights_sha, 64)) {\n"
		            "\t\tif (m->map != MAP_FAILED)\n\t\t\tmunmap(m->map, m->maplen);\n\t\tfree(m->ws);\n\t\tfree(m);\n\t\treturn DOCCC_ERR_WEIGHTS;\n\t}\n"
		            "\tm->w = (const unsigned char *)m->map + 128;\n");
	} else {
		buf_printf(b, "\t(void)weights_path;\n\tm->w = %s;\n", w->size ? arena_printf(g->arena, "%s_weights_blob", nm) : "NULL");
	}
	if (omp) {
		if (t->max_threads)
			buf_printf(b, "\tm->nth = omp_get_max_threads() < %d ? omp_get_max_threads() : %d;\n", t->max_threads, t->max_threads);
		else
			buf_puts(b, "\tm->nth = omp_get_max_threads();\n");
	} else
		buf_puts(b, "\tm->nth = 1;\n");
	buf_puts(b, "\t*model = m;\n\treturn DOCCC_OK;\n}\n\n");
	buf_printf(b, "int %s_create(%s_t **model)\n{\n\treturn %s_create_from(model, NULL);\n}\n\n", nm, nm, nm);
	/* run */
	buf_printf(b, "int %s_run(%s_t *model", nm, nm);
	for (int i = 0; i < g->ninputs; i++) {
		Container *c = sdfg_c(g, g->inputs[i]);
		buf_printf(b, ", const %s *in%d", storage_type[c->dt], i);
	}
	for (int i = 0; i < g->noutputs; i++) {
		Container *c = sdfg_c(g, g->outputs[i]);
		buf_printf(b, ", %s *out%d", storage_type[c->dt], i);
	}
	buf_puts(b, ")\n{\n\tif (!model");
	for (int i = 0; i < g->ninputs; i++)
		buf_printf(b, " || !in%d", i);
	for (int i = 0; i < g->noutputs; i++)
		buf_printf(b, " || !out%d", i);
	buf_puts(b, ")\n\t\treturn DOCCC_ERR_ARG;\n");
	buf_printf(b, "\tconst void *ins[%d] = {", g->ninputs + 1);
	for (int i = 0; i < g->ninputs; i++)
		buf_printf(b, "%sin%d", i ? ", " : "", i);
	buf_printf(b, "%s};\n\tvoid *outs[%d] = {", g->ninputs ? "" : "0", g->noutputs + 1);
	for (int i = 0; i < g->noutputs; i++)
		buf_printf(b, "%sout%d", i ? ", " : "", i);
	buf_printf(b, "%s};\n", g->noutputs ? "" : "0");
	buf_printf(b, "\tmodel->runs++;\n\treturn %s_forward(model->w, model->ws, model->nth, ins, outs, model->prof);\n}\n\n", nm);
	buf_printf(b, "static int %s_run_generic(void *model, const void *const *ins, void *const *outs)\n{\n", nm);
	buf_puts(b, "\tif (!model || (!ins && ");
	buf_printf(b, "%d) || (!outs && %d))\n\t\treturn DOCCC_ERR_ARG;\n", g->ninputs > 0, g->noutputs > 0);
	for (int i = 0; i < g->ninputs; i++)
		buf_printf(b, "\tif (!ins[%d])\n\t\treturn DOCCC_ERR_ARG;\n", i);
	for (int i = 0; i < g->noutputs; i++)
		buf_printf(b, "\tif (!outs[%d])\n\t\treturn DOCCC_ERR_ARG;\n", i);
	buf_printf(b, "\t%s_t *m = model;\n\tm->runs++;\n\treturn %s_forward(m->w, m->ws, m->nth, ins, outs, m->prof);\n}\n\n", nm, nm);
	/* destroy, strerror, threads, workspace */
	buf_printf(b, "void %s_destroy(%s_t *model)\n{\n\tif (!model)\n\t\treturn;\n", nm, nm);
	if (e.profile)
		buf_printf(b, "\tdouble dc_total = 0;\n\tfor (int i = 0; dc_prof_names[i]; i++)\n\t\tdc_total += model->prof[i];\n"
		              "\tfprintf(stderr, \"%s profile: %%ld runs, %%.3f ms per run\\n\", model->runs, model->runs ? 1e3 * dc_total / model->runs : 0.0);\n"
		              "\tfor (int i = 0; dc_prof_names[i] && model->runs; i++)\n"
		              "\t\tfprintf(stderr, \"%%9.3f ms %%5.1f%%%%  %%s\\n\", 1e3 * model->prof[i] / model->runs, dc_total > 0 ? 100 * model->prof[i] / dc_total : 0.0, dc_prof_names[i]);\n", nm);
	buf_puts(b, "\tif (model->map)\n\t\tmunmap(model->map, model->maplen);\n\tfree(model->ws);\n\tfree(model);\n}\n\n");
	buf_printf(b, "const char *%s_strerror(int status)\n{\n\tswitch (status) {\n\tcase DOCCC_OK: return \"success\";\n"
	              "\tcase DOCCC_ERR_NOMEM: return \"out of memory allocating the workspace\";\n"
	              "\tcase DOCCC_ERR_WEIGHTS: return \"weights file missing, unreadable or not made for this library\";\n"
	              "\tcase DOCCC_ERR_ARG: return \"a NULL model, input or output pointer\";\n"
	              "\tcase DOCCC_ERR_THREADS: return \"thread count not supported by this build (only openmp builds use threads)\";\n"
	              "\tcase DOCCC_ERR_INDEX: return \"index out of range: an index tensor holds an index outside the dimension it indexes\";\n"
	              "\tcase DOCCC_ERR_ZERODIV: return \"integer division by zero\";\n"
	              "\tdefault: return \"unknown status\";\n\t}\n}\n\n", nm);
	buf_printf(b, "int %s_set_num_threads(%s_t *model, int n)\n{\n\tif (!model || n < 1)\n\t\treturn DOCCC_ERR_ARG;\n", nm, nm);
	if (omp)
		buf_puts(b, "\tmodel->nth = n;\n\treturn DOCCC_OK;\n}\n\n");
	else
		buf_puts(b, "\treturn n == 1 ? DOCCC_OK : DOCCC_ERR_THREADS;\n}\n\n");
	buf_printf(b, "size_t %s_workspace_size(void)\n{\n\treturn DC_WORKSPACE_SIZE;\n}\n\n", nm);
	/* descriptor */
	for (int io = 0; io < 2; io++) {
		int n = io ? g->noutputs : g->ninputs;
		int *ids = io ? g->outputs : g->inputs;
		for (int i = 0; i < n; i++) {
			Container *c = sdfg_c(g, ids[i]);
			buf_printf(b, "static const int64_t dc_%s%d_shape[] = {", io ? "out" : "in", i);
			for (int d = 0; d < c->rank; d++) {
				int64_t v = 0;
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
			buf_quote(b, c->origin && *c->origin ? c->origin : c->name);
			buf_printf(b, ", %s, %d, dc_%s%d_shape, %lld, %lld},\n", emit_dtype_macro(c->dt), c->rank, io ? "out" : "in", i,
			           (long long)numel, (long long)(numel * dtype_info[c->dt].size));
		}
		if (!n)
			buf_puts(b, "\t{0, 0, 0, 0, 0, 0},\n");
		buf_puts(b, "};\n");
	}
	buf_printf(b, "\nstatic int dc_create(void **m, const char *p) { return %s_create_from((%s_t **)m, p); }\n", nm, nm);
	buf_printf(b, "static void dc_destroy(void *m) { %s_destroy(m); }\n", nm);
	buf_printf(b, "static int dc_threads(void *m, int n) { return %s_set_num_threads(m, n); }\n\n", nm);
	buf_printf(b, "const doccc_model_desc %s_desc = {\n\tDOCCC_ABI_VERSION, \"%s\", \"%s\", \"%s\", \"%s\", \"%s\",\n", nm, nm,
	           t->name, t->category, DOCCC_VERSION, g->hash);
	buf_printf(b, "\t%d, %d, dc_ins, dc_outs, DC_WORKSPACE_SIZE, %d,\n", g->ninputs, g->noutputs, a->outweights ? 0 : 1);
	buf_printf(b, "\tdc_create, %s_run_generic, dc_destroy, %s_strerror, dc_threads,\n};\n", nm, nm);
	buf_printf(b, "extern const doccc_model_desc doccc_model __attribute__((weak, alias(\"%s_desc\")));\n", nm);
}
