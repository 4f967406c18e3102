/*
 * ops_elem.h - the op-table rows of the elem family (elementwise ops: unary math, binary arithmetic, comparisons, clamps, casts).
 *
 * LIB_OPS_ELEM rows: X(ENUM, "name", expansion, "doc"): a library-node kind
 * and its expansion function expand_<expansion> (ir/expand/).
 * ATEN_OPS_ELEM rows: X(ENUM, "overload", lowering, param, "schema"): an ATen
 * overload, its lowering function lower_<lowering> (ir/lower/), a parameter
 * for that lowering, and PyTorch's schema string.
 * Included by ops.h only.
 */
#define LIB_OPS_ELEM(X) \
	X(ELEMWISE, "elemwise", elemwise, "n-ary elementwise op with broadcasting (attr code)")

#define ATEN_OPS_ELEM(X) \
	X(TO_COPY, "_to_copy.default", cast, 0, "aten::_to_copy(Tensor self, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None, bool non_blocking=False, MemoryFormat? memory_format=None) -> Tensor") \
	X(TO_DTYPE, "to.dtype", cast, 0, "aten::to.dtype(Tensor(a) self, ScalarType dtype, bool non_blocking=False, bool copy=False, MemoryFormat? memory_format=None) -> Tensor(a)") \
	X(TO_DTYPE_LAYOUT, "to.dtype_layout", cast, 0, "aten::to.dtype_layout(Tensor(a) self, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None, bool non_blocking=False, bool copy=False, MemoryFormat? memory_format=None) -> Tensor(a)") \
	X(TYPE_AS, "type_as.default", cast, 1, "aten::type_as(Tensor self, Tensor other) -> Tensor") \
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
	X(POW_SCALAR, "pow.Tensor_Scalar", binary, T_POW, "aten::pow.Tensor_Scalar(Tensor self, Scalar exponent) -> Tensor")
