/*
 * common.c - the building helpers every expansion uses (xp_*): loops and
 * blocks appended to a sequence, a map nest over a container's shape,
 * tasklets of one to three operands, memlets and numpy-broadcast indices,
 * locals owned by a loop, a float reduction in vector lanes, and the
 * binding of indices read from data. A helper that one family alone uses
 * stays static in that family's file.
 *
 * What they keep true for the expansions: a new loop's body is a fresh
 * N_SEQ and its variable a new SYM_LOOP symbol; a local belongs to the loop
 * that owns it (declared in that loop's body, one per iteration); an index
 * read from a tensor reaches a memlet only as a value symbol bound by a
 * T_INDEX tasklet, which keeps it within its dim or fails the run
 * (xp_bind_index), so no memlet addresses memory outside its container.
 */
#include <string.h>

#include "expand.h"

/* ---- loops, blocks, memlets ------------------------------------------------------ */

Node *xp_loop(Sdfg *g, Node *seq, NodeKind k, const char *hint, Expr *lo, Expr *hi, int64_t step, int *var)
{
	Node *l = sdfg_loop(g, k, hint, lo, hi, step);
	sdfg_append(g, seq, l);
	*var = l->var;
	return l;
}

Node *xp_block(Sdfg *g, Node *seq, const char *label)
{
	Node *b = sdfg_block(g, label);
	sdfg_append(g, seq, b);
	return b;
}

/* Maps over every dim of container c (output shape); vars[i] get the symbols.
 * Returns the innermost body sequence. */
Node *xp_nest(Sdfg *g, Node *seq, int c, int *vars)
{
	Container *k = sdfg_c(g, c);
	static const char *const names[] = {"i0", "i1", "i2", "i3", "i4", "i5", "i6", "i7"};
	for (int d = 0; d < k->rank; d++) {
		Node *l = xp_loop(g, seq, N_MAP, names[d], ex_int(g, 0), k->shape[d], 1, &vars[d]);
		seq = l->body;
	}
	return seq;
}

Expr **xp_vars(Sdfg *g, int n, const int *vars)
{
	Expr **e = arena_alloc(g->arena, sizeof(Expr *) * MAXDIM);
	for (int i = 0; i < n; i++)
		e[i] = ex_sym(g, vars[i]);
	return e;
}

/* A tasklet of one, two or three operands appended to block b; its value. */
int xp_tk1(Sdfg *g, Node *b, TCode c, Dtype dt, Operand a)
{
	return sdfg_tasklet(g, b, c, dt, 1, &a);
}

int xp_tk2(Sdfg *g, Node *b, TCode c, Dtype dt, Operand a, Operand x)
{
	Operand o[2] = {a, x};
	return sdfg_tasklet(g, b, c, dt, 2, o);
}

int xp_tk3(Sdfg *g, Node *b, TCode c, Dtype dt, Operand a, Operand x, Operand y)
{
	Operand o[3] = {a, x, y};
	return sdfg_tasklet(g, b, c, dt, 3, o);
}

/* ---- memlets, broadcasting, data-dependent indices ------------------------------- */

Memlet xp_memlet(int data, int rank, Expr *const *idx)
{
	Memlet m;
	memset(&m, 0, sizeof m);
	m.data = data;
	for (int i = 0; i < rank; i++)
		m.idx[i] = idx[i];
	return m;
}

/* Index of input container `in` for output container `out` iterated by
 * vars, with numpy broadcasting: dims align on the right and broadcast
 * (size-1 against a larger size) dims read index 0. A size-1 dim facing a
 * size-1 output dim uses the variable, so identical shapes give identity
 * indices (which map fusion looks for). */
Operand xp_bcast(Sdfg *g, int in, int out, const int *vars)
{
	Container *c = sdfg_c(g, in), *o = sdfg_c(g, out);
	int r = o->rank;
	Expr *idx[MAXDIM];
	for (int j = 0; j < c->rank; j++) {
		int64_t n;
		int d = j + (r - c->rank);
		if (d < 0 || (ex_isint(c->shape[j], &n) && n == 1 && !ex_eq(c->shape[j], o->shape[d])))
			idx[j] = ex_int(g, 0);
		else
			idx[j] = ex_sym(g, vars[d]);
	}
	return opd_mem(in, c->rank, idx);
}

/* Broadcast shape of containers ins[0..n) (right-aligned). */
int xp_bcast_shape(Sdfg *g, const int *ins, int n, Expr **sh)
{
	int rb = 0;
	for (int i = 0; i < n; i++)
		if (sdfg_c(g, ins[i])->rank > rb)
			rb = sdfg_c(g, ins[i])->rank;
	for (int d = 0; d < rb; d++)
		sh[d] = ex_int(g, 1);
	for (int i = 0; i < n; i++) {
		Container *c = sdfg_c(g, ins[i]);
		for (int q = 0; q < c->rank; q++) {
			int64_t v;
			if (!ex_isint(c->shape[q], &v) || v != 1)
				sh[rb - c->rank + q] = c->shape[q];
		}
	}
	return rb;
}

/* Memlet indices of container c broadcast against a shape of rank rb whose
 * dims are indexed by e[0..rb). */
