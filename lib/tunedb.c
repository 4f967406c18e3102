/*
 * tunedb.c - the tuning database: one SQLite file of measured schedules.
 *
 * `doccc tune` times candidate schedules for each distinct step of a model
 * (a convolution or GEMM of given shapes) and stores the best here; a
 * compile given the file reads it. This module knows nothing of steps or
 * schedules: a row (TuneRow) is text and numbers under the primary key
 * (key, target, march, threads, version), and the caller gives them meaning.
 *
 * The file: PRAGMA application_id TUNEDB_APPID ("docc"), so that file(1)
 * and others recognise it; a table meta(key, value) with format = "1" and
 * application = "doccc-tuning"; a table steps with TuneRow's columns. A
 * file is used only when all three are there (a SQLite file of any other
 * program is reported, never written into); a format newer than
 * TUNEDB_FORMAT opens "foreign": its rows are neither read nor written.
 *
 * Concurrency: several doccc processes (make -j, two `doccc tune`) share a
 * file. SQLite's default rollback journal (not WAL, which needs shared
 * memory that network file systems lack, and leaves two more files) locks
 * the whole file; every connection waits up to 60 s for a lock
 * (sqlite3_busy_timeout) instead of failing. Each put, and the creation of
 * the schema, runs inside BEGIN IMMEDIATE, which takes the write lock
 * first: two writers never deadlock upgrading read locks, two processes
 * creating one new file both find it empty or both find it made (CREATE
 * TABLE IF NOT EXISTS, INSERT OR IGNORE), and no put is lost.
 *
 * The file is input like any other: opening checks its structure (PRAGMA
 * quick_check) and schema, and the connection runs with SQLite's defences
 * for untrusted files (defensive mode, untrusted schema, triggers and
 * views off, cell size checks, a 16 MiB limit on a value), so a damaged or
 * hostile file is an error, never a crash. Data enters SQL only through
 * bound parameters. Every message goes through diag_error with the file's
 * path as location; SQLite itself prints nothing (no log callback is set).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <sqlite3.h>

#include "lib.h"

#define TUNEDB_APPID 0x646f6363 /* "docc" */
#define TUNEDB_FORMAT 1
#define TUNEDB_APP "doccc-tuning"
#define TUNEDB_BUSY_MS 60000
#define TUNEDB_MAX_VALUE (1 << 24)

/* The columns of steps in TuneRow's order: every SELECT reads them so. */
#define TUNEDB_COLS "key, kind, target, march, threads, version, dims, params, ns, rule_ns, trials, text"

static const char *const tunedb_schema =
	"CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT);"
	"INSERT OR IGNORE INTO meta (key, value) VALUES ('format', '1'), ('application', '" TUNEDB_APP "');"
	"CREATE TABLE IF NOT EXISTS steps ("
	" key TEXT NOT NULL, kind TEXT NOT NULL, target TEXT NOT NULL, march TEXT NOT NULL,"
	" threads INTEGER NOT NULL, version INTEGER NOT NULL, dims TEXT NOT NULL,"
	" params TEXT NOT NULL, ns REAL NOT NULL, rule_ns REAL NOT NULL, trials TEXT NOT NULL,"
	" text TEXT NOT NULL, PRIMARY KEY (key, target, march, threads, version));";

/* Prepared once at open (which also checks that steps has every column). */
enum { Q_GET, Q_KIND, Q_PUT, Q_OTHER, Q_N };
static const char *const tunedb_sql[Q_N] = {
	[Q_GET] = "SELECT " TUNEDB_COLS " FROM steps WHERE key = ?1 AND target = ?2 AND march = ?3"
	          " AND version = ?4 AND (?5 = 0 OR threads = ?5) ORDER BY threads DESC LIMIT 1",
	[Q_KIND] = "SELECT " TUNEDB_COLS " FROM steps AS s WHERE kind = ?1 AND target = ?2 AND march = ?3"
	           " AND version = ?4 AND threads = CASE WHEN ?5 = 0 THEN (SELECT max(threads) FROM steps AS t"
	           " WHERE t.key = s.key AND t.kind = s.kind AND t.target = s.target AND t.march = s.march"
	           " AND t.version = s.version) ELSE ?5 END ORDER BY key, threads",
	[Q_PUT] = "INSERT OR REPLACE INTO steps (" TUNEDB_COLS ") VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8,"
	          " ?9, ?10, ?11, ?12)",
	[Q_OTHER] = "SELECT count(*) FROM steps WHERE version IS NOT ?1",
};

