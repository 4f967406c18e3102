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
 * architectural vector registers. --march (or `march:` in YAML, or else
 * DOCC_MARCH in the environment) overrides the ISA for cross compilation;
 * "native" asks the host, and the vector width then follows what the host
 * has. A library whose -march the CPU it runs on lacks says so at create
 * (DOCCC_ERR_CPU, backends/emit_cpu.c) instead of dying of SIGILL.
 *
 * Targets: none compiles plain loops at -O2 without explicit SIMD (vec_bits
 * 0); sequential and openmp use the category's ISA at -O3; openmp adds
 * parallel maps.
 *
 * GPU targets take the category's GPU columns instead:
 *
 *   category  cuda arch  rocm arch  block  blocks/SM  locals/thread
 *   edge      sm_87      gfx1030    128    8          16K   (Jetson Orin class)
 *   desktop   sm_89      gfx1030    256    8          32K   (RTX 40 class)
 *   server    sm_90      gfx90a     256    16         64K   (H100/H200, MI200)
 *
 * block is the threads per block of every grid (a power of two: the
 * cooperative kernels reduce through a shared-memory tree), blocks/SM
 * times the SM count of the architecture caps a grid (grid-stride loops do
 * the rest), locals/thread bounds the per-thread buffers a kernel may
 * declare (a step needing more stays on the host: ir/passes/schedule.c).
 * The architecture comes from --offload-arch or --march (a CLI flag or
 * the YAML file), else DOCC_CUDA_ARCH (cuda; "sm_86" or "cuda:sm_86"),
 * else the category; one outside gpu_archs[] is a usage error, and
 * gfx942 (MI300X) gets its own message, since Debian's hipcc 5.2 does not
 * know it. gpu_tc says whether the contractions may use tensor cores (CUDA
 * sm_80 and later); contraction_precision then picks their input type
 * (backends/emit_gpu.c, gemm_kind). GPU targets compile without explicit SIMD (vec_bits 0) and with
 * approximate_math on unless an option turns it off, like Inductor.
 */
#include <stdlib.h>
#include <string.h>

#include "ir.h"

const char *const target_names[] = {"none", "sequential", "openmp", "cuda", "rocm", NULL};
const char *const category_names[] = {"edge", "desktop", "server", NULL};
const char *const precision_names[] = {"highest", "high", "medium", NULL};

typedef struct {
	const char *name;
	const char *march;
	int vec_bits, vec_regs;
	int64_t l1, l2;
	int max_threads;
	int tile_m, tile_n;
	const char *cuda_arch, *rocm_arch;
	int gpu_block, gpu_blocks_per_sm;
	int64_t gpu_locals;
} Category;

static const Category categories[] = {
	{"edge", "x86-64-v2", 128, 16, 32 << 10, 256 << 10, 2, 4, 8, "sm_87", "gfx1030", 128, 8, 16 << 10},
	{"desktop", "x86-64-v3", 256, 16, 32 << 10, 1 << 20, 0, 6, 16, "sm_89", "gfx1030", 256, 8, 32 << 10},
	{"server", "x86-64-v4", 512, 32, 48 << 10, 2 << 20, 0, 7, 32, "sm_90", "gfx90a", 256, 16, 64 << 10},
};

/* The architectures the toolchains here build, with their SM (CU) count
 * for sizing grids and whether the contractions may use tensor cores
 * through CUDA's wmma with tf32, bf16 and fp16 inputs (sm_80 and later;
 * HIP has no wmma of its own: rocm contracts on the vector units). */
