/*
 * build.c - weights layout, files, and the compilers.
 *
 * Every live constant is placed at a 64-byte aligned offset of one blob.
 * The blob reaches the library without passing through the C compiler: an
 * assembler file holds `.incbin "weights-SHA256.bin"`, so compile time does
 * not grow with the model. With --external-weights it is written instead to
 * NAME.weights (a 128-byte header: magic "DOCCCW01", size, the blob's
 * sha256 in hex, then the blob), which create() maps and checks.
 *
 * The compiler comes from the backend table below: one row per way of
 * building (the C printer with clang; the GPU printer with nvcc, hipcc, or
 * clang++ for the simulation), each with its printer, the generated
 * source's suffix, the variable that names its compiler (DOCC_CC,
 * DOCC_NVCC, DOCC_HIPCC, DOCC_CXX: a command, a launcher included, split
 * into words without a shell) and the compile's and link's flags. GPU
 * builds also write doccc_gpu.h and gpu_sim.h (embedded in doccc at its
 * build) beside the source. A build is three commands: the C compiler
 * (DOCC_CC) assembles weights.S into weights.o, the row's compiler compiles
 * the source to NAME.o and links the library (or ar makes a static
 * archive). They run in the working directory on relative paths, and the
 * blob's file name is its sha256, so no command line depends on where the
 * directory is and a compiler cache (ccache) can hit on the compile, and
 * none can mistake one blob for another. Compilers run through lib/spawn
 * (argv vector, -v echoes it with the cd). Everything is produced in the
 * working directory first; only when all of it succeeded are the outputs
 * copied to their final paths,
 * each through a temporary name and a rename, and a failure part-way
 * removes what was written.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "emit.h"

extern const char gpu_rt_h[], gpu_sim_h[];  /* $(BUILD)/gen/gpu_headers.c */

void blob_layout(Sdfg *g, Blob *b)
{
	size_t off = 0;
	for (int i = 0; i < g->ncs; i++) {
		Container *c = &g->cs[i];
		if (c->kind != CK_CONST || c->dead)
			continue;
		off = (off + 63) & ~(size_t)63;
		c->wofs = (int64_t)off;
		off += (size_t)(sdfg_numel(g, i) * dtype_info[c->dt].size);
	}
	b->size = off;
	b->data = arena_alloc_aligned(g->arena, off ? off : 1, 64);
	for (int i = 0; i < g->ncs; i++) {
		Container *c = &g->cs[i];
		if (c->kind != CK_CONST || c->dead)
			continue;
		memcpy(b->data + c->wofs, c->data, (size_t)(sdfg_numel(g, i) * dtype_info[c->dt].size));
	}
	sha256_hex_of(b->data, b->size, b->sha);
}

/* Copy a file of the working directory to its final place (atomically). */
static int install(const char *from, const char *to, int mode)
{
	size_t len;
	char *data = file_read(from, &len);
	if (!data)
		return -1;
	int rc = file_write_mode(to, data, len, mode);
	free(data);
	return rc;
}

/* ---- the backend table ------------------------------------------------------- */
/* A command's words: a tool's (at most TOOL_WORDS) and doccc's (fewer than 40). */
enum { TOOL_WORDS = 64, ARGV_MAX = TOOL_WORDS + 48 };

typedef struct {
	const char **v;
	int n;
	Arena *ar;
} Argv;

static void arg(Argv *a, const char *s)
{
	DOCC_ASSERT(a->n < ARGV_MAX - 1);
	a->v[a->n++] = s;
}

/* The compile's flags, after the compiler's words (NAME.c to NAME.o). */
static void clang_flags(Argv *a, const Target *t)
{
	arg(a, "-std=c11");
	arg(a, t->opt);
	arg(a, "-fPIC");
	arg(a, "-fno-math-errno");
	arg(a, "-fwrapv"); /* integer overflow wraps, as in PyTorch's kernels in practice */
	if (t->kind != TG_NONE) {
		arg(a, arena_printf(a->ar, "-march=%s", t->march));
		if (t->vec_bits == 512)
			arg(a, "-mprefer-vector-width=512");
	}
	if (t->kind == TG_OPENMP)
		arg(a, "-fopenmp");
}

