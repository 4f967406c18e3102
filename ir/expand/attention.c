/*
 * attention.c - expansion of fused scaled dot-product attention.
 *
 * out[..., h, i, :] = softmax(q[..., h, i, :] . k[..., hk, j, :] * scale
 *                             + mask[..., i, j]) @ v[..., hk, :, :]
 * for every batch index, head h and query row i (a map), with hk = h /
 * (Hq / Hk) under grouped-query attention. K is first copied transposed
 * (kT[..., e, j]), so that the scores of a row accumulate as a
 * unit-stride, vectorized map over the keys. One query row at a time: the
 * scores of the row go into a local buffer s[S] (never the full L x S
 * matrix), then scale, mask and the max; a second pass turns them into exp(s -
 * max) and their sum; a third accumulates s[j] * v[j, :] into a local row
 * o[Ev] (a vectorizable map over Ev); the store divides by the sum. A
 * boolean mask sets disallowed scores to -inf, a float mask is added;
 * is_causal keeps keys j <= i (the loop bound, so masked keys cost
 * nothing). A row whose scores are all -inf gives 0, as torch's
 * _safe_softmax does. Arithmetic in float32 (float64 for double inputs),
 * half types rounded at the store.
 *
 * GPU targets take attention_scores (below) where the scores fit a budget.
 *
 * Float32 (and float16/bfloat16, read widened to float32 and rounded at
 * the store) on a SIMD target takes a blocked form instead (attention_tiled):
 * tm query rows at a time, whose scores S[tm][S] come from the register-tile
 * micro-kernel of linalg.c's kind (acc[tm][tn] += q[i][e] * kT[e][j], each kT
 * vector reused by tm rows), a row softmax whose max and sum are kept per
 * vector lane, and P.V by the same tile (acc[tm][tn] += p[i][j] * v[j][d]),
 * scaled by 1/sum at the store.
 */
#include <math.h>

#include "expand.h"

/* Index of a key/value/mask operand c for output vars: dims align on the
 * right; size-1 dims facing larger ones read 0; the head dim (r - 3)
 * divides by the group size; the last two dims are given (0 where size 1). */
static Operand att_idx(Sdfg *g, int c, int out, const Expr *const *ov, int64_t group, Expr *row, Expr *col)
{
	Container *k = sdfg_c(g, c), *o = sdfg_c(g, out);
	int r = o->rank;
	Expr *idx[MAXDIM];
	for (int j = 0; j < k->rank; j++) {
		int d = j + (r - k->rank);
		int64_t n;
		int one = ex_isint(k->shape[j], &n) && n == 1;
		if (j == k->rank - 1)
			idx[j] = one ? ex_int(g, 0) : col; /* a size-1 dim broadcasts (mask (B,1,1,S)) */
		else if (j == k->rank - 2)
			idx[j] = one ? ex_int(g, 0) : row;
		else if (d < 0 || (ex_isint(k->shape[j], &n) && n == 1 && !ex_eq(k->shape[j], o->shape[d])))
			idx[j] = ex_int(g, 0);
		else if (d == r - 3 && group > 1)
			idx[j] = ex_div(g, (Expr *)ov[d], ex_int(g, group));
		else
			idx[j] = (Expr *)ov[d];
	}
	return opd_mem(c, k->rank, idx);
}

/* Does torch compute this half-precision attention with its CPU flash
 * kernel (rank 4, one head size for q, k and v: sdp_utils_cpp's checks),
 * not the math path (which computes in float32)? */
static int att_flash_half(Sdfg *g, const LibNode *l)
{
	Container *o = sdfg_c(g, l->out[0]), *q = sdfg_c(g, l->in[0]), *k = sdfg_c(g, l->in[1]);
	return (o->dt == DT_F16 || o->dt == DT_BF16) && o->rank == 4 && q->rank == 4 && k->rank == 4 &&
	       ex_eq(q->shape[3], k->shape[3]) && ex_eq(q->shape[3], o->shape[3]);
}

/* torch's CPU flash attention multiplies P.V in the inputs' half type: the
 * exps, summed in float32 first, are rounded to it (its qk_reduced buffer).
 * Rounds s[row][j] (s[j] when row is NULL) for j < hi in place, in body. */
static void att_round_p(Sdfg *g, Node *body, int s, Expr *row, Expr *hi, Dtype half, const char *label)
{
	int vj;
	Node *lp = xp_loop(g, body, N_FOR, "j", ex_int(g, 0), hi, 1, &vj);
	Node *b = xp_block(g, lp->body, label);
	Expr *si[2] = {row ? row : ex_sym(g, vj), ex_sym(g, vj)};
	int rank = row ? 2 : 1;
	Expr **ix = row ? si : si + 1;
	Operand a[1] = {opd_mem(s, rank, ix)};
	Operand h[1] = {opd_val(sdfg_tasklet(g, b, T_CAST, half, 1, a))};
	sdfg_store(b, sdfg_tasklet(g, b, T_CAST, DT_F32, 1, h), xp_memlet(s, rank, ix), W_NONE);
}

/* kT[..., e, j] = k[..., j, e] of dtype dt for j < n (n >= the key count;
 * the columns past it are 0), made in seq for the columns j < lim only
 * (the key loops' bound; n or less). */
