/*
 * import.c - torch.export programs into the SDFG.
 *
 * Reads the serialized ExportedProgram (schema major 8) from a .pt2 archive
 * or a bare JSON file, binds weights through signature.input_specs (never by
 * guessing from names), and lowers every ATen node into library nodes,
 * views or nothing (asserts). The result is a flat root sequence of
 * library-node blocks in graph order; all later work happens on the IR.
 *
 * Node inputs are named and listed in schema order with defaulted arguments
 * omitted, so each node is bound against its op's schema from ops.h: named
 * inputs first, then schema defaults. A python scalar may stand in a Tensor
 * slot ("wrapped number"): it becomes an elementwise scalar operand.
 *
 * Problems are reported with the file and the node ("m.pt2: graph.nodes[3]
 * (node 'fft_r2c'): error: ..." plus a note with the first stack-trace
 * line), and every unsupported op and dtype of the graph is reported before
 * import fails. Outputs of a node get the shape and dtype recorded in
 * graph.tensor_values; lowerings check their own shape logic against it.
 */
#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <cJSON.h>

#include "ir.h"

/* A bound argument value. */
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
	const char *s;      /* V_STR */
} Val;

typedef struct {
	const char *name;
	int id;
} ValueEnt;

typedef struct Imp {
	Arena *a;
	Sdfg *g;
	const char *path;          /* for messages */
	cJSON *ep, *graph, *tvals;
	/* weights */
	Pt2 *zip;
	char *dir;                 /* extracted archive root ("…/"), or NULL */
	cJSON *wcfg, *ccfg;        /* weights / constants configs */
	Safetensors st;
	int have_st;
	const char *stpath;
	/* storage cache (path -> bytes) */
	struct { char *key; void *data; size_t len; } *stor;
	int nstor, capstor;
	/* value name -> container */
	ValueEnt *vals;
	int nvals, capvals;
	/* current node, for messages */
	int nodei;
	const char *nodename;
	const char *trace;
	const AtenInfo *info;
	Val args[16];
	int failed;
} Imp;

/* ---- messages ----------------------------------------------------------------- */

static char *node_loc(Imp *m)
{
	return arena_printf(m->a, "%s: graph.nodes[%d] (node '%s')", m->path, m->nodei, m->nodename);
}

static void node_error(Imp *m, const char *fmt, ...) PRINTF_LIKE(2, 3);
static void node_error(Imp *m, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	diag_verror(node_loc(m), fmt, ap);
	va_end(ap);
	if (m->trace && *m->trace)
		diag_note(node_loc(m), "from %s", m->trace);
	m->failed = 1;
}

/* First meaningful line of a stack_trace ("File "x.py", line 6, in forward"). */
static const char *first_trace_line(Imp *m, const char *st)
{
	if (!st)
		return NULL;
	while (*st == ' ' || *st == '\n')
		st++;
	const char *e = strchr(st, '\n');
	return arena_strndup(m->a, st, e ? (size_t)(e - st) : strlen(st));
}

/* ---- value map ---------------------------------------------------------------- */

static int val_lookup(Imp *m, const char *name)
{
	for (int i = m->nvals - 1; i >= 0; i--)
		if (!strcmp(m->vals[i].name, name))
			return m->vals[i].id;
	return -1;
}

static void val_bind(Imp *m, const char *name, int id)
{
	ValueEnt e = {arena_strdup(m->a, name), id};
	VEC_PUSH(m->a, m->vals, m->nvals, m->capvals, e);
}

/* ---- tensor metadata ------------------------------------------------------------ */

typedef struct {
	int dt;            /* Dtype or -1 */
	int st;            /* export ScalarType number */
	int rank;
	int64_t shape[MAXDIM];
	int64_t stride[MAXDIM];
	int64_t offset;
	int dynamic;
} Meta;

static int read_symint(const cJSON *j, int64_t *v, int *dynamic)
{
	cJSON *x;
	const char *tag = json_union_tag(j, &x);
	if (tag && !strcmp(tag, "as_int"))
		return json_int(x, v);
	if (tag && !strcmp(tag, "as_expr")) {
		*dynamic = 1;
		cJSON *h = json_get(x, "hint");
		cJSON *hv;
		const char *ht = json_union_tag(h, &hv);
		if (ht && !strcmp(ht, "as_int"))
			return json_int(hv, v);
		if (h && json_int(h, v) == 0)
			return 0;
		*v = 1;
		return 0;
	}
	return json_int(j, v); /* very old files: plain ints */
}

static int read_meta(Imp *m, const cJSON *tm, Meta *o, const char *what)
{
	memset(o, 0, sizeof *o);
	int64_t st;
	cJSON *sizes = json_get(tm, "sizes"), *strides = json_get(tm, "strides");
	if (!tm || json_int(json_get(tm, "dtype"), &st) || !cJSON_IsArray(sizes)) {
		diag_error(m->path, "tensor_values['%s']: malformed tensor metadata", what);
		return -1;
	}
	o->st = (int)st;
	o->dt = dtype_from_torch((int)st);
	o->rank = json_len(sizes);
	if (o->rank > MAXDIM) {
		diag_error(m->path, "tensor_values['%s']: rank %d exceeds doccc's limit of %d", what, o->rank, MAXDIM);
		return -1;
	}
	for (int i = 0; i < o->rank; i++) {
		if (read_symint(json_at(sizes, i), &o->shape[i], &o->dynamic)) {
			diag_error(m->path, "tensor_values['%s']: malformed size %d", what, i);
			return -1;
		}
	}
	int64_t s = 1;
	for (int i = o->rank - 1; i >= 0; i--) {
		o->stride[i] = s;
		s *= o->shape[i] ? o->shape[i] : 1;
	}
	if (cJSON_IsArray(strides) && json_len(strides) == o->rank)
		for (int i = 0; i < o->rank; i++)
			read_symint(json_at(strides, i), &o->stride[i], &o->dynamic);
	cJSON *so = json_get(tm, "storage_offset");
	if (so)
		read_symint(so, &o->offset, &o->dynamic);
	int64_t layout;
	if (json_int(json_get(tm, "layout"), &layout) == 0 && layout != 7 && layout != 0) {
		diag_error(m->path, "tensor_values['%s']: only strided tensors are supported (layout %lld)", what, (long long)layout);
		return -1;
	}
	return 0;
}

static int value_meta(Imp *m, const char *name, Meta *o)
{
	cJSON *tm = json_get(m->tvals, name);
	if (!tm) {
		diag_error(m->path, "graph.tensor_values has no entry for '%s'", name);
		return -1;
	}
	return read_meta(m, tm, o, name);
}

/* ---- weights -------------------------------------------------------------------- */

static void *storage_get(Imp *m, const char *key, const char *rel, size_t *len)
{
	for (int i = 0; i < m->nstor; i++)
		if (!strcmp(m->stor[i].key, key)) {
			*len = m->stor[i].len;
			return m->stor[i].data;
		}
	void *d = NULL;
	if (m->zip)
		d = pt2_read(m->zip, rel, len);
	else if (m->dir) {
		char *p = arena_printf(m->a, "%s%s", m->dir, rel);
		d = file_read(p, len);
	}
	if (!d)
		return NULL;
	void *copy = arena_alloc_aligned(m->a, *len ? *len : 1, 64);
	memcpy(copy, d, *len);
	free(d);
	if (m->nstor >= m->capstor)
		arena_grow(m->a, (void **)&m->stor, &m->capstor, m->nstor + 1, sizeof *m->stor);
	m->stor[m->nstor].key = arena_strdup(m->a, key);
	m->stor[m->nstor].data = copy;
	m->stor[m->nstor].len = *len;
	m->nstor++;
	return copy;
}

/* Gather a tensor (sizes/strides/offset in elements) into contiguous bytes. */
static void gather(char *dst, const char *src, int rank, const int64_t *shape, const int64_t *stride, int64_t off, int esz)
{
	int64_t idx[MAXDIM] = {0};
	int64_t n = 1;
	for (int i = 0; i < rank; i++)
		n *= shape[i];
	for (int64_t k = 0; k < n; k++) {
		int64_t e = off;
		for (int i = 0; i < rank; i++)
			e += idx[i] * stride[i];
		memcpy(dst + k * esz, src + e * esz, (size_t)esz);
		for (int i = rank - 1; i >= 0; i--) {
			if (++idx[i] < shape[i])
				break;
			idx[i] = 0;
		}
	}
}

/* Bytes for weight fqn (kind: "parameter", "buffer", "constant"), checked
 * against the graph's metadata for the placeholder. */
