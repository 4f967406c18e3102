/*
 * sym.c - lowerings of the sym family (ops_sym.h): symbolic integers,
 * floats and booleans, and the export's assertions.
 *
 * An export with dynamic shapes computes sizes in the graph: sym_size,
 * then Python arithmetic on it (_operator.mul, torch.sym_max, math.trunc),
 * then reshape([mul, 768]). Each such value is evaluated here with
 * Python's semantics (floor division, modulo with the divisor's sign,
 * int/float promotion) on the bound sizes (the example's, for a run-time
 * dim) and bound to its name as a SymVal (lower.h) for the ops that use
 * it; one that depends on run-time dims also keeps the expression the
 * export recorded for it (dims.c), which the lowerings that take run-time
 * dims read instead. The export's guards (_assert_scalar) are checked
 * against the sizes compiled for, or, on run-time dims, added to the
 * library's checks of its dims.
 *
 * item() and _local_scalar_dense read a number out of a tensor; its value
 * is known only at run time, so it stays a rank-0 view of that tensor, and
 * elementwise ops take it as an operand like any 0-d tensor. Python
 * arithmetic on such a number is not compiled: its result may only feed
 * the export's guards (torch._check(n >= 0)), which doccc cannot check, as
 * it has no value for them at compile time. _assert_async checks a
 * tensor's one element when the library runs (LIB_ASSERT, expanded in
 * ir/expand/sym.c).
 */
#include <math.h>
#include <string.h>

#include "lower.h"

/* Name of the SymInt/SymFloat/SymBool output k of node, and its kind. */
static const char *sym_out(const cJSON *node, SvKind *k)
{
	cJSON *x;
	const char *tag = json_union_tag(json_at(json_get(node, "outputs"), 0), &x);
	if (!tag)
		return NULL;
	if (!strcmp(tag, "as_sym_int") || !strcmp(tag, "as_int"))
		*k = SV_INT;
	else if (!strcmp(tag, "as_sym_float") || !strcmp(tag, "as_float"))
		*k = SV_FLOAT;
	else if (!strcmp(tag, "as_sym_bool") || !strcmp(tag, "as_bool"))
		*k = SV_BOOL;
	else
		return NULL;
	return json_str(json_get(x, "as_name"));
}

/* Bind a computed number of kind k (converted as Python does) to the output.
 * An output torch serialized as none (a query whose value it folded to a
 * constant and nothing reads: sym_is_contiguous of a contiguous input)
 * binds nothing. */
static int bind_out(Imp *m, const cJSON *node, SymVal v)
{
	SvKind k;
	cJSON *x;
	const char *on = sym_out(node, &k);
	const char *tag = json_union_tag(json_at(json_get(node, "outputs"), 0), &x);
	if (!on && tag && !strcmp(tag, "as_none"))
		return 0;
	if (!on) {
		lw_error(m, "the output is not a symbolic number");
		return -1;
	}
	if (k == SV_FLOAT && v.k != SV_FLOAT)
		v.f = (double)v.i;
	else if (k != SV_FLOAT && v.k == SV_FLOAT)
		v.i = (int64_t)v.f;
	if (k == SV_BOOL)
		v.i = v.i != 0;
	v.k = k;
	lw_set_symval(m, on, v);
	return 0;
}

/* ---- sym_size, sym_stride, sym_numel, sym_is_contiguous -------------------------- */

/* The torch metadata of the tensor argument (its sizes and strides as torch
 * has them, which a view or a contiguous transient of doccc may not). */
