/*
 * state.c - the buffers a program mutates become the library's state.
 *
 * A model that keeps state across calls (an LLM's KV cache, a position
 * counter, a streaming model's hidden state) writes its buffers in
 * forward. The two IRs say so differently:
 *   - Core ATen is functional: the graph computes each buffer's new value
 *     and the signature names it (output_specs, buffer_mutation);
 *   - the training IR writes in place (index_copy_, copy_, add_, a slice
 *     assignment's copy_ into a view), through the buffer's placeholder or
 *     an alias of it (a view, a to() that converts nothing), and the
 *     signature says nothing.
 * Both become a CK_STATE container per buffer (ir.h): the importer finds
 * the written buffers before it lowers a node (a buffer read before its
 * first write must already read the state, not a constant copy of its
 * initial value), lowers the writes functionally like any in-place op
 * (lw_rebind_mutated), and at the end writes each state once from the
 * value the program left in it (the commit). The state pass
 * (ir/passes/state.c) then lets the writes happen in place.
 *
 * Parameters written in forward and user inputs written in place stay
 * errors (api.c's state_write says what to do): a parameter is trained
 * state, and an input belongs to the caller. So do a training-mode batch
 * norm's running statistics and counter: doccc compiles inference only.
 */
#include <string.h>

#include "import.h"

typedef struct {
	const char *name, *root;
} Alias;

typedef struct {
	Alias *v;
	int n, cap;
} Aliases;

static const char *root_of(const Aliases *al, const char *name)
{
	for (int i = al->n - 1; i >= 0; i--)
		if (!strcmp(al->v[i].name, name))
			return al->v[i].root;
	return NULL;
}

static void add_written(Imp *m, const char *root)
{
	for (int i = 0; i < m->files->nwritten; i++)
		if (!strcmp(m->files->written[i], root))
			return;
	VEC_PUSH(m->a, m->files->written, m->files->nwritten, m->files->capwritten, root);
}

/* The training IR: every node's arguments that its schema marks written
 * (Tensor(a!)), followed back through the aliases (an output sharing an
 * argument's alias set shares its storage) to a buffer placeholder. */
static void scan_nodes(Imp *m, Aliases *al)
{
	cJSON *nodes = json_get(m->graph, "nodes");
	for (int i = 0; i < json_len(nodes); i++) {
		cJSON *node = json_at(nodes, i), *ins = json_get(node, "inputs");
		const char *t = json_str(json_get(node, "target"));
		const char *ov = !t ? NULL : !strncmp(t, "torch.ops.aten.", 15) ? t + 15 : !strncmp(t, "torch.ops.", 10) ? t + 10 : NULL;
		const AtenInfo *info = ov ? aten_find(ov) : NULL;
		const char *on = lw_out_name(node, 0);
		if (!info)
			continue;
		for (int k = 0; k < json_len(ins); k++) {
			cJSON *in = json_at(ins, k), *x;
			const char *nm = json_str(json_get(in, "name"));
			const char *tag = json_union_tag(json_get(in, "arg"), &x);
			const char *vn = tag && !strcmp(tag, "as_tensor") ? json_str(json_get(x, "name")) : NULL;
			const char *root = vn ? root_of(al, vn) : NULL;
			if (!root || !nm)
				continue;
			for (int a = 0; a < info->nargs; a++) {
				if (strcmp(info->args[a].name, nm))
					continue;
				if (info->args[a].mutated && !strstr(ov, "batch_norm"))
					add_written(m, root);
				if (on && info->args[a].alias && info->args[a].alias == info->ret_alias) {
					Alias e = {arena_strdup(m->a, on), root};
					VEC_PUSH(m->a, al->v, al->n, al->cap, e);
				}
			}
		}
	}
}

int state_scan(Imp *m)
{
	cJSON *sig = json_get(json_get(m->ep, "graph_module"), "signature");
	cJSON *ins = json_get(sig, "input_specs"), *outs = json_get(sig, "output_specs");
	Aliases al = {0};
	for (int i = 0; i < json_len(ins); i++) {
		cJSON *x;
		const char *kind = json_union_tag(json_at(ins, i), &x);
		const char *nm = json_str(json_get(json_get(x, "arg"), "name"));
		const char *bn = json_str(json_get(x, "buffer_name")), *nbt = "num_batches_tracked";
		if (bn && strlen(bn) >= strlen(nbt) && !strcmp(bn + strlen(bn) - strlen(nbt), nbt))
			continue; /* a training-mode batch norm's counter: api.c's state_write refuses it */
		if (kind && nm && !strcmp(kind, "buffer")) {
			Alias e = {nm, nm};
			VEC_PUSH(m->a, al.v, al.n, al.cap, e);
		}
	}
	scan_nodes(m, &al);
	/* Core ATen: the buffers of the buffer_mutation outputs */
	for (int i = 0; i < json_len(outs); i++) {
		cJSON *x;
		const char *kind = json_union_tag(json_at(outs, i), &x);
		const char *bn = kind && !strcmp(kind, "buffer_mutation") ? json_str(json_get(x, "buffer_name")) : NULL;
		for (int j = 0; bn && j < json_len(ins); j++) {
			cJSON *y;
			const char *k2 = json_union_tag(json_at(ins, j), &y);
			const char *b2 = k2 && !strcmp(k2, "buffer") ? json_str(json_get(y, "buffer_name")) : NULL;
			const char *nm = json_str(json_get(json_get(y, "arg"), "name"));
			if (b2 && nm && !strcmp(b2, bn))
				add_written(m, nm);
		}
	}
	return 0;
}

