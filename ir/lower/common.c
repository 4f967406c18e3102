/*
 * common.c - building blocks shared by the lowerings: containers, views,
 * copies, library nodes and the elementwise node every family uses, and
 * the helpers of more than one family (scratch transients and views, flat
 * views, 1-d ops through 2-d nodes, run-time batches, the window check of
 * convolution and pooling, the search node). A helper that one family
 * alone uses stays static in that family's file. They build on the
 * lowerings' API: api.c (values and metadata), args.c (the bound
 * arguments), dims.c (sizes and run-time dims).
 *
 * A container made for an intermediate result is unnamed in the graph:
 * its origin is "" and no value is bound to it, so that messages and the
 * value map see only the graph's own values.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "lower.h"

Container *lw_c(Imp *m, int id)
{
	return sdfg_c(m->g, id);
}

LibNode *lw_lib(Imp *m, int op)
{
	Node *b = sdfg_libblock(m->g, m->nodename, op);
	sdfg_append(m->g, m->g->root, b);
	return b->lib;
}

/* Output k of the current node: a new transient with the recorded metadata;
 * -1 (and bound to nothing) for an as_none output. */
const char *lw_out_name(const cJSON *node, int k)
{
	cJSON *o = json_at(json_get(node, "outputs"), k), *x;
	const char *tag = json_union_tag(o, &x);
	if (!tag || strcmp(tag, "as_tensor"))
		return NULL;
	return json_str(json_get(x, "name"));
}

int lw_new_out(Imp *m, const cJSON *node, int k)
{
	const char *nm = lw_out_name(node, k);
	if (!nm)
		return -1;
	return lw_new_value(m, nm, CK_TRANSIENT);
}

int lw_norm_dim(Imp *m, int64_t d, int rank)
{
	if (d < 0)
		d += rank;
	if (d < 0 || d >= (rank ? rank : 1)) {
		lw_error(m, "dimension %lld out of range for rank %d", (long long)d, rank);
		return -1;
	}
	return (int)d;
}

/* A view of container src with explicit shape/strides/offset (root units). */
int lw_view_x(Imp *m, const char *name, int src, int rank, Expr *const *shape, Expr **stride, Expr *offset)
{
	int id = sdfg_add_view(m->g, name, src, rank, shape, stride, offset);
	lw_c(m, id)->origin = arena_strdup(m->a, name);
	lw_bind(m, name, id);
	return id;
}

int lw_view(Imp *m, const char *name, int src, int rank, const int64_t *shape, Expr **stride, Expr *offset)
{
	Expr *sh[MAXDIM];
	for (int i = 0; i < rank; i++)
		sh[i] = ex_int(m->g, shape[i]);
	return lw_view_x(m, name, src, rank, sh, stride, offset);
}

/* A contiguous copy of src (materializes a view). */
int lw_copy(Imp *m, int src, const char *name)
{
	Container *s = lw_c(m, src);
	Expr *shape[MAXDIM];
	for (int i = 0; i < s->rank; i++)
		shape[i] = s->shape[i];
	int id = sdfg_add_container_x(m->g, name, s->dt, CK_TRANSIENT, s->rank, shape);
	lw_c(m, id)->origin = "";
	LibNode *l = lw_lib(m, LIB_ELEMWISE);
	l->in[0] = src;
	l->nin = 1;
	l->out[0] = id;
	l->nout = 1;
	lib_set_int(m->g, l, "code", T_ASSIGN);
	return id;
}

/* Strides for reshaping container c to shape[rank] without a copy, as
 * torch's computeStride does; 0 if impossible (a copy would do), -1 (after
 * a message) if the element counts differ. out is always filled, so a view
 * made from it never holds an unset stride. */
