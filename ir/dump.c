/*
 * dump.c - the SDFG as JSON (for --dump-sdfg, golden files and tests) and as
 * Graphviz DOT (for looking at it).
 *
 * Both dumps are deterministic: they depend only on the graph (ids, names,
 * canonical expressions), never on addresses or timestamps, so two runs
 * give byte-identical files and golden diffs show real changes only.
 * Tasklet operands are {"memlet": {data, subset}} (plus "pad" when
 * guarded: out-of-range indices read that value), {"value": k},
 * {"const": c} or {"expr": "..."} (an integer expression's value); a
 * tasklet that binds a value symbol has "bind": its name (DOT labels it
 * "index -> ix").
 * Expressions appear as the C text of ex_print; doubles as %.17g (exact
 * round trip), with non-finite values as the strings "Infinity",
 * "-Infinity" and "NaN" (what json_float reads back). The JSON layout is
 * one line per container, symbol, tasklet and tree node header, indented
 * by depth, so diffs stay small.
 *
 * DOT: control-flow nodes are clusters ("map i in [0, 64) parallel"), each
 * block a cluster of its own with one access node (ellipse) per container
 * it touches, tasklets (octagons) or its library node (box), and memlet
 * edges labelled with their subsets.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ir.h"

/* A name from one of dtype.c's tables, or "?" for a value outside it. */
#define NAME_OF(tab, v, n) ((unsigned)(v) < (unsigned)(n) ? (tab)[v] : "?")

static const char *dt_name(Dtype d)
{
	return (unsigned)d < NDTYPES ? dtype_info[d].name : "?";
}

/* ---- JSON ----------------------------------------------------------------------------- */
static void indent(Buf *b, int n)
{
	buf_putc(b, '\n');
	for (int i = 0; i < n; i++) buf_puts(b, "  ");
}

static void jexpr(Buf *b, const Sdfg *g, const Expr *e)
{
	Buf t = {0};
	ex_print_infix(&t, g, e);
	buf_quote(b, t.s ? t.s : "");
	buf_free(&t);
}

static void jexprs(Buf *b, const Sdfg *g, Expr *const *e, int n)
{
	buf_putc(b, '[');
	for (int i = 0; i < n; i++) {
		if (i) buf_puts(b, ", ");
		jexpr(b, g, e[i]);
	}
	buf_putc(b, ']');
}

static void jdouble(Buf *b, double x)
{
	if (isnan(x)) buf_puts(b, "\"NaN\"");
	else if (isinf(x)) buf_puts(b, x > 0 ? "\"Infinity\"" : "\"-Infinity\"");
	else buf_printf(b, "%.17g", x);
}

/* A float attribute: a real literal (a fraction or an exponent, which an
 * integer attribute never has), or {"float": "NaN"} and the infinities,
 * which JSON has no literal for. */
static void jreal(Buf *b, double x)
{
	if (!isfinite(x)) {
		buf_puts(b, "{\"float\": ");
		jdouble(b, x);
		buf_putc(b, '}');
		return;
	}
	size_t at = b->len;
	buf_printf(b, "%.17g", x);
	if (!strpbrk(b->s + at, ".e")) buf_puts(b, ".0");
}

static void jints(Buf *b, const int *v, int n)
{
	buf_putc(b, '[');
	for (int i = 0; i < n; i++) buf_printf(b, i ? ", %d" : "%d", v[i]);
	buf_putc(b, ']');
}

static void jcname(Buf *b, const Sdfg *g, int c)
{
	if (c < 0 || c >= g->ncs) buf_puts(b, "null");
	else buf_quote(b, g->cs[c].name);
}

static void jsym(Buf *b, const Sdfg *g, int s)
{
	buf_quote(b, s >= 0 && s < g->nsyms ? g->syms[s].name : "?");
}

static void jstr_or_null(Buf *b, const char *s)
{
	if (s) buf_quote(b, s);
	else buf_puts(b, "null");
}

