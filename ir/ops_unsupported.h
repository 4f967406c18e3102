/*
 * ops_unsupported.h - ATen overloads doccc knows and deliberately does not
 * compile, each with the reason the user sees and the coverage table
 * (docs/ops.md, doccc --list-ops) prints.
 * X("overload", "reason")
 *
 * Only ops that have no inference meaning or that doccc will not support by
 * design belong here (backward ops, random ops, training-mode ops, complex
 * tensors, data-dependent output shapes); an op that is merely not written
 * yet stays out, so the table shows it as "not yet". Every row must name a
 * real torch overload and none may also be in ATEN_OPS (test/test_coverage.py).
 */
#define UNSUPPORTED_OPS(X) \
	X("rand.default", "its output is random: no deterministic inference meaning") \
	X("randn.default", "its output is random: no deterministic inference meaning") \
	X("randperm.default", "its output is random: no deterministic inference meaning") \
	X("rand_like.default", "its output is random: no deterministic inference meaning") \
	X("randn_like.default", "its output is random: no deterministic inference meaning") \
	X("randint.default", "its output is random: no deterministic inference meaning") \
	X("randint.low", "its output is random: no deterministic inference meaning") \
	X("bernoulli.default", "its output is random: no deterministic inference meaning") \
	X("bernoulli.p", "its output is random: no deterministic inference meaning") \
	X("multinomial.default", "its output is random: no deterministic inference meaning") \
	X("native_dropout.default", "dropout in training mode; export the model in eval mode") \
	X("_native_batch_norm_legit_functional.default", "batch normalization in training mode (running-stat updates); export the model in eval mode") \
	X("convolution_backward.default", "a backward op: doccc compiles inference only") \
	X("max_pool2d_with_indices_backward.default", "a backward op: doccc compiles inference only") \
	X("native_layer_norm_backward.default", "a backward op: doccc compiles inference only") \
	X("native_group_norm_backward.default", "a backward op: doccc compiles inference only") \
	X("native_batch_norm_backward.default", "a backward op: doccc compiles inference only") \
	X("embedding_dense_backward.default", "a backward op: doccc compiles inference only") \
	X("avg_pool2d_backward.default", "a backward op: doccc compiles inference only") \
	X("_adaptive_avg_pool2d_backward.default", "a backward op: doccc compiles inference only") \
	X("_softmax_backward_data.default", "a backward op: doccc compiles inference only") \
	X("_log_softmax_backward_data.default", "a backward op: doccc compiles inference only") \
	X("threshold_backward.default", "a backward op: doccc compiles inference only") \
	X("gelu_backward.default", "a backward op: doccc compiles inference only") \
	X("tanh_backward.default", "a backward op: doccc compiles inference only") \
	X("sigmoid_backward.default", "a backward op: doccc compiles inference only") \
	X("native_dropout_backward.default", "a backward op: doccc compiles inference only") \
	X("_fft_r2c.default", "produces complex tensors, which doccc does not support") \
	X("_fft_c2r.default", "takes complex tensors, which doccc does not support") \
	X("_fft_c2c.default", "takes and produces complex tensors, which doccc does not support") \
	X("fft_fft.default", "produces complex tensors, which doccc does not support") \
	X("fft_ifft.default", "produces complex tensors, which doccc does not support") \
	X("fft_rfft.default", "produces complex tensors, which doccc does not support") \
	X("fft_irfft.default", "takes complex tensors, which doccc does not support") \
	X("view_as_complex.default", "produces complex tensors, which doccc does not support") \
	X("view_as_real.default", "takes complex tensors, which doccc does not support") \
	X("nonzero.default", "its output shape depends on the input's values; doccc compiles static shapes only") \
	X("atan2.out", "an out= variant; exported graphs are functional and use atan2.default, which is supported") \
	X("rand.generator", "its output is random: no deterministic inference meaning") \
	X("randn.generator", "its output is random: no deterministic inference meaning") \
	X("rand_like.generator", "its output is random: no deterministic inference meaning") \
	X("randn_like.generator", "its output is random: no deterministic inference meaning") \
	X("randint.generator", "its output is random: no deterministic inference meaning") \
	X("randint.low_generator", "its output is random: no deterministic inference meaning") \
	X("randint_like.default", "its output is random: no deterministic inference meaning") \
	X("randint_like.generator", "its output is random: no deterministic inference meaning") \
	X("randint_like.Tensor", "its output is random: no deterministic inference meaning") \
	X("randint_like.Tensor_generator", "its output is random: no deterministic inference meaning") \
	X("randint_like.low_dtype", "its output is random: no deterministic inference meaning") \
	X("randint_like.low_generator_dtype", "its output is random: no deterministic inference meaning") \
	X("randperm.generator", "its output is random: no deterministic inference meaning") \
	X("random.default", "its output is random: no deterministic inference meaning") \
	X("random.from", "its output is random: no deterministic inference meaning") \
	X("random.to", "its output is random: no deterministic inference meaning") \
	X("normal.Tensor_Tensor", "its output is random: no deterministic inference meaning") \
	X("normal.Tensor_float", "its output is random: no deterministic inference meaning") \
	X("normal.float_Tensor", "its output is random: no deterministic inference meaning") \
	X("normal.float_float", "its output is random: no deterministic inference meaning") \
	X("normal_functional.default", "its output is random: no deterministic inference meaning") \
	X("bernoulli.Tensor", "its output is random: no deterministic inference meaning") \
	X("binomial.default", "its output is random: no deterministic inference meaning") \
	X("poisson.default", "its output is random: no deterministic inference meaning") \
	X("cauchy.default", "its output is random: no deterministic inference meaning") \
	X("exponential.default", "its output is random: no deterministic inference meaning") \
	X("geometric.default", "its output is random: no deterministic inference meaning") \
	X("log_normal.default", "its output is random: no deterministic inference meaning") \
	X("uniform.default", "its output is random: no deterministic inference meaning") \
	X("rrelu_with_noise_functional.default", "its output is random: no deterministic inference meaning") \
	X("complex.default", "produces complex tensors, which doccc does not support") \
	X("polar.default", "produces complex tensors, which doccc does not support") \
	X("ccol_indices.default", "an accessor of sparse tensors, which doccc does not support") \
	X("col_indices.default", "an accessor of sparse tensors, which doccc does not support") \
	X("crow_indices.default", "an accessor of sparse tensors, which doccc does not support") \
	X("row_indices.default", "an accessor of sparse tensors, which doccc does not support") \
	X("indices.default", "an accessor of sparse tensors, which doccc does not support") \
	X("values.default", "an accessor of sparse tensors, which doccc does not support") \
	X("dense_dim.default", "an accessor of sparse tensors, which doccc does not support") \
	X("is_coalesced.default", "an accessor of sparse tensors, which doccc does not support") \
	X("hspmm.default", "a product of sparse tensors, which doccc does not support") \
	X("set.default", "replaces a tensor's storage; functional exported graphs do not contain it") \
	X("set.source_Storage", "replaces a tensor's storage; functional exported graphs do not contain it") \
	X("set.source_Storage_storage_offset", "replaces a tensor's storage; functional exported graphs do not contain it") \
	X("set.source_Tensor", "replaces a tensor's storage; functional exported graphs do not contain it") \
	X("resize.default", "resizes a tensor's storage; functional exported graphs do not contain it") \
	X("is_set_to.default", "compares tensors' storage, which a compiled model does not expose") \
	X("is_pinned.default", "asks whether host memory is pinned, which a compiled model does not expose") \
	X("from_file.default", "reads a tensor from a file at run time; weights belong in the export") \
	X("masked_select.default", "its output shape depends on the input's values; doccc compiles static shapes only") \
	X("unique_consecutive.default", "its output shape depends on the input's values; doccc compiles static shapes only") \
	X("unique_dim.default", "its output shape depends on the input's values; doccc compiles static shapes only") \
	X("unique_dim_consecutive.default", "its output shape depends on the input's values; doccc compiles static shapes only") \
	X("bincount.default", "its output shape depends on the input's values; doccc compiles static shapes only") \
	X("resize_.default", "resizes a tensor's storage in place; functional exported graphs do not contain it") \
	/* recurrent layers over packed sequences (ir/ops_rnn.h has the .input overloads) */ \
	X("lstm.data", "a packed sequence: its per-step batch sizes are values, so shapes are data-dependent (torch.export cannot trace it); pass padded input (lstm.input)") \
	X("gru.data", "a packed sequence: its per-step batch sizes are values, so shapes are data-dependent (torch.export cannot trace it); pass padded input (gru.input)") \
	X("rnn_tanh.data", "a packed sequence: its per-step batch sizes are values, so shapes are data-dependent (torch.export cannot trace it); pass padded input (rnn_tanh.input)") \
	X("rnn_relu.data", "a packed sequence: its per-step batch sizes are values, so shapes are data-dependent (torch.export cannot trace it); pass padded input (rnn_relu.input)") \
	/* symbolic-shape ops torch.export (2.13) does not leave in a program doccc can compile */ \
	X("sym_constrain_range.default", "torch.export does not produce it: its runtime-assert pass removes it and states the range as _assert_scalar guards") \
	X("sym_constrain_range_for_size.default", "torch.export does not produce it: torch._check_is_size and torch._constrain_as_size become _assert_scalar guards") \
	X("sym_storage_offset.default", "torch.export produces it only for a view at a data-dependent offset (select or narrow at an item() index), whose offset doccc cannot compile: it compiles static shapes and offsets")
