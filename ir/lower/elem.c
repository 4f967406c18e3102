/*
 * elem.c - lowerings of the elem family (ops_elem.h; the expansion is
 * ir/expand/elem.c): unary math, binary arithmetic with alpha and python
 * scalars, comparisons, logical and bitwise ops, where/masked_fill, clamps,
 * dtype casts, nan_to_num, round.decimals, glu (over two views of the
 * halves) and lerp.
 *
 * Every op becomes one LIB_ELEMWISE node (clamp with tensor bounds: two);
 * a cast to the value's own dtype is a view.
 * The output dtype recorded in the graph is authoritative; where PyTorch
 * computes in another type than it returns (comparisons compute in the
 * promoted type of their operands), the lowering records that compute
 * dtype as attr "cdt", found with PyTorch's result_type rules: operands
 * are ranked by category (bool < integer < floating), and zero-dim tensors
 * and python scalars ("wrapped numbers") take part only when their
 * category is higher than that of the dimensioned tensors. The expansion
 * (ir/expand/elem.c) inserts the conversions.
 */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "lower.h"

/* ---- type promotion (c10::promoteTypes and at::result_type) ---------------------- */

static int category(int d)
{
	if (d < 0)
		return -1;
	if (d == DT_BOOL)
		return 0;
	return dtype_info[d].isfloat ? 2 : 1;
}

static int int_rank(int d)
{
	switch (d) {
	case DT_I8: case DT_U8: return 1;
	case DT_I16: return 2;
	case DT_I32: return 3;
	default: return 4;
	}
}

/* c10::promoteTypes for the dtypes doccc supports; -1 is "undefined". */
static int promote(int a, int b)
{
	if (a < 0)
		return b;
	if (b < 0 || a == b)
		return a;
	if (a == DT_BOOL)
		return b;
	if (b == DT_BOOL)
		return a;
	int ca = category(a), cb = category(b);
	if (ca != cb)
		return ca > cb ? a : b;
	if (ca == 2) {
		if ((a == DT_F16 && b == DT_BF16) || (a == DT_BF16 && b == DT_F16))
			return DT_F32;
		return dtype_info[a].size >= dtype_info[b].size ? a : b;
	}
	if (a == DT_U8 || b == DT_U8) {
		int s = a == DT_U8 ? b : a;
		return s == DT_I8 ? DT_I16 : s;
	}
	return int_rank(a) >= int_rank(b) ? a : b;
}

static int combine(int higher, int lower)
{
	if (category(higher) == 2)
		return higher;
	if (higher == DT_BOOL || category(lower) == 2)
		return promote(higher, lower);
	return higher >= 0 ? higher : lower;
}

/* at::result_type of the operands (tensors and python scalars). */
static int result_type(Imp *m, Val *const *ops, int n)
{
	int dim = -1, zero = -1, wrapped = -1;
	for (int i = 0; i < n; i++) {
		const Val *v = ops[i];
		if (v->k == V_TENSOR) {
			Container *c = lw_c(m, v->t);
			if (c->rank)
				dim = promote(dim, c->dt);
			else
				zero = promote(zero, c->dt);
		} else if (v->k == V_FLOAT)
			wrapped = promote(wrapped, DT_F32);   /* the default dtype */
		else if (v->k == V_INT)
			wrapped = promote(wrapped, DT_I64);
		else if (v->k == V_BOOL)
			wrapped = promote(wrapped, DT_BOOL);
	}
	int r = combine(dim, combine(zero, wrapped));
	return r < 0 ? DT_F32 : r;
}

/* The library node the last lw_elemwise call appended. */
static LibNode *last_lib(Imp *m)
{
	return m->g->root->kids[m->g->root->nkids - 1]->lib;
}

/* ---- lowerings ------------------------------------------------------------------- */