static void jmemlet(Buf *b, const Sdfg *g, const Memlet *m)
{
	int rank = m->data >= 0 && m->data < g->ncs ? g->cs[m->data].rank : 0;
	buf_puts(b, "\"data\": ");
	jcname(b, g, m->data);
	buf_puts(b, ", \"subset\": ");
	jexprs(b, g, m->idx, rank);
}

static void jattrs(Buf *b, const LibNode *l)
{
	buf_putc(b, '{');
	for (int i = 0; i < l->nattrs; i++) {
		const Attr *a = &l->attrs[i];
		if (i) buf_puts(b, ", ");
		buf_quote(b, a->name);
		buf_puts(b, ": ");
		switch (a->kind) {
		case A_INT:
			buf_printf(b, "%lld", (long long)(a->nints ? a->ints[0] : 0));
			break;
		case A_BOOL:
			buf_puts(b, a->nints && a->ints[0] ? "true" : "false");
			break;
		case A_INTS:
			buf_putc(b, '[');
			for (int j = 0; j < a->nints; j++) buf_printf(b, j ? ", %lld" : "%lld", (long long)a->ints[j]);
			buf_putc(b, ']');
			break;
		case A_FLOAT:
			jreal(b, a->f);
			break;
		case A_STR:
			buf_quote(b, a->s ? a->s : "");
			break;
		}
	}
	buf_putc(b, '}');
}

static void jtasklet(Buf *b, const Sdfg *g, const Tasklet *t)
{
	buf_puts(b, "{\"code\": ");
	buf_quote(b, (unsigned)t->code < NTCODES ? tcode_name[t->code] : "?");
	buf_puts(b, ", \"dtype\": ");
	buf_quote(b, dt_name(t->dt));
	buf_puts(b, ", \"inputs\": [");
	for (int i = 0; i < t->nin && i < 3; i++) {
		const Operand *o = &t->in[i];
		if (i) buf_puts(b, ", ");
		if (o->kind == OPD_MEM) {
			buf_puts(b, "{\"memlet\": {");
			jmemlet(b, g, &o->m);
			buf_putc(b, '}');
			if (o->guard) {
				buf_puts(b, ", \"pad\": ");
				jdouble(b, o->pad);
			}
			buf_putc(b, '}');
		} else if (o->kind == OPD_EXPR) {
			buf_puts(b, "{\"expr\": ");
			jexpr(b, g, o->e);
			buf_putc(b, '}');
		} else if (o->kind == OPD_VAL) {
			buf_printf(b, "{\"value\": %d}", o->val);
		} else {
			buf_puts(b, "{\"const\": ");
			jdouble(b, o->c);
			buf_putc(b, '}');
		}
	}
	buf_puts(b, "], \"output\": ");
	if (t->store) {
		buf_putc(b, '{');
		jmemlet(b, g, &t->out);
		buf_puts(b, ", \"wcr\": ");
		buf_quote(b, NAME_OF(wcr_name, t->wcr, W_PROD + 1));
		buf_putc(b, '}');
	} else {
		buf_puts(b, "null");
	}
	buf_puts(b, ", \"params\": [");
	jdouble(b, t->p[0]);
	buf_puts(b, ", ");
	jdouble(b, t->p[1]);
	buf_putc(b, ']');
	if (t->bind >= 0) {
		buf_puts(b, ", \"bind\": ");
		jsym(b, g, t->bind);
	}
	buf_putc(b, '}');
}

