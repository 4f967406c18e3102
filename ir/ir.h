/*
 * ir.h - the Structured SDFG that every phase after import works on.
 *
 * An Sdfg is a tree of structured control flow whose leaves are blocks:
 *
 *   N_SEQ    ordered children
 *   N_MAP    parallel loop  for var in [lo, hi) step: body (an N_SEQ), with
 *            a schedule (sequential, parallel, vector, unroll, gpu ...)
 *   N_FOR    sequential loop, same fields, iterations may depend on each other
 *   N_BLOCK  a dataflow graph: either one library node (a coarse op such as
 *            convolution or GEMM, with whole containers as its memlets) or a
 *            list of tasklets in topological order. A tasklet computes one
 *            scalar from operands that are memlets (one element of a
 *            container, at symbolic indices), earlier tasklets' values or
 *            constants; it may store its value through an output memlet,
 *            optionally with write-conflict resolution (wcr: +=, max=, ...).
 *
 * Containers are typed, shaped arrays: inputs, outputs, constants (weights,
 * whose bytes are read or made when the compile needs them: consts.c), transients (placed in one arena by
 * the memory plan), views (aliases of another container's memory with their
 * own shape, strides and offset: permute, expand, slice and view of
 * contiguous data cost nothing) and locals (small per-iteration buffers such
 * as accumulator tiles, declared inside the body of the loop that owns them).
 * A state container (CK_STATE) is memory of the library's instance that
 * lives across runs: a buffer the program mutates (a KV cache, a counter, a
 * recurrent hidden state). create() fills it from its initial value (a
 * constant, Container.init) and reset() does again. Reads before its one
 * writer see the value of the previous run, reads after it the new one;
 * passes keep the order of its readers and its writer (map_fusion moves no
 * read of it across the write, dce keeps the write). Import writes it once,
 * at the end, from the value the program computed (the commit); the state
 * pass (ir/passes/state.c) lets the producer of that value write it in
 * place instead where the old value is dead, so a cache update writes its
 * new rows only. An input the program writes in place (Container.written)
 * is committed the same way, into the caller's buffer.
 *
 * Sizes, bounds, strides and memlet indices are symbolic integer
 * expressions (Expr) over symbols: loop variables and shape symbols.
 * Everything lives in the Sdfg's arena and refers to containers and symbols
 * by integer id, so dumps are deterministic.
 *
 * A tasklet may also bind its integer value to a value symbol (SYM_VALUE,
 * Tasklet.bind): later tasklets of the same block, and its own output
 * memlet, may then use the symbol in their index expressions, which makes
 * data-dependent reads and writes (gather, embedding, scatter) one memlet
 * access each instead of a search. The later children of the sequence
 * that holds the binding block may use it too, in their loop bounds as
 * well: a bound known only at run time (the keys a masked attention
 * attends at all, ir/expand/attention.c). A T_INDEX tasklet is the safe binder:
 * it wraps negative indices where torch does and fails the run with
 * DOCCC_ERR_INDEX on an index outside the dim, so no memlet ever addresses
 * memory outside its container; the symbol's lo/hi then hold [0, size).
 *
 * Invariant after expansion (checked by the verifier): every non-local
 * container is written by exactly one top-level child of the root sequence,
 * and without wcr each element is stored at most once, except by stores
 * whose index uses a value symbol (a scatter's sequential loop may store
 * an element again: the last store wins, as in torch's CPU kernels). Passes
 * rely on it to move stores (fusion, which leaves value-indexed stores
 * alone) and to compute lifetimes (memory plan).
 */
#ifndef DOCCC_IR_H
#define DOCCC_IR_H

#include "../lib/lib.h"

#define MAXDIM 8

/* ---- limits -----------------------------------------------------------------
 * What doccc accepts, documented in docs/large-models.md ("Limits") and doccc(1). Import
 * rejects a program past one with "too large" and the place, so every size
 * later phases compute (a container's bytes, the arena, the weight blob: at
 * most DOCC_MAX_NODES * 4 tensors of DOCC_MAX_TENSOR_BYTES each) fits in an
 * int64_t; sizes are still computed with lib.h's ck_* where they come from
 * input. */
#define DOCC_MAX_RANK MAXDIM                        /* dims of a tensor */
#define DOCC_MAX_NODES (1 << 20)                     /* nodes of graph.nodes */
/* The fuzz build (test/fuzz/fuzz.mk) lowers these two to stay within a
 * fuzzer's memory, which also takes inputs past them more often. */
#ifndef DOCC_MAX_TENSOR_BYTES
#define DOCC_MAX_TENSOR_BYTES ((int64_t)1 << 36)     /* one tensor (elements * size): 64 GiB */
#endif
#ifndef DOCC_MAX_WEIGHT_BYTES
#define DOCC_MAX_WEIGHT_BYTES ((int64_t)1 << 36)     /* all weights and constants together: 64 GiB */
#endif

/* ---- dtypes ------------------------------------------------------------------ */
typedef enum {
	DT_F32, DT_F64, DT_F16, DT_BF16,
	DT_I64, DT_I32, DT_I16, DT_I8, DT_U8, DT_BOOL,
	NDTYPES
} Dtype;

typedef struct {
	const char *name;     /* "float32" (torch spelling) */
	const char *ctype;    /* storage type in C: "float", "uint16_t" for bf16 */
	const char *npy;      /* numpy descr */
	int size;             /* bytes */
	int isfloat;
	int torch_st;         /* ScalarType number of the export schema */
	const char *st;       /* safetensors dtype */
} DtypeInfo;
extern const DtypeInfo dtype_info[NDTYPES];
/* From the export schema's ScalarType number; -1 if unsupported (the caller
 * names it: dtype_torch_name gives "complex64", "float8_e4m3fn", ...). */
int dtype_from_torch(int st);
const char *dtype_torch_name(int st);
int dtype_from_npy(const char *descr);
int dtype_from_st(const char *st);

/* ---- expr.c: symbolic integer expressions -----------------------------------
 * Kept in a canonical form: constants folded, sums and products flattened and
 * sorted, like terms combined (2*i + 3*i -> 5*i), x*1, x+0, x/1 removed,
 * floor division and modulo of constant multiples simplified. Two
 * expressions that are equal in canonical form are structurally equal
 * (ex_eq), which is what passes use to compare subsets. */
typedef enum { E_INT, E_SYM, E_ADD, E_MUL, E_DIV, E_MOD, E_MIN, E_MAX } ExprKind;
typedef struct Expr Expr;
struct Expr {
	ExprKind k;
	int n;           /* number of args (E_ADD, E_MUL n-ary; others 2) */
	int64_t v;       /* E_INT: value; E_SYM: symbol id */
	Expr **a;        /* args */
};
/* E_DIV is floor division and E_MOD its remainder (Python semantics). */

/* SYM_VALUE: the value of one tasklet (its bind), in scope after that
 * tasklet within its block and in the later children of the block's
 * sequence; lo/hi are what the binder guarantees
 * (T_INDEX: [0, size - 1]; any other binder: unbounded). */
typedef enum { SYM_SHAPE, SYM_LOOP, SYM_VALUE } SymKind;
typedef struct {
	char *name;      /* C identifier */
	SymKind kind;
	int64_t lo, hi;  /* known inclusive range (loop vars: from their loop) */
} Symbol;

