/*
 * test_tunedb.c - unit tests of lib/tunedb.c, the tuning database.
 *
 * Through lib.h, with sqlite3 itself only to make the files tunedb must
 * refuse or treat with care (another program's database, a newer format,
 * hostile contents) and to look at what tunedb wrote. Every file lives in a
 * fresh temporary directory that is removed at the end; messages are
 * checked through diag_capture. The concurrency test forks writers that
 * create one new file at the same moment and shows that no row is lost.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <sqlite3.h>

#include "../../lib/lib.h"
#include "check.h"

static char tdir[64];  /* this run's scratch directory */
/* A path inside the scratch directory (in arena a). */
static const char *tpath(Arena *a, const char *name)
{
	return arena_printf(a, "%s/%s", tdir, name);
}

static int contains(const char *hay, const char *needle)
{
	return hay && strstr(hay, needle) != NULL;
}

/* A row with every field set from (key, threads, version); the numbers and
 * texts differ per row so that a mixed-up column shows. */
static TuneRow row(Arena *a, const char *key, const char *kind, const char *target, const char *march,
                   int threads, int version)
{
	TuneRow r = {0};
	r.key = key;
	r.kind = kind;
	r.target = target;
	r.march = march;
	r.threads = threads;
	r.version = version;
	r.dims = arena_printf(a, "1 %d 56 56 64", threads);
	r.params = arena_printf(a, "tm=%d tn=16 winograd=0", threads);
	r.ns = 1000.5 * threads + version;
	r.rule_ns = 2000.25 * threads;
	r.trials = arena_printf(a, "tm=4 tn=16: %d\ntm=8 tn=8: %d\n", threads * 10, threads * 20);
	r.text = arena_printf(a, "%s step %s", kind, key);
	return r;
}

/* Do two rows hold the same values in every field? */
static int row_eq(const TuneRow *x, const TuneRow *y)
{
	return !strcmp(x->key, y->key) && !strcmp(x->kind, y->kind) && !strcmp(x->target, y->target) &&
	       !strcmp(x->march, y->march) && x->threads == y->threads && x->version == y->version &&
	       !strcmp(x->dims, y->dims) && !strcmp(x->params, y->params) && x->ns == y->ns &&
	       x->rule_ns == y->rule_ns && !strcmp(x->trials, y->trials) && !strcmp(x->text, y->text);
}

/* Run SQL on a file through sqlite3 directly: 0 or -1. */
static int sql(const char *path, const char *text)
{
	sqlite3 *db = NULL;
	int rc = sqlite3_open(path, &db);
	if (rc == SQLITE_OK)
		rc = sqlite3_exec(db, text, NULL, NULL, NULL);
	if (rc != SQLITE_OK)
		fprintf(stderr, "%s: sqlite3: %s\n", path, db ? sqlite3_errmsg(db) : "out of memory");
	sqlite3_close(db);
	return rc == SQLITE_OK ? 0 : -1;
}

/* One integer from a query on path through sqlite3 directly (-1 on an error). */
static long long sql_int(const char *path, const char *text)
{
	sqlite3 *db = NULL;
	sqlite3_stmt *st = NULL;
	long long v = -1;
	if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK &&
	    sqlite3_prepare_v2(db, text, -1, &st, NULL) == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW)
		v = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	sqlite3_close(db);
	return v;
}

static void write_bytes(const char *path, const void *data, size_t n)
{
	FILE *f = fopen(path, "wb");
	CHECK(f != NULL);
	if (!f)
		return;
	CHECK(fwrite(data, 1, n, f) == n);
	CHECK(fclose(f) == 0);
}

/* Is the file at path byte for byte data[0..n)? */
static int same_bytes(const char *path, const char *data, size_t n)
{
	size_t len = 0;
	char *s = file_read(path, &len);
	int same = s && len == n && !memcmp(s, data, n);
	free(s);
	return same;
}

/* open must fail with a message that holds want; with create too, and
 * without changing the file. */
