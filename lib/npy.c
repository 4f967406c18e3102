/*
 * npy.c - NumPy .npy files: read versions 1.0 to 3.0, write 1.0.
 *
 * Layout: "\x93NUMPY", major and minor version bytes, the header length
 * (2 bytes little-endian in 1.0, 4 bytes in 2.0 and 3.0), then the header:
 * a Python dict literal such as
 *     {'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }
 * padded with spaces and ending in '\n', then the raw data in C order.
 * The reader parses just this dict grammar (string keys; string, bool and
 * int-tuple values) and accepts only little-endian (or byte-order-free)
 * descrs of the types lib.h lists, normalising the equivalent spellings
 * ("<u1" -> "|u1", "<b1" -> "|b1", "<i1" -> "|i1"). Fortran order and
 * big-endian data are rejected with a message naming the file. The writer
 * pads the header so that data starts at a multiple of 64 bytes, as numpy
 * does, and writes through file_write (atomic).
 */
#include <stdlib.h>
#include <string.h>

#include "lib.h"

static const struct {
	const char *descr; /* canonical */
	const char *alias; /* also accepted on reading, or NULL */
	int size;
} npy_types[] = {
	{"<f4", NULL, 4}, {"<f8", NULL, 8}, {"<f2", NULL, 2}, {"<i8", NULL, 8},
	{"<i4", NULL, 4}, {"<i2", NULL, 2}, {"|i1", "<i1", 1}, {"|u1", "<u1", 1},
	{"|b1", "<b1", 1}, {"<u2", NULL, 2},
};

/* Index into npy_types of descr (canonical or alias), or -1. */
static int npy_type(const char *descr)
{
	for (int i = 0; i < (int)COUNTOF(npy_types); i++)
		if (!strcmp(npy_types[i].descr, descr) ||
		    (npy_types[i].alias && !strcmp(npy_types[i].alias, descr)))
			return i;
	return -1;
}

/* ---- header dict parser ---- */

typedef struct {
	const char *p, *end;
} NpyLex;

static void npy_skip(NpyLex *l)
{
	while (l->p < l->end && (*l->p == ' ' || *l->p == '\t' || *l->p == '\n' || *l->p == '\r'))
		l->p++;
}

static int npy_eat(NpyLex *l, char c)
{
	npy_skip(l);
	if (l->p < l->end && *l->p == c) {
		l->p++;
		return 1;
	}
	return 0;
}

/* A quoted string (no escapes: descrs and keys do not need them) into
 * out[n]; 0 or -1. */
static int npy_string(NpyLex *l, char *out, size_t n)
{
	npy_skip(l);
	if (l->p >= l->end || (*l->p != '\'' && *l->p != '"'))
		return -1;
	char q = *l->p++;
	size_t k = 0;
	while (l->p < l->end && *l->p != q) {
		if (k + 1 >= n)
			return -1;
		out[k++] = *l->p++;
	}
	if (l->p >= l->end)
		return -1;
	l->p++;
	out[k] = '\0';
	return 0;
}

static int npy_word(NpyLex *l, const char *w)
{
	size_t n = strlen(w);
	npy_skip(l);
	if ((size_t)(l->end - l->p) >= n && !memcmp(l->p, w, n)) {
		l->p += n;
		return 1;
	}
	return 0;
}

/* "(2, 3)", "(5,)", "()"; 0, -1 if malformed, -2 if of rank above 8. */
static int npy_shape(NpyLex *l, Npy *a)
{
	if (!npy_eat(l, '('))
		return -1;
	a->rank = 0;
	while (!npy_eat(l, ')')) {
		npy_skip(l);
		int64_t v = 0;
		int nd = 0;
		while (l->p < l->end && *l->p >= '0' && *l->p <= '9') {
			if (ck_mul(v, 10, &v) || ck_add(v, *l->p++ - '0', &v))
				return -1;
			nd++;
		}
		if (!nd)
			return -1;
		if (a->rank >= (int)COUNTOF(a->shape))
			return -2;
		a->shape[a->rank++] = v;
		if (!npy_eat(l, ',')) {
			if (!npy_eat(l, ')'))
				return -1;
			break;
		}
	}
	return 0;
}

