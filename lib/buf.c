/*
 * buf.c - growable, malloc'd strings (a Buf starts as {0}), and the one place
 * where text from outside is made safe for what it is written into.
 *
 * Invariants: once anything was written, b->s is NUL-terminated and
 * b->len < b->cap; the buffer grows by doubling. buf_free returns it to {0}.
 * Out of memory aborts, as in the arena.
 *
 * Escaping (lib.h lists what each kind guarantees): buf_escape walks the
 * input one character at a time, a character being a valid UTF-8 sequence
 * or else a single byte. A character is "plain" when it is printable: ASCII
 * 0x20-0x7e, or a UTF-8 code point that is no C1 control, no line or
 * paragraph separator, no byte-order mark and no bidirectional control (the
 * "Trojan Source" characters, which make text read differently from what it
 * is). Each kind writes plain characters through, bar the few its syntax
 * gives a meaning, and spells every other one out; the kinds differ in the
 * spelling (octal escapes in C strings, \uXXXX in JSON, visible \xNN text
 * in comments, DOT labels and terminals) and in which ASCII characters are
 * special:
 *   comments  '\\' (line splices), "*" "/" next to each other or at the
 *             ends (so a body never closes or opens a comment, whatever
 *             the caller writes around it) and the second '?' of "??"
 *             (trigraphs are live under -std=c11; "??/" is a backslash);
 *   C strings '"', '\\', and again the second '?' of "??", as \?; every
 *             byte >= 0x80 as octal too, so the literal is plain ASCII;
 *   JSON      '"', '\\';  DOT  '"', '\\' (DOT's own escapes start with it).
 * Identifiers are a code of their own (lib.h): injective because a plain
 * identifier never starts with the prefix that every encoded one has, and
 * the encoding after it decodes uniquely ('_' is always followed by '_' or
 * two hex digits).
 */
#include <stdlib.h>
#include <string.h>

#include "lib.h"

/* Make room for n more bytes plus the terminating NUL. */
static void buf_reserve(Buf *b, size_t n)
{
	if (n < b->cap - b->len && b->s)
		return;
	if (n > SIZE_MAX / 4 - b->len) {
		fprintf(stderr, "doccc: fatal error: out of memory (string of %zu bytes)\n", n);
		abort();
	}
	size_t cap = b->cap ? b->cap : 64;
	while (cap <= b->len + n)
		cap *= 2;
	char *s = realloc(b->s, cap);
	if (!s) {
		fprintf(stderr, "doccc: fatal error: out of memory (string of %zu bytes)\n", cap);
		abort();
	}
	b->s = s;
	b->cap = cap;
}

void buf_putn(Buf *b, const char *s, size_t n)
{
	buf_reserve(b, n);
	if (n)
		memcpy(b->s + b->len, s, n);
	b->len += n;
	b->s[b->len] = '\0';
}

void buf_puts(Buf *b, const char *s)
{
	buf_putn(b, s, strlen(s));
}

void buf_putc(Buf *b, int c)
{
	char ch = (char)c;
	buf_putn(b, &ch, 1);
}

void buf_vprintf(Buf *b, const char *fmt, va_list ap)
{
	va_list ap2;
	va_copy(ap2, ap);
	int n = vsnprintf(NULL, 0, fmt, ap2);
	va_end(ap2);
	if (n < 0)
		diag_internal(__FILE__, __LINE__, "bad format string '%s'", fmt);
	buf_reserve(b, (size_t)n);
	vsnprintf(b->s + b->len, (size_t)n + 1, fmt, ap);
	b->len += (size_t)n;
}

void buf_printf(Buf *b, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	buf_vprintf(b, fmt, ap);
	va_end(ap);
}

void buf_free(Buf *b)
{
	free(b->s);
	b->s = NULL;
	b->len = b->cap = 0;
}

/* The length (1-4) of the valid UTF-8 sequence at p (of n > 0 bytes), its
 * code point in *cp; 0 if the byte at p starts none (overlong forms,
 * surrogates and code points past U+10FFFF are invalid). */
