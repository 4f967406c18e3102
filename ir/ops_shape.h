/*
 * ops_shape.h - the op-table rows of the shape family (views and data movement: reshapes, permutations, slicing, concatenation, assertions).
 *
 * LIB_OPS_SHAPE rows: X(ENUM, "name", expansion, "doc"): a library-node kind
 * and its expansion function expand_<expansion> (ir/expand/).
 * ATEN_OPS_SHAPE rows: X(ENUM, "overload", lowering, param, "schema"): an ATen
 * overload, its lowering function lower_<lowering> (ir/lower/), a parameter
 * for that lowering, and PyTorch's schema string.
 * Included by ops.h only.
 */
#define LIB_OPS_SHAPE(X) \
	X(CAT, "cat", cat, "concatenation along one dim")

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
	X(CONTIGUOUS, "contiguous.default", view, VW_ALIAS, "aten::contiguous(Tensor(a) self, *, MemoryFormat memory_format=0) -> Tensor(a)") \
	X(CLONE, "clone.default", view, VW_ALIAS, "aten::clone(Tensor self, *, MemoryFormat? memory_format=None) -> Tensor") \
	X(LIFT_FRESH_COPY, "lift_fresh_copy.default", view, VW_ALIAS, "aten::lift_fresh_copy(Tensor self) -> Tensor") \
	X(DROPOUT, "dropout.default", dropout, 0, "aten::dropout(Tensor input, float p, bool train) -> Tensor") \
	X(ASSERT_META, "_assert_tensor_metadata.default", noop, 0, "aten::_assert_tensor_metadata(Tensor a, SymInt[]? size=None, SymInt[]? stride=None, ScalarType? dtype=None, *, Device? device=None, Layout? layout=None) -> ()") \
	X(CAT, "cat.default", cat, 0, "aten::cat(Tensor[] tensors, int dim=0) -> Tensor")
