/*
 * emit_cpu.c - the CPU printer: C11 for targets none, sequential and
 * openmp (backends/emit.h has the walker it plugs into).
 *
 * The generated file has, in order: a comment saying how it was made (doccc
 * version, options, hash of the input; no paths or times), small static
 * helpers (NaN-propagating max/min, vector splat and select when the target
 * has SIMD), the step functions, one static function NAME_forward that
 * runs the whole graph by calling them, and the public API of the header
 * (create/run/destroy, ...) plus the descriptor.
 *
 * Maps become for loops with a pragma per schedule: SCHED_PARALLEL an OpenMP
 * parallel for (collapse, static schedule, the handle's thread count),
 * SCHED_UNROLL a full-unroll pragma, SCHED_ROLLED one that forbids unrolling,
 * SCHED_VECTOR explicit vector code in
 * GCC/clang vector extensions (the map steps by the lane count; unit-stride
 * memlets become vector loads and stores, invariant ones broadcasts; an
 * extent that is not a multiple of the lanes ends in one masked vector where
 * the lanes are all float32 (masked_ok), else in a scalar loop over the
 * rest; exp, tanh, sigmoid, SiLU and GELU have vector versions below).
 * A check that fails (emit.c) jumps to the end of forward, or returns from
 * a parallel kernel and leaves the status in forward's dc_err.
 */
#include <math.h>
#include <string.h>

#include "emit.h"

static int cpu_vexpr(Em *e, Buf *b, const Tasklet *t, char *const *a)
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
	case T_FMAX: buf_printf(b, "dc_vsel((%s > %s) | (%s != %s), %s, %s)", a[0], a[1], a[1], a[1], a[0], a[1]); break;
	case T_FMIN: buf_printf(b, "dc_vsel((%s < %s) | (%s != %s), %s, %s)", a[0], a[1], a[1], a[1], a[0], a[1]); break;
	case T_GLU: buf_printf(b, "(%s) * (1.0f / (1.0f + dc_vexp(-(%s))))", a[0], a[1]); break;
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
	case T_ROUND: buf_printf(b, "dc_vround(%s)", a[0]); break;
	case T_DOT2: buf_printf(b, "dc_vdot2(%s, %s)", a[0], a[1]); break;
	case T_DOT4: buf_printf(b, "dc_vdot4acc(dc_splati(0), %s, %s)", a[0], a[1]); break; /* emit.c adds to the sum in place */
	case T_AND: buf_printf(b, "%s & %s", a[0], a[1]); break; /* int32 lanes (schedule.c) */
	case T_SHL: buf_printf(b, "%s << %s", a[0], a[1]); break;
	case T_SHR: buf_printf(b, "%s >> %s", a[0], a[1]); break;
	case T_CAST: /* int32 lanes to float32; float32 (integral, in range: a quantization) to 8-bit lanes */
		buf_printf(b, "__builtin_convertvector(%s, %s)", a[0], emit_vtype(e->vdt));
		break;
	case T_CLAMP: {
		Buf lo = {0}, hi = {0};
		emit_double(&lo, t->p[0], DT_F32);
		emit_double(&hi, t->p[1], DT_F32);
		buf_printf(b, "dc_vclamp(%s, %s, %s)", a[0], lo.s, hi.s);
		buf_free(&lo);
		buf_free(&hi);
		break;
	}
	default:
		return 0;
	}
	return 1;
}

/* Is e a multiple of L in every iteration? The vector map's variable is
 * (it runs 0, L, 2L, ...); other variables are not known to be. */
static int ex_multiple(const Expr *x, int64_t L, int vv)
{
	switch (x->k) {
	case E_INT:
		return x->v % L == 0;
	case E_SYM:
		return x->v == vv;
	case E_ADD:
		for (int i = 0; i < x->n; i++)
			if (!ex_multiple(x->a[i], L, vv))
				return 0;
		return 1;
	case E_MUL:
		for (int i = 0; i < x->n; i++)
			if (ex_multiple(x->a[i], L, vv))
				return 1;
		return 0;
	default:
		return 0;
	}
}

/* A vector access of a local (declared aligned to 64 bytes) at an offset
 * that is a whole number of vectors in every iteration: an aligned load or
 * store. Anything else (every other container, a local read at a sliding
 * offset such as a depthwise tap) is unaligned. */
static int vec_aligned(Em *e, const Memlet *m)
{
	Container *c = sdfg_c(e->g, m->data);
	if (sdfg_c(e->g, sdfg_root_of(e->g, m->data))->kind != CK_LOCAL)
		return 0;
	for (int d = 0; d < c->rank; d++) {
		int64_t st;
		if (!ex_isint(c->stride[d], &st))
			return 0;
		if (st % e->lanes != 0 && !ex_multiple(m->idx[d], e->lanes, e->vecvar))
			return 0;
	}
	return 1;
}

/* A SCHED_VECTOR operand: constants and invariant memlets broadcast,
 * unit-stride memlets loaded as one vector (float16/bfloat16 widened to
 * float32 lanes). */
static void cpu_voperand(Em *e, Buf *b, const Operand *o)
{
	if (o->kind == OPD_CONST) {
		buf_puts(b, e->vdt == DT_I32 ? "dc_splati(" : "dc_splat(");
		emit_double(b, o->c, e->vdt == DT_I32 ? DT_I32 : DT_F32);
		buf_puts(b, ")");
		return;
	}
	Dtype dt = sdfg_c(e->g, o->m.data)->dt;
	int i32 = dt == DT_I32; /* int32 lanes (an integer tile, its packed operands) */
	if ((dt == DT_I8 || dt == DT_U8) && e->vdt == DT_I32) { /* int4 weights' bytes, widened to int32 lanes */
		int v = emit_uses_vec(e, &o->m);
		buf_printf(b, v ? "__builtin_convertvector(*(const %s *)&" : "dc_splati((int32_t)", dt == DT_I8 ? "dc_vs8" : "dc_vu8");
		emit_lvalue(e, b, &o->m);
		buf_puts(b, v ? ", dc_vi)" : ")");
		return;
	}
	if (dt == DT_I8 || dt == DT_U8) {
		/* int8 weights, quantized values widen (the schedule took unit-stride or invariant ones) */
		int v = emit_uses_vec(e, &o->m);
		buf_puts(b, v ? (dt == DT_I8 ? "dc_vi82f(&" : "dc_vu82f(&") : "dc_splat((float)");
		emit_lvalue(e, b, &o->m);
		buf_puts(b, ")");
		return;
	}
	if (dt == DT_BF16 || dt == DT_F16) {
		/* half loads widen (the schedule took unit-stride or invariant ones) */
		int v = emit_uses_vec(e, &o->m);
		buf_printf(b, "%s(%s", v ? (dt == DT_BF16 ? "dc_vb2f" : "dc_vh2f") : "dc_splat",
		           v ? "&" : dt == DT_BF16 ? "dc_b2f(" : "dc_h2f(");
		emit_lvalue(e, b, &o->m);
		buf_puts(b, v ? ")" : "))");
		return;
	}
	if (emit_uses_vec(e, &o->m) && emit_vec_stride(e, &o->m) != 1) { /* float32 only (schedule.c) */
		buf_puts(b, e->vrem ? "dc_vgather_n(&" : "dc_vgather(&");
		emit_lvalue(e, b, &o->m);
		buf_printf(b, ", %lld", (long long)emit_vec_stride(e, &o->m));
		if (e->vrem)
			buf_printf(b, ", %s", e->vrem);
		buf_puts(b, ")");
	} else if (emit_uses_vec(e, &o->m) && e->vrem) { /* float32 only (masked_ok) */
		buf_puts(b, "dc_vload_n(&");
		emit_lvalue(e, b, &o->m);
		buf_printf(b, ", %s)", e->vrem);
	} else if (emit_uses_vec(e, &o->m)) {
		int al = vec_aligned(e, &o->m);
		buf_printf(b, "(*(%s *)&", i32 ? (al ? "const dc_vi" : "const dc_viu") : al ? "dc_vf" : "const dc_vfu");
		emit_lvalue(e, b, &o->m);
		buf_puts(b, ")");
	} else {
		buf_puts(b, i32 ? "dc_splati(" : "dc_splat(");
		emit_lvalue(e, b, &o->m);
		buf_puts(b, ")");
	}
}

