/*
 * linalg.c - expansion of the linalg family's library nodes: convolution,
 * GEMM, the pairwise distances of cdist and pdist, and the grouped GEMM
 * of mixture-of-experts layers (the last two sections).
 *
 * Both become the same register-blocked micro-kernel when the weights are
 * constant float32 (GEMM: also float16/bfloat16, whose panels keep the
 * 16-bit weights and whose loads widen to float32 lanes, so a decode step
 * reads half the bytes): an accumulator tile acc[TM][TN] (a local container, kept
 * in vector registers by the backend) of TM output rows (pixels along the
 * output width, or matrix rows) by TN output channels, zeroed, then updated
 * for every k of the reduction with acc[x][o] += A(x, k) * B(k, o), then
 * stored once with bias and scaling applied. B is the weight matrix,
 * repacked at compile time into panels wp[g][nb][k][TN] (zero-padded in the
 * channel dimension), so the o loop reads unit-stride memory and A(x, k) is
 * one broadcast scalar: the x map is unrolled and the o map vectorized by
 * the schedule pass. Convolution (1-, 2- and 3-d, direct or transposed)
 * reads its input through a zero-padded copy made in the same subtree
 * when the kernel would read outside it, so the kernel has no bounds
 * checks; per spatial dim the input index is affine in the output
 * position and the tap (ConvAxis), so strides and dilation only change
 * the A index. A transposed convolution (output o takes input i through
 * tap k where o = i*s - p + k*d) splits each dim's outputs into its s
 * stride phases: within a phase the contributing taps are fixed (every
 * s/gcd(s, d)-th one) and the input index is unit-stride in the output,
 * so each phase combination is an ordinary tiled kernel with its own
 * packed weights and no multiply by an inserted zero; a phase with no
 * taps stores just the bias. Each output element is stored once.
 *
 * Tile sizes come from the target's category (ir/target.c) or from the
 * expand.tile_m / expand.tile_n options. The width remainder gets a second
 * kernel with a smaller constant tile, so every kernel has constant trip
 * counts. A float32 GEMM whose B is known only at run time (attention's
 * QK^T and PV, linear with an activation weight) uses the same tile reading
 * B in place (copied to row-major first when it is not unit-stride along
 * N). Depthwise 2-d convolution (groups == channels) has its own kernels:
 * on SIMD targets the input in stride-phase planes read flat, whole rows
 * per vector map (conv_depthwise); elsewhere strips along the width. Anything else (non-float types,
 * weights known only at run time, direct convolution with groups of
 * fewer than 4 output channels; a transposed one takes the tiled kernel
 * even then, its zero-padded channel lanes costing less than the
 * gather's dead taps) expands into direct loops with a scalar accumulator, which is
 * slower but handles every case (transposed convolution gathers: output o
 * takes input (o + p - k*d) / s where that division is exact).
 */
#include <math.h>
#include <string.h>

#include "expand.h"

/* Index of `in` broadcast against an output of rank r indexed by oidx. */
static Operand bcast_idx(Sdfg *g, int in, int r, Expr *const *oidx)
{
	Container *c = sdfg_c(g, in);
	Expr *idx[MAXDIM];
	for (int j = 0; j < c->rank; j++) {
		int64_t n;
		int d = j + (r - c->rank);
		idx[j] = d < 0 || (ex_isint(c->shape[j], &n) && n == 1) ? ex_int(g, 0) : oidx[d];
	}
	return opd_mem(in, c->rank, idx);
}

static int64_t dim(Sdfg *g, int c, int d)
{
	int64_t v = -1;
	ex_isint(sdfg_c(g, c)->shape[d], &v);
	return v;
}

/* Element (flat index into the root's data) of container c at idx. */
static int64_t elem_at(Sdfg *g, int c, const int64_t *idx)
{
	Container *k = sdfg_c(g, c);
	int64_t e = 0, v;
	ex_isint(k->offset, &e);
	for (int i = 0; i < k->rank; i++) {
		ex_isint(k->stride[i], &v);
		e += idx[i] * v;
	}
	return e;
}

/* Is c a float32 constant, or a view of one, whose bytes can be had? */
static int const_known(Sdfg *g, int c)
{
	return sdfg_c(g, c)->dt == DT_F32 && sdfg_const_known(g, sdfg_root_of(g, c));
}

/* Emit the zero-initialisation of acc[tm][tn]. */
static void tile_zero(Sdfg *g, Node *seq, int acc, int tm, int tn, const char *label)
{
	int x, o;
	Node *lx = xp_loop(g, seq, N_MAP, "x", ex_int(g, 0), ex_int(g, tm), 1, &x);
	Node *lo = xp_loop(g, lx->body, N_MAP, "o", ex_int(g, 0), ex_int(g, tn), 1, &o);
	Node *b = xp_block(g, lo->body, label);
	Operand z[1] = {opd_const(0)};
	Expr *ai[2] = {ex_sym(g, x), ex_sym(g, o)};
	sdfg_store(b, sdfg_tasklet(g, b, T_ASSIGN, sdfg_c(g, acc)->dt, 1, z), xp_memlet(acc, 2, ai), W_NONE);
}

/* The loop over one tile dimension [lo, hi) in steps of tm, with its
 * accumulator tile acc[tm][tn] of type dt declared and zeroed in the body. */
static Node *tile_open_dt(Sdfg *g, Node *seq, const char *hint, Expr *lo, Expr *hi, int tm, int tn, const char *label,
                          int *var, int *acc, Dtype dt)
{
	Node *l = xp_loop(g, seq, N_MAP, hint, lo, hi, tm, var);
	int64_t ash[2] = {tm, tn};
	*acc = xp_local(g, "acc", dt, 2, ash, l);
	tile_zero(g, l->body, *acc, tm, tn, label);
	return l;
}

static Node *tile_open_x(Sdfg *g, Node *seq, const char *hint, Expr *lo, Expr *hi, int tm, int tn, const char *label,
                         int *var, int *acc)
{
	return tile_open_dt(g, seq, hint, lo, hi, tm, tn, label, var, acc, DT_F32);
}

/* The rows [0, M) of a matrix product in parts of constant tiles: whole
 * tm-row tiles, then the rest. A constant M has one remainder tile of its
 * own height. A run-time M (a dynamic batch or sequence) has the rest,
 * fewer than tm rows, in tiles of falling powers of two below tm, each
 * loop running at most once: every kernel keeps constant trip counts, and
 * B is read at most 1 + log2(tm) times per column block. */
enum { MAXPARTS = 8 };
typedef struct {
	Expr *lo[MAXPARTS], *hi[MAXPARTS];
	int tm[MAXPARTS];
	int n;
} RowParts;

static RowParts row_parts(Sdfg *g, Expr *M, int tm)
{
	RowParts p = {.n = 0};
	int64_t m;
	if (ex_isint(M, &m)) {
		int64_t full = m / tm * tm;
		if (full > 0)
			p.lo[p.n] = ex_int(g, 0), p.hi[p.n] = ex_int(g, full), p.tm[p.n++] = tm;
		if (m > full)
			p.lo[p.n] = ex_int(g, full), p.hi[p.n] = ex_int(g, m), p.tm[p.n++] = (int)(m - full);
		return p;
	}
	/* rest = M mod tm < 2*top: the tile of s rows covers the rows between
	 * M - rest mod 2s and M - rest mod s (between M - rest and M - rest
	 * mod top for s = top) */
	Expr *rest = ex_mod(g, M, ex_int(g, tm));
	int top = 1;
	while (top * 2 < tm)
		top *= 2;
	p.lo[p.n] = ex_int(g, 0), p.hi[p.n] = ex_sub(g, M, rest), p.tm[p.n++] = tm;
	for (int s = top; s >= 1 && p.n < MAXPARTS; s /= 2) {
		p.lo[p.n] = ex_sub(g, M, s == top ? rest : ex_mod(g, rest, ex_int(g, 2 * s)));
		p.hi[p.n] = ex_sub(g, M, ex_mod(g, rest, ex_int(g, s)));
		p.tm[p.n++] = s;
	}
	return p;
}

/* The x (rows, unrolled) and o (lanes, vectorized) maps of the update
 * acc[x][o] += A * B; returns the block that gets the tasklet. */
static Node *tile_update_block(Sdfg *g, Node *seq, int tm, int tn, const char *label, int *vx, int *vo)
{
	Node *lx = xp_loop(g, seq, N_MAP, "x", ex_int(g, 0), ex_int(g, tm), 1, vx);
	Node *lo = xp_loop(g, lx->body, N_MAP, "o", ex_int(g, 0), ex_int(g, tn), 1, vo);
	return xp_block(g, lo->body, label);
}

/* The reduction loop of a float32 tile acc[tm][tn] (a local of loop
 * owner, zeroed), over v in [0, n) with hint's name, appended to seq; its
 * body gets the update. In blocks of about b terms (b / per values of v,
 * per the terms one v sums: a convolution's taps), each summed apart in a
 * register tile, part, and kept in parts[block] (a local of owner); acc
 * then adds the blocks' sums in order. So an output's sum rounds along
 * about b + n/b additions instead of n, as blocked BLAS and oneDNN kernels
 * do: ResNet-50's 3x3 layers sum 4608 products, and one chain was twice
 * eager's error against float64 on its logits (1.4e-4 against 7.2e-5);
 * blocks of 128 (expand.sum_block) make it 2.7e-5, at the same speed
 * (within the noise of ResNet-50 and BERT on 1 and 2 threads). Only part
 * is live in a block's loop, which stays a loop (SCHED_ROLLED): a tile
 * acc updated every block, or the kb loop unrolled with a block's sums
 * kept in registers, would not fit the registers with part (clang then
 * spills in the hot loop: 17% slower). b 0, or n at most a block: one
 * loop into acc (*sum = acc); else *sum is part.
 *
 * The blocks are the same whatever a v holds and whatever the tile: nb =
 * ceil(terms / b), at most RED_BLOCKS, of an even number of terms (the
 * last one shorter), so that a GEMM over int4 weights two to a byte (v a
 * byte: per 2), over their bytes and over float32 weights adds the same
 * sums in the same order (test_quant: bit for bit). */
enum { RED_BLOCKS = 32 }; /* parts: 32 x 7 x 32 floats at most (a server tile): 28 KiB */

/* red_loop's blocks of nc values of v, per terms each: their count, each
 * of *bv values of v (the last one shorter); 0 where one loop sums them. */
static int64_t red_blocks(int64_t nc, int64_t b, int64_t per, int64_t *bv)
{
	per = MAX(1, per);
	if (b <= 0 || nc * per <= b)
		return 0;
	int64_t nt = nc * per, nb = MIN((nt + b - 1) / b, RED_BLOCKS), bt = (nt + nb - 1) / nb;
	*bv = (bt + (bt & 1) + per - 1) / per;
	return (nc + *bv - 1) / *bv;
}

static Node *red_loop(Sdfg *g, Node *seq, Node *owner, const char *hint, Expr *n, int64_t b, int64_t per, int tm, int tn,
                      int acc, const char *label, int *v, int *sum)
{
	int64_t nc, bv, nb;
	*sum = acc;
	if (!ex_isint(n, &nc) || !(nb = red_blocks(nc, b, per, &bv)))
		return xp_loop(g, seq, N_FOR, hint, ex_int(g, 0), n, 1, v);
	int vb, vx, vo;
	int64_t psh[3] = {nb, tm, tn}, sh[2] = {tm, tn};
	int parts = xp_local(g, "parts", DT_F32, 3, psh, owner);
	Node *lb = xp_loop(g, seq, N_FOR, "kb", ex_int(g, 0), ex_int(g, nb), 1, &vb);
	lb->sched = SCHED_ROLLED; /* unrolled, clang keeps a block's sums in registers through the next block's loop */
	*sum = xp_local(g, "part", DT_F32, 2, sh, lb);
	tile_zero(g, lb->body, *sum, tm, tn, label);
	Expr *lo = ex_muli(g, ex_sym(g, vb), bv), *hi = ex_addi(g, lo, bv);
	Node *l = xp_loop(g, lb->body, N_FOR, hint, lo, nc % bv ? ex_min(g, hi, n) : hi, 1, v);
	Node *pb = tile_update_block(g, lb->body, tm, tn, label, &vx, &vo);
	Expr *i[2] = {ex_sym(g, vx), ex_sym(g, vo)}, *pi[3] = {ex_sym(g, vb), i[0], i[1]};
	Operand p[1] = {opd_mem(*sum, 2, i)};
	sdfg_store(pb, sdfg_tasklet(g, pb, T_ASSIGN, DT_F32, 1, p), xp_memlet(parts, 3, pi), W_NONE);
	/* acc = the blocks' sums, in order */
	int vs;
	Node *ls = xp_loop(g, seq, N_FOR, "kb", ex_int(g, 0), ex_int(g, nb), 1, &vs);
	Node *ab = tile_update_block(g, ls->body, tm, tn, label, &vx, &vo);
	Expr *ai[2] = {ex_sym(g, vx), ex_sym(g, vo)}, *si[3] = {ex_sym(g, vs), ai[0], ai[1]};
	Operand q[1] = {opd_mem(parts, 3, si)};
	sdfg_store(ab, sdfg_tasklet(g, ab, T_ASSIGN, DT_F32, 1, q), xp_memlet(acc, 2, ai), W_SUM);
	return l;
}

/* Packed panels of a [K x N] operand, wp[groups][NB][K][tn] with NB = N/tn
 * rounded up and zeros past N: element (k, n) of group gi is element
 * at(ctx, gi, k, n) of constant src's bytes (-1: zero), or, without at, of
 * ofs + k*s0 + n*s1. The panels keep src's dtype (float32; the 16-bit
 * float types, whose weights then stay half the bytes; int8 weights that
 * the kernel dequantizes), or with bf16 float32 rounded to bfloat16
 * (contraction_precision medium). Made when the weights are written
 * (consts.c). */
typedef struct {
	int src, groups, tn;
	int64_t K, N, s0, s1, ofs;
	int64_t (*at)(const void *ctx, int gi, int64_t k, int64_t n);
	const void *ctx;
	int bf16;
} Panels;

/* float32 bits rounded to bfloat16's, to nearest even, a NaN quiet: the
 * libraries' dc_f2b (backends/rt/scalar.h) */
static uint16_t f32_bf16(uint32_t u)
{
	if ((u & 0x7fffffffu) > 0x7f800000u)
		return (uint16_t)(u >> 16 | 64);
	return (uint16_t)((u + 0x7fffu + (u >> 16 & 1)) >> 16);
}

static int panels_make(Sdfg *g, const ConstSrc *cs, void *dst)
{
	const Panels *p = cs->ctx;
	const char *src = sdfg_const_get(g, p->src);
	if (!src)
		return -1;
	size_t sz = p->bf16 ? 2 : dtype_info[sdfg_c(g, p->src)->dt].size; /* 4 or 2; zero is all-zero bits */
	char *d = dst;
	int64_t NB = (p->N + p->tn - 1) / p->tn;
	for (int gi = 0; gi < p->groups; gi++)
		for (int64_t nb = 0; nb < NB; nb++)
			for (int64_t k = 0; k < p->K; k++)
				for (int o = 0; o < p->tn; o++, d += sz) {
					int64_t n = nb * p->tn + o;
					int64_t e = n >= p->N ? -1 : p->at ? p->at(p->ctx, gi, k, n) : p->ofs + k * p->s0 + n * p->s1;
					if (e < 0)
						memset(d, 0, sz);
					else if (p->bf16) {
						uint32_t u;
						memcpy(&u, src + e * 4, 4);
						uint16_t h = f32_bf16(u);
						memcpy(d, &h, 2);
					} else if (sz == 4) /* constant sizes: plain loads and stores */
						memcpy(d, src + e * 4, 4);
					else if (sz == 2)
						memcpy(d, src + e * 2, 2);
					else
						*d = src[e];
				}
	sdfg_const_put(g, p->src);
	return 0;
}

static int pack_panels(Sdfg *g, const char *name, Panels p)
{
	int64_t NB = (p.N + p.tn - 1) / p.tn;
	int64_t shape[4] = {p.groups, NB, p.K, p.tn};
	return sdfg_const_new(g, name, p.bf16 ? DT_BF16 : sdfg_c(g, p.src)->dt, 4, shape, panels_make, &p, sizeof p);
}

/* The integer kernels' operand forms (XpTile.int_form): how many k one
 * word of A's packed rows and of B's panels holds (int8 bytes, else int32
 * words), the tasklet that multiplies and sums them, and the shift
 * subtracted from A's integers to bring them into the instruction's range
 * (the zero point moves with them):
 *   s8     the GPUs: int8 by int8 on the tensor cores, a uint8 A shifted
 *          by 128, T_MUL;
 *   pairs  the CPUs: int16 pairs lo | hi << 16 (T_PACK2), T_DOT2 (pmaddwd,
 *          which clang fuses with the sum into vpdpwssd on VNNI);
 *   quads  CPUs with VNNI: four bytes, A's unsigned (an int8 A plus 128)
 *          and B's signed, T_DOT4 (vpdpbusd). */
static const struct {
	const char *name;
	int per;                   /* k per word */
	TCode dot;
	int64_t shift_u8, shift_s8; /* subtracted from a uint8, an int8 A */
} int_forms[] = {
	[INT_S8] = {"s8", 1, T_MUL, 128, 0},
	[INT_PAIRS] = {"pairs", 2, T_DOT2, 0, 0},
	[INT_QUADS] = {"quads", 4, T_DOT4, 0, -128},
};

/* What copy_of writes: float32 (COPY_F32), float32 rounded to bfloat16's
 * precision (COPY_BF16: contraction_precision medium; float32 storage, so
 * that a tile broadcasts a row's element from memory), or an integer
 * kernel's form. */
#define COPY_F32 (-1)
#define COPY_BF16 (-2)

/* The shift int form f applies to tensor c's integers. */
static int64_t int_shift(Sdfg *g, int f, int c)
{
	Dtype dt = sdfg_c(g, c)->dt;
	return dt == DT_U8 ? int_forms[f].shift_u8 : dt == DT_I8 ? int_forms[f].shift_s8 : 0;
}

/* k in[.., per i + j, ..] (j < per) shifted, as form f's word: int8, or int32 */
static int int_word(Sdfg *g, Node *b, int f, const Operand *rd, int64_t shift)
{
	Operand v[4];
	for (int j = 0; j < int_forms[f].per; j++)
		v[j] = shift ? opd_val(xp_tk2(g, b, T_SUB, DT_I32, rd[j], opd_const((double)shift))) : rd[j];
	if (f == INT_S8)
		return xp_tk1(g, b, T_CAST, DT_I8, v[0]);
	if (f == INT_QUADS) /* bytes 0..255: lo = v0 | v1 << 8, hi = v2 | v3 << 8 */
		for (int h = 0; h < 2; h++)
			v[h] = opd_val(xp_tk2(g, b, T_ADD, DT_I32, v[2 * h],
			                      opd_val(xp_tk2(g, b, T_SHL, DT_I32, v[2 * h + 1], opd_const(8)))));
	return sdfg_tasklet(g, b, T_PACK2, DT_I32, 2, v);
}

/* A copy of `in` (rank r) of shape sh made in seq: element oi reads in at
 * oi - ofs (ofs NULL: 0; out of bounds: pad), in the given form; an
 * integer form's words hold elements per i .. per i + per - 1 of dim pdim. */
static int copy_of(Sdfg *g, Node *seq, int in, int r, Expr *const *sh, const int64_t *ofs, int form, int pdim,
                   double pad, const char *what, const char *label)
{
	Dtype dt = form < 0 ? DT_F32 : form == INT_S8 ? DT_I8 : DT_I32;
	int per = form < 0 ? 1 : int_forms[form].per;
	int src = sdfg_add_container_x(g, arena_printf(g->arena, "%s_%s", sdfg_c(g, in)->name, what), dt, CK_TRANSIENT, r, sh);
	sdfg_c(g, src)->origin = "";
	int v[MAXDIM];
	Node *body = xp_nest(g, seq, src, v);
	Node *b = xp_block(g, body, label);
	Expr **oi = xp_vars(g, r, v);
	Operand rd[4];
	for (int j = 0; j < per; j++) {
		Expr *ii[MAXDIM];
		for (int i = 0; i < r; i++)
			ii[i] = ofs && ofs[i] ? ex_addi(g, oi[i], -ofs[i]) : oi[i];
		if (per > 1)
			ii[pdim] = ex_addi(g, ex_muli(g, oi[pdim], per), j);
		rd[j] = opd_guarded(in, r, ii, pad);
	}
	int t = form < 0 ? sdfg_tasklet(g, b, T_ASSIGN, form == COPY_BF16 ? DT_BF16 : DT_F32, 1, rd)
	                 : int_word(g, b, form, rd, int_shift(g, form, in));
	sdfg_store(b, t, xp_memlet(src, r, oi), W_NONE);
	return src;
}

/* A zero-padded copy of input `in` [N][C][spatial...] with spatial sizes
 * ps[] and pb[d] zeros before dim d (the rest after), made in seq, so the
 * kernels that read it need no bounds checks. The batch N may be a
 * run-time dim (the copy is then sized at run time). The integer kernels'
 * copies ([N][C/per rounded up][spatial...], words of channels) are padded
 * with pad, the zero point: a dequantized zero. */
static int padded_copy(Sdfg *g, Node *seq, int in, int nd, const int64_t *ps, const int64_t *pb, const char *label,
                       int form, double pad)
{
	Expr *shape[MAXDIM] = {sdfg_c(g, in)->shape[0], sdfg_c(g, in)->shape[1]};
	int64_t ofs[MAXDIM] = {0, 0};
	if (form != COPY_F32) {
		int per = int_forms[form].per;
		shape[1] = ex_div(g, ex_addi(g, shape[1], per - 1), ex_int(g, per));
	}
	for (int i = 0; i < nd; i++)
		shape[2 + i] = ex_int(g, ps[i]), ofs[2 + i] = pb[i];
	return copy_of(g, seq, in, nd + 2, shape, ofs, form, 1, pad, form == COPY_F32 ? "pad" : int_forms[form].name, label);
}

