/*
 * build.c - weights layout, files, and the C compiler.
 *
 * Every live constant is placed at a 64-byte aligned offset of one blob.
 * The blob reaches the library without passing through the C compiler: an
 * assembler file holds `.incbin "weights.bin"`, so compile time does not grow
 * with the model. With --external-weights it is written instead to
 * NAME.weights (a 128-byte header: magic "DOCCCW01", size, the blob's
 * sha256 in hex, then the blob), which create() maps and checks.
 *
 * The compiler comes from the backend table below: one row per way of
 * building (the C printer with clang; the GPU printer with nvcc, hipcc, or
 * clang++ for the simulation), each with its printer, the generated
 * source's suffix and the compiler's command line. GPU builds also write
 * doccc_gpu.h and gpu_sim.h (embedded in doccc at its build) beside the
 * source, and nvcc and hipcc get the weights as an object that clang
 * assembles first. Compilers run through lib/spawn (argv vector, -v
 * echoes it). Everything is produced in the working directory first; only
 * when all of it succeeded are the outputs copied to their final paths,
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
typedef struct {
	const char **v;
	int n;
	Arena *ar;
} Argv;

static void arg(Argv *a, const char *s)
{
	DOCC_ASSERT(a->n < 62);
	a->v[a->n++] = s;
}

static void clang_flags(Argv *a, const Target *t)
{
	arg(a, "clang");
	arg(a, "-std=c11");
	arg(a, t->opt);
	arg(a, "-fPIC");
	arg(a, "-shared");
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
	arg(a, "nvcc");
	arg(a, "-O3");
	arg(a, "-std=c++17");
	arg(a, "-shared");
	arg(a, "-Xcompiler");
	arg(a, "-fPIC,-fno-math-errno,-fwrapv");
	arg(a, arena_printf(a->ar, "-gencode=arch=compute_%s,code=[sm_%s,compute_%s]", cc, cc, cc));
	if (t->approx)
		arg(a, "--use_fast_math");
	arg(a, "-diag-suppress=177,550"); /* unused helpers and variables of the shared prologue */
}

static void hipcc_flags(Argv *a, const Target *t)
{
	arg(a, "hipcc");
	arg(a, arena_printf(a->ar, "--offload-arch=%s", t->march)); /* always: without it hipcc probes for a GPU */
	arg(a, "-O3");
	arg(a, "-std=c++17");
	arg(a, "-fPIC");
	arg(a, "-shared");
	arg(a, "-fno-math-errno");
	arg(a, "-fwrapv");
	if (t->approx) {
		arg(a, "-ffast-math");
		arg(a, "-fno-finite-math-only"); /* NaN and inf keep their meaning (max, isnan) */
	}
	arg(a, "-x");
	arg(a, "hip");
}

static void sim_flags(Argv *a, const Target *t)
{
	(void)t;
	arg(a, "clang++");
	arg(a, "-std=c++17");
	arg(a, "-O2");
	arg(a, "-fPIC");
	arg(a, "-shared");
	arg(a, "-fno-math-errno");
	arg(a, "-fwrapv");
	arg(a, "-DDOCCC_SIM");
	arg(a, "-x");
	arg(a, "c++");
}

typedef struct {
	const char *name;
	int gpu_kind, simulate;      /* the GPU target it builds (0: every CPU target) */
	const Printer *printer;
	const char *ext;             /* of the generated source */
	int gpu;                     /* write doccc_gpu.h and gpu_sim.h beside it */
	int asm_weights;             /* the compiler assembles weights.S itself */
	int xlang;                   /* flags end in -x LANG: the weights need -x none */
	void (*flags)(Argv *a, const Target *t);
	const char *libs[3];         /* after the inputs */
	const char *uses;            /* what a program linking the library statically needs */
} Backend;

static const Backend backends[] = {
	{"clang", 0, 0, &printer_cpu, ".c", 0, 1, 0, clang_flags, {"-lm"}, "-lm"},
	{"nvcc", TG_CUDA, 0, &printer_gpu, ".cu", 1, 0, 0, nvcc_flags, {"-lm"}, "-lcudart -lstdc++ -lm"},
	{"hipcc", TG_ROCM, 0, &printer_gpu, ".cu", 1, 0, 1, hipcc_flags, {"-lm"}, "-lamdhip64 -lstdc++ -lm"},
	{"clang++", TG_CUDA, 1, &printer_gpu, ".cu", 1, 1, 1, sim_flags, {"-lm", "-lpthread"}, "-lstdc++ -lm -lpthread"},
	{"clang++", TG_ROCM, 1, &printer_gpu, ".cu", 1, 1, 1, sim_flags, {"-lm", "-lpthread"}, "-lstdc++ -lm -lpthread"},
};