static int att_kt(Sdfg *g, Node *seq, int k, Expr *n, Expr *lim, Dtype dt, const char *label)
{
	Container *kc = sdfg_c(g, k);
	int r = kc->rank;
	Expr *ksh[MAXDIM];
	for (int d = 0; d < r; d++)
		ksh[d] = kc->shape[d];
	ksh[r - 2] = kc->shape[r - 1], ksh[r - 1] = n;
	int kt = sdfg_add_container_x(g, arena_printf(g->arena, "%s_t", kc->name), dt, CK_TRANSIENT, r, ksh);
	sdfg_c(g, kt)->origin = "";
	int tv[MAXDIM];
	Node *body = seq;
	for (int d = 0; d < r; d++)
		body = xp_loop(g, body, N_MAP, "i", ex_int(g, 0), d == r - 1 ? lim : ksh[d], 1, &tv[d])->body;
	Node *tb = xp_block(g, body, label);
	Expr **ti = xp_vars(g, r, tv), *ki[MAXDIM];
	for (int d = 0; d < r; d++)
		ki[d] = ti[d];
	ki[r - 2] = ti[r - 1], ki[r - 1] = ti[r - 2];
	Operand rd[1] = {opd_guarded(k, r, ki, 0)};
	sdfg_store(tb, sdfg_tasklet(g, tb, T_ASSIGN, dt, 1, rd), xp_memlet(kt, r, ti), W_NONE);
	return kt;
}

/* The score x with the mask's element mo applied in block b: a boolean
 * mask sets disallowed scores to -inf, a float mask is added. */
static int att_mask(Sdfg *g, Node *b, int mask, Operand mo, Operand x, Dtype dt)
{
	if (sdfg_c(g, mask)->dt == DT_BOOL) {
		Operand wh[3] = {mo, x, opd_const(-INFINITY)};
		return sdfg_tasklet(g, b, T_WHERE, dt, 3, wh);
	}
	Operand ad[2] = {x, mo};
	return sdfg_tasklet(g, b, T_ADD, dt, 2, ad);
}

/* A block in body setting the row max mx to 0 where it is -inf (a row of
 * -inf scores: every exp is then 0, and the row's output 0, as torch's
 * _safe_softmax gives). */
static void att_safe_max(Sdfg *g, Node *body, int mx, Dtype dt, const char *label)
{
	Expr *none[1] = {NULL};
	Node *b = xp_block(g, body, label);
	Operand eq[2] = {opd_mem(mx, 0, none), opd_const(-INFINITY)};
	int allinf = sdfg_tasklet(g, b, T_EQ, DT_BOOL, 2, eq);
	Operand wz[3] = {opd_val(allinf), opd_const(0), opd_mem(mx, 0, none)};
	sdfg_store(b, sdfg_tasklet(g, b, T_WHERE, dt, 3, wz), xp_memlet(mx, 0, none), W_NONE);
}

/* The most keys there can be: the key count, or the bound of its run-time
 * dims (INT64_MAX: unbounded). The score rows are locals of that size. */
static int64_t att_keys_max(Sdfg *g, int k)
{
	Container *kc = sdfg_c(g, k);
	int64_t lo, hi;
	ex_range(g, kc->shape[kc->rank - 2], &lo, &hi);
	return hi;
}

/* One past the last key that the mask lets any query row attend, made in
 * seq at run time and bound to a value symbol in [0, S] (in scope in the
 * rest of seq: the key loops' bound), where the target bounds key loops
 * (XpTile.bound_keys); else the key count. Every key past it scores -inf
 * in every row, so weighs exactly 0: skipping it changes no bit of the
 * output (a row with no allowed key gives 0 either way). This is what
 * makes a decode step at position p of a static KV cache of any length
 * cost about what it costs in a cache of p + 1: the cache's mask (keys <=
 * cache_position, and a sliding window's lower bound) allows no key past
 * p. The scan reads the mask once per run, cheap next to the scores. */
static Expr *att_keys(Sdfg *g, LibNode *l, Node *seq, const char *label, const XpTile *tile)
{
	int k = l->in[1], mask = l->in[3];
	Container *kc = sdfg_c(g, k);
	Expr *Sx = kc->shape[kc->rank - 2];
	if (mask < 0 || !tile->bound_keys)
		return Sx;
	Container *mc = sdfg_c(g, mask);
	int r = mc->rank;
	int64_t n;
	if (r < 1 || (ex_isint(mc->shape[r - 1], &n) && n == 1))
		return Sx; /* a mask broadcast along the keys bounds nothing */
	int last = sdfg_add_container_x(g, arena_printf(g->arena, "%s_keys", sdfg_c(g, l->out[0])->name), DT_I64,
	                                CK_TRANSIENT, 0, NULL);
	sdfg_c(g, last)->origin = "";
	Expr *none[1] = {NULL};
	Node *ib = xp_block(g, seq, label);
	Operand z[1] = {opd_const(0)};
	sdfg_store(ib, sdfg_tasklet(g, ib, T_ASSIGN, DT_I64, 1, z), xp_memlet(last, 0, none), W_NONE);
	/* last = max over the mask of j + 1 where key j is allowed */
	int mv[MAXDIM];
	Node *body = seq;
	for (int d = 0; d < r; d++)
		body = xp_loop(g, body, N_FOR, "j", ex_int(g, 0), mc->shape[d], 1, &mv[d])->body;
	Node *b = xp_block(g, body, label);
	Expr **mi = xp_vars(g, r, mv);
	Operand mo = opd_mem(mask, r, mi), jn = opd_expr(ex_addi(g, mi[r - 1], 1)), zero = opd_const(0);
	int v;
	if (mc->dt == DT_BOOL) {
		Operand wh[3] = {mo, jn, zero};
		v = sdfg_tasklet(g, b, T_WHERE, DT_I64, 3, wh);
	} else {
		Operand eq[2] = {mo, opd_const(-INFINITY)};
		Operand wh[3] = {opd_val(sdfg_tasklet(g, b, T_EQ, DT_BOOL, 2, eq)), zero, jn};
		v = sdfg_tasklet(g, b, T_WHERE, DT_I64, 3, wh);
	}
	sdfg_store(b, v, xp_memlet(last, 0, none), W_MAX);
	/* the bound, checked into [0, S] (it is, by construction) */
	Node *bb = xp_block(g, seq, label);
	Operand ix[2] = {opd_mem(last, 0, none), opd_expr(ex_addi(g, Sx, 1))};
	int t = sdfg_tasklet(g, bb, T_INDEX, DT_I64, 2, ix);
	bb->ts[t].p[0] = 0;
	int64_t lo, hi;
	ex_range(g, Sx, &lo, &hi);
	return ex_sym(g, sdfg_bind(g, bb, t, "keys", 0, hi));
}

