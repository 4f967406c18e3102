/*
 * linalg.c - lowerings of the linalg family: convolution, linear and the
 * matrix products, einsum, and the pairwise distances (ops_linalg.h; the
 * expansions are in ir/expand/linalg.c).
 *
 * A convolution (conv1d/2d/3d, their 'same'/'valid' padding, transposed
 * convolutions, convolution.default) is one LIB_CONV node; a 1-d one runs
 * through the 2-d node over a height of 1. Its groups, the weight's and
 * bias's shapes and its window are checked here, where the message can
 * name the node, so the expansion indexes without checks. linear, mm, bmm,
 * addmm, baddbmm and matmul are one LIB_GEMM each (alpha * A@B + beta *
 * bias) reading their operands through views: a transposed weight or a
 * 1-d operand made a matrix costs no copy. einsum follows torch's own
 * algorithm onto views, reduce, mul and gemm nodes (its section below).
 * cdist and pdist are one LIB_CDIST each. transformers' grouped_mm_fallback
 * (the experts of a mixture-of-experts layer) is one LIB_GROUPED_GEMM.
 *
 * With run-time dims a convolution takes a symbolic batch only (the
 * expansion's kernels are built for constant channels and spatial sizes);
 * a matrix product takes them anywhere its shapes can be compared as
 * expressions.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "lower.h"

/* ---- convolution ----------------------------------------------------------------- */

/* Size d of tensor a and size e of b agree where both are numbers. */
static int same_dim(Imp *m, int a, int d, int b, int e)
{
	int64_t u, v;
	return !ex_isint(lw_dimx(m, a, d), &u) || !ex_isint(lw_dimx(m, b, e), &v) || u == v;
}

/* A convolution's channels: groups dividing both channel counts, a weight
 * of [OC, C/groups, k...] ([C, OC/groups, k...] transposed), a bias of OC,
 * the output's batch the input's. */
static int check_channels(Imp *m, int x, int w, int b, int out, int64_t G, int tr)
{
	int64_t C = lw_dim(m, x, 1), OC = lw_dim(m, out, 1), W0 = lw_dim(m, w, 0), W1 = lw_dim(m, w, 1);
	if (G < 1 || C % G || OC % G) {
		lw_error(m, "convolution of %lld input channels into %lld in %lld groups (groups must divide both)",
		         (long long)C, (long long)OC, (long long)G);
		return -1;
	}
	if (tr ? W0 != C || W1 != OC / G : W0 != OC || W1 != C / G) {
		lw_error(m, "convolution weight of [%lld, %lld, ...] for %lld input channels, %lld output channels and %lld "
		            "groups (expected [%lld, %lld, ...])",
		         (long long)W0, (long long)W1, (long long)C, (long long)OC, (long long)G,
		         (long long)(tr ? C : OC), (long long)(tr ? OC / G : C / G));
		return -1;
	}
	if (b >= 0 && (lw_c(m, b)->rank != 1 || !same_dim(m, b, 0, out, 1))) {
		lw_error(m, "convolution bias of rank %d for %lld output channels (expected [%lld])", lw_c(m, b)->rank,
		         (long long)OC, (long long)OC);
		return -1;
	}
	if (!same_dim(m, x, 0, out, 0)) {
		lw_error(m, "convolution of a batch of %lld recorded as giving %lld", (long long)lw_dim(m, x, 0),
		         (long long)lw_dim(m, out, 0));
		return -1;
	}
	return 0;
}

int lower_conv(Imp *m, const cJSON *node)
{
	/* the slow_conv kernels' overloads name their input self and may have
	 * no dilation (1); they have no groups (1) */
	int x = lw_tensor(m, lw_has_arg(m, "input") ? "input" : "self"), w = lw_tensor(m, "weight"), b = lw_tensor(m, "bias");
	if (x < 0 || w < 0)
		return -1;
	int transposed = m->info->param == 2 || (m->info->param == 1 && lw_int(m, "transposed", 0));
	int nd = lw_c(m, x)->rank - 2;
	if (nd < 1 || nd > 3 || lw_c(m, w)->rank != nd + 2) {
		lw_error(m, "convolution of a rank-%d input is not supported (batched 1-d, 2-d or 3-d inputs only)", lw_c(m, x)->rank);
		return -1;
	}
	if (m->ndyn && (lw_batch_only(m, node, x, 1) || lw_batch_only(m, node, w, 0) || lw_batch_only(m, node, -1, 1)))
		return -1;
	Val one1 = {.k = V_INTS}, *st = lw_arg(m, "stride"), *pd = lw_arg(m, "padding");
	Val *dl = lw_has_arg(m, "dilation") ? lw_arg(m, "dilation") : &one1;
	int64_t s[3], p[3], q[3], d[3], tot;
	for (int i = 0; i < nd; i++) {
		s[i] = st->n > i ? st->is[i] : st->n ? st->is[0] : 1;
		d[i] = dl->n > i ? dl->is[i] : dl->n ? dl->is[0] : 1;
		if (pd->k == V_STR) {
			/* 'same': total d*(k-1), the odd one on the right (the output
			 * size bounds the right side; reads past it are padding) */
			if (!strcmp(pd->s, "same")) {
				if (d[i] < 1 || ck_mul(d[i], lw_dim(m, w, 2 + i) - 1, &tot)) {
					lw_error(m, "convolution with padding 'same' and dilation %lld", (long long)d[i]);
					return -1;
				}
				p[i] = tot / 2;
			} else if (!strcmp(pd->s, "valid"))
				p[i] = tot = 0;
			else {
				lw_error(m, "convolution padding '%s' (expected 'same' or 'valid')", pd->s);
				return -1;
			}
			q[i] = tot - p[i];
		} else
			q[i] = p[i] = pd->n > i ? pd->is[i] : pd->n ? pd->is[0] : 0;
	}
	int out, one = nd == 1 && !transposed;
	if (one) {
		/* as 2-d over a height of 1, for the 2-d kernels */
		x = lw_unsqueeze_h(m, x);
		w = lw_unsqueeze_h(m, w);
		out = lw_squeezed_out(m, node);
		s[1] = s[0], p[1] = p[0], q[1] = q[0], d[1] = d[0];
		s[0] = 1, p[0] = q[0] = 0, d[0] = 1;
		nd = 2;
	} else
		out = lw_new_out(m, node, 0);
	if (out < 0)
		return -1;
	int64_t k[3], G = lw_has_arg(m, "groups") ? lw_int(m, "groups", 1) : 1;
	for (int i = 0; i < nd; i++)
		k[i] = lw_dim(m, w, 2 + i);
	if (check_channels(m, x, w, b, out, G, transposed) ||
	    lw_check_window(m, &(Window){"convolution", 2, nd, one, transposed ? WIN_TRANS : WIN_FLOOR, k, s, p, q, d}, x, out))
		return -1;
	LibNode *l = lw_lib(m, LIB_CONV);
	l->in[0] = x;
	l->in[1] = w;
	l->in[2] = b;
	l->nin = 3;
	l->out[0] = out;
	l->nout = 1;
	lib_set_ints(m->g, l, "stride", s, nd);
	lib_set_ints(m->g, l, "padding", p, nd);
	lib_set_ints(m->g, l, "dilation", d, nd);
	lib_set_int(m->g, l, "groups", G);
	lib_set_int(m->g, l, "transposed", transposed);
	return 0;
}

/* ---- matrix products: linear, mm, bmm, addmm, baddbmm, matmul -------------------- */

