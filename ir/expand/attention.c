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

int expand_attention(Sdfg *g, LibNode *l, Node *seq, const char *label, const XpTile *tile)
{
	(void)tile;
	int q = l->in[0], k = l->in[1], v = l->in[2], mask = l->in[3], out = l->out[0];
	Container *o = sdfg_c(g, out), *qc = sdfg_c(g, q), *kc = sdfg_c(g, k);
	int r = o->rank;
	int64_t S = 0, E = 0, Ev = 0, group = 1;
	ex_isint(kc->shape[r - 2], &S);
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
	/* kT[..., e, j] = k[..., j, e], so the score row is a unit-stride map */
	Expr *ksh[MAXDIM];
	for (int d = 0; d < r; d++)
		ksh[d] = kc->shape[d];
	ksh[r - 2] = kc->shape[r - 1], ksh[r - 1] = kc->shape[r - 2];
	int kt = sdfg_add_container_x(g, arena_printf(g->arena, "%s_t", kc->name), cdt, CK_TRANSIENT, r, ksh);
	sdfg_c(g, kt)->origin = "";
	{
		int tv[MAXDIM];
		Node *tb = xp_block(g, xp_nest(g, seq, kt, tv), label);
		Expr **ti = xp_vars(g, r, tv), *ki[MAXDIM];
		for (int d = 0; d < r; d++)
			ki[d] = ti[d];
		ki[r - 2] = ti[r - 1], ki[r - 1] = ti[r - 2];
		Operand rd[1] = {opd_mem(k, r, ki)};
		sdfg_store(tb, sdfg_tasklet(g, tb, T_ASSIGN, cdt, 1, rd), xp_memlet(kt, r, ti), W_NONE);
	}
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
	Expr *hi = causal ? ex_min(g, ex_int(g, S), ex_addi(g, I, 1)) : ex_int(g, S);

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
	Node *lzs = xp_loop(g, body, N_MAP, "j", ex_int(g, 0), ex_int(g, S), 1, &vj);
	Node *bz = xp_block(g, lzs->body, label);
	Expr *jz[1] = {ex_sym(g, vj)};
	sdfg_store(bz, sdfg_tasklet(g, bz, T_ASSIGN, cdt, 1, zero), xp_memlet(srow, 1, jz), W_NONE);
	Node *le = xp_loop(g, body, N_FOR, "e", ex_int(g, 0), ex_int(g, E), 1, &ve);
	Node *lj = xp_loop(g, le->body, N_MAP, "j", ex_int(g, 0), ex_int(g, S), 1, &vj);
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
	if (mask >= 0) {
		Operand mo = att_idx(g, mask, out, (const Expr *const *)oe, 1, I, J);
		if (sdfg_c(g, mask)->dt == DT_BOOL) {
			Operand wh[3] = {mo, opd_val(sv), opd_const(-INFINITY)};
			sv = sdfg_tasklet(g, b2, T_WHERE, cdt, 3, wh);
		} else {
			Operand ad[2] = {opd_val(sv), mo};
			sv = sdfg_tasklet(g, b2, T_ADD, cdt, 2, ad);
		}
	}
	sdfg_store(b2, sv, xp_memlet(srow, 1, ji), W_NONE);
	Operand mm[2] = {opd_mem(mx, 0, none), opd_val(sv)};
	sdfg_store(b2, sdfg_tasklet(g, b2, T_MAX, cdt, 2, mm), xp_memlet(mx, 0, none), W_NONE);

	/* pass 2: exp(s - max) and the sum; a row of -inf uses max 0 (all exp 0) */
	Node *mb = xp_block(g, body, label);
	Operand eq[2] = {opd_mem(mx, 0, none), opd_const(-INFINITY)};
	int allinf = sdfg_tasklet(g, mb, T_EQ, DT_BOOL, 2, eq);
	Operand wz[3] = {opd_val(allinf), opd_const(0), opd_mem(mx, 0, none)};
	sdfg_store(mb, sdfg_tasklet(g, mb, T_WHERE, cdt, 3, wz), xp_memlet(mx, 0, none), W_NONE);
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
