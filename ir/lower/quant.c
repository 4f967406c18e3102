/*
 * quant.c - lowerings of the quant family (ir/ops_quant.h): affine
 * quantize and dequantize as PT2E and torchao export them, and the
 * choice of quantization parameters at run time.
 *
 * Every form becomes one quant node whose scale and zero point are
 * containers of the input's rank, one element per block of the input:
 * the "blk" attribute says, per dim, 0 (one block spans the dim), 1 (one
 * per element) or b > 1 (one per b elements). Per tensor, per channel, per
 * token, per group and torchao's block_size are all such blocks, so one
 * expansion (ir/expand/quant.c) serves them, and a pass that looks for
 * integer kernels reads one kind of node.
 */
#include <math.h>
#include <string.h>

#include "lower.h"

#define isfloat(d) dtype_info[d].isfloat
#define dtype_name(d) dtype_info[d].name

/* The representable range of an integer dtype (quant_min and quant_max's
 * defaults); 0 if dt is not one quantization stores into. */
static int int_range(Dtype dt, double *lo, double *hi)
{
	switch (dt) {
	case DT_I8: *lo = -128; *hi = 127; return 1;
	case DT_U8: *lo = 0; *hi = 255; return 1;
	case DT_I16: *lo = -32768; *hi = 32767; return 1;
	case DT_I32: *lo = -2147483648.0; *hi = 2147483647.0; return 1;
	default: return 0;
	}
}

/* Scale or zero point tensor t as a container of x's rank with nb[d]
 * elements in dim d, contiguous (a copy first if t is not); -1 after a
 * message when t's element count is not their product. */
static int param_view(Imp *m, int t, int x, const int *blk, const char *what)
{
	Container *xc = lw_c(m, x);
	int r = xc->rank;
	Expr *sh[MAXDIM], *st[MAXDIM];
	int64_t want = 1;
	for (int d = 0; d < r; d++) {
		if (blk[d] == 0)
			sh[d] = ex_int(m->g, 1);
		else if (blk[d] == 1)
			sh[d] = lw_dimx(m, x, d);
		else {
			int64_t n = lw_dim(m, x, d);
			if (n < 0)
				return -1;
			sh[d] = ex_int(m->g, n / blk[d]);
		}
		int64_t k;
		if (want >= 0 && ex_isint(sh[d], &k))
			want *= k;
		else
			want = -1;
	}
	int64_t have = sdfg_numel(m->g, t);
	if (want >= 0 && have >= 0 && want != have) {
		lw_error(m, "%s has %lld elements; the input's blocks need %lld", what, (long long)have, (long long)want);
		return -1;
	}
	int v = lw_flat(m, t);
	Expr *s = ex_int(m->g, 1);
	for (int d = r - 1; d >= 0; d--) {
		st[d] = s;
		s = ex_mul(m->g, s, sh[d]);
	}
	int id = sdfg_add_view(m->g, arena_printf(m->a, "%s_%s", m->nodename, what), v, r, sh, st, lw_c(m, v)->offset);
	lw_c(m, id)->origin = "";
	return id;
}

/* The blocks of the current node's form over input x (rank r) into blk;
 * -1 after a message. */
