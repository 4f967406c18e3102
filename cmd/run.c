/*
 * run.c - `doccc run`: load any doccc library, feed it .npy files, write .npy
 * files, optionally time it, optionally check its outputs against references.
 *
 *   doccc run LIB.so -i IN.npy... [-o OUT.npy...] [--expect REF.npy...]
 *                    [--step -i IN.npy... [-o OUT.npy...] [--expect REF.npy...]]...
 *                    [--rtol R] [--atol A] [--json] [--repeat N] [--warmup N]
 *                    [--threads N] [--weights FILE] [--device] [-q]
 *
 * The library is opened with dlopen and found through the fixed symbol
 * `doccc_model` (backends/doccc_model.h), so this command needs no header and
 * no knowledge of the model's name: the descriptor gives the inputs' and
 * outputs' names, dtypes and shapes, and the create/run/destroy entry points.
 *
 * The command line is one step or several: each --step starts a new one,
 * and the -i, -o and --expect files after it are that step's (the first
 * step needs no --step); every other option applies to all steps. The
 * steps run in order on ONE instance of the model, created once, so a
 * library that keeps state between runs (a decoder's KV cache) sees the
 * sequence a caller would make (prefill, then decode). A library with
 * run-time dims gets each step's dims, inferred from that step's inputs,
 * before the step runs. With one step, every message and report is the
 * same as before steps existed; with several, each names its step
 * ("step 2: ...").
 *
 * Everything the user supplies is checked against the descriptor before the
 * model is created, step by step: a step without -i when the library has
 * inputs (with several steps; a usage error, exit 2: inputs do not carry
 * over), the number of -i, -o and --expect files against the library's
 * inputs and outputs, then each input's dtype and shape and each
 * reference's dtype family and shape (exit 1, every mismatch of every step
 * reported before stopping; a wrong count is a fault of what was given for
 * this library, not of the command's syntax, so it is not a usage error).
 * Inputs are copied into 64-byte aligned buffers, as are the outputs (each
 * step has its own), so the generated code sees the same alignment as from
 * C callers that use aligned_alloc. With --repeat N the sequence of steps
 * runs --warmup times (default 1) and then N timed times; the median and
 * minimum latency of the whole sequence (and, with several steps, of each
 * step) go to stdout. Outputs are written only after every run succeeded,
 * and if writing one of them fails the ones already written are removed, so
 * a failure leaves no partial set of outputs behind. The model is destroyed
 * and the library closed on every path.
 *
 * --expect (the CI gate) compares each output, on the host (a device
 * library's outputs are copied back first), with its reference as numpy's
 * allclose does: |got - ref| <= atol + rtol * |ref| for every element, in
 * double precision, with NaN equal only to a NaN of the reference at the
 * same place and an infinity only to the same infinity. Integer and bool
 * outputs compare exactly. The report (text, or one JSON object with
 * --json) gives each output's largest absolute and relative error, the
 * count of elements outside the tolerance and the worst of them, step by
 * step; the exit status is 1 when any output of any step fails, and the
 * verdict names the first that did.
 *
 * A library built for another architecture (doccc --triple
 * aarch64-linux-gnu on an x86-64 machine) cannot be loaded here: its ELF
 * header says so, and the command then runs as a whole, with the same
 * arguments, in doccc's runner for that architecture (this file built
 * with -DDOCCC_RUNNER: build/aarch64-linux-gnu/doccc-run, or
 * PREFIX/libexec/doccc/aarch64-linux-gnu/doccc-run once installed) under
 * qemu-user (DOCC_QEMU, default qemu-aarch64) with the cross sysroot's
 * loader and libraries, which passes its output and exit status through. So `doccc run lib.so --expect ref.npy` gates an ARM
 * artifact in an x86 CI job.
 */
#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../lib/lib.h"
#include "../backends/doccc_model.h"
#include "cmd.h"

static const char usage_text[] =
	"usage: doccc run LIB.so -i IN.npy... -o OUT.npy... [--repeat N] [--warmup N]\n"
	"                 [--threads N] [--weights FILE] [--device] [-q]\n"
	"       doccc run LIB.so -i IN.npy... [--repeat N] [--json] [--profile]\n"
	"                 [--trace FILE] [--dump-values DIR] [options above]\n"
	"       doccc run LIB.so -i IN.npy... [-o OUT.npy...] --expect REF.npy...\n"
	"                 [--rtol R] [--atol A] [--json] [options above]\n"
	"       doccc run LIB.so STEP [--step STEP]... [options above]\n"
	"                 where STEP is -i IN.npy... [-o OUT.npy...] [--expect REF.npy...]\n"
	"  -i IN.npy        an input, once per model input, in graph order\n"
	"  -o OUT.npy       an output, once per model output, in graph order\n"
	"  --expect REF.npy the reference of an output, once per model output, in graph\n"
	"                   order: compare, print the errors, exit 1 if any is outside\n"
	"                   |got - ref| <= atol + rtol*|ref| (integers, bool: exactly)\n"
	"  --step           start the next step: the -i, -o, --expect after it are its\n"
	"                   own; the steps run in order on one instance of the model\n"
	"                   (its state, if any, kept from step to step); the other\n"
	"                   options apply to every step\n"
	"  --rtol R         relative tolerance of --expect (default 1e-4)\n"
	"  --atol A         absolute tolerance of --expect (default 1e-5)\n"
	"  --json           print the report of --expect and --repeat as one JSON object\n"
	"                   (times in ms)\n"
	"  --repeat N       time N runs and print the median, minimum and 90th percentile\n"
	"                   latency (with --step: N runs of the whole sequence, and each\n"
	"                   step's time); -o is then optional\n"
	"  --warmup N       untimed runs before the timed ones (default 1 with --repeat)\n"
	"  --profile        each fused node's time, share and GFLOP/s, longest first\n"
	"                   (a library built with doccc --profile or --values)\n"
	"  --trace FILE     write the runs' fused nodes as a Chrome trace (Perfetto)\n"
	"  --dump-values DIR  write every fused node's values as DIR/NAME.npy and\n"
	"                   DIR/values.json (a library built with doccc --values), for\n"
	"                   doccc compare DIR REF_DIR\n"
	"  --threads N      number of threads (openmp builds)\n"
	"  --weights FILE   weights file of a library built with --external-weights\n"
	"  --device         device-resident (cuda, rocm) library: copy the inputs to the GPU\n"
	"                   once and run on device pointers (default: NAME_run_host, which\n"
	"                   copies on every run and says so once)\n"
	"  -q               do not list the outputs written\n";

/* numpy spelling and descr of each DOCCC_* dtype (bfloat16 travels as the
 * raw bits in a uint16 array, the convention of lib/npy.c). */
static const struct {
	const char *name;
	const char *descr;
	size_t size;
} dtypes[] = {
	[DOCCC_F32] = {"float32", "<f4", 4},
	[DOCCC_F64] = {"float64", "<f8", 8},
	[DOCCC_F16] = {"float16", "<f2", 2},
	[DOCCC_BF16] = {"bfloat16", "<u2", 2},
	[DOCCC_I64] = {"int64", "<i8", 8},
	[DOCCC_I32] = {"int32", "<i4", 4},
	[DOCCC_I16] = {"int16", "<i2", 2},
	[DOCCC_I8] = {"int8", "|i1", 1},
	[DOCCC_U8] = {"uint8", "|u1", 1},
	[DOCCC_BOOL] = {"bool", "|b1", 1},
};

/* Largest rank an .npy file can carry through lib/npy.c. */
enum { MAX_RANK = (int)COUNTOF(((Npy *)0)->shape), MAX_IO = 256, MAX_DIMS = 64 };

/* One step's files, in the order given: pointers into RunArgs' arrays of
 * every step's -i, -o and --expect, which hold the steps one after the
 * other. */
typedef struct {
	const char **in, **out, **expect;
	int nin, nout, nexpect;
} StepArgs;

/* The user's command line, parsed. */
typedef struct {
	const char *lib;
	const char **in;   /* every step's -i, step after step */
	int nin;
	const char **out;
	int nout;
	int repeat;        /* 0: run once, untimed */
	int warmup;        /* -1: default (1 with --repeat, else 0) */
	int threads;       /* 0: leave the library's default */
	const char *weights;
	int quiet;
	int device;        /* --device: run on device pointers */
	const char **expect;  /* --expect: a reference per output */
	int nexpect;
	double rtol, atol;
	int rtol_given, atol_given;
	int json;          /* --json: the --expect and --repeat report as JSON */
	int profile;       /* --profile: each fused node's time, sorted */
	const char *trace; /* --trace FILE: a Chrome trace of the nodes */
	const char *dumpdir; /* --dump-values DIR: every node's values as .npy */
	StepArgs *steps;   /* at least one */
	int nsteps;
} RunArgs;

/* Latency of the timed runs (--repeat), in ms. */
typedef struct {
	double median, min, p90;
} Latency;

/* A step as it runs: its files, the descriptor at its dims, its buffers.
 * Every array has an entry per input or output of the library (d). */
typedef struct {
	const StepArgs *args;
	char sp[32];                   /* messages' prefix: "step 2: ", or "" with one step */
	const doccc_model_desc *d;     /* the library's, or desc */
	doccc_model_desc desc;         /* run-time dims: the library at this step's dims */
	doccc_tensor_desc *tabs;       /* desc's inputs and outputs */
	int64_t *shapes;               /* their sizes, MAX_RANK each */
	int64_t dims[MAX_DIMS];        /* this step's run-time dims */
	void **in, **out;              /* 64-byte aligned host buffers */
	int nin, nout;                 /* entries of in, out and ref to free */
	Npy *ref;                      /* --expect */
	Cmp *cmp;                      /* --expect: the comparisons */
	double *ms;                    /* --repeat: the step's time in each timed run */
	Latency lat;
	char *dumpdir;                 /* --dump-values: where the step's values go */
	int made_dir;                  /* and this command made that folder */
} Step;

