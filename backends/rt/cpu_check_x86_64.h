/*
 * cpu_check_x86_64.h - the CPU check of an x86-64 CPU library
 * (backends/emit_cpu.c prints its architecture's after dc_march; aarch64's
 * is cpu_check_aarch64.h). A library compiled for an instruction set
 * extension the CPU lacks (-march=x86-64-v4 on an AVX2 machine) would die of SIGILL
 * in its first run; instead create() returns DOCCC_ERR_CPU, with the
 * missing extensions in NAME_last_error(NULL). The extensions are the ones
 * the compiler was allowed (its -march macros, so --march native and cross
 * builds are checked exactly), looked up with cpuid at each create, and
 * those with wider registers also with the OS's saved state (xgetbv). The
 * check and the entry points that may run before it (create_from and the
 * dims functions) are compiled for the baseline x86-64 (DC_BASE). Each row
 * of dc_isa: the cpuid word (0: leaf 1 ecx; 1-3: leaf 7 ebx, ecx, edx; 4:
 * leaf 7.1 eax; 5: leaf 0x80000001 ecx), the bit, the XCR0 bits it needs,
 * its name. DC_NAME is the model's name, a string literal.
 *
 * The opening comment is for this file's reader: the library gets what
 * follows it (rt_body).
 */
#if defined(__x86_64__) && (defined(__clang__) || defined(__GNUC__))
#include <stdio.h>
#define DC_BASE __attribute__((target("no-avx,no-bmi,no-bmi2,no-lzcnt,no-movbe,no-popcnt,no-sse4.2,no-sse4.1,no-ssse3,no-sse3,no-f16c,no-fma")))
static const struct {
	unsigned char word, bit;
	unsigned xcr0;
	const char *name;
} dc_isa[] = {
#ifdef __SSE3__
	{0, 0, 0, "sse3"},
#endif
#ifdef __PCLMUL__
	{0, 1, 0, "pclmul"},
#endif
#ifdef __SSSE3__
	{0, 9, 0, "ssse3"},
#endif
#ifdef __FMA__
	{0, 12, 6, "fma"},
#endif
#ifdef __SSE4_1__
	{0, 19, 0, "sse4.1"},
#endif
#ifdef __SSE4_2__
	{0, 20, 0, "sse4.2"},
#endif
#ifdef __MOVBE__
	{0, 22, 0, "movbe"},
#endif
#ifdef __POPCNT__
	{0, 23, 0, "popcnt"},
#endif
#ifdef __AES__
	{0, 25, 0, "aes"},
#endif
#ifdef __AVX__
	{0, 28, 6, "avx"},
#endif
#ifdef __F16C__
	{0, 29, 6, "f16c"},
#endif
#ifdef __BMI__
	{1, 3, 0, "bmi"},
#endif
#ifdef __AVX2__
	{1, 5, 6, "avx2"},
#endif
#ifdef __BMI2__
	{1, 8, 0, "bmi2"},
#endif
#ifdef __AVX512F__
	{1, 16, 0xe6, "avx512f"},
#endif
#ifdef __AVX512DQ__
	{1, 17, 0xe6, "avx512dq"},
#endif
#ifdef __ADX__
	{1, 19, 0, "adx"},
#endif
#ifdef __AVX512IFMA__
	{1, 21, 0xe6, "avx512ifma"},
#endif
#ifdef __AVX512CD__
	{1, 28, 0xe6, "avx512cd"},
#endif
#ifdef __SHA__
	{1, 29, 0, "sha"},
#endif
#ifdef __AVX512BW__
	{1, 30, 0xe6, "avx512bw"},
#endif
#ifdef __AVX512VL__
	{1, 31, 0xe6, "avx512vl"},
#endif
#ifdef __AVX512VBMI__
	{2, 1, 0xe6, "avx512vbmi"},
#endif
#ifdef __AVX512VBMI2__
	{2, 6, 0xe6, "avx512vbmi2"},
#endif
#ifdef __GFNI__
	{2, 8, 0, "gfni"},
#endif
#ifdef __VAES__
	{2, 9, 6, "vaes"},
#endif
#ifdef __VPCLMULQDQ__
	{2, 10, 6, "vpclmulqdq"},
#endif
#ifdef __AVX512VNNI__
	{2, 11, 0xe6, "avx512vnni"},
#endif
#ifdef __AVX512BITALG__
	{2, 12, 0xe6, "avx512bitalg"},
#endif
#ifdef __AVX512VPOPCNTDQ__
	{2, 14, 0xe6, "avx512vpopcntdq"},
#endif
#ifdef __AMXBF16__
	{3, 22, 0x60000, "amx-bf16"},
#endif
#ifdef __AVX512FP16__
	{3, 23, 0xe6, "avx512fp16"},
#endif
#ifdef __AMXTILE__
	{3, 24, 0x60000, "amx-tile"},
#endif
#ifdef __AMXINT8__
	{3, 25, 0x60000, "amx-int8"},
#endif
#ifdef __AVXVNNI__
	{4, 4, 6, "avxvnni"},
#endif
#ifdef __AVX512BF16__
	{4, 5, 0xe6, "avx512bf16"},
#endif
#ifdef __LZCNT__
	{5, 5, 0, "lzcnt"},
#endif
#ifdef __SSE4A__
	{5, 6, 0, "sse4a"},
#endif
#ifdef __FMA4__
	{5, 16, 6, "fma4"},
#endif
	{0, 0, 0, NULL}};

DC_BASE static void dc_cpuid(unsigned leaf, unsigned sub, unsigned *r)
{
	__asm__ volatile("cpuid" : "=a"(r[0]), "=b"(r[1]), "=c"(r[2]), "=d"(r[3]) : "a"(leaf), "c"(sub));
}

/* 0, or DOCCC_ERR_CPU with the missing extensions in msg */
DC_BASE static int dc_cpu_check(char *msg, size_t n)
{
	unsigned w[6] = {0, 0, 0, 0, 0, 0}, r[4], top, xcr0 = 0, hi = 0;
	dc_cpuid(0, 0, r);
	top = r[0];
	if (top >= 1)
		dc_cpuid(1, 0, r), w[0] = r[2];
	if (top >= 7) {
		dc_cpuid(7, 0, r), w[1] = r[1], w[2] = r[2], w[3] = r[3];
		if (r[0] >= 1)
			dc_cpuid(7, 1, r), w[4] = r[0];
	}
	dc_cpuid(0x80000000u, 0, r);
	if (r[0] >= 0x80000001u)
		dc_cpuid(0x80000001u, 0, r), w[5] = r[2];
	if (w[0] >> 27 & 1) /* OSXSAVE: xgetbv reads which register state the OS saves */
		__asm__ volatile(".byte 0x0f, 0x01, 0xd0" : "=a"(xcr0), "=d"(hi) : "c"(0));
	size_t k = 0;
	for (int i = 0; dc_isa[i].name; i++) {
		if ((w[dc_isa[i].word] >> dc_isa[i].bit & 1) && (xcr0 & dc_isa[i].xcr0) == dc_isa[i].xcr0)
			continue;
		int len = k ? snprintf(msg + k, n - k, " %s", dc_isa[i].name)
		            : snprintf(msg, n, DC_NAME " was compiled for %s, which this CPU does not have (it lacks %s", dc_march, dc_isa[i].name);
		if (len > 0)
			k = k + (size_t)len < n ? k + (size_t)len : n - 1;
	}
	if (!k)
		return DOCCC_OK;
	snprintf(msg + k, n - k, "): compile it again for this machine (doccc --march native, or -c desktop or -c edge)");
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