static void check_refused(const char *path, const char *want)
{
	size_t n = 0;
	char *before = file_read(path, &n);
	CHECK(before != NULL);
	for (int create = 0; create <= 1; create++) {
		int e = diag_errors();
		capture();
		TuneDb *db = tunedb_open(path, create);
		const char *msg = captured();
		CHECK(db == NULL);
		tunedb_close(db);
		CHECK_INT(diag_errors(), e + 1);
		if (!contains(msg, want) || strncmp(msg, path, strlen(path)))
			fprintf(stderr, "%s: message \"%s\", expected \"%s\"\n", path, msg, want);
		CHECK(contains(msg, want));
		CHECK(!strncmp(msg, path, strlen(path)));
		CHECK(before && same_bytes(path, before, n));
	}
	free(before);
}

/* create, put, get: every field, reopened; a missing key; replacing. */
static void test_roundtrip(void)
{
	Arena *a = arena_new();
	const char *path = tpath(a, "t.db");
	TuneDb *db = tunedb_open(path, 1);
	CHECK(db != NULL);
	if (!db) {
		arena_free(a);
		return;
	}
	CHECK_INT(tunedb_foreign(db), 0);
	const char *key = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";
	TuneRow r = row(a, key, "conv2d 3x3 s1 g1 f32", "openmp", "x86-64-v3", 4, 7);
	r.text = "conv2d 3x3\n\"quoted\" 'single' \xc3\xa9t\xc3\xa9 ; DROP TABLE steps; --";
	CHECK_INT(tunedb_put(db, &r), 0);

	TuneRow g;
	Arena *b = arena_new();
	CHECK_INT(tunedb_get(db, key, "openmp", "x86-64-v3", 4, 7, b, &g), 1);
	CHECK(row_eq(&g, &r));
	CHECK_STR(g.text, r.text);
	CHECK(g.ns == 1000.5 * 4 + 7 && g.rule_ns == 2000.25 * 4);
	/* a missing key, and every other part of the primary key missed */
	CHECK_INT(tunedb_get(db, "ffff", "openmp", "x86-64-v3", 4, 7, b, &g), 0);
	CHECK_INT(tunedb_get(db, key, "cuda", "x86-64-v3", 4, 7, b, &g), 0);
	CHECK_INT(tunedb_get(db, key, "openmp", "x86-64-v4", 4, 7, b, &g), 0);
	CHECK_INT(tunedb_get(db, key, "openmp", "x86-64-v3", 2, 7, b, &g), 0);
	CHECK_INT(tunedb_get(db, key, "openmp", "x86-64-v3", 4, 8, b, &g), 0);
	CHECK(g.key == NULL);
	tunedb_close(db);

	/* reopened for reading: the same row; strings live in the arena */
	db = tunedb_open(path, 0);
	CHECK(db != NULL);
	CHECK_INT(tunedb_get(db, key, "openmp", "x86-64-v3", 4, 7, b, &g), 1);
	CHECK(row_eq(&g, &r));
	/* a put of the same primary key replaces the row */
	TuneRow r2 = r;
	r2.params = "tm=8 tn=8 winograd=1";
	r2.ns = 12.5;
	r2.kind = "conv2d 3x3 s1 g1 f32";
	CHECK_INT(tunedb_put(db, &r2), 0);
	CHECK_INT(tunedb_get(db, key, "openmp", "x86-64-v3", 4, 7, b, &g), 1);
	CHECK(row_eq(&g, &r2));
	CHECK_STR(g.params, "tm=8 tn=8 winograd=1");
	tunedb_close(db);
	CHECK_INT(sql_int(path, "SELECT count(*) FROM steps"), 1);
	/* what file(1) and others see */
	CHECK_INT(sql_int(path, "PRAGMA application_id"), 0x646f6363);
	CHECK_INT(sql_int(path, "SELECT value FROM meta WHERE key = 'format'"), 1);
	CHECK_INT(sql_int(path, "SELECT count(*) FROM meta WHERE key = 'application' AND value = 'doccc-tuning'"), 1);
	CHECK(!file_exists(arena_printf(a, "%s-wal", path)) && !file_exists(arena_printf(a, "%s-journal", path)));
	arena_free(b);
	arena_free(a);
}

