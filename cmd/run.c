/*
 * run.c - `doccc run`: load any doccc library, feed it .npy files, write .npy
 * files, optionally time it.
 *
 *   doccc run LIB.so -i IN.npy... -o OUT.npy... [--repeat N] [--warmup N]
 *                    [--threads N] [--weights FILE] [-q]
 *
 * The library is opened with dlopen and found through the fixed symbol
 * `doccc_model` (backends/doccc_model.h), so this command needs no header and
 * no knowledge of the model's name: the descriptor gives the inputs' and
 * outputs' names, dtypes and shapes, and the create/run/destroy entry points.
 * Everything the user supplies is checked against the descriptor before the
 * model is created: the number of -i and -o files against the library's
 * inputs and outputs, then each input's dtype and shape (exit 1, every
 * mismatch reported before stopping; a wrong count is a fault of what was
 * given for this library, not of the command's syntax, so it is not a usage
 * error). Inputs are copied into 64-byte aligned buffers, as are the
 * outputs, so the generated code sees the same alignment as from C callers
 * that use aligned_alloc. With --repeat N the model runs --warmup times
 * (default 1) and then N timed times; the median and minimum latency go to
 * stdout. Outputs are written only after every run succeeded, and if writing
 * one of them fails the ones already written are removed, so a failure
 * leaves no partial set of outputs behind. The model is destroyed and the
 * library closed on every path.
 */
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
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
	"  -i IN.npy        an input, once per model input, in graph order\n"
	"  -o OUT.npy       an output, once per model output, in graph order\n"
	"  --repeat N       time N runs and print median and minimum latency\n"
	"  --warmup N       untimed runs before the timed ones (default 1 with --repeat)\n"
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
enum { MAX_RANK = (int)COUNTOF(((Npy *)0)->shape) };

/* The user's command line, parsed. */
typedef struct {
	const char *lib;
	const char **in;
	int nin;
	const char **out;
	int nout;
	int repeat;        /* 0: run once, untimed */
	int warmup;        /* -1: default (1 with --repeat, else 0) */
	int threads;       /* 0: leave the library's default */
	const char *weights;
	int quiet;
	int device;        /* --device: run on device pointers */
} RunArgs;

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

/* Parses argv (argv[0] == "run") into a. Long options also take the
 * --name=value form. Returns EXIT_OK, EXIT_USAGE after a message, or -1 for
 * --help (printed). The -i/-o arrays are malloc'd; the caller frees them. */
