/*
 * emit_h.c - the public header NAME.h of a generated library.
 *
 * Pure C, usable from C++ (extern "C"), with an include guard, a comment
 * saying how it was made, the generic descriptor block (guarded by its own
 * macro so several model headers can be included together), shape and
 * dtype macros per input and output, and the prototypes of the API. All
 * symbols start with the model name; macros with its upper-case form.
 */
#include <ctype.h>
#include <string.h>

#include "backend.h"

const char *emit_dtype_macro(Dtype d)
{
	static const char *const m[NDTYPES] = {
		[DT_F32] = "DOCCC_F32", [DT_F64] = "DOCCC_F64", [DT_F16] = "DOCCC_F16", [DT_BF16] = "DOCCC_BF16",
		[DT_I64] = "DOCCC_I64", [DT_I32] = "DOCCC_I32", [DT_I16] = "DOCCC_I16", [DT_I8] = "DOCCC_I8",
		[DT_U8] = "DOCCC_U8", [DT_BOOL] = "DOCCC_BOOL",
	};
	return m[d];
}

static const char *const ctypes[NDTYPES] = {
	[DT_F32] = "float", [DT_F64] = "double", [DT_F16] = "uint16_t", [DT_BF16] = "uint16_t",
	[DT_I64] = "int64_t", [DT_I32] = "int32_t", [DT_I16] = "int16_t", [DT_I8] = "int8_t",
	[DT_U8] = "uint8_t", [DT_BOOL] = "doccc_bool",
};

/* The descriptor block, the same as backends/doccc_model.h's (kept in step
 * by test_golden.py::test_descriptor_block_matches_public_header). */
static const char desc_block[] =
	"#ifndef DOCCC_MODEL_DESC_H\n"
	"#define DOCCC_MODEL_DESC_H\n"
	"#define DOCCC_ABI_VERSION 6\n"
	"#ifdef __cplusplus\ntypedef bool doccc_bool;\n#else\ntypedef _Bool doccc_bool;\n#endif\n"
	"enum {\n\tDOCCC_F32 = 0, DOCCC_F64 = 1, DOCCC_F16 = 2, DOCCC_BF16 = 3,\n"
	"\tDOCCC_I64 = 4, DOCCC_I32 = 5, DOCCC_I16 = 6, DOCCC_I8 = 7,\n\tDOCCC_U8 = 8, DOCCC_BOOL = 9\n};\n"
	"enum {\n\tDOCCC_OK = 0,\n\tDOCCC_ERR_NOMEM = 1,\n\tDOCCC_ERR_WEIGHTS = 2,\n\tDOCCC_ERR_ARG = 3,\n\tDOCCC_ERR_THREADS = 4,\n\tDOCCC_ERR_INDEX = 5,\n\tDOCCC_ERR_ZERODIV = 6,\n\tDOCCC_ERR_DEVICE = 7,\n\tDOCCC_ERR_ASSERT = 8,\n\tDOCCC_ERR_SHAPE = 9,\n\tDOCCC_ERR_CPU = 10\n};\n"
	"enum { DOCCC_LOG_NOTE = 0, DOCCC_LOG_WARNING = 1 };\n"
	"enum { DOCCC_COPY_TO_DEVICE = 1, DOCCC_COPY_TO_HOST = 2 };\n"
	"typedef void (*doccc_log_fn)(void *user, int level, const char *msg);\n"
	"typedef struct {\n\tconst char *name;\n\tint dtype;\n\tint rank;\n\tconst int64_t *shape;\n\tint64_t numel;\n\tsize_t nbytes;\n} doccc_tensor_desc;\n"
	"typedef struct {\n\tconst char *name;\n\tint64_t min, max;\n} doccc_dim_desc;\n"
	"typedef struct {\n\tconst char *name;\n\tint dtype;\n\tint rank;\n\tconst int64_t *shape;\n\tconst int64_t *strides;\n} doccc_value_desc;\n"
	"typedef struct {\n\tconst char *name;\n\tdouble flops;\n\tint nvalues;\n\tconst doccc_value_desc *values;\n} doccc_node_desc;\n"
	"typedef void (*doccc_node_hook)(void *user, int node, int end, const void *const *values);\n"
	"typedef struct {\n\tint abi_version;\n\tconst char *name;\n\tconst char *target;\n\tconst char *category;\n"
	"\tconst char *doccc_version;\n\tconst char *input_hash;\n\tint ninputs, noutputs;\n"
	"\tconst doccc_tensor_desc *inputs;\n\tconst doccc_tensor_desc *outputs;\n\tsize_t workspace_size;\n"
	"\tint weights_embedded;\n\tint (*create)(void **model, const char *weights_path);\n"
	"\tint (*run)(void *model, const void *const *inputs, void *const *outputs);\n\tvoid (*destroy)(void *model);\n"
	"\tconst char *(*strerror)(int status);\n\tint (*set_num_threads)(void *model, int n);\n"
	"\tint device_resident;\n\tconst char *device_backend;\n\tint simulated;\n"
	"\tint (*run_host)(void *model, const void *const *inputs, void *const *outputs);\n"
	"\tint (*set_stream)(void *model, void *stream);\n\tint (*sync)(void *model);\n"
	"\tconst char *(*last_error)(const void *model);\n\tvoid (*set_log)(void *model, doccc_log_fn fn, void *user);\n"
	"\tint (*device_alloc)(void **ptr, size_t nbytes);\n\tint (*device_free)(void *ptr);\n"
	"\tint (*device_copy)(void *dst, const void *src, size_t nbytes, int direction);\n"
	"\tconst char *march;\n\tconst char *options;\n\tsize_t weights_size;\n\tconst char *weights_sha256;\n\tconst char *info;\n"
	"\tint ndims;\n\tconst doccc_dim_desc *dims;\n\tconst char *const *input_dims;\n\tconst char *const *output_dims;\n"
	"\tint (*set_dims)(void *model, const int64_t *dims);\n"
	"\tint (*infer_dims)(const int64_t *const *input_shapes, int64_t *dims, char *msg, size_t msglen);\n"
	"\tint (*output_shape)(const int64_t *dims, int output, int64_t *shape);\n"
	"\tint nstates;\n\tconst doccc_tensor_desc *states;\n\tconst int *state_inplace;\n\tint (*reset)(void *model);\n"
	"\tint (*get_state)(const void *model, int state, void *dst, size_t nbytes);\n"
	"\tint (*set_state)(void *model, int state, const void *src, size_t nbytes);\n"
	"\tint (*copy_state)(void *dst_model, const void *src_model);\n\tconst int *input_written;\n"
	"\tint nnodes;\n\tconst doccc_node_desc *nodes;\n\tint (*set_hook)(void *model, doccc_node_hook hook, void *user);\n"
	"} doccc_model_desc;\n"
	"#endif\n";