static int attention_rows(Sdfg *g, LibNode *l, Node *seq, const char *label, const XpTile *tile)
{
	int q = l->in[0], k = l->in[1], v = l->in[2], mask = l->in[3], out = l->out[0];
	Container *o = sdfg_c(g, out), *qc = sdfg_c(g, q), *kc = sdfg_c(g, k);
	int r = o->rank;
	int64_t S = att_keys_max(g, k), E = 0, Ev = 0, group = 1;
	Expr *Sx = kc->shape[r - 2];
	ex_isint(qc->shape[r - 1], &E);
	ex_isint(o->shape[r - 1], &Ev);
	if (r >= 3) {
		int64_t hq = 0, hk = 0;
		ex_isint(qc->shape[r - 3], &hq);
		ex_isint(kc->shape[r - 3], &hk);
		if (hk > 0 && hq != hk)
			group = hq / hk;
	}
	double scale = lib_float(l, "scale", 1);
	int causal = (int)lib_int(l, "causal", 0);
	Dtype cdt = o->dt == DT_F64 ? DT_F64 : DT_F32;
	/* kT[..., e, j] = k[..., j, e], so the score row is a unit-stride map;
	 * the key loops end at the mask's last allowed key */
	Expr *Kx = att_keys(g, l, seq, label, tile);
	int kt = att_kt(g, seq, k, Sx, Kx, cdt, label);
	Sx = Kx;
	/* maps over every output dim but the last */
	int ov[MAXDIM];
	Node *body = seq, *owner = NULL;
	for (int d = 0; d < r - 1; d++) {
		Node *lp = xp_loop(g, body, N_MAP, "i", ex_int(g, 0), o->shape[d], 1, &ov[d]);
		body = lp->body;
		owner = lp;
	}
	Expr **oe = xp_vars(g, r - 1, ov);
	Expr *I = oe[r - 2];
	int64_t sS[1] = {S > 0 ? S : 1}, sE[1] = {Ev > 0 ? Ev : 1};
	int srow = xp_local(g, "s", cdt, 1, sS, owner);
	int orow = xp_local(g, "o", cdt, 1, sE, owner);
	int mx = xp_local(g, "mx", cdt, 0, NULL, owner);
	int sm = xp_local(g, "sum", cdt, 0, NULL, owner);
	Expr *none[1] = {NULL};
	Expr *hi = causal ? ex_min(g, Sx, ex_addi(g, I, 1)) : Sx;

	Node *ib = xp_block(g, body, label);
	Operand ninf[1] = {opd_const(-INFINITY)}, zero[1] = {opd_const(0)};
	sdfg_store(ib, sdfg_tasklet(g, ib, T_ASSIGN, cdt, 1, ninf), xp_memlet(mx, 0, none), W_NONE);
	sdfg_store(ib, sdfg_tasklet(g, ib, T_ASSIGN, cdt, 1, zero), xp_memlet(sm, 0, none), W_NONE);
	int vd;
	Node *lz = xp_loop(g, body, N_MAP, "d", ex_int(g, 0), ex_int(g, Ev), 1, &vd);
	Node *zb = xp_block(g, lz->body, label);
	Expr *di[1] = {ex_sym(g, vd)};
	sdfg_store(zb, sdfg_tasklet(g, zb, T_ASSIGN, cdt, 1, zero), xp_memlet(orow, 1, di), W_NONE);

	/* pass 1: the row of scores, s[j] = sum_e q[i][e] * kT[e][j] for all j
	 * (a map over j, vectorized), then scale, mask and the max over the
	 * keys j < hi */
	int vj, ve;
	Node *lzs = xp_loop(g, body, N_MAP, "j", ex_int(g, 0), Sx, 1, &vj);
	Node *bz = xp_block(g, lzs->body, label);
	Expr *jz[1] = {ex_sym(g, vj)};
	sdfg_store(bz, sdfg_tasklet(g, bz, T_ASSIGN, cdt, 1, zero), xp_memlet(srow, 1, jz), W_NONE);
	Node *le = xp_loop(g, body, N_FOR, "e", ex_int(g, 0), ex_int(g, E), 1, &ve);
	Node *lj = xp_loop(g, le->body, N_MAP, "j", ex_int(g, 0), Sx, 1, &vj);
	Node *b1 = xp_block(g, lj->body, label);
	Expr *jd[1] = {ex_sym(g, vj)};
	Operand qk[2] = {att_idx(g, q, out, (const Expr *const *)oe, 1, I, ex_sym(g, ve)),
	                 att_idx(g, kt, out, (const Expr *const *)oe, group, ex_sym(g, ve), ex_sym(g, vj))};
	sdfg_store(b1, sdfg_tasklet(g, b1, T_MUL, cdt, 2, qk), xp_memlet(srow, 1, jd), W_SUM);
	Node *l1 = xp_loop(g, body, N_FOR, "j", ex_int(g, 0), hi, 1, &vj);
	Expr *J = ex_sym(g, vj);
	Expr *ji[1] = {J};
	Node *b2 = xp_block(g, l1->body, label);
	Operand sc[2] = {opd_mem(srow, 1, ji), opd_const(scale)};
	int sv = sdfg_tasklet(g, b2, T_MUL, cdt, 2, sc);
	if (mask >= 0)
		sv = att_mask(g, b2, mask, att_idx(g, mask, out, (const Expr *const *)oe, 1, I, J), opd_val(sv), cdt);
	sdfg_store(b2, sv, xp_memlet(srow, 1, ji), W_NONE);
	Operand mm[2] = {opd_mem(mx, 0, none), opd_val(sv)};
	sdfg_store(b2, sdfg_tasklet(g, b2, T_MAX, cdt, 2, mm), xp_memlet(mx, 0, none), W_NONE);

	/* pass 2: exp(s - max) and the sum; a row of -inf uses max 0 (all exp 0) */
	att_safe_max(g, body, mx, cdt, label);
	Node *l2 = xp_loop(g, body, N_FOR, "j", ex_int(g, 0), hi, 1, &vj);
	Expr *ji2[1] = {ex_sym(g, vj)};
	Node *b3 = xp_block(g, l2->body, label);
	Operand sd[2] = {opd_mem(srow, 1, ji2), opd_mem(mx, 0, none)};
	int dx = sdfg_tasklet(g, b3, T_SUB, cdt, 2, sd);
	Operand ex1[1] = {opd_val(dx)};
	int ev = sdfg_tasklet(g, b3, T_EXP, cdt, 1, ex1);
	sdfg_store(b3, ev, xp_memlet(srow, 1, ji2), W_NONE);
	Operand as[2] = {opd_mem(sm, 0, none), opd_val(ev)};
	sdfg_store(b3, sdfg_tasklet(g, b3, T_ADD, cdt, 2, as), xp_memlet(sm, 0, none), W_NONE);
	if (att_flash_half(g, l))
		att_round_p(g, body, srow, NULL, hi, o->dt, label);

	/* pass 3: o += s[j] * v[j, :] */
	Node *l3 = xp_loop(g, body, N_FOR, "j", ex_int(g, 0), hi, 1, &vj);
	Expr *J3 = ex_sym(g, vj);
	Expr *ji3[1] = {J3};
	Node *l3d = xp_loop(g, l3->body, N_MAP, "d", ex_int(g, 0), ex_int(g, Ev), 1, &vd);
	Node *b4 = xp_block(g, l3d->body, label);
	Expr *di4[1] = {ex_sym(g, vd)};
	Operand pv[2] = {opd_mem(srow, 1, ji3), att_idx(g, v, out, (const Expr *const *)oe, group, J3, ex_sym(g, vd))};
	sdfg_store(b4, sdfg_tasklet(g, b4, T_MUL, cdt, 2, pv), xp_memlet(orow, 1, di4), W_SUM);

	/* store o / sum (0 for a fully masked row) */
	Node *l4 = xp_loop(g, body, N_MAP, "d", ex_int(g, 0), ex_int(g, Ev), 1, &vd);
	Node *b5 = xp_block(g, l4->body, label);
	Expr *di5[1] = {ex_sym(g, vd)};
	Operand zs[2] = {opd_mem(sm, 0, none), opd_const(0)};
	int isz = sdfg_tasklet(g, b5, T_EQ, DT_BOOL, 2, zs);
	Operand od[2] = {opd_mem(orow, 1, di5), opd_mem(sm, 0, none)};
	int ov5 = sdfg_tasklet(g, b5, T_DIV, cdt, 2, od);
	Operand wh5[3] = {opd_val(isz), opd_const(0), opd_val(ov5)};
	int res = sdfg_tasklet(g, b5, T_WHERE, o->dt, 3, wh5);
	Expr *oi[MAXDIM];
	for (int d = 0; d < r - 1; d++)
		oi[d] = oe[d];
	oi[r - 1] = ex_sym(g, vd);
	sdfg_store(b5, res, xp_memlet(out, r, oi), W_NONE);
	return 0;
}

