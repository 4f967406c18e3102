/*
 * lib.h - doccc's support library: everything that knows nothing of the IR.
 *
 * One header, sectioned by file, so it reads as a table of contents of lib/.
 * Dependencies point one way (cmd -> backends -> ir -> lib): nothing here may
 * include ir/ or backends/ headers.
 *
 * Conventions: functions are module_verb; a function that can fail for a
 * user-visible reason reports through diag_* (with a location) and returns
 * -1 or NULL; internal bugs go through DOCC_ASSERT, which aborts.
 */
#ifndef DOCCC_LIB_H
#define DOCCC_LIB_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define DOCCC_VERSION "0.1.0"

#define COUNTOF(a) (sizeof(a) / sizeof((a)[0]))
#define MIN(a, b) ((a) < (b) ? (a) : (b))
#define MAX(a, b) ((a) > (b) ? (a) : (b))

#if defined(__GNUC__)
#define PRINTF_LIKE(f, a) __attribute__((format(printf, f, a)))
#define NORETURN __attribute__((noreturn))
#else
#define PRINTF_LIKE(f, a)
#define NORETURN
#endif

/* ---- diag.c: diagnostics --------------------------------------------------
 * User errors carry a location first: "model.pt2: graph.nodes[12] (node
 * 'addmm_3'): error: ..." or "opts.yaml:4:3: error: ...". loc may be NULL or
 * "" (then "doccc: error: ..."). Everything goes to stderr. diag_errors()
 * counts the errors reported so far, so a phase can report all problems of
 * one kind before the caller stops. */
void diag_error(const char *loc, const char *fmt, ...) PRINTF_LIKE(2, 3);
void diag_warn(const char *loc, const char *fmt, ...) PRINTF_LIKE(2, 3);
void diag_note(const char *loc, const char *fmt, ...) PRINTF_LIKE(2, 3);
void diag_verror(const char *loc, const char *fmt, va_list ap);
int diag_errors(void);
void diag_reset(void);
void diag_rewind(int nerrors);   /* forget the errors counted since diag_errors() was nerrors */
/* When set, diagnostics are appended to this buffer instead of stderr (unit
 * tests use it to check messages). NULL restores stderr. */
struct Buf;
struct Buf *diag_capture(struct Buf *b);  /* returns the sink it replaces */

