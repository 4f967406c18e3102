/*
 * tune.c - doccc tune: measure candidate schedules of a model's steps on
 * the machine that will run them, and keep the best in a tuning database.
 *
 *   doccc tune MODEL --tuning-db FILE [-t T] [-c C] [--march A]
 *              [--tune-budget SECONDS] [--tune-runner CMD] [--threads N] [-j N]
 *
 * The model is imported with its dims fixed and run through the passes
 * before the tuning pass; its tunable steps (ir/passes/tuning.c's
 * tune_step: convolutions and GEMMs) are grouped by key, so that a
 * ResNet's repeated blocks are timed once, and steps the database already
 * holds for this target, march and thread count are skipped (a second run
 * continues where a budget stopped the first). The others go in order of
 * their share of the model's work (flops times repeats).
 *
 * For each step, every candidate of tune_candidates is built as a library
 * of that step alone (a cutout: its operands made the library's inputs and
 * outputs, its weights kept) in a child process of its own, at most -j at
 * a time (fork after the import: each child owns a copy of the SDFG to
 * expand, and the step's weights, made in the parent first); the compiles go through DOCC_CC, so a compiler cache serves
 * them. Then, with no compile running beside it, the harness
 * (backends/rt/tune_harness.h, compiled once) times them all,
 * interleaved in rounds. Here, or with a runner (--tune-runner, or
 * DOCC_TUNE_RUNNER: "ssh user@edge-box") on another machine: the runner's
 * words, then "sh -s", read a script on stdin that unpacks the harness and
 * the libraries (base64) into a temporary directory there, runs the
 * harness and removes the directory. The best candidate and every time
 * measured go in the database, one row per step, written as soon as the
 * step is done.
 *
 * The budget (--tune-budget, default 600 s) stops the tuning before a
 * step that would start past it; the steps left take the nearest tuned
 * step's schedule when the model is compiled (transfer).
 *
 * On a terminal the progress line (lib/progress.c) names the step being
 * tuned and counts the candidates of the whole tuning built so far; the
 * children building them never draw it.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../backends/emit.h"
#include "cmd.h"

enum { MAX_CANDIDATES = 24 };

/* One distinct step: the first node with its key, and how many share it. */
typedef struct {
	int node;
	int count;
	TuneStep s;
} Step;

static int step_order(const void *a, const void *b)
{
	const Step *x = a, *y = b;
	double wx = x->s.flops * x->count, wy = y->s.flops * y->count;
	return wx > wy ? -1 : wx < wy ? 1 : x->node - y->node;
}

/* Make g the program of root child k alone: its library node's operands
 * the inputs and outputs (constants and state stay as they are), nothing
 * else an input or output; dce then drops the rest. */
static void cutout(Sdfg *g, int k)
{
	Node *n = g->root->kids[k];
	LibNode *l = n->lib;
	g->root->kids[0] = n;
	g->root->nkids = 1;
	for (int c = 0; c < g->ncs; c++)
		if (g->cs[c].kind == CK_INPUT || g->cs[c].kind == CK_OUTPUT)
			g->cs[c].kind = CK_TRANSIENT, g->cs[c].written = 0;
	g->ninputs = g->noutputs = 0;
	g->inputs = arena_alloc(g->arena, sizeof(int) * (size_t)(l->nin + 1));
	g->outputs = arena_alloc(g->arena, sizeof(int) * (size_t)(l->nout + 1));
	for (int i = 0; i < l->nin; i++) {
		if (l->in[i] < 0)
			continue;
		int r = sdfg_root_of(g, l->in[i]);
		Container *c = sdfg_c(g, r);
		if (c->kind != CK_TRANSIENT)
			continue; /* a constant, state, or an input already */
		c->kind = CK_INPUT;
		c->io = g->ninputs;
		g->inputs[g->ninputs++] = r;
	}
	for (int i = 0; i < l->nout; i++) {
		if (l->out[i] < 0)
			continue;
		int r = sdfg_root_of(g, l->out[i]);
		Container *c = sdfg_c(g, r);
		if (c->kind != CK_TRANSIENT)
			continue;
		c->kind = CK_OUTPUT;
		c->io = g->noutputs;
		g->outputs[g->noutputs++] = r;
	}
}

