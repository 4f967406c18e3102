/*
 * scan.c - lowerings of scans, selections from sorted rows and searches:
 * cumsum, cumprod, logcumsumexp, cummax, cummin (LIB_SCAN); argsort,
 * msort, median, nanmedian, kthvalue, mode (LIB_SORT: a plain sort, or
 * one pick per sorted row); bucketize and searchsorted (LIB_SEARCH);
 * repeat_interleave (a stride-0 copy for a static repeat count, else the
 * indices of cumsum + search, gathered with index_select); index_add,
 * index_copy, index_fill (LIB_SCATTER's index_put) and one_hot (a zero
 * fill and scatter.value).
 *
 * Picks and other reductions to one element per row compute into a
 * keepdim-shaped container; the graph's value is a view of it without
 * the reduced dim when keepdim is false.
 */
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

/* ---- scans ------------------------------------------------------------------------------------- */

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

/* ---- sorts and picks of sorted rows ------------------------------------------------------------------ */

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

/* ---- searchsorted, bucketize ----------------------------------------------------------------------- */

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

/* ---- repeat_interleave ------------------------------------------------------------------------------ */

/* Indices [0, n) each repeated repeats[i] times into out [L] (L is known):
 * cumsum of the repeats, then for each output position j the number of
 * cumulative sums <= j (upper bound); the run checks that every repeat is
 * non-negative and that they sum to L, as torch does. */
static void repeat_indices(Imp *m, int reps, int out, int64_t L)
{
	int64_t n = lw_dim(m, reps, 0);
	int cs = lw_scratch(m, "cumsum", DT_I64, 1, &n);
	LibNode *l = lw_lib(m, LIB_SCAN);
	l->in[0] = reps, l->nin = 1;
	l->out[0] = cs, l->nout = 1;
	lib_set_int(m->g, l, "mode", CS_SUM);
	lib_set_int(m->g, l, "dim", 0);
	lib_set_int(m->g, l, "nonneg", 1);
	l = lw_search_node(m, cs, -1, NULL, -1, out, 1, DT_I64);
	lib_set_int(m->g, l, "iota", 1);
	lib_set_int(m->g, l, "total", L);
}

/* The repeats' sum if they are constant data (a lifted constant, through
 * aliases), else -1. */
static int64_t const_total(Imp *m, int reps)
{
	Container *c = lw_c(m, reps);
	int root = sdfg_root_of(m->g, reps);
	int64_t n = lw_dim(m, reps, 0), st = 0, ofs = 0;
	if (!sdfg_const_known(m->g, root) || !ex_isint(c->stride[0], &st) || !ex_isint(c->offset, &ofs))
		return -1;
	int dt = lw_c(m, root)->dt;
	const void *d = sdfg_const_get(m->g, root);
	if (!d)
		return -1;
	int64_t tot = 0;
	for (int64_t i = 0; i < n && tot >= 0; i++) {
		int64_t e = ofs + i * st, v = dt == DT_I64 ? ((const int64_t *)d)[e] : ((const int32_t *)d)[e];
		tot = v < 0 ? -1 : tot + v;
	}
	sdfg_const_put(m->g, root);
	return tot;
}

