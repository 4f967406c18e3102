/*
 * ops_quant.h - the op-table rows of the quant family: affine quantization
 * as PT2E (torch.ao's quantized_decomposed namespace) and torchao export it.
 *
 * LIB_OPS_QUANT rows: X(ENUM, "name", expansion, "doc"): a library-node kind
 * and its expansion function expand_<expansion> (ir/expand/quant.c).
 * ATEN_OPS_QUANT rows: X(ENUM, "overload", lowering, param, "schema"): an
 * overload, its lowering lower_<lowering> (ir/lower/quant.c), the form of
 * its quantization parameters (QF_*, QP_*) and torch's schema string.
 * Included by ops.h only.
 *
 * The forms differ in where the scale comes from and in the order of
 * torch's roundings, which doccc reproduces bit for bit (ir/expand/quant.c):
 *   QF_TENSOR   one scale and zero point, Python numbers (or one-element
 *               tensors read with .item()): round(x * (1/scale)) + zp
 *   QF_CHANNEL  one per slice along `axis`, tensors: round(x * (1/s)) + zp
 *   QF_TOKEN    one per row of the last dim: round(x * (1/s) + zp)
 *   QF_GROUP    one per group_size elements of each row of a matrix: as TOKEN
 *   QF_AFFINE   torchao: one per block of block_size: as TOKEN
 * A dequantization is (q - zp) * scale in every form, in the scale's type
 * (the output type for QF_TENSOR), then converted to the output's.
 * The quantization parameters a dynamic quantization chooses at run time
 * (choose_qparams*) are the qparams node: a min/max reduction per tensor or
 * per row, then torch's formulas (QP_*).
 */

/* Forms of the quantize / dequantize rows: the param column, the quant
 * node's "form" attribute. */
enum { QF_TENSOR, QF_CHANNEL, QF_TOKEN, QF_GROUP, QF_AFFINE };
/* Forms of the choose_qparams rows: the qparams node's "form". */
enum { QP_TENSOR, QP_SYMMETRIC, QP_TOKEN_ASYM };

#define LIB_OPS_QUANT(X) \
	X(QUANT, "quant", quant, "affine quantize or dequantize (attr dq) of in[0] with scale in[1] and zero point in[2] broadcast to it, or the numbers scale and zp; form, qmin, qmax, cdt as torch rounds") \
	X(QPARAMS, "qparams", qparams, "the scale out[0] and zero point out[1] of a dynamic quantization: min and max of each row of in[0], then torch's formula (attr form)")

