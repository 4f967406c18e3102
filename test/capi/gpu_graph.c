/*
 * gpu_graph.c - launch-free replay (CUDA graphs) of a generated cuda
 * library, from C. test/test_gpu_graph.py builds it against a --simulate
 * build of an index_select model named gather (x float32 [6, 3], idx int64
 * [4] -> y float32 [4, 3]):
 *
 *     cc -std=c11 -I OUT gpu_graph.c -L OUT -lgather -lpthread
 *
 * and runs it with DOCCC_SIM_TRACE=1, once with graphs and once with
 * DOCCC_GPU_GRAPHS=0. Before each phase it prints "phase NAME" on stderr,
 * so the test can count the simulation's capture and graph lines per phase.
 * Every run's output is compared bit for bit with the first (eager) run's:
 *
 *   first      one run on device pointers (the warm-up)
 *   same       three more on the same pointers
 *   alternate  two output buffers, alternately, six runs
 *   evict      four further output buffers, twice round (more pointer sets
 *              than the library keeps graphs for)
 *   index      an out-of-range index in a new input buffer (twice: the
 *              second run replays), then in the buffer of a graph that
 *              exists (replayed with the bad data), then repaired
 *   stream     asynchronous runs on a caller's stream, the status from sync
 *   host       run_host, also with a bad index
 *   again      a second instance while the first's buffers stay, destroyed
 *              after capturing; then every buffer is freed
 *
 * Usage: gpu_graph X.bin IDX.bin OUT.bin (raw float32, int64); writes the
 * first run's output to OUT.bin and prints "ok".
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gather.h"

#include "check.h"

#define NOUT 6

static float x[GATHER_INPUT0_NUMEL], y0[GATHER_OUTPUT0_NUMEL], y[GATHER_OUTPUT0_NUMEL];
static int64_t idx[GATHER_INPUT1_NUMEL], bad[GATHER_INPUT1_NUMEL];
static float *dx, *dy[NOUT];
static int64_t *didx, *dbad;

static void phase(const char *name)
{
	fprintf(stderr, "phase %s\n", name);
	fflush(stderr);
}

static void *dev(size_t n)
{
	void *p = NULL;
	CHECK(gather_desc.device_alloc(&p, n) == DOCCC_OK && p);
	return p;
}

static void put(void *d, const void *h, size_t n)
{
	CHECK(gather_desc.device_copy(d, h, n, DOCCC_COPY_TO_DEVICE) == DOCCC_OK);
}

/* Clear output k, run into it, return the status; on success its bits must be y0's. */
static int run(gather_t *m, const int64_t *di, int k, int sync)
{
	static const float zero[GATHER_OUTPUT0_NUMEL];
	put(dy[k], zero, sizeof zero);
	int st = gather_run(m, dx, di, dy[k]);
	if (st == DOCCC_OK && sync)
		st = gather_sync(m);
	if (st == DOCCC_OK) {
		CHECK(gather_desc.device_copy(y, dy[k], sizeof y, DOCCC_COPY_TO_HOST) == DOCCC_OK);
		CHECK(!memcmp(y, y0, sizeof y));
	}
	return st;
}

static void load(const char *path, void *p, size_t n)
{
	FILE *f = fopen(path, "rb");
	CHECK(f && fread(p, n, 1, f) == 1);
	fclose(f);
}

int main(int argc, char **argv)
{
	CHECK(argc == 4);
	load(argv[1], x, sizeof x);
	load(argv[2], idx, sizeof idx);
	memcpy(bad, idx, sizeof bad);
	bad[1] = GATHER_INPUT0_NUMEL / 3; /* one past the last of x's 6 rows */
	CHECK(GATHER_DEVICE_RESIDENT == 1);

	gather_t *m;
	int st = gather_create(&m);
	if (st) {
		fprintf(stderr, "create: %s: %s\n", gather_strerror(st), gather_last_error(NULL));
		return 1;
	}
	dx = dev(sizeof x);
	didx = dev(sizeof idx);
	dbad = dev(sizeof bad);
	for (int k = 0; k < NOUT; k++)
		dy[k] = dev(sizeof y);
	put(dx, x, sizeof x);
	put(didx, idx, sizeof idx);
	put(dbad, bad, sizeof bad);

	phase("first");
	CHECK(gather_run(m, dx, didx, dy[0]) == DOCCC_OK);
	CHECK(gather_desc.device_copy(y0, dy[0], sizeof y0, DOCCC_COPY_TO_HOST) == DOCCC_OK);

	phase("same");
	for (int i = 0; i < 3; i++)
		CHECK(run(m, didx, 0, 0) == DOCCC_OK);

	phase("alternate");
	for (int i = 0; i < 6; i++)
		CHECK(run(m, didx, 1 - i % 2, 0) == DOCCC_OK);

	phase("evict");
	for (int i = 0; i < 8; i++)
		CHECK(run(m, didx, 2 + i % 4, 0) == DOCCC_OK);

	phase("index");
	for (int i = 0; i < 2; i++)
		CHECK(run(m, dbad, 0, 0) == DOCCC_ERR_INDEX);
	CHECK(run(m, didx, 3, 0) == DOCCC_OK);
	put(didx, bad, sizeof bad);
	CHECK(run(m, didx, 3, 0) == DOCCC_ERR_INDEX);
	put(didx, idx, sizeof idx);
	CHECK(run(m, didx, 3, 0) == DOCCC_OK);

	phase("stream");
	int stream; /* any non-NULL handle: the simulation runs every stream in order */
	CHECK(gather_set_stream(m, &stream) == DOCCC_OK);
	CHECK(run(m, didx, 3, 1) == DOCCC_OK);
	put(didx, bad, sizeof bad);
	CHECK(run(m, didx, 3, 1) == DOCCC_ERR_INDEX);
	put(didx, idx, sizeof idx);
	CHECK(run(m, didx, 3, 1) == DOCCC_OK);
	CHECK(gather_sync(m) == DOCCC_OK); /* nothing pending, the status was read */
	CHECK(gather_set_stream(m, NULL) == DOCCC_OK);

	phase("host");
	for (int i = 0; i < 3; i++) {
		memset(y, 0, sizeof y);
		CHECK(gather_run_host(m, x, idx, y) == DOCCC_OK);
		CHECK(!memcmp(y, y0, sizeof y));
	}
	CHECK(gather_run_host(m, x, bad, y) == DOCCC_ERR_INDEX);

	phase("destroy");
	gather_destroy(m);

	phase("again");
	CHECK(gather_create(&m) == DOCCC_OK);
	for (int i = 0; i < 3; i++)
		CHECK(run(m, didx, 0, 0) == DOCCC_OK);
	gather_destroy(m);
	CHECK(gather_desc.device_free(dx) == DOCCC_OK);
	CHECK(gather_desc.device_free(didx) == DOCCC_OK);
	CHECK(gather_desc.device_free(dbad) == DOCCC_OK);
	for (int k = 0; k < NOUT; k++)
		CHECK(gather_desc.device_free(dy[k]) == DOCCC_OK);

	phase("end");
	FILE *f = fopen(argv[3], "wb");
	CHECK(f && fwrite(y0, sizeof y0, 1, f) == 1);
	CHECK(fclose(f) == 0);
	puts("ok");
	return 0;
}