static void nvcc_flags(Argv *a, const Target *t)
{
	const char *cc = t->march + 3; /* "sm_90" -> "90" */
	arg(a, "-O3");
	arg(a, "-std=c++17");
	arg(a, "-Xcompiler");
	arg(a, "-fPIC,-fno-math-errno,-fwrapv");
	arg(a, arena_printf(a->ar, "-gencode=arch=compute_%s,code=[sm_%s,compute_%s]", cc, cc, cc));
	if (t->approx)
		arg(a, "--use_fast_math");
	arg(a, "-diag-suppress=177,550"); /* unused helpers and variables of the shared prologue */
}

static void hipcc_flags(Argv *a, const Target *t)
{
	arg(a, arena_printf(a->ar, "--offload-arch=%s", t->march)); /* always: without it hipcc probes for a GPU */
	arg(a, "-O3");
	arg(a, "-std=c++17");
	arg(a, "-fPIC");
	arg(a, "-fno-math-errno");
	arg(a, "-fwrapv");
	if (t->approx) {
		arg(a, "-ffast-math");
		arg(a, "-fno-finite-math-only"); /* NaN and inf keep their meaning (max, isnan) */
	}
	arg(a, "-x");
	arg(a, "hip");
}

/* The link's flags besides -shared, where it needs more. */
static void clang_ldflags(Argv *a, const Target *t)
{
	if (t->kind == TG_OPENMP)
		arg(a, "-fopenmp");
}

static void hipcc_ldflags(Argv *a, const Target *t)
{
	arg(a, arena_printf(a->ar, "--offload-arch=%s", t->march)); /* else hipcc probes for a GPU */
}

static void sim_flags(Argv *a, const Target *t)
{
	(void)t;
	arg(a, "-std=c++17");
	arg(a, "-O2");
	arg(a, "-fPIC");
	arg(a, "-fno-math-errno");
	arg(a, "-fwrapv");
	arg(a, "-DDOCCC_SIM");
	arg(a, "-x");
	arg(a, "c++");
}

/* A command the build runs: the variable that names it (a launcher
 * included, DOCC_CC="ccache clang") and its default. */
typedef struct {
	const char *env, *dflt;
} Tool;

static const Tool tool_cc = {"DOCC_CC", "clang"}, tool_ar = {"DOCC_AR", "ar"};

typedef struct {
	int gpu_kind, simulate;      /* the GPU target it builds (0: every CPU target) */
	const Printer *printer;
	const char *ext;             /* of the generated source */
	int gpu;                     /* write doccc_gpu.h and gpu_sim.h beside it */
	Tool cc;                     /* compiles the source and links */
	void (*flags)(Argv *a, const Target *t);
	void (*ldflags)(Argv *a, const Target *t); /* or NULL */
	const char *libs[3];         /* after the link's inputs */
	const char *uses;            /* what a program linking the library statically needs */
} Backend;

static const Backend backends[] = {
	{0, 0, &printer_cpu, ".c", 0, {"DOCC_CC", "clang"}, clang_flags, clang_ldflags, {"-lm"}, "-lm"},
	{TG_CUDA, 0, &printer_gpu, ".cu", 1, {"DOCC_NVCC", "nvcc"}, nvcc_flags, NULL, {"-lm"}, "-lcudart -lstdc++ -lm"},
	{TG_ROCM, 0, &printer_gpu, ".cu", 1, {"DOCC_HIPCC", "hipcc"}, hipcc_flags, hipcc_ldflags, {"-lm"}, "-lamdhip64 -lstdc++ -lm"},
	{TG_CUDA, 1, &printer_gpu, ".cu", 1, {"DOCC_CXX", "clang++"}, sim_flags, NULL, {"-lm", "-lpthread"}, "-lstdc++ -lm -lpthread"},
	{TG_ROCM, 1, &printer_gpu, ".cu", 1, {"DOCC_CXX", "clang++"}, sim_flags, NULL, {"-lm", "-lpthread"}, "-lstdc++ -lm -lpthread"},
};

