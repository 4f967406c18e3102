/*
 * expand.h - the expansions (ir/expand/): the building helpers they share
 * and their entry points, sectioned by file. The expansion pass
 * (ir/passes/expand.c) calls expand_<name> of each library node through
 * the LIB_OPS table. An expansion builds on common.c; it calls another
 * family's file only to reuse that family's kernel for a node it makes
 * itself (the recurrent layers run their matrix products through
 * expand_gemm).
 */
#ifndef DOCCC_EXPAND_H
#define DOCCC_EXPAND_H

#include "../ir.h"

/* The integer kernels' operand forms, rows of linalg.c's int_forms: int8
 * bytes (T_MUL: the GPUs' tensor cores), int16 pairs (T_DOT2: the CPU's
 * pmaddwd), four bytes (T_DOT4: VNNI's vpdpbusd). */
typedef enum { INT_S8, INT_PAIRS, INT_QUADS } IntForm;

typedef struct {
	int tm, tn;        /* register tile: rows (pixels / matrix rows) x columns */
	int pack;          /* repack constant weights into the kernel's layout */
	int winograd;      /* 3x3 stride-1 convolutions by Winograd F(2x2, 3x3) (linalg.c) */
	int64_t wino_max_mb; /* whose transformed tiles take at most this many MiB */
	int64_t pw_max_c;  /* pointwise convolutions with at most this many input channels
	                    * vectorize along the pixels (linalg.c, conv_pointwise), */
	int64_t pw_min_px; /* and those with at least this many pixels */
	int tuned;         /* tm and tn are a tuning database's, not the category's */
	int vec_lanes;     /* fp32 lanes of the target's vectors (0: no SIMD) */
	int vec_regs;      /* and its vector registers */
	int64_t row_bytes; /* per-row scratch a kernel may keep in locals (sort buffers):
	                    * the CPU's stack budget, or a GPU thread's share */
	int64_t scores_bytes; /* GPU: attention whose scores fit this many bytes keeps them
	                       * in device memory (attention.c); 0: one query row at a time */
	int bound_keys;    /* CPU: a masked attention's key loops end at the last key its
	                    * mask lets any query attend, found at run time (attention.c) */
	int int8_weights;  /* a GEMM's folded int8 dequantization stays int8 in its panels,
	                    * dequantized in registers (linalg.c) */
	int int4_weights;  /* and two to a byte where they fit 4 bits */
	IntForm int_form;  /* the integer kernels' operands (linalg.c's int_forms) */
	int bf16_operands; /* CPU, contraction_precision medium: a GEMM's float32 operands
	                    * rounded to bfloat16, float32 sums (linalg.c) */
	int rows;          /* SIMD: linalg.c's rows form of the channel kernel (rows_form) */
	int64_t sum_block; /* CPU: a float tile's reduction in blocks of about this many terms,
	                    * each summed apart, then added (linalg.c's red_loop); 0: one chain */
	int gpu_sms;       /* GPU: its multiprocessors, for reductions over few long rows
	                    * split in parts first (quant.c); 0 on the CPU */
} XpTile;

/* The dtypes the register tiles read: float32, and float16/bfloat16, widened
 * to float32 at the load (the sums are float32; a half output rounds once,
 * at the store, as PyTorch's CPU GEMM and attention do). */
static inline int xp_tile_dt(Dtype d)
{
	return d == DT_F32 || d == DT_BF16 || d == DT_F16;
}

/* ---- common.c: building helpers -------------------------------------------------- */

/* A loop k (N_MAP or N_FOR) for a new symbol named after hint over [lo, hi)
 * appended to seq (*var its symbol); a block appended to seq. */
Node *xp_loop(Sdfg *g, Node *seq, NodeKind k, const char *hint, Expr *lo, Expr *hi, int64_t step, int *var);
Node *xp_block(Sdfg *g, Node *seq, const char *label);
/* Maps over every dim of container c, vars[i] their symbols; the innermost
 * body. The symbols as expressions. */
