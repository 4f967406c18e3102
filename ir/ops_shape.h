/*
 * ops_shape.h - the op-table rows of the shape family: views and data
 * movement. Reshapes, permutations, slicing, squeezes and expands (views
 * that cost nothing; unfold's sliding windows and broadcast_tensors too),
 * splitting, concatenation and stacking, padding,
 * flips, rolls and repeats (remapped copies), fills and creation (full,
 * zeros, arange, range, linspace, logspace, tril/triu, eye; signal windows,
 * FFT frequencies and tril/triu indices as compile-time tables), rot90 and flips, pixel
 * and channel shuffles, diff, repeat_interleave, meshgrid, dropout in
 * inference and the ops that are the identity.
 *
 * LIB_OPS_SHAPE rows: X(ENUM, "name", expansion, "doc"): a library-node kind
 * and its expansion function expand_<expansion> (ir/expand/shape.c).
 * ATEN_OPS_SHAPE rows: X(ENUM, "overload", lowering, param, "schema"): an
 * ATen overload, its lowering function lower_<lowering> (ir/lower/shape.c),
 * a parameter for that lowering, and PyTorch's schema string.
 * Included by ops.h only.
 */

/* view kinds (lower_view's param) and the other views (lower_view2) */
enum { VW_T, VW_PERMUTE, VW_TRANSPOSE, VW_RESHAPE, VW_FLATTEN, VW_UNFLATTEN, VW_UNSQUEEZE,
       VW_SQUEEZE, VW_EXPAND, VW_SELECT, VW_SLICE, VW_ALIAS, VW_NUMPY_T, VW_MT };
enum { VW2_AS_STRIDED, VW2_DIAGONAL, VW2_NARROW, VW2_UNFOLD };
/* splits (lower_split), remapped copies (lower_remap), fills (lower_fill) */
enum { SP_UNBIND, SP_SIZE, SP_SIZES, SP_CHUNK };
enum { RM_FLIP, RM_REPEAT, RM_ROLL, RM_CONSTANT, RM_PAD, RM_REFLECT, RM_REPLICATE };
enum { FL_VALUE, FL_ZERO, FL_ONE, FL_SCALAR, FL_FILL, FL_FILL_TENSOR, FL_COPY };
/* fliplr/flipud/rot90 (lower_rot90), the shuffles (lower_shuffle) */
enum { RT_LR, RT_UD, RT_ROT };
/* tables computed at compile time (lower_table's param) */
enum { TB_HANN, TB_HAMMING, TB_BLACKMAN, TB_BARTLETT, TB_KAISER, TB_FFTFREQ, TB_RFFTFREQ, TB_TRIL_INDICES,
       TB_TRIU_INDICES };
enum { SH_PIXEL, SH_UNPIXEL, SH_CHANNEL };
/* per-dim kinds of a remap node ("kinds" attribute) */
enum { RK_OFFSET, RK_FLIP, RK_REFLECT, RK_REPLICATE, RK_CIRCULAR };

