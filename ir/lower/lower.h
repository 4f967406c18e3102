/*
 * lower.h - shared by the importer (ir/import.c) and the lowerings
 * (ir/lower/): the importer's state, bound argument values, and the
 * helpers every lowering uses.
 *
 * A lowering turns one ATen node, whose arguments are already bound
 * against its schema (m->args, in schema order, defaults filled in), into
 * library nodes appended to the root sequence, or into views. It names
 * its problems with lw_error (file, node, first stack-trace line) and
 * returns -1; the importer then goes on with the next node so that every
 * problem of the graph is reported in one run.
 */
#ifndef DOCCC_LOWER_H
#define DOCCC_LOWER_H

#include <cJSON.h>

#include "../ir.h"

typedef enum { V_ABSENT, V_NONE, V_TENSOR, V_TENSORS, V_INT, V_INTS, V_FLOAT, V_FLOATS, V_BOOL, V_STR } VKind;
typedef struct {
	VKind k;
	int t;              /* V_TENSOR: container id */
	int *ts;            /* V_TENSORS */
	int n;              /* list length */
	int64_t i;          /* V_INT, V_BOOL */
	int64_t *is;        /* V_INTS */
	double f;           /* V_FLOAT */
	double *fs;         /* V_FLOATS */
	const char *s;      /* V_STR; V_BOOL of run-time dims: the export's expression */
	Expr *x;            /* V_INT of a run-time dim's expression (else NULL) */
	Expr **xs;          /* V_INTS: per element, the same (NULL if none is) */
} Val;

/* A binding of a torch value name to a container (the newest one counts).
 * root names the value whose storage it shares in torch (itself, or the
 * base of a view op's input); stale, when set, says why reading it would
 * not see an in-place write that torch makes visible through an alias. */
typedef struct {
	const char *name;
	int id;
	const char *root;
	const char *stale;
} ValueEnt;

/* A SymInt, SymFloat or SymBool value of the graph (sym_size, _operator.mul,
 * item, ...). Shapes are specialized before the nodes are read, so these are
 * compile-time numbers, except the result of item() / _local_scalar_dense,
 * which is a rank-0 view of the tensor it reads (a number known at run time). */
typedef enum { SV_INT, SV_FLOAT, SV_BOOL, SV_TENSOR } SvKind;
typedef struct {
	const char *name;
	SvKind k;
	int64_t i;          /* SV_INT, SV_BOOL */
	double f;           /* SV_FLOAT */
	int t;              /* SV_TENSOR: container id */
	Expr *x;            /* SV_INT depending on run-time dims: its expression (i is the example's value) */
	const char *bexpr;  /* SV_BOOL depending on them: the export's expression ("Ne(s0, 1000)") */
	int dyn;            /* the value depends on run-time dims */
} SymVal;

typedef struct Imp {
	Arena *a;
	Sdfg *g;
	const char *path;          /* for messages */
	cJSON *ep, *graph, *tvals;
	/* weights */
	Pt2 *zip;
	char *dir;                 /* extracted archive root ("…/"), or NULL */
	cJSON *wcfg, *ccfg;        /* weights / constants configs */
	Safetensors *st;           /* --weights, or NULL */
	const char *stpath;
	/* value name -> container */
	ValueEnt *vals;
	int nvals, capvals;
	Census *census;            /* doccc check, or NULL */
	/* current node, for messages */
	int nodei;
	const char *nodename;
	const char *trace;
	const AtenInfo *info;
	Val args[16];
	int failed;
	/* Shape symbols of the export (s0, s77, ...) and the value each is
	 * specialized to: parsed into a scratch graph so the real one stays free
	 * of them; symval[sym id] is valid where symset[sym id]. */
	Sdfg *sg;
	int64_t *symval;
	int *symset;
	int *gsym;           /* a run-time dim: its symbol in g plus one, else 0 */
	int capsym;
	int ndyn;            /* run-time dims (0: everything specialized) */
	const char *need_static; /* why a node cannot take run-time dims (import retries specialized) */
	int argdyn;          /* the current node's arguments hold a number of run-time dims */
	SymVal *svs;
	int nsvs, capsvs;
	int64_t wbytes;      /* weight bytes bound so far (DOCC_MAX_WEIGHT_BYTES) */
} Imp;

/* ---- messages ----------------------------------------------------------------- */

typedef struct {
	int dt;            /* Dtype or -1 */
	int st;            /* export ScalarType number */
	int rank;
	int64_t shape[MAXDIM];
	int64_t stride[MAXDIM];
	int64_t offset;
	Expr *x[MAXDIM];   /* the sizes as expressions of g (run-time dims), or NULL when static */
	int dyn;           /* a size depends on a run-time dim (shape holds the example's) */
} Meta;