static const void *load_weight(Imp *m, const char *fqn, int isconst, const Meta *want, const char *placeholder)
{
	int esz = dtype_info[want->dt].size;
	int64_t numel = 1;
	for (int i = 0; i < want->rank; i++)
		numel *= want->shape[i];
	if (m->have_st) {
		const StTensor *t = st_find(&m->st, fqn);
		if (!t) {
			diag_error(m->stpath, "no tensor '%s' (needed for graph input '%s')", fqn, placeholder);
			return NULL;
		}
		int dt = dtype_from_st(t->dtype);
		int same = dt == want->dt && t->rank == want->rank;
		for (int i = 0; same && i < t->rank; i++)
			same = t->shape[i] == want->shape[i];
		if (!same) {
			diag_error(m->stpath, "tensor '%s' has dtype %s and rank %d; the graph expects %s with the shape of '%s'",
			           fqn, t->dtype, t->rank, dtype_info[want->dt].name, placeholder);
			return NULL;
		}
		return t->data;
	}
	if (!m->zip && !m->dir) {
		diag_error(m->path, "the program needs weights (first: '%s' for graph input '%s'); pass --weights FILE.safetensors "
		                    "or compile the .pt2 archive", fqn, placeholder);
		return NULL;
	}
	cJSON *cfgs[2] = {isconst ? m->ccfg : m->wcfg, isconst ? m->wcfg : m->ccfg};
	cJSON *ent = NULL;
	int which = 0;
	for (int k = 0; k < 2 && !ent; k++) {
		ent = json_get(json_get(cfgs[k], "config"), fqn);
		which = k;
	}
	int inconst = (which == 0) == !!isconst;
	if (!ent) {
		diag_error(m->path, "no weights for '%s' (graph input '%s') in data/weights or data/constants", fqn, placeholder);
		return NULL;
	}
	int usepickle = 0;
	json_bool(json_get(ent, "use_pickle"), &usepickle);
	const char *pn = json_str(json_get(ent, "path_name"));
	if (usepickle || !pn) {
		diag_error(m->path, "weight '%s' is stored as a pickle (a tensor subclass); doccc reads raw weights only", fqn);
		return NULL;
	}
	Meta meta;
	if (read_meta(m, json_get(ent, "tensor_meta"), &meta, fqn))
		return NULL;
	if (meta.dt != want->dt || meta.rank != want->rank) {
		diag_error(m->path, "weight '%s': stored dtype/rank differ from the graph's", fqn);
		return NULL;
	}
	for (int i = 0; i < meta.rank; i++)
		if (meta.shape[i] != want->shape[i]) {
			diag_error(m->path, "weight '%s': stored shape differs from the graph's", fqn);
			return NULL;
		}
	char *rel = arena_printf(m->a, "data/%s/%s", inconst ? "constants" : "weights", pn);
	size_t len;
	void *stor = storage_get(m, rel, rel, &len);
	if (!stor)
		return NULL;
	if (len == 0 && numel > 0) /* fake or empty tensor: zeros */
		return arena_alloc_aligned(m->a, (size_t)(numel * esz), 64);
	/* Bounds of the strided view inside the storage. */
	int64_t hi = meta.offset;
	for (int i = 0; i < meta.rank; i++)
		if (meta.shape[i] > 0)
			hi += (meta.shape[i] - 1) * meta.stride[i];
	if (numel > 0 && (meta.offset < 0 || (size_t)((hi + 1) * esz) > len)) {
		diag_error(m->path, "weight '%s': storage '%s' is too small (%zu bytes) for its shape and strides", fqn, pn, len);
		return NULL;
	}
	int contig = meta.offset == 0;
	int64_t s = 1;
	for (int i = meta.rank - 1; i >= 0; i--) {
		if (meta.shape[i] != 1 && meta.stride[i] != s)
			contig = 0;
		s *= meta.shape[i];
	}
	if (contig)
		return stor;
	char *dst = arena_alloc_aligned(m->a, (size_t)(numel * esz) + 1, 64);
	gather(dst, stor, meta.rank, meta.shape, meta.stride, meta.offset, esz);
	return dst;
}

/* ---- containers for values ---------------------------------------------------- */

static int check_dtype(Imp *m, const Meta *mt, const char *name)
{
	if (mt->dt >= 0)
		return 0;
	if (m->nodename)
		node_error(m, "dtype %s of value '%s' is not supported", dtype_torch_name(mt->st), name);
	else
		diag_error(m->path, "graph input '%s': dtype %s is not supported", name, dtype_torch_name(mt->st));
	m->failed = 1;
	return -1;
}

/* New container for value `name` with its recorded metadata. */
static int new_value(Imp *m, const char *name, CKind k)
{
	Meta mt;
	if (value_meta(m, name, &mt) || check_dtype(m, &mt, name))
		return -1;
	if (mt.dynamic) {
		if (m->nodename)
			node_error(m, "value '%s' has a symbolic (dynamic) shape; doccc compiles static shapes only so far: "
			              "export without dynamic_shapes", name);
		else
			diag_error(m->path, "graph input '%s' has a symbolic (dynamic) shape; doccc compiles static shapes only so far: "
			                    "export without dynamic_shapes", name);
		m->failed = 1;
		return -1;
	}
	int id = sdfg_add_container(m->g, name, mt.dt, k, mt.rank, mt.shape);
	sdfg_c(m->g, id)->origin = arena_strdup(m->a, name);
	val_bind(m, name, id);
	return id;
}

/* ---- argument binding ----------------------------------------------------------- */

static int read_ints(Imp *m, const cJSON *arr, Val *v)
{
	v->n = json_len(arr);
	v->is = arena_alloc(m->a, sizeof(int64_t) * (size_t)(v->n + 1));
	for (int i = 0; i < v->n; i++) {
		cJSON *e = json_at(arr, i);
		cJSON *x;
		const char *tag = json_union_tag(e, &x);
		if (tag && !strcmp(tag, "as_int"))
			e = x;
		else if (tag) {
			node_error(m, "symbolic integer in a size list is not supported yet");
			return -1;
		}
		if (json_int(e, &v->is[i]))
			return -1;
	}
	v->k = V_INTS;
	return 0;
}

/* Convert a serialized Argument into a Val. */
static int read_arg(Imp *m, const cJSON *arg, Val *v, const char *argname)
{
	cJSON *x;
	const char *tag = json_union_tag(arg, &x);
	memset(v, 0, sizeof *v);
	if (!tag) {
		node_error(m, "argument '%s' is malformed", argname);
		return -1;
	}
	if (!strcmp(tag, "as_none")) {
		v->k = V_NONE;
	} else if (!strcmp(tag, "as_tensor")) {
		const char *nm = json_str(json_get(x, "name"));
		v->k = V_TENSOR;
		v->t = nm ? val_lookup(m, nm) : -1;
		if (v->t < 0) {
			node_error(m, "argument '%s' refers to value '%s', which doccc did not compute", argname, nm ? nm : "?");
			return -1;
		}
	} else if (!strcmp(tag, "as_tensors") || !strcmp(tag, "as_optional_tensors")) {
		v->k = V_TENSORS;
		v->n = json_len(x);
		v->ts = arena_alloc(m->a, sizeof(int) * (size_t)(v->n + 1));
		for (int i = 0; i < v->n; i++) {
			cJSON *e = json_at(x, i), *ev;
			const char *et = json_union_tag(e, &ev);
			if (et && !strcmp(et, "as_tensor"))
				e = ev;
			else if (et && !strcmp(et, "as_none")) {
				v->ts[i] = -1;
				continue;
			}
			const char *nm = json_str(json_get(e, "name"));
			v->ts[i] = nm ? val_lookup(m, nm) : -1;
			if (v->ts[i] < 0) {
				node_error(m, "argument '%s' refers to value '%s', which doccc did not compute", argname, nm ? nm : "?");
				return -1;
			}
		}
	} else if (!strcmp(tag, "as_int") || !strcmp(tag, "as_sym_int")) {
		cJSON *y;
		const char *t2 = json_union_tag(x, &y);
		if (t2 && !strcmp(t2, "as_int"))
			x = y;
		else if (t2) {
			node_error(m, "argument '%s' is a symbolic integer; dynamic shapes are not supported yet", argname);
			return -1;
		}
		v->k = V_INT;
		if (json_int(x, &v->i))
			return -1;
	} else if (!strcmp(tag, "as_ints") || !strcmp(tag, "as_sym_ints")) {
		return read_ints(m, x, v);
	} else if (!strcmp(tag, "as_float") || !strcmp(tag, "as_sym_float")) {
		cJSON *y;
		const char *t2 = json_union_tag(x, &y);
		if (t2 && !strcmp(t2, "as_float"))
			x = y;
		v->k = V_FLOAT;
		if (json_float(x, &v->f)) {
			node_error(m, "argument '%s' is not a number", argname);
			return -1;
		}
	} else if (!strcmp(tag, "as_floats")) {
		v->k = V_FLOATS;
		v->n = json_len(x);
		v->fs = arena_alloc(m->a, sizeof(double) * (size_t)(v->n + 1));
		for (int i = 0; i < v->n; i++)
			json_float(json_at(x, i), &v->fs[i]);
	} else if (!strcmp(tag, "as_bool") || !strcmp(tag, "as_sym_bool")) {
		int b = 0;
		cJSON *y;
		const char *t2 = json_union_tag(x, &y);
		if (t2 && !strcmp(t2, "as_bool"))
			x = y;
		json_bool(x, &b);
		v->k = V_BOOL;
		v->i = b;
	} else if (!strcmp(tag, "as_string")) {
		v->k = V_STR;
		v->s = json_str(x);
	} else if (!strcmp(tag, "as_scalar_type") || !strcmp(tag, "as_memory_format") || !strcmp(tag, "as_layout")) {
		v->k = V_INT;
		json_int(x, &v->i);
	} else if (!strcmp(tag, "as_device")) {
		v->k = V_STR;
		v->s = json_str(json_get(x, "type"));
	} else {
		node_error(m, "argument '%s' has kind '%s', which doccc does not support", argname, tag);
		return -1;
	}
	return 0;
}

