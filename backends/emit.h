/*
 * emit.h - the target-independent walker of the scheduled SDFG and the
 * printer interface each backend implements.
 *
 * The walker (emit.c) knows the IR: it formats operands and scalar
 * expressions, prints tasklet blocks (index and division checks, 16-bit
 * rounding, wcr stores), declares locals, turns every top-level child of
 * the root into a step function with canonical names and shares the text
 * of repeated steps. It knows nothing of how loops run: every N_MAP and
 * N_FOR, every block outside a loop, the statement that fails a run and
 * all vector code go through the Printer of the backend (emit_cpu.c: C
 * with vector extensions and OpenMP; emit_gpu.c: CUDA, HIP and their
 * simulation). A printer's emit_file writes the whole source: prologue,
 * steps (through emit_step), the forward function and the public API.
 */
#ifndef DOCCC_EMIT_H
#define DOCCC_EMIT_H

#include "backend.h"

typedef struct Em Em;

typedef struct Printer {
	const char *name;
	/* the whole source file (calls back into the walker) */
	void (*emit_file)(Em *e, const BuildArgs *a, const Blob *w);
	/* an N_MAP or N_FOR */
	void (*loop)(Em *e, Node *n);
	/* an N_BLOCK of tasklets (NULL: "{ tasklets }") */
	void (*block)(Em *e, Node *n);
	/* the statement that fails the run with status code from inside loops */
	const char *(*fail)(Em *e, const char *code);
	/* vector code for SCHED_VECTOR maps (NULL where the printer has none):
	 * an operand, a tasklet's expression, the cast that makes a vector
	 * lvalue of an element ("dc_vf" for locals, "dc_vfu" for memory) */
	void (*voperand)(Em *e, Buf *b, const Operand *o);
	int (*vexpr)(Em *e, Buf *b, const Tasklet *t, char *const *a);
	const char *(*vcast)(Em *e, const Memlet *m);
	/* step functions: whether a step that checks returns its status (else
	 * it reports through a flag of its own), the parameters after the
	 * pointers and the matching arguments; step_begin and step_end (or
	 * NULL) frame the body */
	int step_status;
	const char *step_params, *step_args;
	void (*step_begin)(Em *e, int check);
	void (*step_end)(Em *e, Buf *body, int check);
} Printer;

struct Em {
	Sdfg *g;
	const Target *t;
	const Printer *p;
	Buf *b;
	int ind;
	int lanes;          /* fp32 lanes of dc_vf, 0 without SIMD */
	int vecvar;         /* symbol of the enclosing SCHED_VECTOR map, or -1 */
	Dtype vdt;          /* the vector tasklet being printed: its type (float32, or int32 lanes) */
	const char *vrem;   /* in a vector map's masked tail: the lanes left (C), loads and
	                     * stores of the lanes that use the map's symbol masked; else NULL */
	int inkern;         /* emitting a kernel function (parallel map, GPU kernel) */
	int checks;         /* the graph has index checks (T_INDEX): forward can fail */
	const char *top;    /* label of the top-level child being emitted (fused ops joined by '+') */
	const char *nm;
	int profile;
	int hooks;          /* BuildArgs.hooks: the node table, set_hook and the calls around each step */
	int values;         /* BuildArgs.values: the calls after a step pass its values */
	int *last_reads;    /* --values: sdfg_last_reads, made by the first emit_node_values */
	Buf *kern;          /* kernel functions, emitted before forward */
	int nkern;
	int wmma;           /* GPU: a kernel uses tensor cores (CUDA wmma) */
	const char **stepfn; /* or NULL: the function of each top-level step, by index (BuildArgs.stepfn) */
	/* The names the printed code gives containers (cn, by id) and symbols
	 * (sn, by id): the IR's own, but for the run-time dims (dc_dK) and,
	 * inside a step, canonical names (emit_step), so that repeated layers
	 * print the same text. Printing reads the IR and never writes it. */
	const char **cn, **sn;
	int as_local;       /* a container printed as a per-thread local (GPU block reduction), or -1 */
	const char *api;    /* attribute of the entry points that may run before create's CPU check
	                     * (the dims functions): "DC_BASE " in C, else "" */
	char *esc;          /* value symbols in scope past their block (sdfg_value_escapes):
	                     * declared before it, assigned in it */
	char **funcs;       /* text of each step function so far (dedup) */
	int nfuncs, capfuncs;
};

