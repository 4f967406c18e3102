/*
 * rnn.c - expansion of the rnn library node: one layer and one direction
 * of an LSTM, GRU or Elman RNN (tanh / ReLU) over a whole sequence.
 *
 * Inputs: x [T, B, I] ([B, T, I] with batch_first), h0 and c0 [L*D, B, *]
 * (the node's row of them is "row"), w_ih [G*H, I], w_hh [G*H, Ho], b_ih and
 * b_hh [G*H] (or absent), w_hr [Ho, H] (LSTM projections, or absent); G is
 * the number of gates in PyTorch's order (LSTM i, f, g, o; GRU r, z, n;
 * RNN 1) and Ho the size of h (H, or proj_size). Outputs: y [T, B, Ho] (the
 * layout of x), h_n [1, B, Ho], c_n [1, B, H].
 *
 * The expansion is, in one top-level subtree:
 *
 *   xg = x @ w_ih^T + b_ih            one GEMM over every time step (the
 *                                     gemm expansion: packed weights, tiles)
 *   hs = h0[row]; cs = c0[row]        the state buffers
 *   for s in [0, T) (sequential; t = s, or T-1-s in reverse):
 *     hg = hs @ w_hh^T + b_hh         the step GEMM, again the gemm expansion
 *     map b, j: gates from xg[t, b] + hg[b], cell update into cs, the new
 *               h into hs and y[t, b] (through htil and the projection GEMM
 *               hs = htil @ w_hr^T with proj_size)
 *   h_n = hs; c_n = cs
 *
 * b_hh stays in the step GEMM's epilogue rather than being folded into
 * b_ih: GRU needs its n part inside r * (W_hn h + b_hn), and the addition is
 * one per gate element either way. The gate formulas are PyTorch's CPU
 * cells (aten/src/ATen/native/RNN.cpp): c' = f*c + i*g, h' = o*tanh(c');
 * GRU h' = (h - n)*z + n.
 *
 * The state buffers hs, cs, hg (and htil) are transients that this subtree
 * alone reads and writes, once per step: the one-writer invariant holds
 * for them (one top-level child), the store-once part deliberately not,
 * which is safe because no other child touches them (map fusion and the
 * memory plan only look at containers across top-level children). y, h_n
 * and c_n are stored once per element. The time loop is an N_FOR whose
 * children are all maps and which owns no locals: the schedule keeps it
 * sequential (on OpenMP one thread runs it: threads per step cost a
 * barrier every step, which a shared machine makes slower than one
 * thread), and on GPUs it is a host loop launching the children's grids
 * every step; the gate map's inner map over H is unit-stride and
 * vectorizes, the input projection GEMM runs on threads or as a grid.
 */
#include <string.h>

#include "expand.h"

typedef struct {
	Sdfg *g;
	const char *label;
	const XpTile *t;
	Dtype dt;
	int mode, bf;
	int64_t T, B, H, Ho;
} Rnn;

/* The view w^T of a 2-d weight w: [cols, rows]. */
static int transposed(Sdfg *g, int w)
{
	Container *c = sdfg_c(g, w);
	Expr *sh[2] = {c->shape[1], c->shape[0]}, *st[2] = {c->stride[1], c->stride[0]};
	int v = sdfg_add_view(g, arena_printf(g->arena, "%s_T", c->name), w, 2, sh, st, c->offset);
	sdfg_c(g, v)->origin = "";
	return v;
}

static int transient(Sdfg *g, const char *name, Dtype dt, int rank, const int64_t *shape)
{
	int id = sdfg_add_container(g, name, dt, CK_TRANSIENT, rank, shape);
	sdfg_c(g, id)->origin = "";
	return id;
}

/* out = A @ B + bias (bias may be -1) through the gemm expansion, into seq. */
static int gemm(Rnn *r, Node *seq, int A, int B, int bias, int out)
{
	LibNode *l = arena_alloc(r->g->arena, sizeof *l);
	memset(l, 0, sizeof *l);
	l->op = LIB_GEMM;
	for (int i = 0; i < 8; i++)
		l->in[i] = -1;
	for (int i = 0; i < 4; i++)
		l->out[i] = -1;
	l->in[0] = A, l->in[1] = B, l->in[2] = bias, l->nin = 3;
	l->out[0] = out, l->nout = 1;
	lib_set_float(r->g, l, "alpha", 1);
	lib_set_float(r->g, l, "beta", bias >= 0 ? 1 : 0);
	return expand_gemm(r->g, l, seq, r->label, r->t);
}

