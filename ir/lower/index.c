/*
 * index.c - lowerings of the data-dependent sampling and indexing ops that
 * build on value-symbol memlets (ir.h): grid sampling (grid_sampler,
 * grid_sampler_2d: LIB_GRIDSAMPLE), embedding bags (embedding_bag and
 * torch's _embedding_bag / _embedding_bag_forward_only: LIB_EMBBAG),
 * masked_scatter (LIB_MSCATTER) and take_along_dim (broadcast views and a
 * LIB_GATHER that wraps negative indices).
 *
 * Arguments are checked here, where the message can name the node; the
 * expansions (ir/expand/sample.c) assume well-formed library nodes. What
 * only the data can tell (an index outside its dim, offsets past the end)
 * fails the run with DOCCC_ERR_INDEX where torch raises.
 */
#include <string.h>

#include "lower.h"

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

/* ---- embedding_bag and torch's _embedding_bag* ------------------------------------------
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

/* ---- masked_scatter ----------------------------------------------------------------------- */

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

/* ---- take_along_dim: a gather on views broadcast against each other outside dim ---------------- */

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
