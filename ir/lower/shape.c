/*
 * shape.c - lowerings of views and data movement: permute, transpose, reshape
 * (a view when the strides allow, else a copy), expand, select, slice,
 * squeeze/unsqueeze, aliases, dropout in eval mode, concatenation, and the
 * no-op assertion nodes.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "lower.h"

int lower_view(Imp *m, const cJSON *node)
{
	int x = lw_tensor(m, "self");
	const char *on = lw_out_name(node, 0);
	Meta mt;
	if (x < 0 || !on || lw_meta(m, on, &mt))
		return -1;
	Container *s = lw_c(m, x);
	Expr *st[MAXDIM];
	Expr *off = s->offset;
	int r = s->rank;
	switch (m->info->param) {
	case VW_ALIAS:
		for (int i = 0; i < r; i++)
			st[i] = s->stride[i];
		break;
	case VW_T:
	case VW_TRANSPOSE:
	case VW_PERMUTE: {
		int perm[MAXDIM];
		for (int i = 0; i < r; i++)
			perm[i] = i;
		if (m->info->param == VW_T) {
			if (r == 2) {
				perm[0] = 1;
				perm[1] = 0;
			}
		} else if (m->info->param == VW_TRANSPOSE) {
			int a = lw_norm_dim(m, lw_int(m, "dim0", 0), r), b = lw_norm_dim(m, lw_int(m, "dim1", 0), r);
			if (a < 0 || b < 0)
				return -1;
			perm[a] = b;
			perm[b] = a;
		} else {
			Val *d = lw_arg(m, "dims");
			if (d->n != r) {
				lw_error(m, "permute: %d dims for a rank-%d tensor", d->n, r);
				return -1;
			}
			for (int i = 0; i < r; i++)
				if ((perm[i] = lw_norm_dim(m, d->is[i], r)) < 0)
					return -1;
		}
		for (int i = 0; i < r; i++)
			st[i] = s->stride[perm[i]];
		break;
	}
	case VW_EXPAND: {
		int lead = mt.rank - r;
		for (int i = 0; i < mt.rank; i++) {
			int j = i - lead;
			if (j < 0)
				st[i] = ex_int(m->g, 0);
			else if (lw_dim(m, x, j) == mt.shape[i])
				st[i] = s->stride[j];
			else
				st[i] = ex_int(m->g, 0);
		}
		break;
	}
	case VW_UNSQUEEZE:
	case VW_SQUEEZE: {
		/* Keep strides of the dims that remain; size-1 dims get stride 0. */
		int j = 0;
		for (int i = 0; i < mt.rank; i++) {
			while (j < r && lw_dim(m, x, j) == 1 && mt.shape[i] != 1)
				j++;
			if (j < r && lw_dim(m, x, j) == mt.shape[i] && (mt.shape[i] != 1 || m->info->param == VW_SQUEEZE || 1)) {
				if (mt.shape[i] == 1 && m->info->param == VW_UNSQUEEZE) {
					st[i] = ex_int(m->g, 0);
					/* the size-1 input dim may also match; consume it only
					 * if counts require (rank grows by one) */
					if (mt.rank - i <= r - j)
						j++;
				} else
					st[i] = s->stride[j++];
			} else
				st[i] = ex_int(m->g, 0);
		}
		break;
	}
	case VW_SELECT: {
		int d = lw_norm_dim(m, lw_int(m, "dim", 0), r);
		if (d < 0)
			return -1;
		int64_t idx = lw_int(m, "index", 0), n = lw_dim(m, x, d);
		if (idx < 0)
			idx += n;
		if (idx < 0 || idx >= n) {
			lw_error(m, "select: index %lld out of range for size %lld", (long long)idx, (long long)n);
			return -1;
		}
		off = ex_add(m->g, off, ex_muli(m->g, s->stride[d], idx));
		for (int i = 0, k = 0; i < r; i++)
			if (i != d)
				st[k++] = s->stride[i];
		break;
	}
	case VW_SLICE: {
		int d = lw_norm_dim(m, lw_int(m, "dim", 0), r);
		if (d < 0)
			return -1;
		int64_t n = lw_dim(m, x, d), step = lw_int(m, "step", 1);
		Val *sv = lw_arg(m, "start"), *ev = lw_arg(m, "end");
		int64_t start = sv->k == V_INT ? sv->i : 0, end = ev->k == V_INT ? ev->i : n;
		if (step <= 0) {
			lw_error(m, "slice: step must be positive (got %lld)", (long long)step);
			return -1;
		}
		if (start < 0)
			start += n;
		if (end < 0)
			end += n;
		start = start < 0 ? 0 : start > n ? n : start;
		end = end < start ? start : end > n ? n : end;
		off = ex_add(m->g, off, ex_muli(m->g, s->stride[d], start));
		for (int i = 0; i < r; i++)
			st[i] = i == d ? ex_muli(m->g, s->stride[i], step) : s->stride[i];
		break;
	}
	case VW_RESHAPE:
	case VW_FLATTEN:
	case VW_UNFLATTEN:
		if (!lw_reshape_strides(m, x, mt.rank, mt.shape, st)) {
			x = lw_copy(m, x, arena_printf(m->a, "%s_contig", on));
			s = lw_c(m, x);
			off = s->offset;
			lw_reshape_strides(m, x, mt.rank, mt.shape, st);
		}
		break;
	}
	lw_view(m, on, x, mt.rank, mt.shape, st, off);
	return 0;
}