static const char *cpu_vcast(Em *e, const Memlet *m)
{
	Dtype dt = sdfg_c(e->g, m->data)->dt;
	if (dt == DT_I32)
		return vec_aligned(e, m) ? "dc_vi" : "dc_viu";
	if (dt == DT_U8 || dt == DT_I8) /* a quantization's store */
		return dt == DT_U8 ? "dc_vu8" : "dc_vs8";
	return vec_aligned(e, m) ? "dc_vf" : "dc_vfu";
}

/* The statement that fails the run from inside the loops: forward jumps
 * to its end, a parallel kernel returns and leaves the status for forward. */
static const char *cpu_fail(Em *e, const char *code)
{
	Arena *a = e->g->arena;
	return e->inkern ? arena_printf(a, "{ __atomic_store_n(dc_err, %s, __ATOMIC_RELAXED); return; }", code)
	                 : arena_printf(a, "{ dc_err = %s; goto dc_fail; }", code);
}

static void cpu_step_begin(Em *e, int check)
{
	emit_line(e, "(void)dc_nth;");
	if (check)
		emit_line(e, "int dc_err = DOCCC_OK;");
}

static void cpu_step_end(Em *e, Buf *body, int check)
{
	if (check) {
		emit_line(e, "return DOCCC_OK;");
		buf_puts(body, "dc_fail:\n\treturn dc_err;\n");
	}
}


/* " if(work >= min)" for a parallel map whose work depends on the run-time
 * dims (the schedule pass's estimate): small dims run it on one thread,
 * as the specialized library's schedule would. */
static const char *par_if(Em *e, const Node *n)
{
	if (!n->par_work)
		return "";
	Buf w = {0};
	emit_expr(e, &w, n->par_work);
	const char *s = arena_printf(e->g->arena, " if((%s) >= %lldLL)", w.s, (long long)n->par_min);
	buf_free(&w);
	return s;
}

/* Can vector map n, whose body is the one block b, end in one masked
 * vector rather than a scalar loop over the rest? Where its lanes are all
 * float32: every tasklet but the indices (scalar in a vector body) computes
 * in float32, every access that moves with the map is a float32 one, every
 * store sets or adds (a scattered one sets). The lanes past the end load
 * zeros, which no float operation traps on, and are not stored. */
static int masked_ok(Em *e, Node *n, Node *b)
{
	int saved = e->vecvar, ok = 1;
	e->vecvar = n->var;
	for (int i = 0; i < b->nts && ok; i++) {
		const Tasklet *t = &b->ts[i];
		if (t->code == T_INDEX || t->bind >= 0)
			continue;
		ok &= t->dt == DT_F32 && t->code != T_ASSERT;
		for (int j = 0; j < t->nin; j++) {
			const Operand *o = &t->in[j];
			if (o->kind == OPD_EXPR)
				ok &= !ex_uses(o->e, n->var);
			else if (o->kind == OPD_MEM && emit_uses_vec(e, &o->m))
				ok &= e->g->cs[o->m.data].dt == DT_F32;
		}
		if (t->store)
			ok &= emit_uses_vec(e, &t->out) && e->g->cs[t->out.data].dt == DT_F32 &&
			      (t->wcr == W_NONE || (t->wcr == W_SUM && emit_vec_stride(e, &t->out) == 1));
	}
	e->vecvar = saved;
	return ok;
}

/* Does vector map n (body block b) have a rest and end it masked? */
static int masked_tail(Em *e, Node *n, Node *b)
{
	int64_t l0, h0;
	if (e->lanes <= 1 || (ex_isint(n->lo, &l0) && ex_isint(n->hi, &h0) && (h0 - l0) % e->lanes == 0))
		return 0;
	return masked_ok(e, n, b);
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
	emit_touched(g, n, set);
	int id = e->nkern++;
	Buf params = {0}, args = {0};
	for (int c = 0; c < g->ncs; c++) {
		Container *ct = &g->cs[c];
		if (!set[c] || ct->kind == CK_LOCAL)
			continue;
		int ro = emit_readonly(ct);
		buf_printf(&params, "%s%s%s *restrict v_%s", params.len ? ", " : "", ro ? "const " : "", emit_storage_type[ct->dt], e->cn[c]);
		buf_printf(&args, "%sv_%s", args.len ? ", " : "", e->cn[c]);
	}
	for (int i = 0; i < k; i++) {
		const char *v = e->sn[maps[i]->var];
		buf_printf(&params, "%sint64_t %s", params.len ? ", " : "", v);
		buf_printf(&args, "%s%s", args.len ? ", " : "", v);
	}
	for (int s = 0; s < g->nsyms; s++) /* run-time bounds computed before the nest */
		if (e->esc[s] && node_uses_sym(g, n, s)) {
			buf_printf(&params, ", const int64_t %s", e->sn[s]);
			buf_printf(&args, ", %s", e->sn[s]);
		}
	emit_dims_params(g, &params, &args, ", ");
	int check = emit_has_check(n);
	if (check) {
		buf_printf(&params, ", int *dc_err");
		buf_printf(&args, ", &dc_err");
	}
	Buf *saved = e->b;
	int sind = e->ind;
	e->b = e->kern;
	e->ind = 0;
	e->inkern = 1;
	emit_line(e, "static void %s_k%d(%s)", e->nm, id, params.s);
	emit_line(e, "{");
	e->ind++;
	emit_dims_assume(e);
	for (int i = 0; i < k; i++)
		emit_locals(e, maps[i]);
	emit_node(e, maps[k - 1]->body);
	e->ind--;
	emit_line(e, "}\n");
	e->b = saved;
	e->ind = sind;
	e->inkern = 0;
	emit_line(e, "#pragma omp parallel for collapse(%d) schedule(static) num_threads(dc_nth)%s", k, par_if(e, n));
	for (int i = 0; i < k; i++) {
		Buf lo = {0}, hi = {0};
		const char *v = e->sn[maps[i]->var];
		emit_expr(e, &lo, maps[i]->lo);
		emit_expr(e, &hi, maps[i]->hi);
		emit_line(e, "for (int64_t %s = %s; %s < %s; %s += %lld)", v, lo.s, v, hi.s, v, (long long)maps[i]->step);
		buf_free(&lo);
		buf_free(&hi);
		e->ind++;
	}
	emit_line(e, "%s_k%d(%s);", e->nm, id, args.s);
	e->ind -= k;
	if (check)
		emit_line(e, "if (dc_err) goto dc_fail;");
	buf_free(&params);
	buf_free(&args);
}

