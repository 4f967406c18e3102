/*
 * inspect.c - `doccc inspect FILE [--json]`: what a doccc library, static
 * archive or weights file is, read from the file without loading it.
 *
 * A library's description is the info text its emitter wrote (emit.c
 * info_json): one JSON object, {"doccc_info": 1, "name", "inputs", ...},
 * kept as plain data in the ELF section .doccc_info. dlopen would run the
 * library's constructors and fails for a cuda library on a machine without
 * libcudart, so the file is read as bytes instead:
 *
 *   - ELF (64-bit little-endian): the section headers, then the section
 *     named .doccc_info through the section-name string table;
 *   - an ar archive (libNAME.a): every member that is an ELF object, the
 *     same way (GNU long names through the "//" member);
 *   - a weights file (NAME.weights: "DOCCCW01", u64 size, 64 hex sha256,
 *     zero padding to 128 bytes, the data): its header, and whether the
 *     data's sha256 is the header's (the file is hashed).
 *
 * The file comes from anywhere: every offset and size is checked against
 * the file's size before it is used (with checked arithmetic), nothing is
 * read through a cast pointer, and a file that is not what it should be
 * is reported with its name and the place ("libm.so: error: no .doccc_info
 * section: not a doccc library"), exit 1. The info text is parsed by
 * lib/json.c and checked key by key; a text of a later info version is
 * read for the keys this doccc knows (later versions only add keys).
 * Output: text for a terminal (names from the model shown as ESC_TERM
 * shows them) or, with --json, one JSON object of the same keys plus
 * "file" and "format", strings exact.
 */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cJSON.h>   /* cJSON_IsArray: lib/json.c's accessors do not tell a list from an object */

#include "../lib/lib.h"
#include "cmd.h"

static const char usage_text[] =
	"usage: doccc inspect FILE [--json]\n"
	"  FILE     a doccc library (libNAME.so), static archive (libNAME.a) or\n"
	"           weights file (NAME.weights)\n"
	"  --json   one JSON object instead of text\n";

enum { SHT_NOBITS_ = 8, SHN_XINDEX_ = 0xffff };

static uint64_t rd(const unsigned char *p, int n)
{
	uint64_t v = 0;
	for (int k = n - 1; k >= 0; k--)
		v = v << 8 | p[k];
	return v;
}

/* [off, off + len) lies inside a file of n bytes. */
static int in_file(uint64_t off, uint64_t len, size_t n)
{
	return off <= n && len <= n - off;
}

/* What an ELF file or archive member holds: the info section's bytes. */
typedef struct {
	const unsigned char *info;
	size_t ninfo;
	int found;
} Found;

/* Finds the section .doccc_info of the ELF image p[0..n). 0 with f->found
 * set or clear; -1 with a message (loc names the file or member) when the
 * image is not a readable 64-bit little-endian ELF. */
