/*
 * backend.h - from a scheduled SDFG to a shared library and its header.
 *
 * emit_c.c writes the C source (C11, GCC/clang vector extensions for
 * SCHED_VECTOR maps, OpenMP pragmas for SCHED_PARALLEL maps), emit_h.c the
 * public header, build.c lays out the weights, writes the files into the
 * working directory and runs the compilers there (DOCC_CC and the like). The GPU targets have their own emitter
 * once they land.
 */
#ifndef DOCCC_BACKEND_H
#define DOCCC_BACKEND_H

#include "../ir/ir.h"

typedef struct {
	const char *workdir;     /* temporary directory (exists) */
	const char *outlib;      /* final library path */
	const char *outhdr;      /* final header path */
	const char *outsrc;      /* NAME.c to keep, or NULL */
	const char *outweights;  /* NAME.weights for --external-weights, or NULL */
	const char *cmdline;     /* options summary for the generated comment */
	int profile;             /* DOCC_DEBUG=profile: time each top-level node, report at destroy */
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
/* Status names and the C type of a dtype, shared by both emitters. */
const char *emit_dtype_macro(Dtype d);
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

#endif
