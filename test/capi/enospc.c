/*
 * enospc.c - an LD_PRELOAD shim that makes writes to chosen files fail
 * with ENOSPC, as on a full disk (test/test_faults.py).
 *
 *   DOCCC_ENOSPC=PREFIX   a write(2) to a file whose path (from
 *                         /proc/self/fd) starts with PREFIX fails
 *   DOCCC_ENOSPC_AT=N     once the file holds N bytes (default 0): the
 *                         write that crosses N is cut short at N, the next
 *                         one fails, so the caller sees a partial write
 *                         first, as a real disk that fills up gives
 *
 * Only write() is wrapped: doccc writes its files with write(2) (lib/file.c);
 * the compilers it runs inherit the shim, so PREFIX must name doccc's own
 * outputs (the output folder or the working directory), not theirs.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <unistd.h>

typedef ssize_t (*write_fn)(int, const void *, size_t);

static int matches(int fd)
{
	const char *prefix = getenv("DOCCC_ENOSPC");
	if (!prefix || !*prefix)
		return 0;
	char link[64], path[4096];
	snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
	ssize_t n = readlink(link, path, sizeof path - 1);
	if (n < 0)
		return 0;
	path[n] = 0;
	return !strncmp(path, prefix, strlen(prefix));
}

ssize_t write(int fd, const void *buf, size_t len)
{
	static write_fn real;
	if (!real)
		real = (write_fn)dlsym(RTLD_NEXT, "write");
	if (matches(fd)) {
		const char *at = getenv("DOCCC_ENOSPC_AT");
		off_t limit = at ? (off_t)strtoll(at, NULL, 10) : 0;
		off_t pos = lseek(fd, 0, SEEK_CUR);
		if (pos < 0 || pos >= limit) {
			errno = ENOSPC;
			return -1;
		}
		if ((off_t)len > limit - pos)
			len = (size_t)(limit - pos);
	}
	return real(fd, buf, len);
}
