/*
 * scalar.h - the scalar helpers every printer emits (backends/emit.c; the
 * GPU printer as device functions): NaN-propagating max and min, clamp,
 * Python's remainder and floor division, integer division and pow with
 * PyTorch's semantics (a zero divisor returns 0: the run fails with
 * DOCCC_ERR_ZERODIV before the value is used), erfinv, and the float16
 * and bfloat16 conversions (round to nearest even, subnormals, inf and NaN
 * as PyTorch).
 *
 * dc_erfinv: Giles' single-precision approximation (2010) as the start,
 * then Newton steps in double: on erf near 0, on log(erfc) in the tails,
 * where 1 - |x| is exact and erf(y) would round to 1 (more steps beyond
 * float's range, where the start is rough); within an ulp of the true
 * value, as torch's own (float goes through double and rounds once).
 *
 * Each is DC_INLINE: static inline, or on a GPU static __device__ inline
 * (the GPU printer defines it first).
 *
 * The opening comment is for this file's reader: the library gets what
 * follows it (rt_body).
 */
#ifndef DC_INLINE
#define DC_INLINE static inline
#endif
DC_INLINE float dc_maxf(float a, float b) { return (a != a || a > b) ? a : b; }
DC_INLINE float dc_minf(float a, float b) { return (a != a || a < b) ? a : b; }
DC_INLINE double dc_max(double a, double b) { return (a != a || a > b) ? a : b; }
DC_INLINE double dc_min(double a, double b) { return (a != a || a < b) ? a : b; }
DC_INLINE int64_t dc_maxi(int64_t a, int64_t b) { return a > b ? a : b; }
DC_INLINE int64_t dc_mini(int64_t a, int64_t b) { return a < b ? a : b; }
DC_INLINE float dc_clampf(float x, float lo, float hi) { return x < lo ? lo : (x > hi ? hi : x); }
DC_INLINE double dc_clamp(double x, double lo, double hi) { return x < lo ? lo : (x > hi ? hi : x); }
DC_INLINE float dc_remf(float a, float b) { float r = fmodf(a, b); return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r; }
DC_INLINE double dc_rem(double a, double b) { double r = fmod(a, b); return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r; }
DC_INLINE int64_t dc_remi(int64_t a, int64_t b) { if (!b) return 0; int64_t r = a % b; return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r; }
DC_INLINE int64_t dc_fmodi(int64_t a, int64_t b) { return b ? a % b : 0; }
DC_INLINE int64_t dc_divti(int64_t a, int64_t b) { return b ? a / b : 0; }
DC_INLINE int64_t dc_floordivi(int64_t a, int64_t b) { if (!b) return 0; int64_t q = a / b, r = a % b; return (r != 0 && ((r < 0) != (b < 0))) ? q - 1 : q; }
DC_INLINE float dc_floordivf(float a, float b) { if (b == 0) return a / b; float m = fmodf(a, b), d = (a - m) / b;
	if (m != 0 && ((b < 0) != (m < 0))) d -= 1; if (d == 0) return copysignf(0, a / b); float q = floorf(d); return d - q > 0.5f ? q + 1 : q; }
DC_INLINE double dc_floordiv(double a, double b) { if (b == 0) return a / b; double m = fmod(a, b), d = (a - m) / b;
	if (m != 0 && ((b < 0) != (m < 0))) d -= 1; if (d == 0) return copysign(0.0, a / b); double q = floor(d); return d - q > 0.5 ? q + 1 : q; }
DC_INLINE int64_t dc_powi(int64_t a, int64_t b) { if (b < 0) return a == 1 ? 1 : a == -1 ? ((-b) % 2 ? -1 : 1) : 0;
	uint64_t r = 1, x = (uint64_t)a; while (b) { if (b & 1) r *= x; b /= 2; x *= x; } return (int64_t)r; }
DC_INLINE double dc_erfinv(double x) { double ax = fabs(x), w, p, t, c; int k, n;
	if (!(ax < 1)) return ax == 1 ? copysign((double)INFINITY, x) : NAN;
	w = -log((1 - x) * (1 + x)); n = w < 16 ? 2 : 4;
	if (w < 5) { w -= 2.5; p = 2.81022636e-08; p = 3.43273939e-07 + p * w; p = -3.5233877e-06 + p * w; p = -4.39150654e-06 + p * w;
		p = 0.00021858087 + p * w; p = -0.00125372503 + p * w; p = -0.00417768164 + p * w; p = 0.246640727 + p * w; p = 1.50140941 + p * w; }
	else { w = sqrt(w) - 3; p = -0.000200214257; p = 0.000100950558 + p * w; p = 0.00134934322 + p * w; p = -0.00367342844 + p * w;
		p = 0.00573950773 + p * w; p = -0.0076224613 + p * w; p = 0.00943887047 + p * w; p = 1.00167406 + p * w; p = 2.83297682 + p * w; }
	t = p * x;
	if (ax < 0.5) { for (k = 0; k < 2; k++) t -= (erf(t) - x) / (1.1283791670955126 * exp(-t * t)); return t; }
	t = fabs(t); for (k = 0; k < n; k++) { c = erfc(t); t += log(c / (1 - ax)) * c / (1.1283791670955126 * exp(-t * t)); }
	return copysign(t, x); }
DC_INLINE float dc_erfinvf(float x) { return (float)dc_erfinv(x); }
DC_INLINE float dc_b2f(uint16_t h) { uint32_t u = (uint32_t)h << 16; float f; memcpy(&f, &u, 4); return f; }
DC_INLINE uint16_t dc_f2b(float f) { uint32_t u; memcpy(&u, &f, 4); if ((u & 0x7fffffffu) > 0x7f800000u) return (uint16_t)((u >> 16) | 64); u += 0x7fffu + ((u >> 16) & 1); return (uint16_t)(u >> 16); }
DC_INLINE float dc_h2f(uint16_t h) { uint32_t s = (uint32_t)(h & 0x8000) << 16, e = (h >> 10) & 31, m = h & 1023, u; float f;
	if (e == 31) u = s | 0x7f800000u | (m << 13); else if (e) u = s | ((e + 112) << 23) | (m << 13);
	else if (!m) u = s; else { f = (float)m * 5.9604644775390625e-8f; memcpy(&u, &f, 4); u |= s; }
	memcpy(&f, &u, 4); return f; }
DC_INLINE uint16_t dc_f2h(float f) { uint32_t u; memcpy(&u, &f, 4); uint32_t s = (u >> 16) & 0x8000; float a = fabsf(f);
	if (a != a) return (uint16_t)(s | 0x7e00); if (a >= 65520.0f) return (uint16_t)(s | 0x7c00);
	if (a < 6.103515625e-05f) return (uint16_t)(s | (uint32_t)nearbyintf(a * 16777216.0f));
	memcpy(&u, &a, 4); uint32_t r = u + 0xfffu + ((u >> 13) & 1); return (uint16_t)(s | ((r - (112u << 23)) >> 13)); }
