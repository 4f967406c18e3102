/*
 * failalloc.c - an LD_PRELOAD shim that counts live allocations and makes
 * the k-th one fail (test/test_faults.py, with failcreate.c).
 *
 * malloc, calloc, realloc, posix_memalign, aligned_alloc, memalign and
 * mmap are the allocation points; each call while armed counts one, and
 * the k-th fails as on an exhausted machine (NULL or ENOMEM; MAP_FAILED
 * and ENOMEM). The program drives the shim through functions it finds with
 * dlsym(RTLD_DEFAULT): failalloc_arm(k) (0 disarms) and failalloc_fired()
 * (whether the k-th came), failalloc_live() and failalloc_maps() (the
 * allocations and mappings alive now: a leak shows as a difference).
 * glibc's own entry points (__libc_malloc, ...) do the work, so the shim
 * never recurses through dlsym; libc's internal mmap calls (large
 * mallocs, thread stacks) do not pass through here and are not counted.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <stddef.h>
#include <sys/mman.h>
#include <sys/types.h>

extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
extern void *__libc_memalign(size_t, size_t);
extern void __libc_free(void *);

static long armed_at, calls, fired, live, maps;

void failalloc_arm(long k);
long failalloc_fired(void);
long failalloc_live(void);
long failalloc_maps(void);

void failalloc_arm(long k)
{
	__atomic_store_n(&calls, 0, __ATOMIC_SEQ_CST);
	__atomic_store_n(&fired, 0, __ATOMIC_SEQ_CST);
	__atomic_store_n(&armed_at, k, __ATOMIC_SEQ_CST);
}

long failalloc_fired(void) { return __atomic_load_n(&fired, __ATOMIC_SEQ_CST); }
long failalloc_live(void) { return __atomic_load_n(&live, __ATOMIC_SEQ_CST); }
long failalloc_maps(void) { return __atomic_load_n(&maps, __ATOMIC_SEQ_CST); }

/* 1 if this allocation point is the one to fail. */
static int fail_now(void)
{
	long k = __atomic_load_n(&armed_at, __ATOMIC_SEQ_CST);
	if (k <= 0 || __atomic_add_fetch(&calls, 1, __ATOMIC_SEQ_CST) != k)
		return 0;
	__atomic_store_n(&fired, 1, __ATOMIC_SEQ_CST);
	errno = ENOMEM;
	return 1;
}

static void *counted(void *p)
{
	if (p)
		__atomic_add_fetch(&live, 1, __ATOMIC_SEQ_CST);
	return p;
}

void *malloc(size_t n) { return fail_now() ? NULL : counted(__libc_malloc(n)); }
void *calloc(size_t n, size_t m) { return fail_now() ? NULL : counted(__libc_calloc(n, m)); }
void *memalign(size_t a, size_t n) { return fail_now() ? NULL : counted(__libc_memalign(a, n)); }

void *aligned_alloc(size_t a, size_t n)
{
	return fail_now() ? NULL : counted(__libc_memalign(a, n));
}

int posix_memalign(void **p, size_t a, size_t n)
{
	if (a < sizeof(void *) || (a & (a - 1)))
		return EINVAL;
	if (fail_now())
		return ENOMEM;
	void *q = counted(__libc_memalign(a, n));
	if (!q)
		return ENOMEM;
	*p = q;
	return 0;
}

void free(void *p)
{
	if (p)
		__atomic_sub_fetch(&live, 1, __ATOMIC_SEQ_CST);
	__libc_free(p);
}

void *realloc(void *p, size_t n)
{
	if (!p)
		return malloc(n);
	if (!n) {
		free(p);
		return NULL;
	}
	return fail_now() ? NULL : __libc_realloc(p, n);
}

typedef void *(*mmap_fn)(void *, size_t, int, int, int, off_t);
typedef int (*munmap_fn)(void *, size_t);

void *mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
	static mmap_fn real;
	if (!real)
		real = (mmap_fn)dlsym(RTLD_NEXT, "mmap");
	if (fail_now())
		return MAP_FAILED;
	void *p = real(addr, len, prot, flags, fd, off);
	if (p != MAP_FAILED)
		__atomic_add_fetch(&maps, 1, __ATOMIC_SEQ_CST);
	return p;
}

int munmap(void *addr, size_t len)
{
	static munmap_fn real;
	if (!real)
		real = (munmap_fn)dlsym(RTLD_NEXT, "munmap");
	int rc = real(addr, len);
	if (rc == 0)
		__atomic_sub_fetch(&maps, 1, __ATOMIC_SEQ_CST);
	return rc;
}
