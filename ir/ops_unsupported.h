/*
 * ops_unsupported.h - ATen overloads doccc knows and deliberately does not
 * compile, each with the reason the user sees and the coverage table
 * (docs/ops.md, doccc --list-ops) prints.
 * X("overload", "reason")
 */
#define UNSUPPORTED_OPS(X) \
	X("rand.default", "its output is random: no deterministic inference meaning") \
	X("randn.default", "its output is random: no deterministic inference meaning") \
	X("randperm.default", "its output is random: no deterministic inference meaning") \
	X("native_dropout.default", "dropout in training mode; export the model in eval mode") \
	X("convolution_backward.default", "a backward op: doccc compiles inference only") \
	X("max_pool2d_with_indices_backward.default", "a backward op: doccc compiles inference only") \
	X("native_layer_norm_backward.default", "a backward op: doccc compiles inference only") \
	X("native_group_norm_backward.default", "a backward op: doccc compiles inference only") \
	X("embedding_dense_backward.default", "a backward op: doccc compiles inference only") \
	X("avg_pool2d_backward.default", "a backward op: doccc compiles inference only") \
	X("_adaptive_avg_pool2d_backward.default", "a backward op: doccc compiles inference only") \
	X("_fft_r2c.default", "produces complex tensors, which doccc does not support")