/* Tile acc[tm][tn] <- 0 in seq. */
static void att_zero(Sdfg *g, Node *seq, int acc, int tm, int tn, const char *label)
{
	int x, o;
	Node *lx = xp_loop(g, seq, N_MAP, "x", ex_int(g, 0), ex_int(g, tm), 1, &x);
	Node *lo = xp_loop(g, lx->body, N_MAP, "o", ex_int(g, 0), ex_int(g, tn), 1, &o);
	Node *b = xp_block(g, lo->body, label);
	Expr *ai[2] = {ex_sym(g, x), ex_sym(g, o)};
	Operand z[1] = {opd_const(0)};
	sdfg_store(b, sdfg_tasklet(g, b, T_ASSIGN, DT_F32, 1, z), xp_memlet(acc, 2, ai), W_NONE);
}

/* The x (unrolled) and o (vector) maps of a tile update or store. */
static Node *att_xo(Sdfg *g, Node *seq, int tm, int tn, const char *label, int *x, int *o)
{
	Node *lx = xp_loop(g, seq, N_MAP, "x", ex_int(g, 0), ex_int(g, tm), 1, x);
	Node *lo = xp_loop(g, lx->body, N_MAP, "o", ex_int(g, 0), ex_int(g, tn), 1, o);
	return xp_block(g, lo->body, label);
}