/* The GPU plan of a node (gpu_plan pass), on one line. */
static void jplan(Buf *b, const Sdfg *g, const GpuPlan *p)
{
	buf_puts(b, ", \"gpu\": {\"form\": ");
	buf_quote(b, NAME_OF(gpu_kind_name, p->kind, NGPUKINDS));
	buf_printf(b, ", \"kernel\": %d, \"block\": %d, \"grid\": %lld, \"grid_cap\": %lld, \"shared\": %lld, \"per_run\": %lld",
	           p->kernel, p->block, (long long)p->grid, (long long)p->grid_cap, (long long)p->shared, (long long)p->per_run);
	if (p->kind == GK_SINGLE) {
		buf_putc(b, '}');
		return;
	}
	buf_printf(b, ", \"depth\": %d", p->depth);
	if (p->iters) {
		buf_puts(b, ", \"iterations\": ");
		jexpr(b, g, p->iters);
	}
	switch (p->kind) {
	case GK_TILED:
		buf_puts(b, ", \"mma\": ");
		buf_quote(b, (unsigned)p->mma < NMMAS ? mma_info[p->mma].name : "?");
		buf_printf(b, ", \"tile\": %d, \"threads\": %d, \"r\": %d, \"row_kids\": %d, \"reduction\": %d, \"chain\": %d, "
		              "\"groups\": [", p->tile, p->threads, p->r, p->nkids, p->red, p->nchain);
		for (int i = 0; i < p->depth && i < MAXDIM; i++)
			buf_printf(b, i ? ", %d" : "%d", p->grp[i]);
		buf_printf(b, "], \"nx\": %lld, \"ny\": %lld, \"nb\": %lld, \"nk\": %lld", (long long)p->nx, (long long)p->ny,
		           (long long)p->nb, (long long)p->nk);
		break;
	case GK_COOP:
		buf_puts(b, ", \"roles\": [");
		for (int i = 0; i < p->nkids; i++) {
			const CoopKid *k = &p->kids[i];
			buf_puts(b, i ? ", {\"role\": " : "{\"role\": ");
			buf_quote(b, NAME_OF(coop_role_name, k->role, ROLE_REDUCE + 1));
			if (k->nred) {
				buf_puts(b, ", \"sums\": [");
				for (int r = 0; r < k->nred; r++) {
					buf_puts(b, r ? ", [" : "[");
					jcname(b, g, k->red[r]);
					buf_puts(b, ", ");
					buf_quote(b, NAME_OF(wcr_name, k->op[r], W_PROD + 1));
					buf_putc(b, ']');
				}
				buf_putc(b, ']');
			}
			buf_putc(b, '}');
		}
		buf_putc(b, ']');
		break;
	case GK_REDUCE:
		buf_puts(b, ", \"acc\": ");
		jcname(b, g, p->acc);
		buf_puts(b, ", \"op\": ");
		buf_quote(b, NAME_OF(wcr_name, p->op, W_PROD + 1));
		break;
	default:
		break;
	}
	buf_putc(b, '}');
}

