/*
 * doccc.c - the command-line driver: parse argv, resolve options (YAML file
 * < flags), import, run the passes, build, and map failures to exit codes.
 *
 *   doccc MODEL.pt2|MODEL.json [options]      compile
 *   doccc run LIB -i IN.npy ... -o OUT.npy    run a compiled library (run.c)
 *   doccc check MODEL [--json]                what the model needs (check.c)
 *   doccc inspect LIB|ARCHIVE|WEIGHTS         what a built artifact is, read from
 *                                             the file alone (inspect.c)
 *   doccc opt SDFG.json --pass NAME ...       passes on an SDFG dump (opt.c)
 *   doccc tune MODEL --tuning-db FILE         time schedules, fill the tuning
 *                                             database (tune.c)
 *
 * The compile's pieces live beside it: the cache of builds (cache.c), the
 * report (report.c), the depfile and packaging files (buildsys.c), the
 * target and pass flags it shares with doccc opt (args.c).
 *
 * Exit codes (cmd.h): 0 ok, 1 bad input or unsupported model, 2 usage,
 * 3 the external compiler failed. Outputs are produced in a temporary
 * working directory and installed only when everything succeeded, so a
 * failure leaves nothing partial behind.
 */
#include <errno.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>
#include <stdlib.h>
#include <string.h>

#include "../backends/backend.h"
#include "../ir/ir.h"
#include "cmd.h"

static const char usage_text[] =
	"usage: doccc MODEL.pt2|MODEL.json [options]\n"
	"       doccc run LIB.so -i IN.npy... -o OUT.npy... [--repeat N] [--threads N]\n"
	"       doccc compare GOT_DIR REF_DIR [--rtol R] [--atol A] [--json]\n"
	"       doccc check MODEL.pt2|MODEL.json [-t T] [-c C] [--json]\n"
	"       doccc inspect LIB.so|libNAME.a|NAME.weights [--json]\n"
	"       doccc opt SDFG.json [--pass NAME]... [-t T] [-c C] [-o OUT.json]\n"
	"       doccc tune MODEL.pt2|MODEL.json --tuning-db FILE [-t T] [-c C] [--tune-budget S]\n"
	"                  [--tune-runner CMD] [--threads N] [-j N] [--retune]\n"
	"\n"
	"Compile a torch.export program into a shared library and a C header.\n"
	"\n"
	"  -t, --target T        @TARGETS@ (default none)\n"
	"  -c, --category C      edge, desktop, server (default server)\n"
	"  -o, --output OUT      DIR/ or an existing directory: DIR/libNAME.so and DIR/NAME.h;\n"
	"                        PATH.so: that library, NAME.h beside it; PATH.a: a static\n"
	"                        archive, weights embedded (default: .)\n"
	"  -n, --name NAME       model name and symbol prefix (default: from the input file)\n"
	"      --options FILE    YAML options file (flags win over it)\n"
	"      --weights FILE    safetensors weights for a bare ExportedProgram JSON\n"
	"      --shape IN=D0,D1  sizes of input IN's dynamic dims (repeatable)\n"
	"      --dim SYM=N       value of the export's shape symbol SYM, e.g. s0=8 (repeatable)\n"
	"      --dynamic=no      specialize every dynamic dim to the export's example size\n"
	"                        (default yes: dims the options leave open are taken at run time)\n"
	"      --max-dim SYM=N   largest run-time value of dim SYM (sizes the workspace at create)\n"
	"      --march ARCH      ISA for clang -march (default: DOCC_MARCH, else the category's; 'native';\n"
	"                        on aarch64 also a CPU, cortex-a76); on cuda/rocm the GPU architecture\n"
	"      --triple T        cross-compile the CPU targets for T: aarch64-linux-gnu or\n"
	"                        x86_64-linux-gnu (default: DOCC_TRIPLE, else this machine)\n"
	"      --offload-arch A  GPU architecture for cuda/rocm (as --march; wins over DOCC_CUDA_ARCH)\n"
	"      --simulate        cuda/rocm: compile the device code for this CPU (runs without a GPU)\n"
	"      --pass-opt P.K=V  set a pass option, e.g. expand.tile_m=8 (repeatable)\n"
	"      --disable-pass P  switch a pass off (repeatable)\n"
	"      --tuning-db FILE  schedules measured by doccc tune (tuning.db): a step the\n"
	"                        database holds takes its own, another the nearest tuned one's\n"
	"      --tune-budget S   doccc tune: start no step after S seconds (default 600)\n"
	"      --tune-runner CMD doccc tune: time on another machine, CMD sh -s reading a\n"
	"                        script on stdin ('ssh user@board'; default DOCC_TUNE_RUNNER)\n"
	"      --threads N       doccc tune: time on N threads (default: openmp all, else 1)\n"
	"  -j, --jobs N          doccc tune: compile N candidates at once (default: the cores)\n"
	"      --retune          doccc tune: time again the steps the database holds\n"
	"      --emit-source     also write NAME.c\n"
	"      --profile         CPU targets: a library whose runs call a hook around every fused\n"
	"                        node (doccc run --profile, --trace)\n"
	"      --values          CPU targets: as --profile, and the hook sees each node's values\n"
	"                        (doccc run --dump-values, doccc compare)\n"
	"      --external-weights  write NAME.weights; create() maps it (the default for\n"
	"                        weights over 1 GiB)\n"
	"      --embed-weights   weights in the library, whatever their size\n"
	"      --dump-sdfg DIR   write the SDFG after every stage (JSON and DOT)\n"
	"      --report FILE     write a JSON report: ops, fused nodes, sizes, times\n"
	"  -MD                   write a make depfile beside the library (libNAME.so: libNAME.d)\n"
	"  -MF FILE              write the depfile to FILE (implies -MD)\n"
	"  -MT TARGET            the depfile rule's target, as given (repeatable; default: the library)\n"
	"  -MP                   accepted, as gcc's: every prerequisite always gets an empty rule\n"
	"      --emit-pkgconfig  also write NAME.pc beside the library (pkg-config)\n"
	"      --emit-cmake      also write NAMEConfig.cmake: the imported target doccc::NAME\n"
	"      --keep-temps      keep the working directory\n"
	"      --check           compile nothing: print the op census (count, supported or\n"
	"                        not and why), dtypes, dynamic dims and whether the model\n"
	"                        runs on the GPU; exit 1 if anything is unsupported\n"
	"      --json            with --check: the same as one JSON object\n"
	"  -v, --verbose         print each command run\n"
	"  -q, --quiet           no progress line (shown on a terminal: the phase, the weights'\n"
	"                        bytes, doccc tune's candidates; DOCC_PROGRESS=0/1 turns it off/on)\n"
	"      --list-passes | --list-options | --list-ops\n"
	"  -h, --help | --version\n"
	"\n"
	"Exit status: 0 ok, 1 bad input or unsupported model, 2 usage, 3 compiler failed.\n"
	"See doccc(1).\n";