int lw_reshape_strides(Imp *m, int c, int rank, const int64_t *shape, Expr **out)
{
	Container *s = lw_c(m, c);
	int64_t os[MAXDIM], ost[MAXDIM];
	for (int i = 0; i < rank; i++)
		out[i] = ex_int(m->g, 0);
	for (int i = 0; i < s->rank; i++) {
		if (!ex_isint(s->shape[i], &os[i]) || !ex_isint(s->stride[i], &ost[i]))
			return 0;
	}
	int64_t numel = 1, want = 1;
	for (int i = 0; i < s->rank; i++)
		numel *= os[i];   /* import bounded it (DOCC_MAX_TENSOR_BYTES) */
	int over = 0;
	for (int i = 0; i < rank; i++)
		over |= shape[i] < 0 || ck_mul(want, shape[i], &want);
	if (over || want != numel) {
		lw_error(m, "'%s' of %lld elements cannot be viewed in the shape recorded for the result", s->origin && *s->origin ? s->origin : s->name,
		         (long long)numel);
		return -1;
	}
	int64_t ns[MAXDIM];
	if (numel == 0)
		return 1;
	int view_d = rank - 1;
	int64_t chunk_base_stride = s->rank ? ost[s->rank - 1] : 1;
	int64_t tensor_numel = 1, view_numel = 1;
	for (int tensor_d = s->rank - 1; tensor_d >= 0; tensor_d--) {
		tensor_numel *= os[tensor_d];
		if (tensor_d == 0 || (os[tensor_d - 1] != 1 && ost[tensor_d - 1] != tensor_numel * chunk_base_stride)) {
			while (view_d >= 0 && (view_numel < tensor_numel || shape[view_d] == 1)) {
				ns[view_d] = view_numel * chunk_base_stride;
				view_numel *= shape[view_d];
				view_d--;
			}
			if (view_numel != tensor_numel)
				return 0;
			if (tensor_d > 0) {
				chunk_base_stride = ost[tensor_d - 1];
				tensor_numel = 1;
				view_numel = 1;
			}
		}
	}
	if (view_d != -1)
		return 0;
	for (int i = 0; i < rank; i++)
		out[i] = ex_int(m->g, ns[i]);
	return 1;
}

/* lw_reshape_strides for sizes that may hold run-time dims: the integer
 * algorithm when every size is a number; else a contiguous c (row-major
 * strides, offset 0) takes the new shape's row-major strides, and c of the
 * same shape keeps its strides; anything else needs a copy first (0).
 * Element counts are compared in canonical form. */
int lw_reshape_strides_x(Imp *m, int c, int rank, Expr *const *shape, Expr **out)
{
	Container *s = lw_c(m, c);
	int64_t sh[MAXDIM];
	int fixed = 1;
	for (int i = 0; i < rank; i++)
		fixed &= ex_isint(shape[i], &sh[i]);
	if (fixed && !lw_dynamic(m, c))
		return lw_reshape_strides(m, c, rank, sh, out);
	for (int i = 0; i < rank; i++)
		out[i] = ex_int(m->g, 0);
	Expr *n0 = ex_int(m->g, 1), *n1 = ex_int(m->g, 1);
	for (int i = 0; i < s->rank; i++)
		n0 = ex_mul(m->g, n0, s->shape[i]);
	for (int i = 0; i < rank; i++)
		n1 = ex_mul(m->g, n1, shape[i]);
	if (!ex_eq(n0, n1)) {
		lw_error(m, "'%s' of %s elements cannot be viewed in the shape recorded for the result",
		         s->origin && *s->origin ? s->origin : s->name, "a run-time number of");
		return -1;
	}
	int same = s->rank == rank;
	for (int i = 0; same && i < rank; i++)
		same = ex_eq(s->shape[i], shape[i]);
	if (same) {
		for (int i = 0; i < rank; i++)
			out[i] = s->stride[i];
		return 1;
	}
	if (!sdfg_is_contiguous(m->g, c))
		return 0;
	Expr *st = ex_int(m->g, 1);
	for (int i = rank - 1; i >= 0; i--) {
		out[i] = st;
		st = ex_mul(m->g, st, shape[i]);
	}
	return 1;
}

/* Is value `name` read by any node or returned? (Tensor arguments only.) */
static int arg_mentions(const cJSON *arg, const char *name)
{
	if (!arg)
		return 0;
	if (cJSON_IsString(arg))
		return 0;
	if (cJSON_IsObject(arg)) {
		const char *nm = json_str(json_get(arg, "name"));
		if (nm && !strcmp(nm, name))
			return 1;
	}
	for (cJSON *c = arg->child; c; c = c->next)
		if (arg_mentions(c, name))
			return 1;
	return 0;
}

/* A transient computed in another shape than the value's (im2col's columns,
 * a reduction's full result): the value is a view of all of it. A transient
 * made for the purpose is contiguous, so only differing element counts (an
 * internal error, reported) can stop it. */
int lw_view_whole_x(Imp *m, const char *name, int c, int rank, Expr *const *shape)
{
	Expr *st[MAXDIM];
	int rc = lw_reshape_strides_x(m, c, rank, shape, st);
	if (rc != 1) {
		if (rc == 0)
			lw_error(m, "internal: '%s' is not a view of its computed shape", name);
		return -1;
	}
	lw_view_x(m, name, c, rank, shape, st, ex_int(m->g, 0));
	return 0;
}

