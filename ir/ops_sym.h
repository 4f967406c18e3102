/*
 * ops_sym.h - the op-table rows of the sym family: ATen ops of symbolic
 * shapes and scalars (sizes, strides and numbers read out of tensors) and
 * the export's assertions. Most produce SymInt / SymFloat / SymBool values,
 * not tensors: a value that depends on no run-time dim is a number at
 * compile time, one of run-time dims keeps its expression, and a guard on
 * them (_assert_scalar) becomes a run-time check of the library
 * (ir/lower/sym.c, which also evaluates the Python-level arithmetic of
 * such values). _assert_async checks a tensor's element when the library
 * runs (LIB_ASSERT).
 *
 * LIB_OPS_SYM rows: X(ENUM, "name", expansion, "doc"): a library-node kind
 * and its expansion function expand_<expansion> (ir/expand/sym.c).
 * ATEN_OPS_SYM rows: X(ENUM, "overload", lowering, param, "schema"): an
 * ATen overload, its lowering function lower_<lowering> (ir/lower/sym.c),
 * a parameter for that lowering, and PyTorch's schema string.
 * Included by ops.h only.
 */

/* what sym_query reads */
enum { SQ_SIZE, SQ_STRIDE, SQ_NUMEL, SQ_CONTIGUOUS };

#define LIB_OPS_SYM(X) \
	X(ASSERT, "assert", assert, "run-time assertion: a zero element fails the run with DOCCC_ERR_ASSERT and a message")

#define ATEN_OPS_SYM(X) \
	X(SYM_SIZE, "sym_size.int", sym_query, SQ_SIZE, "aten::sym_size.int(Tensor self, int dim) -> SymInt") \
	X(SYM_STRIDE, "sym_stride.int", sym_query, SQ_STRIDE, "aten::sym_stride.int(Tensor self, int dim) -> SymInt") \
	X(SYM_NUMEL, "sym_numel.default", sym_query, SQ_NUMEL, "aten::sym_numel(Tensor self) -> SymInt") \
	X(SYM_IS_CONTIGUOUS, "sym_is_contiguous.default", sym_query, SQ_CONTIGUOUS, "aten::sym_is_contiguous(Tensor self, MemoryFormat memory_format=0) -> SymBool") \
	X(LOCAL_SCALAR_DENSE, "_local_scalar_dense.default", item, 0, "aten::_local_scalar_dense(Tensor self) -> Scalar") \
	X(ITEM, "item.default", item, 0, "aten::item(Tensor self) -> Scalar") \
	X(ASSERT_SCALAR, "_assert_scalar.default", assert_scalar, 0, "aten::_assert_scalar(Scalar self, str assert_msg) -> ()") \
	X(ASSERT_ASYNC, "_assert_async.default", assert_async, 0, "aten::_assert_async(Tensor self) -> ()") \
	X(ASSERT_ASYNC_MSG, "_assert_async.msg", assert_async, 0, "aten::_assert_async.msg(Tensor self, str assert_msg) -> ()")
