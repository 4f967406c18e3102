/*
 * shapes.c - the export's shape symbols bound before any node is read:
 * --shape INPUT=D0,D1,..., --dim SYMBOL=SIZE and --max-dim SYMBOL=N.
 *
 * An export with dynamic dims (dynamic_shapes=) names each by a symbol
 * (s0, s77) with a range (range_constraints) and records the example
 * input's size as its hint. shapes_bind reads the ranges, applies --shape
 * (a dim of the form c*s + k is solved for its symbol s) and --dim, then
 * visits every input dim that is an expression: a symbol no option bound
 * becomes a run-time dim of the library (a SYM_SHAPE symbol of g, listed
 * in g->dims, whose example value is kept for messages), or, with
 * --dynamic=no (ImportArgs.fixed), takes the example's size with a note
 * saying so. Every bound value is checked against its symbol's range, and
 * --max-dim lowers a run-time dim's upper bound (the workspace is sized
 * for it at create). A symbol is bound once: a second, different value is
 * an error naming both options. Expressions are read by ir/lower/dims.c.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "../lower/lower.h"
#include "import.h"

/* Symbol named `name` in the scratch graph, or -1. */
static int sym_find(Imp *m, const char *name)
{
	for (int i = 0; i < m->sg->nsyms; i++)
		if (!strcmp(m->sg->syms[i].name, name))
			return i;
	return -1;
}

/* The sizes array of user input i (its tensor_values entry), and its name. */
cJSON *shapes_input_sizes(Imp *m, cJSON *spec, const char **name)
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
		cJSON *sz = shapes_input_sizes(m, json_at(specs, i), &nm);
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
				Expr *e = es ? lw_parse_sym(m, es, arg) : NULL;
				if (!e)
					return -1;
				int sym;
				int64_t sv;
				int r = solve_dim(m, e, v, &sym, &sv);
				if (r == -1) {
					diag_error(NULL, "--shape %s: dim %d of '%s' is %s; give its symbols' values with --dim", arg, d, in,
					           lw_sym_text(m, e));
					return -1;
				}
				if (r == -2) {
					diag_error(NULL, "--shape %s: dim %d of '%s' is %s, which cannot be %lld", arg, d, in, lw_sym_text(m, e), v);
					return -1;
				}
				if (lw_sym_bind(m, sym, sv, arena_printf(m->a, "--shape %s", arg)))
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

/* Bind every symbol that sizes a graph input: to an option's value, else
 * as a run-time dim (or, with args->fixed, to the example's size). */
int shapes_bind(Imp *m, const ImportArgs *args)
{
	m->sg = sdfg_new(m->a, "symbols");
	cJSON *rc = json_get(m->ep, "range_constraints");
	cJSON *specs = json_get(json_get(json_get(m->ep, "graph_module"), "signature"), "input_specs");
	/* ranges */
	for (cJSON *r = rc ? rc->child : NULL; r; r = r->next) {
		Expr *e = lw_parse_sym(m, r->string, "range_constraints");
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
		if (lw_sym_bind(m, sym, v, arena_printf(m->a, "--dim %s", a)))
			return -1;
	}
	/* every input dim that is a symbol: the hint unless bound; ranges */
	Buf spec = {0};
	int bad = 0;
	for (int i = 0; i < json_len(specs); i++) {
		const char *nm;
		cJSON *sizes = shapes_input_sizes(m, json_at(specs, i), &nm);
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
			Expr *e = lw_parse_sym(m, es, nm);
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
						           lw_sym_text(m, e), y->name, y->name);
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
					          nm, d, e->k == E_SYM ? "" : lw_sym_text(m, e), e->k == E_SYM ? "" : ", ", y->name,
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
