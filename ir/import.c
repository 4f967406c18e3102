/*
 * import.c - torch.export programs into the SDFG: the importer's driver.
 *
 * Reads the serialized ExportedProgram (schema major 8) from a .pt2 archive,
 * a bare JSON file (with --weights FILE.safetensors) or an extracted
 * archive, checks its signature, binds the export's shape symbols
 * (ir/import/shapes.c), makes a container for every user input and weight
 * (ir/import/weights.c: weights are bound through signature.input_specs,
 * never by guessing from names), then lowers every node in graph order and
 * binds the outputs. The result is a flat root sequence of library-node
 * blocks; all later work happens on the IR.
 *
 * The importer is the layer above the lowerings (ir/lower/): it drives
 * them through their API (lower.h: messages, the value map, argument
 * binding, metadata, run-time dims), and they never call back into it.
 * Per node: every unsupported op and dtype is reported; the node's
 * arguments are bound against its op's schema (ir/lower/args.c); a node
 * that touches a run-time dim but whose lowering does not take them stops
 * the dynamic import (dyn_gate), which is retried with every dim at the
 * example's size; then the lowering runs, its new containers are checked,
 * and aliases and in-place writes are tracked (ir/lower/api.c).
 *
 * Problems are reported with the file and the node ("m.pt2: graph.nodes[3]
 * (node 'fft_r2c'): error: ..." plus a note with the first stack-trace
 * line); after a failed node, placeholders stand for its outputs so that
 * every problem of the graph is reported before import fails. doccc check
 * counts what it sees (ir/import/census.c).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cJSON.h>

#include "ir.h"
#include "lower/lower.h"
#include "import/import.h"

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

/* ---- the signature: inputs, outputs ---------------------------------------------- */