static const Backend *backend_of(const Target *t)
{
	int kind = TARGET_IS_GPU(t) ? (int)t->kind : 0, sim = kind && t->simulate;
	for (size_t i = 0; i < COUNTOF(backends); i++)
		if (backends[i].gpu_kind == kind && backends[i].simulate == sim)
			return &backends[i];
	DOCC_UNREACHABLE();
}

/* The words of tool's command into av (its variable's, else the default);
 * the number of words, or 0 when the variable is set and empty or blank
 * (reported). A relative path among them (a word with a '/' that is not an
 * option) is made absolute: the compilers run in the working directory. */
static int tool_words(Arena *ar, const Tool *tl, Argv *av)
{
	const char *v = getenv(tl->env);
	int n;
	char **w = spawn_words(ar, v ? v : tl->dflt, &n);
	if (!n) {
		diag_error(NULL, "%s is empty or blank: set it to the command that runs %s, a launcher included "
		           "(%s=\"ccache %s\"), or unset it", tl->env, tl->dflt, tl->env, tl->dflt);
		return 0;
	}
	if (n > TOOL_WORDS) {
		diag_error(NULL, "%s has %d words, more than %d", tl->env, n, TOOL_WORDS);
		return 0;
	}
	char cwd[4096];
	for (int i = 0; i < n; i++) {
		if (w[i][0] != '/' && w[i][0] != '-' && strchr(w[i], '/') && getcwd(cwd, sizeof cwd))
			w[i] = arena_printf(ar, "%s/%s", cwd, w[i]);
		arg(av, w[i]);
	}
	return n;
}

/* The tools a build for t runs, each once, NULL where none. */
static void tools_used(const Target *t, int static_lib, const Tool *used[3])
{
	used[0] = &tool_cc;
	used[1] = strcmp(backend_of(t)->cc.env, tool_cc.env) ? &backend_of(t)->cc : NULL;
	used[2] = static_lib ? &tool_ar : NULL;
}

int backend_check_tools(Arena *ar, const Target *t, int static_lib, const char **key)
{
	const char *argv[ARGV_MAX];
	Argv av = {argv, 0, ar};
	const Tool *used[3];
	tools_used(t, static_lib, used);
	int bad = 0;
	*key = "";
	for (size_t i = 0; i < COUNTOF(used); i++) {
		av.n = 0;
		if (!used[i])
			continue;
		bad |= !tool_words(ar, used[i], &av);
		const char *v = getenv(used[i]->env);
		*key = arena_printf(ar, "%s %s=%s", *key, used[i]->env, v ? v : used[i]->dflt);
	}
	return bad ? -1 : 0;
}

/* The directory of the runtime library lib that compiler cc links on its
 * own (clang -fopenmp: libomp in DIR/../lib, DIR where the clang binary
 * really is), or NULL when it is not there. */
static const char *runtime_dir(Arena *ar, const Tool *cc, const char *lib)
{
	const char *argv[ARGV_MAX];
	Argv av = {argv, 0, ar};
	int n = tool_words(ar, cc, &av);
	for (int i = 0; i < n; i++) {
		char *real = argv[i][0] == '-' ? NULL : spawn_which(ar, argv[i]);
		char *slash = real ? strrchr(real, '/') : NULL;
		if (!slash || strncmp(slash + 1, "clang", 5))
			continue; /* a launcher (ccache), an option */
		*slash = 0;
		slash = strrchr(real, '/');
		if (!slash)
			return NULL;
		*slash = 0;
		const char *dir = arena_printf(ar, "%s/lib", real);
		return file_exists(arena_printf(ar, "%s/%s", dir, lib)) ? dir : NULL;
	}
	return NULL;
}

