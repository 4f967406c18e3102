/*
 * ops_nn.h - the op-table rows of the nn family (neural-network layers: convolution, matrix products, normalization, pooling, upsampling, fold, reductions, softmax).
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
	X(POOL, "pool", pool, "2-d / 3-d max / average / adaptive average / adaptive max pooling, max with indices") \
	X(REDUCE, "reduce", reduce, "sum / mean / max / min over dims") \
	X(SOFTMAX, "softmax", softmax, "softmax or log-softmax over one dim") \
	X(NORM, "norm", norm, "layer / group / instance / batch-statistics / RMS normalization") \
	X(ATTENTION, "attention", attention, "fused scaled dot-product attention, one softmax row at a time") \
	X(UPSAMPLE, "upsample", upsample, "2-d nearest / nearest-exact / bilinear / bicubic resampling with PyTorch's source indices") \
	X(CDIST, "cdist", cdist, "p-norm distances between the rows of two matrices (batched), or condensed pairwise distances of one") \
	X(COL2IM, "col2im", col2im, "fold: sums sliding-window columns back into an image, each output pixel gathering its taps") \
	X(IM2COL, "im2col", im2col, "unfold: sliding-window columns of an image, each column element one (padded) pixel")

/* Param values of the norm lowering, and reduction modes beyond ops.h's
 * RD_SUM..RD_MIN (ir/lower/nn.c asserts that they continue that enum). */
