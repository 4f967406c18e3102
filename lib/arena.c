/*
 * arena.c - a chunked bump allocator: one arena per compilation, no
 * individual frees.
 *
 * An arena is a list of chunks obtained from calloc. Allocation bumps a
 * pointer in the head chunk; when the head is full a new 1 MiB chunk becomes
 * the head. A request too big for a normal chunk gets a chunk of its own,
 * linked in behind the head so the space left in the head is not wasted.
 *
 * Invariants: chunk memory comes from calloc and is never handed out twice,
 * so every allocation is zeroed; every result is aligned to at least 16
 * bytes (ARENA_ALIGN); arena_free releases all chunks at once. Out of memory
 * and size overflow abort with a message: nothing sensible can be recovered.
 */
#include <stdlib.h>
#include <string.h>

#include "lib.h"

enum {
	ARENA_ALIGN = 16,
	ARENA_CHUNK = 1 << 20, /* bytes of payload in a normal chunk */
};

typedef struct Chunk {
	struct Chunk *next;
	size_t cap;  /* payload bytes */
	size_t used; /* payload bytes handed out (including alignment padding) */
	/* The payload follows the header at the next ARENA_ALIGN boundary. */
} Chunk;

typedef struct Defer {
	struct Defer *next;
	void (*fn)(void *ctx);
	void *ctx;
} Defer;

struct Arena {
	Chunk *head;  /* the chunk being bumped; big chunks sit behind it */
	Defer *defer; /* arena_defer's, the last first */
};

/* Header size rounded up so the payload starts 16-byte aligned (calloc's
 * own result is aligned to at least 16 on the platforms we build for). */
#define CHUNK_HDR ((sizeof(Chunk) + ARENA_ALIGN - 1) / ARENA_ALIGN * ARENA_ALIGN)

static NORETURN void arena_oom(size_t n)
{
	fflush(stdout);
	fprintf(stderr, "doccc: fatal error: out of memory (allocating %zu bytes)\n", n);
	abort();
}

static char *chunk_base(Chunk *c)
{
	return (char *)c + CHUNK_HDR;
}

static Chunk *chunk_new(size_t cap)
{
	if (cap > SIZE_MAX - CHUNK_HDR)
		arena_oom(cap);
	Chunk *c = calloc(1, CHUNK_HDR + cap);
	if (!c)
		arena_oom(CHUNK_HDR + cap);
	c->cap = cap;
	return c;
}

Arena *arena_new(void)
{
	Arena *a = calloc(1, sizeof(*a));
	if (!a)
		arena_oom(sizeof(*a));
	return a;
}

void arena_free(Arena *a)
{
	if (!a)
		return;
	for (Defer *d = a->defer; d; d = d->next)
		d->fn(d->ctx);
	for (Chunk *c = a->head, *next; c; c = next) {
		next = c->next;
		free(c);
	}
	free(a);
}

void arena_defer(Arena *a, void (*fn)(void *ctx), void *ctx)
{
	Defer *d = arena_alloc(a, sizeof *d); /* freed with the chunks, after the calls */
	d->fn = fn;
	d->ctx = ctx;
	d->next = a->defer;
	a->defer = d;
}

/* Offset in c at which n bytes aligned to align fit, or SIZE_MAX. */
static size_t chunk_fit(Chunk *c, size_t n, size_t align)
{
	uintptr_t p = (uintptr_t)(chunk_base(c) + c->used);
	size_t pad = (size_t)((align - p % align) % align);
	if (pad > c->cap - c->used || n > c->cap - c->used - pad)
		return SIZE_MAX;
	return c->used + pad;
}

void *arena_alloc_aligned(Arena *a, size_t n, size_t align)
{
	DOCC_ASSERT(a);
	if (align < ARENA_ALIGN)
		align = ARENA_ALIGN;
	DOCC_ASSERT((align & (align - 1)) == 0);
	if (n > SIZE_MAX / 2 - align)
		arena_oom(n);

	size_t off;
	if (a->head && (off = chunk_fit(a->head, n, align)) != SIZE_MAX) {
		a->head->used = off + n;
		return chunk_base(a->head) + off;
	}
	/* n + align always fits, whatever the alignment of the payload. */
	size_t need = n + align;
	if (need > ARENA_CHUNK / 4) {
		/* Big: its own chunk, behind the head (or as the head if none). */
		Chunk *c = chunk_new(need);
		if (a->head) {
			c->next = a->head->next;
			a->head->next = c;
		} else {
			a->head = c;
		}
		off = chunk_fit(c, n, align);
		DOCC_ASSERT(off != SIZE_MAX);
		c->used = off + n;
		return chunk_base(c) + off;
	}
	Chunk *c = chunk_new(ARENA_CHUNK);
	c->next = a->head;
	a->head = c;
	off = chunk_fit(c, n, align);
	DOCC_ASSERT(off != SIZE_MAX);
	c->used = off + n;
	return chunk_base(c) + off;
}

void *arena_alloc(Arena *a, size_t n)
{
	return arena_alloc_aligned(a, n, ARENA_ALIGN);
}

char *arena_strndup(Arena *a, const char *s, size_t n)
{
	size_t len = strnlen(s, n);
	char *p = arena_alloc(a, len + 1);
	memcpy(p, s, len);
	p[len] = '\0';
	return p;
}

char *arena_strdup(Arena *a, const char *s)
{
	return arena_strndup(a, s, SIZE_MAX);
}

char *arena_printf(Arena *a, const char *fmt, ...)
{
	va_list ap, ap2;
	va_start(ap, fmt);
	va_copy(ap2, ap);
	int n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0)
		diag_internal(__FILE__, __LINE__, "bad format string '%s'", fmt);
	char *p = arena_alloc(a, (size_t)n + 1);
	vsnprintf(p, (size_t)n + 1, fmt, ap2);
	va_end(ap2);
	return p;
}

void arena_grow(Arena *a, void **arr, int *cap, int need, size_t elsz)
{
	DOCC_ASSERT(need >= 0 && *cap >= 0);
	if (need <= *cap)
		return;
	long long ncap = *cap ? 2LL * *cap : 8;
	if (ncap < need)
		ncap = need;
	if (ncap > INT32_MAX)
		ncap = INT32_MAX;
	if (ncap < need || (elsz && (size_t)ncap > SIZE_MAX / 2 / elsz))
		arena_oom((size_t)need * elsz);
	void *p = arena_alloc(a, (size_t)ncap * elsz);
	if (*arr && *cap)
		memcpy(p, *arr, (size_t)*cap * elsz);
	*arr = p;
	*cap = (int)ncap;
}
