/*
 * import.c - torch.export programs into the SDFG.
 *
 * Reads the serialized ExportedProgram (schema major 8) from a .pt2 archive
 * or a bare JSON file, binds weights through signature.input_specs (never by
 * guessing from names), and lowers every ATen node into library nodes,
 * views or nothing (asserts). The result is a flat root sequence of
 * library-node blocks in graph order; all later work happens on the IR.
 *
 * Node inputs are named and listed in schema order with defaulted arguments
 * omitted, so each node is bound against its op's schema from ops.h: named
 * inputs first, then schema defaults. A python scalar may stand in a Tensor
 * slot ("wrapped number"): it becomes an elementwise scalar operand.
 *
 * Problems are reported with the file and the node ("m.pt2: graph.nodes[3]
 * (node 'fft_r2c'): error: ..." plus a note with the first stack-trace
 * line), and every unsupported op and dtype of the graph is reported before
 * import fails. Outputs of a node get the shape and dtype recorded in
 * graph.tensor_values; lowerings check their own shape logic against it.
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cJSON.h>

#include "ir.h"
#include "lower/lower.h"

static char *node_loc(Imp *m)
{
	return arena_printf(m->a, "%s: graph.nodes[%d] (node '%s')", m->path, m->nodei, m->nodename);
}

void lw_error(Imp *m, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	diag_verror(node_loc(m), fmt, ap);
	va_end(ap);
	if (m->trace && *m->trace)
		diag_note(node_loc(m), "from %s", m->trace);
	m->failed = 1;
}

/* First meaningful line of a stack_trace ("File "x.py", line 6, in forward"). */
static const char *first_trace_line(Imp *m, const char *st)
{
	if (!st)
		return NULL;
	while (*st == ' ' || *st == '\n')
		st++;
	const char *e = strchr(st, '\n');
	return arena_strndup(m->a, st, e ? (size_t)(e - st) : strlen(st));
}

/* ---- value map ---------------------------------------------------------------- */

int lw_lookup(Imp *m, const char *name)
{
	for (int i = m->nvals - 1; i >= 0; i--)
		if (!strcmp(m->vals[i].name, name))
			return m->vals[i].id;
	return -1;
}

/* The newest binding of name, or NULL. */
static ValueEnt *value_ent(Imp *m, const char *name)
{
	for (int i = m->nvals - 1; i >= 0; i--)
		if (!strcmp(m->vals[i].name, name))
			return &m->vals[i];
	return NULL;
}

/* A rebinding keeps the value's torch storage (its root). */
void lw_bind(Imp *m, const char *name, int id)
{
	ValueEnt *old = value_ent(m, name);
	ValueEnt e = {arena_strdup(m->a, name), id, NULL, NULL};
	e.root = old ? old->root : e.name;
	VEC_PUSH(m->a, m->vals, m->nvals, m->capvals, e);
}

/* Why reading value name would miss an in-place write (see ValueEnt), or NULL. */
static const char *value_stale(Imp *m, const char *name)
{
	ValueEnt *e = value_ent(m, name);
	return e ? e->stale : NULL;
}

/* ---- tensor metadata ------------------------------------------------------------ */


/* ---- symbolic shapes -------------------------------------------------------------
 * doccc compiles static shapes. An export with dynamic dims (dynamic_shapes=)
 * names each by a symbol (s0, s77) with a range (range_constraints) and
 * records the example input's size as its hint. Before the nodes are read,
 * every symbol that sizes a graph input is specialized to one value: --shape
 * or --dim when given, else the hint (with a note saying so). Symbolic sizes,
 * sym_size and the _operator results are then plain numbers, and the
 * export's own guards (_assert_scalar) are checked against them. */

static void sym_grow(Imp *m)
{
	int n = m->sg->nsyms;
	if (n <= m->capsym)
		return;
	int cap = m->capsym;
	arena_grow(m->a, (void **)&m->symval, &cap, n, sizeof(int64_t));
	cap = m->capsym;
	arena_grow(m->a, (void **)&m->symset, &cap, n, sizeof(int));
	cap = m->capsym;
	arena_grow(m->a, (void **)&m->gsym, &cap, n, sizeof(int));
	m->capsym = cap;
}

static Expr *parse_sym_expr(Imp *m, const char *s, const char *what)
{
	const char *err = NULL;
	Expr *e = ex_parse(m->sg, s, &err);
	if (!e) {
		if (m->nodename)
			lw_error(m, "%s: cannot read the symbolic expression '%s' (%s)", what, s, err ? err : "?");
		else
			diag_error(m->path, "%s: cannot read the symbolic expression '%s' (%s)", what, s, err ? err : "?");
		return NULL;
	}
	sym_grow(m);
	return e;
}

/* e printed as C ("2*s65") for messages. */
static const char *expr_text(Imp *m, const Expr *e)
{
	Buf b = {0};
	ex_print(&b, m->sg, e);
	char *t = arena_strdup(m->a, b.len ? b.s : "?");
	buf_free(&b);
	return t;
}

/* e (over the scratch graph's symbols) over g's: run-time dims become g's
 * symbols, specialized ones their values. */
static Expr *to_g(Imp *m, const Expr *e)
{
	Sdfg *g = m->g;
	switch (e->k) {
	case E_INT: return ex_int(g, e->v);
	case E_SYM: return m->gsym[e->v] ? ex_sym(g, m->gsym[e->v] - 1) : ex_int(g, m->symval[e->v]);
	default: break;
	}
	Expr *r = to_g(m, e->a[0]);
	for (int i = 1; i < e->n; i++) {
		Expr *b = to_g(m, e->a[i]);
		switch (e->k) {
		case E_ADD: r = ex_add(g, r, b); break;
		case E_MUL: r = ex_mul(g, r, b); break;
		case E_DIV: r = ex_div(g, r, b); break;
		case E_MOD: r = ex_mod(g, r, b); break;
		case E_MIN: r = ex_min(g, r, b); break;
		case E_MAX: r = ex_max(g, r, b); break;
		default: DOCC_UNREACHABLE();
		}
	}
	return r;
}

/* Does e use a run-time dim? */
static int uses_dyn(Imp *m, const Expr *e)
{
	for (int i = 0; i < m->sg->nsyms && m->ndyn; i++)
		if (m->gsym[i] && ex_uses(e, i))
			return 1;
	return 0;
}

/* The export's SymBool expression s as guards a op b (over the scratch
 * graph: And(...) is one guard per argument; Eq, Ne and the comparisons,
 * written Ne(a, b) or a <= b); the number of guards, or -1 if s is not of
 * that form. */
static int read_guard(Imp *m, const char *s, Guard *gs, int cap)
{
	while (*s == ' ')
		s++;
	size_t n = strlen(s);
	static const struct { const char *fn; GuardOp op; int swap; } fns[] = {
		{"Eq(", G_EQ, 0}, {"Ne(", G_NE, 0}, {"Lt(", G_LT, 0}, {"Le(", G_LE, 0}, {"Gt(", G_LT, 1}, {"Ge(", G_LE, 1},
		{"StrictLessThan(", G_LT, 0}, {"LessThan(", G_LE, 0}, {"StrictGreaterThan(", G_LT, 1}, {"GreaterThan(", G_LE, 1},
		{"Equality(", G_EQ, 0}, {"Unequality(", G_NE, 0}, {"And(", G_EQ, 2},
	};
	for (size_t f = 0; f < sizeof fns / sizeof fns[0]; f++) {
		size_t fl = strlen(fns[f].fn);
		if (strncmp(s, fns[f].fn, fl) || n < fl + 1 || s[n - 1] != ')')
			continue;
		/* split the arguments at top-level commas */
		char *body = arena_strndup(m->a, s + fl, n - fl - 1);
		char *args[16];
		int na = 0, depth = 0;
		args[na++] = body;
		for (char *p = body; *p; p++) {
			if (*p == '(') depth++;
			else if (*p == ')') depth--;
			else if (*p == ',' && !depth) {
				if (na == 16)
					return -1;
				*p = 0;
				args[na++] = p + 1;
			}
		}
		if (fns[f].swap == 2) { /* And */
			int k = 0;
			for (int i = 0; i < na; i++) {
				int r = read_guard(m, args[i], gs + k, cap - k);
				if (r < 0)
					return -1;
				k += r;
			}
			return k;
		}
		if (na != 2 || cap < 1)
			return -1;
		const char *err = NULL;
		Expr *a = ex_parse(m->sg, args[0], &err), *b = a ? ex_parse(m->sg, args[1], &err) : NULL;
		if (!b)
			return -1;
		sym_grow(m);
		gs[0] = (Guard){fns[f].swap ? b : a, fns[f].swap ? a : b, fns[f].op, arena_strdup(m->a, s), NULL};
		return 1;
	}
	static const struct { const char *tok; GuardOp op; int swap; } infix[] = {
		{"<=", G_LE, 0}, {">=", G_LE, 1}, {"==", G_EQ, 0}, {"!=", G_NE, 0}, {"<", G_LT, 0}, {">", G_LT, 1},
	};
	for (size_t f = 0; f < sizeof infix / sizeof infix[0]; f++) {
		const char *p = strstr(s, infix[f].tok);
		if (!p || cap < 1)
			continue;
		const char *err = NULL;
		Expr *a = ex_parse(m->sg, arena_strndup(m->a, s, (size_t)(p - s)), &err);
		Expr *b = a ? ex_parse(m->sg, p + strlen(infix[f].tok), &err) : NULL;
		if (!b)
			return -1;
		sym_grow(m);
		gs[0] = (Guard){infix[f].swap ? b : a, infix[f].swap ? a : b, infix[f].op, arena_strdup(m->a, s), NULL};
		return 1;
	}
	return -1;
}

/* Is SymBool expression s about run-time dims? (Unreadable: yes.) */
static int guard_uses_dyn(Imp *m, const char *s)
{
	Guard gs[16];
	int n = read_guard(m, s, gs, 16);
	if (n < 0)
		return 1;
	for (int i = 0; i < n; i++)
		if (uses_dyn(m, gs[i].a) || uses_dyn(m, gs[i].b))
			return 1;
	return 0;
}

/* The guards of SymBool expression s, over g, checked at run time; -1 if
 * doccc cannot read them (the caller then needs static sizes). */
int lw_add_guard(Imp *m, const char *s, const char *msg)
{
	Guard gs[16];
	int n = read_guard(m, s, gs, 16);
	if (n < 0)
		return -1;
	for (int i = 0; i < n; i++) {
		Guard g = {to_g(m, gs[i].a), to_g(m, gs[i].b), gs[i].op, gs[i].text, msg ? arena_strdup(m->a, msg) : NULL};
		VEC_PUSH(m->a, m->g->guards, m->g->nguards, m->g->capguards, g);
	}
	return 0;
}

int lw_dynamic(Imp *m, int id)
{
	Container *c = sdfg_c(m->g, id);
	int64_t v;
	if (!m->ndyn)
		return 0;
	for (int d = 0; d < c->rank; d++)
		if (!ex_isint(c->shape[d], &v) || !ex_isint(c->stride[d], &v))
			return 1;
	return !ex_isint(c->offset, &v);
}

int lw_eval_expr(Imp *m, const char *expr, int64_t *out, const char *what)
{
	Expr *e = parse_sym_expr(m, expr, what);
	if (!e)
		return -1;
	if (ex_eval(m->sg, e, m->symval, m->symset, out) == 0)
		return 0;
	const char *sym = "?";
	for (int i = 0; i < m->sg->nsyms; i++)
		if (!m->symset[i] && ex_uses(e, i))
			sym = m->sg->syms[i].name;
	const char *why = sym[0] == 'u' || sym[0] == 'z'
	                      ? "depends on tensor data (an unbacked symbol); doccc compiles static shapes only"
	                      : "is not determined by any graph input's shape";
	if (m->nodename)
		lw_error(m, "%s is %s, and %s %s", what, expr_text(m, e), sym, why);
	else
		diag_error(m->path, "%s is %s, and %s %s", what, expr_text(m, e), sym, why);
	return -1;
}

