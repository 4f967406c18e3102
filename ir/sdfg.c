/*
 * sdfg.c - building and querying the SDFG: containers, symbols, nodes,
 * tasklets, library-node attributes, and the read/write queries that the
 * verifier and the passes share.
 *
 * Everything is allocated in g->arena. Containers and symbols live in
 * growable arrays (g->cs, g->syms) and are referred to by index, so a
 * Container pointer from sdfg_c() is only valid until the next container is
 * added; keep ids, not pointers, across additions.
 *
 * Names: container and symbol names are C identifiers, unique across both
 * containers and symbols (they share the scope of the generated function):
 * a name that is not an identifier is encoded by buf_ident (injective, so
 * two input names never meet in one identifier by accident), C (and
 * C++) keywords and the C library names that emitted code uses (exp, sqrt,
 * int64_t ...) get a '_' suffix, and a clash appends _1, _2, ... Shape
 * symbols should be created before containers that could clash with them
 * (import parses shapes before creating the container), because ex_parse
 * finds a shape symbol again by its exact name.
 *
 * Signature: creating a CK_INPUT or CK_OUTPUT container appends it to
 * g->inputs / g->outputs and sets its io to that position; an importer whose
 * signature order differs reorders both arrays and the io fields together.
 */
#include <stdlib.h>
#include <string.h>

#include "ir.h"

/* ---- names ------------------------------------------------------------------------ */
/* Library names generated code may use (keywords: c_is_keyword). */
static const char *const reserved[] = {
	"main", "exp", "expf", "exp2", "exp2f", "expm1", "expm1f", "log", "logf", "log2", "log2f",
	"log10", "log10f", "log1p", "log1pf", "sqrt", "sqrtf", "cbrt", "cbrtf", "tanh", "tanhf",
	"sinh", "sinhf", "cosh", "coshf", "erf", "erff", "erfc", "erfcf", "sin", "sinf", "cos",
	"cosf", "tan", "tanf", "asin", "asinf", "acos", "acosf", "atan", "atanf", "atan2", "atan2f",
	"fabs", "fabsf", "floor", "floorf", "ceil", "ceilf", "round", "roundf", "rint", "rintf",
	"nearbyint", "nearbyintf", "trunc", "truncf", "pow", "powf", "fmod", "fmodf", "remainder",
	"remainderf", "fmin", "fminf", "fmax", "fmaxf", "fma", "fmaf", "isnan", "isinf", "isfinite",
	"signbit", "copysign", "copysignf", "lgamma", "tgamma", "abs", "labs", "llabs", "min", "max",
	"int8_t", "int16_t", "int32_t", "int64_t", "uint8_t", "uint16_t", "uint32_t", "uint64_t",
	"size_t", "ptrdiff_t", "intptr_t", "uintptr_t", "NULL", "INFINITY", "NAN", "errno",
	"memcpy", "memset", "memmove", "memcmp", "malloc", "calloc", "realloc", "free",
	"aligned_alloc", "posix_memalign", "printf", "fprintf", "snprintf", "exit", "abort",
	"assert", "stdin", "stdout", "stderr",
	/* POSIX / GNU names that <math.h>, <string.h>, <stdlib.h> may declare */
	"j0", "j1", "jn", "y0", "y1", "yn", "gamma", "drem", "exp10", "pow10", "scalb", "significand",
	"fdiv", "fadd", "fsub", "fmul", "hypot", "ldexp", "frexp", "modf", "logb", "ilogb", "nextafter",
	"sincos", "index", "rindex", "time", "clock", "rand", "random", "srand", "signal", "select",
	"read", "write", "open", "close", "div", "ldiv", "remove", "rename", "system", "sleep", "stat",
	"pipe", "dup", "link", "kill", "wait", "fork", "bsearch", "qsort", "atexit",
};

static int is_reserved(const char *s)
{
	if (c_is_keyword(s)) return 1;
	for (size_t i = 0; i < COUNTOF(reserved); i++)
		if (!strcmp(reserved[i], s)) return 1;
	/* Leading double underscore or underscore-capital is the implementation's. */
	return s[0] == '_' && (s[1] == '_' || (s[1] >= 'A' && s[1] <= 'Z'));
}