struct TuneDb {
	sqlite3 *db;
	char *path;        /* malloc'd: the location of every message */
	int foreign;       /* a newer format: nothing is read or written */
	sqlite3_stmt *q[Q_N];
};

/* Report the connection's last error: damage as such, a file SQLite
 * cannot read as a database (or, while opening, any plain SQL error: an
 * "unsupported file format") as not ours, the rest as what (doing)
 * failed. */
static void tunedb_fail(const TuneDb *t, int opening, const char *doing)
{
	int rc = sqlite3_errcode(t->db) & 0xff;
	if (rc == SQLITE_CORRUPT)
		diag_error(t->path, "damaged tuning database (%s)", sqlite3_errmsg(t->db));
	else if (rc == SQLITE_NOTADB || rc == SQLITE_FORMAT || (opening && rc == SQLITE_ERROR))
		diag_error(t->path, "not a doccc tuning database (%s)", sqlite3_errmsg(t->db));
	else
		diag_error(t->path, "%s: %s", doing, sqlite3_errmsg(t->db));
}

/* Run SQL without data in it (BEGIN, COMMIT, the schema): SQLITE_OK or an
 * error code, the message left in the connection. */
static int tunedb_exec(TuneDb *t, const char *sql)
{
	return sqlite3_exec(t->db, sql, NULL, NULL, NULL);
}

/* End a failed transaction; a no-op when SQLite has already rolled back. */
static void tunedb_rollback(TuneDb *t)
{
	if (!sqlite3_get_autocommit(t->db))
		tunedb_exec(t, "ROLLBACK");
}

/* One value from a statement without parameters, or with one text
 * parameter p (NULL: none): 1 and the first column of its first row in
 * *ival and (if sval) a malloc'd copy of its text in *sval (NULL for a
 * NULL value); 0 when there is no row; -1 on an error (not reported). */
static int tunedb_one(TuneDb *t, const char *sql, const char *p, int64_t *ival, char **sval)
{
	sqlite3_stmt *st = NULL;
	if (sqlite3_prepare_v2(t->db, sql, -1, &st, NULL) != SQLITE_OK)
		return -1;
	if (p && sqlite3_bind_text(st, 1, p, -1, SQLITE_STATIC) != SQLITE_OK) {
		sqlite3_finalize(st);
		return -1;
	}
	int rc = sqlite3_step(st), got = 0;
	if (rc == SQLITE_ROW) {
		got = 1;
		if (ival)
			*ival = sqlite3_column_int64(st, 0);
		if (sval) {
			const unsigned char *s = sqlite3_column_text(st, 0);
			*sval = s ? strdup((const char *)s) : NULL;
			if (s && !*sval)
				diag_internal(__FILE__, __LINE__, "out of memory");
		}
	} else if (rc != SQLITE_DONE) {
		got = -1;
	}
	/* finalize reports the step's error again; keep its message */
	sqlite3_finalize(st);
	return got;
}

/* Is there a table (not a view) of this name? 1, 0, or -1 on an error. */
static int tunedb_has_table(TuneDb *t, const char *name)
{
	int64_t n = 0;
	int rc = tunedb_one(t, "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = ?1", name,
	                    &n, NULL);
	return rc < 0 ? -1 : n > 0;
}

/* Check the schema, inside the open's transaction; with create, make it in
 * a file that holds nothing yet. 0, or -1 reported ("not a doccc tuning
 * database (why)"). */