/* Parse a schema default ("[1, 1]", "0", "None", "True", "\"none\"", "1"). */
static void default_val(Imp *m, const SchemaArg *a, Val *v)
{
	const char *d = a->dflt;
	memset(v, 0, sizeof *v);
	if (!strcmp(d, "None")) {
		v->k = V_NONE;
	} else if (!strcmp(d, "True") || !strcmp(d, "False")) {
		v->k = V_BOOL;
		v->i = d[0] == 'T';
	} else if (d[0] == '"') {
		v->k = V_STR;
		v->s = arena_strndup(m->a, d + 1, strlen(d) - 2);
	} else if (d[0] == '[') {
		v->k = V_INTS;
		v->is = arena_alloc(m->a, sizeof(int64_t) * 8);
		for (const char *p = d + 1; *p && *p != ']';) {
			while (*p == ' ' || *p == ',')
				p++;
			if (*p == ']')
				break;
			v->is[v->n++] = strtoll(p, (char **)&p, 10);
		}
	} else if (a->type == AT_INTS) {
		/* "int[2] padding=0": the scalar repeated listlen times */
		v->k = V_INTS;
		v->n = a->listlen ? a->listlen : 1;
		v->is = arena_alloc(m->a, sizeof(int64_t) * (size_t)v->n);
		for (int i = 0; i < v->n; i++)
			v->is[i] = strtoll(d, NULL, 10);
	} else if (strchr(d, '.') || strchr(d, 'e')) {
		v->k = V_FLOAT;
		v->f = strtod(d, NULL);
	} else {
		v->k = V_INT;
		v->i = strtoll(d, NULL, 10);
		v->f = (double)v->i;
	}
}

/* Bind node inputs to schema positions, filling in defaults. */
static int bind_args(Imp *m, const cJSON *node)
{
	const AtenInfo *info = m->info;
	for (int i = 0; i < info->nargs; i++)
		memset(&m->args[i], 0, sizeof m->args[i]);
	cJSON *ins = json_get(node, "inputs");
	int pos = 0;
	for (int k = 0; k < json_len(ins); k++) {
		cJSON *na = json_at(ins, k);
		const char *nm = json_str(json_get(na, "name"));
		int at = -1;
		if (nm && *nm) {
			for (int i = 0; i < info->nargs; i++)
				if (!strcmp(info->args[i].name, nm))
					at = i;
		} else
			at = pos;
		if (at < 0 || at >= info->nargs) {
			node_error(m, "argument '%s' is not in the schema %s", nm ? nm : "?", info->schema);
			return -1;
		}
		pos = at + 1;
		if (read_arg(m, json_get(na, "arg"), &m->args[at], info->args[at].name))
			return -1;
	}
	for (int i = 0; i < info->nargs; i++) {
		if (m->args[i].k != V_ABSENT)
			continue;
		if (!info->args[i].has_default) {
			node_error(m, "required argument '%s' is missing", info->args[i].name);
			return -1;
		}
		default_val(m, &info->args[i], &m->args[i]);
	}
	/* An int list given as a single int ("int[2] padding=1" serialized as ints
	 * of length 1) is repeated to its fixed length. */
	for (int i = 0; i < info->nargs; i++) {
		Val *v = &m->args[i];
		int L = info->args[i].listlen;
		if (info->args[i].type == AT_INTS && v->k == V_INT) {
			int64_t x = v->i;
			v->k = V_INTS;
			v->n = L ? L : 1;
			v->is = arena_alloc(m->a, sizeof(int64_t) * (size_t)v->n);
			for (int j = 0; j < v->n; j++)
				v->is[j] = x;
		} else if (info->args[i].type == AT_INTS && v->k == V_INTS && L > 1 && v->n == 1) {
			int64_t x = v->is[0];
			v->is = arena_alloc(m->a, sizeof(int64_t) * (size_t)L);
			for (int j = 0; j < L; j++)
				v->is[j] = x;
			v->n = L;
		}
	}
	return 0;
}

static Val *arg(Imp *m, const char *name)
{
	for (int i = 0; i < m->info->nargs; i++)
		if (!strcmp(m->info->args[i].name, name))
			return &m->args[i];
	diag_internal(__FILE__, __LINE__, "op %s has no argument '%s'", m->info->target, name);
}

static int arg_tensor(Imp *m, const char *name)
{
	Val *v = arg(m, name);
	return v->k == V_TENSOR ? v->t : -1;
}

static double arg_num(Imp *m, const char *name, double dflt)
{
	Val *v = arg(m, name);
	if (v->k == V_FLOAT)
		return v->f;
	if (v->k == V_INT || v->k == V_BOOL)
		return (double)v->i;
	return dflt;
}

static int64_t arg_int(Imp *m, const char *name, int64_t dflt)
{
	Val *v = arg(m, name);
	if (v->k == V_INT || v->k == V_BOOL)
		return v->i;
	return dflt;
}

/* ---- lowering helpers ----------------------------------------------------------- */

static Container *C(Imp *m, int id)
{
	return sdfg_c(m->g, id);
}

static int64_t cdim(Imp *m, int id, int d)
{
	int64_t v = 0;
	ex_isint(C(m, id)->shape[d], &v);
	return v;
}

static LibNode *add_lib(Imp *m, int op)
{
	Node *b = sdfg_libblock(m->g, m->nodename, op);
	sdfg_append(m->g, m->g->root, b);
	return b->lib;
}

/* Output k of the current node: a new transient with the recorded metadata;
 * -1 (and bound to nothing) for an as_none output. */
static const char *out_name(const cJSON *node, int k)
{
	cJSON *o = json_at(json_get(node, "outputs"), k), *x;
	const char *tag = json_union_tag(o, &x);
	if (!tag || strcmp(tag, "as_tensor"))
		return NULL;
	return json_str(json_get(x, "name"));
}

static int new_out(Imp *m, const cJSON *node, int k)
{
	const char *nm = out_name(node, k);
	if (!nm)
		return -1;
	return new_value(m, nm, CK_TRANSIENT);
}

static int norm_dim(Imp *m, int64_t d, int rank)
{
	if (d < 0)
		d += rank;
	if (d < 0 || d >= (rank ? rank : 1)) {
		node_error(m, "dimension %lld out of range for rank %d", (long long)d, rank);
		return -1;
	}
	return (int)d;
}

/* A view of container src with explicit shape/strides/offset (root units). */
static int make_view(Imp *m, const char *name, int src, int rank, const int64_t *shape, Expr **stride, Expr *offset)
{
	Expr *sh[MAXDIM];
	for (int i = 0; i < rank; i++)
		sh[i] = ex_int(m->g, shape[i]);
	int id = sdfg_add_view(m->g, name, src, rank, sh, stride, offset);
	C(m, id)->origin = arena_strdup(m->a, name);
	val_bind(m, name, id);
	return id;
}

