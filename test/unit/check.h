/*
 * check.h - the unit tests' assertion macros. A failed check prints the
 * file, line and the expression that failed (chibicc style) and counts; the
 * test's main returns check_done(), which prints "N passed, M failed".
 * After lib.h, also capture() and captured() for diagnostics.
 */
#ifndef DOCCC_CHECK_H
#define DOCCC_CHECK_H

#include <stdio.h>
#include <string.h>

static int check_pass, check_fail;

#define CHECK(x)                                                            \
	do {                                                                    \
		if (x) check_pass++;                                                \
		else {                                                              \
			check_fail++;                                                   \
			fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #x); \
		}                                                                   \
	} while (0)

#define CHECK_STR(a, b)                                                     \
	do {                                                                    \
		const char *a_ = (a), *b_ = (b);                                    \
		if (a_ && b_ && !strcmp(a_, b_)) check_pass++;                      \
		else {                                                              \
			check_fail++;                                                   \
			fprintf(stderr, "%s:%d: %s => \"%s\", expected \"%s\"\n", __FILE__, \
			        __LINE__, #a, a_ ? a_ : "(null)", b_ ? b_ : "(null)");  \
		}                                                                   \
	} while (0)

#define CHECK_INT(a, b)                                                     \
	do {                                                                    \
		long long a_ = (long long)(a), b_ = (long long)(b);                 \
		if (a_ == b_) check_pass++;                                         \
		else {                                                              \
			check_fail++;                                                   \
			fprintf(stderr, "%s:%d: %s => %lld, expected %lld\n", __FILE__, \
			        __LINE__, #a, a_, b_);                                  \
		}                                                                   \
	} while (0)

#ifdef DOCCC_LIB_H
/* Diagnostics captured (lib.h's diag_capture): capture() starts into
 * diagbuf, empty; captured() stops and gives the text ("" if none). For
 * the tests of libdoccc, which include lib.h first. */
static Buf diagbuf;

static inline void capture(void)
{
	diagbuf.len = 0;
	if (diagbuf.s)
		diagbuf.s[0] = '\0';
	diag_capture(&diagbuf);
}

static inline const char *captured(void)
{
	diag_capture(NULL);
	return diagbuf.s ? diagbuf.s : "";
}
#endif

static int check_done(const char *name)
{
	printf("%s: %d passed, %d failed\n", name, check_pass, check_fail);
	return check_fail != 0;
}

#endif