static int elf_find(const char *loc, const unsigned char *p, size_t n, Found *f)
{
	f->found = 0;
	if (n < 64) {
		diag_error(loc, "truncated ELF file (%zu bytes, shorter than its header)", n);
		return -1;
	}
	if (p[4] != 2 || p[5] != 1) {
		diag_error(loc, "only 64-bit little-endian ELF files are read (ELF class %d, data %d)", p[4], p[5]);
		return -1;
	}
	uint64_t shoff = rd(p + 0x28, 8), shent = rd(p + 0x3a, 2), shnum = rd(p + 0x3c, 2), shstr = rd(p + 0x3e, 2);
	if (!shoff) {
		diag_error(loc, "ELF file without section headers: not a doccc library");
		return -1;
	}
	if (shent < 64 || !in_file(shoff, shent, n)) {
		diag_error(loc, "damaged ELF file: section headers at offset %llu (%llu bytes each) outside the file's %zu bytes",
		           (unsigned long long)shoff, (unsigned long long)shent, n);
		return -1;
	}
	/* more than 0xff00 sections: the counts are in section 0 */
	if (!shnum)
		shnum = rd(p + shoff + 32, 8);
	if (shstr == SHN_XINDEX_)
		shstr = rd(p + shoff + 40, 4);
	int64_t span;
	if (shnum > (uint64_t)INT64_MAX / shent || ck_mul((int64_t)shnum, (int64_t)shent, &span) ||
	    !in_file(shoff, (uint64_t)span, n)) {
		diag_error(loc, "damaged ELF file: %llu section headers at offset %llu run past the file's end (%zu bytes)",
		           (unsigned long long)shnum, (unsigned long long)shoff, n);
		return -1;
	}
	if (shstr >= shnum) {
		diag_error(loc, "damaged ELF file: section name table %llu of %llu sections", (unsigned long long)shstr,
		           (unsigned long long)shnum);
		return -1;
	}
	const unsigned char *sh = p + shoff + shstr * shent;
	uint64_t stroff = rd(sh + 24, 8), strsz = rd(sh + 32, 8);
	if (rd(sh + 4, 4) == SHT_NOBITS_ || !in_file(stroff, strsz, n)) {
		diag_error(loc, "damaged ELF file: section name table at offset %llu (%llu bytes) outside the file's %zu bytes",
		           (unsigned long long)stroff, (unsigned long long)strsz, n);
		return -1;
	}
	static const char want[] = ".doccc_info";
	for (uint64_t i = 0; i < shnum; i++) {
		sh = p + shoff + i * shent;
		uint64_t nm = rd(sh, 4);
		if (nm >= strsz || strsz - nm < sizeof want || memcmp(p + stroff + nm, want, sizeof want))
			continue;
		uint64_t off = rd(sh + 24, 8), sz = rd(sh + 32, 8);
		if (rd(sh + 4, 4) == SHT_NOBITS_ || !in_file(off, sz, n)) {
			diag_error(loc, "damaged ELF file: section .doccc_info at offset %llu (%llu bytes) outside the file's %zu bytes",
			           (unsigned long long)off, (unsigned long long)sz, n);
			return -1;
		}
		if (f->found) {
			diag_error(loc, "two .doccc_info sections");
			return -1;
		}
		f->found = 1;
		f->info = p + off;
		f->ninfo = (size_t)sz;
	}
	return 0;
}

/* A member's name in an ar archive: "foo.o/" (GNU), "/123" (offset into
 * the "//" table, whose names end in "/\n"), else the field trimmed. */
static char *ar_name(Arena *a, const unsigned char *h, const unsigned char *names, size_t nnames)
{
	size_t len = 16;
	while (len && h[len - 1] == ' ')
		len--;
	if (len > 1 && h[0] == '/' && h[1] >= '0' && h[1] <= '9' && names) {
		uint64_t off = 0;
		for (size_t k = 1; k < len && h[k] >= '0' && h[k] <= '9' && off < nnames; k++)
			off = off * 10 + (uint64_t)(h[k] - '0');
		if (off < nnames) {
			size_t e = (size_t)off;
			while (e < nnames && names[e] != '\n' && names[e] != '/')
				e++;
			return arena_strndup(a, (const char *)names + off, e - (size_t)off);
		}
	}
	if (len > 1 && h[len - 1] == '/')
		len--;
	return arena_strndup(a, (const char *)h, len);
}

/* Walks an ar archive; the member holding .doccc_info goes to *f and its
 * name to *member. -1 when reported. */
