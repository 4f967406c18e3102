/*
 * emit_dims.c - the run-time dims of a dynamic library (g->ndims > 0).
 *
 * A program exported with dynamic dims compiles to one library for every
 * size the export allows: its sizes, loop bounds and the offsets of the
 * workspace slots whose sizes depend on the dims (memplan's g->ws) are
 * expressions of the dims, which the library reads at run time. While the
 * source is printed every dim is named dc_dK (K its position in g->dims),
 * so step functions, kernels and the forward function name it the same
 * way: forward reads them from the instance (dc_dims) and passes them on.
 *
 * The API that this file prints (see the header's comment):
 *   static dc_check_dims    each dim in its range, the export's guards, and
 *                           every size within 2^50 bytes (checked
 *                           in floating point before any exact integer
 *                           arithmetic can overflow); DOCCC_ERR_SHAPE with
 *                           a message naming the dim, its value and the
 *                           allowed range
 *   static dc_plan          the slots' offsets and the workspace's size
 *   NAME_set_dims           checks, grows the workspace when the dims need
 *                           more than it has (a free and an aligned
 *                           allocation; it never shrinks), keeps the dims
 *   NAME_run_dims           set_dims, then run
 *   NAME_infer_dims         the dims from the inputs' shapes: each dim is
 *                           solved from the first input size that is an
 *                           affine function of it alone, then every input
 *                           size is checked against its expression
 *   NAME_input_shape, NAME_output_shape   the sizes at given dims
 * create() sizes the workspace for the largest dims when every dim has a
 * finite bound and that workspace fits MEMPLAN_PREALLOC (1 GiB); else for the
 * fixed part only, and the first set_dims grows it.
 */
#include <math.h>
#include <string.h>

#include "emit.h"

/* A run's sizes are refused past 2^50 bytes: far beyond any machine, and
 * far from int64 overflow in the size arithmetic. */
#define MAX_RUN_BYTES "1125899906842624.0"

/* ", const int64_t dc_d0, ..." and ", dc_d0, ..." (empty without dims). */
void emit_dims_params(Sdfg *g, Buf *params, Buf *args, const char *sep)
{
	for (int k = 0; k < g->ndims; k++) {
		buf_printf(params, "%sconst int64_t dc_d%d", sep, k);
		buf_printf(args, "%sdc_d%d", sep, k);
	}
}

/* The range each run-time dim was checked against (set_dims), told to
 * the C compiler: with it, index arithmetic over a run-time bound is known
 * not to wrap (-fwrapv), and loops vectorize as they do with a constant. */
void emit_dims_assume(Em *e)
{
	for (int k = 0; k < e->g->ndims; k++) {
		const Symbol *s = &e->g->syms[e->g->dims[k]];
		emit_line(e, "if (dc_d%d < %lldLL || dc_d%d > %lldLL) __builtin_unreachable();", k, (long long)s->lo, k,
		          (long long)(s->hi < INT32_MAX ? s->hi : INT32_MAX)); /* dc_check_dims' bounds */
	}
}

/* "const int64_t dc_d0 = from[0], ...;" at e's indentation. */
void emit_dims_locals(Em *e, const char *from)
{
	for (int k = 0; k < e->g->ndims; k++)
		emit_line(e, "const int64_t dc_d%d = %s[%d]; (void)dc_d%d;", k, from, k, k);
	emit_dims_assume(e);
}

/* An upper bound of |e| in double arithmetic (sizes are non-negative). */
static void approx(Buf *b, Em *m, const Expr *e)
{
	switch (e->k) {
	case E_INT: buf_printf(b, "%lld.0", (long long)e->v); return;
	case E_SYM: buf_printf(b, "(double)%s", m->sn[e->v]); return;
	case E_ADD:
	case E_MUL:
		buf_puts(b, "(");
		for (int i = 0; i < e->n; i++) {
			if (i)
				buf_puts(b, e->k == E_ADD ? " + " : " * ");
			buf_puts(b, "fabs(");
			approx(b, m, e->a[i]);
			buf_puts(b, ")");
		}
		buf_puts(b, ")");
		return;
	case E_DIV: /* |floor(a/b)| <= |a| + 1 */
		buf_puts(b, "(fabs(");
		approx(b, m, e->a[0]);
		buf_puts(b, ") + 1.0)");
		return;
	case E_MOD: /* |a mod b| < |b| */
		buf_puts(b, "fabs(");
		approx(b, m, e->a[1]);
		buf_puts(b, ")");
		return;
	case E_MIN:
	case E_MAX:
		buf_puts(b, "fmax(fabs(");
		approx(b, m, e->a[0]);
		buf_puts(b, "), fabs(");
		approx(b, m, e->a[1]);
		buf_puts(b, "))");
		return;
	}
}

