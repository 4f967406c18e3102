/*
 * abi2_model.c - a library with a descriptor of ABI version 2, as doccc
 * wrote them before version 3 added march, options, the weights' size and
 * hash and the info text (and the .doccc_info section). test_inspect.py
 * builds it (cc -shared) to check that `doccc run` still loads such a
 * library and that `doccc inspect` names what it lacks. The struct is the
 * version-2 layout, spelled out here rather than taken from
 * backends/doccc_model.h, which has grown since: it is what an old library
 * holds. The model: y = x + 1 on a float32 [4].
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

typedef void (*log_fn)(void *user, int level, const char *msg);

typedef struct {
	const char *name;
	int dtype;
	int rank;
	const int64_t *shape;
	int64_t numel;
	size_t nbytes;
} tensor_desc;

typedef struct {
	int abi_version;
	const char *name, *target, *category, *doccc_version, *input_hash;
	int ninputs, noutputs;
	const tensor_desc *inputs, *outputs;
	size_t workspace_size;
	int weights_embedded;
	int (*create)(void **model, const char *weights_path);
	int (*run)(void *model, const void *const *inputs, void *const *outputs);
	void (*destroy)(void *model);
	const char *(*strerror)(int status);
	int (*set_num_threads)(void *model, int n);
	/* abi_version >= 2 */
	int device_resident;
	const char *device_backend;
	int simulated;
	int (*run_host)(void *model, const void *const *inputs, void *const *outputs);
	int (*set_stream)(void *model, void *stream);
	int (*sync)(void *model);
	const char *(*last_error)(const void *model);
	void (*set_log)(void *model, log_fn fn, void *user);
	int (*device_alloc)(void **ptr, size_t nbytes);
	int (*device_free)(void *ptr);
	int (*device_copy)(void *dst, const void *src, size_t nbytes, int direction);
} model_desc_v2;

static int create(void **m, const char *weights_path)
{
	(void)weights_path;
	*m = malloc(1);
	return *m ? 0 : 1;
}

static int run(void *m, const void *const *in, void *const *out)
{
	(void)m;
	for (int i = 0; i < 4; i++)
		((float *)out[0])[i] = ((const float *)in[0])[i] + 1.0f;
	return 0;
}

static void destroy(void *m)
{
	free(m);
}

static const char *status_text(int st)
{
	return st ? "failed" : "ok";
}

static int threads(void *m, int n)
{
	(void)m;
	return n == 1 ? 0 : 4;
}

static const char *last_error(const void *m)
{
	(void)m;
	return "";
}

static const int64_t shape[] = {4};
static const tensor_desc ins[] = {{"x", 0, 1, shape, 4, 16}};
static const tensor_desc outs[] = {{"y", 0, 1, shape, 4, 16}};

const model_desc_v2 doccc_model = {
	2, "old", "sequential", "desktop", "0.1.0", "0000000000000000000000000000000000000000000000000000000000000000",
	1, 1, ins, outs, 0, 1,
	create, run, destroy, status_text, threads,
	0, NULL, 0, run, NULL, NULL, last_error, NULL, NULL, NULL, NULL,
};
