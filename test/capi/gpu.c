/*
 * gpu.c - the device-resident API of a generated cuda/rocm library, from C,
 * as a user writes it (test/test_capi.py builds it against a --simulate
 * build of the MLP, compiled with -Wall -Wextra -Werror):
 *
 *     cc -std=c11 -I OUT -DMODEL_HEADER='"mlp.h"' gpu.c -L OUT -lmlp -lpthread
 *
 * It checks that
 *   - the header says device-resident, backend cuda;
 *   - mlp_run with host pointers returns DOCCC_ERR_DEVICE, and
 *     mlp_last_error names the input and mlp_run_host;
 *   - mlp_run_host gives the expected output, and the log hook replaced by
 *     mlp_set_log hears exactly one performance warning per instance over
 *     three runs;
 *   - device pointers from the descriptor's device_alloc (the library's own
 *     runtime; a CUDA program would use cudaMalloc) give the same bits
 *     through mlp_run, synchronously and with a stream and mlp_sync;
 *   - two instances running mlp_run_host at once in two threads give the
 *     same bits as one.
 * Usage: gpu IN.bin OUT.bin (raw float32); prints "ok".
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include MODEL_HEADER

#include "check.h"

static float x[MLP_INPUT0_NUMEL], y[MLP_OUTPUT0_NUMEL];

typedef struct {
	int calls, warnings;
	char last[512];
} Log;

static void log_fn(void *user, int level, const char *msg)
{
	Log *l = user;
	l->calls++;
	l->warnings += level == DOCCC_LOG_WARNING;
	snprintf(l->last, sizeof l->last, "%s", msg);
}

typedef struct {
	float out[MLP_OUTPUT0_NUMEL];
	int status;
} Job;

static void *worker(void *arg)
{
	Job *j = arg;
	mlp_t *m;
	j->status = mlp_create(&m);
	if (j->status)
		return NULL;
	Log l;
	memset(&l, 0, sizeof l);
	mlp_set_log(m, log_fn, &l);
	for (int i = 0; i < 20 && !j->status; i++)
		j->status = mlp_run_host(m, x, j->out);
	if (!j->status && l.warnings != 1)
		j->status = -1;
	mlp_destroy(m);
	return NULL;
}

int main(int argc, char **argv)
{
	CHECK(argc == 3);
	FILE *f = fopen(argv[1], "rb");
	CHECK(f && fread(x, sizeof x, 1, f) == 1);
	fclose(f);
	CHECK(MLP_DEVICE_RESIDENT == 1);
	CHECK(!strcmp(MLP_DEVICE_BACKEND, "cuda"));
	CHECK(mlp_desc.device_resident == 1 && !strcmp(mlp_desc.device_backend, "cuda") && mlp_desc.simulated == 1);

	mlp_t *m;
	int st = mlp_create(&m);
	if (st) {
		fprintf(stderr, "create: %s: %s\n", mlp_strerror(st), mlp_last_error(NULL));
		return 1;
	}
	Log l;
	memset(&l, 0, sizeof l);
	mlp_set_log(m, log_fn, &l);

	/* host memory to the device entry point */
	CHECK(mlp_run(m, x, y) == DOCCC_ERR_DEVICE);
	CHECK(strstr(mlp_last_error(m), "input 0") && strstr(mlp_last_error(m), "mlp_run_host"));
	CHECK(strstr(mlp_strerror(DOCCC_ERR_DEVICE), "mlp_last_error"));
	CHECK(l.calls == 0);

	/* the host-copy path, warning once */
	for (int i = 0; i < 3; i++)
		CHECK(mlp_run_host(m, x, y) == DOCCC_OK);
	CHECK(l.calls == 1 && l.warnings == 1 && strstr(l.last, "performance warning"));

	/* device pointers */
	float *dx, *dy, y2[MLP_OUTPUT0_NUMEL];
	CHECK(mlp_desc.device_alloc((void **)&dx, sizeof x) == DOCCC_OK);
	CHECK(mlp_desc.device_alloc((void **)&dy, sizeof y) == DOCCC_OK);
	CHECK(mlp_desc.device_copy(dx, x, sizeof x, DOCCC_COPY_TO_DEVICE) == DOCCC_OK);
	CHECK(mlp_run(m, dx, dy) == DOCCC_OK);
	CHECK(mlp_desc.device_copy(y2, dy, sizeof y2, DOCCC_COPY_TO_HOST) == DOCCC_OK);
	CHECK(!memcmp(y, y2, sizeof y));
	memset(y2, 0, sizeof y2);
	int stream;   /* any non-NULL handle: the simulation runs every stream in order */
	CHECK(mlp_set_stream(m, &stream) == DOCCC_OK);
	CHECK(mlp_run(m, dx, dy) == DOCCC_OK && mlp_sync(m) == DOCCC_OK);
	CHECK(mlp_set_stream(m, NULL) == DOCCC_OK);
	CHECK(mlp_desc.device_copy(y2, dy, sizeof y2, DOCCC_COPY_TO_HOST) == DOCCC_OK);
	CHECK(!memcmp(y, y2, sizeof y));
	CHECK(l.calls == 1);
	CHECK(mlp_desc.device_free(dx) == DOCCC_OK && mlp_desc.device_free(dy) == DOCCC_OK);
	mlp_destroy(m);

	/* two instances at once */
	static Job jobs[2];
	pthread_t th[2];
	for (int i = 0; i < 2; i++)
		CHECK(pthread_create(&th[i], NULL, worker, &jobs[i]) == 0);
	for (int i = 0; i < 2; i++) {
		CHECK(pthread_join(th[i], NULL) == 0);
		CHECK(jobs[i].status == DOCCC_OK);
		CHECK(!memcmp(jobs[i].out, y, sizeof y));
	}

	f = fopen(argv[2], "wb");
	CHECK(f && fwrite(y, sizeof y, 1, f) == 1);
	CHECK(fclose(f) == 0);
	puts("ok");
	return 0;
}