/* import.c: values, metadata, messages, bound arguments */
void lw_error(Imp *m, const char *fmt, ...) PRINTF_LIKE(2, 3);
int lw_lookup(Imp *m, const char *name);
void lw_bind(Imp *m, const char *name, int id);
int lw_meta(Imp *m, const char *name, Meta *o);
/* numel * esz of a shape if it is within DOCC_MAX_TENSOR_BYTES, else -1. */
int64_t lw_tensor_bytes(int rank, const int64_t *shape, int esz);
int lw_check_dtype(Imp *m, const Meta *mt, const char *name);
int lw_new_value(Imp *m, const char *name, CKind k);
Val *lw_arg(Imp *m, const char *name);
int lw_tensor(Imp *m, const char *name);
double lw_num(Imp *m, const char *name, double dflt);
int64_t lw_int(Imp *m, const char *name, int64_t dflt);
SymVal *lw_symval(Imp *m, const char *name);
void lw_set_symval(Imp *m, const char *name, SymVal v);
/* Value of a SymInt / SymBool expression string of the export under the
 * specialization; -1 (after a message naming `what`) if a symbol is unbound. */
int lw_eval_expr(Imp *m, const char *expr, int64_t *out, const char *what);

/* Run-time dims (import.c): does container id have a size, stride or
 * offset that depends on a run-time dim? */
int lw_dynamic(Imp *m, int id);
/* Add the guards of a SymBool expression of the export ("Ne(s0, 1000)") to
 * g's run-time checks, with the assertion's message (or NULL); -1 if doccc
 * cannot read it. */
int lw_add_guard(Imp *m, const char *s, const char *msg);
/* Size d of container id as an expression (run-time dims included), and
 * of a value's metadata; whether a size is 1 (1), surely not (0) or may be
 * either at run time (-1). */
Expr *lw_dimx(Imp *m, int id, int d);
Expr *lw_mdim(Imp *m, const Meta *mt, int d);
int lw_is_one(Imp *m, const Expr *e);
/* A lowering that meets run-time dims it cannot build for: the import is
 * retried with every dim specialized (why names the reason); -1. */
int lw_need_static(Imp *m, const char *why);
int lw_view_x(Imp *m, const char *name, int src, int rank, Expr *const *shape, Expr **stride, Expr *offset);
/* A SymInt of run-time dims as a 0-d int64 transient holding its value
 * (the expression, computed by a block of its own). */
int lw_symint_value(Imp *m, Expr *x);

/* Bind the unbacked symbol that sizes dim `dim` of value `name` to v. */
int lw_bind_size(Imp *m, const char *name, int dim, int64_t v);
/* elem.c: at::result_type of tensors and python scalars (ops[0..n)). */
int lw_result_type(Imp *m, Val *const *ops, int n);

/* common.c: building blocks of lowerings */
Container *lw_c(Imp *m, int id);
int64_t lw_dim(Imp *m, int id, int d);
LibNode *lw_lib(Imp *m, int op);
const char *lw_out_name(const cJSON *node, int k);
int lw_new_out(Imp *m, const cJSON *node, int k);
int lw_norm_dim(Imp *m, int64_t d, int rank);
int lw_view(Imp *m, const char *name, int src, int rank, const int64_t *shape, Expr **stride, Expr *offset);
int lw_copy(Imp *m, int src, const char *name);
/* 1 ok, 0 needs a copy first, -1 element counts differ (reported); out always set. */
int lw_reshape_strides(Imp *m, int c, int rank, const int64_t *shape, Expr **out);
/* Value name as container c (a fresh transient) reshaped to shape[rank]; 0, or -1 reported. */
int lw_view_whole(Imp *m, const char *name, int c, int rank, const int64_t *shape);
/* The same for sizes that may hold run-time dims (see common.c). */
int lw_reshape_strides_x(Imp *m, int c, int rank, Expr *const *shape, Expr **out);
int lw_view_whole_x(Imp *m, const char *name, int c, int rank, Expr *const *shape);
int lw_value_used(Imp *m, const char *name);
void lw_mark_stale(Imp *m, const cJSON *node, const char *argname, const char *why);
int lw_elemwise(Imp *m, const cJSON *node, TCode code, int n, Val *const *ops);

/* shape.c: concatenation of ins[0..n) (n <= 64) along dim into out. */
void lw_cat(Imp *m, const int *ins, int n, int dim, int out);

/* sym.c: the Python-level integer and boolean ops of symbolic shapes
 * (_operator.mul, torch.sym_max, math.ceil, ...), evaluated at compile time.
 * 1 if target is one of them (handled, or reported with lw_error), else 0. */
int lw_python_op(Imp *m, const cJSON *node, const char *target);

/* The lowerings named in the op tables (ops_*.h). */
#define X(e, t, l, p, s) int lower_##l(Imp *m, const cJSON *node);
ATEN_OPS(X)
#undef X

#endif