int lower_sym_query(Imp *m, const cJSON *node)
{
	cJSON *x;
	const char *tag = json_union_tag(json_get(json_at(json_get(node, "inputs"), 0), "arg"), &x);
	const char *tn = tag && !strcmp(tag, "as_tensor") ? json_str(json_get(x, "name")) : NULL;
	Meta mt;
	if (!tn || lw_tensor(m, "self") < 0 || lw_meta(m, tn, &mt))
		return -1;
	SymVal v = {.k = SV_INT};
	int d = 0;
	if (m->info->param == SQ_SIZE || m->info->param == SQ_STRIDE) {
		d = lw_norm_dim(m, lw_int(m, "dim", 0), mt.rank);
		if (d < 0)
			return -1;
	}
	switch (m->info->param) {
	case SQ_SIZE: v.i = mt.rank ? mt.shape[d] : 1; break;
	case SQ_STRIDE: v.i = mt.rank ? mt.stride[d] : 1; break;
	case SQ_NUMEL:
		v.i = 1;
		for (int i = 0; i < mt.rank; i++)
			v.i *= mt.shape[i];
		break;
	case SQ_CONTIGUOUS: {
		/* torch's rule: strides of size-1 dims do not matter */
		int64_t want = 1;
		v.k = SV_BOOL;
		v.i = 1;
		if (lw_int(m, "memory_format", 0) != 0) {
			lw_error(m, "sym_is_contiguous with a memory format other than contiguous_format is not supported");
			return -1;
		}
		for (int i = mt.rank - 1; i >= 0; i--) {
			if (mt.shape[i] == 0) {
				v.i = 1;
				break;
			}
			if (mt.shape[i] != 1 && mt.stride[i] != want)
				v.i = 0;
			want *= mt.shape[i];
		}
		break;
	}
	}
	return bind_out(m, node, v);
}

/* ---- item, _local_scalar_dense --------------------------------------------------- */

int lower_item(Imp *m, const cJSON *node)
{
	int x = lw_tensor(m, "self");
	SvKind k;
	const char *on = sym_out(node, &k);
	if (x < 0 || !on)
		return -1;
	Container *c = lw_c(m, x);
	Expr *n = sdfg_numel_x(m->g, x);
	int64_t one;
	if (!ex_isint(n, &one) || one != 1) {
		lw_error(m, "item() of a tensor with more than one element");
		return -1;
	}
	/* element 0 wherever it lives: the offset of the view */
	int id = sdfg_add_view(m->g, on, x, 0, NULL, NULL, c->kind == CK_VIEW ? c->offset : ex_int(m->g, 0));
	lw_c(m, id)->origin = arena_strdup(m->a, on);
	SymVal v = {.k = SV_TENSOR, .t = id};
	lw_set_symval(m, on, v);
	return 0;
}

/* ---- guards ---------------------------------------------------------------------- */

int lower_assert_scalar(Imp *m, const cJSON *node)
{
	(void)node;
	Val *v = lw_arg(m, "self");
	if (v->k == V_TENSOR)
		return 0; /* a run-time number: torch checks it when it runs; doccc cannot */
	if (v->k == V_BOOL && v->s) { /* on the run-time dims: checked by set_dims */
		if (lw_add_guard(m, v->s, lw_arg(m, "assert_msg")->s))
			return lw_need_static(m, arena_printf(m->a, "a guard doccc cannot read (%s)", v->s));
		return 0;
	}
	if (m->argdyn)
		return lw_need_static(m, "a guard on the run-time dims without an expression");
	int ok = v->k == V_FLOAT ? v->f != 0 : v->i != 0;
	if (!ok) {
		const char *msg = lw_arg(m, "assert_msg")->s;
		lw_error(m, "the export's guard does not hold for the sizes compiled for (%s): %s",
		         m->g->specialized ? m->g->specialized : "static shapes", msg ? msg : "?");
		return -1;
	}
	return 0;
}

/* ---- Python arithmetic: _operator.*, torch.sym_*, math.trunc --------------------- */

/* Input k of a Python-op node as a number. */
static int py_arg(Imp *m, const cJSON *node, int k, SymVal *v)
{
	cJSON *x, *y;
	const char *tag = json_union_tag(json_get(json_at(json_get(node, "inputs"), k), "arg"), &x);
	memset(v, 0, sizeof *v);
	if (!tag) {
		lw_error(m, "argument %d is missing or malformed", k);
		return -1;
	}
	const char *t2 = json_union_tag(x, &y);
	if (t2 && !strcmp(t2, "as_name")) {
		const char *nm = json_str(y);
		SymVal *sv = nm ? lw_symval(m, nm) : NULL;
		if (!sv) {
			lw_error(m, "argument %d refers to symbolic value '%s', which doccc did not compute", k, nm ? nm : "?");
			return -1;
		}
		*v = *sv;
		return 0;
	}
	if (t2)
		x = y;
	if (!strcmp(tag, "as_float") || !strcmp(tag, "as_sym_float")) {
		v->k = SV_FLOAT;
		return json_float(x, &v->f);
	}
	if (!strcmp(tag, "as_bool") || !strcmp(tag, "as_sym_bool")) {
		int b = 0;
		v->k = SV_BOOL;
		json_bool(x, &b);
		v->i = b;
		return 0;
	}
	if (!strcmp(tag, "as_int") || !strcmp(tag, "as_sym_int")) {
		v->k = SV_INT;
		return json_int(x, &v->i);
	}
	lw_error(m, "argument %d has kind '%s', which a symbolic op cannot take", k, tag);
	return -1;
}

