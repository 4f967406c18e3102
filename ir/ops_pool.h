/*
 * ops_pool.h - the op-table rows of the pool family: pooling, resampling
 * and sliding windows. Max, average and adaptive pooling (1-d through the
 * 2-d node, 2-d, 3-d; max with indices), upsampling (nearest,
 * nearest-exact, bilinear, bicubic), grid sampling, col2im (fold) and
 * im2col (unfold).
 *
 * LIB_OPS_POOL rows: X(ENUM, "name", expansion, "doc"): a library-node kind
 * and its expansion function expand_<expansion> (ir/expand/pool.c).
 * ATEN_OPS_POOL rows: X(ENUM, "overload", lowering, param, "schema"): an
 * ATen overload, its lowering function lower_<lowering> (ir/lower/pool.c), a
 * parameter for that lowering (PL_* for pool, UP_* for upsample), and
 * PyTorch's schema string.
 * Included by ops.h only.
 */

/* Pool modes (the pool lowering's param, LIB_POOL "mode"), then the
 * adaptive max mode and the flags: 1-d through the 2-d node, 3-d. */
enum { PL_MAX, PL_AVG, PL_ADAPTIVE };
enum { PL_ADAPTIVE_MAX_ = 3, PL_1D = 8, PL_3D = 16 };
_Static_assert(PL_ADAPTIVE_MAX_ == PL_ADAPTIVE + 1, "the adaptive max pool mode continues the pool modes");
/* upsampling modes (lower_upsample's param) */
enum { UP_NEAREST, UP_BILINEAR, UP_NEAREST_EXACT, UP_BICUBIC };
enum { UP_1D = 8 }; /* a 1-d resampling (linear1d), as 2-d over a size-1 height */
/* grid sampler modes and padding modes, numbered as torch's enums */
enum { GS_BILINEAR, GS_NEAREST, GS_BICUBIC };
enum { GS_ZEROS, GS_BORDER, GS_REFLECTION };

#define LIB_OPS_POOL(X) \
	X(POOL, "pool", pool, "2-d / 3-d max / average / adaptive average / adaptive max pooling, max with indices") \
	X(UPSAMPLE, "upsample", upsample, "2-d nearest / nearest-exact / bilinear / bicubic resampling with PyTorch's source indices") \
	X(GRIDSAMPLE, "grid_sample", grid_sample, "2-D grid sampling: bilinear, nearest or bicubic taps at data-dependent source coordinates") \
	X(COL2IM, "col2im", col2im, "fold: sums sliding-window columns back into an image, each output pixel gathering its taps") \
	X(IM2COL, "im2col", im2col, "unfold: sliding-window columns of an image, each column element one (padded) pixel")