typedef struct Sdfg Sdfg;
Expr *ex_int(Sdfg *g, int64_t v);
Expr *ex_sym(Sdfg *g, int sym);
Expr *ex_add(Sdfg *g, Expr *a, Expr *b);
Expr *ex_sub(Sdfg *g, Expr *a, Expr *b);
Expr *ex_mul(Sdfg *g, Expr *a, Expr *b);
Expr *ex_muli(Sdfg *g, Expr *a, int64_t c);
Expr *ex_addi(Sdfg *g, Expr *a, int64_t c);
Expr *ex_div(Sdfg *g, Expr *a, Expr *b);
Expr *ex_mod(Sdfg *g, Expr *a, Expr *b);
Expr *ex_min(Sdfg *g, Expr *a, Expr *b);
Expr *ex_max(Sdfg *g, Expr *a, Expr *b);
/* e with every occurrence of symbol sym replaced by val (re-simplified). */
Expr *ex_subst(Sdfg *g, Expr *e, int sym, Expr *val);
int ex_eq(const Expr *a, const Expr *b);
int ex_isint(const Expr *e, int64_t *v);   /* 1 if constant */
int ex_uses(const Expr *e, int sym);        /* 1 if sym occurs */
int ex_uses_kind(const Sdfg *g, const Expr *e, SymKind k);  /* 1 if a symbol of kind k occurs */
/* Coefficient of sym if e is affine in it (e = c*sym + rest, rest free of
 * sym): returns 1 and sets *c; returns 0 if not affine. */
int ex_coeff(Sdfg *g, const Expr *e, int sym, int64_t *c);
/* Known inclusive range [*lo, *hi] of e from its symbols' lo/hi (interval
 * arithmetic; INT64_MIN / INT64_MAX stand for unbounded). 1 if both finite. */
int ex_range(const Sdfg *g, const Expr *e, int64_t *lo, int64_t *hi);
/* Evaluate with symbol values vals[sym]; returns 0 ok, -1 if unbound. */
int ex_eval(const Sdfg *g, const Expr *e, const int64_t *vals, const int *bound, int64_t *out);
/* C syntax (int64_t arithmetic); symbols by name. Division is printed as C
 * '/' and '%', valid because index expressions are non-negative.
 * (Where ranges cannot prove that, a floor-correct C form is printed.) */
void ex_print(Buf *b, const Sdfg *g, const Expr *e);
/* The same with symbol s printed as names[s] (where non-NULL): the
 * backends' own names (canonical loop variables, dc_dK for run-time dims),
 * so that printing never renames the IR's symbols. */
void ex_print_names(Buf *b, const Sdfg *g, const Expr *e, const char *const *names);
/* Parse a sympy srepr / plain string from the export format (Symbol('s77',
 * ...), Integer(4), Mul, Add, FloorDiv, Mod, Max, Min, or "768*s0").
 * Unknown symbols are created as SYM_SHAPE. NULL and *err set on failure. */
Expr *ex_parse(Sdfg *g, const char *s, const char **err);
/* The SDFG dump's form: Python's integer operators ("2*i0 + 64", "i0//4",
 * "i0 % 3", "Max(s0, 1)"), which ex_read reads back structurally equal
 * (ex_eq) while the symbols keep their ids and ranges. ex_read looks every
 * name up (find(ctx, name): a symbol id, or -1 for none; NULL: g's symbols
 * by name) and knows no other function than Min and Max; NULL and *err set
 * on failure. */
void ex_print_infix(Buf *b, const Sdfg *g, const Expr *e);
typedef int (*SymFind)(void *ctx, const char *name);
Expr *ex_read(Sdfg *g, const char *s, SymFind find, void *ctx, const char **err);

/* ---- containers ------------------------------------------------------------- */
typedef enum { CK_INPUT, CK_OUTPUT, CK_CONST, CK_TRANSIENT, CK_VIEW, CK_LOCAL, CK_STATE } CKind;

typedef struct {
	char *name;          /* unique C identifier */
	char *origin;        /* torch value it came from, or "" */
	Dtype dt;
	CKind kind;
	int rank;
	Expr *shape[MAXDIM];
	Expr *stride[MAXDIM];   /* element strides into the memory it addresses */
	Expr *offset;           /* element offset (views), else 0 */
	int base;               /* CK_VIEW: aliased container (never a view); else -1 */
	int io;                 /* CK_INPUT / CK_OUTPUT: position in the signature */
	const void *data;       /* CK_CONST: numel*size bytes, contiguous, when made (consts.c) */
	const struct ConstSrc *src; /* CK_CONST: how to make them, or NULL when data is all */
	int pins;               /* CK_CONST: holders of data (sdfg_const_get) */
	int64_t used;           /* CK_CONST with a source: when last put (consts.c's clock) */
	int64_t wofs;           /* CK_CONST: byte offset in the weight blob (backend) */
	int64_t aofs;           /* CK_TRANSIENT: byte offset in the arena, -1 = unplanned,
	                         * -2 = set at run time (Sdfg.ws[aslot]: a size with run-time dims) */
	int aslot;
	int owner;              /* CK_LOCAL: node id of the loop whose body declares it */
	int init;               /* CK_STATE: the CK_CONST container of its initial value, -1: zeros */
	int64_t sofs;           /* CK_STATE: byte offset in the instance's state (memplan), -1 = unplanned */
	int inplace;            /* CK_STATE: its update writes only what changes (the state pass) */
	int written;            /* CK_INPUT: the program writes it in place (user_input_mutation): the
	                         * run leaves the new value in the caller's buffer, as eager does */
	int dead;               /* removed (dead-code elimination); ids stay stable */
	const struct Dequant *dq; /* CK_CONST folded from a dequantization (fold_constants), else NULL */
} Container;

/* A constant that fold_constants computed from a dequantization (a quant
 * node, or torchao's cast, subtraction and product in Core ATen): element
 * oi of it (its index) is (q[qi] - z[zi]) * s[si], q converted to float32
 * and each operation rounded to float32, where qi, si and zi index the
 * containers q, s and z broadcast to its shape (numpy's rule; s and z of a
 * quant node: one element per block, blk). s or z -1: the numbers sc, zc.
 * A contraction may then read the integers q and dequantize in registers
 * (ir/expand/linalg.c), bit for bit the same weights. */
typedef struct Dequant {
	int q, s, z;
	double sc, zc;
	int quant;              /* s and z are a quant node's: blk applies */
	int64_t blk[MAXDIM];
} Dequant;

/* ---- library nodes (ops.h lists them) --------------------------------------- */
typedef enum { A_INT, A_INTS, A_FLOAT, A_STR, A_BOOL } AttrKind;
typedef struct {
	const char *name;
	AttrKind kind;
	int64_t *ints;   /* A_INT, A_BOOL: ints[0] */
	int nints;
	double f;
	const char *s;
} Attr;

typedef struct {
	int op;              /* LibOp */
	int in[8];           /* input container ids, -1 for absent optional ones */
	int nin;
	int out[4];          /* output container ids, -1 for unused outputs */
	int nout;
	Attr *attrs;
	int nattrs, capattrs;
} LibNode;