int state_written(Imp *m, const char *placeholder)
{
	for (int i = 0; i < m->files->nwritten; i++)
		if (!strcmp(m->files->written[i], placeholder))
			return 1;
	return 0;
}

/* Buffer placeholder nm, initial value init (a constant), becomes a state
 * bound to nm; the state's id. */
int state_new(Imp *m, const char *nm, int init)
{
	Container *c = sdfg_c(m->g, init);
	int id = sdfg_add_container_x(m->g, nm, c->dt, CK_STATE, c->rank, c->shape);
	Container *s = sdfg_c(m->g, id);
	s->origin = arena_strdup(m->a, nm);
	s->init = init;
	c->origin = arena_printf(m->a, "%s (initial value)", nm);
	lw_bind(m, nm, id);
	return id;
}

/* State st (placeholder name nm) takes the value of container v at the end
 * of the run. -1 after a message. */
static int commit(Imp *m, int st, int v, const char *what)
{
	Sdfg *g = m->g;
	Container *s = sdfg_c(g, st), *c = sdfg_c(g, v);
	if (v == st)
		return 0; /* not written after all */
	int same = c->dt == s->dt && c->rank == s->rank;
	for (int d = 0; same && d < s->rank; d++)
		same = ex_eq(c->shape[d], s->shape[d]);
	if (!same) {
		diag_error(m->path, "%s: the new value of buffer '%s' is %s of rank %d; the buffer is %s of rank %d, and its "
		                    "dtype and shape must stay", what, s->origin, dtype_info[c->dt].name, c->rank,
		           dtype_info[s->dt].name, s->rank);
		return -1;
	}
	m->nodename = s->origin;
	m->nodei = -1;
	if (sdfg_root_of(g, v) == st) /* a view of the old value: copy it before it is overwritten */
		v = lw_copy(m, v, arena_printf(m->a, "%s_new", s->origin));
	LibNode *l = lw_lib(m, LIB_ELEMWISE);
	l->in[0] = v, l->nin = 1;
	l->out[0] = st, l->nout = 1;
	lib_set_int(g, l, "code", T_ASSIGN);
	g->root->kids[g->root->nkids - 1]->label = arena_printf(m->a, "%s (state)", s->origin);
	return 0;
}

int state_commit(Imp *m)
{
	cJSON *sig = json_get(json_get(m->ep, "graph_module"), "signature");
	cJSON *ins = json_get(sig, "input_specs"), *outs = json_get(sig, "output_specs");
	int bad = 0;
	for (int i = 0; i < m->g->nstates; i++) {
		int st = m->g->states[i];
		const char *nm = sdfg_c(m->g, st)->origin, *val = nm, *bn = NULL;
		/* Core ATen names the new value in a buffer_mutation output */
		for (int j = 0; j < json_len(ins) && !bn; j++) {
			cJSON *y;
			const char *k = json_union_tag(json_at(ins, j), &y);
			const char *an = json_str(json_get(json_get(y, "arg"), "name"));
			if (k && !strcmp(k, "buffer") && an && !strcmp(an, nm))
				bn = json_str(json_get(y, "buffer_name"));
		}
		const char *where = "graph";
		for (int j = 0; bn && j < json_len(outs); j++) {
			cJSON *x;
			const char *k = json_union_tag(json_at(outs, j), &x);
			const char *b2 = k && !strcmp(k, "buffer_mutation") ? json_str(json_get(x, "buffer_name")) : NULL;
			if (b2 && !strcmp(b2, bn)) {
				val = json_str(json_get(json_get(x, "arg"), "name"));
				where = arena_printf(m->a, "output_specs[%d]", j);
			}
		}
		int v = val ? lw_lookup(m, val) : -1;
		if (v < 0) {
			diag_error(m->path, "%s: the new value of buffer '%s' ('%s') was not computed", where, nm, val ? val : "?");
			bad = 1;
			continue;
		}
		if (lw_value_stale(m, val)) {
			diag_error(m->path, "%s: the new value of buffer '%s' is read, %s", where, nm, lw_value_stale(m, val));
			bad = 1;
			continue;
		}
		bad |= commit(m, st, v, where) != 0;
	}
	return bad ? -1 : 0;
}
