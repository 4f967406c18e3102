/*
 * fuzz_names.c - buf_escape on any bytes, each kind checked by reading its
 * output back the way its consumer does.
 *
 * The input is split in two names (the first byte picks the split), and
 * each is written every way. A tiny C lexer here runs the translation
 * phases that matter (trigraphs, then line splices, with gcc's and clang's
 * blanks between backslash and newline) and then:
 *   ESC_COMMENT  the body between a comment's opener and closer is
 *                exactly one comment, with no opener inside; a line
 *                comment of it ends at the newline after it; the body is
 *                printable UTF-8;
 *   ESC_CSTR     the text is exactly one string literal, plain ASCII, that
 *                decodes back to the name's bytes;
 *   ESC_IDENT    a C identifier, and the two names give the same one only
 *                when they are the same bytes;
 *   ESC_JSON     json_parse reads one string (the name itself when it is
 *                valid UTF-8 without NUL); a name with the bytes 0 or 1,
 *                whose escapes json_parse refuses by design, reads as one
 *                string with cJSON;
 *   ESC_DOT      one DOT double-quoted string of printable UTF-8;
 *   ESC_TERM     printable UTF-8 without bidirectional controls.
 * The UTF-8 reader here is written apart from buf.c's on purpose.
 */
#include <string.h>

#include <cJSON.h>

#include "fuzz.h"

/* Code point of the UTF-8 sequence at p (n bytes left) in *cp and its
 * length, or 0 when it is invalid. */
static int utf8(const unsigned char *p, size_t n, unsigned *cp)
{
	unsigned c = p[0];
	int len;
	if (c < 0x80) { *cp = c; return 1; }
	if (c >= 0xc2 && c <= 0xdf) len = 2, c &= 0x1f;
	else if (c >= 0xe0 && c <= 0xef) len = 3, c &= 0x0f;
	else if (c >= 0xf0 && c <= 0xf4) len = 4, c &= 0x07;
	else return 0;
	if ((size_t)len > n) return 0;
	for (int i = 1; i < len; i++) {
		if ((p[i] & 0xc0) != 0x80) return 0;
		c = c << 6 | (p[i] & 0x3fu);
	}
	if ((len == 3 && c < 0x800) || (len == 4 && (c < 0x10000 || c > 0x10ffff)) || (c >= 0xd800 && c <= 0xdfff))
		return 0;
	*cp = c;
	return len;
}

/* Printable UTF-8: no control character (C0, DEL, C1), no bidirectional
 * control, line or paragraph separator, byte-order mark. */
static int printable(const char *s, size_t n)
{
	const unsigned char *p = (const unsigned char *)s;
	for (size_t i = 0; i < n;) {
		unsigned cp;
		int len = utf8(p + i, n - i, &cp);
		if (!len || cp < 0x20 || (cp >= 0x7f && cp < 0xa0) || cp == 0x61c || cp == 0x200e || cp == 0x200f ||
		    (cp >= 0x2028 && cp <= 0x202e) || (cp >= 0x2066 && cp <= 0x2069) || cp == 0xfeff)
			return 0;
		i += (size_t)len;
	}
	return 1;
}

/* Translation phases 1 and 2: trigraphs replaced, line splices removed. */
static void phases(const Buf *in, Buf *out)
{
	static const char tri[] = "=(/)'<!>-", rep[] = "#[\\]^{|}~";
	Buf t = {0};
	for (size_t i = 0; i < in->len; i++) {
		const char *k;
		if (i + 2 < in->len && in->s[i] == '?' && in->s[i + 1] == '?' && in->s[i + 2] && (k = strchr(tri, in->s[i + 2]))) {
			buf_putc(&t, rep[k - tri]);
			i += 2;
		} else
			buf_putc(&t, in->s[i]);
	}
	for (size_t i = 0; i < t.len; i++) {
		if (t.s[i] == '\\') {
			size_t j = i + 1;
			while (j < t.len && (t.s[j] == ' ' || t.s[j] == '\t'))
				j++;
			if (j < t.len && t.s[j] == '\n') {
				i = j;
				continue;
			}
		}
		buf_putc(out, t.s[i]);
	}
	buf_putn(out, "", 0);
	buf_free(&t);
}

