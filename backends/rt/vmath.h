/*
 * vmath.h - vector transcendental functions for SCHED_VECTOR maps, in clang
 * vector extensions (any width: DC_LANES, dc_vf, dc_vi and dc_vsel come
 * before it).
 * Printed into every CPU library with SIMD (backends/emit_cpu.c).
 *
 *  dc_vexp   Cody-Waite reduction x = n ln2 + r (n rounded to nearest by
 *            adding 1.5 * 2^23, whose low bits are then n), the Cephes
 *            degree-6 polynomial for e^r, then e^r 2^n by vscalefps on
 *            AVX-512 (DC_LANES 16), else two multiplications by 2^(n/2), so
 *            results from the denormals up to overflow (inf) come out right;
 *            within 2 ulp of expf; NaN stays NaN.
 *  dc_vtanh  Cephes tanhf: an odd polynomial below |x| = 0.625, else
 *            1 - 2 / (e^2|x| + 1) with the sign restored.
 *  dc_verf   the approximation PyTorch's own vectorized CPU erf uses
 *            (Abramowitz-Stegun 7.1.26, absolute error < 1.5e-7 in exact
 *            arithmetic, < 5e-7 in float: test/unit/rt_cpu.c measures it):
 *            used for GELU only, where that absolute error vanishes in
 *            0.5x(1+erf).
 *  dc_vround round half to even, as nearbyintf in the default rounding
 *            mode: below 2^23 in magnitude, (|x| + 2^23) - 2^23 with x's
 *            sign (exact: the sum rounds to an integer, ties to even);
 *            larger values, infinities and NaN are themselves.
 *
 * The opening comment is for this file's reader: the library gets what
 * follows it (rt_body).
 */
static inline dc_vf dc_vexp(dc_vf x) {
	dc_vf xc = dc_vsel(x > 88.8f, dc_splat(88.8f), dc_vsel(x < -104.0f, dc_splat(-104.0f), x));
	dc_vf fx = xc * 1.44269504088896341f + 12582912.0f, n = fx - 12582912.0f;
	dc_vf r = xc - n * 0.693359375f + n * 2.12194440e-4f, z = r * r;
	dc_vf y = (((((1.9875691500e-4f * r + 1.3981999507e-3f) * r + 8.3334519073e-3f) * r + 4.1665795894e-2f) * r
		+ 1.6666665459e-1f) * r + 5.0000001201e-1f) * z + r + 1.0f;
#if defined(__AVX512F__) && DC_LANES == 16
	return dc_vsel(x != x, x, __builtin_ia32_scalefps512_mask(y, n, y, (unsigned short)-1, 4));
#else
	dc_vi ni = (dc_vi)fx - 0x4B400000, n1 = ni >> 1, n2 = ni - n1;
	return dc_vsel(x != x, x, y * (dc_vf)((n1 + 127) << 23) * (dc_vf)((n2 + 127) << 23));
#endif
}
static inline dc_vf dc_vtanh(dc_vf x) {
	dc_vi sg = (dc_vi)x & (dc_vi)dc_splat(-0.0f);
	dc_vf a = (dc_vf)((dc_vi)x & ~(dc_vi)dc_splat(-0.0f)), z = x * x;
	dc_vf p = ((((-5.70498872745e-3f * z + 2.06390887954e-2f) * z - 5.37397155531e-2f) * z + 1.33314422036e-1f) * z
		- 3.33332819422e-1f) * z * x + x;
	dc_vf q = (dc_vf)((dc_vi)(1.0f - 2.0f / (dc_vexp(a + a) + 1.0f)) | sg);
	return dc_vsel(a < 0.625f, p, q); }
static inline dc_vf dc_verf(dc_vf x) {
	dc_vi sg = (dc_vi)x & (dc_vi)dc_splat(-0.0f);
	dc_vf a = (dc_vf)((dc_vi)x & ~(dc_vi)dc_splat(-0.0f));
	dc_vf t = 1.0f / (0.3275911f * a + 1.0f);
	dc_vf r = ((((1.061405429f * t - 1.453152027f) * t + 1.421413741f) * t - 0.284496736f) * t + 0.254829592f) * t;
	return (dc_vf)((dc_vi)(1.0f - r * dc_vexp(-(x * x))) ^ sg); }
static inline dc_vf dc_vround(dc_vf x) {
	dc_vi s = (dc_vi)x & (dc_vi)dc_splat(-0.0f);
	dc_vf a = (dc_vf)((dc_vi)x ^ s), r = (a + 0x1p23f) - 0x1p23f;
	return dc_vsel(a < 0x1p23f, (dc_vf)((dc_vi)r | s), x); }
