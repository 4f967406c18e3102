/*
 * ops_linalg.h - the op-table rows of the linalg family: matrix products
 * and convolution. Convolutions of 1 to 3 spatial dims (conv1d, conv2d,
 * conv3d, 'same'/'valid' padding, transposed), linear and the matrix
 * products (mm, bmm, addmm, baddbmm, matmul with 1-d operands), einsum
 * (parsed and lowered onto views, reduce, mul and gemm nodes), the
 * pairwise distances cdist and pdist, and the grouped matrix product of
 * mixture-of-experts layers (transformers' custom op grouped_mm_fallback,
 * a row of another namespace: its overload is named with the namespace).
 *
 * LIB_OPS_LINALG rows: X(ENUM, "name", expansion, "doc"): a library-node
 * kind and its expansion function expand_<expansion> (ir/expand/linalg.c).
 * ATEN_OPS_LINALG rows: X(ENUM, "overload", lowering, param, "schema"): an
 * ATen (or custom) overload, its lowering function lower_<lowering> (ir/lower/linalg.c),
 * a parameter for that lowering, and PyTorch's schema string.
 * Included by ops.h only.
 */

#define LIB_OPS_LINALG(X) \
	X(CONV, "conv", conv, "N-d convolution, stride/padding/dilation/groups, bias") \
	X(GEMM, "gemm", gemm, "batched matrix product alpha*A@B + beta*bias") \
	X(CDIST, "cdist", cdist, "p-norm distances between the rows of two matrices (batched), or condensed pairwise distances of one") \
	X(GROUPED_GEMM, "grouped_gemm", grouped_gemm, "rows in groups by cumulative offsets, each group times its own matrix (mixture of experts)")

