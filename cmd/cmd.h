/*
 * cmd.h - the driver's pieces: argv parsing and orchestration live in
 * doccc.c, the flags the compile shares with `doccc opt` in args.c;
 * `doccc run` lives in run.c, `doccc check` in check.c, `doccc inspect` in
 * inspect.c, `doccc opt` in opt.c. Exit codes are the CLI's contract.
 */
#ifndef DOCCC_CMD_H
#define DOCCC_CMD_H

#include "../backends/backend.h"
#include "../backends/doccc_model.h"
#include "../ir/ir.h"

enum {
	EXIT_OK = 0,
	EXIT_INPUT = 1,     /* bad input, unsupported model, run-time failure */
	EXIT_USAGE = 2,     /* bad command line */
	EXIT_CC = 3         /* the external compiler failed */
};

/* argv pieces every subcommand uses (args.c). arg_take: is argv[*i] flag,
 * as "FLAG VALUE" (taken, *i advanced; *v NULL when it is last) or
 * "FLAG=VALUE"? arg_usage: "doccc: error: " fmt (one %s, arg), then the
 * command's usage line; returns EXIT_USAGE. */
int arg_take(int argc, char **argv, int *i, const char *flag, const char **v);
int arg_usage(const char *usage, const char *fmt, const char *arg);

/* The options that choose the target and configure the passes, shared by
 * the compile and `doccc opt` (args.c): -t, -c, --march, --offload-arch, --triple,
 * --options FILE, --pass-opt P.K=V, --disable-pass P. targs_take takes
 * argv[*i] if it is one: 0 when it is none, -1 when taken, else the exit
 * code of a usage error (reported). targs_apply applies them in order, the
 * YAML file, then the flags, then checks the pass options and resolves the
 * target: -1 to go on, else the exit code (reported). */
typedef struct {
	const char *usage;        /* the command's usage line, for messages */
	Buf *cmdline;             /* the settings as text, appended to */
	const char *optfile;
	const char *set_key[64], *set_val[64];
	int nset;
	const char *popts[128];
	int npopts;
} TargetArgs;
int targs_take(Arena *a, TargetArgs *t, int argc, char **argv, int *i);
int targs_apply(Arena *a, const TargetArgs *t, Options *o, Target *tg);

/* doccc opt SDFG.json [--pass NAME]... [options] [-o OUT.json] (opt.c): read an
 * SDFG dump, run passes of the table on it, write the dump. argv[0] is
 * "opt". Exit 0, 1 for bad input or a failed pass, 2 for usage. */
int cmd_opt(Arena *a, int argc, char **argv);

/* doccc run LIB -i IN.npy... -o OUT.npy... [--repeat N] [--threads N]
 *               [--weights FILE] [--warmup N] [--device] [-q]
 *               [--expect REF.npy... [--rtol R] [--atol A] [--json]]
 *               [--step -i IN.npy... [-o OUT.npy...] [--expect REF.npy...]]...
 * argv[0] is "run". Each --step starts a step of its own files; the steps
 * run in order on one instance of the model. Returns an exit code: with
 * --expect, 1 also when an output of any step is outside the tolerance of
 * its reference. */
int cmd_run(int argc, char **argv);

/* An array against its reference, as doccc run --expect and doccc compare
 * compare them (cmp.c): |got - ref| <= atol + rtol*|ref| element by
 * element (integers and bool exactly, NaN only against NaN). cmp_family:
 * the kind a .npy descr compares as, 0 float ("<u2", bfloat16's bits,
 * too), 1 integer, 2 bool; arrays of two kinds do not compare. cmp_put:
 * the comparison as the report prints it (json 0: text; 1: JSON members);
 * t gives the shape and element count, gd got's descr. cmp_put_num: a
 * number as the reports print it. */
typedef struct {
	double max_abs;   /* over the elements where neither value is NaN */
	double max_rel;   /* |got - ref| / |ref| over those where ref != 0 too */
	int64_t nbad;     /* elements outside the tolerance */
	int64_t worst;    /* flat index of the worst element; -1 when empty */
} Cmp;
int cmp_family(const char *descr);
void cmp_arrays(const char *gd, const void *got, const char *rd, const void *ref, int64_t n, double rtol, double atol,
                Cmp *c);
void cmp_put(Buf *b, const doccc_tensor_desc *t, const Cmp *c, const char *gd, const void *got, const Npy *ref, int json);
void cmp_put_num(Buf *b, double v, int digits, int json);
void cmp_put_shape(Buf *b, int rank, const int64_t *shape);   /* "[2, 3]" */
/* The file a dump keeps a value called name in: its letters, digits, '_',
 * '-' and '.', anything else as '_', no leading '.', at most 200 bytes,
 * then ".npy" (python -m doccc.reference names its files by the same rule). */
void cmp_value_file(Buf *b, const char *name);

