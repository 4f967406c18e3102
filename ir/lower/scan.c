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
