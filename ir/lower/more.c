/*
 * more.c - lowerings of more elementwise and shape ops: nan_to_num,
 * round.decimals, glu, lerp; linspace and logspace (LIB_LINSPACE), tril
 * and triu (LIB_TRI); fliplr, flipud and rot90 (a flip, LIB_REMAP, of the
 * input or of its transposed view); pixel_shuffle, pixel_unshuffle and the
 * channel shuffles (a copy of a permuted view, viewed in the output's
 * shape, as torch's own decompositions); diff (a slice of one view minus
 * another, n times, after the prepend/append concatenation); and the
 * run-time assertions on tensors (_assert_async: LIB_ASSERT).
 *
 * fmin/fmax, erfinv, frac and xlogy are plain unary/binary rows (elem.c).
 */
#include <float.h>
#include <math.h>
#include <string.h>

#include "lower.h"

/* The library node the last lw_elemwise call appended. */
static LibNode *last_lib(Imp *m)
{
	return m->g->root->kids[m->g->root->nkids - 1]->lib;
}

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

/* ---- elementwise -------------------------------------------------------------------------- */

/* Largest finite value of a float dtype (nan_to_num's default for +inf). */
static double dtype_max(Dtype d)
{
	switch (d) {
	case DT_F64: return DBL_MAX;
	case DT_F16: return 65504.0;
	case DT_BF16: return 3.3895313892515355e38;   /* 0x7f7f */
	default: return FLT_MAX;
	}
}

int lower_nan_to_num(Imp *m, const cJSON *node)
{
	Val *x = lw_arg(m, "self");
	if (x->k != V_TENSOR)
		return -1;
	Dtype dt = lw_c(m, x->t)->dt;
	Val nan = {.k = V_FLOAT, .f = lw_num(m, "nan", 0)};
	Val *ops[2] = {x, &nan};
	if (lw_elemwise(m, node, T_NAN_TO_NUM, 2, ops))
		return -1;
	LibNode *l = last_lib(m);
	lib_set_float(m->g, l, "p0", lw_num(m, "posinf", dtype_max(dt)));
	lib_set_float(m->g, l, "p1", lw_num(m, "neginf", -dtype_max(dt)));
	return 0;
}

int lower_round_decimals(Imp *m, const cJSON *node)
{
	Val *x = &m->args[0];
	if (lw_elemwise(m, node, T_ROUND_DEC, 1, &x))
		return -1;
	lib_set_float(m->g, last_lib(m), "p0", (double)lw_int(m, "decimals", 0));
	return 0;
}

/* glu(x, dim): the first half of dim times the sigmoid of the second. */
int lower_glu(Imp *m, const cJSON *node)
{
	int x = lw_tensor(m, "self");
	if (x < 0)
		return -1;
	Container *c = lw_c(m, x);
	int d = lw_norm_dim(m, lw_int(m, "dim", -1), c->rank);
	if (d < 0)
		return -1;
	/* the halved dim is a number (a run-time one asks for static sizes);
	 * the others keep their sizes, run-time dims included */
	int64_t n = lw_dim(m, x, d);
	if (n % 2) {
		lw_error(m, "glu: dimension %d has odd size %lld; it must halve", d, (long long)n);
		return -1;
	}
	Expr *st[MAXDIM], *sh[MAXDIM];
	for (int i = 0; i < c->rank; i++) {
		sh[i] = i == d ? ex_int(m->g, n / 2) : c->shape[i];
		st[i] = c->stride[i];
	}
	Val a = {.k = V_TENSOR, .t = lw_scratch_view_x(m, arena_printf(m->a, "%s_a", m->nodename), x, c->rank, sh, st, c->offset)};
	Val b = {.k = V_TENSOR, .t = lw_scratch_view_x(m, arena_printf(m->a, "%s_b", m->nodename), x, c->rank, sh, st,
	                                    ex_add(m->g, c->offset, ex_muli(m->g, c->stride[d], n / 2)))};
	Val *ops[2] = {&a, &b};
	return lw_elemwise(m, node, T_GLU, 2, ops);
}

/* lerp(self, end, weight), weight a tensor or a number. */
int lower_lerp(Imp *m, const cJSON *node)
{
	Val *ops[3] = {lw_arg(m, "self"), lw_arg(m, "end"), lw_arg(m, "weight")};
	return lw_elemwise(m, node, T_LERP, 3, ops);
}

/* ---- creation: linspace, logspace --------------------------------------------------------- */

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

/* ---- tril, triu ----------------------------------------------------------------------------- */

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

/* ---- fliplr, flipud, rot90 ------------------------------------------------------------------ */

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

/* ---- pixel_shuffle, pixel_unshuffle, channel_shuffle ---------------------------------------- */

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

/* ---- diff ----------------------------------------------------------------------------------- */

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

/* ---- run-time assertions -------------------------------------------------------------------- */

/* _assert_async(self[, assert_msg]): the run fails with DOCCC_ERR_ASSERT
 * and the message where the one element of self is zero (torch raises). */
int lower_assert_async(Imp *m, const cJSON *node)
{
	(void)node;
	int x = lw_tensor(m, "self");
	if (x < 0)
		return -1;
	if (sdfg_numel(m->g, x) != 1) {
		lw_error(m, "%s needs a tensor of one element (got %lld)", m->info->target, (long long)sdfg_numel(m->g, x));
		return -1;
	}
	const char *msg = m->info->nargs > 1 ? lw_arg(m, "assert_msg")->s : NULL;
	Sdfg *g = m->g;
	const char *text = arena_printf(g->arena, "run-time assertion of node '%s' failed: %s", m->nodename,
	                                msg ? msg : "Expected Tensor with single nonzero value, but got zero");
	VEC_PUSH(g->arena, g->msgs, g->nmsgs, g->capmsgs, text);
	LibNode *l = lw_lib(m, LIB_ASSERT);
	l->in[0] = x, l->nin = 1;
	l->nout = 0;
	lib_set_int(g, l, "msg", g->nmsgs - 1);
	return 0;
}
