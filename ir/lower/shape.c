/*
 * shape.c - lowerings of the shape family (ops_shape.h; the expansions are
 * in ir/expand/shape.c): views and data movement.
 *
 * Views cost nothing: permute, transpose, reshape (a view when the strides
 * allow, else a copy), expand, select, slice, narrow, diagonal, as_strided,
 * squeeze/unsqueeze, aliases, dropout in eval mode, and the list-returning
 * splits (unbind, split, chunk: one view per element). Data movement:
 * concatenation and stack (LIB_CAT), remapped copies (flip, repeat, roll,
 * padding of every mode: LIB_REMAP; fliplr, flipud and rot90 as a flip of
 * the input or of its transposed view), creation ops (full, zeros, ones,
 * empty - zero-filled so results are deterministic -, arange, fill, copy,
 * linspace and logspace: LIB_LINSPACE, tril and triu: LIB_TRI), pixel
 * shuffles and channel shuffles (a copy of a permuted view, viewed in the
 * output's shape, as torch's own decompositions), diff (a slice of one
 * view minus another, n times, after the prepend/append concatenation),
 * repeat_interleave (a stride-0 copy for a static repeat count, else the
 * indices of cumsum + search, gathered with index_select), meshgrid, and
 * the no-op assertion nodes.
 *
 * In-place variants (fill_, zero_, copy_, index_put_, detach_) lower like
 * their functional forms; the importer rebinds the mutated value's name.
 * nonzero is not supported (it has a data-dependent shape).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "lower.h"

/* A view op whose result has nwant dims (and, when want is not NULL, that
 * shape) against what graph.tensor_values records for it: the view gets
 * the recorded shape, with a stride for each of the nwant dims only. */
static int view_mismatch_x(Imp *m, int r, const char *on, const Meta *mt, int nwant, Expr *const *want);

static int view_mismatch(Imp *m, int r, const char *on, const Meta *mt, int nwant, const int64_t *want)
{
	Expr *w[MAXDIM];
	for (int i = 0; want && i < nwant && i < MAXDIM; i++)
		w[i] = ex_int(m->g, want[i]);
	return view_mismatch_x(m, r, on, mt, nwant, want ? w : NULL);
}

/* The same with sizes that may hold run-time dims (want NULL: the rank only). */
static int view_mismatch_x(Imp *m, int r, const char *on, const Meta *mt, int nwant, Expr *const *want)
{
	int same = nwant == mt->rank;
	for (int i = 0; same && want && i < nwant; i++)
		same = ex_eq(want[i], lw_mdim(m, mt, i));
	if (same)
		return 0;
	lw_error(m, "%s of a rank-%d tensor cannot give '%s' with the rank %d and shape recorded for it", m->info->target, r,
	         on, mt->rank);
	return -1;
}

/* The strides of x expanded to the shape of mt: 0 in new and broadcast dims. */
static int expand_strides(Imp *m, int x, const Meta *mt, Expr **st)
{
	Container *s = lw_c(m, x);
	int lead = mt->rank - s->rank;
	for (int i = 0; i < mt->rank; i++) {
		int j = i - lead;
		if (j < 0 || lw_is_one(m, lw_dimx(m, x, j)) == 1)
			st[i] = ex_int(m->g, 0);
		else if (ex_eq(lw_dimx(m, x, j), lw_mdim(m, mt, i)))
			st[i] = s->stride[j];
		else if (!ex_isint(lw_dimx(m, x, j), NULL))
			return lw_need_static(m, "expand of a run-time dim that may be 1");
		else
			st[i] = ex_int(m->g, 0);
	}
	return 0;
}

/* Start of a slice of a dim of size n as an expression: start clamped to
 * [0, n] as torch does; NULL if a run-time start doccc cannot clamp. */