static void cpu_loop(Em *e, Node *n)
{
	if (n->sched == SCHED_PARALLEL && n->kind == N_MAP) {
		emit_parallel(e, n);
		return;
	}
	const char *v = e->sn[n->var];
	Buf lo = {0}, hi = {0};
	emit_expr(e, &lo, n->lo);
	emit_expr(e, &hi, n->hi);
	int64_t step = n->step;
	int vec = n->sched == SCHED_VECTOR && e->lanes > 1 && e->vecvar < 0;
	if (vec)
		step = e->lanes;
	if (n->sched == SCHED_PARALLEL)
		emit_line(e, "#pragma omp parallel for collapse(%d) schedule(static) num_threads(dc_nth)%s", n->collapse > 0 ? n->collapse : 1,
		          par_if(e, n));
	else if (n->sched == SCHED_UNROLL)
		emit_line(e, "#pragma clang loop unroll(full)");
	else if (n->sched == SCHED_ROLLED)
		emit_line(e, "#pragma clang loop unroll(disable)");
	else if (n->sched == SCHED_VECTOR && !vec)
		emit_line(e, "#pragma clang loop vectorize(enable)");
	int64_t l0, h0;
	int tail = vec && !(ex_isint(n->lo, &l0) && ex_isint(n->hi, &h0) && (h0 - l0) % step == 0);
	if (tail) {
		/* whole vectors, then the scalar remainder */
		emit_line(e, "{");
		e->ind++;
		emit_line(e, "int64_t %s = %s;", v, lo.s);
		emit_line(e, "for (; %s + %lld <= %s; %s += %lld) {", v, (long long)step, hi.s, v, (long long)step);
	} else
		emit_line(e, "for (int64_t %s = %s; %s < %s; %s += %lld) {", v, lo.s, v, hi.s, v, (long long)step);
	e->ind++;
	emit_locals(e, n);
	int saved = e->vecvar;
	if (vec)
		e->vecvar = n->var;
	emit_node(e, n->body);
	e->vecvar = saved;
	e->ind--;
	emit_line(e, "}");
	if (tail && n->body->nkids == 1 && n->body->kids[0]->kind == N_BLOCK && masked_ok(e, n, n->body->kids[0])) {
		/* the rest, fewer than the lanes, as one masked vector */
		emit_line(e, "if (%s < %s) {", v, hi.s);
		e->ind++;
		emit_line(e, "const int64_t dc_left = %s - %s;", hi.s, v);
		emit_locals(e, n);
		e->vecvar = n->var;
		e->vrem = "dc_left";
		emit_node(e, n->body);
		e->vecvar = saved;
		e->vrem = NULL;
		e->ind--;
		emit_line(e, "}");
		e->ind--;
		emit_line(e, "}");
	} else if (tail) {
		emit_line(e, "for (; %s < %s; %s += 1) {", v, hi.s, v);
		e->ind++;
		emit_locals(e, n);
		emit_node(e, n->body);
		e->ind--;
		emit_line(e, "}");
		e->ind--;
		emit_line(e, "}");
	}
	buf_free(&lo);
	buf_free(&hi);
}


/* Does pred hold for a vector map below n (the map and its body's block)? */
static int any_vector_map(Em *e, Node *n, int (*pred)(Em *e, Node *map, Node *b))
{
	if (n->kind == N_SEQ) {
		for (int i = 0; i < n->nkids; i++)
			if (any_vector_map(e, n->kids[i], pred))
				return 1;
		return 0;
	}
	if (n->kind == N_BLOCK)
		return 0;
	if (n->sched != SCHED_VECTOR || n->body->nkids != 1 || n->body->kids[0]->kind != N_BLOCK)
		return any_vector_map(e, n->body, pred);
	return pred(e, n, n->body->kids[0]);
}

/* Does vector map n gather or scatter (a strided operand)? */
static int strided(Em *e, Node *n, Node *b)
{
	int saved = e->vecvar, any = 0;
	e->vecvar = n->var;
	for (int i = 0; i < b->nts && !any; i++) {
		Tasklet *t = &b->ts[i];
		for (int j = 0; j < t->nin; j++)
			any |= t->in[j].kind == OPD_MEM && emit_uses_vec(e, &t->in[j].m) && emit_vec_stride(e, &t->in[j].m) != 1;
		any |= t->store && emit_uses_vec(e, &t->out) && emit_vec_stride(e, &t->out) != 1;
	}
	e->vecvar = saved;
	return any;
}

/* Does vector map n compute in, load or store int32 lanes (an integer
 * tile, an int32 tensor cast to float)? */
static int int_lanes(Em *e, Node *n, Node *b)
{
	(void)n;
	const Sdfg *g = e->g;
	for (int i = 0; i < b->nts; i++) {
		const Tasklet *t = &b->ts[i];
		if (t->bind >= 0 || t->code == T_INDEX)
			continue;
		if (t->dt == DT_I32 || (t->store && g->cs[t->out.data].dt == DT_I32))
			return 1;
		for (int j = 0; j < t->nin; j++)
			if (t->in[j].kind == OPD_MEM && g->cs[t->in[j].m.data].dt == DT_I32)
				return 1;
	}
	return 0;
}

/* Does the program hold data of type dt (float16 and bfloat16 together),
 * whose vector loads widen? */