const char *sdfg_name_problem(const char *s)
{
	if (!c_is_ident(s))
		return "is not a C identifier";
	if (c_is_keyword(s))
		return "is a C or C++ keyword";
	for (size_t i = 0; i < COUNTOF(reserved); i++)
		if (!strcmp(reserved[i], s))
			return "is a name generated code uses";
	return NULL;
}

static int name_taken(const Sdfg *g, const char *s)
{
	for (int i = 0; i < g->ncs; i++)
		if (!strcmp(g->cs[i].name, s)) return 1;
	for (int i = 0; i < g->nsyms; i++)
		if (!strcmp(g->syms[i].name, s)) return 1;
	return 0;
}

/* If s is base "_" digits, the number (else -1). */
static long suffix_of(const char *s, const char *base, size_t blen)
{
	if (strncmp(s, base, blen) || s[blen] != '_' || !s[blen + 1]) return -1;
	const char *p = s + blen + 1;
	if (p[0] == '0' && p[1]) return -1;
	long v = 0;
	for (; *p; p++) {
		if (*p < '0' || *p > '9' || v > 100000000L) return -1;
		v = v * 10 + (*p - '0');
	}
	return v;
}

/* A valid, unreserved, unused C identifier derived from name (or dflt). */
static char *unique_name(Sdfg *g, const char *name, const char *dflt)
{
	if (!name || !*name) name = dflt;
	Buf id = {0};
	buf_ident(&id, name);
	char *s = arena_alloc(g->arena, id.len + 2);
	memcpy(s, id.s, id.len);
	char *p = s + id.len;
	buf_free(&id);
	if (is_reserved(s)) *p++ = '_', *p = 0;
	if (!name_taken(g, s)) return s;
	/* One scan for the largest suffix in use keeps this linear per name. */
	size_t blen = strlen(s);
	long best = 0;
	for (int i = 0; i < g->ncs; i++) best = MAX(best, suffix_of(g->cs[i].name, s, blen));
	for (int i = 0; i < g->nsyms; i++) best = MAX(best, suffix_of(g->syms[i].name, s, blen));
	return arena_printf(g->arena, "%s_%ld", s, best + 1);
}

/* ---- graph, symbols, containers ----------------------------------------------------- */
Sdfg *sdfg_new(Arena *a, const char *name)
{
	Sdfg *g = arena_alloc(a, sizeof *g);
	g->arena = a;
	g->name = arena_strdup(a, name ? name : "model");
	g->root = sdfg_seq(g, "");
	g->src = "";
	return g;
}

int sdfg_add_sym(Sdfg *g, const char *name, SymKind k, int64_t lo, int64_t hi)
{
	Symbol s = {unique_name(g, name, k == SYM_LOOP ? "i" : k == SYM_VALUE ? "ix" : "s"), k, lo, hi};
	VEC_PUSH(g->arena, g->syms, g->nsyms, g->capsyms, s);
	return g->nsyms - 1;
}

/* Append x to a signature array (no capacity field: copied, they are short). */
static void push_io(Sdfg *g, int **arr, int *n, int x)
{
	int *na = arena_alloc(g->arena, (size_t)(*n + 1) * sizeof *na);
	if (*n) memcpy(na, *arr, (size_t)*n * sizeof *na);
	na[(*n)++] = x;
	*arr = na;
}

static void contiguous(Sdfg *g, int rank, Expr *const *shape, Expr **stride)
{
	Expr *s = ex_int(g, 1);
	for (int d = rank - 1; d >= 0; d--) {
		stride[d] = s;
		s = ex_mul(g, s, shape[d]);
	}
}