/* ---- tasklets -------------------------------------------------------------- */
/* The tasklet codes, one row each: X(code, name, arity, vec). arity counts
 * the operands; vec is 1 where the CPU vector printer has a SIMD version
 * (float32 only; schedule.c vectorizes a map only if every code in it has
 * one), 2 where that version is also so much cheaper than the scalar one
 * (exp and the functions built on it) that a map holding it vectorizes
 * even when it must gather or scatter strided operands. Every code has a scalar form in every printer: adding a code is one
 * row here plus one case in each printer's switch (backends/emit.c,
 * backends/emit_cpu.c), and test_ir checks that no printer lacks it. */
#define TCODES(X) \
	X(T_ASSIGN, "assign", 1, 1)         /* a */ \
	X(T_NEG, "neg", 1, 1) \
	X(T_ABS, "abs", 1, 1) \
	X(T_RELU, "relu", 1, 1) \
	X(T_SIGMOID, "sigmoid", 1, 2) \
	X(T_TANH, "tanh", 1, 2) \
	X(T_EXP, "exp", 1, 2) \
	X(T_LOG, "log", 1, 0) \
	X(T_SQRT, "sqrt", 1, 0) \
	X(T_RSQRT, "rsqrt", 1, 0) \
	X(T_ERF, "erf", 1, 0) \
	X(T_RECIP, "recip", 1, 1) \
	X(T_FLOOR, "floor", 1, 0) \
	X(T_CEIL, "ceil", 1, 0) \
	X(T_ROUND, "round", 1, 1)           /* half to even */ \
	X(T_TRUNC, "trunc", 1, 0) \
	X(T_SIN, "sin", 1, 0) \
	X(T_COS, "cos", 1, 0) \
	X(T_NOT, "not", 1, 0) \
	X(T_GELU, "gelu", 1, 2) \
	X(T_GELU_TANH, "gelu_tanh", 1, 2) \
	X(T_SILU, "silu", 1, 2) \
	X(T_HARDSIGMOID, "hardsigmoid", 1, 1) \
	X(T_HARDSWISH, "hardswish", 1, 1) \
	X(T_SIGN, "sign", 1, 0) \
	X(T_ISNAN, "isnan", 1, 0) \
	X(T_ADD, "add", 2, 1) \
	X(T_SUB, "sub", 2, 1) \
	X(T_MUL, "mul", 2, 1) \
	X(T_DIV, "div", 2, 1) \
	X(T_MAX, "max", 2, 1) \
	X(T_MIN, "min", 2, 1) \
	X(T_POW, "pow", 2, 0) \
	X(T_FMOD, "fmod", 2, 0) \
	X(T_REM, "rem", 2, 0) \
	X(T_EQ, "eq", 2, 0) \
	X(T_NE, "ne", 2, 0) \
	X(T_LT, "lt", 2, 0) \
	X(T_LE, "le", 2, 0) \
	X(T_GT, "gt", 2, 0) \
	X(T_GE, "ge", 2, 0) \
	X(T_AND, "and", 2, 0) \
	X(T_OR, "or", 2, 0) \
	X(T_XOR, "xor", 2, 0) \
	X(T_FMA, "fma", 3, 1)               /* a*b + c with one rounding (fma) */ \
	X(T_WHERE, "where", 3, 0)           /* a ? b : c */ \
	X(T_CLAMP, "clamp", 1, 1)           /* clamp(a, p[0], p[1]) */ \
	X(T_CAST, "cast", 1, 0)             /* a converted to the tasklet's dtype */ \
	X(T_ISINF, "isinf", 1, 0) \
	X(T_EXPM1, "expm1", 1, 0) \
	X(T_LOG1P, "log1p", 1, 0) \
	X(T_LOG2, "log2", 1, 0) \
	X(T_LOG10, "log10", 1, 0) \
	X(T_TAN, "tan", 1, 0) \
	X(T_ASIN, "asin", 1, 0) \
	X(T_ACOS, "acos", 1, 0) \
	X(T_ATAN, "atan", 1, 0) \
	X(T_SINH, "sinh", 1, 0) \
	X(T_COSH, "cosh", 1, 0) \
	X(T_ASINH, "asinh", 1, 0) \
	X(T_ACOSH, "acosh", 1, 0) \
	X(T_ATANH, "atanh", 1, 0) \
	X(T_MISH, "mish", 1, 0) \
	X(T_SOFTPLUS, "softplus", 1, 0)     /* softplus(a), beta p[0], threshold p[1] */ \
	X(T_ELU, "elu", 1, 0)               /* a > 0 ? a : p[0] * expm1(a * p[1]) */ \
	X(T_LEAKY_RELU, "leaky_relu", 1, 0) /* a > 0 ? a : a * p[0] */ \
	X(T_ATAN2, "atan2", 2, 0) \
	X(T_DIV_TRUNC, "div_trunc", 2, 0) \
	X(T_DIV_FLOOR, "div_floor", 2, 0) \
	X(T_INDEX, "index", 2, 0) \
	/* more elementwise math and the run-time assertion */ \
	X(T_FMAX, "fmax", 2, 1)             /* the other operand where one is NaN (torch.fmax) */ \
	X(T_FMIN, "fmin", 2, 1) \
	X(T_ERFINV, "erfinv", 1, 0) \
	X(T_FRAC, "frac", 1, 0)             /* a - trunc(a) */ \
	X(T_ROUND_DEC, "round_decimals", 1, 0) /* a rounded to p[0] decimal digits (negative: tens) */ \
	X(T_NAN_TO_NUM, "nan_to_num", 2, 0) /* NaN -> b, +inf -> p[0], -inf -> p[1] */ \
	X(T_GLU, "glu", 2, 2)               /* a * sigmoid(b), rounded once */ \
	X(T_LERP, "lerp", 3, 0)             /* a + c*(b - a) if |c| < 0.5, else b - (b - a)*(1 - c) */ \
	X(T_XLOGY, "xlogy", 2, 0)           /* NaN if b is NaN, else 0 if a == 0, else a*log(b) */ \
	/* int8 dot products: int32 operands holding two int16 halves (lo | hi << 16), or four bytes */ \
	X(T_DOT2, "dot2", 2, 0)             /* lo(a)*lo(b) + hi(a)*hi(b), int32 (pmaddwd, vpdpwssd) */ \
	X(T_DOT4, "dot4", 2, 0)             /* sum of a's 4 unsigned bytes times b's 4 signed bytes, int32 (vpdpbusd) */ \
	X(T_PACK2, "pack2", 2, 0)           /* the int32 (uint16)a | b << 16 of two int16-range values */ \
	/* special functions and bit ops (backends/rt/scalar.h has the helpers) */ \
	X(T_EXP2, "exp2", 1, 0) \
	X(T_ERFC, "erfc", 1, 0) \
	X(T_LGAMMA, "lgamma", 1, 0) \
	X(T_DIGAMMA, "digamma", 1, 0) \
	X(T_POLYGAMMA, "polygamma", 1, 0)   /* the p[0]-th derivative of digamma */ \
	X(T_I0, "i0", 1, 0)                 /* modified Bessel functions of the first kind */ \
	X(T_I0E, "i0e", 1, 0)               /* exp(-|a|) i0(a) */ \
	X(T_I1, "i1", 1, 0) \
	X(T_I1E, "i1e", 1, 0) \
	X(T_ERFCX, "erfcx", 1, 0)           /* exp(a^2) erfc(a) */ \
	X(T_NDTRI, "ndtri", 1, 0)           /* the inverse of the standard normal CDF */ \
	X(T_SIGNBIT, "signbit", 1, 0)       /* bool: the sign bit of a (raw operand) */ \
	X(T_ZETA, "zeta", 2, 0)             /* Hurwitz zeta(a, b) */ \
	X(T_HYPOT, "hypot", 2, 0) \
	X(T_COPYSIGN, "copysign", 2, 0) \
	X(T_LDEXP, "ldexp", 2, 0)           /* a * 2^b */ \
	X(T_NEXTAFTER, "nextafter", 2, 0)   /* the next value of the tasklet's dtype after a towards b */ \
	X(T_GCD, "gcd", 2, 0) \
	X(T_LCM, "lcm", 2, 0) \
	X(T_SHL, "shl", 2, 0)               /* a << b, 0 for b < 0 or past the width (torch) */ \
	X(T_SHR, "shr", 2, 0)               /* a >> b, the sign for b < 0 or past the width */ \
	X(T_ASSERT, "assert", 1, 0)
