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
 * only grows at its end; abi_version says which fields exist (2: the
 * device fields after set_num_threads; 3: march, options, the weights'
 * size and sha256, and the info text; 4: the run-time dims; 5: the state; 6: the
 * fused nodes and their hook). A loader reads a field only when
 * abi_version says it is there, so libraries of abi 2 still load.
 *
 * The info text (abi 3) is the same description as one JSON object,
 * {"doccc_info": 1, "name": ..., "inputs": [...], ...}, and the library
 * also carries it in an ELF section of its own, .doccc_info, so that
 * `doccc inspect` reads it from the file without loading the library
 * (loading would run its constructors, and a cuda library needs
 * libcudart to load at all). "doccc_info" numbers the text's version:
 * later versions only add keys.
 *
 * Device-resident libraries (cuda, rocm): run takes device pointers and
 * leaves the outputs on the device; run_host takes host pointers and copies
 * (warning once per instance through the log hook); device_alloc,
 * device_free and device_copy reach the library's own runtime, so a loader
 * without CUDA or HIP of its own (doccc run --device, tests) can still
 * hand it device memory. Host libraries set device_resident 0 and
 * run_host = run, and leave the device-only entries NULL.
 */
#ifndef DOCCC_MODEL_DESC_H
#define DOCCC_MODEL_DESC_H

#include <stddef.h>
#include <stdint.h>

#define DOCCC_ABI_VERSION 6

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
	DOCCC_ERR_ZERODIV = 6,    /* run: an integer division or remainder by zero */
	DOCCC_ERR_DEVICE = 7,     /* GPU runtime failure, or a pointer on the wrong side
	                           * (host memory to a device run, device memory to a
	                           * host library): NAME_last_error() says which */
	DOCCC_ERR_ASSERT = 8,     /* run: a run-time assertion of the graph failed
	                           * (torch._assert_async): NAME_last_error() has its message */
	DOCCC_ERR_SHAPE = 9,      /* set_dims / infer_dims: the dims are outside the export's
	                           * ranges or break its guards, the inputs' sizes disagree, or
	                           * run before any dims were set: NAME_last_error() says which */
	DOCCC_ERR_CPU = 10        /* create: the library was compiled for instruction set
	                           * extensions this CPU lacks (-march): NAME_last_error(NULL)
	                           * names them */
};

/* Log levels of the log hook, and directions of device_copy. */
enum { DOCCC_LOG_NOTE = 0, DOCCC_LOG_WARNING = 1 };
enum { DOCCC_COPY_TO_DEVICE = 1, DOCCC_COPY_TO_HOST = 2 };

/* The log hook: one message, without a newline. The default writes it as
 * one line to stderr; NAME_set_log replaces it per instance. */
typedef void (*doccc_log_fn)(void *user, int level, const char *msg);

typedef struct {
	const char *name;         /* torch name of the input or output */
	int dtype;                /* DOCCC_* */
	int rank;
	const int64_t *shape;     /* rank entries */
	int64_t numel;
	size_t nbytes;
} doccc_tensor_desc;

/* A run-time dim (abi 4): the export's symbol and its range (max -1: no bound). */
typedef struct {
	const char *name;
	int64_t min, max;
} doccc_dim_desc;

/* A value a fused node leaves in memory (abi 6): the output of the torch
 * node called name, at element strides of the library's layout (a dump
 * gathers the tensor in torch's order from them). */
typedef struct {
	const char *name;
	int dtype;
	int rank;
	const int64_t *shape;
	const int64_t *strides;
} doccc_value_desc;

/* A fused node (abi 6): one step of a run, as profiles and traces show it. */
typedef struct {
	const char *name;         /* the torch nodes it covers, joined by '+' ("conv2d+relu") */
	double flops;             /* a contraction's multiply-adds x 2 per run; 0 for other steps */
	int nvalues;              /* the values it leaves for later steps (a library built with */
	const doccc_value_desc *values;  /* values: doccc --values), else 0 and NULL */
} doccc_node_desc;

