/*
 * report.c - --report FILE: what was compiled, how, and where the time went,
 * as one JSON object (the final SDFG included, as --dump-sdfg writes it).
 */
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "cmd.h"

/* "gpu_kernels": the kernel launches of one run, from the GPU plan (ir.h),
 * each named as in the source (the step's function, _kN), and
 * "gpu_launches_per_run", their count with the host loops' repeats. */
typedef struct {
	Buf *b;
	Sdfg *g;
	const char *fn, *label;
	const char **names;      /* symbols as the source names them: the run-time dims dc_dK */
	long long n;
	int any;
} Kernels;

static void put_kernel(Node *k, void *ctx)
{
	Kernels *ks = ctx;
	const GpuPlan *p = k->gpu;
	if (p->grid == 0)
		return; /* an empty grid: not launched */
	static const char *const kinds[NGPUKINDS] = {[GK_GRID] = "grid-stride", [GK_COOP] = "block-cooperative",
	                                            [GK_REDUCE] = "block-reduce", [GK_SINGLE] = "single-thread"};
	Buf *b = ks->b;
	buf_printf(b, "%s\n    {\"kernel\": \"%s_k%d\", \"node\": ", ks->any++ ? "," : "", ks->fn, p->kernel);
	buf_quote(b, ks->label);
	if (p->kind == GK_TILED)
		buf_printf(b, ", \"kind\": \"tiled-%s\", \"grid\": ", mma_info[p->mma].name);
	else
		buf_printf(b, ", \"kind\": \"%s\", \"grid\": ", kinds[p->kind]);
	if (p->grid > 0)
		buf_printf(b, "%lld", (long long)p->grid);
	else {
		Buf t = {0}, x = {0};
		ex_print_names(&t, ks->g, p->iters, ks->names);
		buf_printf(&x, "(unsigned)((%s) + %d - 1) / %d < %lld ? (unsigned)(((%s) + %d - 1) / %d) : %lld", t.s, p->block,
		           p->block, (long long)p->grid_cap, t.s, p->block, p->block, (long long)p->grid_cap);
		buf_quote(b, x.s);
		buf_free(&t);
		buf_free(&x);
	}
	buf_printf(b, ", \"block\": %d, \"shared_bytes\": %lld, \"tile\": %d, \"per_run\": %lld}", p->block,
	           (long long)p->shared, p->tile, (long long)p->per_run);
	ks->n += p->per_run;
}

static void put_kernels(Buf *b, Sdfg *g, const char *const *stepfn)
{
	Kernels ks = {b, g, NULL, NULL, arena_alloc(g->arena, sizeof(char *) * (size_t)(g->nsyms + 1)), 0, 0};
	for (int k = 0; k < g->ndims; k++)
		ks.names[g->dims[k]] = arena_printf(g->arena, "dc_d%d", k);
	buf_puts(b, "  \"gpu_kernels\": [");
	for (int i = 0; i < g->root->nkids; i++) {
		ks.fn = stepfn[i];
		ks.label = g->root->kids[i]->label ? g->root->kids[i]->label : "";
		gpu_plan_walk(g->root->kids[i], put_kernel, &ks);
	}
	buf_printf(b, "\n  ],\n  \"gpu_launches_per_run\": %lld,\n", ks.n);
}

