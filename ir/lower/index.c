/*
 * index.c - lowerings of the index family (ops_index.h; the expansions are
 * in ir/expand/index.c): reads and writes at positions held in tensors,
 * which build on value-symbol memlets (ir.h). Gathers (index_select,
 * gather, embedding, index.Tensor: LIB_GATHER; take_along_dim: broadcast
 * views and a gather that wraps negative indices), scatters (scatter,
 * scatter_add, scatter_reduce, index_put, slice_scatter, select_scatter:
 * LIB_SCATTER; index_add, index_copy and index_fill as index_put with one
 * index; one_hot as a zero fill and scatter.value), embedding bags
 * (embedding_bag and torch's _embedding_bag / _embedding_bag_forward_only:
 * LIB_EMBBAG) and masked_scatter (LIB_MSCATTER).
 *
 * Arguments are checked here, where the message can name the node; the
 * expansions assume well-formed library nodes. What only the data can
 * tell (an index outside its dim, offsets past the end) fails the run
 * with DOCCC_ERR_INDEX where torch raises.
 */
#include <string.h>

#include "lower.h"

/* 0, or -1 after a message naming `what` unless tensor t is int64 or int32. */
static int int_tensor(Imp *m, int t, const char *what)
{
	Dtype dt = lw_c(m, t)->dt;
	if (dt == DT_I64 || dt == DT_I32)
		return 0;
	lw_error(m, "%s: %s must be int64 or int32 (got %s)", m->info->target, what, dtype_info[dt].name);
	return -1;
}

/* A contiguous rank-1 view of all of c's elements in row-major order
 * (a copy first if c is not contiguous). */
static int flat_view(Imp *m, int c, const char *name)
{
	if (!sdfg_is_contiguous(m->g, c))
		c = lw_copy(m, c, arena_printf(m->a, "%s_contig", name));
	Expr *one = ex_int(m->g, 1), *n = sdfg_numel_x(m->g, c);
	int v = sdfg_add_view(m->g, name, c, 1, &n, &one, lw_c(m, c)->offset);
	lw_c(m, v)->origin = "";
	return v;
}

/* ---- indexing: index_select, gather, embedding, index.Tensor --------------------- */

static int index_tensor_ok(Imp *m, int t)
{
	Dtype dt = lw_c(m, t)->dt;
	if (dt == DT_I64 || dt == DT_I32)
		return 0;
	lw_error(m, "index tensors of dtype %s are not supported (int64 and int32 only; boolean and uint8 "
	            "masks give a data-dependent result shape)", dtype_info[dt].name);
	return -1;
}

/* Do index tensors ts[0..n) broadcast (right-aligned) by their run-time
 * values: a dim that may be 1 facing another size? The expansion takes the
 * broadcast shape from the expressions. */
static int index_bcast_unknown(Imp *m, const int *ts, int n)
{
	for (int i = 0; i < n; i++)
		for (int j = 0; j < n; j++) {
			Container *a = lw_c(m, ts[i]), *b = lw_c(m, ts[j]);
			for (int q = 1; q <= a->rank && q <= b->rank; q++) {
				Expr *x = a->shape[a->rank - q], *y = b->shape[b->rank - q];
				if (lw_is_one(m, x) < 0 && lw_is_one(m, y) != 1 && !ex_eq(x, y))
					return 1;
			}
		}
	return 0;
}

int lower_gather(Imp *m, const cJSON *node)
{
	int p = m->info->param;
	int x = lw_tensor(m, p == GA_EMBEDDING ? "weight" : "self");
	if (x < 0)
		return -1;
	int r = lw_c(m, x)->rank;
	int out = lw_new_out(m, node, 0);
	if (out < 0)
		return -1;
	LibNode *l = lw_lib(m, LIB_GATHER);
	l->in[0] = x;
	l->nin = 1;
	l->out[0] = out, l->nout = 1;
	lib_set_int(m->g, l, "mode", p);
	if (p == GA_INDEX) {
		Val *iv = lw_arg(m, "indices");
		int64_t dims[MAXDIM];
		int nd = 0;
		if (iv->n > r) {
			lw_error(m, "index: %d indices for rank %d", iv->n, r);
			return -1;
		}
		for (int i = 0; i < iv->n; i++) {
			if (iv->ts[i] < 0)
				continue;
			if (index_tensor_ok(m, iv->ts[i]))
				return -1;
			if (l->nin >= 8) {
				lw_error(m, "index: more than 7 index tensors");
				return -1;
			}
			dims[nd++] = i;
			l->in[l->nin++] = iv->ts[i];
		}
		if (nd == 0) {
			lw_error(m, "index: no index tensors");
			return -1;
		}
		if (index_bcast_unknown(m, l->in + 1, nd))
			return lw_need_static(m, "index tensors whose run-time dims may or may not broadcast");
		lib_set_ints(m->g, l, "dims", dims, nd);
		return 0;
	}
	int idx = lw_tensor(m, p == GA_EMBEDDING ? "indices" : "index");
	if (idx < 0 || index_tensor_ok(m, idx))
		return -1;
	l->in[l->nin++] = idx;
	int64_t d = 0;
	if (p != GA_EMBEDDING && (d = lw_norm_dim(m, lw_int(m, "dim", 0), r)) < 0)
		return -1;
	lib_set_ints(m->g, l, "dims", &d, 1);
	return 0;
}