static int sym_bind(Imp *m, int sym, int64_t v, const char *how);

/* Size dim of value `name` recorded as a bare unbacked symbol (u0): bind
 * the symbol to v, which a lowering computed from constant data
 * (repeat_interleave with constant repeats). 0 if bound or already that
 * number, -1 (after a message) otherwise. */
int lw_bind_size(Imp *m, const char *name, int dim, int64_t v)
{
	cJSON *x, *sz = json_at(json_get(json_get(m->tvals, name), "sizes"), dim);
	const char *tag = json_union_tag(sz, &x);
	int64_t have;
	if (tag && !strcmp(tag, "as_int") && !json_int(x, &have) && have == v)
		return 0;
	const char *es = tag && !strcmp(tag, "as_expr") ? json_str(json_get(x, "expr_str")) : NULL;
	Expr *e = es ? parse_sym_expr(m, es, "a data-dependent size") : NULL;
	if (!e || e->k != E_SYM || sym_bind(m, (int)e->v, v, arena_printf(m->a, "node '%s'", m->nodename))) {
		lw_error(m, "the size of '%s' in dim %d is %s, not the %lld the constant data gives", name, dim, es ? es : "?",
		         (long long)v);
		return -1;
	}
	return 0;
}

static int read_symint(Imp *m, const cJSON *j, int64_t *v, const char *what)
{
	cJSON *x;
	const char *tag = json_union_tag(j, &x);
	if (tag && !strcmp(tag, "as_int"))
		return json_int(x, v);
	if (tag && !strcmp(tag, "as_expr")) {
		const char *es = json_str(json_get(x, "expr_str"));
		if (!es)
			return -1;
		return lw_eval_expr(m, es, v, what) ? -2 : 0;
	}
	return json_int(j, v); /* very old files: plain ints */
}

/* Symbol named `name` in the scratch graph, or -1. */
static int sym_find(Imp *m, const char *name)
{
	for (int i = 0; i < m->sg->nsyms; i++)
		if (!strcmp(m->sg->syms[i].name, name))
			return i;
	return -1;
}

/* Bind symbol `sym` to v for `how` ("--shape x=4,8"); conflicting values are an error. */
static int sym_bind(Imp *m, int sym, int64_t v, const char *how)
{
	sym_grow(m);
	if (m->symset[sym] && m->symval[sym] != v) {
		diag_error(NULL, "%s sets %s to %lld, an earlier option to %lld", how, m->sg->syms[sym].name, (long long)v,
		           (long long)m->symval[sym]);
		return -1;
	}
	m->symset[sym] = 1;
	m->symval[sym] = v;
	return 0;
}

/* The sizes array of user input i (its tensor_values entry), and its name. */
static cJSON *input_sizes(Imp *m, cJSON *spec, const char **name)
{
	cJSON *x, *t;
	const char *kind = json_union_tag(spec, &x);
	*name = NULL;
	if (!kind || strcmp(kind, "user_input"))
		return NULL;
	const char *at = json_union_tag(json_get(x, "arg"), &t);
	*name = at && !strcmp(at, "as_tensor") ? json_str(json_get(t, "name")) : NULL;
	return *name ? json_get(json_get(m->tvals, *name), "sizes") : NULL;
}

/* The one symbol of e if e = c*sym + k (c != 0), and the value of sym that
 * makes e equal val; -1 if e is not of that form, -2 if val is unreachable. */
static int solve_dim(Imp *m, Expr *e, int64_t val, int *sym, int64_t *v)
{
	*sym = -1;
	for (int i = 0; i < m->sg->nsyms; i++)
		if (ex_uses(e, i)) {
			if (*sym >= 0)
				return -1;
			*sym = i;
		}
	int64_t c, k;
	if (*sym < 0 || !ex_coeff(m->sg, e, *sym, &c) || c == 0 || !ex_isint(ex_subst(m->sg, e, *sym, ex_int(m->sg, 0)), &k))
		return -1;
	if ((val - k) % c)
		return -2;
	*v = (val - k) / c;
	return 0;
}

/* --shape NAME=D0,D1,...: bind the symbols of input NAME's dims. */
static int apply_shape(Imp *m, cJSON *specs, const char *arg)
{
	const char *eq = strchr(arg, '=');
	if (!eq || eq == arg) {
		diag_error(NULL, "--shape takes INPUT=D0,D1,... (got '%s')", arg);
		return -1;
	}
	char *in = arena_strndup(m->a, arg, (size_t)(eq - arg));
	cJSON *sizes = NULL;
	Buf names = {0};
	for (int i = 0; i < json_len(specs) && !sizes; i++) {
		const char *nm;
		cJSON *sz = input_sizes(m, json_at(specs, i), &nm);
		if (nm && !strcmp(nm, in))
			sizes = sz;
		else if (nm)
			buf_printf(&names, "%s%s", names.len ? ", " : "", nm);
	}
	if (!sizes) {
		diag_error(NULL, "--shape %s: the model has no input '%s' (its inputs: %s)", arg, in, names.len ? names.s : "none");
		buf_free(&names);
		return -1;
	}
	buf_free(&names);
	int rank = json_len(sizes), d = 0;
	const char *p = eq + 1;
	for (;;) {
		char *end;
		errno = 0;
		long long v = strtoll(p, &end, 10);
		if (end == p || errno || v < 0 || (*end && *end != ',')) {
			diag_error(NULL, "--shape %s: '%s' is not a list of sizes", arg, eq + 1);
			return -1;
		}
		if (d < rank) {
			cJSON *x;
			const char *tag = json_union_tag(json_at(sizes, d), &x);
			int64_t st;
			if (tag && !strcmp(tag, "as_expr")) {
				const char *es = json_str(json_get(x, "expr_str"));
				Expr *e = es ? parse_sym_expr(m, es, arg) : NULL;
				if (!e)
					return -1;
				int sym;
				int64_t sv;
				int r = solve_dim(m, e, v, &sym, &sv);
				if (r == -1) {
					diag_error(NULL, "--shape %s: dim %d of '%s' is %s; give its symbols' values with --dim", arg, d, in,
					           expr_text(m, e));
					return -1;
				}
				if (r == -2) {
					diag_error(NULL, "--shape %s: dim %d of '%s' is %s, which cannot be %lld", arg, d, in, expr_text(m, e), v);
					return -1;
				}
				if (sym_bind(m, sym, sv, arena_printf(m->a, "--shape %s", arg)))
					return -1;
			} else if (json_int(tag ? x : json_at(sizes, d), &st) == 0 && st != v) {
				diag_error(NULL, "--shape %s: dim %d of '%s' is static (%lld) in the export", arg, d, in, (long long)st);
				return -1;
			}
		}
		d++;
		if (!*end)
			break;
		p = end + 1;
	}
	if (d != rank) {
		diag_error(NULL, "--shape %s: '%s' has rank %d, the option gives %d sizes", arg, in, rank, d);
		return -1;
	}
	return 0;
}

static const char *range_text(Imp *m, const Symbol *y)
{
	if (y->hi >= INT64_MAX / 2)
		return arena_printf(m->a, "[%lld, inf)", (long long)y->lo);
	return arena_printf(m->a, "[%lld, %lld]", (long long)y->lo, (long long)y->hi);
}

/* A bound symbol's value against its range; adds "s0=4" to spec. */
static int sym_check(Imp *m, int k, Buf *spec)
{
	Symbol *y = &m->sg->syms[k];
	m->symset[k] = 2; /* checked */
	buf_printf(spec, "%s%s=%lld", spec->len ? " " : "", y->name, (long long)m->symval[k]);
	if (m->symval[k] >= y->lo && m->symval[k] <= y->hi)
		return 0;
	diag_error(m->path, "%s = %lld is outside the range the export allows for it, %s", y->name, (long long)m->symval[k],
	           range_text(m, y));
	return -1;
}

/* --max-dim SYMBOL=N: the largest value a run-time dim may take (the
 * workspace is sized for it at create). */
static int apply_max_dims(Imp *m, const ImportArgs *args)
{
	for (int i = 0; i < args->nmaxdims; i++) {
		const char *a = args->maxdims[i], *eq = strchr(a, '=');
		char *end = NULL;
		errno = 0;
		long long v = eq ? strtoll(eq + 1, &end, 10) : -1;
		if (!eq || eq == a || end == eq + 1 || *end || v < 1 || errno) {
			diag_error(NULL, "--max-dim takes SYMBOL=N with N >= 1 (got '%s')", a);
			return -1;
		}
		int sym = sym_find(m, arena_strndup(m->a, a, (size_t)(eq - a)));
		if (sym < 0 || !m->gsym[sym]) {
			Buf b = {0};
			for (int k = 0; k < m->g->ndims; k++)
				buf_printf(&b, "%s%s", b.len ? ", " : "", m->g->syms[m->g->dims[k]].name);
			diag_error(NULL, "--max-dim %s: '%.*s' is not a run-time dim of the model (its run-time dims: %s)", a,
			           (int)(eq - a), a, b.len ? b.s : "none");
			buf_free(&b);
			return -1;
		}
		Symbol *y = &m->g->syms[m->gsym[sym] - 1];
		if (v < y->lo) {
			diag_error(NULL, "--max-dim %s: the export allows %s only from %lld", a, y->name, (long long)y->lo);
			return -1;
		}
		if (v < y->hi)
			y->hi = m->sg->syms[sym].hi = v;
	}
	return 0;
}