/* e printed with the export's names for the dims (for messages). */
static const char *expr_named(Sdfg *g, const Expr *e)
{
	Buf b = {0};
	ex_print(&b, g, e);
	char *s = arena_strdup(g->arena, b.s ? b.s : "0");
	buf_free(&b);
	return s;
}

/* The export's name of run-time dim k. */
static const char *dim_name(const Sdfg *g, int k)
{
	return g->syms[g->dims[k]].name;
}

/* The numel of container id as an expression. */
static Expr *numel_x(Sdfg *g, int id)
{
	return sdfg_numel_x(g, id);
}

static void check_size(Buf *b, Em *e, Expr *bytes, const char *what)
{
	int64_t v;
	if (ex_isint(bytes, &v))
		return;
	buf_puts(b, "\tif (");
	approx(b, e, bytes);
	buf_printf(b, " > %s) {\n\t\tsnprintf(msg, n, \"%%s: at these dims %s would be too large (more than 2^50 bytes)\", dc_name);\n"
	              "\t\treturn DOCCC_ERR_SHAPE;\n\t}\n", MAX_RUN_BYTES, what);
}

static const char *const gop_c[] = {[G_EQ] = "==", [G_NE] = "!=", [G_LT] = "<", [G_LE] = "<="};

static void emit_check(Em *e)
{
	Sdfg *g = e->g;
	Buf *b = e->b;
	buf_printf(b, "%sstatic int dc_check_dims(const int64_t *dims, char *msg, size_t n)\n{\n", e->api);
	for (int k = 0; k < g->ndims; k++)
		buf_printf(b, "\tconst int64_t dc_d%d = dims[%d]; (void)dc_d%d;\n", k, k, k);
	for (int k = 0; k < g->ndims; k++) {
		const Symbol *y = &g->syms[g->dims[k]];
		int64_t hi = y->hi < INT32_MAX ? y->hi : INT32_MAX;
		buf_printf(b, "\tif (dc_d%d < %lldLL || dc_d%d > %lldLL) {\n\t\tsnprintf(msg, n, \"%%s: dim %s = %%lld is outside the range ", k,
		           (long long)y->lo, k, (long long)hi, dim_name(g, k));
		if (y->hi >= INT32_MAX)
			buf_printf(b, "[%lld, inf) the export allows (doccc takes at most %lld)", (long long)y->lo, (long long)hi);
		else
			buf_printf(b, "the export allows, [%lld, %lld]", (long long)y->lo, (long long)hi);
		buf_printf(b, "\", dc_name, (long long)dc_d%d);\n\t\treturn DOCCC_ERR_SHAPE;\n\t}\n", k);
	}
	for (int i = 0; i < g->nguards; i++) {
		const Guard *gd = &g->guards[i];
		buf_printf(b, "\tif (!(%s %s %s)) {\n\t\tsnprintf(msg, n, \"%%s: the dims break the export's guard %%s (", emit_expr_str(e, gd->a),
		           gop_c[gd->op], emit_expr_str(e, gd->b));
		for (int k = 0; k < g->ndims; k++)
			buf_printf(b, "%s%s=%%lld", k ? " " : "", dim_name(g, k));
		buf_puts(b, ")%s%s\", dc_name, ");
		emit_message(b, gd->text);
		for (int k = 0; k < g->ndims; k++)
			buf_printf(b, ", (long long)dc_d%d", k);
		buf_puts(b, ", ");
		emit_message(b, gd->msg && *gd->msg ? ": " : "");
		buf_puts(b, ", ");
		emit_message(b, gd->msg ? gd->msg : "");
		buf_puts(b, ");\n\t\treturn DOCCC_ERR_SHAPE;\n\t}\n");
	}
	for (int io = 0; io < 2; io++) {
		int cnt = io ? g->noutputs : g->ninputs;
		int *ids = io ? g->outputs : g->inputs;
		for (int i = 0; i < cnt; i++)
			check_size(b, e, ex_muli(g, numel_x(g, ids[i]), dtype_info[sdfg_c(g, ids[i])->dt].size),
			           arena_printf(g->arena, "%s %d", io ? "output" : "input", i));
	}
	/* the slots together, which bound every offset of the plan */
	if (g->nws) {
		buf_puts(b, "\tdouble dc_ws = 0;\n");
		for (int i = 0; i < g->nws; i++) {
			buf_puts(b, "\tdc_ws += ");
			approx(b, e, g->ws[i].size);
			buf_puts(b, ";\n");
		}
		buf_printf(b, "\tif (dc_ws > %s) {\n\t\tsnprintf(msg, n, \"%%s: at these dims the workspace would be too large "
		              "(more than 2^50 bytes)\", dc_name);\n\t\treturn DOCCC_ERR_SHAPE;\n\t}\n", MAX_RUN_BYTES);
	}
	buf_puts(b, "\t(void)msg; (void)n;\n\treturn DOCCC_OK;\n}\n\n");
}