static const struct {
	TargetKind kind;
	const char *arch;
	int sms, tc;
} gpu_archs[] = {
	{TG_CUDA, "sm_75", 40, 0}, {TG_CUDA, "sm_80", 108, 1}, {TG_CUDA, "sm_86", 84, 1}, {TG_CUDA, "sm_87", 16, 1},
	{TG_CUDA, "sm_89", 128, 1}, {TG_CUDA, "sm_90", 132, 1}, {TG_CUDA, "sm_90a", 132, 1}, {TG_CUDA, "sm_100", 148, 1},
	{TG_CUDA, "sm_100a", 148, 1}, {TG_CUDA, "sm_103", 148, 1}, {TG_CUDA, "sm_110", 20, 1}, {TG_CUDA, "sm_120", 170, 1},
	{TG_CUDA, "sm_121", 48, 1},
	{TG_ROCM, "gfx900", 64, 0}, {TG_ROCM, "gfx906", 60, 0}, {TG_ROCM, "gfx908", 120, 0}, {TG_ROCM, "gfx90a", 104, 0},
	{TG_ROCM, "gfx940", 228, 0}, {TG_ROCM, "gfx1030", 80, 0},
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

static int gpu_resolve(Target *t, const Options *o, const Category *cat)
{
	const char *env = t->kind == TG_CUDA ? getenv("DOCC_CUDA_ARCH") : NULL;
	if (env && !strncmp(env, "cuda:", 5))
		env += 5;
	const char *arch = o->march ? o->march : env && *env ? env : t->kind == TG_CUDA ? cat->cuda_arch : cat->rocm_arch;
	const char *from = o->march ? "architecture" : env && *env ? "DOCC_CUDA_ARCH" : "architecture";
	int sms = 0, tc = 0;
	for (size_t i = 0; i < COUNTOF(gpu_archs); i++)
		if (gpu_archs[i].kind == t->kind && !strcmp(gpu_archs[i].arch, arch))
			sms = gpu_archs[i].sms, tc = gpu_archs[i].tc;
	if (!sms) {
		if (!strcmp(arch, "gfx942"))
			diag_error(NULL, "%s 'gfx942' (MI300X): Debian's hipcc 5.2 rejects it ('invalid target ID'); "
			           "use gfx940 or gfx90a, or a ROCm 5.7+ hipcc", from);
		else {
			Buf b = {0};
			for (size_t i = 0; i < COUNTOF(gpu_archs); i++)
				if (gpu_archs[i].kind == t->kind)
					buf_printf(&b, "%s%s", b.len ? ", " : "", gpu_archs[i].arch);
			diag_error(NULL, "unknown %s %s '%s' (known: %s)", t->name, from, arch, b.s);
			buf_free(&b);
		}
		return -1;
	}
	t->march = arch;
	t->vec_bits = 0;
	t->vec_regs = 0;
	/* one output element per GPU thread: the grid, not a register tile,
	 * supplies the parallelism (a 4x8 tile leaves an H200 mostly idle) */
	t->tile_m = 1;
	t->tile_n = 1;
	t->max_threads = 1;
	t->gpu_block = cat->gpu_block;
	t->gpu_max_blocks = cat->gpu_blocks_per_sm * sms;
	t->gpu_locals = cat->gpu_locals;
	t->gpu_sms = sms;
	t->gpu_tc = tc;
	t->approx = o->approximate_math != 0; /* default on, like Inductor */
	return 0;
}

/* The host build of a GPU target whose model cannot run on the GPU: the
 * openmp target of the same category, named after the GPU target. */
int target_host_fallback(Target *t, const Options *o)
{
	Target gpu = *t;
	Options h = *o;
	h.target = "openmp";
	h.march = NULL;
	if (target_resolve(t, &h))
		return -1;
	t->name = gpu.name;
	t->fallback = gpu.kind;
	t->simulate = gpu.simulate;
	return 0;
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
	/* --march (or the YAML file's march), else DOCC_MARCH for the CPU
	 * targets (the GPU ones take DOCC_CUDA_ARCH), else the category's */
	const char *env = getenv("DOCC_MARCH"), *m = o->march;
	if (!m && env && *env && !TARGET_IS_GPU(t)) {
		m = env;
		t->march_env = t->kind != TG_NONE;
	}
	t->march = m ? m : cat->march;
	t->vec_bits = m ? march_vec_bits(m) : cat->vec_bits;
	t->vec_regs = t->vec_bits == 512 ? 32 : 16;
	t->l1 = cat->l1;
	t->l2 = cat->l2;
	t->max_threads = cat->max_threads;
	/* The register tile follows the vector width actually used. */
	int lanes = t->vec_bits / 32;
	t->tile_n = 2 * lanes;
	t->tile_m = t->vec_bits == 512 ? 7 : t->vec_bits == 256 ? 6 : 4;
	t->opt = "-O3";
	t->approx = o->approximate_math > 0;
	/* opt_set validated the name */
	for (int i = 0; precision_names[i]; i++)
		if (o->contraction_precision && !strcmp(o->contraction_precision, precision_names[i]))
			t->precision = (ContractionPrecision)i;
	if (t->kind == TG_CUDA || t->kind == TG_ROCM)
		return gpu_resolve(t, o, cat);
	if (t->kind == TG_NONE) {
		/* Plain C on one core: no explicit SIMD; the tile stays small. */
		t->vec_bits = 0;
		t->tile_m = 4;
		t->tile_n = 8;
		t->opt = "-O2";
	}
	return 0;
}
