/*
 * tuning.c - the tuning pass: schedules measured on the machine, from a
 * tuning database, for the steps whose schedule the rules would choose.
 *
 * A step here is a library node at the top level of the root, before
 * expansion, on a CPU target with SIMD and constant sizes (tune_step): a
 * convolution or GEMM, whose schedule has several parameters, or on
 * openmp any other op (but an assertion), whose one choice is threads. Its canonical text names everything its expansion depends
 * on: the op and its attributes; the dtype, shape, strides and offset of
 * every operand, which are constants and which constants are folded
 * integer weights; the contraction precision. Never a name: the repeated
 * layers of a model, and the same layer in two models, share one entry, as
 * the emitter prints one function for the steps whose text is the same.
 * The database key is the text's sha256, with the target, the march, the
 * thread count and TUNE_VERSION (the parameters' meaning: bumped when an
 * expansion changes what they do, so that old entries are never misread).
 *
 * The parameters (ir.h's Tune) are the choices the rules make for such a
 * step: the register tile, Winograd or direct for a 3x3 stride-1
 * convolution, vectors along the pixels or the output channels for a
 * pointwise one, threads or one core. The expansion and schedule passes
 * take them where set; everything else about the step stays the rules'.
 * Another op's kind is its name and operand dtypes, its sizes its
 * output's.
 *
 * Lookup (tuning.db, or with remote_tuning: true the database that
 * DOCC_TUNING_DB names): the step's own entry; else, with tuning.transfer,
 * the entry of the nearest tuned step of the same kind (op, kernel size,
 * stride, dilation, groups, dtypes), nearest by the sum over their sizes
 * of |log(a / b)|, ties to the smaller key: docc's transfer tuning, which
 * takes the schedule of the most similar loop nest measured. The pass
 * counts the steps tuned, transferred and left to the rules in the Sdfg;
 * the driver says so in a note. The same database gives the same choices,
 * so the same bytes.
 *
 * Candidates (tune_candidates, for doccc tune): the rules' schedule first,
 * then register tiles of 1 to 4 vectors of columns, as many rows as fit
 * the vector registers with the column vectors and a broadcast (and half
 * that), each in the rules' form and, where a step has two, in the other
 * (Winograd or direct, pixels or channels: TuneRules says which the rules
 * take), and one core instead of threads; another op: one core, and
 * threads (where its size kept the rules from them).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../ir.h"

static int64_t cdim(Sdfg *g, int c, int d)
{
	int64_t v = -1;
	Container *k = sdfg_c(g, c);
	if (d < 0 || d >= k->rank || !ex_isint(k->shape[d], &v))
		return -1;
	return v;
}

double lib_flops(Sdfg *g, const LibNode *l)
{
	if ((l->op != LIB_CONV && l->op != LIB_GEMM) || l->nin < 2 || l->nout < 1 || l->out[0] < 0 || l->in[1] < 0)
		return 0;
	int out = l->out[0], x = l->in[0], w = l->in[1];
	int64_t sz[MAXDIM + 2];       /* the output's sizes, then K (the input channels of a group), then taps */
	int n = 0, orank = sdfg_c(g, out)->rank, wrank = sdfg_c(g, w)->rank;
	for (int d = 0; d < orank; d++)
		sz[n++] = cdim(g, out, d);
	if (l->op == LIB_GEMM)
		sz[n++] = cdim(g, w, wrank - 2);
	else {
		int64_t G = lib_int(l, "groups", 1), C = cdim(g, x, 1);
		sz[n++] = C > 0 && G > 0 ? C / G : -1;
		int64_t taps = 1;
		for (int d = 2; d < wrank; d++)
			taps *= cdim(g, w, d) > 0 ? cdim(g, w, d) : 0;
		sz[n++] = taps;
	}
	double f = 2;
	for (int i = 0; i < n; i++) {
		if (sz[i] <= 0)
			return 0; /* known at run time */
		f *= (double)sz[i];
	}
	return f;
}