static int tunedb_check(TuneDb *t, int create, int64_t fsize)
{
	int64_t appid = 0, nobj = 0;
	if (tunedb_one(t, "PRAGMA application_id", NULL, &appid, NULL) < 0 ||
	    tunedb_one(t, "SELECT count(*) FROM sqlite_master", NULL, &nobj, NULL) < 0) {
		tunedb_fail(t, 1, "cannot open");
		return -1;
	}
	if (appid == 0 && nobj == 0) {
		if (!create) {
			diag_error(t->path, "not a doccc tuning database (%s)",
			           fsize == 0 ? "empty file" : "an empty SQLite database");
			return -1;
		}
		char sql[64];
		snprintf(sql, sizeof(sql), "PRAGMA application_id = %d", TUNEDB_APPID);
		if (tunedb_exec(t, sql) != SQLITE_OK || tunedb_exec(t, tunedb_schema) != SQLITE_OK) {
			tunedb_fail(t, 0, "cannot create the tuning database");
			return -1;
		}
		appid = TUNEDB_APPID;
	}
	if (appid != TUNEDB_APPID) {
		diag_error(t->path, "not a doccc tuning database (a SQLite database of another program: "
		                    "application_id 0x%08x)", (unsigned)appid);
		return -1;
	}
	int has = tunedb_has_table(t, "meta");
	if (has <= 0) {
		if (has < 0)
			tunedb_fail(t, 1, "cannot read");
		else
			diag_error(t->path, "not a doccc tuning database (no meta table)");
		return -1;
	}
	char *app = NULL, *fmt = NULL;
	int ok = tunedb_one(t, "SELECT value FROM meta WHERE key = ?1", "application", NULL, &app) >= 0 &&
	         tunedb_one(t, "SELECT value FROM meta WHERE key = ?1", "format", NULL, &fmt) >= 0;
	int rc = -1;
	if (!ok) {
		tunedb_fail(t, 1, "cannot read");
	} else if (!app || strcmp(app, TUNEDB_APP)) {
		diag_error(t->path, "not a doccc tuning database (meta has no application '" TUNEDB_APP "')");
	} else {
		/* the format: a decimal number, 1 or more */
		char *end = NULL;
		errno = 0;
		long f = fmt && *fmt >= '0' && *fmt <= '9' ? strtol(fmt, &end, 10) : 0;
		if (f < 1 || errno || *end)
			diag_error(t->path, "not a doccc tuning database (format '%s')", fmt ? fmt : "");
		else {
			t->foreign = f > TUNEDB_FORMAT;
			rc = 0;
		}
	}
	free(app);
	free(fmt);
	if (rc < 0 || t->foreign)
		return rc;
	for (int i = 0; i < Q_N; i++)
		if (sqlite3_prepare_v3(t->db, tunedb_sql[i], -1, SQLITE_PREPARE_PERSISTENT, &t->q[i], NULL) !=
		    SQLITE_OK) {
			/* "no such table: steps", "no such column: rule_ns" */
			diag_error(t->path, "not a doccc tuning database (%s)", sqlite3_errmsg(t->db));
			return -1;
		}
	return 0;
}

/* The structure of the whole file (every b-tree page): 0, or -1 reported. */
static int tunedb_quick_check(TuneDb *t)
{
	char *res = NULL;
	int rc = tunedb_one(t, "PRAGMA quick_check(1)", NULL, NULL, &res);
	if (rc < 0)
		tunedb_fail(t, 1, "cannot read");
	else if (!res || strcmp(res, "ok"))
		diag_error(t->path, "damaged tuning database (%s)", res ? res : "quick_check returned nothing");
	int ret = rc >= 0 && res && !strcmp(res, "ok") ? 0 : -1;
	free(res);
	return ret;
}

/* SQLite's defences for a file that may be hostile. */
static void tunedb_harden(sqlite3 *db)
{
	sqlite3_db_config(db, SQLITE_DBCONFIG_DEFENSIVE, 1, (int *)NULL);
	sqlite3_db_config(db, SQLITE_DBCONFIG_ENABLE_TRIGGER, 0, (int *)NULL);
#ifdef SQLITE_DBCONFIG_TRUSTED_SCHEMA
	sqlite3_db_config(db, SQLITE_DBCONFIG_TRUSTED_SCHEMA, 0, (int *)NULL);
#endif
#ifdef SQLITE_DBCONFIG_ENABLE_VIEW
	sqlite3_db_config(db, SQLITE_DBCONFIG_ENABLE_VIEW, 0, (int *)NULL);
#endif
	sqlite3_limit(db, SQLITE_LIMIT_LENGTH, TUNEDB_MAX_VALUE);
	sqlite3_limit(db, SQLITE_LIMIT_ATTACHED, 0);
	sqlite3_busy_timeout(db, TUNEDB_BUSY_MS);
	sqlite3_exec(db, "PRAGMA cell_size_check = ON", NULL, NULL, NULL);
}