int sdfg_add_container_x(Sdfg *g, const char *name, Dtype dt, CKind k, int rank, Expr *const *shape)
{
	DOCC_ASSERT(rank >= 0 && rank <= MAXDIM);
	DOCC_ASSERT(dt >= 0 && dt < NDTYPES);
	Container c;
	memset(&c, 0, sizeof c);
	c.name = unique_name(g, name, "t");
	c.origin = arena_strdup(g->arena, name ? name : "");
	c.dt = dt;
	c.kind = k;
	c.rank = rank;
	for (int d = 0; d < rank; d++) {
		DOCC_ASSERT(shape && shape[d]);
		c.shape[d] = shape[d];
	}
	contiguous(g, rank, c.shape, c.stride);
	c.offset = ex_int(g, 0);
	c.base = -1;
	c.io = -1;
	c.aofs = -1;
	c.owner = -1;
	c.init = -1;
	c.sofs = -1;
	int id = g->ncs;
	VEC_PUSH(g->arena, g->cs, g->ncs, g->capcs, c);
	if (k == CK_INPUT) {
		g->cs[id].io = g->ninputs;
		push_io(g, &g->inputs, &g->ninputs, id);
	} else if (k == CK_OUTPUT) {
		g->cs[id].io = g->noutputs;
		push_io(g, &g->outputs, &g->noutputs, id);
	} else if (k == CK_STATE) {
		g->cs[id].io = g->nstates;
		VEC_PUSH(g->arena, g->states, g->nstates, g->capstates, id);
	}
	return id;
}

int sdfg_add_container(Sdfg *g, const char *name, Dtype dt, CKind k, int rank, const int64_t *shape)
{
	Expr *x[MAXDIM];
	DOCC_ASSERT(rank >= 0 && rank <= MAXDIM);
	for (int d = 0; d < rank; d++) x[d] = ex_int(g, shape[d]);
	return sdfg_add_container_x(g, name, dt, k, rank, x);
}

/* stride NULL means contiguous for shape; offset NULL means 0. */
int sdfg_add_view(Sdfg *g, const char *name, int base, int rank, Expr *const *shape, Expr *const *stride, Expr *offset)
{
	DOCC_ASSERT(base >= 0 && base < g->ncs);
	int root = sdfg_root_of(g, base);
	int id = sdfg_add_container_x(g, name, g->cs[root].dt, CK_VIEW, rank, shape);
	Container *c = &g->cs[id];
	c->base = root;
	if (stride)
		for (int d = 0; d < rank; d++) {
			DOCC_ASSERT(stride[d]);
			c->stride[d] = stride[d];
		}
	if (offset) c->offset = offset;
	return id;
}

Container *sdfg_c(Sdfg *g, int id)
{
	DOCC_ASSERT(id >= 0 && id < g->ncs);
	return &g->cs[id];
}

int sdfg_root_of(Sdfg *g, int c)
{
	/* Bases are never views; the bound only guards against a broken graph. */
	for (int n = 0; n < 8 && c >= 0 && c < g->ncs && g->cs[c].kind == CK_VIEW && g->cs[c].base >= 0; n++)
		c = g->cs[c].base;
	return c;
}

int64_t sdfg_numel(Sdfg *g, int id)
{
	Container *c = sdfg_c(g, id);
	int64_t n = 1, v;
	for (int d = 0; d < c->rank; d++) {
		if (!ex_isint(c->shape[d], &v)) return -1;
		DOCC_ASSERT(ck_mul(n, v, &n) == 0);   /* import bounds every tensor (DOCC_MAX_TENSOR_BYTES) */
	}
	return n;
}

Expr *sdfg_numel_x(Sdfg *g, int id)
{
	Expr *n = ex_int(g, 1);
	for (int d = 0; d < g->cs[id].rank; d++) n = ex_mul(g, n, g->cs[id].shape[d]);
	return n;
}

int sdfg_is_contiguous(Sdfg *g, int id)
{
	Container *c = sdfg_c(g, id);
	int64_t v;
	if (c->offset && !(ex_isint(c->offset, &v) && v == 0)) return 0;
	Expr *want = ex_int(g, 1);
	for (int d = c->rank - 1; d >= 0; d--) {
		int one = ex_isint(c->shape[d], &v) && v == 1;
		if (!one && !ex_eq(c->stride[d], want)) return 0;
		want = ex_mul(g, want, c->shape[d]);
	}
	return 1;
}

