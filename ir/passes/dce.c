/*
 * dce.c - dead-code elimination.
 *
 * Three sweeps, each to a fixpoint, in this order (each one can only create
 * more work for the ones after it):
 *
 *  1. tasklets: inside every tasklet block, a tasklet that does not store
 *     and whose value no later tasklet uses (as an operand, or through the
 *     value symbol it binds in an index, or a later child of the block's
 *     sequence through that symbol) is dropped, an index check
 *     (T_INDEX) included: it only guards the accesses that use it, but not
 *     a run-time assertion (T_ASSERT), which fails the run itself; OPD_VAL
 *     references are renumbered so they keep naming the same tasklets.
 *     Blocks left empty, and loops and nested sequences left without a
 *     body, are removed from their sequence.
 *  2. top level: a child of the root sequence (a library-node block before
 *     expansion, a whole loop nest after it) is dead when none of the
 *     non-local containers it writes is an output or state or is read by another
 *     top-level child, and it holds no run-time assertion. A read of a view
 *     counts as a read of its base and a write through a view as a write of
 *     its base (node_reads/node_writes compare roots), so a live view keeps
 *     its base's writer alive.
 *     Removing a child removes its reads, which can kill earlier writers;
 *     the sweep runs backwards and repeats until nothing changes.
 *  3. containers: every container that no remaining node reads or writes
 *     (directly or through a live view) and that is not an input or an
 *     output or state (or a state's initial value) is marked dead, constants included, so unused weights are not
 *     embedded. Ids stay stable; dead containers are skipped by everyone.
 *
 * Only removal happens, never reordering, so every surviving read still
 * sees the same writer. The pass reports nothing and cannot fail.
 */
#include <string.h>

#include "../ir.h"

/* Registered in ir/passes.c. */
int pass_dce(PassCtx *c);

/* ---- 1. tasklets and empty nodes --------------------------------------------------- */
static int dce_block(Sdfg *g, Arena *a, Node *b, const char *esc)
{
	int removed = 0;
	for (;;) {
		if (b->nts == 0) break;
		char *used = arena_alloc(a, (size_t)b->nts);
		int *map = arena_alloc(a, (size_t)b->nts * sizeof *map);
		for (int t = 0; t < b->nts; t++)
			for (int i = 0; i < b->ts[t].nin && i < 3; i++)
				if (b->ts[t].in[i].kind == OPD_VAL && b->ts[t].in[i].val >= 0 && b->ts[t].in[i].val < b->nts)
					used[b->ts[t].in[i].val] = 1;
		for (int t = 0; t < b->nts; t++) {
			used[t] |= b->ts[t].bind >= 0 && esc[b->ts[t].bind];
			for (int j = t + 1; j < b->nts && b->ts[t].bind >= 0 && !used[t]; j++)
				used[t] = tasklet_uses_sym(g, &b->ts[j], b->ts[t].bind);
		}
		int n = 0;
		for (int t = 0; t < b->nts; t++) {
			if (!b->ts[t].store && !used[t] && b->ts[t].code != T_ASSERT) {
				map[t] = -1;
				continue;
			}
			map[t] = n;
			b->ts[n++] = b->ts[t];
		}
		if (n == b->nts) break;
		removed += b->nts - n;
		b->nts = n;
		for (int t = 0; t < n; t++)
			for (int i = 0; i < b->ts[t].nin && i < 3; i++)
				if (b->ts[t].in[i].kind == OPD_VAL) b->ts[t].in[i].val = map[b->ts[t].in[i].val];
	}
	return removed;
}

static int is_empty(const Node *n)
{
	switch (n->kind) {
	case N_SEQ:
		return n->nkids == 0;
	case N_BLOCK:
		return !n->lib && n->nts == 0;
	case N_MAP:
	case N_FOR:
		return !n->body || n->body->nkids == 0;
	}
	return 0;
}

/* Tasklet DCE in every block under n, then drop what became empty. */
static void dce_tree(Sdfg *g, Arena *a, Node *n, const char *esc)
{
	if (!n) return;
	switch (n->kind) {
	case N_SEQ:
		for (int i = 0; i < n->nkids; i++) {
			Node *k = n->kids[i];
			if (!k) continue;
			int was_empty = is_empty(k);
			dce_tree(g, a, k, esc);
			/* Remove only what this pass emptied: an empty block that was
			 * built empty may be a placeholder someone fills later. */
			if (!was_empty && is_empty(k)) {
				sdfg_remove(n, i);
				i--;
			}
		}
		return;
	case N_MAP:
	case N_FOR:
		dce_tree(g, a, n->body, esc);
		return;
	case N_BLOCK:
		if (!n->lib) dce_block(g, a, n, esc);
		return;
	}
}

/* ---- 2. top-level children ---------------------------------------------------------- */
typedef struct {
	int *rd, nrd, caprd;   /* roots read */
	int *wr, nwr, capwr;   /* non-local roots written */
	int effect;            /* holds a run-time assertion: always live */
} Acc;

typedef struct {
	Arena *a;
	Acc *acc;
	int *seen_r, *seen_w;  /* stamps: child index + 1 */
	int k;
} Collect;

static void add_read(Sdfg *g, Collect *c, int x)
{
	int r = sdfg_root_of(g, x);
	if (r < 0 || r >= g->ncs || c->seen_r[r] == c->k + 1) return;
	c->seen_r[r] = c->k + 1;
	VEC_PUSH(c->a, c->acc->rd, c->acc->nrd, c->acc->caprd, r);
}