static int blocks(Imp *m, int x, int *blk)
{
	Container *xc = lw_c(m, x);
	int r = xc->rank;
	for (int d = 0; d < r; d++)
		blk[d] = 0;
	switch (m->info->param) {
	case QF_TENSOR:
		return 0;
	case QF_CHANNEL: {
		int ax = lw_norm_dim(m, lw_int(m, "axis", 0), r);
		if (ax < 0)
			return -1;
		blk[ax] = 1;
		return 0;
	}
	case QF_TOKEN:
		for (int d = 0; d + 1 < r; d++)
			blk[d] = 1;
		return 0;
	case QF_GROUP: {
		int64_t gs = lw_int(m, "group_size", 128), k = r == 2 ? lw_dim(m, x, 1) : -1;
		if (r != 2 || k < 0 || gs <= 1) {
			lw_error(m, "%s takes a matrix and a group size above 1 (rank %d, group_size %lld)", m->info->target, r,
			         (long long)gs);
			return -1;
		}
		int st = lw_tensor(m, "scales");
		Container *sc = st >= 0 ? lw_c(m, st) : NULL;
		int64_t last;
		if (gs > k && sc && sc->rank && ex_isint(sc->shape[sc->rank - 1], &last) && last == 1)
			gs = k;   /* torch: one group per row */
		if (k % gs) {
			lw_error(m, "%s: the row length %lld is not a multiple of group_size %lld", m->info->target, (long long)k,
			         (long long)gs);
			return -1;
		}
		blk[0] = 1;
		blk[1] = gs == k ? 0 : (int)gs;
		return 0;
	}
	case QF_AFFINE: {
		Val *bs = lw_arg(m, "block_size");
		if (bs->k != V_INTS || bs->n != r) {
			lw_error(m, "%s: block_size has %d entries for an input of rank %d", m->info->target,
			         bs->k == V_INTS ? bs->n : 0, r);
			return -1;
		}
		for (int d = 0; d < r; d++) {
			int64_t n = lw_dim(m, x, d), b = bs->is[d];
			if (n < 0)
				return -1;
			if (b <= 0 || b > n || n % b) {
				lw_error(m, "%s: block_size[%d] is %lld for a dim of size %lld", m->info->target, d, (long long)b,
				         (long long)n);
				return -1;
			}
			blk[d] = b == n ? 0 : b == 1 ? 1 : (int)b;
		}
		return 0;
	}
	}
	return 0;
}

/* The scale and zero point of the current node into l's in[1] and in[2]
 * (views of x's rank), or attributes "scale" and "zp" for the Python
 * numbers of quantize_per_tensor.default. */
static int params(Imp *m, LibNode *l, int x)
{
	int blk[MAXDIM];
	if (blocks(m, x, blk))
		return -1;
	int r = lw_c(m, x)->rank;
	int64_t b64[MAXDIM];
	for (int d = 0; d < r; d++)
		b64[d] = blk[d];
	lib_set_ints(m->g, l, "blk", b64, r);
	const char *sname = lw_has_arg(m, "scale") ? "scale" : "scales";
	const char *zname = lw_has_arg(m, "zero_point") ? "zero_point" : "zero_points";
	Val *s = lw_arg(m, sname), *z = lw_arg(m, zname);
	l->in[1] = l->in[2] = -1;
	l->nin = 3;
	if (s->k == V_FLOAT || s->k == V_INT) {
		double sc = s->k == V_FLOAT ? s->f : (double)s->i;
		if (!(sc > 0) || !isfinite(sc)) {
			lw_error(m, "%s: scale %g is not a positive finite number", m->info->target, sc);
			return -1;
		}
		lib_set_float(m->g, l, "scale", sc);
	} else if (s->k == V_TENSOR) {
		if (!isfloat(lw_c(m, s->t)->dt)) {
			lw_error(m, "%s: the scale is %s; torch's scales are floating-point", m->info->target,
			         dtype_name(lw_c(m, s->t)->dt));
			return -1;
		}
		if ((l->in[1] = param_view(m, s->t, x, blk, "scale")) < 0)
			return -1;
	} else {
		lw_error(m, "%s: no scale", m->info->target);
		return -1;
	}
	if (z->k == V_INT)
		lib_set_float(m->g, l, "zp", (double)z->i);
	else if (z->k == V_TENSOR && sdfg_numel(m->g, z->t) != 0) {
		if ((l->in[2] = param_view(m, z->t, x, blk, "zero_point")) < 0)
			return -1;
	}
	return 0;
}

/* The value of a one-element constant tensor c (a lifted constant or a
 * buffer, through views) into *v; -1 if c is not one. */