#define ATEN_OPS_POOL(X) \
	X(MAX_POOL2D, "max_pool2d.default", pool, PL_MAX, "aten::max_pool2d(Tensor self, int[2] kernel_size, int[2] stride=[], int[2] padding=0, int[2] dilation=1, bool ceil_mode=False) -> Tensor") \
	X(MAX_POOL2D_IDX, "max_pool2d_with_indices.default", pool, PL_MAX, "aten::max_pool2d_with_indices(Tensor self, int[2] kernel_size, int[2] stride=[], int[2] padding=0, int[2] dilation=1, bool ceil_mode=False) -> (Tensor, Tensor)") \
	X(AVG_POOL2D, "avg_pool2d.default", pool, PL_AVG, "aten::avg_pool2d(Tensor self, int[2] kernel_size, int[2] stride=[], int[2] padding=0, bool ceil_mode=False, bool count_include_pad=True, int? divisor_override=None) -> Tensor") \
	X(ADAPTIVE_AVG_POOL2D, "adaptive_avg_pool2d.default", pool, PL_ADAPTIVE, "aten::adaptive_avg_pool2d(Tensor self, SymInt[2] output_size) -> Tensor") \
	X(ADAPTIVE_AVG_POOL2D_, "_adaptive_avg_pool2d.default", pool, PL_ADAPTIVE, "aten::_adaptive_avg_pool2d(Tensor self, SymInt[2] output_size) -> Tensor") \
	X(MAX_POOL1D, "max_pool1d.default", pool, PL_MAX | PL_1D, "aten::max_pool1d(Tensor self, int[1] kernel_size, int[1] stride=[], int[1] padding=[0], int[1] dilation=[1], bool ceil_mode=False) -> Tensor") \
	X(AVG_POOL1D, "avg_pool1d.default", pool, PL_AVG | PL_1D, "aten::avg_pool1d(Tensor self, int[1] kernel_size, int[1] stride=[], int[1] padding=[0], bool ceil_mode=False, bool count_include_pad=True) -> Tensor") \
	X(ADAPTIVE_AVG_POOL1D, "adaptive_avg_pool1d.default", pool, PL_ADAPTIVE | PL_1D, "aten::adaptive_avg_pool1d(Tensor self, int[1] output_size) -> Tensor") \
	X(ADAPTIVE_MAX_POOL2D, "adaptive_max_pool2d.default", pool, PL_ADAPTIVE_MAX_, "aten::adaptive_max_pool2d(Tensor self, int[2] output_size) -> (Tensor, Tensor)") \
	X(AVG_POOL3D, "avg_pool3d.default", pool, PL_AVG | PL_3D, "aten::avg_pool3d(Tensor self, int[3] kernel_size, int[3] stride=[], int[3] padding=0, bool ceil_mode=False, bool count_include_pad=True, int? divisor_override=None) -> Tensor") \
	X(MAX_POOL3D_IDX, "max_pool3d_with_indices.default", pool, PL_MAX | PL_3D, "aten::max_pool3d_with_indices(Tensor self, int[3] kernel_size, int[3] stride=[], int[3] padding=0, int[3] dilation=1, bool ceil_mode=False) -> (Tensor, Tensor)") \
	X(ADAPTIVE_AVG_POOL3D_, "_adaptive_avg_pool3d.default", pool, PL_ADAPTIVE | PL_3D, "aten::_adaptive_avg_pool3d(Tensor self, SymInt[3] output_size) -> Tensor") \
	X(MAX_POOL3D, "max_pool3d.default", pool, PL_MAX | PL_3D, "aten::max_pool3d(Tensor self, int[3] kernel_size, int[3] stride=[], int[3] padding=0, int[3] dilation=1, bool ceil_mode=False) -> Tensor") \
	X(ADAPTIVE_AVG_POOL3D, "adaptive_avg_pool3d.default", pool, PL_ADAPTIVE | PL_3D, "aten::adaptive_avg_pool3d(Tensor self, SymInt[3] output_size) -> Tensor") \
	X(UPSAMPLE_NEAREST2D_VEC, "upsample_nearest2d.vec", upsample, UP_NEAREST, "aten::upsample_nearest2d.vec(Tensor input, SymInt[]? output_size, float[]? scale_factors) -> Tensor") \
	X(UPSAMPLE_NEAREST2D, "upsample_nearest2d.default", upsample, UP_NEAREST, "aten::upsample_nearest2d(Tensor self, SymInt[2] output_size, float? scales_h=None, float? scales_w=None) -> Tensor") \
	X(UPSAMPLE_NEAREST_EXACT2D_VEC, "_upsample_nearest_exact2d.vec", upsample, UP_NEAREST_EXACT, "aten::_upsample_nearest_exact2d.vec(Tensor input, SymInt[]? output_size, float[]? scale_factors) -> Tensor") \
	X(UPSAMPLE_LINEAR1D_VEC, "upsample_linear1d.vec", upsample, UP_BILINEAR | UP_1D, "aten::upsample_linear1d.vec(Tensor input, SymInt[]? output_size, bool align_corners, float[]? scale_factors) -> Tensor") \
	X(UPSAMPLE_LINEAR1D, "upsample_linear1d.default", upsample, UP_BILINEAR | UP_1D, "aten::upsample_linear1d(Tensor self, SymInt[1] output_size, bool align_corners, float? scales=None) -> Tensor") \
	X(UPSAMPLE_BILINEAR2D_VEC, "upsample_bilinear2d.vec", upsample, UP_BILINEAR, "aten::upsample_bilinear2d.vec(Tensor input, SymInt[]? output_size, bool align_corners, float[]? scale_factors) -> Tensor") \
	X(UPSAMPLE_BILINEAR2D, "upsample_bilinear2d.default", upsample, UP_BILINEAR, "aten::upsample_bilinear2d(Tensor self, SymInt[2] output_size, bool align_corners, float? scales_h=None, float? scales_w=None) -> Tensor") \
	X(UPSAMPLE_BICUBIC2D_VEC, "upsample_bicubic2d.vec", upsample, UP_BICUBIC, "aten::upsample_bicubic2d.vec(Tensor input, SymInt[]? output_size, bool align_corners, float[]? scale_factors) -> Tensor") \
	X(UPSAMPLE_BICUBIC2D, "upsample_bicubic2d.default", upsample, UP_BICUBIC, "aten::upsample_bicubic2d(Tensor self, SymInt[2] output_size, bool align_corners, float? scales_h=None, float? scales_w=None) -> Tensor") \
	X(GRID_SAMPLER, "grid_sampler.default", grid_sampler, 0, "aten::grid_sampler(Tensor input, Tensor grid, int interpolation_mode, int padding_mode, bool align_corners) -> Tensor") \
	X(GRID_SAMPLER_2D, "grid_sampler_2d.default", grid_sampler, 0, "aten::grid_sampler_2d(Tensor input, Tensor grid, int interpolation_mode, int padding_mode, bool align_corners) -> Tensor") \
	X(COL2IM, "col2im.default", col2im, 0, "aten::col2im(Tensor self, SymInt[2] output_size, int[2] kernel_size, int[2] dilation, int[2] padding, int[2] stride) -> Tensor") \
	X(IM2COL, "im2col.default", im2col, 0, "aten::im2col(Tensor self, int[2] kernel_size, int[2] dilation, int[2] padding, int[2] stride) -> Tensor")
