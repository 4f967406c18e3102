/*
 * bench_peak: the fp32 FMA peak of this CPU, in GFLOP/s, for test/bench_peers.py.
 *
 *   clang -O3 -march=native [-fopenmp] test/bench_peak.c -o bench_peak
 *   bench_peak [--iters N] [--trials N] [--int8] THREADS...
 *
 * prints one line per thread count:
 *
 *   peak 2 threads: 270.1 GFLOP/s (avx512, 16 chains, median of 5 trials)
 *
 * --int8: the integer peak of doccc's integer kernels instead, in GOP/s (a
 * multiply and an add per int8 product): with VNNI (AVX512-VNNI on 512-bit
 * vectors, AVX-VNNI on 256) chains of acc = vpdpbusd(acc, acc, b), four
 * byte products summed into each int32 lane, the instruction of the
 * kernels' T_DOT4 (expand.int8_dot=quads, the default where --march has
 * VNNI); else chains of acc += pmaddwd(acc, b), int16 pairs multiplied and
 * summed, the kernels' T_DOT2:
 *
 *   int8 peak 2 threads: 310.2 GOP/s (pmaddwd avx2, 12 chains, median of 5 trials)
 *
 * Each thread runs CHAINS independent chains of acc = acc * b + c on the
 * widest vectors the compiler was told the CPU has (__AVX512F__: 16 floats,
 * __AVX2__ with __FMA__: 8, else 4-float vector extensions that the compiler
 * may or may not fuse). There are more chains than FMA units times the FMA
 * latency, so the units never wait for a result: the rate is the throughput.
 * An FMA is two flops. The multiplier and addend keep every chain near 1
 * (no overflow, no denormals) and the sum of the chains is printed, so the
 * work cannot be dropped. Without OpenMP only 1 thread can be asked for.
 */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#if defined(__AVX512F__)
#include <immintrin.h>
#define ISA	"avx512"
#define LANES	16
#define CHAINS	24		/* of 32 zmm registers */
typedef __m512 vec;
#define VSET(x)		_mm512_set1_ps(x)
#define VFMA(a, b, c)	_mm512_fmadd_ps(a, b, c)
#define VSUM(v)		_mm512_reduce_add_ps(v)
#elif defined(__AVX2__) && defined(__FMA__)
#include <immintrin.h>
#define ISA	"avx2"
#define LANES	8
#define CHAINS	12		/* of 16 ymm registers */
typedef __m256 vec;
#define VSET(x)		_mm256_set1_ps(x)
#define VFMA(a, b, c)	_mm256_fmadd_ps(a, b, c)
static float vsum(vec v)
{
	float f[8];

	_mm256_storeu_ps(f, v);
	return f[0] + f[1] + f[2] + f[3] + f[4] + f[5] + f[6] + f[7];
}
#define VSUM(v)		vsum(v)
#else
#define ISA	"generic"
#define LANES	4
#define CHAINS	12
typedef float vec __attribute__((vector_size(16)));
#define VSET(x)		((vec){ x, x, x, x })
#define VFMA(a, b, c)	((a) * (b) + (c))
#define VSUM(v)		((v)[0] + (v)[1] + (v)[2] + (v)[3])
#endif

/* The integer chains: ISTEP(acc, b) multiplies IPRODS pairs of integers
 * and adds them to acc: four bytes per int32 lane (vpdpbusd), or two int16
 * halves (pmaddwd, then an add). */
typedef int ivec __attribute__((vector_size(LANES * 4)));
typedef short svec __attribute__((vector_size(LANES * 4)));
#if defined(__AVX512VNNI__) && LANES == 16
#define ISTEP(acc, b)	((acc) = __builtin_ia32_vpdpbusd512((acc), (acc), (b)))
#define IISA		"vpdpbusd avx512-vnni"
#define IPRODS		(4 * LANES)
#elif (defined(__AVXVNNI__) || (defined(__AVX512VNNI__) && defined(__AVX512VL__))) && LANES == 8
#define ISTEP(acc, b)	((acc) = __builtin_ia32_vpdpbusd256((acc), (acc), (b)))
#define IISA		"vpdpbusd avx-vnni"
#define IPRODS		(4 * LANES)
#elif defined(__AVX512BW__) && LANES == 16
#define ISTEP(acc, b)	((acc) += (ivec)__builtin_ia32_pmaddwd512((svec)(acc), (svec)(b)))
#define IISA		"pmaddwd avx512"
#elif defined(__AVX2__) && LANES == 8
#define ISTEP(acc, b)	((acc) += (ivec)__builtin_ia32_pmaddwd256((svec)(acc), (svec)(b)))
#define IISA		"pmaddwd avx2"
#else
#define ISTEP(acc, b)	((acc) += (((acc) << 16) >> 16) * (((b) << 16) >> 16) + ((acc) >> 16) * ((b) >> 16))
#define IISA		"generic"
#endif
#ifndef IPRODS
#define IPRODS		(2 * LANES)
#endif

