/*
 * map_fusion.c - fuse elementwise consumers into the loop nest of their
 * producer.
 *
 * A consumer is a top-level child that is a perfect nest of maps over the
 * whole of its output U (one block, one store, U indexed by the map
 * variables in order). If it reads a transient T only at the same, identity
 * indices, T has no other reader and is no output, then its work can move
 * into the producer P of T: at every tasklet of P that stores T[idx], the
 * consumer's tasklets are appended with each map variable replaced by the
 * corresponding idx expression, the read of T replaced by the stored value,
 * and the store redirected to U[idx]. The store to T goes, and with it T
 * (dce_late removes the container). Chains fold one after the other, so
 * conv -> bias -> relu -> add(residual) ends as one loop nest whose
 * epilogue writes the block's output.
 *
 * Legality (the IR invariant makes it cheap): T and U are written by one
 * top-level child each and every element once, so moving the consumer's
 * work to P's position is correct when every other container the consumer
 * reads is already complete there, i.e. written by a child before P (or an
 * input or constant). U is produced only by the consumer, so nothing between
 * P and the consumer can observe it.
 */
#include <string.h>

#include "../ir.h"

typedef struct {
	Node *block;       /* the consumer's block */
	int vars[MAXDIM];  /* its map variables, outermost first */
	int depth;
	int store;         /* index of the storing tasklet */
} Consumer;

static int as_consumer(Sdfg *g, Node *n, Consumer *c)
{
	c->depth = 0;
	/* Top-level children are sequences wrapping the nest. */
	while (n->kind == N_SEQ && n->nkids == 1)
		n = n->kids[0];
	while (n->kind == N_MAP) {
		if (c->depth == MAXDIM || n->step != 1 || n->body->nkids != 1)
			return 0;
		int64_t lo;
		if (!ex_isint(n->lo, &lo) || lo != 0)
			return 0;
		c->vars[c->depth++] = n->var;
		n = n->body->kids[0];
	}
	if (n->kind != N_BLOCK || n->lib)
		return 0;
	c->block = n;
	c->store = -1;
	for (int i = 0; i < n->nts; i++) {
		if (!n->ts[i].store)
			continue;
		if (c->store >= 0 || n->ts[i].wcr != W_NONE)
			return 0;
		c->store = i;
	}
	if (c->store < 0)
		return 0;
	Memlet *m = &n->ts[c->store].out;
	Container *u = sdfg_c(g, m->data);
	if (u->rank != c->depth || u->kind == CK_VIEW || u->kind == CK_STATE)
		return 0; /* a state's write stays where it is: its readers before it read the old value */
	for (int d = 0; d < c->depth; d++)
		if (m->idx[d]->k != E_SYM || m->idx[d]->v != c->vars[d])
			return 0;
	return 1;
}

static int identity_read(const Operand *o, const Consumer *c)
{
	for (int d = 0; d < c->depth; d++)
		if (o->m.idx[d]->k != E_SYM || o->m.idx[d]->v != c->vars[d])
			return 0;
	return !o->guard;
}

static int writer(Sdfg *g, int cont)
{
	for (int i = 0; i < g->root->nkids; i++)
		if (node_writes(g, g->root->kids[i], cont))
			return i;
	return -1;
}

/* Collect the tasklets of subtree n that store to container t. */
typedef struct {
	Node **blocks;
	int *ts;
	int n, cap;
	int bad;
} Stores;