static void jnode(Buf *b, const Sdfg *g, const Node *n, int depth)
{
	if (!n) {
		buf_puts(b, "null");
		return;
	}
	buf_puts(b, "{\"type\": ");
	buf_quote(b, NAME_OF(node_kind_name, n->kind, N_FOR + 1));
	buf_printf(b, ", \"id\": %d, \"label\": ", n->id);
	buf_quote(b, n->label ? n->label : "");
	if (n->tune) { /* the tuning database's schedule (ir/passes/tuning.c) */
		buf_puts(b, ", \"tune\": ");
		buf_quote(b, arena_printf(g->arena, "%s%s", tune_text(g->arena, n->tune),
		                          n->tune->from == TUNE_TRANSFER ? " transfer" : ""));
	}
	if (n->flops > 0) /* a contraction's work, for profiles (ir/passes/expand.c) */
		buf_printf(b, ", \"flops\": %.17g", n->flops);
	switch (n->kind) {
	case N_SEQ:
		buf_puts(b, ", \"children\": [");
		for (int i = 0; i < n->nkids; i++) {
			if (i) buf_putc(b, ',');
			indent(b, depth + 1);
			jnode(b, g, n->kids[i], depth + 1);
		}
		if (n->nkids) indent(b, depth);
		buf_puts(b, "]}");
		return;
	case N_MAP:
	case N_FOR:
		buf_puts(b, ", \"var\": ");
		jsym(b, g, n->var);
		buf_puts(b, ", \"lo\": ");
		jexpr(b, g, n->lo);
		buf_puts(b, ", \"hi\": ");
		jexpr(b, g, n->hi);
		buf_printf(b, ", \"step\": %lld, \"schedule\": ", (long long)n->step);
		buf_quote(b, (unsigned)n->sched < NSCHEDS ? sched_name[n->sched] : "?");
		buf_printf(b, ", \"collapse\": %d", n->collapse);
		if (n->par_work) {
			buf_puts(b, ", \"par_work\": ");
			jexpr(b, g, n->par_work);
		}
		if (n->par_min) buf_printf(b, ", \"par_min\": %lld", (long long)n->par_min);
		if (n->gpu)
			jplan(b, g, n->gpu);
		buf_puts(b, ", \"body\":");
		indent(b, depth + 1);
		jnode(b, g, n->body, depth + 1);
		buf_putc(b, '}');
		return;
	case N_BLOCK:
		if (n->lib) {
			const LibNode *l = n->lib;
			buf_puts(b, ", \"library\": {\"op\": ");
			const char *op = op_name(l->op);
			buf_quote(b, op ? op : "?");
			buf_puts(b, ", \"inputs\": [");
			for (int i = 0; i < l->nin; i++) {
				if (i) buf_puts(b, ", ");
				jcname(b, g, l->in[i]);
			}
			buf_puts(b, "], \"outputs\": [");
			for (int i = 0; i < l->nout; i++) {
				if (i) buf_puts(b, ", ");
				jcname(b, g, l->out[i]);
			}
			buf_puts(b, "], \"attrs\": ");
			jattrs(b, l);
			buf_puts(b, "}}");
			return;
		}
		if (n->gpu)
			jplan(b, g, n->gpu);
		buf_puts(b, ", \"tasklets\": [");
		for (int i = 0; i < n->nts; i++) {
			if (i) buf_putc(b, ',');
			indent(b, depth + 1);
			jtasklet(b, g, &n->ts[i]);
		}
		if (n->nts) indent(b, depth);
		buf_puts(b, "]}");
		return;
	}
	buf_putc(b, '}');
}

/* A small live constant's bytes as hex (SDFG_DUMP_DATA_MAX); -1 if they
 * could not be made (reported), 0 otherwise. */
static int jdata(Buf *b, Sdfg *g, int id)
{
	const Container *c = &g->cs[id];
	int64_t n = sdfg_numel(g, id), bytes;
	if (c->kind != CK_CONST || c->dead || n < 0 || ck_mul(n, dtype_info[c->dt].size, &bytes) ||
	    bytes > SDFG_DUMP_DATA_MAX)
		return 0;
	const unsigned char *d = sdfg_const_get(g, id);
	if (!d) return -1;
	buf_puts(b, ", \"data\": \"");
	for (int64_t i = 0; i < bytes; i++) buf_printf(b, "%02x", d[i]);
	buf_putc(b, '"');
	sdfg_const_put(g, id);
	return 0;
}

