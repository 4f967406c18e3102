/*
 * file.c - whole-file reading and writing, directories, path names.
 *
 * file_read returns a malloc'd, NUL-terminated copy of a file (so text
 * parsers can run on it directly); file_write is atomic: the data goes to
 * "path.tmp.<pid>", which is renamed over path only once it was written and
 * closed without error, and removed otherwise, so a reader never sees a
 * half-written output. Every write, fchmod, close and rename is checked (a
 * full disk often shows only at close), and the temporary name is in the
 * temporary registry while it exists, so a signal removes it too. mkdir_p and the two file functions report failures
 * through diag_error with the path as location; rm_rf is quiet (it is used
 * for cleanup, where there is nobody left to tell).
 */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib.h"

char *file_read(const char *path, size_t *len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		diag_error(path, "cannot read: %s", strerror(errno));
		return NULL;
	}
	/* Start from the size fstat reports but read until EOF anyway: files
	 * in /proc and pipes report 0. */
	struct stat st;
	size_t cap = 4096;
	if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0)
		cap = (size_t)st.st_size + 1;
	char *data = malloc(cap);
	size_t n = 0;
	int err = data ? 0 : ENOMEM;
	while (!err) {
		if (n + 1 >= cap) {
			char *p = cap < SIZE_MAX / 2 ? realloc(data, cap * 2) : NULL;
			if (!p) {
				err = ENOMEM;
				break;
			}
			data = p;
			cap *= 2;
		}
		ssize_t r = read(fd, data + n, cap - 1 - n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			err = errno;
		else if (r == 0)
			break;
		else
			n += (size_t)r;
	}
	close(fd);
	if (err) {
		free(data);
		diag_error(path, "cannot read: %s", strerror(err));
		return NULL;
	}
	data[n] = '\0';
	if (len)
		*len = n;
	return data;
}

/* Write all of data to fd; 0 or an errno value. */
static int file_write_all(int fd, const char *data, size_t len)
{
	while (len) {
		ssize_t w = write(fd, data, len);
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0)
			return errno;
		data += w;
		len -= (size_t)w;
	}
	return 0;
}

int file_write_mode(const char *path, const void *data, size_t len, int mode)
{
	Buf tmp = {0};
	buf_printf(&tmp, "%s.tmp.%ld", path, (long)getpid());
	/* Registered first, so that a signal from here on removes it. */
	tmp_register_output(tmp.s);
	int err = 0;
	int fd = open(tmp.s, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
	if (fd < 0)
		err = errno;
	if (!err)
		err = file_write_all(fd, data, len);
	/* mode < 0: what open gave (0666 less the umask) */
	if (!err && mode >= 0 && fchmod(fd, (mode_t)mode) != 0)
		err = errno;
	if (fd >= 0 && close(fd) != 0 && !err)
		err = errno;
	if (!err && rename(tmp.s, path) != 0)
		err = errno;
	if (err) {
		unlink(tmp.s);
		diag_error(path, "cannot write: %s", strerror(err));
	}
	tmp_unregister(tmp.s);
	buf_free(&tmp);
	return err ? -1 : 0;
}

int file_write(const char *path, const void *data, size_t len)
{
	return file_write_mode(path, data, len, -1);
}

int file_exists(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

int dir_exists(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

int mkdir_p(const char *path)
{
	if (!*path) {
		diag_error(NULL, "cannot create a directory with an empty name");
		return -1;
	}
	Buf p = {0};
	buf_puts(&p, path);
	/* Create each prefix that ends before a '/', then the whole path. */
	for (size_t i = 1; i <= p.len; i++) {
		if (i < p.len && p.s[i] != '/')
			continue;
		if (p.s[i - 1] == '/')
			continue; /* "a//b" or a trailing slash */
		char save = p.s[i];
		p.s[i] = '\0';
		if (mkdir(p.s, 0777) != 0 && !(errno == EEXIST && dir_exists(p.s))) {
			int err = errno == EEXIST ? ENOTDIR : errno;
			diag_error(p.s, "cannot create directory: %s", strerror(err));
			buf_free(&p);
			return -1;
		}
		p.s[i] = save;
	}
	buf_free(&p);
	return 0;
}

static int rm_rf_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	/* Keep going after a failure, to remove as much as possible; rm_rf
	 * checks at the end whether the root is gone. */
	(void)remove(path);
	return 0;
}

int rm_rf(const char *path)
{
	struct stat st;
	if (lstat(path, &st) != 0)
		return errno == ENOENT ? 0 : -1;
	if (!S_ISDIR(st.st_mode))
		return unlink(path) == 0 || errno == ENOENT ? 0 : -1;
	/* FTW_DEPTH: children before their directory; FTW_PHYS: never follow a
	 * symlink out of the tree. */
	if (nftw(path, rm_rf_one, 16, FTW_DEPTH | FTW_PHYS) != 0)
		return -1;
	return lstat(path, &st) == 0 ? -1 : 0;
}

const char *path_base(const char *path)
{
	const char *slash = strrchr(path, '/');
	return slash ? slash + 1 : path;
}

char *path_to_ident(Arena *a, const char *path)
{
	const char *base = path_base(path);
	const char *dot = strrchr(base, '.');
	size_t n = dot ? (size_t)(dot - base) : strlen(base);
	if (n == 0)
		return arena_strdup(a, "model");
	int digit = base[0] >= '0' && base[0] <= '9';
	char *id = arena_alloc(a, n + 2);
	char *q = id;
	if (digit)
		*q++ = '_';
	for (size_t i = 0; i < n; i++) {
		char c = base[i];
		int ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
		*q++ = ok ? c : '_';
	}
	*q = '\0';
	return id;
}