int lw_view_whole(Imp *m, const char *name, int c, int rank, const int64_t *shape)
{
	Expr *sh[MAXDIM];
	for (int i = 0; i < rank; i++)
		sh[i] = ex_int(m->g, shape[i]);
	return lw_view_whole_x(m, name, c, rank, sh);
}

int lw_value_used(Imp *m, const char *name)
{
	cJSON *nodes = json_get(m->graph, "nodes");
	for (int k = 0; k < json_len(nodes); k++) {
		cJSON *ins = json_get(json_at(nodes, k), "inputs");
		for (int i = 0; i < json_len(ins); i++)
			if (arg_mentions(json_get(json_at(ins, i), "arg"), name))
				return 1;
	}
	return arg_mentions(json_get(m->graph, "outputs"), name);
}

/* ---- lowerings ------------------------------------------------------------------- */

/* Does container in broadcast to out (numpy rules, dims aligned on the
 * right)? The elementwise expansion indexes in by out's loop variables
 * (a size 1 by 0). A run-time dim that may be 1 where out's is not the
 * same expression would broadcast or not by its value: -1, needs static. */
static int broadcasts(Imp *m, int in, int out)
{
	Container *c = lw_c(m, in), *o = lw_c(m, out);
	if (c->rank > o->rank)
		return 0;
	for (int j = 0; j < c->rank; j++) {
		Expr *n = c->shape[j], *to = o->shape[j + o->rank - c->rank];
		int one = lw_is_one(m, n);
		int64_t v;
		if (one == 1 || ex_eq(n, to))
			continue;
		if (one < 0 || !ex_isint(n, &v))
			return -1;
		return 0;
	}
	return 1;
}

/* Elementwise: inputs are tensors or scalars ("scalarK" attrs); a scalar
 * that is a SymInt of run-time dims becomes a 0-d tensor of its value. */
int lw_elemwise(Imp *m, const cJSON *node, TCode code, int n, Val *const *ops)
{
	for (int i = 0; i < n; i++)
		if (ops[i]->k == V_INT && ops[i]->x) {
			ops[i]->t = lw_symint_value(m, ops[i]->x);
			ops[i]->k = V_TENSOR;
		}
	int out = lw_new_out(m, node, 0);
	if (out < 0)
		return -1;
	LibNode *l = lw_lib(m, LIB_ELEMWISE);
	l->nin = n;
	for (int i = 0; i < n; i++) {
		Val *v = ops[i];
		int bc = v->k == V_TENSOR ? broadcasts(m, v->t, out) : 1;
		if (bc < 0)
			return lw_need_static(m, "an operand's run-time dim may or may not broadcast");
		if (!bc) {
			lw_error(m, "operand %d (rank %d) does not broadcast to '%s' as recorded (rank %d)", i, lw_c(m, v->t)->rank,
			         lw_c(m, out)->origin, lw_c(m, out)->rank);
			return -1;
		}
		if (v->k == V_TENSOR)
			l->in[i] = v->t;
		else if (v->k == V_INT || v->k == V_FLOAT || v->k == V_BOOL) {
			l->in[i] = -1;
			lib_set_float(m->g, l, arena_printf(m->a, "scalar%d", i), v->k == V_FLOAT ? v->f : (double)v->i);
		} else {
			lw_error(m, "operand %d of kind %d is not supported", i, v->k);
			return -1;
		}
	}
	l->out[0] = out;
	l->nout = 1;
	lib_set_int(m->g, l, "code", code);
	return 0;
}

/* ---- shared by several families -------------------------------------------------- */

/* A contiguous transient of the given shape, unnamed in the graph. */
int lw_scratch_x(Imp *m, const char *hint, Dtype dt, int rank, Expr *const *shape)
{
	int id = sdfg_add_container_x(m->g, arena_printf(m->a, "%s_%s", m->nodename, hint), dt, CK_TRANSIENT, rank, shape);
	lw_c(m, id)->origin = "";
	return id;
}

/* The same with constant sizes. */
int lw_scratch(Imp *m, const char *hint, Dtype dt, int rank, const int64_t *shape)
{
	Expr *sh[MAXDIM];
	for (int i = 0; i < rank && i < MAXDIM; i++)
		sh[i] = ex_int(m->g, shape[i]);
	return lw_scratch_x(m, hint, dt, rank, sh);
}

/* A view of x with shape[rank] and strides st (root units) at offset off,
 * unnamed in the graph (no value is bound to it). */
int lw_scratch_view_x(Imp *m, const char *name, int x, int rank, Expr *const *shape, Expr **st, Expr *off)
{
	int id = sdfg_add_view(m->g, name, x, rank, shape, st, off);
	lw_c(m, id)->origin = "";
	return id;
}

