/*
 * ops_attention.h - the op-table rows of the attention family:
 * scaled_dot_product_attention as one fused node (causal or with a mask,
 * grouped-query heads), whose expansion computes the scores a query row
 * or a tile of rows at a time.
 *
 * LIB_OPS_ATTENTION rows: X(ENUM, "name", expansion, "doc"): a library-node
 * kind and its expansion function expand_<expansion>
 * (ir/expand/attention.c). ATEN_OPS_ATTENTION rows: X(ENUM, "overload",
 * lowering, param, "schema"): an ATen overload, its lowering function
 * lower_<lowering> (ir/lower/attention.c), a parameter for that lowering,
 * and PyTorch's schema string.
 * Included by ops.h only.
 */

#define LIB_OPS_ATTENTION(X) \
	X(ATTENTION, "attention", attention, "fused scaled dot-product attention, one softmax row at a time")

#define ATEN_OPS_ATTENTION(X) \
	X(SDPA, "scaled_dot_product_attention.default", attention, 0, "aten::scaled_dot_product_attention(Tensor query, Tensor key, Tensor value, Tensor? attn_mask=None, float dropout_p=0., bool is_causal=False, *, float? scale=None, bool enable_gqa=False) -> Tensor")