static int const_scalar(Imp *m, int c, double *v)
{
	Container *ct = lw_c(m, c);
	int root = sdfg_root_of(m->g, c);
	int64_t ofs = 0;
	if (sdfg_numel(m->g, c) != 1 || !sdfg_const_known(m->g, root) || !ex_isint(ct->offset, &ofs))
		return -1;
	const void *d = sdfg_const_get(m->g, root);
	if (!d)
		return -1;
	*v = sdfg_elem(lw_c(m, root)->dt, d, ofs);
	sdfg_const_put(m->g, root);
	return 0;
}

/* quant_min and quant_max (torchao's may be None: the range of qdt; the
 * .tensor2 forms' one-element tensors, which must be constants: the clamp
 * is part of the kernel). */
static int qrange(Imp *m, LibNode *l, Dtype qdt)
{
	double lo, hi;
	if (!int_range(qdt, &lo, &hi)) {
		lw_error(m, "%s: quantized values of type %s; doccc quantizes to int8, uint8, int16 and int32", m->info->target,
		         dtype_name(qdt));
		return -1;
	}
	Val *a = lw_arg(m, "quant_min"), *b = lw_arg(m, "quant_max");
	if (a->k == V_INT || a->k == V_FLOAT)
		lo = a->k == V_INT ? (double)a->i : a->f;
	if (b->k == V_INT || b->k == V_FLOAT)
		hi = b->k == V_INT ? (double)b->i : b->f;
	if ((a->k == V_TENSOR && const_scalar(m, a->t, &lo)) || (b->k == V_TENSOR && const_scalar(m, b->t, &hi))) {
		lw_error(m, "%s: quant_min and quant_max must be one-element constant tensors (a buffer or a constant): "
		         "doccc builds the clamp into the kernel; these are computed at run time", m->info->target);
		return -1;
	}
	if (lo > hi) {
		lw_error(m, "%s: quant_min %g is above quant_max %g", m->info->target, lo, hi);
		return -1;
	}
	lib_set_float(m->g, l, "qmin", lo);
	lib_set_float(m->g, l, "qmax", hi);
	return 0;
}

static int quant_node(Imp *m, const cJSON *node, int dq)
{
	int x = lw_tensor(m, "input");
	if (x < 0)
		return -1;
	Dtype xdt = lw_c(m, x)->dt;
	if (dq ? isfloat(xdt) : !isfloat(xdt)) {
		lw_error(m, "%s of a %s tensor", m->info->target, dtype_name(xdt));
		return -1;
	}
	int out = lw_new_out(m, node, 0);
	if (out < 0)
		return -1;
	Dtype odt = lw_c(m, out)->dt;
	LibNode *l = lw_lib(m, LIB_QUANT);
	l->in[0] = x;
	l->out[0] = out;
	l->nout = 1;
	lib_set_int(m->g, l, "dq", dq);
	lib_set_int(m->g, l, "form", m->info->param);
	if (params(m, l, x) || qrange(m, l, dq ? xdt : odt))
		return -1;
	if (dq != isfloat(odt)) {
		lw_error(m, "%s into a %s tensor", m->info->target, dtype_name(odt));
		return -1;
	}
	return 0;
}

int lower_quant(Imp *m, const cJSON *node)
{
	return quant_node(m, node, 0);
}

int lower_dequant(Imp *m, const cJSON *node)
{
	return quant_node(m, node, 1);
}

/* choose_qparams*: the input as rows (the whole tensor one row per tensor,
 * its last dim per token) into the two outputs viewed as one element per
 * row. */