static int padded_input(Sdfg *g, Node *seq, int in, int nd, const int64_t *ps, const int64_t *pb, const char *label)
{
	return padded_copy(g, seq, in, nd, ps, pb, label, COPY_F32, 0);
}

/* The pixels a 1x1 convolution of strides s takes from input in
 * [N][C][H][W], for its output out: a copy [N][C][Ho][Wo], made in seq. */
static int strided_input(Sdfg *g, Node *seq, int in, int out, const int64_t *s, const char *label)
{
	Expr *sh[4] = {sdfg_c(g, in)->shape[0], sdfg_c(g, in)->shape[1], sdfg_c(g, out)->shape[2], sdfg_c(g, out)->shape[3]};
	int src = sdfg_add_container_x(g, arena_printf(g->arena, "%s_strided", sdfg_c(g, in)->name), DT_F32, CK_TRANSIENT, 4, sh);
	sdfg_c(g, src)->origin = "";
	int v[MAXDIM];
	Node *b = xp_block(g, xp_nest(g, seq, src, v), label);
	Expr **oi = xp_vars(g, 4, v);
	Expr *ii[4] = {oi[0], oi[1], ex_muli(g, oi[2], s[0]), ex_muli(g, oi[3], s[1])};
	Operand rd[1] = {opd_mem(in, 4, ii)};
	sdfg_store(b, sdfg_tasklet(g, b, T_ASSIGN, DT_F32, 1, rd), xp_memlet(src, 4, oi), W_NONE);
	return src;
}

/* acc + bias[oc] (no bias: acc), in block b; returns the value. */
static int plus_bias(Sdfg *g, Node *b, Operand acc, int bias, Expr *oc)
{
	int v = sdfg_tasklet(g, b, T_ASSIGN, DT_F32, 1, &acc);
	if (bias >= 0) {
		Expr *bix[1] = {oc};
		Operand a2[2] = {opd_val(v), opd_mem(bias, 1, bix)};
		v = sdfg_tasklet(g, b, T_ADD, DT_F32, 2, a2);
	}
	return v;
}

/* ---- convolution ----------------------------------------------------------------- */

/* One spatial axis of a tiled convolution kernel. The output loop
 * variable v runs over [lo, hi) and addresses output index omul*v + oadd;
 * tap j in [0, nt) is kernel index k0 + km*j and reads the padded input at
 * imul*v + jmul*j + iadd. A direct convolution has one such axis per dim
 * (v the output index, j the tap); a transposed one has one per stride
 * phase (see conv_tiled). */
typedef struct {
	int64_t lo, hi;
	int64_t omul, oadd;
	int64_t imul, jmul, iadd;
	int64_t nt, k0, km;
} ConvAxis;

typedef struct {
	Sdfg *g;
	int w;                    /* weight container */
	int tr;                   /* transposed: weight [C][OC/G][k...], else [OC][C/G][k...] */
	int nd;
	int64_t OCg, Cg;
	ConvAxis ax[3];           /* the kernel's axes: which taps, in what order */
} ConvW;

/* The weight's index of packed element (k, n) of group gi: k runs over
 * (c, j0, j1, j2) row-major. */
static void conv_w_idx(const ConvW *c, int gi, int64_t k, int64_t n, int64_t *idx)
{
	for (int d = c->nd - 1; d >= 0; d--) {
		idx[2 + d] = c->ax[d].k0 + c->ax[d].km * (k % c->ax[d].nt);
		k /= c->ax[d].nt;
	}
	idx[0] = c->tr ? gi * c->Cg + k : gi * c->OCg + n;
	idx[1] = c->tr ? n : k;
}

static int64_t conv_w_at(const void *ctx, int gi, int64_t k, int64_t n)
{
	const ConvW *c = ctx;
	int64_t idx[MAXDIM];
	conv_w_idx(c, gi, k, n, idx);
	return elem_at(c->g, c->w, idx);
}

static int conv_generic(Sdfg *g, LibNode *l, Node *seq, const char *label);

/* An activation's zero point the integer kernels take: an integer of
 * int8's or uint8's range. */
int int_zp_ok(double za)
{
	return za == floor(za) && za >= -128 && za <= 255;
}

/* Depthwise 2-d convolution without SIMD (target none, the GPUs: one
 * output strip per thread), float32: a zero-padded copy of the input as large as the
 * kernel reads, then per (n, oc, oh) a strip acc[T] of output pixels along
 * the width, updated for every tap (kh, kw) with one weight scalar times
 * T consecutive input pixels (unit stride when stride_w is 1, so the strip
 * map is vectorized), stored once with the bias. The width remainder gets
 * its own narrower strip. Weights are read in place (constant or not). */
static int conv_depthwise_strips(Sdfg *g, LibNode *l, Node *seq, const char *label, const XpTile *t)
{
	int in = l->in[0], w = l->in[1], bias = l->in[2], out = l->out[0];
	int64_t s[2], p[2], d[2];
	lib_ints(l, "stride", s, 2);
	lib_ints(l, "padding", p, 2);
	lib_ints(l, "dilation", d, 2);
	int64_t C = dim(g, in, 1), H = dim(g, in, 2), W = dim(g, in, 3);
	int64_t OC = dim(g, out, 1), OH = dim(g, out, 2), OW = dim(g, out, 3);
	int64_t KH = dim(g, w, 2), KW = dim(g, w, 3), mult = OC / C;
	int64_t PH = MAX(H + 2 * p[0], (OH - 1) * s[0] + (KH - 1) * d[0] + 1);
	int64_t PW = MAX(W + 2 * p[1], (OW - 1) * s[1] + (KW - 1) * d[1] + 1);
	int src = in;
	if (PH > H || PW > W) {
		int64_t ps[2] = {PH, PW};
		src = padded_input(g, seq, in, 2, ps, p, label);
	}
	int vn, vc, voh;
	Node *ln = xp_loop(g, seq, N_MAP, "n", ex_int(g, 0), sdfg_c(g, out)->shape[0], 1, &vn);
	Node *lc = xp_loop(g, ln->body, N_MAP, "oc", ex_int(g, 0), ex_int(g, OC), 1, &vc);
	Node *loh = xp_loop(g, lc->body, N_MAP, "oh", ex_int(g, 0), ex_int(g, OH), 1, &voh);
	Expr *ci = ex_div(g, ex_sym(g, vc), ex_int(g, mult));
	int T = t->vec_lanes ? 2 * t->vec_lanes : 8;
	int64_t full = OW / T * T;
	for (int part = 0; part < 2; part++) {
		int64_t lo = part ? full : 0, hi = part ? OW : full;
		int tt = part ? (int)(OW - full) : T;
		if (hi <= lo)
			continue;
		int vow, acc, vkh, vkw, vo;
		Node *low = xp_loop(g, loh->body, N_MAP, "ow", ex_int(g, lo), ex_int(g, hi), tt, &vow);
		int64_t ash[1] = {tt};
		acc = xp_local(g, "acc", DT_F32, 1, ash, low);
		Node *lz = xp_loop(g, low->body, N_MAP, "o", ex_int(g, 0), ex_int(g, tt), 1, &vo);
		Node *zb = xp_block(g, lz->body, label);
		Expr *zi[1] = {ex_sym(g, vo)};
		Operand z[1] = {opd_const(0)};
		sdfg_store(zb, sdfg_tasklet(g, zb, T_ASSIGN, DT_F32, 1, z), xp_memlet(acc, 1, zi), W_NONE);
		Node *lkh = xp_loop(g, low->body, N_FOR, "kh", ex_int(g, 0), ex_int(g, KH), 1, &vkh);
		Node *lkw = xp_loop(g, lkh->body, N_FOR, "kw", ex_int(g, 0), ex_int(g, KW), 1, &vkw);
		Node *lo2 = xp_loop(g, lkw->body, N_MAP, "o", ex_int(g, 0), ex_int(g, tt), 1, &vo);
		Node *ub = xp_block(g, lo2->body, label);
		Expr *O = ex_sym(g, vo);
		Expr *xi[4] = {ex_sym(g, vn), ci, ex_add(g, ex_muli(g, ex_sym(g, voh), s[0]), ex_muli(g, ex_sym(g, vkh), d[0])),
		               ex_add(g, ex_muli(g, ex_add(g, ex_sym(g, vow), O), s[1]), ex_muli(g, ex_sym(g, vkw), d[1]))};
		Expr *wi[4] = {ex_sym(g, vc), ex_int(g, 0), ex_sym(g, vkh), ex_sym(g, vkw)};
		Operand ab[2] = {opd_mem(src, 4, xi), opd_mem(w, 4, wi)};
		Expr *ai[1] = {O};
		sdfg_store(ub, sdfg_tasklet(g, ub, T_MUL, DT_F32, 2, ab), xp_memlet(acc, 1, ai), W_SUM);
		Node *ls = xp_loop(g, low->body, N_MAP, "o", ex_int(g, 0), ex_int(g, tt), 1, &vo);
		Node *sb = xp_block(g, ls->body, label);
		Expr *si[1] = {ex_sym(g, vo)};
		int v = plus_bias(g, sb, opd_mem(acc, 1, si), bias, ex_sym(g, vc));
		Expr *yi[4] = {ex_sym(g, vn), ex_sym(g, vc), ex_sym(g, voh), ex_add(g, ex_sym(g, vow), ex_sym(g, vo))};
		sdfg_store(sb, v, xp_memlet(out, 4, yi), W_NONE);
	}
	return 0;
}

/* Depthwise 2-d convolution (one input channel per group, any channel
 * multiplier), float32, on SIMD targets. Input channel c is copied into
 * phase planes P[a][b][r][q] = x[n][c][r*sh + a - ph][q*sw + b - pw] (zero
 * outside x), so tap (kh, kw) of output (oh, ow) reads plane ((kh*dh) % sh,
 * (kw*dw) % sw) at row oh + (kh*dh)/sh, column ow + (kw*dw)/sw: unit stride
 * along the width at any stride. A plane is read flat, one row of PW
 * columns after the other, so one vector map covers R whole output rows at
 * once: acc[f] += plane[base + f] * w[oc][kh][kw] for f in [0, F), F = R*PW
 * rounded up to whole vectors. The columns past OW of each row (and the
 * rows past OH of the last tile) are computed and dropped; the planes have
 * rows enough that no read leaves them. Small feature maps (7x7, 14x14)
 * thus run full vectors instead of one short strip per row, and stride 2
 * reads no gathers. The planes are a local of the channel (copied while
 * the channel's input is in cache, read from L1/L2 by its taps) when they
 * fit the stack budget, else one transient for all channels. The store
 * maps the valid (r, ow) of acc to y with the bias, where the epilogue
 * fuses. */
typedef struct {
	int64_t s[2], p[2], d[2];
	int64_t C, OC, OH, OW, KH, KW, mult;
	int64_t R, ntiles, F, PH, PW;
	int local, planes;        /* planes: a local [a][b][PH][PW], or a transient [N][C][a][b][PH][PW], flat */
} DwConv;

/* Read of plane (a, b) at flat position f, for batch n and input channel c. */
static Operand dw_plane(Sdfg *g, const DwConv *k, Expr *n, Expr *c, Expr *a, Expr *b, Expr *f)
{
	Expr *i[3] = {n, c, ex_add(g, ex_muli(g, ex_add(g, ex_muli(g, a, k->s[1]), b), k->PH * k->PW), f)};
	return k->local ? opd_mem(k->planes, 1, i + 2) : opd_mem(k->planes, 3, i);
}

/* Zeros into rows [r0, r1) x columns [q0, q1) of plane (a, b). */
static void dw_zero(Sdfg *g, const DwConv *k, Node *seq, Expr *n, Expr *c, int64_t a, int64_t b, int64_t r0, int64_t r1,
                    int64_t q0, int64_t q1, const char *label)
{
	int vr, vq;
	if (r1 <= r0 || q1 <= q0)
		return;
	Node *lr = xp_loop(g, seq, N_MAP, "r", ex_int(g, 0), ex_int(g, r1 - r0), 1, &vr);
	Node *zb = xp_block(g, xp_loop(g, lr->body, N_MAP, "q", ex_int(g, 0), ex_int(g, q1 - q0), 1, &vq)->body, label);
	Operand z[1] = {opd_const(0)};
	Expr *f = ex_add(g, ex_muli(g, ex_addi(g, ex_sym(g, vr), r0), k->PW), ex_addi(g, ex_sym(g, vq), q0));
	Operand zd = dw_plane(g, k, n, c, ex_int(g, a), ex_int(g, b), f);
	sdfg_store(zb, sdfg_tasklet(g, zb, T_ASSIGN, DT_F32, 1, z), zd.m, W_NONE);
}

/* The copy of input channel c of batch n into its planes, in seq (local
 * planes), or of every channel into the transient (seq: the conv's): per
 * plane the rows and columns that fall inside x copied without bounds
 * checks (unit stride, or a constant stride the C compiler vectorizes as
 * an interleaved load), and zeros around them. */
static void dw_copy(Sdfg *g, DwConv *k, Node *seq, int in, Expr *n, Expr *c, const char *label)
{
	int v[2], vr, vq;
	Node *cur = seq;
	if (!k->local) {
		cur = xp_loop(g, cur, N_MAP, "n", ex_int(g, 0), sdfg_c(g, in)->shape[0], 1, &v[0])->body;
		cur = xp_loop(g, cur, N_MAP, "c", ex_int(g, 0), ex_int(g, k->C), 1, &v[1])->body;
		n = ex_sym(g, v[0]), c = ex_sym(g, v[1]);
	}
	int64_t H = dim(g, in, 2), W = dim(g, in, 3);
	for (int64_t a = 0; a < k->s[0]; a++) {
		/* plane row r reads x row r*sh + a - ph: inside for r in [rlo, rhi);
		 * column q of plane b reads x column q*sw + b - pw: inside for q in
		 * [qlo[b], qhi[b]) */
		int64_t rlo = MAX(0, (k->p[0] - a + k->s[0] - 1) / k->s[0]);
		int64_t rhi = MIN(k->PH, (H - 1 + k->p[0] - a) / k->s[0] + 1);
		int64_t qlo[8], qhi[8], QL = 0, QH = k->PW;
		for (int64_t b = 0; b < k->s[1]; b++) {
			qlo[b] = MAX(0, (k->p[1] - b + k->s[1] - 1) / k->s[1]);
			qhi[b] = MIN(k->PW, (W - 1 + k->p[1] - b) / k->s[1] + 1);
			QL = MAX(QL, qlo[b]), QH = MIN(QH, qhi[b]);
		}
		rlo = MIN(rlo, k->PH), rhi = MAX(rhi, rlo);
		for (int64_t b = 0; b < k->s[1]; b++) {
			/* inside x: [lo, hi) of rows [rlo, rhi); none if empty */
			int64_t lo = qhi[b] > qlo[b] ? qlo[b] : 0, hi = qhi[b] > qlo[b] ? qhi[b] : 0;
			dw_zero(g, k, cur, n, c, a, b, 0, rlo, 0, k->PW, label);
			dw_zero(g, k, cur, n, c, a, b, rhi, k->PH, 0, k->PW, label);
			dw_zero(g, k, cur, n, c, a, b, rlo, rhi, 0, lo, label);
			dw_zero(g, k, cur, n, c, a, b, rlo, rhi, hi, k->PW, label);
		}
		if (rhi <= rlo)
			continue;
		/* the columns every plane has in one loop (the planes' reads of one
		 * x row together: the C compiler loads the row and deinterleaves),
		 * then each plane's own first and last columns */
		for (int part = 0; part < 3; part++)
			for (int64_t b = 0; b < (part ? k->s[1] : 1); b++) {
				int64_t lo = part == 0 ? QL : part == 1 ? qlo[b] : MAX(QH, qlo[b]);
				int64_t hi = part == 0 ? QH : part == 1 ? MIN(QL, qhi[b]) : qhi[b];
				if (hi <= lo)
					continue;
				Node *lr = xp_loop(g, cur, N_MAP, "r", ex_int(g, 0), ex_int(g, rhi - rlo), 1, &vr);
				Node *cb = xp_block(g, xp_loop(g, lr->body, N_MAP, "q", ex_int(g, 0), ex_int(g, hi - lo), 1, &vq)->body,
				                    label);
				Expr *r = ex_addi(g, ex_sym(g, vr), rlo), *q = ex_addi(g, ex_sym(g, vq), lo);
				for (int64_t bb = part ? b : 0; bb < (part ? b + 1 : k->s[1]); bb++) {
					Expr *xi[4] = {n, c, ex_addi(g, ex_muli(g, r, k->s[0]), a - k->p[0]),
					               ex_addi(g, ex_muli(g, q, k->s[1]), bb - k->p[1])};
					Operand rd[1] = {opd_mem(in, 4, xi)};
					Operand dst = dw_plane(g, k, n, c, ex_int(g, a), ex_int(g, bb), ex_add(g, ex_muli(g, r, k->PW), q));
					sdfg_store(cb, sdfg_tasklet(g, cb, T_ASSIGN, DT_F32, 1, rd), dst.m, W_NONE);
				}
			}
	}
}

/* The tile of R output rows at t of channel oc (input channel c): the
 * register tile acc[X][L] (F = X*L flat positions) zeroed and updated tap
 * by tap, copied to the flat row buffer rows[F], stored with the bias. The
 * tile stays in vector registers through the taps because only constant
 * indices reach it; the store's (r, ow) read the copy. */
static void dw_tile(Sdfg *g, const DwConv *k, Node *seq, int w, int bias, int out, Expr *n, Expr *c, Expr *oc,
                    const char *label, int L)
{
	int vt, vkh, vkw, vx, vo, vr, vw;
	int X = (int)(k->F / L);
	Node *lt = xp_loop(g, seq, N_MAP, "t", ex_int(g, 0), ex_int(g, k->ntiles), 1, &vt);
	int64_t ash[2] = {X, L}, fsh[1] = {k->F};
	int acc = xp_local(g, "acc", DT_F32, 2, ash, lt), rows = xp_local(g, "rows", DT_F32, 1, fsh, lt);
	tile_zero(g, lt->body, acc, X, L, label);

	Node *lkh = xp_loop(g, lt->body, N_FOR, "kh", ex_int(g, 0), ex_int(g, k->KH), 1, &vkh);
	Node *lkw = xp_loop(g, lkh->body, N_FOR, "kw", ex_int(g, 0), ex_int(g, k->KW), 1, &vkw);
	Node *ub = tile_update_block(g, lkw->body, X, L, label, &vx, &vo);
	Expr *th = ex_muli(g, ex_sym(g, vkh), k->d[0]), *tw = ex_muli(g, ex_sym(g, vkw), k->d[1]);
	Expr *row = ex_add(g, ex_muli(g, ex_sym(g, vt), k->R), ex_div(g, th, ex_int(g, k->s[0])));
	Expr *xo = ex_add(g, ex_muli(g, ex_sym(g, vx), L), ex_sym(g, vo));
	Expr *f = ex_add(g, ex_add(g, ex_muli(g, row, k->PW), ex_div(g, tw, ex_int(g, k->s[1]))), xo);
	Expr *wi[4] = {oc, ex_int(g, 0), ex_sym(g, vkh), ex_sym(g, vkw)};
	Operand ab[2] = {dw_plane(g, k, n, c, ex_mod(g, th, ex_int(g, k->s[0])), ex_mod(g, tw, ex_int(g, k->s[1])), f),
	                 opd_mem(w, 4, wi)};
	Expr *ai[2] = {ex_sym(g, vx), ex_sym(g, vo)};
	sdfg_store(ub, sdfg_tasklet(g, ub, T_MUL, DT_F32, 2, ab), xp_memlet(acc, 2, ai), W_SUM);
	Node *cb = tile_update_block(g, lt->body, X, L, label, &vx, &vo);
	Expr *ci[2] = {ex_sym(g, vx), ex_sym(g, vo)};
	Operand cv[1] = {opd_mem(acc, 2, ci)};
	Expr *ri[1] = {ex_add(g, ex_muli(g, ex_sym(g, vx), L), ex_sym(g, vo))};
	sdfg_store(cb, sdfg_tasklet(g, cb, T_ASSIGN, DT_F32, 1, cv), xp_memlet(rows, 1, ri), W_NONE);

	/* y[n][oc][t*R + r][ow] = acc[r*PW + ow] + bias[oc] for the rows of the tile */
	Expr *oh0 = ex_muli(g, ex_sym(g, vt), k->R);
	Expr *rhi = k->OH % k->R == 0 ? ex_int(g, k->R) : ex_min(g, ex_int(g, k->R), ex_sub(g, ex_int(g, k->OH), oh0));
	Node *lr = xp_loop(g, lt->body, N_MAP, "r", ex_int(g, 0), rhi, 1, &vr);
	Node *sb = xp_block(g, xp_loop(g, lr->body, N_MAP, "ow", ex_int(g, 0), ex_int(g, k->OW), 1, &vw)->body, label);
	Expr *si[1] = {ex_add(g, ex_muli(g, ex_sym(g, vr), k->PW), ex_sym(g, vw))};
	int val = plus_bias(g, sb, opd_mem(rows, 1, si), bias, oc);
	Expr *yi[4] = {n, oc, ex_add(g, oh0, ex_sym(g, vr)), ex_sym(g, vw)};
	sdfg_store(sb, val, xp_memlet(out, 4, yi), W_NONE);
}

