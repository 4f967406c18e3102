/*
 * doccc.c - the command-line driver: parse argv, resolve options (YAML file
 * < flags), import, run the passes, build, and map failures to exit codes.
 *
 *   doccc MODEL.pt2|MODEL.json [options]      compile
 *   doccc run LIB -i IN.npy ... -o OUT.npy    run a compiled library (run.c)
 *   doccc check MODEL [--json]                what the model needs (check.c)
 *
 * Exit codes (cmd.h): 0 ok, 1 bad input or unsupported model, 2 usage,
 * 3 the external compiler failed. Outputs are produced in a temporary
 * working directory and installed only when everything succeeded, so a
 * failure leaves nothing partial behind.
 */
#include <errno.h>
#include <strings.h>
#include <unistd.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "../backends/backend.h"
#include "../ir/ir.h"
#include "cmd.h"

static const char usage_text[] =
	"usage: doccc MODEL.pt2|MODEL.json [options]\n"
	"       doccc run LIB.so -i IN.npy... -o OUT.npy... [--repeat N] [--threads N]\n"
	"       doccc check MODEL.pt2|MODEL.json [-t T] [-c C] [--json]\n"
	"\n"
	"Compile a torch.export program into a shared library and a C header.\n"
	"\n"
	"  -t, --target T        none, sequential, openmp, cuda, rocm (default none)\n"
	"  -c, --category C      edge, desktop, server (default server)\n"
	"  -o, --output OUT      DIR/ or an existing directory: DIR/libNAME.so and DIR/NAME.h;\n"
	"                        PATH.so: that library, NAME.h beside it (default: .)\n"
	"  -n, --name NAME       model name and symbol prefix (default: from the input file)\n"
	"      --options FILE    YAML options file (flags win over it)\n"
	"      --weights FILE    safetensors weights for a bare ExportedProgram JSON\n"
	"      --shape IN=D0,D1  sizes of input IN's dynamic dims (repeatable)\n"
	"      --dim SYM=N       value of the export's shape symbol SYM, e.g. s0=8 (repeatable)\n"
	"      --march ARCH      ISA for clang -march (default: from the category; 'native');\n"
	"                        on cuda/rocm the GPU architecture (sm_90, gfx90a)\n"
	"      --offload-arch A  GPU architecture for cuda/rocm (as --march; wins over DOCC_CUDA_ARCH)\n"
	"      --simulate        cuda/rocm: compile the device code for this CPU (runs without a GPU)\n"
	"      --pass-opt P.K=V  set a pass option, e.g. expand.tile_m=8 (repeatable)\n"
	"      --disable-pass P  switch a pass off (repeatable)\n"
	"      --emit-source     also write NAME.c\n"
	"      --external-weights  write NAME.weights; create() maps it\n"
	"      --dump-sdfg DIR   write the SDFG after every stage (JSON and DOT)\n"
	"      --report FILE     write a JSON report: ops, fused nodes, sizes, times\n"
	"      --keep-temps      keep the working directory\n"
	"      --check           compile nothing: print the op census (count, supported or\n"
	"                        not and why), dtypes, dynamic dims and whether the model\n"
	"                        runs on the GPU; exit 1 if anything is unsupported\n"
	"      --json            with --check: the same as one JSON object\n"
	"  -v, --verbose         print each command run\n"
	"      --list-passes | --list-options | --list-ops\n"
	"  -h, --help | --version\n"
	"\n"
	"Exit status: 0 ok, 1 bad input or unsupported model, 2 usage, 3 compiler failed.\n"
	"See doccc(1).\n";

/* Why the -n NAME v cannot name a model (it prefixes every symbol of the
 * library and its header, which is C++ too), or NULL when it can. */
static const char *name_problem(const char *v)
{
	if (strlen(v) > 64)
		return "is longer than 64 characters";
	if (v[0] >= '0' && v[0] <= '9')
		return "starts with a digit";
	for (const char *p = v; *p; p++)
		if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') || *p == '_'))
			return "is not a C identifier";
	if (c_is_keyword(v))
		return "is a C or C++ keyword";
	if (v[0] == '_' && (v[1] == '_' || (v[1] >= 'A' && v[1] <= 'Z')))
		return "is reserved to the C implementation (it starts with __ or _ and a capital)";
	return NULL;
}

