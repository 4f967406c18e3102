/*
 * dyn.c - drives a doccc library with run-time dims through its C API.
 *
 * Built by test/test_capi.py against a library compiled with `-n dyn` from
 * an export with one dynamic dim, the batch (one float32 input of rank 2,
 * one float32 output of rank 2):
 *
 *     clang -std=c11 -I OUT -DMODEL_HEADER='"dyn.h"' dyn.c -L OUT -ldyn \
 *           -Wl,-rpath,OUT -lpthread
 *     ./dyn IN_A.bin NA IN_B.bin NB OUT_A.bin OUT_B.bin
 *
 * IN_A.bin holds NA rows of the input, IN_B.bin NB rows (raw little-endian
 * float32); the outputs at those batches go to OUT_A.bin and OUT_B.bin for
 * the test to compare with eager PyTorch. The program checks, and exits 1 at
 * the first failure with the check that failed:
 *   - the header's dim macros (DYN_NUM_DIMS, DYN_DIM0_NAME/MIN/MAX,
 *     DYN_INPUT0_DIMS) agree with the descriptor (ndims, dims, input_dims);
 *   - DYN_run before any DYN_set_dims is DOCCC_ERR_SHAPE, and
 *     DYN_last_error says to set the dims;
 *   - DYN_infer_dims finds NA from the input's shape, and refuses a shape
 *     whose static dim is wrong with DOCCC_ERR_SHAPE and a message;
 *   - DYN_input_shape / DYN_output_shape at NA and NB;
 *   - set_dims + run at NA, run_dims at NB, then run_dims at NA again gives
 *     the first run's bits (the workspace planned anew each time);
 *   - a dim past the range (DYN_DIM0_MAX + 1) and below it (DYN_DIM0_MIN - 1)
 *     is DOCCC_ERR_SHAPE from set_dims, run_dims and infer_dims, with a
 *     message naming the dim, its value and the range; a run at valid dims
 *     afterwards still works;
 *   - the descriptor's set_dims, infer_dims and output_shape do the same as
 *     the named functions; NULL arguments are DOCCC_ERR_ARG.
 * It prints "ok" at the end.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include MODEL_HEADER

#include "check.h"

#define CHECK_STATUS(call)                                                     \
	do {                                                                       \
		int st_ = (call);                                                      \
		if (st_ != DOCCC_OK) {                                                 \
			fprintf(stderr, "%s:%d: %s => %d (%s)\n", __FILE__, __LINE__,     \
			        #call, st_, dyn_strerror(st_));                            \
			exit(1);                                                           \
		}                                                                      \
	} while (0)

_Static_assert(DYN_NUM_INPUTS == 1 && DYN_NUM_OUTPUTS == 1, "one input, one output");
_Static_assert(DYN_INPUT0_RANK == 2 && DYN_OUTPUT0_RANK == 2, "rank 2 input and output");
_Static_assert(DYN_INPUT0_DTYPE == DOCCC_F32 && DYN_OUTPUT0_DTYPE == DOCCC_F32, "float32");
_Static_assert(DYN_NUM_DIMS == 1, "one run-time dim, the batch");
_Static_assert(DYN_DIM0_MIN >= 1 && DYN_DIM0_MAX > DYN_DIM0_MIN, "a finite range");

/* The fixed sizes: each shape macro has -1 where a dim is a run-time one. */
static const int64_t in_shape[] = DYN_INPUT0_SHAPE;
static const int64_t out_shape[] = DYN_OUTPUT0_SHAPE;

static void *read_file(const char *path, size_t n)
{
	void *buf = malloc(n ? n : 1);
	FILE *f = fopen(path, "rb");
	CHECK(buf && f);
	size_t got = fread(buf, 1, n, f);
	int extra = fgetc(f);
	fclose(f);
	if (got != n || extra != EOF) {
		fprintf(stderr, "%s: expected exactly %zu bytes\n", path, n);
		exit(1);
	}
	return buf;
}

static void write_file(const char *path, const void *buf, size_t n)
{
	FILE *f = fopen(path, "wb");
	CHECK(f && fwrite(buf, 1, n, f) == n && fclose(f) == 0);
}

/* The message of a DOCCC_ERR_SHAPE for dim value v names the dim, v and the range. */
static void check_range_message(const char *msg, int64_t v)
{
	char want[128];
	CHECK(msg && strstr(msg, DYN_DIM0_NAME));
	snprintf(want, sizeof want, "= %lld is outside the range", (long long)v);
	CHECK(strstr(msg, want));
	snprintf(want, sizeof want, "[%lld, %lld]", (long long)DYN_DIM0_MIN, (long long)DYN_DIM0_MAX);
	CHECK(strstr(msg, want));
}

