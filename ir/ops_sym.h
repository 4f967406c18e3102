/*
 * ops_sym.h - ATen ops of symbolic shapes and scalars: sizes, strides and
 * numbers read out of tensors, and the export's guards. They produce
 * SymInt / SymFloat / SymBool values, not tensors; shapes are specialized
 * before the nodes are read (ir/import.c), so most fold to numbers at
 * compile time (ir/lower/sym.c). Rows as in ops.h.
 */
#ifndef DOCCC_OPS_SYM_H
#define DOCCC_OPS_SYM_H

enum { SQ_SIZE, SQ_STRIDE, SQ_NUMEL, SQ_CONTIGUOUS };

#define ATEN_OPS_SYM(X) \
	X(SYM_SIZE, "sym_size.int", sym_query, SQ_SIZE, "aten::sym_size.int(Tensor self, int dim) -> SymInt") \
	X(SYM_STRIDE, "sym_stride.int", sym_query, SQ_STRIDE, "aten::sym_stride.int(Tensor self, int dim) -> SymInt") \
	X(SYM_NUMEL, "sym_numel.default", sym_query, SQ_NUMEL, "aten::sym_numel(Tensor self) -> SymInt") \
	X(SYM_IS_CONTIGUOUS, "sym_is_contiguous.default", sym_query, SQ_CONTIGUOUS, "aten::sym_is_contiguous(Tensor self, MemoryFormat memory_format=0) -> SymBool") \
	X(LOCAL_SCALAR_DENSE, "_local_scalar_dense.default", item, 0, "aten::_local_scalar_dense(Tensor self) -> Scalar") \
	X(ITEM, "item.default", item, 0, "aten::item(Tensor self) -> Scalar") \
	X(ASSERT_SCALAR, "_assert_scalar.default", assert_scalar, 0, "aten::_assert_scalar(Scalar self, str assert_msg) -> ()") \
	/* run-time assertions on tensors (ir/lower/more.c) */ \
	X(ASSERT_ASYNC, "_assert_async.default", assert_async, 0, "aten::_assert_async(Tensor self) -> ()") \
	X(ASSERT_ASYNC_MSG, "_assert_async.msg", assert_async, 0, "aten::_assert_async.msg(Tensor self, str assert_msg) -> ()")

#endif