/* ---- scatters -------------------------------------------------------------------- */

int lower_scatter(Imp *m, const cJSON *node)
{
	/* scatter.reduce and scatter.value_reduce (reduce "add" or "multiply",
	 * self included) are scatter_reduce's sum and prod, the value a source
	 * of the index's shape */
	int legacy = lw_has_arg(m, "reduce") && !lw_has_arg(m, "include_self");
	int p = legacy ? SC_REDUCE : m->info->param;
	int x = lw_tensor(m, "self");
	int out = x < 0 ? -1 : lw_new_out(m, node, 0), vsrc = -1;
	if (out < 0)
		return -1;
	if (legacy && lw_has_arg(m, "value")) {
		int idx = lw_tensor(m, "index");
		if (idx < 0)
			return -1;
		Container *ic = lw_c(m, idx);
		vsrc = lw_scratch_x(m, "value", lw_c(m, out)->dt, ic->rank, ic->shape);
		LibNode *f = lw_lib(m, LIB_ELEMWISE);
		f->in[0] = -1, f->nin = 1;
		f->out[0] = vsrc, f->nout = 1;
		lib_set_float(m->g, f, "scalar0", lw_num(m, "value", 0));
		lib_set_int(m->g, f, "code", T_ASSIGN);
	}
	int r = lw_c(m, x)->rank;
	LibNode *l = lw_lib(m, LIB_SCATTER);
	l->in[0] = x;
	l->nin = 1;
	l->out[0] = out, l->nout = 1;
	lib_set_int(m->g, l, "mode", p);
	if (p == SC_INDEX_PUT) {
		Val *iv = lw_arg(m, "indices");
		int vals = lw_tensor(m, "values");
		if (vals < 0)
			return -1;
		l->in[l->nin++] = vals;
		if (iv->n > 6 || iv->n > r) {
			lw_error(m, "index_put: %d indices for rank %d", iv->n, r);
			return -1;
		}
		/* None (a whole dim, x[:, i] = v) leaves a dim out of "dims" */
		int64_t dims[MAXDIM];
		int nd = 0;
		for (int i = 0; i < iv->n; i++) {
			if (iv->ts[i] < 0)
				continue;
			if (index_tensor_ok(m, iv->ts[i]))
				return -1;
			dims[nd++] = i;
			l->in[l->nin++] = iv->ts[i];
		}
		if (nd == 0) {
			lw_error(m, "index_put: no index tensors");
			return -1;
		}
		lib_set_ints(m->g, l, "dims", dims, nd);
		lib_set_int(m->g, l, "accumulate", lw_int(m, "accumulate", 0));
		return 0;
	}
	int d = lw_norm_dim(m, lw_int(m, "dim", 0), r);
	if (d < 0)
		return -1;
	lib_set_int(m->g, l, "dim", d);
	if (p == SC_SLICE || p == SC_SELECT) {
		int src = lw_tensor(m, "src");
		if (src < 0)
			return -1;
		l->in[l->nin++] = src;
		int64_t n;
		if (!ex_isint(lw_dimx(m, x, d), &n))
			return lw_need_static(m, "the scattered dim is a run-time dim (its start is normalized as a number)");
		if (p == SC_SELECT) {
			int64_t i = lw_int(m, "index", 0);
			lib_set_int(m->g, l, "start", i < 0 ? i + n : i);
			return 0;
		}
		Val *sv = lw_arg(m, "start");
		int64_t start = sv->k == V_INT ? sv->i : 0, step = lw_int(m, "step", 1);
		if (start < 0)
			start += n;
		start = start < 0 ? 0 : start > n ? n : start;
		if (step <= 0) {
			lw_error(m, "slice_scatter: step must be positive (got %lld)", (long long)step);
			return -1;
		}
		lib_set_int(m->g, l, "start", start);
		lib_set_int(m->g, l, "step", step);
		return 0;
	}
	int idx = lw_tensor(m, "index");
	if (idx < 0 || index_tensor_ok(m, idx))
		return -1;
	l->in[l->nin++] = idx;
	if (p == SC_VALUE) {
		lib_set_float(m->g, l, "value", lw_num(m, "value", 0));
		return 0;
	}
	int src = vsrc >= 0 ? vsrc : lw_tensor(m, "src");
	if (src < 0)
		return -1;
	l->in[l->nin++] = src;
	if (p == SC_REDUCE) {
		static const char *const names[] = {"sum", "prod", "amax", "amin", "mean"};
		static const char *const legacy_names[] = {"add", "multiply"};
		const char *rd = lw_arg(m, "reduce")->s;
		int k = -1;
		for (int i = 0; rd && i < (legacy ? 2 : 5); i++)
			if (!strcmp(rd, legacy ? legacy_names[i] : names[i]))
				k = i;
		if (k < 0) {
			lw_error(m, "scatter_reduce: reduction '%s' is not supported", rd ? rd : "?");
			return -1;
		}
		lib_set_int(m->g, l, "reduce", k);
		lib_set_int(m->g, l, "include_self", legacy ? 1 : lw_int(m, "include_self", 1));
	}
	return 0;
}

