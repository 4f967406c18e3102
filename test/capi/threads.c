/*
 * threads.c - N threads, each with its own instance of one doccc library,
 * running at once (test/test_faults.py, built with -fsanitize=thread).
 *
 *   threads LIB.so WEIGHTS|- NTHREADS RUNS
 *
 * The inputs are made here from their descriptors (a fixed pattern per
 * dtype). A single-threaded create/run/destroy first gives the reference
 * outputs; then NTHREADS threads each create an instance, run it RUNS
 * times and compare every output with the reference byte for byte. Exit 0
 * if all of them match; ThreadSanitizer reports races itself (and makes
 * the exit status non-zero).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../backends/doccc_model.h"

static const doccc_model_desc *d;
static const char *weights;
static int runs;
static void **ins, **ref;

static void fill(const doccc_tensor_desc *t, void *p)
{
	for (int64_t i = 0; i < t->numel; i++) {
		double v = (double)((i * 7919) % 201 - 100) / 64.0;
		switch (t->dtype) {
		case DOCCC_F32: ((float *)p)[i] = (float)v; break;
		case DOCCC_F64: ((double *)p)[i] = v; break;
		case DOCCC_I64: ((int64_t *)p)[i] = i % 3; break;
		case DOCCC_I32: ((int32_t *)p)[i] = (int32_t)(i % 3); break;
		default: ((unsigned char *)p)[i * (int64_t)(t->nbytes / (size_t)(t->numel ? t->numel : 1))] = (unsigned char)(i % 2);
		}
	}
}

static void *alloc(size_t n)
{
	void *p = aligned_alloc(64, (n + 63) / 64 * 64 + 64);
	if (!p) {
		fprintf(stderr, "threads: out of memory\n");
		exit(2);
	}
	memset(p, 0, n);
	return p;
}

/* Create, run `runs` times into fresh outputs; compare with ref unless NULL
 * (then keep them as ref). Returns the number of mismatches, -1 on error. */
static int one(void **keep)
{
	void *m = NULL;
	int rc = d->create(&m, weights);
	if (rc) {
		fprintf(stderr, "threads: create: %s\n", d->strerror(rc));
		return -1;
	}
	void **outs = calloc((size_t)d->noutputs + 1, sizeof *outs);
	for (int k = 0; k < d->noutputs; k++)
		outs[k] = alloc(d->outputs[k].nbytes);
	int bad = 0;
	for (int r = 0; r < runs && bad >= 0; r++) {
		if ((rc = d->run(m, (const void *const *)ins, outs))) {
			fprintf(stderr, "threads: run: %s\n", d->strerror(rc));
			bad = -1;
		}
		for (int k = 0; k < d->noutputs && !keep && bad >= 0; k++)
			if (memcmp(outs[k], ref[k], d->outputs[k].nbytes))
				bad++;
	}
	d->destroy(m);
	for (int k = 0; k < d->noutputs; k++) {
		if (keep)
			keep[k] = outs[k];
		else
			free(outs[k]);
	}
	free(outs);
	return bad;
}

static void *worker(void *arg)
{
	int *res = arg;
	*res = one(NULL);
	return NULL;
}

int main(int argc, char **argv)
{
	if (argc != 5) {
		fprintf(stderr, "usage: threads LIB.so WEIGHTS|- NTHREADS RUNS\n");
		return 2;
	}
	void *dl = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
	d = dl ? (const doccc_model_desc *)dlsym(dl, "doccc_model") : NULL;
	if (!d) {
		fprintf(stderr, "threads: %s: %s\n", argv[1], dlerror());
		return 2;
	}
	weights = strcmp(argv[2], "-") ? argv[2] : NULL;
	int n = atoi(argv[3]);
	runs = atoi(argv[4]);
	ins = calloc((size_t)d->ninputs + 1, sizeof *ins);
	ref = calloc((size_t)d->noutputs + 1, sizeof *ref);
	for (int k = 0; k < d->ninputs; k++) {
		ins[k] = alloc(d->inputs[k].nbytes);
		fill(&d->inputs[k], ins[k]);
	}
	if (one(ref) != 0)
		return 1;
	pthread_t th[64];
	int res[64];
	if (n < 1 || n > 64)
		return 2;
	for (int i = 0; i < n; i++)
		if (pthread_create(&th[i], NULL, worker, &res[i]) != 0) {
			fprintf(stderr, "threads: cannot start thread %d\n", i);
			return 2;
		}
	int bad = 0;
	for (int i = 0; i < n; i++) {
		pthread_join(th[i], NULL);
		if (res[i]) {
			fprintf(stderr, "threads: thread %d: %s\n", i, res[i] < 0 ? "failed" : "outputs differ from the single-threaded run");
			bad++;
		}
	}
	printf("threads: %d threads x %d runs, %d differ\n", n, runs, bad);
	for (int k = 0; k < d->ninputs; k++)
		free(ins[k]);
	for (int k = 0; k < d->noutputs; k++)
		free(ref[k]);
	free(ins);
	free(ref);
	dlclose(dl);
	return bad ? 1 : 0;
}