/* In a child: the cutout of step k with schedule u, built in dir. */
static int build_candidate(Arena *a, Sdfg *g, int k, const Tune *u, const Options *o, const Target *tg, const char *dir)
{
	cutout(g, k);
	g->root->kids[0]->tune = u;
	g->name = "tune";
	int first = (int)(pass_find("expand") - pass_table);
	if (passes_run_one(g, o, tg, pass_find("dce")) || passes_run_span(g, o, tg, NULL, first, npasses))
		return 1;
	BuildArgs ba = {.workdir = dir, .outlib = arena_printf(a, "%s/libtune.so", dir),
	                .outhdr = arena_printf(a, "%s/tune.h", dir), .cmdline = "doccc tune candidate"};
	return backend_build(g, tg, &ba);
}

/* The candidates of the whole tuning, for the progress line: how many are
 * done (built, or failed to) of how many; the step being tuned. */
typedef struct {
	int done, total;
	const char *step;   /* "tuning step 2 of 4, 'conv2d_1' (conv2d 3x3 s1 g1 f32)" */
} Count;

/* Build the candidates c[0..n) of step k in dirs[], at most jobs at a
 * time; ok[i] set for those built. */
static void build_all(Arena *a, Sdfg *g, int k, const Tune *c, int n, const Options *o, const Target *tg, char **dirs,
                      int *ok, int jobs, Count *cn)
{
	pid_t pids[MAX_CANDIDATES];
	int running = 0, next = 0;
	while (next < n || running) {
		if (next < n && running < jobs) {
			const char *v = progress_active() ? tune_text(a, &c[next]) : "";
			progress_detail("candidates %d of %d, building %s", cn->done, cn->total, *v ? v : "the rules' schedule");
			fflush(NULL);
			pid_t p = fork();
			if (p == 0) {
				/* the child: no progress line, its messages to its log;
				 * _exit, so that the parent's temporaries are not removed
				 * by our atexit */
				progress_start(0);
				FILE *log = freopen(arena_printf(a, "%s.log", dirs[next]), "w", stderr);
				(void)log;
				spawn_verbose = 0;
				_exit(mkdir_p(dirs[next]) ? 1 : build_candidate(a, g, k, &c[next], o, tg, dirs[next]));
			}
			pids[next] = p;
			ok[next] = 0;
			if (p < 0) {
				diag_warn(NULL, "cannot fork to build a candidate: %s", strerror(errno));
				cn->done++;
			} else
				running++;
			next++;
			continue;
		}
		int st;
		pid_t p = wait(&st);
		if (p < 0)
			break;
		for (int i = 0; i < next; i++)
			if (pids[i] == p) {
				ok[i] = WIFEXITED(st) && WEXITSTATUS(st) == 0;
				running--;
				cn->done++;
				progress_detail("candidates %d of %d", cn->done, cn->total);
			}
	}
}

/* The script a runner's "sh -s" reads: the harness and the libraries
 * unpacked in a temporary directory, the harness run, the directory
 * removed. */
static int runner_script(Arena *a, const char *path, const char *harness, char **libs, int n, const char *args)
{
	Buf b = {0};
	buf_puts(&b, "set -e\nd=$(mktemp -d \"${TMPDIR:-/tmp}/doccc-tune.XXXXXX\")\ntrap 'rm -rf \"$d\"' EXIT\n");
	int rc = 0;
	for (int i = -1; i < n && !rc; i++) {
		size_t len;
		char *data = file_read(i < 0 ? harness : libs[i], &len);
		if (!data) {
			rc = -1;
			break;
		}
		buf_printf(&b, "base64 -d > \"$d/%s\" <<'DOCCC_EOF'\n", i < 0 ? "harness" : arena_printf(a, "%d.so", i));
		buf_base64(&b, data, len);
		buf_puts(&b, "DOCCC_EOF\n");
		free(data);
	}
	buf_printf(&b, "chmod +x \"$d/harness\"\n\"$d/harness\" %s", args);
	for (int i = 0; i < n; i++)
		buf_printf(&b, " \"$d/%d.so\"", i);
	buf_puts(&b, "\n");
	rc = rc || file_write(path, b.s, b.len);
	buf_free(&b);
	return rc ? -1 : 0;
}