static void check_comment(const char *name, size_t n)
{
	Buf body = {0}, blk = {0}, line = {0}, p = {0};
	buf_escape(&body, ESC_COMMENT, name, n);
	if (!printable(body.s ? body.s : "", body.len))
		fuzz_fail("comment body not printable UTF-8");
	buf_puts(&blk, "/*");
	buf_putn(&blk, body.s ? body.s : "", body.len);
	buf_puts(&blk, "*/");
	phases(&blk, &p);
	const char *end = strstr(p.s + 2, "*/");
	if (p.len < 4 || memcmp(p.s, "/*", 2) || !end || (size_t)(end - p.s) != p.len - 2)
		fuzz_fail("\"/*\" BODY \"*/\" is not exactly one comment: %s", blk.s);
	const char *open = strstr(p.s + 2, "/*");
	if (open && open < end)
		fuzz_fail("a comment opener inside the body: %s", blk.s);
	buf_free(&p);
	buf_puts(&line, "//");
	buf_putn(&line, body.s ? body.s : "", body.len);
	buf_puts(&line, "\nx");
	phases(&line, &p);
	const char *nl = strchr(p.s, '\n');
	if (!nl || (size_t)(nl - p.s) != p.len - 2)
		fuzz_fail("a // comment of the body does not end at its newline: %s", line.s);
	buf_free(&p);
	buf_free(&body);
	buf_free(&blk);
	buf_free(&line);
}

static int octal(int c)
{
	return c >= '0' && c <= '7';
}