static int parse_args(int argc, char **argv, RunArgs *a)
{
	memset(a, 0, sizeof *a);
	a->warmup = -1;
	a->in = malloc((size_t)argc * sizeof *a->in);
	a->out = malloc((size_t)argc * sizeof *a->out);
	if (!a->in || !a->out) {
		diag_error("doccc run", "out of memory");
		return EXIT_INPUT;
	}
	for (int i = 1; i < argc; i++) {
		const char *arg = argv[i];
		const char *val = NULL;
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
		if (strcmp(flag, "-i") && strcmp(flag, "-o") && strcmp(flag, "--repeat") &&
		    strcmp(flag, "--warmup") && strcmp(flag, "--threads") &&
		    strcmp(flag, "--weights"))
			return usage_error("unknown option '%s'", arg);
		if (arg[n] == '=')
			val = arg + n + 1;
		else if (i + 1 < argc)
			val = argv[++i];
		else
			return usage_error("option '%s' needs a value", flag);

		if (!strcmp(flag, "-i")) {
			a->in[a->nin++] = val;
		} else if (!strcmp(flag, "-o")) {
			a->out[a->nout++] = val;
		} else if (!strcmp(flag, "--weights")) {
			a->weights = val;
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
	if (a->warmup < 0)
		a->warmup = a->repeat > 0 ? 1 : 0;
	return EXIT_OK;
}

static void put_shape(Buf *b, int rank, const int64_t *shape)
{
	buf_putc(b, '[');
	for (int d = 0; d < rank; d++)
		buf_printf(b, "%s%lld", d ? ", " : "", (long long)shape[d]);
	buf_putc(b, ']');
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
		if (t->dtype < 0 || t->dtype >= (int)COUNTOF(dtypes) || t->rank < 0 ||
		    t->rank > MAX_RANK || (t->rank && !t->shape) || t->numel < 0) {
			diag_error(lib, "damaged doccc descriptor (%s %d)",
			           k < d->ninputs ? "input" : "output",
			           k < d->ninputs ? k : k - d->ninputs);
			return -1;
		}
	}
	return 0;
}

/* "2 inputs (x, mask)" for the count message. */
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

/* 64-byte aligned, zeroed, never NULL for a size of 0. */
static void *alloc64(size_t n)
{
	size_t r = (n + 63) / 64 * 64;
	void *p = aligned_alloc(64, r ? r : 64);
	if (p)
		memset(p, 0, r ? r : 64);
	return p;
}

/* Reads input k and checks it against the descriptor; on success *buf is
 * a 64-byte aligned copy of its data. Reports and returns -1 otherwise. */
static int load_input(const char *path, int k, const doccc_tensor_desc *t, void **buf)
{
	Npy a;
	int ok = 1;
	const char *want = dtypes[t->dtype].descr;

	if (npy_read(path, &a) != 0)
		return -1;
	if (strcmp(a.descr, want)) {
		diag_error(path, "input %d ('%s') has dtype %s ('%s') but the model expects %s ('%s')",
		           k, t->name, descr_name(a.descr), a.descr, dtypes[t->dtype].name, want);
		ok = 0;
	}
	if (a.rank != t->rank ||
	    (t->rank && memcmp(a.shape, t->shape, (size_t)t->rank * sizeof *a.shape))) {
		Buf b = {0};
		put_shape(&b, a.rank, a.shape);
		buf_puts(&b, " but the model expects ");
		put_shape(&b, t->rank, t->shape);
		diag_error(path, "input %d ('%s') has shape %s", k, t->name, b.s);
		buf_free(&b);
		ok = 0;
	}
	if (ok && a.nbytes != (size_t)t->numel * dtypes[t->dtype].size) {
		diag_error(path, "input %d ('%s') holds %zu bytes, expected %zu",
		           k, t->name, a.nbytes, (size_t)t->numel * dtypes[t->dtype].size);
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
	if ((status == DOCCC_ERR_DEVICE || status == DOCCC_ERR_ASSERT || status == DOCCC_ERR_WEIGHTS) && d->abi_version >= 2 &&
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

/* Runs the model warmup + max(repeat, 1) times; prints latency when timed. */
static int run_model(const char *lib, const doccc_model_desc *d, void *model,
                     const RunArgs *a, void **in, void **out)
{
	int nrun = a->repeat > 0 ? a->repeat : 1;
	double *ms = malloc((size_t)nrun * sizeof *ms);
	int status = 0;

	if (!ms) {
		diag_error(lib, "out of memory");
		return -1;
	}
	/* A device-resident library runs through its host entry (copies in
	 * and out, warns once) unless --device asked for device pointers. */
	int (*run)(void *, const void *const *, void *const *) = d->run;
	void **dev = NULL;
	if (device_resident(d) && !a->device)
		run = d->run_host;
	if (a->device) {
		dev = calloc((size_t)(d->ninputs + d->noutputs) + 1, sizeof *dev);
		status = dev ? to_device(d, in, dev) : DOCCC_ERR_NOMEM;
	}
	for (int r = 0; r < a->warmup + nrun && !status; r++) {
		double t0 = now_ms();
		status = dev ? run(model, (const void *const *)dev, dev + d->ninputs) : run(model, (const void *const *)in, out);
		if (r >= a->warmup)
			ms[r - a->warmup] = now_ms() - t0;
	}
	for (int k = 0; dev && !status && k < d->noutputs; k++) {
		const doccc_tensor_desc *t = &d->outputs[k];
		size_t n = (size_t)t->numel * dtypes[t->dtype].size;
		if (n)
			status = d->device_copy(out[k], dev[d->ninputs + k], n, DOCCC_COPY_TO_HOST);
	}
	for (int k = 0; dev && k < d->ninputs + d->noutputs; k++)
		if (dev[k])
			d->device_free(dev[k]);
	free(dev);
	if (status) {
		diag_error(lib, "run failed: %s", status_text(d, model, status));
		free(ms);
		return -1;
	}
	if (a->repeat > 0) {
		double med;
		qsort(ms, (size_t)nrun, sizeof *ms, cmp_double);
		med = nrun % 2 ? ms[nrun / 2] : (ms[nrun / 2 - 1] + ms[nrun / 2]) / 2;
		printf("latency: median %.3f ms, min %.3f ms over %d runs\n", med, ms[0], nrun);
	}
	free(ms);
	return 0;
}

/* Writes every output; on failure removes the ones already written. */
static int write_outputs(const doccc_model_desc *d, const RunArgs *a, void **out)
{
	for (int k = 0; k < d->noutputs; k++) {
		const doccc_tensor_desc *t = &d->outputs[k];
		if (npy_write(a->out[k], dtypes[t->dtype].descr, t->rank, t->shape, out[k]) != 0) {
			for (int j = 0; j < k; j++)
				unlink(a->out[j]);
			return -1;
		}
	}
	if (!a->quiet) {
		for (int k = 0; k < d->noutputs; k++) {
			const doccc_tensor_desc *t = &d->outputs[k];
			Buf b = {0}, nm = {0}; /* the name comes from the model: shown, not sent to the terminal */
			put_shape(&b, t->rank, t->shape);
			buf_escape(&nm, ESC_TERM, t->name ? t->name : "?", strlen(t->name ? t->name : "?"));
			printf("out%d '%s' %s %s -> %s\n", k, nm.s, b.s, dtypes[t->dtype].name, a->out[k]);
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

int cmd_run(int argc, char **argv)
{
	RunArgs a;
	int rc = parse_args(argc, argv, &a);
	Buf libpath = {0};
	void *dl = NULL, *model = NULL;
	const doccc_model_desc *d = NULL;
	void **in = NULL, **out = NULL;
	int nin = 0, nout = 0;      /* entries of in and out to free */
	char *weights = NULL;
	int status;

	if (rc != EXIT_OK) {
		rc = rc < 0 ? EXIT_OK : rc;
		goto done;
	}
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

	/* The command line against the descriptor: counts first, then
	 * every input file (all mismatches reported); exit 1. */
	if (a.nin != d->ninputs || a.nout != d->noutputs) {
		Buf b = {0};
		if (a.nin != d->ninputs) {
			put_names(&b, d->ninputs, d->inputs, "input");
			diag_error(a.lib, "the library expects %s, got %d (-i)", b.s, a.nin);
			b.len = 0;
		}
		if (a.nout != d->noutputs) {
			put_names(&b, d->noutputs, d->outputs, "output");
			diag_error(a.lib, "the library expects %s, got %d (-o)", b.s, a.nout);
		}
		buf_free(&b);
		goto done;
	}
	in = calloc((size_t)d->ninputs + 1, sizeof *in);
	out = calloc((size_t)d->noutputs + 1, sizeof *out);
	if (!in || !out) {
		diag_error(a.lib, "out of memory");
		goto done;
	}
	nin = d->ninputs;
	nout = d->noutputs;
	status = 0;
	for (int k = 0; k < d->ninputs; k++)
		if (load_input(a.in[k], k, &d->inputs[k], &in[k]) != 0)
			status = -1;
	if (status)
		goto done;
	for (int k = 0; k < d->noutputs; k++) {
		const doccc_tensor_desc *t = &d->outputs[k];
		out[k] = alloc64((size_t)t->numel * dtypes[t->dtype].size);
		if (!out[k]) {
			diag_error(a.lib, "out of memory for output %d ('%s')", k, t->name);
			goto done;
		}
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
	if (run_model(a.lib, d, model, &a, in, out) != 0)
		goto done;
	if (write_outputs(d, &a, out) != 0)
		goto done;
	rc = EXIT_OK;

done:
	if (model)
		d->destroy(model);
	for (int k = 0; k < nin; k++)
		free(in[k]);
	for (int k = 0; k < nout; k++)
		free(out[k]);
	free(in);
	free(out);
	free(weights);
	if (dl)
		dlclose(dl);
	buf_free(&libpath);
	free(a.in);
	free(a.out);
	return rc;
}
