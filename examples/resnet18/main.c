/*
 * main.c - ResNet-18 compiled by doccc, called from a plain C program.
 *
 * The Makefile compiles build/resnet18.pt2 into build/libresnet18.so and
 * build/resnet18.h; this program includes the header, loads the input that
 * export.py wrote (raw float32, build/x.bin), runs the model, and prints
 *   - the top-5 class indices with their scores, next to PyTorch's,
 *   - the largest difference from PyTorch's logits (build/y_ref.bin),
 *   - the latency (median and minimum over RUNS runs after one warm-up run).
 * It exits 1 when the largest difference exceeds 1e-3 of max |y_ref|.
 *
 *     usage: main [DIR]     (DIR holds x.bin and y_ref.bin; default "build")
 *
 * Everything about the model's shapes comes from the header's macros, so the
 * same program works for any batch size the model was exported with.
 */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "resnet18.h"

enum { RUNS = 10, TOPK = 5 };

static const int64_t out_shape[] = RESNET18_OUTPUT0_SHAPE;

/* Reads exactly n floats from path into a new buffer; exits on failure. */
static float *read_floats(const char *dir, const char *name, size_t n)
{
	char path[4096];
	snprintf(path, sizeof path, "%s/%s", dir, name);
	float *buf = malloc(n * sizeof *buf);
	FILE *f = fopen(path, "rb");
	if (!buf || !f) {
		fprintf(stderr, "main: cannot read %s (run `make` to export it)\n", path);
		exit(1);
	}
	size_t got = fread(buf, sizeof *buf, n, f);
	fclose(f);
	if (got != n) {
		fprintf(stderr, "main: %s: expected %zu floats, got %zu\n", path, n, got);
		exit(1);
	}
	return buf;
}

static double now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* The k largest of v[0..n), best first. */
static void top_k(const float *v, int n, int *idx, int k)
{
	for (int j = 0; j < k; j++)
		idx[j] = -1;
	for (int i = 0; i < n; i++) {
		int j = k;
		while (j > 0 && (idx[j - 1] < 0 || v[i] > v[idx[j - 1]]))
			j--;
		if (j == k)
			continue;
		memmove(idx + j + 1, idx + j, (size_t)(k - j - 1) * sizeof *idx);
		idx[j] = i;
	}
}

int main(int argc, char **argv)
{
	const char *dir = argc > 1 ? argv[1] : "build";
	float *x = read_floats(dir, "x.bin", RESNET18_INPUT0_NUMEL);
	float *y_ref = read_floats(dir, "y_ref.bin", RESNET18_OUTPUT0_NUMEL);
	float *y = calloc(RESNET18_OUTPUT0_NUMEL, sizeof *y);
	if (!y)
		return 1;

	resnet18_t *model;
	int st = resnet18_create(&model);
	if (st != 0) {
		fprintf(stderr, "main: resnet18_create: %s\n", resnet18_strerror(st));
		return 1;
	}
	printf("resnet18: %s, %s; input %s, output %s; workspace %.1f MiB\n",
	       resnet18_desc.target, resnet18_desc.category, RESNET18_INPUT0_NAME,
	       RESNET18_OUTPUT0_NAME, resnet18_workspace_size() / 1048576.0);

	/* One warm-up run (first touch of the workspace), then RUNS timed ones. */
	double ms[RUNS];
	for (int r = -1; r < RUNS; r++) {
		double t0 = now_ms();
		st = resnet18_run(model, x, y);
		if (st != 0) {
			fprintf(stderr, "main: resnet18_run: %s\n", resnet18_strerror(st));
			return 1;
		}
		if (r >= 0)
			ms[r] = now_ms() - t0;
	}
	resnet18_destroy(model);

	/* Top-5 of the first image, next to PyTorch's. */
	int classes = (int)out_shape[RESNET18_OUTPUT0_RANK - 1];
	int top[TOPK], ref_top[TOPK];
	top_k(y, classes, top, TOPK);
	top_k(y_ref, classes, ref_top, TOPK);
	printf("top-5 class    score   |  PyTorch class    score\n");
	for (int j = 0; j < TOPK; j++)
		printf("      %5d %9.4f   |          %5d %9.4f\n", top[j], y[top[j]], ref_top[j],
		       y_ref[ref_top[j]]);

	double max_diff = 0, max_ref = 0;
	for (int i = 0; i < RESNET18_OUTPUT0_NUMEL; i++) {
		max_diff = fmax(max_diff, fabs((double)y[i] - y_ref[i]));
		max_ref = fmax(max_ref, fabs((double)y_ref[i]));
	}
	double rel = max_ref > 0 ? max_diff / max_ref : max_diff;
	printf("max |y - y_ref| = %.3g (%.3g of max |y_ref| = %.3g)\n", max_diff, rel, max_ref);

	qsort(ms, RUNS, sizeof ms[0], cmp_double);
	printf("latency: median %.2f ms, min %.2f ms over %d runs\n", ms[RUNS / 2], ms[0], RUNS);

	free(x);
	free(y);
	free(y_ref);
	if (!(rel <= 1e-3)) {
		fprintf(stderr, "main: FAILED: output differs from PyTorch by more than 1e-3 relative\n");
		return 1;
	}
	printf("ok: matches PyTorch\n");
	return 0;
}