/* The B operand of a GEMM run every step: w^T read in place when the gemm
 * expansion packs it at compile time (a float32 constant) or reads it
 * element by element anyway (float64); otherwise a row-major copy made
 * once, in seq before the loop, so the step does not copy it again. */
static int step_weight(Rnn *r, Node *seq, int w)
{
	Sdfg *g = r->g;
	int v = transposed(g, w);
	if (r->dt != DT_F32 || (r->t->pack && sdfg_const_known(g, sdfg_root_of(g, w))))
		return v;
	Container *c = sdfg_c(g, v);
	int64_t sh[2];
	ex_isint(c->shape[0], &sh[0]);
	ex_isint(c->shape[1], &sh[1]);
	int cp = transient(g, arena_printf(g->arena, "%s_rowmajor", c->name), r->dt, 2, sh);
	int vars[2];
	Node *body = xp_nest(g, seq, cp, vars);
	Node *b = xp_block(g, body, r->label);
	Expr **idx = xp_vars(g, 2, vars);
	Operand rd[1] = {opd_mem(v, 2, idx)};
	sdfg_store(b, sdfg_tasklet(g, b, T_ASSIGN, r->dt, 1, rd), xp_memlet(cp, 2, idx), W_NONE);
	return cp;
}

/* dst[.., b, j] = src[.., b, j] over [B, n]: rank-3 sides take index
 * row (a constant or the time index) first, in the layout bf says for
 * sequences (seq 1) or as [row, b, j] for states (seq 0). */
static void copy_bj(Rnn *r, Node *seq, int dst, Expr *drow, int dseq, int src, Expr *srow, int n)
{
	Sdfg *g = r->g;
	int vb, vj;
	Node *lb = xp_loop(g, seq, N_MAP, "b", ex_int(g, 0), ex_int(g, r->B), 1, &vb);
	Node *lj = xp_loop(g, lb->body, N_MAP, "j", ex_int(g, 0), ex_int(g, n), 1, &vj);
	Node *blk = xp_block(g, lj->body, r->label);
	Expr *b = ex_sym(g, vb), *j = ex_sym(g, vj);
	Expr *si[3] = {srow, b, j}, *s2[2] = {b, j};
	Operand rd[1] = {srow ? opd_mem(src, 3, si) : opd_mem(src, 2, s2)};
	int v = sdfg_tasklet(g, blk, T_ASSIGN, r->dt, 1, rd);
	if (!drow) {
		Expr *d2[2] = {b, j};
		sdfg_store(blk, v, xp_memlet(dst, 2, d2), W_NONE);
	} else {
		Expr *d3[3] = {drow, b, j};
		if (dseq && r->bf)
			d3[0] = b, d3[1] = drow;
		sdfg_store(blk, v, xp_memlet(dst, 3, d3), W_NONE);
	}
}

/* The gate pre-activation k at (time t, batch b, unit j): xg + hg. */
static int pre(Rnn *r, Node *blk, int xg, int hg, Expr *t, Expr *b, Expr *j, int k, int add_hg)
{
	Sdfg *g = r->g;
	Expr *col = ex_add(g, ex_int(g, k * r->H), j);
	Expr *xi[3] = {r->bf ? b : t, r->bf ? t : b, col}, *hi[2] = {b, col};
	Operand x = opd_mem(xg, 3, xi);
	if (!add_hg)
		return sdfg_tasklet(g, blk, T_ASSIGN, r->dt, 1, &x);
	Operand a[2] = {x, opd_mem(hg, 2, hi)};
	return sdfg_tasklet(g, blk, T_ADD, r->dt, 2, a);
}

static int un(Rnn *r, Node *blk, TCode c, int a)
{
	Operand o[1] = {opd_val(a)};
	return sdfg_tasklet(r->g, blk, c, r->dt, 1, o);
}

static int bin(Rnn *r, Node *blk, TCode c, Operand a, Operand b)
{
	Operand o[2] = {a, b};
	return sdfg_tasklet(r->g, blk, c, r->dt, 2, o);
}

/* The gate map of one step: reads xg[t], hg, the states; writes the new
 * states, and y[t] unless h goes through the projection (hout: htil). */