static int conv_depthwise(Sdfg *g, LibNode *l, Node *seq, const char *label, const XpTile *t)
{
	int in = l->in[0], w = l->in[1], bias = l->in[2], out = l->out[0];
	DwConv k = {.C = dim(g, in, 1), .OC = dim(g, out, 1), .OH = dim(g, out, 2), .OW = dim(g, out, 3),
	            .KH = dim(g, w, 2), .KW = dim(g, w, 3)};
	lib_ints(l, "stride", k.s, 2);
	lib_ints(l, "padding", k.p, 2);
	lib_ints(l, "dilation", k.d, 2);
	k.mult = k.OC / k.C;
	if (k.s[1] > 8) /* dw_copy's planes per row */
		return conv_depthwise_strips(g, l, seq, label, t);
	/* a register tile of up to 2*tm vectors (the GEMM tile's register count) */
	int64_t L = t->vec_lanes, Fmax = MIN(16, 2 * t->tm) * L;
	/* the furthest phase row and column a tap reaches */
	int64_t mh = (k.KH - 1) * k.d[0] / k.s[0], mw = (k.KW - 1) * k.d[1] / k.s[1];
	k.PW = k.OW + mw;
	k.R = MAX(1, MIN(k.OH, Fmax / k.PW));
	k.ntiles = (k.OH + k.R - 1) / k.R;
	k.R = (k.OH + k.ntiles - 1) / k.ntiles;
	k.F = (k.R * k.PW + L - 1) / L * L;
	k.PH = ((k.ntiles - 1) * k.R * k.PW + mh * k.PW + mw + k.F + k.PW - 1) / k.PW;
	int64_t plane = k.PH * k.PW, bytes = k.s[0] * k.s[1] * plane * 4;
	k.local = bytes <= t->row_bytes / 2;

	Expr *N = sdfg_c(g, in)->shape[0];
	if (!k.local) {
		Expr *psh[3] = {N, ex_int(g, k.C), ex_int(g, k.s[0] * k.s[1] * plane)};
		k.planes = sdfg_add_container_x(g, arena_printf(g->arena, "%s_planes", sdfg_c(g, in)->name), DT_F32,
		                                CK_TRANSIENT, 3, psh);
		sdfg_c(g, k.planes)->origin = "";
		dw_copy(g, &k, seq, in, NULL, NULL, label);
	}
	int vn, vc, vm;
	Node *ln = xp_loop(g, seq, N_MAP, "n", ex_int(g, 0), sdfg_c(g, out)->shape[0], 1, &vn);
	Node *lc = xp_loop(g, ln->body, N_MAP, "c", ex_int(g, 0), ex_int(g, k.C), 1, &vc);
	Expr *n = ex_sym(g, vn), *c = ex_sym(g, vc), *oc = c;
	if (k.local) {
		int64_t psh[1] = {k.s[0] * k.s[1] * plane};
		k.planes = xp_local(g, "planes", DT_F32, 1, psh, lc);
		dw_copy(g, &k, lc->body, in, n, c, label);
	}
	Node *cur = lc->body;
	if (k.mult > 1) {
		cur = xp_loop(g, cur, N_MAP, "m", ex_int(g, 0), ex_int(g, k.mult), 1, &vm)->body;
		oc = ex_add(g, ex_muli(g, c, k.mult), ex_sym(g, vm));
	}
	dw_tile(g, &k, cur, w, bias, out, n, c, oc, label, (int)L);
	return 0;
}

static int64_t floor_div(int64_t a, int64_t b)
{
	return a / b - (a % b != 0 && (a < 0) != (b < 0));
}

/* Stride phase r of a transposed axis (input I, output O, kernel K,
 * stride s, padding p, dilation d): the outputs o = s*q + r - p, q in
 * [lo, hi). Input i reaches o through tap k when o = i*s - p + k*d, so
 * i = q - (k*d - r)/s for the taps with k*d = r (mod s) only: an
 * arithmetic progression k0 + km*j, km = s / gcd(s, d), whose input
 * offset falls by km*d/s per step. Padded-input offset not yet added. */
static void tconv_axis(ConvAxis *a, int64_t O, int64_t K, int64_t s, int64_t p, int64_t d, int64_t r)
{
	a->omul = s, a->oadd = r - p, a->imul = 1;
	a->lo = -floor_div(r - p, s);
	a->hi = floor_div(O - 1 + p - r, s) + 1;
	a->nt = 0, a->k0 = 0, a->km = 1;
	for (int64_t k = 0; k < K; k++)
		if ((k * d - r) % s == 0) {
			if (a->nt == 0)
				a->k0 = k;
			else if (a->nt == 1)
				a->km = k - a->k0;
			a->nt++;
		}
	a->jmul = -(a->km * d / s);
	a->iadd = -((a->k0 * d - r) / s);
}

/* The range [*lo, *hi] of padded-input indices axis a reads (before the
 * padding offset); 0 if it reads nothing. */
static int axis_reads(const ConvAxis *a, int64_t *lo, int64_t *hi)
{
	if (a->hi <= a->lo || a->nt == 0)
		return 0;
	int64_t v0 = a->imul * a->lo, v1 = a->imul * (a->hi - 1), j1 = a->jmul * (a->nt - 1);
	*lo = MIN(v0, v1) + MIN(0, j1) + a->iadd;
	*hi = MAX(v0, v1) + MAX(0, j1) + a->iadd;
	return 1;
}

/* The integer kernels' parameters and rescaling (below, with the GEMM's). */
typedef struct IntTiles IntTiles;
static int int_rescale(Sdfg *g, Node *sb, Operand acc, const IntTiles *it, Expr *nb, Expr *o);
static TCode int_code(const IntTiles *it);

/* What the tiled kernels' updates and stores share: the axes, the
 * operands, and the image, group and channel block they are in. */
typedef struct {
	const ConvAxis *ax;
	int nd, src, wp, out, bias;
	int64_t Cg, OCg;
	int tn;
	const IntTiles *it;
	Expr *n, *gi, *nb;
} ConvTile;

/* sum[x][o] += src[n][g*Cg + c][imul*v + jmul*j + iadd ...] * wp[g][nb][(c,
 * j...)][o] in body, the loop of c (variable vc): the tap loops and the
 * update of a tile of tm rows, the output position V[d] (the last dim's
 * plus x). */
static void conv_update(Sdfg *g, const ConvTile *k, Node *body, const char *label, int vc, Expr *const *V, int tm, int sum)
{
	const ConvAxis *ax = k->ax;
	int vj, vx, vo;
	Expr *kk = ex_sym(g, vc), *J[3];
	for (int d = 0; d < k->nd; d++) {
		J[d] = ex_int(g, 0);
		if (ax[d].nt > 1) {
			body = xp_loop(g, body, N_FOR, "k", ex_int(g, 0), ex_int(g, ax[d].nt), 1, &vj)->body;
			J[d] = ex_sym(g, vj);
		}
		kk = ex_add(g, ex_muli(g, kk, ax[d].nt), J[d]);
	}
	Node *ub = tile_update_block(g, body, tm, k->tn, label, &vx, &vo);
	Expr *ai[MAXDIM] = {k->n, ex_add(g, ex_muli(g, k->gi, k->Cg), ex_sym(g, vc))};
	for (int d = 0; d < k->nd; d++) {
		Expr *v = d == k->nd - 1 ? ex_add(g, V[d], ex_sym(g, vx)) : V[d];
		ai[2 + d] = ex_addi(g, ex_add(g, ex_muli(g, v, ax[d].imul), ex_muli(g, J[d], ax[d].jmul)), ax[d].iadd);
	}
	Expr *bi[4] = {k->gi, k->nb, kk, ex_sym(g, vo)};
	Operand ab[2] = {opd_mem(k->src, k->nd + 2, ai), opd_mem(k->wp, 4, bi)};
	Expr *acci[2] = {ex_sym(g, vx), ex_sym(g, vo)};
	sdfg_store(ub, sdfg_tasklet(g, ub, k->it ? int_code(k->it) : T_MUL, k->it ? DT_I32 : DT_F32, 2, ab),
	           xp_memlet(sum, 2, acci), W_SUM);
}

/* y[n][g*OCg + nb*tn + o][omul*v + oadd ...] = acc[row + x][o] + bias in
 * seq (row NULL: 0), for the tm rows of a tile at V; the integer kernel's
 * sums rescaled first. Pixels outer, channels inner: the lanes run along
 * the channels, so a fused exp-based activation vectorizes (schedule.c). */
static void conv_store(Sdfg *g, const ConvTile *k, Node *seq, const char *label, Expr *const *V, int tm, int acc, Expr *row)
{
	int so, sx, tn = k->tn;
	Expr *ohi = k->OCg % tn == 0 ? ex_int(g, tn) : ex_min(g, ex_int(g, tn), ex_sub(g, ex_int(g, k->OCg), ex_muli(g, k->nb, tn)));
	Node *lsx = xp_loop(g, seq, N_MAP, "x", ex_int(g, 0), ex_int(g, tm), 1, &sx);
	Node *sb = xp_block(g, xp_loop(g, lsx->body, N_MAP, "o", ex_int(g, 0), ohi, 1, &so)->body, label);
	Expr *oc = ex_add(g, ex_add(g, ex_muli(g, k->gi, k->OCg), ex_muli(g, k->nb, tn)), ex_sym(g, so));
	Expr *ri[2] = {row ? ex_add(g, row, ex_sym(g, sx)) : ex_sym(g, sx), ex_sym(g, so)};
	Operand av = opd_mem(acc, 2, ri);
	if (k->it)
		av = opd_val(int_rescale(g, sb, av, k->it, k->nb, ex_sym(g, so)));
	int v = plus_bias(g, sb, av, k->bias, oc);
	Expr *yi[MAXDIM] = {k->n, oc};
	for (int d = 0; d < k->nd; d++) {
		Expr *vd = d == k->nd - 1 ? ex_add(g, V[d], ex_sym(g, sx)) : V[d];
		yi[2 + d] = ex_addi(g, ex_muli(g, vd, k->ax[d].omul), k->ax[d].oadd);
	}
	sdfg_store(sb, v, xp_memlet(k->out, k->nd + 2, yi), W_NONE);
}

/* The rows form of conv_tiled's float32 kernel, for a 2-d map of one tile
 * per row (7x7 with the server's 7-row tile: the last stage of ResNets,
 * MobileNets, EfficientNet), whose reduction red_loop would sum in blocks:
 * per channel block, the blocks outermost and the rows inside them, so
 * that a block's weights (bv channels x taps x tn) stay in L1 while every
 * row reads them, and the rows' sums wait in acc[rows * tm][tn]. The
 * direct form reads a channel block's whole panel for each row, from L2
 * (a 2048-channel panel is 256 KiB), and its loads then outrun the FMAs.
 * A row's sums in a block, part, stay in registers, and acc adds the
 * blocks in red_loop's order: the same sums, bit for bit. The tile is as
 * many vectors wide as the registers hold beside the row's broadcast
 * (rows_tn: 7 x 64 on the server), which halves the broadcasts per FMA.
 * ResNet-50's 2048-to-512 1x1 layer alone: 0.79 ms direct, 0.68 in this
 * form (one thread, issue 29's fourth session). Applies where the (image,
 * group, channel block) items number 8 at least, two threads' worth;
 * returns the blocks (0: the direct form), and their channels in *bv. */
static int64_t rows_form(const XpTile *t, const ConvAxis *ax, int nd, int64_t Cg, int64_t items, int64_t *bv)
{
	if (!t->rows || t->vec_lanes <= 1 || nd != 2 || ax[1].hi - ax[1].lo > t->tm || items < 8)
		return 0;
	int64_t nb = red_blocks(Cg, t->sum_block, ax[0].nt * ax[1].nt, bv);
	return nb > 1 ? nb : 0;
}

/* The rows form's tile width for a 1x1 convolution: as many vectors as
 * fit beside rows of sums and a broadcast (at most 4), where they divide
 * the channels into 8 blocks at least; else tn. (A 3x3 layer's tap loops
 * around 7 x 64 sums ran slower than around 7 x 32: ResNet's 512-channel
 * 7x7 layer 1.9 ms against 1.3.) */
static int rows_tn(const XpTile *t, int64_t taps, int64_t rows, int64_t OCg, int64_t N, int tn)
{
	int L = t->vec_lanes;
	if (t->tuned || taps != 1)
		return tn;
	for (int nv = (int)MIN(4, (t->vec_regs - 3) / rows); nv * L > tn; nv--)
		if (OCg % (nv * L) == 0 && OCg / (nv * L) * N >= 8)
			return nv * L;
	return tn;
}

static void conv_rows(Sdfg *g, const ConvTile *k, Node *lnb, const char *label, int64_t nkb, int64_t bv)
{
	const ConvAxis *ax = k->ax;
	int64_t OH = ax[0].hi - ax[0].lo;
	int tm = (int)(ax[1].hi - ax[1].lo), tn = k->tn, vb, vh, vc, vx, vo, sh;
	int64_t ash[2] = {OH * tm, tn}, psh[2] = {tm, tn};
	int acc = xp_local(g, "acc", DT_F32, 2, ash, lnb);
	tile_zero(g, lnb->body, acc, (int)(OH * tm), tn, label);
	Node *lb = xp_loop(g, lnb->body, N_FOR, "kb", ex_int(g, 0), ex_int(g, nkb), 1, &vb);
	lb->sched = SCHED_ROLLED;
	Node *lh = xp_loop(g, lb->body, N_FOR, "oh", ex_int(g, ax[0].lo), ex_int(g, ax[0].hi), 1, &vh);
	int part = xp_local(g, "part", DT_F32, 2, psh, lh);
	tile_zero(g, lh->body, part, tm, tn, label);
	Expr *lo = ex_muli(g, ex_sym(g, vb), bv), *hi = ex_addi(g, lo, bv);
	Node *lc = xp_loop(g, lh->body, N_FOR, "c", lo, k->Cg % bv ? ex_min(g, hi, ex_int(g, k->Cg)) : hi, 1, &vc);
	Expr *V[2] = {ex_sym(g, vh), ex_int(g, ax[1].lo)};
	conv_update(g, k, lc->body, label, vc, V, tm, part);
	/* acc[the row's tile] += part */
	Node *ab = tile_update_block(g, lh->body, tm, tn, label, &vx, &vo);
	Expr *row = ex_add(g, ex_muli(g, ex_addi(g, ex_sym(g, vh), -ax[0].lo), tm), ex_sym(g, vx));
	Expr *qi[2] = {ex_sym(g, vx), ex_sym(g, vo)}, *ri[2] = {row, ex_sym(g, vo)};
	Operand q[1] = {opd_mem(part, 2, qi)};
	sdfg_store(ab, sdfg_tasklet(g, ab, T_ASSIGN, DT_F32, 1, q), xp_memlet(acc, 2, ri), W_SUM);
	Node *ls = xp_loop(g, lnb->body, N_FOR, "oh", ex_int(g, ax[0].lo), ex_int(g, ax[0].hi), 1, &sh);
	Expr *S[2] = {ex_sym(g, sh), V[1]};
	conv_store(g, k, ls->body, label, S, tm, acc, ex_muli(g, ex_addi(g, ex_sym(g, sh), -ax[0].lo), tm));
}

/* The register-tiled kernel over the axes ax[0..nd) (the last one, the
 * output width, tiled by tm rows): for each (n, group, channel block,
 * outer axes, width tile), acc[x][o] += src[n][g*Cg + c][in(v, j)...] *
 * wp[g][nb][(c, j...)][o] over c and the taps, then stored with the bias
 * (or in the rows form above). wp < 0: no taps (the outputs get only the
 * bias). With it: the integer kernel (gemm_int): src and wp hold words of
 * channels in the form's layout (acc: int32 sums of its tasklet), rescaled
 * before the bias. */
static void conv_tiled(Sdfg *g, Node *seq, const char *label, const XpTile *t, const ConvAxis *ax, int nd, int src,
                       int wp, int out, int bias, int64_t G, int64_t Cg, int64_t OCg, int tn, const IntTiles *it)
{
	static const char *const hint[3] = {"od", "oh", "ow"};
	int64_t NB = (OCg + tn - 1) / tn;
	int vn, vg = -1, vnb, vv[3];
	Node *ln = xp_loop(g, seq, N_MAP, "n", ex_int(g, 0), sdfg_c(g, out)->shape[0], 1, &vn);
	Node *cur = ln->body;
	if (G > 1) {
		Node *lg = xp_loop(g, cur, N_MAP, "g", ex_int(g, 0), ex_int(g, G), 1, &vg);
		cur = lg->body;
	}
	Node *lnb = xp_loop(g, cur, N_MAP, "nb", ex_int(g, 0), ex_int(g, NB), 1, &vnb);
	cur = lnb->body;
	ConvTile k = {ax, nd, src, wp, out, bias, Cg, OCg, tn, it, ex_sym(g, vn), vg >= 0 ? ex_sym(g, vg) : ex_int(g, 0),
	              ex_sym(g, vnb)};
	int64_t bv, nkb;
	if (!it && wp >= 0 && (nkb = rows_form(t, ax, nd, Cg, MAX(dim(g, out, 0), 1) * G * NB, &bv))) {
		conv_rows(g, &k, lnb, label, nkb, bv);
		return;
	}
	for (int d = 0; d < nd - 1; d++) {
		Node *lv = xp_loop(g, cur, N_MAP, hint[3 - nd + d], ex_int(g, ax[d].lo), ex_int(g, ax[d].hi), 1, &vv[d]);
		cur = lv->body;
	}
	const ConvAxis *aw = &ax[nd - 1];
	int tm = (int)MIN((int64_t)t->tm, aw->hi - aw->lo);
	int64_t full = aw->lo + (aw->hi - aw->lo) / tm * tm;
	for (int part = 0; part < 2; part++) {
		int64_t lo = part ? full : aw->lo, hi = part ? aw->hi : full;
		int ttm = part ? (int)(hi - lo) : tm;
		if (hi <= lo)
			continue;
		int acc;
		Node *low = tile_open_dt(g, cur, "ow", ex_int(g, lo), ex_int(g, hi), ttm, tn, label, &vv[nd - 1], &acc,
		                         it ? DT_I32 : DT_F32);
		Expr *V[3];
		for (int d = 0; d < nd; d++)
			V[d] = ex_sym(g, vv[d]);
		if (wp >= 0) {
			int vc, sum = acc;
			int64_t taps = 1;
			for (int d = 0; d < nd; d++)
				taps *= ax[d].nt;
			Node *lc = it ? xp_loop(g, low->body, N_FOR, "c", ex_int(g, 0), ex_int(g, Cg), 1, &vc)
			              : red_loop(g, low->body, low, "c", ex_int(g, Cg), t->sum_block, taps, ttm, tn, acc, label, &vc,
			                         &sum);
			conv_update(g, &k, lc->body, label, vc, V, ttm, sum);
		}
		conv_store(g, &k, low->body, label, V, ttm, acc, NULL);
	}
}

/* Pointwise (1x1, stride 1, one group) 2-d convolution on SIMD targets,
 * vectorized along the pixels: y[n][oc][p] = sum_c W[oc][c] * x[n][c][p]
 * over the flat pixels p of the H x W plane, NCHW's contiguous run (p's
 * row p/W and column p%W address element p: sdfg_flat_index), so that
 * vectors run across row ends and 56x56, 14x14 or 7x7 maps vectorize as
 * well as 32x32. It is the GEMM W X with the weights as the broadcast
 * operand: the tile acc[to][tp] holds to output channels (unrolled rows,
 * weights packed wp[nb][c][to], zeros past OC) by tp pixels (the lanes),
 * and the store writes whole vectors of y, where the channel-vectorized
 * kernel stores its tile transposed, one pixel per lane (with few input
 * channels those scattered stores cost more than the FMAs). The loops run
 * n, pixel block, channel block: a block's C x tp floats of x stay in the
 * caches while every channel block reads them, and the weights (OC x C)
 * are read once per block; the last channel block stores its rows below OC
 * only. The pixels past the whole blocks are one narrower tile of whole
 * vectors ending at P, which computes some of the last block's pixels
 * again (every vector full, the tile in registers: masked lanes would keep
 * it in memory). to: pw_rows. */
/* The pixels of conv_pointwise's tile: a tuned tile's columns; else three
 * vectors where there are 32 registers (8 rows: ResNet-50's 28x28 layers
 * 0.88 ms against 1.12 with two), the category's two elsewhere. */
static int pw_pixels(const XpTile *t)
{
	return t->tuned || t->vec_regs < 32 ? t->tn : 3 * t->vec_lanes;
}

static void conv_pointwise(Sdfg *g, Node *seq, const char *label, const XpTile *t, int in, int wp, int out, int bias,
                           int to)
{
	int64_t C = dim(g, in, 1), OC = dim(g, out, 1), W = dim(g, out, 3), P = dim(g, out, 2) * W, L = t->vec_lanes;
	int64_t TP = MIN(pw_pixels(t), P / L * L), NB = (OC + to - 1) / to, full = P / TP * TP;
	for (int part = 0; part < 2; part++) {
		/* the rest: whole vectors ending at P (overlapping the last block,
		 * whose pixels it computes again, to the same values) */
		int64_t tp = part ? (P - full + L - 1) / L * L : TP;
		if (tp <= 0)
			continue;
		int vn, vp, vnb;
		Node *cur = xp_loop(g, seq, N_MAP, "n", ex_int(g, 0), sdfg_c(g, out)->shape[0], 1, &vn)->body;
		Expr *p0 = ex_int(g, P - tp);
		if (!part) {
			cur = xp_loop(g, cur, N_MAP, "p", ex_int(g, 0), ex_int(g, full), tp, &vp)->body;
			p0 = ex_sym(g, vp);
		}
		Node *lb = xp_loop(g, cur, N_MAP, "nb", ex_int(g, 0), ex_int(g, NB), 1, &vnb);
		int64_t ash[2] = {to, tp};
		int acc = xp_local(g, "acc", DT_F32, 2, ash, lb), sum, vk, vx, vo, sx, so;
		tile_zero(g, lb->body, acc, to, (int)tp, label);
		Node *lk = red_loop(g, lb->body, lb, "k", ex_int(g, C), t->sum_block, 1, to, (int)tp, acc, label, &vk, &sum);
		Node *ub = tile_update_block(g, lk->body, to, (int)tp, label, &vx, &vo);
		Expr *px = ex_add(g, p0, ex_sym(g, vo)), *w = ex_int(g, W);
		Expr *wi[4] = {ex_int(g, 0), ex_sym(g, vnb), ex_sym(g, vk), ex_sym(g, vx)};
		Expr *xi[4] = {ex_sym(g, vn), ex_sym(g, vk), ex_div(g, px, w), ex_mod(g, px, w)};
		Operand ab[2] = {opd_mem(wp, 4, wi), opd_mem(in, 4, xi)};
		Expr *ai[2] = {ex_sym(g, vx), ex_sym(g, vo)};
		sdfg_store(ub, sdfg_tasklet(g, ub, T_MUL, DT_F32, 2, ab), xp_memlet(sum, 2, ai), W_SUM);
		/* the rows below OC */
		Expr *oc0 = ex_muli(g, ex_sym(g, vnb), to), *rows = ex_int(g, to);
		if (OC % to)
			rows = ex_min(g, rows, ex_sub(g, ex_int(g, OC), oc0));
		Node *lsx = xp_loop(g, lb->body, N_MAP, "x", ex_int(g, 0), rows, 1, &sx);
		Node *sb = xp_block(g, xp_loop(g, lsx->body, N_MAP, "o", ex_int(g, 0), ex_int(g, tp), 1, &so)->body, label);
		Expr *oc = ex_add(g, oc0, ex_sym(g, sx)), *py = ex_add(g, p0, ex_sym(g, so));
		Expr *ri[2] = {ex_sym(g, sx), ex_sym(g, so)};
		int v = plus_bias(g, sb, opd_mem(acc, 2, ri), bias, oc);
		Expr *yi[4] = {ex_sym(g, vn), oc, ex_div(g, py, w), ex_mod(g, py, w)};
		sdfg_store(sb, v, xp_memlet(out, 4, yi), W_NONE);
	}
}

