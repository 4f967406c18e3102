/*
 * ops.h - the op tables.
 *
 * LIB_OPS lists the library-node kinds of the IR: coarse operations that the
 * expansion pass turns into maps and tasklets. ATEN_OPS lists every ATen
 * overload the importer understands, with PyTorch's own schema string (so
 * argument order and defaults are exactly torch's; a test compares them with
 * torch 2.13) and the lowering that builds IR for it. Adding an op means one
 * ATEN_OPS line, at most one lowering (most reuse a family lowering such as
 * unary/binary elementwise) and, for a new library-node kind, one expansion.
 *
 * Both lists are X-macros expanded into enums, name tables and property
 * tables in ops.c; static asserts keep them in step.
 */
#ifndef DOCCC_OPS_H
#define DOCCC_OPS_H

/* X(ENUM, "name", "what it computes") */
#define LIB_OPS(X)                                                              \
	X(ELEMWISE, "elemwise", "n-ary elementwise op with broadcasting (attr code)") \
	X(CONV, "conv", "N-d convolution, stride/padding/dilation/groups, bias")      \
	X(GEMM, "gemm", "batched matrix product alpha*A@B + beta*bias")               \
	X(BATCHNORM, "batchnorm", "inference batch normalization over dim 1")         \
	X(POOL, "pool", "2-d max / average / adaptive-average pooling")               \
	X(REDUCE, "reduce", "sum / mean / max / min over dims")                       \
	X(SOFTMAX, "softmax", "softmax or log-softmax over one dim")                  \
	X(CAT, "cat", "concatenation along one dim")

typedef enum {
#define X(e, n, d) LIB_##e,
	LIB_OPS(X)
#undef X
	NLIBOPS
} LibOp;
const char *op_name(int op);
const char *op_doc(int op);

/* Lowering families (import.c). */
#define LOWERINGS(X) \
	X(unary) X(binary) X(view) X(noop) X(cast) X(conv) X(linear) X(gemm) \
	X(batchnorm) X(pool) X(reduce) X(softmax) X(cat) X(clamp) X(dropout)

typedef enum {
#define X(n) LW_##n,
	LOWERINGS(X)
#undef X
	NLOWERINGS
} Lowering;

/*
 * X(ENUM, "overload", lowering, param, "schema")
 * param: a TCode for elementwise families, a mode for others (see import.c).
 * The serialized target is "torch.ops.aten." + overload.
 */