/* threads 0; tunedb_kind's filter and order; versions. */
static void test_queries(void)
{
	Arena *a = arena_new();
	TuneDb *db = tunedb_open(tpath(a, "q.db"), 1);
	CHECK(db != NULL);
	if (!db) {
		arena_free(a);
		return;
	}
	const char *conv = "conv2d 3x3 s1 g1 f32", *gemm = "gemm f32";
	const int threads[] = {1, 8, 2};
	for (int i = 0; i < 3; i++) {  /* key "k2" at 1, 8 and 2 threads; "k1" at 1 and 2; "k3" at 8 */
		TuneRow r = row(a, "k2", conv, "openmp", "x86-64-v3", threads[i], 1);
		CHECK_INT(tunedb_put(db, &r), 0);
		if (threads[i] != 8) {
			r = row(a, "k1", conv, "openmp", "x86-64-v3", threads[i], 1);
			CHECK_INT(tunedb_put(db, &r), 0);
		} else {
			r = row(a, "k3", conv, "openmp", "x86-64-v3", threads[i], 1);
			CHECK_INT(tunedb_put(db, &r), 0);
		}
	}
	/* rows the filters must leave out: another kind, target, march, version */
	TuneRow other[] = {
		row(a, "k0", gemm, "openmp", "x86-64-v3", 8, 1),
		row(a, "k0", conv, "cuda", "x86-64-v3", 8, 1),
		row(a, "k0", conv, "openmp", "x86-64-v4", 8, 1),
		row(a, "k0", conv, "openmp", "x86-64-v3", 8, 2),
		row(a, "k2", conv, "openmp", "x86-64-v3", 16, 2),
	};
	for (int i = 0; i < (int)COUNTOF(other); i++)
		CHECK_INT(tunedb_put(db, &other[i]), 0);

	TuneRow g;
	CHECK_INT(tunedb_get(db, "k2", "openmp", "x86-64-v3", 0, 1, a, &g), 1);
	CHECK_INT(g.threads, 8);  /* not the 16 of version 2 */
	CHECK_STR(g.params, "tm=8 tn=16 winograd=0");
	CHECK_INT(tunedb_get(db, "k1", "openmp", "x86-64-v3", 0, 1, a, &g), 1);
	CHECK_INT(g.threads, 2);
	CHECK_INT(tunedb_get(db, "k2", "openmp", "x86-64-v3", 2, 1, a, &g), 1);
	CHECK_INT(g.threads, 2);
	CHECK_INT(tunedb_get(db, "k2", "openmp", "x86-64-v3", 4, 1, a, &g), 0);
	CHECK_INT(tunedb_get(db, "k2", "openmp", "x86-64-v3", 0, 2, a, &g), 1);
	CHECK_INT(g.threads, 16);
	CHECK_INT(tunedb_get(db, "k2", "openmp", "x86-64-v3", 0, 3, a, &g), 0);

	TuneRow *rows = NULL;
	int n = -1;
	/* threads 0: each key once, at its largest thread count, ordered by key */
	CHECK_INT(tunedb_kind(db, conv, "openmp", "x86-64-v3", 0, 1, a, &rows, &n), 0);
	CHECK_INT(n, 3);
	if (n == 3) {
		CHECK_STR(rows[0].key, "k1");
		CHECK_INT(rows[0].threads, 2);
		CHECK_STR(rows[1].key, "k2");
		CHECK_INT(rows[1].threads, 8);
		CHECK_STR(rows[2].key, "k3");
		CHECK_INT(rows[2].threads, 8);
		TuneRow want = row(a, "k2", conv, "openmp", "x86-64-v3", 8, 1);
		CHECK(row_eq(&rows[1], &want));
	}
	/* a thread count: only the rows timed with it */
	CHECK_INT(tunedb_kind(db, conv, "openmp", "x86-64-v3", 2, 1, a, &rows, &n), 0);
	CHECK_INT(n, 2);
	if (n == 2) {
		CHECK_STR(rows[0].key, "k1");
		CHECK_STR(rows[1].key, "k2");
		CHECK(rows[0].threads == 2 && rows[1].threads == 2);
	}
	CHECK_INT(tunedb_kind(db, conv, "openmp", "x86-64-v3", 8, 1, a, &rows, &n), 0);
	CHECK_INT(n, 2);
	if (n == 2) {
		CHECK_STR(rows[0].key, "k2");
		CHECK_STR(rows[1].key, "k3");
	}
	CHECK_INT(tunedb_kind(db, gemm, "openmp", "x86-64-v3", 0, 1, a, &rows, &n), 0);
	CHECK_INT(n, 1);
	CHECK_INT(tunedb_kind(db, conv, "cuda", "x86-64-v3", 0, 1, a, &rows, &n), 0);
	CHECK_INT(n, 1);
	CHECK_INT(tunedb_kind(db, conv, "openmp", "x86-64-v4", 0, 1, a, &rows, &n), 0);
	CHECK_INT(n, 1);
	CHECK_INT(tunedb_kind(db, conv, "openmp", "x86-64-v3", 0, 2, a, &rows, &n), 0);
	CHECK_INT(n, 2);
	if (n == 2) {
		CHECK_STR(rows[0].key, "k0");
		CHECK_STR(rows[1].key, "k2");
		CHECK_INT(rows[1].threads, 16);
	}
	CHECK_INT(tunedb_kind(db, "no such kind", "openmp", "x86-64-v3", 0, 1, a, &rows, &n), 0);
	CHECK(n == 0 && rows == NULL);
	/* another version: ignored above, counted here */
	CHECK_INT(tunedb_count_other(db, 1), 2);
	CHECK_INT(tunedb_count_other(db, 2), 9);
	CHECK_INT(tunedb_count_other(db, 3), 11);
	tunedb_close(db);
	arena_free(a);
}