Expr *sdfg_flat_index(Sdfg *g, const Memlet *m)
{
	Container *c = sdfg_c(g, m->data);
	Expr *e = c->offset ? c->offset : ex_int(g, 0);
	for (int d = 0; d < c->rank; d++) e = ex_add(g, e, ex_mul(g, m->idx[d], c->stride[d]));
	return e;
}

int sdfg_lane_step(Sdfg *g, const Memlet *m, int var, int64_t *k)
{
	Container *c = sdfg_c(g, m->data);
	int uses = 0;
	for (int d = 0; d < c->rank; d++) uses |= ex_uses(m->idx[d], var);
	*k = 0;
	return !uses || ex_coeff(g, sdfg_flat_index(g, m), var, k);
}

/* ---- nodes ---------------------------------------------------------------------------- */
static Node *new_node(Sdfg *g, NodeKind k, const char *label)
{
	Node *n = arena_alloc(g->arena, sizeof *n);
	n->kind = k;
	n->id = g->nextid++;
	n->label = arena_strdup(g->arena, label ? label : "");
	n->var = -1;
	n->step = 1;
	return n;
}

Node *sdfg_seq(Sdfg *g, const char *label) { return new_node(g, N_SEQ, label); }
Node *sdfg_block(Sdfg *g, const char *label) { return new_node(g, N_BLOCK, label); }

Node *sdfg_libblock(Sdfg *g, const char *label, int op)
{
	Node *n = new_node(g, N_BLOCK, label);
	LibNode *l = arena_alloc(g->arena, sizeof *l);
	l->op = op;
	for (int i = 0; i < 8; i++) l->in[i] = -1;
	for (int i = 0; i < 4; i++) l->out[i] = -1;
	n->lib = l;
	return n;
}

Node *sdfg_loop(Sdfg *g, NodeKind k, const char *hint, Expr *lo, Expr *hi, int64_t step)
{
	DOCC_ASSERT(k == N_MAP || k == N_FOR);
	DOCC_ASSERT(lo && hi);
	/* The variable's range from the bounds' ranges: [min lo, max hi - 1]. */
	int64_t llo, lhi, hlo, hhi;
	ex_range(g, lo, &llo, &lhi);
	ex_range(g, hi, &hlo, &hhi);
	if (hhi != INT64_MAX && hhi != INT64_MIN) hhi--;
	Node *n = new_node(g, k, "");
	n->var = sdfg_add_sym(g, hint && *hint ? hint : "i", SYM_LOOP, llo, hhi);
	n->lo = lo;
	n->hi = hi;
	n->step = step;
	n->sched = SCHED_SEQ;
	n->body = sdfg_seq(g, "");
	n->body->parent = n;
	return n;
}

void sdfg_insert(Sdfg *g, Node *seq, int pos, Node *kid)
{
	DOCC_ASSERT(seq->kind == N_SEQ && kid);
	DOCC_ASSERT(pos >= 0 && pos <= seq->nkids);
	if (seq->nkids >= seq->capkids)
		arena_grow(g->arena, (void **)&seq->kids, &seq->capkids, seq->nkids + 1, sizeof *seq->kids);
	memmove(seq->kids + pos + 1, seq->kids + pos, (size_t)(seq->nkids - pos) * sizeof *seq->kids);
	seq->kids[pos] = kid;
	seq->nkids++;
	kid->parent = seq;
}

void sdfg_append(Sdfg *g, Node *seq, Node *kid) { sdfg_insert(g, seq, seq->nkids, kid); }

void sdfg_remove(Node *seq, int pos)
{
	DOCC_ASSERT(seq->kind == N_SEQ && pos >= 0 && pos < seq->nkids);
	if (seq->kids[pos] && seq->kids[pos]->parent == seq) seq->kids[pos]->parent = NULL;
	memmove(seq->kids + pos, seq->kids + pos + 1, (size_t)(seq->nkids - pos - 1) * sizeof *seq->kids);
	seq->nkids--;
}

