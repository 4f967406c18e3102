/*
 * check.c - doccc check MODEL (or doccc MODEL --check): what a model needs,
 * before anything is compiled.
 *
 * The program is imported with a census (ir.h): every node's op is counted
 * and lowered exactly as a compile lowers it, so "supported" means that
 * this node, with these arguments, compiles; a node that does not lower
 * carries the message a compile would print. Then the passes run for the
 * target, and for the GPU (the target itself if it is cuda or rocm, else
 * cuda in the same category) to tell whether every step has a GPU
 * expansion or the model would take the host fallback. No C compiler runs
 * and nothing is written.
 *
 * Output: a table on stdout, or with --json one JSON object:
 *   {"input", "target", "category", "supported", "nodes",
 *    "ops": [{"op", "count", "supported", "reason"}],
 *    "dtypes": [{"dtype", "supported"}],
 *    "dynamic_dims": [{"symbol", "min", "max", "compiled_for", "inputs"}],
 *    "states": [{"name", "dtype", "shape", "nbytes", "in_place"}],
 *    "gpu": {"backend", "category", "runs_on_gpu", "host_steps", "reasons"},
 *    "errors": [...]}
 * Exit 0 when everything is supported, 1 when anything is not.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../ir/ir.h"
#include "cmd.h"

typedef struct {
	int runs;            /* 1 on the GPU, 0 host fallback, -1 not known */
	int steps;
	const char *backend, *category;
	const char **why;
	int nwhy, capwhy;
} GpuVerdict;

/* The lines of a captured diagnostic text that carry tag ("error: "),
 * whole: they name the file and the place. */
static void split_msgs(Arena *a, const char *text, const char *tag, const char ***v, int *n, int *cap)
{
	for (const char *p = text; p && *p;) {
		const char *e = p + strcspn(p, "\n");
		const char *t = strstr(p, tag);
		if (t && t < e) {
			const char *msg = arena_strndup(a, p, (size_t)(e - p));
			VEC_PUSH(a, *v, *n, *cap, msg);
		}
		p = *e ? e + 1 : e;
	}
}

/* Passes for the GPU target; the schedule pass lists the steps without a
 * GPU expansion, and why (Sdfg.host_steps). */
static void gpu_verdict(Arena *a, const char *name, const ImportArgs *ia, Options *o, const Target *tg, GpuVerdict *v)
{
	Target gt = *tg;
	v->runs = -1;
	if (!TARGET_IS_GPU(tg)) {
		Options go = *o;
		if (opt_set(&go, "target", backend_default_gpu()->name, "doccc check") || target_resolve(&gt, &go))
			return;
	}
	v->backend = backend_of(&gt)->device;
	v->category = gt.category;
	Buf quiet = {0}, *sink = diag_capture(&quiet);
	ImportArgs gi = *ia;
	gi.census = NULL;
	Sdfg *g = import_program(a, name, &gi);
	int ok = g && passes_run(g, o, &gt, NULL) == 0;
	diag_capture(sink);
	if (ok) {
		v->steps = g->nhost_steps;
		v->runs = g->nhost_steps == 0;
		for (int i = 0; i < g->nhost_steps; i++) {
			const char *why = arena_printf(a, "node '%s': no GPU expansion: %s", g->host_steps[i].node, g->host_steps[i].why);
			VEC_PUSH(a, v->why, v->nwhy, v->capwhy, why);
		}
	}
	buf_free(&quiet);
}

/* Unsupported ops first, then by count, then by name. */
static int op_order(const void *x, const void *y)
{
	const CensusOp *a = x, *b = y;
	if ((a->nbad > 0) != (b->nbad > 0))
		return a->nbad > 0 ? -1 : 1;
	if (a->count != b->count)
		return a->count > b->count ? -1 : 1;
	return strcmp(a->op, b->op);
}