static void emit_plan(Em *e)
{
	Sdfg *g = e->g;
	Buf *b = e->b;
	int nb = 0;
	for (int i = 0; i < g->nws; i++)
		nb += g->ws[i].nbelow;
	buf_printf(b, "static const int dc_nbelow[%d] = {", g->nws + 1);
	for (int i = 0; i < g->nws; i++)
		buf_printf(b, "%s%d", i ? ", " : "", g->ws[i].nbelow);
	buf_printf(b, "%s};\nstatic const int dc_below[%d] = {", g->nws ? "" : "0", nb + 1);
	int c = 0;
	for (int i = 0; i < g->nws; i++)
		for (int j = 0; j < g->ws[i].nbelow; j++)
			buf_printf(b, "%s%d", c++ ? ", " : "", g->ws[i].below[j]);
	buf_printf(b, "%s};\n\n", nb ? "" : "0");
	buf_printf(b, "static int64_t dc_plan(const int64_t *dims, int64_t *ofs)\n{\n");
	for (int k = 0; k < g->ndims; k++)
		buf_printf(b, "\tconst int64_t dc_d%d = dims[%d]; (void)dc_d%d;\n", k, k, k);
	buf_printf(b, "\tint64_t z[%d];\n", g->nws + 1);
	for (int i = 0; i < g->nws; i++)
		buf_printf(b, "\tz[%d] = %s;\n", i, emit_expr_str(e, g->ws[i].size));
	buf_printf(b, "\tint64_t total = %lld;\n\tfor (int i = 0, k = 0; i < %d; i++) {\n\t\tint64_t o = %lld;\n"
	              "\t\tfor (int j = 0; j < dc_nbelow[i]; j++, k++)\n\t\t\tif (ofs[dc_below[k]] + z[dc_below[k]] > o)\n"
	              "\t\t\t\to = ofs[dc_below[k]] + z[dc_below[k]];\n\t\tofs[i] = o;\n\t\tif (o + z[i] > total)\n\t\t\ttotal = o + z[i];\n\t}\n"
	              "\treturn total;\n}\n\n",
	           (long long)g->arena_size, g->nws, (long long)g->arena_size);
}

/* NAME_infer_dims: each dim from the first input size c*dim + k, then every
 * input size against its expression. */
