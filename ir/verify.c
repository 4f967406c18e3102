/*
 * verify.c - structural checks of an SDFG, run after every pass in debug
 * builds and tests.
 *
 * sdfg_verify reports every problem it finds (not just the first) as an
 * error located at "sdfg 'NAME' after STAGE" and returns their number; a
 * non-zero result is an internal bug of whichever pass ran last. It checks:
 *
 *   containers  valid dtype and rank, every dim / stride / offset present and
 *               built from shape symbols only; views alias a live non-view
 *   signature   g->inputs / g->outputs name live containers of the right
 *               kind whose io is their position
 *   tree        root is a sequence; node ids unique; parent pointers right;
 *               sequence kids present; loops have a SYM_LOOP variable that
 *               no enclosing loop uses, an N_SEQ body and step >= 1
 *   dataflow    every container id valid and not dead; one index per dim;
 *               index and bound symbols are shape symbols or variables of
 *               enclosing loops (OPD_EXPR operands too) or value symbols in
 *               scope (bound by an earlier tasklet of the same block, or by
 *               the storing tasklet itself for its output memlet, or by an
 *               earlier child block of an enclosing sequence); OPD_VAL names an
 *               earlier tasklet of the block; operand count matches tcode_arity; CK_LOCAL
 *               containers only inside their owner loop; constant indices
 *               within constant shapes (unless guarded: those read a pad); inputs and constants never written;
 *               every output written
 *   binds       a tasklet binds an int64 value to a SYM_VALUE symbol that
 *               nothing else binds; only a T_INDEX binder may claim a range
 *   expanded    once no library node is left: every non-local, non-view
 *               container is written by exactly one top-level child of the
 *               root (writes through a view count for its base), the
 *               invariant fusion and the memory plan rely on.
 */
#include <stdlib.h>
#include <string.h>

#include "ir.h"

typedef struct {
	Sdfg *g;
	const char *loc;
	int nerr;
	/* enclosing loops, innermost last */
	int *lvar, *lid;
	int nl, capl;
	int *ids;               /* every node id seen */
	int nids, capids;
	char *written;          /* by container root */
	int nlib;               /* library nodes seen */
	/* value symbols: binding block id and tasklet per symbol (-1: unbound);
	 * in scope are those bound in block blk by tasklets before upto */
	int *bnode, *bts;
	const Node *blk;
	int upto;
	/* and those bound by earlier child blocks of an enclosing sequence */
	int *vis;
} V;

#define ERR(v, ...)                           \
	do {                                      \
		diag_error((v)->loc, __VA_ARGS__);    \
		(v)->nerr++;                          \
	} while (0)

static void *xcalloc(size_t n, size_t sz)
{
	void *p = calloc(n ? n : 1, sz);
	if (!p) diag_internal(__FILE__, __LINE__, "out of memory");
	return p;
}

static int cmp_int(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;
	return (x > y) - (x < y);
}

static const char *cname(Sdfg *g, int c)
{
	return c >= 0 && c < g->ncs ? g->cs[c].name : "?";
}

/* Every symbol in e exists and is a shape symbol or (if loops) the variable
 * of an enclosing loop. what/id describe e for the message. */
static void check_expr(V *v, const Expr *e, int loops, const char *what, int id)
{
	if (!e) {
		ERR(v, "%s (node %d): missing expression", what, id);
		return;
	}
	if (e->k == E_SYM) {
		if (e->v < 0 || e->v >= v->g->nsyms) {
			ERR(v, "%s (node %d): undefined symbol id %lld", what, id, (long long)e->v);
			return;
		}
		const Symbol *s = &v->g->syms[e->v];
		if (s->kind == SYM_SHAPE) return;
		if (s->kind == SYM_VALUE) {
			if (v->bnode[e->v] < 0)
				ERR(v, "%s (node %d): value symbol '%s' is bound by no tasklet", what, id, s->name);
			else if (!(loops && v->blk && v->bnode[e->v] == v->blk->id && v->bts[e->v] < v->upto) &&
			         !(loops && v->vis[e->v] > 0))
				ERR(v, "%s (node %d): value symbol '%s' used outside its scope (after tasklet %d of node %d)", what,
				    id, s->name, v->bts[e->v], v->bnode[e->v]);
			return;
		}
		if (loops)
			for (int i = 0; i < v->nl; i++)
				if (v->lvar[i] == e->v) return;
		ERR(v, "%s (node %d): symbol '%s' is not defined here (not a shape symbol nor the variable of an enclosing loop)",
		    what, id, s->name);
		return;
	}
	if ((e->k == E_ADD || e->k == E_MUL || e->k == E_DIV || e->k == E_MOD || e->k == E_MIN || e->k == E_MAX) &&
	    (e->n < 1 || !e->a)) {
		ERR(v, "%s (node %d): malformed expression", what, id);
		return;
	}
	for (int i = 0; i < e->n; i++) check_expr(v, e->a[i], loops, what, id);
}

