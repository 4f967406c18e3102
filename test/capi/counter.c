/*
 * counter.c - a hand-written doccc library with state, for `doccc run
 * --step` (test/test_run_steps.py): y = x + n, where n is the number of
 * runs this instance made before, so a loader that keeps one instance
 * across its steps sees n = 0, 1, 2, ... in the order it runs them, and one
 * that made a new instance per step would see 0 every time. A run whose
 * x[0] is negative fails (DOCCC_ERR_ASSERT), so a test can make any step
 * fail at run time. Descriptor version 1: the fields up to set_num_threads,
 * the oldest a loader must still read.
 */
#include <stdlib.h>

#include "../../backends/doccc_model.h"

typedef struct {
	int64_t runs;
} Counter;

static const int64_t shape[] = {4};
static const doccc_tensor_desc inputs[] = {{"x", DOCCC_F32, 1, shape, 4, 16}};
static const doccc_tensor_desc outputs[] = {{"y", DOCCC_F32, 1, shape, 4, 16}};

static int counter_create(void **model, const char *weights)
{
	(void)weights;
	*model = calloc(1, sizeof(Counter));
	return *model ? DOCCC_OK : DOCCC_ERR_NOMEM;
}

static int counter_run(void *model, const void *const *in, void *const *out)
{
	Counter *c = model;
	const float *x = in[0];
	float *y = out[0];

	if (x[0] < 0)
		return DOCCC_ERR_ASSERT;
	for (int i = 0; i < 4; i++)
		y[i] = x[i] + (float)c->runs;
	c->runs++;
	return DOCCC_OK;
}

static void counter_destroy(void *model)
{
	free(model);
}

static const char *counter_strerror(int status)
{
	return status == DOCCC_ERR_ASSERT ? "counter: x[0] is negative" : "counter: error";
}

const doccc_model_desc doccc_model = {
	.abi_version = 1,
	.name = "counter",
	.target = "none",
	.category = "server",
	.ninputs = 1,
	.noutputs = 1,
	.inputs = inputs,
	.outputs = outputs,
	.weights_embedded = 1,
	.create = counter_create,
	.run = counter_run,
	.destroy = counter_destroy,
	.strerror = counter_strerror,
};
