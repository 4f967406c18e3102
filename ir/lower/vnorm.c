/*
 * vnorm.c - lowerings of vector norms and what builds on them:
 * linalg_vector_norm (every ord: 0, 1, 2, +-inf, any other p), linalg_norm
 * and frobenius_norm where they are vector norms, weight normalization
 * (_weight_norm, _weight_norm_interface: w = g * v / ||v|| over every dim
 * but one) and cosine_similarity.
 *
 * A norm is one LIB_REDUCE in mode RD_NORM_ (ir/expand/nn.c); weight norm
 * and cosine similarity chain it with elementwise nodes in the dtypes
 * PyTorch's CPU kernels compute in (the fused weight-norm kernel keeps
 * g / ||v|| and the product in float for float and bfloat16; its
 * composite path for float16 rounds every step).
 */
#include <math.h>
#include <string.h>

#include "lower.h"

/* out = code(a, b) (b < 0: unary), computed in cdt (-1: out's dtype). */
static LibNode *ew(Imp *m, int out, TCode code, int a, int b, int cdt)
{
	LibNode *l = lw_lib(m, LIB_ELEMWISE);
	l->in[0] = a, l->in[1] = b, l->nin = b >= 0 ? 2 : 1;
	l->out[0] = out, l->nout = 1;
	lib_set_int(m->g, l, "code", code);
	if (cdt >= 0)
		lib_set_int(m->g, l, "cdt", cdt);
	return l;
}

static void norm_node(Imp *m, int x, int out, const int64_t *dims, int nd, double p)
{
	LibNode *l = lw_lib(m, LIB_REDUCE);
	l->in[0] = x, l->nin = 1;
	l->out[0] = out, l->nout = 1;
	lib_set_int(m->g, l, "mode", RD_NORM_);
	lib_set_ints(m->g, l, "dims", dims, nd);
	lib_set_float(m->g, l, "p", p);
}

/* The dims of value v (V_INTS, V_INT; none or empty: all of them). */
static int norm_dims(Imp *m, const Val *v, int r, int64_t *dims)
{
	int nd = 0;
	if (v->k == V_INTS && v->n > 0) {
		for (int i = 0; i < v->n; i++) {
			int k = lw_norm_dim(m, v->is[i], r);
			if (k < 0)
				return -1;
			for (int j = 0; j < nd; j++)
				if (dims[j] == k) {
					lw_error(m, "%s: dim %d appears twice", m->info->target, k);
					return -1;
				}
			dims[nd++] = k;
		}
	} else if (v->k == V_INT) {
		int k = lw_norm_dim(m, v->i, r);
		if (k < 0)
			return -1;
		if (r)
			dims[nd++] = k;
	} else
		for (int i = 0; i < r; i++)
			dims[nd++] = i;
	return nd;
}

/* Keepdim shape of container x reduced over dims. */
static void kept_shape(Imp *m, int x, const int64_t *dims, int nd, Expr **sh)
{
	Container *c = lw_c(m, x);
	for (int i = 0; i < c->rank; i++)
		sh[i] = c->shape[i];
	for (int j = 0; j < nd; j++)
		sh[dims[j]] = ex_int(m->g, 1);
}

static int float_input(Imp *m, int x)
{
	if (dtype_info[lw_c(m, x)->dt].isfloat)
		return 0;
	lw_error(m, "%s of a %s tensor (torch takes floating-point tensors only)", m->info->target, dtype_info[lw_c(m, x)->dt].name);
	return -1;
}