/* A container reference from node n: valid, live, and a local only inside
 * its owner loop. */
static int check_ref(V *v, Node *n, int c, const char *what)
{
	Sdfg *g = v->g;
	if (c < 0 || c >= g->ncs) {
		ERR(v, "node %d ('%s'): %s refers to container id %d of %d", n->id, n->label, what, c, g->ncs);
		return 0;
	}
	if (g->cs[c].dead) ERR(v, "node %d ('%s'): %s uses dead container '%s'", n->id, n->label, what, g->cs[c].name);
	int root = sdfg_root_of(g, c);
	if (root >= 0 && root < g->ncs && g->cs[root].kind == CK_LOCAL) {
		int ok = 0;
		for (int i = 0; i < v->nl; i++)
			if (v->lid[i] == g->cs[root].owner) ok = 1;
		if (!ok)
			ERR(v, "node %d ('%s'): local container '%s' used outside the body of its owner loop (node %d)",
			    n->id, n->label, g->cs[root].name, g->cs[root].owner);
	}
	return 1;
}

static void check_write(V *v, Node *n, int c)
{
	Sdfg *g = v->g;
	int root = sdfg_root_of(g, c);
	if (root < 0 || root >= g->ncs) return;
	v->written[root] = 1;
	if (g->cs[root].kind == CK_INPUT && !g->cs[root].written)
		ERR(v, "node %d ('%s'): input '%s' is written", n->id, n->label, g->cs[root].name);
	if (g->cs[root].kind == CK_CONST)
		ERR(v, "node %d ('%s'): constant '%s' is written", n->id, n->label, g->cs[root].name);
}

/* guarded: out-of-range indices read a pad value, so constant indices
 * need not be within bounds. */
static void check_memlet(V *v, Node *n, const Memlet *m, const char *what, int guarded)
{
	Sdfg *g = v->g;
	if (!check_ref(v, n, m->data, what)) return;
	const Container *c = &g->cs[m->data];
	int nidx = 0, bad = 0, allconst = 1;
	for (int d = 0; d < MAXDIM; d++) {
		if (m->idx[d]) {
			nidx++;
			if (d >= c->rank) bad = 1;
			check_expr(v, m->idx[d], 1, what, n->id);
			if (m->idx[d]->k != E_INT) allconst = 0;
		} else if (d < c->rank) bad = 1;
	}
	if (bad) {
		ERR(v, "node %d ('%s'): %s of '%s' has %d indices for rank %d", n->id, n->label, what, c->name, nidx,
		    c->rank);
		return;
	}
	if (!allconst || guarded) return;
	for (int d = 0; d < c->rank; d++) {
		int64_t ext, ix = m->idx[d]->v;
		if (c->shape[d] && ex_isint(c->shape[d], &ext) && (ix < 0 || ix >= ext))
			ERR(v, "node %d ('%s'): %s of '%s' index %lld out of bounds [0, %lld) in dim %d", n->id,
			    n->label, what, c->name, (long long)ix, (long long)ext, d);
	}
}