/* Rank-2+ operand for a matrix product: 1-d vectors become [1,K] or [K,1]. */
static int mat_operand(Imp *m, int c, int isleft)
{
	Container *s = lw_c(m, c);
	if (s->rank >= 2)
		return c;
	Expr *sh[2], *st[2];
	if (isleft) {
		sh[0] = ex_int(m->g, 1), sh[1] = s->shape[0];
		st[0] = ex_int(m->g, 0), st[1] = s->stride[0];
	} else {
		sh[0] = s->shape[0], sh[1] = ex_int(m->g, 1);
		st[0] = s->stride[0], st[1] = ex_int(m->g, 0);
	}
	int id = sdfg_add_view(m->g, arena_printf(m->a, "%s_mat", s->name), c, 2, sh, st, s->offset);
	lw_c(m, id)->origin = "";
	return id;
}

/* The shapes of a matrix product against the IR's GEMM node: operands of
 * rank 2 or more (after mat_operand) that agree in K, and an output of
 * rank 2 or more of [batch..., M, N] where each operand's batch dims
 * broadcast. The expansion indexes by these without further checks. Sizes
 * are compared as expressions, so run-time dims must match exactly; a
 * batch dim that may or may not be 1 at run time needs static sizes (1). */
static int gemm_shapes(Imp *m, int a, int b, int rank, Expr *const *out, const char *on)
{
	int ra = lw_c(m, a)->rank, rb = lw_c(m, b)->rank;
	int ok = ra >= 2 && rb >= 2 && rank >= 2 && ra <= rank && rb <= rank && ex_eq(lw_dimx(m, a, ra - 1), lw_dimx(m, b, rb - 2)) &&
	         ex_eq(lw_dimx(m, a, ra - 2), out[rank - 2]) && ex_eq(lw_dimx(m, b, rb - 1), out[rank - 1]);
	for (int i = 3; ok && i <= rank; i++) {
		Expr *da = ra - i >= 0 ? lw_dimx(m, a, ra - i) : ex_int(m->g, 1), *db = rb - i >= 0 ? lw_dimx(m, b, rb - i) : ex_int(m->g, 1);
		int oa = lw_is_one(m, da), ob = lw_is_one(m, db);
		if ((oa < 0 && !ex_eq(da, out[rank - i])) || (ob < 0 && !ex_eq(db, out[rank - i])))
			return 1;
		ok = (oa == 1 || ex_eq(da, out[rank - i])) && (ob == 1 || ex_eq(db, out[rank - i]));
	}
	if (!ok)
		lw_error(m, "matrix product of operands of rank %d and %d cannot give '%s' of rank %d with the shape recorded for it",
		         ra, rb, on, rank);
	return ok ? 0 : -1;
}

/* GEMM whose result has the output's shape with the 1-d dims restored. */
static int gemm(Imp *m, const cJSON *node, int a, int b, int bias, double alpha, double beta)
{
	const char *on = lw_out_name(node, 0);
	Meta mt;
	if (!on || lw_meta(m, on, &mt) || lw_check_dtype(m, &mt, on))
		return -1;
	int ra = lw_c(m, a)->rank, rb = lw_c(m, b)->rank;
	if (ra < 1 || rb < 1) {
		lw_error(m, "matrix product of operands of rank %d and %d (at least 1 each)", ra, rb);
		return -1;
	}
	a = mat_operand(m, a, 1);
	b = mat_operand(m, b, 0);
	/* the product's shape: the output's, with the 1-d operands' dims as 1 */
	int r = MAX(lw_c(m, a)->rank, lw_c(m, b)->rank), k = 0;
	Expr *full[MAXDIM + 2];
	for (int i = 0; i < r - 2 && i < mt.rank; i++)
		full[k++] = lw_mdim(m, &mt, i);
	full[k++] = ra == 1 ? ex_int(m->g, 1) : lw_dimx(m, a, lw_c(m, a)->rank - 2);
	full[k++] = rb == 1 ? ex_int(m->g, 1) : lw_dimx(m, b, lw_c(m, b)->rank - 1);
	int want = (ra >= 2) + (rb >= 2) + (r - 2);   /* rank torch gives the result */
	int same = mt.rank == want;
	for (int i = 0; same && ra >= 2 && rb >= 2 && i < k; i++)
		same = ex_eq(full[i], lw_mdim(m, &mt, i));
	int sh = same ? gemm_shapes(m, a, b, k, full, on) : -1;
	if (sh > 0)
		return lw_need_static(m, "a batch dim of the product may or may not broadcast at run time");
	if (sh) {
		if (!m->failed)
			lw_error(m, "matrix product cannot give '%s' of rank %d with the shape recorded for it", on, mt.rank);
		return -1;
	}
	int out;
	if (ra >= 2 && rb >= 2) {
		out = lw_new_out(m, node, 0);
	} else {
		/* Compute into [.., M, N] with the missing dim as 1, then view. */
		int id = sdfg_add_container_x(m->g, arena_printf(m->a, "%s_mm", on), (Dtype)mt.dt, CK_TRANSIENT, r, full);
		lw_c(m, id)->origin = "";
		LibNode *l = lw_lib(m, LIB_GEMM);
		l->in[0] = a, l->in[1] = b, l->in[2] = bias, l->nin = 3;
		l->out[0] = id, l->nout = 1;
		lib_set_float(m->g, l, "alpha", alpha);
		lib_set_float(m->g, l, "beta", beta);
		Expr *shx[MAXDIM];
		for (int i = 0; i < mt.rank; i++)
			shx[i] = lw_mdim(m, &mt, i);
		return lw_view_whole_x(m, on, id, mt.rank, shx);
	}
	if (out < 0)
		return -1;
	LibNode *l = lw_lib(m, LIB_GEMM);
	l->in[0] = a, l->in[1] = b, l->in[2] = bias, l->nin = 3;
	l->out[0] = out, l->nout = 1;
	lib_set_float(m->g, l, "alpha", alpha);
	lib_set_float(m->g, l, "beta", beta);
	return 0;
}

int lower_gemm(Imp *m, const cJSON *node)
{
	if (m->info->param == 1 || m->info->param == 3) {
		int bias = lw_tensor(m, "self");
		int a = lw_tensor(m, m->info->param == 1 ? "mat1" : "batch1"), b = lw_tensor(m, m->info->param == 1 ? "mat2" : "batch2");
		if (a < 0 || b < 0 || bias < 0)
			return -1;
		return gemm(m, node, a, b, bias, lw_num(m, "alpha", 1), lw_num(m, "beta", 1));
	}
	int a = lw_tensor(m, "self"), b = m->info->param == 2 ? lw_tensor(m, "other") : lw_tensor(m, "mat2");
	if (a < 0 || b < 0)
		return -1;
	return gemm(m, node, a, b, -1, 1, 0);
}

/* addmv(self, mat, vec): beta*self + alpha*(mat @ vec), the vector a
 * column and self a column broadcast to it, into an [n, 1] product viewed
 * as the [n] output. */