/* Files tunedb must refuse, with the message, and leave alone. */
static void test_refused(void)
{
	Arena *a = arena_new();
	const char *missing = tpath(a, "missing.db");
	capture();
	CHECK(tunedb_open(missing, 0) == NULL);
	CHECK_STR(captured(), arena_printf(a, "%s: error: cannot open: No such file or directory\n", missing));
	CHECK(!file_exists(missing));
	const char *nodir = tpath(a, "nodir/t.db");
	capture();
	CHECK(tunedb_open(nodir, 1) == NULL);
	CHECK_STR(captured(), arena_printf(a, "%s: error: cannot open: No such file or directory\n", nodir));
	capture();
	CHECK(tunedb_open(tdir, 1) == NULL);
	CHECK_STR(captured(), arena_printf(a, "%s: error: cannot open: it is a directory\n", tdir));

	/* random bytes (a fixed generator), text, an empty file (unless create) */
	unsigned char rnd[8192];
	uint32_t x = 0x12345678;
	for (size_t i = 0; i < sizeof(rnd); i++) {
		x ^= x << 13, x ^= x >> 17, x ^= x << 5;
		rnd[i] = (unsigned char)x;
	}
	const char *p = tpath(a, "random.db");
	write_bytes(p, rnd, sizeof(rnd));
	check_refused(p, "error: not a doccc tuning database (file is not a database)");
	p = tpath(a, "text.db");
	const char *text = "key,kind,params\nabc,conv2d,tm=4\n";
	write_bytes(p, text, strlen(text));
	check_refused(p, "error: not a doccc tuning database (file is not a database)");
	/* SQLite's magic, then random bytes */
	memcpy(rnd, "SQLite format 3", 16);
	p = tpath(a, "magic.db");
	write_bytes(p, rnd, sizeof(rnd));
	check_refused(p, "error: ");
	/* and a valid header (page size 4096, the usual fields) over random pages */
	static const unsigned char hdr[] = {0x10, 0x00, 1, 1, 0, 64, 32, 32};
	memcpy(rnd + 16, hdr, sizeof(hdr));
	memset(rnd + 24, 0, 4);
	rnd[31] = 2; /* 2 pages */
	write_bytes(p, rnd, sizeof(rnd));
	check_refused(p, "error: not a doccc tuning database (unsupported file format)");

	p = tpath(a, "empty.db");
	write_bytes(p, "", 0);
	capture();
	CHECK(tunedb_open(p, 0) == NULL);
	CHECK_STR(captured(), arena_printf(a, "%s: error: not a doccc tuning database (empty file)\n", p));

	/* another program's SQLite database */
	p = tpath(a, "other.db");
	CHECK_INT(sql(p, "CREATE TABLE t (a, b); INSERT INTO t VALUES (1, 2);"), 0);
	check_refused(p, "error: not a doccc tuning database (a SQLite database of another program: "
	                 "application_id 0x00000000)");
	CHECK_INT(sql_int(p, "SELECT count(*) FROM sqlite_master WHERE name = 'meta'"), 0);
	p = tpath(a, "other2.db");
	CHECK_INT(sql(p, "PRAGMA application_id = 1234; CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT);"
	                 "INSERT INTO meta VALUES ('format', '1'), ('application', 'doccc-tuning');"), 0);
	check_refused(p, "(a SQLite database of another program: application_id 0x000004d2)");
	/* doccc's application_id without the rest */
	p = tpath(a, "nometa.db");
	CHECK_INT(sql(p, "PRAGMA application_id = 1685021539; CREATE TABLE steps (key);"), 0);
	check_refused(p, "error: not a doccc tuning database (no meta table)");
	p = tpath(a, "view.db");
	CHECK_INT(sql(p, "PRAGMA application_id = 1685021539;"
	                 "CREATE VIEW meta AS SELECT 'format' AS key, '1' AS value;"), 0);
	check_refused(p, "error: not a doccc tuning database (no meta table)");
	p = tpath(a, "noapp.db");
	CHECK_INT(sql(p, "PRAGMA application_id = 1685021539; CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT);"
	                 "INSERT INTO meta VALUES ('format', '1');"), 0);
	check_refused(p, "error: not a doccc tuning database (meta has no application 'doccc-tuning')");
	p = tpath(a, "badformat.db");
	CHECK_INT(sql(p, "PRAGMA application_id = 1685021539; CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT);"
	                 "INSERT INTO meta VALUES ('format', '1x'), ('application', 'doccc-tuning');"), 0);
	check_refused(p, "error: not a doccc tuning database (format '1x')");
	p = tpath(a, "nosteps.db");
	CHECK_INT(sql(p, "PRAGMA application_id = 1685021539; CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT);"
	                 "INSERT INTO meta VALUES ('format', '1'), ('application', 'doccc-tuning');"), 0);
	check_refused(p, "error: not a doccc tuning database (no such table: steps)");
	CHECK_INT(sql(p, "CREATE TABLE steps (key, kind, target, march, threads, version, dims, params, ns);"), 0);
	check_refused(p, "error: not a doccc tuning database (no such column: ");
	arena_free(a);
}

