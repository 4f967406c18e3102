/*
 * ops_norm.h - the op-table rows of the norm family: batch norm in
 * inference, the normalizations with input statistics (layer, group,
 * instance, RMS, batch statistics), softmax and log-softmax, and the
 * vector norms built on the reduce node (every ord, linalg_norm, Frobenius),
 * weight norm and cosine similarity.
 *
 * LIB_OPS_NORM rows: X(ENUM, "name", expansion, "doc"): a library-node kind
 * and its expansion function expand_<expansion> (ir/expand/norm.c).
 * ATEN_OPS_NORM rows: X(ENUM, "overload", lowering, param, "schema"): an
 * ATen overload, its lowering function lower_<lowering> (ir/lower/norm.c), a
 * parameter for that lowering (NM_* for norm, VN_* for vnorm), and PyTorch's
 * schema string.
 * Included by ops.h only.
 */

/* Param values of the norm lowering (lower_norm) and of the vector-norm
 * lowering (lower_vnorm). */
enum { NM_LAYER, NM_GROUP, NM_INSTANCE, NM_BATCH, NM_RMS, NM_NATIVE_GROUP, NM_NATIVE_LAYER, NM_BN_LEGIT, NM_BN_NO_STATS };
enum { VN_VECTOR, VN_LINALG, VN_FROBENIUS, VN_WEIGHT, VN_WEIGHT_IFACE, VN_COSINE, VN_DIST };

#define LIB_OPS_NORM(X) \
	X(BATCHNORM, "batchnorm", batchnorm, "inference batch normalization over dim 1") \
	X(NORM, "norm", norm, "layer / group / instance / batch-statistics / RMS normalization") \
	X(SOFTMAX, "softmax", softmax, "softmax or log-softmax over one dim")

#define ATEN_OPS_NORM(X) \
	X(BATCH_NORM, "batch_norm.default", batchnorm, 0, "aten::batch_norm(Tensor input, Tensor? weight, Tensor? bias, Tensor? running_mean, Tensor? running_var, bool training, float momentum, float eps, bool cudnn_enabled) -> Tensor") \
	X(NATIVE_BATCH_NORM, "native_batch_norm.default", batchnorm, 0, "aten::native_batch_norm(Tensor input, Tensor? weight, Tensor? bias, Tensor? running_mean, Tensor? running_var, bool training, float momentum, float eps) -> (Tensor, Tensor, Tensor)") \
	X(BN_NO_TRAINING, "_native_batch_norm_legit_no_training.default", batchnorm, 1, "aten::_native_batch_norm_legit_no_training(Tensor input, Tensor? weight, Tensor? bias, Tensor running_mean, Tensor running_var, float momentum, float eps) -> (Tensor, Tensor, Tensor)") \
	X(LAYER_NORM, "layer_norm.default", norm, NM_LAYER, "aten::layer_norm(Tensor input, SymInt[] normalized_shape, Tensor? weight=None, Tensor? bias=None, float eps=1.0000000000000001e-05, bool cudnn_enable=True) -> Tensor") \
	X(NATIVE_LAYER_NORM, "native_layer_norm.default", norm, NM_NATIVE_LAYER, "aten::native_layer_norm(Tensor input, SymInt[] normalized_shape, Tensor? weight, Tensor? bias, float eps) -> (Tensor, Tensor, Tensor)") \
	X(GROUP_NORM, "group_norm.default", norm, NM_GROUP, "aten::group_norm(Tensor input, int num_groups, Tensor? weight=None, Tensor? bias=None, float eps=1.0000000000000001e-05, bool cudnn_enabled=True) -> Tensor") \
	X(NATIVE_GROUP_NORM, "native_group_norm.default", norm, NM_NATIVE_GROUP, "aten::native_group_norm(Tensor input, Tensor? weight, Tensor? bias, SymInt N, SymInt C, SymInt HxW, int group, float eps) -> (Tensor, Tensor, Tensor)") \
	X(INSTANCE_NORM, "instance_norm.default", norm, NM_INSTANCE, "aten::instance_norm(Tensor input, Tensor? weight, Tensor? bias, Tensor? running_mean, Tensor? running_var, bool use_input_stats, float momentum, float eps, bool cudnn_enabled) -> Tensor") \
	X(RMS_NORM, "rms_norm.default", norm, NM_RMS, "aten::rms_norm(Tensor input, SymInt[] normalized_shape, Tensor? weight=None, float? eps=None) -> Tensor") \
	X(BN_LEGIT, "_native_batch_norm_legit.default", norm, NM_BN_LEGIT, "aten::_native_batch_norm_legit(Tensor input, Tensor? weight, Tensor? bias, Tensor(a!) running_mean, Tensor(b!) running_var, bool training, float momentum, float eps) -> (Tensor, Tensor, Tensor)") \
	X(BN_NO_STATS, "_native_batch_norm_legit.no_stats", norm, NM_BN_NO_STATS, "aten::_native_batch_norm_legit.no_stats(Tensor input, Tensor? weight, Tensor? bias, bool training, float momentum, float eps) -> (Tensor, Tensor, Tensor)") \
	X(LINALG_VECTOR_NORM, "linalg_vector_norm.default", vnorm, VN_VECTOR, "aten::linalg_vector_norm(Tensor self, Scalar ord=2, int[1]? dim=None, bool keepdim=False, *, ScalarType? dtype=None) -> Tensor") \
	X(DIST, "dist.default", vnorm, VN_DIST, "aten::dist(Tensor self, Tensor other, Scalar p=2) -> Tensor") \
	X(LINALG_NORM, "linalg_norm.default", vnorm, VN_LINALG, "aten::linalg_norm(Tensor self, Scalar? ord=None, int[1]? dim=None, bool keepdim=False, *, ScalarType? dtype=None) -> Tensor") \
	X(FROBENIUS_NORM, "frobenius_norm.dim", vnorm, VN_FROBENIUS, "aten::frobenius_norm.dim(Tensor self, int[1] dim, bool keepdim=False) -> Tensor") \
	X(WEIGHT_NORM, "_weight_norm.default", vnorm, VN_WEIGHT, "aten::_weight_norm(Tensor v, Tensor g, int dim=0) -> Tensor") \
	X(WEIGHT_NORM_IFACE, "_weight_norm_interface.default", vnorm, VN_WEIGHT_IFACE, "aten::_weight_norm_interface(Tensor v, Tensor g, int dim=0) -> (Tensor, Tensor)") \
	X(COSINE_SIMILARITY, "cosine_similarity.default", vnorm, VN_COSINE, "aten::cosine_similarity(Tensor x1, Tensor x2, int dim=1, float eps=1e-08) -> Tensor") \
	X(SOFTMAX, "softmax.int", softmax, 0, "aten::softmax.int(Tensor self, int dim, ScalarType? dtype=None) -> Tensor") \
	X(SOFTMAX_, "_softmax.default", softmax, 0, "aten::_softmax(Tensor self, int dim, bool half_to_float) -> Tensor") \
	X(LOG_SOFTMAX, "log_softmax.int", softmax, 1, "aten::log_softmax.int(Tensor self, int dim, ScalarType? dtype=None) -> Tensor") \
	X(LOG_SOFTMAX_, "_log_softmax.default", softmax, 1, "aten::_log_softmax(Tensor self, int dim, bool half_to_float) -> Tensor") \
	X(SAFE_SOFTMAX, "_safe_softmax.default", softmax, 2, "aten::_safe_softmax(Tensor self, int dim, ScalarType? dtype=None) -> Tensor")