/* The node hook's state (abi 6; --profile, --trace, --dump-values): the
 * library calls on_node around every fused node of a run. The runs it
 * records are the timed ones (or the one run without --repeat); the
 * values it dumps are those of the first run of each step. */
typedef struct {
	const doccc_model_desc *d;
	const RunArgs *a;
	int record, dump;    /* this run: record its times; dump its values */
	int run, step;       /* which run of the sequence, which step */
	double t0;           /* the running node's start (ms) */
	double *sum;         /* each node's time over the recorded runs (ms) */
	long nruns;          /* runs of the library recorded */
	Buf trace;           /* --trace: the events so far, each after a comma but the first */
	long nevents;
	double origin;       /* --trace: the first run's start (ms) */
	const char *dir;     /* --dump-values: this step's directory */
	Buf index;           /* its values.json's nodes so far */
	char **files;        /* every file written, removed on a failure */
	int nfiles, capfiles;
	int failed;          /* a value could not be written (reported) */
} Hook;

/* At most this many trace events: a long --repeat gives a trace of the
 * first runs, not a file no viewer opens. */
enum { TRACE_MAX_EVENTS = 1000000 };

/* The defaults of --rtol and --atol: the test suite's tolerance against
 * eager PyTorch (RTOL and ATOL in test/conftest.py). */
#define RUN_RTOL 1e-4
#define RUN_ATOL 1e-5

/* The options that take a value. */
static const char *const value_flags[] = {
	"-i", "-o", "--expect", "--repeat", "--warmup", "--threads", "--weights", "--rtol", "--atol",
	"--trace", "--dump-values",
};

static int usage_error(const char *fmt, ...) PRINTF_LIKE(1, 2);
static int usage_error(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	diag_verror("doccc run", fmt, ap);
	va_end(ap);
	fputs(usage_text, stderr);
	return EXIT_USAGE;
}

/* A non-negative int that fills the whole argument; -1 if it is not one. */
static int parse_count(const char *s)
{
	char *end;
	long v;

	if (*s < '0' || *s > '9')
		return -1;
	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || *end || v > INT_MAX)
		return -1;
	return (int)v;
}

/* A finite number >= 0 written as a decimal ("1e-3", "0.5") that fills the
 * whole argument; -1 if it is not one. */
static double parse_tol(const char *s)
{
	char *end;
	double v;

	if (!((*s >= '0' && *s <= '9') || *s == '.'))
		return -1;
	v = strtod(s, &end);
	if (*end || !isfinite(v))
		return -1;
	return v;
}

/* Whether step st names no file. */
static int step_empty(const StepArgs *st)
{
	return !st->nin && !st->nout && !st->nexpect;
}

/* Parses argv (argv[0] == "run") into a. Long options also take the
 * --name=value form. Each --step starts a new step; one before any file
 * only marks the first (so a script may write --step before every step),
 * and a step with no file at all is a usage error. Returns EXIT_OK,
 * EXIT_USAGE after a message, or -1 for --help (printed). The arrays are
 * malloc'd; the caller frees them. */
static int parse_args(int argc, char **argv, RunArgs *a)
{
	int marked = 0;    /* a --step before the first step's files */

	memset(a, 0, sizeof *a);
	a->warmup = -1;
	a->rtol = RUN_RTOL;
	a->atol = RUN_ATOL;
	a->in = malloc((size_t)argc * sizeof *a->in);
	a->out = malloc((size_t)argc * sizeof *a->out);
	a->expect = malloc((size_t)argc * sizeof *a->expect);
	a->steps = calloc((size_t)argc + 1, sizeof *a->steps);
	if (!a->in || !a->out || !a->expect || !a->steps) {
		diag_error("doccc run", "out of memory");
		return EXIT_INPUT;
	}
	a->steps[0] = (StepArgs){a->in, a->out, a->expect, 0, 0, 0};
	a->nsteps = 1;
	for (int i = 1; i < argc; i++) {
		const char *arg = argv[i];
		const char *val = NULL;
		StepArgs *st = &a->steps[a->nsteps - 1];
		char flag[32];
		size_t n;

		if (!strcmp(arg, "-h") || !strcmp(arg, "--help")) {
			fputs(usage_text, stdout);
			return -1;
		}
		if (!strcmp(arg, "-q")) {
			a->quiet = 1;
			continue;
		}
		if (!strcmp(arg, "--device")) {
			a->device = 1;
			continue;
		}
		if (!strcmp(arg, "--json")) {
			a->json = 1;
			continue;
		}
		if (!strcmp(arg, "--profile")) {
			a->profile = 1;
			continue;
		}
		if (!strcmp(arg, "--step")) {
			if (step_empty(st) && (a->nsteps > 1 || marked))
				return usage_error("step %d is empty: give its -i, -o or --expect after --step", a->nsteps);
			if (step_empty(st)) {
				marked = 1;
				continue;
			}
			a->steps[a->nsteps++] = (StepArgs){a->in + a->nin, a->out + a->nout, a->expect + a->nexpect, 0, 0, 0};
			continue;
		}
		if (arg[0] != '-' || !arg[1]) {
			if (a->lib)
				return usage_error("unexpected argument '%s' (one library only)", arg);
			a->lib = arg;
			continue;
		}
		/* Options with a value: "-i X", "--repeat N", "--repeat=N". */
		n = strcspn(arg, "=");
		if (n >= sizeof flag || (arg[n] == '=' && arg[1] != '-'))
			return usage_error("unknown option '%s'", arg);
		memcpy(flag, arg, n);
		flag[n] = '\0';
		size_t f = 0;
		while (f < COUNTOF(value_flags) && strcmp(flag, value_flags[f]))
			f++;
		if (f == COUNTOF(value_flags))
			return usage_error("unknown option '%s'", arg);
		if (arg[n] == '=')
			val = arg + n + 1;
		else if (i + 1 < argc)
			val = argv[++i];
		else
			return usage_error("option '%s' needs a value", flag);

		if (!strcmp(flag, "-i")) {
			a->in[a->nin++] = val;
			st->nin++;
		} else if (!strcmp(flag, "-o")) {
			a->out[a->nout++] = val;
			st->nout++;
		} else if (!strcmp(flag, "--expect")) {
			a->expect[a->nexpect++] = val;
			st->nexpect++;
		} else if (!strcmp(flag, "--weights")) {
			a->weights = val;
		} else if (!strcmp(flag, "--trace") || !strcmp(flag, "--dump-values")) {
			if (!*val)
				return usage_error("%s needs a file name", flag);
			*(flag[2] == 't' ? &a->trace : &a->dumpdir) = val;
		} else if (!strcmp(flag, "--rtol") || !strcmp(flag, "--atol")) {
			double v = parse_tol(val);
			if (v < 0)
				return usage_error("%s needs a non-negative finite number, not '%s'", flag, val);
			if (flag[2] == 'r')
				a->rtol = v, a->rtol_given = 1;
			else
				a->atol = v, a->atol_given = 1;
		} else {
			int v = parse_count(val);
			if (v < 0 || (!strcmp(flag, "--threads") && v == 0))
				return usage_error("%s needs a %s number, not '%s'", flag,
				                   !strcmp(flag, "--threads") ? "positive" : "non-negative",
				                   val);
			if (!strcmp(flag, "--repeat"))
				a->repeat = v;
			else if (!strcmp(flag, "--warmup"))
				a->warmup = v;
			else
				a->threads = v;
		}
	}
	if (!a->lib)
		return usage_error("no library given");
	if (step_empty(&a->steps[a->nsteps - 1]) && (a->nsteps > 1 || marked))
		return usage_error("step %d is empty: give its -i, -o or --expect after --step", a->nsteps);
	if (!a->nexpect && (a->rtol_given || a->atol_given))
		return usage_error("%s is for comparing the outputs with references: give --expect REF.npy",
		                   a->rtol_given ? "--rtol" : "--atol");
	if (a->json && !a->nexpect && !a->repeat && !a->profile)
		return usage_error("--json prints the report of --expect, --repeat or --profile: give one");
	if (a->warmup < 0) /* the values come from the first run, which a dump makes slow: not timed */
		a->warmup = a->repeat > 0 || (a->dumpdir && (a->profile || a->trace)) ? 1 : 0;
	return EXIT_OK;
}

/* "float32" for a known numpy descr, else the descr itself. */
static const char *descr_name(const char *descr)
{
	for (size_t k = 0; k < COUNTOF(dtypes); k++)
		if (!strcmp(dtypes[k].descr, descr))
			return k == DOCCC_BF16 ? "uint16" : dtypes[k].name;
	return descr;
}

/* Checks the parts of the descriptor this command relies on, so a damaged
 * or foreign library fails with a message instead of a crash. */