static void gates(Rnn *r, Node *seq, int xg, int hg, int hs, int cs, int hout, int y, Expr *t)
{
	Sdfg *g = r->g;
	int vb, vj;
	Node *lb = xp_loop(g, seq, N_MAP, "b", ex_int(g, 0), ex_int(g, r->B), 1, &vb);
	Node *lj = xp_loop(g, lb->body, N_MAP, "j", ex_int(g, 0), ex_int(g, r->H), 1, &vj);
	Node *blk = xp_block(g, lj->body, r->label);
	Expr *b = ex_sym(g, vb), *j = ex_sym(g, vj);
	Expr *bj[2] = {b, j};
	int h;
	switch (r->mode) {
	case RNN_LSTM: {
		int i = un(r, blk, T_SIGMOID, pre(r, blk, xg, hg, t, b, j, 0, 1));
		int f = un(r, blk, T_SIGMOID, pre(r, blk, xg, hg, t, b, j, 1, 1));
		int gg = un(r, blk, T_TANH, pre(r, blk, xg, hg, t, b, j, 2, 1));
		int o = un(r, blk, T_SIGMOID, pre(r, blk, xg, hg, t, b, j, 3, 1));
		int fc = bin(r, blk, T_MUL, opd_val(f), opd_mem(cs, 2, bj));
		int ig = bin(r, blk, T_MUL, opd_val(i), opd_val(gg));
		int c = bin(r, blk, T_ADD, opd_val(fc), opd_val(ig));
		sdfg_store(blk, c, xp_memlet(cs, 2, bj), W_NONE);
		h = bin(r, blk, T_MUL, opd_val(o), opd_val(un(r, blk, T_TANH, c)));
		break;
	}
	case RNN_GRU: {
		Expr *col = ex_add(g, ex_int(g, 2 * r->H), j);
		Expr *hn[2] = {b, col};
		int rg = un(r, blk, T_SIGMOID, pre(r, blk, xg, hg, t, b, j, 0, 1));
		int z = un(r, blk, T_SIGMOID, pre(r, blk, xg, hg, t, b, j, 1, 1));
		int rn = bin(r, blk, T_MUL, opd_val(rg), opd_mem(hg, 2, hn));
		int n = un(r, blk, T_TANH, bin(r, blk, T_ADD, opd_val(pre(r, blk, xg, hg, t, b, j, 2, 0)), opd_val(rn)));
		int d = bin(r, blk, T_SUB, opd_mem(hs, 2, bj), opd_val(n));
		h = bin(r, blk, T_ADD, opd_val(bin(r, blk, T_MUL, opd_val(d), opd_val(z))), opd_val(n));
		break;
	}
	default:
		h = un(r, blk, r->mode == RNN_TANH ? T_TANH : T_RELU, pre(r, blk, xg, hg, t, b, j, 0, 1));
		break;
	}
	if (hout >= 0) {
		sdfg_store(blk, h, xp_memlet(hout, 2, bj), W_NONE);
		return;
	}
	sdfg_store(blk, h, xp_memlet(hs, 2, bj), W_NONE);
	Expr *yi[3] = {r->bf ? b : t, r->bf ? t : b, j};
	sdfg_store(blk, un(r, blk, T_ASSIGN, h), xp_memlet(y, 3, yi), W_NONE);
}

/* The register tile of the step GEMMs, whose M is the batch: its rows
 * split into equal tiles of at most t->tm (16 = 6+6+4 rather than 7+7+2,
 * whose thin last tile reloads the whole weight panel for two rows), and a
 * small batch gets wider tiles, so that at least 8 vector accumulators
 * hide the FMA latency (batch 1 is a GEMV that streams w_hh: with one
 * 2-vector accumulator it would wait on every add). The panel width of a
 * packed weight follows tn, so w_hh is packed for this tile. */
static XpTile step_tile(const XpTile *t, int64_t M)
{
	XpTile s = *t;
	if (M < 1 || s.tm < 1)
		return s;
	int64_t n = (M + s.tm - 1) / s.tm;
	s.tm = (int)((M + n - 1) / n);
	while (s.vec_lanes > 0 && s.tm * (s.tn / s.vec_lanes) < 8 && s.tn < 4 * t->tn)
		s.tn *= 2;
	return s;
}

/* xg = x @ w_ih^T + b_ih over all steps: one [T*B, I] GEMM when x's first
 * two dims merge (contiguous inputs and every layer's output), else one
 * batched over x's first dim. */