#define ATEN_OPS_LINALG(X) \
	X(CONV1D, "conv1d.default", conv, 0, "aten::conv1d(Tensor input, Tensor weight, Tensor? bias=None, SymInt[1] stride=[1], SymInt[1] padding=[0], SymInt[1] dilation=[1], SymInt groups=1) -> Tensor") \
	X(CONV2D, "conv2d.default", conv, 0, "aten::conv2d(Tensor input, Tensor weight, Tensor? bias=None, SymInt[2] stride=[1, 1], SymInt[2] padding=[0, 0], SymInt[2] dilation=[1, 1], SymInt groups=1) -> Tensor") \
	X(CONVOLUTION, "convolution.default", conv, 1, "aten::convolution(Tensor input, Tensor weight, Tensor? bias, SymInt[] stride, SymInt[] padding, SymInt[] dilation, bool transposed, SymInt[] output_padding, SymInt groups) -> Tensor") \
	X(CONV1D_PAD, "conv1d.padding", conv, 3, "aten::conv1d.padding(Tensor input, Tensor weight, Tensor? bias=None, SymInt[1] stride=[1], str padding=\"valid\", SymInt[1] dilation=[1], SymInt groups=1) -> Tensor") \
	X(CONV2D_PAD, "conv2d.padding", conv, 3, "aten::conv2d.padding(Tensor input, Tensor weight, Tensor? bias=None, SymInt[2] stride=[1, 1], str padding=\"valid\", SymInt[2] dilation=[1, 1], SymInt groups=1) -> Tensor") \
	X(CONV3D, "conv3d.default", conv, 0, "aten::conv3d(Tensor input, Tensor weight, Tensor? bias=None, SymInt[3] stride=[1, 1, 1], SymInt[3] padding=[0, 0, 0], SymInt[3] dilation=[1, 1, 1], SymInt groups=1) -> Tensor") \
	X(CONV_T1D, "conv_transpose1d.default", conv, 2, "aten::conv_transpose1d(Tensor input, Tensor weight, Tensor? bias=None, SymInt[1] stride=[1], SymInt[1] padding=[0], SymInt[1] output_padding=[0], SymInt groups=1, SymInt[1] dilation=[1]) -> Tensor") \
	X(CONV_T2D, "conv_transpose2d.input", conv, 2, "aten::conv_transpose2d.input(Tensor input, Tensor weight, Tensor? bias=None, SymInt[2] stride=[1, 1], SymInt[2] padding=[0, 0], SymInt[2] output_padding=[0, 0], SymInt groups=1, SymInt[2] dilation=[1, 1]) -> Tensor") \
	X(CONV_T3D, "conv_transpose3d.input", conv, 2, "aten::conv_transpose3d.input(Tensor input, Tensor weight, Tensor? bias=None, SymInt[3] stride=[1, 1, 1], SymInt[3] padding=[0, 0, 0], SymInt[3] output_padding=[0, 0, 0], SymInt groups=1, SymInt[3] dilation=[1, 1, 1]) -> Tensor") \
	X(SLOW_CONV_DILATED2D, "slow_conv_dilated2d.default", conv, 0, "aten::slow_conv_dilated2d(Tensor self, Tensor weight, SymInt[2] kernel_size, Tensor? bias=None, SymInt[2] stride=[1, 1], SymInt[2] padding=[0, 0], SymInt[2] dilation=[1, 1]) -> Tensor") \
	X(SLOW_CONV_DILATED3D, "slow_conv_dilated3d.default", conv, 0, "aten::slow_conv_dilated3d(Tensor self, Tensor weight, SymInt[3] kernel_size, Tensor? bias=None, SymInt[3] stride=[1, 1, 1], SymInt[3] padding=[0, 0, 0], SymInt[3] dilation=[1, 1, 1]) -> Tensor") \
	X(SLOW_CONV3D_FORWARD, "slow_conv3d_forward.default", conv, 0, "aten::slow_conv3d_forward(Tensor self, Tensor weight, SymInt[3] kernel_size, Tensor? bias, SymInt[3] stride, SymInt[3] padding) -> Tensor") \
	X(SLOW_CONV_T2D, "slow_conv_transpose2d.default", conv, 2, "aten::slow_conv_transpose2d(Tensor self, Tensor weight, SymInt[2] kernel_size, Tensor? bias=None, SymInt[2] stride=[1, 1], SymInt[2] padding=[0, 0], SymInt[2] output_padding=[0, 0], SymInt[2] dilation=[1, 1]) -> Tensor") \
	X(SLOW_CONV_T3D, "slow_conv_transpose3d.default", conv, 2, "aten::slow_conv_transpose3d(Tensor self, Tensor weight, SymInt[3] kernel_size, Tensor? bias=None, SymInt[3] stride=[1, 1, 1], SymInt[3] padding=[0, 0, 0], SymInt[3] output_padding=[0, 0, 0], SymInt[3] dilation=[1, 1, 1]) -> Tensor") \
	X(LINEAR, "linear.default", linear, 0, "aten::linear(Tensor input, Tensor weight, Tensor? bias=None) -> Tensor") \
	X(ADDMM, "addmm.default", gemm, 1, "aten::addmm(Tensor self, Tensor mat1, Tensor mat2, *, Scalar beta=1, Scalar alpha=1) -> Tensor") \
	X(MM, "mm.default", gemm, 0, "aten::mm(Tensor self, Tensor mat2) -> Tensor") \
	X(INT_MM, "_int_mm.default", gemm, 0, "aten::_int_mm(Tensor self, Tensor mat2) -> Tensor") \
	X(BMM, "bmm.default", gemm, 0, "aten::bmm(Tensor self, Tensor mat2) -> Tensor") \
	X(MATMUL, "matmul.default", gemm, 2, "aten::matmul(Tensor self, Tensor other) -> Tensor") \
	X(ADDMV, "addmv.default", addmv, 0, "aten::addmv(Tensor self, Tensor mat, Tensor vec, *, Scalar beta=1, Scalar alpha=1) -> Tensor") \
	X(ADDBMM, "addbmm.default", addbmm, 0, "aten::addbmm(Tensor self, Tensor batch1, Tensor batch2, *, Scalar beta=1, Scalar alpha=1) -> Tensor") \
	X(BADDBMM, "baddbmm.default", gemm, 3, "aten::baddbmm(Tensor self, Tensor batch1, Tensor batch2, *, Scalar beta=1, Scalar alpha=1) -> Tensor") \
	X(EINSUM, "einsum.default", einsum, 0, "aten::einsum(str equation, Tensor[] tensors, *, int[]? path=None) -> Tensor") \
	X(CDIST_FORWARD, "_cdist_forward.default", cdist, 0, "aten::_cdist_forward(Tensor x1, Tensor x2, float p, int? compute_mode) -> Tensor") \
	X(PDIST_FORWARD, "_pdist_forward.default", cdist, 1, "aten::_pdist_forward(Tensor self, float p=2.) -> Tensor") \
	X(CDIST, "cdist.default", cdist, 0, "aten::cdist(Tensor x1, Tensor x2, float p=2., int? compute_mode=None) -> Tensor") \
	X(PDIST, "pdist.default", cdist, 1, "aten::pdist(Tensor self, float p=2.) -> Tensor") \
	X(GROUPED_MM_FALLBACK, "transformers.grouped_mm_fallback.default", grouped_mm, 0, "transformers::grouped_mm_fallback(Tensor input, Tensor weight, Tensor offs) -> Tensor")