/* _weight_norm (dim -1: one norm of all of v) and _weight_norm_interface. */
static int weight_norm(Imp *m, const cJSON *node)
{
	int v = lw_tensor(m, "v"), g = lw_tensor(m, "g");
	if (v < 0 || g < 0 || float_input(m, v))
		return -1;
	int r = lw_c(m, v)->rank, iface = m->info->param == VN_WEIGHT_IFACE;
	int64_t dim = lw_int(m, "dim", 0), dims[MAXDIM];
	int nd = 0;
	if (dim == -1 && !iface)
		for (int i = 0; i < r; i++)
			dims[nd++] = i;
	else {
		int k = lw_norm_dim(m, dim, r);
		if (k < 0)
			return -1;
		for (int i = 0; i < r; i++)
			if (i != k)
				dims[nd++] = i;
		dim = k;
	}
	Dtype vdt = lw_c(m, v)->dt, gdt = lw_c(m, g)->dt;
	int half = vdt == DT_F16 || gdt == DT_F16;
	/* torch's fused kernel (dim first or last, no float16): norm and
	 * g / norm in the opmath type (float for bfloat16) */
	int fused = !half && (dim == 0 || dim == r - 1) && nd < r;
	Dtype odt = vdt == DT_F64 || gdt == DT_F64 ? DT_F64 : DT_F32;
	Dtype ndt = fused ? (vdt == DT_BF16 ? DT_F32 : vdt) : vdt;
	Expr *sh[MAXDIM];
	kept_shape(m, v, dims, nd, sh);
	int nr = nd == r && !iface ? 0 : r;
	int nrm;
	if (iface && lw_out_name(node, 1)) {
		nrm = lw_new_out(m, node, 1);
		if (nrm < 0)
			return -1;
		ndt = lw_c(m, nrm)->dt;
	} else
		nrm = lw_scratch_x(m, "norm", ndt, nr, sh);
	norm_node(m, v, nrm, dims, nd, 2);
	int out = lw_new_out(m, node, 0);
	if (out < 0)
		return -1;
	Container *o = lw_c(m, out);
	/* g / norm in their broadcast shape */
	Container *gc = lw_c(m, g);
	int qr = gc->rank > nr ? gc->rank : nr;
	Expr *qs[MAXDIM];
	for (int d = 0; d < qr; d++) {
		int dg = d - (qr - gc->rank), dn = d - (qr - nr);
		int64_t a = dg >= 0 ? lw_dim(m, g, dg) : 1, b = dn >= 0 ? lw_dim(m, nrm, dn) : 1;
		qs[d] = ex_int(m->g, a > b ? a : b);
	}
	int q = lw_scratch_x(m, "scale", fused ? odt : o->dt, qr, qs);
	ew(m, q, T_DIV, g, nrm, fused ? (int)odt : -1);
	ew(m, out, T_MUL, v, q, fused ? (int)odt : -1);
	return 0;
}

/* cosine_similarity as ATen's: each side divided by its norm over dim
 * (clamped to eps), multiplied, summed over dim. */