static int has_dt(const Sdfg *g, Dtype dt)
{
	int half = dt == DT_F16 || dt == DT_BF16;
	for (int i = 0; i < g->ncs; i++)
		if (g->cs[i].dt == dt || (half && (g->cs[i].dt == DT_F16 || g->cs[i].dt == DT_BF16)))
			return 1;
	return 0;
}

/* static inline TYPE NAME(ELEM s): L lanes of s (head: "dc_vf dc_splat(float"). */
static void splat(Buf *b, const char *head, int L)
{
	const char *type_end = strchr(head, ' ');
	buf_printf(b, "static inline %s s) { return (%.*s){", head, (int)(type_end - head), head);
	for (int i = 0; i < L; i++)
		buf_puts(b, i ? ", s" : "s");
	buf_puts(b, "}; }\n");
}

static void emit_helpers(Em *e)
{
	Buf *b = e->b;
	buf_puts(b, rt_body("scalar.h"));
	if (e->lanes > 1) {
		int L = e->lanes;
		buf_printf(b, "#define DC_LANES %d\n", L);
		buf_printf(b, "typedef float dc_vf __attribute__((vector_size(%d)));\n", L * 4);
		buf_printf(b, "typedef float dc_vfu __attribute__((vector_size(%d), aligned(4)));\n", L * 4);
		buf_printf(b, "typedef int32_t dc_vi __attribute__((vector_size(%d)));\n", L * 4);
		splat(b, "dc_vf dc_splat(float", L);
		buf_puts(b, "static inline dc_vf dc_vsel(dc_vi m, dc_vf a, dc_vf b) { return (dc_vf)(((dc_vi)a & m) | ((dc_vi)b & ~m)); }\n"
		            "static inline dc_vf dc_vmax(dc_vf a, dc_vf b) { return dc_vsel((a > b) | (a != a), a, b); }\n"
		            "static inline dc_vf dc_vmin(dc_vf a, dc_vf b) { return dc_vsel((a < b) | (a != a), a, b); }\n"
		            "static inline dc_vf dc_vrelu(dc_vf a) { return dc_vsel(a < 0, dc_splat(0), a); }\n"
		            "static inline dc_vf dc_vclamp(dc_vf a, float lo, float hi) { a = dc_vsel(a < lo, dc_splat(lo), a); return dc_vsel(a > hi, dc_splat(hi), a); }\n");
		if (any_vector_map(e, e->g->root, int_lanes)) {
			/* int32 lanes; dot2: pmaddwd, which clang fuses with the sum
			 * into vpdpwssd where -march has AVX-VNNI or AVX512-VNNI */
			buf_printf(b, "typedef int32_t dc_viu __attribute__((vector_size(%d), aligned(4)));\n", L * 4);
			buf_printf(b, "typedef int16_t dc_vs __attribute__((vector_size(%d)));\n", L * 4);
			splat(b, "dc_vi dc_splati(int32_t", L);
			buf_printf(b, "static inline dc_vi dc_vdot2(dc_vi a, dc_vi b)\n{\n"
			              "#if defined(__AVX512BW__) && %d == 16\n"
			              "\treturn (dc_vi)__builtin_ia32_pmaddwd512((dc_vs)a, (dc_vs)b);\n"
			              "#elif defined(__AVX2__) && %d == 8\n"
			              "\treturn (dc_vi)__builtin_ia32_pmaddwd256((dc_vs)a, (dc_vs)b);\n"
			              "#elif defined(__SSE2__) && %d == 4\n"
			              "\treturn (dc_vi)__builtin_ia32_pmaddwd128((dc_vs)a, (dc_vs)b);\n"
			              "#else\n"
			              "\treturn ((a << 16) >> 16) * ((b << 16) >> 16) + (a >> 16) * (b >> 16);\n"
			              "#endif\n}\n",
			           L, L, L);
			/* dot4: vpdpbusd (c plus a's unsigned bytes times b's signed
			 * ones, four to a lane) where -march has it, else two pmaddwd
			 * over the even and the odd bytes as int16 lanes: exact, for
			 * the tests of int8_dot: quads on machines without VNNI; on
			 * aarch64 (its own lines, so x86 sources stay as they
			 * were): usdot (i8mm) is the same product; sdot (dotprod)
			 * takes a's bytes less 128 as signed ones and adds back 128
			 * times b's sum (an sdot of -128s) */
			int arm = e->t->arch == ARCH_AARCH64;
			if (arm)
				buf_puts(b, "#if defined(__ARM_FEATURE_DOTPROD) || defined(__ARM_FEATURE_MATMUL_INT8)\n#include <arm_neon.h>\n#endif\n");
			buf_printf(b, "static inline dc_vi dc_vdot4acc(dc_vi c, dc_vi a, dc_vi b)\n{\n"
			              "#if defined(__AVX512VNNI__) && %d == 16\n"
			              "\treturn __builtin_ia32_vpdpbusd512(c, a, b);\n"
			              "#elif (defined(__AVXVNNI__) || (defined(__AVX512VNNI__) && defined(__AVX512VL__))) && %d == 8\n"
			              "\treturn __builtin_ia32_vpdpbusd256(c, a, b);\n"
			              "#elif (defined(__AVXVNNI__) || (defined(__AVX512VNNI__) && defined(__AVX512VL__))) && %d == 4\n"
			              "\treturn __builtin_ia32_vpdpbusd128(c, a, b);\n",
			           L, L, L);
			if (arm)
				buf_puts(b, "#elif defined(__ARM_FEATURE_MATMUL_INT8)\n"
				            "\treturn vusdotq_s32(c, (uint8x16_t)a, (int8x16_t)b);\n"
				            "#elif defined(__ARM_FEATURE_DOTPROD)\n"
				            "\tdc_vi m = dc_splati((int32_t)0x80808080u);\n"
				            "\treturn vdotq_s32(c, (int8x16_t)(a ^ m), (int8x16_t)b) - vdotq_s32(dc_splati(0), (int8x16_t)m, (int8x16_t)b);\n");
			buf_puts(b, "#else\n"
			            "\tdc_vi m = dc_splati(0x00ff00ff);\n"
			            "\treturn c + dc_vdot2(a & m, (dc_vi)(((dc_vs)b << 8) >> 8)) + dc_vdot2((a >> 8) & m, (dc_vi)((dc_vs)b >> 8));\n"
			            "#endif\n}\n");
		}
		if (has_dt(e->g, DT_I8))
			buf_printf(b, "static inline dc_vf dc_vi82f(const int8_t *p) { dc_vf v; for (int i = 0; i < %d; i++) v[i] = p[i]; return v; }\n", L);
		if (has_dt(e->g, DT_U8) || has_dt(e->g, DT_I8))
			buf_printf(b, "typedef uint8_t dc_vu8 __attribute__((vector_size(%d), aligned(1)));\n"
			              "typedef int8_t dc_vs8 __attribute__((vector_size(%d), aligned(1)));\n", L, L);
		if (has_dt(e->g, DT_U8))
			buf_printf(b, "static inline dc_vf dc_vu82f(const uint8_t *p) { return __builtin_convertvector(*(const dc_vu8 *)p, dc_vf); }\n");
		if ((has_dt(e->g, DT_U8) || has_dt(e->g, DT_I8)) && any_vector_map(e, e->g->root, strided))
			buf_printf(b, "static inline void dc_vscatteru8(uint8_t *p, int64_t s, dc_vu8 v) { for (int i = 0; i < %d; i++) p[i * s] = v[i]; }\n"
			              "static inline void dc_vscatters8(int8_t *p, int64_t s, dc_vs8 v) { for (int i = 0; i < %d; i++) p[i * s] = v[i]; }\n",
			           L, L);
		if (has_dt(e->g, DT_F16))
			buf_printf(b, "static inline dc_vf dc_vb2f(const uint16_t *p) { dc_vf v; for (int i = 0; i < %d; i++) v[i] = dc_b2f(p[i]); return v; }\n"
			              "static inline dc_vf dc_vh2f(const uint16_t *p) { dc_vf v; for (int i = 0; i < %d; i++) v[i] = dc_h2f(p[i]); return v; }\n",
			           L, L);
		if (any_vector_map(e, e->g->root, masked_tail)) {
			/* the first n lanes (n < L) loaded, the rest zero; stored */
			Buf iota = {0};
			for (int i = 0; i < L; i++)
				buf_printf(&iota, "%s%d", i ? ", " : "", i);
			buf_printf(b, "static inline dc_vf dc_vload_n(const float *p, int64_t n)\n{\n"
			              "#if defined(__AVX512F__) && %d == 16\n"
			              "\treturn __builtin_ia32_loadups512_mask(p, dc_splat(0), (unsigned short)((1u << n) - 1));\n"
			              "#elif defined(__AVX__) && %d == 8\n"
			              "\treturn __builtin_ia32_maskloadps256((const dc_vf *)p, (dc_vi){%s} < (int32_t)n);\n"
			              "#elif defined(__AVX__) && %d == 4\n"
			              "\treturn __builtin_ia32_maskloadps((const dc_vf *)p, (dc_vi){%s} < (int32_t)n);\n"
			              "#else\n"
			              "\tdc_vf v = dc_splat(0);\n\t__builtin_memcpy(&v, p, (size_t)n * sizeof(float));\n\treturn v;\n"
			              "#endif\n}\n",
			           L, L, iota.s, L, iota.s);
			buf_printf(b, "static inline void dc_vstore_n(float *p, dc_vf v, int64_t n)\n{\n"
			              "#if defined(__AVX512F__) && %d == 16\n"
			              "\t__builtin_ia32_storeups512_mask(p, v, (unsigned short)((1u << n) - 1));\n"
			              "#elif defined(__AVX__) && %d == 8\n"
			              "\t__builtin_ia32_maskstoreps256((dc_vf *)p, (dc_vi){%s} < (int32_t)n, v);\n"
			              "#elif defined(__AVX__) && %d == 4\n"
			              "\t__builtin_ia32_maskstoreps((dc_vf *)p, (dc_vi){%s} < (int32_t)n, v);\n"
			              "#else\n"
			              "\t__builtin_memcpy(p, &v, (size_t)n * sizeof(float));\n"
			              "#endif\n}\n",
			           L, L, iota.s, L, iota.s);
			buf_free(&iota);
		}
		buf_puts(b, rt_body("vmath.h"));
		if (any_vector_map(e, e->g->root, strided))
			buf_printf(b, "static inline dc_vf dc_vgather(const float *p, int64_t s) { dc_vf v; for (int i = 0; i < %d; i++) v[i] = p[i * s]; return v; }\n"
			              "static inline void dc_vscatter(float *p, int64_t s, dc_vf v) { for (int i = 0; i < %d; i++) p[i * s] = v[i]; }\n",
			           L, L);
		if (any_vector_map(e, e->g->root, strided) && any_vector_map(e, e->g->root, masked_tail))
			buf_puts(b, "static inline dc_vf dc_vgather_n(const float *p, int64_t s, int64_t n) { dc_vf v = dc_splat(0); for (int i = 0; i < n; i++) v[i] = p[i * s]; return v; }\n"
			            "static inline void dc_vscatter_n(float *p, int64_t s, dc_vf v, int64_t n) { for (int i = 0; i < n; i++) p[i * s] = v[i]; }\n");
	}
	buf_puts(b, "\n");
}