/* The output channels of conv_pointwise's tile: from the rule's tm up to
 * what the vector registers hold (to x nv sums, nv vectors of x and a
 * broadcast), the count that pads OC least, then the fewest blocks (64
 * channels: 8 rows, not 7 and a 1-row remainder). 0 where the kernel does
 * not apply: the pixels' rows and columns must be x's (in >= 0) and y's
 * contiguous run, of a vector at least. */
static int pw_rows(Sdfg *g, const XpTile *t, int in, int out)
{
	int nv = pw_pixels(t) / t->vec_lanes, hi = MIN(16, (t->vec_regs - 1 - nv) / nv);
	int64_t OC = dim(g, out, 1), W = dim(g, out, 3), s;
	if (dim(g, out, 2) * W < t->vec_lanes)
		return 0;
	for (int i = in < 0; i < 2; i++) {
		Container *c = sdfg_c(g, i ? out : in);
		if (!ex_isint(c->stride[3], &s) || s != 1 || !ex_isint(c->stride[2], &s) || s != W)
			return 0;
	}
	int best = MIN(t->tm, 16);
	for (int to = best + 1; to <= hi; to++) {
		int64_t pad = (OC + to - 1) / to * to, bpad = (OC + best - 1) / best * best;
		if (pad < bpad || (pad == bpad && (OC + to - 1) / to < (OC + best - 1) / best))
			best = to;
	}
	return best;
}

/* ---- Winograd F(2x2, 3x3) -------------------------------------------------------- */

/* A 3x3 stride-1 convolution computes each 2x2 output tile from a 4x4
 * input tile d with 16 multiplies per input channel instead of 36:
 * y = A^T [sum_c (G g G^T) (.) (B^T d B)] A. Three phases, each a vector
 * map: (1) the input is copied into the stride-2 phase planes of the
 * depthwise kernel (dw_copy), where element (i, j) of tile (th, tw) is
 * plane (i%2, j%2) at (th + i/2, tw + j/2), and transformed into
 * V[n][xi][c][t]. The planes are read flat, as the depthwise kernel reads
 * them: tile t = th*PW + tw over rows of PW = TW + 1 columns, so one vector
 * map covers every tile in whole vectors (the last column's tiles, and
 * those past TH rows up to a whole vector, are computed and never stored);
 * (2) for each of the 16 xi a GEMM M[n][xi][t][oc] = sum_c V[n][xi][c][t]
 * U[xi][c][oc] in the register tile, U = G g G^T packed at compile time
 * into panels; (3) the output transform, lanes along the output channels,
 * stores the 2x2 tile
 * (scattered: NCHW) with the bias, where the epilogue fuses; a last tile
 * row or column of an odd output stores its valid half. The transforms'
 * coefficients are 0, +-1 and 1/2, so the error stays that of the direct
 * kernel's order of summation (checked against eager at rtol 1e-4 / atol
 * 1e-5 on the model suite). */
typedef struct {
	Sdfg *g;
	int w;                    /* the weights [OC][C][3][3] */
} WinoW;

static int wino_weights(Sdfg *g, const ConstSrc *cs, void *dst)
{
	const Panels *p = cs->ctx;
	const WinoW *ww = p->ctx;
	const float *src = sdfg_const_get(g, p->src);
	if (!src)
		return -1;
	static const double G[4][3] = {{1, 0, 0}, {0.5, 0.5, 0.5}, {0.5, -0.5, 0.5}, {0, 0, 1}};
	float *d = dst;
	int64_t NB = (p->N + p->tn - 1) / p->tn;
	for (int xi = 0; xi < 16; xi++)
		for (int64_t nb = 0; nb < NB; nb++)
			for (int64_t c = 0; c < p->K; c++, d += p->tn)
				for (int o = 0; o < p->tn; o++) {
					int64_t oc = nb * p->tn + o;
					double u = 0;
					for (int a = 0; oc < p->N && a < 3; a++)
						for (int b = 0; b < 3; b++) {
							int64_t idx[4] = {oc, c, a, b};
							u += G[xi / 4][a] * src[elem_at(ww->g, ww->w, idx)] * G[xi % 4][b];
						}
					d[o] = (float)u;
				}
	sdfg_const_put(g, p->src);
	return 0;
}

/* A binary tasklet a op b in block blk; returns its value. */
static int bin(Sdfg *g, Node *blk, TCode op, int a, int b)
{
	Operand o[2] = {opd_val(a), opd_val(b)};
	return sdfg_tasklet(g, blk, op, DT_F32, 2, o);
}

/* B^T d B of the 4x4 values d (row-major) into v. */
static void wino_bt(Sdfg *g, Node *blk, const int *d, int *v)
{
	int r[16];
	for (int j = 0; j < 4; j++) {
		r[0 * 4 + j] = bin(g, blk, T_SUB, d[0 * 4 + j], d[2 * 4 + j]);
		r[1 * 4 + j] = bin(g, blk, T_ADD, d[1 * 4 + j], d[2 * 4 + j]);
		r[2 * 4 + j] = bin(g, blk, T_SUB, d[2 * 4 + j], d[1 * 4 + j]);
		r[3 * 4 + j] = bin(g, blk, T_SUB, d[1 * 4 + j], d[3 * 4 + j]);
	}
	for (int i = 0; i < 4; i++) {
		v[i * 4 + 0] = bin(g, blk, T_SUB, r[i * 4 + 0], r[i * 4 + 2]);
		v[i * 4 + 1] = bin(g, blk, T_ADD, r[i * 4 + 1], r[i * 4 + 2]);
		v[i * 4 + 2] = bin(g, blk, T_SUB, r[i * 4 + 2], r[i * 4 + 1]);
		v[i * 4 + 3] = bin(g, blk, T_SUB, r[i * 4 + 1], r[i * 4 + 3]);
	}
}

/* Phase 3 over tiles th in [th0, th1), tw in [tw0, tw1) (tile th*PW + tw
 * of M), storing the outputs (i, j) with i < ni, j < nj of each. */
static void wino_out(Sdfg *g, Node *seq, const char *label, int Mx, int out, int bias, int64_t PW, int64_t th0,
                     int64_t th1, int64_t tw0, int64_t tw1, int ni, int nj)
{
	if (th1 <= th0 || tw1 <= tw0)
		return;
	int64_t OC = dim(g, out, 1);
	int vn, vh, vw, vo;
	Node *cur = xp_loop(g, seq, N_MAP, "n", ex_int(g, 0), sdfg_c(g, out)->shape[0], 1, &vn)->body;
	cur = xp_loop(g, cur, N_MAP, "th", ex_int(g, 0), ex_int(g, th1 - th0), 1, &vh)->body;
	cur = xp_loop(g, cur, N_MAP, "tw", ex_int(g, 0), ex_int(g, tw1 - tw0), 1, &vw)->body;
	Node *blk = xp_block(g, xp_loop(g, cur, N_MAP, "oc", ex_int(g, 0), ex_int(g, OC), 1, &vo)->body, label);
	Expr *th = ex_addi(g, ex_sym(g, vh), th0), *tw = ex_addi(g, ex_sym(g, vw), tw0), *oc = ex_sym(g, vo);
	Expr *tt = ex_add(g, ex_muli(g, th, PW), tw);
	int m[16], s[8];
	for (int xi = 0; xi < 16; xi++) {
		Expr *mi[4] = {ex_sym(g, vn), ex_int(g, xi), tt, oc};
		Operand rd[1] = {opd_mem(Mx, 4, mi)};
		m[xi] = sdfg_tasklet(g, blk, T_ASSIGN, DT_F32, 1, rd);
	}
	/* A^T = [1 1 1 0; 0 1 -1 -1]: rows, then columns */
	for (int v = 0; v < 4; v++) {
		s[v] = bin(g, blk, T_ADD, bin(g, blk, T_ADD, m[v], m[4 + v]), m[8 + v]);
		s[4 + v] = bin(g, blk, T_SUB, bin(g, blk, T_SUB, m[4 + v], m[8 + v]), m[12 + v]);
	}
	for (int i = 0; i < ni; i++)
		for (int j = 0; j < nj; j++) {
			const int *r = s + 4 * i;
			int y = j == 0 ? bin(g, blk, T_ADD, bin(g, blk, T_ADD, r[0], r[1]), r[2])
			               : bin(g, blk, T_SUB, bin(g, blk, T_SUB, r[1], r[2]), r[3]);
			y = plus_bias(g, blk, opd_val(y), bias, oc);
			Expr *yi[4] = {ex_sym(g, vn), oc, ex_addi(g, ex_muli(g, th, 2), i), ex_addi(g, ex_muli(g, tw, 2), j)};
			sdfg_store(blk, y, xp_memlet(out, 4, yi), W_NONE);
		}
}

/* Do Winograd's transformed inputs and outputs (wino_tile_bytes) fit
 * expand.winograd_max_mb? Each phase runs over the whole batch, so beyond that
 * they stream through memory: ResNet-50's 64-channel 56x56 layers at batch
 * 8 (54 MB) took 2.8 times their batch-1 time per image, where its 28x28
 * ones (30 MB) took 0.95; direct, ResNet-50 at batch 8 ran 416-449 ms on
 * one thread against 452-468 (three interleaved runs). */
static int wino_fits(Sdfg *g, const XpTile *t, int in, int out)
{
	return wino_tile_bytes(dim(g, in, 0), dim(g, in, 1), dim(g, out, 1), dim(g, out, 2), dim(g, out, 3), t->vec_lanes) <=
	       (double)t->wino_max_mb * (1 << 20);
}

static void conv_winograd(Sdfg *g, Node *seq, const char *label, const XpTile *t, int in, int w, int out, int bias,
                          const int64_t *p)
{
	int64_t C = dim(g, in, 1), OC = dim(g, out, 1), OH = dim(g, out, 2), OW = dim(g, out, 3);
	int64_t TH = (OH + 1) / 2, TW = (OW + 1) / 2, PW = TW + 1, L = t->vec_lanes;
	int64_t T = (TH * PW + L - 1) / L * L; /* flat tiles */
	Expr *N = sdfg_c(g, in)->shape[0];
	/* (1) phase planes with rows enough for the flat reads, then V[n][xi][c][t] */
	DwConv *k = arena_alloc(g->arena, sizeof *k);
	*k = (DwConv){.s = {2, 2}, .p = {p[0], p[1]}, .d = {1, 1}, .C = C, .PH = (T + PW + 1 + PW - 1) / PW, .PW = PW};
	Expr *psh[3] = {N, ex_int(g, C), ex_int(g, 4 * k->PH * k->PW)};
	k->planes = sdfg_add_container_x(g, arena_printf(g->arena, "%s_wino_planes", sdfg_c(g, in)->name), DT_F32,
	                                 CK_TRANSIENT, 3, psh);
	sdfg_c(g, k->planes)->origin = "";
	dw_copy(g, k, seq, in, NULL, NULL, label);
	Expr *vsh[4] = {N, ex_int(g, 16), ex_int(g, C), ex_int(g, T)};
	int V = sdfg_add_container_x(g, arena_printf(g->arena, "%s_wino_in", sdfg_c(g, in)->name), DT_F32, CK_TRANSIENT, 4,
	                             vsh);
	sdfg_c(g, V)->origin = "";
	int vn, vc, vf;
	Node *cur = xp_loop(g, seq, N_MAP, "n", ex_int(g, 0), N, 1, &vn)->body;
	cur = xp_loop(g, cur, N_MAP, "c", ex_int(g, 0), ex_int(g, C), 1, &vc)->body;
	Node *blk = xp_block(g, xp_loop(g, cur, N_MAP, "t", ex_int(g, 0), ex_int(g, T), 1, &vf)->body, label);
	int d[16], v[16];
	for (int i = 0; i < 4; i++)
		for (int j = 0; j < 4; j++) {
			Expr *f = ex_addi(g, ex_sym(g, vf), (i / 2) * PW + j / 2);
			Operand rd[1] = {dw_plane(g, k, ex_sym(g, vn), ex_sym(g, vc), ex_int(g, i % 2), ex_int(g, j % 2), f)};
			d[i * 4 + j] = sdfg_tasklet(g, blk, T_ASSIGN, DT_F32, 1, rd);
		}
	wino_bt(g, blk, d, v);
	for (int xi = 0; xi < 16; xi++) {
		Expr *vi[4] = {ex_sym(g, vn), ex_int(g, xi), ex_sym(g, vc), ex_sym(g, vf)};
		sdfg_store(blk, v[xi], xp_memlet(V, 4, vi), W_NONE);
	}

	/* (2) M[n][xi][t][oc] (oc padded to whole panels) */
	int tn = t->tn;
	if (OC < tn && OC <= t->vec_lanes)
		tn = t->vec_lanes;
	int64_t NB = (OC + tn - 1) / tn;
	WinoW *ww = arena_alloc(g->arena, sizeof *ww);
	*ww = (WinoW){g, w};
	Panels *pp = arena_alloc(g->arena, sizeof *pp);
	*pp = (Panels){sdfg_root_of(g, w), 16, tn, C, OC, 0, 0, 0, NULL, ww, 0};
	int64_t ush[4] = {16, NB, C, tn};
	int U = sdfg_const_new(g, arena_printf(g->arena, "%s_winograd", sdfg_c(g, w)->name), DT_F32, 4, ush, wino_weights,
	                       pp, sizeof *pp);
	Expr *msh[4] = {N, ex_int(g, 16), ex_int(g, T), ex_int(g, NB * tn)};
	int Mx = sdfg_add_container_x(g, arena_printf(g->arena, "%s_wino_out", sdfg_c(g, out)->name), DT_F32, CK_TRANSIENT,
	                              4, msh);
	sdfg_c(g, Mx)->origin = "";
	int vx, vnb;
	cur = xp_loop(g, seq, N_MAP, "n", ex_int(g, 0), N, 1, &vn)->body;
	cur = xp_loop(g, cur, N_MAP, "xi", ex_int(g, 0), ex_int(g, 16), 1, &vx)->body;
	cur = xp_loop(g, cur, N_MAP, "nb", ex_int(g, 0), ex_int(g, NB), 1, &vnb)->body;
	RowParts rp = row_parts(g, ex_int(g, T), (int)MIN((int64_t)t->tm, T));
	for (int part = 0; part < rp.n; part++) {
		int tm = rp.tm[part], vm, acc, vk, ux, uo, sx, so;
		Node *lm = tile_open_x(g, cur, "m", rp.lo[part], rp.hi[part], tm, tn, label, &vm, &acc);
		int sum;
		/* blocks a quarter as long: an output adds up to 9 of these
		 * sums (A^T M A), whose values the input transform doubles, so
		 * their blocks keep its error within the direct kernel's (a
		 * 512-channel layer: 2.0e-7 from float64 in blocks of 128, 1.3e-7
		 * in blocks of 32, direct 1.3e-7) */
		Node *lk = red_loop(g, lm->body, lm, "k", ex_int(g, C), t->sum_block / 4, 1, tm, tn, acc, label, &vk, &sum);
		Node *ub = tile_update_block(g, lk->body, tm, tn, label, &ux, &uo);
		Expr *ai[4] = {ex_sym(g, vn), ex_sym(g, vx), ex_sym(g, vk), ex_add(g, ex_sym(g, vm), ex_sym(g, ux))};
		Expr *bi[4] = {ex_sym(g, vx), ex_sym(g, vnb), ex_sym(g, vk), ex_sym(g, uo)};
		Operand ab[2] = {opd_mem(V, 4, ai), opd_mem(U, 4, bi)};
		Expr *acci[2] = {ex_sym(g, ux), ex_sym(g, uo)};
		sdfg_store(ub, sdfg_tasklet(g, ub, T_MUL, DT_F32, 2, ab), xp_memlet(sum, 2, acci), W_SUM);
		Node *sb = tile_update_block(g, lm->body, tm, tn, label, &sx, &so);
		Expr *ri[2] = {ex_sym(g, sx), ex_sym(g, so)};
		Operand rv[1] = {opd_mem(acc, 2, ri)};
		Expr *mi[4] = {ex_sym(g, vn), ex_sym(g, vx), ex_add(g, ex_sym(g, vm), ex_sym(g, sx)),
		               ex_add(g, ex_muli(g, ex_sym(g, vnb), tn), ex_sym(g, so))};
		sdfg_store(sb, sdfg_tasklet(g, sb, T_ASSIGN, DT_F32, 1, rv), xp_memlet(Mx, 4, mi), W_NONE);
	}

	/* (3) the whole tiles, then an odd output's last row and column */
	wino_out(g, seq, label, Mx, out, bias, PW, 0, OH / 2, 0, OW / 2, 2, 2);
	wino_out(g, seq, label, Mx, out, bias, PW, 0, OH / 2, OW / 2, TW, 2, 1);
	wino_out(g, seq, label, Mx, out, bias, PW, OH / 2, TH, 0, OW / 2, 1, 2);
	wino_out(g, seq, label, Mx, out, bias, PW, OH / 2, TH, OW / 2, TW, 1, 1);
}

static int conv_int(Sdfg *g, LibNode *l, Node *seq, const char *label, const XpTile *t, const ConvAxis *ax, int nd,
                    const int64_t *ps, const int64_t *pb, int tn);