/* doccc compare GOT_DIR REF_DIR [--rtol R] [--atol A] [--json] (compare.c):
 * the values doccc run --dump-values wrote against a reference dump
 * (python -m doccc.reference), node by node in run order; names the first
 * value outside the tolerance. argv[0] is "compare". Exit 0 when every
 * value compared is within it, 1 when one is not or on bad input, 2 for
 * usage. */
int cmd_compare(int argc, char **argv);

/* doccc inspect FILE [--json] (inspect.c): what a doccc library, static
 * archive or weights file is, read from the file without loading it. argv[0]
 * is "inspect". Exit 0, 1 for a file that is not one (or damaged weights),
 * 2 for usage. inspect_bytes is the same on the bytes p[0..n) of path, the
 * report appended to out (test/fuzz/fuzz_inspect.c). */
int cmd_inspect(int argc, char **argv);
int inspect_bytes(Arena *a, const char *path, const unsigned char *p, size_t n, int json, Buf *out);

/* doccc check MODEL [--json] (check.c): the op census, dtypes, dynamic
 * dims and GPU verdict of a program, without compiling. Exit 0 when the
 * model is supported, 1 when not. */
int cmd_check(Arena *a, const char *name, const ImportArgs *ia, Options *o, const Target *tg, int json);

/* The files a compile reads (buildsys.c), given files = {the input, the
 * --weights file, the --options file, the tuning database} (NULL where
 * absent): those, and for
 * an extracted archive (ROOT/models/model.json beside
 * ROOT/data/weights/model_weights_config.json, where the importer reads its
 * weights) the files under ROOT/data/weights and ROOT/data/constants, in
 * name order. The depfile lists them; the cache key hashes them. */
typedef struct {
	const char **v;
	int n, cap;
} Paths;
void compile_reads(Arena *a, const char *const files[4], Paths *ps);

/* DOCC_REUSE_BINARIES (cache.c). cache_lookup: 1 when the outputs of ba
 * were installed from the cache entry of key (the options that change the
 * output) and the bytes of the files reads; 0 when they were not (c->dir:
 * where cache_store keeps the build, NULL when the cache is off; reuse 0:
 * never installs, only says where to store); -1 when
 * installing them failed (reported, nothing left). */
typedef struct {
	char *dir;
	int stale;
} Cache;
int cache_lookup(Arena *a, Cache *c, const BuildArgs *ba, const Paths *reads, const char *key, int reuse);
void cache_store(Arena *a, const Cache *c, const BuildArgs *ba);

/* -MD, -MF FILE, -MT TARGET, --emit-pkgconfig, --emit-cmake (buildsys.c). */
typedef struct {
	int depfile;             /* -MD or -MF */
	const char *mf;          /* -MF FILE; NULL: the library's path with .d for .so or .a */
	const char *mt[64];      /* -MT targets, written as given; none: the library's path */
	int nmt;
	const char *prereqs[4];  /* the input, --weights, --options, the tuning database (NULL where absent) */
	int pkgconfig, cmake;    /* NAME.pc, NAMEConfig.cmake beside the library */
} BuildSys;
/* Write the files s asks for, about the installed outputs of ba (argv0:
 * doccc's argv[0], where /proc/self/exe is missing). 0 ok; -1 reported, and
 * none of the files this call wrote is left. */
int buildsys_write(Arena *a, const BuildSys *s, const char *argv0, const char *name, const Target *t,
                   const BuildArgs *ba);

/* The quantized ops of g and how each runs: text lines, or JSON array
 * elements (check.c; doccc check and --report). */
void print_quant_steps(const Sdfg *g, Buf *b, int json);

/* doccc tune MODEL --tuning-db FILE [options] (tune.c): time candidate
 * schedules of the model's steps here or through a runner, keep the best
 * in the database. Exit 0, 1 (bad input, a database that cannot be
 * written, the harness failed), 2 (usage), 3 (the compiler failed). */
typedef struct {
	const char *usage;        /* the usage line, for messages */
	double budget;            /* seconds: no step starts after it (--tune-budget) */
	const char *runner;       /* --tune-runner or DOCC_TUNE_RUNNER: times elsewhere, or NULL */
	int threads;              /* timed on this many (0: openmp all cores, sequential 1) */
	int jobs;                 /* compiles at once (-j; 0: the cores) */
	int retune;               /* time again the steps the database holds */
	double ms;                /* per candidate and round (DOCC_TUNE_MS, default 30) */
} TuneArgs;
int cmd_tune(Arena *a, const char *name, const ImportArgs *ia, Options *o, Target *tg, const TuneArgs *ta);

/* --report FILE (report.c). */
typedef struct {
	double import_ms, passes_ms, build_ms;
} Times;
int report_write(const char *path, Sdfg *g, const Target *t, const char *input, const BuildArgs *ba, const Times *tm);

#endif