#define ATEN_OPS_QUANT(X) \
	X(Q_PER_TENSOR, "quantized_decomposed.quantize_per_tensor.default", quant, QF_TENSOR, "quantized_decomposed::quantize_per_tensor(Tensor input, float scale, int zero_point, int quant_min, int quant_max, ScalarType dtype) -> Tensor") \
	X(Q_PER_TENSOR_T, "quantized_decomposed.quantize_per_tensor.tensor", quant, QF_TENSOR, "quantized_decomposed::quantize_per_tensor.tensor(Tensor input, Tensor scale, Tensor zero_point, int quant_min, int quant_max, ScalarType dtype) -> Tensor") \
	X(DQ_PER_TENSOR, "quantized_decomposed.dequantize_per_tensor.default", dequant, QF_TENSOR, "quantized_decomposed::dequantize_per_tensor(Tensor input, float scale, int zero_point, int quant_min, int quant_max, ScalarType dtype, *, ScalarType? out_dtype=None) -> Tensor") \
	X(DQ_PER_TENSOR_T, "quantized_decomposed.dequantize_per_tensor.tensor", dequant, QF_TENSOR, "quantized_decomposed::dequantize_per_tensor.tensor(Tensor input, Tensor scale, Tensor zero_point, int quant_min, int quant_max, ScalarType dtype, *, ScalarType? out_dtype=None) -> Tensor") \
	X(Q_PER_TENSOR_T2, "quantized_decomposed.quantize_per_tensor.tensor2", quant, QF_TENSOR, "quantized_decomposed::quantize_per_tensor.tensor2(Tensor input, Tensor scale, Tensor zero_point, Tensor quant_min, Tensor quant_max, ScalarType dtype) -> Tensor") \
	X(DQ_PER_TENSOR_T2, "quantized_decomposed.dequantize_per_tensor.tensor2", dequant, QF_TENSOR, "quantized_decomposed::dequantize_per_tensor.tensor2(Tensor input, Tensor scale, Tensor zero_point, Tensor quant_min, Tensor quant_max, ScalarType dtype, *, ScalarType? out_dtype=None) -> Tensor") \
	X(Q_PER_CHANNEL, "quantized_decomposed.quantize_per_channel.default", quant, QF_CHANNEL, "quantized_decomposed::quantize_per_channel(Tensor input, Tensor scales, Tensor zero_points, int axis, int quant_min, int quant_max, ScalarType dtype) -> Tensor") \
	X(DQ_PER_CHANNEL, "quantized_decomposed.dequantize_per_channel.default", dequant, QF_CHANNEL, "quantized_decomposed::dequantize_per_channel(Tensor input, Tensor scales, Tensor? zero_points, int axis, int quant_min, int quant_max, ScalarType dtype, *, ScalarType? out_dtype=None) -> Tensor") \
	X(Q_PER_TOKEN, "quantized_decomposed.quantize_per_token.default", quant, QF_TOKEN, "quantized_decomposed::quantize_per_token(Tensor input, Tensor scales, Tensor zero_points, int quant_min, int quant_max, ScalarType dtype) -> Tensor") \
	X(DQ_PER_TOKEN, "quantized_decomposed.dequantize_per_token.default", dequant, QF_TOKEN, "quantized_decomposed::dequantize_per_token(Tensor input, Tensor scales, Tensor zero_points, int quant_min, int quant_max, ScalarType dtype, ScalarType output_dtype) -> Tensor") \
	X(Q_PER_CHANNEL_GROUP, "quantized_decomposed.quantize_per_channel_group.default", quant, QF_GROUP, "quantized_decomposed::quantize_per_channel_group(Tensor input, Tensor scales, Tensor zero_points, int quant_min, int quant_max, ScalarType dtype, int group_size) -> Tensor") \
	X(DQ_PER_CHANNEL_GROUP, "quantized_decomposed.dequantize_per_channel_group.default", dequant, QF_GROUP, "quantized_decomposed::dequantize_per_channel_group(Tensor input, Tensor scales, Tensor? zero_points, int quant_min, int quant_max, ScalarType dtype, int group_size, ScalarType output_dtype) -> Tensor") \
	X(Q_AFFINE, "torchao.quantize_affine.default", quant, QF_AFFINE, "torchao::quantize_affine(Tensor input, SymInt[] block_size, Tensor scale, Tensor? zero_point, ScalarType output_dtype, Scalar? quant_min=None, Scalar? quant_max=None) -> Tensor") \
	X(DQ_AFFINE, "torchao.dequantize_affine.default", dequant, QF_AFFINE, "torchao::dequantize_affine(Tensor input, SymInt[] block_size, Tensor scale, Tensor? zero_point, ScalarType input_dtype, Scalar? quant_min=None, Scalar? quant_max=None, ScalarType output_dtype=6) -> Tensor") \
	X(CHOOSE_QPARAMS, "quantized_decomposed.choose_qparams.tensor", qparams, QP_TENSOR, "quantized_decomposed::choose_qparams.tensor(Tensor input, int quant_min, int quant_max, float eps, ScalarType dtype) -> (Tensor, Tensor)") \
	X(CHOOSE_QPARAMS_SYM, "quantized_decomposed.choose_qparams_symmetric.tensor", qparams, QP_SYMMETRIC, "quantized_decomposed::choose_qparams_symmetric.tensor(Tensor input, int quant_min, int quant_max, float eps, ScalarType dtype) -> (Tensor, Tensor)") \
	X(CHOOSE_QPARAMS_TOKEN_ASYM, "quantized_decomposed.choose_qparams_per_token_asymmetric.default", qparams, QP_TOKEN_ASYM, "quantized_decomposed::choose_qparams_per_token_asymmetric(Tensor input, ScalarType dtype) -> (Tensor, Tensor)")