static double fv(SymVal a)
{
	return a.k == SV_FLOAT ? a.f : (double)a.i;
}

static int64_t floordiv(int64_t a, int64_t b)
{
	int64_t q = a / b;
	return (a % b != 0 && (a < 0) != (b < 0)) ? q - 1 : q;
}

static const char *const py_ops[] = {
	"_operator.add", "_operator.sub", "_operator.mul", "_operator.floordiv", "_operator.mod", "_operator.truediv",
	"_operator.pow", "_operator.eq", "_operator.ne", "_operator.lt", "_operator.le", "_operator.gt", "_operator.ge",
	"_operator.and_", "_operator.or_", "_operator.lshift", "_operator.rshift", "torch.sym_max", "torch.sym_min",
	"_operator.neg", "_operator.pos", "torch.sym_not", "math.trunc", "torch.sym_int", "torch.sym_float", "torch.sym_sqrt",
	"torch.sym_ite", NULL,
};
enum { P_ADD, P_SUB, P_MUL, P_FLOORDIV, P_MOD, P_TRUEDIV, P_POW, P_EQ, P_NE, P_LT, P_LE, P_GT, P_GE, P_AND, P_OR,
       P_SHL, P_SHR, P_MAX, P_MIN, P_NEG, P_POS, P_NOT, P_TRUNC, P_INT, P_FLOAT, P_SQRT, P_ITE };

/* Binary ops with Python's int/float rules. */
static int py_binary(Imp *m, int op, SymVal a, SymVal b, SymVal *r)
{
	int isf = a.k == SV_FLOAT || b.k == SV_FLOAT;
	double x = fv(a), y = fv(b);
	r->k = isf ? SV_FLOAT : SV_INT;
	switch (op) {
	case P_ADD: r->f = x + y; r->i = a.i + b.i; break;
	case P_SUB: r->f = x - y; r->i = a.i - b.i; break;
	case P_MUL: r->f = x * y; r->i = a.i * b.i; break;
	case P_MAX: r->f = x > y ? x : y; r->i = a.i > b.i ? a.i : b.i; break;
	case P_MIN: r->f = x < y ? x : y; r->i = a.i < b.i ? a.i : b.i; break;
	case P_FLOORDIV:
	case P_MOD:
		if (isf ? y == 0 : b.i == 0) {
			lw_error(m, "division by zero in a size computation");
			return -1;
		}
		if (op == P_FLOORDIV) {
			r->f = floor(x / y);
			r->i = floordiv(a.i, b.i);
		} else {
			r->f = fmod(x, y);
			if (r->f != 0 && (r->f < 0) != (y < 0))
				r->f += y;
			r->i = a.i - floordiv(a.i, b.i) * b.i;
		}
		break;
	case P_TRUEDIV:
		if (y == 0) {
			lw_error(m, "division by zero in a size computation");
			return -1;
		}
		r->k = SV_FLOAT;
		r->f = x / y;
		break;
	case P_POW:
		if (!isf && b.i >= 0) {
			r->i = 1;
			for (int64_t k = 0; k < b.i; k++)
				r->i *= a.i;
		} else {
			r->k = SV_FLOAT;
			r->f = pow(x, y);
		}
		break;
	case P_SHL: r->i = a.i << b.i; break;
	case P_SHR: r->i = a.i >> b.i; break;
	case P_AND:
	case P_OR:
		r->k = a.k == SV_BOOL && b.k == SV_BOOL ? SV_BOOL : SV_INT;
		r->i = op == P_AND ? (a.i & b.i) : (a.i | b.i);
		break;
	default:
		r->k = SV_BOOL;
		r->i = op == P_EQ ? x == y : op == P_NE ? x != y : op == P_LT ? x < y : op == P_LE ? x <= y : op == P_GT ? x > y : x >= y;
		if (!isf)
			r->i = op == P_EQ ? a.i == b.i : op == P_NE ? a.i != b.i : op == P_LT ? a.i < b.i : op == P_LE ? a.i <= b.i
			       : op == P_GT ? a.i > b.i : a.i >= b.i;
		break;
	}
	if ((op == P_SHL || op == P_SHR) && isf) {
		lw_error(m, "shift of a float");
		return -1;
	}
	return 0;
}