static int ar_find(Arena *a, const char *path, const unsigned char *p, size_t n, Found *f, const char **member)
{
	const unsigned char *names = NULL;
	size_t nnames = 0;
	f->found = 0;
	for (size_t off = 8; off < n;) {
		if (n - off < 60 || p[off + 58] != '`' || p[off + 59] != '\n') {
			diag_error(path, "damaged ar archive: %s member header at offset %zu", n - off < 60 ? "truncated" : "bad",
			           off);
			return -1;
		}
		const unsigned char *h = p + off;
		uint64_t size = 0;
		int k = 0;
		for (; k < 10 && h[48 + k] >= '0' && h[48 + k] <= '9'; k++)
			size = size * 10 + (uint64_t)(h[48 + k] - '0');
		for (int s = k; s < 10; s++)
			if (h[48 + s] != ' ')
				k = -1;
		if (k <= 0 || !in_file(off + 60, size, n)) {
			diag_error(path, "damaged ar archive: member at offset %zu has %s", off,
			           k <= 0 ? "a size that is no number" : "a size past the archive's end");
			return -1;
		}
		const unsigned char *d = p + off + 60;
		if (!memcmp(h, "//              ", 16)) {
			names = d;
			nnames = (size_t)size;
		} else if (h[0] != '/' || (h[1] >= '0' && h[1] <= '9')) {
			const char *nm = ar_name(a, h, names, nnames);
			if (size >= 4 && !memcmp(d, "\177ELF", 4)) {
				Found mf;
				const char *loc = arena_printf(a, "%s(%s)", path, nm);
				if (elf_find(loc, d, (size_t)size, &mf))
					return -1;
				if (mf.found && f->found) {
					diag_error(path, "two members hold a doccc model (%s and %s); inspect one library at a time", *member, nm);
					return -1;
				}
				if (mf.found) {
					*f = mf;
					*member = nm;
				}
			}
		}
		off += 60 + (size_t)size;
		off += off & 1 && off < n;   /* members start at even offsets */
	}
	return 0;
}

/* ---- the info text ----------------------------------------------------------- */

/* The keys printed, in order; an entry's kind says what its value is. */
typedef enum { K_STR, K_NSTR, K_INT, K_BOOL, K_TENSORS, K_DIMS, K_OPTINT, K_STATES } Kind;
static const struct {
	const char *key, *label;
	Kind kind;
} keys[] = {
	{"doccc_info", NULL, K_INT},
	{"name", "name", K_STR},
	{"doccc_version", "doccc version", K_STR},
	{"abi_version", "abi version", K_INT},
	{"target", "target", K_STR},
	{"category", "category", K_STR},
	{"march", "march", K_STR},
	{"host_build_of", "host build of", K_NSTR},
	{"device_resident", "device resident", K_BOOL},
	{"device_backend", "device backend", K_NSTR},
	{"simulated", "simulated", K_BOOL},
	{"input_sha256", "input sha256", K_STR},
	{"options", "options", K_STR},
	{"weights_size", "weights size", K_INT},
	{"weights_external", "weights external", K_BOOL},
	{"weights_sha256", "weights sha256", K_STR},
	{"workspace_size", "workspace size", K_INT},
	{"workspace_max_size", "workspace max", K_OPTINT},      /* libraries with run-time dims: */
	{"workspace_at_create", "workspace create", K_OPTINT}, /* the bound (null: none), create's */
	{"dims", "run-time dims", K_DIMS},   /* absent before abi 4: none */
	{"state_size", "state size", K_OPTINT},  /* libraries with state (abi 5): */
	{"states", "state", K_STATES},           /* absent: stateless */
	{"inputs", "inputs", K_TENSORS},
	{"outputs", "outputs", K_TENSORS},
};

/* A non-negative integer of j; -1 (reported) when it is not one. */
static int want_count(const char *loc, const char *key, const cJSON *j, int64_t *v)
{
	if (json_int(j, v) || *v < 0) {
		diag_error(loc, "damaged doccc info: '%s' is not a non-negative integer", key);
		return -1;
	}
	return 0;
}

/* Checks a tensor list (array of {name, dtype, shape, numel, nbytes}). */
static int check_tensors(const char *loc, const char *key, const cJSON *arr)
{
	if (!cJSON_IsArray(arr)) {
		diag_error(loc, "damaged doccc info: '%s' is no list", key);
		return -1;
	}
	for (int i = 0; i < json_len(arr); i++) {
		const cJSON *t = json_at(arr, i);
		const cJSON *shape = json_get(t, "shape");
		int64_t v;
		/* numel and nbytes are null when a size is a run-time dim's expression */
		int dyn = json_is_null(json_get(t, "numel")) && json_is_null(json_get(t, "nbytes"));
		if (!json_str(json_get(t, "name")) || !json_str(json_get(t, "dtype")) || !cJSON_IsArray(shape) ||
		    (!dyn && (json_int(json_get(t, "numel"), &v) || json_int(json_get(t, "nbytes"), &v)))) {
			diag_error(loc, "damaged doccc info: %s[%d] lacks name, dtype, shape, numel or nbytes", key, i);
			return -1;
		}
		for (int d = 0; d < json_len(shape); d++)
			if (json_int(json_at(shape, d), &v) && !json_str(json_at(shape, d))) {
				diag_error(loc, "damaged doccc info: %s[%d].shape[%d] is neither a number nor an expression", key, i, d);
				return -1;
			}
	}
	return 0;
}