static int import_inputs(Imp *m)
{
	cJSON *sig = json_get(json_get(json_get(m->ep, "graph_module"), "signature"), "input_specs");
	int bad = 0, nuser = 0;
	/* placeholders are the first containers: one per spec */
	int nfqn = m->nfqn = m->g->ncs + 2 * json_len(sig) + 1; /* a state: its initial value too */
	m->fqn = arena_alloc(m->a, sizeof(char *) * (size_t)nfqn);
	memset(m->fqn, 0, sizeof(char *) * (size_t)nfqn);
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
			if (!nm)
				diag_error(m->path, "input_specs[%d]: malformed user_input (its tensor has no name)", i);
			int id = nm ? lw_new_value(m, nm, CK_INPUT) : -1;
			if (id < 0) {
				bad = 1;
				continue;
			}
			sdfg_c(m->g, id)->io = nuser++;
			sdfg_c(m->g, id)->written = state_written(m, nm);
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
		if (lw_meta(m, nm, &mt) || lw_check_dtype(m, &mt, nm)) {
			bad = 1;
			continue;
		}
		const WeightSrc *ws = weight_load(m, fqn, isconst, &mt, nm);
		int id = ws ? lw_new_value(m, nm, CK_CONST) : -1;
		if (id < 0) {
			bad = 1;
			continue;
		}
		sdfg_const_source(m->g, id, weight_make, ws);
		if (id < nfqn)
			m->fqn[id] = arena_printf(m->a, "%s '%s'", !strcmp(kind, "tensor_constant") ? "constant" : kind, fqn);
		if (!strcmp(kind, "buffer") && state_written(m, nm)) {
			int st = state_new(m, nm, id);
			if (st < nfqn)
				m->fqn[st] = m->fqn[id];
		}
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
		int c = lw_lookup(m, nm);
		if (c < 0) {
			diag_error(m->path, "output_specs[%d]: output '%s' was not computed", i, nm);
			bad = 1;
			continue;
		}
		if (lw_value_stale(m, nm)) {
			diag_error(m->path, "output_specs[%d]: output '%s' is read, %s", i, nm, lw_value_stale(m, nm));
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
			int o = lw_copy(m, c, arena_printf(m->a, "%s_out", nm));
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

/* The target of the node that gives value `name`, without "torch.ops.";
 * NULL if no node does. */
static const char *value_op(Imp *m, const char *name)
{
	cJSON *nodes = json_get(m->graph, "nodes");
	for (int i = 0; name && i < json_len(nodes); i++) {
		cJSON *node = json_at(nodes, i), *outs = json_get(node, "outputs");
		for (int k = 0; k < json_len(outs); k++) {
			cJSON *v;
			const char *tag = json_union_tag(json_at(outs, k), &v);
			int many = tag && !strcmp(tag, "as_tensors");
			for (int j = 0; tag && j < (many ? json_len(v) : 1); j++) {
				const char *on = json_str(json_get(many ? json_at(v, j) : v, "name"));
				if (on && !strcmp(on, name)) {
					const char *t = json_str(json_get(node, "target"));
					return t && !strncmp(t, "torch.ops.", 10) ? t + 10 : t;
				}
			}
		}
	}
	return NULL;
}

/* A mutation in the signature (output_specs[i], of kind `kind`, spec x):
 * 0 for a buffer the model keeps as state or an input it writes; else 1 after saying what was
 * mutated and by which op, and what to do. Batch norm is blamed
 * only where the buffer is its running statistics (updated by a batch-norm
 * op) or its batch counter; any other buffer is state the model keeps
 * across calls, a cache or a counter. */
static int mutation_error(Imp *m, int i, const char *kind, const cJSON *x)
{
	int buf = !strcmp(kind, "buffer_mutation"), par = !strcmp(kind, "parameter_mutation");
	const char *what = json_str(json_get(x, buf ? "buffer_name" : par ? "parameter_name" : "user_input_name"));
	const char *val = json_str(json_get(json_get(x, "arg"), "name")), *op = value_op(m, val);
	const char *by = op ? arena_printf(m->a, " (by %s)", op) : "";
	size_t n = what ? strlen(what) : 0, c = strlen("num_batches_tracked");
	if (!what)
		what = "?";
	if (buf && op && strstr(op, "batch_norm"))
		diag_error(m->path, "output_specs[%d]: the graph updates buffer '%s' in forward%s: the running statistics "
		                    "of a training-mode batch norm, which doccc does not compute: doccc compiles inference only (call "
		                    "model.eval() before export)", i, what, by);
	else if (buf && n >= c && !strcmp(what + n - c, "num_batches_tracked"))
		diag_error(m->path, "output_specs[%d]: the graph updates buffer '%s' in forward%s: the batch counter of a "
		                    "training-mode batch norm, which doccc does not compute: doccc compiles inference only (call "
		                    "model.eval() before export)", i, what, by);
	else if (!par)
		return 0; /* state the model keeps across calls, or the caller's buffer written: ir/import/state.c */
	else
		diag_error(m->path, "output_specs[%d]: the graph mutates parameter '%s' in forward%s: doccc compiles inference "
		                    "only, and keeps a model's state in buffers: register the state with register_buffer",
		           i, what, by);
	return 1;
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
			bad |= mutation_error(m, i, kind, x);
		} else if (strcmp(kind, "user_output")) {
			diag_error(m->path, "output_specs[%d]: '%s' outputs are not supported", i, kind);
			bad = 1;
		}
	}
	return bad ? -1 : 0;
}

/* ---- the nodes ------------------------------------------------------------------- */

/* After a node failed: placeholder containers for its outputs, so later
 * nodes still resolve their arguments and report their own problems. */
static void bind_placeholders(Imp *m, const cJSON *node)
{
	cJSON *outs = json_get(node, "outputs");
	for (int k = 0; k < json_len(outs); k++) {
		const char *on = lw_out_name(node, k);
		Meta mt;
		if (!on || lw_lookup(m, on) >= 0 || lw_meta(m, on, &mt))
			continue;
		int64_t one = 1;
		int ok = mt.dt >= 0;
		int id = sdfg_add_container(m->g, on, ok ? (Dtype)mt.dt : DT_F32, CK_TRANSIENT, ok ? mt.rank : 1, ok ? mt.shape : &one);
		lw_bind(m, on, id);
	}
}

