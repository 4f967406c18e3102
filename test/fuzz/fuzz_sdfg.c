/* fuzz_sdfg.c - the SDFG reader (ir/read.c, `doccc opt`'s input) on any
 * text, then the passes that hold for any graph the verifier accepts.
 *
 * Properties beyond fuzz.h's:
 *   - a graph read is one the verifier accepts (sdfg_read_json runs it, and
 *     must fail with a message rather than return a graph it rejects);
 *   - dumping it reports nothing, and reading that dump gives a graph whose
 *     dump is the same bytes (the exact round trip, for every graph read);
 *   - dead-code elimination, then (once no library node is left) the memory
 *     plan, fail with a message or succeed with none, and the verifier
 *     accepts what they leave.
 * The other passes trust their library nodes' attributes as the importer
 * checked them (ir/read.c says so), so they are not run here: fuzz_pipeline
 * covers them from programs. The DOT dump runs too, for its escaping. */
#include <string.h>

#include "fuzz.h"
#include "../../ir/ir.h"

/* sdfg_dump_json of g, which must report nothing. */
static char *dump(Sdfg *g, size_t *len)
{
	Buf b = {0};
	int errs = fuzz_errors();
	if (sdfg_dump_json(g, &b) || fuzz_errors() != errs) fuzz_fail("dumping a graph read failed");
	*len = b.len;
	return b.s;
}

static int has_lib(const Node *n)
{
	if (n->kind == N_BLOCK) return n->lib != NULL;
	if (n->kind == N_SEQ) {
		for (int i = 0; i < n->nkids; i++)
			if (has_lib(n->kids[i])) return 1;
		return 0;
	}
	return has_lib(n->body);
}

static void run_pass(Sdfg *g, int (*fn)(PassCtx *), const char *name)
{
	int errs = fuzz_errors();
	PassCtx c = {g, NULL, NULL, NULL, arena_new()};
	int rc = fn(&c);
	arena_free(c.scratch);
	if (rc && fuzz_errors() == errs) fuzz_fail("pass %s failed without a message", name);
	if (!rc && fuzz_errors() != errs) fuzz_fail("pass %s succeeded after an error", name);
	if (!rc && sdfg_verify(g, name)) fuzz_fail("the verifier rejects the graph after pass %s", name);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	fuzz_begin();
	Arena *a = arena_new();
	Sdfg *g = sdfg_read_json(a, "fuzz.json", (const char *)data, size);
	int errs = fuzz_errors();
	if (!g && !errs) fuzz_fail("sdfg_read_json failed without a message");
	if (g && errs) fuzz_fail("sdfg_read_json succeeded after %d error(s)", errs);
	if (g) {
		size_t n1, n2;
		char *d1 = dump(g, &n1);
		Arena *b = arena_new();
		Sdfg *h = sdfg_read_json(b, "dump.json", d1, n1);
		if (!h) fuzz_fail("the dump of a graph read does not read back");
		char *d2 = dump(h, &n2);
		if (n1 != n2 || memcmp(d1, d2, n1)) fuzz_fail("dump, read, dump: other bytes");
		free(d1);
		free(d2);
		arena_free(b);
		Buf dot = {0};
		sdfg_dump_dot(g, &dot);
		buf_free(&dot);
		run_pass(g, pass_dce, "dce");
		if (!fuzz_errors() && !has_lib(g->root)) run_pass(g, pass_memplan, "memplan");
	}
	arena_free(a);
	return 0;
}