typedef struct {
	const char *harness;   /* the harness, built */
	const char *runner;    /* its command words' text, or NULL: here */
	int threads;
	double ms;
	const char *dir;       /* the working directory */
} Timer;

/* Time libs[0..n) (NULL entries skipped): ns[i], or -1 where the harness
 * said error (why[i] its message). 0, or -1 reported. */
static int time_all(Arena *a, const Timer *tm, char **libs, int n, double *ns, const char **why)
{
	char **argv = arena_alloc(a, sizeof(char *) * (size_t)(n + 64));
	int m = 0, nl = 0, *which = arena_alloc(a, sizeof(int) * (size_t)(n + 1));
	char **built = arena_alloc(a, sizeof(char *) * (size_t)(n + 1));
	for (int i = 0; i < n; i++) {
		ns[i] = -1;
		if (libs[i])
			which[nl] = i, built[nl++] = libs[i];
	}
	if (!nl)
		return 0;
	const char *args = arena_printf(a, "%d %g", tm->threads, tm->ms);
	const char *out = arena_printf(a, "%s/times.txt", tm->dir), *in = NULL;
	if (tm->runner) {
		int nw;
		char **w = spawn_words(a, tm->runner, &nw);
		for (int i = 0; i < nw && i < 48; i++)
			argv[m++] = w[i];
		argv[m++] = "sh", argv[m++] = "-s";
		in = arena_printf(a, "%s/runner.sh", tm->dir);
		if (runner_script(a, in, tm->harness, built, nl, args))
			return -1;
	} else {
		argv[m++] = (char *)tm->harness;
		argv[m++] = arena_printf(a, "%d", tm->threads);
		argv[m++] = arena_printf(a, "%g", tm->ms);
		for (int i = 0; i < nl; i++)
			argv[m++] = built[i];
	}
	argv[m] = NULL;
	char *err = NULL;
	int st = spawn_run_io(NULL, argv, in, out, &err);
	size_t len = 0;
	char *text = st == 0 ? file_read(out, &len) : NULL;
	int got = 0;
	for (char *p = text; p && *p && got < nl;) {
		char *e = strchr(p, '\n');
		if (e)
			*e = 0;
		double v;
		if (sscanf(p, "ok %lf", &v) == 1 && v > 0)
			ns[which[got++]] = v;
		else if (!strncmp(p, "error ", 6))
			why[which[got++]] = arena_strdup(a, p + 6);
		else
			break;
		p = e ? e + 1 : p + strlen(p);
	}
	for (size_t k = err ? strlen(err) : 0; k && (err[k - 1] == '\n' || err[k - 1] == ' '); k--)
		err[k - 1] = 0;
	if (st != 0 || got != nl) {
		diag_error(tm->runner ? tm->runner : tm->harness, "the timing harness %s (%s)%s%s",
		           st < 0 ? "could not start" : st > 0 ? "failed" : "printed something else",
		           st > 0 ? arena_printf(a, "exit status %d", st) : arena_printf(a, "%d of %d lines", got, nl),
		           err && *err ? ": " : "", err && *err ? err : "");
		free(text), free(err);
		return -1;
	}
	free(text), free(err);
	return 0;
}

static void fmt_ns(Buf *b, double ns)
{
	if (ns < 1e3)
		buf_printf(b, "%.0f ns", ns);
	else if (ns < 1e6)
		buf_printf(b, "%.1f us", ns / 1e3);
	else
		buf_printf(b, "%.3f ms", ns / 1e6);
}

/* Make and pin (or unpin) the bytes of the constants step k reads, and
 * of the integers a folded dequantization keeps, in the parent: the
 * children then never read the input's archive, whose file offset they
 * would share. 0, or -1 reported. */
