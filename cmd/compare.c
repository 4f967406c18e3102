/*
 * compare.c - `doccc compare GOT_DIR REF_DIR`: the numerics bisector.
 *
 *   doccc compare GOT_DIR REF_DIR [--rtol R] [--atol A] [--json]
 *
 * GOT_DIR is what `doccc run LIB --dump-values GOT_DIR` wrote from a
 * library built with --values: each fused node's values as .npy files and
 * values.json, the nodes in the order a run runs them, each value named by
 * the torch node that computes it. REF_DIR holds the same torch nodes'
 * values from PyTorch (python -m doccc.reference MODEL.pt2 -i X.npy -o
 * REF_DIR), one NAME.npy per node, named by the rule both sides share
 * (run.c's value_file). The values are compared in run order, as doccc run
 * --expect compares outputs, and the first outside the tolerance is named:
 * its node, the largest errors and the worst element, got and expected.
 * Everything after it is likely to differ because it does, so the first
 * is where to look.
 *
 * A value the reference lacks (a name torch does not have) or holds at
 * another shape or kind (a layout of doccc's own) is skipped and counted.
 * Exit 0 when every value compared is within the tolerance, 1 when one is
 * not or on bad input (a message names the file), 2 for usage.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../lib/lib.h"
#include "cmd.h"

static const char usage_text[] =
	"usage: doccc compare GOT_DIR REF_DIR [--rtol R] [--atol A] [--json]\n"
	"  GOT_DIR   doccc run LIB.so -i IN.npy... --dump-values GOT_DIR (LIB built with --values)\n"
	"  REF_DIR   python -m doccc.reference MODEL.pt2 -i IN.npy... -o REF_DIR\n"
	"  --rtol R  relative tolerance (default 1e-4)\n"
	"  --atol A  absolute tolerance (default 1e-5)\n"
	"  --json    the report as one JSON object\n";

typedef struct {
	const char *got, *ref;
	double rtol, atol;
	int json;
} CompareArgs;

/* One value: where it is, and what came of it. */
typedef struct {
	int node;
	const char *node_name, *name, *file;
	const char *skip;     /* why it was not compared, or NULL */
	Cmp cmp;
} Value;

static int usage(const char *fmt, const char *arg)
{
	return arg_usage(usage_text, fmt, arg);
}

static int parse_args(int argc, char **argv, CompareArgs *a)
{
	memset(a, 0, sizeof *a);
	a->rtol = 1e-4;
	a->atol = 1e-5;
	for (int i = 1; i < argc; i++) {
		const char *s = argv[i], *v = NULL;
		if (!strcmp(s, "-h") || !strcmp(s, "--help")) {
			fputs(usage_text, stdout);
			return EXIT_OK;
		}
		if (!strcmp(s, "--json")) {
			a->json = 1;
		} else if (arg_take(argc, argv, &i, "--rtol", &v) || arg_take(argc, argv, &i, "--atol", &v)) {
			char *end;
			double x = v ? strtod(v, &end) : -1;
			if (!v || !*v || *end || !isfinite(x) || x < 0)
				return usage("%s needs a non-negative finite number", s);
			*(s[2] == 'r' ? &a->rtol : &a->atol) = x;
		} else if (s[0] == '-' && s[1]) {
			return usage("unknown option '%s'", s);
		} else if (!a->got) {
			a->got = s;
		} else if (!a->ref) {
			a->ref = s;
		} else
			return usage("unexpected argument '%s' (two directories)", s);
	}
	if (!a->ref)
		return usage("%s", "give the directory doccc run --dump-values wrote and the reference's");
	return -1;
}

