/*
 * target.c - the backends and the categories: the one table of targets and
 * the one table of hardware decisions.
 *
 * A backend is one row of backend_table, indexed by its TargetKind (a
 * static assert keeps the two in step): its name (-t), its printer and the
 * suffix of the source it prints, its toolchain (the variable naming the
 * compiler, DOCC_CC and the like, the compile's and the link's flags, the
 * libraries a static link needs), whether it compiles for the category's
 * ISA with explicit SIMD and whether it runs maps on threads; a GPU row
 * adds its device backend name (the descriptor's, the header's and the
 * report's), its runtime's name, the runtime header written beside the
 * source (doccc_gpu.h: the CUDA spelling mapped onto the runtime), the
 * simulation's toolchain (the same source for this CPU), its architecture
 * per category, the variable that may choose one, and the architectures
 * its toolchain builds. build.c, emit_h.c, emit_gpu.c, cmd/check.c and
 * cmd/doccc.c read the row; nothing else names a backend.
 *
 * A category names a class of machine; every decision that depends on it
 * comes from this table, so `-c` changes real things. An architecture
 * (--triple, or `triple:` in YAML, or DOCC_TRIPLE; this machine's by
 * default) is a column of it:
 *
 *   x86_64     -march                   vector  regs  L1     L2     threads  register tile
 *   edge       x86-64-v2                128     16    32K    256K   2        4 x 8
 *   desktop    x86-64-v3                256     16    32K    1M     0 (all)  6 x 16
 *   server     x86-64-v4                512     32    48K    2M     0 (all)  7 x 32
 *
 *   aarch64    -march                   vector  regs  L1     L2     threads  register tile
 *   edge       armv8.2-a+dotprod+fp16   128     32    64K    256K   4        8 x 8   (Cortex-A76: Raspberry Pi 5)
 *   desktop    armv8.4-a+dotprod+fp16   128     32    64K    1M     0 (all)  8 x 8   (Neoverse N1 class)
 *   server     armv9-a+dotprod+i8mm+bf16 128     32    64K    1M     0 (all)  8 x 8   (Neoverse V2: Graviton4, Grace)
 *
 * The register tile is the accumulator block of the convolution and GEMM
 * micro-kernels (ir/expand/): rows of output pixels by two vectors of
 * output channels, sized so accumulators plus operands fit the
 * architectural vector registers (NEON's 32 hold 16 accumulators, the two
 * weight vectors and the rows' inputs). --march (or `march:` in YAML, or
 * else DOCC_MARCH in the environment) overrides the ISA for cross
 * compilation; "native" asks the host, and the vector width then follows
 * what the host has. An aarch64 ISA is an -march (armv8.2-a+dotprod) or a
 * CPU, which clang takes as -mcpu (cortex-a76, neoverse-n1). A library
 * whose ISA the CPU it runs on lacks says so at create (DOCCC_ERR_CPU,
 * backends/rt/cpu_check_ARCH.h: cpuid on x86-64, HWCAP and HWCAP2 on aarch64)
 * instead of dying of SIGILL. aarch64 vectors are NEON's 128 bits in every
 * category: the server's SVE2 is there for what clang vectorizes on its
 * own, and Neoverse V2's SVE registers are 128 bits wide anyway.
 *
 * A triple other than the host's is a cross build: clang gets --target,
 * the link a cross sysroot's libraries (Debian's libc6-dev-arm64-cross,
 * libgcc-12-dev-arm64-cross, binutils-aarch64-linux-gnu; OpenMP's
 * libomp.so.5 taken from libomp5-14:arm64 into /usr/aarch64-linux-gnu/lib,
 * since that package cannot be installed beside the amd64 one), and
 * `doccc run` runs the library under qemu-aarch64 (cmd/run.c).
 *
 * Targets: none compiles plain loops at -O2 without explicit SIMD (vec_bits
 * 0); sequential and openmp use the category's ISA at -O3; openmp adds
 * parallel maps.
 *
 * GPU targets take the category's GPU columns instead, and the row's
 * architecture for the category:
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
 * the YAML file), else the row's variable (DOCC_CUDA_ARCH for cuda: "sm_86"
 * or "cuda:sm_86"), else the category; one outside the row's list is a
 * usage error, and gfx942 (MI300X) gets its own message, since Debian's
 * hipcc 5.2 does not know it. gpu_tc says whether the contractions may use
 * tensor cores (CUDA sm_80 and later); contraction_precision then picks
 * their input type (ir/passes/gpu_plan.c). GPU targets compile without
 * explicit SIMD (vec_bits 0) and with approximate_math on unless an option
 * turns it off, like Inductor.
 */
