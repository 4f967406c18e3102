/*
 * expand.c - the expansion pass: library nodes become maps and tasklets.
 *
 * Each library-node block at the top level of the root sequence is replaced,
 * in place, by one top-level subtree (a sequence of loop nests) that writes
 * the node's outputs, so the invariant of ir.h holds afterwards: every
 * container is written by exactly one top-level child, each element stored
 * once (reductions accumulate into locals and store the final value), but
 * for a scatter's stores at data-dependent indices (ir/expand/shape.c).
 *
 * This file holds the driver, which dispatches through the LIB_OPS table,
 * and the loop-building helpers; the expansions live in ir/expand/, one
 * file per op family (convolution and GEMM, with their tiled micro-kernels,
 * in ir/expand/gemm.c). Every expansion addresses operands
 * through memlets on the containers as they are, views included, so strided
 * and broadcast inputs need no copies.
 */
#include <math.h>
#include <string.h>

#include "../ir.h"
#include "../expand/expand.h"

/* ---- building helpers (shared with expand_gemm.c) ------------------------------ */

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

Memlet xp_memlet(int data, int rank, Expr *const *idx)
{
	Memlet m;
	memset(&m, 0, sizeof m);
	m.data = data;
	for (int i = 0; i < rank; i++)
		m.idx[i] = idx[i];
	return m;
}

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

/* ---- the pass -------------------------------------------------------------------------------- */

typedef int (*ExpandFn)(Sdfg *g, LibNode *l, Node *seq, const char *label, const XpTile *t);

static const ExpandFn expanders[NLIBOPS] = {
#define X(e, n, f, d) expand_##f,
	LIB_OPS(X)
#undef X
};

int pass_expand(PassCtx *c)
{
	Sdfg *g = c->g;
	XpTile tile = {
		.tm = (int)pass_int(c, "tile_m"),
		.tn = (int)pass_int(c, "tile_n"),
		.pack = pass_bool(c, "pack_weights"),
		.pw_max_c = pass_int(c, "pointwise_max_channels"),
		.winograd = pass_bool(c, "winograd"),
		.vec_lanes = c->tgt->vec_bits / 32,
		/* 256 KiB of stack per row on the CPU; half a GPU thread's locals */
		.row_bytes = TARGET_IS_GPU(c->tgt) ? c->tgt->gpu_locals / 2 : 1 << 18,
	};
	int64_t mb = TARGET_IS_GPU(c->tgt) ? pass_int(c, "attention_scores_mb") : 0;
	tile.scores_bytes = mb <= 0 ? 0 : mb < ((int64_t)1 << 40) ? mb << 20 : (int64_t)1 << 60;
	if (tile.tm <= 0)
		tile.tm = c->tgt->tile_m;
	if (tile.tn <= 0)
		tile.tn = c->tgt->tile_n;
	Node *root = g->root;
	for (int i = 0; i < root->nkids; i++) {
		Node *n = root->kids[i];
		if (n->kind != N_BLOCK || !n->lib)
			continue;
		LibNode *l = n->lib;
		Node *seq = sdfg_seq(g, n->label);
		int rc = expanders[l->op](g, l, seq, n->label, &tile);
		if (rc)
			return -1;
		seq->parent = root;
		root->kids[i] = seq;
	}
	return 0;
}
