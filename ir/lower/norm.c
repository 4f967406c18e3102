/*
 * norm.c - lowerings of the norm family (ops_norm.h; the expansions are in
 * ir/expand/norm.c): batch norm in inference (LIB_BATCHNORM, which the
 * fold_constants pass folds into the convolution before it where it can),
 * the normalizations with statistics of the input (layer, group, instance,
 * RMS, batch statistics: LIB_NORM, whose native_* forms also write the
 * mean and 1/std where something reads them), softmax and log-softmax
 * (LIB_SOFTMAX), and the vector norms with what builds on them (the last
 * section: a LIB_REDUCE in norm mode and elementwise nodes).
 *
 * Training-mode batch norm is rejected (doccc compiles inference), except
 * batch statistics with no running ones to update, which are an inference
 * computation (weight standardization).
 */
#include <math.h>
#include <string.h>

#include "lower.h"

/* ---- batch norm, normalizations with input statistics ---------------------------- */

/* An inference batch-norm node over dim 1 writing output 0 of the node:
 * (x - rm) / sqrt(rv + eps) * w + b, with w and b optional (-1). */
static int batchnorm_node(Imp *m, const cJSON *node, int x, int w, int b, int rm, int rv)
{
	int out = lw_new_out(m, node, 0);
	if (out < 0)
		return -1;
	LibNode *l = lw_lib(m, LIB_BATCHNORM);
	l->in[0] = x, l->in[1] = w, l->in[2] = b, l->in[3] = rm, l->in[4] = rv, l->nin = 5;
	l->out[0] = out, l->nout = 1;
	lib_set_float(m->g, l, "eps", lw_num(m, "eps", 1e-5));
	return 0;
}

static int norm_lib(Imp *m, const cJSON *node, int x, int w, int b, int mode, int k, int64_t groups, double eps);

int lower_batchnorm(Imp *m, const cJSON *node)
{
	int x = lw_tensor(m, "input"), w = lw_tensor(m, "weight"), b = lw_tensor(m, "bias");
	int rm = lw_tensor(m, "running_mean"), rv = lw_tensor(m, "running_var");
	if (m->info->param == 0 && lw_int(m, "training", 0)) {
		/* batch statistics without running ones (weight standardization,
		 * BiT's and others' F.batch_norm(w, None, None, training=True)):
		 * no state to update, an inference computation */
		if (x >= 0 && rm < 0 && rv < 0 && lw_dynamic(m, x))
			return lw_need_static(m, "batch statistics over a run-time batch");
		if (x >= 0 && rm < 0 && rv < 0)
			return norm_lib(m, node, x, w, b, NM_BATCH, 0, 1, lw_num(m, "eps", 1e-5));
		lw_error(m, "batch_norm in training mode; doccc compiles inference only (call model.eval() before export)");
		return -1;
	}
	if (x < 0 || rm < 0 || rv < 0) {
		lw_error(m, "batch_norm without running statistics is not supported");
		return -1;
	}
	if (m->ndyn && (lw_batch_only(m, node, x, lw_c(m, x)->rank > 1) || lw_batch_only(m, node, -1, lw_c(m, x)->rank > 1)))
		return -1;
	return batchnorm_node(m, node, x, w, b, rm, rv);
}

/* Normalizations with statistics of the input itself: layer norm (over the
 * trailing normalized_shape dims), RMS norm, group norm (per sample and
 * channel group), instance norm (group norm with one channel per group),
 * batch norm with batch statistics (per channel over batch and space).
 * The native_* forms also return the mean and 1/std where used. */