static int import_node(Imp *m, cJSON *node, const char *target);

static int import_nodes(Imp *m)
{
	cJSON *nodes = json_get(m->graph, "nodes");
	int bad = 0;
	if (json_len(nodes) > DOCC_MAX_NODES) {
		diag_error(m->path, "graph.nodes: the graph is too large (%d nodes; doccc's limit is %d)", json_len(nodes), DOCC_MAX_NODES);
		return -1;
	}
	int nnodes = json_len(nodes);
	progress_phase("importing");
	for (int i = 0; i < json_len(nodes); i++) {
		cJSON *node = json_at(nodes, i);
		const char *target = json_str(json_get(node, "target"));
		progress_detail("node %d of %d", i + 1, nnodes);
		m->nodei = i;
		m->nodename = json_str(json_get(node, "name"));
		if (!m->nodename)
			m->nodename = lw_out_name(node, 0);
		m->nodename = arena_strdup(m->a, m->nodename ? m->nodename : "?");
		m->trace = first_trace_line(m, json_str(json_get(json_get(node, "metadata"), "stack_trace")));
		m->failed = 0;
		if (!target) {
			lw_error(m, "node has no target");
			bad = 1;
			continue;
		}
		if (m->need_static)
			break;
		Buf msgs = {0}, *sink = m->census ? diag_capture(&msgs) : NULL;
		int nodebad = import_node(m, node, target);
		if (m->census) {
			diag_capture(sink);
			census_node(m->census, target, nodebad, msgs.s);
			buf_free(&msgs);
		}
		bad |= nodebad;
	}
	m->nodename = NULL;
	m->trace = NULL;
	return bad ? -1 : 0;
}

/* The node's outputs as the lowerings read them: each a tensor with a
 * name, or something other than a tensor (as_none, a symbolic value). */
static int check_outputs(Imp *m, const cJSON *node)
{
	cJSON *outs = json_get(node, "outputs");
	if (!cJSON_IsArray(outs)) {
		lw_error(m, "node has no outputs list");
		return -1;
	}
	for (int k = 0; k < json_len(outs); k++) {
		cJSON *x;
		const char *tag = json_union_tag(json_at(outs, k), &x);
		if (!tag || (!strcmp(tag, "as_tensor") && !json_str(json_get(x, "name")))) {
			lw_error(m, "outputs[%d] is malformed (a tensor output needs a name)", k);
			return -1;
		}
	}
	return 0;
}

/* ---- run-time dims: which lowerings take them ---------------------------------------
 * A lowering reads sizes as numbers (Meta.shape, lw_dim, V_INT arguments),
 * which with run-time dims are the export's example values; only the
 * lowerings listed here build their IR from the expressions instead
 * (Meta.x, lw_dimx, Val.x), those marked ints also for the size arguments
 * of the node. A node of any other lowering that touches a run-time dim
 * stops the dynamic import, and the program is imported again with every
 * dim specialized, with a note naming the node. */
static const struct {
	const char *lowering;
	int ints;               /* takes SymInt arguments of run-time dims */
} dyn_lowerings[] = {
	{"sym_query", 1}, {"assert_scalar", 1}, {"unary", 0}, {"binary", 1}, {"clamp", 0}, {"linear", 0}, {"gemm", 0},
	{"view", 1}, {"conv", 0}, {"batchnorm", 0}, {"pool", 0}, {"reduce", 0}, {"gather", 0}, {"arange", 1}, {"fill", 1},
	{"cat", 0}, {"stack", 0}, {"where", 0}, {"cast", 0}, {"softmax", 0}, {"norm", 1}, {"attention", 0}, {"noop", 1},
	{"dropout", 0}, {"split", 0}, {"tri", 0}, {"assert_async", 0}, {"remap", 0},
	{"square", 0}, {"lerp", 0}, {"nan_to_num", 0}, {"round_decimals", 0}, {"sort", 0}, {"vnorm", 0},
	{"upsample", 0}, {"argred", 0}, {"scan", 0}, {"one_hot", 0}, {"glu", 0}, {"scatter", 0}, {"index_op", 0},
};