static int check_desc(const char *lib, const doccc_model_desc *d)
{
	if (d->abi_version < 1 || d->abi_version > DOCCC_ABI_VERSION) {
		diag_error(lib, "descriptor ABI version %d is not supported by this doccc "
		           "(%s reads version %d); rebuild the library with this doccc",
		           d->abi_version, DOCCC_VERSION, DOCCC_ABI_VERSION);
		return -1;
	}
	if (d->ninputs < 0 || d->noutputs < 0 || (d->ninputs && !d->inputs) ||
	    (d->noutputs && !d->outputs) || !d->create || !d->run || !d->destroy ||
	    (d->abi_version >= 2 && d->device_resident &&
	     (!d->run_host || !d->device_alloc || !d->device_free || !d->device_copy))) {
		diag_error(lib, "damaged doccc descriptor");
		return -1;
	}
	for (int k = 0; k < d->ninputs + d->noutputs; k++) {
		const doccc_tensor_desc *t = k < d->ninputs ? &d->inputs[k] : &d->outputs[k - d->ninputs];
		int dyn = d->abi_version >= 4 && d->ndims > 0;
		if (t->dtype < 0 || t->dtype >= (int)COUNTOF(dtypes) || t->rank < 0 ||
		    t->rank > MAX_RANK || (t->rank && !t->shape) || t->numel < (dyn ? -1 : 0) ||
		    (dyn && (!d->set_dims || !d->infer_dims || !d->output_shape || d->ndims > MAX_DIMS))) {
			diag_error(lib, "damaged doccc descriptor (%s %d)",
			           k < d->ninputs ? "input" : "output",
			           k < d->ninputs ? k : k - d->ninputs);
			return -1;
		}
	}
	return 0;
}

/* With several steps, a note after a file that could not be read (whose
 * own message, from lib/npy.c, names only the file): which step's file it
 * was, "x.npy: note: step 2: input 0 ('x')". */
static void note_step_file(const char *path, const char *sp, const char *what, int k, const char *name)
{
	if (*sp)
		diag_note(path, "%s%s %d ('%s')", sp, what, k, name ? name : "?");
}

/* A library with run-time dims (abi 4, ndims > 0): the dims from the
 * input files' shapes (their ranks checked first), and *dd a copy of the
 * descriptor whose tensors have the sizes at those dims, so that the rest
 * of the command reads sizes as from a fixed library. tabs has room for
 * every input and output, shapes for MAX_RANK sizes of each. sp prefixes
 * the messages ("step 2: ", or ""). 0, or -1 reported. */
static int bind_dims(const char *lib, const char *sp, const doccc_model_desc *d, const char **paths,
                     doccc_model_desc *dd, doccc_tensor_desc *tabs, int64_t *shapes, int64_t *dims)
{
	const int64_t *ishape[MAX_IO];
	int bad = 0;
	*dd = *d;
	for (int k = 0; k < d->ninputs; k++) {
		Npy a;
		const doccc_tensor_desc *t = &d->inputs[k];
		if (npy_read(paths[k], &a) != 0) {
			note_step_file(paths[k], sp, "input", k, t->name);
			bad = 1;
			continue;
		}
		if (a.rank != t->rank) {
			diag_error(paths[k], "%sinput %d ('%s') has rank %d but the model expects rank %d", sp, k, t->name,
			           a.rank, t->rank);
			bad = 1;
		}
		memcpy(shapes + k * MAX_RANK, a.shape, sizeof(int64_t) * MAX_RANK);
		ishape[k] = shapes + k * MAX_RANK;
		npy_free(&a);
	}
	if (bad)
		return -1;
	char msg[512] = "";
	if (d->infer_dims(ishape, dims, msg, sizeof msg)) {
		diag_error(lib, "%sthe inputs do not fit the library's run-time dims: %s", sp, msg);
		return -1;
	}
	for (int k = 0; k < d->ninputs + d->noutputs; k++) {
		int io = k >= d->ninputs, i = io ? k - d->ninputs : k;
		doccc_tensor_desc *t = &tabs[k];
		*t = io ? d->outputs[i] : d->inputs[i];
		int64_t *sh = shapes + k * MAX_RANK;
		if (io && d->output_shape(dims, i, sh)) {
			diag_error(lib, "%sdamaged doccc descriptor (output %d's shape)", sp, i);
			return -1;
		}
		t->shape = sh;
		t->numel = 1;
		for (int r = 0; r < t->rank; r++)
			t->numel *= sh[r];
		t->nbytes = (size_t)t->numel * dtypes[t->dtype].size;
	}
	dd->inputs = tabs;
	dd->outputs = tabs + d->ninputs;
	return 0;
}

/* "2 inputs (x, mask)" for the count messages. */
static void put_names(Buf *b, int n, const doccc_tensor_desc *t, const char *what)
{
	buf_printf(b, "%d %s%s", n, what, n == 1 ? "" : "s");
	if (n == 0)
		return;
	buf_puts(b, " (");
	for (int k = 0; k < n; k++)
		buf_printf(b, "%s%s", k ? ", " : "", t[k].name ? t[k].name : "?");
	buf_putc(b, ')');
}

/* A count of files against the library's: "LIB: error: the library
 * expects 2 outputs (a, b), got 1 (--expect)", after sp ("step 2: " or
 * ""). 0 when they agree, else -1. */
static int check_count(const char *lib, const char *sp, int want, const doccc_tensor_desc *t, const char *what,
                       int got, const char *flag)
{
	Buf b = {0};

	if (got == want)
		return 0;
	put_names(&b, want, t, what);
	diag_error(lib, "%sthe library expects %s, got %d (%s)", sp, b.s, got, flag);
	buf_free(&b);
	return -1;
}

/* 64-byte aligned, zeroed, never NULL for a size of 0. */
static void *alloc64(size_t n)
{
	size_t r = (n + 63) / 64 * 64;
	void *p = aligned_alloc(64, r ? r : 64);
	if (p)
		memset(p, 0, r ? r : 64);
	return p;
}

/* Whether a has the shape of t; if not, "[2, 64] but the model expects
 * [1, 64]" (whose is said by the caller's words) is appended to b. */
static int same_shape(const Npy *a, const doccc_tensor_desc *t, const char *words, Buf *b)
{
	if (a->rank == t->rank &&
	    (!t->rank || !memcmp(a->shape, t->shape, (size_t)t->rank * sizeof *a->shape)))
		return 1;
	cmp_put_shape(b, a->rank, a->shape);
	buf_puts(b, words);
	cmp_put_shape(b, t->rank, t->shape);
	return 0;
}

/* Reads input k and checks it against the descriptor; on success *buf is
 * a 64-byte aligned copy of its data. Reports (after sp, "step 2: " or "")
 * and returns -1 otherwise. */
static int load_input(const char *path, const char *sp, int k, const doccc_tensor_desc *t, void **buf)
{
	Npy a;
	int ok = 1;
	const char *want = dtypes[t->dtype].descr;

	if (npy_read(path, &a) != 0) {
		note_step_file(path, sp, "input", k, t->name);
		return -1;
	}
	if (strcmp(a.descr, want)) {
		diag_error(path, "%sinput %d ('%s') has dtype %s ('%s') but the model expects %s ('%s')",
		           sp, k, t->name, descr_name(a.descr), a.descr, dtypes[t->dtype].name, want);
		ok = 0;
	}
	Buf b = {0};
	if (!same_shape(&a, t, " but the model expects ", &b)) {
		diag_error(path, "%sinput %d ('%s') has shape %s", sp, k, t->name, b.s);
		ok = 0;
	}
	buf_free(&b);
	if (ok && a.nbytes != (size_t)t->numel * dtypes[t->dtype].size) {
		diag_error(path, "%sinput %d ('%s') holds %zu bytes, expected %zu",
		           sp, k, t->name, a.nbytes, (size_t)t->numel * dtypes[t->dtype].size);
		ok = 0;
	}
	if (ok) {
		*buf = alloc64(a.nbytes);
		if (!*buf) {
			diag_error(path, "out of memory");
			ok = 0;
		} else if (a.nbytes) {
			memcpy(*buf, a.data, a.nbytes);
		}
	}
	npy_free(&a);
	return ok ? 0 : -1;
}

/* The weights file to pass to create(): --weights, else NULL for a library
 * with embedded weights, else NAME.weights beside the library. Returns 0 and
 * sets *path (malloc'd or NULL), or -1 after a message. */
static int find_weights(const char *lib, const doccc_model_desc *d, const char *given, char **path)
{
	const char *slash;
	Buf b = {0};

	*path = NULL;
	if (given) {
		*path = strdup(given);
		return *path ? 0 : -1;
	}
	if (d->weights_embedded)
		return 0;
	slash = strrchr(lib, '/');
	if (slash)
		buf_putn(&b, lib, (size_t)(slash - lib) + 1);
	buf_printf(&b, "%s.weights", d->name ? d->name : "model");
	if (!file_exists(b.s)) {
		diag_error(lib, "the weights are not embedded in this library and %s does not "
		           "exist; pass --weights FILE", b.s);
		buf_free(&b);
		return -1;
	}
	*path = b.s;
	return 0;
}

static int cmp_double(const void *x, const void *y)
{
	double a = *(const double *)x, b = *(const double *)y;
	return (a > b) - (a < b);
}

static int device_resident(const doccc_model_desc *d)
{
	return d->abi_version >= 2 && d->device_resident;
}

/* The text of a status; for DOCCC_ERR_DEVICE and DOCCC_ERR_ASSERT the
 * library's own message (the GPU runtime's, which pointer was on the
 * wrong side, or which assertion failed) instead. */
static const char *status_text(const doccc_model_desc *d, const void *model, int status)
{
	const char *s = d->strerror ? d->strerror(status) : NULL;
	static char num[32];
	static char msg[1024];

	if (!s) {
		snprintf(num, sizeof num, "status %d", status);
		s = num;
	}
	if ((status == DOCCC_ERR_DEVICE || status == DOCCC_ERR_ASSERT || status == DOCCC_ERR_WEIGHTS || status == DOCCC_ERR_SHAPE ||
	     status == DOCCC_ERR_NOMEM || status == DOCCC_ERR_CPU) && d->abi_version >= 2 &&
	    d->last_error) {
		const char *m = d->last_error(model);
		if (m && *m) {
			snprintf(msg, sizeof msg, "%s", m);
			return msg;
		}
	}
	return s;
}