/* T_INDEX: a as an index into a dim of size b (int64): a + b if a < 0 and
 * p[0] != 0 (torch's negative indices); any other a outside [0, b) fails
 * the run with DOCCC_ERR_INDEX before anything reads at it.
 * T_ASSERT: a statement, not a value: a == 0 fails the run with
 * DOCCC_ERR_ASSERT and the message Sdfg.msgs[p[0]] (torch._assert_async);
 * dead-code elimination keeps it, and the step that holds it. */

typedef enum {
#define X(c, n, a, v) c,
	TCODES(X)
#undef X
	NTCODES
} TCode;
typedef struct {
	const char *name;
	int arity;
	int vec;        /* the CPU vector printer has a SIMD version (2: worth gathers) */
} TCodeInfo;
extern const TCodeInfo tcode_info[NTCODES];
extern const char *const tcode_name[NTCODES];
int tcode_arity(TCode c);

typedef enum { W_NONE, W_SUM, W_MAX, W_MIN, W_PROD } Wcr;

typedef struct {
	int data;                 /* container id */
	Expr *idx[MAXDIM];        /* one index per dim of the container */
} Memlet;

typedef enum { OPD_MEM, OPD_VAL, OPD_CONST, OPD_EXPR } OpdKind;
typedef struct {
	OpdKind kind;
	Memlet m;                 /* OPD_MEM */
	int val;                  /* OPD_VAL: index of an earlier tasklet in the block */
	double c;                 /* OPD_CONST (exact for |c| < 2^53) */
	/* OPD_MEM with guard set: an index outside [0, shape) of any dim reads
	 * the value pad instead of memory (padding for convolution, pooling). */
	int guard;
	double pad;
	Expr *e;                  /* OPD_EXPR: an integer expression's value */
} Operand;

typedef struct {
	TCode code;
	Dtype dt;                 /* result type (and compute type) */
	Operand in[3];
	int nin;
	double p[2];              /* parameters (T_CLAMP bounds) */
	int store;                /* 1 if the value is written to out */
	Memlet out;
	Wcr wcr;
	int bind;                 /* SYM_VALUE symbol holding the value, or -1 */
} Tasklet;

/* ---- control-flow tree ------------------------------------------------------ */
typedef enum { N_SEQ, N_BLOCK, N_MAP, N_FOR } NodeKind;
typedef enum {
	SCHED_SEQ,          /* plain loop */
	SCHED_PARALLEL,     /* CPU threads (OpenMP) */
	SCHED_VECTOR,       /* SIMD lanes: the backend emits vector code */
	SCHED_UNROLL,       /* fully unrolled (constant trip count) */
	SCHED_GPU_BLOCK,
	SCHED_GPU_THREAD,
	SCHED_ROLLED,       /* a sequential loop kept a loop: the C compiler must not unroll it
	                     * (the blocks of a long sum, linalg.c's red_loop) */
	NSCHEDS
} Sched;
extern const char *const sched_name[NSCHEDS];

/* ---- GPU plans -----------------------------------------------------------------
 * On the GPU targets the gpu_plan pass (ir/passes/gpu_plan.c) decides, for
 * every node that becomes a kernel, how it runs, and records it here; the
 * GPU printer (backends/emit_gpu.c) prints the plan and decides nothing.
 * The nodes that become kernels are those the host walks to: the
 * top-level children and the children of their sequences, and the
 * children of host loops (a step-level N_FOR whose body holds grids,
 * launched every iteration; it has no plan itself).
 *
 *   GK_GRID    the collapsed maps (depth of them, the schedule's
 *              SCHED_GPU_THREAD nest) as one grid, a thread per iteration,
 *              grid-stride loop
 *   GK_TILED   such a nest that is a contraction, acc += X*Y, as square
 *              tiles of tile x tile outputs per block through shared memory,
 *              the partial products of kind mma (fp32 FMAs or tensor cores)
 *   GK_COOP    such a nest with few iterations and long inner loops: a
 *              block per iteration, each child of the row body with a role
 *              (split among the threads, reduced by them, or redundant)
 *   GK_REDUCE  a loop nest (depth loops) that only accumulates into one
 *              small global container acc: one block, a tree at the end
 *   GK_SINGLE  anything else: one thread
 */
typedef enum { GK_GRID, GK_TILED, GK_COOP, GK_REDUCE, GK_SINGLE, NGPUKINDS } GpuKind;
/* A tile's partial products: fp32 FMAs, or tensor cores (CUDA wmma) fed
 * with tf32-, bf16- or fp16-rounded operands, fp32 sums; int8 operands
 * (the integer kernels) on int8 tensor cores, or int32 multiply-adds. */
typedef enum { MMA_FP32, MMA_TF32, MMA_BF16, MMA_FP16, MMA_S8, MMA_I32, NMMAS } Mma;
typedef enum { ROLE_REDUNDANT, ROLE_SPLIT, ROLE_REDUCE } CoopRole;
enum { GPU_MAXRED = 16, GPU_MAXKIDS = 64, GPU_TILE_K = 32 };
typedef struct {
	CoopRole role;
	int nred;                 /* ROLE_REDUCE: the row locals it reduces, and how */
	int red[GPU_MAXRED];
	Wcr op[GPU_MAXRED];
} CoopKid;
typedef struct {
	GpuKind kind;
	int kernel;               /* its number among the kernels of its step (NAME_sF_kN) */
	int depth;                /* GRID, TILED, COOP: collapsed maps; REDUCE: loops */
	int block;                /* threads per block */
	int64_t grid;             /* blocks, at most grid_cap; -1: from run-time extents; 0: empty, not launched */
	int64_t grid_cap;
	int64_t shared;           /* bytes of shared memory (as --report lists it) */
	int64_t per_run;          /* launches per run (the host loops' trips) */
	Expr *iters;              /* GRID, TILED, COOP: iterations of the collapsed maps */
	/* GK_TILED: the row's children (gpu_row_kids), kids[red] holding the
	 * reduction nest of nchain loops; each collapsed map's group (0 batch,
	 * 1 x: only X indexes with it, 2 y: only Y); the spaces' sizes; r sums
	 * per thread and dim (fp32) or fragments per warp (tensor cores) */
	Mma mma;
	int tile, threads, r, red, nchain;
	signed char grp[MAXDIM];
	int64_t nx, ny, nb, nk;
	/* GK_COOP: a role per child of the row body (gpu_row_kids) */
	int nkids;
	CoopKid *kids;
	/* GK_REDUCE */
	int acc;
	Wcr op;
} GpuPlan;
extern const char *const gpu_kind_name[NGPUKINDS];   /* "grid", "tiled", ... (dumps) */
extern const char *const coop_role_name[];           /* ROLE_REDUNDANT .. ROLE_REDUCE */
typedef struct {
	const char *name;         /* "tf32" */
	int elem;                 /* bytes of a shared-memory element */
	int k, pad;               /* the fragment's k; a shared row's padding in elements */
	int tc;                   /* tensor cores (wmma fragments), else r x r sums per thread */
	int integer;              /* int8 operands, int32 sums; else float32 sums */
	int span;                 /* elements from one fragment's first column to the next one's:
	                           * 16, or 32 for int8, whose fragments start 32 bytes apart */
} MmaInfo;
extern const MmaInfo mma_info[NMMAS];
/* The threads of a tile of side s and each one's sums per dim (fp32) or
 * each warp's fragments (tensor cores); 0 if the side is not one of m's
 * (16, 32, 64; tensor cores 32 at least). */