/* "torch.ops.aten.conv2d.default" -> "aten.conv2d.default" */
static const char *op_text(const char *op)
{
	return !strncmp(op, "torch.ops.", 10) ? op + 10 : op;
}

static int dtype_ok(int st)
{
	return dtype_from_torch(st) >= 0;
}

/* The state (what the model keeps across runs) of a program that compiled,
 * and whether a run updates each in place. */
static void print_states(Sdfg *g, Buf *b, int json)
{
	int n = g ? g->nstates : 0;
	if (!json)
		buf_printf(b, "state:%s\n", n ? "" : " none (every run independent)");
	for (int i = 0; i < n; i++) {
		Container *c = sdfg_c(g, g->states[i]);
		if (json) {
			buf_puts(b, i ? ", {\"name\": " : "{\"name\": ");
			buf_quote(b, c->origin);
			buf_printf(b, ", \"dtype\": \"%s\", \"shape\": [", dtype_info[c->dt].name);
		} else {
			buf_puts(b, "  ");
			buf_escape(b, ESC_TERM, c->origin, strlen(c->origin)); /* from the model: not sent to the terminal raw */
			buf_printf(b, "  %s [", dtype_info[c->dt].name);
		}
		for (int d = 0; d < c->rank; d++) {
			int64_t v = 0;
			ex_isint(c->shape[d], &v);
			buf_printf(b, "%s%lld", d ? ", " : "", (long long)v);
		}
		int64_t nb = sdfg_numel(g, g->states[i]) * dtype_info[c->dt].size;
		if (json)
			buf_printf(b, "], \"nbytes\": %lld, \"in_place\": %s}", (long long)nb, c->inplace ? "true" : "false");
		else
			buf_printf(b, "]  %lld bytes, %s\n", (long long)nb,
			           c->inplace ? "updated in place" : "written whole every run (a copy of its new value)");
	}
}

/* The quantized ops of a program that compiled (Sdfg.qsteps) and how each
 * runs; JSON: the elements of an array. Also --report's. */
void print_quant_steps(const Sdfg *g, Buf *b, int json)
{
	int n = g ? g->nqsteps : 0, in = 0;
	for (int i = 0; i < n; i++)
		in += g->qsteps[i].integer;
	if (!json && n)
		buf_printf(b, "quantized ops: %d, %d as integer kernels, %d in float between dequantize and quantize\n", n, in,
		           n - in);
	for (int i = 0; i < n; i++) {
		const QuantStep *q = &g->qsteps[i];
		const char *how = q->integer ? "integer kernel" : "float between dequantize and quantize";
		if (json) {
			buf_puts(b, i ? ", {\"node\": " : "{\"node\": ");
			buf_quote(b, q->node);
			buf_printf(b, ", \"op\": \"%s\", \"runs\": \"%s\"}", q->op, q->integer ? "integer" : "float");
		} else {
			buf_puts(b, "  ");
			buf_escape(b, ESC_TERM, q->node, strlen(q->node)); /* from the model */
			buf_printf(b, "  %s: %s\n", q->op, how);
		}
	}
}

