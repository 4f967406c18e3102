/*
 * dims.c - the export's shape symbols, its guards, its symbolic values, and
 * sizes as lowerings read them.
 *
 * An export with dynamic dims (dynamic_shapes=) names each by a symbol
 * (s0, s77) with a range (range_constraints); sizes, SymInt values and the
 * export's guards are sympy expressions over those symbols. They are
 * parsed into a scratch graph (Imp.sg), so that the real one holds only the
 * symbols it needs: symval[s] is the value symbol s is bound to (by
 * --shape, --dim or the example's hint: ir/import/shapes.c), and gsym[s]
 * the symbol of g that s is when it stays a run-time dim of the library.
 * to_g rewrites an expression over g: run-time dims stay symbols, every
 * other symbol becomes its value.
 *
 * Lowerings read a size as a number (lw_dim: with a run-time dim it has
 * none, and the import is retried with every dim specialized,
 * lw_need_static) or as an expression (lw_dimx, lw_mdim, Meta.x, Val.x).
 * Only the lowerings that ir/import.c lists as taking run-time dims
 * (dyn_lowerings) ever see one; a node of any other lowering that touches
 * one stops the dynamic import before its lowering runs.
 */
#include <string.h>

#include "lower.h"

/* ---- symbols and expressions of the export --------------------------------------- */

/* symval, symset and gsym sized for every symbol of the scratch graph
 * (parsing may add symbols). */
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

/* Expression s of the export over the scratch graph; NULL after a message
 * naming `what` (at the node when there is one). */
Expr *lw_parse_sym(Imp *m, const char *s, const char *what)
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
const char *lw_sym_text(Imp *m, const Expr *e)
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
	Expr *e = lw_parse_sym(m, expr, what);
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
		lw_error(m, "%s is %s, and %s %s", what, lw_sym_text(m, e), sym, why);
	else
		diag_error(m->path, "%s is %s, and %s %s", what, lw_sym_text(m, e), sym, why);
	return -1;
}

/* Bind symbol `sym` to v for `how` ("--shape x=4,8"); conflicting values are an error. */
int lw_sym_bind(Imp *m, int sym, int64_t v, const char *how)
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
	Expr *e = es ? lw_parse_sym(m, es, "a data-dependent size") : NULL;
	if (!e || e->k != E_SYM || lw_sym_bind(m, (int)e->v, v, arena_printf(m->a, "node '%s'", m->nodename))) {
		lw_error(m, "the size of '%s' in dim %d is %s, not the %lld the constant data gives", name, dim, es ? es : "?",
		         (long long)v);
		return -1;
	}
	return 0;
}

/* A SymInt of the export's metadata (as_int, or as_expr evaluated under
 * the bound symbols): 0; -1 if malformed (not reported); -2 after a
 * message naming `what`. */
int lw_read_symint(Imp *m, const cJSON *j, int64_t *v, const char *what)
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

/* A size recorded as an expression of run-time dims: it over g; else NULL
 * (lw_read_meta reads every size with lw_read_symint first). */
Expr *lw_dyn_expr(Imp *m, const cJSON *j)
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

/* ---- symbolic values (SymInt, SymFloat, SymBool) --------------------------------- */

/* The symbolic value the graph computed under name (the newest), or NULL. */
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

/* ---- sizes as lowerings read them ------------------------------------------------ */

/* A size as a number: a run-time dim has none, so a lowering that asks for
 * one (a listed lowering on a path that was not made for run-time dims)
 * has the import retried specialized instead of building for a wrong size. */
int64_t lw_dim(Imp *m, int id, int d)
{
	int64_t v = 0;
	if (!ex_isint(lw_c(m, id)->shape[d], &v))
		lw_need_static(m, "it reads a run-time size as a number");
	return v;
}

Expr *lw_dimx(Imp *m, int id, int d)
{
	return lw_c(m, id)->shape[d];
}

Expr *lw_mdim(Imp *m, const Meta *mt, int d)
{
	return mt->dyn ? mt->x[d] : ex_int(m->g, mt->shape[d]);
}

/* Is size e 1 (1), surely not 1 (0: a run-time dim the export keeps >= 2),
 * or either (-1)? */
int lw_is_one(Imp *m, const Expr *e)
{
	int64_t v, lo, hi;
	if (ex_isint(e, &v))
		return v == 1;
	ex_range(m->g, e, &lo, &hi);
	return lo > 1 || hi < 1 ? 0 : -1;
}

int lw_need_static(Imp *m, const char *why)
{
	if (!m->need_static)
		m->need_static = arena_printf(m->a, "node '%s' (aten.%s): %s", m->nodename, m->info ? m->info->target : "?", why);
	return -1;
}

int lw_symint_value(Imp *m, Expr *x)
{
	int id = sdfg_add_container(m->g, arena_printf(m->a, "%s_symint", m->nodename), DT_I64, CK_TRANSIENT, 0, NULL);
	lw_c(m, id)->origin = "";
	Node *b = sdfg_block(m->g, m->nodename);
	Operand o = {.kind = OPD_EXPR, .e = x};
	Memlet ml = {.data = id};
	sdfg_store(b, sdfg_tasklet(m->g, b, T_ASSIGN, DT_I64, 1, &o), ml, W_NONE);
	sdfg_append(m->g, m->g->root, b);
	return id;
}
