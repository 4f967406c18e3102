/*
 * cpu_check_aarch64.h - the CPU check of an aarch64 CPU library
 * (backends/emit_cpu.c prints its architecture's after dc_march), as
 * cpu_check_x86_64.h's: a library compiled for an extension the CPU lacks
 * (-c server's SVE2 on a Cortex-A76) returns DOCCC_ERR_CPU from create()
 * instead of dying of SIGILL, the missing extensions in
 * NAME_last_error(NULL). The extensions are the ACLE's __ARM_FEATURE_
 * macros the compiler defined for its -march or -mcpu, looked up at each
 * create in the kernel's HWCAP and HWCAP2 words (getauxval; the bits and
 * names of Linux's asm/hwcap.h). DC_BASE keeps the check and the entry
 * points that may run before it out of the optimizer, so that no vector
 * code (SVE above all) runs before it. DC_NAME is the model's name.
 *
 * The opening comment is for this file's reader: the library gets what
 * follows it (rt_body).
 */
#if defined(__aarch64__) && defined(__linux__) && (defined(__clang__) || defined(__GNUC__))
#include <stdio.h>
#include <sys/auxv.h>
#define DC_BASE __attribute__((optnone, noinline))
static const struct {
	unsigned char word, bit; /* 0: AT_HWCAP, 1: AT_HWCAP2 */
	const char *name;
} dc_isa[] = {
#ifdef __ARM_FEATURE_AES
	{0, 3, "aes"},
#endif
#ifdef __ARM_FEATURE_SHA2
	{0, 6, "sha2"},
#endif
#ifdef __ARM_FEATURE_CRC32
	{0, 7, "crc32"},
#endif
#ifdef __ARM_FEATURE_ATOMICS
	{0, 8, "atomics"},
#endif
#ifdef __ARM_FEATURE_FP16_SCALAR_ARITHMETIC
	{0, 9, "fphp"},
#endif
#ifdef __ARM_FEATURE_FP16_VECTOR_ARITHMETIC
	{0, 10, "asimdhp"},
#endif
#ifdef __ARM_FEATURE_QRDMX
	{0, 12, "asimdrdm"},
#endif
#ifdef __ARM_FEATURE_JCVT
	{0, 13, "jscvt"},
#endif
#ifdef __ARM_FEATURE_COMPLEX
	{0, 14, "fcma"},
#endif
#ifdef __ARM_FEATURE_SHA3
	{0, 17, "sha3"},
#endif
#ifdef __ARM_FEATURE_SM3
	{0, 18, "sm3"},
#endif
#ifdef __ARM_FEATURE_SM4
	{0, 19, "sm4"},
#endif
#ifdef __ARM_FEATURE_DOTPROD
	{0, 20, "asimddp"},
#endif
#ifdef __ARM_FEATURE_SHA512
	{0, 21, "sha512"},
#endif
#ifdef __ARM_FEATURE_SVE
	{0, 22, "sve"},
#endif
#ifdef __ARM_FEATURE_FP16_FML
	{0, 23, "asimdfhm"},
#endif
#ifdef __ARM_FEATURE_SVE2
	{1, 1, "sve2"},
#endif
#ifdef __ARM_FEATURE_SVE2_BITPERM
	{1, 4, "svebitperm"},
#endif
#ifdef __ARM_FEATURE_FRINT
	{1, 8, "frint"},
#endif
#ifdef __ARM_FEATURE_SVE_MATMUL_INT8
	{1, 9, "svei8mm"},
#endif
#ifdef __ARM_FEATURE_SVE_BF16
	{1, 12, "svebf16"},
#endif
#ifdef __ARM_FEATURE_MATMUL_INT8
	{1, 13, "i8mm"},
#endif
#ifdef __ARM_FEATURE_BF16_VECTOR_ARITHMETIC
	{1, 14, "bf16"},
#endif
	{0, 0, NULL}};

/* 0, or DOCCC_ERR_CPU with the missing extensions in msg */
DC_BASE static int dc_cpu_check(char *msg, size_t n)
{
	unsigned long w[2] = {getauxval(AT_HWCAP), getauxval(AT_HWCAP2)};
	size_t k = 0;
	for (int i = 0; dc_isa[i].name; i++) {
		if (w[dc_isa[i].word] >> dc_isa[i].bit & 1)
			continue;
		int len = k ? snprintf(msg + k, n - k, " %s", dc_isa[i].name)
		            : snprintf(msg, n, DC_NAME " was compiled for %s, which this CPU does not have (it lacks %s", dc_march, dc_isa[i].name);
		if (len > 0)
			k = k + (size_t)len < n ? k + (size_t)len : n - 1;
	}
	if (!k)
		return DOCCC_OK;
	snprintf(msg + k, n - k, "): compile it again for this CPU (doccc --march with its name, e.g. cortex-a72, or an -march it has, e.g. armv8-a)");
	return DOCCC_ERR_CPU;
}
#else
#define DC_BASE
static int dc_cpu_check(char *msg, size_t n)
{
	(void)msg, (void)n;
	return DOCCC_OK;
}
#endif

