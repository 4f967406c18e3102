/*
 * read.c - the SDFG dump (dump.c's JSON) read back into an Sdfg, so that a
 * pass can be run on a file: `doccc opt` and the IR-in/IR-out tests.
 *
 * Round trip: for every graph g, dump(read(dump(g))) is dump(g), byte for
 * byte. The reader keeps every id of the dump (containers, symbols, nodes
 * and the next node id), so that a pass run on the graph read makes the
 * same names, ids and decisions as in the pipeline; expressions are the
 * infix text of ex_print_infix, read by ex_read in canonical form
 * (structurally equal to the expression dumped, because the symbols keep
 * their ids and ranges); a float attribute is a real literal (json.c's
 * JSON_REALS tells it from an integer one). Constants keep their bytes
 * where the dump has them (the small ones, SDFG_DUMP_DATA_MAX); every
 * other constant gets a source that reports, if a pass or the weight
 * writer asks for its bytes, that the dump does not hold them.
 *
 * The text is untrusted input. Every id, rank, kind, count and reference is
 * checked where it is read and each problem is reported at its place in the
 * file, as the importer's messages are ("x.json: containers[3].shape[1]:
 * error: ..."); the reader goes on with a harmless value so that one run
 * reports every problem, and returns NULL at the end if there was any. An
 * unknown key is a problem too (a misspelt one in a hand-edited file would
 * otherwise be ignored silently). Nesting depth is bounded (READ_MAX_DEPTH, and ex_read's
 * own bounds inside expressions). Beyond that, what the passes and backends
 * rely on: names are unique C identifiers across containers and symbols; a
 * view's base is a live non-view; a local's owner is a loop; the signature
 * lists every input and output container once, at its io; planned offsets
 * lie inside the arena and slots name their containers; a tasklet's arity
 * is its code's and a value operand names an earlier tasklet; an assertion
 * names one of msgs; a collapsed map has that many perfectly nested maps.
 * Last, sdfg_verify checks the graph as after any pass.
 *
 * The library nodes' attributes are read as they are (names, kinds and
 * values); what each op needs of them is the importer's to check, and the
 * expansions trust it: expanding a library node written by hand is the
 * writer's responsibility.
 *
 * A new field of the IR goes in three places: dump.c writes it (an optional
 * key when the field has a default, as par_work), the reader's function for
 * its object reads it (its key in that function's keys list, absent giving
 * the default), and test_read.c's rich_graph sets it, so that the round
 * trip covers it.
 */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include <cJSON.h>

#include "ir.h"

enum { READ_MAX_DEPTH = 200 };

/* A name of the dump: a container (sym 0) or a symbol (sym 1). */
typedef struct {
	const char *name;
	int sym, id;
} Name;

typedef struct {
	Sdfg *g;
	const char *file;
	Buf at;             /* the place in the JSON: "containers[3].shape[1]" */
	Name *names;        /* sorted by name once containers and symbols are read */
	int nnames;
	Node **nodes;       /* every node read (ids checked, owners resolved) */
	int nnodes, capnodes;
	int depth;
} Rd;

/* ---- messages and places ------------------------------------------------------------- */
static void rd_err(Rd *r, const char *fmt, ...) PRINTF_LIKE(2, 3);
static void rd_err(Rd *r, const char *fmt, ...)
{
	char *loc = r->at.len ? arena_printf(r->g->arena, "%s: %s", r->file, r->at.s) : (char *)r->file;
	va_list ap;
	va_start(ap, fmt);
	diag_verror(loc, fmt, ap);
	va_end(ap);
}

/* Text of the input for a message (shown, never interpreted by the terminal). */
static const char *shown(Rd *r, const char *s)
{
	Buf b = {0};
	buf_escape(&b, ESC_TERM, s, strlen(s));
	char *t = arena_strdup(r->g->arena, b.s ? b.s : "");
	buf_free(&b);
	return t;
}

/* Enter key or index i of the current place; at_back(r, mark) leaves it. */
static size_t at_key(Rd *r, const char *key)
{
	size_t mark = r->at.len;
	buf_printf(&r->at, "%s%s", mark ? "." : "", key);
	return mark;
}

static size_t at_idx(Rd *r, int i)
{
	size_t mark = r->at.len;
	buf_printf(&r->at, "[%d]", i);
	return mark;
}

static void at_back(Rd *r, size_t mark)
{
	r->at.len = mark;
	if (r->at.s) r->at.s[mark] = 0;
}

/* ---- fields ---------------------------------------------------------------------------- */
/* Report every key of obj that is not in keys (NULL-terminated), and every
 * key given twice (json_get would see only the first). */
static void check_keys(Rd *r, const cJSON *obj, const char *const *keys)
{
	for (const cJSON *k = cJSON_IsObject(obj) ? obj->child : NULL; k; k = k->next) {
		int known = 0;
		for (int i = 0; keys[i] && !known; i++) known = !strcmp(keys[i], k->string);
		if (!known) rd_err(r, "unknown key '%s'", shown(r, k->string));
		for (const cJSON *e = obj->child; e != k; e = e->next)
			if (!strcmp(e->string, k->string)) {
				rd_err(r, "key '%s' given twice", shown(r, k->string));
				break;
			}
	}
}

/* obj[key], or NULL; when required, its absence is reported. */
static const cJSON *field(Rd *r, const cJSON *obj, const char *key, int required)
{
	const cJSON *j = json_get(obj, key);
	if (!j && required) rd_err(r, "missing '%s'", key);
	return j;
}

/* An integer in [lo, hi] at obj[key], or dflt (absent and not required, or
 * reported). */
static int64_t get_int(Rd *r, const cJSON *obj, const char *key, int required, int64_t lo, int64_t hi, int64_t dflt)
{
	const cJSON *j = field(r, obj, key, required);
	int64_t v;
	if (!j) return dflt;
	size_t m = at_key(r, key);
	if (json_int(j, &v) || v < lo || v > hi) {
		rd_err(r, "expected an integer from %lld to %lld", (long long)lo, (long long)hi);
		v = dflt;
	}
	at_back(r, m);
	return v;
}

static int get_bool(Rd *r, const cJSON *obj, const char *key, int required)
{
	const cJSON *j = field(r, obj, key, required);
	int b = 0;
	if (j && json_bool(j, &b)) {
		size_t m = at_key(r, key);
		rd_err(r, "expected true or false");
		at_back(r, m);
	}
	return b;
}

/* A string at j (a copy in the arena); null gives NULL when nullable. */
static const char *str_of(Rd *r, const cJSON *j, int nullable)
{
	const char *s = json_str(j);
	if (s) return arena_strdup(r->g->arena, s);
	if (!(nullable && cJSON_IsNull(j))) rd_err(r, nullable ? "expected a string or null" : "expected a string");
	return NULL;
}

static const char *get_str(Rd *r, const cJSON *obj, const char *key, int required, int nullable)
{
	const cJSON *j = field(r, obj, key, required);
	if (!j) return NULL;
	size_t m = at_key(r, key);
	const char *s = str_of(r, j, nullable);
	at_back(r, m);
	return s;
}

/* The index of obj[key] in names[0..n) (dump.c's spellings), or dflt. */
static int get_enum(Rd *r, const cJSON *obj, const char *key, const char *const *names, int n, int dflt)
{
	const cJSON *j = field(r, obj, key, 1);
	if (!j) return dflt;
	const char *s = json_str(j);
	for (int i = 0; s && i < n; i++)
		if (!strcmp(names[i], s)) return i;
	size_t m = at_key(r, key);
	Buf b = {0};
	for (int i = 0; i < n; i++) buf_printf(&b, "%s%s", i ? ", " : "", names[i]);
	rd_err(r, "expected one of %s", b.s ? b.s : "");
	buf_free(&b);
	at_back(r, m);
	return dflt;
}

static double get_double(Rd *r, const cJSON *j)
{
	double d = 0;
	if (json_float(j, &d)) rd_err(r, "expected a number (or \"Infinity\", \"-Infinity\", \"NaN\")");
	return d;
}

/* An array at obj[key] with at most max elements; its length or -1. */
static int get_array(Rd *r, const cJSON *obj, const char *key, int required, int max)
{
	const cJSON *j = field(r, obj, key, required);
	if (!j) return -1;
	if (!cJSON_IsArray(j) || json_len(j) > max) {
		size_t m = at_key(r, key);
		rd_err(r, "expected an array of at most %d elements", max);
		at_back(r, m);
		return -1;
	}
	return json_len(j);
}

