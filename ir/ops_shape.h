/*
 * ops_shape.h - the op-table rows of the shape family (views and data movement: reshapes, permutations, slicing, splitting,
 * concatenation, padding, flips, indexing, scatters, creation, arg-reductions, assertions, grid sampling,
 * embedding bags).
 *
 * LIB_OPS_SHAPE rows: X(ENUM, "name", expansion, "doc"): a library-node kind
 * and its expansion function expand_<expansion> (ir/expand/).
 * ATEN_OPS_SHAPE rows: X(ENUM, "overload", lowering, param, "schema"): an ATen
 * overload, its lowering function lower_<lowering> (ir/lower/), a parameter
 * for that lowering, and PyTorch's schema string.
 * Included by ops.h only.
 */

/* param columns of the shape lowerings */
enum { VW2_AS_STRIDED, VW2_DIAGONAL, VW2_NARROW };
enum { SP_UNBIND, SP_SIZE, SP_SIZES, SP_CHUNK };
enum { RM_FLIP, RM_REPEAT, RM_ROLL, RM_CONSTANT, RM_PAD, RM_REFLECT, RM_REPLICATE };
enum { GA_INDEX_SELECT, GA_GATHER, GA_EMBEDDING, GA_INDEX };
enum { SC_SRC, SC_VALUE, SC_ADD, SC_REDUCE, SC_INDEX_PUT, SC_SLICE, SC_SELECT, SC_VIEW };  /* SC_VIEW: import.c's writes through views */
enum { FL_VALUE, FL_ZERO, FL_ONE, FL_SCALAR, FL_FILL, FL_FILL_TENSOR, FL_COPY };
enum { AR_ARGMAX, AR_ARGMIN, AR_MAX, AR_MIN };
/* scan modes (LIB_SCAN "mode"), picks of a sorted row (LIB_SORT "pick"),
 * index_add / index_copy / index_fill (lower_index_op) */
enum { CS_SUM, CS_PROD, CS_LSE, CS_MAX, CS_MIN };
enum { PK_NONE, PK_KTH, PK_MEDIAN, PK_NANMEDIAN, PK_MODE, PK_ALL_MEDIAN, PK_ALL_NANMEDIAN, PK_ARGSORT, PK_MSORT };
enum { IX_ADD, IX_COPY, IX_FILL, IX_FILL_TENSOR };
/* embedding_bag overloads: padding_idx absent (embedding_bag.default), an
 * optional index that wraps like a dim (.padding_idx), or torch's raw
 * convention, negative = none (_embedding_bag*) */