static Expr *slice_start(Imp *m, const Val *sv, Expr *n)
{
	int64_t nv, st = sv->k == V_INT ? sv->i : 0;
	if (sv->k == V_INT && sv->x) {
		int64_t lo, hi;
		ex_range(m->g, sv->x, &lo, &hi);
		return lo >= 0 ? ex_min(m->g, sv->x, n) : NULL;
	}
	if (ex_isint(n, &nv)) {
		if (st < 0)
			st += nv;
		return ex_int(m->g, st < 0 ? 0 : st > nv ? nv : st);
	}
	if (st < 0)
		return ex_max(m->g, ex_addi(m->g, n, st), ex_int(m->g, 0));
	return ex_min(m->g, ex_int(m->g, st), n);
}

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
	/* The shape the view ops that keep or drop dims give (nwant dims, -1:
	 * the recorded shape, which the remaining ones fill every stride for) */
	Expr *want[MAXDIM];
	int nwant = -1;
	switch (m->info->param) {
	case VW_ALIAS:
		for (int i = 0; i < r; i++) {
			st[i] = s->stride[i];
			want[i] = lw_dimx(m, x, i);
		}
		nwant = r;
		break;
	case VW_T:
	case VW_NUMPY_T:
	case VW_MT:
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
		} else if (m->info->param == VW_NUMPY_T) {
			/* x.T: every dim reversed */
			for (int i = 0; i < r; i++)
				perm[i] = r - 1 - i;
		} else if (m->info->param == VW_MT) {
			/* x.mT, x.mH, x.adjoint(): the last two dims swapped (real
			 * tensors: the conjugate is the tensor itself) */
			if (r < 2) {
				lw_error(m, "%s: the tensor has rank %d; it needs at least 2 dims", m->info->target, r);
				return -1;
			}
			perm[r - 2] = r - 1;
			perm[r - 1] = r - 2;
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
		for (int i = 0; i < r; i++) {
			st[i] = s->stride[perm[i]];
			want[i] = lw_dimx(m, x, perm[i]);
		}
		nwant = r;
		break;
	}
	case VW_EXPAND:
		if (expand_strides(m, x, &mt, st))
			return -1;
		break;
	case VW_UNSQUEEZE:
		/* unsqueeze names its dim: the input's dims keep their sizes and
		 * strides around it whatever their run-time values (a size 1 too) */
		if (!strcmp(m->info->target, "unsqueeze.default")) {
			int d = lw_norm_dim(m, lw_int(m, "dim", 0), r + 1);
			if (d < 0)
				return -1;
			for (int i = 0, j = 0; i <= r; i++) {
				st[i] = i == d ? ex_int(m->g, 0) : s->stride[j];
				want[i] = i == d ? ex_int(m->g, 1) : lw_dimx(m, x, j++);
			}
			nwant = r + 1;
			break;
		}
		/* fall through */
	case VW_SQUEEZE: {
		/* Keep strides of the dims that remain; size-1 dims get stride 0. */
		int j = 0;
		for (int i = 0; i < mt.rank; i++) {
			Expr *oi = lw_mdim(m, &mt, i);
			int one = lw_is_one(m, oi);
			for (int k = j; k < r; k++)
				if (lw_is_one(m, lw_dimx(m, x, k)) < 0)
					return lw_need_static(m, "squeeze or unsqueeze of a run-time dim that may be 1");
			if (one < 0)
				return lw_need_static(m, "squeeze or unsqueeze of a run-time dim that may be 1");
			while (j < r && lw_is_one(m, lw_dimx(m, x, j)) == 1 && !one)
				j++;
			if (j < r && ex_eq(lw_dimx(m, x, j), oi)) {
				if (one && m->info->param == VW_UNSQUEEZE) {
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
		int64_t idx = lw_int(m, "index", 0), n;
		if (lw_arg(m, "index")->x)
			return lw_need_static(m, "select at a run-time index");
		if (ex_isint(lw_dimx(m, x, d), &n)) {
			if (idx < 0)
				idx += n;
			if (idx < 0 || idx >= n) {
				lw_error(m, "select: index %lld out of range for size %lld", (long long)idx, (long long)n);
				return -1;
			}
			off = ex_add(m->g, off, ex_muli(m->g, s->stride[d], idx));
		} else /* torch's guards keep idx inside the run-time dim */
			off = ex_add(m->g, off, ex_mul(m->g, s->stride[d], idx < 0 ? ex_addi(m->g, lw_dimx(m, x, d), idx) : ex_int(m->g, idx)));
		nwant = 0;
		for (int i = 0; i < r; i++)
			if (i != d) {
				want[nwant] = lw_dimx(m, x, i);
				st[nwant++] = s->stride[i];
			}
		break;
	}
	case VW_SLICE: {
		int d = lw_norm_dim(m, lw_int(m, "dim", 0), r);
		if (d < 0)
			return -1;
		int64_t step = lw_int(m, "step", 1), n;
		Val *sv = lw_arg(m, "start"), *ev = lw_arg(m, "end");
		if (step <= 0) {
			lw_error(m, "slice: step must be positive (got %lld)", (long long)step);
			return -1;
		}
		if (ex_isint(lw_dimx(m, x, d), &n) && !sv->x && !ev->x) {
			int64_t start = sv->k == V_INT ? sv->i : 0, end = ev->k == V_INT ? ev->i : n;
			if (start < 0)
				start += n;
			if (end < 0)
				end += n;
			start = start < 0 ? 0 : start > n ? n : start;
			end = end < start ? start : end > n ? n : end;
			off = ex_add(m->g, off, ex_muli(m->g, s->stride[d], start));
			for (int i = 0; i < r; i++) {
				st[i] = i == d ? ex_muli(m->g, s->stride[i], step) : s->stride[i];
				want[i] = i == d ? ex_int(m->g, (end - start + step - 1) / step) : lw_dimx(m, x, i);
			}
		} else {
			/* run-time dims: the start clamped as torch does; the size is
			 * the one torch recorded for the result (its own clamping) */
			Expr *start = slice_start(m, sv, lw_dimx(m, x, d));
			if (!start || r != mt.rank)
				return lw_need_static(m, "a slice with a run-time start doccc cannot clamp");
			off = ex_add(m->g, off, ex_mul(m->g, s->stride[d], start));
			for (int i = 0; i < r; i++) {
				st[i] = i == d ? ex_muli(m->g, s->stride[i], step) : s->stride[i];
				want[i] = i == d ? lw_mdim(m, &mt, i) : lw_dimx(m, x, i);
			}
		}
		nwant = r;
		break;
	}
	case VW_RESHAPE:
	case VW_FLATTEN:
	case VW_UNFLATTEN: {
		Expr *sh[MAXDIM];
		for (int i = 0; i < mt.rank; i++)
			sh[i] = lw_mdim(m, &mt, i);
		int rc = lw_reshape_strides_x(m, x, mt.rank, sh, st);
		if (rc < 0)
			return -1;
		if (!rc) {
			x = lw_copy(m, x, arena_printf(m->a, "%s_contig", on));
			s = lw_c(m, x);
			off = s->offset;
			lw_reshape_strides_x(m, x, mt.rank, sh, st);
		}
		break;
	}
	}
	if (nwant >= 0 && view_mismatch_x(m, r, on, &mt, nwant, want))
		return -1;
	Expr *sh[MAXDIM];
	for (int i = 0; i < mt.rank; i++)
		sh[i] = lw_mdim(m, &mt, i);
	lw_view_x(m, on, x, mt.rank, sh, st, off);
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
	Expr *st[MAXDIM], *sh[MAXDIM];
	for (int i = 0; i < s->rank; i++)
		st[i] = s->stride[i];
	for (int i = 0; i < mt.rank; i++)
		sh[i] = lw_mdim(m, &mt, i);
	lw_view_x(m, on, x, mt.rank, sh, st, s->offset);
	return 0;
}

static void cat_into(Imp *m, const int *ins, int n, int dim, int out);

/* Concatenation; empty inputs contribute nothing (this also covers torch's
 * legacy skipping of 1-D empty tensors), more than 8 inputs go through
 * partial results. */
int lower_cat(Imp *m, const cJSON *node)
{
	Val *ts = lw_arg(m, "tensors");
	if (ts->k != V_TENSORS || ts->n < 1 || ts->n > 64) {
		lw_error(m, "cat of %d tensors is not supported (1 to 64)", ts->n);
		return -1;
	}
	int out = lw_new_out(m, node, 0);
	if (out < 0)
		return -1;
	int d = lw_norm_dim(m, lw_int(m, "dim", 0), lw_c(m, out)->rank);
	if (d < 0)
		return -1;
	int ins[64], n = 0;
	for (int i = 0; i < ts->n; i++)
		if (ts->ts[i] >= 0 && sdfg_numel(m->g, ts->ts[i]) != 0)
			ins[n++] = ts->ts[i];
	/* an empty result: one empty input of its rank keeps it written (by no iteration) */
	for (int i = 0; n == 0 && i < ts->n; i++)
		if (ts->ts[i] >= 0 && lw_c(m, ts->ts[i])->rank == lw_c(m, out)->rank)
			ins[n++] = ts->ts[i];
	cat_into(m, ins, n, d, out);
	return 0;
}

/* ---- more views: as_strided, diagonal, narrow ------------------------------------ */

int lower_view2(Imp *m, const cJSON *node)
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
	case VW2_AS_STRIDED: {
		/* Strides and offset address the storage: doccc's root container
		 * of a view is what torch's storage is (inputs, weights and every
		 * op's fresh result), so the new view indexes the root. */
		Val *sv = lw_arg(m, "stride"), *ov = lw_arg(m, "storage_offset");
		if (sv->n != mt.rank) {
			lw_error(m, "as_strided: %d strides for rank %d", sv->n, mt.rank);
			return -1;
		}
		for (int i = 0; i < mt.rank; i++)
			st[i] = ex_int(m->g, sv->is[i]);
		off = ov->k == V_INT ? ex_int(m->g, ov->i) : s->offset;
		break;
	}
	case VW2_DIAGONAL: {
		int d1 = lw_norm_dim(m, lw_int(m, "dim1", 0), r), d2 = lw_norm_dim(m, lw_int(m, "dim2", 1), r);
		if (d1 < 0 || d2 < 0 || d1 == d2) {
			if (d1 == d2)
				lw_error(m, "diagonal: dim1 and dim2 are the same");
			return -1;
		}
		if (view_mismatch(m, r, on, &mt, r - 1, NULL))
			return -1;
		int64_t o = lw_int(m, "offset", 0);
		int64_t len = mt.rank ? mt.shape[mt.rank - 1] : 0;
		if (len > 0)
			off = ex_add(m->g, off, ex_muli(m->g, o >= 0 ? s->stride[d2] : s->stride[d1], o >= 0 ? o : -o));
		int k = 0;
		for (int i = 0; i < r; i++)
			if (i != d1 && i != d2)
				st[k++] = s->stride[i];
		st[k] = ex_add(m->g, s->stride[d1], s->stride[d2]);
		break;
	}
	case VW2_UNFOLD: {
		/* windows of `size` every `step` along a dim: that dim's stride
		 * times step, and a new last dim of its stride */
		int d = r ? lw_norm_dim(m, lw_int(m, "dimension", 0), r) : 0;
		int64_t size = lw_int(m, "size", 0), step = lw_int(m, "step", 1), n = r ? lw_dim(m, x, d) : 1;
		if (d < 0)
			return -1;
		if (step <= 0 || size < 0 || size > n) {
			lw_error(m, "unfold: a window of size %lld every %lld along a dim of size %lld", (long long)size,
			         (long long)step, (long long)n);
			return -1;
		}
		int64_t want[MAXDIM];
		for (int i = 0; i < r; i++)
			want[i] = i == d ? (n - size) / step + 1 : lw_dim(m, x, i);
		want[r] = size;
		if (r + 1 > MAXDIM || view_mismatch(m, r, on, &mt, r ? r + 1 : 1, want))
			return -1;
		for (int i = 0; i < r; i++)
			st[i] = i == d ? ex_muli(m->g, s->stride[i], step) : s->stride[i];
		st[r ? r : 0] = r ? s->stride[d] : ex_int(m->g, 1);
		break;
	}
	case VW2_NARROW: {
		int d = lw_norm_dim(m, lw_int(m, "dim", 0), r);
		if (d < 0)
			return -1;
		int64_t start = lw_int(m, "start", 0), n = lw_dim(m, x, d);
		if (view_mismatch(m, r, on, &mt, r, NULL))
			return -1;
		if (start < 0)
			start += n;
		off = ex_add(m->g, off, ex_muli(m->g, s->stride[d], start));
		for (int i = 0; i < r; i++)
			st[i] = s->stride[i];
		break;
	}
	}
	lw_view(m, on, x, mt.rank, mt.shape, st, off);
	return 0;
}

