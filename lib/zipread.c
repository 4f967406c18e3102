/*
 * zipread.c - reading the .pt2 archive (a zip file) through libzip.
 *
 * torch.export.save writes every entry under one root folder
 * ("resnet18/archive_format", "resnet18/models/model.json", ...). pt2_open
 * finds that root once: the text up to and including the first '/' of the
 * entry whose name ends in "/archive_format"; failing that, of the first
 * entry if it has a '/'; else the root is "". All names given to pt2_has
 * and pt2_read are relative to the root; pt2_name returns full names.
 *
 * Entries in torch archives are STORED (uncompressed, aligned), but libzip
 * inflates deflated entries transparently, so both work; other compression
 * methods are refused. Every failure names the archive ("model.pt2: error:
 * ...") and, where there is one, the entry.
 *
 * The sizes in a zip directory are claims of the file, not facts: pt2_read
 * allocates an entry's recorded size only after checking it against what
 * the archive can hold (a stored entry no more than the archive's size, a
 * deflated one no more than PT2_MAX_RATIO times its compressed size, the
 * most deflate can expand), then reads exactly that many bytes and one more
 * to reach the end, where libzip checks the CRC. pt2_size checks an entry
 * without reading it and pt2_read_into reads one into the caller's memory:
 * weights are read when the compile needs them (ir/consts.c), one at a time.
 * pt2_read_range reads a part (a weight that views part of a storage),
 * which libzip cannot check against the CRC of the whole.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <zip.h>

#include "lib.h"

/* Deflate's largest expansion is 1032:1 (258 bytes from 2 bits). */
enum { PT2_MAX_RATIO = 1032 };

struct Pt2 {
	zip_t *zip;
	char *path;
	char *root;   /* "name/" or "" */
	int64_t size; /* of the archive file */
};

static char *pt2_strndup(const char *s, size_t n)
{
	char *p = malloc(n + 1);
	if (!p) {
		fprintf(stderr, "doccc: fatal error: out of memory\n");
		abort();
	}
	memcpy(p, s, n);
	p[n] = '\0';
	return p;
}

/* The root folder, as described at the top of the file (malloc'd). */
static char *pt2_find_root(zip_t *zip)
{
	static const char marker[] = "/archive_format";
	const size_t mlen = sizeof(marker) - 1;
	zip_int64_t n = zip_get_num_entries(zip, 0);
	for (zip_int64_t i = 0; i < n; i++) {
		const char *name = zip_get_name(zip, (zip_uint64_t)i, 0);
		size_t len = name ? strlen(name) : 0;
		if (len >= mlen && !strcmp(name + len - mlen, marker))
			return pt2_strndup(name, (size_t)(strchr(name, '/') - name) + 1);
	}
	const char *first = n > 0 ? zip_get_name(zip, 0, 0) : NULL;
	const char *slash = first ? strchr(first, '/') : NULL;
	if (slash)
		return pt2_strndup(first, (size_t)(slash - first) + 1);
	return pt2_strndup("", 0);
}

Pt2 *pt2_open(const char *path)
{
	int code = 0;
	zip_t *zip = zip_open(path, ZIP_RDONLY, &code);
	if (!zip) {
		zip_error_t ze;
		zip_error_init_with_code(&ze, code);
		if (code == ZIP_ER_NOZIP || code == ZIP_ER_INCONS)
			diag_error(path, "not a zip archive: %s", zip_error_strerror(&ze));
		else
			diag_error(path, "cannot open: %s", zip_error_strerror(&ze));
		zip_error_fini(&ze);
		return NULL;
	}
	/* libzip opens an empty file as an empty archive; no .pt2 is empty. */
	if (zip_get_num_entries(zip, 0) <= 0) {
		diag_error(path, "not a zip archive: no entries");
		zip_discard(zip);
		return NULL;
	}
	Pt2 *z = calloc(1, sizeof(*z));
	if (!z) {
		fprintf(stderr, "doccc: fatal error: out of memory\n");
		abort();
	}
	struct stat sb;
	z->zip = zip;
	z->path = pt2_strndup(path, strlen(path));
	z->root = pt2_find_root(zip);
	z->size = stat(path, &sb) == 0 ? (int64_t)sb.st_size : INT64_MAX;
	return z;
}