int sdfg_dump_json(Sdfg *g, Buf *b)
{
	int rc = 0;
	buf_printf(b, "{\n  \"sdfg_format\": %d,\n  \"name\": ", SDFG_FORMAT);
	buf_quote(b, g->name ? g->name : "");
	buf_puts(b, ",\n  \"hash\": ");
	buf_quote(b, g->hash);
	buf_puts(b, ",\n  \"containers\": [");
	for (int i = 0; i < g->ncs; i++) {
		const Container *c = &g->cs[i];
		buf_puts(b, i ? ",\n    " : "\n    ");
		buf_printf(b, "{\"id\": %d, \"name\": ", i);
		buf_quote(b, c->name ? c->name : "");
		buf_puts(b, ", \"origin\": ");
		buf_quote(b, c->origin ? c->origin : "");
		buf_puts(b, ", \"dtype\": ");
		buf_quote(b, dt_name(c->dt));
		buf_puts(b, ", \"kind\": ");
		buf_quote(b, NAME_OF(ckind_name, c->kind, CK_STATE + 1));
		int rank = c->rank >= 0 && c->rank <= MAXDIM ? c->rank : 0;
		buf_puts(b, ", \"shape\": ");
		jexprs(b, g, c->shape, rank);
		buf_puts(b, ", \"strides\": ");
		jexprs(b, g, c->stride, rank);
		buf_puts(b, ", \"offset\": ");
		if (c->offset) jexpr(b, g, c->offset);
		else buf_puts(b, "\"0\"");
		buf_printf(b, ", \"base\": %d, \"io\": %d, \"aofs\": %lld", c->base, c->io, (long long)c->aofs);
		if (c->aofs == -2) buf_printf(b, ", \"aslot\": %d", c->aslot);
		if (c->wofs) buf_printf(b, ", \"wofs\": %lld", (long long)c->wofs);
		if (c->written)
			buf_puts(b, ", \"written\": true");
		if (c->kind == CK_STATE)
			buf_printf(b, ", \"init\": %d, \"sofs\": %lld, \"inplace\": %s", c->init, (long long)c->sofs,
			           c->inplace ? "true" : "false");
		buf_printf(b, ", \"owner\": %d, \"dead\": %s", c->owner, c->dead ? "true" : "false");
		if (c->dq) {
			const Dequant *d = c->dq;
			buf_printf(b, ", \"dequant\": {\"q\": %d, \"s\": %d, \"z\": %d, \"sc\": ", d->q, d->s, d->z);
			jdouble(b, d->sc);
			buf_puts(b, ", \"zc\": ");
			jdouble(b, d->zc);
			if (d->quant) {
				buf_puts(b, ", \"blk\": [");
				for (int k = 0; k < rank; k++)
					buf_printf(b, k ? ", %lld" : "%lld", (long long)d->blk[k]);
				buf_putc(b, ']');
			}
			buf_putc(b, '}');
		}
		rc |= jdata(b, g, i);
		buf_putc(b, '}');
	}
	buf_puts(b, g->ncs ? "\n  ],\n  \"symbols\": [" : "],\n  \"symbols\": [");
	for (int i = 0; i < g->nsyms; i++) {
		const Symbol *s = &g->syms[i];
		buf_puts(b, i ? ",\n    " : "\n    ");
		buf_printf(b, "{\"id\": %d, \"name\": ", i);
		buf_quote(b, s->name);
		buf_printf(b, ", \"kind\": \"%s\", \"lo\": %lld, \"hi\": %lld}", NAME_OF(sym_kind_name, s->kind, SYM_VALUE + 1), (long long)s->lo,
		           (long long)s->hi);
	}
	buf_puts(b, g->nsyms ? "\n  ],\n  \"inputs\": " : "],\n  \"inputs\": ");
	jints(b, g->inputs, g->ninputs);
	buf_puts(b, ",\n  \"outputs\": ");
	jints(b, g->outputs, g->noutputs);
	if (g->nstates) {
		buf_puts(b, ",\n  \"states\": ");
		jints(b, g->states, g->nstates);
		buf_printf(b, ",\n  \"state_size\": %lld", (long long)g->state_size);
	}
	buf_printf(b, ",\n  \"arena_size\": %lld,\n  \"next_id\": %d,\n  \"host_steps\": [", (long long)g->arena_size, g->nextid);
	for (int i = 0; i < g->nhost_steps; i++) {
		buf_puts(b, i ? ", {\"node\": " : "{\"node\": ");
		buf_quote(b, g->host_steps[i].node);
		buf_puts(b, ", \"why\": ");
		buf_quote(b, g->host_steps[i].why);
		buf_putc(b, '}');
	}
	buf_puts(b, "],\n  \"specialized\": ");
	jstr_or_null(b, g->specialized);
	buf_puts(b, ",\n  \"dims\": [");
	for (int i = 0; i < g->ndims; i++) {
		if (i) buf_puts(b, ", ");
		jsym(b, g, g->dims[i]);
	}
	buf_puts(b, "],\n  \"guards\": [");
	for (int i = 0; i < g->nguards; i++) {
		const Guard *gd = &g->guards[i];
		buf_puts(b, i ? ",\n    {\"a\": " : "\n    {\"a\": ");
		jexpr(b, g, gd->a);
		buf_puts(b, ", \"op\": ");
		buf_quote(b, NAME_OF(guard_op_name, gd->op, G_LE + 1));
		buf_puts(b, ", \"b\": ");
		jexpr(b, g, gd->b);
		buf_puts(b, ", \"text\": ");
		jstr_or_null(b, gd->text);
		buf_puts(b, ", \"msg\": ");
		jstr_or_null(b, gd->msg);
		buf_putc(b, '}');
	}
	buf_puts(b, g->nguards ? "\n  ],\n  \"msgs\": [" : "],\n  \"msgs\": [");
	for (int i = 0; i < g->nmsgs; i++) {
		buf_puts(b, i ? ",\n    " : "\n    ");
		jstr_or_null(b, g->msgs[i]);
	}
	buf_puts(b, g->nmsgs ? "\n  ],\n  \"ws\": [" : "],\n  \"ws\": [");
	for (int i = 0; i < g->nws; i++) {
		const WsSlot *w = &g->ws[i];
		buf_puts(b, i ? ",\n    {\"data\": " : "\n    {\"data\": ");
		jcname(b, g, w->id);
		buf_puts(b, ", \"size\": ");
		jexpr(b, g, w->size);
		buf_puts(b, ", \"below\": ");
		jints(b, w->below, w->nbelow);
		buf_putc(b, '}');
	}
	buf_puts(b, g->nws ? "\n  ],\n  \"census\": {" : "],\n  \"census\": {");
	for (int i = 0; i < g->ncensus; i++) {
		buf_puts(b, i ? ",\n    " : "\n    ");
		buf_quote(b, g->census_ops[i]);
		buf_printf(b, ": %d", g->census_counts[i]);
	}
	buf_puts(b, g->ncensus ? "\n  },\n  \"root\": " : "},\n  \"root\": ");
	jnode(b, g, g->root, 1);
	buf_puts(b, "\n}\n");
	return rc ? -1 : 0;
}