/* ---- list outputs: unbind, split, split_with_sizes, chunk ------------------------ */

/* Name of the k-th tensor a node returns as a list (outputs[0].as_tensors),
 * or, for nodes serialized with one output per element, outputs[k]. */
static const char *out_list_name(const cJSON *node, int k, int *n)
{
	cJSON *outs = json_get(node, "outputs"), *x;
	const char *tag = json_union_tag(json_at(outs, 0), &x);
	if (tag && !strcmp(tag, "as_tensors")) {
		*n = json_len(x);
		return json_str(json_get(json_at(x, k), "name"));
	}
	*n = json_len(outs);
	return lw_out_name(node, k);
}

int lower_split(Imp *m, const cJSON *node)
{
	int x = lw_tensor(m, "self");
	if (x < 0)
		return -1;
	Container *s = lw_c(m, x);
	int r = s->rank;
	int d = lw_norm_dim(m, lw_int(m, "dim", 0), r);
	if (d < 0)
		return -1;
	int n = 0, p = m->info->param;
	out_list_name(node, 0, &n);
	/* the size of every piece from the arguments, so that an unused
	 * (unnamed) element still advances the offset */
	if (lw_dynamic(m, x) && !ex_isint(lw_dimx(m, x, d), NULL))
		return lw_need_static(m, "a split along a run-time dim");
	int64_t len = lw_dim(m, x, d), size = 1;
	if (p == SP_SIZE)
		size = lw_int(m, "split_size", 1);
	else if (p == SP_CHUNK) {
		int64_t c = lw_int(m, "chunks", 1);
		size = c > 0 ? (len + c - 1) / c : len;
	}
	Val *sizes = p == SP_SIZES ? lw_arg(m, "split_sizes") : NULL;
	int64_t at = 0;
	for (int k = 0; k < n; k++) {
		int nn;
		const char *on = out_list_name(node, k, &nn);
		int64_t piece = sizes ? (k < sizes->n ? sizes->is[k] : 0) : size;
		Expr *off = ex_add(m->g, s->offset, ex_muli(m->g, s->stride[d], at));
		at += piece;
		Meta mt;
		if (!on)
			continue; /* an unused element */
		if (lw_meta(m, on, &mt))
			return -1;
		Expr *st[MAXDIM];
		if (p == SP_UNBIND) {
			for (int i = 0, j = 0; i < r; i++)
				if (i != d)
					st[j++] = s->stride[i];
		} else {
			for (int i = 0; i < r; i++)
				st[i] = s->stride[i];
		}
		Expr *sh[MAXDIM];
		for (int i = 0; i < mt.rank; i++)
			sh[i] = lw_mdim(m, &mt, i);
		lw_view_x(m, on, x, mt.rank, sh, st, off);
	}
	return 0;
}

/* meshgrid(tensors, indexing): output k is input k (0-d or 1-d) laid along
 * dim k of the grid and broadcast (stride 0) along the others; "xy" swaps
 * the roles of the first two dims (numpy's Cartesian indexing). Every
 * output is a view. */
int lower_meshgrid(Imp *m, const cJSON *node)
{
	Val *ts = lw_arg(m, "tensors");
	if (ts->k != V_TENSORS || ts->n < 1 || ts->n > MAXDIM) {
		lw_error(m, "meshgrid: expected 1 to %d tensors", MAXDIM);
		return -1;
	}
	int xy = 0;
	if (m->info->param) {
		const char *ix = lw_arg(m, "indexing")->s;
		if (ix && !strcmp(ix, "xy"))
			xy = 1;
		else if (!ix || strcmp(ix, "ij")) {
			lw_error(m, "meshgrid: indexing must be 'ij' or 'xy', not '%s'", ix ? ix : "?");
			return -1;
		}
	}
	int n = 0;
	out_list_name(node, 0, &n);
	for (int k = 0; k < n && k < ts->n; k++) {
		int nn;
		const char *on = out_list_name(node, k, &nn);
		Meta mt;
		if (!on)
			continue;
		if (lw_meta(m, on, &mt))
			return -1;
		Container *s = lw_c(m, ts->ts[k]);
		if (s->rank > 1 || mt.rank != ts->n) {
			lw_error(m, "meshgrid: input %d has rank %d; expected 0-d or 1-d tensors", k, s->rank);
			return -1;
		}
		int d = xy && ts->n > 1 && k < 2 ? 1 - k : k;
		Expr *st[MAXDIM];
		for (int i = 0; i < mt.rank; i++)
			st[i] = ex_int(m->g, 0);
		if (s->rank == 1)
			st[d] = s->stride[0];
		lw_view(m, on, ts->ts[k], mt.rank, mt.shape, st, s->offset);
	}
	return 0;
}

/* ---- stack and long concatenations ----------------------------------------------- */