static void check_block(V *v, Node *n)
{
	Sdfg *g = v->g;
	if (n->lib) {
		LibNode *l = n->lib;
		v->nlib++;
		if (n->nts) ERR(v, "node %d ('%s'): block holds both a library node and tasklets", n->id, n->label);
		if (l->nin < 0 || l->nin > 8 || l->nout < 0 || l->nout > 4) {
			ERR(v, "node %d ('%s'): library node with %d inputs, %d outputs", n->id, n->label, l->nin, l->nout);
			return;
		}
		for (int i = 0; i < l->nin; i++)
			if (l->in[i] != -1) check_ref(v, n, l->in[i], "library input");
		for (int i = 0; i < l->nout; i++)
			if (l->out[i] != -1 && check_ref(v, n, l->out[i], "library output")) check_write(v, n, l->out[i]);
		return;
	}
	v->blk = n;
	for (int t = 0; t < n->nts; t++) {
		const Tasklet *k = &n->ts[t];
		char what[64];
		snprintf(what, sizeof what, "tasklet %d", t);
		v->upto = t;
		if ((int)k->code < 0 || k->code >= NTCODES) {
			ERR(v, "node %d ('%s'): %s has invalid code %d", n->id, n->label, what, (int)k->code);
			continue;
		}
		if ((int)k->dt < 0 || k->dt >= NDTYPES)
			ERR(v, "node %d ('%s'): %s has invalid dtype %d", n->id, n->label, what, (int)k->dt);
		if (k->code == T_INDEX && k->dt != DT_I64)
			ERR(v, "node %d ('%s'): %s (index) computes %s, not int64", n->id, n->label, what, dtype_info[k->dt].name);
		if (k->nin != tcode_arity(k->code))
			ERR(v, "node %d ('%s'): %s (%s) has %d operands, expected %d", n->id, n->label, what,
			    tcode_name[k->code], k->nin, tcode_arity(k->code));
		for (int i = 0; i < k->nin && i < 3; i++) {
			const Operand *o = &k->in[i];
			if (o->kind == OPD_MEM) check_memlet(v, n, &o->m, what, o->guard);
			else if (o->kind == OPD_EXPR) check_expr(v, o->e, 1, what, n->id);
			else if (o->kind == OPD_VAL) {
				if (o->val < 0 || o->val >= t)
					ERR(v, "node %d ('%s'): %s operand %d refers to value %d, not an earlier tasklet", n->id,
					    n->label, what, i, o->val);
			} else if (o->kind == OPD_EXPR) {
				if (!o->e)
					ERR(v, "node %d ('%s'): %s operand %d has no expression", n->id, n->label, what, i);
			} else if (o->kind != OPD_CONST)
				ERR(v, "node %d ('%s'): %s operand %d has invalid kind", n->id, n->label, what, i);
		}
		if (k->store) {
			if ((int)k->wcr < W_NONE || k->wcr > W_PROD)
				ERR(v, "node %d ('%s'): %s has invalid wcr %d", n->id, n->label, what, (int)k->wcr);
			v->upto = t + 1;
			check_memlet(v, n, &k->out, what, 0);
			if (k->out.data >= 0 && k->out.data < g->ncs) check_write(v, n, k->out.data);
		}
	}
	v->blk = NULL;
}

/* Binders of value symbols, before the tree walk checks their uses. */
static void find_binders(V *v, Node *n)
{
	Sdfg *g = v->g;
	if (!n) return;
	switch (n->kind) {
	case N_SEQ:
		for (int i = 0; i < n->nkids; i++) find_binders(v, n->kids[i]);
		return;
	case N_MAP:
	case N_FOR:
		find_binders(v, n->body);
		return;
	case N_BLOCK:
		for (int t = 0; t < n->nts && !n->lib; t++) {
			const Tasklet *k = &n->ts[t];
			int s = k->bind;
			if (s < 0) continue;
			if (s >= g->nsyms || g->syms[s].kind != SYM_VALUE) {
				ERR(v, "node %d ('%s'): tasklet %d binds symbol id %d, which is not a SYM_VALUE symbol", n->id, n->label,
				    t, s);
				continue;
			}
			if (v->bnode[s] >= 0)
				ERR(v, "node %d ('%s'): tasklet %d binds value symbol '%s', already bound by tasklet %d of node %d",
				    n->id, n->label, t, g->syms[s].name, v->bts[s], v->bnode[s]);
			v->bnode[s] = n->id;
			v->bts[s] = t;
			if (k->dt != DT_I64)
				ERR(v, "node %d ('%s'): tasklet %d binds value symbol '%s' to a %s value (int64 only)", n->id, n->label,
				    t, g->syms[s].name, dtype_info[k->dt].name);
			if (k->code != T_INDEX && (g->syms[s].lo != INT64_MIN || g->syms[s].hi != INT64_MAX))
				ERR(v, "node %d ('%s'): value symbol '%s' claims range [%lld, %lld], which only a T_INDEX binder checks",
				    n->id, n->label, g->syms[s].name, (long long)g->syms[s].lo, (long long)g->syms[s].hi);
		}
		return;
	}
}