enum { NM_LAYER, NM_GROUP, NM_INSTANCE, NM_BATCH, NM_RMS, NM_NATIVE_GROUP, NM_NATIVE_LAYER, NM_BN_LEGIT, NM_BN_NO_STATS };
enum { UP_NEAREST, UP_BILINEAR, UP_NEAREST_EXACT, UP_BICUBIC };
enum { PL_ADAPTIVE_MAX_ = 3, PL_1D = 8, PL_3D = 16 };  /* pool mode after ops.h's PL_*; flags: 1-d through the 2-d node, 3-d */
enum { RD_PROD_ = 4, RD_VAR_, RD_STD_, RD_ANY_, RD_ALL_, RD_LSE_, RD_VAR_MEAN_, RD_STD_MEAN_, RD_NORM_ };
/* Param values of the vector-norm lowering (lower_vnorm) */
enum { VN_VECTOR, VN_LINALG, VN_FROBENIUS, VN_WEIGHT, VN_WEIGHT_IFACE, VN_COSINE };

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
	X(LOG_SOFTMAX_, "_log_softmax.default", softmax, 1, "aten::_log_softmax(Tensor self, int dim, bool half_to_float) -> Tensor") \
	X(SAFE_SOFTMAX, "_safe_softmax.default", softmax, 2, "aten::_safe_softmax(Tensor self, int dim, ScalarType? dtype=None) -> Tensor") \
	X(LAYER_NORM, "layer_norm.default", norm, NM_LAYER, "aten::layer_norm(Tensor input, SymInt[] normalized_shape, Tensor? weight=None, Tensor? bias=None, float eps=1.0000000000000001e-05, bool cudnn_enable=True) -> Tensor") \
	X(NATIVE_LAYER_NORM, "native_layer_norm.default", norm, NM_NATIVE_LAYER, "aten::native_layer_norm(Tensor input, SymInt[] normalized_shape, Tensor? weight, Tensor? bias, float eps) -> (Tensor, Tensor, Tensor)") \
	X(GROUP_NORM, "group_norm.default", norm, NM_GROUP, "aten::group_norm(Tensor input, int num_groups, Tensor? weight=None, Tensor? bias=None, float eps=1.0000000000000001e-05, bool cudnn_enabled=True) -> Tensor") \
	X(NATIVE_GROUP_NORM, "native_group_norm.default", norm, NM_NATIVE_GROUP, "aten::native_group_norm(Tensor input, Tensor? weight, Tensor? bias, SymInt N, SymInt C, SymInt HxW, int group, float eps) -> (Tensor, Tensor, Tensor)") \
	X(INSTANCE_NORM, "instance_norm.default", norm, NM_INSTANCE, "aten::instance_norm(Tensor input, Tensor? weight, Tensor? bias, Tensor? running_mean, Tensor? running_var, bool use_input_stats, float momentum, float eps, bool cudnn_enabled) -> Tensor") \
	X(RMS_NORM, "rms_norm.default", norm, NM_RMS, "aten::rms_norm(Tensor input, SymInt[] normalized_shape, Tensor? weight=None, float? eps=None) -> Tensor") \
	X(BN_LEGIT, "_native_batch_norm_legit.default", norm, NM_BN_LEGIT, "aten::_native_batch_norm_legit(Tensor input, Tensor? weight, Tensor? bias, Tensor(a!) running_mean, Tensor(b!) running_var, bool training, float momentum, float eps) -> (Tensor, Tensor, Tensor)") \
	X(BN_NO_STATS, "_native_batch_norm_legit.no_stats", norm, NM_BN_NO_STATS, "aten::_native_batch_norm_legit.no_stats(Tensor input, Tensor? weight, Tensor? bias, bool training, float momentum, float eps) -> (Tensor, Tensor, Tensor)") \
	X(SDPA, "scaled_dot_product_attention.default", attention, 0, "aten::scaled_dot_product_attention(Tensor query, Tensor key, Tensor value, Tensor? attn_mask=None, float dropout_p=0., bool is_causal=False, *, float? scale=None, bool enable_gqa=False) -> Tensor") \
	X(PROD_DIM, "prod.dim_int", reduce, RD_PROD_, "aten::prod.dim_int(Tensor self, int dim, bool keepdim=False, *, ScalarType? dtype=None) -> Tensor") \
	X(PROD, "prod.default", reduce, RD_PROD_, "aten::prod(Tensor self, *, ScalarType? dtype=None) -> Tensor") \
	X(VAR_CORR, "var.correction", reduce, RD_VAR_, "aten::var.correction(Tensor self, int[1]? dim=None, *, Scalar? correction=None, bool keepdim=False) -> Tensor") \
	X(VAR_DIM, "var.dim", reduce, RD_VAR_, "aten::var.dim(Tensor self, int[1]? dim, bool unbiased=True, bool keepdim=False) -> Tensor") \
	X(STD_CORR, "std.correction", reduce, RD_STD_, "aten::std.correction(Tensor self, int[1]? dim=None, *, Scalar? correction=None, bool keepdim=False) -> Tensor") \
	X(STD_DIM, "std.dim", reduce, RD_STD_, "aten::std.dim(Tensor self, int[1]? dim, bool unbiased=True, bool keepdim=False) -> Tensor") \
	X(VAR_MEAN_CORR, "var_mean.correction", reduce, RD_VAR_MEAN_, "aten::var_mean.correction(Tensor self, int[1]? dim=None, *, Scalar? correction=None, bool keepdim=False) -> (Tensor, Tensor)") \
	X(VAR_MEAN_DIM, "var_mean.dim", reduce, RD_VAR_MEAN_, "aten::var_mean.dim(Tensor self, int[1]? dim, bool unbiased=True, bool keepdim=False) -> (Tensor, Tensor)") \
	X(STD_MEAN_CORR, "std_mean.correction", reduce, RD_STD_MEAN_, "aten::std_mean.correction(Tensor self, int[1]? dim=None, *, Scalar? correction=None, bool keepdim=False) -> (Tensor, Tensor)") \
	X(ANY_DIM, "any.dim", reduce, RD_ANY_, "aten::any.dim(Tensor self, int dim, bool keepdim=False) -> Tensor") \
	X(ANY_DIMS, "any.dims", reduce, RD_ANY_, "aten::any.dims(Tensor self, int[]? dim=None, bool keepdim=False) -> Tensor") \
	X(ANY, "any.default", reduce, RD_ANY_, "aten::any(Tensor self) -> Tensor") \
	X(ALL_DIM, "all.dim", reduce, RD_ALL_, "aten::all.dim(Tensor self, int dim, bool keepdim=False) -> Tensor") \
	X(ALL_DIMS, "all.dims", reduce, RD_ALL_, "aten::all.dims(Tensor self, int[]? dim=None, bool keepdim=False) -> Tensor") \
	X(ALL, "all.default", reduce, RD_ALL_, "aten::all(Tensor self) -> Tensor") \
	X(MAX_ALL, "max.default", reduce, RD_MAX, "aten::max(Tensor self) -> Tensor") \
	X(MIN_ALL, "min.default", reduce, RD_MIN, "aten::min(Tensor self) -> Tensor") \
	X(LOGSUMEXP, "logsumexp.default", reduce, RD_LSE_, "aten::logsumexp(Tensor self, int[1] dim, bool keepdim=False) -> Tensor") \
	X(BADDBMM, "baddbmm.default", gemm, 3, "aten::baddbmm(Tensor self, Tensor batch1, Tensor batch2, *, Scalar beta=1, Scalar alpha=1) -> Tensor") \
	X(UPSAMPLE_NEAREST2D_VEC, "upsample_nearest2d.vec", upsample, UP_NEAREST, "aten::upsample_nearest2d.vec(Tensor input, SymInt[]? output_size, float[]? scale_factors) -> Tensor") \
	X(UPSAMPLE_NEAREST2D, "upsample_nearest2d.default", upsample, UP_NEAREST, "aten::upsample_nearest2d(Tensor self, SymInt[2] output_size, float? scales_h=None, float? scales_w=None) -> Tensor") \
	X(UPSAMPLE_NEAREST_EXACT2D_VEC, "_upsample_nearest_exact2d.vec", upsample, UP_NEAREST_EXACT, "aten::_upsample_nearest_exact2d.vec(Tensor input, SymInt[]? output_size, float[]? scale_factors) -> Tensor") \
	X(UPSAMPLE_BILINEAR2D_VEC, "upsample_bilinear2d.vec", upsample, UP_BILINEAR, "aten::upsample_bilinear2d.vec(Tensor input, SymInt[]? output_size, bool align_corners, float[]? scale_factors) -> Tensor") \
	X(UPSAMPLE_BILINEAR2D, "upsample_bilinear2d.default", upsample, UP_BILINEAR, "aten::upsample_bilinear2d(Tensor self, SymInt[2] output_size, bool align_corners, float? scales_h=None, float? scales_w=None) -> Tensor") \
	X(MAX_POOL1D, "max_pool1d.default", pool, PL_MAX | PL_1D, "aten::max_pool1d(Tensor self, int[1] kernel_size, int[1] stride=[], int[1] padding=[0], int[1] dilation=[1], bool ceil_mode=False) -> Tensor") \
	X(AVG_POOL1D, "avg_pool1d.default", pool, PL_AVG | PL_1D, "aten::avg_pool1d(Tensor self, int[1] kernel_size, int[1] stride=[], int[1] padding=[0], bool ceil_mode=False, bool count_include_pad=True) -> Tensor") \
	X(ADAPTIVE_AVG_POOL1D, "adaptive_avg_pool1d.default", pool, PL_ADAPTIVE | PL_1D, "aten::adaptive_avg_pool1d(Tensor self, int[1] output_size) -> Tensor") \
	X(CONV1D_PAD, "conv1d.padding", conv, 3, "aten::conv1d.padding(Tensor input, Tensor weight, Tensor? bias=None, SymInt[1] stride=[1], str padding=\"valid\", SymInt[1] dilation=[1], SymInt groups=1) -> Tensor") \
	X(CONV2D_PAD, "conv2d.padding", conv, 3, "aten::conv2d.padding(Tensor input, Tensor weight, Tensor? bias=None, SymInt[2] stride=[1, 1], str padding=\"valid\", SymInt[2] dilation=[1, 1], SymInt groups=1) -> Tensor") \
	X(CONV3D, "conv3d.default", conv, 0, "aten::conv3d(Tensor input, Tensor weight, Tensor? bias=None, SymInt[3] stride=[1, 1, 1], SymInt[3] padding=[0, 0, 0], SymInt[3] dilation=[1, 1, 1], SymInt groups=1) -> Tensor") \
	X(CONV_T1D, "conv_transpose1d.default", conv, 2, "aten::conv_transpose1d(Tensor input, Tensor weight, Tensor? bias=None, SymInt[1] stride=[1], SymInt[1] padding=[0], SymInt[1] output_padding=[0], SymInt groups=1, SymInt[1] dilation=[1]) -> Tensor") \
	X(CONV_T2D, "conv_transpose2d.input", conv, 2, "aten::conv_transpose2d.input(Tensor input, Tensor weight, Tensor? bias=None, SymInt[2] stride=[1, 1], SymInt[2] padding=[0, 0], SymInt[2] output_padding=[0, 0], SymInt groups=1, SymInt[2] dilation=[1, 1]) -> Tensor") \
	X(CONV_T3D, "conv_transpose3d.input", conv, 2, "aten::conv_transpose3d.input(Tensor input, Tensor weight, Tensor? bias=None, SymInt[3] stride=[1, 1, 1], SymInt[3] padding=[0, 0, 0], SymInt[3] output_padding=[0, 0, 0], SymInt groups=1, SymInt[3] dilation=[1, 1, 1]) -> Tensor") \
	X(ADAPTIVE_MAX_POOL2D, "adaptive_max_pool2d.default", pool, PL_ADAPTIVE_MAX_, "aten::adaptive_max_pool2d(Tensor self, int[2] output_size) -> (Tensor, Tensor)") \
	X(AVG_POOL3D, "avg_pool3d.default", pool, PL_AVG | PL_3D, "aten::avg_pool3d(Tensor self, int[3] kernel_size, int[3] stride=[], int[3] padding=0, bool ceil_mode=False, bool count_include_pad=True, int? divisor_override=None) -> Tensor") \
	X(MAX_POOL3D_IDX, "max_pool3d_with_indices.default", pool, PL_MAX | PL_3D, "aten::max_pool3d_with_indices(Tensor self, int[3] kernel_size, int[3] stride=[], int[3] padding=0, int[3] dilation=1, bool ceil_mode=False) -> (Tensor, Tensor)") \
	X(ADAPTIVE_AVG_POOL3D_, "_adaptive_avg_pool3d.default", pool, PL_ADAPTIVE | PL_3D, "aten::_adaptive_avg_pool3d(Tensor self, SymInt[3] output_size) -> Tensor") \
	X(CDIST_FORWARD, "_cdist_forward.default", cdist, 0, "aten::_cdist_forward(Tensor x1, Tensor x2, float p, int? compute_mode) -> Tensor") \
	X(PDIST_FORWARD, "_pdist_forward.default", cdist, 1, "aten::_pdist_forward(Tensor self, float p=2.) -> Tensor") \
	X(MAX_POOL3D, "max_pool3d.default", pool, PL_MAX | PL_3D, "aten::max_pool3d(Tensor self, int[3] kernel_size, int[3] stride=[], int[3] padding=0, int[3] dilation=1, bool ceil_mode=False) -> Tensor") \
	X(ADAPTIVE_AVG_POOL3D, "adaptive_avg_pool3d.default", pool, PL_ADAPTIVE | PL_3D, "aten::adaptive_avg_pool3d(Tensor self, SymInt[3] output_size) -> Tensor") \
	X(CDIST, "cdist.default", cdist, 0, "aten::cdist(Tensor x1, Tensor x2, float p=2., int? compute_mode=None) -> Tensor") \
	X(PDIST, "pdist.default", cdist, 1, "aten::pdist(Tensor self, float p=2.) -> Tensor") \
	X(COL2IM, "col2im.default", col2im, 0, "aten::col2im(Tensor self, SymInt[2] output_size, int[2] kernel_size, int[2] dilation, int[2] padding, int[2] stride) -> Tensor") \
	X(UPSAMPLE_BICUBIC2D_VEC, "upsample_bicubic2d.vec", upsample, UP_BICUBIC, "aten::upsample_bicubic2d.vec(Tensor input, SymInt[]? output_size, bool align_corners, float[]? scale_factors) -> Tensor") \
	X(UPSAMPLE_BICUBIC2D, "upsample_bicubic2d.default", upsample, UP_BICUBIC, "aten::upsample_bicubic2d(Tensor self, SymInt[2] output_size, bool align_corners, float? scales_h=None, float? scales_w=None) -> Tensor") \
	/* einsum (ir/lower/einsum.c): parsed and lowered onto views, reduce, mul and gemm nodes */ \
	X(EINSUM, "einsum.default", einsum, 0, "aten::einsum(str equation, Tensor[] tensors, *, int[]? path=None) -> Tensor") \
	/* vector norms (every ord), weight norm, cosine similarity, im2col (unfold) */ \
	X(LINALG_VECTOR_NORM, "linalg_vector_norm.default", vnorm, VN_VECTOR, "aten::linalg_vector_norm(Tensor self, Scalar ord=2, int[1]? dim=None, bool keepdim=False, *, ScalarType? dtype=None) -> Tensor") \
	X(LINALG_NORM, "linalg_norm.default", vnorm, VN_LINALG, "aten::linalg_norm(Tensor self, Scalar? ord=None, int[1]? dim=None, bool keepdim=False, *, ScalarType? dtype=None) -> Tensor") \
	X(FROBENIUS_NORM, "frobenius_norm.dim", vnorm, VN_FROBENIUS, "aten::frobenius_norm.dim(Tensor self, int[1] dim, bool keepdim=False) -> Tensor") \
	X(WEIGHT_NORM, "_weight_norm.default", vnorm, VN_WEIGHT, "aten::_weight_norm(Tensor v, Tensor g, int dim=0) -> Tensor") \
	X(WEIGHT_NORM_IFACE, "_weight_norm_interface.default", vnorm, VN_WEIGHT_IFACE, "aten::_weight_norm_interface(Tensor v, Tensor g, int dim=0) -> (Tensor, Tensor)") \
	X(COSINE_SIMILARITY, "cosine_similarity.default", vnorm, VN_COSINE, "aten::cosine_similarity(Tensor x1, Tensor x2, int dim=1, float eps=1e-08) -> Tensor") \
	X(IM2COL, "im2col.default", im2col, 0, "aten::im2col(Tensor self, int[2] kernel_size, int[2] dilation, int[2] padding, int[2] stride) -> Tensor")