/* emit.c: the walker */
extern const char *const emit_storage_type[NDTYPES];
/* Expression x in C with the printer's names (Em.sn); as a string in the arena. */
void emit_expr(Em *e, Buf *b, const Expr *x);
const char *emit_expr_str(Em *e, const Expr *x);
const char *emit_ctype(Dtype d);         /* compute type: float for f16/bf16 */
void emit_line(Em *e, const char *fmt, ...) PRINTF_LIKE(2, 3);
void emit_double(Buf *b, double v, Dtype d);
void emit_lvalue(Em *e, Buf *b, const Memlet *m);
int emit_uses_vec(Em *e, const Memlet *m);
int64_t emit_vec_stride(Em *e, const Memlet *m);
/* An operand as a C expression of compute type want. */
const char *emit_vtype(Dtype dt);
void emit_operand(Em *e, Buf *b, const Operand *o, Dtype want);
/* Scalar C expression of tasklet t from formatted operands a; 0 if the
 * code has no scalar form (a missing case: test_ir checks there is none). */
int emit_scalar_expr(Em *e, Buf *b, const Tasklet *t, char *const *a);
void emit_block(Em *e, Node *n);
void emit_node(Em *e, Node *n);
void emit_locals(Em *e, Node *loop);
int emit_has_check(const Node *n);
void emit_touched(Sdfg *g, Node *n, unsigned char *set);
/* One top-level child as a step function (shared with earlier identical
 * steps) and its call, printed at e's position; the function's name. */
const char *emit_step(Em *e, Node *k, const unsigned char *set);
void emit_replace_all(Buf *out, const char *s, const char *from, const char *to);
void emit_desc_tables(Em *e);
/* --values: the values top-level node i leaves (sdfg_step_values) of
 * constant layout, at most max container ids; their count. emit_node_table: the descriptor's
 * node table dc_nodes and dc_set_hook (model type NAME_t with a member
 * hook of type dc_hook_t, which emit_hook_type prints). */
int emit_node_values(Em *e, int i, int *ids, int max);
void emit_hook_type(Em *e);
void emit_node_table(Em *e);
/* The state API (NAME_reset, NAME_get_state, NAME_set_state,
 * NAME_copy_state) and its descriptor tables, printed where the instance's
 * struct (fields st, w, msg) and the printer's
 *     static int dc_state_copy(NAME_t *m, void *dst, const void *src, size_t n, int dir)
 * are known: dir DC_ST_INIT (src NULL: zeros), DC_ST_IN (from the host),
 * DC_ST_OUT (to the host), DC_ST_MOVE (between instances). Nothing without
 * state. */
enum { DC_ST_INIT, DC_ST_IN, DC_ST_OUT, DC_ST_MOVE };
void emit_state_api(Em *e);
void emit_strerror(Em *e);
void emit_status_decode(Em *e);
void emit_descriptor(Em *e, const BuildArgs *a, const Blob *w, const char *run, const char *device, const char *lang);
/* --external-weights: dc_sha256_hex and dc_weights_map (rt/weights.h). */
void emit_weights_loader(Buf *b);
/* The runtime sources, backends/rt/NAME (real C that make unit compiles on
 * its own, embedded in doccc by make): a file's whole text (the headers
 * written beside a source), and what follows its opening comment (the
 * pieces printed into one). */
typedef struct RtFile {
	const char *name, *text;
} RtFile;
const char *rt_text(const char *name);
const char *rt_body(const char *name);
/* The whole source of g for printer p. */
void emit_source(Sdfg *g, const Target *t, const Printer *p, const BuildArgs *a, const Blob *w, Buf *out);

/* emit_dims.c: the run-time dims (dynamic libraries; see there). In the
 * printed code the dims are named dc_dK (Em.sn); messages and tables name
 * them as the export does (the IR's names). */
void emit_dims_params(Sdfg *g, Buf *params, Buf *args, const char *sep);
void emit_dims_assume(Em *e);
void emit_dims_locals(Em *e, const char *from);
void emit_dims_api(Em *e);
void emit_dims_desc_tables(Em *e);
void emit_dims_desc(Em *e, Buf *b);
void emit_dims_run_dims(Em *e);

/* The printers. */
extern const Printer printer_cpu, printer_gpu;

#endif