#include <elf.h>
#include <stdlib.h>
#include <string.h>
#if defined(__x86_64__) && defined(__GNUC__)
#include <cpuid.h>
#endif
#if defined(__aarch64__) && defined(__linux__)
#include <sys/auxv.h>
#endif

#include "emit.h"

const char *const category_names[] = {"edge", "desktop", "server", NULL};
const char *const precision_names[] = {"highest", "high", "medium", NULL};

/* The category's GPU columns (the CPU's are the architectures'). */
typedef struct {
	const char *name;
	int gpu_block, gpu_blocks_per_sm;
	int64_t gpu_locals;
} Category;

static const Category categories[NCATEGORIES] = {
	{"edge", 128, 8, 16 << 10},
	{"desktop", 256, 8, 32 << 10},
	{"server", 256, 16, 64 << 10},
};

/* The -march values whose ISA doccc's kernels distinguish: the vector
 * width, and four-byte int8 dot products for the integer kernels
 * (vpdpbusd: AVX512-VNNI with 512-bit vectors, AVX-VNNI with 256; sdot or
 * usdot on aarch64). Any other value gets the architecture's narrowest
 * vectors and no dot4; on aarch64 its +dotprod or +i8mm says. */
static const March x86_marches[] = {
	{"x86-64-v4", 512, 0}, {"skylake-avx512", 512, 0}, {"cascadelake", 512, 1}, {"cooperlake", 512, 1},
	{"icelake-server", 512, 1}, {"icelake-client", 512, 1}, {"tigerlake", 512, 1}, {"rocketlake", 512, 1},
	{"sapphirerapids", 512, 1}, {"emeraldrapids", 512, 1}, {"graniterapids", 512, 1}, {"znver4", 512, 1},
	{"znver5", 512, 1}, {"x86-64-v3", 256, 0}, {"haswell", 256, 0}, {"broadwell", 256, 0}, {"skylake", 256, 0},
	{"alderlake", 256, 1}, {"raptorlake", 256, 1}, {"meteorlake", 256, 1}, {"arrowlake", 256, 1},
	{"sierraforest", 256, 1}, {"znver1", 256, 0}, {"znver2", 256, 0}, {"znver3", 256, 0},
};
/* aarch64 CPUs (clang's -mcpu) by whether they have dot products. */
static const March arm_marches[] = {
	{"cortex-a53", 128, 0}, {"cortex-a57", 128, 0}, {"cortex-a72", 128, 0}, {"cortex-a73", 128, 0},
	{"cortex-a55", 128, 1}, {"cortex-a75", 128, 1}, {"cortex-a76", 128, 1}, {"cortex-a77", 128, 1},
	{"cortex-a78", 128, 1}, {"cortex-a78c", 128, 1}, {"cortex-x1", 128, 1}, {"cortex-x2", 128, 1},
	{"cortex-a510", 128, 1}, {"cortex-a710", 128, 1}, {"neoverse-n1", 128, 1}, {"neoverse-n2", 128, 1},
	{"neoverse-v1", 128, 1}, {"apple-m1", 128, 1},
};

/* What an x86-64 host has, for --march native. */
static void x86_host(int *bits, int *dot4)
{
	*bits = 128, *dot4 = 0;
#if defined(__x86_64__) && defined(__GNUC__)
	__builtin_cpu_init();
	unsigned a, b, c, d;
	int vnni512 = 0, vnni = 0;
	if (__get_cpuid_count(7, 0, &a, &b, &c, &d))
		vnni512 = c >> 11 & 1;
	if (__get_cpuid_count(7, 1, &a, &b, &c, &d))
		vnni = a >> 4 & 1;
	if (__builtin_cpu_supports("avx512f"))
		*bits = 512, *dot4 = vnni512;
	else if (__builtin_cpu_supports("avx2"))
		*bits = 256, *dot4 = vnni;
#endif
}