static void emit_infer(Em *e)
{
	Sdfg *g = e->g;
	Buf *b = e->b;
	const char *nm = e->nm;
	buf_printf(b, "%sint %s_infer_dims(const int64_t *const *shapes, int64_t *dims, char *msg, size_t n)\n{\n", e->api, nm);
	buf_puts(b, "\tif (!shapes || !dims)\n\t\treturn DOCCC_ERR_ARG;\n\tchar dc_buf[8];\n\tif (!msg)\n\t\tmsg = dc_buf, n = sizeof dc_buf;\n");
	for (int k = 0; k < g->ndims; k++) {
		int sym = g->dims[k], found = 0;
		for (int i = 0; i < g->ninputs && !found; i++) {
			Container *ct = sdfg_c(g, g->inputs[i]);
			for (int d = 0; d < ct->rank && !found; d++) {
				Expr *x = ct->shape[d];
				int64_t c, k0, lo, hi;
				int only = ex_uses(x, sym);
				for (int j = 0; j < g->ndims && only; j++)
					only = j == k || !ex_uses(x, g->dims[j]);
				if (!only || !ex_coeff(g, x, sym, &c) || c <= 0 || !ex_isint(ex_subst(g, x, sym, ex_int(g, 0)), &k0))
					continue;
				ex_range(g, ex_sub(g, x, ex_addi(g, ex_muli(g, ex_sym(g, sym), c), k0)), &lo, &hi);
				if (lo != 0 || hi != 0)
					continue; /* not affine after all (a floor division) */
				found = 1;
				buf_printf(b, "\tif (!shapes[%d])\n\t\treturn DOCCC_ERR_ARG;\n", i);
				/* below the range: dc_check_dims names the range */
				buf_printf(b, "\tif ((shapes[%d][%d] - %lldLL) %% %lldLL != 0 || shapes[%d][%d] < %lldLL) {\n"
				              "\t\tsnprintf(msg, n, \"%%s: input %d (%%s) dim %d is %%lld, which is not %%s for any %%s\", dc_name, ",
				           i, d, (long long)k0, (long long)c, i, d, (long long)k0, i, d);
				emit_message(b, ct->origin && *ct->origin ? ct->origin : ct->name);
				buf_printf(b, ", (long long)shapes[%d][%d], ", i, d);
				emit_message(b, expr_named(g, x));
				buf_puts(b, ", ");
				emit_message(b, dim_name(g, k));
				buf_puts(b, ");\n\t\treturn DOCCC_ERR_SHAPE;\n\t}\n");
				buf_printf(b, "\tdims[%d] = (shapes[%d][%d] - %lldLL) / %lldLL;\n", k, i, d, (long long)k0, (long long)c);
			}
		}
		if (!found)
			buf_printf(b, "\tsnprintf(msg, n, \"%%s: dim %s is no input's size; give the dims with %s_set_dims\", dc_name);\n"
			              "\treturn DOCCC_ERR_SHAPE;\n", dim_name(g, k), nm);
	}
	for (int k = 0; k < g->ndims; k++)
		buf_printf(b, "\tconst int64_t dc_d%d = dims[%d]; (void)dc_d%d;\n", k, k, k);
	buf_puts(b, "\tint rc = dc_check_dims(dims, msg, n);\n\tif (rc)\n\t\treturn rc;\n");
	for (int i = 0; i < g->ninputs; i++) {
		Container *ct = sdfg_c(g, g->inputs[i]);
		const char *on = ct->origin && *ct->origin ? ct->origin : ct->name;
		int any = 0;
		for (int d = 0; d < ct->rank; d++) {
			int64_t v;
			if (!ex_isint(ct->shape[d], &v))
				any = 1;
		}
		if (!any)
			continue;
		buf_printf(b, "\tif (!shapes[%d])\n\t\treturn DOCCC_ERR_ARG;\n", i);
		for (int d = 0; d < ct->rank; d++) {
			buf_printf(b, "\tif (shapes[%d][%d] != %s) {\n\t\tsnprintf(msg, n, \"%%s: input %d (%%s) dim %d is %%lld, but the other "
			              "inputs' sizes make it %%s = %%lld (", i, d, emit_expr_str(e, ct->shape[d]), i, d);
			for (int k = 0; k < g->ndims; k++)
				buf_printf(b, "%s%s=%%lld", k ? " " : "", dim_name(g, k));
			buf_puts(b, ")\", dc_name, ");
			emit_message(b, on);
			buf_printf(b, ", (long long)shapes[%d][%d], ", i, d);
			emit_message(b, expr_named(g, ct->shape[d]));
			buf_printf(b, ", (long long)(%s)", emit_expr_str(e, ct->shape[d]));
			for (int k = 0; k < g->ndims; k++)
				buf_printf(b, ", (long long)dc_d%d", k);
			buf_puts(b, ");\n\t\treturn DOCCC_ERR_SHAPE;\n\t}\n");
		}
	}
	buf_puts(b, "\treturn DOCCC_OK;\n}\n\n");
}