/* Parse the header dict into a; 0 or -1 with a message. */
static int npy_header(const char *path, const char *h, size_t n, Npy *a)
{
	NpyLex l = {h, h + n};
	char key[32], descr[16] = "";
	int fortran = -1, have_shape = 0;
	if (!npy_eat(&l, '{'))
		goto bad;
	while (!npy_eat(&l, '}')) {
		if (npy_string(&l, key, sizeof(key)) != 0 || !npy_eat(&l, ':'))
			goto bad;
		if (!strcmp(key, "descr")) {
			if (npy_string(&l, descr, sizeof(descr)) != 0) {
				diag_error(path, "npy: unsupported 'descr' (only simple types are)");
				return -1;
			}
		} else if (!strcmp(key, "fortran_order")) {
			if (npy_word(&l, "True"))
				fortran = 1;
			else if (npy_word(&l, "False"))
				fortran = 0;
			else
				goto bad;
		} else if (!strcmp(key, "shape")) {
			int rc = npy_shape(&l, a);
			if (rc == -2) {
				diag_error(path, "npy: shape has more than %d dimensions", (int)COUNTOF(a->shape));
				return -1;
			}
			if (rc != 0)
				goto bad;
			have_shape = 1;
		} else {
			goto bad;
		}
		if (!npy_eat(&l, ',')) {
			if (!npy_eat(&l, '}'))
				goto bad;
			break;
		}
	}
	if (!*descr || fortran < 0 || !have_shape)
		goto bad;
	if (fortran) {
		diag_error(path, "npy: Fortran-order arrays are not supported (save with np.ascontiguousarray)");
		return -1;
	}
	if (descr[0] == '>') {
		diag_error(path, "npy: big-endian dtype '%s' is not supported", descr);
		return -1;
	}
	int t = npy_type(descr);
	if (t < 0) {
		diag_error(path, "npy: unsupported dtype '%s'", descr);
		return -1;
	}
	strcpy(a->descr, npy_types[t].descr);
	return 0;
bad:
	diag_error(path, "npy: malformed header");
	return -1;
}

int npy_read(const char *path, Npy *out)
{
	memset(out, 0, sizeof(*out));
	size_t len;
	char *mem = file_read(path, &len);
	if (!mem)
		return -1;
	const unsigned char *u = (const unsigned char *)mem;
	if (len < 10 || memcmp(mem, "\x93NUMPY", 6) != 0) {
		diag_error(path, "npy: not a .npy file");
		goto fail;
	}
	int major = u[6];
	size_t hofs, hlen;
	if (major == 1) {
		hofs = 10;
		hlen = (size_t)u[8] | (size_t)u[9] << 8;
	} else if ((major == 2 || major == 3) && len >= 12) {
		hofs = 12;
		hlen = (size_t)u[8] | (size_t)u[9] << 8 | (size_t)u[10] << 16 | (size_t)u[11] << 24;
	} else {
		diag_error(path, "npy: unsupported format version %d.%d", major, u[7]);
		goto fail;
	}
	if (hlen > len - hofs) {
		diag_error(path, "npy: header runs past the end of the file");
		goto fail;
	}
	if (npy_header(path, mem + hofs, hlen, out) != 0)
		goto fail;
	/* The extent (the product of the dims, empty ones counted as 1) bounds
	 * every byte offset and stride computed from the shape: it must fit,
	 * even when an empty dim makes the array hold nothing. */
	int64_t extent = npy_types[npy_type(out->descr)].size, nbytes = extent;
	for (int i = 0; i < out->rank; i++) {
		if (ck_mul(extent, out->shape[i] ? out->shape[i] : 1, &extent)) {
			diag_error(path, "npy: header: shape too large (its extent in bytes does not fit in 64 bits)");
			goto fail;
		}
		nbytes *= out->shape[i]; /* |nbytes| <= extent */
	}
	size_t dofs = hofs + hlen;
	if ((uint64_t)nbytes != len - dofs) {
		diag_error(path, "npy: file holds %zu data bytes, shape and dtype need %lld", len - dofs,
		           (long long)nbytes);
		goto fail;
	}
	/* Reuse the file buffer for the data. */
	memmove(mem, mem + dofs, (size_t)nbytes);
	out->data = mem;
	out->nbytes = (size_t)nbytes;
	return 0;
fail:
	free(mem);
	memset(out, 0, sizeof(*out));
	return -1;
}

int npy_write(const char *path, const char *descr, int rank, const int64_t *shape, const void *data)
{
	int t = npy_type(descr);
	if (t < 0 || rank < 0 || rank > 8) {
		diag_error(path, "npy: cannot write dtype '%s' with rank %d", descr, rank);
		return -1;
	}
	uint64_t nbytes = (uint64_t)npy_types[t].size;
	Buf b = {0};
	buf_putn(&b, "\x93NUMPY\x01\x00\x00\x00", 10);
	buf_printf(&b, "{'descr': '%s', 'fortran_order': False, 'shape': (", npy_types[t].descr);
	for (int i = 0; i < rank; i++) {
		if (shape[i] < 0) {
			diag_error(path, "npy: negative dimension %lld", (long long)shape[i]);
			buf_free(&b);
			return -1;
		}
		buf_printf(&b, i ? ", %lld" : "%lld", (long long)shape[i]);
		nbytes *= (uint64_t)shape[i];
	}
	buf_puts(&b, rank == 1 ? ",), }" : "), }");
	/* Pad with spaces so that header + '\n' ends at a multiple of 64. */
	while ((b.len + 1) % 64)
		buf_putc(&b, ' ');
	buf_putc(&b, '\n');
	size_t hlen = b.len - 10;
	if (hlen > 0xffff) {
		diag_error(path, "npy: header too long for format 1.0");
		buf_free(&b);
		return -1;
	}
	b.s[8] = (char)(hlen & 0xff);
	b.s[9] = (char)(hlen >> 8);
	buf_putn(&b, data, (size_t)nbytes);
	int rc = file_write(path, b.s, b.len);
	buf_free(&b);
	return rc;
}

void npy_free(Npy *a)
{
	free(a->data);
	memset(a, 0, sizeof(*a));
}