/* out = cat(ins[0..n), dim); more than 8 inputs go through partial results. */
static void cat_into(Imp *m, const int *ins, int n, int dim, int out)
{
	int part[8], np = 0;
	for (int i = 0; i < n; i += 8) {
		int k = n - i < 8 ? n - i : 8;
		if (n <= 8) {
			np = 0;
			for (int j = 0; j < n; j++)
				part[np++] = ins[j];
			break;
		}
		Container *o = lw_c(m, out);
		Expr *sh[MAXDIM];
		for (int d = 0; d < o->rank; d++)
			sh[d] = o->shape[d];
		Expr *len = ex_int(m->g, 0);
		for (int j = 0; j < k; j++)
			len = ex_add(m->g, len, lw_c(m, ins[i + j])->shape[dim]);
		sh[dim] = len;
		int t = sdfg_add_container_x(m->g, arena_printf(m->a, "%s_part", o->name), o->dt, CK_TRANSIENT, o->rank, sh);
		lw_c(m, t)->origin = "";
		cat_into(m, ins + i, k, dim, t);
		part[np++] = t; /* at most 8 parts: callers pass at most 64 inputs */
	}
	LibNode *l = lw_lib(m, LIB_CAT);
	l->nin = 0;
	for (int i = 0; i < np; i++)
		l->in[l->nin++] = part[i];
	l->out[0] = out, l->nout = 1;
	lib_set_int(m->g, l, "dim", dim);
}

/* Concatenation for other lowerings (ir/lower/rnn.c): ins[0..n), n <= 64. */
void lw_cat(Imp *m, const int *ins, int n, int dim, int out)
{
	cat_into(m, ins, n, dim, out);
}

int lower_stack(Imp *m, const cJSON *node)
{
	Val *ts = lw_arg(m, "tensors");
	if (ts->k != V_TENSORS || ts->n < 1 || ts->n > 64) {
		lw_error(m, "stack of %d tensors is not supported (1 to 64)", ts->n);
		return -1;
	}
	int out = lw_new_out(m, node, 0);
	if (out < 0)
		return -1;
	int d = lw_norm_dim(m, lw_int(m, "dim", 0), lw_c(m, out)->rank);
	if (d < 0)
		return -1;
	int ins[64];
	for (int i = 0; i < ts->n; i++) {
		Container *c = lw_c(m, ts->ts[i]);
		Expr *sh[MAXDIM], *st[MAXDIM];
		for (int j = 0, k = 0; j <= c->rank; j++) {
			if (j == d) {
				sh[j] = ex_int(m->g, 1);
				st[j] = ex_int(m->g, 0);
			} else {
				sh[j] = c->shape[k];
				st[j] = c->stride[k++];
			}
		}
		ins[i] = sdfg_add_view(m->g, arena_printf(m->a, "%s_u%d", lw_c(m, out)->name, i), ts->ts[i], c->rank + 1, sh, st, c->offset);
		lw_c(m, ins[i])->origin = "";
	}
	cat_into(m, ins, ts->n, d, out);
	return 0;
}

/* ---- remapped copies: flip, repeat, roll, padding -------------------------------- */

int lower_remap(Imp *m, const cJSON *node)
{
	int x = lw_tensor(m, "self");
	const char *on = lw_out_name(node, 0);
	Meta mt;
	if (x < 0 || !on || lw_meta(m, on, &mt))
		return -1;
	int r = mt.rank, p = m->info->param;
	int64_t kinds[MAXDIM], ofs[MAXDIM];
	for (int i = 0; i < r; i++)
		kinds[i] = RK_OFFSET, ofs[i] = 0;
	int guard = 0;
	double value = 0;
	int flat = 0;
	if (p == RM_FLIP) {
		Val *dv = lw_arg(m, "dims");
		for (int i = 0; i < dv->n; i++) {
			int d = lw_norm_dim(m, dv->is[i], r);
			if (d < 0)
				return -1;
			kinds[d] = RK_FLIP;
		}
	} else if (p == RM_REPEAT) {
		/* x with leading size-1 dims up to the output rank, read circularly */
		Container *s = lw_c(m, x);
		Expr *sh[MAXDIM], *st[MAXDIM];
		int lead = r - s->rank;
		for (int i = 0; i < r; i++) {
			sh[i] = i < lead ? ex_int(m->g, 1) : s->shape[i - lead];
			st[i] = i < lead ? ex_int(m->g, 0) : s->stride[i - lead];
			kinds[i] = RK_CIRCULAR;
		}
		x = sdfg_add_view(m->g, arena_printf(m->a, "%s_in", on), x, r, sh, st, s->offset);
		lw_c(m, x)->origin = "";
	} else if (p == RM_ROLL) {
		Val *sv = lw_arg(m, "shifts"), *dv = lw_arg(m, "dims");
		if (dv->n == 0) {
			/* roll of the flattened tensor */
			if (sv->n != 1) {
				lw_error(m, "roll: %d shifts without dims", sv->n);
				return -1;
			}
			if (mt.dyn)
				return lw_need_static(m, "a roll of the flattened tensor with run-time dims");
			if (!sdfg_is_contiguous(m->g, x))
				x = lw_copy(m, x, arena_printf(m->a, "%s_contig", on));
			int64_t n = 1;
			for (int i = 0; i < r; i++)
				n *= mt.shape[i];
			Expr *one = ex_int(m->g, 1), *ne = ex_int(m->g, n);
			x = sdfg_add_view(m->g, arena_printf(m->a, "%s_flat", on), x, 1, &ne, &one, lw_c(m, x)->offset);
			lw_c(m, x)->origin = "";
			flat = 1;
			kinds[0] = RK_CIRCULAR;
			ofs[0] = sv->is[0];
		} else {
			if (sv->n != dv->n) {
				lw_error(m, "roll: %d shifts for %d dims", sv->n, dv->n);
				return -1;
			}
			for (int i = 0; i < dv->n; i++) {
				int d = lw_norm_dim(m, dv->is[i], r);
				if (d < 0)
					return -1;
				kinds[d] = RK_CIRCULAR;
				ofs[d] += sv->is[i];
			}
		}
	} else {
		Val *pv = lw_arg(m, p == RM_CONSTANT || p == RM_PAD ? "pad" : "padding");
		int kind = p == RM_REFLECT ? RK_REFLECT : p == RM_REPLICATE ? RK_REPLICATE : RK_OFFSET;
		if (p == RM_CONSTANT)
			value = lw_num(m, "value", 0);
		if (p == RM_PAD) {
			const char *mode = lw_arg(m, "mode")->s;
			mode = mode ? mode : "constant";
			if (!strcmp(mode, "constant"))
				value = lw_num(m, "value", 0);
			else if (!strcmp(mode, "reflect"))
				kind = RK_REFLECT;
			else if (!strcmp(mode, "replicate"))
				kind = RK_REPLICATE;
			else if (!strcmp(mode, "circular"))
				kind = RK_CIRCULAR;
			else {
				lw_error(m, "pad: mode '%s' is not supported", mode);
				return -1;
			}
		}
		guard = kind == RK_OFFSET;
		if (pv->n % 2 || pv->n / 2 > r) {
			lw_error(m, "padding of %d values for rank %d", pv->n, r);
			return -1;
		}
		for (int k = 0; k < pv->n / 2; k++) {
			kinds[r - 1 - k] = kind;
			ofs[r - 1 - k] = pv->is[2 * k];
		}
	}
	int out;
	if (flat) {
		int64_t n = 1;
		for (int i = 0; i < r; i++)
			n *= mt.shape[i];
		out = sdfg_add_container(m->g, arena_printf(m->a, "%s_flat", on), mt.dt, CK_TRANSIENT, 1, &n);
		lw_c(m, out)->origin = "";
	} else if ((out = lw_new_out(m, node, 0)) < 0)
		return -1;
	LibNode *l = lw_lib(m, LIB_REMAP);
	l->in[0] = x, l->nin = 1;
	l->out[0] = out, l->nout = 1;
	int rr = flat ? 1 : r;
	lib_set_ints(m->g, l, "kinds", kinds, rr);
	lib_set_ints(m->g, l, "ofs", ofs, rr);
	lib_set_int(m->g, l, "guard", guard);
	lib_set_float(m->g, l, "value", value);
	if (flat) {
		Expr *st[MAXDIM];
		lw_reshape_strides(m, out, r, mt.shape, st);
		lw_view(m, on, out, r, mt.shape, st, ex_int(m->g, 0));
	}
	return 0;
}