/* ---- DOT ------------------------------------------------------------------------------- */
/* A double-quoted DOT string showing s (buf_dot: names from the model are
 * shown, never read as DOT's escapes). */
static void dq(Buf *b, const char *s)
{
	buf_dot(b, s);
}

static void subset_text(Buf *t, const Sdfg *g, const Memlet *m)
{
	int rank = m->data >= 0 && m->data < g->ncs ? g->cs[m->data].rank : 0;
	buf_putc(t, '[');
	for (int d = 0; d < rank; d++) {
		if (d) buf_puts(t, ", ");
		ex_print(t, g, m->idx[d]);
	}
	buf_putc(t, ']');
}

/* A kernel's plan in a cluster's label: "gpu tiled tf32 64x64, 24 x 256". */
static void dot_plan(Buf *t, const GpuPlan *p)
{
	if (!p)
		return;
	buf_printf(t, "\ngpu %s", (unsigned)p->kind < NGPUKINDS ? gpu_kind_name[p->kind] : "?");
	if (p->kind == GK_TILED)
		buf_printf(t, " %s %dx%d", (unsigned)p->mma < NMMAS ? mma_info[p->mma].name : "?", p->tile, p->tile);
	if (p->grid >= 0)
		buf_printf(t, ", %lld x %d", (long long)p->grid, p->block);
	else
		buf_printf(t, ", run-time grid x %d", p->block);
}

static void dot_pad(Buf *b, int depth)
{
	for (int i = 0; i < depth; i++) buf_puts(b, "  ");
}

/* One access node per container per block, declared on first use. */
static void dot_access(Buf *b, const Sdfg *g, const Node *n, int c, unsigned char *seen, int depth)
{
	if (c < 0 || c >= g->ncs || seen[c]) return;
	seen[c] = 1;
	dot_pad(b, depth);
	buf_printf(b, "n%d_c%d [shape=ellipse, label=", n->id, c);
	dq(b, g->cs[c].name);
	buf_puts(b, "];\n");
}

