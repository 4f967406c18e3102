/*
 * passes.c - the ordered pass table and the pipeline that runs it.
 *
 * Every pass has the same signature, int pass_X(PassCtx *), lives in
 * ir/passes/X.c and is listed here once, in execution order. Options switch
 * passes on and off ("map_fusion.enabled: false", --disable-pass) and set
 * their typed parameters ("expand.tile_m: 8"); the table is the single
 * source for --list-passes and for validating option files. The verifier
 * runs after every pass, and with a dump directory each stage is written as
 * JSON and DOT. Passes never print: they report through diag.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ir.h"

static const PassParam fold_params[] = {
	{"batchnorm", "bool", "true", "fold inference batch norm into the preceding convolution or GEMM", 0, 0, NULL},
	{"elementwise", "bool", "true",
	 "compute elementwise functions of constants (a weight's dequantization, casts and arithmetic on weights) once, "
	 "when the weights are written, instead of on every run", 0, 0, NULL},
};
static const PassParam integer_params[] = {
	{"conv_min_reduction", "int", "64",
	 "rewrite a convolution only if each output sums at least this many products (input channels x taps): below, "
	 "the float kernels' cheaper epilogues win (MobileNet's narrow pointwise layers)", 1, 1 << 30, NULL},
};
static const PassParam tuning_params[] = {
	{"db", "string", "",
	 "the tuning database (SQLite) that doccc tune filled: each step it knows takes the schedule measured best "
	 "there (an input of the compile: the depfile lists it, the cache hashes it); empty: none, unless "
	 "remote_tuning names DOCC_TUNING_DB", 0, 0, NULL},
	{"transfer", "bool", "true",
	 "a step without an entry of its own takes the schedule of the nearest tuned step of its kind (same op, "
	 "kernel, stride, groups and dtypes; the closest sizes)", 0, 0, NULL},
	{"threads", "int", "0", "the entries timed on this many threads (0: for each step, the most threads timed)", 0,
	 4096, NULL},
};
static const PassParam perturb_params[] = {
	{"node", "string", "", "the torch node whose step adds 1 to the first element of its first value", 0, 0, NULL},
};
static const PassParam expand_params[] = {
	{"tile_m", "int", "0", "rows of the convolution/GEMM register tile (0: from the category)", 0, 64, NULL},
	{"tile_n", "int", "0", "columns (output channels) of the register tile (0: from the category)", 0, 256, NULL},
	{"pack_weights", "bool", "true", "repack constant weights into the micro-kernel's layout at compile time", 0, 0, NULL},
	{"winograd", "bool", "true",
	 "SIMD targets: 3x3 stride-1 convolutions by Winograd F(2x2, 3x3): 16 multiplies per 2x2 output tile and "
	 "input channel instead of 36, with input and output transforms", 0, 0, NULL},
	{"winograd_max_mb", "int", "32",
	 "with winograd: only where the transformed tiles (16 values per 2x2 tile, of the inputs and the outputs, of "
	 "every image of the batch) take at most this many MiB: beyond, each phase streams them through memory "
	 "(ResNet-50's 56x56 layers at batch 8, 54 MiB, ran 2.8 times slower per image than at batch 1)",
	 0, 1 << 30, NULL},
	{"pointwise_max_channels", "int", "32",
	 "SIMD targets: 1x1 stride-1 convolutions with at most this many input channels vectorize along the pixels "
	 "(stores of whole vectors) instead of the output channels, whatever their map's size; 0: never",
	 0, INT32_MAX, NULL},
	{"pointwise_min_pixels", "int", "64",
	 "SIMD targets: and so do those whose maps have at least this many pixels (H x W), whatever their channels: "
	 "ResNet-50's 56x56 to 14x14 layers, not its 7x7 ones (49 pixels fill 4 vectors of 16); 0: every map of a "
	 "vector at least",
	 0, INT32_MAX, NULL},
	{"rows_form", "bool", "true",
	 "SIMD targets: a convolution whose output rows are one register tile wide (7x7 maps on the server) and whose "
	 "sums run in blocks (sum_block) loops over the blocks outside its rows, per block of output channels, so that "
	 "a block's weights stay in L1 while every row reads them; a 1x1 one's tile is then up to 4 vectors wide. The "
	 "same sums, bit for bit", 0, 0, NULL},
	{"sum_block", "int", "128",
	 "CPU targets: a convolution's or matrix product's float32 sums run in blocks of about this many products, "
	 "each summed apart and then added in order, so that the rounding error of a long reduction (ResNet-50's "
	 "4608 products, a 4096-wide linear layer) stays within eager's; 0: one chain per output", 0, 1 << 30, NULL},
	{"attention_scores_mb", "int", "256",
	 "GPU targets: attention whose scores (batch x heads x queries x keys) fit this many MiB runs as two tiled "
	 "contractions and a softmax through device memory; 0: one query row per block (no scores in memory)",
	 0, 1 << 20, NULL},
	{"int8_weights", "bool", "true",
	 "a GEMM whose constant weights are a dequantized int8 tensor (PT2E, torchao weight-only int8 and int4) keeps "
	 "them int8 in its packed panels, a quarter of the bytes, and dequantizes them in registers, bit for bit as "
	 "the folded weights", 0, 0, NULL},
	{"int4_weights", "bool", "true",
	 "with int8_weights: integers that all fit 4 bits (torchao's int4: -8..7; uint4: 0..15) are kept two to a "
	 "byte, an eighth of float32's bytes, split in registers (a decode step) or once per panel (whole row "
	 "tiles): half the weight bytes a decode step reads", 0, 0, NULL},
	{"int8_dot", "string", "auto",
	 "CPU targets: the integer kernels' products: pairs (int16 pairs, pmaddwd; vpdpwssd with VNNI), quads (four "
	 "bytes per instruction, vpdpbusd: the activations unsigned, an int8 one shifted by 128 with its zero point; "
	 "without VNNI an exact emulation, for tests) or auto (quads where --march has AVX-VNNI or AVX512-VNNI)",
	 0, 0, "auto|pairs|quads"},
	{"attention_bound", "bool", "true",
	 "CPU targets: a masked attention first finds, from its mask, one past the last key any query may attend "
	 "and runs its key loops only that far (a decode step early in a long static KV cache costs what it would "
	 "in a short one); false: every key", 0, 0, NULL},
};
static const PassParam schedule_params[] = {
	{"vectorize", "bool", "true", "mark unit-stride innermost maps as SIMD (sequential, openmp)", 0, 0, NULL},
	{"parallel", "bool", "true", "run outermost maps on threads (openmp)", 0, 0, NULL},
	{"min_parallel_work", "int", "32768", "do not parallelize maps with fewer scalar operations than this", 0,
	 INT64_MAX, NULL},
};

static const PassParam gpu_plan_params[] = {
	{"tiled", "bool", "true",
	 "contractions (GEMM, batched matmul, convolution) as square tiles of outputs per block through shared memory",
	 0, 0, NULL},
	{"tile", "string", "auto",
	 "the tiles' side: auto (the largest of 64, 32, 16 whose tiles give every SM a block), or 16, 32, 64 "
	 "(tensor-core tiles take 32 at least)", 0, 0, "auto|16|32|64"},
	{"tensor_cores", "bool", "true",
	 "tiles on tensor cores (CUDA sm_80+) where contraction_precision or the dtypes allow: tf32, bf16, fp16, int8", 0, 0,
	 NULL},
	{"cooperative", "bool", "true",
	 "a grid of few iterations with long inner loops (norms, softmax rows, a GEMV) as one block per iteration", 0, 0,
	 NULL},
	{"block_reduce", "bool", "true", "a whole-tensor reduction as one block and a shared-memory tree (else one thread)",
	 0, 0, NULL},
	{"block", "string", "auto", "threads per block of grid, cooperative and reduction kernels (auto: the category's)",
	 0, 0, "auto|32|64|128|256|512|1024"},
};

const Pass pass_table[] = {
	{"dce", "remove nodes and containers that no output depends on", pass_dce, 1, 0, "dce", NULL, 0},
	{"fold_constants", "precompute constant parts: batch norm folded into convolution weights, elementwise "
	 "functions of weights (dequantization) computed once", pass_fold_constants, 1, 0,
	 "folded", fold_params, COUNTOF(fold_params)},
	{"state", "update state (a KV cache, a counter) in place where its old value is dead: a cache update writes its "
	 "new rows only", pass_state, 1, 0, "stated", NULL, 0},
	{"integer", "CPU targets: a GEMM or convolution between dequantizations (int8/uint8 activations per tensor, int8 "
	 "weights per channel) reads the integers and becomes an integer kernel: int32 sums of int8 products, rescaled "
	 "once", pass_integer, 1, 0, "integer", integer_params, COUNTOF(integer_params)},
	{"tuning", "CPU targets: the schedules of a tuning database for the steps it knows, measured by doccc tune "
	 "(convolutions and GEMMs: register tile, Winograd, pixels, threads; other ops on openmp: threads); the rules' "
	 "elsewhere", pass_tuning, 1, 0, "tuned",
	 tuning_params, COUNTOF(tuning_params)},
	{"expand", "expand library nodes into maps and tasklets (tiled micro-kernels for convolution and GEMM)", pass_expand, 1,
	 1, "expanded", expand_params, COUNTOF(expand_params)},
	{"map_fusion", "fuse elementwise consumers into the loop nest of their producer", pass_map_fusion, 1, 0, "fused", NULL, 0},
	{"dce_late", "remove containers and tasklets made dead by fusion", pass_dce, 1, 0, "cleaned", NULL, 0},
	{"schedule", "choose loop schedules for the target: threads, SIMD, unrolling", pass_schedule, 1, 0, "scheduled",
	 schedule_params, COUNTOF(schedule_params)},
	{"gpu_plan", "GPU targets: each kernel's form (grid, tiled contraction, cooperative block, block reduction, one "
	 "thread), tiles, threads and tensor-core use", pass_gpu_plan, 1, 1, "gpu-planned", gpu_plan_params,
	 COUNTOF(gpu_plan_params)},
	{"memplan", "place transients in one arena, reusing memory by liveness", pass_memplan, 1, 1, "planned", NULL, 0},
	{"perturb", "CPU targets, for tests of the numerics bisector (doccc compare) only: make one step's value wrong on "
	 "purpose; last, so that the stages before it keep their numbers", pass_perturb, 0, 0, "perturbed", perturb_params,
	 COUNTOF(perturb_params)},
};
const int npasses = COUNTOF(pass_table);

static const Pass *find_pass(const char *name, size_t n)
{
	for (int i = 0; i < npasses; i++)
		if (strlen(pass_table[i].name) == n && !strncmp(pass_table[i].name, name, n))
			return &pass_table[i];
	return NULL;
}

static const PassParam *find_param(const Pass *p, const char *name)
{
	for (int i = 0; i < p->nparams; i++)
		if (!strcmp(p->params[i].name, name))
			return &p->params[i];
	return NULL;
}

static int parse_bool(const char *s, int *out)
{
	static const char *const t[] = {"true", "True", "TRUE", "yes", "on", "1", NULL};
	static const char *const f[] = {"false", "False", "FALSE", "no", "off", "0", NULL};
	for (int i = 0; t[i]; i++)
		if (!strcmp(s, t[i]))
			return *out = 1, 0;
	for (int i = 0; f[i]; i++)
		if (!strcmp(s, f[i]))
			return *out = 0, 0;
	return -1;
}

static int parse_int(const char *s, int64_t *out)
{
	char *e;
	if (!*s)
		return -1;
	errno = 0;
	*out = strtoll(s, &e, 10);
	return *e || errno ? -1 : 0;
}

/* Is s one of the '|'-separated choices? */
static int one_of(const char *choices, const char *s)
{
	size_t n = strlen(s);
	for (const char *p = choices; *p;) {
		const char *e = strchr(p, '|');
		size_t k = e ? (size_t)(e - p) : strlen(p);
		if (k == n && !strncmp(p, s, n))
			return 1;
		p += k + (e != NULL);
	}
	return 0;
}