int lower_unary(Imp *m, const cJSON *node)
{
	Val *x = &m->args[0];
	TCode code = (TCode)m->info->param;
	double p0 = 0, p1 = 0, scale = 1;
	switch (code) {
	case T_GELU: {
		const char *ap = lw_arg(m, "approximate")->s;
		if (ap && !strcmp(ap, "tanh"))
			code = T_GELU_TANH;
		else if (ap && strcmp(ap, "none")) {
			lw_error(m, "gelu: unknown approximation '%s'", ap);
			return -1;
		}
		break;
	}
	case T_LEAKY_RELU:
		p0 = lw_num(m, "negative_slope", 0.01);
		break;
	case T_SOFTPLUS:
		p0 = lw_num(m, "beta", 1);
		p1 = lw_num(m, "threshold", 20);
		break;
	case T_ELU:
		if (!strncmp(m->info->target, "selu", 4)) {
			/* PyTorch's selu: elu with these alpha and scale */
			p0 = 1.6732632423543772848170429916717;
			scale = 1.0507009873554804934193349852946;
			p1 = 1;
		} else if (!strncmp(m->info->target, "celu", 4)) {
			p0 = lw_num(m, "alpha", 1);   /* elu(x, alpha, 1, 1 / alpha) */
			p1 = 1 / p0;
		} else {
			p0 = lw_num(m, "alpha", 1);
			scale = lw_num(m, "scale", 1);
			p1 = lw_num(m, "input_scale", 1);
		}
		break;
	case T_I0E:
		/* torch's float16 and bfloat16 i0e evaluates its series in that
		 * precision, ulps from the value doccc computes (in double) */
		if (x->k == V_TENSOR && (lw_c(m, x->t)->dt == DT_F16 || lw_c(m, x->t)->dt == DT_BF16)) {
			lw_error(m, "special_i0e of a float16 or bfloat16 tensor: torch computes it in that precision, which doccc does not reproduce; convert to float32 first");
			return -1;
		}
		break;
	case T_POLYGAMMA:
		/* polygamma(int n, Tensor self) */
		x = lw_arg(m, "self");
		p0 = (double)lw_arg(m, "n")->i;
		if (p0 < 0) {
			lw_error(m, "polygamma: n is %d; it must be at least 0", (int)p0);
			return -1;
		}
		break;
	default:
		break;
	}
	if (lw_elemwise(m, node, code, 1, &x))
		return -1;
	LibNode *l = last_lib(m);
	if (!strncmp(m->info->target, "logical_", 8))
		lib_set_int(m->g, l, "cdt", DT_BOOL);
	if (p0 != 0)
		lib_set_float(m->g, l, "p0", p0);
	if (p1 != 0)
		lib_set_float(m->g, l, "p1", p1);
	if (scale != 1)
		lib_set_float(m->g, l, "scale", scale);
	return 0;
}

int lower_clamp(Imp *m, const cJSON *node)
{
	double lo = -INFINITY, hi = INFINITY;
	switch (m->info->param) {
	case 0: lo = lw_num(m, "min_val", -1); hi = lw_num(m, "max_val", 1); break;
	case 1: lo = 0; hi = 6; break;
	case 2: lo = lw_num(m, "min", -INFINITY); hi = lw_num(m, "max", INFINITY); break;
	case 3: lo = lw_num(m, "min", -INFINITY); break;
	case 4: hi = lw_num(m, "max", INFINITY); break;
	}
	Val *x = &m->args[0];
	if (lw_elemwise(m, node, T_CLAMP, 1, &x))
		return -1;
	LibNode *l = last_lib(m);
	lib_set_float(m->g, l, "lo", lo);
	lib_set_float(m->g, l, "hi", hi);
	return 0;
}

/* clamp.Tensor, clamp_min.Tensor, clamp_max.Tensor: maximum with the lower
 * bound, then minimum with the upper one (NaN in any operand gives NaN, as
 * PyTorch's clamp kernel does); map fusion joins the two nodes. */
int lower_clamp_tensor(Imp *m, const cJSON *node)
{
	Val *x = &m->args[0];
	Val *lo = lw_has_arg(m, "min") ? lw_arg(m, "min") : NULL;
	Val *hi = lw_has_arg(m, "max") ? lw_arg(m, "max") : NULL;
	if (lo && lo->k != V_TENSOR)
		lo = NULL;
	if (hi && hi->k != V_TENSOR)
		hi = NULL;
	if (!lo && !hi) {
		lw_error(m, "clamp needs at least one of 'min' and 'max'");
		return -1;
	}
	if (lo && hi) {
		const char *on = lw_out_name(node, 0);
		Meta mt;
		if (!on || lw_meta(m, on, &mt) || lw_check_dtype(m, &mt, on))
			return -1;
		int mid = sdfg_add_container(m->g, arena_printf(m->a, "%s_lo", on), (Dtype)mt.dt, CK_TRANSIENT, mt.rank, mt.shape);
		lw_c(m, mid)->origin = "";
		LibNode *l = lw_lib(m, LIB_ELEMWISE);
		l->in[0] = x->t;
		l->in[1] = lo->t;
		l->nin = 2;
		l->out[0] = mid;
		l->nout = 1;
		lib_set_int(m->g, l, "code", T_MAX);
		Val v = {.k = V_TENSOR, .t = mid};
		Val *ops[2] = {&v, hi};
		return lw_elemwise(m, node, T_MIN, 2, ops);
	}
	Val *ops[2] = {x, lo ? lo : hi};
	return lw_elemwise(m, node, lo ? T_MAX : T_MIN, 2, ops);
}