/* The hook's call after top-level step i: with --values, the pointers
 * of its values (emit_node_values), as the step's call passes them. */
static void emit_hook_after(Em *e, int i, int *ids)
{
	Sdfg *g = e->g;
	int n = e->values ? emit_node_values(e, i, ids, g->ncs) : 0;
	if (!n) {
		emit_line(e, "if (dc_hk->fn) dc_hk->fn(dc_hk->user, %d, 1, NULL);", i);
		return;
	}
	Buf v = {0};
	for (int k = 0; k < n; k++) {
		Container *c = sdfg_c(g, ids[k]);
		switch (c->kind) {
		case CK_STATE: buf_printf(&v, "dc_st + %lld", (long long)c->sofs); break;
		case CK_INPUT: buf_printf(&v, "dc_in[%d]", c->io); break;
		case CK_OUTPUT: buf_printf(&v, "dc_out[%d]", c->io); break;
		default: /* CK_TRANSIENT */
			if (c->aofs == -2)
				buf_printf(&v, "dc_ws + dc_ofs[%d]", c->aslot);
			else
				buf_printf(&v, "dc_ws + %lld", (long long)c->aofs);
			break;
		}
		buf_puts(&v, k + 1 < n ? ", " : "");
	}
	emit_line(e, "if (dc_hk->fn) {");
	emit_line(e, "\tconst void *const dc_v[] = {%s};", v.s);
	emit_line(e, "\tdc_hk->fn(dc_hk->user, %d, 1, dc_v);", i);
	emit_line(e, "}");
	buf_free(&v);
}