/* The usage text, with the backends' names. */
static void print_usage(void)
{
	const char *at = strstr(usage_text, "@TARGETS@");
	printf("%.*s%s%s", (int)(at - usage_text), usage_text, backend_names(), at + strlen("@TARGETS@"));
}

/* Why the -n NAME v cannot name a model (it prefixes every symbol of the
 * library and its header, which is C++ too), or NULL when it can. */
static const char *name_problem(const char *v)
{
	if (strlen(v) > 64)
		return "is longer than 64 characters";
	if (v[0] >= '0' && v[0] <= '9')
		return "starts with a digit";
	if (!c_is_ident(v))
		return "is not a C identifier";
	if (c_is_keyword(v))
		return "is a C or C++ keyword";
	if (v[0] == '_' && (v[1] == '_' || (v[1] >= 'A' && v[1] <= 'Z')))
		return "is reserved to the C implementation (it starts with __ or _ and a capital)";
	return NULL;
}

static const char usage_line[] = "usage: doccc MODEL.pt2|MODEL.json [options] (doccc --help for more)\n";

static int usage_error(const char *fmt, const char *arg)
{
	return arg_usage(usage_line, fmt, arg);
}

static void list_passes(void)
{
	for (int i = 0; i < npasses; i++) {
		const Pass *p = &pass_table[i];
		printf("%-16s %s%s\n", p->name, p->doc, p->required ? " (required)" : p->enabled ? "" : " (off by default)");
		for (int k = 0; k < p->nparams; k++) {
			const PassParam *pp = &p->params[k];
			if (!strcmp(pp->type, "int"))
				printf("  %s.%s  int %lld to %lld, default %s: %s\n", p->name, pp->name, (long long)pp->min,
				       (long long)pp->max, pp->dflt, pp->doc);
			else if (pp->choices)
				printf("  %s.%s  %s, default %s: %s\n", p->name, pp->name, pp->choices, pp->dflt, pp->doc);
			else
				printf("  %s.%s  %s, default %s: %s\n", p->name, pp->name, pp->type, pp->dflt, pp->doc);
		}
	}
}

