/*
 * backend.h - from a scheduled SDFG to a shared library and its header.
 *
 * The backends are one table (target.c): each row is a target (-t NAME)
 * with its printer, runtime header, toolchain and flags, and for the GPU
 * targets its architectures and simulation build. The printers walk the
 * scheduled SDFG (emit.h: emit.c's walker, emit_cpu.c's C with vector
 * extensions and OpenMP, emit_gpu.c's CUDA, also HIP and the simulation
 * through the runtime header); emit_h.c writes the public header; build.c
 * lays out the weights, writes the files into the working directory and
 * runs the row's compilers there (DOCC_CC and the like).
 */
#ifndef DOCCC_BACKEND_H
#define DOCCC_BACKEND_H

#include "../ir/ir.h"

/* ---- target.c: the backends and the categories -------------------------------
 * Adding a backend is a TargetKind, its row, and the printer and runtime
 * header it names (a GPU runtime behind the CUDA spelling reuses
 * printer_gpu); a static assert keeps the table in step with the enum. */
typedef enum { TG_NONE, TG_SEQUENTIAL, TG_OPENMP, TG_CUDA, TG_ROCM, NTARGETS } TargetKind;

/* A command's words as they are built (build.c): a tool's and doccc's. */
enum { TOOL_WORDS = 64, ARGV_MAX = TOOL_WORDS + 48 };
typedef struct {
	const char **v;
	int n;
	Arena *ar;
} Argv;
void argv_add(Argv *a, const char *s);

/* A command the build runs: the variable that names it (a launcher
 * included, DOCC_CC="ccache clang") and its default. */
typedef struct {
	const char *env, *dflt;
} Tool;

typedef struct {
	Tool cc;                     /* compiles the source and links */
	void (*flags)(Argv *a, const Target *t);   /* the compile's (NAME.src to NAME.o) */
	void (*ldflags)(Argv *a, const Target *t); /* the link's besides -shared, or NULL */
	const char *libs[3];         /* after the link's inputs */
	const char *uses;            /* what a program linking the library statically needs */
} Toolchain;

typedef struct {
	const char *arch;
	int sms;                     /* streaming multiprocessors (compute units) */
	int tc;                      /* tensor cores the contractions may use (CUDA wmma, sm_80+) */
} GpuArch;

enum { NCATEGORIES = 3 };
struct Printer;
typedef struct {
	TargetKind kind;
	const char *name;            /* -t NAME */
	const struct Printer *printer;
	const char *ext;             /* of the generated source: ".c", ".cu" */
	Toolchain build;
	/* the CPU targets */
	int simd;                    /* the category's ISA (-march) and explicit SIMD */
	int threads;                 /* parallel maps on OpenMP threads */
	/* the GPU targets (device != NULL) */
	const char *device;          /* the device backend: descriptor, header, report ("cuda") */
	const char *runtime;         /* the runtime's name in the header's comment ("CUDA") */
	const char *rt_header;       /* its runtime header (backends/rt/), written beside the source as doccc_gpu.h */
	Toolchain sim;               /* --simulate: the same device source built for the host */
	const char *arch[NCATEGORIES]; /* the architecture of each category (edge, desktop, server) */
	const char *arch_env;        /* the variable that may choose it (DOCC_CUDA_ARCH), or NULL */
	const GpuArch *archs;        /* the architectures the toolchain builds */
	int narchs;
} Backend;
extern const Backend backend_table[NTARGETS];

/* An architecture (target.c): its triple, the ELF machine of the objects
 * built for it, its -march names, its column of the category table, and
 * what a cross build from another host needs: the archiver, the OpenMP
 * runtime the link names, the Debian packages of its sysroot. */
typedef struct {
	const char *march;           /* the -march (or -mcpu) of the category */
	int vec_bits, vec_regs;
	int64_t l1, l2;
	int max_threads;             /* 0: all */
	int tile_m;                  /* rows of the register tile */
} CpuColumn;
typedef struct {
	const char *name;
	int bits, dot4;
} March;
typedef struct {
	const char *name;            /* "aarch64" (ir.h's ArchKind) */
	const char *triple;          /* "aarch64-linux-gnu": clang's --target */
	int elf_machine;             /* EM_AARCH64 */
	const char *march_prefix;    /* an ISA name starting with it is clang's -march, another -mcpu (NULL: all -march) */
	void (*host)(int *bits, int *dot4);   /* --march native, on a host of this architecture */
	int (*dot4)(const char *march);       /* an -march outside the table's: dot products? (NULL: no) */
	const March *marches;
	int nmarches;
	CpuColumn cat[NCATEGORIES];  /* edge, desktop, server */
	const char *cpu_check;       /* the runtime's CPU check (backends/rt/), printed into the library */
	const char *wsec;            /* weights.o's section (build.c) */
	uint64_t wflags;             /* and its flags */
	Tool ar;                     /* a cross build's archiver (DOCC_AR; a native one's is ar) */
	const char *omp;             /* the OpenMP runtime a cross link names (-l:NAME), NULL: clang's -fopenmp */
	/* A cross build's sysroot, checked before it runs the default clang:
	 * files, each with the Debian package that has it. */
	struct {
		const char *path, *package;
	} needs[5];
} Arch;
extern const Arch arch_table[NARCHS];
const Arch *arch_of(const Target *t);
/* -march=M or -mcpu=M for t's ISA, in a's arena. */
const char *arch_isa_flag(Arena *a, const Target *t);
/* A cross build for t with the default compiler: 0 if its sysroot's files
 * are there, else -1 with the missing packages reported. */