/* ---- creation: full, zeros, ones, empty (zero-filled), fill, copy ---------------- */

int lower_fill(Imp *m, const cJSON *node)
{
	int p = m->info->param;
	double v = 0;
	/* scalar_tensor(item()), full(size, item()): item's run-time number is a 0-d tensor */
	const char *sa = p == FL_SCALAR ? "s" : p == FL_VALUE ? "fill_value" : p == FL_FILL ? "value" : NULL;
	/* the sizes come from the output's metadata; a value of run-time dims
	 * (full((b,), b)) is a 0-d tensor of its value, as item()'s */
	Val *sv = sa ? lw_arg(m, sa) : NULL;
	if (sv && sv->k == V_INT && sv->x) {
		sv->t = lw_symint_value(m, sv->x);
		sv->k = V_TENSOR;
	}
	int out = lw_new_out(m, node, 0);
	if (out < 0)
		return -1;
	LibNode *l = lw_lib(m, LIB_ELEMWISE);
	l->out[0] = out, l->nout = 1;
	l->nin = 1;
	l->in[0] = -1;
	if (sa && lw_arg(m, sa)->k == V_TENSOR)
		p = FL_FILL_TENSOR;
	if (p == FL_FILL_TENSOR || p == FL_COPY) {
		int src = lw_tensor(m, p == FL_COPY ? "src" : sa ? sa : "value");
		if (src < 0)
			return -1;
		Container *sc = lw_c(m, src), *oc = lw_c(m, out);
		for (int q = 1; q <= sc->rank && q <= oc->rank; q++)
			if (lw_is_one(m, sc->shape[sc->rank - q]) < 0 && !ex_eq(sc->shape[sc->rank - q], oc->shape[oc->rank - q]))
				return lw_need_static(m, "a source's run-time dim may or may not broadcast");
		l->in[0] = src;
		lib_set_int(m->g, l, "code", T_CAST);
		return 0;
	}
	if (p == FL_VALUE)
		v = lw_num(m, "fill_value", 0);
	else if (p == FL_ONE)
		v = 1;
	else if (p == FL_SCALAR)
		v = lw_num(m, "s", 0);
	else if (p == FL_FILL)
		v = lw_num(m, "value", 0);
	if (lw_c(m, out)->dt == DT_BOOL)
		v = v != 0;
	lib_set_float(m->g, l, "scalar0", v);
	lib_set_int(m->g, l, "code", T_ASSIGN);
	return 0;
}

int lower_arange(Imp *m, const cJSON *node)
{
	int out = lw_new_out(m, node, 0);
	if (out < 0)
		return -1;
	int hasstart = lw_has_arg(m, "start"), hasstep = lw_has_arg(m, "step");
	/* the end may be a run-time dim: the output's size (from the metadata) holds it */
	if ((hasstart && lw_arg(m, "start")->x) || (hasstep && lw_arg(m, "step")->x))
		return lw_need_static(m, "a start or step of run-time dims");
	double start = hasstart ? lw_num(m, "start", 0) : 0;
	double step = hasstep ? lw_num(m, "step", 1) : 1;
	LibNode *l = lw_lib(m, LIB_ARANGE);
	l->nin = 0;
	l->out[0] = out, l->nout = 1;
	lib_set_float(m->g, l, "start", start);
	lib_set_float(m->g, l, "step", step);
	return 0;
}

/* ---- tables computed at compile time ----------------------------------------------
 * The signal windows (hann, hamming, blackman, bartlett, kaiser), the FFT
 * sample frequencies and tril/triu_indices depend only on their integer
 * and float arguments: doccc computes them into a constant (float64, which
 * a cast node turns into the recorded dtype), step by step as torch's
 * factories do (an arange scaled, then cos, scaled, shifted), each step
 * rounded as torch's kernel rounds it in the output's dtype (a float16
 * window computes each step in float and rounds it to float16), so that the
 * table is torch's to the last bit where the libm agrees. A periodic window
 * of N is the symmetric one of N + 1 less its last point; N = 1 gives [1]. */

typedef struct {
	int kind, n, periodic;
	Dtype dt;
	double a, b;           /* hamming's alpha and beta, kaiser's beta, the frequencies' spacing */
	int64_t row, col, offset;
} Table;

/* The modified Bessel function I0 by its power series (kaiser windows:
 * arguments up to beta, where the terms fall below double's epsilon). */
static double bessel_i0(double x)
{
	double sum = 1, term = 1, q = x * x / 4;
	for (int k = 1; k < 500 && term > sum * 1e-17; k++) {
		term *= q / ((double)k * k);
		sum += term;
	}
	return sum;
}

/* v rounded to the nearest value of dt (ties to even); integers and
 * float64 as they are. */
static double round_dt(double v, Dtype dt)
{
	int bits = dt == DT_F32 ? 24 : dt == DT_F16 ? 11 : dt == DT_BF16 ? 8 : 0;
	int minexp = dt == DT_F16 ? -14 : -126, e;
	if (!bits || v == 0 || !isfinite(v))
		return v;
	frexp(v, &e);
	double q = ldexp(1, (e - 1 < minexp ? minexp + 1 : e) - bits);
	return nearbyint(v / q) * q;
}

/* One step of a tensor op on a value of dt: computed in float (double for
 * float64), rounded to dt. */
static double step(double v, Dtype dt)
{
	return round_dt(dt == DT_F64 ? v : (double)(float)v, dt);
}