/* Checks the run-time dims (absent: none; else [{name, min, max|null}]). */
static int check_dims(const char *loc, const cJSON *arr)
{
	if (!arr)
		return 0;
	if (!cJSON_IsArray(arr)) {
		diag_error(loc, "damaged doccc info: 'dims' is no list");
		return -1;
	}
	for (int i = 0; i < json_len(arr); i++) {
		const cJSON *d = json_at(arr, i), *hi = json_get(d, "max");
		int64_t v;
		if (!json_str(json_get(d, "name")) || json_int(json_get(d, "min"), &v) || (json_int(hi, &v) && !json_is_null(hi))) {
			diag_error(loc, "damaged doccc info: dims[%d] lacks name, min or max", i);
			return -1;
		}
	}
	return 0;
}

/* Checks every key of the table in the parsed info. */
static int check_info(const char *loc, const cJSON *j)
{
	int64_t v;
	int bv;
	if (!json_get(j, "doccc_info")) {
		diag_error(loc, "the .doccc_info section holds no doccc info object");
		return -1;
	}
	for (size_t k = 0; k < COUNTOF(keys); k++) {
		const cJSON *x = json_get(j, keys[k].key);
		int bad = 0;
		switch (keys[k].kind) {
		case K_STR: bad = !json_str(x); break;
		case K_NSTR: bad = !json_str(x) && !(x && json_is_null(x)); break;
		case K_BOOL: bad = json_bool(x, &bv) != 0; break;
		case K_INT:
			if (want_count(loc, keys[k].key, x, &v))
				return -1;
			break;
		case K_TENSORS:
		case K_STATES:
			if ((x || keys[k].kind == K_TENSORS) && check_tensors(loc, keys[k].key, x))
				return -1;
			break;
		case K_DIMS:
			if (check_dims(loc, x))
				return -1;
			break;
		case K_OPTINT:
			if (x && !json_is_null(x) && want_count(loc, keys[k].key, x, &v))
				return -1;
			break;
		}
		if (bad) {
			diag_error(loc, "damaged doccc info: '%s' is missing or not a %s", keys[k].key,
			           keys[k].kind == K_BOOL ? "boolean" : "string");
			return -1;
		}
	}
	json_int(json_get(j, "doccc_info"), &v);
	if (v < 1) {
		diag_error(loc, "damaged doccc info: version %lld", (long long)v);
		return -1;
	}
	if (v > 1)
		diag_note(loc, "doccc info version %lld is newer than this doccc's (1): showing the keys it knows", (long long)v);
	return 0;
}

static void put_term(Buf *b, const char *s)
{
	buf_escape(b, ESC_TERM, s, strlen(s));
}

