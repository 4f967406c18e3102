/*
 * main.c - drives a doccc library through its C API, as a user's program would.
 *
 * Built by test/test_capi.py against a library compiled with `-n mlp` (one
 * float32 input, one float32 output):
 *
 *     clang -std=c11 -I OUT -DMODEL_HEADER='"mlp.h"' main.c -L OUT -lmlp \
 *           -Wl,-rpath,OUT -lpthread -ldl
 *     ./capi LIB.so IN.bin OUT.bin [WEIGHTS]
 *
 * IN.bin and OUT.bin are raw little-endian float32 arrays. With WEIGHTS the
 * library was built with --external-weights and instances are made with
 * mlp_create_from(). The program checks, and exits 1 at the first failure with
 * the check that failed:
 *   - the header's macros (counts, dtype, rank, shape, numel) are consistent;
 *   - create, run, destroy; a second run of the same instance gives the same
 *     bits; strerror gives a message for every status; set_num_threads answers
 *     OK or DOCCC_ERR_THREADS, and 2 or 1 threads give the same numbers within
 *     rtol 1e-4 / atol 1e-5; NULL handles and buffers give DOCCC_ERR_ARG;
 *   - two instances running at once in two threads give the same bits as the
 *     first run (no global mutable state);
 *   - the library dlopen'ed again and driven through the fixed symbol
 *     `doccc_model` (the generic descriptor) agrees with the header and gives
 *     the same bits.
 * It prints "set_num_threads(2) = N" (the test reads it) and finally "ok".
 */
#define _POSIX_C_SOURCE 200809L
#include <dlfcn.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include MODEL_HEADER
#include MODEL_HEADER /* twice: the include guard must hold */

#define FAIL(...)                                                              \
	do {                                                                       \
		fprintf(stderr, "capi: ");                                             \
		fprintf(stderr, __VA_ARGS__);                                          \
		fputc('\n', stderr);                                                   \
		exit(1);                                                               \
	} while (0)
#define CHECK(x)                                                               \
	do {                                                                       \
		if (!(x)) FAIL("%s:%d: check failed: %s", __FILE__, __LINE__, #x);     \
	} while (0)
#define CHECK_STATUS(call)                                                     \
	do {                                                                       \
		int st_ = (call);                                                      \
		if (st_ != DOCCC_OK)                                                   \
			FAIL("%s:%d: %s => %d (%s)", __FILE__, __LINE__, #call, st_,       \
			     mlp_strerror(st_));                                           \
	} while (0)

_Static_assert(MLP_NUM_INPUTS == 1, "the test model has one input");
_Static_assert(MLP_NUM_OUTPUTS == 1, "the test model has one output");
_Static_assert(MLP_INPUT0_DTYPE == DOCCC_F32, "float32 input");
_Static_assert(MLP_OUTPUT0_DTYPE == DOCCC_F32, "float32 output");

static const int64_t in_shape[] = MLP_INPUT0_SHAPE;
static const int64_t out_shape[] = MLP_OUTPUT0_SHAPE;
_Static_assert(sizeof in_shape / sizeof in_shape[0] == MLP_INPUT0_RANK, "input rank");
_Static_assert(sizeof out_shape / sizeof out_shape[0] == MLP_OUTPUT0_RANK, "output rank");

enum { NIN = MLP_INPUT0_NUMEL, NOUT = MLP_OUTPUT0_NUMEL, THREAD_RUNS = 20 };

static const char *weights;      /* NULL: weights embedded */
static float *input;
static float *expected;          /* output of the first run */

static int64_t product(const int64_t *s, int n)
{
	int64_t p = 1;
	for (int i = 0; i < n; i++)
		p *= s[i];
	return p;
}

static void read_file(const char *path, void *buf, size_t n)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		FAIL("%s: cannot open", path);
	size_t got = fread(buf, 1, n, f);
	int extra = fgetc(f);
	fclose(f);
	if (got != n || extra != EOF)
		FAIL("%s: expected exactly %zu bytes", path, n);
}

static void write_file(const char *path, const void *buf, size_t n)
{
	FILE *f = fopen(path, "wb");
	if (!f || fwrite(buf, 1, n, f) != n || fclose(f) != 0)
		FAIL("%s: cannot write", path);
}

static int create(mlp_t **m)
{
	return weights ? mlp_create_from(m, weights) : mlp_create(m);
}

/* One thread: its own instance (default thread count, like the instance that
 * made expected), THREAD_RUNS runs, each compared bit for bit with expected. */