TuneDb *tunedb_open(const char *path, int create)
{
	struct stat sb;
	int64_t fsize = -1;
	if (stat(path, &sb) == 0) {
		if (!S_ISREG(sb.st_mode)) {
			diag_error(path, "cannot open: %s", S_ISDIR(sb.st_mode) ? "it is a directory"
			                                                         : "not a regular file");
			return NULL;
		}
		fsize = sb.st_size;
	} else if (errno != ENOENT || !create) {
		diag_error(path, "cannot open: %s", strerror(errno));
		return NULL;
	}
	TuneDb *t = calloc(1, sizeof(*t));
	char *p = strdup(path);
	if (!t || !p)
		diag_internal(__FILE__, __LINE__, "out of memory");
	t->path = p;
	int flags = SQLITE_OPEN_READWRITE | (create ? SQLITE_OPEN_CREATE : 0);
	if (sqlite3_open_v2(path, &t->db, flags, NULL) != SQLITE_OK) {
		if (!t->db)
			diag_internal(__FILE__, __LINE__, "out of memory");
		int err = sqlite3_system_errno(t->db);  /* "No such file or directory" says more */
		diag_error(path, "cannot open: %s", err ? strerror(err) : sqlite3_errmsg(t->db));
		tunedb_close(t);
		return NULL;
	}
	tunedb_harden(t->db);
	/* With create, the write lock first: a second process creating the same
	 * file waits here and then finds the schema made. */
	if (tunedb_exec(t, create ? "BEGIN IMMEDIATE" : "BEGIN") != SQLITE_OK) {
		tunedb_fail(t, 1, "cannot open");
		tunedb_close(t);
		return NULL;
	}
	if (tunedb_check(t, create, fsize) < 0 || tunedb_quick_check(t) < 0) {
		tunedb_rollback(t);
		tunedb_close(t);
		return NULL;
	}
	if (tunedb_exec(t, "COMMIT") != SQLITE_OK) {
		tunedb_fail(t, 0, create ? "cannot create the tuning database" : "cannot read");
		tunedb_rollback(t);
		tunedb_close(t);
		return NULL;
	}
	return t;
}

int tunedb_foreign(const TuneDb *t)
{
	return t->foreign;
}

static int tunedb_bind_text(sqlite3_stmt *st, int i, const char *s)
{
	return sqlite3_bind_text(st, i, s ? s : "", -1, SQLITE_STATIC);
}

int tunedb_put(TuneDb *t, const TuneRow *r)
{
	DOCC_ASSERT(r->key && r->kind && r->target && r->march);
	if (t->foreign)
		return 0;
	sqlite3_stmt *st = t->q[Q_PUT];
	int rc = tunedb_exec(t, "BEGIN IMMEDIATE");
	if (rc == SQLITE_OK) {
		sqlite3_reset(st);
		const char *text[] = {r->key, r->kind, r->target, r->march};
		for (int i = 0; i < 4 && rc == SQLITE_OK; i++)
			rc = tunedb_bind_text(st, i + 1, text[i]);
		if (rc == SQLITE_OK) rc = sqlite3_bind_int(st, 5, r->threads);
		if (rc == SQLITE_OK) rc = sqlite3_bind_int(st, 6, r->version);
		if (rc == SQLITE_OK) rc = tunedb_bind_text(st, 7, r->dims);
		if (rc == SQLITE_OK) rc = tunedb_bind_text(st, 8, r->params);
		if (rc == SQLITE_OK) rc = sqlite3_bind_double(st, 9, r->ns);
		if (rc == SQLITE_OK) rc = sqlite3_bind_double(st, 10, r->rule_ns);
		if (rc == SQLITE_OK) rc = tunedb_bind_text(st, 11, r->trials);
		if (rc == SQLITE_OK) rc = tunedb_bind_text(st, 12, r->text);
		if (rc == SQLITE_OK) {
			rc = sqlite3_step(st);
			rc = rc == SQLITE_DONE ? SQLITE_OK : rc;
		}
		if (rc == SQLITE_OK)
			rc = tunedb_exec(t, "COMMIT");
	}
	if (rc != SQLITE_OK)
		tunedb_fail(t, 0, "cannot write");
	/* unbind: the strings are the caller's */
	sqlite3_reset(st);
	sqlite3_clear_bindings(st);
	if (rc != SQLITE_OK) {
		tunedb_rollback(t);
		return -1;
	}
	return 0;
}

/* A text column copied into a (NULL is ""; a NUL inside ends it). */
static const char *tunedb_col_text(sqlite3_stmt *st, int i, Arena *a)
{
	const unsigned char *s = sqlite3_column_text(st, i);
	return s ? arena_strndup(a, (const char *)s, (size_t)sqlite3_column_bytes(st, i)) : "";
}

