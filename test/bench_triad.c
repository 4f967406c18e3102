/*
 * bench_triad: this machine's memory bandwidth, STREAM style, for test/bench_llm.py.
 *
 *   clang -O3 -march=native -fopenmp test/bench_triad.c -o bench_triad
 *   bench_triad [--mib N] [--trials N] THREADS...
 *
 * prints two lines per thread count:
 *
 *   triad 2 threads: median 21.30 GB/s, best 22.10 GB/s (3 arrays of 160 MiB, 10 trials)
 *   read 2 threads: median 25.02 GB/s, best 25.90 GB/s (1 array of 160 MiB, 10 trials)
 *
 * triad is STREAM's a[i] = b[i] + s * c[i] on doubles, counted as STREAM
 * counts it, 24 bytes per element (two reads and a write; the write-allocate
 * read of a[] is not counted). read is a sum over one array, 8 bytes per
 * element: a decode step of an LLM mostly reads weights, so it is the other
 * bound worth knowing. Each array is --mib MiB (default 160, several times a
 * 32 MiB last-level cache); the arrays are first touched by the threads
 * that use them. GB is 1e9 bytes. The checksum is printed so the work stays.
 * Without OpenMP only 1 thread can be asked for.
 */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#ifdef _OPENMP
#include <omp.h>
#endif

typedef double v4 __attribute__((vector_size(32), aligned(32)));

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static int cmp(const void *x, const void *y)
{
	double a = *(const double *)x, b = *(const double *)y;

	return (a > b) - (a < b);
}

static void report(const char *what, int threads, double *rate, int trials, const char *arrays, long mib)
{
	qsort(rate, trials, sizeof *rate, cmp);
	printf("%s %d threads: median %.2f GB/s, best %.2f GB/s (%s of %ld MiB, %d trials)\n", what, threads,
	       trials % 2 ? rate[trials / 2] : (rate[trials / 2 - 1] + rate[trials / 2]) / 2, rate[trials - 1],
	       arrays, mib, trials);
}

int main(int argc, char **argv)
{
	long mib = 160, n;
	int trials = 10, i, nthreads = 0, threads[16], maxt = 1;
	double *a, *b, *c, *rate, check = 0;

	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--mib") && i + 1 < argc)
			mib = atol(argv[++i]);
		else if (!strcmp(argv[i], "--trials") && i + 1 < argc)
			trials = atoi(argv[++i]);
		else if (argv[i][0] != '-' && nthreads < 16 && atoi(argv[i]) > 0)
			threads[nthreads++] = atoi(argv[i]);
		else {
			fprintf(stderr, "usage: bench_triad [--mib N] [--trials N] THREADS...\n");
			return 2;
		}
	}
	if (mib < 1 || trials < 1) {
		fprintf(stderr, "bench_triad: --mib and --trials must be at least 1\n");
		return 2;
	}
	if (!nthreads)
		threads[nthreads++] = 1;
	for (i = 0; i < nthreads; i++) {
#ifndef _OPENMP
		if (threads[i] != 1) {
			fprintf(stderr, "bench_triad: built without OpenMP, only 1 thread\n");
			return 2;
		}
#endif
		if (threads[i] > maxt)
			maxt = threads[i];
	}
	n = mib * (1L << 20) / sizeof(double);
	a = aligned_alloc(64, n * sizeof(double));
	b = aligned_alloc(64, n * sizeof(double));
	c = aligned_alloc(64, n * sizeof(double));
	rate = malloc(trials * sizeof *rate);
	if (!a || !b || !c || !rate) {
		fprintf(stderr, "bench_triad: out of memory for 3 arrays of %ld MiB\n", mib);
		return 1;
	}
#ifdef _OPENMP
	omp_set_num_threads(maxt);
#endif
#pragma omp parallel for schedule(static)
	for (long j = 0; j < n; j++) {
		a[j] = 1.0;
		b[j] = 2.0;
		c[j] = 0.5;
	}
	for (i = 0; i < nthreads; i++) {
		int t = threads[i];

#ifdef _OPENMP
		omp_set_num_threads(t);
#endif
		for (int k = -1; k < trials; k++) {	/* one untimed warm-up */
			double t0 = now();
#pragma omp parallel for schedule(static)
			for (long j = 0; j < n; j++)
				a[j] = b[j] + 3.0 * c[j];
			double dt = now() - t0;
			if (k >= 0)
				rate[k] = 24.0 * n / dt * 1e-9;
		}
		check += a[n / 3];
		report("triad", t, rate, trials, "3 arrays", mib);
		for (int k = -1; k < trials; k++) {
			double s = 0, t0 = now();
			/* four vector accumulators: no chain of dependent adds limits the rate */
#pragma omp parallel for schedule(static) reduction(+ : s)
			for (long j = 0; j < n; j += 16) {
				const v4 *p = (const v4 *)(b + j);
				v4 x = p[0] + p[1] + (p[2] + p[3]);
				s += x[0] + x[1] + x[2] + x[3];
			}
			double dt = now() - t0;
			if (k >= 0)
				rate[k] = 8.0 * n / dt * 1e-9;
			check += s;
		}
		report("read", t, rate, trials, "1 array", mib);
	}
	fprintf(stderr, "bench_triad: checksum %g\n", check);
	free(a);
	free(b);
	free(c);
	free(rate);
	return 0;
}
