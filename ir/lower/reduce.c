/*
 * reduce.c - lowerings of the reduce family (ops_reduce.h; the expansions
 * are in ir/expand/reduce.c): reductions over dims (sum, mean, prod,
 * amax/amin, max/min, any/all, var/std and var_mean/std_mean, logsumexp:
 * LIB_REDUCE), arg-reductions (argmax/argmin, max.dim/min.dim:
 * LIB_ARGRED), scans (cumsum, cumprod, logcumsumexp, cummax, cummin:
 * LIB_SCAN), sorts (sort, topk) and the picks of sorted rows (argsort,
 * msort, median, nanmedian, kthvalue, mode: LIB_SORT, a plain sort or one
 * pick per sorted row), the binary searches (bucketize, searchsorted:
 * LIB_SEARCH), and histc (LIB_HISTC, after a min and a max reduction
 * when the range is the data's).
 *
 * Picks compute into a keepdim-shaped container; the graph's value is a
 * view of it without the reduced dim when keepdim is false. Sort and the
 * picks are stable: ties keep their input order, as torch's stable sort.
 */
#include <math.h>
#include <string.h>

#include "lower.h"

/* Output k computed into a container of shape[0..rank) (the graph's shape
 * with size-1 dims added): the value itself if ranks agree, else a view
 * of it bound as the value. A scratch container (dtype dt) for an unused
 * output. */
static int shaped_out(Imp *m, const cJSON *node, int k, int rank, const int64_t *shape, Dtype dt)
{
	const char *on = lw_out_name(node, k);
	Meta mt;
	if (!on)
		return lw_scratch(m, "unused", dt, rank, shape);
	if (lw_meta(m, on, &mt) || lw_check_dtype(m, &mt, on))
		return -1;
	if (mt.rank == rank)
		return lw_new_out(m, node, k);
	int id = sdfg_add_container(m->g, arena_printf(m->a, "%s_full", on), (Dtype)mt.dt, CK_TRANSIENT, rank, shape);
	lw_c(m, id)->origin = "";
	return lw_view_whole(m, on, id, mt.rank, mt.shape) ? -1 : id;
}

/* A dim argument; a 0-d tensor takes 0 and -1, as torch (wrap_scalar). */
static int norm_dim0(Imp *m, int64_t d, int r)
{
	return lw_norm_dim(m, d, r ? r : 1);
}

/* ---- reductions over dims -------------------------------------------------------- */

/* Reductions. var/std take a correction (var.correction: Scalar?, default
 * 1; var.dim: bool unbiased); var_mean/std_mean have the mean as a second
 * output. */
int lower_reduce(Imp *m, const cJSON *node)
{
	int x = lw_tensor(m, "self");
	if (x < 0)
		return -1;
	int r = lw_c(m, x)->rank;
	int64_t dims[MAXDIM];
	int nd = 0;
	Val *d = NULL;
	for (int i = 0; i < m->info->nargs; i++)
		if (!strcmp(m->info->args[i].name, "dim"))
			d = &m->args[i];
	/* dim=[] reduces every dim, except for any.dims and all.dims, where it
	 * reduces none (torch: each element's truth value) */
	int mode = m->info->param;
	int none = d && d->k == V_INTS && d->n == 0 && (mode == RD_ANY_ || mode == RD_ALL_);
	if (none)
		;
	else if (d && d->k == V_INTS && d->n > 0) {
		for (int i = 0; i < d->n; i++) {
			int k = lw_norm_dim(m, d->is[i], r);
			if (k < 0)
				return -1;
			dims[nd++] = k;
		}
	} else if (d && d->k == V_INT) {
		int k = lw_norm_dim(m, d->i, r);
		if (k < 0)
			return -1;
		if (r)
			dims[nd++] = k;
	} else
		for (int i = 0; i < r; i++)
			dims[nd++] = i;
	double corr = 0;
	if (mode == RD_VAR_ || mode == RD_STD_ || mode == RD_VAR_MEAN_ || mode == RD_STD_MEAN_) {
		int has_unb = 0;
		for (int i = 0; i < m->info->nargs; i++)
			if (!strcmp(m->info->args[i].name, "unbiased"))
				has_unb = 1;
		corr = has_unb ? (double)lw_int(m, "unbiased", 1) : lw_num(m, "correction", 1);
		/* the count minus the correction is a compile-time divisor */
		for (int i = 0; i < nd; i++)
			if (!ex_isint(lw_dimx(m, x, (int)dims[i]), NULL))
				return lw_need_static(m, "the variance over a run-time dim");
	}
	int out = lw_new_out(m, node, 0);
	if (out < 0)
		return -1;
	LibNode *l = lw_lib(m, LIB_REDUCE);
	l->in[0] = x, l->nin = 1;
	l->out[0] = out, l->nout = 1;
	if (mode == RD_VAR_MEAN_ || mode == RD_STD_MEAN_) {
		const char *mn = lw_out_name(node, 1);
		l->out[1] = mn && lw_value_used(m, mn) ? lw_new_out(m, node, 1) : -1;
		l->nout = 2;
		mode = mode == RD_VAR_MEAN_ ? RD_VAR_ : RD_STD_;
	}
	lib_set_int(m->g, l, "mode", mode);
	lib_set_ints(m->g, l, "dims", dims, nd);
	lib_set_float(m->g, l, "correction", corr);
	return 0;
}