/* A zero-length file given to create becomes a database. */
static void test_empty_create(void)
{
	Arena *a = arena_new();
	const char *p = tpath(a, "empty2.db");
	write_bytes(p, "", 0);
	TuneDb *db = tunedb_open(p, 1);
	CHECK(db != NULL);
	if (db) {
		TuneRow r = row(a, "k", "gemm f32", "openmp", "x86-64-v3", 1, 1), g;
		CHECK_INT(tunedb_put(db, &r), 0);
		CHECK_INT(tunedb_get(db, "k", "openmp", "x86-64-v3", 1, 1, a, &g), 1);
		CHECK(row_eq(&g, &r));
		tunedb_close(db);
	}
	CHECK_INT(sql_int(p, "PRAGMA application_id"), 0x646f6363);
	arena_free(a);
}

/* A real database cut short: an error at open, never a crash. */
static void test_truncated(void)
{
	Arena *a = arena_new();
	const char *p = tpath(a, "full.db");
	TuneDb *db = tunedb_open(p, 1);
	CHECK(db != NULL);
	if (!db) {
		arena_free(a);
		return;
	}
	for (int i = 0; i < 300; i++) {  /* several pages of each b-tree */
		TuneRow r = row(a, arena_printf(a, "%064d", i), "conv2d 3x3 s1 g1 f32", "openmp", "x86-64-v3", 1, 1);
		char *trials = arena_alloc(a, 1001);
		memset(trials, 'a' + i % 26, 1000);
		r.trials = trials;
		CHECK_INT(tunedb_put(db, &r), 0);
	}
	tunedb_close(db);
	size_t n = 0;
	char *full = file_read(p, &n);
	CHECK(full != NULL && n > 100000);
	if (!full) {
		arena_free(a);
		return;
	}
	const size_t cuts[] = {n / 2, n / 2 + 100, 4096 + 10, 100, 4096 * 3};
	for (int i = 0; i < (int)COUNTOF(cuts); i++) {
		const char *q = tpath(a, arena_printf(a, "cut%d.db", i));
		write_bytes(q, full, cuts[i]);
		check_refused(q, "error: ");
		capture();
		db = tunedb_open(q, 0);
		const char *msg = captured();
		CHECK(db == NULL);
		tunedb_close(db);
		if (cuts[i] == n / 2)
			CHECK(contains(msg, "damaged tuning database ("));
	}
	/* a flipped byte inside a b-tree page's cell pointers */
	full[n - 4096 + 9] ^= 0x5a;
	full[n - 2 * 4096 + 3] ^= 0xff;
	const char *q = tpath(a, "flipped.db");
	write_bytes(q, full, n);
	capture();
	db = tunedb_open(q, 0);
	Arena *b = arena_new();
	if (db) { /* the damage may miss what quick_check reads: reading must still not crash */
		TuneRow *rows;
		int nr;
		tunedb_kind(db, "conv2d 3x3 s1 g1 f32", "openmp", "x86-64-v3", 0, 1, b, &rows, &nr);
		tunedb_close(db);
	}
	captured();
	arena_free(b);
	free(full);
	arena_free(a);
}