static void list_options(void)
{
	for (int i = 0; i < opt_ntable; i++) {
		const OptionInfo *o = &opt_table[i];
		const char *values = !strcmp(o->name, "target") ? backend_names() : o->values; /* the backends' */
		printf("%-22s %-8s default %-8s %s%s%s%s\n", o->name, o->type, o->dflt, o->doc, *values ? " [" : "", values,
		       *values ? "]" : "");
	}
	printf("\nEnvironment: DOCC_TMP (working directories), DOCC_DEBUG (dump;build), DOCC_REUSE_BINARIES,\n"
	       "DOCC_CUDA_ARCH (cuda architecture, e.g. sm_86 or cuda:sm_86), DOCC_MARCH (the CPU targets' -march\n"
	       "when no option gives one, e.g. x86-64-v3 or native), DOCC_TRIPLE (the triple when no option\n"
	       "gives one, e.g. aarch64-linux-gnu), DOCC_QEMU (doccc run's emulator for another architecture's\n"
	       "libraries, default qemu-aarch64), DOCC_CC, DOCC_CXX, DOCC_NVCC,\n"
	       "DOCC_HIPCC, DOCC_AR (the commands the build runs, a launcher included: DOCC_CC=\"ccache clang\"),\n"
	       "DOCC_PROGRESS (0: no progress line; 1: one whatever stderr is; else on a terminal).\n"
	       "Pass options: see --list-passes.\n");
}