const char *emit_desc_block(void)
{
	return desc_block;
}

void emit_h(Sdfg *g, const Target *t, const BuildArgs *a, Buf *b)
{
	const char *nm = g->name;
	char *up = arena_strdup(g->arena, nm);
	for (char *p = up; *p; p++)
		*p = (char)toupper((unsigned char)*p);
	buf_printf(b, "/*\n * %s.h - generated by doccc %s; do not edit.\n * target %s, category %s\n * options: %s\n"
	              " * input sha256 %s\n *\n * %s_create() loads the weights and allocates the workspace (%lld bytes);\n"
	              " * %s_run() takes one pointer per input and output, in graph order; separate\n"
	              " * handles run concurrently from separate threads. Functions return DOCCC_OK\n"
	              " * or a DOCCC_ERR_* status that %s_strerror() describes.\n */\n",
	           nm, DOCCC_VERSION, t->name, t->category, emit_comment(g->arena, a->cmdline), g->hash, nm, (long long)g->arena_size,
	           nm, nm);
	int dev = TARGET_IS_GPU(t);
	if (dev)
		buf_printf(b, "/*\n * Device-resident (%s%s, %s): %s_create() uploads the weights and allocates\n"
		              " * the workspace on the GPU; %s_run() takes DEVICE pointers (cudaMalloc/hipMalloc,\n"
		              " * or a GPU tensor's data pointer) and leaves the outputs there, synchronous\n"
		              " * unless %s_set_stream() gave it a stream (then %s_sync() waits and returns\n"
		              " * the run's status). %s_run_host() takes host pointers and copies both ways\n"
		              " * on every call, warning once per instance through the log hook\n"
		              " * (%s_set_log). Runtime failures and pointers on the wrong side return\n"
		              " * DOCCC_ERR_DEVICE; %s_last_error() has the message.\n */\n",
		           backend_of(t)->runtime, t->simulate ? ", simulated on the CPU" : "", emit_comment(g->arena, t->march), nm, nm, nm,
		           nm, nm, nm, nm);
	else if (t->fallback)
		buf_printf(b, "/*\n * Built for the host although the target is %s: some op has no GPU\n"
		              " * expansion (doccc's notes named them). %s_run() takes host pointers and\n"
		              " * rejects device memory with DOCCC_ERR_DEVICE.\n */\n", t->name, nm);
	buf_printf(b, "#ifndef %s_H\n#define %s_H\n\n#include <stddef.h>\n#include <stdint.h>\n\n", up, up);
	buf_puts(b, "#ifdef __cplusplus\nextern \"C\" {\n#endif\n\n");
	buf_puts(b, desc_block);
	buf_printf(b, "\n#define %s_NUM_INPUTS %d\n#define %s_NUM_OUTPUTS %d\n", up, g->ninputs, up, g->noutputs);
	buf_printf(b, "#define %s_DEVICE_RESIDENT %d\n#define %s_DEVICE_BACKEND \"%s\"\n", up, dev, up,
	           dev ? backend_of(t)->device : "");
	for (int io = 0; io < 2; io++) {
		int n = io ? g->noutputs : g->ninputs;
		int *ids = io ? g->outputs : g->inputs;
		const char *w = io ? "OUTPUT" : "INPUT";
		for (int i = 0; i < n; i++) {
			Container *c = sdfg_c(g, ids[i]);
			buf_printf(b, "#define %s_%s%d_NAME ", up, w, i);
			buf_cstr(b, c->origin && *c->origin ? c->origin : c->name);
			buf_printf(b, "\n#define %s_%s%d_DTYPE %s\n#define %s_%s%d_RANK %d\n#define %s_%s%d_SHAPE {", up, w, i,
			           emit_dtype_macro(c->dt), up, w, i, c->rank, up, w, i);
			Buf dims = {0};
			for (int d = 0; d < c->rank; d++) {
				int64_t v = -1; /* a run-time dim: its expression is in _DIMS */
				ex_isint(c->shape[d], &v);
				buf_printf(b, "%s%lld", d ? ", " : "", (long long)v);
				buf_puts(&dims, d ? "," : "");
				ex_print(&dims, g, c->shape[d]);
			}
			buf_printf(b, "}\n#define %s_%s%d_NUMEL %lld\n", up, w, i, (long long)sdfg_numel(g, ids[i]));
			if (!io && c->written) /* the program writes it in place: run leaves the new value there */
				buf_printf(b, "#define %s_INPUT%d_WRITTEN 1\n", up, i);
			if (g->ndims)
				buf_printf(b, "#define %s_%s%d_DIMS \"%s\"\n", up, w, i, dims.s ? dims.s : "");
			buf_free(&dims);
		}
	}
	if (g->nstates) {
		buf_printf(b, "\n/* State: buffers the model updates across runs (a KV cache), kept by\n"
		              " * each instance: %s_create() sets them to their exported values and\n"
		              " * every run reads and updates them. */\n#define %s_NUM_STATES %d\n", nm, up, g->nstates);
		for (int i = 0; i < g->nstates; i++) {
			Container *c = sdfg_c(g, g->states[i]);
			buf_printf(b, "#define %s_STATE%d_NAME ", up, i);
			buf_cstr(b, c->origin && *c->origin ? c->origin : c->name);
			buf_printf(b, "\n#define %s_STATE%d_DTYPE %s\n#define %s_STATE%d_RANK %d\n#define %s_STATE%d_SHAPE {", up, i,
			           emit_dtype_macro(c->dt), up, i, c->rank, up, i);
			for (int d = 0; d < c->rank; d++) {
				int64_t v = -1;
				ex_isint(c->shape[d], &v);
				buf_printf(b, "%s%lld", d ? ", " : "", (long long)v);
			}
			int64_t n = sdfg_numel(g, g->states[i]);
			buf_printf(b, "}\n#define %s_STATE%d_NUMEL %lld\n#define %s_STATE%d_NBYTES %lld\n", up, i, (long long)n, up, i,
			           (long long)(n * dtype_info[c->dt].size));
		}
	}
	if (g->ndims) {
		buf_printf(b, "\n/* Run-time dims, in the order of the dims arrays below: each the\n"
		              " * export's symbol with its range (MAX -1: no bound). */\n#define %s_NUM_DIMS %d\n", up, g->ndims);
		for (int k = 0; k < g->ndims; k++) {
			const Symbol *y = &g->syms[g->dims[k]];
			buf_printf(b, "#define %s_DIM%d_NAME \"%s\"\n#define %s_DIM%d_MIN %lld\n#define %s_DIM%d_MAX %lld\n#define %s_DIM_%s %d\n", up, k,
			           y->name, up, k, (long long)y->lo, up, k, (long long)(y->hi < INT32_MAX ? y->hi : -1), up, y->name, k);
		}
	}
	buf_printf(b, "\ntypedef struct %s %s_t;\n\n", nm, nm);
	buf_printf(b, "int %s_create(%s_t **model);\n", nm, nm);
	buf_printf(b, "int %s_create_from(%s_t **model, const char *weights_path);\n", nm, nm);
	for (int k = 0; k < 1 + dev; k++) {
		buf_printf(b, "int %s_run%s(%s_t *model", nm, k ? "_host" : "", nm);
		for (int i = 0; i < g->ninputs; i++)
			buf_printf(b, ", %s%s *in%d", emit_readonly(sdfg_c(g, g->inputs[i])) ? "const " : "", ctypes[sdfg_c(g, g->inputs[i])->dt],
			           i);
		for (int i = 0; i < g->noutputs; i++)
			buf_printf(b, ", %s *out%d", ctypes[sdfg_c(g, g->outputs[i])->dt], i);
		buf_puts(b, ");\n");
	}
	if (g->ndims) {
		buf_printf(b, "/* The dims of the next runs (NAME_NUM_DIMS values): DOCCC_ERR_SHAPE if\n"
		              " * outside the ranges or the export's guards; grows the workspace if\n"
		              " * these dims need more than it has. %s_run fails until they are set. */\n", nm);
		buf_printf(b, "int %s_set_dims(%s_t *model, const int64_t *dims);\n", nm, nm);
		buf_printf(b, "int %s_run_dims(%s_t *model, const int64_t *dims", nm, nm);
		for (int i = 0; i < g->ninputs; i++)
			buf_printf(b, ", %s%s *in%d", emit_readonly(sdfg_c(g, g->inputs[i])) ? "const " : "", ctypes[sdfg_c(g, g->inputs[i])->dt],
			           i);
		for (int i = 0; i < g->noutputs; i++)
			buf_printf(b, ", %s *out%d", ctypes[sdfg_c(g, g->outputs[i])->dt], i);
		buf_puts(b, ");\n");
		buf_printf(b, "/* The dims from the inputs' shapes (shapes[i] has input i's rank sizes);\n"
		              " * DOCCC_ERR_SHAPE with the reason in msg if they disagree. */\n");
		buf_printf(b, "int %s_infer_dims(const int64_t *const *shapes, int64_t *dims, char *msg, size_t msglen);\n", nm);
		buf_printf(b, "int %s_input_shape(const int64_t *dims, int input, int64_t *shape);\n", nm);
		buf_printf(b, "int %s_output_shape(const int64_t *dims, int output, int64_t *shape);\n", nm);
	}
	if (dev) {
		buf_printf(b, "int %s_set_stream(%s_t *model, void *stream);\n", nm, nm);
		buf_printf(b, "int %s_sync(%s_t *model);\n", nm, nm);
		buf_printf(b, "void %s_set_log(%s_t *model, doccc_log_fn fn, void *user);\n", nm, nm);
	}
	if (g->nstates) {
		buf_printf(b, "/* State (NAME_NUM_STATES): back to the exported values; state i to or\n"
		              " * from host memory of exactly NAME_STATEi_NBYTES bytes (save and restore\n"
		              " * a conversation; DOCCC_ERR_ARG for another size); every state of src\n"
		              " * into dst, another instance of this library (beam search, a forked\n"
		              " * prompt). Not concurrently with a run of the same instance. */\n");
		buf_printf(b, "int %s_reset(%s_t *model);\n", nm, nm);
		buf_printf(b, "int %s_get_state(const %s_t *model, int state, void *dst, size_t nbytes);\n", nm, nm);
		buf_printf(b, "int %s_set_state(%s_t *model, int state, const void *src, size_t nbytes);\n", nm, nm);
		buf_printf(b, "int %s_copy_state(%s_t *dst, const %s_t *src);\n", nm, nm, nm);
	}
	buf_printf(b, "const char *%s_last_error(const %s_t *model);\n", nm, nm);
	buf_printf(b, "void %s_destroy(%s_t *model);\n", nm, nm);
	buf_printf(b, "const char *%s_strerror(int status);\n", nm);
	buf_printf(b, "int %s_set_num_threads(%s_t *model, int n);\n", nm, nm);
	buf_printf(b, "size_t %s_workspace_size(void);\n", nm);
	buf_printf(b, "extern const doccc_model_desc %s_desc;\n", nm);
	buf_puts(b, "\n#ifdef __cplusplus\n}\n#endif\n\n#endif\n");
}
