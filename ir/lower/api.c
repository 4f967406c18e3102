/*
 * api.c - what every lowering works with: messages located at the node,
 * the value map, tensor metadata, new values, and torch's aliasing (the
 * bookkeeping of in-place writes through views). Arguments are bound in
 * args.c, sizes and the export's symbols are read in dims.c.
 *
 * The importer (ir/import.c) walks graph.nodes; for each node it sets the
 * current node (Imp.nodei, nodename, trace, info), binds its arguments and
 * calls the lowering, which builds IR through the functions of lower.h
 * only and never calls into the importer. Invariants:
 *   - a torch value name means the newest container bound to it (lw_bind).
 *     A rebinding keeps the value's root, the name whose storage it shares
 *     in torch, so that an in-place write through one alias reaches the
 *     others (lw_rebind_mutated) or, where doccc cannot carry it, they are
 *     marked stale and reading one is an error that says why;
 *   - graph.tensor_values is the authority on every value's dtype, sizes
 *     and strides (lw_meta): lowerings check their own shape logic against
 *     it, and lw_check_new_containers stops a lowering whose containers
 *     break the IR's assumptions (a negative size, a tensor past
 *     DOCC_MAX_TENSOR_BYTES, a static view outside its base) before any
 *     pass sees them;
 *   - lw_error marks the node failed and the importer goes on with the next
 *     node, so that one run reports every problem of the graph.
 */
#include <stdio.h>
#include <string.h>

#include "lower.h"

/* ---- messages -------------------------------------------------------------------- */

static char *node_loc(Imp *m)
{
	return arena_printf(m->a, "%s: graph.nodes[%d] (node '%s')", m->path, m->nodei, m->nodename);
}

void lw_error(Imp *m, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	diag_verror(node_loc(m), fmt, ap);
	va_end(ap);
	if (m->trace && *m->trace)
		diag_note(node_loc(m), "from %s", m->trace);
	m->failed = 1;
}

/* ---- value map ------------------------------------------------------------------- */

int lw_lookup(Imp *m, const char *name)
{
	for (int i = m->nvals - 1; i >= 0; i--)
		if (!strcmp(m->vals[i].name, name))
			return m->vals[i].id;
	return -1;
}

/* The newest binding of name, or NULL. */
static ValueEnt *value_ent(Imp *m, const char *name)
{
	for (int i = m->nvals - 1; i >= 0; i--)
		if (!strcmp(m->vals[i].name, name))
			return &m->vals[i];
	return NULL;
}

/* A rebinding keeps the value's torch storage (its root). */
void lw_bind(Imp *m, const char *name, int id)
{
	ValueEnt *old = value_ent(m, name);
	ValueEnt e = {arena_strdup(m->a, name), id, NULL, NULL};
	e.root = old ? old->root : e.name;
	VEC_PUSH(m->a, m->vals, m->nvals, m->capvals, e);
}

/* Why reading value name would miss an in-place write (see ValueEnt), or NULL. */
const char *lw_value_stale(Imp *m, const char *name)
{
	ValueEnt *e = value_ent(m, name);
	return e ? e->stale : NULL;
}

/* ---- tensor metadata ------------------------------------------------------------- */

/* doccc check: torch scalar type st occurs in the graph (c NULL: not a check). */
void lw_census_dtype(Census *c, int st)
{
	if (!c)
		return;
	for (int i = 0; i < c->ndtypes; i++)
		if (c->dtypes[i] == st)
			return;
	if (c->ndtypes < (int)(sizeof c->dtypes / sizeof c->dtypes[0]))
		c->dtypes[c->ndtypes++] = st;
}

/* A problem of tensor metadata `what` (tensor_values['x'] or a weight's
 * tensor_meta), located at the node being lowered when there is one. */