/* A contiguous rank-1 view of all of c's elements (a copy first if c is
 * not contiguous). */
int lw_flat(Imp *m, int c)
{
	if (!sdfg_is_contiguous(m->g, c))
		c = lw_copy(m, c, arena_printf(m->a, "%s_contig", m->nodename));
	Expr *one = ex_int(m->g, 1), *n = sdfg_numel_x(m->g, c);
	int v = sdfg_add_view(m->g, arena_printf(m->a, "%s_flat", m->nodename), c, 1, &n, &one, lw_c(m, c)->offset);
	lw_c(m, v)->origin = "";
	return v;
}

/* An output that some node reads or the graph returns, else -1. */
int lw_used_out(Imp *m, const cJSON *node, int k)
{
	const char *nm = lw_out_name(node, k);
	if (!nm || !lw_value_used(m, nm))
		return -1;
	return lw_new_out(m, node, k);
}

int lw_float_tensor(Imp *m, int t, const char *what)
{
	if (dtype_info[lw_c(m, t)->dt].isfloat)
		return 0;
	lw_error(m, "%s: %s must be a floating-point tensor (got %s)", m->info->target, what, dtype_info[lw_c(m, t)->dt].name);
	return -1;
}

/* ---- 1-d ops through 2-d nodes, run-time batches, windows ------------------------ */

/* A [..., L] container viewed as [..., 1, L] (1-d ops through 2-d nodes). */
int lw_unsqueeze_h(Imp *m, int c)
{
	Container *s = lw_c(m, c);
	Expr *sh[MAXDIM], *st[MAXDIM];
	int r = s->rank;
	for (int i = 0; i < r - 1; i++)
		sh[i] = s->shape[i], st[i] = s->stride[i];
	sh[r - 1] = ex_int(m->g, 1), st[r - 1] = ex_int(m->g, 0);
	sh[r] = s->shape[r - 1], st[r] = s->stride[r - 1];
	int id = sdfg_add_view(m->g, arena_printf(m->a, "%s_2d", s->name), c, r + 1, sh, st, s->offset);
	lw_c(m, id)->origin = "";
	return id;
}

/* Output 0 computed as [..., 1, L] and bound as the graph's [..., L]. */
int lw_squeezed_out(Imp *m, const cJSON *node)
{
	const char *on = lw_out_name(node, 0);
	Meta mt;
	if (!on || lw_meta(m, on, &mt) || lw_check_dtype(m, &mt, on))
		return -1;
	Expr *full[MAXDIM], *sh[MAXDIM], *st[MAXDIM];
	for (int i = 0; i < mt.rank; i++)
		sh[i] = full[i] = lw_mdim(m, &mt, i);
	full[mt.rank - 1] = ex_int(m->g, 1);
	full[mt.rank] = sh[mt.rank - 1];
	int id = sdfg_add_container_x(m->g, arena_printf(m->a, "%s_2d", on), (Dtype)mt.dt, CK_TRANSIENT, mt.rank + 1, full);
	lw_c(m, id)->origin = "";
	if (lw_reshape_strides_x(m, id, mt.rank, sh, st) != 1) {
		if (!m->failed)
			lw_error(m, "internal: '%s' is not a view of its computed shape", on);
		return -1;
	}
	int v = sdfg_add_view(m->g, on, id, mt.rank, sh, st, ex_int(m->g, 0));
	lw_c(m, v)->origin = arena_strdup(m->a, on);
	lw_bind(m, on, v);
	return id;
}

/* Whether tensor c, or output 0 of the node when c < 0, has a run-time
 * size only in its batch dim (dim 0 of a batched tensor): the expansions
 * of convolution, batch norm and pooling take a symbolic batch as an
 * outer loop around per-image kernels built for constant channels and
 * spatial sizes. -1 through lw_need_static otherwise. */
int lw_batch_only(Imp *m, const cJSON *node, int c, int batched)
{
	Meta mt;
	const char *on = c < 0 ? lw_out_name(node, 0) : NULL;
	if (c < 0 && (!on || lw_meta(m, on, &mt)))
		return 0;   /* reported by the lowering itself */
	int rank = c < 0 ? mt.rank : lw_c(m, c)->rank;
	for (int d = batched ? 1 : 0; d < rank; d++) {
		Expr *e = c < 0 ? lw_mdim(m, &mt, d) : lw_dimx(m, c, d);
		if (!ex_isint(e, NULL))
			return lw_need_static(m, "a run-time size other than the batch (dim 0)");
	}
	return 0;
}