/* A contiguous copy of src (materializes a view). */
static int copy_contig(Imp *m, int src, const char *name)
{
	Container *s = C(m, src);
	Expr *shape[MAXDIM];
	for (int i = 0; i < s->rank; i++)
		shape[i] = s->shape[i];
	int id = sdfg_add_container_x(m->g, name, s->dt, CK_TRANSIENT, s->rank, shape);
	C(m, id)->origin = "";
	LibNode *l = add_lib(m, LIB_ELEMWISE);
	l->in[0] = src;
	l->nin = 1;
	l->out[0] = id;
	l->nout = 1;
	lib_set_int(m->g, l, "code", T_ASSIGN);
	return id;
}

/* Strides for reshaping container c to shape[rank] without a copy, as
 * torch's computeStride does; 0 if impossible. */
static int reshape_strides(Imp *m, int c, int rank, const int64_t *shape, Expr **out)
{
	Container *s = C(m, c);
	int64_t os[MAXDIM], ost[MAXDIM];
	for (int i = 0; i < s->rank; i++) {
		if (!ex_isint(s->shape[i], &os[i]) || !ex_isint(s->stride[i], &ost[i]))
			return 0;
	}
	int64_t numel = 1;
	for (int i = 0; i < s->rank; i++)
		numel *= os[i];
	int64_t ns[MAXDIM];
	if (numel == 0) {
		for (int i = 0; i < rank; i++)
			out[i] = ex_int(m->g, 0);
		return 1;
	}
	int view_d = rank - 1;
	int64_t chunk_base_stride = s->rank ? ost[s->rank - 1] : 1;
	int64_t tensor_numel = 1, view_numel = 1;
	for (int tensor_d = s->rank - 1; tensor_d >= 0; tensor_d--) {
		tensor_numel *= os[tensor_d];
		if (tensor_d == 0 || (os[tensor_d - 1] != 1 && ost[tensor_d - 1] != tensor_numel * chunk_base_stride)) {
			while (view_d >= 0 && (view_numel < tensor_numel || shape[view_d] == 1)) {
				ns[view_d] = view_numel * chunk_base_stride;
				view_numel *= shape[view_d];
				view_d--;
			}
			if (view_numel != tensor_numel)
				return 0;
			if (tensor_d > 0) {
				chunk_base_stride = ost[tensor_d - 1];
				tensor_numel = 1;
				view_numel = 1;
			}
		}
	}
	if (view_d != -1)
		return 0;
	for (int i = 0; i < rank; i++)
		out[i] = ex_int(m->g, ns[i]);
	return 1;
}

/* Is value `name` read by any node or returned? (Tensor arguments only.) */
static int arg_mentions(const cJSON *arg, const char *name)
{
	if (!arg)
		return 0;
	if (cJSON_IsString(arg))
		return 0;
	if (cJSON_IsObject(arg)) {
		const char *nm = json_str(json_get(arg, "name"));
		if (nm && !strcmp(nm, name))
			return 1;
	}
	for (cJSON *c = arg->child; c; c = c->next)
		if (arg_mentions(c, name))
			return 1;
	return 0;
}

static int value_used(Imp *m, const char *name)
{
	cJSON *nodes = json_get(m->graph, "nodes");
	for (int k = 0; k < json_len(nodes); k++) {
		cJSON *ins = json_get(json_at(nodes, k), "inputs");
		for (int i = 0; i < json_len(ins); i++)
			if (arg_mentions(json_get(json_at(ins, i), "arg"), name))
				return 1;
	}
	return arg_mentions(json_get(m->graph, "outputs"), name);
}

/* ---- lowerings ------------------------------------------------------------------- */

typedef int (*LowerFn)(Imp *m, const cJSON *node);

static int lower_view(Imp *m, const cJSON *node)
{
	int x = arg_tensor(m, "self");
	const char *on = out_name(node, 0);
	Meta mt;
	if (x < 0 || !on || value_meta(m, on, &mt))
		return -1;
	Container *s = C(m, x);
	Expr *st[MAXDIM];
	Expr *off = s->offset;
	int r = s->rank;
	switch (m->info->param) {
	case VW_ALIAS:
		for (int i = 0; i < r; i++)
			st[i] = s->stride[i];
		break;
	case VW_T:
	case VW_TRANSPOSE:
	case VW_PERMUTE: {
		int perm[MAXDIM];
		for (int i = 0; i < r; i++)
			perm[i] = i;
		if (m->info->param == VW_T) {
			if (r == 2) {
				perm[0] = 1;
				perm[1] = 0;
			}
		} else if (m->info->param == VW_TRANSPOSE) {
			int a = norm_dim(m, arg_int(m, "dim0", 0), r), b = norm_dim(m, arg_int(m, "dim1", 0), r);
			if (a < 0 || b < 0)
				return -1;
			perm[a] = b;
			perm[b] = a;
		} else {
			Val *d = arg(m, "dims");
			if (d->n != r) {
				node_error(m, "permute: %d dims for a rank-%d tensor", d->n, r);
				return -1;
			}
			for (int i = 0; i < r; i++)
				if ((perm[i] = norm_dim(m, d->is[i], r)) < 0)
					return -1;
		}
		for (int i = 0; i < r; i++)
			st[i] = s->stride[perm[i]];
		break;
	}
	case VW_EXPAND: {
		int lead = mt.rank - r;
		for (int i = 0; i < mt.rank; i++) {
			int j = i - lead;
			if (j < 0)
				st[i] = ex_int(m->g, 0);
			else if (cdim(m, x, j) == mt.shape[i])
				st[i] = s->stride[j];
			else
				st[i] = ex_int(m->g, 0);
		}
		break;
	}
	case VW_UNSQUEEZE:
	case VW_SQUEEZE: {
		/* Keep strides of the dims that remain; size-1 dims get stride 0. */
		int j = 0;
		for (int i = 0; i < mt.rank; i++) {
			while (j < r && cdim(m, x, j) == 1 && mt.shape[i] != 1)
				j++;
			if (j < r && cdim(m, x, j) == mt.shape[i] && (mt.shape[i] != 1 || m->info->param == VW_SQUEEZE || 1)) {
				if (mt.shape[i] == 1 && m->info->param == VW_UNSQUEEZE) {
					st[i] = ex_int(m->g, 0);
					/* the size-1 input dim may also match; consume it only
					 * if counts require (rank grows by one) */
					if (mt.rank - i <= r - j)
						j++;
				} else
					st[i] = s->stride[j++];
			} else
				st[i] = ex_int(m->g, 0);
		}
		break;
	}
	case VW_SELECT: {
		int d = norm_dim(m, arg_int(m, "dim", 0), r);
		if (d < 0)
			return -1;
		int64_t idx = arg_int(m, "index", 0), n = cdim(m, x, d);
		if (idx < 0)
			idx += n;
		if (idx < 0 || idx >= n) {
			node_error(m, "select: index %lld out of range for size %lld", (long long)idx, (long long)n);
			return -1;
		}
		off = ex_add(m->g, off, ex_muli(m->g, s->stride[d], idx));
		for (int i = 0, k = 0; i < r; i++)
			if (i != d)
				st[k++] = s->stride[i];
		break;
	}
	case VW_SLICE: {
		int d = norm_dim(m, arg_int(m, "dim", 0), r);
		if (d < 0)
			return -1;
		int64_t n = cdim(m, x, d), step = arg_int(m, "step", 1);
		Val *sv = arg(m, "start"), *ev = arg(m, "end");
		int64_t start = sv->k == V_INT ? sv->i : 0, end = ev->k == V_INT ? ev->i : n;
		if (step <= 0) {
			node_error(m, "slice: step must be positive (got %lld)", (long long)step);
			return -1;
		}
		if (start < 0)
			start += n;
		if (end < 0)
			end += n;
		start = start < 0 ? 0 : start > n ? n : start;
		end = end < start ? start : end > n ? n : end;
		off = ex_add(m->g, off, ex_muli(m->g, s->stride[d], start));
		for (int i = 0; i < r; i++)
			st[i] = i == d ? ex_muli(m->g, s->stride[i], step) : s->stride[i];
		break;
	}
	case VW_RESHAPE:
	case VW_FLATTEN:
	case VW_UNFLATTEN:
		if (!reshape_strides(m, x, mt.rank, mt.shape, st)) {
			x = copy_contig(m, x, arena_printf(m->a, "%s_contig", on));
			s = C(m, x);
			off = s->offset;
			reshape_strides(m, x, mt.rank, mt.shape, st);
		}
		break;
	}
	make_view(m, on, x, mt.rank, mt.shape, st, off);
	return 0;
}