int lower_binary(Imp *m, const cJSON *node)
{
	Val *a = &m->args[0], *b = &m->args[1];
	TCode code = (TCode)m->info->param;
	double alpha = lw_has_arg(m, "alpha") ? lw_num(m, "alpha", 1) : 1;
	if (lw_has_arg(m, "rounding_mode")) {
		const char *rm = lw_arg(m, "rounding_mode")->s;
		if (rm && !strcmp(rm, "trunc"))
			code = T_DIV_TRUNC;
		else if (rm && !strcmp(rm, "floor"))
			code = T_DIV_FLOOR;
		else if (rm) {
			lw_error(m, "div: unknown rounding mode '%s'", rm);
			return -1;
		}
	}
	/* rsub(self, other, alpha) = other - alpha * self: alpha scales operand 1 */
	int rsub = !strncmp(m->info->target, "rsub.", 5);
	Val *ops[2] = {rsub ? b : a, rsub ? a : b};
	if (lw_elemwise(m, node, code, 2, ops))
		return -1;
	LibNode *l = last_lib(m);
	if (alpha != 1)
		lib_set_float(m->g, l, "alpha", alpha);
	if (code >= T_EQ && code <= T_GE)
		lib_set_int(m->g, l, "cdt", result_type(m, ops, 2));
	else if (!strncmp(m->info->target, "logical_", 8))
		lib_set_int(m->g, l, "cdt", DT_BOOL);
	return 0;
}

/* square(x) = x * x */
int lower_square(Imp *m, const cJSON *node)
{
	Val *ops[2] = {&m->args[0], &m->args[0]};
	return lw_elemwise(m, node, T_MUL, 2, ops);
}

/* outer(self, vec2): self as a column times vec2 as a row. */
int lower_outer(Imp *m, const cJSON *node)
{
	int a = lw_tensor(m, "self"), b = lw_tensor(m, "vec2");
	if (a < 0 || b < 0)
		return -1;
	Container *ac = lw_c(m, a), *bc = lw_c(m, b);
	if (ac->rank != 1 || bc->rank != 1) {
		lw_error(m, "outer of ranks %d and %d: both must be vectors", ac->rank, bc->rank);
		return -1;
	}
	Expr *one = ex_int(m->g, 1), *zero = ex_int(m->g, 0);
	Expr *ash[2] = {ac->shape[0], one}, *ast[2] = {ac->stride[0], zero};
	Expr *bsh[2] = {one, bc->shape[0]}, *bst[2] = {zero, bc->stride[0]};
	Val va = {.k = V_TENSOR}, vb = {.k = V_TENSOR};
	va.t = lw_scratch_view_x(m, arena_printf(m->a, "%s_col", m->nodename), a, 2, ash, ast, ac->offset);
	vb.t = lw_scratch_view_x(m, arena_printf(m->a, "%s_row", m->nodename), b, 2, bsh, bst, bc->offset);
	Val *ops[2] = {&va, &vb};
	return lw_elemwise(m, node, T_MUL, 2, ops);
}

/* where.self(condition, self, other) and masked_fill(self, mask, value):
 * one T_WHERE with the condition first. */
int lower_where(Imp *m, const cJSON *node)
{
	Val *ops[3];
	if (m->info->param) {
		ops[0] = lw_arg(m, "mask");
		ops[1] = lw_arg(m, "value");
		ops[2] = lw_arg(m, "self");
	} else {
		ops[0] = lw_arg(m, "condition");
		ops[1] = lw_arg(m, "self");
		ops[2] = lw_arg(m, "other");
	}
	return lw_elemwise(m, node, T_WHERE, 3, ops);
}

/* The device and layout arguments of the conversions (to.device,
 * to.dtype_layout, _to_copy): doccc places every tensor itself (host memory
 * on CPU targets, device memory on GPU targets), so a move between CPU and
 * GPU is the identity; other device types and sparse layouts have no
 * meaning for the generated library. */
static Val *opt_arg(Imp *m, const char *name)
{
	return lw_has_arg(m, name) ? lw_arg(m, name) : NULL;
}

static int check_place(Imp *m)
{
	static const char *const devices[] = { "cpu", "cuda", "hip", "meta" };
	Val *d = opt_arg(m, "device"), *l = opt_arg(m, "layout");
	if (d && d->k == V_STR) {
		size_t i = 0;
		while (i < sizeof devices / sizeof devices[0] && (!d->s || strcmp(d->s, devices[i])))
			i++;
		if (i == sizeof devices / sizeof devices[0]) {
			lw_error(m, "%s: device '%s' is not one doccc compiles for; export the model on cpu "
				 "(doccc places tensors on the target itself)", m->info->target, d->s ? d->s : "?");
			return -1;
		}
	}
	if (l && l->k == V_INT && l->i != 7) {
		lw_error(m, "%s: layout %lld is not strided: doccc compiles dense tensors only", m->info->target,
			 (long long)l->i);
		return -1;
	}
	return 0;
}

