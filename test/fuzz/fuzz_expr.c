/* fuzz_expr.c - ex_parse, the reader of symbolic sizes (sympy srepr and
 * infix strings from range_constraints and tensor sizes), on any text.
 * A parsed expression must also print, get a range and evaluate. The input
 * is parsed twice into one graph, as the importer parses many strings. */
#include <string.h>

#include "fuzz.h"
#include "../../ir/ir.h"

/* Every divisor in e is provably non-zero (C's '/' and '%' are printed). */
static void check_divisors(const Sdfg *g, const Expr *e)
{
	int64_t lo, hi;
	if ((e->k == E_DIV || e->k == E_MOD) && ex_range(g, e->a[1], &lo, &hi) >= 0 && lo <= 0 && hi >= 0)
		fuzz_fail("a divisor may be zero");
	for (int i = 0; i < e->n; i++) check_divisors(g, e->a[i]);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s = malloc(size + 1);
	if (!s) abort();
	memcpy(s, data, size);
	s[size] = '\0';
	Arena *a = arena_new();
	Sdfg *g = sdfg_new(a, "fuzz");
	for (int pass = 0; pass < 2; pass++) {
		const char *err = NULL;
		int nsyms = g->nsyms;
		Expr *e = ex_parse(g, s, &err);
		if (!e) {
			if (!err || !*err) fuzz_fail("ex_parse failed without a message");
			break;
		}
		if (err) fuzz_fail("ex_parse succeeded with a message: %s", err);
		if (pass && g->nsyms != nsyms) fuzz_fail("the same text made new symbols");
		Buf b = {0};
		ex_print(&b, g, e);
		if (!b.len) fuzz_fail("an expression printed as nothing");
		/* ir/expr.c keeps the printed form within 4096 nodes (each a
		 * symbol name of at most 255 bytes, or an operator and parentheses). */
		if (b.len > 4096 * 300) fuzz_fail("an expression printed as %zu bytes", b.len);
		buf_free(&b);
		check_divisors(g, e);
		int64_t lo, hi, v;
		ex_range(g, e, &lo, &hi);
		if (lo > hi) fuzz_fail("range [%lld, %lld]", (long long)lo, (long long)hi);
		int64_t *vals = calloc((size_t)g->nsyms + 1, sizeof *vals);
		if (!vals) abort();
		for (int i = 0; i < g->nsyms; i++) vals[i] = g->syms[i].lo + 1;
		(void)ex_eval(g, e, vals, NULL, &v);
		free(vals);
	}
	arena_free(a);
	free(s);
	return 0;
}