int passes_check_options(const Options *o)
{
	int bad = 0;
	for (int i = 0; i < o->npassopts; i++) {
		const PassOpt *po = &o->passopts[i];
		const char *dot = strchr(po->key, '.');
		const Pass *p = find_pass(po->key, dot ? (size_t)(dot - po->key) : strlen(po->key));
		if (!p) {
			diag_warn(po->loc, "unknown pass '%.*s' in pass option '%s' ignored (see doccc --list-passes)",
			          dot ? (int)(dot - po->key) : (int)strlen(po->key), po->key, po->key);
			continue;
		}
		const char *param = dot ? dot + 1 : "";
		int b;
		int64_t v;
		if (!strcmp(param, "enabled")) {
			if (parse_bool(po->val, &b)) {
				diag_error(po->loc, "pass option '%s' must be a bool (got '%s')", po->key, po->val);
				bad = 1;
			} else if (!b && p->required) {
				diag_error(po->loc, "pass '%s' is required and cannot be disabled", p->name);
				bad = 1;
			}
			continue;
		}
		const PassParam *pp = find_param(p, param);
		if (!pp) {
			diag_warn(po->loc, "pass '%s' has no option '%s'; ignored", p->name, param);
			continue;
		}
		if ((!strcmp(pp->type, "bool") && parse_bool(po->val, &b)) || (!strcmp(pp->type, "int") && parse_int(po->val, &v))) {
			diag_error(po->loc, "pass option '%s' must be %s %s (got '%s')", po->key, pp->type[0] == 'i' ? "an" : "a",
			           pp->type, po->val);
			bad = 1;
		} else if (!strcmp(pp->type, "int") && (v < pp->min || v > pp->max)) {
			diag_error(po->loc, "pass option '%s' must be from %lld to %lld (got %lld)", po->key, (long long)pp->min,
			           (long long)pp->max, (long long)v);
			bad = 1;
		} else if (pp->choices && !one_of(pp->choices, po->val)) {
			diag_error(po->loc, "pass option '%s' must be one of %s (got '%s')", po->key, pp->choices, po->val);
			bad = 1;
		}
	}
	return bad ? -1 : 0;
}