int lower_norm(Imp *m, const cJSON *node)
{
	int p = m->info->param;
	int x = lw_tensor(m, "input");
	if (x < 0)
		return -1;
	int r = lw_c(m, x)->rank;
	int w = lw_tensor(m, "weight"), b = p == NM_RMS ? -1 : lw_tensor(m, "bias");
	int mode, k = 0;
	int64_t groups = 1;
	double eps = 1e-5;
	switch (p) {
	case NM_LAYER: case NM_NATIVE_LAYER: case NM_RMS: {
		Val *ns = lw_arg(m, "normalized_shape");
		k = ns->k == V_INTS ? ns->n : 1;
		if (k < 1 || k > r) {
			lw_error(m, "normalized_shape of length %d for a rank-%d input", k, r);
			return -1;
		}
		mode = p == NM_RMS ? NM_RMS : NM_LAYER;
		if (p == NM_RMS) {
			Dtype dt = lw_c(m, x)->dt;
			/* the default eps is that of the type torch computes in: float
			 * for float16/bfloat16 inputs (they are upcast first) */
			double feps = dt == DT_F64 ? 2.220446049250313e-16 : 1.1920928955078125e-07;
			eps = lw_num(m, "eps", feps);
		} else
			eps = lw_num(m, "eps", 1e-5);
		break;
	}
	case NM_GROUP: case NM_NATIVE_GROUP:
		mode = NM_GROUP;
		groups = p == NM_GROUP ? lw_int(m, "num_groups", 1) : lw_int(m, "group", 1);
		eps = lw_num(m, "eps", 1e-5);
		break;
	case NM_INSTANCE:
		if (!lw_int(m, "use_input_stats", 1)) {
			int rm = lw_tensor(m, "running_mean"), rv = lw_tensor(m, "running_var");
			if (rm < 0 || rv < 0) {
				lw_error(m, "instance_norm without input statistics needs running statistics");
				return -1;
			}
			return batchnorm_node(m, node, x, w, b, rm, rv);
		}
		mode = NM_GROUP;
		groups = r >= 2 ? lw_dim(m, x, 1) : 1;
		eps = lw_num(m, "eps", 1e-5);
		break;
	default: /* _native_batch_norm_legit */
		eps = lw_num(m, "eps", 1e-5);
		if (!lw_int(m, "training", 0)) {
			int rm = p == NM_BN_LEGIT ? lw_tensor(m, "running_mean") : -1;
			int rv = p == NM_BN_LEGIT ? lw_tensor(m, "running_var") : -1;
			if (rm < 0 || rv < 0) {
				lw_error(m, "batch norm in evaluation mode without running statistics");
				return -1;
			}
			if (lw_used_out(m, node, 1) >= 0 || lw_used_out(m, node, 2) >= 0) {
				lw_error(m, "the saved statistics of an evaluation-mode batch norm are used; doccc computes only the output");
				return -1;
			}
			int out = lw_new_out(m, node, 0);
			if (out < 0)
				return -1;
			LibNode *l = lw_lib(m, LIB_BATCHNORM);
			l->in[0] = x, l->in[1] = w, l->in[2] = b, l->in[3] = rm, l->in[4] = rv, l->nin = 5;
			l->out[0] = out, l->nout = 1;
			lib_set_float(m->g, l, "eps", eps);
			return 0;
		}
		/* training mode also updates running_mean/var in place */
		if (p == NM_BN_LEGIT)
			for (int i = 0; i < 2; i++)
				if (lw_arg(m, i ? "running_var" : "running_mean")->k == V_TENSOR)
					lw_mark_stale(m, node, i ? "running_var" : "running_mean",
					              "updating the running statistics of a training-mode batch norm, which doccc "
					              "does not compute: export the model in eval mode");
		mode = NM_BATCH;
		break;
	}
	return norm_lib(m, node, x, w, b, mode, k, groups, eps);
}

/* The norm node of a normalization whose mode and parameters are known. */
static int norm_lib(Imp *m, const cJSON *node, int x, int w, int b, int mode, int k, int64_t groups, double eps)
{
	int r = lw_c(m, x)->rank;
	if ((mode == NM_GROUP || mode == NM_BATCH) && r < 2) {
		lw_error(m, "channel normalization of a rank-%d input", r);
		return -1;
	}
	int64_t v;
	if (mode == NM_GROUP && !ex_isint(lw_dimx(m, x, 1), &v))
		return lw_need_static(m, "channel groups of a run-time channel count");
	if (mode == NM_GROUP && (groups < 1 || lw_dim(m, x, 1) % groups)) {
		lw_error(m, "%lld channels in %lld groups", (long long)lw_dim(m, x, 1), (long long)groups);
		return -1;
	}
	int out = lw_new_out(m, node, 0);
	if (out < 0)
		return -1;
	int native = m->info->nrets == 3;
	LibNode *l = lw_lib(m, LIB_NORM);
	l->in[0] = x, l->in[1] = w, l->in[2] = b, l->nin = 3;
	l->out[0] = out;
	l->out[1] = native ? lw_used_out(m, node, 1) : -1;
	l->out[2] = native ? lw_used_out(m, node, 2) : -1;
	l->nout = 3;
	lib_set_int(m->g, l, "mode", mode);
	lib_set_int(m->g, l, "ndims", k);
	lib_set_int(m->g, l, "groups", groups);
	lib_set_float(m->g, l, "eps", eps);
	return 0;
}