/* What an aarch64 host has: NEON, and dot products where HWCAP says. */
static void arm_host(int *bits, int *dot4)
{
	*bits = 128, *dot4 = 0;
#if defined(__aarch64__) && defined(__linux__)
	*dot4 = getauxval(AT_HWCAP) >> 20 & 1; /* HWCAP_ASIMDDP */
#endif
}

/* Dot products of an aarch64 -march outside the CPU table: an
 * architecture with its extensions (armv8.2-a+dotprod, or +i8mm's usdot);
 * clang 14 enables neither by the architecture's version alone. */
static int arm_dot4(const char *m)
{
	return (strstr(m, "+dotprod") || strstr(m, "+i8mm")) && !strstr(m, "+nodotprod");
}

/* weights.o's section: on x86-64 large data (.lrodata, SHF_X86_64_LARGE,
 * which elf.h lacks), placed after the rest by the linker, so that a blob
 * of any size leaves the library's own relocations in reach; aarch64's
 * ADRP reaches 4 GiB either way. */
const Arch arch_table[NARCHS] = {
	[ARCH_X86_64] = {"x86_64", "x86_64-linux-gnu", EM_X86_64, NULL, x86_host, NULL, x86_marches, COUNTOF(x86_marches),
	                 {{"x86-64-v2", 128, 16, 32 << 10, 256 << 10, 2, 4}, {"x86-64-v3", 256, 16, 32 << 10, 1 << 20, 0, 6},
	                  {"x86-64-v4", 512, 32, 48 << 10, 2 << 20, 0, 7}},
	                 "cpu_check_x86_64.h", ".lrodata.doccc_weights", SHF_ALLOC | 0x10000000, {"DOCC_AR", "x86_64-linux-gnu-ar"}, NULL,
	                 {{"/usr/x86_64-linux-gnu/include/stdlib.h", "libc6-dev-amd64-cross"},
	                  {"/usr/lib/gcc-cross/x86_64-linux-gnu", "libgcc-12-dev-amd64-cross"},
	                  {"/usr/bin/x86_64-linux-gnu-ld", "binutils-x86-64-linux-gnu"}}},
	[ARCH_AARCH64] = {"aarch64", "aarch64-linux-gnu", EM_AARCH64, "armv", arm_host, arm_dot4, arm_marches, COUNTOF(arm_marches),
	                  {{"armv8.2-a+dotprod+fp16", 128, 32, 64 << 10, 256 << 10, 4, 8},
	                   {"armv8.4-a+dotprod+fp16", 128, 32, 64 << 10, 1 << 20, 0, 8},
	                   {"armv9-a+dotprod+i8mm+bf16", 128, 32, 64 << 10, 1 << 20, 0, 8}},
	                  "cpu_check_aarch64.h", ".rodata.doccc_weights", SHF_ALLOC, {"DOCC_AR", "aarch64-linux-gnu-ar"}, "libomp.so.5",
	                  {{"/usr/aarch64-linux-gnu/include/stdlib.h", "libc6-dev-arm64-cross"},
	                   {"/usr/lib/gcc-cross/aarch64-linux-gnu", "libgcc-12-dev-arm64-cross"},
	                   {"/usr/bin/aarch64-linux-gnu-ld", "binutils-aarch64-linux-gnu"},
	                   {"/usr/aarch64-linux-gnu/lib/libomp.so.5", "libomp5-14:arm64 (its libomp.so.5 in /usr/aarch64-linux-gnu/lib)"}}},
};

#if defined(__aarch64__)
enum { HOST_ARCH = ARCH_AARCH64 };
#else
enum { HOST_ARCH = ARCH_X86_64 };
#endif

const Arch *arch_of(const Target *t)
{
	DOCC_ASSERT(t->arch >= 0 && t->arch < NARCHS);
	return &arch_table[t->arch];
}

const char *arch_isa_flag(Arena *a, const Target *t)
{
	const char *p = arch_of(t)->march_prefix;
	int cpu = p && strncmp(t->march, p, strlen(p)) && strcmp(t->march, "native");
	return arena_printf(a, "-%s=%s", cpu ? "mcpu" : "march", t->march);
}