/* The output at batch n: its shape from output_shape, one run_dims. */
static float *run_at(dyn_t *m, int64_t n, const float *in, size_t *count)
{
	int64_t dims[DYN_NUM_DIMS] = {n}, shape[DYN_OUTPUT0_RANK];
	CHECK_STATUS(dyn_output_shape(dims, 0, shape));
	CHECK(shape[0] == n && shape[1] == out_shape[1]);
	*count = (size_t)(shape[0] * shape[1]);
	float *out = malloc(sizeof(float) * *count);
	CHECK(out);
	memset(out, 0xff, sizeof(float) * *count);
	CHECK_STATUS(dyn_run_dims(m, dims, in, out));
	return out;
}

static void check_out_of_range(dyn_t *m, const float *in, float *out, int64_t v)
{
	int64_t dims[DYN_NUM_DIMS] = {v};
	CHECK(dyn_set_dims(m, dims) == DOCCC_ERR_SHAPE);
	check_range_message(dyn_last_error(m), v);
	CHECK(dyn_run_dims(m, dims, in, out) == DOCCC_ERR_SHAPE);
	check_range_message(dyn_last_error(m), v);
	/* infer_dims: an input of v rows */
	int64_t shape[2] = {v, in_shape[1]}, got[DYN_NUM_DIMS];
	const int64_t *shapes[1] = {shape};
	char msg[256] = "";
	CHECK(dyn_infer_dims(shapes, got, msg, sizeof msg) == DOCCC_ERR_SHAPE);
	CHECK(msg[0] != '\0');
	if (v > DYN_DIM0_MAX)
		check_range_message(msg, v);
}