int lower_addmv(Imp *m, const cJSON *node)
{
	int bias = lw_tensor(m, "self"), a = lw_tensor(m, "mat"), v = lw_tensor(m, "vec");
	const char *on = lw_out_name(node, 0);
	Meta mt;
	if (bias < 0 || a < 0 || v < 0 || !on || lw_meta(m, on, &mt))
		return -1;
	Container *ac = lw_c(m, a), *vc = lw_c(m, v), *bc = lw_c(m, bias);
	if (ac->rank != 2 || vc->rank != 1 || bc->rank > 1 || mt.rank != 1) {
		lw_error(m, "addmv of a rank-%d matrix, a rank-%d vector and a rank-%d self", ac->rank, vc->rank, bc->rank);
		return -1;
	}
	Expr *one = ex_int(m->g, 1), *zero = ex_int(m->g, 0);
	Expr *vsh[2] = {vc->shape[0], one}, *vst[2] = {vc->stride[0], zero};
	Expr *bsh[2] = {ac->shape[0], one}, *bst[2] = {bc->rank && lw_is_one(m, bc->shape[0]) != 1 ? bc->stride[0] : zero, zero};
	int vcol = lw_scratch_view_x(m, arena_printf(m->a, "%s_col", m->nodename), v, 2, vsh, vst, vc->offset);
	int bcol = lw_scratch_view_x(m, arena_printf(m->a, "%s_self", m->nodename), bias, 2, bsh, bst, bc->offset);
	int id = sdfg_add_container_x(m->g, arena_printf(m->a, "%s_mv", on), (Dtype)mt.dt, CK_TRANSIENT, 2, bsh);
	lw_c(m, id)->origin = "";
	LibNode *l = lw_lib(m, LIB_GEMM);
	l->in[0] = a, l->in[1] = vcol, l->in[2] = bcol, l->nin = 3;
	l->out[0] = id, l->nout = 1;
	lib_set_float(m->g, l, "alpha", lw_num(m, "alpha", 1));
	lib_set_float(m->g, l, "beta", lw_num(m, "beta", 1));
	Expr *n = lw_mdim(m, &mt, 0);
	return lw_view_whole_x(m, on, id, 1, &n);
}

/* addbmm(self, batch1, batch2): beta*self + alpha * the sum over the batch of
 * the products: the batched product, reduced over its batch dim, then
 * scaled and added as torch does (self is not read when beta is 0). */
int lower_addbmm(Imp *m, const cJSON *node)
{
	int bias = lw_tensor(m, "self"), a = lw_tensor(m, "batch1"), b = lw_tensor(m, "batch2");
	int out = bias < 0 || a < 0 || b < 0 ? -1 : lw_new_out(m, node, 0);
	if (out < 0)
		return -1;
	Container *ac = lw_c(m, a), *bc = lw_c(m, b), *oc = lw_c(m, out);
	if (ac->rank != 3 || bc->rank != 3 || oc->rank != 2) {
		lw_error(m, "addbmm of batches of rank %d and %d (3 each)", ac->rank, bc->rank);
		return -1;
	}
	double alpha = lw_num(m, "alpha", 1), beta = lw_num(m, "beta", 1);
	Expr *psh[3] = {ac->shape[0], oc->shape[0], oc->shape[1]};
	int p = lw_scratch_x(m, "bmm", oc->dt, 3, psh), s = lw_scratch_x(m, "sum", oc->dt, 2, oc->shape);
	LibNode *l = lw_lib(m, LIB_GEMM);
	l->in[0] = a, l->in[1] = b, l->in[2] = -1, l->nin = 3;
	l->out[0] = p, l->nout = 1;
	lib_set_float(m->g, l, "alpha", 1);
	lib_set_float(m->g, l, "beta", 0);
	int64_t d0 = 0;
	l = lw_lib(m, LIB_REDUCE);
	l->in[0] = p, l->nin = 1;
	l->out[0] = s, l->nout = 1;
	lib_set_int(m->g, l, "mode", RD_SUM);
	lib_set_ints(m->g, l, "dims", &d0, 1);
	lib_set_float(m->g, l, "correction", 0);
	/* out = self*beta + s*alpha (T_FMA rounds once: torch's addbmm adds
	 * alpha*sum to beta*self in two steps) */
	int sa = s;
	if (alpha != 1) {
		sa = lw_scratch_x(m, "scaled", oc->dt, 2, oc->shape);
		l = lw_lib(m, LIB_ELEMWISE);
		l->in[0] = s, l->in[1] = -1, l->nin = 2;
		l->out[0] = sa, l->nout = 1;
		lib_set_float(m->g, l, "scalar1", alpha);
		lib_set_int(m->g, l, "code", T_MUL);
	}
	l = lw_lib(m, LIB_ELEMWISE);
	if (beta == 0) {
		l->in[0] = sa, l->nin = 1;
		lib_set_int(m->g, l, "code", T_CAST);
	} else {
		int sb = bias;
		if (beta != 1) {
			sb = lw_scratch_x(m, "self_scaled", oc->dt, 2, oc->shape);
			LibNode *k = lw_lib(m, LIB_ELEMWISE);
			k->in[0] = bias, k->in[1] = -1, k->nin = 2;
			k->out[0] = sb, k->nout = 1;
			lib_set_float(m->g, k, "scalar1", beta);
			lib_set_int(m->g, k, "code", T_MUL);
			l = lw_lib(m, LIB_ELEMWISE);
		}
		l->in[0] = sb, l->in[1] = sa, l->nin = 2;
		lib_set_int(m->g, l, "code", T_ADD);
	}
	l->out[0] = out, l->nout = 1;
	return 0;
}

int lower_linear(Imp *m, const cJSON *node)
{
	int x = lw_tensor(m, "input"), w = lw_tensor(m, "weight"), b = lw_tensor(m, "bias");
	if (x < 0 || w < 0)
		return -1;
	Container *ws = lw_c(m, w);
	if (ws->rank != 2) {
		lw_error(m, "linear: weight of rank %d (expected 2)", ws->rank);
		return -1;
	}
	/* weight^T as a view: [K, N] */
	Expr *sh[2] = {ws->shape[1], ws->shape[0]}, *st[2] = {ws->stride[1], ws->stride[0]};
	int wt = sdfg_add_view(m->g, arena_printf(m->a, "%s_t", ws->name), w, 2, sh, st, ws->offset);
	lw_c(m, wt)->origin = "";
	return gemm(m, node, x, wt, b, 1, b >= 0 ? 1 : 0);
}

/* ---- einsum -------------------------------------------------------------------------
 * aten.einsum onto views, reductions (LIB_REDUCE),
 * products (LIB_ELEMWISE mul) and batched matrix products (LIB_GEMM).
 *
 * It follows PyTorch's algorithm (aten/src/ATen/native/Linear.cpp) step
 * by step, so that shapes, dtypes and rounding are torch's: the equation
 * is parsed into labels (A-Z then a-z, "..." for the ellipsis dims, spaces
 * ignored); every operand is aligned to P "permuted dims", the output dims
 * first (in output order; implicit output: the ellipsis dims, then the
 * labels seen once, sorted) and the contraction dims after them (the
 * ellipsis dims if the output has none, then the other labels, sorted). An
 * aligned operand is a strided view of its tensor: a repeated label is the
 * diagonal (the strides of its dims added), a missing label a size-1 dim.
 * The operands are then contracted pairwise, left to right (or in the
 * order of the `path` argument): a contraction dim that no later operand
 * has is summed out of the one operand that has it first (a reduce node,
 * which turns integer types into int64 as torch's sum does); the dims that
 * both operands have and no later one needs are summed by the product: a
 * gemm node when there are such dims (torch's bmm; operands of one dtype,
 * not bool), else an elementwise mul (with type promotion). One operand
 * alone is summed over its contraction dims by one reduce, or is a view.
 *
 * Where torch permutes and reshapes to call bmm, the gemm node here reads
 * the operands through views: the dims both have are batch dims, so are
 * the dims only one has (size 1, broadcast, in the other), except the two
 * runs that become the matrix rows M and columns N; the summed dims become
 * K. A run of dims merges into one matrix dim where the strides chain
 * (transposes cost nothing: the gemm expansion takes any strides); only
 * summed dims that cannot be merged in some operand make a copy of it.
 * The gemm of the last contraction writes the einsum's result directly
 * when its [batch, M, N] layout is the output's.
 *
 * Intermediate results are containers of their non-1 dims; an operand
 * (Eop) maps each of the P dims to a size and a stride of its container.
 */