/* --device: device buffers for every input and output, the inputs copied
 * in. Returns 0, or the failing status (buffers made so far in dev[]). */
static int to_device(const doccc_model_desc *d, void **in, void **dev)
{
	for (int k = 0; k < d->ninputs + d->noutputs; k++) {
		const doccc_tensor_desc *t = k < d->ninputs ? &d->inputs[k] : &d->outputs[k - d->ninputs];
		size_t n = (size_t)t->numel * dtypes[t->dtype].size;
		int st = d->device_alloc(&dev[k], n);
		if (st)
			return st;
		if (k < d->ninputs && n && (st = d->device_copy(dev[k], in[k], n, DOCCC_COPY_TO_DEVICE)))
			return st;
	}
	return 0;
}

/* The median, minimum and 90th percentile of n times (sorted in place;
 * the percentile is the nearest rank's: the time that 90% of the runs
 * took at most). */
static Latency latency(double *ms, int n)
{
	qsort(ms, (size_t)n, sizeof *ms, cmp_double);
	int r90 = (9 * n + 9) / 10;   /* ceil(0.9 n), 1-based */
	return (Latency){n % 2 ? ms[n / 2] : (ms[n / 2 - 1] + ms[n / 2]) / 2, ms[0], ms[(r90 < 1 ? 1 : r90) - 1]};
}

/* A time of ms milliseconds in the unit that fits it, three significant
 * digits: "812 ns", "12.3 us" (µs), "1.25 ms", "2.50 s". */
static const char *fmt_time(double ms, char *s, size_t n)
{
	static const struct {
		double scale;
		const char *unit;
	} units[] = {{1e6, "ns"}, {1e3, "\u00b5s"}, {1, "ms"}, {1e-3, "s"}};
	int u = ms < 1e-3 ? 0 : ms < 1 ? 1 : ms < 1e3 ? 2 : 3;
	double v = ms * units[u].scale;
	snprintf(s, n, "%.*f %s", v < 9.995 ? 2 : v < 99.95 ? 1 : 0, v, units[u].unit);
	return s;
}

/* "median 12.3 µs, min 11.9 µs, p90 13.0 µs" */
static void print_latency(const char *prefix, const Latency *l)
{
	char a[32], b[32], c[32];
	printf("%slatency: median %s, min %s, p90 %s", prefix, fmt_time(l->median, a, sizeof a),
	       fmt_time(l->min, b, sizeof b), fmt_time(l->p90, c, sizeof c));
}

/* ---- the node hook: --profile, --trace, --dump-values -------------------------- */

/* A trace event: name, over [t0, t1) ms, args the JSON members of its
 * "args" (or ""). */
static void trace_event(Hook *h, const char *name, const char *cat, double t0, double t1, const char *args)
{
	if (!h->a->trace || h->nevents >= TRACE_MAX_EVENTS)
		return;
	buf_puts(&h->trace, h->nevents++ ? ",\n{\"name\": " : "{\"name\": ");
	buf_quote(&h->trace, name);
	buf_printf(&h->trace, ", \"cat\": \"%s\", \"ph\": \"X\", \"pid\": 1, \"tid\": 1, \"ts\": %.3f, \"dur\": %.3f, "
	           "\"args\": {%s}}", cat, 1e3 * (t0 - h->origin), 1e3 * (t1 - t0), args);
}

static int add_file(Hook *h, const char *path)
{
	if (h->nfiles == h->capfiles) {
		int cap = h->capfiles ? 2 * h->capfiles : 64;
		char **f = realloc(h->files, (size_t)cap * sizeof *f);
		if (!f)
			return -1;
		h->files = f, h->capfiles = cap;
	}
	return (h->files[h->nfiles++] = strdup(path)) ? 0 : -1;
}

/* Has this step's dump already a file of this name? (Two nodes may leave
 * a value of the same torch name: a state both update.) */
static int file_taken(const Hook *h, const char *path)
{
	for (int i = 0; i < h->nfiles; i++)
		if (!strcmp(h->files[i], path))
			return 1;
	return 0;
}

/* Writes the values of node i in torch's order (gathered through their
 * strides), and their entry of values.json. */
static void dump_values(Hook *h, int i, const void *const *values)
{
	const doccc_node_desc *nd = &h->d->nodes[i];
	buf_printf(&h->index, "%s\n  {\"node\": %d, \"name\": ", h->index.len ? "," : "", i);
	buf_quote(&h->index, nd->name ? nd->name : "?");
	buf_puts(&h->index, ", \"values\": [");
	for (int k = 0; k < nd->nvalues && !h->failed; k++) {
		const doccc_value_desc *v = &nd->values[k];
		if (v->dtype < 0 || v->dtype >= (int)COUNTOF(dtypes) || !dtypes[v->dtype].name || v->rank < 0 ||
		    v->rank > MAX_RANK) {
			diag_error(h->a->lib, "node %d: value %d has a dtype or rank this doccc does not know", i, k);
			h->failed = 1;
			break;
		}
		size_t es = dtypes[v->dtype].size;
		int64_t numel = 1, idx[MAX_RANK] = {0};
		for (int r = 0; r < v->rank; r++)
			numel *= v->shape[r];
		unsigned char *buf = malloc((size_t)numel * es + 1);
		Buf name = {0}, path = {0};
		if (!buf) {
			diag_error(h->a->lib, "out of memory for the values of node %d", i);
			h->failed = 1;
			break;
		}
		for (int64_t e = 0; e < numel; e++) {
			int64_t off = 0;
			for (int r = 0; r < v->rank; r++)
				off += idx[r] * v->strides[r];
			memcpy(buf + (size_t)e * es, (const unsigned char *)values[k] + off * (int64_t)es, es);
			for (int r = v->rank - 1; r >= 0 && ++idx[r] == v->shape[r]; r--)
				idx[r] = 0;
		}
		cmp_value_file(&name, v->name ? v->name : "");
		buf_printf(&path, "%s/%s", h->dir, name.s);
		for (int n = 2; file_taken(h, path.s); n++) { /* relu.npy, relu~2.npy */
			buf_free(&path);
			buf_printf(&path, "%s/%.*s~%d.npy", h->dir, (int)name.len - 4, name.s, n);
		}
		if (npy_write(path.s, dtypes[v->dtype].descr, v->rank, v->shape, buf) != 0 || add_file(h, path.s) != 0)
			h->failed = 1;
		buf_puts(&h->index, k ? ", {\"name\": " : "{\"name\": ");
		buf_quote(&h->index, v->name ? v->name : "");
		buf_puts(&h->index, ", \"file\": ");
		buf_quote(&h->index, path_base(path.s));
		buf_printf(&h->index, ", \"dtype\": \"%s\", \"shape\": ", dtypes[v->dtype].name);
		cmp_put_shape(&h->index, v->rank, v->shape);
		buf_putc(&h->index, '}');
		buf_free(&name);
		buf_free(&path);
		free(buf);
	}
	buf_puts(&h->index, "]}");
}

static void on_node(void *user, int node, int end, const void *const *values)
{
	Hook *h = user;
	double t = now_ms();
	if (!end) {
		h->t0 = t;
		return;
	}
	if (node < 0 || node >= h->d->nnodes)
		return;
	if (h->record) {
		h->sum[node] += t - h->t0;
		if (h->a->trace) {
			char args[160];
			const doccc_node_desc *nd = &h->d->nodes[node];
			int n = snprintf(args, sizeof args, "\"node\": %d, \"run\": %d", node, h->run + 1);
			if (h->a->nsteps > 1)
				n += snprintf(args + n, sizeof args - (size_t)n, ", \"step\": %d", h->step + 1);
			if (nd->flops > 0 && t > h->t0)
				snprintf(args + n, sizeof args - (size_t)n, ", \"gflops\": %.2f", nd->flops / (t - h->t0) * 1e-6);
			trace_event(h, nd->name ? nd->name : "?", "node", h->t0, t, args);
		}
	}
	if (h->dump && values && !h->failed)
		dump_values(h, node, values);
}

/* The directory of step s's values: DIR, or DIR/stepN with several steps. */
static char *step_dir(const RunArgs *a, int s)
{
	Buf b = {0};
	buf_puts(&b, a->dumpdir);
	if (a->nsteps > 1)
		buf_printf(&b, "/step%d", s + 1);
	return b.s;
}

/* Ends step s's dump: its values.json. */
static int end_dump(Hook *h, int s)
{
	Buf b = {0}, path = {0};
	buf_puts(&b, "{\"doccc_values\": 1, \"library\": ");
	buf_quote(&b, h->a->lib);
	buf_printf(&b, ", \"step\": %d, \"nodes\": [%s\n]}\n", s + 1, h->index.s ? h->index.s : "");
	buf_printf(&path, "%s/values.json", h->dir);
	int rc = file_write(path.s, b.s, b.len);
	if (rc == 0 && add_file(h, path.s) != 0)
		rc = -1;
	buf_free(&b);
	buf_free(&path);
	buf_free(&h->index);
	return rc;
}

/* The library's hook, if a flag asks for it: a library built without
 * --profile or --values has none (and without --values, no values). */
