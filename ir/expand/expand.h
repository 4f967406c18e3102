/*
 * expand.h - shared by the expansion pass (ir/passes/expand.c) and the
 * expansions (ir/expand/): loop-building helpers and the entry points.
 */
#ifndef DOCCC_EXPAND_H
#define DOCCC_EXPAND_H

#include "../ir.h"

typedef struct {
	int tm, tn;        /* register tile: rows (pixels / matrix rows) x columns */
	int pack;          /* repack constant weights into the kernel's layout */
	int vec_lanes;     /* fp32 lanes of the target's vectors (0: no SIMD) */
} XpTile;

Node *xp_loop(Sdfg *g, Node *seq, NodeKind k, const char *hint, Expr *lo, Expr *hi, int64_t step, int *var);
Node *xp_block(Sdfg *g, Node *seq, const char *label);
Node *xp_nest(Sdfg *g, Node *seq, int c, int *vars);
Expr **xp_vars(Sdfg *g, int n, const int *vars);
Operand xp_bcast(Sdfg *g, int in, int out, const int *vars);
Memlet xp_memlet(int data, int rank, Expr *const *idx);
int xp_local(Sdfg *g, const char *name, Dtype dt, int rank, const int64_t *shape, Node *owner);
/* A float32 reduction over j in [0, hi) of the elements c[idx] (idx[jd]
 * set to j) into the scalar local tot, in vector lanes: part[L] (a local)
 * keeps one partial per lane over the whole groups of L, a scalar tail
 * loop adds the rest into tot, and the lanes are folded into tot last.
 * op is T_MAX or T_ADD, init its identity. With mx >= 0 the elements are
 * exp(c[idx] - mx) instead, stored back into c when storeback is set. */
void xp_lane_fold(Sdfg *g, Node *body, int L, Expr *hi, const char *label, int part, int tot, TCode op, double init,
                  int c, int rank, Expr *const *idx, int jd, int mx, int storeback);

/* The expansions, one per LIB_OPS row (ir/expand/). */
#define X(e, n, f, d) int expand_##f(Sdfg *g, LibNode *l, Node *seq, const char *label, const XpTile *t);
LIB_OPS(X)
#undef X

#endif