/* A tensor list, as text ("  x  float32 [1, 64]") or as JSON. */
static void put_tensors(Buf *b, const cJSON *arr, int json)
{
	if (json)
		buf_putc(b, '[');
	for (int i = 0; i < json_len(arr); i++) {
		const cJSON *t = json_at(arr, i), *shape = json_get(t, "shape");
		int64_t numel = 0, nbytes = 0;
		json_int(json_get(t, "numel"), &numel);
		json_int(json_get(t, "nbytes"), &nbytes);
		if (json) {
			buf_puts(b, i ? ", {\"name\": " : "{\"name\": ");
			buf_quote(b, json_str(json_get(t, "name")));
			buf_puts(b, ", \"dtype\": ");
			buf_quote(b, json_str(json_get(t, "dtype")));
			buf_puts(b, ", \"shape\": [");
		} else {
			buf_puts(b, "    ");
			put_term(b, json_str(json_get(t, "name")));
			buf_puts(b, "  ");
			put_term(b, json_str(json_get(t, "dtype")));
			buf_puts(b, " [");
		}
		for (int d = 0; d < json_len(shape); d++) {
			int64_t v;
			if (d)
				buf_puts(b, ", ");
			if (!json_int(json_at(shape, d), &v))
				buf_printf(b, "%lld", (long long)v);
			else if (json)
				buf_quote(b, json_str(json_at(shape, d)));
			else
				put_term(b, json_str(json_at(shape, d)));
		}
		int dyn = json_is_null(json_get(t, "numel")), inplace = -1;
		if (json_get(t, "in_place")) /* a state: is its update in place */
			json_bool(json_get(t, "in_place"), &inplace);
		const char *upd = inplace < 0 ? "" : inplace ? "  updated in place" : "  written whole";
		if (json && dyn)
			buf_puts(b, "], \"numel\": null, \"nbytes\": null");
		else if (json)
			buf_printf(b, "], \"numel\": %lld, \"nbytes\": %lld", (long long)numel, (long long)nbytes);
		else if (dyn)
			buf_printf(b, "]  bytes by the run-time dims%s\n", upd);
		else
			buf_printf(b, "]  %lld bytes%s\n", (long long)nbytes, upd);
		if (json)
			buf_puts(b, inplace < 0 ? "}" : inplace ? ", \"in_place\": true}" : ", \"in_place\": false}");
	}
	if (json)
		buf_putc(b, ']');
}

/* The run-time dims, as text ("    s77  [1, 64]") or as JSON. */
static void put_dims(Buf *b, const cJSON *arr, int json)
{
	if (json)
		buf_putc(b, '[');
	for (int i = 0; i < json_len(arr); i++) {
		const cJSON *d = json_at(arr, i);
		int64_t lo = 0, hi = 0;
		json_int(json_get(d, "min"), &lo);
		int bounded = json_int(json_get(d, "max"), &hi) == 0;
		if (json) {
			buf_puts(b, i ? ", {\"name\": " : "{\"name\": ");
			buf_quote(b, json_str(json_get(d, "name")));
			if (bounded)
				buf_printf(b, ", \"min\": %lld, \"max\": %lld}", (long long)lo, (long long)hi);
			else
				buf_printf(b, ", \"min\": %lld, \"max\": null}", (long long)lo);
			continue;
		}
		buf_puts(b, "    ");
		put_term(b, json_str(json_get(d, "name")));
		if (bounded)
			buf_printf(b, "  [%lld, %lld]\n", (long long)lo, (long long)hi);
		else
			buf_printf(b, "  [%lld, inf)\n", (long long)lo);
	}
	if (json)
		buf_putc(b, ']');
}

/* The report of a library's info j: text, or JSON after the object's
 * opening that the caller wrote. */
static void put_info(Buf *b, const cJSON *j, int json)
{
	for (size_t k = 0; k < COUNTOF(keys); k++) {
		const cJSON *x = json_get(j, keys[k].key);
		int64_t v = 0;
		int bv = 0;
		if ((keys[k].kind == K_OPTINT || keys[k].kind == K_STATES) && !x)
			continue;
		if (json) {
			buf_printf(b, ",\n  \"%s\": ", keys[k].key);
			switch (keys[k].kind) {
			case K_STR:
			case K_NSTR:
				if (json_str(x))
					buf_quote(b, json_str(x));
				else
					buf_puts(b, "null");
				break;
			case K_INT: json_int(x, &v); buf_printf(b, "%lld", (long long)v); break;
			case K_BOOL: json_bool(x, &bv); buf_puts(b, bv ? "true" : "false"); break;
			case K_TENSORS:
			case K_STATES: put_tensors(b, x, 1); break;
			case K_DIMS: put_dims(b, x, 1); break;
			case K_OPTINT:
				if (json_int(x, &v))
					buf_puts(b, "null");
				else
					buf_printf(b, "%lld", (long long)v);
				break;
			}
			continue;
		}
		if (!keys[k].label)
			continue;
		buf_printf(b, "  %-17s ", keys[k].label);
		switch (keys[k].kind) {
		case K_STR:
		case K_NSTR: put_term(b, json_str(x) ? json_str(x) : "-"); break;
		case K_INT: json_int(x, &v); buf_printf(b, "%lld", (long long)v); break;
		case K_BOOL: json_bool(x, &bv); buf_puts(b, bv ? "yes" : "no"); break;
		case K_OPTINT:
			if (json_int(x, &v))
				buf_puts(b, "no bound (grown by set_dims)");
			else
				buf_printf(b, "%lld", (long long)v);
			break;
		case K_TENSORS:
		case K_STATES:
		case K_DIMS: buf_printf(b, "%d%s", json_len(x), keys[k].kind == K_DIMS && !json_len(x) ? " (every size fixed)" : ""); break;
		}
		buf_putc(b, '\n');
		if (keys[k].kind == K_TENSORS || keys[k].kind == K_STATES)
			put_tensors(b, x, 0);
		if (keys[k].kind == K_DIMS)
			put_dims(b, x, 0);
	}
}