/* ---- index_add, index_copy, index_fill ------------------------------------------- */

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
			ok = ex_eq(lw_dimx(m, vals, i), i == d ? lw_dimx(m, idx, 0) : lw_dimx(m, x, i));
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

/* ---- take_along_dim: a gather on views broadcast against each other outside dim ---- */

int lower_take_along_dim(Imp *m, const cJSON *node)
{
	int x = lw_tensor(m, "self"), idx = lw_tensor(m, "indices");
	if (x < 0 || idx < 0 || int_tensor(m, idx, "indices"))
		return -1;
	int out = lw_new_out(m, node, 0);
	if (out < 0)
		return -1;
	Container *o = lw_c(m, out);
	const char *on = o->name;
	Val *dv = lw_arg(m, "dim");
	int64_t d = 0;
	if (dv->k != V_INT) {
		/* along the flattened tensor */
		x = flat_view(m, x, arena_printf(m->a, "%s_xflat", on));
		idx = flat_view(m, idx, arena_printf(m->a, "%s_iflat", on));
	} else {
		int r = lw_c(m, x)->rank;
		if (lw_c(m, idx)->rank != r) {
			lw_error(m, "take_along_dim: self (rank %d) and indices (rank %d) need the same rank", r, lw_c(m, idx)->rank);
			return -1;
		}
		if ((d = lw_norm_dim(m, dv->i, r)) < 0)
			return -1;
		int ins[2] = {x, idx};
		for (int k = 0; k < 2; k++) {
			Container *c = lw_c(m, ins[k]);
			Expr *sh[MAXDIM], *st[MAXDIM];
			for (int i = 0; i < r; i++) {
				int64_t n;
				int bc = i != d && ex_isint(c->shape[i], &n) && n == 1 && !ex_eq(c->shape[i], o->shape[i]);
				sh[i] = i == d && k == 0 ? c->shape[i] : o->shape[i];
				st[i] = bc ? ex_int(m->g, 0) : c->stride[i];
			}
			ins[k] = sdfg_add_view(m->g, arena_printf(m->a, "%s_%s", on, k ? "ib" : "xb"), ins[k], r, sh, st, c->offset);
			lw_c(m, ins[k])->origin = "";
		}
		x = ins[0], idx = ins[1];
	}
	LibNode *l = lw_lib(m, LIB_GATHER);
	l->in[0] = x, l->in[1] = idx, l->nin = 2;
	l->out[0] = out, l->nout = 1;
	lib_set_int(m->g, l, "mode", GA_GATHER);
	lib_set_ints(m->g, l, "dims", &d, 1);
	lib_set_int(m->g, l, "wrap", 1);
	return 0;
}

/* ---- one_hot --------------------------------------------------------------------- */

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

/* ---- embedding_bag and torch's _embedding_bag* --------------------------------------
 * The four results are torch's: output, offset2bag, bag_size, max_indices,
 * with the shapes the graph records (they differ between overloads and
 * between torch's fast and slow CPU paths); unused ones are not computed.
 * "fast" records whether torch's CPU kernel takes its fast path (sum or
 * mean of float, half or bfloat16 rows, unit inner strides, no
 * padding_idx), which ignores indices past the last offset when
 * include_last_offset is set, where the slow path adds them to the last bag. */