static const char *param_value(PassCtx *c, const char *param)
{
	char key[128];
	snprintf(key, sizeof key, "%s.%s", c->pass->name, param);
	const PassOpt *po = opt_find_passopt(c->opts, key);
	if (po)
		return po->val;
	const PassParam *pp = find_param(c->pass, param);
	DOCC_ASSERT(pp);
	return pp->dflt;
}

int64_t pass_int(PassCtx *c, const char *param)
{
	int64_t v = 0;
	parse_int(param_value(c, param), &v);
	return v;
}

int pass_bool(PassCtx *c, const char *param)
{
	int b = 0;
	parse_bool(param_value(c, param), &b);
	return b;
}

const char *pass_str(PassCtx *c, const char *param)
{
	return param_value(c, param);
}

static int pass_enabled(const Pass *p, const Options *o)
{
	char key[128];
	snprintf(key, sizeof key, "%s.enabled", p->name);
	const PassOpt *po = opt_find_passopt(o, key);
	int b = p->enabled;
	if (po)
		parse_bool(po->val, &b);
	return b || p->required;
}

static int dump_stage(Sdfg *g, const char *dir, int k, const char *stage)
{
	Buf b = {0};
	int rc = sdfg_dump_json(g, &b);
	char *p = arena_printf(g->arena, "%s/%02d-%s.json", dir, k, stage);
	rc |= file_write(p, b.s, b.len);
	b.len = 0;
	sdfg_dump_dot(g, &b);
	p = arena_printf(g->arena, "%s/%02d-%s.dot", dir, k, stage);
	rc |= file_write(p, b.s, b.len);
	buf_free(&b);
	return rc;
}