/* ---- the formats ------------------------------------------------------------- */

/* NAME.weights: the header, and whether the data is the header's. */
static int inspect_weights(const char *path, const unsigned char *p, size_t n, int json, Buf *out)
{
	if (n < WEIGHTS_HEADER) {
		diag_error(path, "truncated doccc weights file (%zu bytes, shorter than the 128-byte header)", n);
		return EXIT_INPUT;
	}
	uint64_t size = rd(p + 8, 8);
	char sha[65], hex[65];
	memcpy(sha, p + 16, 64);
	sha[64] = 0;
	for (int k = 0; k < 64; k++)
		if (!((sha[k] >= '0' && sha[k] <= '9') || (sha[k] >= 'a' && sha[k] <= 'f'))) {
			diag_error(path, "damaged doccc weights file: the header's sha256 is no hex digest");
			return EXIT_INPUT;
		}
	const char *why = NULL;
	if (size != n - WEIGHTS_HEADER)
		why = "holds a size of data other than its header says (truncated or extended)";
	sha256_hex_of(p + WEIGHTS_HEADER, n - WEIGHTS_HEADER, hex);
	if (!why && strcmp(hex, sha))
		why = "is damaged or was altered: its data's sha256 is not its header's";
	if (json) {
		buf_puts(out, "{\n  \"file\": ");
		buf_quote(out, path);
		buf_printf(out, ",\n  \"format\": \"weights\",\n  \"weights_size\": %llu,\n  \"data_size\": %zu,\n"
		                "  \"weights_sha256\": \"%s\",\n  \"data_sha256\": \"%s\",\n  \"intact\": %s\n}\n",
		           (unsigned long long)size, n - WEIGHTS_HEADER, sha, hex, why ? "false" : "true");
	} else {
		put_term(out, path);
		buf_printf(out, ": doccc weights file\n  %-17s %llu bytes (header)\n  %-17s %zu bytes\n  %-17s %s\n"
		                "  %-17s %s\n  %-17s %s\n",
		           "weights size", (unsigned long long)size, "data size", n - WEIGHTS_HEADER, "weights sha256", sha,
		           "data sha256", hex, "intact", why ? "NO" : "yes");
	}
	if (why) {
		diag_error(path, "the weights file %s", why);
		return EXIT_INPUT;
	}
	return EXIT_OK;
}

/* A library, archive or weights file in p[0..n); the report goes to out
 * (not written on failure, except a damaged weights file's). */
