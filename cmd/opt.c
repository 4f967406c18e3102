/*
 * opt.c - doccc opt: run passes of the pass table on an SDFG file, as
 * LLVM's opt runs passes on a module.
 *
 *   doccc opt SDFG.json [-t T] [-c C] [--march M] [--pass NAME]...
 *             [--pass-opt P.K=V]... [--options FILE.yaml] [-o OUT.json]
 *
 * SDFG.json is a stage that --dump-sdfg wrote (ir/read.c reads it back). The
 * passes named run in the order given, each as the pipeline runs it: its
 * options from the YAML file and the flags (the compile's resolution,
 * args.c), the target's settings, then the verifier. Its enabled option
 * does not matter: --pass runs the pass. The result is written as the
 * dump, to OUT.json (atomically) or standard output. Without --pass nothing
 * runs: the output is the input read back, the same bytes for a file doccc
 * wrote (the round-trip check), the canonical form of one written by hand.
 * The golden IR-in/IR-out tests of every pass (test/passes/) are this
 * command's output.
 *
 * Exit codes as the compile's: 0 ok, 1 bad input or a failed pass, 2 usage.
 */
#include <stdlib.h>
#include <string.h>

#include "cmd.h"

static const char opt_usage[] = "usage: doccc opt SDFG.json [--pass NAME]... [options] (doccc opt --help for more)\n";

static const char opt_help[] =
	"usage: doccc opt SDFG.json [--pass NAME]... [options]\n"
	"\n"
	"Run passes of the pass table on an SDFG (a stage that --dump-sdfg wrote) and\n"
	"write the SDFG after them. Without --pass, write the input read back (the same bytes).\n"
	"\n"
	"      --pass NAME       run pass NAME (repeatable, in order; see doccc --list-passes)\n"
	"  -o, --output FILE     write the SDFG to FILE (default: standard output)\n"
	"  -t, --target T        none, sequential, openmp, cuda, rocm (default none)\n"
	"  -c, --category C      edge, desktop, server (default server)\n"
	"      --march ARCH      as for a compile (default: DOCC_MARCH, else the category's)\n"
	"      --offload-arch A  GPU architecture for cuda/rocm\n"
	"      --pass-opt P.K=V  set a pass option, e.g. expand.tile_m=8 (repeatable)\n"
	"      --options FILE    YAML options file (flags win over it)\n"
	"  -h, --help\n"
	"\n"
	"Exit status: 0 ok, 1 bad input or a pass failed, 2 usage. See doccc(1).\n";

int cmd_opt(Arena *a, int argc, char **argv)
{
	Buf settings = {0};
	TargetArgs ta = {.usage = opt_usage, .cmdline = &settings};
	const Pass *passes[64];
	int npasses_run = 0, rc = -1;
	const char *input = NULL, *out = NULL;
	for (int i = 1; i < argc && rc < 0; i++) {
		const char *s = argv[i], *v = NULL;
		if (!strcmp(s, "-h") || !strcmp(s, "--help")) {
			fputs(opt_help, stdout);
			rc = EXIT_OK;
		} else if ((rc = targs_take(a, &ta, argc, argv, &i))) {
			/* taken (-1) or a usage error */
		} else if (arg_take(argc, argv, &i, "--pass", &v)) {
			rc = -1;
			if (!v || !*v)
				rc = arg_usage(opt_usage, "option '%s' needs a value", s);
			else if (npasses_run == (int)COUNTOF(passes))
				rc = arg_usage(opt_usage, "%s", "too many --pass options");
			else if (!(passes[npasses_run++] = pass_find(v)))
				rc = arg_usage(opt_usage, "unknown pass '%s' (see doccc --list-passes)", v);
		} else if (arg_take(argc, argv, &i, "-o", &v) || arg_take(argc, argv, &i, "--output", &v)) {
			rc = -1;
			if (!v || !*v)
				rc = arg_usage(opt_usage, "option '%s' needs a value", s);
			out = v;
		} else if (s[0] == '-' && s[1]) {
			rc = arg_usage(opt_usage, "unknown option '%s'", s);
		} else if (input) {
			rc = arg_usage(opt_usage, "more than one input file ('%s')", s);
		} else {
			input = s;
			rc = -1;
		}
	}
	if (rc < 0 && !input)
		rc = arg_usage(opt_usage, "%s", "no input file");
	Options o;
	Target tg;
	opt_init(&o, a);
	o.targets = backend_names();
	if (rc < 0)
		rc = targs_apply(a, &ta, &o, &tg);
	buf_free(&settings);
	if (rc >= 0)
		return rc;

	const char *why = file_unreadable(input);
	size_t len;
	char *text = why ? NULL : file_read(input, &len);
	if (why)
		diag_error(input, "cannot read: %s", why);
	Sdfg *g = text ? sdfg_read_json(a, input, text, len) : NULL;
	free(text);
	if (!g)
		return EXIT_INPUT;
	for (int i = 0; i < npasses_run; i++)
		if (passes_run_one(g, &o, &tg, passes[i]))
			return EXIT_INPUT;
	Buf b = {0};
	rc = sdfg_dump_json(g, &b) ? EXIT_INPUT : EXIT_OK;
	if (rc == EXIT_OK && out)
		rc = file_write(out, b.s, b.len) ? EXIT_INPUT : EXIT_OK;
	else if (rc == EXIT_OK && fwrite(b.s, 1, b.len, stdout) != b.len)
		rc = EXIT_INPUT; /* main reports a failed standard output */
	buf_free(&b);
	return rc;
}