static int hexval(int c)
{
	return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

/* Decode the one C string literal that s must be into out; 0 or -1. */
static int lex_cstr(const char *s, size_t n, Buf *out)
{
	if (n < 2 || s[0] != '"')
		return -1;
	size_t i = 1;
	for (;;) {
		if (i >= n || s[i] == '\n')
			return -1;
		int c = (unsigned char)s[i];
		if (c == '"')
			return i == n - 1 ? 0 : -1;
		if (c != '\\') {
			buf_putc(out, c);
			i++;
			continue;
		}
		if (++i >= n)
			return -1;
		c = (unsigned char)s[i];
		const char *simple = strchr("n\nt\tr\ra\ab\bf\fv\v\\\\\"\"''??", c);
		if (octal(c)) {
			int v = 0, k = 0;
			while (k < 3 && i < n && octal(s[i]))
				v = v * 8 + (s[i++] - '0'), k++;
			buf_putc(out, v & 0xff);
		} else if (c == 'x') {
			int v = 0, k = 0;
			for (i++; i < n && hexval(s[i]) >= 0 && v <= 0xff; i++, k++)
				v = v * 16 + hexval(s[i]);
			if (!k || v > 0xff)
				return -1;
			buf_putc(out, v);
		} else if (c && simple && (simple - "n\nt\tr\ra\ab\bf\fv\v\\\\\"\"''??") % 2 == 0) {
			buf_putc(out, simple[1]);
			i++;
		} else
			return -1;
	}
}

static void check_cstr(const char *name, size_t n)
{
	Buf lit = {0}, p = {0}, dec = {0};
	buf_escape(&lit, ESC_CSTR, name, n);
	for (size_t i = 0; i < lit.len; i++)
		if ((unsigned char)lit.s[i] < 0x20 || (unsigned char)lit.s[i] >= 0x7f)
			fuzz_fail("a C string literal with a byte outside printable ASCII: %s", lit.s);
	phases(&lit, &p);
	if (lex_cstr(p.s, p.len, &dec) || dec.len != n || (n && memcmp(dec.s, name, n)))
		fuzz_fail("not one C string literal decoding to the name: %s", lit.s);
	buf_free(&lit);
	buf_free(&p);
	buf_free(&dec);
}

static void ident_of(const char *name, size_t n, Buf *id)
{
	buf_escape(id, ESC_IDENT, name, n);
	if (!id->len || (id->s[0] >= '0' && id->s[0] <= '9'))
		fuzz_fail("identifier empty or starting with a digit: %s", id->s ? id->s : "");
	for (size_t i = 0; i < id->len; i++) {
		int c = id->s[i];
		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_'))
			fuzz_fail("identifier with a character outside [A-Za-z0-9_]: %s", id->s);
	}
}

static void check_json(const char *name, size_t n)
{
	Buf q = {0};
	buf_escape(&q, ESC_JSON, name, n);
	fuzz_begin();
	cJSON *j = json_parse(q.s, q.len, "name.json");
	/* json_parse refuses the escapes \u0000 and \u0001 (a documented limit of
	 * doccc's reader: one cuts a name short, the other forges the tag of an
	 * exact big integer), so a name holding either byte is read back with
	 * cJSON itself, which takes any valid JSON string */
	if (memchr(name, 0, n) || memchr(name, 1, n)) {
		if (j || !fuzz_errors())
			fuzz_fail("json_parse took \\u0000 or \\u0001, or refused it silently: %s", q.s);
		cJSON *c = cJSON_ParseWithLength(q.s, q.len);
		if (!c || !cJSON_IsString(c))
			fuzz_fail("ESC_JSON is no JSON string: %s", q.s);
		cJSON_Delete(c);
		buf_free(&q);
		return;
	}
	const char *s = j ? json_str(j) : NULL;
	if (!s)
		fuzz_fail("ESC_JSON is no JSON string: %s", q.s);
	int exact = 1; /* valid UTF-8 without NUL reads back exactly */
	for (size_t i = 0; i < n && exact; i++)
		exact = name[i] != 0;
	unsigned cp;
	for (size_t i = 0; i < n && exact;) {
		int len = utf8((const unsigned char *)name + i, n - i, &cp);
		exact = len > 0;
		i += (size_t)(len > 0 ? len : 1);
	}
	if (exact && (strlen(s) != n || memcmp(s, name, n)))
		fuzz_fail("ESC_JSON of valid UTF-8 does not read back: %s", q.s);
	json_free(j);
	buf_free(&q);
}

static void check_dot(const char *name, size_t n)
{
	Buf q = {0};
	buf_escape(&q, ESC_DOT, name, n);
	if (q.len < 2 || q.s[0] != '"' || !printable(q.s, q.len))
		fuzz_fail("ESC_DOT not a printable quoted string: %s", q.s);
	size_t i = 1;
	while (i < q.len && q.s[i] != '"')
		i += q.s[i] == '\\' ? 2 : 1;
	if (i != q.len - 1)
		fuzz_fail("ESC_DOT is not exactly one DOT string: %s", q.s);
	buf_free(&q);
}

static void check_term(const char *name, size_t n)
{
	Buf t = {0};
	buf_escape(&t, ESC_TERM, name, n);
	if (!printable(t.s ? t.s : "", t.len))
		fuzz_fail("ESC_TERM not printable: %s", t.s);
	buf_free(&t);
}

static void check_all(const char *name, size_t n)
{
	check_comment(name, n);
	check_cstr(name, n);
	check_json(name, n);
	check_dot(name, n);
	check_term(name, n);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size > 4096)
		return 0;
	size_t cut = size ? 1 + (size > 1 ? data[0] % size : 0) : 0;
	if (cut > size)
		cut = size;
	const char *a = (const char *)data + (size ? 1 : 0), *b = (const char *)data + cut;
	size_t na = cut - (size ? 1 : 0), nb = size - cut;
	check_all(a, na);
	check_all(b, nb);
	Buf ia = {0}, ib = {0};
	ident_of(a, na, &ia);
	ident_of(b, nb, &ib);
	if (ia.len == ib.len && !memcmp(ia.s, ib.s, ia.len) && (na != nb || memcmp(a, b, na)))
		fuzz_fail("two names give one identifier: %s", ia.s);
	buf_free(&ia);
	buf_free(&ib);
	return 0;
}