int arch_check_sysroot(const Target *t, int openmp)
{
	const Arch *ar = arch_of(t);
	Buf miss = {0};
	const char *first = NULL;
	for (size_t i = 0; i < COUNTOF(ar->needs) && ar->needs[i].path; i++) {
		if (file_exists(ar->needs[i].path) || dir_exists(ar->needs[i].path) || (!openmp && ar->omp && strstr(ar->needs[i].path, ar->omp)))
			continue;
		first = first ? first : ar->needs[i].path;
		buf_printf(&miss, " %s", ar->needs[i].package);
	}
	if (!miss.len)
		return 0;
	diag_error(NULL, "cross-compiling for %s needs its sysroot, which this machine lacks (no %s): install the Debian "
	           "packages%s (sh test/setup.sh --cross installs them), "
	           "or name a toolchain that has one in DOCC_CC (\"clang --sysroot=DIR\")",
	           ar->triple, first, miss.s);
	buf_free(&miss);
	return -1;
}

/* ---- the toolchains' flags --------------------------------------------------------- */

/* The compile's flags, after the compiler's words (NAME.c to NAME.o). */
void clang_flags(Argv *a, const Target *t)
{
	if (t->triple)
		argv_add(a, arena_printf(a->ar, "--target=%s", t->triple));
	argv_add(a, "-std=c11");
	argv_add(a, t->opt);
	argv_add(a, "-fPIC");
	argv_add(a, "-fno-math-errno");
	argv_add(a, "-fwrapv"); /* integer overflow wraps, as in PyTorch's kernels in practice */
	if (backend_of(t)->simd) {
		argv_add(a, arch_isa_flag(a->ar, t));
		if (t->vec_bits == 512)
			argv_add(a, "-mprefer-vector-width=512");
	}
	if (t->threads)
		argv_add(a, "-fopenmp");
}

void nvcc_flags(Argv *a, const Target *t)
{
	const char *cc = t->march + 3; /* "sm_90" -> "90" */
	argv_add(a, "-O3");
	argv_add(a, "-std=c++17");
	argv_add(a, "-Xcompiler");
	argv_add(a, "-fPIC,-fno-math-errno,-fwrapv");
	/* Spelled long: ccache (4.7) takes any word starting "-g" for debug
	 * information and then hashes the working directory, so -gencode missed
	 * the cache from every other DOCC_TMP. */
	argv_add(a, arena_printf(a->ar, "--generate-code=arch=compute_%s,code=[sm_%s,compute_%s]", cc, cc, cc));
	if (t->approx)
		argv_add(a, "--use_fast_math");
	argv_add(a, "-diag-suppress=177,550"); /* unused helpers and variables of the shared prologue */
	/* Keep the intermediates, in the working directory: their names are
	 * then NAME.cudafe1.cpp and so on, not tmpxft_PID_..., and the object's
	 * FILE symbol, which names one of them, is the same in every build. */
	argv_add(a, "-keep");
}

void hipcc_flags(Argv *a, const Target *t)
{
	argv_add(a, arena_printf(a->ar, "--offload-arch=%s", t->march)); /* always: without it hipcc probes for a GPU */
	argv_add(a, "-O3");
	argv_add(a, "-std=c++17");
	argv_add(a, "-fPIC");
	argv_add(a, "-fno-math-errno");
	argv_add(a, "-fwrapv");
	if (t->approx) {
		argv_add(a, "-ffast-math");
		argv_add(a, "-fno-finite-math-only"); /* NaN and inf keep their meaning (max, isnan) */
	}
	argv_add(a, "-x");
	argv_add(a, "hip");
}

/* The link's flags besides -shared, where it needs more. */
void clang_ldflags(Argv *a, const Target *t)
{
	const char *omp = arch_of(t)->omp;
	if (t->triple)
		argv_add(a, arena_printf(a->ar, "--target=%s", t->triple));
	/* a cross link names the target's OpenMP runtime itself: its sysroot
	 * (multiarch) has libomp.so.5 but no libomp.so for -fopenmp's -lomp */
	if (t->threads)
		argv_add(a, t->triple && omp ? arena_printf(a->ar, "-l:%s", omp) : "-fopenmp");
}