static void find_stores(Sdfg *g, Node *n, int t, Stores *s)
{
	switch (n->kind) {
	case N_SEQ:
		for (int i = 0; i < n->nkids; i++)
			find_stores(g, n->kids[i], t, s);
		break;
	case N_MAP:
	case N_FOR:
		find_stores(g, n->body, t, s);
		break;
	case N_BLOCK:
		if (n->lib) {
			s->bad = 1;
			break;
		}
		for (int i = 0; i < n->nts; i++) {
			Tasklet *k = &n->ts[i];
			for (int j = 0; j < k->nin; j++)
				if (k->in[j].kind == OPD_MEM && sdfg_root_of(g, k->in[j].m.data) == t)
					s->bad = 1; /* the producer reads T itself */
			if (!k->store || k->out.data != t)
				continue;
			int vix = 0;
			for (int d = 0; d < sdfg_c(g, t)->rank; d++)
				vix |= ex_uses_kind(g, k->out.idx[d], SYM_VALUE);
			if (k->wcr != W_NONE || vix) {
				s->bad = 1;
				continue;
			}
			if (s->n == s->cap) {
				int cap = s->cap;
				arena_grow(g->arena, (void **)&s->blocks, &cap, s->n + 1, sizeof *s->blocks);
				arena_grow(g->arena, (void **)&s->ts, &s->cap, s->n + 1, sizeof *s->ts);
			}
			s->blocks[s->n] = n;
			s->ts[s->n++] = i;
		}
		break;
	}
}

/* Value symbols renamed at one store site: old[i] -> new[i]. */
typedef struct {
	int *old, *new;
	int n;
} Renames;

static Expr *subst_all(Sdfg *g, Expr *e, const Consumer *c, Expr *const *idx, const Renames *r)
{
	for (int d = 0; d < c->depth; d++)
		e = ex_subst(g, e, c->vars[d], idx[d]);
	for (int i = 0; i < r->n; i++)
		e = ex_subst(g, e, r->old[i], ex_sym(g, r->new[i]));
	return e;
}

/* Append the consumer's tasklets after tasklet s of block b; fresh: bind
 * new value symbols instead of the consumer's own. */
static void inline_consumer(Sdfg *g, Node *b, int s, const Consumer *c, int t, int fresh)
{
	Tasklet prod = b->ts[s];
	Expr *idx[MAXDIM];
	for (int d = 0; d < c->depth; d++)
		idx[d] = prod.out.idx[d];
	int val = s;
	Dtype tdt = sdfg_c(g, t)->dt;
	if (prod.dt != tdt) {
		Operand cv[1] = {opd_val(s)};
		val = sdfg_tasklet(g, b, T_CAST, tdt, 1, cv);
	}
	b->ts[s].store = 0;
	Node *cb = c->block;
	int base = b->nts;
	Renames rn = {arena_alloc(g->arena, sizeof(int) * (size_t)cb->nts + 1),
	              arena_alloc(g->arena, sizeof(int) * (size_t)cb->nts + 1), 0};
	for (int i = 0; i < cb->nts; i++) {
		Tasklet k = cb->ts[i];
		for (int j = 0; j < k.nin; j++) {
			Operand *o = &k.in[j];
			if (o->kind == OPD_VAL)
				o->val += base;
			else if (o->kind == OPD_MEM && o->m.data == t)
				*o = opd_val(val);
			else if (o->kind == OPD_MEM) {
				Container *ct = sdfg_c(g, o->m.data);
				Memlet m = o->m;
				for (int d = 0; d < ct->rank; d++)
					m.idx[d] = subst_all(g, m.idx[d], c, idx, &rn);
				o->m = m;
			} else if (o->kind == OPD_EXPR)
				o->e = subst_all(g, o->e, c, idx, &rn);
		}
		int ni = sdfg_tasklet(g, b, k.code, k.dt, k.nin, k.in);
		b->ts[ni].p[0] = k.p[0];
		b->ts[ni].p[1] = k.p[1];
		if (k.bind >= 0 && fresh) {
			Symbol *os = &g->syms[k.bind];
			rn.old[rn.n] = k.bind;
			rn.new[rn.n++] = sdfg_bind(g, b, ni, os->name, os->lo, os->hi);
		} else
			b->ts[ni].bind = k.bind;
		if (k.store) {
			Memlet m = k.out;
			for (int d = 0; d < c->depth; d++)
				m.idx[d] = idx[d];
			sdfg_store(b, ni, m, W_NONE);
		}
	}
}