static void add_write(Sdfg *g, Collect *c, int x)
{
	int r = sdfg_root_of(g, x);
	if (r < 0 || r >= g->ncs || g->cs[r].kind == CK_LOCAL || c->seen_w[r] == c->k + 1) return;
	c->seen_w[r] = c->k + 1;
	VEC_PUSH(c->a, c->acc->wr, c->acc->nwr, c->acc->capwr, r);
}

static void collect(Sdfg *g, Node *n, void *ctx)
{
	Collect *c = ctx;
	if (n->kind != N_BLOCK) return;
	if (n->lib) {
		c->acc->effect |= n->lib->op == LIB_ASSERT;
		for (int i = 0; i < n->lib->nin; i++) add_read(g, c, n->lib->in[i]);
		for (int i = 0; i < n->lib->nout; i++) add_write(g, c, n->lib->out[i]);
		return;
	}
	for (int t = 0; t < n->nts; t++) {
		const Tasklet *k = &n->ts[t];
		c->acc->effect |= k->code == T_ASSERT;
		for (int i = 0; i < k->nin && i < 3; i++)
			if (k->in[i].kind == OPD_MEM) add_read(g, c, k->in[i].m.data);
		if (k->store) {
			add_write(g, c, k->out.data);
			if (k->wcr != W_NONE) add_read(g, c, k->out.data);   /* += reads the old value */
		}
	}
}

static void dce_top(Sdfg *g, Arena *a)
{
	Node *root = g->root;
	int K = root->nkids;
	if (K == 0) return;
	Acc *acc = arena_alloc(a, (size_t)K * sizeof *acc);
	Collect col = {a, NULL, arena_alloc(a, (size_t)g->ncs * sizeof(int) + 1),
	               arena_alloc(a, (size_t)g->ncs * sizeof(int) + 1), 0};
	int *readers = arena_alloc(a, (size_t)g->ncs * sizeof *readers + 1);
	for (int k = 0; k < K; k++) {
		col.acc = &acc[k];
		col.k = k;
		sdfg_walk(g, root->kids[k], collect, &col);
		for (int i = 0; i < acc[k].nrd; i++) readers[acc[k].rd[i]]++;
	}
	char *alive = arena_alloc(a, (size_t)K);
	memset(alive, 1, (size_t)K);
	int *mine = arena_alloc(a, (size_t)g->ncs * sizeof *mine + 1);  /* stamp: child reads x */
	int stamp = 0;
	for (int changed = 1; changed;) {
		changed = 0;
		for (int k = K - 1; k >= 0; k--) {
			if (!alive[k]) continue;
			stamp++;
			for (int i = 0; i < acc[k].nrd; i++) mine[acc[k].rd[i]] = stamp;
			int live = acc[k].effect;
			for (int i = 0; i < acc[k].nwr && !live; i++) {
				int x = acc[k].wr[i];
				if (g->cs[x].kind == CK_OUTPUT || g->cs[x].kind == CK_STATE || (g->cs[x].kind == CK_INPUT && g->cs[x].written) ||
				    readers[x] - (mine[x] == stamp) > 0)
					live = 1;
			}
			if (live) continue;
			alive[k] = 0;
			changed = 1;
			for (int i = 0; i < acc[k].nrd; i++) readers[acc[k].rd[i]]--;
		}
	}
	for (int k = K - 1; k >= 0; k--)
		if (!alive[k]) sdfg_remove(root, k);
}

/* ---- 3. containers ------------------------------------------------------------------- */
static void mark_ref(Sdfg *g, Node *n, void *ctx)
{
	char *ref = ctx;
	if (n->kind != N_BLOCK) return;
	if (n->lib) {
		for (int i = 0; i < n->lib->nin; i++)
			if (n->lib->in[i] >= 0 && n->lib->in[i] < g->ncs) ref[n->lib->in[i]] = 1;
		for (int i = 0; i < n->lib->nout; i++)
			if (n->lib->out[i] >= 0 && n->lib->out[i] < g->ncs) ref[n->lib->out[i]] = 1;
		return;
	}
	for (int t = 0; t < n->nts; t++) {
		const Tasklet *k = &n->ts[t];
		for (int i = 0; i < k->nin && i < 3; i++)
			if (k->in[i].kind == OPD_MEM && k->in[i].m.data >= 0 && k->in[i].m.data < g->ncs)
				ref[k->in[i].m.data] = 1;
		if (k->store && k->out.data >= 0 && k->out.data < g->ncs) ref[k->out.data] = 1;
	}
}

static void dce_containers(Sdfg *g, Arena *a)
{
	char *ref = arena_alloc(a, (size_t)g->ncs + 1);
	sdfg_walk(g, g->root, mark_ref, ref);
	for (int i = 0; i < g->ncs; i++)
		if (ref[i] && g->cs[i].kind == CK_VIEW && g->cs[i].base >= 0) ref[sdfg_root_of(g, i)] = 1;
	for (int i = 0; i < g->ncs; i++) /* a state lives, and so does its initial value */
		if (g->cs[i].kind == CK_STATE && !g->cs[i].dead && g->cs[i].init >= 0 && g->cs[i].init < g->ncs)
			ref[i] = ref[g->cs[i].init] = 1;
	for (int i = 0; i < g->ncs; i++) {
		Container *c = &g->cs[i];
		if (!ref[i] && c->kind != CK_INPUT && c->kind != CK_OUTPUT) c->dead = 1;
	}
}

int pass_dce(PassCtx *c)
{
	Sdfg *g = c->g;
	Arena *a = c->scratch ? c->scratch : g->arena;
	char *esc = arena_alloc(a, (size_t)g->nsyms + 1);
	sdfg_value_escapes(g, esc);
	dce_tree(g, a, g->root, esc);
	dce_top(g, a);
	dce_containers(g, a);
	return 0;
}