static void emit_forward(Em *e)
{
	Sdfg *g = e->g;
	/* forward returns DOCCC_OK, or DOCCC_ERR_INDEX / DOCCC_ERR_ZERODIV from a check */
	e->checks = emit_has_check(g->root);
	emit_line(e, "static int %s_forward(const unsigned char *dc_W, unsigned char *dc_ws,%s int dc_nth,", e->nm,
	          g->nstates ? " unsigned char *dc_st," : "");
	const char *hk = e->hooks ? ", const dc_hook_t *dc_hk" : "";
	if (g->ndims)
		emit_line(e, "\tconst void *const *dc_in, void *const *dc_out, double *dc_prof, const int64_t *dc_dims, const int64_t *dc_ofs%s)", hk);
	else
		emit_line(e, "\tconst void *const *dc_in, void *const *dc_out, double *dc_prof%s)", hk);
	emit_line(e, "{");
	e->ind++;
	emit_line(e, "(void)dc_W; (void)dc_ws; (void)dc_nth; (void)dc_in; (void)dc_out; (void)dc_prof;");
	if (g->ndims) {
		emit_line(e, "(void)dc_ofs;");
		emit_dims_locals(e, "dc_dims");
	}
	if (e->checks)
		emit_line(e, "int dc_err = DOCCC_OK;");
	if (e->profile)
		emit_line(e, "struct timespec dc_t0, dc_t1;");
	unsigned char *set = arena_alloc(g->arena, (size_t)g->ncs + 1);
	int *ids = arena_alloc(g->arena, sizeof(int) * (size_t)(g->ncs + 1));
	for (int i = 0; i < g->root->nkids; i++) {
		Node *k = g->root->kids[i];
		memset(set, 0, (size_t)g->ncs + 1);
		emit_touched(g, k, set);
		emit_line(e, "{ /* %s */", emit_comment(e->g->arena, k->label && *k->label ? k->label : "?"));
		e->top = k->label;
		e->ind++;
		if (e->hooks)
			emit_line(e, "if (dc_hk->fn) dc_hk->fn(dc_hk->user, %d, 0, NULL);", i);
		if (e->profile)
			emit_line(e, "clock_gettime(CLOCK_MONOTONIC, &dc_t0);");
		emit_step(e, k, set);
		if (e->profile)
			emit_line(e, "clock_gettime(CLOCK_MONOTONIC, &dc_t1); dc_prof[%d] += (dc_t1.tv_sec - dc_t0.tv_sec) + 1e-9 * (dc_t1.tv_nsec - dc_t0.tv_nsec);", i);
		if (e->hooks)
			emit_hook_after(e, i, ids);
		e->ind--;
		emit_line(e, "}");
	}
	if (e->checks) {
		e->ind--;
		emit_line(e, "dc_fail:");
		e->ind++;
		emit_line(e, "return dc_err;");
	} else
		emit_line(e, "return DOCCC_OK;");
	e->ind--;
	emit_line(e, "}");
	buf_puts(e->b, "\n");
}

/* A host build of a GPU target (the model has an op without a GPU
 * expansion) rejects device memory, as docc rejects GPU tensors then:
 * through the CUDA driver's pointer query when a driver is loaded in the
 * process (without one no device memory exists), or the simulation's
 * address range for --simulate builds. */
static void cpu_reject_device(Em *e)
{
	Sdfg *g = e->g;
	Buf *b = e->b;
	const char *nm = e->nm;
	buf_puts(b, "#include <stdio.h>\n#include <dlfcn.h>\n");
	buf_puts(b, "static int dc_on_device(const void *p)\n{\n");
	if (e->t->simulate)
		buf_puts(b, "\treturn (uint64_t)(uintptr_t)p - 0x3e0000000000ull < (1ull << 40); /* gpu_sim.h's device range */\n}\n");
	else if (e->t->fallback == TG_CUDA)
		buf_puts(b, "\tvoid *h = dlopen(\"libcuda.so.1\", RTLD_NOW | RTLD_NOLOAD);\n\tif (!h)\n\t\treturn 0;\n"
		            "\tint (*attr)(void *, int, unsigned long long) = (int (*)(void *, int, unsigned long long))dlsym(h, \"cuPointerGetAttribute\");\n"
		            "\tunsigned int type = 0;\n\t/* CU_POINTER_ATTRIBUTE_MEMORY_TYPE (2) is CU_MEMORYTYPE_DEVICE (2) */\n"
		            "\tint dev = attr && attr(&type, 2, (unsigned long long)(uintptr_t)p) == 0 && type == 2;\n\tdlclose(h);\n\treturn dev;\n}\n");
	else
		buf_puts(b, "\t(void)p; /* HIP: no stable driver-level query to reach without the runtime */\n\treturn 0;\n}\n");
	buf_printf(b, "static int dc_reject_device(%s_t *m, const void *const *ins, void *const *outs)\n{\n", nm);
	for (int io = 0; io < 2; io++) {
		int n = io ? g->noutputs : g->ninputs;
		int *ids = io ? g->outputs : g->inputs;
		for (int i = 0; i < n; i++) {
			Container *c = sdfg_c(g, ids[i]);
			buf_printf(b, "\tif (dc_on_device(%s[%d])) {\n\t\tsnprintf(m->msg, sizeof m->msg, \"%s: %s %d (%%s) is GPU memory, but this %s "
			              "library runs on the host (an op has no GPU expansion): pass host memory\", ", io ? "outs" : "ins", i, nm,
			           io ? "output" : "input", i, e->t->name);
			emit_message(b, c->origin && *c->origin ? c->origin : c->name);
			buf_puts(b, ");\n\t\treturn 1;\n\t}\n");
		}
	}
	buf_puts(b, "\t(void)m; (void)ins; (void)outs;\n\treturn 0;\n}\n\n");
}


