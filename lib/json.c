/*
 * json.c - JSON reading on top of cJSON, exact for 64-bit integers.
 *
 * cJSON keeps numbers as doubles, exact only up to 2^53, but exported graphs
 * hold int64 values such as a slice end of 2^63-1. json_parse therefore
 * copies the text through a lexical pre-pass first: an integer literal
 * (no fraction, no exponent) outside strings with more than 15 digits is
 * rewritten as a string holding '\x01', the sign if any, and the digits:
 * 9223372036854775807 becomes "\x01" "9223372036854775807" (written here as
 * two C literals; the JSON text gets the raw 0x01 byte). A control character
 * cannot appear unescaped in a valid JSON string, and the pre-pass enforces
 * that (cJSON itself accepts raw control bytes, reading them outside
 * strings as white space), and refuses the escapes \u0001, which would
 * forge the tag, and \u0000, which would cut a name short; so the tag
 * cannot collide with a string of the input. json_int and json_float read
 * both forms; json_str does not see tagged strings as strings.
 *
 * json_parse_ex with JSON_REALS also tags every number literal that has a
 * fraction or an exponent, as '\x01', '~' and the literal, so that a reader
 * can tell 1.0 from 1 (json_is_real): the SDFG dump writes a float
 * attribute as a real literal always, an integer one as an integer.
 *
 * The pre-pass keeps a list of segments (copied or inserted text) so that a
 * cJSON error offset in the rewritten text maps back to the original offset,
 * and the message gives the line and column of the original file.
 *
 * Invariants: the trees returned are plain cJSON trees (json_free is
 * cJSON_Delete); the whole text must be one JSON value (trailing non-space
 * is an error); no state survives a call (cJSON's own error pointer aside).
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <cJSON.h>

#include "lib.h"

enum { JSON_MAX_EXACT_DIGITS = 15 };
#define JSON_TAG '\x01'
#define JSON_REAL '~'   /* after the tag: a real literal (JSON_REALS) */

/* A stretch of the rewritten text: from new offset nofs on, either copied
 * from original offset oofs on (copy = 1), or inserted (every byte maps to
 * oofs). */
typedef struct {
	size_t nofs, oofs;
	int copy;
} JsonSeg;

typedef struct {
	JsonSeg *seg;
	size_t nseg, cap;
} JsonMap;

static void json_map_add(JsonMap *m, size_t nofs, size_t oofs, int copy)
{
	if (m->nseg == m->cap) {
		size_t cap = m->cap ? 2 * m->cap : 16;
		JsonSeg *s = realloc(m->seg, cap * sizeof(*s));
		if (!s) {
			fprintf(stderr, "doccc: fatal error: out of memory\n");
			abort();
		}
		m->seg = s;
		m->cap = cap;
	}
	m->seg[m->nseg++] = (JsonSeg){nofs, oofs, copy};
}

/* Original offset of new offset p. */
static size_t json_map_back(const JsonMap *m, size_t p)
{
	size_t lo = 0, hi = m->nseg; /* find the last segment with nofs <= p */
	if (!m->nseg)
		return p;
	while (hi - lo > 1) {
		size_t mid = (lo + hi) / 2;
		if (m->seg[mid].nofs <= p)
			lo = mid;
		else
			hi = mid;
	}
	const JsonSeg *s = &m->seg[lo];
	return s->copy ? s->oofs + (p - s->nofs) : s->oofs;
}

static int is_digit(int c)
{
	return c >= '0' && c <= '9';
}

/* Is text[i..len) a \u escape of U+0000 or U+0001? */
static int json_bad_escape(const char *text, size_t len, size_t i)
{
	return len - i >= 6 && text[i + 1] == 'u' && !memcmp(text + i + 2, "000", 3) &&
	       (text[i + 5] == '0' || text[i + 5] == '1');
}

/* Is t[0..n) a number literal as JSON spells it? (A malformed one is left
 * to cJSON, which reports it.) */
static int json_number(const char *t, size_t n)
{
	size_t i = t[0] == '-';
	if (i >= n || !is_digit(t[i]))
		return 0;
	if (t[i] == '0')
		i++;
	else
		while (i < n && is_digit(t[i]))
			i++;
	if (i < n && t[i] == '.') {
		if (++i >= n || !is_digit(t[i]))
			return 0;
		while (i < n && is_digit(t[i]))
			i++;
	}
	if (i < n && (t[i] == 'e' || t[i] == 'E')) {
		i++;
		if (i < n && (t[i] == '+' || t[i] == '-'))
			i++;
		if (i >= n || !is_digit(t[i]))
			return 0;
		while (i < n && is_digit(t[i]))
			i++;
	}
	return i == n;
}