#define NLABELS 52       /* A-Z, a-z */
#define ELLIPSIS NLABELS

/* An operand aligned to the permuted dims: size 1 where it has no extent. */
typedef struct {
	int c;               /* the container it addresses (any kind) */
	Dtype dt;
	int64_t sz[MAXDIM];
	Expr *st[MAXDIM];    /* strides in the units of c's root */
	Expr *off;
	int direct;          /* the einsum's output container itself */
} Eop;

typedef struct {
	Imp *m;
	const cJSON *node;
	const char *eq;
	int nops;
	unsigned char **labels;   /* per operand: label ids and ELLIPSIS */
	int *nlabels;
	int lpi[NLABELS];         /* label -> permuted dim, -1 if unused */
	int ell_num, ell_index, ell_out;
	int P, nout;
	int64_t cnt[MAXDIM];      /* torch's dim_counts: operands left with a non-1 extent */
} Ein;

static int label_id(int ch)
{
	return ch >= 'A' && ch <= 'Z' ? ch - 'A' : ch - 'a' + 26;
}

static int label_char(int s)
{
	return s < 26 ? 'A' + s : 'a' + s - 26;
}

static int is_label(int ch)
{
	return (ch >= 'A' && ch <= 'Z') || (ch >= 'a' && ch <= 'z');
}

/* ---- einsum: parsing ------------------------------------------------------------- */

/* The operands' labels (left of "->"); torch's messages. */
static int parse_lhs(Ein *e, size_t lhs)
{
	Imp *m = e->m;
	int cur = 0, ell = 0;
	for (int i = 0; i < e->nops; i++)
		e->labels[i] = arena_alloc(m->a, lhs + 1);
	for (size_t i = 0; i < lhs; i++) {
		int ch = (unsigned char)e->eq[i];
		if (ch == ' ')
			continue;
		if (ch == '.') {
			if (ell) {
				lw_error(m, "einsum '%s': found '.' for operand %d for which an ellipsis was already found", e->eq, cur);
				return -1;
			}
			if (!(i + 2 < lhs && e->eq[i + 1] == '.' && e->eq[i + 2] == '.')) {
				lw_error(m, "einsum '%s': found '.' for operand %d that is not part of any ellipsis", e->eq, cur);
				return -1;
			}
			i += 2;
			e->labels[cur][e->nlabels[cur]++] = ELLIPSIS;
			ell = 1;
		} else if (ch == ',') {
			if (++cur >= e->nops) {
				lw_error(m, "einsum '%s': fewer operands were provided (%d) than specified in the equation", e->eq,
				         e->nops);
				return -1;
			}
			ell = 0;
		} else if (is_label(ch)) {
			e->labels[cur][e->nlabels[cur]++] = (unsigned char)label_id(ch);
		} else {
			lw_error(m, "einsum '%s': invalid subscript '%c' given at index %zu in the equation string, subscripts must "
			         "be in [a-zA-Z]", e->eq, ch, i);
			return -1;
		}
	}
	if (cur != e->nops - 1) {
		lw_error(m, "einsum '%s': more operands were provided (%d) than specified in the equation (%d)", e->eq, e->nops,
		         cur + 1);
		return -1;
	}
	return 0;
}

/* Label counts, the ellipsis width, and the rank check of every operand. */
static int count_labels(Ein *e, const int *ts, int *count)
{
	Imp *m = e->m;
	e->ell_num = 0;
	for (int i = 0; i < e->nops; i++) {
		int rank = lw_c(m, ts[i])->rank, n = e->nlabels[i], ell = 0;
		for (int k = 0; k < e->nlabels[i]; k++) {
			if (e->labels[i][k] == ELLIPSIS)
				n--, ell = 1;
			else
				count[e->labels[i][k]]++;
		}
		if (ell ? n > rank : n != rank) {
			lw_error(m, "einsum '%s': the number of subscripts in the equation (%d) %s the number of dimensions (%d) "
			         "for operand %d%s", e->eq, n, ell ? "is more than" : "does not match", rank, i,
			         ell ? "" : " and no ellipsis was given");
			return -1;
		}
		if (ell && rank - n > e->ell_num)
			e->ell_num = rank - n;
	}
	return 0;
}

/* The output dims (explicit after "->", else implicit), then the
 * contraction dims: sets lpi, ell_index, nout and P. */
static int parse_rhs(Ein *e, const char *arrow, const int *count)
{
	Imp *m = e->m;
	int p = 0;
	for (int s = 0; s < NLABELS; s++)
		e->lpi[s] = -1;
	e->ell_index = 0;
	e->ell_out = 0;
	if (!arrow) {
		p = e->ell_num;
		e->ell_out = 1;
		for (int s = 0; s < NLABELS; s++)
			if (count[s] == 1)
				e->lpi[s] = p++;
	} else {
		size_t base = (size_t)(arrow - e->eq) + 2;
		const char *rhs = arrow + 2;
		size_t n = strlen(rhs);
		for (size_t i = 0; i < n; i++) {
			int ch = (unsigned char)rhs[i];
			if (ch == ' ')
				continue;
			if (ch == '.') {
				if (e->ell_out) {
					lw_error(m, "einsum '%s': found '.' for output but an ellipsis (...) was already found", e->eq);
					return -1;
				}
				if (!(i + 2 < n && rhs[i + 1] == '.' && rhs[i + 2] == '.')) {
					lw_error(m, "einsum '%s': found '.' for output that is not part of any ellipsis (...)", e->eq);
					return -1;
				}
				i += 2;
				e->ell_index = p;
				p += e->ell_num;
				e->ell_out = 1;
				continue;
			}
			if (!is_label(ch)) {
				lw_error(m, "einsum '%s': invalid subscript '%c' given at index %zu in the equation string, "
				         "subscripts must be in [a-zA-Z]", e->eq, ch, base + i);
				return -1;
			}
			int s = label_id(ch);
			if (count[s] == 0 || e->lpi[s] >= 0) {
				lw_error(m, "einsum '%s': output subscript %c %s", e->eq, ch,
				         e->lpi[s] >= 0 ? "appears more than once in the output"
				                        : "does not appear in the equation for any input operand");
				return -1;
			}
			e->lpi[s] = p++;
		}
	}
	e->nout = p;
	if (!e->ell_out) {
		e->ell_index = p;
		p += e->ell_num;
	}
	for (int s = 0; s < NLABELS; s++)
		if (count[s] > 0 && e->lpi[s] < 0)
			e->lpi[s] = p++;
	e->P = p;
	if (p > MAXDIM) {
		lw_error(m, "einsum '%s': the operands align to %d dims (distinct labels and ellipsis dims); doccc supports "
		         "at most %d", e->eq, p, MAXDIM);
		return -1;
	}
	return 0;
}

/* ---- einsum: aligning the operands ----------------------------------------------- */

/* Operand i as a view of its tensor over the permuted dims (torch's
 * permutation, diagonal and unsqueeze), with torch's size checks;
 * lsize[] and esize[] are the sizes seen so far. */
