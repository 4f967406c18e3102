/* fuzz_tunedb.c - the tuning database as a compile reads it (tuning.db):
 * tunedb_open on any file, then what the tuning pass asks of it (a step's
 * entry, the entries of its kind for transfer, the count of other versions)
 * and tune_parse of every schedule read. An open that fails reports why;
 * one that succeeds gives rows whose strings are there; a schedule that
 * parses prints back as text that parses to the same schedule. The seeds
 * are databases doccc tune wrote (test/passes/tuning.db and variants), whose
 * kinds, target and march the queries below name. */
#include <string.h>

#include "../../ir/ir.h"
#include "fuzz.h"

static const char *const kinds[] = {
	"conv2d k3x3 s1x1 d1x1 g1 float32,float32,float32",
	"gemm float32,float32,float32 constB",
};

static void check_row(const TuneRow *r)
{
	if (!r->key || !r->kind || !r->target || !r->march || !r->dims || !r->params || !r->trials || !r->text)
		fuzz_fail("a row with a NULL string");
	Tune t, u;
	const char *why;
	if (tune_parse(r->params, &t, &why))
		return;
	Arena *a = arena_new();
	const char *back = tune_text(a, &t);
	if (tune_parse(back, &u, &why) || memcmp(&t, &u, sizeof t))
		fuzz_fail("'%s' printed back as '%s', which does not parse to the same schedule", r->params, back);
	arena_free(a);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	fuzz_begin();
	TuneDb *db = tunedb_open(fuzz_file(data, size, ".db"), 0);
	if (!db) {
		if (!fuzz_errors()) fuzz_fail("tunedb_open failed without a message");
		return 0;
	}
	Arena *a = arena_new();
	for (size_t k = 0; k < COUNTOF(kinds); k++) {
		TuneRow *rows;
		int n;
		if (tunedb_kind(db, kinds[k], "sequential", "x86-64-v3", 0, TUNE_VERSION, a, &rows, &n))
			break;
		for (int i = 0; i < n; i++) {
			check_row(&rows[i]);
			TuneRow r;
			if (tunedb_get(db, rows[i].key, "sequential", "x86-64-v3", 0, TUNE_VERSION, a, &r) == 1)
				check_row(&r);
		}
	}
	tunedb_count_other(db, TUNE_VERSION);
	tunedb_close(db);
	arena_free(a);
	return 0;
}
