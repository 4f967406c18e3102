/*
 * state.c - update the library's state in place where its old value is dead.
 *
 * Import writes every state S once, at the end of the run, from the value
 * F the program computed for it (the commit, S = F: ir/import/state.c).
 * That is always right and, for a KV cache, ruinous: F is a whole new
 * cache, so a decode step that adds one row per layer copies every cache
 * twice (into F, then into S). This pass lets F's producer P write S
 * itself and drops the commit:
 *
 *   - P a scatter whose self is S (index_put, index_copy, scatter,
 *     slice_scatter, select_scatter): its output
 *     becomes S too, and its expansion then stores only the positions it
 *     changes (ir/expand/index.c: a scatter whose self is its output skips
 *     the copy of self);
 *   - any other P that does not read S (copy_ of a new value into a
 *     counter, a recurrent cell's new hidden state): it writes S instead of
 *     F.
 *
 * Every later reader of F (and every view of F) reads S instead.
 *
 * Legality (ir.h's invariant: one writer per container, children in
 * order): P moves S's write from the commit's position to its own, so no
 * child between P and the commit may read S (it would see the new value
 * where the program read the old), and P may read S only as the self of a
 * scatter, which reads each element before it writes it or not at all. F
 * must be a transient of S's dtype, shape and layout (contiguous), written
 * by P alone. The reads of S before P still read the old value, as before.
 *
 * A state whose initial value is all zeros (a KV cache) drops it: create()
 * fills zeros instead of copying as many bytes of weights.
 *
 * Each state updated this way is marked (Container.inplace) for the report
 * and `doccc check`. Disabling the pass (--disable-pass state) keeps the
 * commits: the same results, with the copies.
 */
#include <string.h>

#include "../ir.h"

static Node *lib_block(Node *n)
{
	while (n->kind == N_SEQ && n->nkids == 1)
		n = n->kids[0];
	return n->kind == N_BLOCK && n->lib ? n : NULL;
}

/* Is child k the commit of state s: S = F, F a transient of S's layout?
 * F's id, else -1. */
static int commit_of(Sdfg *g, Node *k, int s)
{
	Node *b = lib_block(k);
	LibNode *l = b ? b->lib : NULL;
	if (!l || l->op != LIB_ELEMWISE || l->nin != 1 || l->nout != 1 || l->out[0] != s ||
	    lib_int(l, "code", -1) != T_ASSIGN || l->nattrs != 1)
		return -1;
	int f = l->in[0];
	Container *fc = sdfg_c(g, f), *sc = sdfg_c(g, s);
	if (f < 0 || fc->kind != CK_TRANSIENT || fc->dt != sc->dt || fc->rank != sc->rank || !sdfg_is_contiguous(g, f))
		return -1;
	for (int d = 0; d < sc->rank; d++)
		if (!ex_eq(fc->shape[d], sc->shape[d]))
			return -1;
	return f;
}

/* Can P's write of F (its output o) become a write of S? A scatter's self
 * may be S (its expansion reads each element of self before it writes it,
 * or not at all once self is its output); no other input may read S. */
static int may_write(Sdfg *g, LibNode *l, int o, int s)
{
	int scatter = l->op == LIB_SCATTER && o == 0 && l->in[0] == s && lib_int(l, "mode", -1) != SC_VIEW;
	if (scatter && lib_int(l, "mode", -1) == SC_REDUCE)
		scatter = lib_int(l, "include_self", 1) && lib_int(l, "reduce", SR_SUM) != SR_MEAN;
	for (int i = 0; i < l->nin; i++)
		if (l->in[i] >= 0 && sdfg_root_of(g, l->in[i]) == s && !(scatter && i == 0))
			return 0;
	return 1;
}

/* Container f becomes s in children from..end of the root and in the views of f. */
static void rename_from(Sdfg *g, int from, int f, int s)
{
	for (int c = 0; c < g->ncs; c++)
		if (g->cs[c].kind == CK_VIEW && g->cs[c].base == f)
			g->cs[c].base = s;
	for (int k = from; k < g->root->nkids; k++) {
		Node *b = lib_block(g->root->kids[k]);
		for (int i = 0; b && i < b->lib->nin; i++)
			if (b->lib->in[i] == f)
				b->lib->in[i] = s;
		for (int i = 0; b && i < b->lib->nout; i++)
			if (b->lib->out[i] == f)
				b->lib->out[i] = s;
	}
	g->cs[f].dead = 1;
}

/* State s: its commit at child c, from F; 1 if P now writes s. */
static int in_place(Sdfg *g, int s)
{
	Node *root = g->root;
	for (int c = root->nkids - 1; c >= 0; c--) {
		int f = commit_of(g, root->kids[c], s);
		if (f < 0)
			continue;
		int p = -1;
		for (int k = 0; k < c && p < 0; k++)
			if (node_writes(g, root->kids[k], f))
				p = k;
		Node *pb = p >= 0 ? lib_block(root->kids[p]) : NULL;
		if (!pb)
			return 0;
		for (int k = p + 1; k < c; k++)
			if (node_reads(g, root->kids[k], s) || node_writes(g, root->kids[k], f))
				return 0;
		/* only views of F other children could hold: F as a lib output of P, once */
		int o = -1, n = 0;
		for (int i = 0; i < pb->lib->nout; i++)
			if (pb->lib->out[i] >= 0 && sdfg_root_of(g, pb->lib->out[i]) == f)
				o = i, n++;
		if (n != 1 || pb->lib->out[o] != f || !may_write(g, pb->lib, o, s))
			return 0;
		pb->lib->out[o] = s;
		rename_from(g, p + 1, f, s);
		sdfg_remove(root, c);
		g->cs[s].inplace = 1;
		return 1;
	}
	return 0;
}

/* A state whose initial value is all zeros (a KV cache) needs no bytes in
 * the weights: create() fills zeros. -1 if the bytes cannot be had
 * (reported). */
static int zeros(Sdfg *g, int s)
{
	Container *c = sdfg_c(g, s);
	if (c->init < 0)
		return 0;
	const unsigned char *p = sdfg_const_get(g, c->init);
	if (!p)
		return -1;
	int64_t n = sdfg_numel(g, s) * dtype_info[c->dt].size, i = 0;
	while (i < n && !p[i])
		i++;
	sdfg_const_put(g, c->init);
	if (i == n)
		c->init = -1; /* dce_late drops the constant */
	return 0;
}

int pass_state(PassCtx *c)
{
	Sdfg *g = c->g;
	int rc = 0;
	for (int i = 0; i < g->nstates; i++) {
		in_place(g, g->states[i]);
		rc |= zeros(g, g->states[i]);
	}
	return rc ? -1 : 0;
}
