/*
 * census.c - what the importer counts: the ATen ops of the compile report
 * (Sdfg.census_ops) and, for doccc check, the Census of ir.h: each op's
 * nodes, how many did not lower and the first one's reason, and the
 * export's shape symbols with their ranges, the sizes bound to them and
 * the input dims that use them. Under doccc check a node's messages are
 * captured instead of printed (ir/import.c); the message of the first
 * "error: " line is the reason kept. The dtypes a check reports are
 * recorded as metadata is read (lw_census_dtype, ir/lower/api.c).
 */
#include <string.h>

#include "../lower/lower.h"
#include "import.h"

/* ---- doccc check ----------------------------------------------------------------- */

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

/* One node of target counted for doccc check: bad if it did not lower,
 * msgs the messages it would have printed (captured). */
void census_node(Census *c, const char *target, int bad, const char *msgs)
{
	CensusOp *o = census_op(c, target);
	o->count++;
	c->nnodes++;
	if (bad) {
		if (!o->nbad++)
			o->why = first_error(c->a, msgs);
	}
}

/* The symbols of the export, after shapes_bind: ranges, bound sizes, and
 * the input dims that use each. */
void census_syms(Imp *m)
{
	Census *c = m->census;
	cJSON *specs = json_get(json_get(json_get(m->ep, "graph_module"), "signature"), "input_specs");
	for (int k = 0; k < m->sg->nsyms; k++) {
		Symbol *y = &m->sg->syms[k];
		Buf uses = {0};
		for (int i = 0; i < json_len(specs); i++) {
			const char *nm;
			cJSON *sizes = shapes_input_sizes(m, json_at(specs, i), &nm);
			for (int d = 0; d < json_len(sizes); d++) {
				cJSON *x;
				const char *tag = json_union_tag(json_at(sizes, d), &x);
				const char *es = tag && !strcmp(tag, "as_expr") ? json_str(json_get(x, "expr_str")) : NULL;
				Expr *e = es ? lw_parse_sym(m, es, nm) : NULL;
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

/* ---- the compile report's census ------------------------------------------------- */

/* Count one node of `target` for the compile report. */
void census_add(Sdfg *g, const char *target)
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