const char *backend_link_flags(const Target *t, int static_lib)
{
	if (!static_lib)
		return ""; /* the shared library names its own dependencies */
	if (t->kind != TG_OPENMP)
		return backend_of(t)->uses;
	/* clang's OpenMP runtime (libomp), which gcc's -fopenmp would not
	 * link: by its directory when it is not on the linker's default path */
	static char flags[4200];
	if (!*flags) {
		Arena *ar = arena_new();
		const char *dir = runtime_dir(ar, &tool_cc, "libomp.so");
		if (dir && strlen(dir) < 2000)
			snprintf(flags, sizeof flags, "-L%s -Wl,-rpath,%s -lomp -lm", dir, dir);
		else
			snprintf(flags, sizeof flags, "-lomp -lm");
		arena_free(ar);
	}
	return flags;
}

/* Run argv in the working directory dir; words: how many of its first
 * words are the tool's command (named in messages), tl where it came from. */
static int run_tool(const char *dir, const char **argv, int words, const Tool *tl, const char *what, const char *nm)
{
	char *err = NULL;
	int st = spawn_run_in(dir, (char *const *)argv, &err);
	if (st != 0) {
		Buf cmd = {0};
		for (int i = 0; i < words; i++)
			buf_printf(&cmd, "%s%s", i ? " " : "", argv[i]);
		if (st > 0) {
			diag_error(NULL, "%s failed (exit status %d) %s", cmd.s, st, what);
			if (err && *err)
				fputs(err, stderr);
			diag_note(NULL, "rerun with -v to see the command and --keep-temps to keep the generated source of %s", nm);
		} else if (getenv(tl->env)) {
			diag_note(NULL, "the command comes from %s ('%s')", tl->env, cmd.s);
		}
		buf_free(&cmd);
		free(err);
		return st > 0 ? 3 : 1;
	}
	if (err && *err)
		fputs(err, stderr); /* warnings */
	free(err);
	return 0;
}