/* The pre-pass: copy text[0..len) into out, tagging long integer literals,
 * and record the segments in m (an empty m means identity). Returns the
 * offset of the first control character (outside strings: but tab, line
 * feed and carriage return) or refused escape, or len if there is none;
 * *why then says which. */
static size_t json_rewrite(const char *text, size_t len, Buf *out, JsonMap *m, const char **why, int flags)
{
	size_t copied = 0; /* text[0..copied) is in out */
	size_t i = 0;
	json_map_add(m, 0, 0, 1);
	while (i < len) {
		char c = text[i];
		if (c == '"') {
			for (i++; i < len && text[i] != '"'; i++) {
				if ((unsigned char)text[i] < 0x20) {
					*why = "a control character in a string";
					return i;
				}
				if (text[i] == '\\' && json_bad_escape(text, len, i)) {
					*why = "the escape \\u0000 or \\u0001 in a string";
					return i;
				}
				if (text[i] == '\\' && i + 1 < len && (unsigned char)text[i + 1] < 0x20) {
					*why = "a control character in a string"; /* escaped is still raw */
					return i + 1;
				}
				if (text[i] == '\\')
					i++;
			}
			i++;
			continue;
		}
		if ((unsigned char)c < 0x20 && c != '\t' && c != '\n' && c != '\r') {
			*why = "a control character";
			return i;
		}
		if (c != '-' && !is_digit(c)) {
			i++;
			continue;
		}
		/* A number token: sign, digits, then maybe fraction and exponent. */
		size_t start = i;
		if (c == '-')
			i++;
		size_t d0 = i;
		while (i < len && is_digit(text[i]))
			i++;
		size_t ndigits = i - d0;
		int integral = !(i < len && (text[i] == '.' || text[i] == 'e' || text[i] == 'E'));
		while (i < len && text[i] && strchr("0123456789.eE+-", text[i]))
			i++;
		int real = !integral && (flags & JSON_REALS) && json_number(text + start, i - start);
		if (!real && (!integral || ndigits <= JSON_MAX_EXACT_DIGITS || text[d0] == '0'))
			continue;
		/* a number where a key belongs stays cJSON's error, not a tagged key */
		size_t k = i;
		while (k < len && (text[k] == ' ' || text[k] == '\t' || text[k] == '\n' || text[k] == '\r'))
			k++;
		if (k < len && text[k] == ':')
			continue;
		buf_putn(out, text + copied, start - copied);
		json_map_add(m, out->len, start, 0);
		buf_putc(out, '"');
		buf_putc(out, JSON_TAG);
		if (real)
			buf_putc(out, JSON_REAL);
		json_map_add(m, out->len, start, 1);
		buf_putn(out, text + start, i - start);
		json_map_add(m, out->len, i, 0);
		buf_putc(out, '"');
		json_map_add(m, out->len, i, 1);
		copied = i;
	}
	buf_putn(out, text + copied, len - copied);
	return len;
}

/* Report a parse error at original offset off: why, or "near" the text
 * there when why is NULL. */
static void json_report(const char *text, size_t len, size_t off, const char *fname, const char *why)
{
	int line = 1;
	size_t bol = 0;
	if (off > len)
		off = len;
	for (size_t i = 0; i < off; i++)
		if (text[i] == '\n') {
			line++;
			bol = i + 1;
		}
	char near[21];
	size_t n = 0;
	for (size_t i = off; i < len && n < 20 && text[i] != '\n' && text[i] != '\r'; i++)
		near[n++] = (unsigned char)text[i] < 0x20 ? '?' : text[i];
	near[n] = '\0';
	Buf loc = {0};
	buf_printf(&loc, "%s:%d:%zu", fname ? fname : "<json>", line, off - bol + 1);
	if (why)
		diag_error(loc.s, "malformed JSON: %s", why);
	else if (n)
		diag_error(loc.s, "malformed JSON near '%s'", near);
	else
		diag_error(loc.s, "malformed JSON at end of input");
	buf_free(&loc);
}

cJSON *json_parse(const char *text, size_t len, const char *fname)
{
	return json_parse_ex(text, len, fname, 0);
}