/* Compares value v (GOT_DIR/file) with REF_DIR/NAME.npy, or says why not. */
static int compare_value(const CompareArgs *a, Value *v, Npy *got, Npy *ref)
{
	Buf gp = {0}, rp = {0}, rn = {0};
	int rc = 0;
	cmp_value_file(&rn, v->name);
	buf_printf(&gp, "%s/%s", a->got, v->file);
	buf_printf(&rp, "%s/%s", a->ref, rn.s);
	if (!file_exists(rp.s))
		v->skip = "not in the reference";
	else if (npy_read(gp.s, got) != 0 || npy_read(rp.s, ref) != 0)
		rc = -1;
	else if (got->rank != ref->rank || memcmp(got->shape, ref->shape, sizeof(int64_t) * (size_t)got->rank))
		v->skip = "of another shape in the reference";
	else if (cmp_family(got->descr) != cmp_family(ref->descr))
		v->skip = "of another kind in the reference (float, integer, bool)";
	else {
		int64_t n = 1;
		for (int d = 0; d < got->rank; d++)
			n *= got->shape[d];
		cmp_arrays(got->descr, got->data, ref->descr, ref->data, n, a->rtol, a->atol, &v->cmp);
	}
	buf_free(&gp);
	buf_free(&rp);
	buf_free(&rn);
	return rc;
}

/* The first difference's report: text, or the JSON member's value. */
static void put_first(Buf *b, const Value *v, const Npy *got, const Npy *ref, int json)
{
	doccc_tensor_desc t = {v->name, 0, got->rank, got->shape, 1, 0};
	for (int d = 0; d < got->rank; d++)
		t.numel *= got->shape[d];
	if (json) {
		buf_printf(b, "{\"node\": %d, \"node_name\": ", v->node);
		buf_quote(b, v->node_name);
		buf_puts(b, ", \"value\": ");
		buf_quote(b, v->name);
		cmp_put(b, &t, &v->cmp, got->descr, got->data, ref, 1);
		buf_putc(b, '}');
		return;
	}
	Buf nn = {0}, vn = {0}; /* names from the model: shown, not sent to the terminal */
	buf_escape(&nn, ESC_TERM, v->node_name, strlen(v->node_name));
	buf_escape(&vn, ESC_TERM, v->name, strlen(v->name));
	buf_printf(b, "first difference: node %d '%s', value '%s'", v->node, nn.s, vn.s);
	cmp_put(b, &t, &v->cmp, got->descr, got->data, ref, 0);
	buf_putc(b, '\n');
	buf_free(&nn);
	buf_free(&vn);
}

static void report(Buf *b, const CompareArgs *a, const Value *vs, int n, int first, const Npy *got, const Npy *ref)
{
	int compared = 0, skipped = 0, differ = 0;
	for (int i = 0; i < n; i++) {
		compared += !vs[i].skip;
		skipped += vs[i].skip != NULL;
		differ += !vs[i].skip && vs[i].cmp.nbad > 0;
	}
	if (!a->json) {
		buf_printf(b, "compared %d value%s (rtol %g, atol %g); %d skipped\n", compared, compared == 1 ? "" : "s", a->rtol,
		           a->atol, skipped);
		for (int i = 0; i < n; i++)
			if (vs[i].skip) {
				Buf vn = {0};
				buf_escape(&vn, ESC_TERM, vs[i].name, strlen(vs[i].name));
				buf_printf(b, "  skipped node %d's value '%s': %s\n", vs[i].node, vn.s, vs[i].skip);
				buf_free(&vn);
			}
		if (first >= 0) {
			put_first(b, &vs[first], got, ref, 0);
			if (differ > 1)
				buf_printf(b, "%d later value%s differ%s too\n", differ - 1, differ == 2 ? "" : "s", differ == 2 ? "s" : "");
		} else
			buf_puts(b, "every value compared is within the tolerance\n");
		return;
	}
	buf_puts(b, "{\n  \"got\": ");
	buf_quote(b, a->got);
	buf_puts(b, ",\n  \"reference\": ");
	buf_quote(b, a->ref);
	buf_puts(b, ",\n  \"rtol\": ");
	cmp_put_num(b, a->rtol, 15, 1);
	buf_puts(b, ", \"atol\": ");
	cmp_put_num(b, a->atol, 15, 1);
	buf_printf(b, ",\n  \"compared\": %d, \"differing\": %d,\n  \"skipped\": [", compared, differ);
	for (int i = 0, k = 0; i < n; i++)
		if (vs[i].skip) {
			buf_printf(b, "%s\n    {\"node\": %d, \"value\": ", k++ ? "," : "", vs[i].node);
			buf_quote(b, vs[i].name);
			buf_puts(b, ", \"why\": ");
			buf_quote(b, vs[i].skip);
			buf_putc(b, '}');
		}
	buf_puts(b, "],\n  \"first_difference\": ");
	if (first >= 0)
		put_first(b, &vs[first], got, ref, 1);
	else
		buf_puts(b, "null");
	buf_printf(b, ",\n  \"pass\": %s\n}\n", first >= 0 ? "false" : "true");
}

