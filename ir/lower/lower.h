/*
 * lower.h - the lowerings (ir/lower/): their API and their entry points,
 * sectioned by file so that it reads as a table of contents.
 *
 * The importer (ir/import.c, ir/import/) is the layer above: it opens the
 * input, walks graph.nodes and, for each node, binds the arguments and
 * calls the op table's lowering (ir/ops.c holds the lower_* pointers). The
 * lowerings build IR with ir.h and what is declared here, and never call
 * the importer (test/test_structure.py checks it on the objects).
 * Declarations marked "for the importer" are the driver's side of this
 * API.
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
 * item, ...). A value that depends on no run-time dim is a number known at
 * compile time (i, f). One that depends on run-time dims is marked dyn: a
 * SymInt then has its expression over g's run-time dims in x, a SymBool the
 * export's text in bexpr (for a guard), and i only the example's value.
 * The result of item() / _local_scalar_dense is SV_TENSOR: a rank-0 view
 * of the tensor it reads, a number known only at run time (t is -1 for
 * Python arithmetic on such a number, which only guards may use). */
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

/* The state of one import: the program, the value map, the node being
 * lowered and its bound arguments, the export's symbols. Lowerings read it
 * through the functions below more than its fields. */
typedef struct Imp {
	Arena *a;
	Sdfg *g;
	const char *path;          /* for messages */
	cJSON *ep, *graph, *tvals;
	struct ImpFiles *files;    /* the importer's own: the input's files (ir/import/import.h) */
	/* value name -> container */
	ValueEnt *vals;
	int nvals, capvals;
	/* container id -> what a parameter, buffer or constant placeholder
	 * holds, for messages ("buffer 'layers.0.cache'"); NULL for the others
	 * and past the placeholders (the importer sets it, nfqn entries) */
	const char **fqn;
	int nfqn;
	Census *census;            /* doccc check, or NULL */
	/* current node, for messages */
	int nodei;
	const char *nodename;
	const char *trace;
	const AtenInfo *info;
	Val args[16];
	int failed;
	/* Shape symbols of the export (s0, s77, ...) and the value each is
	 * bound to (a run-time dim's: the example's): parsed into a scratch graph
	 * so the real one stays free of them; symval[sym id] is valid where
	 * symset[sym id] (dims.c). */
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
} Imp;

/* Tensor metadata of a value as graph.tensor_values records it. */
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

/* ---- api.c: messages, the value map, metadata, new values, aliasing -------------- */

/* An error at the current node (its location, then a note with the first
 * stack-trace line); marks the node failed. */
void lw_error(Imp *m, const char *fmt, ...) PRINTF_LIKE(2, 3);
/* The container bound to value name (the newest binding), or -1; bind one. */
int lw_lookup(Imp *m, const char *name);
void lw_bind(Imp *m, const char *name, int id);
/* Value name's recorded metadata; -1 after a message. */
int lw_meta(Imp *m, const char *name, Meta *o);
/* numel * esz of a shape if it is within DOCC_MAX_TENSOR_BYTES, else -1. */
int64_t lw_tensor_bytes(int rank, const int64_t *shape, int esz);
/* -1 (after a message) if the metadata's dtype is one doccc does not support. */
int lw_check_dtype(Imp *m, const Meta *mt, const char *name);
/* A new container of kind k for value name, with its recorded metadata, bound. */
int lw_new_value(Imp *m, const char *name, CKind k);
/* Argument argname of node, updated in place and not returned, and every
 * alias of it: reading them later is an error saying why. */
void lw_mark_stale(Imp *m, const cJSON *node, const char *argname, const char *why);
/* For the importer: why reading value name would miss an in-place write,
 * or NULL; the metadata tm of value `what` read (lw_meta reads
 * tensor_values'); a dtype seen, for doccc check; the containers a
 * lowering made, ids [from, ncs), checked; after a node lowered, its
 * outputs' aliases tracked and its in-place writes carried to the
 * aliases of the written value. */
const char *lw_value_stale(Imp *m, const char *name);
int lw_read_meta(Imp *m, const cJSON *tm, Meta *o, const char *what);
void lw_census_dtype(Census *c, int st);
int lw_check_new_containers(Imp *m, int from);
void lw_track_aliases(Imp *m, const cJSON *node);
void lw_rebind_mutated(Imp *m, const cJSON *node);

/* ---- args.c: a node's arguments, bound against its schema ------------------------ */

/* Argument name of the current op (it must be in the schema); its tensor
 * (-1 if it is none); a number, dflt when it is none. */
Val *lw_arg(Imp *m, const char *name);
int lw_tensor(Imp *m, const char *name);
double lw_num(Imp *m, const char *name, double dflt);
int64_t lw_int(Imp *m, const char *name, int64_t dflt);
/* Whether the current overload's schema has an argument `name`. */
int lw_has_arg(Imp *m, const char *name);
/* For the importer: bind node's inputs into m->args (m->info is its op). */
int lw_bind_args(Imp *m, const cJSON *node);