static int hook_begin(Hook *h, const char *lib, const doccc_model_desc *d, void *model, const RunArgs *a)
{
	memset(h, 0, sizeof *h);
	h->d = d;
	h->a = a;
	if (!a->profile && !a->trace && !a->dumpdir)
		return 0;
	const char *flag = a->dumpdir ? "--dump-values" : a->trace ? "--trace" : "--profile";
	if (d->abi_version < 6 || d->nnodes <= 0 || !d->nodes || !d->set_hook) {
		diag_error(lib, "%s needs a library built with --profile%s: this one has no node hook (doccc MODEL.pt2 "
		           "%s ...)", flag, a->dumpdir ? " or --values" : "", a->dumpdir ? "--values" : "--profile");
		return -1;
	}
	int any = 0;
	for (int i = 0; i < d->nnodes; i++)
		any |= d->nodes[i].nvalues > 0;
	if (a->dumpdir && !any) {
		diag_error(lib, "--dump-values needs a library built with --values (doccc MODEL.pt2 --values ...): this one "
		           "was built with --profile, or its values have sizes known only at run time");
		return -1;
	}
	h->sum = calloc((size_t)d->nnodes, sizeof *h->sum);
	if (!h->sum) {
		diag_error(lib, "out of memory");
		return -1;
	}
	int st = d->set_hook(model, on_node, h);
	if (st) {
		diag_error(lib, "cannot set the node hook: status %d", st);
		return -1;
	}
	return 0;
}

/* Frees the hook; after a failed run, removes the files its dump wrote. */
static void hook_end(Hook *h, int failed)
{
	for (int i = 0; i < h->nfiles; i++) {
		if (failed)
			unlink(h->files[i]);
		free(h->files[i]);
	}
	free(h->files);
	free(h->sum);
	buf_free(&h->trace);
	buf_free(&h->index);
}

/* The nodes by time, longest first. */
static const Hook *sort_hook;
static int by_time(const void *x, const void *y)
{
	double a = sort_hook->sum[*(const int *)x], b = sort_hook->sum[*(const int *)y];
	return a < b ? 1 : a > b ? -1 : *(const int *)x - *(const int *)y;
}

static int *nodes_by_time(const Hook *h)
{
	int *order = malloc((size_t)h->d->nnodes * sizeof *order);
	if (!order)
		return NULL;
	for (int i = 0; i < h->d->nnodes; i++)
		order[i] = i;
	sort_hook = h;
	qsort(order, (size_t)h->d->nnodes, sizeof *order, by_time);
	return order;
}

/* --profile: each node's time per run of the library, its share of the
 * nodes' total and, for a contraction, GFLOP/s; as text (longest first) or
 * as the JSON member "profile". */
static int put_profile(Buf *b, const Hook *h, int json)
{
	const doccc_model_desc *d = h->d;
	int *order = nodes_by_time(h);
	double total = 0, runs = h->nruns > 0 ? (double)h->nruns : 1;
	if (!order)
		return -1;
	for (int i = 0; i < d->nnodes; i++)
		total += h->sum[i];
	if (json)
		buf_printf(b, ",\n  \"profile\": {\"runs\": %ld, \"ms_per_run\": ", h->nruns);
	if (json)
		cmp_put_num(b, total / runs, 6, 1);
	if (json)
		buf_puts(b, ", \"nodes\": [");
	else {
		char t[32];
		buf_printf(b, "profile: %d nodes, %s per run in them over %ld run%s\n%10s %6s %8s  %s\n", d->nnodes,
		           fmt_time(total / runs, t, sizeof t), h->nruns, h->nruns == 1 ? "" : "s", "time", "share", "GFLOP/s",
		           "node");
	}
	for (int k = 0; k < d->nnodes; k++) {
		int i = order[k];
		const doccc_node_desc *nd = &d->nodes[i];
		double ms = h->sum[i] / runs, share = total > 0 ? 100 * h->sum[i] / total : 0;
		double gf = nd->flops > 0 && ms > 0 ? nd->flops / ms * 1e-6 : -1;
		if (json) {
			buf_printf(b, "%s\n    {\"node\": %d, \"name\": ", k ? "," : "", i);
			buf_quote(b, nd->name ? nd->name : "?");
			buf_puts(b, ", \"ms\": ");
			cmp_put_num(b, ms, 6, 1);
			buf_printf(b, ", \"share\": %.2f, \"flops\": %.17g, \"gflops\": ", share, nd->flops > 0 ? nd->flops : 0);
			if (gf < 0)
				buf_puts(b, "null}");
			else
				buf_printf(b, "%.2f}", gf);
			continue;
		}
		char t[32], g[32] = "";
		Buf nm = {0}; /* the name comes from the model: shown, not sent to the terminal */
		if (gf >= 0)
			snprintf(g, sizeof g, "%.1f", gf);
		buf_escape(&nm, ESC_TERM, nd->name ? nd->name : "?", strlen(nd->name ? nd->name : "?"));
		buf_printf(b, "%10s %5.1f%% %8s  %s\n", fmt_time(ms, t, sizeof t), share, g, nm.s);
		buf_free(&nm);
	}
	if (json)
		buf_puts(b, "\n  ]}");
	free(order);
	return 0;
}

/* --trace: the Chrome trace-event file (chrome://tracing, Perfetto). */
static int write_trace(const Hook *h, const char *lib)
{
	Buf b = {0};
	buf_puts(&b, "{\"displayTimeUnit\": \"ms\", \"otherData\": {\"library\": ");
	buf_quote(&b, lib);
	buf_puts(&b, ", \"target\": ");
	buf_quote(&b, h->d->target ? h->d->target : "?");
	buf_printf(&b, ", \"events_dropped\": %s},\n\"traceEvents\": [\n%s\n]}\n",
	           h->nevents >= TRACE_MAX_EVENTS ? "true" : "false", h->trace.s ? h->trace.s : "");
	int rc = file_write(h->a->trace, b.s, b.len);
	buf_free(&b);
	return rc;
}

/* Runs the steps in order, the whole sequence warmup + max(repeat, 1)
 * times, on one instance of the model; with --repeat, *lat gets the latency
 * of the timed runs of the sequence and each step's lat its own. A library
 * with run-time dims gets a step's dims before the step when they differ
 * from the dims set last (the first step's are set after create), and
 * that call counts in the step's time: a caller that changes the dims
 * makes it too. A library with state (abi 5) is reset before every
 * repetition of the sequence but the first, untimed, so that each sees the
 * state the steps saw the first time. With --device every step's inputs are copied to the GPU
 * before the first run and its outputs back after the last. */
static int run_steps(const char *lib, const doccc_model_desc *d, void *model, const RunArgs *a,
                     Step *st, int nsteps, Latency *lat, Hook *h)
{
	int nrun = a->repeat > 0 ? a->repeat : 1;
	double *ms = malloc((size_t)nrun * sizeof *ms);
	int dyn = d->abi_version >= 4 && d->ndims > 0;
	const int64_t *set = st[0].dims;    /* the dims set last */
	void ***dev = calloc((size_t)nsteps, sizeof *dev);
	int status = 0, bad = -1;           /* the failing step */
	const char *what = "run failed";
	int ok = ms && dev;

	for (int s = 0; s < nsteps && ok; s++)
		ok = (st[s].ms = malloc((size_t)nrun * sizeof *st[s].ms)) != NULL;
	if (!ok) {
		diag_error(lib, "out of memory");
		free(ms);
		free(dev);
		return -1;
	}
	/* A device-resident library runs through its host entry (copies in
	 * and out, warns once) unless --device asked for device pointers. */
	int (*run)(void *, const void *const *, void *const *) = d->run;
	if (device_resident(d) && !a->device)
		run = d->run_host;
	for (int s = 0; a->device && s < nsteps && bad < 0; s++) {
		const doccc_model_desc *sd = st[s].d;
		dev[s] = calloc((size_t)(sd->ninputs + sd->noutputs) + 1, sizeof **dev);
		status = dev[s] ? to_device(sd, st[s].in, dev[s]) : DOCCC_ERR_NOMEM;
		if (status)
			bad = s;
	}
	int state = d->abi_version >= 5 && d->nstates > 0 && d->reset;
	for (int r = 0; r < a->warmup + nrun && bad < 0; r++) {
		if (state && r > 0 && (status = d->reset(model)) != 0) { /* every repetition from the exported state */
			what = "cannot reset the state";
			bad = 0;
			break;
		}
		double t0 = now_ms();
		if (h && r == a->warmup)
			h->origin = t0;
		for (int s = 0; s < nsteps && bad < 0; s++) {
			Step *p = &st[s];
			if (h) {
				h->record = r >= a->warmup;
				h->dump = r == 0 && a->dumpdir;
				h->run = r - a->warmup;
				h->step = s;
				h->dir = p->dumpdir;
			}
			double ts = now_ms();
			if (dyn && memcmp(set, p->dims, (size_t)d->ndims * sizeof *set)) {
				if ((status = d->set_dims(model, p->dims)) != 0) {
					what = "cannot run at these dims";
					bad = s;
					break;
				}
				set = p->dims;
			}
			status = dev[s] ? run(model, (const void *const *)dev[s], dev[s] + d->ninputs)
			                : run(model, (const void *const *)p->in, p->out);
			if (status)
				bad = s;
			if (r >= a->warmup)
				p->ms[r - a->warmup] = now_ms() - ts;
			if (h && h->record && !status) {
				char args[64];
				snprintf(args, sizeof args, "\"run\": %d", r - a->warmup + 1);
				if (nsteps > 1)
					trace_event(h, p->sp, "step", ts, ts + p->ms[r - a->warmup], args);
				h->nruns++;
			}
			if (h && h->dump && !status && (h->failed || end_dump(h, s) != 0)) {
				what = "cannot write the values";
				status = -1;
				bad = s;
			}
		}
		if (r >= a->warmup)
			ms[r - a->warmup] = now_ms() - t0;
		if (h && r >= a->warmup && bad < 0) {
			char args[64];
			snprintf(args, sizeof args, "\"run\": %d", r - a->warmup + 1);
			trace_event(h, "run", "run", t0, t0 + ms[r - a->warmup], args);
		}
	}
	for (int s = 0; s < nsteps; s++) {
		const doccc_model_desc *sd = st[s].d;
		for (int k = 0; dev[s] && bad < 0 && k < sd->noutputs; k++) {
			const doccc_tensor_desc *t = &sd->outputs[k];
			size_t n = (size_t)t->numel * dtypes[t->dtype].size;
			if (n && (status = d->device_copy(st[s].out[k], dev[s][sd->ninputs + k], n, DOCCC_COPY_TO_HOST)))
				bad = s;
		}
		for (int k = 0; dev[s] && k < sd->ninputs + sd->noutputs; k++)
			if (dev[s][k])
				d->device_free(dev[s][k]);
		free(dev[s]);
	}
	free(dev);
	if (bad >= 0 && status == -1) /* reported */
		diag_error(lib, "%s%s (see above)", st[bad].sp, what);
	else if (bad >= 0)
		diag_error(lib, "%s%s: %s", st[bad].sp, what, status_text(d, model, status));
	if (bad >= 0) {
		free(ms);
		return -1;
	}
	if (a->repeat > 0) {
		*lat = latency(ms, nrun);
		for (int s = 0; s < nsteps; s++)
			st[s].lat = latency(st[s].ms, nrun);
	}
	free(ms);
	return 0;
}