enum { EB_PLAIN, EB_WRAP_PAD, EB_RAW };
/* grid sampler modes and padding modes, numbered as torch's enums */
enum { GS_BILINEAR, GS_NEAREST, GS_BICUBIC };
enum { GS_ZEROS, GS_BORDER, GS_REFLECTION };
/* embedding_bag modes, numbered as torch's */
enum { EBM_SUM, EBM_MEAN, EBM_MAX };
/* fliplr/flipud/rot90, and the shuffles (ir/lower/more.c) */
enum { RT_LR, RT_UD, RT_ROT };
enum { SH_PIXEL, SH_UNPIXEL, SH_CHANNEL };
/* per-dim kinds of a remap node ("kinds" attribute) */
enum { RK_OFFSET, RK_FLIP, RK_REFLECT, RK_REPLICATE, RK_CIRCULAR };
#define LIB_OPS_SHAPE(X) \
	X(CAT, "cat", cat, "concatenation along one dim") \
	X(REMAP, "remap", remap, "copy with per-dim index maps: offset (constant pad), flip, reflect, replicate, circular") \
	X(ARANGE, "arange", arange, "start + i*step along a 1-D output") \
	X(GATHER, "gather", gather, "reads at data-dependent indices: index_select, gather, embedding, index.Tensor") \
	X(SCATTER, "scatter", scatter, "writes at data-dependent or sliced positions: scatter*, index_put, slice/select_scatter") \
	X(ARGRED, "argred", argred, "argmax / argmin / max.dim / min.dim along one dim") \
	X(SCAN, "scan", scan, "inclusive scan along one dim, per row: sum, product, log-sum-exp, running max / min with indices") \
	X(SORT, "sort", sort, "stable merge sort along one dim, per row (sort, topk), or one pick per sorted row (kth value, median, mode)") \
	X(SEARCH, "search", search, "binary search of each value in a sorted row (searchsorted, bucketize, repeat_interleave indices)") \
	X(GRIDSAMPLE, "grid_sample", grid_sample, "2-D grid sampling: bilinear, nearest or bicubic taps at data-dependent source coordinates") \
	X(EMBBAG, "embedding_bag", embedding_bag, "sums, means or maxima of embedding rows over bags given by offsets") \
	X(MSCATTER, "masked_scatter", masked_scatter, "self where a mask is false, else the source's elements in order") \
	/* ir/expand/more.c */ \
	X(LINSPACE, "linspace", linspace, "linspace / logspace with torch's two-sided formula and rounding, start and end constants or 0-d tensors") \
	X(TRI, "tri", tri, "tril / triu: elements on the kept side of a diagonal, zeros elsewhere") \
	X(ASSERT, "assert", assert, "run-time assertion: a zero element fails the run with DOCCC_ERR_ASSERT and a message")