/* Counts the value symbols that block n (a sequence's child) binds as in
 * scope (d = 1) or out of it again (d = -1). */
static void vis_block(V *v, const Node *n, int d)
{
	for (int t = 0; n && n->kind == N_BLOCK && !n->lib && t < n->nts; t++)
		if (n->ts[t].bind >= 0 && n->ts[t].bind < v->g->nsyms && v->bnode[n->ts[t].bind] == n->id)
			v->vis[n->ts[t].bind] += d;
}

static void check_node(V *v, Node *n, Node *parent)
{
	Sdfg *g = v->g;
	if (!n) {
		ERR(v, "node %d ('%s'): NULL child", parent ? parent->id : -1, parent ? parent->label : "");
		return;
	}
	if (n->parent != parent)
		ERR(v, "node %d ('%s'): parent pointer is node %d, expected node %d", n->id, n->label,
		    n->parent ? n->parent->id : -1, parent ? parent->id : -1);
	if (v->nids == v->capids) {
		v->capids = v->capids ? 2 * v->capids : 64;
		v->ids = realloc(v->ids, (size_t)v->capids * sizeof *v->ids);
		if (!v->ids) diag_internal(__FILE__, __LINE__, "out of memory");
	}
	v->ids[v->nids++] = n->id;
	switch (n->kind) {
	case N_SEQ:
		/* a child block's value symbols are in scope in the later children */
		for (int i = 0; i < n->nkids; i++) {
			check_node(v, n->kids[i], n);
			vis_block(v, n->kids[i], 1);
		}
		for (int i = 0; i < n->nkids; i++) vis_block(v, n->kids[i], -1);
		return;
	case N_BLOCK:
		check_block(v, n);
		return;
	case N_MAP:
	case N_FOR: {
		int ok = n->var >= 0 && n->var < g->nsyms;
		if (!ok) ERR(v, "node %d ('%s'): loop variable id %d is not a symbol", n->id, n->label, n->var);
		else if (g->syms[n->var].kind != SYM_LOOP)
			ERR(v, "node %d ('%s'): loop variable '%s' is not a SYM_LOOP symbol", n->id, n->label,
			    g->syms[n->var].name);
		for (int i = 0; ok && i < v->nl; i++)
			if (v->lvar[i] == n->var)
				ERR(v, "node %d ('%s'): loop variable '%s' is already the variable of enclosing loop node %d",
				    n->id, n->label, g->syms[n->var].name, v->lid[i]);
		if (n->step < 1) ERR(v, "node %d ('%s'): loop step %lld < 1", n->id, n->label, (long long)n->step);
		check_expr(v, n->lo, 1, "loop lower bound", n->id);
		check_expr(v, n->hi, 1, "loop upper bound", n->id);
		if ((unsigned)n->sched >= NSCHEDS) ERR(v, "node %d ('%s'): invalid schedule", n->id, n->label);
		if (!n->body || n->body->kind != N_SEQ) {
			ERR(v, "node %d ('%s'): loop body is not a sequence", n->id, n->label);
			return;
		}
		if (v->nl == v->capl) {
			v->capl = v->capl ? 2 * v->capl : 16;
			v->lvar = realloc(v->lvar, (size_t)v->capl * sizeof *v->lvar);
			v->lid = realloc(v->lid, (size_t)v->capl * sizeof *v->lid);
			if (!v->lvar || !v->lid) diag_internal(__FILE__, __LINE__, "out of memory");
		}
		v->lvar[v->nl] = n->var;
		v->lid[v->nl++] = n->id;
		check_node(v, n->body, n);
		v->nl--;
		return;
	}
	}
	ERR(v, "node %d ('%s'): invalid node kind %d", n->id, n->label, (int)n->kind);
}

