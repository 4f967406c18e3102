/*
 * rt_cpu.c - the CPU runtime sources (backends/rt/cpu_check_x86_64.h, scalar.h,
 * vmath.h, weights.h) compiled on their own, in the order and with the
 * definitions a CPU library gives them (backends/emit_cpu.c), and tested.
 * make unit builds it under -Wall -Wextra -Werror for each configuration a
 * CPU library uses: none (no -march, no SIMD), sequential at x86-64-v2, -v3
 * and -v4 (DC_LANES 4, 8, 16 fp32 lanes), and openmp (-fopenmp) at -v3.
 *
 * main, like a library's create, runs the CPU check first in baseline code
 * (DC_BASE): a configuration this CPU lacks is reported and skipped, which
 * is the check's own test (its message must name the missing extensions);
 * where the CPU has it, the helpers are compared with libm and with
 * PyTorch's integer semantics, the vector math with libm over a range, and
 * the weights loader maps a good file and refuses damaged ones.
 */
#define _POSIX_C_SOURCE 200809L
#include <fcntl.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../../backends/doccc_model.h"
#include "check.h"

#define DC_NAME "rtcheck"
#ifndef DC_MARCH
#define DC_MARCH "its C compiler's default target"
#endif
static const char dc_march[] = DC_MARCH;
#include "../../backends/rt/cpu_check_x86_64.h"
#include "../../backends/rt/scalar.h"

#if DC_LANES
/* what emit_cpu.c's emit_helpers prints before the vector math */
typedef float dc_vf __attribute__((vector_size(DC_LANES * 4)));
typedef int32_t dc_vi __attribute__((vector_size(DC_LANES * 4)));
static inline dc_vf dc_splat(float s) { return s - (dc_vf){0}; }
static inline dc_vf dc_vsel(dc_vi m, dc_vf a, dc_vf b) { return (dc_vf)(((dc_vi)a & m) | ((dc_vi)b & ~m)); }
#include "../../backends/rt/vmath.h"
#endif

/* the weights of a 64-byte blob 0, 1, ..., 63 */
#define DC_WEIGHTS_SIZE ((size_t)64u)
static const char dc_weights_sha[] = "fdeab9acf3710362bd2658cdc9a29e8f9c757fcf9811603a8c447cd1d9151108";
#include "../../backends/rt/weights.h"

static void test_scalar(void)
{
	CHECK(isnan(dc_maxf(NAN, 1)) && isnan(dc_maxf(1, NAN)) && dc_maxf(1, 2) == 2);
	CHECK(isnan(dc_min(NAN, 1)) && dc_min(-1, 2) == -1);
	CHECK_INT(dc_floordivi(-7, 2), -4);
	CHECK_INT(dc_floordivi(7, -2), -4);
	CHECK_INT(dc_remi(-7, 2), 1);
	CHECK_INT(dc_remi(7, -2), -1);
	CHECK_INT(dc_fmodi(-7, 2), -1);
	CHECK_INT(dc_divti(-7, 2), -3);
	CHECK_INT(dc_divti(5, 0), 0); /* the run fails with DOCCC_ERR_ZERODIV first */
	CHECK_INT(dc_powi(3, 4), 81);
	CHECK_INT(dc_powi(-1, -3), -1);
	CHECK_INT(dc_powi(2, -1), 0);
	CHECK(dc_floordiv(-7.0, 2.0) == -4.0 && dc_floordivf(7.5f, 2.0f) == 3.0f);
	CHECK(signbit(dc_floordiv(-0.5, 4.0)) == signbit(floor(-0.5 / 4.0))); /* -1, not -0 */
	CHECK(dc_remf(-1.0f, 3.0f) == 2.0f && dc_rem(5.0, -3.0) == -1.0);
	CHECK(fabs(dc_erfinv(erf(0.5)) - 0.5) < 1e-15 && isinf(dc_erfinv(1)) && isnan(dc_erfinv(2)));
	CHECK_INT(dc_f2b(1.0f), 0x3f80);
	CHECK_INT(dc_f2b(1.00390625f), 0x3f80); /* ties to even */
	CHECK(dc_b2f(0xbf80) == -1.0f);
	CHECK_INT(dc_f2h(1.0f), 0x3c00);
	CHECK_INT(dc_f2h(65520.0f), 0x7c00); /* rounds to inf */
	CHECK(dc_h2f(0x0001) == 5.9604644775390625e-8f && dc_h2f(0xc000) == -2.0f);
}