cJSON *json_parse_ex(const char *text, size_t len, const char *fname, int flags)
{
	Buf nt = {0};
	JsonMap m = {0};
	const char *why = NULL;
	size_t bad = json_rewrite(text, len, &nt, &m, &why, flags);
	if (bad < len) {
		json_report(text, len, bad, fname, why);
		free(m.seg);
		buf_free(&nt);
		return NULL;
	}
	if (!nt.s)
		buf_putn(&nt, "", 0); /* empty input: still a NUL-terminated string */
	/* Passing the terminating NUL in the length makes cJSON require that
	 * nothing but white space follows the value. */
	const char *end = NULL;
	cJSON *j = cJSON_ParseWithLengthOpts(nt.s, nt.len + 1, &end, 1);
	if (!j) {
		size_t p = end && end >= nt.s && end <= nt.s + nt.len ? (size_t)(end - nt.s) : 0;
		json_report(text, len, json_map_back(&m, p), fname, NULL);
	}
	free(m.seg);
	buf_free(&nt);
	return j;
}

void json_free(cJSON *j)
{
	cJSON_Delete(j);
}

cJSON *json_get(const cJSON *obj, const char *key)
{
	if (!cJSON_IsObject(obj))
		return NULL;
	return cJSON_GetObjectItemCaseSensitive(obj, key);
}

int json_is_null(const cJSON *j)
{
	return !j || cJSON_IsNull(j);
}

/* The digits of a tagged big integer, or NULL. */
static const char *json_tagged(const cJSON *j)
{
	if (!cJSON_IsString(j) || !j->valuestring || j->valuestring[0] != JSON_TAG)
		return NULL;
	return j->valuestring + 1;
}

int json_is_real(const cJSON *j)
{
	const char *t = json_tagged(j);
	return t && t[0] == JSON_REAL;
}

int json_int(const cJSON *j, int64_t *out)
{
	const char *digits = json_tagged(j);
	if (digits && digits[0] == JSON_REAL)
		return -1;
	if (digits) {
		char *end;
		errno = 0;
		long long v = strtoll(digits, &end, 10);
		if (errno || end == digits || *end)
			return -1;
		*out = v;
		return 0;
	}
	if (!cJSON_IsNumber(j))
		return -1;
	double d = j->valuedouble;
	/* -2^63 is exact as a double; 2^63 is the first value out of range. */
	if (!isfinite(d) || d != floor(d) || d < -9223372036854775808.0 || d >= 9223372036854775808.0)
		return -1;
	*out = (int64_t)d;
	return 0;
}

int json_float(const cJSON *j, double *out)
{
	if (cJSON_IsNumber(j)) {
		*out = j->valuedouble;
		return 0;
	}
	const char *digits = json_tagged(j);
	if (digits) {
		char *end;
		if (digits[0] == JSON_REAL)
			digits++;
		double v = strtod(digits, &end);
		if (end == digits || *end)
			return -1;
		*out = v;
		return 0;
	}
	const char *s = json_str(j);
	if (!s)
		return -1;
	if (!strcmp(s, "Infinity"))
		*out = INFINITY;
	else if (!strcmp(s, "-Infinity"))
		*out = -INFINITY;
	else if (!strcmp(s, "NaN"))
		*out = NAN;
	else
		return -1;
	return 0;
}

int json_bool(const cJSON *j, int *out)
{
	if (!cJSON_IsBool(j))
		return -1;
	*out = cJSON_IsTrue(j) ? 1 : 0;
	return 0;
}

const char *json_str(const cJSON *j)
{
	if (!cJSON_IsString(j) || json_tagged(j))
		return NULL;
	return j->valuestring;
}

int json_len(const cJSON *j)
{
	if (!cJSON_IsArray(j) && !cJSON_IsObject(j))
		return 0;
	return cJSON_GetArraySize(j);
}

cJSON *json_at(const cJSON *arr, int i)
{
	if (!cJSON_IsArray(arr) && !cJSON_IsObject(arr))
		return NULL;
	return i < 0 ? NULL : cJSON_GetArrayItem(arr, i);
}

const char *json_union_tag(const cJSON *j, cJSON **value)
{
	if (value)
		*value = NULL;
	if (!cJSON_IsObject(j) || !j->child || j->child->next)
		return NULL;
	if (value)
		*value = j->child;
	return j->child->string;
}
