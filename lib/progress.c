/*
 * progress.c - one line of progress on a terminal while doccc works: the
 * phase of a compile (reading, importing, passes, writing weights,
 * emitting, compiling, linking, installing), the weights' bytes, doccc
 * tune's candidates.
 *
 * The line lives on stderr, never on stdout, and is redrawn in place: a
 * carriage return, the text, then "ESC [ K" (clear to the end of the line),
 * cut to the terminal's width so that it never wraps. A new phase is drawn
 * at once (a compile has a handful); the detail within a phase (the bytes
 * written, a pass's name, a count) at once the first time, then at most
 * every PROGRESS_MS; and a phase that runs for seconds shows its time,
 * ticked by whoever waits (spawn_run_io while a compiler runs). progress_end erases the line, so
 * the terminal is left with doccc's ordinary output alone.
 *
 * Anything else written to stderr while the line is shown must erase it
 * first and draw it again after: diag.c's messages, the commands -v
 * echoes and a compiler's warnings go through progress_puts, which does
 * both.
 *
 * It is on only when progress_start(1) was called (the driver passes 0
 * for -q, --check and --json) and stderr is a terminal whose TERM is not
 * "dumb"; DOCC_PROGRESS=0 turns it off, DOCC_PROGRESS=1 on whatever
 * stderr is (the tests read it from a pipe). Off, every function but
 * progress_puts returns at its first test and nothing is written.
 *
 * The state is a few static variables: doccc draws from its main thread
 * only (build.c's weights writer thread does not call here).
 * progress_signal, for the fatal-signal handler, only calls write(2).
 */
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "lib.h"

enum {
	PROGRESS_MS = 100,        /* the least time between two draws of a detail */
	PROGRESS_ELAPSED_MS = 2000 /* a phase shows its time once it has run this long */
};

static int prog_on;               /* progress_start turned it on */
static volatile int prog_drawn;   /* the line is on the terminal now */
static int prog_tty;              /* stderr is a terminal: cut to its width */
static double prog_last;          /* when the line was last drawn, ms */
static double prog_t0;            /* when the phase began, ms */
static int prog_fresh;            /* no detail drawn in this phase yet */
static char prog_phase[256], prog_detail[256];

void progress_start(int allowed)
{
	const char *e = getenv("DOCC_PROGRESS"), *term = getenv("TERM");
	prog_tty = isatty(STDERR_FILENO);
	prog_drawn = 0;
	prog_phase[0] = prog_detail[0] = 0;
	if (!allowed || (e && !strcmp(e, "0")))
		prog_on = 0;
	else if (e && !strcmp(e, "1"))
		prog_on = 1;
	else
		prog_on = prog_tty && !(term && !strcmp(term, "dumb"));
}

int progress_active(void)
{
	return prog_on;
}

/* The terminal's width, or 0 when stderr is none (nothing is cut). */
static int term_cols(void)
{
	struct winsize ws;
	if (!prog_tty || ioctl(STDERR_FILENO, TIOCGWINSZ, &ws) != 0 || ws.ws_col == 0)
		return prog_tty ? 80 : 0;
	return ws.ws_col;
}

static void draw(void)
{
	Buf raw = {0}, line = {0};
	double now = now_ms();
	buf_printf(&raw, "doccc: %s", prog_phase);
	if (prog_detail[0])
		buf_printf(&raw, " %s", prog_detail);
	if (now - prog_t0 >= PROGRESS_ELAPSED_MS)
		buf_printf(&raw, " (%.0f s)", (now - prog_t0) / 1e3);
	buf_putc(&line, '\r');
	size_t start = line.len;
	buf_escape(&line, ESC_TERM, raw.s, raw.len); /* names from the model among it */
	int cols = term_cols();
	if (cols > 1) { /* cut at cols-1 characters (UTF-8 lead bytes), so it never wraps */
		int n = 0;
		for (size_t i = start; i < line.len; i++)
			if (((unsigned char)line.s[i] & 0xC0) != 0x80 && ++n == cols) {
				line.len = i;
				line.s[i] = 0;
				break;
			}
	}
	buf_puts(&line, "\033[K");
	fputs(line.s, stderr);
	fflush(stderr);
	buf_free(&raw);
	buf_free(&line);
	prog_drawn = 1;
	prog_last = now;
}

void progress_phase(const char *fmt, ...)
{
	if (!prog_on)
		return;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(prog_phase, sizeof prog_phase, fmt, ap);
	va_end(ap);
	prog_detail[0] = 0;
	prog_t0 = now_ms();
	prog_fresh = 1;
	draw();
}

/* Draw if the last draw is PROGRESS_MS old, or this is the phase's first
 * detail (a phase shows what it counts at once, "0 B / 1.4 GiB"). */
static void draw_throttled(void)
{
	if (prog_fresh || now_ms() - prog_last >= PROGRESS_MS)
		draw();
	prog_fresh = 0;
}

void progress_detail(const char *fmt, ...)
{
	if (!prog_on)
		return;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(prog_detail, sizeof prog_detail, fmt, ap);
	va_end(ap);
	draw_throttled();
}

void progress_bytes(int64_t done, int64_t total)
{
	if (!prog_on)
		return;
	Buf b = {0};
	progress_fmt_bytes(&b, done);
	buf_puts(&b, " / ");
	progress_fmt_bytes(&b, total);
	snprintf(prog_detail, sizeof prog_detail, "%s", b.s);
	buf_free(&b);
	draw_throttled();
}

void progress_tick(void)
{
	if (prog_on && prog_phase[0] && now_ms() - prog_t0 >= PROGRESS_ELAPSED_MS)
		draw_throttled();
}

void progress_hide(void)
{
	if (!prog_drawn)
		return;
	fputs("\r\033[K", stderr);
	fflush(stderr);
	prog_drawn = 0;
}

void progress_puts(const char *s)
{
	int shown = prog_drawn;
	progress_hide();
	fputs(s, stderr);
	fflush(stderr);
	if (shown && prog_on)
		draw();
}

void progress_end(void)
{
	progress_hide();
	prog_on = 0;
	prog_phase[0] = prog_detail[0] = 0;
}

void progress_signal(void)
{
	if (prog_drawn)
		(void)!write(STDERR_FILENO, "\r\033[K", 4);
}

void progress_fmt_bytes(Buf *b, int64_t n)
{
	static const char *const unit[] = {"B", "KiB", "MiB", "GiB", "TiB"};
	double v = (double)n;
	int u = 0;
	while (v >= 1024 && u < (int)COUNTOF(unit) - 1)
		v /= 1024, u++;
	if (u == 0)
		buf_printf(b, "%lld B", (long long)n);
	else
		buf_printf(b, v < 9.95 ? "%.1f %s" : "%.0f %s", v, unit[u]);
}