#if DC_LANES
/* The vector math against libm over [-20, 20] (exp: within 2 ulp; tanh
 * relative 1e-6; erf absolute 5e-7, A-S 7.1.26's 1.5e-7 plus float's rounding). */
static void test_vmath(void)
{
	float worst_exp = 0, worst_tanh = 0, worst_erf = 0;
	volatile int n = 4000 / DC_LANES; /* a run-time trip count: the compiler does not unroll it */
	for (int k = 0; k < n; k++) {
		dc_vf x;
		for (int l = 0; l < DC_LANES; l++)
			x[l] = -20.0f + 0.01f * (float)(k * DC_LANES + l);
		dc_vf e = dc_vexp(x), t = dc_vtanh(x), r = dc_verf(x);
		for (int l = 0; l < DC_LANES; l++) {
			worst_exp = fmaxf(worst_exp, fabsf(e[l] - expf(x[l])) / fabsf(expf(x[l])));
			worst_tanh = fmaxf(worst_tanh, fabsf(t[l] - tanhf(x[l])) / fmaxf(fabsf(tanhf(x[l])), 1e-30f));
			worst_erf = fmaxf(worst_erf, fabsf(r[l] - erff(x[l])));
		}
	}
	CHECK(worst_exp < 2.5e-7f);
	CHECK(worst_tanh < 1e-6f);
	CHECK(worst_erf < 5e-7f);
	dc_vf nan = dc_splat(NAN);
	CHECK(isnan(dc_vexp(nan)[0]) && isinf(dc_vexp(dc_splat(100))[0]) && dc_vexp(dc_splat(-200))[0] == 0);
}
#endif

static const char *write_weights(const char *path, size_t n, int flip)
{
	unsigned char hdr[128] = "DOCCCW01", data[64];
	uint64_t size = 64;
	memcpy(hdr + 8, &size, 8);
	memcpy(hdr + 16, dc_weights_sha, 64);
	for (int i = 0; i < 64; i++)
		data[i] = (unsigned char)i;
	data[17] ^= (unsigned char)flip;
	FILE *f = fopen(path, "wb");
	if (!f)
		return NULL;
	fwrite(hdr, 1, 128, f);
	fwrite(data, 1, n, f);
	fclose(f);
	return path;
}

static void test_weights(void)
{
	char hex[65], msg[512], path[] = "/tmp/rt_cpu_weights_XXXXXX";
	unsigned char data[64];
	volatile int zero = 0; /* data the compiler cannot fold (it would try to run the hash at compile time) */
	for (int i = 0; i < 64; i++)
		data[i] = (unsigned char)(i + zero);
	dc_sha256_hex(data, 64, hex);
	CHECK_STR(hex, dc_weights_sha);
	int fd = mkstemp(path);
	CHECK(fd >= 0);
	close(fd);
	void *map;
	CHECK(write_weights(path, 64, 0) != NULL);
	CHECK_INT(dc_weights_map(path, &map, msg, sizeof msg), DOCCC_OK);
	CHECK(map && ((const unsigned char *)map)[128 + 63] == 63);
	if (map)
		munmap(map, 128 + DC_WEIGHTS_SIZE);
	write_weights(path, 64, 1);
	CHECK_INT(dc_weights_map(path, &map, msg, sizeof msg), DOCCC_ERR_WEIGHTS);
	CHECK(strstr(msg, "damaged or was altered") != NULL);
	write_weights(path, 60, 0);
	CHECK_INT(dc_weights_map(path, &map, msg, sizeof msg), DOCCC_ERR_WEIGHTS);
	CHECK(strstr(msg, "holds 188 bytes where rtcheck needs 192") != NULL);
	CHECK_INT(dc_weights_map(NULL, &map, msg, sizeof msg), DOCCC_ERR_WEIGHTS);
	CHECK_STR(msg, "rtcheck was built with --external-weights: pass the path of its weights file (rtcheck.weights) to "
	               "rtcheck_create_from");
	unlink(path);
}

DC_BASE int main(void)
{
	char msg[512];
	if (dc_cpu_check(msg, sizeof msg) != DOCCC_OK) {
		int named = !strncmp(msg, "rtcheck was compiled for " DC_MARCH ", which this CPU does not have (it lacks ", 64) &&
		            strstr(msg, "): compile it again for this machine") != NULL;
		printf("rt_cpu (" DC_MARCH "): skipped, the CPU check says: %s\n", msg);
		return !named;
	}
	test_scalar();
#if DC_LANES
	test_vmath();
#endif
	test_weights();
	return check_done("rt_cpu (" DC_MARCH ")");
}