/* Writes every output of every step that has -o; on failure removes the
 * ones already written. */
static int write_outputs(const Step *st, int nsteps, const RunArgs *a)
{
	for (int s = 0; s < nsteps; s++) {
		const doccc_model_desc *d = st[s].d;
		for (int k = 0; k < st[s].args->nout; k++) {
			const doccc_tensor_desc *t = &d->outputs[k];
			const char *path = st[s].args->out[k];
			if (npy_write(path, dtypes[t->dtype].descr, t->rank, t->shape, st[s].out[k]) != 0) {
				note_step_file(path, st[s].sp, "output", k, t->name);
				for (int j = 0; j < (int)(st[s].args->out - a->out) + k; j++)
					unlink(a->out[j]);
				return -1;
			}
		}
	}
	for (int s = 0; s < nsteps && !a->quiet && !a->json; s++) {
		const doccc_model_desc *d = st[s].d;
		for (int k = 0; k < st[s].args->nout; k++) {
			const doccc_tensor_desc *t = &d->outputs[k];
			Buf b = {0}, nm = {0}; /* the name comes from the model: shown, not sent to the terminal */
			cmp_put_shape(&b, t->rank, t->shape);
			buf_escape(&nm, ESC_TERM, t->name ? t->name : "?", strlen(t->name ? t->name : "?"));
			printf("%sout%d '%s' %s %s -> %s\n", st[s].sp, k, nm.s, b.s, dtypes[t->dtype].name,
			       st[s].args->out[k]);
			buf_free(&b);
			buf_free(&nm);
		}
	}
	if (fflush(stdout) != 0) {
		diag_error("doccc run", "cannot write to standard output");
		return -1;
	}
	return 0;
}

/* ---- --expect: the outputs against references ---- */

enum { FAM_FLOAT, FAM_INT, FAM_BOOL }; /* cmp_family's kinds */
static const char *const family_names[] = {"a floating-point", "an integer", "a bool"};

static int load_reference(const char *path, const char *sp, int k, const doccc_tensor_desc *t, Npy *r)
{
	const char *have = dtypes[t->dtype].descr;
	Buf b = {0};
	int ok = 1;

	if (npy_read(path, r) != 0) {
		note_step_file(path, sp, "the reference of output", k, t->name);
		return -1;
	}
	if (cmp_family(r->descr) != cmp_family(have)) {
		diag_error(path, "%sthe reference of output %d ('%s') has dtype %s ('%s'), %s type, but the "
		           "output is %s, %s type", sp, k, t->name, descr_name(r->descr), r->descr,
		           family_names[cmp_family(r->descr)], dtypes[t->dtype].name,
		           family_names[cmp_family(have)]);
		ok = 0;
	}
	if (!same_shape(r, t, " but the output has shape ", &b)) {
		diag_error(path, "%sthe reference of output %d ('%s') has shape %s", sp, k, t->name, b.s);
		ok = 0;
	}
	buf_free(&b);
	if (!ok)
		npy_free(r);
	return ok ? 0 : -1;
}

/* The JSON entries of a step's outputs, each "\n    {...}" after a comma
 * but the first, as in the report of one step. */
static void put_outputs_json(Buf *b, const Step *p)
{
	const doccc_model_desc *d = p->d;

	for (int k = 0; k < d->noutputs; k++) {
		const doccc_tensor_desc *t = &d->outputs[k];

		buf_puts(b, k ? ",\n    {\"name\": " : "\n    {\"name\": ");
		buf_quote(b, t->name ? t->name : "?");
		buf_puts(b, ", \"reference\": ");
		buf_quote(b, p->args->expect[k]);
		buf_puts(b, ", \"shape\": ");
		cmp_put_shape(b, t->rank, t->shape);
		buf_printf(b, ", \"dtype\": \"%s\"", dtypes[t->dtype].name);
		cmp_put(b, t, &p->cmp[k], dtypes[t->dtype].descr, p->out[k], &p->ref[k], 1);
		buf_printf(b, ", \"pass\": %s}", p->cmp[k].nbad ? "false" : "true");
	}
}

static void put_latency_json(Buf *b, const Latency *lat)
{
	buf_puts(b, "{\"median\": ");
	cmp_put_num(b, lat->median, 6, 1);
	buf_puts(b, ", \"min\": ");
	cmp_put_num(b, lat->min, 6, 1);
	buf_puts(b, ", \"p90\": ");
	cmp_put_num(b, lat->p90, 6, 1);
}

/* The --expect report as one JSON object (with --repeat alone, its
 * "outputs" empty and "pass" null). One step: "outputs", the
 * report as it was before steps; several: "steps", each with its number,
 * its latency (--repeat), its "outputs" and "pass" (empty and null for a
 * step without --expect), the outputs indented one level deeper. */
static void report_json(Buf *b, const Step *st, int nsteps, const RunArgs *a, int nfail, const Latency *lat,
                        const Hook *h)
{
	buf_puts(b, "{\n  \"library\": ");
	buf_quote(b, a->lib);
	buf_puts(b, ",\n  \"rtol\": ");
	cmp_put_num(b, a->rtol, 15, 1);
	buf_puts(b, ",\n  \"atol\": ");
	cmp_put_num(b, a->atol, 15, 1);
	if (a->repeat > 0) {
		buf_puts(b, ",\n  \"latency_ms\": ");
		put_latency_json(b, lat);
		buf_printf(b, ", \"runs\": %d}", a->repeat);
	}
	if (a->profile)
		put_profile(b, h, 1);
	if (nsteps == 1 && !a->nexpect) {
		buf_puts(b, ",\n  \"outputs\": [],\n  \"pass\": null\n}\n");
		return;
	}
	if (nsteps == 1) {
		buf_puts(b, ",\n  \"outputs\": [");
		put_outputs_json(b, &st[0]);
		buf_printf(b, "\n  ],\n  \"pass\": %s\n}\n", nfail ? "false" : "true");
		return;
	}
	buf_puts(b, ",\n  \"steps\": [");
	for (int s = 0; s < nsteps; s++) {
		const Step *p = &st[s];
		int fail = 0;

		buf_printf(b, "%s\n    {\"step\": %d", s ? "," : "", s + 1);
		if (a->repeat > 0) {
			buf_puts(b, ", \"latency_ms\": ");
			put_latency_json(b, &p->lat);
			buf_putc(b, '}');
		}
		if (!p->args->nexpect) {
			buf_puts(b, ", \"outputs\": [], \"pass\": null}");
			continue;
		}
		Buf o = {0};
		put_outputs_json(&o, p);
		buf_puts(b, ", \"outputs\": [");
		for (const char *c = o.s; *c; c++) {   /* one level deeper */
			buf_putc(b, *c);
			if (*c == '\n')
				buf_puts(b, "  ");
		}
		buf_free(&o);
		for (int k = 0; k < p->d->noutputs; k++)
			fail |= p->cmp[k].nbad > 0;
		buf_printf(b, "\n    ], \"pass\": %s}", fail ? "false" : "true");
	}
	buf_printf(b, "\n  ],\n  \"pass\": %s\n}\n", !a->nexpect ? "null" : nfail ? "false" : "true");
}

/* The --expect report as text: a line per output (with several steps,
 * each after its "step N: "), then the verdict, which with several steps
 * names the first output that failed. */