void hipcc_ldflags(Argv *a, const Target *t)
{
	argv_add(a, arena_printf(a->ar, "--offload-arch=%s", t->march)); /* else hipcc probes for a GPU */
}

void sim_flags(Argv *a, const Target *t)
{
	(void)t;
	argv_add(a, "-std=c++17");
	argv_add(a, "-O2");
	argv_add(a, "-fPIC");
	argv_add(a, "-fno-math-errno");
	argv_add(a, "-fwrapv");
	argv_add(a, "-DDOCCC_SIM");
	argv_add(a, "-x");
	argv_add(a, "c++");
}

/* ---- the backends ------------------------------------------------------------------ */

/* The architectures the toolchains here build, with their SM (CU) count
 * for sizing grids and whether the contractions may use tensor cores
 * through CUDA's wmma with tf32, bf16 and fp16 inputs (sm_80 and later;
 * HIP has no wmma of its own: rocm contracts on the vector units). */
static const GpuArch cuda_archs[] = {
	{"sm_75", 40, 0}, {"sm_80", 108, 1}, {"sm_86", 84, 1}, {"sm_87", 16, 1}, {"sm_89", 128, 1}, {"sm_90", 132, 1},
	{"sm_90a", 132, 1}, {"sm_100", 148, 1}, {"sm_100a", 148, 1}, {"sm_103", 148, 1}, {"sm_110", 20, 1},
	{"sm_120", 170, 1}, {"sm_121", 48, 1},
};
static const GpuArch rocm_archs[] = {
	{"gfx900", 64, 0}, {"gfx906", 60, 0}, {"gfx908", 120, 0}, {"gfx90a", 104, 0}, {"gfx940", 228, 0}, {"gfx1030", 80, 0},
};

#define CLANG {{"DOCC_CC", "clang"}, clang_flags, clang_ldflags, {"-lm"}, "-lm"}
#define SIMULATION {{"DOCC_CXX", "clang++"}, sim_flags, NULL, {"-lm", "-lpthread"}, "-lstdc++ -lm -lpthread"}

const Backend backend_table[NTARGETS] = {
	[TG_NONE] = {TG_NONE, "none", &printer_cpu, ".c", CLANG, 0, 0},
	[TG_SEQUENTIAL] = {TG_SEQUENTIAL, "sequential", &printer_cpu, ".c", CLANG, 1, 0},
	[TG_OPENMP] = {TG_OPENMP, "openmp", &printer_cpu, ".c", CLANG, 1, 1},
	[TG_CUDA] = {TG_CUDA, "cuda", &printer_gpu, ".cu",
	             {{"DOCC_NVCC", "nvcc"}, nvcc_flags, NULL, {"-lm"}, "-lcudart -lstdc++ -lm"}, 0, 0,
	             "cuda", "CUDA", "gpu_rt.h", SIMULATION, {"sm_87", "sm_89", "sm_90"}, "DOCC_CUDA_ARCH",
	             cuda_archs, COUNTOF(cuda_archs)},
	[TG_ROCM] = {TG_ROCM, "rocm", &printer_gpu, ".cu",
	             {{"DOCC_HIPCC", "hipcc"}, hipcc_flags, hipcc_ldflags, {"-lm"}, "-lamdhip64 -lstdc++ -lm"}, 0, 0,
	             "rocm", "HIP", "gpu_rt.h", SIMULATION, {"gfx1030", "gfx1030", "gfx90a"}, NULL,
	             rocm_archs, COUNTOF(rocm_archs)},
};
_Static_assert(COUNTOF(backend_table) == NTARGETS, "a row of backend_table for every TargetKind");

const Backend *backend_find(const char *name)
{
	for (int k = 0; k < NTARGETS; k++)
		if (!strcmp(backend_table[k].name, name))
			return &backend_table[k];
	return NULL;
}

const Backend *backend_of(const Target *t)
{
	DOCC_ASSERT(t->kind >= 0 && t->kind < NTARGETS);
	return &backend_table[t->kind];
}