/* A newer format opens "foreign": nothing read, nothing written. */
static void test_foreign(void)
{
	Arena *a = arena_new();
	const char *p = tpath(a, "f99.db");
	TuneDb *db = tunedb_open(p, 1);
	CHECK(db != NULL);
	TuneRow r = row(a, "k", "gemm f32", "openmp", "x86-64-v3", 1, 1), g;
	CHECK(db && tunedb_put(db, &r) == 0);
	tunedb_close(db);
	CHECK_INT(sql(p, "UPDATE meta SET value = '99' WHERE key = 'format'; ALTER TABLE steps RENAME TO steps2;"), 0);
	int e = diag_errors();
	capture();
	for (int create = 0; create <= 1; create++) {
		db = tunedb_open(p, create);
		CHECK(db != NULL);
		if (!db)
			continue;
		CHECK_INT(tunedb_foreign(db), 1);
		CHECK_INT(tunedb_get(db, "k", "openmp", "x86-64-v3", 1, 1, a, &g), 0);
		TuneRow r2 = row(a, "k2", "gemm f32", "openmp", "x86-64-v3", 1, 1);
		CHECK_INT(tunedb_put(db, &r2), 0);
		TuneRow *rows = NULL;
		int n = -1;
		CHECK_INT(tunedb_kind(db, "gemm f32", "openmp", "x86-64-v3", 0, 1, a, &rows, &n), 0);
		CHECK_INT(n, 0);
		CHECK_INT(tunedb_count_other(db, 1), 0);
		tunedb_close(db);
	}
	CHECK_STR(captured(), "");
	CHECK_INT(diag_errors(), e);
	CHECK_INT(sql_int(p, "SELECT count(*) FROM steps2"), 1);
	CHECK_INT(sql_int(p, "SELECT count(*) FROM sqlite_master WHERE name = 'steps'"), 0);
	arena_free(a);
}

/* A file of doccc's format with hostile contents: values of other types,
 * a trigger (triggers are off: it must not run). */
