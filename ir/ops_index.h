/*
 * ops_index.h - the op-table rows of the index family: reads and writes at
 * positions held in tensors. Gathers (index_select, gather, embedding,
 * index.Tensor, take_along_dim), scatters (scatter, scatter_add,
 * scatter_reduce, index_put, slice_scatter and select_scatter, index_add,
 * index_copy, index_fill, one_hot), embedding bags and masked_scatter. An
 * index outside its dim fails the run with DOCCC_ERR_INDEX, where torch
 * raises.
 *
 * LIB_OPS_INDEX rows: X(ENUM, "name", expansion, "doc"): a library-node kind
 * and its expansion function expand_<expansion> (ir/expand/index.c).
 * ATEN_OPS_INDEX rows: X(ENUM, "overload", lowering, param, "schema"): an
 * ATen overload, its lowering function lower_<lowering> (ir/lower/index.c),
 * a parameter for that lowering, and PyTorch's schema string.
 * Included by ops.h only.
 */

/* gather modes (lower_gather's param); scatter modes (LIB_SCATTER "mode";
 * SC_VIEW: the writes through views of ir/lower/api.c); index_add /
 * index_copy / index_fill (lower_index_op) */
enum { GA_INDEX_SELECT, GA_GATHER, GA_EMBEDDING, GA_INDEX };
enum { SC_SRC, SC_VALUE, SC_ADD, SC_REDUCE, SC_INDEX_PUT, SC_SLICE, SC_SELECT, SC_VIEW };
/* SC_REDUCE's "reduce", in the order of scatter_reduce's names (sum, prod,
 * amax, amin, mean) */
enum { SR_SUM, SR_PROD, SR_AMAX, SR_AMIN, SR_MEAN };
enum { IX_ADD, IX_COPY, IX_FILL, IX_FILL_TENSOR };
/* embedding_bag overloads: padding_idx absent (embedding_bag.default), an
 * optional index that wraps like a dim (.padding_idx), or torch's raw
 * convention, negative = none (_embedding_bag*) */
enum { EB_PLAIN, EB_WRAP_PAD, EB_RAW };
/* embedding_bag modes, numbered as torch's */
enum { EBM_SUM, EBM_MEAN, EBM_MAX };

#define LIB_OPS_INDEX(X) \
	X(GATHER, "gather", gather, "reads at data-dependent indices: index_select, gather, embedding, index.Tensor") \
	X(SCATTER, "scatter", scatter, "writes at data-dependent or sliced positions: scatter*, index_put, slice/select_scatter") \
	X(EMBBAG, "embedding_bag", embedding_bag, "sums, means or maxima of embedding rows over bags given by offsets") \
	X(MSCATTER, "masked_scatter", masked_scatter, "self where a mask is false, else the source's elements in order")