void xp_bcast_idx(Sdfg *g, int c, int rb, Expr *const *sh, Expr *const *e, Expr **idx)
{
	Container *k = sdfg_c(g, c);
	for (int q = 0; q < k->rank; q++) {
		int d = rb - k->rank + q;
		int64_t v;
		idx[q] = ex_isint(k->shape[q], &v) && v == 1 && !ex_eq(k->shape[q], sh[d]) ? ex_int(g, 0) : e[d];
	}
}

/* Bind index operand idx, an index into a dim of size n, to a new value
 * symbol in block b: a read or write at an index held in a tensor then
 * addresses its element with the symbol, O(1) per element. The T_INDEX
 * tasklet wraps a negative index once where torch does (wrap: index.Tensor,
 * index_put) and fails the run with DOCCC_ERR_INDEX on any other index
 * outside the dim, where torch raises IndexError. */
Expr *xp_bind_index(Sdfg *g, Node *b, Operand idx, Expr *n, int wrap)
{
	Operand a[2] = {idx, opd_expr(n)};
	int t = sdfg_tasklet(g, b, T_INDEX, DT_I64, 2, a);
	b->ts[t].p[0] = wrap;
	int64_t lo, hi;
	ex_range(g, n, &lo, &hi);
	return ex_sym(g, sdfg_bind(g, b, t, "ix", 0, hi == INT64_MAX ? INT64_MAX : hi - 1));
}

/* ---- locals and reductions ------------------------------------------------------- */

/* A local (per-iteration) buffer owned by loop `owner`. */
int xp_local(Sdfg *g, const char *name, Dtype dt, int rank, const int64_t *shape, Node *owner)
{
	int id = sdfg_add_container(g, name, dt, CK_LOCAL, rank, shape);
	sdfg_c(g, id)->owner = owner->id;
	sdfg_c(g, id)->origin = "";
	return id;
}

void xp_lane_fold(Sdfg *g, Node *body, int L, Expr *hi, const char *label, int part, int tot, TCode op, double init,
                  int c, int rank, Expr *const *idx, int jd, int mx, int storeback)
{
	Expr *none[1] = {NULL};
	int lv, jb, j;
	Node *li = xp_loop(g, body, N_MAP, "l", ex_int(g, 0), ex_int(g, L), 1, &lv);
	Node *ib = xp_block(g, li->body, label);
	Expr *l1[1] = {ex_sym(g, lv)};
	Operand c0[1] = {opd_const(init)};
	sdfg_store(ib, sdfg_tasklet(g, ib, T_ASSIGN, DT_F32, 1, c0), xp_memlet(part, 1, l1), W_NONE);
	Node *tb = xp_block(g, body, label);
	sdfg_store(tb, sdfg_tasklet(g, tb, T_ASSIGN, DT_F32, 1, c0), xp_memlet(tot, 0, none), W_NONE);
	Expr *nb = ex_div(g, hi, ex_int(g, L));
	for (int tail = 0; tail < 2; tail++) {
		Node *b;
		Expr *J, *pi[1];
		if (!tail) {
			Node *lo = xp_loop(g, body, N_FOR, "jb", ex_int(g, 0), nb, 1, &jb);
			Node *ll = xp_loop(g, lo->body, N_MAP, "l", ex_int(g, 0), ex_int(g, L), 1, &lv);
			b = xp_block(g, ll->body, label);
			J = ex_add(g, ex_muli(g, ex_sym(g, jb), L), ex_sym(g, lv));
			pi[0] = ex_sym(g, lv);
		} else {
			Node *lt = xp_loop(g, body, N_FOR, "j", ex_muli(g, nb, L), hi, 1, &j);
			b = xp_block(g, lt->body, label);
			J = ex_sym(g, j);
		}
		Expr *ei[MAXDIM];
		for (int d = 0; d < rank; d++)
			ei[d] = d == jd ? J : idx[d];
		Operand ev = opd_mem(c, rank, ei);
		if (mx >= 0) {
			Operand d[2] = {ev, opd_mem(mx, 0, none)};
			int dx = sdfg_tasklet(g, b, T_SUB, DT_F32, 2, d);
			Operand e1[1] = {opd_val(dx)};
			int ex = sdfg_tasklet(g, b, T_EXP, DT_F32, 1, e1);
			if (storeback)
				sdfg_store(b, ex, xp_memlet(c, rank, ei), W_NONE);
			ev = opd_val(ex);
		}
		Memlet acc = tail ? xp_memlet(tot, 0, none) : xp_memlet(part, 1, pi);
		Operand a[2] = {tail ? opd_mem(tot, 0, none) : opd_mem(part, 1, pi), ev};
		sdfg_store(b, sdfg_tasklet(g, b, op, DT_F32, 2, a), acc, W_NONE);
	}
	int fv;
	Node *lf = xp_loop(g, body, N_FOR, "l", ex_int(g, 0), ex_int(g, L), 1, &fv);
	Node *fb = xp_block(g, lf->body, label);
	Expr *fl[1] = {ex_sym(g, fv)};
	Operand f[2] = {opd_mem(tot, 0, none), opd_mem(part, 1, fl)};
	sdfg_store(fb, sdfg_tasklet(g, fb, op, DT_F32, 2, f), xp_memlet(tot, 0, none), W_NONE);
}