/* ---- dims.c: the export's symbols, guards, symbolic values; sizes ---------------- */

/* The symbolic value named name (newest), or NULL; bind one (with run-time
 * dims, its expression is read from the graph). */
SymVal *lw_symval(Imp *m, const char *name);
void lw_set_symval(Imp *m, const char *name, SymVal v);
/* Value of a SymInt / SymBool expression string of the export under the
 * bound symbols; -1 (after a message naming `what`) if a symbol is unbound. */
int lw_eval_expr(Imp *m, const char *expr, int64_t *out, const char *what);
/* Does container id have a size, stride or offset that depends on a
 * run-time dim? */
int lw_dynamic(Imp *m, int id);
/* Add the guards of a SymBool expression of the export ("Ne(s0, 1000)") to
 * g's run-time checks, with the assertion's message (or NULL); -1 if doccc
 * cannot read it. */
int lw_add_guard(Imp *m, const char *s, const char *msg);
/* Bind the unbacked symbol that sizes dim `dim` of value `name` to v. */
int lw_bind_size(Imp *m, const char *name, int dim, int64_t v);
/* Size d of container id as a number (a run-time dim asks for a
 * specialized import: lw_need_static) and as an expression (run-time dims
 * included), and of a value's metadata; whether a size is 1 (1), surely
 * not (0) or may be either at run time (-1). */
int64_t lw_dim(Imp *m, int id, int d);
Expr *lw_dimx(Imp *m, int id, int d);
Expr *lw_mdim(Imp *m, const Meta *mt, int d);
int lw_is_one(Imp *m, const Expr *e);
/* A lowering that meets run-time dims it cannot build for: the import is
 * retried with every dim specialized (why names the reason); -1. */
int lw_need_static(Imp *m, const char *why);
/* A SymInt of run-time dims as a 0-d int64 transient holding its value
 * (the expression, computed by a block of its own). */
int lw_symint_value(Imp *m, Expr *x);
/* For the importer: an expression of the export over the scratch graph
 * (NULL after a message naming what), printed for messages; bind a symbol
 * of it to v for `how` ("--shape x=4,8"); a SymInt of metadata (0; -1
 * malformed; -2 reported); a size's expression over g if it depends on
 * run-time dims, else NULL. */
Expr *lw_parse_sym(Imp *m, const char *s, const char *what);
const char *lw_sym_text(Imp *m, const Expr *e);
int lw_sym_bind(Imp *m, int sym, int64_t v, const char *how);
int lw_read_symint(Imp *m, const cJSON *j, int64_t *v, const char *what);
Expr *lw_dyn_expr(Imp *m, const cJSON *j);

/* ---- common.c: building blocks of lowerings -------------------------------------- */

/* Window modes of a convolution or pooling: the output's size in one
 * spatial dim of kernel k, stride s, padding p on the left and q on the
 * right, dilation d, as torch's kernels give it for an input of size in
 * (the IR's loops index by it).
 *   WIN_FLOOR  (in + p + q - d(k-1) - 1) / s + 1, rounded down (none when
 *              the window is wider than the padded input);
 *   WIN_CEIL   the same rounded up, less a last window that starts in the
 *              right padding (pooling's ceil_mode): a window wider than the
 *              padded input by less than a stride still gives one;
 *   WIN_TRANS  (in - 1)s - p - q + d(k-1) + 1, plus an output padding below
 *              max(s, d) (a transposed convolution). */
enum { WIN_FLOOR, WIN_CEIL, WIN_TRANS };

/* A convolution's or pooling's window over dims [first, first + n) of
 * its input and output: per dim kernel k, stride s, padding p on the left
 * and q on the right (p where q is NULL), dilation d. A 1-d op made 2-d
 * has one hidden dim in front, which messages do not count. */
typedef struct {
	const char *op;
	int first, n, hidden, mode;
	const int64_t *k, *s, *p, *q, *d;
} Window;

Container *lw_c(Imp *m, int id);
/* A library node of kind op appended to the root sequence, labelled with the node. */
LibNode *lw_lib(Imp *m, int op);
/* The name of output k of node (NULL unless a named tensor); a new
 * transient for it with its recorded metadata, bound (-1 for none). */
const char *lw_out_name(const cJSON *node, int k);
int lw_new_out(Imp *m, const cJSON *node, int k);
/* dim d (negative counts from the end) within rank; -1 after a message. */
int lw_norm_dim(Imp *m, int64_t d, int rank);
/* Value name as a view of container src with shape, strides (in elements of
 * the root) and offset, bound; the same with sizes that are expressions. */