static void text_operand(Buf *b, Sdfg *g, const char *role, int c)
{
	if (c < 0) {
		buf_printf(b, " %s=-", role);
		return;
	}
	Container *k = sdfg_c(g, c);
	const Container *r = sdfg_c(g, sdfg_root_of(g, c));
	buf_printf(b, " %s=%s[", role, dtype_info[k->dt].name);
	for (int d = 0; d < k->rank; d++) {
		if (d) buf_putc(b, ',');
		ex_print(b, g, k->shape[d]);
	}
	buf_puts(b, "]/");
	for (int d = 0; d < k->rank; d++) {
		if (d) buf_putc(b, ',');
		ex_print(b, g, k->stride[d]);
	}
	buf_puts(b, "+");
	ex_print(b, g, k->offset);
	if (r->kind == CK_CONST)
		buf_puts(b, " const");
	if (r->dq)
		buf_printf(b, " dq=%s", dtype_info[sdfg_c(g, r->dq->q)->dt].name);
}

static void text_attrs(Buf *b, const LibNode *l)
{
	for (int i = 0; i < l->nattrs; i++) {
		const Attr *a = &l->attrs[i];
		buf_printf(b, " %s=", a->name);
		switch (a->kind) {
		case A_INT: case A_BOOL: buf_printf(b, "%lld", (long long)(a->nints ? a->ints[0] : 0)); break;
		case A_INTS:
			for (int j = 0; j < a->nints; j++)
				buf_printf(b, "%s%lld", j ? "," : "", (long long)a->ints[j]);
			break;
		case A_FLOAT: buf_printf(b, "%.17g", a->f); break;
		case A_STR: buf_printf(b, "'%s'", a->s ? a->s : ""); break;
		}
	}
}

/* Constant sizes everywhere the kernels look. */
static int sized(Sdfg *g, const LibNode *l)
{
	for (int i = 0; i < l->nin; i++)
		for (int d = 0; l->in[i] >= 0 && d < sdfg_c(g, l->in[i])->rank; d++)
			if (cdim(g, l->in[i], d) <= 0)
				return 0;
	for (int d = 0; d < sdfg_c(g, l->out[0])->rank; d++)
		if (cdim(g, l->out[0], d) <= 0)
			return 0;
	return 1;
}