void pt2_close(Pt2 *z)
{
	if (!z)
		return;
	/* Read-only: nothing to write back, so discard rather than close. */
	zip_discard(z->zip);
	free(z->path);
	free(z->root);
	free(z);
}

const char *pt2_root(const Pt2 *z)
{
	return z->root;
}

/* Index of root+name, or -1; *full receives the full name (caller frees). */
static zip_int64_t pt2_locate(Pt2 *z, const char *name, Buf *full)
{
	buf_puts(full, z->root);
	buf_puts(full, name);
	return zip_name_locate(z->zip, full->s, 0);
}

int pt2_has(Pt2 *z, const char *name)
{
	Buf full = {0};
	zip_int64_t i = pt2_locate(z, name, &full);
	buf_free(&full);
	return i >= 0;
}

/* The index of entry name, checked as described at the top of the file;
 * its size in *size; -1 reported. */
static zip_int64_t pt2_entry(Pt2 *z, const char *name, Buf *full, zip_uint64_t *size, int *stored)
{
	zip_int64_t i = pt2_locate(z, name, full);
	if (i < 0) {
		diag_error(z->path, "archive has no entry '%s'", full->s);
		return -1;
	}
	zip_stat_t st;
	zip_stat_init(&st);
	const zip_uint64_t need = ZIP_STAT_SIZE | ZIP_STAT_COMP_SIZE | ZIP_STAT_COMP_METHOD;
	if (zip_stat_index(z->zip, (zip_uint64_t)i, 0, &st) != 0 || (st.valid & need) != need) {
		diag_error(z->path, "cannot read entry '%s': %s", full->s, zip_strerror(z->zip));
		return -1;
	}
	if (st.comp_method != ZIP_CM_STORE && st.comp_method != ZIP_CM_DEFLATE) {
		diag_error(z->path, "entry '%s' uses compression method %d; doccc reads stored and deflated entries",
		           full->s, (int)st.comp_method);
		return -1;
	}
	/* What the archive can hold; the recorded size must not exceed it. */
	int64_t room = z->size;
	if (st.comp_method == ZIP_CM_DEFLATE &&
	    (st.comp_size > (zip_uint64_t)z->size || ck_mul((int64_t)st.comp_size, PT2_MAX_RATIO, &room)))
		room = -1;
	if (room < 0 || st.size > (zip_uint64_t)room || st.size >= SIZE_MAX) {
		diag_error(z->path, "entry '%s' is too large: it claims %llu bytes, more than the archive (%lld bytes) "
		           "can hold (a corrupt archive)", full->s, (unsigned long long)st.size, (long long)z->size);
		return -1;
	}
	*size = st.size;
	if (stored)
		*stored = st.comp_method == ZIP_CM_STORE;
	return i;
}

/* Read entry i (full name full, size bytes) into data; 0, or -1 reported. */
static int pt2_fill(Pt2 *z, zip_int64_t i, const char *full, char *data, zip_uint64_t size)
{
	zip_file_t *f = zip_fopen_index(z->zip, (zip_uint64_t)i, 0);
	if (!f) {
		diag_error(z->path, "cannot read entry '%s': %s", full, zip_strerror(z->zip));
		return -1;
	}
	zip_uint64_t got = 0;
	while (got < size) {
		zip_int64_t r = zip_fread(f, data + got, size - got);
		if (r <= 0) {
			diag_error(z->path, "cannot read entry '%s': %s", full, r < 0 ? zip_file_strerror(f) : "truncated");
			(void)zip_fclose(f); /* already failing; the first error was reported */
			return -1;
		}
		got += (zip_uint64_t)r;
	}
	/* Read on to the end, where libzip checks the CRC; there must be nothing. */
	char extra;
	zip_int64_t r = zip_fread(f, &extra, 1);
	if (r != 0) {
		diag_error(z->path, "cannot read entry '%s': %s", full, r < 0 ? zip_file_strerror(f) : "longer than its recorded size");
		(void)zip_fclose(f);
		return -1;
	}
	int rc = zip_fclose(f);
	if (rc != 0) {
		zip_error_t ze;
		zip_error_init_with_code(&ze, rc);
		diag_error(z->path, "cannot read entry '%s': %s", full, zip_error_strerror(&ze));
		zip_error_fini(&ze);
		return -1;
	}
	return 0;
}