/* fn(r, element, i, ctx) for every element of the array obj[key] (at most
 * max elements; when required, its absence is reported), each at its place;
 * the array's length, or -1 when there is no such array. Walks cJSON's
 * list, not json_at, which would make a long array quadratic. */
typedef void (*EachFn)(Rd *r, const cJSON *e, int i, void *ctx);
static int each(Rd *r, const cJSON *obj, const char *key, int required, int max, EachFn fn, void *ctx)
{
	int n = get_array(r, obj, key, required, max);
	size_t m = at_key(r, key);
	const cJSON *e = n > 0 ? json_get(obj, key)->child : NULL;
	for (int i = 0; e; i++, e = e->next) {
		size_t mi = at_idx(r, i);
		fn(r, e, i, ctx);
		at_back(r, mi);
	}
	at_back(r, m);
	return n;
}

/* ---- names ----------------------------------------------------------------------------- */
static int name_cmp(const void *a, const void *b)
{
	return strcmp(((const Name *)a)->name, ((const Name *)b)->name);
}

static const Name *lookup(Rd *r, const char *s)
{
	Name key = {s, 0, 0};
	return s && r->names ? bsearch(&key, r->names, (size_t)r->nnames, sizeof *r->names, name_cmp) : NULL;
}

static int find_sym(void *ctx, const char *s)
{
	const Name *n = lookup(ctx, s);
	return n && n->sym ? n->id : -1;
}

/* The container called by the string j (null when nullable: -1); -2 when
 * there is none (reported). */
static int container_ref(Rd *r, const cJSON *j, int nullable)
{
	if (nullable && cJSON_IsNull(j)) return -1;
	const char *s = json_str(j);
	const Name *n = lookup(r, s);
	if (n && !n->sym) return n->id;
	if (!s) rd_err(r, nullable ? "expected a container's name or null" : "expected a container's name");
	else rd_err(r, "no container is called '%s'", shown(r, s));
	return -2;
}

/* The symbol of kind k called by the string j, or -1 (reported). */
static int symbol_ref(Rd *r, const cJSON *j, SymKind k)
{
	const char *s = json_str(j);
	const Name *n = lookup(r, s);
	if (!s) rd_err(r, "expected a symbol's name");
	else if (!n || !n->sym) rd_err(r, "no symbol is called '%s'", shown(r, s));
	else if (r->g->syms[n->id].kind != k)
		rd_err(r, "'%s' is a %s symbol, not a %s one", shown(r, s), sym_kind_name[r->g->syms[n->id].kind], sym_kind_name[k]);
	else return n->id;
	return -1;
}

/* ---- expressions ------------------------------------------------------------------------ */
/* The expression in the string j; 0 (reported) if it does not read. */
static Expr *expr_of(Rd *r, const cJSON *j)
{
	const char *s = json_str(j), *err = NULL;
	Expr *e = s ? ex_read(r->g, s, find_sym, r, &err) : NULL;
	if (e) return e;
	if (!s) rd_err(r, "expected an expression (a string)");
	else rd_err(r, "%s", shown(r, err ? err : "bad expression"));
	return ex_int(r->g, 0);
}

static Expr *get_expr(Rd *r, const cJSON *obj, const char *key, int required)
{
	const cJSON *j = field(r, obj, key, required);
	if (!j) return required ? ex_int(r->g, 0) : NULL;
	size_t m = at_key(r, key);
	Expr *e = expr_of(r, j);
	at_back(r, m);
	return e;
}

/* Does e use a symbol of another kind than shape? (Sizes, guards and slot
 * sizes are functions of the run-time dims only.) */
static int has_nonshape(const Sdfg *g, const Expr *e)
{
	return ex_uses_kind(g, e, SYM_LOOP) || ex_uses_kind(g, e, SYM_VALUE);
}

static void expr_elem(Rd *r, const cJSON *e, int i, void *out)
{
	((Expr **)out)[i] = expr_of(r, e);
}

/* n expressions in the array obj[key], which must have exactly n (at most
 * MAXDIM). */
static void get_exprs(Rd *r, const cJSON *obj, const char *key, Expr **out, int n)
{
	Expr *tmp[MAXDIM];
	int len = each(r, obj, key, 1, MAXDIM, expr_elem, tmp);
	if (len >= 0 && len != n) {
		size_t m = at_key(r, key);
		rd_err(r, "expected an array of %d expressions", n);
		at_back(r, m);
	}
	for (int i = 0; i < n; i++) out[i] = i < len && len == n ? tmp[i] : ex_int(r->g, 0);
}

/* ---- symbols and containers ------------------------------------------------------------- */
static void read_symbol(Rd *r, const cJSON *o, int i, void *ctx)
{
	static const char *const keys[] = {"id", "name", "kind", "lo", "hi", NULL};
	Sdfg *g = r->g;
	Symbol s = {NULL, SYM_SHAPE, 0, 0};
	(void)ctx;
	if (!cJSON_IsObject(o)) rd_err(r, "expected an object");
	check_keys(r, o, keys);
	get_int(r, o, "id", 1, i, i, i);
	s.name = (char *)get_str(r, o, "name", 1, 0);
	s.kind = (SymKind)get_enum(r, o, "kind", sym_kind_name, SYM_VALUE + 1, SYM_SHAPE);
	s.lo = get_int(r, o, "lo", 1, INT64_MIN, INT64_MAX, 0);
	s.hi = get_int(r, o, "hi", 1, INT64_MIN, INT64_MAX, 0);
	if (!s.name) s.name = arena_printf(g->arena, "_bad_sym%d", i);
	VEC_PUSH(g->arena, g->syms, g->nsyms, g->capsyms, s);
}

/* A constant's bytes from hex (exactly bytes*2 digits) into the arena. */
static const void *hex_bytes(Rd *r, const char *s, int64_t bytes)
{
	if ((int64_t)strlen(s) != 2 * bytes) {
		rd_err(r, "expected %lld hex digits (the constant's %lld bytes), not %zu", (long long)(2 * bytes),
		       (long long)bytes, strlen(s));
		return NULL;
	}
	unsigned char *d = arena_alloc_aligned(r->g->arena, (size_t)(bytes ? bytes : 1), 64);
	for (int64_t i = 0; i < bytes; i++) {
		int v = 0;
		for (int k = 0; k < 2; k++) {
			char c = s[2 * i + k];
			int x = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
			if (x < 0) {
				rd_err(r, "expected lower-case hex digits, not '%s' at %lld", shown(r, (char[]){c, 0}), (long long)(2 * i + k));
				return NULL;
			}
			v = v * 16 + x;
		}
		d[i] = (unsigned char)v;
	}
	return d;
}

/* The source of a constant whose bytes the dump does not hold. */
static int missing_make(Sdfg *g, const ConstSrc *s, void *dst)
{
	(void)dst;
	const Container *c = &g->cs[*(const int *)s->ctx];
	diag_error(g->src, "the bytes of constant '%s' are not in the SDFG dump (it holds those of constants of at most %d "
	           "bytes only)", c->name, SDFG_DUMP_DATA_MAX);
	return -1;
}

/* Bytes of container c's elements when its shape is constant (checked
 * against the importer's limit), else -1. */
static int64_t const_size(Rd *r, const Container *c, int report)
{
	int64_t n = 1, v;
	for (int d = 0; d < c->rank; d++) {
		if (!ex_isint(c->shape[d], &v)) return -1;
		if (v < 0) {
			if (report) rd_err(r, "dim %d of '%s' is negative (%lld)", d, c->name, (long long)v);
			return 0;
		}
		if (ck_mul(n, v, &n) || n > DOCC_MAX_TENSOR_BYTES) n = DOCC_MAX_TENSOR_BYTES + 1;
	}
	if (ck_mul(n, dtype_info[c->dt].size, &n) || n > DOCC_MAX_TENSOR_BYTES) {
		if (report) rd_err(r, "'%s' is too large (more than %lld bytes)", c->name, (long long)DOCC_MAX_TENSOR_BYTES);
		return 0;
	}
	return n;
}

/* A constant's dequantization (ir.h, Dequant): its containers' ids are
 * checked once all containers are read (check_dequant). */