static void print_text(const char *input, const Census *c, const Target *tg, const GpuVerdict *gv, const char **errs,
                       int nerrs, int bad, Sdfg *g)
{
	int nbadops = 0;
	for (int i = 0; i < c->nops; i++)
		nbadops += c->ops[i].nbad > 0;
	printf("%s: %d nodes, %d distinct ops, %d not supported (target %s, category %s)\n", input, c->nnodes, c->nops,
	       nbadops, tg->name, tg->category);
	int w = 2;
	for (int i = 0; i < c->nops; i++)
		if ((int)strlen(op_text(c->ops[i].op)) > w)
			w = (int)strlen(op_text(c->ops[i].op));
	printf("  %5s  %-*s  %s\n", "count", w, "op", "status");
	Buf shown = {0}; /* a custom op's name comes from the model: shown, not sent to the terminal */
	for (int i = 0; i < c->nops; i++) {
		const CensusOp *p = &c->ops[i];
		shown.len = 0;
		buf_putn(&shown, "", 0);
		buf_escape(&shown, ESC_TERM, op_text(p->op), strlen(op_text(p->op)));
		const char *op = shown.s;
		if (!p->nbad)
			printf("  %5d  %-*s  supported\n", p->count, w, op);
		else if (p->nbad == p->count)
			printf("  %5d  %-*s  NOT SUPPORTED: %s\n", p->count, w, op, p->why);
		else
			printf("  %5d  %-*s  NOT SUPPORTED in %d of %d nodes: %s\n", p->count, w, op, p->nbad, p->count, p->why);
	}
	buf_free(&shown);
	printf("dtypes:");
	for (int i = 0; i < c->ndtypes; i++)
		printf(" %s%s", dtype_torch_name(c->dtypes[i]), dtype_ok(c->dtypes[i]) ? "" : " (NOT SUPPORTED)");
	printf("\ndynamic dims:%s\n", c->nsyms ? "" : " none (static shapes)");
	for (int i = 0; i < c->nsyms; i++) {
		const CensusSym *y = &c->syms[i];
		printf("  %s in [%lld, ", y->name, (long long)y->lo);
		if (y->hi == INT64_MAX)
			printf("inf]");
		else
			printf("%lld]", (long long)y->hi);
		if (y->run_time)
			printf(", taken at run time");
		else if (y->value >= 0)
			printf(", compiled for %lld", (long long)y->value);
		printf("%s%s\n", *y->uses ? ": " : "", y->uses);
	}
	Buf st = {0};
	print_states(g, &st, 0);
	print_quant_steps(g, &st, 0);
	fputs(st.s, stdout);
	buf_free(&st);
	if (gv->runs < 0)
		printf("gpu (%s): not known (the model does not compile)\n", gv->backend ? gv->backend : backend_default_gpu()->device);
	else if (gv->runs)
		printf("gpu (%s, %s): runs on the GPU, every step\n", gv->backend, gv->category);
	else {
		printf("gpu (%s, %s): host fallback, %d step%s without a GPU expansion\n", gv->backend, gv->category, gv->steps,
		       gv->steps == 1 ? "" : "s");
		for (int i = 0; i < gv->nwhy; i++) { /* node names come from the model: shown, not sent to the terminal */
			Buf t = {0};
			buf_escape(&t, ESC_TERM, gv->why[i], strlen(gv->why[i]));
			printf("  %s\n", t.s);
			buf_free(&t);
		}
	}
	for (int i = 0; i < nerrs; i++)
		printf("%s\n", errs[i]);
	printf("%s\n", bad ? "result: NOT SUPPORTED" : "result: supported");
}

static void json_str_list(Buf *b, const char **v, int n)
{
	buf_puts(b, "[");
	for (int i = 0; i < n; i++) {
		buf_puts(b, i ? ", " : "");
		buf_quote(b, v[i]);
	}
	buf_puts(b, "]");
}