/* The current row of a SELECT TUNEDB_COLS into *out. */
static void tunedb_row(sqlite3_stmt *st, Arena *a, TuneRow *out)
{
	out->key = tunedb_col_text(st, 0, a);
	out->kind = tunedb_col_text(st, 1, a);
	out->target = tunedb_col_text(st, 2, a);
	out->march = tunedb_col_text(st, 3, a);
	out->threads = sqlite3_column_int(st, 4);
	out->version = sqlite3_column_int(st, 5);
	out->dims = tunedb_col_text(st, 6, a);
	out->params = tunedb_col_text(st, 7, a);
	out->ns = sqlite3_column_double(st, 8);
	out->rule_ns = sqlite3_column_double(st, 9);
	out->trials = tunedb_col_text(st, 10, a);
	out->text = tunedb_col_text(st, 11, a);
}

/* Bind the query's (a, target, march, version, threads) as ?1..?5. */
static int tunedb_bind_query(sqlite3_stmt *st, const char *a, const char *target, const char *march, int version,
                             int threads)
{
	int rc = tunedb_bind_text(st, 1, a);
	if (rc == SQLITE_OK) rc = tunedb_bind_text(st, 2, target);
	if (rc == SQLITE_OK) rc = tunedb_bind_text(st, 3, march);
	if (rc == SQLITE_OK) rc = sqlite3_bind_int(st, 4, version);
	if (rc == SQLITE_OK) rc = sqlite3_bind_int(st, 5, threads);
	return rc;
}

int tunedb_get(TuneDb *t, const char *key, const char *target, const char *march, int threads, int version,
               Arena *a, TuneRow *out)
{
	memset(out, 0, sizeof(*out));
	if (t->foreign)
		return 0;
	sqlite3_stmt *st = t->q[Q_GET];
	sqlite3_reset(st);
	int rc = tunedb_bind_query(st, key, target, march, version, threads), found = -1;
	if (rc == SQLITE_OK) {
		rc = sqlite3_step(st);
		if (rc == SQLITE_ROW) {
			tunedb_row(st, a, out);
			found = 1;
		} else if (rc == SQLITE_DONE) {
			found = 0;
		}
	}
	if (found < 0)
		tunedb_fail(t, 0, "cannot read");
	sqlite3_reset(st);
	sqlite3_clear_bindings(st);
	return found;
}

int tunedb_kind(TuneDb *t, const char *kind, const char *target, const char *march, int threads, int version,
                Arena *a, TuneRow **rows, int *n)
{
	*rows = NULL;
	*n = 0;
	if (t->foreign)
		return 0;
	sqlite3_stmt *st = t->q[Q_KIND];
	sqlite3_reset(st);
	int rc = tunedb_bind_query(st, kind, target, march, version, threads), cap = 0;
	while (rc == SQLITE_OK && (rc = sqlite3_step(st)) == SQLITE_ROW) {
		TuneRow r;
		tunedb_row(st, a, &r);
		VEC_PUSH(a, *rows, *n, cap, r);
		rc = SQLITE_OK;
	}
	int ret = 0;
	if (rc != SQLITE_DONE) {
		tunedb_fail(t, 0, "cannot read");
		ret = -1;
	}
	sqlite3_reset(st);
	sqlite3_clear_bindings(st);
	return ret;
}

int tunedb_count_other(TuneDb *t, int version)
{
	if (t->foreign)
		return 0;
	sqlite3_stmt *st = t->q[Q_OTHER];
	sqlite3_reset(st);
	int rc = sqlite3_bind_int(st, 1, version), n = -1;
	if (rc == SQLITE_OK && (rc = sqlite3_step(st)) == SQLITE_ROW) {
		sqlite3_int64 c = sqlite3_column_int64(st, 0);
		n = c > 0x7fffffff ? 0x7fffffff : (int)c;
	}
	if (n < 0)
		tunedb_fail(t, 0, "cannot read");
	sqlite3_reset(st);
	return n;
}

void tunedb_close(TuneDb *t)
{
	if (!t)
		return;
	for (int i = 0; i < Q_N; i++)
		sqlite3_finalize(t->q[i]);
	/* everything is finalized: close cannot be busy */
	sqlite3_close(t->db);
	free(t->path);
	free(t);
}