/* The node hook (abi 6): called on the running thread before (end 0,
 * values NULL) and after (end 1) every fused node of a run. After it, in a
 * library built with values, values[k] points at the node's k-th value,
 * nodes[node].values[k], readable until the hook returns. */
typedef void (*doccc_node_hook)(void *user, int node, int end, const void *const *values);

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
	/* abi_version >= 2 */
	int device_resident;      /* 1: run takes device pointers */
	const char *device_backend; /* "cuda", "rocm", or NULL (runs on the host) */
	int simulated;            /* 1: --simulate build (device code run on the CPU) */
	int (*run_host)(void *model, const void *const *inputs, void *const *outputs);
	int (*set_stream)(void *model, void *stream);   /* NULL on host libraries */
	int (*sync)(void *model);                       /* NULL on host libraries */
	const char *(*last_error)(const void *model);   /* model NULL: the last create */
	void (*set_log)(void *model, doccc_log_fn fn, void *user);
	int (*device_alloc)(void **ptr, size_t nbytes); /* NULL on host libraries */
	int (*device_free)(void *ptr);
	int (*device_copy)(void *dst, const void *src, size_t nbytes, int direction);
	/* abi_version >= 3 */
	const char *march;        /* clang -march value, or the GPU architecture (sm_90, gfx90a) */
	const char *options;      /* the settings that built it ("target=openmp category=desktop ...") */
	size_t weights_size;      /* bytes of weights, embedded or in NAME.weights */
	const char *weights_sha256; /* sha256 of the weights (hex): what create() checks in NAME.weights */
	const char *info;         /* this description as JSON text (the .doccc_info section) */
	/* abi_version >= 4: run-time dims. ndims 0: every size is fixed. Else a
	 * tensor's shape holds -1 (numel -1, nbytes 0) where a size depends on
	 * the dims; input_dims[i] and output_dims[i] give every size as a C
	 * expression of the dims' names ("s77,8", "2*s77"). */
	int ndims;
	const doccc_dim_desc *dims;
	const char *const *input_dims;
	const char *const *output_dims;
	int (*set_dims)(void *model, const int64_t *dims);    /* NULL when ndims is 0 */
	int (*infer_dims)(const int64_t *const *input_shapes, int64_t *dims, char *msg, size_t msglen);
	int (*output_shape)(const int64_t *dims, int output, int64_t *shape);
	/* abi_version >= 5: state, the buffers the model updates across runs
	 * (a KV cache). nstates 0: every run is independent. create() sets each
	 * state to its exported value and runs keep it; reset() sets them again;
	 * get_state / set_state copy state i from or to host memory of exactly
	 * states[i].nbytes (else DOCCC_ERR_ARG); copy_state copies every state
	 * of one instance into another of the same library. state_inplace[i]
	 * is 1 where a run writes only what changes (the rows a step adds),
	 * 0 where it writes the whole state. */
	int nstates;
	const doccc_tensor_desc *states;
	const int *state_inplace;
	int (*reset)(void *model);
	int (*get_state)(const void *model, int state, void *dst, size_t nbytes);
	int (*set_state)(void *model, int state, const void *src, size_t nbytes);
	int (*copy_state)(void *dst_model, const void *src_model);
	/* input_written[i] is 1 where the program writes input i in place
	 * (user_input_mutation): run leaves its new value in the caller's
	 * buffer, as eager does; NULL when it writes none. */
	const int *input_written;
	/* abi_version >= 6: the fused nodes in the order a run runs them, for
	 * profiles, traces and value dumps (doccc run --profile, --trace,
	 * --dump-values). A library built without --profile or --values has
	 * nnodes 0, nodes and set_hook NULL, and costs nothing. set_hook
	 * installs the hook on one instance (hook NULL: removes it). */
	int nnodes;
	const doccc_node_desc *nodes;
	int (*set_hook)(void *model, doccc_node_hook hook, void *user);
} doccc_model_desc;

#endif