static const Backend *backend_of(const Target *t)
{
	int kind = TARGET_IS_GPU(t) ? (int)t->kind : 0, sim = kind && t->simulate;
	for (size_t i = 0; i < COUNTOF(backends); i++)
		if (backends[i].gpu_kind == kind && backends[i].simulate == sim)
			return &backends[i];
	DOCC_UNREACHABLE();
}

const char *backend_link_flags(const Target *t, int static_lib)
{
	if (!static_lib)
		return ""; /* the shared library names its own dependencies */
	if (t->kind == TG_OPENMP)
		return "-fopenmp -lm";
	return backend_of(t)->uses;
}

static int run_compiler(const char **argv, const char *what, const char *nm)
{
	char *err = NULL;
	int st = spawn_run((char *const *)argv, &err);
	if (st != 0) {
		if (st > 0) {
			diag_error(NULL, "%s failed (exit status %d) compiling %s", argv[0], st, what);
			if (err && *err)
				fputs(err, stderr);
			diag_note(NULL, "rerun with -v to see the command and --keep-temps to keep the generated source of %s", nm);
		}
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
	const char *nm = g->name;
	const Backend *be = backend_of(t);
	if (a->profile && be->gpu)
		diag_warn(NULL, "DOCC_DEBUG=profile times the steps of CPU builds only; ignored for -t %s", t->name);
	Blob w = {0};
	blob_layout(g, &w);
	Buf src = {0}, hdr = {0};
	emit_source(g, t, be->printer, a, &w, &src);
	emit_h(g, t, a, &hdr);
	char *csrc = arena_printf(ar, "%s/%s%s", a->workdir, nm, be->ext);
	char *chdr = arena_printf(ar, "%s/%s.h", a->workdir, nm);
	char *wbin = arena_printf(ar, "%s/weights.bin", a->workdir);
	char *wasm = arena_printf(ar, "%s/weights.S", a->workdir);
	char *lib = arena_printf(ar, "%s/lib%s.so", a->workdir, nm);
	char *wext = arena_printf(ar, "%s/%s.weights", a->workdir, nm);
	int rc = file_write(csrc, src.s, src.len) || file_write(chdr, hdr.s, hdr.len);
	if (be->gpu)
		rc = rc || file_write(arena_printf(ar, "%s/doccc_gpu.h", a->workdir), gpu_rt_h, strlen(gpu_rt_h)) ||
		     file_write(arena_printf(ar, "%s/gpu_sim.h", a->workdir), gpu_sim_h, strlen(gpu_sim_h));
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
		rc = file_write(wbin, w.data, w.size) || file_write(wasm, as.s, as.len);
		buf_free(&as);
		if (rc)
			return 1;
	}
	if (a->outweights) {
		size_t n = 128 + w.size;
		unsigned char *f = calloc(1, n);
		if (!f) {
			diag_error(NULL, "out of memory");
			return 1;
		}
		memcpy(f, "DOCCCW01", 8);
		uint64_t sz = w.size;
		memcpy(f + 8, &sz, 8);
		memcpy(f + 16, w.sha, 64);
		memcpy(f + 128, w.data, w.size);
		rc = file_write(wext, f, n);
		free(f);
		if (rc)
			return 1;
	}
	/* the weights as an object, for compilers that take no assembler input */
	const char *wobj = wasm;
	if (embed && !be->asm_weights) {
		wobj = arena_printf(ar, "%s/weights.o", a->workdir);
		const char *av[] = {"clang", "-c", "-fPIC", "-o", wobj, wasm, NULL};
		if ((rc = run_compiler(av, "the weights", nm)))
			return rc;
	}
	const char *argv[64];
	Argv av = {argv, 0, ar};
	be->flags(&av, t);
	arg(&av, "-I");
	arg(&av, a->workdir);
	arg(&av, "-o");
	arg(&av, lib);
	arg(&av, csrc);
	if (embed) {
		if (be->xlang) {
			arg(&av, "-x");
			arg(&av, "none");
		}
		arg(&av, wobj);
	}
	for (int i = 0; i < (int)COUNTOF(be->libs) && be->libs[i]; i++)
		arg(&av, be->libs[i]);
	argv[av.n] = NULL;
	if ((rc = run_compiler(argv, arena_printf(ar, "the generated %s%s", nm, be->ext), nm)))
		return rc;
	/* Install: header, source, weights, library; undo on failure. */
	const char *from[4] = {chdr, a->outsrc ? csrc : NULL, a->outweights ? wext : NULL, lib};
	const char *to[4] = {a->outhdr, a->outsrc, a->outweights, a->outlib};
	int modes[4] = {0644, 0644, 0644, 0755};
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