int expand_conv(Sdfg *g, LibNode *l, Node *seq, const char *label, const XpTile *t)
{
	int in = l->in[0], w = l->in[1], bias = l->in[2], out = l->out[0];
	Container *x = sdfg_c(g, in);
	int64_t G = lib_int(l, "groups", 1);
	int64_t s[3], p[3], d[3];
	int nd = lib_ints(l, "stride", s, 3);
	lib_ints(l, "padding", p, 3);
	lib_ints(l, "dilation", d, 3);
	int tr = (int)lib_int(l, "transposed", 0);
	int wd = const_known(g, w);
	int f32 = x->dt == DT_F32 && sdfg_c(g, w)->dt == DT_F32 && sdfg_c(g, out)->dt == DT_F32 &&
	          (bias < 0 || sdfg_c(g, bias)->dt == DT_F32);
	if (nd == 2 && G > 1 && G == dim(g, in, 1) && !tr && f32 && dim(g, out, 3) > 0 && dim(g, out, 2) > 0)
		return t->vec_lanes > 1 ? conv_depthwise(g, l, seq, label, t) : conv_depthwise_strips(g, l, seq, label, t);
	int64_t C = dim(g, in, 1), OC = dim(g, out, 1);
	int64_t Cg = C / G, OCg = OC / G;
	/* a run-time batch (dim -1) is an outer loop around the same kernels */
	int sized = (dim(g, in, 0) > 0 || !ex_isint(x->shape[0], NULL)) && C > 0;
	for (int i = 0; i < nd; i++)
		sized &= dim(g, out, 2 + i) > 0 && dim(g, in, 2 + i) > 0;
	int i8 = (int)lib_int(l, "int8", 0);
	if (i8 && (!sized || tr || G != 1 || nd < 1 || nd > 3 || (x->dt != DT_I8 && x->dt != DT_U8) ||
	           !int_zp_ok(lib_float(l, "a_zp", 0)))) { /* the integer pass checked it (conv_int_weights) */
		diag_error(g->src, "node '%s': an integer convolution (int8: 1) needs an int8 or uint8 input with a zero point "
		           "in [-128, 255], constant sizes, one group and no transposition", label);
		return -1;
	}
	if (!i8 && (!wd || !t->pack || !f32 || !sized || (OCg < 4 && !tr)))
		return conv_generic(g, l, seq, label);
	if (!i8 && t->winograd && nd == 2 && G == 1 && !tr && t->vec_lanes > 1 && C >= t->vec_lanes && dim(g, w, 2) == 3 &&
	    dim(g, w, 3) == 3 && s[0] == 1 && s[1] == 1 && d[0] == 1 && d[1] == 1 && dim(g, out, 2) >= 8 &&
	    dim(g, out, 3) >= 8 && wino_fits(g, t, in, out)) {
		conv_winograd(g, seq, label, t, in, w, out, bias, p);
		return 0;
	}
	int tn = t->tn;
	if (OCg < tn && t->vec_lanes && OCg <= t->vec_lanes)
		tn = t->vec_lanes;

	/* The axes of each dim: one for a direct convolution, one per stride
	 * phase for a transposed one. */
	ConvAxis *ph[3];
	int nph[3];
	int64_t rlo[3], rhi[3];
	for (int i = 0; i < nd; i++) {
		int64_t I = dim(g, in, 2 + i), O = dim(g, out, 2 + i), K = dim(g, w, 2 + i);
		nph[i] = tr ? (int)s[i] : 1;
		ph[i] = arena_alloc(g->arena, sizeof(ConvAxis) * (size_t)nph[i]);
		rlo[i] = 0, rhi[i] = I - 1;
		for (int r = 0; r < nph[i]; r++) {
			ConvAxis *a = &ph[i][r];
			if (tr)
				tconv_axis(a, O, K, s[i], p[i], d[i], r);
			else
				*a = (ConvAxis){0, O, 1, 0, s[i], d[i], -p[i], K, 0, 1};
			int64_t lo, hi;
			if (axis_reads(a, &lo, &hi))
				rlo[i] = MIN(rlo[i], lo), rhi[i] = MAX(rhi[i], hi);
		}
	}

	/* Zero-padded input copy as large as the kernels read ('same' padding
	 * may be asymmetric, and the output size bounds the right side). */
	int src = in, padded = 0;
	int64_t pb[3], ps[3];
	for (int i = 0; i < nd; i++) {
		pb[i] = -rlo[i];
		ps[i] = rhi[i] - rlo[i] + 1;
		padded |= ps[i] > dim(g, in, 2 + i);
		for (int r = 0; r < nph[i]; r++)
			ph[i][r].iadd += pb[i];
	}
	if (i8) {
		ConvAxis ax[3];
		for (int i = 0; i < nd; i++)
			ax[i] = ph[i][0];
		return conv_int(g, l, seq, label, t, ax, nd, ps, pb, tn);
	}
	if (padded)
		src = padded_input(g, seq, in, nd, ps, pb, label);

	/* 1x1: vectors of pixels in conv_pointwise; a strided one (ResNet's
	 * downsampling) reads a copy of the pixels it takes */
	int rows = 0, strided = nd == 2 && (s[0] > 1 || s[1] > 1);
	if (nd == 2 && G == 1 && !tr && !padded && t->vec_lanes > 1 && t->tn % t->vec_lanes == 0 && dim(g, w, 2) == 1 &&
	    dim(g, w, 3) == 1 && p[0] == 0 && p[1] == 0 &&
	    pointwise_pixels(C, dim(g, out, 2) * dim(g, out, 3), t->pw_max_c, t->pw_min_px))
		rows = pw_rows(g, t, strided ? -1 : in, out);
	if (rows > 0) {
		int pin = strided ? strided_input(g, seq, in, out, s, label) : in;
		ConvW *cw = arena_alloc(g->arena, sizeof *cw);
		*cw = (ConvW){g, w, 0, nd, OC, C, {ph[0][0], ph[1][0]}};
		int wp = pack_panels(g, arena_printf(g->arena, "%s_packed", sdfg_c(g, w)->name),
		                     (Panels){sdfg_root_of(g, w), 1, rows, C, OC, 0, 0, 0, conv_w_at, cw, 0});
		conv_pointwise(g, seq, label, t, pin, wp, out, bias, rows);
		return 0;
	}

	/* One kernel per combination of phases, each with its packed weights
	 * [G][NB][Cg*taps][tn]. */
	int ncomb = 1;
	for (int i = 0; i < nd; i++)
		ncomb *= nph[i];
	for (int cb = 0; cb < ncomb; cb++) {
		ConvAxis ax[3];
		int64_t taps = 1, any = 1;
		for (int i = nd - 1, rest = cb; i >= 0; rest /= nph[i], i--) {
			ax[i] = ph[i][rest % nph[i]];
			taps *= ax[i].nt;
			any &= ax[i].hi > ax[i].lo;
		}
		if (!any)
			continue;
		int wp = -1, ctn = tn;
		int64_t bv, N = MAX(dim(g, out, 0), 1) * G;
		if (taps > 0 && rows_form(t, ax, nd, Cg, N * ((OCg + tn - 1) / tn), &bv))
			ctn = rows_tn(t, taps, ax[1].hi - ax[1].lo, OCg, N, tn);
		if (taps > 0) {
			ConvW *cw = arena_alloc(g->arena, sizeof *cw);
			*cw = (ConvW){g, w, tr, nd, OCg, Cg, {ax[0], ax[1], ax[2]}};
			wp = pack_panels(g, arena_printf(g->arena, "%s_packed", sdfg_c(g, w)->name),
			                 (Panels){sdfg_root_of(g, w), (int)G, ctn, Cg * taps, OCg, 0, 0, 0, conv_w_at, cw, 0});
		}
		conv_tiled(g, seq, label, t, ax, nd, src, wp, out, bias, G, Cg, OCg, ctn, NULL);
	}
	return 0;
}

/* Direct loops: any dimensionality, groups, dilation, non-constant weights. */
static int conv_generic(Sdfg *g, LibNode *l, Node *seq, const char *label)
{
	int in = l->in[0], w = l->in[1], bias = l->in[2], out = l->out[0];
	Container *o = sdfg_c(g, out);
	int r = o->rank, nd = r - 2;
	int64_t G = lib_int(l, "groups", 1), s[3], p[3], d[3];
	lib_ints(l, "stride", s, 3);
	lib_ints(l, "padding", p, 3);
	lib_ints(l, "dilation", d, 3);
	int tr = (int)lib_int(l, "transposed", 0);
	/* weight [OC, C/G, k...], or transposed [C, OC/G, k...] */
	int64_t Cg = tr ? dim(g, w, 0) / G : dim(g, w, 1), OCg = dim(g, out, 1) / G;
	int vars[MAXDIM];
	Node *body = xp_nest(g, seq, out, vars);
	Dtype adt = o->dt == DT_F64 ? DT_F64 : DT_F32;
	int acc = xp_local(g, "acc", adt, 0, NULL, body->parent);
	Expr *none[1] = {NULL};
	Node *ib = xp_block(g, body, label);
	Operand z[1] = {opd_const(0)};
	sdfg_store(ib, sdfg_tasklet(g, ib, T_ASSIGN, adt, 1, z), xp_memlet(acc, 0, none), W_NONE);
	int vc, vk[3];
	Node *lc = xp_loop(g, body, N_FOR, "c", ex_int(g, 0), ex_int(g, Cg), 1, &vc);
	Node *cur = lc->body;
	for (int i = 0; i < nd; i++) {
		Node *lk = xp_loop(g, cur, N_FOR, "k", ex_int(g, 0), sdfg_c(g, w)->shape[2 + i], 1, &vk[i]);
		cur = lk->body;
	}
	Node *b = xp_block(g, cur, label);
	Expr *grp = ex_div(g, ex_sym(g, vars[1]), ex_int(g, OCg));
	Expr *xi[MAXDIM], *wi[MAXDIM];
	xi[0] = ex_sym(g, vars[0]);
	xi[1] = ex_add(g, ex_muli(g, grp, Cg), ex_sym(g, vc));
	wi[0] = tr ? xi[1] : ex_sym(g, vars[1]);
	wi[1] = tr ? ex_mod(g, ex_sym(g, vars[1]), ex_int(g, OCg)) : ex_sym(g, vc);
	Expr *rem = NULL;
	for (int i = 0; i < nd; i++) {
		if (tr) {
			/* o = i*s - p + k*d: input i = (o + p - k*d) / s where divisible */
			Expr *num = ex_sub(g, ex_addi(g, ex_sym(g, vars[2 + i]), p[i]), ex_muli(g, ex_sym(g, vk[i]), d[i]));
			xi[2 + i] = ex_div(g, num, ex_int(g, s[i]));
			if (s[i] > 1) {
				Expr *mi = ex_mod(g, num, ex_int(g, s[i]));
				rem = rem ? ex_add(g, rem, mi) : mi;
			}
		} else
			xi[2 + i] = ex_add(g, ex_addi(g, ex_muli(g, ex_sym(g, vars[2 + i]), s[i]), -p[i]), ex_muli(g, ex_sym(g, vk[i]), d[i]));
		wi[2 + i] = ex_sym(g, vk[i]);
	}
	Operand ab[2] = {opd_guarded(in, r, xi, 0), opd_mem(w, r, wi)};
	int pv = sdfg_tasklet(g, b, T_MUL, adt, 2, ab);
	if (rem) {
		/* taps whose input position is not an integer contribute nothing */
		Operand eq[2] = {opd_expr(rem), opd_const(0)};
		int ok = sdfg_tasklet(g, b, T_EQ, DT_BOOL, 2, eq);
		Operand wh[3] = {opd_val(ok), opd_val(pv), opd_const(0)};
		pv = sdfg_tasklet(g, b, T_WHERE, adt, 3, wh);
	}
	sdfg_store(b, pv, xp_memlet(acc, 0, none), W_SUM);
	Node *fb = xp_block(g, body, label);
	Operand a1[1] = {opd_mem(acc, 0, none)};
	/* the bias joins in the accumulator's type: float16/bfloat16 round
	 * once, at the store, as PyTorch's CPU convolution does */
	int v = sdfg_tasklet(g, fb, T_ASSIGN, adt, 1, a1);
	if (bias >= 0) {
		Expr *bi[1] = {ex_sym(g, vars[1])};
		Operand a2[2] = {opd_val(v), opd_mem(bias, 1, bi)};
		v = sdfg_tasklet(g, fb, T_ADD, adt, 2, a2);
	}
	sdfg_store(fb, v, xp_memlet(out, r, xp_vars(g, r, vars)), W_NONE);
	return 0;
}

/* ---- GEMM ------------------------------------------------------------------------ */

/* The epilogue value: alpha*acc + beta*bias[...] */
static int epilogue(Sdfg *g, Node *b, Operand accv, LibNode *l, int r, Expr *const *oidx, Dtype dt)
{
	double alpha = lib_float(l, "alpha", 1), beta = lib_float(l, "beta", 1);
	int bias = l->in[2];
	int v = sdfg_tasklet(g, b, T_ASSIGN, dt, 1, &accv);
	if (alpha != 1) {
		Operand m[2] = {opd_val(v), opd_const(alpha)};
		v = sdfg_tasklet(g, b, T_MUL, dt, 2, m);
	}
	if (bias >= 0 && beta != 0) {
		Operand bv = bcast_idx(g, bias, r, oidx);
		if (beta != 1) {
			Operand m[2] = {bv, opd_const(beta)};
			bv = opd_val(sdfg_tasklet(g, b, T_MUL, dt, 2, m));
		}
		Operand a[2] = {opd_val(v), bv};
		v = sdfg_tasklet(g, b, T_ADD, dt, 2, a);
	}
	return v;
}

/* A matrix extent the tiled kernels take: a positive constant, or a
 * run-time one (rows; the reduction). */
static int extent_ok(Sdfg *g, Expr *e)
{
	int64_t v, lo, hi;
	if (ex_isint(e, &v))
		return v > 0;
	ex_range(g, e, &lo, &hi);
	return lo >= 0;
}

static int rows_ok(Sdfg *g, int out)
{
	Container *o = sdfg_c(g, out);
	return extent_ok(g, o->shape[o->rank - 2]);
}

static int gemm_generic(Sdfg *g, LibNode *l, Node *seq, const char *label)
{
	int A = l->in[0], B = l->in[1], out = l->out[0];
	Container *o = sdfg_c(g, out), *a = sdfg_c(g, A), *bb = sdfg_c(g, B);
	int r = o->rank;
	int vars[MAXDIM];
	Node *body = xp_nest(g, seq, out, vars);
	Dtype adt = o->dt == DT_F64 ? DT_F64 : o->dt == DT_F16 || o->dt == DT_BF16 ? DT_F32 : o->dt;
	int acc = xp_local(g, "acc", adt, 0, NULL, body->parent);
	Expr *none[1] = {NULL};
	Node *ib = xp_block(g, body, label);
	Operand z[1] = {opd_const(0)};
	sdfg_store(ib, sdfg_tasklet(g, ib, T_ASSIGN, adt, 1, z), xp_memlet(acc, 0, none), W_NONE);
	int vk;
	Node *lk = xp_loop(g, body, N_FOR, "k", ex_int(g, 0), a->shape[a->rank - 1], 1, &vk);
	Node *b = xp_block(g, lk->body, label);
	Expr *oi[MAXDIM];
	for (int i = 0; i < r; i++)
		oi[i] = ex_sym(g, vars[i]);
	/* A[..., m, k], B[..., k, n] with broadcast batch dims */
	Expr *ai[MAXDIM], *bi[MAXDIM];
	Operand ao = bcast_idx(g, A, r, oi), bo = bcast_idx(g, B, r, oi);
	memcpy(ai, ao.m.idx, sizeof ai);
	memcpy(bi, bo.m.idx, sizeof bi);
	ai[a->rank - 1] = ex_sym(g, vk);
	ai[a->rank - 2] = oi[r - 2];
	bi[bb->rank - 2] = ex_sym(g, vk);
	bi[bb->rank - 1] = oi[r - 1];
	Operand ab[2] = {opd_mem(A, a->rank, ai), opd_mem(B, bb->rank, bi)};
	sdfg_store(b, sdfg_tasklet(g, b, T_MUL, adt, 2, ab), xp_memlet(acc, 0, none), W_SUM);
	Node *fb = xp_block(g, body, label);
	/* alpha, beta and the bias join in the accumulator's type: float16 and
	 * bfloat16 round once, as PyTorch's CPU GEMM does */
	int v = epilogue(g, fb, opd_mem(acc, 0, none), l, r, oi, adt);
	if (adt != o->dt) {
		Operand cv[1] = {opd_val(v)};
		v = sdfg_tasklet(g, fb, T_ASSIGN, o->dt, 1, cv);
	}
	sdfg_store(fb, v, xp_memlet(out, r, oi), W_NONE);
	return 0;
}

/* A contiguous copy of B made in the same subtree (run-time packing), for
 * a B that is not unit-stride along N (a transposed view, linear's weight^T). */
static int gemm_copy_b(Sdfg *g, Node *seq, int B, const char *label)
{
	Container *b = sdfg_c(g, B);
	Expr *sh[MAXDIM];
	for (int i = 0; i < b->rank; i++)
		sh[i] = b->shape[i];
	int c = sdfg_add_container_x(g, arena_printf(g->arena, "%s_rowmajor", b->name), DT_F32, CK_TRANSIENT, b->rank, sh);
	sdfg_c(g, c)->origin = "";
	int v[MAXDIM];
	Node *body = xp_nest(g, seq, c, v);
	Node *blk = xp_block(g, body, label);
	Expr **idx = xp_vars(g, b->rank, v);
	Operand rd[1] = {opd_mem(B, b->rank, idx)};
	sdfg_store(blk, sdfg_tasklet(g, blk, T_ASSIGN, DT_F32, 1, rd), xp_memlet(c, b->rank, idx), W_NONE);
	return c;
}

/* GEMM with a B known only at run time: the same register tile as the
 * packed kernel, reading B[..., k, n0 + o] in place (unit stride along N,
 * after a copy if needed). N splits into full tn-wide blocks (vector
 * loads) and one narrower remainder block; M into full tm-row tiles and a
 * remainder; each of the four kernels has constant trip counts. */
static int gemm_direct(Sdfg *g, LibNode *l, Node *seq, const char *label, const XpTile *t)
{
	int A = l->in[0], B = l->in[1], out = l->out[0];
	Container *o = sdfg_c(g, out), *a = sdfg_c(g, A);
	int r = o->rank, rb = sdfg_c(g, B)->rank;
	int64_t M = dim(g, out, r - 2), N = dim(g, out, r - 1), bst = 0;
	Expr *Mx = o->shape[r - 2], *K = sdfg_c(g, B)->shape[rb - 2];
	if (t->bf16_operands && a->dt == DT_F32 && sdfg_c(g, B)->dt == DT_F32) { /* contraction_precision medium */
		A = copy_of(g, seq, A, a->rank, a->shape, NULL, COPY_BF16, -1, 0, "bf16", label);
		B = copy_of(g, seq, B, rb, sdfg_c(g, B)->shape, NULL, COPY_BF16, -1, 0, "bf16", label);
	}
	if (!ex_isint(sdfg_c(g, B)->stride[rb - 1], &bst) || (bst != 1 && N > 1))
		B = gemm_copy_b(g, seq, B, label);
	int tn = t->tn;
	if (N < tn && t->vec_lanes && N >= t->vec_lanes)
		tn = t->vec_lanes;
	int tm = M < 0 ? t->tm : (int)MIN((int64_t)t->tm, M);
	int64_t NBf = N / tn, Nr = N - NBf * tn;
	RowParts rp = row_parts(g, Mx, tm);
	int bv[MAXDIM];
	Node *cur = seq;
	for (int i = 0; i < r - 2; i++) {
		Node *lb = xp_loop(g, cur, N_MAP, "b", ex_int(g, 0), o->shape[i], 1, &bv[i]);
		cur = lb->body;
	}
	for (int npart = 0; npart < 2; npart++) {
		int ttn = npart ? (int)Nr : tn;
		if (npart ? Nr == 0 : NBf == 0)
			continue;
		Node *ncur = cur;
		Expr *n0 = ex_int(g, NBf * tn);
		if (!npart) {
			int vnb;
			Node *lnb = xp_loop(g, cur, N_MAP, "nb", ex_int(g, 0), ex_int(g, NBf), 1, &vnb);
			ncur = lnb->body;
			n0 = ex_muli(g, ex_sym(g, vnb), tn);
		}
		for (int part = 0; part < rp.n; part++) {
			int ttm = rp.tm[part];
			int vm, acc, vk, vx, vo;
			Node *lm = tile_open_x(g, ncur, "m", rp.lo[part], rp.hi[part], ttm, ttn, label, &vm, &acc);
			Node *lk = xp_loop(g, lm->body, N_FOR, "k", ex_int(g, 0), K, 1, &vk);
			Node *ub = tile_update_block(g, lk->body, ttm, ttn, label, &vx, &vo);
			Expr *oi[MAXDIM];
			for (int i = 0; i < r - 2; i++)
				oi[i] = ex_sym(g, bv[i]);
			oi[r - 2] = ex_add(g, ex_sym(g, vm), ex_sym(g, vx));
			oi[r - 1] = ex_add(g, n0, ex_sym(g, vo));
			Operand ao = bcast_idx(g, A, r, oi), bo = bcast_idx(g, B, r, oi);
			ao.m.idx[a->rank - 1] = ex_sym(g, vk);
			ao.m.idx[a->rank - 2] = oi[r - 2];
			bo.m.idx[rb - 2] = ex_sym(g, vk);
			bo.m.idx[rb - 1] = oi[r - 1];
			Operand ab[2] = {ao, bo};
			Expr *acci[2] = {ex_sym(g, vx), ex_sym(g, vo)};
			sdfg_store(ub, sdfg_tasklet(g, ub, T_MUL, DT_F32, 2, ab), xp_memlet(acc, 2, acci), W_SUM);
			int sx, so;
			Node *lsx = xp_loop(g, lm->body, N_MAP, "x", ex_int(g, 0), ex_int(g, ttm), 1, &sx);
			Node *lso = xp_loop(g, lsx->body, N_MAP, "o", ex_int(g, 0), ex_int(g, ttn), 1, &so);
			Node *sb = xp_block(g, lso->body, label);
			oi[r - 2] = ex_add(g, ex_sym(g, vm), ex_sym(g, sx));
			oi[r - 1] = ex_add(g, n0, ex_sym(g, so));
			Expr *ri[2] = {ex_sym(g, sx), ex_sym(g, so)};
			int v = epilogue(g, sb, opd_mem(acc, 2, ri), l, r, oi, DT_F32);
			sdfg_store(sb, v, xp_memlet(out, r, oi), W_NONE);
		}
	}
	return 0;
}

/* ---- int8 weights, dequantized in registers ------------------------------------------
 * A GEMM whose constant B is a folded dequantization of int8 weights (ir.h,
 * Dequant: PT2E's weights, torchao's int8 and intx weight-only in Core
 * ATen; int8 or uint8) packs the integers into its panels, a quarter of
 * float32's bytes, or two to a byte where they all fit 4 bits (torchao's
 * int4: -8..7; uint4: 0..15), an eighth; and the scales and zero points,
 * one per G rows of B and column (G = K: per column; torchao's groups: G
 * = group size), into small float32 panels [NB][K/G][tn]. The update
 * computes (q - z) * s in registers, rounded as the folded weights are, so
 * the product is the float32 kernel's on the same weights, bit for bit. A
 * byte of nibbles is split in int32 lanes (low: a mask, or a shift up and
 * an arithmetic shift down; high: a shift), and the update adds its two
 * rows in order. B must be the folded
 * constant viewed as [N, K] transposed (a linear layer's weight) or as
 * [K, N]: element (k, n) then reads its parts at an offset a(n) + b(k). */
typedef struct {
	const Dequant *d;
	int64_t *a[3], *b[3];  /* per part: the offsets' terms of n and of k */
	int64_t G;
	int part;              /* of a parameter panel: 1 s, 2 z */
	Dtype dt;              /* its dtype */
	int64_t K, N, tn;
} DqMap;

static int64_t dq_q_at(const void *ctx, int gi, int64_t k, int64_t n)
{
	const DqMap *m = ctx;
	(void)gi;
	return m->a[0][n] + m->b[0][k];
}

/* The float32 parameter panel [NB][K/G][tn] of part m->part, zeros past N. */
static int dq_par_make(Sdfg *g, const ConstSrc *cs, void *dst)
{
	const DqMap *m = cs->ctx;
	int c = m->part == 1 ? m->d->s : m->d->z, root = sdfg_root_of(g, c);
	const void *src = sdfg_const_get(g, root);
	if (!src)
		return -1;
	int64_t tn = m->tn, NB = (m->N + tn - 1) / tn, KG = m->K / m->G;
	float *d = dst;
	for (int64_t nb = 0; nb < NB; nb++)
		for (int64_t kg = 0; kg < KG; kg++)
			for (int64_t i = 0; i < tn; i++, d++) {
				int64_t n = nb * tn + i;
				*d = n < m->N ? (float)sdfg_elem(m->dt, src, m->a[m->part][n] + m->b[m->part][kg * m->G]) : 0.0f;
			}
	sdfg_const_put(g, root);
	return 0;
}