static void *worker(void *arg)
{
	int *ok = arg;
	mlp_t *m = NULL;
	float *out = malloc(sizeof(float) * NOUT);
	*ok = 0;
	if (!out || create(&m) != DOCCC_OK)
		goto done;
	for (int i = 0; i < THREAD_RUNS; i++) {
		memset(out, 0xff, sizeof(float) * NOUT);
		if (mlp_run(m, input, out) != DOCCC_OK ||
		    memcmp(out, expected, sizeof(float) * NOUT) != 0)
			goto done;
	}
	*ok = 1;
done:
	mlp_destroy(m);
	free(out);
	return NULL;
}

/* Within rtol 1e-4, atol 1e-5 of expected (another thread count may sum in
 * another order). */
static int close_to_expected(const float *out)
{
	for (int i = 0; i < NOUT; i++) {
		float d = out[i] - expected[i];
		if (d < 0)
			d = -d;
		float tol = 1e-5f + 1e-4f * (expected[i] < 0 ? -expected[i] : expected[i]);
		if (!(d <= tol))
			return 0;
	}
	return 1;
}

static void check_tensor_desc(const doccc_tensor_desc *t, const char *name, int dtype,
                              int rank, const int64_t *shape, int64_t numel)
{
	CHECK(t->name && strcmp(t->name, name) == 0);
	CHECK(t->dtype == dtype);
	CHECK(t->rank == rank);
	CHECK(t->shape != NULL);
	for (int i = 0; i < rank; i++)
		CHECK(t->shape[i] == shape[i]);
	CHECK(t->numel == numel);
	CHECK(t->nbytes == (size_t)numel * sizeof(float));
}

/* The same library through dlopen and the fixed descriptor symbol. */
static void check_descriptor(const char *libpath)
{
	void *h = dlopen(libpath, RTLD_NOW | RTLD_LOCAL);
	if (!h)
		FAIL("dlopen %s: %s", libpath, dlerror());
	const doccc_model_desc *d = dlsym(h, "doccc_model");
	if (!d)
		FAIL("dlsym doccc_model: %s", dlerror());
	const doccc_model_desc *own = dlsym(h, "mlp_desc");
	CHECK(own != NULL);

	CHECK(d->abi_version >= 1 && d->abi_version <= DOCCC_ABI_VERSION);
	CHECK(d->name && strcmp(d->name, "mlp") == 0);
	CHECK(own->name && strcmp(own->name, d->name) == 0);
	CHECK(d->target && *d->target);
	CHECK(d->category && *d->category);
	CHECK(d->doccc_version && strcmp(d->doccc_version, "0.1.0") == 0);
	CHECK(d->input_hash && strlen(d->input_hash) >= 64);   /* sha256, hex */
	CHECK(d->ninputs == MLP_NUM_INPUTS && d->noutputs == MLP_NUM_OUTPUTS);
	check_tensor_desc(&d->inputs[0], MLP_INPUT0_NAME, MLP_INPUT0_DTYPE, MLP_INPUT0_RANK,
	                  in_shape, MLP_INPUT0_NUMEL);
	check_tensor_desc(&d->outputs[0], MLP_OUTPUT0_NAME, MLP_OUTPUT0_DTYPE, MLP_OUTPUT0_RANK,
	                  out_shape, MLP_OUTPUT0_NUMEL);
	CHECK(d->workspace_size == mlp_workspace_size());
	CHECK(d->weights_embedded == (weights == NULL));
	CHECK(d->create && d->run && d->destroy && d->strerror && d->set_num_threads);

	void *m = NULL;
	int st = d->create(&m, weights);
	if (st != DOCCC_OK)
		FAIL("doccc_model.create => %d (%s)", st, d->strerror(st));
	CHECK(m != NULL);
	float *out = malloc(sizeof(float) * NOUT);
	CHECK(out != NULL);
	const void *ins[1] = {input};
	void *outs[1] = {out};
	st = d->run(m, ins, outs);
	if (st != DOCCC_OK)
		FAIL("doccc_model.run => %d (%s)", st, d->strerror(st));
	CHECK(memcmp(out, expected, sizeof(float) * NOUT) == 0);
	st = d->set_num_threads(m, 1);
	CHECK(st == DOCCC_OK || st == DOCCC_ERR_THREADS);
	d->destroy(m);
	free(out);
	dlclose(h);
}