static int pin_consts(Sdfg *g, int k, int pin)
{
	const LibNode *l = g->root->kids[k]->lib;
	for (int i = 0; i < l->nin; i++) {
		int r = l->in[i] >= 0 ? sdfg_root_of(g, l->in[i]) : -1;
		if (r < 0 || g->cs[r].kind != CK_CONST || !sdfg_const_known(g, r))
			continue;
		const Dequant *d = g->cs[r].dq;
		int ids[4] = {r, d ? d->q : -1, d ? d->s : -1, d ? d->z : -1};
		for (int j = 0; j < 4; j++) {
			if (ids[j] < 0 || !sdfg_const_known(g, ids[j]))
				continue;
			if (!pin)
				sdfg_const_put(g, ids[j]);
			else if (!sdfg_const_get(g, ids[j]))
				return -1;
		}
	}
	return 0;
}

/* The candidates of step s into c: how many. */
static int step_candidates(Sdfg *g, const Step *s, const Options *o, const Target *tg, Tune c[MAX_CANDIDATES])
{
	PassCtx pc = {g, o, tg, pass_find("expand"), NULL}; /* the rules' forms, from the expand pass's options */
	TuneRules rules = {pass_bool(&pc, "winograd"), pass_int(&pc, "pointwise_max_channels"),
	                   pass_int(&pc, "pointwise_min_pixels"), pass_int(&pc, "winograd_max_mb")};
	return tune_candidates(&s->s, tg, &rules, c, MAX_CANDIDATES);
}

/* Tune step s: build and time its candidates, store the best. 0; 1 when
 * its cutout cannot run on the harness's inputs (noted, not stored); -1
 * reported. */