/* The map of B (constant sizes K, N) onto its folded dequantization's
 * parts, with the group size; NULL if B's view or the parameters do not
 * have the form above. */
static DqMap *dq_map(Sdfg *g, int B, int64_t K, int64_t N)
{
	int root = sdfg_root_of(g, B);
	Container *bc = sdfg_c(g, B), *t = sdfg_c(g, root);
	const Dequant *d = t->dq;
	int64_t s0 = -1, s1 = -1, ofs = 0, sh[MAXDIM];
	Dtype qd = d ? sdfg_c(g, sdfg_root_of(g, d->q))->dt : DT_F32;
	if ((qd != DT_I8 && qd != DT_U8) || bc->rank != 2 || !ex_isint(bc->stride[0], &s0) ||
	    !ex_isint(bc->stride[1], &s1) || (bc->offset && !ex_isint(bc->offset, &ofs)) || ofs != 0)
		return NULL;
	int nmajor = s0 == 1 && s1 == K, kmajor = s0 == N && s1 == 1;
	if (!nmajor && !kmajor)
		return NULL;
	int r = t->rank, p = 0;
	int64_t lead = 1;
	for (int i = 0; i < r; i++)
		if (!ex_isint(t->shape[i], &sh[i]))
			return NULL;
	while (p < r && lead < (nmajor ? N : K))
		lead *= sh[p++];
	if (lead != (nmajor ? N : K))
		return NULL;
	DqMap *m = arena_alloc(g->arena, sizeof *m);
	memset(m, 0, sizeof *m);
	m->d = d, m->K = K, m->N = N;
	for (int part = 0; part < 3; part++) {
		if ((part == 1 && d->s < 0) || (part == 2 && d->z < 0))
			continue;
		m->a[part] = arena_alloc(g->arena, sizeof(int64_t) * (size_t)(N + K));
		m->b[part] = m->a[part] + N;
		int64_t oi[MAXDIM] = {0};
		int64_t base = sdfg_dequant_at(g, d, part, r, oi);
		/* an index of the leading dims (n, or k) and of the trailing ones */
		for (int side = 0; side < 2; side++) {
			int64_t cnt = side == 0 ? (nmajor ? N : K) : (nmajor ? K : N);
			int lo = side == 0 ? 0 : p, hi = side == 0 ? p : r;
			int64_t *dst = (side == 0) == nmajor ? m->a[part] : m->b[part];
			for (int64_t v = 0; v < cnt; v++) {
				int64_t rest = v;
				memset(oi, 0, sizeof oi);
				for (int i = hi - 1; i >= lo; i--) {
					oi[i] = rest % sh[i];
					rest /= sh[i];
				}
				dst[v] = sdfg_dequant_at(g, d, part, r, oi) - (side == 0 ? 0 : base);
			}
		}
	}
	/* G: the scales and zero points are constant over each G rows */
	static const int64_t cand[] = {0, 1024, 512, 256, 128, 64, 32, 16, 8, 4, 2, 1};
	for (size_t i = 0; i < COUNTOF(cand) && !m->G; i++) {
		int64_t G = cand[i] ? cand[i] : K, ok = G <= K && K % G == 0;
		for (int part = 1; part < 3 && ok; part++)
			for (int64_t k = 0; m->b[part] && k < K && ok; k++)
				ok = m->b[part][k] == m->b[part][k - k % G];
		if (ok)
			m->G = G;
	}
	return m;
}

/* Are the zero points all 0 (symmetric weights: no subtraction)? Their
 * bytes are small (one per group and column). */
static int dq_zeros(Sdfg *g, const DqMap *m)
{
	int root = sdfg_root_of(g, m->d->z);
	const void *z = sdfg_const_get(g, root);
	if (!z)
		return 0;
	Dtype dt = sdfg_c(g, m->d->z)->dt;
	int zero = 1;
	for (int64_t n = 0; n < m->N && zero; n++)
		for (int64_t k = 0; k < m->K && zero; k += m->G)
			zero = (float)sdfg_elem(dt, z, m->a[2][n] + m->b[2][k]) == 0.0f;
	sdfg_const_put(g, root);
	return zero;
}

/* The int8 panels of B and the update acc += A * ((q - z) * s) of them in
 * block ub (ao: A's operand; nb, k, o: the panel, row and lane symbols);
 * 0, or -1 (nothing made) when B is not such a dequantization. */
typedef struct {
	int qp, sp, zp;     /* panels; -1: none (a number) */
	double sc, zc;
	int64_t G;
	Dtype nib;          /* DT_U8 (0..15), DT_I8 (-8..7): qp holds two integers a byte,
	                     * rows 2i and 2i + 1 in its low and high nibble; else DT_F32 */
} DqPanels;

/* Do all of m's integers fit 4 bits, as DT_U8 (0..15) or DT_I8 (-8..7)?
 * DT_F32 if not, or for an odd K (the nibbles pair rows). */
static Dtype dq_nibbles(Sdfg *g, const DqMap *m)
{
	int root = sdfg_root_of(g, m->d->q);
	const void *q = sdfg_const_get(g, root);
	if (!q || m->K % 2)
		return DT_F32;
	Dtype dt = sdfg_c(g, root)->dt;
	double lo = 0, hi = 0;
	for (int64_t n = 0; n < m->N && hi - lo <= 15; n++)
		for (int64_t k = 0; k < m->K; k++) {
			double v = sdfg_elem(dt, q, dq_q_at(m, 0, k, n));
			lo = v < lo ? v : lo, hi = v > hi ? v : hi;
		}
	sdfg_const_put(g, root);
	return lo >= 0 && hi <= 15 ? DT_U8 : lo >= -8 && hi <= 7 ? DT_I8 : DT_F32;
}

/* The nibble panels [1][NB][K/2][tn]: byte (nb, i, o) holds the integers
 * of rows 2i (low) and 2i + 1 (high) of column nb*tn + o; zeros past N. */
static int nib_make(Sdfg *g, const ConstSrc *cs, void *dst)
{
	const DqMap *m = cs->ctx;
	int root = sdfg_root_of(g, m->d->q);
	const void *q = sdfg_const_get(g, root);
	if (!q)
		return -1;
	Dtype dt = sdfg_c(g, root)->dt;
	int64_t tn = m->tn, NB = (m->N + tn - 1) / tn;
	uint8_t *d = dst;
	for (int64_t nb = 0; nb < NB; nb++)
		for (int64_t i = 0; i < m->K / 2; i++)
			for (int64_t o = 0; o < tn; o++, d++) {
				int64_t n = nb * tn + o, lo = 0, hi = 0;
				if (n < m->N) {
					lo = (int64_t)sdfg_elem(dt, q, dq_q_at(m, 0, 2 * i, n));
					hi = (int64_t)sdfg_elem(dt, q, dq_q_at(m, 0, 2 * i + 1, n));
				}
				*d = (uint8_t)((lo & 15) | (hi & 15) << 4);
			}
	sdfg_const_put(g, root);
	return 0;
}

static int dq_panels(Sdfg *g, int B, int64_t K, int64_t N, int tn, int nibbles, DqPanels *o)
{
	DqMap *m = dq_map(g, B, K, N);
	if (!m)
		return -1;
	const Dequant *d = m->d;
	const char *nm = sdfg_c(g, sdfg_root_of(g, d->q))->name;
	o->nib = nibbles ? dq_nibbles(g, m) : DT_F32;
	if (o->nib != DT_F32) {
		DqMap nm4 = *m;
		nm4.tn = tn;
		int64_t sh[4] = {1, (N + tn - 1) / tn, K / 2, tn};
		o->qp = sdfg_const_new(g, arena_printf(g->arena, "%s_nibbles", nm), o->nib, 4, sh, nib_make, &nm4, sizeof nm4);
	} else
		o->qp = pack_panels(g, arena_printf(g->arena, "%s_packed", nm),
		                    (Panels){sdfg_root_of(g, d->q), 1, tn, K, N, 0, 0, 0, dq_q_at, m, 0});
	o->sc = d->sc, o->zc = d->zc, o->G = m->G;
	int64_t NB = (N + tn - 1) / tn, shape[3] = {NB, K / m->G, tn};
	for (int part = 1; part < 3; part++) {
		int c = part == 1 ? d->s : d->z, *dst = part == 1 ? &o->sp : &o->zp;
		*dst = -1;
		if (c < 0 || (part == 2 && dq_zeros(g, m)))
			continue;
		DqMap pm = *m;
		pm.part = part;
		pm.tn = tn;
		pm.dt = sdfg_c(g, c)->dt;
		*dst = sdfg_const_new(g, arena_printf(g->arena, "%s_%s", nm, part == 1 ? "scales" : "zeros"), DT_F32, 3, shape,
		                      dq_par_make, &pm, sizeof pm);
	}
	return 0;
}

/* b's weight operand for panel nb, row k, lane o: (q - z) * s. Nibbles:
 * q is the low (h 0) or high (h 1) half of byte row k/2, split in int32
 * lanes (a sign-extending shift pair, or a mask, for the low one). */
static Operand dq_weight(Sdfg *g, Node *b, const DqPanels *p, Expr *nb, Expr *k, Expr *o, int h)
{
	int nib = p->nib != DT_F32;
	Expr *kb = nib ? ex_div(g, k, ex_int(g, 2)) : k; /* the byte row */
	/* an even group: both nibbles of a byte in it (one load of the scale) */
	Expr *pi[3] = {nb, nib && p->G % 2 == 0 ? ex_div(g, kb, ex_int(g, p->G / 2)) : ex_div(g, k, ex_int(g, p->G)), o};
	Expr *qi[4] = {ex_int(g, 0), nb, kb, o};
	Operand v = opd_mem(p->qp, 4, qi);
	if (nib) {
		if (h)
			v = opd_val(xp_tk2(g, b, T_SHR, DT_I32, v, opd_const(4)));
		else if (p->nib == DT_U8)
			v = opd_val(xp_tk2(g, b, T_AND, DT_I32, v, opd_const(15)));
		else
			v = opd_val(xp_tk2(g, b, T_SHR, DT_I32, opd_val(xp_tk2(g, b, T_SHL, DT_I32, v, opd_const(28))), opd_const(28)));
		v = opd_val(sdfg_tasklet(g, b, T_CAST, DT_F32, 1, &v));
	}
	if (p->zp >= 0 || p->zc != 0) {
		Operand z[2] = {v, p->zp >= 0 ? opd_mem(p->zp, 3, pi) : opd_const(p->zc)};
		v = opd_val(sdfg_tasklet(g, b, T_SUB, DT_F32, 2, z));
	}
	Operand sv[2] = {v, p->sp >= 0 ? opd_mem(p->sp, 3, pi) : opd_const(p->sc)};
	return opd_val(sdfg_tasklet(g, b, T_MUL, DT_F32, 2, sv));
}

/* The loop nest of a GEMM over packed panels of B (N constant, split in NB
 * panels of pw columns): batch maps, the panels, the row tiles (row_parts),
 * each with its accumulator tile acc[tm][tw] of type adt, a k loop to K
 * (each k per terms: a byte of int4 weights holds two; an unpacked panel,
 * over kw, one each; float32 sums in blocks of sum_block terms, red_loop)
 * with the update block, and the stores. The kernel fills the blocks:
 * update(ub) adds A[rows + x, k] times the panel's [nb][k][po] into
 * acc[x][o]; store(sb) writes out at oi from acc[x][o], po being the
 * panel's lane of o.
 *
 * A tile's width tw is tn, or more where the panel is wider (pw > tn)
 * and the tile has few rows: up to cap accumulators (the category's
 * tm x tn) whatever its height. A GEMV's row (a decode step) then sums pw/tn times as many
 * columns at once: with tn's two vectors it waited on the latency of
 * their two multiply-add chains. Each sum keeps its order over k. */
typedef struct Tiles Tiles;
struct Tiles {
	int A, acc;
	Expr **oi;                 /* the output index (rows: m + x; the last dim: the column) */
	Expr *nb, *k, *x, *o, *po; /* symbols of the panel, the reduction, the tile's row and lane; o's lane in the panel */
	void (*update)(Sdfg *g, const Tiles *s, Node *ub, Operand a);
	int (*store)(Sdfg *g, const Tiles *s, Node *sb);
	/* optional: the tw columns of the panel from lane j written out once,
	 * in seq, to a local [kw][tw] of owner that the whole row tiles read
	 * (where they run: runs is 0 or 1); its id, or -1 */
	int (*unpack)(Sdfg *g, const Tiles *s, Node *owner, Node *seq, int tw, Expr *j, Expr *runs, const char *label);
	int wf;                    /* the unpacked panel the update reads, or -1 */
	Expr *kw;                  /* the reduction's length over it */
	const void *ctx;
	LibNode *l;
};

/* Can a GEMM's rows be the last two dims before the columns, flattened
 * (row m is (m / S, m % S), which the simplifier adds back up to m)? Where
 * out and A have those two dims, of constant sizes, each run contiguous
 * over them: a [1, 7, 7, 768] activation is 49 rows, not 7 matrices of 7
 * (ConvNeXt's last stage read its 9 MB of weights once per 7 rows). */
static int rows_flat(Sdfg *g, int A, int out)
{
	int r = sdfg_c(g, out)->rank;
	if (r < 3 || sdfg_c(g, A)->rank != r || dim(g, out, r - 3) <= 1 || dim(g, out, r - 2) <= 0)
		return 0;
	for (int i = 0; i < 2; i++) {
		Container *c = sdfg_c(g, i ? A : out);
		int64_t s2, s3;
		if (!ex_eq(c->shape[r - 3], sdfg_c(g, out)->shape[r - 3]) || !ex_eq(c->shape[r - 2], sdfg_c(g, out)->shape[r - 2]) ||
		    !ex_isint(c->stride[r - 2], &s2) || !ex_isint(c->stride[r - 3], &s3) || s3 != s2 * dim(g, out, r - 2))
			return 0;
	}
	return 1;
}

/* Row m of the output's indices oi (and A's, a memlet of the same rank). */
static void set_row(Sdfg *g, Expr **oi, int r, int64_t flat, Expr *m)
{
	if (flat)
		oi[r - 3] = ex_div(g, m, ex_int(g, flat)), oi[r - 2] = ex_mod(g, m, ex_int(g, flat));
	else
		oi[r - 2] = m;
}

static void packed_tiles(Sdfg *g, Node *seq, const char *label, Tiles *s, int tm, int tn, int pw, int cap, int64_t N,
                         Expr *K, int per, Dtype adt, int64_t sum_block)
{
	int out = s->l->out[0];
	Container *o = sdfg_c(g, out), *a = sdfg_c(g, s->A);
	int r = o->rank;
	int64_t NB = (N + pw - 1) / pw, flat = rows_flat(g, s->A, out) ? dim(g, out, r - 2) : 0;
	Expr *M = flat ? ex_int(g, dim(g, out, r - 3) * flat) : o->shape[r - 2];
	int bv[MAXDIM];
	Node *cur = seq;
	for (int i = 0; i < r - 2 - !!flat; i++) {
		Node *lb = xp_loop(g, cur, N_MAP, "b", ex_int(g, 0), o->shape[i], 1, &bv[i]);
		cur = lb->body;
	}
	int vnb;
	Node *lnb = xp_loop(g, cur, N_MAP, "nb", ex_int(g, 0), ex_int(g, NB), 1, &vnb);
	RowParts rp = row_parts(g, M, tm);
	Expr *oi[MAXDIM];
	s->oi = oi;
	s->nb = ex_sym(g, vnb);
	for (int part = 0; part < rp.n; part++) {
		int ttm = rp.tm[part], tw = tn;
		while (tw * 2 <= pw && ttm * tw * 2 <= cap)
			tw *= 2;
		Node *owner = lnb;
		Expr *j = ex_int(g, 0); /* the tile's first lane in the panel */
		if (tw < pw) {
			int vj;
			owner = xp_loop(g, lnb->body, N_MAP, "j", ex_int(g, 0), ex_int(g, pw), tw, &vj);
			j = ex_sym(g, vj);
		}
		Node *pb = owner->body;
		/* whole tiles of several rows, 2 at least (a run-time M, or M >= 2 tm),
		 * read the panel once unpacked; a row tile runs when the part does */
		s->wf = -1;
		int64_t mc;
		if (s->unpack && ttm == tm && tm > 1 && (!ex_isint(M, &mc) || mc >= 2 * tm)) {
			Expr *runs = ex_min(g, ex_int(g, 1), ex_div(g, ex_sub(g, rp.hi[part], rp.lo[part]), ex_int(g, tm)));
			s->wf = s->unpack(g, s, owner, pb, tw, j, runs, label);
		}
		int vm, vk, vx, vo, acc, sum;
		Node *lm = tile_open_dt(g, pb, "m", rp.lo[part], rp.hi[part], ttm, tw, label, &vm, &acc, adt);
		Expr *kn = s->wf >= 0 ? s->kw : K;
		Node *lk = adt == DT_F32 ? red_loop(g, lm->body, lm, "k", kn, sum_block, s->wf >= 0 ? 1 : per, ttm, tw, acc, label, &vk,
		                                    &sum)
		                         : xp_loop(g, lm->body, N_FOR, "k", ex_int(g, 0), kn, 1, &vk);
		if (adt != DT_F32)
			sum = acc;
		s->acc = sum; /* the update adds into the block's tile, the store reads the whole sum */
		Node *ub = tile_update_block(g, lk->body, ttm, tw, label, &vx, &vo);
		for (int i = 0; i < r - 2 - !!flat; i++)
			oi[i] = ex_sym(g, bv[i]);
		set_row(g, oi, r, flat, ex_add(g, ex_sym(g, vm), ex_sym(g, vx)));
		oi[r - 1] = ex_int(g, 0);
		Operand ao = bcast_idx(g, s->A, r, oi);
		ao.m.idx[a->rank - 1] = ex_sym(g, vk);
		ao.m.idx[a->rank - 2] = oi[r - 2];
		if (flat)
			ao.m.idx[a->rank - 3] = oi[r - 3];
		s->k = ex_sym(g, vk), s->x = ex_sym(g, vx), s->o = ex_sym(g, vo), s->po = ex_add(g, j, s->o);
		s->update(g, s, ub, ao);
		s->acc = acc;
		/* store */
		int sx, so;
		Expr *col = ex_add(g, ex_muli(g, s->nb, pw), j);
		Expr *ohi = N % pw == 0 ? ex_int(g, tw) : ex_min(g, ex_int(g, tw), ex_sub(g, ex_int(g, N), col));
		Node *lsx = xp_loop(g, lm->body, N_MAP, "x", ex_int(g, 0), ex_int(g, ttm), 1, &sx);
		Node *lso = xp_loop(g, lsx->body, N_MAP, "o", ex_int(g, 0), ohi, 1, &so);
		Node *sb = xp_block(g, lso->body, label);
		set_row(g, oi, r, flat, ex_add(g, ex_sym(g, vm), ex_sym(g, sx)));
		oi[r - 1] = ex_add(g, col, ex_sym(g, so));
		s->x = ex_sym(g, sx), s->o = ex_sym(g, so), s->po = ex_add(g, j, s->o);
		int v = s->store(g, s, sb);
		sdfg_store(sb, v, xp_memlet(out, r, oi), W_NONE);
	}
}

/* The float32 kernel: acc += A * B, B a float panel (bp) or int8 weights
 * dequantized in registers (dq); whole row tiles read them dequantized
 * (or a bfloat16/float16 panel widened) once per panel instead, where K x
 * tw floats fit unpack_bytes (prefill: tm rows of products per weight
 * would not hide the conversion; a decode step's row converts in
 * registers). */
typedef struct {
	int bp;
	const DqPanels *dq;
	int64_t K, unpack_bytes;
} FloatTiles;

static int float_unpack(Sdfg *g, const Tiles *s, Node *owner, Node *seq, int tw, Expr *j, Expr *runs,
                        const char *label)
{
	const FloatTiles *f = s->ctx;
	const DqPanels *p = f->dq;
	Dtype bdt = sdfg_c(g, f->bp)->dt;
	if ((!p && bdt != DT_BF16 && bdt != DT_F16) || f->K * tw * 4 > f->unpack_bytes)
		return -1;
	int nib = p && p->nib != DT_F32, vk, vo;
	int64_t sh[2] = {f->K, tw};
	int wf = xp_local(g, "wf", DT_F32, 2, sh, owner);
	Node *lk = xp_loop(g, seq, N_FOR, "k", ex_int(g, 0), ex_mul(g, ex_int(g, nib ? f->K / 2 : f->K), runs), 1, &vk);
	Node *lo = xp_loop(g, lk->body, N_MAP, "o", ex_int(g, 0), ex_int(g, tw), 1, &vo);
	Node *b = xp_block(g, lo->body, label);
	for (int h = 0; h <= nib; h++) {
		Expr *k = nib ? ex_addi(g, ex_muli(g, ex_sym(g, vk), 2), h) : ex_sym(g, vk), *wi[2] = {k, ex_sym(g, vo)};
		Expr *bi[4] = {ex_int(g, 0), s->nb, k, ex_add(g, j, ex_sym(g, vo))};
		Operand w = p ? dq_weight(g, b, p, bi[1], k, bi[3], h) : opd_mem(f->bp, 4, bi);
		int v = p ? w.val : sdfg_tasklet(g, b, T_ASSIGN, DT_F32, 1, &w);
		sdfg_store(b, v, xp_memlet(wf, 2, wi), W_NONE);
	}
	return wf;
}

