/*
 * ops.h - the op tables.
 *
 * LIB_OPS lists the library-node kinds of the IR: coarse operations that the
 * expansion pass turns into maps and tasklets, each with its expansion
 * function. ATEN_OPS lists every ATen overload the importer understands,
 * with PyTorch's own schema string (so argument order and defaults are
 * exactly torch's; a test compares them with torch 2.13) and the lowering
 * function that builds IR for it. A custom op of another namespace
 * (transformers::grouped_mm_fallback) is a row like the others, its
 * overload named with the namespace ("transformers.grouped_mm_fallback.default",
 * torch.ops.transformers...). Adding an op means one ATEN_OPS row, at
 * most one lowering (most reuse a family lowering such as unary/binary
 * elementwise) and, for a new library-node kind, one expansion.
 *
 * The rows live in one header per op family, and each family has one file
 * of lowerings, ir/lower/<family>.c, and one of expansions,
 * ir/expand/<family>.c, where it has library nodes:
 *   elem       elementwise ops, casts, clamps, where
 *   linalg     matrix products and convolution, einsum, cdist
 *   attention  scaled dot-product attention
 *   norm       batch, layer, group, instance and RMS norms, softmax, vector norms
 *   reduce     reductions, arg-reductions, scans, sorts, searches
 *   pool       pooling, resampling, grid sampling, sliding windows (col2im, im2col)
 *   index      gathers and scatters at data-dependent indices, embedding bags
 *   shape      views and data movement, fills and creation
 *   rnn        LSTM, GRU and Elman layers
 *   quant      affine quantize / dequantize (PT2E, torchao), dynamic quantization parameters
 *   sym        symbolic sizes and scalars, the export's assertions
 * (ops_unsupported.h lists the overloads doccc knows and does not compile.)
 * The in-place overloads (relu_, scatter_.value) and the aliases (concat,
 * clip, swapaxes) of these rows are not written by hand: test/gen_ops_table.py
 * derives them from torch's registry into ops_variants.h, each lowering
 * through its functional row, so that none is forgotten.
 * The X-macros are expanded into enums, name tables and dispatch tables in
 * ops.c and ir/passes/expand.c, with static asserts keeping them in step.
 * Nothing depends on the enums' numeric order: ops are compared by enum
 * constant and named by the tables.
 */
#ifndef DOCCC_OPS_H
#define DOCCC_OPS_H

#include "ops_elem.h"
#include "ops_linalg.h"
#include "ops_attention.h"
#include "ops_norm.h"
#include "ops_reduce.h"
#include "ops_pool.h"
#include "ops_index.h"
#include "ops_shape.h"
#include "ops_rnn.h"
#include "ops_quant.h"
#include "ops_sym.h"
#include "ops_unsupported.h"
#include "ops_variants.h"

#define LIB_OPS(X) LIB_OPS_ELEM(X) LIB_OPS_LINALG(X) LIB_OPS_ATTENTION(X) LIB_OPS_NORM(X) LIB_OPS_REDUCE(X) \
	LIB_OPS_POOL(X) LIB_OPS_INDEX(X) LIB_OPS_SHAPE(X) LIB_OPS_RNN(X) LIB_OPS_QUANT(X) LIB_OPS_SYM(X)
#define ATEN_OPS(X) ATEN_OPS_ELEM(X) ATEN_OPS_LINALG(X) ATEN_OPS_ATTENTION(X) ATEN_OPS_NORM(X) ATEN_OPS_REDUCE(X) \
	ATEN_OPS_POOL(X) ATEN_OPS_INDEX(X) ATEN_OPS_SHAPE(X) ATEN_OPS_RNN(X) ATEN_OPS_QUANT(X) ATEN_OPS_SYM(X)

typedef enum {
#define X(e, n, f, d) LIB_##e,
	LIB_OPS(X)
#undef X
	NLIBOPS
} LibOp;
const char *op_name(int op);
const char *op_doc(int op);

typedef enum {
#define X(e, t, l, p, s) AOP_##e,
	ATEN_OPS(X)
#undef X
	NATENOPS
} AtenOp;

/* A parsed schema argument. */
typedef enum {
	AT_TENSOR, AT_TENSOR_LIST, AT_INT, AT_INTS, AT_FLOAT, AT_BOOL, AT_SCALAR,
	AT_STR, AT_SCALAR_TYPE, AT_LAYOUT, AT_DEVICE, AT_MEMORY_FORMAT, AT_FLOATS, AT_OTHER
} ArgType;

typedef struct {
	const char *name;
	ArgType type;
	int optional;        /* T? */
	int mutated;         /* Tensor(a!) */
	char alias;          /* Tensor(a) or Tensor(a!): 'a', the alias set; else 0 */
	int kwonly;          /* after '*' */
	int listlen;         /* int[2] -> 2; 0 for unsized lists */
	int has_default;
	const char *dflt;    /* default text as in the schema ("[1, 1]", "None", "1") */
} SchemaArg;

struct Imp;
typedef struct {
	const char *target;      /* "conv2d.default"; other namespaces: "transformers.grouped_mm_fallback.default" */
	const char *schema;
	const char *base;        /* a derived row's functional row ("clamp.default" for clip_.default); else NULL */
	const char *lowering;    /* family lowering's name ("unary") */
	int (*lower)(struct Imp *m, const struct cJSON *node);
	int param;
	/* parsed at first use */
	SchemaArg args[16];
	int nargs;
	int nrets;
	char ret_alias;          /* a single return that aliases an argument: its set; else 0 */
	const SchemaArg *names;  /* the names lowerings read the arguments by: the base row's args */
} AtenInfo;

/* The table entry for an overload name ("conv2d.default"), or NULL. */
const AtenInfo *aten_find(const char *target);
const AtenInfo *aten_info(int aop);
/* The i-th derived row (ops_variants.h), NULL past the end, for --list-ops. */
const AtenInfo *aten_variant(int i);
/* Why an overload doccc knows is not compiled (UNSUPPORTED_OPS), or NULL. */
const char *aten_unsupported(const char *target);
/* The i-th UNSUPPORTED_OPS row (NULL past the end), for --list-ops. */
const char *aten_unsupported_row(int i, const char **reason);

#endif