static int usage_error(const char *fmt, const char *arg)
{
	fprintf(stderr, "doccc: error: ");
	fprintf(stderr, fmt, arg);
	fprintf(stderr, "\n");
	fputs("usage: doccc MODEL.pt2|MODEL.json [options] (doccc --help for more)\n", stderr);
	return EXIT_USAGE;
}

static void list_passes(void)
{
	for (int i = 0; i < npasses; i++) {
		const Pass *p = &pass_table[i];
		printf("%-16s %s%s\n", p->name, p->doc, p->required ? " (required)" : p->enabled ? "" : " (off by default)");
		for (int k = 0; k < p->nparams; k++)
			printf("  %s.%s  %s, default %s: %s\n", p->name, p->params[k].name, p->params[k].type, p->params[k].dflt,
			       p->params[k].doc);
	}
}

static void list_options(void)
{
	for (int i = 0; i < opt_ntable; i++) {
		const OptionInfo *o = &opt_table[i];
		printf("%-22s %-8s default %-8s %s%s%s%s\n", o->name, o->type, o->dflt, o->doc, *o->values ? " [" : "", o->values,
		       *o->values ? "]" : "");
	}
	printf("\nEnvironment: DOCC_TMP (working directories), DOCC_DEBUG (dump;build), DOCC_REUSE_BINARIES,\n"
	       "DOCC_CUDA_ARCH (cuda architecture, e.g. sm_86 or cuda:sm_86). Pass options: see --list-passes.\n");
}

static void list_ops(void)
{
	printf("# supported ATen overloads: overload, lowering, schema (library node kinds:");
	for (int i = 0; i < NLIBOPS; i++)
		printf(" %s", op_name(i));
	printf(")\n");
	for (int i = 0; i < NATENOPS; i++) {
		const AtenInfo *a = aten_info(i);
		printf("%-48s %-10s %s\n", a->target, a->lowering, a->schema);
	}
	printf("# known and not supported: overload, reason\n");
	const char *why, *t;
	for (int i = 0; (t = aten_unsupported_row(i, &why)); i++)
		printf("%-48s unsupported  %s\n", t, why);
}

/* DOCC_REUSE_BINARIES: builds are cached under $DOCC_TMP/doccc-cache/KEY/,
 * KEY a hash of the doccc version, the input file's bytes, the weights
 * file, the resolved target and every option that changes the output.
 *
 * An entry holds the outputs and MANIFEST, one line "SHA256 NAME" per
 * output. It is built in a fresh KEY.tmp.XXXXXX beside it and renamed into
 * place whole, so concurrent doccc processes sharing the cache see an entry
 * complete or not at all (the first rename wins; a later one finds the
 * place taken and drops its copy). Before an entry is used every file is
 * read and its sha256 checked against MANIFEST; a missing, truncated or
 * altered file makes the entry stale (a note under -v): the model is
 * compiled again and the new entry replaces the old one. */
static int env_true(const char *name)
{
	const char *v = getenv(name);
	return v && *v && strcmp(v, "0") && strcasecmp(v, "false") && strcasecmp(v, "no") && strcasecmp(v, "off");
}

static int hash_file(Sha256 *h, const char *path)
{
	size_t len;
	char *data = file_read(path, &len);
	if (!data)
		return -1;
	sha256_update(h, data, len);
	free(data);
	return 0;
}

static char *cache_dir(Arena *a, const char *input, const char *weights, const char *key)
{
	Sha256 h;
	unsigned char d[32];
	char hex[65];
	sha256_init(&h);
	sha256_update(&h, DOCCC_VERSION, strlen(DOCCC_VERSION) + 1);
	sha256_update(&h, key, strlen(key) + 1);
	if (hash_file(&h, input) || (weights && hash_file(&h, weights)))
		return NULL;
	sha256_final(&h, d);
	sha256_hex(d, hex);
	const char *base = getenv("DOCC_TMP");
	if (!base || !*base)
		base = getenv("TMPDIR");
	if (!base || !*base)
		base = "/tmp";
	return arena_printf(a, "%s/doccc-cache/%.32s", base, hex);
}

enum { NOUTS = 4 };

/* The outputs of ba (NULL where not made) and their permission bits. */
static void cache_outputs(const BuildArgs *ba, const char *outs[NOUTS], int modes[NOUTS])
{
	const char *o[NOUTS] = {ba->outlib, ba->outhdr, ba->outsrc, ba->outweights};
	static const int m[NOUTS] = {0755, 0644, 0644, 0644};
	for (int i = 0; i < NOUTS; i++) {
		outs[i] = o[i];
		modes[i] = m[i];
	}
}