const char *import_dyn_lowering(int i)
{
	return i >= 0 && i < (int)(sizeof dyn_lowerings / sizeof dyn_lowerings[0]) ? dyn_lowerings[i].lowering : NULL;
}

static int dyn_ready(const char *lowering, int *ints)
{
	for (size_t i = 0; i < sizeof dyn_lowerings / sizeof dyn_lowerings[0]; i++)
		if (!strcmp(dyn_lowerings[i].lowering, lowering)) {
			*ints = dyn_lowerings[i].ints;
			return 1;
		}
	return 0;
}

/* 0 if the node may be lowered with run-time dims; -1 (m->need_static
 * set, nothing reported) if not. */
static int dyn_gate(Imp *m, const cJSON *node)
{
	if (!m->ndyn || m->need_static)
		return m->need_static ? -1 : 0;
	int touch = m->argdyn, ints = 0;
	for (int i = 0; i < m->info->nargs && !touch; i++) {
		Val *v = &m->args[i];
		if (v->k == V_TENSOR && v->t >= 0)
			touch = lw_dynamic(m, v->t);
		for (int k = 0; v->k == V_TENSORS && k < v->n && !touch; k++)
			touch = v->ts[k] >= 0 && lw_dynamic(m, v->ts[k]);
	}
	for (int k = 0; k < json_len(json_get(node, "outputs")) && !touch; k++) {
		const char *on = lw_out_name(node, k);
		Meta mt;
		touch = on && json_get(m->tvals, on) && lw_read_meta(m, json_get(m->tvals, on), &mt, on) == 0 && mt.dyn;
	}
	if (!touch || (dyn_ready(m->info->lowering, &ints) && (ints || !m->argdyn)))
		return 0;
	m->need_static = arena_printf(m->a, "node '%s' (%s%s) takes its sizes as numbers", m->nodename,
	                              strncmp(m->info->schema, "aten::", 6) ? "" : "aten.", m->info->target);
	return -1;
}

/* One node: 0 if it lowered, -1 if not (reported). */
static int import_node(Imp *m, cJSON *node, const char *target)
{
	/* Every unsupported dtype among the outputs (their sizes are read by
	 * the lowering: a data-dependent one may be bound there). */
	for (int k = 0; k < json_len(json_get(node, "outputs")); k++) {
		const char *on = lw_out_name(node, k);
		int64_t st;
		if (!on || json_int(json_get(json_get(m->tvals, on), "dtype"), &st))
			continue;
		lw_census_dtype(m->census, (int)st);
		if (dtype_from_torch((int)st) < 0 && !strstr(on, "_unused_"))
			lw_error(m, "dtype %s of value '%s' is not supported", dtype_torch_name((int)st), on);
	}
	census_add(m->g, target);
	if (strncmp(target, "torch.ops.", 10) && lw_python_op(m, node, target))
		return m->failed ? -1 : 0;
	/* aten rows are named without their namespace ("conv2d.default"),
	 * the other namespaces' with it ("transformers.grouped_mm_fallback.default") */
	const char *ov = !strncmp(target, "torch.ops.aten.", 15) ? target + 15 : !strncmp(target, "torch.ops.", 10) ? target + 10 : NULL;
	m->info = ov ? aten_find(ov) : NULL;
	if (!m->info) {
		const char *why = ov ? aten_unsupported(ov) : NULL;
		lw_error(m, "unsupported operator '%s': %s", ov && ov == target + 15 ? arena_printf(m->a, "aten.%s", ov) : target,
		         why ? why : "doccc has no lowering for it yet (doccc --list-ops lists the supported overloads)");
	}
	int from = m->g->ncs;
	m->argdyn = 0;
	if (m->info && !m->failed && check_outputs(m, node) == 0 && lw_bind_args(m, node) == 0 && dyn_gate(m, node) == 0 &&
	    m->info->lower(m, node) == 0 && !m->failed && lw_check_new_containers(m, from) == 0) {
		lw_track_aliases(m, node);
		lw_rebind_mutated(m, node);
		return m->failed ? -1 : 0;   /* an in-place write to state fails the node */
	}
	if (m->need_static)
		return -1;
	if (!m->failed) /* a lowering that gave up on input it did not expect */
		lw_error(m, "malformed node: doccc cannot lower it as recorded");
	/* keep going: report every problem of the graph */
	bind_placeholders(m, node);
	return -1;
}