static int align(Ein *e, int i, int t, int64_t *lsize, int64_t *esize, Eop *o)
{
	Imp *m = e->m;
	Container *s = lw_c(m, t);
	int seen[MAXDIM] = {0}, dim = 0;
	memset(o, 0, sizeof *o);
	o->c = t;
	o->dt = s->dt;
	o->off = s->offset;
	for (int p = 0; p < e->P; p++)
		o->sz[p] = 1, o->st[p] = ex_int(m->g, 0);
	for (int k = 0; k < e->nlabels[i]; k++) {
		int l = e->labels[i][k];
		if (l == ELLIPSIS) {
			int nd = s->rank - (e->nlabels[i] - 1);
			for (int j = e->ell_num - nd; j < e->ell_num; j++, dim++) {
				int64_t n = lw_dim(m, t, dim);
				int p = e->ell_index + j;
				if (n != 1) {
					if (esize[j] != 1 && esize[j] != n) {
						lw_error(m, "einsum '%s': dimension %d covered by ellipsis in operand %d has size %lld which "
						         "does not broadcast with previously seen ellipsis with size %lld for the respective "
						         "dimension", e->eq, dim, i, (long long)n, (long long)esize[j]);
						return -1;
					}
					esize[j] = n;
					e->cnt[p]++;
				}
				o->sz[p] = n, o->st[p] = s->stride[dim];
				seen[p] = 1;
			}
			continue;
		}
		int p = e->lpi[l];
		int64_t n = lw_dim(m, t, dim);
		if (!seen[p]) {
			if (n != 1) {
				if (lsize[l] != 1 && lsize[l] != n) {
					lw_error(m, "einsum '%s': subscript %c has size %lld for operand %d which does not broadcast with "
					         "previously seen size %lld", e->eq, label_char(l), (long long)n, i, (long long)lsize[l]);
					return -1;
				}
				lsize[l] = n;
				e->cnt[p]++;
			}
			o->sz[p] = n, o->st[p] = s->stride[dim];
			seen[p] = 1;
		} else if (n != o->sz[p]) {
			lw_error(m, "einsum '%s': subscript %c is repeated for operand %d but the sizes don't match, %lld != %lld",
			         e->eq, label_char(l), i, (long long)n, (long long)o->sz[p]);
			return -1;
		} else {
			/* diagonal: one index walks both dims */
			o->st[p] = ex_add(m->g, o->st[p], s->stride[dim]);
		}
		dim++;
	}
	return 0;
}

/* ---- einsum: building blocks ----------------------------------------------------- */

static int is_integral(Dtype d)
{
	return !dtype_info[d].isfloat;
}

/* c10::promoteTypes for two tensors of the dtypes doccc supports. */
static Dtype promote(Dtype a, Dtype b)
{
	static const signed char irank[NDTYPES] = {[DT_I64] = 4, [DT_I32] = 3, [DT_I16] = 2, [DT_I8] = 1, [DT_U8] = 1};
	if (a == b || b == DT_BOOL)
		return a;
	if (a == DT_BOOL)
		return b;
	int fa = dtype_info[a].isfloat, fb = dtype_info[b].isfloat;
	if (fa != fb)
		return fa ? a : b;
	if (fa) {
		if ((a == DT_F16 && b == DT_BF16) || (a == DT_BF16 && b == DT_F16))
			return DT_F32;
		return dtype_info[a].size >= dtype_info[b].size ? a : b;
	}
	if (irank[a] == irank[b])   /* int8 with uint8 */
		return DT_I16;
	return irank[a] > irank[b] ? a : b;
}

/* A view of x's container: dims of sizes sz[0..r) and strides st[]. */
static int view_of(Ein *e, const Eop *x, int r, const int64_t *sz, Expr **st)
{
	Imp *m = e->m;
	Expr *sh[MAXDIM];
	for (int i = 0; i < r; i++)
		sh[i] = ex_int(m->g, sz[i]);
	int id = sdfg_add_view(m->g, arena_printf(m->a, "%s_op", m->nodename), x->c, r, sh, st, x->off);
	lw_c(m, id)->origin = "";
	return id;
}

/* A view of x over the permuted dims dims[0..n). */
static int view_dims(Ein *e, const Eop *x, const int *dims, int n)
{
	int64_t sz[MAXDIM];
	Expr *st[MAXDIM];
	for (int i = 0; i < n; i++)
		sz[i] = x->sz[dims[i]], st[i] = x->st[dims[i]];
	return view_of(e, x, n, sz, st);
}

/* A new transient of the sizes of x over dims[0..n), x re-pointed at it
 * (contiguous, in that order; every other dim of size 1). */
static int fresh(Ein *e, Eop *x, Dtype dt, const int *dims, int n, const char *tag)
{
	Imp *m = e->m;
	int64_t sh[MAXDIM];
	for (int i = 0; i < n; i++)
		sh[i] = x->sz[dims[i]];
	int c = sdfg_add_container(m->g, arena_printf(m->a, "%s_%s", m->nodename, tag), dt, CK_TRANSIENT, n, sh);
	lw_c(m, c)->origin = "";
	Container *k = lw_c(m, c);
	int64_t sz[MAXDIM];
	memcpy(sz, x->sz, sizeof sz);
	for (int p = 0; p < e->P; p++)
		x->sz[p] = 1, x->st[p] = ex_int(m->g, 0);
	for (int i = 0; i < n; i++)
		x->sz[dims[i]] = sz[dims[i]], x->st[dims[i]] = k->stride[i];
	x->c = c;
	x->dt = dt;
	x->off = ex_int(m->g, 0);
	x->direct = 0;
	return c;
}

/* The dims of x (or of a and b) with an extent, in permuted order. */
static int extent_dims(const Ein *e, const Eop *a, const Eop *b, int *dims)
{
	int n = 0;
	for (int p = 0; p < e->P; p++)
		if (a->sz[p] != 1 || (b && b->sz[p] != 1))
			dims[n++] = p;
	return n;
}

/* x summed over the dims red[] marks (torch's sum(dims, keepdim=True));
 * integer and bool types sum into int64. */
static int sum_dims(Ein *e, Eop *x, const int *red)
{
	Imp *m = e->m;
	int dims[MAXDIM], kept[MAXDIM], nk = 0;
	int64_t rd[MAXDIM];
	int n = extent_dims(e, x, NULL, dims), nr = 0;
	for (int i = 0; i < n; i++) {
		if (red[dims[i]])
			rd[nr++] = i;
		else
			kept[nk++] = dims[i];
	}
	int in = view_dims(e, x, dims, n);
	Eop r = *x;
	for (int p = 0; p < e->P; p++)
		if (red[p])
			r.sz[p] = 1;
	int out = fresh(e, &r, is_integral(x->dt) ? DT_I64 : x->dt, kept, nk, "sum");
	LibNode *l = lw_lib(m, LIB_REDUCE);
	l->in[0] = in, l->nin = 1;
	l->out[0] = out, l->nout = 1;
	lib_set_int(m->g, l, "mode", RD_SUM);
	lib_set_ints(m->g, l, "dims", rd, nr);
	lib_set_float(m->g, l, "correction", 0);
	*x = r;
	return 0;
}

/* The output's metadata, checked against what the lowering computes. */
static int out_meta(Ein *e, Dtype dt, const int64_t *sz, Meta *mt)
{
	Imp *m = e->m;
	const char *on = lw_out_name(e->node, 0);
	if (!on || lw_meta(m, on, mt) || lw_check_dtype(m, mt, on))
		return -1;
	int ok = mt->rank == e->nout && mt->dt == (int)dt;
	for (int i = 0; ok && i < e->nout; i++)
		ok = mt->shape[i] == sz[i];
	if (!ok) {
		lw_error(m, "einsum '%s': doccc computes a %s result of rank %d where the graph records %s of rank %d", e->eq,
		         dtype_info[dt].name, e->nout, mt->dt >= 0 ? dtype_info[mt->dt].name : "?", mt->rank);
		return -1;
	}
	return 0;
}

/* The einsum's output container, for a last node that writes it whole. */
static int direct_out(Ein *e, Eop *x, Dtype dt)
{
	Meta mt;
	if (out_meta(e, dt, x->sz, &mt))
		return -1;
	int out = lw_new_out(e->m, e->node, 0);
	if (out < 0)
		return -1;
	Container *k = lw_c(e->m, out);
	for (int p = 0; p < e->P; p++)
		x->st[p] = p < e->nout ? k->stride[p] : ex_int(e->m->g, 0);
	x->c = out;
	x->dt = dt;
	x->off = ex_int(e->m->g, 0);
	x->direct = 1;
	return out;
}