/* The hash MANIFEST man gives file name (its lines are "HEX  NAME\n",
 * HEX 64 digits), or NULL. */
static const char *manifest_hash(const char *man, const char *name)
{
	size_t n = strlen(name);
	for (const char *l = man; l && *l; l = strchr(l, '\n'), l = l ? l + 1 : l)
		if (strspn(l, "0123456789abcdef") == 64 && !strncmp(l + 64, "  ", 2) && !strncmp(l + 66, name, n) &&
		    (l[66 + n] == '\n' || !l[66 + n]))
			return l;
	return NULL;
}

/* Install the outputs from cache entry dir. 0: done; 1: the entry is not
 * usable (why in *why, nothing written); -1: writing an output failed
 * (reported, what was written removed). */
static int cache_reuse(Arena *a, const BuildArgs *ba, const char *dir, const char **why)
{
	const char *outs[NOUTS];
	int modes[NOUTS];
	char *data[NOUTS] = {0};
	size_t len[NOUTS] = {0};
	cache_outputs(ba, outs, modes);
	Buf quiet = {0};
	diag_capture(&quiet);
	char *man = file_read(arena_printf(a, "%s/MANIFEST", dir), NULL);
	*why = man ? NULL : "MANIFEST is missing";
	for (int i = 0; i < NOUTS && !*why; i++) {
		if (!outs[i])
			continue;
		const char *nm = path_base(outs[i]);
		data[i] = file_read(arena_printf(a, "%s/%s", dir, nm), &len[i]);
		char hex[65];
		if (data[i])
			sha256_hex_of(data[i], len[i], hex);
		const char *want = manifest_hash(man, nm);
		if (!data[i])
			*why = arena_printf(a, "%s is missing", nm);
		else if (!want)
			*why = arena_printf(a, "%s is not in MANIFEST", nm);
		else if (strncmp(want, hex, 64))
			*why = arena_printf(a, "%s does not match its sha256 in MANIFEST", nm);
	}
	free(man);
	diag_capture(NULL);
	buf_free(&quiet);
	int rc = *why ? 1 : 0;
	for (int i = 0; i < NOUTS && rc == 0; i++) {
		if (!outs[i] || file_write_mode(outs[i], data[i], len[i], modes[i]) == 0)
			continue;
		for (int j = 0; j < i; j++)
			if (outs[j])
				unlink(outs[j]);
		rc = -1;
	}
	for (int i = 0; i < NOUTS; i++)
		free(data[i]);
	return rc;
}

/* Store the installed outputs as cache entry dir (see above). replace:
 * the entry there is stale and goes; else one that is there was stored by
 * another doccc first and stays. Quiet: the build succeeded whatever
 * happens to the cache. */
static void cache_store(Arena *a, const BuildArgs *ba, const char *dir, int replace)
{
	const char *outs[NOUTS];
	int modes[NOUTS];
	cache_outputs(ba, outs, modes);
	Buf quiet = {0}, man = {0};
	diag_capture(&quiet);
	const char *parent = arena_strndup(a, dir, (size_t)(path_base(dir) - dir));
	char *tmp = arena_printf(a, "%s.tmp.XXXXXX", dir);
	if (mkdir_p(parent) != 0 || !mkdtemp(tmp)) {
		diag_capture(NULL);
		buf_free(&quiet);
		return;
	}
	tmp_register(tmp);
	int ok = 1;
	for (int i = 0; i < NOUTS && ok; i++) {
		if (!outs[i])
			continue;
		size_t len;
		char hex[65], *data = file_read(outs[i], &len);
		ok = data && file_write_mode(arena_printf(a, "%s/%s", tmp, path_base(outs[i])), data, len, modes[i]) == 0;
		if (ok) {
			sha256_hex_of(data, len, hex);
			buf_printf(&man, "%s  %s\n", hex, path_base(outs[i]));
		}
		free(data);
	}
	ok = ok && file_write(arena_printf(a, "%s/MANIFEST", tmp), man.s, man.len) == 0;
	if (ok && rename(tmp, dir) != 0 && replace) {
		char *old = arena_printf(a, "%s.old", tmp);
		tmp_register(old);
		if (rename(dir, old) == 0)
			(void)rename(tmp, dir);
		(void)rm_rf(old);
		tmp_unregister(old);
	}
	(void)rm_rf(tmp); /* nothing left there once renamed into place */
	tmp_unregister(tmp);
	diag_capture(NULL);
	buf_free(&quiet);
	buf_free(&man);
}

