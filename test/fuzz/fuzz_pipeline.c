/*
 * fuzz_pipeline.c - import, every pass of the pass table and the source
 * emitter of each backend on any program, without a C compiler.
 *
 * The input is a bundle (graph_bundle.h), as for fuzz_import. For each
 * target below (plain C, SIMD C at two vector widths, OpenMP, CUDA, HIP)
 * the program is imported afresh (the passes change the graph), every pass
 * of pass_table runs in order with the verifier after it, and the
 * backend's printer writes the source and the header into memory: nothing
 * is compiled and nothing is written into the source tree (the bundle goes
 * under DOCC_TMP or TMPDIR).
 *
 * Properties, beyond no crash and no undefined behaviour:
 *   - import and every pass fail with a message or succeed with none;
 *   - the verifier accepts the graph after import and after every pass:
 *     a graph the IR cannot hold is rejected at import, not noticed later;
 *   - a program that imports for one target imports for every target.
 */
#include "graph_bundle.h"

#include "../../backends/emit.h"

static const struct { const char *target, *category; } configs[] = {
	{"none", "server"},
	{"sequential", "edge"},
	{"openmp", "server"},
	{"cuda", "server"},
	{"rocm", "desktop"},
};

/* One target: 1 if the program imported, 0 if not. */
static int pipeline(const char *path, const char *weights, int k)
{
	int ok = 0;
	fuzz_begin();
	Arena *a = arena_new();
	Options o;
	opt_init(&o, a);
	Target tg;
	if (opt_set(&o, "target", configs[k].target, "fuzz") || opt_set(&o, "category", configs[k].category, "fuzz") ||
	    target_resolve(&tg, &o))
		fuzz_fail("target %s does not resolve", configs[k].target);
	ImportArgs ia = {.path = path, .weights = weights};
	Sdfg *g = import_program(a, "fuzz", &ia);
	int errs = fuzz_errors();
	if (!g && !errs) fuzz_fail("import failed without a message");
	if (g && errs) fuzz_fail("import succeeded after %d error(s)", errs);
	if (!g) goto out;
	ok = 1;
	if (sdfg_verify(g, "import")) fuzz_fail("the verifier rejects a graph that import accepted");
	for (int i = 0; i < npasses; i++) {
		const Pass *p = &pass_table[i];
		PassCtx c = {g, &o, &tg, p, arena_new()};
		int rc = p->run(&c);
		arena_free(c.scratch);
		errs = fuzz_errors();
		if (rc && !errs) fuzz_fail("pass %s failed without a message", p->name);
		if (!rc && errs) fuzz_fail("pass %s succeeded after %d error(s)", p->name, errs);
		if (rc) goto out;
		if (sdfg_verify(g, p->name)) fuzz_fail("the verifier rejects the graph after pass %s", p->name);
	}
	if (TARGET_IS_GPU(&tg) && g->nhost_steps)
		goto out; /* doccc builds it for the host: the openmp row covers that */
	Blob w = {0};
	blob_layout(g, &w);
	/* the weights are read now: an entry damaged past its directory fails here */
	int wrc = blob_write(g, &w, NULL);
	errs = fuzz_errors();
	if (wrc && !errs) fuzz_fail("writing the weights failed without a message");
	if (!wrc && errs) fuzz_fail("writing the weights succeeded after %d error(s)", errs);
	if (wrc) goto out;
	BuildArgs ba = {.workdir = "/nonexistent", .outlib = "libfuzz.so", .outhdr = "fuzz.h", .cmdline = "fuzz"};
	Buf src = {0}, hdr = {0};
	emit_source(g, &tg, TARGET_IS_GPU(&tg) ? &printer_gpu : &printer_cpu, &ba, &w, &src);
	emit_h(g, &tg, &ba, &hdr);
	if (fuzz_errors()) fuzz_fail("the emitter reported an error");
	buf_free(&src);
	buf_free(&hdr);
out:
	arena_free(a);
	return ok;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *weights;
	fuzz_begin();
	const char *path = bundle_write(data, size, &weights);
	if (!pipeline(path, weights, 0))
		return 0;
	for (int k = 1; k < (int)COUNTOF(configs); k++)
		if (!pipeline(path, weights, k))
			fuzz_fail("the program imports for target %s but not for %s", configs[0].target, configs[k].target);
	return 0;
}
