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
 * The special functions (torch.special and friends) compute in double and
 * round once, where torch's float kernels compute in float:
 * dc_digamma and dc_trigamma: reflection below 0 (below 1/2), the
 * recurrence up to 10, then the asymptotic series in 1/x^2 (Bernoulli
 * numbers); negative integers are NaN (digamma) and 0 gives -inf with the
 * sign of -x, as torch. dc_zeta, Hurwitz's zeta(x, q): the first terms
 * summed until q + k > 9, the rest by Euler-Maclaurin with 12 Bernoulli
 * terms; x == 1 is inf, x < 1 NaN, q a non-positive integer inf, q <= 0
 * with x fractional NaN (Cephes' domain, torch's). dc_polygamma(n, x):
 * digamma, trigamma, else (-1)^(n+1) n! zeta(n+1, x). dc_bessel_i(nu, x,
 * e): I0 and I1 (times exp(-|x|) when e) by their power series up to
 * |x| = 30, where every term is positive, beyond by the asymptotic series
 * of exp(-x) I_nu(x), whose terms shrink up to k = 2x. dc_erfcx:
 * exp(x^2) erfc(x) directly below 26 (both factors in range), the
 * asymptotic series above. dc_ndtri: sqrt(2) erfinv(2p - 1) in the middle
 * (2p - 1 exact), in the tails Newton steps on log(erfc) from its
 * asymptotic start, with 1 - p exact. dc_nextafter16: one float16 or
 * bfloat16 step (ulps of the storage type, which the float math lacks).
 * dc_ldexp: a * 2^b exactly for an integral b (0 * 2^2000 is 0), else pow.
 * dc_shli and dc_shri: torch's shifts (a shift count below 0 or past the
 * width gives 0, or the sign for a right shift); dc_gcdi, dc_lcmi: Euclid
 * on magnitudes. dc_dot4: T_DOT4, a's four bytes unsigned times b's
 * signed, summed in int32 (vpdpbusd's lane).
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
DC_INLINE int32_t dc_dot4(int32_t a, int32_t b) { uint32_t x = (uint32_t)a, y = (uint32_t)b; int32_t s = 0;
	for (int i = 0; i < 32; i += 8) s += (int32_t)(x >> i & 255) * ((int32_t)(y >> i & 255) - (int32_t)(y >> i & 128) * 2); return s; }
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
/* lgamma and lgammaf write glibc's global signgam: OpenMP threads calling
 * them race. lgamma_r keeps the sign to itself (the same value); the GPU's
 * lgamma writes nothing. */
#if defined(__CUDACC__) || defined(__HIPCC__) || defined(__HIP__) || !(defined(__GLIBC__) || defined(__APPLE__))
DC_INLINE double dc_lgamma(double x) { return lgamma(x); }
DC_INLINE float dc_lgammaf(float x) { return lgammaf(x); }
#else
#ifndef __cplusplus /* C++ compilers define _GNU_SOURCE: math.h declares them */
double lgamma_r(double, int *);
float lgammaf_r(float, int *);
#endif
DC_INLINE double dc_lgamma(double x) { int s; return lgamma_r(x, &s); }
DC_INLINE float dc_lgammaf(float x) { int s; return lgammaf_r(x, &s); }
#endif
DC_INLINE double dc_digamma(double x) { double r = 0, z;
	if (x == 0) return copysign((double)INFINITY, -x);
	if (x < 0) { if (x == floor(x)) return NAN; r = -3.14159265358979323846 / tan(3.14159265358979323846 * (x - trunc(x))); x = 1 - x; }
	for (; x < 10; x += 1) r -= 1 / x;
	z = 1 / (x * x);
	return r + log(x) - 0.5 / x - z * (1.0 / 12 - z * (1.0 / 120 - z * (1.0 / 252 - z * (1.0 / 240 - z * (1.0 / 132 - z * (691.0 / 32760 - z / 12)))))); }
DC_INLINE double dc_trigamma(double x) { double r = 0, s = 1, z, sp;
	if (x < 0.5) { sp = sin(3.14159265358979323846 * x); r = -9.86960440108935861883 / (sp * sp); s = -1; x = 1 - x; }
	for (; x < 10; x += 1) r += 1 / (x * x);
	z = 1 / (x * x);
	return s * (r + (1 + 0.5 / x + z * (1.0 / 6 - z * (1.0 / 30 - z * (1.0 / 42 - z * (1.0 / 30 - z * 5.0 / 66))))) / x); }
DC_INLINE double dc_zeta(double x, double q) { double s = 0, b = 0, w, a = 1, t; int k;
	/* (2j)! / B_2j */
	const double f[12] = {12.0, -720.0, 30240.0, -1209600.0, 47900160.0, -1.8924375803183791606e9, 7.47242496e10,
		-2.950130727918164224e12, 1.1646782814350067249e14, -4.5979787224074726105e15, 1.8152105401943546773e17, -7.1661652561756670113e18};
	if (x == 1) return INFINITY; if (!(x > 1)) return NAN;
	if (q <= 0) { if (q == floor(q)) return INFINITY; if (x != floor(x)) return NAN; }
	for (k = 0; k < 9 || q + k <= 9; k++) { b = pow(q + k, -x); s += b; if (fabs(b / s) < 1.1102230246251565e-16) return s; }
	w = q + k; b = pow(w, -x); s += b * w / (x - 1) + 0.5 * b;
	for (k = 0; k < 12; k++) { a *= x + 2 * k; b /= w; t = a * b / f[k]; s += t; if (fabs(t / s) < 1.1102230246251565e-16) break;
		a *= x + 2 * k + 1; b /= w; }
	return s; }
DC_INLINE double dc_polygamma(int n, double x) {
	if (n == 0) return dc_digamma(x); if (n == 1) return dc_trigamma(x);
	return (n % 2 ? 1 : -1) * exp(dc_lgamma(n + 1.0)) * dc_zeta(n + 1.0, x); }
DC_INLINE double dc_bessel_i(int nu, double x, int e) { double ax = fabs(x), s, t, r, mu = 4.0 * nu * nu; int k;
	if (ax != ax) return x;
	if (ax <= 30) { t = nu ? ax / 2 : 1; s = t; for (k = 1; t > s * 1e-17; k++) { t *= ax * ax / (4.0 * k * (k + nu)); s += t; }
		r = e ? s * exp(-ax) : s; }
	else { t = 1; s = 1; for (k = 1; k < 100 && fabs(t) > 1e-17; k++) { t *= -(mu - (2.0 * k - 1) * (2.0 * k - 1)) / (8.0 * k * ax); s += t; }
		r = e ? s / sqrt(6.28318530717958647693 * ax) : s * exp(ax) / sqrt(6.28318530717958647693 * ax); }
	return nu && x < 0 ? -r : r; }
DC_INLINE double dc_erfcx(double x) { double s = 1, t = 1, z; int k;
	if (x < 26) return exp(x * x) * erfc(x);
	z = 1 / (2 * x * x);
	for (k = 1; k < 12; k++) { t *= -(2 * k - 1) * z; s += t; }
	return s / (x * 1.77245385090551602730); }
DC_INLINE double dc_ndtri(double p) { double q, y, c; int k;
	if (!(p > 0 && p < 1)) return p == 0 ? -(double)INFINITY : p == 1 ? (double)INFINITY : NAN;
	if (p > 0.25 && p < 0.75) return 1.41421356237309504880 * dc_erfinv(2 * p - 1);
	q = 2 * (p < 0.5 ? p : 1 - p); y = sqrt(-log(q)); y = sqrt(-log(q) - log(1.77245385090551602730 * y));
	for (k = 0; k < 8; k++) { c = erfc(y); y += log(c / q) * c / (1.12837916709551257390 * exp(-y * y)); }
	return p < 0.5 ? -1.41421356237309504880 * y : 1.41421356237309504880 * y; }
DC_INLINE float dc_digammaf(float x) { return (float)dc_digamma(x); }
DC_INLINE float dc_polygammaf(int n, float x) { return (float)dc_polygamma(n, x); }
DC_INLINE float dc_zetaf(float x, float q) { return (float)dc_zeta(x, q); }
DC_INLINE float dc_bessel_if(int nu, float x, int e) { return (float)dc_bessel_i(nu, x, e); }
DC_INLINE float dc_erfcxf(float x) { return (float)dc_erfcx(x); }
DC_INLINE float dc_ndtrif(float x) { return (float)dc_ndtri(x); }
DC_INLINE double dc_ldexp(double a, double b) { return b == floor(b) ? ldexp(a, (int)fmax(fmin(b, 1e5), -1e5)) : a * pow(2.0, b); }
DC_INLINE int64_t dc_shli(int64_t a, int64_t b) { return b < 0 || b > 63 ? 0 : (int64_t)((uint64_t)a << b); }
DC_INLINE int64_t dc_shri(int64_t a, int64_t b) { return a >> (b < 0 || b > 63 ? 63 : b); }
DC_INLINE int64_t dc_gcdi(int64_t a, int64_t b) { int64_t c; a = a < 0 ? (int64_t)(0 - (uint64_t)a) : a; b = b < 0 ? (int64_t)(0 - (uint64_t)b) : b; while (a) { c = a; a = b % a; b = c; } return b; }
DC_INLINE int64_t dc_lcmi(int64_t a, int64_t b) { int64_t g = dc_gcdi(a, b), r; if (!g) return 0; r = (int64_t)((uint64_t)(a / g) * (uint64_t)b); return r < 0 ? (int64_t)(0 - (uint64_t)r) : r; }
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
DC_INLINE float dc_nextafter16(float a, float b, int bf) { uint16_t h;
	if (a != a || b != b) return a + b; if (a == b) return b;
	if (a == 0) h = b > 0 ? 1 : 0x8001; else { h = bf ? dc_f2b(a) : dc_f2h(a); h = (uint16_t)((a < b) == (a > 0) ? h + 1 : h - 1); }
	return bf ? dc_b2f(h) : dc_h2f(h); }