Node *xp_nest(Sdfg *g, Node *seq, int c, int *vars);
Expr **xp_vars(Sdfg *g, int n, const int *vars);
/* A tasklet of one, two or three operands appended to block b; its value. */
int xp_tk1(Sdfg *g, Node *b, TCode c, Dtype dt, Operand a);
int xp_tk2(Sdfg *g, Node *b, TCode c, Dtype dt, Operand a, Operand x);
int xp_tk3(Sdfg *g, Node *b, TCode c, Dtype dt, Operand a, Operand x, Operand y);
/* A memlet of container data at idx[0..rank); the operand of input in for
 * output out iterated by vars, with numpy broadcasting. */
Memlet xp_memlet(int data, int rank, Expr *const *idx);
Operand xp_bcast(Sdfg *g, int in, int out, const int *vars);
/* The broadcast shape of containers ins[0..n) (right-aligned, returns its
 * rank); the memlet indices of container c broadcast against a shape sh of
 * rank rb indexed by e[0..rb). */
int xp_bcast_shape(Sdfg *g, const int *ins, int n, Expr **sh);
void xp_bcast_idx(Sdfg *g, int c, int rb, Expr *const *sh, Expr *const *e, Expr **idx);
/* Data-dependent indices: bind index operand idx, an index into a dim of
 * size n, to a new value symbol in block b through a T_INDEX tasklet
 * (wrap: a negative index counts from the end once; any other index
 * outside [0, n) fails the run). */
Expr *xp_bind_index(Sdfg *g, Node *b, Operand idx, Expr *n, int wrap);
/* A local (per-iteration) buffer owned by loop `owner`. */
int xp_local(Sdfg *g, const char *name, Dtype dt, int rank, const int64_t *shape, Node *owner);

/* linalg.c: has GEMM l's constant B the integer kernel's form (int8
 * weights, one scale per column, no zero point; the integer pass)? */
int gemm_int_weights(Sdfg *g, const LibNode *l);
/* ... and convolution l's weights (int8, one scale per output channel, no
 * zero point; one group, not transposed, constant sizes)? */
int conv_int_weights(Sdfg *g, const LibNode *l);
/* ... and is za a zero point they take (an integer in [-128, 255])? */
int int_zp_ok(double za);
/* A float32 reduction over j in [0, hi) of the elements c[idx] (idx[jd]
 * set to j) into the scalar local tot, in vector lanes: part[L] (a local)
 * keeps one partial per lane over the whole groups of L, a scalar tail
 * loop adds the rest into tot, and the lanes are folded into tot last.
 * op is T_MAX or T_ADD, init its identity. With mx >= 0 the elements are
 * exp(c[idx] - mx) instead, stored back into c when storeback is set. */
void xp_lane_fold(Sdfg *g, Node *body, int L, Expr *hi, const char *label, int part, int tot, TCode op, double init,
                  int c, int rank, Expr *const *idx, int jd, int mx, int storeback);

/* ---- the families: one file of expansions each --------------------------------------
 * Each LIB_OPS row names its expansion, expand_<name> (declared for every
 * row below), defined in its family's file:
 *   elem.c       elemwise
 *   linalg.c     conv gemm cdist grouped_gemm
 *   attention.c  attention
 *   norm.c       batchnorm norm softmax
 *   reduce.c     reduce argred scan sort search histc
 *   pool.c       pool upsample grid_sample col2im im2col
 *   index.c      gather scatter embedding_bag masked_scatter
 *   shape.c      cat remap arange linspace tri
 *   rnn.c        rnn
 *   quant.c      quant qparams
 *   sym.c        assert */
#define X(e, n, f, d) int expand_##f(Sdfg *g, LibNode *l, Node *seq, const char *label, const XpTile *t);
LIB_OPS(X)
#undef X

#endif