int lower_repeat_interleave(Imp *m, const cJSON *node)
{
	int p = m->info->param;
	int x = p == 1 ? -1 : lw_tensor(m, "self"), reps = p == 0 ? -1 : lw_tensor(m, "repeats");
	if ((p != 1 && x < 0) || (p != 0 && reps < 0))
		return -1;
	const char *on = lw_out_name(node, 0);
	if (!on)
		return -1;
	int d = 0;
	if (p != 1) {
		Val *dv = lw_arg(m, "dim");
		if (dv->k == V_INT) {
			if ((d = lw_norm_dim(m, dv->i, lw_c(m, x)->rank)) < 0)
				return -1;
			if (lw_c(m, x)->rank == 0)
				x = lw_flat(m, x);
		} else
			x = lw_flat(m, x);
	}
	if (p == 0) {
		/* x viewed as [.., n, R, ..] with stride 0 along R, copied, viewed as [.., n*R, ..] */
		int64_t R = lw_int(m, "repeats", 1);
		if (R < 0) {
			lw_error(m, "repeat_interleave: repeats must be non-negative (got %lld)", (long long)R);
			return -1;
		}
		Container *s = lw_c(m, x);
		Expr *sh[MAXDIM], *st[MAXDIM];
		int k = 0;
		for (int i = 0; i < s->rank; i++) {
			sh[k] = s->shape[i], st[k++] = s->stride[i];
			if (i == d)
				sh[k] = ex_int(m->g, R), st[k++] = ex_int(m->g, 0);
		}
		int e = sdfg_add_view(m->g, arena_printf(m->a, "%s_rep", m->nodename), x, k, sh, st, s->offset);
		lw_c(m, e)->origin = "";
		int c = lw_copy(m, e, arena_printf(m->a, "%s_full", on));
		Meta mt;
		Expr *os[MAXDIM];
		if (lw_meta(m, on, &mt) || !lw_reshape_strides(m, c, mt.rank, mt.shape, os)) {
			lw_error(m, "internal: repeat_interleave output '%s' is not a view of its copy", on);
			return -1;
		}
		lw_view(m, on, c, mt.rank, mt.shape, os, ex_int(m->g, 0));
		return 0;
	}
	Dtype rdt = lw_c(m, reps)->dt;
	if (rdt != DT_I64 && rdt != DT_I32) {
		lw_error(m, "repeat_interleave: repeats must be int64 or int32 (got %s)", dtype_info[rdt].name);
		return -1;
	}
	int64_t n = p == 1 ? -1 : lw_dim(m, x, d);
	if (lw_c(m, reps)->rank > 1 || (p == 2 && sdfg_numel(m->g, reps) != n && sdfg_numel(m->g, reps) != 1)) {
		lw_error(m, "repeat_interleave: repeats must be a number or a 1-d tensor of %lld elements", (long long)n);
		return -1;
	}
	if (lw_c(m, reps)->rank == 0 || (p == 2 && sdfg_numel(m->g, reps) != n)) {
		/* one repeat count for every element: a stride-0 view */
		Expr *sh[1] = {ex_int(m->g, p == 2 ? n : 1)}, *st[1] = {ex_int(m->g, 0)};
		reps = sdfg_add_view(m->g, arena_printf(m->a, "%s_reps", m->nodename), reps, 1, sh, st, lw_c(m, reps)->offset);
		lw_c(m, reps)->origin = "";
	}
	Val *os = lw_arg(m, "output_size");
	int64_t L = os->k == V_INT ? os->i : const_total(m, reps);
	if (L < 0) {
		lw_error(m, "repeat_interleave with tensor repeats known only at run time has a data-dependent output size; "
		            "pass output_size= (or constant repeats) so the size is static");
		return -1;
	}
	if (os->k != V_INT && lw_bind_size(m, on, 0, L))
		return -1;
	if (p == 1) {
		int out = lw_new_out(m, node, 0);
		if (out < 0)
			return -1;
		repeat_indices(m, reps, out, L);
		return 0;
	}
	int ix = lw_scratch(m, "index", DT_I64, 1, &L);
	repeat_indices(m, reps, ix, L);
	int out = lw_new_out(m, node, 0);
	if (out < 0)
		return -1;
	LibNode *l = lw_lib(m, LIB_GATHER);
	l->in[0] = x, l->in[1] = ix, l->nin = 2;
	l->out[0] = out, l->nout = 1;
	lib_set_int(m->g, l, "mode", GA_INDEX_SELECT);
	int64_t dd = d;
	lib_set_ints(m->g, l, "dims", &dd, 1);
	return 0;
}

/* ---- index_add, index_copy, index_fill ------------------------------------------------------------------ */

/* out = self with out[.., index[k], ..] (dim d) taking source[.., k, ..]
 * (add: += alpha * source, in index order; copy: the last write wins, as
 * torch's CPU loop) or the fill value: LIB_SCATTER's index_put with one
 * index on dim d (None on the dims before it). */