int lw_python_op(Imp *m, const cJSON *node, const char *target)
{
	int op = -1;
	for (int i = 0; py_ops[i]; i++)
		if (!strcmp(py_ops[i], target))
			op = i;
	if (op < 0)
		return 0;
	int n = json_len(json_get(node, "inputs"));
	int want = op == P_ITE ? 3 : op >= P_NEG ? 1 : 2;
	SymVal a[3], r = {.k = SV_INT};
	if (n != want) {
		lw_error(m, "%s takes %d arguments, the node has %d", target, want, n);
		return 1;
	}
	for (int k = 0; k < n; k++)
		if (py_arg(m, node, k, &a[k]))
			return 1;
	/* Arithmetic on item()'s run-time number: not compiled; only guards
	 * (_assert_scalar) may use the result, and they cannot be checked. */
	for (int k = 0; k < n; k++)
		if (a[k].k == SV_TENSOR) {
			SymVal rt = {.k = SV_TENSOR, .t = -1};
			SvKind ok;
			const char *on = sym_out(node, &ok);
			if (on)
				lw_set_symval(m, on, rt);
			return 1;
		}
	if (op < P_NEG) {
		if (py_binary(m, op, a[0], a[1], &r))
			return 1;
	} else {
		r = a[0];
		switch (op) {
		case P_NEG: r.i = -r.i; r.f = -r.f; if (r.k == SV_BOOL) r.k = SV_INT; break;
		case P_POS: break;
		case P_NOT: r.i = !(r.k == SV_FLOAT ? r.f != 0 : r.i != 0); r.k = SV_BOOL; break;
		case P_TRUNC:
		case P_INT: r.i = r.k == SV_FLOAT ? (int64_t)trunc(r.f) : r.i; r.k = SV_INT; break;
		case P_FLOAT: r.f = fv(r); r.k = SV_FLOAT; break;
		case P_SQRT: r.f = sqrt(fv(r)); r.k = SV_FLOAT; break;
		case P_ITE: r = (a[0].k == SV_FLOAT ? a[0].f != 0 : a[0].i != 0) ? a[1] : a[2]; break;
		}
	}
	bind_out(m, node, r);
	return 1;
}

/* ---- run-time assertions --------------------------------------------------------- */

/* _assert_async(self[, assert_msg]): the run fails with DOCCC_ERR_ASSERT
 * and the message where the one element of self is zero (torch raises). */
int lower_assert_async(Imp *m, const cJSON *node)
{
	(void)node;
	int x = lw_tensor(m, "self");
	if (x < 0)
		return -1;
	if (sdfg_numel(m->g, x) != 1) {
		lw_error(m, "%s needs a tensor of one element (got %lld)", m->info->target, (long long)sdfg_numel(m->g, x));
		return -1;
	}
	const char *msg = m->info->nargs > 1 ? lw_arg(m, "assert_msg")->s : NULL;
	Sdfg *g = m->g;
	const char *text = arena_printf(g->arena, "run-time assertion of node '%s' failed: %s", m->nodename,
	                                msg ? msg : "Expected Tensor with single nonzero value, but got zero");
	VEC_PUSH(g->arena, g->msgs, g->nmsgs, g->capmsgs, text);
	LibNode *l = lw_lib(m, LIB_ASSERT);
	l->in[0] = x, l->nin = 1;
	l->nout = 0;
	lib_set_int(g, l, "msg", g->nmsgs - 1);
	return 0;
}