#define ATEN_OPS_SHAPE(X) \
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
	X(DETACH_, "detach_.default", view, VW_ALIAS, "aten::detach_(Tensor(a!) self) -> Tensor(a!)") \
	X(NUMPY_T, "numpy_T.default", view, VW_NUMPY_T, "aten::numpy_T(Tensor(a) self) -> Tensor(a)") \
	X(MT, "mT.default", view, VW_MT, "aten::mT(Tensor(a) self) -> Tensor(a)") \
	X(MH, "mH.default", view, VW_MT, "aten::mH(Tensor(a) self) -> Tensor(a)") \
	X(ADJOINT, "adjoint.default", view, VW_MT, "aten::adjoint(Tensor(a) self) -> Tensor(a)") \
	X(MESHGRID, "meshgrid.default", meshgrid, 0, "aten::meshgrid(Tensor[] tensors) -> Tensor[]") \
	X(MESHGRID_IDX, "meshgrid.indexing", meshgrid, 1, "aten::meshgrid.indexing(Tensor[] tensors, *, str indexing) -> Tensor[]") \
	X(CONTIGUOUS, "contiguous.default", view, VW_ALIAS, "aten::contiguous(Tensor(a) self, *, MemoryFormat memory_format=0) -> Tensor(a)") \
	X(CLONE, "clone.default", view, VW_ALIAS, "aten::clone(Tensor self, *, MemoryFormat? memory_format=None) -> Tensor") \
	X(LIFT_FRESH_COPY, "lift_fresh_copy.default", view, VW_ALIAS, "aten::lift_fresh_copy(Tensor self) -> Tensor") \
	X(DROPOUT, "dropout.default", dropout, 0, "aten::dropout(Tensor input, float p, bool train) -> Tensor") \
	X(ASSERT_META, "_assert_tensor_metadata.default", noop, 0, "aten::_assert_tensor_metadata(Tensor a, SymInt[]? size=None, SymInt[]? stride=None, ScalarType? dtype=None, *, Device? device=None, Layout? layout=None) -> ()") \
	X(CAT, "cat.default", cat, 0, "aten::cat(Tensor[] tensors, int dim=0) -> Tensor") \
	X(AS_STRIDED, "as_strided.default", view2, VW2_AS_STRIDED, "aten::as_strided(Tensor(a) self, SymInt[] size, SymInt[] stride, SymInt? storage_offset=None) -> Tensor(a)") \
	X(DIAGONAL, "diagonal.default", view2, VW2_DIAGONAL, "aten::diagonal(Tensor(a) self, int offset=0, int dim1=0, int dim2=1) -> Tensor(a)") \
	X(NARROW, "narrow.default", view2, VW2_NARROW, "aten::narrow(Tensor(a) self, int dim, SymInt start, SymInt length) -> Tensor(a)") \
	X(VIEW_AS, "view_as.default", view, VW_RESHAPE, "aten::view_as(Tensor(a) self, Tensor other) -> Tensor(a)") \
	X(BROADCAST_TO, "broadcast_to.default", view, VW_EXPAND, "aten::broadcast_to(Tensor(a) self, SymInt[] size) -> Tensor(a)") \
	X(RESHAPE_AS, "reshape_as.default", view, VW_RESHAPE, "aten::reshape_as(Tensor(a) self, Tensor other) -> Tensor(a)") \
	X(EXPAND_AS, "expand_as.default", view, VW_EXPAND, "aten::expand_as(Tensor(a) self, Tensor other) -> Tensor(a)") \
	X(UNBIND, "unbind.int", split, SP_UNBIND, "aten::unbind.int(Tensor(a -> *) self, int dim=0) -> Tensor(a)[]") \
	X(SPLIT, "split.Tensor", split, SP_SIZE, "aten::split.Tensor(Tensor(a -> *) self, SymInt split_size, int dim=0) -> Tensor(a)[]") \
	X(SPLIT_WITH_SIZES, "split_with_sizes.default", split, SP_SIZES, "aten::split_with_sizes(Tensor(a -> *) self, SymInt[] split_sizes, int dim=0) -> Tensor(a)[]") \
	X(CHUNK, "chunk.default", split, SP_CHUNK, "aten::chunk(Tensor(a -> *) self, int chunks, int dim=0) -> Tensor(a)[]") \
	X(STACK, "stack.default", stack, 0, "aten::stack(Tensor[] tensors, int dim=0) -> Tensor") \
	X(FLIP, "flip.default", remap, RM_FLIP, "aten::flip(Tensor self, int[] dims) -> Tensor") \
	X(REPEAT, "repeat.default", remap, RM_REPEAT, "aten::repeat(Tensor self, SymInt[] repeats) -> Tensor") \
	X(ROLL, "roll.default", remap, RM_ROLL, "aten::roll(Tensor self, SymInt[1] shifts, int[1] dims=[]) -> Tensor") \
	X(CONSTANT_PAD_ND, "constant_pad_nd.default", remap, RM_CONSTANT, "aten::constant_pad_nd(Tensor self, SymInt[] pad, Scalar value=0) -> Tensor") \
	X(PAD, "pad.default", remap, RM_PAD, "aten::pad(Tensor self, SymInt[] pad, str mode=\"constant\", float? value=None) -> Tensor") \
	X(REFLECTION_PAD1D, "reflection_pad1d.default", remap, RM_REFLECT, "aten::reflection_pad1d(Tensor self, SymInt[2] padding) -> Tensor") \
	X(REFLECTION_PAD2D, "reflection_pad2d.default", remap, RM_REFLECT, "aten::reflection_pad2d(Tensor self, SymInt[4] padding) -> Tensor") \
	X(REFLECTION_PAD3D, "reflection_pad3d.default", remap, RM_REFLECT, "aten::reflection_pad3d(Tensor self, SymInt[6] padding) -> Tensor") \
	X(REPLICATION_PAD1D, "replication_pad1d.default", remap, RM_REPLICATE, "aten::replication_pad1d(Tensor self, SymInt[2] padding) -> Tensor") \
	X(REPLICATION_PAD2D, "replication_pad2d.default", remap, RM_REPLICATE, "aten::replication_pad2d(Tensor self, SymInt[4] padding) -> Tensor") \
	X(REPLICATION_PAD3D, "replication_pad3d.default", remap, RM_REPLICATE, "aten::replication_pad3d(Tensor self, SymInt[6] padding) -> Tensor") \
	X(INDEX_SELECT, "index_select.default", gather, GA_INDEX_SELECT, "aten::index_select(Tensor self, int dim, Tensor index) -> Tensor") \
	X(GATHER, "gather.default", gather, GA_GATHER, "aten::gather(Tensor self, int dim, Tensor index, *, bool sparse_grad=False) -> Tensor") \
	X(EMBEDDING, "embedding.default", gather, GA_EMBEDDING, "aten::embedding(Tensor weight, Tensor indices, SymInt padding_idx=-1, bool scale_grad_by_freq=False, bool sparse=False) -> Tensor") \
	X(INDEX, "index.Tensor", gather, GA_INDEX, "aten::index.Tensor(Tensor self, Tensor?[] indices) -> Tensor") \
	X(SCATTER_SRC, "scatter.src", scatter, SC_SRC, "aten::scatter.src(Tensor self, int dim, Tensor index, Tensor src) -> Tensor") \
	X(SCATTER_VALUE, "scatter.value", scatter, SC_VALUE, "aten::scatter.value(Tensor self, int dim, Tensor index, Scalar value) -> Tensor") \
	X(SCATTER_ADD, "scatter_add.default", scatter, SC_ADD, "aten::scatter_add(Tensor self, int dim, Tensor index, Tensor src) -> Tensor") \
	X(SCATTER_REDUCE, "scatter_reduce.two", scatter, SC_REDUCE, "aten::scatter_reduce.two(Tensor self, int dim, Tensor index, Tensor src, str reduce, *, bool include_self=True) -> Tensor") \
	X(INDEX_PUT, "index_put.default", scatter, SC_INDEX_PUT, "aten::index_put(Tensor self, Tensor?[] indices, Tensor values, bool accumulate=False) -> Tensor") \
	X(SLICE_SCATTER, "slice_scatter.default", scatter, SC_SLICE, "aten::slice_scatter(Tensor self, Tensor src, int dim=0, SymInt? start=None, SymInt? end=None, SymInt step=1) -> Tensor") \
	X(SELECT_SCATTER, "select_scatter.default", scatter, SC_SELECT, "aten::select_scatter(Tensor self, Tensor src, int dim, SymInt index) -> Tensor") \
	X(FULL, "full.default", fill, FL_VALUE, "aten::full(SymInt[] size, Scalar fill_value, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None) -> Tensor") \
	X(FULL_LIKE, "full_like.default", fill, FL_VALUE, "aten::full_like(Tensor self, Scalar fill_value, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None, MemoryFormat? memory_format=None) -> Tensor") \
	X(NEW_FULL, "new_full.default", fill, FL_VALUE, "aten::new_full(Tensor self, SymInt[] size, Scalar fill_value, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None) -> Tensor") \
	X(ZEROS, "zeros.default", fill, FL_ZERO, "aten::zeros(SymInt[] size, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None) -> Tensor") \
	X(ZEROS_LIKE, "zeros_like.default", fill, FL_ZERO, "aten::zeros_like(Tensor self, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None, MemoryFormat? memory_format=None) -> Tensor") \
	X(NEW_ZEROS, "new_zeros.default", fill, FL_ZERO, "aten::new_zeros(Tensor self, SymInt[] size, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None) -> Tensor") \
	X(ONES, "ones.default", fill, FL_ONE, "aten::ones(SymInt[] size, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None) -> Tensor") \
	X(ONES_LIKE, "ones_like.default", fill, FL_ONE, "aten::ones_like(Tensor self, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None, MemoryFormat? memory_format=None) -> Tensor") \
	X(NEW_ONES, "new_ones.default", fill, FL_ONE, "aten::new_ones(Tensor self, SymInt[] size, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None) -> Tensor") \
	X(EMPTY, "empty.memory_format", fill, FL_ZERO, "aten::empty.memory_format(SymInt[] size, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None, MemoryFormat? memory_format=None) -> Tensor") \
	X(EMPTY_LIKE, "empty_like.default", fill, FL_ZERO, "aten::empty_like(Tensor self, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None, MemoryFormat? memory_format=None) -> Tensor") \
	X(NEW_EMPTY, "new_empty.default", fill, FL_ZERO, "aten::new_empty(Tensor self, SymInt[] size, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None) -> Tensor") \
	X(EMPTY_STRIDED, "empty_strided.default", fill, FL_ZERO, "aten::empty_strided(SymInt[] size, SymInt[] stride, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None) -> Tensor") \
	X(EMPTY_PERMUTED, "empty_permuted.default", fill, FL_ZERO, "aten::empty_permuted(SymInt[] size, int[] physical_layout, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None) -> Tensor") \
	X(SCALAR_TENSOR, "scalar_tensor.default", fill, FL_SCALAR, "aten::scalar_tensor(Scalar s, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None) -> Tensor") \
	X(FILL_SCALAR_, "fill_.Scalar", fill, FL_FILL, "aten::fill_.Scalar(Tensor(a!) self, Scalar value) -> Tensor(a!)") \
	X(FILL_TENSOR_, "fill_.Tensor", fill, FL_FILL_TENSOR, "aten::fill_.Tensor(Tensor(a!) self, Tensor value) -> Tensor(a!)") \
	X(ZERO_, "zero_.default", fill, FL_ZERO, "aten::zero_(Tensor(a!) self) -> Tensor(a!)") \
	X(COPY_, "copy_.default", fill, FL_COPY, "aten::copy_(Tensor(a!) self, Tensor src, bool non_blocking=False) -> Tensor(a!)") \
	X(INDEX_PUT_, "index_put_.default", scatter, SC_INDEX_PUT, "aten::index_put_(Tensor(a!) self, Tensor?[] indices, Tensor values, bool accumulate=False) -> Tensor(a!)") \
	X(FILL_SCALAR, "fill.Scalar", fill, FL_FILL, "aten::fill.Scalar(Tensor self, Scalar value) -> Tensor") \
	X(FILL_TENSOR, "fill.Tensor", fill, FL_FILL_TENSOR, "aten::fill.Tensor(Tensor self, Tensor value) -> Tensor") \
	X(COPY, "copy.default", fill, FL_COPY, "aten::copy(Tensor self, Tensor src, bool non_blocking=False) -> Tensor") \
	X(ARANGE_START_STEP, "arange.start_step", arange, 0, "aten::arange.start_step(Scalar start, Scalar end, Scalar step=1, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None) -> Tensor") \
	X(ARANGE_START, "arange.start", arange, 0, "aten::arange.start(Scalar start, Scalar end, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None) -> Tensor") \
	X(ARANGE, "arange.default", arange, 0, "aten::arange(Scalar end, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None) -> Tensor") \
	X(ARGMAX, "argmax.default", argred, AR_ARGMAX, "aten::argmax(Tensor self, int? dim=None, bool keepdim=False) -> Tensor") \
	X(ARGMIN, "argmin.default", argred, AR_ARGMIN, "aten::argmin(Tensor self, int? dim=None, bool keepdim=False) -> Tensor") \
	X(MAX_DIM, "max.dim", argred, AR_MAX, "aten::max.dim(Tensor self, int dim, bool keepdim=False) -> (Tensor values, Tensor indices)") \
	X(MIN_DIM, "min.dim", argred, AR_MIN, "aten::min.dim(Tensor self, int dim, bool keepdim=False) -> (Tensor values, Tensor indices)") \
	X(SORT, "sort.default", sort, 0, "aten::sort(Tensor self, int dim=-1, bool descending=False) -> (Tensor values, Tensor indices)") \
	X(SORT_STABLE, "sort.stable", sort, 0, "aten::sort.stable(Tensor self, *, bool? stable, int dim=-1, bool descending=False) -> (Tensor values, Tensor indices)") \
	X(TOPK, "topk.default", sort, 1, "aten::topk(Tensor self, SymInt k, int dim=-1, bool largest=True, bool sorted=True) -> (Tensor values, Tensor indices)") \
	X(CUMSUM, "cumsum.default", scan, CS_SUM, "aten::cumsum(Tensor self, int dim, *, ScalarType? dtype=None) -> Tensor") \
	X(TAKE_ALONG_DIM, "take_along_dim.default", take_along_dim, 0, "aten::take_along_dim(Tensor self, Tensor indices, int? dim=None) -> Tensor") \
	X(MASKED_SCATTER, "masked_scatter.default", masked_scatter, 0, "aten::masked_scatter(Tensor self, Tensor mask, Tensor source) -> Tensor") \
	X(GRID_SAMPLER, "grid_sampler.default", grid_sampler, 0, "aten::grid_sampler(Tensor input, Tensor grid, int interpolation_mode, int padding_mode, bool align_corners) -> Tensor") \
	X(GRID_SAMPLER_2D, "grid_sampler_2d.default", grid_sampler, 0, "aten::grid_sampler_2d(Tensor input, Tensor grid, int interpolation_mode, int padding_mode, bool align_corners) -> Tensor") \
	X(EMBEDDING_BAG, "embedding_bag.default", embedding_bag, EB_PLAIN, "aten::embedding_bag(Tensor weight, Tensor indices, Tensor offsets, bool scale_grad_by_freq=False, int mode=0, bool sparse=False, Tensor? per_sample_weights=None, bool include_last_offset=False) -> (Tensor, Tensor, Tensor, Tensor)") \
	X(EMBEDDING_BAG_PAD, "embedding_bag.padding_idx", embedding_bag, EB_WRAP_PAD, "aten::embedding_bag.padding_idx(Tensor weight, Tensor indices, Tensor offsets, bool scale_grad_by_freq, int mode, bool sparse, Tensor? per_sample_weights, bool include_last_offset, int? padding_idx) -> (Tensor, Tensor, Tensor, Tensor)") \
	X(EMBEDDING_BAG_, "_embedding_bag.default", embedding_bag, EB_RAW, "aten::_embedding_bag(Tensor weight, Tensor indices, Tensor offsets, bool scale_grad_by_freq=False, int mode=0, bool sparse=False, Tensor? per_sample_weights=None, bool include_last_offset=False, int padding_idx=-1) -> (Tensor, Tensor, Tensor, Tensor)") \
	X(EMBEDDING_BAG_FWD, "_embedding_bag_forward_only.default", embedding_bag, EB_RAW, "aten::_embedding_bag_forward_only(Tensor weight, Tensor indices, Tensor offsets, bool scale_grad_by_freq=False, int mode=0, bool sparse=False, Tensor? per_sample_weights=None, bool include_last_offset=False, int padding_idx=-1) -> (Tensor, Tensor, Tensor, Tensor)") \
	/* linspace/logspace, tril/triu, fliplr/flipud/rot90, pixel and channel shuffles, diff (ir/lower/more.c) */ \
	X(LINSPACE, "linspace.default", linspace, 0, "aten::linspace(Scalar start, Scalar end, int steps, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None) -> Tensor") \
	X(LINSPACE_TT, "linspace.Tensor_Tensor", linspace, 0, "aten::linspace.Tensor_Tensor(Tensor start, Tensor end, int steps, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None) -> Tensor") \
	X(LINSPACE_TS, "linspace.Tensor_Scalar", linspace, 0, "aten::linspace.Tensor_Scalar(Tensor start, Scalar end, int steps, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None) -> Tensor") \
	X(LINSPACE_ST, "linspace.Scalar_Tensor", linspace, 0, "aten::linspace.Scalar_Tensor(Scalar start, Tensor end, int steps, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None) -> Tensor") \
	X(LOGSPACE, "logspace.default", linspace, 1, "aten::logspace(Scalar start, Scalar end, int steps, float base=10., *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None) -> Tensor") \
	X(LOGSPACE_TT, "logspace.Tensor_Tensor", linspace, 1, "aten::logspace.Tensor_Tensor(Tensor start, Tensor end, int steps, float base=10., *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None) -> Tensor") \
	X(LOGSPACE_TS, "logspace.Tensor_Scalar", linspace, 1, "aten::logspace.Tensor_Scalar(Tensor start, Scalar end, int steps, float base=10., *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None) -> Tensor") \
	X(LOGSPACE_ST, "logspace.Scalar_Tensor", linspace, 1, "aten::logspace.Scalar_Tensor(Scalar start, Tensor end, int steps, float base=10., *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None) -> Tensor") \
	X(TRIL, "tril.default", tri, 0, "aten::tril(Tensor self, SymInt diagonal=0) -> Tensor") \
	X(TRIU, "triu.default", tri, 1, "aten::triu(Tensor self, SymInt diagonal=0) -> Tensor") \
	X(TRIL_, "tril_.default", tri, 0, "aten::tril_(Tensor(a!) self, SymInt diagonal=0) -> Tensor(a!)") \
	X(TRIU_, "triu_.default", tri, 1, "aten::triu_(Tensor(a!) self, SymInt diagonal=0) -> Tensor(a!)") \
	X(FLIPLR, "fliplr.default", rot90, RT_LR, "aten::fliplr(Tensor self) -> Tensor") \
	X(FLIPUD, "flipud.default", rot90, RT_UD, "aten::flipud(Tensor self) -> Tensor") \
	X(ROT90, "rot90.default", rot90, RT_ROT, "aten::rot90(Tensor self, int k=1, int[] dims=[0, 1]) -> Tensor") \
	X(PIXEL_SHUFFLE, "pixel_shuffle.default", shuffle, SH_PIXEL, "aten::pixel_shuffle(Tensor self, int upscale_factor) -> Tensor") \
	X(PIXEL_UNSHUFFLE, "pixel_unshuffle.default", shuffle, SH_UNPIXEL, "aten::pixel_unshuffle(Tensor self, int downscale_factor) -> Tensor") \
	X(CHANNEL_SHUFFLE, "channel_shuffle.default", shuffle, SH_CHANNEL, "aten::channel_shuffle(Tensor self, SymInt groups) -> Tensor") \
	X(NATIVE_CHANNEL_SHUFFLE, "native_channel_shuffle.default", shuffle, SH_CHANNEL, "aten::native_channel_shuffle(Tensor self, SymInt groups) -> Tensor") \
	X(DIFF, "diff.default", diff, 0, "aten::diff(Tensor self, int n=1, int dim=-1, Tensor? prepend=None, Tensor? append=None) -> Tensor") \
	/* scans, selections of sorted rows, binary search, repeat_interleave, index_add/copy/fill, one_hot */ \
	X(CUMPROD, "cumprod.default", scan, CS_PROD, "aten::cumprod(Tensor self, int dim, *, ScalarType? dtype=None) -> Tensor") \
	X(LOGCUMSUMEXP, "logcumsumexp.default", scan, CS_LSE, "aten::logcumsumexp(Tensor self, int dim) -> Tensor") \
	X(CUMMAX, "cummax.default", scan, CS_MAX, "aten::cummax(Tensor self, int dim) -> (Tensor values, Tensor indices)") \
	X(CUMMIN, "cummin.default", scan, CS_MIN, "aten::cummin(Tensor self, int dim) -> (Tensor values, Tensor indices)") \
	X(ARGSORT, "argsort.default", sortsel, PK_ARGSORT, "aten::argsort(Tensor self, int dim=-1, bool descending=False) -> Tensor") \
	X(ARGSORT_STABLE, "argsort.stable", sortsel, PK_ARGSORT, "aten::argsort.stable(Tensor self, *, bool stable, int dim=-1, bool descending=False) -> Tensor") \
	X(MSORT, "msort.default", sortsel, PK_MSORT, "aten::msort(Tensor self) -> Tensor") \
	X(MEDIAN, "median.default", sortsel, PK_ALL_MEDIAN, "aten::median(Tensor self) -> Tensor") \
	X(MEDIAN_DIM, "median.dim", sortsel, PK_MEDIAN, "aten::median.dim(Tensor self, int dim, bool keepdim=False) -> (Tensor values, Tensor indices)") \
	X(NANMEDIAN, "nanmedian.default", sortsel, PK_ALL_NANMEDIAN, "aten::nanmedian(Tensor self) -> Tensor") \
	X(NANMEDIAN_DIM, "nanmedian.dim", sortsel, PK_NANMEDIAN, "aten::nanmedian.dim(Tensor self, int dim, bool keepdim=False) -> (Tensor values, Tensor indices)") \
	X(KTHVALUE, "kthvalue.default", sortsel, PK_KTH, "aten::kthvalue(Tensor self, SymInt k, int dim=-1, bool keepdim=False) -> (Tensor values, Tensor indices)") \
	X(MODE, "mode.default", sortsel, PK_MODE, "aten::mode(Tensor self, int dim=-1, bool keepdim=False) -> (Tensor values, Tensor indices)") \
	X(BUCKETIZE, "bucketize.Tensor", search, 0, "aten::bucketize.Tensor(Tensor self, Tensor boundaries, *, bool out_int32=False, bool right=False) -> Tensor") \
	X(BUCKETIZE_SCALAR, "bucketize.Scalar", search, 0, "aten::bucketize.Scalar(Scalar self, Tensor boundaries, *, bool out_int32=False, bool right=False) -> Tensor") \
	X(SEARCHSORTED, "searchsorted.Tensor", search, 1, "aten::searchsorted.Tensor(Tensor sorted_sequence, Tensor self, *, bool out_int32=False, bool right=False, str? side=None, Tensor? sorter=None) -> Tensor") \
	X(SEARCHSORTED_SCALAR, "searchsorted.Scalar", search, 1, "aten::searchsorted.Scalar(Tensor sorted_sequence, Scalar self, *, bool out_int32=False, bool right=False, str? side=None, Tensor? sorter=None) -> Tensor") \
	X(REPEAT_INTERLEAVE_INT, "repeat_interleave.self_int", repeat_interleave, 0, "aten::repeat_interleave.self_int(Tensor self, SymInt repeats, int? dim=None, *, SymInt? output_size=None) -> Tensor") \
	X(REPEAT_INTERLEAVE, "repeat_interleave.Tensor", repeat_interleave, 1, "aten::repeat_interleave.Tensor(Tensor repeats, *, SymInt? output_size=None) -> Tensor") \
	X(REPEAT_INTERLEAVE_SELF, "repeat_interleave.self_Tensor", repeat_interleave, 2, "aten::repeat_interleave.self_Tensor(Tensor self, Tensor repeats, int? dim=None, *, SymInt? output_size=None) -> Tensor") \
	X(INDEX_ADD, "index_add.default", index_op, IX_ADD, "aten::index_add(Tensor self, int dim, Tensor index, Tensor source, *, Scalar alpha=1) -> Tensor") \
	X(INDEX_COPY, "index_copy.default", index_op, IX_COPY, "aten::index_copy(Tensor self, int dim, Tensor index, Tensor source) -> Tensor") \
	X(INDEX_FILL, "index_fill.int_Scalar", index_op, IX_FILL, "aten::index_fill.int_Scalar(Tensor self, int dim, Tensor index, Scalar value) -> Tensor") \
	X(INDEX_FILL_TENSOR, "index_fill.int_Tensor", index_op, IX_FILL_TENSOR, "aten::index_fill.int_Tensor(Tensor self, int dim, Tensor index, Tensor value) -> Tensor") \
	X(ONE_HOT, "one_hot.default", one_hot, 0, "aten::one_hot(Tensor self, int num_classes=-1) -> Tensor")