static const Dequant *read_dequant(Rd *r, const cJSON *o, int rank)
{
	static const char *const keys[] = {"q", "s", "z", "sc", "zc", "blk", NULL};
	if (!cJSON_IsObject(o)) {
		rd_err(r, "expected an object");
		return NULL;
	}
	check_keys(r, o, keys);
	Dequant *d = arena_alloc(r->g->arena, sizeof *d);
	memset(d, 0, sizeof *d);
	d->q = (int)get_int(r, o, "q", 1, 0, INT32_MAX, 0);
	d->s = (int)get_int(r, o, "s", 1, -1, INT32_MAX, -1);
	d->z = (int)get_int(r, o, "z", 1, -1, INT32_MAX, -1);
	const cJSON *j;
	size_t m = at_key(r, "sc");
	if ((j = field(r, o, "sc", 1))) d->sc = get_double(r, j);
	at_back(r, m);
	m = at_key(r, "zc");
	if ((j = field(r, o, "zc", 1))) d->zc = get_double(r, j);
	at_back(r, m);
	int n = get_array(r, o, "blk", 0, MAXDIM);
	if (n >= 0) {
		d->quant = 1;
		m = at_key(r, "blk");
		if (n != rank) rd_err(r, "%d block sizes for a constant of rank %d", n, rank);
		for (int k = 0; k < n && k < rank; k++) {
			int64_t v;
			if (json_int(cJSON_GetArrayItem(json_get(o, "blk"), k), &v) || v < 0 || v > INT32_MAX) {
				rd_err(r, "expected block sizes from 0 to %d", INT32_MAX);
				break;
			}
			d->blk[k] = v;
		}
		at_back(r, m);
	}
	return d;
}

/* Part c (q, s or z) of constant t's dequantization: a constant, or a
 * view of one, of at most t's rank whose every element index reached
 * from t's (sdfg_dequant_at: broadcast, or blocks for s and z of a quant
 * node) lies inside its storage. */
static int dequant_part_ok(Sdfg *g, const Container *t, const Dequant *d, int c, int part)
{
	if (c < 0 || c >= g->ncs)
		return 0;
	const Container *k = &g->cs[c];
	int root = k->kind == CK_VIEW ? k->base : c;
	if (root < 0 || root >= g->ncs || g->cs[root].kind != CK_CONST || k->rank > t->rank)
		return 0;
	int64_t end = 0, numel = 1, v;
	if (k->offset && (!ex_isint(k->offset, &end) || end < 0))
		return 0;
	for (int i = 0; i < k->rank; i++) {
		int od = i + t->rank - k->rank;
		int64_t n, st, tn, reach;
		if (!ex_isint(k->shape[i], &n) || !ex_isint(k->stride[i], &st) || !ex_isint(t->shape[od], &tn) || n < 1 || st < 0)
			return 0;
		if (part && d->quant)
			reach = d->blk[od] == 0 ? 1 : d->blk[od] == 1 ? tn : (tn + d->blk[od] - 1) / d->blk[od];
		else
			reach = n == 1 ? 1 : tn;
		if (reach > n || ck_mul(reach - 1, st, &v) || ck_add(end, v, &end))
			return 0;
	}
	const Container *rc = &g->cs[root];
	for (int i = 0; i < rc->rank; i++)
		if (!ex_isint(rc->shape[i], &v) || ck_mul(numel, v, &numel))
			return 0;
	return end < numel;
}

/* Every constant's dequantization names parts that fit it. */
static void check_dequants(Rd *r)
{
	Sdfg *g = r->g;
	size_t m = at_key(r, "containers");
	for (int i = 0; i < g->ncs; i++) {
		const Dequant *d = g->cs[i].dq;
		if (!d)
			continue;
		size_t mi = at_idx(r, i), md = at_key(r, "dequant");
		int nq = d->q >= 0 && d->q < g->ncs;
		if (!dequant_part_ok(g, &g->cs[i], d, d->q, 0) || (d->s >= 0 && !dequant_part_ok(g, &g->cs[i], d, d->s, 1)) ||
		    (d->z >= 0 && !dequant_part_ok(g, &g->cs[i], d, d->z, 2)) || (nq && dtype_info[g->cs[d->q].dt].isfloat))
			rd_err(r, "q, s and z are not integer, scale and zero-point constants of constant sizes that fit '%s'",
			       g->cs[i].name);
		at_back(r, md);
		at_back(r, mi);
	}
	at_back(r, m);
}

/* Container i; ctx: the bytes of the constants so far. */
static void read_container(Rd *r, const cJSON *o, int i, void *ctx)
{
	int64_t *weights = ctx;
	static const char *const keys[] = {"id", "name", "origin", "dtype", "kind", "shape", "strides", "offset", "base",
	                                   "io", "aofs", "aslot", "wofs", "owner", "dead", "data", "init", "sofs", "inplace", "written",
	                                   "dequant", NULL};
	Sdfg *g = r->g;
	Container c;
	memset(&c, 0, sizeof c);
	c.base = c.io = c.owner = -1;
	c.aofs = -1;
	if (!cJSON_IsObject(o)) {
		rd_err(r, "expected an object");
		c.name = arena_printf(g->arena, "_bad_container%d", i);
		c.origin = "";
		c.kind = CK_TRANSIENT;
		VEC_PUSH(g->arena, g->cs, g->ncs, g->capcs, c);
		return;
	}
	check_keys(r, o, keys);
	get_int(r, o, "id", 1, i, i, i);
	c.name = (char *)get_str(r, o, "name", 1, 0);
	if (!c.name) c.name = arena_printf(g->arena, "_bad_container%d", i);
	c.origin = (char *)get_str(r, o, "origin", 1, 0);
	if (!c.origin) c.origin = "";
	const char *dtn[NDTYPES];
	for (int d = 0; d < NDTYPES; d++) dtn[d] = dtype_info[d].name;
	c.dt = (Dtype)get_enum(r, o, "dtype", dtn, NDTYPES, DT_F32);
	c.kind = (CKind)get_enum(r, o, "kind", ckind_name, CK_STATE + 1, CK_TRANSIENT);
	c.rank = get_array(r, o, "shape", 1, MAXDIM);
	if (c.rank < 0) c.rank = 0;
	get_exprs(r, o, "shape", c.shape, c.rank);
	get_exprs(r, o, "strides", c.stride, c.rank);
	c.offset = get_expr(r, o, "offset", 1);
	for (int d = 0; d < c.rank; d++)
		if (has_nonshape(g, c.shape[d]) || has_nonshape(g, c.stride[d])) {
			rd_err(r, "the shape and strides of '%s' use a loop or value symbol", c.name);
			break;
		}
	c.base = (int)get_int(r, o, "base", 1, -1, INT32_MAX, -1);
	c.io = (int)get_int(r, o, "io", 1, -1, INT32_MAX, -1);
	c.aofs = get_int(r, o, "aofs", 1, -2, INT64_MAX, -1);
	c.aslot = (int)get_int(r, o, "aslot", 0, 0, INT32_MAX, 0);
	c.wofs = get_int(r, o, "wofs", 0, 0, INT64_MAX, 0);
	c.owner = (int)get_int(r, o, "owner", 1, -1, INT32_MAX, -1);
	c.dead = get_bool(r, o, "dead", 1);
	int st = c.kind == CK_STATE;
	c.init = (int)get_int(r, o, "init", st, -1, INT32_MAX, -1);
	c.sofs = get_int(r, o, "sofs", st, -1, INT64_MAX, -1);
	c.inplace = get_bool(r, o, "inplace", st);
	c.written = get_bool(r, o, "written", 0);
	if (c.written && c.kind != CK_INPUT)
		rd_err(r, "written for a container of kind %s (inputs only)", ckind_name[c.kind]);
	if (!st && (json_get(o, "init") || json_get(o, "sofs") || json_get(o, "inplace")))
		rd_err(r, "init, sofs and inplace for a container of kind %s (state only)", ckind_name[c.kind]);
	if ((c.kind == CK_INPUT || c.kind == CK_OUTPUT || st) != (c.io >= 0))
		rd_err(r, "io %d for a container of kind %s (inputs, outputs and state only have one)", c.io, ckind_name[c.kind]);
	if ((c.kind == CK_VIEW) != (c.base >= 0))
		rd_err(r, "base %d for a container of kind %s (views only have one)", c.base, ckind_name[c.kind]);
	if ((c.kind == CK_LOCAL) != (c.owner >= 0))
		rd_err(r, "owner %d for a container of kind %s (locals only have one)", c.owner, ckind_name[c.kind]);
	if (c.aofs != -1 && c.kind != CK_TRANSIENT)
		rd_err(r, "aofs %lld for a container of kind %s (transients only are placed)", (long long)c.aofs,
		       ckind_name[c.kind]);
	if ((json_get(o, "aslot") != NULL) != (c.aofs == -2)) rd_err(r, "'aslot' goes with aofs -2, and only with it");
	if (c.wofs && c.kind != CK_CONST) rd_err(r, "wofs for a container of kind %s (constants only)", ckind_name[c.kind]);
	int64_t bytes = const_size(r, &c, 1);
	const char *data = get_str(r, o, "data", 0, 0);
	size_t m = at_key(r, "data");
	if (c.kind == CK_CONST && bytes < 0) rd_err(r, "constant '%s' has a symbolic shape", c.name);
	if (data && (c.kind != CK_CONST || bytes < 0 || bytes > SDFG_DUMP_DATA_MAX))
		rd_err(r, "bytes for a container that is no constant of at most %d bytes", SDFG_DUMP_DATA_MAX);
	else if (data)
		c.data = hex_bytes(r, data, bytes);
	else if (c.kind == CK_CONST && !c.dead && bytes >= 0 && bytes <= SDFG_DUMP_DATA_MAX)
		rd_err(r, "missing: a live constant of %lld bytes has its bytes in the dump", (long long)bytes);
	at_back(r, m);
	const cJSON *dq = json_get(o, "dequant");
	if (dq) {
		m = at_key(r, "dequant");
		if (c.kind != CK_CONST) rd_err(r, "a dequantization for a container of kind %s (constants only)", ckind_name[c.kind]);
		else c.dq = read_dequant(r, dq, c.rank);
		at_back(r, m);
	}
	if (c.kind == CK_CONST && bytes > 0 && ck_add(*weights, bytes, weights)) *weights = INT64_MAX;
	VEC_PUSH(g->arena, g->cs, g->ncs, g->capcs, c);
	if (g->cs[i].kind == CK_CONST && !g->cs[i].data) {
		int *id = arena_alloc(g->arena, sizeof *id);
		*id = i;
		sdfg_const_source(g, i, missing_make, id);
	}
}