static void float_update(Sdfg *g, const Tiles *s, Node *ub, Operand ao)
{
	const FloatTiles *f = s->ctx;
	Expr *acci[2] = {s->x, s->o};
	/* nibbles in registers: s->k counts bytes, rows 2k and 2k + 1, in order */
	int nib = s->wf < 0 && f->dq && f->dq->nib != DT_F32, ka = sdfg_c(g, s->A)->rank - 1;
	for (int h = 0; h <= nib; h++) {
		Expr *k = nib ? ex_addi(g, ex_muli(g, s->k, 2), h) : s->k;
		Expr *wi[2] = {k, s->o}, *bi[4] = {ex_int(g, 0), s->nb, k, s->po};
		Operand ab[2] = {ao, s->wf >= 0 ? opd_mem(s->wf, 2, wi)
		                 : f->dq   ? dq_weight(g, ub, f->dq, s->nb, k, s->po, h)
		                           : opd_mem(f->bp, 4, bi)};
		if (nib)
			ab[0].m.idx[ka] = k;
		sdfg_store(ub, sdfg_tasklet(g, ub, T_MUL, DT_F32, 2, ab), xp_memlet(s->acc, 2, acci), W_SUM);
	}
}

static int float_store(Sdfg *g, const Tiles *s, Node *sb)
{
	Expr *ri[2] = {s->x, s->o};
	return epilogue(g, sb, opd_mem(s->acc, 2, ri), s->l, sdfg_c(g, s->l->out[0])->rank, s->oi, DT_F32);
}

/* ---- the integer kernel ----------------------------------------------------------------
 * int8 (or uint8) A times int8 B accumulated in int32, per k at a time,
 * in one of int_forms (XpTile.int_form): A's rows are packed at run time
 * (shifted as the form needs; the zero point moves with them), B's panels
 * [NB][K/per][tn] at compile time, and the update is the form's tasklet:
 * on the CPUs T_DOT2 over int16 pairs (pmaddwd: exact for 8-bit operands)
 * or T_DOT4 over four bytes (vpdpbusd), on the GPUs an int32 T_MUL of int8
 * bytes, which the GPU plan gives the int8 tensor cores. Two uses:
 *   - aten._int_mm (B a constant int8 matrix): the int32 sums (less
 *     shift * colsum(B), where the form shifts A);
 *   - a GEMM that the integer pass (ir/passes/integer.c) found between
 *     dequantizations: A quantized per tensor (scale sa, zero point za,
 *     numbers or run-time tensors), B int8 weights with one scale per
 *     column and no zero point (folded, ir.h Dequant). Then
 *         out = (acc - za * colsum(B)[n]) * (sa * sb[n]) + bias,
 *     exact in int32 up to one float rounding of the scaled sum, where
 *     eager rounds every dequantized operand and every partial sum. */
typedef struct IntB IntB;
struct IntB {
	int src;              /* the int8 constant (B, or its Dequant's integers) */
	int64_t K, N, tn;     /* K: B's rows (channels) */
	int64_t taps;         /* a convolution's taps per channel: row k of B is (c, j) = (k / taps, k % taps) */
	int64_t s0, s1, ofs;  /* _int_mm: element (k, n) at ofs + k*s0 + n*s1 */
	const DqMap *m;       /* a GEMM's Dequant: the integers at m's offsets */
	const Dequant *d;     /* a convolution's: weight [N][K/taps][j...] */
	const ConvW *cw;
	double sa, za;        /* the activation's parameters, numbers */
	int per;              /* k per word of part 0 (int_forms) */
	int part;             /* of a column panel: 0 words, 1 za * colsum, 2 colsum, 3 sa * sb, 4 sb, 5 int8 */
};

/* The integer of element (c*taps + j, n) of B. */
static int64_t intb_at(Sdfg *g, const IntB *b, int64_t k, int64_t n)
{
	if (b->m)
		return b->m->a[0][n] + b->m->b[0][k];
	if (b->d) {
		int64_t idx[MAXDIM];
		conv_w_idx(b->cw, 0, k, n, idx);
		return sdfg_dequant_at(g, b->d, 0, b->cw->nd + 2, idx);
	}
	return b->ofs + k * b->s0 + n * b->s1;
}

static double intb_scale(Sdfg *g, const IntB *b, int64_t n)
{
	const Dequant *d = b->m ? b->m->d : b->d;
	if (d->s < 0)
		return d->sc;
	int64_t e;
	if (b->m)
		e = b->m->a[1][n] + b->m->b[1][0];
	else {
		int64_t idx[MAXDIM];
		conv_w_idx(b->cw, 0, 0, n, idx);
		e = sdfg_dequant_at(g, d, 1, b->cw->nd + 2, idx);
	}
	int root = sdfg_root_of(g, d->s);
	const void *sp = sdfg_const_get(g, root);
	double v = sp ? sdfg_elem(sdfg_c(g, d->s)->dt, sp, e) : NAN;
	sdfg_const_put(g, root);
	return v;
}

static int intb_make(Sdfg *g, const ConstSrc *cs, void *dst)
{
	const IntB *b = cs->ctx;
	const int8_t *q = sdfg_const_get(g, b->src);
	if (!q)
		return -1;
	int64_t NB = (b->N + b->tn - 1) / b->tn, C = b->K / b->taps, CW = (C + b->per - 1) / b->per;
	if (b->part == 5) { /* rows k = (c, j) as they are, one byte each */
		int8_t *w8 = dst;
		for (int64_t nb = 0; nb < NB; nb++)
			for (int64_t k = 0; k < b->K; k++)
				for (int64_t o = 0, n = nb * b->tn; o < b->tn; o++, n++)
					*w8++ = n < b->N ? q[intb_at(g, b, k, n)] : 0;
		sdfg_const_put(g, b->src);
		return 0;
	}
	int32_t *w = dst; /* one 4-byte element after another: int32, or float32 for parts 3 and 4 */
	for (int64_t nb = 0; nb < NB; nb++) {
		if (b->part == 0) {
			/* row (cw, j): channels per cw .. per cw + per - 1 at tap j, in
			 * 32 / per bits each (0 past C) */
			int bits = 32 / b->per;
			uint32_t mask = (uint32_t)(((uint64_t)1 << bits) - 1);
			for (int64_t cw = 0; cw < CW; cw++)
				for (int64_t j = 0; j < b->taps; j++)
					for (int64_t o = 0; o < b->tn; o++) {
						int64_t n = nb * b->tn + o;
						uint32_t word = 0;
						for (int h = 0; h < b->per; h++) {
							int64_t c = cw * b->per + h;
							int32_t v = n < b->N && c < C ? q[intb_at(g, b, c * b->taps + j, n)] : 0;
							word |= ((uint32_t)v & mask) << (bits * h);
						}
						*w++ = (int32_t)word;
					}
			continue;
		}
		for (int64_t o = 0; o < b->tn; o++) {
			int64_t n = nb * b->tn + o, sum = 0;
			if (n >= b->N) {
				*w++ = 0;
				continue;
			}
			if (b->part >= 3) {
				double sb = intb_scale(g, b, n);
				*(float *)w++ = (float)(b->part == 3 ? b->sa * sb : sb);
				continue;
			}
			for (int64_t k = 0; k < b->K; k++)
				sum += q[intb_at(g, b, k, n)];
			*w++ = (int32_t)(b->part == 1 ? (int64_t)b->za * sum : sum);
		}
	}
	sdfg_const_put(g, b->src);
	return 0;
}

static int intb_panel(Sdfg *g, const IntB *b, int part, const char *what)
{
	IntB p = *b;
	p.part = part;
	int64_t NB = (b->N + b->tn - 1) / b->tn, C = b->K / b->taps;
	int64_t sh[4] = {1, NB, part == 5 ? b->K : (C + b->per - 1) / b->per * b->taps, b->tn};
	const char *nm = arena_printf(g->arena, "%s_%s", sdfg_c(g, b->src)->name, what);
	if (part == 0 || part == 5)
		return sdfg_const_new(g, nm, part ? DT_I8 : DT_I32, 4, sh, intb_make, &p, sizeof p);
	return sdfg_const_new(g, nm, part >= 3 ? DT_F32 : DT_I32, 2, (int64_t[]){NB, b->tn}, intb_make, &p, sizeof p);
}

/* The activation's quantization, of the integer pass: numbers, or
 * run-time scale and zero point (in[3], in[4]), read once into scalars on
 * the CPU, in place on the GPUs (a launch less each). */
struct IntTiles {
	int bp, zc, cs, ws, sa, za; /* containers; -1: none */
	int64_t zshift;              /* subtracted from za's element (the form's shift) */
	int raw;                     /* _int_mm: the int32 sums */
	IntForm form;                /* of bp and A's copy */
};

/* The update of the integer kernels' sums (conv_tiled too). */
static TCode int_code(const IntTiles *it)
{
	return int_forms[it->form].dot;
}

static void int_update(Sdfg *g, const Tiles *s, Node *ub, Operand ao)
{
	const IntTiles *it = s->ctx;
	Expr *bi[4] = {ex_int(g, 0), s->nb, s->k, s->po};
	Operand ab[2] = {ao, opd_mem(it->bp, 4, bi)};
	Expr *acci[2] = {s->x, s->o};
	sdfg_store(ub, sdfg_tasklet(g, ub, int_code(it), DT_I32, 2, ab), xp_memlet(s->acc, 2, acci), W_SUM);
}

/* Container c's first element. */
static Operand first_elem(Sdfg *g, int c)
{
	Expr *zi[MAXDIM];
	for (int i = 0; i < MAXDIM; i++)
		zi[i] = ex_int(g, 0);
	return opd_mem(c, sdfg_c(g, c)->rank, zi);
}

/* acc (int32) rescaled to float32 for the output column (nb, o): (acc -
 * za * colsum) * sa * sb; the value. */
static int int_rescale(Sdfg *g, Node *sb, Operand acc, const IntTiles *it, Expr *nb, Expr *o)
{
	Expr *ci[2] = {nb, o};
	int v = sdfg_tasklet(g, sb, T_ASSIGN, DT_I32, 1, &acc);
	Operand zc = it->zc >= 0 ? opd_mem(it->zc, 2, ci) : opd_const(0);
	if (it->za >= 0) { /* a run-time zero point times the column sums */
		Operand za = first_elem(g, it->za);
		if (it->zshift)
			za = opd_val(xp_tk2(g, sb, T_SUB, DT_I32, za, opd_const((double)it->zshift)));
		Operand m[2] = {za, opd_mem(it->cs, 2, ci)};
		zc = opd_val(sdfg_tasklet(g, sb, T_MUL, DT_I32, 2, m));
	}
	if (it->zc >= 0 || it->za >= 0) {
		Operand d[2] = {opd_val(v), zc};
		v = sdfg_tasklet(g, sb, T_SUB, DT_I32, 2, d);
	}
	Operand cv[1] = {opd_val(v)};
	v = sdfg_tasklet(g, sb, T_CAST, DT_F32, 1, cv);
	Operand m[2] = {opd_val(v), opd_mem(it->ws, 2, ci)};
	v = sdfg_tasklet(g, sb, T_MUL, DT_F32, 2, m);
	if (it->sa >= 0) {
		Operand m2[2] = {opd_val(v), first_elem(g, it->sa)};
		v = sdfg_tasklet(g, sb, T_MUL, DT_F32, 2, m2);
	}
	return v;
}

static int int_store(Sdfg *g, const Tiles *s, Node *sb)
{
	const IntTiles *it = s->ctx;
	Expr *ri[2] = {s->x, s->o};
	Operand acc = opd_mem(s->acc, 2, ri);
	if (it->raw) { /* less the shift's share, shift * colsum (zc) */
		int v = sdfg_tasklet(g, sb, T_ASSIGN, DT_I32, 1, &acc);
		if (it->zc < 0)
			return v;
		Expr *ci[2] = {s->nb, s->po};
		Operand d[2] = {opd_val(v), opd_mem(it->zc, 2, ci)};
		return sdfg_tasklet(g, sb, T_SUB, DT_I32, 2, d);
	}
	int v = int_rescale(g, sb, acc, it, s->nb, s->po);
	return epilogue(g, sb, opd_val(v), s->l, sdfg_c(g, s->l->out[0])->rank, s->oi, DT_F32);
}

/* A scalar transient of type dt holding in's first element, made in seq. */
static int scalar_copy(Sdfg *g, Node *seq, int in, Dtype dt, const char *what, const char *label)
{
	int c = sdfg_add_container_x(g, arena_printf(g->arena, "%s_%s", sdfg_c(g, in)->name, what), dt, CK_TRANSIENT, 0, NULL);
	sdfg_c(g, c)->origin = "";
	Node *b = xp_block(g, seq, label);
	Expr *none[1] = {NULL};
	Operand rd[1] = {first_elem(g, in)};
	sdfg_store(b, sdfg_tasklet(g, b, T_CAST, dt, 1, rd), xp_memlet(c, 0, none), W_NONE);
	return c;
}

/* A's rows in form f: Ap[..., m, kw] holds A[..., m, per kw + j] (j < per;
 * 0 past K), shifted; an int8 A that needs no change as it is. */
static int pack_rows(Sdfg *g, Node *seq, int A, int f, const char *label)
{
	Container *a = sdfg_c(g, A);
	int r = a->rank, per = int_forms[f].per;
	if (per == 1 && !int_shift(g, f, A))
		return A;
	Expr *sh[MAXDIM];
	for (int i = 0; i < r; i++)
		sh[i] = a->shape[i];
	sh[r - 1] = ex_div(g, ex_addi(g, a->shape[r - 1], per - 1), ex_int(g, per));
	return copy_of(g, seq, A, r, sh, NULL, f, r - 1, 0, int_forms[f].name, label);
}

/* B's Dequant if it has the integer kernel's form: int8, one scale per
 * column, no zero point; else NULL. */
static DqMap *int_weights(Sdfg *g, int B, int64_t K, int64_t N)
{
	DqMap *m = dq_map(g, B, K, N);
	if (!m || sdfg_c(g, sdfg_root_of(g, m->d->q))->dt != DT_I8 || m->G != K ||
	    !(m->d->z < 0 ? m->d->zc == 0 : dq_zeros(g, m)))
		return NULL;
	return m;
}

int gemm_int_weights(Sdfg *g, const LibNode *l)
{
	int B = l->in[1], out = l->out[0];
	Container *o = sdfg_c(g, out), *bc = sdfg_c(g, B);
	int r = o->rank;
	int64_t N = r >= 2 ? dim(g, out, r - 1) : -1, K = bc->rank == 2 ? dim(g, B, 0) : -1;
	/* K <= 32768: |acc - za * colsum| < 2^31 for uint8 activations */
	return r >= 2 && N > 0 && K > 0 && K <= 32768 && rows_ok(g, out) && sdfg_const_known(g, sdfg_root_of(g, B)) &&
	       int_weights(g, B, K, N) != NULL;
}

/* The integer kernel of l (A int8/uint8, B as above); -1 when B has no such
 * form (the caller then computes in float or by the generic loop). */
static int gemm_int(Sdfg *g, LibNode *l, Node *seq, const char *label, const XpTile *t)
{
	int A = l->in[0], B = l->in[1], out = l->out[0];
	Container *o = sdfg_c(g, out), *bc = sdfg_c(g, B);
	int r = o->rank, raw = !lib_int(l, "int8", 0);
	int64_t M = dim(g, out, r - 2), N = dim(g, out, r - 1), K = bc->rank == 2 ? dim(g, B, 0) : -1;
	if (bc->rank != 2 || N <= 0 || K <= 0 || !rows_ok(g, out) || !sdfg_const_known(g, sdfg_root_of(g, B)))
		return -1;
	int tn = t->tn;
	if (N < tn && t->vec_lanes && N <= t->vec_lanes)
		tn = t->vec_lanes;
	int tm = M < 0 ? t->tm : (int)MIN((int64_t)t->tm, M), f = t->int_form, per = int_forms[f].per;
	int cpu = f != INT_S8; /* a run-time scale and zero point: scalars on the CPU, in place on the GPUs */
	int64_t shift = int_shift(g, f, A);
	IntB ib = {.K = K, .N = N, .tn = tn, .taps = 1, .sa = lib_float(l, "a_scale", 1), .za = lib_float(l, "a_zp", 0) - (double)shift,
	           .per = per};
	if (raw) {
		if (bc->dt != DT_I8)
			return -1;
		ib.src = sdfg_root_of(g, B);
		ib.s0 = 1, ib.s1 = 0;
		ex_isint(bc->offset, &ib.ofs);
		for (int i = 0; i < 2; i++)
			ex_isint(bc->stride[i], i ? &ib.s1 : &ib.s0);
	} else {
		DqMap *m = int_weights(g, B, K, N);
		if (!m)
			return -1;
		ib.m = m;
		ib.src = sdfg_root_of(g, m->d->q);
	}
	IntTiles it = {.bp = intb_panel(g, &ib, per == 1 ? 5 : 0, int_forms[f].name), .zc = -1, .cs = -1, .ws = -1, .sa = -1,
	               .za = -1, .raw = raw, .form = f};
	if (raw && ib.za != 0)
		it.zc = intb_panel(g, &ib, 1, "zcolsum");
	if (!raw) {
		if (l->in[4] >= 0) {
			it.za = cpu ? scalar_copy(g, seq, l->in[4], DT_I32, "zp32", label) : l->in[4];
			it.zshift = shift;
			it.cs = intb_panel(g, &ib, 2, "colsum");
		} else if (ib.za != 0)
			it.zc = intb_panel(g, &ib, 1, "zcolsum");
		if (l->in[3] >= 0) {
			it.sa = cpu ? scalar_copy(g, seq, l->in[3], DT_F32, "scale32", label) : l->in[3];
			it.ws = intb_panel(g, &ib, 4, "scales");
		} else
			it.ws = intb_panel(g, &ib, 3, "scales");
	}
	Tiles s = {.A = pack_rows(g, seq, A, f, label), .update = int_update, .store = int_store, .ctx = &it, .l = l};
	packed_tiles(g, seq, label, &s, tm, tn, tn, tm * tn, N, ex_int(g, (K + per - 1) / per), per, DT_I32, 0);
	return 0;
}

/* A convolution's int8 weights [OC][C][k...] (its Dequant) in the integer
 * kernel's form: one scale per output channel, no zero point; else NULL. */
static const Dequant *conv_dequant(Sdfg *g, int w)
{
	Container *wc = sdfg_c(g, w);
	const Dequant *d = wc->dq;
	int64_t n = sdfg_numel(g, w), sh[MAXDIM], idx[MAXDIM];
	if (sdfg_root_of(g, w) != w || !d || sdfg_c(g, sdfg_root_of(g, d->q))->dt != DT_I8 || n <= 0 || wc->rank < 3)
		return NULL;
	for (int i = 0; i < wc->rank; i++)
		ex_isint(wc->shape[i], &sh[i]);
	if (d->z >= 0) {
		int root = sdfg_root_of(g, d->z);
		const void *z = sdfg_const_get(g, root);
		int64_t nz = sdfg_numel(g, d->z), zero = z != NULL;
		for (int64_t i = 0; i < nz && zero; i++)
			zero = sdfg_elem(sdfg_c(g, d->z)->dt, z, i) == 0;   /* a contiguous parameter view: numel elements */
		sdfg_const_put(g, root);
		if (!zero)
			return NULL;
	} else if (d->zc != 0)
		return NULL;
	if (d->s < 0)
		return d;
	/* the scale's offset depends on the output channel only */
	int64_t per = n / sh[0], first = -1;
	for (int64_t e = 0; e < n; e++) {
		for (int64_t i = wc->rank - 1, rest = e; i >= 0; i--)
			idx[i] = rest % sh[i], rest /= sh[i];
		int64_t at = sdfg_dequant_at(g, d, 1, wc->rank, idx);
		if (e % per == 0)
			first = at;
		else if (at != first)
			return NULL;
	}
	return d;
}

int conv_int_weights(Sdfg *g, const LibNode *l)
{
	int x = l->in[0], w = l->in[1], out = l->out[0];
	Container *oc = sdfg_c(g, out);
	int nd = oc->rank - 2;
	if (nd < 1 || nd > 3 || lib_int(l, "groups", 1) != 1 || lib_int(l, "transposed", 0) ||
	    !sdfg_const_known(g, sdfg_root_of(g, w)))
		return 0;
	int64_t C = dim(g, x, 1), taps = 1;
	for (int i = 0; i < nd; i++) {
		if (dim(g, out, 2 + i) <= 0 || dim(g, x, 2 + i) <= 0 || dim(g, w, 2 + i) <= 0)
			return 0;
		taps *= dim(g, w, 2 + i);
	}
	return C > 0 && dim(g, out, 1) > 0 && C * taps <= 32768 && conv_dequant(g, w) != NULL;
}

/* The integer convolution (conv_tiled with it): the input as words of
 * channels in the form's layout, padded with the zero point (a dequantized
 * zero), the weights as words of channels per tap. */
static int conv_int(Sdfg *g, LibNode *l, Node *seq, const char *label, const XpTile *t, const ConvAxis *ax, int nd,
                    const int64_t *ps, const int64_t *pb, int tn)
{
	int x = l->in[0], w = l->in[1], out = l->out[0];
	const Dequant *d = conv_dequant(g, w);
	if (!d) {
		diag_error(g->src, "node '%s': an integer convolution (int8: 1) needs constant int8 weights with one scale per "
		           "output channel and no zero point", label);
		return -1;
	}
	int64_t C = dim(g, x, 1), OC = dim(g, out, 1), taps = 1;
	for (int i = 0; i < nd; i++)
		taps *= ax[i].nt;
	double sa = lib_float(l, "a_scale", 1), za = lib_float(l, "a_zp", 0);
	int f = t->int_form, per = int_forms[f].per;
	int ap = padded_copy(g, seq, x, nd, ps, pb, label, f, za);
	ConvW *cw = arena_alloc(g->arena, sizeof *cw);
	*cw = (ConvW){g, w, 0, nd, OC, C, {ax[0], ax[1], ax[2]}};
	IntB ib = {.src = sdfg_root_of(g, d->q), .K = C * taps, .N = OC, .tn = tn, .taps = taps, .d = d, .cw = cw,
	           .sa = sa, .za = za - (double)int_shift(g, f, x), .per = per};
	IntTiles it = {.bp = intb_panel(g, &ib, per == 1 ? 5 : 0, int_forms[f].name),
	               .zc = ib.za != 0 ? intb_panel(g, &ib, 1, "zcolsum") : -1, .cs = -1, .ws = intb_panel(g, &ib, 3, "scales"),
	               .sa = -1, .za = -1, .form = f};
	conv_tiled(g, seq, label, t, ax, nd, ap, it.bp, out, l->in[2], 1, (C + per - 1) / per, OC, tn, &it);
	return 0;
}