int arch_check_sysroot(const Target *t, int openmp);
extern const char *const category_names[];
extern const char *const precision_names[];
/* The row named name, or NULL. */
const Backend *backend_find(const char *name);
/* The row of t, and the toolchain its build uses (the simulation's with --simulate). */
const Backend *backend_of(const Target *t);
const Toolchain *backend_toolchain(const Target *t);
/* The GPU target doccc check judges a CPU target's model for: the first row with a device. */
const Backend *backend_default_gpu(void);
/* The targets' names, ", "-separated (messages, --help, the options' choices). */
const char *backend_names(void);
/* Resolve target + category (+ march override). -1 and a message if unknown. */
int target_resolve(Target *t, const Options *o);
/* Re-resolve t (a GPU target) as its host build: openmp of the same category. */
int target_host_fallback(Target *t, const Options *o);

/* The toolchains' flags (build.c), which the rows name. */
void clang_flags(Argv *a, const Target *t);
void clang_ldflags(Argv *a, const Target *t);
void nvcc_flags(Argv *a, const Target *t);
void hipcc_flags(Argv *a, const Target *t);
void hipcc_ldflags(Argv *a, const Target *t);
void sim_flags(Argv *a, const Target *t);

typedef struct {
	const char *workdir;     /* temporary directory (exists) */
	const char *outlib;      /* final library path */
	const char *outhdr;      /* final header path */
	const char *outsrc;      /* NAME.c to keep, or NULL */
	const char *outweights;  /* NAME.weights for --external-weights, or NULL */
	const char *cmdline;     /* options summary for the generated comment */
	int profile;             /* DOCC_DEBUG=profile: time each top-level node, report at destroy */
	int hooks;               /* --profile, --values, DOCC_DEBUG=profile or values: the descriptor's node
	                          * table and set_hook (CPU targets) */
	int values;              /* --values, DOCC_DEBUG=values: the hook gets each node's values */
	int static_lib;          /* outlib is a static archive (-o libNAME.a): no doccc_model alias */
	const char **stepfn;     /* out, or NULL: the function of each top-level step (g->root->kids[i]), whose
	                          * kernels are STEPFN_kN (--report's gpu_kernels, from the GPU plan) */
	double step_ms[4];       /* out: the build's steps, BUILD_STEPS (--report) */
} BuildArgs;
#define BUILD_STEPS {"weights", "compile", "link", "install"}

/* NAME.weights (--external-weights): WEIGHTS_MAGIC, the blob's size (u64,
 * little-endian), its sha256 in hex, zeros up to WEIGHTS_HEADER bytes, then
 * the blob. build.c writes it; the generated loader (emit.c) and `doccc
 * inspect` read it. */
#define WEIGHTS_MAGIC "DOCCCW01"
enum { WEIGHTS_HEADER = 128 };

/* Weight blob: every live constant at a 64-byte aligned offset, zeros
 * between. blob_layout sets the offsets (wofs) and the size; blob_write
 * makes each constant in turn (consts.c) and appends it to f (NULL: none),
 * computing the sha256: 0, or -1 reported. */
typedef struct {
	size_t size;
	char sha[65];
} Blob;
void blob_layout(Sdfg *g, Blob *b);
int blob_write(Sdfg *g, Blob *b, Ofile *f);

void emit_h(Sdfg *g, const Target *t, const BuildArgs *a, Buf *out);
/* The generic descriptor's C declarations (doccc_model.h's contents, as
 * every generated header embeds them): doccc tune's harness includes them. */
const char *emit_desc_block(void);
/* Status names and the C type of a dtype, shared by both emitters. */
const char *emit_dtype_macro(Dtype d);
/* Does generated code only read c (a const pointer): inputs the program
 * does not write, and constants. */
int emit_readonly(const Container *c);
/* s (a name from the model, the command line, an option) as the body of a C
 * comment (buf_ccomment), copied into arena a: what the %s of every comment
 * that the backends write prints (emit.c). */
const char *emit_comment(Arena *a, const char *s);
/* s as a C string literal of text a library prints or returns as a message
 * (assertion messages, profile step names): buf_cstr of its ESC_TERM form,
 * so that the library cannot send the model's escape sequences to a
 * terminal either. Names that are data (descriptor, header) stay exact. */
void emit_message(Buf *b, const char *s);

/* The flags a program linking the library needs besides the library itself:
 * "" for a shared library (it names its own dependencies); for a static
 * archive the backend's run-time libraries (-lm, -lcudart...), for openmp
 * clang's libomp by its directory (-L DIR -Wl,-rpath,DIR -lomp), so that a
 * program linked by gcc or clang links and runs. A static string. */
const char *backend_link_flags(const Target *t, int static_lib);

/* The compiler variables a build for t uses (DOCC_CC, DOCC_NVCC, DOCC_HIPCC,
 * DOCC_CXX; DOCC_AR for a static archive) are usable: 0, or -1 when one is
 * set and empty or blank (reported; a usage error). *key: the commands, as
 * " VAR=COMMAND" each, for the DOCC_REUSE_BINARIES key (another compiler is
 * another build). */
int backend_check_tools(Arena *ar, const Target *t, int static_lib, const char **key);

/* 0 ok; 1 failure reported; 3 the external compiler failed (its stderr shown). */
int backend_build(Sdfg *g, const Target *t, BuildArgs *a);
/* A program of its own, source src in dir, compiled to exe there with the
 * C compiler of t's toolchain (DOCC_CC): doccc tune's timing harness.
 * 0, 1 or 3 (reported) as backend_build. */
int backend_build_program(Arena *ar, const Target *t, const char *dir, const char *src, const char *exe);

#endif