const Toolchain *backend_toolchain(const Target *t)
{
	const Backend *be = backend_of(t);
	return be->device && t->simulate ? &be->sim : &be->build;
}

const Backend *backend_default_gpu(void)
{
	for (int k = 0; k < NTARGETS; k++)
		if (backend_table[k].device)
			return &backend_table[k];
	DOCC_UNREACHABLE();
}

const char *backend_names(void)
{
	static char names[256];
	if (!*names)
		for (int k = 0; k < NTARGETS; k++)
			snprintf(names + strlen(names), sizeof names - strlen(names), "%s%s", k ? ", " : "", backend_table[k].name);
	return names;
}

/* ---- resolving the options --------------------------------------------------------- */

/* The ISA of -march m on arch: vector width and dot4. */
static void march_isa(const Arch *ar, const char *m, int *bits, int *dot4)
{
	*bits = 128, *dot4 = ar->dot4 ? ar->dot4(m) : 0;
	if (!strcmp(m, "native"))
		ar->host(bits, dot4);
	for (int i = 0; i < ar->nmarches; i++)
		if (!strcmp(m, ar->marches[i].name))
			*bits = ar->marches[i].bits, *dot4 = ar->marches[i].dot4;
}

/* Is m one of the other architectures' -march names? */
static const Arch *march_elsewhere(int arch, const char *m)
{
	for (int k = 0; k < NARCHS; k++)
		for (int i = 0; k != arch && i < arch_table[k].nmarches; i++)
			if (!strcmp(m, arch_table[k].marches[i].name) || !strcmp(m, arch_table[k].cat[0].march) ||
			    !strcmp(m, arch_table[k].cat[1].march) || !strcmp(m, arch_table[k].cat[2].march))
				return &arch_table[k];
	return NULL;
}

/* The triple (--triple, the YAML file's, else DOCC_TRIPLE, else the
 * host's): its architecture, or -1 reported. */
static int triple_arch(const Options *o, const char **triple)
{
	const char *env = getenv("DOCC_TRIPLE"), *v = o->triple ? o->triple : env && *env ? env : NULL;
	*triple = NULL;
	if (!v)
		return HOST_ARCH;
	for (int k = 0; k < NARCHS; k++) {
		size_t n = strlen(arch_table[k].name);
		/* x86_64-linux-gnu, x86_64, x86_64-unknown-linux-gnu, aarch64-linux-gnu, aarch64, arm64 */
		if (!strcmp(v, arch_table[k].triple) || !strcmp(v, arch_table[k].name) ||
		    (!strncmp(v, arch_table[k].name, n) && v[n] == '-' && strstr(v, "-linux-gnu")) ||
		    (k == ARCH_AARCH64 && !strcmp(v, "arm64"))) {
			*triple = arch_table[k].triple;
			return k;
		}
	}
	Buf b = {0};
	for (int k = 0; k < NARCHS; k++)
		buf_printf(&b, "%s%s", k ? ", " : "", arch_table[k].triple);
	diag_error(NULL, "unknown triple '%s'%s (known: %s)", v, o->triple ? "" : " (DOCC_TRIPLE)", b.s);
	buf_free(&b);
	return -1;
}

