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
 * the arena is.
 *
 * Transients whose sizes depend on run-time dims (g->ndims) go above the
 * fixed ones, into slots (g->ws) whose offsets the library computes when
 * the dims are set: a slot starts at the largest end of the slots below it
 * that are live at the same time (or at the fixed part's end), so no two
 * live transients overlap at any dims. The order of the slots is the
 * greedy plan's at reference sizes (each dim at its largest value, at most
 * 64 for one without a finite bound), so at sizes like those the plan
 * shares memory as the fixed one does. A symbolic size without run-time
 * dims (an internal error) is reported naming the container.
 *
 * State (CK_STATE) lives in the instance, apart from the arena: each gets
 * its offset in the state area (sofs) in order, and g->state_size its size.
 */
#include <stdlib.h>
#include <string.h>

#include "../ir.h"

/* Registered in ir/passes.c. */
int pass_memplan(PassCtx *c);

#define ALIGN 64

/* The state area: every state at the next 64-byte boundary, in the API's
 * order (their sizes are fixed: the verifier checks it, and import sizes
 * each at most DOCC_MAX_TENSOR_BYTES, so the sum fits). */
static void plan_states(Sdfg *g)
{
	int64_t at = 0;
	for (int i = 0; i < g->nstates; i++) {
		Container *c = sdfg_c(g, g->states[i]);
		int64_t bytes = sdfg_numel(g, g->states[i]) * dtype_info[c->dt].size;
		c->sofs = at;
		at += (bytes + ALIGN - 1) / ALIGN * ALIGN;
	}
	g->state_size = at;
}

typedef struct {
	int id;
	int64_t size;        /* bytes (the reference size for a run-time one) */
	int first, last;     /* lifetime in top-level positions; first > last: empty */
	int64_t off;
	Expr *xsize;         /* bytes with run-time dims, 64-aligned; NULL if fixed */
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

/* Greedy placement of it[0..n) (sorted by size); the end of the highest. */
static int place(Item *it, int n, Item **conf, int64_t *total, const char *loc)
{
	*total = 0;
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
		*total = MAX(*total, align_up(end));
	}
	return 0;
}

/* The size of a run-time dim in the reference plan. */
static int64_t ref_value(const Symbol *y)
{
	return y->hi < (1 << 20) ? y->hi : MAX(y->lo, 64);
}

/* The slots of the run-time transients dy[0..n) (see above). */
static int plan_slots(Sdfg *g, Arena *a, Item *dy, int n, const char *loc)
{
	int64_t *vals = arena_alloc(a, sizeof(int64_t) * (size_t)(g->nsyms + 1));
	int *bound = arena_alloc(a, sizeof(int) * (size_t)(g->nsyms + 1));
	for (int k = 0; k < g->ndims; k++)
		vals[g->dims[k]] = ref_value(&g->syms[g->dims[k]]), bound[g->dims[k]] = 1;
	for (int i = 0; i < n; i++) {
		int64_t v;
		if (ex_eval(g, dy[i].xsize, vals, bound, &v) || v < 0) v = 0;
		dy[i].size = MIN(v, INT64_MAX / 4 / (n + 1));
	}
	qsort(dy, (size_t)n, sizeof *dy, by_size);
	Item **conf = arena_alloc(a, (size_t)n * sizeof *conf + 1);
	int64_t total;
	if (place(dy, n, conf, &total, loc)) return -1;
	for (int i = 0; i < n; i++) conf[i] = &dy[i];
	qsort(conf, (size_t)n, sizeof *conf, by_off);
	g->ws = arena_alloc(g->arena, sizeof(WsSlot) * (size_t)(n + 1));
	g->nws = n;
	for (int i = 0; i < n; i++) {
		WsSlot *w = &g->ws[i];
		w->id = conf[i]->id;
		w->size = conf[i]->xsize;
		w->below = arena_alloc(g->arena, sizeof(int) * (size_t)(i + 1));
		for (int j = 0; j < i; j++)
			if (overlap_in_time(conf[i], conf[j])) w->below[w->nbelow++] = j;
		g->cs[w->id].aofs = -2;
		g->cs[w->id].aslot = i;
	}
	return 0;
}

