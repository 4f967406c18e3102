/*
 * args.c - a node's arguments bound against its op's schema (ops.h).
 *
 * A serialized node lists its inputs in schema order, each named, and
 * leaves out those at their defaults. lw_bind_args puts each input at its
 * schema position (by name; an unnamed one after the previous), converts
 * it into a Val (a tensor is its container through the value map; a
 * symbolic scalar is the SymVal the graph computed, dims.c), and fills in
 * the schema's defaults for the rest, so that a lowering reads m->args by
 * name (lw_arg, lw_tensor, lw_num, lw_int) and never sees the JSON. A
 * number that item() reads at run time is taken only where doccc can use
 * one: an operand of elementwise arithmetic, a fill value, or a guard.
 */
#include <stdlib.h>
#include <string.h>

#include "lower.h"

/* ---- reading an argument --------------------------------------------------------- */

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
		if (lw_value_stale(m, nm)) {
			lw_error(m, "argument '%s' reads '%s', %s", argname, nm, lw_value_stale(m, nm));
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
			if (lw_value_stale(m, nm)) {
				lw_error(m, "argument '%s' reads '%s', %s", argname, nm, lw_value_stale(m, nm));
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

/* ---- binding a node's arguments -------------------------------------------------- */

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
int lw_bind_args(Imp *m, const cJSON *node)
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

/* ---- what lowerings read --------------------------------------------------------- */

/* Lowerings read arguments by their functional row's names (AtenInfo.names):
 * swapaxes's axis0 is read as transpose's dim0. */
Val *lw_arg(Imp *m, const char *name)
{
	for (int i = 0; i < m->info->nargs; i++)
		if (!strcmp(m->info->names[i].name, name))
			return &m->args[i];
	diag_internal(__FILE__, __LINE__, "op %s has no argument '%s'", m->info->target, name);
}

/* Whether the current overload's schema has an argument `name`. */
int lw_has_arg(Imp *m, const char *name)
{
	for (int i = 0; i < m->info->nargs; i++)
		if (!strcmp(m->info->names[i].name, name))
			return 1;
	return 0;
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
