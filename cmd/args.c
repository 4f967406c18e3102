/*
 * args.c - the command-line options the compile and `doccc opt` share:
 * those that choose the target (-t, -c, --march, --offload-arch, --triple) and those
 * that configure the passes (--options FILE, --pass-opt P.K=V,
 * --disable-pass P, --tuning-db FILE for tuning.db), taken from argv in one place and applied in one order
 * (the YAML file, then the flags, then the pass options checked against the
 * pass table and the target resolved), so both commands accept the same
 * spellings with the same messages.
 */
#include <string.h>

#include "cmd.h"

int arg_take(int argc, char **argv, int *i, const char *flag, const char **v)
{
	const char *s = argv[*i];
	size_t n = strlen(flag);
	if (!strcmp(s, flag)) {
		*v = *i + 1 < argc ? argv[++*i] : NULL;
		return 1;
	}
	if (!strncmp(s, flag, n) && s[n] == '=') {
		*v = s + n + 1;
		return 1;
	}
	return 0;
}

int arg_usage(const char *usage, const char *fmt, const char *arg)
{
	fprintf(stderr, "doccc: error: ");
	fprintf(stderr, fmt, arg);
	fprintf(stderr, "\n");
	fputs(usage, stderr);
	return EXIT_USAGE;
}

int targs_take(Arena *a, TargetArgs *t, int argc, char **argv, int *i)
{
	const char *s = argv[*i], *v = NULL;
	if (arg_take(argc, argv, i, "-t", &v) || arg_take(argc, argv, i, "--target", &v) ||
	    arg_take(argc, argv, i, "-c", &v) || arg_take(argc, argv, i, "--category", &v) ||
	    arg_take(argc, argv, i, "--march", &v) || arg_take(argc, argv, i, "--offload-arch", &v) ||
	    arg_take(argc, argv, i, "--triple", &v)) {
		if (!v)
			return arg_usage(t->usage, "option '%s' needs a value", s);
		const char *key = !strncmp(s, "--triple", 8) ? "triple"
		                  : s[1] == 't' || !strncmp(s, "--target", 8) ? "target"
		                  : s[1] == 'c' || !strncmp(s, "--category", 10) ? "category" : "march";
		const char *const *allowed = !strcmp(key, "category") ? category_names : NULL;
		int target = !strcmp(key, "target"); /* the backends' names (backends/target.c) */
		int ok = target ? backend_find(v) != NULL : !allowed;
		for (int k = 0; allowed && allowed[k]; k++)
			ok |= !strcmp(allowed[k], v);
		if (!ok || !*v) {
			fprintf(stderr, "doccc: error: unknown %s '%s' (expected one of:", key, v);
			for (int k = 0; target && k < NTARGETS; k++)
				fprintf(stderr, " %s", backend_table[k].name);
			for (int k = 0; allowed && allowed[k]; k++)
				fprintf(stderr, " %s", allowed[k]);
			fprintf(stderr, ")\n");
			return EXIT_USAGE;
		}
		if (t->nset == (int)COUNTOF(t->set_key))
			return arg_usage(t->usage, "%s", "too many options");
		t->set_key[t->nset] = key;
		t->set_val[t->nset++] = v;
		buf_printf(t->cmdline, "%s%s=%s", t->cmdline->len ? " " : "", key, v);
		return -1;
	}
	if (arg_take(argc, argv, i, "--options", &v)) {
		if (!v)
			return arg_usage(t->usage, "option '%s' needs a value", s);
		t->optfile = v;
		return -1;
	}
	if (arg_take(argc, argv, i, "--tuning-db", &v)) {
		/* tuning.db, which the compile reads and doccc tune fills; its
		 * path stays out of the settings the library records */
		if (!v || !*v)
			return arg_usage(t->usage, "option '%s' needs a value", s);
		if (t->npopts == (int)COUNTOF(t->popts))
			return arg_usage(t->usage, "%s", "too many pass options");
		t->popts[t->npopts++] = arena_printf(a, "tuning.db=%s", v);
		return -1;
	}
	if (arg_take(argc, argv, i, "--pass-opt", &v) || arg_take(argc, argv, i, "--disable-pass", &v)) {
		if (!v || !*v)
			return arg_usage(t->usage, "option '%s' needs a value", s);
		if (t->npopts == (int)COUNTOF(t->popts))
			return arg_usage(t->usage, "%s", "too many pass options");
		if (!strncmp(s, "--disable-pass", 14))
			t->popts[t->npopts++] = arena_printf(a, "%s.enabled=false", v);
		else {
			if (!strchr(v, '=') || !strchr(v, '.') || strchr(v, '.') > strchr(v, '='))
				return arg_usage(t->usage, "--pass-opt takes PASS.OPTION=VALUE (got '%s')", v);
			t->popts[t->npopts++] = v;
		}
		if (strncmp(v, "tuning.db=", 10))
			buf_printf(t->cmdline, "%s%s", t->cmdline->len ? " " : "", t->popts[t->npopts - 1]);
		return -1;
	}
	return 0;
}

int targs_apply(Arena *a, const TargetArgs *t, Options *o, Target *tg)
{
	if (t->optfile && opt_load_yaml(o, t->optfile))
		return EXIT_INPUT;
	for (int i = 0; i < t->nset; i++)
		if (opt_set(o, t->set_key[i], t->set_val[i], "command line"))
			return EXIT_USAGE;
	for (int i = 0; i < t->npopts; i++) {
		const char *eq = strchr(t->popts[i], '=');
		opt_add_passopt(o, arena_strndup(a, t->popts[i], (size_t)(eq - t->popts[i])), eq + 1, "command line");
	}
	if (passes_check_options(o))
		return t->optfile ? EXIT_INPUT : EXIT_USAGE;
	if (target_resolve(tg, o))
		return EXIT_USAGE;
	return -1;
}