/* GOT_DIR/values.json's values in run order; NULL on a problem (reported). */
static Value *read_index(const char *dir, cJSON **root, int *n)
{
	Buf path = {0};
	size_t len;
	buf_printf(&path, "%s/values.json", dir);
	char *text = file_read(path.s, &len);
	Value *vs = NULL;
	*n = 0;
	*root = text ? json_parse(text, len, path.s) : NULL;
	free(text);
	const cJSON *nodes = *root ? json_get(*root, "nodes") : NULL;
	int64_t version = 0;
	if (*root && (json_int(json_get(*root, "doccc_values"), &version) != 0 || version != 1 || !nodes)) {
		diag_error(path.s, "not the index doccc run --dump-values writes (no \"doccc_values\": 1 and \"nodes\")");
		goto fail;
	}
	if (!*root) {
		if (!text)
			diag_note(dir, "give the directory doccc run LIB.so --dump-values DIR wrote");
		goto fail;
	}
	int cap = 0;
	for (int i = 0; i < json_len(nodes); i++) {
		const cJSON *nd = json_at(nodes, i), *vals = json_get(nd, "values");
		int64_t node = -1;
		const char *nn = json_str(json_get(nd, "name"));
		if (json_int(json_get(nd, "node"), &node) != 0 || !nn || !vals) {
			diag_error(path.s, "nodes[%d]: needs \"node\", \"name\" and \"values\"", i);
			goto fail;
		}
		for (int k = 0; k < json_len(vals); k++) {
			const cJSON *v = json_at(vals, k);
			const char *name = json_str(json_get(v, "name")), *file = json_str(json_get(v, "file"));
			if (!name || !file || !*file || strchr(file, '/') || file[0] == '.') {
				diag_error(path.s, "nodes[%d].values[%d]: needs a \"name\" and a \"file\" in the directory", i, k);
				goto fail;
			}
			if (*n == cap) {
				cap = cap ? 2 * cap : 64;
				Value *nv = realloc(vs, (size_t)cap * sizeof *vs);
				if (!nv) {
					diag_error(path.s, "out of memory");
					goto fail;
				}
				vs = nv;
			}
			vs[(*n)++] = (Value){(int)node, nn, name, file, NULL, {0, 0, 0, -1}};
		}
	}
	buf_free(&path);
	return vs ? vs : calloc(1, sizeof *vs);
fail:
	buf_free(&path);
	free(vs);
	*n = 0;
	return NULL;
}

int cmd_compare(int argc, char **argv)
{
	CompareArgs a;
	int rc = parse_args(argc, argv, &a), n = 0, first = -1;
	if (rc >= 0)
		return rc;
	cJSON *root = NULL;
	Value *vs = read_index(a.got, &root, &n);
	Npy got = {0}, ref = {0}, fg = {0}, fr = {0};   /* fg, fr: the first difference's */
	rc = EXIT_INPUT;
	if (!vs)
		goto done;
	if (!dir_exists(a.ref)) {
		diag_error(a.ref, "no such directory: give the one python -m doccc.reference wrote");
		goto done;
	}
	for (int i = 0; i < n; i++) {
		if (compare_value(&a, &vs[i], &got, &ref) != 0)
			goto done;
		if (first < 0 && !vs[i].skip && vs[i].cmp.nbad > 0) {
			first = i;
			fg = got, fr = ref;
			got = (Npy){0}, ref = (Npy){0};
		}
		npy_free(&got);
		npy_free(&ref);
	}
	Buf b = {0};
	report(&b, &a, vs, n, first, &fg, &fr);
	fputs(b.s, stdout);
	buf_free(&b);
	rc = first >= 0 ? EXIT_INPUT : EXIT_OK;
done:
	npy_free(&got);
	npy_free(&ref);
	npy_free(&fg);
	npy_free(&fr);
	free(vs);
	json_free(root);
	return rc;
}
