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
 *
 * Large files never pass through memory whole: an Ofile writes one in
 * pieces (with pwrite for a header known only at the end) through the same
 * temporary name and rename; file_copy, file_move (a rename where it can)
 * and file_hash go through a 1 MiB buffer; file_read_at reads a piece;
 * file_map maps a file read-only, and file_map_drop gives back the memory of
 * pages already read (the file's pages stay in the page cache).
 */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
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

int ofile_open(Ofile *f, const char *path)
{
	memset(f, 0, sizeof *f);
	f->path = path;
	buf_printf(&f->tmp, "%s.tmp.%ld", path, (long)getpid());
	/* Registered first, so that a signal from here on removes it. */
	tmp_register_output(f->tmp.s);
	f->fd = open(f->tmp.s, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
	if (f->fd < 0) {
		diag_error(path, "cannot write: %s", strerror(errno));
		tmp_unregister(f->tmp.s);
		buf_free(&f->tmp);
		return -1;
	}
	return 0;
}

void ofile_write(Ofile *f, const void *data, size_t len)
{
	if (!f->err)
		f->err = file_write_all(f->fd, data, len);
	f->size += (int64_t)len;
}

void ofile_zeros(Ofile *f, size_t n)
{
	static const char z[4096];
	for (size_t k; n; n -= k)
		ofile_write(f, z, k = MIN(n, sizeof z));
}

void ofile_pwrite(Ofile *f, const void *data, size_t len, int64_t off)
{
	for (const char *p = data; len && !f->err;) {
		ssize_t w = pwrite(f->fd, p, len, (off_t)off);
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0)
			f->err = errno;
		else
			p += w, off += w, len -= (size_t)w;
	}
}

int ofile_close(Ofile *f, int mode)
{
	int err = f->err;
	/* mode < 0: what open gave (0666 less the umask) */
	if (!err && mode >= 0 && fchmod(f->fd, (mode_t)mode) != 0)
		err = errno;
	if (close(f->fd) != 0 && !err)
		err = errno;
	if (!err && rename(f->tmp.s, f->path) != 0)
		err = errno;
	if (err) {
		unlink(f->tmp.s);
		diag_error(f->path, "cannot write: %s", strerror(err));
	}
	tmp_unregister(f->tmp.s);
	buf_free(&f->tmp);
	return err ? -1 : 0;
}

void ofile_abort(Ofile *f)
{
	close(f->fd);
	unlink(f->tmp.s);
	tmp_unregister(f->tmp.s);
	buf_free(&f->tmp);
}

int file_write_mode(const char *path, const void *data, size_t len, int mode)
{
	Ofile f;
	if (ofile_open(&f, path))
		return -1;
	ofile_write(&f, data, len);
	return ofile_close(&f, mode);
}

/* Every byte of fd to fn(ctx, piece, n) in 1 MiB pieces: 0 or an errno value. */
static int read_pieces(int fd, void (*fn)(void *ctx, const void *p, size_t n), void *ctx)
{
	enum { CHUNK = 1 << 20 };
	char *b = malloc(CHUNK);
	int err = b ? 0 : ENOMEM;
	for (ssize_t r; !err;) {
		r = read(fd, b, CHUNK);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0) {
			err = r < 0 ? errno : 0;
			break;
		}
		fn(ctx, b, (size_t)r);
	}
	free(b);
	return err;
}

static void to_ofile(void *f, const void *p, size_t n)
{
	ofile_write(f, p, n);
}

static void to_sha(void *h, const void *p, size_t n)
{
	sha256_update(h, p, n);
}

int file_copy(const char *from, const char *to, int mode)
{
	int in = open(from, O_RDONLY | O_CLOEXEC);
	if (in < 0) {
		diag_error(from, "cannot read: %s", strerror(errno));
		return -1;
	}
	Ofile f;
	if (ofile_open(&f, to)) {
		close(in);
		return -1;
	}
	int err = read_pieces(in, to_ofile, &f);
	close(in);
	if (err) {
		diag_error(from, "cannot read: %s", strerror(err));
		ofile_abort(&f);
		return -1;
	}
	return ofile_close(&f, mode);
}

int file_move(const char *from, const char *to, int mode)
{
	int err = rename(from, to) != 0 ? errno : mode >= 0 && chmod(to, (mode_t)mode) != 0 ? errno : 0;
	if (err == EXDEV)
		return file_copy(from, to, mode);
	if (err)
		diag_error(to, "cannot write: %s", strerror(err));
	return err ? -1 : 0;
}

int file_hash(const char *path, Sha256 *h)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		diag_error(path, "cannot read: %s", strerror(errno));
		return -1;
	}
	int err = read_pieces(fd, to_sha, h);
	close(fd);
	if (err)
		diag_error(path, "cannot read: %s", strerror(err));
	return err ? -1 : 0;
}

int file_read_at(const char *path, int64_t off, void *dst, size_t n)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	int err = fd < 0 ? errno : 0;
	for (char *p = dst; !err && n;) {
		ssize_t r = pread(fd, p, n, (off_t)off);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			err = r < 0 ? errno : EIO;
		else
			p += r, off += r, n -= (size_t)r;
	}
	if (fd >= 0)
		close(fd);
	if (err == EIO)
		diag_error(path, "cannot read: shorter than when the program was read (the file changed)");
	else if (err)
		diag_error(path, "cannot read: %s", strerror(err));
	return err ? -1 : 0;
}

int file_map(const char *path, const void **mem, size_t *len)
{
	*mem = NULL;
	*len = 0;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	struct stat st;
	int err = fd < 0 ? errno : fstat(fd, &st) != 0 ? errno : !S_ISREG(st.st_mode) ? EINVAL : 0;
	if (!err && st.st_size > 0) {
		void *p = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
		if (p == MAP_FAILED)
			err = errno;
		else
			*mem = p, *len = (size_t)st.st_size;
	}
	if (fd >= 0)
		close(fd);
	if (err)
		diag_error(path, "cannot read: %s", err == EINVAL ? "not a regular file" : strerror(err));
	return err ? -1 : 0;
}

void file_unmap(const void *mem, size_t len)
{
	if (mem)
		munmap((void *)mem, len);
}

void file_map_drop(const void *p, size_t n)
{
	uintptr_t pg = (uintptr_t)sysconf(_SC_PAGESIZE), a = (uintptr_t)p / pg * pg;
	if (n)
		(void)madvise((void *)a, (uintptr_t)p + n - a, MADV_DONTNEED);
}

int file_write(const char *path, const void *data, size_t len)
{
	return file_write_mode(path, data, len, -1);
}

const char *file_unreadable(const char *path)
{
	struct stat st;
	if (stat(path, &st))
		return strerror(errno);
	if (S_ISDIR(st.st_mode))
		return "it is a directory";
	if (!S_ISREG(st.st_mode))
		return "not a regular file";
	return NULL;
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