static void print_json(const char *input, const Census *c, const Target *tg, const GpuVerdict *gv, const char **errs,
                       int nerrs, int bad, Sdfg *g)
{
	Buf b = {0};
	buf_puts(&b, "{\n  \"input\": ");
	buf_quote(&b, input);
	buf_printf(&b, ",\n  \"target\": \"%s\",\n  \"category\": \"%s\",\n  \"supported\": %s,\n  \"nodes\": %d,\n"
	               "  \"ops\": [", tg->name, tg->category, bad ? "false" : "true", c->nnodes);
	for (int i = 0; i < c->nops; i++) {
		const CensusOp *p = &c->ops[i];
		buf_puts(&b, i ? ",\n    {\"op\": " : "\n    {\"op\": ");
		buf_quote(&b, op_text(p->op));
		buf_printf(&b, ", \"count\": %d, \"supported\": %s, \"reason\": ", p->count, p->nbad ? "false" : "true");
		if (p->why)
			buf_quote(&b, p->why);
		else
			buf_puts(&b, "null");
		buf_puts(&b, "}");
	}
	buf_puts(&b, "\n  ],\n  \"dtypes\": [");
	for (int i = 0; i < c->ndtypes; i++)
		buf_printf(&b, "%s{\"dtype\": \"%s\", \"supported\": %s}", i ? ", " : "", dtype_torch_name(c->dtypes[i]),
		           dtype_ok(c->dtypes[i]) ? "true" : "false");
	buf_puts(&b, "],\n  \"dynamic_dims\": [");
	for (int i = 0; i < c->nsyms; i++) {
		const CensusSym *y = &c->syms[i];
		buf_printf(&b, "%s{\"symbol\": ", i ? ", " : "");
		buf_quote(&b, y->name);
		buf_printf(&b, ", \"min\": %lld, \"max\": ", (long long)y->lo);
		if (y->hi == INT64_MAX)
			buf_puts(&b, "null");
		else
			buf_printf(&b, "%lld", (long long)y->hi);
		buf_printf(&b, ", \"run_time\": %s", y->run_time ? "true" : "false");
		if (y->value >= 0 && !y->run_time)
			buf_printf(&b, ", \"compiled_for\": %lld, \"inputs\": ", (long long)y->value);
		else
			buf_puts(&b, ", \"compiled_for\": null, \"inputs\": ");
		buf_quote(&b, y->uses);
		buf_puts(&b, "}");
	}
	buf_puts(&b, "],\n  \"states\": [");
	print_states(g, &b, 1);
	buf_puts(&b, "],\n  \"quantized_ops\": [");
	print_quant_steps(g, &b, 1);
	buf_printf(&b, "],\n  \"gpu\": {\"backend\": \"%s\", \"category\": \"%s\", \"runs_on_gpu\": %s, \"host_steps\": %d, "
	               "\"reasons\": ", gv->backend ? gv->backend : backend_default_gpu()->device, gv->category ? gv->category : tg->category,
	           gv->runs < 0 ? "null" : gv->runs ? "true" : "false", gv->steps);
	json_str_list(&b, gv->why, gv->nwhy);
	buf_puts(&b, "},\n  \"errors\": ");
	json_str_list(&b, errs, nerrs);
	buf_puts(&b, "\n}\n");
	fwrite(b.s, 1, b.len, stdout);
	buf_free(&b);
}

int cmd_check(Arena *a, const char *name, const ImportArgs *ia, Options *o, const Target *tg, int json)
{
	Census c = {0};
	c.a = a;
	ImportArgs ci = *ia;
	ci.census = &c;
	/* messages outside the nodes (file, signature, shapes) and of the passes */
	Buf other = {0}, *sink = diag_capture(&other);
	Sdfg *g = import_program(a, name, &ci);
	int bad = g == NULL || (g && passes_run(g, o, tg, NULL));
	diag_capture(sink);
	const char **errs = NULL;
	int nerrs = 0, caperrs = 0;
	split_msgs(a, other.s, "error: ", &errs, &nerrs, &caperrs);
	buf_free(&other);
	if (c.nops)
		qsort(c.ops, (size_t)c.nops, sizeof *c.ops, op_order);
	for (int i = 0; i < c.nops; i++)
		bad |= c.ops[i].nbad > 0;
	for (int i = 0; i < c.ndtypes; i++)
		bad |= !dtype_ok(c.dtypes[i]);
	GpuVerdict gv = {0};
	gv.runs = -1;
	if (g)
		gpu_verdict(a, name, ia, o, tg, &gv);
	if (json)
		print_json(ia->path, &c, tg, &gv, errs, nerrs, bad, bad ? NULL : g);
	else
		print_text(ia->path, &c, tg, &gv, errs, nerrs, bad, bad ? NULL : g);
	return bad ? EXIT_INPUT : EXIT_OK;
}