/* ---- tasklets ----------------------------------------------------------------------- */
int sdfg_tasklet(Sdfg *g, Node *b, TCode code, Dtype dt, int nin, const Operand *in)
{
	DOCC_ASSERT(b->kind == N_BLOCK && !b->lib);
	DOCC_ASSERT(nin >= 0 && nin <= 3);
	Tasklet t;
	memset(&t, 0, sizeof t);
	t.code = code;
	t.dt = dt;
	t.nin = nin;
	for (int i = 0; i < nin; i++) t.in[i] = in[i];
	t.out.data = -1;
	t.bind = -1;
	VEC_PUSH(g->arena, b->ts, b->nts, b->capts, t);
	return b->nts - 1;
}

int sdfg_bind(Sdfg *g, Node *b, int t, const char *hint, int64_t lo, int64_t hi)
{
	DOCC_ASSERT(b->kind == N_BLOCK && t >= 0 && t < b->nts && b->ts[t].bind < 0);
	int s = sdfg_add_sym(g, hint, SYM_VALUE, lo, hi);
	b->ts[t].bind = s;
	return s;
}

static int memlet_uses_sym(const Sdfg *g, const Memlet *m, int sym)
{
	if (m->data < 0 || m->data >= g->ncs)
		return 0;
	for (int d = 0; d < g->cs[m->data].rank; d++)
		if (m->idx[d] && ex_uses(m->idx[d], sym))
			return 1;
	return 0;
}

int tasklet_uses_sym(const Sdfg *g, const Tasklet *t, int sym)
{
	for (int i = 0; i < t->nin && i < 3; i++) {
		const Operand *o = &t->in[i];
		if ((o->kind == OPD_MEM && memlet_uses_sym(g, &o->m, sym)) || (o->kind == OPD_EXPR && ex_uses(o->e, sym)))
			return 1;
	}
	return t->store && memlet_uses_sym(g, &t->out, sym);
}

int node_uses_sym(const Sdfg *g, const Node *n, int sym)
{
	switch (n->kind) {
	case N_SEQ:
		for (int i = 0; i < n->nkids; i++)
			if (node_uses_sym(g, n->kids[i], sym))
				return 1;
		return 0;
	case N_MAP:
	case N_FOR:
		return ex_uses(n->lo, sym) || ex_uses(n->hi, sym) || node_uses_sym(g, n->body, sym);
	case N_BLOCK:
		for (int i = 0; i < n->nts && !n->lib; i++)
			if (tasklet_uses_sym(g, &n->ts[i], sym))
				return 1;
		return 0;
	}
	return 0;
}

/* Marks in esc the value symbols bound in child blocks of sequences below n
 * that a later child of the same sequence uses. */
static void escapes(const Sdfg *g, const Node *n, char *esc)
{
	switch (n->kind) {
	case N_SEQ:
		for (int i = 0; i < n->nkids; i++) {
			const Node *k = n->kids[i];
			escapes(g, k, esc);
			for (int t = 0; k->kind == N_BLOCK && !k->lib && t < k->nts; t++)
				for (int j = i + 1; k->ts[t].bind >= 0 && !esc[k->ts[t].bind] && j < n->nkids; j++)
					esc[k->ts[t].bind] = (char)node_uses_sym(g, n->kids[j], k->ts[t].bind);
		}
		return;
	case N_MAP:
	case N_FOR:
		escapes(g, n->body, esc);
		return;
	case N_BLOCK:
		return;
	}
}

void sdfg_value_escapes(const Sdfg *g, char *esc)
{
	memset(esc, 0, (size_t)g->nsyms);
	if (g->root)
		escapes(g, g->root, esc);
}

void sdfg_store(Node *b, int t, Memlet out, Wcr wcr)
{
	DOCC_ASSERT(b->kind == N_BLOCK && t >= 0 && t < b->nts);
	b->ts[t].store = 1;
	b->ts[t].out = out;
	b->ts[t].wcr = wcr;
}

Operand opd_mem(int data, int rank, Expr *const *idx)
{
	Operand o;
	memset(&o, 0, sizeof o);
	o.kind = OPD_MEM;
	o.m.data = data;
	DOCC_ASSERT(rank >= 0 && rank <= MAXDIM);
	for (int d = 0; d < rank; d++) o.m.idx[d] = idx[d];
	o.val = -1;
	return o;
}