int expand_gemm(Sdfg *g, LibNode *l, Node *seq, const char *label, const XpTile *t)
{
	int A = l->in[0], B = l->in[1], out = l->out[0];
	Container *o = sdfg_c(g, out), *a = sdfg_c(g, A);
	int bd = sdfg_const_known(g, sdfg_root_of(g, B));
	int r = o->rank;
	int tiled = xp_tile_dt(a->dt) && xp_tile_dt(o->dt) && xp_tile_dt(sdfg_c(g, B)->dt) &&
	            (l->in[2] < 0 || xp_tile_dt(sdfg_c(g, l->in[2])->dt));
	/* the integer kernel: the integer pass's GEMMs, _int_mm of constant int8 weights */
	int ia = a->dt == DT_I8 || a->dt == DT_U8;
	if (ia && bd && (lib_int(l, "int8", 0) || (o->dt == DT_I32 && t->pack)) && int_zp_ok(lib_float(l, "a_zp", 0)) &&
	    !gemm_int(g, l, seq, label, t))
		return 0;
	if (lib_int(l, "int8", 0)) { /* the integer pass checked it; a hand-written program may not have */
		diag_error(g->src, "node '%s': an integer GEMM (int8: 1) needs an int8 or uint8 A with a zero point in [-128, 255] "
		           "and constant int8 weights with one scale per column and no zero point", label);
		return -1;
	}
	/* a run-time M or K (a dynamic batch or sequence) is fine: rows go in
	 * row_parts, k is a loop; the N blocks need a constant N */
	if (tiled && (!bd || !t->pack || sdfg_c(g, B)->rank != 2) && rows_ok(g, out) && dim(g, out, r - 1) > 0 &&
	    extent_ok(g, sdfg_c(g, B)->shape[sdfg_c(g, B)->rank - 2]))
		return gemm_direct(g, l, seq, label, t);
	if (!bd || !t->pack || sdfg_c(g, B)->rank != 2 || !tiled)
		return gemm_generic(g, l, seq, label);
	int64_t M = dim(g, out, r - 2), N = dim(g, out, r - 1), K = dim(g, B, 0);
	if (!rows_ok(g, out) || N <= 0 || K <= 0)
		return gemm_generic(g, l, seq, label);
	int tn = t->tn;
	if (N < tn && t->vec_lanes && N <= t->vec_lanes)
		tn = t->vec_lanes;
	int tm = M < 0 ? t->tm : (int)MIN((int64_t)t->tm, M);
	int64_t st[2] = {1, 0}, ofs = 0;
	ex_isint(sdfg_c(g, B)->offset, &ofs);
	for (int i = 0; i < 2; i++)
		ex_isint(sdfg_c(g, B)->stride[i], &st[i]); /* constant: B has constant sizes */
	/* rows that may be few (a run-time M: decode steps; M < tm): panels up
	 * to 4 tiles wide, while N gives 8 panels at least */
	int pw = tn;
	while ((M < 0 || M < t->tm) && pw < 4 * tn && N / (2 * pw) >= 8)
		pw *= 2;
	DqPanels dq;
	int q8 = t->int8_weights && !dq_panels(g, B, K, N, pw, t->int4_weights, &dq);
	/* contraction_precision medium: float32 operands rounded to bfloat16
	 * (the weights once, A by a copy), float32 products and sums */
	int bf = !q8 && t->bf16_operands && a->dt == DT_F32 && sdfg_c(g, B)->dt == DT_F32;
	FloatTiles f = {.dq = q8 ? &dq : NULL, .K = K, .unpack_bytes = t->gpu_sms ? 0 : t->row_bytes};
	f.bp = q8 ? dq.qp
	          : pack_panels(g, arena_printf(g->arena, "%s_packed", sdfg_c(g, sdfg_root_of(g, B))->name),
	                        (Panels){sdfg_root_of(g, B), 1, pw, K, N, st[0], st[1], ofs, NULL, NULL, bf});
	if (bf)
		A = copy_of(g, seq, A, a->rank, a->shape, NULL, COPY_BF16, -1, 0, "bf16", label);
	Tiles s = {.A = A, .update = float_update, .store = float_store, .unpack = float_unpack, .kw = ex_int(g, K), .ctx = &f,
	           .l = l};
	/* nibbles: two rows a step, half the accumulators (their values stay live) */
	int nib = q8 && dq.nib != DT_F32;
	packed_tiles(g, seq, label, &s, tm, tn, pw, t->tm * tn / (nib ? 2 : 1), N, ex_int(g, nib ? K / 2 : K), nib ? 2 : 1, DT_F32,
	             t->sum_block); /* (a byte of int4 weights: two terms) */
	return 0;
}

/* ---- pairwise distances ---------------------------------------------------------- */

/* cdist: out[..., i, j] = (sum_m |x1[..., i, m] - x2[..., j, m]|^p)^(1/p)
 * (batch dims of x1, x2 broadcast against out's); pdist (in[1] = -1):
 * out[k] for the rows i < j of in[0] [N, M], k = i*N - i*(i+1)/2 + j-i-1.
 * p = 0 counts the differing coordinates, p = inf takes the largest
 * difference; float32 accumulates in double. */
int expand_cdist(Sdfg *g, LibNode *l, Node *seq, const char *label, const XpTile *tile)
{
	(void)tile;
	int x1 = l->in[0], x2 = l->nin > 1 ? l->in[1] : -1, out = l->out[0];
	Container *o = sdfg_c(g, out), *a = sdfg_c(g, x1);
	double p = lib_float(l, "p", 2);
	Dtype adt = DT_F64;
	int r = a->rank, vars[MAXDIM];
	Expr *i1[MAXDIM], *i2[MAXDIM], *oi[MAXDIM];
	int64_t M;
	ex_isint(a->shape[r - 1], &M);
	Node *body, *owner;
	int km;
	if (x2 >= 0) {
		body = xp_nest(g, seq, out, vars);
		owner = body->parent;
		Container *b = sdfg_c(g, x2);
		for (int d = 0; d < r - 2; d++) {
			int64_t n;
			i1[d] = ex_isint(a->shape[d], &n) && n == 1 ? ex_int(g, 0) : ex_sym(g, vars[d]);
			i2[d] = ex_isint(b->shape[d], &n) && n == 1 ? ex_int(g, 0) : ex_sym(g, vars[d]);
		}
		i1[r - 2] = ex_sym(g, vars[r - 2]);
		i2[r - 2] = ex_sym(g, vars[r - 1]);
		for (int d = 0; d < o->rank; d++)
			oi[d] = ex_sym(g, vars[d]);
	} else {
		int64_t N;
		ex_isint(a->shape[0], &N);
		int vi, vj;
		Node *li = xp_loop(g, seq, N_MAP, "i0", ex_int(g, 0), ex_int(g, N), 1, &vi);
		Node *lj = xp_loop(g, li->body, N_FOR, "i1", ex_addi(g, ex_sym(g, vi), 1), ex_int(g, N), 1, &vj);
		body = lj->body;
		owner = lj;
		Expr *i = ex_sym(g, vi), *j = ex_sym(g, vj);
		Expr *tri = ex_div(g, ex_mul(g, i, ex_addi(g, i, 1)), ex_int(g, 2));
		oi[0] = ex_add(g, ex_sub(g, ex_muli(g, i, N), tri), ex_addi(g, ex_sub(g, j, i), -1));
		i1[0] = i, i2[0] = j;
		x2 = x1;
	}
	int acc = xp_local(g, "acc", adt, 0, NULL, owner);
	Expr *none[1] = {NULL};
	Node *ib = xp_block(g, body, label);
	Operand z[1] = {opd_const(0)};
	sdfg_store(ib, sdfg_tasklet(g, ib, T_ASSIGN, adt, 1, z), xp_memlet(acc, 0, none), W_NONE);
	Node *lm = xp_loop(g, body, N_FOR, "m", ex_int(g, 0), ex_int(g, M), 1, &km);
	Node *rb = xp_block(g, lm->body, label);
	i1[r - 1] = i2[r - 1] = ex_sym(g, km);
	Operand df[2] = {opd_mem(x1, r, i1), opd_mem(x2, r, i2)};
	int t = sdfg_tasklet(g, rb, T_SUB, adt, 2, df);
	Operand ab[1] = {opd_val(t)};
	t = sdfg_tasklet(g, rb, T_ABS, adt, 1, ab);
	TCode red = T_ADD;
	if (p == 2) {
		Operand sq[2] = {opd_val(t), opd_val(t)};
		t = sdfg_tasklet(g, rb, T_MUL, adt, 2, sq);
	} else if (p == 0) {
		Operand ne[2] = {opd_val(t), opd_const(0)};
		t = sdfg_tasklet(g, rb, T_NE, adt, 2, ne);
	} else if (isinf(p))
		red = T_MAX;
	else if (p != 1) {
		Operand pw[2] = {opd_val(t), opd_const(p)};
		t = sdfg_tasklet(g, rb, T_POW, adt, 2, pw);
	}
	Operand rd[2] = {opd_mem(acc, 0, none), opd_val(t)};
	sdfg_store(rb, sdfg_tasklet(g, rb, red, adt, 2, rd), xp_memlet(acc, 0, none), W_NONE);
	Node *fb = xp_block(g, body, label);
	Operand fv[2] = {opd_mem(acc, 0, none), opd_const(p == 0 || isinf(p) ? 1 : 1 / p)};
	int v;
	if (p == 2) {
		Operand s1[1] = {fv[0]};
		v = sdfg_tasklet(g, fb, T_SQRT, adt, 1, s1);
	} else if (p == 0 || p == 1 || isinf(p)) {
		v = sdfg_tasklet(g, fb, T_ASSIGN, adt, 1, fv);
	} else
		v = sdfg_tasklet(g, fb, T_POW, adt, 2, fv);
	Operand cv[1] = {opd_val(v)};
	v = sdfg_tasklet(g, fb, T_ASSIGN, o->dt, 1, cv);
	sdfg_store(fb, v, xp_memlet(out, o->rank, oi), W_NONE);
	return 0;
}

/* ---- grouped GEMM (mixture of experts) --------------------------------------------
 * out[r, :] = in[r, :] @ w[grp[r]] for rows r of M, grp[r] the group of
 * row r, one kernel over all rows (not a GEMM per group). transformers'
 * fallback loops over the groups e with start = offs[e-1] (0 for e = 0),
 * end = offs[e], writing out[start:end] = in[start:end] @ w[e] into
 * zeros; Python slicing wraps a negative bound once and clamps both to
 * [0, M]. So a row belongs to the last group whose [start, end) holds it,
 * and a row of no group (past the last offset) is zero: that rule, which
 * any offs (beyond M, decreasing, negative) follows, makes grp, a
 * transient of the rows' groups (-1: none), in a first map with a loop
 * over the E groups per row. The contraction then binds each row's group
 * (T_INDEX, -1 wrapped to a valid one whose product is discarded) and
 * indexes w with it: float32 in the register tile of gemm_direct (a row
 * tile's rows may belong to different groups: the group is bound per row
 * inside the update, the same in every lane of the vectorized columns);
 * other dtypes with a scalar accumulator per element, as gemm_generic. */

/* The slice bound v (an operand) as Python normalizes it for M rows. */
static int slice_bound(Sdfg *g, Node *b, Operand v, Expr *M)
{
	int neg = xp_tk2(g, b, T_LT, DT_I64, v, opd_const(0));
	int wrapped = xp_tk2(g, b, T_MAX, DT_I64, opd_val(xp_tk2(g, b, T_ADD, DT_I64, v, opd_expr(M))), opd_const(0));
	int clamped = xp_tk2(g, b, T_MIN, DT_I64, v, opd_expr(M));
	return xp_tk3(g, b, T_WHERE, DT_I64, opd_val(neg), opd_val(wrapped), opd_val(clamped));
}

/* grp[r]: the last group e whose [start, end) holds row r, else -1. */
static int grouped_rows(Sdfg *g, LibNode *l, Node *seq, const char *label)
{
	int offs = l->in[2];
	Expr *M = sdfg_c(g, l->in[0])->shape[0], *E = sdfg_c(g, offs)->shape[0];
	Expr *sh[1] = {M}, *none[1] = {NULL};
	int grp = sdfg_add_container_x(g, "groups", DT_I64, CK_TRANSIENT, 1, sh);
	sdfg_c(g, grp)->origin = "";
	int r, e;
	Node *lr = xp_loop(g, seq, N_MAP, "r", ex_int(g, 0), M, 1, &r);
	int best = xp_local(g, "grp", DT_I64, 0, NULL, lr);
	Node *ib = xp_block(g, lr->body, label);
	sdfg_store(ib, xp_tk1(g, ib, T_ASSIGN, DT_I64, opd_const(-1)), xp_memlet(best, 0, none), W_NONE);
	Node *le = xp_loop(g, lr->body, N_FOR, "e", ex_int(g, 0), E, 1, &e);
	Node *b = xp_block(g, le->body, label);
	Expr *ei[1] = {ex_sym(g, e)}, *pi[1] = {ex_max(g, ex_addi(g, ex_sym(g, e), -1), ex_int(g, 0))};
	int end = slice_bound(g, b, opd_mem(offs, 1, ei), M);
	int start = slice_bound(g, b, opd_mem(offs, 1, pi), M);
	int first = xp_tk2(g, b, T_EQ, DT_I64, opd_expr(ex_sym(g, e)), opd_const(0));
	start = xp_tk3(g, b, T_WHERE, DT_I64, opd_val(first), opd_const(0), opd_val(start));
	Operand row = opd_expr(ex_sym(g, r));
	int in = xp_tk3(g, b, T_WHERE, DT_I64, opd_val(xp_tk2(g, b, T_LE, DT_I64, opd_val(start), row)),
	                opd_val(xp_tk2(g, b, T_LT, DT_I64, row, opd_val(end))), opd_const(0));
	int cand = xp_tk3(g, b, T_WHERE, DT_I64, opd_val(in), opd_expr(ex_sym(g, e)), opd_const(-1));
	sdfg_store(b, cand, xp_memlet(best, 0, none), W_MAX);
	Node *sb = xp_block(g, lr->body, label);
	Expr *ri[1] = {ex_sym(g, r)};
	sdfg_store(sb, xp_tk1(g, sb, T_ASSIGN, DT_I64, opd_mem(best, 0, none)), xp_memlet(grp, 1, ri), W_NONE);
	return grp;
}

/* The epilogue of row rx: acc if the row has a group, else 0, in dtype dt. */
static int grouped_value(Sdfg *g, Node *b, int grp, Expr *rx, Operand acc, Dtype adt, Dtype dt)
{
	Expr *ri[1] = {rx};
	int has = xp_tk2(g, b, T_GE, DT_I64, opd_mem(grp, 1, ri), opd_const(0));
	int v = xp_tk3(g, b, T_WHERE, adt, opd_val(has), acc, opd_const(0));
	return adt == dt ? v : xp_tk1(g, b, T_ASSIGN, dt, opd_val(v));
}

/* w[group of row rx, k, n]: the group bound in block b. */
static Operand grouped_w(Sdfg *g, Node *b, int w, int grp, Expr *rx, Expr *k, Expr *n)
{
	Expr *ri[1] = {rx};
	Expr *wi[3] = {xp_bind_index(g, b, opd_mem(grp, 1, ri), sdfg_c(g, w)->shape[0], 1), k, n};
	return opd_mem(w, 3, wi);
}

static void grouped_generic(Sdfg *g, LibNode *l, Node *seq, const char *label, int grp)
{
	int A = l->in[0], W = l->in[1], out = l->out[0];
	Container *o = sdfg_c(g, out);
	Dtype adt = o->dt == DT_F64 ? DT_F64 : DT_F32;
	int vars[2], vk;
	Node *body = xp_nest(g, seq, out, vars);
	Expr *none[1] = {NULL}, **oi = xp_vars(g, 2, vars);
	int acc = xp_local(g, "acc", adt, 0, NULL, body->parent);
	Node *ib = xp_block(g, body, label);
	sdfg_store(ib, xp_tk1(g, ib, T_ASSIGN, adt, opd_const(0)), xp_memlet(acc, 0, none), W_NONE);
	Node *lk = xp_loop(g, body, N_FOR, "k", ex_int(g, 0), sdfg_c(g, A)->shape[1], 1, &vk);
	Node *b = xp_block(g, lk->body, label);
	Expr *ai[2] = {oi[0], ex_sym(g, vk)};
	Operand wv = grouped_w(g, b, W, grp, oi[0], ex_sym(g, vk), oi[1]);
	sdfg_store(b, xp_tk2(g, b, T_MUL, adt, opd_mem(A, 2, ai), wv), xp_memlet(acc, 0, none), W_SUM);
	Node *fb = xp_block(g, body, label);
	sdfg_store(fb, grouped_value(g, fb, grp, oi[0], opd_mem(acc, 0, none), adt, o->dt), xp_memlet(out, 2, oi), W_NONE);
}

/* float32: tm x tn register tiles as gemm_direct, full tn-wide column
 * blocks and one narrower remainder, the rows in row_parts. */
static void grouped_tiled(Sdfg *g, LibNode *l, Node *seq, const char *label, const XpTile *t, int grp)
{
	int A = l->in[0], W = l->in[1], out = l->out[0];
	int64_t N = dim(g, out, 1), wst = 0;
	Expr *Mx = sdfg_c(g, out)->shape[0], *K = sdfg_c(g, A)->shape[1];
	if (!ex_isint(sdfg_c(g, W)->stride[2], &wst) || (wst != 1 && N > 1))
		W = gemm_copy_b(g, seq, W, label);
	int tn = t->tn;
	if (N < tn && t->vec_lanes && N >= t->vec_lanes)
		tn = t->vec_lanes;
	int64_t M = dim(g, out, 0);
	int tm = M < 0 ? t->tm : (int)MIN((int64_t)t->tm, M);
	int64_t NBf = N / tn, Nr = N - NBf * tn;
	RowParts rp = row_parts(g, Mx, tm);
	for (int npart = 0; npart < 2; npart++) {
		int ttn = npart ? (int)Nr : tn;
		if (npart ? Nr == 0 : NBf == 0)
			continue;
		Node *ncur = seq;
		Expr *n0 = ex_int(g, NBf * tn);
		if (!npart) {
			int vnb;
			ncur = xp_loop(g, seq, N_MAP, "nb", ex_int(g, 0), ex_int(g, NBf), 1, &vnb)->body;
			n0 = ex_muli(g, ex_sym(g, vnb), tn);
		}
		for (int part = 0; part < rp.n; part++) {
			int vm, acc, vk, vx, vo, sx, so;
			Node *lm = tile_open_x(g, ncur, "m", rp.lo[part], rp.hi[part], rp.tm[part], ttn, label, &vm, &acc);
			Node *lk = xp_loop(g, lm->body, N_FOR, "k", ex_int(g, 0), K, 1, &vk);
			Node *ub = tile_update_block(g, lk->body, rp.tm[part], ttn, label, &vx, &vo);
			Expr *rx = ex_add(g, ex_sym(g, vm), ex_sym(g, vx)), *ai[2] = {rx, ex_sym(g, vk)};
			Operand ab[2] = {opd_mem(A, 2, ai), grouped_w(g, ub, W, grp, rx, ex_sym(g, vk), ex_add(g, n0, ex_sym(g, vo)))};
			Expr *acci[2] = {ex_sym(g, vx), ex_sym(g, vo)};
			sdfg_store(ub, sdfg_tasklet(g, ub, T_MUL, DT_F32, 2, ab), xp_memlet(acc, 2, acci), W_SUM);
			Node *lsx = xp_loop(g, lm->body, N_MAP, "x", ex_int(g, 0), ex_int(g, rp.tm[part]), 1, &sx);
			Node *lso = xp_loop(g, lsx->body, N_MAP, "o", ex_int(g, 0), ex_int(g, ttn), 1, &so);
			Node *sb = xp_block(g, lso->body, label);
			Expr *oi[2] = {ex_add(g, ex_sym(g, vm), ex_sym(g, sx)), ex_add(g, n0, ex_sym(g, so))};
			Expr *ri[2] = {ex_sym(g, sx), ex_sym(g, so)};
			int v = grouped_value(g, sb, grp, oi[0], opd_mem(acc, 2, ri), DT_F32, DT_F32);
			sdfg_store(sb, v, xp_memlet(out, 2, oi), W_NONE);
		}
	}
}

int expand_grouped_gemm(Sdfg *g, LibNode *l, Node *seq, const char *label, const XpTile *t)
{
	int A = l->in[0], W = l->in[1], out = l->out[0];
	int64_t E = dim(g, W, 0);
	if (E == 0) { /* no groups: every row is zero */
		int vars[2];
		Node *b = xp_block(g, xp_nest(g, seq, out, vars), label);
		sdfg_store(b, xp_tk1(g, b, T_ASSIGN, sdfg_c(g, out)->dt, opd_const(0)), xp_memlet(out, 2, xp_vars(g, 2, vars)), W_NONE);
		return 0;
	}
	int grp = grouped_rows(g, l, seq, label);
	int f32 = sdfg_c(g, A)->dt == DT_F32 && sdfg_c(g, W)->dt == DT_F32 && sdfg_c(g, out)->dt == DT_F32;
	if (f32 && rows_ok(g, out) && dim(g, out, 1) > 0 && extent_ok(g, sdfg_c(g, A)->shape[1]))
		grouped_tiled(g, l, seq, label, t, grp);
	else
		grouped_generic(g, l, seq, label, grp);
	return 0;
}