/* mse_loss(self, target, reduction): (self - target)^2 elementwise
 * (reduction 0, none), or its mean (1) or sum (2) over every element. */
int lower_mse_loss(Imp *m, const cJSON *node)
{
	int a = lw_tensor(m, "self"), b = lw_tensor(m, "target");
	int64_t red = lw_int(m, "reduction", 1);
	if (a < 0 || b < 0)
		return -1;
	if (red < 0 || red > 2) {
		lw_error(m, "mse_loss: reduction %lld is not none (0), mean (1) or sum (2)", (long long)red);
		return -1;
	}
	int out = lw_new_out(m, node, 0);
	if (out < 0)
		return -1;
	Container *ac = lw_c(m, a), *bc = lw_c(m, b), *big = ac->rank >= bc->rank ? ac : bc;
	Expr *sh[MAXDIM];
	for (int i = 0; i < big->rank; i++) {
		int ia = i - (big->rank - ac->rank), ib = i - (big->rank - bc->rank);
		Expr *da = ia >= 0 ? ac->shape[ia] : NULL, *db = ib >= 0 ? bc->shape[ib] : NULL;
		sh[i] = !da || lw_is_one(m, da) == 1 ? db : da;
	}
	Dtype dt = lw_c(m, out)->dt;
	int d = lw_scratch_x(m, "diff", dt, big->rank, sh), sq = red ? lw_scratch_x(m, "sq", dt, big->rank, sh) : out;
	if (!red && lw_c(m, out)->rank != big->rank) {
		lw_error(m, "mse_loss: the output's rank %d is not the operands' broadcast rank %d", lw_c(m, out)->rank, big->rank);
		return -1;
	}
	LibNode *l = lw_lib(m, LIB_ELEMWISE);
	l->in[0] = a, l->in[1] = b, l->nin = 2;
	l->out[0] = d, l->nout = 1;
	lib_set_int(m->g, l, "code", T_SUB);
	l = lw_lib(m, LIB_ELEMWISE);
	l->in[0] = d, l->in[1] = d, l->nin = 2;
	l->out[0] = sq, l->nout = 1;
	lib_set_int(m->g, l, "code", T_MUL);
	if (!red)
		return 0;
	int64_t dims[MAXDIM];
	for (int i = 0; i < big->rank; i++)
		dims[i] = i;
	l = lw_lib(m, LIB_REDUCE);
	l->in[0] = sq, l->nin = 1;
	l->out[0] = out, l->nout = 1;
	lib_set_int(m->g, l, "mode", red == 1 ? RD_MEAN : RD_SUM);
	lib_set_ints(m->g, l, "dims", dims, big->rank);
	lib_set_float(m->g, l, "correction", 0);
	return 0;
}

/* ---- argmax / argmin / max.dim / min.dim ----------------------------------------- */