int gpu_tile_shape(Mma m, int s, int *threads, int *r);

/* The elements of a shared-memory row of a tile of side s. */
static inline int mma_row(Mma m, int s)
{
	return s / 16 * mma_info[m].span + mma_info[m].pad;
}

typedef struct Node Node;
/* A step's schedule parameters, set from the tuning database (the tuning
 * pass, ir/passes/tuning.c) where the rules would choose them: 0 or -1
 * leave a choice to the rules. The expansion takes the tile, Winograd and
 * pixels; the schedule pass takes parallel. */
typedef struct {
	int tm, tn;               /* the register tile: rows x columns (0: the rules') */
	int winograd;             /* a 3x3 stride-1 convolution by Winograd (1) or direct (0) */
	int pixels;               /* a pointwise convolution with vectors along the pixels (1) or
	                           * the output channels (0) */
	int parallel;             /* openmp: the step on threads (1) or on one (0) */
	int from;                 /* TUNE_OWN: the step's own entry; TUNE_TRANSFER: its nearest's */
} Tune;
enum { TUNE_OWN = 1, TUNE_TRANSFER = 2 };
/* The children of a row body in order, sequences flattened (at most max);
 * -1 if there are more. The plan's kids, red and roles index this list. */
int gpu_row_kids(Node *body, Node **kids, int max);
/* fn on every node of subtree n that has a plan, in kernel order. */
void gpu_plan_walk(Node *n, void (*fn)(Node *k, void *ctx), void *ctx);

struct Node {
	NodeKind kind;
	int id;
	const char *label;        /* torch node it came from ("" if none) */
	Node *parent;
	/* N_SEQ */
	Node **kids;
	int nkids, capkids;
	/* N_MAP, N_FOR */
	int var;                  /* SYM_LOOP symbol */
	Expr *lo, *hi;            /* [lo, hi) */
	int64_t step;
	Sched sched;
	int collapse;             /* SCHED_PARALLEL: number of perfectly nested maps merged */
	Expr *par_work;           /* SCHED_PARALLEL with run-time extents: the work estimate, run
	                           * in parallel only when it is at least par_min (else NULL) */
	int64_t par_min;
	GpuPlan *gpu;             /* GPU targets: how the node runs as a kernel (gpu_plan), or NULL */
	const Tune *tune;         /* a step: its schedule from the tuning database, or NULL */
	Node *body;               /* an N_SEQ */
	double flops;             /* a top-level step from a convolution or matrix product: its
	                           * multiply-adds x 2 (lib_flops), for profiles; else 0 */
	/* N_BLOCK */
	LibNode *lib;             /* a library-node block, or NULL */
	Tasklet *ts;              /* else: tasklets in topological order */
	int nts, capts;
};

/* ---- the SDFG ---------------------------------------------------------------- */
/* A guard of the export on the run-time dims (_assert_scalar, a range of a
 * derived dim): a op b must hold, else the run fails with DOCCC_ERR_SHAPE
 * and text in the message. */
typedef enum { G_EQ, G_NE, G_LT, G_LE } GuardOp;
typedef struct {
	Expr *a, *b;
	GuardOp op;
	const char *text;         /* as the export wrote it ("Ne(s0, 1000)") */
	const char *msg;          /* the assertion's message, or NULL */
} Guard;
/* A transient whose size depends on run-time dims: its offset is computed
 * at run time as the largest end (offset + size, 64-byte aligned) of the
 * slots below it (earlier in ws) whose lifetimes meet its own, so that no
 * two live transients overlap at any dims. */
typedef struct {
	int id;                   /* container */
	Expr *size;               /* bytes, a multiple of 64 */
	int *below;               /* indices of earlier slots */
	int nbelow;
} WsSlot;

typedef struct {
	const char *node;         /* the top-level child's label */
	const char *why;          /* "its kernel needs 70000 bytes of per-thread buffers, ..." */
} HostStep;

/* A quantized op: a library node of the imported program that reads a
 * dequantized value (directly or through a view), and how it runs. */
typedef struct {
	const char *node;         /* the top-level child's label */
	const char *op;           /* its library node's kind ("conv", "gemm") */
	int integer;              /* 1: an integer kernel; 0: in float between dequantize and quantize */
} QuantStep;

struct Sdfg {
	Arena *arena;
	char *name;               /* model name, a C identifier */
	Container *cs;
	int ncs, capcs;
	Symbol *syms;
	int nsyms, capsyms;
	Node *root;               /* N_SEQ */
	int nextid;               /* node ids */
	int ninputs, noutputs;
	int *inputs;              /* container ids in signature order */
	int *outputs;
	/* Per-node provenance for messages: node label -> first stack_trace line. */
	const char *src;          /* input file name, for messages */
	int64_t arena_size;       /* bytes, set by the memory plan */
	char hash[65];            /* content hash of the input (sha256 hex) */
	/* For the compile report: ATen op census of the input and pass times. */
	const char **census_ops;  /* "aten.conv2d.default" */
	int *census_counts;
	int ncensus, capcensus;
	double pass_ms[32];       /* by pass_table index; -1 if not run */
	/* Dynamic dims of the export and the sizes compiled for ("s0=4 s1=128"), or NULL. */
	const char *specialized;
	/* The tuning pass: steps given their schedule by their own entry of the
	 * tuning database, by the nearest tuned step's (transfer), or left to
	 * the rules; database entries of another cost-model version ignored. */
	int ntuned, ntransferred, nrules, nforeign;
	/* GPU targets: the steps that cannot run on the GPU, and why (schedule);
	 * the driver then builds the model for the host. */
	HostStep *host_steps;
	int nhost_steps, caphost_steps;
	/* Quantized models: the ops that compute on dequantized values, in
	 * program order, and how each runs (the importer; doccc check, --report
	 * and the compile's note list them). */
	QuantStep *qsteps;
	int nqsteps, capqsteps;
	/* Messages of the run-time assertions (T_ASSERT's p[0] indexes them). */
	const char **msgs;
	int nmsgs, capmsgs;
	/* Run-time dims: the SYM_SHAPE symbols a dynamic library takes at run
	 * time, in the API's order (NAME_DIM_*), the export's guards on them,
	 * and (memplan) the workspace plan whose offsets depend on them. */
	int *dims;
	int ndims, capdims;
	Guard *guards;
	int nguards, capguards;
	WsSlot *ws;
	int nws;
	/* State (CK_STATE containers) in the API's order (NAME_STATE*), and the
	 * bytes of the instance's state area (memplan). */
	int *states;
	int nstates, capstates;
	int64_t state_size;
	/* consts.c: bytes of made constants held, their peak, a use clock */
	int64_t const_held, const_peak, const_clock;
	int const_freer;         /* the arena frees what is held (registered once) */
};