static void check_containers(V *v)
{
	Sdfg *g = v->g;
	for (int i = 0; i < g->ncs; i++) {
		const Container *c = &g->cs[i];
		if (c->dead) continue;
		char what[300];
		snprintf(what, sizeof what, "container '%s'", c->name ? c->name : "?");
		if (!c->name || !c->name[0]) ERR(v, "container %d has no name", i);
		if ((int)c->dt < 0 || c->dt >= NDTYPES) ERR(v, "%s: invalid dtype %d", what, (int)c->dt);
		if (c->rank < 0 || c->rank > MAXDIM) {
			ERR(v, "%s: invalid rank %d", what, c->rank);
			continue;
		}
		for (int d = 0; d < c->rank; d++) {
			check_expr(v, c->shape[d], 0, what, -1);
			check_expr(v, c->stride[d], 0, what, -1);
		}
		if (c->offset) check_expr(v, c->offset, 0, what, -1);
		if (c->kind == CK_VIEW) {
			if (c->base < 0 || c->base >= g->ncs) ERR(v, "%s: view without a base", what);
			else if (g->cs[c->base].kind == CK_VIEW)
				ERR(v, "%s: base '%s' is itself a view", what, g->cs[c->base].name);
			else if (g->cs[c->base].dead)
				ERR(v, "%s: base '%s' is dead", what, g->cs[c->base].name);
		}
	}
	for (int i = 0; i < g->ninputs; i++) {
		int c = g->inputs[i];
		if (c < 0 || c >= g->ncs || g->cs[c].kind != CK_INPUT || g->cs[c].dead)
			ERR(v, "inputs[%d] = %d ('%s') is not a live input container", i, c, cname(g, c));
		else if (g->cs[c].io != i)
			ERR(v, "input '%s' has io %d but is inputs[%d]", g->cs[c].name, g->cs[c].io, i);
	}
	for (int i = 0; i < g->noutputs; i++) {
		int c = g->outputs[i];
		if (c < 0 || c >= g->ncs || g->cs[c].kind != CK_OUTPUT || g->cs[c].dead)
			ERR(v, "outputs[%d] = %d ('%s') is not a live output container", i, c, cname(g, c));
		else if (g->cs[c].io != i)
			ERR(v, "output '%s' has io %d but is outputs[%d]", g->cs[c].name, g->cs[c].io, i);
	}
	/* state: fixed sizes, an initial value of its dtype and size (or none:
	 * zeros), a place
	 * inside the state area once planned */
	for (int i = 0; i < g->nstates; i++) {
		int c = g->states[i];
		if (c < 0 || c >= g->ncs || g->cs[c].kind != CK_STATE || g->cs[c].dead) {
			ERR(v, "states[%d] = %d ('%s') is not a live state container", i, c, cname(g, c));
			continue;
		}
		const Container *s = &g->cs[c];
		int64_t n = sdfg_numel(g, c), in = -1, bytes;
		if (s->io != i)
			ERR(v, "state '%s' has io %d but is states[%d]", s->name, s->io, i);
		if (n < 0)
			ERR(v, "state '%s' has a size that depends on run-time dims", s->name);
		if (s->init != -1 && (s->init < 0 || s->init >= g->ncs || g->cs[s->init].kind != CK_CONST || g->cs[s->init].dead ||
		                      g->cs[s->init].dt != s->dt || (in = sdfg_numel(g, s->init)) != n))
			ERR(v, "state '%s': its initial value %d ('%s') is no live constant of its dtype and size", s->name, s->init,
			    cname(g, s->init));
		if (s->sofs != -1 && (s->sofs < 0 || s->sofs % 64 || n < 0 || ck_mul(n, dtype_info[s->dt].size, &bytes) ||
		                      bytes > g->state_size - s->sofs))
			ERR(v, "state '%s': offset %lld outside the state area of %lld bytes", s->name, (long long)s->sofs,
			    (long long)g->state_size);
		(void)in;
	}
	for (int c = 0; c < g->ncs; c++)
		if (g->cs[c].kind == CK_STATE && !g->cs[c].dead &&
		    (g->cs[c].io < 0 || g->cs[c].io >= g->nstates || g->states[g->cs[c].io] != c))
			ERR(v, "state '%s' is not states[%d]", g->cs[c].name, g->cs[c].io);
}