static int table_make(Sdfg *g, const ConstSrc *src, void *dst)
{
	const Table *t = src->ctx;
	double *o = dst;
	(void)g;
	if (t->n == 0 && t->kind != TB_TRIL_INDICES && t->kind != TB_TRIU_INDICES)
		return 0;
	if (t->kind == TB_TRIL_INDICES || t->kind == TB_TRIU_INDICES) {
		/* the rows of the kept elements, in row-major order, then their columns */
		int64_t k = 0;
		for (int pass = 0; pass < 2; pass++)
			for (int64_t r = 0; r < t->row; r++)
				for (int64_t c = 0; c < t->col; c++)
					if (t->kind == TB_TRIL_INDICES ? c - r <= t->offset : c - r >= t->offset)
						o[k++] = pass ? (double)c : (double)r;
		return 0;
	}
	if (t->kind == TB_FFTFREQ || t->kind == TB_RFFTFREQ) {
		int m = t->kind == TB_RFFTFREQ ? t->n / 2 + 1 : t->n;
		double c = t->dt == DT_F64 ? 1.0 / (t->n * t->a) : (double)(float)(1.0 / (t->n * t->a));
		for (int i = 0; i < m; i++)
			o[i] = step((t->kind == TB_FFTFREQ && i > (t->n - 1) / 2 ? i - t->n : i) * c, t->dt);
		return 0;
	}
	if (t->n == 1) {
		o[0] = 1;
		return 0;
	}
	Dtype dt = t->dt;
	int N = t->periodic ? t->n + 1 : t->n;                      /* the symmetric window's length */
	/* a scalar operand as the kernel takes it: float, or double for float64 */
#define SC(x) (dt == DT_F64 ? (double)(x) : (double)(float)(x))
	for (int i = 0; i < t->n; i++) {
		double w, a, b;
		switch (t->kind) {
		case TB_HANN:
		case TB_HAMMING:
			w = step(step(i * SC(M_PI * 2. / (N - 1)), dt), dt);
			w = step(step(cos(w), dt) * SC(-t->b), dt);
			o[i] = step(w + SC(t->a), dt);
			break;
		case TB_BLACKMAN:
			w = step(i * SC(M_PI / (N - 1)), dt);
			a = step(step(cos(step(w * 4, dt)), dt) * SC(0.08), dt);
			b = step(step(cos(step(w * 2, dt)), dt) * SC(0.5), dt);
			o[i] = step(step(a - b, dt) + SC(0.42), dt);
			break;
		case TB_BARTLETT:
			w = step(i * SC(2. / (N - 1)), dt);
			o[i] = i < ((N - 1) >> 1) + 1 ? w : step(2 - w, dt);
			break;
		default: {
			double h = (N - 1) / 2.0, r = (i - h) / h;
			o[i] = round_dt(bessel_i0(t->a * sqrt(fmax(0, 1 - r * r))) / bessel_i0(t->a), dt);
		}
		}
	}
#undef SC
	return 0;
}

int lower_table(Imp *m, const cJSON *node)
{
	Table t = {.kind = m->info->param, .periodic = 1, .a = 0.54, .b = 0.46};
	int64_t numel;
	if (t.kind == TB_TRIL_INDICES || t.kind == TB_TRIU_INDICES) {
		t.row = lw_int(m, "row", 0), t.col = lw_int(m, "col", 0), t.offset = lw_int(m, "offset", 0);
		if (t.row < 0 || t.col < 0 || t.row > (1 << 20) || t.col > (1 << 20)) {
			lw_error(m, "%s of a %lld x %lld matrix", m->info->target, (long long)t.row, (long long)t.col);
			return -1;
		}
		numel = 0;
		for (int64_t r = 0; r < t.row; r++) {
			int64_t lo = t.kind == TB_TRIL_INDICES ? 0 : MAX(0, MIN(t.col, r + t.offset));
			int64_t hi = t.kind == TB_TRIL_INDICES ? MAX(0, MIN(t.col, r + t.offset + 1)) : t.col;
			numel += 2 * (hi - lo);
		}
	} else {
		int64_t n = lw_int(m, lw_has_arg(m, "n") ? "n" : "window_length", 0);
		if (n < 0 || n > (1 << 26)) {
			lw_error(m, "%s of length %lld", m->info->target, (long long)n);
			return -1;
		}
		t.n = (int)n;
		if (lw_has_arg(m, "periodic"))
			t.periodic = (int)lw_int(m, "periodic", 1);
		if (t.kind == TB_HANN)
			t.a = t.b = 0.5;
		if (lw_has_arg(m, "alpha"))
			t.a = lw_num(m, "alpha", 0.54);
		if (lw_has_arg(m, "beta"))
			*(t.kind == TB_KAISER ? &t.a : &t.b) = lw_num(m, "beta", 0.46);
		else if (t.kind == TB_KAISER)
			t.a = 12.0;
		if (lw_has_arg(m, "d"))
			t.a = lw_num(m, "d", 1);
		numel = t.kind == TB_RFFTFREQ ? n / 2 + 1 : n;
	}
	int out = lw_new_out(m, node, 0);
	if (out < 0)
		return -1;
	if (sdfg_numel(m->g, out) != numel) {
		lw_error(m, "%s gives %lld elements, not the %lld recorded for its output", m->info->target, (long long)numel,
		         (long long)sdfg_numel(m->g, out));
		return -1;
	}
	Container *oc = lw_c(m, out);
	int64_t shape[MAXDIM];
	t.dt = oc->dt;
	for (int i = 0; i < oc->rank; i++)
		shape[i] = lw_dim(m, out, i);
	int k = sdfg_const_new(m->g, arena_printf(m->a, "%s_table", m->nodename), DT_F64, oc->rank, shape, table_make, &t,
	                       sizeof t);
	LibNode *l = lw_lib(m, LIB_ELEMWISE);
	l->in[0] = k, l->nin = 1;
	l->out[0] = out, l->nout = 1;
	lib_set_int(m->g, l, "code", T_CAST);
	return 0;
}

/* ---- helpers of the copies below ------------------------------------------------- */

/* A new transient of shape[rank] and dtype dt, for intermediate results. */
static int transient(Imp *m, const char *name, Dtype dt, int rank, const int64_t *shape)
{
	int id = sdfg_add_container(m->g, name, dt, CK_TRANSIENT, rank, shape);
	lw_c(m, id)->origin = "";
	return id;
}

/* An elementwise node out = code(a, b), with compute dtype cdt (or -1). */
static void elem2(Imp *m, TCode code, int a, int b, int out, int cdt)
{
	LibNode *l = lw_lib(m, LIB_ELEMWISE);
	l->in[0] = a, l->in[1] = b, l->nin = 2;
	l->out[0] = out, l->nout = 1;
	lib_set_int(m->g, l, "code", code);
	if (cdt >= 0)
		lib_set_int(m->g, l, "cdt", cdt);
}

static int view(Imp *m, const char *name, int x, int rank, const int64_t *shape, Expr **st, Expr *off)
{
	Expr *sh[MAXDIM];
	for (int i = 0; i < rank; i++)
		sh[i] = ex_int(m->g, shape[i]);
	return lw_scratch_view_x(m, name, x, rank, sh, st, off);
}

/* x viewed in shape[rank] (copied first if its strides do not allow it). */
static int reshaped(Imp *m, const char *name, int x, int rank, const int64_t *shape)
{
	Expr *st[MAXDIM];
	if (!lw_reshape_strides(m, x, rank, shape, st)) {
		x = lw_copy(m, x, arena_printf(m->a, "%s_contig", name));
		lw_reshape_strides(m, x, rank, shape, st);
	}
	return view(m, name, x, rank, shape, st, lw_c(m, x)->offset);
}

/* x with its dims permuted: dim i of the result is dim perm[i] of x. */
static int permuted(Imp *m, const char *name, int x, const int *perm)
{
	Container *c = lw_c(m, x);
	int64_t sh[MAXDIM];
	Expr *st[MAXDIM];
	for (int i = 0; i < c->rank; i++) {
		sh[i] = lw_dim(m, x, perm[i]);
		st[i] = c->stride[perm[i]];
	}
	return view(m, name, x, c->rank, sh, st, c->offset);
}

/* ---- creation: linspace, logspace ------------------------------------------------ */