int lower_qparams(Imp *m, const cJSON *node)
{
	int x = lw_tensor(m, "input");
	if (x < 0)
		return -1;
	Container *xc = lw_c(m, x);
	if (xc->dt != DT_F32) {
		lw_error(m, "%s of a %s tensor: doccc chooses quantization parameters for float32 (convert the input first)",
		         m->info->target, dtype_name(xc->dt));
		return -1;
	}
	int s = lw_new_out(m, node, 0), z = lw_new_out(m, node, 1);
	if (s < 0 || z < 0)
		return -1;
	int form = m->info->param;
	Expr *rows = ex_int(m->g, 1), *cols = sdfg_numel_x(m->g, x);
	if (form == QP_TOKEN_ASYM) {
		if (!xc->rank) {
			lw_error(m, "%s of a 0-d tensor", m->info->target);
			return -1;
		}
		cols = xc->shape[xc->rank - 1];
		for (int d = 0; d + 1 < xc->rank; d++)
			rows = ex_mul(m->g, rows, xc->shape[d]);
	}
	int xf = lw_flat(m, x);
	Expr *sh2[2] = {rows, cols}, *st2[2] = {cols, ex_int(m->g, 1)}, *one = ex_int(m->g, 1);
	int x2 = sdfg_add_view(m->g, arena_printf(m->a, "%s_rows", m->nodename), xf, 2, sh2, st2, lw_c(m, xf)->offset);
	lw_c(m, x2)->origin = "";
	int so = sdfg_add_view(m->g, arena_printf(m->a, "%s_s", m->nodename), s, 1, &rows, &one, lw_c(m, s)->offset);
	int zo = sdfg_add_view(m->g, arena_printf(m->a, "%s_z", m->nodename), z, 1, &rows, &one, lw_c(m, z)->offset);
	lw_c(m, so)->origin = lw_c(m, zo)->origin = "";
	LibNode *l = lw_lib(m, LIB_QPARAMS);
	l->in[0] = x2;
	l->nin = 1;
	l->out[0] = so;
	l->out[1] = zo;
	l->nout = 2;
	lib_set_int(m->g, l, "form", form);
	double lo = -128, hi = 127, eps = 0x1p-23;   /* per token: XNNPACK's int8 range, float32's eps */
	if (form != QP_TOKEN_ASYM) {
		lo = (double)lw_int(m, "quant_min", 0);
		hi = (double)lw_int(m, "quant_max", 255);
		eps = lw_num(m, "eps", 0x1p-23);
		if (lo > hi) {
			lw_error(m, "%s: quant_min %g is above quant_max %g", m->info->target, lo, hi);
			return -1;
		}
	}
	lib_set_float(m->g, l, "qmin", lo);
	lib_set_float(m->g, l, "qmax", hi);
	lib_set_float(m->g, l, "eps", eps);
	/* symmetric uint8: torch's zero point is 128 */
	int qdt = dtype_from_torch((int)lw_int(m, "dtype", -1));
	lib_set_int(m->g, l, "zp_u8", form == QP_SYMMETRIC && qdt == DT_U8);
	return 0;
}

/* ---- the quantized ops of a program ------------------------------------------------ */

/* The container c is, or is a view of: its storage's id. */
static int root_of(Sdfg *g, int c)
{
	Container *k = sdfg_c(g, c);
	return k->kind == CK_VIEW && k->base >= 0 ? k->base : c;
}

void lw_quant_steps(Sdfg *g)
{
	char *dq = arena_alloc(g->arena, (size_t)g->ncs + 1);
	memset(dq, 0, (size_t)g->ncs + 1);
	for (int i = 0; i < g->root->nkids; i++) {
		Node *k = g->root->kids[i];
		LibNode *l = k->lib;
		if (!l)
			continue;
		if (l->op == LIB_QUANT) {
			if (lib_int(l, "dq", 0))
				dq[root_of(g, l->out[0])] = 1;
			continue;
		}
		if (l->op == LIB_QPARAMS)
			continue;
		int reads = 0;
		for (int j = 0; j < l->nin; j++)
			reads |= l->in[j] >= 0 && dq[root_of(g, l->in[j])];
		if (!reads)
			continue;
		if (g->nqsteps == g->capqsteps) {
			int cap = g->capqsteps ? 2 * g->capqsteps : 16;
			QuantStep *n = arena_alloc(g->arena, (size_t)cap * sizeof *n);
			if (g->nqsteps)
				memcpy(n, g->qsteps, (size_t)g->nqsteps * sizeof *n);
			g->qsteps = n;
			g->capqsteps = cap;
		}
		g->qsteps[g->nqsteps++] = (QuantStep){k->label, op_name(l->op), 0};
	}
}