int lower_argred(Imp *m, const cJSON *node)
{
	int x = lw_tensor(m, "self");
	if (x < 0)
		return -1;
	int p = m->info->param, r = lw_c(m, x)->rank;
	Val *dv = lw_arg(m, "dim");
	int keep = (int)lw_int(m, "keepdim", 0);
	int vals = -1, idxs = -1, d = 0;
	if (dv->k != V_INT) {
		/* over all elements: reduce a flat view into a scalar, viewed back */
		if (!sdfg_is_contiguous(m->g, x))
			x = lw_copy(m, x, arena_printf(m->a, "%s_contig", m->nodename));
		Expr *one = ex_int(m->g, 1), *ne = sdfg_numel_x(m->g, x);
		x = sdfg_add_view(m->g, arena_printf(m->a, "%s_flat", m->nodename), x, 1, &ne, &one, lw_c(m, x)->offset);
		lw_c(m, x)->origin = "";
		const char *on = lw_out_name(node, 0);
		Meta mt;
		if (!on || lw_meta(m, on, &mt))
			return -1;
		if (mt.rank == 0)
			idxs = lw_new_out(m, node, 0);
		else {
			idxs = sdfg_add_container(m->g, arena_printf(m->a, "%s_s", on), DT_I64, CK_TRANSIENT, 0, NULL);
			lw_c(m, idxs)->origin = "";
			Expr *st[MAXDIM];
			for (int i = 0; i < mt.rank; i++)
				st[i] = ex_int(m->g, 0);
			lw_view(m, on, idxs, mt.rank, mt.shape, st, ex_int(m->g, 0));
		}
		keep = 0;
	} else {
		if ((d = lw_norm_dim(m, dv->i, r)) < 0)
			return -1;
		if (p == AR_MAX || p == AR_MIN) {
			vals = lw_new_out(m, node, 0);
			idxs = lw_new_out(m, node, 1);
		} else
			idxs = lw_new_out(m, node, 0);
	}
	if (idxs < 0 && vals < 0)
		return -1;
	if (sdfg_numel(m->g, x) == 0) {
		lw_error(m, "%s of an empty tensor", m->info->target);
		return -1;
	}
	LibNode *l = lw_lib(m, LIB_ARGRED);
	l->in[0] = x, l->nin = 1;
	l->out[0] = vals, l->out[1] = idxs, l->nout = 2;
	lib_set_int(m->g, l, "dim", d);
	lib_set_int(m->g, l, "keepdim", keep);
	lib_set_int(m->g, l, "min", p == AR_ARGMIN || p == AR_MIN);
	return 0;
}

/* ---- scans ----------------------------------------------------------------------- */

int lower_scan(Imp *m, const cJSON *node)
{
	int x = lw_tensor(m, "self");
	if (x < 0)
		return -1;
	int p = m->info->param, r = lw_c(m, x)->rank;
	int d = norm_dim0(m, lw_int(m, "dim", 0), r);
	if (d < 0)
		return -1;
	int ext = p == CS_MAX || p == CS_MIN;
	Expr *const *sh = lw_c(m, x)->shape;
	int out = lw_out_name(node, 0) || !ext ? lw_new_out(m, node, 0) : lw_scratch_x(m, "values", lw_c(m, x)->dt, r, sh);
	int idx = !ext ? -1 : lw_out_name(node, 1) ? lw_new_out(m, node, 1) : lw_scratch_x(m, "indices", DT_I64, r, sh);
	if (out < 0 || (ext && idx < 0))
		return -1;
	if (p == CS_LSE && !dtype_info[lw_c(m, out)->dt].isfloat) {
		lw_error(m, "logcumsumexp of dtype %s (floating-point tensors only)", dtype_info[lw_c(m, out)->dt].name);
		return -1;
	}
	LibNode *l = lw_lib(m, LIB_SCAN);
	l->in[0] = x, l->nin = 1;
	l->out[0] = out, l->nout = 1;
	if (ext)
		l->out[1] = idx, l->nout = 2;
	lib_set_int(m->g, l, "mode", p);
	lib_set_int(m->g, l, "dim", d);
	return 0;
}

/* ---- sort, topk: values and indices, stable (ties keep input order) -------------- */

int lower_sort(Imp *m, const cJSON *node)
{
	int x = lw_tensor(m, "self");
	if (x < 0)
		return -1;
	int r = lw_c(m, x)->rank;
	int d = lw_norm_dim(m, lw_int(m, "dim", -1), r ? r : 1); /* a 0-d tensor takes 0 and -1 */
	if (d < 0)
		return -1;
	int desc = m->info->param ? (int)lw_int(m, "largest", 1) : (int)lw_int(m, "descending", 0);
	int vals = lw_new_out(m, node, 0), idxs = lw_new_out(m, node, 1);
	if (vals < 0 && idxs < 0)
		return -1;
	LibNode *l = lw_lib(m, LIB_SORT);
	l->in[0] = x, l->nin = 1;
	l->out[0] = vals, l->out[1] = idxs, l->nout = 2;
	lib_set_int(m->g, l, "dim", lw_c(m, x)->rank ? d : 0);
	lib_set_int(m->g, l, "descending", desc);
	return 0;
}