static float int_chains(long iters, float seed)
{
	ivec acc[CHAINS], b;
	int s = (int)seed;
	float sum = 0;

	for (int l = 0; l < LANES; l++)
		b[l] = 0x00030001 + l;
	for (int j = 0; j < CHAINS; j++)
		for (int l = 0; l < LANES; l++)
			acc[j][l] = s + j + l;
	for (long i = 0; i < iters; i++)
		for (int j = 0; j < CHAINS; j++)
			ISTEP(acc[j], b);
	for (int j = 0; j < CHAINS; j++)
		for (int l = 0; l < LANES; l++)
			sum += (float)(acc[j][l] & 1);
	return sum;
}

static int int8_mode;

/* iters rounds of CHAINS FMAs; returns the sum of the chains. */
static float fma_chains(long iters, float seed)
{
	vec acc[CHAINS], b = VSET(0.999999f), c = VSET(1e-6f);
	float sum = 0;

	for (int j = 0; j < CHAINS; j++)
		acc[j] = VSET(seed + (float)j * 1e-3f);
	for (long i = 0; i < iters; i++)
		for (int j = 0; j < CHAINS; j++)
			acc[j] = VFMA(acc[j], b, c);
	for (int j = 0; j < CHAINS; j++)
		sum += VSUM(acc[j]);
	return sum;
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/*
 * GFLOP/s of one trial on `threads` threads; *sink keeps the results alive.
 * The seeds differ from trial to trial, or the compiler could compute the
 * chains once for all of them.
 */
static double trial(int threads, long iters, float seed, float *sink)
{
	double t0 = now();
	float total = 0;

#ifdef _OPENMP
#pragma omp parallel num_threads(threads) reduction(+:total)
	total += int8_mode ? int_chains(iters, seed + (float)omp_get_thread_num())
	                   : fma_chains(iters, seed + (float)omp_get_thread_num());
#else
	total = int8_mode ? int_chains(iters, seed) : fma_chains(iters, seed);
#endif
	double s = now() - t0;
	*sink += total;
	/* two operations per FMA lane, or per integer product */
	return 2.0 * (int8_mode ? IPRODS : LANES) * CHAINS * (double)iters * threads / s * 1e-9;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static void usage(void)
{
	fprintf(stderr, "usage: bench_peak [--iters N] [--trials N] [--int8] THREADS...\n");
	exit(2);
}

int main(int argc, char **argv)
{
	long iters = 1L << 23;
	int trials = 5, nthreads = 0, threads[64];
	float sink = 0;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--iters") && i + 1 < argc)
			iters = atol(argv[++i]);
		else if (!strcmp(argv[i], "--trials") && i + 1 < argc)
			trials = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--int8"))
			int8_mode = 1;
		else if (atoi(argv[i]) > 0 && nthreads < 64)
			threads[nthreads++] = atoi(argv[i]);
		else
			usage();
	}
	if (iters <= 0 || trials <= 0 || trials > 99)
		usage();
	if (!nthreads)
		threads[nthreads++] = 1;
	for (int t = 0; t < nthreads; t++) {
		double rate[99];

#ifndef _OPENMP
		if (threads[t] != 1) {
			fprintf(stderr, "bench_peak: built without OpenMP: 1 thread only\n");
			return 1;
		}
#endif
		trial(threads[t], iters / 8, 0.5f, &sink);	/* wake the cores and threads */
		for (int i = 0; i < trials; i++)
			rate[i] = trial(threads[t], iters, 1.0f + (float)i, &sink);
		qsort(rate, (size_t)trials, sizeof rate[0], cmp_double);
		if (int8_mode)
			printf("int8 peak %d thread%s: %.1f GOP/s (%s, %d chains, median of %d trials)\n", threads[t],
			       threads[t] == 1 ? "" : "s", rate[trials / 2], IISA, CHAINS, trials);
		else
			printf("peak %d thread%s: %.1f GFLOP/s (%s, %d chains, median of %d trials)\n", threads[t],
			       threads[t] == 1 ? "" : "s", rate[trials / 2], ISA, CHAINS, trials);
	}
	/* Never true in practice; the compiler cannot know that. */
	if (sink == 12345.0f)
		printf("sink\n");
	return fflush(stdout) ? 1 : 0;
}