/* Specialize every symbol that sizes a graph input (see above). */
static int bind_shapes(Imp *m, const ImportArgs *args)
{
	m->sg = sdfg_new(m->a, "symbols");
	cJSON *rc = json_get(m->ep, "range_constraints");
	cJSON *specs = json_get(json_get(json_get(m->ep, "graph_module"), "signature"), "input_specs");
	/* ranges */
	for (cJSON *r = rc ? rc->child : NULL; r; r = r->next) {
		Expr *e = parse_sym_expr(m, r->string, "range_constraints");
		if (!e)
			return -1;
		if (e->k != E_SYM)
			continue;
		Symbol *y = &m->sg->syms[e->v];
		int64_t lo, hi;
		if (json_int(json_get(r, "min_val"), &lo) == 0)
			y->lo = lo;
		if (json_int(json_get(r, "max_val"), &hi) == 0)
			y->hi = hi;
		else
			y->hi = INT64_MAX;
	}
	/* options */
	for (int i = 0; i < args->nshapes; i++)
		if (apply_shape(m, specs, args->shapes[i]))
			return -1;
	for (int i = 0; i < args->ndims; i++) {
		const char *a = args->dims[i], *eq = strchr(a, '=');
		char *end = NULL;
		long long v = eq ? strtoll(eq + 1, &end, 10) : -1;
		if (!eq || eq == a || end == eq + 1 || *end || v < 0) {
			diag_error(NULL, "--dim takes SYMBOL=SIZE (got '%s')", a);
			return -1;
		}
		int sym = sym_find(m, arena_strndup(m->a, a, (size_t)(eq - a)));
		if (sym < 0) {
			Buf b = {0};
			for (int k = 0; k < m->sg->nsyms; k++)
				buf_printf(&b, "%s%s", b.len ? ", " : "", m->sg->syms[k].name);
			diag_error(NULL, "--dim %s: the model has no symbol '%.*s' (its symbols: %s)", a, (int)(eq - a), a,
			           b.len ? b.s : "none: its shapes are static");
			buf_free(&b);
			return -1;
		}
		if (sym_bind(m, sym, v, arena_printf(m->a, "--dim %s", a)))
			return -1;
	}
	/* every input dim that is a symbol: the hint unless bound; ranges */
	Buf spec = {0};
	int bad = 0;
	for (int i = 0; i < json_len(specs); i++) {
		const char *nm;
		cJSON *sizes = input_sizes(m, json_at(specs, i), &nm);
		for (int d = 0; d < json_len(sizes); d++) {
			cJSON *x;
			const char *tag = json_union_tag(json_at(sizes, d), &x);
			if (!tag || strcmp(tag, "as_expr"))
				continue;
			const char *es = json_str(json_get(x, "expr_str"));
			if (!es) {
				diag_error(m->path, "tensor_values['%s']: malformed size (dim %d): as_expr without an expr_str", nm, d);
				return -1;
			}
			Expr *e = parse_sym_expr(m, es, nm);
			if (!e)
				return -1;
			for (int k = 0; k < m->sg->nsyms; k++) {
				if (!ex_uses(e, k) || m->symset[k] == 2)
					continue;
				Symbol *y = &m->sg->syms[k];
				int64_t hint;
				cJSON *hv;
				const char *ht = json_union_tag(json_get(x, "hint"), &hv);
				if (!m->symset[k]) {
					int sym;
					int64_t sv;
					if (!ht || strcmp(ht, "as_int") || json_int(hv, &hint) || solve_dim(m, e, hint, &sym, &sv)) {
						diag_error(m->path, "input '%s' dim %d is %s; give the value of %s with --dim %s=N", nm, d,
						           expr_text(m, e), y->name, y->name);
						bad = 1;
						m->symset[k] = 2;
						continue;
					}
					if (!args->fixed) { /* a run-time dim; the example's value is a probe for messages */
						int id = sdfg_add_sym(m->g, y->name, SYM_SHAPE, y->lo, y->hi);
						m->gsym[k] = id + 1;
						VEC_PUSH(m->a, m->g->dims, m->g->ndims, m->g->capdims, id);
						m->ndyn++;
						m->symval[k] = sv;
						m->symset[k] = 2;
						continue;
					}
					diag_note(m->path, "input '%s' dim %d is dynamic (%s%s%s in %s); compiled for %lld, "
					                   "the export's example size (choose with --shape or --dim %s=N)",
					          nm, d, e->k == E_SYM ? "" : expr_text(m, e), e->k == E_SYM ? "" : ", ", y->name,
					          range_text(m, y), (long long)hint, y->name);
					m->symval[k] = sv;
					m->symset[k] = 1;
				}
				bad |= sym_check(m, k, &spec) != 0;
			}
		}
	}
	for (int k = 0; k < m->sg->nsyms; k++) {
		if (m->symset[k] == 1)
			bad |= sym_check(m, k, &spec) != 0;
		if (m->symset[k] == 2)
			m->symset[k] = 1;
	}
	bad |= apply_max_dims(m, args);
	if (spec.len)
		m->g->specialized = arena_strdup(m->a, spec.s);
	buf_free(&spec);
	return bad ? -1 : 0;
}

/* ---- doccc check's census ------------------------------------------------------ */

static void census_dtype(Census *c, int st)
{
	if (!c)
		return;
	for (int i = 0; i < c->ndtypes; i++)
		if (c->dtypes[i] == st)
			return;
	if (c->ndtypes < (int)(sizeof c->dtypes / sizeof c->dtypes[0]))
		c->dtypes[c->ndtypes++] = st;
}

static CensusOp *census_op(Census *c, const char *op)
{
	for (int i = 0; i < c->nops; i++)
		if (!strcmp(c->ops[i].op, op))
			return &c->ops[i];
	CensusOp o = {arena_strdup(c->a, op), 0, 0, NULL};
	VEC_PUSH(c->a, c->ops, c->nops, c->capops, o);
	return &c->ops[c->nops - 1];
}

/* The message of the first "error: " line of a node's captured output. */
static const char *first_error(Arena *a, const char *text)
{
	const char *e = text ? strstr(text, "error: ") : NULL;
	if (!e)
		return "doccc cannot lower it";
	e += 7;
	return arena_strndup(a, e, strcspn(e, "\n"));
}

/* The symbols of the export, after bind_shapes: ranges, bound sizes, and
 * the input dims that use each. */
static void census_syms(Imp *m)
{
	Census *c = m->census;
	cJSON *specs = json_get(json_get(json_get(m->ep, "graph_module"), "signature"), "input_specs");
	for (int k = 0; k < m->sg->nsyms; k++) {
		Symbol *y = &m->sg->syms[k];
		Buf uses = {0};
		for (int i = 0; i < json_len(specs); i++) {
			const char *nm;
			cJSON *sizes = input_sizes(m, json_at(specs, i), &nm);
			for (int d = 0; d < json_len(sizes); d++) {
				cJSON *x;
				const char *tag = json_union_tag(json_at(sizes, d), &x);
				const char *es = tag && !strcmp(tag, "as_expr") ? json_str(json_get(x, "expr_str")) : NULL;
				Expr *e = es ? parse_sym_expr(m, es, nm) : NULL;
				if (e && ex_uses(e, k))
					buf_printf(&uses, "%s%s[%d]", uses.len ? ", " : "", nm ? nm : "?", d);
			}
		}
		CensusSym cs = {arena_strdup(c->a, y->name), y->lo, y->hi, m->symset[k] ? m->symval[k] : -1, m->gsym[k] != 0,
		                arena_strdup(c->a, uses.len ? uses.s : "")};
		VEC_PUSH(c->a, c->syms, c->nsyms, c->capsyms, cs);
		buf_free(&uses);
	}
}

/* A problem of tensor metadata `what` (tensor_values['x'] or a weight's
 * tensor_meta), located at the node being lowered when there is one. */