static int attention_tiled(Sdfg *g, LibNode *l, Node *seq, const char *label, const XpTile *t)
{
	int q = l->in[0], k = l->in[1], v = l->in[2], mask = l->in[3], out = l->out[0];
	Container *o = sdfg_c(g, out), *qc = sdfg_c(g, q), *kc = sdfg_c(g, k);
	int r = o->rank, L = t->vec_lanes;
	int64_t Lq = 0, E = 0, Ev = 0, group = 1, hq = 0, hk = 0;
	/* run-time query and key lengths: whole tiles of rows, then the rest
	 * one row at a time; the score rows sized for the most keys */
	int lqfix = ex_isint(o->shape[r - 2], &Lq);
	Expr *Lqx = o->shape[r - 2], *Sx = kc->shape[r - 2];
	int64_t S = att_keys_max(g, k);
	ex_isint(qc->shape[r - 1], &E);
	ex_isint(o->shape[r - 1], &Ev);
	if (r >= 3 && ex_isint(qc->shape[r - 3], &hq) && ex_isint(kc->shape[r - 3], &hk) && hk > 0 && hq != hk)
		group = hq / hk;
	double scale = lib_float(l, "scale", 1);
	int causal = (int)lib_int(l, "causal", 0);
	int tn = t->tn, tm = lqfix ? (int)MIN((int64_t)t->tm, Lq) : t->tm;
	int64_t Sp = (S + tn - 1) / tn * tn;
	Expr *NB = ex_div(g, ex_addi(g, Sx, tn - 1), ex_int(g, tn));
	Expr *none[1] = {NULL};
	/* the key loops end at the mask's last allowed key (whole blocks of
	 * tn: the block past it reads kT columns that weigh 0) */
	Expr *Kx = att_keys(g, l, seq, label, t);
	if (Kx != Sx) {
		Sx = Kx;
		NB = ex_div(g, ex_addi(g, Sx, tn - 1), ex_int(g, tn));
	}
	/* kT[..., e, j] = k[..., j, e], zero for the padding S <= j < NB * tn */
	Expr *NBall = ex_div(g, ex_addi(g, kc->shape[r - 2], tn - 1), ex_int(g, tn));
	int kt = att_kt(g, seq, k, ex_muli(g, NBall, tn), ex_muli(g, NB, tn), DT_F32, label);
	/* maps over batch and head */
	int ov[MAXDIM];
	Node *hb = seq;
	for (int d = 0; d < r - 2; d++)
		hb = xp_loop(g, hb, N_MAP, "i", ex_int(g, 0), o->shape[d], 1, &ov[d])->body;
	Expr *full = ex_muli(g, ex_div(g, Lqx, ex_int(g, tm)), tm);
	for (int part = 0; part < 2; part++) {
		int rows = part ? (lqfix ? (int)(Lq - Lq / tm * tm) : 1) : tm;
		if (rows <= 0 || (part && tm == 1))
			continue;
		int vb;
		Expr *nblk = part ? (lqfix ? ex_int(g, 1) : ex_sub(g, Lqx, full)) : ex_div(g, Lqx, ex_int(g, tm));
		Node *lb = xp_loop(g, hb, N_MAP, "ib", ex_int(g, 0), nblk, 1, &vb);
		Node *body = lb->body;
		Expr *i0 = part ? (lqfix ? full : ex_add(g, full, ex_sym(g, vb))) : ex_muli(g, ex_sym(g, vb), tm);
		Expr *oe[MAXDIM];
		for (int d = 0; d < r - 2; d++)
			oe[d] = ex_sym(g, ov[d]);
		oe[r - 2] = i0;
		int64_t ssh[2] = {rows, Sp}, fsh[1] = {rows};
		int s = xp_local(g, "s", DT_F32, 2, ssh, lb);
		int fr = xp_local(g, "f", DT_F32, 1, fsh, lb);
		/* causal: the keys this block needs at all, and each row's */
		Expr *hib = causal ? ex_min(g, Sx, ex_addi(g, i0, rows)) : Sx;
		/* scores: s[x][j] = scale * sum_e q[i0 + x][e] * kT[e][j] */
		int vn, ve, x, oo;
		Expr *nbhi = causal ? ex_div(g, ex_addi(g, hib, tn - 1), ex_int(g, tn)) : NB;
		Node *ln = xp_loop(g, body, N_MAP, "nb", ex_int(g, 0), nbhi, 1, &vn);
		int64_t ash[2] = {rows, tn};
		int acc = xp_local(g, "acc", DT_F32, 2, ash, ln);
		att_zero(g, ln->body, acc, rows, tn, label);
		Node *le = xp_loop(g, ln->body, N_FOR, "e", ex_int(g, 0), ex_int(g, E), 1, &ve);
		Node *ub = att_xo(g, le->body, rows, tn, label, &x, &oo);
		Expr *J = ex_add(g, ex_muli(g, ex_sym(g, vn), tn), ex_sym(g, oo));
		Operand qk[2] = {att_idx(g, q, out, (const Expr *const *)oe, 1, ex_add(g, i0, ex_sym(g, x)), ex_sym(g, ve)),
		                 att_idx(g, kt, out, (const Expr *const *)oe, group, ex_sym(g, ve), J)};
		Expr *ai[2] = {ex_sym(g, x), ex_sym(g, oo)};
		sdfg_store(ub, sdfg_tasklet(g, ub, T_MUL, DT_F32, 2, qk), xp_memlet(acc, 2, ai), W_SUM);
		Node *sb = att_xo(g, ln->body, rows, tn, label, &x, &oo);
		Expr *ai2[2] = {ex_sym(g, x), ex_sym(g, oo)};
		Expr *si2[2] = {ex_sym(g, x), ex_add(g, ex_muli(g, ex_sym(g, vn), tn), ex_sym(g, oo))};
		Operand sc[2] = {opd_mem(acc, 2, ai2), opd_const(scale)};
		sdfg_store(sb, sdfg_tasklet(g, sb, T_MUL, DT_F32, 2, sc), xp_memlet(s, 2, si2), W_NONE);
		/* row softmax */
		int vx;
		Node *lx = xp_loop(g, body, N_MAP, "x", ex_int(g, 0), ex_int(g, rows), 1, &vx);
		Expr *X = ex_sym(g, vx), *I = ex_add(g, i0, X);
		int64_t lsh[1] = {L};
		int pm = xp_local(g, "pm", DT_F32, 1, lsh, lx), mx = xp_local(g, "mx", DT_F32, 0, NULL, lx);
		int sm = xp_local(g, "sum", DT_F32, 0, NULL, lx);
		Expr *hi = causal ? ex_min(g, Sx, ex_addi(g, I, 1)) : Sx;
		if (mask >= 0) {
			int vj;
			Node *lm = xp_loop(g, lx->body, N_FOR, "j", ex_int(g, 0), hi, 1, &vj);
			Node *mb = xp_block(g, lm->body, label);
			Expr *si[2] = {X, ex_sym(g, vj)};
			Operand mo = att_idx(g, mask, out, (const Expr *const *)oe, 1, I, ex_sym(g, vj));
			int mv = att_mask(g, mb, mask, mo, opd_mem(s, 2, si), DT_F32);
			sdfg_store(mb, mv, xp_memlet(s, 2, si), W_NONE);
		}
		Expr *sx[2] = {X, NULL};
		xp_lane_fold(g, lx->body, L, hi, label, pm, mx, T_MAX, -INFINITY, s, 2, sx, 1, -1, 0);
		/* a row of -inf: max 0, so its exps are 0 and its output 0 */
		att_safe_max(g, lx->body, mx, DT_F32, label);
		xp_lane_fold(g, lx->body, L, hi, label, pm, sm, T_ADD, 0, s, 2, sx, 1, mx, 1);
		if (att_flash_half(g, l))
			att_round_p(g, lx->body, s, X, hi, o->dt, label);
		if (causal) {
			/* keys between this row's end and the block's weigh 0 in P.V */
			int vj;
			Node *lz = xp_loop(g, lx->body, N_FOR, "j", hi, hib, 1, &vj);
			Node *zb2 = xp_block(g, lz->body, label);
			Expr *si[2] = {X, ex_sym(g, vj)};
			Operand z0[1] = {opd_const(0)};
			sdfg_store(zb2, sdfg_tasklet(g, zb2, T_ASSIGN, DT_F32, 1, z0), xp_memlet(s, 2, si), W_NONE);
		}
		Node *fb = xp_block(g, lx->body, label);
		Operand su[1] = {opd_mem(sm, 0, none)};
		int rc = sdfg_tasklet(g, fb, T_RECIP, DT_F32, 1, su);
		Operand ez[2] = {opd_mem(sm, 0, none), opd_const(0)};
		int isz = sdfg_tasklet(g, fb, T_EQ, DT_BOOL, 2, ez);
		Operand wf[3] = {opd_val(isz), opd_const(0), opd_val(rc)};
		Expr *fi[1] = {X};
		sdfg_store(fb, sdfg_tasklet(g, fb, T_WHERE, DT_F32, 3, wf), xp_memlet(fr, 1, fi), W_NONE);
		/* out[i0 + x][d] = f[x] * sum_j s[x][j] * v[j][d], in tiles of tn columns */
		int64_t nfull = Ev / tn;
		for (int dp = 0; dp < 2; dp++) {
			int w = dp ? (int)(Ev - nfull * tn) : tn;
			if (w <= 0 || (!dp && nfull == 0))
				continue;
			int vd, vj;
			Node *ld = xp_loop(g, body, N_MAP, "db", ex_int(g, 0), ex_int(g, dp ? 1 : nfull), 1, &vd);
			Expr *d0 = dp ? ex_int(g, nfull * tn) : ex_muli(g, ex_sym(g, vd), tn);
			int64_t psh[2] = {rows, w};
			int pacc = xp_local(g, "acc", DT_F32, 2, psh, ld);
			att_zero(g, ld->body, pacc, rows, w, label);
			Node *lj = xp_loop(g, ld->body, N_FOR, "j", ex_int(g, 0), hib, 1, &vj);
			Node *pb = att_xo(g, lj->body, rows, w, label, &x, &oo);
			Expr *pi[2] = {ex_sym(g, x), ex_sym(g, vj)}, *ai3[2] = {ex_sym(g, x), ex_sym(g, oo)};
			Operand pv[2] = {opd_mem(s, 2, pi),
			                 att_idx(g, v, out, (const Expr *const *)oe, group, ex_sym(g, vj), ex_add(g, d0, ex_sym(g, oo)))};
			sdfg_store(pb, sdfg_tasklet(g, pb, T_MUL, DT_F32, 2, pv), xp_memlet(pacc, 2, ai3), W_SUM);
			Node *ob = att_xo(g, ld->body, rows, w, label, &x, &oo);
			Expr *ai4[2] = {ex_sym(g, x), ex_sym(g, oo)}, *fx[1] = {ex_sym(g, x)};
			Operand mu[2] = {opd_mem(pacc, 2, ai4), opd_mem(fr, 1, fx)};
			Expr *oi[MAXDIM];
			for (int d = 0; d < r - 2; d++)
				oi[d] = oe[d];
			oi[r - 2] = ex_add(g, i0, ex_sym(g, x));
			oi[r - 1] = ex_add(g, d0, ex_sym(g, oo));
			sdfg_store(ob, sdfg_tasklet(g, ob, T_MUL, DT_F32, 2, mu), xp_memlet(out, r, oi), W_NONE);
		}
	}
	return 0;
}