/* ---- input files ----------------------------------------------------------------- */

static void close_zip(void *z)
{
	pt2_close(z);
}

static void close_st(void *st)
{
	st_close(st);
}

/* Is path a zip archive (its first four bytes)? -1 reported, and so are
 * an empty file and a .pt2 that is neither a zip nor JSON, which the JSON
 * reader would call malformed JSON. */
static int is_zip(const char *path)
{
	char head[4];
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n = fd < 0 ? -1 : read(fd, head, sizeof head);
	int err = n < 0 ? errno : 0;
	if (fd >= 0)
		close(fd);
	if (err) {
		diag_error(path, "cannot read: %s", strerror(err));
		return -1;
	}
	if (n == 0) {
		diag_error(path, "the file is empty: expected a .pt2 archive (torch.export.save) or an ExportedProgram's JSON");
		return -1;
	}
	if (n == 4 && !memcmp(head, "PK\003\004", 4))
		return 1;
	size_t l = strlen(path);
	if (l >= 4 && !strcmp(path + l - 4, ".pt2") && (!head[0] || !strchr("{ \t\r\n", head[0]))) { /* JSON may start with blanks */
		diag_error(path, "not a zip archive, as a .pt2 from torch.export.save is, and not JSON");
		return -1;
	}
	return 0;
}

/* The archive and the safetensors file stay open as long as the graph's
 * arena: the weights are read from them when the compile needs them. */
static int open_input(Imp *m, const ImportArgs *args, char **text, size_t *len)
{
	ImpFiles *f = m->files;
	int zip = is_zip(args->path);
	if (zip < 0)
		return -1;
	if (zip) {
		f->zip = pt2_open(args->path);
		if (!f->zip)
			return -1;
		arena_defer(m->a, close_zip, f->zip);
		if (!pt2_has(f->zip, "models/model.json")) {
			/* torch.export.save always names the model "model" */
			diag_error(args->path, "archive has no models/model.json: not a torch.export .pt2 (torch 2.9 or later)");
			return -1;
		}
		*text = pt2_read(f->zip, "models/model.json", len);
		if (!*text)
			return -1;
		m->path = arena_printf(m->a, "%s", args->path);
		size_t l2;
		char *w = pt2_has(f->zip, "data/weights/model_weights_config.json") ? pt2_read(f->zip, "data/weights/model_weights_config.json", &l2) : NULL;
		if (w) {
			f->wcfg = json_parse(w, l2, arena_printf(m->a, "%s:data/weights/model_weights_config.json", args->path));
			free(w);
			if (!f->wcfg)
				return -1;
		} else if (pt2_has(f->zip, "data/weights/model.pt")) {
			diag_error(args->path, "weights are pickled (an archive from torch 2.8 or older); re-export with torch 2.9 or later");
			return -1;
		}
		char *c = pt2_has(f->zip, "data/constants/model_constants_config.json") ? pt2_read(f->zip, "data/constants/model_constants_config.json", &l2) : NULL;
		if (c) {
			f->ccfg = json_parse(c, l2, arena_printf(m->a, "%s:data/constants/model_constants_config.json", args->path));
			free(c);
			if (!f->ccfg)
				return -1;
		}
		return 0;
	}
	if (!(*text = file_read(args->path, len)))
		return -1;
	m->path = args->path;
	if (args->weights) {
		Safetensors *st = arena_alloc(m->a, sizeof *st);
		if (st_open(st, args->weights))
			return -1;
		arena_defer(m->a, close_st, st);
		f->st = st;
		f->stpath = args->weights;
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
			f->wcfg = w ? json_parse(w, l2, cfg) : NULL;
			free(w);
			if (!f->wcfg)
				return -1;
			char *ccfgp = arena_printf(m->a, "%sdata/constants/model_constants_config.json", root);
			if (file_exists(ccfgp)) {
				char *c = file_read(ccfgp, &l2);
				f->ccfg = c ? json_parse(c, l2, ccfgp) : NULL;
				free(c);
				if (!f->ccfg)
					return -1;
			}
			f->dir = root;
		}
	}
	return 0;
}

