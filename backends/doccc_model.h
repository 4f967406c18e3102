/*
 * doccc_model.h - the generic descriptor every doccc library exports.
 *
 * The generated header NAME.h embeds a copy of this block (under the same
 * include guard, so several model headers can be included together), and
 * the generated library defines
 *
 *     const doccc_model_desc NAME_desc;          (the model's own symbol)
 *     const doccc_model_desc doccc_model;        (weak alias: fixed name)
 *
 * so a loader can dlopen any doccc library and dlsym("doccc_model") without
 * knowing its name; `doccc run` and the tests do exactly that. The struct
 * only grows at its end; abi_version says which fields exist.
 */
#ifndef DOCCC_MODEL_DESC_H
#define DOCCC_MODEL_DESC_H

#include <stddef.h>
#include <stdint.h>

#define DOCCC_ABI_VERSION 1

#ifdef __cplusplus
typedef bool doccc_bool;
#else
typedef _Bool doccc_bool;
#endif

/* Element types (stable numbers; not torch's). */
enum {
	DOCCC_F32 = 0, DOCCC_F64 = 1, DOCCC_F16 = 2, DOCCC_BF16 = 3,
	DOCCC_I64 = 4, DOCCC_I32 = 5, DOCCC_I16 = 6, DOCCC_I8 = 7,
	DOCCC_U8 = 8, DOCCC_BOOL = 9
};

/* Status codes returned by create/run (0 = success). */
enum {
	DOCCC_OK = 0,
	DOCCC_ERR_NOMEM = 1,      /* workspace allocation failed */
	DOCCC_ERR_WEIGHTS = 2,    /* weights file missing, unreadable or wrong */
	DOCCC_ERR_ARG = 3,        /* NULL handle or buffer */
	DOCCC_ERR_THREADS = 4,    /* thread count not supported by this build */
	DOCCC_ERR_INDEX = 5,      /* run: an index tensor held an out-of-range index */
	DOCCC_ERR_ZERODIV = 6     /* run: an integer division or remainder by zero */
};

typedef struct {
	const char *name;         /* torch name of the input or output */
	int dtype;                /* DOCCC_* */
	int rank;
	const int64_t *shape;     /* rank entries */
	int64_t numel;
	size_t nbytes;
} doccc_tensor_desc;

typedef struct {
	int abi_version;
	const char *name;         /* model name (symbol prefix) */
	const char *target;       /* none, sequential, openmp, ... */
	const char *category;
	const char *doccc_version;
	const char *input_hash;   /* sha256 of the compiled program */
	int ninputs, noutputs;
	const doccc_tensor_desc *inputs;
	const doccc_tensor_desc *outputs;
	size_t workspace_size;    /* bytes allocated by create() */
	int weights_embedded;     /* 0: create() needs the weights file path */
	int (*create)(void **model, const char *weights_path);
	int (*run)(void *model, const void *const *inputs, void *const *outputs);
	void (*destroy)(void *model);
	const char *(*strerror)(int status);
	int (*set_num_threads)(void *model, int n);
} doccc_model_desc;

#endif