int report_write(const char *path, Sdfg *g, const Target *t, const char *input, const BuildArgs *ba,
                 const Times *tm)
{
	Buf b = {0};
	int64_t wbytes = 0;
	for (int i = 0; i < g->ncs; i++)
		if (g->cs[i].kind == CK_CONST && !g->cs[i].dead)
			wbytes += sdfg_numel(g, i) * dtype_info[g->cs[i].dt].size;
	buf_puts(&b, "{\n  \"doccc_version\": ");
	buf_quote(&b, DOCCC_VERSION);
	buf_puts(&b, ",\n  \"input\": ");
	buf_quote(&b, input);
	buf_printf(&b, ",\n  \"input_sha256\": \"%s\",\n  \"name\": ", g->hash);
	buf_quote(&b, g->name);
	buf_printf(&b, ",\n  \"target\": \"%s\",\n  \"category\": \"%s\",\n  \"march\": ", t->name, t->category);
	buf_quote(&b, backend_of(t)->simd || t->gpu ? t->march : ""); /* the GPU architecture on cuda/rocm */
	/* docc's on_compile information: name, target, category (above),
	 * device_resident, device_backend, sdfg (below) */
	int dev = TARGET_IS_GPU(t);
	buf_printf(&b, ",\n  \"device_resident\": %s,\n  \"device_backend\": %s,\n  \"simulated\": %s,\n"
	              "  \"host_fallback\": %s", dev ? "true" : "false",
	           dev ? arena_printf(g->arena, "\"%s\"", t->name) : "null", t->simulate ? "true" : "false",
	           t->fallback ? "true" : "false");
	buf_printf(&b, ",\n  \"vector_bits\": %d,\n  \"dims\": ", t->vec_bits);
	buf_quote(&b, g->specialized ? g->specialized : "");
	buf_puts(&b, ",\n  \"library\": ");
	buf_quote(&b, ba->outlib);
	buf_puts(&b, ",\n  \"header\": ");
	buf_quote(&b, ba->outhdr);
	buf_printf(&b, ",\n  \"weights_bytes\": %lld,\n  \"workspace_bytes\": %lld,\n", (long long)wbytes,
	           (long long)g->arena_size);
	/* run-time dims: their ranges and the workspace's bound */
	buf_puts(&b, "  \"run_time_dims\": [");
	for (int k = 0; k < g->ndims; k++) {
		const Symbol *y = &g->syms[g->dims[k]];
		buf_puts(&b, k ? ", {\"name\": " : "{\"name\": ");
		buf_quote(&b, y->name);
		buf_printf(&b, ", \"min\": %lld, \"max\": ", (long long)y->lo);
		buf_printf(&b, y->hi < INT32_MAX ? "%lld}" : "null}", (long long)y->hi);
	}
	buf_puts(&b, "],\n");
	if (g->ndims) { /* sized at create for the largest dims, or grown by set_dims */
		int64_t at_create, mx = memplan_max_bytes(g, &at_create);
		buf_printf(&b, "  \"workspace\": {\"bound\": \"%s\", \"bytes_at_create\": %lld, \"max_bytes\": ",
		           at_create == mx ? "max_dims" : "on_demand", (long long)at_create);
		buf_printf(&b, mx >= 0 ? "%lld},\n" : "null},\n", (long long)mx);
	}
	/* peak resident memory of doccc itself: VmHWM of /proc/self/status,
	 * which starts afresh at exec (ru_maxrss does not: it keeps the peak of
	 * the process doccc was started from), else ru_maxrss. Not its
	 * compilers': a child started by posix_spawn shares doccc's memory
	 * until it execs, and Linux then books doccc's peak to the child. */
	struct rusage self = {0};
	getrusage(RUSAGE_SELF, &self);
	long long peak = (long long)self.ru_maxrss * 1024;
	char *st = file_exists("/proc/self/status") ? file_read("/proc/self/status", NULL) : NULL;
	const char *hwm = st ? strstr(st, "\nVmHWM:") : NULL;
	if (hwm)
		peak = strtoll(hwm + 7, NULL, 10) * 1024;
	free(st);
	buf_printf(&b, "  \"peak_rss_bytes\": %lld,\n", peak);
	/* the most bytes of constants doccc held at once (ir/consts.c) */
	int64_t held;
	sdfg_const_held(g, &held);
	buf_printf(&b, "  \"weights_held_peak_bytes\": %lld,\n", (long long)held);
	buf_printf(&b, "  \"time_ms\": {\"import\": %.3f, \"passes\": %.3f, \"build\": %.3f, \"build_steps\": {", tm->import_ms,
	           tm->passes_ms, tm->build_ms);
	static const char *const steps[] = BUILD_STEPS;
	for (size_t i = 0; i < COUNTOF(steps); i++)
		buf_printf(&b, "%s\"%s\": %.3f", i ? ", " : "", steps[i], ba->step_ms[i]);
	buf_puts(&b, "}, \"per_pass\": {");
	for (int i = 0, k = 0; i < npasses; i++) {
		if (g->pass_ms[i] < 0)
			continue;
		buf_printf(&b, "%s\"%s\": %.3f", k++ ? ", " : "", pass_table[i].name, g->pass_ms[i]);
	}
	buf_puts(&b, "}},\n  \"aten_ops\": {");
	for (int i = 0; i < g->ncensus; i++) {
		buf_puts(&b, i ? ", " : "");
		buf_quote(&b, g->census_ops[i]);
		buf_printf(&b, ": %d", g->census_counts[i]);
	}
	buf_puts(&b, "},\n  \"quantized_ops\": [");
	print_quant_steps(g, &b, 1);
	buf_puts(&b, "],\n  \"fused_nodes\": [");
	for (int i = 0; i < g->root->nkids; i++) {
		buf_puts(&b, i ? ",\n    " : "\n    ");
		buf_quote(&b, g->root->kids[i]->label ? g->root->kids[i]->label : "");
	}
	buf_puts(&b, "\n  ],\n");
	if (ba->stepfn) /* a GPU run: its kernel launches in order, as the GPU plan has them */
		put_kernels(&b, g, ba->stepfn);
	buf_puts(&b, "  \"sdfg\": ");
	if (sdfg_dump_json(g, &b)) { /* the final stage, as --dump-sdfg writes it */
		buf_free(&b);
		return -1;
	}
	while (b.len && (b.s[b.len - 1] == '\n'))
		b.s[--b.len] = 0;
	buf_puts(&b, "\n}\n");
	int rc = file_write(path, b.s, b.len);
	buf_free(&b);
	return rc;
}