/* ---- sorts and picks of sorted rows ---------------------------------------------- */

int lower_sortsel(Imp *m, const cJSON *node)
{
	int x = lw_tensor(m, "self");
	if (x < 0)
		return -1;
	int p = m->info->param, r = lw_c(m, x)->rank;
	Dtype dt = lw_c(m, x)->dt;
	if (p == PK_ARGSORT || p == PK_MSORT) {
		int d = p == PK_MSORT ? 0 : norm_dim0(m, lw_int(m, "dim", -1), r);
		int out = d < 0 ? -1 : lw_new_out(m, node, 0);
		if (out < 0)
			return -1;
		LibNode *l = lw_lib(m, LIB_SORT);
		l->in[0] = x, l->nin = 1;
		l->out[0] = p == PK_MSORT ? out : -1, l->out[1] = p == PK_MSORT ? -1 : out, l->nout = 2;
		lib_set_int(m->g, l, "dim", r ? d : 0);
		lib_set_int(m->g, l, "descending", p == PK_MSORT ? 0 : lw_int(m, "descending", 0));
		return 0;
	}
	if (dt == DT_BOOL && p != PK_MODE) {
		lw_error(m, "%s of a bool tensor (torch has no kernel for it)", m->info->target);
		return -1;
	}
	if (sdfg_numel(m->g, x) <= 0) {
		lw_error(m, "%s of an empty tensor (it has no identity)", m->info->target);
		return -1;
	}
	/* keepdim: shaped_out finds the graph's rank */
	int all = p == PK_ALL_MEDIAN || p == PK_ALL_NANMEDIAN, d = 0;
	if (all || r == 0) {
		x = lw_flat(m, x);
		if (!all && norm_dim0(m, lw_int(m, "dim", 0), 0) < 0)
			return -1;
	} else if ((d = lw_norm_dim(m, lw_int(m, "dim", -1), r)) < 0)
		return -1;
	int64_t n = lw_dim(m, x, d), sh[MAXDIM];
	int xr = lw_c(m, x)->rank;
	for (int i = 0; i < xr; i++)
		sh[i] = i == d ? 1 : lw_dim(m, x, i);
	int64_t k = 0;
	if (p == PK_KTH) {
		k = lw_int(m, "k", 0);
		if (k < 1 || k > n) {
			lw_error(m, "kthvalue: k = %lld is out of range for a dim of size %lld", (long long)k, (long long)n);
			return -1;
		}
		k--;
	}
	int vals = shaped_out(m, node, 0, xr, sh, dt), idxs = all ? -1 : shaped_out(m, node, 1, xr, sh, DT_I64);
	if (vals < 0 || (!all && idxs < 0))
		return -1;
	LibNode *l = lw_lib(m, LIB_SORT);
	l->in[0] = x, l->nin = 1;
	l->out[0] = vals, l->out[1] = idxs, l->nout = 2;
	lib_set_int(m->g, l, "dim", d);
	lib_set_int(m->g, l, "descending", 0);
	lib_set_int(m->g, l, "pick", p == PK_ALL_MEDIAN ? PK_MEDIAN : p == PK_ALL_NANMEDIAN ? PK_NANMEDIAN : p);
	lib_set_int(m->g, l, "k", k);
	return 0;
}

/* ---- searchsorted, bucketize ----------------------------------------------------- */