int lower_index_op(Imp *m, const cJSON *node)
{
	int p = m->info->param;
	int x = lw_tensor(m, "self"), idx = lw_tensor(m, "index");
	if (x < 0 || idx < 0)
		return -1;
	int r = lw_c(m, x)->rank;
	int d = lw_norm_dim(m, lw_int(m, "dim", 0), r);
	if (d < 0)
		return -1;
	Dtype idt = lw_c(m, idx)->dt;
	if (!(idt == DT_I64 || (p == IX_ADD && idt == DT_I32)) || lw_c(m, idx)->rank > 1) {
		lw_error(m, "%s: the index must be a 0-d or 1-d %s tensor (got %s of rank %d)", m->info->target,
		         p == IX_ADD ? "int64 or int32" : "int64", dtype_info[idt].name, lw_c(m, idx)->rank);
		return -1;
	}
	if (r == 0) {
		lw_error(m, "%s of a 0-d tensor is not supported", m->info->target);
		return -1;
	}
	if (lw_c(m, idx)->rank == 0)
		idx = lw_flat(m, idx);
	int vals;
	if (p == IX_ADD || p == IX_COPY) {
		vals = lw_tensor(m, "source");
		if (vals < 0)
			return -1;
		int ok = lw_c(m, vals)->rank == r;
		for (int i = 0; ok && i < r; i++)
			ok = lw_dim(m, vals, i) == (i == d ? lw_dim(m, idx, 0) : lw_dim(m, x, i));
		if (!ok) {
			lw_error(m, "%s: the source must have self's shape with %lld (the number of indices) in dim %d",
			         m->info->target, (long long)lw_dim(m, idx, 0), d);
			return -1;
		}
	} else if (p == IX_FILL_TENSOR) {
		vals = lw_tensor(m, "value");
		if (vals < 0 || lw_c(m, vals)->rank != 0) {
			lw_error(m, "index_fill: the value must be a 0-d tensor");
			return -1;
		}
	} else {
		vals = lw_scratch(m, "value", lw_c(m, x)->dt, 0, NULL);
		LibNode *f = lw_lib(m, LIB_ELEMWISE);
		f->nin = 1, f->in[0] = -1;
		f->out[0] = vals, f->nout = 1;
		lib_set_int(m->g, f, "code", T_ASSIGN);
		lib_set_float(m->g, f, "scalar0", lw_num(m, "value", 0));
	}
	int out = lw_new_out(m, node, 0);
	if (out < 0)
		return -1;
	LibNode *l = lw_lib(m, LIB_SCATTER);
	l->in[0] = x, l->in[1] = vals, l->in[2] = idx, l->nin = 3;
	l->out[0] = out, l->nout = 1;
	lib_set_int(m->g, l, "mode", SC_INDEX_PUT);
	int64_t dd = d;
	lib_set_ints(m->g, l, "dims", &dd, 1);
	lib_set_int(m->g, l, "accumulate", p == IX_ADD);
	lib_set_int(m->g, l, "wrap", p == IX_FILL || p == IX_FILL_TENSOR);
	if (p == IX_ADD)
		lib_set_float(m->g, l, "alpha", lw_num(m, "alpha", 1));
	return 0;
}

/* ---- one_hot --------------------------------------------------------------------------------------- */

/* zeros [..., C] int64, then scatter.value(1) along the last dim at
 * self[..., None]; a class outside [0, C) fails the run, where torch
 * raises. */
int lower_one_hot(Imp *m, const cJSON *node)
{
	int x = lw_tensor(m, "self");
	if (x < 0)
		return -1;
	int64_t C = lw_int(m, "num_classes", -1);
	if (C < 0) {
		lw_error(m, "one_hot with num_classes=-1 takes the class count from the data (max + 1), a data-dependent "
		            "shape; pass num_classes");
		return -1;
	}
	if (lw_c(m, x)->dt != DT_I64) {
		lw_error(m, "one_hot of a %s tensor (torch takes int64 class indices only)", dtype_info[lw_c(m, x)->dt].name);
		return -1;
	}
	int out = lw_new_out(m, node, 0);
	if (out < 0)
		return -1;
	Container *o = lw_c(m, out);
	int z = lw_scratch_x(m, "zeros", o->dt, o->rank, o->shape);
	LibNode *f = lw_lib(m, LIB_ELEMWISE);
	f->nin = 1, f->in[0] = -1;
	f->out[0] = z, f->nout = 1;
	lib_set_int(m->g, f, "code", T_ASSIGN);
	lib_set_float(m->g, f, "scalar0", 0);
	/* self viewed as [..., 1] */
	Container *s = lw_c(m, x);
	Expr *vs[MAXDIM], *vt[MAXDIM];
	for (int i = 0; i < s->rank; i++)
		vs[i] = s->shape[i], vt[i] = s->stride[i];
	vs[s->rank] = ex_int(m->g, 1), vt[s->rank] = ex_int(m->g, 0);
	int iv = sdfg_add_view(m->g, arena_printf(m->a, "%s_idx", m->nodename), x, s->rank + 1, vs, vt, s->offset);
	lw_c(m, iv)->origin = "";
	LibNode *l = lw_lib(m, LIB_SCATTER);
	l->in[0] = z, l->in[1] = iv, l->nin = 2;
	l->out[0] = out, l->nout = 1;
	lib_set_int(m->g, l, "mode", SC_VALUE);
	lib_set_int(m->g, l, "dim", o->rank - 1);
	lib_set_float(m->g, l, "value", 1);
	return 0;
}