Operand opd_val(int t)
{
	Operand o;
	memset(&o, 0, sizeof o);
	o.kind = OPD_VAL;
	o.m.data = -1;
	o.val = t;
	return o;
}

Operand opd_const(double c)
{
	Operand o;
	memset(&o, 0, sizeof o);
	o.kind = OPD_CONST;
	o.m.data = -1;
	o.val = -1;
	o.c = c;
	return o;
}

/* ---- library-node attributes ------------------------------------------------------- */
/* The attribute called name, appended if new (a later set replaces). */
static Attr *attr_slot(Sdfg *g, LibNode *l, const char *name)
{
	for (int i = 0; i < l->nattrs; i++)
		if (!strcmp(l->attrs[i].name, name)) {
			const char *nm = l->attrs[i].name;
			memset(&l->attrs[i], 0, sizeof l->attrs[i]);
			l->attrs[i].name = nm;
			return &l->attrs[i];
		}
	Attr a;
	memset(&a, 0, sizeof a);
	a.name = arena_strdup(g->arena, name);
	VEC_PUSH(g->arena, l->attrs, l->nattrs, l->capattrs, a);
	return &l->attrs[l->nattrs - 1];
}

void lib_set_int(Sdfg *g, LibNode *l, const char *name, int64_t v)
{
	Attr *a = attr_slot(g, l, name);
	a->kind = A_INT;
	a->ints = arena_alloc(g->arena, sizeof *a->ints);
	a->ints[0] = v;
	a->nints = 1;
}

void lib_set_bool(Sdfg *g, LibNode *l, const char *name, int v)
{
	Attr *a = attr_slot(g, l, name);
	a->kind = A_BOOL;
	a->ints = arena_alloc(g->arena, sizeof *a->ints);
	a->ints[0] = v != 0;
	a->nints = 1;
}

void lib_set_ints(Sdfg *g, LibNode *l, const char *name, const int64_t *v, int n)
{
	Attr *a = attr_slot(g, l, name);
	a->kind = A_INTS;
	a->ints = arena_alloc(g->arena, (size_t)(n > 0 ? n : 1) * sizeof *a->ints);
	if (n > 0) memcpy(a->ints, v, (size_t)n * sizeof *a->ints);
	a->nints = n;
}

void lib_set_float(Sdfg *g, LibNode *l, const char *name, double v)
{
	Attr *a = attr_slot(g, l, name);
	a->kind = A_FLOAT;
	a->f = v;
}

void lib_set_str(Sdfg *g, LibNode *l, const char *name, const char *s)
{
	Attr *a = attr_slot(g, l, name);
	a->kind = A_STR;
	a->s = arena_strdup(g->arena, s ? s : "");
}

const Attr *lib_attr(const LibNode *l, const char *name)
{
	for (int i = 0; i < l->nattrs; i++)
		if (!strcmp(l->attrs[i].name, name)) return &l->attrs[i];
	return NULL;
}

int64_t lib_int(const LibNode *l, const char *name, int64_t dflt)
{
	const Attr *a = lib_attr(l, name);
	if (a && (a->kind == A_INT || a->kind == A_BOOL) && a->nints > 0) return a->ints[0];
	return dflt;
}

/* A_INTS (or a single A_INT): copies up to max values, returns the count. */
int lib_ints(const LibNode *l, const char *name, int64_t *out, int max)
{
	const Attr *a = lib_attr(l, name);
	if (!a || (a->kind != A_INTS && a->kind != A_INT)) return -1;
	for (int i = 0; i < a->nints && i < max; i++) out[i] = a->ints[i];
	return a->nints;
}

double lib_float(const LibNode *l, const char *name, double dflt)
{
	const Attr *a = lib_attr(l, name);
	if (a && a->kind == A_FLOAT) return a->f;
	if (a && a->kind == A_INT && a->nints > 0) return (double)a->ints[0];
	return dflt;
}

const char *lib_str(const LibNode *l, const char *name, const char *dflt)
{
	const Attr *a = lib_attr(l, name);
	return a && a->kind == A_STR ? a->s : dflt;
}