/* ---- einsum: products ------------------------------------------------------------ */

/* a * b, broadcast (torch's mul when no dim is summed by the product). */
static int multiply(Ein *e, Eop *a, const Eop *b, int last)
{
	Imp *m = e->m;
	int dims[MAXDIM], n;
	Eop r = *a;
	for (int p = 0; p < e->P; p++)
		r.sz[p] = a->sz[p] != 1 ? a->sz[p] : b->sz[p];
	Dtype dt = promote(a->dt, b->dt);
	if (last) {
		for (n = 0; n < e->nout; n++)
			dims[n] = n;
	} else
		n = extent_dims(e, a, b, dims);
	int ia = view_dims(e, a, dims, n), ib = view_dims(e, b, dims, n);
	int out = last ? direct_out(e, &r, dt) : fresh(e, &r, dt, dims, n, "mul");
	if (out < 0)
		return -1;
	LibNode *l = lw_lib(m, LIB_ELEMWISE);
	l->in[0] = ia, l->in[1] = ib, l->nin = 2;
	l->out[0] = out, l->nout = 1;
	lib_set_int(m->g, l, "code", T_MUL);
	*a = r;
	return 0;
}

/* Do the dims d[0..n) of x (those with an extent) chain into one dim?
 * Sets its size and stride. */
static int merge(Ein *e, const Eop *x, const int *d, int n, int64_t *size, Expr **stride)
{
	int64_t sz = 1, want = 0, v;
	Expr *st = ex_int(e->m->g, 0);
	int inner = 0, symbolic = 0;
	for (int i = n - 1; i >= 0; i--) {
		int64_t k = x->sz[d[i]];
		if (k == 1)
			continue;
		if (!inner) {
			st = x->st[d[i]];
			inner = 1;
			symbolic = !ex_isint(st, &v);
			want = symbolic ? 0 : v * k;
		} else {
			if (symbolic || !ex_isint(x->st[d[i]], &v) || v != want)
				return 0;
			want *= k;
		}
		sz *= k;
	}
	*size = sz;
	*stride = st;
	return 1;
}

static int64_t stride_of(const Eop *x, int p)
{
	int64_t v = 0;
	ex_isint(x->st[p], &v);
	return v;
}

/* The summed dims k[0..n) ordered by the strides of x, largest first. */
static void order_by(const Eop *x, int *k, int n)
{
	for (int i = 1; i < n; i++)
		for (int j = i; j > 0 && stride_of(x, k[j]) > stride_of(x, k[j - 1]); j--) {
			int t = k[j];
			k[j] = k[j - 1], k[j - 1] = t;
		}
}

/* x copied so that its summed dims k[0..n) chain: contiguous over its
 * other dims (permuted order), then those. */
static void relayout(Ein *e, Eop *x, const int *k, int n, const int *sum)
{
	int dims[MAXDIM], nd = 0;
	for (int p = 0; p < e->P; p++)
		if (x->sz[p] != 1 && !sum[p])
			dims[nd++] = p;
	for (int i = 0; i < n; i++)
		dims[nd++] = k[i];
	int v = view_dims(e, x, dims, nd);
	int c = lw_copy(e->m, v, arena_printf(e->m->a, "%s_packed", e->m->nodename));
	Container *s = lw_c(e->m, c);
	for (int p = 0; p < e->P; p++)
		x->st[p] = ex_int(e->m->g, 0);
	for (int i = 0; i < nd; i++)
		x->st[dims[i]] = s->stride[i];
	x->c = c;
	x->off = ex_int(e->m->g, 0);
}

/* The summed dims in an order both operands can merge; copies where none
 * does (a sliced or diagonal operand). */
static int sum_order(Ein *e, Eop *a, Eop *b, const int *sum, int *k)
{
	int n = 0, k2[MAXDIM];
	int64_t s;
	Expr *t;
	for (int p = 0; p < e->P; p++)
		if (sum[p])
			k[n++] = p;
	memcpy(k2, k, sizeof k2);
	order_by(a, k, n);
	order_by(b, k2, n);
	int a1 = merge(e, a, k, n, &s, &t), b1 = merge(e, b, k, n, &s, &t);
	if (a1 && b1)
		return n;
	if (merge(e, a, k2, n, &s, &t) && merge(e, b, k2, n, &s, &t)) {
		memcpy(k, k2, sizeof k2);
		return n;
	}
	if (!a1 && merge(e, b, k2, n, &s, &t))
		memcpy(k, k2, sizeof k2);
	if (!merge(e, a, k, n, &s, &t))
		relayout(e, a, k, n, sum);
	if (!merge(e, b, k, n, &s, &t))
		relayout(e, b, k, n, sum);
	return n;
}

/* The last run of dims D[..] of class cls that chain in x: their
 * positions in D, [*lo, *hi); empty if none. */
static void find_run(Ein *e, const Eop *x, const int *D, int nd, const char *cls, int want, int *lo, int *hi)
{
	int64_t s;
	Expr *t;
	*lo = *hi = 0;
	for (int i = nd - 1; i >= 0; i--)
		if (cls[D[i]] == want) {
			*hi = i + 1, *lo = i;
			break;
		}
	while (*lo > 0 && cls[D[*lo - 1]] == want && merge(e, x, D + *lo - 1, *hi - *lo + 1, &s, &t))
		(*lo)--;
}

/* The layout of one gemm: operand x gives the rows (run D[m0..m1) of the
 * dims it alone has), y the columns (D[n0..n1)), bat[] the batch dims,
 * k[] the summed dims in the order both operands merge. */
typedef struct {
	Eop *x, *y;
	int D[MAXDIM], nd;
	int m0, m1, n0, n1;
	int bat[MAXDIM], nb;
	int k[MAXDIM], nk;
} Gemm;

/* torch's bmm takes operands of one dtype, not bool. */
static int bmm_dtypes(Ein *e, const Eop *a, const Eop *b)
{
	if (a->dt == b->dt && a->dt != DT_BOOL)
		return 0;
	if (a->dt == DT_BOOL)
		lw_error(e->m, "einsum '%s': the contraction is a bmm, which torch does not implement for bool", e->eq);
	else
		lw_error(e->m, "einsum '%s': the contraction of a %s and a %s operand is a bmm, which needs one dtype "
		         "(torch: expected scalar type %s but found %s)", e->eq, dtype_info[a->dt].name, dtype_info[b->dt].name,
		         dtype_info[a->dt].name, dtype_info[b->dt].name);
	return -1;
}

/* The dims of the product (D: every dim but the summed ones and, except
 * for the output of the last product, those of size 1), the last run of
 * dims only a has and the last run only b has, the later one becoming the
 * columns (so a result whose layout is [batch, rows, cols] is the
 * output's), the other dims batch dims. */