/* start/end: a number (attr "start"/"end") or a 0-d tensor (input 0/1). */
int lower_linspace(Imp *m, const cJSON *node)
{
	int out = lw_new_out(m, node, 0);
	if (out < 0)
		return -1;
	int64_t steps = lw_int(m, "steps", 0);
	if (steps < 1) {
		lw_error(m, "%s with %lld steps: empty tensors are not supported", m->info->target, (long long)steps);
		return -1;
	}
	if (lw_c(m, out)->dt == DT_BOOL) {
		lw_error(m, "%s: dtype bool is not supported (torch has no kernel for it)", m->info->target);
		return -1;
	}
	LibNode *l = lw_lib(m, LIB_LINSPACE);
	l->nin = 2;
	l->out[0] = out, l->nout = 1;
	static const char *const names[2] = {"start", "end"};
	for (int i = 0; i < 2; i++) {
		Val *v = lw_arg(m, names[i]);
		l->in[i] = -1;
		if (v->k == V_TENSOR) {
			if (sdfg_numel(m->g, v->t) != 1) {
				lw_error(m, "%s: '%s' must be a tensor of one element", m->info->target, names[i]);
				return -1;
			}
			l->in[i] = v->t;
		} else
			lib_set_float(m->g, l, names[i], lw_num(m, names[i], 0));
	}
	lib_set_int(m->g, l, "steps", steps);
	lib_set_int(m->g, l, "log", m->info->param);
	if (m->info->param)
		lib_set_float(m->g, l, "base", lw_num(m, "base", 10));
	return 0;
}

/* ---- tril, triu ------------------------------------------------------------------ */

int lower_tri(Imp *m, const cJSON *node)
{
	int x = lw_tensor(m, "self");
	int out = x < 0 ? -1 : lw_new_out(m, node, 0);
	if (out < 0)
		return -1;
	if (lw_c(m, x)->rank < 2) {
		lw_error(m, "%s needs a tensor of rank 2 or more (got rank %d)", m->info->target, lw_c(m, x)->rank);
		return -1;
	}
	LibNode *l = lw_lib(m, LIB_TRI);
	l->in[0] = x, l->nin = 1;
	l->out[0] = out, l->nout = 1;
	lib_set_int(m->g, l, "upper", m->info->param);
	lib_set_int(m->g, l, "diagonal", lw_int(m, "diagonal", 0));
	return 0;
}

/* eye(n), eye(n, m): ones kept on the main diagonal of a filled matrix
 * by a lower and an upper triangle (LIB_TRI twice). */
int lower_eye(Imp *m, const cJSON *node)
{
	int out = lw_new_out(m, node, 0);
	if (out < 0)
		return -1;
	Container *oc = lw_c(m, out);
	int ones = lw_scratch_x(m, "ones", oc->dt, oc->rank, oc->shape), low = lw_scratch_x(m, "low", oc->dt, oc->rank, oc->shape);
	LibNode *l = lw_lib(m, LIB_ELEMWISE);
	l->in[0] = -1, l->nin = 1;
	l->out[0] = ones, l->nout = 1;
	lib_set_float(m->g, l, "scalar0", 1);
	lib_set_int(m->g, l, "code", T_ASSIGN);
	for (int upper = 0; upper < 2; upper++) {
		l = lw_lib(m, LIB_TRI);
		l->in[0] = upper ? low : ones, l->nin = 1;
		l->out[0] = upper ? out : low, l->nout = 1;
		lib_set_int(m->g, l, "upper", upper);
		lib_set_int(m->g, l, "diagonal", 0);
	}
	return 0;
}

/* broadcast_tensors: each output a view of its input expanded to the
 * common shape recorded for it. */
int lower_broadcast(Imp *m, const cJSON *node)
{
	Val *ts = lw_arg(m, "tensors");
	int n = 0;
	out_list_name(node, 0, &n);
	if (ts->k != V_TENSORS || n != ts->n) {
		lw_error(m, "broadcast_tensors: %d outputs recorded for %d tensors", n, ts->k == V_TENSORS ? ts->n : 0);
		return -1;
	}
	for (int k = 0; k < n; k++) {
		const char *on = out_list_name(node, k, &n);
		Meta mt;
		Expr *st[MAXDIM];
		int x = ts->ts[k];
		if (!on)
			continue;
		if (x < 0 || lw_meta(m, on, &mt) || lw_c(m, x)->rank > mt.rank || expand_strides(m, x, &mt, st))
			return -1;
		lw_view(m, on, x, mt.rank, mt.shape, st, lw_c(m, x)->offset);
	}
	return 0;
}

/* ---- fliplr, flipud, rot90 ------------------------------------------------------- */

/* out = x with the dims flags[d] set flipped (LIB_REMAP). */
static int flip_into(Imp *m, int x, int out, const int *flags)
{
	int r = lw_c(m, x)->rank;
	int64_t kinds[MAXDIM], ofs[MAXDIM];
	for (int i = 0; i < r; i++)
		kinds[i] = flags[i] ? RK_FLIP : RK_OFFSET, ofs[i] = 0;
	LibNode *l = lw_lib(m, LIB_REMAP);
	l->in[0] = x, l->nin = 1;
	l->out[0] = out, l->nout = 1;
	lib_set_ints(m->g, l, "kinds", kinds, r);
	lib_set_ints(m->g, l, "ofs", ofs, r);
	lib_set_int(m->g, l, "guard", 0);
	lib_set_float(m->g, l, "value", 0);
	return 0;
}

/* rot90 as torch: k mod 4 = 1 flips dims[1] then transposes, 2 flips both,
 * 3 flips dims[0] then transposes, 0 copies. Flipping after the transpose
 * (of a view) instead, the flipped dim swaps: one remap either way. */
int lower_rot90(Imp *m, const cJSON *node)
{
	int x = lw_tensor(m, "self");
	const char *on = lw_out_name(node, 0);
	Meta mt;
	if (x < 0 || !on || lw_meta(m, on, &mt))
		return -1;
	Container *c = lw_c(m, x);
	int r = c->rank, flags[MAXDIM] = {0};
	int p = m->info->param;
	if (r < (p == RT_UD ? 1 : 2)) {
		lw_error(m, "%s needs a tensor of rank %d or more (got rank %d)", m->info->target, p == RT_UD ? 1 : 2, r);
		return -1;
	}
	if (p != RT_ROT) {
		flags[p == RT_LR ? 1 : 0] = 1;
		int out = lw_new_out(m, node, 0);
		return out < 0 ? -1 : flip_into(m, x, out, flags);
	}
	Val *dv = lw_arg(m, "dims");
	int d0 = dv->n == 2 ? lw_norm_dim(m, dv->is[0], r) : -1, d1 = dv->n == 2 ? lw_norm_dim(m, dv->is[1], r) : -1;
	if (d0 < 0 || d1 < 0 || d0 == d1) {
		if (dv->n != 2 || d0 == d1)
			lw_error(m, "rot90: dims must be two different dims (got %d dims)", dv->n);
		return -1;
	}
	int64_t k = ((lw_int(m, "k", 1) % 4) + 4) % 4;
	if (k == 0) {
		Expr *st[MAXDIM];
		for (int i = 0; i < r; i++)
			st[i] = c->stride[i];
		lw_view(m, on, x, r, mt.shape, st, c->offset);
		return 0;
	}
	int src = x;
	if (k == 2)
		flags[d0] = flags[d1] = 1;
	else {
		int perm[MAXDIM];
		for (int i = 0; i < r; i++)
			perm[i] = i;
		perm[d0] = d1, perm[d1] = d0;
		src = permuted(m, arena_printf(m->a, "%s_t", on), x, perm);
		flags[k == 1 ? d0 : d1] = 1;
	}
	int out = lw_new_out(m, node, 0);
	return out < 0 ? -1 : flip_into(m, src, out, flags);
}