const Pass *pass_find(const char *name)
{
	return find_pass(name, strlen(name));
}

int passes_run_one(Sdfg *g, const Options *o, const Target *t, const Pass *p)
{
	int i = (int)(p - pass_table), errs = diag_errors();
	DOCC_ASSERT(i >= 0 && i < npasses && npasses <= (int)COUNTOF(g->pass_ms));
	PassCtx c = {g, o, t, p, arena_new()};
	struct timespec t0, t1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	int rc = p->run(&c);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	g->pass_ms[i] = 1e3 * (double)(t1.tv_sec - t0.tv_sec) + 1e-6 * (double)(t1.tv_nsec - t0.tv_nsec);
	arena_free(c.scratch);
	/* a pass that reported an error failed, whatever it returned */
	if (rc || diag_errors() != errs)
		return -1;
	return sdfg_verify(g, p->name) ? -1 : 0;
}

int passes_run(Sdfg *g, const Options *o, const Target *t, const char *dumpdir)
{
	if (dumpdir && (mkdir_p(dumpdir) || dump_stage(g, dumpdir, 0, "imported")))
		return -1;
	if (sdfg_verify(g, "import"))
		return -1;
	for (int i = 0; i < npasses; i++)
		g->pass_ms[i] = -1;
	return passes_run_span(g, o, t, dumpdir, 0, npasses);
}

int passes_run_span(Sdfg *g, const Options *o, const Target *t, const char *dumpdir, int from, int to)
{
	DOCC_ASSERT(from >= 0 && from <= to && to <= npasses);
	if (from < to)
		progress_phase("running passes");
	for (int i = from; i < to; i++) {
		const Pass *p = &pass_table[i];
		if (!pass_enabled(p, o))
			continue;
		progress_detail("(%s)", p->name);
		if (passes_run_one(g, o, t, p))
			return -1;
		if (dumpdir && dump_stage(g, dumpdir, i + 1, p->stage))
			return -1;
	}
	return 0;
}