int lower_cast(Imp *m, const cJSON *node)
{
	int x = lw_tensor(m, "self");
	const char *on = lw_out_name(node, 0);
	Meta mt;
	if (x < 0 || !on || lw_meta(m, on, &mt) || lw_check_dtype(m, &mt, on) || check_place(m))
		return -1;
	if (mt.dt == (int)lw_c(m, x)->dt) {
		Container *s = lw_c(m, x);
		Expr *st[MAXDIM], *sh[MAXDIM];
		for (int i = 0; i < s->rank; i++)
			st[i] = s->stride[i], sh[i] = lw_mdim(m, &mt, i);
		lw_view_x(m, on, x, mt.rank, sh, st, s->offset);
		return 0;
	}
	Val *v = &m->args[0];
	return lw_elemwise(m, node, T_CAST, 1, &v);
}

/* ---- nan_to_num, round.decimals, glu, lerp --------------------------------------- */

/* Largest finite value of a float dtype (nan_to_num's default for +inf). */
static double dtype_max(Dtype d)
{
	switch (d) {
	case DT_F64: return DBL_MAX;
	case DT_F16: return 65504.0;
	case DT_BF16: return 3.3895313892515355e38;   /* 0x7f7f */
	default: return FLT_MAX;
	}
}

int lower_nan_to_num(Imp *m, const cJSON *node)
{
	Val *x = lw_arg(m, "self");
	if (x->k != V_TENSOR)
		return -1;
	Dtype dt = lw_c(m, x->t)->dt;
	Val nan = {.k = V_FLOAT, .f = lw_num(m, "nan", 0)};
	Val *ops[2] = {x, &nan};
	if (lw_elemwise(m, node, T_NAN_TO_NUM, 2, ops))
		return -1;
	LibNode *l = last_lib(m);
	lib_set_float(m->g, l, "p0", lw_num(m, "posinf", dtype_max(dt)));
	lib_set_float(m->g, l, "p1", lw_num(m, "neginf", -dtype_max(dt)));
	return 0;
}

int lower_round_decimals(Imp *m, const cJSON *node)
{
	Val *x = &m->args[0];
	if (lw_elemwise(m, node, T_ROUND_DEC, 1, &x))
		return -1;
	lib_set_float(m->g, last_lib(m), "p0", (double)lw_int(m, "decimals", 0));
	return 0;
}

/* glu(x, dim): the first half of dim times the sigmoid of the second. */
int lower_glu(Imp *m, const cJSON *node)
{
	int x = lw_tensor(m, "self");
	if (x < 0)
		return -1;
	Container *c = lw_c(m, x);
	int d = lw_norm_dim(m, lw_int(m, "dim", -1), c->rank);
	if (d < 0)
		return -1;
	/* the halved dim is a number (a run-time one asks for static sizes);
	 * the others keep their sizes, run-time dims included */
	int64_t n = lw_dim(m, x, d);
	if (n % 2) {
		lw_error(m, "glu: dimension %d has odd size %lld; it must halve", d, (long long)n);
		return -1;
	}
	Expr *st[MAXDIM], *sh[MAXDIM];
	for (int i = 0; i < c->rank; i++) {
		sh[i] = i == d ? ex_int(m->g, n / 2) : c->shape[i];
		st[i] = c->stride[i];
	}
	Val a = {.k = V_TENSOR, .t = lw_scratch_view_x(m, arena_printf(m->a, "%s_a", m->nodename), x, c->rank, sh, st, c->offset)};
	Val b = {.k = V_TENSOR, .t = lw_scratch_view_x(m, arena_printf(m->a, "%s_b", m->nodename), x, c->rank, sh, st,
	                                    ex_add(m->g, c->offset, ex_muli(m->g, c->stride[d], n / 2)))};
	Val *ops[2] = {&a, &b};
	return lw_elemwise(m, node, T_GLU, 2, ops);
}

/* lerp(self, end, weight), weight a tensor or a number. */
int lower_lerp(Imp *m, const cJSON *node)
{
	Val *ops[3] = {lw_arg(m, "self"), lw_arg(m, "end"), lw_arg(m, "weight")};
	return lw_elemwise(m, node, T_LERP, 3, ops);
}

/* ---- for other families ---------------------------------------------------------- */

/* at::result_type for other lowerings (searchsorted's comparison dtype). */
int lw_result_type(Imp *m, Val *const *ops, int n)
{
	return result_type(m, ops, n);
}