static int lower_noop(Imp *m, const cJSON *node)
{
	(void)node;
	int x = arg_tensor(m, "a");
	Val *dt = arg(m, "dtype");
	if (x >= 0 && dt->k == V_INT) {
		int want = dtype_from_torch((int)dt->i);
		if (want != (int)C(m, x)->dt) {
			node_error(m, "_assert_tensor_metadata: value has dtype %s, the graph asserts %s",
			           dtype_info[C(m, x)->dt].name, dtype_torch_name((int)dt->i));
			return -1;
		}
	}
	return 0;
}

static int lower_dropout(Imp *m, const cJSON *node)
{
	if (arg_int(m, "train", 0)) {
		node_error(m, "dropout in training mode; doccc compiles inference only (call model.eval() before export)");
		return -1;
	}
	const char *on = out_name(node, 0);
	int x = arg_tensor(m, "input");
	if (!on || x < 0)
		return -1;
	Container *s = C(m, x);
	Meta mt;
	if (value_meta(m, on, &mt))
		return -1;
	Expr *st[MAXDIM];
	for (int i = 0; i < s->rank; i++)
		st[i] = s->stride[i];
	make_view(m, on, x, mt.rank, mt.shape, st, s->offset);
	return 0;
}

/* Elementwise: inputs are tensors or scalars ("scalarK" attrs). */
static int elemwise(Imp *m, const cJSON *node, TCode code, int n, Val *const *ops)
{
	int out = new_out(m, node, 0);
	if (out < 0)
		return -1;
	LibNode *l = add_lib(m, LIB_ELEMWISE);
	l->nin = n;
	for (int i = 0; i < n; i++) {
		Val *v = ops[i];
		if (v->k == V_TENSOR)
			l->in[i] = v->t;
		else if (v->k == V_INT || v->k == V_FLOAT || v->k == V_BOOL) {
			l->in[i] = -1;
			lib_set_float(m->g, l, arena_printf(m->a, "scalar%d", i), v->k == V_FLOAT ? v->f : (double)v->i);
		} else {
			node_error(m, "operand %d of kind %d is not supported", i, v->k);
			return -1;
		}
	}
	l->out[0] = out;
	l->nout = 1;
	lib_set_int(m->g, l, "code", code);
	return 0;
}

static int lower_unary(Imp *m, const cJSON *node)
{
	Val *x = &m->args[0];
	TCode code = (TCode)m->info->param;
	if (code == T_GELU) {
		const char *ap = arg(m, "approximate")->s;
		if (ap && !strcmp(ap, "tanh"))
			code = T_GELU_TANH;
		else if (ap && strcmp(ap, "none")) {
			node_error(m, "gelu: unknown approximation '%s'", ap);
			return -1;
		}
	}
	return elemwise(m, node, code, 1, &x);
}

static int lower_clamp(Imp *m, const cJSON *node)
{
	double lo = -INFINITY, hi = INFINITY;
	switch (m->info->param) {
	case 0: lo = arg_num(m, "min_val", -1); hi = arg_num(m, "max_val", 1); break;
	case 1: lo = 0; hi = 6; break;
	case 2: lo = arg_num(m, "min", -INFINITY); hi = arg_num(m, "max", INFINITY); break;
	case 3: lo = arg_num(m, "min", -INFINITY); break;
	case 4: hi = arg_num(m, "max", INFINITY); break;
	}
	Val *x = &m->args[0];
	if (elemwise(m, node, T_CLAMP, 1, &x))
		return -1;
	LibNode *l = m->g->root->kids[m->g->root->nkids - 1]->lib;
	lib_set_float(m->g, l, "lo", lo);
	lib_set_float(m->g, l, "hi", hi);
	return 0;
}

static int lower_binary(Imp *m, const cJSON *node)
{
	Val *a = &m->args[0], *b = &m->args[1];
	double alpha = 1;
	for (int i = 0; i < m->info->nargs; i++)
		if (!strcmp(m->info->args[i].name, "alpha"))
			alpha = arg_num(m, "alpha", 1);
	int rsub = !strcmp(m->info->target, "rsub.Scalar");
	Val *ops[2] = {rsub ? b : a, rsub ? a : b};
	if (elemwise(m, node, (TCode)m->info->param, 2, ops))
		return -1;
	LibNode *l = m->g->root->kids[m->g->root->nkids - 1]->lib;
	if (alpha != 1) {
		if (rsub)
			lib_set_float(m->g, l, "alpha", alpha);   /* other - alpha*self: scales operand 1 */
		else
			lib_set_float(m->g, l, "alpha", alpha);
	}
	return 0;
}

static int lower_cast(Imp *m, const cJSON *node)
{
	int x = arg_tensor(m, "self");
	const char *on = out_name(node, 0);
	Meta mt;
	if (x < 0 || !on || value_meta(m, on, &mt) || check_dtype(m, &mt, on))
		return -1;
	if (mt.dt == (int)C(m, x)->dt) {
		Container *s = C(m, x);
		Expr *st[MAXDIM];
		for (int i = 0; i < s->rank; i++)
			st[i] = s->stride[i];
		make_view(m, on, x, mt.rank, mt.shape, st, s->offset);
		return 0;
	}
	Val *v = &m->args[0];
	return elemwise(m, node, T_CAST, 1, &v);
}

static int lower_conv(Imp *m, const cJSON *node)
{
	int x = arg_tensor(m, "input"), w = arg_tensor(m, "weight"), b = arg_tensor(m, "bias");
	if (x < 0 || w < 0)
		return -1;
	if (m->info->param == 1 && arg_int(m, "transposed", 0)) {
		node_error(m, "transposed convolution is not supported yet");
		return -1;
	}
	int nd = C(m, x)->rank - 2;
	if (nd < 1 || nd > 3 || C(m, w)->rank != nd + 2) {
		node_error(m, "convolution of a rank-%d input is not supported (batched 1-d, 2-d or 3-d inputs only)", C(m, x)->rank);
		return -1;
	}
	Val *st = arg(m, "stride"), *pd = arg(m, "padding"), *dl = arg(m, "dilation");
	int64_t s[3], p[3], d[3];
	for (int i = 0; i < nd; i++) {
		s[i] = st->n > i ? st->is[i] : st->n ? st->is[0] : 1;
		p[i] = pd->n > i ? pd->is[i] : pd->n ? pd->is[0] : 0;
		d[i] = dl->n > i ? dl->is[i] : dl->n ? dl->is[0] : 1;
	}
	int out = new_out(m, node, 0);
	if (out < 0)
		return -1;
	LibNode *l = add_lib(m, LIB_CONV);
	l->in[0] = x;
	l->in[1] = w;
	l->in[2] = b;
	l->nin = 3;
	l->out[0] = out;
	l->nout = 1;
	lib_set_ints(m->g, l, "stride", s, nd);
	lib_set_ints(m->g, l, "padding", p, nd);
	lib_set_ints(m->g, l, "dilation", d, nd);
	lib_set_int(m->g, l, "groups", arg_int(m, "groups", 1));
	return 0;
}

/* Rank-2+ operand for a matrix product: 1-d vectors become [1,K] or [K,1]. */
static int mat_operand(Imp *m, int c, int isleft)
{
	Container *s = C(m, c);
	if (s->rank >= 2)
		return c;
	int64_t shape[2];
	Expr *st[2];
	if (isleft) {
		shape[0] = 1, shape[1] = cdim(m, c, 0);
		st[0] = ex_int(m->g, 0), st[1] = s->stride[0];
	} else {
		shape[0] = cdim(m, c, 0), shape[1] = 1;
		st[0] = s->stride[0], st[1] = ex_int(m->g, 0);
	}
	Expr *sh[2] = {ex_int(m->g, shape[0]), ex_int(m->g, shape[1])};
	int id = sdfg_add_view(m->g, arena_printf(m->a, "%s_mat", s->name), c, 2, sh, st, s->offset);
	C(m, id)->origin = "";
	return id;
}