/* ---- constants' bytes (consts.c) ----------------------------------------------
 * A constant either has its bytes from the start (data: small tables that
 * expansions compute) or a source that makes them when asked: a weight of
 * the input (read from the archive, the safetensors file or the extracted
 * data file when its turn comes) or a function of other constants (packed
 * panels, batch norm folded into a convolution). Compilation asks for a
 * large constant's bytes once, when the weights file is written, so doccc
 * holds one weight (and what it is made from) at a time, not all of them.
 * sdfg_const_get makes the bytes if needed and pins them until the
 * matching sdfg_const_put; unpinned bytes of constants larger than
 * CONST_KEEP are freed once those held pass CONST_BUDGET (oldest first),
 * smaller ones are kept. A failure to make them (the archive damaged since
 * import) is reported and gives NULL. */
enum { CONST_KEEP = 1 << 20, CONST_BUDGET = 64 << 20 };
typedef struct ConstSrc {
	/* Fill dst with the constant's numel*size bytes; 0, or -1 reported. */
	int (*make)(Sdfg *g, const struct ConstSrc *s, void *dst);
	const void *ctx;
} ConstSrc;
/* Give CK_CONST container id the source make(ctx) (ctx lives as long as g). */
void sdfg_const_source(Sdfg *g, int id, int (*make)(Sdfg *g, const ConstSrc *s, void *dst), const void *ctx);
/* A new constant (origin "") made by make from a copy of ctx[0..ctxsize). */
int sdfg_const_new(Sdfg *g, const char *name, Dtype dt, int rank, const int64_t *shape,
                   int (*make)(Sdfg *g, const ConstSrc *s, void *dst), const void *ctx, size_t ctxsize);
int sdfg_const_known(Sdfg *g, int id);      /* a constant with bytes or a source */
const void *sdfg_const_get(Sdfg *g, int id);
void sdfg_const_put(Sdfg *g, int id);
/* Bytes held for constants now, and at most so far. */
int64_t sdfg_const_held(const Sdfg *g, int64_t *peak);
/* Element e (counted in its root's elements) of the bytes of a constant of
 * dtype dt, as a double (every dtype but float16/bfloat16). */
double sdfg_elem(Dtype dt, const void *bytes, int64_t e);
/* Of a folded dequantization d with shape sh[r]: the element of its part
 * (0 q, 1 s, 2 z; -1 for a number) that element oi of it reads, counted
 * in that part's root's elements. */
int64_t sdfg_dequant_at(Sdfg *g, const Dequant *d, int part, int r, const int64_t *oi);

/* sdfg.c: building */
Sdfg *sdfg_new(Arena *a, const char *name);
int sdfg_add_sym(Sdfg *g, const char *name, SymKind k, int64_t lo, int64_t hi);
/* Why s cannot name a container or symbol (not a C identifier, or a
 * keyword or library name generated code uses, which sdfg_add_* would have
 * renamed), or NULL when it can. */
const char *sdfg_name_problem(const char *s);
/* A new container; name made unique and a valid C identifier. Shape from
 * integers; strides contiguous (row-major); offset 0; base -1; aofs -1. */
int sdfg_add_container(Sdfg *g, const char *name, Dtype dt, CKind k, int rank, const int64_t *shape);
int sdfg_add_container_x(Sdfg *g, const char *name, Dtype dt, CKind k, int rank, Expr *const *shape);
/* A view of container base (resolved to its root) with given shape, strides
 * (in elements of the root) and offset. */
int sdfg_add_view(Sdfg *g, const char *name, int base, int rank, Expr *const *shape, Expr *const *stride, Expr *offset);
Container *sdfg_c(Sdfg *g, int id);
int64_t sdfg_numel(Sdfg *g, int id);        /* -1 if symbolic */
Expr *sdfg_numel_x(Sdfg *g, int id);
int sdfg_is_contiguous(Sdfg *g, int id);    /* row-major strides, offset 0 */
/* The element index of memlet m in its root's memory, offset + idx . strides
 * (simplified: a row and column of one flat index, i/W and i%W of a
 * contiguous [H][W], add up to i); how far it moves per step of symbol var:
 * 1 and *k where it is affine in var with a constant coefficient (0 where
 * var does not occur), else 0. */
Expr *sdfg_flat_index(Sdfg *g, const Memlet *m);
int sdfg_lane_step(Sdfg *g, const Memlet *m, int var, int64_t *k);
/* Nodes */
Node *sdfg_seq(Sdfg *g, const char *label);
Node *sdfg_block(Sdfg *g, const char *label);
Node *sdfg_libblock(Sdfg *g, const char *label, int op);
/* A loop over a new SYM_LOOP symbol named after hint; body is a fresh N_SEQ. */
Node *sdfg_loop(Sdfg *g, NodeKind k, const char *hint, Expr *lo, Expr *hi, int64_t step);
void sdfg_append(Sdfg *g, Node *seq, Node *kid);
void sdfg_insert(Sdfg *g, Node *seq, int pos, Node *kid);
void sdfg_remove(Node *seq, int pos);
/* Tasklets: append to block b, returns the tasklet's index (its value id). */
int sdfg_tasklet(Sdfg *g, Node *b, TCode code, Dtype dt, int nin, const Operand *in);
void sdfg_store(Node *b, int t, Memlet out, Wcr wcr);
/* Bind tasklet t of block b (integer-valued) to a new SYM_VALUE symbol
 * named after hint with range [lo, hi]; returns the symbol. */
int sdfg_bind(Sdfg *g, Node *b, int t, const char *hint, int64_t lo, int64_t hi);
/* Does tasklet t use symbol sym in an index (operands or output memlet)? */
int tasklet_uses_sym(const Sdfg *g, const Tasklet *t, int sym);
/* Does subtree n use sym (loop bounds, indices, operands)? */
int node_uses_sym(const Sdfg *g, const Node *n, int sym);
/* esc[s] (g->nsyms entries) = 1 for each value symbol that a later child
 * of its binding block's sequence uses (in scope there, see above). */