static int tune_one(Arena *a, Sdfg *g, const Step *s, const Options *o, const Target *tg, const Timer *tm, TuneDb *db,
                    const char *dbpath, int jobs, int idx, int *ncompiled, Count *cn)
{
	Tune c[MAX_CANDIDATES];
	int n = step_candidates(g, s, o, tg, c);
	char **dirs = arena_alloc(a, sizeof(char *) * (size_t)n), **libs = arena_alloc(a, sizeof(char *) * (size_t)n);
	int ok[MAX_CANDIDATES] = {0};
	double ns[MAX_CANDIDATES] = {0};
	for (int i = 0; i < n; i++)
		dirs[i] = arena_printf(a, "%s/s%d_c%d", tm->dir, idx, i);
	if (pin_consts(g, s->node, 1))
		return -1;
	build_all(a, g, s->node, c, n, o, tg, dirs, ok, jobs, cn);
	pin_consts(g, s->node, 0);
	int nb = 0;
	for (int i = 0; i < n; i++) {
		libs[i] = ok[i] ? arena_printf(a, "%s/libtune.so", dirs[i]) : NULL;
		nb += ok[i];
	}
	*ncompiled += nb;
	if (!ok[0]) {
		char *log = file_read(arena_printf(a, "%s.log", dirs[0]), NULL);
		diag_error(NULL, "step '%s': its cutout with the rules' schedule did not build:", g->root->kids[s->node]->label);
		if (log)
			progress_puts(log);
		free(log);
		return -1;
	}
	const char *why[MAX_CANDIDATES] = {0};
	progress_phase("%s: timing %d candidate%s", cn->step, nb, nb == 1 ? "" : "s");
	if (time_all(a, tm, libs, n, ns, why))
		return -1;
	if (ns[0] <= 0 && why[0] && !strncmp(why[0], "run: ", 5)) {
		/* a step that fails on the harness's zeros (an index it checks): its rules stand */
		diag_note(dbpath, "step '%s' (%s) cannot be timed alone: %s; not tuned", g->root->kids[s->node]->label,
		          s->s.kind, why[0] + 5);
		return 1;
	}
	if (ns[0] <= 0) { /* the library does not load: not for this machine */
		const char *w = why[0] && !strncmp(why[0], "load: ", 6) ? why[0] + 6 : why[0] ? why[0] : "?";
		diag_error(tm->runner ? tm->runner : NULL, "step '%s' of the model does not run %s: %s%s",
		           g->root->kids[s->node]->label, tm->runner ? "there" : "here", w,
		           tm->runner ? "" : " (time it on a machine that has them: --tune-runner 'ssh HOST', or --march)");
		return -1;
	}
	int best = 0;
	for (int i = 1; i < n; i++) {
		if (ns[i] > 0 && ns[i] < ns[best])
			best = i;
		if (ns[i] <= 0 && ok[i])
			diag_warn(dbpath, "step '%s': candidate %s failed: %s", g->root->kids[s->node]->label,
			          tune_text(a, &c[i]), why[i] ? why[i] : "?");
	}
	Buf trials = {0};
	for (int i = 0; i < n; i++) {
		const char *p = tune_text(a, &c[i]);
		buf_printf(&trials, "%s%s: ", i ? "; " : "", *p ? p : "rules");
		if (ns[i] > 0)
			buf_printf(&trials, "%.0f", ns[i]);
		else
			buf_puts(&trials, ok[i] ? "failed" : "not built");
	}
	TuneRow r = {s->s.key, s->s.kind, tg->name, tg->march, tm->threads, TUNE_VERSION, s->s.dims,
	             tune_text(a, &c[best]), ns[best], ns[0], trials.s, s->s.text};
	int rc = tunedb_put(db, &r);
	buf_free(&trials);
	Buf m = {0};
	buf_printf(&m, "step '%s' (%s; %s", g->root->kids[s->node]->label, s->s.kind, s->s.dims);
	if (s->count > 1)
		buf_printf(&m, "; %d like it", s->count);
	buf_puts(&m, "): rules ");
	fmt_ns(&m, ns[0]);
	if (best) {
		buf_printf(&m, ", %s ", r.params);
		fmt_ns(&m, ns[best]);
		buf_printf(&m, " (%.2fx)", ns[0] / ns[best]);
	} else
		buf_puts(&m, ", the best of its candidates");
	buf_printf(&m, "; %d candidates", n);
	progress_hide(); /* until the next step's */
	diag_note(NULL, "%s", m.s);
	buf_free(&m);
	return rc;
}