#define ATEN_OPS(X)                                                                                                 \
	X(CONV1D, "conv1d.default", conv, 0, "aten::conv1d(Tensor input, Tensor weight, Tensor? bias=None, SymInt[1] stride=[1], SymInt[1] padding=[0], SymInt[1] dilation=[1], SymInt groups=1) -> Tensor") \
	X(CONV2D, "conv2d.default", conv, 0, "aten::conv2d(Tensor input, Tensor weight, Tensor? bias=None, SymInt[2] stride=[1, 1], SymInt[2] padding=[0, 0], SymInt[2] dilation=[1, 1], SymInt groups=1) -> Tensor") \
	X(CONVOLUTION, "convolution.default", conv, 1, "aten::convolution(Tensor input, Tensor weight, Tensor? bias, SymInt[] stride, SymInt[] padding, SymInt[] dilation, bool transposed, SymInt[] output_padding, SymInt groups) -> Tensor") \
	X(LINEAR, "linear.default", linear, 0, "aten::linear(Tensor input, Tensor weight, Tensor? bias=None) -> Tensor") \
	X(ADDMM, "addmm.default", gemm, 1, "aten::addmm(Tensor self, Tensor mat1, Tensor mat2, *, Scalar beta=1, Scalar alpha=1) -> Tensor") \
	X(MM, "mm.default", gemm, 0, "aten::mm(Tensor self, Tensor mat2) -> Tensor") \
	X(BMM, "bmm.default", gemm, 0, "aten::bmm(Tensor self, Tensor mat2) -> Tensor") \
	X(MATMUL, "matmul.default", gemm, 2, "aten::matmul(Tensor self, Tensor other) -> Tensor") \
	X(T, "t.default", view, VW_T, "aten::t(Tensor(a) self) -> Tensor(a)") \
	X(PERMUTE, "permute.default", view, VW_PERMUTE, "aten::permute(Tensor(a) self, int[] dims) -> Tensor(a)") \
	X(TRANSPOSE, "transpose.int", view, VW_TRANSPOSE, "aten::transpose.int(Tensor(a) self, int dim0, int dim1) -> Tensor(a)") \
	X(VIEW, "view.default", view, VW_RESHAPE, "aten::view(Tensor(a) self, SymInt[] size) -> Tensor(a)") \
	X(RESHAPE, "reshape.default", view, VW_RESHAPE, "aten::reshape(Tensor(a) self, SymInt[] shape) -> Tensor(a)") \
	X(UNSAFE_VIEW, "_unsafe_view.default", view, VW_RESHAPE, "aten::_unsafe_view(Tensor self, SymInt[] size) -> Tensor") \
	X(FLATTEN, "flatten.using_ints", view, VW_FLATTEN, "aten::flatten.using_ints(Tensor(a) self, int start_dim=0, int end_dim=-1) -> Tensor(a)") \
	X(UNFLATTEN, "unflatten.int", view, VW_UNFLATTEN, "aten::unflatten.int(Tensor(a) self, int dim, SymInt[] sizes) -> Tensor(a)") \
	X(UNSQUEEZE, "unsqueeze.default", view, VW_UNSQUEEZE, "aten::unsqueeze(Tensor(a) self, int dim) -> Tensor(a)") \
	X(SQUEEZE_DIM, "squeeze.dim", view, VW_SQUEEZE, "aten::squeeze.dim(Tensor(a) self, int dim) -> Tensor(a)") \
	X(SQUEEZE_DIMS, "squeeze.dims", view, VW_SQUEEZE, "aten::squeeze.dims(Tensor(a) self, int[] dim) -> Tensor(a)") \
	X(SQUEEZE, "squeeze.default", view, VW_SQUEEZE, "aten::squeeze(Tensor(a) self) -> Tensor(a)") \
	X(EXPAND, "expand.default", view, VW_EXPAND, "aten::expand(Tensor(a) self, SymInt[] size, *, bool implicit=False) -> Tensor(a)") \
	X(SELECT, "select.int", view, VW_SELECT, "aten::select.int(Tensor(a) self, int dim, SymInt index) -> Tensor(a)") \
	X(SLICE, "slice.Tensor", view, VW_SLICE, "aten::slice.Tensor(Tensor(a) self, int dim=0, SymInt? start=None, SymInt? end=None, SymInt step=1) -> Tensor(a)") \
	X(ALIAS, "alias.default", view, VW_ALIAS, "aten::alias(Tensor(a) self) -> Tensor(a)") \
	X(DETACH, "detach.default", view, VW_ALIAS, "aten::detach(Tensor(a) self) -> Tensor(a)") \
	X(CONTIGUOUS, "contiguous.default", view, VW_ALIAS, "aten::contiguous(Tensor(a) self, *, MemoryFormat memory_format=0) -> Tensor(a)") \
	X(CLONE, "clone.default", view, VW_ALIAS, "aten::clone(Tensor self, *, MemoryFormat? memory_format=None) -> Tensor") \
	X(LIFT_FRESH_COPY, "lift_fresh_copy.default", view, VW_ALIAS, "aten::lift_fresh_copy(Tensor self) -> Tensor") \
	X(DROPOUT, "dropout.default", dropout, 0, "aten::dropout(Tensor input, float p, bool train) -> Tensor") \
	X(TO_COPY, "_to_copy.default", cast, 0, "aten::_to_copy(Tensor self, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None, bool non_blocking=False, MemoryFormat? memory_format=None) -> Tensor") \
	X(TO_DTYPE, "to.dtype", cast, 0, "aten::to.dtype(Tensor(a) self, ScalarType dtype, bool non_blocking=False, bool copy=False, MemoryFormat? memory_format=None) -> Tensor(a)") \
	X(TO_DTYPE_LAYOUT, "to.dtype_layout", cast, 0, "aten::to.dtype_layout(Tensor(a) self, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None, bool non_blocking=False, bool copy=False, MemoryFormat? memory_format=None) -> Tensor(a)") \
	X(TYPE_AS, "type_as.default", cast, 1, "aten::type_as(Tensor self, Tensor other) -> Tensor") \
	X(ASSERT_META, "_assert_tensor_metadata.default", noop, 0, "aten::_assert_tensor_metadata(Tensor a, SymInt[]? size=None, SymInt[]? stride=None, ScalarType? dtype=None, *, Device? device=None, Layout? layout=None) -> ()") \
	X(BATCH_NORM, "batch_norm.default", batchnorm, 0, "aten::batch_norm(Tensor input, Tensor? weight, Tensor? bias, Tensor? running_mean, Tensor? running_var, bool training, float momentum, float eps, bool cudnn_enabled) -> Tensor") \
	X(BN_NO_TRAINING, "_native_batch_norm_legit_no_training.default", batchnorm, 1, "aten::_native_batch_norm_legit_no_training(Tensor input, Tensor? weight, Tensor? bias, Tensor running_mean, Tensor running_var, float momentum, float eps) -> (Tensor, Tensor, Tensor)") \
	X(RELU, "relu.default", unary, T_RELU, "aten::relu(Tensor self) -> Tensor") \
	X(RELU_, "relu_.default", unary, T_RELU, "aten::relu_(Tensor(a!) self) -> Tensor(a!)") \
	X(SIGMOID, "sigmoid.default", unary, T_SIGMOID, "aten::sigmoid(Tensor self) -> Tensor") \
	X(TANH, "tanh.default", unary, T_TANH, "aten::tanh(Tensor self) -> Tensor") \
	X(EXP, "exp.default", unary, T_EXP, "aten::exp(Tensor self) -> Tensor") \
	X(LOG, "log.default", unary, T_LOG, "aten::log(Tensor self) -> Tensor") \
	X(NEG, "neg.default", unary, T_NEG, "aten::neg(Tensor self) -> Tensor") \
	X(SQRT, "sqrt.default", unary, T_SQRT, "aten::sqrt(Tensor self) -> Tensor") \
	X(RSQRT, "rsqrt.default", unary, T_RSQRT, "aten::rsqrt(Tensor self) -> Tensor") \
	X(ABS, "abs.default", unary, T_ABS, "aten::abs(Tensor self) -> Tensor") \
	X(ERF, "erf.default", unary, T_ERF, "aten::erf(Tensor self) -> Tensor") \
	X(GELU, "gelu.default", unary, T_GELU, "aten::gelu(Tensor self, *, str approximate=\"none\") -> Tensor") \
	X(SILU, "silu.default", unary, T_SILU, "aten::silu(Tensor self) -> Tensor") \
	X(SILU_, "silu_.default", unary, T_SILU, "aten::silu_(Tensor(a!) self) -> Tensor(a!)") \
	X(HARDSIGMOID, "hardsigmoid.default", unary, T_HARDSIGMOID, "aten::hardsigmoid(Tensor self) -> Tensor") \
	X(HARDSWISH, "hardswish.default", unary, T_HARDSWISH, "aten::hardswish(Tensor self) -> Tensor") \
	X(HARDTANH, "hardtanh.default", clamp, 0, "aten::hardtanh(Tensor self, Scalar min_val=-1, Scalar max_val=1) -> Tensor") \
	X(HARDTANH_, "hardtanh_.default", clamp, 0, "aten::hardtanh_(Tensor(a!) self, Scalar min_val=-1, Scalar max_val=1) -> Tensor(a!)") \
	X(RELU6, "relu6.default", clamp, 1, "aten::relu6(Tensor self) -> Tensor") \
	X(CLAMP, "clamp.default", clamp, 2, "aten::clamp(Tensor self, Scalar? min=None, Scalar? max=None) -> Tensor") \
	X(CLAMP_MIN, "clamp_min.default", clamp, 3, "aten::clamp_min(Tensor self, Scalar min) -> Tensor") \
	X(CLAMP_MAX, "clamp_max.default", clamp, 4, "aten::clamp_max(Tensor self, Scalar max) -> Tensor") \
	X(ADD, "add.Tensor", binary, T_ADD, "aten::add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor") \
	X(ADD_, "add_.Tensor", binary, T_ADD, "aten::add_.Tensor(Tensor(a!) self, Tensor other, *, Scalar alpha=1) -> Tensor(a!)") \
	X(ADD_SCALAR, "add.Scalar", binary, T_ADD, "aten::add.Scalar(Tensor self, Scalar other, Scalar alpha=1) -> Tensor") \
	X(SUB, "sub.Tensor", binary, T_SUB, "aten::sub.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor") \
	X(SUB_SCALAR, "sub.Scalar", binary, T_SUB, "aten::sub.Scalar(Tensor self, Scalar other, Scalar alpha=1) -> Tensor") \
	X(RSUB_SCALAR, "rsub.Scalar", binary, T_SUB, "aten::rsub.Scalar(Tensor self, Scalar other, Scalar alpha=1) -> Tensor") \
	X(MUL, "mul.Tensor", binary, T_MUL, "aten::mul.Tensor(Tensor self, Tensor other) -> Tensor") \
	X(MUL_, "mul_.Tensor", binary, T_MUL, "aten::mul_.Tensor(Tensor(a!) self, Tensor other) -> Tensor(a!)") \
	X(MUL_SCALAR, "mul.Scalar", binary, T_MUL, "aten::mul.Scalar(Tensor self, Scalar other) -> Tensor") \
	X(DIV, "div.Tensor", binary, T_DIV, "aten::div.Tensor(Tensor self, Tensor other) -> Tensor") \
	X(DIV_SCALAR, "div.Scalar", binary, T_DIV, "aten::div.Scalar(Tensor self, Scalar other) -> Tensor") \
	X(MAXIMUM, "maximum.default", binary, T_MAX, "aten::maximum(Tensor self, Tensor other) -> Tensor") \
	X(MINIMUM, "minimum.default", binary, T_MIN, "aten::minimum(Tensor self, Tensor other) -> Tensor") \
	X(POW_SCALAR, "pow.Tensor_Scalar", binary, T_POW, "aten::pow.Tensor_Scalar(Tensor self, Scalar exponent) -> Tensor") \
	X(MAX_POOL2D, "max_pool2d.default", pool, PL_MAX, "aten::max_pool2d(Tensor self, int[2] kernel_size, int[2] stride=[], int[2] padding=0, int[2] dilation=1, bool ceil_mode=False) -> Tensor") \
	X(MAX_POOL2D_IDX, "max_pool2d_with_indices.default", pool, PL_MAX, "aten::max_pool2d_with_indices(Tensor self, int[2] kernel_size, int[2] stride=[], int[2] padding=0, int[2] dilation=1, bool ceil_mode=False) -> (Tensor, Tensor)") \
	X(AVG_POOL2D, "avg_pool2d.default", pool, PL_AVG, "aten::avg_pool2d(Tensor self, int[2] kernel_size, int[2] stride=[], int[2] padding=0, bool ceil_mode=False, bool count_include_pad=True, int? divisor_override=None) -> Tensor") \
	X(ADAPTIVE_AVG_POOL2D, "adaptive_avg_pool2d.default", pool, PL_ADAPTIVE, "aten::adaptive_avg_pool2d(Tensor self, SymInt[2] output_size) -> Tensor") \
	X(ADAPTIVE_AVG_POOL2D_, "_adaptive_avg_pool2d.default", pool, PL_ADAPTIVE, "aten::_adaptive_avg_pool2d(Tensor self, SymInt[2] output_size) -> Tensor") \
	X(MEAN_DIM, "mean.dim", reduce, RD_MEAN, "aten::mean.dim(Tensor self, int[1]? dim, bool keepdim=False, *, ScalarType? dtype=None) -> Tensor") \
	X(MEAN, "mean.default", reduce, RD_MEAN, "aten::mean(Tensor self, *, ScalarType? dtype=None) -> Tensor") \
	X(SUM_DIM, "sum.dim_IntList", reduce, RD_SUM, "aten::sum.dim_IntList(Tensor self, int[1]? dim, bool keepdim=False, *, ScalarType? dtype=None) -> Tensor") \
	X(SUM, "sum.default", reduce, RD_SUM, "aten::sum(Tensor self, *, ScalarType? dtype=None) -> Tensor") \
	X(AMAX, "amax.default", reduce, RD_MAX, "aten::amax(Tensor self, int[1] dim=[], bool keepdim=False) -> Tensor") \
	X(AMIN, "amin.default", reduce, RD_MIN, "aten::amin(Tensor self, int[1] dim=[], bool keepdim=False) -> Tensor") \
	X(SOFTMAX, "softmax.int", softmax, 0, "aten::softmax.int(Tensor self, int dim, ScalarType? dtype=None) -> Tensor") \
	X(SOFTMAX_, "_softmax.default", softmax, 0, "aten::_softmax(Tensor self, int dim, bool half_to_float) -> Tensor") \
	X(LOG_SOFTMAX, "log_softmax.int", softmax, 1, "aten::log_softmax.int(Tensor self, int dim, ScalarType? dtype=None) -> Tensor") \
	X(LOG_SOFTMAX_, "_log_softmax.default", softmax, 1, "aten::_log_softmax(Tensor self, int dim, bool half_to_float) -> Tensor") \
	X(CAT, "cat.default", cat, 0, "aten::cat(Tensor[] tensors, int dim=0) -> Tensor")

/* view kinds, pool modes, reduction modes (the param column) */
enum { VW_T, VW_PERMUTE, VW_TRANSPOSE, VW_RESHAPE, VW_FLATTEN, VW_UNFLATTEN, VW_UNSQUEEZE,
       VW_SQUEEZE, VW_EXPAND, VW_SELECT, VW_SLICE, VW_ALIAS };
enum { PL_MAX, PL_AVG, PL_ADAPTIVE };
enum { RD_SUM, RD_MEAN, RD_MAX, RD_MIN };

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
	int kwonly;          /* after '*' */
	int listlen;         /* int[2] -> 2; 0 for unsized lists */
	int has_default;
	const char *dflt;    /* default text as in the schema ("[1, 1]", "None", "1") */
} SchemaArg;

typedef struct {
	const char *target;      /* "conv2d.default" */
	const char *schema;
	Lowering lowering;
	int param;
	/* parsed at first use */
	SchemaArg args[16];
	int nargs;
	int nrets;
} AtenInfo;

/* The table entry for an overload name ("conv2d.default"), or NULL. */
const AtenInfo *aten_find(const char *target);
const AtenInfo *aten_info(int aop);
const char *lowering_name(int lw);

#endif