static int input_gemm(Rnn *r, Node *seq, int x, int wih, int bih, int xg)
{
	Sdfg *g = r->g;
	Container *c = sdfg_c(g, x), *o = sdfg_c(g, xg);
	int64_t d0, d1, s0, s1;
	int wt = transposed(g, wih);
	if (ex_isint(c->shape[0], &d0) && ex_isint(c->shape[1], &d1) && ex_isint(c->stride[0], &s0) &&
	    ex_isint(c->stride[1], &s1) && s0 == d1 * s1) {
		Expr *sh[2] = {ex_int(g, d0 * d1), c->shape[2]}, *st[2] = {c->stride[1], c->stride[2]};
		int x2 = sdfg_add_view(g, arena_printf(g->arena, "%s_rows", c->name), x, 2, sh, st, c->offset);
		Expr *osh[2] = {ex_int(g, d0 * d1), o->shape[2]}, *ost[2] = {o->stride[1], o->stride[2]};
		int xg2 = sdfg_add_view(g, arena_printf(g->arena, "%s_rows", o->name), xg, 2, osh, ost, o->offset);
		sdfg_c(g, x2)->origin = sdfg_c(g, xg2)->origin = "";
		return gemm(r, seq, x2, wt, bih, xg2);
	}
	return gemm(r, seq, x, wt, bih, xg);
}

int expand_rnn(Sdfg *g, LibNode *l, Node *seq, const char *label, const XpTile *t)
{
	int x = l->in[0], h0 = l->in[1], c0 = l->in[2], wih = l->in[3], whh = l->in[4];
	int bih = l->in[5], bhh = l->in[6], whr = l->in[7];
	int y = l->out[0], hn = l->out[1], cn = l->out[2];
	Rnn r = {g, label, t, sdfg_c(g, x)->dt, (int)lib_int(l, "mode", RNN_LSTM), (int)lib_int(l, "batch_first", 0), 0, 0, 0, 0};
	static const int gates_of[] = {4, 3, 1, 1};
	int64_t GH = 0, d0 = 0, d1 = 0;
	ex_isint(sdfg_c(g, wih)->shape[0], &GH);
	ex_isint(sdfg_c(g, x)->shape[0], &d0);
	ex_isint(sdfg_c(g, x)->shape[1], &d1);
	ex_isint(sdfg_c(g, whh)->shape[1], &r.Ho);
	r.H = GH / gates_of[r.mode];
	r.T = r.bf ? d1 : d0;
	r.B = r.bf ? d0 : d1;
	int64_t row = lib_int(l, "row", 0), rev = lib_int(l, "reverse", 0);
	const char *nm = sdfg_c(g, y)->name;

	int64_t xsh[3] = {d0, d1, GH}, hsh[2] = {r.B, GH}, ssh[2] = {r.B, r.Ho}, csh[2] = {r.B, r.H};
	int xg = transient(g, arena_printf(g->arena, "%s_xg", nm), r.dt, 3, xsh);
	if (input_gemm(&r, seq, x, wih, bih, xg))
		return -1;
	int hg = transient(g, arena_printf(g->arena, "%s_hg", nm), r.dt, 2, hsh);
	int hs = transient(g, arena_printf(g->arena, "%s_h", nm), r.dt, 2, ssh);
	int cs = r.mode == RNN_LSTM ? transient(g, arena_printf(g->arena, "%s_c", nm), r.dt, 2, csh) : -1;
	int htil = whr >= 0 ? transient(g, arena_printf(g->arena, "%s_htil", nm), r.dt, 2, csh) : -1;
	int whh_t = step_weight(&r, seq, whh), whr_t = whr >= 0 ? step_weight(&r, seq, whr) : -1;
	copy_bj(&r, seq, hs, NULL, 0, h0, ex_int(g, row), (int)r.Ho);
	if (cs >= 0)
		copy_bj(&r, seq, cs, NULL, 0, c0, ex_int(g, row), (int)r.H);

	XpTile st = step_tile(t, r.B);
	r.t = &st;
	int vs;
	Node *ls = xp_loop(g, seq, N_FOR, "s", ex_int(g, 0), ex_int(g, r.T), 1, &vs);
	Expr *tt = rev ? ex_sub(g, ex_int(g, r.T - 1), ex_sym(g, vs)) : ex_sym(g, vs);
	if (gemm(&r, ls->body, hs, whh_t, bhh, hg))
		return -1;
	gates(&r, ls->body, xg, hg, hs, cs, htil, y, tt);
	if (htil >= 0) {
		if (gemm(&r, ls->body, htil, whr_t, -1, hs))
			return -1;
		copy_bj(&r, ls->body, y, tt, 1, hs, NULL, (int)r.Ho);
	}
	if (hn >= 0)
		copy_bj(&r, seq, hn, ex_int(g, 0), 0, hs, NULL, (int)r.Ho);
	if (cn >= 0)
		copy_bj(&r, seq, cn, ex_int(g, 0), 0, cs, NULL, (int)r.H);
	return 0;
}