int cmd_tune(Arena *a, const char *name, const ImportArgs *ia0, Options *o, Target *tg, const TuneArgs *ta)
{
	const PassOpt *po = opt_find_passopt(o, "tuning.db");
	const char *dbpath = po && *po->val ? po->val : NULL;
	if (!dbpath)
		return arg_usage(ta->usage, "%s", "doccc tune needs the database to fill: --tuning-db FILE");
	if (TARGET_IS_GPU(tg) || tg->vec_bits < 128) {
		diag_error(NULL, "doccc tune times the CPU targets' SIMD kernels (-t sequential or openmp), not -t %s", tg->name);
		return EXIT_USAGE;
	}
	if (tg->triple && !ta->runner) {
		diag_error(NULL, "doccc tune for %s times the candidates on a machine of that architecture: give it with "
		           "--tune-runner 'ssh user@board' (times under emulation would not be the device's)", tg->triple);
		return EXIT_USAGE;
	}
	ImportArgs ia = *ia0;
	ia.fixed = 1; /* the cutouts are timed at the export's sizes */
	double t0 = now_ms();
	Sdfg *g = import_program(a, name, &ia);
	int upto = (int)(pass_find("tuning") - pass_table);
	if (!g || sdfg_verify(g, "import") || passes_run_span(g, o, tg, NULL, 0, upto))
		return EXIT_INPUT;
	TuneDb *db = tunedb_open(dbpath, 1);
	if (!db)
		return EXIT_INPUT;
	if (tunedb_foreign(db)) {
		diag_error(dbpath, "a tuning database of a newer doccc: this one does not write it (give another file)");
		tunedb_close(db);
		return EXIT_INPUT;
	}
	int threads = ta->threads > 0 ? ta->threads : tg->threads ? (int)sysconf(_SC_NPROCESSORS_ONLN) : 1;
	/* the distinct steps not in the database yet */
	Step *steps = arena_alloc(a, sizeof(Step) * (size_t)(g->root->nkids + 1));
	int ns = 0, ntotal = 0, nknown = 0;
	for (int i = 0; i < g->root->nkids; i++) {
		Step s = {i, 1, {0}};
		if (!tune_step(g, g->root->kids[i], tg, &s.s))
			continue;
		ntotal++;
		int j = 0;
		while (j < ns && strcmp(steps[j].s.key, s.s.key))
			j++;
		if (j < ns) {
			steps[j].count++;
			continue;
		}
		TuneRow r;
		int f = ta->retune ? 0 : tunedb_get(db, s.s.key, tg->name, tg->march, threads, TUNE_VERSION, a, &r);
		if (f < 0) {
			tunedb_close(db);
			return EXIT_INPUT;
		}
		if (f) {
			nknown++;
			s.count = -1; /* known: counted, not tuned */
		}
		steps[ns++] = s;
	}
	int nt = 0;
	for (int i = 0; i < ns; i++)
		if (steps[i].count > 0)
			steps[nt++] = steps[i];
	qsort(steps, (size_t)nt, sizeof *steps, step_order);
	const char *dir = tmp_dir(a);
	if (!dir) {
		tunedb_close(db);
		return EXIT_INPUT;
	}
	Timer tm = {arena_printf(a, "%s/harness", dir), ta->runner, threads, ta->ms, dir};
	Count cn = {0, 0, NULL};
	for (int i = 0; i < nt; i++) {
		Tune c[MAX_CANDIDATES];
		cn.total += step_candidates(g, &steps[i], o, tg, c);
	}
	if (nt)
		progress_phase("compiling the timing harness");
	const char *hsrc = rt_text("tune_harness.h"), *desc = emit_desc_block();
	int rc = file_write(arena_printf(a, "%s/harness.c", dir), hsrc, strlen(hsrc)) ||
	                 file_write(arena_printf(a, "%s/doccc_model.h", dir), desc, strlen(desc))
	             ? 1
	             : nt ? backend_build_program(a, tg, dir, "harness.c", "harness") : 0;
	int done = 0, started = 0, skipped = 0, ncompiled = 0;
	double start = now_ms();
	for (int i = 0; i < nt && !rc; i++, started++) {
		if ((now_ms() - start) / 1e3 >= ta->budget)
			break;
		cn.step = arena_printf(a, "tuning step %d of %d, '%s' (%s)", i + 1, nt, g->root->kids[steps[i].node]->label,
		                       steps[i].s.kind);
		progress_phase("%s:", cn.step);
		int r = tune_one(a, g, &steps[i], o, tg, &tm, db, dbpath, ta->jobs, i, &ncompiled, &cn);
		rc = r < 0;
		*(r > 0 ? &skipped : &done) += r >= 0;
	}
	tunedb_close(db);
	progress_end();
	if (rc)
		return rc == 3 ? EXIT_CC : EXIT_INPUT;
	diag_note(dbpath, "%d distinct step%s of %d tunable: %d tuned now, in %.1f s (%d candidate%s built, timed on %d "
	          "thread%s %s)%s%s%s; %d already in the database%s", ns, ns == 1 ? "" : "s", ntotal, done,
	          (now_ms() - t0) / 1e3, ncompiled, ncompiled == 1 ? "" : "s", threads, threads == 1 ? "" : "s",
	          ta->runner ? arena_printf(a, "through '%s'", ta->runner) : "here",
	          skipped ? arena_printf(a, "; %d that cannot be timed alone", skipped) : "",
	          started < nt ? arena_printf(a, "; %d left by the budget of %g s", nt - started, ta->budget) : "",
	          started < nt ? " (a compile gives them the nearest tuned step's schedule; doccc tune again goes on)" : "",
	          nknown, ta->retune ? "" : " (--retune times them again)");
	return EXIT_OK;
}