/* ---- pixel_shuffle, pixel_unshuffle, channel_shuffle ----------------------------- */

/* The input viewed with split dims, permuted, copied, and the copy viewed
 * in the output's shape (torch's decompositions do the same). */
int lower_shuffle(Imp *m, const cJSON *node)
{
	int x = lw_tensor(m, "self");
	const char *on = lw_out_name(node, 0);
	Meta mt;
	if (x < 0 || !on || lw_meta(m, on, &mt))
		return -1;
	int r = lw_c(m, x)->rank, p = m->info->param;
	int64_t s[MAXDIM], f;
	for (int i = 0; i < r; i++)
		s[i] = lw_dim(m, x, i);
	int64_t sh[MAXDIM];
	int perm[MAXDIM], n = 0;
	if (p == SH_CHANNEL) {
		f = lw_int(m, "groups", 1);
		if (r < 2 || r + 1 > MAXDIM || f < 1 || s[1] % f) {
			lw_error(m, "%s: %lld groups for %lld channels of a rank-%d tensor (need rank 2 to %d, groups dividing the "
			            "channels)", m->info->target, (long long)f, (long long)(r > 1 ? s[1] : 0), r, MAXDIM - 1);
			return -1;
		}
		/* [N, g, C/g, *] with dims 1 and 2 swapped */
		sh[n] = s[0], perm[n] = n, n++;
		sh[n] = f, perm[n] = 2, n++;
		sh[n] = s[1] / f, perm[n] = 1, n++;
		for (int i = 2; i < r; i++)
			sh[n] = s[i], perm[n] = n, n++;
	} else {
		f = lw_int(m, p == SH_PIXEL ? "upscale_factor" : "downscale_factor", 1);
		int lead = r - 3;
		int ok = r >= 3 && lead + 5 <= MAXDIM && f >= 1;
		if (ok && p == SH_PIXEL)
			ok = s[lead] % (f * f) == 0;
		else if (ok)
			ok = s[lead + 1] % f == 0 && s[lead + 2] % f == 0;
		if (!ok) {
			lw_error(m, "%s: factor %lld does not fit a rank-%d tensor of these sizes (need rank 3 to %d, channels "
			            "divisible by the factor squared, or height and width by the factor)", m->info->target,
			         (long long)f, r, MAXDIM - 2);
			return -1;
		}
		for (int i = 0; i < lead; i++)
			sh[n] = s[i], perm[n] = n, n++;
		int64_t C = s[lead], H = s[lead + 1], W = s[lead + 2];
		if (p == SH_PIXEL) {
			/* [*, C, r, r, H, W] -> [*, C, H, r, W, r] */
			int64_t v[5] = {C / (f * f), f, f, H, W};
			static const int q[5] = {0, 3, 1, 4, 2};
			for (int i = 0; i < 5; i++)
				sh[lead + i] = v[i], perm[lead + i] = lead + q[i];
		} else {
			/* [*, C, H, r, W, r] -> [*, C, r, r, H, W] */
			int64_t v[5] = {C, H / f, f, W / f, f};
			static const int q[5] = {0, 2, 4, 1, 3};
			for (int i = 0; i < 5; i++)
				sh[lead + i] = v[i], perm[lead + i] = lead + q[i];
		}
		n = lead + 5;
	}
	int split = reshaped(m, arena_printf(m->a, "%s_split", on), x, n, sh);
	int perm_v = permuted(m, arena_printf(m->a, "%s_perm", on), split, perm);
	int copy = lw_copy(m, perm_v, arena_printf(m->a, "%s_copy", on));
	Expr *st[MAXDIM];
	lw_reshape_strides(m, copy, mt.rank, mt.shape, st);
	lw_view(m, on, copy, mt.rank, mt.shape, st, lw_c(m, copy)->offset);
	return 0;
}

/* ---- diff ------------------------------------------------------------------------ */

/* diff(x, n, dim, prepend, append): cat(prepend, x, append) along dim,
 * then n times x[1:] - x[:-1] (logical_xor for bool, as torch). */
int lower_diff(Imp *m, const cJSON *node)
{
	int x = lw_tensor(m, "self");
	int out = x < 0 ? -1 : lw_new_out(m, node, 0);
	if (out < 0)
		return -1;
	Container *c = lw_c(m, x);
	int r = c->rank;
	int d = lw_norm_dim(m, lw_int(m, "dim", -1), r);
	int64_t n = lw_int(m, "n", 1);
	if (d < 0)
		return -1;
	if (r == 0 || n < 1) {
		lw_error(m, "diff needs a tensor of rank 1 or more and n >= 1 (got rank %d, n %lld)", r, (long long)n);
		return -1;
	}
	Dtype dt = lw_c(m, out)->dt;
	int pre = lw_tensor(m, "prepend"), app = lw_tensor(m, "append");
	int64_t sh[MAXDIM];
	for (int i = 0; i < r; i++)
		sh[i] = lw_dim(m, x, i);
	if (pre >= 0 || app >= 0) {
		int ins[3], k = 0;
		for (int i = 0; i < 3; i++) {
			int t = i == 0 ? pre : i == 1 ? x : app;
			if (t < 0)
				continue;
			if (lw_c(m, t)->rank != r || lw_c(m, t)->dt != dt) {
				lw_error(m, "diff: prepend and append must have the input's rank and dtype");
				return -1;
			}
			if (t != x)
				sh[d] += lw_dim(m, t, d);
			ins[k++] = t;
		}
		x = transient(m, arena_printf(m->a, "%s_cat", m->nodename), dt, r, sh);
		LibNode *l = lw_lib(m, LIB_CAT);
		for (int i = 0; i < k; i++)
			l->in[i] = ins[i];
		l->nin = k;
		l->out[0] = x, l->nout = 1;
		lib_set_int(m->g, l, "dim", d);
	}
	if (n >= sh[d]) {
		lw_error(m, "diff: n = %lld leaves nothing of a dimension of size %lld (empty tensors are not supported)", (long long)n,
		         (long long)sh[d]);
		return -1;
	}
	for (int64_t k = 0; k < n; k++) {
		Container *s = lw_c(m, x);
		Expr *st[MAXDIM];
		sh[d]--;
		for (int i = 0; i < r; i++)
			st[i] = s->stride[i];
		int hi = view(m, arena_printf(m->a, "%s_hi", m->nodename), x, r, sh, st, ex_add(m->g, s->offset, s->stride[d]));
		int lo = view(m, arena_printf(m->a, "%s_lo", m->nodename), x, r, sh, st, s->offset);
		int o = k == n - 1 ? out : transient(m, arena_printf(m->a, "%s_d%lld", m->nodename, (long long)k), dt, r, sh);
		elem2(m, dt == DT_BOOL ? T_XOR : T_SUB, hi, lo, o, dt == DT_BOOL ? DT_BOOL : -1);
		x = o;
	}
	return 0;
}

/* ---- repeat_interleave ----------------------------------------------------------- */

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