int lower_embedding_bag(Imp *m, const cJSON *node)
{
	int w = lw_tensor(m, "weight"), idx = lw_tensor(m, "indices"), ofs = lw_tensor(m, "offsets");
	if (w < 0 || idx < 0 || ofs < 0)
		return -1;
	Val *pv = lw_arg(m, "per_sample_weights");
	int psw = pv->k == V_TENSOR ? pv->t : -1;
	if (lw_float_tensor(m, w, "weight") || int_tensor(m, idx, "indices") || int_tensor(m, ofs, "offsets"))
		return -1;
	if (lw_c(m, w)->rank != 2 || lw_c(m, idx)->rank != 1 || lw_c(m, ofs)->rank != 1) {
		lw_error(m, "%s: weight must be 2-d, indices and offsets 1-d (got ranks %d, %d, %d)", m->info->target,
		         lw_c(m, w)->rank, lw_c(m, idx)->rank, lw_c(m, ofs)->rank);
		return -1;
	}
	int64_t mode = lw_int(m, "mode", 0), ilo = lw_int(m, "include_last_offset", 0);
	int64_t pad = -1;
	if (m->info->param != EB_PLAIN) {
		Val *p = lw_arg(m, "padding_idx");
		if (p->k == V_INT)
			pad = p->i;
		if (m->info->param == EB_WRAP_PAD && p->k == V_INT) {
			int64_t V = lw_dim(m, w, 0);
			if (pad < -V || pad >= V) {
				lw_error(m, "%s: padding_idx %lld out of range for %lld embeddings", m->info->target, (long long)pad,
				         (long long)V);
				return -1;
			}
			pad = pad < 0 ? pad + V : pad;
		}
		pad = pad < 0 ? -1 : pad;
	}
	if (mode < EBM_SUM || mode > EBM_MAX) {
		lw_error(m, "%s: mode %lld unknown (0 sum, 1 mean, 2 max)", m->info->target, (long long)mode);
		return -1;
	}
	if (psw >= 0 && (mode != EBM_SUM || lw_c(m, psw)->rank != 1 || lw_c(m, psw)->dt != lw_c(m, w)->dt)) {
		lw_error(m, "%s: per_sample_weights need mode 'sum', rank 1 and the weight's dtype", m->info->target);
		return -1;
	}
	if (ilo && lw_dim(m, ofs, 0) < 1) {
		lw_error(m, "%s: include_last_offset needs at least one offset", m->info->target);
		return -1;
	}
	int outs[4];
	for (int k = 0; k < 4; k++) {
		const char *nm = lw_out_name(node, k);
		outs[k] = nm && (k == 0 || lw_value_used(m, nm)) ? lw_new_out(m, node, k) : -1;
	}
	if (outs[0] < 0)
		return -1;
	Container *wc = lw_c(m, w);
	int64_t one;
	Dtype dt = wc->dt;
	int fast = mode != EBM_MAX && (dt == DT_F32 || dt == DT_F16 || dt == DT_BF16) && pad < 0 &&
	           ex_isint(wc->stride[1], &one) && (one == 1 || lw_dim(m, w, 1) == 1);
	if (psw >= 0 && !(ex_isint(lw_c(m, psw)->stride[0], &one) && (one == 1 || lw_dim(m, psw, 0) == 1)))
		fast = 0;
	LibNode *l = lw_lib(m, LIB_EMBBAG);
	l->in[0] = w, l->in[1] = idx, l->in[2] = ofs, l->in[3] = psw, l->nin = 4;
	for (int k = 0; k < 4; k++)
		l->out[k] = outs[k];
	l->nout = 4;
	lib_set_int(m->g, l, "mode", mode);
	lib_set_int(m->g, l, "include_last_offset", ilo);
	lib_set_int(m->g, l, "padding_idx", pad);
	lib_set_int(m->g, l, "fast", fast);
	return 0;
}

/* ---- masked_scatter -------------------------------------------------------------- */

int lower_masked_scatter(Imp *m, const cJSON *node)
{
	int x = lw_tensor(m, "self"), mk = lw_tensor(m, "mask"), src = lw_tensor(m, "source");
	if (x < 0 || mk < 0 || src < 0)
		return -1;
	if (lw_c(m, mk)->dt != DT_BOOL && lw_c(m, mk)->dt != DT_U8) {
		lw_error(m, "masked_scatter: the mask must be bool (got %s)", dtype_info[lw_c(m, mk)->dt].name);
		return -1;
	}
	int out = lw_new_out(m, node, 0);
	if (out < 0)
		return -1;
	src = flat_view(m, src, arena_printf(m->a, "%s_src", lw_c(m, out)->name)); /* its copy goes first */
	LibNode *l = lw_lib(m, LIB_MSCATTER);
	l->in[0] = x, l->in[1] = mk, l->in[2] = src;
	l->nin = 3;
	l->out[0] = out, l->nout = 1;
	return 0;
}