static void emit_shape_fn(Em *e, int io)
{
	Sdfg *g = e->g;
	Buf *b = e->b;
	int cnt = io ? g->noutputs : g->ninputs;
	int *ids = io ? g->outputs : g->inputs;
	buf_printf(b, "%sint %s_%s_shape(const int64_t *dims, int i, int64_t *shape)\n{\n", e->api, e->nm, io ? "output" : "input");
	buf_puts(b, "\tif (!dims || !shape)\n\t\treturn DOCCC_ERR_ARG;\n");
	for (int k = 0; k < g->ndims; k++)
		buf_printf(b, "\tconst int64_t dc_d%d = dims[%d]; (void)dc_d%d;\n", k, k, k);
	buf_puts(b, "\tswitch (i) {\n");
	for (int i = 0; i < cnt; i++) {
		Container *ct = sdfg_c(g, ids[i]);
		buf_printf(b, "\tcase %d:", i);
		for (int d = 0; d < ct->rank; d++)
			buf_printf(b, " shape[%d] = %s;", d, emit_expr_str(e, ct->shape[d]));
		buf_puts(b, " return DOCCC_OK;\n");
	}
	buf_puts(b, "\tdefault: return DOCCC_ERR_ARG;\n\t}\n}\n\n");
}

/* Everything above, printed after the instance's struct (which has dims[],
 * ofs[], wscap, dims_set, inb[] and outb[] (the inputs' and outputs' bytes
 * at the dims) when g->ndims) and the printer's dc_grow and dc_moved,
 * before create. */
void emit_dims_api(Em *e)
{
	Sdfg *g = e->g;
	Buf *b = e->b;
	const char *nm = e->nm;
	if (!g->ndims)
		return;
	buf_printf(b, "static const char dc_name[] = \"%s\";\n", nm);
	emit_check(e);
	emit_plan(e);
	emit_infer(e);
	emit_shape_fn(e, 0);
	emit_shape_fn(e, 1);
	/* the largest dims, when all are bounded */
	int bounded = 1;
	for (int k = 0; k < g->ndims; k++)
		bounded &= g->syms[g->dims[k]].hi < INT32_MAX;
	if (bounded) {
		buf_printf(b, "static const int64_t dc_maxdims[%d] = {", g->ndims);
		for (int k = 0; k < g->ndims; k++)
			buf_printf(b, "%s%lldLL", k ? ", " : "", (long long)g->syms[g->dims[k]].hi);
		buf_puts(b, "};\n");
	}
	/* the workspace at create: for the largest dims when they fit */
	buf_printf(b, "static size_t dc_prealloc(void)\n{\n");
	if (bounded)
		buf_printf(b, "\tchar msg[8];\n\tint64_t ofs[%d];\n\tif (dc_check_dims(dc_maxdims, msg, sizeof msg) == DOCCC_OK) {\n"
		              "\t\tint64_t t = dc_plan(dc_maxdims, ofs);\n\t\tif (t <= %lldLL)\n\t\t\treturn (size_t)t;\n\t}\n",
		           g->nws + 1, (long long)MEMPLAN_PREALLOC);
	buf_printf(b, "\treturn DC_WORKSPACE_SIZE;\n}\n\n");
	/* set_dims: the printer's dc_grow(m, bytes) replaces the workspace by
	 * a larger one, dc_moved(m) forgets what was made for other dims */
	buf_printf(b, "int %s_set_dims(%s_t *m, const int64_t *dims)\n{\n\tif (!m || !dims)\n\t\treturn DOCCC_ERR_ARG;\n"
	              "\tint rc = dc_check_dims(dims, m->msg, sizeof m->msg);\n\tif (rc)\n\t\treturn rc;\n"
	              "\tint64_t ofs[%d];\n\tint64_t need = dc_plan(dims, ofs);\n"
	              "\tconst int64_t *dc_dims = dims;\n"
	              "\tif ((size_t)need > m->wscap && (rc = dc_grow(m, (size_t)need)) != DOCCC_OK) {\n"
	              "\t\tsnprintf(m->msg, sizeof m->msg, \"%%s: cannot grow the workspace to %%lld bytes for these dims\", dc_name, (long long)need);\n"
	              "\t\treturn rc;\n\t}\n"
	              "\tif (!m->dims_set || memcmp(m->dims, dims, sizeof m->dims))\n\t\tdc_moved(m);\n"
	              "\tmemcpy(m->ofs, ofs, sizeof ofs);\n\tmemcpy(m->dims, dims, sizeof m->dims);\n",
	           nm, nm, g->nws + 1);
	int ind = e->ind;
	e->ind = 1;
	emit_dims_locals(e, "dc_dims");
	e->ind = ind;
	for (int io = 0; io < 2; io++) {
		int cnt = io ? g->noutputs : g->ninputs;
		int *ids = io ? g->outputs : g->inputs;
		for (int i = 0; i < cnt; i++) {
			Container *ct = sdfg_c(g, ids[i]);
			buf_printf(b, "\tm->%sb[%d] = (size_t)(%s) * %d;\n", io ? "out" : "in", i, emit_expr_str(e, numel_x(g, ids[i])),
			           dtype_info[ct->dt].size);
		}
	}
	buf_puts(b, "\tm->dims_set = 1;\n\treturn DOCCC_OK;\n}\n\n");
	buf_printf(b, "static int dc_set_dims(void *m, const int64_t *dims) { return %s_set_dims((%s_t *)m, dims); }\n", nm, nm);
	buf_printf(b, "static int dc_unset(%s_t *m)\n{\n\tsnprintf(m->msg, sizeof m->msg, \"%%s: the library takes its dims at run time: "
	              "call %s_set_dims (or %s_run_dims) before %s_run\", dc_name);\n\treturn DOCCC_ERR_SHAPE;\n}\n\n",
	           nm, nm, nm, nm);
}