/* The output size of window mode `mode` (lower.h) for an input of size in:
 * the least and the greatest in lo, hi (lo < 1: none); -1 when a step does
 * not fit in 64 bits. Floor and ceil follow torch's
 * pooling_output_shape_pad_lr (ATen/native/Pool.h), which rounds the
 * quotient toward minus infinity after adding s - 1 for ceil: a window
 * wider than the padded input still gives one output in ceil mode when
 * it overhangs by less than a stride, the first window always starting
 * inside the input. */
static int win_size(int mode, int64_t in, int64_t k, int64_t s, int64_t p, int64_t q, int64_t d, int64_t *lo,
                    int64_t *hi)
{
	int64_t span, twop, t;
	if (ck_mul(d, k - 1, &span) || ck_add(span, 1, &span) || ck_add(p, q, &twop))
		return -1;
	if (mode == WIN_TRANS) {
		if (ck_mul(in - 1, s, &t) || ck_add(t, span - twop, &t) || ck_add(t, MAX(s, d) - 1, hi))
			return -1;
		*lo = t;
		return 0;
	}
	if (ck_add(in, twop, &t) || ck_add(t, -span, &t) || (mode == WIN_CEIL && ck_add(t, s - 1, &t)))
		return -1;
	if (t < 0) {
		*lo = *hi = 0;   /* the window is wider than the padded input */
		return 0;
	}
	*lo = t / s + 1;
	if (mode == WIN_CEIL && (*lo - 1) * s >= in + p)
		--*lo;
	*hi = *lo;
	return 0;
}

/* Window w of input x and output out, checked as the kernels take it:
 * kernel, stride and dilation >= 1, padding >= 0, and each output size
 * the one win_size gives. */
int lw_check_window(Imp *m, const Window *w, int x, int out)
{
	for (int j = 0; j < w->n; j++) {
		int64_t k = w->k[j], s = w->s[j], p = w->p[j], q = w->q ? w->q[j] : p, d = w->d[j];
		int dim = w->first + j, shown = dim - w->hidden;
		if (k < 1 || s < 1 || d < 1 || p < 0 || q < 0) {
			lw_error(m, "%s with kernel %lld, stride %lld, padding %lld, dilation %lld in dim %d (kernel, stride and "
			            "dilation must be at least 1, padding at least 0)",
			         w->op, (long long)k, (long long)s, (long long)MIN(p, q), (long long)d, shown);
			return -1;
		}
		int64_t in, got, lo, hi;
		if (!ex_isint(lw_dimx(m, x, dim), &in) || !ex_isint(lw_dimx(m, out, dim), &got))
			continue;
		if (win_size(w->mode, in, k, s, p, q, d, &lo, &hi)) {
			lw_error(m, "%s: the window of dim %d is too large (kernel %lld, stride %lld, padding %lld, dilation %lld)",
			         w->op, shown, (long long)k, (long long)s, (long long)p, (long long)d);
			return -1;
		}
		if (lo >= 1 && got >= lo && got <= hi)
			continue;
		const char *gives = lo < 1   ? w->mode == WIN_CEIL ? "no output (the window overhangs the padded input by a stride or more)"
		                                                   : "no output (the window is wider than the padded input)"
		                    : lo < hi ? arena_printf(m->a, "%lld to %lld", (long long)lo, (long long)hi)
		                              : arena_printf(m->a, "%lld", (long long)lo);
		lw_error(m, "%s of size %lld in dim %d with kernel %lld, stride %lld, padding %lld, dilation %lld gives %s, not "
		            "the %lld recorded for its output",
		         w->op, (long long)in, shown, (long long)k, (long long)s, (long long)p, (long long)d, gives, (long long)got);
		return -1;
	}
	return 0;
}

/* ---- binary search (searchsorted, bucketize, repeat_interleave) ------------------ */

/* A binary-search node: boundaries bd, values (a tensor, or the scalar
 * val when vals < 0), optional sorter, into out. */
LibNode *lw_search_node(Imp *m, int bd, int vals, const Val *val, int sorter, int out, int right, Dtype cdt)
{
	LibNode *l = lw_lib(m, LIB_SEARCH);
	l->in[0] = bd, l->in[1] = vals, l->nin = 2;
	if (sorter >= 0)
		l->in[2] = sorter, l->nin = 3;
	l->out[0] = out, l->nout = 1;
	lib_set_int(m->g, l, "right", right);
	lib_set_int(m->g, l, "cdt", cdt);
	if (vals < 0 && val)
		lib_set_float(m->g, l, "value", val->k == V_FLOAT ? val->f : (double)val->i);
	return l;
}