/* GEMM whose result has the output's shape with the 1-d dims restored. */
static int gemm(Imp *m, const cJSON *node, int a, int b, int bias, double alpha, double beta)
{
	const char *on = out_name(node, 0);
	Meta mt;
	if (!on || value_meta(m, on, &mt) || check_dtype(m, &mt, on))
		return -1;
	int ra = C(m, a)->rank, rb = C(m, b)->rank;
	a = mat_operand(m, a, 1);
	b = mat_operand(m, b, 0);
	int out;
	if (ra >= 2 && rb >= 2) {
		out = new_out(m, node, 0);
	} else {
		/* Compute into [.., M, N] with the missing dim as 1, then view. */
		int r = MAX(C(m, a)->rank, C(m, b)->rank);
		int64_t full[MAXDIM];
		int nb = r - 2;
		for (int i = 0; i < nb; i++)
			full[i] = mt.shape[i];
		full[nb] = ra == 1 ? 1 : cdim(m, a, C(m, a)->rank - 2);
		full[nb + 1] = rb == 1 ? 1 : cdim(m, b, C(m, b)->rank - 1);
		int id = sdfg_add_container(m->g, arena_printf(m->a, "%s_mm", on), (Dtype)mt.dt, CK_TRANSIENT, r, full);
		C(m, id)->origin = "";
		LibNode *l = add_lib(m, LIB_GEMM);
		l->in[0] = a, l->in[1] = b, l->in[2] = bias, l->nin = 3;
		l->out[0] = id, l->nout = 1;
		lib_set_float(m->g, l, "alpha", alpha);
		lib_set_float(m->g, l, "beta", beta);
		Expr *st[MAXDIM];
		Expr *sh[MAXDIM];
		for (int i = 0; i < mt.rank; i++)
			sh[i] = ex_int(m->g, mt.shape[i]);
		reshape_strides(m, id, mt.rank, mt.shape, st);
		int v = sdfg_add_view(m->g, on, id, mt.rank, sh, st, ex_int(m->g, 0));
		C(m, v)->origin = arena_strdup(m->a, on);
		val_bind(m, on, v);
		return 0;
	}
	if (out < 0)
		return -1;
	LibNode *l = add_lib(m, LIB_GEMM);
	l->in[0] = a, l->in[1] = b, l->in[2] = bias, l->nin = 3;
	l->out[0] = out, l->nout = 1;
	lib_set_float(m->g, l, "alpha", alpha);
	lib_set_float(m->g, l, "beta", beta);
	return 0;
}

static int lower_gemm(Imp *m, const cJSON *node)
{
	if (m->info->param == 1) {
		int bias = arg_tensor(m, "self"), a = arg_tensor(m, "mat1"), b = arg_tensor(m, "mat2");
		if (a < 0 || b < 0 || bias < 0)
			return -1;
		return gemm(m, node, a, b, bias, arg_num(m, "alpha", 1), arg_num(m, "beta", 1));
	}
	int a = arg_tensor(m, "self"), b = m->info->param == 2 ? arg_tensor(m, "other") : arg_tensor(m, "mat2");
	if (a < 0 || b < 0)
		return -1;
	return gemm(m, node, a, b, -1, 1, 0);
}

static int lower_linear(Imp *m, const cJSON *node)
{
	int x = arg_tensor(m, "input"), w = arg_tensor(m, "weight"), b = arg_tensor(m, "bias");
	if (x < 0 || w < 0)
		return -1;
	Container *ws = C(m, w);
	if (ws->rank != 2) {
		node_error(m, "linear: weight of rank %d (expected 2)", ws->rank);
		return -1;
	}
	/* weight^T as a view: [K, N] */
	Expr *sh[2] = {ws->shape[1], ws->shape[0]}, *st[2] = {ws->stride[1], ws->stride[0]};
	int wt = sdfg_add_view(m->g, arena_printf(m->a, "%s_t", ws->name), w, 2, sh, st, ws->offset);
	C(m, wt)->origin = "";
	return gemm(m, node, x, wt, b, 1, b >= 0 ? 1 : 0);
}

static int lower_batchnorm(Imp *m, const cJSON *node)
{
	if (m->info->param == 0 && arg_int(m, "training", 0)) {
		node_error(m, "batch_norm in training mode; doccc compiles inference only (call model.eval() before export)");
		return -1;
	}
	int x = arg_tensor(m, "input"), w = arg_tensor(m, "weight"), b = arg_tensor(m, "bias");
	int rm = arg_tensor(m, "running_mean"), rv = arg_tensor(m, "running_var");
	if (x < 0 || rm < 0 || rv < 0) {
		node_error(m, "batch_norm without running statistics is not supported");
		return -1;
	}
	int out = new_out(m, node, 0);
	if (out < 0)
		return -1;
	LibNode *l = add_lib(m, LIB_BATCHNORM);
	l->in[0] = x, l->in[1] = w, l->in[2] = b, l->in[3] = rm, l->in[4] = rv, l->nin = 5;
	l->out[0] = out, l->nout = 1;
	lib_set_float(m->g, l, "eps", arg_num(m, "eps", 1e-5));
	return 0;
}

static int lower_pool(Imp *m, const cJSON *node)
{
	int x = arg_tensor(m, "self");
	if (x < 0)
		return -1;
	if (C(m, x)->rank != 4 && C(m, x)->rank != 3) {
		node_error(m, "2-d pooling of a rank-%d tensor is not supported", C(m, x)->rank);
		return -1;
	}
	if (m->info->param == PL_MAX && m->info->nrets == 2) {
		const char *idx = out_name(node, 1);
		if (idx && value_used(m, idx)) {
			node_error(m, "the indices output of max_pool2d_with_indices is used; doccc computes only the values");
			return -1;
		}
	}
	int out = new_out(m, node, 0);
	if (out < 0)
		return -1;
	LibNode *l = add_lib(m, LIB_POOL);
	l->in[0] = x, l->nin = 1;
	l->out[0] = out, l->nout = 1;
	lib_set_int(m->g, l, "mode", m->info->param);
	if (m->info->param == PL_ADAPTIVE)
		return 0;
	Val *k = arg(m, "kernel_size"), *s = arg(m, "stride"), *p = arg(m, "padding");
	int64_t kk[2] = {k->is[0], k->n > 1 ? k->is[1] : k->is[0]};
	int64_t ss[2] = {kk[0], kk[1]}, pp[2] = {0, 0}, dd[2] = {1, 1};
	if (s->k == V_INTS && s->n > 0)
		ss[0] = s->is[0], ss[1] = s->n > 1 ? s->is[1] : s->is[0];
	if (p->k == V_INTS && p->n > 0)
		pp[0] = p->is[0], pp[1] = p->n > 1 ? p->is[1] : p->is[0];
	if (m->info->param == PL_MAX) {
		Val *d = arg(m, "dilation");
		if (d->k == V_INTS && d->n > 0)
			dd[0] = d->is[0], dd[1] = d->n > 1 ? d->is[1] : d->is[0];
	} else {
		lib_set_int(m->g, l, "count_include_pad", arg_int(m, "count_include_pad", 1));
		lib_set_int(m->g, l, "divisor", arg_int(m, "divisor_override", 0));
	}
	lib_set_ints(m->g, l, "kernel", kk, 2);
	lib_set_ints(m->g, l, "stride", ss, 2);
	lib_set_ints(m->g, l, "padding", pp, 2);
	lib_set_ints(m->g, l, "dilation", dd, 2);
	lib_set_int(m->g, l, "ceil_mode", arg_int(m, "ceil_mode", 0));
	return 0;
}

static int lower_reduce(Imp *m, const cJSON *node)
{
	int x = arg_tensor(m, "self");
	if (x < 0)
		return -1;
	int r = C(m, x)->rank;
	int64_t dims[MAXDIM];
	int nd = 0;
	Val *d = NULL;
	for (int i = 0; i < m->info->nargs; i++)
		if (!strcmp(m->info->args[i].name, "dim"))
			d = &m->args[i];
	if (d && d->k == V_INTS && d->n > 0) {
		for (int i = 0; i < d->n; i++) {
			int k = norm_dim(m, d->is[i], r);
			if (k < 0)
				return -1;
			dims[nd++] = k;
		}
	} else
		for (int i = 0; i < r; i++)
			dims[nd++] = i;
	int out = new_out(m, node, 0);
	if (out < 0)
		return -1;
	LibNode *l = add_lib(m, LIB_REDUCE);
	l->in[0] = x, l->nin = 1;
	l->out[0] = out, l->nout = 1;
	lib_set_int(m->g, l, "mode", m->info->param);
	lib_set_ints(m->g, l, "dims", dims, nd);
	return 0;
}

static int lower_softmax(Imp *m, const cJSON *node)
{
	int x = arg_tensor(m, "self");
	if (x < 0)
		return -1;
	int d = norm_dim(m, arg_int(m, "dim", -1), C(m, x)->rank);
	if (d < 0)
		return -1;
	int out = new_out(m, node, 0);
	if (out < 0)
		return -1;
	LibNode *l = add_lib(m, LIB_SOFTMAX);
	l->in[0] = x, l->nin = 1;
	l->out[0] = out, l->nout = 1;
	lib_set_int(m->g, l, "dim", d);
	lib_set_int(m->g, l, "log", m->info->param);
	return 0;
}