void sdfg_value_escapes(const Sdfg *g, char *esc);
Operand opd_mem(int data, int rank, Expr *const *idx);
Operand opd_val(int t);
Operand opd_const(double c);
static inline Operand opd_guarded(int data, int rank, Expr *const *idx, double pad)
{
	Operand o = opd_mem(data, rank, idx);
	o.guard = 1;
	o.pad = pad;
	return o;
}
static inline Operand opd_expr(Expr *e)
{
	Operand o = opd_const(0);
	o.kind = OPD_EXPR;
	o.e = e;
	return o;
}
/* Library-node attributes */
void lib_set_int(Sdfg *g, LibNode *l, const char *name, int64_t v);
void lib_set_ints(Sdfg *g, LibNode *l, const char *name, const int64_t *v, int n);
void lib_set_float(Sdfg *g, LibNode *l, const char *name, double v);
void lib_set_str(Sdfg *g, LibNode *l, const char *name, const char *s);
void lib_set_bool(Sdfg *g, LibNode *l, const char *name, int v);   /* A_BOOL */
const Attr *lib_attr(const LibNode *l, const char *name);
int64_t lib_int(const LibNode *l, const char *name, int64_t dflt);
int lib_ints(const LibNode *l, const char *name, int64_t *out, int max); /* count or -1 */
double lib_float(const LibNode *l, const char *name, double dflt);
const char *lib_str(const LibNode *l, const char *name, const char *dflt);
/* Walk every node (pre-order). */
typedef void (*NodeFn)(Sdfg *g, Node *n, void *ctx);
void sdfg_walk(Sdfg *g, Node *n, NodeFn fn, void *ctx);
/* Does subtree n read / write container c (views count for their base)? */
int node_reads(Sdfg *g, Node *n, int c);
int node_writes(Sdfg *g, Node *n, int c);
int sdfg_root_of(Sdfg *g, int c);           /* base of a view, else c */
/* last[c] (g->ncs entries): the last top-level step that reads container c
 * (a root; a read through a view counts for its base), -1 where none does.
 * sdfg_step_values: the values top-level step i leaves, the root
 * containers it writes that carry a torch name (origin) and that the
 * caller or a later step sees (outputs, states, inputs written in place,
 * transients a later step reads: last from sdfg_last_reads), in id order;
 * at most max, their count. Profiles' value dumps (the backend) and the
 * perturb pass take them. */
void sdfg_last_reads(Sdfg *g, int *last);
int sdfg_step_values(Sdfg *g, int i, const int *last, int *ids, int max);

/* verify.c: structural checks. Reports "sdfg 'name': <stage>: ..." through
 * diag and returns the number of problems (internal errors). sdfg_verify_at
 * reports at loc instead (a file read: read.c). */
int sdfg_verify(Sdfg *g, const char *stage);
int sdfg_verify_at(Sdfg *g, const char *loc);

/* dump.c: JSON and Graphviz DOT, deterministic. The JSON holds everything
 * passes and backends read (read.c reads it back), but constants' bytes
 * only for live constants of at most SDFG_DUMP_DATA_MAX bytes (biases,
 * batch-norm statistics, tables: what a pass may need while it runs);
 * sdfg_dump_json makes those bytes if needed: -1 when one could not be had
 * (reported), else 0. SDFG_FORMAT is the JSON's "sdfg_format". */
enum { SDFG_FORMAT = 1, SDFG_DUMP_DATA_MAX = 1024 };
int sdfg_dump_json(Sdfg *g, Buf *b);
void sdfg_dump_dot(Sdfg *g, Buf *b);
/* read.c: the JSON of sdfg_dump_json (text[0..len) of file path) read back:
 * dumping it again gives the same bytes. Every problem is reported at its
 * place ("x.json: containers[3].shape[1]: error: ..."), then NULL; the
 * graph read is verified. Constants without bytes in the dump get a source
 * that reports their absence when asked for them. */
Sdfg *sdfg_read_json(Arena *a, const char *path, const char *text, size_t len);
/* The dump's names of the IR's enums (dtype.c), indexed by their values. */
extern const char *const ckind_name[];       /* CK_INPUT .. CK_LOCAL */
extern const char *const wcr_name[];         /* W_NONE .. W_PROD */
extern const char *const node_kind_name[];   /* N_SEQ .. N_FOR */
extern const char *const sym_kind_name[];    /* SYM_SHAPE .. SYM_VALUE */
extern const char *const guard_op_name[];    /* G_EQ .. G_LE */

/* ---- ops.h, ops.c: the op table ------------------------------------------------ */
#include "ops.h"

/* ---- import.c, import/: torch.export -> SDFG -------------------------------------- */

/* What the importer saw, for `doccc check` (ImportArgs.census; NULL when
 * compiling). Every node is counted under its target; a node that does not
 * lower adds to nbad, and the first such node's message is why. Its
 * messages are kept here instead of printed. dtypes: every torch scalar type
 * of the graph's values, supported or not. syms: the export's shape
 * symbols, their ranges, the size each is compiled for, and the input dims
 * that use them. */
typedef struct {
	const char *op;      /* "aten.conv2d.default" */
	int count, nbad;
	const char *why;
} CensusOp;
typedef struct {
	const char *name;    /* s0 */
	int64_t lo, hi, value;  /* hi INT64_MAX: unbounded; value -1: not bound */
	int run_time;        /* a run-time dim of the library (value: the export's example) */
	const char *uses;    /* "x[0], mask[1]" */
} CensusSym;
typedef struct {
	Arena *a;
	CensusOp *ops;
	int nops, capops, nnodes;
	int dtypes[64];      /* torch scalar type numbers seen */
	int ndtypes;
	CensusSym *syms;
	int nsyms, capsyms;
} Census;

typedef struct {
	const char *path;         /* .pt2 or .json */
	const char *weights;      /* --weights FILE (safetensors), or NULL */
	const char *const *shapes;  /* --shape INPUT=D0,D1,... */
	int nshapes;
	const char *const *dims;    /* --dim SYMBOL=SIZE */
	int ndims;
	const char *const *maxdims; /* --max-dim SYMBOL=N */
	int nmaxdims;
	int fixed;                  /* --dynamic=no: every dynamic dim at the export's example size */
	Census *census;             /* doccc check, or NULL */
} ImportArgs;
/* NULL on failure (all problems reported, e.g. every unsupported op). */
Sdfg *import_program(Arena *a, const char *name, const ImportArgs *args);
/* The i-th lowering that takes run-time dims (NULL past the end), for --list-ops. */
const char *import_dyn_lowering(int i);

/* ---- passes.c: the pass table -------------------------------------------------- */
typedef struct Target Target;
typedef struct {
	const char *name;
	const char *type;     /* "bool", "int", "string" */
	const char *dflt;
	const char *doc;
	int64_t min, max;     /* "int": the values accepted (options outside are errors) */
	const char *choices;  /* or NULL; else the values accepted, '|'-separated ("auto|16|32|64") */
} PassParam;
typedef struct Pass Pass;
typedef struct {
	Sdfg *g;
	const Options *opts;
	const Target *tgt;
	const Pass *pass;
	Arena *scratch;       /* freed after the pass */
} PassCtx;
struct Pass {
	const char *name;
	const char *doc;
	int (*run)(PassCtx *c);   /* 0 ok, -1 error (reported) */
	int enabled;              /* default */
	int required;             /* cannot be disabled (e.g. expansion) */
	const char *stage;        /* dump stage name written after it */
	const PassParam *params;
	int nparams;
};
/* The passes, one per file in ir/passes/, in pass_table order. */
int pass_dce(PassCtx *c);
int pass_fold_constants(PassCtx *c);
int pass_state(PassCtx *c);
int pass_integer(PassCtx *c);
int pass_tuning(PassCtx *c);
int pass_expand(PassCtx *c);
int pass_map_fusion(PassCtx *c);
int pass_schedule(PassCtx *c);
int pass_gpu_plan(PassCtx *c);
int pass_memplan(PassCtx *c);
int pass_perturb(PassCtx *c);
/* memplan.c: the workspace's bytes at run-time dims vals (g->dims order);
 * -1 if they cannot be had. memplan_max_bytes: at the largest dims (-1 if
 * a dim has no bound), and *at_create what create() allocates: that when
 * it is at most MEMPLAN_PREALLOC (and the largest dims pass the export's
 * guards), else the fixed part, which the first set_dims grows. */