int main(int argc, char **argv)
{
	if (argc != 4 && argc != 5) {
		fprintf(stderr, "usage: %s LIB.so IN.bin OUT.bin [WEIGHTS]\n", argv[0]);
		return 2;
	}
	weights = argc == 5 ? argv[4] : NULL;
	CHECK(product(in_shape, MLP_INPUT0_RANK) == NIN);
	CHECK(product(out_shape, MLP_OUTPUT0_RANK) == NOUT);
	CHECK(strlen(MLP_INPUT0_NAME) > 0 && strlen(MLP_OUTPUT0_NAME) > 0);

	input = malloc(sizeof(float) * NIN);
	expected = malloc(sizeof(float) * NOUT);
	float *out = malloc(sizeof(float) * NOUT);
	CHECK(input && expected && out);
	read_file(argv[2], input, sizeof(float) * NIN);

	/* Messages for every status, distinct for success and failure. */
	static const int statuses[] = {DOCCC_OK, DOCCC_ERR_NOMEM, DOCCC_ERR_WEIGHTS,
	                               DOCCC_ERR_ARG, DOCCC_ERR_THREADS, DOCCC_ERR_INDEX, DOCCC_ERR_ZERODIV, DOCCC_ERR_ASSERT, 12345, -1};
	for (size_t i = 0; i < sizeof statuses / sizeof statuses[0]; i++) {
		const char *msg = mlp_strerror(statuses[i]);
		CHECK(msg != NULL && *msg != '\0');
	}
	CHECK(strcmp(mlp_strerror(DOCCC_OK), mlp_strerror(DOCCC_ERR_WEIGHTS)) != 0);
	CHECK(strcmp(mlp_strerror(DOCCC_ERR_INDEX), mlp_strerror(12345)) != 0);   /* a message of its own */
	CHECK(strcmp(mlp_strerror(DOCCC_ERR_ZERODIV), mlp_strerror(12345)) != 0);
	CHECK(strcmp(mlp_strerror(DOCCC_ERR_ASSERT), mlp_strerror(12345)) != 0);

	/* Argument errors. */
	CHECK(mlp_create(NULL) == DOCCC_ERR_ARG);
	if (weights) {
		mlp_t *bad = NULL;
		CHECK(mlp_create_from(&bad, "/nonexistent/doccc-capi.weights") == DOCCC_ERR_WEIGHTS);
		mlp_destroy(bad);
	}
	mlp_destroy(NULL);

	mlp_t *m = NULL;
	CHECK_STATUS(create(&m));
	CHECK(m != NULL);
	CHECK(mlp_run(NULL, input, out) == DOCCC_ERR_ARG);
	CHECK(mlp_run(m, NULL, out) == DOCCC_ERR_ARG);
	CHECK(mlp_run(m, input, NULL) == DOCCC_ERR_ARG);
	printf("workspace_size = %zu\n", mlp_workspace_size());

	/* Default thread count: the reference bits for everything below. */
	CHECK_STATUS(mlp_run(m, input, expected));
	memset(out, 0xff, sizeof(float) * NOUT);
	CHECK_STATUS(mlp_run(m, input, out));
	CHECK(memcmp(out, expected, sizeof(float) * NOUT) == 0);
	write_file(argv[3], expected, sizeof(float) * NOUT);

	/* Explicit thread counts: OK (openmp) or DOCCC_ERR_THREADS, same numbers. */
	int st = mlp_set_num_threads(m, 2);
	printf("set_num_threads(2) = %d\n", st);
	CHECK(st == DOCCC_OK || st == DOCCC_ERR_THREADS);
	for (int n = 2; n >= 1; n--) {
		if (mlp_set_num_threads(m, n) != DOCCC_OK)
			continue;
		memset(out, 0xff, sizeof(float) * NOUT);
		CHECK_STATUS(mlp_run(m, input, out));
		CHECK(close_to_expected(out));
	}

	/* Two instances, two threads, at the same time. */
	pthread_t th[2];
	int ok[2];
	for (int i = 0; i < 2; i++)
		CHECK(pthread_create(&th[i], NULL, worker, &ok[i]) == 0);
	for (int i = 0; i < 2; i++)
		CHECK(pthread_join(th[i], NULL) == 0);
	CHECK(ok[0] && ok[1]);

	check_descriptor(argv[1]);

	mlp_destroy(m);
	free(input);
	free(expected);
	free(out);
	printf("ok\n");
	return 0;
}