static void report_text(Buf *b, const Step *st, int nsteps, const RunArgs *a, int nfail)
{
	int nchecked = 0, nout = 0;
	const Step *first = NULL;   /* the step of the first failure */
	int kfirst = 0;

	for (int s = 0; s < nsteps; s++) {
		const Step *p = &st[s];
		const doccc_model_desc *d = p->d;

		if (!p->args->nexpect)
			continue;
		nchecked++;
		nout += d->noutputs;
		for (int k = 0; k < d->noutputs; k++) {
			const doccc_tensor_desc *t = &d->outputs[k];
			const char *name = t->name ? t->name : "?";

			buf_printf(b, "%sout%d '", p->sp, k);
			buf_escape(b, ESC_TERM, name, strlen(name));
			buf_puts(b, "' ");
			cmp_put_shape(b, t->rank, t->shape);
			buf_printf(b, " %s", dtypes[t->dtype].name);
			cmp_put(b, t, &p->cmp[k], dtypes[t->dtype].descr, p->out[k], &p->ref[k], 0);
			buf_puts(b, p->cmp[k].nbad ? ": FAIL\n" : ": PASS\n");
			if (p->cmp[k].nbad && !first)
				first = p, kfirst = k;
		}
	}
	buf_printf(b, "%s: %d of %d output%s outside rtol %g, atol %g", nfail ? "FAIL" : "PASS", nfail,
	           nout, nout == 1 ? "" : "s", a->rtol, a->atol);
	if (nsteps > 1 && nchecked < nsteps)
		buf_printf(b, " in %d of %d steps", nchecked, nsteps);
	else if (nsteps > 1)
		buf_printf(b, " in %d steps", nsteps);
	if (nsteps > 1 && first) {
		const char *name = first->d->outputs[kfirst].name ? first->d->outputs[kfirst].name : "?";
		buf_printf(b, "; first: step %d, out%d '", (int)(first - st) + 1, kfirst);
		buf_escape(b, ESC_TERM, name, strlen(name));
		buf_putc(b, '\'');
	}
	buf_putc(b, '\n');
}

/* Compares every output of every step that has --expect with its
 * reference and prints the report (text or JSON) on stdout; each failing
 * output is also an error on stderr naming its reference. Returns the
 * number of outputs that failed, -1 if the report could not be written. */
static int check_outputs(Step *st, int nsteps, const RunArgs *a, const Latency *lat, const Hook *h)
{
	Buf b = {0};
	int nfail = 0;

	for (int s = 0; s < nsteps; s++) {
		Step *p = &st[s];
		const doccc_model_desc *d = p->d;

		if (!p->args->nexpect)
			continue;
		p->cmp = calloc((size_t)d->noutputs + 1, sizeof *p->cmp);
		if (!p->cmp) {
			diag_error(a->lib, "out of memory");
			return -1;
		}
		for (int k = 0; k < d->noutputs; k++) {
			cmp_arrays(dtypes[d->outputs[k].dtype].descr, p->out[k], p->ref[k].descr, p->ref[k].data,
			        d->outputs[k].numel, a->rtol, a->atol, &p->cmp[k]);
			nfail += p->cmp[k].nbad > 0;
		}
	}
	if (a->json)
		report_json(&b, st, nsteps, a, nfail, lat, h);
	else
		report_text(&b, st, nsteps, a, nfail);
	fputs(b.s, stdout);
	buf_free(&b);
	if (fflush(stdout) != 0) {
		diag_error("doccc run", "cannot write to standard output");
		return -1;
	}
	for (int s = 0; s < nsteps; s++) {
		const Step *p = &st[s];
		const doccc_model_desc *d = p->d;

		for (int k = 0; p->args->nexpect && k < d->noutputs; k++)
			if (p->cmp[k].nbad)
				diag_error(p->args->expect[k], "%soutput %d ('%s') of %s differs from this reference: %lld of "
				           "%lld elements outside rtol %g, atol %g", p->sp, k,
				           d->outputs[k].name ? d->outputs[k].name : "?", a->lib, (long long)p->cmp[k].nbad,
				           (long long)d->outputs[k].numel, a->rtol, a->atol);
	}
	return nfail;
}

/* --json without --expect: the report of the latencies and the profile,
 * "outputs" empty and "pass" null. */
static int report_latency(Step *st, int nsteps, const RunArgs *a, const Latency *lat, const Hook *h)
{
	Buf b = {0};
	report_json(&b, st, nsteps, a, 0, lat, h);
	fputs(b.s, stdout);
	buf_free(&b);
	if (fflush(stdout) != 0) {
		diag_error("doccc run", "cannot write to standard output");
		return -1;
	}
	return 0;
}

/* Checks the steps' files against the library and reads them: with
 * several steps, a step without -i when the library has inputs is a usage
 * error (EXIT_USAGE: inputs do not carry over from step to step); then
 * every step's counts, then every step's dims, inputs and references
 * (EXIT_INPUT; each kind of problem reported for every step before
 * stopping). Allocates each step's buffers, the outputs' included.
 * Returns EXIT_OK or the exit code, reported. */
static int load_steps(const char *lib, const doccc_model_desc *d, Step *st, int nsteps, int timed)
{
	int dyn = d->abi_version >= 4 && d->ndims > 0;
	int bad = 0;

	for (int s = 0; s < nsteps; s++) {
		if (nsteps > 1 && d->ninputs && !st[s].args->nin) {
			Buf b = {0};
			put_names(&b, d->ninputs, d->inputs, "input");
			diag_error("doccc run", "%sno -i, but the library takes %s: each step gives its own inputs",
			           st[s].sp, b.s);
			buf_free(&b);
			bad = 1;
		}
	}
	if (bad) {
		fputs(usage_text, stderr);
		return EXIT_USAGE;
	}
	/* Counts; with --expect, -o is optional. */
	for (int s = 0; s < nsteps; s++) {
		const StepArgs *sa = st[s].args;
		const char *sp = st[s].sp;
		bad |= check_count(lib, sp, d->ninputs, d->inputs, "input", sa->nin, "-i");
		if (sa->nout || (!sa->nexpect && !timed))
			bad |= check_count(lib, sp, d->noutputs, d->outputs, "output", sa->nout, "-o");
		if (sa->nexpect)
			bad |= check_count(lib, sp, d->noutputs, d->outputs, "output", sa->nexpect, "--expect");
	}
	if (bad)
		return EXIT_INPUT;
	if (dyn && d->ninputs + d->noutputs > MAX_IO) {
		diag_error(lib, "doccc run takes at most %d inputs and outputs of a library with run-time dims", MAX_IO);
		return EXIT_INPUT;
	}
	for (int s = 0; s < nsteps; s++) {
		Step *p = &st[s];
		const StepArgs *sa = p->args;
		size_t nio = (size_t)(d->ninputs + d->noutputs) + 1;

		if (dyn) {
			p->tabs = calloc(nio, sizeof *p->tabs);
			p->shapes = calloc(nio * MAX_RANK, sizeof *p->shapes);
			if (!p->tabs || !p->shapes) {
				diag_error(lib, "out of memory");
				return EXIT_INPUT;
			}
			if (bind_dims(lib, p->sp, d, sa->in, &p->desc, p->tabs, p->shapes, p->dims) != 0) {
				bad = 1;
				continue;
			}
			p->d = &p->desc;
		}
		p->in = calloc((size_t)d->ninputs + 1, sizeof *p->in);
		p->out = calloc((size_t)d->noutputs + 1, sizeof *p->out);
		p->ref = calloc((size_t)d->noutputs + 1, sizeof *p->ref);
		if (!p->in || !p->out || !p->ref) {
			diag_error(lib, "out of memory");
			return EXIT_INPUT;
		}
		p->nin = d->ninputs;
		p->nout = d->noutputs;
		for (int k = 0; k < d->ninputs; k++)
			if (load_input(sa->in[k], p->sp, k, &p->d->inputs[k], &p->in[k]) != 0)
				bad = 1;
		for (int k = 0; k < sa->nexpect; k++)
			if (load_reference(sa->expect[k], p->sp, k, &p->d->outputs[k], &p->ref[k]) != 0)
				bad = 1;
	}
	if (bad)
		return EXIT_INPUT;
	for (int s = 0; s < nsteps; s++) {
		for (int k = 0; k < d->noutputs; k++) {
			const doccc_tensor_desc *t = &st[s].d->outputs[k];
			st[s].out[k] = alloc64((size_t)t->numel * dtypes[t->dtype].size);
			if (!st[s].out[k]) {
				diag_error(lib, "%sout of memory for output %d ('%s')", st[s].sp, k, t->name);
				return EXIT_INPUT;
			}
		}
	}
	return EXIT_OK;
}

/* ---- another architecture's library ------------------------------------------ */
#if defined(__aarch64__)
#define HOST_MACHINE EM_AARCH64
#else
#define HOST_MACHINE EM_X86_64
#endif

/* The ELF machine of the library at path, or -1 (not an ELF file, or not
 * readable: dlopen says why). */
static int elf_machine(const char *path)
{
	unsigned char h[20];
	FILE *f = fopen(path, "rb");
	size_t n = f ? fread(h, 1, sizeof h, f) : 0;
	if (f)
		fclose(f);
	if (n < sizeof h || memcmp(h, ELFMAG, SELFMAG) || h[EI_DATA] != ELFDATA2LSB)
		return -1;
	return h[18] | h[19] << 8;
}

/* The runner for triple: beside doccc (a build tree), or in PREFIX/libexec. */
static char *find_runner(Arena *ar, const char *triple)
{
	char self[4096];
	ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
	if (n <= 0)
		return NULL;
	self[n] = 0;
	char *slash = strrchr(self, '/');
	*slash = 0;
	const char *tries[] = {"%s/%s/doccc-run", "%s/../libexec/doccc/%s/doccc-run"};
	for (size_t i = 0; i < COUNTOF(tries); i++) {
		char *p = arena_printf(ar, tries[i], self, triple);
		if (access(p, R_OK) == 0)
			return p;
	}
	return NULL;
}

/* Runs the command in the aarch64 runner under qemu-user when lib is an
 * aarch64 library and this machine is not: does not return on success;
 * returns the exit code of a failure (reported), or -1 to go on here. */
