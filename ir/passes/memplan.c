/*
 * memplan.c - the memory plan: every live transient gets a byte offset
 * (aofs) in one arena, and g->arena_size is the arena's size.
 *
 * Lifetimes come from the top-level sequence: a child's position is its
 * index in g->root, and a transient is live over the closed interval from
 * the first to the last top-level child that touches it, reading or
 * writing, directly or through any view of it. After expansion that is
 * [its one writer, its last reader] (ir.h's invariant); taking every access
 * into account keeps the plan safe on graphs that break the invariant too.
 * A transient nobody touches has an empty lifetime and conflicts with
 * nothing.
 *
 * Placement is greedy: transients sorted by size (descending, ties by id),
 * each at the lowest 64-byte-aligned offset where it overlaps no already
 * placed transient whose lifetime intersects its own. Offsets and the
 * arena size are multiples of 64, so every transient is 64-byte aligned if
 * the arena is. Transients need constant sizes; a symbolic one is an error
 * naming the container (all are reported before the pass fails).
 */
#include <stdlib.h>
#include <string.h>

#include "../ir.h"

/* Registered in ir/passes.c. */
int pass_memplan(PassCtx *c);

#define ALIGN 64

typedef struct {
	int id;
	int64_t size;        /* bytes */
	int first, last;     /* lifetime in top-level positions; first > last: empty */
	int64_t off;
} Item;

typedef struct {
	int *first, *last;   /* by container root */
	int k;
} Life;

static void touch(Sdfg *g, Life *L, int x)
{
	int r = sdfg_root_of(g, x);
	if (r < 0 || r >= g->ncs) return;
	if (L->first[r] < 0) L->first[r] = L->k;
	L->last[r] = L->k;
}

static void lifetimes(Sdfg *g, Node *n, void *ctx)
{
	Life *L = ctx;
	if (n->kind != N_BLOCK) return;
	if (n->lib) {
		for (int i = 0; i < n->lib->nin; i++) touch(g, L, n->lib->in[i]);
		for (int i = 0; i < n->lib->nout; i++) touch(g, L, n->lib->out[i]);
		return;
	}
	for (int t = 0; t < n->nts; t++) {
		for (int i = 0; i < n->ts[t].nin && i < 3; i++)
			if (n->ts[t].in[i].kind == OPD_MEM) touch(g, L, n->ts[t].in[i].m.data);
		if (n->ts[t].store) touch(g, L, n->ts[t].out.data);
	}
}

static int by_size(const void *x, const void *y)
{
	const Item *a = x, *b = y;
	if (a->size != b->size) return a->size > b->size ? -1 : 1;
	return (a->id > b->id) - (a->id < b->id);
}

static int by_off(const void *x, const void *y)
{
	const Item *a = *(Item *const *)x, *b = *(Item *const *)y;
	if (a->off != b->off) return a->off < b->off ? -1 : 1;
	return (a->id > b->id) - (a->id < b->id);
}

static int64_t align_up(int64_t x) { return (x + ALIGN - 1) / ALIGN * ALIGN; }

static int overlap_in_time(const Item *a, const Item *b)
{
	if (a->first > a->last || b->first > b->last) return 0;
	return a->first <= b->last && b->first <= a->last;
}

int pass_memplan(PassCtx *c)
{
	Sdfg *g = c->g;
	Arena *a = c->scratch ? c->scratch : g->arena;
	const char *loc = g->src && *g->src ? g->src : arena_printf(a, "sdfg '%s'", g->name);

	Life L = {arena_alloc(a, (size_t)g->ncs * sizeof(int) + 1), arena_alloc(a, (size_t)g->ncs * sizeof(int) + 1), 0};
	for (int i = 0; i < g->ncs; i++) L.first[i] = L.last[i] = -1;
	for (int k = 0; k < g->root->nkids; k++) {
		L.k = k;
		sdfg_walk(g, g->root->kids[k], lifetimes, &L);
	}

	Item *it = arena_alloc(a, (size_t)g->ncs * sizeof *it + 1);
	int n = 0, errors = 0;
	for (int i = 0; i < g->ncs; i++) {
		const Container *ct = &g->cs[i];
		if (ct->kind != CK_TRANSIENT || ct->dead) continue;
		int64_t numel = sdfg_numel(g, i), esz = dtype_info[ct->dt].size;
		if (numel < 0) {
			Buf t = {0};
			for (int d = 0; d < ct->rank; d++) {
				buf_puts(&t, d ? ", " : "");
				ex_print(&t, g, ct->shape[d]);
			}
			diag_error(loc, "transient '%s' (from '%s') has symbolic shape [%s]; the memory plan needs constant sizes",
			           ct->name, ct->origin ? ct->origin : "", t.s ? t.s : "");
			buf_free(&t);
			errors++;
			continue;
		}
		int64_t bytes;
		if (ck_mul(numel, esz, &bytes) || bytes > INT64_MAX - ALIGN) {
			diag_error(loc, "transient '%s' (from '%s') is too large (%lld elements)", ct->name,
			           ct->origin ? ct->origin : "", (long long)numel);
			errors++;
			continue;
		}
		it[n].id = i;
		it[n].size = bytes;
		it[n].first = L.first[i];
		it[n].last = L.last[i];
		if (it[n].first < 0) it[n].first = 1, it[n].last = 0;   /* never touched: empty */
		it[n].off = 0;
		n++;
	}
	if (errors) return -1;

	qsort(it, (size_t)n, sizeof *it, by_size);
	Item **conf = arena_alloc(a, (size_t)n * sizeof *conf + 1);
	int64_t total = 0;
	for (int i = 0; i < n; i++) {
		/* The already placed items alive at the same time, by offset. */
		int m = 0;
		for (int j = 0; j < i; j++)
			if (overlap_in_time(&it[i], &it[j]) && it[j].size > 0) conf[m++] = &it[j];
		qsort(conf, (size_t)m, sizeof *conf, by_off);
		int64_t off = 0;
		if (it[i].size > 0)
			for (int j = 0; j < m; j++) {
				if (conf[j]->off >= off + it[i].size) break;   /* fits in the gap before it */
				off = MAX(off, align_up(conf[j]->off + conf[j]->size));
			}
		it[i].off = off;
		int64_t end;
		if (ck_add(off, it[i].size, &end) || end > INT64_MAX - ALIGN) {
			diag_error(loc, "the transients are too large for one workspace (more than %lld bytes)", (long long)INT64_MAX);
			return -1;
		}
		total = MAX(total, align_up(end));
	}
	for (int i = 0; i < n; i++) g->cs[it[i].id].aofs = it[i].off;
	g->arena_size = total;
	return 0;
}