static void read_containers(Rd *r, const cJSON *top)
{
	int64_t weights = 0;
	each(r, top, "containers", 1, 1 << 30, read_container, &weights);
	size_t m = at_key(r, "containers");
	if (weights > DOCC_MAX_WEIGHT_BYTES)
		rd_err(r, "the constants take more than %lld bytes", (long long)DOCC_MAX_WEIGHT_BYTES);
	at_back(r, m);
}

/* The index for lookups of the names read so far (the symbols, then also
 * the containers); with check, every name a C identifier that generated
 * code may use, and unique across containers and symbols. */
static void index_names(Rd *r, int check)
{
	Sdfg *g = r->g;
	r->nnames = g->ncs + g->nsyms;
	r->names = arena_alloc(g->arena, sizeof *r->names * (size_t)(r->nnames + 1));
	for (int i = 0; i < g->ncs; i++) r->names[i] = (Name){g->cs[i].name, 0, i};
	for (int i = 0; i < g->nsyms; i++) r->names[g->ncs + i] = (Name){g->syms[i].name, 1, i};
	for (int i = 0; i < r->nnames && check; i++) {
		const Name *n = &r->names[i];
		const char *why = sdfg_name_problem(n->name);
		if (!why) continue;
		size_t m = at_key(r, n->sym ? "symbols" : "containers");
		size_t mi = at_idx(r, n->id);
		rd_err(r, "name '%s' %s", shown(r, n->name), why);
		at_back(r, mi);
		at_back(r, m);
	}
	qsort(r->names, (size_t)r->nnames, sizeof *r->names, name_cmp);
	for (int i = 1; i < r->nnames && check; i++)
		if (!strcmp(r->names[i].name, r->names[i - 1].name))
			rd_err(r, "'%s' names %s %d and %s %d (names are unique across containers and symbols)",
			       shown(r, r->names[i].name), r->names[i - 1].sym ? "symbol" : "container", r->names[i - 1].id,
			       r->names[i].sym ? "symbol" : "container", r->names[i].id);
}

/* ---- the signature and the graph's tables ------------------------------------------------ */
typedef struct {
	CKind k;
	int *ids;
} Sig;

static void sig_elem(Rd *r, const cJSON *e, int i, void *ctx)
{
	Sig *s = ctx;
	Sdfg *g = r->g;
	int64_t c;
	if (json_int(e, &c) || c < 0 || c >= g->ncs) {
		rd_err(r, "expected a container id from 0 to %d", g->ncs - 1);
		c = -1;
	} else if (g->cs[c].kind != s->k || g->cs[c].io != i) {
		rd_err(r, "container %lld ('%s') is not the %s of io %d", (long long)c, g->cs[c].name, ckind_name[s->k], i);
	}
	s->ids[i] = (int)c;
}

/* inputs, outputs or states: every container of kind k once, at its io. */
static void read_signature(Rd *r, const cJSON *top, const char *key, CKind k, int **arr, int *n)
{
	Sdfg *g = r->g;
	Sig s = {k, arena_alloc(g->arena, sizeof(int) * (size_t)(g->ncs + 1))};
	int len = each(r, top, key, k != CK_STATE, g->ncs, sig_elem, &s);
	*arr = s.ids;
	*n = len > 0 ? len : 0;
	size_t m = at_key(r, key);
	for (int c = 0; c < g->ncs; c++)
		if (g->cs[c].kind == k && g->cs[c].io >= *n)
			rd_err(r, "%s '%s' (io %d) is missing", ckind_name[k], g->cs[c].name, g->cs[c].io);
	at_back(r, m);
}

static void read_dim(Rd *r, const cJSON *e, int i, void *ctx)
{
	Sdfg *g = r->g;
	int s = symbol_ref(r, e, SYM_SHAPE);
	(void)i, (void)ctx;
	for (int k = 0; k < g->ndims && s >= 0; k++)
		if (g->dims[k] == s) rd_err(r, "'%s' is a run-time dim twice", g->syms[s].name);
	if (s >= 0) VEC_PUSH(g->arena, g->dims, g->ndims, g->capdims, s);
}

static void read_guard(Rd *r, const cJSON *o, int i, void *ctx)
{
	static const char *const keys[] = {"a", "op", "b", "text", "msg", NULL};
	Sdfg *g = r->g;
	Guard gd;
	(void)i, (void)ctx;
	check_keys(r, o, keys);
	gd.a = get_expr(r, o, "a", 1);
	gd.op = (GuardOp)get_enum(r, o, "op", guard_op_name, G_LE + 1, G_EQ);
	gd.b = get_expr(r, o, "b", 1);
	gd.text = get_str(r, o, "text", 1, 1);
	gd.msg = get_str(r, o, "msg", 1, 1);
	if (has_nonshape(g, gd.a) || has_nonshape(g, gd.b)) rd_err(r, "a guard uses a loop or value symbol");
	VEC_PUSH(g->arena, g->guards, g->nguards, g->capguards, gd);
}

static void read_msg(Rd *r, const cJSON *e, int i, void *ctx)
{
	Sdfg *g = r->g;
	const char *s = str_of(r, e, 1);
	(void)i, (void)ctx;
	VEC_PUSH(g->arena, g->msgs, g->nmsgs, g->capmsgs, s);
}

/* An index of ctx's slot's below list: an earlier slot, in increasing order. */
static void read_below(Rd *r, const cJSON *e, int k, void *ctx)
{
	WsSlot *w = ctx;
	int i = (int)(w - r->g->ws);
	int64_t v;
	if (json_int(e, &v) || v < 0 || v >= i || (k && v <= w->below[k - 1]))
		rd_err(r, "expected an earlier slot's index from 0 to %d, in increasing order", i - 1);
	else w->below[w->nbelow++] = (int)v;
}

/* Slot i: a transient placed at run time (aofs -2) whose aslot is i. */
static void read_slot(Rd *r, const cJSON *o, int i, void *ctx)
{
	static const char *const keys[] = {"data", "size", "below", NULL};
	Sdfg *g = r->g;
	WsSlot *w = &g->ws[i];
	(void)ctx;
	check_keys(r, o, keys);
	const cJSON *d = field(r, o, "data", 1);
	size_t md = at_key(r, "data");
	w->id = d ? container_ref(r, d, 0) : -2;
	if (w->id >= 0 && (g->cs[w->id].aofs != -2 || g->cs[w->id].aslot != i))
		rd_err(r, "'%s' is not placed in slot %d (aofs -2, aslot %d)", g->cs[w->id].name, i, i);
	if (w->id < 0) w->id = 0;
	at_back(r, md);
	w->size = get_expr(r, o, "size", 1);
	if (has_nonshape(g, w->size)) rd_err(r, "a slot's size uses a loop or value symbol");
	w->below = arena_alloc(g->arena, sizeof *w->below * (size_t)(i + 1));
	each(r, o, "below", 1, i, read_below, w);
}