int pass_memplan(PassCtx *c)
{
	Sdfg *g = c->g;
	Arena *a = c->scratch ? c->scratch : g->arena;
	const char *loc = g->src && *g->src ? g->src : arena_printf(a, "sdfg '%s'", g->name);

	plan_states(g);
	Life L = {arena_alloc(a, (size_t)g->ncs * sizeof(int) + 1), arena_alloc(a, (size_t)g->ncs * sizeof(int) + 1), 0};
	for (int i = 0; i < g->ncs; i++) L.first[i] = L.last[i] = -1;
	for (int k = 0; k < g->root->nkids; k++) {
		L.k = k;
		sdfg_walk(g, g->root->kids[k], lifetimes, &L);
	}

	Item *it = arena_alloc(a, (size_t)g->ncs * sizeof *it + 1);
	Item *dy = arena_alloc(a, (size_t)g->ncs * sizeof *dy + 1);
	int n = 0, ndy = 0, errors = 0;
	for (int i = 0; i < g->ncs; i++) {
		const Container *ct = &g->cs[i];
		if (ct->kind != CK_TRANSIENT || ct->dead) continue;
		int64_t numel = sdfg_numel(g, i), esz = dtype_info[ct->dt].size;
		if (numel < 0 && g->ndims) {
			Expr *b = ex_muli(g, sdfg_numel_x(g, i), esz);
			Item d = {i, 0, L.first[i], L.last[i], 0, ex_muli(g, ex_div(g, ex_addi(g, b, ALIGN - 1), ex_int(g, ALIGN)), ALIGN)};
			if (d.first < 0) d.first = 1, d.last = 0;
			dy[ndy++] = d;
			continue;
		}
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
		it[n].xsize = NULL;
		n++;
	}
	if (errors) return -1;

	qsort(it, (size_t)n, sizeof *it, by_size);
	Item **conf = arena_alloc(a, (size_t)n * sizeof *conf + 1);
	int64_t total = 0;
	if (place(it, n, conf, &total, loc)) return -1;
	for (int i = 0; i < n; i++) g->cs[it[i].id].aofs = it[i].off;
	g->arena_size = total;
	g->nws = 0;
	return ndy ? plan_slots(g, a, dy, ndy, loc) : 0;
}

/* The workspace's bytes at the run-time dims vals[k] (g->dims order), as
 * the library's plan computes them; -1 if a size cannot be evaluated or
 * passes 2^50 bytes (the library refuses such dims). */
int64_t memplan_bytes_at(Sdfg *g, const int64_t *vals)
{
	int64_t *sv = calloc((size_t)g->nsyms + 1, sizeof *sv), *ofs = calloc((size_t)g->nws + 1, sizeof *ofs);
	int *bound = calloc((size_t)g->nsyms + 1, sizeof *bound);
	int64_t total = g->arena_size;
	for (int k = 0; k < g->ndims && sv && bound; k++)
		sv[g->dims[k]] = vals[k], bound[g->dims[k]] = 1;
	for (int i = 0; i < g->nws && total >= 0 && ofs; i++) {
		int64_t z, o = g->arena_size;
		if (ex_eval(g, g->ws[i].size, sv, bound, &z) || z < 0 || z > ((int64_t)1 << 50)) {
			total = -1;
			break;
		}
		for (int j = 0; j < g->ws[i].nbelow; j++) {
			const WsSlot *w = &g->ws[g->ws[i].below[j]];
			int64_t wz = 0;
			ex_eval(g, w->size, sv, bound, &wz);
			o = MAX(o, ofs[g->ws[i].below[j]] + wz);
		}
		ofs[i] = o;
		total = MAX(total, o + z);
	}
	if (!sv || !bound || !ofs)
		total = -1;
	free(sv);
	free(bound);
	free(ofs);
	return total;
}

/* The workspace at the largest dims (-1: a dim has no bound, or a size
 * cannot be had there), and what create() allocates: that, when it is at
 * most MEMPLAN_PREALLOC and the largest dims pass the export's guards, else
 * the fixed part (arena_size), grown by the first set_dims. */
int64_t memplan_max_bytes(Sdfg *g, int64_t *at_create)
{
	int64_t *vals = arena_alloc(g->arena, sizeof(int64_t) * (size_t)(g->ndims + 1));
	int64_t *sv = arena_alloc(g->arena, sizeof(int64_t) * (size_t)(g->nsyms + 1));
	int *bound = arena_alloc(g->arena, sizeof(int) * (size_t)(g->nsyms + 1));
	int64_t mx = g->ndims ? 0 : g->arena_size;
	*at_create = g->arena_size;
	for (int k = 0; k < g->ndims; k++) {
		const Symbol *y = &g->syms[g->dims[k]];
		if (y->hi >= INT32_MAX)
			return -1;
		vals[k] = sv[g->dims[k]] = y->hi, bound[g->dims[k]] = 1;
	}
	if (g->ndims)
		mx = memplan_bytes_at(g, vals);
	int ok = mx >= 0 && mx <= MEMPLAN_PREALLOC;
	for (int i = 0; i < g->nguards && ok; i++) {
		int64_t a, b;
		const Guard *gd = &g->guards[i];
		ok = !ex_eval(g, gd->a, sv, bound, &a) && !ex_eval(g, gd->b, sv, bound, &b) &&
		     (gd->op == G_EQ ? a == b : gd->op == G_NE ? a != b : gd->op == G_LT ? a < b : a <= b);
	}
	if (ok)
		*at_create = mx;
	return mx;
}