static int lower_cat(Imp *m, const cJSON *node)
{
	Val *ts = arg(m, "tensors");
	if (ts->k != V_TENSORS || ts->n < 1 || ts->n > 8) {
		node_error(m, "cat of %d tensors is not supported (1 to 8)", ts->n);
		return -1;
	}
	int out = new_out(m, node, 0);
	if (out < 0)
		return -1;
	int d = norm_dim(m, arg_int(m, "dim", 0), C(m, out)->rank);
	if (d < 0)
		return -1;
	LibNode *l = add_lib(m, LIB_CAT);
	l->nin = 0;
	for (int i = 0; i < ts->n; i++)
		if (ts->ts[i] >= 0 && sdfg_numel(m->g, ts->ts[i]) != 0)
			l->in[l->nin++] = ts->ts[i];
	l->out[0] = out, l->nout = 1;
	lib_set_int(m->g, l, "dim", d);
	return 0;
}

static const LowerFn lowerings[NLOWERINGS] = {
	[LW_unary] = lower_unary, [LW_binary] = lower_binary, [LW_view] = lower_view,
	[LW_noop] = lower_noop, [LW_cast] = lower_cast, [LW_conv] = lower_conv,
	[LW_linear] = lower_linear, [LW_gemm] = lower_gemm, [LW_batchnorm] = lower_batchnorm,
	[LW_pool] = lower_pool, [LW_reduce] = lower_reduce, [LW_softmax] = lower_softmax,
	[LW_cat] = lower_cat, [LW_clamp] = lower_clamp, [LW_dropout] = lower_dropout,
};

/* ---- graph, signature ------------------------------------------------------------ */

static int import_inputs(Imp *m)
{
	cJSON *sig = json_get(json_get(json_get(m->ep, "graph_module"), "signature"), "input_specs");
	int bad = 0, nuser = 0;
	for (int i = 0; i < json_len(sig); i++) {
		cJSON *spec = json_at(sig, i), *x;
		const char *kind = json_union_tag(spec, &x);
		if (!kind) {
			diag_error(m->path, "graph_module.signature.input_specs[%d]: malformed", i);
			bad = 1;
			continue;
		}
		if (!strcmp(kind, "user_input")) {
			cJSON *a = json_get(x, "arg"), *t;
			const char *at = json_union_tag(a, &t);
			if (!at || strcmp(at, "as_tensor")) {
				diag_error(m->path, "input_specs[%d]: a non-tensor user input (%s) is not supported; "
				                    "pass Python values as constants at export time", i, at ? at : "?");
				bad = 1;
				continue;
			}
			const char *nm = json_str(json_get(t, "name"));
			int id = nm ? new_value(m, nm, CK_INPUT) : -1;
			if (id < 0) {
				bad = 1;
				continue;
			}
			sdfg_c(m->g, id)->io = nuser++;
			continue;
		}
		if (!strcmp(kind, "constant_input"))
			continue; /* baked into the graph by export */
		const char *fqn = NULL;
		int isconst = 0;
		if (!strcmp(kind, "parameter"))
			fqn = json_str(json_get(x, "parameter_name"));
		else if (!strcmp(kind, "buffer")) {
			fqn = json_str(json_get(x, "buffer_name"));
			int pers = 1;
			json_bool(json_get(x, "persistent"), &pers);
			isconst = !pers;
		} else if (!strcmp(kind, "tensor_constant")) {
			fqn = json_str(json_get(x, "tensor_constant_name"));
			isconst = 1;
		} else {
			diag_error(m->path, "input_specs[%d]: '%s' inputs are not supported", i, kind);
			bad = 1;
			continue;
		}
		const char *nm = json_str(json_get(json_get(x, "arg"), "name"));
		if (!nm || !fqn) {
			diag_error(m->path, "input_specs[%d]: malformed %s", i, kind);
			bad = 1;
			continue;
		}
		Meta mt;
		if (value_meta(m, nm, &mt) || check_dtype(m, &mt, nm)) {
			bad = 1;
			continue;
		}
		const void *data = load_weight(m, fqn, isconst, &mt, nm);
		int id = data ? new_value(m, nm, CK_CONST) : -1;
		if (id < 0) {
			bad = 1;
			continue;
		}
		sdfg_c(m->g, id)->data = data;
	}
	/* Inputs in signature order. */
	m->g->ninputs = nuser;
	m->g->inputs = arena_alloc(m->a, sizeof(int) * (size_t)(nuser + 1));
	for (int i = 0; i < m->g->ncs; i++)
		if (m->g->cs[i].kind == CK_INPUT)
			m->g->inputs[m->g->cs[i].io] = i;
	return bad ? -1 : 0;
}

static int import_outputs(Imp *m)
{
	cJSON *specs = json_get(json_get(json_get(m->ep, "graph_module"), "signature"), "output_specs");
	int n = json_len(specs), bad = 0;
	m->g->outputs = arena_alloc(m->a, sizeof(int) * (size_t)(n + 1));
	m->g->noutputs = 0;
	for (int i = 0; i < n; i++) {
		cJSON *x;
		const char *kind = json_union_tag(json_at(specs, i), &x);
		if (!kind || strcmp(kind, "user_output"))
			continue; /* checked in check_signature */
		cJSON *a = json_get(x, "arg"), *t;
		const char *at = json_union_tag(a, &t);
		const char *nm = at && !strcmp(at, "as_tensor") ? json_str(json_get(t, "name")) : NULL;
		if (!nm) {
			diag_error(m->path, "output_specs[%d]: a non-tensor output (%s) is not supported", i, at ? at : "?");
			bad = 1;
			continue;
		}
		int c = val_lookup(m, nm);
		if (c < 0) {
			diag_error(m->path, "output_specs[%d]: output '%s' was not computed", i, nm);
			bad = 1;
			continue;
		}
		int k = m->g->noutputs;
		Container *s = sdfg_c(m->g, c);
		if (s->kind == CK_TRANSIENT && sdfg_is_contiguous(m->g, c)) {
			s->kind = CK_OUTPUT;
			s->io = k;
		} else {
			/* An input, weight, view or repeated output: copy it out. */
			m->nodename = nm;
			m->nodei = -1;
			int o = copy_contig(m, c, arena_printf(m->a, "%s_out", nm));
			sdfg_c(m->g, o)->kind = CK_OUTPUT;
			sdfg_c(m->g, o)->io = k;
			sdfg_c(m->g, o)->origin = arena_strdup(m->a, nm);
			m->g->root->kids[m->g->root->nkids - 1]->label = arena_strdup(m->a, nm);
			c = o;
		}
		m->g->outputs[m->g->noutputs++] = c;
	}
	return bad ? -1 : 0;
}

static int check_signature(Imp *m)
{
	cJSON *specs = json_get(json_get(json_get(m->ep, "graph_module"), "signature"), "output_specs");
	int bad = 0;
	for (int i = 0; i < json_len(specs); i++) {
		cJSON *x;
		const char *kind = json_union_tag(json_at(specs, i), &x);
		if (!kind) {
			diag_error(m->path, "graph_module.signature.output_specs[%d]: malformed", i);
			bad = 1;
		} else if (!strcmp(kind, "loss_output") || !strncmp(kind, "gradient_to_", 12)) {
			diag_error(m->path, "output_specs[%d] is a %s: the graph computes gradients; doccc compiles inference only "
			                    "(export the model in eval mode under torch.no_grad())", i, kind);
			bad = 1;
		} else if (!strcmp(kind, "buffer_mutation") || !strcmp(kind, "parameter_mutation") ||
		           !strcmp(kind, "user_input_mutation")) {
			const char *what = json_str(json_get(x, "buffer_name"));
			if (!what)
				what = json_str(json_get(x, "parameter_name"));
			if (!what)
				what = json_str(json_get(x, "user_input_name"));
			diag_error(m->path, "output_specs[%d]: the graph mutates '%s' (%s); doccc compiles inference only "
			                    "(training-mode batch norm does this: call model.eval() before export)",
			           i, what ? what : "?", kind);
			bad = 1;
		} else if (strcmp(kind, "user_output")) {
			diag_error(m->path, "output_specs[%d]: '%s' outputs are not supported", i, kind);
			bad = 1;
		}
	}
	return bad ? -1 : 0;
}

/* In-place ops (relu_, add_) mutate their input: later readers of that
 * value, which the non-functional training IR names by the old value, must
 * see the result. Rebinding the name makes the graph functional. */