enum { MEMPLAN_PREALLOC = 1 << 30 };
int64_t memplan_bytes_at(Sdfg *g, const int64_t *vals);
int64_t memplan_max_bytes(Sdfg *g, int64_t *at_create);
extern const Pass pass_table[];
extern const int npasses;
/* Typed parameter lookup: option "pass.param" from opts, else the default. */
int64_t pass_int(PassCtx *c, const char *param);
int pass_bool(PassCtx *c, const char *param);
const char *pass_str(PassCtx *c, const char *param);
/* Check every pass option in opts against the table (unknown pass or
 * parameter: warning; wrong type: error with its location). */
int passes_check_options(const Options *o);
/* Run the pipeline; dumpdir (or NULL) receives NN-stage.json/.dot after each
 * stage. 0 ok, -1 failed. */
int passes_run(Sdfg *g, const Options *o, const Target *t, const char *dumpdir);
/* The enabled passes of pass_table[from..to) (doccc tune: up to its
 * tuning pass, and a step's cutout from expand on). */
int passes_run_span(Sdfg *g, const Options *o, const Target *t, const char *dumpdir, int from, int to);
/* The pass of the table called name, or NULL; and one pass run as the
 * pipeline runs it (its options from o, a scratch arena, its time in
 * g->pass_ms, then the verifier), whether or not o enables it: 0 ok, -1
 * failed (reported; so is a pass that reported an error). */
const Pass *pass_find(const char *name);
int passes_run_one(Sdfg *g, const Options *o, const Target *t, const Pass *p);

/* tuning.c: the steps the tuning database can schedule. tune_step fills s
 * for top-level node n (a convolution or GEMM library node on a CPU target
 * with SIMD and constant sizes; on openmp any other library node but an
 * assertion): its canonical text and key, kind and sizes; 0 when n is no
 * such step. tune_candidates: the schedules doccc
 * tune times for it, the rules' first (all zero), at most max; their
 * count. tune_text prints t as the database stores it ("tm=4 tn=16
 * winograd=0"; "" for the rules'); tune_parse reads it back (strict: 0, or
 * -1 and *why). TUNE_VERSION numbers the parameters' meaning: entries of
 * another version are not used. */
#define TUNE_VERSION 2
typedef struct {
	const char *text;         /* canonical text: op, attributes, operands, precision */
	char key[65];             /* its sha256 */
	const char *kind;         /* transfer takes schedules of the same kind only */
	const char *dims;         /* its sizes, for transfer's distance ("1 64 56 56 64") */
	double flops;             /* multiply-adds x 2, for ordering and the note */
	int64_t rows;             /* the register tile's rows dim (GEMM M, conv output width) */
	int wino, pixels, dw;     /* Winograd and pixels apply; a depthwise convolution */
	int other;                /* not a contraction: threads or not is its one choice */
	int64_t cin;              /* a convolution's input channels */
	int64_t px;               /* and its pixels per map */
	double wino_bytes;        /* Winograd's transformed tiles (linalg.c's wino_fits) */
} TuneStep;
/* What the rules choose where a step has two forms (the expand pass's
 * options winograd, winograd_max_mb, pointwise_max_channels and
 * pointwise_min_pixels). */
typedef struct {
	int winograd;
	int64_t pw_max_c, pw_min_px, wino_max_mb;
} TuneRules;
/* The rules themselves, which the expansion applies (linalg.c) and the
 * tuner flips: Winograd's transformed tiles in bytes (16 values per 2x2
 * tile of every input and output channel of every image, a run-time batch
 * counted as one; within winograd_max_mb); a 1x1 convolution along the
 * pixels (few input channels, or a large enough map). */
static inline double wino_tile_bytes(int64_t n, int64_t c, int64_t oc, int64_t oh, int64_t ow, int lanes)
{
	return 64.0 * (double)(n > 1 ? n : 1) * (double)(c + oc) * (double)((oh + 1) / 2 * ((ow + 1) / 2 + 1) + lanes);
}
static inline int pointwise_pixels(int64_t cin, int64_t px, int64_t max_c, int64_t min_px)
{
	return cin <= max_c || px >= min_px;
}
int tune_step(Sdfg *g, const Node *n, const Target *t, TuneStep *s);
/* A convolution's or matrix product's multiply-adds x 2 at its sizes; 0
 * for another library node, or sizes known only at run time. */
double lib_flops(Sdfg *g, const LibNode *l);
int tune_candidates(const TuneStep *s, const Target *t, const TuneRules *r, Tune *out, int max);
const char *tune_text(Arena *a, const Tune *t);
int tune_parse(const char *text, Tune *t, const char **why);

/* ---- the target: what the passes know of the machine ---------------------------
 * Resolved from the options by the backends (backends/target.c: the table
 * of backends and categories); the IR reads these fields and never which
 * backend it is. */
/* contraction_precision, as torch's float32 matmul precision: fp32 inputs
 * (highest), inputs rounded to tf32 (high) or to bf16 (medium), fp32 sums */
typedef enum { CP_HIGHEST, CP_HIGH, CP_MEDIUM } ContractionPrecision;
/* The CPU architectures (backends/target.c's arch_table, a row each). */
typedef enum { ARCH_X86_64, ARCH_AARCH64, NARCHS } ArchKind;
struct Target {
	int kind;                 /* the backend (backends/backend.h's TargetKind: its row) */
	const char *name;         /* "openmp" */
	const char *category;     /* "desktop" */
	const char *march;        /* clang -march value (-mcpu for an aarch64 CPU's name) */
	int arch;                 /* ArchKind: the triple's architecture */
	const char *triple;       /* a cross build's (clang --target), NULL: the host's */
	int march_env;            /* DOCC_MARCH chose march (sequential, openmp) */
	int gpu;                  /* a GPU target: grids of threads, device-resident data */
	int threads;              /* CPU threads: parallel maps (openmp) */
	int vec_bits;             /* 0 (no explicit SIMD), 128, 256, 512 */
	int vec_regs;             /* architectural vector registers */
	int dot4;                 /* march has four-byte int8 dot products (AVX-VNNI, AVX512-VNNI: vpdpbusd) */
	int64_t l1, l2;           /* bytes per core */
	int max_threads;          /* default thread cap for the category, 0 = all */
	int tile_m, tile_n;       /* micro-kernel register tile: rows x floats */
	const char *opt;          /* "-O2", "-O3" */
	int approx;               /* approximate_math */
	/* GPU targets (march holds the architecture, sm_90 or gfx90a) */
	int gpu_block;            /* threads per block */
	int gpu_max_blocks;       /* grid cap; grid-stride loops beyond */
	int64_t gpu_locals;       /* bytes of locals one GPU thread may declare */
	int gpu_sms;              /* streaming multiprocessors (compute units) of the architecture */
	int gpu_tc;               /* the architecture has tensor cores with tf32/bf16/fp16 wmma (sm_80+) */
	ContractionPrecision precision; /* contraction_precision (the GPU contractions follow it) */
	int simulate;             /* --simulate: device source compiled for the host */
	int fallback;             /* the host build of a GPU target: that target's kind (else 0) */
};
#define TARGET_IS_GPU(t) ((t)->gpu)

#endif