static Sdfg *import_once(Arena *a, const char *name, const ImportArgs *args, const char **need_static);

static Sdfg *import_dyn(Arena *a, const char *name, const ImportArgs *args);

/* With run-time dims a node whose lowering reads sizes as numbers stops the
 * import (dyn_gate); its messages so far are dropped, and the program is
 * imported again with every dim at the export's example size. A program
 * whose import reported an error is not imported, whatever the step that
 * reported it returned (the long make fuzz found a split whose missing
 * tensor_values entry was reported and then skipped as an unused output,
 * and doccc wrote a library after the error). */
Sdfg *import_program(Arena *a, const char *name, const ImportArgs *args)
{
	int nerr = diag_errors();
	Sdfg *g = import_dyn(a, name, args);
	return diag_errors() > nerr ? NULL : g;
}

static Sdfg *import_dyn(Arena *a, const char *name, const ImportArgs *args)
{
	if (args->fixed)
		return import_once(a, name, args, NULL);
	Buf msgs = {0};
	int nerr = diag_errors();
	Buf *sink = diag_capture(&msgs);
	const char *why = NULL;
	Sdfg *g = import_once(a, name, args, &why);
	diag_capture(sink);
	if (!why) {
		if (msgs.len) {
			if (sink)
				buf_puts(sink, msgs.s);
			else
				progress_puts(msgs.s);
		}
		buf_free(&msgs);
		return g;
	}
	buf_free(&msgs);
	diag_rewind(nerr);
	if (args->census) { /* counted again by the second import */
		Census *c = args->census;
		c->nops = c->nnodes = c->ndtypes = c->nsyms = 0;
	}
	ImportArgs fixed = *args;
	fixed.fixed = 1;
	fixed.nmaxdims = 0;
	diag_note(args->path, "the library is specialized to the export's example sizes: %s; doccc compiles it "
	                      "for run-time dims once that op takes them (--dynamic=no says this without the note)", why);
	return import_once(a, name, &fixed, NULL);
}

static Sdfg *import_once(Arena *a, const char *name, const ImportArgs *args, const char **need_static)
{
	Imp mm, *m = &mm;
	ImpFiles files;
	memset(m, 0, sizeof *m);
	memset(&files, 0, sizeof files);
	m->files = &files;
	m->a = a;
	m->path = args->path;
	char *text = NULL;
	size_t len = 0;
	Sdfg *g = NULL;
	progress_phase("reading %s", path_base(args->path));
	if (open_input(m, args, &text, &len))
		goto out;
	m->ep = json_parse(text, len, files.zip ? arena_printf(a, "%s:models/model.json", args->path) : args->path);
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
	m->census = args->census;
	int bad = check_signature(m);
	if (bad || shapes_bind(m, args))
		goto out;
	if (m->census)
		census_syms(m);
	bad |= state_scan(m);
	bad |= import_inputs(m);
	if (bad)
		goto out;
	bad |= import_nodes(m);
	if (!bad)
		bad |= import_outputs(m);
	if (!bad)
		bad |= state_commit(m);
	if (!bad)
		lw_quant_steps(m->g);
	if (!bad)
		g = m->g;
	if (m->need_static && need_static)
		*need_static = m->need_static, g = NULL;
out:
	free(text);
	if (m->ep)
		json_free(m->ep);
	if (files.wcfg)
		json_free(files.wcfg);
	if (files.ccfg)
		json_free(files.ccfg);
	return g;
}