/* Internal bug: prints file:line and the failed expression, then aborts. */
NORETURN void diag_internal(const char *file, int line, const char *fmt, ...) PRINTF_LIKE(3, 4);
#define DOCC_ASSERT(x) \
	((x) ? (void)0 : diag_internal(__FILE__, __LINE__, "assertion failed: %s", #x))
#define DOCC_UNREACHABLE() diag_internal(__FILE__, __LINE__, "unreachable")

/* ---- checked arithmetic ------------------------------------------------------
 * Every size, element count, stride and byte offset that comes from input is
 * computed with these, in one place: each returns 0 and stores the result, or
 * returns -1 (leaving *out unchanged) when the exact result does not fit. */
static inline int ck_add(int64_t a, int64_t b, int64_t *out)
{
	int64_t r;
	if (__builtin_add_overflow(a, b, &r)) return -1;
	*out = r;
	return 0;
}
static inline int ck_mul(int64_t a, int64_t b, int64_t *out)
{
	int64_t r;
	if (__builtin_mul_overflow(a, b, &r)) return -1;
	*out = r;
	return 0;
}
static inline int ck_size(size_t a, size_t b, size_t *out)  /* a*b as size_t */
{
	size_t r;
	if (__builtin_mul_overflow(a, b, &r)) return -1;
	*out = r;
	return 0;
}

/* ---- arena.c: arena memory -------------------------------------------------
 * One arena per compilation; no individual frees. Memory is zeroed and
 * aligned to 16 bytes (arena_alloc_aligned for more). Out of memory aborts
 * with a message (there is nothing sensible to recover). */
typedef struct Arena Arena;
Arena *arena_new(void);
void arena_free(Arena *a);
/* fn(ctx) when a is freed, the last registered first: resources that live
 * as long as the arena's data (an open archive, malloc'd buffers). */
void arena_defer(Arena *a, void (*fn)(void *ctx), void *ctx);
void *arena_alloc(Arena *a, size_t n);
void *arena_alloc_aligned(Arena *a, size_t n, size_t align);
char *arena_strdup(Arena *a, const char *s);
char *arena_strndup(Arena *a, const char *s, size_t n);
char *arena_printf(Arena *a, const char *fmt, ...) PRINTF_LIKE(2, 3);
/* Grow *arr (element size elsz) so that it holds at least need elements;
 * *cap tracks the capacity. Old contents are copied (the old block is left
 * in the arena). */
void arena_grow(Arena *a, void **arr, int *cap, int need, size_t elsz);
/* Append one element: VEC_PUSH(arena, arr, n, cap, value). */
#define VEC_PUSH(ar, arr, n, cap, v)                                             \
	do {                                                                         \
		if ((n) >= (cap))                                                        \
			arena_grow((ar), (void **)&(arr), &(cap), (n) + 1, sizeof(*(arr))); \
		(arr)[(n)++] = (v);                                                      \
	} while (0)

/* ---- buf.c: growable strings (malloc'd, not arena) ------------------------- */
typedef struct Buf {
	char *s;    /* always NUL-terminated once anything was written */
	size_t len;
	size_t cap;
} Buf;
void buf_puts(Buf *b, const char *s);
void buf_putn(Buf *b, const char *s, size_t n);
void buf_putc(Buf *b, int c);
void buf_printf(Buf *b, const char *fmt, ...) PRINTF_LIKE(2, 3);
void buf_vprintf(Buf *b, const char *fmt, va_list ap);
void buf_free(Buf *b);
/* data[0..n) in base64 (RFC 4648), lines of 76 characters, each ended by
 * a newline (what base64 -d reads: doccc tune's runner script). */
void buf_base64(Buf *b, const void *data, size_t n);

/* ---- buf.c: text from the input, made safe where it is written ---------------
 * Every string that comes from outside (node, tensor, op and module names,
 * stack traces, metadata, assertion messages, paths, the command line)
 * enters generated C, a header, a JSON or DOT dump or a terminal message
 * through one of these, never through a bare %s. buf_escape takes n bytes,
 * NUL and invalid UTF-8 included; the named forms take a C string (NULL is
 * ""). What each guarantees for any input (test/fuzz/fuzz_names.c checks):
 *   ESC_COMMENT  the body of a C comment: printable text that cannot close
 *                or open a comment, continue a line (no raw newline, no
 *                backslash, no trigraph) or carry a control character,
 *                invalid UTF-8 or a bidirectional control (each shown as
 *                \xNN, or \n \t \r); inside a // comment too;
 *   ESC_CSTR     a C string literal, quotes included, that decodes to the n
 *                bytes exactly: octal escapes for every byte outside
 *                printable ASCII, \? against trigraphs;
 *   ESC_JSON     a JSON string, quotes included: \uXXXX for control
 *                characters (lossless for valid UTF-8), the text \xNN for
 *                a byte of invalid UTF-8, which JSON cannot hold;
 *   ESC_DOT      a DOT double-quoted string that shows the text: what
 *                ESC_COMMENT escapes is shown as the text \xNN;
 *   ESC_IDENT    a C identifier ([A-Za-z_][A-Za-z0-9_]*), injective: a name
 *                that is one already and does not start with "dcx_" is
 *                itself; any other becomes "dcx_" + its bytes, letters and
 *                digits kept, '_' as "__", every other byte as _XX (hex);
 *   ESC_TERM     text for a terminal: printable text as it is, what
 *                ESC_COMMENT escapes for being invisible (control
 *                characters, invalid UTF-8, bidirectional controls) shown
 *                the same way, so no escape sequence reaches the terminal. */
typedef enum { ESC_COMMENT, ESC_CSTR, ESC_JSON, ESC_DOT, ESC_IDENT, ESC_TERM } Esc;
void buf_escape(Buf *b, Esc how, const char *s, size_t n);
void buf_ccomment(Buf *b, const char *s);  /* ESC_COMMENT */
void buf_cstr(Buf *b, const char *s);      /* ESC_CSTR */
void buf_quote(Buf *b, const char *s);     /* ESC_JSON */
void buf_dot(Buf *b, const char *s);       /* ESC_DOT */
void buf_ident(Buf *b, const char *s);     /* ESC_IDENT */
/* C11, C23 and C++ keywords (a generated header is also C++). */
int c_is_keyword(const char *s);
/* Is s a C identifier ([A-Za-z_][A-Za-z0-9_]*, keywords included)? */
int c_is_ident(const char *s);

/* ---- hash.c: SHA-256 (content hashes for DOCC_REUSE_BINARIES, headers) ---- */
typedef struct {
	uint32_t h[8];
	uint64_t n;
	unsigned char buf[64];
	size_t fill;
} Sha256;
void sha256_init(Sha256 *s);
void sha256_update(Sha256 *s, const void *data, size_t n);
void sha256_final(Sha256 *s, unsigned char out[32]);
void sha256_hex(const unsigned char d[32], char out[65]);
/* The sha256 of data[0..n) in lower-case hex, in one call. */
void sha256_hex_of(const void *data, size_t n, char out[65]);

/* ---- file.c: whole files, paths --------------------------------------------- */
/* Read a whole file; NUL-terminated (the NUL is not counted in *len).
 * Reports "path: error: cannot read: <strerror>" and returns NULL. */
char *file_read(const char *path, size_t *len);
/* Write atomically: to "path.tmp.<pid>" then rename; the temporary name is
 * registered (tmp_register_output) while it exists. Reports errors; on one
 * nothing of the new data is left at path or beside it. file_write_mode
 * gives the file its permission bits before the rename. */
int file_write(const char *path, const void *data, size_t len);
int file_write_mode(const char *path, const void *data, size_t len, int mode);
/* A file written in pieces, atomically as file_write: ofile_write appends
 * (and counts size), ofile_pwrite overwrites what was written, errors are
 * kept for ofile_close (which renames into place, mode as file_write_mode,
 * or reports and removes); ofile_abort removes without a word. */
typedef struct {
	const char *path;
	Buf tmp;
	int fd, err;
	int64_t size;
} Ofile;
int ofile_open(Ofile *f, const char *path);
void ofile_write(Ofile *f, const void *data, size_t len);
void ofile_zeros(Ofile *f, size_t n);
void ofile_pwrite(Ofile *f, const void *data, size_t len, int64_t off);
int ofile_close(Ofile *f, int mode);
void ofile_abort(Ofile *f);
/* Through a fixed buffer, whatever the size: copy (atomically), move (a
 * rename, or a copy across file systems; mode < 0 keeps it), hash; and n
 * bytes at off read into dst. 0, or -1 reported. */
int file_copy(const char *from, const char *to, int mode);
int file_move(const char *from, const char *to, int mode);
int file_hash(const char *path, Sha256 *h);
int file_read_at(const char *path, int64_t off, void *dst, size_t n);
/* A read-only map of a whole regular file (*mem NULL when it is empty);
 * file_map_drop gives back the memory of the pages of [p, p+n) already
 * read, which are read again if touched. */
int file_map(const char *path, const void **mem, size_t *len);
void file_unmap(const void *mem, size_t len);
void file_map_drop(const void *p, size_t n);
int file_exists(const char *path);
const char *file_unreadable(const char *path); /* why path is no regular file, or NULL */
int dir_exists(const char *path);
int mkdir_p(const char *path);          /* like mkdir -p; reports errors */
int rm_rf(const char *path);            /* remove a file or a tree; quiet */
const char *path_base(const char *path); /* pointer into path after last '/' */
/* Model name from a path: base name without extension, made a C identifier
 * ("my-model.v2.pt2" -> "my_model_v2"; a leading digit gets a '_' prefix). */
char *path_to_ident(Arena *a, const char *path);

/* ---- json.c: JSON reading (cJSON underneath) --------------------------------
 * cJSON stores numbers as doubles, which cannot hold int64 exactly (a slice
 * end of 2^63-1 is common in exported graphs). json_parse therefore runs a
 * lexical pre-pass that turns every integer literal with more than 15 digits
 * into a string tagged with a leading '\x01' (a control character cannot
 * appear unescaped in a valid JSON string, so the tag is unambiguous);
 * json_int reads both forms exactly.
 * Malformed text is reported as "fname:line:col: error: malformed JSON ...". */
typedef struct cJSON cJSON;
cJSON *json_parse(const char *text, size_t len, const char *fname);
enum { JSON_REALS = 1 };   /* json_parse_ex: keep reals apart from integers (json_is_real) */
cJSON *json_parse_ex(const char *text, size_t len, const char *fname, int flags);
void json_free(cJSON *j);
cJSON *json_get(const cJSON *obj, const char *key);   /* NULL if absent */
int json_is_null(const cJSON *j);                      /* NULL pointer or null */
/* These return 0 on success, -1 if j has another type (no message). */
int json_int(const cJSON *j, int64_t *out);
int json_float(const cJSON *j, double *out); /* numbers, "Infinity", "-Infinity", "NaN" */
int json_is_real(const cJSON *j);            /* with JSON_REALS: a literal with a fraction or an exponent */
int json_bool(const cJSON *j, int *out);
const char *json_str(const cJSON *j);        /* NULL if not a string */
int json_len(const cJSON *j);                /* array or object size; 0 otherwise */
cJSON *json_at(const cJSON *arr, int i);
/* Union objects of torch.export have exactly one key: its name, value. */
const char *json_union_tag(const cJSON *j, cJSON **value);

/* ---- zipread.c: the .pt2 archive (libzip) ------------------------------------
 * A .pt2 from torch.export.save puts every entry under one root folder
 * ("<name>/..."); pt2_open finds it from the entry that ends in
 * "archive_format" (or the first entry). Names below are relative to it. */
typedef struct Pt2 Pt2;
Pt2 *pt2_open(const char *path);      /* reports "path: error: ..." */
void pt2_close(Pt2 *z);
const char *pt2_root(const Pt2 *z);    /* "resnet18/" or "" */
int pt2_has(Pt2 *z, const char *name);
/* Read one entry into a malloc'd buffer (NUL-terminated, not counted); NULL
 * and a message naming archive and entry if it is missing or unreadable. */
void *pt2_read(Pt2 *z, const char *name, size_t *len);
/* An entry's size, checked as pt2_read checks it, without reading it; and
 * an entry of exactly len bytes read into dst. 0, or -1 reported. */
int pt2_size(Pt2 *z, const char *name, size_t *len);
int pt2_read_into(Pt2 *z, const char *name, void *dst, size_t len);
/* len bytes from byte off of an entry (no CRC check: a part). */
int pt2_read_range(Pt2 *z, const char *name, size_t off, void *dst, size_t len);
int pt2_count(Pt2 *z);
const char *pt2_name(Pt2 *z, int i);   /* full name, root included */

/* ---- safetensors.c ------------------------------------------------------------
 * 8-byte LE header length, JSON header {"name":{"dtype","shape","data_offsets"}},
 * data. dtype strings as in the format: F64 F32 F16 BF16 I64 I32 I16 I8 U8 BOOL. */
typedef struct {
	char *name;
	char *dtype;
	int rank;
	int64_t shape[8];
	const void *data;
	size_t nbytes;
} StTensor;
typedef struct {
	const char *mem; /* the whole file, mapped read-only */
	size_t len;
	StTensor *t;
	int nt;
} Safetensors;
int st_open(Safetensors *st, const char *path); /* 0 or -1 with message */
const StTensor *st_find(const Safetensors *st, const char *name);
void st_close(Safetensors *st);

/* ---- npy.c: NumPy .npy files (version 1.0-3.0 read, 1.0 written) -------------
 * descr is the numpy type string: "<f4", "<f8", "<f2", "<i8", "<i4", "<i2",
 * "|i1", "|u1", "|b1" ("<u2" holds bfloat16 bits by convention). C order only. */
typedef struct {
	char descr[8];
	int rank;
	int64_t shape[8];
	size_t nbytes;
	void *data;     /* malloc'd */
} Npy;
int npy_read(const char *path, Npy *out);  /* reports "path: error: ..." */
int npy_write(const char *path, const char *descr, int rank, const int64_t *shape, const void *data);
void npy_free(Npy *a);

/* ---- spawn.c: running other programs, temporary files ------------------------
 * posix_spawnp with an argv vector, never a shell string. With verbose set,
 * each command is echoed to stderr first, quoted so it can be pasted into a
 * shell. The child's stderr is captured and returned (so a failing clang's
 * messages can be passed through); stdout goes to our stderr. */
extern int spawn_verbose;
/* Returns the exit status (0 = ok), or -1 if the program could not be started
 * (reported). *err receives the child's stderr (caller frees); may be NULL. */
int spawn_run(char *const argv[], char **err);
/* The same with the child's working directory dir (NULL: ours). A relative
 * program name that holds a '/' is found from dir, as the child sees it;
 * -v echoes "cd DIR && COMMAND", which reruns it from any directory. */
int spawn_run_in(const char *dir, char *const argv[], char **err);
/* The same with stdin read from file in and stdout written to file out
 * (created or truncated), where they are not NULL. */
int spawn_run_io(const char *dir, char *const argv[], const char *in, const char *out, char **err);
/* The words of s split on blanks (space, tab, newline) without a shell: no
 * quoting, no escapes, no expansion (quote characters stay in the words).
 * A NULL-terminated vector in arena a; *n is the count, 0 when s is empty
 * or all blank (what a command variable such as DOCC_CC must not be). */
char **spawn_words(Arena *a, const char *s, int *n);
/* Where spawn_run finds prog (PATH lookup as posix_spawnp's; a name with
 * a '/' as it is), its real path (symbolic links resolved) in arena a; NULL
 * when it is not found. Nothing is reported. */
char *spawn_which(Arena *a, const char *prog);
/* Milliseconds of the monotonic clock (a command's and a build's times). */
double now_ms(void);
/* Temporary files and directories registered here are removed by
 * tmp_cleanup() (called at exit and on fatal signals) unless keep is set. */
void tmp_register(const char *path);
/* The same for a temporary output name (file_write's): removed even with keep. */
void tmp_register_output(const char *path);
void tmp_unregister(const char *path);
void tmp_cleanup(void);
extern int tmp_keep;
/* mkdtemp under $DOCC_TMP (or $TMPDIR, or /tmp), prefix "doccc-"; registered. */
char *tmp_dir(Arena *a);

/* ---- progress.c: one line of progress on a terminal ------------------------
 * "doccc: PHASE DETAIL (ELAPSED)" on stderr, redrawn in place ("\r", the
 * text, "\033[K") and erased by progress_end. On after progress_start(1)
 * when stderr is a terminal (TERM not dumb); DOCC_PROGRESS=0 never,
 * DOCC_PROGRESS=1 whatever stderr is; progress_start(0) (-q, --json, a
 * forked child) always off. Off, nothing is written and each call returns
 * at once. Main thread only. */
void progress_start(int allowed);
int progress_active(void);
/* A new phase ("compiling model.c (clang)"): drawn now, the detail cleared. */
void progress_phase(const char *fmt, ...) PRINTF_LIKE(1, 2);
/* The detail after the phase ("pass expand", "3 of 16"): drawn at most
 * every 100 ms; progress_bytes sets it to "412 MiB / 1.4 GiB". */
void progress_detail(const char *fmt, ...) PRINTF_LIKE(1, 2);
void progress_bytes(int64_t done, int64_t total);
/* Called while waiting: a phase older than 2 s shows its time. */
void progress_tick(void);
/* Anything else written to stderr while the line may be shown: s written
 * with the line erased before and drawn again after (diag's messages go
 * through it). progress_hide erases it until the next draw. */
void progress_puts(const char *s);
void progress_hide(void);
void progress_end(void);      /* erase the line and turn progress off */
void progress_signal(void);   /* erase it from a signal handler (write(2) only) */
/* n bytes for people: "512 B", "4.0 KiB", "412 MiB", "1.4 GiB". */
void progress_fmt_bytes(Buf *b, int64_t n);

/* ---- options.c: compilation options (YAML file < CLI flags; env defaults) ----
 * The YAML file (libyaml) is a mapping:
 *   target: openmp            # a backend's name (Options.targets)
 *   category: desktop         # edge|desktop|server
 *   march: native             # optional ISA override
 *   triple: aarch64-linux-gnu # optional: cross-compile (x86_64-linux-gnu, aarch64-linux-gnu)
 *   approximate_math: false
 *   contraction_precision: highest   # highest|high|medium
 *   remote_tuning: false             # schedules from the tuning database
 *   pass_options:
 *     map_fusion: {enabled: false}   # nested form, or
 *     expand.tile_m: 8               # flat "pass.option" form
 * Unknown top-level keys: warning "file:line:col: warning: unknown option
 * 'x' ignored". A known key with a wrong type or value: error with
 * file:line:col. pass_options entries are kept as strings with their
 * location; ir/passes validates them against the pass table. */
typedef struct {
	char *key;    /* "pass.option" */
	char *val;    /* scalar text */
	char *loc;    /* "file:line:col" (or "--pass-opt" for the CLI) */
} PassOpt;

typedef struct Options {
	const char *targets;        /* the targets a "target" may name (", "-separated), set by the
	                             * caller from its backends; NULL: any non-empty name */
	char *target;               /* default "none" */
	char *category;             /* default "server" */
	char *march;                /* NULL: from category */
	char *triple;               /* NULL: DOCC_TRIPLE, else the host's */
	int approximate_math;       /* -1 unset (true on GPU targets, false on CPU), 0, 1 */
	char *contraction_precision; /* default "highest" */
	int remote_tuning;          /* 0, 1: read the tuning database (ir/passes/tuning.c) */
	PassOpt *passopts;
	int npassopts, cappassopts;
	Arena *arena;
} Options;

void opt_init(Options *o, Arena *a);        /* the defaults of opt_table */
/* Load a YAML file on top of o. 0 ok, -1 error(s) reported. */
int opt_load_yaml(Options *o, const char *path);
/* Set one top-level option from a string (CLI); loc used in messages. */
int opt_set(Options *o, const char *key, const char *val, const char *loc);
void opt_add_passopt(Options *o, const char *key, const char *val, const char *loc);
/* The last setting of key "pass.option", or NULL. */
const PassOpt *opt_find_passopt(const Options *o, const char *key);
/* Table of top-level options for --list-options. */
typedef struct {
	const char *name;
	const char *type;      /* "string", "bool", "mapping" */
	const char *dflt;
	const char *values;    /* allowed values or "" */
	const char *doc;
} OptionInfo;
extern const OptionInfo opt_table[];
extern const int opt_ntable;

/* ---- tunedb.c: the tuning database (SQLite) -----------------------------------
 * doccc tune's measured schedules, one row per step, target, march, thread
 * count and cost-model version; lib/ stores the text and numbers and gives
 * them no meaning. Several processes may share one file (each put is one
 * transaction; a lock is waited for up to 60 s). Strings read back are
 * copied into the caller's arena and are as stored: a file is input, so the
 * caller checks dims and params before using them. */
typedef struct TuneDb TuneDb;
typedef struct {
	const char *key;      /* sha256 hex of the step's canonical text (64 chars) */
	const char *kind;     /* the step's kind ("conv2d 3x3 s1 g1 f32"): transfer takes only the same kind */
	const char *target;   /* "openmp" */
	const char *march;    /* "x86-64-v3" */
	int threads;          /* the thread count it was timed with */
	int version;          /* the cost model's version: entries of another version are not used */
	const char *dims;     /* the step's sizes, space-separated positive integers ("1 64 56 56 64") */
	const char *params;   /* the chosen schedule's parameters, text ("tm=4 tn=16 winograd=0") */
	double ns;            /* its median time, nanoseconds */
	double rule_ns;       /* the default (rules') schedule's median time */
	const char *trials;   /* every candidate tried with its time, text */
	const char *text;     /* the canonical text of the step, for people reading the database */
} TuneRow;

/* Open the database at path. create: make the file and its tables when missing (doccc tune);
 * else a missing file is an error (a compile given tuning.db). NULL when it cannot be used,
 * reported ("PATH: error: not a doccc tuning database (file is not a database)", "PATH: error:
 * cannot open: ...", and so on). A database whose format (see below) is newer than this
 * module's opens but tunedb_foreign() returns 1 and gets/puts do nothing (get: 0 found; put: 0
 * without writing); the caller says so in a note. The format: PRAGMA application_id 0x646f6363
 * ("docc"), a table meta with format "1" and application "doccc-tuning", a table steps of
 * TuneRow's columns; a file without them (an empty file too, unless create) is not used. */
TuneDb *tunedb_open(const char *path, int create);
int tunedb_foreign(const TuneDb *db);
/* Insert or replace the row with r's (key, target, march, threads, version): 0, or -1 reported.
 * key, kind, target and march must be set; another NULL string is stored as "". */
int tunedb_put(TuneDb *db, const TuneRow *r);
/* The row for key at (target, march, threads, version) into *out (strings in arena a): 1 found,
 * 0 not, -1 reported. threads 0: the row with the largest thread count present for that key. */
int tunedb_get(TuneDb *db, const char *key, const char *target, const char *march, int threads, int version,
               Arena *a, TuneRow *out);
/* Every row of kind at (target, march, threads (0: any, for each key only its largest thread count), version),
 * ordered by key: *rows (arena a) and *n; 0, or -1 reported. For transfer tuning. */
int tunedb_kind(TuneDb *db, const char *kind, const char *target, const char *march, int threads, int version,
                Arena *a, TuneRow **rows, int *n);
/* Rows whose version is not version (for the note "N entries of another doccc version ignored"). -1 on error. */
int tunedb_count_other(TuneDb *db, int version);
void tunedb_close(TuneDb *db);   /* NULL is a no-op */

#endif