static int utf8_at(const unsigned char *p, size_t n, uint32_t *cp)
{
	static const uint32_t minv[5] = {0, 0, 0x80, 0x800, 0x10000};
	int len = p[0] < 0x80 ? 1 : (p[0] & 0xe0) == 0xc0 ? 2 : (p[0] & 0xf0) == 0xe0 ? 3 : (p[0] & 0xf8) == 0xf0 ? 4 : 0;
	if (!len || (size_t)len > n)
		return 0;
	uint32_t c = len == 1 ? p[0] : p[0] & (0x7f >> len);
	for (int i = 1; i < len; i++) {
		if ((p[i] & 0xc0) != 0x80)
			return 0;
		c = c << 6 | (p[i] & 0x3f);
	}
	if (c < minv[len] || c > 0x10ffff || (c >= 0xd800 && c <= 0xdfff))
		return 0;
	*cp = c;
	return len;
}

/* A printable code point (see the top of the file). */
static int cp_plain(uint32_t c)
{
	if (c < 0x20 || (c >= 0x7f && c < 0xa0))
		return 0;
	return !(c == 0x061c || c == 0x200e || c == 0x200f || (c >= 0x2028 && c <= 0x202e) ||
	         (c >= 0x2066 && c <= 0x2069) || c == 0xfeff);
}

/* The visible form of a character that is not plain, byte by byte. */
static void put_visible(Buf *b, const unsigned char *p, int len)
{
	for (int i = 0; i < len; i++) {
		switch (p[i]) {
		case '\n': buf_puts(b, "\\n"); break;
		case '\t': buf_puts(b, "\\t"); break;
		case '\r': buf_puts(b, "\\r"); break;
		default: buf_printf(b, "\\x%02x", p[i]); break;
		}
	}
}

/* The escapes C strings and JSON share (\" \\ \n \t \r) for c; 0 when c
 * has none of them. */
static int put_shared_escape(Buf *b, int c)
{
	static const char from[] = "\"\\\n\t\r", to[] = "\"\\ntr";
	const char *k = c ? strchr(from, c) : NULL;
	if (!k)
		return 0;
	buf_putc(b, '\\');
	buf_putc(b, to[k - from]);
	return 1;
}