static void PRINTF_LIKE(3, 4) meta_error(Imp *m, const char *what, const char *fmt, ...)
{
	char msg[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	if (m->nodename)
		lw_error(m, "%s: %s", what, msg);
	else
		diag_error(m->path, "%s: %s", what, msg);
}

/* A size, stride or offset of metadata: a non-negative integer (a symbolic
 * one evaluated under the specialization). 0, or -1 after a message. */
static int read_dim(Imp *m, const cJSON *j, int64_t *v, const char *where, const char *what, int i)
{
	const char *desc = i >= 0 ? arena_printf(m->a, "the %s of '%s' in dim %d", what, where, i)
	                          : arena_printf(m->a, "the %s of '%s'", what, where);
	int r = lw_read_symint(m, j, v, desc);
	if (r == -2)
		return -1;
	if (r == -1 || *v < 0) {
		meta_error(m, arena_printf(m->a, "tensor_values['%s']", where), "malformed %s%s", what,
		           i >= 0 ? arena_printf(m->a, " (dim %d)", i) : "");
		return -1;
	}
	return 0;
}

/* numel * size of a shape, within DOCC_MAX_TENSOR_BYTES; -1 if past it. */
int64_t lw_tensor_bytes(int rank, const int64_t *shape, int esz)
{
	int64_t n = esz;
	for (int i = 0; i < rank; i++)
		if (ck_mul(n, shape[i], &n) || n > DOCC_MAX_TENSOR_BYTES)
			return -1;
	return n;
}

int lw_read_meta(Imp *m, const cJSON *tm, Meta *o, const char *what)
{
	memset(o, 0, sizeof *o);
	int64_t st;
	cJSON *sizes = json_get(tm, "sizes"), *strides = json_get(tm, "strides");
	const char *tv = arena_printf(m->a, "tensor_values['%s']", what);
	if (!tm || json_int(json_get(tm, "dtype"), &st) || st < INT32_MIN || st > INT32_MAX || !cJSON_IsArray(sizes)) {
		meta_error(m, tv, "malformed tensor metadata");
		return -1;
	}
	o->st = (int)st;
	o->dt = dtype_from_torch((int)st);
	lw_census_dtype(m->census, o->st);
	o->rank = json_len(sizes);
	if (o->rank > DOCC_MAX_RANK) {
		meta_error(m, tv, "rank %d is too large (doccc's limit is %d)", o->rank, DOCC_MAX_RANK);
		return -1;
	}
	for (int i = 0; i < o->rank; i++) {
		if (read_dim(m, json_at(sizes, i), &o->shape[i], what, "size", i))
			return -1;
		if ((o->x[i] = lw_dyn_expr(m, json_at(sizes, i))))
			o->dyn = 1;
	}
	if (lw_tensor_bytes(o->rank, o->shape, o->dt >= 0 ? dtype_info[o->dt].size : 1) < 0) {
		meta_error(m, tv, "the tensor is too large (more than %lld bytes)", (long long)DOCC_MAX_TENSOR_BYTES);
		return -1;
	}
	int64_t s = 1;
	for (int i = o->rank - 1; i >= 0; i--) {
		o->stride[i] = s;
		s *= o->shape[i] ? o->shape[i] : 1;   /* at most the numel checked above */
	}
	if (cJSON_IsArray(strides) && json_len(strides) == o->rank)
		for (int i = 0; i < o->rank; i++) {
			if (read_dim(m, json_at(strides, i), &o->stride[i], what, "stride", i))
				return -1;
			o->dyn |= lw_dyn_expr(m, json_at(strides, i)) != NULL;
		}
	cJSON *so = json_get(tm, "storage_offset");
	if (so && read_dim(m, so, &o->offset, what, "storage offset", -1))
		return -1;
	o->dyn |= so && lw_dyn_expr(m, so) != NULL;
	for (int i = 0; i < o->rank && o->dyn; i++)
		if (!o->x[i])
			o->x[i] = ex_int(m->g, o->shape[i]);
	int64_t layout;
	if (json_int(json_get(tm, "layout"), &layout) == 0 && layout != 7 && layout != 0) {
		meta_error(m, tv, "only strided tensors are supported (layout %lld)", (long long)layout);
		return -1;
	}
	return 0;
}

int lw_meta(Imp *m, const char *name, Meta *o)
{
	cJSON *tm = json_get(m->tvals, name);
	if (!tm) {
		diag_error(m->path, "graph.tensor_values has no entry for '%s'", name);
		return -1;
	}
	return lw_read_meta(m, tm, o, name);
}

/* ---- containers for values ------------------------------------------------------- */

int lw_check_dtype(Imp *m, const Meta *mt, const char *name)
{
	if (mt->dt >= 0)
		return 0;
	if (m->nodename)
		lw_error(m, "dtype %s of value '%s' is not supported", dtype_torch_name(mt->st), name);
	else
		diag_error(m->path, "graph input '%s': dtype %s is not supported", name, dtype_torch_name(mt->st));
	m->failed = 1;
	return -1;
}

/* New container for value `name` with its recorded metadata. */
int lw_new_value(Imp *m, const char *name, CKind k)
{
	Meta mt;
	if (lw_meta(m, name, &mt) || lw_check_dtype(m, &mt, name))
		return -1;
	int id = mt.dyn ? sdfg_add_container_x(m->g, name, mt.dt, k, mt.rank, mt.x)
	                : sdfg_add_container(m->g, name, mt.dt, k, mt.rank, mt.shape);
	sdfg_c(m->g, id)->origin = arena_strdup(m->a, name);
	lw_bind(m, name, id);
	return id;
}

/* The containers a lowering created, ids [from, ncs), against the IR's
 * assumptions before anything else sees them: constant sizes are
 * non-negative and the tensor within DOCC_MAX_TENSOR_BYTES; a view with a
 * static layout addresses only elements of its base. A lowering that
 * computed sizes from absurd arguments is stopped here, with the node's
 * location, instead of overflowing in a pass or the emitter. */
int lw_check_new_containers(Imp *m, int from)
{
	Sdfg *g = m->g;
	for (int id = from; id < g->ncs; id++) {
		Container *c = &g->cs[id];
		int64_t shape[MAXDIM], v;
		int fixed = 1;
		for (int d = 0; d < c->rank; d++) {
			if (!ex_isint(c->shape[d], &shape[d])) {
				fixed = 0;
				continue;
			}
			if (shape[d] < 0) {
				lw_error(m, "value '%s' would have size %lld in dim %d", c->origin && *c->origin ? c->origin : c->name,
				         (long long)shape[d], d);
				return -1;
			}
		}
		if (fixed && lw_tensor_bytes(c->rank, shape, dtype_info[c->dt].size) < 0) {
			lw_error(m, "value '%s' is too large (more than %lld bytes)", c->origin && *c->origin ? c->origin : c->name,
			         (long long)DOCC_MAX_TENSOR_BYTES);
			return -1;
		}
		if (c->kind != CK_VIEW || !fixed)
			continue;
		/* lowest and highest element of the base the view reads */
		int64_t lo, hi, base = sdfg_numel(g, c->base), t;
		if (!ex_isint(c->offset, &lo) || base < 0)
			continue;
		hi = lo;
		int over = 0, empty = 0;
		for (int d = 0; d < c->rank; d++) {
			empty |= shape[d] == 0;
			if (!ex_isint(c->stride[d], &v)) {
				fixed = 0;
				break;
			}
			over |= ck_mul(shape[d] ? shape[d] - 1 : 0, v, &t) || ck_add(t < 0 ? lo : hi, t, t < 0 ? &lo : &hi);
		}
		if (fixed && !empty && (over || lo < 0 || hi >= base)) {
			lw_error(m, "value '%s' is a view outside the storage of '%s' (%lld elements)",
			         c->origin && *c->origin ? c->origin : c->name, g->cs[c->base].name, (long long)base);
			return -1;
		}
	}
	return 0;
}

/* ---- aliasing: views and in-place writes ----------------------------------------- */

/* The tensor value name passed as argument k of node, or NULL. */
static const char *tensor_arg(const cJSON *node, int k)
{
	cJSON *t;
	const char *tag = json_union_tag(json_get(json_at(json_get(node, "inputs"), k), "arg"), &t);
	return tag && !strcmp(tag, "as_tensor") ? json_str(json_get(t, "name")) : NULL;
}

/* After a node's lowering: a view op's outputs (schema "Tensor(a) self ->
 * Tensor(a)", in-place ops' too) share the storage of the argument of the
 * same alias set in torch. */
void lw_track_aliases(Imp *m, const cJSON *node)
{
	const char *vn = NULL;
	cJSON *ins = json_get(node, "inputs");
	for (int k = 0; m->info->ret_alias && !vn && k < json_len(ins); k++) {
		const char *nm = json_str(json_get(json_at(ins, k), "name"));
		for (int i = 0; nm && i < m->info->nargs; i++)
			if (m->info->args[i].alias == m->info->ret_alias && !strcmp(m->info->args[i].name, nm))
				vn = tensor_arg(node, k);
	}
	ValueEnt *src = vn ? value_ent(m, vn) : NULL;
	if (!src)
		return;
	for (int k = 0; k < json_len(json_get(node, "outputs")); k++) {
		const char *on = lw_out_name(node, k);
		ValueEnt *e = on ? value_ent(m, on) : NULL;
		if (e)
			e->root = src->root;
	}
}

/* Argument argname of node (a tensor the op updates in place without
 * returning it, and whose update doccc does not compute) and every alias
 * of it: reading them later is an error saying why. */
void lw_mark_stale(Imp *m, const cJSON *node, const char *argname, const char *why)
{
	cJSON *ins = json_get(node, "inputs");
	for (int k = 0; k < json_len(ins); k++) {
		const char *nm = json_str(json_get(json_at(ins, k), "name"));
		const char *vn = nm && !strcmp(nm, argname) ? tensor_arg(node, k) : NULL;
		ValueEnt *e = vn ? value_ent(m, vn) : NULL;
		for (int j = m->nvals - 1; e && j >= 0; j--)
			if (!strcmp(m->vals[j].root, e->root) && value_ent(m, m->vals[j].name) == &m->vals[j])
				m->vals[j].stale = arena_printf(m->a, "but node '%s' updated it in place, %s", m->nodename, why);
	}
}

/* The storage of root container r after an in-place write of out through
 * its view v (torch's view semantics made functional, as its
 * functionalization does with view_scatter): a new flat container, r's
 * elements with v's positions taken from out (the scatter node's view
 * mode: ir/expand/index.c). -1 when v's layout is not static. */
static int write_through(Imp *m, int r, int v, int out)
{
	Container *rc = lw_c(m, r), *vc = lw_c(m, v);
	int64_t n = 1, st, off;
	for (int d = 0; d < rc->rank; d++) {
		int64_t k;
		if (!ex_isint(rc->shape[d], &k))
			return -1;
		n *= k;
	}
	if (!ex_isint(vc->offset, &off))
		return -1;
	int64_t strides[MAXDIM];
	for (int d = 0; d < vc->rank; d++) {
		if (!ex_isint(vc->stride[d], &st))
			return -1;
		strides[d] = st;
	}
	Expr *ne = ex_int(m->g, n), *one = ex_int(m->g, 1);
	int flat = sdfg_add_view(m->g, arena_printf(m->a, "%s_storage", m->nodename), r, 1, &ne, &one, ex_int(m->g, 0));
	lw_c(m, flat)->origin = "";
	int nr = sdfg_add_container_x(m->g, arena_printf(m->a, "%s_written", m->nodename), rc->dt, CK_TRANSIENT, 1, &ne);
	lw_c(m, nr)->origin = "";
	LibNode *l = lw_lib(m, LIB_SCATTER);
	l->in[0] = flat, l->in[1] = out, l->nin = 2;
	l->out[0] = nr, l->nout = 1;
	lib_set_int(m->g, l, "mode", SC_VIEW);
	lib_set_ints(m->g, l, "strides", strides, vc->rank);
	lib_set_int(m->g, l, "offset", off);
	return nr;
}

/* value a (an alias of the written one) as the same view of the written
 * storage nr */
static void rebind_view(Imp *m, const char *name, int like, int nr)
{
	Container *c = lw_c(m, like);
	int64_t shape[MAXDIM];
	Expr *st[MAXDIM];
	for (int d = 0; d < c->rank; d++) {
		if (!ex_isint(c->shape[d], &shape[d]))
			shape[d] = 0;
		st[d] = c->stride[d];
	}
	lw_view(m, name, nr, c->rank, shape, st, c->offset);
}

/* An in-place write into a graph input, a parameter, a buffer or a
 * constant: what belongs to the caller or is no state of the model (the
 * buffers the program writes are state: ir/import/state.c), which the
 * functional graph doccc builds cannot update. Core ATen states such writes
 * in the signature (the importer's mutation_error says the same); the
 * training IR keeps them as in-place nodes. The written storage is torch's
 * (root, a value name), not the container doccc shares with it: a clone of
 * an input is a view of it in doccc and new storage in torch. 1 after the
 * message. */
static int state_write(Imp *m, const char *root)
{
	int r = -1;
	for (int i = 0; i < m->g->nstates; i++) /* the library's state: written in place like any value */
		if (!strcmp(m->g->cs[m->g->states[i]].origin, root))
			return 0;
	for (int i = 0; i < m->nfqn && i < m->g->ncs && r < 0; i++)
		if ((m->g->cs[i].kind == CK_INPUT || m->g->cs[i].kind == CK_CONST) && !strcmp(m->g->cs[i].origin, root))
			r = i;
	if (r < 0)
		return 0;
	Container *c = lw_c(m, r);
	const char *what = m->fqn[r], *bn = "num_batches_tracked'";
	if (c->kind == CK_INPUT) {
		lw_error(m, "writes in place to input '%s'; doccc's inputs are read-only: return the new value as an output "
		            "instead", c->origin);
		return 1;
	}
	if (c->kind != CK_CONST || !what)
		return 0;
	size_t n = strlen(what);
	if (n >= strlen(bn) && !strcmp(what + n - strlen(bn), bn))
		lw_error(m, "updates %s in place: the batch counter of a training-mode batch norm, which doccc does not "
		            "compute: doccc compiles inference only (call model.eval() before export)", what);
	else
		lw_error(m, "writes in place to %s: doccc keeps a model's state across calls in buffers only (a cache, a "
		            "counter: register it with register_buffer); doccc compiles inference only", what);
	return 1;
}

/* After a node's lowering. In-place ops (relu_, add_) mutate their input:
 * later readers of that value, which the non-functional training IR names
 * by the old value, must see the result. Rebinding the name makes the
 * graph functional. Other values that share its storage in torch (views of
 * it, or its base when it is a view) see the write too: those bound to the
 * very container are rebound as well, those of a static layout become
 * views of the written storage (write_through); the others would read the
 * old data, so reading them is an error (stale) -- Core ATen, which is
 * functional, has no such aliases. An in-place op whose result is a view
 * of its input's storage (squeeze_, transpose_) changes only the name's
 * meaning: the other views keep theirs, as in torch. */
void lw_rebind_mutated(Imp *m, const cJSON *node)
{
	const char *on = lw_out_name(node, 0);
	int out = on ? lw_lookup(m, on) : -1;
	if (out < 0)
		return;
	cJSON *ins = json_get(node, "inputs");
	for (int k = 0; k < json_len(ins); k++) {
		const char *nm = json_str(json_get(json_at(ins, k), "name"));
		for (int i = 0; nm && i < m->info->nargs; i++) {
			if (!m->info->args[i].mutated || strcmp(m->info->args[i].name, nm))
				continue;
			const char *vn = tensor_arg(node, k);
			ValueEnt *e = vn ? value_ent(m, vn) : NULL;
			if (!e || m->info->args[i].alias != m->info->ret_alias)
				continue; /* not returned (running stats): the lowering says (lw_mark_stale) */
			const char *root = e->root;
			int old = e->id, r = sdfg_root_of(m->g, old), nr = -1;
			if (sdfg_root_of(m->g, out) == r) {
				/* a view of the same storage (squeeze_, t_, as_strided_;
				 * dropout_ in eval; detach_ of a constant): the data did
				 * not change, only what the name means */
				lw_bind(m, vn, out);
				continue;
			}
			if (state_write(m, root))
				return;
			/* other views of the same storage (its base, its other views):
			 * they see the write, through the written storage */
			for (int j = 0; j < m->nvals; j++) {
				ValueEnt *a = &m->vals[j];
				if (!strcmp(a->root, root) && strcmp(a->name, vn) && strcmp(a->name, on) && value_ent(m, a->name) == a &&
				    a->id != old && sdfg_root_of(m->g, a->id) == r) {
					nr = write_through(m, r, old, out);
					break;
				}
			}
			for (int j = m->nvals - 1; j >= 0; j--) {
				ValueEnt *a = &m->vals[j];
				if (strcmp(a->root, root) || !strcmp(a->name, vn) || !strcmp(a->name, on) || value_ent(m, a->name) != a)
					continue;
				if (nr >= 0 && sdfg_root_of(m->g, a->id) == r)
					rebind_view(m, a->name, a->id, nr);
				else if (a->id == old)
					lw_bind(m, a->name, out);
				else if (!a->stale)
					a->stale = arena_printf(m->a, "but node '%s' wrote to it in place through its alias '%s' "
					                        "(they share storage in torch); doccc does not carry in-place writes "
					                        "over to other views of a tensor whose layout is not static: export "
					                        "with run_decompositions() (Core ATen is functional)", m->nodename, vn);
			}
			if (nr >= 0) {
				rebind_view(m, vn, old, nr);
				if (strcmp(on, vn))
					rebind_view(m, on, old, nr);
			} else
				lw_bind(m, vn, out);
		}
	}
}