static int try_fuse(Sdfg *g, int ci)
{
	Consumer c;
	if (!as_consumer(g, g->root->kids[ci], &c))
		return 0;
	Node *cb = c.block;
	for (int i = 0; i < cb->nts; i++) {
		Tasklet *k = &cb->ts[i];
		for (int j = 0; j < k->nin; j++) {
			if (k->in[j].kind != OPD_MEM)
				continue;
			int t = k->in[j].m.data;
			Container *tc = sdfg_c(g, t);
			if (tc->kind != CK_TRANSIENT || tc->rank != c.depth || !identity_read(&k->in[j], &c))
				continue;
			int pi = writer(g, t);
			if (pi < 0 || pi >= ci)
				continue;
			/* T read only here, only at identity indices, not an output. */
			int nreaders = 0;
			for (int r = 0; r < g->root->nkids; r++)
				nreaders += node_reads(g, g->root->kids[r], t);
			if (nreaders != 1)
				continue;
			int ok = 1;
			for (int o = 0; o < g->noutputs && ok; o++)
				ok = sdfg_root_of(g, g->outputs[o]) != t;
			for (int a = 0; a < cb->nts && ok; a++)
				for (int b2 = 0; b2 < cb->ts[a].nin && ok; b2++) {
					Operand *o = &cb->ts[a].in[b2];
					if (o->kind != OPD_MEM)
						continue;
					int rc = sdfg_root_of(g, o->m.data);
					if (rc == t)
						ok = o->m.data == t && identity_read(o, &c);
					else {
						int w = writer(g, rc);
						ok = w < pi; /* complete before the producer runs */
					}
				}
			/* map extents must cover T exactly */
			Node *n = g->root->kids[ci];
			while (n->kind == N_SEQ)
				n = n->kids[0];
			for (int d = 0; d < c.depth && ok; d++, n = n->body->kids[0])
				ok = ex_eq(n->hi, tc->shape[d]);
			if (!ok)
				continue;
			Stores st = {0};
			find_stores(g, g->root->kids[pi], t, &st);
			if (st.bad || st.n == 0)
				continue;
			for (int s = 0; s < st.n; s++)
				inline_consumer(g, st.blocks[s], st.ts[s], &c, t, s > 0);
			Node *pn = g->root->kids[pi];
			pn->label = arena_printf(g->arena, "%s+%s", pn->label, g->root->kids[ci]->label);
			sdfg_remove(g->root, ci);
			return 1;
		}
	}
	return 0;
}

/* A view with its base's layout (same dtype, shape and strides, offset 0:
 * dropout and clone in eval mode, a view to the same shape) reads what the
 * base holds at the same indices: reads through it become reads of the
 * base, so that the base's producer sees its consumer (linear -> dropout ->
 * add fuses like linear -> add). to[c] is the container to read for c. */
static int *identity_views(Sdfg *g)
{
	int *to = arena_alloc(g->arena, sizeof(int) * (size_t)(g->ncs + 1)), any = 0;
	for (int c = 0; c < g->ncs; c++) {
		Container *v = &g->cs[c], *b = v->kind == CK_VIEW && !v->dead ? &g->cs[v->base] : NULL;
		int64_t off;
		int same = b && b->dt == v->dt && b->rank == v->rank && ex_isint(v->offset, &off) && off == 0;
		for (int d = 0; same && d < v->rank; d++)
			same = ex_eq(v->shape[d], b->shape[d]) && ex_eq(v->stride[d], b->stride[d]);
		to[c] = same ? v->base : c;
		any |= same;
	}
	return any ? to : NULL;
}

static void read_bases(Node *n, const int *to)
{
	if (n->kind == N_SEQ)
		for (int i = 0; i < n->nkids; i++)
			read_bases(n->kids[i], to);
	else if (n->kind != N_BLOCK)
		read_bases(n->body, to);
	else
		for (int i = 0; i < n->nts; i++)
			for (int j = 0; j < n->ts[i].nin; j++)
				if (n->ts[i].in[j].kind == OPD_MEM)
					n->ts[i].in[j].m.data = to[n->ts[i].in[j].m.data];
}

int pass_map_fusion(PassCtx *c)
{
	Sdfg *g = c->g;
	const int *to = identity_views(g);
	if (to)
		read_bases(g->root, to);
	for (int i = 0; i < g->root->nkids; i++)
		if (try_fuse(g, i))
			i--;
	return 0;
}
