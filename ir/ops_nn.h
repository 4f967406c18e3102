/*
 * ops_nn.h - the op-table rows of the nn family (neural-network layers: convolution, matrix products, normalization, pooling, reductions, softmax).
 *
 * LIB_OPS_NN rows: X(ENUM, "name", expansion, "doc"): a library-node kind
 * and its expansion function expand_<expansion> (ir/expand/).
 * ATEN_OPS_NN rows: X(ENUM, "overload", lowering, param, "schema"): an ATen
 * overload, its lowering function lower_<lowering> (ir/lower/), a parameter
 * for that lowering, and PyTorch's schema string.
 * Included by ops.h only.
 */
#define LIB_OPS_NN(X) \
	X(CONV, "conv", conv, "N-d convolution, stride/padding/dilation/groups, bias") \
	X(GEMM, "gemm", gemm, "batched matrix product alpha*A@B + beta*bias") \
	X(BATCHNORM, "batchnorm", batchnorm, "inference batch normalization over dim 1") \
	X(POOL, "pool", pool, "2-d max / average / adaptive-average pooling") \
	X(REDUCE, "reduce", reduce, "sum / mean / max / min over dims") \
	X(SOFTMAX, "softmax", softmax, "softmax or log-softmax over one dim")

#define ATEN_OPS_NN(X) \
	X(CONV1D, "conv1d.default", conv, 0, "aten::conv1d(Tensor input, Tensor weight, Tensor? bias=None, SymInt[1] stride=[1], SymInt[1] padding=[0], SymInt[1] dilation=[1], SymInt groups=1) -> Tensor") \
	X(CONV2D, "conv2d.default", conv, 0, "aten::conv2d(Tensor input, Tensor weight, Tensor? bias=None, SymInt[2] stride=[1, 1], SymInt[2] padding=[0, 0], SymInt[2] dilation=[1, 1], SymInt groups=1) -> Tensor") \
	X(CONVOLUTION, "convolution.default", conv, 1, "aten::convolution(Tensor input, Tensor weight, Tensor? bias, SymInt[] stride, SymInt[] padding, SymInt[] dilation, bool transposed, SymInt[] output_padding, SymInt groups) -> Tensor") \
	X(LINEAR, "linear.default", linear, 0, "aten::linear(Tensor input, Tensor weight, Tensor? bias=None) -> Tensor") \
	X(ADDMM, "addmm.default", gemm, 1, "aten::addmm(Tensor self, Tensor mat1, Tensor mat2, *, Scalar beta=1, Scalar alpha=1) -> Tensor") \
	X(MM, "mm.default", gemm, 0, "aten::mm(Tensor self, Tensor mat2) -> Tensor") \
	X(BMM, "bmm.default", gemm, 0, "aten::bmm(Tensor self, Tensor mat2) -> Tensor") \
	X(MATMUL, "matmul.default", gemm, 2, "aten::matmul(Tensor self, Tensor other) -> Tensor") \
	X(BATCH_NORM, "batch_norm.default", batchnorm, 0, "aten::batch_norm(Tensor input, Tensor? weight, Tensor? bias, Tensor? running_mean, Tensor? running_var, bool training, float momentum, float eps, bool cudnn_enabled) -> Tensor") \
	X(BN_NO_TRAINING, "_native_batch_norm_legit_no_training.default", batchnorm, 1, "aten::_native_batch_norm_legit_no_training(Tensor input, Tensor? weight, Tensor? bias, Tensor running_mean, Tensor running_var, float momentum, float eps) -> (Tensor, Tensor, Tensor)") \
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
	X(LOG_SOFTMAX_, "_log_softmax.default", softmax, 1, "aten::_log_softmax(Tensor self, int dim, bool half_to_float) -> Tensor")