static void PRINTF_LIKE(3, 4) meta_error(Imp *m, const char *what, const char *fmt, ...)
{
	char msg[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	if (m->nodename)
		lw_error(m, "%s: %s", what, msg);
	else
		diag_error(m->path, "%s: %s", what, msg);
}

/* A size, stride or offset of metadata: a non-negative integer (a symbolic
 * one evaluated under the specialization). 0, or -1 after a message. */
static int read_dim(Imp *m, const cJSON *j, int64_t *v, const char *where, const char *what, int i)
{
	const char *desc = i >= 0 ? arena_printf(m->a, "the %s of '%s' in dim %d", what, where, i)
	                          : arena_printf(m->a, "the %s of '%s'", what, where);
	int r = read_symint(m, j, v, desc);
	if (r == -2)
		return -1;
	if (r == -1 || *v < 0) {
		meta_error(m, arena_printf(m->a, "tensor_values['%s']", where), "malformed %s%s", what,
		           i >= 0 ? arena_printf(m->a, " (dim %d)", i) : "");
		return -1;
	}
	return 0;
}

/* numel * size of a shape, within DOCC_MAX_TENSOR_BYTES; -1 if past it. */
int64_t lw_tensor_bytes(int rank, const int64_t *shape, int esz)
{
	int64_t n = esz;
	for (int i = 0; i < rank; i++)
		if (ck_mul(n, shape[i], &n) || n > DOCC_MAX_TENSOR_BYTES)
			return -1;
	return n;
}

/* A size recorded as an expression of run-time dims: it over g; else NULL. */
static Expr *dyn_expr(Imp *m, const cJSON *j)
{
	cJSON *x;
	const char *tag = json_union_tag(j, &x);
	const char *es = m->ndyn && tag && !strcmp(tag, "as_expr") ? json_str(json_get(x, "expr_str")) : NULL;
	const char *err = NULL;
	Expr *e = es ? ex_parse(m->sg, es, &err) : NULL;
	if (!e)
		return NULL; /* read_dim has read (or reported) it */
	sym_grow(m);
	return uses_dyn(m, e) ? to_g(m, e) : NULL;
}

static int read_meta(Imp *m, const cJSON *tm, Meta *o, const char *what)
{
	memset(o, 0, sizeof *o);
	int64_t st;
	cJSON *sizes = json_get(tm, "sizes"), *strides = json_get(tm, "strides");
	const char *tv = arena_printf(m->a, "tensor_values['%s']", what);
	if (!tm || json_int(json_get(tm, "dtype"), &st) || st < INT32_MIN || st > INT32_MAX || !cJSON_IsArray(sizes)) {
		meta_error(m, tv, "malformed tensor metadata");
		return -1;
	}
	o->st = (int)st;
	o->dt = dtype_from_torch((int)st);
	census_dtype(m->census, o->st);
	o->rank = json_len(sizes);
	if (o->rank > DOCC_MAX_RANK) {
		meta_error(m, tv, "rank %d is too large (doccc's limit is %d)", o->rank, DOCC_MAX_RANK);
		return -1;
	}
	for (int i = 0; i < o->rank; i++) {
		if (read_dim(m, json_at(sizes, i), &o->shape[i], what, "size", i))
			return -1;
		if ((o->x[i] = dyn_expr(m, json_at(sizes, i))))
			o->dyn = 1;
	}
	if (lw_tensor_bytes(o->rank, o->shape, o->dt >= 0 ? dtype_info[o->dt].size : 1) < 0) {
		meta_error(m, tv, "the tensor is too large (more than %lld bytes)", (long long)DOCC_MAX_TENSOR_BYTES);
		return -1;
	}
	int64_t s = 1;
	for (int i = o->rank - 1; i >= 0; i--) {
		o->stride[i] = s;
		s *= o->shape[i] ? o->shape[i] : 1;   /* at most the numel checked above */
	}
	if (cJSON_IsArray(strides) && json_len(strides) == o->rank)
		for (int i = 0; i < o->rank; i++) {
			if (read_dim(m, json_at(strides, i), &o->stride[i], what, "stride", i))
				return -1;
			o->dyn |= dyn_expr(m, json_at(strides, i)) != NULL;
		}
	cJSON *so = json_get(tm, "storage_offset");
	if (so && read_dim(m, so, &o->offset, what, "storage offset", -1))
		return -1;
	o->dyn |= so && dyn_expr(m, so) != NULL;
	for (int i = 0; i < o->rank && o->dyn; i++)
		if (!o->x[i])
			o->x[i] = ex_int(m->g, o->shape[i]);
	int64_t layout;
	if (json_int(json_get(tm, "layout"), &layout) == 0 && layout != 7 && layout != 0) {
		meta_error(m, tv, "only strided tensors are supported (layout %lld)", (long long)layout);
		return -1;
	}
	return 0;
}

int lw_meta(Imp *m, const char *name, Meta *o)
{
	cJSON *tm = json_get(m->tvals, name);
	if (!tm) {
		diag_error(m->path, "graph.tensor_values has no entry for '%s'", name);
		return -1;
	}
	return read_meta(m, tm, o, name);
}

/* ---- weights -------------------------------------------------------------------- */

/* Where a weight's bytes are, read when the compile needs them (consts.c):
 * a storage (an archive entry, an extracted archive's data file, or bytes
 * of the mapped safetensors file) of len bytes, and the strided view of it
 * the weight is (element strides and offset; contig when it is the first
 * numel elements in order). len 0 with numel > 0 is a fake tensor: zeros.
 * A view of part of a storage reads only [lo, hi) of it, so that weights
 * sharing one storage do not each read all of it. */
typedef struct {
	Pt2 *zip;
	const char *rel;     /* archive entry, or the data file's path when zip is NULL */
	const void *mapped;  /* safetensors: the bytes themselves */
	const char *where;   /* for messages: the file */
	size_t len;
	size_t lo, hi;       /* the bytes of the storage the view reads */
	int rank, esz, contig;
	int64_t shape[MAXDIM], stride[MAXDIM], offset;
} WeightSrc;

/* Gather a tensor (sizes/strides/offset in elements) into contiguous bytes. */
static void gather(char *dst, const char *src, int rank, const int64_t *shape, const int64_t *stride, int64_t off, int esz)
{
	int64_t idx[MAXDIM] = {0};
	int64_t n = 1;
	for (int i = 0; i < rank; i++)
		n *= shape[i];
	for (int64_t k = 0; k < n; k++) {
		int64_t e = off;
		for (int i = 0; i < rank; i++)
			e += idx[i] * stride[i];
		memcpy(dst + k * esz, src + e * esz, (size_t)esz);
		for (int i = rank - 1; i >= 0; i--) {
			if (++idx[i] < shape[i])
				break;
			idx[i] = 0;
		}
	}
}

/* Bytes [lo, hi) of the storage into dst. */
static int read_storage(const WeightSrc *w, size_t lo, size_t hi, void *dst)
{
	if (w->zip)
		return lo == 0 && hi == w->len ? pt2_read_into(w->zip, w->rel, dst, w->len)
		                               : pt2_read_range(w->zip, w->rel, lo, dst, hi - lo);
	return file_read_at(w->rel, (int64_t)lo, dst, hi - lo);
}

/* ConstSrc.make of an input's weight. */
static int weight_make(Sdfg *g, const ConstSrc *s, void *dst)
{
	(void)g;
	const WeightSrc *w = s->ctx;
	int64_t n = 1;
	for (int i = 0; i < w->rank; i++)
		n *= w->shape[i];
	size_t bytes = (size_t)(n * w->esz);
	if (!w->len || !n) {
		memset(dst, 0, bytes);
		return 0;
	}
	if (w->mapped) {
		if (w->contig)
			memcpy(dst, w->mapped, bytes);
		else
			gather(dst, w->mapped, w->rank, w->shape, w->stride, w->offset, w->esz);
		file_map_drop(w->mapped, w->len);
		return 0;
	}
	if (w->contig && w->lo == 0 && w->hi == bytes)
		return read_storage(w, 0, bytes, dst);
	char *tmp = malloc(w->hi - w->lo);
	if (!tmp) {
		diag_error(w->where, "out of memory reading '%s' (%zu bytes)", w->rel, w->hi - w->lo);
		return -1;
	}
	int rc = read_storage(w, w->lo, w->hi, tmp);
	if (!rc) /* the view's first element is the span's */
		gather(dst, tmp, w->rank, w->shape, w->stride, 0, w->esz);
	free(tmp);
	return rc;
}

/* The size of storage rel of the archive or the extracted archive; -1 reported. */
static int storage_size(Imp *m, WeightSrc *w, const char *rel)
{
	if (m->zip) {
		w->zip = m->zip;
		w->rel = rel;
		w->where = m->path;
		return pt2_size(m->zip, rel, &w->len);
	}
	w->rel = arena_printf(m->a, "%s%s", m->dir, rel);
	w->where = w->rel;
	struct stat sb;
	int err = stat(w->rel, &sb) != 0 ? errno : 0;
	if (err || !S_ISREG(sb.st_mode)) {
		diag_error(w->rel, "cannot read: %s", err ? strerror(err) : "not a regular file");
		return -1;
	}
	w->len = (size_t)sb.st_size;
	return 0;
}

/* The source of weight fqn (kind: "parameter", "buffer", "constant"),
 * checked against the graph's metadata for the placeholder: sizes, dtype,
 * and that the view fits its storage (the bytes are read later). */
static const WeightSrc *load_weight(Imp *m, const char *fqn, int isconst, const Meta *want, const char *placeholder)
{
	int esz = dtype_info[want->dt].size;
	int64_t bytes = lw_tensor_bytes(want->rank, want->shape, esz), numel = bytes / esz;  /* read_meta checked it */
	if (ck_add(m->wbytes, bytes, &m->wbytes) || m->wbytes > DOCC_MAX_WEIGHT_BYTES) {
		diag_error(m->path, "graph input '%s': the weights are too large (more than %lld bytes in all)", placeholder,
		           (long long)DOCC_MAX_WEIGHT_BYTES);
		return NULL;
	}
	WeightSrc *w = arena_alloc(m->a, sizeof *w);
	w->rank = want->rank;
	w->esz = esz;
	w->contig = 1;
	memcpy(w->shape, want->shape, sizeof w->shape);
	if (m->st) {
		const StTensor *t = st_find(m->st, fqn);
		if (!t) {
			diag_error(m->stpath, "no tensor '%s' (needed for graph input '%s')", fqn, placeholder);
			return NULL;
		}
		int dt = dtype_from_st(t->dtype);
		int same = dt == want->dt && t->rank == want->rank;
		for (int i = 0; same && i < t->rank; i++)
			same = t->shape[i] == want->shape[i];
		if (!same) {
			diag_error(m->stpath, "tensor '%s' has dtype %s and rank %d; the graph expects %s with the shape of '%s'",
			           fqn, t->dtype, t->rank, dtype_info[want->dt].name, placeholder);
			return NULL;
		}
		if ((int64_t)t->nbytes != bytes) {
			diag_error(m->stpath, "tensor '%s' holds %zu bytes; its shape needs %lld", fqn, t->nbytes, (long long)bytes);
			return NULL;
		}
		w->mapped = t->data;
		w->len = t->nbytes;
		w->where = m->stpath;
		w->rel = fqn;
		return w;
	}
	if (!m->zip && !m->dir) {
		diag_error(m->path, "the program needs weights (first: '%s' for graph input '%s'); pass --weights FILE.safetensors "
		                    "or compile the .pt2 archive", fqn, placeholder);
		return NULL;
	}
	cJSON *cfgs[2] = {isconst ? m->ccfg : m->wcfg, isconst ? m->wcfg : m->ccfg};
	cJSON *ent = NULL;
	int which = 0;
	for (int k = 0; k < 2 && !ent; k++) {
		ent = json_get(json_get(cfgs[k], "config"), fqn);
		which = k;
	}
	int inconst = (which == 0) == !!isconst;
	if (!ent) {
		diag_error(m->path, "no weights for '%s' (graph input '%s') in data/weights or data/constants", fqn, placeholder);
		return NULL;
	}
	int usepickle = 0;
	json_bool(json_get(ent, "use_pickle"), &usepickle);
	const char *pn = json_str(json_get(ent, "path_name"));
	if (usepickle || !pn) {
		diag_error(m->path, "weight '%s' is stored as a pickle (a tensor subclass); doccc reads raw weights only", fqn);
		return NULL;
	}
	Meta meta;
	if (read_meta(m, json_get(ent, "tensor_meta"), &meta, fqn))
		return NULL;
	if (meta.dt != want->dt || meta.rank != want->rank) {
		diag_error(m->path, "weight '%s': stored dtype/rank differ from the graph's", fqn);
		return NULL;
	}
	for (int i = 0; i < meta.rank; i++)
		if (meta.shape[i] != want->shape[i]) {
			diag_error(m->path, "weight '%s': stored shape differs from the graph's", fqn);
			return NULL;
		}
	char *rel = arena_printf(m->a, "data/%s/%s", inconst ? "constants" : "weights", pn);
	if (storage_size(m, w, rel))
		return NULL;
	if (w->len == 0 && numel > 0) /* fake or empty tensor: zeros */
		return w;
	/* Bounds of the strided view inside the storage: the last byte it
	 * reads, (offset + sum (size - 1) * stride + 1) * esz, overflow-checked
	 * (read_meta made offset and strides non-negative). */
	int64_t hi = meta.offset, t;
	int over = 0;
	for (int i = 0; i < meta.rank; i++)
		if (meta.shape[i] > 0)
			over |= ck_mul(meta.shape[i] - 1, meta.stride[i], &t) || ck_add(hi, t, &hi);
	over |= ck_add(hi, 1, &hi) || ck_mul(hi, esz, &hi);
	if (numel > 0 && (over || (uint64_t)hi > w->len)) {
		diag_error(m->path, "weight '%s': storage '%s' is too small (%zu bytes) for its shape and strides", fqn, pn, w->len);
		return NULL;
	}
	int64_t s = 1;
	w->contig = meta.offset == 0;
	for (int i = meta.rank - 1; i >= 0; i--) {
		if (meta.shape[i] != 1 && meta.stride[i] != s)
			w->contig = 0;
		s *= meta.shape[i];
	}
	memcpy(w->stride, meta.stride, sizeof w->stride);
	w->offset = meta.offset;
	w->lo = (size_t)(meta.offset * esz); /* within hi, checked above */
	w->hi = (size_t)hi;
	return w;
}

/* ---- containers for values ---------------------------------------------------- */

int lw_check_dtype(Imp *m, const Meta *mt, const char *name)
{
	if (mt->dt >= 0)
		return 0;
	if (m->nodename)
		lw_error(m, "dtype %s of value '%s' is not supported", dtype_torch_name(mt->st), name);
	else
		diag_error(m->path, "graph input '%s': dtype %s is not supported", name, dtype_torch_name(mt->st));
	m->failed = 1;
	return -1;
}

/* New container for value `name` with its recorded metadata. */
int lw_new_value(Imp *m, const char *name, CKind k)
{
	Meta mt;
	if (lw_meta(m, name, &mt) || lw_check_dtype(m, &mt, name))
		return -1;
	int id = mt.dyn ? sdfg_add_container_x(m->g, name, mt.dt, k, mt.rank, mt.x)
	                : sdfg_add_container(m->g, name, mt.dt, k, mt.rank, mt.shape);
	sdfg_c(m->g, id)->origin = arena_strdup(m->a, name);
	lw_bind(m, name, id);
	return id;
}

/* The containers a lowering created, ids [from, ncs), against the IR's
 * assumptions before anything else sees them: constant sizes are
 * non-negative and the tensor within DOCC_MAX_TENSOR_BYTES; a view with a
 * static layout addresses only elements of its base. A lowering that
 * computed sizes from absurd arguments is stopped here, with the node's
 * location, instead of overflowing in a pass or the emitter. */
static int check_new_containers(Imp *m, int from)
{
	Sdfg *g = m->g;
	for (int id = from; id < g->ncs; id++) {
		Container *c = &g->cs[id];
		int64_t shape[MAXDIM], v;
		int fixed = 1;
		for (int d = 0; d < c->rank; d++) {
			if (!ex_isint(c->shape[d], &shape[d])) {
				fixed = 0;
				continue;
			}
			if (shape[d] < 0) {
				lw_error(m, "value '%s' would have size %lld in dim %d", c->origin && *c->origin ? c->origin : c->name,
				         (long long)shape[d], d);
				return -1;
			}
		}
		if (fixed && lw_tensor_bytes(c->rank, shape, dtype_info[c->dt].size) < 0) {
			lw_error(m, "value '%s' is too large (more than %lld bytes)", c->origin && *c->origin ? c->origin : c->name,
			         (long long)DOCC_MAX_TENSOR_BYTES);
			return -1;
		}
		if (c->kind != CK_VIEW || !fixed)
			continue;
		/* lowest and highest element of the base the view reads */
		int64_t lo, hi, base = sdfg_numel(g, c->base), t;
		if (!ex_isint(c->offset, &lo) || base < 0)
			continue;
		hi = lo;
		int over = 0, empty = 0;
		for (int d = 0; d < c->rank; d++) {
			empty |= shape[d] == 0;
			if (!ex_isint(c->stride[d], &v)) {
				fixed = 0;
				break;
			}
			over |= ck_mul(shape[d] ? shape[d] - 1 : 0, v, &t) || ck_add(t < 0 ? lo : hi, t, t < 0 ? &lo : &hi);
		}
		if (fixed && !empty && (over || lo < 0 || hi >= base)) {
			lw_error(m, "value '%s' is a view outside the storage of '%s' (%lld elements)",
			         c->origin && *c->origin ? c->origin : c->name, g->cs[c->base].name, (long long)base);
			return -1;
		}
	}
	return 0;
}

/* ---- argument binding ----------------------------------------------------------- */

SymVal *lw_symval(Imp *m, const char *name)
{
	for (int i = m->nsvs - 1; i >= 0; i--)
		if (!strcmp(m->svs[i].name, name))
			return &m->svs[i];
	return NULL;
}

/* With run-time dims, a SymInt's expression as the export records it
 * (graph.sym_int_values); a SymBool's is kept as text for a guard; a
 * SymFloat computed from run-time dims is only marked dynamic. */
void lw_set_symval(Imp *m, const char *name, SymVal v)
{
	v.x = NULL;
	v.bexpr = NULL;
	if (m->ndyn && (v.k == SV_INT || v.k == SV_BOOL)) {
		cJSON *x, *j = json_get(json_get(m->graph, v.k == SV_INT ? "sym_int_values" : "sym_bool_values"), name);
		const char *tag = json_union_tag(j, &x);
		const char *es = tag && !strcmp(tag, "as_expr") ? json_str(json_get(x, "expr_str")) : NULL;
		const char *err = NULL;
		Expr *e = es && v.k == SV_INT ? ex_parse(m->sg, es, &err) : NULL;
		if (e) {
			sym_grow(m);
			if (uses_dyn(m, e))
				v.x = to_g(m, e), v.dyn = 1;
		} else if (es && v.k == SV_BOOL && guard_uses_dyn(m, es))
			v.bexpr = arena_strdup(m->a, es), v.dyn = 1;
		else if (es && v.k == SV_INT)
			v.dyn = 1; /* an expression doccc cannot read: nothing may take it as a number */
	}
	v.name = arena_strdup(m->a, name);
	VEC_PUSH(m->a, m->svs, m->nsvs, m->capsvs, v);
}

/* A {"as_name": n} reference to a SymInt/SymFloat/SymBool value; NULL
 * (after a message) if the graph did not compute it. */
static SymVal *sym_ref(Imp *m, const cJSON *x, const char *argname)
{
	const char *nm = json_str(json_get(x, "as_name"));
	SymVal *sv = nm ? lw_symval(m, nm) : NULL;
	if (!sv)
		lw_error(m, "argument '%s' refers to symbolic value '%s', which doccc did not compute", argname, nm ? nm : "?");
	return sv;
}

static int read_ints(Imp *m, const cJSON *arr, Val *v, const char *argname)
{
	v->n = json_len(arr);
	v->is = arena_alloc(m->a, sizeof(int64_t) * (size_t)(v->n + 1));
	for (int i = 0; i < v->n; i++) {
		cJSON *e = json_at(arr, i);
		cJSON *x;
		const char *tag = json_union_tag(e, &x);
		if (tag && !strcmp(tag, "as_int"))
			e = x;
		else if (tag && !strcmp(tag, "as_name")) {
			SymVal *sv = sym_ref(m, e, argname);
			if (!sv)
				return -1;
			if (sv->k != SV_INT) {
				lw_error(m, "argument '%s' element %d is a number read from a tensor at run time (item()); "
				            "doccc compiles static shapes only", argname, i);
				return -1;
			}
			v->is[i] = sv->i;
			if (sv->dyn) {
				m->argdyn = 1;
				if (!v->xs)
					v->xs = arena_alloc(m->a, sizeof(Expr *) * (size_t)(v->n + 1));
				v->xs[i] = sv->x;
			}
			continue;
		} else if (tag) {
			lw_error(m, "argument '%s' element %d is malformed", argname, i);
			return -1;
		}
		if (json_int(e, &v->is[i])) {
			lw_error(m, "argument '%s' element %d is not an integer", argname, i);
			return -1;
		}
	}
	v->k = V_INTS;
	return 0;
}

/* A symbolic scalar argument: a compile-time number, or the rank-0 tensor
 * that item() read. */
static int read_symscalar(Imp *m, const cJSON *x, Val *v, const char *argname)
{
	SymVal *sv = sym_ref(m, x, argname);
	if (!sv)
		return -1;
	m->argdyn |= sv->dyn;
	switch (sv->k) {
	case SV_INT: v->k = V_INT; v->i = sv->i; v->x = sv->x; break;
	case SV_BOOL: v->k = V_BOOL; v->i = sv->i; v->s = sv->bexpr; break;
	case SV_FLOAT: v->k = V_FLOAT; v->f = sv->f; break;
	case SV_TENSOR: v->k = V_TENSOR; v->t = sv->t; break;
	}
	return 0;
}

/* Convert a serialized Argument into a Val. */
static int read_arg(Imp *m, const cJSON *arg, Val *v, const char *argname)
{
	cJSON *x;
	const char *tag = json_union_tag(arg, &x);
	memset(v, 0, sizeof *v);
	if (!tag) {
		lw_error(m, "argument '%s' is malformed", argname);
		return -1;
	}
	if (!strcmp(tag, "as_none")) {
		v->k = V_NONE;
	} else if (!strcmp(tag, "as_tensor")) {
		const char *nm = json_str(json_get(x, "name"));
		v->k = V_TENSOR;
		v->t = nm ? lw_lookup(m, nm) : -1;
		if (v->t < 0) {
			lw_error(m, "argument '%s' refers to value '%s', which doccc did not compute", argname, nm ? nm : "?");
			return -1;
		}
		if (value_stale(m, nm)) {
			lw_error(m, "argument '%s' reads '%s', %s", argname, nm, value_stale(m, nm));
			return -1;
		}
	} else if (!strcmp(tag, "as_tensors") || !strcmp(tag, "as_optional_tensors")) {
		v->k = V_TENSORS;
		v->n = json_len(x);
		v->ts = arena_alloc(m->a, sizeof(int) * (size_t)(v->n + 1));
		for (int i = 0; i < v->n; i++) {
			cJSON *e = json_at(x, i), *ev;
			const char *et = json_union_tag(e, &ev);
			if (et && !strcmp(et, "as_tensor"))
				e = ev;
			else if (et && !strcmp(et, "as_none")) {
				v->ts[i] = -1;
				continue;
			}
			const char *nm = json_str(json_get(e, "name"));
			v->ts[i] = nm ? lw_lookup(m, nm) : -1;
			if (v->ts[i] < 0) {
				lw_error(m, "argument '%s' refers to value '%s', which doccc did not compute", argname, nm ? nm : "?");
				return -1;
			}
			if (value_stale(m, nm)) {
				lw_error(m, "argument '%s' reads '%s', %s", argname, nm, value_stale(m, nm));
				return -1;
			}
		}
	} else if (!strcmp(tag, "as_int") || !strcmp(tag, "as_sym_int")) {
		cJSON *y;
		const char *t2 = json_union_tag(x, &y);
		if (t2 && !strcmp(t2, "as_name"))
			return read_symscalar(m, x, v, argname);
		if (t2 && !strcmp(t2, "as_int"))
			x = y;
		v->k = V_INT;
		if (json_int(x, &v->i)) {
			lw_error(m, "argument '%s' is not an integer", argname);
			return -1;
		}
	} else if (!strcmp(tag, "as_ints") || !strcmp(tag, "as_sym_ints")) {
		return read_ints(m, x, v, argname);
	} else if (!strcmp(tag, "as_float") || !strcmp(tag, "as_sym_float")) {
		cJSON *y;
		const char *t2 = json_union_tag(x, &y);
		if (t2 && !strcmp(t2, "as_name"))
			return read_symscalar(m, x, v, argname);
		if (t2 && !strcmp(t2, "as_float"))
			x = y;
		v->k = V_FLOAT;
		if (json_float(x, &v->f)) {
			lw_error(m, "argument '%s' is not a number", argname);
			return -1;
		}
	} else if (!strcmp(tag, "as_floats")) {
		v->k = V_FLOATS;
		v->n = json_len(x);
		v->fs = arena_alloc(m->a, sizeof(double) * (size_t)(v->n + 1));
		for (int i = 0; i < v->n; i++)
			if (json_float(json_at(x, i), &v->fs[i])) {
				lw_error(m, "argument '%s' element %d is not a number", argname, i);
				return -1;
			}
	} else if (!strcmp(tag, "as_bool") || !strcmp(tag, "as_sym_bool")) {
		int b = 0;
		cJSON *y;
		const char *t2 = json_union_tag(x, &y);
		if (t2 && !strcmp(t2, "as_name"))
			return read_symscalar(m, x, v, argname);
		if (t2 && !strcmp(t2, "as_bool"))
			x = y;
		if (json_bool(x, &b)) {
			lw_error(m, "argument '%s' is not a bool", argname);
			return -1;
		}
		v->k = V_BOOL;
		v->i = b;
	} else if (!strcmp(tag, "as_string")) {
		v->k = V_STR;
		v->s = json_str(x);
		if (!v->s) {
			lw_error(m, "argument '%s' is not a string", argname);
			return -1;
		}
	} else if (!strcmp(tag, "as_scalar_type") || !strcmp(tag, "as_memory_format") || !strcmp(tag, "as_layout")) {
		v->k = V_INT;
		if (json_int(x, &v->i)) {
			lw_error(m, "argument '%s' is not an integer", argname);
			return -1;
		}
	} else if (!strcmp(tag, "as_device")) {
		v->k = V_STR;
		v->s = json_str(json_get(x, "type"));
		if (!v->s) {
			lw_error(m, "argument '%s' is a malformed device", argname);
			return -1;
		}
	} else {
		lw_error(m, "argument '%s' has kind '%s', which doccc does not support", argname, tag);
		return -1;
	}
	return 0;
}

/* Parse a schema default ("[1, 1]", "0", "None", "True", "\"none\"", "1"). */
static void default_val(Imp *m, const SchemaArg *a, Val *v)
{
	const char *d = a->dflt;
	memset(v, 0, sizeof *v);
	if (!strcmp(d, "None")) {
		v->k = V_NONE;
	} else if (!strcmp(d, "True") || !strcmp(d, "False")) {
		v->k = V_BOOL;
		v->i = d[0] == 'T';
	} else if (d[0] == '"') {
		v->k = V_STR;
		v->s = arena_strndup(m->a, d + 1, strlen(d) - 2);
	} else if (d[0] == '[') {
		v->k = V_INTS;
		v->is = arena_alloc(m->a, sizeof(int64_t) * 8);
		for (const char *p = d + 1; *p && *p != ']';) {
			while (*p == ' ' || *p == ',')
				p++;
			if (*p == ']')
				break;
			v->is[v->n++] = strtoll(p, (char **)&p, 10);
		}
	} else if (a->type == AT_INTS) {
		/* "int[2] padding=0": the scalar repeated listlen times */
		v->k = V_INTS;
		v->n = a->listlen ? a->listlen : 1;
		v->is = arena_alloc(m->a, sizeof(int64_t) * (size_t)v->n);
		for (int i = 0; i < v->n; i++)
			v->is[i] = strtoll(d, NULL, 10);
	} else if (strchr(d, '.') || strchr(d, 'e')) {
		v->k = V_FLOAT;
		v->f = strtod(d, NULL);
	} else {
		v->k = V_INT;
		v->i = strtoll(d, NULL, 10);
		v->f = (double)v->i;
	}
}

/* Bind node inputs to schema positions, filling in defaults. */
static int bind_args(Imp *m, const cJSON *node)
{
	const AtenInfo *info = m->info;
	for (int i = 0; i < info->nargs; i++)
		memset(&m->args[i], 0, sizeof m->args[i]);
	cJSON *ins = json_get(node, "inputs");
	int pos = 0;
	for (int k = 0; k < json_len(ins); k++) {
		cJSON *na = json_at(ins, k);
		const char *nm = json_str(json_get(na, "name"));
		int at = -1;
		if (nm && *nm) {
			for (int i = 0; i < info->nargs; i++)
				if (!strcmp(info->args[i].name, nm))
					at = i;
		} else
			at = pos;
		if (at < 0 || at >= info->nargs) {
			lw_error(m, "argument '%s' is not in the schema %s", nm ? nm : "?", info->schema);
			return -1;
		}
		pos = at + 1;
		if (read_arg(m, json_get(na, "arg"), &m->args[at], info->args[at].name))
			return -1;
		/* item()'s run-time number: only as an operand of elementwise
		 * arithmetic; Python arithmetic on it (t < 0): only in guards */
		ArgType ty = info->args[at].type;
		int guard = !strcmp(info->lowering, "assert_scalar");
		if (m->args[at].k == V_TENSOR && m->args[at].t < 0 && !guard) {
			lw_error(m, "argument '%s' is computed from a number read from a tensor at run time (item()); "
			            "doccc does not compile Python arithmetic on such numbers: use tensor ops", info->args[at].name);
			return -1;
		}
		if (m->args[at].k == V_TENSOR && ty != AT_TENSOR && ty != AT_TENSOR_LIST && !guard &&
		    strcmp(info->lowering, "binary") && strcmp(info->lowering, "where") && strcmp(info->lowering, "fill")) {
			lw_error(m, "argument '%s' is a number read from a tensor at run time (item()); doccc takes such numbers "
			            "only as operands of elementwise arithmetic, and needs a constant here", info->args[at].name);
			return -1;
		}
	}
	for (int i = 0; i < info->nargs; i++) {
		if (m->args[i].k != V_ABSENT)
			continue;
		if (!info->args[i].has_default) {
			lw_error(m, "required argument '%s' is missing", info->args[i].name);
			return -1;
		}
		default_val(m, &info->args[i], &m->args[i]);
	}
	/* An int list given as a single int ("int[2] padding=1" serialized as ints
	 * of length 1) is repeated to its fixed length. */
	for (int i = 0; i < info->nargs; i++) {
		Val *v = &m->args[i];
		int L = info->args[i].listlen;
		if (info->args[i].type == AT_INTS && v->k == V_INT) {
			int64_t x = v->i;
			v->k = V_INTS;
			v->n = L ? L : 1;
			v->is = arena_alloc(m->a, sizeof(int64_t) * (size_t)v->n);
			for (int j = 0; j < v->n; j++)
				v->is[j] = x;
		} else if (info->args[i].type == AT_INTS && v->k == V_INTS && L > 1 && v->n == 1) {
			int64_t x = v->is[0];
			v->is = arena_alloc(m->a, sizeof(int64_t) * (size_t)L);
			for (int j = 0; j < L; j++)
				v->is[j] = x;
			v->n = L;
		}
	}
	return 0;
}

Val *lw_arg(Imp *m, const char *name)
{
	for (int i = 0; i < m->info->nargs; i++)
		if (!strcmp(m->info->args[i].name, name))
			return &m->args[i];
	diag_internal(__FILE__, __LINE__, "op %s has no argument '%s'", m->info->target, name);
}

int lw_tensor(Imp *m, const char *name)
{
	Val *v = lw_arg(m, name);
	return v->k == V_TENSOR ? v->t : -1;
}

/* A scalar argument that item() computed at run time where a lowering needs
 * a compile-time number. */
static void runtime_scalar(Imp *m, const Val *v, const char *name)
{
	if (v->k == V_TENSOR && m->info->args[v - m->args].type != AT_TENSOR)
		lw_error(m, "argument '%s' is a number read from a tensor at run time (item()); doccc needs a constant here", name);
}

double lw_num(Imp *m, const char *name, double dflt)
{
	Val *v = lw_arg(m, name);
	runtime_scalar(m, v, name);
	if (v->k == V_FLOAT)
		return v->f;
	if (v->k == V_INT || v->k == V_BOOL)
		return (double)v->i;
	return dflt;
}

int64_t lw_int(Imp *m, const char *name, int64_t dflt)
{
	Val *v = lw_arg(m, name);
	runtime_scalar(m, v, name);
	if (v->k == V_INT || v->k == V_BOOL)
		return v->i;
	return dflt;
}

/* ---- lowering helpers ----------------------------------------------------------- */

static int import_inputs(Imp *m)
{
	cJSON *sig = json_get(json_get(json_get(m->ep, "graph_module"), "signature"), "input_specs");
	int bad = 0, nuser = 0;
	for (int i = 0; i < json_len(sig); i++) {
		cJSON *spec = json_at(sig, i), *x;
		const char *kind = json_union_tag(spec, &x);
		if (!kind) {
			diag_error(m->path, "graph_module.signature.input_specs[%d]: malformed", i);
			bad = 1;
			continue;
		}
		if (!strcmp(kind, "user_input")) {
			cJSON *a = json_get(x, "arg"), *t;
			const char *at = json_union_tag(a, &t);
			if (!at || strcmp(at, "as_tensor")) {
				diag_error(m->path, "input_specs[%d]: a non-tensor user input (%s) is not supported; "
				                    "pass Python values as constants at export time", i, at ? at : "?");
				bad = 1;
				continue;
			}
			const char *nm = json_str(json_get(t, "name"));
			if (!nm)
				diag_error(m->path, "input_specs[%d]: malformed user_input (its tensor has no name)", i);
			int id = nm ? lw_new_value(m, nm, CK_INPUT) : -1;
			if (id < 0) {
				bad = 1;
				continue;
			}
			sdfg_c(m->g, id)->io = nuser++;
			continue;
		}
		if (!strcmp(kind, "constant_input"))
			continue; /* baked into the graph by export */
		const char *fqn = NULL;
		int isconst = 0;
		if (!strcmp(kind, "parameter"))
			fqn = json_str(json_get(x, "parameter_name"));
		else if (!strcmp(kind, "buffer")) {
			fqn = json_str(json_get(x, "buffer_name"));
			int pers = 1;
			json_bool(json_get(x, "persistent"), &pers);
			isconst = !pers;
		} else if (!strcmp(kind, "tensor_constant")) {
			fqn = json_str(json_get(x, "tensor_constant_name"));
			isconst = 1;
		} else {
			diag_error(m->path, "input_specs[%d]: '%s' inputs are not supported", i, kind);
			bad = 1;
			continue;
		}
		const char *nm = json_str(json_get(json_get(x, "arg"), "name"));
		if (!nm || !fqn) {
			diag_error(m->path, "input_specs[%d]: malformed %s", i, kind);
			bad = 1;
			continue;
		}
		Meta mt;
		if (lw_meta(m, nm, &mt) || lw_check_dtype(m, &mt, nm)) {
			bad = 1;
			continue;
		}
		const WeightSrc *ws = load_weight(m, fqn, isconst, &mt, nm);
		int id = ws ? lw_new_value(m, nm, CK_CONST) : -1;
		if (id < 0) {
			bad = 1;
			continue;
		}
		sdfg_const_source(m->g, id, weight_make, ws);
	}
	/* Inputs in signature order. */
	m->g->ninputs = nuser;
	m->g->inputs = arena_alloc(m->a, sizeof(int) * (size_t)(nuser + 1));
	for (int i = 0; i < m->g->ncs; i++)
		if (m->g->cs[i].kind == CK_INPUT)
			m->g->inputs[m->g->cs[i].io] = i;
	return bad ? -1 : 0;
}

static int import_outputs(Imp *m)
{
	cJSON *specs = json_get(json_get(json_get(m->ep, "graph_module"), "signature"), "output_specs");
	int n = json_len(specs), bad = 0;
	m->g->outputs = arena_alloc(m->a, sizeof(int) * (size_t)(n + 1));
	m->g->noutputs = 0;
	for (int i = 0; i < n; i++) {
		cJSON *x;
		const char *kind = json_union_tag(json_at(specs, i), &x);
		if (!kind || strcmp(kind, "user_output"))
			continue; /* checked in check_signature */
		cJSON *a = json_get(x, "arg"), *t;
		const char *at = json_union_tag(a, &t);
		const char *nm = at && !strcmp(at, "as_tensor") ? json_str(json_get(t, "name")) : NULL;
		if (!nm) {
			diag_error(m->path, "output_specs[%d]: a non-tensor output (%s) is not supported", i, at ? at : "?");
			bad = 1;
			continue;
		}
		int c = lw_lookup(m, nm);
		if (c < 0) {
			diag_error(m->path, "output_specs[%d]: output '%s' was not computed", i, nm);
			bad = 1;
			continue;
		}
		if (value_stale(m, nm)) {
			diag_error(m->path, "output_specs[%d]: output '%s' is read, %s", i, nm, value_stale(m, nm));
			bad = 1;
			continue;
		}
		int k = m->g->noutputs;
		Container *s = sdfg_c(m->g, c);
		if (s->kind == CK_TRANSIENT && sdfg_is_contiguous(m->g, c)) {
			s->kind = CK_OUTPUT;
			s->io = k;
		} else {
			/* An input, weight, view or repeated output: copy it out. */
			m->nodename = nm;
			m->nodei = -1;
			int o = lw_copy(m, c, arena_printf(m->a, "%s_out", nm));
			sdfg_c(m->g, o)->kind = CK_OUTPUT;
			sdfg_c(m->g, o)->io = k;
			sdfg_c(m->g, o)->origin = arena_strdup(m->a, nm);
			m->g->root->kids[m->g->root->nkids - 1]->label = arena_strdup(m->a, nm);
			c = o;
		}
		m->g->outputs[m->g->noutputs++] = c;
	}
	return bad ? -1 : 0;
}

static int check_signature(Imp *m)
{
	cJSON *specs = json_get(json_get(json_get(m->ep, "graph_module"), "signature"), "output_specs");
	int bad = 0;
	for (int i = 0; i < json_len(specs); i++) {
		cJSON *x;
		const char *kind = json_union_tag(json_at(specs, i), &x);
		if (!kind) {
			diag_error(m->path, "graph_module.signature.output_specs[%d]: malformed", i);
			bad = 1;
		} else if (!strcmp(kind, "loss_output") || !strncmp(kind, "gradient_to_", 12)) {
			diag_error(m->path, "output_specs[%d] is a %s: the graph computes gradients; doccc compiles inference only "
			                    "(export the model in eval mode under torch.no_grad())", i, kind);
			bad = 1;
		} else if (!strcmp(kind, "buffer_mutation") || !strcmp(kind, "parameter_mutation") ||
		           !strcmp(kind, "user_input_mutation")) {
			const char *what = json_str(json_get(x, "buffer_name"));
			if (!what)
				what = json_str(json_get(x, "parameter_name"));
			if (!what)
				what = json_str(json_get(x, "user_input_name"));
			diag_error(m->path, "output_specs[%d]: the graph mutates '%s' (%s); doccc compiles inference only "
			                    "(training-mode batch norm does this: call model.eval() before export)",
			           i, what ? what : "?", kind);
			bad = 1;
		} else if (strcmp(kind, "user_output")) {
			diag_error(m->path, "output_specs[%d]: '%s' outputs are not supported", i, kind);
			bad = 1;
		}
	}
	return bad ? -1 : 0;
}

/* The tensor value name passed as argument k of node, or NULL. */
static const char *tensor_arg(const cJSON *node, int k)
{
	cJSON *t;
	const char *tag = json_union_tag(json_get(json_at(json_get(node, "inputs"), k), "arg"), &t);
	return tag && !strcmp(tag, "as_tensor") ? json_str(json_get(t, "name")) : NULL;
}

/* A view op's outputs (schema "Tensor(a) self -> Tensor(a)", in-place ops'
 * too) share the storage of the argument of the same alias set in torch. */
static void track_aliases(Imp *m, const cJSON *node)
{
	const char *vn = NULL;
	cJSON *ins = json_get(node, "inputs");
	for (int k = 0; m->info->ret_alias && !vn && k < json_len(ins); k++) {
		const char *nm = json_str(json_get(json_at(ins, k), "name"));
		for (int i = 0; nm && i < m->info->nargs; i++)
			if (m->info->args[i].alias == m->info->ret_alias && !strcmp(m->info->args[i].name, nm))
				vn = tensor_arg(node, k);
	}
	ValueEnt *src = vn ? value_ent(m, vn) : NULL;
	if (!src)
		return;
	for (int k = 0; k < json_len(json_get(node, "outputs")); k++) {
		const char *on = lw_out_name(node, k);
		ValueEnt *e = on ? value_ent(m, on) : NULL;
		if (e)
			e->root = src->root;
	}
}

/* Argument argname of node (a tensor the op updates in place without
 * returning it, and whose update doccc does not compute) and every alias
 * of it: reading them later is an error saying why. */
void lw_mark_stale(Imp *m, const cJSON *node, const char *argname, const char *why)
{
	cJSON *ins = json_get(node, "inputs");
	for (int k = 0; k < json_len(ins); k++) {
		const char *nm = json_str(json_get(json_at(ins, k), "name"));
		const char *vn = nm && !strcmp(nm, argname) ? tensor_arg(node, k) : NULL;
		ValueEnt *e = vn ? value_ent(m, vn) : NULL;
		for (int j = m->nvals - 1; e && j >= 0; j--)
			if (!strcmp(m->vals[j].root, e->root) && value_ent(m, m->vals[j].name) == &m->vals[j])
				m->vals[j].stale = arena_printf(m->a, "but node '%s' updated it in place, %s", m->nodename, why);
	}
}

/* In-place ops (relu_, add_) mutate their input: later readers of that
 * value, which the non-functional training IR names by the old value, must
 * see the result. Rebinding the name makes the graph functional. Other
 * values that share its storage in torch (views of it, or its base when it
 * is a view) see the write too: those bound to the very container are
 * rebound as well; the others would read the old data, so reading them is
 * an error (stale) -- Core ATen, which is functional, has no such aliases. */
/* The storage of root container r after an in-place write of out through
 * its view v (torch's view semantics made functional, as its
 * functionalization does with view_scatter): a new flat container, r's
 * elements with v's positions taken from out (the scatter node's view
 * mode: ir/expand/shape.c). -1 when v's layout is not static. */
static int write_through(Imp *m, int r, int v, int out)
{
	Container *rc = lw_c(m, r), *vc = lw_c(m, v);
	int64_t n = 1, st, off;
	for (int d = 0; d < rc->rank; d++) {
		int64_t k;
		if (!ex_isint(rc->shape[d], &k))
			return -1;
		n *= k;
	}
	if (!ex_isint(vc->offset, &off))
		return -1;
	int64_t strides[MAXDIM];
	for (int d = 0; d < vc->rank; d++) {
		if (!ex_isint(vc->stride[d], &st))
			return -1;
		strides[d] = st;
	}
	Expr *ne = ex_int(m->g, n), *one = ex_int(m->g, 1);
	int flat = sdfg_add_view(m->g, arena_printf(m->a, "%s_storage", m->nodename), r, 1, &ne, &one, ex_int(m->g, 0));
	lw_c(m, flat)->origin = "";
	int nr = sdfg_add_container_x(m->g, arena_printf(m->a, "%s_written", m->nodename), rc->dt, CK_TRANSIENT, 1, &ne);
	lw_c(m, nr)->origin = "";
	LibNode *l = lw_lib(m, LIB_SCATTER);
	l->in[0] = flat, l->in[1] = out, l->nin = 2;
	l->out[0] = nr, l->nout = 1;
	lib_set_int(m->g, l, "mode", SC_VIEW);
	lib_set_ints(m->g, l, "strides", strides, vc->rank);
	lib_set_int(m->g, l, "offset", off);
	return nr;
}

/* value a (an alias of the written one) as the same view of the written
 * storage nr */
static void rebind_view(Imp *m, const char *name, int like, int nr)
{
	Container *c = lw_c(m, like);
	int64_t shape[MAXDIM];
	Expr *st[MAXDIM];
	for (int d = 0; d < c->rank; d++) {
		if (!ex_isint(c->shape[d], &shape[d]))
			shape[d] = 0;
		st[d] = c->stride[d];
	}
	lw_view(m, name, nr, c->rank, shape, st, c->offset);
}

static void rebind_mutated(Imp *m, const cJSON *node)
{
	const char *on = lw_out_name(node, 0);
	int out = on ? lw_lookup(m, on) : -1;
	if (out < 0)
		return;
	cJSON *ins = json_get(node, "inputs");
	for (int k = 0; k < json_len(ins); k++) {
		const char *nm = json_str(json_get(json_at(ins, k), "name"));
		for (int i = 0; nm && i < m->info->nargs; i++) {
			if (!m->info->args[i].mutated || strcmp(m->info->args[i].name, nm))
				continue;
			const char *vn = tensor_arg(node, k);
			ValueEnt *e = vn ? value_ent(m, vn) : NULL;
			if (!e || m->info->args[i].alias != m->info->ret_alias)
				continue; /* not returned (running stats): the lowering says (lw_mark_stale) */
			const char *root = e->root;
			int old = e->id, r = sdfg_root_of(m->g, old), nr = -1;
			/* other views of the same storage (its base, its other views):
			 * they see the write, through the written storage */
			for (int j = 0; j < m->nvals; j++) {
				ValueEnt *a = &m->vals[j];
				if (!strcmp(a->root, root) && strcmp(a->name, vn) && strcmp(a->name, on) && value_ent(m, a->name) == a &&
				    a->id != old && sdfg_root_of(m->g, a->id) == r) {
					nr = write_through(m, r, old, out);
					break;
				}
			}
			for (int j = m->nvals - 1; j >= 0; j--) {
				ValueEnt *a = &m->vals[j];
				if (strcmp(a->root, root) || !strcmp(a->name, vn) || !strcmp(a->name, on) || value_ent(m, a->name) != a)
					continue;
				if (nr >= 0 && sdfg_root_of(m->g, a->id) == r)
					rebind_view(m, a->name, a->id, nr);
				else if (a->id == old)
					lw_bind(m, a->name, out);
				else if (!a->stale)
					a->stale = arena_printf(m->a, "but node '%s' wrote to it in place through its alias '%s' "
					                        "(they share storage in torch); doccc does not carry in-place writes "
					                        "over to other views of a tensor whose layout is not static: export "
					                        "with run_decompositions() (Core ATen is functional)", m->nodename, vn);
			}
			if (nr >= 0) {
				rebind_view(m, vn, old, nr);
				if (strcmp(on, vn))
					rebind_view(m, on, old, nr);
			} else
				lw_bind(m, vn, out);
		}
	}
}

/* After a node failed: placeholder containers for its outputs, so later
 * nodes still resolve their arguments and report their own problems. */
static void bind_placeholders(Imp *m, const cJSON *node)
{
	cJSON *outs = json_get(node, "outputs");
	for (int k = 0; k < json_len(outs); k++) {
		const char *on = lw_out_name(node, k);
		Meta mt;
		if (!on || lw_lookup(m, on) >= 0 || lw_meta(m, on, &mt))
			continue;
		int64_t one = 1;
		int ok = mt.dt >= 0;
		int id = sdfg_add_container(m->g, on, ok ? (Dtype)mt.dt : DT_F32, CK_TRANSIENT, ok ? mt.rank : 1, ok ? mt.shape : &one);
		lw_bind(m, on, id);
	}
}

/* Count one node of `target` for the compile report. */
static void census_add(Sdfg *g, const char *target)
{
	const char *t = !strncmp(target, "torch.ops.", 10) ? target + 10 : target;
	for (int i = 0; i < g->ncensus; i++)
		if (!strcmp(g->census_ops[i], t)) {
			g->census_counts[i]++;
			return;
		}
	int cap = g->capcensus;
	VEC_PUSH(g->arena, g->census_ops, g->ncensus, g->capcensus, arena_strdup(g->arena, t));
	if (g->capcensus != cap)
		arena_grow(g->arena, (void **)&g->census_counts, &cap, g->capcensus, sizeof(int));
	g->census_counts[g->ncensus - 1] = 1;
}

static int import_node(Imp *m, cJSON *node, const char *target);

static int import_nodes(Imp *m)
{
	cJSON *nodes = json_get(m->graph, "nodes");
	int bad = 0;
	if (json_len(nodes) > DOCC_MAX_NODES) {
		diag_error(m->path, "graph.nodes: the graph is too large (%d nodes; doccc's limit is %d)", json_len(nodes), DOCC_MAX_NODES);
		return -1;
	}
	for (int i = 0; i < json_len(nodes); i++) {
		cJSON *node = json_at(nodes, i);
		const char *target = json_str(json_get(node, "target"));
		m->nodei = i;
		m->nodename = json_str(json_get(node, "name"));
		if (!m->nodename)
			m->nodename = lw_out_name(node, 0);
		m->nodename = arena_strdup(m->a, m->nodename ? m->nodename : "?");
		m->trace = first_trace_line(m, json_str(json_get(json_get(node, "metadata"), "stack_trace")));
		m->failed = 0;
		if (!target) {
			lw_error(m, "node has no target");
			bad = 1;
			continue;
		}
		if (m->need_static)
			break;
		Buf msgs = {0}, *sink = m->census ? diag_capture(&msgs) : NULL;
		int nodebad = import_node(m, node, target);
		if (m->census) {
			diag_capture(sink);
			CensusOp *c = census_op(m->census, target);
			c->count++;
			m->census->nnodes++;
			if (nodebad) {
				if (!c->nbad++)
					c->why = first_error(m->census->a, msgs.s);
			}
			buf_free(&msgs);
		}
		bad |= nodebad;
	}
	m->nodename = NULL;
	m->trace = NULL;
	return bad ? -1 : 0;
}

/* The node's outputs as the lowerings read them: each a tensor with a
 * name, or something other than a tensor (as_none, a symbolic value). */
static int check_outputs(Imp *m, const cJSON *node)
{
	cJSON *outs = json_get(node, "outputs");
	if (!cJSON_IsArray(outs)) {
		lw_error(m, "node has no outputs list");
		return -1;
	}
	for (int k = 0; k < json_len(outs); k++) {
		cJSON *x;
		const char *tag = json_union_tag(json_at(outs, k), &x);
		if (!tag || (!strcmp(tag, "as_tensor") && !json_str(json_get(x, "name")))) {
			lw_error(m, "outputs[%d] is malformed (a tensor output needs a name)", k);
			return -1;
		}
	}
	return 0;
}

/* ---- run-time dims: which lowerings take them ---------------------------------------
 * A lowering reads sizes as numbers (Meta.shape, lw_dim, V_INT arguments),
 * which with run-time dims are the export's example values; only the
 * lowerings listed here build their IR from the expressions instead
 * (Meta.x, lw_dimx, Val.x), those marked ints also for the size arguments
 * of the node. A node of any other lowering that touches a run-time dim
 * stops the dynamic import, and the program is imported again with every
 * dim specialized, with a note naming the node. */
static const struct {
	const char *lowering;
	int ints;               /* takes SymInt arguments of run-time dims */
} dyn_lowerings[] = {
	{"sym_query", 1}, {"assert_scalar", 1}, {"unary", 0}, {"binary", 1}, {"clamp", 0}, {"linear", 0}, {"gemm", 0},
	{"view", 1}, {"conv", 0}, {"batchnorm", 0}, {"pool", 0}, {"reduce", 0}, {"gather", 0}, {"arange", 1}, {"fill", 1},
	{"cat", 0}, {"stack", 0}, {"where", 0}, {"cast", 0}, {"softmax", 0}, {"norm", 1}, {"attention", 0}, {"noop", 1},
	{"dropout", 0}, {"split", 0}, {"tri", 0}, {"assert_async", 0}, {"remap", 0},
	{"square", 0}, {"lerp", 0}, {"nan_to_num", 0}, {"round_decimals", 0}, {"sort", 0}, {"vnorm", 0},
	{"upsample", 0}, {"argred", 0}, {"scan", 0}, {"one_hot", 0}, {"glu", 0},
};

const char *import_dyn_lowering(int i)
{
	return i >= 0 && i < (int)(sizeof dyn_lowerings / sizeof dyn_lowerings[0]) ? dyn_lowerings[i].lowering : NULL;
}

static int dyn_ready(const char *lowering, int *ints)
{
	for (size_t i = 0; i < sizeof dyn_lowerings / sizeof dyn_lowerings[0]; i++)
		if (!strcmp(dyn_lowerings[i].lowering, lowering)) {
			*ints = dyn_lowerings[i].ints;
			return 1;
		}
	return 0;
}

/* 0 if the node may be lowered with run-time dims; -1 (m->need_static
 * set, nothing reported) if not. */
static int dyn_gate(Imp *m, const cJSON *node)
{
	if (!m->ndyn || m->need_static)
		return m->need_static ? -1 : 0;
	int touch = m->argdyn, ints = 0;
	for (int i = 0; i < m->info->nargs && !touch; i++) {
		Val *v = &m->args[i];
		if (v->k == V_TENSOR && v->t >= 0)
			touch = lw_dynamic(m, v->t);
		for (int k = 0; v->k == V_TENSORS && k < v->n && !touch; k++)
			touch = v->ts[k] >= 0 && lw_dynamic(m, v->ts[k]);
	}
	for (int k = 0; k < json_len(json_get(node, "outputs")) && !touch; k++) {
		const char *on = lw_out_name(node, k);
		Meta mt;
		touch = on && json_get(m->tvals, on) && read_meta(m, json_get(m->tvals, on), &mt, on) == 0 && mt.dyn;
	}
	if (!touch || (dyn_ready(m->info->lowering, &ints) && (ints || !m->argdyn)))
		return 0;
	m->need_static = arena_printf(m->a, "node '%s' (aten.%s) takes its sizes as numbers", m->nodename, m->info->target);
	return -1;
}

/* One node: 0 if it lowered, -1 if not (reported). */
static int import_node(Imp *m, cJSON *node, const char *target)
{
	/* Every unsupported dtype among the outputs (their sizes are read by
	 * the lowering: a data-dependent one may be bound there). */
	for (int k = 0; k < json_len(json_get(node, "outputs")); k++) {
		const char *on = lw_out_name(node, k);
		int64_t st;
		if (!on || json_int(json_get(json_get(m->tvals, on), "dtype"), &st))
			continue;
		census_dtype(m->census, (int)st);
		if (dtype_from_torch((int)st) < 0 && !strstr(on, "_unused_"))
			lw_error(m, "dtype %s of value '%s' is not supported", dtype_torch_name((int)st), on);
	}
	census_add(m->g, target);
	if (strncmp(target, "torch.ops.", 10) && lw_python_op(m, node, target))
		return m->failed ? -1 : 0;
	const char *ov = !strncmp(target, "torch.ops.aten.", 15) ? target + 15 : NULL;
	m->info = ov ? aten_find(ov) : NULL;
	if (!m->info) {
		const char *why = ov ? aten_unsupported(ov) : NULL;
		lw_error(m, "unsupported operator '%s': %s", ov ? arena_printf(m->a, "aten.%s", ov) : target,
		         why ? why : "doccc has no lowering for it yet (doccc --list-ops lists the supported overloads)");
	}
	int from = m->g->ncs;
	m->argdyn = 0;
	if (m->info && !m->failed && check_outputs(m, node) == 0 && bind_args(m, node) == 0 && dyn_gate(m, node) == 0 &&
	    m->info->lower(m, node) == 0 && !m->failed && check_new_containers(m, from) == 0) {
		track_aliases(m, node);
		rebind_mutated(m, node);
		return 0;
	}
	if (m->need_static)
		return -1;
	if (!m->failed) /* a lowering that gave up on input it did not expect */
		lw_error(m, "malformed node: doccc cannot lower it as recorded");
	/* keep going: report every problem of the graph */
	bind_placeholders(m, node);
	return -1;
}

/* ---- input files ------------------------------------------------------------------ */

static void close_zip(void *z)
{
	pt2_close(z);
}

static void close_st(void *st)
{
	st_close(st);
}

/* Is path a zip archive (its first four bytes)? -1 reported, and so are
 * an empty file and a .pt2 that is neither a zip nor JSON, which the JSON
 * reader would call malformed JSON. */
static int is_zip(const char *path)
{
	char head[4];
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n = fd < 0 ? -1 : read(fd, head, sizeof head);
	int err = n < 0 ? errno : 0;
	if (fd >= 0)
		close(fd);
	if (err) {
		diag_error(path, "cannot read: %s", strerror(err));
		return -1;
	}
	if (n == 0) {
		diag_error(path, "the file is empty: expected a .pt2 archive (torch.export.save) or an ExportedProgram's JSON");
		return -1;
	}
	if (n == 4 && !memcmp(head, "PK\003\004", 4))
		return 1;
	size_t l = strlen(path);
	if (l >= 4 && !strcmp(path + l - 4, ".pt2") && (!head[0] || !strchr("{ \t\r\n", head[0]))) { /* JSON may start with blanks */
		diag_error(path, "not a zip archive, as a .pt2 from torch.export.save is, and not JSON");
		return -1;
	}
	return 0;
}

/* The archive and the safetensors file stay open as long as the graph's
 * arena: the weights are read from them when the compile needs them. */
static int open_input(Imp *m, const ImportArgs *args, char **text, size_t *len)
{
	int zip = is_zip(args->path);
	if (zip < 0)
		return -1;
	if (zip) {
		m->zip = pt2_open(args->path);
		if (!m->zip)
			return -1;
		arena_defer(m->a, close_zip, m->zip);
		if (!pt2_has(m->zip, "models/model.json")) {
			/* torch.export.save always names the model "model" */
			diag_error(args->path, "archive has no models/model.json: not a torch.export .pt2 (torch 2.9 or later)");
			return -1;
		}
		*text = pt2_read(m->zip, "models/model.json", len);
		if (!*text)
			return -1;
		m->path = arena_printf(m->a, "%s", args->path);
		size_t l2;
		char *w = pt2_has(m->zip, "data/weights/model_weights_config.json") ? pt2_read(m->zip, "data/weights/model_weights_config.json", &l2) : NULL;
		if (w) {
			m->wcfg = json_parse(w, l2, arena_printf(m->a, "%s:data/weights/model_weights_config.json", args->path));
			free(w);
			if (!m->wcfg)
				return -1;
		} else if (pt2_has(m->zip, "data/weights/model.pt")) {
			diag_error(args->path, "weights are pickled (an archive from torch 2.8 or older); re-export with torch 2.9 or later");
			return -1;
		}
		char *c = pt2_has(m->zip, "data/constants/model_constants_config.json") ? pt2_read(m->zip, "data/constants/model_constants_config.json", &l2) : NULL;
		if (c) {
			m->ccfg = json_parse(c, l2, arena_printf(m->a, "%s:data/constants/model_constants_config.json", args->path));
			free(c);
			if (!m->ccfg)
				return -1;
		}
		return 0;
	}
	if (!(*text = file_read(args->path, len)))
		return -1;
	m->path = args->path;
	if (args->weights) {
		Safetensors *st = arena_alloc(m->a, sizeof *st);
		if (st_open(st, args->weights))
			return -1;
		arena_defer(m->a, close_st, st);
		m->st = st;
		m->stpath = args->weights;
		return 0;
	}
	/* An extracted archive: <root>/models/model.json with <root>/data beside. */
	const char *base = path_base(args->path);
	size_t dl = (size_t)(base - args->path);
	if (dl >= 7 && !strncmp(args->path + dl - 7, "models/", 7)) {
		char *root = arena_strndup(m->a, args->path, dl - 7);
		char *cfg = arena_printf(m->a, "%sdata/weights/model_weights_config.json", root);
		if (file_exists(cfg)) {
			size_t l2;
			char *w = file_read(cfg, &l2);
			m->wcfg = w ? json_parse(w, l2, cfg) : NULL;
			free(w);
			if (!m->wcfg)
				return -1;
			char *ccfgp = arena_printf(m->a, "%sdata/constants/model_constants_config.json", root);
			if (file_exists(ccfgp)) {
				char *c = file_read(ccfgp, &l2);
				m->ccfg = c ? json_parse(c, l2, ccfgp) : NULL;
				free(c);
				if (!m->ccfg)
					return -1;
			}
			m->dir = root;
		}
	}
	return 0;
}

static Sdfg *import_once(Arena *a, const char *name, const ImportArgs *args, const char **need_static);
static Sdfg *import_dyn(Arena *a, const char *name, const ImportArgs *args);

/* With run-time dims a node whose lowering reads sizes as numbers stops the
 * import (dyn_gate); its messages so far are dropped, and the program is
 * imported again with every dim at the export's example size. A program
 * whose import reported an error is not imported, whatever the step that
 * reported it returned (the long make fuzz found a split whose missing
 * tensor_values entry was reported and then skipped as an unused output,
 * and doccc wrote a library after the error). */
Sdfg *import_program(Arena *a, const char *name, const ImportArgs *args)
{
	int nerr = diag_errors();
	Sdfg *g = import_dyn(a, name, args);
	return diag_errors() > nerr ? NULL : g;
}

static Sdfg *import_dyn(Arena *a, const char *name, const ImportArgs *args)
{
	if (args->fixed)
		return import_once(a, name, args, NULL);
	Buf msgs = {0};
	int nerr = diag_errors();
	Buf *sink = diag_capture(&msgs);
	const char *why = NULL;
	Sdfg *g = import_once(a, name, args, &why);
	diag_capture(sink);
	if (!why) {
		if (msgs.len) {
			if (sink)
				buf_puts(sink, msgs.s);
			else
				fputs(msgs.s, stderr), fflush(stderr);
		}
		buf_free(&msgs);
		return g;
	}
	buf_free(&msgs);
	diag_rewind(nerr);
	if (args->census) { /* counted again by the second import */
		Census *c = args->census;
		c->nops = c->nnodes = c->ndtypes = c->nsyms = 0;
	}
	ImportArgs fixed = *args;
	fixed.fixed = 1;
	fixed.nmaxdims = 0;
	diag_note(args->path, "the library is specialized to the export's example sizes: %s; doccc compiles it "
	                      "for run-time dims once that op takes them (--dynamic=no says this without the note)", why);
	return import_once(a, name, &fixed, NULL);
}

static Sdfg *import_once(Arena *a, const char *name, const ImportArgs *args, const char **need_static)
{
	Imp mm, *m = &mm;
	memset(m, 0, sizeof *m);
	m->a = a;
	m->path = args->path;
	char *text = NULL;
	size_t len = 0;
	Sdfg *g = NULL;
	if (open_input(m, args, &text, &len))
		goto out;
	m->ep = json_parse(text, len, m->zip ? arena_printf(a, "%s:models/model.json", args->path) : args->path);
	if (!m->ep)
		goto out;
	if (!cJSON_IsObject(m->ep) || !json_get(m->ep, "graph_module")) {
		diag_error(m->path, "not a serialized ExportedProgram (no 'graph_module')");
		goto out;
	}
	int64_t major = -1, minor = -1;
	cJSON *sv = json_get(m->ep, "schema_version");
	json_int(json_get(sv, "major"), &major);
	json_int(json_get(sv, "minor"), &minor);
	if (major != 8) {
		diag_error(m->path, "schema_version %lld.%lld: doccc reads schema major version 8 (torch 2.6 and later); "
		                    "re-export the model with torch 2.9 or later", (long long)major, (long long)minor);
		goto out;
	}
	m->graph = json_get(json_get(m->ep, "graph_module"), "graph");
	m->tvals = json_get(m->graph, "tensor_values");
	if (!cJSON_IsObject(m->graph) || !cJSON_IsArray(json_get(m->graph, "nodes"))) {
		diag_error(m->path, "graph_module.graph is malformed (no nodes)");
		goto out;
	}
	m->g = sdfg_new(a, name);
	m->g->src = m->path;
	{
		Sha256 h;
		unsigned char d[32];
		sha256_init(&h);
		sha256_update(&h, text, len);
		sha256_final(&h, d);
		sha256_hex(d, m->g->hash);
	}
	m->census = args->census;
	int bad = check_signature(m);
	if (bad || bind_shapes(m, args))
		goto out;
	if (m->census)
		census_syms(m);
	bad |= import_inputs(m);
	if (bad)
		goto out;
	bad |= import_nodes(m);
	if (!bad)
		bad |= import_outputs(m);
	if (!bad)
		g = m->g;
	if (m->need_static && need_static)
		*need_static = m->need_static, g = NULL;
out:
	free(text);
	if (m->ep)
		json_free(m->ep);
	if (m->wcfg)
		json_free(m->wcfg);
	if (m->ccfg)
		json_free(m->ccfg);
	return g;
}