/* The workspace slots, in order (each above some earlier ones only). */
static void read_ws(Rd *r, const cJSON *top)
{
	Sdfg *g = r->g;
	int n = json_len(json_get(top, "ws"));
	g->ws = arena_alloc(g->arena, sizeof *g->ws * (size_t)(n + 1));
	g->nws = each(r, top, "ws", 1, g->ncs, read_slot, NULL);
	if (g->nws < 0) g->nws = 0;
	size_t m = at_key(r, "ws");
	for (int c = 0; c < g->ncs; c++)
		if (g->cs[c].aofs == -2 && g->cs[c].aslot >= g->nws)
			rd_err(r, "'%s' is placed in slot %d of %d", g->cs[c].name, g->cs[c].aslot, g->nws);
	at_back(r, m);
}

static void read_census(Rd *r, const cJSON *top)
{
	Sdfg *g = r->g;
	const cJSON *o = field(r, top, "census", 1);
	size_t m = at_key(r, "census");
	if (o && !cJSON_IsObject(o)) rd_err(r, "expected an object");
	for (const cJSON *k = cJSON_IsObject(o) ? o->child : NULL; k; k = k->next) {
		int64_t v;
		size_t mk = at_key(r, shown(r, k->string));
		if (json_int(k, &v) || v < 0 || v > INT32_MAX) rd_err(r, "expected a count");
		at_back(r, mk);
		const char *op = arena_strdup(g->arena, k->string);
		int cnt = (int)(v < 0 || v > INT32_MAX ? 0 : v);
		if (g->ncensus == g->capcensus) {
			int cap = g->capcensus;
			arena_grow(g->arena, (void **)&g->census_ops, &cap, g->ncensus + 1, sizeof *g->census_ops);
			arena_grow(g->arena, (void **)&g->census_counts, &g->capcensus, g->ncensus + 1, sizeof *g->census_counts);
		}
		g->census_ops[g->ncensus] = op;
		g->census_counts[g->ncensus++] = cnt;
	}
	at_back(r, m);
}

/* ---- the tree ---------------------------------------------------------------------------- */
static Node *new_node(Rd *r, NodeKind k, int id, const char *label)
{
	Node *n = arena_alloc(r->g->arena, sizeof *n);
	n->kind = k;
	n->id = id;
	n->label = label ? label : "";
	n->var = -1;
	n->step = 1;
	VEC_PUSH(r->g->arena, r->nodes, r->nnodes, r->capnodes, n);
	return n;
}

/* The memlet {data, subset} of object o (a tasklet's operand or output;
 * the caller checks o's keys). */
static Memlet read_memlet(Rd *r, const cJSON *o)
{
	Sdfg *g = r->g;
	Memlet ml;
	memset(&ml, 0, sizeof ml);
	const cJSON *d = field(r, o, "data", 1);
	size_t m = at_key(r, "data");
	ml.data = d ? container_ref(r, d, 0) : -2;
	at_back(r, m);
	if (ml.data >= 0) get_exprs(r, o, "subset", ml.idx, g->cs[ml.data].rank);
	else ml.data = 0;   /* reported (so is its subset, which fits no container); harmless until the end */
	return ml;
}

static void read_param(Rd *r, const cJSON *e, int i, void *p)
{
	((double *)p)[i] = get_double(r, e);
}

/* Operand i of tasklet t, into in[i]. */
typedef struct {
	Operand *in;
	int t;
} OpdCtx;

static Operand operand_of(Rd *r, const cJSON *o, int t);

static void read_operand(Rd *r, const cJSON *o, int i, void *ctx)
{
	OpdCtx *c = ctx;
	c->in[i] = operand_of(r, o, c->t);
}

static Operand operand_of(Rd *r, const cJSON *o, int t)
{
	static const char *const memlet_keys[] = {"data", "subset", NULL};
	static const char *const mem_keys[] = {"memlet", "pad", NULL}, *const val_keys[] = {"value", NULL},
	                         *const const_keys[] = {"const", NULL}, *const expr_keys[] = {"expr", NULL};
	const cJSON *j;
	if ((j = json_get(o, "memlet"))) {
		check_keys(r, o, mem_keys);
		size_t m = at_key(r, "memlet");
		check_keys(r, j, memlet_keys);
		Memlet ml = read_memlet(r, j);
		at_back(r, m);
		Operand op = opd_mem(ml.data, MAXDIM, ml.idx);
		if ((j = json_get(o, "pad"))) {
			m = at_key(r, "pad");
			op.guard = 1;
			op.pad = get_double(r, j);
			at_back(r, m);
		}
		return op;
	}
	if ((j = json_get(o, "value"))) {
		check_keys(r, o, val_keys);
		int64_t v = 0;
		size_t m = at_key(r, "value");
		if (json_int(j, &v) || v < 0 || v >= t) {
			rd_err(r, "expected the index of an earlier tasklet of the block (0 to %d)", t - 1);
			v = 0;
		}
		at_back(r, m);
		return opd_val((int)v);
	}
	if ((j = json_get(o, "const"))) {
		check_keys(r, o, const_keys);
		size_t m = at_key(r, "const");
		Operand op = opd_const(get_double(r, j));
		at_back(r, m);
		return op;
	}
	if ((j = json_get(o, "expr"))) {
		check_keys(r, o, expr_keys);
		size_t m = at_key(r, "expr");
		Operand op = opd_expr(expr_of(r, j));
		at_back(r, m);
		return op;
	}
	rd_err(r, "expected an operand: {\"memlet\": ...}, {\"value\": ...}, {\"const\": ...} or {\"expr\": ...}");
	return opd_const(0);
}

/* The next tasklet of block b. */
static void read_tasklet(Rd *r, const cJSON *o, int t, void *blk)
{
	Node *b = blk;
	static const char *const keys[] = {"code", "dtype", "inputs", "output", "params", "bind", NULL};
	static const char *const out_keys[] = {"data", "subset", "wcr", NULL};
	Sdfg *g = r->g;
	Tasklet k;
	memset(&k, 0, sizeof k);
	k.out.data = -1;
	k.bind = -1;
	if (!cJSON_IsObject(o)) rd_err(r, "expected an object");
	check_keys(r, o, keys);
	k.code = (TCode)get_enum(r, o, "code", tcode_name, NTCODES, T_ASSIGN);
	const char *dtn[NDTYPES];
	for (int d = 0; d < NDTYPES; d++) dtn[d] = dtype_info[d].name;
	k.dt = (Dtype)get_enum(r, o, "dtype", dtn, NDTYPES, DT_F32);
	OpdCtx oc = {k.in, t};
	int nin = each(r, o, "inputs", 1, 3, read_operand, &oc);
	size_t m = at_key(r, "inputs");
	if (nin >= 0 && nin != tcode_arity(k.code))
		rd_err(r, "%s takes %d operands, not %d", tcode_name[k.code], tcode_arity(k.code), nin);
	k.nin = nin > 0 ? nin : 0;
	at_back(r, m);
	const cJSON *out = field(r, o, "output", 1);
	if (out && !cJSON_IsNull(out)) {
		m = at_key(r, "output");
		check_keys(r, out, out_keys);
		Memlet ml = read_memlet(r, out);
		k.store = 1;
		k.out = ml;
		k.wcr = (Wcr)get_enum(r, out, "wcr", wcr_name, W_PROD + 1, W_NONE);
		at_back(r, m);
	}
	int np = each(r, o, "params", 1, 2, read_param, k.p);
	m = at_key(r, "params");
	if (np >= 0 && np != 2) rd_err(r, "expected 2 parameters");
	if (k.code == T_ASSERT && !(k.p[0] >= 0 && k.p[0] < g->nmsgs && k.p[0] == (double)(int)k.p[0]))
		rd_err(r, "an assertion's first parameter indexes msgs (0 to %d)", g->nmsgs - 1);
	at_back(r, m);
	const cJSON *bind = field(r, o, "bind", 0);
	if (bind) {
		m = at_key(r, "bind");
		k.bind = symbol_ref(r, bind, SYM_VALUE);
		at_back(r, m);
	}
	VEC_PUSH(g->arena, b->ts, b->nts, b->capts, k);
}

/* A library node's input or output i: a container or null (-1). */
static void lib_ref(Rd *r, const cJSON *e, int i, void *ids)
{
	int c = container_ref(r, e, 1);
	((int *)ids)[i] = c < -1 ? -1 : c;
}