static void dot_edge(Buf *b, const char *from, const char *to, const char *label, int depth)
{
	dot_pad(b, depth);
	buf_printf(b, "%s -> %s", from, to);
	if (label) {
		buf_puts(b, " [label=");
		dq(b, label);
		buf_putc(b, ']');
	}
	buf_puts(b, ";\n");
}

static void dot_block(Buf *b, const Sdfg *g, const Node *n, int depth)
{
	unsigned char *seen = calloc((size_t)(g->ncs ? g->ncs : 1), 1);
	if (!seen) diag_internal(__FILE__, __LINE__, "out of memory");
	char from[64], to[64];
	Buf t = {0};
	if (n->lib) {
		const LibNode *l = n->lib;
		const char *op = op_name(l->op);
		dot_pad(b, depth);
		buf_printf(b, "n%d_lib [shape=box, label=", n->id);
		dq(b, op ? op : "?");
		buf_puts(b, "];\n");
		for (int i = 0; i < l->nin; i++) dot_access(b, g, n, l->in[i], seen, depth);
		for (int i = 0; i < l->nout; i++) dot_access(b, g, n, l->out[i], seen, depth);
		snprintf(to, sizeof to, "n%d_lib", n->id);
		for (int i = 0; i < l->nin; i++) {
			if (l->in[i] < 0 || l->in[i] >= g->ncs) continue;
			snprintf(from, sizeof from, "n%d_c%d", n->id, l->in[i]);
			dot_edge(b, from, to, NULL, depth);
		}
		for (int i = 0; i < l->nout; i++) {
			if (l->out[i] < 0 || l->out[i] >= g->ncs) continue;
			snprintf(from, sizeof from, "n%d_c%d", n->id, l->out[i]);
			dot_edge(b, to, from, NULL, depth);
		}
		free(seen);
		return;
	}
	for (int k = 0; k < n->nts; k++) {
		const Tasklet *ts = &n->ts[k];
		dot_pad(b, depth);
		buf_printf(b, "n%d_t%d [shape=octagon, label=", n->id, k);
		if (ts->bind >= 0 && ts->bind < g->nsyms) {
			Buf lb = {0};
			buf_printf(&lb, "%s -> %s", (unsigned)ts->code < NTCODES ? tcode_name[ts->code] : "?", g->syms[ts->bind].name);
			dq(b, lb.s);
			buf_free(&lb);
		} else
			dq(b, (unsigned)ts->code < NTCODES ? tcode_name[ts->code] : "?");
		buf_puts(b, "];\n");
		for (int i = 0; i < ts->nin && i < 3; i++)
			if (ts->in[i].kind == OPD_MEM) dot_access(b, g, n, ts->in[i].m.data, seen, depth);
		if (ts->store) dot_access(b, g, n, ts->out.data, seen, depth);
	}
	for (int k = 0; k < n->nts; k++) {
		const Tasklet *ts = &n->ts[k];
		snprintf(to, sizeof to, "n%d_t%d", n->id, k);
		for (int i = 0; i < ts->nin && i < 3; i++) {
			const Operand *o = &ts->in[i];
			t.len = 0;
			if (o->kind == OPD_MEM && o->m.data >= 0 && o->m.data < g->ncs) {
				snprintf(from, sizeof from, "n%d_c%d", n->id, o->m.data);
				subset_text(&t, g, &o->m);
				if (o->guard) buf_printf(&t, " pad %g", o->pad);
				dot_edge(b, from, to, t.s, depth);
			} else if (o->kind == OPD_VAL && o->val >= 0 && o->val < n->nts) {
				snprintf(from, sizeof from, "n%d_t%d", n->id, o->val);
				dot_edge(b, from, to, NULL, depth);
			}
		}
		if (ts->store && ts->out.data >= 0 && ts->out.data < g->ncs) {
			t.len = 0;
			subset_text(&t, g, &ts->out);
			if (ts->wcr != W_NONE && (unsigned)ts->wcr <= W_PROD)
				buf_printf(&t, " (%s)", wcr_name[ts->wcr]);
			snprintf(from, sizeof from, "n%d_c%d", n->id, ts->out.data);
			dot_edge(b, to, from, t.s, depth);
		}
	}
	buf_free(&t);
	free(seen);
}