/* ---- traversal and queries ---------------------------------------------------------- */
void sdfg_walk(Sdfg *g, Node *n, NodeFn fn, void *ctx)
{
	if (!n) return;
	fn(g, n, ctx);
	if (n->kind == N_SEQ)
		for (int i = 0; i < n->nkids; i++) sdfg_walk(g, n->kids[i], fn, ctx);
	else if (n->kind == N_MAP || n->kind == N_FOR)
		sdfg_walk(g, n->body, fn, ctx);
}

static int same(Sdfg *g, int x, int root) { return x >= 0 && sdfg_root_of(g, x) == root; }

/* A store with wcr reads the old value, so it counts as a read too. */
static int touches(Sdfg *g, Node *n, int root, int wr)
{
	if (!n) return 0;
	switch (n->kind) {
	case N_SEQ:
		for (int i = 0; i < n->nkids; i++)
			if (touches(g, n->kids[i], root, wr)) return 1;
		return 0;
	case N_MAP:
	case N_FOR:
		return touches(g, n->body, root, wr);
	case N_BLOCK:
		if (n->lib) {
			if (wr) {
				for (int i = 0; i < n->lib->nout; i++)
					if (same(g, n->lib->out[i], root)) return 1;
			} else {
				for (int i = 0; i < n->lib->nin; i++)
					if (same(g, n->lib->in[i], root)) return 1;
			}
			return 0;
		}
		for (int t = 0; t < n->nts; t++) {
			const Tasklet *k = &n->ts[t];
			if (k->store && same(g, k->out.data, root) && (wr || k->wcr != W_NONE)) return 1;
			if (!wr)
				for (int i = 0; i < k->nin; i++)
					if (k->in[i].kind == OPD_MEM && same(g, k->in[i].m.data, root)) return 1;
		}
		return 0;
	}
	return 0;
}

int node_reads(Sdfg *g, Node *n, int c) { return touches(g, n, sdfg_root_of(g, c), 0); }
int node_writes(Sdfg *g, Node *n, int c) { return touches(g, n, sdfg_root_of(g, c), 1); }

/* last[root of c] = step for every container subtree n reads (as touches counts reads). */
static void mark_reads(Sdfg *g, Node *n, int step, int *last)
{
	if (!n) return;
	switch (n->kind) {
	case N_SEQ:
		for (int i = 0; i < n->nkids; i++) mark_reads(g, n->kids[i], step, last);
		return;
	case N_MAP:
	case N_FOR:
		mark_reads(g, n->body, step, last);
		return;
	case N_BLOCK:
		if (n->lib) {
			for (int i = 0; i < n->lib->nin; i++)
				if (n->lib->in[i] >= 0) last[sdfg_root_of(g, n->lib->in[i])] = step;
			return;
		}
		for (int t = 0; t < n->nts; t++) {
			const Tasklet *k = &n->ts[t];
			if (k->store && k->wcr != W_NONE) last[sdfg_root_of(g, k->out.data)] = step;
			for (int i = 0; i < k->nin; i++)
				if (k->in[i].kind == OPD_MEM) last[sdfg_root_of(g, k->in[i].m.data)] = step;
		}
		return;
	}
}

void sdfg_last_reads(Sdfg *g, int *last)
{
	for (int c = 0; c < g->ncs; c++) last[c] = -1;
	for (int i = 0; i < g->root->nkids; i++) mark_reads(g, g->root->kids[i], i, last);
}

int sdfg_step_values(Sdfg *g, int i, const int *last, int *ids, int max)
{
	Node *k = g->root->kids[i];
	int n = 0;
	for (int c = 0; c < g->ncs && n < max; c++) {
		const Container *ct = &g->cs[c];
		int seen = ct->kind == CK_OUTPUT || ct->kind == CK_STATE || (ct->kind == CK_INPUT && ct->written) ||
		           (ct->kind == CK_TRANSIENT && last[c] > i);
		if (seen && !ct->dead && ct->origin && *ct->origin && node_writes(g, k, c)) ids[n++] = c;
	}
	return n;
}
