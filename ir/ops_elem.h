/*
 * ops_elem.h - the op-table rows of the elem family: elementwise ops (unary
 * math and activations, binary arithmetic, comparisons, logical and
 * bitwise ops, where/masked_fill, clamps, casts, lerp, glu, nan_to_num,
 * round.decimals, special functions (gamma family, Bessel I0/I1, zeta,
 * erfcx, ndtri), shifts, gcd/lcm, and the in-place variants, which the
 * importer makes functional).
 *
 * LIB_OPS_ELEM rows: X(ENUM, "name", expansion, "doc"): a library-node kind
 * and its expansion function expand_<expansion> (ir/expand/elem.c).
 * ATEN_OPS_ELEM rows: X(ENUM, "overload", lowering, param, "schema"): an
 * ATen overload, its lowering function lower_<lowering> (ir/lower/elem.c),
 * a parameter for that lowering (the tasklet code of unary and binary),
 * and PyTorch's schema string.
 * Included by ops.h only.
 */
#define LIB_OPS_ELEM(X) \
	X(ELEMWISE, "elemwise", elemwise, "n-ary elementwise op with broadcasting (attr code)")

#define ATEN_OPS_ELEM(X) \
	X(TO_COPY, "_to_copy.default", cast, 0, "aten::_to_copy(Tensor self, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None, bool non_blocking=False, MemoryFormat? memory_format=None) -> Tensor") \
	X(TO_DTYPE, "to.dtype", cast, 0, "aten::to.dtype(Tensor(a) self, ScalarType dtype, bool non_blocking=False, bool copy=False, MemoryFormat? memory_format=None) -> Tensor(a)") \
	X(TO_DTYPE_LAYOUT, "to.dtype_layout", cast, 0, "aten::to.dtype_layout(Tensor(a) self, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None, bool non_blocking=False, bool copy=False, MemoryFormat? memory_format=None) -> Tensor(a)") \
	X(TO_DEVICE, "to.device", cast, 0, "aten::to.device(Tensor(a) self, Device device, ScalarType dtype, bool non_blocking=False, bool copy=False, MemoryFormat? memory_format=None) -> Tensor(a)") \
	X(TYPE_AS, "type_as.default", cast, 1, "aten::type_as(Tensor self, Tensor other) -> Tensor") \
	X(RELU, "relu.default", unary, T_RELU, "aten::relu(Tensor self) -> Tensor") \
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
	X(HARDSIGMOID, "hardsigmoid.default", unary, T_HARDSIGMOID, "aten::hardsigmoid(Tensor self) -> Tensor") \
	X(HARDSWISH, "hardswish.default", unary, T_HARDSWISH, "aten::hardswish(Tensor self) -> Tensor") \
	X(ACOS, "acos.default", unary, T_ACOS, "aten::acos(Tensor self) -> Tensor") \
	X(ACOSH, "acosh.default", unary, T_ACOSH, "aten::acosh(Tensor self) -> Tensor") \
	X(ASIN, "asin.default", unary, T_ASIN, "aten::asin(Tensor self) -> Tensor") \
	X(ASINH, "asinh.default", unary, T_ASINH, "aten::asinh(Tensor self) -> Tensor") \
	X(ATAN, "atan.default", unary, T_ATAN, "aten::atan(Tensor self) -> Tensor") \
	X(ATANH, "atanh.default", unary, T_ATANH, "aten::atanh(Tensor self) -> Tensor") \
	X(CEIL, "ceil.default", unary, T_CEIL, "aten::ceil(Tensor self) -> Tensor") \
	X(COS, "cos.default", unary, T_COS, "aten::cos(Tensor self) -> Tensor") \
	X(COSH, "cosh.default", unary, T_COSH, "aten::cosh(Tensor self) -> Tensor") \
	X(EXPM1, "expm1.default", unary, T_EXPM1, "aten::expm1(Tensor self) -> Tensor") \
	X(FLOOR, "floor.default", unary, T_FLOOR, "aten::floor(Tensor self) -> Tensor") \
	X(ISINF, "isinf.default", unary, T_ISINF, "aten::isinf(Tensor self) -> Tensor") \
	X(ISNAN, "isnan.default", unary, T_ISNAN, "aten::isnan(Tensor self) -> Tensor") \
	X(LOG10, "log10.default", unary, T_LOG10, "aten::log10(Tensor self) -> Tensor") \
	X(LOG1P, "log1p.default", unary, T_LOG1P, "aten::log1p(Tensor self) -> Tensor") \
	X(LOG2, "log2.default", unary, T_LOG2, "aten::log2(Tensor self) -> Tensor") \
	X(RECIPROCAL, "reciprocal.default", unary, T_RECIP, "aten::reciprocal(Tensor self) -> Tensor") \
	X(ROUND, "round.default", unary, T_ROUND, "aten::round(Tensor self) -> Tensor") \
	X(SIGN, "sign.default", unary, T_SIGN, "aten::sign(Tensor self) -> Tensor") \
	X(SIN, "sin.default", unary, T_SIN, "aten::sin(Tensor self) -> Tensor") \
	X(SINH, "sinh.default", unary, T_SINH, "aten::sinh(Tensor self) -> Tensor") \
	X(TAN, "tan.default", unary, T_TAN, "aten::tan(Tensor self) -> Tensor") \
	X(TRUNC, "trunc.default", unary, T_TRUNC, "aten::trunc(Tensor self) -> Tensor") \
	X(BITWISE_NOT, "bitwise_not.default", unary, T_NOT, "aten::bitwise_not(Tensor self) -> Tensor") \
	X(LOGICAL_NOT, "logical_not.default", unary, T_NOT, "aten::logical_not(Tensor self) -> Tensor") \
	X(MISH, "mish.default", unary, T_MISH, "aten::mish(Tensor self) -> Tensor") \
	X(SOFTPLUS, "softplus.default", unary, T_SOFTPLUS, "aten::softplus(Tensor self, Scalar beta=1, Scalar threshold=20) -> Tensor") \
	X(ELU, "elu.default", unary, T_ELU, "aten::elu(Tensor self, Scalar alpha=1, Scalar scale=1, Scalar input_scale=1) -> Tensor") \
	X(LEAKY_RELU, "leaky_relu.default", unary, T_LEAKY_RELU, "aten::leaky_relu(Tensor self, Scalar negative_slope=0.01) -> Tensor") \
	X(HARDTANH, "hardtanh.default", clamp, 0, "aten::hardtanh(Tensor self, Scalar min_val=-1, Scalar max_val=1) -> Tensor") \
	X(RELU6, "relu6.default", clamp, 1, "aten::relu6(Tensor self) -> Tensor") \
	X(CLAMP, "clamp.default", clamp, 2, "aten::clamp(Tensor self, Scalar? min=None, Scalar? max=None) -> Tensor") \
	X(CLAMP_MIN, "clamp_min.default", clamp, 3, "aten::clamp_min(Tensor self, Scalar min) -> Tensor") \
	X(CLAMP_MAX, "clamp_max.default", clamp, 4, "aten::clamp_max(Tensor self, Scalar max) -> Tensor") \
	X(CLAMP_TENSOR, "clamp.Tensor", clamp_tensor, 0, "aten::clamp.Tensor(Tensor self, Tensor? min=None, Tensor? max=None) -> Tensor") \
	X(CLAMP_MIN_TENSOR, "clamp_min.Tensor", clamp_tensor, 0, "aten::clamp_min.Tensor(Tensor self, Tensor min) -> Tensor") \
	X(CLAMP_MAX_TENSOR, "clamp_max.Tensor", clamp_tensor, 0, "aten::clamp_max.Tensor(Tensor self, Tensor max) -> Tensor") \
	X(ADD_TENSOR, "add.Tensor", binary, T_ADD, "aten::add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor") \
	X(ADD_SCALAR, "add.Scalar", binary, T_ADD, "aten::add.Scalar(Tensor self, Scalar other, Scalar alpha=1) -> Tensor") \
	X(SUB_TENSOR, "sub.Tensor", binary, T_SUB, "aten::sub.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor") \
	X(SUB_SCALAR, "sub.Scalar", binary, T_SUB, "aten::sub.Scalar(Tensor self, Scalar other, Scalar alpha=1) -> Tensor") \
	X(RSUB_TENSOR, "rsub.Tensor", binary, T_SUB, "aten::rsub.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor") \
	X(RSUB_SCALAR, "rsub.Scalar", binary, T_SUB, "aten::rsub.Scalar(Tensor self, Scalar other, Scalar alpha=1) -> Tensor") \
	X(MUL_TENSOR, "mul.Tensor", binary, T_MUL, "aten::mul.Tensor(Tensor self, Tensor other) -> Tensor") \
	X(MUL_SCALAR, "mul.Scalar", binary, T_MUL, "aten::mul.Scalar(Tensor self, Scalar other) -> Tensor") \
	X(MULTIPLY_TENSOR, "multiply.Tensor", binary, T_MUL, "aten::multiply.Tensor(Tensor self, Tensor other) -> Tensor") \
	X(DIV_TENSOR, "div.Tensor", binary, T_DIV, "aten::div.Tensor(Tensor self, Tensor other) -> Tensor") \
	X(DIV_SCALAR, "div.Scalar", binary, T_DIV, "aten::div.Scalar(Tensor self, Scalar other) -> Tensor") \
	X(DIV_TENSOR_MODE, "div.Tensor_mode", binary, T_DIV, "aten::div.Tensor_mode(Tensor self, Tensor other, *, str? rounding_mode) -> Tensor") \
	X(DIV_SCALAR_MODE, "div.Scalar_mode", binary, T_DIV, "aten::div.Scalar_mode(Tensor self, Scalar other, *, str? rounding_mode) -> Tensor") \
	X(FLOOR_DIVIDE, "floor_divide.default", binary, T_DIV_FLOOR, "aten::floor_divide(Tensor self, Tensor other) -> Tensor") \
	X(FLOOR_DIVIDE_SCALAR, "floor_divide.Scalar", binary, T_DIV_FLOOR, "aten::floor_divide.Scalar(Tensor self, Scalar other) -> Tensor") \
	X(MAXIMUM, "maximum.default", binary, T_MAX, "aten::maximum(Tensor self, Tensor other) -> Tensor") \
	X(MINIMUM, "minimum.default", binary, T_MIN, "aten::minimum(Tensor self, Tensor other) -> Tensor") \
	X(MAX_OTHER, "max.other", binary, T_MAX, "aten::max.other(Tensor self, Tensor other) -> Tensor") \
	X(MIN_OTHER, "min.other", binary, T_MIN, "aten::min.other(Tensor self, Tensor other) -> Tensor") \
	X(POW_TENSOR_TENSOR, "pow.Tensor_Tensor", binary, T_POW, "aten::pow.Tensor_Tensor(Tensor self, Tensor exponent) -> Tensor") \
	X(POW_TENSOR_SCALAR, "pow.Tensor_Scalar", binary, T_POW, "aten::pow.Tensor_Scalar(Tensor self, Scalar exponent) -> Tensor") \
	X(POW_SCALAR, "pow.Scalar", binary, T_POW, "aten::pow.Scalar(Scalar self, Tensor exponent) -> Tensor") \
	X(FMOD_TENSOR, "fmod.Tensor", binary, T_FMOD, "aten::fmod.Tensor(Tensor self, Tensor other) -> Tensor") \
	X(FMOD_SCALAR, "fmod.Scalar", binary, T_FMOD, "aten::fmod.Scalar(Tensor self, Scalar other) -> Tensor") \
	X(REMAINDER_TENSOR, "remainder.Tensor", binary, T_REM, "aten::remainder.Tensor(Tensor self, Tensor other) -> Tensor") \
	X(REMAINDER_SCALAR, "remainder.Scalar", binary, T_REM, "aten::remainder.Scalar(Tensor self, Scalar other) -> Tensor") \
	X(ATAN2, "atan2.default", binary, T_ATAN2, "aten::atan2(Tensor self, Tensor other) -> Tensor") \
	X(EQ_TENSOR, "eq.Tensor", binary, T_EQ, "aten::eq.Tensor(Tensor self, Tensor other) -> Tensor") \
	X(EQ_SCALAR, "eq.Scalar", binary, T_EQ, "aten::eq.Scalar(Tensor self, Scalar other) -> Tensor") \
	X(NE_TENSOR, "ne.Tensor", binary, T_NE, "aten::ne.Tensor(Tensor self, Tensor other) -> Tensor") \
	X(NE_SCALAR, "ne.Scalar", binary, T_NE, "aten::ne.Scalar(Tensor self, Scalar other) -> Tensor") \
	X(LT_TENSOR, "lt.Tensor", binary, T_LT, "aten::lt.Tensor(Tensor self, Tensor other) -> Tensor") \
	X(LT_SCALAR, "lt.Scalar", binary, T_LT, "aten::lt.Scalar(Tensor self, Scalar other) -> Tensor") \
	X(LE_TENSOR, "le.Tensor", binary, T_LE, "aten::le.Tensor(Tensor self, Tensor other) -> Tensor") \
	X(LE_SCALAR, "le.Scalar", binary, T_LE, "aten::le.Scalar(Tensor self, Scalar other) -> Tensor") \
	X(GT_TENSOR, "gt.Tensor", binary, T_GT, "aten::gt.Tensor(Tensor self, Tensor other) -> Tensor") \
	X(GT_SCALAR, "gt.Scalar", binary, T_GT, "aten::gt.Scalar(Tensor self, Scalar other) -> Tensor") \
	X(GE_TENSOR, "ge.Tensor", binary, T_GE, "aten::ge.Tensor(Tensor self, Tensor other) -> Tensor") \
	X(GE_SCALAR, "ge.Scalar", binary, T_GE, "aten::ge.Scalar(Tensor self, Scalar other) -> Tensor") \
	X(BITWISE_AND_TENSOR, "bitwise_and.Tensor", binary, T_AND, "aten::bitwise_and.Tensor(Tensor self, Tensor other) -> Tensor") \
	X(BITWISE_AND_SCALAR, "bitwise_and.Scalar", binary, T_AND, "aten::bitwise_and.Scalar(Tensor self, Scalar other) -> Tensor") \
	X(BITWISE_OR_TENSOR, "bitwise_or.Tensor", binary, T_OR, "aten::bitwise_or.Tensor(Tensor self, Tensor other) -> Tensor") \
	X(BITWISE_OR_SCALAR, "bitwise_or.Scalar", binary, T_OR, "aten::bitwise_or.Scalar(Tensor self, Scalar other) -> Tensor") \
	X(BITWISE_XOR_TENSOR, "bitwise_xor.Tensor", binary, T_XOR, "aten::bitwise_xor.Tensor(Tensor self, Tensor other) -> Tensor") \
	X(BITWISE_XOR_SCALAR, "bitwise_xor.Scalar", binary, T_XOR, "aten::bitwise_xor.Scalar(Tensor self, Scalar other) -> Tensor") \
	X(LOGICAL_AND, "logical_and.default", binary, T_AND, "aten::logical_and(Tensor self, Tensor other) -> Tensor") \
	X(LOGICAL_OR, "logical_or.default", binary, T_OR, "aten::logical_or(Tensor self, Tensor other) -> Tensor") \
	X(LOGICAL_XOR, "logical_xor.default", binary, T_XOR, "aten::logical_xor(Tensor self, Tensor other) -> Tensor") \
	X(DUNDER_AND_TENSOR, "__and__.Tensor", binary, T_AND, "aten::__and__.Tensor(Tensor self, Tensor other) -> Tensor") \
	X(DUNDER_AND_SCALAR, "__and__.Scalar", binary, T_AND, "aten::__and__.Scalar(Tensor self, Scalar other) -> Tensor") \
	X(DUNDER_OR_TENSOR, "__or__.Tensor", binary, T_OR, "aten::__or__.Tensor(Tensor self, Tensor other) -> Tensor") \
	X(DUNDER_OR_SCALAR, "__or__.Scalar", binary, T_OR, "aten::__or__.Scalar(Tensor self, Scalar other) -> Tensor") \
	X(DUNDER_XOR_TENSOR, "__xor__.Tensor", binary, T_XOR, "aten::__xor__.Tensor(Tensor self, Tensor other) -> Tensor") \
	X(DUNDER_XOR_SCALAR, "__xor__.Scalar", binary, T_XOR, "aten::__xor__.Scalar(Tensor self, Scalar other) -> Tensor") \
	X(SQUARE, "square.default", square, 0, "aten::square(Tensor self) -> Tensor") \
	X(OUTER, "outer.default", outer, 0, "aten::outer(Tensor self, Tensor vec2) -> Tensor") \
	X(CLIP, "clip.default", clamp, 2, "aten::clip(Tensor self, Scalar? min=None, Scalar? max=None) -> Tensor") \
	X(CLIP_TENSOR, "clip.Tensor", clamp_tensor, 0, "aten::clip.Tensor(Tensor self, Tensor? min=None, Tensor? max=None) -> Tensor") \
	X(TRUE_DIVIDE_TENSOR, "true_divide.Tensor", binary, T_DIV, "aten::true_divide.Tensor(Tensor self, Tensor other) -> Tensor") \
	X(TRUE_DIVIDE_SCALAR, "true_divide.Scalar", binary, T_DIV, "aten::true_divide.Scalar(Tensor self, Scalar other) -> Tensor") \
	X(CELU, "celu.default", unary, T_ELU, "aten::celu(Tensor self, Scalar alpha=1.) -> Tensor") \
	X(SELU, "selu.default", unary, T_ELU, "aten::selu(Tensor self) -> Tensor") \
	X(SGN, "sgn.default", unary, T_SIGN, "aten::sgn(Tensor self) -> Tensor") \
	X(WHERE_SCALARSELF, "where.ScalarSelf", where, 0, "aten::where.ScalarSelf(Tensor condition, Scalar self, Tensor other) -> Tensor") \
	X(WHERE_SCALAROTHER, "where.ScalarOther", where, 0, "aten::where.ScalarOther(Tensor condition, Tensor self, Scalar other) -> Tensor") \
	X(WHERE_SCALAR, "where.Scalar", where, 0, "aten::where.Scalar(Tensor condition, Scalar self, Scalar other) -> Tensor") \
	X(WHERE, "where.self", where, 0, "aten::where.self(Tensor condition, Tensor self, Tensor other) -> Tensor") \
	X(MASKED_FILL_SCALAR, "masked_fill.Scalar", where, 1, "aten::masked_fill.Scalar(Tensor self, Tensor mask, Scalar value) -> Tensor") \
	X(MASKED_FILL_TENSOR, "masked_fill.Tensor", where, 1, "aten::masked_fill.Tensor(Tensor self, Tensor mask, Tensor value) -> Tensor") \
	X(FMAX, "fmax.default", binary, T_FMAX, "aten::fmax(Tensor self, Tensor other) -> Tensor") \
	X(FMIN, "fmin.default", binary, T_FMIN, "aten::fmin(Tensor self, Tensor other) -> Tensor") \
	X(ERFINV, "erfinv.default", unary, T_ERFINV, "aten::erfinv(Tensor self) -> Tensor") \
	X(FRAC, "frac.default", unary, T_FRAC, "aten::frac(Tensor self) -> Tensor") \
	X(ROUND_DEC, "round.decimals", round_decimals, 0, "aten::round.decimals(Tensor self, *, int decimals) -> Tensor") \
	X(NAN_TO_NUM, "nan_to_num.default", nan_to_num, 0, "aten::nan_to_num(Tensor self, float? nan=None, float? posinf=None, float? neginf=None) -> Tensor") \
	X(GLU, "glu.default", glu, 0, "aten::glu(Tensor self, int dim=-1) -> Tensor") \
	X(LERP_SCALAR, "lerp.Scalar", lerp, 0, "aten::lerp.Scalar(Tensor self, Tensor end, Scalar weight) -> Tensor") \
	X(LERP_TENSOR, "lerp.Tensor", lerp, 0, "aten::lerp.Tensor(Tensor self, Tensor end, Tensor weight) -> Tensor") \
	X(XLOGY, "xlogy.Tensor", binary, T_XLOGY, "aten::xlogy.Tensor(Tensor self, Tensor other) -> Tensor") \
	X(SPECIAL_XLOGY, "special_xlogy.default", binary, T_XLOGY, "aten::special_xlogy(Tensor self, Tensor other) -> Tensor") \
	X(EXP2, "exp2.default", unary, T_EXP2, "aten::exp2(Tensor self) -> Tensor") \
	X(ERFC, "erfc.default", unary, T_ERFC, "aten::erfc(Tensor self) -> Tensor") \
	X(LGAMMA, "lgamma.default", unary, T_LGAMMA, "aten::lgamma(Tensor self) -> Tensor") \
	X(DIGAMMA, "digamma.default", unary, T_DIGAMMA, "aten::digamma(Tensor self) -> Tensor") \
	X(POLYGAMMA, "polygamma.default", unary, T_POLYGAMMA, "aten::polygamma(int n, Tensor self) -> Tensor") \
	X(I0, "i0.default", unary, T_I0, "aten::i0(Tensor self) -> Tensor") \
	X(SPECIAL_I0E, "special_i0e.default", unary, T_I0E, "aten::special_i0e(Tensor self) -> Tensor") \
	X(SPECIAL_I1, "special_i1.default", unary, T_I1, "aten::special_i1(Tensor self) -> Tensor") \
	X(SPECIAL_I1E, "special_i1e.default", unary, T_I1E, "aten::special_i1e(Tensor self) -> Tensor") \
	X(SPECIAL_ERFCX, "special_erfcx.default", unary, T_ERFCX, "aten::special_erfcx(Tensor self) -> Tensor") \
	X(SPECIAL_NDTRI, "special_ndtri.default", unary, T_NDTRI, "aten::special_ndtri(Tensor self) -> Tensor") \
	X(SIGNBIT, "signbit.default", unary, T_SIGNBIT, "aten::signbit(Tensor self) -> Tensor") \
	X(SPECIAL_ZETA, "special_zeta.default", binary, T_ZETA, "aten::special_zeta(Tensor self, Tensor other) -> Tensor") \
	X(SPECIAL_ZETA_SELF_SCALAR, "special_zeta.self_scalar", binary, T_ZETA, "aten::special_zeta.self_scalar(Scalar self, Tensor other) -> Tensor") \
	X(SPECIAL_ZETA_OTHER_SCALAR, "special_zeta.other_scalar", binary, T_ZETA, "aten::special_zeta.other_scalar(Tensor self, Scalar other) -> Tensor") \
	X(HYPOT, "hypot.default", binary, T_HYPOT, "aten::hypot(Tensor self, Tensor other) -> Tensor") \
	X(COPYSIGN_TENSOR, "copysign.Tensor", binary, T_COPYSIGN, "aten::copysign.Tensor(Tensor self, Tensor other) -> Tensor") \
	X(COPYSIGN_SCALAR, "copysign.Scalar", binary, T_COPYSIGN, "aten::copysign.Scalar(Tensor self, Scalar other) -> Tensor") \
	X(LDEXP, "ldexp.Tensor", binary, T_LDEXP, "aten::ldexp.Tensor(Tensor self, Tensor other) -> Tensor") \
	X(NEXTAFTER, "nextafter.default", binary, T_NEXTAFTER, "aten::nextafter(Tensor self, Tensor other) -> Tensor") \
	X(GCD, "gcd.default", binary, T_GCD, "aten::gcd(Tensor self, Tensor other) -> Tensor") \
	X(LCM, "lcm.default", binary, T_LCM, "aten::lcm(Tensor self, Tensor other) -> Tensor") \
	X(BITWISE_LEFT_SHIFT_TENSOR, "bitwise_left_shift.Tensor", binary, T_SHL, "aten::bitwise_left_shift.Tensor(Tensor self, Tensor other) -> Tensor") \
	X(BITWISE_LEFT_SHIFT_TENSOR_SCALAR, "bitwise_left_shift.Tensor_Scalar", binary, T_SHL, "aten::bitwise_left_shift.Tensor_Scalar(Tensor self, Scalar other) -> Tensor") \
	X(BITWISE_LEFT_SHIFT_SCALAR_TENSOR, "bitwise_left_shift.Scalar_Tensor", binary, T_SHL, "aten::bitwise_left_shift.Scalar_Tensor(Scalar self, Tensor other) -> Tensor") \
	X(BITWISE_RIGHT_SHIFT_TENSOR, "bitwise_right_shift.Tensor", binary, T_SHR, "aten::bitwise_right_shift.Tensor(Tensor self, Tensor other) -> Tensor") \
	X(BITWISE_RIGHT_SHIFT_TENSOR_SCALAR, "bitwise_right_shift.Tensor_Scalar", binary, T_SHR, "aten::bitwise_right_shift.Tensor_Scalar(Tensor self, Scalar other) -> Tensor") \
	X(BITWISE_RIGHT_SHIFT_SCALAR_TENSOR, "bitwise_right_shift.Scalar_Tensor", binary, T_SHR, "aten::bitwise_right_shift.Scalar_Tensor(Scalar self, Tensor other) -> Tensor") \
	X(DUNDER_LSHIFT_TENSOR, "__lshift__.Tensor", binary, T_SHL, "aten::__lshift__.Tensor(Tensor self, Tensor other) -> Tensor") \
	X(DUNDER_LSHIFT_SCALAR, "__lshift__.Scalar", binary, T_SHL, "aten::__lshift__.Scalar(Tensor self, Scalar other) -> Tensor") \
	X(DUNDER_RSHIFT_TENSOR, "__rshift__.Tensor", binary, T_SHR, "aten::__rshift__.Tensor(Tensor self, Tensor other) -> Tensor") \
	X(DUNDER_RSHIFT_SCALAR, "__rshift__.Scalar", binary, T_SHR, "aten::__rshift__.Scalar(Tensor self, Scalar other) -> Tensor") \
	X(REMAINDER_SCALAR_TENSOR, "remainder.Scalar_Tensor", binary, T_REM, "aten::remainder.Scalar_Tensor(Scalar self, Tensor other) -> Tensor") \
	X(BITWISE_AND_SCALAR_TENSOR, "bitwise_and.Scalar_Tensor", binary, T_AND, "aten::bitwise_and.Scalar_Tensor(Scalar self, Tensor other) -> Tensor") \
	X(BITWISE_OR_SCALAR_TENSOR, "bitwise_or.Scalar_Tensor", binary, T_OR, "aten::bitwise_or.Scalar_Tensor(Scalar self, Tensor other) -> Tensor") \
	X(BITWISE_XOR_SCALAR_TENSOR, "bitwise_xor.Scalar_Tensor", binary, T_XOR, "aten::bitwise_xor.Scalar_Tensor(Scalar self, Tensor other) -> Tensor")