static void dot_node(Buf *b, const Sdfg *g, const Node *n, int depth, int inline_seq)
{
	if (!n) return;
	Buf t = {0};
	switch (n->kind) {
	case N_SEQ:
		if (!inline_seq) {
			dot_pad(b, depth);
			buf_printf(b, "subgraph cluster_%d {\n", n->id);
			dot_pad(b, depth + 1);
			buf_printf(&t, "sequence %d", n->id);
			buf_puts(b, "label=");
			dq(b, t.s);
			buf_puts(b, ";\n");
		}
		for (int i = 0; i < n->nkids; i++) dot_node(b, g, n->kids[i], depth + !inline_seq, 0);
		if (!inline_seq) {
			dot_pad(b, depth);
			buf_puts(b, "}\n");
		}
		break;
	case N_MAP:
	case N_FOR:
		dot_pad(b, depth);
		buf_printf(b, "subgraph cluster_%d {\n", n->id);
		buf_printf(&t, "%s %s in [", n->kind == N_MAP ? "map" : "for",
		           n->var >= 0 && n->var < g->nsyms ? g->syms[n->var].name : "?");
		ex_print(&t, g, n->lo);
		buf_puts(&t, ", ");
		ex_print(&t, g, n->hi);
		buf_putc(&t, ')');
		if (n->step != 1) buf_printf(&t, " step %lld", (long long)n->step);
		buf_printf(&t, " %s", (unsigned)n->sched < NSCHEDS ? sched_name[n->sched] : "?");
		if (n->collapse > 1) buf_printf(&t, " collapse %d", n->collapse);
		dot_plan(&t, n->gpu);
		dot_pad(b, depth + 1);
		buf_puts(b, "label=");
		dq(b, t.s);
		buf_puts(b, ";\n");
		dot_pad(b, depth + 1);
		buf_puts(b, "style=rounded;\n");
		/* A cluster with no nodes is dropped by dot; a point keeps it. */
		dot_pad(b, depth + 1);
		buf_printf(b, "n%d_anchor [shape=point, style=invis];\n", n->id);
		dot_node(b, g, n->body, depth + 1, 1);
		dot_pad(b, depth);
		buf_puts(b, "}\n");
		break;
	case N_BLOCK:
		dot_pad(b, depth);
		buf_printf(b, "subgraph cluster_%d {\n", n->id);
		buf_printf(&t, "block %d", n->id);
		if (n->label && *n->label) buf_printf(&t, " (%s)", n->label);
		dot_plan(&t, n->gpu);
		dot_pad(b, depth + 1);
		buf_puts(b, "label=");
		dq(b, t.s);
		buf_puts(b, ";\n");
		dot_pad(b, depth + 1);
		buf_puts(b, "style=dashed;\n");
		dot_pad(b, depth + 1);
		buf_printf(b, "n%d_anchor [shape=point, style=invis];\n", n->id);
		dot_block(b, g, n, depth + 1);
		dot_pad(b, depth);
		buf_puts(b, "}\n");
		break;
	}
	buf_free(&t);
}

void sdfg_dump_dot(Sdfg *g, Buf *b)
{
	buf_puts(b, "digraph ");
	dq(b, g->name ? g->name : "sdfg");
	buf_puts(b, " {\n  compound=true;\n  node [fontname=\"Helvetica\"];\n  edge [fontname=\"Helvetica\", fontsize=10];\n");
	dot_node(b, g, g->root, 1, 1);
	buf_puts(b, "}\n");
}
