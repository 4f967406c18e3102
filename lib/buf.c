/*
 * buf.c - growable, malloc'd strings (a Buf starts as {0}).
 *
 * Invariants: once anything was written, b->s is NUL-terminated and
 * b->len < b->cap; the buffer grows by doubling. buf_free returns it to {0}.
 * Out of memory aborts, as in the arena.
 *
 * buf_quote writes a double-quoted literal that is valid both as a C string
 * literal and as a JSON string, so one function serves emitted code and
 * JSON metadata. Only the escapes the two languages share are used:
 *   \\  \"  \n  \t  \r        escaped;
 *   other bytes < 0x20, 0x7f  written as '?' (lossy: JSON's \u00XX is not
 *                             valid C, C's octal/hex escapes are not JSON);
 *   bytes >= 0x80             copied (UTF-8 passes through both);
 *   "??x" trigraph openers    the second '?' is written as '_' when x is one
 *                             of = / ' ( ) ! < > - (ISO C before C23 would
 *                             otherwise rewrite "??=" into '#'; "\?" is not
 *                             JSON). Names from torch graphs never hit this.
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

void buf_quote(Buf *b, const char *s)
{
	int prev = 0; /* the last character written inside the quotes */
	buf_putc(b, '"');
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		int c = *p;
		switch (c) {
		case '\\': buf_puts(b, "\\\\"); break;
		case '"': buf_puts(b, "\\\""); break;
		case '\n': buf_puts(b, "\\n"); break;
		case '\t': buf_puts(b, "\\t"); break;
		case '\r': buf_puts(b, "\\r"); break;
		default:
			if (c < 0x20 || c == 0x7f)
				c = '?';
			if (c == '?' && prev == '?' && p[1] && strchr("=/'()!<>-", p[1]))
				c = '_';
			buf_putc(b, c);
			break;
		}
		prev = c;
	}
	buf_putc(b, '"');
}
