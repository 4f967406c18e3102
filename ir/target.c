/*
 * target.c - targets and categories: the one table of hardware decisions.
 *
 * A category names a class of machine; every decision that depends on it
 * comes from this table, so `-c` changes real things:
 *
 *   category  -march        vector  regs  L1     L2     threads  register tile (rows x lanes*2)
 *   edge      x86-64-v2     128     16    32K    256K   2        4 x 8
 *   desktop   x86-64-v3     256     16    32K    1M     0 (all)  6 x 16
 *   server    x86-64-v4     512     32    48K    2M     0 (all)  7 x 32
 *
 * The register tile is the accumulator block of the convolution and GEMM
 * micro-kernels (ir/passes/expand_gemm.c): rows of output pixels by two
 * vectors of output channels, sized so accumulators plus operands fit the
 * architectural vector registers. --march (or `march:` in YAML) overrides
 * the ISA for cross compilation; "native" asks the host, and the vector
 * width then follows what the host has.
 *
 * Targets: none compiles plain loops at -O2 without explicit SIMD (vec_bits
 * 0); sequential and openmp use the category's ISA at -O3; openmp adds
 * parallel maps. cuda and rocm are recognised and rejected by the driver
 * until their backend exists.
 */
#include <string.h>

#include "ir.h"

const char *const target_names[] = {"none", "sequential", "openmp", "cuda", "rocm", NULL};
const char *const category_names[] = {"edge", "desktop", "server", NULL};

typedef struct {
	const char *name;
	const char *march;
	int vec_bits, vec_regs;
	int64_t l1, l2;
	int max_threads;
	int tile_m, tile_n;
} Category;

static const Category categories[] = {
	{"edge", "x86-64-v2", 128, 16, 32 << 10, 256 << 10, 2, 4, 8},
	{"desktop", "x86-64-v3", 256, 16, 32 << 10, 1 << 20, 0, 6, 16},
	{"server", "x86-64-v4", 512, 32, 48 << 10, 2 << 20, 0, 7, 32},
};

static int host_vec_bits(void)
{
#if defined(__x86_64__) && defined(__GNUC__)
	__builtin_cpu_init();
	if (__builtin_cpu_supports("avx512f"))
		return 512;
	if (__builtin_cpu_supports("avx2"))
		return 256;
#endif
	return 128;
}

/* Vector width implied by an explicit -march value. */
static int march_vec_bits(const char *m)
{
	static const char *const v512[] = {"x86-64-v4", "skylake-avx512", "cascadelake", "cooperlake", "icelake-server",
	                                   "icelake-client", "tigerlake", "sapphirerapids", "emeraldrapids", "graniterapids",
	                                   "znver4", "znver5", NULL};
	static const char *const v256[] = {"x86-64-v3", "haswell", "broadwell", "skylake", "alderlake", "raptorlake",
	                                   "znver1", "znver2", "znver3", NULL};
	if (!strcmp(m, "native"))
		return host_vec_bits();
	for (int i = 0; v512[i]; i++)
		if (!strcmp(m, v512[i]))
			return 512;
	for (int i = 0; v256[i]; i++)
		if (!strcmp(m, v256[i]))
			return 256;
	return 128;
}

int target_resolve(Target *t, const Options *o)
{
	memset(t, 0, sizeof *t);
	int k = -1;
	for (int i = 0; target_names[i]; i++)
		if (!strcmp(o->target, target_names[i]))
			k = i;
	const Category *cat = NULL;
	for (size_t i = 0; i < COUNTOF(categories); i++)
		if (!strcmp(o->category, categories[i].name))
			cat = &categories[i];
	if (k < 0 || !cat) {
		diag_error(NULL, "unknown %s '%s'", k < 0 ? "target" : "category", k < 0 ? o->target : o->category);
		return -1;
	}
	t->kind = (TargetKind)k;
	t->name = target_names[k];
	t->category = cat->name;
	t->march = o->march ? o->march : cat->march;
	t->vec_bits = o->march ? march_vec_bits(o->march) : cat->vec_bits;
	t->vec_regs = t->vec_bits == 512 ? 32 : 16;
	t->l1 = cat->l1;
	t->l2 = cat->l2;
	t->max_threads = cat->max_threads;
	/* The register tile follows the vector width actually used. */
	int lanes = t->vec_bits / 32;
	t->tile_n = 2 * lanes;
	t->tile_m = t->vec_bits == 512 ? 7 : t->vec_bits == 256 ? 6 : 4;
	t->opt = "-O3";
	if (t->kind == TG_NONE) {
		/* Plain C on one core: no explicit SIMD; the tile stays small. */
		t->vec_bits = 0;
		t->tile_m = 4;
		t->tile_n = 8;
		t->opt = "-O2";
	}
	return 0;
}