static int gemm_layout(Ein *e, Eop *a, Eop *b, const int *sum, int last, Gemm *gm)
{
	char cls[MAXDIM]; /* 'k' summed, 'b' both, 'l' a only, 'r' b only, '1' neither */
	gm->nk = sum_order(e, a, b, sum, gm->k);
	gm->nd = 0;
	for (int p = 0; p < e->P; p++) {
		int ha = a->sz[p] != 1, hb = b->sz[p] != 1;
		cls[p] = sum[p] ? 'k' : ha && hb ? 'b' : ha ? 'l' : hb ? 'r' : '1';
		if (cls[p] != 'k' && (cls[p] != '1' || (last && p < e->nout)))
			gm->D[gm->nd++] = p;
	}
	int l0, l1, r0, r1;
	find_run(e, a, gm->D, gm->nd, cls, 'l', &l0, &l1);
	find_run(e, b, gm->D, gm->nd, cls, 'r', &r0, &r1);
	int swap = l1 > l0 && r1 > r0 && l1 > r1;
	gm->x = swap ? b : a, gm->y = swap ? a : b;
	gm->m0 = swap ? r0 : l0, gm->m1 = swap ? r1 : l1;
	gm->n0 = swap ? l0 : r0, gm->n1 = swap ? l1 : r1;
	gm->nb = 0;
	for (int i = 0; i < gm->nd; i++)
		if (!(i >= gm->m0 && i < gm->m1) && !(i >= gm->n0 && i < gm->n1))
			gm->bat[gm->nb++] = gm->D[i];
	if (gm->nb + 2 > MAXDIM) {
		lw_error(e->m, "einsum '%s': a contraction with %d batch dims; doccc's gemm takes at most %d", e->eq, gm->nb,
		         MAXDIM - 2);
		return -1;
	}
	return 0;
}

/* The gemm's operand views, x as [batch, M, K] and y as [batch, K, N]. */
static void gemm_views(Ein *e, const Gemm *gm, int *ix, int *iy, int64_t *M, int64_t *N)
{
	const Eop *x = gm->x, *y = gm->y;
	int nb = gm->nb;
	int64_t xs[MAXDIM], ys[MAXDIM], K;
	Expr *xt[MAXDIM], *yt[MAXDIM];
	for (int i = 0; i < nb; i++) {
		xs[i] = x->sz[gm->bat[i]], xt[i] = x->st[gm->bat[i]];
		ys[i] = y->sz[gm->bat[i]], yt[i] = y->st[gm->bat[i]];
	}
	merge(e, x, gm->D + gm->m0, gm->m1 - gm->m0, &xs[nb], &xt[nb]);
	merge(e, x, gm->k, gm->nk, &xs[nb + 1], &xt[nb + 1]);
	merge(e, y, gm->k, gm->nk, &K, &yt[nb]);
	merge(e, y, gm->D + gm->n0, gm->n1 - gm->n0, &ys[nb + 1], &yt[nb + 1]);
	ys[nb] = K;
	*M = xs[nb], *N = ys[nb + 1];
	*ix = view_of(e, x, nb + 2, xs, xt);
	*iy = view_of(e, y, nb + 2, ys, yt);
}

/* r re-pointed at a new [batch, M, N] transient. */
static int gemm_transient(Ein *e, const Gemm *gm, Eop *r, int64_t M, int64_t N)
{
	Imp *m = e->m;
	int64_t sh[MAXDIM];
	for (int i = 0; i < gm->nb; i++)
		sh[i] = r->sz[gm->bat[i]];
	sh[gm->nb] = M, sh[gm->nb + 1] = N;
	int out = sdfg_add_container(m->g, arena_printf(m->a, "%s_mm", m->nodename), r->dt, CK_TRANSIENT, gm->nb + 2, sh);
	Container *c = lw_c(m, out);
	c->origin = "";
	for (int p = 0; p < e->P; p++)
		r->st[p] = ex_int(m->g, 0);
	for (int i = 0; i < gm->nb; i++)
		r->st[gm->bat[i]] = c->stride[i];
	int64_t mul = N;
	for (int i = gm->m1 - 1; i >= gm->m0; i--)
		r->st[gm->D[i]] = ex_int(m->g, mul), mul *= r->sz[gm->D[i]];
	mul = 1;
	for (int i = gm->n1 - 1; i >= gm->n0; i--)
		r->st[gm->D[i]] = ex_int(m->g, mul), mul *= r->sz[gm->D[i]];
	r->c = out, r->off = ex_int(m->g, 0), r->direct = 0;
	return out;
}

/* sum over the marked dims of a * b as one gemm node (torch's bmm in
 * sumproduct_pair), the result in a. */
static int contract(Ein *e, Eop *a, Eop *b, const int *sum, int last)
{
	Gemm gm;
	if (bmm_dtypes(e, a, b) || gemm_layout(e, a, b, sum, last, &gm))
		return -1;
	int ix, iy;
	int64_t M, N;
	gemm_views(e, &gm, &ix, &iy, &M, &N);
	Eop r = *a;
	for (int p = 0; p < e->P; p++)
		r.sz[p] = sum[p] ? 1 : a->sz[p] != 1 ? a->sz[p] : b->sz[p];
	/* the output itself when its layout is [batch, M, N] */
	int whole = last && gm.nd == e->nout && gm.m1 - gm.m0 == 1 && gm.n1 - gm.n0 == 1 && gm.m1 == gm.nd - 1 &&
	            gm.n1 == gm.nd;
	int out = whole ? direct_out(e, &r, a->dt) : gemm_transient(e, &gm, &r, M, N);
	if (out < 0)
		return -1;
	LibNode *l = lw_lib(e->m, LIB_GEMM);
	l->in[0] = ix, l->in[1] = iy, l->in[2] = -1, l->nin = 3;
	l->out[0] = out, l->nout = 1;
	lib_set_float(e->m->g, l, "alpha", 1);
	lib_set_float(e->m->g, l, "beta", 0);
	*a = r;
	return 0;
}

/* ---- einsum: the contraction loop ------------------------------------------------ */

/* Contract a with b (torch's loop body): sum out the dims only one of
 * them has and no later operand needs, then the product. */
static int pair(Ein *e, Eop *a, Eop *b, int last)
{
	int sum[MAXDIM] = {0}, ra[MAXDIM] = {0}, rb[MAXDIM] = {0}, ns = 0, na = 0, nb = 0;
	for (int p = e->nout; p < e->P; p++) {
		if (a->sz[p] != 1 && b->sz[p] != 1) {
			if (--e->cnt[p] == 1)
				sum[p] = 1, ns++, e->cnt[p] = 0;
		} else if (e->cnt[p] == 1) {
			if (a->sz[p] != 1)
				ra[p] = 1, na++, e->cnt[p] = 0;
			else if (b->sz[p] != 1)
				rb[p] = 1, nb++, e->cnt[p] = 0;
		}
	}
	if ((na && sum_dims(e, a, ra)) || (nb && sum_dims(e, b, rb)))
		return -1;
	return ns ? contract(e, a, b, sum, last) : multiply(e, a, b, last);
}

/* The one operand left: summed over the contraction dims (one operand),
 * or viewed without them (they are size 1 after contractions). */
static int finish(Ein *e, Eop *r)
{
	Imp *m = e->m;
	if (r->direct)
		return 0;
	Dtype dt = r->dt;
	int all[MAXDIM];
	for (int p = 0; p < e->P; p++)
		all[p] = p;
	if (e->nops == 1 && e->P > e->nout) {
		int64_t rd[MAXDIM];
		for (int p = e->nout; p < e->P; p++)
			rd[p - e->nout] = p;
		int in = view_dims(e, r, all, e->P);
		if (is_integral(dt))
			dt = DT_I64;
		if (direct_out(e, r, dt) < 0)
			return -1;
		LibNode *l = lw_lib(m, LIB_REDUCE);
		l->in[0] = in, l->nin = 1;
		l->out[0] = r->c, l->nout = 1;
		lib_set_int(m->g, l, "mode", RD_SUM);
		lib_set_ints(m->g, l, "dims", rd, e->P - e->nout);
		lib_set_float(m->g, l, "correction", 0);
		return 0;
	}
	Meta mt;
	if (out_meta(e, dt, r->sz, &mt))
		return -1;
	lw_view(m, lw_out_name(e->node, 0), r->c, e->nout, mt.shape, r->st, r->off);
	return 0;
}

