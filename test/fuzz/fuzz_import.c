/*
 * fuzz_import.c - the graph importer with weight binding (ir/import.c and
 * ir/import/) on any program.
 *
 * The input is a bundle (graph_bundle.h): the model JSON of a .pt2 and the
 * files of its data/ folder, laid out as an extracted archive (or the JSON
 * with a safetensors file: the --weights form). Mutating a .pt2 whole
 * would spend most inputs on the zip container's checksums and never reach
 * the graph; the bundle puts every byte the importer interprets (graph,
 * tensor metadata, weight configuration, weight bytes) in reach of the
 * mutator while keeping the real weights of the seed export, so that the
 * binding succeeds and the nodes are lowered. The dictionary import.dict
 * holds the export's JSON keys and op names. fuzz_pt2 covers the archive.
 *
 * Each input is imported twice, as `doccc` compiles it and as `doccc check`
 * reads it (a census, which keeps going past unsupported nodes).
 * Properties, beyond no crash and no undefined behaviour:
 *   - import fails with a message, or succeeds with none;
 *   - what import accepts, the verifier accepts: a graph that breaks the
 *     IR's assumptions is rejected at import, with its location;
 *   - every weight import accepted can then be read (consts.c reads them
 *     when the compile needs them): with its bytes, or a message.
 */
#include "graph_bundle.h"

#include "../../ir/ir.h"

static void import_once(const char *path, const char *weights, Census *census)
{
	fuzz_begin();
	Arena *a = arena_new();
	ImportArgs ia = {.path = path, .weights = weights, .census = census};
	Sdfg *g = import_program(a, "fuzz", &ia);
	int errs = fuzz_errors();
	if (!g && !errs) fuzz_fail("import failed without a message");
	if (g && errs) fuzz_fail("import succeeded after %d error(s)", errs);
	if (g && sdfg_verify(g, "import")) fuzz_fail("the verifier rejects a graph that import accepted");
	for (int i = 0; g && i < g->ncs; i++) {
		if (g->cs[i].kind != CK_CONST)
			continue;
		errs = fuzz_errors();
		const void *d = sdfg_const_get(g, i);
		if (!d && fuzz_errors() == errs) fuzz_fail("weight %d could not be read, without a message", i);
		if (d && fuzz_errors() != errs) fuzz_fail("weight %d was read after an error", i);
		sdfg_const_put(g, i);
	}
	arena_free(a);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *weights;
	fuzz_begin();
	const char *path = bundle_write(data, size, &weights);
	import_once(path, weights, NULL);
	Arena *ca = arena_new();
	Census c = {.a = ca};
	import_once(path, weights, &c);
	arena_free(ca);
	return 0;
}