int backend_build(Sdfg *g, const Target *t, const BuildArgs *a)
{
	Arena *ar = g->arena;
	const char *nm = g->name, *wd = a->workdir;
	const Backend *be = backend_of(t);
	if (a->profile && be->gpu)
		diag_warn(NULL, "DOCC_DEBUG=profile times the steps of CPU builds only; ignored for -t %s", t->name);
	Blob w = {0};
	blob_layout(g, &w);
	Buf src = {0}, hdr = {0};
	emit_source(g, t, be->printer, a, &w, &src);
	emit_h(g, t, a, &hdr);
	/* Names in the working directory, where the commands run: relative,
	 * so that no command line depends on where it is. */
	const char *csrc = arena_printf(ar, "%s%s", nm, be->ext), *cobj = arena_printf(ar, "%s.o", nm);
	const char *wbin = arena_printf(ar, "weights-%s.bin", w.sha); /* its name changes with its bytes */
	const char *lib = arena_printf(ar, "lib%s.%s", nm, a->static_lib ? "a" : "so");
#define WD(f) arena_printf(ar, "%s/%s", wd, f)
	const char *chdr = WD(arena_printf(ar, "%s.h", nm)), *wext = WD(arena_printf(ar, "%s.weights", nm));
	int rc = file_write(WD(csrc), src.s, src.len) || file_write(chdr, hdr.s, hdr.len);
	if (be->gpu)
		rc = rc || file_write(WD("doccc_gpu.h"), gpu_rt_h, strlen(gpu_rt_h)) ||
		     file_write(WD("gpu_sim.h"), gpu_sim_h, strlen(gpu_sim_h));
	buf_free(&src);
	buf_free(&hdr);
	if (rc)
		return 1;
	int embed = w.size && !a->outweights;
	if (embed) {
		Buf as = {0};
		/* nm needs no buf_ccomment: -n is checked to be a C identifier, and
		 * path_to_ident makes one */
		buf_printf(&as, "/* weights of %s: %zu bytes, sha256 %s */\n"
		                "\t.section .rodata.doccc_weights,\"a\",@progbits\n\t.balign 64\n"
		                "\t.globl %s_weights_blob\n\t.hidden %s_weights_blob\n\t.type %s_weights_blob, @object\n"
		                "%s_weights_blob:\n\t.incbin \"%s\"\n\t.size %s_weights_blob, .-%s_weights_blob\n"
		                "\t.section .note.GNU-stack,\"\",@progbits\n",
		           nm, w.size, w.sha, nm, nm, nm, nm, wbin, nm, nm);
		rc = file_write(WD(wbin), w.data, w.size) || file_write(WD("weights.S"), as.s, as.len);
		buf_free(&as);
		if (rc)
			return 1;
	}
	if (a->outweights) {
		size_t n = WEIGHTS_HEADER + w.size;
		unsigned char *f = calloc(1, n);
		if (!f) {
			diag_error(NULL, "out of memory");
			return 1;
		}
		memcpy(f, WEIGHTS_MAGIC, 8);
		uint64_t sz = w.size;
		memcpy(f + 8, &sz, 8);
		memcpy(f + 16, w.sha, 64);
		memcpy(f + WEIGHTS_HEADER, w.data, w.size);
		rc = file_write(wext, f, n);
		free(f);
		if (rc)
			return 1;
	}
	/* Three steps: the weights object (assembled by the C compiler, every
	 * backend), the compile of the source (what a compiler cache keeps),
	 * then the link (or ar for a static archive). */
	const char *argv[ARGV_MAX];
	Argv av = {argv, 0, ar};
	int words;
	if (embed) {
		if (!(words = tool_words(ar, &tool_cc, &av)))
			return 1;
		const char *wa[] = {"-c", "-fPIC", "-o", "weights.o", "weights.S", NULL};
		for (int i = 0; wa[i]; i++)
			arg(&av, wa[i]);
		argv[av.n] = NULL;
		if ((rc = run_tool(wd, argv, words, &tool_cc, "assembling the weights", nm)))
			return rc;
	}
	const char *what = arena_printf(ar, "compiling the generated %s", csrc);
	av.n = 0;
	if (!(words = tool_words(ar, &be->cc, &av)))
		return 1;
	be->flags(&av, t);
	const char *ca[] = {"-I", ".", "-c", "-o", cobj, csrc, NULL};
	for (int i = 0; ca[i]; i++)
		arg(&av, ca[i]);
	argv[av.n] = NULL;
	if ((rc = run_tool(wd, argv, words, &be->cc, what, nm)))
		return rc;
	const Tool *lt = a->static_lib ? &tool_ar : &be->cc;
	av.n = 0;
	if (!(words = tool_words(ar, lt, &av)))
		return 1;
	if (a->static_lib) {
		arg(&av, "rcsD"); /* D: no dates or owners, the archive is reproducible */
		arg(&av, lib);
	} else {
		arg(&av, "-shared");
		if (be->ldflags)
			be->ldflags(&av, t);
		arg(&av, "-o");
		arg(&av, lib);
	}
	arg(&av, cobj);
	if (embed)
		arg(&av, "weights.o");
	for (int i = 0; !a->static_lib && i < (int)COUNTOF(be->libs) && be->libs[i]; i++)
		arg(&av, be->libs[i]);
	argv[av.n] = NULL;
	if ((rc = run_tool(wd, argv, words, lt, a->static_lib ? "making the archive" : "linking", nm)))
		return rc;
	if (a->static_lib && spawn_verbose)
		diag_note(a->outlib, "a program that links this archive also needs: %s", backend_link_flags(t, 1));
	/* Install: header, source, weights, library; undo on failure. */
	const char *from[4] = {chdr, a->outsrc ? WD(csrc) : NULL, a->outweights ? wext : NULL, WD(lib)};
#undef WD
	const char *to[4] = {a->outhdr, a->outsrc, a->outweights, a->outlib};
	int modes[4] = {0644, 0644, 0644, a->static_lib ? 0644 : 0755};
	for (int i = 0; i < 4; i++) {
		if (!from[i])
			continue;
		if (install(from[i], to[i], modes[i])) {
			for (int j = 0; j < i; j++)
				if (from[j])
					unlink(to[j]);
			return 1;
		}
	}
	return 0;
}