int lower_noop(Imp *m, const cJSON *node)
{
	(void)node;
	int x = lw_tensor(m, "a");
	Val *dt = lw_arg(m, "dtype");
	if (x >= 0 && dt->k == V_INT) {
		int want = dtype_from_torch((int)dt->i);
		if (want != (int)lw_c(m, x)->dt) {
			lw_error(m, "_assert_tensor_metadata: value has dtype %s, the graph asserts %s",
			           dtype_info[lw_c(m, x)->dt].name, dtype_torch_name((int)dt->i));
			return -1;
		}
	}
	return 0;
}

int lower_dropout(Imp *m, const cJSON *node)
{
	if (lw_int(m, "train", 0)) {
		lw_error(m, "dropout in training mode; doccc compiles inference only (call model.eval() before export)");
		return -1;
	}
	const char *on = lw_out_name(node, 0);
	int x = lw_tensor(m, "input");
	if (!on || x < 0)
		return -1;
	Container *s = lw_c(m, x);
	Meta mt;
	if (lw_meta(m, on, &mt))
		return -1;
	Expr *st[MAXDIM];
	for (int i = 0; i < s->rank; i++)
		st[i] = s->stride[i];
	lw_view(m, on, x, mt.rank, mt.shape, st, s->offset);
	return 0;
}

int lower_cat(Imp *m, const cJSON *node)
{
	Val *ts = lw_arg(m, "tensors");
	if (ts->k != V_TENSORS || ts->n < 1 || ts->n > 8) {
		lw_error(m, "cat of %d tensors is not supported (1 to 8)", ts->n);
		return -1;
	}
	int out = lw_new_out(m, node, 0);
	if (out < 0)
		return -1;
	int d = lw_norm_dim(m, lw_int(m, "dim", 0), lw_c(m, out)->rank);
	if (d < 0)
		return -1;
	LibNode *l = lw_lib(m, LIB_CAT);
	l->nin = 0;
	for (int i = 0; i < ts->n; i++)
		if (ts->ts[i] >= 0 && sdfg_numel(m->g, ts->ts[i]) != 0)
			l->in[l->nin++] = ts->ts[i];
	l->out[0] = out, l->nout = 1;
	lib_set_int(m->g, l, "dim", d);
	return 0;
}