/* Roots of the non-local containers written in subtree n, each marked once
 * per stamp: count[root] becomes the number of subtrees writing it. */
static void count_writes(Sdfg *g, Node *n, int *stamp, int *count, int k)
{
	if (!n) return;
	switch (n->kind) {
	case N_SEQ:
		for (int i = 0; i < n->nkids; i++) count_writes(g, n->kids[i], stamp, count, k);
		return;
	case N_MAP:
	case N_FOR:
		count_writes(g, n->body, stamp, count, k);
		return;
	case N_BLOCK:
		for (int t = 0; t < n->nts; t++) {
			if (!n->ts[t].store) continue;
			int r = sdfg_root_of(g, n->ts[t].out.data);
			if (r < 0 || r >= g->ncs || g->cs[r].kind == CK_LOCAL || stamp[r] == k) continue;
			stamp[r] = k;
			count[r]++;
		}
		return;
	}
}

int sdfg_verify(Sdfg *g, const char *stage)
{
	return sdfg_verify_at(g, stage && *stage ? arena_printf(g->arena, "sdfg '%s' after %s", g->name, stage)
	                                         : arena_printf(g->arena, "sdfg '%s'", g->name));
}

int sdfg_verify_at(Sdfg *g, const char *loc)
{
	V v;
	memset(&v, 0, sizeof v);
	v.g = g;
	v.loc = loc;
	v.written = xcalloc((size_t)g->ncs, 1);

	v.bnode = xcalloc((size_t)g->nsyms, sizeof *v.bnode);
	v.bts = xcalloc((size_t)g->nsyms, sizeof *v.bts);
	v.vis = xcalloc((size_t)g->nsyms + 1, sizeof *v.vis);
	for (int i = 0; i < g->nsyms; i++) v.bnode[i] = v.bts[i] = -1;

	check_containers(&v);
	if (!g->root || g->root->kind != N_SEQ) ERR(&v, "root is not a sequence");
	else {
		find_binders(&v, g->root);
		check_node(&v, g->root, NULL);
	}

	/* Unique node ids: sort, then compare neighbours (one message per id). */
	qsort(v.ids, (size_t)v.nids, sizeof *v.ids, cmp_int);
	for (int i = 1; i < v.nids; i++)
		if (v.ids[i] == v.ids[i - 1] && (i < 2 || v.ids[i - 2] != v.ids[i]))
			ERR(&v, "node id %d is used by more than one node", v.ids[i]);

	for (int i = 0; i < g->noutputs; i++) {
		int c = g->outputs[i];
		if (c >= 0 && c < g->ncs && g->cs[c].kind == CK_OUTPUT && !g->cs[c].dead && !v.written[c])
			ERR(&v, "output '%s' is never written", g->cs[c].name);
	}

	if (v.nlib == 0 && g->root && g->root->kind == N_SEQ) {
		int *stamp = xcalloc((size_t)g->ncs, sizeof *stamp);
		int *count = xcalloc((size_t)g->ncs, sizeof *count);
		for (int k = 0; k < g->root->nkids; k++) count_writes(g, g->root->kids[k], stamp, count, k + 1);
		for (int c = 0; c < g->ncs; c++)
			if (count[c] > 1 && g->cs[c].kind != CK_VIEW && g->cs[c].kind != CK_LOCAL)
				ERR(&v, "container '%s' is written by %d top-level children (expanded graphs need exactly one)",
				    g->cs[c].name, count[c]);
		free(stamp);
		free(count);
	}
	free(v.ids);
	free(v.bnode);
	free(v.bts);
	free(v.vis);
	free(v.lvar);
	free(v.lid);
	free(v.written);
	return v.nerr;
}