void *pt2_read(Pt2 *z, const char *name, size_t *len)
{
	Buf full = {0};
	char *data = NULL;
	zip_uint64_t size;
	zip_int64_t i = pt2_entry(z, name, &full, &size, NULL);
	if (i < 0)
		goto fail;
	if (!(data = malloc((size_t)size + 1))) {
		diag_error(z->path, "entry '%s' is too large (%llu bytes): out of memory", full.s, (unsigned long long)size);
		goto fail;
	}
	if (pt2_fill(z, i, full.s, data, size))
		goto fail;
	data[size] = '\0';
	if (len)
		*len = (size_t)size;
	buf_free(&full);
	return data;

fail:
	free(data);
	buf_free(&full);
	return NULL;
}

int pt2_size(Pt2 *z, const char *name, size_t *len)
{
	Buf full = {0};
	zip_uint64_t size;
	zip_int64_t i = pt2_entry(z, name, &full, &size, NULL);
	buf_free(&full);
	*len = (size_t)size;
	return i < 0 ? -1 : 0;
}

int pt2_read_into(Pt2 *z, const char *name, void *dst, size_t len)
{
	Buf full = {0};
	zip_uint64_t size;
	zip_int64_t i = pt2_entry(z, name, &full, &size, NULL);
	int rc = i < 0 ? -1 : 0;
	if (!rc && size != len) {
		diag_error(z->path, "entry '%s' holds %llu bytes, %zu when the program was read (the archive changed)", full.s,
		           (unsigned long long)size, len);
		rc = -1;
	}
	rc = rc || pt2_fill(z, i, full.s, dst, size);
	buf_free(&full);
	return rc;
}

int pt2_read_range(Pt2 *z, const char *name, size_t off, void *dst, size_t len)
{
	Buf full = {0};
	zip_uint64_t size;
	int stored = 0;
	zip_int64_t i = pt2_entry(z, name, &full, &size, &stored);
	zip_file_t *f = NULL;
	int rc = i < 0 ? -1 : 0;
	if (!rc && (off > size || len > size - off)) {
		diag_error(z->path, "entry '%s' holds %llu bytes, fewer than when the program was read (the archive changed)",
		           full.s, (unsigned long long)size);
		rc = -1;
	}
	if (!rc && !(f = zip_fopen_index(z->zip, (zip_uint64_t)i, 0))) {
		diag_error(z->path, "cannot read entry '%s': %s", full.s, zip_strerror(z->zip));
		rc = -1;
	}
	/* a stored entry seeks; a deflated one is read up to off */
	char skip[4096];
	if (!rc && stored && off)
		rc = zip_fseek(f, (zip_int64_t)off, SEEK_SET) != 0 ? -1 : 0;
	else if (!rc)
		for (size_t k = 0, n; !rc && k < off; k += n) {
			n = MIN(sizeof skip, off - k);
			rc = zip_fread(f, skip, n) == (zip_int64_t)n ? 0 : -1;
		}
	for (size_t got = 0; !rc && got < len;) {
		zip_int64_t r = zip_fread(f, (char *)dst + got, len - got);
		if (r <= 0)
			rc = -1;
		else
			got += (size_t)r;
	}
	if (rc && f)
		diag_error(z->path, "cannot read entry '%s': %s", full.s, zip_file_strerror(f));
	if (f)
		(void)zip_fclose(f); /* not read to the end: libzip checks no CRC for a part */
	buf_free(&full);
	return rc;
}

int pt2_count(Pt2 *z)
{
	zip_int64_t n = zip_get_num_entries(z->zip, 0);
	return n < 0 ? 0 : n > INT32_MAX ? INT32_MAX : (int)n;
}

const char *pt2_name(Pt2 *z, int i)
{
	if (i < 0)
		return NULL;
	return zip_get_name(z->zip, (zip_uint64_t)i, 0);
}