static int gpu_resolve(Target *t, const Options *o, const Backend *be, int cat)
{
	const Category *c = &categories[cat];
	const char *env = be->arch_env ? getenv(be->arch_env) : NULL;
	size_t n = strlen(be->name);
	if (env && !strncmp(env, be->name, n) && env[n] == ':')
		env += n + 1;
	const char *arch = o->march ? o->march : env && *env ? env : be->arch[cat];
	const char *from = o->march ? "architecture" : env && *env ? be->arch_env : "architecture";
	int sms = 0, tc = 0;
	for (int i = 0; i < be->narchs; i++)
		if (!strcmp(be->archs[i].arch, arch))
			sms = be->archs[i].sms, tc = be->archs[i].tc;
	if (!sms) {
		if (!strcmp(arch, "gfx942"))
			diag_error(NULL, "%s 'gfx942' (MI300X): Debian's hipcc 5.2 rejects it ('invalid target ID'); "
			           "use gfx940 or gfx90a, or a ROCm 5.7+ hipcc", from);
		else {
			Buf b = {0};
			for (int i = 0; i < be->narchs; i++)
				buf_printf(&b, "%s%s", b.len ? ", " : "", be->archs[i].arch);
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
	t->gpu_block = c->gpu_block;
	t->gpu_max_blocks = c->gpu_blocks_per_sm * sms;
	t->gpu_locals = c->gpu_locals;
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
	const Backend *be = backend_find(o->target);
	int cat = -1;
	for (int i = 0; i < NCATEGORIES; i++)
		if (!strcmp(o->category, categories[i].name))
			cat = i;
	if (!be || cat < 0) {
		diag_error(NULL, "unknown %s '%s'", !be ? "target" : "category", !be ? o->target : o->category);
		return -1;
	}
	const Category *c = &categories[cat];
	t->kind = be->kind;
	t->name = be->name;
	t->category = c->name;
	t->gpu = be->device != NULL;
	t->threads = be->threads;
	if ((t->arch = triple_arch(o, &t->triple)) < 0)
		return -1;
	const Arch *ar = &arch_table[t->arch];
	const CpuColumn *cc = &ar->cat[cat];
	if (t->arch == HOST_ARCH)
		t->triple = NULL; /* the host's: no --target, the same commands as without --triple */
	if (t->triple && t->gpu) {
		diag_error(NULL, "-t %s builds for this machine (%s); --triple %s is for the CPU targets (none, sequential, openmp)",
		           t->name, arch_table[HOST_ARCH].triple, t->triple);
		return -1;
	}
	/* --march (or the YAML file's march), else DOCC_MARCH for the CPU
	 * targets (the GPU ones take their own variable), else the category's */
	const char *env = getenv("DOCC_MARCH"), *m = o->march;
	if (!m && env && *env && !t->gpu) {
		m = env;
		t->march_env = be->simd;
	}
	const Arch *other = m && !t->gpu ? march_elsewhere(t->arch, m) : NULL;
	if (other) {
		diag_error(NULL, "%s '%s' is an %s ISA, but the triple is %s: give an %s one (the categories': %s, %s, %s)%s",
		           o->march ? "march" : "DOCC_MARCH", m, other->name, ar->triple, ar->name, ar->cat[0].march,
		           ar->cat[1].march, ar->cat[2].march,
		           t->arch == HOST_ARCH ? "" : ", or leave --march out for the category's");
		return -1;
	}
	if (m && t->triple && !strcmp(m, "native")) {
		diag_error(NULL, "march 'native' names this machine's CPU, but the triple is %s: give an %s -march or CPU (%s)",
		           ar->triple, ar->name, cc->march);
		return -1;
	}
	t->march = m ? m : cc->march;
	t->vec_bits = cc->vec_bits;
	t->dot4 = 0; /* no category's x86 ISA has it */
	if (m || t->arch != ARCH_X86_64)
		march_isa(ar, t->march, &t->vec_bits, &t->dot4);
	t->l1 = cc->l1;
	t->l2 = cc->l2;
	t->max_threads = cc->max_threads;
	/* The registers and the register tile follow the vector width
	 * actually used: the first column of the architecture with it. */
	const CpuColumn *w = cc;
	for (int i = NCATEGORIES - 1; i >= 0; i--)
		if (ar->cat[i].vec_bits == t->vec_bits)
			w = &ar->cat[i];
	t->vec_regs = w->vec_regs;
	t->tile_n = 2 * (t->vec_bits / 32);
	t->tile_m = w->tile_m;
	t->opt = "-O3";
	t->approx = o->approximate_math > 0;
	/* opt_set validated the name */
	for (int i = 0; precision_names[i]; i++)
		if (o->contraction_precision && !strcmp(o->contraction_precision, precision_names[i]))
			t->precision = (ContractionPrecision)i;
	if (t->gpu)
		return gpu_resolve(t, o, be, cat);
	if (!be->simd) {
		/* Plain C on one core: no explicit SIMD; the tile stays small. */
		t->vec_bits = 0;
		t->dot4 = 0;
		t->tile_m = 4;
		t->tile_n = 8;
		t->opt = "-O2";
	}
	return 0;
}