/* ---- softmax, log-softmax -------------------------------------------------------- */

int lower_softmax(Imp *m, const cJSON *node)
{
	int x = lw_tensor(m, "self");
	if (x < 0)
		return -1;
	int d = lw_norm_dim(m, lw_int(m, "dim", -1), lw_c(m, x)->rank);
	if (d < 0)
		return -1;
	int out = lw_new_out(m, node, 0);
	if (out < 0)
		return -1;
	LibNode *l = lw_lib(m, LIB_SOFTMAX);
	l->in[0] = x, l->nin = 1;
	l->out[0] = out, l->nout = 1;
	lib_set_int(m->g, l, "dim", d);
	lib_set_int(m->g, l, "log", m->info->param == 1);
	lib_set_int(m->g, l, "safe", m->info->param == 2);
	return 0;
}

/* ---- vector norms and what builds on them -------------------------------------------
 * lower_vnorm:
 * linalg_vector_norm (every ord: 0, 1, 2, +-inf, any other p), linalg_norm
 * and frobenius_norm where they are vector norms, weight normalization
 * (_weight_norm, _weight_norm_interface: w = g * v / ||v|| over every dim
 * but one) and cosine_similarity.
 *
 * A norm is one LIB_REDUCE in mode RD_NORM_ (ir/expand/reduce.c); weight norm
 * and cosine similarity chain it with elementwise nodes in the dtypes
 * PyTorch's CPU kernels compute in (the fused weight-norm kernel keeps
 * g / ||v|| and the product in float for float and bfloat16; its
 * composite path for float16 rounds every step).
 */

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

/* dist(self, other, p): the p-norm of self - other (broadcast) over every
 * element. */
static int dist(Imp *m, const cJSON *node)
{
	int a = lw_tensor(m, "self"), b = lw_tensor(m, "other");
	if (a < 0 || b < 0 || float_input(m, a) || float_input(m, b))
		return -1;
	Container *ac = lw_c(m, a), *bc = lw_c(m, b), *big = ac->rank >= bc->rank ? ac : bc;
	Expr *sh[MAXDIM];
	int64_t dims[MAXDIM];
	for (int i = 0; i < big->rank; i++) {
		int ia = i - (big->rank - ac->rank), ib = i - (big->rank - bc->rank);
		Expr *da = ia >= 0 ? ac->shape[ia] : NULL, *db = ib >= 0 ? bc->shape[ib] : NULL;
		sh[i] = !da || lw_is_one(m, da) == 1 ? db : da;
		dims[i] = i;
	}
	int out = lw_new_out(m, node, 0);
	if (out < 0)
		return -1;
	int d = lw_scratch_x(m, "diff", lw_c(m, out)->dt, big->rank, sh);
	LibNode *l = lw_lib(m, LIB_ELEMWISE);
	l->in[0] = a, l->in[1] = b, l->nin = 2;
	l->out[0] = d, l->nout = 1;
	lib_set_int(m->g, l, "code", T_SUB);
	norm_node(m, d, out, dims, big->rank, lw_num(m, "p", 2));
	return 0;
}

int lower_vnorm(Imp *m, const cJSON *node)
{
	int p = m->info->param;
	if (p == VN_WEIGHT || p == VN_WEIGHT_IFACE)
		return weight_norm(m, node);
	if (p == VN_COSINE)
		return cosine(m, node);
	if (p == VN_DIST)
		return dist(m, node);
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