#define ATEN_OPS_INDEX(X) \
	X(INDEX_SELECT, "index_select.default", gather, GA_INDEX_SELECT, "aten::index_select(Tensor self, int dim, Tensor index) -> Tensor") \
	X(GATHER, "gather.default", gather, GA_GATHER, "aten::gather(Tensor self, int dim, Tensor index, *, bool sparse_grad=False) -> Tensor") \
	X(EMBEDDING, "embedding.default", gather, GA_EMBEDDING, "aten::embedding(Tensor weight, Tensor indices, SymInt padding_idx=-1, bool scale_grad_by_freq=False, bool sparse=False) -> Tensor") \
	X(INDEX, "index.Tensor", gather, GA_INDEX, "aten::index.Tensor(Tensor self, Tensor?[] indices) -> Tensor") \
	X(SCATTER_SRC, "scatter.src", scatter, SC_SRC, "aten::scatter.src(Tensor self, int dim, Tensor index, Tensor src) -> Tensor") \
	X(SCATTER_VALUE, "scatter.value", scatter, SC_VALUE, "aten::scatter.value(Tensor self, int dim, Tensor index, Scalar value) -> Tensor") \
	X(SCATTER_ADD, "scatter_add.default", scatter, SC_ADD, "aten::scatter_add(Tensor self, int dim, Tensor index, Tensor src) -> Tensor") \
	X(SCATTER_REDUCE_OLD, "scatter.reduce", scatter, SC_REDUCE, "aten::scatter.reduce(Tensor self, int dim, Tensor index, Tensor src, *, str reduce) -> Tensor") \
	X(SCATTER_VALUE_REDUCE, "scatter.value_reduce", scatter, SC_REDUCE, "aten::scatter.value_reduce(Tensor self, int dim, Tensor index, Scalar value, *, str reduce) -> Tensor") \
	X(SCATTER_REDUCE, "scatter_reduce.two", scatter, SC_REDUCE, "aten::scatter_reduce.two(Tensor self, int dim, Tensor index, Tensor src, str reduce, *, bool include_self=True) -> Tensor") \
	X(INDEX_PUT, "index_put.default", scatter, SC_INDEX_PUT, "aten::index_put(Tensor self, Tensor?[] indices, Tensor values, bool accumulate=False) -> Tensor") \
	X(SLICE_SCATTER, "slice_scatter.default", scatter, SC_SLICE, "aten::slice_scatter(Tensor self, Tensor src, int dim=0, SymInt? start=None, SymInt? end=None, SymInt step=1) -> Tensor") \
	X(SELECT_SCATTER, "select_scatter.default", scatter, SC_SELECT, "aten::select_scatter(Tensor self, Tensor src, int dim, SymInt index) -> Tensor") \
	X(INDEX_ADD, "index_add.default", index_op, IX_ADD, "aten::index_add(Tensor self, int dim, Tensor index, Tensor source, *, Scalar alpha=1) -> Tensor") \
	X(INDEX_COPY, "index_copy.default", index_op, IX_COPY, "aten::index_copy(Tensor self, int dim, Tensor index, Tensor source) -> Tensor") \
	X(INDEX_FILL, "index_fill.int_Scalar", index_op, IX_FILL, "aten::index_fill.int_Scalar(Tensor self, int dim, Tensor index, Scalar value) -> Tensor") \
	X(INDEX_FILL_TENSOR, "index_fill.int_Tensor", index_op, IX_FILL_TENSOR, "aten::index_fill.int_Tensor(Tensor self, int dim, Tensor index, Tensor value) -> Tensor") \
	X(EMBEDDING_BAG, "embedding_bag.default", embedding_bag, EB_PLAIN, "aten::embedding_bag(Tensor weight, Tensor indices, Tensor offsets, bool scale_grad_by_freq=False, int mode=0, bool sparse=False, Tensor? per_sample_weights=None, bool include_last_offset=False) -> (Tensor, Tensor, Tensor, Tensor)") \
	X(EMBEDDING_BAG_PAD, "embedding_bag.padding_idx", embedding_bag, EB_WRAP_PAD, "aten::embedding_bag.padding_idx(Tensor weight, Tensor indices, Tensor offsets, bool scale_grad_by_freq, int mode, bool sparse, Tensor? per_sample_weights, bool include_last_offset, int? padding_idx) -> (Tensor, Tensor, Tensor, Tensor)") \
	X(EMBEDDING_BAG_, "_embedding_bag.default", embedding_bag, EB_RAW, "aten::_embedding_bag(Tensor weight, Tensor indices, Tensor offsets, bool scale_grad_by_freq=False, int mode=0, bool sparse=False, Tensor? per_sample_weights=None, bool include_last_offset=False, int padding_idx=-1) -> (Tensor, Tensor, Tensor, Tensor)") \
	X(EMBEDDING_BAG_FWD, "_embedding_bag_forward_only.default", embedding_bag, EB_RAW, "aten::_embedding_bag_forward_only(Tensor weight, Tensor indices, Tensor offsets, bool scale_grad_by_freq=False, int mode=0, bool sparse=False, Tensor? per_sample_weights=None, bool include_last_offset=False, int padding_idx=-1) -> (Tensor, Tensor, Tensor, Tensor)") \
	X(MASKED_SCATTER, "masked_scatter.default", masked_scatter, 0, "aten::masked_scatter(Tensor self, Tensor mask, Tensor source) -> Tensor") \
	X(TAKE_ALONG_DIM, "take_along_dim.default", take_along_dim, 0, "aten::take_along_dim(Tensor self, Tensor indices, int? dim=None) -> Tensor") \
	X(ONE_HOT, "one_hot.default", one_hot, 0, "aten::one_hot(Tensor self, int num_classes=-1) -> Tensor")
