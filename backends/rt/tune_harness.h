/*
 * tune_harness.h - doccc tune's timing harness: a program of its own, which
 * doccc tune writes as harness.c and compiles with the target's compiler,
 * then runs on the machine that times (here, or through the runner: ssh to
 * the device the libraries are for).
 *
 *     harness THREADS MS LIB...
 *
 * Each LIB is a doccc library with its weights embedded and no run-time
 * dims (a step of a model, cut out with one candidate schedule). The
 * harness loads them all (the generic descriptor, doccc_model), gives each
 * its inputs (float32 in a fixed pattern, everything else zeros: the
 * steps timed are contractions, whose time does not depend on the
 * values), and times them in ROUNDS rounds, one library after another in
 * each: a warm-up run, then runs until MS milliseconds have passed (at
 * least MIN_RUNS), their median. A library's time is its smallest median
 * of the rounds: the rounds interleave the candidates, so that a slow
 * moment of a shared machine does not favour one of them. One line per
 * library on stdout, in order: "ok NANOSECONDS RUNS", or "error load: TEXT"
 * (it did not load: not for this machine) or "error run: TEXT" (a run
 * failed: a step that needs other values than zeros).
 * Exit 0 when every line was printed, 2 for a bad command line.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "doccc_model.h"

enum { ROUNDS = 3, MIN_RUNS = 3, MAX_RUNS = 100000 };

typedef struct {
	const doccc_model_desc *d;
	void *model;
	void **in, **out;
	const char *err;
	int loaded;               /* load() succeeded: a later error is a run's */
	double best;
	long runs;
} Lib;

static double now_ns(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return 1e9 * (double)t.tv_sec + (double)t.tv_nsec;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

static void *buffer(const doccc_tensor_desc *t)
{
	size_t n = t->nbytes ? t->nbytes : 1;
	void *p = aligned_alloc(64, (n + 63) / 64 * 64);
	if (!p)
		return NULL;
	memset(p, 0, n);
	if (t->dtype == DOCCC_F32)
		for (int64_t i = 0; i < t->numel; i++)
			((float *)p)[i] = (float)(i % 17 - 8) * 0.0625f;
	return p;
}

static const char *load(Lib *l, const char *path, int threads)
{
	void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!h)
		return dlerror();
	l->d = (const doccc_model_desc *)dlsym(h, "doccc_model");
	if (!l->d)
		return "not a doccc library (no doccc_model)";
	if (l->d->abi_version < 4 || l->d->ndims || !l->d->weights_embedded)
		return "not a library the harness times (run-time dims, or weights in a file)";
	int rc = l->d->create(&l->model, NULL);
	if (rc) /* (DOCCC_ERR_CPU: last_error names the instructions missing) */
		return l->d->last_error && l->d->last_error(NULL) ? l->d->last_error(NULL) : l->d->strerror(rc);
	if (threads > 0 && l->d->set_num_threads && l->d->set_num_threads(l->model, threads))
		return "the thread count is not supported by this build";
	l->in = calloc((size_t)l->d->ninputs + 1, sizeof(void *));
	l->out = calloc((size_t)l->d->noutputs + 1, sizeof(void *));
	if (!l->in || !l->out)
		return "out of memory";
	for (int i = 0; i < l->d->ninputs; i++)
		if (!(l->in[i] = buffer(&l->d->inputs[i])))
			return "out of memory";
	for (int i = 0; i < l->d->noutputs; i++)
		if (!(l->out[i] = buffer(&l->d->outputs[i])))
			return "out of memory";
	return NULL;
}

/* One round of l: its median over runs within ms milliseconds. */
static const char *round_of(Lib *l, double ms, double *times)
{
	int rc = l->d->run(l->model, (const void *const *)l->in, l->out);
	if (rc)
		return l->d->strerror(rc);
	double t0 = now_ns();
	long n = 0;
	while (n < MAX_RUNS && (n < MIN_RUNS || now_ns() - t0 < ms * 1e6)) {
		double a = now_ns();
		l->d->run(l->model, (const void *const *)l->in, l->out);
		times[n++] = now_ns() - a;
	}
	qsort(times, (size_t)n, sizeof *times, cmp_double);
	double med = n % 2 ? times[n / 2] : 0.5 * (times[n / 2 - 1] + times[n / 2]);
	if (!l->runs || med < l->best)
		l->best = med;
	l->runs += n;
	return NULL;
}

int main(int argc, char **argv)
{
	if (argc < 4) {
		fprintf(stderr, "usage: harness THREADS MS LIB...\n");
		return 2;
	}
	int threads = atoi(argv[1]), n = argc - 3;
	double ms = atof(argv[2]);
	Lib *libs = calloc((size_t)n, sizeof *libs);
	double *times = malloc(sizeof(double) * MAX_RUNS);
	if (!libs || !times) {
		fprintf(stderr, "harness: out of memory\n");
		return 1;
	}
	for (int i = 0; i < n; i++) {
		libs[i].err = load(&libs[i], argv[3 + i], threads);
		libs[i].loaded = !libs[i].err;
	}
	for (int r = 0; r < ROUNDS; r++)
		for (int i = 0; i < n; i++)
			if (!libs[i].err)
				libs[i].err = round_of(&libs[i], ms, times);
	for (int i = 0; i < n; i++) {
		if (libs[i].err)
			printf("error %s: %s\n", libs[i].loaded ? "run" : "load", libs[i].err);
		else
			printf("ok %.0f %ld\n", libs[i].best, libs[i].runs);
	}
	return fflush(stdout) ? 1 : 0;
}