static int is_alnum(int c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

#define IDENT_PREFIX "dcx_"

static void put_ident(Buf *b, const unsigned char *s, size_t n)
{
	int plain = n > 0 && !(s[0] >= '0' && s[0] <= '9') &&
	            !(n >= strlen(IDENT_PREFIX) && !memcmp(s, IDENT_PREFIX, strlen(IDENT_PREFIX)));
	for (size_t i = 0; i < n && plain; i++)
		plain = is_alnum(s[i]) || s[i] == '_';
	if (plain) {
		buf_putn(b, (const char *)s, n);
		return;
	}
	buf_puts(b, IDENT_PREFIX);
	for (size_t i = 0; i < n; i++) {
		if (is_alnum(s[i]))
			buf_putc(b, s[i]);
		else if (s[i] == '_')
			buf_puts(b, "__");
		else
			buf_printf(b, "_%02X", s[i]);
	}
}

void buf_escape(Buf *b, Esc how, const char *str, size_t n)
{
	const unsigned char *s = (const unsigned char *)(str ? str : "");
	if (!str)
		n = 0;
	if (how == ESC_IDENT) {
		put_ident(b, s, n);
		return;
	}
	int quoted = how == ESC_CSTR || how == ESC_JSON || how == ESC_DOT;
	if (quoted)
		buf_putc(b, '"');
	/* prev: the last character written ('*' before a comment's body stands
	 * for the opener's) */
	int prev = how == ESC_COMMENT ? '*' : 0;
	for (size_t i = 0; i < n;) {
		uint32_t cp = 0;
		int len = utf8_at(s + i, n - i, &cp);
		int plain = len && cp_plain(cp);
		int c = s[i], next = i + 1 < n ? s[i + 1] : -1;
		if (!len)
			len = 1;
		int lit = 0; /* written as itself */
		switch (how) {
		case ESC_COMMENT:
			if (!plain || c == '\\' || (c == '?' && prev == '?'))
				;
			else if (c == '/')
				lit = prev != '*' && next != '*' && next != -1;
			else if (c == '*')
				lit = prev != '/';
			else
				lit = 1;
			if (lit)
				buf_putn(b, (const char *)s + i, (size_t)len);
			else if (plain)
				buf_printf(b, "\\x%02x", c);
			else
				put_visible(b, s + i, len);
			break;
		case ESC_CSTR:
			lit = c >= 0x20 && c < 0x7f && c != '"' && c != '\\' && !(c == '?' && prev == '?');
			len = 1;
			if (lit)
				buf_putc(b, c);
			else if (c == '?')
				buf_puts(b, "\\?");
			else if (!put_shared_escape(b, c))
				buf_printf(b, "\\%03o", c);
			break;
		case ESC_JSON:
			lit = plain && c != '"' && c != '\\';
			if (lit)
				buf_putn(b, (const char *)s + i, (size_t)len);
			else if (put_shared_escape(b, c))
				;
			else if (utf8_at(s + i, n - i, &cp))
				buf_printf(b, "\\u%04x", cp); /* every code point not plain is in the BMP */
			else
				buf_printf(b, "\\\\x%02x", c);
			break;
		case ESC_DOT:
		case ESC_TERM:
			lit = plain && (how == ESC_TERM || (c != '"' && c != '\\'));
			if (lit)
				buf_putn(b, (const char *)s + i, (size_t)len);
			else if (plain)
				buf_printf(b, "\\%c", c);
			else if (how == ESC_TERM)
				put_visible(b, s + i, len);
			else {
				/* DOT reads "\\" as one backslash, so the text shows \xNN */
				Buf v = {0};
				put_visible(&v, s + i, len);
				for (size_t k = 0; k < v.len; k++) {
					if (v.s[k] == '\\')
						buf_putc(b, '\\');
					buf_putc(b, v.s[k]);
				}
				buf_free(&v);
			}
			break;
		case ESC_IDENT:
			DOCC_UNREACHABLE();
		}
		prev = (unsigned char)b->s[b->len - 1]; /* the last character written, escapes included */
		i += (size_t)len;
	}
	if (quoted)
		buf_putc(b, '"');
}

void buf_ccomment(Buf *b, const char *s)
{
	buf_escape(b, ESC_COMMENT, s, s ? strlen(s) : 0);
}

void buf_cstr(Buf *b, const char *s)
{
	buf_escape(b, ESC_CSTR, s, s ? strlen(s) : 0);
}

void buf_quote(Buf *b, const char *s)
{
	buf_escape(b, ESC_JSON, s, s ? strlen(s) : 0);
}

void buf_dot(Buf *b, const char *s)
{
	buf_escape(b, ESC_DOT, s, s ? strlen(s) : 0);
}

void buf_ident(Buf *b, const char *s)
{
	buf_escape(b, ESC_IDENT, s, s ? strlen(s) : 0);
}

/* C11 and C23 keywords, and C++'s, as a generated header is C++ too. */
static const char *const c_keywords[] = {
	"auto", "break", "case", "char", "const", "continue", "default", "do", "double", "else",
	"enum", "extern", "float", "for", "goto", "if", "inline", "int", "long", "register",
	"restrict", "return", "short", "signed", "sizeof", "static", "struct", "switch", "typedef",
	"union", "unsigned", "void", "volatile", "while", "bool", "true", "false", "nullptr",
	"alignas", "alignof", "static_assert", "thread_local", "typeof", "typeof_unqual",
	"constexpr", "class", "new", "delete", "this", "template", "typename", "namespace",
	"operator", "private", "public", "protected", "virtual", "try", "catch", "throw", "friend",
	"using", "explicit", "mutable", "export", "asm", "and", "or", "not", "xor", "compl",
	"bitand", "bitor", "not_eq", "and_eq", "or_eq", "xor_eq",
};

int c_is_ident(const char *s)
{
	if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || *s == '_'))
		return 0;
	for (const char *p = s; *p; p++)
		if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') || *p == '_'))
			return 0;
	return 1;
}

int c_is_keyword(const char *s)
{
	for (size_t i = 0; i < COUNTOF(c_keywords); i++)
		if (!strcmp(c_keywords[i], s))
			return 1;
	return 0;
}

void buf_base64(Buf *b, const void *data, size_t n)
{
	static const char al[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	const unsigned char *p = data;
	char line[77];
	size_t k = 0;
	for (size_t i = 0; i < n; i += 3) {
		unsigned v = (unsigned)p[i] << 16 | (i + 1 < n ? (unsigned)p[i + 1] << 8 : 0) | (i + 2 < n ? p[i + 2] : 0);
		line[k++] = al[v >> 18 & 63];
		line[k++] = al[v >> 12 & 63];
		line[k++] = i + 1 < n ? al[v >> 6 & 63] : '=';
		line[k++] = i + 2 < n ? al[v & 63] : '=';
		if (k == 76 || i + 3 >= n) {
			line[k++] = '\n';
			buf_putn(b, line, k);
			k = 0;
		}
	}
}