/* GPU targets: the scores through device memory, in three nests that the
 * GPU printer runs as its fast kernels:
 *
 *   p[..., i, j] = scale * sum_e q[..., i, e] * k[..., j, e] (+ mask;
 *                  -inf past i under is_causal)        a tiled contraction
 *   p[..., i, :] = softmax(p[..., i, :]), 0 for a row of -inf   one block a row
 *   out[..., i, d] = sum_j p[..., i, j] * v[..., j, d]  a tiled contraction
 *
 * (the contractions on the tensor cores under contraction_precision high
 * or medium). The L x S scores per head cost device memory (the caller
 * bounds them) but no per-thread buffer, so long key sequences stay on
 * the GPU. Sums in float32 (float64 for double inputs, whose contractions
 * the printer runs as grids). */
static int attention_scores(Sdfg *g, LibNode *l, Node *seq, const char *label)
{
	int q = l->in[0], k = l->in[1], v = l->in[2], mask = l->in[3], out = l->out[0];
	Container *o = sdfg_c(g, out), *qc = sdfg_c(g, q), *kc = sdfg_c(g, k);
	int r = o->rank;
	int64_t group = 1, hq = 0, hk = 0;
	if (r >= 3 && ex_isint(qc->shape[r - 3], &hq) && ex_isint(kc->shape[r - 3], &hk) && hk > 0 && hq != hk)
		group = hq / hk;
	double scale = lib_float(l, "scale", 1);
	int causal = (int)lib_int(l, "causal", 0);
	Dtype cdt = o->dt == DT_F64 ? DT_F64 : DT_F32;
	Expr *none[1] = {NULL}, *psh[MAXDIM];
	for (int d = 0; d < r - 1; d++)
		psh[d] = o->shape[d];
	psh[r - 1] = kc->shape[r - 2];
	int p = sdfg_add_container_x(g, arena_printf(g->arena, "%s_scores", o->name), cdt, CK_TRANSIENT, r, psh);
	sdfg_c(g, p)->origin = "";
	Operand zero[1] = {opd_const(0)}, ninf[1] = {opd_const(-INFINITY)};

	/* 1: the scores, a contraction over e */
	int pv[MAXDIM], ve;
	Node *body = seq, *owner = NULL;
	for (int d = 0; d < r; d++) {
		owner = xp_loop(g, body, N_MAP, d == r - 1 ? "j" : "i", ex_int(g, 0), psh[d], 1, &pv[d]);
		body = owner->body;
	}
	Expr **pe = xp_vars(g, r, pv), *I = pe[r - 2], *J = pe[r - 1];
	int acc = xp_local(g, "acc", cdt, 0, NULL, owner);
	Node *ib = xp_block(g, body, label);
	sdfg_store(ib, sdfg_tasklet(g, ib, T_ASSIGN, cdt, 1, zero), xp_memlet(acc, 0, none), W_NONE);
	Node *le = xp_loop(g, body, N_FOR, "e", ex_int(g, 0), qc->shape[r - 1], 1, &ve);
	Node *b1 = xp_block(g, le->body, label);
	Operand qk[2] = {att_idx(g, q, out, (const Expr *const *)pe, 1, I, ex_sym(g, ve)),
	                 att_idx(g, k, out, (const Expr *const *)pe, group, J, ex_sym(g, ve))};
	sdfg_store(b1, sdfg_tasklet(g, b1, T_MUL, cdt, 2, qk), xp_memlet(acc, 0, none), W_SUM);
	Node *eb = xp_block(g, body, label);
	Operand sc[2] = {opd_mem(acc, 0, none), opd_const(scale)};
	int sv = sdfg_tasklet(g, eb, T_MUL, cdt, 2, sc);
	if (mask >= 0)
		sv = att_mask(g, eb, mask, att_idx(g, mask, out, (const Expr *const *)pe, 1, I, J), opd_val(sv), cdt);
	if (causal) {
		Operand le2[2] = {opd_expr(J), opd_expr(I)};
		int keep = sdfg_tasklet(g, eb, T_LE, DT_I64, 2, le2); /* compares in its dtype */
		Operand wh[3] = {opd_val(keep), opd_val(sv), opd_const(-INFINITY)};
		sv = sdfg_tasklet(g, eb, T_WHERE, cdt, 3, wh);
	}
	sdfg_store(eb, sv, xp_memlet(p, r, pe), W_NONE);

	/* 2: softmax of each row of p: the max, the sum of exp(p - max), then
	 * p = exp(p - max) / sum (0 for a row of -inf, as _safe_softmax) */
	int rv[MAXDIM], vj;
	body = seq;
	for (int d = 0; d < r - 1; d++) {
		owner = xp_loop(g, body, N_MAP, "i", ex_int(g, 0), psh[d], 1, &rv[d]);
		body = owner->body;
	}
	Expr *ri[MAXDIM];
	Expr **re = xp_vars(g, r - 1, rv);
	for (int d = 0; d < r - 1; d++)
		ri[d] = re[d];
	int mx = xp_local(g, "mx", cdt, 0, NULL, owner), sm = xp_local(g, "sum", cdt, 0, NULL, owner);
	int fr = xp_local(g, "f", cdt, 0, NULL, owner);
	Node *mb = xp_block(g, body, label);
	sdfg_store(mb, sdfg_tasklet(g, mb, T_ASSIGN, cdt, 1, ninf), xp_memlet(mx, 0, none), W_NONE);
	sdfg_store(mb, sdfg_tasklet(g, mb, T_ASSIGN, cdt, 1, zero), xp_memlet(sm, 0, none), W_NONE);
	Node *l1 = xp_loop(g, body, N_FOR, "j", ex_int(g, 0), psh[r - 1], 1, &vj);
	Node *b2 = xp_block(g, l1->body, label);
	ri[r - 1] = ex_sym(g, vj);
	Operand mm[2] = {opd_mem(mx, 0, none), opd_mem(p, r, ri)};
	sdfg_store(b2, sdfg_tasklet(g, b2, T_MAX, cdt, 2, mm), xp_memlet(mx, 0, none), W_NONE);
	att_safe_max(g, body, mx, cdt, label);
	Node *l2 = xp_loop(g, body, N_FOR, "j", ex_int(g, 0), psh[r - 1], 1, &vj);
	Node *b3 = xp_block(g, l2->body, label);
	ri[r - 1] = ex_sym(g, vj);
	Operand sd[2] = {opd_mem(p, r, ri), opd_mem(mx, 0, none)};
	Operand ex1[1] = {opd_val(sdfg_tasklet(g, b3, T_SUB, cdt, 2, sd))};
	Operand as[2] = {opd_mem(sm, 0, none), opd_val(sdfg_tasklet(g, b3, T_EXP, cdt, 1, ex1))};
	sdfg_store(b3, sdfg_tasklet(g, b3, T_ADD, cdt, 2, as), xp_memlet(sm, 0, none), W_NONE);
	Node *fb = xp_block(g, body, label);
	Operand su[1] = {opd_mem(sm, 0, none)}, ez[2] = {opd_mem(sm, 0, none), opd_const(0)};
	int rc = sdfg_tasklet(g, fb, T_RECIP, cdt, 1, su), isz = sdfg_tasklet(g, fb, T_EQ, DT_BOOL, 2, ez);
	Operand wf[3] = {opd_val(isz), opd_const(0), opd_val(rc)};
	sdfg_store(fb, sdfg_tasklet(g, fb, T_WHERE, cdt, 3, wf), xp_memlet(fr, 0, none), W_NONE);
	Node *l3 = xp_loop(g, body, N_MAP, "j", ex_int(g, 0), psh[r - 1], 1, &vj);
	Node *b4 = xp_block(g, l3->body, label);
	ri[r - 1] = ex_sym(g, vj);
	Operand sd2[2] = {opd_mem(p, r, ri), opd_mem(mx, 0, none)};
	Operand ex2[1] = {opd_val(sdfg_tasklet(g, b4, T_SUB, cdt, 2, sd2))};
	Operand mf[2] = {opd_val(sdfg_tasklet(g, b4, T_EXP, cdt, 1, ex2)), opd_mem(fr, 0, none)};
	sdfg_store(b4, sdfg_tasklet(g, b4, T_MUL, cdt, 2, mf), xp_memlet(p, r, ri), W_NONE);

	/* 3: out = p . v, a contraction over j */
	int ov[MAXDIM];
	body = seq;
	for (int d = 0; d < r; d++) {
		owner = xp_loop(g, body, N_MAP, d == r - 1 ? "d" : "i", ex_int(g, 0), o->shape[d], 1, &ov[d]);
		body = owner->body;
	}
	Expr **oe = xp_vars(g, r, ov), *pi[MAXDIM];
	int acc2 = xp_local(g, "acc", cdt, 0, NULL, owner);
	Node *ib2 = xp_block(g, body, label);
	sdfg_store(ib2, sdfg_tasklet(g, ib2, T_ASSIGN, cdt, 1, zero), xp_memlet(acc2, 0, none), W_NONE);
	Node *lj = xp_loop(g, body, N_FOR, "j", ex_int(g, 0), psh[r - 1], 1, &vj);
	Node *b5 = xp_block(g, lj->body, label);
	for (int d = 0; d < r - 1; d++)
		pi[d] = oe[d];
	pi[r - 1] = ex_sym(g, vj);
	Operand pvv[2] = {opd_mem(p, r, pi), att_idx(g, v, out, (const Expr *const *)oe, group, ex_sym(g, vj), oe[r - 1])};
	sdfg_store(b5, sdfg_tasklet(g, b5, T_MUL, cdt, 2, pvv), xp_memlet(acc2, 0, none), W_SUM);
	Node *ob = xp_block(g, body, label);
	Operand ao[1] = {opd_mem(acc2, 0, none)};
	sdfg_store(ob, sdfg_tasklet(g, ob, T_ASSIGN, o->dt, 1, ao), xp_memlet(out, r, oe), W_NONE);
	return 0;
}