static void test_hostile(void)
{
	Arena *a = arena_new();
	const char *p = tpath(a, "hostile.db");
	CHECK_INT(sql(p, "PRAGMA application_id = 1685021539; CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT);"
	                 "INSERT INTO meta VALUES ('format', '1'), ('application', 'doccc-tuning');"
	                 "CREATE TABLE steps (key, kind, target, march, threads, version, dims, params, ns,"
	                 " rule_ns, trials, text, PRIMARY KEY (key, target, march, threads, version));"
	                 "CREATE TABLE log (x);"
	                 "CREATE TRIGGER t AFTER INSERT ON steps BEGIN INSERT INTO log VALUES (1); END;"
	                 "INSERT INTO steps VALUES ('k', 'gemm', 'openmp', 'v3', 1, 1, NULL, x'610062', 'abc',"
	                 " NULL, 3.5, zeroblob(10));"
	                 "DELETE FROM log;"), 0);
	TuneDb *db = tunedb_open(p, 0);
	CHECK(db != NULL);
	if (db) {
		TuneRow g;
		CHECK_INT(tunedb_get(db, "k", "openmp", "v3", 1, 1, a, &g), 1);
		CHECK_STR(g.dims, "");
		CHECK_STR(g.params, "a");  /* a NUL inside ends the text */
		CHECK(g.ns == 0 && g.rule_ns == 0);
		CHECK_STR(g.trials, "3.5");
		CHECK_STR(g.text, "");
		TuneRow r = row(a, "k2", "gemm", "openmp", "v3", 1, 1);
		CHECK_INT(tunedb_put(db, &r), 0);
		tunedb_close(db);
	}
	CHECK_INT(sql_int(p, "SELECT count(*) FROM steps"), 2);
	CHECK_INT(sql_int(p, "SELECT count(*) FROM log"), 0);
	arena_free(a);
}

enum { NWRITERS = 4, NROWS = 50 };

/* Writers that create one new file at the same moment, then put NROWS rows
 * each: every row is there. */
static void test_concurrent(void)
{
	Arena *a = arena_new();
	const char *p = tpath(a, "shared.db");
	int go[2];
	CHECK(pipe(go) == 0);
	pid_t pids[NWRITERS];
	for (int w = 0; w < NWRITERS; w++) {
		pids[w] = fork();
		CHECK(pids[w] >= 0);
		if (pids[w] == 0) {
			char c;
			close(go[1]);
			if (read(go[0], &c, 1) != 0)  /* wait for the parent to close its end */
				_exit(3);
			TuneDb *db = tunedb_open(p, 1);
			if (!db)
				_exit(1);
			for (int i = 0; i < NROWS; i++) {
				char key[32];
				snprintf(key, sizeof(key), "w%d-%03d", w, i);
				TuneRow r = row(a, key, "conv2d 3x3 s1 g1 f32", "openmp", "x86-64-v3", w + 1, 1);
				if (tunedb_put(db, &r) != 0)
					_exit(2);
			}
			tunedb_close(db);
			_exit(0);
		}
	}
	close(go[0]);
	close(go[1]);  /* all start together */
	for (int w = 0; w < NWRITERS; w++) {
		int status = -1;
		CHECK(pids[w] > 0 && waitpid(pids[w], &status, 0) == pids[w]);
		CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	}
	TuneDb *db = tunedb_open(p, 0);
	CHECK(db != NULL);
	if (db) {
		TuneRow *rows = NULL;
		int n = 0;
		CHECK_INT(tunedb_kind(db, "conv2d 3x3 s1 g1 f32", "openmp", "x86-64-v3", 0, 1, a, &rows, &n), 0);
		CHECK_INT(n, NWRITERS * NROWS);
		int found = 0;
		for (int w = 0; w < NWRITERS; w++)
			for (int i = 0; i < NROWS; i++) {
				char key[32];
				TuneRow g;
				snprintf(key, sizeof(key), "w%d-%03d", w, i);
				TuneRow want = row(a, key, "conv2d 3x3 s1 g1 f32", "openmp", "x86-64-v3", w + 1, 1);
				found += tunedb_get(db, key, "openmp", "x86-64-v3", 0, 1, a, &g) == 1 && row_eq(&g, &want);
			}
		CHECK_INT(found, NWRITERS * NROWS);
		tunedb_close(db);
	}
	/* one file: no journal or WAL left beside it */
	CHECK(!file_exists(tpath(a, "shared.db-journal")));
	CHECK(!file_exists(tpath(a, "shared.db-wal")));
	arena_free(a);
}

int main(void)
{
	snprintf(tdir, sizeof(tdir), "/tmp/doccc-test-XXXXXX");
	if (!mkdtemp(tdir)) {
		perror("mkdtemp");
		return 1;
	}
	test_roundtrip();
	test_queries();
	test_refused();
	test_empty_create();
	test_truncated();
	test_foreign();
	test_hostile();
	test_concurrent();
	diag_capture(NULL);
	buf_free(&diagbuf);
	CHECK_INT(rm_rf(tdir), 0);
	return check_done("test_tunedb");
}