/* The next pair (torch: the first two, or the path's next two indices). */
static int next_pair(Ein *e, const Val *path, int step, int nq, int *i, int *j)
{
	*i = 0, *j = 1;
	if (path->k != V_INTS)
		return 0;
	*i = (int)path->is[2 * step], *j = (int)path->is[2 * step + 1];
	if (*j < *i) {
		int t = *i;
		*i = *j, *j = t;
	}
	if (*i == *j || *i < 0 || *j >= nq) {
		lw_error(e->m, "einsum '%s': invalid contraction (%d, %d) in path: %s", e->eq, *i, *j,
		         *i == *j ? "cannot contract an operand with itself" : "operand index is out of bounds");
		return -1;
	}
	return 0;
}

int lower_einsum(Imp *m, const cJSON *node)
{
	Val *eqv = lw_arg(m, "equation"), *tv = lw_arg(m, "tensors"), *path = lw_arg(m, "path");
	if (eqv->k != V_STR || tv->k != V_TENSORS) {
		lw_error(m, "einsum: expected an equation string and a list of tensors");
		return -1;
	}
	Ein e = {.m = m, .node = node, .eq = eqv->s, .nops = tv->n};
	if (e.nops < 1) {
		lw_error(m, "einsum '%s': must provide at least one operand", e.eq);
		return -1;
	}
	for (int i = 0; i < e.nops; i++)
		if (tv->ts[i] < 0) {
			lw_error(m, "einsum '%s': operand %d is None", e.eq, i);
			return -1;
		}
	int want = e.nops == 1 ? 1 : 2 * (e.nops - 1);
	if (path->k == V_INTS && path->n != want) {
		lw_error(m, "einsum '%s': expected contraction path given in path parameter to have size %d but got %d", e.eq,
		         want, path->n);
		return -1;
	}
	const char *arrow = strstr(e.eq, "->");
	e.labels = arena_alloc(m->a, sizeof *e.labels * (size_t)e.nops);
	e.nlabels = arena_alloc(m->a, sizeof *e.nlabels * (size_t)e.nops);
	memset(e.nlabels, 0, sizeof *e.nlabels * (size_t)e.nops);
	int count[NLABELS] = {0};
	if (parse_lhs(&e, arrow ? (size_t)(arrow - e.eq) : strlen(e.eq)) || count_labels(&e, tv->ts, count) ||
	    parse_rhs(&e, arrow, count))
		return -1;
	int64_t lsize[NLABELS], esize[MAXDIM];
	for (int s = 0; s < NLABELS; s++)
		lsize[s] = 1;
	for (int j = 0; j < MAXDIM; j++)
		esize[j] = 1;
	Eop *q = arena_alloc(m->a, sizeof *q * (size_t)e.nops);
	for (int i = 0; i < e.nops; i++)
		if (align(&e, i, tv->ts[i], lsize, esize, &q[i]))
			return -1;
	int nq = e.nops;
	for (int step = 0; nq > 1; step++) {
		int i, j;
		if (next_pair(&e, path, step, nq, &i, &j))
			return -1;
		Eop a = q[i], b = q[j];
		memmove(q + j, q + j + 1, sizeof *q * (size_t)(nq - j - 1));
		memmove(q + i, q + i + 1, sizeof *q * (size_t)(nq - 2 - i));
		nq -= 2;
		if (pair(&e, &a, &b, nq == 0))
			return -1;
		/* torch: the result goes first, or last when a path is given */
		if (path->k == V_INTS)
			q[nq++] = a;
		else {
			memmove(q + 1, q, sizeof *q * (size_t)nq);
			q[0] = a;
			nq++;
		}
	}
	return finish(&e, &q[0]);
}

/* ---- pairwise distances ---------------------------------------------------------- */

/* Pairwise distances: _cdist_forward (param 0: x1 [..., P, M], x2
 * [..., R, M], batch dims broadcast; compute_mode only picks torch's
 * algorithm) and _pdist_forward (param 1: condensed upper triangle of the
 * row distances of [N, M]). */
int lower_cdist(Imp *m, const cJSON *node)
{
	int pd = m->info->param == 1;
	int x1 = lw_tensor(m, pd ? "self" : "x1"), x2 = pd ? -1 : lw_tensor(m, "x2");
	if (x1 < 0 || (!pd && x2 < 0))
		return -1;
	int r = lw_c(m, x1)->rank;
	if (pd ? r != 2 : r < 2 || lw_c(m, x2)->rank != r) {
		lw_error(m, "%s of rank-%d inputs is not supported", pd ? "pdist" : "cdist", r);
		return -1;
	}
	double p = lw_num(m, "p", 2);
	if (p < 0) {
		lw_error(m, "%s with p = %g < 0", pd ? "pdist" : "cdist", p);
		return -1;
	}
	int out = lw_new_out(m, node, 0);
	if (out < 0)
		return -1;
	LibNode *l = lw_lib(m, LIB_CDIST);
	l->in[0] = x1, l->nin = 1;
	if (!pd)
		l->in[1] = x2, l->nin = 2;
	l->out[0] = out, l->nout = 1;
	lib_set_float(m->g, l, "p", p);
	return 0;
}

/* ---- grouped matrix product (mixture of experts) --------------------------------- */

/* transformers::grouped_mm_fallback(input [M, K], weight [E, K, N], offs
 * [E]) -> [M, N]: the rows of group e, [offs[e-1], offs[e]) (offs[-1] =
 * 0), times weight[e]; the shapes are checked as transformers' fake kernel
 * does, the offsets (data) by the expansion's kernel. */
int lower_grouped_mm(Imp *m, const cJSON *node)
{
	int x = lw_tensor(m, "input"), w = lw_tensor(m, "weight"), offs = lw_tensor(m, "offs");
	if (x < 0 || w < 0 || offs < 0)
		return -1;
	Container *xc = lw_c(m, x), *wc = lw_c(m, w), *oc = lw_c(m, offs);
	if (xc->rank != 2 || wc->rank != 3 || oc->rank != 1) {
		lw_error(m, "grouped_mm_fallback: input must be 2-d, weight 3-d and offs 1-d (got ranks %d, %d, %d)", xc->rank,
		         wc->rank, oc->rank);
		return -1;
	}
	if (lw_dim(m, offs, 0) != lw_dim(m, w, 0) || lw_dim(m, x, 1) != lw_dim(m, w, 1)) {
		lw_error(m, "grouped_mm_fallback: offs has %lld entries for %lld experts, input %lld columns for weights of %lld rows",
		         (long long)lw_dim(m, offs, 0), (long long)lw_dim(m, w, 0), (long long)lw_dim(m, x, 1),
		         (long long)lw_dim(m, w, 1));
		return -1;
	}
	if (oc->dt != DT_I32 && oc->dt != DT_I64) {
		lw_error(m, "grouped_mm_fallback: offs must be an integer tensor, got %s", dtype_info[oc->dt].name);
		return -1;
	}
	if (lw_float_tensor(m, x, "input"))
		return -1;
	if (xc->dt != wc->dt) {
		lw_error(m, "grouped_mm_fallback: input (%s) and weight (%s) must have the same dtype", dtype_info[xc->dt].name,
		         dtype_info[wc->dt].name);
		return -1;
	}
	int out = lw_new_out(m, node, 0);
	if (out < 0)
		return -1;
	LibNode *l = lw_lib(m, LIB_GROUPED_GEMM);
	l->in[0] = x, l->in[1] = w, l->in[2] = offs, l->nin = 3;
	l->out[0] = out, l->nout = 1;
	return 0;
}