int main(int argc, char **argv)
{
	if (argc != 7) {
		fprintf(stderr, "usage: %s IN_A.bin NA IN_B.bin NB OUT_A.bin OUT_B.bin\n", argv[0]);
		return 2;
	}
	int64_t na = atoll(argv[2]), nb = atoll(argv[4]);
	CHECK(na != nb && na >= DYN_DIM0_MIN && nb <= DYN_DIM0_MAX);
	CHECK(in_shape[0] == -1 && in_shape[1] > 0 && out_shape[0] == -1 && out_shape[1] > 0);
	float *in_a = read_file(argv[1], sizeof(float) * (size_t)(na * in_shape[1]));
	float *in_b = read_file(argv[3], sizeof(float) * (size_t)(nb * in_shape[1]));

	/* The header and the descriptor agree on the dims. */
	CHECK(dyn_desc.abi_version >= 4);
	CHECK(dyn_desc.ndims == DYN_NUM_DIMS && dyn_desc.dims);
	CHECK(strcmp(dyn_desc.dims[0].name, DYN_DIM0_NAME) == 0);
	CHECK(dyn_desc.dims[0].min == DYN_DIM0_MIN && dyn_desc.dims[0].max == DYN_DIM0_MAX);
	CHECK(dyn_desc.input_dims && strcmp(dyn_desc.input_dims[0], DYN_INPUT0_DIMS) == 0);
	CHECK(dyn_desc.output_dims && strcmp(dyn_desc.output_dims[0], DYN_OUTPUT0_DIMS) == 0);
	CHECK(strncmp(DYN_INPUT0_DIMS, DYN_DIM0_NAME, strlen(DYN_DIM0_NAME)) == 0);
	CHECK(dyn_desc.set_dims && dyn_desc.infer_dims && dyn_desc.output_shape);
	CHECK(dyn_desc.inputs[0].shape[0] == -1 && dyn_desc.inputs[0].numel == -1);
	CHECK(strcmp(dyn_strerror(DOCCC_ERR_SHAPE), dyn_strerror(12345)) != 0);

	dyn_t *m = NULL;
	CHECK_STATUS(dyn_create(&m));
	float *scratch = malloc(sizeof(float) * (size_t)(DYN_DIM0_MAX * out_shape[1]));
	CHECK(scratch);

	/* No dims yet: run refuses, and says why. */
	CHECK(dyn_run(m, in_a, scratch) == DOCCC_ERR_SHAPE);
	CHECK(dyn_last_error(m) && strstr(dyn_last_error(m), "set_dims"));

	/* The dims from the input's shape. */
	int64_t dims[DYN_NUM_DIMS] = {0};
	int64_t sa[2] = {na, in_shape[1]};
	const int64_t *shapes[1] = {sa};
	char msg[256] = "";
	CHECK_STATUS(dyn_infer_dims(shapes, dims, msg, sizeof msg));
	CHECK(dims[0] == na);
	int64_t bad[2] = {na, in_shape[1] + 1};
	const int64_t *bads[1] = {bad};
	int64_t ignored[DYN_NUM_DIMS];
	CHECK(dyn_infer_dims(bads, ignored, msg, sizeof msg) == DOCCC_ERR_SHAPE && msg[0]);
	CHECK(dyn_infer_dims(bads, ignored, NULL, 0) == DOCCC_ERR_SHAPE); /* no room for a message */

	/* Shapes at the dims. */
	int64_t s[2];
	CHECK_STATUS(dyn_input_shape(dims, 0, s));
	CHECK(s[0] == na && s[1] == in_shape[1]);
	CHECK_STATUS(dyn_output_shape(dims, 0, s));
	CHECK(s[0] == na && s[1] == out_shape[1]);
	CHECK(dyn_output_shape(dims, 1, s) == DOCCC_ERR_ARG);

	/* set_dims then run at NA; run_dims at NB; run_dims at NA again. */
	size_t count_a = (size_t)(na * out_shape[1]), count_b, count_a2;
	float *out_a = malloc(sizeof(float) * count_a);
	CHECK(out_a);
	CHECK_STATUS(dyn_set_dims(m, dims));
	CHECK_STATUS(dyn_run(m, in_a, out_a));
	float *out_b = run_at(m, nb, in_b, &count_b);
	CHECK(count_b == (size_t)(nb * out_shape[1]));
	float *again = run_at(m, na, in_a, &count_a2);
	CHECK(count_a2 == count_a && memcmp(again, out_a, sizeof(float) * count_a) == 0);
	write_file(argv[5], out_a, sizeof(float) * count_a);
	write_file(argv[6], out_b, sizeof(float) * count_b);

	/* Out of range, both sides; then a valid run still works. */
	check_out_of_range(m, in_a, scratch, (int64_t)DYN_DIM0_MAX + 1);
	if (DYN_DIM0_MIN > 0)
		check_out_of_range(m, in_a, scratch, (int64_t)DYN_DIM0_MIN - 1);
	free(again);
	again = run_at(m, na, in_a, &count_a2);
	CHECK(memcmp(again, out_a, sizeof(float) * count_a) == 0);

	/* The descriptor's entry points, as a generic loader calls them. */
	CHECK(dyn_desc.set_dims(m, dims) == DOCCC_OK);
	const void *ins[1] = {in_a};
	void *outs[1] = {scratch};
	CHECK(dyn_desc.run(m, ins, outs) == DOCCC_OK);
	CHECK(memcmp(scratch, out_a, sizeof(float) * count_a) == 0);
	int64_t big[DYN_NUM_DIMS] = {(int64_t)DYN_DIM0_MAX + 1};
	CHECK(dyn_desc.set_dims(m, big) == DOCCC_ERR_SHAPE);
	CHECK(dyn_desc.last_error(m) && strstr(dyn_desc.last_error(m), "outside the range"));
	CHECK(dyn_desc.infer_dims(shapes, ignored, msg, sizeof msg) == DOCCC_OK && ignored[0] == na);
	CHECK(dyn_desc.output_shape(dims, 0, s) == DOCCC_OK && s[0] == na);

	/* Argument errors. */
	CHECK(dyn_set_dims(NULL, dims) == DOCCC_ERR_ARG);
	CHECK(dyn_set_dims(m, NULL) == DOCCC_ERR_ARG);
	CHECK(dyn_run_dims(m, NULL, in_a, scratch) == DOCCC_ERR_ARG);
	CHECK(dyn_infer_dims(NULL, dims, msg, sizeof msg) == DOCCC_ERR_ARG);
	CHECK(dyn_infer_dims(shapes, NULL, msg, sizeof msg) == DOCCC_ERR_ARG);
	CHECK(dyn_output_shape(NULL, 0, s) == DOCCC_ERR_ARG);

	dyn_destroy(m);
	free(in_a);
	free(in_b);
	free(out_a);
	free(out_b);
	free(again);
	free(scratch);
	printf("ok\n");
	return 0;
}