static void read_library(Rd *r, Node *b, const cJSON *o)
{
	static const char *const keys[] = {"op", "inputs", "outputs", "attrs", NULL};
	Sdfg *g = r->g;
	const char *opn[NLIBOPS];
	for (int i = 0; i < NLIBOPS; i++) opn[i] = op_name(i);
	if (!cJSON_IsObject(o)) rd_err(r, "expected an object");
	check_keys(r, o, keys);
	LibNode *l = arena_alloc(g->arena, sizeof *l);
	l->op = get_enum(r, o, "op", opn, NLIBOPS, 0);
	for (int i = 0; i < 8; i++) l->in[i] = -1;
	for (int i = 0; i < 4; i++) l->out[i] = -1;
	b->lib = l;
	l->nin = MAX(each(r, o, "inputs", 1, 8, lib_ref, l->in), 0);
	l->nout = MAX(each(r, o, "outputs", 1, 4, lib_ref, l->out), 0);
	const cJSON *attrs = field(r, o, "attrs", 1);
	size_t m = at_key(r, "attrs");
	if (attrs && !cJSON_IsObject(attrs)) rd_err(r, "expected an object");
	for (const cJSON *a = cJSON_IsObject(attrs) ? attrs->child : NULL; a; a = a->next) {
		size_t ma = at_key(r, shown(r, a->string));
		const char *name = a->string;
		int64_t v;
		double f;
		int bv;
		const cJSON *fl;
		if (!*name) rd_err(r, "an attribute without a name");
		else if (lib_attr(l, name)) rd_err(r, "attribute given twice");
		else if (json_is_real(a) && !json_float(a, &f)) lib_set_float(g, l, name, f);
		else if (!json_int(a, &v)) lib_set_int(g, l, name, v);
		else if (!json_bool(a, &bv)) lib_set_bool(g, l, name, bv);
		else if (json_str(a)) lib_set_str(g, l, name, json_str(a));
		else if (cJSON_IsObject(a) && json_len(a) == 1 && (fl = json_get(a, "float")) && !json_float(fl, &f) && json_str(fl))
			lib_set_float(g, l, name, f);
		else if (cJSON_IsArray(a)) {
			int len = json_len(a), i = 0;
			int64_t *vs = arena_alloc(g->arena, sizeof *vs * (size_t)(len > 0 ? len : 1));
			for (const cJSON *e = a->child; e; e = e->next, i++)
				if (json_int(e, &vs[i])) {
					size_t mi = at_idx(r, i);
					rd_err(r, "expected an integer");
					at_back(r, mi);
				}
			lib_set_ints(g, l, name, vs, len);
		} else
			rd_err(r, "expected an integer, a real, true or false, a string, a list of integers or {\"float\": \"NaN\"} "
			          "(or an infinity)");
		at_back(r, ma);
	}
	at_back(r, m);
}

static Node *read_node(Rd *r, const cJSON *o, Node *parent);

/* ---- GPU plans (gpu_plan pass) ------------------------------------------------------------
 * Read as dumped, each field in its range and the plan checked against
 * the node it is on: the form's kind of node, the collapsed maps or the
 * loops it names, the row's children the roles and the reduction index,
 * the accumulators (row locals, a global for a block reduction). */
typedef struct {
	GpuPlan *p;
	int n;
} Roles;

static void read_sum(Rd *r, const cJSON *e, int i, void *ctx)
{
	CoopKid *k = ctx;
	size_t m;
	if (!cJSON_IsArray(e) || json_len(e) != 2) {
		rd_err(r, "expected [container, op]");
		return;
	}
	m = at_idx(r, 0);
	int c = container_ref(r, json_at(e, 0), 0);
	at_back(r, m);
	m = at_idx(r, 1);
	const char *op = json_str(json_at(e, 1));
	int w = -1;
	for (int j = W_SUM; op && j <= W_PROD; j++)
		if (!strcmp(op, wcr_name[j])) w = j;
	if (w < 0) rd_err(r, "expected one of sum, max, min, prod");
	at_back(r, m);
	if (c >= 0 && w >= 0 && i < GPU_MAXRED) {
		k->red[k->nred] = c;
		k->op[k->nred++] = (Wcr)w;
	}
}

static void read_role(Rd *r, const cJSON *o, int i, void *ctx)
{
	static const char *const keys[] = {"role", "sums", NULL};
	Roles *rs = ctx;
	if (i >= rs->n) return;
	check_keys(r, o, keys);
	CoopKid *k = &rs->p->kids[i];
	k->role = (CoopRole)get_enum(r, o, "role", coop_role_name, ROLE_REDUCE + 1, ROLE_REDUNDANT);
	int n = each(r, o, "sums", 0, GPU_MAXRED, read_sum, k);
	if ((k->role == ROLE_REDUCE) != (n > 0)) rd_err(r, "a reduce role, and only it, lists its sums");
}