int tune_step(Sdfg *g, const Node *n, const Target *t, TuneStep *s)
{
	static const char *const precision[] = {"highest", "high", "medium"};
	memset(s, 0, sizeof *s);
	const LibNode *l = n->kind == N_BLOCK ? n->lib : NULL;
	int contraction = l && (l->op == LIB_CONV || l->op == LIB_GEMM);
	/* other steps have one choice, threads: openmp only; an assertion's
	 * cutout would fail on the harness's zeros */
	if (!l || (!contraction && (!t->threads || l->op == LIB_ASSERT)) || TARGET_IS_GPU(t) || t->vec_bits < 128 ||
	    l->nout < 1 || l->out[0] < 0 || !sized(g, l))
		return 0;
	int out = l->out[0], x = l->in[0], w = l->in[1];
	Container *o = sdfg_c(g, out);
	Buf b = {0};
	buf_printf(&b, "%s", op_name(l->op));
	text_attrs(&b, l);
	for (int i = 0; i < l->nin; i++)
		text_operand(&b, g, arena_printf(g->arena, "in%d", i), l->in[i]);
	text_operand(&b, g, "out", out);
	buf_printf(&b, " precision=%s", precision[t->precision]);
	s->text = arena_strdup(g->arena, b.s);
	sha256_hex_of(b.s, b.len, s->key);
	buf_free(&b);
	if (!contraction) { /* the op and its dtypes; its output's sizes */
		Buf k = {0}, d = {0};
		buf_printf(&k, "%s", op_name(l->op));
		for (int i = 0; i < l->nin; i++)
			buf_printf(&k, "%s%s", i ? "," : " ", l->in[i] >= 0 ? dtype_info[sdfg_c(g, l->in[i])->dt].name : "-");
		double numel = 1;
		for (int i = 0; i < o->rank; i++) {
			int64_t v = cdim(g, out, i);
			buf_printf(&d, "%s%lld", i ? " " : "", (long long)v);
			numel *= (double)v;
		}
		s->kind = arena_strdup(g->arena, k.s);
		s->dims = arena_strdup(g->arena, d.len ? d.s : "1");
		s->flops = numel; /* the elements it writes: its share of the work, roughly */
		s->other = 1;
		buf_free(&k), buf_free(&d);
		return 1;
	}
	const char *dts = arena_printf(g->arena, "%s,%s,%s", dtype_info[sdfg_c(g, x)->dt].name,
	                               dtype_info[sdfg_c(g, w)->dt].name, dtype_info[o->dt].name);
	int integer = (int)lib_int(l, "int8", 0);
	if (l->op == LIB_GEMM) {
		int64_t M = cdim(g, out, o->rank - 2), N = cdim(g, out, o->rank - 1), K = cdim(g, w, sdfg_c(g, w)->rank - 2);
		int64_t batch = 1;
		for (int d = 0; d < o->rank - 2; d++)
			batch *= cdim(g, out, d);
		s->kind = arena_printf(g->arena, "gemm %s%s%s", dts, sdfg_const_known(g, sdfg_root_of(g, w)) ? " constB" : "",
		                       integer ? " int8" : "");
		s->dims = arena_printf(g->arena, "%lld %lld %lld %lld", (long long)batch, (long long)M, (long long)N,
		                       (long long)K);
		s->flops = lib_flops(g, l);
		s->rows = M;
		return 1;
	}
	int64_t st[3] = {1, 1, 1}, dl[3] = {1, 1, 1}, G = lib_int(l, "groups", 1);
	int nd = lib_ints(l, "stride", st, 3);
	lib_ints(l, "dilation", dl, 3);
	int tr = (int)lib_int(l, "transposed", 0);
	if (nd < 1 || nd > 3 || o->rank != nd + 2)
		return 0;
	int64_t C = cdim(g, x, 1), OC = cdim(g, out, 1), taps = 1;
	Buf k = {0}, d = {0};
	buf_printf(&k, "conv%dd%s k", nd, tr ? "T" : "");
	for (int i = 0; i < nd; i++) {
		taps *= cdim(g, w, 2 + i);
		buf_printf(&k, "%s%lld", i ? "x" : "", (long long)cdim(g, w, 2 + i));
	}
	buf_puts(&k, " s");
	for (int i = 0; i < nd; i++)
		buf_printf(&k, "%s%lld", i ? "x" : "", (long long)st[i]);
	buf_puts(&k, " d");
	for (int i = 0; i < nd; i++)
		buf_printf(&k, "%s%lld", i ? "x" : "", (long long)dl[i]);
	s->dw = G > 1 && G == C && !tr;
	buf_printf(&k, " %s %s%s", s->dw ? "depthwise" : G == 1 ? "g1" : "grouped", dts, integer ? " int8" : "");
	buf_printf(&d, "%lld %lld %lld", (long long)cdim(g, out, 0), (long long)C, (long long)OC);
	double pix = 1;
	for (int i = 0; i < nd; i++) {
		buf_printf(&d, " %lld", (long long)cdim(g, out, 2 + i));
		pix *= (double)cdim(g, out, 2 + i);
	}
	s->kind = arena_strdup(g->arena, k.s);
	s->dims = arena_strdup(g->arena, d.s);
	buf_free(&k), buf_free(&d);
	s->flops = lib_flops(g, l);
	s->rows = cdim(g, out, 1 + nd);
	s->cin = C;
	s->px = (int64_t)pix;
	if (nd == 2)
		s->wino_bytes = wino_tile_bytes(cdim(g, out, 0), C, OC, cdim(g, out, 2), cdim(g, out, 3), t->vec_bits / 32);
	int f32 = !integer && sdfg_c(g, x)->dt == DT_F32;
	int lanes = t->vec_bits / 32;
	s->wino = f32 && nd == 2 && G == 1 && !tr && taps == 9 && cdim(g, w, 2) == 3 && st[0] == 1 && st[1] == 1 &&
	          dl[0] == 1 && dl[1] == 1 && C >= lanes && cdim(g, out, 2) >= 8 && cdim(g, out, 3) >= 8;
	s->pixels = f32 && nd == 2 && G == 1 && !tr && taps == 1 && s->px >= lanes;
	return 1;
}

/* Is t already among out[0..n), by what the kernel would use (a tile's
 * rows cut to the rows there are)? */
static int seen(const Tune *out, int n, const Tune *t, int64_t rows)
{
	for (int i = 0; i < n; i++) {
		const Tune *u = &out[i];
		if (MIN(u->tm, rows) == MIN(t->tm, rows) && u->tn == t->tn && u->winograd == t->winograd &&
		    u->pixels == t->pixels && u->parallel == t->parallel)
			return 1;
	}
	return 0;
}