static void rebind_mutated(Imp *m, const cJSON *node)
{
	const char *on = out_name(node, 0);
	int out = on ? val_lookup(m, on) : -1;
	if (out < 0)
		return;
	cJSON *ins = json_get(node, "inputs");
	for (int k = 0; k < json_len(ins); k++) {
		cJSON *na = json_at(ins, k), *t;
		const char *nm = json_str(json_get(na, "name"));
		for (int i = 0; nm && i < m->info->nargs; i++) {
			if (!m->info->args[i].mutated || strcmp(m->info->args[i].name, nm))
				continue;
			const char *tag = json_union_tag(json_get(na, "arg"), &t);
			const char *vn = tag && !strcmp(tag, "as_tensor") ? json_str(json_get(t, "name")) : NULL;
			if (vn)
				val_bind(m, vn, out);
		}
	}
}

/* After a node failed: placeholder containers for its outputs, so later
 * nodes still resolve their arguments and report their own problems. */
static void bind_placeholders(Imp *m, const cJSON *node)
{
	cJSON *outs = json_get(node, "outputs");
	for (int k = 0; k < json_len(outs); k++) {
		const char *on = out_name(node, k);
		Meta mt;
		if (!on || val_lookup(m, on) >= 0 || value_meta(m, on, &mt))
			continue;
		int64_t one = 1;
		int ok = mt.dt >= 0;
		int id = sdfg_add_container(m->g, on, ok ? (Dtype)mt.dt : DT_F32, CK_TRANSIENT, ok ? mt.rank : 1, ok ? mt.shape : &one);
		val_bind(m, on, id);
	}
}

static int import_nodes(Imp *m)
{
	cJSON *nodes = json_get(m->graph, "nodes");
	int bad = 0;
	for (int i = 0; i < json_len(nodes); i++) {
		cJSON *node = json_at(nodes, i);
		const char *target = json_str(json_get(node, "target"));
		m->nodei = i;
		m->nodename = json_str(json_get(node, "name"));
		if (!m->nodename)
			m->nodename = out_name(node, 0);
		m->nodename = arena_strdup(m->a, m->nodename ? m->nodename : "?");
		m->trace = first_trace_line(m, json_str(json_get(json_get(node, "metadata"), "stack_trace")));
		m->failed = 0;
		if (!target) {
			node_error(m, "node has no target");
			bad = 1;
			continue;
		}
		/* Every unsupported dtype among the outputs. */
		for (int k = 0; k < json_len(json_get(node, "outputs")); k++) {
			const char *on = out_name(node, k);
			Meta mt;
			if (on && value_meta(m, on, &mt) == 0 && mt.dt < 0 && !strstr(on, "_unused_"))
				node_error(m, "dtype %s of value '%s' is not supported", dtype_torch_name(mt.st), on);
		}
		const char *ov = !strncmp(target, "torch.ops.aten.", 15) ? target + 15 : NULL;
		m->info = ov ? aten_find(ov) : NULL;
		if (!m->info)
			node_error(m, "unsupported operator '%s'", ov ? arena_printf(m->a, "aten.%s", ov) : target);
		if (m->info && !m->failed && bind_args(m, node) == 0 && lowerings[m->info->lowering](m, node) == 0 && !m->failed) {
			rebind_mutated(m, node);
		} else {
			/* keep going: report every problem of the graph */
			bad = 1;
			bind_placeholders(m, node);
		}
	}
	m->nodename = NULL;
	m->trace = NULL;
	return bad ? -1 : 0;
}

/* ---- input files ------------------------------------------------------------------ */

static int open_input(Imp *m, const ImportArgs *args, char **text, size_t *len)
{
	size_t n;
	char *head = file_read(args->path, &n);
	if (!head)
		return -1;
	if (n >= 4 && !memcmp(head, "PK\003\004", 4)) {
		free(head);
		m->zip = pt2_open(args->path);
		if (!m->zip)
			return -1;
		if (!pt2_has(m->zip, "models/model.json")) {
			/* torch.export.save always names the model "model" */
			diag_error(args->path, "archive has no models/model.json: not a torch.export .pt2 (torch 2.9 or later)");
			return -1;
		}
		*text = pt2_read(m->zip, "models/model.json", len);
		if (!*text)
			return -1;
		m->path = arena_printf(m->a, "%s", args->path);
		size_t l2;
		char *w = pt2_has(m->zip, "data/weights/model_weights_config.json") ? pt2_read(m->zip, "data/weights/model_weights_config.json", &l2) : NULL;
		if (w) {
			m->wcfg = json_parse(w, l2, arena_printf(m->a, "%s:data/weights/model_weights_config.json", args->path));
			free(w);
			if (!m->wcfg)
				return -1;
		} else if (pt2_has(m->zip, "data/weights/model.pt")) {
			diag_error(args->path, "weights are pickled (an archive from torch 2.8 or older); re-export with torch 2.9 or later");
			return -1;
		}
		char *c = pt2_has(m->zip, "data/constants/model_constants_config.json") ? pt2_read(m->zip, "data/constants/model_constants_config.json", &l2) : NULL;
		if (c) {
			m->ccfg = json_parse(c, l2, arena_printf(m->a, "%s:data/constants/model_constants_config.json", args->path));
			free(c);
			if (!m->ccfg)
				return -1;
		}
		return 0;
	}
	*text = head;
	*len = n;
	m->path = args->path;
	if (args->weights) {
		if (st_open(&m->st, args->weights))
			return -1;
		m->have_st = 1;
		m->stpath = args->weights;
		return 0;
	}
	/* An extracted archive: <root>/models/model.json with <root>/data beside. */
	const char *base = path_base(args->path);
	size_t dl = (size_t)(base - args->path);
	if (dl >= 7 && !strncmp(args->path + dl - 7, "models/", 7)) {
		char *root = arena_strndup(m->a, args->path, dl - 7);
		char *cfg = arena_printf(m->a, "%sdata/weights/model_weights_config.json", root);
		if (file_exists(cfg)) {
			size_t l2;
			char *w = file_read(cfg, &l2);
			m->wcfg = w ? json_parse(w, l2, cfg) : NULL;
			free(w);
			if (!m->wcfg)
				return -1;
			char *ccfgp = arena_printf(m->a, "%sdata/constants/model_constants_config.json", root);
			if (file_exists(ccfgp)) {
				char *c = file_read(ccfgp, &l2);
				m->ccfg = c ? json_parse(c, l2, ccfgp) : NULL;
				free(c);
			}
			m->dir = root;
		}
	}
	return 0;
}

Sdfg *import_program(Arena *a, const char *name, const ImportArgs *args)
{
	Imp mm, *m = &mm;
	memset(m, 0, sizeof *m);
	m->a = a;
	m->path = args->path;
	char *text = NULL;
	size_t len = 0;
	Sdfg *g = NULL;
	if (open_input(m, args, &text, &len))
		goto out;
	m->ep = json_parse(text, len, m->zip ? arena_printf(a, "%s:models/model.json", args->path) : args->path);
	if (!m->ep)
		goto out;
	if (!cJSON_IsObject(m->ep) || !json_get(m->ep, "graph_module")) {
		diag_error(m->path, "not a serialized ExportedProgram (no 'graph_module')");
		goto out;
	}
	int64_t major = -1, minor = -1;
	cJSON *sv = json_get(m->ep, "schema_version");
	json_int(json_get(sv, "major"), &major);
	json_int(json_get(sv, "minor"), &minor);
	if (major != 8) {
		diag_error(m->path, "schema_version %lld.%lld: doccc reads schema major version 8 (torch 2.6 and later); "
		                    "re-export the model with torch 2.9 or later", (long long)major, (long long)minor);
		goto out;
	}
	m->graph = json_get(json_get(m->ep, "graph_module"), "graph");
	m->tvals = json_get(m->graph, "tensor_values");
	if (!cJSON_IsObject(m->graph) || !cJSON_IsArray(json_get(m->graph, "nodes"))) {
		diag_error(m->path, "graph_module.graph is malformed (no nodes)");
		goto out;
	}
	m->g = sdfg_new(a, name);
	m->g->src = m->path;
	{
		Sha256 h;
		unsigned char d[32];
		sha256_init(&h);
		sha256_update(&h, text, len);
		sha256_final(&h, d);
		sha256_hex(d, m->g->hash);
	}
	int bad = check_signature(m);
	bad |= import_inputs(m);
	if (bad)
		goto out;
	bad |= import_nodes(m);
	if (!bad)
		bad |= import_outputs(m);
	if (!bad)
		g = m->g;
out:
	free(text);
	if (m->ep)
		json_free(m->ep);
	if (m->wcfg)
		json_free(m->wcfg);
	if (m->ccfg)
		json_free(m->ccfg);
	if (m->zip)
		pt2_close(m->zip);
	/* safetensors data is referenced by constants: kept until exit */
	return g;
}