static void list_ops(void)
{
	printf("# supported ATen overloads: overload, lowering, schema (library node kinds:");
	for (int i = 0; i < NLIBOPS; i++)
		printf(" %s", op_name(i));
	printf(")\n");
	const AtenInfo *a;
	for (int i = 0; i < NATENOPS; i++) {
		a = aten_info(i);
		printf("%-48s %-10s %s\n", a->target, a->lowering, a->schema);
	}
	for (int i = 0; (a = aten_variant(i)); i++)
		printf("%-48s %-10s %s\n", a->target, a->lowering, a->schema);
	printf("# known and not supported: overload, reason\n");
	const char *why, *t;
	for (int i = 0; (t = aten_unsupported_row(i, &why)); i++)
		printf("%-48s unsupported  %s\n", t, why);
	printf("# derived rows (ir/ops_variants.h): overload, the functional row it lowers through\n");
	for (int i = 0; (a = aten_variant(i)); i++)
		printf("%-48s %s\n", a->target, a->base);
	printf("# lowerings that take run-time dims (a node of any other touching one specializes the library):");
	for (int i = 0; (t = import_dyn_lowering(i)); i++)
		printf(" %s", t);
	printf("\n");
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

/* A compile's command line, parsed. The settings of flags are applied
 * after the YAML file, so they are collected first. */
typedef struct {
	const char *input, *out, *name, *weights, *dumpdir, *report;
	int emit_source, external, embed, simulate, check, json;
	int profile, values;  /* --profile, --values: the node table and hook (doccc run --trace, --dump-values) */
	int quiet;           /* -q: no progress line */
	TargetArgs ta;       /* -t, -c, --march, --options, --pass-opt, ... */
	const char *shapes[64], *dims[64], *maxdims[64];
	int nshapes, ndims, nmaxdims;
	int fixed;           /* --dynamic=no */
	const char *dimkey;  /* --shape and --dim, for the cache key */
	Buf *cmdline;        /* the settings, for the generated comment (ta's) */
	BuildSys bs;         /* -MD -MF -MT, --emit-pkgconfig, --emit-cmake */
	int tune;            /* doccc tune */
	TuneArgs tn;         /* its flags */
	/* planned by plan_outputs */
	const char *nm, *dir;
	const char *tools;   /* the compiler commands, for the cache key */
} Cli;

/* Parse argv into c: -1 to go on, or the exit code to return now. */
static int parse_args(Arena *a, Cli *c, int argc, char **argv)
{
	c->dimkey = "";
	c->ta.cmdline = c->cmdline;
	c->ta.usage = usage_line;
	for (int i = 1; i < argc; i++) {
		const char *s = argv[i];
		const char *v = NULL;
		int rc;
#define TAKE(flag) arg_take(argc, argv, &i, flag, &v)
		if (!strcmp(s, "-h") || !strcmp(s, "--help")) {
			print_usage();
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
		} else if (!strcmp(s, "-q") || !strcmp(s, "--quiet")) {
			c->quiet = 1;
		} else if (!strcmp(s, "--keep-temps")) {
			tmp_keep = 1;
		} else if (!strcmp(s, "--emit-source")) {
			c->emit_source = 1;
		} else if (!strcmp(s, "--external-weights")) {
			c->external = 1;
		} else if (!strcmp(s, "--embed-weights")) {
			c->embed = 1;
		} else if (!strcmp(s, "--simulate")) {
			c->simulate = 1;
		} else if (!strcmp(s, "--profile")) {
			c->profile = 1;
		} else if (!strcmp(s, "--values")) {
			c->values = 1;
		} else if (!strcmp(s, "--check")) {
			c->check = 1;
		} else if (!strcmp(s, "--json")) {
			c->json = 1;
		} else if (!strcmp(s, "-MD")) {
			c->bs.depfile = 1;
		} else if (!strcmp(s, "-MP")) {
			/* always on: the depfile has an empty rule for every prerequisite */
		} else if (!strncmp(s, "-MF", 3) || !strncmp(s, "-MT", 3)) {
			/* gcc's spellings: -MF FILE or -MFFILE */
			v = s[3] ? s + 3 : i + 1 < argc ? argv[++i] : NULL;
			if (!v || !*v)
				return usage_error("option '%s' needs a value", s);
			if (s[2] == 'F') {
				c->bs.mf = v;
				c->bs.depfile = 1;
			} else if (c->bs.nmt == (int)COUNTOF(c->bs.mt))
				return usage_error("%s", "too many -MT options");
			else
				c->bs.mt[c->bs.nmt++] = v;
		} else if (!strcmp(s, "--emit-pkgconfig")) {
			c->bs.pkgconfig = 1;
		} else if (!strcmp(s, "--emit-cmake")) {
			c->bs.cmake = 1;
		} else if ((rc = targs_take(a, &c->ta, argc, argv, &i))) {
			if (rc > 0)
				return rc;
		} else if (TAKE("-o") || TAKE("--output")) {
			if (!v || !*v)
				return usage_error("option '%s' needs a value", s);
			c->out = v;
		} else if (TAKE("-n") || TAKE("--name")) {
			if (!v || !*v)
				return usage_error("option '%s' needs a value", s);
			const char *why = name_problem(v);
			if (why) {
				Buf m = {0};
				buf_puts(&m, "model name '");
				buf_escape(&m, ESC_TERM, v, strlen(v));
				buf_printf(&m, "' %s (-n takes a C identifier of at most 64 characters, no keyword)", why);
				rc = usage_error("%s", m.s);
				buf_free(&m);
				return rc;
			}
			c->name = v;
		} else if (TAKE("--weights")) {
			if (!v)
				return usage_error("option '%s' needs a value", s);
			c->weights = v;
		} else if (TAKE("--shape") || TAKE("--dim")) {
			int isdim = !strncmp(s, "--dim", 5);
			if (!v || !strchr(v, '='))
				return usage_error(isdim ? "--dim takes SYMBOL=SIZE (got '%s')" : "--shape takes INPUT=D0,D1,... (got '%s')",
				                   v ? v : "");
			if ((isdim ? c->ndims : c->nshapes) == 64)
				return usage_error("%s", "too many --shape or --dim options");
			if (isdim)
				c->dims[c->ndims++] = v;
			else
				c->shapes[c->nshapes++] = v;
			c->dimkey = arena_printf(a, "%s %s=%s", c->dimkey, isdim ? "dim" : "shape", v);
		} else if (TAKE("--max-dim")) {
			if (!v || !strchr(v, '='))
				return usage_error("--max-dim takes SYMBOL=N (got '%s')", v ? v : "");
			if (c->nmaxdims == 64)
				return usage_error("%s", "too many --max-dim options");
			c->maxdims[c->nmaxdims++] = v;
			c->dimkey = arena_printf(a, "%s max-dim=%s", c->dimkey, v);
		} else if (TAKE("--dynamic")) {
			if (!v || (strcmp(v, "yes") && strcmp(v, "no")))
				return usage_error("--dynamic takes yes or no (got '%s')", v ? v : "");
			c->fixed = !strcmp(v, "no");
			c->dimkey = arena_printf(a, "%s dynamic=%s", c->dimkey, v);
		} else if (TAKE("--report")) {
			if (!v || !*v)
				return usage_error("option '%s' needs a value", s);
			c->report = v;
		} else if (c->tune && TAKE("--tune-budget")) {
			char *e;
			double x = v ? strtod(v, &e) : 0;
			if (!v || e == v || *e || !(x >= 0 && x <= 1e9))
				return usage_error("--tune-budget takes a number of seconds (got '%s')", v ? v : "");
			c->tn.budget = x;
		} else if (c->tune && (TAKE("--threads") || TAKE("-j") || TAKE("--jobs"))) {
			char *e;
			long x = v ? strtol(v, &e, 10) : 0;
			int threads = s[2] == 't';
			if (!v || e == v || *e || x < 1 || x > 4096)
				return usage_error(threads ? "--threads takes a positive integer (got '%s')"
				                           : "-j takes a positive integer (got '%s')", v ? v : "");
			*(threads ? &c->tn.threads : &c->tn.jobs) = (int)x;
		} else if (c->tune && TAKE("--tune-runner")) {
			int n;
			if (!v || (spawn_words(a, v, &n), n == 0))
				return usage_error("--tune-runner takes a command, e.g. 'ssh user@board' (got '%s')", v ? v : "");
			c->tn.runner = v;
		} else if (c->tune && !strcmp(s, "--retune")) {
			c->tn.retune = 1;
		} else if (!c->tune && (!strncmp(s, "--tune-", 7) || !strcmp(s, "--retune") || !strcmp(s, "-j") ||
		                        !strncmp(s, "--jobs", 6) || !strncmp(s, "--threads", 9))) {
			return usage_error("option '%s' goes with doccc tune", s);
		} else if (TAKE("--dump-sdfg")) {
			if (!v)
				return usage_error("option '%s' needs a value", s);
			c->dumpdir = v;
		} else if (s[0] == '-' && s[1]) {
			return usage_error("unknown option '%s'", s);
		} else if (c->input) {
			return usage_error("more than one input file ('%s')", s);
		} else
			c->input = s;
#undef TAKE
	}
	if (!c->input)
		return usage_error("%s", "no input file");
	if (debug_has("build"))
		tmp_keep = 1;
	if (!c->dumpdir && debug_has("dump"))
		c->dumpdir = "doccc-dump";
	if (c->json && !c->check)
		return usage_error("%s", "--json goes with --check (doccc check MODEL --json)");
	if (c->bs.nmt && !c->bs.depfile)
		return usage_error("%s", "-MT goes with -MD or -MF");
	if (c->embed && c->external)
		return usage_error("%s", "--embed-weights and --external-weights: choose one");
	if (c->check && (c->bs.depfile || c->bs.pkgconfig || c->bs.cmake))
		return usage_error("%s", "--check builds nothing: -MD, -MF, --emit-pkgconfig and --emit-cmake go with a compile");
	c->bs.prereqs[0] = c->input;
	c->bs.prereqs[1] = c->weights;
	c->bs.prereqs[2] = c->ta.optfile;
	return -1;
}

/* The options (YAML file, then flags) and the target: -1 to go on, or
 * the exit code. */
static int configure(Arena *a, const Cli *c, Options *o, Target *tg)
{
	int rc = targs_apply(a, &c->ta, o, tg);
	if (rc >= 0)
		return rc;
	if ((c->profile || c->values) && TARGET_IS_GPU(tg))
		return usage_error("%s instruments the CPU targets' libraries (none, sequential, openmp); a GPU "
		                   "library has no node hook yet", c->values ? "--values" : "--profile");
	if (c->simulate && !TARGET_IS_GPU(tg))
		return usage_error("--simulate is for the GPU targets (cuda, rocm), not '%s'", tg->name);
	tg->simulate = c->simulate;
	const char *why = file_unreadable(c->input);
	if (why) {
		diag_error(c->input, "cannot read: %s", why);
		return EXIT_INPUT;
	}
	return -1;
}

/* Embedded weights pass through the linker, which holds them in memory
 * and copies them at about 5 to 8 s per GB: above EMBED_MAX bytes of input
 * (the archive, or the JSON, the safetensors file and an extracted
 * archive's data files) they are written to NAME.weights instead, with a
 * note, unless --embed-weights says otherwise. Decided before the compile
 * from the files' sizes, so that the outputs are known up front (the
 * cache, -MD). */
#define EMBED_MAX ((int64_t)1 << 30)
static int embed_too_large(const Cli *c, const Paths *reads)
{
	int64_t n = 0;
	for (int i = 0; i < reads->n; i++) {
		struct stat sb;
		if (stat(reads->v[i], &sb) == 0)
			n += (int64_t)sb.st_size;
	}
	if (n <= EMBED_MAX)
		return 0;
	diag_note(c->input, "%.2f GB of input, more than doccc embeds in a library by default (1 GiB): writing the "
	          "weights to %s.weights beside it (--embed-weights embeds them anyway; --external-weights says "
	          "so, without this note)", (double)n / 1e9, c->nm);
	return 1;
}

/* The output paths of -o (DIR/, an existing directory, PATH.so, or PATH.a
 * for a static archive) into ba, the output directory made, the compiler
 * variables checked: -1 to go on, or the exit code (reported). */
static int plan_outputs(Arena *a, Cli *c, const Options *o, const Target *tg, const Paths *reads, BuildArgs *ba)
{
	c->nm = c->name ? arena_strdup(a, c->name) : path_to_ident(a, c->input);
	c->dir = ".";
	const char *lib = NULL, *out = c->out;
	if (out) {
		size_t n = strlen(out);
		ba->static_lib = n > 2 && !strcmp(out + n - 2, ".a");
		if ((n > 3 && !strcmp(out + n - 3, ".so")) || ba->static_lib) {
			lib = out;
			const char *base = path_base(out);
			c->dir = base == out ? "." : arena_strndup(a, out, (size_t)(base - out));
		} else {
			while (n > 1 && out[n - 1] == '/')
				n--;
			c->dir = arena_strndup(a, out, n);
		}
	}
	if (!lib)
		lib = arena_printf(a, "%s/lib%s.so", c->dir, c->nm);
	if (backend_check_tools(a, tg, ba->static_lib, &c->tools))
		return EXIT_USAGE;
	if (!dir_exists(c->dir) && mkdir_p(c->dir))
		return EXIT_INPUT;
	ba->outlib = lib;
	ba->profile = debug_has("profile");
	ba->hooks = c->profile || c->values || ba->profile || debug_has("values");
	ba->values = c->values || debug_has("values");
	ba->outhdr = arena_printf(a, "%s/%s.h", c->dir, c->nm);
	ba->outsrc = c->emit_source ? arena_printf(a, "%s/%s%s", c->dir, c->nm, backend_of(tg)->ext) : NULL;
	if (!c->external && !c->embed && embed_too_large(c, reads))
		c->external = 1;
	ba->outweights = c->external ? arena_printf(a, "%s/%s.weights", c->dir, c->nm) : NULL;
	const char *march = o->march ? o->march : tg->march_env ? tg->march : NULL;
	ba->cmdline = arena_printf(a, "target=%s category=%s%s%s%s%s%s%s%s%s", tg->name, tg->category, march ? " march=" : "",
	                           march ? march : "", tg->triple ? " triple=" : "", tg->triple ? tg->triple : "",
	                           c->simulate ? " simulate" : "", !ba->hooks ? "" : ba->values ? " values" : " profile",
	                           c->ta.npopts ? " " : "", c->ta.npopts ? c->cmdline->s : "");
	return -1;
}

/* What changes the output besides the input's and weights' bytes. */
static const char *cache_key(Arena *a, const Cli *c, const Options *o, const Target *tg, const BuildArgs *ba)
{
	return arena_printf(a, "%s|%s|%s|%s|%s|%d|%d|%d|%s|%s|%s|%s", c->nm, tg->name, tg->category, tg->march,
	                    o->contraction_precision, o->approximate_math, c->emit_source, c->external, ba->cmdline,
	                    path_base(ba->outlib), c->dimkey, c->tools);
}

/* One note naming the quantized ops that run in float between dequantize
 * and quantize (doccc check lists how every quantized op runs). */
static void quant_note(const char *input, const Sdfg *g)
{
	enum { SHOWN = 8 };
	Buf b = {0};
	int n = 0;
	for (int i = 0; i < g->nqsteps; i++)
		if (!g->qsteps[i].integer && n++ < SHOWN)
			buf_printf(&b, "%s'%s'", n > 1 ? ", " : "", g->qsteps[i].node);
	if (n)
		diag_note(input, "%d quantized op%s run%s in float between dequantize and quantize, exactly as torch computes "
		          "them (no integer kernel for %s): %s%s%s", n, n == 1 ? "" : "s", n == 1 ? "s" : "",
		          n == 1 ? "it" : "them", b.s, n > SHOWN ? arena_printf(g->arena, " and %d more", n - SHOWN) : "",
		          n > SHOWN ? " (doccc check lists them all)" : "");
	buf_free(&b);
}

/* What the tuning database gave the steps: a note, and the count in the
 * settings the library records (its path stays out of them). */
static void tuning_note(const char *db, const Sdfg *g, BuildArgs *ba)
{
	if (!db)
		return;
	if (g->nforeign)
		diag_note(db, "%d entr%s of another doccc version not used (doccc tune --retune measures them again)",
		          g->nforeign, g->nforeign == 1 ? "y" : "ies");
	diag_note(db, "%d step%s took %s own tuned schedule, %d the nearest tuned step's (transfer), %d the rules'",
	          g->ntuned, g->ntuned == 1 ? "" : "s", g->ntuned == 1 ? "its" : "their", g->ntransferred, g->nrules);
	ba->cmdline = arena_printf(g->arena, "%s tuned=%d+%d", ba->cmdline, g->ntuned, g->ntransferred);
}

/* Import and run the passes; a model that cannot run entirely on the GPU
 * is imported again for the host (as docc: the schedule pass named the
 * steps). NULL when reported. */
static Sdfg *compile_graph(Arena *a, const Cli *c, Options *o, Target *tg, BuildArgs *ba, Times *tm)
{
	ImportArgs ia = {.path = c->input, .weights = c->weights, .shapes = c->shapes, .nshapes = c->nshapes, .dims = c->dims,
	                 .ndims = c->ndims, .maxdims = c->maxdims, .nmaxdims = c->nmaxdims, .fixed = c->fixed};
	double t0 = now_ms();
	Sdfg *g = import_program(a, c->nm, &ia);
	if (!g)
		return NULL;
	double t1 = now_ms();
	if (passes_run(g, o, tg, c->dumpdir))
		return NULL;
	quant_note(c->input, g);
	tuning_note(c->bs.prereqs[3], g, ba);
	if (g->nhost_steps) {
		for (int i = 0; i < g->nhost_steps; i++)
			diag_note(g->src, "node '%s': no GPU expansion: %s", g->host_steps[i].node, g->host_steps[i].why);
		diag_note(c->input, "%d step%s without a GPU expansion: building the whole model for the host "
		          "(openmp, device_resident = 0)", g->nhost_steps, g->nhost_steps == 1 ? "" : "s");
		if (target_host_fallback(tg, o))
			return NULL;
		g = import_program(a, c->nm, &ia);
		if (!g || passes_run(g, o, tg, c->dumpdir))
			return NULL;
		if (ba->outsrc)
			ba->outsrc = arena_printf(a, "%s/%s%s", c->dir, c->nm, backend_of(tg)->ext);
	}
	if (g->specialized)
		ba->cmdline = arena_printf(a, "%s dims %s", ba->cmdline, g->specialized);
	tm->import_ms = t1 - t0;
	tm->passes_ms = now_ms() - t1;
	return g;
}

static void outputs_remove(const BuildArgs *ba)
{
	const char *o[] = {ba->outlib, ba->outhdr, ba->outsrc, ba->outweights};
	for (size_t i = 0; i < COUNTOF(o); i++)
		if (o[i])
			unlink(o[i]);
}

/* Compile, build and install the outputs of ba, write the --report and
 * keep the build in the cache: 0, 1 (reported, nothing left) or 3. */
static int build(Arena *a, const Cli *c, Options *o, Target *tg, BuildArgs *ba, const Cache *cache)
{
	Times tm;
	Sdfg *g = compile_graph(a, c, o, tg, ba, &tm);
	if (!g)
		return 1;
	double t2 = now_ms();
	if (!(ba->workdir = tmp_dir(a)))
		return 1;
	ba->stepfn = c->report && TARGET_IS_GPU(tg) ? arena_alloc(a, sizeof(char *) * (size_t)(g->root->nkids + 1)) : NULL;
	int rc = backend_build(g, tg, ba);
	tm.build_ms = now_ms() - t2;
	if (rc == 0 && c->report && report_write(c->report, g, tg, c->input, ba, &tm)) {
		outputs_remove(ba);
		rc = 1;
	}
	if (rc == 0)
		cache_store(a, cache, ba);
	if (tmp_keep) {
		progress_hide();
		fprintf(stderr, "doccc: kept working directory %s\n", ba->workdir);
	}
	return rc;
}

/* The compile command; every allocation hangs off arena a, which main
 * frees on every path (sanitizer builds then show any other leak). */
/* The tuning database a compile reads, or NULL (ir/passes/tuning.c
 * resolves it the same way). */
static const char *tuning_db(const Options *o)
{
	const PassOpt *po = opt_find_passopt(o, "tuning.db");
	const char *e = getenv("DOCC_TUNING_DB");
	return po && *po->val ? po->val : o->remote_tuning && e && *e ? e : NULL;
}

static int compile_main(Arena *a, Buf *cmdline, int argc, char **argv, int tune)
{
	const char *runner = getenv("DOCC_TUNE_RUNNER"), *ms = getenv("DOCC_TUNE_MS");
	Cli c = {.cmdline = cmdline, .tune = tune};
	c.tn = (TuneArgs){usage_line, 600, runner && *runner ? runner : NULL, 0, 0, 0, ms ? atof(ms) : 30};
	if (!(c.tn.ms > 0 && c.tn.ms <= 1e5))
		c.tn.ms = 30;
	int rc = parse_args(a, &c, argc, argv);
	if (rc >= 0)
		return rc;
	/* the progress line: a compile's and a tune's, not --check's (its
	 * report is on stdout, on the same terminal) */
	progress_start(!c.quiet && !c.check);
	Options o;
	opt_init(&o, a);
	o.targets = backend_names();
	Target tg;
	if ((rc = configure(a, &c, &o, &tg)) >= 0)
		return rc;
	if (c.check) {
		ImportArgs ia = {.path = c.input, .weights = c.weights, .shapes = c.shapes, .nshapes = c.nshapes, .dims = c.dims,
		                 .ndims = c.ndims, .maxdims = c.maxdims, .nmaxdims = c.nmaxdims, .fixed = c.fixed};
		return cmd_check(a, c.name ? c.name : path_to_ident(a, c.input), &ia, &o, &tg, c.json);
	}
	if (c.tune) {
		ImportArgs ia = {.path = c.input, .weights = c.weights, .shapes = c.shapes, .nshapes = c.nshapes, .dims = c.dims,
		                 .ndims = c.ndims, .maxdims = c.maxdims, .nmaxdims = c.nmaxdims, .fixed = 1};
		if (!c.tn.jobs)
			c.tn.jobs = (int)MAX(1, sysconf(_SC_NPROCESSORS_ONLN));
		return cmd_tune(a, c.name ? c.name : path_to_ident(a, c.input), &ia, &o, &tg, &c.tn);
	}
	c.bs.prereqs[3] = tuning_db(&o);
	BuildArgs ba = {0};
	Paths reads = {0}; /* what the compile reads: for the cache key and the size of the weights */
	compile_reads(a, c.bs.prereqs, &reads);
	if ((rc = plan_outputs(a, &c, &o, &tg, &reads, &ba)) >= 0)
		return rc;
	Cache cache = {0};
	/* a --report describes a compilation: with one, compile (and store) */
	if ((rc = cache_lookup(a, &cache, &ba, &reads, cache_key(a, &c, &o, &tg, &ba), !c.report)) < 0)
		return EXIT_INPUT;
	int built = rc == 0; /* else installed from the cache */
	rc = built ? build(a, &c, &o, &tg, &ba, &cache) : 0;
	/* the depfile and packaging files, after a build or the cache alike */
	if (rc == 0 && buildsys_write(a, &c.bs, argv[0], c.nm, &tg, &ba)) {
		outputs_remove(&ba);
		if (built && c.report)
			unlink(c.report); /* this build's */
		rc = 1;
	}
	return rc == 0 ? EXIT_OK : rc == 3 ? EXIT_CC : EXIT_INPUT;
}

int main(int argc, char **argv)
{
	if (argc > 1 && !strcmp(argv[1], "run"))
		return cmd_run(argc - 1, argv + 1);
	if (argc > 1 && !strcmp(argv[1], "inspect"))
		return cmd_inspect(argc - 1, argv + 1);
	if (argc > 1 && !strcmp(argv[1], "compare"))
		return cmd_compare(argc - 1, argv + 1);
	Arena *a = arena_new();
	Buf cmdline = {0};
	int rc;
	if (argc > 1 && !strcmp(argv[1], "opt")) {
		rc = cmd_opt(a, argc - 1, argv + 1);
	} else if (argc > 1 && !strcmp(argv[1], "check")) {
		/* doccc check MODEL ... is doccc MODEL --check ... */
		char **v = arena_alloc(a, (size_t)(argc + 1) * sizeof *v);
		v[0] = argv[0];
		for (int i = 2; i < argc; i++)
			v[i - 1] = argv[i];
		v[argc - 1] = "--check";
		rc = compile_main(a, &cmdline, argc, v, 0);
	} else if (argc > 1 && !strcmp(argv[1], "tune")) {
		rc = compile_main(a, &cmdline, argc - 1, argv + 1, 1);
	} else
		rc = compile_main(a, &cmdline, argc, argv, 0);
	progress_end();
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