int tune_candidates(const TuneStep *s, const Target *t, const TuneRules *r, Tune *out, int max)
{
	enum { NTILES = 8 };
	int lanes = t->vec_bits / 32, n = 0;
	Tune rules = {t->tile_m, t->tile_n, -1, -1, -1, 0}, tiles[NTILES];
	int nt = 0;
	tiles[nt++] = rules;
	for (int nv = 1; nv <= 4; nv++) {
		/* tm rows x nv vectors of sums, nv vectors of weights, a broadcast */
		int tm = MIN(16, (t->vec_regs - 1 - nv) / nv);
		for (int half = 0; half < (nv <= 2 ? 2 : 1) && nt < NTILES; half++) {
			Tune c = {half ? (tm + 1) / 2 : tm, nv * lanes, -1, -1, -1, 0};
			if (c.tm >= 1 && !seen(tiles, nt, &c, s->rows))
				tiles[nt++] = c;
		}
	}
	if (s->dw || s->other)
		nt = 1; /* the depthwise kernels take their own shape; other steps have none */
	/* the rules' form, then the other one: Winograd or direct, pixels or
	 * channels */
	int forms = s->wino || s->pixels ? 2 : 1;
	for (int f = 0; f < forms; f++)
		for (int i = 0; i < nt && n < max; i++) {
			Tune c = tiles[i];
			if (f && s->wino)
				c.winograd = !(r->winograd && s->wino_bytes <= (double)r->wino_max_mb * (1 << 20));
			else if (f)
				c.pixels = !pointwise_pixels(s->cin, s->px, r->pw_max_c, r->pw_min_px);
			if (!seen(out, n, &c, s->rows))
				out[n++] = c;
		}
	/* one core, and (a step the rules keep on one core for its size)
	 * threads */
	for (int par = 0; par < (s->other ? 2 : 1) && t->threads && n < max; par++) {
		Tune c = rules;
		c.parallel = par;
		out[n++] = c;
	}
	/* the rules' own values read as "the rules'" */
	for (int i = 0; i < n; i++) {
		if (out[i].tm == rules.tm && out[i].tn == rules.tn)
			out[i].tm = out[i].tn = 0;
	}
	return n;
}

/* The parameters: name, field, the values accepted. */
static const struct {
	const char *name;
	size_t ofs;
	int lo, hi;
} tune_fields[] = {
	{"tm", offsetof(Tune, tm), 1, 64},
	{"tn", offsetof(Tune, tn), 1, 256},
	{"winograd", offsetof(Tune, winograd), 0, 1},
	{"pixels", offsetof(Tune, pixels), 0, 1},
	{"parallel", offsetof(Tune, parallel), 0, 1},
};

static int *field(Tune *t, int i)
{
	return (int *)((char *)t + tune_fields[i].ofs);
}

const char *tune_text(Arena *a, const Tune *t)
{
	Buf b = {0};
	Tune u = *t;
	for (int i = 0; i < (int)COUNTOF(tune_fields); i++) {
		int v = *field(&u, i);
		if (v >= tune_fields[i].lo && (i < 2 ? v > 0 : v >= 0))
			buf_printf(&b, "%s%s=%d", b.len ? " " : "", tune_fields[i].name, v);
	}
	const char *s = arena_strdup(a, b.s ? b.s : "");
	buf_free(&b);
	return s;
}

int tune_parse(const char *text, Tune *t, const char **why)
{
	*t = (Tune){0, 0, -1, -1, -1, 0};
	const char *p = text;
	unsigned set = 0;
	while (*p) {
		size_t n = strcspn(p, "=");
		int i = 0;
		while (i < (int)COUNTOF(tune_fields) && (strlen(tune_fields[i].name) != n || strncmp(tune_fields[i].name, p, n)))
			i++;
		if (i == (int)COUNTOF(tune_fields) || !p[n])
			return *why = "expected NAME=VALUE with NAME one of tm, tn, winograd, pixels, parallel", -1;
		if (set & (1u << i))
			return *why = "a parameter given twice", -1;
		set |= 1u << i;
		char *e;
		long v = strtol(p + n + 1, &e, 10);
		if (e == p + n + 1 || (*e && *e != ' ') || v < tune_fields[i].lo || v > tune_fields[i].hi)
			return *why = "a value out of its range", -1;
		*field(t, i) = (int)v;
		p = *e ? e + 1 : e;
	}
	if ((t->tm > 0) != (t->tn > 0))
		return *why = "tm and tn go together", -1;
	return 0;
}

