/*
 * consts.c - constants' bytes, made when they are needed.
 *
 * A model's weights are most of what doccc reads, and a compiler that
 * held them all (and their repacked copies, and the blob that gathers
 * them) would need several times the model's size in memory. Instead a
 * constant may carry a source (ir.h, ConstSrc): import gives each weight
 * one that reads it from the input, and the expansions that repack weights
 * (packed panels, folded batch norm) give theirs one that reads the
 * constant they start from. Nothing reads a large constant before the
 * weights file is written; the writer then asks for each live constant in
 * turn and lets it go, so at any time doccc holds one weight and what it is
 * made from, plus at most CONST_BUDGET of recently used bytes (a weight
 * used by two packings is then not read twice).
 *
 * Bytes made from a source are malloc'd, 64-byte aligned, and belong to
 * this file: sdfg_const_put makes them eligible for freeing; they are
 * freed, oldest put first, when a new constant would take the held bytes
 * past CONST_BUDGET, unless they are at most CONST_KEEP bytes (shape
 * tables, biases: kept once made). Whatever is held when the graph's arena
 * is freed goes with it.
 */
#include <stdlib.h>
#include <string.h>

#include "ir.h"

static int64_t const_bytes(Sdfg *g, int id)
{
	return sdfg_numel(g, id) * dtype_info[sdfg_c(g, id)->dt].size;
}

/* Drop the bytes of constant id, made from its source. */
static void drop(Sdfg *g, int id)
{
	Container *c = &g->cs[id];
	free((void *)c->data);
	c->data = NULL;
	g->const_held -= const_bytes(g, id);
}

static void free_all(void *ctx)
{
	Sdfg *g = ctx;
	for (int i = 0; i < g->ncs; i++)
		if (g->cs[i].kind == CK_CONST && g->cs[i].src && g->cs[i].data)
			drop(g, i);
}

void sdfg_const_source(Sdfg *g, int id, int (*make)(Sdfg *g, const ConstSrc *s, void *dst), const void *ctx)
{
	Container *c = sdfg_c(g, id);
	DOCC_ASSERT(c->kind == CK_CONST && !c->data && !c->src);
	ConstSrc *s = arena_alloc(g->arena, sizeof *s);
	s->make = make;
	s->ctx = ctx;
	c->src = s;
	if (!g->const_freer) {
		arena_defer(g->arena, free_all, g);
		g->const_freer = 1;
	}
}

int sdfg_const_new(Sdfg *g, const char *name, Dtype dt, int rank, const int64_t *shape,
                   int (*make)(Sdfg *g, const ConstSrc *s, void *dst), const void *ctx, size_t ctxsize)
{
	int id = sdfg_add_container(g, name, dt, CK_CONST, rank, shape);
	void *copy = arena_alloc(g->arena, ctxsize);
	memcpy(copy, ctx, ctxsize);
	sdfg_c(g, id)->origin = "";
	sdfg_const_source(g, id, make, copy);
	return id;
}

int sdfg_const_known(Sdfg *g, int id)
{
	Container *c = sdfg_c(g, id);
	return c->kind == CK_CONST && (c->data || c->src);
}

/* Free unpinned large bytes, oldest put first, until need more fit. */
static void make_room(Sdfg *g, int64_t need)
{
	while (g->const_held + need > CONST_BUDGET) {
		int old = -1;
		for (int i = 0; i < g->ncs; i++) {
			Container *c = &g->cs[i];
			if (c->kind == CK_CONST && c->src && c->data && !c->pins && const_bytes(g, i) > CONST_KEEP &&
			    (old < 0 || c->used < g->cs[old].used))
				old = i;
		}
		if (old < 0)
			return;
		drop(g, old);
	}
}

const void *sdfg_const_get(Sdfg *g, int id)
{
	Container *c = sdfg_c(g, id);
	if (c->kind != CK_CONST)
		return NULL;
	if (!c->data && c->src) {
		int64_t n = const_bytes(g, id);
		make_room(g, n);
		void *d = NULL;
		if (posix_memalign(&d, 64, (size_t)(n ? n : 1)) != 0) {
			diag_error(g->src, "out of memory making the constant '%s' (%lld bytes)", c->name, (long long)n);
			return NULL;
		}
		/* make may get other constants, which may move g->cs */
		if (c->src->make(g, c->src, d)) {
			free(d);
			return NULL;
		}
		c = sdfg_c(g, id);
		c->data = d;
		g->const_held += n;
		if (g->const_held > g->const_peak)
			g->const_peak = g->const_held;
	}
	if (c->data)
		c->pins++;
	return c->data;
}

void sdfg_const_put(Sdfg *g, int id)
{
	Container *c = sdfg_c(g, id);
	if (!c->data || !c->pins)
		return;
	c->pins--;
	c->used = ++g->const_clock;
}

int64_t sdfg_const_held(const Sdfg *g, int64_t *peak)
{
	if (peak)
		*peak = g->const_peak;
	return g->const_held;
}

double sdfg_elem(Dtype dt, const void *bytes, int64_t e)
{
	const char *p = (const char *)bytes + e * dtype_info[dt].size;
	switch (dt) {
	case DT_F32: { float f; memcpy(&f, p, 4); return f; }
	case DT_F64: { double f; memcpy(&f, p, 8); return f; }
	case DT_I64: { int64_t i; memcpy(&i, p, 8); return (double)i; }
	case DT_I32: { int32_t i; memcpy(&i, p, 4); return i; }
	case DT_I16: { int16_t i; memcpy(&i, p, 2); return i; }
	case DT_I8: return (int8_t)*p;
	case DT_U8: case DT_BOOL: return (unsigned char)*p;
	default: return 0;
	}
}

int64_t sdfg_dequant_at(Sdfg *g, const Dequant *d, int part, int r, const int64_t *oi)
{
	int c = part == 0 ? d->q : part == 1 ? d->s : d->z;
	if (c < 0)
		return -1;
	Container *k = sdfg_c(g, c);
	int64_t e = 0, v;
	if (k->offset && ex_isint(k->offset, &v))
		e = v;
	for (int i = 0; i < k->rank; i++) {
		int od = i + r - k->rank;
		if (od < 0)
			continue;   /* not broadcastable: the importer never makes it */
		int64_t n = 1, st = 0, ix;
		ex_isint(k->shape[i], &n);
		ex_isint(k->stride[i], &st);
		if (part && d->quant)
			ix = d->blk[od] == 0 ? 0 : d->blk[od] == 1 ? oi[od] : oi[od] / d->blk[od];
		else
			ix = n == 1 ? 0 : oi[od];
		e += ix * st;
	}
	return e;
}
