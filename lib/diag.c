/*
 * diag.c - diagnostics: user errors, warnings and notes, and internal bugs.
 *
 * Every message is one line, "LOC: KIND: MSG\n", where LOC is whatever the
 * caller knows about the place of the problem ("model.pt2: graph.nodes[3]",
 * "opts.yaml:4:3"); without a location the program name stands in its place
 * ("doccc: error: ..."). Messages go to stderr (through progress_puts,
 * which erases a progress line shown and draws it again after), or, while
 * a test has called diag_capture(), are appended to the test's buffer
 * instead.
 *
 * Invariants: the error counter counts every diag_error/diag_verror since
 * the last diag_reset(), whatever the sink; warnings and notes are not
 * counted. diag_internal always writes to stderr (a capture buffer would be
 * lost by the abort) and never returns.
 *
 * The only mutable state is the counter and the capture pointer, as lib.h
 * declares; the compiler is single-threaded.
 */
#include <stdlib.h>

#include "lib.h"

static int diag_nerrors;
static Buf *diag_sink; /* NULL: stderr */

/* Format one message into the sink: "LOC: KIND: MSG\n", where the names
 * from the model in LOC and MSG are shown as buf_escape's ESC_TERM shows
 * them: a control character or escape sequence never reaches the terminal,
 * and a newline in a name cannot start a line that looks like a message. */
static void diag_vemit(const char *kind, const char *loc, const char *fmt, va_list ap)
{
	const char *where = loc && *loc ? loc : "doccc";
	Buf raw = {0}, line = {0};
	buf_printf(&raw, "%s: %s: ", where, kind);
	buf_vprintf(&raw, fmt, ap);
	buf_escape(diag_sink ? diag_sink : &line, ESC_TERM, raw.s, raw.len);
	buf_putc(diag_sink ? diag_sink : &line, '\n');
	buf_free(&raw);
	if (diag_sink)
		return;
	/* The line reaches stderr in one write, so that it does not interleave
	 * with a child process writing to the same stream; a progress line
	 * shown is erased first and drawn again after it. */
	progress_puts(line.s);
	buf_free(&line);
}

void diag_verror(const char *loc, const char *fmt, va_list ap)
{
	diag_nerrors++;
	diag_vemit("error", loc, fmt, ap);
}

void diag_error(const char *loc, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	diag_verror(loc, fmt, ap);
	va_end(ap);
}

void diag_warn(const char *loc, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	diag_vemit("warning", loc, fmt, ap);
	va_end(ap);
}

void diag_note(const char *loc, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	diag_vemit("note", loc, fmt, ap);
	va_end(ap);
}

int diag_errors(void)
{
	return diag_nerrors;
}

void diag_reset(void)
{
	diag_nerrors = 0;
}

void diag_rewind(int nerrors)
{
	diag_nerrors = nerrors;
}

Buf *diag_capture(Buf *b)
{
	Buf *prev = diag_sink;
	diag_sink = b;
	return prev;
}

void diag_internal(const char *file, int line, const char *fmt, ...)
{
	va_list ap;
	fflush(stdout);
	progress_hide();
	fprintf(stderr, "doccc: internal error at %s:%d: ", file, line);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	fflush(stderr);
	abort();
}