int inspect_bytes(Arena *a, const char *path, const unsigned char *p, size_t n, int json, Buf *out)
{
	Found f = {0};
	const char *member = NULL, *format = "static archive";
	if (n >= 8 && !memcmp(p, WEIGHTS_MAGIC, 8))
		return inspect_weights(path, p, n, json, out);
	if (n >= 4 && !memcmp(p, "\177ELF", 4)) {
		if (elf_find(path, p, n, &f))
			return EXIT_INPUT;
		uint64_t type = n >= 18 ? rd(p + 16, 2) : 0;
		format = type == 3 ? "shared library" : type == 1 ? "object file" : type == 2 ? "executable" : "ELF file";
	} else if (n >= 8 && !memcmp(p, "!<arch>\n", 8)) {
		if (ar_find(a, path, p, n, &f, &member))
			return EXIT_INPUT;
	} else if (n >= 8 && !memcmp(p, "!<thin>\n", 8)) {
		diag_error(path, "a thin ar archive (its members are other files): give the objects or a normal archive");
		return EXIT_INPUT;
	} else {
		diag_error(path, "not a doccc library: neither an ELF file, an ar archive nor a doccc weights file");
		return EXIT_INPUT;
	}
	if (!f.found) {
		diag_error(path, "no .doccc_info section%s: not a doccc library, or one built before "
		           "descriptor ABI 3 (which added the section)", !strcmp(format, "static archive") ? " in any member" : "");
		return EXIT_INPUT;
	}
	const char *loc = arena_printf(a, "%s%s%s%s: .doccc_info", path, member ? "(" : "", member ? member : "", member ? ")" : "");
	/* the section: the text, its NUL, the linker's padding */
	size_t len = strnlen((const char *)f.info, f.ninfo);
	for (size_t k = len; k < f.ninfo; k++)
		if (f.info[k]) {
			diag_error(loc, "more than one doccc model in one file; inspect one library at a time");
			return EXIT_INPUT;
		}
	cJSON *j = json_parse((const char *)f.info, len, loc);
	if (!j)
		return EXIT_INPUT;
	if (check_info(loc, j)) {
		json_free(j);
		return EXIT_INPUT;
	}
	if (json) {
		buf_puts(out, "{\n  \"file\": ");
		buf_quote(out, path);
		buf_printf(out, ",\n  \"format\": \"%s\",\n  \"member\": ", format);
		if (member)
			buf_quote(out, member);
		else
			buf_puts(out, "null");
		put_info(out, j, 1);
		buf_puts(out, "\n}\n");
	} else {
		put_term(out, path);
		buf_printf(out, ": doccc %s", format);
		if (member) {
			buf_puts(out, " (model in ");
			put_term(out, member);
			buf_putc(out, ')');
		}
		buf_putc(out, '\n');
		put_info(out, j, 0);
	}
	json_free(j);
	return EXIT_OK;
}

/* The file mapped read-only (NULL for an empty one) and inspected. */
static int inspect_file(const char *path, int json, Buf *out)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	struct stat st;
	if (fd < 0 || fstat(fd, &st) != 0) {
		diag_error(path, "cannot open: %s", strerror(errno));
		if (fd >= 0)
			close(fd);
		return EXIT_INPUT;
	}
	if (!S_ISREG(st.st_mode)) {
		close(fd);
		diag_error(path, "not a regular file");
		return EXIT_INPUT;
	}
	size_t n = (size_t)st.st_size;
	void *m = n ? mmap(NULL, n, PROT_READ, MAP_PRIVATE, fd, 0) : NULL;
	int err = errno;
	close(fd);
	if (m == MAP_FAILED) {
		diag_error(path, "cannot map: %s", strerror(err));
		return EXIT_INPUT;
	}
	Arena *a = arena_new();
	int rc = inspect_bytes(a, path, m ? m : (const void *)"", n, json, out);
	arena_free(a);
	if (m)
		munmap(m, n);
	return rc;
}

int cmd_inspect(int argc, char **argv)
{
	const char *path = NULL;
	int json = 0;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
			fputs(usage_text, stdout);
			return EXIT_OK;
		}
		if (!strcmp(argv[i], "--json"))
			json = 1;
		else if (argv[i][0] == '-' && argv[i][1]) {
			diag_error("doccc inspect", "unknown option '%s'", argv[i]);
			fputs(usage_text, stderr);
			return EXIT_USAGE;
		} else if (path) {
			diag_error("doccc inspect", "unexpected argument '%s' (one file only)", argv[i]);
			fputs(usage_text, stderr);
			return EXIT_USAGE;
		} else
			path = argv[i];
	}
	if (!path) {
		diag_error("doccc inspect", "no file given");
		fputs(usage_text, stderr);
		return EXIT_USAGE;
	}
	Buf out = {0};
	int rc = inspect_file(path, json, &out);
	if (out.len && (fwrite(out.s, 1, out.len, stdout) != out.len || fflush(stdout) != 0)) {
		diag_error("doccc inspect", "cannot write to standard output: %s", strerror(errno));
		rc = EXIT_INPUT;
	}
	buf_free(&out);
	return rc;
}