static void cpu_emit_file(Em *ep, const BuildArgs *a, const Blob *w)
{
	Em e = *ep;
	e.api = "DC_BASE ";
	Sdfg *g = e.g;
	const Target *t = e.t;
	Buf *b = e.b;
	const char *nm = g->name;
	int omp = t->threads;
	buf_printf(b, "/*\n * %s.c - generated by doccc %s; do not edit.\n * target %s, category %s, -march=%s\n"
	              " * options: %s\n * input sha256 %s\n */\n",
	           nm, DOCCC_VERSION, t->name, t->category, !backend_of(t)->simd ? "(default)" : emit_comment(g->arena, t->march),
	           emit_comment(g->arena, a->cmdline), g->hash);
	buf_puts(b, "#define _DEFAULT_SOURCE 1\n#include <time.h>\n#include <math.h>\n#include <stdint.h>\n#include <stdlib.h>\n#include <string.h>\n"
	            "#include <fcntl.h>\n#include <sys/mman.h>\n#include <sys/stat.h>\n#include <unistd.h>\n");
	if (omp)
		buf_puts(b, "#include <omp.h>\n");
	buf_printf(b, "#include \"%s.h\"\n\n", nm);
	buf_printf(b, "#define DC_NAME \"%s\" /* the model's name, for the runtime's messages */\n", nm);
	buf_puts(b, "static const char dc_march[] = ");
	emit_message(b, !backend_of(t)->simd ? "its C compiler's default target" : arena_printf(g->arena, "-march=%s", t->march));
	buf_puts(b, ";\n");
	buf_puts(b, rt_body(arch_of(t)->cpu_check));
	emit_helpers(&e);
	Buf kern = {0}, fwd = {0};
	e.kern = &kern;
	e.b = &fwd;
	if (e.hooks)
		emit_hook_type(&e);
	emit_forward(&e);
	e.b = b;
	if (kern.len)
		buf_puts(b, kern.s);
	buf_puts(b, fwd.s);
	buf_free(&kern);
	buf_free(&fwd);

	/* The API. */
	buf_printf(b, "struct %s {\n\tunsigned char *ws;\n\tconst unsigned char *w;\n\tint nth;\n\tvoid *map;\n\tsize_t maplen;\n"
	              "\tlong runs;\n\tdouble prof[%d];\n\tchar msg[256];\n", nm, g->root->nkids + 1);
	if (g->ndims)
		buf_printf(b, "\tint64_t dims[%d];\n\tint64_t ofs[%d];\n\tsize_t wscap;\n\tint dims_set;\n\tsize_t inb[%d], outb[%d];\n",
		           g->ndims, g->nws + 1, g->ninputs + 1, g->noutputs + 1);
	if (g->nstates)
		buf_puts(b, "\tunsigned char *st;\n");
	if (e.hooks)
		buf_puts(b, "\tdc_hook_t hook;\n");
	buf_puts(b, "};\n\n");
	if (t->fallback)
		cpu_reject_device(&e);
	emit_status_decode(&e);
	if (e.profile) {
		buf_puts(b, "#include <stdio.h>\nstatic const char *const dc_prof_names[] = {\n");
		for (int i = 0; i < g->root->nkids; i++) {
			buf_puts(b, "\t");
			emit_message(b, g->root->kids[i]->label ? g->root->kids[i]->label : "?");
			buf_puts(b, ",\n");
		}
		buf_puts(b, "\t0};\n");
	}
	if (w->size && !a->outweights)
		buf_printf(b, "extern const unsigned char %s_weights_blob[] __attribute__((visibility(\"hidden\")));\n", nm);
	buf_printf(b, "#define DC_WEIGHTS_SIZE ((size_t)%zuu)\n#define DC_WORKSPACE_SIZE ((size_t)%lldu)\n", w->size, (long long)g->arena_size);
	if (g->nstates)
		buf_printf(b, "#define DC_STATE_SIZE ((size_t)%lldu)\n", (long long)g->state_size);
	buf_printf(b, "static const char dc_weights_sha[] = \"%s\";\n\n", w->sha);
	if (g->ndims) /* set_dims' workspace: host memory, nothing else made for the dims */
		buf_printf(b, "#include <stdio.h>\nstatic int dc_grow(%s_t *m, size_t n)\n{\n\tunsigned char *ws = NULL;\n"
		              "\tif (posix_memalign((void **)&ws, 64, n))\n\t\treturn DOCCC_ERR_NOMEM;\n"
		              "\tfree(m->ws);\n\tm->ws = ws;\n\tm->wscap = n;\n\treturn DOCCC_OK;\n}\n\n"
		              "static void dc_moved(%s_t *m)\n{\n\t(void)m;\n}\n\n", nm, nm);
	emit_dims_api(&e);
	if (a->outweights)
		emit_weights_loader(b);
	buf_puts(b, "static _Thread_local char dc_create_msg[512]; /* why the last create on this thread failed */\n\n");
	if (g->nstates) { /* the state lives in host memory like the workspace */
		buf_printf(b, "#include <stdio.h>\nstatic int dc_state_copy(%s_t *m, void *dst, const void *src, size_t n, int dir)\n{\n"
		              "\t(void)m, (void)dir;\n\tif (src)\n\t\tmemcpy(dst, src, n);\n\telse\n\t\tmemset(dst, 0, n);\n"
		              "\treturn DOCCC_OK;\n}\n\n", nm);
		emit_state_api(&e);
	}
	/* create: the CPU check first, in code any CPU of the architecture runs (cpu_check_ARCH.h) */
	buf_printf(b, "static int dc_create_from(%s_t **model, const char *weights_path)\n{\n", nm);
	buf_printf(b, "\t%s_t *m = calloc(1, sizeof *m);\n\tif (!m)\n\t\treturn DOCCC_ERR_NOMEM;\n", nm);
	if (g->ndims)
		buf_puts(b, "\tm->wscap = dc_prealloc();\n\tif (m->wscap && posix_memalign((void **)&m->ws, 64, m->wscap)) {\n\t\tfree(m);\n\t\treturn DOCCC_ERR_NOMEM;\n\t}\n");
	else if (g->arena_size < 4 << 20)
		buf_puts(b, "\tif (DC_WORKSPACE_SIZE && posix_memalign((void **)&m->ws, 64, DC_WORKSPACE_SIZE)) {\n\t\tfree(m);\n\t\treturn DOCCC_ERR_NOMEM;\n\t}\n");
	else /* 4 MiB or more: 2 MiB pages where the system gives them (docs/c-api.md) */
		buf_puts(b, "\tif (posix_memalign((void **)&m->ws, 2u << 20, DC_WORKSPACE_SIZE)) {\n\t\tfree(m);\n\t\treturn DOCCC_ERR_NOMEM;\n\t}\n"
		            "#ifdef MADV_HUGEPAGE\n\tmadvise(m->ws, DC_WORKSPACE_SIZE, MADV_HUGEPAGE);\n#endif\n");
	if (a->outweights) {
		buf_puts(b, "\tint rc = dc_weights_map(weights_path, &m->map, dc_create_msg, sizeof dc_create_msg);\n"
		            "\tif (rc) {\n\t\tfree(m->ws);\n\t\tfree(m);\n\t\treturn rc;\n\t}\n"
		            "\tm->maplen = 128 + DC_WEIGHTS_SIZE;\n\tm->w = (const unsigned char *)m->map + 128;\n");
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
	if (g->nstates)
		buf_puts(b, "\tif (posix_memalign((void **)&m->st, 64, DC_STATE_SIZE)) {\n\t\tif (m->map)\n\t\t\tmunmap(m->map, m->maplen);\n"
		            "\t\tfree(m->ws);\n\t\tfree(m);\n\t\treturn DOCCC_ERR_NOMEM;\n\t}\n\tdc_state_reset(m);\n");
	buf_puts(b, "\t*model = m;\n\treturn DOCCC_OK;\n}\n\n");
	buf_printf(b, "DC_BASE int %s_create_from(%s_t **model, const char *weights_path)\n{\n"
	              "\tif (!model)\n\t\treturn DOCCC_ERR_ARG;\n\t*model = NULL;\n\tdc_create_msg[0] = 0;\n"
	              "\tint rc = dc_cpu_check(dc_create_msg, sizeof dc_create_msg);\n"
	              "\treturn rc ? rc : dc_create_from(model, weights_path);\n}\n\n", nm, nm);
	buf_printf(b, "int %s_create(%s_t **model)\n{\n\treturn %s_create_from(model, NULL);\n}\n\n", nm, nm, nm);
	/* run */
	buf_printf(b, "int %s_run(%s_t *model", nm, nm);
	for (int i = 0; i < g->ninputs; i++) {
		Container *c = sdfg_c(g, g->inputs[i]);
		buf_printf(b, ", %s%s *in%d", emit_readonly(c) ? "const " : "", emit_storage_type[c->dt], i);
	}
	for (int i = 0; i < g->noutputs; i++) {
		Container *c = sdfg_c(g, g->outputs[i]);
		buf_printf(b, ", %s *out%d", emit_storage_type[c->dt], i);
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
	if (t->fallback)
		buf_puts(b, "\tif (dc_reject_device(model, ins, outs))\n\t\treturn DOCCC_ERR_DEVICE;\n");
	const char *dimargs = g->ndims ? e.hooks ? ", model->dims, model->ofs, &model->hook" : ", model->dims, model->ofs"
	                      : e.hooks ? ", &model->hook" : "";
	if (g->ndims)
		buf_puts(b, "\tif (!model->dims_set)\n\t\treturn dc_unset(model);\n");
	buf_printf(b, "\tmodel->runs++;\n\treturn %s%s_forward(model->w, model->ws,%s model->nth, ins, outs, model->prof%s)%s;\n}\n\n",
	           g->nmsgs ? "dc_status(model, " : "", nm, g->nstates ? " model->st," : "", dimargs, g->nmsgs ? ")" : "");
	emit_dims_run_dims(&e);
	buf_printf(b, "static int %s_run_generic(void *model, const void *const *ins, void *const *outs)\n{\n", nm);
	buf_puts(b, "\tif (!model || (!ins && ");
	buf_printf(b, "%d) || (!outs && %d))\n\t\treturn DOCCC_ERR_ARG;\n", g->ninputs > 0, g->noutputs > 0);
	for (int i = 0; i < g->ninputs; i++)
		buf_printf(b, "\tif (!ins[%d])\n\t\treturn DOCCC_ERR_ARG;\n", i);
	for (int i = 0; i < g->noutputs; i++)
		buf_printf(b, "\tif (!outs[%d])\n\t\treturn DOCCC_ERR_ARG;\n", i);
	buf_printf(b, "\t%s_t *m = model;\n", nm);
	if (t->fallback)
		buf_puts(b, "\tif (dc_reject_device(m, ins, outs))\n\t\treturn DOCCC_ERR_DEVICE;\n");
	if (g->ndims)
		buf_puts(b, "\tif (!m->dims_set)\n\t\treturn dc_unset(m);\n");
	buf_printf(b, "\tm->runs++;\n\treturn %s%s_forward(m->w, m->ws,%s m->nth, ins, outs, m->prof%s%s)%s;\n}\n\n", g->nmsgs ? "dc_status(m, " : "",
	           nm, g->nstates ? " m->st," : "", g->ndims ? ", m->dims, m->ofs" : "", e.hooks ? ", &m->hook" : "",
	           g->nmsgs ? ")" : "");
	/* destroy, strerror, threads, workspace */
	buf_printf(b, "void %s_destroy(%s_t *model)\n{\n\tif (!model)\n\t\treturn;\n", nm, nm);
	if (e.profile)
		buf_printf(b, "\tdouble dc_total = 0;\n\tfor (int i = 0; dc_prof_names[i]; i++)\n\t\tdc_total += model->prof[i];\n"
		              "\tfprintf(stderr, \"%s profile: %%ld runs, %%.3f ms per run\\n\", model->runs, model->runs ? 1e3 * dc_total / model->runs : 0.0);\n"
		              "\tfor (int i = 0; dc_prof_names[i] && model->runs; i++)\n"
		              "\t\tfprintf(stderr, \"%%9.3f ms %%5.1f%%%%  %%s\\n\", 1e3 * model->prof[i] / model->runs, dc_total > 0 ? 100 * model->prof[i] / dc_total : 0.0, dc_prof_names[i]);\n", nm);
	if (g->nstates)
		buf_puts(b, "\tfree(model->st);\n");
	buf_puts(b, "\tif (model->map)\n\t\tmunmap(model->map, model->maplen);\n\tfree(model->ws);\n\tfree(model);\n}\n\n");
	emit_strerror(&e);
	buf_printf(b, "const char *%s_last_error(const %s_t *model)\n{\n\treturn model ? model->msg : dc_create_msg;\n}\n\n", nm, nm);
	buf_printf(b, "int %s_set_num_threads(%s_t *model, int n)\n{\n\tif (!model || n < 1)\n\t\treturn DOCCC_ERR_ARG;\n", nm, nm);
	if (omp)
		buf_puts(b, "\tmodel->nth = n;\n\treturn DOCCC_OK;\n}\n\n");
	else
		buf_puts(b, "\treturn n == 1 ? DOCCC_OK : DOCCC_ERR_THREADS;\n}\n\n");
	buf_printf(b, "size_t %s_workspace_size(void)\n{\n\treturn DC_WORKSPACE_SIZE;\n}\n\n", nm);
	emit_desc_tables(&e);
	if (e.hooks)
		emit_node_table(&e);
	buf_printf(b, "\nstatic int dc_create(void **m, const char *p) { return %s_create_from((%s_t **)m, p); }\n", nm, nm);
	buf_printf(b, "static void dc_destroy(void *m) { %s_destroy(m); }\n", nm);
	buf_printf(b, "static int dc_threads(void *m, int n) { return %s_set_num_threads(m, n); }\n", nm);
	buf_printf(b, "static const char *dc_last_error(const void *m) { return %s_last_error((const %s_t *)m); }\n\n", nm, nm);
	emit_descriptor(&e, a, w, arena_printf(g->arena, "%s_run_generic", nm),
	                arena_printf(g->arena, "0, NULL, %d, %s_run_generic, NULL, NULL, dc_last_error, NULL, NULL, NULL, NULL,",
	                             t->simulate, nm), "");
}

const Printer printer_cpu = {
	.name = "c",
	.emit_file = cpu_emit_file,
	.loop = cpu_loop,
	.fail = cpu_fail,
	.voperand = cpu_voperand,
	.vexpr = cpu_vexpr,
	.vcast = cpu_vcast,
	.step_status = 1,
	.step_params = "int dc_nth",
	.step_args = "dc_nth",
	.step_begin = cpu_step_begin,
	.step_end = cpu_step_end,
};