#define LIB_OPS_SHAPE(X) \
	X(CAT, "cat", cat, "concatenation along one dim") \
	X(REMAP, "remap", remap, "copy with per-dim index maps: offset (constant pad), flip, reflect, replicate, circular") \
	X(ARANGE, "arange", arange, "start + i*step along a 1-D output") \
	X(LINSPACE, "linspace", linspace, "linspace / logspace with torch's two-sided formula and rounding, start and end constants or 0-d tensors") \
	X(TRI, "tri", tri, "tril / triu: elements on the kept side of a diagonal, zeros elsewhere")

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
	X(NUMPY_T, "numpy_T.default", view, VW_NUMPY_T, "aten::numpy_T(Tensor(a) self) -> Tensor(a)") \
	X(MT, "mT.default", view, VW_MT, "aten::mT(Tensor(a) self) -> Tensor(a)") \
	X(MH, "mH.default", view, VW_MT, "aten::mH(Tensor(a) self) -> Tensor(a)") \
	X(ADJOINT, "adjoint.default", view, VW_MT, "aten::adjoint(Tensor(a) self) -> Tensor(a)") \
	X(CONTIGUOUS, "contiguous.default", view, VW_ALIAS, "aten::contiguous(Tensor(a) self, *, MemoryFormat memory_format=0) -> Tensor(a)") \
	X(CLONE, "clone.default", view, VW_ALIAS, "aten::clone(Tensor self, *, MemoryFormat? memory_format=None) -> Tensor") \
	X(LIFT_FRESH_COPY, "lift_fresh_copy.default", view, VW_ALIAS, "aten::lift_fresh_copy(Tensor self) -> Tensor") \
	X(VIEW_AS, "view_as.default", view, VW_RESHAPE, "aten::view_as(Tensor(a) self, Tensor other) -> Tensor(a)") \
	X(BROADCAST_TENSORS, "broadcast_tensors.default", broadcast, 0, "aten::broadcast_tensors(Tensor[] tensors) -> Tensor[]") \
	X(EYE, "eye.default", eye, 0, "aten::eye(SymInt n, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None) -> Tensor") \
	X(EYE_M, "eye.m", eye, 0, "aten::eye.m(SymInt n, SymInt m, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None) -> Tensor") \
	X(BROADCAST_TO, "broadcast_to.default", view, VW_EXPAND, "aten::broadcast_to(Tensor(a) self, SymInt[] size) -> Tensor(a)") \
	X(RESHAPE_AS, "reshape_as.default", view, VW_RESHAPE, "aten::reshape_as(Tensor(a) self, Tensor other) -> Tensor(a)") \
	X(EXPAND_AS, "expand_as.default", view, VW_EXPAND, "aten::expand_as(Tensor(a) self, Tensor other) -> Tensor(a)") \
	X(AS_STRIDED, "as_strided.default", view2, VW2_AS_STRIDED, "aten::as_strided(Tensor(a) self, SymInt[] size, SymInt[] stride, SymInt? storage_offset=None) -> Tensor(a)") \
	X(DIAGONAL, "diagonal.default", view2, VW2_DIAGONAL, "aten::diagonal(Tensor(a) self, int offset=0, int dim1=0, int dim2=1) -> Tensor(a)") \
	X(UNFOLD, "unfold.default", view2, VW2_UNFOLD, "aten::unfold(Tensor(a) self, int dimension, int size, int step) -> Tensor(a)") \
	X(NARROW, "narrow.default", view2, VW2_NARROW, "aten::narrow(Tensor(a) self, int dim, SymInt start, SymInt length) -> Tensor(a)") \
	X(CAT, "cat.default", cat, 0, "aten::cat(Tensor[] tensors, int dim=0) -> Tensor") \
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
	X(ZERO_, "zero_.default", fill, FL_ZERO, "aten::zero_(Tensor(a!) self) -> Tensor(a!)") \
	X(FILL_SCALAR, "fill.Scalar", fill, FL_FILL, "aten::fill.Scalar(Tensor self, Scalar value) -> Tensor") \
	X(FILL_TENSOR, "fill.Tensor", fill, FL_FILL_TENSOR, "aten::fill.Tensor(Tensor self, Tensor value) -> Tensor") \
	X(COPY, "copy.default", fill, FL_COPY, "aten::copy(Tensor self, Tensor src, bool non_blocking=False) -> Tensor") \
	X(ARANGE_START_STEP, "arange.start_step", arange, 0, "aten::arange.start_step(Scalar start, Scalar end, Scalar step=1, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None) -> Tensor") \
	X(ARANGE_START, "arange.start", arange, 0, "aten::arange.start(Scalar start, Scalar end, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None) -> Tensor") \
	X(ARANGE, "arange.default", arange, 0, "aten::arange(Scalar end, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None) -> Tensor") \
	X(HANN_WINDOW, "hann_window.default", table, TB_HANN, "aten::hann_window(int window_length, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None) -> Tensor") \
	X(HANN_WINDOW_P, "hann_window.periodic", table, TB_HANN, "aten::hann_window.periodic(int window_length, bool periodic, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None) -> Tensor") \
	X(HAMMING_WINDOW, "hamming_window.default", table, TB_HAMMING, "aten::hamming_window(int window_length, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None) -> Tensor") \
	X(HAMMING_WINDOW_P, "hamming_window.periodic", table, TB_HAMMING, "aten::hamming_window.periodic(int window_length, bool periodic, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None) -> Tensor") \
	X(HAMMING_WINDOW_A, "hamming_window.periodic_alpha", table, TB_HAMMING, "aten::hamming_window.periodic_alpha(int window_length, bool periodic, float alpha, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None) -> Tensor") \
	X(HAMMING_WINDOW_AB, "hamming_window.periodic_alpha_beta", table, TB_HAMMING, "aten::hamming_window.periodic_alpha_beta(int window_length, bool periodic, float alpha, float beta, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None) -> Tensor") \
	X(BLACKMAN_WINDOW, "blackman_window.default", table, TB_BLACKMAN, "aten::blackman_window(int window_length, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None) -> Tensor") \
	X(BLACKMAN_WINDOW_P, "blackman_window.periodic", table, TB_BLACKMAN, "aten::blackman_window.periodic(int window_length, bool periodic, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None) -> Tensor") \
	X(BARTLETT_WINDOW, "bartlett_window.default", table, TB_BARTLETT, "aten::bartlett_window(int window_length, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None) -> Tensor") \
	X(BARTLETT_WINDOW_P, "bartlett_window.periodic", table, TB_BARTLETT, "aten::bartlett_window.periodic(int window_length, bool periodic, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None) -> Tensor") \
	X(KAISER_WINDOW, "kaiser_window.default", table, TB_KAISER, "aten::kaiser_window(int window_length, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None) -> Tensor") \
	X(KAISER_WINDOW_P, "kaiser_window.periodic", table, TB_KAISER, "aten::kaiser_window.periodic(int window_length, bool periodic, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None) -> Tensor") \
	X(KAISER_WINDOW_B, "kaiser_window.beta", table, TB_KAISER, "aten::kaiser_window.beta(int window_length, bool periodic, float beta, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None) -> Tensor") \
	X(FFT_FFTFREQ, "fft_fftfreq.default", table, TB_FFTFREQ, "aten::fft_fftfreq(int n, float d=1., *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None) -> Tensor") \
	X(FFT_RFFTFREQ, "fft_rfftfreq.default", table, TB_RFFTFREQ, "aten::fft_rfftfreq(int n, float d=1., *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None) -> Tensor") \
	X(TRIL_INDICES, "tril_indices.default", table, TB_TRIL_INDICES, "aten::tril_indices(int row, int col, int offset=0, *, ScalarType? dtype=4, Layout? layout=None, Device? device=None, bool? pin_memory=None) -> Tensor") \
	X(TRIU_INDICES, "triu_indices.default", table, TB_TRIU_INDICES, "aten::triu_indices(int row, int col, int offset=0, *, ScalarType? dtype=4, Layout? layout=None, Device? device=None, bool? pin_memory=None) -> Tensor") \
	X(RANGE, "range.default", arange, 0, "aten::range(Scalar start, Scalar end, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None) -> Tensor") \
	X(RANGE_STEP, "range.step", arange, 0, "aten::range.step(Scalar start, Scalar end, Scalar step=1, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None) -> Tensor") \
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
	X(MESHGRID, "meshgrid.default", meshgrid, 0, "aten::meshgrid(Tensor[] tensors) -> Tensor[]") \
	X(MESHGRID_IDX, "meshgrid.indexing", meshgrid, 1, "aten::meshgrid.indexing(Tensor[] tensors, *, str indexing) -> Tensor[]") \
	X(DROPOUT, "dropout.default", dropout, 0, "aten::dropout(Tensor input, float p, bool train) -> Tensor") \
	X(ASSERT_META, "_assert_tensor_metadata.default", noop, 0, "aten::_assert_tensor_metadata(Tensor a, SymInt[]? size=None, SymInt[]? stride=None, ScalarType? dtype=None, *, Device? device=None, Layout? layout=None) -> ()") \
	X(REPEAT_INTERLEAVE_INT, "repeat_interleave.self_int", repeat_interleave, 0, "aten::repeat_interleave.self_int(Tensor self, SymInt repeats, int? dim=None, *, SymInt? output_size=None) -> Tensor") \
	X(REPEAT_INTERLEAVE, "repeat_interleave.Tensor", repeat_interleave, 1, "aten::repeat_interleave.Tensor(Tensor repeats, *, SymInt? output_size=None) -> Tensor") \
	X(REPEAT_INTERLEAVE_SELF, "repeat_interleave.self_Tensor", repeat_interleave, 2, "aten::repeat_interleave.self_Tensor(Tensor self, Tensor repeats, int? dim=None, *, SymInt? output_size=None) -> Tensor") \
	X(FLIPLR, "fliplr.default", rot90, RT_LR, "aten::fliplr(Tensor self) -> Tensor") \
	X(FLIPUD, "flipud.default", rot90, RT_UD, "aten::flipud(Tensor self) -> Tensor") \
	X(ROT90, "rot90.default", rot90, RT_ROT, "aten::rot90(Tensor self, int k=1, int[] dims=[0, 1]) -> Tensor") \
	X(PIXEL_SHUFFLE, "pixel_shuffle.default", shuffle, SH_PIXEL, "aten::pixel_shuffle(Tensor self, int upscale_factor) -> Tensor") \
	X(PIXEL_UNSHUFFLE, "pixel_unshuffle.default", shuffle, SH_UNPIXEL, "aten::pixel_unshuffle(Tensor self, int downscale_factor) -> Tensor") \
	X(CHANNEL_SHUFFLE, "channel_shuffle.default", shuffle, SH_CHANNEL, "aten::channel_shuffle(Tensor self, SymInt groups) -> Tensor") \
	X(NATIVE_CHANNEL_SHUFFLE, "native_channel_shuffle.default", shuffle, SH_CHANNEL, "aten::native_channel_shuffle(Tensor self, SymInt groups) -> Tensor") \
	X(DIFF, "diff.default", diff, 0, "aten::diff(Tensor self, int n=1, int dim=-1, Tensor? prepend=None, Tensor? append=None) -> Tensor")