int lower_search(Imp *m, const cJSON *node)
{
	int ss = m->info->param == 1;
	int bd = lw_tensor(m, ss ? "sorted_sequence" : "boundaries");
	Val *self = lw_arg(m, "self");
	if (bd < 0)
		return -1;
	if (self->k != V_TENSOR && self->k != V_INT && self->k != V_FLOAT && self->k != V_BOOL) {
		lw_error(m, "%s: the value must be a tensor or a number", m->info->target);
		return -1;
	}
	int right = (int)lw_int(m, "right", 0), sorter = -1;
	Container *b = lw_c(m, bd);
	if (ss) {
		Val *side = lw_arg(m, "side");
		if (side->k == V_STR) {
			if (strcmp(side->s, "left") && strcmp(side->s, "right")) {
				lw_error(m, "searchsorted: side must be 'left' or 'right' (got '%s')", side->s);
				return -1;
			}
			if (right && !strcmp(side->s, "left")) {
				lw_error(m, "searchsorted: side='left' contradicts right=True");
				return -1;
			}
			right = !strcmp(side->s, "right");
		}
		sorter = lw_tensor(m, "sorter");
		if (sorter >= 0 && (lw_c(m, sorter)->dt != DT_I64 || lw_c(m, sorter)->rank != b->rank)) {
			lw_error(m, "searchsorted: the sorter must be an int64 tensor of the sorted sequence's shape");
			return -1;
		}
	}
	if (b->rank == 0 || (!ss && b->rank != 1)) {
		lw_error(m, "%s: the boundaries must be a 1-d tensor%s (got rank %d)", m->info->target,
		         ss ? " or have the values' leading dims" : "", b->rank);
		return -1;
	}
	int out = lw_new_out(m, node, 0);
	if (out < 0)
		return -1;
	Container *o = lw_c(m, out);
	if (b->rank > 1) {
		int ok = self->k == V_TENSOR && o->rank == b->rank;
		for (int i = 0; ok && i < b->rank - 1; i++)
			ok = lw_dim(m, out, i) == lw_dim(m, bd, i);
		if (!ok) {
			lw_error(m, "searchsorted: an N-d sorted sequence needs values with the same leading dims");
			return -1;
		}
	}
	Val bv = {.k = V_TENSOR, .t = bd};
	Val *ops[2] = {self, &bv};
	Dtype cdt = (Dtype)lw_result_type(m, ops, 2);
	lw_search_node(m, bd, self->k == V_TENSOR ? self->t : -1, self, sorter, out, right, cdt);
	return 0;
}

/* ---- histc ----------------------------------------------------------------------- */

/* histc: bins equal-width bins over [min, max]. min == max takes the
 * data's minimum and maximum (two reductions into rank-0 transients, the
 * histogram node's inputs 1 and 2; the expansion checks they are finite
 * and widens an empty range by one each side, as torch does at run time). */
int lower_histc(Imp *m, const cJSON *node)
{
	int x = lw_tensor(m, "self");
	if (x < 0 || lw_float_tensor(m, x, "the input"))
		return -1;
	int64_t bins = lw_int(m, "bins", 100);
	double lo = lw_num(m, "min", 0), hi = lw_num(m, "max", 0);
	if (bins <= 0) {
		lw_error(m, "torch.histc: bins must be > 0, but got %lld", (long long)bins);
		return -1;
	}
	if (!isfinite(lo) || !isfinite(hi)) {
		lw_error(m, "torch.histc: range of [%g, %g] is not finite", lo, hi);
		return -1;
	}
	if (lo > hi) {
		lw_error(m, "torch.histc: max must be larger than min");
		return -1;
	}
	int out = lw_new_out(m, node, 0);
	if (out < 0)
		return -1;
	Container *xc = lw_c(m, x);
	if (lw_dim(m, out, 0) != bins) {
		lw_error(m, "torch.histc: the output has %lld bins, not the %lld asked for", (long long)lw_dim(m, out, 0),
		         (long long)bins);
		return -1;
	}
	int ends[2] = {-1, -1};
	if (lo == hi && sdfg_numel(m->g, x) > 0)
		for (int k = 0; k < 2; k++) {
			int64_t dims[MAXDIM];
			for (int d = 0; d < xc->rank; d++)
				dims[d] = d;
			ends[k] = lw_scratch(m, k ? "data_max" : "data_min", xc->dt, 0, NULL);
			LibNode *r = lw_lib(m, LIB_REDUCE);
			r->in[0] = x, r->nin = 1;
			r->out[0] = ends[k], r->nout = 1;
			lib_set_int(m->g, r, "mode", k ? RD_MAX : RD_MIN);
			lib_set_ints(m->g, r, "dims", dims, xc->rank);
			lib_set_float(m->g, r, "correction", 0);
		}
	else if (lo == hi)
		lo -= 1, hi += 1;
	LibNode *l = lw_lib(m, LIB_HISTC);
	l->in[0] = x, l->in[1] = ends[0], l->in[2] = ends[1], l->nin = 3;
	l->out[0] = out, l->nout = 1;
	lib_set_float(m->g, l, "min", lo);
	lib_set_float(m->g, l, "max", hi);
	if (ends[0] >= 0) {
		Sdfg *g = m->g;
		const char *text = arena_printf(g->arena, "run-time assertion of node '%s' failed: torch.histc: the range of "
		                                "the data (its minimum and maximum, as min == max) is not finite", m->nodename);
		VEC_PUSH(g->arena, g->msgs, g->nmsgs, g->capmsgs, text);
		lib_set_int(g, l, "msg", g->nmsgs - 1);
	}
	return 0;
}