static void read_plan(Rd *r, Node *n, const cJSON *o)
{
	static const char *const keys[] = {"form", "kernel", "block", "grid", "grid_cap", "shared", "per_run", "depth",
	                                   "iterations", "mma", "tile", "threads", "r", "row_kids", "reduction", "chain",
	                                   "groups", "nx", "ny", "nb", "nk", "roles", "acc", "op", NULL};
	Sdfg *g = r->g;
	if (!cJSON_IsObject(o)) {
		rd_err(r, "expected a GPU plan (an object)");
		return;
	}
	check_keys(r, o, keys);
	GpuPlan *p = arena_alloc(g->arena, sizeof *p);
	p->acc = p->red = -1;
	p->kind = (GpuKind)get_enum(r, o, "form", gpu_kind_name, NGPUKINDS, GK_SINGLE);
	p->kernel = (int)get_int(r, o, "kernel", 1, 0, INT32_MAX, 0);
	p->block = (int)get_int(r, o, "block", 1, 1, 1024, 1);
	p->grid = get_int(r, o, "grid", 1, -1, INT64_MAX, 1);
	p->grid_cap = get_int(r, o, "grid_cap", 1, 1, INT64_MAX, 1);
	p->shared = get_int(r, o, "shared", 1, 0, 1 << 20, 0);
	p->per_run = get_int(r, o, "per_run", 1, 1, INT64_MAX, 1);
	int single = p->kind == GK_SINGLE, reduce = p->kind == GK_REDUCE;
	p->depth = (int)get_int(r, o, "depth", !single, 1, MAXDIM, 1);
	p->iters = get_expr(r, o, "iterations", !single && !reduce);
	if (single) {
		if (n->kind == N_MAP && n->sched == SCHED_GPU_THREAD) rd_err(r, "a grid (SCHED_GPU_THREAD) planned as one thread");
		n->gpu = p;
		return;
	}
	if (n->kind == N_BLOCK) {
		rd_err(r, "a block runs as one thread ('single')");
		return;
	}
	/* the loops the plan walks: the collapsed maps, or a reduction's loops */
	Node *loops[MAXDIM], *k = n;
	int depth = 0;
	while (depth < p->depth && k && (k->kind == N_MAP || k->kind == N_FOR)) {
		loops[depth++] = k;
		k = depth < p->depth && k->body->nkids == 1 ? k->body->kids[0] : NULL;
	}
	if (reduce && depth == p->depth &&
	    (loops[depth - 1]->body->nkids != 1 || loops[depth - 1]->body->kids[0]->kind != N_BLOCK))
		rd_err(r, "a block reduction's loops hold one block");
	if (depth != p->depth || (!reduce && (n->kind != N_MAP || n->sched != SCHED_GPU_THREAD || p->depth != MAX(n->collapse, 1))))
		rd_err(r, "the plan's depth %d names no %s here", p->depth, reduce ? "loop nest" : "grid of as many collapsed maps");
	Node *kids[GPU_MAXKIDS];
	int nkids = depth == p->depth ? gpu_row_kids(loops[depth - 1]->body, kids, GPU_MAXKIDS) : -1;
	switch (p->kind) {
	case GK_TILED: {
		static const int tiles[] = {16, 32, 64};
		const char *mma = get_str(r, o, "mma", 1, 0);
		p->mma = MMA_FP32;
		for (int i = 0; mma && i < NMMAS; i++)
			if (!strcmp(mma, mma_info[i].name)) p->mma = (Mma)i;
		if (mma && strcmp(mma, mma_info[p->mma].name)) rd_err(r, "'mma' is none of fp32, tf32, bf16, fp16, s8, i32");
		p->tile = (int)get_int(r, o, "tile", 1, 16, 64, 64);
		if (p->tile != tiles[0] && p->tile != tiles[1] && p->tile != tiles[2]) rd_err(r, "'tile' is 16, 32 or 64");
		p->threads = (int)get_int(r, o, "threads", 1, 128, 256, 256);
		p->r = (int)get_int(r, o, "r", 1, 1, 4, 1);
		int th, rr;
		if (!gpu_tile_shape(p->mma, p->tile, &th, &rr))
			rd_err(r, "a %s tile is 16, 32 or 64 (tensor cores: 32 or 64)", mma_info[p->mma].name);
		else if (p->threads != th || p->r != rr)
			rd_err(r, "a %s tile of %d takes %d threads and r %d", mma_info[p->mma].name, p->tile, th, rr);
		p->nkids = (int)get_int(r, o, "row_kids", 1, 1, GPU_MAXKIDS, 1);
		p->red = (int)get_int(r, o, "reduction", 1, 0, GPU_MAXKIDS - 1, 0);
		p->nchain = (int)get_int(r, o, "chain", 1, 1, MAXDIM, 1);
		if (nkids >= 0 && (p->nkids != nkids || p->red >= nkids)) rd_err(r, "the row has %d children", nkids);
		else if (nkids >= 0) {
			Node *c = kids[p->red];
			for (int i = 0; i < p->nchain && c && (c->kind == N_MAP || c->kind == N_FOR); i++)
				c = c->body->nkids == 1 ? c->body->kids[0] : NULL;
			if (!c || c->kind != N_BLOCK || c->lib || c->nts != 1 || c->ts[0].nin != 2 || !c->ts[0].store ||
			    c->ts[0].in[0].kind != OPD_MEM || c->ts[0].in[1].kind != OPD_MEM)
				rd_err(r, "the row's child %d holds no chain of %d loops around acc += X * Y", p->red, p->nchain);
			else if ((c->ts[0].dt == DT_I32) != mma_info[p->mma].integer)
				rd_err(r, "a %s tile sums %s; the row's products are %s", mma_info[p->mma].name,
				       mma_info[p->mma].integer ? "int8 products in int32" : "in float32",
				       (unsigned)c->ts[0].dt < NDTYPES ? dtype_info[c->ts[0].dt].name : "?");
		}
		int ng = get_array(r, o, "groups", 1, MAXDIM);
		const cJSON *gs = json_get(o, "groups");
		if (ng != p->depth) rd_err(r, "'groups' has one entry per collapsed map (%d)", p->depth);
		for (int i = 0; ng > 0 && i < ng; i++) {
			int64_t v;
			if (json_int(json_at(gs, i), &v) || v < 0 || v > 2) rd_err(r, "a group is 0 (batch), 1 (x) or 2 (y)");
			else p->grp[i] = (signed char)v;
		}
		p->nx = get_int(r, o, "nx", 1, 1, INT64_MAX, 1);
		p->ny = get_int(r, o, "ny", 1, 1, INT64_MAX, 1);
		p->nb = get_int(r, o, "nb", 1, 1, INT64_MAX, 1);
		p->nk = get_int(r, o, "nk", 1, 1, INT64_MAX, 1);
		break;
	}
	case GK_COOP: {
		int nr = get_array(r, o, "roles", 1, GPU_MAXKIDS);
		if (nkids >= 0 && nr != nkids) rd_err(r, "'roles' has one entry per child of the row (%d)", nkids);
		p->nkids = nr > 0 ? nr : 0;
		p->kids = arena_alloc(g->arena, sizeof *p->kids * (size_t)(p->nkids + 1));
		Roles rs = {p, p->nkids};
		each(r, o, "roles", 1, GPU_MAXKIDS, read_role, &rs);
		for (int i = 0; nkids == p->nkids && i < p->nkids; i++)
			if (p->kids[i].role != ROLE_REDUNDANT && kids[i]->kind != N_MAP && kids[i]->kind != N_FOR)
				rd_err(r, "child %d of the row is no loop, so it cannot be split or reduced", i);
		break;
	}
	case GK_REDUCE: {
		const cJSON *a = field(r, o, "acc", 1);
		size_t m = at_key(r, "acc");
		p->acc = a ? container_ref(r, a, 0) : -2;
		if (p->acc >= 0 && (g->cs[p->acc].kind == CK_LOCAL || g->cs[p->acc].kind == CK_VIEW))
			rd_err(r, "a block reduction's accumulator is a global container, no local or view");
		at_back(r, m);
		const char *op = get_str(r, o, "op", 1, 0);
		p->op = W_NONE;
		for (int j = W_SUM; op && j <= W_PROD; j++)
			if (!strcmp(op, wcr_name[j])) p->op = (Wcr)j;
		if (p->op == W_NONE) rd_err(r, "'op' is one of sum, max, min, prod");
		break;
	}
	default:
		break;
	}
	n->gpu = p;
}

/* A child of sequence seq. */
static void read_kid(Rd *r, const cJSON *e, int i, void *seq)
{
	(void)i;
	sdfg_append(r->g, seq, read_node(r, e, seq));
}

static void read_loop(Rd *r, Node *n, const cJSON *o)
{
	const cJSON *v = field(r, o, "var", 1);
	size_t m = at_key(r, "var");
	n->var = v ? symbol_ref(r, v, SYM_LOOP) : -1;
	at_back(r, m);
	n->lo = get_expr(r, o, "lo", 1);
	n->hi = get_expr(r, o, "hi", 1);
	n->step = get_int(r, o, "step", 1, 1, INT64_MAX, 1);
	n->sched = (Sched)get_enum(r, o, "schedule", sched_name, NSCHEDS, SCHED_SEQ);
	n->collapse = (int)get_int(r, o, "collapse", 1, 0, MAXDIM, 0);
	n->par_work = get_expr(r, o, "par_work", 0);
	if (n->par_work && has_nonshape(r->g, n->par_work)) rd_err(r, "'par_work' uses a loop or value symbol");
	n->par_min = get_int(r, o, "par_min", 0, 0, INT64_MAX, 0);
	const cJSON *body = field(r, o, "body", 1);
	m = at_key(r, "body");
	n->body = body ? read_node(r, body, n) : new_node(r, N_SEQ, -1, "");
	n->body->parent = n;
	if (n->body->kind != N_SEQ) rd_err(r, "a loop's body is a sequence");
	at_back(r, m);
	const cJSON *plan = json_get(o, "gpu");
	if (plan) { /* after the body: the plan names what is inside */
		m = at_key(r, "gpu");
		read_plan(r, n, plan);
		at_back(r, m);
	}
	/* collapse k: k perfectly nested maps from here (the backends walk them) */
	Node *k = n;
	for (int d = 1; d < n->collapse && k; d++)
		k = k->body && k->body->kind == N_SEQ && k->body->nkids == 1 && k->body->kids[0]->kind == N_MAP
		        ? k->body->kids[0]
		        : NULL;
	if (!k) rd_err(r, "collapse %d, but fewer maps are perfectly nested here", n->collapse);
}