static double now_ms(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return 1e3 * (double)t.tv_sec + 1e-6 * (double)t.tv_nsec;
}

/* --report FILE: what was compiled, how, and where the time went (JSON). */
static int write_report(const char *path, Sdfg *g, const Target *t, const char *input, const BuildArgs *ba,
                        double import_ms, double passes_ms, double build_ms)
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
	buf_quote(&b, t->kind == TG_NONE ? "" : t->march); /* the GPU architecture on cuda/rocm */
	/* docc's on_compile information: name, target, category (above),
	 * device_resident, device_backend, sdfg (below) */
	int dev = TARGET_IS_GPU(t);
	buf_printf(&b, ",\n  \"device_resident\": %s,\n  \"device_backend\": %s,\n  \"simulated\": %s,\n"
	              "  \"host_fallback\": %s", dev ? "true" : "false",
	           dev ? (t->kind == TG_CUDA ? "\"cuda\"" : "\"rocm\"") : "null", t->simulate ? "true" : "false",
	           t->fallback ? "true" : "false");
	buf_printf(&b, ",\n  \"vector_bits\": %d,\n  \"dims\": ", t->vec_bits);
	buf_quote(&b, g->specialized ? g->specialized : "");
	buf_puts(&b, ",\n  \"library\": ");
	buf_quote(&b, ba->outlib);
	buf_puts(&b, ",\n  \"header\": ");
	buf_quote(&b, ba->outhdr);
	buf_printf(&b, ",\n  \"weights_bytes\": %lld,\n  \"workspace_bytes\": %lld,\n", (long long)wbytes,
	           (long long)g->arena_size);
	buf_printf(&b, "  \"time_ms\": {\"import\": %.3f, \"passes\": %.3f, \"build\": %.3f, \"per_pass\": {", import_ms,
	           passes_ms, build_ms);
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
	buf_puts(&b, "},\n  \"fused_nodes\": [");
	for (int i = 0; i < g->root->nkids; i++) {
		buf_puts(&b, i ? ",\n    " : "\n    ");
		buf_quote(&b, g->root->kids[i]->label ? g->root->kids[i]->label : "");
	}
	buf_puts(&b, "\n  ],\n  \"sdfg\": ");
	sdfg_dump_json(g, &b); /* the final stage, as --dump-sdfg writes it */
	while (b.len && (b.s[b.len - 1] == '\n'))
		b.s[--b.len] = 0;
	buf_puts(&b, "\n}\n");
	int rc = file_write(path, b.s, b.len);
	buf_free(&b);
	return rc;
}

/* Does DOCC_DEBUG contain key? (';' or ':' separated) */
static int debug_has(const char *key)
{
	const char *d = getenv("DOCC_DEBUG");
	size_t n = strlen(key);
	while (d && *d) {
		const char *e = d + strcspn(d, ";:");
		if ((size_t)(e - d) >= n && !strncmp(d, key, n) && (d[n] == 0 || d[n] == ';' || d[n] == ':' || d[n] == '='))
			return 1;
		d = *e ? e + 1 : e;
	}
	return 0;
}

/* The compile command; every allocation hangs off arena a, which main
 * frees on every path (sanitizer builds then show any other leak). */