/* Sum over the sizes of |log(a / b)|; HUGE_VAL when they cannot be
 * compared (another number of them). */
static double distance(const char *a, const char *b)
{
	double d = 0;
	for (;;) {
		char *ea, *eb;
		long long x = strtoll(a, &ea, 10), y = strtoll(b, &eb, 10);
		if (ea == a || eb == b)
			return ea == a && eb == b ? d : HUGE_VAL;
		if (x <= 0 || y <= 0)
			return HUGE_VAL;
		d += fabs(log((double)x / (double)y));
		a = ea, b = eb;
	}
}

/* The database this compile reads: tuning.db, or DOCC_TUNING_DB with
 * remote_tuning; NULL for none (or reported, *bad set). */
static const char *db_path(PassCtx *c, int *bad)
{
	const char *p = pass_str(c, "db");
	*bad = 0;
	if (*p)
		return p;
	if (!c->opts->remote_tuning)
		return NULL;
	p = getenv("DOCC_TUNING_DB");
	if (p && *p)
		return p;
	diag_error("remote_tuning", "true, but no tuning database: set tuning.db (pass_options, or --tuning-db FILE) or "
	           "DOCC_TUNING_DB to a database that doccc tune filled");
	*bad = 1;
	return NULL;
}

static int apply(PassCtx *c, TuneDb *db, const char *path, Node *n, int transfer, int threads)
{
	Sdfg *g = c->g;
	const Target *t = c->tgt;
	TuneStep s;
	if (!tune_step(g, n, t, &s))
		return 0;
	TuneRow r;
	int from = TUNE_OWN;
	int f = tunedb_get(db, s.key, t->name, t->march, threads, TUNE_VERSION, c->scratch, &r);
	if (f < 0)
		return -1;
	if (!f && transfer) {
		TuneRow *rows;
		int nr;
		if (tunedb_kind(db, s.kind, t->name, t->march, threads, TUNE_VERSION, c->scratch, &rows, &nr))
			return -1;
		double best = HUGE_VAL;
		for (int i = 0; i < nr; i++) {
			double d = distance(s.dims, rows[i].dims);
			if (d < best)
				best = d, r = rows[i], f = 1, from = TUNE_TRANSFER;
		}
	}
	if (!f) {
		g->nrules++;
		return 0;
	}
	Tune *u = arena_alloc(g->arena, sizeof *u);
	const char *why;
	if (tune_parse(r.params ? r.params : "", u, &why)) {
		diag_warn(path, "entry %.12s of step '%s': params '%s': %s; the step keeps the rules' schedule", r.key,
		          n->label, r.params ? r.params : "", why);
		g->nrules++;
		return 0;
	}
	u->from = from;
	n->tune = u;
	*(from == TUNE_OWN ? &g->ntuned : &g->ntransferred) += 1;
	return 0;
}

int pass_tuning(PassCtx *c)
{
	Sdfg *g = c->g;
	int bad;
	const char *path = db_path(c, &bad);
	g->ntuned = g->ntransferred = g->nrules = g->nforeign = 0;
	if (!path)
		return bad ? -1 : 0;
	TuneDb *db = tunedb_open(path, 0);
	if (!db)
		return -1;
	int rc = 0;
	if (tunedb_foreign(db)) {
		diag_note(path, "a tuning database of a newer doccc: not read; every step keeps the rules' schedule");
	} else {
		int transfer = pass_bool(c, "transfer"), threads = (int)pass_int(c, "threads");
		for (int i = 0; i < g->root->nkids && !rc; i++)
			rc = apply(c, db, path, g->root->kids[i], transfer, threads);
		g->nforeign = rc ? 0 : tunedb_count_other(db, TUNE_VERSION);
		if (g->nforeign < 0)
			rc = -1;
	}
	tunedb_close(db);
	return rc;
}