static int cosine(Imp *m, const cJSON *node)
{
	int x1 = lw_tensor(m, "x1"), x2 = lw_tensor(m, "x2");
	if (x1 < 0 || x2 < 0)
		return -1;
	int out = lw_new_out(m, node, 0);
	if (out < 0)
		return -1;
	Dtype cdt = lw_c(m, out)->dt;
	if (!dtype_info[cdt].isfloat) {
		lw_error(m, "cosine_similarity of integer tensors");
		return -1;
	}
	/* broadcast both to one shape (stride-0 views) */
	int xs[2] = {x1, x2};
	Container *a = lw_c(m, x1), *b = lw_c(m, x2);
	int r = a->rank > b->rank ? a->rank : b->rank;
	Expr *bs[MAXDIM];
	for (int d = 0; d < r; d++) {
		int da = d - (r - a->rank), db = d - (r - b->rank);
		int64_t na = da >= 0 ? lw_dim(m, x1, da) : 1, nb = db >= 0 ? lw_dim(m, x2, db) : 1;
		if (na != nb && na != 1 && nb != 1) {
			lw_error(m, "cosine_similarity: shapes do not broadcast in dim %d (%lld vs %lld)", d, (long long)na, (long long)nb);
			return -1;
		}
		bs[d] = ex_int(m->g, na > nb ? na : nb);
	}
	int dim = lw_norm_dim(m, lw_int(m, "dim", 1), r);
	if (dim < 0)
		return -1;
	if (r == 0) {
		lw_error(m, "cosine_similarity of 0-d tensors");
		return -1;
	}
	int64_t dims[1] = {dim};
	double eps = lw_num(m, "eps", 1e-8);
	int q[2];
	for (int i = 0; i < 2; i++) {
		Container *c = lw_c(m, xs[i]);
		Expr *st[MAXDIM];
		for (int d = 0; d < r; d++) {
			int dc = d - (r - c->rank);
			int64_t n = dc >= 0 ? lw_dim(m, xs[i], dc) : 1, w;
			ex_isint(bs[d], &w);
			st[d] = dc >= 0 && n == w ? c->stride[dc] : ex_int(m->g, 0);
		}
		int x = sdfg_add_view(m->g, arena_printf(m->a, "%s_x%d", m->nodename, i + 1), xs[i], r, bs, st, c->offset);
		lw_c(m, x)->origin = "";
		Dtype xdt = dtype_info[c->dt].isfloat ? c->dt : cdt;
		if (xdt != c->dt) {
			int cv = lw_scratch_x(m, "cast", xdt, r, bs);
			ew(m, cv, T_CAST, x, -1, -1);
			x = cv;
		}
		Expr *sh[MAXDIM];
		for (int d = 0; d < r; d++)
			sh[d] = d == dim ? ex_int(m->g, 1) : bs[d];
		int n = lw_scratch_x(m, "norm", xdt, r, sh);
		norm_node(m, x, n, dims, 1, 2);
		int cl = lw_scratch_x(m, "clamped", xdt, r, sh);
		LibNode *l = ew(m, cl, T_CLAMP, n, -1, -1);
		lib_set_float(m->g, l, "lo", eps);
		q[i] = lw_scratch_x(m, "unit", xdt, r, bs);
		ew(m, q[i], T_DIV, x, cl, -1);
	}
	int pr = lw_scratch_x(m, "prod", cdt, r, bs);
	ew(m, pr, T_MUL, q[0], q[1], -1);
	LibNode *l = lw_lib(m, LIB_REDUCE);
	l->in[0] = pr, l->nin = 1;
	l->out[0] = out, l->nout = 1;
	lib_set_int(m->g, l, "mode", RD_SUM);
	lib_set_ints(m->g, l, "dims", dims, 1);
	return 0;
}

int lower_vnorm(Imp *m, const cJSON *node)
{
	int p = m->info->param;
	if (p == VN_WEIGHT || p == VN_WEIGHT_IFACE)
		return weight_norm(m, node);
	if (p == VN_COSINE)
		return cosine(m, node);
	int x = lw_tensor(m, "self");
	if (x < 0 || float_input(m, x))
		return -1;
	int r = lw_c(m, x)->rank;
	int64_t dims[MAXDIM];
	int nd = norm_dims(m, lw_arg(m, "dim"), r, dims);
	if (nd < 0)
		return -1;
	double ord = 2;
	if (p == VN_VECTOR)
		ord = lw_num(m, "ord", 2);
	else if (p == VN_LINALG && lw_arg(m, "ord")->k != V_NONE) {
		/* a vector norm over one dim, or over all of a 1-d tensor; ord
		 * with two dims (or a 2-d tensor) is a matrix norm */
		ord = lw_num(m, "ord", 2);
		Val *dv = lw_arg(m, "dim");
		int ndim = dv->k == V_INTS ? dv->n : dv->k == V_INT ? 1 : r;
		if (ndim != 1) {
			lw_error(m, "linalg_norm with ord=%g over %d dims is a matrix norm, which doccc does not compile "
			            "(vector norms only: give one dim, or use linalg.vector_norm)", ord, ndim);
			return -1;
		}
	} else if (p == VN_LINALG && nd > 2 && lw_arg(m, "dim")->k != V_NONE) {
		lw_error(m, "linalg_norm over %d dims (at most 2 without ord)", nd);
		return -1;
	}
	int out = lw_new_out(m, node, 0);
	if (out < 0)
		return -1;
	norm_node(m, x, out, dims, nd, ord);
	return 0;
}