int lw_view(Imp *m, const char *name, int src, int rank, const int64_t *shape, Expr **stride, Expr *offset);
int lw_view_x(Imp *m, const char *name, int src, int rank, Expr *const *shape, Expr **stride, Expr *offset);
/* A contiguous copy of src (a new transient named name, not bound). */
int lw_copy(Imp *m, int src, const char *name);
/* 1 ok, 0 needs a copy first, -1 element counts differ (reported); out always set. */
int lw_reshape_strides(Imp *m, int c, int rank, const int64_t *shape, Expr **out);
/* Value name as container c (a fresh transient) reshaped to shape[rank]; 0, or -1 reported. */
int lw_view_whole(Imp *m, const char *name, int c, int rank, const int64_t *shape);
/* The same for sizes that may hold run-time dims (see common.c). */
int lw_reshape_strides_x(Imp *m, int c, int rank, Expr *const *shape, Expr **out);
int lw_view_whole_x(Imp *m, const char *name, int c, int rank, Expr *const *shape);
/* Is value name read by any node or returned? */
int lw_value_used(Imp *m, const char *name);
/* Output 0 of node = code(ops[0..n)) elementwise, with numpy broadcasting
 * (a scalar operand is an attribute; a SymInt of run-time dims a 0-d tensor). */
int lw_elemwise(Imp *m, const cJSON *node, TCode code, int n, Val *const *ops);

/* Shared by several families: a contiguous transient unnamed in the graph
 * (named after the node and hint), with sizes as expressions or numbers; a
 * view unnamed in the graph; a contiguous rank-1 view of all of c (a copy
 * first if needed); output k if some node reads it or the graph returns
 * it, else -1 (nothing made); -1 after a message unless tensor t is
 * floating-point. */
int lw_scratch_x(Imp *m, const char *hint, Dtype dt, int rank, Expr *const *shape);
int lw_scratch(Imp *m, const char *hint, Dtype dt, int rank, const int64_t *shape);
int lw_scratch_view_x(Imp *m, const char *name, int x, int rank, Expr *const *shape, Expr **st, Expr *off);
int lw_flat(Imp *m, int c);
int lw_used_out(Imp *m, const cJSON *node, int k);
int lw_float_tensor(Imp *m, int t, const char *what);
/* 1-d ops through 2-d nodes (convolution, pooling): container c [..., L]
 * viewed as [..., 1, L]; output 0 computed as [..., 1, L] and bound as the
 * graph's [..., L] (the computed container). Whether tensor c (output 0
 * when c < 0) has a run-time size only in its batch dim (0, else -1
 * through lw_need_static). Window w of input x and output out checked as
 * the kernels take it; -1 after a message. */
int lw_unsqueeze_h(Imp *m, int c);
int lw_squeezed_out(Imp *m, const cJSON *node);
int lw_batch_only(Imp *m, const cJSON *node, int c, int batched);
int lw_check_window(Imp *m, const Window *w, int x, int out);
/* A binary-search node (LIB_SEARCH): boundaries bd, values (a tensor, or
 * the scalar val when vals < 0), optional sorter, into out. */
LibNode *lw_search_node(Imp *m, int bd, int vals, const Val *val, int sorter, int out, int right, Dtype cdt);

/* ---- the families: one file of lowerings each ---------------------------------------
 * Each ATEN_OPS row names its lowering, lower_<lowering> (declared for
 * every row at the end), defined in its family's file; the family's
 * header (ir/ops_<family>.h) holds its rows:
 *   elem.c       unary binary clamp clamp_tensor where cast square outer glu lerp
 *                nan_to_num round_decimals
 *   linalg.c     conv linear gemm addmv addbmm einsum cdist grouped_mm
 *   attention.c  attention
 *   norm.c       batchnorm norm vnorm softmax
 *   reduce.c     reduce mse_loss argred scan sort sortsel search histc
 *   pool.c       pool upsample grid_sampler col2im im2col
 *   index.c      gather scatter index_op embedding_bag masked_scatter
 *                take_along_dim one_hot
 *   shape.c      view view2 cat split stack remap fill arange linspace tri eye
 *                broadcast table
 *                meshgrid dropout noop repeat_interleave rot90 shuffle diff
 *   rnn.c        rnn
 *   quant.c      quant dequant qparams
 *   sym.c        item sym_query assert_scalar assert_async
 * and what a family offers the others: */

/* elem.c: at::result_type of tensors and python scalars (ops[0..n)). */
int lw_result_type(Imp *m, Val *const *ops, int n);

/* shape.c: concatenation of ins[0..n) (n <= 64) along dim into out. */
void lw_cat(Imp *m, const int *ins, int n, int dim, int out);

/* sym.c: the Python-level integer and boolean ops of symbolic shapes
 * (_operator.mul, torch.sym_max, math.ceil, ...), evaluated on the bound
 * sizes (ir/import.c calls it for a node whose target is not an ATen op).
 * 1 if target is one of them (handled, or reported with lw_error), else 0. */
int lw_python_op(Imp *m, const cJSON *node, const char *target);

/* quant.c, for the importer: the library nodes of g that read a
 * dequantized value into g->qsteps, each with how it runs. */
void lw_quant_steps(Sdfg *g);

/* The lowerings named in the op tables (ops_*.h). */
#define X(e, t, l, p, s) int lower_##l(Imp *m, const cJSON *node);
ATEN_OPS(X)
#undef X

#endif