/* NAME_run_dims with typed pointers: set_dims, then NAME_run. */
void emit_dims_run_dims(Em *e)
{
	Sdfg *g = e->g;
	Buf *b = e->b;
	const char *nm = e->nm;
	if (!g->ndims)
		return;
	buf_printf(b, "int %s_run_dims(%s_t *model, const int64_t *dims", nm, nm);
	for (int i = 0; i < g->ninputs; i++)
		buf_printf(b, ", %s%s *in%d", emit_readonly(sdfg_c(g, g->inputs[i])) ? "const " : "",
		           emit_storage_type[sdfg_c(g, g->inputs[i])->dt], i);
	for (int i = 0; i < g->noutputs; i++)
		buf_printf(b, ", %s *out%d", emit_storage_type[sdfg_c(g, g->outputs[i])->dt], i);
	buf_printf(b, ")\n{\n\tint rc = %s_set_dims(model, dims);\n\tif (rc)\n\t\treturn rc;\n\treturn %s_run(model", nm, nm);
	for (int i = 0; i < g->ninputs; i++)
		buf_printf(b, ", in%d", i);
	for (int i = 0; i < g->noutputs; i++)
		buf_printf(b, ", out%d", i);
	buf_puts(b, ");\n}\n\n");
}

/* The descriptor's abi 4 fields. */
void emit_dims_desc_tables(Em *e)
{
	Sdfg *g = e->g;
	Buf *b = e->b;
	buf_printf(b, "static const doccc_dim_desc dc_dims_desc[%d] = {", g->ndims + 1);
	for (int k = 0; k < g->ndims; k++) {
		const Symbol *y = &g->syms[g->dims[k]];
		buf_printf(b, "%s{\"%s\", %lldLL, %lldLL}", k ? ", " : "", dim_name(g, k), (long long)y->lo,
		           (long long)(y->hi < INT32_MAX ? y->hi : -1));
	}
	buf_printf(b, "%s};\n", g->ndims ? "" : "{0, 0, 0}");
	for (int io = 0; io < 2; io++) {
		int cnt = io ? g->noutputs : g->ninputs;
		int *ids = io ? g->outputs : g->inputs;
		buf_printf(b, "static const char *const dc_%s_dims[%d] = {", io ? "out" : "in", cnt + 1);
		for (int i = 0; i < cnt; i++) {
			Container *ct = sdfg_c(g, ids[i]);
			Buf s = {0};
			for (int d = 0; d < ct->rank; d++)
				buf_printf(&s, "%s%s", d ? "," : "", expr_named(g, ct->shape[d]));
			buf_printf(b, "%s", i ? ", " : "");
			buf_cstr(b, s.s ? s.s : "");
			buf_free(&s);
		}
		buf_printf(b, "%s};\n", cnt ? "" : "0");
	}
}

/* The abi 4 initializers (after info). */
void emit_dims_desc(Em *e, Buf *b)
{
	Sdfg *g = e->g;
	const char *nm = e->nm;
	if (!g->ndims) {
		buf_puts(b, "\t0, dc_dims_desc, dc_in_dims, dc_out_dims, NULL, NULL, NULL,\n");
		return;
	}
	buf_printf(b, "\t%d, dc_dims_desc, dc_in_dims, dc_out_dims, dc_set_dims, %s_infer_dims, %s_output_shape,\n", g->ndims, nm, nm);
}
