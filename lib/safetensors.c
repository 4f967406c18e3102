/*
 * safetensors.c - reading .safetensors weight files.
 *
 * Layout: an 8-byte little-endian header length N, N bytes of JSON
 * {"name": {"dtype": "F32", "shape": [2, 3], "data_offsets": [b, e]}, ...,
 *  "__metadata__": {...}}, then the data; offsets are relative to the start
 * of the data. st_open maps the file read-only (st->mem) and points every
 * tensor's data into the map, after checking what a later reader would trip
 * over: the header length fits the file, the header is a JSON object, each
 * tensor has a known dtype, a shape of at most 8 non-negative dims and
 * offsets with b <= e <= data size and e - b = dtype size * numel, and no
 * name twice. "__metadata__" is skipped. Every error names the file:
 * "w.safetensors: error: safetensors header: ...".
 *
 * Invariants after a successful st_open: names and dtypes are malloc'd and
 * owned by st; data pointers stay valid until st_close.
 */
#include <stdlib.h>
#include <string.h>

#include <cJSON.h>

#include "lib.h"

/* The JSON header is text; 100 MB is the limit the format's reference
 * implementation enforces. */
enum { ST_MAX_HEADER = 100 * 1000 * 1000 };

static const struct {
	const char *name;
	int size;
} st_dtypes[] = {
	{"F64", 8}, {"F32", 4}, {"F16", 2}, {"BF16", 2}, {"I64", 8},
	{"I32", 4}, {"I16", 2}, {"I8", 1},  {"U8", 1},   {"BOOL", 1},
};

static int st_dtype_size(const char *dtype)
{
	for (size_t i = 0; i < COUNTOF(st_dtypes); i++)
		if (!strcmp(st_dtypes[i].name, dtype))
			return st_dtypes[i].size;
	return 0;
}

static char *st_strdup(const char *s)
{
	size_t n = strlen(s) + 1;
	char *p = malloc(n);
	if (!p) {
		fprintf(stderr, "doccc: fatal error: out of memory\n");
		abort();
	}
	return memcpy(p, s, n);
}

/* Fill t from one header entry; 0 or -1 with a message. */
static int st_entry(const char *path, const cJSON *e, const char *name, const char *data,
                    size_t ndata, StTensor *t)
{
	const char *dtype = json_str(json_get(e, "dtype"));
	const cJSON *shape = json_get(e, "shape");
	const cJSON *offs = json_get(e, "data_offsets");
	if (!dtype || !cJSON_IsArray(shape) || !cJSON_IsArray(offs)) {
		diag_error(path, "safetensors header: tensor '%s' needs dtype, shape and data_offsets", name);
		return -1;
	}
	int elsz = st_dtype_size(dtype);
	if (!elsz) {
		diag_error(path, "safetensors header: tensor '%s' has unsupported dtype '%s'", name, dtype);
		return -1;
	}
	int rank = json_len(shape);
	if (rank > (int)COUNTOF(t->shape)) {
		diag_error(path, "safetensors header: tensor '%s' has rank %d (at most %d supported)", name,
		           rank, (int)COUNTOF(t->shape));
		return -1;
	}
	/* The extent in bytes (the product of the dims, empty ones counted as
	 * 1, times the element size) bounds every offset and stride computed
	 * from the shape: it must fit, even when an empty dim makes the tensor
	 * hold nothing. The byte count is at most the extent. */
	int64_t extent = elsz, need = elsz;
	for (int i = 0; i < rank; i++) {
		int64_t d;
		if (json_int(json_at(shape, i), &d) != 0 || d < 0) {
			diag_error(path, "safetensors header: tensor '%s': bad shape", name);
			return -1;
		}
		t->shape[i] = d;
		if (ck_mul(extent, d ? d : 1, &extent)) {
			diag_error(path, "safetensors header: tensor '%s': shape too large (its extent in bytes "
			           "does not fit in 64 bits)", name);
			return -1;
		}
		need *= d;
	}
	int64_t b, e_;
	if (json_len(offs) != 2 || json_int(json_at(offs, 0), &b) != 0 ||
	    json_int(json_at(offs, 1), &e_) != 0 || b < 0 || e_ < b || (uint64_t)e_ > ndata) {
		diag_error(path, "safetensors header: tensor '%s': data_offsets outside the data (%zu bytes)",
		           name, ndata);
		return -1;
	}
	int64_t nbytes = e_ - b;
	if (need != nbytes) {
		diag_error(path,
		           "safetensors header: tensor '%s': data_offsets span %lld bytes, but %s with this "
		           "shape needs %lld",
		           name, (long long)nbytes, dtype, (long long)need);
		return -1;
	}
	t->name = st_strdup(name);
	t->dtype = st_strdup(dtype);
	t->rank = rank;
	t->data = data + b;
	t->nbytes = (size_t)nbytes;
	return 0;
}

int st_open(Safetensors *st, const char *path)
{
	memset(st, 0, sizeof(*st));
	size_t len;
	const void *map;
	if (file_map(path, &map, &len))
		return -1;
	const char *mem = map;
	st->mem = map;
	st->len = len;
	if (len < 8) {
		diag_error(path, "safetensors header: file too short (%zu bytes)", len);
		goto fail;
	}
	uint64_t hlen = 0;
	for (int i = 7; i >= 0; i--)
		hlen = hlen << 8 | (unsigned char)mem[i];
	if (hlen < 2 || hlen > ST_MAX_HEADER || hlen > len - 8) {
		diag_error(path, "safetensors header: length %llu does not fit the file (%zu bytes)",
		           (unsigned long long)hlen, len);
		goto fail;
	}
	cJSON *h = json_parse(mem + 8, (size_t)hlen, path);
	if (!h)
		goto fail;
	if (!cJSON_IsObject(h)) {
		diag_error(path, "safetensors header: not a JSON object");
		json_free(h);
		goto fail;
	}
	const char *data = mem + 8 + hlen;
	size_t ndata = len - 8 - (size_t)hlen;
	st->t = calloc((size_t)json_len(h) + 1, sizeof(*st->t));
	if (!st->t) {
		fprintf(stderr, "doccc: fatal error: out of memory\n");
		abort();
	}
	int bad = 0;
	for (const cJSON *e = h->child; e; e = e->next) {
		if (!strcmp(e->string, "__metadata__"))
			continue;
		if (!cJSON_IsObject(e)) {
			diag_error(path, "safetensors header: entry '%s' is not an object", e->string);
			bad = 1;
			continue;
		}
		if (json_get(h, e->string) != e) { /* cJSON keeps both; the first would shadow this */
			diag_error(path, "safetensors header: tensor '%s' appears twice", e->string);
			bad = 1;
			continue;
		}
		if (st_entry(path, e, e->string, data, ndata, &st->t[st->nt]) != 0)
			bad = 1;
		else
			st->nt++;
	}
	json_free(h);
	if (bad)
		goto fail;
	return 0;

fail:
	st_close(st);
	return -1;
}

const StTensor *st_find(const Safetensors *st, const char *name)
{
	for (int i = 0; i < st->nt; i++)
		if (!strcmp(st->t[i].name, name))
			return &st->t[i];
	return NULL;
}

void st_close(Safetensors *st)
{
	for (int i = 0; i < st->nt; i++) {
		free(st->t[i].name);
		free(st->t[i].dtype);
	}
	free(st->t);
	file_unmap(st->mem, st->len);
	memset(st, 0, sizeof(*st));
}