static Node *read_node(Rd *r, const cJSON *o, Node *parent)
{
	static const char *const seq_keys[] = {"type", "id", "label", "tune", "flops", "children", NULL};
	static const char *const loop_keys[] = {"type", "id", "label", "tune", "flops", "var", "lo", "hi", "step", "schedule",
	                                        "collapse", "par_work", "par_min", "gpu", "body", NULL};
	static const char *const lib_keys[] = {"type", "id", "label", "tune", "flops", "library", NULL};
	static const char *const ts_keys[] = {"type", "id", "label", "tune", "flops", "gpu", "tasklets", NULL};
	Sdfg *g = r->g;
	if (!cJSON_IsObject(o)) {
		rd_err(r, "expected a node (an object)");
		return new_node(r, N_SEQ, -1, "");
	}
	if (r->depth >= READ_MAX_DEPTH) {
		rd_err(r, "nodes nested more than %d deep", READ_MAX_DEPTH);
		return new_node(r, N_SEQ, -1, "");
	}
	r->depth++;
	NodeKind k = (NodeKind)get_enum(r, o, "type", node_kind_name, N_FOR + 1, N_SEQ);
	int id = (int)get_int(r, o, "id", 1, 0, g->nextid - 1, -1);
	const char *label = get_str(r, o, "label", 1, 0);
	Node *n = new_node(r, k, id, label);
	n->parent = parent;
	const char *tune = get_str(r, o, "tune", 0, 0);
	if (tune) { /* "tm=4 tn=16", and " transfer" when the nearest step's */
		Tune *u = arena_alloc(g->arena, sizeof *u);
		size_t len = strlen(tune), tl = strlen(" transfer");
		int tr = len >= tl && !strcmp(tune + len - tl, " transfer");
		const char *why;
		size_t m = at_key(r, "tune");
		if (tune_parse(tr ? arena_strndup(g->arena, tune, len - tl) : tune, u, &why))
			rd_err(r, "'%s': %s", tune, why);
		else
			u->from = tr ? TUNE_TRANSFER : TUNE_OWN, n->tune = u;
		at_back(r, m);
	}
	const cJSON *f = json_get(o, "flops");
	if (f) {
		size_t m = at_key(r, "flops");
		double v = get_double(r, f);
		if (!(v > 0 && v < 1e30))
			rd_err(r, "expected a positive number of operations");
		else
			n->flops = v;
		at_back(r, m);
	}
	switch (k) {
	case N_SEQ:
		check_keys(r, o, seq_keys);
		each(r, o, "children", 1, 1 << 30, read_kid, n);
		break;
	case N_MAP:
	case N_FOR:
		check_keys(r, o, loop_keys);
		read_loop(r, n, o);
		break;
	case N_BLOCK: {
		const cJSON *lib = json_get(o, "library");
		check_keys(r, o, lib ? lib_keys : ts_keys);
		if (lib) {
			size_t m = at_key(r, "library");
			read_library(r, n, lib);
			at_back(r, m);
			break;
		}
		each(r, o, "tasklets", 1, 1 << 30, read_tasklet, n);
		const cJSON *plan = json_get(o, "gpu");
		if (plan) {
			size_t m = at_key(r, "gpu");
			read_plan(r, n, plan);
			at_back(r, m);
		}
		break;
	}
	}
	r->depth--;
	return n;
}

/* After the tree: node ids unique, locals owned by loops. */
static int node_id_cmp(const void *a, const void *b)
{
	int x = (*(Node *const *)a)->id, y = (*(Node *const *)b)->id;
	return (x > y) - (x < y);
}

static void check_tree(Rd *r)
{
	Sdfg *g = r->g;
	Node **byid = arena_alloc(g->arena, sizeof *byid * (size_t)(r->nnodes + 1));
	memcpy(byid, r->nodes, sizeof *byid * (size_t)r->nnodes);
	qsort(byid, (size_t)r->nnodes, sizeof *byid, node_id_cmp);
	for (int i = 1; i < r->nnodes; i++)
		if (byid[i]->id >= 0 && byid[i]->id == byid[i - 1]->id && (i < 2 || byid[i - 2]->id != byid[i]->id))
			rd_err(r, "node id %d is used by more than one node", byid[i]->id);
	size_t m = at_key(r, "containers");
	for (int c = 0; c < g->ncs; c++) {
		Container *ct = &g->cs[c];
		if (ct->kind != CK_LOCAL) continue;
		Node key = {.id = ct->owner}, *kp = &key, **hit = bsearch(&kp, byid, (size_t)r->nnodes, sizeof *byid, node_id_cmp);
		if (!hit || ((*hit)->kind != N_MAP && (*hit)->kind != N_FOR)) {
			size_t mi = at_idx(r, c);
			rd_err(r, "the owner of local '%s', node %d, is no loop", ct->name, ct->owner);
			at_back(r, mi);
		}
	}
	for (int c = 0; c < g->ncs; c++) {
		Container *ct = &g->cs[c];
		size_t mi = at_idx(r, c);
		if (ct->kind == CK_VIEW && ct->base >= 0 &&
		    (ct->base >= g->ncs || g->cs[ct->base].kind == CK_VIEW || (!ct->dead && g->cs[ct->base].dead)))
			rd_err(r, "the base of view '%s' is no live container that is not a view", ct->name);
		int64_t bytes = ct->aofs >= 0 ? const_size(r, ct, 0) : 0, end;
		if (ct->aofs >= 0 && (bytes < 0 || ck_add(ct->aofs, bytes, &end) || end > g->arena_size))
			rd_err(r, "'%s' at aofs %lld does not lie inside the arena of %lld bytes", ct->name, (long long)ct->aofs,
			       (long long)g->arena_size);
		at_back(r, mi);
	}
	at_back(r, m);
}

/* A step that cannot run on the GPU (schedule): {"node", "why"}. */
static void read_host_step(Rd *r, const cJSON *o, int i, void *ctx)
{
	static const char *const keys[] = {"node", "why", NULL};
	(void)i, (void)ctx;
	check_keys(r, o, keys);
	HostStep h = {get_str(r, o, "node", 1, 0), get_str(r, o, "why", 1, 0)};
	if (h.node && h.why)
		VEC_PUSH(r->g->arena, r->g->host_steps, r->g->nhost_steps, r->g->caphost_steps, h);
}

/* ---- the whole ---------------------------------------------------------------------------- */
static void read_top(Rd *r, const cJSON *top)
{
	static const char *const keys[] = {"sdfg_format", "name", "hash", "containers", "symbols", "inputs", "outputs",
	                                   "arena_size", "next_id", "host_steps", "specialized", "dims", "guards", "msgs",
	                                   "ws", "census", "root", "states", "state_size", NULL};
	Sdfg *g = r->g;
	check_keys(r, top, keys);
	const char *name = get_str(r, top, "name", 1, 0);
	if (name) {
		size_t m = at_key(r, "name");
		if (!c_is_ident(name)) rd_err(r, "the model's name is not a C identifier");
		else g->name = (char *)name;
		at_back(r, m);
	}
	const char *hash = get_str(r, top, "hash", 1, 0);
	if (hash) {
		size_t n = strlen(hash), m = at_key(r, "hash");
		if ((n && n != 64) || strspn(hash, "0123456789abcdef") != n) rd_err(r, "expected a sha256 (64 hex digits) or \"\"");
		else memcpy(g->hash, hash, n + 1);
		at_back(r, m);
	}
	each(r, top, "symbols", 1, 1 << 30, read_symbol, NULL);
	index_names(r, 0);
	read_containers(r, top);
	check_dequants(r);
	index_names(r, 1);
	read_signature(r, top, "inputs", CK_INPUT, &g->inputs, &g->ninputs);
	read_signature(r, top, "outputs", CK_OUTPUT, &g->outputs, &g->noutputs);
	read_signature(r, top, "states", CK_STATE, &g->states, &g->nstates);
	g->capstates = g->nstates;
	g->state_size = get_int(r, top, "state_size", 0, 0, INT64_MAX, 0);
	g->arena_size = get_int(r, top, "arena_size", 1, 0, INT64_MAX, 0);
	g->nextid = (int)get_int(r, top, "next_id", 1, 0, INT32_MAX - 1, 0);
	each(r, top, "host_steps", 1, 1 << 30, read_host_step, NULL);
	g->specialized = get_str(r, top, "specialized", 1, 1);
	each(r, top, "dims", 1, g->nsyms, read_dim, NULL);
	each(r, top, "guards", 1, 1 << 30, read_guard, NULL);
	each(r, top, "msgs", 1, 1 << 30, read_msg, NULL);
	read_ws(r, top);
	read_census(r, top);
	const cJSON *root = field(r, top, "root", 1);
	size_t m = at_key(r, "root");
	g->root = root ? read_node(r, root, NULL) : new_node(r, N_SEQ, 0, "");
	if (g->root->kind != N_SEQ) rd_err(r, "the root is a sequence");
	at_back(r, m);
	check_tree(r);
}

Sdfg *sdfg_read_json(Arena *a, const char *path, const char *text, size_t len)
{
	int errs = diag_errors();
	cJSON *top = json_parse_ex(text, len, path, JSON_REALS);
	if (!top) return NULL;
	Rd r = {0};
	r.file = path;
	r.g = sdfg_new(a, "model");
	r.g->nextid = 0;
	r.g->root = NULL;
	r.g->src = arena_strdup(a, path);
	int64_t v;
	const cJSON *fmt = json_get(top, "sdfg_format");
	if (!cJSON_IsObject(top) || !fmt)
		rd_err(&r, "not an SDFG dump of doccc (no \"sdfg_format\"; doccc --dump-sdfg DIR writes them)");
	else if (json_int(fmt, &v) || v != SDFG_FORMAT)
		rd_err(&r, "sdfg_format: this doccc reads version %d of the dump only", SDFG_FORMAT);
	else
		read_top(&r, top);
	json_free(top);
	buf_free(&r.at);
	if (diag_errors() != errs) return NULL;
	if (sdfg_verify_at(r.g, path)) return NULL;
	return r.g;
}