static int compile_main(Arena *a, Buf *cmdline, int argc, char **argv)
{
	Options o;
	opt_init(&o, a);
	const char *input = NULL, *out = NULL, *name = NULL, *optfile = NULL, *weights = NULL, *dumpdir = NULL;
	const char *report = NULL;
	int emit_source = 0, external = 0, simulate = 0, check = 0, json = 0;
	/* CLI settings are applied after the YAML file; collect them first. */
	const char *set_key[64], *set_val[64];
	int nset = 0;
	const char *popts[128];
	int npopts = 0;
	const char *shapes[64], *dims[64];
	int nshapes = 0, ndims = 0;
	const char *dimkey = "";
	for (int i = 1; i < argc; i++) {
		const char *s = argv[i];
		const char *v = NULL;
#define TAKE(flag)                                                            \
	(!strcmp(s, flag) ? (i + 1 < argc ? (v = argv[++i], 1) : (v = NULL, 1)) \
	                  : (!strncmp(s, flag "=", strlen(flag) + 1) ? (v = s + strlen(flag) + 1, 1) : 0))
		if (!strcmp(s, "-h") || !strcmp(s, "--help")) {
			fputs(usage_text, stdout);
			return EXIT_OK;
		} else if (!strcmp(s, "--version")) {
			printf("doccc %s\n", DOCCC_VERSION);
			return EXIT_OK;
		} else if (!strcmp(s, "--list-passes")) {
			list_passes();
			return EXIT_OK;
		} else if (!strcmp(s, "--list-options")) {
			list_options();
			return EXIT_OK;
		} else if (!strcmp(s, "--list-ops")) {
			list_ops();
			return EXIT_OK;
		} else if (!strcmp(s, "-v") || !strcmp(s, "--verbose")) {
			spawn_verbose = 1;
		} else if (!strcmp(s, "--keep-temps")) {
			tmp_keep = 1;
		} else if (!strcmp(s, "--emit-source")) {
			emit_source = 1;
		} else if (!strcmp(s, "--external-weights")) {
			external = 1;
		} else if (!strcmp(s, "--simulate")) {
			simulate = 1;
		} else if (!strcmp(s, "--check")) {
			check = 1;
		} else if (!strcmp(s, "--json")) {
			json = 1;
		} else if (TAKE("-t") || TAKE("--target") || TAKE("-c") || TAKE("--category") || TAKE("--march") ||
		           TAKE("--offload-arch")) {
			if (!v)
				return usage_error("option '%s' needs a value", s);
			const char *key = s[1] == 't' || !strncmp(s, "--target", 8) ? "target"
			                  : s[1] == 'c' || !strncmp(s, "--category", 10) ? "category" : "march";
			const char *const *allowed = !strcmp(key, "target") ? target_names : !strcmp(key, "category") ? category_names : NULL;
			int ok = !allowed;
			for (int k = 0; allowed && allowed[k]; k++)
				ok |= !strcmp(allowed[k], v);
			if (!ok || !*v) {
				fprintf(stderr, "doccc: error: unknown %s '%s' (expected one of:", key, v);
				for (int k = 0; allowed && allowed[k]; k++)
					fprintf(stderr, " %s", allowed[k]);
				fprintf(stderr, ")\n");
				return EXIT_USAGE;
			}
			if (nset == 64)
				return usage_error("%s", "too many options");
			set_key[nset] = key;
			set_val[nset++] = v;
			buf_printf(cmdline, "%s%s=%s", cmdline->len ? " " : "", key, v);
		} else if (TAKE("-o") || TAKE("--output")) {
			if (!v || !*v)
				return usage_error("option '%s' needs a value", s);
			out = v;
		} else if (TAKE("-n") || TAKE("--name")) {
			if (!v || !*v)
				return usage_error("option '%s' needs a value", s);
			const char *why = name_problem(v);
			if (why) {
				Buf m = {0};
				buf_puts(&m, "model name '");
				buf_escape(&m, ESC_TERM, v, strlen(v));
				buf_printf(&m, "' %s (-n takes a C identifier of at most 64 characters, no keyword)", why);
				int rc = usage_error("%s", m.s);
				buf_free(&m);
				return rc;
			}
			name = v;
		} else if (TAKE("--options")) {
			if (!v)
				return usage_error("option '%s' needs a value", s);
			optfile = v;
		} else if (TAKE("--weights")) {
			if (!v)
				return usage_error("option '%s' needs a value", s);
			weights = v;
		} else if (TAKE("--shape") || TAKE("--dim")) {
			int isdim = !strncmp(s, "--dim", 5);
			if (!v || !strchr(v, '='))
				return usage_error(isdim ? "--dim takes SYMBOL=SIZE (got '%s')" : "--shape takes INPUT=D0,D1,... (got '%s')",
				                   v ? v : "");
			if ((isdim ? ndims : nshapes) == 64)
				return usage_error("%s", "too many --shape or --dim options");
			if (isdim)
				dims[ndims++] = v;
			else
				shapes[nshapes++] = v;
			dimkey = arena_printf(a, "%s %s=%s", dimkey, isdim ? "dim" : "shape", v);
		} else if (TAKE("--report")) {
			if (!v || !*v)
				return usage_error("option '%s' needs a value", s);
			report = v;
		} else if (TAKE("--dump-sdfg")) {
			if (!v)
				return usage_error("option '%s' needs a value", s);
			dumpdir = v;
		} else if (TAKE("--pass-opt") || TAKE("--disable-pass")) {
			if (!v || !*v)
				return usage_error("option '%s' needs a value", s);
			if (npopts == 128)
				return usage_error("%s", "too many pass options");
			if (!strncmp(s, "--disable-pass", 14))
				popts[npopts++] = arena_printf(a, "%s.enabled=false", v);
			else {
				if (!strchr(v, '=') || !strchr(v, '.') || strchr(v, '.') > strchr(v, '='))
					return usage_error("--pass-opt takes PASS.OPTION=VALUE (got '%s')", v);
				popts[npopts++] = v;
			}
			buf_printf(cmdline, "%s%s", cmdline->len ? " " : "", popts[npopts - 1]);
		} else if (s[0] == '-' && s[1]) {
			return usage_error("unknown option '%s'", s);
		} else if (input) {
			return usage_error("more than one input file ('%s')", s);
		} else
			input = s;
#undef TAKE
	}
	if (!input)
		return usage_error("%s", "no input file");
	if (debug_has("build"))
		tmp_keep = 1;
	if (!dumpdir && debug_has("dump"))
		dumpdir = "doccc-dump";

	/* Options: YAML file, then flags. */
	if (optfile && opt_load_yaml(&o, optfile))
		return EXIT_INPUT;
	for (int i = 0; i < nset; i++)
		if (opt_set(&o, set_key[i], set_val[i], "command line"))
			return EXIT_USAGE;
	for (int i = 0; i < npopts; i++) {
		const char *eq = strchr(popts[i], '=');
		opt_add_passopt(&o, arena_strndup(a, popts[i], (size_t)(eq - popts[i])), eq + 1, "command line");
	}
	if (passes_check_options(&o))
		return optfile ? EXIT_INPUT : EXIT_USAGE;
	Target tg;
	if (target_resolve(&tg, &o))
		return EXIT_USAGE;
	if (simulate && !TARGET_IS_GPU(&tg))
		return usage_error("--simulate is for the GPU targets (cuda, rocm), not '%s'", tg.name);
	tg.simulate = simulate;
	if (!file_exists(input)) {
		diag_error(input, "cannot read: %s", strerror(errno ? errno : ENOENT));
		return EXIT_INPUT;
	}

	if (json && !check)
		return usage_error("%s", "--json goes with --check (doccc check MODEL --json)");
	if (check) {
		ImportArgs ia = {input, weights, shapes, nshapes, dims, ndims, NULL};
		return cmd_check(a, name ? name : path_to_ident(a, input), &ia, &o, &tg, json);
	}

	/* Output paths. */
	char *nm = name ? arena_strdup(a, name) : path_to_ident(a, input);
	const char *dir = ".";
	const char *lib = NULL;
	if (out) {
		size_t n = strlen(out);
		if (n > 3 && !strcmp(out + n - 3, ".so")) {
			lib = out;
			const char *base = path_base(out);
			dir = base == out ? "." : arena_strndup(a, out, (size_t)(base - out));
		} else {
			size_t k = strlen(out);
			while (k > 1 && out[k - 1] == '/')
				k--;
			dir = arena_strndup(a, out, k);
		}
	}
	if (!lib)
		lib = arena_printf(a, "%s/lib%s.so", dir, nm);
	if (!dir_exists(dir) && mkdir_p(dir))
		return EXIT_INPUT;
	BuildArgs ba = {0};
	ba.outlib = lib;
	ba.profile = debug_has("profile");
	ba.outhdr = arena_printf(a, "%s/%s.h", dir, nm);
	ba.outsrc = emit_source ? arena_printf(a, "%s/%s%s", dir, nm, TARGET_IS_GPU(&tg) ? ".cu" : ".c") : NULL;
	ba.outweights = external ? arena_printf(a, "%s/%s.weights", dir, nm) : NULL;
	ba.cmdline = arena_printf(a, "target=%s category=%s%s%s%s%s%s", tg.name, tg.category, o.march ? " march=" : "",
	                          o.march ? o.march : "", simulate ? " simulate" : "", npopts ? " " : "", npopts ? cmdline->s : "");

	/* Reuse a cached build? */
	char *cache = NULL;
	int stale = 0;
	if (env_true("DOCC_REUSE_BINARIES")) {
		char *key = arena_printf(a, "%s|%s|%s|%s|%s|%d|%d|%d|%s|%s|%s", nm, tg.name, tg.category, tg.march,
		                         o.contraction_precision, o.approximate_math, emit_source, external, ba.cmdline,
		                         path_base(lib), dimkey);
		cache = cache_dir(a, input, weights, key);
		if (cache && dir_exists(cache)) {
			const char *why;
			int rc = cache_reuse(a, &ba, cache, &why);
			if (rc < 0)
				return EXIT_INPUT;
			if (rc == 0) {
				if (spawn_verbose)
					fprintf(stderr, "doccc: reused the build in %s\n", cache);
				return EXIT_OK;
			}
			stale = 1;
			if (spawn_verbose)
				diag_note(cache, "stale cache entry (%s); compiling again", why);
		}
	}

	/* Compile. */
	ImportArgs ia = {input, weights, shapes, nshapes, dims, ndims, NULL};
	double t0 = now_ms();
	Sdfg *g = import_program(a, nm, &ia);
	if (!g)
		return EXIT_INPUT;
	if (g->specialized)
		ba.cmdline = arena_printf(a, "%s dims %s", ba.cmdline, g->specialized);
	double t1 = now_ms();
	if (passes_run(g, &o, &tg, dumpdir))
		return EXIT_INPUT;
	if (g->host_only) {
		/* As docc: a model that cannot run entirely on the GPU runs on the
		 * host as a whole. The schedule pass named the steps. */
		diag_note(input, "%d step%s without a GPU expansion: building the whole model for the host "
		          "(openmp, device_resident = 0)", g->host_only, g->host_only == 1 ? "" : "s");
		if (target_host_fallback(&tg, &o))
			return EXIT_INPUT;
		g = import_program(a, nm, &ia);
		if (!g || passes_run(g, &o, &tg, dumpdir))
			return EXIT_INPUT;
		if (g->specialized)
			ba.cmdline = arena_printf(a, "%s dims %s", ba.cmdline, g->specialized);
		if (ba.outsrc)
			ba.outsrc = arena_printf(a, "%s/%s.c", dir, nm);
	}
	double t2 = now_ms();
	ba.workdir = tmp_dir(a);
	if (!ba.workdir)
		return EXIT_INPUT;
	int rc = backend_build(g, &tg, &ba);
	if (rc == 0 && report && write_report(report, g, &tg, input, &ba, t1 - t0, t2 - t1, now_ms() - t2)) {
		unlink(ba.outlib);
		unlink(ba.outhdr);
		if (ba.outsrc)
			unlink(ba.outsrc);
		if (ba.outweights)
			unlink(ba.outweights);
		rc = 1;
	}
	if (rc == 0 && cache)
		cache_store(a, &ba, cache, stale);
	if (tmp_keep)
		fprintf(stderr, "doccc: kept working directory %s\n", ba.workdir);
	return rc == 0 ? EXIT_OK : rc == 3 ? EXIT_CC : EXIT_INPUT;
}

int main(int argc, char **argv)
{
	if (argc > 1 && !strcmp(argv[1], "run"))
		return cmd_run(argc - 1, argv + 1);
	Arena *a = arena_new();
	Buf cmdline = {0};
	int rc;
	if (argc > 1 && !strcmp(argv[1], "check")) {
		/* doccc check MODEL ... is doccc MODEL --check ... */
		char **v = arena_alloc(a, (size_t)(argc + 1) * sizeof *v);
		v[0] = argv[0];
		for (int i = 2; i < argc; i++)
			v[i - 1] = argv[i];
		v[argc - 1] = "--check";
		rc = compile_main(a, &cmdline, argc, v);
	} else
		rc = compile_main(a, &cmdline, argc, argv);
	/* --help, --list-*, --check print to stdout: a full disk or a closed
	 * pipe there is an error too (as cproc checks its output). */
	if (fflush(stdout) != 0 || ferror(stdout)) {
		diag_error("doccc", "cannot write to standard output: %s", strerror(errno));
		if (rc == EXIT_OK)
			rc = EXIT_INPUT;
	}
	tmp_cleanup();
	buf_free(&cmdline);
	arena_free(a);
	return rc;
}