int expand_attention(Sdfg *g, LibNode *l, Node *seq, const char *label, const XpTile *tile)
{
	if (tile->scores_bytes > 0 && sdfg_c(g, l->out[0])->rank >= 2) {
		/* the scores' bytes: the output's with the last dim the keys' */
		Container *o = sdfg_c(g, l->out[0]), *kc = sdfg_c(g, l->in[1]);
		int64_t n = dtype_info[o->dt == DT_F64 ? DT_F64 : DT_F32].size, x, cap = tile->scores_bytes;
		int fits = ex_isint(kc->shape[kc->rank - 2], &x) && x > 0 && x <= cap / n;
		n *= fits ? x : 1;
		for (int d = 0; fits && d < o->rank - 1; d++)
			if ((fits = ex_isint(o->shape[d], &x) && x > 0 && x <= cap / n))
				n *= x;
		if (fits)
			return attention_scores(g, l, seq, label);
	}
	/* the blocked form reads float32 and widens float16/bfloat16 */
	int blocked = xp_tile_dt(sdfg_c(g, l->out[0])->dt);
	for (int i = 0; i < 3; i++)
		blocked &= xp_tile_dt(sdfg_c(g, l->in[i])->dt);
	int64_t n;
	for (int d = 0; d < sdfg_c(g, l->out[0])->rank; d++)
		blocked &= !ex_isint(sdfg_c(g, l->out[0])->shape[d], &n) || n > 0;
	/* the score rows are locals sized for the most keys: a run-time key
	 * count whose bound does not fit the stack takes the scores path */
	Container *kc = sdfg_c(g, l->in[1]);
	int64_t S = att_keys_max(g, l->in[1]), esz = dtype_info[sdfg_c(g, l->out[0])->dt == DT_F64 ? DT_F64 : DT_F32].size;
	int rows = blocked && tile->vec_lanes > 1 && tile->tm > 0 && tile->tn > 0 ? tile->tm : 1;
	if (!ex_isint(kc->shape[kc->rank - 2], &n) && S > tile->row_bytes / esz / rows - tile->tn)
		return attention_scores(g, l, seq, label);
	if (blocked && tile->vec_lanes > 1 && tile->tm > 0 && tile->tn > 0 && sdfg_c(g, l->out[0])->rank >= 2)
		return attention_tiled(g, l, seq, label, tile);
	return attention_rows(g, l, seq, label, tile);
}