static int run_foreign(const char *lib, int argc, char **argv)
{
	int m = elf_machine(lib);
	if (m < 0 || m == HOST_MACHINE)
		return -1;
	if (m != EM_AARCH64 && m != EM_X86_64) {
		diag_error(lib, "a library for ELF machine %d: doccc run runs x86-64 and aarch64 libraries", m);
		return EXIT_INPUT;
	}
	const char *triple = m == EM_AARCH64 ? "aarch64-linux-gnu" : "x86_64-linux-gnu";
	const char *qdflt = m == EM_AARCH64 ? "qemu-aarch64" : "qemu-x86_64";
	Arena *ar = arena_new();
	char *runner = find_runner(ar, triple);
	const char *qv = getenv("DOCC_QEMU");
	int nq = 0;
	char **q = spawn_words(ar, qv && *qv ? qv : qdflt, &nq);
	char *qpath = nq ? spawn_which(ar, q[0]) : NULL;
	if (!runner || !qpath) {
		diag_error(lib, "is an %s library; doccc runs it here under qemu-user with its %s runner, and %s", triple, triple,
		           !qpath ? arena_printf(ar, "'%s' is not found (DOCC_QEMU, else %s: Debian's qemu-user)", nq ? q[0] : "", qdflt)
		                  : arena_printf(ar, "that runner is missing (make builds it as build/%s/doccc-run where the cross "
		                                     "toolchain is installed: sh test/setup.sh --cross)", triple));
		arena_free(ar);
		return EXIT_INPUT;
	}
	/* QEMU [LOADER --library-path DIR] RUNNER run ARGS...: the cross
	 * sysroot the library was linked against (its libc and libomp), where
	 * it is, through its loader (qemu's -L instead hangs its
	 * pthread_create); else the loader a multiarch install put in /lib */
	char **v = arena_alloc(ar, (size_t)(nq + argc + 5) * sizeof *v);
	int k = 0;
	for (int i = 0; i < nq; i++)
		v[k++] = q[i];
	const char *ld = arena_printf(ar, "/usr/%s/%s", triple, m == EM_AARCH64 ? "lib/ld-linux-aarch64.so.1" : "lib64/ld-linux-x86-64.so.2");
	if (access(ld, R_OK) == 0) {
		v[k++] = (char *)ld;
		v[k++] = "--library-path";
		v[k++] = arena_printf(ar, "/usr/%s/lib", triple);
	}
	v[k++] = runner;
	for (int i = 0; i < argc; i++)
		v[k++] = argv[i];
	v[k] = NULL;
	fflush(NULL);
	execv(qpath, v);
	diag_error(lib, "cannot run %s: %s", qpath, strerror(errno));
	arena_free(ar);
	return EXIT_INPUT;
}

int cmd_run(int argc, char **argv)
{
	RunArgs a;
	int rc = parse_args(argc, argv, &a);
	Buf libpath = {0};
	void *dl = NULL, *model = NULL;
	const doccc_model_desc *d = NULL;
	Step *st = NULL;
	int nsteps = 0;             /* entries of st to free */
	Latency lat = {0, 0, 0};
	Hook hook;
	int hooked = 0, dump_failed = 0, made_top = 0;
	char *weights = NULL;
	int status;

	if (rc != EXIT_OK) {
		rc = rc < 0 ? EXIT_OK : rc;
		goto done;
	}
	if ((rc = run_foreign(a.lib, argc, argv)) >= 0)
		goto done;
	rc = EXIT_INPUT;

	/* A bare name would make dlopen search the library path, not the
	 * current directory. */
	if (!strchr(a.lib, '/'))
		buf_puts(&libpath, "./");
	buf_puts(&libpath, a.lib);
	dl = dlopen(libpath.s, RTLD_NOW | RTLD_LOCAL);
	if (!dl) {
		diag_error(a.lib, "cannot load library: %s", dlerror());
		goto done;
	}
	d = dlsym(dl, "doccc_model");
	if (!d) {
		diag_error(a.lib, "not a doccc library (no 'doccc_model' symbol)");
		goto done;
	}
	if (check_desc(a.lib, d) != 0)
		goto done;
	if (a.device && !device_resident(d)) {
		diag_error(a.lib, "--device is for device-resident (cuda, rocm) libraries; this one runs on the host (target %s)",
		           d->target ? d->target : "?");
		rc = EXIT_USAGE;
		goto done;
	}

	/* The command line against the descriptor, step by step, before the
	 * model is created. */
	st = calloc((size_t)a.nsteps, sizeof *st);
	if (!st) {
		diag_error(a.lib, "out of memory");
		goto done;
	}
	nsteps = a.nsteps;
	for (int s = 0; s < nsteps; s++) {
		st[s].args = &a.steps[s];
		st[s].d = d;
		if (nsteps > 1)
			snprintf(st[s].sp, sizeof st[s].sp, "step %d: ", s + 1);
	}
	if ((status = load_steps(a.lib, d, st, nsteps, a.repeat > 0 || a.profile || a.trace || a.dumpdir)) != EXIT_OK) {
		rc = status;
		goto done;
	}

	if (find_weights(a.lib, d, a.weights, &weights) != 0)
		goto done;
	status = d->create(&model, weights);
	if (status) {
		model = NULL;
		if (status == DOCCC_ERR_WEIGHTS && weights) {
			/* the library's message names the file first: no second time */
			const char *msg = status_text(d, NULL, status);
			size_t n = strlen(weights);
			if (!strncmp(msg, weights, n) && !strncmp(msg + n, ": ", 2))
				msg += n + 2;
			diag_error(weights, "cannot load the weights of %s: %s", a.lib, msg);
		} else
			diag_error(a.lib, "create failed: %s", status_text(d, NULL, status));
		goto done;
	}
	/* The first step's dims; run_steps sets the others' as it goes. */
	if (d->abi_version >= 4 && d->ndims > 0 && (status = d->set_dims(model, st[0].dims)) != 0) {
		diag_error(a.lib, "%scannot run at these dims: %s", st[0].sp, status_text(d, model, status));
		goto done;
	}
	if (a.threads) {
		if (!d->set_num_threads) {
			diag_error(a.lib, "this library cannot set its number of threads");
			goto done;
		}
		status = d->set_num_threads(model, a.threads);
		if (status) {
			diag_error(a.lib, "cannot use %d threads: %s", a.threads, status_text(d, model, status));
			goto done;
		}
	}
	hooked = 1;
	if (hook_begin(&hook, a.lib, d, model, &a) != 0)
		goto done;
	made_top = a.dumpdir && !dir_exists(a.dumpdir);
	for (int s = 0; a.dumpdir && s < nsteps; s++) {
		if (!(st[s].dumpdir = step_dir(&a, s)))
			goto done;
		st[s].made_dir = !dir_exists(st[s].dumpdir);
		if (mkdir_p(st[s].dumpdir) != 0)
			goto done;
	}
	if (run_steps(a.lib, d, model, &a, st, nsteps, &lat, hook.sum ? &hook : NULL) != 0) {
		dump_failed = 1;
		goto done;
	}
	if (a.trace && write_trace(&hook, a.lib) != 0)
		goto done;
	if (a.repeat > 0 && !a.json) {
		print_latency("", &lat);
		printf(" over %d runs", a.repeat);
		printf(nsteps > 1 ? " of the %d steps\n" : "\n", nsteps);
		for (int s = 0; nsteps > 1 && s < nsteps; s++) {
			print_latency(st[s].sp, &st[s].lat);
			putchar('\n');
		}
	}
	if (a.profile && !a.json) {
		Buf b = {0};
		if (put_profile(&b, &hook, 0) != 0) {
			diag_error(a.lib, "out of memory");
			goto done;
		}
		fputs(b.s, stdout);
		buf_free(&b);
	}
	/* The outputs are written whether or not they match: they are what
	 * was compared, and a failing CI job wants to keep them. */
	if (a.nout && write_outputs(st, nsteps, &a) != 0)
		goto done;
	if (a.nexpect && check_outputs(st, nsteps, &a, &lat, &hook) != 0)
		goto done;
	if (!a.nexpect && a.json && report_latency(st, nsteps, &a, &lat, &hook) != 0)
		goto done;
	rc = EXIT_OK;

done:
	if (model)
		d->destroy(model);
	if (hooked)
		hook_end(&hook, dump_failed);
	for (int s = 0; dump_failed && s < nsteps; s++) /* the folders a failed dump made, emptied: gone too */
		if (st[s].made_dir)
			rmdir(st[s].dumpdir);
	if (dump_failed && made_top && nsteps > 1)
		rmdir(a.dumpdir);
	for (int s = 0; s < nsteps; s++) {
		Step *p = &st[s];
		for (int k = 0; k < p->nin; k++)
			free(p->in[k]);
		for (int k = 0; k < p->nout; k++) {
			free(p->out[k]);
			npy_free(&p->ref[k]);
		}
		free(p->in);
		free(p->out);
		free(p->ref);
		free(p->cmp);
		free(p->ms);
		free(p->tabs);
		free(p->shapes);
		free(p->dumpdir);
	}
	free(st);
	free(weights);
	if (dl)
		dlclose(dl);
	buf_free(&libpath);
	free(a.in);
	free(a.out);
	free(a.expect);
	free(a.steps);
	return rc;
}

#ifdef DOCCC_RUNNER
/* doccc's runner for another architecture (doccc-run run ARGS...): this
 * command alone, which the x86-64 doccc runs under qemu-user. */
int main(int argc, char **argv)
{
	if (argc > 1 && !strcmp(argv[1], "run"))
		return cmd_run(argc - 1, argv + 1);
	fputs(usage_text, stderr);
	return EXIT_USAGE;
}
#endif
